/* A stream transport over memory for the fuzzers: reads come from a
 * buffer, writes are counted and dropped. */
#ifndef MEM_TRANSPORT_H_INCLUDED
#define MEM_TRANSPORT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"

struct mem_conn {
    struct net_conn base;
    const uint8_t *in;
    size_t len, pos;
    uint64_t written;
};

void mem_conn_init(struct mem_conn *c, const uint8_t *in, size_t len);

#endif
