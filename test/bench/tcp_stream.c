/*
 * The baseline of the rfs: benchmark: a raw TCP stream over loopback
 * between two threads (the same endpoints and transport code as client and
 * rfsd), moving BYTES in CHUNK-sized writes, each way.
 *
 *   tcp_stream BYTES CHUNK REPS   ->  "write MBps" and "read MBps" medians
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"

static uint64_t total, chunk;
static int reps, lfd;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Moves `total` bytes from `from` to `to` in chunks. */
static void stream(struct net_conn *from, struct net_conn *to, char *sbuf, char *rbuf,
                   int sending)
{
    for (uint64_t done = 0; done < total; done += chunk) {
        if (sending ? net_writen(from, sbuf, chunk) : net_readn(to, rbuf, chunk)) {
            fprintf(stderr, "tcp_stream: transfer failed\n");
            exit(1);
        }
    }
}

struct peer {
    struct net_conn *conn;
    char *buf;
};

static void *server(void *arg)
{
    struct peer *p = arg;
    int fd = accept(lfd, NULL, NULL);
    struct net_opts opts = { 0 };
    net_tcp_wrap(fd, &opts, &p->conn);
    for (int r = 0; r < reps; r++) {
        stream(NULL, p->conn, NULL, p->buf, 0);     /* sink: the client writes */
        stream(p->conn, NULL, p->buf, NULL, 1);     /* source: the client reads */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fprintf(stderr, "usage: tcp_stream BYTES CHUNK REPS\n"), 2;
    total = strtoull(argv[1], NULL, 0);
    chunk = strtoull(argv[2], NULL, 0);
    reps = atoi(argv[3]);
    total -= total % chunk;
    int port;
    char pstr[16];
    if (net_tcp_listen("127.0.0.1", "0", &lfd, &port) < 0)
        return 1;
    snprintf(pstr, sizeof pstr, "%d", port);
    struct peer srv = { .buf = malloc(chunk) };
    memset(srv.buf, 1, chunk);
    pthread_t t;
    pthread_create(&t, NULL, server, &srv);
    struct net_conn *c;
    struct net_opts opts = { 0 };
    if (net_connect(&net_tcp_transport, "127.0.0.1", pstr, &opts, &c) < 0)
        return 1;
    char *buf = malloc(chunk);
    memset(buf, 2, chunk);
    double *w = calloc((size_t) reps, sizeof *w), *r = calloc((size_t) reps, sizeof *r);
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        stream(c, NULL, buf, NULL, 1);
        double t1 = now();
        stream(NULL, c, NULL, buf, 0);
        double t2 = now();
        w[i] = (double) total / (t1 - t0) / 1e6;
        r[i] = (double) total / (t2 - t1) / 1e6;
    }
    pthread_join(t, NULL);
    qsort(w, (size_t) reps, sizeof *w, cmp);
    qsort(r, (size_t) reps, sizeof *r, cmp);
    printf("write %.1f\nread %.1f\n", w[reps / 2], r[reps / 2]);
    net_close(c);
    net_close(srv.conn);
    return 0;
}
