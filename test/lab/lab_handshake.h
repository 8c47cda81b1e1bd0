/* The lab's programs and their runner agree through files in a directory:
 * one side makes DIR/NAME, the other waits for it. */
#ifndef LAB_HANDSHAKE_H_INCLUDED
#define LAB_HANDSHAKE_H_INCLUDED

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../integration/itest.h"

static inline double lab_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int lab_exists(const char *dir, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static inline void lab_mark(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL, "cannot make %s", p);
    fclose(f);
}

static inline void lab_await(const char *dir, const char *name)
{
    while (!lab_exists(dir, name))
        usleep(20000);
}

/* Generations of data over the same bytes: the byte at file offset `off`
 * of generation `gen`. (itest.h's pattern cannot tell generations apart by
 * its seed: the seed changes only bits 0-31 of a product whose bits 29-36
 * make the byte, so seeds below 2^29, 1 and 3 as much as 11 and 12, give
 * the same bytes.) Any two generations share about 1 byte in 256. */
static inline unsigned char lab_gen_byte(uint64_t off, unsigned gen)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull + (uint64_t) gen * 0xD1B54A32D192ED03ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (unsigned char) (x >> 32);
}

static inline void lab_gen_fill(unsigned char *buf, uint64_t len, uint64_t off, unsigned gen)
{
    for (uint64_t i = 0; i < len; i++)
        buf[i] = lab_gen_byte(off + i, gen);
}

/* Index of the first byte that is not generation `gen`'s, or -1. */
static inline int64_t lab_gen_check(const unsigned char *buf, uint64_t len, uint64_t off,
                                    unsigned gen)
{
    for (uint64_t i = 0; i < len; i++)
        if (buf[i] != lab_gen_byte(off + i, gen))
            return (int64_t) i;
    return -1;
}

#endif
