/*
 * The verbs transport over a real RDMA device (make check-rdma runs it in
 * the soft-RoCE guest): eager messages and credits, rendezvous by RDMA READ
 * and by RDMA WRITE and the choice between them by load, gather and scatter
 * beyond max_sge, the pack path and its option, large transfers, and a
 * peer killed in the middle of a transfer. Every
 * transfer is checked byte by byte, and the counters say which path ran.
 *   VERBS_ADDR: the address of the RDMA netdev (default 10.0.2.15)
 *   VERBS_TESTS: a cmocka test filter; test_link_lost runs only when named
 *   test_verbs --peer write|read PORT: the peer process of test_killed_*
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "verbs/net_verbs.h"
#include "../fill_random.h"

static const char *addr(void)
{
    const char *a = getenv("VERBS_ADDR");
    return a && *a ? a : "10.0.2.15";
}

struct pair {
    struct net_verbs_listener *l;
    char port[16];
    struct net_conn *client, *server;
};

static struct net_conn *accept_one(struct net_verbs_listener *l, int timeout_ms)
{
    struct net_opts opts = { .timeout_ms = timeout_ms };
    struct net_conn *c = NULL;
    char peer[64];
    for (int i = 0; i < 100 && !c; i++) {
        struct pollfd p = { .fd = net_verbs_listener_fd(l), .events = POLLIN };
        if (poll(&p, 1, 200) > 0 && net_verbs_accept(l, &opts, 1, &c, peer, sizeof peer) < 0)
            return NULL;
    }
    return c;
}

struct acceptor {
    struct net_verbs_listener *l;
    int timeout_ms;
    struct net_conn *conn;
};

static void *accept_main(void *arg)
{
    struct acceptor *a = arg;
    a->conn = accept_one(a->l, a->timeout_ms);
    return NULL;
}

/* Client and server connections, the client with options of its own. */
static void pair_open_opts(struct pair *p, const struct net_opts *client, int server_ms)
{
    assert_int_equal(net_verbs_listen(addr(), 0, &p->l), 0);
    snprintf(p->port, sizeof p->port, "%d", net_verbs_listener_port(p->l));
    struct acceptor a = { .l = p->l, .timeout_ms = server_ms };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, accept_main, &a), 0);
    assert_int_equal(net_connect(&net_verbs_transport, addr(), p->port, client, &p->client), 0);
    pthread_join(t, NULL);
    assert_non_null(a.conn);
    p->server = a.conn;
}

/* Client and server connections with timeouts of their own (0: none). */
static void pair_open2(struct pair *p, int client_ms, int server_ms)
{
    struct net_opts opts = { .timeout_ms = client_ms };
    pair_open_opts(p, &opts, server_ms);
}

static void pair_open(struct pair *p, int timeout_ms)
{
    pair_open2(p, timeout_ms, timeout_ms);
}

static void pair_close(struct pair *p)
{
    net_close(p->client);
    net_close(p->server);
    net_verbs_listener_close(p->l);
}

/* A writer thread: the rendezvous needs the reader to make progress. */
struct send_job {
    struct net_conn *conn;
    const struct iovec *iov;
    int cnt, rc;
};

static void *sender(void *arg)
{
    struct send_job *j = arg;
    j->rc = net_writev(j->conn, j->iov, j->cnt);
    return NULL;
}

static pthread_t send_async(struct send_job *j)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, sender, j), 0);
    return t;
}

/* Segments of varied lengths (some empty) over one buffer. */
static struct iovec *cut(uint8_t *buf, size_t total, int segs, unsigned seed)
{
    struct iovec *iov = calloc((size_t) segs, sizeof *iov);
    size_t off = 0;
    for (int i = 0; i < segs; i++) {
        size_t left = total - off;
        size_t len = i == segs - 1 ? left : (left / (size_t) (segs - i)) + ((i * seed) % 97);
        if (i % 11 == 5 && i != segs - 1)
            len = 0;
        if (len > left)
            len = left;
        iov[i] = (struct iovec) { buf + off, len };
        off += len;
    }
    return iov;
}

static void test_eager(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 10000);
    uint8_t src[3000], dst[3000];
    fill_random(src, sizeof src, 1);
    struct iovec iov[3] = { { src, 40 }, { src + 40, 0 }, { src + 40, 2960 } };
    assert_int_equal(net_writev(p.client, iov, 3), 0);
    assert_int_equal(net_readn(p.server, dst, 10), 0);     /* one message read in parts */
    assert_int_equal(net_readn(p.server, dst + 10, 2990), 0);
    assert_memory_equal(src, dst, sizeof src);
    struct net_verbs_stats st;
    net_verbs_stats(p.client, &st);
    assert_int_equal(st.eager_msgs, 1);
    assert_int_equal(st.rendezvous, 0);
    assert_int_equal(st.registrations, 0);
    pair_close(&p);
}

/*
 * The client pipelines 200 requests before it reads any reply, the server
 * answers each at once: far more messages than credits in both directions.
 */
struct echo {
    struct net_conn *conn;
    int n, rc;
};

static void *echo_main(void *arg)
{
    struct echo *e = arg;
    for (int i = 0; i < e->n && e->rc == 0; i++) {
        uint8_t req[600];
        size_t len = 100 + (size_t) (i * 37) % 500;
        e->rc = net_readn(e->conn, req, len);
        for (size_t k = 0; k < len && e->rc == 0; k++)
            req[k] ^= 0x5a;
        if (e->rc == 0)
            e->rc = net_writen(e->conn, req, len);
    }
    return NULL;
}

static void test_credits_pipelined(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 20000);
    enum { N = 200 };
    struct echo e = { .conn = p.server, .n = N };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, echo_main, &e), 0);
    for (int i = 0; i < N; i++) {
        uint8_t req[600];
        size_t len = 100 + (size_t) (i * 37) % 500;
        fill_random(req, len, (unsigned) i);
        assert_int_equal(net_writen(p.client, req, len), 0);
    }
    for (int i = 0; i < N; i++) {
        uint8_t req[600], rep[600];
        size_t len = 100 + (size_t) (i * 37) % 500;
        fill_random(req, len, (unsigned) i);
        assert_int_equal(net_readn(p.client, rep, len), 0);
        for (size_t k = 0; k < len; k++)
            assert_int_equal(rep[k], req[k] ^ 0x5a);
    }
    pthread_join(t, NULL);
    assert_int_equal(e.rc, 0);
    struct net_verbs_stats st;
    net_verbs_stats(p.client, &st);
    assert_int_equal(st.eager_msgs, N);
    pair_close(&p);
}

/*
 * Both ends are one process here, so they share its load: the offsets of
 * net_verbs_set_load_offset make one side the busier. 5 stays below the
 * heavy-load threshold of a server (8), 1000 and 2000 are above it.
 */
enum { BUSIER = 5, HEAVY = 1000, HEAVIER = 2000 };

/* Header eager, one data segment by rendezvous: the writer is the busier
 * side, so the reader RDMA-reads it. */
static void test_rendezvous_read(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 20000);
    net_verbs_set_load_offset(p.client, BUSIER);
    size_t n = 3u << 20;
    uint8_t hdr[24], got_hdr[24], *src = malloc(n), *dst = malloc(n);
    fill_random(hdr, sizeof hdr, 2);
    fill_random(src, n, 3);
    struct iovec iov[2] = { { hdr, sizeof hdr }, { src, n } };
    struct send_job j = { .conn = p.client, .iov = iov, .cnt = 2 };
    pthread_t t = send_async(&j);
    assert_int_equal(net_readn(p.server, got_hdr, sizeof got_hdr), 0);
    assert_int_equal(net_readn(p.server, dst, n), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, 0);
    assert_memory_equal(hdr, got_hdr, sizeof hdr);
    assert_memory_equal(src, dst, n);
    struct net_verbs_stats w, r;
    net_verbs_stats(p.client, &w);
    net_verbs_stats(p.server, &r);
    assert_int_equal(w.rendezvous, 1);
    assert_int_equal(w.eager_msgs, 1);
    assert_true(r.rdma_read_bytes == n);
    assert_int_equal(w.rdma_wrs, 0);
    assert_int_equal(r.adaptive_reads, 1);
    assert_int_equal(r.adaptive_writes, 0);
    free(src);
    free(dst);
    pair_close(&p);
}

/*
 * One region, so either side could do the RDMA; the transfer of n bytes
 * from the writer w to the reader r (header first, eager) checks the data
 * and returns both sides' counters.
 */
static void one_region(struct net_conn *w, struct net_conn *r, size_t n,
                       struct net_verbs_stats *ws, struct net_verbs_stats *rs)
{
    uint8_t hdr[24], got_hdr[24], *src = malloc(n), *dst = calloc(1, n);
    fill_random(hdr, sizeof hdr, 20);
    fill_random(src, n, 21);
    struct iovec iov[2] = { { hdr, sizeof hdr }, { src, n } };
    struct send_job j = { .conn = w, .iov = iov, .cnt = 2 };
    pthread_t t = send_async(&j);
    assert_int_equal(net_readn(r, got_hdr, sizeof got_hdr), 0);
    assert_int_equal(net_readn(r, dst, n), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, 0);
    assert_memory_equal(hdr, got_hdr, sizeof hdr);
    assert_memory_equal(src, dst, n);
    net_verbs_stats(w, ws);
    net_verbs_stats(r, rs);
    free(src);
    free(dst);
}

/* The reader chose RDMA READ: the writer posted no work request. */
static void assert_read_chosen(const struct net_verbs_stats *w, const struct net_verbs_stats *r,
                               size_t n)
{
    assert_int_equal(r->adaptive_reads, 1);
    assert_int_equal(r->adaptive_writes, 0);
    assert_true(r->rdma_read_bytes == n);
    assert_int_equal(w->rdma_wrs, 0);
}

/* The reader chose CTS: the writer RDMA-wrote, the reader posted nothing. */
static void assert_write_chosen(const struct net_verbs_stats *w, const struct net_verbs_stats *r,
                                size_t n)
{
    assert_int_equal(r->adaptive_writes, 1);
    assert_int_equal(r->adaptive_reads, 0);
    assert_true(w->rdma_write_bytes == n);
    assert_int_equal(r->rdma_wrs, 0);
}

/* One region of 3 MiB from the client (client_writes) or the server, with
 * these extra loads: the reader must choose as expected. */
static void adaptive_case(uint32_t server_load, uint32_t client_load, int client_writes,
                          int expect_read)
{
    struct pair p;
    pair_open(&p, 20000);
    net_verbs_set_load_offset(p.server, server_load);
    net_verbs_set_load_offset(p.client, client_load);
    size_t n = 3u << 20;
    struct net_verbs_stats w, r;
    if (client_writes)
        one_region(p.client, p.server, n, &w, &r);
    else
        one_region(p.server, p.client, n, &w, &r);
    if (expect_read) {
        assert_read_chosen(&w, &r, n);
    } else {
        assert_write_chosen(&w, &r, n);
        assert_true(r.bounced_bytes == 0);      /* straight into the reader's buffer */
    }
    pair_close(&p);
}

/* Equally loaded: the reader is not the less loaded side, it invites the
 * writer's RDMA WRITE. */
static void test_adaptive_write(void **state)
{
    (void) state;
    adaptive_case(0, 0, 1, 0);
}

/* The reader is the client: the less loaded client reads from a server. */
static void test_adaptive_read_from_server(void **state)
{
    (void) state;
    adaptive_case(BUSIER, 0, 0, 1);
}

/* A heavily loaded server receives: the client RDMA-writes, though the
 * server is the less loaded side (loads alone would have it read). */
static void test_adaptive_heavy_server_receives(void **state)
{
    (void) state;
    adaptive_case(HEAVY, HEAVIER, 1, 0);
}

/* A heavily loaded server sends: the client RDMA-reads, though it is the
 * more loaded side (loads alone would have the server write). */
static void test_adaptive_heavy_server_sends(void **state)
{
    (void) state;
    adaptive_case(HEAVY, HEAVIER, 0, 1);
}

/* A packed (staged) rendezvous is one region too: RDMA-written from the
 * writer's staging buffer into the reader's. */
static void test_adaptive_packed_write(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 20000);
    size_t n = 40000;
    struct net_verbs_stats w, r;
    one_region(p.client, p.server, n, &w, &r);
    assert_write_chosen(&w, &r, n);
    assert_true(r.bounced_bytes == n);
    assert_int_equal(w.registrations, 0);
    assert_int_equal(r.registrations, 0);
    pair_close(&p);
}

/* n bytes (pattern `seed`) written by the client from `segs` segments
 * (cut by `cut_seed`), read by the server into one buffer and compared;
 * *w and *r get the writer's and the reader's counters. */
static void segments_to_one(struct pair *p, size_t n, int segs, unsigned seed, unsigned cut_seed,
                            struct net_verbs_stats *w, struct net_verbs_stats *r)
{
    uint8_t *src = malloc(n), *dst = malloc(n);
    fill_random(src, n, seed);
    struct iovec *iov = cut(src, n, segs, cut_seed);
    struct send_job j = { .conn = p->client, .iov = iov, .cnt = segs };
    pthread_t t = send_async(&j);
    assert_int_equal(net_readn(p->server, dst, n), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, 0);
    assert_memory_equal(src, dst, n);
    net_verbs_stats(p->client, w);
    net_verbs_stats(p->server, r);
    free(iov);
    free(src);
    free(dst);
}

/* More segments than max_sge into one contiguous buffer: gathered by RDMA
 * WRITE in chained work requests of max_sge entries. */
static void test_gather_write(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 20000);
    size_t n = 1u << 20;
    struct net_verbs_stats w, r;
    segments_to_one(&p, n, 300, 4, 7, &w, &r);
    print_message("gather: %lu WRs, %lu SGEs, max %u per WR, %lu signalled, %lu registrations\n",
                  (unsigned long) w.rdma_wrs, (unsigned long) w.rdma_sges, w.rdma_max_sge,
                  (unsigned long) w.signalled, (unsigned long) w.registrations);
    assert_true(w.rdma_write_bytes + w.eager_bytes == n);  /* leading small segments: eager */
    assert_true(w.rdma_max_sge > 1);
    assert_true(w.rdma_multi_sge > 0);
    assert_true(w.rdma_wrs > 1);
    assert_true(w.signalled < w.rdma_wrs);
    /* several segments: no choice to make */
    assert_int_equal(r.adaptive_reads + r.adaptive_writes, 0);
    pair_close(&p);
}

/* One contiguous source scattered into more segments than max_sge (the
 * writer busier: the reader RDMA-reads). */
static void test_scatter_readv(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 20000);
    net_verbs_set_load_offset(p.client, BUSIER);
    size_t n = 2u << 20;
    int segs = 500;
    uint8_t *src = malloc(n), *dst = calloc(1, n);
    fill_random(src, n, 5);
    struct iovec one = { src, n };
    struct send_job j = { .conn = p.client, .iov = &one, .cnt = 1 };
    pthread_t t = send_async(&j);
    struct iovec *iov = cut(dst, n, segs, 13);
    assert_int_equal(net_readv(p.server, iov, segs), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, 0);
    assert_memory_equal(src, dst, n);
    struct net_verbs_stats r;
    net_verbs_stats(p.server, &r);
    print_message("scatter: %lu WRs, %lu SGEs, max %u per WR, %lu signalled\n",
                  (unsigned long) r.rdma_wrs, (unsigned long) r.rdma_sges, r.rdma_max_sge,
                  (unsigned long) r.signalled);
    assert_true(r.rdma_read_bytes == n);
    assert_true(r.rdma_max_sge > 1);
    assert_true(r.rdma_wrs > 1);
    free(iov);
    free(src);
    free(dst);
    pair_close(&p);
}

/* Noncontiguous on both sides: gathered into the reader's staging
 * buffer, unpacked into its segments. */
static void test_both_noncontig(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 20000);
    size_t n = 5u << 20;
    uint8_t *src = malloc(n), *dst = calloc(1, n);
    fill_random(src, n, 6);
    struct iovec *wi = cut(src, n, 77, 3), *ri = cut(dst, n, 91, 5);
    struct send_job j = { .conn = p.client, .iov = wi, .cnt = 77 };
    pthread_t t = send_async(&j);
    assert_int_equal(net_readv(p.server, ri, 91), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, 0);
    assert_memory_equal(src, dst, n);
    struct net_verbs_stats r;
    net_verbs_stats(p.server, &r);
    assert_true(r.bounced_bytes == n);
    free(wi);
    free(ri);
    free(src);
    free(dst);
    pair_close(&p);
}

/* Between the eager size and 64 KiB: packed into the writer's registered
 * staging buffer, read into the reader's: no registration of caller memory. */
static void test_pack_path(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 20000);
    size_t n = 40000;
    struct net_verbs_stats w, r;
    segments_to_one(&p, n, 50, 8, 11, &w, &r);
    assert_int_equal(w.rendezvous, 1);
    assert_int_equal(w.registrations, 0);
    assert_int_equal(r.registrations, 0);
    assert_true(r.bounced_bytes + w.eager_bytes == n);     /* leading small segments: eager */
    pair_close(&p);
}

/* pack_max of net_opts: 512 KiB of many segments packed by the writer (no
 * registration), where the default (64 KiB) would register them. */
static void test_pack_max_option(void **state)
{
    (void) state;
    if (getenv("RFS_VERBS_PACK")) {
        /* the "skipped: WHY" line test/run-unit.sh prints */
        print_message("skipped: RFS_VERBS_PACK in the environment overrides the option\n");
        skip();
    }
    struct pair p;
    struct net_opts opts = { .timeout_ms = 20000, .pack_max = 1u << 20 };
    pair_open_opts(&p, &opts, 20000);
    struct net_verbs_stats w, r;
    segments_to_one(&p, 512u << 10, 40, 14, 9, &w, &r);
    assert_int_equal(w.rendezvous, 1);
    assert_int_equal(w.registrations, 0);
    assert_int_equal(r.adaptive_reads + r.adaptive_writes, 1);  /* staged: one region */
    pair_close(&p);
}

/* 96 MiB each way, read in odd-sized pieces. */
static void test_large(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 60000);
    size_t n = 96u << 20;
    uint8_t *src = malloc(n), *dst = malloc(n);
    fill_random(src, n, 9);
    for (int dir = 0; dir < 2; dir++) {
        struct net_conn *w = dir ? p.server : p.client, *r = dir ? p.client : p.server;
        memset(dst, 0, n);
        struct iovec one = { src, n };
        struct send_job j = { .conn = w, .iov = &one, .cnt = 1 };
        pthread_t t = send_async(&j);
        size_t off = 0, piece = 7u << 20;
        while (off < n) {
            size_t len = n - off < piece ? n - off : piece;
            assert_int_equal(net_readn(r, dst + off, len), 0);
            off += len;
        }
        pthread_join(t, NULL);
        assert_int_equal(j.rc, 0);
        assert_memory_equal(src, dst, n);
    }
    free(src);
    free(dst);
    pair_close(&p);
}

/*
 * A peer process (this program again, exec'ed: verbs resources do not
 * survive fork) connects and is killed in the middle of a rendezvous; our
 * call must fail with ECONNRESET or ETIMEDOUT, not hang.
 */
static const char *self_exe;

static int run_peer(const char *role, const char *port)
{
    size_t n = 64u << 20;
    uint8_t *buf = malloc(n);
    struct net_conn *c;
    struct net_opts opts = { .timeout_ms = 60000 };
    fill_random(buf, n, 10);
    if (net_connect(&net_verbs_transport, addr(), port, &opts, &c) != 0)
        return 2;
    for (;;)
        if ((strcmp(role, "write") == 0 ? net_writen(c, buf, n) : net_readn(c, buf, n)) != 0)
            return 3;
}

struct killer {
    pid_t pid;
    int delay_ms;
};

static void *killer_main(void *arg)
{
    struct killer *k = arg;
    usleep((useconds_t) k->delay_ms * 1000);
    kill(k->pid, SIGKILL);
    return NULL;
}

static void killed_peer(int peer_writes)
{
    struct net_verbs_listener *l;
    assert_int_equal(net_verbs_listen(addr(), 0, &l), 0);
    char port[16];
    snprintf(port, sizeof port, "%d", net_verbs_listener_port(l));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(self_exe, self_exe, "--peer", peer_writes ? "write" : "read", port, (char *) NULL);
        _exit(127);
    }
    struct net_conn *c = accept_one(l, 60000);
    assert_non_null(c);
    size_t n = 64u << 20;
    uint8_t *buf = malloc(n);
    if (peer_writes)    /* the peer's transfer is under way */
        assert_int_equal(net_readn(c, buf, 1u << 20), 0);
    struct killer k = { .pid = pid, .delay_ms = 500 };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, killer_main, &k), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = 0;
    for (int i = 0; i < 1000 && rc == 0; i++)
        rc = peer_writes ? net_readn(c, buf, 1u << 20) : net_writen(c, buf, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    double secs = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    print_message("killed %s: %s after %.2f s\n", peer_writes ? "writer" : "reader",
                  strerror(-rc), secs);
    assert_true(rc == -ECONNRESET || rc == -ETIMEDOUT);
    assert_true(secs < 40);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));   /* killed, not ended by an error of its own */
    net_close(c);
    net_verbs_listener_close(l);
    free(buf);
}

/*
 * The link goes down in the middle of an RDMA READ transfer (ip link set
 * eth0 down: no disconnect can arrive). The reader has no timeout of its
 * own: the transport must end its wait by itself (rxe fails the QP's work
 * when its port goes down; a peer that silently stops answering is given
 * up after the bounded retries). The writer, waiting for a FIN that cannot
 * come, ends by its own timeout. Changes the guest's network, so
 * check-rdma runs it alone, last (VERBS_TESTS=test_link_lost).
 */
struct link_cut {
    int delay_ms, rc;
};

static void *cut_link(void *arg)
{
    struct link_cut *k = arg;
    usleep((useconds_t) k->delay_ms * 1000);
    k->rc = system("ip link set eth0 down");
    return NULL;
}

static void test_link_lost(void **state)
{
    (void) state;
    struct pair p;
    pair_open2(&p, 20000, 0);
    net_verbs_set_load_offset(p.client, BUSIER);        /* the reader reads */
    size_t n = 64u << 20;
    uint8_t *src = malloc(n), *dst = malloc(n);
    fill_random(src, n, 12);
    struct iovec one = { src, n };
    struct send_job j = { .conn = p.client, .iov = &one, .cnt = 1 };
    pthread_t t = send_async(&j), c;
    struct link_cut k = { .delay_ms = 500 };
    assert_int_equal(pthread_create(&c, NULL, cut_link, &k), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = net_readn(p.server, dst, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(c, NULL);
    double secs = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    print_message("link lost: the reader got %s after %.2f s\n", strerror(-rc), secs);
    pthread_join(t, NULL);
    print_message("link lost: the writer got %s\n", strerror(-j.rc));
    assert_int_equal(system("ip link set eth0 up"), 0);
    assert_int_equal(k.rc, 0);
    assert_true(rc == -ETIMEDOUT || rc == -ECONNRESET);
    assert_true(j.rc == -ETIMEDOUT || j.rc == -ECONNRESET);
    assert_true(secs < 60);
    free(src);
    free(dst);
    pair_close(&p);
}

static void test_killed_writer(void **state)
{
    (void) state;
    killed_peer(1);
}

static void test_killed_reader(void **state)
{
    (void) state;
    killed_peer(0);
}

/* A read with nothing coming ends by the timeout. */
static void test_receive_timeout(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 300);
    char c;
    assert_int_equal(net_readn(p.client, &c, 1), -ETIMEDOUT);
    pair_close(&p);
}

/* The peer closes after sending: the reader gets the data, then ECONNRESET. */
static void test_end_of_stream(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 5000);
    assert_int_equal(net_writen(p.client, "abc", 3), 0);
    net_close(p.client);
    p.client = NULL;
    char buf[8];
    assert_int_equal(net_readn(p.server, buf, 3), 0);
    assert_memory_equal(buf, "abc", 3);
    assert_int_equal(net_readn(p.server, buf, 1), -ECONNRESET);
    net_close(p.server);
    net_verbs_listener_close(p.l);
}

static void test_connect_refused(void **state)
{
    (void) state;
    struct net_verbs_listener *l;
    assert_int_equal(net_verbs_listen(addr(), 0, &l), 0);
    char port[16];
    snprintf(port, sizeof port, "%d", net_verbs_listener_port(l));
    net_verbs_listener_close(l);
    struct net_opts opts = { .timeout_ms = 5000 };
    struct net_conn *c = NULL;
    int rc = net_connect(&net_verbs_transport, addr(), port, &opts, &c);
    assert_true(rc == -ECONNREFUSED || rc == -ECONNRESET);
    assert_null(c);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--peer") == 0)
        return run_peer(argv[2], argv[3]);
    self_exe = argv[0];
    signal(SIGPIPE, SIG_IGN);
    /* test_link_lost takes the network down: only when asked for by name */
    const char *only = getenv("VERBS_TESTS");
    if (only && *only)
        cmocka_set_test_filter(only);
    else
        cmocka_set_skip_filter("test_link_lost");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eager),
        cmocka_unit_test(test_credits_pipelined),
        cmocka_unit_test(test_rendezvous_read),
        cmocka_unit_test(test_adaptive_write),
        cmocka_unit_test(test_adaptive_read_from_server),
        cmocka_unit_test(test_adaptive_heavy_server_receives),
        cmocka_unit_test(test_adaptive_heavy_server_sends),
        cmocka_unit_test(test_adaptive_packed_write),
        cmocka_unit_test(test_gather_write),
        cmocka_unit_test(test_scatter_readv),
        cmocka_unit_test(test_both_noncontig),
        cmocka_unit_test(test_pack_path),
        cmocka_unit_test(test_pack_max_option),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_receive_timeout),
        cmocka_unit_test(test_end_of_stream),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_killed_writer),
        cmocka_unit_test(test_killed_reader),
        cmocka_unit_test(test_link_lost),
    };
    return cmocka_run_group_tests_name("verbs", tests, NULL, NULL);
}
