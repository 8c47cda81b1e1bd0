/*
 * Close: CLOSE on the server, then give the connection back (the last
 * file on it closes it). With
 * rfs_defer_close the CLOSE is sent but its reply not awaited (the server
 * closes the file when it reads it, or when the connection ends); an
 * error of that close is then not reported.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ad_rfs.h"

/* ROMIO_RFS_STATS set: what this process's open of the file sent. */
static void print_stats(const ADIOI_RFS_File *f)
{
    struct rfs_client_stats st;
    rfs_shared_stats(&f->conn, &st);
    fprintf(stderr, "rfs stats: %s:%s %s: %llu requests, %llu bytes sent, %llu received; "
            "connections of the process %u\n", f->host, f->port, f->path,
            (unsigned long long) st.requests, (unsigned long long) st.bytes_out,
            (unsigned long long) st.bytes_in, rfs_shared_count());
}

void ADIOI_RFS_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_RFS_CLOSE";
    ADIOI_RFS_File *f = fd->fs_ptr;
    int rc = 0;

    *error_code = MPI_SUCCESS;
    if (!f)
        return;
    if (f->connected) {
        rc = f->defer_close ? rfs_close_nowait(f->conn.client, f->conn.handle)
                            : rfs_close(f->conn.client, f->conn.handle);
        if (getenv(ADIOI_RFS_STATS_ENV))
            print_stats(f);
        ADIOI_RFS_Disconnect(f);
    }
    if (rc != 0)
        *error_code = ADIOI_RFS_Error(rc, myname, f, "close");
    rfs_adio_security_fini(&f->sec);
    ADIOI_Free(f->name);
    ADIOI_Free(f);
    fd->fs_ptr = NULL;
}
