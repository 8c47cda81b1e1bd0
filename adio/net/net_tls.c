/*
 * TLS 1.3 over the TCP transport (net.h), with OpenSSL: the RFS paper's
 * point that users pick their transport, for links that cross sites. The
 * socket under it keeps the TCP transport's timeouts, so a read that times
 * out inside OpenSSL still ends as -ETIMEDOUT.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "net/net.h"
#include "net/net_time.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* Small pieces of a writev (headers, fixed parts) are gathered into one
 * record instead of one record each. */
#define TLS_GATHER 16384

struct net_tls {
    SSL_CTX *ctx;
    int is_server;
};

struct tls_conn {
    struct net_conn base;
    struct net_conn *tcp;
    SSL *ssl;
    uint8_t gather[TLS_GATHER];
};

static int failf(char *err, size_t errlen, int rc, const char *what)
{
    unsigned long e = ERR_get_error();
    snprintf(err, errlen, "%s: %s", what, e ? ERR_reason_error_string(e) : "failed");
    ERR_clear_error();
    return rc;
}

static int new_ctx(const SSL_METHOD *method, struct net_tls **out, int is_server)
{
    struct net_tls *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->ctx = SSL_CTX_new(method);
    if (!t->ctx || !SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION)) {
        SSL_CTX_free(t->ctx);
        free(t);
        return -ENOMEM;
    }
    t->is_server = is_server;
    *out = t;
    return 0;
}

int net_tls_client_new(const char *ca_file, int verify, struct net_tls **out, char *err,
                       size_t errlen)
{
    struct net_tls *t;
    int rc = new_ctx(TLS_client_method(), &t, 0);
    if (rc < 0)
        return failf(err, errlen, rc, "TLS client set-up");
    if (verify) {
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
        int ok = ca_file ? SSL_CTX_load_verify_locations(t->ctx, ca_file, NULL)
                         : SSL_CTX_set_default_verify_paths(t->ctx);
        if (!ok) {
            net_tls_free(t);
            return failf(err, errlen, -EINVAL, ca_file ? ca_file : "system trust store");
        }
    }
    *out = t;
    return 0;
}

int net_tls_server_new(const char *cert_file, const char *key_file, struct net_tls **out,
                       char *err, size_t errlen)
{
    struct net_tls *t;
    int rc = new_ctx(TLS_server_method(), &t, 1);
    if (rc < 0)
        return failf(err, errlen, rc, "TLS server set-up");
    const char *what = NULL;
    if (SSL_CTX_use_certificate_chain_file(t->ctx, cert_file) != 1)
        what = cert_file;
    else if (SSL_CTX_use_PrivateKey_file(t->ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
             SSL_CTX_check_private_key(t->ctx) != 1)
        what = key_file;
    if (what) {
        net_tls_free(t);
        return failf(err, errlen, -EINVAL, what);
    }
    *out = t;
    return 0;
}

void net_tls_free(struct net_tls *tls)
{
    if (!tls)
        return;
    SSL_CTX_free(tls->ctx);
    free(tls);
}

/* What a failed SSL call means for the stream (net.h's errno values). */
static int tls_errno(SSL *ssl, int ret)
{
    int e = SSL_get_error(ssl, ret), sys = errno;
    ERR_clear_error();
    if (e == SSL_ERROR_ZERO_RETURN)
        return -ECONNRESET;
    if (e == SSL_ERROR_SYSCALL)
        return sys == EAGAIN || sys == EWOULDBLOCK ? -ETIMEDOUT
             : sys == 0 || sys == EPIPE ? -ECONNRESET : -sys;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return -ETIMEDOUT;
    return -EPROTO;
}

/*
 * OpenSSL's socket BIO writes with write(), and a peer that went away
 * raises SIGPIPE, which would kill the application: this BIO is the socket
 * BIO with send(MSG_NOSIGNAL) for writes (the TCP transport's way).
 */
static BIO_METHOD *nosigpipe_method;
static pthread_once_t nosigpipe_once = PTHREAD_ONCE_INIT;

static int nosigpipe_write(BIO *b, const char *buf, int len)
{
    int fd = -1;
    BIO_get_fd(b, &fd);
    ssize_t n = send(fd, buf, (size_t) len, MSG_NOSIGNAL);
    BIO_clear_retry_flags(b);
    if (n < 0 && BIO_sock_should_retry((int) n))
        BIO_set_retry_write(b);
    return (int) n;
}

/* OpenSSL 3.5 deprecates the BIO_meth_get_* getters, with nothing in their
 * place: they still work, and the copy of the socket BIO's methods is what
 * keeps this BIO the socket BIO but for its writes. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void nosigpipe_init(void)
{
    const BIO_METHOD *sock = BIO_s_socket();
    BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOCKET, "rfs socket");
    if (m && BIO_meth_set_write(m, nosigpipe_write) && BIO_meth_set_read(m, BIO_meth_get_read(sock)) &&
        BIO_meth_set_puts(m, BIO_meth_get_puts(sock)) &&
        BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(sock)) &&
        BIO_meth_set_create(m, BIO_meth_get_create(sock)) &&
        BIO_meth_set_destroy(m, BIO_meth_get_destroy(sock))) {
        nosigpipe_method = m;
        return;
    }
    BIO_meth_free(m);
}
#pragma GCC diagnostic pop

static BIO *socket_bio(int fd)
{
    pthread_once(&nosigpipe_once, nosigpipe_init);
    BIO *b = nosigpipe_method ? BIO_new(nosigpipe_method) : NULL;
    if (b)
        BIO_set_fd(b, fd, BIO_NOCLOSE);
    return b;
}

static int tls_wrap(struct net_tls *tls, struct net_conn *tcp, struct tls_conn **out)
{
    struct tls_conn *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->base.transport = &net_tls_transport;
    c->tcp = tcp;
    c->ssl = SSL_new(tls->ctx);
    BIO *b = c->ssl ? socket_bio(net_tcp_fd(tcp)) : NULL;
    if (!b) {
        SSL_free(c->ssl);
        free(c);
        ERR_clear_error();
        return -ENOMEM;
    }
    SSL_set_bio(c->ssl, b, b);
    *out = c;
    return 0;
}

static void tls_free(struct tls_conn *c)
{
    SSL_free(c->ssl);
    net_close(c->tcp);
    free(c);
}

/* Check the certificate's name against the host we meant to reach. */
static int expect_peer_name(SSL *ssl, const char *host)
{
    unsigned char addr[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 ? 0 : -EINVAL;
    return SSL_set1_host(ssl, host) == 1 && SSL_set_tlsext_host_name(ssl, host) == 1 ? 0
                                                                                      : -EINVAL;
}

/* A handshake that fails on the certificate is a refusal, not a fault; a
 * server that hangs up on a ClientHello does not speak TLS. */
static int handshake_errno(SSL *ssl, int ret)
{
    if (SSL_get_verify_result(ssl) != X509_V_OK)
        return -EKEYREJECTED;
    int rc = tls_errno(ssl, ret);
    return rc == -ECONNRESET ? -EPROTO : rc;
}

static int tls_connect(const char *host, const char *port, const struct net_opts *opts,
                       struct net_conn **out)
{
    if (!opts || !opts->tls || opts->tls->is_server)
        return -EINVAL;
    struct net_conn *tcp;
    int rc = net_connect(&net_tcp_transport, host, port, opts, &tcp);
    if (rc < 0)
        return rc;
    struct tls_conn *c;
    if ((rc = tls_wrap(opts->tls, tcp, &c)) < 0) {
        net_close(tcp);
        return rc;
    }
    if (SSL_get_verify_mode(c->ssl) != SSL_VERIFY_NONE && (rc = expect_peer_name(c->ssl, host)) < 0) {
        tls_free(c);
        return rc;
    }
    int ret = SSL_connect(c->ssl);
    if (ret != 1) {
        rc = handshake_errno(c->ssl, ret);
        tls_free(c);
        return rc;
    }
    *out = &c->base;
    return 0;
}

/* The handshake on a non-blocking socket, waiting at most until deadline
 * (CLOCK_MONOTONIC, ms) in all: a peer sending a byte now and then must not
 * stretch it, as a per-receive timeout would let it. */
static int accept_by(struct tls_conn *c, int fd, int64_t deadline)
{
    for (;;) {
        ERR_clear_error();
        int ret = SSL_accept(c->ssl);
        if (ret == 1)
            return 0;
        int e = SSL_get_error(c->ssl, ret);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            return tls_errno(c->ssl, ret);
        int64_t left = deadline - net_monotonic_ms();
        struct pollfd p = { .fd = fd, .events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT };
        int n = left > 0 ? poll(&p, 1, (int) left) : 0;
        if (n == 0)
            return -ETIMEDOUT;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
}

int net_tls_accept(struct net_tls *tls, struct net_conn *tcp, int timeout_ms,
                   struct net_conn **out)
{
    struct tls_conn *c;
    int fd = net_tcp_fd(tcp);
    int rc = tls->is_server ? tls_wrap(tls, tcp, &c) : -EINVAL;
    if (rc < 0) {
        net_close(tcp);
        return rc;
    }
    int64_t deadline = net_monotonic_ms() + timeout_ms;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        rc = -errno;
    else {
        rc = accept_by(c, fd, deadline);
        if (fcntl(fd, F_SETFL, flags) < 0 && rc == 0)
            rc = -errno;
    }
    if (rc < 0) {
        tls_free(c);
        return rc;
    }
    *out = &c->base;
    return 0;
}

static int write_all(struct tls_conn *c, const void *buf, size_t len)
{
    while (len > 0) {
        size_t done = 0;
        int ret = SSL_write_ex(c->ssl, buf, len, &done);
        if (ret != 1)
            return tls_errno(c->ssl, ret);
        buf = (const char *) buf + done;
        len -= done;
    }
    return 0;
}

static int tls_writev(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    struct tls_conn *c = (struct tls_conn *) conn;
    size_t held = 0;
    int rc = 0;
    for (int i = 0; i < iovcnt && rc == 0; i++) {
        if (iov[i].iov_len <= TLS_GATHER - held) {
            memcpy(c->gather + held, iov[i].iov_base, iov[i].iov_len);
            held += iov[i].iov_len;
            continue;
        }
        if (held)
            rc = write_all(c, c->gather, held);
        held = 0;
        if (rc == 0)
            rc = write_all(c, iov[i].iov_base, iov[i].iov_len);
    }
    if (rc == 0 && held)
        rc = write_all(c, c->gather, held);
    return rc;
}

static int tls_readn(struct net_conn *conn, void *buf, size_t len)
{
    struct tls_conn *c = (struct tls_conn *) conn;
    char *p = buf;
    while (len > 0) {
        size_t got = 0;
        int ret = SSL_read_ex(c->ssl, p, len, &got);
        if (ret != 1)
            return tls_errno(c->ssl, ret);
        p += got;
        len -= got;
    }
    return 0;
}

static int tls_readv(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    int rc = 0;
    for (int i = 0; i < iovcnt && rc == 0; i++)
        rc = tls_readn(conn, iov[i].iov_base, iov[i].iov_len);
    return rc;
}

static void tls_shutdown(struct net_conn *conn)
{
    net_shutdown(((struct tls_conn *) conn)->tcp);
}

static void tls_close(struct net_conn *conn)
{
    struct tls_conn *c = (struct tls_conn *) conn;
    /* One close_notify, no wait for the peer's: the socket closes next. */
    if (SSL_is_init_finished(c->ssl))
        SSL_shutdown(c->ssl);
    ERR_clear_error();
    tls_free(c);
}

static int tls_binding(struct net_conn *conn, uint8_t *out, size_t len)
{
    static const char label[] = "EXPORTER-rfs-authentication";
    struct tls_conn *c = (struct tls_conn *) conn;
    if (SSL_export_keying_material(c->ssl, out, len, label, sizeof label - 1, NULL, 0, 0) != 1) {
        ERR_clear_error();
        return -EPROTO;
    }
    return 0;
}

static int tls_buffered(struct net_conn *conn)
{
    return SSL_has_pending(((struct tls_conn *) conn)->ssl);
}

/* The TCP connection's end: the server's close_notify comes with it. */
static int tls_peer_closed(struct net_conn *conn)
{
    return net_peer_closed(((struct tls_conn *) conn)->tcp);
}

const struct net_transport net_tls_transport = {
    .name = "tls",
    .connect = tls_connect,
    .writev = tls_writev,
    .readn = tls_readn,
    .readv = tls_readv,
    .shutdown = tls_shutdown,
    .close = tls_close,
    .binding = tls_binding,
    .buffered = tls_buffered,
    .peer_closed = tls_peer_closed,
};
