/*
 * rfsd's connection handling under crowds (no MPI):
 *
 *   rfsd_scale flood PORT KEYFILE N AUTH_S
 *       N connections that send nothing must not stop a client with a key:
 *       it writes and reads back 1 MiB at once; then every silent
 *       connection must be closed by the server within AUTH_S + 3 s.
 *   rfsd_scale full PORT KEYFILE LIMIT AUTH_S
 *       LIMIT silent connections fill a server started with
 *       --max-connections LIMIT: a client with a key is refused (busy), and
 *       served once the server has closed them (AUTH_S + 3 s at most).
 *   rfsd_scale slowhello PORT AUTH_S
 *       Against a TLS server: a client that starts a handshake (a record
 *       header announcing 16 KiB) and sends one more byte every 0.5 s must
 *       be closed within AUTH_S + 2 s: the handshake is bounded in all,
 *       not per receive.
 *   rfsd_scale peraddr PORT LIMIT
 *       Against a server with --max-per-address LIMIT: of 4 x LIMIT
 *       connections from 127.0.0.2, all but LIMIT are refused at once; a
 *       client from 127.0.0.1 is served meanwhile; once the held ones
 *       close, 127.0.0.2 gets LIMIT connections again.
 *   rfsd_scale lockwait PORT
 *       Against a server with --threads 1: one client holds a write lock,
 *       a second waits for it (its request occupies a worker), and a third
 *       must still open, write and read back; the lock's release then
 *       lets the waiter through.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/rfs_client.h"

#define BLOCK (1u << 20)

static const char *port;

#define FAIL(...) do { fprintf(stderr, "rfsd_scale: " __VA_ARGS__); fputc('\n', stderr); \
                       exit(1); } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A connection to the server from the loopback address `from`. */
static int silent_connection_from(const char *from)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) atoi(port)) };
    struct sockaddr_in me = { .sin_family = AF_INET };
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    inet_pton(AF_INET, from, &me.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *) &me, sizeof me) < 0 ||
        connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
        FAIL("silent connection from %s: %s", from, strerror(errno));
    return fd;
}

static int silent_connection(void)
{
    return silent_connection_from("127.0.0.1");
}

/* Whether the server closed fd (end of stream, a reset, or its refusal
 * frame followed by the end), waiting at most `secs`. */
static int closed_by_server(int fd, double secs)
{
    char b[64];
    double end = now() + secs;
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int left = (int) ((end - now()) * 1000);
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return 0;
        ssize_t n = recv(fd, b, sizeof b, 0);
        if (n <= 0)
            return 1;
    }
}

/* A client with the key opens, writes and reads back BLOCK bytes: 0, or
 * the failing call's status (RFS_E_BUSY when refused). */
static int keyed_round(const struct rfs_key *key, const char *path)
{
    struct rfs_client c;
    struct rfs_connect_opts o = { .net.timeout_ms = 10000, .key = key };
    int rc = rfs_client_connect_with(&c, "127.0.0.1", port, &o);
    if (rc != 0)
        return rc;
    unsigned char *out = malloc(BLOCK), *in = malloc(BLOCK);
    if (!out || !in)
        FAIL("out of memory");
    for (uint32_t i = 0; i < BLOCK; i++)
        out[i] = (unsigned char) (i * 2654435761u >> 13);
    uint64_t got = 0;
    if ((rc = rfs_open(&c, 0, path, RFS_O_RDWR | RFS_O_CREAT, 0644, NULL)) == 0 &&
        (rc = rfs_pwrite(&c, 0, out, BLOCK, 0)) == 0 &&
        (rc = rfs_pread(&c, 0, in, BLOCK, 0, &got)) == 0 && (rc = rfs_close(&c, 0)) == 0 &&
        (got != BLOCK || memcmp(in, out, BLOCK) != 0))
        FAIL("%s: the bytes read back differ from those written", path);
    rfs_client_close(&c);
    free(out);
    free(in);
    return rc;
}

static void load_key(const char *path, struct rfs_key *key)
{
    char err[256];
    if (rfs_key_load(path, key, err, sizeof err) < 0)
        FAIL("key: %s", err);
}

static void raise_nofile(int need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        FAIL("getrlimit: %s", strerror(errno));
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < (rlim_t) need + 64)
        FAIL("need %d descriptors, have %llu", need + 64, (unsigned long long) rl.rlim_cur);
}

static int *silent_crowd(int n)
{
    raise_nofile(n);
    int *fds = malloc((size_t) n * sizeof *fds);
    if (!fds)
        FAIL("out of memory");
    for (int i = 0; i < n; i++)
        fds[i] = silent_connection();
    return fds;
}

/* Every one of the crowd is closed by the server within secs. */
static void crowd_closed(int *fds, int n, double secs)
{
    double end = now() + secs;
    for (int i = 0; i < n; i++) {
        if (!closed_by_server(fds[i], end - now()))
            FAIL("silent connection %d of %d still open after %.0f s", i, n, secs);
        close(fds[i]);
    }
    free(fds);
}

static void flood(const char *keyfile, int n, int auth_s)
{
    struct rfs_key key;
    load_key(keyfile, &key);
    int *fds = silent_crowd(n);
    double t0 = now();
    int rc = keyed_round(&key, "/flood.dat");
    if (rc != 0)
        FAIL("with %d silent connections open, the keyed client failed: %d", n, rc);
    printf("flood: %d silent connections; the keyed client served in %.3f s\n", n, now() - t0);
    crowd_closed(fds, n, auth_s + 3);
    printf("flood: all %d closed by the server within %d s\n", n, auth_s + 3);
}

static void full(const char *keyfile, int limit, int auth_s)
{
    struct rfs_key key;
    load_key(keyfile, &key);
    int *fds = silent_crowd(limit);
    /* The last silent connection is taken once the server has answered
     * nothing: give its accept a moment. */
    usleep(200000);
    int rc = keyed_round(&key, "/full.dat");
    if (rc != RFS_E_BUSY)
        FAIL("with the limit filled by silent connections, expected busy, got %d", rc);
    double t0 = now();
    while ((rc = keyed_round(&key, "/full.dat")) == RFS_E_BUSY && now() - t0 < auth_s + 3)
        usleep(100000);
    if (rc != 0)
        FAIL("the keyed client was not served within %d s: %d", auth_s + 3, rc);
    printf("full: refused while %d silent connections held the limit, served %.1f s later\n",
           limit, now() - t0);
    crowd_closed(fds, limit, 1);
}

/* How many of fds[0..n) the server has not closed within secs. */
static int still_open(const int *fds, int n, double secs)
{
    double end = now() + secs;
    int open = 0;
    for (int i = 0; i < n; i++)
        open += !closed_by_server(fds[i], i == 0 ? end - now() : 0.01);
    return open;
}

static void peraddr(int limit)
{
    int n = 4 * limit, fds[4096];
    if (n > 4096)
        FAIL("LIMIT at most 1024");
    for (int i = 0; i < n; i++)
        fds[i] = silent_connection_from("127.0.0.2");
    int open = still_open(fds, n, 1);
    if (open != limit)
        FAIL("%d of %d connections from one address open, expected %d", open, n, limit);
    int rc = keyed_round(NULL, "/peraddr.dat");
    if (rc != 0)
        FAIL("a client from another address was not served: %d", rc);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    usleep(300000);             /* the server has seen the closes */
    for (int i = 0; i < limit; i++)
        fds[i] = silent_connection_from("127.0.0.2");
    if ((open = still_open(fds, limit, 1)) != limit)
        FAIL("after the closes, %d of %d connections from that address open", open, limit);
    for (int i = 0; i < limit; i++)
        close(fds[i]);
    printf("peraddr: %d of %d from 127.0.0.2 taken, 127.0.0.1 served, and %d again\n", limit,
           n, limit);
}

static void slowhello(int auth_s)
{
    static const unsigned char record[] = { 0x16, 0x03, 0x01, 0x40, 0x00 };
    int fd = silent_connection();
    double t0 = now();
    if (send(fd, record, sizeof record, MSG_NOSIGNAL) != (ssize_t) sizeof record)
        FAIL("send: %s", strerror(errno));
    while (!closed_by_server(fd, 0.5)) {
        if (now() - t0 > auth_s + 2)
            FAIL("a handshake paced at a byte per 0.5 s still open after %.1f s", now() - t0);
        if (send(fd, "\x01", 1, MSG_NOSIGNAL) != 1)
            break;              /* closed meanwhile */
    }
    printf("slowhello: closed after %.1f s\n", now() - t0);
    close(fd);
}

struct locker {
    uint32_t kind;
    int wait, rc;
    struct rfs_client c;
};

static void *lock_call(void *arg)
{
    struct locker *k = arg;
    k->rc = rfs_lock(&k->c, 0, k->kind, 0, 0, k->wait);
    return NULL;
}

static void lock_client(struct locker *k)
{
    int rc = rfs_client_connect(&k->c, NULL, "127.0.0.1", port, 30000);
    if (rc == 0)
        rc = rfs_open(&k->c, 0, "/lock.dat", RFS_O_RDWR | RFS_O_CREAT, 0644, NULL);
    if (rc != 0)
        FAIL("lock client: %d", rc);
}

static void lockwait(void)
{
    struct locker holder = { .kind = RFS_LOCK_WRITE }, waiter = { .kind = RFS_LOCK_WRITE,
                                                                  .wait = 1 };
    lock_client(&holder);
    lock_client(&waiter);
    lock_call(&holder);
    if (holder.rc != 0)
        FAIL("the first lock failed: %d", holder.rc);
    pthread_t t;
    if (pthread_create(&t, NULL, lock_call, &waiter) != 0)
        FAIL("pthread_create");
    usleep(300000);             /* the waiter's request is in the server by now */
    double t0 = now();
    int rc = keyed_round(NULL, "/third.dat");
    if (rc != 0)
        FAIL("a third client was not served while a lock request waited: %d", rc);
    printf("lockwait: a third client served in %.3f s while a lock request waited\n",
           now() - t0);
    holder.kind = RFS_LOCK_UNLOCK;
    lock_call(&holder);
    pthread_join(t, NULL);
    if (holder.rc != 0 || waiter.rc != 0)
        FAIL("unlock %d, the waiter's lock %d", holder.rc, waiter.rc);
    rfs_client_close(&holder.c);
    rfs_client_close(&waiter.c);
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "flood")) {
        port = argv[2];
        flood(argv[3], atoi(argv[4]), atoi(argv[5]));
    } else if (argc == 6 && !strcmp(argv[1], "full")) {
        port = argv[2];
        full(argv[3], atoi(argv[4]), atoi(argv[5]));
    } else if (argc == 4 && !strcmp(argv[1], "slowhello")) {
        port = argv[2];
        slowhello(atoi(argv[3]));
    } else if (argc == 4 && !strcmp(argv[1], "peraddr")) {
        port = argv[2];
        peraddr(atoi(argv[3]));
    } else if (argc == 3 && !strcmp(argv[1], "lockwait")) {
        port = argv[2];
        lockwait();
    } else {
        fprintf(stderr, "usage: rfsd_scale flood|full PORT KEYFILE N AUTH_S | slowhello PORT "
                        "AUTH_S | peraddr PORT LIMIT | lockwait PORT\n");
        return 2;
    }
    printf("No Errors\n");
    return 0;
}
