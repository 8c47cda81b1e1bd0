/*
 * The request engine's noncontiguous I/O: a handle's file view (SETVIEW),
 * its stripe layout (LAYOUT), the collective call a request joins (COLL),
 * and the view and list accesses (VREAD/VWRITE, LREAD/LWRITE). Each sets
 * the status and reply of res. Internal to adio/server. No MPI here.
 */
#ifndef RFS_VIEW_IO_H_INCLUDED
#define RFS_VIEW_IO_H_INCLUDED

#include "server/rfs_session.h"

void rfs_view_set(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res);
void rfs_view_layout(struct rfs_session *ss, const struct rfs_req *r);
/* The handle's next V* or L* request takes part in this collective call. */
void rfs_view_coll(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res);
/* data_len: the request's data bytes (a write's). */
void rfs_view_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
                 uint64_t data_len, struct rfs_result *res);
void rfs_list_io(struct rfs_session *ss, int fd, int is_write, const struct rfs_req *r,
                 struct rfs_result *res);

#endif /* RFS_VIEW_IO_H_INCLUDED */
