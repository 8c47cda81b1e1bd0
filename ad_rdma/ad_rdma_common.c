/*
 * What the rdma: entry points share: the server list, the mapping of
 * failures to MPI error classes, and contiguous transfers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_rdma.h"
#include "adio_extern.h"
#include "dtype_view.h"
#include "rfs_adio.h"

/* The list of the last file this process opened: MPI_File_delete gets no
 * hints, so a program that named its servers by hint can still delete. */
static struct stripe_servers last_servers;

static int info_value(MPI_Info info, const char *key, char *value)
{
    int flag = 0;
    if (info != MPI_INFO_NULL)
        ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag;
}

/*
 * The servers, from the first of: the rdma_servers hint, $ROMIO_RDMA_SERVERS,
 * the file $ROMIO_RDMA_CONFIG names or /etc/romio-rdma.conf, and (info
 * MPI_INFO_NULL: delete) the servers of the last file opened. 0, or -1
 * and a reason in `why`.
 */
int ADIOI_RDMA_Servers(MPI_Info info, struct stripe_servers *sv, char *why, size_t whylen)
{
    char value[MPI_MAX_INFO_VAL + 1];
    const char *env = getenv(STRIPE_SERVERS_ENV), *conf = getenv(STRIPE_CONFIG_ENV);
    int rc;
    if (info_value(info, "rdma_servers", value) && stripe_servers_parse(value, sv) == 0)
        goto found;             /* a value that does not parse is refused by Open */
    if (env) {
        if (stripe_servers_parse(env, sv) == 0)
            goto found;
        snprintf(why, whylen, "rdma: %s=%s is not HOST:PORT,...", STRIPE_SERVERS_ENV, env);
        return -1;
    }
    rc = stripe_servers_load(conf ? conf : STRIPE_CONFIG_FILE, sv);
    if (rc == 0)
        goto found;
    if (rc != -ENOENT || conf) {
        snprintf(why, whylen, "rdma: server list %s: %s", conf ? conf : STRIPE_CONFIG_FILE,
                 rc == -ENOENT ? "no such file" : "malformed (lines: server HOST:PORT)");
        return -1;
    }
    if (info == MPI_INFO_NULL && last_servers.n > 0) {
        *sv = last_servers;
        return 0;
    }
    snprintf(why, whylen, "rdma: no servers: set the rdma_servers hint, %s or %s",
             STRIPE_SERVERS_ENV, STRIPE_CONFIG_FILE);
    return -1;
  found:
    last_servers = *sv;
    return 0;
}

/* MPI_File_get_info then says what the file has, not what was asked. */
void ADIOI_RDMA_Report_layout(ADIO_File fd, const ADIOI_RDMA_File *f)
{
    char value[MPI_MAX_INFO_VAL + 1];
    fd->hints->striping_unit = (int) f->sf.layout.unit;
    fd->hints->striping_factor = (int) f->sf.layout.factor;
    snprintf(value, sizeof value, "%llu", (unsigned long long) f->sf.layout.unit);
    ADIOI_Info_set(fd->info, "striping_unit", value);
    snprintf(value, sizeof value, "%u", f->sf.layout.factor);
    ADIOI_Info_set(fd->info, "striping_factor", value);
    snprintf(value, sizeof value, "%u", stripe_copies(&f->sf.layout));
    ADIOI_Info_set(fd->info, "rdma_replicas", value);
    if (stripe_servers_format(&f->servers, value, sizeof value) == 0)
        ADIOI_Info_set(fd->info, "rdma_servers", value);
    ADIOI_Info_set(fd->info, "rdma_transport", f->verbs ? "verbs" : f->sec.tls ? "tls" : "tcp");
}

/*
 * rc: 0, an rfs_status from a server, or a negative errno. The message
 * names the server that failed (f->sf.failed), what was done and why.
 */
void ADIOI_RDMA_Reach(ADIO_File fd, const struct stripe_servers **sv, const char **path,
                      const struct stripe_layout **layout, struct rfs_connect_opts *o)
{
    const ADIOI_RDMA_File *f = fd->fs_ptr;
    *sv = &f->servers;
    *path = f->path;
    *layout = &f->sf.layout;
    *o = f->sf.connect;
}

int ADIOI_RDMA_Lease(ADIO_File fd, const struct rfs_lease_args *a, const char *myname)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    int rc = stripe_lease(&f->sf, RFS_LEASE_TAKE, a);
    return ADIOI_RDMA_Error(rc, myname, f, "lease");
}

int ADIOI_RDMA_Error(int rc, const char *myname, const ADIOI_RDMA_File *f, const char *what)
{
    char who[300] = "rdma";
    if (rc == 0)
        return MPI_SUCCESS;
    if (f && f->sf.failed >= 0)
        snprintf(who, sizeof who, "rdma server %d (%s:%s)", f->sf.failed,
                 f->servers.at[f->sf.failed].host, f->servers.at[f->sf.failed].port);
    /* an open refused by a server's object, or by the layout asked for */
    const char *reason = f ? f->sf.why : NULL;
    if (!reason && rc == RFS_E_INVAL && strcmp(what, "open") == 0)
        reason = f && f->sf.failed >= 0
            ? "not a striped file of these servers (header missing or not matching)"
            : "striping_factor beyond the server list, rdma_replicas beyond striping_factor, "
              "or striping_unit beyond 1 GiB";
    return rfs_adio_error(rc, myname, who, what, f ? f->path : NULL, "rdma_timeout", reason);
}

/* ReadContig/WriteContig: `offset` is a byte of the file, the view aside
 * (ROMIO's two-phase and data sieving call them so). */
void ADIOI_RDMA_Contig_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                int is_write, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_CONTIG_IO";
    ADIOI_RDMA_File *f = fd->fs_ptr;
    struct stripe_view bytes = { .type = NULL, .disp = 0 };
    MPI_Count type_size;
    uint64_t done = 0;
    MPI_Type_size_x(datatype, &type_size);
    uint64_t len = (uint64_t) type_size * (uint64_t) count;

    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    int method = f->method == ADIOI_RDMA_SIEVE ? STRIPE_LIST : f->method;
    int rc = stripe_io(&f->sf, (enum stripe_method) method, &bytes, (uint64_t) offset, len, buf,
                       is_write, &done);
    if (rc != 0) {
        *error_code = ADIOI_RDMA_Error(rc, myname, f, is_write ? "write" : "read");
        return;
    }
    dtype_view_contig_done(fd, datatype, file_ptr_type, offset, done, status);
    *error_code = MPI_SUCCESS;
}
