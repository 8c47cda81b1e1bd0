/*
 * The sink of the inner file: a thread-safe one without MPI where the
 * inner driver's file can be reached directly (ufs/nfs: the local file;
 * rfs: a second connection to the same server and path; rdma: the
 * striped file opened again on connections of its own), else the inner
 * driver itself, drained on the application thread.
 *
 * Leases (docs/abt.md "Read-write files"): over rfs: and rdma: a handle
 * that may buffer a read-write file draws an owner's token; each buffered
 * write call of such a file first takes a lease on its bytes through the
 * inner driver's connection, and the sink lands and releases them.
 */
#include <errno.h>
#include <sys/random.h>

#include "ad_abt.h"
#include "proto/rfs_client.h"
#ifdef ROMIO_RFS
#include "../ad_rfs/ad_rfs.h"
#endif
#ifdef ROMIO_RDMA
#include "../ad_rdma/ad_rdma.h"
#endif

/* Large enough to need few calls, small enough for an int count. */
#define INNER_CHUNK (1u << 30)

static int errno_of_class(int error_code)
{
    int cls = MPI_ERR_IO;
    MPI_Error_class(error_code, &cls);
    switch (cls) {
    case MPI_ERR_NO_SPACE: return ENOSPC;
    case MPI_ERR_QUOTA: return EDQUOT;
    case MPI_ERR_ACCESS: return EACCES;
    case MPI_ERR_READ_ONLY: return EROFS;
    default: return EIO;
    }
}

static int inner_pwrite(void *ctx, const void *buf, uint64_t len, uint64_t offset)
{
    ADIO_File fd = ctx;
    ADIOI_ABT_File *a = fd->fs_ptr;
    const char *c = buf;
    ADIOI_ABT_Sync_shadow(fd);
    while (len > 0) {
        int n = (int) (len < INNER_CHUNK ? len : INNER_CHUNK), err;
        ADIO_Status status;
        ADIO_WriteContig(a->inner, c, n, MPI_BYTE, ADIO_EXPLICIT_OFFSET, (ADIO_Offset) offset,
                         &status, &err);
        if (err != MPI_SUCCESS)
            return -errno_of_class(err);
        c += n;
        len -= (uint64_t) n;
        offset += (uint64_t) n;
    }
    return 0;
}

static void inner_close(void *ctx)
{
    (void) ctx;                 /* the inner file is closed by ADIOI_ABT_Close */
}

static const struct abt_sink_ops inner_ops = {
    "inner driver", 0, inner_pwrite, NULL, inner_close, NULL
};

#ifdef ROMIO_RFS
static int rfs_sink(ADIO_File in, struct abt_sink *sink, uint64_t owner)
{
    const char *host, *port, *path;
    struct rfs_connect_opts o;
    ADIOI_RFS_Reach(in, &host, &port, &path, &o);
    return abt_sink_rfs_open(sink, host, port, path, &o, owner);
}
#endif

#ifdef ROMIO_RDMA
static int stripe_sink(ADIO_File in, struct abt_sink *sink, uint64_t owner)
{
    const struct stripe_servers *sv;
    const struct stripe_layout *layout;
    const char *path;
    struct rfs_connect_opts o;
    ADIOI_RDMA_Reach(in, &sv, &path, &layout, &o);
    return abt_sink_stripe_open(sink, sv, path, layout, &o, owner);
}
#endif

/* A token that no other handle of the file is likely to hold: 64 random
 * bits, never 0. */
static uint64_t new_owner(void)
{
    uint64_t t = 0;
    while (t == 0)
        if (getrandom(&t, sizeof t, 0) != sizeof t)
            t = 0;
    return t;
}

/* The sink by `open`, with an owner's token unless abt_buffer_rdwr=disable;
 * a server without leases (it refuses the sink's DRAIN as an unknown
 * request) gets a sink without them. */
static int open_leased(ADIOI_ABT_File *a, struct abt_sink *sink,
                       int (*open)(ADIO_File, struct abt_sink *, uint64_t))
{
    a->lease_owner = a->buffer_rdwr != ADIOI_ABT_RDWR_DISABLE ? new_owner() : 0;
    int rc = open(a->inner, sink, a->lease_owner);
    if (rc == -EPROTO && a->lease_owner) {
        a->lease_owner = 0;
        rc = open(a->inner, sink, 0);
    }
    return rc;
}

/* 0 or a negative errno. */
int ADIOI_ABT_Open_sink(ADIO_File fd, struct abt_sink *sink)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIO_File in = a->inner;
    switch (in->file_system) {
    case ADIO_UFS:
    case ADIO_NFS:
        return abt_sink_posix_open(sink, in->filename);
#ifdef ROMIO_RFS
    case ADIO_RFS:
        return open_leased(a, sink, rfs_sink);
#endif
#ifdef ROMIO_RDMA
    case ADIO_RDMA:
        return open_leased(a, sink, stripe_sink);
#endif
    default:
        *sink = (struct abt_sink) { &inner_ops, fd };
        return 0;
    }
}

int ADIOI_ABT_Leasing(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    return a->lease_owner != 0 && a->engine != NULL && (fd->access_mode & ADIO_RDWR);
}

/* The lease through the inner driver's own connection(s). */
static int take(ADIO_File in, const struct rfs_lease_args *a, const char *myname)
{
    switch (in->file_system) {
#ifdef ROMIO_RFS
    case ADIO_RFS:
        return ADIOI_RFS_Lease(in, a, myname);
#endif
#ifdef ROMIO_RDMA
    case ADIO_RDMA:
        return ADIOI_RDMA_Lease(in, a, myname);
#endif
    default:
        return MPI_SUCCESS;     /* never: only these sinks draw a token */
    }
}

/* Before a buffered write of [off, off + len) in a leased file: the lease,
 * once no other process holds any of those bytes buffered (but those of
 * the same collective write, a->coll_call: the call's processes write
 * their own bytes, and a lease covers a move's span, which interleaves
 * with the others'); the engine tags the call's writes with it until
 * ADIOI_ABT_Lease_end. An MPI error code (a lease held past the server's
 * timeout: MPI_ERR_IO, saying so). */
int ADIOI_ABT_Lease_begin(ADIO_File fd, uint64_t off, uint64_t len, const char *myname)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    if (!ADIOI_ABT_Leasing(fd) || len == 0)
        return MPI_SUCCESS;
    struct rfs_lease_args l = { .owner = a->lease_owner, .id = ++a->lease_id,
                                .call = a->coll_call, .offset = off, .length = len };
    int err = take(a->inner, &l, myname);
    if (err == MPI_SUCCESS)
        abt_lease_begin(a->engine, l.id);
    return err;
}

void ADIOI_ABT_Lease_end(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    if (ADIOI_ABT_Leasing(fd))
        abt_lease_end(a->engine);
}
