/*
 * The request engine of rfsd: serves rfs protocol requests on one
 * connection against files under an export root, request by request
 * (rfs_session_*: rfs_loop.h serves thousands of connections with a few
 * threads) or a whole connection in one call (rfs_serve_connection). The
 * engine keeps no shared mutable state but the optional rate limit and
 * the collective table. No MPI here.
 */
#ifndef RFS_SERVER_H_INCLUDED
#define RFS_SERVER_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "proto/rfs_auth.h"
#include "server/rfs_rate.h"

struct rfs_server {
    int root_fd;                /* O_PATH directory of the export root */
    struct rfs_rate *rate;      /* NULL: no limit */
    /* Data bytes of one request or reply, at most RFS_MAX_DATA (the
     * default): a connection's buffer never grows past it (--max-data). */
    uint64_t max_data;
    /* With keys, a connection is served once it proved one (rfs_auth.h). */
    const struct rfs_keyring *keys;
    /* Disk-directed collective calls (rfs_coll.h); NULL: COLL is refused.
     * A call waits this long for a missing participant. */
    struct rfs_coll_table *coll;
    int coll_timeout_ms;
    /* Extent leases (rfs_lease.h), made by rfs_server_init: a request on
     * leased bytes waits at most this long for their holder's drain. */
    struct rfs_lease_table *leases;
    int lease_timeout_ms;
};

#define RFS_LEASE_TIMEOUT_MS_DEFAULT 60000

/* 0 or a negative errno (root missing, not a directory, no memory ...). */
int rfs_server_init(struct rfs_server *s, const char *root);
void rfs_server_fini(struct rfs_server *s);
/* Check that the root of every key exists beneath the export root: 0, or
 * a negative errno and a message in err. */
int rfs_server_check_keys(const struct rfs_server *s, char *err, size_t errlen);

/*
 * One connection's state: its open files, views, locks and authentication.
 * rfs_session_new returns NULL when out of memory; peer names the client
 * in logs and must outlive the session.
 */
struct rfs_session;
struct rfs_session *rfs_session_new(const struct rfs_server *s, struct net_conn *conn,
                                    const char *peer);
/* Read one request, perform it and answer: 0, 1 when the peer closed the
 * connection in order, or a negative errno when the connection must end. */
int rfs_session_serve_one(struct rfs_session *ss);
/* Whether the client may be served (with keys: it proved one). */
int rfs_session_authenticated(const struct rfs_session *ss);
/* Between requests: give back the request buffer, so that an idle
 * connection holds no data memory. */
void rfs_session_idle(struct rfs_session *ss);
/* Close the files the peer left open (which drops its locks), free. */
void rfs_session_free(struct rfs_session *ss);

/*
 * Serve requests until the peer closes the connection, the stream turns
 * out malformed, or the transport fails. Files the peer left open are
 * closed, which also drops its locks. `peer` names the client in logs.
 * Returns 0 for an orderly end, a negative errno otherwise.
 */
int rfs_serve_connection(const struct rfs_server *s, struct net_conn *conn, const char *peer);

#endif /* RFS_SERVER_H_INCLUDED */
