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
 *
 * Symlinks (one rule, docs/protocol.md): a relative link is followed where
 * it stays beneath the root; an absolute link is followed when its target
 * names a place beneath the root's own location (so an export's absolute
 * links into itself work, `--root /` included), resolved again from the
 * root; any other leads outside and gives EXDEV. openat2 refuses every
 * absolute link, so a path it refuses is walked again by walk_beneath,
 * which knows the rule.
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

/* Where the root is in the host's file system ("" for "/"); 0 or -errno. */
static int root_location(int root_fd, char *out, size_t len)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", root_fd);
    ssize_t n = readlink(proc, out, len - 1);
    if (n < 0)
        return -errno;
    if ((size_t) n == len - 1)
        return -ENAMETOOLONG;
    out[n] = '\0';
    if (strcmp(out, "/") == 0)
        out[0] = '\0';
    return 0;
}

/* An absolute link's target beneath the root, as a path from the root;
 * NULL when it leads elsewhere. */
static const char *beneath_root(int root_fd, const char *target)
{
    char root[4097];
    if (root_location(root_fd, root, sizeof root) < 0)
        return NULL;
    size_t n = strlen(root);
    if (strncmp(target, root, n) != 0 || (target[n] != '/' && target[n] != '\0'))
        return NULL;
    return target + n;
}

/* Replace "name/rest" by "target/rest" in buf; 1 when the target is an
 * absolute one beneath the root (buf then goes from the root), 0 for a
 * relative one, or -errno. */
static int splice_link(int root_fd, int dirfd, const char *name, const char *rest, char *buf,
                       size_t len)
{
    char target[4097];
    ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    const char *from = target;
    if (target[0] == '/' && !(from = beneath_root(root_fd, target)))
        return -EXDEV;
    char tmp[2 * 4097 + 2];
    int m = snprintf(tmp, sizeof tmp, "%s/%s", from, rest);
    if (m < 0 || (size_t) m >= len)
        return -ENAMETOOLONG;
    memcpy(buf, tmp, (size_t) m + 1);
    return target[0] == '/';
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
                rc = splice_link(root_fd, dirfd, name, rest, buf, sizeof buf);
            if (rc < 0)
                goto out;
            if (rc == 1)
                while (depth > 0)
                    close(stack[--depth]);
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
        if (fd >= 0 || (errno != ENOSYS && errno != EXDEV))
            return fd < 0 ? -errno : (int) fd;
        if (errno == ENOSYS)
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

/* The directory holding PATH's last component, opened beneath the root
 * (the link itself is what the caller acts on, not its target); *base
 * points at that component in PATH. A descriptor or -errno. */
static int open_parent(int root_fd, const char *path, const char **base)
{
    char dir[4097];
    const char *rel = relative(path);
    const char *slash = strrchr(rel, '/');
    *base = slash ? slash + 1 : rel;
    if (!**base || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0)
        return -EINVAL;
    size_t dlen = slash ? (size_t) (slash - rel) : 0;
    if (dlen >= sizeof dir)
        return -ENAMETOOLONG;
    memcpy(dir, rel, dlen);
    dir[dlen] = '\0';
    return open_beneath(root_fd, dlen ? dir : ".", O_PATH | O_DIRECTORY, 0);
}

static int remove_entry(int root_fd, const char *path, int flags)
{
    const char *base;
    int dfd = open_parent(root_fd, path, &base);
    if (dfd < 0)
        return dfd;
    int rc = unlinkat(dfd, base, flags) < 0 ? -errno : 0;
    close(dfd);
    return rc;
}

int rfs_path_unlink(int root_fd, const char *path)
{
    return remove_entry(root_fd, path, 0);
}

int rfs_path_rmdir(int root_fd, const char *path)
{
    return remove_entry(root_fd, path, AT_REMOVEDIR);
}

int rfs_path_mkdir(int root_fd, const char *path, mode_t mode)
{
    const char *base;
    int dfd = open_parent(root_fd, path, &base);
    if (dfd < 0)
        return dfd;
    int rc = mkdirat(dfd, base, mode) < 0 ? -errno : 0;
    close(dfd);
    return rc;
}

int rfs_path_rename(int root_fd, const char *from, const char *to, int noreplace)
{
    const char *from_base, *to_base;
    int from_dfd = open_parent(root_fd, from, &from_base);
    if (from_dfd < 0)
        return from_dfd;
    int to_dfd = open_parent(root_fd, to, &to_base);
    if (to_dfd < 0) {
        close(from_dfd);
        return to_dfd;
    }
    int rc = renameat2(from_dfd, from_base, to_dfd, to_base, noreplace ? RENAME_NOREPLACE : 0);
    rc = rc < 0 ? -errno : 0;
    close(to_dfd);
    close(from_dfd);
    return rc;
}

int rfs_path_stat(int root_fd, const char *path, struct stat *st)
{
    int fd = open_beneath(root_fd, relative(path), O_PATH, 0);
    if (fd < 0)
        return fd;
    int rc = fstat(fd, st) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

int rfs_path_open_listing(int root_fd, const char *path)
{
    return open_beneath(root_fd, relative(path), O_RDONLY | O_DIRECTORY, 0);
}

int rfs_path_setattr(int root_fd, const char *path, const mode_t *mode,
                     const struct timespec times[2])
{
    /* chmod and utimensat through the descriptor's /proc name: they act
     * on the file the confined open found, not on a path resolved again */
    int fd = open_beneath(root_fd, relative(path), O_PATH, 0);
    if (fd < 0)
        return fd;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    int rc = 0;
    if (mode && chmod(proc, *mode) < 0)
        rc = -errno;
    if (rc == 0 && times && utimensat(AT_FDCWD, proc, times, 0) < 0)
        rc = -errno;
    close(fd);
    return rc;
}
