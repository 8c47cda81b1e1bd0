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

/* d for the driver of `prefix`: the name without its prefix in *name, the
 * hints into info (created when NULL). */
static int apply(const struct mount_desc *d, const char *prefix, const char *myname,
                 const char **name, MPI_Info *info)
{
    char why[MOUNT_DESC_NAME + 128];
    size_t n = strlen(prefix);
    if (strncmp(d->name, prefix, n) != 0) {
        snprintf(why, sizeof why, "the path is %s on an rfs-mount: open it with its driver",
                 d->name);
        return bad_name(myname, why);
    }
    *name = d->name + n;
    if (*info == MPI_INFO_NULL)
        MPI_Info_create(info);
    for (uint32_t i = 0; i < d->nhints; i++)
        ADIOI_Info_set(*info, d->hint[i].key, d->hint[i].value);
    return MPI_SUCCESS;
}

static int desc_error(int rc, const char *myname, const char *path)
{
    char why[MOUNT_DESC_NAME + 128];
    snprintf(why, sizeof why, "%s: the rfs-mount's description of it is malformed (%s)", path,
             MOUNT_DESC_XATTR);
    return rc == -EINVAL ? bad_name(myname, why) : MPI_SUCCESS;
}

static int rename_file(ADIO_File fd, const struct mount_desc *d, const char *prefix,
                       const char *myname)
{
    const char *name;
    int err = apply(d, prefix, myname, &name, &fd->info);
    if (err != MPI_SUCCESS)
        return err;
    ADIOI_Free(fd->filename);
    fd->filename = ADIOI_Strdup(name);
    return MPI_SUCCESS;
}

int rfs_adio_mount_name(ADIO_File fd, const char *prefix, const char *myname)
{
    struct mount_desc d;
    int rc = mount_desc_of_path(fd->filename, &d);
    if (rc != 0)
        return desc_error(rc, myname, fd->filename);
    return rename_file(fd, &d, prefix, myname);
}

int rfs_adio_mount_name_coll(ADIO_File fd, int root, const char *prefix, const char *myname)
{
    /* the root's view: a process on a host without the mount opens the
     * same file */
    struct {
        int rc;
        int len;
        char text[MOUNT_DESC_MAX];
    } shared;
    struct mount_desc d;
    int rank;
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == root) {
        shared.rc = mount_desc_of_path(fd->filename, &d);
        shared.len = shared.rc == 0 ? mount_desc_format(&d, shared.text, sizeof shared.text) : 0;
        if (shared.len < 0)
            shared.rc = -EINVAL;
    }
    MPI_Bcast(&shared, (int) offsetof(__typeof__(shared), text), MPI_BYTE, root, fd->comm);
    if (shared.rc == 0 && shared.len > 0)
        MPI_Bcast(shared.text, shared.len, MPI_BYTE, root, fd->comm);
    if (shared.rc != 0)
        return desc_error(shared.rc, myname, fd->filename);
    if (rank != root && mount_desc_parse(shared.text, (size_t) shared.len, &d) != 0)
        return desc_error(-EINVAL, myname, fd->filename);
    return rename_file(fd, &d, prefix, myname);
}

int rfs_adio_mount_delete_name(const char *filename, const char *prefix, const char *myname,
                               char *name, size_t size, MPI_Info *info)
{
    struct mount_desc d;
    const char *ns;
    *info = MPI_INFO_NULL;
    snprintf(name, size, "%s", filename);
    int rc = mount_desc_of_path(filename, &d);
    if (rc != 0)
        return desc_error(rc, myname, filename);
    int err = apply(&d, prefix, myname, &ns, info);
    if (err == MPI_SUCCESS)
        snprintf(name, size, "%s", ns);
    return err;
}
