/*
 * The request engine's framing: read one request off the connection,
 * check its header and fixed part before any of its data is read, and
 * send the reply (in a collective call's schedule where it joined one).
 * Internal to adio/server. No MPI here.
 */
#ifndef RFS_FRAME_H_INCLUDED
#define RFS_FRAME_H_INCLUDED

#include "server/rfs_session.h"

/* One request. Returns 0 to go on, 1 for an orderly end, < 0 to drop the
 * connection. */
int rfs_frame_serve_one(struct rfs_session *ss);

#endif /* RFS_FRAME_H_INCLUDED */
