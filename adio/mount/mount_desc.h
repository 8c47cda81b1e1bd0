/*
 * What rfs-mount tells the drivers about a path on its mount: the ROMIO
 * name the path has (rdma:/..., rfs:HOST:PORT:/...) and the hints that
 * reach it (server list, key, TLS), as text in an extended attribute of
 * every path of the mount. MPI-IO on a path of the mount then goes to the
 * driver directly while the program's own POSIX calls go through the
 * mount. rfs-mount writes the text, the drivers and ROMIO's file system
 * detection read it; the reader treats it as hostile. No MPI here.
 */
#ifndef MOUNT_DESC_H_INCLUDED
#define MOUNT_DESC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define MOUNT_DESC_XATTR "user.romio.mount"
#define MOUNT_DESC_MAX   8192            /* bytes of the text */
#define MOUNT_DESC_NAME  4200            /* a ROMIO name: prefix, endpoint, path */
#define MOUNT_DESC_VALUE 1024
#define MOUNT_DESC_HINTS 4
#define MOUNT_FUSE_MAGIC 0x65735546      /* statfs f_type of every FUSE mount */

struct mount_desc {
    char name[MOUNT_DESC_NAME];
    uint32_t nhints;
    struct mount_hint {
        char key[32];
        char value[MOUNT_DESC_VALUE];
    } hint[MOUNT_DESC_HINTS];
};

/* The hints a descriptor may carry (the drivers' names for them). */
int mount_desc_hint_known(const char *key);
/* 0, or -EINVAL for an unknown hint, -ENOSPC when one does not fit. */
int mount_desc_add_hint(struct mount_desc *d, const char *key, const char *value);
/* The text ("key=value" lines, name first); its length or -ENOSPC. */
int mount_desc_format(const struct mount_desc *d, char *out, size_t size);
/* 0, or -EINVAL for text rfs-mount does not write. */
int mount_desc_parse(const char *in, size_t len, struct mount_desc *d);
/*
 * PATH's descriptor when PATH lies on an rfs-mount; for a file not there
 * yet (a create), its directory's with the name completed. 0; -ENOENT
 * when PATH is not on an rfs-mount; -EINVAL for a malformed descriptor.
 */
int mount_desc_of_path(const char *path, struct mount_desc *d);
/* The hint's value in d, or NULL. */
const char *mount_desc_hint(const struct mount_desc *d, const char *key);

#endif /* MOUNT_DESC_H_INCLUDED */
