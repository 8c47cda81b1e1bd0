/*
 * rfsd: the server of the rfs: driver (and, later, of rdma:'s stripes).
 *
 *   rfsd --root DIR [--bind ADDR] [--port N | --port-file FILE]
 *        [--max-connections N] [--max-data MiB]
 *        [--keys FILE] [--tls-cert FILE --tls-key FILE]
 *        [--coll-cache MiB] [--coll-timeout SECONDS]
 *        [--log-level error|warn|info|debug] [--rate-limit MB/s]
 *
 * Serves the files under DIR, one worker thread per connection, at most N
 * connections at once: one more is refused at once (RFS_REFUSAL_OP), so
 * that its client reports "server busy" instead of waiting in the listen
 * backlog for a worker that may never come free. SIGTERM or SIGINT stop it
 * cleanly: no new connections, open connections are shut down, every worker
 * is joined. With --keys, a client must prove it holds one of the keys
 * before anything else is served; with --tls-cert, every connection is
 * TLS (docs/security.md). No MPI here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"
#include "verbs/net_verbs.h"
#include "proto/rfs_proto.h"
#include "server/rfs_coll.h"
#include "server/rfs_log.h"
#include "server/rfs_server.h"

/* A client gets this long to finish its TLS handshake. */
#define TLS_HANDSHAKE_MS 10000

struct worker {
    pthread_t thread;
    struct net_conn *conn;
    int fd;                     /* the socket under a TCP conn, for shutdown at exit;
                                 * -1: an RDMA connection */
    char peer[INET6_ADDRSTRLEN + 8];
    int used;                   /* slot taken (thread running or not yet joined) */
    int done;                   /* thread finished, waiting to be joined */
};

static struct {
    struct rfs_server server;
    struct rfs_keyring keys;
    struct net_tls *tls;        /* NULL: plain TCP */
    struct worker *workers;
    int nworkers;
    pthread_mutex_t lock;
    int wake[2];                /* self-pipe: signals and finished workers */
    atomic_int stop;            /* set by the signal handler, any thread */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = { -1, -1 } };

static void on_signal(int sig)
{
    int saved = errno;
    if (sig != SIGUSR1) {
        atomic_store(&g.stop, 1);
        ssize_t ignored = write(g.wake[1], "s", 1);
        (void) ignored;
    }
    errno = saved;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: rfsd --root DIR [--bind ADDR] [--port N | --port-file FILE] [--rdma]\n"
                 "            [--max-connections N]  (default 256; one more is refused: busy)\n"
                 "            [--max-data MiB]       (data of one request or reply held in\n"
                 "                                    memory per connection: 1..64, default 64)\n"
                 "            [--keys FILE]          (clients must prove a key of FILE:\n"
                 "                                    NAME HEXSECRET [ro] [root=DIR] per line)\n"
                 "            [--tls-cert FILE --tls-key FILE]  (every connection is TLS 1.3)\n"
                 "            [--coll-cache MiB]     (hot collective buffers, default 256; 0: none)\n"
                 "            [--coll-timeout S]     (a collective call waits this long for a\n"
                 "                                    missing participant, default 60)\n"
                 "            [--log-level error|warn|info|debug]\n"
                 "            [--rate-limit MB/s]   (emulate a slow link: 1 MB = 10^6 bytes)\n"
                 "  --rdma: also listen with rdma_cm (verbs transport) on the same address\n"
                 "          and port number as TCP; ADDR must be an RDMA device's address\n");
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    rfs_log(RFS_LOG_INFO, "%s: connected", w->peer);
    int rc = 0;
    /* TLS is for the TCP connections (fd >= 0); RDMA connections stay on
     * their fabric, authenticated by the keys alone. */
    if (g.tls && w->fd >= 0) {
        rc = net_tls_accept(g.tls, w->conn, TLS_HANDSHAKE_MS, &w->conn);
        if (rc < 0) {
            w->conn = NULL;
            rfs_log(RFS_LOG_WARN, "%s: TLS handshake failed: %s", w->peer, strerror(-rc));
        }
    }
    if (rc == 0)
        rc = rfs_serve_connection(&g.server, w->conn, w->peer);
    if (rc < 0)
        rfs_log(RFS_LOG_INFO, "%s: connection ended: %s", w->peer, strerror(-rc));
    else
        rfs_log(RFS_LOG_INFO, "%s: disconnected", w->peer);
    pthread_mutex_lock(&g.lock);
    w->done = 1;
    pthread_mutex_unlock(&g.lock);
    ssize_t ignored = write(g.wake[1], "w", 1);
    (void) ignored;
    return NULL;
}

/* Join finished workers, which frees their slots. */
static void reap_workers(void)
{
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < g.nworkers; i++) {
        struct worker *w = &g.workers[i];
        if (w->used && w->done) {
            pthread_join(w->thread, NULL);
            net_close(w->conn);
            memset(w, 0, sizeof *w);
        }
    }
    pthread_mutex_unlock(&g.lock);
}

static void peer_name(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (getpeername(fd, (struct sockaddr *) &ss, &sl) == 0) {
        if (ss.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *) &ss)->sin6_addr, host, sizeof host);
            port = ntohs(((struct sockaddr_in6 *) &ss)->sin6_port);
        } else {
            inet_ntop(AF_INET, &((struct sockaddr_in *) &ss)->sin_addr, host, sizeof host);
            port = ntohs(((struct sockaddr_in *) &ss)->sin_port);
        }
    }
    snprintf(out, len, "%s:%d", host, port);
}

/*
 * Over the connection limit: one refusal frame instead of any reply, then
 * close. 40 bytes on a fresh socket fit its send buffer, so a non-blocking
 * send does not fall short. What the client sent already is read and
 * dropped first: closing a socket with unread data resets the connection,
 * which discards a frame the kernel has not transmitted yet.
 */
static void refuse(int fd)
{
    uint8_t frame[RFS_HDR_SIZE + RFS_REP_FIXED] = { 0 };
    struct rfs_hdr h = { .magic = RFS_MAGIC, .version = RFS_VERSION, .op = RFS_REFUSAL_OP,
                         .tag = 0, .status = RFS_E_BUSY, .len = RFS_REP_FIXED };
    char peer[INET6_ADDRSTRLEN + 8], drain[4096];
    rfs_hdr_encode(&h, frame);
    peer_name(fd, peer, sizeof peer);
    rfs_log(RFS_LOG_WARN, "%s: refused: %d connections open (--max-connections)", peer,
            g.nworkers);
    if (send(fd, frame, sizeof frame, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t) sizeof frame)
        rfs_log(RFS_LOG_WARN, "%s: refusal not sent: %s", peer, strerror(errno));
    shutdown(fd, SHUT_WR);
    /* Bounded: a client that keeps sending must not hold the accept loop. */
    for (int i = 0; i < 256 && recv(fd, drain, sizeof drain, MSG_DONTWAIT) > 0; i++)
        ;
    close(fd);
}

/* A free worker slot, or NULL when --max-connections are open. */
static struct worker *take_slot(void)
{
    struct worker *w = NULL;
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < g.nworkers && !w; i++)
        if (!g.workers[i].used)
            w = &g.workers[i];
    if (w)
        w->used = 1;
    pthread_mutex_unlock(&g.lock);
    return w;
}

static void start_thread(struct worker *w)
{
    int rc = pthread_create(&w->thread, NULL, worker_main, w);
    if (rc != 0) {
        rfs_log(RFS_LOG_ERROR, "pthread_create: %s", strerror(rc));
        net_close(w->conn);
        pthread_mutex_lock(&g.lock);
        memset(w, 0, sizeof *w);
        pthread_mutex_unlock(&g.lock);
    }
}

static void start_worker(int fd)
{
    struct worker *w = take_slot();
    if (!w) {
        refuse(fd);
        return;
    }

    /* No send timeout: a slow reader must not lose replies; keepalive
     * notices a peer that disappeared. */
    struct net_opts opts = { .timeout_ms = 0 };
    if (net_tcp_wrap(fd, &opts, &w->conn) < 0) {
        rfs_log(RFS_LOG_ERROR, "cannot take a new connection");
        close(fd);
        pthread_mutex_lock(&g.lock);
        w->used = 0;
        pthread_mutex_unlock(&g.lock);
        return;
    }
    w->fd = fd;
    peer_name(fd, w->peer, sizeof w->peer);
    start_thread(w);
}

/*
 * A connection event on the RDMA listener. Over the connection limit the
 * request is rejected (the client sees ECONNREFUSED). No timeout on the
 * connection, as for TCP: a dead peer is found by the transport's bounded
 * retries and the connection manager's disconnect.
 */
static void accept_rdma(struct net_verbs_listener *l)
{
    struct worker *w = take_slot();
    struct net_opts opts = { .timeout_ms = 0 };
    struct net_conn *conn = NULL;
    char peer[sizeof w->peer] = "";
    int rc = net_verbs_accept(l, &opts, w != NULL, &conn, peer, sizeof peer);
    if (rc < 0)
        rfs_log(RFS_LOG_WARN, "rdma accept: %s", strerror(-rc));
    if (rc != 1) {
        if (w) {
            pthread_mutex_lock(&g.lock);
            w->used = 0;
            pthread_mutex_unlock(&g.lock);
        }
        if (!w && peer[0])
            rfs_log(RFS_LOG_WARN, "%s: refused: %d connections open (--max-connections)", peer,
                    g.nworkers);
        return;
    }
    w->conn = conn;
    w->fd = -1;
    snprintf(w->peer, sizeof w->peer, "%s", peer);
    start_thread(w);
}

static void accept_loop(int lfd, struct net_verbs_listener *rl)
{
    while (!atomic_load(&g.stop)) {
        struct pollfd p[3] = { { .fd = g.wake[0], .events = POLLIN },
                               { .fd = lfd, .events = POLLIN },
                               { .fd = rl ? net_verbs_listener_fd(rl) : -1, .events = POLLIN } };
        /* The listening socket is watched with every worker busy too: a
         * connection over the limit is refused, not left in the backlog. */
        int n = poll(p, 3, -1);
        if (n < 0 && errno != EINTR) {
            rfs_log(RFS_LOG_ERROR, "poll: %s", strerror(errno));
            break;
        }
        if (n > 0 && p[0].revents) {
            char drain[64];
            ssize_t ignored = read(g.wake[0], drain, sizeof drain);
            (void) ignored;
        }
        /* Every worker that ends writes to the wake pipe, so its slot is
         * free again before the next accept. */
        reap_workers();
        if (n > 0 && p[1].revents & POLLIN) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                start_worker(fd);
            else if (errno != EINTR && errno != ECONNABORTED)
                rfs_log(RFS_LOG_WARN, "accept: %s", strerror(errno));
        }
        if (n > 0 && p[2].revents & POLLIN)
            accept_rdma(rl);
    }
}

/* Shut every connection down, wake workers blocked in a lock wait, join. */
static void stop_workers(void)
{
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < g.nworkers; i++) {
        struct worker *w = &g.workers[i];
        if (w->used && !w->done) {
            if (w->fd >= 0)
                shutdown(w->fd, SHUT_RDWR);
            else
                net_shutdown(w->conn);
            pthread_kill(w->thread, SIGUSR1);
        }
    }
    pthread_mutex_unlock(&g.lock);
    for (int i = 0; i < g.nworkers; i++) {
        struct worker *w = &g.workers[i];
        if (w->used) {
            pthread_join(w->thread, NULL);
            net_close(w->conn);
        }
    }
}

static int write_port_file(const char *path, int port)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int) getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -errno;
    fprintf(f, "%d\n", port);
    if (fclose(f) != 0 || rename(tmp, path) < 0) {
        int rc = -errno;
        unlink(tmp);
        return rc;
    }
    return 0;
}

static int install_signals(void)
{
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: SIGUSR1 must interrupt a worker's lock wait. */
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0 ||
        sigaction(SIGUSR1, &sa, NULL) < 0)
        return -errno;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static void log_coll_stats(void)
{
    struct rfs_coll_stats s;
    rfs_coll_table_stats(g.server.coll, &s);
    if (s.calls || s.timeouts)
        rfs_log(RFS_LOG_INFO, "collective calls: %llu (%llu pieces in %llu accesses, %llu bytes), "
                "hot buffers: %llu hits, %llu misses, %llu timeouts",
                (unsigned long long) s.calls, (unsigned long long) s.pieces,
                (unsigned long long) s.accesses, (unsigned long long) s.access_bytes,
                (unsigned long long) s.cache_hits, (unsigned long long) s.cache_misses,
                (unsigned long long) s.timeouts);
}

static int setup_security(const char *keys, const char *tls_cert, const char *tls_key)
{
    char err[512];
    int rc = 0;
    g.server.keys = keys ? &g.keys : NULL;
    if (keys && ((rc = rfs_keyring_load(keys, &g.keys, err, sizeof err)) < 0 ||
                 (rc = rfs_server_check_keys(&g.server, err, sizeof err)) < 0))
        rfs_log(RFS_LOG_ERROR, "%s", err);
    else if (keys)
        rfs_log(RFS_LOG_INFO, "clients must authenticate: %zu keys from %s", g.keys.count, keys);
    if (rc == 0 && tls_cert && (rc = net_tls_server_new(tls_cert, tls_key, &g.tls, err,
                                                        sizeof err)) < 0)
        rfs_log(RFS_LOG_ERROR, "TLS: %s", err);
    return rc;
}

int main(int argc, char **argv)
{
    const char *root = NULL, *bind_addr = "127.0.0.1", *port = "0", *port_file = NULL;
    const char *keys = NULL, *tls_cert = NULL, *tls_key = NULL;
    int max_conns = 256;
    long max_data_mib = RFS_MAX_DATA >> 20;
    double rate_mb = 0;
    int rdma = 0;
    static const struct option opts[] = {
        { "root", required_argument, NULL, 'r' }, { "bind", required_argument, NULL, 'b' },
        { "port", required_argument, NULL, 'p' }, { "port-file", required_argument, NULL, 'f' },
        { "max-connections", required_argument, NULL, 'c' },
        { "max-data", required_argument, NULL, 'd' },
        { "rate-limit", required_argument, NULL, 'R' },
        { "keys", required_argument, NULL, 'k' },
        { "coll-cache", required_argument, NULL, 'H' },
        { "coll-timeout", required_argument, NULL, 'T' },
        { "tls-cert", required_argument, NULL, 'C' }, { "tls-key", required_argument, NULL, 'K' },
        { "log-level", required_argument, NULL, 'l' }, { "help", no_argument, NULL, 'h' },
        { "rdma", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    int c, level;
    char *end;
    long coll_cache_mib = 256, coll_timeout_s = 60;
    while ((c = getopt_long(argc, argv, "r:b:p:f:c:d:l:R:k:C:K:H:T:Vh", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            coll_cache_mib = strtol(optarg, &end, 10);
            if (*end || coll_cache_mib < 0 || coll_cache_mib > (1L << 20)) {
                fprintf(stderr, "rfsd: --coll-cache must be 0..1048576 (MiB)\n");
                return 2;
            }
            break;
        case 'T':
            coll_timeout_s = strtol(optarg, &end, 10);
            if (*end || coll_timeout_s < 1 || coll_timeout_s > 86400) {
                fprintf(stderr, "rfsd: --coll-timeout must be 1..86400 (seconds)\n");
                return 2;
            }
            break;
        case 'k': keys = optarg; break;
        case 'C': tls_cert = optarg; break;
        case 'K': tls_key = optarg; break;
        case 'r': root = optarg; break;
        case 'b': bind_addr = optarg; break;
        case 'p': port = optarg; break;
        case 'f': port_file = optarg; break;
        case 'c':
            max_conns = (int) strtol(optarg, &end, 10);
            if (*end || max_conns < 1 || max_conns > 4096) {
                fprintf(stderr, "rfsd: --max-connections must be 1..4096\n");
                return 2;
            }
            break;
        case 'd':
            /* At least one client piece (RFS_CLIENT_PIECE, 1 MiB), at most
             * the protocol's limit. */
            max_data_mib = strtol(optarg, &end, 10);
            if (*end || max_data_mib < 1 || max_data_mib > (long) (RFS_MAX_DATA >> 20)) {
                fprintf(stderr, "rfsd: --max-data must be 1..%u (MiB)\n", RFS_MAX_DATA >> 20);
                return 2;
            }
            break;
        case 'R':
            rate_mb = strtod(optarg, &end);
            if (*end || !(rate_mb > 0 && rate_mb < 1e9)) {
                fprintf(stderr, "rfsd: --rate-limit must be a positive number of MB/s\n");
                return 2;
            }
            break;
        case 'l':
            if ((level = rfs_log_parse_level(optarg)) < 0) {
                fprintf(stderr, "rfsd: unknown log level %s\n", optarg);
                return 2;
            }
            rfs_log_set_level((enum rfs_log_level) level);
            break;
        case 'V': rdma = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!root || optind != argc || !tls_cert != !tls_key) {
        usage(stderr);
        return 2;
    }

    int rc = rfs_server_init(&g.server, root);
    if (rc < 0) {
        rfs_log(RFS_LOG_ERROR, "export root %s: %s", root, strerror(-rc));
        return 1;
    }
    static struct rfs_rate rate;
    if (rate_mb > 0) {
        rfs_rate_init(&rate, rate_mb * 1e6);
        g.server.rate = &rate;
    }
    g.server.max_data = (uint64_t) max_data_mib << 20;
    g.server.coll_timeout_ms = (int) coll_timeout_s * 1000;
    if (rfs_coll_table_new(&g.server.coll, (uint64_t) coll_cache_mib << 20) < 0) {
        rfs_log(RFS_LOG_ERROR, "out of memory");
        return 1;
    }
    if (setup_security(keys, tls_cert, tls_key) < 0)
        return 1;
    int lfd, bound;
    if (pipe2(g.wake, O_CLOEXEC | O_NONBLOCK) < 0 || install_signals() < 0) {
        rfs_log(RFS_LOG_ERROR, "setup: %s", strerror(errno));
        return 1;
    }
    if ((rc = net_tcp_listen(bind_addr, port, &lfd, &bound)) < 0) {
        rfs_log(RFS_LOG_ERROR, "listen on %s:%s: %s", bind_addr, port, strerror(-rc));
        return 1;
    }
    struct net_verbs_listener *rl = NULL;
    if (rdma && (rc = net_verbs_listen(bind_addr, bound, &rl)) < 0) {
        rfs_log(RFS_LOG_ERROR, "rdma listen on %s:%d: %s", bind_addr, bound, strerror(-rc));
        return 1;
    }
    g.nworkers = max_conns;
    g.workers = calloc((size_t) max_conns, sizeof *g.workers);
    if (!g.workers) {
        rfs_log(RFS_LOG_ERROR, "out of memory");
        return 1;
    }
    if (port_file && (rc = write_port_file(port_file, bound)) < 0) {
        rfs_log(RFS_LOG_ERROR, "port file %s: %s", port_file, strerror(-rc));
        return 1;
    }
    rfs_log(RFS_LOG_INFO, "serving %s on %s port %d%s (at most %d connections, %ld MiB each)",
            root, bind_addr, bound, rl ? " (tcp and rdma)" : "", max_conns, max_data_mib);

    accept_loop(lfd, rl);

    rfs_log(RFS_LOG_INFO, "shutting down");
    close(lfd);
    stop_workers();
    if (rl)
        net_verbs_listener_close(rl);
    free(g.workers);
    net_tls_free(g.tls);
    log_coll_stats();
    rfs_coll_table_free(g.server.coll);
    rfs_keyring_free(&g.keys);
    rfs_server_fini(&g.server);
    rfs_log(RFS_LOG_INFO, "stopped");
    return 0;
}
