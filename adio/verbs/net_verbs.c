/*
 * The verbs transport (net_verbs.h): rdma_cm connection setup, eager
 * messages with credits, rendezvous by RDMA WRITE (gather) or RDMA READ
 * (scatter), the two chosen by load where both are possible. Protocol:
 * docs/rdma.md, "Verbs transport".
 *
 * Resources of a connection are made in this order and released in the
 * reverse one: event channel, cm id, PD, receive and send buffers and
 * their MRs, completion channel, CQ, QP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/net_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "verbs/verbs_proto.h"
#include "verbs/verbs_reg.h"

/* Defaults; RFS_VERBS_* environment variables override them (docs/rdma.md). */
#define VERBS_CREDITS      16           /* receive buffers posted for the peer */
#define VERBS_EAGER        (8u << 10)   /* payload of an eager message */
#define VERBS_PACK         (64u << 10)  /* below: pack/unpack through the staging buffer */
#define VERBS_RETRY        3            /* transport retries; 7 would mean forever on rxe */
#define VERBS_RNR_RETRY    3
#define VERBS_ACK_TIMEOUT  14           /* 4.096 us * 2^14 = 67 ms per try */
#define VERBS_CM_MS        10000        /* address, route and connection setup */
#define VERBS_BATCH        64           /* RDMA work requests per chain */
#define VERBS_SGE_CAP      32
#define VERBS_STAGE_MAX    (4u << 20)
#define VERBS_RD_ATOM      16           /* RDMA READs in flight */
#define VERBS_HEAD_MAX     4096         /* a leading segment this small is a header: eager */
#define VERBS_BUSY         8            /* a server with this many rendezvous is heavily loaded */
#define VERBS_PIN_MAX      (64u << 20)  /* net_pin: at most this much memory, pinned ahead */

enum wr_kind { WR_RECV = 1, WR_SEND = 2, WR_RDMA = 3 };
#define WRID(kind, idx) (((uint64_t) (kind) << 32) | (uint32_t) (idx))

/* Stream data received and not read yet: eager bytes or a rendezvous offer. */
struct rx_item {
    struct rx_item *next;
    struct vmsg_hdr h;
    enum vrdv_way way;          /* RTS: how it moves, 0 until the reader chose */
    uint64_t used;              /* bytes already read */
    uint8_t data[];             /* DATA: the payload */
};

struct verbs_conn {
    struct net_conn base;
    struct rdma_event_channel *ech;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    uint8_t *rbuf, *sbuf;       /* depth slots each */
    struct ibv_mr *rmr, *smr;
    struct ibv_comp_channel *cch;
    struct ibv_cq *cq;
    int qp_made, connected;
    int timeout_ms;
    int server;                 /* accepted, not connected */
    uint32_t busy;              /* VERBS_BUSY or RFS_VERBS_BUSY */
    uint32_t load_offset;       /* net_verbs_set_load_offset */
    int failed;                 /* negative errno once the connection is unusable */
    /* device limits and protocol sizes */
    int max_sge, max_sge_rd;
    uint64_t wr_bytes_max;
    uint32_t depth, slot, peer_slot, pack_max;
    uint8_t rd_atom;
    /* sending */
    uint32_t *sfree;            /* free send slots (a stack) */
    uint32_t nsfree;
    struct vcredits cr;
    uint32_t seq_out, seq_in;   /* rendezvous sent, received */
    int cts_ready;
    struct vmsg_hdr cts;
    uint32_t fins;
    uint64_t chains_posted, chains_done;
    struct ibv_send_wr *wrs;    /* VERBS_BATCH */
    struct ibv_sge *sges;       /* VERBS_BATCH * max_sge */
    /* receiving */
    struct rx_item *rx_head, *rx_tail;
    /* staging: packed sends, bounced reads, CTS targets of scattered reads */
    uint8_t *stage;
    size_t stage_cap;
    struct ibv_mr *stage_mr;
    /* caller memory: OGR and the registration cache */
    int reg_mode;
    struct verbs_registrar *reg;
    struct net_verbs_stats st;
};

/*
 * The load of seed 001's adaptive rendezvous: the rendezvous this process
 * takes part in on all its connections, as writer from its RTS to the end
 * of the transfer, as reader from the RTS's arrival to its last byte.
 * rfsd serves connections from several threads: atomic.
 */
static atomic_uint_fast32_t process_load;

static void load_enter(void)
{
    atomic_fetch_add_explicit(&process_load, 1, memory_order_relaxed);
}

static void load_leave(void)
{
    atomic_fetch_sub_explicit(&process_load, 1, memory_order_relaxed);
}

static uint32_t own_load(const struct verbs_conn *c)
{
    uint_fast32_t n = atomic_load_explicit(&process_load, memory_order_relaxed);
    return n > UINT32_MAX - c->load_offset ? UINT32_MAX : (uint32_t) n + c->load_offset;
}

static uint32_t env_u32(const char *name, uint32_t dflt, uint32_t lo, uint32_t hi)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return dflt;
    unsigned long v = strtoul(s, &end, 10);
    return *end || v < lo || v > hi ? dflt : (uint32_t) v;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(struct verbs_conn *c, int err)
{
    if (!c->failed)
        c->failed = err;
    return c->failed;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static int cm_errno(enum rdma_cm_event_type t)
{
    switch (t) {
    case RDMA_CM_EVENT_REJECTED: return -ECONNREFUSED;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE: return -EHOSTUNREACH;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR: return -ECONNRESET;
    default: return -EPROTO;
    }
}

/* The next event of a channel within timeout_ms; the caller acks it. */
static int cm_next(struct rdma_event_channel *ech, int timeout_ms, struct rdma_cm_event **ev)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        if (rdma_get_cm_event(ech, ev) == 0)
            return 0;
        if (errno != EAGAIN)
            return -errno;
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = { .fd = ech->fd, .events = POLLIN };
        if (poll(&p, 1, (int) left) < 0 && errno != EINTR)
            return -errno;
    }
}

/* Wait for one event type; anything else is the failure it stands for. */
static int cm_expect(struct rdma_event_channel *ech, int timeout_ms, enum rdma_cm_event_type want,
                     struct rdma_cm_event **out)
{
    struct rdma_cm_event *ev;
    int rc = cm_next(ech, timeout_ms, &ev);
    if (rc < 0)
        return rc;
    if (ev->event != want) {
        rc = cm_errno(ev->event);
        rdma_ack_cm_event(ev);
        return rc;
    }
    *out = ev;
    return 0;
}

static struct verbs_conn *conn_new(const struct net_opts *opts)
{
    struct verbs_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base.transport = &net_verbs_transport;
    c->timeout_ms = opts ? opts->timeout_ms : 0;
    c->reg_mode = opts ? opts->registration : NET_REG_CACHED;
    c->depth = env_u32("RFS_VERBS_CREDITS", VERBS_CREDITS, 2, 1024);
    c->slot = VMSG_HDR_SIZE + env_u32("RFS_VERBS_EAGER", VERBS_EAGER, 64, 1u << 20);
    uint32_t pack = opts && opts->pack_max ? opts->pack_max : VERBS_PACK;
    if (pack > VERBS_STAGE_MAX)
        pack = VERBS_STAGE_MAX;
    c->pack_max = env_u32("RFS_VERBS_PACK", pack, 0, VERBS_STAGE_MAX);
    c->busy = env_u32("RFS_VERBS_BUSY", VERBS_BUSY, 1, UINT32_MAX);
    return c;
}

static void free_rx_item(struct rx_item *it)
{
    if (it->h.type == VMSG_RTS)
        load_leave();
    free(it);
}

static void free_rx(struct verbs_conn *c)
{
    while (c->rx_head) {
        struct rx_item *it = c->rx_head;
        c->rx_head = it->next;
        free_rx_item(it);
    }
    c->rx_tail = NULL;
}

static void conn_destroy(struct verbs_conn *c)
{
    free_rx(c);
    verbs_registrar_free(c->reg);
    if (c->stage_mr)
        ibv_dereg_mr(c->stage_mr);
    free(c->stage);
    if (c->qp_made)
        rdma_destroy_qp(c->id);
    if (c->cq)
        ibv_destroy_cq(c->cq);
    if (c->cch)
        ibv_destroy_comp_channel(c->cch);
    if (c->smr)
        ibv_dereg_mr(c->smr);
    if (c->rmr)
        ibv_dereg_mr(c->rmr);
    free(c->sbuf);
    free(c->rbuf);
    if (c->pd)
        ibv_dealloc_pd(c->pd);
    if (c->id)
        rdma_destroy_id(c->id);
    if (c->ech)
        rdma_destroy_event_channel(c->ech);
    free(c->sfree);
    free(c->wrs);
    free(c->sges);
    free(c);
}

static int post_recv(struct verbs_conn *c, uint32_t idx)
{
    struct ibv_sge sge = { .addr = (uintptr_t) (c->rbuf + (size_t) idx * c->slot),
                           .length = c->slot, .lkey = c->rmr->lkey };
    struct ibv_recv_wr wr = { .wr_id = WRID(WR_RECV, idx), .sg_list = &sge, .num_sge = 1 };
    struct ibv_recv_wr *bad;
    int rc = ibv_post_recv(c->id->qp, &wr, &bad);
    return rc ? -rc : 0;
}

static int query_limits(struct verbs_conn *c)
{
    struct ibv_device_attr da;
    struct ibv_port_attr pa;
    int rc = ibv_query_device(c->id->verbs, &da);
    if (rc == 0)
        rc = ibv_query_port(c->id->verbs, c->id->port_num, &pa);
    if (rc)
        return -rc;
    c->max_sge = da.max_sge < VERBS_SGE_CAP ? da.max_sge : VERBS_SGE_CAP;
    c->max_sge_rd = da.max_sge_rd > 0 && da.max_sge_rd < c->max_sge ? da.max_sge_rd : c->max_sge;
    c->wr_bytes_max = pa.max_msg_sz < VIOV_PIECE_MAX ? pa.max_msg_sz : VIOV_PIECE_MAX;
    int atom = da.max_qp_rd_atom < da.max_qp_init_rd_atom ? da.max_qp_rd_atom
                                                          : da.max_qp_init_rd_atom;
    c->rd_atom = (uint8_t) (atom < VERBS_RD_ATOM ? atom : VERBS_RD_ATOM);
    return c->max_sge > 0 && c->wr_bytes_max > 0 ? 0 : -ENODEV;
}

static int alloc_buffers(struct verbs_conn *c)
{
    size_t bytes = (size_t) c->depth * c->slot;
    c->rbuf = aligned_alloc(4096, (bytes + 4095) & ~(size_t) 4095);
    c->sbuf = aligned_alloc(4096, (bytes + 4095) & ~(size_t) 4095);
    c->sfree = calloc(c->depth, sizeof *c->sfree);
    c->wrs = calloc(VERBS_BATCH, sizeof *c->wrs);
    c->sges = calloc((size_t) VERBS_BATCH * (size_t) c->max_sge, sizeof *c->sges);
    if (!c->rbuf || !c->sbuf || !c->sfree || !c->wrs || !c->sges)
        return -ENOMEM;
    c->rmr = ibv_reg_mr(c->pd, c->rbuf, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!c->rmr)
        return -errno;
    c->smr = ibv_reg_mr(c->pd, c->sbuf, bytes, 0);
    if (!c->smr)
        return -errno;
    for (uint32_t i = 0; i < c->depth; i++)
        c->sfree[i] = i;
    c->nsfree = c->depth;
    return 0;
}

/* Everything below the cm id, once the id knows its device. */
static int conn_resources(struct verbs_conn *c)
{
    int rc = query_limits(c);
    if (rc < 0)
        return rc;
    if (!(c->pd = ibv_alloc_pd(c->id->verbs)))
        return -errno;
    if ((rc = verbs_registrar_new(c->pd, c->reg_mode, &c->reg)) < 0)
        return rc;
    if ((rc = alloc_buffers(c)) < 0)
        return rc;
    if (!(c->cch = ibv_create_comp_channel(c->id->verbs)))
        return -errno;
    if ((rc = set_nonblock(c->cch->fd)) < 0)
        return rc;
    /* Receives, signalled sends, and one completion per RDMA chain. */
    if (!(c->cq = ibv_create_cq(c->id->verbs, (int) (2 * c->depth + 8), c, c->cch, 0)))
        return -errno;
    if ((rc = ibv_req_notify_cq(c->cq, 0)) != 0)
        return -rc;
    struct ibv_qp_init_attr qa = {
        .send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = c->depth + VERBS_BATCH + 4, .max_recv_wr = c->depth,
                 .max_send_sge = (uint32_t) c->max_sge, .max_recv_sge = 1 },
    };
    if (rdma_create_qp(c->id, c->pd, &qa) != 0)
        return -errno;
    c->qp_made = 1;
    for (uint32_t i = 0; i < c->depth; i++)
        if ((rc = post_recv(c, i)) < 0)
            return rc;
    /* A peer that stops answering is given up after VERBS_RETRY tries of
     * this timeout each, not retried forever. */
    uint8_t ack = VERBS_ACK_TIMEOUT;
    if (rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, sizeof ack))
        return -errno;
    return 0;
}

static void conn_param(struct verbs_conn *c, uint8_t hello[VHELLO_SIZE],
                       struct rdma_conn_param *p)
{
    struct vhello h = { .depth = c->depth, .slot = c->slot };
    vhello_encode(&h, hello);
    memset(p, 0, sizeof *p);
    p->private_data = hello;
    p->private_data_len = VHELLO_SIZE;
    p->responder_resources = c->rd_atom;
    p->initiator_depth = c->rd_atom;
    p->retry_count = VERBS_RETRY;
    p->rnr_retry_count = VERBS_RNR_RETRY;
}

static int take_hello(struct verbs_conn *c, const struct rdma_cm_event *ev)
{
    struct vhello h;
    int rc = vhello_decode(ev->param.conn.private_data, ev->param.conn.private_data_len, &h);
    if (rc < 0)
        return rc;
    vcredits_init(&c->cr, h.depth, c->depth);
    c->peer_slot = h.slot;
    return 0;
}

static int cm_timeout(const struct verbs_conn *c)
{
    return c->timeout_ms > 0 ? c->timeout_ms : VERBS_CM_MS;
}

static int resolve(struct verbs_conn *c, const char *host, const char *port)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return gai == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
    struct rdma_cm_event *ev;
    int rc = rdma_resolve_addr(c->id, NULL, res->ai_addr, cm_timeout(c)) ? -errno : 0;
    freeaddrinfo(res);
    if (rc == 0 && (rc = cm_expect(c->ech, cm_timeout(c), RDMA_CM_EVENT_ADDR_RESOLVED, &ev)) == 0)
        rdma_ack_cm_event(ev);
    if (rc == 0 && rdma_resolve_route(c->id, cm_timeout(c)))
        rc = -errno;
    if (rc == 0 && (rc = cm_expect(c->ech, cm_timeout(c), RDMA_CM_EVENT_ROUTE_RESOLVED, &ev)) == 0)
        rdma_ack_cm_event(ev);
    return rc;
}

static int make_channel(struct verbs_conn *c)
{
    if (!(c->ech = rdma_create_event_channel()))
        return -errno;
    return set_nonblock(c->ech->fd);
}

static int verbs_connect(const char *host, const char *port, const struct net_opts *opts,
                         struct net_conn **out)
{
    struct verbs_conn *c = conn_new(opts);
    if (!c)
        return -ENOMEM;
    struct rdma_cm_event *ev;
    struct rdma_conn_param param;
    uint8_t hello[VHELLO_SIZE];
    int rc = make_channel(c);
    if (rc == 0 && rdma_create_id(c->ech, &c->id, c, RDMA_PS_TCP))
        rc = -errno;
    if (rc == 0)
        rc = resolve(c, host, port);
    if (rc == 0)
        rc = conn_resources(c);
    if (rc == 0) {
        conn_param(c, hello, &param);
        if (rdma_connect(c->id, &param))
            rc = -errno;
    }
    if (rc == 0 && (rc = cm_expect(c->ech, cm_timeout(c), RDMA_CM_EVENT_ESTABLISHED, &ev)) == 0) {
        rc = take_hello(c, ev);
        rdma_ack_cm_event(ev);
        c->connected = 1;
    }
    if (rc < 0) {
        if (c->connected)
            rdma_disconnect(c->id);
        conn_destroy(c);
        return rc;
    }
    *out = &c->base;
    return 0;
}

/* Progress: completions, connection events, credits. */

static void queue_rx(struct verbs_conn *c, struct rx_item *it)
{
    it->next = NULL;
    if (c->rx_tail)
        c->rx_tail->next = it;
    else
        c->rx_head = it;
    c->rx_tail = it;
}

static void pop_rx(struct verbs_conn *c)
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
        fail(c, -EPROTO);
        return;
    }
    vcredits_granted(&c->cr, h.credits);
    if (h.type == VMSG_DATA || h.type == VMSG_RTS) {
        if (h.type == VMSG_RTS && h.seq != c->seq_in + 1) {
            fail(c, -EPROTO);
            return;
        }
        struct rx_item *it = malloc(sizeof *it + h.len);
        if (!it) {
            fail(c, -ENOMEM);
            return;
        }
        it->h = h;
        it->way = 0;
        it->used = 0;
        memcpy(it->data, buf + VMSG_HDR_SIZE, h.len);
        queue_rx(c, it);
        if (h.type == VMSG_RTS) {
            c->seq_in = h.seq;
            load_enter();
        }
    } else if (h.type == VMSG_CTS) {
        if (c->cts_ready || h.seq != c->seq_out) {
            fail(c, -EPROTO);
            return;
        }
        c->cts = h;
        c->cts_ready = 1;
    } else if (h.type == VMSG_FIN) {
        c->fins++;
    }
    if (post_recv(c, idx) < 0) {
        fail(c, -ECONNRESET);
        return;
    }
    vcredits_reposted(&c->cr);
}

static void on_completion(struct verbs_conn *c, const struct ibv_wc *wc)
{
    uint32_t idx = (uint32_t) wc->wr_id;
    if (wc->status != IBV_WC_SUCCESS) {
        int lost = wc->status == IBV_WC_RETRY_EXC_ERR || wc->status == IBV_WC_RNR_RETRY_EXC_ERR;
        fail(c, lost ? -ETIMEDOUT : -ECONNRESET);
        return;
    }
    switch (wc->wr_id >> 32) {
    case WR_RECV: on_recv(c, idx, wc->byte_len); break;
    case WR_SEND: c->sfree[c->nsfree++] = idx; break;
    case WR_RDMA: c->chains_done++; break;
    default: fail(c, -EPROTO);
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
        fail(c, -EIO);
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
            fail(c, -ECONNRESET);
        rdma_ack_cm_event(ev);
    }
}

typedef int (*ready_fn)(const struct verbs_conn *c, const void *arg);

/*
 * Make progress until ready() holds, the connection fails or the timeout
 * expires. Sleeps in poll() on the completion and cm channels, so an idle
 * wait costs no CPU.
 */
static int wait_for(struct verbs_conn *c, ready_fn ready, const void *arg)
{
    int64_t deadline = c->timeout_ms > 0 ? now_ms() + c->timeout_ms : -1;
    for (;;) {
        drain_cq(c);
        if (ready(c, arg))
            return 0;
        if (c->failed)
            return c->failed;
        if (ibv_req_notify_cq(c->cq, 0) != 0)
            return fail(c, -EIO);
        /* Completions that came before the notification was armed. */
        drain_cq(c);
        if (ready(c, arg))
            return 0;
        if (c->failed)
            return c->failed;
        int left = -1;
        if (deadline >= 0) {
            int64_t l = deadline - now_ms();
            if (l <= 0)
                return fail(c, -ETIMEDOUT);
            left = (int) l;
        }
        struct pollfd p[2] = { { .fd = c->cch->fd, .events = POLLIN },
                               { .fd = c->ech->fd, .events = POLLIN } };
        int n = poll(p, 2, left);
        if (n < 0 && errno != EINTR)
            return fail(c, -errno);
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

static int have_rx(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->rx_head != NULL;
}

static int have_cts(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->cts_ready;
}

static int have_fin(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->fins > 0;
}

static int have_fin_or_cts(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->fins > 0 || c->cts_ready;
}

static int chains_idle(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->chains_done == c->chains_posted;
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
        return fail(c, -rc);
    if (h->type == VMSG_DATA) {
        c->st.eager_msgs++;
        c->st.eager_bytes += h->len;
    } else {
        c->st.control_msgs++;
    }
    return 0;
}

static int post_msg(struct verbs_conn *c, struct vmsg_hdr *h, struct viov_cursor *payload)
{
    int credit_only = 0;
    int rc = wait_for(c, can_send, &credit_only);
    return rc ? rc : post_now(c, h, payload);
}

static uint32_t eager_max(const struct verbs_conn *c)
{
    return (c->slot < c->peer_slot ? c->slot : c->peer_slot) - VMSG_HDR_SIZE;
}

static int send_eager(struct verbs_conn *c, struct viov_cursor *cur, uint64_t len)
{
    while (len > 0) {
        uint32_t n = len < eager_max(c) ? (uint32_t) len : eager_max(c);
        struct vmsg_hdr h = { .type = VMSG_DATA, .len = n };
        int rc = post_msg(c, &h, cur);
        if (rc)
            return rc;
        len -= n;
    }
    return 0;
}

/* The staging buffer, at least len bytes, registered for local and remote access. */
static int ensure_stage(struct verbs_conn *c, size_t len)
{
    if (c->stage_cap >= len)
        return 0;
    size_t cap = len < VERBS_PACK ? VERBS_PACK : (len + 4095) & ~(size_t) 4095;
    if (c->stage_mr)
        ibv_dereg_mr(c->stage_mr);
    free(c->stage);
    c->stage_mr = NULL;
    c->stage_cap = 0;
    if (!(c->stage = aligned_alloc(4096, cap)))
        return -ENOMEM;
    c->stage_mr = ibv_reg_mr(c->pd, c->stage, cap, IBV_ACCESS_LOCAL_WRITE |
                             IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
    if (!c->stage_mr)
        return -errno;
    c->stage_cap = cap;
    return 0;
}

static void count_wr(struct verbs_conn *c, int nsge, uint64_t bytes, int is_read)
{
    c->st.rdma_wrs++;
    c->st.rdma_sges += (uint64_t) nsge;
    if (nsge > 1)
        c->st.rdma_multi_sge++;
    if ((uint32_t) nsge > c->st.rdma_max_sge)
        c->st.rdma_max_sge = (uint32_t) nsge;
    if (is_read)
        c->st.rdma_read_bytes += bytes;
    else
        c->st.rdma_write_bytes += bytes;
}

/*
 * Move len bytes between the local vector at cur (registered in reg) and
 * remote [raddr, raddr + len): RDMA WRITE gathers, RDMA READ scatters, each
 * work request with up to max_sge entries, VERBS_BATCH of them chained with
 * only the last one signalled (RC completes them in order).
 */
static int rdma_chain(struct verbs_conn *c, enum ibv_wr_opcode op, struct viov_cursor *cur,
                      const struct verbs_region *reg, uint64_t len, uint64_t raddr,
                      uint32_t rkey)
{
    int is_read = op == IBV_WR_RDMA_READ;
    int max_sge = is_read ? c->max_sge_rd : c->max_sge;
    struct viov_piece pc[VERBS_SGE_CAP];
    uint64_t done = 0;
    while (done < len) {
        int nwr = 0;
        for (; nwr < VERBS_BATCH && done < len; nwr++) {
            uint64_t bytes;
            int np = viov_next_wr(cur, max_sge, len - done < c->wr_bytes_max
                                  ? len - done : c->wr_bytes_max, pc, &bytes);
            if (np == 0)
                return fail(c, -EINVAL);
            struct ibv_sge *sge = c->sges + (size_t) nwr * (size_t) c->max_sge;
            for (int j = 0; j < np; j++)
                sge[j] = (struct ibv_sge) { .addr = (uintptr_t) pc[j].addr, .length = pc[j].len,
                                            .lkey = verbs_region_lkey(reg, pc[j].seg) };
            c->wrs[nwr] = (struct ibv_send_wr) {
                .wr_id = WRID(WR_RDMA, 0), .sg_list = sge, .num_sge = np, .opcode = op,
                .wr.rdma = { .remote_addr = raddr + done, .rkey = rkey } };
            if (nwr > 0)
                c->wrs[nwr - 1].next = &c->wrs[nwr];
            count_wr(c, np, bytes, is_read);
            done += bytes;
        }
        c->wrs[nwr - 1].send_flags = IBV_SEND_SIGNALED;
        struct ibv_send_wr *bad;
        int rc = ibv_post_send(c->id->qp, c->wrs, &bad);
        if (rc)
            return fail(c, -rc);
        c->chains_posted++;
        c->st.signalled++;
        if ((rc = wait_for(c, chains_idle, NULL)) != 0)
            return rc;
    }
    return 0;
}

/* Writer side, source not one region: RDMA-write each CTS's share. */
static int write_on_cts(struct verbs_conn *c, struct viov_cursor *cur,
                        const struct verbs_region *reg, uint64_t total)
{
    while (total > 0) {
        int rc = wait_for(c, have_cts, NULL);
        if (rc)
            return rc;
        c->cts_ready = 0;
        if (c->cts.total > total)
            return fail(c, -EPROTO);
        rc = rdma_chain(c, IBV_WR_RDMA_WRITE, cur, reg, c->cts.total, c->cts.addr, c->cts.rkey);
        struct vmsg_hdr fin = { .type = VMSG_FIN, .seq = c->seq_out };
        if (rc == 0)
            rc = post_msg(c, &fin, NULL);
        if (rc)
            return rc;
        total -= c->cts.total;
    }
    return 0;
}

static int wait_fin(struct verbs_conn *c)
{
    int rc = wait_for(c, have_fin, NULL);
    if (rc == 0)
        c->fins--;
    return rc;
}

/* Writer side, source one region: the reader pulled it all (FIN) or
 * chose to have it RDMA-written (CTS). */
static int await_reader(struct verbs_conn *c, struct viov_cursor *cur,
                        const struct verbs_region *reg, uint64_t total)
{
    int rc = wait_for(c, have_fin_or_cts, NULL);
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
        if ((rc = ensure_stage(c, total)) < 0)
            return fail(c, rc);
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
            return fail(c, rc);
    }
    struct vmsg_hdr h = { .type = VMSG_RTS, .flags = c->server ? VMSG_F_SERVER : 0,
                          .seq = ++c->seq_out, .total = total, .load = own_load(c) };
    int one = single_segment(iov, cnt, &seg);
    if (one) {
        h.addr = (uintptr_t) iov[seg].iov_base;
        h.rkey = verbs_region_rkey(&reg, seg);
    }
    c->st.rendezvous++;
    rc = post_msg(c, &h, NULL);
    if (rc == 0)
        rc = one ? await_reader(c, &cur, &reg, total) : write_on_cts(c, &cur, &reg, total);
    verbs_deregister(&reg);
    return rc;
}

/* The rendezvous counts in the process's load while it runs. */
static int send_rendezvous(struct verbs_conn *c, const struct iovec *iov, int cnt, uint64_t total)
{
    load_enter();
    int rc = offer_rendezvous(c, iov, cnt, total);
    load_leave();
    return rc;
}

/*
 * Small vectors go as one eager message. Otherwise leading small segments
 * (request headers) go eager and the rest, the bulk data, by rendezvous.
 */
static int verbs_writev(struct net_conn *conn, const struct iovec *iov, int iovcnt)
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

/* Reader side, source one remote region: RDMA-read n bytes of it. */
static int pull(struct verbs_conn *c, struct rx_item *it, struct viov_cursor *cur,
                const struct iovec *iov, int cnt, struct verbs_region *reg, uint64_t n)
{
    uint64_t raddr = it->h.addr + it->used;
    int rc;
    if (n < c->pack_max) {
        if ((rc = ensure_stage(c, n)) < 0)
            return fail(c, rc);
        struct iovec s = { .iov_base = c->stage, .iov_len = n };
        struct verbs_region sreg = verbs_region_of(c->stage_mr);
        struct viov_cursor sc;
        viov_start(&sc, &s, 1);
        rc = rdma_chain(c, IBV_WR_RDMA_READ, &sc, &sreg, n, raddr, it->h.rkey);
        if (rc == 0)
            viov_copy_in(cur, c->stage, n);
        c->st.bounced_bytes += n;
        return rc;
    }
    if (!reg->owner) {
        rc = verbs_register_iov(c->reg, iov, cnt, IBV_ACCESS_LOCAL_WRITE, reg);
        if (rc < 0)
            return fail(c, rc);
    }
    return rdma_chain(c, IBV_WR_RDMA_READ, cur, reg, n, raddr, it->h.rkey);
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
        rc = ensure_stage(c, n);
        reg = verbs_region_of(c->stage_mr);
        dst.iov_base = c->stage;
    }
    if (rc < 0)
        return fail(c, rc);
    struct vmsg_hdr h = { .type = VMSG_CTS, .seq = it->h.seq, .total = n,
                          .addr = (uintptr_t) dst.iov_base, .rkey = verbs_region_rkey(&reg, 0) };
    rc = post_msg(c, &h, NULL);
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
    struct vrdv_side me = { .load = own_load(c), .server = c->server };
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
    return post_msg(c, &fin, NULL);
}

static int verbs_readv(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    struct verbs_conn *c = (struct verbs_conn *) conn;
    struct viov_cursor cur;
    struct verbs_region reg = { 0 };
    viov_start(&cur, iov, iovcnt);
    uint64_t want = viov_left(&cur);
    int rc = 0;
    while (rc == 0 && want > 0) {
        if ((rc = wait_for(c, have_rx, NULL)) != 0)
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
            pop_rx(c);
    }
    verbs_deregister(&reg);
    return rc;
}

static int verbs_readn(struct net_conn *conn, void *buf, size_t len)
{
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    return verbs_readv(conn, &iov, 1);
}

/* Another thread: rdma_disconnect moves the QP to the error state, which
 * flushes the posted receives and wakes the owner's wait. */
static void verbs_shutdown(struct net_conn *conn)
{
    struct verbs_conn *c = (struct verbs_conn *) conn;
    if (c->connected)
        rdma_disconnect(c->id);
}

static void verbs_close(struct net_conn *conn)
{
    struct verbs_conn *c = (struct verbs_conn *) conn;
    if (c->connected)
        rdma_disconnect(c->id);
    conn_destroy(c);
}

/* The memory registered through the cache and handed back to it at once:
 * a transfer's groups (one per few stripes, as the cost model splits
 * them) then hit this one registration. Only where the cache keeps
 * application memory (page frames readable), else it would be undone,
 * and only for memory that the cache's bounds can keep. */
static void verbs_pin(struct net_conn *conn, const struct iovec *iov, int iovcnt, int reading)
{
    struct verbs_conn *c = (struct verbs_conn *) conn;
    struct verbs_region reg;
    struct ogr_stats s;
    uint64_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (c->failed || c->reg_mode != NET_REG_CACHED || !c->reg || total > VERBS_PIN_MAX)
        return;
    verbs_registrar_stats(c->reg, &s);
    if (s.cache_app_buffers &&
        verbs_register_iov(c->reg, iov, iovcnt, reading ? IBV_ACCESS_LOCAL_WRITE : 0, &reg) == 0)
        verbs_deregister(&reg);
}

const struct net_transport net_verbs_transport = {
    .name = "verbs",
    .connect = verbs_connect,
    .writev = verbs_writev,
    .readn = verbs_readn,
    .close = verbs_close,
    .recv_to_file = NULL,
    .readv = verbs_readv,
    .shutdown = verbs_shutdown,
    .pin = verbs_pin,
};

void net_verbs_stats(const struct net_conn *conn, struct net_verbs_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!conn || conn->transport != &net_verbs_transport)
        return;
    const struct verbs_conn *c = (const struct verbs_conn *) conn;
    struct ogr_stats r;
    *out = c->st;
    if (!c->reg)
        return;
    verbs_registrar_stats(c->reg, &r);
    out->registrations = r.registrations;
    out->registered_bytes = r.bytes_registered;
    out->registration_failures = r.failures;
    out->maps_reads = r.maps_reads;
    out->cache_hits = r.cache_hits;
    out->cache_misses = r.cache_misses;
    struct ogr_cost cost = verbs_registrar_cost(c->reg);
    out->reg_page_us = cost.page_us;
    out->reg_op_us = cost.op_us;
}

void net_verbs_set_load_offset(struct net_conn *conn, uint32_t extra)
{
    if (conn && conn->transport == &net_verbs_transport)
        ((struct verbs_conn *) conn)->load_offset = extra;
}

/* Server side. */

struct net_verbs_listener {
    struct rdma_event_channel *ech;
    struct rdma_cm_id *id;
};

void net_verbs_listener_close(struct net_verbs_listener *l)
{
    if (l->id)
        rdma_destroy_id(l->id);
    if (l->ech)
        rdma_destroy_event_channel(l->ech);
    free(l);
}

int net_verbs_listen(const char *addr, int port, struct net_verbs_listener **out)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE };
    struct addrinfo *res;
    char pstr[16];
    snprintf(pstr, sizeof pstr, "%d", port);
    int gai = getaddrinfo(addr, pstr, &hints, &res);
    if (gai != 0)
        return gai == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
    struct net_verbs_listener *l = calloc(1, sizeof *l);
    int rc = l ? 0 : -ENOMEM;
    if (rc == 0 && !(l->ech = rdma_create_event_channel()))
        rc = -errno;
    if (rc == 0)
        rc = set_nonblock(l->ech->fd);
    if (rc == 0 && rdma_create_id(l->ech, &l->id, l, RDMA_PS_TCP))
        rc = -errno;
    if (rc == 0 && (rdma_bind_addr(l->id, res->ai_addr) || rdma_listen(l->id, 128)))
        rc = -errno;
    freeaddrinfo(res);
    if (rc < 0) {
        if (l)
            net_verbs_listener_close(l);
        return rc;
    }
    *out = l;
    return 0;
}

int net_verbs_listener_fd(const struct net_verbs_listener *l)
{
    return l->ech->fd;
}

int net_verbs_listener_port(const struct net_verbs_listener *l)
{
    return ntohs(rdma_get_src_port(l->id));
}

static void peer_name(struct rdma_cm_id *id, char *out, size_t len)
{
    const struct sockaddr *sa = rdma_get_peer_addr(id);
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa && sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
    }
    snprintf(out, len, "rdma:%s:%d", host, port);
}

/* A connection request: own channel, resources, accept, established. */
static int accept_request(struct verbs_conn *c, struct rdma_cm_id *id, const struct vhello *peer,
                          uint8_t peer_rd_atom)
{
    struct rdma_conn_param param;
    uint8_t hello[VHELLO_SIZE];
    struct rdma_cm_event *ev;
    int rc = make_channel(c);
    if (rc < 0)
        return rc;
    if (rdma_migrate_id(id, c->ech))
        return -errno;
    c->id = id;
    if ((rc = conn_resources(c)) < 0)
        return rc;
    vcredits_init(&c->cr, peer->depth, c->depth);
    c->peer_slot = peer->slot;
    conn_param(c, hello, &param);
    if (param.responder_resources > peer_rd_atom)
        param.responder_resources = peer_rd_atom;
    if (rdma_accept(id, &param))
        return -errno;
    if ((rc = cm_expect(c->ech, cm_timeout(c), RDMA_CM_EVENT_ESTABLISHED, &ev)) < 0)
        return rc;
    rdma_ack_cm_event(ev);
    c->connected = 1;
    return 0;
}

int net_verbs_accept(struct net_verbs_listener *l, const struct net_opts *opts, int admit,
                     struct net_conn **out, char *peer, size_t peer_len)
{
    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(l->ech, &ev) != 0)
        return errno == EAGAIN ? 0 : -errno;
    if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
        rdma_ack_cm_event(ev);
        return 0;
    }
    struct rdma_cm_id *id = ev->id;
    struct vhello h;
    int rc = vhello_decode(ev->param.conn.private_data, ev->param.conn.private_data_len, &h);
    uint8_t peer_rd_atom = ev->param.conn.initiator_depth;
    peer_name(id, peer, peer_len);
    rdma_ack_cm_event(ev);
    if (rc < 0 || !admit) {
        rdma_reject(id, NULL, 0);
        rdma_destroy_id(id);
        return rc;
    }
    struct verbs_conn *c = conn_new(opts);
    if (!c) {
        rdma_reject(id, NULL, 0);
        rdma_destroy_id(id);
        return -ENOMEM;
    }
    c->server = 1;
    if ((rc = accept_request(c, id, &h, peer_rd_atom)) < 0) {
        if (!c->id) {
            rdma_reject(id, NULL, 0);
            rdma_destroy_id(id);
        }
        conn_destroy(c);
        return rc;
    }
    *out = &c->base;
    return 1;
}

int net_verbs_available(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list)
        ibv_free_device_list(list);
    return n > 0;
}
