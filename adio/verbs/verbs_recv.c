/*
 * The reader's side of the verbs transport (verbs_conn.h): eager data out
 * of the received stream, and rendezvous pulled by RDMA READ (scatter) or
 * invited by CTS, the two chosen by load where both are possible.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/verbs_conn.h"

#include <errno.h>

static int have_rx(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->rx_head != NULL;
}

static int have_fin(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->fins > 0;
}

static int wait_fin(struct verbs_conn *c)
{
    int rc = vconn_wait_for(c, have_fin, NULL);
    if (rc == 0)
        c->fins--;
    return rc;
}

/* Reader side, source one remote region: RDMA-read n bytes of it. */
static int pull(struct verbs_conn *c, struct rx_item *it, struct viov_cursor *cur,
                const struct iovec *iov, int cnt, struct verbs_region *reg, uint64_t n)
{
    uint64_t raddr = it->h.addr + it->used;
    int rc;
    if (n < c->pack_max) {
        if ((rc = vconn_ensure_stage(c, n)) < 0)
            return vconn_fail(c, rc);
        struct iovec s = { .iov_base = c->stage, .iov_len = n };
        struct verbs_region sreg = verbs_region_of(c->stage_mr);
        struct viov_cursor sc;
        viov_start(&sc, &s, 1);
        rc = vconn_rdma_chain(c, IBV_WR_RDMA_READ, &sc, &sreg, n, raddr, it->h.rkey);
        if (rc == 0)
            viov_copy_in(cur, c->stage, n);
        c->st.bounced_bytes += n;
        return rc;
    }
    if (!reg->owner) {
        rc = verbs_register_iov(c->reg, iov, cnt, IBV_ACCESS_LOCAL_WRITE, reg);
        if (rc < 0)
            return vconn_fail(c, rc);
    }
    return vconn_rdma_chain(c, IBV_WR_RDMA_READ, cur, reg, n, raddr, it->h.rkey);
}

/*
 * Reader side, source several remote segments: name a contiguous place for
 * n bytes by CTS, the writer RDMA-writes there and says FIN. The place is
 * the caller's current segment if it holds all n bytes and they are worth
 * a registration, else the staging buffer (then unpacked).
 */
static int invite(struct verbs_conn *c, struct rx_item *it, struct viov_cursor *cur, uint64_t n)
{
    const struct iovec *at = &cur->iov[cur->idx];
    int direct = n >= c->pack_max && at->iov_len - cur->off >= n;
    struct iovec dst = { .iov_base = (char *) at->iov_base + cur->off, .iov_len = n };
    struct verbs_region reg;
    int rc;
    if (direct) {
        rc = verbs_register_iov(c->reg, &dst, 1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
                                &reg);
    } else {
        if (n > VERBS_STAGE_MAX)
            n = VERBS_STAGE_MAX;
        /* the staging buffer may be made or grown (a new MR) here */
        rc = vconn_ensure_stage(c, n);
        reg = verbs_region_of(c->stage_mr);
        dst.iov_base = c->stage;
    }
    if (rc < 0)
        return vconn_fail(c, rc);
    struct vmsg_hdr h = { .type = VMSG_CTS, .seq = it->h.seq, .total = n,
                          .addr = (uintptr_t) dst.iov_base, .rkey = verbs_region_rkey(&reg, 0) };
    rc = vconn_post_msg(c, &h, NULL);
    if (rc == 0)
        rc = wait_fin(c);
    if (direct) {
        verbs_deregister(&reg);
        viov_skip(cur, n);
    } else if (rc == 0) {
        viov_copy_in(cur, c->stage, n);
        c->st.bounced_bytes += n;
    }
    if (rc == 0)
        it->used += n;
    return rc;
}

/* Reader side, once per rendezvous (its first n bytes): several remote
 * segments can only be gathered by the writer; several local segments
 * only take the data without a copy by an RDMA READ scattering into
 * them (an invited write lands in one place); one region into one is
 * pulled or invited by load. */
static enum vrdv_way choose_way(struct verbs_conn *c, const struct rx_item *it,
                                const struct viov_cursor *cur, uint64_t n)
{
    if (!it->h.addr)
        return VRDV_WRITE;
    if (n >= c->pack_max && cur->iov[cur->idx].iov_len - cur->off < n)
        return VRDV_READ;
    struct vrdv_side me = { .load = vconn_own_load(c), .server = c->server };
    struct vrdv_side peer = { .load = it->h.load, .server = (it->h.flags & VMSG_F_SERVER) != 0 };
    enum vrdv_way way = verbs_rendezvous_choose(me, peer, c->busy);
    if (way == VRDV_READ)
        c->st.adaptive_reads++;
    else
        c->st.adaptive_writes++;
    return way;
}

static int read_rendezvous(struct verbs_conn *c, struct rx_item *it, struct viov_cursor *cur,
                           const struct iovec *iov, int cnt, struct verbs_region *reg,
                           uint64_t want)
{
    uint64_t n = it->h.total - it->used < want ? it->h.total - it->used : want;
    if (!it->way)
        it->way = choose_way(c, it, cur, n);
    if (it->way == VRDV_WRITE)
        return invite(c, it, cur, n);
    int rc = pull(c, it, cur, iov, cnt, reg, n);
    if (rc)
        return rc;
    it->used += n;
    if (it->used < it->h.total)
        return 0;
    struct vmsg_hdr fin = { .type = VMSG_FIN, .seq = it->h.seq };
    return vconn_post_msg(c, &fin, NULL);
}

int verbs_readv(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    struct verbs_conn *c = (struct verbs_conn *) conn;
    struct viov_cursor cur;
    struct verbs_region reg = { 0 };
    viov_start(&cur, iov, iovcnt);
    uint64_t want = viov_left(&cur);
    int rc = 0;
    while (rc == 0 && want > 0) {
        if ((rc = vconn_wait_for(c, have_rx, NULL)) != 0)
            break;
        struct rx_item *it = c->rx_head;
        uint64_t before = it->used;
        if (it->h.type == VMSG_DATA) {
            uint64_t n = it->h.len - it->used < want ? it->h.len - it->used : want;
            viov_copy_in(&cur, it->data + it->used, n);
            it->used += n;
        } else {
            rc = read_rendezvous(c, it, &cur, iov, iovcnt, &reg, want);
        }
        want -= it->used - before;
        uint64_t size = it->h.type == VMSG_DATA ? it->h.len : it->h.total;
        if (it->used == size)
            vconn_pop_rx(c);
    }
    verbs_deregister(&reg);
    return rc;
}

int verbs_readn(struct net_conn *conn, void *buf, size_t len)
{
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    return verbs_readv(conn, &iov, 1);
}
