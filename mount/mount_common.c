/*
 * What both namespaces of rfs-mount share (mount.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mount.h"

int mnt_ns_path(const struct mnt *m, const char *path, char *out, size_t size)
{
    int n = snprintf(out, size, "%s%s", m->prefix, path);
    if (n < 0 || (size_t) n >= size || (size_t) n > RFS_MAX_PATH)
        return -ENAMETOOLONG;
    if (n > 1 && out[n - 1] == '/')
        out[n - 1] = '\0';
    return 0;
}

int mnt_errno(int rc)
{
    if (rc == 0)
        return 0;
    if (rc > 0)
        return -rfs_errno_from_status(rc);
    if (rc == -ETIMEDOUT || rc == -ECONNREFUSED || rc == -ECONNRESET || rc == -EPIPE ||
        rc == -ENOTCONN || rc == -EHOSTUNREACH)
        return -ENOTCONN;
    return rc == -ENOMEM ? -ENOMEM : rc == -EKEYREJECTED || rc == -EACCES ? -EACCES : -EIO;
}

struct rfs_client *mnt_meta_of(struct mnt *m, uint32_t s, int *rc)
{
    struct rfs_client *c = &m->metas[s];
    const struct net_endpoint *at = &m->servers.at[s];
    *rc = 0;
    if (m->metas_up[s])
        return c;
    *rc = rfs_client_connect_with(c, at->host, at->port, &m->connect);
    if (*rc != 0) {
        if (c->why)
            fprintf(stderr, "rfs-mount: %s:%s: %s\n", at->host, at->port, c->why);
        return NULL;
    }
    m->metas_up[s] = 1;
    return c;
}

void mnt_meta_release(struct mnt *m, uint32_t s, int rc)
{
    if (rc < 0 || m->metas[s].broken) {
        rfs_client_close(&m->metas[s]);
        m->metas_up[s] = 0;
    }
}

int mnt_meta_call(struct mnt *m, uint32_t s, const char *path, mnt_meta_fn fn, void *arg)
{
    char ns[RFS_MAX_PATH + 1];
    int rc = mnt_ns_path(m, path, ns, sizeof ns);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&m->meta_lock);
    struct rfs_client *c = mnt_meta_of(m, s, &rc);
    if (c) {
        rc = fn(c, ns, arg);
        mnt_meta_release(m, s, rc);
    }
    pthread_mutex_unlock(&m->meta_lock);
    return mnt_errno(rc);
}

int mnt_mkdir_on(struct rfs_client *c, const char *ns, void *mode)
{
    return rfs_mkdir(c, ns, *(const uint32_t *) mode);
}

int mnt_rmdir_on(struct rfs_client *c, const char *ns, void *unused)
{
    (void) unused;
    return rfs_rmdir(c, ns);
}

struct setattr_args {
    uint32_t flags, mode;
    int64_t atime_ns, mtime_ns;
};

static int setattr_on(struct rfs_client *c, const char *ns, void *arg)
{
    const struct setattr_args *a = arg;
    return rfs_setattr(c, ns, a->flags, a->mode, a->atime_ns, a->mtime_ns);
}

int mnt_setattr(struct mnt *m, const char *path, uint32_t flags, mode_t mode, int64_t atime_ns,
                int64_t mtime_ns)
{
    struct setattr_args a = { flags, (uint32_t) mode, atime_ns, mtime_ns };
    return mnt_meta_call(m, 0, path, setattr_on, &a);
}

static struct timespec ts_of(int64_t ns)
{
    int64_t sec = ns / 1000000000, rest = ns % 1000000000;
    if (rest < 0) {                 /* before 1970: tv_nsec stays in [0, 1e9) */
        sec--;
        rest += 1000000000;
    }
    return (struct timespec) { .tv_sec = (time_t) sec, .tv_nsec = (long) rest };
}

void mnt_stat_of(const struct rfs_stat_rec *rec, struct stat *st)
{
    memset(st, 0, sizeof *st);
    /* "other" (a device, a socket in the export) shows as a file, which
     * the server refuses to open */
    st->st_mode = (mode_t) rec->perm | (rec->type == RFS_TYPE_DIR ? S_IFDIR : S_IFREG);
    st->st_nlink = rec->type == RFS_TYPE_DIR ? 2 : 1;
    st->st_size = (off_t) rec->size;
    st->st_blocks = (blkcnt_t) rec->blocks;
    st->st_blksize = 1 << 20;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_atim = ts_of(rec->atime_ns);
    st->st_mtim = ts_of(rec->mtime_ns);
    st->st_ctim = ts_of(rec->ctime_ns);
}

#define LIST_ROOM (64u << 10)

struct list_args {
    mnt_fill_fn fill;
    void *arg;
    int (*hide)(const char *name);
};

static int list_on(struct rfs_client *c, const char *ns, void *arg)
{
    const struct list_args *a = arg;
    uint8_t *buf = malloc(LIST_ROOM);
    if (!buf)
        return -ENOMEM;
    uint64_t index = 0, next, used;
    int rc;
    char name[RFS_MAX_NAME + 1];
    while ((rc = rfs_readdir(c, ns, index, buf, LIST_ROOM, &next, &used)) == RFS_OK &&
           used > 0) {
        for (uint64_t at = 0; at < used;) {
            uint32_t type;
            const char *p;
            size_t len;
            size_t took = rfs_dirent_decode(buf + at, used - at, &type, &p, &len);
            if (took == 0) {
                rc = -EPROTO;
                goto out;
            }
            memcpy(name, p, len);
            name[len] = '\0';
            at += took;
            if ((!a->hide || !a->hide(name)) && a->fill(a->arg, name, type) != 0)
                goto out;               /* the kernel's buffer is full */
        }
        index = next;
    }
out:
    free(buf);
    return rc;
}

int mnt_list(struct mnt *m, const char *path, mnt_fill_fn fill, void *arg,
             int (*hide)(const char *name))
{
    struct list_args a = { fill, arg, hide };
    return mnt_meta_call(m, 0, path, list_on, &a);
}
