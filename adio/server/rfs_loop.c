/*
 * rfsd's event loop and worker pool (rfs_loop.h).
 *
 * Ownership: a connection is armed in the epoll set with EPOLLONESHOT, so
 * that exactly one worker gets its event; that worker owns it until it arms
 * it again, and only the owner frees it. The loop's lock guards the list
 * of connections, their counts and the fields the sweeper reads (busy,
 * deadlines): the sweeper never frees a connection, it shuts its socket
 * down, and the event that follows hands it to a worker, which ends it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_loop.h"
#include "net/net_time.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/rfs_proto.h"
#include "server/rfs_lease.h"
#include "server/rfs_log.h"
#include "server/rfs_peers.h"

/* Requests served from one connection before it goes back to the set, so
 * that a client sending without pause cannot keep its worker for good. */
#define SERVE_BATCH 16
/* Connections taken from the listening socket per event. */
#define ACCEPT_BATCH 64
/* With every worker busy and requests waiting, the pool is checked this
 * often, and grows when no request was taken in between. */
#define STARVE_TICK_MS 2
/* Workers over `threads` end after this long without a request. */
#define LINGER_MS 10000
/* Deadlines are checked this often. */
#define SWEEP_MS 1000
/* A request, once begun, must keep arriving: a receive that waits this long
 * ends the connection, so that a peer stalling mid-request cannot hold a
 * worker for ever. Between requests nothing is read, so an idle connection
 * never meets it. */
#define REQUEST_STALL_MS 30000

/* epoll keys besides connections (whose key is their address) */
enum { KEY_STOP = 1, KEY_LISTEN, KEY_VERBS };

struct conn {
    struct conn *prev, *next;   /* the loop's list, under its lock */
    struct rfs_loop *loop;
    struct net_conn *net;
    struct rfs_session *session;
    int fd;                     /* the socket; -1: a verbs connection */
    int handshake;              /* TLS: the handshake is still to do */
    /* under the loop's lock */
    int busy;                   /* a worker (or, verbs, its thread) serves it */
    int in_handshake;           /* the handshake runs: its own timeout bounds it */
    int64_t auth_deadline;      /* ms, 0: authenticated, or no keys and no TLS */
    int64_t idle_since;         /* ms */
    const char *ending;         /* why the sweeper shut it down, or NULL */
    int thread_done;            /* verbs: its thread ended, to be joined */
    int counted;                /* addr is counted in the loop's peers */
    struct rfs_peer_addr addr;
    pthread_t thread;           /* verbs */
    char peer[INET6_ADDRSTRLEN + 8];
};

struct worker {
    pthread_t thread;
    struct rfs_loop *loop;
    int used, done;             /* under the loop's lock */
};

struct rfs_loop {
    const struct rfs_server *server;
    struct rfs_loop_opts opts;
    int epfd, stop_fd, wake[2];
    int listen_fd, spare_fd;    /* spare: given up to accept and refuse at EMFILE */
    struct net_verbs_listener *vl;
    struct rfs_peers *peers;    /* with max_per_addr */
    pthread_mutex_t lock;
    struct conn conns;          /* list head */
    struct worker *workers;     /* max_threads slots */
    struct rfs_loop_stats stats;    /* under lock */
    atomic_int nthreads, busy, stop;
    atomic_ulong taken;         /* requests taken by workers, for the starvation check */
};

static void wake_main(struct rfs_loop *l)
{
    ssize_t ignored = write(l->wake[1], "w", 1);
    (void) ignored;
}

static int arm(struct rfs_loop *l, int op, int fd, uint64_t key)
{
    struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.u64 = key };
    return epoll_ctl(l->epfd, op, fd, &ev) < 0 ? -errno : 0;
}

static void address_name(const struct sockaddr_storage *ss, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) ss)->sin6_addr, host, sizeof host);
        port = ntohs(((const struct sockaddr_in6 *) ss)->sin6_port);
    } else if (ss->ss_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *) ss)->sin_addr, host, sizeof host);
        port = ntohs(((const struct sockaddr_in *) ss)->sin_port);
    }
    snprintf(out, len, "%s:%d", host, port);
}

static void peer_name(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss = { .ss_family = AF_UNSPEC };
    socklen_t sl = sizeof ss;
    getpeername(fd, (struct sockaddr *) &ss, &sl);
    address_name(&ss, out, len);
}

/*
 * One refusal frame instead of any reply, then close. 40 bytes on a fresh
 * socket fit its send buffer, so a non-blocking send does not fall short.
 * What the client sent already is read and dropped first: closing a socket
 * with unread data resets the connection, which discards a frame the
 * kernel has not transmitted yet.
 */
static void refuse(int fd, const char *why)
{
    uint8_t frame[RFS_HDR_SIZE + RFS_REP_FIXED] = { 0 };
    struct rfs_hdr h = { .magic = RFS_MAGIC, .version = RFS_VERSION, .op = RFS_REFUSAL_OP,
                         .tag = 0, .status = RFS_E_BUSY, .len = RFS_REP_FIXED };
    char peer[INET6_ADDRSTRLEN + 8], drain[4096];
    rfs_hdr_encode(&h, frame);
    peer_name(fd, peer, sizeof peer);
    rfs_log(RFS_LOG_WARN, "%s: refused: %s", peer, why);
    if (send(fd, frame, sizeof frame, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t) sizeof frame)
        rfs_log(RFS_LOG_WARN, "%s: refusal not sent: %s", peer, strerror(errno));
    shutdown(fd, SHUT_WR);
    /* Bounded: a client that keeps sending must not hold a worker. */
    for (int i = 0; i < 256 && recv(fd, drain, sizeof drain, MSG_DONTWAIT) > 0; i++)
        ;
    close(fd);
}

/* A slot under max_conns and, for a counted address, under max_per_addr;
 * else why not (counted as refused). */
static const char *take_slot(struct rfs_loop *l, const struct rfs_peer_addr *addr)
{
    const char *why = NULL;
    pthread_mutex_lock(&l->lock);
    if (l->stats.open >= l->opts.max_conns)
        why = "connection limit reached (--max-connections)";
    else if (addr && rfs_peers_take(l->peers, addr) != 1)
        why = "connections of this address at their limit (--max-per-address)";
    if (why)
        l->stats.refused++;
    else
        l->stats.open++;
    pthread_mutex_unlock(&l->lock);
    return why;
}

/* Under the loop's lock. */
static void give_slot_locked(struct rfs_loop *l, const struct rfs_peer_addr *addr)
{
    l->stats.open--;
    if (addr)
        rfs_peers_give(l->peers, addr);
}

/* A slot taken for a connection that did not come to be. */
static void give_slot(struct rfs_loop *l, const struct rfs_peer_addr *addr)
{
    pthread_mutex_lock(&l->lock);
    give_slot_locked(l, addr);
    pthread_mutex_unlock(&l->lock);
}

static void list_insert(struct rfs_loop *l, struct conn *c)
{
    pthread_mutex_lock(&l->lock);
    c->next = l->conns.next;
    c->prev = &l->conns;
    l->conns.next->prev = c;
    l->conns.next = c;
    l->stats.accepted++;
    pthread_mutex_unlock(&l->lock);
}

/* The owner ends a connection: its files are closed (which drops its
 * locks), then its transport. */
static void end_conn(struct rfs_loop *l, struct conn *c, int rc)
{
    pthread_mutex_lock(&l->lock);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    give_slot_locked(l, c->counted ? &c->addr : NULL);
    const char *ending = c->ending;
    pthread_mutex_unlock(&l->lock);
    if (ending)
        rfs_log(RFS_LOG_INFO, "%s: closed: %s", c->peer, ending);
    else if (rc < 0)
        rfs_log(RFS_LOG_INFO, "%s: connection ended: %s", c->peer, strerror(-rc));
    else
        rfs_log(RFS_LOG_INFO, "%s: disconnected", c->peer);
    if (c->net && c->fd >= 0)
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    rfs_session_free(c->session);
    net_close(c->net);
    free(c);
}

/* The address to count a connection from `ss` under, or NULL if none is. */
static const struct rfs_peer_addr *counted_address(const struct rfs_loop *l,
                                                   const struct sockaddr_storage *ss,
                                                   struct rfs_peer_addr *addr)
{
    return l->peers && rfs_peer_addr_of(ss, addr) == 0 ? addr : NULL;
}

static void admit_tcp(struct rfs_loop *l, int fd)
{
    /* One getpeername: the address is both counted and logged. */
    struct sockaddr_storage ss = { .ss_family = AF_UNSPEC };
    socklen_t sl = sizeof ss;
    getpeername(fd, (struct sockaddr *) &ss, &sl);
    struct rfs_peer_addr key;
    const struct rfs_peer_addr *addr = counted_address(l, &ss, &key);
    const char *refused = take_slot(l, addr);
    if (refused) {
        refuse(fd, refused);
        return;
    }
    struct conn *c = calloc(1, sizeof *c);
    /* No send timeout: a slow reader must not lose replies; keepalive
     * notices a peer that disappeared. */
    struct net_opts opts = { .timeout_ms = 0 };
    struct timeval stall = { .tv_sec = REQUEST_STALL_MS / 1000 };
    if (!c || net_tcp_wrap(fd, &opts, &c->net) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &stall, sizeof stall) < 0 ||
        (!l->opts.tls && !(c->session = rfs_session_new(l->server, c->net, c->peer)))) {
        rfs_log(RFS_LOG_ERROR, "cannot take a new connection: out of memory");
        if (c && c->net)
            net_close(c->net);
        else
            close(fd);
        free(c);
        give_slot(l, addr);
        return;
    }
    c->loop = l;
    c->fd = fd;
    c->counted = addr != NULL;
    if (addr)
        c->addr = *addr;
    c->handshake = l->opts.tls != NULL;
    c->idle_since = net_monotonic_ms();
    if (l->server->keys || l->opts.tls)
        c->auth_deadline = c->idle_since + l->opts.auth_timeout_ms;
    address_name(&ss, c->peer, sizeof c->peer);
    rfs_log(RFS_LOG_INFO, "%s: connected", c->peer);
    list_insert(l, c);
    int rc = arm(l, EPOLL_CTL_ADD, fd, (uint64_t) (uintptr_t) c);
    if (rc < 0) {
        rfs_log(RFS_LOG_ERROR, "%s: epoll: %s", c->peer, strerror(-rc));
        end_conn(l, c, rc);
    }
}

/* Out of descriptors: give up the spare one to take the connection and
 * refuse it, instead of leaving it in the backlog to wake us again. */
static void shed(struct rfs_loop *l)
{
    if (l->spare_fd >= 0)
        close(l->spare_fd);
    int fd = accept4(l->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0)
        refuse(fd, "out of file descriptors");
    l->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void accept_tcp(struct rfs_loop *l)
{
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(l->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            admit_tcp(l, fd);
            continue;
        }
        int err = errno;
        if (err == EAGAIN)
            break;
        if (err == EMFILE || err == ENFILE) {
            rfs_log(RFS_LOG_WARN, "accept: %s", strerror(err));
            shed(l);
        } else if (err != EINTR && err != ECONNABORTED)
            rfs_log(RFS_LOG_WARN, "accept: %s", strerror(err));
    }
    int rc = arm(l, EPOLL_CTL_MOD, l->listen_fd, KEY_LISTEN);
    if (rc < 0)
        rfs_log(RFS_LOG_ERROR, "listening socket: epoll: %s", strerror(-rc));
}

/* A verbs connection's own thread: the fabric gives no descriptor to wait
 * on per connection. */
static void *verbs_main(void *arg)
{
    struct conn *c = arg;
    int rc;
    while ((rc = rfs_session_serve_one(c->session)) == 0)
        ;
    if (rc < 0)
        rfs_log(RFS_LOG_INFO, "%s: connection ended: %s", c->peer, strerror(-rc));
    pthread_mutex_lock(&c->loop->lock);
    c->thread_done = 1;
    pthread_mutex_unlock(&c->loop->lock);
    wake_main(c->loop);
    return NULL;
}

/*
 * A connection event on the verbs listener. Over the limit the request is
 * rejected (the client sees ECONNREFUSED). No timeout on the connection, as
 * for TCP: a dead peer is found by the transport's bounded retries and the
 * connection manager's disconnect.
 */
static void accept_verbs(struct rfs_loop *l)
{
    const char *refused = take_slot(l, NULL);
    int ok = refused == NULL;
    struct net_opts opts = { .timeout_ms = 0 };
    struct net_conn *net = NULL;
    char peer[INET6_ADDRSTRLEN + 8] = "";
    int rc = net_verbs_accept(l->vl, &opts, ok, &net, peer, sizeof peer);
    struct conn *c = rc == 1 ? calloc(1, sizeof *c) : NULL;
    if (rc < 0)
        rfs_log(RFS_LOG_WARN, "rdma accept: %s", strerror(-rc));
    if (!ok && peer[0])
        rfs_log(RFS_LOG_WARN, "%s: refused: %s", peer, refused);
    if (c) {
        *c = (struct conn) { .loop = l, .net = net, .fd = -1, .busy = 1 };
        snprintf(c->peer, sizeof c->peer, "%s", peer);
        c->session = rfs_session_new(l->server, net, c->peer);
    }
    if (c && c->session && pthread_create(&c->thread, NULL, verbs_main, c) == 0)
        list_insert(l, c);
    else if (ok) {
        if (rc == 1)
            rfs_log(RFS_LOG_ERROR, "%s: cannot serve the connection", peer);
        if (c)
            rfs_session_free(c->session);
        free(c);
        if (rc == 1)
            net_close(net);
        give_slot(l, NULL);
    }
    if ((rc = arm(l, EPOLL_CTL_MOD, net_verbs_listener_fd(l->vl), KEY_VERBS)) < 0)
        rfs_log(RFS_LOG_ERROR, "rdma listener: epoll: %s", strerror(-rc));
}

/* Once the client proved its key (or needs none), no deadline of the
 * sweeper's applies to it but the idle one. Only the owner writes the
 * deadline (the sweeper reads it), so the owner reads it without the lock:
 * the lock is taken once per connection, not once per request. */
static void authenticated(struct rfs_loop *l, struct conn *c)
{
    if (!c->auth_deadline || !c->session || !rfs_session_authenticated(c->session))
        return;
    pthread_mutex_lock(&l->lock);
    c->auth_deadline = 0;
    pthread_mutex_unlock(&l->lock);
}

/* The handshake is bounded by auth_timeout_ms in all (net_tls_accept), and
 * the sweeper keeps off the socket meanwhile: a failed handshake closes it. */
static int finish_handshake(struct rfs_loop *l, struct conn *c)
{
    pthread_mutex_lock(&l->lock);
    c->in_handshake = 1;
    pthread_mutex_unlock(&l->lock);
    struct net_conn *tls;
    int rc = net_tls_accept(l->opts.tls, c->net, l->opts.auth_timeout_ms, &tls);
    /* net_tls_accept owns the TCP connection now, also on failure. */
    c->net = rc < 0 ? NULL : tls;
    pthread_mutex_lock(&l->lock);
    c->in_handshake = 0;
    /* Its socket is closed already: the sweeper must not touch it again. */
    if (rc < 0 && !c->ending)
        c->ending = "TLS handshake failed";
    pthread_mutex_unlock(&l->lock);
    if (rc < 0) {
        rfs_log(RFS_LOG_WARN, "%s: TLS handshake failed: %s", c->peer, strerror(-rc));
        return rc;
    }
    c->handshake = 0;
    c->session = rfs_session_new(l->server, c->net, c->peer);
    if (!c->session)
        return -ENOMEM;
    authenticated(l, c);
    return 0;
}

/* More of the stream is here already: in the socket or the transport. */
static int input_waiting(const struct conn *c)
{
    char b;
    return net_buffered(c->net) || recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/* A worker owns c (its event fired): serve what came, then arm it again. */
static void serve(struct rfs_loop *l, struct conn *c)
{
    pthread_mutex_lock(&l->lock);
    c->busy = 1;
    pthread_mutex_unlock(&l->lock);
    int rc = c->handshake ? finish_handshake(l, c) : 0;
    for (int i = 1; rc == 0; i++) {
        rc = rfs_session_serve_one(c->session);
        authenticated(l, c);
        /* Past the batch, only what the transport holds itself, which no
         * event would announce, is served before the connection goes back. */
        if (rc == 0 && (i >= SERVE_BATCH ? !net_buffered(c->net) : !input_waiting(c)))
            break;
    }
    if (rc == 0) {
        rfs_session_idle(c->session);
        /* Armed under the lock, which the next owner takes before anything
         * else: the hand-off is ordered for it (and for TSan, which sees no
         * order in an EPOLL_CTL_MOD). From the unlock on, another worker
         * may own c: nothing of it is touched. */
        pthread_mutex_lock(&l->lock);
        c->busy = 0;
        c->idle_since = net_monotonic_ms();
        rc = arm(l, EPOLL_CTL_MOD, c->fd, (uint64_t) (uintptr_t) c);
        if (rc < 0)
            c->busy = 1;
        pthread_mutex_unlock(&l->lock);
        if (rc == 0)
            return;
        rfs_log(RFS_LOG_ERROR, "%s: epoll: %s", c->peer, strerror(-rc));
    }
    end_conn(l, c, rc == 1 ? 0 : rc);
}

static void take_event(struct rfs_loop *l, uint64_t key)
{
    if (key == KEY_STOP)
        return;
    if (key == KEY_LISTEN)
        accept_tcp(l);
    else if (key == KEY_VERBS)
        accept_verbs(l);
    else
        serve(l, (struct conn *) (uintptr_t) key);
}

/* An extra worker idle for LINGER_MS ends, down to `threads`. */
static int retire(struct rfs_loop *l)
{
    int n = atomic_load(&l->nthreads);
    while (n > l->opts.threads)
        if (atomic_compare_exchange_weak(&l->nthreads, &n, n - 1))
            return 1;
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct rfs_loop *l = w->loop;
    while (!atomic_load(&l->stop)) {
        struct epoll_event ev;
        int n = epoll_wait(l->epfd, &ev, 1, LINGER_MS);
        if (atomic_load(&l->stop) || (n == 0 && retire(l)))
            break;
        if (n < 0 && errno != EINTR) {
            rfs_log(RFS_LOG_ERROR, "epoll_wait: %s", strerror(errno));
            atomic_fetch_sub(&l->nthreads, 1);
            break;
        }
        if (n <= 0)
            continue;
        if (atomic_fetch_add(&l->busy, 1) + 1 >= atomic_load(&l->nthreads))
            wake_main(l);
        atomic_fetch_add(&l->taken, 1);
        take_event(l, ev.data.u64);
        atomic_fetch_sub(&l->busy, 1);
    }
    pthread_mutex_lock(&l->lock);
    w->done = 1;
    pthread_mutex_unlock(&l->lock);
    wake_main(l);
    return NULL;
}

/* Start up to n workers in free slots: how many started. */
static int start_workers(struct rfs_loop *l, int n)
{
    int started = 0;
    pthread_mutex_lock(&l->lock);
    for (int i = 0; i < l->opts.max_threads && started < n; i++) {
        struct worker *w = &l->workers[i];
        if (w->used)
            continue;
        *w = (struct worker) { .loop = l, .used = 1 };
        /* Counted before it runs, so that it sees itself in nthreads. */
        atomic_fetch_add(&l->nthreads, 1);
        int rc = pthread_create(&w->thread, NULL, worker_main, w);
        if (rc != 0) {
            atomic_fetch_sub(&l->nthreads, 1);
            w->used = 0;
            rfs_log(RFS_LOG_ERROR, "pthread_create: %s", strerror(rc));
            break;
        }
        started++;
    }
    int now = atomic_load(&l->nthreads);
    if (now > l->stats.threads_peak)
        l->stats.threads_peak = now;
    pthread_mutex_unlock(&l->lock);
    return started;
}

/* Join the workers and verbs threads that ended; end those connections. */
static void reap(struct rfs_loop *l)
{
    pthread_mutex_lock(&l->lock);
    for (int i = 0; i < l->opts.max_threads; i++) {
        struct worker *w = &l->workers[i];
        if (w->used && w->done) {
            pthread_join(w->thread, NULL);
            w->used = 0;
        }
    }
    struct conn *ended = NULL;
    for (struct conn *c = l->conns.next; c != &l->conns && !ended; c = c->next)
        if (c->fd < 0 && c->thread_done)
            ended = c;
    pthread_mutex_unlock(&l->lock);
    if (ended) {
        pthread_join(ended->thread, NULL);
        end_conn(l, ended, 0);
        reap(l);
    }
}

/* Every worker busy, requests waiting, and none taken since the last look:
 * the workers wait on something (locks, collectives, slow peers) that the
 * waiting requests may be what releases. */
static void grow_if_starved(struct rfs_loop *l, unsigned long *taken_seen)
{
    unsigned long taken = atomic_load(&l->taken);
    struct pollfd p = { .fd = l->epfd, .events = POLLIN };
    int n = atomic_load(&l->nthreads);
    if (atomic_load(&l->busy) >= n && taken == *taken_seen && poll(&p, 1, 0) == 1 &&
        n < l->opts.max_threads) {
        int more = n / 4 + 1;
        if (more > l->opts.max_threads - n)
            more = l->opts.max_threads - n;
        start_workers(l, more);
    }
    *taken_seen = taken;
}

/* Shut down the connections past a deadline; their workers end them. */
static void sweep(struct rfs_loop *l)
{
    int64_t now = net_monotonic_ms();
    int auth = 0, idle = 0;
    pthread_mutex_lock(&l->lock);
    for (struct conn *c = l->conns.next; c != &l->conns; c = c->next) {
        if (c->fd < 0 || c->ending || c->in_handshake)
            continue;
        /* A busy connection not yet authenticated is reading its first
         * request: one that stalls there is cut too. */
        if (c->auth_deadline && now >= c->auth_deadline) {
            c->ending = "not authenticated in time (--auth-timeout)";
            auth++;
        } else if (!c->busy && l->opts.idle_timeout_ms > 0 &&
                   now - c->idle_since >= l->opts.idle_timeout_ms) {
            c->ending = "idle (--idle-timeout)";
            idle++;
        } else
            continue;
        shutdown(c->fd, SHUT_RDWR);
    }
    l->stats.auth_closed += (uint64_t) auth;
    l->stats.idle_closed += (uint64_t) idle;
    pthread_mutex_unlock(&l->lock);
    if (auth)
        rfs_log(RFS_LOG_WARN, "closing %d connections not authenticated within %d ms", auth,
                l->opts.auth_timeout_ms);
    if (idle)
        rfs_log(RFS_LOG_INFO, "closing %d connections idle for %d ms", idle,
                l->opts.idle_timeout_ms);
}

int rfs_loop_new(const struct rfs_server *s, const struct rfs_loop_opts *o, int listen_fd,
                 struct net_verbs_listener *vl, struct rfs_loop **out)
{
    if (o->threads < 1 || o->max_threads < o->threads || o->max_conns < 1 ||
        o->max_per_addr < 0)
        return -EINVAL;
    struct rfs_loop *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    *l = (struct rfs_loop) { .server = s, .opts = *o, .listen_fd = listen_fd, .vl = vl,
                             .epfd = -1, .stop_fd = -1, .wake = { -1, -1 }, .spare_fd = -1 };
    pthread_mutex_init(&l->lock, NULL);
    l->conns.next = l->conns.prev = &l->conns;
    l->workers = calloc((size_t) o->max_threads, sizeof *l->workers);
    struct epoll_event stop = { .events = EPOLLIN, .data.u64 = KEY_STOP };
    int flags = fcntl(listen_fd, F_GETFL);
    int rc = 0;
    if (!l->workers || (o->max_per_addr && rfs_peers_new(o->max_per_addr, &l->peers) < 0))
        rc = -ENOMEM;
    else if ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
             (l->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
             pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
             (l->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 || flags < 0 ||
             fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
             epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->stop_fd, &stop) < 0)
        rc = -errno;
    if (rc == 0)
        rc = arm(l, EPOLL_CTL_ADD, listen_fd, KEY_LISTEN);
    if (rc == 0 && vl)
        rc = arm(l, EPOLL_CTL_ADD, net_verbs_listener_fd(vl), KEY_VERBS);
    if (rc < 0) {
        rfs_loop_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

void rfs_loop_stop(struct rfs_loop *l)
{
    atomic_store(&l->stop, 1);
    wake_main(l);
}

/* Stop: wake every worker, cut the connections being served (and
 * interrupt lock and lease waits) until every worker has ended, then end
 * the rest. */
static void shut_down(struct rfs_loop *l)
{
    uint64_t one = 1;
    atomic_store(&l->stop, 1);
    if (write(l->stop_fd, &one, sizeof one) != sizeof one)
        rfs_log(RFS_LOG_ERROR, "stop: %s", strerror(errno));
    for (;;) {
        int alive = 0;
        pthread_mutex_lock(&l->lock);
        for (struct conn *c = l->conns.next; c != &l->conns; c = c->next)
            if (c->busy && !c->in_handshake && !c->ending) {
                if (c->fd >= 0)
                    shutdown(c->fd, SHUT_RDWR);
                else
                    net_shutdown(c->net);
            }
        for (int i = 0; i < l->opts.max_threads; i++)
            if (l->workers[i].used && !l->workers[i].done) {
                pthread_kill(l->workers[i].thread, SIGUSR1);
                alive++;
            }
        for (struct conn *c = l->conns.next; c != &l->conns; c = c->next)
            if (c->fd < 0 && !c->thread_done) {
                pthread_kill(c->thread, SIGUSR1);
                alive++;
            }
        pthread_mutex_unlock(&l->lock);
        rfs_lease_table_stop(l->server->leases);    /* and lease waits */
        reap(l);
        if (!alive)
            break;
        poll(NULL, 0, 20);
    }
    while (l->conns.next != &l->conns)
        end_conn(l, l->conns.next, 0);
}

int rfs_loop_run(struct rfs_loop *l)
{
    if (start_workers(l, l->opts.threads) < l->opts.threads) {
        shut_down(l);
        return -EAGAIN;
    }
    int64_t next_sweep = net_monotonic_ms() + SWEEP_MS;
    unsigned long taken_seen = 0;
    while (!atomic_load(&l->stop)) {
        int64_t now = net_monotonic_ms();
        int starving = atomic_load(&l->busy) >= atomic_load(&l->nthreads);
        int wait = starving ? STARVE_TICK_MS : (int) (next_sweep > now ? next_sweep - now : 0);
        struct pollfd p = { .fd = l->wake[0], .events = POLLIN };
        if (poll(&p, 1, wait) > 0) {
            char drain[64];
            while (read(l->wake[0], drain, sizeof drain) > 0)
                ;
        }
        reap(l);
        if (net_monotonic_ms() >= next_sweep) {
            sweep(l);
            next_sweep = net_monotonic_ms() + SWEEP_MS;
        }
        grow_if_starved(l, &taken_seen);
    }
    shut_down(l);
    return 0;
}

void rfs_loop_get_stats(struct rfs_loop *l, struct rfs_loop_stats *out)
{
    pthread_mutex_lock(&l->lock);
    *out = l->stats;
    out->threads = atomic_load(&l->nthreads);
    pthread_mutex_unlock(&l->lock);
}

void rfs_loop_free(struct rfs_loop *l)
{
    if (!l)
        return;
    int fds[] = { l->epfd, l->stop_fd, l->wake[0], l->wake[1], l->spare_fd };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(l->workers);
    rfs_peers_free(l->peers);
    pthread_mutex_destroy(&l->lock);
    free(l);
}
