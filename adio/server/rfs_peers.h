/*
 * Connections per client address, for rfsd's --max-per-address: so that
 * one host that floods the server takes at most that many of its
 * connections and the other hosts' clients still get in. An IPv4 address
 * and the same address mapped into IPv6 are one. Not thread-safe: the
 * loop calls it under its lock. No MPI here.
 */
#ifndef RFS_PEERS_H_INCLUDED
#define RFS_PEERS_H_INCLUDED

#include <stdint.h>
#include <sys/socket.h>

/* An address as the table keys it (IPv6, IPv4 mapped). */
struct rfs_peer_addr {
    uint8_t b[16];
};

struct rfs_peers;

/* max_per_addr >= 1. 0 or -ENOMEM. */
int rfs_peers_new(int max_per_addr, struct rfs_peers **out);
void rfs_peers_free(struct rfs_peers *p);
/* The key of a peer's address; -EAFNOSUPPORT for other families. */
int rfs_peer_addr_of(const struct sockaddr_storage *ss, struct rfs_peer_addr *out);
/* 1 and counted if `a` has fewer than max_per_addr connections, else 0;
 * -ENOMEM. */
int rfs_peers_take(struct rfs_peers *p, const struct rfs_peer_addr *a);
/* One connection of `a` ended. */
void rfs_peers_give(struct rfs_peers *p, const struct rfs_peer_addr *a);

#endif /* RFS_PEERS_H_INCLUDED */
