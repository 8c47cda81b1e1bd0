/*
 * The request engine of rfsd: serves rfs protocol requests on one
 * connection against files under an export root. One call of
 * rfs_serve_connection per connection, each in its own thread; the engine
 * itself keeps no shared mutable state but the optional rate limit. No MPI here.
 */
#ifndef RFS_SERVER_H_INCLUDED
#define RFS_SERVER_H_INCLUDED

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/net.h"
#include "proto/rfs_auth.h"

/* A link of limited bandwidth, shared by all connections (--rate-limit). */
struct rfs_rate {
    pthread_mutex_t mu;
    double bytes_per_s;
    double busy_until;          /* when the bytes taken so far have crossed */
};
void rfs_rate_init(struct rfs_rate *r, double bytes_per_s);
/* Blocks until `bytes` more have crossed the link. */
void rfs_rate_take(struct rfs_rate *r, uint64_t bytes);

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

/* pread or pwrite all of [off, off + len) of fd (a read stops at end of
 * file); returns the bytes moved or -errno. */
int64_t rfs_move_run(int fd, int is_write, uint8_t *p, int64_t off, int64_t len);

/* Path confinement: open or unlink PATH (leading '/' ignored) strictly
 * beneath root_fd; '..' or a symlink leading outside gives -EXDEV. */
int rfs_path_open(int root_fd, const char *path, int oflags, mode_t mode);
/* The same for a directory, as an O_PATH descriptor. */
int rfs_path_open_dir(int root_fd, const char *path);
int rfs_path_unlink(int root_fd, const char *path);
/* openat2 is used where the kernel has it; 0 forces the portable walk
 * (for tests). */
void rfs_path_use_openat2(int on);

#endif /* RFS_SERVER_H_INCLUDED */
