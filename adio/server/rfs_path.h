/*
 * Path confinement: client paths are opened strictly beneath the export
 * root (rfs_path.c says how). No MPI here.
 */
#ifndef RFS_PATH_H_INCLUDED
#define RFS_PATH_H_INCLUDED

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* Open PATH (leading '/' ignored) strictly beneath root_fd; '..' or a
 * symlink leading outside gives -EXDEV. Each call returns a descriptor or
 * 0 on success, else -errno. */
int rfs_path_open(int root_fd, const char *path, int oflags, mode_t mode);
/* The same for a directory, as an O_PATH descriptor. */
int rfs_path_open_dir(int root_fd, const char *path);
/* A directory opened for reading its entries (fdopendir). */
int rfs_path_open_listing(int root_fd, const char *path);
int rfs_path_stat(int root_fd, const char *path, struct stat *st);
/* The last component itself (a symlink is removed or renamed, not its
 * target); the directories above it confined as for open. */
int rfs_path_unlink(int root_fd, const char *path);
int rfs_path_rmdir(int root_fd, const char *path);
int rfs_path_mkdir(int root_fd, const char *path, mode_t mode);
int rfs_path_rename(int root_fd, const char *from, const char *to, int noreplace);
/* Permissions (mode NULL: unchanged) and times (NULL: unchanged; as
 * utimensat's, UTIME_NOW and UTIME_OMIT allowed). */
int rfs_path_setattr(int root_fd, const char *path, const mode_t *mode,
                     const struct timespec times[2]);
/* openat2 is used where the kernel has it; 0 forces the portable walk
 * (for tests). */
void rfs_path_use_openat2(int on);

#endif /* RFS_PATH_H_INCLUDED */
