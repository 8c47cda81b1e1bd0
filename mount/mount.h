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
    /* rfs: one server */
    char host[256], port[32];
    struct rfs_client meta;
    int meta_up;
    /* rdma: the servers, a namespace connection to each, new files' layout */
    struct stripe_servers servers;
    struct rfs_client *metas;
    int *metas_up;
    uint64_t unit;
    uint32_t factor, replicas;
};

extern const struct mnt_ops mnt_rfs_ops, mnt_rdma_ops;

/* The namespace path of a mount path, in out; 0 or -ENAMETOOLONG. */
int mnt_ns_path(const struct mnt *m, const char *path, char *out, size_t size);
/* -errno of a call's result: a server's status, or a transport failure
 * (-ENOTCONN: the server is unreachable; EIO for what else broke). */
int mnt_errno(int rc);
/* A connection for namespace calls, made on first use and again after a
 * failure; 0 or the failure. Called with meta_lock held. */
int mnt_meta_ready(struct mnt *m, struct rfs_client *c, int *up, const char *host,
                   const char *port);
/* After a call on it: a transport failure closes it for the next call. */
void mnt_meta_done(struct rfs_client *c, int *up, int rc);
/* struct stat of a STAT record (owner: the mounting user). */
void mnt_stat_of(const struct rfs_stat_rec *rec, struct stat *st);
/* Every entry of directory ns on c, given to fill; hide(name) leaves some
 * out. */
int mnt_list_on(struct rfs_client *c, const char *ns, mnt_fill_fn fill, void *arg,
                int (*hide)(const char *name));

#endif /* MOUNT_H_INCLUDED */
