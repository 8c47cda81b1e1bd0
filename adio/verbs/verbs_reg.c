/*
 * Caller memory registration for the verbs transport (verbs_reg.h).
 */
#include "verbs/verbs_reg.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct verbs_registrar {
    struct ogr_reg_ops ops;
    struct ogr_ctx *ogr;
    struct ogr_cost cost;
};

/* OGR_ACCESS_* are the IBV_ACCESS_* bits they name. */
static int reg_mr(void *ctx, uintptr_t addr, uint64_t len, unsigned access, struct ogr_key *out)
{
    struct ibv_mr *mr = ibv_reg_mr(ctx, (void *) addr, (size_t) len, (int) access);
    if (!mr)
        return errno ? -errno : -ENOMEM;
    *out = (struct ogr_key) { .handle = mr, .lkey = mr->lkey, .rkey = mr->rkey };
    return 0;
}

static void dereg_mr(void *ctx, const struct ogr_key *key)
{
    (void) ctx;
    ibv_dereg_mr(key->handle);
}

/* The cost model, measured once per process on the first device. */
static pthread_mutex_t cost_lock = PTHREAD_MUTEX_INITIALIZER;
static int cost_known;
static struct ogr_cost cost;

static struct ogr_cost measured_cost(const struct ogr_reg_ops *ops)
{
    pthread_mutex_lock(&cost_lock);
    if (!cost_known) {
        if (ogr_calibrate(ops, 3, &cost) < 0)
            cost = ogr_paper_cost;
        cost_known = 1;
    }
    struct ogr_cost c = cost;
    pthread_mutex_unlock(&cost_lock);
    return c;
}

int verbs_registrar_new(struct ibv_pd *pd, int mode, struct verbs_registrar **out)
{
    struct verbs_registrar *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->ops = (struct ogr_reg_ops) { .ctx = pd, .reg = reg_mr, .dereg = dereg_mr };
    struct ogr_config cfg = {
        .mode = mode == NET_REG_INDIVIDUAL ? OGR_MODE_INDIVIDUAL
              : mode == NET_REG_OGR ? OGR_MODE_GROUP : OGR_MODE_CACHED,
        .cost = measured_cost(&r->ops),
        .cache_entries = VERBS_REGCACHE_ENTRIES,
        .cache_bytes = VERBS_REGCACHE_BYTES,
    };
    r->cost = cfg.cost;
    int rc = ogr_create(&r->ops, &cfg, &r->ogr);
    if (rc < 0) {
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void verbs_registrar_free(struct verbs_registrar *r)
{
    if (!r)
        return;
    ogr_destroy(r->ogr);
    free(r);
}

void verbs_registrar_stats(struct verbs_registrar *r, struct ogr_stats *out)
{
    ogr_get_stats(r->ogr, out);
}

struct ogr_cost verbs_registrar_cost(const struct verbs_registrar *r)
{
    return r->cost;
}

int verbs_register_iov(struct verbs_registrar *r, const struct iovec *iov, int cnt, int access,
                       struct verbs_region *out)
{
    struct ogr_segment *segs = calloc(cnt > 0 ? (size_t) cnt : 1, sizeof *segs);
    *out = (struct verbs_region) { 0 };
    if (!segs)
        return -ENOMEM;
    for (int i = 0; i < cnt; i++)
        segs[i] = (struct ogr_segment) { (uintptr_t) iov[i].iov_base, iov[i].iov_len };
    int rc = ogr_register(r->ogr, segs, (size_t) cnt, (unsigned) access, 0, &out->reg);
    free(segs);
    if (rc == 0)
        out->owner = r;
    return rc;
}

void verbs_deregister(struct verbs_region *region)
{
    if (region->owner)
        ogr_release(region->owner->ogr, &region->reg);
    *region = (struct verbs_region) { 0 };
}
