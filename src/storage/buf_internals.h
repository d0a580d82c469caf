/*
 * buf_internals.h: buffer descriptors and the state word.
 *
 * Internal to the buffer manager (src/storage/buf*.c, freelist.c); other
 * layers use bufmgr.h.  The protocol these fields follow is in
 * src/storage/README.md.
 */
#ifndef KEEL_STORAGE_BUF_INTERNALS_H
#define KEEL_STORAGE_BUF_INTERNALS_H

#include <stdint.h>

#include "port/atomics.h"
#include "port/mem.h"
#include "storage/lwlock.h"
#include "storage/smgr.h"

/*
 * The state word, one atomic 64-bit integer per buffer:
 *
 *   bits  0..17  refcount   shared pins: one per session holding any pin
 *   bits 18..21  usage      clock-sweep usage count, 0..BUF_MAX_USAGE
 *   bit  22      LOCKED     header lock (see below)
 *   bit  23      DIRTY      page differs from disk
 *   bit  24      VALID      page holds the block named by the tag
 *   bit  25      TAG_VALID  tag names a block and the mapping table has it
 *   bit  26      IO_IN_PROGRESS  a read or write of the page is under way
 *   bit  27      IO_ERROR   the last I/O on this buffer failed
 *   bit  28      JUST_DIRTIED  dirtied since the current write began
 *   bits 29..31  zero
 *   bits 32..49  shares     content lock holders in shared mode
 *   bit  50      EXCLUSIVE  content lock held exclusively
 *   bits 51..63  zero (reserved: a version for optimistic reads)
 *
 * Who may change what:
 * - refcount and shares: anyone, with fetch_add / fetch_sub (or a CAS),
 *   at any time, even while the header lock is held.  This is what makes
 *   the first pin one atomic, the unpin one atomic, and a first pin with
 *   a shared content lock one atomic too.
 * - EXCLUSIVE: the content lock's CAS (set only when shares and EXCLUSIVE
 *   are clear) and the holder's fetch_and, at any time.
 * - every other bit: either the header-lock holder, or a compare-and-swap
 *   whose expected value has LOCKED clear.  The header-lock holder
 *   publishes its changes with a CAS loop that carries over the current
 *   refcount and content lock, so it never overwrites a concurrent pin,
 *   unpin, lock or unlock, and no other bit can change under it (every
 *   other writer's CAS fails while LOCKED is set).
 *
 * A content lock is held only with a pin (shares > 0 implies refcount > 0,
 * though one session may hold several shares on its one pin), so a buffer
 * with refcount 0 is unlocked.  Shares count holds, so their 18 bits bound
 * the holds at once, not the sessions: a carry out of them would read as
 * EXCLUSIVE.  Every path that adds a share asserts it stays below the
 * field's top; with sessions each holding a few shares it is far away.
 */
#define BUF_REFCOUNT_ONE  UINT64_C(1)
#define BUF_REFCOUNT_MASK ((UINT64_C(1) << 18) - 1)
#define BUF_USAGE_SHIFT   18
#define BUF_USAGE_ONE     (UINT64_C(1) << BUF_USAGE_SHIFT)
#define BUF_USAGE_MASK    (UINT64_C(0xF) << BUF_USAGE_SHIFT)
#define BUF_MAX_USAGE     5

#define BM_LOCKED         (UINT64_C(1) << 22)
#define BM_DIRTY          (UINT64_C(1) << 23)
#define BM_VALID          (UINT64_C(1) << 24)
#define BM_TAG_VALID      (UINT64_C(1) << 25)
#define BM_IO_IN_PROGRESS (UINT64_C(1) << 26)
#define BM_IO_ERROR       (UINT64_C(1) << 27)
#define BM_JUST_DIRTIED   (UINT64_C(1) << 28)

#define BUF_SHARE_SHIFT 32
#define BUF_SHARE_ONE   (UINT64_C(1) << BUF_SHARE_SHIFT)
#define BUF_SHARE_MASK  (BUF_REFCOUNT_MASK << BUF_SHARE_SHIFT)
#define BM_EXCLUSIVE    (UINT64_C(1) << 50)
/* The bits the content lock owns. */
#define BUF_LOCK_MASK (BUF_SHARE_MASK | BM_EXCLUSIVE)

#define BUF_REFCOUNT(st) ((uint32_t)((st)&BUF_REFCOUNT_MASK))
#define BUF_SHARES(st)   ((uint32_t)(((st)&BUF_SHARE_MASK) >> BUF_SHARE_SHIFT))
#define BUF_USAGE(st)    ((uint32_t)(((st)&BUF_USAGE_MASK) >> BUF_USAGE_SHIFT))

/*
 * A buffer tag names a block: the relation file number in the high 32 bits
 * and the block number in the low 32.  Packing it in one word lets the
 * lock-free lookup read a tag with a single atomic load.  Relation 0 does
 * not exist, so tag 0 means "no block".
 */
typedef uint64_t buf_tag;
#define BUF_TAG_NONE ((buf_tag)0)

static inline buf_tag buf_tag_make(relnumber_t rel, blocknum_t blk)
{
    return ((uint64_t)rel << 32) | blk;
}
static inline relnumber_t buf_tag_rel(buf_tag t)
{
    return (relnumber_t)(t >> 32);
}
static inline blocknum_t buf_tag_block(buf_tag t)
{
    return (blocknum_t)t;
}

/*
 * One buffer descriptor: exactly one cache line, hot fields first.  A pin,
 * a content lock and both at once write only `state`; a lock-free lookup
 * reads `tag` and `hash_next` of the same line, so a hit touches one
 * descriptor line.
 */
typedef struct buf_desc {
    CACHE_ALIGNED atomic_u64 state; /* see above */
    atomic_u64 tag;          /* block held; changed only under header lock
                              * and both mapping partition locks */
    atomic_i32 hash_next;    /* next buffer in this mapping bucket, or -1 */
    atomic_u32 lock_seq;     /* futex word: bumped when the content lock
                              * is released with sessions waiting */
    atomic_u32 lock_waiters; /* sessions sleeping on lock_seq */
    atomic_u32 io_seq;       /* futex word: bumped when an I/O finishes */
    atomic_u32 io_waiters;   /* sessions sleeping on io_seq */
    int32_t id;              /* index in the descriptor array */
    char pad[CACHE_LINE_SIZE - 40];
} buf_desc;

_Static_assert(sizeof(buf_desc) == CACHE_LINE_SIZE,
               "a buffer descriptor is one cache line");

#endif /* KEEL_STORAGE_BUF_INTERNALS_H */
