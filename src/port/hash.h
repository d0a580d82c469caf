/*
 * hash.h: integer hashing.
 */
#ifndef KEEL_PORT_HASH_H
#define KEEL_PORT_HASH_H

#include <stdint.h>

/*
 * A strong 64-bit mixer (the finalizer of MurmurHash3): every input bit
 * affects every output bit, so low bits can index a power-of-two table.
 */
static inline uint64_t hash_u64(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return k;
}

#endif /* KEEL_PORT_HASH_H */
