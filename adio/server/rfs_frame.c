/*
 * The request engine's framing (rfs_frame.h): a request is validated
 * completely before it is performed; a malformed stream is answered and
 * the connection dropped.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_frame.h"

#include <errno.h>
#include <sys/uio.h>

#include "server/rfs_dispatch.h"
#include "server/rfs_fileops.h"
#include "server/rfs_log.h"
#include "server/rfs_server_auth.h"

/*
 * From this size on, written data goes from the socket to the file in the
 * kernel where the transport can (splice): one copy instead of two. Reads
 * stay pread + send: sendfile measured slower and less steady on loopback
 * (docs/performance.md).
 */
#define RFS_ZEROCOPY_MIN (64u << 10)

static int send_reply(struct rfs_session *ss, uint16_t op, uint32_t tag,
                      const struct rfs_result *res)
{
    uint8_t hbuf[RFS_HDR_SIZE], fbuf[RFS_REP_FIXED];
    struct rfs_hdr h = {
        .magic = RFS_MAGIC, .version = RFS_VERSION, .op = (uint16_t) (op | RFS_REPLY),
        .tag = tag, .status = res->status, .len = RFS_REP_FIXED + res->data_len
    };
    rfs_hdr_encode(&h, hbuf);
    rfs_rep_encode(&res->rep, fbuf);
    struct iovec iov[3] = { { hbuf, sizeof hbuf }, { fbuf, sizeof fbuf },
                            { ss->buf, (size_t) res->data_len } };
    return net_writev(ss->conn, iov, res->data_len ? 3 : 2);
}

/* The most reply data a read may bring (0 for other requests). A striped
 * VREAD brings only this object's share of its window: rfs_view_io checks
 * that once it knows it. */
static uint64_t reply_bound(const struct rfs_session *ss, uint16_t op, const struct rfs_req *r)
{
    if (op == RFS_OP_PREAD || op == RFS_OP_LREAD || op == RFS_OP_READDIR ||
        (op == RFS_OP_VREAD && !ss->layout[r->handle].stripes.factor))
        return r->length;
    return 0;
}

/* The header and fixed part of a request: 0, 1 for an orderly end, < 0
 * to drop the connection (a malformed header answered first). */
static int read_head(struct rfs_session *ss, struct rfs_hdr *h, struct rfs_req *r)
{
    uint8_t hbuf[RFS_HDR_SIZE], fbuf[RFS_REQ_FIXED];
    int rc = net_readn(ss->conn, hbuf, sizeof hbuf);
    if (rc == -ECONNRESET)
        return 1;
    if (rc < 0)
        return rc;
    if (rfs_hdr_decode(hbuf, h) != RFS_OK) {
        rfs_log(RFS_LOG_WARN, "%s: bad magic or version (%#x, %u), closing", ss->peer,
                h->magic, h->version);
        struct rfs_result res = { .status = RFS_E_PROTO };
        if (h->magic == RFS_MAGIC)
            send_reply(ss, h->op & ~RFS_REPLY, h->tag, &res);
        return -EPROTO;
    }
    if (h->len < RFS_REQ_FIXED) {
        rfs_log(RFS_LOG_WARN, "%s: short request (%llu bytes), closing", ss->peer,
                (unsigned long long) h->len);
        struct rfs_result res = { .status = RFS_E_PROTO };
        send_reply(ss, h->op, h->tag, &res);
        return -EPROTO;
    }
    rc = net_readn(ss->conn, fbuf, sizeof fbuf);
    if (rc < 0)
        return rc;
    rfs_req_decode(fbuf, r);
    return 0;
}

/* The request's status before any of its data is read; < 0 (answered)
 * when the connection must end. */
static int admit(struct rfs_session *ss, const struct rfs_hdr *h, const struct rfs_req *r,
                 struct rfs_result *res)
{
    *res = (struct rfs_result) { .status = rfs_req_validate(h, r) };
    uint64_t var = h->len - RFS_REQ_FIXED;
    /* A read whose reply would not fit this server's buffer is refused like
     * one over the protocol's limit; the connection goes on. */
    if (res->status == RFS_OK && reply_bound(ss, h->op, r) > ss->server->max_data)
        res->status = RFS_E_TOOBIG;
    if (res->status == RFS_E_PROTO || var > ss->server->max_data) {
        rfs_log(RFS_LOG_WARN, "%s: malformed %s request: %s, closing", ss->peer,
                rfs_op_name(h->op), rfs_status_str(res->status ? res->status : RFS_E_TOOBIG));
        if (res->status == RFS_OK)
            res->status = RFS_E_TOOBIG;
        send_reply(ss, h->op, h->tag, res);
        return -EPROTO;
    }
    /* Nothing of an unauthenticated request is read, let alone done. */
    if (!ss->auth.done && h->op != RFS_OP_AUTH) {
        rfs_log(RFS_LOG_WARN, "%s: %s request without authentication, closing", ss->peer,
                rfs_op_name(h->op));
        *res = (struct rfs_result) { .status = RFS_E_AUTH };
        send_reply(ss, h->op, h->tag, res);
        return -EACCES;
    }
    return 0;
}

/* The request's path, or RENAME's two (aux bytes, then the rest). */
static int paths_validate(uint16_t op, const struct rfs_req *r, const uint8_t *data,
                          uint64_t var)
{
    const char *p = (const char *) data;
    if (op != RFS_OP_RENAME)
        return rfs_path_validate(p, (size_t) var);
    int rc = rfs_path_validate(p, r->aux);
    return rc ? rc : rfs_path_validate(p + r->aux, (size_t) (var - r->aux));
}

/* Read the request's data and perform it; < 0 (answered where there is
 * something to say) when the connection must end. */
static int perform(struct rfs_session *ss, const struct rfs_hdr *h, const struct rfs_req *r,
                   struct rfs_result *res)
{
    uint64_t var = h->len - RFS_REQ_FIXED;
    if (var > 0) {
        if (rfs_session_reserve(ss, var) < 0)
            return -ENOMEM;
        int rc = net_readn(ss->conn, ss->buf, (size_t) var);
        if (rc < 0)
            return rc;
    }
    if (res->status == RFS_OK && rfs_op_has_path(h->op))
        res->status = paths_validate(h->op, r, ss->buf, var);
    if (res->status == RFS_OK && h->op == RFS_OP_AUTH) {
        int rc = rfs_server_auth(ss, r, res);
        if (rc < 0) {
            send_reply(ss, h->op, h->tag, res);
            return rc;
        }
    } else if (res->status == RFS_OK)
        rfs_dispatch(ss, h->op, r, var, res);
    else
        rfs_log(RFS_LOG_INFO, "%s: %s refused: %s", ss->peer, rfs_op_name(h->op),
                rfs_status_str(res->status));
    return 0;
}

/* Send the reply; a collective call's replies go out in its schedule. */
static int answer(struct rfs_session *ss, const struct rfs_hdr *h, const struct rfs_req *r,
                  const struct rfs_result *res)
{
    if (!ss->coll_joined)
        return send_reply(ss, h->op, h->tag, res);
    const struct rfs_layout *l = &ss->layout[r->handle];
    rfs_coll_wait_turn(ss->server->coll, &ss->coll_now, l->stripes.factor ? l->index : 0,
                       ss->server->coll_timeout_ms);
    int rc = send_reply(ss, h->op, h->tag, res);
    rfs_coll_leave(ss->server->coll, &ss->coll_now);
    ss->coll_joined = 0;
    return rc;
}

int rfs_frame_serve_one(struct rfs_session *ss)
{
    struct rfs_hdr h;
    struct rfs_req r;
    struct rfs_result res;
    int rc = read_head(ss, &h, &r);
    if (rc != 0)
        return rc;
    if ((rc = admit(ss, &h, &r, &res)) < 0)
        return rc;
    uint64_t var = h.len - RFS_REQ_FIXED;
    if (res.status == RFS_OK && h.op == RFS_OP_PWRITE && var >= RFS_ZEROCOPY_MIN &&
        ss->conn->transport->recv_to_file) {
        res.status = rfs_file_lease_wait(ss, h.op, &r);
        rc = rfs_file_pwrite_direct(ss, &r, &res);
        if (rc == 0 && ss->server->rate)
            rfs_rate_take(ss->server->rate, RFS_HDR_SIZE + h.len);
        return rc < 0 ? rc : send_reply(ss, h.op, h.tag, &res);
    }
    if ((rc = perform(ss, &h, &r, &res)) < 0)
        return rc;
    if (res.status != RFS_OK)
        res.data_len = 0;
    if (ss->server->rate)
        rfs_rate_take(ss->server->rate, RFS_HDR_SIZE + h.len + res.data_len);
    return answer(ss, &h, &r, &res);
}
