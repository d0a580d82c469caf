/*
 * hash.h: hashing of integers and names, and the combination of several
 * key hashes into one.
 *
 * The catalog (catalog_key_hash(), for invalidation messages) and the
 * catalog cache (which hashes the keys of every search) must agree bit for
 * bit, so both compute key hashes with these functions only:
 *
 *   integer key (oid, int2 as uint16, bool as 0/1)  hash_int()
 *   name key (bytes up to its NUL)                  hash_name()
 *   keys 2..4 folded in, in key order               hash_combine()
 *   the 32-bit hash carried by messages             hash_fold32()
 */
#ifndef KEEL_PORT_HASH_H
#define KEEL_PORT_HASH_H

#include <stddef.h>
#include <stdint.h>

#include <xxhash.h>

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

/* Hash of an integer key, given as its unsigned value. */
static inline uint64_t hash_int(uint64_t v)
{
    return hash_u64(v);
}

/* Hash of a name key: XXH3 over its len bytes (the NUL excluded). */
static inline uint64_t hash_name(const char *s, size_t len)
{
    return XXH3_64bits(s, len);
}

/*
 * Folds the hash of the next key into the hash of the keys before it.  The
 * inputs are already well mixed, so a multiply by an odd constant (a
 * bijection that makes the result depend on the order of the keys) and an
 * add suffice: (a, b) and (b, a) differ, and keys that share a first
 * column, such as (relid, attnum) pairs, still spread over all buckets.
 */
static inline uint64_t hash_combine(uint64_t h, uint64_t next)
{
    return h * UINT64_C(0x9e3779b97f4a7c15) + next;
}

/* The 32 bits of a combined hash that caches and messages carry. */
static inline uint32_t hash_fold32(uint64_t h)
{
    return (uint32_t)(h ^ (h >> 32));
}

#endif /* KEEL_PORT_HASH_H */
