/*
 * The rdma: driver's data path without MPI: a file striped over rfsd
 * --rdma servers through adio/stripe with the verbs transport. A strided
 * view (runs of 1000 bytes every 2500) written by naive, list and
 * datatype I/O, read back by every method, and the whole file read
 * contiguously against the expected bytes.
 *   stripe_verbs_client HOST:PORT,HOST:PORT,...
 * Prints one line per check and "checks: N passed, N failed".
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "verbs/net_verbs.h"
#include "../fill_random.h"
#include "stripe/stripe_file.h"

static int passed, failed;

static void check(int ok, const char *what, int method)
{
    printf("%s: %s (method %d)\n", ok ? "ok" : "FAIL", what, method);
    if (ok)
        passed++;
    else
        failed++;
}

static void one_method(const struct stripe_servers *sv, struct dtype *t, const uint8_t *enc,
                       size_t enc_len, int m)
{
    const uint64_t ninst = 4, data = ninst * (uint64_t) t->size;
    const uint64_t fsize = (ninst - 1) * (uint64_t) t->extent + (uint64_t) t->true_ub;
    uint8_t *src = malloc(data), *dst = malloc(data), *expect = calloc(1, fsize);
    uint8_t *whole = malloc(fsize);
    struct stripe_view v = { .type = t, .disp = 0, .enc = enc, .enc_len = enc_len };
    struct stripe_view contig = { 0 };
    struct stripe_file f;
    struct stripe_open_args a = { .connect = { .transport = &net_verbs_transport,
                                               .net.timeout_ms = 30000 },
                                  .flags = RFS_O_RDWR | RFS_O_CREAT, .mode = 0644,
                                  .unit = 65536, .factor = sv->n };
    char name[16];
    uint64_t moved = 0;
    snprintf(name, sizeof name, "/sv%d", m);
    fill_random(src, data, (unsigned) m + 1);
    check(stripe_open(&f, sv, name, &a) == 0, "open striped file over verbs", m);
    check(stripe_io(&f, (enum stripe_method) m, &v, 0, data, (char *) src, 1, &moved) == 0 &&
          moved == data, "write through the view", m);
    for (int r = STRIPE_NAIVE; r < STRIPE_METHODS; r++) {
        memset(dst, 0xee, data);
        int rc = stripe_io(&f, (enum stripe_method) r, &v, 0, data, (char *) dst, 0, &moved);
        check(rc == 0 && moved == data && memcmp(dst, src, data) == 0,
              r == STRIPE_NAIVE ? "read back naive" : r == STRIPE_LIST ? "read back list"
                                                                         : "read back datatype", m);
    }
    struct dtype_iter it;
    int64_t off, len, at = 0;
    dtype_iter_init(&it, t, (int64_t) ninst, 0, 0, (int64_t) data);
    while (dtype_iter_next(&it, &off, &len)) {
        memcpy(expect + off, src + at, (size_t) len);
        at += len;
    }
    int rc = stripe_io(&f, STRIPE_LIST, &contig, 0, fsize, (char *) whole, 0, &moved);
    check(rc == 0 && moved == fsize && memcmp(whole, expect, fsize) == 0,
          "whole file read contiguously equals the view's placement", m);
    struct net_verbs_stats s, sum = { 0 };
    for (uint32_t i = 0; i < stripe_slots(&f); i++) {
        if (!f.obj[i].client)
            continue;
        net_verbs_stats(f.obj[i].client->conn, &s);
        sum.eager_msgs += s.eager_msgs;
        sum.rendezvous += s.rendezvous;
        sum.rdma_wrs += s.rdma_wrs;
        sum.rdma_read_bytes += s.rdma_read_bytes;
        sum.rdma_write_bytes += s.rdma_write_bytes;
        sum.registrations += s.registrations;
    }
    printf("method %d: %lu eager, %lu rendezvous, %lu RDMA WRs, %lu KiB read and %lu KiB "
           "written by RDMA, %lu registrations\n", m, (unsigned long) sum.eager_msgs,
           (unsigned long) sum.rendezvous, (unsigned long) sum.rdma_wrs,
           (unsigned long) (sum.rdma_read_bytes >> 10), (unsigned long) (sum.rdma_write_bytes >> 10),
           (unsigned long) sum.registrations);
    check(stripe_close(&f) == 0, "close", m);
    check(stripe_unlink(&a.connect, sv, name) == 0, "unlink", m);
    free(src);
    free(dst);
    free(expect);
    free(whole);
}

int main(int argc, char **argv)
{
    struct stripe_servers sv;
    if (argc != 2 || stripe_servers_parse(argv[1], &sv) != 0) {
        fprintf(stderr, "usage: stripe_verbs_client HOST:PORT,HOST:PORT,...\n");
        return 2;
    }
    struct dtype *t = dtype_vector(512, 1000, 2500, NULL);
    size_t enc_len = dtype_serialize(t, NULL);
    uint8_t *enc = malloc(enc_len);
    dtype_serialize(t, enc);
    for (int m = STRIPE_NAIVE; m < STRIPE_METHODS; m++)
        one_method(&sv, t, enc, enc_len, m);
    dtype_free(t);
    free(enc);
    printf("checks: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
