/*
 * The sink of rdma: files: the striped file opened again, on connections
 * of its own (not shared with the driver's, whose calls it would
 * overlap), with the layout the driver read, so the drain runs beside the
 * application thread on its own thread. Each record is one list write
 * over the objects it spans. With leases (an owner's token) every object
 * is the owner's drain on its server and releases go to all of them.
 */
#include <errno.h>
#include <stdlib.h>

#include "abt/abt_sink.h"
#include "stripe/stripe_file.h"

struct stripe_sink {
    struct stripe_file sf;
    uint64_t owner;
};

/* Server answers are positive rfs_status; the sink speaks negative errno. */
static int sink_errno(int rc)
{
    return rc > 0 ? -rfs_errno_from_status(rc) : rc;
}

static int stripe_sink_pwrite(void *ctx, const void *buf, uint64_t len, uint64_t offset)
{
    struct stripe_sink *k = ctx;
    struct stripe_view whole = { NULL, 0, NULL, 0 };
    uint64_t moved;
    /* stripe_io's buffer is not const for reads; a write only reads it */
    return sink_errno(stripe_io(&k->sf, STRIPE_LIST, &whole, offset, len, (char *) buf, 1,
                                &moved));
}

static int stripe_sink_release(void *ctx, uint64_t upto)
{
    struct stripe_sink *k = ctx;
    struct rfs_lease_args a = { .owner = k->owner, .id = upto };
    return sink_errno(stripe_lease(&k->sf, RFS_LEASE_RELEASE, &a));
}

static void stripe_sink_close(void *ctx)
{
    struct stripe_sink *k = ctx;
    stripe_close(&k->sf);
    free(k);
}

static const struct abt_sink_ops stripe_sink_ops = {
    "rdma", 1, stripe_sink_pwrite, NULL, stripe_sink_close, NULL
};

static const struct abt_sink_ops stripe_lease_sink_ops = {
    "rdma", 1, stripe_sink_pwrite, NULL, stripe_sink_close, stripe_sink_release
};

int abt_sink_stripe_open(struct abt_sink *s, const struct stripe_servers *sv, const char *path,
                         const struct stripe_layout *layout, const struct rfs_connect_opts *o,
                         uint64_t owner)
{
    struct stripe_sink *k = calloc(1, sizeof *k);
    if (k == NULL)
        return -ENOMEM;
    k->owner = owner;
    struct stripe_open_args a = { .connect = *o, .flags = RFS_O_WRONLY };
    int rc = stripe_open_known(&k->sf, sv, path, &a, layout);
    if (rc == 0 && owner)
        rc = stripe_lease(&k->sf, RFS_LEASE_DRAIN, NULL);
    if (rc != 0) {
        stripe_close(&k->sf);
        free(k);
        return sink_errno(rc);
    }
    s->ops = owner ? &stripe_lease_sink_ops : &stripe_sink_ops;
    s->ctx = k;
    return 0;
}
