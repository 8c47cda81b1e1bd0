/*
 * The request engine's operations on whole files and contiguous runs:
 * OPEN, UNLINK, CLOSE, FSTAT, PREAD/PWRITE, FTRUNCATE, FSYNC, PREALLOC,
 * LOCK. Each sets the status and reply of res. Internal to adio/server.
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
 * consumed even when the write cannot be done. < 0: stream failure. */
int rfs_file_pwrite_direct(struct rfs_session *ss, const struct rfs_req *r,
                           struct rfs_result *res);
void rfs_file_truncate(struct rfs_session *ss, int fd, const struct rfs_req *r,
                       struct rfs_result *res);
void rfs_file_sync(int fd, struct rfs_result *res);
void rfs_file_prealloc(int fd, const struct rfs_req *r, struct rfs_result *res);
void rfs_file_lock(int fd, const struct rfs_req *r, struct rfs_result *res);

#endif /* RFS_FILEOPS_H_INCLUDED */
