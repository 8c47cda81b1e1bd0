/* Close: CLOSE on every object; with rdma_stats or $ROMIO_RDMA_STATS,
 * what this process's open of the file sent, per server and method. */
#include <stdio.h>

#include "ad_rdma.h"
#include "verbs/net_verbs.h"

static void print_verbs_stats(const ADIOI_RDMA_File *f, uint32_t slot)
{
    struct net_verbs_stats v;
    uint32_t i = stripe_slot_server(&f->sf.layout, slot);
    net_verbs_stats(f->sf.obj[slot].client->conn, &v);
    fprintf(stderr, "rdma stats: %s: server %u over verbs: %llu eager messages, %llu "
            "rendezvous, %llu RDMA work requests (%llu with more than one SGE, at most %u), "
            "%llu bytes RDMA-written, %llu RDMA-read, %llu registrations (%llu bytes, %llu "
            "refused, %llu maps reads, cache %llu hits %llu misses; cost model %.2f us a page "
            "+ %.2f us), by load %llu pulled by RDMA READ and %llu invited as RDMA WRITE\n",
            f->path, i, (unsigned long long) v.eager_msgs, (unsigned long long) v.rendezvous,
            (unsigned long long) v.rdma_wrs, (unsigned long long) v.rdma_multi_sge,
            v.rdma_max_sge, (unsigned long long) v.rdma_write_bytes,
            (unsigned long long) v.rdma_read_bytes, (unsigned long long) v.registrations,
            (unsigned long long) v.registered_bytes, (unsigned long long) v.registration_failures,
            (unsigned long long) v.maps_reads, (unsigned long long) v.cache_hits,
            (unsigned long long) v.cache_misses, v.reg_page_us, v.reg_op_us,
            (unsigned long long) v.adaptive_reads,
            (unsigned long long) v.adaptive_writes);
}

static void print_stats(const ADIOI_RDMA_File *f)
{
    static const char *const names[] = { "naive", "list", "datatype", "sieve" };
    const struct stripe_stats *st = &f->sf.stats;
    fprintf(stderr, "rdma stats: %s: method %s, %u servers, unit %llu: data requests %llu; "
            "calls naive %llu list %llu datatype %llu; list requests %llu (%.1f pairs, %.1f "
            "memory segments each, at most %llu bytes in flight, to %u servers); "
            "datatype requests %llu (%llu bytes staged); disk-directed rounds %llu; bytes read "
            "%llu written %llu; header reads %u; connections of the process %u\n", f->path,
            names[f->method], f->sf.layout.factor, (unsigned long long) f->sf.layout.unit,
            (unsigned long long) st->data_requests,
            (unsigned long long) st->calls[STRIPE_NAIVE],
            (unsigned long long) st->calls[STRIPE_LIST],
            (unsigned long long) st->calls[STRIPE_DATATYPE],
            (unsigned long long) st->list_requests,
            st->list_requests ? (double) st->pairs / (double) st->list_requests : 0.0,
            st->data_requests > st->view_requests
                ? (double) st->segments / (double) (st->data_requests - st->view_requests) : 0.0,
            (unsigned long long) st->inflight_peak, st->servers_peak,
            (unsigned long long) st->view_requests, (unsigned long long) st->staged,
            (unsigned long long) st->coll_rounds,
            (unsigned long long) st->bytes[0],
            (unsigned long long) st->bytes[1], st->header_reads, rfs_shared_count());
    for (uint32_t p = 0; p < stripe_slots(&f->sf); p++) {
        struct rfs_client_stats c;
        uint32_t i = stripe_slot_server(&f->sf.layout, p), copy = p / f->sf.layout.factor;
        char which[32] = "";
        if (!f->sf.obj[p].client)
            continue;
        if (copy > 0)
            snprintf(which, sizeof which, ", copy %u of object %u", copy, p % f->sf.layout.factor);
        rfs_shared_stats(&f->sf.obj[p], &c);
        fprintf(stderr, "rdma stats: %s: server %u (%s:%s)%s: %llu requests, %llu bytes sent, "
                "%llu received%s\n", f->path, i, f->servers.at[i].host, f->servers.at[i].port,
                which, (unsigned long long) c.requests, (unsigned long long) c.bytes_out,
                (unsigned long long) c.bytes_in,
                f->sf.down >> i & 1 ? " (lost)" : f->sf.state.stale >> i & 1 ? " (stale)" : "");
        if (f->verbs && !(f->sf.down >> i & 1))
            print_verbs_stats(f, p);
    }
}

void ADIOI_RDMA_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_CLOSE";
    ADIOI_RDMA_File *f = fd->fs_ptr;

    *error_code = MPI_SUCCESS;
    if (!f)
        return;
    if (f->stats)
        print_stats(f);
    int rc = stripe_close(&f->sf);
    if (rc != 0)
        *error_code = ADIOI_RDMA_Error(rc, myname, f, "close");
    if (f->view_enc)
        ADIOI_Free(f->view_enc);
    rfs_adio_security_fini(&f->sec);
    ADIOI_Free(f->path);
    ADIOI_Free(f);
    fd->fs_ptr = NULL;
}
