/* Delete: ROMIO passes only the name (of a path on an rfs-mount: the
 * mount says how to reach it); the UNLINK goes over a connection to the
 * server that open files share, or one made for it. */
#include <string.h>

#include "ad_rfs.h"
#include "adio_extern.h"
#include "rfs_adio.h"

static void delete_named(char *filename, MPI_Info info, int *error_code)
{
    static char myname[] = "ADIOI_RFS_DELETE";
    ADIOI_RFS_File f;

    memset(&f, 0, sizeof f);
    if (ADIOI_RFS_Parse_name(filename, f.host, sizeof f.host, f.port, sizeof f.port,
                             &f.path) != 0) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                           ADIOI_RFS_NAME_HELP);
        return;
    }
    f.timeout_s = ADIOI_RFS_DEFAULT_TIMEOUT;
    /* No hints here but a mount's: the environment says how to connect. */
    *error_code = rfs_adio_security_init(info, myname, &f.sec);
    if (*error_code != MPI_SUCCESS)
        return;
    int rc = ADIOI_RFS_Connect(&f);
    if (rc == 0)
        rc = rfs_unlink(f.conn.client, f.path);
    *error_code = ADIOI_RFS_Error(rc, myname, &f, "delete");
    ADIOI_RFS_Disconnect(&f);
    rfs_adio_security_fini(&f.sec);
}

void ADIOI_RFS_Delete(const char *filename, int *error_code)
{
    rfs_adio_mount_delete(filename, "rfs:", "ADIOI_RFS_DELETE", delete_named, error_code);
}
