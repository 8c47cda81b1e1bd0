/*
 * Open: find the servers, open (or create) the file's object on each,
 * and report the layout the file really has: a file created here takes
 * striping_factor and striping_unit from the hints, an existing one
 * keeps the layout stored in its objects' headers.
 */
#include <stdio.h>

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
static int open_stripes(ADIOI_RDMA_File *f, struct stripe_open_args *a)
{
    int want = f->transport == ADIOI_RDMA_TRANSPORT_VERBS ||
               (f->transport == ADIOI_RDMA_TRANSPORT_AUTO && net_verbs_available());
    f->verbs = want && !f->sec.tls;
    if (f->verbs) {
        const struct net_transport *tcp = a->connect.transport;
        a->connect.transport = &net_verbs_transport;
        int rc = stripe_open(&f->sf, &f->servers, f->path, a);
        if (rc >= 0 || f->transport == ADIOI_RDMA_TRANSPORT_VERBS)
            return rc;
        a->connect.transport = tcp;
        f->verbs = 0;
    }
    return stripe_open(&f->sf, &f->servers, f->path, a);
}

void ADIOI_RDMA_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_OPEN";
    ADIOI_RDMA_File *f = ADIOI_Calloc(1, sizeof *f);
    char why[512];

    fd->fd_sys = -1;
    fd->fd_direct = -1;
    f->path = fd->filename;
    *error_code = ADIOI_RDMA_Get_hints(fd, f, myname);
    if (*error_code != MPI_SUCCESS) {
        ADIOI_Free(f);
        return;
    }
    if (ADIOI_RDMA_Servers(fd->info, &f->servers, why, sizeof why) != 0) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                           why);
        ADIOI_Free(f);
        return;
    }
    *error_code = rfs_adio_security_init(fd->info, myname, &f->sec);
    if (*error_code != MPI_SUCCESS) {
        ADIOI_Free(f);
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
    };
    rfs_adio_connect_opts(&f->sec, f->timeout_s * 1000, &a.connect);
    a.connect.net.registration = f->registration;
    a.connect.net.pack_max = f->pack_max;
    a.connect.net.rcvbuf = f->tcp_rcvbuf;
    int rc = open_stripes(f, &a);
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
        ADIOI_Free(f);
        return;
    }
    if (fd->access_mode & ADIO_APPEND)
        fd->fp_ind = fd->fp_sys_posn = (ADIO_Offset) size;
    f->view_stale = 1;
    ADIOI_RDMA_Report_layout(fd, f);
    fd->fs_ptr = f;
    *error_code = MPI_SUCCESS;
}
