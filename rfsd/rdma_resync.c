/*
 * rdma-resync: brings the stale copies of replicated rdma: files up to
 * date (stripe_resync, docs/rdma.md "Replicas"), or says which are stale.
 *
 *   rdma-resync [-s HOST:PORT,...] [-t SECONDS] [-k KEYFILE] [--tls [--tls-ca PEM]]
 *               [--status] PATH...
 *
 * The servers as the rdma: driver finds them: -s, else $ROMIO_RDMA_SERVERS,
 * else $ROMIO_RDMA_CONFIG or /etc/romio-rdma.conf. PATH is the file's name
 * as the driver has it after "rdma:". Online: the files stay readable and
 * writable meanwhile. Exit status 0 when every file is current at the end,
 * 1 when one is not (or cannot be opened), 2 for bad usage. No MPI here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "proto/rfs_auth.h"
#include "proto/rfs_proto.h"
#include "stripe/stripe_file.h"

#define DEFAULT_TIMEOUT_S 30

struct options {
    struct stripe_servers servers;
    struct rfs_connect_opts connect;
    struct rfs_key key;
    int status_only;
};

static void usage(FILE *to)
{
    fprintf(to, "usage: rdma-resync [-s HOST:PORT,...] [-t SECONDS] [-k KEYFILE] "
            "[--tls [--tls-ca PEM]] [--status] PATH...\n");
}

static const char *failure(int rc)
{
    return rc > 0 ? rfs_status_str(rc) : strerror(-rc);
}

/* "1,3" for bits 1 and 3, "none" for no bit. */
static const char *server_list(uint64_t bits, char *out, size_t size)
{
    size_t used = 0;
    snprintf(out, size, "none");
    for (uint32_t s = 0; s < 64 && used < size; s++)
        if (bits >> s & 1)
            used += (size_t) snprintf(out + used, size - used, "%s%u", used ? "," : "", s);
    return out;
}

static int report_failure(const char *path, const struct stripe_file *f, int rc)
{
    fprintf(stderr, "rdma-resync: %s: %s", path, failure(rc));
    if (f->failed >= 0)
        fprintf(stderr, " (server %d, %s:%s)", f->failed, f->at[f->failed].host,
                f->at[f->failed].port);
    fprintf(stderr, "%s%s\n", f->why ? ": " : "", f->why ? f->why : "");
    return 1;
}

static int one_file(const struct options *o, const char *path)
{
    struct stripe_file f;
    struct stripe_open_args a = { .connect = o->connect,
                                  .flags = o->status_only ? RFS_O_RDONLY : RFS_O_RDWR };
    char list[256], lost[256];
    uint64_t servers = 0, copied = 0;
    int rc = stripe_open(&f, &o->servers, path, &a);
    if (rc != 0) {
        int bad = report_failure(path, &f, rc);
        stripe_close(&f);
        return bad;
    }
    if (!o->status_only)
        rc = stripe_resync(&f, &servers, &copied);
    if (rc != 0) {
        int bad = report_failure(path, &f, rc);
        stripe_close(&f);
        return bad;
    }
    uint64_t stale = f.state.stale;
    if (o->status_only)
        printf("%s: epoch %llu, stale: %s, unreachable: %s\n", path,
               (unsigned long long) f.state.epoch, server_list(stale, list, sizeof list),
               server_list(f.down, lost, sizeof lost));
    else if (servers)
        printf("%s: resynced server %s (%llu bytes)\n", path,
               server_list(servers, list, sizeof list), (unsigned long long) copied);
    else if (!stale)
        printf("%s: current\n", path);
    if (!o->status_only && stale)
        fprintf(stderr, "rdma-resync: %s: still stale: server %s (unreachable: %s)\n", path,
                server_list(stale, list, sizeof list), server_list(f.down, lost, sizeof lost));
    stripe_close(&f);
    return !o->status_only && stale;
}

static int find_servers(const char *list, struct stripe_servers *out)
{
    if (!list)
        list = getenv(STRIPE_SERVERS_ENV);
    if (list)
        return stripe_servers_parse(list, out);
    const char *conf = getenv(STRIPE_CONFIG_ENV);
    return stripe_servers_load(conf ? conf : STRIPE_CONFIG_FILE, out);
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {
        { "servers", required_argument, NULL, 's' }, { "timeout", required_argument, NULL, 't' },
        { "key", required_argument, NULL, 'k' }, { "tls", no_argument, NULL, 'T' },
        { "tls-ca", required_argument, NULL, 'C' }, { "status", no_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    static struct options o;
    const char *servers = NULL, *key_file = NULL, *ca = NULL;
    int timeout_s = DEFAULT_TIMEOUT_S, tls = 0, c;
    char err[256];
    while ((c = getopt_long(argc, argv, "s:t:k:h", longs, NULL)) != -1) {
        switch (c) {
        case 's': servers = optarg; break;
        case 't': timeout_s = atoi(optarg); break;
        case 'k': key_file = optarg; break;
        case 'T': tls = 1; break;
        case 'C': ca = optarg; tls = 1; break;
        case 'S': o.status_only = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind == argc || timeout_s <= 0) {
        usage(stderr);
        return 2;
    }
    if (find_servers(servers, &o.servers) != 0) {
        fprintf(stderr, "rdma-resync: no server list: give -s, $ROMIO_RDMA_SERVERS or a "
                "configuration file ($%s, %s)\n", STRIPE_CONFIG_ENV, STRIPE_CONFIG_FILE);
        return 2;
    }
    o.connect.net.timeout_ms = timeout_s * 1000;
    if (key_file) {
        if (rfs_key_load(key_file, &o.key, err, sizeof err) < 0) {
            fprintf(stderr, "rdma-resync: %s\n", err);
            return 2;
        }
        o.connect.key = &o.key;
    }
    if (tls && net_tls_client_new(ca, ca != NULL || !key_file, &o.connect.net.tls, err,
                                  sizeof err) < 0) {
        fprintf(stderr, "rdma-resync: TLS: %s\n", err);
        return 2;
    }
    o.connect.transport = tls ? &net_tls_transport : &net_tcp_transport;
    int bad = 0;
    for (int i = optind; i < argc; i++)
        bad |= one_file(&o, argv[i]);
    net_tls_free(o.connect.net.tls);
    rfs_key_wipe(&o.key);
    return bad;
}
