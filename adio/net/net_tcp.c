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
        rc = connect_with_timeout(fd, ai->ai_addr, ai->ai_addrlen, opts ? opts->timeout_ms : 0);
        if (rc == 0)
            rc = wrap(fd, opts, out);
        if (rc == 0)
            break;
        close(fd);
    }
    freeaddrinfo(res);
    return rc;
}

static int tcp_writev(struct net_conn *conn, const struct iovec *iov_in, int iovcnt)
{
    struct tcp_conn *c = (struct tcp_conn *) conn;
    struct iovec iov[16];
    while (iovcnt > 0) {
        /* Work on a private copy: the caller's vector stays untouched. */
        int n = iovcnt < 16 ? iovcnt : 16;
        memcpy(iov, iov_in, (size_t) n * sizeof *iov);
        struct iovec *cur = iov;
        int left = n;
        while (left > 0) {
            struct msghdr msg = { .msg_iov = cur, .msg_iovlen = (size_t) left };
            ssize_t sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
            if (sent < 0) {
                if (errno == EINTR)
                    continue;
                return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT
                    : errno == EPIPE ? -ECONNRESET : -errno;
            }
            while (left > 0 && (size_t) sent >= cur->iov_len) {
                sent -= (ssize_t) cur->iov_len;
                cur++;
                left--;
            }
            if (left > 0) {
                cur->iov_base = (char *) cur->iov_base + sent;
                cur->iov_len -= (size_t) sent;
            }
        }
        iov_in += n;
        iovcnt -= n;
    }
    return 0;
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
            return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
        }
        if (got == 0)
            return -ECONNRESET;
        p += got;
        len -= (size_t) got;
    }
    return 0;
}

static void tcp_close(struct net_conn *conn)
{
    struct tcp_conn *c = (struct tcp_conn *) conn;
    close(c->fd);
    free(c);
}

const struct net_transport net_tcp_transport = {
    .name = "tcp",
    .connect = tcp_connect,
    .writev = tcp_writev,
    .readn = tcp_readn,
    .close = tcp_close,
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
