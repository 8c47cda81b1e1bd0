/*
 * Message framing, credits and work-request planning of the verbs
 * transport (verbs_proto.h). No rdma-core here.
 */
#include "verbs/verbs_proto.h"

#include <errno.h>
#include <string.h>

#include "proto/wire_le.h"

void vmsg_encode(const struct vmsg_hdr *h, uint8_t out[VMSG_HDR_SIZE])
{
    out[0] = h->type;
    out[1] = h->flags;
    le_put16(out + 2, h->credits);
    le_put32(out + 4, h->len);
    le_put32(out + 8, h->seq);
    le_put32(out + 12, h->rkey);
    le_put64(out + 16, h->total);
    le_put64(out + 24, h->addr);
    le_put32(out + 32, h->load);
    le_put32(out + 36, 0);      /* pads the payload to 8-byte alignment */
}

int vmsg_decode(const uint8_t *in, size_t got, struct vmsg_hdr *h)
{
    if (got < VMSG_HDR_SIZE)
        return -EPROTO;
    h->type = in[0];
    h->flags = in[1];
    h->credits = le_get16(in + 2);
    h->len = le_get32(in + 4);
    h->seq = le_get32(in + 8);
    h->rkey = le_get32(in + 12);
    h->total = le_get64(in + 16);
    h->addr = le_get64(in + 24);
    h->load = le_get32(in + 32);
    if (h->type < VMSG_DATA || h->type > VMSG_FIN || le_get32(in + 36) != 0)
        return -EPROTO;
    if ((h->flags & ~VMSG_F_SERVER) != 0 ||
        (h->type != VMSG_RTS && (h->flags != 0 || h->load != 0)))
        return -EPROTO;
    if (h->len != got - VMSG_HDR_SIZE || (h->type != VMSG_DATA && h->len != 0))
        return -EPROTO;
    if ((h->type == VMSG_RTS || h->type == VMSG_CTS) && h->total == 0)
        return -EPROTO;
    return 0;
}

void vcredits_init(struct vcredits *c, uint32_t peer_depth, uint32_t own_depth)
{
    c->send = peer_depth;
    c->owed = 0;
    c->depth = own_depth;
}

int vcredits_may_send(const struct vcredits *c, int credit_only)
{
    return credit_only ? c->send >= 1 && c->owed > 0 : c->send >= 2;
}

uint16_t vcredits_spend(struct vcredits *c)
{
    uint32_t back = c->owed > UINT16_MAX ? UINT16_MAX : c->owed;
    c->send--;
    c->owed -= back;
    return (uint16_t) back;
}

void vcredits_granted(struct vcredits *c, uint16_t n)
{
    c->send += n;
}

void vcredits_reposted(struct vcredits *c)
{
    c->owed++;
}

int vcredits_return_due(const struct vcredits *c)
{
    return c->owed > 0 && c->owed >= c->depth / 2;
}

void vhello_encode(const struct vhello *h, uint8_t out[VHELLO_SIZE])
{
    le_put32(out, VHELLO_MAGIC);
    le_put32(out + 4, VHELLO_VERSION);
    le_put32(out + 8, h->depth);
    le_put32(out + 12, h->slot);
}

int vhello_decode(const uint8_t *in, size_t len, struct vhello *h)
{
    if (!in || len < VHELLO_SIZE || le_get32(in) != VHELLO_MAGIC ||
        le_get32(in + 4) != VHELLO_VERSION)
        return -EPROTO;
    h->depth = le_get32(in + 8);
    h->slot = le_get32(in + 12);
    /* Two credits at least (one is kept for credit returns); a slot holds a
     * header and some data, and no more than 16 MiB. */
    if (h->depth < 2 || h->depth > 4096 || h->slot <= VMSG_HDR_SIZE || h->slot > (16u << 20))
        return -EPROTO;
    return 0;
}

enum vrdv_way verbs_rendezvous_choose(struct vrdv_side receiver, struct vrdv_side sender,
                                      uint32_t busy)
{
    int receiver_heavy = receiver.server && receiver.load >= busy;
    int sender_heavy = sender.server && sender.load >= busy;
    /* Fairness to the clients of a busy server: the client does the work.
     * Two busy servers (or none) are left to the loads. */
    if (receiver_heavy != sender_heavy)
        return receiver_heavy ? VRDV_WRITE : VRDV_READ;
    return receiver.load < sender.load ? VRDV_READ : VRDV_WRITE;
}

/* Skip empty entries so that idx always names bytes still to move. */
static void viov_settle(struct viov_cursor *c)
{
    while (c->idx < c->cnt && c->off >= c->iov[c->idx].iov_len) {
        c->idx++;
        c->off = 0;
    }
}

void viov_start(struct viov_cursor *c, const struct iovec *iov, int cnt)
{
    c->iov = iov;
    c->cnt = cnt;
    c->idx = 0;
    c->off = 0;
    viov_settle(c);
}

uint64_t viov_left(const struct viov_cursor *c)
{
    uint64_t n = 0;
    for (int i = c->idx; i < c->cnt; i++)
        n += c->iov[i].iov_len;
    return c->idx < c->cnt ? n - c->off : 0;
}

int viov_next_wr(struct viov_cursor *c, int max_sge, uint64_t max_bytes,
                 struct viov_piece *out, uint64_t *bytes)
{
    int n = 0;
    uint64_t sum = 0;
    while (n < max_sge && sum < max_bytes && c->idx < c->cnt) {
        uint64_t avail = c->iov[c->idx].iov_len - c->off;
        uint64_t take = avail;
        if (take > max_bytes - sum)
            take = max_bytes - sum;
        if (take > VIOV_PIECE_MAX)
            take = VIOV_PIECE_MAX;
        out[n].addr = (char *) c->iov[c->idx].iov_base + c->off;
        out[n].len = (uint32_t) take;
        out[n].seg = c->idx;
        n++;
        sum += take;
        c->off += take;
        viov_settle(c);
    }
    *bytes = sum;
    return n;
}

void viov_copy_in(struct viov_cursor *c, const void *src, size_t len)
{
    const char *p = src;
    while (len > 0 && c->idx < c->cnt) {
        size_t take = c->iov[c->idx].iov_len - c->off;
        if (take > len)
            take = len;
        memcpy((char *) c->iov[c->idx].iov_base + c->off, p, take);
        p += take;
        len -= take;
        c->off += take;
        viov_settle(c);
    }
}

void viov_copy_out(struct viov_cursor *c, void *dst, size_t len)
{
    char *p = dst;
    while (len > 0 && c->idx < c->cnt) {
        size_t take = c->iov[c->idx].iov_len - c->off;
        if (take > len)
            take = len;
        memcpy(p, (const char *) c->iov[c->idx].iov_base + c->off, take);
        p += take;
        len -= take;
        c->off += take;
        viov_settle(c);
    }
}

void viov_skip(struct viov_cursor *c, uint64_t len)
{
    while (len > 0 && c->idx < c->cnt) {
        uint64_t take = c->iov[c->idx].iov_len - c->off;
        if (take > len)
            take = len;
        len -= take;
        c->off += take;
        viov_settle(c);
    }
}
