/*
 * rfsd under many clients at once (no MPI): each thread connects, writes a
 * file of its own and its slice of a shared file, syncs, reads both back
 * and checks every byte.
 *
 *   rfs_clients PORT CLIENTS BYTES_PER_CLIENT
 *   rfs_clients PORT hold PATH      lock PATH, say "locked", write forever
 *   rfs_clients PORT lock PATH SECS lock PATH within SECS (after a holder died)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/rfs_client.h"

static const char *port;
static uint64_t bytes;

static unsigned char pattern(uint64_t off, unsigned seed)
{
    return (unsigned char) (((off + 1) * 0x9E3779B97F4A7C15ull ^ seed) >> 29);
}

static int fail(int id, const char *what, int rc)
{
    fprintf(stderr, "client %d: %s: %d (%s)\n", id, what, rc,
            rc > 0 ? rfs_status_str(rc) : "transport");
    return 1;
}

static void *client(void *arg)
{
    int id = (int) (intptr_t) arg, rc;
    struct rfs_client c;
    struct rfs_stat st;
    char path[64];
    unsigned char *buf = malloc(bytes), *in = malloc(bytes);
    uint64_t done;
    intptr_t bad = 1;

    for (uint64_t i = 0; i < bytes; i++)
        buf[i] = pattern(i, (unsigned) id);
    snprintf(path, sizeof path, "/clients/own.%d", id);
    if ((rc = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", port, 60000)) != 0)
        goto out_free;
    if ((rc = rfs_open(&c, 0, path, RFS_O_RDWR | RFS_O_CREAT, 0644, &st)) ||
        (rc = rfs_open(&c, 1, "/clients/shared", RFS_O_RDWR | RFS_O_CREAT, 0644, &st)) ||
        (rc = rfs_pwrite(&c, 0, buf, bytes, 0)) ||
        (rc = rfs_pwrite(&c, 1, buf, bytes, (uint64_t) id * bytes)) ||
        (rc = rfs_fsync(&c, 1))) {
        fail(id, "write", rc);
        goto out_close;
    }
    for (int h = 0; h < 2; h++) {
        memset(in, 0, bytes);
        rc = rfs_pread(&c, (uint32_t) h, in, bytes, h ? (uint64_t) id * bytes : 0, &done);
        if (rc || done != bytes || memcmp(in, buf, bytes) != 0) {
            fail(id, "read back", rc);
            goto out_close;
        }
    }
    bad = (rfs_close(&c, 0) || rfs_close(&c, 1)) ? fail(id, "close", -1) : 0;
out_close:
    rfs_client_close(&c);
out_free:
    if (rc < 0 && bad)
        fail(id, "connect", rc);
    free(buf);
    free(in);
    return (void *) bad;
}

static int many(int n)
{
    pthread_t *t = calloc((size_t) n, sizeof *t);
    int failed = 0;
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, client, (void *) (intptr_t) i);
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        failed += r != NULL;
    }
    free(t);
    printf("%d clients, %d failed\n", n, failed);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return fprintf(stderr, "usage: see the source\n"), 2;
    port = argv[1];
    struct rfs_client c;
    struct rfs_stat st;
    int rc;
    if (strcmp(argv[2], "hold") == 0 || strcmp(argv[2], "lock") == 0) {
        int hold = argv[2][0] == 'h';
        int secs = hold ? 60 : atoi(argv[4]);
        if ((rc = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", port, secs * 1000)) ||
            (rc = rfs_open(&c, 0, argv[3], RFS_O_RDWR | RFS_O_CREAT, 0644, &st)) ||
            (rc = rfs_lock(&c, 0, RFS_LOCK_WRITE, 0, 0, 1)))
            return fail(0, hold ? "hold" : "lock", rc);
        if (!hold) {
            printf(" No Errors (lock taken over)\n");
            return 0;
        }
        printf("locked\n");
        fflush(stdout);
        static char chunk[1 << 20];
        for (uint64_t off = 0;; off = (off + sizeof chunk) % (64u << 20))
            if ((rc = rfs_pwrite(&c, 0, chunk, sizeof chunk, off)) != 0)
                return fail(0, "write while holding", rc);
    }
    bytes = strtoull(argv[3], NULL, 10);
    if (many(atoi(argv[2])) != 0)
        return 1;
    printf(" No Errors\n");
    return 0;
}
