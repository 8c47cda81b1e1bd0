/*
 * Connections per client address (rfs_peers.h): a hash table of chains,
 * an entry per address with connections open, freed at its last.
 */
#include "server/rfs_peers.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#define PEER_BUCKETS 4096               /* a power of two */

struct peer {
    struct peer *next;
    struct rfs_peer_addr addr;
    int count;
};

struct rfs_peers {
    int max_per_addr;
    struct peer *bucket[PEER_BUCKETS];
};

int rfs_peers_new(int max_per_addr, struct rfs_peers **out)
{
    struct rfs_peers *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->max_per_addr = max_per_addr;
    *out = p;
    return 0;
}

void rfs_peers_free(struct rfs_peers *p)
{
    if (!p)
        return;
    for (int i = 0; i < PEER_BUCKETS; i++)
        for (struct peer *e = p->bucket[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(p);
}

int rfs_peer_addr_of(const struct sockaddr_storage *ss, struct rfs_peer_addr *out)
{
    static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    if (ss->ss_family == AF_INET6) {
        memcpy(out->b, &((const struct sockaddr_in6 *) ss)->sin6_addr, 16);
        return 0;
    }
    if (ss->ss_family != AF_INET)
        return -EAFNOSUPPORT;
    memcpy(out->b, v4_mapped, 12);
    memcpy(out->b + 12, &((const struct sockaddr_in *) ss)->sin_addr, 4);
    return 0;
}

/* FNV-1a: the table's only input is addresses, no secret to guard. */
static struct peer **chain(struct rfs_peers *p, const struct rfs_peer_addr *a)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < 16; i++)
        h = (h ^ a->b[i]) * 16777619u;
    return &p->bucket[h & (PEER_BUCKETS - 1)];
}

static struct peer **find(struct peer **at, const struct rfs_peer_addr *a)
{
    while (*at && memcmp((*at)->addr.b, a->b, 16) != 0)
        at = &(*at)->next;
    return at;
}

int rfs_peers_take(struct rfs_peers *p, const struct rfs_peer_addr *a)
{
    struct peer **at = find(chain(p, a), a);
    if (*at) {
        if ((*at)->count >= p->max_per_addr)
            return 0;
        (*at)->count++;
        return 1;
    }
    struct peer *e = calloc(1, sizeof *e);
    if (!e)
        return -ENOMEM;
    e->addr = *a;
    e->count = 1;
    *at = e;
    return 1;
}

void rfs_peers_give(struct rfs_peers *p, const struct rfs_peer_addr *a)
{
    struct peer **at = find(chain(p, a), a);
    struct peer *e = *at;
    if (!e || --e->count > 0)
        return;
    *at = e->next;
    free(e);
}
