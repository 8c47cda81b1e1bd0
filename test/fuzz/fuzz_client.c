/*
 * libFuzzer harness: the input is what a (hostile) server answers to a
 * fixed sequence of client calls. Every call must fail cleanly or return
 * results within what was asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "mem_transport.h"
#include "proto/rfs_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char buf[3u << 20];
    struct mem_conn mc;
    struct rfs_client c;
    struct rfs_stat st;
    uint64_t done = 0;

    mem_conn_init(&mc, data, size);
    memset(&c, 0, sizeof c);
    c.conn = &mc.base;
    c.next_tag = 1;
    rfs_open(&c, 0, "/f", RFS_O_RDWR | RFS_O_CREAT, 0644, &st);
    rfs_open_deferred(&c, 1, "/g", RFS_O_RDONLY, 0);
    if (rfs_pread(&c, 1, buf, sizeof buf, 7, &done) == RFS_OK && done > sizeof buf)
        abort();
    rfs_close_nowait(&c, 1);
    rfs_pwrite(&c, 0, buf, (2u << 20) + 5, 0);
    rfs_fstat(&c, 0, &st);
    rfs_lock(&c, 0, RFS_LOCK_WRITE, 0, 0, 1);
    rfs_unlink(&c, "/f");
    free(c.open_path);
    return 0;
}
