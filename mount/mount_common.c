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

int mnt_meta_ready(struct mnt *m, struct rfs_client *c, int *up, const char *host,
                   const char *port)
{
    if (*up)
        return 0;
    int rc = rfs_client_connect_with(c, host, port, &m->connect);
    if (rc != 0) {
        if (c->why)
            fprintf(stderr, "rfs-mount: %s:%s: %s\n", host, port, c->why);
        return rc;
    }
    *up = 1;
    return 0;
}

void mnt_meta_done(struct rfs_client *c, int *up, int rc)
{
    if (rc < 0 || c->broken) {
        rfs_client_close(c);
        *up = 0;
    }
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

int mnt_list_on(struct rfs_client *c, const char *ns, mnt_fill_fn fill, void *arg,
                int (*hide)(const char *name))
{
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
            if ((!hide || !hide(name)) && fill(arg, name, type) != 0)
                goto out;               /* the kernel's buffer is full */
        }
        index = next;
    }
out:
    free(buf);
    return rc;
}
