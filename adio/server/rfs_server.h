/*
 * The request engine of rfsd: serves rfs protocol requests on one
 * connection against files under an export root. One call of
 * rfs_serve_connection per connection, each in its own thread; the engine
 * itself keeps no shared mutable state but the optional rate limit. No MPI here.
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
};

/* 0 or a negative errno (root missing, not a directory, ...). */
int rfs_server_init(struct rfs_server *s, const char *root);
void rfs_server_fini(struct rfs_server *s);
/* Check that the root of every key exists beneath the export root: 0, or
 * a negative errno and a message in err. */
int rfs_server_check_keys(const struct rfs_server *s, char *err, size_t errlen);

/*
 * Serve requests until the peer closes the connection, the stream turns
 * out malformed, or the transport fails. Files the peer left open are
 * closed, which also drops its locks. `peer` names the client in logs.
 * Returns 0 for an orderly end, a negative errno otherwise.
 */
int rfs_serve_connection(const struct rfs_server *s, struct net_conn *conn, const char *peer);

#endif /* RFS_SERVER_H_INCLUDED */
