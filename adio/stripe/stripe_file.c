/*
 * Striped files: open and create with the layout header, and the calls
 * that concern every object at once (size, truncate, sync, preallocate,
 * close, unlink). Requests to all objects go out before any reply is
 * read, so the servers work on them at the same time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stripe/stripe_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static int failed_at(struct stripe_file *f, int i, int rc)
{
    if (rc != 0 && f->failed < 0)
        f->failed = i;
    return rc;
}

/* Per object: the request to send it (its handle and op are set). */
typedef void (*fill_fn)(const struct stripe_file *f, uint32_t i, const void *arg,
                        struct rfs_req *req);

/*
 * One request to every object, then every reply; replies[i] gets object
 * i's fixed part. Returns the first failure (a transport failure first).
 */
static int all_objects(struct stripe_file *f, uint16_t op, fill_fn fill, const void *arg,
                       struct rfs_rep *replies)
{
    struct rfs_inflight sent[STRIPE_MAX_FACTOR];
    int status[STRIPE_MAX_FACTOR];
    int rc = 0;
    f->failed = -1;
    stripe_revive(f);
    for (uint32_t i = 0; i < f->layout.factor; i++) {
        struct rfs_req req = { .handle = f->obj[i].handle };
        if (fill)
            fill(f, i, arg, &req);
        status[i] = rfs_send(f->obj[i].client, op, &req, NULL, 0, &sent[i]);
    }
    for (uint32_t i = 0; i < f->layout.factor; i++) {
        struct rfs_rep rep = { 0 };
        uint64_t ignored;
        if (status[i] == 0)
            status[i] = rfs_recv(f->obj[i].client, &sent[i], NULL, 0, &rep, &ignored);
        if (replies)
            replies[i] = rep;
        stripe_keep_failure(f, &rc, i, status[i]);
    }
    return rc;
}

static uint64_t local_data(uint64_t object_size)
{
    return object_size > STRIPE_HDR_SIZE ? object_size - STRIPE_HDR_SIZE : 0;
}

int stripe_size(struct stripe_file *f, uint64_t *size)
{
    struct rfs_rep reps[STRIPE_MAX_FACTOR];
    int rc = all_objects(f, RFS_OP_FSTAT, NULL, NULL, reps);
    *size = 0;
    for (uint32_t i = 0; rc == 0 && i < f->layout.factor; i++) {
        uint64_t end = stripe_logical_end(&f->layout, i, local_data(reps[i].value));
        if (end > *size)
            *size = end;
    }
    return rc;
}

static void fill_truncate(const struct stripe_file *f, uint32_t i, const void *arg,
                          struct rfs_req *req)
{
    req->length = STRIPE_HDR_SIZE + stripe_local_size(&f->layout, i, *(const uint64_t *) arg);
}

void stripe_wrote(struct stripe_file *f)
{
    for (uint32_t i = 0; i < f->layout.factor; i++)
        rfs_shared_wrote(&f->obj[i]);
}

int stripe_truncate(struct stripe_file *f, uint64_t size)
{
    if (size > STRIPE_MAX_OFFSET)
        return RFS_E_FBIG;
    stripe_wrote(f);
    return all_objects(f, RFS_OP_FTRUNCATE, fill_truncate, &size, NULL);
}

int stripe_sync(struct stripe_file *f)
{
    int rc = all_objects(f, RFS_OP_FSYNC, NULL, NULL, NULL);
    for (uint32_t i = 0; rc == 0 && i < f->layout.factor; i++)
        rfs_shared_synced(&f->obj[i]);
    return rc;
}

/* The local data of object i in logical [range[0], range[1]). */
static void fill_prealloc(const struct stripe_file *f, uint32_t i, const void *arg,
                          struct rfs_req *req)
{
    const uint64_t *range = arg;
    uint64_t from = stripe_local_size(&f->layout, i, range[0]);
    req->offset = STRIPE_HDR_SIZE + from;
    req->length = stripe_local_size(&f->layout, i, range[1]) - from;
}

int stripe_prealloc(struct stripe_file *f, uint64_t offset, uint64_t len)
{
    uint64_t range[2] = { offset, offset + len };
    if (offset > STRIPE_MAX_OFFSET || len > STRIPE_MAX_OFFSET - offset)
        return RFS_E_FBIG;
    stripe_wrote(f);
    return all_objects(f, RFS_OP_PREALLOC, fill_prealloc, range, NULL);
}

int stripe_lock(struct stripe_file *f, uint32_t kind, uint64_t offset, uint64_t len, int wait)
{
    f->failed = -1;
    stripe_revive(f);
    int rc = failed_at(f, 0, rfs_lock(f->obj[0].client, f->obj[0].handle, kind, offset, len,
                                      wait));
    if (rc == 0)
        rfs_shared_locked(&f->obj[0], kind);
    return rc;
}

int stripe_close(struct stripe_file *f)
{
    int rc = 0;
    f->failed = -1;
    for (uint32_t i = 0; i < f->connected; i++) {
        int r = rfs_close(f->obj[i].client, f->obj[i].handle);
        if (rc == 0 && r != 0)
            rc = failed_at(f, (int) i, r);
        rfs_shared_give_back(&f->obj[i]);
    }
    f->connected = 0;
    free(f->path);
    f->path = NULL;
    stripe_io_release(f);
    return rc;
}

/* Object i's server learns the file's layout (at open, and again on a
 * new connection). */
static int send_layout(struct stripe_file *f, uint32_t i)
{
    return rfs_set_layout(f->obj[i].client, f->obj[i].handle, i, f->layout.factor,
                          f->layout.unit, STRIPE_HDR_SIZE);
}

/* Object i moved to a new connection: its server learns the layout. A
 * failure leaves the new connection broken, so it is tried again later. */
static void revive(struct stripe_file *f, uint32_t i)
{
    const struct rfs_shared *was = f->obj[i].conn;
    int rc = rfs_shared_revive(&f->obj[i], f->at[i].host, f->at[i].port, &f->connect,
                               f->share, f->path, f->flags, &f->why);
    if (rc == 0 && f->obj[i].conn != was)
        (void) send_layout(f, i);
}

void stripe_revive(struct stripe_file *f)
{
    for (uint32_t i = 0; i < f->layout.factor; i++)
        revive(f, i);
}

/* What a broken connection's replacement needs to open the objects again. */
static int keep_for_revive(struct stripe_file *f, const char *path,
                           const struct stripe_open_args *a)
{
    f->connect = a->connect;
    f->share = a->share;
    f->flags = a->flags;
    f->path = strdup(path);
    return f->path ? 0 : -ENOMEM;
}

/* Connect to server i and open its object of PATH. */
static int open_object(struct stripe_file *f, const struct stripe_servers *sv, uint32_t i,
                       const char *path, uint32_t flags, const struct stripe_open_args *a,
                       struct rfs_stat *st)
{
    f->at[i] = sv->at[i];
    int rc = rfs_shared_take(sv->at[i].host, sv->at[i].port, &a->connect, a->share,
                             &f->obj[i], &f->why);
    if (rc != 0)
        return failed_at(f, (int) i, rc);
    f->connected = i + 1;
    return failed_at(f, (int) i, rfs_open(f->obj[i].client, f->obj[i].handle, path, flags,
                                          a->mode, st));
}

/* The header of object i, or *empty when the object has no bytes at all. */
static int read_header(struct stripe_file *f, uint32_t i, struct stripe_header *h, int *empty)
{
    uint8_t buf[STRIPE_HDR_USED];
    uint64_t got = 0;
    int rc = rfs_pread(f->obj[i].client, f->obj[i].handle, buf, sizeof buf, 0, &got);
    f->stats.header_reads++;
    *empty = rc == 0 && got == 0;
    if (rc != 0 || *empty)
        return failed_at(f, (int) i, rc);
    return failed_at(f, (int) i, stripe_header_decode(buf, got, h) == 0 ? 0 : RFS_E_INVAL);
}

static int write_header(struct stripe_file *f, uint32_t i)
{
    uint8_t buf[STRIPE_HDR_USED];
    struct stripe_header h = { .layout = f->layout, .index = i };
    stripe_header_encode(&h, buf);
    int rc = rfs_ftruncate(f->obj[i].client, f->obj[i].handle, 0);
    if (rc == 0)
        rc = rfs_pwrite(f->obj[i].client, f->obj[i].handle, buf, sizeof buf, 0);
    return failed_at(f, (int) i, rc);
}

/* The layout of a new file from the open's arguments. */
static int new_layout(struct stripe_file *f, const struct stripe_servers *sv,
                      const struct stripe_open_args *a)
{
    f->layout.unit = a->unit ? a->unit : STRIPE_DEFAULT_UNIT;
    f->layout.factor = a->factor ? a->factor : sv->n;
    if (getrandom(&f->layout.file_id, sizeof f->layout.file_id, 0) !=
        (ssize_t) sizeof f->layout.file_id)
        return -EIO;
    if (stripe_layout_check(&f->layout) < 0 || f->layout.factor > sv->n) {
        f->layout.factor = 0;
        return RFS_E_INVAL;             /* f->failed stays -1: the request, no server */
    }
    return 0;
}

/* Objects 1.. of the file: created with their headers, or checked against object 0's. */
static int open_others(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                       const struct stripe_open_args *a, int create)
{
    uint32_t flags = a->flags & ~(RFS_O_EXCL | (create ? 0 : RFS_O_CREAT));
    for (uint32_t i = 1; i < f->layout.factor; i++) {
        struct stripe_header h;
        int empty = 0;
        int rc = open_object(f, sv, i, path, flags, a, NULL);
        if (rc == 0 && create)
            rc = write_header(f, i);
        else if (rc == 0)
            rc = read_header(f, i, &h, &empty);
        if (rc == 0 && !create &&
            (empty || h.index != i || h.layout.unit != f->layout.unit ||
             h.layout.factor != f->layout.factor || h.layout.file_id != f->layout.file_id))
            rc = failed_at(f, (int) i, RFS_E_INVAL);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/*
 * Whoever finds object 0 empty decides the layout under a lock of object
 * 0 (a range no logical offset reaches), so that processes creating the
 * same file at once (ROMIO's shared file pointer file is created so) agree
 * on one layout, and a reader never takes a file being created for an
 * empty one.
 */
#define STRIPE_CREATE_LOCK STRIPE_MAX_OFFSET

#define STRIPE_EMPTY_RETRIES 20     /* 50 ms apart */

/* A read lock for a read-only open, else a write lock; waits. */
static int create_lock(struct stripe_file *f, uint32_t flags)
{
    uint32_t kind = (flags & RFS_O_ACCMODE) == RFS_O_RDONLY ? RFS_LOCK_READ : RFS_LOCK_WRITE;
    return failed_at(f, 0, rfs_lock(f->obj[0].client, f->obj[0].handle, kind,
                                    STRIPE_CREATE_LOCK, 1, 1));
}

static int create_unlock(struct stripe_file *f)
{
    return rfs_lock(f->obj[0].client, f->obj[0].handle, RFS_LOCK_UNLOCK, STRIPE_CREATE_LOCK,
                    1, 0);
}

/* The layout from object 0's header, or a new one if it is empty and
 * the open may create. */
static int find_layout(struct stripe_file *f, const struct stripe_servers *sv,
                       const struct stripe_open_args *a, uint32_t flags, int *create,
                       int *empty)
{
    struct stripe_header h;
    int rc = read_header(f, 0, &h, empty);
    *create = 0;
    if (rc != 0)
        return rc;
    if (*empty && !(flags & RFS_O_CREAT))
        return failed_at(f, 0, RFS_E_INVAL);    /* an empty object is no striped file */
    if (*empty) {
        *create = 1;
        return new_layout(f, sv, a);
    }
    if (h.index != 0 || h.layout.factor > sv->n)    /* or the server list is too short */
        return failed_at(f, 0, RFS_E_INVAL);
    f->layout = h.layout;
    return 0;
}

static void open_init(struct stripe_file *f)
{
    memset(f, 0, sizeof *f);
    f->failed = -1;
    f->max_pairs = STRIPE_DEFAULT_PAIRS;
    f->max_inflight = STRIPE_DEFAULT_INFLIGHT;
    f->max_servers = STRIPE_DEFAULT_INFLIGHT_SERVERS;
}

/* The header must be read even by a write-only open: ask for read and
 * write access (as ROMIO does for data sieving); a file that may not be
 * read cannot be opened (RFS_E_ACCES). A collective open's other processes
 * open as the one that read the header did. */
static struct stripe_open_args read_write(const struct stripe_open_args *a)
{
    struct stripe_open_args rw = *a;
    if ((a->flags & RFS_O_ACCMODE) == RFS_O_WRONLY)
        rw.flags = (a->flags & ~RFS_O_ACCMODE) | RFS_O_RDWR;
    return rw;
}

/* Every object's server learns the layout; on failure all is closed. */
static int set_layouts(struct stripe_file *f, int rc)
{
    for (uint32_t i = 0; rc == 0 && i < f->layout.factor; i++)
        rc = failed_at(f, (int) i, send_layout(f, i));
    if (rc != 0) {
        int failed = f->failed;
        stripe_close(f);                /* closing object 0 drops the lock */
        f->failed = failed;
    }
    return rc;
}

int stripe_open_known(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                      const struct stripe_open_args *a, const struct stripe_layout *layout)
{
    open_init(f);
    if (layout->factor > sv->n || stripe_layout_check(layout) < 0)
        return RFS_E_INVAL;
    struct stripe_open_args rw = read_write(a);
    rw.flags &= ~(RFS_O_CREAT | RFS_O_EXCL);
    f->layout = *layout;
    int rc = keep_for_revive(f, path, &rw);
    for (uint32_t i = 0; rc == 0 && i < layout->factor; i++)
        rc = open_object(f, sv, i, path, rw.flags, &rw, NULL);
    return set_layouts(f, rc);
}

int stripe_open(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                const struct stripe_open_args *a)
{
    struct rfs_stat st = { 0, 0 };
    int create = 0;
    open_init(f);
    if (sv->n == 0)
        return RFS_E_INVAL;
    struct stripe_open_args rw = read_write(a);
    int rc = keep_for_revive(f, path, &rw);
    if (rc == 0)
        rc = open_object(f, sv, 0, path, rw.flags, &rw, &st);
    int locked = rc == 0 && (st.size == 0 || (rw.flags & RFS_O_CREAT)), empty = 0;
    for (int tries = 0; locked; tries++) {
        rc = create_lock(f, rw.flags);
        if (rc == 0)
            rc = find_layout(f, sv, &rw, rw.flags, &create, &empty);
        /* an empty object 0 without RFS_O_CREAT: perhaps a creator opened
         * it but has not locked it yet; look again a few times */
        if (!(rc == RFS_E_INVAL && empty) || tries == STRIPE_EMPTY_RETRIES)
            break;
        rc = failed_at(f, 0, create_unlock(f));
        if (rc != 0)
            break;
        f->failed = -1;
        nanosleep(&(struct timespec) { .tv_nsec = 50 * 1000 * 1000 }, NULL);
    }
    if (!locked && rc == 0)
        rc = find_layout(f, sv, &rw, rw.flags, &create, &empty);
    if (rc == 0)
        rc = open_others(f, sv, path, &rw, create);
    /* object 0's header last: a file is complete once it has one */
    if (rc == 0 && create)
        rc = write_header(f, 0);
    if (locked && rc == 0)
        rc = failed_at(f, 0, create_unlock(f));
    return set_layouts(f, rc);
}

int stripe_unlink(const struct rfs_connect_opts *o, const struct stripe_servers *sv,
                  const char *path)
{
    int rc = RFS_E_NOENT, found = 0;
    for (uint32_t i = 0; i < sv->n; i++) {
        struct rfs_client c;
        int r = rfs_client_connect_with(&c, sv->at[i].host, sv->at[i].port, o);
        if (r == 0)
            r = rfs_unlink(&c, path);
        rfs_client_close(&c);
        if (r == 0)
            found = 1;
        else if (r != RFS_E_NOENT && (rc == RFS_E_NOENT || (r < 0 && rc > 0)))
            rc = r;
    }
    return found && (rc == RFS_E_NOENT) ? 0 : rc;
}
