/*
 * bufmgr.h: the shared buffer pool.
 *
 * A fixed set of 8 KiB buffers shared by all sessions, caching blocks of
 * relation files.  A session reads a block with buf_read(), which returns
 * the buffer pinned (it cannot be evicted until released); to look at the
 * page it takes the content lock in shared mode, to change it in exclusive
 * mode, marking it dirty before unlocking.  Dirty pages reach disk when
 * evicted, flushed, at checkpoint, or at close.
 *
 * Every function that can fail returns a keel_status and leaves the message
 * in the session's kerr (buf_session_error()); a failed call leaves nothing
 * pinned or locked that it took.
 *
 * The protocol (state word, header lock, mapping table, eviction, I/O) is
 * in src/storage/README.md; the state word's layout in buf_internals.h.
 */
#ifndef KEEL_STORAGE_BUFMGR_H
#define KEEL_STORAGE_BUFMGR_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "port/error.h"
#include "storage/buf_internals.h"
#include "storage/lwlock.h"
#include "storage/smgr.h"

typedef struct buf_pool buf_pool;
typedef struct buf_session buf_session;
typedef struct buf_strategy buf_strategy;

#define BUF_INVALID (-1)

/*
 * Creating and closing the pool.  nbuffers >= 16.  The pool reads and
 * writes relations through s, which must outlive it.
 */
int buf_pool_create(smgr *s, uint32_t nbuffers, buf_pool **out, kerr *err);

/*
 * Clean close: writes every dirty buffer and syncs every file written since
 * the last checkpoint, then frees the pool.  If that fails the pool stays
 * open and intact (nothing dirty is dropped) and the error is returned; the
 * caller may retry.  A pool with nothing dirty and nothing to sync (as
 * after a checkpoint) is freed without allocating anything.  Every session
 * must have released all its pins and been destroyed before; KEEL_EBUSY
 * otherwise.
 */
int buf_pool_close(buf_pool *p, kerr *err);

/* Frees the pool without writing anything (dirty pages are lost). */
void buf_pool_discard(buf_pool *p);

uint32_t buf_pool_size(const buf_pool *p);
smgr *buf_pool_smgr(const buf_pool *p);

/* The page memory of buffer id (BLOCK_SIZE bytes, page aligned). */
void *buf_page(const buf_pool *p, int32_t id);

/* Sessions: one per thread using the pool. */
int buf_session_create(buf_pool *p, buf_session **out, kerr *err);

/* Releases every pin the session still holds, then frees it. */
void buf_session_destroy(buf_session *s);

/* The last error recorded in the session. */
const kerr *buf_session_error(const buf_session *s);

/* Most lines a read (buf_read_opts) or buf_prefetch() fetches ahead. */
#define BUF_PREFETCH_MAX 8

/*
 * How buf_read() reads a block, for a caller that knows more than the
 * block's number.  Written as a compound literal at the call, so that the
 * flags are constants and buf_read() folds to the one path they name:
 *
 *     buf_read(s, rel, blk, &(buf_read_opts){.flags = BUF_READ_SHARED,
 *              .lines = lines, .nlines = n}, &id)
 *
 * lines: the page offsets of the cache lines the caller will read first
 * (nlines of them, at most BUF_PREFETCH_MAX, each below BLOCK_SIZE; NULL:
 * none).  As soon as the mapping table names the buffer that probably
 * holds the block, and before its descriptor has been read to confirm it,
 * they are prefetched, so the page's cache misses overlap the
 * descriptor's instead of following it.  Only a hint: a wrong guess costs
 * bandwidth, never a wrong answer.
 *
 * strategy: the buffer comes from the strategy's ring when it must be
 * loaded, and a hit does not raise its usage count above one.  Only for a
 * read with no flags and no lines.
 */
typedef struct buf_read_opts {
    uint32_t flags;         /* BUF_READ_*, or 0 */
    int32_t recent;         /* with BUF_READ_RECENT: the buffer to try */
    const uint16_t *lines;  /* the lines to prefetch, or NULL */
    uint32_t nlines;        /* and how many */
    buf_strategy *strategy; /* a ring for a miss, or NULL */
} buf_read_opts;

/*
 * The buffer comes back pinned and locked in shared mode, as after
 * buf_lock(LW_SHARED), and is given back with buf_unlock_release().  A
 * first pin and the lock are one atomic on the state word.
 */
#define BUF_READ_SHARED 0x1u
/*
 * The caller last found the block in buffer `recent` (BUF_INVALID if it
 * does not know), whose descriptor and lines it has just prefetched with
 * buf_prefetch_buffer(): that buffer's tag is checked first, without the
 * mapping table; if it names the block, the buffer is pinned and the tag
 * checked again.  If it holds another block by now, nothing is pinned
 * there and the block is looked up as usual, the lines prefetched from
 * the buffer at the head of the block's bucket.
 */
#define BUF_READ_RECENT 0x2u
/*
 * The block is that of the session's last buf_prefetch(), which
 * buf_prefetch_pending() has just confirmed: the buffer the prefetch
 * found is tried first, with the lines it named and without fetching them
 * again (lines, recent and strategy are not read); if the block is no
 * longer there, it is looked up as usual.
 */
#define BUF_READ_PREFETCHED 0x4u

/*
 * Reading.  Returns in *id the buffer holding (rel, blk), pinned (and
 * share-locked with BUF_READ_SHARED), read as o says (NULL: a plain read,
 * as by o with every field 0).  Errors: ENOENT (no such relation), EEOF
 * (blk is past the end), EIO, ECORRUPT, EVERSION (the page could not be
 * read or verified; the next reader retries), EEXHAUSTED (every buffer is
 * pinned), ENOMEM.  A failed call leaves nothing pinned or locked.
 */
static inline int buf_read(buf_session *s, relnumber_t rel, blocknum_t blk,
                           const buf_read_opts *o, int32_t *id);

/*
 * A hint that block blk of rel is about to be read: if the mapping table's
 * bucket for the block names a buffer, the lines of that buffer's page at
 * offsets off[0..n) (as buf_read_opts.lines) and its descriptor are
 * prefetched.  Pins nothing and confirms nothing, so it never waits for a
 * cache miss: the buffer may hold another block, or none, by the time the
 * lines arrive, which costs bandwidth and nothing else.  The session
 * remembers that buffer, the lines and key (the caller's name for the
 * lines) until its next buf_prefetch(), and its first read of this block
 * tries the buffer before the mapping table, as BUF_READ_RECENT does.
 */
void buf_prefetch(buf_session *s, relnumber_t rel, blocknum_t blk,
                  const uint16_t *off, uint32_t n, uint32_t key);

/*
 * Whether the session's last buf_prefetch() named block blk of rel and
 * key, found a buffer for it, and no read of the block has followed: then
 * buf_read() with BUF_READ_PREFETCHED reads it without being told the
 * lines again.
 */
static inline bool buf_prefetch_pending(const buf_session *s, relnumber_t rel,
                                        blocknum_t blk, uint32_t key);

/*
 * Appends a new block to rel and returns it pinned and exclusively locked
 * in *id, its number in *blk, initialized by page_init(special_size) in
 * its buffer (dirty; it reaches the file when the buffer is written).  The
 * buffer is found first, then mapped to the block before the file grows
 * by a page of zeroes, so no other session can read or use the block
 * before the caller has it.  Errors: no buffer free (KEEL_EEXHAUSTED) or a
 * victim's failed write, with the file as it was; a failed write of the
 * new block (ENOSPC, EIO), with the file as it was too.  A failure after
 * the file has grown (out of memory remembering it for the checkpoint's
 * sync) leaves a page of zeroes, which readers take for an unused page.
 */
int buf_extend(buf_session *s, relnumber_t rel, uint16_t special_size,
               buf_strategy *strategy, int32_t *id, blocknum_t *blk);

/*
 * A session's private pin counts.  A session holds at most one shared pin
 * (one unit of the state word's refcount) per buffer however many times it
 * pins it; the count of its own pins lives here, so that pinning a buffer it
 * already holds touches only this memory.
 *
 * The first place to look for buffer id is its home slot, refs[id % 8].
 * A buffer whose home slot was taken when it was pinned goes to another
 * free slot or, when all eight are taken, to an open-addressing hash
 * (bufmgr.c); `displaced` counts such entries, and while it is zero a
 * lookup is a single compare.
 */
#define BUF_PRIVATE_REFS 8 /* a power of two */

typedef struct buf_private_ref {
    int32_t id;     /* buffer, or BUF_INVALID if the slot is free */
    uint32_t count; /* pins by this session, > 0 when id is valid */
} buf_private_ref;

/*
 * A page the session changed under its exclusive lock and has not logged
 * yet (buf_log.h): the byte ranges it named, or BUF_LOG_WHOLE.
 */
#define BUF_LOG_MAX_PAGES  16
#define BUF_LOG_MAX_RANGES 16
#define BUF_LOG_WHOLE      0xFF

#define BUF_LOG_OPBUF      4096

typedef struct buf_log_pending {
    int32_t id;
    uint8_t nranges;          /* or BUF_LOG_WHOLE */
    uint8_t nops;             /* operations (buf_mark_dirty_op()), first */
    uint16_t op_start, op_len; /* and their bytes in log_opbuf */
    uint16_t off[BUF_LOG_MAX_RANGES], len[BUF_LOG_MAX_RANGES];
    /* A range logged against another part of the page that it is much
     * like (buf_mark_dirty_like()): copy_len 0 if none. */
    uint16_t copy_dst, copy_len, copy_src, copy_src_len;
} buf_log_pending;

typedef struct wal wal;

struct buf_session {
    buf_private_ref refs[BUF_PRIVATE_REFS]; /* hot: first line */
    buf_desc *descs;                        /* the pool's descriptors */
    char *pages;                            /* the pool's pages */
    uint32_t nbuffers;                      /* and how many */
    uint32_t displaced;                     /* entries not in their home slot */
    uint32_t overflow_count;                /* entries in the hash */
    uint32_t overflow_cap;     /* slots in the hash (power of two) */
    buf_private_ref *overflow; /* the hash, or NULL */
    buf_pool *pool;
    void *write_copy;        /* private page image for writes */
    uint64_t reads;          /* buf_read() calls */
    buf_tag prefetched_tag;  /* buf_prefetch()'s last block, until read */
    int32_t prefetched_id;   /* and the buffer it found for it, */
    uint32_t prefetched_key; /* the caller's key, */
    uint32_t prefetched_n;   /* and the lines it fetched */
    uint16_t prefetched_off[BUF_PREFETCH_MAX];
    /* Logging (buf_log.h); log_npending is read by every exclusive
     * unlock. */
    uint32_t log_npending;       /* entries in log_pending */
    bool log_off;                /* this session's changes are not logged */
    bool read_zero;              /* redo: a miss fills zeroes, reads nothing */
    uint8_t log_info;            /* wal_info of the next record */
    uint32_t log_xid;            /* and its transaction */
    relnumber_t log_skip_rel;    /* a relation whose changes are not logged */
    uint64_t log_last;           /* end LSN of the session's last record */
    buf_log_pending log_pending[BUF_LOG_MAX_PAGES];
    uint32_t log_opused; /* bytes of log_opbuf in use */
    char log_opbuf[BUF_LOG_OPBUF];
    kerr err;
};

static inline bool buf_prefetch_pending(const buf_session *s, relnumber_t rel,
                                        blocknum_t blk, uint32_t key)
{
    return s->prefetched_tag != BUF_TAG_NONE &&
           s->prefetched_tag == buf_tag_make(rel, blk) &&
           s->prefetched_key == key;
}

/* Pages the session has read (each a pin it took through buf_read(),
 * hits and misses alike), for benchmarks. */
static inline uint64_t buf_session_reads(const buf_session *s)
{
    return s->reads;
}

/*
 * The out-of-line parts of buf_read(): one copy of the read path for each
 * kind of read it makes, its options fixed in the copy, so that a read
 * costs what its kind needs and no more.  Call buf_read(), not these.
 * buf_read() is always inlined: with the flags constant it folds to one
 * call of one copy (left to the compiler, it may instead be kept out of
 * line, testing at run time the flags every call knows).
 */
int buf_read_plain(buf_session *s, relnumber_t rel, blocknum_t blk,
                   buf_strategy *strategy, int32_t *id);
int buf_read_lines(buf_session *s, relnumber_t rel, blocknum_t blk,
                   const uint16_t *off, uint32_t n, int32_t *id);
int buf_read_lines_shared(buf_session *s, relnumber_t rel, blocknum_t blk,
                          const uint16_t *off, uint32_t n, int32_t *id);
int buf_read_recent(buf_session *s, relnumber_t rel, blocknum_t blk,
                    int32_t recent, const uint16_t *off, uint32_t n,
                    int32_t *id);
int buf_read_recent_shared(buf_session *s, relnumber_t rel, blocknum_t blk,
                           int32_t recent, const uint16_t *off, uint32_t n,
                           int32_t *id);
int buf_read_prefetched(buf_session *s, int32_t *id);
int buf_read_prefetched_shared(buf_session *s, int32_t *id);

static inline __attribute__((always_inline)) int
buf_read(buf_session *s, relnumber_t rel, blocknum_t blk,
         const buf_read_opts *o, int32_t *id)
{
    uint32_t flags = o != NULL ? o->flags : 0;
    bool shared = (flags & BUF_READ_SHARED) != 0;

    if (flags & BUF_READ_PREFETCHED) {
        assert(o->strategy == NULL);
        assert(buf_prefetch_pending(s, rel, blk, s->prefetched_key));
        return shared ? buf_read_prefetched_shared(s, id)
                      : buf_read_prefetched(s, id);
    }
    if (flags & BUF_READ_RECENT) {
        assert(o->strategy == NULL);
        return shared ? buf_read_recent_shared(s, rel, blk, o->recent, o->lines,
                                               o->nlines, id)
                      : buf_read_recent(s, rel, blk, o->recent, o->lines,
                                        o->nlines, id);
    }
    if (shared || (o != NULL && o->lines != NULL)) {
        assert(o->strategy == NULL);
        return shared
                   ? buf_read_lines_shared(s, rel, blk, o->lines, o->nlines, id)
                   : buf_read_lines(s, rel, blk, o->lines, o->nlines, id);
    }
    return buf_read_plain(s, rel, blk, o != NULL ? o->strategy : NULL, id);
}

/* Out-of-line parts of the inline functions below. */
int buf_pin_slow(buf_session *s, int32_t id);
void buf_release_slow(buf_session *s, int32_t id);
uint64_t buf_hdr_wait_unlocked(buf_desc *d);
void buf_lock_wait(buf_desc *d, lwlock_mode mode);
void buf_lock_wake(buf_desc *d);

/*
 * Raises d's usage count towards usage_limit, from state st just seen by
 * a pin: a compare-and-swap only while below it (which a hot page never
 * is) and the header is unlocked.  Returns the state after.
 */
static inline uint64_t buf_usage_raise(buf_desc *d, uint64_t st,
                                       uint32_t usage_limit)
{
    while (__builtin_expect(BUF_USAGE(st) < usage_limit, 0) &&
           !(st & BM_LOCKED)) {
        if (atomic_compare_exchange_weak_explicit(
                &d->state, &st, st + BUF_USAGE_ONE, memory_order_relaxed,
                memory_order_relaxed))
            return st + BUF_USAGE_ONE;
    }
    return st;
}

/*
 * Adds the session's shared pin on d: one fetch_add.  If the header lock
 * was held at that instant the tag may be changing, so wait for its
 * release before the caller looks at the tag.  The usage count is raised
 * as buf_usage_raise() does.  Returns the state after the pin.
 */
static inline uint64_t buf_pin_shared(buf_desc *d, uint32_t usage_limit)
{
    uint64_t st = atomic_fetch_add_explicit(&d->state, BUF_REFCOUNT_ONE,
                                            memory_order_acquire) +
                  BUF_REFCOUNT_ONE;

    if (__builtin_expect((st & BM_LOCKED) != 0, 0))
        st = buf_hdr_wait_unlocked(d);
    return buf_usage_raise(d, st, usage_limit);
}

/* Drops the session's shared pin on d: one fetch_sub. */
static inline void buf_unpin_shared(buf_desc *d)
{
    atomic_fetch_sub_explicit(&d->state, BUF_REFCOUNT_ONE,
                              memory_order_release);
}

static inline buf_private_ref *buf_private_home(buf_session *s, int32_t id)
{
    return &s->refs[(uint32_t)id & (BUF_PRIVATE_REFS - 1)];
}

/*
 * Pins buffer id, whatever it holds.  Only for callers that know what it
 * holds (they hold another pin on it, or validate its tag afterwards, as
 * buf_read does).  A repeated pin is a private increment; a first pin is
 * one atomic fetch_add on the state word.  ENOMEM if the session cannot
 * track another pin.
 */
static inline int buf_pin(buf_session *s, int32_t id)
{
    buf_private_ref *r = buf_private_home(s, id);

    if (r->id == id) {
        r->count++;
        return KEEL_OK;
    }
    if (r->id == BUF_INVALID && s->displaced == 0) {
        r->id = id;
        r->count = 1;
        buf_pin_shared(&s->descs[id], BUF_MAX_USAGE);
        return KEEL_OK;
    }
    return buf_pin_slow(s, id);
}

/*
 * Drops one pin on id, held by the session.  Dropping the session's last
 * pin on the buffer is one atomic fetch_sub.
 */
static inline void buf_release(buf_session *s, int32_t id)
{
    buf_private_ref *r = buf_private_home(s, id);

    if (r->id == id) {
        if (--r->count == 0) {
            r->id = BUF_INVALID;
            buf_unpin_shared(&s->descs[id]);
        }
        return;
    }
    buf_release_slow(s, id);
}

/* Number of pins the session holds on id (0 if none). */
uint32_t buf_pin_count(buf_session *s, int32_t id);

/* True if the session holds a pin on id (for assertions: the home slot
 * answers without a call). */
static inline bool buf_pinned_by(buf_session *s, int32_t id)
{
    return buf_private_home(s, id)->id == id || buf_pin_count(s, id) > 0;
}

/* buf_page() through the session: the page memory of buffer id. */
static inline void *buf_session_page(const buf_session *s, int32_t id)
{
    return s->pages + (size_t)id * BLOCK_SIZE;
}

/*
 * A hint that buffer id, which the caller remembers holding a block it is
 * about to read with buf_read() and BUF_READ_RECENT, will be read: its
 * descriptor and the lines of its page at offsets off[0..n) are prefetched
 * at once, without the mapping table.  Reads, pins and confirms nothing
 * (the buffer may hold another block by now, which costs bandwidth only);
 * nothing if id is not a buffer.
 */
static inline void buf_prefetch_buffer(const buf_session *s, int32_t id,
                                       const uint16_t *off, uint32_t n)
{
    const char *page;

    if (id < 0 || (uint32_t)id >= s->nbuffers)
        return;
    page = buf_session_page(s, id);
    __builtin_prefetch(&s->descs[id]);
    for (uint32_t i = 0; i < n; i++)
        __builtin_prefetch(page + off[i]);
}

/* Total number of buffers the session holds pins on. */
uint32_t buf_session_pinned(const buf_session *s);

/* The block a pinned buffer holds. */
void buf_block_of(const buf_pool *p, int32_t id, relnumber_t *rel,
                  blocknum_t *blk);

/*
 * The content lock of a buffer lives in its state word (buf_internals.h):
 * shared holders are counted there, beside the pins, and an exclusive
 * holder sets EXCLUSIVE, only while no one holds it shared.  Uncontended,
 * locking and unlocking are one atomic each, and no system call; a waiter
 * spins briefly, then sleeps on the descriptor's lock_seq.  Not fair (a
 * stream of shared holders can hold off an exclusive one), not recursive
 * in exclusive mode.
 */

/* Drops a shared hold on d (and `also`: a pin, or 0); wakes waiters if it
 * was the last, unless the lock is held exclusively (then this was a share
 * taken back at once, and the holder wakes them when it unlocks). */
static inline void buf_share_release(buf_desc *d, uint64_t also)
{
    /* seq_cst, with the load of lock_waiters: see buf_lock_wait(). */
    uint64_t old = atomic_fetch_sub_explicit(&d->state, BUF_SHARE_ONE + also,
                                             memory_order_seq_cst);

    if (__builtin_expect(BUF_SHARES(old) == 1, 1) && !(old & BM_EXCLUSIVE) &&
        __builtin_expect(
            atomic_load_explicit(&d->lock_waiters, memory_order_seq_cst) != 0,
            0))
        buf_lock_wake(d);
}

/* Content locks, on a buffer the session has pinned. */
static inline void buf_lock(buf_session *s, int32_t id, lwlock_mode mode)
{
    buf_desc *d = &s->descs[id];

    assert(buf_pinned_by(s, id));
    if (mode == LW_SHARED) {
        uint64_t st = atomic_fetch_add_explicit(&d->state, BUF_SHARE_ONE,
                                                memory_order_acquire);
        /* Shares count holds, not sessions: 2^18 - 1 at most. */
        assert(BUF_SHARES(st) < BUF_REFCOUNT_MASK);
        if (__builtin_expect((st & BM_EXCLUSIVE) == 0, 1))
            return;
        buf_share_release(d, 0);
    } else {
        uint64_t st = atomic_load_relaxed(&d->state);
        if ((st & BUF_LOCK_MASK) == 0 &&
            atomic_compare_exchange_strong_explicit(
                &d->state, &st, st | BM_EXCLUSIVE, memory_order_acquire,
                memory_order_relaxed))
            return;
    }
    buf_lock_wait(d, mode);
}

/* buf_lock() if that is possible without waiting. */
bool buf_try_lock(buf_session *s, int32_t id, lwlock_mode mode);

/* Logs the session's pending changes if id is among their pages, before
 * its exclusive lock goes (buf_log.h). */
void buf_log_unlocking(buf_session *s, int32_t id);

static inline void buf_unlock(buf_session *s, int32_t id)
{
    buf_desc *d = &s->descs[id];

    if (atomic_load_relaxed(&d->state) & BM_EXCLUSIVE) {
        if (s->log_npending != 0)
            buf_log_unlocking(s, id);
        /* Only we can hold it: no one else holds it in any mode. */
        atomic_fetch_and_explicit(&d->state, ~BM_EXCLUSIVE,
                                  memory_order_seq_cst);
        if (atomic_load_explicit(&d->lock_waiters, memory_order_seq_cst) != 0)
            buf_lock_wake(d);
        return;
    }
    buf_share_release(d, 0);
}

/* Whether buffer id's content lock is held exclusively / at all (by
 * anyone): for assertions and tests. */
static inline bool buf_lock_held_exclusive(const buf_session *s, int32_t id)
{
    return (atomic_load_relaxed(&s->descs[id].state) & BM_EXCLUSIVE) != 0;
}
static inline bool buf_lock_held(const buf_session *s, int32_t id)
{
    return (atomic_load_relaxed(&s->descs[id].state) & BUF_LOCK_MASK) != 0;
}

/*
 * buf_unlock() then buf_release(): if this is the session's last pin on
 * the buffer, one atomic drops both.
 */
static inline void buf_unlock_release(buf_session *s, int32_t id)
{
    buf_private_ref *r = buf_private_home(s, id);
    buf_desc *d = &s->descs[id];

    if (r->id == id && r->count == 1 &&
        !(atomic_load_relaxed(&d->state) & BM_EXCLUSIVE)) {
        r->id = BUF_INVALID;
        r->count = 0;
        buf_share_release(d, BUF_REFCOUNT_ONE);
        return;
    }
    buf_unlock(s, id);
    buf_release(s, id);
}

/*
 * Marks a pinned, exclusively locked buffer dirty, and notes its change
 * for the log (buf_log.h): logged whole when the session unlocks it, or,
 * through buf_mark_dirty_range(), only bytes [off, off + len) of the
 * page (call it once per range changed; every changed byte must be in
 * one, or the page is logged wrongly).  Ranges and whole marks of one
 * lock hold add up.
 */
void buf_mark_dirty(buf_session *s, int32_t id);
void buf_mark_dirty_range(buf_session *s, int32_t id, uint32_t off,
                          uint32_t len);

/*
 * buf_mark_dirty_range() of [off, off + len) that is probably much like
 * [src, src + src_len) of the same page (a row's new version beside its
 * old one): the log then holds only the bytes between their common
 * prefix and suffix, and redo copies the rest from src.  The two must
 * not overlap, and src must hold, when the page is unlocked, the bytes
 * it is to be copied from (later ranges may change it).  One per page
 * and lock hold; another is logged as a plain range.
 */
void buf_mark_dirty_like(buf_session *s, int32_t id, uint32_t off,
                         uint32_t len, uint32_t src, uint32_t src_len);

/*
 * buf_mark_dirty() for a change that redo makes again by running the
 * operation `op` (registered with buf_log_register_op(), buf_log.h) on
 * the page as it was, with payload: a B-tree insert logs its item, not
 * the line pointers it shifted.  Operations of one lock hold are replayed
 * in order, before its ranges; a range named before an operation, or an
 * operation nobody registered, logs the page whole.
 */
void buf_mark_dirty_op(buf_session *s, int32_t id, uint8_t op,
                       const void *payload, uint16_t len);

/* The log the pool's changes go to and whose rule its writes obey (NULL:
 * none, as while a database is made).  Set before any session changes a
 * page. */
void buf_pool_set_wal(buf_pool *p, wal *w);

/* Writes every dirty buffer of rel and syncs its file (a relation whose
 * changes were not logged, before its transaction commits). */
int buf_flush_rel(buf_session *s, relnumber_t rel);

/*
 * Writes a pinned buffer to disk if it is dirty (the caller holds no
 * content lock on it; one is taken in shared mode).  The file is synced at
 * the next checkpoint.  On error the buffer stays dirty.
 */
int buf_flush(buf_session *s, int32_t id);

/*
 * Checkpoint: writes every dirty buffer in (relation, block) order, then
 * fsyncs each file written since the last checkpoint.  On error stops and
 * returns it; buffers not written stay dirty and files not synced stay
 * pending, so a retry finishes the job.
 */
int buf_checkpoint(buf_session *s);

/*
 * Drops the buffers of rel from block `from` on, without writing them
 * (before truncating or unlinking the relation; the caller sees to it
 * that no session reads them any more).  EBUSY, with nothing dropped, if
 * this session has one pinned.  Another session's pin is waited out (a
 * clock sweep's, a checkpoint's or a look-up's lasts a moment); one that
 * stays BUF_DROP_WAIT_US gives EBUSY, the buffers before it dropped
 * already, their changes gone as the call meant: call it again once the
 * relation's users are gone.
 */
int buf_drop_rel(buf_session *s, relnumber_t rel, blocknum_t from);

/* How long buf_drop_rel() waits for another session's pin to go. */
#define BUF_DROP_WAIT_US 1000000

/* Access strategies: rings for bulk reads and bulk writes. */
typedef enum buf_strategy_kind {
    BUF_STRATEGY_BULK_READ,  /* sequential scans: 32 buffers (256 KiB) */
    BUF_STRATEGY_BULK_WRITE, /* bulk loads: 256 buffers (2 MiB) */
} buf_strategy_kind;

/* A strategy belongs to one session.  NULL if memory is exhausted. */
buf_strategy *buf_strategy_create(buf_pool *p, buf_strategy_kind kind);
void buf_strategy_free(buf_strategy *st);
uint32_t buf_strategy_ring_size(const buf_strategy *st);

/* For tests: the buffer's state word, and whether the session's private
 * refcount table overflowed into its hash. */
uint64_t buf_state(const buf_pool *p, int32_t id);

#endif /* KEEL_STORAGE_BUFMGR_H */
