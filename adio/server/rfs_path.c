/*
 * Confining client paths to the export root with openat2(RESOLVE_BENEATH):
 * the kernel resolves every component, '..' and symlinks included, and
 * refuses (EXDEV) any resolution that leaves the root, so no user-space
 * check can race with a rename or a new symlink.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_server.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_beneath(int root_fd, const char *path, int oflags, mode_t mode)
{
    struct open_how how = {
        .flags = (unsigned long long) (oflags | O_CLOEXEC),
        .mode = (oflags & O_CREAT) ? mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
    return fd < 0 ? -errno : (int) fd;
}

static const char *relative(const char *path)
{
    while (*path == '/')
        path++;
    return *path ? path : ".";
}

int rfs_path_open(int root_fd, const char *path, int oflags, mode_t mode)
{
    /* O_NONBLOCK: opening a FIFO must not hang the worker; only regular
     * files are served. */
    int fd = open_beneath(root_fd, relative(path), oflags | O_NONBLOCK, mode);
    if (fd < 0)
        return fd;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0)
        rc = -errno;
    else if (S_ISDIR(st.st_mode))
        rc = -EISDIR;
    else if (!S_ISREG(st.st_mode))
        rc = -EINVAL;
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
        rc = -errno;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

int rfs_path_unlink(int root_fd, const char *path)
{
    char dir[4097];
    const char *rel = relative(path);
    const char *slash = strrchr(rel, '/');
    const char *base = slash ? slash + 1 : rel;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return -EINVAL;
    size_t dlen = slash ? (size_t) (slash - rel) : 0;
    if (dlen >= sizeof dir)
        return -ENAMETOOLONG;
    memcpy(dir, rel, dlen);
    dir[dlen] = '\0';
    int dfd = open_beneath(root_fd, dlen ? dir : ".", O_PATH | O_DIRECTORY, 0);
    if (dfd < 0)
        return dfd;
    int rc = unlinkat(dfd, base, 0) < 0 ? -errno : 0;
    close(dfd);
    return rc;
}
