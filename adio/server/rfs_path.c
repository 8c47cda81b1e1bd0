/*
 * Confining client paths to the export root.
 *
 * Where the kernel has openat2 (Linux 5.6), RESOLVE_BENEATH does it: the
 * kernel resolves every component, '..' and symlinks included, and refuses
 * (EXDEV) any resolution that leaves the root, so no user-space check can
 * race with a rename or a new symlink. Elsewhere (older kernels, valgrind)
 * walk_beneath resolves one component at a time from directory
 * descriptors, never following a link it has not read itself, so that a
 * concurrent change fails closed instead of escaping.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_LINKS 40                /* as the kernel's ELOOP limit */
#define MAX_DEPTH 256               /* directories below the root */

static atomic_int have_openat2 = 1;

void rfs_path_use_openat2(int on)
{
    atomic_store(&have_openat2, on);
}

/* One component off the front of *rest; 0 when none is left. */
static size_t next_component(const char **rest, const char **comp)
{
    const char *p = *rest;
    while (*p == '/')
        p++;
    size_t n = strcspn(p, "/");
    *comp = p;
    *rest = p + n;
    return n;
}

static int last_component(const char *rest)
{
    while (*rest == '/')
        rest++;
    return *rest == '\0';
}

/* Replace "name/rest" by "target/rest" in buf; 0 or -errno. */
static int splice_link(int dirfd, const char *name, const char *rest, char *buf, size_t len)
{
    char target[4097];
    ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    if (target[0] == '/')
        return -EXDEV;              /* an absolute link always leaves the root */
    char tmp[2 * 4097 + 2];
    int m = snprintf(tmp, sizeof tmp, "%s/%s", target, rest);
    if (m < 0 || (size_t) m >= len)
        return -ENAMETOOLONG;
    memcpy(buf, tmp, (size_t) m + 1);
    return 0;
}

static int walk_beneath(int root_fd, const char *path, int oflags, mode_t mode)
{
    char buf[2 * 4097 + 2], name[4097];
    int stack[MAX_DEPTH], depth = 0, links = 0, rc;
    const char *rest = buf, *comp;
    size_t n;

    if (strlen(path) >= sizeof buf)
        return -ENAMETOOLONG;
    strcpy(buf, path);
    while ((n = next_component(&rest, &comp)) > 0) {
        if (n >= sizeof name) {
            rc = -ENAMETOOLONG;
            goto out;
        }
        memcpy(name, comp, n);
        name[n] = '\0';
        int dirfd = depth ? stack[depth - 1] : root_fd;
        struct stat st;
        if (strcmp(name, ".") == 0)
            continue;
        if (strcmp(name, "..") == 0) {
            if (depth == 0) {
                rc = -EXDEV;
                goto out;
            }
            close(stack[--depth]);
            continue;
        }
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            if (last_component(rest) && (oflags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
                rc = -EEXIST;       /* as open(2): EXCL never follows a link */
            else if (++links > MAX_LINKS)
                rc = -ELOOP;
            else
                rc = splice_link(dirfd, name, rest, buf, sizeof buf);
            if (rc < 0)
                goto out;
            rest = buf;
            continue;
        }
        if (last_component(rest)) {
            rc = openat(dirfd, name, oflags | O_NOFOLLOW | O_CLOEXEC, mode);
            rc = rc < 0 ? -errno : rc;
            goto out;
        }
        if (depth == MAX_DEPTH) {
            rc = -ENAMETOOLONG;
            goto out;
        }
        int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            rc = -errno;
            goto out;
        }
        stack[depth++] = fd;
    }
    /* The path ended in ".", "..", "/", or was empty: the directory itself. */
    rc = openat(depth ? stack[depth - 1] : root_fd, ".", oflags | O_CLOEXEC, mode);
    rc = rc < 0 ? -errno : rc;
out:
    while (depth > 0)
        close(stack[--depth]);
    return rc;
}

static int open_beneath(int root_fd, const char *path, int oflags, mode_t mode)
{
    struct open_how how = {
        .flags = (unsigned long long) (oflags | O_CLOEXEC),
        .mode = (oflags & O_CREAT) ? mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    if (atomic_load(&have_openat2)) {
        long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
        if (fd >= 0 || errno != ENOSYS)
            return fd < 0 ? -errno : (int) fd;
        atomic_store(&have_openat2, 0);
    }
    return walk_beneath(root_fd, path, oflags, mode);
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

int rfs_path_open_dir(int root_fd, const char *path)
{
    return open_beneath(root_fd, relative(path), O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
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
