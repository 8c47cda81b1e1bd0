/* Extent leases against the real request engine over loopback: a read,
 * a write, a truncation and another owner's lease on leased bytes wait
 * until the owner's drain releases them (and see its data), the holder's
 * handle closing ends them (a waiting read learns its bytes were lost),
 * and a holder that never lands them fails the waiter after the server's
 * lease timeout. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/rfs_client.h"
#include "unit_util.h"

#define OWNER_A 7
#define OWNER_B 9

static struct test_server ts;

static int setup(void **state)
{
    (void) state;
    test_server_start(&ts);
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    test_server_stop(&ts);
    return 0;
}

static void open_on(struct rfs_client *c, const char *path, uint32_t flags)
{
    struct rfs_stat st;
    assert_int_equal(rfs_client_connect(c, &net_tcp_transport, "127.0.0.1", ts.port, 10000), 0);
    assert_int_equal(rfs_open(c, 0, path, flags, 0644, &st), RFS_OK);
}

/* owner's lease `id` on [offset, offset + len) */
static int take(struct rfs_client *c, uint64_t owner, uint64_t id, uint64_t offset, uint64_t len)
{
    struct rfs_lease_args a = { .owner = owner, .id = id, .offset = offset, .length = len };
    return rfs_lease(c, 0, RFS_LEASE_TAKE, &a);
}

static int release(struct rfs_client *c, uint64_t owner, uint64_t upto)
{
    struct rfs_lease_args a = { .owner = owner, .id = upto };
    return rfs_lease(c, 0, RFS_LEASE_RELEASE, &a);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* A request on another connection, run by a thread: it may wait. */
struct waiter {
    struct rfs_client *c;
    enum { READ, TRUNCATE, TAKE } what;
    uint64_t offset, len;
    uint8_t got[64];
    int status;
    double seconds;
    atomic_int done;
    pthread_t thread;
};

static void *waiter_run(void *arg)
{
    struct waiter *w = arg;
    uint64_t n;
    double t0 = now();
    switch (w->what) {
    case READ:
        w->status = rfs_pread(w->c, 0, w->got, w->len, w->offset, &n);
        break;
    case TRUNCATE:
        w->status = rfs_ftruncate(w->c, 0, w->offset);
        break;
    case TAKE:
        w->status = take(w->c, OWNER_B, 1, w->offset, w->len);
        break;
    }
    w->seconds = now() - t0;
    atomic_store(&w->done, 1);
    return NULL;
}

static void start_waiter(struct waiter *w, struct rfs_client *c, int what, uint64_t offset,
                         uint64_t len)
{
    memset(w, 0, sizeof *w);
    *w = (struct waiter) { .c = c, .what = what, .offset = offset, .len = len };
    assert_int_equal(pthread_create(&w->thread, NULL, waiter_run, w), 0);
}

/* The waiter is still held after a while. */
static void still_waiting(struct waiter *w)
{
    usleep(150 * 1000);
    assert_int_equal(atomic_load(&w->done), 0);
}

static void finish(struct waiter *w, int status)
{
    pthread_join(w->thread, NULL);
    assert_int_equal(w->status, status);
}

static void test_read_waits_for_the_drain(void **state)
{
    (void) state;
    struct rfs_client holder, drain, reader;
    struct waiter w;
    uint8_t old[300], fresh[100], got[100];
    memset(old, 'o', sizeof old);
    memset(fresh, 'n', sizeof fresh);
    open_on(&holder, "/f", RFS_O_RDWR | RFS_O_CREAT);
    open_on(&drain, "/f", RFS_O_WRONLY);
    open_on(&reader, "/f", RFS_O_RDWR);
    assert_int_equal(rfs_pwrite(&reader, 0, old, sizeof old, 0), RFS_OK);
    assert_int_equal(rfs_lease(&drain, 0, RFS_LEASE_DRAIN, NULL), RFS_OK);
    assert_int_equal(take(&holder, OWNER_A, 1, 100, 100), RFS_OK);

    /* bytes beside the lease are served at once */
    uint64_t n;
    assert_int_equal(rfs_pread(&reader, 0, got, 100, 0, &n), RFS_OK);
    assert_memory_equal(got, old, 100);
    /* a read of leased bytes waits for the drain's data and its release;
     * the drain's own write does not wait */
    start_waiter(&w, &reader, READ, 150, 10);
    still_waiting(&w);
    assert_int_equal(rfs_pwrite(&drain, 0, fresh, sizeof fresh, 100), RFS_OK);
    still_waiting(&w);
    assert_int_equal(release(&drain, OWNER_A, 1), RFS_OK);
    finish(&w, RFS_OK);
    assert_memory_equal(w.got, fresh, 10);

    /* a write waits too, and lands after the drain's */
    assert_int_equal(take(&holder, OWNER_A, 2, 100, 100), RFS_OK);
    start_waiter(&w, &reader, TRUNCATE, 120, 0);
    still_waiting(&w);
    assert_int_equal(release(&drain, OWNER_A, 2), RFS_OK);
    finish(&w, RFS_OK);
    struct rfs_stat st;
    assert_int_equal(rfs_fstat(&reader, 0, &st), RFS_OK);
    assert_int_equal(st.size, 120);
    rfs_client_close(&holder);
    rfs_client_close(&drain);
    rfs_client_close(&reader);
}

static void test_owners_take_in_turn(void **state)
{
    (void) state;
    struct rfs_client a, b, drain;
    struct waiter w;
    open_on(&a, "/g", RFS_O_RDWR | RFS_O_CREAT);
    open_on(&b, "/g", RFS_O_RDWR);
    open_on(&drain, "/g", RFS_O_WRONLY);
    assert_int_equal(take(&a, OWNER_A, 1, 0, 100), RFS_OK);
    start_waiter(&w, &b, TAKE, 50, 10);
    still_waiting(&w);
    /* the same owner is not held back by its own lease, which grows */
    assert_int_equal(take(&a, OWNER_A, 2, 90, 200), RFS_OK);
    assert_int_equal(release(&drain, OWNER_A, 1), RFS_OK);
    still_waiting(&w);          /* the merged lease is number 2 */
    assert_int_equal(release(&drain, OWNER_A, 2), RFS_OK);
    finish(&w, RFS_OK);
    /* now B holds [50, 60): A waits for it in turn */
    start_waiter(&w, &a, READ, 55, 1);
    still_waiting(&w);
    assert_int_equal(release(&drain, OWNER_B, 1), RFS_OK);
    finish(&w, RFS_OK);
    /* the leases of one collective write do not hold each other back (its
     * processes write their own bytes, their spans interleave); another
     * call's do */
    struct rfs_lease_args ca = { .owner = OWNER_A, .id = 3, .call = 42, .offset = 1000,
                                 .length = 100 };
    struct rfs_lease_args cb = { .owner = OWNER_B, .id = 2, .call = 42, .offset = 1050,
                                 .length = 100 };
    assert_int_equal(rfs_lease(&a, 0, RFS_LEASE_TAKE, &ca), RFS_OK);
    assert_int_equal(rfs_lease(&b, 0, RFS_LEASE_TAKE, &cb), RFS_OK);
    start_waiter(&w, &b, TAKE, 1090, 1);      /* B outside the call: A's holds it */
    still_waiting(&w);
    assert_int_equal(release(&drain, OWNER_A, 3), RFS_OK);
    finish(&w, RFS_OK);
    rfs_client_close(&a);
    rfs_client_close(&b);
    rfs_client_close(&drain);
}

/* A holder that goes before its bytes landed (its handle closed, its
 * connection ended): a waiting read fails with LOST, a waiting
 * truncation goes on, and later reads are served. */
static void test_holder_gone(void **state)
{
    (void) state;
    struct rfs_client holder, reader;
    struct waiter w;
    uint8_t got[10];
    uint64_t n;
    open_on(&holder, "/h", RFS_O_RDWR | RFS_O_CREAT);
    open_on(&reader, "/h", RFS_O_RDWR);
    assert_int_equal(take(&holder, OWNER_A, 1, 0, 10), RFS_OK);
    start_waiter(&w, &reader, READ, 0, 10);
    still_waiting(&w);
    assert_int_equal(rfs_close(&holder, 0), RFS_OK);    /* its handle's leases end */
    finish(&w, RFS_E_LOST);
    assert_int_equal(rfs_pread(&reader, 0, got, 10, 0, &n), RFS_OK);
    /* and with the connection; a truncation goes on */
    struct rfs_stat st;
    assert_int_equal(rfs_open(&holder, 0, "/h", RFS_O_RDWR, 0, &st), RFS_OK);
    assert_int_equal(take(&holder, OWNER_A, 2, 0, 10), RFS_OK);
    start_waiter(&w, &reader, TRUNCATE, 5, 0);
    still_waiting(&w);
    rfs_client_close(&holder);
    finish(&w, RFS_OK);
    rfs_client_close(&reader);
}

static void test_timeout_and_refusals(void **state)
{
    (void) state;
    struct rfs_client holder, other, ro;
    test_server_pause(&ts);     /* no worker reads the setting meanwhile */
    ts.srv.lease_timeout_ms = 300;
    test_server_resume(&ts);
    open_on(&holder, "/t", RFS_O_RDWR | RFS_O_CREAT);
    open_on(&other, "/t", RFS_O_RDWR);
    open_on(&ro, "/t", RFS_O_RDONLY);
    assert_int_equal(take(&holder, OWNER_A, 1, 100, 100), RFS_OK);
    uint8_t got[10];
    uint64_t n;
    double t0 = now();
    assert_int_equal(rfs_pread(&other, 0, got, 10, 150, &n), RFS_E_HELD);
    assert_true(now() - t0 >= 0.29);
    assert_int_equal(take(&other, OWNER_B, 1, 199, 1), RFS_E_HELD);
    assert_int_equal(rfs_ftruncate(&other, 0, 150), RFS_E_HELD);
    assert_int_equal(rfs_ftruncate(&other, 0, 200), RFS_OK);    /* beyond the lease */
    assert_int_equal(take(&other, OWNER_B, 1, 200, 0), RFS_OK);
    /* a read-only handle cannot lease, an unknown kind is refused */
    assert_int_equal(take(&ro, OWNER_B, 1, 0, 1), RFS_E_BADF);
    struct rfs_lease_args none = { .length = 1 };
    assert_int_equal(rfs_lease(&other, 0, 9, &none), RFS_E_INVAL);
    assert_int_equal(rfs_lease(&other, 0, RFS_LEASE_TAKE, &none), RFS_E_INVAL);    /* no owner */
    rfs_client_close(&holder);
    rfs_client_close(&other);
    rfs_client_close(&ro);
    test_server_pause(&ts);
    ts.srv.lease_timeout_ms = RFS_LEASE_TIMEOUT_MS_DEFAULT;
    test_server_resume(&ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_waits_for_the_drain),
        cmocka_unit_test(test_owners_take_in_turn),
        cmocka_unit_test(test_holder_gone),
        cmocka_unit_test(test_timeout_and_refusals),
    };
    return cmocka_run_group_tests_name("lease", tests, setup, teardown);
}
