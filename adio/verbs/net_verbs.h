/*
 * The verbs transport (rdma-core): the stream of net.h over an RC queue
 * pair set up by rdma_cm. Small messages go eager into the peer's
 * pre-posted receive buffers under credit flow control; large ones by
 * rendezvous, RDMA-written (gathered from the writer's segments) or
 * RDMA-read (scattered into the reader's) straight from and to the
 * caller's memory. Protocol and options: docs/rdma.md, "Verbs transport".
 * No MPI here and no threads of its own: progress is made inside the calls.
 */
#ifndef NET_VERBS_H_INCLUDED
#define NET_VERBS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"

extern const struct net_transport net_verbs_transport;

/* What one connection did; sums over its lifetime. */
struct net_verbs_stats {
    uint64_t eager_msgs;        /* DATA messages sent */
    uint64_t eager_bytes;
    uint64_t control_msgs;      /* RTS, CTS, FIN and CREDIT messages sent */
    uint64_t rendezvous;        /* RTS sent */
    uint64_t rdma_wrs;          /* RDMA WRITE and READ work requests posted */
    uint64_t rdma_sges;         /* their scatter/gather entries */
    uint64_t rdma_multi_sge;    /* work requests with more than one entry */
    uint32_t rdma_max_sge;      /* the most entries in one work request */
    uint64_t rdma_write_bytes;
    uint64_t rdma_read_bytes;
    uint64_t signalled;         /* completions asked for (one per chain) */
    uint64_t registrations;     /* ibv_reg_mr calls for caller memory (verbs_reg.h) */
    uint64_t registered_bytes;
    uint64_t registration_failures; /* optimistic groups the device refused */
    uint64_t maps_reads;        /* /proc/self/maps consulted after a refusal */
    uint64_t cache_hits, cache_misses;  /* the registration cache */
    double reg_page_us, reg_op_us;      /* the cost model OGR plans with */
    uint64_t bounced_bytes;     /* rendezvous bytes unpacked through the staging buffer */
    /* Rendezvous received whose source was one region, so this side chose
     * (verbs_rendezvous_choose): pulled by RDMA READ, or invited the
     * writer's RDMA WRITE by CTS. */
    uint64_t adaptive_reads, adaptive_writes;
};

/* Whether this host has an RDMA device (rdma_transport=auto asks). */
int net_verbs_available(void);

/* Counters of a verbs connection (zeros for any other). */
void net_verbs_stats(const struct net_conn *c, struct net_verbs_stats *out);

/*
 * Tests and experiments: this connection counts `extra` rendezvous in
 * progress beyond the process's own, in the load its RTS carries and in
 * the choices it makes as a receiver (docs/rdma.md, "Adaptive rendezvous").
 */
void net_verbs_set_load_offset(struct net_conn *c, uint32_t extra);

/* Server side: an rdma_cm listener; accept from the fd's readiness. */
struct net_verbs_listener;

int net_verbs_listen(const char *addr, int port, struct net_verbs_listener **out);
int net_verbs_listener_fd(const struct net_verbs_listener *l);
/* The port bound (port 0 to net_verbs_listen picks a free one). */
int net_verbs_listener_port(const struct net_verbs_listener *l);
/*
 * Handle the listener's next event. A connection request is accepted
 * (admit != 0) and *out set once established, or rejected (admit == 0,
 * the client sees -ECONNREFUSED). Returns 1 when *out was set, 0 for any
 * other event, a negative errno on failure (the listener stays usable).
 */
int net_verbs_accept(struct net_verbs_listener *l, const struct net_opts *opts, int admit,
                     struct net_conn **out, char *peer, size_t peer_len);
void net_verbs_listener_close(struct net_verbs_listener *l);

#endif /* NET_VERBS_H_INCLUDED */
