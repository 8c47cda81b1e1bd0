/*
 * Optimistic Group Registration and the registration cache against real
 * process memory. The device is a test one that behaves as rxe is
 * documented to (docs/rdma-lane.md): a registration fails with EFAULT when
 * any page of the range is unmapped (mincore says so), or, with write
 * access, not writable (/proc/self/maps); without write access it accepts
 * a PROT_NONE page. It hands out keys and reads memory only through a live
 * registration that covers the range, so the tests check data through keys.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "verbs/ogr.h"
#include "verbs/regcache.h"
#include "unit_util.h"

static size_t page;

/* ---- the test device ---- */

struct dev_mr {
    uintptr_t addr;
    uint64_t len;
    unsigned access;
    int live;
};

struct test_dev {
    pthread_mutex_t lock;
    struct dev_mr *mrs;         /* key k is mrs[k - 1] */
    size_t n, cap;
    size_t live;
    size_t refused;
    double busy_page_us, busy_op_us;    /* calibration tests: simulated cost */
};

/* Every page of the range is mapped (mincore fails with ENOMEM otherwise). */
static int range_mapped(uintptr_t addr, uint64_t len)
{
    uintptr_t start = addr / page * page;
    size_t npages = (size_t) ((addr + len - start + page - 1) / page);
    unsigned char *vec = malloc(npages);
    assert_non_null(vec);
    int rc = mincore((void *) start, npages * page, vec);
    free(vec);
    return rc == 0;
}

/* Every page of the range is in a mapping whose permissions hold perm
 * ('r' or 'w' at its place in the maps line). */
static int range_has_perm(uintptr_t addr, uint64_t len, int perm_index, char perm)
{
    FILE *f = fopen("/proc/self/maps", "re");
    assert_non_null(f);
    uintptr_t need = addr / page * page, end = addr + len;
    char line[512];
    while (need < end && fgets(line, sizeof line, f)) {
        uintptr_t s, e;
        char perms[5];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &s, &e, perms) != 3)
            continue;
        if (s <= need && need < e && perms[perm_index] == perm)
            need = e;
    }
    fclose(f);
    return need >= end;
}

static void busy_wait_us(double us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double) (t.tv_sec - t0.tv_sec) * 1e6 + (double) (t.tv_nsec - t0.tv_nsec) / 1e3 < us);
}

static int dev_reg(void *ctx, uintptr_t addr, uint64_t len, unsigned access, struct ogr_key *out)
{
    struct test_dev *d = ctx;
    if (d->busy_op_us > 0)
        busy_wait_us(d->busy_op_us + d->busy_page_us * (double) ((len + page - 1) / page));
    int ok = range_mapped(addr, len) &&
             (!(access & OGR_ACCESS_WRITES) || range_has_perm(addr, len, 1, 'w'));
    pthread_mutex_lock(&d->lock);
    int rc = -EFAULT;
    if (!ok) {
        d->refused++;
    } else {
        if (d->n == d->cap) {
            d->cap = d->cap ? 2 * d->cap : 64;
            d->mrs = realloc(d->mrs, d->cap * sizeof *d->mrs);
            assert_non_null(d->mrs);
        }
        d->mrs[d->n++] = (struct dev_mr) { addr, len, access, 1 };
        d->live++;
        out->lkey = out->rkey = (uint32_t) d->n;
        out->handle = d;
        rc = 0;
    }
    pthread_mutex_unlock(&d->lock);
    return rc;
}

static void dev_dereg(void *ctx, const struct ogr_key *key)
{
    struct test_dev *d = ctx;
    pthread_mutex_lock(&d->lock);
    assert_true(key->lkey >= 1 && key->lkey <= d->n);
    assert_true(d->mrs[key->lkey - 1].live);    /* never twice */
    d->mrs[key->lkey - 1].live = 0;
    d->live--;
    pthread_mutex_unlock(&d->lock);
}

static struct dev_mr dev_mr_of(struct test_dev *d, uint32_t key)
{
    pthread_mutex_lock(&d->lock);
    assert_true(key >= 1 && key <= d->n);
    struct dev_mr mr = d->mrs[key - 1];
    pthread_mutex_unlock(&d->lock);
    return mr;
}

/* What an RDMA gather through key would read: the range must lie in a live
 * registration with that key. No cmocka assertion: threads call it. */
static int dev_read_ok(struct test_dev *d, const struct ogr_key *key, uintptr_t addr,
                       uint64_t len, void *dst)
{
    pthread_mutex_lock(&d->lock);
    int ok = key && key->lkey >= 1 && key->lkey <= d->n && d->mrs[key->lkey - 1].live &&
             d->mrs[key->lkey - 1].addr <= addr &&
             addr - d->mrs[key->lkey - 1].addr + len <= d->mrs[key->lkey - 1].len;
    pthread_mutex_unlock(&d->lock);
    if (ok)
        memcpy(dst, (const void *) addr, len);
    return ok;
}

static void dev_read(struct test_dev *d, const struct ogr_key *key, uintptr_t addr, uint64_t len,
                     void *dst)
{
    assert_true(dev_read_ok(d, key, addr, len, dst));
}

static size_t dev_live(struct test_dev *d)
{
    pthread_mutex_lock(&d->lock);
    size_t n = d->live;
    pthread_mutex_unlock(&d->lock);
    return n;
}

static struct test_dev *dev_new(void)
{
    struct test_dev *d = calloc(1, sizeof *d);
    assert_non_null(d);
    pthread_mutex_init(&d->lock, NULL);
    return d;
}

static void dev_free(struct test_dev *d)
{
    assert_int_equal(d->live, 0);
    pthread_mutex_destroy(&d->lock);
    free(d->mrs);
    free(d);
}

static struct ogr_reg_ops dev_ops(struct test_dev *d)
{
    return (struct ogr_reg_ops) { .ctx = d, .reg = dev_reg, .dereg = dev_dereg };
}

static struct ogr_ctx *ctx_new(struct test_dev *d, enum ogr_mode mode)
{
    struct ogr_reg_ops ops = dev_ops(d);
    struct ogr_config cfg = { .mode = mode, .cost = ogr_paper_cost, .cache_entries = 64,
                              .cache_bytes = UINT64_C(1) << 30 };
    struct ogr_ctx *ctx;
    assert_int_equal(ogr_create(&ops, &cfg, &ctx), 0);
    return ctx;
}

/* Every segment's bytes, read through its key, are what is in memory, and
 * no registration covers a page without the access. */
static void check_registration(struct test_dev *d, const struct ogr_segment *segs, size_t n,
                               const struct ogr_registration *reg, unsigned access)
{
    for (size_t i = 0; i < n; i++) {
        const struct ogr_key *key = ogr_segment_key(reg, i);
        if (segs[i].len == 0) {
            assert_null(key);
            continue;
        }
        uint8_t *copy = malloc(segs[i].len);
        assert_non_null(copy);
        dev_read(d, key, segs[i].addr, segs[i].len, copy);
        assert_memory_equal(copy, (const void *) segs[i].addr, segs[i].len);
        free(copy);
    }
    for (size_t r = 0; r < reg->nregions; r++) {
        assert_ptr_equal(reg->regions[r].key.handle, d);
        assert_int_equal(reg->regions[r].key.rkey, reg->regions[r].key.lkey);
        struct dev_mr mr = dev_mr_of(d, reg->regions[r].key.lkey);
        assert_true(mr.live);
        assert_true(mr.addr == reg->regions[r].addr && mr.len == reg->regions[r].len);
        assert_true(range_mapped(mr.addr, mr.len));
        assert_true(range_has_perm(mr.addr, mr.len, 0, 'r'));
        if (access & OGR_ACCESS_WRITES)
            assert_true(range_has_perm(mr.addr, mr.len, 1, 'w'));
    }
}

static struct ogr_stats stats_of(struct ogr_ctx *ctx)
{
    struct ogr_stats st;
    ogr_get_stats(ctx, &st);
    return st;
}

/* ---- the plan ---- */

#define BASE ((uintptr_t) 0x7f0000000000)

static void plan_of(const struct ogr_segment *segs, size_t n, struct ogr_plan *plan)
{
    assert_int_equal(ogr_plan_groups(segs, n, &ogr_paper_cost, 4096, plan), 0);
}

/* With the paper's costs (1.0 us a page, 8.52 us a registration) a gap of
 * 8 pages is worth registering, 9 are not. */
static void test_plan_gap_threshold(void **state)
{
    (void) state;
    struct ogr_segment segs[] = {
        { BASE, 4096 },
        { BASE + 9 * 4096, 100 },       /* 8 free pages before it: joins */
        { BASE + 19 * 4096, 4096 },     /* 9 free pages before it: own group */
    };
    struct ogr_plan plan;
    plan_of(segs, 3, &plan);
    assert_int_equal(plan.ngroups, 2);
    assert_int_equal(plan.groups[0].start, BASE);
    assert_int_equal(plan.groups[0].len, 10 * 4096);
    assert_int_equal(plan.groups[0].count, 2);
    assert_int_equal(plan.groups[1].start, BASE + 19 * 4096);
    assert_int_equal(plan.groups[1].len, 4096);
    assert_int_equal(plan.order[plan.groups[1].first], 2);
    ogr_plan_free(&plan);
}

/* A cost model where a registration costs less than a page never joins
 * segments across a free page, only ones sharing or touching pages. */
static void test_plan_cheap_registrations(void **state)
{
    (void) state;
    struct ogr_cost cheap = { .page_us = 1.0, .op_us = 0.5 };
    struct ogr_segment segs[] = {
        { BASE + 10, 20 }, { BASE + 100, 20 },     /* same page */
        { BASE + 4096, 4096 },                     /* next page */
        { BASE + 3 * 4096, 1 },                    /* one page free before it */
    };
    struct ogr_plan plan;
    assert_int_equal(ogr_plan_groups(segs, 4, &cheap, 4096, &plan), 0);
    assert_int_equal(plan.ngroups, 2);
    assert_int_equal(plan.groups[0].count, 3);
    assert_int_equal(plan.groups[0].len, 2 * 4096);
    ogr_plan_free(&plan);
}

static void test_plan_unsorted(void **state)
{
    (void) state;
    enum { N = 64 };
    struct ogr_segment segs[N];
    size_t perm[N];
    for (size_t i = 0; i < N; i++)
        perm[i] = i;
    srand(7);
    for (size_t i = N - 1; i > 0; i--) {
        size_t j = (size_t) rand() % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    /* Segment perm[i] is the i-th by address; every 8th is 20 pages away. */
    uintptr_t at = BASE;
    for (size_t i = 0; i < N; i++) {
        at += (i % 8 == 0 ? 20 : 2) * 4096;
        segs[perm[i]] = (struct ogr_segment) { at, 512 };
    }
    struct ogr_plan plan;
    plan_of(segs, N, &plan);
    assert_int_equal(plan.norder, N);
    for (size_t k = 0; k < N; k++)
        assert_int_equal(plan.order[k], perm[k]);
    assert_int_equal(plan.ngroups, N / 8);
    for (size_t g = 0; g < plan.ngroups; g++) {
        assert_int_equal(plan.groups[g].first, 8 * g);
        assert_int_equal(plan.groups[g].count, 8);
        assert_int_equal(plan.groups[g].start, segs[perm[8 * g]].addr);
        assert_int_equal(plan.groups[g].len, 15 * 4096);
    }
    ogr_plan_free(&plan);
}

static void test_plan_overlap_adjacent_empty(void **state)
{
    (void) state;
    struct ogr_segment segs[] = {
        { BASE + 5000, 10000 },
        { BASE + 100, 0 },                      /* empty: in no group */
        { BASE + 4096, 8192 },                  /* overlaps the first */
        { BASE + 15000, 2000 },                 /* adjacent to the first */
        { BASE + 1000 * 4096, 0 },              /* empty, far away */
    };
    struct ogr_plan plan;
    plan_of(segs, 5, &plan);
    assert_int_equal(plan.nseg, 5);
    assert_int_equal(plan.norder, 3);
    assert_int_equal(plan.ngroups, 1);
    assert_int_equal(plan.order[0], 2);
    assert_int_equal(plan.order[1], 0);
    assert_int_equal(plan.order[2], 3);
    assert_int_equal(plan.groups[0].start, BASE + 4096);
    assert_int_equal(plan.groups[0].len, 4 * 4096);
    ogr_plan_free(&plan);

    plan_of(segs, 0, &plan);
    assert_int_equal(plan.ngroups, 0);
    ogr_plan_free(&plan);
}

/* 64-bit addresses and lengths over 4 GiB; a segment that wraps is refused. */
static void test_plan_large(void **state)
{
    (void) state;
    const uint64_t gib = UINT64_C(1) << 30;
    uintptr_t high = (uintptr_t) 0x7ffe00000000;
    struct ogr_segment segs[] = {
        { high, 3 * gib },
        { high + 3 * gib + 4096, 3 * gib },     /* one free page: joins */
        { high + 16 * gib, gib + 1 },           /* 10 GiB away */
    };
    struct ogr_plan plan;
    plan_of(segs, 3, &plan);
    assert_int_equal(plan.ngroups, 2);
    assert_true(plan.groups[0].len == 6 * gib + 4096);
    assert_true(plan.groups[1].len == gib + 4096);
    ogr_plan_free(&plan);

    struct ogr_segment wrap = { UINTPTR_MAX - 4095, 4096 };
    assert_int_equal(ogr_plan_groups(&wrap, 1, &ogr_paper_cost, 4096, &plan), -EINVAL);
    struct ogr_segment over = { BASE, UINT64_MAX - BASE };
    assert_int_equal(ogr_plan_groups(&over, 1, &ogr_paper_cost, 4096, &plan), -EINVAL);
}

/* ---- the cost model ---- */

static void test_calibrate(void **state)
{
    (void) state;
    /* The fit is checked against a device of known cost; under valgrind the
     * device's own checks cost far more than its busy waits. */
    if (getenv("UNIT_UNDER_VALGRIND"))
        skip_because("under valgrind the device's checks cost far more than its busy waits");
    struct test_dev *d = dev_new();
    d->busy_page_us = 4;
    d->busy_op_us = 200;
    struct ogr_reg_ops ops = dev_ops(d);
    struct ogr_cost cost;
    assert_int_equal(ogr_calibrate(&ops, 5, &cost), 0);
    /* The device's own checks add to both; the slope and intercept stay near. */
    assert_true(cost.page_us > 3 && cost.page_us < 10);
    assert_true(cost.op_us > 150 && cost.op_us < 5000);
    assert_int_equal(dev_live(d), 0);
    dev_free(d);
}

static int refuse_reg(void *ctx, uintptr_t addr, uint64_t len, unsigned access,
                      struct ogr_key *out)
{
    (void) ctx, (void) addr, (void) len, (void) access, (void) out;
    return -ENODEV;
}

static void test_calibrate_fallback(void **state)
{
    (void) state;
    struct ogr_reg_ops ops = { .reg = refuse_reg, .dereg = dev_dereg };
    struct ogr_cost cost = { 0, 0 };
    assert_int_equal(ogr_calibrate(&ops, 3, &cost), -ENODEV);
    assert_true(cost.page_us == ogr_paper_cost.page_us && cost.op_us == ogr_paper_cost.op_us);
}

/* ---- registration against real memory ---- */

static uint8_t *map_pages(size_t n)
{
    void *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    for (size_t i = 0; i < n * page; i++)
        ((uint8_t *) p)[i] = (uint8_t) (i * 7 + 3);
    return p;
}

/* The seed's 2-D case: a 2048x2048 int matrix, 4 processes block-block;
 * each process's subarray is 1024 rows of 4096 bytes 8192 bytes apart. */
static void subarray_segments(const int *matrix, int rank, struct ogr_segment *segs)
{
    size_t row0 = (size_t) (rank / 2) * 1024, col0 = (size_t) (rank % 2) * 1024;
    for (size_t i = 0; i < 1024; i++)
        segs[i] = (struct ogr_segment) { (uintptr_t) &matrix[(row0 + i) * 2048 + col0], 4096 };
}

static void subarray_case(enum ogr_mode mode, uint64_t want_regs_per_rank)
{
    int *matrix = aligned_alloc(4096, 2048 * 2048 * sizeof(int));
    assert_non_null(matrix);
    for (int i = 0; i < 2048 * 2048; i++)
        matrix[i] = i;
    struct test_dev *d = dev_new();
    struct ogr_ctx *ctx = ctx_new(d, mode);
    struct ogr_segment *segs = calloc(1024, sizeof *segs);
    assert_non_null(segs);
    for (int rank = 0; rank < 4; rank++) {
        subarray_segments(matrix, rank, segs);
        struct ogr_registration reg;
        uint64_t before = stats_of(ctx).registrations;
        assert_int_equal(ogr_register(ctx, segs, 1024, OGR_ACCESS_REMOTE_READ, 0, &reg), 0);
        assert_int_equal(stats_of(ctx).registrations - before, want_regs_per_rank);
        assert_int_equal(reg.nregions, want_regs_per_rank);
        check_registration(d, segs, 1024, &reg, OGR_ACCESS_REMOTE_READ);
        ogr_release(ctx, &reg);
    }
    assert_int_equal(stats_of(ctx).failures, 0);
    assert_int_equal(dev_live(d), 0);
    ogr_destroy(ctx);
    dev_free(d);
    free(segs);
    free(matrix);
}

static void test_subarray_group(void **state)
{
    (void) state;
    subarray_case(OGR_MODE_GROUP, 1);
}

static void test_subarray_individual(void **state)
{
    (void) state;
    subarray_case(OGR_MODE_INDIVIDUAL, 1024);
}

/* Two buffers with a munmap'ed page between them: the group fails, the
 * maps give the two live parts, and nothing covers the hole. */
static void test_hole_fallback(void **state)
{
    (void) state;
    uint8_t *p = map_pages(5);
    assert_int_equal(munmap(p + 2 * page, page), 0);
    struct ogr_segment segs[] = {
        { (uintptr_t) (p + page + 10), 50 },
        { (uintptr_t) (p + 3 * page), page },
        { (uintptr_t) (p + 100), 200 },
        { (uintptr_t) (p + 4 * page + 5), 10 },
    };
    struct test_dev *d = dev_new();
    struct ogr_ctx *ctx = ctx_new(d, OGR_MODE_GROUP);
    struct ogr_registration reg;
    unsigned access = OGR_ACCESS_WRITES;
    assert_int_equal(ogr_register(ctx, segs, 4, access, 0, &reg), 0);
    struct ogr_stats st = stats_of(ctx);
    assert_int_equal(st.failures, 1);
    assert_int_equal(st.registrations, 2);
    assert_int_equal(st.maps_reads, 1);
    assert_int_equal(st.bytes_registered, 4 * page);
    assert_int_equal(reg.nregions, 2);
    assert_int_equal(reg.regions[0].addr, (uintptr_t) p);
    assert_int_equal(reg.regions[0].len, 2 * page);
    assert_int_equal(reg.regions[1].addr, (uintptr_t) (p + 3 * page));
    assert_int_equal(reg.regions[1].len, 2 * page);
    assert_int_equal(reg.seg_region[0], reg.seg_region[2]);
    assert_int_equal(reg.seg_region[1], reg.seg_region[3]);
    check_registration(d, segs, 4, &reg, access);
    ogr_release(ctx, &reg);
    assert_int_equal(dev_live(d), 0);
    ogr_destroy(ctx);
    dev_free(d);
    munmap(p, 2 * page);
    munmap(p + 3 * page, 2 * page);
}

/* A PROT_NONE guard page between two buffers. With write access the device
 * refuses the group; without, it would accept it, so the maps are read
 * first and the guard page is still left out. */
static void guard_case(unsigned access, uint64_t want_failures)
{
    uint8_t *p = map_pages(3);
    assert_int_equal(mprotect(p + page, page, PROT_NONE), 0);
    struct ogr_segment segs[] = {
        { (uintptr_t) (p + 8), page - 8 },
        { (uintptr_t) (p + 2 * page), 16 },
    };
    struct test_dev *d = dev_new();
    struct ogr_ctx *ctx = ctx_new(d, OGR_MODE_GROUP);
    struct ogr_registration reg;
    assert_int_equal(ogr_register(ctx, segs, 2, access, 0, &reg), 0);
    struct ogr_stats st = stats_of(ctx);
    assert_int_equal(st.failures, want_failures);
    assert_int_equal(st.registrations, 2);
    assert_int_equal(st.maps_reads, 1);
    assert_int_equal(reg.nregions, 2);
    check_registration(d, segs, 2, &reg, access);
    for (size_t r = 0; r < reg.nregions; r++) {
        struct dev_mr mr = dev_mr_of(d, reg.regions[r].key.lkey);
        assert_true(mr.addr + mr.len <= (uintptr_t) (p + page) ||
                    mr.addr >= (uintptr_t) (p + 2 * page));
    }
    ogr_release(ctx, &reg);
    ogr_destroy(ctx);
    dev_free(d);
    munmap(p, 3 * page);
}

static void test_guard_page_write(void **state)
{
    (void) state;
    guard_case(OGR_ACCESS_WRITES, 1);
}

static void test_guard_page_read_only(void **state)
{
    (void) state;
    guard_case(OGR_ACCESS_REMOTE_READ, 0);
}

/* Read-only segments that touch every page of their group need no maps. */
static void test_read_only_dense_no_maps(void **state)
{
    (void) state;
    uint8_t *p = map_pages(4);
    struct ogr_segment segs[] = {
        { (uintptr_t) p, 2 * page + 1 }, { (uintptr_t) (p + 3 * page - 100), 200 },
    };
    struct test_dev *d = dev_new();
    struct ogr_ctx *ctx = ctx_new(d, OGR_MODE_GROUP);
    struct ogr_registration reg;
    assert_int_equal(ogr_register(ctx, segs, 2, OGR_ACCESS_REMOTE_READ, 0, &reg), 0);
    assert_int_equal(stats_of(ctx).maps_reads, 0);
    assert_int_equal(reg.nregions, 1);
    assert_int_equal(reg.regions[0].len, 4 * page);
    check_registration(d, segs, 2, &reg, OGR_ACCESS_REMOTE_READ);
    ogr_release(ctx, &reg);
    ogr_destroy(ctx);
    dev_free(d);
    munmap(p, 4 * page);
}

/* A segment in unmapped memory is an error, and nothing stays registered;
 * empty segments have no key. */
static void test_invalid_and_empty(void **state)
{
    (void) state;
    uint8_t *p = map_pages(3);
    assert_int_equal(munmap(p + page, page), 0);
    struct test_dev *d = dev_new();
    struct ogr_ctx *ctx = ctx_new(d, OGR_MODE_GROUP);
    struct ogr_segment bad[] = { { (uintptr_t) p, 10 }, { (uintptr_t) (p + page + 1), 10 } };
    struct ogr_registration reg;
    assert_int_equal(ogr_register(ctx, bad, 2, OGR_ACCESS_WRITES, 0, &reg), -EFAULT);
    assert_int_equal(dev_live(d), 0);
    assert_null(reg.regions);

    struct ogr_segment empty[] = { { (uintptr_t) p, 0 }, { (uintptr_t) (p + 2 * page), 8 },
                                   { 0, 0 } };
    assert_int_equal(ogr_register(ctx, empty, 3, OGR_ACCESS_WRITES, 0, &reg), 0);
    assert_null(ogr_segment_key(&reg, 0));
    assert_null(ogr_segment_key(&reg, 2));
    check_registration(d, empty, 3, &reg, OGR_ACCESS_WRITES);
    ogr_release(ctx, &reg);
    assert_int_equal(dev_live(d), 0);
    ogr_destroy(ctx);
    dev_free(d);
    munmap(p, page);
    munmap(p + 2 * page, page);
}

/* A segment over 4 GiB of real (untouched, unreserved) memory and one just
 * after it: one registration longer than 2^32 bytes covering both. */
static void test_register_beyond_4gib(void **state)
{
    (void) state;
    const uint64_t four_gib = UINT64_C(1) << 32;
    size_t len = (size_t) (four_gib + 16 * page);
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert_true(p != MAP_FAILED);
    struct ogr_segment segs[] = {
        { (uintptr_t) (p + 3 * page), four_gib + 5 },
        { (uintptr_t) (p + four_gib + 8 * page + 1), 100 },
    };
    struct test_dev *d = dev_new();
    struct ogr_ctx *ctx = ctx_new(d, OGR_MODE_GROUP);
    struct ogr_registration reg;
    assert_int_equal(ogr_register(ctx, segs, 2, OGR_ACCESS_WRITES, 0, &reg), 0);
    assert_int_equal(reg.nregions, 1);
    struct dev_mr mr = dev_mr_of(d, ogr_segment_key(&reg, 1)->lkey);
    assert_true(mr.live);
    assert_true(mr.addr == (uintptr_t) (p + 3 * page));
    assert_true(mr.len == four_gib + 6 * page);
    for (size_t i = 0; i < 2; i++)
        assert_true(mr.addr <= segs[i].addr && segs[i].addr - mr.addr + segs[i].len <= mr.len);
    assert_true(stats_of(ctx).bytes_registered == four_gib + 6 * page);
    ogr_release(ctx, &reg);
    ogr_destroy(ctx);
    dev_free(d);
    munmap(p, len);
}

/* ---- the cache ---- */

static struct regcache *cache_new(struct test_dev *d, size_t entries, uint64_t bytes,
                                  int no_pagemap)
{
    struct ogr_reg_ops ops = dev_ops(d);
    struct regcache_config cfg = { .max_entries = entries, .max_bytes = bytes,
                                   .force_no_pagemap = no_pagemap };
    struct regcache *c;
    assert_int_equal(regcache_create(&ops, &cfg, &c), 0);
    return c;
}

static struct regcache_stats cache_stats(struct regcache *c)
{
    struct regcache_stats st;
    regcache_get_stats(c, &st);
    return st;
}

/* Look up and release at once; the key it had. */
static uint32_t touch(struct regcache *c, const void *addr, uint64_t len)
{
    struct regcache_entry *e;
    assert_int_equal(regcache_lookup(c, (uintptr_t) addr, len, OGR_ACCESS_WRITES, 0, &e), 0);
    uint32_t key = regcache_entry_key(e)->lkey;
    regcache_release(c, e);
    return key;
}

static void test_cache_hits(void **state)
{
    (void) state;
    struct test_dev *d = dev_new();
    struct ogr_ctx *ctx = ctx_new(d, OGR_MODE_CACHED);
    assert_int_equal(stats_of(ctx).cache_app_buffers, 1);
    uint8_t *p = map_pages(8);
    struct ogr_segment segs[] = { { (uintptr_t) (p + 10), 100 }, { (uintptr_t) (p + 5 * page), 9 } };
    struct ogr_registration first, second;
    assert_int_equal(ogr_register(ctx, segs, 2, OGR_ACCESS_WRITES, 0, &first), 0);
    uint32_t key = first.regions[0].key.lkey;
    ogr_release(ctx, &first);
    assert_int_equal(dev_live(d), 1);           /* kept by the cache */
    assert_int_equal(ogr_register(ctx, segs, 2, OGR_ACCESS_WRITES, 0, &second), 0);
    assert_int_equal(second.regions[0].key.lkey, key);
    check_registration(d, segs, 2, &second, OGR_ACCESS_WRITES);
    ogr_release(ctx, &second);
    struct ogr_stats st = stats_of(ctx);
    assert_int_equal(st.registrations, 1);
    assert_int_equal(st.cache_misses, 1);
    assert_int_equal(st.cache_hits, 1);

    /* A part of a cached range hits; a wider access does not. */
    struct ogr_segment part = { (uintptr_t) (p + 3 * page), 64 };
    assert_int_equal(ogr_register(ctx, &part, 1, OGR_ACCESS_LOCAL_WRITE, 0, &first), 0);
    assert_int_equal(first.regions[0].key.lkey, key);
    ogr_release(ctx, &first);
    assert_int_equal(ogr_register(ctx, &part, 1, OGR_ACCESS_WRITES | OGR_ACCESS_REMOTE_READ, 0,
                                  &first), 0);
    assert_int_not_equal(first.regions[0].key.lkey, key);
    ogr_release(ctx, &first);
    ogr_destroy(ctx);
    assert_int_equal(dev_live(d), 0);
    dev_free(d);
    munmap(p, 8 * page);
}

static void test_cache_lru_entries(void **state)
{
    (void) state;
    struct test_dev *d = dev_new();
    struct regcache *c = cache_new(d, 2, UINT64_MAX, 0);
    uint8_t *a = map_pages(1), *b = map_pages(1), *x = map_pages(1);
    uint32_t ka = touch(c, a, 10), kb = touch(c, b, 10);
    assert_int_equal(touch(c, a, 10), ka);      /* a is now the most recent */
    touch(c, x, 10);                            /* evicts b */
    assert_int_equal(cache_stats(c).evictions, 1);
    assert_false(dev_mr_of(d, kb).live);
    assert_int_equal(touch(c, a, 10), ka);
    assert_int_not_equal(touch(c, b, 10), kb);
    struct regcache_stats st = cache_stats(c);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.misses, 4);
    assert_int_equal(dev_live(d), 2);
    regcache_destroy(c);
    dev_free(d);
    munmap(a, page), munmap(b, page), munmap(x, page);
}

static void test_cache_lru_bytes(void **state)
{
    (void) state;
    struct test_dev *d = dev_new();
    struct regcache *c = cache_new(d, 100, 3 * page, 0);
    uint8_t *a = map_pages(2), *b = map_pages(2), *big = map_pages(4);
    uint32_t ka = touch(c, a, 2 * page);
    uint32_t kb = touch(c, b, 2 * page);        /* 4 pages > 3: a goes */
    assert_false(dev_mr_of(d, ka).live);
    assert_true(dev_mr_of(d, kb).live);
    assert_int_equal(cache_stats(c).evictions, 1);
    uint32_t kbig = touch(c, big, 4 * page);    /* larger than the cache */
    assert_false(dev_mr_of(d, kbig).live);
    assert_true(dev_mr_of(d, kb).live);
    assert_int_equal(cache_stats(c).uncached, 1);
    regcache_destroy(c);
    dev_free(d);
    munmap(a, 2 * page), munmap(b, 2 * page), munmap(big, 4 * page);
}

/* An entry in use is never evicted: the newcomer stays out of the cache. */
static void test_cache_in_use_kept(void **state)
{
    (void) state;
    struct test_dev *d = dev_new();
    struct regcache *c = cache_new(d, 1, UINT64_MAX, 0);
    uint8_t *a = map_pages(1), *b = map_pages(1);
    struct regcache_entry *held, *other;
    assert_int_equal(regcache_lookup(c, (uintptr_t) a, 8, OGR_ACCESS_WRITES, 0, &held), 0);
    assert_int_equal(regcache_lookup(c, (uintptr_t) b, 8, OGR_ACCESS_WRITES, 0, &other), 0);
    uint32_t kb = regcache_entry_key(other)->lkey;
    assert_true(dev_mr_of(d, regcache_entry_key(held)->lkey).live);
    assert_int_equal(cache_stats(c).evictions, 0);
    assert_int_equal(cache_stats(c).uncached, 1);
    regcache_release(c, other);
    assert_false(dev_mr_of(d, kb).live);
    uint32_t ka = regcache_entry_key(held)->lkey;
    regcache_release(c, held);
    assert_int_equal(touch(c, a, 8), ka);
    regcache_destroy(c);
    dev_free(d);
    munmap(a, page), munmap(b, page);
}

/* The application unmaps a cached buffer and gets new memory at the same
 * address: the hit sees other page frames and registers anew. A device
 * registration pins the frames; the test device does not, so the test holds
 * them as an MR would, with page references in a pipe (vmsplice). */
static void test_cache_remap_detected(void **state)
{
    (void) state;
    struct test_dev *d = dev_new();
    struct regcache *c = cache_new(d, 16, UINT64_MAX, 0);
    assert_true(regcache_caches_app_buffers(c));
    uint8_t *p = map_pages(4);
    uint32_t old = touch(c, p + 100, 3 * page);
    assert_int_equal(touch(c, p + 100, 3 * page), old);
    int pin[2];
    assert_int_equal(pipe(pin), 0);
    struct iovec iov = { .iov_base = p, .iov_len = 4 * page };
    assert_int_equal(vmsplice(pin[1], &iov, 1, 0), (ssize_t) (4 * page));
    assert_int_equal(munmap(p, 4 * page), 0);
    void *q = mmap(p, 4 * page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    assert_ptr_equal(q, p);
    memset(q, 0x5a, 4 * page);
    struct regcache_entry *e;
    assert_int_equal(regcache_lookup(c, (uintptr_t) p + 100, 3 * page, OGR_ACCESS_WRITES, 0, &e),
                     0);
    uint32_t fresh = regcache_entry_key(e)->lkey;
    assert_int_not_equal(fresh, old);
    assert_false(dev_mr_of(d, old).live);
    uint8_t got[64];
    dev_read(d, regcache_entry_key(e), (uintptr_t) p + 200, sizeof got, got);
    for (size_t i = 0; i < sizeof got; i++)
        assert_int_equal(got[i], 0x5a);
    regcache_release(c, e);
    struct regcache_stats st = cache_stats(c);
    assert_int_equal(st.stale, 1);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.registrations, 2);
    assert_int_equal(touch(c, p + 100, 8), fresh);
    close(pin[0]);
    close(pin[1]);
    regcache_destroy(c);
    dev_free(d);
    munmap(p, 4 * page);
}

/* Without page frames application memory is never cached; owned memory is,
 * until invalidated. */
static void test_cache_no_pagemap(void **state)
{
    (void) state;
    struct test_dev *d = dev_new();
    struct regcache *c = cache_new(d, 16, UINT64_MAX, 1);
    assert_false(regcache_caches_app_buffers(c));
    uint8_t *p = map_pages(2);
    uint32_t k1 = touch(c, p, 64), k2 = touch(c, p, 64);
    assert_int_not_equal(k1, k2);
    assert_int_equal(dev_live(d), 0);
    struct regcache_entry *e;
    assert_int_equal(regcache_lookup(c, (uintptr_t) p, 64, OGR_ACCESS_WRITES, REGCACHE_OWNED, &e),
                     0);
    uint32_t owned = regcache_entry_key(e)->lkey;
    regcache_release(c, e);
    assert_int_equal(regcache_lookup(c, (uintptr_t) p, 64, OGR_ACCESS_WRITES, REGCACHE_OWNED, &e),
                     0);
    assert_int_equal(regcache_entry_key(e)->lkey, owned);
    regcache_release(c, e);
    /* An application lookup never takes the owned entry (no frames to check). */
    assert_int_not_equal(touch(c, p, 64), owned);
    regcache_invalidate(c, (uintptr_t) p + 10, 1);
    assert_false(dev_mr_of(d, owned).live);
    struct regcache_stats st = cache_stats(c);
    assert_int_equal(st.app_buffers, 0);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.uncached, 3);
    regcache_destroy(c);
    dev_free(d);
    munmap(p, 2 * page);
}

/* Cached mode without page frames: application buffers go through plain
 * group registration, and the statistics say so. */
static void test_cached_mode_without_pagemap(void **state)
{
    (void) state;
    struct test_dev *d = dev_new();
    struct ogr_reg_ops ops = dev_ops(d);
    struct ogr_config cfg = { .mode = OGR_MODE_CACHED, .cost = ogr_paper_cost,
                              .cache_entries = 8, .cache_bytes = UINT64_MAX,
                              .cache_force_no_pagemap = 1 };
    struct ogr_ctx *ctx;
    assert_int_equal(ogr_create(&ops, &cfg, &ctx), 0);
    uint8_t *p = map_pages(4);
    struct ogr_segment segs[] = { { (uintptr_t) p, 10 }, { (uintptr_t) (p + 2 * page), 10 } };
    for (int round = 0; round < 2; round++) {
        struct ogr_registration reg;
        assert_int_equal(ogr_register(ctx, segs, 2, OGR_ACCESS_WRITES, 0, &reg), 0);
        assert_int_equal(reg.nregions, 1);
        assert_null(reg.regions[0].cached);
        check_registration(d, segs, 2, &reg, OGR_ACCESS_WRITES);
        ogr_release(ctx, &reg);
    }
    struct ogr_registration owned;
    for (int round = 0; round < 2; round++) {
        assert_int_equal(ogr_register(ctx, segs, 2, OGR_ACCESS_WRITES, OGR_OWNED, &owned), 0);
        assert_non_null(owned.regions[0].cached);
        ogr_release(ctx, &owned);
    }
    struct ogr_stats st = stats_of(ctx);
    assert_int_equal(st.cache_app_buffers, 0);
    assert_int_equal(st.registrations, 3);
    assert_int_equal(st.cache_hits, 1);
    ogr_invalidate(ctx, (uintptr_t) p, 4 * page);
    assert_int_equal(dev_live(d), 0);
    ogr_destroy(ctx);
    dev_free(d);
    munmap(p, 4 * page);
}

/* Threads look up overlapping ranges of shared buffers through a small
 * cache, read through their keys and release; the counts add up. */
enum { THREADS = 4, ROUNDS = 300, BUFS = 6 };

struct shared {
    struct test_dev *dev;
    struct regcache *cache;
    uint8_t *bufs[BUFS];
};

struct worker {
    struct shared *sh;
    unsigned seed;
};

static void *cache_worker(void *arg)
{
    struct worker *w = arg;
    uint8_t got[256];
    for (int r = 0; r < ROUNDS; r++) {
        uint8_t *buf = w->sh->bufs[rand_r(&w->seed) % BUFS];
        size_t off = (size_t) rand_r(&w->seed) % (2 * page - sizeof got);
        struct regcache_entry *e;
        if (regcache_lookup(w->sh->cache, (uintptr_t) (buf + off), sizeof got,
                            OGR_ACCESS_WRITES, 0, &e) != 0)
            return (void *) 1;
        if (!dev_read_ok(w->sh->dev, regcache_entry_key(e), (uintptr_t) (buf + off), sizeof got,
                         got) ||
            memcmp(got, buf + off, sizeof got) != 0)
            return (void *) 1;
        regcache_release(w->sh->cache, e);
    }
    return NULL;
}

static void test_cache_concurrent(void **state)
{
    (void) state;
    struct shared sh = { .dev = dev_new() };
    sh.cache = cache_new(sh.dev, 3, 5 * page, 0);
    for (int i = 0; i < BUFS; i++)
        sh.bufs[i] = map_pages(2);
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker) { &sh, (unsigned) i + 1 };
        assert_int_equal(pthread_create(&th[i], NULL, cache_worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *rc;
        pthread_join(th[i], &rc);
        assert_null(rc);
    }
    struct regcache_stats st = cache_stats(sh.cache);
    assert_int_equal(st.hits + st.misses, THREADS * ROUNDS);
    assert_int_equal(st.registrations, st.misses);
    assert_true(st.evictions > 0);
    /* What is still registered is what the cache holds: within its bounds. */
    assert_true(dev_live(sh.dev) <= 3);
    assert_int_equal(st.registrations - st.deregistrations, dev_live(sh.dev));
    regcache_destroy(sh.cache);
    for (int i = 0; i < BUFS; i++)
        munmap(sh.bufs[i], 2 * page);
    dev_free(sh.dev);
}

/* Threads register the four processes' subarrays through one cached
 * context with room for two groups, reading every row through its key. */
enum { OGR_THREADS = 4, OGR_ROUNDS = 12 };

struct ogr_shared {
    struct test_dev *dev;
    struct ogr_ctx *ctx;
    const int *matrix;
};

struct ogr_worker {
    struct ogr_shared *sh;
    int id;
};

static int rows_readable(struct test_dev *d, const struct ogr_segment *segs,
                         const struct ogr_registration *reg, uint8_t *row)
{
    for (size_t i = 0; i < 1024; i++) {
        if (!dev_read_ok(d, ogr_segment_key(reg, i), segs[i].addr, segs[i].len, row) ||
            memcmp(row, (const void *) segs[i].addr, segs[i].len) != 0)
            return 0;
    }
    return 1;
}

static void *ogr_worker(void *arg)
{
    struct ogr_worker *w = arg;
    struct ogr_segment *segs = calloc(1024, sizeof *segs);
    uint8_t *row = malloc(4096);
    int ok = segs && row;
    for (int r = 0; ok && r < OGR_ROUNDS; r++) {
        struct ogr_registration reg;
        subarray_segments(w->sh->matrix, (w->id + r) % 4, segs);
        ok = ogr_register(w->sh->ctx, segs, 1024, OGR_ACCESS_WRITES, 0, &reg) == 0;
        if (ok) {
            ok = reg.nregions == 1 && rows_readable(w->sh->dev, segs, &reg, row);
            ogr_release(w->sh->ctx, &reg);
        }
    }
    free(segs);
    free(row);
    return ok ? NULL : (void *) 1;
}

static void test_ogr_concurrent(void **state)
{
    (void) state;
    int *matrix = aligned_alloc(4096, 2048 * 2048 * sizeof(int));
    assert_non_null(matrix);
    for (int i = 0; i < 2048 * 2048; i++)
        matrix[i] = i;
    struct test_dev *d = dev_new();
    struct ogr_reg_ops ops = dev_ops(d);
    struct ogr_config cfg = { .mode = OGR_MODE_CACHED, .cost = ogr_paper_cost,
                              .cache_entries = 2, .cache_bytes = UINT64_MAX };
    struct ogr_shared sh = { .dev = d, .matrix = matrix };
    assert_int_equal(ogr_create(&ops, &cfg, &sh.ctx), 0);
    pthread_t th[OGR_THREADS];
    struct ogr_worker w[OGR_THREADS];
    for (int i = 0; i < OGR_THREADS; i++) {
        w[i] = (struct ogr_worker) { &sh, i };
        assert_int_equal(pthread_create(&th[i], NULL, ogr_worker, &w[i]), 0);
    }
    for (int i = 0; i < OGR_THREADS; i++) {
        void *rc;
        pthread_join(th[i], &rc);
        assert_null(rc);
    }
    struct ogr_stats st = stats_of(sh.ctx);
    assert_int_equal(st.cache_hits + st.cache_misses, OGR_THREADS * OGR_ROUNDS);
    assert_int_equal(st.registrations, st.cache_misses);
    assert_true(dev_live(d) <= 2);
    assert_int_equal(st.registrations - st.deregistrations, dev_live(d));
    ogr_destroy(sh.ctx);
    dev_free(d);
    free(matrix);
}

int main(void)
{
    page = (size_t) sysconf(_SC_PAGESIZE);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_gap_threshold),
        cmocka_unit_test(test_plan_cheap_registrations),
        cmocka_unit_test(test_plan_unsorted),
        cmocka_unit_test(test_plan_overlap_adjacent_empty),
        cmocka_unit_test(test_plan_large),
        cmocka_unit_test(test_calibrate),
        cmocka_unit_test(test_calibrate_fallback),
        cmocka_unit_test(test_subarray_group),
        cmocka_unit_test(test_subarray_individual),
        cmocka_unit_test(test_hole_fallback),
        cmocka_unit_test(test_guard_page_write),
        cmocka_unit_test(test_guard_page_read_only),
        cmocka_unit_test(test_read_only_dense_no_maps),
        cmocka_unit_test(test_invalid_and_empty),
        cmocka_unit_test(test_register_beyond_4gib),
        cmocka_unit_test(test_cache_hits),
        cmocka_unit_test(test_cache_lru_entries),
        cmocka_unit_test(test_cache_lru_bytes),
        cmocka_unit_test(test_cache_in_use_kept),
        cmocka_unit_test(test_cache_remap_detected),
        cmocka_unit_test(test_cache_no_pagemap),
        cmocka_unit_test(test_cached_mode_without_pagemap),
        cmocka_unit_test(test_cache_concurrent),
        cmocka_unit_test(test_ogr_concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
