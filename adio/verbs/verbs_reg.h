/*
 * Registration of caller memory for the verbs transport, through
 * optimistic group registration and the registration cache (ogr.h,
 * regcache.h; seed 000): one registrar per protection domain, in one of
 * three modes. The cost model's a and b are measured once per process on
 * the first device (ogr_calibrate), the paper's values if that fails.
 */
#ifndef VERBS_REG_H_INCLUDED
#define VERBS_REG_H_INCLUDED

#include <stdint.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>

#include "net/net.h"
#include "verbs/ogr.h"

/* The cache's bounds: registrations are pinned memory. */
#define VERBS_REGCACHE_ENTRIES 256
#define VERBS_REGCACHE_BYTES   (512ull << 20)

struct verbs_registrar;

/* mode: NET_REG_* (net.h). 0 or a negative errno. */
int verbs_registrar_new(struct ibv_pd *pd, int mode, struct verbs_registrar **out);
/* Every region must have been released. */
void verbs_registrar_free(struct verbs_registrar *r);
void verbs_registrar_stats(struct verbs_registrar *r, struct ogr_stats *out);
/* The cost model its groups are planned with. */
struct ogr_cost verbs_registrar_cost(const struct verbs_registrar *r);

/* The registration of one I/O vector: the transport's own registered
 * buffer (single), or caller memory through the registrar. */
struct verbs_region {
    struct ibv_mr *single;
    struct ogr_registration reg;
    struct verbs_registrar *owner;      /* NULL: nothing to release */
};

/* access: IBV_ACCESS_* flags. Returns 0 or a negative errno (nothing held). */
int verbs_register_iov(struct verbs_registrar *r, const struct iovec *iov, int cnt, int access,
                       struct verbs_region *out);
void verbs_deregister(struct verbs_region *region);

static inline struct verbs_region verbs_region_of(struct ibv_mr *mr)
{
    return (struct verbs_region) { .single = mr };
}

static inline uint32_t verbs_region_lkey(const struct verbs_region *r, int seg)
{
    return r->single ? r->single->lkey : ogr_segment_key(&r->reg, (size_t) seg)->lkey;
}

static inline uint32_t verbs_region_rkey(const struct verbs_region *r, int seg)
{
    return r->single ? r->single->rkey : ogr_segment_key(&r->reg, (size_t) seg)->rkey;
}

#endif /* VERBS_REG_H_INCLUDED */
