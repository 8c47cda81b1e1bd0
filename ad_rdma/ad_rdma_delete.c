/* Delete: ROMIO passes only the name, so the servers come from the
 * rfs-mount the name is on, else the environment, the configuration
 * file, or the last file opened. */
#include "ad_rdma.h"
#include "adio_extern.h"
#include "rfs_adio.h"

static void delete_named(char *name, MPI_Info info, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_DELETE";
    ADIOI_RDMA_File f = { .path = name, .sf = { .failed = -1 } };
    char why[512];

    if (ADIOI_RDMA_Servers(info, &f.servers, why, sizeof why) != 0) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                           why);
        return;
    }
    /* No hints here but a mount's: the environment says how to connect. */
    *error_code = rfs_adio_security_init(info, myname, &f.sec);
    if (*error_code != MPI_SUCCESS)
        return;
    struct rfs_connect_opts o;
    rfs_adio_connect_opts(&f.sec, ADIOI_RDMA_DEFAULT_TIMEOUT * 1000, &o);
    int rc = stripe_unlink(&o, &f.servers, name);
    *error_code = ADIOI_RDMA_Error(rc, myname, &f, "delete");
    rfs_adio_security_fini(&f.sec);
}

void ADIOI_RDMA_Delete(const char *filename, int *error_code)
{
    rfs_adio_mount_delete(filename, "rdma:", "ADIOI_RDMA_DELETE", delete_named, error_code);
}
