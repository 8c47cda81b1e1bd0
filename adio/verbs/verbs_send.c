/*
 * The writer's side of the verbs transport (verbs_conn.h): eager messages
 * under credits, and rendezvous by RDMA WRITE (gather) or by the reader's
 * RDMA READ of one region, as the reader chooses by load. Protocol:
 * docs/rdma.md, "Verbs transport".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/verbs_conn.h"

#include <errno.h>

static uint32_t eager_max(const struct verbs_conn *c)
{
    return (c->slot < c->peer_slot ? c->slot : c->peer_slot) - VMSG_HDR_SIZE;
}

static int send_eager(struct verbs_conn *c, struct viov_cursor *cur, uint64_t len)
{
    while (len > 0) {
        uint32_t n = len < eager_max(c) ? (uint32_t) len : eager_max(c);
        struct vmsg_hdr h = { .type = VMSG_DATA, .len = n };
        int rc = vconn_post_msg(c, &h, cur);
        if (rc)
            return rc;
        len -= n;
    }
    return 0;
}

static int have_cts(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->cts_ready;
}

static int have_fin_or_cts(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->fins > 0 || c->cts_ready;
}

/* Writer side, source not one region: RDMA-write each CTS's share. */
static int write_on_cts(struct verbs_conn *c, struct viov_cursor *cur,
                        const struct verbs_region *reg, uint64_t total)
{
    while (total > 0) {
        int rc = vconn_wait_for(c, have_cts, NULL);
        if (rc)
            return rc;
        c->cts_ready = 0;
        if (c->cts.total > total)
            return vconn_fail(c, -EPROTO);
        rc = vconn_rdma_chain(c, IBV_WR_RDMA_WRITE, cur, reg, c->cts.total, c->cts.addr,
                              c->cts.rkey);
        struct vmsg_hdr fin = { .type = VMSG_FIN, .seq = c->seq_out };
        if (rc == 0)
            rc = vconn_post_msg(c, &fin, NULL);
        if (rc)
            return rc;
        total -= c->cts.total;
    }
    return 0;
}

/* Writer side, source one region: the reader pulled it all (FIN) or
 * chose to have it RDMA-written (CTS). */
static int await_reader(struct verbs_conn *c, struct viov_cursor *cur,
                        const struct verbs_region *reg, uint64_t total)
{
    int rc = vconn_wait_for(c, have_fin_or_cts, NULL);
    if (rc)
        return rc;
    if (c->fins > 0) {
        c->fins--;
        return 0;
    }
    return write_on_cts(c, cur, reg, total);
}

static int single_segment(const struct iovec *iov, int cnt, int *seg)
{
    int n = 0;
    for (int i = 0; i < cnt; i++)
        if (iov[i].iov_len) {
            n++;
            *seg = i;
        }
    return n == 1;
}

/*
 * Rendezvous of a writev's bulk: below pack_max it is packed into the
 * staging buffer, above it the caller's own segments are registered. One
 * region is offered for the reader to RDMA-read, or to invite by CTS as it
 * chooses; several segments are RDMA-written (gathered) into the places
 * the reader names by CTS.
 */
static int offer_rendezvous(struct verbs_conn *c, const struct iovec *iov, int cnt, uint64_t total)
{
    struct viov_cursor cur;
    struct verbs_region reg = { 0 };
    struct iovec staged;
    int seg = 0, rc;
    viov_start(&cur, iov, cnt);
    if (total < c->pack_max) {
        if ((rc = vconn_ensure_stage(c, total)) < 0)
            return vconn_fail(c, rc);
        viov_copy_out(&cur, c->stage, total);
        staged = (struct iovec) { .iov_base = c->stage, .iov_len = total };
        iov = &staged;
        cnt = 1;
        reg = verbs_region_of(c->stage_mr);
        viov_start(&cur, iov, cnt);
    } else {
        int one = single_segment(iov, cnt, &seg);
        rc = verbs_register_iov(c->reg, iov, cnt, one ? IBV_ACCESS_REMOTE_READ : 0, &reg);
        if (rc < 0)
            return vconn_fail(c, rc);
    }
    struct vmsg_hdr h = { .type = VMSG_RTS, .flags = c->server ? VMSG_F_SERVER : 0,
                          .seq = ++c->seq_out, .total = total, .load = vconn_own_load(c) };
    int one = single_segment(iov, cnt, &seg);
    if (one) {
        h.addr = (uintptr_t) iov[seg].iov_base;
        h.rkey = verbs_region_rkey(&reg, seg);
    }
    c->st.rendezvous++;
    rc = vconn_post_msg(c, &h, NULL);
    if (rc == 0)
        rc = one ? await_reader(c, &cur, &reg, total) : write_on_cts(c, &cur, &reg, total);
    verbs_deregister(&reg);
    return rc;
}

/* The rendezvous counts in the process's load while it runs. */
static int send_rendezvous(struct verbs_conn *c, const struct iovec *iov, int cnt, uint64_t total)
{
    vconn_load_enter();
    int rc = offer_rendezvous(c, iov, cnt, total);
    vconn_load_leave();
    return rc;
}

/*
 * Small vectors go as one eager message. Otherwise leading small segments
 * (request headers) go eager and the rest, the bulk data, by rendezvous.
 */
int verbs_writev(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    struct verbs_conn *c = (struct verbs_conn *) conn;
    if (c->failed)
        return c->failed;
    struct viov_cursor cur;
    viov_start(&cur, iov, iovcnt);
    uint64_t total = viov_left(&cur);
    if (total <= eager_max(c))
        return send_eager(c, &cur, total);
    uint64_t head = 0;
    int k = 0;
    while (k < iovcnt && iov[k].iov_len <= VERBS_HEAD_MAX && head + iov[k].iov_len <= eager_max(c))
        head += iov[k++].iov_len;
    int rc = send_eager(c, &cur, head);
    if (rc)
        return rc;
    if (total - head <= eager_max(c))
        return send_eager(c, &cur, total - head);
    return send_rendezvous(c, iov + k, iovcnt - k, total - head);
}
