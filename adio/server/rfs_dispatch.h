/*
 * The request engine's dispatch: one validated request (its data read
 * into the session's buffer) to the operation that serves it, with the
 * handle and access mode checked first. Internal to adio/server.
 * No MPI here.
 */
#ifndef RFS_DISPATCH_H_INCLUDED
#define RFS_DISPATCH_H_INCLUDED

#include "server/rfs_session.h"

/* var: the request's data bytes. */
void rfs_dispatch(struct rfs_session *ss, uint16_t op, const struct rfs_req *r, uint64_t var,
                  struct rfs_result *res);

#endif /* RFS_DISPATCH_H_INCLUDED */
