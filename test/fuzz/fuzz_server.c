/*
 * libFuzzer harness: the input is the byte stream a client sends to rfsd's
 * request engine, served against a scratch export root. The fuzzer's
 * sanitizers catch what the engine does wrong with it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mem_transport.h"
#include "server/rfs_log.h"
#include "server/rfs_server.h"
#include "../unit/unit_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[4096];

static void remove_root(void)
{
    remove_tree(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rfs_server srv;
    static unsigned runs;
    if (!runs) {
        const char *tmp = getenv("TMPDIR");
        snprintf(root, sizeof root, "%s/rfs-fuzz-XXXXXX", tmp ? tmp : "/tmp");
        if (!mkdtemp(root) || rfs_server_init(&srv, root) < 0)
            abort();
        atexit(remove_root);
        rfs_log_set_level(RFS_LOG_ERROR);
    }
    if (++runs % 4096 == 0)
        clear_dir(root);            /* what earlier inputs created */
    struct mem_conn c;
    mem_conn_init(&c, data, size);
    rfs_serve_connection(&srv, &c.base, "fuzz");
    return 0;
}
