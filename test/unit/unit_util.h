/* Helpers of the unit tests: a temporary export root and an rfs server
 * on a free loopback port, served by rfsd's event loop (rfs_loop.h) with
 * few workers, so that every test exercises its hand-offs. */
#ifndef UNIT_UTIL_H_INCLUDED
#define UNIT_UTIL_H_INCLUDED

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "server/rfs_loop.h"
#include "server/rfs_server.h"
#include "../fill_random.h"

/* Skip the running test (cmocka's skip()), saying why: test/run-unit.sh
 * prints the reason and counts the test as skipped. */
#define skip_because(why)                                                     \
    do {                                                                      \
        print_message("skipped: %s\n", why);                                  \
        skip();                                                               \
    } while (0)

struct test_server {
    struct rfs_server srv;
    char root[4096];
    char port[16];
    int lfd;
    struct net_tls *tls;
    struct rfs_loop *loop;
    pthread_t runner;           /* rfs_loop_run */
    int paused;                 /* test_server_pause: no loop */
};

void test_server_start(struct test_server *ts);
/* Clients must authenticate with a key of KEYS (NULL: not) and speak TLS
 * with the server configuration TLS (NULL: plain TCP). */
void test_server_start_secure(struct test_server *ts, const struct rfs_keyring *keys,
                              struct net_tls *tls);
void test_server_stop(struct test_server *ts);
/* Every connection closed, as by a restart of the server or its idle
 * timeout; the same port and export serve again at once. */
void test_server_restart(struct test_server *ts);
/* Every connection closed and nothing served (connections are taken into
 * the listen backlog and time out) until resumed, on the same port and
 * export: a server lost and back with what it held. */
void test_server_pause(struct test_server *ts);
void test_server_resume(struct test_server *ts);
/* root/relpath into buf */
const char *test_path(const struct test_server *ts, const char *rel, char *buf, size_t len);
/* Whole file content, malloc'ed; *len gets its size. NULL if missing. */
uint8_t *read_file(const char *path, size_t *len);
void remove_tree(const char *path);
/* Remove what is in a directory, not the directory. */
void clear_dir(const char *path);

#endif
