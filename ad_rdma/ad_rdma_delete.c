/* Delete: ROMIO passes only the name, so the servers come from the
 * environment, the configuration file, or the last file opened. */
#include "ad_rdma.h"
#include "adio_extern.h"

void ADIOI_RDMA_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_DELETE";
    ADIOI_RDMA_File f = { .path = filename, .sf = { .failed = -1 } };
    char why[512];

    if (ADIOI_RDMA_Servers(MPI_INFO_NULL, &f.servers, why, sizeof why) != 0) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                           why);
        return;
    }
    /* No hints here: the environment says how to connect. */
    *error_code = rfs_adio_security_init(MPI_INFO_NULL, myname, &f.sec);
    if (*error_code != MPI_SUCCESS)
        return;
    struct rfs_connect_opts o;
    rfs_adio_connect_opts(&f.sec, ADIOI_RDMA_DEFAULT_TIMEOUT * 1000, &o);
    int rc = stripe_unlink(&o, &f.servers, filename);
    *error_code = ADIOI_RDMA_Error(rc, myname, &f, "delete");
    rfs_adio_security_fini(&f.sec);
}
