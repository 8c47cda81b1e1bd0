/*
 * The request engine's noncontiguous I/O (rfs_view_io.h): the runs of a
 * view or list go to the file, or into a collective call (rfs_coll.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_view_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server/rfs_log.h"
#include "server/rfs_move.h"

void rfs_view_set(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    struct dtype *t;
    int rc = dtype_deserialize(ss->buf, (size_t) r->length, &t);
    if (rc == 0 && t->size == 0) {
        dtype_free(t);
        rc = -EINVAL;
    }
    if (rc < 0) {
        res->status = rc == -ENOMEM ? RFS_E_NOMEM : RFS_E_INVAL;
        rfs_log(RFS_LOG_INFO, "%s: file view refused: %s", ss->peer, rfs_status_str(res->status));
        return;
    }
    dtype_free(ss->view[r->handle]);
    ss->view[r->handle] = t;
    ss->view_disp[r->handle] = r->offset;
}

void rfs_view_layout(struct rfs_session *ss, const struct rfs_req *r)
{
    ss->layout[r->handle] = (struct rfs_layout) {
        .stripes = { .unit = r->length, .factor = r->aux }, .index = r->flags, .base = r->offset
    };
}

void rfs_view_coll(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    if (!ss->server->coll) {
        res->status = RFS_E_INVAL;
        return;
    }
    ss->coll_key[r->handle] = (struct rfs_coll_key) {
        .group = r->length, .call = r->offset, .parts = r->aux, .rank = r->flags,
        .keep = (r->mode & RFS_COLL_KEEP) != 0
    };
    ss->coll_set[r->handle] = 1;
}

/*
 * Where the runs of a V* or L* request go: to the file at once, or, after
 * a COLL, into the collective call's pieces, moved when all participants
 * are there (rfs_coll.h). A write drops the hot buffers it overlaps.
 */
struct run_mover {
    struct rfs_session *ss;
    int fd, is_write;
    int coll;
    struct rfs_coll_part part;
};

static void mover_init(struct run_mover *m, struct rfs_session *ss, int fd, int is_write,
                       uint32_t handle)
{
    *m = (struct run_mover) { .ss = ss, .fd = fd, .is_write = is_write,
                              .coll = ss->coll_set[handle] };
    if (m->coll)
        ss->coll_now = ss->coll_key[handle];
    ss->coll_set[handle] = 0;
}

/* The bytes moved (all of them for a collective piece), or -errno. */
static int64_t mover_run(struct run_mover *m, uint8_t *p, int64_t off, int64_t len)
{
    if (m->coll)
        return rfs_coll_add(&m->part, off, len, p) < 0 ? -ENOMEM : len;
    if (m->is_write)
        rfs_coll_invalidate(m->ss->server->coll, m->fd, off, len);
    return rfs_move_run(m->fd, m->is_write, p, off, len);
}

/* Collective: the call's I/O, and the bytes moved for this request (up to
 * the first piece cut short by the end of the file). */
static int mover_finish(struct run_mover *m, uint64_t *done)
{
    if (!m->coll)
        return 0;
    const struct rfs_server *s = m->ss->server;
    int rc = rfs_coll_run(s->coll, &m->ss->coll_now, m->fd, m->is_write, &m->part,
                          s->coll_timeout_ms, &m->ss->coll_joined);
    *done = 0;
    for (size_t i = 0; rc == 0 && i < m->part.count; i++) {
        *done += (uint64_t) m->part.pieces[i].got;
        if (m->part.pieces[i].got < m->part.pieces[i].len)
            break;
    }
    rfs_coll_part_free(&m->part);
    return rc;
}

/*
 * The runs of a handle's view inside a window that this server's object
 * holds, as offsets in the object: with a LAYOUT every run of the view is
 * cut at stripe boundaries and only this object's pieces are kept.
 */
struct view_walk {
    struct dtype_iter it;
    const struct rfs_layout *layout;    /* NULL: the file is not striped */
    int64_t off, len;                   /* what is left of the current run */
};

static int view_walk_init(struct view_walk *w, struct rfs_session *ss, uint32_t handle,
                          int64_t first, int64_t last)
{
    const struct dtype *t = ss->view[handle];
    w->layout = ss->layout[handle].stripes.factor ? &ss->layout[handle] : NULL;
    w->len = 0;
    return dtype_iter_init(&w->it, t, last / t->size + 1, (int64_t) ss->view_disp[handle],
                           first, last);
}

/* 1 and the next run, 0 at the end, -1 for a run before the file's start. */
static int view_walk_next(struct view_walk *w, int64_t *off, int64_t *len)
{
    for (;;) {
        if (w->len == 0 && !dtype_iter_next(&w->it, &w->off, &w->len))
            return 0;
        if (w->off < 0)
            return -1;
        if (!w->layout) {
            *off = w->off;
            *len = w->len;
            w->len = 0;
            return 1;
        }
        struct stripe_piece p;
        stripe_piece_at(&w->layout->stripes, (uint64_t) w->off, (uint64_t) w->len, &p);
        w->off += (int64_t) p.len;
        w->len -= (int64_t) p.len;
        if (p.object == w->layout->index) {
            *off = (int64_t) (w->layout->base + p.local);
            *len = (int64_t) p.len;
            return 1;
        }
    }
}

/* The data bytes of the window this server moves: all of them unless
 * the file is striped. -1 for a view that leaves the file. */
static int64_t view_share(struct rfs_session *ss, uint32_t handle, int64_t first, int64_t last)
{
    struct view_walk w;
    int64_t off, len, share = 0;
    int rc;
    if (view_walk_init(&w, ss, handle, first, last) < 0)
        return -1;
    if (!w.layout)
        return last - first;
    while ((rc = view_walk_next(&w, &off, &len)) > 0)
        share += len;
    return rc < 0 ? -1 : share;
}

/*
 * VREAD/VWRITE: the data bytes [offset, offset + length) of the view, the
 * filetype tiling the file from the displacement on (this object's share
 * of them for a striped handle). One pread or pwrite per run (adjacent
 * runs merged by the iterator); a read stops at the end of the file.
 */
void rfs_view_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
                 uint64_t data_len, struct rfs_result *res)
{
    struct view_walk w;
    int64_t off, len, share;
    uint64_t done = 0;
    if (!ss->view[r->handle]) {
        res->status = RFS_E_INVAL;
        return;
    }
    int64_t first = (int64_t) r->offset, last = first + (int64_t) r->length;
    share = view_share(ss, r->handle, first, last);
    if (share < 0 || (is_write && (uint64_t) share != data_len)) {
        res->status = RFS_E_INVAL;
        return;
    }
    if (!is_write && (uint64_t) share > ss->server->max_data) {
        res->status = RFS_E_TOOBIG;
        return;
    }
    if (!is_write && rfs_session_reserve(ss, (uint64_t) share) < 0) {
        res->status = RFS_E_NOMEM;
        return;
    }
    struct run_mover m;
    mover_init(&m, ss, fd, is_write, r->handle);
    view_walk_init(&w, ss, r->handle, first, last);
    int rc;
    int64_t got = 0;
    while ((rc = view_walk_next(&w, &off, &len)) > 0) {
        if ((got = mover_run(&m, ss->buf + done, off, len)) < 0)
            break;
        done += (uint64_t) got;
        if (got < len)
            break;
    }
    /* A participant that failed still arrives, so the others do not wait. */
    int coll_rc = mover_finish(&m, &done);
    rfs_coll_part_free(&m.part);
    if (got < 0 || coll_rc < 0)
        res->status = rfs_status_of_errno(got < 0 ? (int) -got : -coll_rc);
    else if (rc < 0)
        res->status = RFS_E_INVAL;
    else if (is_write)
        res->rep.value = done;
    else
        res->data_len = done;
}

/*
 * LREAD/LWRITE: the pairs are checked whole (their lengths add up to the
 * request's, no range leaves the file's limits) before any byte moves.
 * The data of a read is the pairs' bytes in order, short at end of file.
 */
void rfs_list_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
                 struct rfs_result *res)
{
    size_t table = (size_t) r->aux * RFS_PAIR_SIZE;
    uint64_t sum = 0, off, len, done = 0;
    uint8_t *pairs = ss->buf;
    for (uint32_t i = 0; i < r->aux; i++) {
        rfs_pair_decode(pairs + (size_t) i * RFS_PAIR_SIZE, &off, &len);
        if (len > r->length || off > STRIPE_MAX_OFFSET || len > STRIPE_MAX_OFFSET - off ||
            (sum += len) > r->length) {
            res->status = RFS_E_INVAL;
            return;
        }
    }
    if (sum != r->length) {
        res->status = RFS_E_INVAL;
        return;
    }
    if (!is_write) {
        /* the reply's data goes to the session buffer: keep the pairs apart */
        pairs = malloc(table);
        if (!pairs || rfs_session_reserve(ss, r->length) < 0) {
            free(pairs);
            res->status = RFS_E_NOMEM;
            return;
        }
        memcpy(pairs, ss->buf, table);
    }
    uint8_t *data = is_write ? ss->buf + table : ss->buf;
    struct run_mover m;
    mover_init(&m, ss, fd, is_write, r->handle);
    int64_t got = 0;
    for (uint32_t i = 0; i < r->aux; i++) {
        rfs_pair_decode(pairs + (size_t) i * RFS_PAIR_SIZE, &off, &len);
        got = mover_run(&m, data + done, (int64_t) off, (int64_t) len);
        if (got < 0) {
            res->status = rfs_status_of_errno((int) -got);
            break;
        }
        done += (uint64_t) got;
        if ((uint64_t) got < len)
            break;
    }
    /* A participant that failed still arrives, so the others do not wait. */
    int rc = mover_finish(&m, &done);
    if (rc < 0 && res->status == RFS_OK)
        res->status = rfs_status_of_errno(-rc);
    rfs_coll_part_free(&m.part);
    if (!is_write)
        free(pairs);
    if (res->status != RFS_OK)
        return;
    if (is_write)
        res->rep.value = done;
    else
        res->data_len = done;
}
