/*
 * rfs-mount of one rfsd export (rfs:HOST:PORT:): namespace calls on one
 * shared connection, each open file on a connection of its own (its
 * calls then run beside other files').
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mount.h"

struct mnt_file {
    struct rfs_client c;
};

static int stat_on(struct rfs_client *c, const char *ns, void *rec)
{
    return rfs_stat_path(c, ns, rec);
}

static int unlink_on(struct rfs_client *c, const char *ns, void *unused)
{
    (void) unused;
    return rfs_unlink(c, ns);
}

static int rfs_stat_op(struct mnt *m, const char *path, struct stat *st)
{
    struct rfs_stat_rec rec;
    int rc = mnt_meta_call(m, 0, path, stat_on, &rec);
    if (rc == 0)
        mnt_stat_of(&rec, st);
    return rc;
}

static int rfs_list_op(struct mnt *m, const char *path, mnt_fill_fn fill, void *arg)
{
    return mnt_list(m, path, fill, arg, NULL);
}

static int rfs_mkdir_op(struct mnt *m, const char *path, mode_t mode)
{
    uint32_t mode32 = (uint32_t) mode;
    return mnt_meta_call(m, 0, path, mnt_mkdir_on, &mode32);
}

static int rfs_rmdir_op(struct mnt *m, const char *path)
{
    return mnt_meta_call(m, 0, path, mnt_rmdir_on, NULL);
}

static int rfs_unlink_op(struct mnt *m, const char *path)
{
    return mnt_meta_call(m, 0, path, unlink_on, NULL);
}

struct rename_args {
    const char *to;
    uint32_t flags;
};

static int rename_on(struct rfs_client *c, const char *ns, void *arg)
{
    const struct rename_args *a = arg;
    return rfs_rename(c, ns, a->to, a->flags);
}

static int rfs_rename_op(struct mnt *m, const char *from, const char *to, uint32_t flags)
{
    char to_ns[RFS_MAX_PATH + 1];
    int rc = mnt_ns_path(m, to, to_ns, sizeof to_ns);
    if (rc != 0)
        return rc;
    struct rename_args a = { to_ns, flags };
    return mnt_meta_call(m, 0, from, rename_on, &a);
}

static int rfs_open_op(struct mnt *m, const char *path, uint32_t flags, int truncate,
                       mode_t mode, struct mnt_file **out)
{
    char ns[RFS_MAX_PATH + 1];
    int rc = mnt_ns_path(m, path, ns, sizeof ns);
    if (rc != 0)
        return rc;
    struct mnt_file *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    rc = rfs_client_connect_with(&f->c, m->servers.at[0].host, m->servers.at[0].port,
                                 &m->connect);
    if (rc != 0) {
        free(f);
        return mnt_errno(rc);
    }
    struct rfs_stat st;
    rc = rfs_open(&f->c, 0, ns, flags, (uint32_t) mode, &st);
    if (rc == 0 && truncate)
        rc = rfs_ftruncate(&f->c, 0, 0);
    if (rc != 0) {
        rfs_client_close(&f->c);
        free(f);
        return mnt_errno(rc);
    }
    *out = f;
    return 0;
}

static ssize_t rfs_read_op(struct mnt_file *f, char *buf, size_t len, uint64_t off)
{
    uint64_t done;
    int rc = rfs_pread(&f->c, 0, buf, len, off, &done);
    return rc ? mnt_errno(rc) : (ssize_t) done;
}

static ssize_t rfs_write_op(struct mnt_file *f, const char *buf, size_t len, uint64_t off)
{
    int rc = rfs_pwrite(&f->c, 0, buf, len, off);
    return rc ? mnt_errno(rc) : (ssize_t) len;
}

static int rfs_size_op(struct mnt_file *f, uint64_t *size)
{
    struct rfs_stat st;
    int rc = rfs_fstat(&f->c, 0, &st);
    if (rc == 0)
        *size = st.size;
    return mnt_errno(rc);
}

static int rfs_truncate_op(struct mnt_file *f, uint64_t size)
{
    return mnt_errno(rfs_ftruncate(&f->c, 0, size));
}

static int rfs_sync_op(struct mnt_file *f)
{
    return mnt_errno(rfs_fsync(&f->c, 0));
}

static int rfs_close_op(struct mnt_file *f)
{
    int rc = f->c.broken ? 0 : rfs_close(&f->c, 0);
    rfs_client_close(&f->c);
    free(f);
    return mnt_errno(rc);
}

const struct mnt_ops mnt_rfs_ops = {
    .stat = rfs_stat_op, .list = rfs_list_op, .mkdir = rfs_mkdir_op, .rmdir = rfs_rmdir_op,
    .unlink = rfs_unlink_op, .rename = rfs_rename_op, .setattr = mnt_setattr,
    .open = rfs_open_op, .read = rfs_read_op, .write = rfs_write_op, .size = rfs_size_op,
    .truncate = rfs_truncate_op, .sync = rfs_sync_op, .close = rfs_close_op,
};
