/* Shared-key authentication and TLS against the real request engine over
 * loopback: key files as hostile input, the challenge-response with good,
 * wrong, unknown and missing keys, read-only and rooted keys, a server that
 * cannot prove the key, and TLS checked on the wire: a relay records what
 * crosses and the data must not be in it (and is, over plain TCP). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/rfs_auth.h"
#include "proto/rfs_client.h"
#include "unit_util.h"

#define ALICE "alice 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define ALICE_WRONG "alice 00112233445566778899aabbccddeeff00112233445566778899aabbccddeefe"
#define BOB "bob 0f1e2d3c4b5a69788796a5b4c3d2e1f0 ro"
#define CAROL "carol 5555555555555555aaaaaaaaaaaaaaaa root=sub"

static char dir[4096];

static const char *write_key_file(const char *name, const char *text, mode_t mode)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static int setup(void **state)
{
    (void) state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rfs-sec-XXXXXX", tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    remove_tree(dir);
    return 0;
}

static int load_ring(const char *text, mode_t mode, struct rfs_keyring *ring, char *err)
{
    return rfs_keyring_load(write_key_file("ring", text, mode), ring, err, 256);
}

static void test_key_files(void **state)
{
    (void) state;
    struct rfs_keyring ring;
    char err[256];
    assert_int_equal(load_ring(ALICE "\n", 0644, &ring, err), -EPERM);
    assert_non_null(strstr(err, "chmod 600"));
    assert_int_equal(load_ring("# none\n\n", 0600, &ring, err), -EINVAL);
    assert_int_equal(load_ring("alice 0011\n", 0600, &ring, err), -EINVAL);      /* short */
    assert_int_equal(load_ring("alice 00112233445566778899aabbccddeefg\n", 0600, &ring, err),
                     -EINVAL);
    assert_int_equal(load_ring(ALICE "\n" ALICE "\n", 0600, &ring, err), -EINVAL);
    assert_non_null(strstr(err, "line 2"));
    assert_int_equal(load_ring(ALICE " rw\n", 0600, &ring, err), -EINVAL);
    assert_int_equal(load_ring("al/ce 00112233445566778899aabbccddeeff\n", 0600, &ring, err),
                     -EINVAL);

    assert_int_equal(load_ring("# keys\n" ALICE "\n  " BOB "\n" CAROL "\r\n", 0400, &ring, err),
                     0);
    assert_int_equal(ring.count, 3);
    const struct rfs_key *bob = rfs_keyring_find(&ring, "bob", 3);
    assert_non_null(bob);
    assert_true(bob->read_only);
    assert_int_equal(bob->secret_len, 16);
    assert_int_equal(bob->secret[0], 0x0f);
    assert_int_equal(bob->secret[15], 0xf0);
    assert_string_equal(rfs_keyring_find(&ring, "carol", 5)->root, "sub");
    assert_null(rfs_keyring_find(&ring, "ali", 3));
    rfs_keyring_free(&ring);

    struct rfs_key key;
    assert_int_equal(rfs_key_load(write_key_file("two", ALICE "\n" BOB "\n", 0600), &key, err,
                                  sizeof err), -EINVAL);
    assert_int_equal(rfs_key_load(write_key_file("one", BOB "\n", 0600), &key, err, sizeof err),
                     0);
    assert_false(key.read_only);        /* options are the server's */
    rfs_key_wipe(&key);
}

static void test_mac_binds_everything(void **state)
{
    (void) state;
    struct rfs_key key;
    char err[256];
    uint8_t cn[RFS_AUTH_NONCE] = { 1 }, sn[RFS_AUTH_NONCE] = { 2 }, bind[32] = { 3 };
    uint8_t m[6][RFS_AUTH_MAC];
    assert_int_equal(rfs_key_load(write_key_file("k", ALICE, 0600), &key, err, sizeof err), 0);
    rfs_auth_mac(&key, 'C', cn, sn, NULL, 0, m[0]);
    rfs_auth_mac(&key, 'C', cn, sn, NULL, 0, m[1]);
    rfs_auth_mac(&key, 'S', cn, sn, NULL, 0, m[2]);
    rfs_auth_mac(&key, 'C', sn, cn, NULL, 0, m[3]);
    rfs_auth_mac(&key, 'C', cn, sn, bind, sizeof bind, m[4]);
    key.secret[0] ^= 1;
    rfs_auth_mac(&key, 'C', cn, sn, NULL, 0, m[5]);
    assert_true(rfs_auth_mac_equal(m[0], m[1]));
    for (int i = 2; i < 6; i++)
        assert_false(rfs_auth_mac_equal(m[0], m[i]));
    rfs_key_wipe(&key);
}

struct secure_server {
    struct test_server ts;
    struct rfs_keyring ring;
};

static void start_keyed(struct secure_server *s, struct net_tls *tls)
{
    char err[256];
    assert_int_equal(load_ring(ALICE "\n" BOB "\n" CAROL "\n", 0600, &s->ring, err), 0);
    test_server_start_secure(&s->ts, &s->ring, tls);
    char path[4200];
    assert_int_equal(mkdir(test_path(&s->ts, "sub", path, sizeof path), 0755), 0);
}

static void stop_keyed(struct secure_server *s)
{
    test_server_stop(&s->ts);
    rfs_keyring_free(&s->ring);
}

static int connect_as(struct rfs_client *c, const char *port, const char *key_line,
                      const struct net_transport *t, struct net_tls *tls)
{
    struct rfs_key key;
    char err[256];
    if (key_line)
        assert_int_equal(rfs_key_load(write_key_file("client", key_line, 0600), &key, err,
                                      sizeof err), 0);
    struct rfs_connect_opts o = { .transport = t, .net = { .timeout_ms = 10000, .tls = tls },
                                  .key = key_line ? &key : NULL };
    int rc = rfs_client_connect_with(c, "127.0.0.1", port, &o);
    if (key_line)
        rfs_key_wipe(&key);
    return rc;
}

static void write_and_check(struct rfs_client *c, const char *path, const uint8_t *data,
                            size_t len)
{
    struct rfs_stat st;
    uint8_t *back = malloc(len);
    uint64_t done = 0;
    assert_int_equal(rfs_open(c, 0, path, RFS_O_RDWR | RFS_O_CREAT, 0600, &st), RFS_OK);
    assert_int_equal(rfs_pwrite(c, 0, data, len, 0), RFS_OK);
    assert_int_equal(rfs_pread(c, 0, back, len, 0, &done), RFS_OK);
    assert_int_equal(done, len);
    assert_memory_equal(back, data, len);
    assert_int_equal(rfs_close(c, 0), RFS_OK);
    free(back);
}

static void test_keys_on_live_server(void **state)
{
    (void) state;
    struct secure_server s;
    struct rfs_client c;
    struct rfs_stat st;
    uint8_t data[5000];
    char path[4200];
    fill_random(data, sizeof data, 7);
    start_keyed(&s, NULL);

    assert_int_equal(connect_as(&c, s.ts.port, ALICE, NULL, NULL), 0);
    write_and_check(&c, "/f", data, sizeof data);
    rfs_client_close(&c);

    /* No key: the first request is refused, the connection ends. */
    assert_int_equal(connect_as(&c, s.ts.port, NULL, NULL, NULL), 0);
    assert_int_equal(rfs_open(&c, 0, "/f", RFS_O_RDONLY, 0, &st), RFS_E_AUTH);
    assert_true(rfs_fstat(&c, 0, &st) < 0);
    rfs_client_close(&c);

    assert_int_equal(connect_as(&c, s.ts.port, ALICE_WRONG, NULL, NULL), RFS_E_AUTH);
    assert_non_null(strstr(c.why, "refused the key"));
    rfs_client_close(&c);
    assert_int_equal(connect_as(&c, s.ts.port, "mallory 00112233445566778899aabbccddeeff",
                                NULL, NULL), RFS_E_AUTH);
    rfs_client_close(&c);

    /* Read-only: reads yes, anything that writes no. */
    assert_int_equal(connect_as(&c, s.ts.port, BOB, NULL, NULL), 0);
    assert_int_equal(rfs_open(&c, 0, "/f", RFS_O_RDWR, 0, &st), RFS_E_ACCES);
    assert_int_equal(rfs_open(&c, 0, "/new", RFS_O_RDONLY | RFS_O_CREAT, 0600, &st), RFS_E_ACCES);
    assert_int_equal(rfs_unlink(&c, "/f"), RFS_E_ACCES);
    uint8_t back[sizeof data];
    uint64_t done;
    assert_int_equal(rfs_open(&c, 0, "/f", RFS_O_RDONLY, 0, &st), RFS_OK);
    assert_int_equal(rfs_pread(&c, 0, back, sizeof back, 0, &done), RFS_OK);
    assert_memory_equal(back, data, sizeof data);
    rfs_client_close(&c);

    /* Rooted: "/g" lands in sub/, and sub/ is all it sees. */
    assert_int_equal(connect_as(&c, s.ts.port, CAROL, NULL, NULL), 0);
    write_and_check(&c, "/g", data, sizeof data);
    assert_int_equal(access(test_path(&s.ts, "sub/g", path, sizeof path), F_OK), 0);
    assert_int_equal(rfs_open(&c, 0, "/../f", RFS_O_RDONLY, 0, &st), RFS_E_ESCAPE);
    assert_int_equal(rfs_open(&c, 0, "/f", RFS_O_RDONLY, 0, &st), RFS_E_NOENT);
    rfs_client_close(&c);
    stop_keyed(&s);

    /* A key for a server that does not authenticate: not used blindly. */
    test_server_start(&s.ts);
    assert_int_equal(connect_as(&c, s.ts.port, ALICE, NULL, NULL), RFS_E_AUTH);
    assert_non_null(strstr(c.why, "does not authenticate"));
    rfs_client_close(&c);
    test_server_stop(&s.ts);
}

/* A server that knows the protocol but not the key: its proof is zeros. */
static void *impostor(void *arg)
{
    int lfd = *(int *) arg;
    int fd = accept(lfd, NULL, NULL);
    struct net_conn *conn;
    struct net_opts opts = { .timeout_ms = 5000 };
    uint8_t in[RFS_HDR_SIZE + RFS_REQ_FIXED + RFS_AUTH_MAX_NAME + RFS_AUTH_NONCE];
    if (fd < 0 || net_tcp_wrap(fd, &opts, &conn) < 0)
        return NULL;
    for (uint32_t tag = 1; tag <= 2; tag++) {
        struct rfs_hdr h;
        uint8_t out[RFS_HDR_SIZE + RFS_REP_FIXED + 32] = { 0 };
        if (net_readn(conn, in, RFS_HDR_SIZE) < 0 || rfs_hdr_decode(in, &h) != RFS_OK ||
            h.len > sizeof in - RFS_HDR_SIZE || net_readn(conn, in, h.len) < 0)
            break;
        struct rfs_hdr r = { .magic = RFS_MAGIC, .version = RFS_VERSION,
                             .op = RFS_OP_AUTH | RFS_REPLY, .tag = tag,
                             .len = RFS_REP_FIXED + 32 };
        rfs_hdr_encode(&r, out);
        if (net_writen(conn, out, sizeof out) < 0)
            break;
    }
    net_close(conn);
    return NULL;
}

static void test_server_must_prove_key(void **state)
{
    (void) state;
    int lfd, port;
    char port_s[16];
    pthread_t t;
    struct rfs_client c;
    assert_int_equal(net_tcp_listen("127.0.0.1", "0", &lfd, &port), 0);
    snprintf(port_s, sizeof port_s, "%d", port);
    assert_int_equal(pthread_create(&t, NULL, impostor, &lfd), 0);
    assert_int_equal(connect_as(&c, port_s, ALICE, NULL, NULL), RFS_E_AUTH);
    assert_non_null(strstr(c.why, "could not prove"));
    rfs_client_close(&c);
    pthread_join(t, NULL);
    close(lfd);
}

/* A self-signed certificate for 127.0.0.1, made with the openssl tool. */
static void make_cert(const char *name)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
             "-subj /CN=rfs-test -addext subjectAltName=IP:127.0.0.1 "
             "-keyout %s/%s.key -out %s/%s.crt 2>/dev/null", dir, name, dir, name);
    assert_int_equal(system(cmd), 0);
}

static struct net_tls *server_tls(const char *name)
{
    char cert[4200], key[4200], err[256];
    struct net_tls *tls;
    snprintf(cert, sizeof cert, "%s/%s.crt", dir, name);
    snprintf(key, sizeof key, "%s/%s.key", dir, name);
    assert_int_equal(net_tls_server_new(cert, key, &tls, err, sizeof err), 0);
    return tls;
}

static struct net_tls *client_tls(const char *ca_name)
{
    char ca[4200], err[256];
    struct net_tls *tls;
    snprintf(ca, sizeof ca, "%s/%s.crt", dir, ca_name);
    assert_int_equal(net_tls_client_new(ca_name ? ca : NULL, ca_name != NULL, &tls, err,
                                        sizeof err), 0);
    return tls;
}

/* A TCP relay that keeps every byte the client sends. */
struct relay {
    int lfd, port;
    const char *to_port;
    uint8_t *seen;
    size_t seen_len, seen_cap;
    pthread_t thread;
};

static void *relay_main(void *arg)
{
    struct relay *r = arg;
    struct net_conn *in, *out;
    struct net_opts opts = { .timeout_ms = 10000 };
    int fd = accept(r->lfd, NULL, NULL);
    if (fd < 0 || net_tcp_wrap(fd, &opts, &in) < 0)
        return NULL;
    if (net_connect(&net_tcp_transport, "127.0.0.1", r->to_port, &opts, &out) < 0) {
        net_close(in);
        return NULL;
    }
    int cfd = net_tcp_fd(in), sfd = net_tcp_fd(out);
    for (;;) {
        struct pollfd p[2] = { { .fd = cfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
        if (poll(p, 2, 10000) <= 0)
            break;
        uint8_t buf[65536];
        if (p[0].revents) {
            ssize_t n = recv(cfd, buf, sizeof buf, 0);
            if (n <= 0 || send(sfd, buf, (size_t) n, MSG_NOSIGNAL) != n)
                break;
            if (r->seen_len + (size_t) n <= r->seen_cap) {
                memcpy(r->seen + r->seen_len, buf, (size_t) n);
                r->seen_len += (size_t) n;
            }
        }
        if (p[1].revents) {
            ssize_t n = recv(sfd, buf, sizeof buf, 0);
            if (n <= 0 || send(cfd, buf, (size_t) n, MSG_NOSIGNAL) != n)
                break;
        }
    }
    net_close(in);
    net_close(out);
    return NULL;
}

static void relay_start(struct relay *r, const char *to_port)
{
    *r = (struct relay) { .to_port = to_port, .seen_cap = 1u << 20 };
    r->seen = malloc(r->seen_cap);
    assert_int_equal(net_tcp_listen("127.0.0.1", "0", &r->lfd, &r->port), 0);
    assert_int_equal(pthread_create(&r->thread, NULL, relay_main, r), 0);
}

/* Whether the client's data crossed the relay in clear. */
static int relay_stop(struct relay *r, const uint8_t *data, size_t len)
{
    pthread_join(r->thread, NULL);
    close(r->lfd);
    int seen = memmem(r->seen, r->seen_len, data, len) != NULL;
    free(r->seen);
    return seen;
}

static void through_relay(struct secure_server *s, struct net_tls *tls, const char *key,
                          const uint8_t *data, size_t len, int expect_clear)
{
    struct relay r;
    struct rfs_client c;
    char port[16];
    relay_start(&r, s->ts.port);
    snprintf(port, sizeof port, "%d", r.port);
    assert_int_equal(connect_as(&c, port, key, tls ? &net_tls_transport : NULL, tls), 0);
    write_and_check(&c, "/wire", data, len);
    rfs_client_close(&c);
    assert_int_equal(relay_stop(&r, data, 4096), expect_clear);
}

/* Large writes over TLS (many records, past the size from which rfsd
 * takes a TCP write straight to the file): the data lands whole at its
 * offset, and a refused write leaves the stream in step (the next requests
 * are understood, the file is unchanged). */
static void tls_large_writes(struct secure_server *s, struct net_tls *tls)
{
    struct rfs_client c;
    struct rfs_stat st;
    size_t len = (1u << 20) + 4097;
    uint8_t *data = malloc(len), *back = malloc(len);
    uint64_t done = 0;
    fill_random(data, len, 12);
    assert_int_equal(connect_as(&c, s->ts.port, ALICE, &net_tls_transport, tls), 0);
    assert_int_equal(rfs_open(&c, 0, "/big", RFS_O_RDWR | RFS_O_CREAT, 0600, &st), RFS_OK);
    assert_int_equal(rfs_pwrite(&c, 0, data, len, 3), RFS_OK);
    assert_int_equal(rfs_open(&c, 1, "/big", RFS_O_RDONLY, 0, &st), RFS_OK);
    assert_int_equal(rfs_pwrite(&c, 1, data, len, 0), RFS_E_BADF);
    assert_int_equal(rfs_pwrite(&c, 9, data, len, 0), RFS_E_BADF);      /* not open */
    assert_int_equal(rfs_fstat(&c, 1, &st), RFS_OK);
    assert_int_equal(st.size, len + 3);
    assert_int_equal(rfs_pread(&c, 1, back, len, 3, &done), RFS_OK);
    assert_int_equal(done, len);
    assert_memory_equal(back, data, len);
    assert_int_equal(rfs_close(&c, 1), RFS_OK);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    rfs_client_close(&c);
    free(back);
    free(data);
}

static void test_tls_on_the_wire(void **state)
{
    (void) state;
    struct secure_server s;
    struct rfs_client c;
    size_t len = 300000;
    uint8_t *data = malloc(len);
    fill_random(data, len, 11);
    make_cert("server");
    make_cert("other");

    /* The control: over plain TCP the relay sees the data. */
    start_keyed(&s, NULL);
    through_relay(&s, NULL, ALICE, data, len, 1);
    stop_keyed(&s);

    struct net_tls *stls = server_tls("server"), *verified = client_tls("server");
    start_keyed(&s, stls);
    through_relay(&s, verified, ALICE, data, len, 0);

    /* Without a CA the key proves the server, over the TLS channel binding. */
    struct net_tls *unverified;
    char err[256];
    assert_int_equal(net_tls_client_new(NULL, 0, &unverified, err, sizeof err), 0);
    through_relay(&s, unverified, CAROL, data, len, 0);
    tls_large_writes(&s, verified);

    struct net_tls *wrong_ca = client_tls("other");
    assert_int_equal(connect_as(&c, s.ts.port, ALICE, &net_tls_transport, wrong_ca),
                     -EKEYREJECTED);
    assert_non_null(strstr(c.why, "certificate"));
    rfs_client_close(&c);
    /* Plain TCP to a TLS server and TLS to a plain server fail, no hang. */
    struct rfs_stat st;
    assert_int_equal(connect_as(&c, s.ts.port, NULL, NULL, NULL), 0);
    assert_true(rfs_open(&c, 0, "/wire", RFS_O_RDONLY, 0, &st) < 0);
    rfs_client_close(&c);
    stop_keyed(&s);
    test_server_start(&s.ts);
    assert_int_equal(connect_as(&c, s.ts.port, NULL, &net_tls_transport, verified), -EPROTO);
    assert_non_null(strstr(c.why, "TLS handshake"));
    rfs_client_close(&c);
    test_server_stop(&s.ts);

    net_tls_free(wrong_ca);
    net_tls_free(unverified);
    net_tls_free(verified);
    net_tls_free(stls);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_files),
        cmocka_unit_test(test_mac_binds_everything),
        cmocka_unit_test(test_keys_on_live_server),
        cmocka_unit_test(test_server_must_prove_key),
        cmocka_unit_test(test_tls_on_the_wire),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
