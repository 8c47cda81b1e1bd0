/*
 * Open: find the servers, open (or create) the file's object on each,
 * and report the layout the file really has: a file created here takes
 * striping_factor and striping_unit from the hints, an existing one
 * keeps the layout stored in its objects' headers.
 *
 * The collective open (OpenColl) does that on one process, the first
 * aggregator, and broadcasts the layout, or its error, to the others,
 * which open the objects without reading a header or creating anything:
 * a file's headers are read once per open, not once per process, and no
 * process opens twice (ROMIO's generic one opens a created file on its
 * first process, closes it, and opens it again everywhere).
 */
#include <stdio.h>
#include <string.h>

#include "ad_rdma.h"
#include "adio_extern.h"
#include "verbs/net_verbs.h"
#include "rfs_adio.h"

/*
 * rdma_transport: verbs when asked, or (auto) when this host has an RDMA
 * device; auto falls back to TCP when the servers cannot be reached over
 * verbs (servers without --rdma). TLS runs over TCP only, so
 * rfs_transport=tls keeps the file on TCP.
 */
/* stripe_open, or with a layout the collective open's root read */
static int open_objects(ADIOI_RDMA_File *f, const struct stripe_open_args *a,
                        const struct stripe_layout *known)
{
    return known ? stripe_open_known(&f->sf, &f->servers, f->path, a, known)
                 : stripe_open(&f->sf, &f->servers, f->path, a);
}

static int open_stripes(ADIOI_RDMA_File *f, struct stripe_open_args *a,
                        const struct stripe_layout *known)
{
    int want = f->transport == ADIOI_RDMA_TRANSPORT_VERBS ||
               (f->transport == ADIOI_RDMA_TRANSPORT_AUTO && net_verbs_available());
    f->verbs = want && !f->sec.tls;
    if (f->verbs) {
        const struct net_transport *tcp = a->connect.transport;
        a->connect.transport = &net_verbs_transport;
        int rc = open_objects(f, a, known);
        if (rc >= 0 || f->transport == ADIOI_RDMA_TRANSPORT_VERBS)
            return rc;
        a->connect.transport = tcp;
        f->verbs = 0;
    }
    return open_objects(f, a, known);
}

static void discard(ADIOI_RDMA_File *f)
{
    ADIOI_Free(f->path);
    ADIOI_Free(f);
}

/* Opens NAME (rfs_adio_mount_name's, which the file keeps). */
static void open_file(ADIO_File fd, const struct stripe_layout *known, char *name,
                      int *error_code)
{
    static char myname[] = "ADIOI_RDMA_OPEN";
    ADIOI_RDMA_File *f = ADIOI_Calloc(1, sizeof *f);
    char why[512];

    fd->fd_sys = -1;
    fd->fd_direct = -1;
    f->path = name;
    *error_code = ADIOI_RDMA_Get_hints(fd, f, myname);
    if (*error_code != MPI_SUCCESS) {
        discard(f);
        return;
    }
    if (ADIOI_RDMA_Servers(fd->info, &f->servers, why, sizeof why) != 0) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                           why);
        discard(f);
        return;
    }
    *error_code = rfs_adio_security_init(fd->info, myname, &f->sec);
    if (*error_code != MPI_SUCCESS) {
        discard(f);
        return;
    }
    uint32_t max_pairs = f->sf.max_pairs;
    uint64_t max_inflight = f->sf.max_inflight;
    uint32_t max_servers = f->sf.max_servers;
    struct stripe_open_args a = {
        .flags = rfs_adio_open_flags(fd->access_mode),
        .mode = rfs_adio_create_mode(fd),
        .unit = fd->hints->striping_unit > 0 ? (uint64_t) fd->hints->striping_unit : 0,
        .factor = fd->hints->striping_factor > 0 ? (uint32_t) fd->hints->striping_factor : 0,
        .replicas = (uint32_t) f->replicas,
        .share = 1,
    };
    rfs_adio_connect_opts(&f->sec, f->timeout_s * 1000, &a.connect);
    a.connect.net.registration = f->registration;
    a.connect.net.pack_max = f->pack_max;
    a.connect.net.rcvbuf = f->tcp_rcvbuf;
    int rc = open_stripes(f, &a, known);
    f->sf.max_pairs = max_pairs;
    f->sf.max_inflight = max_inflight;
    f->sf.max_servers = max_servers;
    uint64_t size = 0;
    if (rc == 0 && (fd->access_mode & ADIO_APPEND))
        rc = stripe_size(&f->sf, &size);
    if (rc != 0) {
        *error_code = ADIOI_RDMA_Error(rc, myname, f, "open");
        stripe_close(&f->sf);
        rfs_adio_security_fini(&f->sec);
        discard(f);
        return;
    }
    if (fd->access_mode & ADIO_APPEND)
        fd->fp_ind = fd->fp_sys_posn = (ADIO_Offset) size;
    f->view_stale = 1;
    ADIOI_RDMA_Report_layout(fd, f);
    fd->fs_ptr = f;
    *error_code = MPI_SUCCESS;
}

void ADIOI_RDMA_Open(ADIO_File fd, int *error_code)
{
    char *name;
    *error_code = rfs_adio_mount_name(fd->filename, "rdma:", "ADIOI_RDMA_OPEN", &name,
                                      &fd->info);
    if (*error_code == MPI_SUCCESS)
        open_file(fd, NULL, name, error_code);
}

/* What the collective open's root tells the others. */
struct root_open {
    struct adioi_shared_error error;    /* class MPI_SUCCESS: the layout follows */
    uint32_t factor, replicas;
    uint64_t unit, file_id;
};

static void root_result(ADIO_File fd, int error_code, struct root_open *r)
{
    const ADIOI_RDMA_File *f = fd->fs_ptr;
    if (error_code != MPI_SUCCESS) {
        ADIOI_COMPAT_Error_share(error_code, &r->error);
        return;
    }
    r->factor = f->sf.layout.factor;
    r->replicas = stripe_copies(&f->sf.layout);
    r->unit = f->sf.layout.unit;
    r->file_id = f->sf.layout.file_id;
}

void ADIOI_RDMA_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_OPENCOLL";
    int root = fd->hints->ranklist[0];
    struct root_open r;
    memset(&r, 0, sizeof r);
    fd->blksize = 4 * 1024 * 1024;      /* as ROMIO's generic open, for its file domains */
    fd->access_mode = access_mode;
    char *name;
    *error_code = rfs_adio_mount_name_coll(fd->comm, fd->filename, "rdma:", myname, &name,
                                           &fd->info);
    if (*error_code != MPI_SUCCESS)
        return;
    if (rank == root) {
        open_file(fd, NULL, name, error_code);
        root_result(fd, *error_code, &r);
    }
    MPI_Bcast(&r, (int) sizeof r, MPI_BYTE, root, fd->comm);
    if (rank != root && r.error.error_class != MPI_SUCCESS) {
        ADIOI_Free(name);
        *error_code = ADIOI_COMPAT_Error_own(&r.error, myname, __LINE__);
        return;
    }
    struct stripe_layout known = { .unit = r.unit, .factor = r.factor, .replicas = r.replicas,
                                   .file_id = r.file_id };
    char value[32];
    if (rank != root && fd->hints->deferred_open && !fd->is_agg) {
        /* ROMIO opens it here only if this process ever does I/O itself
         * (ADIO_ImmediateOpen); the layout is reported meanwhile. */
        fd->hints->striping_unit = (int) known.unit;
        fd->hints->striping_factor = (int) known.factor;
        snprintf(value, sizeof value, "%llu", (unsigned long long) known.unit);
        ADIOI_Info_set(fd->info, "striping_unit", value);
        snprintf(value, sizeof value, "%u", known.factor);
        ADIOI_Info_set(fd->info, "striping_factor", value);
        snprintf(value, sizeof value, "%u", known.replicas);
        ADIOI_Info_set(fd->info, "rdma_replicas", value);
        /* Its later open (ADIOI_RDMA_Open) must open what rank 0 resolved,
         * also on a host without the mount: the name, and the mount's
         * hints already in fd->info. */
        ADIOI_Free(fd->filename);
        fd->filename = name;
        *error_code = MPI_SUCCESS;
        return;
    }
    if (rank != root) {
        fd->access_mode = access_mode & ~(ADIO_CREATE | ADIO_EXCL);
        open_file(fd, &known, name, error_code);
        fd->access_mode = access_mode;
    }
    if (*error_code == MPI_SUCCESS)
        fd->is_open = 1;
}
