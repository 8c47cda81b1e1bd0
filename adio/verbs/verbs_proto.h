/*
 * The pure logic of the verbs transport, kept apart from rdma-core so that
 * it is unit tested without an RDMA device: the header of every message
 * sent into the peer's pre-posted receive buffers, the credit rules that
 * keep those buffers from overflowing, the connection hello, the choice
 * between RDMA READ and RDMA WRITE for a rendezvous, and the plan that cuts
 * an I/O vector into work requests of at most max_sge entries.
 */
#ifndef VERBS_PROTO_H_INCLUDED
#define VERBS_PROTO_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define VMSG_HDR_SIZE 40

enum vmsg_type {
    VMSG_DATA = 1,      /* eager: `len` stream bytes follow the header */
    VMSG_CREDIT = 2,    /* nothing but returned credits */
    VMSG_RTS = 3,       /* rendezvous of `total` stream bytes: addr/rkey name the
                         * source if it is one registered region (the receiver
                         * RDMA-reads it or asks for CTS, verbs_rendezvous_choose),
                         * addr 0 asks for CTS (the sender RDMA-writes) */
    VMSG_CTS = 4,       /* write `total` bytes of the rendezvous to addr/rkey */
    VMSG_FIN = 5,       /* the RDMA of a CTS (sender -> receiver) or of a whole
                         * RTS (receiver -> sender) is complete */
};

/* flags: RTS only */
#define VMSG_F_SERVER 0x01      /* the sender accepted the connection */

struct vmsg_hdr {
    uint8_t type;
    uint8_t flags;      /* VMSG_F_* */
    uint16_t credits;   /* receive buffers of the receiver's peer reposted since
                         * the last message: the receiver may send that many more */
    uint32_t len;       /* DATA: payload bytes after the header */
    uint32_t seq;       /* rendezvous number, per direction, from 1 */
    uint32_t rkey;
    uint64_t total;     /* RTS: bytes of the rendezvous; CTS: bytes to write */
    uint64_t addr;
    uint32_t load;      /* RTS: the sender's rendezvous in progress, this one included */
};

void vmsg_encode(const struct vmsg_hdr *h, uint8_t out[VMSG_HDR_SIZE]);
/* Checks the type, that flags and load come only with an RTS, and that
 * `len` payload bytes are in the `got` received. */
int vmsg_decode(const uint8_t *in, size_t got, struct vmsg_hdr *h);

/*
 * Credits: one per receive buffer the peer has posted for us. A message
 * that carries data or rendezvous control may not take the last credit:
 * that one is kept for a CREDIT message, so two peers that both ran out
 * can always give each other their buffers back.
 */
struct vcredits {
    uint32_t send;      /* peer buffers we may fill */
    uint32_t owed;      /* our buffers reposted that the peer does not know of */
    uint32_t depth;     /* receive buffers each side posts */
};

void vcredits_init(struct vcredits *c, uint32_t peer_depth, uint32_t own_depth);
int vcredits_may_send(const struct vcredits *c, int credit_only);
/* Spend one credit on a message; returns the owed credits it carries back. */
uint16_t vcredits_spend(struct vcredits *c);
void vcredits_granted(struct vcredits *c, uint16_t n);
void vcredits_reposted(struct vcredits *c);
/* A CREDIT message is due: half of our buffers are owed. */
int vcredits_return_due(const struct vcredits *c);

/* The private data of rdma_connect and rdma_accept. */
#define VHELLO_SIZE 16
#define VHELLO_MAGIC 0x56524653u    /* "VRFS" */
#define VHELLO_VERSION 2     /* 2: 40-byte header, RTS with flags and load */

struct vhello {
    uint32_t depth;     /* receive buffers posted for the peer */
    uint32_t slot;      /* bytes of each, header included */
};

void vhello_encode(const struct vhello *h, uint8_t out[VHELLO_SIZE]);
int vhello_decode(const uint8_t *in, size_t len, struct vhello *h);

/*
 * Adaptive rendezvous (seed 001, 5.1, Fig. 6), for an RTS whose source is
 * one region, so that either side can do the RDMA: when exactly one side
 * is a server under heavy load (its load at least `busy`), the other side,
 * the client, does the RDMA operations; otherwise the receiver pulls by
 * RDMA READ when it is less loaded than the sender, and invites an RDMA
 * WRITE by CTS when it is not.
 */
enum vrdv_way { VRDV_READ = 1, VRDV_WRITE = 2 };

struct vrdv_side {
    uint32_t load;      /* rendezvous in progress */
    int server;         /* accepted the connection */
};

enum vrdv_way verbs_rendezvous_choose(struct vrdv_side receiver, struct vrdv_side sender,
                                      uint32_t busy);

/*
 * A position in an I/O vector and the cut of the next work request from
 * it: at most max_sge pieces and max_bytes bytes, every piece at most 1 GiB
 * (an SGE length is 32 bits). `seg` names the vector entry of a piece so
 * that its memory region (lkey) can be found.
 */
struct viov_cursor {
    const struct iovec *iov;
    int cnt;
    int idx;
    size_t off;
};

struct viov_piece {
    char *addr;
    uint32_t len;
    int seg;
};

#define VIOV_PIECE_MAX (1u << 30)

void viov_start(struct viov_cursor *c, const struct iovec *iov, int cnt);
/* Fills out[] (max_sge entries); returns the pieces, their bytes in *bytes. */
int viov_next_wr(struct viov_cursor *c, int max_sge, uint64_t max_bytes,
                 struct viov_piece *out, uint64_t *bytes);
/* Copy between a vector position and flat memory; advance the cursor. */
void viov_copy_in(struct viov_cursor *c, const void *src, size_t len);
void viov_copy_out(struct viov_cursor *c, void *dst, size_t len);
void viov_skip(struct viov_cursor *c, uint64_t len);
uint64_t viov_left(const struct viov_cursor *c);

#endif /* VERBS_PROTO_H_INCLUDED */
