/* Optimistic Group Registration: the plan, the fallback through
 * /proc/self/maps, the modes and the cost model's calibration. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/ogr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "verbs/regcache.h"

const struct ogr_cost ogr_paper_cost = { .page_us = 0.77 + 0.23, .op_us = 7.42 + 1.1 };

struct ogr_ctx {
    struct ogr_reg_ops ops;
    struct ogr_config cfg;
    size_t page;
    struct regcache *cache;     /* OGR_MODE_CACHED only */
    _Atomic uint64_t registrations, failures, deregistrations, bytes_registered, maps_reads;
};

/* ---- the cost model ---- */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

/* The fastest of rounds registrations and deregistrations of len bytes. */
static int time_registration(const struct ogr_reg_ops *ops, uintptr_t addr, uint64_t len,
                             int rounds, double *best_us)
{
    *best_us = -1;
    for (int r = 0; r < rounds; r++) {
        struct ogr_key key;
        double t0 = now_us();
        int rc = ops->reg(ops->ctx, addr, len, OGR_ACCESS_WRITES | OGR_ACCESS_REMOTE_READ, &key);
        if (rc != 0)
            return rc;
        ops->dereg(ops->ctx, &key);
        double t = now_us() - t0;
        if (*best_us < 0 || t < *best_us)
            *best_us = t;
    }
    return 0;
}

int ogr_calibrate(const struct ogr_reg_ops *ops, int rounds, struct ogr_cost *out)
{
    enum { BIG_PAGES = 64 };
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    *out = ogr_paper_cost;
    void *buf = mmap(NULL, BIG_PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (buf == MAP_FAILED)
        return -errno;
    /* Touched first, so that the timing is of registration, not of page faults. */
    memset(buf, 0, BIG_PAGES * page);
    double one, big;
    int n = rounds < 1 ? 1 : rounds;
    int rc = time_registration(ops, (uintptr_t) buf, page, n, &one);
    if (rc == 0)
        rc = time_registration(ops, (uintptr_t) buf, BIG_PAGES * page, n, &big);
    munmap(buf, BIG_PAGES * page);
    if (rc != 0)
        return rc;
    double a = (big - one) / (BIG_PAGES - 1);
    double b = one - a;
    if (!(a > 0) || !(b > 0))
        return -ERANGE;
    out->page_us = a;
    out->op_us = b;
    return 0;
}

/* ---- the plan ---- */

struct sort_item {
    uintptr_t addr;
    uint64_t len;
    size_t index;
};

static int by_address(const void *x, const void *y)
{
    const struct sort_item *a = x, *b = y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* The non-empty segments' indices into order, by address. */
static int sort_by_address(const struct ogr_segment *segs, size_t nseg, size_t *order,
                           size_t *norder)
{
    struct sort_item *items = malloc((nseg ? nseg : 1) * sizeof *items);
    if (!items)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < nseg; i++) {
        if (segs[i].len > 0)
            items[n++] = (struct sort_item) { segs[i].addr, segs[i].len, i };
    }
    qsort(items, n, sizeof *items, by_address);
    for (size_t k = 0; k < n; k++)
        order[k] = items[k].index;
    *norder = n;
    free(items);
    return 0;
}

static uintptr_t page_down(uintptr_t a, size_t page)
{
    return a / page * page;
}

static uintptr_t page_end(const struct ogr_segment *s, size_t page)
{
    return page_down(s->addr + s->len - 1, page) + page;
}

/* Registering the gap pages between the group and the next segment costs
 * less than a registration of its own. */
static int worth_joining(uintptr_t group_end, uintptr_t next_start, size_t page,
                         const struct ogr_cost *cost)
{
    if (next_start <= group_end)
        return 1;
    double gap_pages = (double) ((next_start - group_end) / page);
    return gap_pages * cost->page_us < cost->op_us;
}

static void build_groups(const struct ogr_segment *segs, const struct ogr_cost *cost,
                         size_t page, struct ogr_plan *plan)
{
    uintptr_t end = 0;
    for (size_t k = 0; k < plan->norder; k++) {
        const struct ogr_segment *s = &segs[plan->order[k]];
        uintptr_t start = page_down(s->addr, page);
        struct ogr_group *g = plan->ngroups ? &plan->groups[plan->ngroups - 1] : NULL;
        if (g && worth_joining(end, start, page, cost)) {
            g->count++;
        } else {
            g = &plan->groups[plan->ngroups++];
            *g = (struct ogr_group) { .start = start, .first = k, .count = 1 };
            end = start;
        }
        if (page_end(s, page) > end)
            end = page_end(s, page);
        g->len = end - g->start;
    }
}

int ogr_plan_groups(const struct ogr_segment *segs, size_t nseg, const struct ogr_cost *cost,
                    size_t page_size, struct ogr_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->nseg = nseg;
    for (size_t i = 0; i < nseg; i++) {
        /* The last page must not wrap either: page_end rounds up. */
        if (segs[i].len > 0 && (segs[i].addr > UINTPTR_MAX - page_size ||
                                segs[i].len > UINTPTR_MAX - page_size - segs[i].addr))
            return -EINVAL;
    }
    plan->order = malloc((nseg ? nseg : 1) * sizeof *plan->order);
    plan->groups = malloc((nseg ? nseg : 1) * sizeof *plan->groups);
    if (!plan->order || !plan->groups) {
        ogr_plan_free(plan);
        return -ENOMEM;
    }
    int rc = sort_by_address(segs, nseg, plan->order, &plan->norder);
    if (rc != 0) {
        ogr_plan_free(plan);
        return rc;
    }
    build_groups(segs, cost, page_size, plan);
    return 0;
}

void ogr_plan_free(struct ogr_plan *plan)
{
    free(plan->order);
    free(plan->groups);
    memset(plan, 0, sizeof *plan);
}

/* ---- /proc/self/maps ---- */

struct live_range {
    uintptr_t start, end;
};

struct live_map {
    struct live_range *ranges;  /* sorted, adjacent mappings merged */
    size_t n;
};

/* The mappings whose permissions allow access: readable, and writable when
 * the device may write. A PROT_NONE guard page is never live. */
static int maps_read(unsigned access, struct live_map *map)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -errno;
    size_t cap = 0;
    map->ranges = NULL;
    map->n = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* The range and permissions open the line; a long path's rest is
         * skipped, never parsed as a line of its own. */
        if (!strchr(line, '\n')) {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
        }
        uintptr_t start, end;
        char perms[5];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &start, &end, perms) != 3)
            continue;
        if (perms[0] != 'r' || ((access & OGR_ACCESS_WRITES) && perms[1] != 'w'))
            continue;
        if (map->n && map->ranges[map->n - 1].end == start) {
            map->ranges[map->n - 1].end = end;
            continue;
        }
        if (map->n == cap) {
            cap = cap ? 2 * cap : 256;
            struct live_range *r = realloc(map->ranges, cap * sizeof *r);
            if (!r) {
                fclose(f);
                free(map->ranges);
                return -ENOMEM;
            }
            map->ranges = r;
        }
        map->ranges[map->n++] = (struct live_range) { start, end };
    }
    fclose(f);
    return 0;
}

/* The live range holding addr, or NULL. */
static const struct live_range *live_at(const struct live_map *map, uintptr_t addr)
{
    size_t lo = 0, hi = map->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (map->ranges[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < map->n && map->ranges[lo].start <= addr ? &map->ranges[lo] : NULL;
}

/* ---- registering ---- */

struct reg_build {
    struct ogr_ctx *ctx;
    const struct ogr_segment *segs;
    unsigned access, flags;
    struct ogr_registration *out;
    struct live_map map;
    int have_map;
};

static int direct_register(struct ogr_ctx *ctx, uintptr_t addr, uint64_t len, unsigned access,
                           struct ogr_key *key)
{
    int rc = ctx->ops.reg(ctx->ops.ctx, addr, len, access, key);
    if (rc != 0) {
        atomic_fetch_add(&ctx->failures, 1);
        return rc;
    }
    atomic_fetch_add(&ctx->registrations, 1);
    atomic_fetch_add(&ctx->bytes_registered, len);
    return 0;
}

/* Cached mode goes through the cache, except for application memory when
 * the cache cannot check it (then it is plain group registration). */
static int use_cache(const struct reg_build *b)
{
    return b->ctx->cache &&
           ((b->flags & OGR_OWNED) || regcache_caches_app_buffers(b->ctx->cache));
}

/* Register [addr, addr + len) as the next region; segments order[first ..
 * first + count) of plan point at it. */
static int add_region(struct reg_build *b, uintptr_t addr, uint64_t len)
{
    struct ogr_region *r = &b->out->regions[b->out->nregions];
    *r = (struct ogr_region) { .addr = addr, .len = len };
    int rc;
    if (use_cache(b)) {
        unsigned f = (b->flags & OGR_OWNED) ? REGCACHE_OWNED : 0;
        rc = regcache_lookup(b->ctx->cache, addr, len, b->access, f, &r->cached);
        if (rc == 0)
            r->key = *regcache_entry_key(r->cached);
    } else {
        rc = direct_register(b->ctx, addr, len, b->access, &r->key);
    }
    if (rc == 0)
        b->out->nregions++;
    return rc;
}

static void point_segments(struct reg_build *b, const struct ogr_plan *plan, size_t first,
                           size_t count)
{
    for (size_t k = first; k < first + count; k++)
        b->out->seg_region[plan->order[k]] = b->out->nregions - 1;
}

static int ensure_map(struct reg_build *b)
{
    if (b->have_map)
        return 0;
    atomic_fetch_add(&b->ctx->maps_reads, 1);
    int rc = maps_read(b->access, &b->map);
    b->have_map = rc == 0;
    return rc;
}

/* Every page of the group is live for the access. */
static int group_is_live(const struct live_map *map, const struct ogr_group *g)
{
    const struct live_range *r = live_at(map, g->start);
    return r && r->end - g->start >= g->len;
}

/* The fallback: register, per live range, the span of the group's segments
 * in it; a segment not wholly in one live range is not valid memory. */
static int register_live_parts(struct reg_build *b, const struct ogr_plan *plan,
                               const struct ogr_group *g)
{
    size_t page = b->ctx->page;
    size_t k = g->first;
    while (k < g->first + g->count) {
        const struct ogr_segment *s = &b->segs[plan->order[k]];
        const struct live_range *r = live_at(&b->map, page_down(s->addr, page));
        uintptr_t start = page_down(s->addr, page), end = page_end(s, page);
        size_t first = k;
        if (!r || r->end < end)
            return -EFAULT;
        for (k++; k < g->first + g->count; k++) {
            const struct ogr_segment *t = &b->segs[plan->order[k]];
            if (page_end(t, page) > r->end)
                break;
            if (page_end(t, page) > end)
                end = page_end(t, page);
        }
        int rc = add_region(b, start, end - start);
        if (rc != 0)
            return rc;
        point_segments(b, plan, first, k - first);
    }
    return 0;
}

/* Without write access the device accepts a PROT_NONE page, so a group
 * with pages no segment touches is checked against the maps first. */
static int needs_maps_check(const struct reg_build *b, const struct ogr_plan *plan,
                            const struct ogr_group *g)
{
    if (b->access & OGR_ACCESS_WRITES)
        return 0;
    uintptr_t covered = g->start;
    for (size_t k = g->first; k < g->first + g->count; k++) {
        const struct ogr_segment *s = &b->segs[plan->order[k]];
        if (page_down(s->addr, b->ctx->page) > covered)
            return 1;
        if (page_end(s, b->ctx->page) > covered)
            covered = page_end(s, b->ctx->page);
    }
    return 0;
}

static int register_group(struct reg_build *b, const struct ogr_plan *plan,
                          const struct ogr_group *g)
{
    if (needs_maps_check(b, plan, g)) {
        int rc = ensure_map(b);
        if (rc != 0)
            return rc;
        if (!group_is_live(&b->map, g))
            return register_live_parts(b, plan, g);
    }
    if (add_region(b, g->start, g->len) == 0) {
        point_segments(b, plan, g->first, g->count);
        return 0;
    }
    int rc = ensure_map(b);
    return rc != 0 ? rc : register_live_parts(b, plan, g);
}

static int register_groups(struct reg_build *b, const struct ogr_cost *cost)
{
    struct ogr_plan plan;
    int rc = ogr_plan_groups(b->segs, b->out->nseg, cost, b->ctx->page, &plan);
    for (size_t i = 0; rc == 0 && i < plan.ngroups; i++)
        rc = register_group(b, &plan, &plan.groups[i]);
    ogr_plan_free(&plan);
    return rc;
}

/* The baseline: each segment as given. */
static int register_individually(struct reg_build *b)
{
    for (size_t i = 0; i < b->out->nseg; i++) {
        const struct ogr_segment *s = &b->segs[i];
        if (s->len == 0)
            continue;
        if (s->len > UINTPTR_MAX - s->addr)
            return -EINVAL;
        int rc = add_region(b, s->addr, s->len);
        if (rc != 0)
            return rc;
        b->out->seg_region[i] = b->out->nregions - 1;
    }
    return 0;
}

int ogr_register(struct ogr_ctx *ctx, const struct ogr_segment *segs, size_t nseg,
                 unsigned access, unsigned flags, struct ogr_registration *out)
{
    memset(out, 0, sizeof *out);
    out->nseg = nseg;
    /* At most one region per segment: the fallback splits a group only
     * between its segments. */
    out->regions = malloc((nseg ? nseg : 1) * sizeof *out->regions);
    out->seg_region = malloc((nseg ? nseg : 1) * sizeof *out->seg_region);
    if (!out->regions || !out->seg_region) {
        ogr_release(ctx, out);
        return -ENOMEM;
    }
    for (size_t i = 0; i < nseg; i++)
        out->seg_region[i] = OGR_NO_REGION;
    struct reg_build b = { .ctx = ctx, .segs = segs, .access = access, .flags = flags,
                           .out = out };
    int rc = ctx->cfg.mode == OGR_MODE_INDIVIDUAL ? register_individually(&b)
                                                  : register_groups(&b, &ctx->cfg.cost);
    if (b.have_map)
        free(b.map.ranges);
    if (rc != 0)
        ogr_release(ctx, out);
    return rc;
}

void ogr_release(struct ogr_ctx *ctx, struct ogr_registration *reg)
{
    for (size_t i = 0; i < reg->nregions; i++) {
        struct ogr_region *r = &reg->regions[i];
        if (r->cached) {
            regcache_release(ctx->cache, r->cached);
        } else {
            ctx->ops.dereg(ctx->ops.ctx, &r->key);
            atomic_fetch_add(&ctx->deregistrations, 1);
        }
    }
    free(reg->regions);
    free(reg->seg_region);
    memset(reg, 0, sizeof *reg);
}

const struct ogr_key *ogr_segment_key(const struct ogr_registration *reg, size_t i)
{
    size_t r = reg->seg_region[i];
    return r == OGR_NO_REGION ? NULL : &reg->regions[r].key;
}

/* ---- the context ---- */

int ogr_create(const struct ogr_reg_ops *ops, const struct ogr_config *cfg, struct ogr_ctx **out)
{
    if (cfg->mode != OGR_MODE_INDIVIDUAL && cfg->mode != OGR_MODE_GROUP &&
        cfg->mode != OGR_MODE_CACHED)
        return -EINVAL;
    struct ogr_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return -ENOMEM;
    ctx->ops = *ops;
    ctx->cfg = *cfg;
    ctx->page = (size_t) sysconf(_SC_PAGESIZE);
    if (cfg->mode == OGR_MODE_CACHED) {
        struct regcache_config cc = { .max_entries = cfg->cache_entries,
                                      .max_bytes = cfg->cache_bytes,
                                      .force_no_pagemap = cfg->cache_force_no_pagemap };
        int rc = regcache_create(ops, &cc, &ctx->cache);
        if (rc != 0) {
            free(ctx);
            return rc;
        }
    }
    *out = ctx;
    return 0;
}

void ogr_destroy(struct ogr_ctx *ctx)
{
    if (!ctx)
        return;
    regcache_destroy(ctx->cache);
    free(ctx);
}

void ogr_invalidate(struct ogr_ctx *ctx, uintptr_t addr, uint64_t len)
{
    if (ctx->cache)
        regcache_invalidate(ctx->cache, addr, len);
}

void ogr_get_stats(struct ogr_ctx *ctx, struct ogr_stats *out)
{
    struct regcache_stats cs = { 0 };
    if (ctx->cache)
        regcache_get_stats(ctx->cache, &cs);
    *out = (struct ogr_stats) {
        .registrations = atomic_load(&ctx->registrations) + cs.registrations,
        .failures = atomic_load(&ctx->failures) + cs.failures,
        .deregistrations = atomic_load(&ctx->deregistrations) + cs.deregistrations,
        .bytes_registered = atomic_load(&ctx->bytes_registered) + cs.bytes_registered,
        .maps_reads = atomic_load(&ctx->maps_reads),
        .cache_hits = cs.hits,
        .cache_misses = cs.misses,
        .cache_evictions = cs.evictions,
        .cache_stale = cs.stale,
        .cache_uncached = cs.uncached,
        .cache_app_buffers = ctx->cache ? cs.app_buffers : 0,
    };
}
