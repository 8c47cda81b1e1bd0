/*
 * The server side of the verbs transport (net_verbs.h): an rdma_cm
 * listener, and the accept of a connection request.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/verbs_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>

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
        rc = vconn_set_nonblock(l->ech->fd);
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
    int rc = vconn_make_channel(c);
    if (rc < 0)
        return rc;
    if (rdma_migrate_id(id, c->ech))
        return -errno;
    c->id = id;
    if ((rc = vconn_resources(c)) < 0)
        return rc;
    vcredits_init(&c->cr, peer->depth, c->depth);
    c->peer_slot = peer->slot;
    vconn_param(c, hello, &param);
    if (param.responder_resources > peer_rd_atom)
        param.responder_resources = peer_rd_atom;
    if (rdma_accept(id, &param))
        return -errno;
    if ((rc = vconn_cm_expect(c->ech, vconn_cm_timeout(c), RDMA_CM_EVENT_ESTABLISHED, &ev)) < 0)
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
    struct verbs_conn *c = vconn_new(opts);
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
        vconn_destroy(c);
        return rc;
    }
    *out = &c->base;
    return 1;
}
