/*
 * rfs client calls: encode a request, send it (with a deferred OPEN in
 * front of it if one is queued), read and validate the reply.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "proto/rfs_client.h"
#include "proto/wire_le.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rfs_call {
    uint16_t op;
    struct rfs_req req;
    const void *out;            /* path or data after the fixed part */
    uint64_t out_len;
    void *in;                   /* where reply data goes (PREAD) */
    uint64_t in_max;
    struct rfs_rep rep;         /* out: reply fixed part */
    uint64_t in_len;            /* out: reply data bytes */
};

struct rfs_frame {
    uint8_t hdr[RFS_HDR_SIZE];
    uint8_t fixed[RFS_REQ_FIXED];
    uint32_t tag;
};

static int fail(struct rfs_client *c, int rc)
{
    c->broken = rc;
    return rc;
}

static void frame_build(struct rfs_client *c, uint16_t op, const struct rfs_req *req,
                        uint64_t var_len, struct rfs_frame *f)
{
    struct rfs_hdr h = {
        .magic = RFS_MAGIC, .version = RFS_VERSION, .op = op, .tag = c->next_tag++,
        .status = 0, .len = RFS_REQ_FIXED + var_len
    };
    f->tag = h.tag;
    c->stats.requests++;
    c->stats.bytes_out += RFS_HDR_SIZE + h.len;
    rfs_hdr_encode(&h, f->hdr);
    rfs_req_encode(req, f->fixed);
}

static int add_frame(struct iovec *iov, int n, struct rfs_frame *f, const void *var,
                     uint64_t var_len)
{
    iov[n++] = (struct iovec) { f->hdr, sizeof f->hdr };
    iov[n++] = (struct iovec) { f->fixed, sizeof f->fixed };
    if (var_len)
        iov[n++] = (struct iovec) { (void *) var, (size_t) var_len };
    return n;
}

/* The first len bytes of a vector, in a copy (out holds cnt entries). */
static int vector_prefix(const struct iovec *iov, int cnt, uint64_t len, struct iovec *out)
{
    int n = 0;
    for (int i = 0; i < cnt && len > 0; i++) {
        out[n] = iov[i];
        if (out[n].iov_len > len)
            out[n].iov_len = (size_t) len;
        len -= out[n].iov_len;
        n++;
    }
    return n;
}

/* Read one reply; its data (at most max_data bytes) is scattered over
 * `in` (in order, as far as it goes). Returns the reply's status, or a
 * negative errno when the stream is unusable. */
static int recv_reply_iov(struct rfs_client *c, uint16_t op, uint32_t tag,
                          const struct iovec *in, int incnt, uint64_t max_data,
                          struct rfs_rep *rep, uint64_t *in_len)
{
    uint8_t hbuf[RFS_HDR_SIZE], fbuf[RFS_REP_FIXED];
    struct rfs_hdr h;
    /* Refused: every request still waiting for its reply gets the refusal. */
    if (c->broken == RFS_E_BUSY)
        return RFS_E_BUSY;
    int rc = net_readn(c->conn, hbuf, sizeof hbuf);
    if (rc < 0)
        return fail(c, rc);
    if (rfs_hdr_decode(hbuf, &h) != RFS_OK)
        return fail(c, -EPROTO);
    if (h.op == RFS_REFUSAL_OP && h.tag == 0 && h.status == RFS_E_BUSY)
        return fail(c, RFS_E_BUSY);
    if (rfs_rep_validate(&h, op, tag, max_data) != RFS_OK)
        return fail(c, -EPROTO);
    rc = net_readn(c->conn, fbuf, sizeof fbuf);
    if (rc < 0)
        return fail(c, rc);
    c->stats.bytes_in += RFS_HDR_SIZE + h.len;
    rfs_rep_decode(fbuf, rep);
    *in_len = h.len - RFS_REP_FIXED;
    if (*in_len) {
        struct iovec few[16], *v = incnt <= 16 ? few : malloc((size_t) incnt * sizeof *v);
        if (!v)
            return fail(c, -ENOMEM);
        rc = net_readv(c->conn, v, vector_prefix(in, incnt, *in_len, v));
        if (v != few)
            free(v);
        if (rc < 0)
            return fail(c, rc);
    }
    return h.status;
}

static int recv_reply(struct rfs_client *c, uint16_t op, uint32_t tag, void *in,
                      uint64_t max_data, struct rfs_rep *rep, uint64_t *in_len)
{
    struct iovec one = { .iov_base = in, .iov_len = (size_t) max_data };
    return recv_reply_iov(c, op, tag, &one, 1, max_data, rep, in_len);
}

/* Skip the reply of a request sent without waiting (only CLOSE is). */
static int skip_reply(struct rfs_client *c)
{
    uint8_t hbuf[RFS_HDR_SIZE], fbuf[RFS_REP_FIXED];
    struct rfs_hdr h;
    int rc = net_readn(c->conn, hbuf, sizeof hbuf);
    if (rc < 0)
        return fail(c, rc);
    if (rfs_hdr_decode(hbuf, &h) != RFS_OK || h.op != (RFS_OP_CLOSE | RFS_REPLY) ||
        h.len != RFS_REP_FIXED)
        return fail(c, -EPROTO);
    rc = net_readn(c->conn, fbuf, sizeof fbuf);
    c->stats.bytes_in += RFS_HDR_SIZE + h.len;
    return rc < 0 ? fail(c, rc) : 0;
}

/* The reply of a SETVIEW sent in front of a request. */
static int recv_view_reply(struct rfs_client *c, uint32_t tag)
{
    struct rfs_rep rep;
    uint64_t ignored;
    int rc = recv_reply(c, RFS_OP_SETVIEW, tag, NULL, 0, &rep, &ignored);
    if (rc > 0)
        c->view_len = 0;                /* not the server's view: send it again next time */
    return rc;
}

static int call(struct rfs_client *c, struct rfs_call *k)
{
    if (c->broken)
        return -ENOTCONN;

    struct rfs_frame open_frame, view_frame, frame;
    struct iovec iov[9];
    int n = 0;
    int sent_open = c->open_pending, sent_view = c->view_pending, view_status = RFS_OK;
    if (sent_open) {
        frame_build(c, RFS_OP_OPEN, &c->open_req, c->open_req.aux, &open_frame);
        n = add_frame(iov, n, &open_frame, c->open_path, c->open_req.aux);
        c->open_pending = 0;
    }
    if (sent_view) {
        frame_build(c, RFS_OP_SETVIEW, &c->view_req, c->view_len, &view_frame);
        n = add_frame(iov, n, &view_frame, c->view_buf, c->view_len);
        c->view_pending = 0;
    }
    frame_build(c, k->op, &k->req, k->out_len, &frame);
    n = add_frame(iov, n, &frame, k->out, k->out_len);
    int rc = net_writev(c->conn, iov, n);
    if (rc < 0)
        return fail(c, rc);

    for (; c->unread_replies > 0; c->unread_replies--) {
        rc = skip_reply(c);
        if (rc < 0)
            return rc;
    }
    uint64_t ignored;
    if (sent_open) {
        c->open_status = recv_reply(c, RFS_OP_OPEN, open_frame.tag, NULL, 0, &c->open_rep,
                                    &ignored);
        free(c->open_path);
        c->open_path = NULL;
        if (c->open_status < 0)
            return c->open_status;
    }
    if (sent_view) {
        view_status = recv_view_reply(c, view_frame.tag);
        if (view_status < 0)
            return view_status;
    }
    rc = recv_reply(c, k->op, frame.tag, k->in, k->in_max, &k->rep, &k->in_len);
    /* A failed deferred open or view explains the failure of the request
     * behind it. */
    if (sent_open && c->open_status != RFS_OK && rc >= 0)
        return c->open_status;
    if (view_status != RFS_OK && rc >= 0)
        return view_status;
    return rc;
}

int rfs_client_connect(struct rfs_client *c, const struct net_transport *t, const char *host,
                       const char *port, int timeout_ms)
{
    struct rfs_connect_opts o = { .transport = t, .net.timeout_ms = timeout_ms };
    return rfs_client_connect_with(c, host, port, &o);
}

/* Give up on the connection after a failed authentication: WHY says it. */
static int auth_failed(struct rfs_client *c, int rc, const char *why)
{
    c->why = why;
    return fail(c, rc);
}

static int auth_step(struct rfs_client *c, uint32_t step, uint32_t aux, const void *out,
                     uint64_t out_len, uint8_t in[32])
{
    struct rfs_call k = { .op = RFS_OP_AUTH, .req = { .flags = step, .aux = aux },
                          .out = out, .out_len = out_len, .in = in, .in_max = 32 };
    int rc = call(c, &k);
    return rc == 0 && k.in_len != 32 ? fail(c, -EPROTO) : rc;
}

/* The exchange of rfs_auth.h: HELLO with our name and nonce, PROOF with
 * our MAC; the server's MAC in the last reply proves the server. */
static int authenticate(struct rfs_client *c, const struct rfs_key *key)
{
    uint8_t hello[RFS_AUTH_MAX_NAME + RFS_AUTH_NONCE], cn[RFS_AUTH_NONCE], sn[RFS_AUTH_NONCE];
    uint8_t binding[RFS_AUTH_BINDING], mac[RFS_AUTH_MAC], theirs[RFS_AUTH_MAC];
    size_t name_len = strlen(key->name);
    if (rfs_auth_nonce(cn) < 0)
        return fail(c, -EIO);
    memcpy(hello, key->name, name_len);
    memcpy(hello + name_len, cn, sizeof cn);
    int rc = auth_step(c, RFS_AUTH_HELLO, (uint32_t) name_len, hello, name_len + sizeof cn, sn);
    if (rc == RFS_E_INVAL)
        return auth_failed(c, RFS_E_AUTH, "a key was given, but the server does not "
                                          "authenticate clients (started without --keys)");
    if (rc != 0)
        return rc > 0 ? fail(c, rc) : rc;
    size_t blen = net_binding(c->conn, binding, sizeof binding) == 0 ? sizeof binding : 0;
    rfs_auth_mac(key, 'C', cn, sn, binding, blen, mac);
    rc = auth_step(c, RFS_AUTH_PROOF, 0, mac, sizeof mac, theirs);
    if (rc == RFS_E_AUTH)
        return auth_failed(c, rc, "the server refused the key (unknown name or wrong secret)");
    if (rc != 0)
        return rc > 0 ? fail(c, rc) : rc;
    rfs_auth_mac(key, 'S', cn, sn, binding, blen, mac);
    if (!rfs_auth_mac_equal(mac, theirs))
        return auth_failed(c, RFS_E_AUTH, "the server could not prove it holds the key");
    return 0;
}

static const char *connect_failure(int rc)
{
    return rc == -EKEYREJECTED ? "the server's TLS certificate was not accepted (rfs_tls_ca)"
         : rc == -EPROTO ? "TLS handshake failed (is the server started with --tls-cert?)"
         : NULL;
}

int rfs_client_connect_with(struct rfs_client *c, const char *host, const char *port,
                            const struct rfs_connect_opts *o)
{
    memset(c, 0, sizeof *c);
    c->next_tag = 1;
    const struct net_transport *t = o->transport ? o->transport : &net_tcp_transport;
    int rc = net_connect(t, host, port, &o->net, &c->conn);
    if (rc < 0) {
        c->conn = NULL;
        c->broken = rc;
        if (t == &net_tls_transport)
            c->why = connect_failure(rc);
        return rc;
    }
    /* A failed exchange leaves nothing open; broken and why stay. */
    if (o->key && (rc = authenticate(c, o->key)) != 0) {
        net_close(c->conn);
        c->conn = NULL;
    }
    return rc;
}

int rfs_client_check(struct rfs_client *c)
{
    if (!c->broken && net_peer_closed(c->conn))
        fail(c, -ECONNRESET);
    return c->broken;
}

void rfs_client_close(struct rfs_client *c)
{
    net_close(c->conn);
    free(c->open_path);
    free(c->view_buf);
    memset(c, 0, sizeof *c);
}

static int path_call(struct rfs_client *c, uint16_t op, struct rfs_req *req, const char *path,
                     struct rfs_call *k)
{
    size_t len = strlen(path);
    if (len == 0 || len > RFS_MAX_PATH)
        return len ? RFS_E_NAMETOOLONG : RFS_E_INVAL;
    req->aux = (uint32_t) len;
    *k = (struct rfs_call) { .op = op, .req = *req, .out = path, .out_len = len };
    return call(c, k);
}

int rfs_open(struct rfs_client *c, uint32_t handle, const char *path, uint32_t flags,
             uint32_t mode, struct rfs_stat *st)
{
    struct rfs_req req = { .handle = handle, .flags = flags, .mode = mode };
    struct rfs_call k;
    int rc = path_call(c, RFS_OP_OPEN, &req, path, &k);
    if (rc == RFS_OK && st)
        *st = (struct rfs_stat) { .size = k.rep.value, .blksize = k.rep.blksize };
    return rc;
}

int rfs_open_deferred(struct rfs_client *c, uint32_t handle, const char *path, uint32_t flags,
                      uint32_t mode)
{
    size_t len = strlen(path);
    if (len == 0 || len > RFS_MAX_PATH)
        return len ? RFS_E_NAMETOOLONG : RFS_E_INVAL;
    char *copy = strdup(path);
    if (!copy)
        return -ENOMEM;
    free(c->open_path);
    c->open_path = copy;
    c->open_req = (struct rfs_req) { .handle = handle, .flags = flags, .mode = mode,
                                     .aux = (uint32_t) len };
    c->open_pending = 1;
    c->open_status = RFS_OK;
    return 0;
}

static int handle_call(struct rfs_client *c, uint16_t op, uint32_t handle, uint64_t offset,
                       uint64_t length, struct rfs_call *k)
{
    *k = (struct rfs_call) { .op = op,
                             .req = { .handle = handle, .offset = offset, .length = length } };
    return call(c, k);
}

/* The server forgets a closed handle's view: so must the cache of it, for
 * a file that takes the handle next. */
static void forget_view(struct rfs_client *c, uint32_t handle)
{
    if (c->view_req.handle == handle)
        c->view_len = 0;
}

int rfs_close(struct rfs_client *c, uint32_t handle)
{
    struct rfs_call k;
    forget_view(c, handle);
    return handle_call(c, RFS_OP_CLOSE, handle, 0, 0, &k);
}

int rfs_close_nowait(struct rfs_client *c, uint32_t handle)
{
    if (c->broken)
        return -ENOTCONN;
    forget_view(c, handle);
    struct rfs_req req = { .handle = handle };
    struct rfs_frame f;
    struct iovec iov[3];
    frame_build(c, RFS_OP_CLOSE, &req, 0, &f);
    int rc = net_writev(c->conn, iov, add_frame(iov, 0, &f, NULL, 0));
    if (rc < 0)
        return fail(c, rc);
    c->unread_replies++;
    return 0;
}

/* Send a request without waiting for its reply. */
static int send_only(struct rfs_client *c, const struct rfs_call *k, uint32_t *tag)
{
    struct rfs_frame f;
    struct iovec iov[3];
    frame_build(c, k->op, &k->req, k->out_len, &f);
    *tag = f.tag;
    int rc = net_writev(c->conn, iov, add_frame(iov, 0, &f, k->out, k->out_len));
    return rc < 0 ? fail(c, rc) : 0;
}

/*
 * PREAD, PWRITE, VREAD or VWRITE of any size as pieces of RFS_CLIENT_PIECE bytes, up to
 * RFS_CLIENT_WINDOW of them in flight, so that the server works on one
 * piece while the next travels. The first piece goes alone when it must
 * carry a deferred OPEN or follow unread replies. After a failure nothing
 * new is sent, the pieces in flight are still received, and the first
 * failure is returned.
 */
static int transfer(struct rfs_client *c, uint16_t op, uint32_t handle, char *buf,
                    uint64_t len, uint64_t offset, uint64_t *done)
{
    struct piece {
        uint32_t tag;
        uint64_t start, len;
    } win[RFS_CLIENT_WINDOW];
    uint64_t sent = 0;
    int status = RFS_OK, eof = 0, head = 0, inflight = 0;
    int writes = op == RFS_OP_PWRITE || op == RFS_OP_VWRITE;

    *done = 0;
    if (c->broken)
        return -ENOTCONN;
    while ((sent < len && status == RFS_OK && !eof) || inflight > 0) {
        int serial = c->open_pending || c->view_pending || c->unread_replies;
        while (sent < len && status == RFS_OK && !eof && inflight < RFS_CLIENT_WINDOW &&
               !(serial && inflight > 0)) {
            uint64_t n = len - sent < RFS_CLIENT_PIECE ? len - sent : RFS_CLIENT_PIECE;
            struct rfs_call k = { .op = op,
                                  .req = { .handle = handle, .offset = offset + sent, .length = n },
                                  .out = writes ? buf + sent : NULL, .out_len = writes ? n : 0,
                                  .in = buf + sent, .in_max = writes ? 0 : n };
            if (serial) {
                /* call() sends the deferred OPEN or skips old replies first */
                int rc = call(c, &k);
                if (rc < 0)
                    return rc;
                if (rc != RFS_OK)
                    return rc;
                if (writes && k.rep.value != n)
                    return fail(c, -EPROTO);
                *done += writes ? n : k.in_len;
                eof = !writes && k.in_len < n;
                sent += n;
                serial = 0;
                continue;
            }
            struct piece *p = &win[(head + inflight) % RFS_CLIENT_WINDOW];
            int rc = send_only(c, &k, &p->tag);
            if (rc < 0)
                return rc;
            p->start = sent;
            p->len = n;
            sent += n;
            inflight++;
        }
        if (inflight == 0)
            break;
        struct piece *p = &win[head];
        struct rfs_rep rep;
        uint64_t got;
        int rc = recv_reply(c, op, p->tag, buf + p->start, writes ? 0 : p->len, &rep, &got);
        if (rc < 0)
            return rc;
        head = (head + 1) % RFS_CLIENT_WINDOW;
        inflight--;
        if (rc != RFS_OK) {
            status = status == RFS_OK ? rc : status;
            continue;
        }
        if (writes && rep.value != p->len)
            return fail(c, -EPROTO);
        if (status == RFS_OK && !eof)
            *done += writes ? p->len : got;
        if (!writes && got < p->len)
            eof = 1;            /* end of file: later pieces add nothing */
    }
    return status;
}

int rfs_pread(struct rfs_client *c, uint32_t handle, void *buf, uint64_t len, uint64_t offset,
              uint64_t *done)
{
    return transfer(c, RFS_OP_PREAD, handle, buf, len, offset, done);
}

int rfs_pwrite(struct rfs_client *c, uint32_t handle, const void *buf, uint64_t len,
               uint64_t offset)
{
    uint64_t done;
    /* transfer() only reads from buf for a write */
    return transfer(c, RFS_OP_PWRITE, handle, (char *) buf, len, offset, &done);
}

int rfs_fstat(struct rfs_client *c, uint32_t handle, struct rfs_stat *st)
{
    struct rfs_call k;
    int rc = handle_call(c, RFS_OP_FSTAT, handle, 0, 0, &k);
    if (rc == RFS_OK)
        *st = (struct rfs_stat) { .size = k.rep.value, .blksize = k.rep.blksize };
    return rc;
}

int rfs_ftruncate(struct rfs_client *c, uint32_t handle, uint64_t size)
{
    struct rfs_call k;
    return handle_call(c, RFS_OP_FTRUNCATE, handle, 0, size, &k);
}

int rfs_fsync(struct rfs_client *c, uint32_t handle)
{
    struct rfs_call k;
    return handle_call(c, RFS_OP_FSYNC, handle, 0, 0, &k);
}

int rfs_unlink(struct rfs_client *c, const char *path)
{
    struct rfs_req req = { 0 };
    struct rfs_call k;
    return path_call(c, RFS_OP_UNLINK, &req, path, &k);
}

/* --- the namespace extension --- */

int rfs_stat_path(struct rfs_client *c, const char *path, struct rfs_stat_rec *st)
{
    uint8_t rec[RFS_STAT_SIZE];
    struct rfs_req req = { 0 };
    size_t len = strlen(path);
    if (len == 0 || len > RFS_MAX_PATH)
        return len ? RFS_E_NAMETOOLONG : RFS_E_INVAL;
    req.aux = (uint32_t) len;
    struct rfs_call k = { .op = RFS_OP_STAT, .req = req, .out = path, .out_len = len,
                          .in = rec, .in_max = sizeof rec };
    int rc = call(c, &k);
    if (rc != RFS_OK)
        return rc;
    if (k.in_len != sizeof rec || rfs_stat_decode(rec, st) != RFS_OK)
        return fail(c, -EPROTO);
    return RFS_OK;
}

int rfs_readdir(struct rfs_client *c, const char *path, uint64_t index, void *buf,
                uint64_t room, uint64_t *next, uint64_t *used)
{
    size_t len = strlen(path);
    if (len == 0 || len > RFS_MAX_PATH)
        return len ? RFS_E_NAMETOOLONG : RFS_E_INVAL;
    if (room == 0 || room > RFS_MAX_DATA)
        return RFS_E_INVAL;
    struct rfs_req req = { .aux = (uint32_t) len, .offset = index, .length = room };
    struct rfs_call k = { .op = RFS_OP_READDIR, .req = req, .out = path, .out_len = len,
                          .in = buf, .in_max = room };
    int rc = call(c, &k);
    if (rc != RFS_OK)
        return rc;
    if (k.rep.value < index || (k.in_len > 0 && k.rep.value == index))
        return fail(c, -EPROTO);
    *next = k.rep.value;
    *used = k.in_len;
    return RFS_OK;
}

int rfs_mkdir(struct rfs_client *c, const char *path, uint32_t mode)
{
    struct rfs_req req = { .mode = mode & 07777 };
    struct rfs_call k;
    return path_call(c, RFS_OP_MKDIR, &req, path, &k);
}

int rfs_rmdir(struct rfs_client *c, const char *path)
{
    struct rfs_req req = { 0 };
    struct rfs_call k;
    return path_call(c, RFS_OP_RMDIR, &req, path, &k);
}

int rfs_rename(struct rfs_client *c, const char *from, const char *to, uint32_t flags)
{
    size_t n = strlen(from), m = strlen(to);
    if (n == 0 || m == 0)
        return RFS_E_INVAL;
    if (n > RFS_MAX_PATH || m > RFS_MAX_PATH)
        return RFS_E_NAMETOOLONG;
    char *both = malloc(n + m);
    if (!both)
        return -ENOMEM;
    memcpy(both, from, n);
    memcpy(both + n, to, m);
    struct rfs_req req = { .flags = flags, .aux = (uint32_t) n, .length = m };
    struct rfs_call k = { .op = RFS_OP_RENAME, .req = req, .out = both, .out_len = n + m };
    int rc = call(c, &k);
    free(both);
    return rc;
}

int rfs_setattr(struct rfs_client *c, const char *path, uint32_t flags, uint32_t mode,
                int64_t atime_ns, int64_t mtime_ns)
{
    if (atime_ns < 0 || mtime_ns < 0)
        return RFS_E_INVAL;
    struct rfs_req req = { .flags = flags, .mode = mode & 07777, .offset = (uint64_t) atime_ns,
                           .length = (uint64_t) mtime_ns };
    struct rfs_call k;
    return path_call(c, RFS_OP_SETATTR, &req, path, &k);
}

int rfs_prealloc(struct rfs_client *c, uint32_t handle, uint64_t offset, uint64_t len)
{
    struct rfs_call k;
    return handle_call(c, RFS_OP_PREALLOC, handle, offset, len, &k);
}

int rfs_lock(struct rfs_client *c, uint32_t handle, uint32_t kind, uint64_t offset,
             uint64_t len, int wait)
{
    struct rfs_call k = { .op = RFS_OP_LOCK,
                          .req = { .handle = handle, .flags = kind, .aux = wait ? 1 : 0,
                                   .offset = offset, .length = len } };
    return call(c, &k);
}

void rfs_lease_request(uint32_t handle, uint32_t kind, const struct rfs_lease_args *a,
                       struct rfs_req *req, uint8_t data[RFS_LEASE_DATA])
{
    *req = (struct rfs_req) { .handle = handle, .flags = kind };
    if (kind == RFS_LEASE_TAKE) {
        req->offset = a->offset;
        req->length = a->length;
    }
    le_put64(data, a->owner);
    le_put64(data + 8, a->id);
    le_put64(data + 16, kind == RFS_LEASE_TAKE ? a->call : 0);
}

int rfs_lease(struct rfs_client *c, uint32_t handle, uint32_t kind,
              const struct rfs_lease_args *a)
{
    static const struct rfs_lease_args none;
    uint8_t data[RFS_LEASE_DATA];
    struct rfs_call k = { .op = RFS_OP_LEASE, .out = data,
                          .out_len = kind == RFS_LEASE_DRAIN ? 0 : RFS_LEASE_DATA };
    rfs_lease_request(handle, kind, a ? a : &none, &k.req, data);
    return call(c, &k);
}

int rfs_set_view(struct rfs_client *c, uint32_t handle, uint64_t disp, const void *enc,
                 uint64_t len)
{
    if (len == 0 || len > RFS_MAX_VIEW)
        return RFS_E_TOOBIG;
    if (c->view_len == len && c->view_req.handle == handle && c->view_req.offset == disp &&
        memcmp(c->view_buf, enc, (size_t) len) == 0)
        return 0;                       /* the server has it, or it is queued */
    uint8_t *copy = malloc((size_t) len);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, enc, (size_t) len);
    free(c->view_buf);
    c->view_buf = copy;
    c->view_len = len;
    c->view_req = (struct rfs_req) { .handle = handle, .offset = disp, .length = len };
    c->view_pending = 1;
    return 0;
}

int rfs_vread(struct rfs_client *c, uint32_t handle, void *buf, uint64_t len, uint64_t pos,
              uint64_t *done)
{
    return transfer(c, RFS_OP_VREAD, handle, buf, len, pos, done);
}

int rfs_vwrite(struct rfs_client *c, uint32_t handle, const void *buf, uint64_t len,
               uint64_t pos)
{
    uint64_t done;
    return transfer(c, RFS_OP_VWRITE, handle, (char *) buf, len, pos, &done);
}

int rfs_set_layout(struct rfs_client *c, uint32_t handle, uint32_t index, uint32_t factor,
                   uint64_t unit, uint64_t base)
{
    struct rfs_call k = { .op = RFS_OP_LAYOUT,
                          .req = { .handle = handle, .flags = index, .aux = factor,
                                   .offset = base, .length = unit } };
    return call(c, &k);
}

int rfs_send(struct rfs_client *c, uint16_t op, const struct rfs_req *req,
             const struct iovec *data, int ndata, struct rfs_inflight *out)
{
    struct rfs_frame view_frame, frame;
    struct iovec few[16], *iov = few;
    uint64_t var = 0;
    int n = 0;
    if (c->broken)
        return -ENOTCONN;
    if (c->open_pending || c->unread_replies)
        return -EBUSY;
    if (ndata + 5 > (int) (sizeof few / sizeof few[0])) {
        iov = malloc((size_t) (ndata + 5) * sizeof *iov);
        if (!iov)
            return -ENOMEM;
    }
    out->op = op;
    out->view_tag = 0;
    if (c->view_pending) {
        frame_build(c, RFS_OP_SETVIEW, &c->view_req, c->view_len, &view_frame);
        n = add_frame(iov, n, &view_frame, c->view_buf, c->view_len);
        out->view_tag = view_frame.tag;
        c->view_pending = 0;
    }
    for (int i = 0; i < ndata; i++)
        var += data[i].iov_len;
    frame_build(c, op, req, var, &frame);
    out->tag = frame.tag;
    n = add_frame(iov, n, &frame, NULL, 0);
    for (int i = 0; i < ndata; i++)
        if (data[i].iov_len)
            iov[n++] = data[i];
    int rc = net_writev(c->conn, iov, n);
    if (iov != few)
        free(iov);
    return rc < 0 ? fail(c, rc) : 0;
}

int rfs_recv(struct rfs_client *c, const struct rfs_inflight *p, void *in, uint64_t in_max,
             struct rfs_rep *rep, uint64_t *in_len)
{
    int view_status = RFS_OK;
    if (c->broken)
        return -ENOTCONN;
    if (p->view_tag) {
        view_status = recv_view_reply(c, p->view_tag);
        if (view_status < 0)
            return view_status;
    }
    int rc = recv_reply(c, p->op, p->tag, in, in_max, rep, in_len);
    return view_status != RFS_OK && rc >= 0 ? view_status : rc;
}

int rfs_recvv(struct rfs_client *c, const struct rfs_inflight *p, const struct iovec *in,
              int incnt, struct rfs_rep *rep, uint64_t *in_len)
{
    int view_status = RFS_OK;
    uint64_t in_max = 0;
    if (c->broken)
        return -ENOTCONN;
    for (int i = 0; i < incnt; i++)
        in_max += in[i].iov_len;
    if (p->view_tag) {
        view_status = recv_view_reply(c, p->view_tag);
        if (view_status < 0)
            return view_status;
    }
    int rc = recv_reply_iov(c, p->op, p->tag, in, incnt, in_max, rep, in_len);
    return view_status != RFS_OK && rc >= 0 ? view_status : rc;
}
