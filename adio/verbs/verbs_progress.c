/*
 * Progress of a verbs connection (verbs_conn.h): completions, connection
 * events, credits, the received stream, and the process's rendezvous
 * load. No threads of its own: progress is made inside the calls.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/verbs_conn.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The load of seed 001's adaptive rendezvous: the rendezvous this process
 * takes part in on all its connections, as writer from its RTS to the end
 * of the transfer, as reader from the RTS's arrival to its last byte.
 * rfsd serves connections from several threads: atomic.
 */
static atomic_uint_fast32_t process_load;

void vconn_load_enter(void)
{
    atomic_fetch_add_explicit(&process_load, 1, memory_order_relaxed);
}

void vconn_load_leave(void)
{
    atomic_fetch_sub_explicit(&process_load, 1, memory_order_relaxed);
}

uint32_t vconn_own_load(const struct verbs_conn *c)
{
    uint_fast32_t n = atomic_load_explicit(&process_load, memory_order_relaxed);
    return n > UINT32_MAX - c->load_offset ? UINT32_MAX : (uint32_t) n + c->load_offset;
}

int vconn_fail(struct verbs_conn *c, int err)
{
    if (!c->failed)
        c->failed = err;
    return c->failed;
}

static void free_rx_item(struct rx_item *it)
{
    if (it->h.type == VMSG_RTS)
        vconn_load_leave();
    free(it);
}

void vconn_free_rx(struct verbs_conn *c)
{
    while (c->rx_head) {
        struct rx_item *it = c->rx_head;
        c->rx_head = it->next;
        free_rx_item(it);
    }
    c->rx_tail = NULL;
}

int vconn_post_recv(struct verbs_conn *c, uint32_t idx)
{
    struct ibv_sge sge = { .addr = (uintptr_t) (c->rbuf + (size_t) idx * c->slot),
                           .length = c->slot, .lkey = c->rmr->lkey };
    struct ibv_recv_wr wr = { .wr_id = WRID(WR_RECV, idx), .sg_list = &sge, .num_sge = 1 };
    struct ibv_recv_wr *bad;
    int rc = ibv_post_recv(c->id->qp, &wr, &bad);
    return rc ? -rc : 0;
}

static void queue_rx(struct verbs_conn *c, struct rx_item *it)
{
    it->next = NULL;
    if (c->rx_tail)
        c->rx_tail->next = it;
    else
        c->rx_head = it;
    c->rx_tail = it;
}

void vconn_pop_rx(struct verbs_conn *c)
{
    struct rx_item *it = c->rx_head;
    c->rx_head = it->next;
    if (!c->rx_head)
        c->rx_tail = NULL;
    free_rx_item(it);
}

/*
 * A message in receive buffer idx. Stream data is copied out at once and
 * the buffer reposted, so a peer is never kept waiting for credits by a
 * reader that is busy writing (the client pipelines its requests).
 */
static void on_recv(struct verbs_conn *c, uint32_t idx, uint32_t got)
{
    const uint8_t *buf = c->rbuf + (size_t) idx * c->slot;
    struct vmsg_hdr h;
    if (vmsg_decode(buf, got, &h) < 0) {
        vconn_fail(c, -EPROTO);
        return;
    }
    vcredits_granted(&c->cr, h.credits);
    if (h.type == VMSG_DATA || h.type == VMSG_RTS) {
        if (h.type == VMSG_RTS && h.seq != c->seq_in + 1) {
            vconn_fail(c, -EPROTO);
            return;
        }
        struct rx_item *it = malloc(sizeof *it + h.len);
        if (!it) {
            vconn_fail(c, -ENOMEM);
            return;
        }
        it->h = h;
        it->way = 0;
        it->used = 0;
        memcpy(it->data, buf + VMSG_HDR_SIZE, h.len);
        queue_rx(c, it);
        if (h.type == VMSG_RTS) {
            c->seq_in = h.seq;
            vconn_load_enter();
        }
    } else if (h.type == VMSG_CTS) {
        if (c->cts_ready || h.seq != c->seq_out) {
            vconn_fail(c, -EPROTO);
            return;
        }
        c->cts = h;
        c->cts_ready = 1;
    } else if (h.type == VMSG_FIN) {
        c->fins++;
    }
    if (vconn_post_recv(c, idx) < 0) {
        vconn_fail(c, -ECONNRESET);
        return;
    }
    vcredits_reposted(&c->cr);
}

static void on_completion(struct verbs_conn *c, const struct ibv_wc *wc)
{
    uint32_t idx = (uint32_t) wc->wr_id;
    if (wc->status != IBV_WC_SUCCESS) {
        int lost = wc->status == IBV_WC_RETRY_EXC_ERR || wc->status == IBV_WC_RNR_RETRY_EXC_ERR;
        vconn_fail(c, lost ? -ETIMEDOUT : -ECONNRESET);
        return;
    }
    switch (wc->wr_id >> 32) {
    case WR_RECV: on_recv(c, idx, wc->byte_len); break;
    case WR_SEND: c->sfree[c->nsfree++] = idx; break;
    case WR_RDMA: c->chains_done++; break;
    default: vconn_fail(c, -EPROTO);
    }
}

static int post_now(struct verbs_conn *c, struct vmsg_hdr *h, struct viov_cursor *payload);

static void drain_cq(struct verbs_conn *c)
{
    struct ibv_wc wc[16];
    int n;
    while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0)
        for (int i = 0; i < n; i++)
            on_completion(c, &wc[i]);
    if (n < 0)
        vconn_fail(c, -EIO);
    if (!c->failed && vcredits_return_due(&c->cr) && vcredits_may_send(&c->cr, 1) &&
        c->nsfree > 0) {
        struct vmsg_hdr h = { .type = VMSG_CREDIT };
        post_now(c, &h, NULL);
    }
}

static void take_cq_events(struct verbs_conn *c)
{
    struct ibv_cq *cq;
    void *ctx;
    while (ibv_get_cq_event(c->cch, &cq, &ctx) == 0)
        ibv_ack_cq_events(cq, 1);
}

static void take_cm_events(struct verbs_conn *c)
{
    struct rdma_cm_event *ev;
    while (rdma_get_cm_event(c->ech, &ev) == 0) {
        if (ev->event == RDMA_CM_EVENT_DISCONNECTED || ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
            vconn_fail(c, -ECONNRESET);
        rdma_ack_cm_event(ev);
    }
}

/*
 * Make progress until ready() holds, the connection fails or the timeout
 * expires. Sleeps in poll() on the completion and cm channels, so an idle
 * wait costs no CPU.
 */
int vconn_wait_for(struct verbs_conn *c, ready_fn ready, const void *arg)
{
    int64_t deadline = c->timeout_ms > 0 ? net_monotonic_ms() + c->timeout_ms : -1;
    for (;;) {
        drain_cq(c);
        if (ready(c, arg))
            return 0;
        if (c->failed)
            return c->failed;
        if (ibv_req_notify_cq(c->cq, 0) != 0)
            return vconn_fail(c, -EIO);
        /* Completions that came before the notification was armed. */
        drain_cq(c);
        if (ready(c, arg))
            return 0;
        if (c->failed)
            return c->failed;
        int left = -1;
        if (deadline >= 0) {
            int64_t l = deadline - net_monotonic_ms();
            if (l <= 0)
                return vconn_fail(c, -ETIMEDOUT);
            left = (int) l;
        }
        struct pollfd p[2] = { { .fd = c->cch->fd, .events = POLLIN },
                               { .fd = c->ech->fd, .events = POLLIN } };
        int n = poll(p, 2, left);
        if (n < 0 && errno != EINTR)
            return vconn_fail(c, -errno);
        if (n > 0 && p[0].revents)
            take_cq_events(c);
        if (n > 0 && p[1].revents)
            take_cm_events(c);
    }
}

static int can_send(const struct verbs_conn *c, const void *arg)
{
    return c->nsfree > 0 && vcredits_may_send(&c->cr, *(const int *) arg);
}

/* Send one message now (a slot and a credit are free); h->len payload
 * bytes are packed from the cursor. */
static int post_now(struct verbs_conn *c, struct vmsg_hdr *h, struct viov_cursor *payload)
{
    uint32_t idx = c->sfree[--c->nsfree];
    uint8_t *buf = c->sbuf + (size_t) idx * c->slot;
    h->credits = vcredits_spend(&c->cr);
    vmsg_encode(h, buf);
    if (h->len)
        viov_copy_out(payload, buf + VMSG_HDR_SIZE, h->len);
    struct ibv_sge sge = { .addr = (uintptr_t) buf, .length = VMSG_HDR_SIZE + h->len,
                           .lkey = c->smr->lkey };
    struct ibv_send_wr wr = { .wr_id = WRID(WR_SEND, idx), .sg_list = &sge, .num_sge = 1,
                              .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
    struct ibv_send_wr *bad;
    int rc = ibv_post_send(c->id->qp, &wr, &bad);
    if (rc)
        return vconn_fail(c, -rc);
    if (h->type == VMSG_DATA) {
        c->st.eager_msgs++;
        c->st.eager_bytes += h->len;
    } else {
        c->st.control_msgs++;
    }
    return 0;
}

int vconn_post_msg(struct verbs_conn *c, struct vmsg_hdr *h, struct viov_cursor *payload)
{
    int credit_only = 0;
    int rc = vconn_wait_for(c, can_send, &credit_only);
    return rc ? rc : post_now(c, h, payload);
}
