/*
 * Replicated files (stripe.h, docs/rdma.md "Replicas"): which copies a
 * call reads and writes, what a lost server does to a call, and the
 * replica state that says which servers missed writes.
 *
 * A server this open cannot reach (a transport failure: it died, or did
 * not answer within the timeout) is lost to the open for good (f->down):
 * reads go to another copy, writes to the other copies. Before a write
 * returns, every lost server the state does not call stale yet is marked
 * stale in the state, so that neither this job nor a later open reads it
 * again, even once it is back; only a resync makes it current again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stripe/stripe_file.h"
#include "net/net_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Locks the state of one server's copy: a range no logical offset or the
 * create lock (stripe_file.c) reaches. */
#define STRIPE_STATE_LOCK (STRIPE_MAX_OFFSET + 1)

static int replicated(const struct stripe_file *f)
{
    return stripe_copies(&f->layout) > 1;
}

static uint64_t all_servers(const struct stripe_layout *l)
{
    return l->factor >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << l->factor) - 1;
}

void stripe_route_of(const struct stripe_file *f, struct stripe_route *r)
{
    uint64_t plain_stale = f->state.stale & ~f->state.resyncing;
    r->avoid = f->down | f->state.stale;
    r->skip = f->down | plain_stale;
    r->after = f->state.resyncing & ~r->skip;
}

int stripe_read_slot(const struct stripe_file *f, const struct stripe_route *r, uint32_t object)
{
    int c = stripe_read_copy(&f->layout, object, r->avoid);
    return c < 0 ? -1 : (int) stripe_slot(&f->layout, object, (uint32_t) c);
}

int stripe_write_slot(const struct stripe_file *f, const struct stripe_route *r, uint32_t slot,
                      int after)
{
    uint64_t bit = UINT64_C(1) << stripe_slot_server(&f->layout, slot);
    if (r->skip & bit)
        return 0;
    return after ? (r->after & bit) != 0 : (r->after & bit) == 0;
}

int stripe_slot_failure(struct stripe_file *f, int *status, uint32_t slot, int rc)
{
    uint32_t server = stripe_slot_server(&f->layout, slot);
    if (rc < 0 && replicated(f)) {
        if (!(f->down >> server & 1))
            f->lost_at[server] = STRIPE_LOST_AT_UNKNOWN;
        f->down |= UINT64_C(1) << server;
        return 1;
    }
    stripe_keep_failure(f, status, server, rc);
    return 0;
}

/* A failure for a replicated file that cannot go on: server names one of
 * the servers it needed. */
static int cannot_go_on(struct stripe_file *f, uint32_t server, const char *why)
{
    f->failed = (int) server;
    f->why = why;
    return -EHOSTUNREACH;
}

int stripe_readable(struct stripe_file *f)
{
    struct stripe_route r;
    stripe_route_of(f, &r);
    for (uint32_t o = 0; replicated(f) && o < f->layout.factor; o++)
        if (stripe_read_slot(f, &r, o) < 0)
            return cannot_go_on(f, o, "no current copy of some of the file's data is "
                                "reachable (every server holding one is lost or stale)");
    return 0;
}

/* The state in the header of server s's copy 0 (object s), from the
 * bytes a read of it got. */
static int state_of(const uint8_t *buf, uint64_t got, struct stripe_state *out)
{
    int rc = stripe_state_decode(buf, got, out);
    return rc == -ENOENT || rc == 0 ? 0 : RFS_E_INVAL;
}

static int state_read(struct stripe_file *f, uint32_t s, struct stripe_state *out)
{
    uint8_t buf[STRIPE_STATE_SIZE];
    uint64_t got = 0;
    int rc = rfs_pread(f->obj[s].client, f->obj[s].handle, buf, sizeof buf, STRIPE_STATE_OFFSET,
                       &got);
    return rc != 0 ? rc : state_of(buf, got, out);
}

static int usable(const struct stripe_file *f, uint32_t s)
{
    return !(f->down >> s & 1) && f->obj[s].client != NULL;
}

#define STRIPE_READMIT_MS 1000

/* Lost servers whose state changed since this open lost them, and that
 * are now being resynced or current again, are taken back: their writes
 * must not be missed, and a server this open keeps away would be marked
 * stale again. A try that fails waits for the next change of the state
 * (and a second at least), so that a server still gone costs a timeout
 * only then. */
static void readmit(struct stripe_file *f)
{
    uint64_t back = 0;
    for (uint32_t s = 0; s < f->layout.factor; s++) {
        if (!(f->down >> s & 1))
            continue;
        if (f->lost_at[s] == STRIPE_LOST_AT_UNKNOWN)
            f->lost_at[s] = f->state.epoch;     /* the first state known since */
        if (f->state.epoch > f->lost_at[s] &&
            ((f->state.resyncing >> s & 1) || !(f->state.stale >> s & 1)))
            back |= UINT64_C(1) << s;
    }
    if (!back || (uint64_t) net_monotonic_ms() < f->readmit_ms)
        return;
    f->readmit_ms = (uint64_t) net_monotonic_ms() + STRIPE_READMIT_MS;
    for (uint32_t s = 0; s < f->layout.factor; s++)
        if (back >> s & 1 && stripe_readmit(f, s) != 0) {
            f->down |= UINT64_C(1) << s;
            f->lost_at[s] = f->state.epoch;
        }
}

/* The states of the usable servers in `ask` (bits), read at once, merged
 * into f->state; returns how many answered (a lost one is left out), or
 * a negative failure of a server that answered wrongly in *rc. */
static uint32_t states_read(struct stripe_file *f, uint64_t ask, int *rc)
{
    struct rfs_inflight sent[STRIPE_MAX_FACTOR];
    int status[STRIPE_MAX_FACTOR];
    uint8_t buf[STRIPE_STATE_SIZE];
    uint32_t heard = 0;
    for (uint32_t s = 0; s < f->layout.factor; s++)
        if (ask >> s & 1) {
            struct rfs_req req = { .handle = f->obj[s].handle, .offset = STRIPE_STATE_OFFSET,
                                   .length = sizeof buf };
            status[s] = rfs_send(f->obj[s].client, RFS_OP_PREAD, &req, NULL, 0, &sent[s]);
        }
    for (uint32_t s = 0; s < f->layout.factor; s++) {
        struct rfs_rep rep;
        struct stripe_state st;
        uint64_t got = 0;
        if (!(ask >> s & 1))
            continue;
        int r = status[s];
        if (r == 0)
            r = rfs_recv(f->obj[s].client, &sent[s], buf, sizeof buf, &rep, &got);
        if (r == 0)
            r = state_of(buf, got, &st);
        if (r == 0) {
            stripe_state_merge(&f->state, &st, &f->state);
            heard++;
        } else {
            stripe_slot_failure(f, rc, s, r);
        }
    }
    return heard;
}

int stripe_refresh(struct stripe_file *f)
{
    uint32_t heard = 0, need = stripe_state_reads(&f->layout);
    uint64_t asked = 0;
    int rc = 0;
    if (!replicated(f))
        return 0;
    /* the first servers that may answer, all at once; others for the lost */
    while (heard < need && rc == 0) {
        uint64_t ask = 0;
        for (uint32_t s = 0, n = heard; n < need && s < f->layout.factor; s++)
            if (usable(f, s) && !(asked >> s & 1)) {
                ask |= UINT64_C(1) << s;
                n++;
            }
        if (!ask)
            break;
        asked |= ask;
        heard += states_read(f, ask, &rc);
    }
    if (rc != 0)
        return rc;
    if (heard < need)
        return cannot_go_on(f, 0, "fewer servers than rdma_replicas answer: which copies "
                            "are current cannot be told");
    readmit(f);
    return stripe_readable(f);
}

/* Server s's state merged with what this open knows, changed, written
 * back and made durable, under the server's lock. */
static int state_change_one(struct stripe_file *f, uint32_t s, const struct stripe_state *want,
                            uint64_t add_stale, uint64_t add_resync, uint64_t clear,
                            struct stripe_state *done)
{
    struct rfs_client *c = f->obj[s].client;
    uint32_t h = f->obj[s].handle;
    struct stripe_state cur;
    uint8_t buf[STRIPE_STATE_SIZE];
    int rc = rfs_lock(c, h, RFS_LOCK_WRITE, STRIPE_STATE_LOCK, 1, 1);
    if (rc != 0)
        return rc;
    rc = state_read(f, s, &cur);
    if (rc == 0) {
        stripe_state_merge(&cur, want, done);
        /* a resync makes current only what is still resyncing: a writer
         * that skipped the server meanwhile made it plain stale again */
        clear &= done->resyncing;
        done->resyncing = (done->resyncing | add_resync) & ~add_stale;
        done->stale = (done->stale | add_stale) & ~clear;
        done->resyncing &= done->stale;
        done->epoch++;
        stripe_state_encode(done, buf);
        rc = rfs_pwrite(c, h, buf, sizeof buf, STRIPE_STATE_OFFSET);
    }
    if (rc == 0)
        rc = rfs_fsync(c, h);
    int unlocked = rfs_lock(c, h, RFS_LOCK_UNLOCK, STRIPE_STATE_LOCK, 1, 0);
    return rc != 0 ? rc : unlocked;
}

int stripe_state_change(struct stripe_file *f, uint64_t add_stale, uint64_t add_resync,
                        uint64_t clear)
{
    struct stripe_state want = f->state, next = f->state;
    uint32_t took = 0;
    int rc = 0;
    for (uint32_t s = 0; s < f->layout.factor; s++) {
        struct stripe_state done;
        if (!usable(f, s))
            continue;
        int r = state_change_one(f, s, &want, add_stale, add_resync, clear, &done);
        if (r == 0) {
            stripe_state_merge(&next, &done, &next);
            took++;
        } else if (!stripe_slot_failure(f, &rc, s, r)) {
            return rc;
        }
    }
    f->state = next;
    if (took < stripe_state_writes(&f->layout))
        return cannot_go_on(f, 0, "too few servers are left to record which copies are "
                            "stale");
    return 0;
}

int stripe_settle_writes(struct stripe_file *f, int rc)
{
    if (!replicated(f))
        return rc;
    /* what the call did not write: lost, or plain stale when it began (or
     * agreed so in a collective round); the state is read again, since a
     * resync may have begun meanwhile and must not take such a server for
     * current */
    uint64_t skipped = (f->skipped | f->down) & all_servers(&f->layout), newly = 0;
    int refreshed = skipped ? stripe_refresh(f) : 0;
    f->skipped = 0;
    if (refreshed == 0)
        newly = skipped & ~(f->state.stale & ~f->state.resyncing);
    int marked = newly ? stripe_state_change(f, newly, 0, 0) : 0;
    rc = rc != 0 ? rc : refreshed != 0 ? refreshed : marked;
    if (rc == 0) {
        struct stripe_route r;
        stripe_route_of(f, &r);
        for (uint32_t o = 0; o < f->layout.factor; o++) {
            int kept = 0;
            for (uint32_t c = 0; c < stripe_copies(&f->layout); c++)
                kept |= stripe_write_slot(f, &r, stripe_slot(&f->layout, o, c), 0);
            if (!kept)
                return cannot_go_on(f, o, "every copy of some of the file's data is lost: "
                                    "the write is not kept");
        }
    }
    return rc;
}

/* --- resync --- */

#define STRIPE_RESYNC_TRIES 100     /* a chunk copied again while it keeps changing */
#define STRIPE_RESYNC_GRACE_MS 1000 /* for calls under way to see the resync begin */

static int data_size(struct stripe_file *f, uint32_t p, uint64_t *size)
{
    struct rfs_stat st;
    int rc = rfs_fstat(f->obj[p].client, f->obj[p].handle, &st);
    *size = rc == 0 && st.size > STRIPE_HDR_SIZE ? st.size - STRIPE_HDR_SIZE : 0;
    return rc;
}

static int read_full(struct stripe_file *f, uint32_t p, char *buf, uint64_t len, uint64_t local,
                     uint64_t *got)
{
    int rc = rfs_pread(f->obj[p].client, f->obj[p].handle, buf, len, STRIPE_HDR_SIZE + local, got);
    if (rc == 0)
        memset(buf + *got, 0, len - *got);  /* past the end reads as a hole */
    return rc;
}

/* One chunk of slot `to` made equal to slot `from`'s; *wrote: bytes
 * written. The current copy is read again after the write: if it changed
 * meanwhile (a writer wrote it first and the resyncing copy before this
 * write landed), the chunk is copied again. */
static int resync_chunk(struct stripe_file *f, uint32_t from, uint32_t to, uint64_t local,
                        uint64_t len, char *src, char *dst, uint64_t *wrote)
{
    uint64_t got, had;
    int rc = read_full(f, from, src, len, local, &got);
    for (int tries = 0; rc == 0; tries++) {
        if (tries == STRIPE_RESYNC_TRIES)
            return -EAGAIN;
        rc = read_full(f, to, dst, len, local, &had);
        if (rc != 0 || (memcmp(src, dst, len) == 0 && had >= got))
            return rc;
        rc = rfs_pwrite(f->obj[to].client, f->obj[to].handle, src, got, STRIPE_HDR_SIZE + local);
        *wrote += got;
        if (rc == 0)
            rc = read_full(f, from, dst, len, local, &got);
        if (rc == 0 && memcmp(src, dst, len) == 0)
            return 0;
        memcpy(src, dst, len);
    }
    return rc;
}

/* Slot `to` (a copy on a resyncing server) made equal to a current copy
 * of its object: its data, then its size. */
static int resync_slot(struct stripe_file *f, uint32_t to, char *src, char *dst, uint64_t *wrote)
{
    struct stripe_route r;
    stripe_route_of(f, &r);
    int from = stripe_read_slot(f, &r, to % f->layout.factor);
    uint64_t size = 0, done = 0, after = 0;
    if (from < 0)
        return stripe_readable(f);
    int rc = data_size(f, (uint32_t) from, &size);
    for (int tries = 0; rc == 0; tries++) {
        while (rc == 0 && done < size) {
            uint64_t n = size - done < STRIPE_RESYNC_CHUNK ? size - done : STRIPE_RESYNC_CHUNK;
            rc = resync_chunk(f, (uint32_t) from, to, done, n, src, dst, wrote);
            done += n;
        }
        if (rc == 0)
            rc = rfs_ftruncate(f->obj[to].client, f->obj[to].handle, STRIPE_HDR_SIZE + size);
        /* the size again: a writer may have grown or cut the file meanwhile */
        if (rc == 0)
            rc = data_size(f, (uint32_t) from, &after);
        if (rc != 0 || after == size)
            break;
        if (tries == STRIPE_RESYNC_TRIES)
            return -EAGAIN;
        done = after < size ? after : size;
        size = after;
    }
    if (rc == 0)
        rc = rfs_fsync(f->obj[to].client, f->obj[to].handle);
    return rc;
}

/* Every slot on the servers `which`, one pass. */
static int resync_pass(struct stripe_file *f, uint64_t which, uint64_t *copied)
{
    char *src = malloc(STRIPE_RESYNC_CHUNK), *dst = malloc(STRIPE_RESYNC_CHUNK);
    int rc = src && dst ? 0 : -ENOMEM;
    for (uint32_t p = 0; rc == 0 && p < stripe_slots(f); p++) {
        uint32_t server = stripe_slot_server(&f->layout, p);
        if (which >> server & 1) {
            rc = resync_slot(f, p, src, dst, copied);
            if (rc != 0)
                f->failed = (int) server;
        }
    }
    free(src);
    free(dst);
    return rc;
}

int stripe_resync(struct stripe_file *f, uint64_t *servers, uint64_t *copied)
{
    *servers = *copied = 0;
    f->failed = -1;
    if (!replicated(f))
        return 0;
    int rc = stripe_refresh(f);
    uint64_t which = f->state.stale & ~f->down;
    if (rc != 0 || which == 0)
        return rc;
    rc = stripe_state_change(f, 0, which, 0);
    if (rc == 0)
        nanosleep(&(struct timespec) { .tv_sec = STRIPE_RESYNC_GRACE_MS / 1000 }, NULL);
    for (int pass = 0; rc == 0 && pass < 2; pass++) {
        rc = stripe_refresh(f);
        if (rc == 0)
            rc = resync_pass(f, which & f->state.resyncing & ~f->down, copied);
    }
    which &= f->state.resyncing & ~f->down;
    if (rc == 0 && which)
        rc = stripe_state_change(f, 0, 0, which);
    if (rc == 0)
        *servers = which;
    return rc;
}
