#include <stdlib.h>

#include "abt/abt_pool.h"

void abt_pool_init(struct abt_pool *p, uint64_t buffer_size, uint64_t max_memory)
{
    if (buffer_size > max_memory)
        buffer_size = max_memory;
    p->buffer_size = buffer_size;
    p->max_buffers = buffer_size ? max_memory / buffer_size : 0;
    p->allocated = p->in_use = 0;
    p->free_list = NULL;
}

struct abt_buf *abt_pool_reserve(struct abt_pool *p)
{
    struct abt_buf *b = p->free_list;
    if (b != NULL) {
        p->free_list = b->next_free;
    } else {
        if (p->allocated >= p->max_buffers)
            return NULL;
        b = malloc(sizeof(*b));
        if (b == NULL)
            return NULL;
        b->data = malloc(p->buffer_size);
        if (b->data == NULL) {
            free(b);
            return NULL;
        }
        p->allocated++;
    }
    b->used = 0;
    b->pending = 0;
    b->next_free = NULL;
    p->in_use++;
    return b;
}

void abt_pool_release(struct abt_pool *p, struct abt_buf *b)
{
    b->next_free = p->free_list;
    p->free_list = b;
    p->in_use--;
}

uint64_t abt_pool_free_bytes(const struct abt_pool *p)
{
    return (p->max_buffers - p->in_use) * p->buffer_size;
}

void abt_pool_destroy(struct abt_pool *p)
{
    while (p->free_list != NULL) {
        struct abt_buf *b = p->free_list;
        p->free_list = b->next_free;
        free(b->data);
        free(b);
    }
    p->allocated = 0;
}
