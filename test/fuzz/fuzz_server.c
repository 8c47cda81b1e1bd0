/*
 * libFuzzer harness: the input is the byte stream a client sends to rfsd's
 * request engine, served against a scratch export root. The fuzzer's
 * sanitizers catch what the engine does wrong with it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mem_transport.h"
#include "server/rfs_coll.h"
#include "server/rfs_log.h"
#include "server/rfs_server.h"
#include "../unit/unit_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[4096];

static void remove_root(void)
{
    remove_tree(root);
}

/* Inputs that start with 'K' meet a server that requires this key. */
static struct rfs_key fuzz_key = {
    .name = "fuzz", .secret = "0123456789abcdef", .secret_len = 16,
};
static const struct rfs_keyring fuzz_ring = { &fuzz_key, 1 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rfs_server srv, keyed;
    static unsigned runs;
    if (!runs) {
        const char *tmp = getenv("TMPDIR");
        snprintf(root, sizeof root, "%s/rfs-fuzz-XXXXXX", tmp ? tmp : "/tmp");
        if (!mkdtemp(root) || rfs_server_init(&srv, root) < 0 ||
            rfs_server_init(&keyed, root) < 0)
            abort();
        keyed.keys = &fuzz_ring;
        /* collective calls of one participant run at once; a missing one
         * is given up on after a millisecond */
        if (rfs_coll_table_new(&srv.coll, 1u << 20) < 0)
            abort();
        srv.coll_timeout_ms = 1;
        /* an input's read of bytes its own connection leased: given up on
         * at once (its leases end with the connection) */
        srv.lease_timeout_ms = keyed.lease_timeout_ms = 1;
        atexit(remove_root);
        rfs_log_set_level(RFS_LOG_ERROR);
    }
    if (++runs % 4096 == 0)
        clear_dir(root);            /* what earlier inputs created */
    int with_key = size > 0 && data[0] == 'K';
    struct mem_conn c;
    mem_conn_init(&c, data + with_key, size - (size_t) with_key);
    rfs_serve_connection(with_key ? &keyed : &srv, &c.base, "fuzz");
    return 0;
}
