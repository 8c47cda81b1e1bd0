/*
 * The state of one connection of rfsd's request engine, shared by its
 * parts: framing (rfs_frame.c), dispatch (rfs_dispatch.c), file operations
 * (rfs_fileops.c), view and list I/O (rfs_view_io.c) and authentication
 * (rfs_server_auth.c). Internal to adio/server. No MPI here.
 */
#ifndef RFS_SESSION_H_INCLUDED
#define RFS_SESSION_H_INCLUDED

#include <stdint.h>

#include "dtype/dtype.h"
#include "proto/rfs_auth.h"
#include "proto/rfs_proto.h"
#include "server/rfs_coll.h"
#include "server/rfs_lease.h"
#include "server/rfs_server.h"
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
        char name[RFS_AUTH_MAX_NAME + 1];
        uint8_t client_nonce[RFS_AUTH_NONCE], server_nonce[RFS_AUTH_NONCE];
    } auth;
    int fd[RFS_MAX_HANDLES];            /* -1: free */
    uint32_t accmode[RFS_MAX_HANDLES];  /* RFS_O_RDONLY/WRONLY/RDWR */
    struct rfs_lease_file file[RFS_MAX_HANDLES];    /* the handle's file, for leases */
    int drains[RFS_MAX_HANDLES];        /* LEASE DRAIN: its I/O lands leased writes */
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

/* Grow the session's buffer to len bytes, never past the server's
 * max_data: 0 or -ENOMEM. */
int rfs_session_reserve(struct rfs_session *ss, uint64_t len);

static inline int rfs_writable(uint32_t accmode)
{
    return accmode != RFS_O_RDONLY;
}

/* The protocol status of an errno, either sign. */
static inline int rfs_status_of_errno(int err)
{
    return rfs_status_from_errno(err < 0 ? -err : err);
}

#endif /* RFS_SESSION_H_INCLUDED */
