/*
 * Data transfers of striped files. The runs of a view's window are cut
 * at stripe boundaries into pieces, each on one object, and go:
 *
 *   naive     one PREAD/PWRITE per contiguous piece of an object;
 *   list      LREAD/LWRITE requests of at most max_pairs offset-length
 *             pairs and STRIPE_REQ_DATA bytes, pieces adjacent in the
 *             object merged into one pair;
 *   datatype  one VREAD/VWRITE per object per STRIPE_CHUNK of data: the
 *             server walks the view itself and keeps its own pieces.
 *
 * Requests to every object are in flight at once, up to STRIPE_WINDOW per
 * object; with f->max_inflight set, list and naive requests together carry
 * at most that many data bytes (at least one request goes), and with
 * f->max_servers set they go to at most that many objects at once: the
 * oldest reply over all objects is taken before more is sent. After a
 * failure nothing new is sent, what is in flight is still received, and
 * the first failure is returned.
 *
 * A replicated file's requests go to slots (stripe_copies.c): a read to
 * one copy of each object, a write to every current copy and then to the
 * resyncing ones. A server lost on the way is left out of the rest of the
 * call; a read is then done again from the other copies.
 */
#include "stripe/stripe_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STRIPE_MAX_SEGS 256     /* memory pieces of one list request or direct share */
#define STRIPE_DIRECT_PIECE 4096    /* a direct share's pieces at least this on average */

/* The runs of the window [pos, pos + len) of a view, in view order. */
struct run_iter {
    struct dtype_iter it;
    int contiguous;
    uint64_t off, len;          /* the contiguous case's one run, until taken */
};

static int run_iter_init(struct run_iter *r, const struct stripe_view *v, uint64_t pos,
                         uint64_t len)
{
    r->contiguous = v->type == NULL;
    if (r->contiguous) {
        r->off = v->disp + pos;
        r->len = len;
        return r->off < v->disp || r->off > STRIPE_MAX_OFFSET ? RFS_E_FBIG : 0;
    }
    int64_t last = (int64_t) (pos + len);
    return dtype_iter_init(&r->it, v->type, last / v->type->size + 1, (int64_t) v->disp,
                           (int64_t) pos, last) < 0 ? RFS_E_INVAL : 0;
}

/* 1 and the next run, 0 at the end, or a failure for a run the file cannot hold. */
static int run_iter_next(struct run_iter *r, uint64_t *off, uint64_t *len)
{
    int64_t o, l;
    if (r->contiguous) {
        *off = r->off;
        *len = r->len;
        r->len = 0;
    } else if (dtype_iter_next(&r->it, &o, &l)) {
        if (o < 0)
            return -RFS_E_INVAL;
        *off = (uint64_t) o;
        *len = (uint64_t) l;
    } else {
        return 0;
    }
    if (*len == 0)
        return 0;
    if (*off > STRIPE_MAX_OFFSET || *len > STRIPE_MAX_OFFSET - *off)
        return -RFS_E_FBIG;
    return 1;
}

int stripe_walk(const struct stripe_layout *l, const struct stripe_view *view, uint64_t pos,
                uint64_t len, stripe_piece_fn fn, void *arg)
{
    struct run_iter r;
    uint64_t off, rlen, at = 0;
    int rc = run_iter_init(&r, view, pos, len), more;
    while (rc == 0 && (more = run_iter_next(&r, &off, &rlen)) != 0) {
        if (more < 0)
            return -more;
        while (rc == 0 && rlen > 0) {
            struct stripe_piece p;
            stripe_piece_at(l, off, rlen, &p);
            rc = fn(arg, &p, at);
            off += p.len;
            rlen -= p.len;
            at += p.len;
        }
    }
    return rc;
}

/* After a short read: the bytes of the window that lie before the end of
 * the file (views are monotonic, so they come first). */
static int bytes_before_eof(struct stripe_file *f, const struct stripe_view *v, uint64_t pos,
                            uint64_t len, uint64_t *moved)
{
    struct run_iter r;
    uint64_t size, off, rlen;
    int rc = stripe_size(f, &size), more;
    *moved = 0;
    if (rc == 0)
        rc = run_iter_init(&r, v, pos, len);
    while (rc == 0 && (more = run_iter_next(&r, &off, &rlen)) > 0 && off < size)
        *moved += size - off < rlen ? size - off : rlen;
    return rc;
}

/*
 * The caller's memory: the data bytes of a transfer lie in order in these
 * segments. The pieces of a walk ask for ascending data positions, so the
 * cursor only moves forward.
 */
struct mem_cursor {
    const struct iovec *seg;
    int n, i;
    uint64_t base;              /* data position of seg[i]'s first byte */
};

static void mem_start(struct mem_cursor *m, const struct iovec *seg, int n)
{
    *m = (struct mem_cursor) { .seg = seg, .n = n };
}

/* Where data byte `at` lies, and *room: the bytes from there that are
 * contiguous in memory. */
static char *mem_at(struct mem_cursor *m, uint64_t at, uint64_t *room)
{
    while (m->i < m->n - 1 && at >= m->base + m->seg[m->i].iov_len)
        m->base += m->seg[m->i++].iov_len;
    *room = m->seg[m->i].iov_len - (at - m->base);
    return (char *) m->seg[m->i].iov_base + (at - m->base);
}

/* Where data byte `at` lies, and *room: the bytes from there, at most
 * `left`, that are contiguous in memory. */
static char *mem_run(struct mem_cursor *m, uint64_t at, uint64_t left, uint64_t *room)
{
    char *mem = mem_at(m, at, room);
    if (*room > left)
        *room = left;
    return mem;
}

/* --- naive and list I/O --- */

struct list_req {
    struct rfs_inflight sent;
    uint64_t seq;               /* the order of sending, over all objects */
    uint32_t npairs;
    int nseg;
    uint64_t data;
    uint64_t *pair_off, *pair_len;  /* local data offsets */
    uint8_t *pair_enc;
    struct iovec seg[STRIPE_MAX_SEGS];  /* where the data lies in the caller's memory */
};

/* Per object: a ring of requests in flight, the one after them being built. */
struct list_pipe {
    struct list_req slot[STRIPE_WINDOW + 1];
    int head, inflight;
};

struct list_xfer {
    struct stripe_file *f;
    int is_write, naive;
    const struct stripe_route *route;
    int after;                  /* the pass of a write: resyncing copies */
    int lost;                   /* a server was lost on the way */
    uint32_t max_pairs;
    struct mem_cursor mem;
    struct list_pipe *pipe;
    uint64_t inflight, sent;    /* data bytes in flight over all objects; requests sent */
    uint32_t busy;              /* objects with requests in flight */
    int status;                 /* the first failure */
    int short_read;
};

static struct list_req *building(struct list_pipe *q)
{
    return &q->slot[(q->head + q->inflight) % (STRIPE_WINDOW + 1)];
}

/* The request being built next holds nothing yet. */
static void req_clear(struct list_req *r)
{
    r->npairs = 0;
    r->nseg = 0;
    r->data = 0;
}

/* A short read's reply filled `got` bytes of the pieces: zeros after. */
static void zero_after(const struct iovec *seg, int nseg, uint64_t got)
{
    uint64_t at = 0;
    for (int i = 0; i < nseg; i++) {
        size_t n = seg[i].iov_len, have = got - at < n ? (size_t) (got - at) : n;
        memset((char *) seg[i].iov_base + have, 0, n - have);
        at += have;
    }
}

/* A failure of slot o: a lost server is left out, else the call fails. */
static void xfer_failure(struct list_xfer *x, uint32_t o, int rc)
{
    if (rc != 0 && stripe_slot_failure(x->f, &x->status, o, rc))
        x->lost = 1;
}

/* The reply of slot o's oldest request. */
static int complete_oldest(struct list_xfer *x, uint32_t o)
{
    struct list_pipe *q = &x->pipe[o];
    struct list_req *r = &q->slot[q->head];
    struct rfs_rep rep;
    uint64_t got = 0;
    /* A read's reply goes straight into its memory pieces. */
    int rc = x->is_write ? rfs_recv(x->f->obj[o].client, &r->sent, NULL, 0, &rep, &got)
                         : rfs_recvv(x->f->obj[o].client, &r->sent, r->seg, r->nseg, &rep, &got);
    q->head = (q->head + 1) % (STRIPE_WINDOW + 1);
    q->inflight--;
    x->inflight -= r->data;
    x->busy -= q->inflight == 0;
    if (rc == 0 && x->is_write && rep.value != r->data)
        rc = -EPROTO;
    if (rc == 0 && !x->is_write) {
        zero_after(r->seg, r->nseg, got);
        if (got < r->data)
            x->short_read = 1;
    }
    xfer_failure(x, o, rc);
    return rc;
}

/* The slot whose oldest request in flight was sent first of all. */
static uint32_t oldest_object(const struct list_xfer *x)
{
    uint32_t oldest = 0;
    uint64_t seq = UINT64_MAX;
    for (uint32_t o = 0; o < stripe_slots(x->f); o++) {
        const struct list_pipe *q = &x->pipe[o];
        if (q->inflight > 0 && q->slot[q->head].seq < seq) {
            seq = q->slot[q->head].seq;
            oldest = o;
        }
    }
    return oldest;
}

/* Room for object o's next request: a free slot in its window, its data
 * within the process's bound, o among the objects it may feed at once
 * (taking a reply keeps o's request being built where it is). */
static int make_room(struct list_xfer *x, uint32_t o)
{
    struct list_pipe *q = &x->pipe[o];
    if (q->inflight == STRIPE_WINDOW)
        complete_oldest(x, o);
    while (x->status == 0 && x->f->max_inflight > 0 && x->inflight > 0 &&
           x->inflight + building(q)->data > x->f->max_inflight)
        complete_oldest(x, oldest_object(x));
    while (x->status == 0 && x->f->max_servers > 0 && q->inflight == 0 &&
           x->busy >= x->f->max_servers * stripe_copies(&x->f->layout))
        complete_oldest(x, oldest_object(x));
    return x->status;
}

static int submit(struct list_xfer *x, uint32_t o)
{
    struct list_pipe *q = &x->pipe[o];
    if (make_room(x, o))
        return x->status;               /* nothing new after a failure */
    struct list_req *r = building(q);
    struct rfs_req req = { .handle = x->f->obj[o].handle, .length = r->data };
    struct iovec iov[STRIPE_MAX_SEGS + 1];
    int n = 0;
    uint16_t op;
    if (x->naive) {
        op = x->is_write ? RFS_OP_PWRITE : RFS_OP_PREAD;
        req.offset = STRIPE_HDR_SIZE + r->pair_off[0];
    } else {
        op = x->is_write ? RFS_OP_LWRITE : RFS_OP_LREAD;
        req.aux = r->npairs;
        for (uint32_t i = 0; i < r->npairs; i++)
            rfs_pair_encode(STRIPE_HDR_SIZE + r->pair_off[i], r->pair_len[i],
                            r->pair_enc + (size_t) i * RFS_PAIR_SIZE);
        iov[n++] = (struct iovec) { r->pair_enc, (size_t) r->npairs * RFS_PAIR_SIZE };
        x->f->stats.list_requests++;
        x->f->stats.pairs += r->npairs;
    }
    if (x->is_write) {
        memcpy(iov + n, r->seg, (size_t) r->nseg * sizeof *iov);
        n += r->nseg;
    }
    int rc = rfs_send(x->f->obj[o].client, op, &req, iov, n, &r->sent);
    x->f->stats.data_requests++;
    x->f->stats.segments += (uint64_t) r->nseg;
    if (rc != 0) {
        xfer_failure(x, o, rc);
        req_clear(r);
        return x->status;
    }
    r->seq = x->sent++;
    x->busy += q->inflight == 0;
    q->inflight++;
    x->inflight += r->data;
    if (x->inflight > x->f->stats.inflight_peak)
        x->f->stats.inflight_peak = x->inflight;
    if (x->busy > x->f->stats.servers_peak)
        x->f->stats.servers_peak = x->busy;
    req_clear(building(q));
    return 0;
}

/* Add a piece to slot o's request, sending that request when full. */
static int slot_piece(struct list_xfer *x, uint32_t o, const struct stripe_piece *p,
                      uint64_t at)
{
    struct list_pipe *q = &x->pipe[o];
    uint64_t local = p->local, len = p->len, server = stripe_slot_server(&x->f->layout, o);
    while (len > 0 && x->status == 0 && !(x->f->down >> server & 1)) {
        struct list_req *r = building(q);
        uint64_t room;
        char *mem = mem_at(&x->mem, at, &room);
        int join_pair = r->npairs > 0 &&
                        r->pair_off[r->npairs - 1] + r->pair_len[r->npairs - 1] == local;
        int join_seg = r->nseg > 0 &&
                       (char *) r->seg[r->nseg - 1].iov_base + r->seg[r->nseg - 1].iov_len == mem;
        if ((!join_pair && r->npairs == x->max_pairs) ||
            (!join_seg && r->nseg == STRIPE_MAX_SEGS) || r->data == STRIPE_REQ_DATA) {
            submit(x, o);
            continue;
        }
        uint64_t n = len < STRIPE_REQ_DATA - r->data ? len : STRIPE_REQ_DATA - r->data;
        if (n > room)
            n = room;
        if (join_pair)
            r->pair_len[r->npairs - 1] += n;
        else {
            r->pair_off[r->npairs] = local;
            r->pair_len[r->npairs++] = n;
        }
        if (join_seg)
            r->seg[r->nseg - 1].iov_len += n;
        else
            r->seg[r->nseg++] = (struct iovec) { mem, (size_t) n };
        r->data += n;
        local += n;
        at += n;
        len -= n;
    }
    return x->status;
}

/* Whether slot o takes this transfer's pieces of its object. */
static int xfer_slot(const struct list_xfer *x, uint32_t o)
{
    const struct stripe_file *f = x->f;
    if (stripe_slot_lost(f, o))
        return 0;
    if (!x->is_write)
        return stripe_read_slot(f, x->route, o % f->layout.factor) == (int) o;
    return stripe_write_slot(f, x->route, o, x->after);
}

/* Add a piece to the requests of the slots that take it. */
static int list_piece(void *arg, const struct stripe_piece *p, uint64_t at)
{
    struct list_xfer *x = arg;
    const struct stripe_layout *l = &x->f->layout;
    struct mem_cursor from = x->mem;
    if (x->status)
        return x->status;
    for (uint32_t c = 0; c < stripe_copies(l); c++) {
        uint32_t o = stripe_slot(l, p->object, c);
        if (!xfer_slot(x, o))
            continue;
        x->mem = from;          /* each copy takes the same memory */
        int rc = slot_piece(x, o, p, at);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void pipes_free(struct stripe_file *f)
{
    for (uint32_t o = 0; f->pipes && o < f->pipes_objects; o++)
        for (int slot = 0; slot <= STRIPE_WINDOW; slot++) {
            free(f->pipes[o].slot[slot].pair_off);
            free(f->pipes[o].slot[slot].pair_len);
            free(f->pipes[o].slot[slot].pair_enc);
        }
    free(f->pipes);
    f->pipes = NULL;
    f->pipes_objects = f->pipes_pairs = 0;
}

void stripe_io_release(struct stripe_file *f)
{
    pipes_free(f);
    dtype_free(f->contig);
    free(f->contig_enc);
    f->contig = NULL;
    f->contig_enc = NULL;
    free(f->staging);
    f->staging = NULL;
    f->staging_cap = 0;
    free(f->direct);
    f->direct = NULL;
}

/* The per-object request rings, kept with the file for as long as the
 * number of pairs per request stays the same. */
static int pipes_ready(struct stripe_file *f, uint32_t pairs)
{
    uint32_t n = stripe_slots(f);
    if (f->pipes && f->pipes_pairs == pairs) {
        /* a failed call may have left requests half built */
        for (uint32_t o = 0; o < n; o++) {
            f->pipes[o].head = f->pipes[o].inflight = 0;
            for (int slot = 0; slot <= STRIPE_WINDOW; slot++)
                req_clear(&f->pipes[o].slot[slot]);
        }
        return 0;
    }
    pipes_free(f);
    if (!(f->pipes = calloc(n, sizeof *f->pipes)))
        return -ENOMEM;
    f->pipes_objects = n;
    f->pipes_pairs = pairs;
    for (uint32_t o = 0; o < n; o++)
        for (int slot = 0; slot <= STRIPE_WINDOW; slot++) {
            struct list_req *r = &f->pipes[o].slot[slot];
            r->pair_off = malloc(pairs * sizeof *r->pair_off);
            r->pair_len = malloc(pairs * sizeof *r->pair_len);
            r->pair_enc = malloc((size_t) pairs * RFS_PAIR_SIZE);
            if (!r->pair_off || !r->pair_len || !r->pair_enc)
                return -ENOMEM;         /* pipes_free frees what there is */
        }
    return 0;
}

/* Each request to an object carries every n-th stripe's share of the
 * memory, pieces that registration may take apart by the cost model;
 * the transport may take the whole of it at once (net_pin: the verbs
 * registration cache). */
static void pin_memory(struct stripe_file *f, const struct iovec *mem, int nmem, int is_write)
{
    if (f->layout.factor < 2)
        return;                 /* one object: each request is the whole memory's share */
    for (uint32_t o = 0; o < stripe_slots(f); o++)
        if (f->obj[o].client && !stripe_slot_lost(f, o))
            net_pin(f->obj[o].client->conn, mem, nmem, !is_write);
}

static int list_io(struct stripe_file *f, int naive, const struct stripe_view *view,
                   uint64_t pos, uint64_t len, const struct iovec *mem, int nmem, int is_write,
                   const struct stripe_route *route, int after, int *short_read, int *lost)
{
    uint32_t n = stripe_slots(f);
    struct list_xfer x = { .f = f, .is_write = is_write, .naive = naive, .route = route,
                           .after = after, .max_pairs = naive ? 1 : f->max_pairs };
    mem_start(&x.mem, mem, nmem);
    if (pipes_ready(f, x.max_pairs) < 0)
        return -ENOMEM;
    pin_memory(f, mem, nmem, is_write);
    x.pipe = f->pipes;
    int rc = stripe_walk(&f->layout, view, pos, len, list_piece, &x);
    if (rc != 0 && x.status == 0)
        x.status = rc;
    for (uint32_t o = 0; x.status == 0 && o < n; o++)
        if (building(&x.pipe[o])->data > 0)
            submit(&x, o);
    for (int more = 1; more;) {
        more = 0;
        for (uint32_t o = 0; o < n; o++)
            if (x.pipe[o].inflight > 0) {
                complete_oldest(&x, o);
                more = 1;
            }
    }
    *short_read |= x.short_read;
    *lost |= x.lost;
    return x.status;
}

/* --- datatype I/O --- */

struct dt_xfer {
    struct mem_cursor mem;      /* dt_copy's */
    struct mem_cursor walk;     /* dt_count's; at the round's end after it */
    uint64_t skip;              /* the round's first byte in the memory */
    int to_objects;             /* copy direction: packed data -> object shares */
    uint64_t share[STRIPE_MAX_FACTOR];
    uint64_t runs[STRIPE_MAX_FACTOR];   /* of the share: pieces not adjacent in the object */
    uint64_t run_end[STRIPE_MAX_FACTOR];
    uint64_t fill[STRIPE_MAX_FACTOR];
    char *part[STRIPE_MAX_FACTOR];      /* a staged share in f->staging, NULL: direct */
    int nseg[STRIPE_MAX_FACTOR];        /* pieces of memory of a share, up to one too many */
    struct iovec *seg;                  /* STRIPE_MAX_SEGS per object (f->direct) */
};

static struct iovec *dt_segs(const struct dt_xfer *d, uint32_t o)
{
    return d->seg + (size_t) o * STRIPE_MAX_SEGS;
}

/* An object's share, its runs, and where it lies in memory, as long as
 * that is at most STRIPE_MAX_SEGS pieces. */
static int dt_count(void *arg, const struct stripe_piece *p, uint64_t at)
{
    struct dt_xfer *d = arg;
    uint32_t o = p->object;
    struct iovec *seg = dt_segs(d, o);
    d->runs[o] += d->share[o] == 0 || p->local != d->run_end[o];
    d->run_end[o] = p->local + p->len;
    d->share[o] += p->len;
    for (uint64_t done = 0, room; done < p->len && d->nseg[o] <= STRIPE_MAX_SEGS;
         done += room) {
        char *mem = mem_run(&d->walk, d->skip + at + done, p->len - done, &room);
        int k = d->nseg[o];
        if (k > 0 && (char *) seg[k - 1].iov_base + seg[k - 1].iov_len == mem)
            seg[k - 1].iov_len += room;
        else if (k < STRIPE_MAX_SEGS)
            seg[d->nseg[o]++] = (struct iovec) { mem, (size_t) room };
        else
            d->nseg[o] = STRIPE_MAX_SEGS + 1;
    }
    return 0;
}

/* Room for every object's pieces of memory, kept with the file. */
static struct iovec *direct_segs(struct stripe_file *f)
{
    if (!f->direct)
        f->direct = calloc((size_t) f->layout.factor * STRIPE_MAX_SEGS, sizeof *f->direct);
    return f->direct;
}

/* Whether object o's share moves straight between the caller's memory
 * and the connection rather than through the staging buffer: its pieces
 * are few and large enough that a system call moves 16 of them (net_tcp)
 * and a copy would cost more than the calls. */
static int dt_direct(const struct dt_xfer *d, uint32_t o)
{
    return d->nseg[o] > 0 && d->nseg[o] <= STRIPE_MAX_SEGS &&
           d->share[o] / (uint64_t) d->nseg[o] >= STRIPE_DIRECT_PIECE;
}

static int dt_copy(void *arg, const struct stripe_piece *p, uint64_t at)
{
    struct dt_xfer *d = arg;
    if (!d->part[p->object])
        return 0;
    char *part = d->part[p->object] + d->fill[p->object];
    for (uint64_t done = 0, room; done < p->len; done += room) {
        char *mem = mem_run(&d->mem, d->skip + at + done, p->len - done, &room);
        if (d->to_objects)
            memcpy(part + done, mem, room);
        else
            memcpy(mem, part + done, room);
    }
    d->fill[p->object] += p->len;
    return 0;
}

/* Where object o's share lies: its part of the staging buffer (*staged
 * made to describe it) or its pieces of memory; *n: how many. */
static const struct iovec *dt_share(const struct dt_xfer *d, uint32_t o, struct iovec *staged,
                                    int *n)
{
    if (!d->part[o]) {
        *n = d->nseg[o];
        return dt_segs(d, o);
    }
    *staged = (struct iovec) { d->part[o], (size_t) d->share[o] };
    *n = 1;
    return staged;
}

/* The staging buffer for the staged shares (part[o] into it) and the
 * transport's hold on the memory for the direct ones. */
static int dt_prepare(struct stripe_file *f, struct dt_xfer *d, int is_write)
{
    uint32_t n = f->layout.factor;
    uint64_t total = 0;
    int direct = 0;
    for (uint32_t o = 0; o < n; o++) {
        d->part[o] = NULL;
        if (dt_direct(d, o))
            direct = 1;
        else
            total += d->share[o];
    }
    if (total > f->staging_cap) {
        free(f->staging);
        f->staging_cap = 0;
        if (!(f->staging = malloc(total)))
            return -ENOMEM;
        f->staging_cap = total;
    }
    uint64_t at = 0;
    for (uint32_t o = 0; o < n; o++)
        if (!dt_direct(d, o)) {
            d->part[o] = f->staging + at;
            at += d->share[o];
        }
    f->stats.staged += total;
    if (direct)
        pin_memory(f, d->mem.seg, d->mem.n, is_write);
    return 0;
}

/*
 * Send object o its share of a round: the view (when the server does not
 * have it yet), a COLL in front for a collective round, the V* request.
 */
static int dt_send(struct stripe_file *f, uint32_t o, const struct stripe_view *view,
                   const struct stripe_coll *coll, uint32_t parts, const struct rfs_req *req,
                   const struct iovec *data, int ndata, int is_write,
                   struct rfs_inflight sent[2])
{
    int r = rfs_set_view(f->obj[o].client, f->obj[o].handle, view->disp, view->enc, view->enc_len);
    sent[1].tag = 0;
    if (r == 0 && coll) {
        /* each copy its own group: a server holds copies of several objects */
        struct rfs_req c = { .handle = f->obj[o].handle, .flags = coll->rank, .aux = parts,
                             .offset = coll->call, .length = coll->group + o / f->layout.factor,
                             .mode = coll->keep ? RFS_COLL_KEEP : 0 };
        r = rfs_send(f->obj[o].client, RFS_OP_COLL, &c, NULL, 0, &sent[1]);
        f->stats.coll_requests++;
    }
    if (r == 0)
        r = rfs_send(f->obj[o].client, is_write ? RFS_OP_VWRITE : RFS_OP_VREAD, req, data,
                     is_write ? ndata : 0, &sent[0]);
    f->stats.view_requests++;
    f->stats.data_requests++;
    return r;
}

/* A collective round's participants on each object (sum[o]), the bytes
 * they have there (sum[n + o]) and their runs (sum[2n + o]), agreed with
 * the others; d NULL: this one has nothing (or failed before). The copies
 * the round uses too: a server any participant does not write (sum[3n +
 * s]) or writes after the others (sum[4n + s]) is so for all, *route. */
static int coll_agree(const struct stripe_file *f, const struct stripe_coll *coll,
                      const struct dt_xfer *d, uint64_t sum[STRIPE_COLL_AGREE_MAX],
                      struct stripe_route *route)
{
    uint64_t mine[STRIPE_COLL_AGREE_MAX];
    uint32_t n = f->layout.factor;
    stripe_route_of(f, route);
    for (uint32_t o = 0; o < n; o++) {
        mine[o] = d && d->share[o] > 0;
        mine[n + o] = d ? d->share[o] : 0;
        mine[2 * n + o] = d ? d->runs[o] : 0;
        mine[3 * n + o] = route->skip >> o & 1;
        mine[4 * n + o] = route->after >> o & 1;
    }
    int rc = coll->agree(coll->agree_arg, mine, sum, 5 * n);
    route->skip = route->after = 0;
    for (uint32_t s = 0; rc == 0 && s < n; s++) {
        route->skip |= (uint64_t) (sum[3 * n + s] > 0) << s;
        route->after |= (uint64_t) (sum[4 * n + s] > 0) << s;
    }
    route->after &= ~route->skip;
    route->avoid = route->skip | route->after;
    return rc;
}

/* Whether object o's part of an agreed round goes behind a COLL, merged
 * with the others' on the server, rather than as a plain request. */
static int coll_merges(const struct stripe_coll *coll, const uint64_t *sum, uint32_t n,
                       uint32_t o)
{
    uint64_t bytes = sum[n + o], runs = sum[2 * n + o];
    return coll->keep || (bytes >= coll->merge_from &&
                          (coll->merge_runs_below == 0 || bytes < runs * coll->merge_runs_below));
}

/* Slot p's reply to a round's request: the data into its object's share. */
static int dt_reply(struct stripe_file *f, uint32_t p, struct dt_xfer *d,
                    const struct rfs_inflight sent[2], int is_write, int *short_read)
{
    struct rfs_rep rep;
    uint64_t got = 0;
    struct iovec staged;
    int nin;
    uint32_t o = p % f->layout.factor;
    const struct iovec *in = dt_share(d, o, &staged, &nin);
    int r = sent[1].tag ? rfs_recv(f->obj[p].client, &sent[1], NULL, 0, &rep, &got) : 0;
    if (r == 0)
        r = rfs_recvv(f->obj[p].client, &sent[0], in, is_write ? 0 : nin, &rep, &got);
    if (r == 0 && is_write && rep.value != d->share[o])
        r = -EPROTO;
    if (r == 0 && !is_write && got < d->share[o]) {
        zero_after(in, nin, got);
        *short_read = 1;
    }
    return r;
}

/* The slots that take object o's share in this pass: its copy to read,
 * or its copies to write (after: the resyncing ones). */
static int dt_targets(const struct stripe_file *f, const struct stripe_route *route, uint32_t o,
                      int is_write, int after, uint32_t out[STRIPE_MAX_REPLICAS])
{
    int n = 0;
    if (!is_write) {
        int p = stripe_read_slot(f, route, o);
        if (p >= 0 && !stripe_slot_lost(f, (uint32_t) p))
            out[n++] = (uint32_t) p;
        return n;
    }
    for (uint32_t c = 0; c < stripe_copies(&f->layout); c++) {
        uint32_t p = stripe_slot(&f->layout, o, c);
        if (stripe_write_slot(f, route, p, after) && !stripe_slot_lost(f, p))
            out[n++] = p;
    }
    return n;
}

/* One pass of a round: every object's share to its slots, then every
 * reply. *lost: a server was lost on the way (left out). */
static int dt_exchange(struct stripe_file *f, const struct stripe_view *view, uint64_t pos,
                       uint64_t len, struct dt_xfer *d, int is_write, int after,
                       const struct stripe_route *route, const struct stripe_coll *coll,
                       const uint64_t *sum, int *short_read, int *lost)
{
    struct rfs_inflight sent[STRIPE_MAX_SLOTS][2];
    uint8_t in_flight[STRIPE_MAX_SLOTS] = { 0 };
    uint32_t n = f->layout.factor, targets[STRIPE_MAX_REPLICAS];
    int rc = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t o = coll ? (coll->rank + j) % n : j;
        struct iovec staged;
        int ndata;
        if (rc != 0 || d->share[o] == 0)
            continue;
        const struct iovec *data = dt_share(d, o, &staged, &ndata);
        const struct stripe_coll *merge = coll && coll_merges(coll, sum, n, o) ? coll : NULL;
        int k = dt_targets(f, route, o, is_write, after, targets);
        for (int t = 0; t < k; t++) {
            uint32_t p = targets[t];
            struct rfs_req req = { .handle = f->obj[p].handle, .offset = pos, .length = len };
            int r = dt_send(f, p, view, merge, merge ? (uint32_t) sum[o] : 0, &req, data, ndata,
                            is_write, sent[p]);
            in_flight[p] = r == 0;
            if (r != 0)
                *lost |= stripe_slot_failure(f, &rc, p, r);
        }
    }
    for (uint32_t p = 0; p < stripe_slots(f); p++)
        if (in_flight[p]) {
            int r = dt_reply(f, p, d, sent[p], is_write, short_read);
            if (r != 0)
                *lost |= stripe_slot_failure(f, &rc, p, r);
        }
    return rc;
}

/* One round: every object's share of [pos, pos + len) in one request to
 * each of its slots, none to an object without a share. A collective
 * round (coll) first agrees on the participants of each object and on
 * the copies, and sends in the decentralised schedule: object (rank + j)
 * mod n at step j. */
static int dt_round(struct stripe_file *f, const struct stripe_view *view, uint64_t pos,
                    uint64_t len, struct mem_cursor *mem, uint64_t skip, int is_write,
                    const struct stripe_coll *coll, int *short_read, int *lost)
{
    struct dt_xfer d = { .mem = *mem, .walk = *mem, .skip = skip, .to_objects = is_write };
    uint64_t sum[STRIPE_COLL_AGREE_MAX];
    struct stripe_route route;
    int rc = (d.seg = direct_segs(f)) ? 0 : -ENOMEM;
    if (rc == 0)
        rc = stripe_walk(&f->layout, view, pos, len, dt_count, &d);
    if (coll) {
        int agreed = coll_agree(f, coll, rc == 0 ? &d : NULL, sum, &route);
        rc = rc != 0 ? rc : agreed;
    } else {
        stripe_route_of(f, &route);
    }
    if (is_write)
        f->skipped |= route.skip;       /* stripe_settle_writes marks them */
    if (rc == 0)
        rc = dt_prepare(f, &d, is_write);
    if (rc == 0 && is_write)
        rc = stripe_walk(&f->layout, view, pos, len, dt_copy, &d);
    if (rc == 0)
        rc = dt_exchange(f, view, pos, len, &d, is_write, 0, &route, coll, sum, short_read, lost);
    if (rc == 0 && is_write && route.after)
        rc = dt_exchange(f, view, pos, len, &d, is_write, 1, &route, coll, sum, short_read, lost);
    if (rc == 0 && !is_write && !*lost)
        rc = stripe_walk(&f->layout, view, pos, len, dt_copy, &d);
    *mem = d.walk;
    return rc;
}

static int datatype_io(struct stripe_file *f, const struct stripe_view *view, uint64_t pos,
                       uint64_t len, const struct iovec *mem, int nmem, int is_write,
                       int *short_read, int *lost)
{
    struct mem_cursor m;
    int rc = 0;
    mem_start(&m, mem, nmem);
    for (uint64_t done = 0; rc == 0 && done < len && !(*lost && !is_write);) {
        uint64_t n = len - done < STRIPE_CHUNK ? len - done : STRIPE_CHUNK;
        rc = dt_round(f, view, pos + done, n, &m, done, is_write, NULL, short_read, lost);
        done += n;
    }
    return rc;
}

/* One try of a transfer: a write to the current copies, then to the
 * resyncing ones; a read from one copy of each object. */
static int transfer(struct stripe_file *f, enum stripe_method method,
                    const struct stripe_view *view, uint64_t pos, uint64_t len,
                    const struct iovec *mem, int nmem, int is_write, int *short_read, int *lost)
{
    struct stripe_route route;
    if (method == STRIPE_DATATYPE)
        return datatype_io(f, view, pos, len, mem, nmem, is_write, short_read, lost);
    stripe_route_of(f, &route);
    if (is_write)
        f->skipped |= route.skip;       /* stripe_settle_writes marks them */
    int rc = list_io(f, method == STRIPE_NAIVE, view, pos, len, mem, nmem, is_write, &route, 0,
                     short_read, lost);
    if (rc == 0 && is_write && route.after)
        rc = list_io(f, method == STRIPE_NAIVE, view, pos, len, mem, nmem, is_write, &route, 1,
                     short_read, lost);
    return rc;
}

int stripe_io(struct stripe_file *f, enum stripe_method method, const struct stripe_view *view,
              uint64_t pos, uint64_t len, char *buf, int is_write, uint64_t *moved)
{
    struct iovec mem = { .iov_base = buf, .iov_len = len };
    return stripe_iov_io(f, method, view, pos, len, &mem, 1, is_write, moved);
}

/* The end of a call: a write's lost servers become stale; after a short
 * read, what was before the end of the file. */
static int call_done(struct stripe_file *f, const struct stripe_view *view, uint64_t pos,
                     uint64_t len, int is_write, int short_read, int rc, uint64_t *moved)
{
    if (is_write)
        rc = stripe_settle_writes(f, rc);
    if (rc == 0 && short_read)
        rc = bytes_before_eof(f, view, pos, len, moved);
    else if (rc == 0)
        *moved = len;
    f->stats.bytes[is_write ? 1 : 0] += *moved;
    return rc;
}

int stripe_iov_io(struct stripe_file *f, enum stripe_method method,
                  const struct stripe_view *view, uint64_t pos, uint64_t len,
                  const struct iovec *mem, int nmem, int is_write, uint64_t *moved)
{
    int short_read = 0, lost = 1, rc = 0;
    *moved = 0;
    f->failed = -1;
    if (len == 0)
        return 0;
    stripe_revive(f);
    if (is_write)
        stripe_wrote(f);
    if (method == STRIPE_DATATYPE && !view->type)
        method = STRIPE_LIST;           /* no view to send: a contiguous run */
    f->stats.calls[method]++;
    /* a read that lost a server is done again from the other copies */
    while (rc == 0 && lost) {
        lost = short_read = 0;
        rc = stripe_refresh(f);
        if (rc == 0)
            rc = transfer(f, method, view, pos, len, mem, nmem, is_write, &short_read, &lost);
        lost &= !is_write;
    }
    return call_done(f, view, pos, len, is_write, short_read, rc, moved);
}

/* A contiguous view for the servers: a collective round always sends one,
 * since list requests cannot be empty. */
static int contig_view(struct stripe_file *f, uint64_t disp, struct stripe_view *out)
{
    if (!f->contig) {
        struct dtype *t = dtype_bytes(1 << 20);
        size_t n = t ? dtype_serialize(t, NULL) : 0;
        uint8_t *enc = n ? malloc(n) : NULL;
        if (!enc) {
            dtype_free(t);
            return -ENOMEM;
        }
        dtype_serialize(t, enc);
        f->contig = t;
        f->contig_enc = enc;
        f->contig_len = n;
    }
    *out = (struct stripe_view) { .type = f->contig, .disp = disp, .enc = f->contig_enc,
                                  .enc_len = f->contig_len };
    return 0;
}

int stripe_coll_io(struct stripe_file *f, const struct stripe_view *view, uint64_t pos,
                   uint64_t len, char *buf, int is_write, const struct stripe_coll *c,
                   uint64_t *moved)
{
    struct stripe_view contig;
    struct iovec data = { .iov_base = buf, .iov_len = len };
    struct mem_cursor mem;
    int short_read = 0, lost = 0, rc = 0;
    mem_start(&mem, &data, 1);
    *moved = 0;
    f->failed = -1;
    if (len > STRIPE_CHUNK)
        rc = -EINVAL;
    else
        stripe_revive(f);
    if (rc == 0)
        rc = stripe_refresh(f);
    if (rc == 0 && is_write && len > 0)
        stripe_wrote(f);
    if (rc == 0 && !view->type && (rc = contig_view(f, view->disp, &contig)) == 0)
        view = &contig;
    f->stats.coll_rounds++;
    if (rc == 0) {
        rc = dt_round(f, view, pos, len, &mem, 0, is_write, c, &short_read, &lost);
    } else {
        /* the others count on this one's answer in every round */
        uint64_t sum[STRIPE_COLL_AGREE_MAX];
        struct stripe_route ignored;
        (void) coll_agree(f, c, NULL, sum, &ignored);
    }
    /* a read that lost a server: this one's part again, on its own */
    while (rc == 0 && lost && !is_write) {
        lost = short_read = 0;
        mem_start(&mem, &data, 1);
        rc = stripe_refresh(f);
        if (rc == 0)
            rc = dt_round(f, view, pos, len, &mem, 0, is_write, NULL, &short_read, &lost);
    }
    return call_done(f, view, pos, len, is_write, short_read, rc, moved);
}
