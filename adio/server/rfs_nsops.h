/*
 * The request engine's namespace operations (the protocol's namespace
 * extension): STAT, READDIR, MKDIR, RMDIR, RENAME and SETATTR, by path
 * beneath the session's root. Each sets the status, reply and data of
 * res. Internal to adio/server. No MPI here.
 */
#ifndef RFS_NSOPS_H_INCLUDED
#define RFS_NSOPS_H_INCLUDED

#include "server/rfs_session.h"

/* The path (or RENAME's two) is the request's data, checked by
 * rfs_path_validate. */
void rfs_ns_op(struct rfs_session *ss, uint16_t op, const struct rfs_req *r,
               struct rfs_result *res);

#endif /* RFS_NSOPS_H_INCLUDED */
