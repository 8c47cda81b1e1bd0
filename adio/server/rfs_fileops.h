/*
 * The request engine's operations on whole files and contiguous runs:
 * OPEN, UNLINK, CLOSE, FSTAT, PREAD/PWRITE, FTRUNCATE, FSYNC, PREALLOC,
 * LOCK, LEASE. Each sets the status and reply of res. Internal to adio/server.
 * No MPI here.
 */
#ifndef RFS_FILEOPS_H_INCLUDED
#define RFS_FILEOPS_H_INCLUDED

#include "server/rfs_session.h"

/* The path is the request's data, checked by rfs_path_validate. */
void rfs_file_open(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res);
void rfs_file_unlink(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res);
/* Frees the handle with its view, layout and pending COLL. */
void rfs_file_close(struct rfs_session *ss, uint32_t handle, struct rfs_result *res);
void rfs_file_stat(int fd, struct rfs_result *res);
/* PREAD/PWRITE: one run of the file (a read stops at end of file). */
void rfs_file_contig_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
                        struct rfs_result *res);
/* A large PWRITE from the socket to the file in the kernel; the data is
 * consumed even when the write cannot be done (or res already failed it).
 * < 0: stream failure. */
int rfs_file_pwrite_direct(struct rfs_session *ss, const struct rfs_req *r,
                           struct rfs_result *res);
void rfs_file_truncate(struct rfs_session *ss, int fd, const struct rfs_req *r,
                       struct rfs_result *res);
void rfs_file_sync(int fd, struct rfs_result *res);
void rfs_file_prealloc(int fd, const struct rfs_req *r, struct rfs_result *res);
void rfs_file_lock(int fd, const struct rfs_req *r, struct rfs_result *res);
/* LEASE (rfs_lease.h): its data is in ss->buf. */
void rfs_file_lease(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res);
/* Before a data request `op` on its handle (a list request's pairs in
 * ss->buf): waits while others' leases hold the bytes it touches (not on
 * a handle that drains leased writes). RFS_OK, RFS_E_HELD, or RFS_E_LOST
 * for a read whose wait ended because the holder went. */
int rfs_file_lease_wait(struct rfs_session *ss, uint16_t op, const struct rfs_req *r);

#endif /* RFS_FILEOPS_H_INCLUDED */
