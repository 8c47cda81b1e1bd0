/*
 * Registration of caller memory for the verbs transport: the one boundary
 * behind which optimistic group registration and a registration cache
 * (adio/net/ogr.h, adio/net/regcache.h) are meant to go. For now every
 * non-empty segment gets its own ibv_reg_mr and is deregistered after the
 * transfer.
 */
#ifndef VERBS_REG_H_INCLUDED
#define VERBS_REG_H_INCLUDED

#include <stdint.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>

/* The registration of one I/O vector: mr[i] covers iov[i] (NULL if empty). */
struct verbs_region {
    int n;
    struct ibv_mr **mr;
};

struct verbs_reg_stats {
    uint64_t registrations;
    uint64_t registered_bytes;
};

/* access: IBV_ACCESS_* flags. Returns 0 or a negative errno (nothing held). */
int verbs_register_iov(struct ibv_pd *pd, const struct iovec *iov, int cnt, int access,
                       struct verbs_region *out, struct verbs_reg_stats *st);
void verbs_deregister(struct verbs_region *r);

static inline uint32_t verbs_region_lkey(const struct verbs_region *r, int seg)
{
    return r->mr[seg]->lkey;
}

static inline uint32_t verbs_region_rkey(const struct verbs_region *r, int seg)
{
    return r->mr[seg]->rkey;
}

#endif /* VERBS_REG_H_INCLUDED */
