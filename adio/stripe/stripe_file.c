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

static int failed_at(struct stripe_file *f, int server, int rc)
{
    if (rc != 0 && f->failed < 0)
        f->failed = server;
    return rc;
}

/* Per object: the request to send it (its handle and op are set). */
typedef void (*fill_fn)(const struct stripe_file *f, uint32_t i, const void *arg,
                        struct rfs_req *req);

enum pick { PICK_READ, PICK_WRITE };

/* Whether slot p takes a request of the kind `pick`: one copy of each
 * object to read; to write, the current copies, then (after) the
 * resyncing ones, as data writes (a resync counts on that order). */
static int picked(const struct stripe_file *f, const struct stripe_route *r, uint32_t p,
                  enum pick pick, int after)
{
    if (!f->obj[p].client)
        return 0;
    if (pick == PICK_READ)
        return !after && stripe_read_slot(f, r, p % f->layout.factor) == (int) p;
    return stripe_write_slot(f, r, p, after);
}

/* One request to each slot picked in this pass, then every reply. */
static int one_pass(struct stripe_file *f, uint16_t op, fill_fn fill, const void *arg,
                    const struct iovec *data, struct rfs_rep *replies, enum pick pick,
                    const struct stripe_route *r, int after)
{
    struct rfs_inflight sent[STRIPE_MAX_SLOTS];
    int status[STRIPE_MAX_SLOTS], go[STRIPE_MAX_SLOTS];
    int rc = 0;
    for (uint32_t p = 0; p < stripe_slots(f); p++) {
        struct rfs_req req = { .handle = f->obj[p].handle };
        if (!(go[p] = picked(f, r, p, pick, after)))
            continue;
        if (fill)
            fill(f, p % f->layout.factor, arg, &req);
        status[p] = rfs_send(f->obj[p].client, op, &req, data, data ? 1 : 0, &sent[p]);
    }
    for (uint32_t p = 0; p < stripe_slots(f); p++) {
        struct rfs_rep rep = { 0 };
        uint64_t ignored;
        if (!go[p])
            continue;
        if (status[p] == 0)
            status[p] = rfs_recv(f->obj[p].client, &sent[p], NULL, 0, &rep, &ignored);
        if (replies)
            replies[p] = rep;
        stripe_slot_failure(f, &rc, p, status[p]);
    }
    return rc;
}

/*
 * The request to the slots picked (the same data, if any, to each);
 * replies[p] gets slot p's fixed part.
 * Returns the first failure (a transport failure first); a replicated
 * file goes on without the servers it loses, a read from another copy.
 */
static int all_slots(struct stripe_file *f, uint16_t op, fill_fn fill, const void *arg,
                     const struct iovec *data, struct rfs_rep *replies, enum pick pick)
{
    struct stripe_route r;
    int rc = 0;
    f->failed = -1;
    stripe_revive(f);
    for (int again = 1; rc == 0 && again;) {
        rc = stripe_refresh(f);
        if (rc != 0)
            return rc;
        stripe_route_of(f, &r);
        if (pick == PICK_WRITE)
            f->skipped |= r.skip;       /* stripe_settle_writes marks them */
        rc = one_pass(f, op, fill, arg, data, replies, pick, &r, 0);
        if (rc == 0 && pick == PICK_WRITE && r.after)
            rc = one_pass(f, op, fill, arg, data, replies, pick, &r, 1);
        again = pick == PICK_READ && (f->down & r.avoid) != f->down;   /* lost one */
    }
    return pick == PICK_WRITE ? stripe_settle_writes(f, rc) : rc;
}

static uint64_t local_data(uint64_t object_size)
{
    return object_size > STRIPE_HDR_SIZE ? object_size - STRIPE_HDR_SIZE : 0;
}

int stripe_size(struct stripe_file *f, uint64_t *size)
{
    struct rfs_rep reps[STRIPE_MAX_SLOTS];
    struct stripe_route r;
    int rc = all_slots(f, RFS_OP_FSTAT, NULL, NULL, NULL, reps, PICK_READ);
    stripe_route_of(f, &r);
    *size = 0;
    for (uint32_t i = 0; rc == 0 && i < f->layout.factor; i++) {
        int p = stripe_read_slot(f, &r, i);
        uint64_t end = stripe_logical_end(&f->layout, i, local_data(reps[p].value));
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
    for (uint32_t p = 0; p < stripe_slots(f); p++)
        if (f->obj[p].client)
            rfs_shared_wrote(&f->obj[p]);
}

int stripe_truncate(struct stripe_file *f, uint64_t size)
{
    if (size > STRIPE_MAX_OFFSET)
        return RFS_E_FBIG;
    stripe_wrote(f);
    return all_slots(f, RFS_OP_FTRUNCATE, fill_truncate, &size, NULL, NULL, PICK_WRITE);
}

int stripe_sync(struct stripe_file *f)
{
    int rc = all_slots(f, RFS_OP_FSYNC, NULL, NULL, NULL, NULL, PICK_WRITE);
    for (uint32_t p = 0; rc == 0 && p < stripe_slots(f); p++)
        if (f->obj[p].client && !stripe_slot_lost(f, p))
            rfs_shared_synced(&f->obj[p]);
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
    return all_slots(f, RFS_OP_PREALLOC, fill_prealloc, range, NULL, NULL, PICK_WRITE);
}

struct lease_args {
    uint32_t kind;
    uint64_t range[2];
};

/* A TAKE holds object i's local data in the logical range (a copy's
 * bytes are leased on its own server: a read may go to any copy). */
static void fill_lease(const struct stripe_file *f, uint32_t i, const void *arg,
                       struct rfs_req *req)
{
    const struct lease_args *a = arg;
    req->flags = a->kind;
    if (a->kind == RFS_LEASE_TAKE)
        fill_prealloc(f, i, a->range, req);
}

int stripe_lease(struct stripe_file *f, uint32_t kind, const struct rfs_lease_args *l)
{
    static const struct rfs_lease_args none;
    const struct rfs_lease_args *la = l ? l : &none;
    struct lease_args a = { kind, { la->offset, la->offset + la->length } };
    uint8_t out[RFS_LEASE_DATA];
    struct rfs_req unused;
    struct iovec data = { out, kind == RFS_LEASE_DRAIN ? 0 : sizeof out };
    if (la->offset > STRIPE_MAX_OFFSET || la->length > STRIPE_MAX_OFFSET - la->offset)
        return RFS_E_FBIG;
    rfs_lease_request(0, kind, la, &unused, out);
    return all_slots(f, RFS_OP_LEASE, fill_lease, &a, data.iov_len ? &data : NULL, NULL,
                     PICK_WRITE);
}

/* Locks are held by the server of object 0's first copy this open can
 * read (the lost server's locks are lost with it). */
int stripe_lock(struct stripe_file *f, uint32_t kind, uint64_t offset, uint64_t len, int wait)
{
    struct stripe_route r;
    f->failed = -1;
    stripe_revive(f);
    stripe_route_of(f, &r);
    int p = stripe_read_slot(f, &r, 0);
    if (p < 0)
        return stripe_readable(f);
    int rc = failed_at(f, (int) stripe_slot_server(&f->layout, (uint32_t) p),
                       rfs_lock(f->obj[p].client, f->obj[p].handle, kind, offset, len, wait));
    if (rc == 0)
        rfs_shared_locked(&f->obj[p], kind);
    return rc;
}

/* Closes slots [from, to); a replicated file goes on without a server it
 * loses (one that this process never needed since it was lost is found
 * so only now). */
static void close_slots(struct stripe_file *f, uint32_t from, uint32_t to, int *rc)
{
    for (uint32_t p = from; p < to; p++) {
        if (!f->obj[p].client)
            continue;
        uint32_t server = f->layout.factor ? stripe_slot_server(&f->layout, p) : p;
        int r = f->down >> server & 1 ? 0 : rfs_close(f->obj[p].client, f->obj[p].handle);
        /* (a file whose layout is not known yet has one slot open, no copies) */
        if (r != 0 && !(f->layout.factor && stripe_slot_failure(f, rc, p, r)) && *rc == 0)
            *rc = failed_at(f, (int) server, r);
        rfs_shared_give_back(&f->obj[p]);
    }
}

/* Every slot closed, the servers' copies 0 last: they hold the replica
 * state, where a server lost with this process's writes not synced is
 * marked stale first (it may have lost them). */
int stripe_close(struct stripe_file *f)
{
    int rc = 0, unsynced = 0;
    uint32_t states = stripe_copies(&f->layout) > 1 ? f->layout.factor : 0;
    f->failed = -1;
    for (uint32_t p = 0; p < STRIPE_MAX_SLOTS; p++)
        unsynced |= f->obj[p].client && f->obj[p].unsynced;
    close_slots(f, states, STRIPE_MAX_SLOTS, &rc);
    if (states && unsynced)
        rc = stripe_settle_writes(f, rc);
    close_slots(f, 0, states, &rc);
    free(f->path);
    f->path = NULL;
    stripe_io_release(f);
    return rc;
}

/* Slot p's server learns the layout (at open, and again on a new
 * connection): the slot holds object p % factor. */
static int send_layout(struct stripe_file *f, uint32_t p)
{
    return rfs_set_layout(f->obj[p].client, f->obj[p].handle, p % f->layout.factor,
                          f->layout.factor, f->layout.unit, STRIPE_HDR_SIZE);
}

/* The name of slot p's copy; 0 or -ENAMETOOLONG. */
static int slot_path(const struct stripe_file *f, const char *path, uint32_t p, char *out,
                     size_t size)
{
    return stripe_copy_path(path, p / f->layout.factor, out, size);
}

/* The connections copy c of this process's files share (rfs_shared_take):
 * each copy its own, as one call sends to several copies on one server. */
static int slot_share(int share, uint32_t copy)
{
    return share ? share + (int) copy : 0;
}

/* Slot p moved to a new connection: its server learns the layout. A
 * failure leaves the new connection broken, so it is tried again later. */
static void revive(struct stripe_file *f, uint32_t p)
{
    const struct rfs_shared *was = f->obj[p].conn;
    uint32_t server = stripe_slot_server(&f->layout, p);
    char name[RFS_MAX_PATH + 1];
    if (!f->obj[p].client || f->down >> server & 1 ||
        slot_path(f, f->path, p, name, sizeof name) != 0)
        return;
    int rc = rfs_shared_revive(&f->obj[p], f->at[server].host, f->at[server].port, &f->connect,
                               slot_share(f->share, p / f->layout.factor), name, f->flags,
                               &f->why);
    if (rc == 0 && f->obj[p].conn != was)
        (void) send_layout(f, p);
}

void stripe_revive(struct stripe_file *f)
{
    for (uint32_t p = 0; p < stripe_slots(f); p++)
        revive(f, p);
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

/* Connect to server `server` (at) and open NAME, copy `copy`, there as
 * `slot`. */
static int open_on(struct stripe_file *f, const struct net_endpoint *at, uint32_t server,
                   uint32_t copy, struct rfs_shared_file *slot, const char *name,
                   uint32_t flags, const struct stripe_open_args *a, struct rfs_stat *st)
{
    f->at[server] = *at;
    int rc = rfs_shared_take(at->host, at->port, &a->connect, slot_share(a->share, copy), slot,
                             &f->why);
    if (rc == 0)
        rc = rfs_open(slot->client, slot->handle, name, flags, a->mode, st);
    return failed_at(f, (int) server, rc);
}

int stripe_readmit(struct stripe_file *f, uint32_t server)
{
    struct stripe_open_args a = { .connect = f->connect, .share = f->share, .flags = f->flags };
    int rc = 0;
    for (uint32_t p = 0; rc == 0 && p < stripe_slots(f); p++) {
        char name[RFS_MAX_PATH + 1];
        if (stripe_slot_server(&f->layout, p) != server)
            continue;
        rfs_shared_give_back(&f->obj[p]);
        rc = slot_path(f, f->path, p, name, sizeof name);
        if (rc == 0)
            rc = open_on(f, &f->at[server], server, p / f->layout.factor, &f->obj[p], name,
                         f->flags & ~(RFS_O_CREAT | RFS_O_EXCL), &a, NULL);
        if (rc == 0)
            rc = send_layout(f, p);
    }
    if (rc == 0)
        f->down &= ~(UINT64_C(1) << server);
    return rc;
}

/* Open slot p of PATH (f->layout known). */
static int open_slot(struct stripe_file *f, const struct stripe_servers *sv, uint32_t p,
                     const char *path, uint32_t flags, const struct stripe_open_args *a,
                     struct rfs_stat *st)
{
    char name[RFS_MAX_PATH + 1];
    if (slot_path(f, path, p, name, sizeof name) != 0)
        return RFS_E_NAMETOOLONG;
    uint32_t server = stripe_slot_server(&f->layout, p);
    return open_on(f, &sv->at[server], server, p / f->layout.factor, &f->obj[p], name, flags, a,
                   st);
}

/* The header of an open object, or *empty when it has no bytes at all. */
static int header_of(struct stripe_file *f, const struct rfs_shared_file *o, uint32_t server,
                     struct stripe_header *h, int *empty)
{
    uint8_t buf[STRIPE_HDR_USED];
    uint64_t got = 0;
    int rc = rfs_pread(o->client, o->handle, buf, sizeof buf, 0, &got);
    f->stats.header_reads++;
    *empty = rc == 0 && got == 0;
    if (rc != 0 || *empty)
        return failed_at(f, (int) server, rc);
    return failed_at(f, (int) server, stripe_header_decode(buf, got, h) == 0 ? 0 : RFS_E_INVAL);
}

static int read_header(struct stripe_file *f, uint32_t p, struct stripe_header *h, int *empty)
{
    return header_of(f, &f->obj[p], stripe_slot_server(&f->layout, p), h, empty);
}

static int write_header(struct stripe_file *f, uint32_t p)
{
    uint8_t buf[STRIPE_HDR_USED];
    struct stripe_header h = { .layout = f->layout, .index = p % f->layout.factor };
    stripe_header_encode(&h, buf);
    int rc = rfs_ftruncate(f->obj[p].client, f->obj[p].handle, 0);
    if (rc == 0)
        rc = rfs_pwrite(f->obj[p].client, f->obj[p].handle, buf, sizeof buf, 0);
    return failed_at(f, (int) stripe_slot_server(&f->layout, p), rc);
}

/* The layout of a new file from the open's arguments. */
static int new_layout(struct stripe_file *f, const struct stripe_servers *sv,
                      const struct stripe_open_args *a)
{
    f->layout.unit = a->unit ? a->unit : STRIPE_DEFAULT_UNIT;
    f->layout.factor = a->factor ? a->factor : sv->n;
    f->layout.replicas = a->replicas ? a->replicas : 1;
    if (getrandom(&f->layout.file_id, sizeof f->layout.file_id, 0) !=
        (ssize_t) sizeof f->layout.file_id)
        return -EIO;
    if (stripe_layout_check(&f->layout) < 0 || f->layout.factor > sv->n) {
        f->layout.factor = 0;
        return RFS_E_INVAL;             /* f->failed stays -1: the request, no server */
    }
    return 0;
}

static int same_file(const struct stripe_header *h, uint32_t index, const struct stripe_layout *l)
{
    return h->index == index && h->layout.unit == l->unit && h->layout.factor == l->factor &&
           stripe_copies(&h->layout) == stripe_copies(l) && h->layout.file_id == l->file_id;
}

/* The slots of the file but `first` (whose header gave the layout):
 * created with their headers, or checked against the layout. An existing
 * replicated file goes on without the servers it cannot reach. */
static int open_others(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                       const struct stripe_open_args *a, int create, uint32_t first)
{
    uint32_t flags = a->flags & ~(RFS_O_EXCL | (create ? 0 : RFS_O_CREAT));
    for (uint32_t p = 0; p < stripe_slots(f); p++) {
        struct stripe_header h;
        int empty = 0, rc = 0;
        if (p == first || stripe_slot_lost(f, p))
            continue;
        rc = open_slot(f, sv, p, path, flags, a, NULL);
        if (rc == 0 && create)
            rc = write_header(f, p);
        else if (rc == 0)
            rc = read_header(f, p, &h, &empty);
        if (rc == 0 && !create && (empty || !same_file(&h, p % f->layout.factor, &f->layout)))
            rc = failed_at(f, (int) stripe_slot_server(&f->layout, p), RFS_E_INVAL);
        if (rc != 0 && (create || !stripe_slot_failure(f, &rc, p, rc)))
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
    int rc = header_of(f, &f->obj[0], 0, &h, empty);
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

/* Every slot's server learns the layout, and a replicated file's state
 * is read; on failure all is closed. */
static int set_layouts(struct stripe_file *f, int rc)
{
    for (uint32_t p = 0; rc == 0 && p < stripe_slots(f); p++) {
        uint32_t server = stripe_slot_server(&f->layout, p);
        if (!f->obj[p].client || f->down >> server & 1)
            continue;
        int r = failed_at(f, (int) server, send_layout(f, p));
        if (r != 0 && !stripe_slot_failure(f, &rc, p, r))
            rc = r;
    }
    if (rc == 0)
        rc = stripe_refresh(f);
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
    for (uint32_t p = 0; rc == 0 && p < stripe_slots(f); p++) {
        if (stripe_slot_lost(f, p))
            continue;                   /* lost at its other copy: no second timeout */
        int r = open_slot(f, sv, p, path, rw.flags, &rw, NULL);
        if (r != 0 && !stripe_slot_failure(f, &rc, p, r))
            rc = r;
    }
    return set_layouts(f, rc);
}

/*
 * Object 0's server is lost (transport failure rc): a replicated file is
 * opened by object 0's next copy, copy c on server c, whose header gives
 * the layout. 0, or rc when no copy of object 0 answers as one.
 */
static int open_by_copy(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                        const struct stripe_open_args *a, int rc)
{
    uint32_t flags = a->flags & ~(RFS_O_CREAT | RFS_O_EXCL);
    rfs_shared_give_back(&f->obj[0]);
    for (uint32_t c = 1; c < STRIPE_MAX_REPLICAS && c < sv->n; c++) {
        struct rfs_shared_file o = { 0 };
        struct stripe_header h;
        char name[RFS_MAX_PATH + 1];
        int empty = 0;
        f->failed = -1;
        if (stripe_copy_path(path, c, name, sizeof name) != 0 ||
            open_on(f, &sv->at[c], c, c, &o, name, flags, a, NULL) != 0 ||
            header_of(f, &o, c, &h, &empty) != 0 || h.index != 0 ||
            stripe_copies(&h.layout) <= c || h.layout.factor > sv->n) {
            rfs_shared_give_back(&o);
            continue;
        }
        f->layout = h.layout;
        f->obj[stripe_slot(&f->layout, 0, c)] = o;
        f->down = ((UINT64_C(1) << c) - 1);     /* the servers of the copies before */
        for (uint32_t s = 0; s < c; s++)
            f->lost_at[s] = STRIPE_LOST_AT_UNKNOWN;
        if (a->flags & RFS_O_EXCL)
            return RFS_E_EXIST;                 /* it exists, object 0 lost or not */
        return 0;
    }
    f->failed = 0;
    return rc;
}

int stripe_open(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                const struct stripe_open_args *a)
{
    struct rfs_stat st = { 0, 0 };
    int create = 0;
    uint32_t first = 0;
    open_init(f);
    if (sv->n == 0)
        return RFS_E_INVAL;
    struct stripe_open_args rw = read_write(a);
    int rc = keep_for_revive(f, path, &rw);
    if (rc == 0)
        rc = open_on(f, &sv->at[0], 0, 0, &f->obj[0], path, rw.flags, &rw, &st);
    if (rc < 0 && (rc = open_by_copy(f, sv, path, &rw, rc)) == 0) {
        first = stripe_read_copy(&f->layout, 0, f->down) * f->layout.factor;
        rc = open_others(f, sv, path, &rw, 0, first);
        return set_layouts(f, rc);
    }
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
        rc = open_others(f, sv, path, &rw, create, first);
    /* object 0's header last: a file is complete once it has one */
    if (rc == 0 && create)
        rc = write_header(f, 0);
    if (locked && rc == 0)
        rc = failed_at(f, 0, create_unlock(f));
    return set_layouts(f, rc);
}

/* The copies of PATH's objects, as the first header a server has says;
 * 1 when none has one (only names of copies the file has are removed, so
 * that a user's own ".NAME.copy1" stays). */
static uint32_t copies_of(const struct rfs_connect_opts *o, const struct stripe_servers *sv,
                          const char *path)
{
    for (uint32_t i = 0; i < sv->n; i++) {
        struct rfs_client c;
        struct stripe_header h;
        uint8_t buf[STRIPE_HDR_USED];
        uint64_t got = 0;
        int rc = rfs_client_connect_with(&c, sv->at[i].host, sv->at[i].port, o);
        if (rc == 0 && (rc = rfs_open(&c, 0, path, RFS_O_RDONLY, 0, NULL)) == 0) {
            rc = rfs_pread(&c, 0, buf, sizeof buf, 0, &got);
            (void) rfs_close(&c, 0);
        }
        rfs_client_close(&c);
        if (rc == 0 && stripe_header_decode(buf, got, &h) == 0)
            return stripe_copies(&h.layout);
    }
    return 1;
}

/* PATH and its copies' names on one server; 0, or the first failure but
 * RFS_E_NOENT, or RFS_E_NOENT when there was nothing. */
static int unlink_on(const struct rfs_connect_opts *o, const struct net_endpoint *at,
                     const char *path, uint32_t copies)
{
    struct rfs_client c;
    int rc = rfs_client_connect_with(&c, at->host, at->port, o), found = 0;
    for (uint32_t copy = 0; rc == 0 && copy < copies; copy++) {
        char name[RFS_MAX_PATH + 1];
        int r = stripe_copy_path(path, copy, name, sizeof name);
        if (r == 0)
            r = rfs_unlink(&c, name);
        if (r == 0)
            found = 1;
        else if (r != RFS_E_NOENT)
            rc = r;
    }
    rfs_client_close(&c);
    return rc != 0 ? rc : found ? 0 : RFS_E_NOENT;
}

int stripe_unlink(const struct rfs_connect_opts *o, const struct stripe_servers *sv,
                  const char *path)
{
    int rc = RFS_E_NOENT, found = 0;
    uint32_t copies = copies_of(o, sv, path);
    for (uint32_t i = 0; i < sv->n; i++) {
        int r = unlink_on(o, &sv->at[i], path, copies);
        if (r == 0)
            found = 1;
        else if (r != RFS_E_NOENT && (rc == RFS_E_NOENT || (r < 0 && rc > 0)))
            rc = r;
    }
    return found && (rc == RFS_E_NOENT) ? 0 : rc;
}
