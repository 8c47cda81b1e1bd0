/*
 * Memory registration for RDMA gather/scatter: Optimistic Group Registration
 * (Wu, Wyckoff, Panda, "Supporting Efficient Noncontiguous Access in PVFS
 * over InfiniBand", section 4.2/5.1).
 *
 * A list of buffers (segments) is sorted and grouped by the cost model
 * T = a * pages + b: two neighbours share one registration when registering
 * the pages between them costs less than a registration of its own. Each
 * group is registered optimistically; when the device refuses a group (a
 * hole in it), /proc/self/maps says which parts are live and only those
 * that hold segments are registered.
 *
 * No MPI and no verbs here: registration goes through struct ogr_reg_ops,
 * which the verbs transport fills with ibv_reg_mr/ibv_dereg_mr. Every call
 * returns 0 or a negative errno value.
 */
#ifndef OGR_H_INCLUDED
#define OGR_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/* Access bits, equal to IBV_ACCESS_LOCAL_WRITE, _REMOTE_WRITE, _REMOTE_READ. */
#define OGR_ACCESS_LOCAL_WRITE  1u
#define OGR_ACCESS_REMOTE_WRITE 2u
#define OGR_ACCESS_REMOTE_READ  4u
/* The device may store into the memory: it must be mapped writable. */
#define OGR_ACCESS_WRITES       (OGR_ACCESS_LOCAL_WRITE | OGR_ACCESS_REMOTE_WRITE)

/* What one registration gives back (for verbs: the ibv_mr and its keys). */
struct ogr_key {
    void *handle;
    uint32_t lkey;
    uint32_t rkey;
};

struct ogr_reg_ops {
    void *ctx;
    /* Register [addr, addr + len) with the OGR_ACCESS_* bits in access. */
    int (*reg)(void *ctx, uintptr_t addr, uint64_t len, unsigned access, struct ogr_key *out);
    void (*dereg)(void *ctx, const struct ogr_key *key);
};

struct ogr_segment {
    uintptr_t addr;
    uint64_t len;
};

/* T = page_us * pages + op_us, registration and deregistration together. */
struct ogr_cost {
    double page_us;
    double op_us;
};

/* The paper's testbed: 0.77 + 0.23 us per page, 7.42 + 1.1 us per operation. */
extern const struct ogr_cost ogr_paper_cost;

/*
 * Time registrations of 1 and 64 pages through ops (rounds times each, the
 * fastest kept) and fit the cost model. Returns 0 with the measured model,
 * or a negative errno with *out set to ogr_paper_cost when the device
 * failed or the fit made no sense (a non-positive a or b).
 */
int ogr_calibrate(const struct ogr_reg_ops *ops, int rounds, struct ogr_cost *out);

/* A planned registration: page-aligned [start, start + len) covering the
 * segments order[first .. first + count) of the plan. */
struct ogr_group {
    uintptr_t start;
    uint64_t len;
    size_t first;
    size_t count;
};

struct ogr_plan {
    size_t nseg;
    size_t *order;              /* the non-empty segments' indices, by address */
    size_t norder;
    struct ogr_group *groups;
    size_t ngroups;
};

/*
 * Sort the segments by address and group them: a segment joins the group
 * before it when its pages overlap or touch the group's, or when the pages
 * in between cost less to register than one more registration
 * (gap_pages * page_us < op_us). Empty segments are in no group. A segment
 * that wraps the address space is -EINVAL.
 */
int ogr_plan_groups(const struct ogr_segment *segs, size_t nseg, const struct ogr_cost *cost,
                    size_t page_size, struct ogr_plan *plan);
void ogr_plan_free(struct ogr_plan *plan);

enum ogr_mode {
    OGR_MODE_INDIVIDUAL,        /* one registration per segment */
    OGR_MODE_GROUP,             /* optimistic group registration */
    OGR_MODE_CACHED             /* groups looked up in a registration cache */
};

struct ogr_config {
    enum ogr_mode mode;
    struct ogr_cost cost;
    size_t cache_entries;       /* OGR_MODE_CACHED: bounds of the cache */
    uint64_t cache_bytes;
    /* Act as if /proc/self/pagemap gave no frame numbers (no CAP_SYS_ADMIN). */
    int cache_force_no_pagemap;
};

/* The buffers belong to the library, which invalidates them before freeing
 * them (ogr_invalidate): the cache keeps them even without pagemap. */
#define OGR_OWNED 1u

struct ogr_stats {
    uint64_t registrations;     /* calls of ops->reg that succeeded */
    uint64_t failures;          /* calls of ops->reg that failed */
    uint64_t deregistrations;
    uint64_t bytes_registered;
    uint64_t maps_reads;        /* /proc/self/maps consulted */
    uint64_t cache_hits;
    uint64_t cache_misses;
    uint64_t cache_evictions;   /* LRU evictions for the bounds */
    uint64_t cache_stale;       /* hits whose page frames had changed */
    uint64_t cache_uncached;    /* registrations kept out of the cache */
    int cache_app_buffers;      /* 1: application buffers are cached */
};

struct regcache_entry;

struct ogr_region {
    uintptr_t addr;
    uint64_t len;
    struct ogr_key key;
    struct regcache_entry *cached;      /* NULL: deregistered at release */
};

#define OGR_NO_REGION SIZE_MAX

/* The result of ogr_register: every segment's region (OGR_NO_REGION for an
 * empty segment), whose key covers the whole segment. */
struct ogr_registration {
    struct ogr_region *regions;
    size_t nregions;
    size_t *seg_region;
    size_t nseg;
};

/* A context may be used by several threads at once: ogr_register,
 * ogr_release, ogr_invalidate and ogr_get_stats are thread-safe. */
struct ogr_ctx;

int ogr_create(const struct ogr_reg_ops *ops, const struct ogr_config *cfg, struct ogr_ctx **out);
/* Deregisters everything cached; registrations not yet released must be
 * released first. */
void ogr_destroy(struct ogr_ctx *ctx);

/*
 * Register the segments for access (OGR_ACCESS_* bits); flags: OGR_OWNED or
 * 0. On success every non-empty segment is covered by out->regions
 * [out->seg_region[i]]. On failure nothing stays registered.
 */
int ogr_register(struct ogr_ctx *ctx, const struct ogr_segment *segs, size_t nseg,
                 unsigned access, unsigned flags, struct ogr_registration *out);
/* Deregister (or hand back to the cache) and free out's arrays. */
void ogr_release(struct ogr_ctx *ctx, struct ogr_registration *reg);

/* The key covering segment i, NULL for an empty one. */
const struct ogr_key *ogr_segment_key(const struct ogr_registration *reg, size_t i);

/* Library-owned memory about to be freed: drop its cached registrations. */
void ogr_invalidate(struct ogr_ctx *ctx, uintptr_t addr, uint64_t len);

void ogr_get_stats(struct ogr_ctx *ctx, struct ogr_stats *out);

#endif /* OGR_H_INCLUDED */
