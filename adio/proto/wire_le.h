/*
 * Little-endian integers in byte buffers: the byte order of the rfs wire
 * protocol and of the striped objects' headers, whatever the host's.
 */
#ifndef WIRE_LE_H_INCLUDED
#define WIRE_LE_H_INCLUDED

#include <stdint.h>

static inline void le_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static inline void le_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static inline void le_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint16_t le_get16(const uint8_t *p)
{
    return (uint16_t) (p[0] | (p[1] << 8));
}

static inline uint32_t le_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t le_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

#endif /* WIRE_LE_H_INCLUDED */
