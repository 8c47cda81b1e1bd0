/*
 * Path confinement: client paths are opened strictly beneath the export
 * root (rfs_path.c says how). No MPI here.
 */
#ifndef RFS_PATH_H_INCLUDED
#define RFS_PATH_H_INCLUDED

#include <sys/types.h>

/* Open or unlink PATH (leading '/' ignored) strictly beneath root_fd; '..'
 * or a symlink leading outside gives -EXDEV. */
int rfs_path_open(int root_fd, const char *path, int oflags, mode_t mode);
/* The same for a directory, as an O_PATH descriptor. */
int rfs_path_open_dir(int root_fd, const char *path);
int rfs_path_unlink(int root_fd, const char *path);
/* openat2 is used where the kernel has it; 0 forces the portable walk
 * (for tests). */
void rfs_path_use_openat2(int on);

#endif /* RFS_PATH_H_INCLUDED */
