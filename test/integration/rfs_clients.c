/*
 * rfsd under many clients at once (no MPI): each thread connects, writes a
 * file of its own and its slice of a shared file, syncs, reads both back
 * and checks every byte; once all are done, one more connection reads every
 * file and the whole shared file again, so that a slice overwritten by
 * another client after its owner checked it is found too. A client the
 * server refuses (RFS_E_BUSY: over --max-connections) tries again.
 *
 *   rfs_clients PORT CLIENTS BYTES_PER_CLIENT
 *   rfs_clients PORT hold PATH      lock PATH, say "locked", write forever
 *                                   (64 MiB per call, so a kill lands mid-call)
 *   rfs_clients PORT lock PATH SECS lock PATH within SECS (after a holder
 *                                   died), then write and read back under it
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/rfs_client.h"

static const char *port;
static uint64_t bytes;
static atomic_int refusals;

static unsigned char pattern(uint64_t off, unsigned seed)
{
    return (unsigned char) (((off + 1) * 0x9E3779B97F4A7C15ull +
                             (uint64_t) seed * 0xD1B54A32D192ED03ull) >> 29);
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
    /* Refused while the server is full: again after a pause, for at most
     * about a minute. */
    for (int tries = 0;; tries++) {
        if ((rc = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", port, 60000)) != 0)
            goto out_free;
        rc = rfs_open(&c, 0, path, RFS_O_RDWR | RFS_O_CREAT, 0644, &st);
        if (rc != RFS_E_BUSY || tries == 1000)
            break;
        atomic_fetch_add(&refusals, 1);
        rfs_client_close(&c);
        usleep(20000 + (useconds_t) (id % 7) * 10000);
    }
    if (rc ||
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
    printf("%d clients, %d failed, %d refusals (retried)\n", n, failed,
           atomic_load(&refusals));
    return failed;
}

/* Every client's own file and its slice of the shared file, read again
 * through one new connection after all clients are done. */
static int verify_all(int n)
{
    struct rfs_client c;
    struct rfs_stat st;
    unsigned char *in = malloc(bytes);
    uint64_t done;
    char path[64];
    int rc = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", port, 60000), bad = 0;
    if (rc == 0)
        rc = rfs_open(&c, 1, "/clients/shared", RFS_O_RDONLY, 0, &st);
    if (rc == 0 && st.size != (uint64_t) n * bytes) {
        fprintf(stderr, "shared file: %llu bytes, expected %llu\n",
                (unsigned long long) st.size, (unsigned long long) n * bytes);
        bad = 1;
    }
    for (int id = 0; id < n && rc == 0 && !bad; id++) {
        snprintf(path, sizeof path, "/clients/own.%d", id);
        for (int h = 0; h < 2 && rc == 0; h++) {
            if (h == 0 && (rc = rfs_open(&c, 0, path, RFS_O_RDONLY, 0, &st)) != 0)
                break;
            rc = rfs_pread(&c, (uint32_t) h, in, bytes, h ? (uint64_t) id * bytes : 0, &done);
            for (uint64_t i = 0; rc == 0 && i < bytes; i++)
                if (done != bytes || in[i] != pattern(i, (unsigned) id)) {
                    fprintf(stderr, "%s of client %d: wrong at byte %llu\n",
                            h ? "shared slice" : "own file", id, (unsigned long long) i);
                    bad = 1;
                    break;
                }
        }
        if (rc == 0)
            rc = rfs_close(&c, 0);
    }
    rfs_client_close(&c);
    free(in);
    if (rc)
        fail(-1, "verify", rc);
    return rc != 0 || bad;
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
        static unsigned char chunk[64u << 20], back[64u << 20];
        const char *what = hold ? "hold" : "lock";
        uint64_t done;
        if ((rc = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", port, secs * 1000)) ||
            (rc = rfs_open(&c, 0, argv[3], RFS_O_RDWR | RFS_O_CREAT, 0644, &st)) ||
            (rc = rfs_lock(&c, 0, RFS_LOCK_WRITE, 0, 0, 1)))
            goto out;
        if (hold) {
            printf("locked\n");
            fflush(stdout);
            what = "write while holding";
            while ((rc = rfs_pwrite(&c, 0, chunk, sizeof chunk, 0)) == 0)
                ;
            goto out;
        }
        /* The server goes on serving the file under the lock. */
        what = "write and read back under the lock";
        for (uint64_t i = 0; i < sizeof chunk; i++)
            chunk[i] = pattern(i, 7);
        if ((rc = rfs_pwrite(&c, 0, chunk, sizeof chunk, 0)) == 0 &&
            (rc = rfs_pread(&c, 0, back, sizeof back, 0, &done)) == 0 &&
            (done != sizeof back || memcmp(chunk, back, sizeof back) != 0))
            rc = -EIO;
out:
        rfs_client_close(&c);
        if (rc)
            return fail(0, what, rc);
        printf(" No Errors (lock taken over, 64 MiB written and read back)\n");
        return 0;
    }
    bytes = strtoull(argv[3], NULL, 10);
    if (many(atoi(argv[2])) != 0 || verify_all(atoi(argv[2])) != 0)
        return 1;
    printf(" No Errors\n");
    return 0;
}
