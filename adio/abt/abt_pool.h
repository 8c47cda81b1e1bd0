/*
 * Fixed-size memory buffers, allocated on demand up to a cap and kept for
 * reuse. Not locked: the engine's mutex protects it.
 */
#ifndef ABT_POOL_H_INCLUDED
#define ABT_POOL_H_INCLUDED

#include <stdint.h>

struct abt_buf {
    uint8_t *data;
    uint64_t used;              /* bytes handed out, front to back */
    uint32_t pending;           /* records (or reservations) still using it */
    struct abt_buf *next_free;
};

struct abt_pool {
    uint64_t buffer_size;
    uint64_t max_buffers;
    uint64_t allocated;         /* buffers that exist */
    uint64_t in_use;            /* buffers handed out */
    struct abt_buf *free_list;
};

/* max_memory below one buffer shrinks the buffers to max_memory. */
void abt_pool_init(struct abt_pool *p, uint64_t buffer_size, uint64_t max_memory);
/* An empty buffer, or NULL at the cap (or when memory runs out). */
struct abt_buf *abt_pool_reserve(struct abt_pool *p);
void abt_pool_release(struct abt_pool *p, struct abt_buf *b);
/* Bytes that could still be handed out as new buffers. */
uint64_t abt_pool_free_bytes(const struct abt_pool *p);
void abt_pool_destroy(struct abt_pool *p);

#endif /* ABT_POOL_H_INCLUDED */
