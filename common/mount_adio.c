/*
 * Paths on an rfs-mount (adio/mount/mount_desc.h) in ROMIO: its file
 * system detection sends them to the rdma: or rfs: driver, and the driver
 * opens the name the path has in the mount's namespace, reached as the
 * mount reaches it (its servers, key and TLS). The program's own POSIX
 * calls on the same path go through the mount.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "adio.h"
#include "mount/mount_desc.h"
#include "rfs_adio.h"

int ADIOI_Suite_mount_fstype(const char *filename)
{
    struct mount_desc d;
    if (mount_desc_of_path(filename, &d) != 0)
        return -1;
#ifdef ROMIO_RDMA
    if (strncmp(d.name, "rdma:", 5) == 0)
        return ADIO_RDMA;
#endif
#ifdef ROMIO_RFS
    if (strncmp(d.name, "rfs:", 4) == 0)
        return ADIO_RFS;
#endif
    return -1;
}

static int bad_name(const char *myname, const char *why)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_BAD_FILE, "**filename", "**filename %s", why);
}

/* mount_desc_of_path's result: 0 with d to apply, 1 for a name on no
 * mount (or one whose directory is not there: the open reports that),
 * else an MPI error code. */
static int looked_up(int rc, const char *myname, const char *name)
{
    char why[MOUNT_DESC_NAME + 160];
    if (rc == 0)
        return 0;
    if (rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES)
        return 1;
    if (rc == -EINVAL)
        snprintf(why, sizeof why, "%s: the rfs-mount's description of it (%s) is malformed", name,
                 MOUNT_DESC_XATTR);
    else
        snprintf(why, sizeof why, "%s: cannot tell whether it is on an rfs-mount: %s", name,
                 strerror(-rc));
    return bad_name(myname, why);
}

/* d for the driver of `prefix`: its name without the prefix in *out, its
 * hints into *info (created when MPI_INFO_NULL). */
static int apply(const struct mount_desc *d, const char *prefix, const char *myname, char **out,
                 MPI_Info *info)
{
    char why[MOUNT_DESC_NAME + 128];
    size_t n = strlen(prefix);
    if (strncmp(d->name, prefix, n) != 0) {
        snprintf(why, sizeof why, "the path is %s on an rfs-mount: open it with its driver",
                 d->name);
        return bad_name(myname, why);
    }
    if (*info == MPI_INFO_NULL)
        MPI_Info_create(info);
    for (uint32_t i = 0; i < d->nhints; i++)
        ADIOI_Info_set(*info, d->hint[i].key, d->hint[i].value);
    *out = ADIOI_Strdup(d->name + n);
    return MPI_SUCCESS;
}

int rfs_adio_mount_name(const char *name, const char *prefix, const char *myname, char **out,
                        MPI_Info *info)
{
    struct mount_desc d;
    int rc = looked_up(mount_desc_of_path(name, &d), myname, name);
    if (rc == 1) {
        *out = ADIOI_Strdup(name);
        return MPI_SUCCESS;
    }
    return rc == 0 ? apply(&d, prefix, myname, out, info) : rc;
}

int rfs_adio_mount_name_coll(MPI_Comm comm, const char *name, const char *prefix,
                             const char *myname, char **out, MPI_Info *info)
{
    /* rank 0's view (as ROMIO's detection): a process on a host without
     * the mount opens the same file. Every process, rank 0 too, parses the
     * same text, so that all agree on the outcome. */
    struct {
        int rc;
        int len;
        char text[MOUNT_DESC_MAX];
    } shared;
    struct mount_desc d;
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        shared.rc = mount_desc_of_path(name, &d);
        shared.len = shared.rc == 0 ? mount_desc_format(&d, shared.text, sizeof shared.text) : 0;
        if (shared.len < 0) {
            shared.rc = -EINVAL;
            shared.len = 0;
        }
    }
    MPI_Bcast(&shared, (int) offsetof(__typeof__(shared), text), MPI_BYTE, 0, comm);
    if (shared.len > 0)
        MPI_Bcast(shared.text, shared.len, MPI_BYTE, 0, comm);
    if (shared.rc == 0 && mount_desc_parse(shared.text, (size_t) shared.len, &d) != 0)
        shared.rc = -EINVAL;
    int rc = looked_up(shared.rc, myname, name);
    if (rc == 1) {
        *out = ADIOI_Strdup(name);
        return MPI_SUCCESS;
    }
    return rc == 0 ? apply(&d, prefix, myname, out, info) : rc;
}

void rfs_adio_mount_delete(const char *filename, const char *prefix, const char *myname,
                           rfs_adio_delete_fn delete_named, int *error_code)
{
    char *name;
    MPI_Info info = MPI_INFO_NULL;
    *error_code = rfs_adio_mount_name(filename, prefix, myname, &name, &info);
    if (*error_code != MPI_SUCCESS)
        return;
    delete_named(name, info, error_code);
    ADIOI_Free(name);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}
