/*
 * Disk-directed collective calls and hot collective buffers (rfs_coll.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_coll.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/rfs_log.h"
#include "server/rfs_move.h"

/* Largest merged access: a staging buffer of the executing participant. */
#define COLL_STAGE (8u << 20)
/* A read also reads a gap up to this size to keep one sequential access. */
#define COLL_READ_GAP (64u << 10)
/* Most buffers of an extent moved straight between the file and the
 * participants' memory in one vector (pieces, with gaps between them for
 * a read); more, and so smaller, pieces go through the staging buffer,
 * where a copy costs less than the vector's length. */
#define COLL_VECTOR 512

struct coll_call {
    struct coll_call *next;
    uint64_t group, call;
    uint32_t parts, arrived, left, turn;
    int is_write;
    int done, status;
    struct rfs_coll_piece **pieces;     /* of every participant, in arrival order */
    size_t count, cap;
    uint32_t *arrival;                  /* ranks in the order they came, for the log */
    pthread_cond_t cv;
};

struct hot_buffer {
    struct hot_buffer *prev, *next;     /* LRU list, most recent first */
    dev_t dev;
    ino_t ino;
    int64_t off, len;
    uint8_t *data;
};

struct rfs_coll_table {
    pthread_mutex_t mu;
    struct coll_call *calls;
    struct rfs_coll_stats stats;
    uint64_t cache_cap, cache_used;
    atomic_int cache_entries;           /* read without the lock: writes skip an empty cache */
    struct hot_buffer *lru_head, *lru_tail;
};

int rfs_coll_table_new(struct rfs_coll_table **out, uint64_t cache_bytes)
{
    struct rfs_coll_table *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    pthread_mutex_init(&t->mu, NULL);
    t->cache_cap = cache_bytes;
    *out = t;
    return 0;
}

static void hot_unlink(struct rfs_coll_table *t, struct hot_buffer *h)
{
    if (h->prev)
        h->prev->next = h->next;
    else
        t->lru_head = h->next;
    if (h->next)
        h->next->prev = h->prev;
    else
        t->lru_tail = h->prev;
    t->cache_used -= (uint64_t) h->len;
    atomic_fetch_sub(&t->cache_entries, 1);
    free(h->data);
    free(h);
}

void rfs_coll_table_free(struct rfs_coll_table *t)
{
    if (!t)
        return;
    while (t->lru_head)
        hot_unlink(t, t->lru_head);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

void rfs_coll_table_stats(struct rfs_coll_table *t, struct rfs_coll_stats *out)
{
    pthread_mutex_lock(&t->mu);
    *out = t->stats;
    pthread_mutex_unlock(&t->mu);
}

int rfs_coll_add(struct rfs_coll_part *p, int64_t off, int64_t len, uint8_t *data)
{
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        struct rfs_coll_piece *n = realloc(p->pieces, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        p->pieces = n;
        p->cap = cap;
    }
    p->pieces[p->count++] = (struct rfs_coll_piece) { .off = off, .len = len, .data = data };
    return 0;
}

void rfs_coll_part_free(struct rfs_coll_part *p)
{
    free(p->pieces);
    *p = (struct rfs_coll_part) { 0 };
}

static struct coll_call *find_call(struct rfs_coll_table *t, const struct rfs_coll_key *k)
{
    for (struct coll_call *c = t->calls; c; c = c->next)
        if (c->group == k->group && c->call == k->call)
            return c;
    return NULL;
}

static struct coll_call *new_call(struct rfs_coll_table *t, const struct rfs_coll_key *k,
                                  int is_write)
{
    struct coll_call *c = calloc(1, sizeof *c);
    if (!c || !(c->arrival = calloc(k->parts, sizeof *c->arrival))) {
        free(c);
        return NULL;
    }
    c->group = k->group;
    c->call = k->call;
    c->parts = k->parts;
    c->is_write = is_write;
    pthread_cond_init(&c->cv, NULL);
    c->next = t->calls;
    t->calls = c;
    return c;
}

static void free_call(struct rfs_coll_table *t, struct coll_call *c)
{
    for (struct coll_call **p = &t->calls; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    pthread_cond_destroy(&c->cv);
    free(c->pieces);
    free(c->arrival);
    free(c);
}

static int add_pieces(struct coll_call *c, struct rfs_coll_part *part)
{
    if (c->count + part->count > c->cap) {
        size_t cap = c->cap ? c->cap : 256;
        while (cap < c->count + part->count)
            cap *= 2;
        struct rfs_coll_piece **n = realloc(c->pieces, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        c->pieces = n;
        c->cap = cap;
    }
    for (size_t i = 0; i < part->count; i++)
        c->pieces[c->count++] = &part->pieces[i];
    return 0;
}

static int by_offset(const void *a, const void *b)
{
    const struct rfs_coll_piece *x = *(struct rfs_coll_piece *const *) a;
    const struct rfs_coll_piece *y = *(struct rfs_coll_piece *const *) b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Pieces [first, last) of the sorted call as one extent: how far it goes. */
static size_t extent_end(struct coll_call *c, size_t first, int64_t *end)
{
    size_t i = first;
    *end = c->pieces[first]->off + c->pieces[first]->len;
    int64_t start = c->pieces[first]->off;
    int64_t gap = c->is_write ? 0 : COLL_READ_GAP;
    /* a piece over the staging buffer's size moves alone, from its own memory */
    if (c->pieces[first]->len > (int64_t) COLL_STAGE)
        return first + 1;
    while (++i < c->count) {
        const struct rfs_coll_piece *p = c->pieces[i];
        /* writes merge exact neighbours only: an overlap keeps its order */
        if (p->off > *end + gap || (c->is_write && p->off != *end) ||
            (p->off + p->len > *end && p->off + p->len - start > COLL_STAGE))
            break;
        if (p->off + p->len > *end)
            *end = p->off + p->len;
    }
    return i;
}

/* The hot buffer holding all of [off, end) of the file, or NULL. */
static struct hot_buffer *hot_find(struct rfs_coll_table *t, const struct stat *st, int64_t off,
                                   int64_t end)
{
    for (struct hot_buffer *h = t->lru_head; h; h = h->next)
        if (h->dev == st->st_dev && h->ino == st->st_ino && h->off <= off &&
            h->off + h->len >= end)
            return h;
    return NULL;
}

static void hot_keep(struct rfs_coll_table *t, const struct stat *st, int64_t off,
                     const uint8_t *data, int64_t len)
{
    if (len <= 0 || (uint64_t) len > t->cache_cap)
        return;
    struct hot_buffer *h = calloc(1, sizeof *h);
    uint8_t *copy = h ? malloc((size_t) len) : NULL;
    if (!copy) {
        free(h);
        return;
    }
    while (t->cache_used + (uint64_t) len > t->cache_cap)
        hot_unlink(t, t->lru_tail);
    memcpy(copy, data, (size_t) len);
    *h = (struct hot_buffer) { .next = t->lru_head, .dev = st->st_dev, .ino = st->st_ino,
                               .off = off, .len = len, .data = copy };
    if (t->lru_head)
        t->lru_head->prev = h;
    else
        t->lru_tail = h;
    t->lru_head = h;
    t->cache_used += (uint64_t) len;
    atomic_fetch_add(&t->cache_entries, 1);
}

/* The pieces [first, last) of a sorted call as one vector from the
 * first's offset on: pieces back to back in memory as in the file (one
 * participant's runs side by side) in one buffer, gaps between them from
 * (or, for a read, into) `gap`. 0: they overlap or need more than
 * COLL_VECTOR buffers. */
static int piece_vector(struct coll_call *c, size_t first, size_t last, uint8_t *gap,
                        struct iovec iov[COLL_VECTOR])
{
    int n = 0;
    int64_t at = c->pieces[first]->off;
    for (size_t i = first; i < last; i++) {
        const struct rfs_coll_piece *p = c->pieces[i];
        if (p->off < at)
            return 0;                   /* two participants' pieces overlap */
        if (p->off == at && n > 0 &&
            (uint8_t *) iov[n - 1].iov_base + iov[n - 1].iov_len == p->data) {
            iov[n - 1].iov_len += (size_t) p->len;
        } else {
            if (n + 2 > COLL_VECTOR)
                return 0;
            if (p->off > at)
                iov[n++] = (struct iovec) { gap, (size_t) (p->off - at) };
            iov[n++] = (struct iovec) { p->data, (size_t) p->len };
        }
        at = p->off + p->len;
    }
    return n;
}

/* Whether pieces [first, last) lie back to back in memory as in the file
 * (one piece; the runs of one participant's view that its object holds
 * side by side). */
static int back_to_back(struct coll_call *c, size_t first, size_t last)
{
    for (size_t i = first + 1; i < last; i++) {
        const struct rfs_coll_piece *p = c->pieces[i - 1], *q = c->pieces[i];
        if (q->off != p->off + p->len || q->data != p->data + p->len)
            return 0;
    }
    return 1;
}

/* Writes merge exact neighbours: straight from the participants' memory
 * in one vector, or, when the extent stays hot (or has too many pieces
 * for a vector), from one piece's memory or gathered in the staging
 * buffer. */
static int write_extent(struct rfs_coll_table *t, struct coll_call *c, int fd, int keep,
                        const struct stat *st, size_t first, size_t last, int64_t end,
                        uint8_t *stage)
{
    int64_t start = c->pieces[first]->off, got;
    int hot = keep && t->cache_cap;
    struct iovec iov[COLL_VECTOR];
    int n = hot ? 0 : piece_vector(c, first, last, stage, iov);
    uint8_t *src = back_to_back(c, first, last) ? c->pieces[first]->data : stage;
    if (n > 0) {
        got = rfs_move_vector(fd, 1, iov, n, start);
    } else {
        for (size_t i = first; src == stage && i < last; i++)
            memcpy(stage + (c->pieces[i]->off - start), c->pieces[i]->data,
                   (size_t) c->pieces[i]->len);
        got = rfs_move_run(fd, 1, src, start, end - start);
    }
    if (got < 0)
        return (int) got;
    for (size_t i = first; i < last; i++)
        c->pieces[i]->got = c->pieces[i]->len;
    /* what was just written stays hot for a collective read of it */
    if (hot) {
        pthread_mutex_lock(&t->mu);
        hot_keep(t, st, start, src, end - start);
        pthread_mutex_unlock(&t->mu);
    }
    return 0;
}

/* A read extent from a hot buffer or the file; got: the bytes it has. */
static int fill_extent(struct rfs_coll_table *t, const struct stat *st, int keep, int fd,
                       int64_t start, int64_t end, uint8_t *stage, int64_t *got)
{
    pthread_mutex_lock(&t->mu);
    struct hot_buffer *h = t->cache_cap ? hot_find(t, st, start, end) : NULL;
    if (h) {
        memcpy(stage, h->data + (start - h->off), (size_t) (end - start));
        *got = end - start;
        t->stats.cache_hits++;
    } else if (t->cache_cap) {
        t->stats.cache_misses++;
    }
    pthread_mutex_unlock(&t->mu);
    if (h)
        return 0;
    *got = rfs_move_run(fd, 0, stage, start, end - start);
    if (*got < 0)
        return (int) *got;
    if (keep && t->cache_cap) {
        pthread_mutex_lock(&t->mu);
        hot_keep(t, st, start, stage, *got);
        pthread_mutex_unlock(&t->mu);
    }
    return 0;
}

/* Straight into the participants' memory: as one vector (the gaps read
 * into the staging buffer and dropped) when no hot buffer could serve the
 * extent or should keep it; else, through the hot buffers, when the
 * pieces lie back to back in memory (one piece, however large). Else
 * through the staging buffer. */
static int read_extent(struct rfs_coll_table *t, struct coll_call *c, int fd, int keep,
                       const struct stat *st, size_t first, size_t last, int64_t end,
                       uint8_t *stage)
{
    int64_t start = c->pieces[first]->off, got;
    struct iovec iov[COLL_VECTOR];
    int through_cache = (keep && t->cache_cap) || atomic_load(&t->cache_entries) > 0;
    int n = through_cache ? 0 : piece_vector(c, first, last, stage, iov);
    uint8_t *into = n == 0 && !back_to_back(c, first, last) ? stage : NULL;
    int rc = 0;
    if (n > 0) {
        got = rfs_move_vector(fd, 0, iov, n, start);
        rc = got < 0 ? (int) got : 0;
    } else {
        rc = fill_extent(t, st, keep, fd, start, end, into ? into : c->pieces[first]->data, &got);
    }
    if (rc < 0)
        return rc;
    for (size_t i = first; i < last; i++) {
        struct rfs_coll_piece *p = c->pieces[i];
        int64_t have = got - (p->off - start);
        p->got = have <= 0 ? 0 : have < p->len ? have : p->len;
        if (into)
            memcpy(p->data, stage + (p->off - start), (size_t) p->got);
    }
    return 0;
}

/* The call's I/O, by the last participant to arrive (the lock not held). */
static int execute(struct rfs_coll_table *t, struct coll_call *c, int fd, int keep,
                   uint64_t *accesses, uint64_t *bytes)
{
    struct stat st;
    uint8_t *stage = malloc(COLL_STAGE);
    if (!stage)
        return -ENOMEM;
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (c->count > 1)           /* a call may bring no pieces: qsort(NULL, 0) is undefined */
        qsort(c->pieces, c->count, sizeof *c->pieces, by_offset);
    for (size_t first = 0, last; rc == 0 && first < c->count; first = last) {
        int64_t end;
        if (c->pieces[first]->len == 0) {
            last = first + 1;
            continue;
        }
        last = extent_end(c, first, &end);
        if (c->is_write) {
            rfs_coll_invalidate(t, fd, c->pieces[first]->off, end - c->pieces[first]->off);
            rc = write_extent(t, c, fd, keep, &st, first, last, end, stage);
        } else {
            rc = read_extent(t, c, fd, keep, &st, first, last, end, stage);
        }
        ++*accesses;
        *bytes += (uint64_t) (end - c->pieces[first]->off);
    }
    free(stage);
    return rc;
}

static void deadline(struct timespec *ts, int timeout_ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += timeout_ms / 1000;
    ts->tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void log_call(const struct coll_call *c, uint64_t accesses, uint64_t bytes)
{
    char order[256];
    size_t n = 0;
    for (uint32_t i = 0; i < c->arrived && n + 12 < sizeof order; i++)
        n += (size_t) snprintf(order + n, sizeof order - n, i ? ",%u" : "%u", c->arrival[i]);
    rfs_log(RFS_LOG_INFO, "collective %s %llu of group %llx: arrival order %s; %zu pieces in "
            "%llu accesses of %llu bytes on average", c->is_write ? "write" : "read",
            (unsigned long long) c->call, (unsigned long long) c->group, order, c->count,
            (unsigned long long) accesses,
            (unsigned long long) (accesses ? bytes / accesses : 0));
}

int rfs_coll_run(struct rfs_coll_table *t, const struct rfs_coll_key *key, int fd,
                 int is_write, struct rfs_coll_part *part, int timeout_ms, int *joined)
{
    *joined = 0;
    pthread_mutex_lock(&t->mu);
    struct coll_call *c = find_call(t, key);
    if (!c && !(c = new_call(t, key, is_write))) {
        pthread_mutex_unlock(&t->mu);
        return -ENOMEM;
    }
    /* too late, one too many, or not the same call: this one fails alone */
    if (c->done || c->arrived == c->parts || c->is_write != is_write || c->parts != key->parts ||
        add_pieces(c, part) < 0) {
        if (c->arrived == 0)
            free_call(t, c);
        pthread_mutex_unlock(&t->mu);
        return -EPROTO;
    }
    *joined = 1;
    c->arrival[c->arrived++] = key->rank;
    t->stats.pieces += part->count;
    if (c->arrived == c->parts) {
        uint64_t accesses = 0, bytes = 0;
        pthread_mutex_unlock(&t->mu);
        int rc = execute(t, c, fd, key->keep, &accesses, &bytes);
        pthread_mutex_lock(&t->mu);
        t->stats.calls++;
        t->stats.accesses += accesses;
        t->stats.access_bytes += bytes;
        log_call(c, accesses, bytes);
        c->status = rc;
        c->done = 1;
        pthread_cond_broadcast(&c->cv);
    }
    struct timespec until;
    deadline(&until, timeout_ms);
    /* Once all have arrived the I/O is under way: it writes into the
     * waiters' buffers, so nobody leaves before it is done. */
    while (!c->done)
        if (c->arrived == c->parts)
            pthread_cond_wait(&c->cv, &t->mu);
        else if (pthread_cond_timedwait(&c->cv, &t->mu, &until) == ETIMEDOUT &&
                 c->arrived < c->parts) {
            rfs_log(RFS_LOG_WARN, "collective call %llu: %u of %u participants after %d ms",
                    (unsigned long long) c->call, c->arrived, c->parts, timeout_ms);
            t->stats.timeouts++;
            c->status = -ETIMEDOUT;
            c->done = 1;
            pthread_cond_broadcast(&c->cv);
        }
    int rc = c->status;
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* The step at which `rank` is answered: participants are taken in
 * ascending rank order, from position server_index mod parts on. The
 * ranks need not be 0..parts-1 (only the processes with data on this
 * server take part), so the position is counted among those that came. */
static uint32_t reply_step(const struct coll_call *c, uint32_t rank, uint32_t server_index)
{
    uint32_t below = 0;
    for (uint32_t i = 0; i < c->arrived; i++)
        below += c->arrival[i] < rank;
    return (below + c->parts - server_index % c->parts) % c->parts;
}

void rfs_coll_wait_turn(struct rfs_coll_table *t, const struct rfs_coll_key *key,
                        uint32_t server_index, int timeout_ms)
{
    struct timespec until;
    deadline(&until, timeout_ms);
    pthread_mutex_lock(&t->mu);
    struct coll_call *c = find_call(t, key);
    uint32_t step = c ? reply_step(c, key->rank, server_index) : 0;
    while (c && c->status == 0 && c->turn < step)
        if (pthread_cond_timedwait(&c->cv, &t->mu, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&t->mu);
}

void rfs_coll_leave(struct rfs_coll_table *t, const struct rfs_coll_key *key)
{
    pthread_mutex_lock(&t->mu);
    struct coll_call *c = find_call(t, key);
    if (c) {
        c->turn++;
        pthread_cond_broadcast(&c->cv);
        if (++c->left == c->arrived && c->done)
            free_call(t, c);
    }
    pthread_mutex_unlock(&t->mu);
}

void rfs_coll_invalidate(struct rfs_coll_table *t, int fd, int64_t off, int64_t len)
{
    struct stat st;
    if (!t || atomic_load(&t->cache_entries) == 0 || fstat(fd, &st) < 0)
        return;
    pthread_mutex_lock(&t->mu);
    for (struct hot_buffer *h = t->lru_head, *next; h; h = next) {
        next = h->next;
        if (h->dev == st.st_dev && h->ino == st.st_ino && h->off < off + len &&
            off < h->off + h->len)
            hot_unlink(t, h);
    }
    pthread_mutex_unlock(&t->mu);
}
