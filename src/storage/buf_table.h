/*
 * buf_table.h: the mapping table from buffer tag to buffer.
 *
 * A chained hash table whose chains run through the descriptors themselves
 * (a buffer holds at most one block, so it is in at most one chain).  The
 * buckets are split into BUF_TABLE_PARTITIONS partitions by the low bits of
 * the bucket number, each with its own lock.
 *
 * Lookups take no lock and write nothing: they follow atomic bucket heads
 * and hash_next links, comparing atomic tags.  A lookup racing with a
 * change may miss the buffer or find one that is being re-tagged; the
 * caller pins what it found and re-checks the tag, and treats a miss as
 * "maybe absent": it repeats the lookup under the partition lock, which is
 * exact.  Insertions and deletions take the partition lock exclusively.
 */
#ifndef KEEL_STORAGE_BUF_TABLE_H
#define KEEL_STORAGE_BUF_TABLE_H

#include "port/hash.h"
#include "storage/buf_internals.h"

#define BUF_TABLE_PARTITIONS 256 /* power of two */

typedef struct buf_partition {
    CACHE_ALIGNED lwlock lock;
    char pad[CACHE_LINE_SIZE - sizeof(lwlock)];
} buf_partition;

typedef struct buf_table {
    atomic_i32 *buckets;  /* bucket heads: buffer id or -1 */
    uint32_t bucket_mask; /* buckets - 1 */
    buf_partition *parts; /* BUF_TABLE_PARTITIONS locks, one per line */
    buf_desc *descs;      /* the pool's descriptors (chain links) */
} buf_table;

/* Sets up an empty table for nbuffers buffers.  KEEL_ENOMEM on failure. */
int buf_table_init(buf_table *t, buf_desc *descs, uint32_t nbuffers);
void buf_table_free(buf_table *t);

static inline uint64_t buf_tag_hash(buf_tag tag)
{
    return hash_u64(tag);
}

static inline uint32_t buf_table_partition(const buf_table *t, uint64_t hash)
{
    return (uint32_t)(hash & t->bucket_mask) & (BUF_TABLE_PARTITIONS - 1);
}

static inline lwlock *buf_table_lock(buf_table *t, uint32_t partition)
{
    return &t->parts[partition].lock;
}

/*
 * Lock-free lookup: the buffer whose tag was seen equal to tag, or -1.
 * Either answer may be stale by the time it returns (see above).
 */
int32_t buf_table_lookup(const buf_table *t, buf_tag tag, uint64_t hash);

/* Exact lookup; the caller holds the tag's partition lock (any mode). */
int32_t buf_table_lookup_locked(const buf_table *t, buf_tag tag, uint64_t hash);

/* Adds buffer id, whose tag field already holds the tag hashing to hash.
 * The caller holds the partition lock exclusively and checked absence. */
void buf_table_insert(buf_table *t, int32_t id, uint64_t hash);

/* Removes buffer id (present, with the tag hashing to hash).  The caller
 * holds the partition lock exclusively. */
void buf_table_delete(buf_table *t, int32_t id, uint64_t hash);

#endif /* KEEL_STORAGE_BUF_TABLE_H */
