/*
 * rfs-mount of the rdma: namespace: striped files appear as ordinary files
 * with their logical size and bytes. Object 0 of every file, and so every
 * name, is on server 0 (stripe.h's placement): listings and attributes
 * come from there; directories exist on every server, so that a file of
 * any striping factor can be created in them. Each open file has
 * connections of its own (its calls run beside other files'); namespace
 * calls share one connection per server.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mount.h"

struct mnt_file {
    struct stripe_file sf;
};

/* ".NAME.copyC": a replica's object, not a name of the namespace */
static int is_copy_name(const char *name)
{
    size_t n = strlen(name);
    return n > 7 && name[0] == '.' && strncmp(name + n - 6, ".copy", 5) == 0 &&
           name[n - 1] >= '1' && name[n - 1] < (char) ('0' + STRIPE_MAX_REPLICAS);
}

static struct stripe_open_args open_args(const struct mnt *m, uint32_t flags, mode_t mode,
                                         int share)
{
    return (struct stripe_open_args) {
        .connect = m->connect, .share = share, .flags = flags, .mode = (uint32_t) mode,
        .unit = m->unit, .factor = m->factor, .replicas = m->replicas,
    };
}

/* The layout of the striped file ns, read from its headers (meta_lock held). */
static int layout_of(struct mnt *m, const char *ns, struct stripe_layout *l, uint64_t *size)
{
    struct stripe_file sf;
    struct stripe_open_args a = open_args(m, RFS_O_RDONLY, 0, 1);
    int rc = stripe_open(&sf, &m->servers, ns, &a);
    if (rc == 0) {
        *l = sf.layout;
        rc = size ? stripe_size(&sf, size) : 0;
    }
    int crc = stripe_close(&sf);
    return rc ? rc : crc;
}

static int rdma_stat_op(struct mnt *m, const char *path, struct stat *st)
{
    char ns[RFS_MAX_PATH + 1];
    struct rfs_stat_rec rec;
    int rc = mnt_ns_path(m, path, ns, sizeof ns);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&m->meta_lock);
    struct rfs_client *c = mnt_meta_of(m, 0, &rc);
    if (c) {
        rc = rfs_stat_path(c, ns, &rec);
        mnt_meta_release(m, 0, rc);
    }
    if (rc == 0 && rec.type == RFS_TYPE_REG) {
        struct stripe_layout l;
        uint64_t size;
        /* an object without a striped file's header shows as it is */
        int lrc = layout_of(m, ns, &l, &size);
        if (lrc == 0)
            rec.size = size;
        else if (lrc != RFS_E_INVAL)
            rc = lrc;
    }
    pthread_mutex_unlock(&m->meta_lock);
    if (rc == 0)
        mnt_stat_of(&rec, st);
    return mnt_errno(rc);
}

static int rdma_list_op(struct mnt *m, const char *path, mnt_fill_fn fill, void *arg)
{
    return mnt_list(m, path, fill, arg, is_copy_name);
}

/* fn on server 0, then (if it did it) on every other server, where
 * `ignore` is no failure: 0 or the first failure. */
static int on_all_servers(struct mnt *m, const char *path, mnt_meta_fn fn, void *arg,
                          int ignore)
{
    char ns[RFS_MAX_PATH + 1];
    int rc = mnt_ns_path(m, path, ns, sizeof ns);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&m->meta_lock);
    for (uint32_t s = 0; s < m->servers.n; s++) {
        int r;
        struct rfs_client *c = mnt_meta_of(m, s, &r);
        if (c) {
            r = fn(c, ns, arg);
            mnt_meta_release(m, s, r);
        }
        if (s == 0 && r != 0) {
            rc = r;
            break;
        }
        if (r != 0 && r != ignore && rc == 0)
            rc = r;
    }
    pthread_mutex_unlock(&m->meta_lock);
    return mnt_errno(rc);
}

static int rdma_mkdir_op(struct mnt *m, const char *path, mode_t mode)
{
    uint32_t mode32 = (uint32_t) mode;
    return on_all_servers(m, path, mnt_mkdir_on, &mode32, RFS_E_EXIST);
}

static int rdma_rmdir_op(struct mnt *m, const char *path)
{
    return on_all_servers(m, path, mnt_rmdir_on, NULL, RFS_E_NOENT);
}

static int rdma_unlink_op(struct mnt *m, const char *path)
{
    char ns[RFS_MAX_PATH + 1];
    int rc = mnt_ns_path(m, path, ns, sizeof ns);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&m->meta_lock);
    rc = stripe_unlink(&m->connect, &m->servers, ns);
    pthread_mutex_unlock(&m->meta_lock);
    return mnt_errno(rc);
}

/* The name copy c of PATH has on its server, in out. */
static int copy_name(const char *path, uint32_t copy, char *out, size_t size)
{
    return stripe_copy_path(path, copy, out, size) == 0 ? 0 : RFS_E_NAMETOOLONG;
}

/* rename(2) of copy c of from to copy c of to on server s. */
static int rename_copy(struct mnt *m, uint32_t s, uint32_t copy, const char *from,
                       const char *to)
{
    char a[RFS_MAX_PATH + 16], b[RFS_MAX_PATH + 16];
    int rc = copy_name(from, copy, a, sizeof a);
    if (rc == 0)
        rc = copy_name(to, copy, b, sizeof b);
    struct rfs_client *c = rc == 0 ? mnt_meta_of(m, s, &rc) : NULL;
    if (c) {
        rc = rfs_rename(c, a, b, 0);
        mnt_meta_release(m, s, rc);
    }
    return rc;
}

/* Servers holding copy c of some object of l, as bits per copy. */
static void holders(const struct stripe_layout *l, uint64_t held[STRIPE_MAX_REPLICAS])
{
    memset(held, 0, STRIPE_MAX_REPLICAS * sizeof *held);
    for (uint32_t c = 0; c < stripe_copies(l); c++)
        for (uint32_t o = 0; o < l->factor; o++)
            held[c] |= UINT64_C(1) << stripe_copy_server(l, o, c);
}

/*
 * Every object and copy of the striped file `from` renamed over the
 * same-named ones of `to` (meta_lock held): each server's rename replaces
 * its object of an old `to` at once, and what an old `to` had beyond
 * `from`'s objects is removed after. Copy 0 of object 0, the name, moves
 * last; a failure renames back what moved, so that `from` stays whole.
 * Not atomic across servers: a reader of `to` meanwhile may see objects of
 * both files (docs/mount.md).
 */
static int rename_file(struct mnt *m, const char *from, const char *to, uint32_t flags)
{
    struct stripe_layout l, old = { 0 };
    struct rfs_stat_rec rec;
    uint64_t held[STRIPE_MAX_REPLICAS], had[STRIPE_MAX_REPLICAS] = { 0 };
    int rc = layout_of(m, from, &l, NULL);
    struct rfs_client *c0 = rc == 0 ? mnt_meta_of(m, 0, &rc) : NULL;
    if (!c0)
        return rc;
    int exists = rfs_stat_path(c0, to, &rec);
    mnt_meta_release(m, 0, exists);
    if (exists != 0 && exists != RFS_E_NOENT)
        return exists;
    if (exists == 0) {
        if (flags & RFS_RENAME_NOREPLACE)
            return RFS_E_EXIST;
        if (rec.type == RFS_TYPE_DIR)
            return RFS_E_ISDIR;
        int orc = layout_of(m, to, &old, NULL);
        if (orc == 0 && old.file_id == l.file_id)
            return 0;               /* one file by two names (a linked directory) */
        if (orc == 0)
            holders(&old, had);
        else if (orc != RFS_E_INVAL)
            return orc;             /* an object of the old file is unreachable */
    }
    holders(&l, held);
    uint32_t slots = l.factor * stripe_copies(&l), p;
    for (p = slots; p-- > 0;)
        if ((rc = rename_copy(m, stripe_slot_server(&l, p), p / l.factor, from, to)) != 0)
            break;
    if (rc != 0) {
        while (++p < slots)
            rename_copy(m, stripe_slot_server(&l, p), p / l.factor, to, from);
        return rc;
    }
    for (uint32_t copy = 0; copy < STRIPE_MAX_REPLICAS; copy++)
        for (uint32_t s = 0; s < m->servers.n; s++) {
            char name[RFS_MAX_PATH + 16];
            int r;
            struct rfs_client *c;
            if (!(had[copy] >> s & 1) || held[copy] >> s & 1 ||
                copy_name(to, copy, name, sizeof name) != 0 || !(c = mnt_meta_of(m, s, &r)))
                continue;
            mnt_meta_release(m, s, rfs_unlink(c, name));
        }
    return 0;
}

static int rename_on(struct rfs_client *c, const char *ns, void *to)
{
    return rfs_rename(c, ns, to, 0);
}

static int rdma_rename_op(struct mnt *m, const char *from, const char *to, uint32_t flags)
{
    char a[RFS_MAX_PATH + 1], b[RFS_MAX_PATH + 1];
    struct rfs_stat_rec rec;
    int rc;
    if ((rc = mnt_ns_path(m, from, a, sizeof a)) != 0 ||
        (rc = mnt_ns_path(m, to, b, sizeof b)) != 0)
        return rc;
    pthread_mutex_lock(&m->meta_lock);
    struct rfs_client *c = mnt_meta_of(m, 0, &rc);
    if (c) {
        rc = rfs_stat_path(c, a, &rec);
        mnt_meta_release(m, 0, rc);
    }
    int is_dir = rc == 0 && rec.type == RFS_TYPE_DIR;
    if (rc == 0 && !is_dir)
        rc = rename_file(m, a, b, flags);
    pthread_mutex_unlock(&m->meta_lock);
    if (rc != 0 || !is_dir)
        return mnt_errno(rc);
    return on_all_servers(m, from, rename_on, b, RFS_E_NOENT);
}

static int rdma_open_op(struct mnt *m, const char *path, uint32_t flags, int truncate,
                        mode_t mode, struct mnt_file **out)
{
    char ns[RFS_MAX_PATH + 1];
    int rc = mnt_ns_path(m, path, ns, sizeof ns);
    if (rc != 0)
        return rc;
    struct mnt_file *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    struct stripe_open_args a = open_args(m, flags, mode, 0);
    rc = stripe_open(&f->sf, &m->servers, ns, &a);
    if (rc == 0 && truncate)
        rc = stripe_truncate(&f->sf, 0);
    if (rc != 0) {
        stripe_close(&f->sf);
        free(f);
        return mnt_errno(rc);
    }
    *out = f;
    return 0;
}

static ssize_t rdma_io(struct mnt_file *f, char *buf, size_t len, uint64_t off, int is_write)
{
    const struct stripe_view whole = { 0 };
    uint64_t moved = 0;
    int rc = stripe_io(&f->sf, STRIPE_LIST, &whole, off, len, buf, is_write, &moved);
    return rc ? mnt_errno(rc) : (ssize_t) moved;
}

static ssize_t rdma_read_op(struct mnt_file *f, char *buf, size_t len, uint64_t off)
{
    return rdma_io(f, buf, len, off, 0);
}

static ssize_t rdma_write_op(struct mnt_file *f, const char *buf, size_t len, uint64_t off)
{
    /* stripe_io only reads buf for a write */
    return rdma_io(f, (char *) buf, len, off, 1);
}

static int rdma_size_op(struct mnt_file *f, uint64_t *size)
{
    return mnt_errno(stripe_size(&f->sf, size));
}

static int rdma_truncate_op(struct mnt_file *f, uint64_t size)
{
    return mnt_errno(stripe_truncate(&f->sf, size));
}

static int rdma_sync_op(struct mnt_file *f)
{
    return mnt_errno(stripe_sync(&f->sf));
}

static int rdma_close_op(struct mnt_file *f)
{
    int rc = stripe_close(&f->sf);
    free(f);
    return mnt_errno(rc);
}

const struct mnt_ops mnt_rdma_ops = {
    .stat = rdma_stat_op, .list = rdma_list_op, .mkdir = rdma_mkdir_op, .rmdir = rdma_rmdir_op,
    .unlink = rdma_unlink_op, .rename = rdma_rename_op, .setattr = mnt_setattr,
    .open = rdma_open_op, .read = rdma_read_op, .write = rdma_write_op, .size = rdma_size_op,
    .truncate = rdma_truncate_op, .sync = rdma_sync_op, .close = rdma_close_op,
};
