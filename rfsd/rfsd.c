/*
 * rfsd: the server of the rfs: driver (and, later, of rdma:'s stripes).
 *
 *   rfsd --root DIR [--bind ADDR] [--port N | --port-file FILE]
 *        [--max-connections N] [--max-per-address N] [--threads N] [--max-threads N]
 *        [--auth-timeout S] [--idle-timeout S] [--max-data MiB]
 *        [--keys FILE] [--tls-cert FILE --tls-key FILE]
 *        [--coll-cache MiB] [--coll-timeout SECONDS]
 *        [--log-level error|warn|info|debug] [--rate-limit MB/s]
 *
 * Serves the files under DIR from an event loop and a pool of worker
 * threads (adio/server/rfs_loop.h): an idle connection costs a descriptor
 * and a few KiB, not a thread. At most N connections at once, by default
 * as many as the descriptor limit (raised to its hard limit) allows: one
 * more is refused at once (RFS_REFUSAL_OP), so that its client reports
 * "server busy" instead of waiting in the listen backlog. SIGTERM or
 * SIGINT stop it cleanly: no new connections, open connections are shut
 * down, every worker is joined. With --keys, a client must prove it holds
 * one of the keys before anything else is served, within --auth-timeout;
 * with --tls-cert, every connection is TLS (docs/security.md). No MPI here.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"
#include "verbs/net_verbs.h"
#include "proto/rfs_proto.h"
#include "server/rfs_coll.h"
#include "server/rfs_log.h"
#include "server/rfs_loop.h"
#include "server/rfs_server.h"

/* Defaults of the connection limits (rfs_loop.h). */
#define DEFAULT_THREADS 16
#define DEFAULT_MAX_THREADS 1024
#define DEFAULT_AUTH_TIMEOUT_S 5
/* Descriptors kept for the files clients open, the listeners and logs when
 * the connection limit follows from RLIMIT_NOFILE. */
#define FD_RESERVE 1024

static struct {
    struct rfs_server server;
    struct rfs_keyring keys;
    struct net_tls *tls;        /* NULL: plain TCP */
    struct rfs_loop *loop;
} g;

static void on_signal(int sig)
{
    int saved = errno;
    if (sig != SIGUSR1 && g.loop)
        rfs_loop_stop(g.loop);
    errno = saved;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: rfsd --root DIR [--bind ADDR] [--port N | --port-file FILE] [--rdma]\n"
                 "            [--max-connections N]  (default: the descriptors rfsd can open,\n"
                 "                                    less %d; one more is refused: busy)\n"
                 "            [--max-per-address N]  (TCP connections from one client address;\n"
                 "                                    default 0: any)\n"
                 "            [--threads N]          (workers kept, default %d)\n"
                 "            [--max-threads N]      (workers when requests wait, default %d)\n"
                 "            [--auth-timeout S]     (with --keys or TLS: a connection not\n"
                 "                                    authenticated by then is closed, default %d)\n"
                 "            [--idle-timeout S]     (a connection idle this long is closed;\n"
                 "                                    default 0: never)\n"
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
                 "          and port number as TCP; ADDR must be an RDMA device's address\n",
            FD_RESERVE, DEFAULT_THREADS, DEFAULT_MAX_THREADS, DEFAULT_AUTH_TIMEOUT_S);
}

/* Raise the descriptor limit to its hard limit: the default connection
 * limit follows from what rfsd got. */
static long raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT_MAX ? INT_MAX : (long) rl.rlim_cur;
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

static void log_stats(void)
{
    struct rfs_loop_stats ls;
    rfs_loop_get_stats(g.loop, &ls);
    rfs_log(RFS_LOG_INFO, "connections: %llu taken, %llu refused, %llu closed unauthenticated, "
            "%llu closed idle; workers: at most %d", (unsigned long long) ls.accepted,
            (unsigned long long) ls.refused, (unsigned long long) ls.auth_closed,
            (unsigned long long) ls.idle_closed, ls.threads_peak);
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

/* A whole number of lo..hi for flag `name` (in `unit`, "" for a count),
 * or -1 with a message. */
static int parse_count(const char *arg, const char *name, long lo, long hi, const char *unit,
                       long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < lo || v > hi) {
        fprintf(stderr, "rfsd: %s must be %ld..%ld%s%s%s\n", name, lo, hi, *unit ? " (" : "",
                unit, *unit ? ")" : "");
        return -1;
    }
    *out = v;
    return 0;
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
    long max_conns = 0, max_per_addr = 0, threads = DEFAULT_THREADS, max_threads = DEFAULT_MAX_THREADS;
    long auth_timeout_s = DEFAULT_AUTH_TIMEOUT_S, idle_timeout_s = 0;
    int threads_given = 0;
    long max_data_mib = RFS_MAX_DATA >> 20;
    double rate_mb = 0;
    int rdma = 0;
    static const struct option opts[] = {
        { "root", required_argument, NULL, 'r' }, { "bind", required_argument, NULL, 'b' },
        { "port", required_argument, NULL, 'p' }, { "port-file", required_argument, NULL, 'f' },
        { "max-connections", required_argument, NULL, 'c' },
        { "max-per-address", required_argument, NULL, 'P' },
        { "max-data", required_argument, NULL, 'd' },
        { "rate-limit", required_argument, NULL, 'R' },
        { "keys", required_argument, NULL, 'k' },
        { "coll-cache", required_argument, NULL, 'H' },
        { "coll-timeout", required_argument, NULL, 'T' },
        { "tls-cert", required_argument, NULL, 'C' }, { "tls-key", required_argument, NULL, 'K' },
        { "log-level", required_argument, NULL, 'l' }, { "help", no_argument, NULL, 'h' },
        { "rdma", no_argument, NULL, 'V' },
        { "threads", required_argument, NULL, 't' },
        { "max-threads", required_argument, NULL, 'm' },
        { "auth-timeout", required_argument, NULL, 'a' },
        { "idle-timeout", required_argument, NULL, 'i' },
        { NULL, 0, NULL, 0 }
    };
    int c, level;
    char *end;
    long coll_cache_mib = 256, coll_timeout_s = 60;
    while ((c = getopt_long(argc, argv, "r:b:p:f:c:P:d:l:R:k:C:K:H:T:t:m:a:i:Vh", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            if (parse_count(optarg, "--coll-cache", 0, 1L << 20, "MiB", &coll_cache_mib) < 0)
                return 2;
            break;
        case 'T':
            if (parse_count(optarg, "--coll-timeout", 1, 86400, "seconds", &coll_timeout_s) < 0)
                return 2;
            break;
        case 'k': keys = optarg; break;
        case 'C': tls_cert = optarg; break;
        case 'K': tls_key = optarg; break;
        case 'r': root = optarg; break;
        case 'b': bind_addr = optarg; break;
        case 'p': port = optarg; break;
        case 'f': port_file = optarg; break;
        case 'c':
            if (parse_count(optarg, "--max-connections", 1, INT_MAX, "", &max_conns) < 0)
                return 2;
            break;
        case 'P':
            if (parse_count(optarg, "--max-per-address", 0, INT_MAX, "", &max_per_addr) < 0)
                return 2;
            break;
        case 't':
            if (parse_count(optarg, "--threads", 1, 4096, "", &threads) < 0)
                return 2;
            threads_given = 1;
            break;
        case 'm':
            if (parse_count(optarg, "--max-threads", 1, 65536, "", &max_threads) < 0)
                return 2;
            break;
        case 'a':
            if (parse_count(optarg, "--auth-timeout", 1, 3600, "seconds",
                            &auth_timeout_s) < 0)
                return 2;
            break;
        case 'i':
            if (parse_count(optarg, "--idle-timeout", 0, 86400 * 24, "seconds",
                            &idle_timeout_s) < 0)
                return 2;
            break;
        case 'd':
            /* At least one client piece (RFS_CLIENT_PIECE, 1 MiB), at most
             * the protocol's limit. */
            if (parse_count(optarg, "--max-data", 1, RFS_MAX_DATA >> 20, "MiB",
                            &max_data_mib) < 0)
                return 2;
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
    if (!threads_given && threads > max_threads)
        threads = max_threads;
    if (max_threads < threads) {
        fprintf(stderr, "rfsd: --max-threads must be at least --threads (%ld)\n", threads);
        return 2;
    }
    long nofile = raise_nofile();
    if (!max_conns)
        max_conns = nofile > 2 * FD_RESERVE ? nofile - FD_RESERVE : nofile / 2;
    else if (max_conns > nofile - 64)
        rfs_log(RFS_LOG_WARN, "--max-connections %ld: only %ld descriptors to be had", max_conns,
                nofile);

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
    if ((rc = net_tcp_listen(bind_addr, port, &lfd, &bound)) < 0) {
        rfs_log(RFS_LOG_ERROR, "listen on %s:%s: %s", bind_addr, port, strerror(-rc));
        return 1;
    }
    struct net_verbs_listener *rl = NULL;
    if (rdma && (rc = net_verbs_listen(bind_addr, bound, &rl)) < 0) {
        rfs_log(RFS_LOG_ERROR, "rdma listen on %s:%d: %s", bind_addr, bound, strerror(-rc));
        return 1;
    }
    struct rfs_loop_opts lo = { .max_conns = (int) max_conns,
                                .max_per_addr = (int) max_per_addr, .threads = (int) threads,
                                .max_threads = (int) max_threads,
                                .auth_timeout_ms = (int) auth_timeout_s * 1000,
                                .idle_timeout_ms = (int) idle_timeout_s * 1000, .tls = g.tls };
    if ((rc = rfs_loop_new(&g.server, &lo, lfd, rl, &g.loop)) < 0) {
        rfs_log(RFS_LOG_ERROR, "event loop: %s", strerror(-rc));
        return 1;
    }
    if (install_signals() < 0) {
        rfs_log(RFS_LOG_ERROR, "signals: %s", strerror(errno));
        return 1;
    }
    if (port_file && (rc = write_port_file(port_file, bound)) < 0) {
        rfs_log(RFS_LOG_ERROR, "port file %s: %s", port_file, strerror(-rc));
        return 1;
    }
    rfs_log(RFS_LOG_INFO, "serving %s on %s port %d%s (at most %ld connections with %ld "
            "descriptors, %ld-%ld workers, %ld MiB each)", root, bind_addr, bound,
            rl ? " (tcp and rdma)" : "", max_conns, nofile, threads, max_threads, max_data_mib);

    rc = rfs_loop_run(g.loop);
    if (rc < 0)
        rfs_log(RFS_LOG_ERROR, "cannot start workers: %s", strerror(-rc));
    log_stats();
    /* No signal handler may reach the loop once it is freed. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    rfs_loop_free(g.loop);
    close(lfd);
    if (rl)
        net_verbs_listener_close(rl);
    net_tls_free(g.tls);
    rfs_coll_table_free(g.server.coll);
    rfs_keyring_free(&g.keys);
    rfs_server_fini(&g.server);
    rfs_log(RFS_LOG_INFO, "stopped");
    return rc < 0 ? 1 : 0;
}
