/*
 * Connection setup of the verbs transport (verbs_conn.h): rdma_cm address
 * and route resolution, the connection's resources, the connect.
 *
 * Resources of a connection are made in this order and released in the
 * reverse one: event channel, cm id, PD, receive and send buffers and
 * their MRs, completion channel, CQ, QP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/verbs_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

static uint32_t env_u32(const char *name, uint32_t dflt, uint32_t lo, uint32_t hi)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return dflt;
    unsigned long v = strtoul(s, &end, 10);
    return *end || v < lo || v > hi ? dflt : (uint32_t) v;
}

int vconn_set_nonblock(int fd)
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
    int64_t deadline = net_monotonic_ms() + timeout_ms;
    for (;;) {
        if (rdma_get_cm_event(ech, ev) == 0)
            return 0;
        if (errno != EAGAIN)
            return -errno;
        int64_t left = deadline - net_monotonic_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = { .fd = ech->fd, .events = POLLIN };
        if (poll(&p, 1, (int) left) < 0 && errno != EINTR)
            return -errno;
    }
}

/* Wait for one event type; anything else is the failure it stands for. */
int vconn_cm_expect(struct rdma_event_channel *ech, int timeout_ms, enum rdma_cm_event_type want,
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

struct verbs_conn *vconn_new(const struct net_opts *opts)
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

void vconn_destroy(struct verbs_conn *c)
{
    vconn_free_rx(c);
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
int vconn_resources(struct verbs_conn *c)
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
    if ((rc = vconn_set_nonblock(c->cch->fd)) < 0)
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
        if ((rc = vconn_post_recv(c, i)) < 0)
            return rc;
    /* A peer that stops answering is given up after VERBS_RETRY tries of
     * this timeout each, not retried forever. */
    uint8_t ack = VERBS_ACK_TIMEOUT;
    if (rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, sizeof ack))
        return -errno;
    return 0;
}

void vconn_param(struct verbs_conn *c, uint8_t hello[VHELLO_SIZE],
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

int vconn_cm_timeout(const struct verbs_conn *c)
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
    int ms = vconn_cm_timeout(c);
    int rc = rdma_resolve_addr(c->id, NULL, res->ai_addr, ms) ? -errno : 0;
    freeaddrinfo(res);
    if (rc == 0 && (rc = vconn_cm_expect(c->ech, ms, RDMA_CM_EVENT_ADDR_RESOLVED, &ev)) == 0)
        rdma_ack_cm_event(ev);
    if (rc == 0 && rdma_resolve_route(c->id, ms))
        rc = -errno;
    if (rc == 0 && (rc = vconn_cm_expect(c->ech, ms, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev)) == 0)
        rdma_ack_cm_event(ev);
    return rc;
}

int vconn_make_channel(struct verbs_conn *c)
{
    if (!(c->ech = rdma_create_event_channel()))
        return -errno;
    return vconn_set_nonblock(c->ech->fd);
}

int verbs_connect(const char *host, const char *port, const struct net_opts *opts,
                  struct net_conn **out)
{
    struct verbs_conn *c = vconn_new(opts);
    if (!c)
        return -ENOMEM;
    struct rdma_cm_event *ev;
    struct rdma_conn_param param;
    uint8_t hello[VHELLO_SIZE];
    int rc = vconn_make_channel(c);
    if (rc == 0 && rdma_create_id(c->ech, &c->id, c, RDMA_PS_TCP))
        rc = -errno;
    if (rc == 0)
        rc = resolve(c, host, port);
    if (rc == 0)
        rc = vconn_resources(c);
    if (rc == 0) {
        vconn_param(c, hello, &param);
        if (rdma_connect(c->id, &param))
            rc = -errno;
    }
    if (rc == 0)
        rc = vconn_cm_expect(c->ech, vconn_cm_timeout(c), RDMA_CM_EVENT_ESTABLISHED, &ev);
    if (rc == 0) {
        rc = take_hello(c, ev);
        rdma_ack_cm_event(ev);
        c->connected = 1;
    }
    if (rc < 0) {
        if (c->connected)
            rdma_disconnect(c->id);
        vconn_destroy(c);
        return rc;
    }
    *out = &c->base;
    return 0;
}
