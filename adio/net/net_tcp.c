/*
 * The TCP implementation of the stream transport (net.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "net/net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct tcp_conn {
    struct net_conn base;
    int fd;
    int pipe[2];                /* for splice, made on first use */
};

static int set_timeouts(int fd, int timeout_ms)
{
    struct timeval tv = { 0, 0 };
    if (timeout_ms > 0) {
        tv.tv_sec = timeout_ms / 1000;
        tv.tv_usec = (timeout_ms % 1000) * 1000;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
        return -errno;
    return 0;
}

/* Small messages (headers, replies) must not wait for Nagle; keepalive
 * detects a peer that vanished without closing. */
static int tune_socket(int fd, const struct net_opts *opts)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) < 0)
        return -errno;
    return set_timeouts(fd, opts ? opts->timeout_ms : 0);
}

static int connect_with_timeout(int fd, const struct sockaddr *sa, socklen_t salen, int timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -errno;
    int rc = 0;
    if (connect(fd, sa, salen) < 0) {
        if (errno != EINPROGRESS)
            return -errno;
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int n;
        do
            n = poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ETIMEDOUT;
        int soerr = 0;
        socklen_t len = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
            return -errno;
        rc = -soerr;
    }
    if (rc == 0 && fcntl(fd, F_SETFL, flags) < 0)
        rc = -errno;
    return rc;
}

static int wrap(int fd, const struct net_opts *opts, struct net_conn **out)
{
    int rc = tune_socket(fd, opts);
    if (rc < 0)
        return rc;
    struct tcp_conn *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->base.transport = &net_tcp_transport;
    c->fd = fd;
    c->pipe[0] = c->pipe[1] = -1;
    *out = &c->base;
    return 0;
}

static int tcp_connect(const char *host, const char *port, const struct net_opts *opts,
                       struct net_conn **out)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return gai == EAI_SYSTEM ? -errno : -EHOSTUNREACH;

    int rc = -ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            rc = -errno;
            continue;
        }
        rc = 0;
        /* before connect: the window scale is agreed in the handshake */
        if (opts && opts->rcvbuf > 0 &&
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &opts->rcvbuf, sizeof opts->rcvbuf) < 0)
            rc = -errno;
        if (rc == 0)
            rc = connect_with_timeout(fd, ai->ai_addr, ai->ai_addrlen,
                                      opts ? opts->timeout_ms : 0);
        if (rc == 0)
            rc = wrap(fd, opts, out);
        if (rc == 0)
            break;
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

/* What a failed socket call means for the stream: a timeout or a lost peer. */
static int stream_errno(int err)
{
    return err == EAGAIN || err == EWOULDBLOCK ? -ETIMEDOUT
         : err == EPIPE ? -ECONNRESET : -err;
}

/* Send or receive all of a vector, 16 segments per call, on a private
 * copy of it: the caller's vector stays untouched. */
static int move_iov(struct tcp_conn *c, const struct iovec *iov_in, int iovcnt, int is_send)
{
    struct iovec iov[16];
    while (iovcnt > 0) {
        int n = iovcnt < 16 ? iovcnt : 16;
        memcpy(iov, iov_in, (size_t) n * sizeof *iov);
        struct iovec *cur = iov;
        int left = n;
        while (left > 0) {
            struct msghdr msg = { .msg_iov = cur, .msg_iovlen = (size_t) left };
            ssize_t done = is_send ? sendmsg(c->fd, &msg, MSG_NOSIGNAL)
                                   : recvmsg(c->fd, &msg, MSG_WAITALL);
            if (done < 0) {
                if (errno == EINTR)
                    continue;
                return stream_errno(errno);
            }
            if (done == 0 && !is_send && cur->iov_len > 0)
                return -ECONNRESET;
            while (left > 0 && (size_t) done >= cur->iov_len) {
                done -= (ssize_t) cur->iov_len;
                cur++;
                left--;
            }
            if (left > 0) {
                cur->iov_base = (char *) cur->iov_base + done;
                cur->iov_len -= (size_t) done;
            }
        }
        iov_in += n;
        iovcnt -= n;
    }
    return 0;
}

static int tcp_writev(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    return move_iov((struct tcp_conn *) conn, iov, iovcnt, 1);
}

static int tcp_readn(struct net_conn *conn, void *buf, size_t len)
{
    struct tcp_conn *c = (struct tcp_conn *) conn;
    char *p = buf;
    while (len > 0) {
        ssize_t got = recv(c->fd, p, len, MSG_WAITALL);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return stream_errno(errno);
        }
        if (got == 0)
            return -ECONNRESET;
        p += got;
        len -= (size_t) got;
    }
    return 0;
}

static int tcp_readv(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    return move_iov((struct tcp_conn *) conn, iov, iovcnt, 0);
}

static void tcp_shutdown(struct net_conn *conn)
{
    shutdown(((struct tcp_conn *) conn)->fd, SHUT_RDWR);
}

/* The peer's FIN (or a reset) has arrived; replies not yet read do not
 * hide it. */
static int tcp_peer_closed(struct net_conn *conn)
{
    struct pollfd p = { .fd = ((struct tcp_conn *) conn)->fd, .events = POLLRDHUP };
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void tcp_close(struct net_conn *conn)
{
    struct tcp_conn *c = (struct tcp_conn *) conn;
    close(c->fd);
    if (c->pipe[0] >= 0) {
        close(c->pipe[0]);
        close(c->pipe[1]);
    }
    free(c);
}

/* Empty the pipe into the file, or, once the file failed, into nothing. */
static int drain_pipe(struct tcp_conn *c, size_t inpipe, int fd, uint64_t *offset, int *file_err)
{
    char scratch[4096];
    while (inpipe > 0) {
        ssize_t m;
        if (!*file_err) {
            loff_t off = (loff_t) *offset;
            m = splice(c->pipe[0], NULL, fd, &off, inpipe, SPLICE_F_MOVE);
            if (m > 0)
                *offset = (uint64_t) off;
        } else {
            m = read(c->pipe[0], scratch, inpipe < sizeof scratch ? inpipe : sizeof scratch);
        }
        if (m < 0 && errno == EINTR)
            continue;
        if (m < 0 && !*file_err) {
            *file_err = errno;
            continue;
        }
        if (m <= 0)
            return -EIO;
        inpipe -= (size_t) m;
    }
    return 0;
}

/* Socket -> pipe -> file: the data never enters user space. */
static int tcp_recv_to_file(struct net_conn *conn, int fd, uint64_t offset, uint64_t len)
{
    struct tcp_conn *c = (struct tcp_conn *) conn;
    if (c->pipe[0] < 0) {
        if (pipe2(c->pipe, O_CLOEXEC) < 0)
            return -errno;
        fcntl(c->pipe[1], F_SETPIPE_SZ, 1 << 20);   /* best effort */
    }
    int file_err = fd < 0 ? EBADF : 0;
    while (len > 0) {
        ssize_t n = splice(c->fd, NULL, c->pipe[1], NULL, len < (1u << 20) ? len : (1u << 20),
                           SPLICE_F_MOVE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return stream_errno(errno);
        if (n == 0)
            return -ECONNRESET;
        len -= (uint64_t) n;
        int rc = drain_pipe(c, (size_t) n, fd, &offset, &file_err);
        if (rc < 0)
            return rc;
    }
    return file_err;
}

const struct net_transport net_tcp_transport = {
    .name = "tcp",
    .connect = tcp_connect,
    .writev = tcp_writev,
    .readn = tcp_readn,
    .close = tcp_close,
    .recv_to_file = tcp_recv_to_file,
    .readv = tcp_readv,
    .shutdown = tcp_shutdown,
    .peer_closed = tcp_peer_closed,
};

int net_tcp_listen(const char *addr, const char *port, int *listen_fd, int *bound_port)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE };
    struct addrinfo *res;
    int gai = getaddrinfo(addr, port, &hints, &res);
    if (gai != 0)
        return gai == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
    int rc = -EADDRNOTAVAIL;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            rc = -errno;
            continue;
        }
        int one = 1;
        struct sockaddr_storage ss;
        socklen_t sslen = sizeof ss;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
            bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0 &&
            getsockname(fd, (struct sockaddr *) &ss, &sslen) == 0) {
            *listen_fd = fd;
            *bound_port = ntohs(ss.ss_family == AF_INET6
                                ? ((struct sockaddr_in6 *) &ss)->sin6_port
                                : ((struct sockaddr_in *) &ss)->sin_port);
            rc = 0;
            break;
        }
        rc = -errno;
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

int net_tcp_wrap(int fd, const struct net_opts *opts, struct net_conn **out)
{
    return wrap(fd, opts, out);
}

int net_tcp_fd(const struct net_conn *c)
{
    return ((const struct tcp_conn *) c)->fd;
}
