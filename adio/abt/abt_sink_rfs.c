/*
 * The sink of rfs: files: a connection of its own to the same rfsd, so the
 * drain runs beside the application thread's requests on the driver's
 * connection. The server finishes a WRITE before it replies, so data the
 * drain has written is visible to any later request on any connection.
 * Small records drain as one list write (LWRITE) per batch. With leases
 * (an owner's token) the handle is the owner's drain (LEASE DRAIN: its
 * writes do not wait for the leases they land) and releases them.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "abt/abt_sink.h"
#include "proto/rfs_client.h"

#define SINK_HANDLE 0

_Static_assert(ABT_SINK_MAX_PIECES <= RFS_MAX_PAIRS, "a batch must fit one list write");

struct rfs_sink {
    struct rfs_client client;
    uint64_t owner;
    uint8_t pairs[ABT_SINK_MAX_PIECES * RFS_PAIR_SIZE];
    struct iovec iov[ABT_SINK_MAX_PIECES + 1];
};

/* Transport failures are negative errno already; server answers are not. */
static int sink_errno(int rc)
{
    return rc > 0 ? -rfs_errno_from_status(rc) : rc;
}

static int rfs_sink_pwrite(void *ctx, const void *buf, uint64_t len, uint64_t offset)
{
    struct rfs_sink *r = ctx;
    return sink_errno(rfs_pwrite(&r->client, SINK_HANDLE, buf, len, offset));
}

static int write_each(void *ctx, const struct abt_piece *pieces, int n)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = rfs_sink_pwrite(ctx, pieces[i].data, pieces[i].len, pieces[i].offset);
    return rc;
}

/* One LWRITE: the pieces' offset-length pairs, then their data. Where the
 * request cannot be built (no memory for its frame: nothing was sent) the
 * pieces go one by one rather than fail the file. */
static int rfs_sink_pwrite_pieces(void *ctx, const struct abt_piece *pieces, int n)
{
    struct rfs_sink *r = ctx;
    struct rfs_req req = { .handle = SINK_HANDLE, .aux = (uint32_t) n };
    r->iov[0] = (struct iovec) { r->pairs, (size_t) n * RFS_PAIR_SIZE };
    for (int i = 0; i < n; i++) {
        rfs_pair_encode(pieces[i].offset, pieces[i].len, r->pairs + (size_t) i * RFS_PAIR_SIZE);
        r->iov[i + 1] = (struct iovec) { (void *) pieces[i].data, pieces[i].len };
        req.length += pieces[i].len;
    }
    struct rfs_inflight sent;
    struct rfs_rep rep;
    uint64_t none;
    int rc = rfs_send(&r->client, RFS_OP_LWRITE, &req, r->iov, n + 1, &sent);
    if (rc == -ENOMEM)
        return write_each(ctx, pieces, n);
    if (rc == 0)
        rc = rfs_recv(&r->client, &sent, NULL, 0, &rep, &none);
    if (rc == 0 && rep.value != req.length)
        rc = -EIO;              /* the server wrote less than asked */
    return sink_errno(rc);
}

static int rfs_sink_release(void *ctx, uint64_t upto)
{
    struct rfs_sink *r = ctx;
    struct rfs_lease_args a = { .owner = r->owner, .id = upto };
    return sink_errno(rfs_lease(&r->client, SINK_HANDLE, RFS_LEASE_RELEASE, &a));
}

static void rfs_sink_close(void *ctx)
{
    struct rfs_sink *r = ctx;
    rfs_close(&r->client, SINK_HANDLE);
    rfs_client_close(&r->client);
    free(r);
}

static const struct abt_sink_ops rfs_sink_ops = {
    "rfs", 1, rfs_sink_pwrite, rfs_sink_pwrite_pieces, rfs_sink_close, NULL
};

static const struct abt_sink_ops rfs_lease_sink_ops = {
    "rfs", 1, rfs_sink_pwrite, rfs_sink_pwrite_pieces, rfs_sink_close, rfs_sink_release
};

int abt_sink_rfs_open(struct abt_sink *s, const char *host, const char *port, const char *path,
                      const struct rfs_connect_opts *o, uint64_t owner)
{
    struct rfs_sink *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return -ENOMEM;
    r->owner = owner;
    int rc = rfs_client_connect_with(&r->client, host, port, o);
    if (rc == 0) {
        rc = sink_errno(rfs_open(&r->client, SINK_HANDLE, path, RFS_O_WRONLY, 0, NULL));
        if (rc == 0 && owner)
            rc = sink_errno(rfs_lease(&r->client, SINK_HANDLE, RFS_LEASE_DRAIN, NULL));
        if (rc != 0)
            rfs_client_close(&r->client);
    }
    if (rc != 0) {
        free(r);
        return rc;
    }
    s->ops = owner ? &rfs_lease_sink_ops : &rfs_sink_ops;
    s->ctx = r;
    return 0;
}
