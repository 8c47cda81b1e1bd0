/*
 * HOST:PORT, as the rfs: file names, $ROMIO_RFS_SERVER and the rdma:
 * server lists write a server: one grammar for all of them. No MPI here.
 */
#ifndef NET_ENDPOINT_H_INCLUDED
#define NET_ENDPOINT_H_INCLUDED

#include <stddef.h>

struct net_endpoint {
    char host[256];
    char port[16];
};

/*
 * The HOST:PORT at the start of s[0, len): HOST a name or an IPv4 address
 * (no ':'), or an IPv6 address in brackets; PORT 1 to 65535 in decimal.
 * It ends at len or at a ':' (what follows is the caller's). Returns the
 * bytes it took, or -EINVAL.
 */
int net_endpoint_parse(const char *s, size_t len, struct net_endpoint *e);

#endif /* NET_ENDPOINT_H_INCLUDED */
