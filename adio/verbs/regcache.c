/* The registration cache of regcache.h: an LRU list under one mutex; the
 * device and /proc/self/pagemap are called outside it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/regcache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGEMAP_PFN_MASK  ((UINT64_C(1) << 55) - 1)
#define PAGEMAP_PRESENT   (UINT64_C(1) << 63)
#define PAGEMAP_CHUNK     512

struct regcache_entry {
    uintptr_t addr;             /* page-aligned */
    uint64_t len;
    unsigned access;
    struct ogr_key key;
    uint64_t *frames;           /* per page, NULL when not recorded */
    unsigned refs;
    int in_cache;
    struct regcache_entry *prev, *next;
};

struct regcache {
    struct ogr_reg_ops ops;
    size_t max_entries;
    uint64_t max_bytes;
    size_t page;
    int pagemap_fd;             /* -1: frames unknown, app memory not cached */
    pthread_mutex_t lock;
    struct regcache_entry *head, *tail;  /* most recently used first */
    size_t nentries;
    uint64_t nbytes;
    _Atomic uint64_t registrations, failures, deregistrations, bytes_registered;
    _Atomic uint64_t hits, misses, evictions, stale, uncached;
};

/* The pagemap words of npages pages from addr: present bit and frame. */
static int read_frames(int fd, uintptr_t addr, size_t page, size_t npages, uint64_t *out)
{
    size_t done = 0;
    while (done < npages) {
        size_t n = npages - done < PAGEMAP_CHUNK ? npages - done : PAGEMAP_CHUNK;
        off_t off = (off_t) ((addr / page + done) * sizeof(uint64_t));
        ssize_t got = pread(fd, out + done, n * sizeof(uint64_t), off);
        if (got != (ssize_t) (n * sizeof(uint64_t)))
            return -EIO;
        for (size_t i = done; i < done + n; i++)
            out[i] &= PAGEMAP_PRESENT | PAGEMAP_PFN_MASK;
        done += n;
    }
    return 0;
}

/* Frame numbers are usable when a page of our own reads with a non-zero
 * one (the kernel zeroes them for readers without CAP_SYS_ADMIN). */
static int open_pagemap(size_t page)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint64_t word = 0;
    void *probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe != MAP_FAILED) {
        memset(probe, 1, page);
        if (read_frames(fd, (uintptr_t) probe, page, 1, &word) != 0)
            word = 0;
        munmap(probe, page);
    }
    if (!(word & PAGEMAP_PRESENT) || (word & PAGEMAP_PFN_MASK) == 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int regcache_create(const struct ogr_reg_ops *ops, const struct regcache_config *cfg,
                    struct regcache **out)
{
    struct regcache *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->ops = *ops;
    c->max_entries = cfg->max_entries;
    c->max_bytes = cfg->max_bytes;
    c->page = (size_t) sysconf(_SC_PAGESIZE);
    c->pagemap_fd = cfg->force_no_pagemap ? -1 : open_pagemap(c->page);
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return 0;
}

int regcache_caches_app_buffers(const struct regcache *cache)
{
    return cache->pagemap_fd >= 0;
}

static void list_unlink(struct regcache *c, struct regcache_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
    e->in_cache = 0;
    c->nentries--;
    c->nbytes -= e->len;
}

static void list_push_head(struct regcache *c, struct regcache_entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    else
        c->tail = e;
    c->head = e;
    e->in_cache = 1;
    c->nentries++;
    c->nbytes += e->len;
}

static void entry_destroy(struct regcache *c, struct regcache_entry *e)
{
    c->ops.dereg(c->ops.ctx, &e->key);
    atomic_fetch_add(&c->deregistrations, 1);
    free(e->frames);
    free(e);
}

/* Entries unlinked under the lock wait on a chain (through next) to be
 * deregistered after it. */
static void destroy_chain(struct regcache *c, struct regcache_entry *chain)
{
    while (chain) {
        struct regcache_entry *next = chain->next;
        entry_destroy(c, chain);
        chain = next;
    }
}

static struct regcache_entry *find_covering(struct regcache *c, uintptr_t addr, uint64_t len,
                                            unsigned access, int owned)
{
    for (struct regcache_entry *e = c->head; e; e = e->next) {
        if (e->addr <= addr && addr - e->addr + len <= e->len &&
            (e->access & access) == access && (owned || e->frames))
            return e;
    }
    return NULL;
}

/* The pages of [addr, addr + len) still have the frames they had when e
 * was registered. */
static int frames_unchanged(struct regcache *c, const struct regcache_entry *e, uintptr_t addr,
                            uint64_t len)
{
    uintptr_t first = addr / c->page * c->page;
    size_t npages = (size_t) ((addr + len - first + c->page - 1) / c->page);
    size_t skip = (first - e->addr) / c->page;
    uint64_t *now = malloc(npages * sizeof *now);
    int same = now && read_frames(c->pagemap_fd, first, c->page, npages, now) == 0;
    for (size_t i = 0; same && i < npages; i++)
        same = (now[i] & PAGEMAP_PRESENT) && (now[i] & PAGEMAP_PFN_MASK) != 0 &&
               now[i] == e->frames[skip + i];
    free(now);
    return same;
}

/* A referenced cached entry valid for the range, or NULL. */
static struct regcache_entry *take_hit(struct regcache *c, uintptr_t addr, uint64_t len,
                                       unsigned access, int owned)
{
    pthread_mutex_lock(&c->lock);
    struct regcache_entry *e = find_covering(c, addr, len, access, owned);
    if (e) {
        e->refs++;
        list_unlink(c, e);
        list_push_head(c, e);
    }
    pthread_mutex_unlock(&c->lock);
    if (!e || owned || frames_unchanged(c, e, addr, len))
        return e;
    atomic_fetch_add(&c->stale, 1);
    pthread_mutex_lock(&c->lock);
    if (e->in_cache)
        list_unlink(c, e);
    pthread_mutex_unlock(&c->lock);
    regcache_release(c, e);
    return NULL;
}

static int entry_register(struct regcache *c, uintptr_t addr, uint64_t len, unsigned access,
                          struct regcache_entry **out)
{
    struct regcache_entry *e = calloc(1, sizeof *e);
    if (!e)
        return -ENOMEM;
    e->addr = addr / c->page * c->page;
    e->len = (addr + len - e->addr + c->page - 1) / c->page * c->page;
    e->access = access;
    e->refs = 1;
    int rc = c->ops.reg(c->ops.ctx, e->addr, e->len, access, &e->key);
    if (rc != 0) {
        atomic_fetch_add(&c->failures, 1);
        free(e);
        return rc;
    }
    atomic_fetch_add(&c->registrations, 1);
    atomic_fetch_add(&c->bytes_registered, e->len);
    *out = e;
    return 0;
}

/* Frames are read after registration: they are the pinned ones. Without
 * them the entry can only serve owned lookups. */
static void entry_record_frames(struct regcache *c, struct regcache_entry *e)
{
    if (c->pagemap_fd < 0)
        return;
    size_t npages = (size_t) (e->len / c->page);
    e->frames = malloc(npages * sizeof *e->frames);
    if (e->frames && read_frames(c->pagemap_fd, e->addr, c->page, npages, e->frames) != 0) {
        free(e->frames);
        e->frames = NULL;
    }
}

/* Evict unreferenced entries from the LRU end until e fits the bounds and
 * insert it; if referenced entries leave no room, e stays out of the cache. */
static void entry_insert(struct regcache *c, struct regcache_entry *e,
                         struct regcache_entry **victims)
{
    pthread_mutex_lock(&c->lock);
    uint64_t free_bytes = 0;
    size_t free_entries = 0;
    for (struct regcache_entry *v = c->tail; v; v = v->prev) {
        if (v->refs == 0) {
            free_entries++;
            free_bytes += v->len;
        }
    }
    int fits = e->len <= c->max_bytes && c->max_entries > 0 &&
               c->nentries - free_entries + 1 <= c->max_entries &&
               c->nbytes - free_bytes + e->len <= c->max_bytes;
    struct regcache_entry *v = c->tail;
    while (fits && v && (c->nentries + 1 > c->max_entries || c->nbytes + e->len > c->max_bytes)) {
        struct regcache_entry *prev = v->prev;
        if (v->refs == 0) {
            list_unlink(c, v);
            v->next = *victims;
            *victims = v;
            atomic_fetch_add(&c->evictions, 1);
        }
        v = prev;
    }
    if (fits)
        list_push_head(c, e);
    else
        atomic_fetch_add(&c->uncached, 1);
    pthread_mutex_unlock(&c->lock);
}

int regcache_lookup(struct regcache *cache, uintptr_t addr, uint64_t len, unsigned access,
                    unsigned flags, struct regcache_entry **out)
{
    if (len == 0 || len > UINTPTR_MAX - addr)
        return -EINVAL;
    int owned = (flags & REGCACHE_OWNED) != 0;
    int cacheable = owned || cache->pagemap_fd >= 0;
    struct regcache_entry *e = cacheable ? take_hit(cache, addr, len, access, owned) : NULL;
    if (e) {
        atomic_fetch_add(&cache->hits, 1);
        *out = e;
        return 0;
    }
    atomic_fetch_add(&cache->misses, 1);
    int rc = entry_register(cache, addr, len, access, &e);
    if (rc != 0)
        return rc;
    struct regcache_entry *victims = NULL;
    if (cacheable) {
        entry_record_frames(cache, e);
        entry_insert(cache, e, &victims);
    } else {
        atomic_fetch_add(&cache->uncached, 1);
    }
    destroy_chain(cache, victims);
    *out = e;
    return 0;
}

void regcache_release(struct regcache *cache, struct regcache_entry *entry)
{
    pthread_mutex_lock(&cache->lock);
    int last = --entry->refs == 0 && !entry->in_cache;
    pthread_mutex_unlock(&cache->lock);
    if (last)
        entry_destroy(cache, entry);
}

const struct ogr_key *regcache_entry_key(const struct regcache_entry *entry)
{
    return &entry->key;
}

void regcache_invalidate(struct regcache *cache, uintptr_t addr, uint64_t len)
{
    struct regcache_entry *victims = NULL;
    pthread_mutex_lock(&cache->lock);
    struct regcache_entry *e = cache->head;
    while (e) {
        struct regcache_entry *next = e->next;
        if (e->addr < addr + len && addr < e->addr + e->len) {
            list_unlink(cache, e);
            if (e->refs == 0) {
                e->next = victims;
                victims = e;
            }
        }
        e = next;
    }
    pthread_mutex_unlock(&cache->lock);
    destroy_chain(cache, victims);
}

void regcache_get_stats(struct regcache *cache, struct regcache_stats *out)
{
    out->registrations = atomic_load(&cache->registrations);
    out->failures = atomic_load(&cache->failures);
    out->deregistrations = atomic_load(&cache->deregistrations);
    out->bytes_registered = atomic_load(&cache->bytes_registered);
    out->hits = atomic_load(&cache->hits);
    out->misses = atomic_load(&cache->misses);
    out->evictions = atomic_load(&cache->evictions);
    out->stale = atomic_load(&cache->stale);
    out->uncached = atomic_load(&cache->uncached);
    out->app_buffers = regcache_caches_app_buffers(cache);
}

void regcache_destroy(struct regcache *cache)
{
    if (!cache)
        return;
    struct regcache_entry *e = cache->head;
    while (e) {
        struct regcache_entry *next = e->next;
        entry_destroy(cache, e);
        e = next;
    }
    if (cache->pagemap_fd >= 0)
        close(cache->pagemap_fd);
    pthread_mutex_destroy(&cache->lock);
    free(cache);
}
