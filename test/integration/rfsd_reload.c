/*
 * A client of rfsd's key reload (SIGHUP), for rfsd_config.sh (no MPI):
 *
 *   rfsd_reload try PORT KEYFILE
 *       Connect with the key, write and read back a block: exit 0 when
 *       served, 3 when the server refused the key, 1 on anything else.
 *   rfsd_reload hold PORT KEYFILE DIR
 *       Connect with the key and go through a round, then make DIR/held
 *       and wait (60 s at most) for DIR/go; then another round on the same
 *       connection must be served: the connection outlived what happened
 *       meanwhile (a reload of the server's keys).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/rfs_client.h"

#define BLOCK 4096

#define FAIL(...) do { fprintf(stderr, "rfsd_reload: " __VA_ARGS__); fputc('\n', stderr); \
                       exit(1); } while (0)

static int connect_with(struct rfs_client *c, const char *port, const char *keyfile,
                        struct rfs_key *key)
{
    char err[256];
    if (rfs_key_load(keyfile, key, err, sizeof err) < 0)
        FAIL("key: %s", err);
    struct rfs_connect_opts o = { .net.timeout_ms = 10000, .key = key };
    return rfs_client_connect_with(c, "127.0.0.1", port, &o);
}

/* Write and read back a block on handle 0 of c: 0 or the failing status. */
static int round_trip(struct rfs_client *c, const char *path)
{
    unsigned char out[BLOCK], in[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        out[i] = (unsigned char) (i * 2654435761u >> 13);
    uint64_t got = 0;
    int rc;
    if ((rc = rfs_open(c, 0, path, RFS_O_RDWR | RFS_O_CREAT, 0644, NULL)) == 0 &&
        (rc = rfs_pwrite(c, 0, out, BLOCK, 0)) == 0 &&
        (rc = rfs_pread(c, 0, in, BLOCK, 0, &got)) == 0 && (rc = rfs_close(c, 0)) == 0 &&
        (got != BLOCK || memcmp(in, out, BLOCK) != 0))
        FAIL("%s: the bytes read back differ from those written", path);
    return rc;
}

static int try(const char *port, const char *keyfile)
{
    struct rfs_client c;
    struct rfs_key key;
    int rc = connect_with(&c, port, keyfile, &key);
    if (rc == 0) {
        rc = round_trip(&c, "/try.dat");
        rfs_client_close(&c);
    }
    rfs_key_wipe(&key);
    printf("try %s: %s (%d)\n", keyfile, rc == 0 ? "served" : rc == RFS_E_AUTH ? "refused" :
           "failed", rc);
    return rc == 0 ? 0 : rc == RFS_E_AUTH ? 3 : 1;
}

static void touch(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fclose(f) != 0)
        FAIL("%s: cannot make it", path);
}

static void hold(const char *port, const char *keyfile, const char *dir)
{
    struct rfs_client c;
    struct rfs_key key;
    int rc = connect_with(&c, port, keyfile, &key);
    if (rc != 0 || (rc = round_trip(&c, "/held.dat")) != 0)
        FAIL("the first round: %d", rc);
    touch(dir, "held");
    char go[4096];
    snprintf(go, sizeof go, "%s/go", dir);
    for (int i = 0; i < 1200 && access(go, F_OK) != 0; i++)
        usleep(50000);
    if (access(go, F_OK) != 0)
        FAIL("no %s within 60 s", go);
    if ((rc = round_trip(&c, "/held.dat")) != 0)
        FAIL("the connection authenticated before was not served after: %d", rc);
    rfs_client_close(&c);
    rfs_key_wipe(&key);
    printf("hold: the connection authenticated before was served after\n");
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "try"))
        return try(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "hold")) {
        hold(argv[2], argv[3], argv[4]);
        return 0;
    }
    fprintf(stderr, "usage: rfsd_reload try PORT KEYFILE | hold PORT KEYFILE DIR\n");
    return 2;
}
