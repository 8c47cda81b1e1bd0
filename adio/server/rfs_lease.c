/*
 * Extent leases (rfs_lease.h): one array of the live leases of all files,
 * under one lock. An owner's leases that touch each other merge (the
 * newest number kept: the drain lands in order, so the merged range is
 * released once its newest write has landed), so a process writing one
 * run of a file holds one lease there however many calls made it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_lease.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "proto/rfs_proto.h"

struct lease {
    struct rfs_lease_file file;
    struct rfs_lease_take l;
};

/* Leases that ended with their holder's handle (its process gone, or its
 * drain failed: what it held never landed), kept for the waiters of that
 * moment; the newest LOST_KEPT. */
#define LOST_KEPT 64

struct lost {
    struct rfs_lease_file file;
    uint64_t lo, hi;
    unsigned long drop;         /* its number among the drops */
};

struct rfs_lease_table {
    pthread_mutex_t mu;
    pthread_cond_t changed;     /* a lease went, or the server stops */
    struct lease *v;
    size_t n, cap;
    atomic_size_t live;         /* n, read without the lock */
    unsigned long stops;        /* rfs_lease_table_stop calls */
    unsigned long drops;        /* leases ended with their holder */
    struct lost lost[LOST_KEPT];    /* drop d at d % LOST_KEPT */
};

int rfs_lease_table_new(struct rfs_lease_table **out)
{
    struct rfs_lease_table *t = calloc(1, sizeof *t);
    if (t == NULL)
        return -ENOMEM;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->changed, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&t->mu, NULL);
    *out = t;
    return 0;
}

void rfs_lease_table_free(struct rfs_lease_table *t)
{
    if (t == NULL)
        return;
    pthread_cond_destroy(&t->changed);
    pthread_mutex_destroy(&t->mu);
    free(t->v);
    free(t);
}

void rfs_lease_table_stop(struct rfs_lease_table *t)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->mu);
    t->stops++;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->mu);
}

static int same_file(const struct rfs_lease_file *a, const struct rfs_lease_file *b)
{
    return a->dev == b->dev && a->ino == b->ino;
}

/* Does a lease hold a byte of [by->lo, by->hi) of f against `by`: any
 * lease (by->owner 0, a plain access), or one of another owner and
 * another collective call than by's? */
static int held(const struct rfs_lease_table *t, const struct rfs_lease_file *f,
                const struct rfs_lease_take *by)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct rfs_lease_take *l = &t->v[i].l;
        if (same_file(&t->v[i].file, f) && l->lo < by->hi && by->lo < l->hi &&
            (by->owner == 0 ||
             (l->owner != by->owner && !(by->call != 0 && l->call == by->call))))
            return 1;
    }
    return 0;
}

static struct timespec deadline_after(int ms)
{
    struct timespec d;
    clock_gettime(CLOCK_MONOTONIC, &d);
    d.tv_sec += ms / 1000;
    d.tv_nsec += (long) (ms % 1000) * 1000000L;
    if (d.tv_nsec >= 1000000000L) {
        d.tv_sec++;
        d.tv_nsec -= 1000000000L;
    }
    return d;
}

/* Did a lease on a byte of [lo, hi) of f end with its holder since drop
 * `since` (or may one have: more have ended than are kept)? */
static int lost_since(const struct rfs_lease_table *t, const struct rfs_lease_file *f,
                      uint64_t lo, uint64_t hi, unsigned long since)
{
    if (t->drops - since > LOST_KEPT)
        return 1;
    for (unsigned long d = since + 1; d <= t->drops; d++) {
        const struct lost *l = &t->lost[d % LOST_KEPT];
        if (same_file(&l->file, f) && l->lo < hi && lo < l->hi)
            return 1;
    }
    return 0;
}

/* Waits (lock held) while the range is held against `by`: RFS_OK,
 * RFS_E_HELD, or RFS_E_LOST for a plain access whose wait ended because a
 * holder went before its bytes landed. */
static int wait_free(struct rfs_lease_table *t, const struct rfs_lease_file *f,
                     const struct rfs_lease_take *by, int timeout_ms)
{
    struct timespec deadline = deadline_after(timeout_ms);
    unsigned long stops = t->stops, drops = t->drops;
    while (held(t, f, by)) {
        if (pthread_cond_timedwait(&t->changed, &t->mu, &deadline) == ETIMEDOUT ||
            t->stops != stops)
            return held(t, f, by) ? RFS_E_HELD : RFS_OK;
    }
    return by->owner == 0 && lost_since(t, f, by->lo, by->hi, drops) ? RFS_E_LOST : RFS_OK;
}

/* A lease that nl may join: the same owner, taker and call, touching it. */
static struct lease *mergeable(struct rfs_lease_table *t, const struct lease *nl)
{
    for (size_t i = 0; i < t->n; i++) {
        struct lease *l = &t->v[i];
        if (same_file(&l->file, &nl->file) && l->l.owner == nl->l.owner &&
            l->l.taker == nl->l.taker && l->l.call == nl->l.call && l->l.lo <= nl->l.hi &&
            nl->l.lo <= l->l.hi)
            return l;
    }
    return NULL;
}

static int add(struct rfs_lease_table *t, const struct lease *nl)
{
    struct lease *m = mergeable(t, nl);
    if (m) {
        struct rfs_lease_take *l = &m->l;
        l->lo = nl->l.lo < l->lo ? nl->l.lo : l->lo;
        l->hi = nl->l.hi > l->hi ? nl->l.hi : l->hi;
        l->id = nl->l.id > l->id ? nl->l.id : l->id;
        return RFS_OK;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct lease *v = realloc(t->v, cap * sizeof *v);
        if (v == NULL)
            return RFS_E_NOMEM;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = *nl;
    atomic_store(&t->live, t->n);
    return RFS_OK;
}

int rfs_lease_take(struct rfs_lease_table *t, const struct rfs_lease_file *f,
                   const struct rfs_lease_take *l, int timeout_ms)
{
    struct lease nl = { *f, *l };
    pthread_mutex_lock(&t->mu);
    int rc = wait_free(t, f, l, timeout_ms);
    if (rc == RFS_OK)
        rc = add(t, &nl);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Drops the leases `gone` says (lock held) and wakes the waiters. */
static void drop_where(struct rfs_lease_table *t, int (*gone)(const struct lease *, const void *),
                       const void *arg)
{
    size_t kept = 0;
    for (size_t i = 0; i < t->n; i++)
        if (!gone(&t->v[i], arg))
            t->v[kept++] = t->v[i];
    if (kept != t->n) {
        t->n = kept;
        atomic_store(&t->live, t->n);
        pthread_cond_broadcast(&t->changed);
    }
}

struct released {
    const struct rfs_lease_file *file;
    uint64_t owner, upto;
};

static int is_released(const struct lease *l, const void *arg)
{
    const struct released *r = arg;
    return same_file(&l->file, r->file) && l->l.owner == r->owner && l->l.id <= r->upto;
}

void rfs_lease_release(struct rfs_lease_table *t, const struct rfs_lease_file *f,
                       uint64_t owner, uint64_t upto)
{
    struct released r = { f, owner, upto };
    pthread_mutex_lock(&t->mu);
    drop_where(t, is_released, &r);
    pthread_mutex_unlock(&t->mu);
}

/* A lease of the holder `taker` that is gone: kept as lost. */
static int taken_through(const struct lease *l, const void *taker)
{
    return l->l.taker == taker;
}

void rfs_lease_drop(struct rfs_lease_table *t, const void *taker)
{
    if (t == NULL || atomic_load(&t->live) == 0)
        return;
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++) {
        const struct lease *l = &t->v[i];
        if (taken_through(l, taker)) {
            t->drops++;
            t->lost[t->drops % LOST_KEPT] =
                (struct lost) { l->file, l->l.lo, l->l.hi, t->drops };
        }
    }
    drop_where(t, taken_through, taker);
    pthread_mutex_unlock(&t->mu);
}

int rfs_lease_wait(struct rfs_lease_table *t, const struct rfs_lease_file *f, uint64_t lo,
                   uint64_t hi, int timeout_ms)
{
    if (t == NULL || atomic_load(&t->live) == 0)
        return RFS_OK;
    struct rfs_lease_take plain = { .lo = lo, .hi = hi };
    pthread_mutex_lock(&t->mu);
    int rc = wait_free(t, f, &plain, timeout_ms);
    pthread_mutex_unlock(&t->mu);
    return rc;
}
