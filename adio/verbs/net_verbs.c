/*
 * The verbs transport (net_verbs.h): its table of stream calls, its
 * statistics, and the calls that need no connection setup or transfer.
 * Its parts: verbs_conn.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "verbs/verbs_conn.h"

#include <string.h>

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
    vconn_destroy(c);
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

int net_verbs_available(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list)
        ibv_free_device_list(list);
    return n > 0;
}
