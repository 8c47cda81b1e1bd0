/*
 * rfsd's request engine: read a request, validate it completely, perform
 * it on a file under the export root, send the reply.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype/dtype.h"
#include "proto/rfs_auth.h"
#include "proto/rfs_proto.h"
#include "server/rfs_coll.h"
#include "server/rfs_log.h"
#include "stripe/stripe.h"

struct rfs_session {
    const struct rfs_server *server;
    struct net_conn *conn;
    const char *peer;
    int root_fd;                        /* the export root, or the key's part of it */
    int key_root_fd;                    /* the key's part, opened here, or -1 */
    int read_only;                      /* the key may only read */
    struct rfs_auth_state {             /* with keys: requests wait for a proof */
        int done;
        int hello_seen;
        const struct rfs_key *key;      /* NULL also for an unknown name */
        char name[RFS_AUTH_MAX_NAME + 1];
        uint8_t client_nonce[RFS_AUTH_NONCE], server_nonce[RFS_AUTH_NONCE];
    } auth;
    int fd[RFS_MAX_HANDLES];            /* -1: free */
    uint32_t accmode[RFS_MAX_HANDLES];  /* RFS_O_RDONLY/WRONLY/RDWR */
    struct dtype *view[RFS_MAX_HANDLES];    /* filetype of the file view, or NULL */
    uint64_t view_disp[RFS_MAX_HANDLES];
    struct rfs_layout {                 /* LAYOUT of the handle; factor 0: none */
        struct stripe_layout stripes;
        uint32_t index;
        uint64_t base;
    } layout[RFS_MAX_HANDLES];
    uint8_t *buf;                       /* request or reply data */
    size_t cap;
    /* A COLL waits for the handle's next V* or L* request; the request
     * being served took part in a collective call (coll_joined): its reply
     * goes in the call's schedule. */
    struct rfs_coll_key coll_key[RFS_MAX_HANDLES];
    int coll_set[RFS_MAX_HANDLES];
    int coll_joined;
    struct rfs_coll_key coll_now;
};

/* What a handler hands back: a status, the reply's fixed part and data. */
struct rfs_result {
    int status;
    struct rfs_rep rep;
    uint64_t data_len;                  /* reply data, in session->buf */
};

/*
 * From this size on, written data goes from the socket to the file in the
 * kernel where the transport can (splice): one copy instead of two. Reads
 * stay pread + send: sendfile measured slower and less steady on loopback
 * (docs/testing.md).
 */
#define RFS_ZEROCOPY_MIN (64u << 10)

int rfs_server_init(struct rfs_server *s, const char *root)
{
    s->rate = NULL;
    s->keys = NULL;
    s->max_data = RFS_MAX_DATA;
    s->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return s->root_fd < 0 ? -errno : 0;
}

int rfs_server_check_keys(const struct rfs_server *s, char *err, size_t errlen)
{
    for (size_t i = 0; s->keys && i < s->keys->count; i++) {
        const struct rfs_key *k = &s->keys->keys[i];
        int fd = k->root ? rfs_path_open_dir(s->root_fd, k->root) : 0;
        if (fd < 0) {
            snprintf(err, errlen, "key '%s': root=%s: %s", k->name, k->root, strerror(-fd));
            return fd;
        }
        if (k->root)
            close(fd);
    }
    return 0;
}

void rfs_server_fini(struct rfs_server *s)
{
    if (s->root_fd >= 0)
        close(s->root_fd);
    s->root_fd = -1;
}

static int ensure_buf(struct rfs_session *ss, uint64_t len)
{
    if (len <= ss->cap)
        return 0;
    if (len > ss->server->max_data)
        return -ENOMEM;
    uint8_t *p = realloc(ss->buf, (size_t) len);
    if (!p)
        return -ENOMEM;
    ss->buf = p;
    ss->cap = (size_t) len;
    return 0;
}

static int writable(uint32_t accmode)
{
    return accmode != RFS_O_RDONLY;
}

static int status_of_errno(int err)
{
    return rfs_status_from_errno(err < 0 ? -err : err);
}

static int open_flags(uint32_t flags)
{
    int o = (flags & RFS_O_ACCMODE) == RFS_O_WRONLY ? O_WRONLY
          : (flags & RFS_O_ACCMODE) == RFS_O_RDWR ? O_RDWR : O_RDONLY;
    if (flags & RFS_O_CREAT)
        o |= O_CREAT;
    if (flags & RFS_O_EXCL)
        o |= O_EXCL;
    return o;
}

static void fill_stat(int fd, struct rfs_result *res)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        res->status = status_of_errno(errno);
        return;
    }
    res->rep.value = (uint64_t) st.st_size;
    res->rep.blksize = st.st_blksize > 0 ? (uint32_t) st.st_blksize : 4096;
}

static void do_open(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    char path[RFS_MAX_PATH + 1];
    memcpy(path, ss->buf, r->aux);
    path[r->aux] = '\0';
    if (ss->fd[r->handle] >= 0) {
        res->status = RFS_E_BADF;
        return;
    }
    if (ss->read_only && ((r->flags & RFS_O_ACCMODE) != RFS_O_RDONLY || r->flags & RFS_O_CREAT)) {
        res->status = RFS_E_ACCES;
        rfs_log(RFS_LOG_WARN, "%s: open %s for writing refused: key '%s' is read-only",
                ss->peer, path, ss->auth.name);
        return;
    }
    mode_t mode = (mode_t) (r->mode & 07777);
    int fd = rfs_path_open(ss->root_fd, path, open_flags(r->flags), mode ? mode : 0644);
    if (fd < 0) {
        res->status = status_of_errno(fd);
        rfs_log(RFS_LOG_INFO, "%s: open %s: %s", ss->peer, path, rfs_status_str(res->status));
        return;
    }
    ss->fd[r->handle] = fd;
    ss->accmode[r->handle] = r->flags & RFS_O_ACCMODE;
    fill_stat(fd, res);
    rfs_log(RFS_LOG_DEBUG, "%s: open %s as handle %u", ss->peer, path, r->handle);
}

int64_t rfs_move_run(int fd, int is_write, uint8_t *p, int64_t off, int64_t len)
{
    int64_t got = 0;
    while (got < len) {
        ssize_t n = is_write ? pwrite(fd, p + got, (size_t) (len - got), (off_t) (off + got))
                             : pread(fd, p + got, (size_t) (len - got), (off_t) (off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        got += n;
    }
    return got;
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

/* PREAD/PWRITE: one run of the file (a read stops at end of file). */
static void do_contig_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
                         struct rfs_result *res)
{
    if (!is_write && ensure_buf(ss, r->length) < 0) {
        res->status = RFS_E_NOMEM;
        return;
    }
    if (is_write)
        rfs_coll_invalidate(ss->server->coll, fd, (int64_t) r->offset, (int64_t) r->length);
    int64_t done = rfs_move_run(fd, is_write, ss->buf, (int64_t) r->offset, (int64_t) r->length);
    if (done < 0)
        res->status = status_of_errno((int) -done);
    else if (is_write)
        res->rep.value = (uint64_t) done;
    else
        res->data_len = (uint64_t) done;
}

/* A large write goes from the socket to the file in the kernel; the data
 * is consumed even when the write cannot be done. < 0: stream failure. */
static int pwrite_direct(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    int fd = ss->fd[r->handle];
    if (fd < 0 || !writable(ss->accmode[r->handle])) {
        res->status = RFS_E_BADF;
        fd = -1;
    }
    if (fd >= 0)
        rfs_coll_invalidate(ss->server->coll, fd, (int64_t) r->offset, (int64_t) r->length);
    int rc = ss->conn->transport->recv_to_file(ss->conn, fd, r->offset, r->length);
    if (rc < 0)
        return rc;
    if (res->status == RFS_OK && rc > 0)
        res->status = status_of_errno(rc);
    if (res->status == RFS_OK)
        res->rep.value = r->length;
    return 0;
}

static void do_lock(int fd, const struct rfs_req *r, struct rfs_result *res)
{
    /* Open-file-description locks belong to this connection's open of the
     * file: they conflict with other connections, even in this process,
     * and vanish when the connection's file is closed. */
    struct flock fl = {
        .l_type = r->flags == RFS_LOCK_READ ? F_RDLCK
                : r->flags == RFS_LOCK_WRITE ? F_WRLCK : F_UNLCK,
        .l_whence = SEEK_SET,
        .l_start = (off_t) r->offset,
        .l_len = (off_t) r->length,
    };
    /* No retry on EINTR: rfsd interrupts lock waits when it shuts down. */
    if (fcntl(fd, r->aux ? F_OFD_SETLKW : F_OFD_SETLK, &fl) < 0)
        res->status = status_of_errno(errno);
}

static void do_setview(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
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

static void do_layout(struct rfs_session *ss, const struct rfs_req *r)
{
    ss->layout[r->handle] = (struct rfs_layout) {
        .stripes = { .unit = r->length, .factor = r->aux }, .index = r->flags, .base = r->offset
    };
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
static void do_view_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
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
    if (!is_write && ensure_buf(ss, (uint64_t) share) < 0) {
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
        res->status = status_of_errno(got < 0 ? (int) -got : -coll_rc);
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
static void do_list_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
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
        if (!pairs || ensure_buf(ss, r->length) < 0) {
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
            res->status = status_of_errno((int) -got);
            break;
        }
        done += (uint64_t) got;
        if ((uint64_t) got < len)
            break;
    }
    /* A participant that failed still arrives, so the others do not wait. */
    int rc = mover_finish(&m, &done);
    if (rc < 0 && res->status == RFS_OK)
        res->status = status_of_errno(-rc);
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

static void dispatch(struct rfs_session *ss, uint16_t op, const struct rfs_req *r,
                     uint64_t var, struct rfs_result *res)
{
    if (op == RFS_OP_OPEN) {
        do_open(ss, r, res);
        return;
    }
    if (op == RFS_OP_UNLINK) {
        char path[RFS_MAX_PATH + 1];
        memcpy(path, ss->buf, r->aux);
        path[r->aux] = '\0';
        res->status = ss->read_only ? RFS_E_ACCES
                                    : status_of_errno(rfs_path_unlink(ss->root_fd, path));
        rfs_log(RFS_LOG_DEBUG, "%s: unlink %s: %s", ss->peer, path, rfs_status_str(res->status));
        return;
    }
    int fd = ss->fd[r->handle];
    uint32_t acc = ss->accmode[r->handle];
    if (fd < 0) {
        res->status = RFS_E_BADF;
        return;
    }
    switch (op) {
    case RFS_OP_CLOSE:
        ss->fd[r->handle] = -1;
        ss->coll_set[r->handle] = 0;
        dtype_free(ss->view[r->handle]);
        ss->view[r->handle] = NULL;
        ss->layout[r->handle].stripes.factor = 0;
        if (close(fd) < 0)
            res->status = status_of_errno(errno);
        break;
    case RFS_OP_PREAD:
        if (acc == RFS_O_WRONLY)
            res->status = RFS_E_BADF;
        else
            do_contig_io(ss, fd, 0, r, res);
        break;
    case RFS_OP_PWRITE:
        if (!writable(acc))
            res->status = RFS_E_BADF;
        else
            do_contig_io(ss, fd, 1, r, res);
        break;
    case RFS_OP_FSTAT:
        fill_stat(fd, res);
        break;
    case RFS_OP_FTRUNCATE:
        if (!writable(acc))
            res->status = RFS_E_BADF;
        else if (rfs_coll_invalidate(ss->server->coll, fd, 0, INT64_MAX),
                 ftruncate(fd, (off_t) r->length) < 0)
            res->status = status_of_errno(errno);
        break;
    case RFS_OP_FSYNC:
        if (fsync(fd) < 0)
            res->status = status_of_errno(errno);
        break;
    case RFS_OP_PREALLOC:
        if (!writable(acc))
            res->status = RFS_E_BADF;
        else if (r->length > 0)
            res->status = status_of_errno(posix_fallocate(fd, (off_t) r->offset,
                                                          (off_t) r->length));
        break;
    case RFS_OP_LOCK:
        do_lock(fd, r, res);
        break;
    case RFS_OP_SETVIEW:
        do_setview(ss, r, res);
        break;
    case RFS_OP_VREAD:
    case RFS_OP_VWRITE:
        if (op == RFS_OP_VREAD ? acc == RFS_O_WRONLY : !writable(acc))
            res->status = RFS_E_BADF;
        else
            do_view_io(ss, fd, op == RFS_OP_VWRITE, r, var, res);
        break;
    case RFS_OP_LAYOUT:
        do_layout(ss, r);
        break;
    case RFS_OP_COLL:
        if (!ss->server->coll) {
            res->status = RFS_E_INVAL;
            break;
        }
        ss->coll_key[r->handle] = (struct rfs_coll_key) {
            .group = r->length, .call = r->offset, .parts = r->aux, .rank = r->flags,
            .keep = (r->mode & RFS_COLL_KEEP) != 0
        };
        ss->coll_set[r->handle] = 1;
        break;
    case RFS_OP_LREAD:
    case RFS_OP_LWRITE:
        if (op == RFS_OP_LREAD ? acc == RFS_O_WRONLY : !writable(acc))
            res->status = RFS_E_BADF;
        else
            do_list_io(ss, fd, op == RFS_OP_LWRITE, r, res);
        break;
    default:
        res->status = RFS_E_PROTO;
        break;
    }
    /* A COLL goes with the next data request only, also one refused before
     * it reached the collective call. */
    if (op == RFS_OP_VREAD || op == RFS_OP_VWRITE || op == RFS_OP_LREAD || op == RFS_OP_LWRITE)
        ss->coll_set[r->handle] = 0;
}

/* HELLO: remember the client's name and nonce, answer with ours. An
 * unknown name is not told apart here: that exchange fails at the proof,
 * so names cannot be probed. */
static void auth_hello(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    struct rfs_auth_state *a = &ss->auth;
    memcpy(a->name, ss->buf, r->aux);
    a->name[r->aux] = '\0';
    a->key = rfs_keyring_find(ss->server->keys, a->name, r->aux);
    memcpy(a->client_nonce, ss->buf + r->aux, RFS_AUTH_NONCE);
    if (rfs_auth_nonce(a->server_nonce) < 0) {
        res->status = RFS_E_IO;
        return;
    }
    a->hello_seen = 1;
    memcpy(ss->buf, a->server_nonce, RFS_AUTH_NONCE);
    res->data_len = RFS_AUTH_NONCE;
}

/* PROOF: check the client's MAC, answer with the server's. Returns
 * -EACCES when the connection must end. */
static int auth_proof(struct rfs_session *ss, struct rfs_result *res)
{
    struct rfs_auth_state *a = &ss->auth;
    uint8_t binding[RFS_AUTH_BINDING], expect[RFS_AUTH_MAC];
    size_t blen = net_binding(ss->conn, binding, sizeof binding) == 0 ? sizeof binding : 0;
    int ok = a->hello_seen && a->key;
    if (ok) {
        rfs_auth_mac(a->key, 'C', a->client_nonce, a->server_nonce, binding, blen, expect);
        ok = rfs_auth_mac_equal(expect, ss->buf);
    }
    if (!ok) {
        rfs_log(RFS_LOG_WARN, "%s: authentication failed: %s key '%s'", ss->peer,
                a->key ? "wrong proof for" : a->hello_seen ? "unknown" : "no name for",
                a->name);
        res->status = RFS_E_AUTH;
        return -EACCES;
    }
    /* Opened per connection: a root made or moved after start counts. */
    if (a->key->root && (ss->key_root_fd = rfs_path_open_dir(ss->root_fd, a->key->root)) < 0) {
        rfs_log(RFS_LOG_ERROR, "%s: key '%s': root=%s: %s", ss->peer, a->name, a->key->root,
                strerror(-ss->key_root_fd));
        res->status = RFS_E_IO;
        return -EIO;
    }
    a->done = 1;
    ss->read_only = a->key->read_only;
    if (a->key->root)
        ss->root_fd = ss->key_root_fd;
    rfs_log(RFS_LOG_INFO, "%s: authenticated with key '%s'%s", ss->peer, a->name,
            ss->read_only ? " (read-only)" : "");
    rfs_auth_mac(a->key, 'S', a->client_nonce, a->server_nonce, binding, blen, ss->buf);
    res->data_len = RFS_AUTH_MAC;
    return 0;
}

/* AUTH on a server without keys is a request it cannot serve (the client
 * then knows the server does not authenticate); once done, it is not
 * repeated. */
static int do_auth(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    if (!ss->server->keys || ss->auth.done) {
        res->status = RFS_E_INVAL;
        return 0;
    }
    if (r->flags == RFS_AUTH_HELLO) {
        auth_hello(ss, r, res);
        return 0;
    }
    return auth_proof(ss, res);
}

static int send_reply(struct rfs_session *ss, uint16_t op, uint32_t tag,
                      const struct rfs_result *res)
{
    uint8_t hbuf[RFS_HDR_SIZE], fbuf[RFS_REP_FIXED];
    struct rfs_hdr h = {
        .magic = RFS_MAGIC, .version = RFS_VERSION, .op = (uint16_t) (op | RFS_REPLY),
        .tag = tag, .status = res->status, .len = RFS_REP_FIXED + res->data_len
    };
    rfs_hdr_encode(&h, hbuf);
    rfs_rep_encode(&res->rep, fbuf);
    struct iovec iov[3] = { { hbuf, sizeof hbuf }, { fbuf, sizeof fbuf },
                            { ss->buf, (size_t) res->data_len } };
    return net_writev(ss->conn, iov, res->data_len ? 3 : 2);
}

/* The most reply data a read may bring (0 for other requests). A striped
 * VREAD brings only this object's share of its window: do_view_io checks
 * that once it knows it. */
static uint64_t reply_bound(const struct rfs_session *ss, uint16_t op, const struct rfs_req *r)
{
    if (op == RFS_OP_PREAD || op == RFS_OP_LREAD ||
        (op == RFS_OP_VREAD && !ss->layout[r->handle].stripes.factor))
        return r->length;
    return 0;
}

/* One request. Returns 0 to go on, 1 for an orderly end, < 0 to drop the
 * connection. */
static int serve_one(struct rfs_session *ss)
{
    uint8_t hbuf[RFS_HDR_SIZE], fbuf[RFS_REQ_FIXED];
    struct rfs_hdr h;
    struct rfs_req r;
    int rc = net_readn(ss->conn, hbuf, sizeof hbuf);
    if (rc == -ECONNRESET)
        return 1;
    if (rc < 0)
        return rc;
    if (rfs_hdr_decode(hbuf, &h) != RFS_OK) {
        rfs_log(RFS_LOG_WARN, "%s: bad magic or version (%#x, %u), closing", ss->peer,
                h.magic, h.version);
        struct rfs_result res = { .status = RFS_E_PROTO };
        if (h.magic == RFS_MAGIC)
            send_reply(ss, h.op & ~RFS_REPLY, h.tag, &res);
        return -EPROTO;
    }
    if (h.len < RFS_REQ_FIXED) {
        rfs_log(RFS_LOG_WARN, "%s: short request (%llu bytes), closing", ss->peer,
                (unsigned long long) h.len);
        struct rfs_result res = { .status = RFS_E_PROTO };
        send_reply(ss, h.op, h.tag, &res);
        return -EPROTO;
    }
    rc = net_readn(ss->conn, fbuf, sizeof fbuf);
    if (rc < 0)
        return rc;
    rfs_req_decode(fbuf, &r);

    struct rfs_result res = { .status = rfs_req_validate(&h, &r) };
    uint64_t var = h.len - RFS_REQ_FIXED;
    /* A read whose reply would not fit this server's buffer is refused like
     * one over the protocol's limit; the connection goes on. */
    if (res.status == RFS_OK && reply_bound(ss, h.op, &r) > ss->server->max_data)
        res.status = RFS_E_TOOBIG;
    if (res.status == RFS_E_PROTO || var > ss->server->max_data) {
        rfs_log(RFS_LOG_WARN, "%s: malformed %s request: %s, closing", ss->peer,
                rfs_op_name(h.op), rfs_status_str(res.status ? res.status : RFS_E_TOOBIG));
        if (res.status == RFS_OK)
            res.status = RFS_E_TOOBIG;
        send_reply(ss, h.op, h.tag, &res);
        return -EPROTO;
    }
    /* Nothing of an unauthenticated request is read, let alone done. */
    if (!ss->auth.done && h.op != RFS_OP_AUTH) {
        rfs_log(RFS_LOG_WARN, "%s: %s request without authentication, closing", ss->peer,
                rfs_op_name(h.op));
        res = (struct rfs_result) { .status = RFS_E_AUTH };
        send_reply(ss, h.op, h.tag, &res);
        return -EACCES;
    }
    if (res.status == RFS_OK && h.op == RFS_OP_PWRITE && var >= RFS_ZEROCOPY_MIN &&
        ss->conn->transport->recv_to_file) {
        rc = pwrite_direct(ss, &r, &res);
        if (rc == 0 && ss->server->rate)
            rfs_rate_take(ss->server->rate, RFS_HDR_SIZE + h.len);
        return rc < 0 ? rc : send_reply(ss, h.op, h.tag, &res);
    }
    if (var > 0) {
        if (ensure_buf(ss, var) < 0)
            return -ENOMEM;
        rc = net_readn(ss->conn, ss->buf, (size_t) var);
        if (rc < 0)
            return rc;
    }
    if (res.status == RFS_OK && (h.op == RFS_OP_OPEN || h.op == RFS_OP_UNLINK))
        res.status = rfs_path_validate((const char *) ss->buf, var);
    if (res.status == RFS_OK && h.op == RFS_OP_AUTH) {
        rc = do_auth(ss, &r, &res);
        if (rc < 0) {
            send_reply(ss, h.op, h.tag, &res);
            return rc;
        }
    } else if (res.status == RFS_OK)
        dispatch(ss, h.op, &r, var, &res);
    else
        rfs_log(RFS_LOG_INFO, "%s: %s refused: %s", ss->peer, rfs_op_name(h.op),
                rfs_status_str(res.status));
    if (res.status != RFS_OK)
        res.data_len = 0;
    if (ss->server->rate)
        rfs_rate_take(ss->server->rate, RFS_HDR_SIZE + h.len + res.data_len);
    if (!ss->coll_joined)
        return send_reply(ss, h.op, h.tag, &res);
    /* A collective call's replies go out in its schedule. */
    const struct rfs_layout *l = &ss->layout[r.handle];
    rfs_coll_wait_turn(ss->server->coll, &ss->coll_now, l->stripes.factor ? l->index : 0,
                       ss->server->coll_timeout_ms);
    rc = send_reply(ss, h.op, h.tag, &res);
    rfs_coll_leave(ss->server->coll, &ss->coll_now);
    ss->coll_joined = 0;
    return rc;
}

int rfs_serve_connection(const struct rfs_server *s, struct net_conn *conn, const char *peer)
{
    struct rfs_session ss = { .server = s, .conn = conn, .peer = peer, .root_fd = s->root_fd,
                              .key_root_fd = -1, .auth.done = !s->keys };
    for (int i = 0; i < RFS_MAX_HANDLES; i++)
        ss.fd[i] = -1;
    int rc;
    while ((rc = serve_one(&ss)) == 0)
        ;
    for (int i = 0; i < RFS_MAX_HANDLES; i++) {
        if (ss.fd[i] >= 0)
            close(ss.fd[i]);
        dtype_free(ss.view[i]);
    }
    if (ss.key_root_fd >= 0)
        close(ss.key_root_fd);
    free(ss.buf);
    return rc == 1 ? 0 : rc;
}
