/*
 * RDMA work request chains of the verbs transport (verbs_conn.h), and the
 * staging buffer that packs small or scattered transfers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/verbs_conn.h"

#include <errno.h>
#include <stdlib.h>

/* The staging buffer, at least len bytes, registered for local and remote access. */
int vconn_ensure_stage(struct verbs_conn *c, size_t len)
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

static int chains_idle(const struct verbs_conn *c, const void *arg)
{
    (void) arg;
    return c->chains_done == c->chains_posted;
}

/*
 * Move len bytes between the local vector at cur (registered in reg) and
 * remote [raddr, raddr + len): RDMA WRITE gathers, RDMA READ scatters, each
 * work request with up to max_sge entries, VERBS_BATCH of them chained with
 * only the last one signalled (RC completes them in order).
 */
int vconn_rdma_chain(struct verbs_conn *c, enum ibv_wr_opcode op, struct viov_cursor *cur,
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
                return vconn_fail(c, -EINVAL);
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
            return vconn_fail(c, -rc);
        c->chains_posted++;
        c->st.signalled++;
        if ((rc = vconn_wait_for(c, chains_idle, NULL)) != 0)
            return rc;
    }
    return 0;
}
