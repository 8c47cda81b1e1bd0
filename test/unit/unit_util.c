#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unit_util.h"

#include "server/rfs_coll.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
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

/* Workers kept: fewer than the tests' connections, so that the pool hands
 * connections over and grows while requests wait (locks, collectives). */
#define TEST_THREADS 2

static void on_usr1(int sig)
{
    (void) sig;
}

static void *run_loop(void *arg)
{
    rfs_loop_run(arg);
    return NULL;
}

static void start_loop(struct test_server *ts)
{
    struct rfs_loop_opts lo = { .max_conns = 1024, .threads = TEST_THREADS, .max_threads = 256,
                                .auth_timeout_ms = 10000, .tls = ts->tls };
    int rc = rfs_loop_new(&ts->srv, &lo, ts->lfd, NULL, &ts->loop);
    if (rc < 0)
        die("rfs_loop_new", -rc);
    rc = pthread_create(&ts->runner, NULL, run_loop, ts->loop);
    if (rc != 0)
        die("pthread_create", rc);
}

static void stop_loop(struct test_server *ts)
{
    rfs_loop_stop(ts->loop);
    pthread_join(ts->runner, NULL);
    rfs_loop_free(ts->loop);
}

void test_server_start(struct test_server *ts)
{
    test_server_start_secure(ts, NULL, NULL);
}

void test_server_start_secure(struct test_server *ts, const struct rfs_keyring *keys,
                              struct net_tls *tls)
{
    memset(ts, 0, sizeof *ts);
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
    /* rfs_loop interrupts workers' lock waits with SIGUSR1 when it stops. */
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    ts->tls = tls;
    start_loop(ts);
}

void test_server_restart(struct test_server *ts)
{
    stop_loop(ts);
    start_loop(ts);
}

void test_server_pause(struct test_server *ts)
{
    stop_loop(ts);
    ts->paused = 1;
}

void test_server_resume(struct test_server *ts)
{
    start_loop(ts);
    ts->paused = 0;
}

/* Connections a failed test left open are shut down by the loop, so no
 * worker waits for a peer that will never speak again. */
void test_server_stop(struct test_server *ts)
{
    if (!ts->paused)
        stop_loop(ts);
    close(ts->lfd);
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
