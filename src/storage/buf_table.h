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

/*
 * A relation's blocks come to the table in runs of BUF_TABLE_RUN
 * consecutive blocks: a tag's hash is the hash of (relation, block /
 * BUF_TABLE_RUN) with the block's low bits in its own low bits, so the
 * blocks of one run have neighbouring buckets, whose heads share one
 * cache line.  A relation of n blocks then spreads over n / 16 lines of
 * heads instead of n, and random lookups in it (index and heap fetches)
 * find the head's line cached far more often.  Runs land on buckets as
 * randomly as single blocks would, and distinct tags keep distinct hashes.
 */
#define BUF_TABLE_RUN_BITS 4
#define BUF_TABLE_RUN      (1u << BUF_TABLE_RUN_BITS) /* heads in 64 bytes */
_Static_assert(BUF_TABLE_RUN * sizeof(atomic_i32) == CACHE_LINE_SIZE &&
                   BUF_TABLE_RUN <= BUF_TABLE_PARTITIONS,
               "a run's heads fill one line of the (line-aligned) buckets");

static inline uint64_t buf_tag_hash(buf_tag tag)
{
    return hash_u64(tag >> BUF_TABLE_RUN_BITS) << BUF_TABLE_RUN_BITS |
           (tag & (BUF_TABLE_RUN - 1));
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
 * A lock-free reader standing on a buffer that moves to another chain
 * follows it there; such wandering, and any chain longer than this, ends
 * the lookup as a miss, which the caller resolves under the lock.
 */
#define BUF_TABLE_MAX_WALK 64

/*
 * The first buffer of the bucket that hash selects, or -1: where a
 * lock-free lookup starts.  Usually the buffer a lookup finds, so a caller
 * may start fetching that buffer's lines before the walk confirms it.
 */
static inline int32_t buf_table_head(const buf_table *t, uint64_t hash)
{
    return atomic_load_relaxed(&t->buckets[hash & t->bucket_mask]);
}

/*
 * The lock-free lookup from id, the head of tag's bucket as
 * buf_table_head() read it: the buffer whose tag was seen equal to tag, or
 * -1.  Either answer may be stale by the time it returns (see above).
 */
static inline int32_t buf_table_lookup_from(const buf_table *t, buf_tag tag,
                                            int32_t id)
{
    for (int walked = 0; id >= 0 && walked < BUF_TABLE_MAX_WALK; walked++) {
        const buf_desc *d = &t->descs[id];
        if (atomic_load_relaxed(&d->tag) == tag)
            return id;
        id = atomic_load_relaxed(&d->hash_next);
    }
    return -1;
}

/* Lock-free lookup: buf_table_lookup_from() the head of tag's bucket. */
static inline int32_t buf_table_lookup(const buf_table *t, buf_tag tag,
                                       uint64_t hash)
{
    return buf_table_lookup_from(t, tag, buf_table_head(t, hash));
}

/* Exact lookup; the caller holds the tag's partition lock (any mode). */
int32_t buf_table_lookup_locked(const buf_table *t, buf_tag tag, uint64_t hash);

/* Adds buffer id, whose tag field already holds the tag hashing to hash.
 * The caller holds the partition lock exclusively and checked absence. */
void buf_table_insert(buf_table *t, int32_t id, uint64_t hash);

/* Removes buffer id (present, with the tag hashing to hash).  The caller
 * holds the partition lock exclusively. */
void buf_table_delete(buf_table *t, int32_t id, uint64_t hash);

#endif /* KEEL_STORAGE_BUF_TABLE_H */
