/*
 * Extent leases (docs/protocol.md "Leases"): a client that holds writes
 * buffered (abt: over rfs: or rdma:) tells the server which byte ranges of
 * a file they will land in before its write call returns; until its drain
 * releases them, a read, a write or a truncation of those bytes by anyone
 * else waits, and so does another owner's lease on them. So the order a
 * library builds with "my write is in the file when the call returns" and
 * a barrier holds while the data is still in the writer's memory (Lustre's
 * extent locks over client write-back caches give the same).
 *
 * Leases belong to an owner (a 64-bit token the client draws for one open
 * file) and are numbered by it in the order of its writes; a release drops
 * the owner's leases up to a number. A lease is dropped too when the
 * handle it was taken through closes (the holder is gone: what it still
 * held is lost with it, and a read that waited for it fails with
 * RFS_E_LOST rather than return the old bytes). Waits are bounded: past
 * the timeout the request fails with RFS_E_HELD. One table per server, shared by all connections.
 * Internal to adio/server. No MPI here.
 */
#ifndef RFS_LEASE_H_INCLUDED
#define RFS_LEASE_H_INCLUDED

#include <stdint.h>

/* A file as the server's file system knows it (st_dev, st_ino). */
struct rfs_lease_file {
    uint64_t dev, ino;
};

struct rfs_lease_table;

/* 0 or -ENOMEM. */
int rfs_lease_table_new(struct rfs_lease_table **t);
void rfs_lease_table_free(struct rfs_lease_table *t);
/* Every wait under way ends at once (RFS_E_HELD): the server stops. */
void rfs_lease_table_stop(struct rfs_lease_table *t);

/*
 * owner's lease `id` on [lo, hi) of f, taken through `taker` (a handle of
 * a connection: rfs_lease_drop ends it), once no other owner holds any of
 * those bytes (but under a lease of the same collective call, not 0):
 * RFS_OK, RFS_E_HELD after timeout_ms, or RFS_E_NOMEM.
 */
struct rfs_lease_take {
    uint64_t owner, id, call, lo, hi;
    const void *taker;
};
int rfs_lease_take(struct rfs_lease_table *t, const struct rfs_lease_file *f,
                   const struct rfs_lease_take *l, int timeout_ms);
/* owner's drain has landed the writes of its leases up to `upto`. */
void rfs_lease_release(struct rfs_lease_table *t, const struct rfs_lease_file *f,
                       uint64_t owner, uint64_t upto);
/* The leases taken through `taker` (its handle closed): its holder is
 * gone before they were released, so what they held never landed. */
void rfs_lease_drop(struct rfs_lease_table *t, const void *taker);
/* Waits until nobody holds a lease on any byte of [lo, hi) of f: RFS_OK,
 * RFS_E_HELD after timeout_ms, or RFS_E_LOST when a lease it waited for
 * ended with its holder (the bytes it held are not in the file). Returns
 * at once where no lease lives. */
int rfs_lease_wait(struct rfs_lease_table *t, const struct rfs_lease_file *f, uint64_t lo,
                   uint64_t hi, int timeout_ms);

#endif /* RFS_LEASE_H_INCLUDED */
