/*
 * Striping arithmetic and the object header.
 *
 * Header (little-endian): "ROMIOSTR", version u32, index u32, factor u32,
 * reserved u32 (0), unit u64, file_id u64, and a u64 check that is the
 * FNV-1a hash of the 40 bytes before it, so that an object whose first
 * bytes happen to start with the magic is not taken for a header.
 */
#include "stripe/stripe.h"
#include "proto/wire_le.h"

#include <errno.h>
#include <string.h>

#define STRIPE_MAGIC   "ROMIOSTR"
#define STRIPE_VERSION 1u

int stripe_layout_check(const struct stripe_layout *l)
{
    if (l->unit == 0 || l->unit > STRIPE_MAX_UNIT || l->factor == 0 ||
        l->factor > STRIPE_MAX_FACTOR)
        return -EINVAL;
    return 0;
}

uint64_t stripe_local_size(const struct stripe_layout *l, uint32_t i, uint64_t size)
{
    uint64_t full = size / l->unit, rem = size % l->unit;
    uint64_t rounds = full / l->factor, extra = full % l->factor;
    uint64_t local = rounds * l->unit;
    if (i < extra)
        local += l->unit;
    else if (i == extra)
        local += rem;
    return local;
}

uint64_t stripe_logical_end(const struct stripe_layout *l, uint32_t i, uint64_t local)
{
    if (local == 0)
        return 0;
    uint64_t last = local - 1;
    uint64_t k = (last / l->unit) * l->factor + i;
    return k * l->unit + last % l->unit + 1;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * UINT64_C(1099511628211);
    return h;
}

void stripe_header_encode(const struct stripe_header *h, uint8_t out[STRIPE_HDR_USED])
{
    memcpy(out, STRIPE_MAGIC, 8);
    le_put32(out + 8, STRIPE_VERSION);
    le_put32(out + 12, h->index);
    le_put32(out + 16, h->layout.factor);
    le_put32(out + 20, 0);
    le_put64(out + 24, h->layout.unit);
    le_put64(out + 32, h->layout.file_id);
    le_put64(out + 40, fnv1a(out, 40));
}

int stripe_header_decode(const uint8_t *in, size_t len, struct stripe_header *h)
{
    if (len < STRIPE_HDR_USED || memcmp(in, STRIPE_MAGIC, 8) != 0 ||
        le_get32(in + 8) != STRIPE_VERSION || le_get32(in + 20) != 0 ||
        le_get64(in + 40) != fnv1a(in, 40))
        return -EINVAL;
    h->index = le_get32(in + 12);
    h->layout.factor = le_get32(in + 16);
    h->layout.unit = le_get64(in + 24);
    h->layout.file_id = le_get64(in + 32);
    if (stripe_layout_check(&h->layout) < 0 || h->index >= h->layout.factor)
        return -EINVAL;
    return 0;
}
