/*
 * A plain C client of rfsd --rdma over the verbs transport: open, pwrite,
 * pread, fstat, a file view (vwrite, vread), pipelined requests, unlink;
 * every byte checked through the protocol and in the server's file.
 *   rfs_verbs_client HOST PORT ROOT    (ROOT: rfsd's export directory)
 * Prints one line per check and "checks: N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"
#include "verbs/net_verbs.h"
#include "../fill_random.h"
#include "proto/rfs_client.h"

static int passed, failed;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (ok)
        passed++;
    else
        failed++;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t) n : 1);
    *len = p && fread(p, 1, (size_t) n, f) == (size_t) n ? (size_t) n : 0;
    fclose(f);
    return p;
}

/* Contiguous: 9 MiB (pieces of 1 MiB in flight) and 100 bytes (eager). */
static void contiguous(struct rfs_client *c, const char *root)
{
    size_t n = 9u << 20;
    uint8_t *src = malloc(n), *dst = calloc(1, n);
    fill_random(src, n, 1);
    struct rfs_stat st;
    check(rfs_open(c, 0, "verbs_contig", RFS_O_RDWR | RFS_O_CREAT, 0644, &st) == RFS_OK,
          "open (create)");
    check(rfs_pwrite(c, 0, src, n, 0) == RFS_OK, "pwrite 9 MiB");
    check(rfs_pwrite(c, 0, "0123456789", 10, n) == RFS_OK, "pwrite 10 bytes at the end");
    uint64_t done = 0;
    check(rfs_pread(c, 0, dst, n, 0, &done) == RFS_OK && done == n, "pread 9 MiB");
    check(memcmp(src, dst, n) == 0, "9 MiB read back equal");
    char tail[16] = { 0 };
    check(rfs_pread(c, 0, tail, sizeof tail, n, &done) == RFS_OK && done == 10 &&
          memcmp(tail, "0123456789", 10) == 0, "short read at end of file");
    check(rfs_fstat(c, 0, &st) == RFS_OK && st.size == n + 10, "fstat size");
    check(rfs_close(c, 0) == RFS_OK, "close");
    char path[4096];
    size_t flen = 0;
    snprintf(path, sizeof path, "%s/verbs_contig", root);
    uint8_t *disk = slurp(path, &flen);
    check(disk && flen == n + 10 && memcmp(disk, src, n) == 0, "file on the server equal");
    free(disk);
    free(src);
    free(dst);
}

/* A view of every other 4 KiB block: VWRITE then VREAD of 3 MiB of data. */
static void view(struct rfs_client *c, const char *root)
{
    struct dtype *ft = dtype_resize(dtype_bytes(4096), 0, 8192);
    size_t enc_len = dtype_serialize(ft, NULL);
    uint8_t *enc = malloc(enc_len);
    dtype_serialize(ft, enc);
    size_t n = 3u << 20;
    uint8_t *src = malloc(n), *dst = calloc(1, n);
    fill_random(src, n, 2);
    struct rfs_stat st;
    check(rfs_open(c, 1, "verbs_view", RFS_O_RDWR | RFS_O_CREAT, 0644, &st) == RFS_OK,
          "open view file");
    check(rfs_set_view(c, 1, 0, enc, enc_len) == RFS_OK, "set view");
    check(rfs_vwrite(c, 1, src, n, 0) == RFS_OK, "vwrite 3 MiB through the view");
    uint64_t done = 0;
    check(rfs_vread(c, 1, dst, n, 0, &done) == RFS_OK && done == n, "vread 3 MiB");
    check(memcmp(src, dst, n) == 0, "view data read back equal");
    check(rfs_close(c, 1) == RFS_OK, "close view file");
    char path[4096];
    size_t flen = 0;
    snprintf(path, sizeof path, "%s/verbs_view", root);
    uint8_t *disk = slurp(path, &flen);
    int ok = disk && flen == 2 * n - 4096;
    for (size_t b = 0; ok && b < n / 4096; b++)
        ok = memcmp(disk + 2 * b * 4096, src + b * 4096, 4096) == 0;
    check(ok, "view blocks in the right places of the server's file");
    free(disk);
    free(src);
    free(dst);
    free(enc);
    dtype_free(ft);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: rfs_verbs_client HOST PORT ROOT\n");
        return 2;
    }
    struct rfs_client c;
    int rc = rfs_client_connect(&c, &net_verbs_transport, argv[1], argv[2], 30000);
    check(rc == 0, "connect over verbs");
    if (rc == 0) {
        contiguous(&c, argv[3]);
        view(&c, argv[3]);
        check(rfs_unlink(&c, "verbs_contig") == RFS_OK, "unlink");
        struct net_verbs_stats s;
        net_verbs_stats(c.conn, &s);
        printf("client: %lu eager, %lu rendezvous, %lu RDMA WRs (%lu SGEs, max %u), "
               "%lu MiB written, %lu MiB read by RDMA, %lu registrations\n",
               (unsigned long) s.eager_msgs, (unsigned long) s.rendezvous,
               (unsigned long) s.rdma_wrs, (unsigned long) s.rdma_sges, s.rdma_max_sge,
               (unsigned long) (s.rdma_write_bytes >> 20), (unsigned long) (s.rdma_read_bytes >> 20),
               (unsigned long) s.registrations);
        check(s.rendezvous > 0 && s.eager_msgs > 0, "both eager and rendezvous used");
        rfs_client_close(&c);
    }
    printf("checks: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
