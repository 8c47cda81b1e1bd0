/*
 * SetInfo: the rdma_* hints (docs/rdma.md), stated once in the table
 * below, the security hints (common/rfs_adio.c) and striping_factor land
 * in fd->info and fd->hints, where Open reads them (ADIOI_RDMA_Get_hints)
 * and MPI_File_get_info reports them (Open replaces the striping values,
 * the transport and the server list by those the file really has);
 * ROMIO's generic hints follow, among them striping_unit. Called
 * collectively, before Open (fs_ptr NULL) and by MPI_File_set_info /
 * set_view later. An invalid value is MPI_ERR_INFO_VALUE: from set_info
 * at once, from the open through Open.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ad_rdma.h"
#include "adio_hints.h"
#include "hint_fns.h"

static int server_list(const char *value)
{
    struct stripe_servers *sv = ADIOI_Malloc(sizeof *sv);
    int ok = stripe_servers_parse(value, sv) == 0;
    ADIOI_Free(sv);
    return ok;
}

/* in the order of enum stripe_method, then ADIOI_RDMA_SIEVE */
static const char *const methods[] = { "naive", "list", "datatype", "sieve", NULL };
/* tls (TCP under rfs_transport=tls) is what Open reports, and ROMIO's
 * create step opens the file again with what its first open reported */
static const char *const transports[] = { "tcp", "verbs", "auto", "tls", NULL };
static const long long transport_of[] = {
    ADIOI_RDMA_TRANSPORT_TCP, ADIOI_RDMA_TRANSPORT_VERBS, ADIOI_RDMA_TRANSPORT_AUTO,
    ADIOI_RDMA_TRANSPORT_TCP
};
/* in the order of NET_REG_*, ADIOI_RDMA_COLL_* */
static const char *const registrations[] = { "cached", "ogr", "individual", NULL };
static const char *const colls[] = { "two_phase", "disk_directed", "auto", NULL };
/* rdma_memory_segments: the mean memory run sent as segments */
static const char *const segments[] = { "enable", "disable", "auto", NULL };
static const long long segments_from[] = { 0, INT64_MAX, ADIOI_RDMA_SEGMENTS_FROM };

static const struct adio_hint rdma_hints[] = {
    { .name = "rdma_servers", .kind = ADIO_HINT_TEXT, .check = server_list,
      .accepted = "HOST:PORT,...", .at_open = 1 },      /* read by ADIOI_RDMA_Servers */
    { .name = "rdma_replicas", .kind = ADIO_HINT_COUNT, .min = 1, .max = STRIPE_MAX_REPLICAS,
      .dflt = "1", .at_open = 1, .to = ADIO_HINT_TO(ADIOI_RDMA_File, replicas) },
    { .name = "rdma_io_method", .kind = ADIO_HINT_WORD, .words = methods, .dflt = "list",
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, method) },
    { .name = "rdma_list_pairs", .kind = ADIO_HINT_COUNT, .min = 1, .max = RFS_MAX_PAIRS,
      .dflt = ADIO_HINT_STR(STRIPE_DEFAULT_PAIRS),
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, sf.max_pairs) },
    { .name = "rdma_timeout", .kind = ADIO_HINT_COUNT, .min = 1, .max = 86400,
      .dflt = ADIO_HINT_STR(ADIOI_RDMA_DEFAULT_TIMEOUT), .at_open = 1,
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, timeout_s) },
    { .name = "rdma_inflight", .kind = ADIO_HINT_COUNT, .min = 0, .max = ADIOI_RDMA_INFLIGHT_MOST,
      .dflt = ADIO_HINT_STR(STRIPE_DEFAULT_INFLIGHT),
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, sf.max_inflight) },
    { .name = "rdma_inflight_servers", .kind = ADIO_HINT_COUNT, .min = 0, .max = STRIPE_MAX_FACTOR,
      .dflt = ADIO_HINT_STR(STRIPE_DEFAULT_INFLIGHT_SERVERS),
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, sf.max_servers) },
    { .name = "rdma_stats", .kind = ADIO_HINT_WORD, .words = adio_hint_switch,
      .dflt = "disable", .to = ADIO_HINT_TO(ADIOI_RDMA_File, stats) },
    { .name = "rdma_coll", .kind = ADIO_HINT_WORD, .words = colls, .dflt = "auto",
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, coll) },
    { .name = "rdma_transport", .kind = ADIO_HINT_WORD, .words = transports,
      .values = transport_of, .dflt = "auto", .at_open = 1,
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, transport) },
    { .name = "rdma_registration", .kind = ADIO_HINT_WORD, .words = registrations,
      .dflt = "cached", .at_open = 1, .to = ADIO_HINT_TO(ADIOI_RDMA_File, registration) },
    { .name = "rdma_coll_cache", .kind = ADIO_HINT_WORD, .words = adio_hint_switch,
      .dflt = "disable", .to = ADIO_HINT_TO(ADIOI_RDMA_File, coll_keep) },
    { .name = "rdma_memory_segments", .kind = ADIO_HINT_WORD, .words = segments,
      .values = segments_from, .dflt = "auto",
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, segments_from) },
    /* the verbs transport's default, up to its staging buffer */
    { .name = "rdma_pack_threshold", .kind = ADIO_HINT_COUNT, .min = 1,
      .max = ADIOI_RDMA_PACK_MOST, .dflt = "65536", .at_open = 1,
      .to = ADIO_HINT_TO(ADIOI_RDMA_File, pack_max) },
    { .name = "rdma_tcp_rcvbuf", .kind = ADIO_HINT_COUNT, .min = 0,
      .max = ADIOI_RDMA_TCP_RCVBUF_MOST, .dflt = ADIO_HINT_STR(ADIOI_RDMA_TCP_RCVBUF),
      .at_open = 1, .to = ADIO_HINT_TO(ADIOI_RDMA_File, tcp_rcvbuf) },
};

#define RDMA_HINTS (sizeof rdma_hints / sizeof rdma_hints[0])

/* Open (fd->fs_ptr NULL) takes every hint; an open file those that act at once. */
int ADIOI_RDMA_Get_hints(ADIO_File fd, ADIOI_RDMA_File *f, const char *myname)
{
    int err = adio_hints_decode(fd->info, rdma_hints, RDMA_HINTS, fd->fs_ptr != NULL, f, myname);
    f->stats |= getenv(ADIOI_RDMA_STATS_ENV) != NULL;
    return err;
}

void ADIOI_RDMA_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_SETINFO";
    int err = rfs_adio_security_install(fd, users_info, myname);
    if (err == MPI_SUCCESS)
        err = adio_hints_install(fd, users_info, rdma_hints, RDMA_HINTS, myname);
    if (fd->fs_ptr) {
        ADIOI_RDMA_File *f = fd->fs_ptr;
        *error_code = err;
        if (err != MPI_SUCCESS)
            return;             /* an open file keeps its hints */
        ADIOI_RDMA_Get_hints(fd, f, myname);    /* checked by the install */
        f->view_stale = 1;      /* set_view comes through here */
    } else if (users_info != MPI_INFO_NULL &&
               ADIOI_Info_check_and_install_int(fd, users_info, "striping_factor",
                                                &fd->hints->striping_factor, myname,
                                                error_code) < 0) {
        return;                 /* the layout is fixed once the file is open */
    }
    /* before Open, ROMIO's hints are set up all the same: its open goes on */
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    if (err != MPI_SUCCESS)
        *error_code = err;
    /* ROMIO's generic code takes striping_unit from the user: the layout
     * of an open file is what it is */
    if (fd->fs_ptr)
        ADIOI_RDMA_Report_layout(fd, fd->fs_ptr);
}
