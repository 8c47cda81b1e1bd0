/*
 * rfsd's connections: one epoll set holds every connection, a pool of
 * worker threads takes a connection when a request arrives on it, serves
 * what it sent (rfs_server.h's sessions) and puts it back. An idle
 * connection costs a descriptor and its session, not a thread.
 *
 * A request that waits (a lock held by another client, a collective call
 * waiting for its participants, a slow peer) keeps its worker; when every
 * worker is busy and requests are waiting, the pool grows, up to
 * max_threads, and shrinks back to `threads` once the extra workers idle.
 * Connections that have not authenticated (with keys, or not finished the
 * TLS handshake) within auth_timeout_ms are closed, and with an idle
 * timeout so are connections that sent nothing for that long. One client
 * address may hold max_per_addr TCP connections. Verbs connections keep a
 * thread each. No MPI here.
 */
#ifndef RFS_LOOP_H_INCLUDED
#define RFS_LOOP_H_INCLUDED

#include <stdint.h>

#include "net/net.h"
#include "server/rfs_server.h"
#include "verbs/net_verbs.h"

struct rfs_loop_opts {
    int max_conns;              /* open at once; one more is refused (RFS_E_BUSY) */
    int threads;                /* workers kept, >= 1 */
    int max_threads;            /* workers at most, >= threads */
    int auth_timeout_ms;        /* with keys or TLS: unauthenticated connections end */
    int idle_timeout_ms;        /* connections idle this long end; 0: never */
    int max_per_addr;           /* TCP connections from one client address; 0: any */
    struct net_tls *tls;        /* NULL: plain TCP */
};

struct rfs_loop_stats {
    uint64_t accepted, refused;     /* connections taken, refused (either limit) */
    uint64_t auth_closed, idle_closed;
    int open;                       /* connections open now */
    int threads, threads_peak;      /* workers now, and at most so far */
};

struct rfs_loop;

/*
 * A loop over the listening socket listen_fd (made non-blocking here) and,
 * when vl is not NULL, the verbs listener. The loop does not own either.
 * 0 or a negative errno.
 */
int rfs_loop_new(const struct rfs_server *s, const struct rfs_loop_opts *o, int listen_fd,
                 struct net_verbs_listener *vl, struct rfs_loop **out);
/*
 * Serve until rfs_loop_stop; then every connection is shut down and every
 * worker joined. Workers blocked in a lock wait are interrupted by SIGUSR1,
 * for which the program installs a handler without SA_RESTART.
 */
int rfs_loop_run(struct rfs_loop *l);
/* From any thread or a signal handler. */
void rfs_loop_stop(struct rfs_loop *l);
void rfs_loop_get_stats(struct rfs_loop *l, struct rfs_loop_stats *out);
/* After rfs_loop_run returned (or instead of it). */
void rfs_loop_free(struct rfs_loop *l);

#endif /* RFS_LOOP_H_INCLUDED */
