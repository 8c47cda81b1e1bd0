/*
 * A connection of the verbs transport, shared by the transport's parts:
 * setup (verbs_setup.c, verbs_listen.c), progress and credits
 * (verbs_progress.c), RDMA chains and staging (verbs_rdma.c), and the
 * eager and rendezvous transfers (verbs_send.c, verbs_recv.c). Internal to
 * adio/verbs. No MPI here.
 */
#ifndef VERBS_CONN_H_INCLUDED
#define VERBS_CONN_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "verbs/net_verbs.h"
#include "net/net_time.h"
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

/* A condition vconn_wait_for waits for. */
typedef int (*ready_fn)(const struct verbs_conn *c, const void *arg);

/* Setup (verbs_setup.c): a connection with its options, its resources
 * below the cm id once the id knows its device, the private data of its
 * connect or accept, and its release in the reverse order. */
struct verbs_conn *vconn_new(const struct net_opts *opts);
int vconn_resources(struct verbs_conn *c);
void vconn_param(struct verbs_conn *c, uint8_t hello[VHELLO_SIZE], struct rdma_conn_param *p);
void vconn_destroy(struct verbs_conn *c);
/* The connection's own event channel, non-blocking. */
int vconn_make_channel(struct verbs_conn *c);
int vconn_set_nonblock(int fd);
/* Wait for one event type; anything else is the failure it stands for. */
int vconn_cm_expect(struct rdma_event_channel *ech, int timeout_ms, enum rdma_cm_event_type want,
                    struct rdma_cm_event **out);
/* The connection's timeout for cm steps. */
int vconn_cm_timeout(const struct verbs_conn *c);
int verbs_connect(const char *host, const char *port, const struct net_opts *opts,
                  struct net_conn **out);

/* Progress and credits (verbs_progress.c). The process's rendezvous load
 * (seed 001), counted by both sides of each rendezvous. */
void vconn_load_enter(void);
void vconn_load_leave(void);
uint32_t vconn_own_load(const struct verbs_conn *c);
/* The connection is unusable from now on: its first error, returned. */
int vconn_fail(struct verbs_conn *c, int err);
int vconn_post_recv(struct verbs_conn *c, uint32_t idx);
/* Drop the head of the received stream, or all of it. */
void vconn_pop_rx(struct verbs_conn *c);
void vconn_free_rx(struct verbs_conn *c);
/* Make progress until ready() holds, the connection fails or the timeout
 * expires. */
int vconn_wait_for(struct verbs_conn *c, ready_fn ready, const void *arg);
/* Send one message once a slot and a credit are free; h->len payload
 * bytes are packed from the cursor. */
int vconn_post_msg(struct verbs_conn *c, struct vmsg_hdr *h, struct viov_cursor *payload);

/* RDMA (verbs_rdma.c): the staging buffer, at least len bytes; len bytes
 * between the local vector at cur and remote [raddr, raddr + len). */
int vconn_ensure_stage(struct verbs_conn *c, size_t len);
int vconn_rdma_chain(struct verbs_conn *c, enum ibv_wr_opcode op, struct viov_cursor *cur,
                     const struct verbs_region *reg, uint64_t len, uint64_t raddr,
                     uint32_t rkey);

/* Transfers (verbs_send.c, verbs_recv.c): the stream calls of net.h. */
int verbs_writev(struct net_conn *conn, const struct iovec *iov, int iovcnt);
int verbs_readv(struct net_conn *conn, const struct iovec *iov, int iovcnt);
int verbs_readn(struct net_conn *conn, void *buf, size_t len);

#endif /* VERBS_CONN_H_INCLUDED */
