/*
 * rfs-mount's namespaces: one rfsd export (rfs:) or a set of servers
 * holding striped files (rdma:), behind one table of operations that the
 * FUSE glue (rfs_mount.c) calls. Paths are the mount's ("/" its root);
 * every operation returns 0 (or a byte count) or -errno.
 */
#ifndef MOUNT_H_INCLUDED
#define MOUNT_H_INCLUDED

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "mount/mount_desc.h"
#include "proto/rfs_client.h"
#include "stripe/stripe_file.h"

struct mnt;
struct mnt_file;

typedef int (*mnt_fill_fn)(void *arg, const char *name, uint32_t type);

struct mnt_ops {
    int (*stat)(struct mnt *m, const char *path, struct stat *st);
    int (*list)(struct mnt *m, const char *path, mnt_fill_fn fill, void *arg);
    int (*mkdir)(struct mnt *m, const char *path, mode_t mode);
    int (*rmdir)(struct mnt *m, const char *path);
    int (*unlink)(struct mnt *m, const char *path);
    int (*rename)(struct mnt *m, const char *from, const char *to, uint32_t flags);
    /* flags RFS_SET_*, times in ns */
    int (*setattr)(struct mnt *m, const char *path, uint32_t flags, mode_t mode,
                   int64_t atime_ns, int64_t mtime_ns);
    /* flags: RFS_O_*, and O_TRUNC done here */
    int (*open)(struct mnt *m, const char *path, uint32_t flags, int truncate, mode_t mode,
                struct mnt_file **out);
    ssize_t (*read)(struct mnt_file *f, char *buf, size_t len, uint64_t off);
    ssize_t (*write)(struct mnt_file *f, const char *buf, size_t len, uint64_t off);
    int (*size)(struct mnt_file *f, uint64_t *size);
    int (*truncate)(struct mnt_file *f, uint64_t size);
    int (*sync)(struct mnt_file *f);
    int (*close)(struct mnt_file *f);
};

struct mnt {
    const struct mnt_ops *ops;
    char prefix[RFS_MAX_PATH];          /* the mount's root in the namespace ("" for "/") */
    struct rfs_connect_opts connect;
    struct mount_desc desc;             /* name: the mount root's ROMIO name; the hints */
    pthread_mutex_t meta_lock;          /* namespace calls share connections */
    /* the servers (rfs: one), a namespace connection to each */
    struct stripe_servers servers;
    struct rfs_client *metas;
    int *metas_up;
    /* rdma: new files' layout */
    uint64_t unit;
    uint32_t factor, replicas;
};

extern const struct mnt_ops mnt_rfs_ops, mnt_rdma_ops;

/* The namespace path of a mount path, in out; 0 or -ENAMETOOLONG. */
int mnt_ns_path(const struct mnt *m, const char *path, char *out, size_t size);
/* -errno of a call's result: a server's status, or a transport failure
 * (-ENOTCONN: the server is unreachable; EIO for what else broke). */
int mnt_errno(int rc);
/* With meta_lock held: the namespace connection to server s, made on
 * first use and again after a failure; NULL with *rc the failure. */
struct rfs_client *mnt_meta_of(struct mnt *m, uint32_t s, int *rc);
/* After a call on it: a transport failure closes it for the next call. */
void mnt_meta_release(struct mnt *m, uint32_t s, int rc);
/* fn(c, ns, arg) on server s's namespace connection, ns PATH's namespace
 * path, under meta_lock; 0 or -errno. */
typedef int (*mnt_meta_fn)(struct rfs_client *c, const char *ns, void *arg);
int mnt_meta_call(struct mnt *m, uint32_t s, const char *path, mnt_meta_fn fn, void *arg);
/* The namespace calls both namespaces make as one call on one server. */
int mnt_mkdir_on(struct rfs_client *c, const char *ns, void *mode);    /* uint32_t */
int mnt_rmdir_on(struct rfs_client *c, const char *ns, void *unused);
/* PATH's attributes on server 0 (rdma:: object 0's, what stat shows). */
int mnt_setattr(struct mnt *m, const char *path, uint32_t flags, mode_t mode, int64_t atime_ns,
                int64_t mtime_ns);
/* struct stat of a STAT record (owner: the mounting user). */
void mnt_stat_of(const struct rfs_stat_rec *rec, struct stat *st);
/* Every entry of directory PATH on server 0, given to fill; hide(name)
 * (NULL: none) leaves some out. */
int mnt_list(struct mnt *m, const char *path, mnt_fill_fn fill, void *arg,
             int (*hide)(const char *name));

#endif /* MOUNT_H_INCLUDED */
