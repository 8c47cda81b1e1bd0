/*
 * Load on one rfsd: many idle connections beside a few busy ones, to see
 * what an idle connection costs the server (memory, threads) and what the
 * busy ones get (throughput, latency of small reads) while the idle ones
 * are held open.
 *
 *   scale_load HOST PORT --conns C --active A [--seconds S] [--size BYTES]
 *              [--dir PATH] [--rfsd-pid PID] [--max-idle-threads N]
 *              [--key-file FILE] [--tls]
 *
 * Phase 1 opens C - A idle connections with the client library (TLS, and
 * the first key of FILE, as the drivers use them). Each makes one request,
 * an FSTAT of a handle it never opened (answered BADF), so that the server
 * has surely taken it (or refused it) before its memory is read; then the
 * connection stays silent until the end, when the same request shows that
 * the server still serves it.
 *
 * Phase 2 opens A active connections and drives them all from one epoll
 * loop in this thread for S seconds (default 10), one request in flight on
 * each. A connection repeats a cycle on handle 0 of DIR/load-<i> (DIR: the
 * export root unless --dir): OPEN (read-write, create), PWRITE of SIZE
 * bytes (default 65536) at 0, PREAD of them, PREAD of 4 KiB at a random
 * aligned offset (when SIZE >= 4096; timed from its send to its last reply
 * byte), CLOSE. Every byte read is compared with what was written. Active
 * connections speak the protocol themselves over non-blocking sockets, so
 * they are plain TCP: --tls needs --active 0; with --key-file the library
 * makes the connection and its key exchange, and the loop takes the socket.
 *
 * With --rfsd-pid, the server's VmRSS and thread count are read from /proc
 * before phase 1, after it, and at the end of phase 2; with
 * --max-idle-threads, more server threads than N after phase 1 (idle
 * connections that cost a thread each) is a failure. The output is a
 * summary, then one line "RESULT key=value ...": conns, active, seconds
 * (measured), cycles, ops (requests), ops_per_s, mb_per_s (data written
 * and read, 10^6 bytes), p50_us and p99_us (the 4 KiB reads), errors,
 * refused, rss_{base,idle,active}_kib, threads_{base,idle,active} and
 * idle_kib_per_conn; '-' where not known. Any failure or refusal
 * (RFS_E_BUSY) is counted and told (the first few of them); the exit
 * status is 0 only with none and every active connection through at least
 * one cycle.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "proto/rfs_auth.h"
#include "proto/rfs_client.h"
#include "proto/rfs_proto.h"

#define FD_RESERVE      64      /* descriptors besides the connections: stdio, epoll, /proc */
#define CONNECT_MS      10000   /* the library's connect and reply timeout */
#define SMALL_READ      4096    /* the timed read */
#define DRAIN_SECONDS   10      /* requests in flight at the end get this long to finish */
#define MAX_TOLD        20      /* failures printed one by one; the rest are only counted */
#define GAMMA           0x9e3779b97f4a7c15ull   /* splitmix64's increment (golden ratio) */

struct options {
    const char *host, *port, *dir, *key_file;
    long conns, active, pid;    /* pid 0: no --rfsd-pid */
    long max_idle_threads;      /* 0: no bound */
    double seconds;
    uint64_t size;
    int tls;
};

/* The server's /proc/PID/status at one moment; known 0: not read. */
struct usage {
    int known;
    long rss_kib, threads;
    char name[32];              /* shown, so that a wrong --rfsd-pid shows */
};

static struct {
    uint64_t errors, refused, told;
} tally;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "scale_load: %s\n", what);
    exit(1);
}

/* Count a failure (a refusal apart) and print it while few were printed. */
__attribute__((format(printf, 2, 3)))
static void note_failure(int refused, const char *fmt, ...)
{
    if (refused)
        tally.refused++;
    else
        tally.errors++;
    if (tally.told++ >= MAX_TOLD)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("scale_load: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* What a client library result means: a status, or a negative errno. */
static const char *result_str(int rc)
{
    return rc < 0 ? strerror(-rc) : rfs_status_str(rc);
}

/* ---- arguments and limits ---- */

static void usage_exit(void)
{
    fprintf(stderr, "usage: scale_load HOST PORT --conns C --active A [--seconds S] "
                    "[--size BYTES]\n"
                    "                  [--dir PATH] [--rfsd-pid PID] [--key-file FILE] "
                    "[--tls]\n");
    exit(2);
}

static long parse_long(const char *text, long min, long max, const char *name)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) {
        fprintf(stderr, "scale_load: %s must be %ld..%ld\n", name, min, max);
        exit(2);
    }
    return v;
}

/* DIR without its trailing slashes: "DIR/load-<i>" is then one path. */
static const char *trim_dir(char *dir)
{
    size_t len = strlen(dir);
    while (len > 0 && dir[len - 1] == '/')
        dir[--len] = '\0';
    if (len + 32 > RFS_MAX_PATH) {
        fprintf(stderr, "scale_load: --dir is longer than a protocol path allows\n");
        exit(2);
    }
    return dir;
}

static void parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longs[] = {
        { "conns", required_argument, NULL, 'c' }, { "active", required_argument, NULL, 'a' },
        { "seconds", required_argument, NULL, 's' }, { "size", required_argument, NULL, 'z' },
        { "dir", required_argument, NULL, 'd' }, { "rfsd-pid", required_argument, NULL, 'p' },
        { "key-file", required_argument, NULL, 'k' }, { "tls", no_argument, NULL, 't' },
        { "max-idle-threads", required_argument, NULL, 'm' },
        { NULL, 0, NULL, 0 }
    };
    *o = (struct options) { .dir = "", .conns = -1, .active = -1, .seconds = 10,
                            .size = 65536 };
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'c': o->conns = parse_long(optarg, 1, 1L << 20, "--conns"); break;
        case 'a': o->active = parse_long(optarg, 0, 1L << 20, "--active"); break;
        case 's': o->seconds = (double) parse_long(optarg, 1, 86400, "--seconds"); break;
        case 'z': o->size = (uint64_t) parse_long(optarg, 1, RFS_MAX_DATA, "--size"); break;
        case 'd': o->dir = trim_dir(optarg); break;
        case 'p': o->pid = parse_long(optarg, 1, 1L << 30, "--rfsd-pid"); break;
        case 'k': o->key_file = optarg; break;
        case 'm': o->max_idle_threads = parse_long(optarg, 1, 1L << 20, "--max-idle-threads"); break;
        case 't': o->tls = 1; break;
        default: usage_exit();
        }
    }
    if (argc - optind != 2 || o->conns < 0 || o->active < 0 || (o->max_idle_threads && !o->pid))
        usage_exit();
    o->host = argv[optind];
    o->port = argv[optind + 1];
    if (o->active > o->conns) {
        fprintf(stderr, "scale_load: --active %ld is more than --conns %ld\n", o->active,
                o->conns);
        exit(2);
    }
    if (o->tls && o->active > 0) {
        fprintf(stderr, "scale_load: active connections are driven as plain TCP sockets; "
                        "with --tls use --active 0\n");
        exit(2);
    }
}

/* Every connection is a descriptor: the soft limit goes up to the hard one. */
static void raise_fd_limit(long conns)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        die("getrlimit(RLIMIT_NOFILE) failed");
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        die("setrlimit(RLIMIT_NOFILE) failed");
    rlim_t need = (rlim_t) conns + FD_RESERVE;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        fprintf(stderr, "scale_load: %ld connections need %llu descriptors, but RLIMIT_NOFILE "
                "goes up to %llu only (raise the hard limit: ulimit -Hn)\n", conns,
                (unsigned long long) need, (unsigned long long) rl.rlim_cur);
        exit(1);
    }
}

/* ---- the server's memory and threads ---- */

static int read_usage(long pid, struct usage *u)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    u->rss_kib = u->threads = -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %ld", &u->rss_kib) != 1 &&
            sscanf(line, "Threads: %ld", &u->threads) != 1)
            sscanf(line, "Name: %31s", u->name);
    }
    if (fclose(f) != 0)
        return -errno;
    return u->rss_kib >= 0 && u->threads >= 0 ? 0 : -EPROTO;
}

static void sample_server(const struct options *o, const char *when, struct usage *u)
{
    *u = (struct usage) { 0 };
    if (!o->pid)
        return;
    int rc = read_usage(o->pid, u);
    if (rc < 0)
        note_failure(0, "rfsd %ld %s: /proc/%ld/status: %s", o->pid, when, o->pid,
                     strerror(-rc));
    u->known = rc == 0;
}

/* ---- connections made by the client library ---- */

struct security {
    struct rfs_keyring ring;    /* count 0: no key */
    struct net_tls *tls;
    struct rfs_connect_opts opts;
};

static void security_init(const struct options *o, struct security *s)
{
    char err[512];
    *s = (struct security) { 0 };
    if (o->key_file && rfs_keyring_load(o->key_file, &s->ring, err, sizeof err) < 0)
        die(err);
    /* verify 0, as the drivers with a key: the key proves the server over
     * the channel binding; without one, load on a test server trusts it. */
    if (o->tls && net_tls_client_new(NULL, 0, &s->tls, err, sizeof err) < 0)
        die(err);
    s->opts = (struct rfs_connect_opts) {
        .transport = o->tls ? &net_tls_transport : &net_tcp_transport,
        .net = { .timeout_ms = CONNECT_MS, .tls = s->tls },
        .key = s->ring.count ? &s->ring.keys[0] : NULL,
    };
}

static void security_fini(struct security *s)
{
    rfs_keyring_free(&s->ring);
    net_tls_free(s->tls);
}

/* 0, or -1 with the failure counted (with a key, a refusal shows here). */
static int connect_client(const struct options *o, const struct security *s,
                          struct rfs_client *c, const char *role, long i)
{
    int rc = rfs_client_connect_with(c, o->host, o->port, &s->opts);
    if (rc == 0)
        return 0;
    note_failure(rc == RFS_E_BUSY, "%s connection %ld: connect: %s%s%s", role, i,
                 result_str(rc), c->why ? ": " : "", c->why ? c->why : "");
    return -1;
}

/* The server answers an FSTAT of a handle never opened with BADF, and a
 * refused connection's first reply is the refusal: either way it has taken
 * the connection. One that fails is closed, so that it counts once. */
static void probe_idle(struct rfs_client *c, long i, const char *when)
{
    struct rfs_stat st;
    int rc = rfs_fstat(c, 0, &st);
    if (rc == RFS_E_BADF)
        return;
    note_failure(rc == RFS_E_BUSY, "idle connection %ld, %s: FSTAT of an unopened handle: "
                 "%s (expected %s)", i, when, rc == 0 ? "OK" : result_str(rc),
                 rfs_status_str(RFS_E_BADF));
    rfs_client_close(c);
}

static void open_idle(const struct options *o, const struct security *s,
                      struct rfs_client *idle, long n)
{
    for (long i = 0; i < n; i++)
        if (connect_client(o, s, &idle[i], "idle", i) == 0)
            probe_idle(&idle[i], i, "after connecting");
}

static void check_idle(struct rfs_client *idle, long n)
{
    for (long i = 0; i < n; i++)
        if (idle[i].conn)
            probe_idle(&idle[i], i, "after the run");
}

/* ---- active connections: one state machine each ---- */

enum step { STEP_OPEN, STEP_WRITE, STEP_READ_ALL, STEP_READ_SMALL, STEP_CLOSE };

struct active {
    struct rfs_client client;   /* made the connection; owns the socket */
    int fd;                     /* that socket, non-blocking from then on */
    long index;
    int running;                /* in the epoll set, a request in flight */
    enum step step;
    uint64_t cycles;            /* cycles completed */
    uint64_t rng;
    uint32_t next_tag;
    char *path;
    uint8_t *written;           /* this cycle's PWRITE data */
    uint8_t *read_buf;
    /* the request in flight */
    uint16_t op;
    uint32_t tag;
    uint64_t read_off, read_len;
    double sent_at;             /* when its first byte went to the socket */
    uint8_t head[RFS_HDR_SIZE + RFS_REQ_FIXED];
    struct iovec out[2];
    int out_first, out_left;    /* iovecs not yet sent in full */
    int want_out;               /* EPOLLOUT on: the socket's send buffer was full */
    /* its reply */
    uint8_t reply[RFS_HDR_SIZE + RFS_REP_FIXED];
    size_t reply_got;
    struct rfs_hdr hdr;
    uint64_t data_len, data_got;
};

struct latencies {
    double *us;
    size_t count, cap;
};

struct run {
    const struct options *o;
    int epfd;
    struct active *conns;
    long running;
    double start, end;          /* no request starts after end */
    uint64_t ops, data_bytes;
    struct latencies small_reads;
};

/* splitmix64's output function: neighbouring inputs give unrelated words. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Data that differs from connection to connection and cycle to cycle, so
 * that a reply from the wrong file or an old write shows. */
static void fill_pattern(uint8_t *buf, uint64_t len, long index, uint64_t cycle)
{
    uint64_t seed = mix64((uint64_t) index * GAMMA ^ mix64(cycle + 1));
    for (uint64_t off = 0; off < len; off += 8) {
        uint64_t word = mix64(seed + off * GAMMA);
        memcpy(buf + off, &word, len - off < 8 ? len - off : 8);
    }
}

static void stop_active(struct run *r, struct active *a)
{
    if (epoll_ctl(r->epfd, EPOLL_CTL_DEL, a->fd, NULL) < 0)
        note_failure(0, "active connection %ld: epoll_ctl(DEL): %s", a->index,
                     strerror(errno));
    a->running = 0;
    r->running--;
}

/* The connection's first failure: told, counted, and the connection stops. */
__attribute__((format(printf, 4, 5)))
static int fail_active(struct run *r, struct active *a, int refused, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    note_failure(refused, "active connection %ld, cycle %llu, %s: %s", a->index,
                 (unsigned long long) a->cycles, rfs_op_name(a->op), what);
    stop_active(r, a);
    return -1;
}

static int watch_out(struct run *r, struct active *a, int want_out)
{
    if (a->want_out == want_out)
        return 0;
    struct epoll_event ev = { .events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = a };
    if (epoll_ctl(r->epfd, EPOLL_CTL_MOD, a->fd, &ev) < 0)
        return fail_active(r, a, 0, "epoll_ctl(MOD): %s", strerror(errno));
    a->want_out = want_out;
    return 0;
}

static void consume_out(struct active *a, size_t sent)
{
    while (a->out_left > 0 && sent >= a->out[a->out_first].iov_len) {
        sent -= a->out[a->out_first].iov_len;
        a->out_first++;
        a->out_left--;
    }
    if (a->out_left > 0) {
        struct iovec *v = &a->out[a->out_first];
        v->iov_base = (uint8_t *) v->iov_base + sent;
        v->iov_len -= sent;
    }
}

/* Send what the socket takes; a full send buffer waits for EPOLLOUT. */
static int flush_out(struct run *r, struct active *a)
{
    while (a->out_left > 0) {
        struct msghdr m = { .msg_iov = &a->out[a->out_first],
                            .msg_iovlen = (size_t) a->out_left };
        ssize_t sent = sendmsg(a->fd, &m, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return watch_out(r, a, 1);
        if (sent < 0)
            return fail_active(r, a, 0, "send: %s", strerror(errno));
        consume_out(a, (size_t) sent);
    }
    return watch_out(r, a, 0);
}

static void send_request(struct run *r, struct active *a, uint16_t op, const struct rfs_req *req,
                         const void *var, uint64_t var_len)
{
    struct rfs_hdr h = { .magic = RFS_MAGIC, .version = RFS_VERSION, .op = op,
                         .tag = a->next_tag++, .len = RFS_REQ_FIXED + var_len };
    rfs_hdr_encode(&h, a->head);
    rfs_req_encode(req, a->head + RFS_HDR_SIZE);
    a->op = op;
    a->tag = h.tag;
    a->out[0] = (struct iovec) { a->head, sizeof a->head };
    a->out[1] = (struct iovec) { (void *) var, (size_t) var_len };
    a->out_first = 0;
    a->out_left = var_len ? 2 : 1;
    a->reply_got = 0;
    a->data_len = a->data_got = 0;
    a->sent_at = now();
    flush_out(r, a);
}

static void send_pread(struct run *r, struct active *a, uint64_t offset, uint64_t len)
{
    a->read_off = offset;
    a->read_len = len;
    struct rfs_req req = { .handle = 0, .offset = offset, .length = len };
    send_request(r, a, RFS_OP_PREAD, &req, NULL, 0);
}

static void start_step(struct run *r, struct active *a)
{
    uint64_t size = r->o->size;
    struct rfs_req req = { .handle = 0 };
    switch (a->step) {
    case STEP_OPEN:
        req.flags = RFS_O_RDWR | RFS_O_CREAT;
        req.mode = 0644;
        req.aux = (uint32_t) strlen(a->path);
        send_request(r, a, RFS_OP_OPEN, &req, a->path, req.aux);
        break;
    case STEP_WRITE:
        fill_pattern(a->written, size, a->index, a->cycles);
        req.length = size;
        send_request(r, a, RFS_OP_PWRITE, &req, a->written, size);
        break;
    case STEP_READ_ALL:
        send_pread(r, a, 0, size);
        break;
    case STEP_READ_SMALL:
        a->rng += GAMMA;
        send_pread(r, a, mix64(a->rng) % (size / SMALL_READ) * SMALL_READ, SMALL_READ);
        break;
    case STEP_CLOSE:
        send_request(r, a, RFS_OP_CLOSE, &req, NULL, 0);
        break;
    }
}

/* The step after a's, and a cycle counted when it wraps. */
static void advance(const struct run *r, struct active *a)
{
    if (a->step == STEP_CLOSE) {
        a->step = STEP_OPEN;
        a->cycles++;
    } else if (a->step == STEP_READ_ALL && r->o->size < SMALL_READ) {
        a->step = STEP_CLOSE;
    } else {
        a->step++;
    }
}

static int latency_add(struct latencies *l, double us)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        double *p = realloc(l->us, cap * sizeof *p);
        if (!p)
            return -1;
        l->us = p;
        l->cap = cap;
    }
    l->us[l->count++] = us;
    return 0;
}

/* The reply's header and fixed part are in: is it the answer, and OK? */
static int check_reply_head(struct run *r, struct active *a)
{
    struct rfs_hdr *h = &a->hdr;
    if (rfs_hdr_decode(a->reply, h) != RFS_OK)
        return fail_active(r, a, 0, "reply with magic %#x version %u", h->magic, h->version);
    if (h->op == RFS_REFUSAL_OP && h->tag == 0 && h->status == RFS_E_BUSY)
        return fail_active(r, a, 1, "refused: %s", rfs_status_str(RFS_E_BUSY));
    uint64_t data = a->op == RFS_OP_PREAD ? a->read_len : 0;
    if (rfs_rep_validate(h, a->op, a->tag, data) != RFS_OK)
        return fail_active(r, a, 0, "reply does not answer the request (tag %u): op %#x tag %u "
                           "status %d len %llu", a->tag, h->op, h->tag, h->status,
                           (unsigned long long) h->len);
    if (h->status != RFS_OK)
        return fail_active(r, a, 0, "%s: %s", a->path, rfs_status_str(h->status));
    a->data_len = h->len - RFS_REP_FIXED;
    if (a->data_len != data)
        return fail_active(r, a, 0, "%llu bytes at %llu asked, %llu came",
                           (unsigned long long) data, (unsigned long long) a->read_off,
                           (unsigned long long) a->data_len);
    return 0;
}

/* What the reply says beyond its status: bytes written, bytes read. */
static int check_reply_data(struct run *r, struct active *a)
{
    if (a->out_left > 0)
        return fail_active(r, a, 0, "answered before the request was sent in full");
    if (a->op == RFS_OP_PWRITE) {
        struct rfs_rep rep;
        rfs_rep_decode(a->reply + RFS_HDR_SIZE, &rep);
        if (rep.value != r->o->size)
            return fail_active(r, a, 0, "%llu bytes written of %llu",
                               (unsigned long long) rep.value,
                               (unsigned long long) r->o->size);
    }
    if (a->op == RFS_OP_PREAD && memcmp(a->read_buf, a->written + a->read_off, a->data_len)) {
        uint64_t at = 0;
        while (a->read_buf[at] == a->written[a->read_off + at])
            at++;
        return fail_active(r, a, 0, "data read back differs at file offset %llu",
                           (unsigned long long) (a->read_off + at));
    }
    return 0;
}

static void complete_reply(struct run *r, struct active *a)
{
    double t = now();
    if (check_reply_data(r, a) < 0)
        return;
    r->ops++;
    r->data_bytes += a->op == RFS_OP_PWRITE ? r->o->size : a->data_len;
    if (a->step == STEP_READ_SMALL && latency_add(&r->small_reads, (t - a->sent_at) * 1e6) < 0) {
        fail_active(r, a, 0, "out of memory for latency samples");
        return;
    }
    advance(r, a);
    if (t >= r->end)
        stop_active(r, a);
    else
        start_step(r, a);
}

/* Read what has come of the reply, without reading past it. */
static void on_readable(struct run *r, struct active *a)
{
    while (a->running) {
        int in_head = a->reply_got < sizeof a->reply;
        uint8_t *dst = in_head ? a->reply + a->reply_got : a->read_buf + a->data_got;
        size_t want = in_head ? sizeof a->reply - a->reply_got : a->data_len - a->data_got;
        ssize_t got = recv(a->fd, dst, want, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (got <= 0) {
            fail_active(r, a, 0, "%s", got ? strerror(errno) : "the server closed the connection");
            return;
        }
        if (!in_head)
            a->data_got += (uint64_t) got;
        else if ((a->reply_got += (size_t) got) == sizeof a->reply && check_reply_head(r, a) < 0)
            return;
        if (a->reply_got == sizeof a->reply && a->data_got == a->data_len)
            complete_reply(r, a);
    }
}

/* Connect through the library (and its key exchange), then take the socket. */
static void open_active(const struct options *o, const struct security *s, struct run *r,
                        struct active *a, long i)
{
    a->index = i;
    a->fd = -1;
    a->rng = mix64((uint64_t) i + 1);
    a->next_tag = 1;
    a->written = malloc(o->size);
    a->read_buf = malloc(o->size);
    if (!a->written || !a->read_buf || asprintf(&a->path, "%s/load-%ld", o->dir, i) < 0)
        die("out of memory");
    if (connect_client(o, s, &a->client, "active", i) < 0)
        return;
    /* Nothing of the stream is left in the library: TCP holds no data of
     * its own, and the key exchange ended with a reply read in full. */
    a->fd = net_tcp_fd(a->client.conn);
    int flags = fcntl(a->fd, F_GETFL);
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = a };
    if (flags < 0 || fcntl(a->fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        epoll_ctl(r->epfd, EPOLL_CTL_ADD, a->fd, &ev) < 0) {
        note_failure(0, "active connection %ld: set-up: %s", i, strerror(errno));
        return;
    }
    a->running = 1;
    r->running++;
}

static void drive(struct run *r)
{
    struct epoll_event ev[64];
    double give_up = r->end + DRAIN_SECONDS;
    for (double t = now(); r->running > 0 && t < give_up; t = now()) {
        int n = epoll_wait(r->epfd, ev, 64, (int) ((give_up - t) * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            note_failure(0, "epoll_wait: %s", strerror(errno));
            return;
        }
        for (int k = 0; k < n; k++) {
            struct active *a = ev[k].data.ptr;
            if (a->running && (ev[k].events & EPOLLOUT))
                flush_out(r, a);
            if (a->running && (ev[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                on_readable(r, a);
        }
    }
}

/* Phase 2: returns the seconds it ran, from the first request to the last reply. */
static double run_active(struct run *r)
{
    r->start = now();
    r->end = r->start + r->o->seconds;
    for (long i = 0; i < r->o->active; i++)
        if (r->conns[i].running)
            start_step(r, &r->conns[i]);
    /* Without active connections the idle ones are still held that long. */
    struct timespec hold = { .tv_sec = (time_t) r->o->seconds };
    while (r->o->active == 0 && nanosleep(&hold, &hold) < 0 && errno == EINTR)
        ;
    drive(r);
    double elapsed = now() - r->start;
    for (long i = 0; i < r->o->active; i++)
        if (r->conns[i].running)
            fail_active(r, &r->conns[i], 0, "no reply %d s after the end", DRAIN_SECONDS);
    return elapsed;
}

/* ---- results ---- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *) x, b = *(const double *) y;
    return a < b ? -1 : a > b;
}

/* Nearest rank: the smallest sample with at least pct percent at or below it. */
static double percentile(const struct latencies *l, unsigned pct)
{
    size_t rank = (l->count * pct + 99) / 100;
    return l->us[rank ? rank - 1 : 0];
}

static void fmt_known(char *out, size_t len, int known, long v)
{
    if (known)
        snprintf(out, len, "%ld", v);
    else
        snprintf(out, len, "-");
}

static void print_results(const struct run *r, double secs, const struct usage u[3],
                          long zero_cycle)
{
    const struct options *o = r->o;
    const struct latencies *l = &r->small_reads;
    uint64_t cycles = 0;
    for (long i = 0; i < o->active; i++)
        cycles += r->conns[i].cycles;
    long idle = o->conns - o->active;
    char p50[32] = "-", p99[32] = "-", per_conn[32] = "-", rss[3][32], thr[3][32];
    if (l->count) {
        snprintf(p50, sizeof p50, "%.1f", percentile(l, 50));
        snprintf(p99, sizeof p99, "%.1f", percentile(l, 99));
    }
    if (idle > 0 && u[0].known && u[1].known)
        snprintf(per_conn, sizeof per_conn, "%.2f", (double) (u[1].rss_kib - u[0].rss_kib) / idle);
    for (int k = 0; k < 3; k++) {
        fmt_known(rss[k], sizeof rss[k], u[k].known, u[k].rss_kib);
        fmt_known(thr[k], sizeof thr[k], u[k].known, u[k].threads);
    }
    double ops_s = secs > 0 ? (double) r->ops / secs : 0;
    double mb_s = secs > 0 ? (double) r->data_bytes / 1e6 / secs : 0;

    printf("scale_load %s:%s: %ld connections (%ld idle, %ld active), %llu-byte cycles%s%s\n",
           o->host, o->port, o->conns, idle, o->active, (unsigned long long) o->size,
           o->tls ? ", TLS" : "", o->key_file ? ", key" : "");
    printf("  active: %llu cycles, %llu requests in %.2f s: %.0f requests/s, %.2f MB/s\n",
           (unsigned long long) cycles, (unsigned long long) r->ops, secs, ops_s, mb_s);
    printf("  4 KiB reads: p50 %s us, p99 %s us (%zu samples)\n", p50, p99, l->count);
    if (o->pid)
        printf("  server %ld (%s), RSS KiB / threads: base %s / %s, idle %s / %s, "
               "active %s / %s\n", o->pid, u[0].known ? u[0].name : "?", rss[0], thr[0],
               rss[1], thr[1], rss[2], thr[2]);
    printf("  idle connection: %s KiB each\n", per_conn);
    printf("  errors %llu, refused %llu, active connections without a complete cycle %ld\n",
           (unsigned long long) tally.errors, (unsigned long long) tally.refused, zero_cycle);
    printf("RESULT conns=%ld active=%ld seconds=%.3f cycles=%llu ops=%llu ops_per_s=%.1f "
           "mb_per_s=%.2f p50_us=%s p99_us=%s errors=%llu refused=%llu rss_base_kib=%s "
           "rss_idle_kib=%s rss_active_kib=%s threads_base=%s threads_idle=%s "
           "threads_active=%s idle_kib_per_conn=%s\n",
           o->conns, o->active, secs, (unsigned long long) cycles, (unsigned long long) r->ops,
           ops_s, mb_s, p50, p99, (unsigned long long) tally.errors,
           (unsigned long long) tally.refused, rss[0], rss[1], rss[2], thr[0], thr[1], thr[2],
           per_conn);
}

int main(int argc, char **argv)
{
    struct options o;
    parse_args(argc, argv, &o);
    raise_fd_limit(o.conns);
    struct security sec;
    security_init(&o, &sec);
    long idle_n = o.conns - o.active;
    struct rfs_client *idle = calloc((size_t) idle_n + 1, sizeof *idle);
    struct run r = { .o = &o, .epfd = epoll_create1(EPOLL_CLOEXEC),
                     .conns = calloc((size_t) o.active + 1, sizeof *r.conns) };
    if (!idle || !r.conns)
        die("out of memory");
    if (r.epfd < 0)
        die("epoll_create1 failed");
    struct usage u[3];

    sample_server(&o, "before phase 1", &u[0]);
    open_idle(&o, &sec, idle, idle_n);
    sample_server(&o, "after phase 1", &u[1]);
    if (o.max_idle_threads && u[1].known && u[1].threads > o.max_idle_threads)
        note_failure(0, "the server holds %ld threads for %ld idle connections (at most %ld "
                     "expected)", u[1].threads, idle_n, o.max_idle_threads);
    for (long i = 0; i < o.active; i++)
        open_active(&o, &sec, &r, &r.conns[i], i);
    double secs = run_active(&r);
    sample_server(&o, "at the end of phase 2", &u[2]);
    check_idle(idle, idle_n);

    long zero_cycle = 0;
    for (long i = 0; i < o.active; i++)
        zero_cycle += r.conns[i].cycles == 0;
    if (tally.told > MAX_TOLD)
        fprintf(stderr, "scale_load: %llu more failures not shown\n",
                (unsigned long long) (tally.told - MAX_TOLD));
    qsort(r.small_reads.us, r.small_reads.count, sizeof *r.small_reads.us, cmp_double);
    print_results(&r, secs, u, zero_cycle);

    for (long i = 0; i < idle_n; i++)
        rfs_client_close(&idle[i]);
    for (long i = 0; i < o.active; i++) {
        rfs_client_close(&r.conns[i].client);
        free(r.conns[i].path);
        free(r.conns[i].written);
        free(r.conns[i].read_buf);
    }
    if (close(r.epfd) < 0)
        perror("scale_load: close(epoll)");
    free(r.small_reads.us);
    free(r.conns);
    free(idle);
    security_fini(&sec);
    return tally.errors == 0 && tally.refused == 0 && zero_cycle == 0 ? 0 : 1;
}
