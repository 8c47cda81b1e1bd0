/*
 * What the rfs: entry points share: the file name, the connection (and
 * how another driver reaches the same file), the mapping of failures to
 * MPI error classes, and contiguous transfers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_rfs.h"
#include "adio_extern.h"
#include "dtype_view.h"
#include "net/net_endpoint.h"
#include "rfs_adio.h"

static int parse_endpoint(const char *name, char *host, size_t hostlen, char *port,
                          size_t portlen, const char **rest);

/*
 * HOST:PORT:/PATH, HOST may be [IPv6]. The path must be absolute: ROMIO
 * builds the shared-file-pointer file's name from the directory part.
 * Any other name (as ROMIO_FSTYPE_FORCE=rfs: passes them) is a path on the
 * server that $ROMIO_RFS_SERVER names, relative to its export root.
 */
int ADIOI_RFS_Parse_name(const char *name, char *host, size_t hostlen, char *port,
                         size_t portlen, const char **path)
{
    const char *server = getenv(ADIOI_RFS_SERVER_ENV), *rest;
    if (parse_endpoint(name, host, hostlen, port, portlen, &rest) == 0 && rest[0] == '/') {
        *path = rest;
        return 0;
    }
    if (!server || !*name ||
        parse_endpoint(server, host, hostlen, port, portlen, &rest) != 0 || *rest)
        return -1;
    *path = name;
    return 0;
}

/* HOST:PORT then ':' and the rest, or HOST:PORT alone (*rest = ""). */
static int parse_endpoint(const char *name, char *host, size_t hostlen, char *port,
                          size_t portlen, const char **rest)
{
    struct net_endpoint e;
    int took = net_endpoint_parse(name, strlen(name), &e);
    if (took < 0 || strlen(e.host) >= hostlen || strlen(e.port) >= portlen)
        return -1;
    strcpy(host, e.host);
    strcpy(port, e.port);
    *rest = name[took] ? name + took + 1 : name + took;
    return 0;
}

/* A deferred OPEN's status is its connection's: such a file has its own. */
static int shares(const ADIOI_RFS_File *f)
{
    return !f->defer_open;
}

int ADIOI_RFS_Connect(ADIOI_RFS_File *f)
{
    struct rfs_connect_opts o;
    rfs_adio_connect_opts(&f->sec, f->timeout_s * 1000, &o);
    int rc = rfs_shared_take(f->host, f->port, &o, shares(f), &f->conn, &f->why);
    f->connected = rc == 0;
    return rc;
}

void ADIOI_RFS_Disconnect(ADIOI_RFS_File *f)
{
    if (f->connected)
        rfs_shared_give_back(&f->conn);
    f->connected = 0;
}

/* A connection that broke (the server restarted, or closed it idle) is
 * replaced and the file opened there again. */
static int revive(ADIOI_RFS_File *f)
{
    struct rfs_connect_opts o;
    const struct rfs_shared *was = f->conn.conn;
    rfs_adio_connect_opts(&f->sec, f->timeout_s * 1000, &o);
    int rc = rfs_shared_revive(&f->conn, f->host, f->port, &o, shares(f), f->path,
                               f->open_flags, &f->why);
    if (f->conn.conn != was)
        f->view_stale = 1;              /* the new handle has no view yet */
    return rc;
}

void ADIOI_RFS_Reach(ADIO_File fd, const char **host, const char **port, const char **path,
                     struct rfs_connect_opts *o)
{
    const ADIOI_RFS_File *f = fd->fs_ptr;
    *host = f->host;
    *port = f->port;
    *path = f->path;
    rfs_adio_connect_opts(&f->sec, f->timeout_s * 1000, o);
}

int ADIOI_RFS_Lease(ADIO_File fd, const struct rfs_lease_args *a, const char *myname)
{
    ADIOI_RFS_File *f = fd->fs_ptr;
    int rc = ADIOI_RFS_Ready(f);
    if (rc == 0)
        rc = rfs_lease(f->conn.client, f->conn.handle, RFS_LEASE_TAKE, a);
    return rc ? ADIOI_RFS_Error(rc, myname, f, "lease") : MPI_SUCCESS;
}

/*
 * rc: 0, an rfs_status from the server, or a negative errno of the
 * transport. The message names the server, what was done and why it
 * failed.
 */
int ADIOI_RFS_Error(int rc, const char *myname, const ADIOI_RFS_File *f, const char *what)
{
    char who[300];
    snprintf(who, sizeof who, "rfs server %s:%s", f->host, f->port);
    return rfs_adio_error(rc, myname, who, what, f->path, "rfs_timeout", f->why);
}

/* With rfs_defer_open the first request connects and carries the OPEN;
 * once that OPEN has failed, every later request reports why. A broken
 * connection is replaced first (revive). */
int ADIOI_RFS_Ready(ADIOI_RFS_File *f)
{
    if (f->connected && f->conn.client->open_status != RFS_OK)
        return f->conn.client->open_status;
    if (f->connected)
        return revive(f);
    int rc = ADIOI_RFS_Connect(f);
    if (rc == 0)
        rc = rfs_open_deferred(f->conn.client, f->conn.handle, f->path, f->open_flags,
                               f->open_mode);
    return rc;
}

/* Returns the bytes transferred (0 on error). */
MPI_Offset ADIOI_RFS_Contig_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                               int is_write, int *error_code)
{
    static char myname[] = "ADIOI_RFS_CONTIG_IO";
    ADIOI_RFS_File *f = fd->fs_ptr;
    MPI_Count type_size;
    MPI_Type_size_x(datatype, &type_size);
    uint64_t len = (uint64_t) type_size * (uint64_t) count, done = len;

    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    int rc = 0;
    if (len > 0) {
        rc = ADIOI_RFS_Ready(f);
        if (rc == 0 && is_write) {
            rfs_shared_wrote(&f->conn);
            rc = rfs_pwrite(f->conn.client, f->conn.handle, buf, len, (uint64_t) offset);
        } else if (rc == 0)
            rc = rfs_pread(f->conn.client, f->conn.handle, buf, len, (uint64_t) offset, &done);
    }
    if (rc != 0) {
        *error_code = ADIOI_RFS_Error(rc, myname, f, is_write ? "write" : "read");
        return 0;
    }
    dtype_view_contig_done(fd, datatype, file_ptr_type, offset, done, status);
    *error_code = MPI_SUCCESS;
    return (MPI_Offset) done;
}

/* The bytes a blocking call's status reports, for a request born complete. */
MPI_Offset ADIOI_RFS_Status_bytes(ADIO_Status *status, int error_code)
{
    MPI_Count bytes = 0;
    if (error_code != MPI_SUCCESS)
        return 0;
    MPI_Get_elements_x(status, MPI_BYTE, &bytes);
    return bytes == MPI_UNDEFINED ? 0 : (MPI_Offset) bytes;
}

/*
 * Entry of a blocking native collective: every process of the file gets
 * here before any goes on. ROMIO's ordered calls (read_ord.c,
 * write_ord.c) pass a token so that each process moves the shared file
 * pointer in rank order, then call the collective; seek_shared and
 * set_view store the new pointer before their barrier. Both count on the
 * collective to synchronise, as ROMIO's own does (it Allgathers the
 * offsets first). Without that, rank 0 leaves write_ordered and stores 0
 * while a later rank has still to add its share, which then lands on top
 * (MPICH io/rdwrzero, setinfo). An error keeps the barrier's class.
 */
int ADIOI_RFS_Coll_sync(ADIO_File fd, int *error_code)
{
    *error_code = MPI_Barrier(fd->comm);
    return *error_code;
}
