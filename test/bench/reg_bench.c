/*
 * reg_bench: Table 3 of Wu, Wyckoff, Panda (PVFS over InfiniBand) on a real
 * verbs device: the registration cost of one process's block of a 2048x2048
 * int matrix distributed block-block over 4 processes (1024 rows of 4096
 * bytes, 8192 bytes apart), by
 *   Ideal      one buffer registered beforehand, nothing per operation
 *   Indiv.     one registration per row
 *   OGR        optimistic group registration
 *   OGR+Q      1024 rows from 11 arrays with 10 unmapped pages between them
 *   OGR+cache  OGR through the registration cache (hits after the first)
 * each with read-only access (the device reads the rows: a file write) and
 * with write access (the device stores into them: a file read). Overhead is
 * the median of the iterations' register + deregister time; "reg MB/s" is
 * the data over that time alone, "at link" the data over the time of the
 * transfer at --link MB/s (default 1010, the paper's Ideal) plus overhead.
 *
 *   reg_bench [--iters N] [--link MBPS] [--calibrate-only]
 *
 * Uses the first verbs device (the soft-RoCE VM lane, test/rdma-vm/); exits
 * 77 with a line saying why when there is none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "verbs/ogr.h"

#define SKIP_STATUS 77

#ifndef HAVE_VERBS

int main(void)
{
    printf("reg_bench: SKIP: built without libibverbs (install libibverbs-dev and rebuild)\n");
    return SKIP_STATUS;
}

#else

#include <infiniband/verbs.h>

_Static_assert(OGR_ACCESS_LOCAL_WRITE == IBV_ACCESS_LOCAL_WRITE, "access bits");
_Static_assert(OGR_ACCESS_REMOTE_WRITE == IBV_ACCESS_REMOTE_WRITE, "access bits");
_Static_assert(OGR_ACCESS_REMOTE_READ == IBV_ACCESS_REMOTE_READ, "access bits");

enum { ROWS = 1024, ROW_BYTES = 4096, MATRIX_INTS = 2048 * 2048, HOLES = 10 };

static int verbs_reg(void *ctx, uintptr_t addr, uint64_t len, unsigned access,
                     struct ogr_key *out)
{
    struct ibv_mr *mr = ibv_reg_mr(ctx, (void *) addr, len, (int) access);
    if (!mr)
        return errno ? -errno : -EFAULT;
    *out = (struct ogr_key) { .handle = mr, .lkey = mr->lkey, .rkey = mr->rkey };
    return 0;
}

static void verbs_dereg(void *ctx, const struct ogr_key *key)
{
    (void) ctx;
    ibv_dereg_mr(key->handle);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

struct bench {
    struct ogr_reg_ops ops;
    struct ogr_cost cost;
    int iters;
    double link_mbs;
};

struct result {
    double overhead_us;
    struct ogr_stats per_iter;  /* of the last iteration */
};

static void stats_diff(const struct ogr_stats *a, const struct ogr_stats *b, struct ogr_stats *d)
{
    *d = (struct ogr_stats) {
        .registrations = b->registrations - a->registrations,
        .failures = b->failures - a->failures,
        .maps_reads = b->maps_reads - a->maps_reads,
        .cache_hits = b->cache_hits - a->cache_hits,
    };
}

/* Median time of ogr_register + ogr_release of segs in mode. */
static int run_case(const struct bench *b, enum ogr_mode mode, const struct ogr_segment *segs,
                    unsigned access, struct result *res)
{
    struct ogr_config cfg = { .mode = mode, .cost = b->cost, .cache_entries = 64,
                              .cache_bytes = UINT64_C(1) << 30 };
    struct ogr_ctx *ctx;
    int rc = ogr_create(&b->ops, &cfg, &ctx);
    double *t = calloc((size_t) b->iters, sizeof *t);
    if (rc != 0 || !t) {
        free(t);
        return rc ? rc : -ENOMEM;
    }
    for (int i = 0; rc == 0 && i < b->iters; i++) {
        struct ogr_stats before, after;
        struct ogr_registration reg;
        ogr_get_stats(ctx, &before);
        double t0 = now_us();
        rc = ogr_register(ctx, segs, ROWS, access, 0, &reg);
        if (rc == 0)
            ogr_release(ctx, &reg);
        t[i] = now_us() - t0;
        ogr_get_stats(ctx, &after);
        stats_diff(&before, &after, &res->per_iter);
    }
    qsort(t, (size_t) b->iters, sizeof *t, by_value);
    res->overhead_us = t[b->iters / 2];
    free(t);
    ogr_destroy(ctx);
    return rc;
}

static void print_row(const struct bench *b, const char *name, const char *access,
                      const struct result *r)
{
    double bytes = (double) ROWS * ROW_BYTES;
    double transfer_us = bytes / b->link_mbs;   /* MB/s = bytes/us */
    char reg_mbs[32];
    if (r->overhead_us > 0)
        snprintf(reg_mbs, sizeof reg_mbs, "%.0f", bytes / r->overhead_us);
    else
        snprintf(reg_mbs, sizeof reg_mbs, "-");
    printf("%-10s %-5s %6llu %5llu %5llu %5llu %12.1f %10s %10.0f\n", name, access,
           (unsigned long long) r->per_iter.registrations,
           (unsigned long long) r->per_iter.failures,
           (unsigned long long) r->per_iter.maps_reads,
           (unsigned long long) r->per_iter.cache_hits, r->overhead_us, reg_mbs,
           bytes / (transfer_us + r->overhead_us));
}

static void subarray_rows(const int *matrix, struct ogr_segment *segs)
{
    for (size_t i = 0; i < ROWS; i++)
        segs[i] = (struct ogr_segment) { (uintptr_t) &matrix[i * 2048], ROW_BYTES };
}

/* Rows with a free page between each, in 11 arrays: every 94th gap is an
 * unmapped page, so the optimistic group fails and the maps are read. */
static uint8_t *holey_rows(size_t page, struct ogr_segment *segs, size_t *map_len)
{
    *map_len = 2 * ROWS * page;
    uint8_t *p = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 1, *map_len);
    for (size_t i = 0; i < ROWS; i++)
        segs[i] = (struct ogr_segment) { (uintptr_t) (p + 2 * i * page), ROW_BYTES };
    for (size_t h = 1; h <= HOLES; h++)
        munmap(p + (2 * h * (ROWS / (HOLES + 1)) + 1) * page, page);
    return p;
}

/* Ideal: the matrix registered once beforehand; per operation only the
 * check that each row lies in it. */
static int run_ideal(const struct bench *b, const int *matrix, const struct ogr_segment *segs,
                     unsigned access, struct result *res)
{
    struct ogr_key key;
    uintptr_t base = (uintptr_t) matrix;
    uint64_t len = MATRIX_INTS * sizeof(int);
    int rc = b->ops.reg(b->ops.ctx, base, len, access, &key);
    if (rc != 0)
        return rc;
    double t0 = now_us();
    size_t inside = 0;
    for (size_t i = 0; i < ROWS; i++)
        inside += segs[i].addr >= base && segs[i].addr - base + segs[i].len <= len;
    *res = (struct result) { .overhead_us = now_us() - t0 };
    b->ops.dereg(b->ops.ctx, &key);
    return inside == ROWS ? 0 : -EFAULT;
}

static void run_table(const struct bench *b, int *matrix, size_t page)
{
    struct ogr_segment rows[ROWS], holey[ROWS];
    size_t holey_len;
    uint8_t *holey_mem = holey_rows(page, holey, &holey_len);
    subarray_rows(matrix, rows);
    printf("%-10s %-5s %6s %5s %5s %5s %12s %10s %10s\n", "case", "acc", "#reg", "fail", "maps",
           "hits", "overhead_us", "reg MB/s", "at link");
    static const struct {
        const char *name;
        unsigned access;
    } acc[] = { { "ro", OGR_ACCESS_REMOTE_READ }, { "rw", OGR_ACCESS_WRITES } };
    for (size_t a = 0; a < 2; a++) {
        struct result r = { 0 };
        if (run_ideal(b, matrix, rows, acc[a].access, &r) == 0)
            print_row(b, "Ideal", acc[a].name, &r);
        if (run_case(b, OGR_MODE_INDIVIDUAL, rows, acc[a].access, &r) == 0)
            print_row(b, "Indiv.", acc[a].name, &r);
        if (run_case(b, OGR_MODE_GROUP, rows, acc[a].access, &r) == 0)
            print_row(b, "OGR", acc[a].name, &r);
        if (holey_mem && run_case(b, OGR_MODE_GROUP, holey, acc[a].access, &r) == 0)
            print_row(b, "OGR+Q", acc[a].name, &r);
        if (run_case(b, OGR_MODE_CACHED, rows, acc[a].access, &r) == 0)
            print_row(b, "OGR+cache", acc[a].name, &r);
    }
    if (holey_mem)
        munmap(holey_mem, holey_len);
}

static int parse_args(int argc, char **argv, struct bench *b, int *calibrate_only)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            b->iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--link") && i + 1 < argc)
            b->link_mbs = atof(argv[++i]);
        else if (!strcmp(argv[i], "--calibrate-only"))
            *calibrate_only = 1;
        else
            return -1;
    }
    return b->iters > 0 && b->link_mbs > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct bench b = { .iters = 21, .link_mbs = 1010 };
    int calibrate_only = 0;
    if (parse_args(argc, argv, &b, &calibrate_only) != 0) {
        fprintf(stderr, "usage: reg_bench [--iters N] [--link MBPS] [--calibrate-only]\n");
        return 2;
    }
    int ndev = 0;
    struct ibv_device **devs = ibv_get_device_list(&ndev);
    if (!devs || ndev == 0) {
        printf("reg_bench: SKIP: no verbs device (run it in the soft-RoCE VM, test/rdma-vm/)\n");
        if (devs)
            ibv_free_device_list(devs);
        return SKIP_STATUS;
    }
    struct ibv_context *dev = ibv_open_device(devs[0]);
    struct ibv_pd *pd = dev ? ibv_alloc_pd(dev) : NULL;
    if (!pd) {
        fprintf(stderr, "reg_bench: cannot open %s: %s\n", ibv_get_device_name(devs[0]),
                strerror(errno));
        return 1;
    }
    b.ops = (struct ogr_reg_ops) { .ctx = pd, .reg = verbs_reg, .dereg = verbs_dereg };
    int rc = ogr_calibrate(&b.ops, 10, &b.cost);
    printf("device %s: a = %.3f us/page, b = %.2f us/registration (%s)\n",
           ibv_get_device_name(devs[0]), b.cost.page_us, b.cost.op_us,
           rc == 0 ? "measured, registration + deregistration" : "paper's values: fit failed");
    if (!calibrate_only) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        int *matrix = aligned_alloc(page, MATRIX_INTS * sizeof(int));
        if (!matrix)
            return 1;
        for (int i = 0; i < MATRIX_INTS; i++)
            matrix[i] = i;
        run_table(&b, matrix, page);
        free(matrix);
    }
    ibv_dealloc_pd(pd);
    ibv_close_device(dev);
    ibv_free_device_list(devs);
    return 0;
}

#endif /* HAVE_VERBS */
