/*
 * rfs-mount: an rfsd export (rfs:HOST:PORT:[/DIR]) or the rdma: namespace
 * of a set of servers (rdma:[/DIR]) as a directory, through FUSE 3
 * (rfs-mount(1), docs/mount.md). The namespaces are in mount_rfs.c and
 * mount_rdma.c; this is the FUSE glue, the options and the descriptor
 * that sends MPI-IO on the mount's paths to the drivers (mount_desc.h).
 */
#define FUSE_USE_VERSION 31
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mount.h"
#include "net/net_endpoint.h"

#define MOUNT_IO_SIZE (1u << 20)        /* the kernel's requests up to this size */

static struct mnt the_mount;

static struct mnt *mnt_of_context(void)
{
    return fuse_get_context()->private_data;
}

/* An open file: the kernel may send one file's requests at once (its
 * readahead), and a file's calls go over its own connections one at a
 * time. */
struct open_file {
    pthread_mutex_t lock;
    struct mnt_file *f;
    struct open_file *prev, *next;      /* open_files */
};

/* Every open file: those the kernel never released (a lazy unmount's last
 * close can come after the session ended) are closed when it ends. */
static struct open_file *open_files;
static pthread_mutex_t open_files_lock = PTHREAD_MUTEX_INITIALIZER;

static void track(struct open_file *of)
{
    pthread_mutex_lock(&open_files_lock);
    of->next = open_files;
    if (open_files)
        open_files->prev = of;
    open_files = of;
    pthread_mutex_unlock(&open_files_lock);
}

static void untrack(struct open_file *of)
{
    pthread_mutex_lock(&open_files_lock);
    if (of->prev)
        of->prev->next = of->next;
    else
        open_files = of->next;
    if (of->next)
        of->next->prev = of->prev;
    pthread_mutex_unlock(&open_files_lock);
}

static int close_file(struct mnt *m, struct open_file *of)
{
    untrack(of);
    int rc = m->ops->close(of->f);
    pthread_mutex_destroy(&of->lock);
    free(of);
    return rc;
}

static struct open_file *open_of(const struct fuse_file_info *fi)
{
    return (struct open_file *) (uintptr_t) fi->fh;
}

static struct mnt_file *lock_file(const struct fuse_file_info *fi)
{
    struct open_file *of = open_of(fi);
    pthread_mutex_lock(&of->lock);
    return of->f;
}

static void unlock_file(const struct fuse_file_info *fi)
{
    pthread_mutex_unlock(&open_of(fi)->lock);
}

static void *mount_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    conn->max_write = MOUNT_IO_SIZE;
    conn->max_readahead = MOUNT_IO_SIZE;
    cfg->hard_remove = 1;           /* an unlinked open file stays readable on its server */
    cfg->use_ino = 0;
    return &the_mount;
}

static int mount_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    struct mnt *m = mnt_of_context();
    int rc = m->ops->stat(m, path, st);
    if (fi && (rc == 0 || rc == -ENOENT)) {
        /* an open file's size is its own: it may be being written, or
         * unlinked already */
        uint64_t size;
        int src = m->ops->size(lock_file(fi), &size);
        unlock_file(fi);
        if (src != 0)
            return src;
        if (rc == -ENOENT) {
            memset(st, 0, sizeof *st);
            st->st_mode = S_IFREG | 0600;
            st->st_uid = getuid();
            st->st_gid = getgid();
        }
        st->st_size = (off_t) size;
        rc = 0;
    }
    return rc;
}

struct fill_ctx {
    void *buf;
    fuse_fill_dir_t filler;
};

static int fill_one(void *arg, const char *name, uint32_t type)
{
    struct fill_ctx *f = arg;
    struct stat st = { .st_mode = type == RFS_TYPE_DIR ? S_IFDIR : S_IFREG };
    return f->filler(f->buf, name, &st, 0, 0);
}

static int mount_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
                         struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void) offset;
    (void) fi;
    (void) flags;
    struct mnt *m = mnt_of_context();
    struct fill_ctx f = { buf, filler };
    filler(buf, ".", NULL, 0, 0);
    filler(buf, "..", NULL, 0, 0);
    return m->ops->list(m, path, fill_one, &f);
}

static int mount_mkdir(const char *path, mode_t mode)
{
    struct mnt *m = mnt_of_context();
    return m->ops->mkdir(m, path, mode & 07777);
}

static int mount_rmdir(const char *path)
{
    struct mnt *m = mnt_of_context();
    return m->ops->rmdir(m, path);
}

static int mount_unlink(const char *path)
{
    struct mnt *m = mnt_of_context();
    return m->ops->unlink(m, path);
}

static int mount_rename(const char *from, const char *to, unsigned int flags)
{
    struct mnt *m = mnt_of_context();
    if (flags & ~RENAME_NOREPLACE)
        return -EINVAL;             /* RENAME_EXCHANGE: not across servers */
    return m->ops->rename(m, from, to, flags & RENAME_NOREPLACE ? RFS_RENAME_NOREPLACE : 0);
}

static int mount_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    (void) fi;
    struct mnt *m = mnt_of_context();
    return m->ops->setattr(m, path, RFS_SET_MODE, mode & 07777, 0, 0);
}

static int mount_utimens(const char *path, const struct timespec tv[2],
                         struct fuse_file_info *fi)
{
    (void) fi;
    struct mnt *m = mnt_of_context();
    const uint32_t set[2] = { RFS_SET_ATIME, RFS_SET_MTIME };
    const uint32_t now[2] = { RFS_SET_ATIME_NOW, RFS_SET_MTIME_NOW };
    uint32_t flags = 0;
    int64_t ns[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        if (tv[i].tv_nsec == UTIME_NOW)
            flags |= now[i];
        else if (tv[i].tv_nsec != UTIME_OMIT) {
            if (tv[i].tv_sec < 0)
                return -EINVAL;
            flags |= set[i];
            ns[i] = (int64_t) tv[i].tv_sec * 1000000000 + tv[i].tv_nsec;
        }
    }
    return flags ? m->ops->setattr(m, path, flags, 0, ns[0], ns[1]) : 0;
}

static uint32_t rfs_flags_of(int flags)
{
    uint32_t f = (flags & O_ACCMODE) == O_WRONLY ? RFS_O_WRONLY
               : (flags & O_ACCMODE) == O_RDWR ? RFS_O_RDWR : RFS_O_RDONLY;
    if (flags & O_CREAT)
        f |= RFS_O_CREAT;
    if (flags & O_EXCL)
        f |= RFS_O_EXCL;
    return f;
}

static int open_file(const char *path, int flags, mode_t mode, struct fuse_file_info *fi)
{
    struct mnt *m = mnt_of_context();
    struct open_file *of = calloc(1, sizeof *of);
    if (!of)
        return -ENOMEM;
    int rc = m->ops->open(m, path, rfs_flags_of(flags), (flags & O_TRUNC) != 0, mode & 07777,
                          &of->f);
    if (rc != 0) {
        free(of);
        return rc;
    }
    pthread_mutex_init(&of->lock, NULL);
    track(of);
    fi->fh = (uint64_t) (uintptr_t) of;
    return 0;
}

static int mount_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    return open_file(path, fi->flags | O_CREAT, mode, fi);
}

static int mount_open(const char *path, struct fuse_file_info *fi)
{
    return open_file(path, fi->flags, 0, fi);
}

static int mount_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    struct mnt *m = mnt_of_context();
    if (size < 0)
        return -EINVAL;
    if (fi) {
        int rc = m->ops->truncate(lock_file(fi), (uint64_t) size);
        unlock_file(fi);
        return rc;
    }
    struct mnt_file *f;
    int rc = m->ops->open(m, path, RFS_O_WRONLY, 0, 0, &f);
    if (rc != 0)
        return rc;
    rc = m->ops->truncate(f, (uint64_t) size);
    int crc = m->ops->close(f);
    return rc ? rc : crc;
}

static int mount_read(const char *path, char *buf, size_t size, off_t off,
                      struct fuse_file_info *fi)
{
    (void) path;
    ssize_t n = mnt_of_context()->ops->read(lock_file(fi), buf, size, (uint64_t) off);
    unlock_file(fi);
    return (int) n;
}

static int mount_write(const char *path, const char *buf, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    (void) path;
    ssize_t n = mnt_of_context()->ops->write(lock_file(fi), buf, size, (uint64_t) off);
    unlock_file(fi);
    return (int) n;
}

static int mount_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void) path;
    (void) datasync;
    int rc = mnt_of_context()->ops->sync(lock_file(fi));
    unlock_file(fi);
    return rc;
}

static int mount_release(const char *path, struct fuse_file_info *fi)
{
    (void) path;
    return close_file(mnt_of_context(), open_of(fi));
}

static int mount_statfs(const char *path, struct statvfs *st)
{
    (void) path;
    memset(st, 0, sizeof *st);
    st->f_bsize = st->f_frsize = MOUNT_IO_SIZE;
    st->f_namemax = RFS_MAX_NAME;
    return 0;
}

/* The descriptor of a path: its ROMIO name and the mount's hints. */
static int mount_getxattr(const char *path, const char *name, char *value, size_t size)
{
    struct mnt *m = mnt_of_context();
    if (strcmp(name, MOUNT_DESC_XATTR) != 0)
        return -ENODATA;
    struct mount_desc d = m->desc;
    char text[MOUNT_DESC_MAX], ns[RFS_MAX_PATH + 1];
    if (mnt_ns_path(m, path, ns, sizeof ns) != 0)
        return -ENAMETOOLONG;
    size_t n = strlen(d.name);
    if (snprintf(d.name + n, sizeof d.name - n, "%s", ns) >= (int) (sizeof d.name - n))
        return -ENAMETOOLONG;
    int len = mount_desc_format(&d, text, sizeof text);
    if (len == -EINVAL)
        return -ENODATA;            /* a name with a newline: MPI-IO goes through the mount */
    if (len < 0)
        return -E2BIG;
    if (size == 0)
        return len;
    if ((size_t) len > size)
        return -ERANGE;
    memcpy(value, text, (size_t) len);
    return len;
}

static int mount_listxattr(const char *path, char *list, size_t size)
{
    if (strchr(path, '\n'))
        return 0;                   /* no descriptor (mount_getxattr) */
    size_t len = sizeof MOUNT_DESC_XATTR;
    if (size == 0)
        return (int) len;
    if (size < len)
        return -ERANGE;
    memcpy(list, MOUNT_DESC_XATTR, len);
    return (int) len;
}

static const struct fuse_operations mount_ops = {
    .init = mount_init, .getattr = mount_getattr, .readdir = mount_readdir,
    .mkdir = mount_mkdir, .rmdir = mount_rmdir, .unlink = mount_unlink,
    .rename = mount_rename, .chmod = mount_chmod, .utimens = mount_utimens,
    .truncate = mount_truncate, .create = mount_create, .open = mount_open,
    .read = mount_read, .write = mount_write, .fsync = mount_fsync,
    .release = mount_release, .statfs = mount_statfs, .getxattr = mount_getxattr,
    .listxattr = mount_listxattr,
};

/* --- options --- */

struct options {
    char *spec, *servers, *key_file, *transport, *tls_ca;
    unsigned timeout_s, factor, replicas;
    unsigned long unit;
    int show_help;
};

#define OPT(t, p) { t, offsetof(struct options, p), 1 }
static const struct fuse_opt option_spec[] = {
    OPT("--servers=%s", servers), OPT("key_file=%s", key_file),
    OPT("transport=%s", transport), OPT("tls_ca=%s", tls_ca),
    OPT("timeout=%u", timeout_s), OPT("striping_factor=%u", factor),
    OPT("striping_unit=%lu", unit), OPT("replicas=%u", replicas),
    OPT("-h", show_help), OPT("--help", show_help),
    FUSE_OPT_END
};

static int take_spec(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    (void) outargs;
    struct options *o = data;
    if (key == FUSE_OPT_KEY_NONOPT && !o->spec) {
        o->spec = strdup(arg);
        return 0;
    }
    return 1;
}

static void usage(const char *prog)
{
    printf("usage: %s [options] SPEC MOUNTPOINT\n"
           "  SPEC: rfs:HOST:PORT:[/DIR] (one rfsd export) or rdma:[/DIR] (striped files)\n"
           "  --servers=HOST:PORT,...    rdma: servers (else $%s, $%s, %s)\n"
           "  -o key_file=FILE           authenticate with this key\n"
           "  -o transport=tcp|tls       TLS needs -o tls_ca or a key\n"
           "  -o tls_ca=FILE             the servers' CA (PEM)\n"
           "  -o timeout=SECONDS         a silent server fails a call after this (30)\n"
           "  -o striping_factor=N,striping_unit=BYTES,replicas=R   rdma: new files' layout\n"
           "  and FUSE's options (-f foreground, -d debug, -o attr_timeout=S, ...)\n",
           prog, STRIPE_SERVERS_ENV, STRIPE_CONFIG_ENV, STRIPE_CONFIG_FILE);
}

static int fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "rfs-mount: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return -1;
}

/* The rdma: servers: the option, else the drivers' variable and file. */
static int find_servers(const struct options *o, struct stripe_servers *sv)
{
    const char *env = getenv(STRIPE_SERVERS_ENV), *conf = getenv(STRIPE_CONFIG_ENV);
    const char *list = o->servers ? o->servers : env;
    if (list)
        return stripe_servers_parse(list, sv) == 0 ? 0
             : fail("%s: not HOST:PORT,...%s", list, "");
    if (stripe_servers_load(conf ? conf : STRIPE_CONFIG_FILE, sv) == 0)
        return 0;
    return fail("rdma: no servers: --servers=, $%s or %s", STRIPE_SERVERS_ENV,
                conf ? conf : STRIPE_CONFIG_FILE);
}

static int security(struct mnt *m, const struct options *o, struct rfs_key *key)
{
    char err[1024], real[PATH_MAX];
    int tls = o->transport && strcmp(o->transport, "tls") == 0;
    if (o->transport && !tls && strcmp(o->transport, "tcp") != 0)
        return fail("transport=%s: tcp or tls%s", o->transport, "");
    m->connect = (struct rfs_connect_opts) { .transport = &net_tcp_transport,
                                             .net = { .timeout_ms = (int) o->timeout_s * 1000 } };
    if (o->key_file) {
        if (rfs_key_load(o->key_file, key, err, sizeof err) < 0)
            return fail("%s%s", err, "");
        m->connect.key = key;
        mount_desc_add_hint(&m->desc, "rfs_key_file",
                            realpath(o->key_file, real) ? real : o->key_file);
    }
    if (tls) {
        int has_ca = o->tls_ca != NULL;
        if (net_tls_client_new(o->tls_ca, has_ca || !o->key_file, &m->connect.net.tls, err,
                               sizeof err) < 0)
            return fail("%s%s", err, "");
        m->connect.transport = &net_tls_transport;
        mount_desc_add_hint(&m->desc, "rfs_transport", "tls");
        if (has_ca)
            mount_desc_add_hint(&m->desc, "rfs_tls_ca",
                                realpath(o->tls_ca, real) ? real : o->tls_ca);
    }
    return 0;
}

/* SPEC into the namespace, its prefix and the descriptor's name. */
static int namespace_of(struct mnt *m, const struct options *o)
{
    const char *dir;
    if (strncmp(o->spec, "rdma:", 5) == 0) {
        dir = o->spec + 5;
        m->ops = &mnt_rdma_ops;
        if (find_servers(o, &m->servers) != 0)
            return -1;
        char list[MOUNT_DESC_VALUE];
        if (stripe_servers_format(&m->servers, list, sizeof list) != 0)
            return fail("too many servers for a descriptor%s%s", "", "");
        mount_desc_add_hint(&m->desc, "rdma_servers", list);
        m->unit = o->unit;
        m->factor = o->factor;
        m->replicas = o->replicas;
    } else if (strncmp(o->spec, "rfs:", 4) == 0) {
        const char *at = o->spec + 4;
        int took = net_endpoint_parse(at, strlen(at), &m->servers.at[0]);
        if (took < 0 || (at[took] != ':' && at[took] != '\0'))
            return fail("%s: not rfs:HOST:PORT:[/DIR]%s", o->spec, "");
        m->servers.n = 1;
        dir = at[took] ? at + took + 1 : "";
        m->ops = &mnt_rfs_ops;
    } else
        return fail("%s: SPEC is rfs:HOST:PORT:[/DIR] or rdma:[/DIR]%s", o->spec, "");
    m->metas = calloc(m->servers.n, sizeof *m->metas);
    m->metas_up = calloc(m->servers.n, sizeof *m->metas_up);
    if (!m->metas || !m->metas_up)
        return fail("out of memory%s%s", "", "");
    if (*dir && *dir != '/')
        return fail("%s: the directory must begin with /%s", o->spec, "");
    if (strlen(dir) >= sizeof m->prefix)
        return fail("%s: directory too long%s", o->spec, "");
    snprintf(m->prefix, sizeof m->prefix, "%s", dir);
    size_t n = strlen(m->prefix);
    if (n > 0 && m->prefix[n - 1] == '/')
        m->prefix[n - 1] = '\0';
    /* the descriptor's name: the namespace's prefix, to which a path of
     * the mount (in the namespace) is appended */
    if (m->ops == &mnt_rdma_ops)
        snprintf(m->desc.name, sizeof m->desc.name, "rdma:");
    else
        snprintf(m->desc.name, sizeof m->desc.name,
                 strchr(m->servers.at[0].host, ':') ? "rfs:[%s]:%s:" : "rfs:%s:%s:",
                 m->servers.at[0].host, m->servers.at[0].port);
    return 0;
}

/* The mount's root must answer a namespace call before the mount exists:
 * a server without the extension, a wrong key or an absent directory
 * fail here, said plainly. */
static int probe(struct mnt *m, const char *spec)
{
    struct stat st;
    int rc = m->ops->stat(m, "/", &st);
    if (rc == -EPROTO)
        return fail("%s: the server does not speak the protocol's namespace extension "
                    "(an rfsd older than rfs-mount; docs/protocol.md)%s", spec, "");
    if (rc != 0)
        return fail("%s: %s", spec, strerror(-rc));
    if (!S_ISDIR(st.st_mode))
        return fail("%s: %s", spec, strerror(ENOTDIR));
    return 0;
}

/* What main made, let go: connections, TLS, the key, the options. */
static void release(struct mnt *m, struct options *o, struct rfs_key *key)
{
    while (open_files)
        close_file(m, open_files);
    for (uint32_t s = 0; m->metas && s < m->servers.n; s++)
        if (m->metas_up[s])
            rfs_client_close(&m->metas[s]);
    free(m->metas);
    free(m->metas_up);
    net_tls_free(m->connect.net.tls);
    if (m->connect.key)
        rfs_key_wipe(key);
    free(o->spec);
    free(o->servers);
    free(o->key_file);
    free(o->transport);
    free(o->tls_ca);
}

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct options o = { .timeout_s = 30 };
    struct rfs_key key;
    struct mnt *m = &the_mount;
    int rc;
    if (fuse_opt_parse(&args, &o, option_spec, take_spec) != 0)
        return 1;
    if (o.show_help) {
        usage(argv[0]);
        fuse_opt_add_arg(&args, "--help");
        args.argv[0][0] = '\0';
        rc = fuse_main(args.argc, args.argv, &mount_ops, NULL);
    } else if (!o.spec) {
        usage(argv[0]);
        rc = 2;
    } else {
        pthread_mutex_init(&m->meta_lock, NULL);
        /* close-to-open by default: attributes and names are asked each
         * time (a file written by MPI-IO beside the mount shows at once);
         * the user's -o attr_timeout and the like come later and win. The
         * spec is the mount table's source, its commas escaped for -o. */
        char fsname[2 * RFS_MAX_PATH + 64];
        size_t n = (size_t) snprintf(fsname, sizeof fsname, "-osubtype=rfs-mount,fsname=");
        for (const char *c = o.spec; *c && n + 3 < sizeof fsname; c++) {
            if (*c == ',' || *c == '\\')
                fsname[n++] = '\\';
            fsname[n++] = *c;
        }
        fsname[n] = '\0';
        fuse_opt_insert_arg(&args, 1, "-oattr_timeout=0,entry_timeout=0,negative_timeout=0");
        fuse_opt_insert_arg(&args, 1, fsname);
        rc = namespace_of(m, &o) != 0 || security(m, &o, &key) != 0 || probe(m, o.spec) != 0
                 ? 1
                 : fuse_main(args.argc, args.argv, &mount_ops, NULL);
    }
    release(m, &o, &key);
    fuse_opt_free_args(&args);
    return rc;
}
