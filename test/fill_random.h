/*
 * Test data: the bytes of an xorshift generator, the same for the same
 * seed, so that what a test wrote can be made again to compare. Shared by
 * the unit tests and the programs of the soft-RoCE guest.
 */
#ifndef FILL_RANDOM_H_INCLUDED
#define FILL_RANDOM_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

static inline void fill_random(void *buf, size_t len, unsigned seed)
{
    uint8_t *p = buf;
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t) x;
    }
}

#endif /* FILL_RANDOM_H_INCLUDED */
