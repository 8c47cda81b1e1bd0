/* The TCP transport: whole transfers, end of stream, timeouts, refusal;
 * the HOST:PORT parser, on good and hostile input. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "net/net.h"
#include "net/net_endpoint.h"
#include "unit_util.h"

struct pair {
    int lfd;
    char port[16];
    struct net_conn *client, *server;
};

static void pair_open_opts(struct pair *p, const struct net_opts *opts)
{
    int port;
    assert_int_equal(net_tcp_listen("127.0.0.1", "0", &p->lfd, &port), 0);
    snprintf(p->port, sizeof p->port, "%d", port);
    assert_int_equal(net_connect(&net_tcp_transport, "127.0.0.1", p->port, opts, &p->client), 0);
    int fd = accept(p->lfd, NULL, NULL);
    assert_true(fd >= 0);
    assert_int_equal(net_tcp_wrap(fd, opts, &p->server), 0);
}

static void pair_open(struct pair *p, int timeout_ms)
{
    struct net_opts opts = { .timeout_ms = timeout_ms };
    pair_open_opts(p, &opts);
}

static void pair_close(struct pair *p)
{
    net_close(p->client);
    net_close(p->server);
    close(p->lfd);
}

/* A writer thread, so that a transfer bigger than the socket buffers
 * cannot deadlock the test. */
struct send_job {
    struct net_conn *conn;
    struct iovec iov[3];
    int rc;
};

static void *sender(void *arg)
{
    struct send_job *j = arg;
    j->rc = net_writev(j->conn, j->iov, 3);
    return NULL;
}

/* Three pieces of `sizes` bytes sent by `from` in one writev (from a
 * thread, so that more than the socket buffers hold cannot deadlock the
 * test) arrive at `to` whole and in order. */
static void transfer_checked(struct net_conn *from, struct net_conn *to, const size_t sizes[3],
                             unsigned seed)
{
    size_t n = sizes[0] + sizes[1] + sizes[2];
    uint8_t *src = malloc(n), *dst = malloc(n);
    fill_random(src, n, seed);
    struct send_job j = { .conn = from };
    j.iov[0] = (struct iovec) { src, sizes[0] };
    j.iov[1] = (struct iovec) { src + sizes[0], sizes[1] };
    j.iov[2] = (struct iovec) { src + sizes[0] + sizes[1], sizes[2] };
    pthread_t t;
    pthread_create(&t, NULL, sender, &j);
    assert_int_equal(net_readn(to, dst, n), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, 0);
    assert_memory_equal(src, dst, n);
    free(src);
    free(dst);
}

/* rcvbuf sets the client's receive buffer (Linux keeps twice the value,
 * for its own overhead), and 3 MiB still cross a buffer of 32 KiB whole. */
static void test_rcvbuf(void **state)
{
    (void) state;
    struct pair p;
    struct net_opts opts = { .timeout_ms = 5000, .rcvbuf = 32768 };
    pair_open_opts(&p, &opts);
    int size = 0;
    socklen_t len = sizeof size;
    assert_int_equal(getsockopt(net_tcp_fd(p.client), SOL_SOCKET, SO_RCVBUF, &size, &len), 0);
    assert_int_equal(size, 2 * 32768);
    size_t sizes[3] = { 1, (3u << 20) - 2, 1 };
    transfer_checked(p.server, p.client, sizes, 3);
    pair_close(&p);
}

static void test_writev_readn(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 5000);
    size_t sizes[3] = { 7, 3u << 20, 1 };
    transfer_checked(p.client, p.server, sizes, 1);
    pair_close(&p);
}

/* readv scatters one stream into many segments, empty ones included. */
static void test_readv_scatter(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 5000);
    enum { SEGS = 40 };
    size_t total = 0, len[SEGS];
    for (int i = 0; i < SEGS; i++)
        total += len[i] = i % 5 == 2 ? 0 : (size_t) (i * 977 + 1);
    uint8_t *src = malloc(total), *dst = calloc(1, total);
    fill_random(src, total, 9);
    struct send_job j = { .conn = p.client };
    j.iov[0] = (struct iovec) { src, total / 2 };
    j.iov[1] = (struct iovec) { src + total / 2, total - total / 2 };
    j.iov[2] = (struct iovec) { NULL, 0 };
    pthread_t t;
    pthread_create(&t, NULL, sender, &j);
    struct iovec iov[SEGS];
    size_t off = 0;
    for (int i = 0; i < SEGS; i++) {
        iov[i] = (struct iovec) { dst + off, len[i] };
        off += len[i];
    }
    assert_int_equal(net_readv(p.server, iov, SEGS), 0);
    pthread_join(t, NULL);
    assert_int_equal(j.rc, 0);
    assert_memory_equal(src, dst, total);
    free(src);
    free(dst);
    pair_close(&p);
}

static void test_end_of_stream(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 5000);
    assert_int_equal(net_writen(p.client, "abc", 3), 0);
    net_close(p.client);
    p.client = NULL;
    char buf[8];
    assert_int_equal(net_readn(p.server, buf, 8), -ECONNRESET);  /* 3 of 8, then EOF */
    pair_close(&p);
}

static void test_receive_timeout(void **state)
{
    (void) state;
    struct pair p;
    pair_open(&p, 200);
    char c;
    assert_int_equal(net_readn(p.client, &c, 1), -ETIMEDOUT);
    pair_close(&p);
}

static void test_connect_refused(void **state)
{
    (void) state;
    int lfd, port;
    char pstr[16];
    assert_int_equal(net_tcp_listen("127.0.0.1", "0", &lfd, &port), 0);
    close(lfd);                         /* nothing listens there now */
    snprintf(pstr, sizeof pstr, "%d", port);
    struct net_opts opts = { .timeout_ms = 2000 };
    struct net_conn *c = NULL;
    assert_int_equal(net_connect(&net_tcp_transport, "127.0.0.1", pstr, &opts, &c),
                     -ECONNREFUSED);
    assert_null(c);
}

/* What net_endpoint_parse takes of all of s, or -EINVAL. */
static int parse(const char *s, struct net_endpoint *e)
{
    return net_endpoint_parse(s, strlen(s), e);
}

static void test_endpoint_good(void **state)
{
    (void) state;
    struct net_endpoint e;
    assert_int_equal(parse("io0.example:7000", &e), 16);
    assert_string_equal(e.host, "io0.example");
    assert_string_equal(e.port, "7000");
    assert_int_equal(parse("[fe80::1]:65535", &e), 15);
    assert_string_equal(e.host, "fe80::1");
    assert_string_equal(e.port, "65535");
    assert_int_equal(parse("10.0.0.1:1", &e), 10);
    assert_string_equal(e.host, "10.0.0.1");
    /* A ':' ends it: what follows (an rfs: path) is the caller's. */
    assert_int_equal(parse("h:7070:/run1/out", &e), 6);
    assert_string_equal(e.port, "7070");
    assert_int_equal(parse("[::1]:7070:/x", &e), 10);
    assert_string_equal(e.host, "::1");
    /* Only the first len bytes count (one element of a list). */
    assert_int_equal(net_endpoint_parse("a:1,b:2", 3, &e), 3);
    assert_string_equal(e.host, "a");
    assert_string_equal(e.port, "1");
}

static void test_endpoint_hostile(void **state)
{
    (void) state;
    struct net_endpoint e;
    char host[300], name[320];
    const char *bad[] = {
        "", ":", "h", "h:", ":7000", "[]:7000", "h:0", "h:00000", "h:65536", "h:99999",
        "h:12345678901234567890", "h:70x", "h:-1", "h: 80", "h:+80", "[::1]", "[::1]:",
        "[::1]7000", "[::1:7000", "::1:7000", "a:b:80",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&e, 0x5a, sizeof e);
        assert_int_equal(parse(bad[i], &e), -EINVAL);
    }
    /* A host of 255 bytes fits, one of 256 does not. */
    memset(host, 'h', 255);
    host[255] = '\0';
    snprintf(name, sizeof name, "%s:80", host);
    assert_int_equal(parse(name, &e), 258);
    assert_int_equal(strlen(e.host), 255);
    snprintf(name, sizeof name, "h%s:80", host);
    assert_int_equal(parse(name, &e), -EINVAL);
    snprintf(name, sizeof name, "[%s]:80", host);
    assert_int_equal(parse(name, &e), 260);
    snprintf(name, sizeof name, "[h%s]:80", host);
    assert_int_equal(parse(name, &e), -EINVAL);
    /* The length bounds the parse: no byte past it is read. */
    assert_int_equal(net_endpoint_parse("h:80", 2, &e), -EINVAL);
    assert_int_equal(net_endpoint_parse("[::1]:80", 5, &e), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writev_readn),
        cmocka_unit_test(test_rcvbuf),
        cmocka_unit_test(test_readv_scatter),
        cmocka_unit_test(test_end_of_stream),
        cmocka_unit_test(test_receive_timeout),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_endpoint_good),
        cmocka_unit_test(test_endpoint_hostile),
    };
    return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
