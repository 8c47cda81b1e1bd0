/*
 * Throughput of the verbs transport: one connection, a writer thread
 * sending messages of MSG bytes, the reader taking them. Modes:
 *   read    each message one segment, the writer the busier side: the
 *           reader RDMA-reads it
 *   write   each message one segment, equal loads: the reader invites the
 *           writer's RDMA WRITE by CTS
 *   gather  each message 64 segments: the writer RDMA-writes (gathers)
 *   eager   8 KiB messages: eager sends with credits
 * and seed 000's Figure 4, list I/O of 128 segments of SEG bytes each:
 *   seg-gather  one writev of the 128 segments, gathered by RDMA WRITE
 *               (no packing: RFS_VERBS_PACK=0)
 *   seg-pack    one writev, packed through the staging buffer
 *   seg-each    one message per segment
 *   verbs_bench ADDR MODE MIB [SEG]   prints "MODE: X MB/s" (1 MB = 10^6 bytes)
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs/net_verbs.h"

struct job {
    struct net_conn *conn;
    const char *mode;
    size_t msg;
    uint64_t total;
    int rc;
};

static void *writer(void *arg)
{
    struct job *j = arg;
    uint8_t *buf = malloc(j->msg);
    memset(buf, 0xa5, j->msg);
    int segs = strcmp(j->mode, "gather") == 0 ? 64 : strncmp(j->mode, "seg-", 4) == 0 ? 128 : 1;
    int each = strcmp(j->mode, "seg-each") == 0;
    struct iovec iov[128];
    for (int i = 0; i < segs; i++)
        iov[i] = (struct iovec) { buf + (j->msg / (size_t) segs) * (size_t) i,
                                  j->msg / (size_t) segs };
    for (uint64_t done = 0; done < j->total && j->rc == 0; done += j->msg)
        for (int i = 0; i < (each ? segs : 1) && j->rc == 0; i++)
            j->rc = each ? net_writev(j->conn, &iov[i], 1) : net_writev(j->conn, iov, segs);
    free(buf);
    return NULL;
}

struct acceptor {
    struct net_verbs_listener *l;
    struct net_conn *conn;
};

/* connect waits until the connection is established: accept on a thread */
static void *accept_main(void *arg)
{
    struct acceptor *a = arg;
    struct net_opts opts = { .timeout_ms = 60000 };
    char peer[64];
    while (!a->conn) {
        struct pollfd p = { .fd = net_verbs_listener_fd(a->l), .events = POLLIN };
        if (poll(&p, 1, 10000) <= 0 ||
            net_verbs_accept(a->l, &opts, 1, &a->conn, peer, sizeof peer) < 0)
            break;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int segmented = argc == 5 && strncmp(argv[2], "seg-", 4) == 0;
    if (argc != 4 && !segmented) {
        fprintf(stderr, "usage: verbs_bench ADDR read|write|gather|eager MIB\n"
                        "       verbs_bench ADDR seg-gather|seg-pack|seg-each MIB SEG\n");
        return 2;
    }
    struct job j = { .mode = argv[2], .total = strtoull(argv[3], NULL, 10) << 20 };
    j.msg = segmented ? 128 * strtoull(argv[4], NULL, 10)
          : strcmp(j.mode, "eager") == 0 ? 8000 : 1u << 20;
    /* the transport reads its packing threshold when a connection is made */
    if (segmented && strcmp(j.mode, "seg-each") != 0)
        setenv("RFS_VERBS_PACK", strcmp(j.mode, "seg-pack") == 0 ? "4194304" : "0", 1);
    struct net_verbs_listener *l;
    struct net_opts opts = { .timeout_ms = 60000 };
    char port[16];
    if (net_verbs_listen(argv[1], 0, &l) != 0)
        return 1;
    snprintf(port, sizeof port, "%d", net_verbs_listener_port(l));
    struct acceptor a = { .l = l };
    pthread_t t;
    pthread_create(&t, NULL, accept_main, &a);
    int crc = net_connect(&net_verbs_transport, argv[1], port, &opts, &j.conn);
    pthread_join(t, NULL);
    struct net_conn *server = a.conn;
    if (crc != 0 || !server) {
        fprintf(stderr, "verbs_bench: no connection (%d)\n", crc);
        return 1;
    }
    /* both ends share this process's load: make the writer the busier one */
    if (strcmp(j.mode, "read") == 0)
        net_verbs_set_load_offset(j.conn, 5);
    uint8_t *buf = malloc(j.msg);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_create(&t, NULL, writer, &j);
    int rc = 0;
    for (uint64_t done = 0; done < j.total && rc == 0; done += j.msg)
        rc = net_readn(server, buf, j.msg);
    pthread_join(t, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (rc || j.rc) {
        fprintf(stderr, "verbs_bench: transfer failed (%d, %d)\n", rc, j.rc);
        return 1;
    }
    printf("%s: %.1f MB/s\n", j.mode, (double) j.total / secs / 1e6);
    net_close(j.conn);
    net_close(server);
    net_verbs_listener_close(l);
    free(buf);
    return 0;
}
