/*
 * The request engine's operations on whole files and contiguous runs
 * (rfs_fileops.h), on files beneath the session's root.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_fileops.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/wire_le.h"
#include "server/rfs_log.h"
#include "server/rfs_move.h"
#include "server/rfs_path.h"

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

void rfs_file_stat(int fd, struct rfs_result *res)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        res->status = rfs_status_of_errno(errno);
        return;
    }
    res->rep.value = (uint64_t) st.st_size;
    res->rep.blksize = st.st_blksize > 0 ? (uint32_t) st.st_blksize : 4096;
}

void rfs_file_open(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
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
        res->status = rfs_status_of_errno(fd);
        rfs_log(RFS_LOG_INFO, "%s: open %s: %s", ss->peer, path, rfs_status_str(res->status));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        res->status = rfs_status_of_errno(errno);
        close(fd);
        return;
    }
    ss->fd[r->handle] = fd;
    ss->accmode[r->handle] = r->flags & RFS_O_ACCMODE;
    ss->file[r->handle] = (struct rfs_lease_file) { (uint64_t) st.st_dev, (uint64_t) st.st_ino };
    ss->drains[r->handle] = 0;
    rfs_file_stat(fd, res);
    rfs_log(RFS_LOG_DEBUG, "%s: open %s as handle %u", ss->peer, path, r->handle);
}

void rfs_file_unlink(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    char path[RFS_MAX_PATH + 1];
    memcpy(path, ss->buf, r->aux);
    path[r->aux] = '\0';
    res->status = ss->read_only ? RFS_E_ACCES
                                : rfs_status_of_errno(rfs_path_unlink(ss->root_fd, path));
    rfs_log(RFS_LOG_DEBUG, "%s: unlink %s: %s", ss->peer, path, rfs_status_str(res->status));
}

void rfs_file_close(struct rfs_session *ss, uint32_t handle, struct rfs_result *res)
{
    int fd = ss->fd[handle];
    rfs_lease_drop(ss->server->leases, &ss->file[handle]);
    ss->fd[handle] = -1;
    ss->coll_set[handle] = 0;
    dtype_free(ss->view[handle]);
    ss->view[handle] = NULL;
    ss->layout[handle].stripes.factor = 0;
    if (close(fd) < 0)
        res->status = rfs_status_of_errno(errno);
}

void rfs_file_contig_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
                        struct rfs_result *res)
{
    if (!is_write && rfs_session_reserve(ss, r->length) < 0) {
        res->status = RFS_E_NOMEM;
        return;
    }
    if (is_write)
        rfs_coll_invalidate(ss->server->coll, fd, (int64_t) r->offset, (int64_t) r->length);
    int64_t done = rfs_move_run(fd, is_write, ss->buf, (int64_t) r->offset, (int64_t) r->length);
    if (done < 0)
        res->status = rfs_status_of_errno((int) -done);
    else if (is_write)
        res->rep.value = (uint64_t) done;
    else
        res->data_len = (uint64_t) done;
}

int rfs_file_pwrite_direct(struct rfs_session *ss, const struct rfs_req *r,
                           struct rfs_result *res)
{
    int fd = res->status == RFS_OK ? ss->fd[r->handle] : -1;
    if (res->status == RFS_OK && (fd < 0 || !rfs_writable(ss->accmode[r->handle]))) {
        res->status = RFS_E_BADF;
        fd = -1;
    }
    if (fd >= 0)
        rfs_coll_invalidate(ss->server->coll, fd, (int64_t) r->offset, (int64_t) r->length);
    int rc = ss->conn->transport->recv_to_file(ss->conn, fd, r->offset, r->length);
    if (rc < 0)
        return rc;
    if (res->status == RFS_OK && rc > 0)
        res->status = rfs_status_of_errno(rc);
    if (res->status == RFS_OK)
        res->rep.value = r->length;
    return 0;
}

void rfs_file_truncate(struct rfs_session *ss, int fd, const struct rfs_req *r,
                       struct rfs_result *res)
{
    rfs_coll_invalidate(ss->server->coll, fd, 0, INT64_MAX);
    if (ftruncate(fd, (off_t) r->length) < 0)
        res->status = rfs_status_of_errno(errno);
}

void rfs_file_sync(int fd, struct rfs_result *res)
{
    if (fsync(fd) < 0)
        res->status = rfs_status_of_errno(errno);
}

void rfs_file_prealloc(int fd, const struct rfs_req *r, struct rfs_result *res)
{
    if (r->length > 0)
        res->status = rfs_status_of_errno(posix_fallocate(fd, (off_t) r->offset,
                                                          (off_t) r->length));
}

void rfs_file_lock(int fd, const struct rfs_req *r, struct rfs_result *res)
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
        res->status = rfs_status_of_errno(errno);
}

void rfs_file_lease(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    uint32_t h = r->handle;
    if (r->flags == RFS_LEASE_DRAIN) {
        ss->drains[h] = 1;
        return;
    }
    struct rfs_lease_take l = {
        .owner = le_get64(ss->buf), .id = le_get64(ss->buf + 8), .call = le_get64(ss->buf + 16),
        .lo = r->offset, .hi = r->offset + r->length, .taker = &ss->file[h],
    };
    if (r->flags == RFS_LEASE_RELEASE)
        rfs_lease_release(ss->server->leases, &ss->file[h], l.owner, l.id);
    else if (l.owner == 0)
        res->status = RFS_E_INVAL;      /* no owner's token: a plain access's mark */
    else if (r->length > 0)             /* a striped file's object may have no share */
        res->status = rfs_lease_take(ss->server->leases, &ss->file[h], &l,
                                     ss->server->lease_timeout_ms);
}

/* The bytes a list request's pairs (in ss->buf) touch, first to last. */
static void list_span(const struct rfs_session *ss, const struct rfs_req *r, uint64_t *lo,
                      uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (uint32_t i = 0; i < r->aux; i++) {
        uint64_t off, len;
        rfs_pair_decode(ss->buf + (size_t) i * RFS_PAIR_SIZE, &off, &len);
        if (len == 0)
            continue;
        uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;    /* refused later */
        *lo = off < *lo ? off : *lo;
        *hi = end > *hi ? end : *hi;
    }
}

int rfs_file_lease_wait(struct rfs_session *ss, uint16_t op, const struct rfs_req *r)
{
    uint64_t lo = r->offset, hi = r->offset + r->length;
    if (ss->fd[r->handle] < 0 || ss->drains[r->handle])
        return RFS_OK;
    switch (op) {
    case RFS_OP_PREAD:
    case RFS_OP_PWRITE:
        break;
    case RFS_OP_FTRUNCATE:
        lo = r->length;
        hi = UINT64_MAX;
        break;
    case RFS_OP_LREAD:
    case RFS_OP_LWRITE:
        list_span(ss, r, &lo, &hi);
        break;
    case RFS_OP_VREAD:
    case RFS_OP_VWRITE:
        /* what a view reaches is known only while it is walked: all of it */
        lo = 0;
        hi = UINT64_MAX;
        break;
    default:
        return RFS_OK;
    }
    if (lo >= hi)
        return RFS_OK;
    int rc = rfs_lease_wait(ss->server->leases, &ss->file[r->handle], lo, hi,
                            ss->server->lease_timeout_ms);
    /* a write or truncation goes on over bytes whose holder went */
    if (rc == RFS_E_LOST && op != RFS_OP_PREAD && op != RFS_OP_LREAD && op != RFS_OP_VREAD)
        rc = RFS_OK;
    if (rc != RFS_OK)
        rfs_log(RFS_LOG_WARN, "%s: %s of bytes %llu..%llu: %s", ss->peer, rfs_op_name(op),
                (unsigned long long) lo, (unsigned long long) hi, rfs_status_str(rc));
    return rc;
}
