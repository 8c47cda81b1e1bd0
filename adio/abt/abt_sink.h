/*
 * Where buffered writes go: the inner driver's file, seen through the few
 * calls the drain needs. A sink that is thread_safe is driven by abt's
 * background thread and must not call MPI (posix, rfs); one that is not is
 * drained on the application thread (the ROMIO driver underneath itself).
 *
 * pwrite returns 0 or a negative errno value. pwrite_pieces (NULL: none)
 * writes several pieces in one call, as many pwrites would: their ranges
 * never overlap, so the sink may place them in any order; a sink whose
 * every call costs a round trip (rfs) has it. Durability (fsync) is the
 * inner driver's Flush, after abt_flush: both reach the same file.
 */
#ifndef ABT_SINK_H_INCLUDED
#define ABT_SINK_H_INCLUDED

#include <stdint.h>

/* Pieces of one pwrite_pieces call at most (the rfs protocol's pairs of a
 * list write). */
#define ABT_SINK_MAX_PIECES 4096

struct abt_piece {
    const void *data;
    uint64_t len, offset;
};

struct abt_sink_ops {
    const char *name;
    int thread_safe;
    int (*pwrite)(void *ctx, const void *buf, uint64_t len, uint64_t offset);
    int (*pwrite_pieces)(void *ctx, const struct abt_piece *pieces, int n);
    void (*close)(void *ctx);
    int (*release)(void *ctx, uint64_t upto);
};

struct abt_sink {
    const struct abt_sink_ops *ops;
    void *ctx;
};

/* A local file (ufs:, nfs:) opened write-only by path: it must exist. */
int abt_sink_posix_open(struct abt_sink *s, const char *path);
/* A file on rfsd HOST:PORT, over a connection of its own made as O says
 * (transport, timeout, key: those of the rfs: file it writes for). With
 * an owner (not 0) it lands and releases that owner's leases: a server
 * without leases fails the open with -EPROTO. */
struct rfs_connect_opts;
int abt_sink_rfs_open(struct abt_sink *s, const char *host, const char *port, const char *path,
                      const struct rfs_connect_opts *o, uint64_t owner);
/* A striped file (rdma:) of known layout on servers SV, over connections
 * of its own; owner as above. */
struct stripe_servers;
struct stripe_layout;
int abt_sink_stripe_open(struct abt_sink *s, const struct stripe_servers *sv, const char *path,
                         const struct stripe_layout *layout, const struct rfs_connect_opts *o,
                         uint64_t owner);

#endif /* ABT_SINK_H_INCLUDED */
