/*
 * The connections a client process's files share: one per server and set
 * of connection options, each file a handle on it (RFS_MAX_HANDLES at
 * most: the next file opens another connection). No MPI here.
 *
 * A connection lives while a file uses it. One that broke (a call timed
 * out, the server restarted, or closed it idle after its --idle-timeout)
 * is taken by no new file; each file on it moves to a new connection at
 * its next call (rfs_shared_revive), its handle opened there anew, so
 * that one file's failure or a server's return leaves the others working.
 * What the server held for the old handle is gone: its locks and view,
 * and writes not yet synced if the server's host went down. So a file
 * that holds a lock or wrote since its last sync is not moved: its calls
 * fail, as before, the sync and the close too, which tell the caller that
 * those may be lost.
 *
 * The files sharing a connection must not call at once: the drivers'
 * calls do not overlap (ROMIO runs one MPI-IO call of a process at a
 * time). TLS connections and those of callers that do not ask to share
 * are a file's own, as are those of deferred opens (the deferred OPEN's
 * status is the connection's).
 */
#ifndef RFS_SHARED_H_INCLUDED
#define RFS_SHARED_H_INCLUDED

#include <stdint.h>

#include "proto/rfs_client.h"

struct rfs_shared;

/* A file's place on a server: its connection and its handle there. */
struct rfs_shared_file {
    struct rfs_shared *conn;
    struct rfs_client *client;          /* conn's; NULL until taken */
    uint32_t handle;
    struct rfs_client_stats at_take;    /* client->stats when the file took it */
    struct rfs_client_stats before;     /* counted on connections it left */
    int unsynced;                       /* written since the last sync */
    int locks;                          /* locks held: taken less released */
    uint64_t retry_ms;                  /* a failed move: no new try before this */
};

/*
 * A connection to HOST:PORT for one more file, shared where `share` and the
 * options allow (else the file's own), and a free handle on it. `share`:
 * 0, the file's own; else shared with the files of the same value only
 * (a striped file's copies on one server take different values, so that
 * requests of one call to two of them never share a stream). Returns 0
 * or what rfs_client_connect_with returned, *why then set as c->why.
 */
int rfs_shared_take(const char *host, const char *port, const struct rfs_connect_opts *o,
                    int share, struct rfs_shared_file *out, const char **why);
/* The file's handle is free again; the last file closes the connection. */
void rfs_shared_give_back(struct rfs_shared_file *f);
/*
 * 0 if the file's connection can take calls. If it broke, and the file
 * holds no lock and wrote nothing since its last sync, a new one is taken
 * and the handle opened on it by `path` and `flags` (RFS_O_CREAT and
 * RFS_O_EXCL dropped: the file exists); on success the file moves there.
 * Else returns the failure and the file stays on the broken connection;
 * a failed move is tried again from the options' timeout (at least
 * RFS_SHARED_RETRY_MS) on, so that a hung server does not cost every
 * call its timeout.
 */
#define RFS_SHARED_RETRY_MS 1000
int rfs_shared_revive(struct rfs_shared_file *f, const char *host, const char *port,
                      const struct rfs_connect_opts *o, int share, const char *path,
                      uint32_t flags, const char **why);
/* What the file did that a lost connection may lose (see above): a write
 * (or truncate, preallocate) sent; a sync done; a lock of RFS_LOCK_* kind
 * granted, or released. */
void rfs_shared_wrote(struct rfs_shared_file *f);
void rfs_shared_synced(struct rfs_shared_file *f);
void rfs_shared_locked(struct rfs_shared_file *f, uint32_t kind);
/* What went over the file's connections since it took the first, other
 * files' requests on the same ones in between included. */
void rfs_shared_stats(const struct rfs_shared_file *f, struct rfs_client_stats *out);
/* Connections this process holds that files share. */
unsigned rfs_shared_count(void);

#endif /* RFS_SHARED_H_INCLUDED */
