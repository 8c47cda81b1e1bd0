/*
 * A registration cache: registered ranges kept after use, bounded by a
 * number of entries and a number of bytes, evicted least recently used
 * first; entries in use (referenced) are never evicted. Thread-safe.
 *
 * A cached registration of application memory goes stale when the
 * application frees the memory and the same addresses get new memory. A
 * pinned registration keeps its physical frames, so new memory at those
 * addresses necessarily has other frames: every hit compares the frame
 * numbers of the pages asked for (/proc/self/pagemap) with those recorded
 * at registration, and a mismatch drops the entry and registers anew.
 * Without frame numbers (pagemap gives 0 without CAP_SYS_ADMIN) application
 * memory is never cached; memory the library owns (REGCACHE_OWNED) always
 * is, and the library calls regcache_invalidate before freeing it.
 */
#ifndef REGCACHE_H_INCLUDED
#define REGCACHE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "verbs/ogr.h"

#define REGCACHE_OWNED 1u

struct regcache_config {
    size_t max_entries;
    uint64_t max_bytes;
    int force_no_pagemap;       /* behave as without CAP_SYS_ADMIN */
};

struct regcache_stats {
    uint64_t registrations;
    uint64_t failures;
    uint64_t deregistrations;
    uint64_t bytes_registered;
    uint64_t hits;
    uint64_t misses;
    uint64_t evictions;
    uint64_t stale;
    uint64_t uncached;
    int app_buffers;
};

struct regcache;
struct regcache_entry;

int regcache_create(const struct ogr_reg_ops *ops, const struct regcache_config *cfg,
                    struct regcache **out);
/* Deregisters every cached entry; entries still referenced must be
 * released before. */
void regcache_destroy(struct regcache *cache);

/* 1 when application (not owned) memory is cached: page frames readable. */
int regcache_caches_app_buffers(const struct regcache *cache);

/*
 * A registration with at least access covering [addr, addr + len): a valid
 * cached one, or a new one of the range's pages (cached if the bounds allow
 * it with unreferenced entries evicted, else deregistered at release). The
 * entry is referenced until regcache_release.
 */
int regcache_lookup(struct regcache *cache, uintptr_t addr, uint64_t len, unsigned access,
                    unsigned flags, struct regcache_entry **out);
void regcache_release(struct regcache *cache, struct regcache_entry *entry);

const struct ogr_key *regcache_entry_key(const struct regcache_entry *entry);

/* Drop the registrations overlapping [addr, addr + len); referenced ones
 * are deregistered at their release. */
void regcache_invalidate(struct regcache *cache, uintptr_t addr, uint64_t len);

void regcache_get_stats(struct regcache *cache, struct regcache_stats *out);

#endif /* REGCACHE_H_INCLUDED */
