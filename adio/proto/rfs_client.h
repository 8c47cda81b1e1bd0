/*
 * The client side of the rfs protocol: one synchronous call per request
 * over a stream transport (net.h). No MPI here.
 *
 * Every call returns 0 on success, a positive enum rfs_status the server
 * answered, or a negative errno value when the transport failed (then the
 * client is unusable: every later call returns -ENOTCONN). A server at its
 * connection limit refuses the connection: the first call returns
 * RFS_E_BUSY, and the client is unusable as after a transport failure.
 *
 * Piggybacking (the RFS paper's deferred open and close): rfs_open_deferred
 * queues an OPEN that goes out in the same write as the next request;
 * rfs_close_nowait sends a CLOSE whose reply is skipped later.
 */
#ifndef RFS_CLIENT_H_INCLUDED
#define RFS_CLIENT_H_INCLUDED

#include <stdint.h>
#include <sys/uio.h>

#include "net/net.h"
#include "proto/rfs_auth.h"
#include "proto/rfs_proto.h"

/* What crossed the connection, headers included. */
struct rfs_client_stats {
    uint64_t requests;
    uint64_t bytes_out, bytes_in;
};

struct rfs_client {
    struct net_conn *conn;
    struct rfs_client_stats stats;
    uint32_t next_tag;
    int broken;                 /* negative errno of the failure, RFS_E_BUSY if the
                                 * server refused the connection, or 0 */
    const char *why;            /* what went wrong setting up TLS or authentication */
    uint32_t unread_replies;    /* replies of nowait requests still in the stream */
    /* a deferred OPEN, sent with the next request */
    int open_pending;
    struct rfs_req open_req;
    char *open_path;
    int open_status;            /* result of the last deferred OPEN once sent */
    struct rfs_rep open_rep;
    /* the file view: queued by rfs_set_view, sent with the next request */
    int view_pending;
    struct rfs_req view_req;
    uint8_t *view_buf;          /* encoded filetype, as last queued */
    uint64_t view_len;
};

struct rfs_stat {
    uint64_t size;
    uint32_t blksize;
};

/* How to reach a server: the transport (NULL: TCP), its options, and the
 * key to authenticate with (NULL: none). */
struct rfs_connect_opts {
    const struct net_transport *transport;
    struct net_opts net;
    const struct rfs_key *key;
};

/*
 * Connect, and authenticate when a key is given (rfs_auth.h). A refused
 * key or a server that cannot prove it holds the key gives RFS_E_AUTH;
 * then, as after a TLS set-up failure, c->why says what happened. A
 * failed connect leaves nothing to close.
 */
int rfs_client_connect_with(struct rfs_client *c, const char *host, const char *port,
                            const struct rfs_connect_opts *o);
/* TCP or another transport without options, no key. */
int rfs_client_connect(struct rfs_client *c, const struct net_transport *t, const char *host,
                       const char *port, int timeout_ms);
void rfs_client_close(struct rfs_client *c);
/* 0 if calls can go on, else the failure that ended the connection (as
 * c->broken), found now if the server closed it (its --idle-timeout, or
 * it restarted) while the client was idle. */
int rfs_client_check(struct rfs_client *c);

int rfs_open(struct rfs_client *c, uint32_t handle, const char *path, uint32_t flags,
             uint32_t mode, struct rfs_stat *st);
int rfs_open_deferred(struct rfs_client *c, uint32_t handle, const char *path, uint32_t flags,
                      uint32_t mode);
int rfs_close(struct rfs_client *c, uint32_t handle);
int rfs_close_nowait(struct rfs_client *c, uint32_t handle);
/* Reads up to len bytes (any size: sent as several messages); *done gets
 * the bytes read, fewer than len only at end of file. */
int rfs_pread(struct rfs_client *c, uint32_t handle, void *buf, uint64_t len, uint64_t offset,
              uint64_t *done);
int rfs_pwrite(struct rfs_client *c, uint32_t handle, const void *buf, uint64_t len,
               uint64_t offset);
int rfs_fstat(struct rfs_client *c, uint32_t handle, struct rfs_stat *st);
int rfs_ftruncate(struct rfs_client *c, uint32_t handle, uint64_t size);
int rfs_fsync(struct rfs_client *c, uint32_t handle);
int rfs_unlink(struct rfs_client *c, const char *path);
int rfs_prealloc(struct rfs_client *c, uint32_t handle, uint64_t offset, uint64_t len);
/*
 * The file view of `handle`: displacement and encoded filetype (dtype.h
 * wire form). Queued to ride on the next request, and not sent at all if
 * the server already has this very view; a view the server refused fails
 * the request it rode on.
 */
int rfs_set_view(struct rfs_client *c, uint32_t handle, uint64_t disp, const void *enc,
                 uint64_t len);
/* Reads and writes through the view: `pos` and `len` count data bytes of
 * the view (its holes skipped), as pread and pwrite otherwise. */
int rfs_vread(struct rfs_client *c, uint32_t handle, void *buf, uint64_t len, uint64_t pos,
              uint64_t *done);
int rfs_vwrite(struct rfs_client *c, uint32_t handle, const void *buf, uint64_t len,
               uint64_t pos);
/*
 * The namespace extension (docs/protocol.md), by path. A server without it
 * answers the first such call RFS_E_PROTO and closes the connection.
 */
int rfs_stat_path(struct rfs_client *c, const char *path, struct rfs_stat_rec *st);
/* Entries of directory PATH from `index` on, at most `room` bytes of them
 * into buf (rfs_dirent_decode reads them); *next: the index to ask for
 * next; *used 0: no entry is left. */
int rfs_readdir(struct rfs_client *c, const char *path, uint64_t index, void *buf,
                uint64_t room, uint64_t *next, uint64_t *used);
int rfs_mkdir(struct rfs_client *c, const char *path, uint32_t mode);
int rfs_rmdir(struct rfs_client *c, const char *path);
/* flags: RFS_RENAME_NOREPLACE */
int rfs_rename(struct rfs_client *c, const char *from, const char *to, uint32_t flags);
/* flags: RFS_SET_*; times in ns since the epoch, as they say */
int rfs_setattr(struct rfs_client *c, const char *path, uint32_t flags, uint32_t mode,
                int64_t atime_ns, int64_t mtime_ns);
/* kind: RFS_LOCK_READ/WRITE/UNLOCK; len 0 means to the end of the file. */
int rfs_lock(struct rfs_client *c, uint32_t handle, uint32_t kind, uint64_t offset,
             uint64_t len, int wait);

/*
 * Extent leases (docs/protocol.md "Leases"): kind RFS_LEASE_TAKE holds
 * [offset, offset + length) for `owner` as its lease `id` (waiting while
 * another owner holds any of it, unless both leases belong to the same
 * collective call), RFS_LEASE_RELEASE drops the owner's leases up to
 * `id`, RFS_LEASE_DRAIN (a NULL) marks the handle as the one that lands
 * leased writes. rfs_lease_request builds the request for rfs_send, its
 * data in `data`.
 */
struct rfs_lease_args {
    uint64_t owner;             /* the owner's token */
    uint64_t id;                /* TAKE: the lease's number; RELEASE: the last released */
    uint64_t call;              /* TAKE: its collective call, alike in every process; 0: none */
    uint64_t offset, length;    /* TAKE: the bytes */
};
int rfs_lease(struct rfs_client *c, uint32_t handle, uint32_t kind,
              const struct rfs_lease_args *a);
void rfs_lease_request(uint32_t handle, uint32_t kind, const struct rfs_lease_args *a,
                       struct rfs_req *req, uint8_t data[RFS_LEASE_DATA]);

/*
 * The handle is object `index` of a file striped over `factor` objects,
 * `unit` bytes per stripe, its data from object offset `base` on: VREAD
 * and VWRITE then move only this object's share of the view's window.
 */
int rfs_set_layout(struct rfs_client *c, uint32_t handle, uint32_t index, uint32_t factor,
                   uint64_t unit, uint64_t base);

/*
 * Requests in flight on one connection: rfs_send sends a request (its
 * variable part gathered from `data`) without waiting, rfs_recv reads the
 * reply of the oldest one sent; replies come in the order of the requests.
 * A view queued by rfs_set_view goes in front of the request and a
 * refusal of it is that request's status. Not to be mixed with a deferred
 * OPEN or CLOSE (-EBUSY).
 */
struct rfs_inflight {
    uint16_t op;
    uint32_t tag;
    uint32_t view_tag;          /* SETVIEW sent in front, 0: none */
};

int rfs_send(struct rfs_client *c, uint16_t op, const struct rfs_req *req,
             const struct iovec *data, int ndata, struct rfs_inflight *out);
/* Reply data (at most in_max bytes) goes to `in`; returns as the calls above. */
int rfs_recv(struct rfs_client *c, const struct rfs_inflight *p, void *in, uint64_t in_max,
             struct rfs_rep *rep, uint64_t *in_len);

/* As rfs_recv, the reply data scattered over in[0..incnt) in order: over
 * the verbs transport straight into those segments by RDMA READ. */
int rfs_recvv(struct rfs_client *c, const struct rfs_inflight *p, const struct iovec *in,
              int incnt, struct rfs_rep *rep, uint64_t *in_len);

/* Reads and writes go as pieces of this size, this many in flight. */
#define RFS_CLIENT_PIECE  (1u << 20)
#define RFS_CLIENT_WINDOW 32

#endif /* RFS_CLIENT_H_INCLUDED */
