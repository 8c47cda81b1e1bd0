#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unit_util.h"

#include "server/rfs_coll.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what, int err)
{
    fprintf(stderr, "unit_util: %s: %s\n", what, strerror(err));
    abort();
}

struct worker_arg {
    struct test_server *ts;
    int index;
};

/* As rfsd: the TLS handshake first if the server has TLS; the connection
 * that results is closed by test_server_stop. */
static void *worker(void *arg)
{
    struct worker_arg *w = arg;
    struct test_server *ts = w->ts;
    struct net_conn **conn = &ts->conns[w->index];
    int rc = 0;
    if (ts->tls && (rc = net_tls_accept(ts->tls, *conn, 5000, conn)) < 0)
        *conn = NULL;
    if (rc == 0)
        rfs_serve_connection(&ts->srv, *conn, "test-client");
    shutdown(ts->fds[w->index], SHUT_RDWR);
    free(w);
    return NULL;
}

static void *acceptor(void *arg)
{
    struct test_server *ts = arg;
    for (;;) {
        int fd = accept(ts->lfd, NULL, NULL);
        if (fd < 0)
            return NULL;        /* listening socket shut down */
        if (ts->nworkers == TEST_MAX_CONNS)
            die("too many test connections", EMFILE);
        struct net_opts opts = { .timeout_ms = 0 };
        struct worker_arg *w = calloc(1, sizeof *w);
        w->ts = ts;
        w->index = ts->nworkers;
        ts->fds[ts->nworkers] = fd;
        if (net_tcp_wrap(fd, &opts, &ts->conns[ts->nworkers]) < 0)
            die("net_tcp_wrap", errno);
        int rc = pthread_create(&ts->workers[ts->nworkers++], NULL, worker, w);
        if (rc != 0)
            die("pthread_create", rc);
    }
}

void test_server_start(struct test_server *ts)
{
    test_server_start_secure(ts, NULL, NULL);
}

void test_server_start_secure(struct test_server *ts, const struct rfs_keyring *keys,
                              struct net_tls *tls)
{
    memset(ts, 0, sizeof *ts);
    ts->tls = tls;
    const char *tmp = getenv("TMPDIR");
    snprintf(ts->root, sizeof ts->root, "%s/rfs-unit-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(ts->root))
        die("mkdtemp", errno);
    int rc = rfs_server_init(&ts->srv, ts->root);
    if (rc < 0)
        die("rfs_server_init", -rc);
    ts->srv.keys = keys;
    ts->srv.coll_timeout_ms = 2000;
    if (rfs_coll_table_new(&ts->srv.coll, 64u << 20) < 0)
        die("rfs_coll_table_new", ENOMEM);
    int port;
    rc = net_tcp_listen("127.0.0.1", "0", &ts->lfd, &port);
    if (rc < 0)
        die("net_tcp_listen", -rc);
    snprintf(ts->port, sizeof ts->port, "%d", port);
    rc = pthread_create(&ts->acceptor, NULL, acceptor, ts);
    if (rc != 0)
        die("pthread_create", rc);
}

/* Connections a failed test left open are shut down, so no worker waits
 * for a peer that will never speak again. */
void test_server_stop(struct test_server *ts)
{
    shutdown(ts->lfd, SHUT_RDWR);
    pthread_join(ts->acceptor, NULL);
    close(ts->lfd);
    for (int i = 0; i < ts->nworkers; i++) {
        shutdown(ts->fds[i], SHUT_RDWR);
        pthread_join(ts->workers[i], NULL);
        net_close(ts->conns[i]);
    }
    rfs_coll_table_free(ts->srv.coll);
    rfs_server_fini(&ts->srv);
    remove_tree(ts->root);
}

const char *test_path(const struct test_server *ts, const char *rel, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", ts->root, rel);
    return buf;
}

uint8_t *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    fstat(fd, &st);
    uint8_t *buf = malloc((size_t) st.st_size + 1);
    size_t done = 0;
    while (done < (size_t) st.st_size) {
        ssize_t n = read(fd, buf + done, (size_t) st.st_size - done);
        if (n <= 0)
            break;
        done += (size_t) n;
    }
    close(fd);
    *len = done;
    return buf;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st;
    (void) flag;
    (void) ftw;
    return remove(path);
}

void clear_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char sub[8192];
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
    }
    if (d)
        closedir(d);
}

void remove_tree(const char *path)
{
    nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
