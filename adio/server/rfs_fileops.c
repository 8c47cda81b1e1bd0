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
    ss->fd[r->handle] = fd;
    ss->accmode[r->handle] = r->flags & RFS_O_ACCMODE;
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
    int fd = ss->fd[r->handle];
    if (fd < 0 || !rfs_writable(ss->accmode[r->handle])) {
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
