/*
 * The request engine's dispatch (rfs_dispatch.h): which operation serves
 * which request, and what access to the handle it needs.
 */
#include "server/rfs_dispatch.h"

#include "server/rfs_fileops.h"
#include "server/rfs_nsops.h"
#include "server/rfs_view_io.h"

/* Reads need a handle opened for reading, writes one opened for writing. */
static int access_allows(uint16_t op, uint32_t acc)
{
    switch (op) {
    case RFS_OP_PREAD:
    case RFS_OP_VREAD:
    case RFS_OP_LREAD:
        return acc != RFS_O_WRONLY;
    case RFS_OP_PWRITE:
    case RFS_OP_VWRITE:
    case RFS_OP_LWRITE:
    case RFS_OP_FTRUNCATE:
    case RFS_OP_PREALLOC:
    case RFS_OP_LEASE:
        return rfs_writable(acc);
    default:
        return 1;
    }
}

/* A request on the open handle r->handle (fd), its access checked. */
static void on_handle(struct rfs_session *ss, uint16_t op, int fd, const struct rfs_req *r,
                      uint64_t var, struct rfs_result *res)
{
    switch (op) {
    case RFS_OP_CLOSE:
        rfs_file_close(ss, r->handle, res);
        break;
    case RFS_OP_PREAD:
    case RFS_OP_PWRITE:
        rfs_file_contig_io(ss, fd, op == RFS_OP_PWRITE, r, res);
        break;
    case RFS_OP_FSTAT:
        rfs_file_stat(fd, res);
        break;
    case RFS_OP_FTRUNCATE:
        rfs_file_truncate(ss, fd, r, res);
        break;
    case RFS_OP_FSYNC:
        rfs_file_sync(fd, res);
        break;
    case RFS_OP_PREALLOC:
        rfs_file_prealloc(fd, r, res);
        break;
    case RFS_OP_LOCK:
        rfs_file_lock(fd, r, res);
        break;
    case RFS_OP_LEASE:
        rfs_file_lease(ss, r, res);
        break;
    case RFS_OP_SETVIEW:
        rfs_view_set(ss, r, res);
        break;
    case RFS_OP_VREAD:
    case RFS_OP_VWRITE:
        rfs_view_io(ss, fd, op == RFS_OP_VWRITE, r, var, res);
        break;
    case RFS_OP_LAYOUT:
        rfs_view_layout(ss, r);
        break;
    case RFS_OP_COLL:
        rfs_view_coll(ss, r, res);
        break;
    case RFS_OP_LREAD:
    case RFS_OP_LWRITE:
        rfs_list_io(ss, fd, op == RFS_OP_LWRITE, r, res);
        break;
    default:
        res->status = RFS_E_PROTO;
        break;
    }
}

void rfs_dispatch(struct rfs_session *ss, uint16_t op, const struct rfs_req *r, uint64_t var,
                  struct rfs_result *res)
{
    if (op == RFS_OP_OPEN) {
        rfs_file_open(ss, r, res);
        return;
    }
    if (op == RFS_OP_UNLINK) {
        rfs_file_unlink(ss, r, res);
        return;
    }
    if (rfs_op_is_ns(op)) {
        rfs_ns_op(ss, op, r, res);
        return;
    }
    int fd = ss->fd[r->handle];
    if (fd < 0) {
        res->status = RFS_E_BADF;
        return;
    }
    if (!access_allows(op, ss->accmode[r->handle]))
        res->status = RFS_E_BADF;
    else if ((res->status = rfs_file_lease_wait(ss, op, r)) == RFS_OK)
        on_handle(ss, op, fd, r, var, res);
    /* A COLL goes with the next data request only, also one refused before
     * it reached the collective call. */
    if (op == RFS_OP_VREAD || op == RFS_OP_VWRITE || op == RFS_OP_LREAD || op == RFS_OP_LWRITE)
        ss->coll_set[r->handle] = 0;
}
