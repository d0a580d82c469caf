/*
 * bufmgr.c: the shared buffer pool: pins, lookups, loading and writing
 * pages, checkpoints.
 *
 * Read src/storage/README.md first: it states the protocol this file
 * implements (who changes the state word and the tag, and how), the lock
 * ordering, and why a hit needs no lock.
 */
#include "storage/bufmgr.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/clock.h"
#include "port/futex.h"
#include "port/spin.h"
#include "storage/buf_log.h"
#include "storage/buf_pool.h"
#include "storage/fault.h"
#include "storage/page.h"
#include "wal/wal.h"

#define BUF_MIN_BUFFERS      16
#define BUF_OVERFLOW_INITIAL 64

static inline buf_desc *desc_of(const buf_pool *p, int32_t id)
{
    assert(id >= 0 && (uint32_t)id < p->nbuffers);
    return &p->descs[id];
}

/* ------------------------------------------------------------------ */
/* The header lock and state-word updates                             */
/* ------------------------------------------------------------------ */

/* Waits until the header lock is free; returns the state seen then. */
uint64_t buf_hdr_wait_unlocked(buf_desc *d)
{
    uint64_t st = atomic_load_acquire(&d->state);
    spin_wait w;

    if (!(st & BM_LOCKED))
        return st;
    spin_wait_init(&w);
    while ((st = atomic_load_acquire(&d->state)) & BM_LOCKED)
        spin_wait_once(&w);
    return st;
}

/* Takes the header lock; returns the state, LOCKED included. */
static uint64_t hdr_lock(buf_desc *d)
{
    for (;;) {
        uint64_t old = atomic_fetch_or_explicit(&d->state, BM_LOCKED,
                                                memory_order_acquire);
        if (!(old & BM_LOCKED))
            return old | BM_LOCKED;
        buf_hdr_wait_unlocked(d);
    }
}

/*
 * Releases the header lock, installing `want` for every bit but the
 * refcount and the content lock.  A compare-and-swap loop carries their
 * current values over, so pins, unpins, locks and unlocks that happened
 * while we held the header lock survive.
 */
static void hdr_unlock(buf_desc *d, uint64_t want)
{
    const uint64_t keep = BUF_REFCOUNT_MASK | BUF_LOCK_MASK;
    uint64_t cur = atomic_load_relaxed(&d->state);

    want &= ~(keep | BM_LOCKED);
    while (!atomic_compare_exchange_weak_explicit(
        &d->state, &cur, (cur & keep) | want, memory_order_release,
        memory_order_relaxed)) {
        assert(cur & BM_LOCKED);
    }
}

/* ------------------------------------------------------------------ */
/* Content locks (the fast paths are inline in bufmgr.h)              */
/* ------------------------------------------------------------------ */

/* Spins before a waiter sleeps: holders keep content locks briefly. */
#define BUF_LOCK_SPINS 100

/* Takes d's content lock in mode if no one holds it in a conflicting
 * mode; a CAS, retried while only other bits change. */
static bool content_try(buf_desc *d, lwlock_mode mode)
{
    uint64_t cur = atomic_load_explicit(&d->state, memory_order_seq_cst);

    for (;;) {
        uint64_t busy = mode == LW_SHARED ? BM_EXCLUSIVE : BUF_LOCK_MASK;
        uint64_t want =
            mode == LW_SHARED ? cur + BUF_SHARE_ONE : cur | BM_EXCLUSIVE;
        if (cur & busy)
            return false;
        /* As in buf_lock(): a carry out of the share field would read as
         * EXCLUSIVE. */
        assert(mode != LW_SHARED || BUF_SHARES(cur) < BUF_REFCOUNT_MASK);
        if (atomic_compare_exchange_weak_explicit(&d->state, &cur, want,
                                                  memory_order_seq_cst,
                                                  memory_order_relaxed))
            return true;
    }
}

/*
 * The slow path of buf_lock(): spins, then sleeps until the lock can be
 * had.  A waiter counts itself in lock_waiters before it reads lock_seq
 * and tests the state; a releaser changes the state before it reads
 * lock_waiters, and bumps lock_seq before waking.  All four are seq_cst,
 * so either the releaser sees the waiter and wakes it, or the waiter's
 * test sees the release.
 */
void buf_lock_wait(buf_desc *d, lwlock_mode mode)
{
    for (int spins = 0; spins < BUF_LOCK_SPINS; spins++) {
        if (content_try(d, mode))
            return;
        cpu_relax();
    }
    atomic_fetch_add_explicit(&d->lock_waiters, 1, memory_order_seq_cst);
    for (;;) {
        uint32_t seq = atomic_load_explicit(&d->lock_seq, memory_order_seq_cst);
        if (content_try(d, mode))
            break;
        futex_wait(&d->lock_seq, seq);
    }
    atomic_fetch_sub_explicit(&d->lock_waiters, 1, memory_order_relaxed);
}

/* Wakes every session sleeping on d's content lock. */
void buf_lock_wake(buf_desc *d)
{
    atomic_fetch_add_explicit(&d->lock_seq, 1, memory_order_seq_cst);
    futex_wake(&d->lock_seq, INT32_MAX);
}

/* ------------------------------------------------------------------ */
/* Private refcounts                                                  */
/* ------------------------------------------------------------------ */

static inline uint32_t overflow_slot(uint32_t id, uint32_t mask)
{
    return (uint32_t)hash_u64(id) & mask;
}

static buf_private_ref *overflow_find(buf_session *s, int32_t id)
{
    uint32_t mask = s->overflow_cap - 1;

    for (uint32_t i = overflow_slot((uint32_t)id, mask);; i = (i + 1) & mask) {
        if (s->overflow[i].id == id)
            return &s->overflow[i];
        if (s->overflow[i].id == BUF_INVALID)
            return NULL;
    }
}

/* Inserts (id, count) into the overflow hash, which has room. */
static buf_private_ref *overflow_put(buf_session *s, int32_t id, uint32_t count)
{
    uint32_t mask = s->overflow_cap - 1;
    uint32_t i = overflow_slot((uint32_t)id, mask);

    while (s->overflow[i].id != BUF_INVALID)
        i = (i + 1) & mask;
    s->overflow[i].id = id;
    s->overflow[i].count = count;
    s->overflow_count++;
    return &s->overflow[i];
}

/* Makes room for one more overflow entry (load at most one half). */
static int overflow_reserve(buf_session *s)
{
    buf_private_ref *old = s->overflow;
    uint32_t oldcap = s->overflow_cap;
    uint32_t cap;

    if (old != NULL && 2 * (s->overflow_count + 1) <= oldcap)
        return KEEL_OK;
    cap = oldcap ? oldcap * 2 : BUF_OVERFLOW_INITIAL;
    s->overflow = malloc(sizeof(buf_private_ref) * cap);
    if (s->overflow == NULL) {
        s->overflow = old;
        return kerr_set(&s->err, KEEL_ENOMEM,
                        "out of memory tracking %u pinned buffers",
                        buf_session_pinned(s) + 1);
    }
    s->overflow_cap = cap;
    s->overflow_count = 0;
    for (uint32_t i = 0; i < cap; i++)
        s->overflow[i].id = BUF_INVALID;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i].id != BUF_INVALID)
            overflow_put(s, old[i].id, old[i].count);
    free(old);
    return KEEL_OK;
}

/* Removes entry e from the overflow hash, shifting back its successors so
 * that every remaining entry stays reachable from its home slot. */
static void overflow_remove(buf_session *s, buf_private_ref *e)
{
    uint32_t mask = s->overflow_cap - 1;
    uint32_t hole = (uint32_t)(e - s->overflow);

    for (uint32_t i = (hole + 1) & mask; s->overflow[i].id != BUF_INVALID;
         i = (i + 1) & mask) {
        uint32_t home = overflow_slot((uint32_t)s->overflow[i].id, mask);
        /* Move i into the hole unless its home lies in (hole, i]. */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            s->overflow[hole] = s->overflow[i];
            hole = i;
        }
    }
    s->overflow[hole].id = BUF_INVALID;
    s->overflow_count--;
}

/* The session's entry for id, wherever it is, or NULL. */
static buf_private_ref *private_find(buf_session *s, int32_t id)
{
    buf_private_ref *r = buf_private_home(s, id);

    if (r->id == id)
        return r;
    if (s->displaced == 0)
        return NULL;
    for (int i = 0; i < BUF_PRIVATE_REFS; i++)
        if (s->refs[i].id == id)
            return &s->refs[i];
    return s->overflow_count > 0 ? overflow_find(s, id) : NULL;
}

/*
 * Makes an entry for id, which has none, with count 1: in its home slot if
 * free, else in another free slot, else in the overflow hash.  ENOMEM (in
 * the session's kerr) if the hash cannot grow.
 */
static int private_add(buf_session *s, int32_t id)
{
    buf_private_ref *r = buf_private_home(s, id);

    if (r->id != BUF_INVALID) {
        r = NULL;
        for (int i = 0; i < BUF_PRIVATE_REFS && r == NULL; i++)
            if (s->refs[i].id == BUF_INVALID)
                r = &s->refs[i];
        if (r == NULL) {
            if (overflow_reserve(s) != KEEL_OK)
                return KEEL_ENOMEM;
            r = overflow_put(s, id, 1);
        }
        s->displaced++;
    }
    r->id = id;
    r->count = 1;
    return KEEL_OK;
}

/* Forgets entry r of id, whose count has dropped to zero. */
static void private_forget(buf_session *s, buf_private_ref *r, int32_t id)
{
    if (r != buf_private_home(s, id))
        s->displaced--;
    if (r >= s->refs && r < s->refs + BUF_PRIVATE_REFS)
        r->id = BUF_INVALID;
    else
        overflow_remove(s, r);
}

/*
 * Pins id (whatever it holds: the caller knows, or holds its partition lock
 * so its tag cannot change) and records it in the session, raising the
 * usage count at most to usage_limit: BUF_MAX_USAGE for ordinary use, 1
 * through a strategy, 0 for the buffer manager's own passes (a checkpoint
 * must not make every dirty page look hot).
 */
static int pin_limited(buf_session *s, int32_t id, uint32_t usage_limit)
{
    buf_private_ref *r = private_find(s, id);

    if (r != NULL) {
        r->count++;
        return KEEL_OK;
    }
    if (private_add(s, id) != KEEL_OK)
        return KEEL_ENOMEM;
    buf_pin_shared(desc_of(s->pool, id), usage_limit);
    return KEEL_OK;
}

int buf_pin_slow(buf_session *s, int32_t id)
{
    return pin_limited(s, id, BUF_MAX_USAGE);
}

void buf_release_slow(buf_session *s, int32_t id)
{
    buf_private_ref *r = private_find(s, id);

    assert(r != NULL && r->count > 0);
    if (--r->count > 0)
        return;
    private_forget(s, r, id);
    buf_unpin_shared(desc_of(s->pool, id));
}

uint32_t buf_pin_count(buf_session *s, int32_t id)
{
    buf_private_ref *r = private_find(s, id);
    return r != NULL ? r->count : 0;
}

uint32_t buf_session_pinned(const buf_session *s)
{
    uint32_t n = s->overflow_count;

    for (int i = 0; i < BUF_PRIVATE_REFS; i++)
        n += s->refs[i].id != BUF_INVALID;
    return n;
}

/* ------------------------------------------------------------------ */
/* I/O state                                                          */
/* ------------------------------------------------------------------ */

/* Sleeps until no I/O is in progress on d. */
static void io_wait(buf_desc *d)
{
    atomic_fetch_add_explicit(&d->io_waiters, 1, memory_order_seq_cst);
    for (;;) {
        uint32_t seq = atomic_load_explicit(&d->io_seq, memory_order_seq_cst);
        uint64_t st = atomic_load_explicit(&d->state, memory_order_seq_cst);
        if (!(st & BM_IO_IN_PROGRESS))
            break;
        futex_wait(&d->io_seq, seq);
    }
    atomic_fetch_sub_explicit(&d->io_waiters, 1, memory_order_relaxed);
}

/*
 * Ends the I/O the caller started on d.  A read that succeeded makes the
 * buffer valid; a write that succeeded makes it clean unless it was
 * dirtied again meanwhile; a failure sets IO_ERROR (a failed write leaves
 * the buffer dirty).  Wakes sessions waiting for the I/O.
 */
static void io_finish(buf_desc *d, bool is_write, bool ok)
{
    uint64_t cur = atomic_load_relaxed(&d->state);
    uint64_t want;

    for (;;) {
        if (cur & BM_LOCKED) {
            cur = buf_hdr_wait_unlocked(d);
            continue;
        }
        want = cur & ~BM_IO_IN_PROGRESS;
        if (!ok)
            want |= BM_IO_ERROR;
        else if (!is_write)
            want = (want | BM_VALID) & ~BM_IO_ERROR;
        else if (cur & BM_JUST_DIRTIED)
            want &= ~BM_IO_ERROR;
        else
            want &= ~(BM_IO_ERROR | BM_DIRTY);
        /* seq_cst: pairs with io_wait()'s waiter count (see README). */
        if (atomic_compare_exchange_weak_explicit(&d->state, &cur, want,
                                                  memory_order_seq_cst,
                                                  memory_order_relaxed))
            break;
    }
    if (atomic_load_explicit(&d->io_waiters, memory_order_seq_cst) > 0) {
        atomic_fetch_add_explicit(&d->io_seq, 1, memory_order_seq_cst);
        futex_wake(&d->io_seq, INT32_MAX);
    }
}

/* ------------------------------------------------------------------ */
/* Sync requests                                                      */
/* ------------------------------------------------------------------ */

/* Remembers that rel was written and must be synced at checkpoint. */
static int sync_request(buf_pool *p, relnumber_t rel, kerr *err)
{
    int rc = KEEL_OK;

    pthread_mutex_lock(&p->sync_lock);
    for (uint32_t i = 0; i < p->npending_sync; i++)
        if (p->pending_sync[i] == rel)
            goto out;
    if (p->npending_sync == p->pending_sync_cap) {
        uint32_t cap = p->pending_sync_cap ? 2 * p->pending_sync_cap : 16;
        relnumber_t *n = realloc(p->pending_sync, sizeof(*n) * cap);
        if (n == NULL) {
            rc =
                kerr_set(err, KEEL_ENOMEM,
                         "out of memory remembering relation %u for sync", rel);
            goto out;
        }
        p->pending_sync = n;
        p->pending_sync_cap = cap;
    }
    p->pending_sync[p->npending_sync++] = rel;
out:
    pthread_mutex_unlock(&p->sync_lock);
    return rc;
}

static void sync_forget(buf_pool *p, relnumber_t rel)
{
    pthread_mutex_lock(&p->sync_lock);
    for (uint32_t i = 0; i < p->npending_sync; i++)
        if (p->pending_sync[i] == rel) {
            p->pending_sync[i] = p->pending_sync[--p->npending_sync];
            break;
        }
    pthread_mutex_unlock(&p->sync_lock);
}

static int cmp_relnumber(const void *a, const void *b)
{
    relnumber_t x = *(const relnumber_t *)a, y = *(const relnumber_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Syncs every file with a pending request.  A file whose sync fails, and
 * every file after it, stays pending.
 */
static int sync_pending(buf_pool *p, kerr *err)
{
    relnumber_t *rels;
    uint32_t n;
    int rc = KEEL_OK;

    pthread_rwlock_wrlock(&p->write_barrier);
    pthread_mutex_lock(&p->sync_lock);
    n = p->npending_sync;
    rels = p->pending_sync;
    p->pending_sync = NULL;
    p->npending_sync = p->pending_sync_cap = 0;
    pthread_mutex_unlock(&p->sync_lock);
    pthread_rwlock_unlock(&p->write_barrier);

    if (n > 0)
        qsort(rels, n, sizeof(*rels), cmp_relnumber);
    for (uint32_t i = 0; i < n; i++) {
        smgr_rel *r;
        if (rc == KEEL_OK) {
            rc = smgr_rel_open(p->smgr, rels[i], &r, err);
            if (rc == KEEL_ENOENT) {
                rc = KEEL_OK; /* dropped since: nothing to sync */
                continue;
            }
            if (rc == KEEL_OK)
                rc = smgr_sync(r, err);
            if (rc == KEEL_OK)
                continue;
        }
        if (sync_request(p, rels[i], NULL) != KEEL_OK)
            break; /* cannot happen: capacity was just given back */
    }
    free(rels);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

/* Fills the page of d (whose I/O the caller owns) from disk, through r if
 * the caller has the relation open already (else NULL), and applies the
 * relation's page check (smgr_check()): a page that fails it never
 * becomes valid. */
static int load_page(buf_session *s, buf_desc *d, smgr_rel *r, kerr *err)
{
    buf_tag tag = atomic_load_relaxed(&d->tag);
    int rc = KEEL_OK;

    if (s->read_zero) {
        /* Redo of a whole image: the page on disk may be torn, and is
         * about to be replaced anyway. */
        memset(buf_page(s->pool, d->id), 0, BLOCK_SIZE);
#ifndef NDEBUG
        buf_log_shadow_load(s->pool, d->id, false);
#endif
        io_finish(d, false, true);
        return KEEL_OK;
    }
    if (r == NULL)
        rc = smgr_rel_open(s->pool->smgr, buf_tag_rel(tag), &r, err);
    if (rc == KEEL_OK)
        rc = smgr_read(r, buf_tag_block(tag), buf_page(s->pool, d->id), err);
    if (rc == KEEL_OK)
        rc = smgr_check(r, buf_tag_block(tag), buf_page(s->pool, d->id), err);
#ifndef NDEBUG
    buf_log_shadow_load(s->pool, d->id, rc == KEEL_OK);
#endif
    io_finish(d, false, rc == KEEL_OK);
    return rc;
}

/*
 * For the pinned buffer d: false if it is valid (after waiting out
 * another session's I/O on it); else starts an I/O on it and returns true:
 * the caller fills the page and ends the I/O with io_finish().
 */
static bool io_start_fill(buf_desc *d)
{
    for (;;) {
        uint64_t st = atomic_load_acquire(&d->state);

        if (st & BM_VALID)
            return false;
        if (st & BM_IO_IN_PROGRESS) {
            io_wait(d);
            continue;
        }
        if (st & BM_LOCKED) {
            buf_hdr_wait_unlocked(d);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(
                &d->state, &st, st | BM_IO_IN_PROGRESS, memory_order_acquire,
                memory_order_relaxed))
            return true;
    }
}

/*
 * Makes the pinned buffer d, whose tag is right, valid: returns at once if
 * it is, waits if another session is loading it, and loads it itself if
 * nobody is (the last attempt failed).  On error the pin is still held.
 */
static int make_valid(buf_session *s, buf_desc *d)
{
    return io_start_fill(d) ? load_page(s, d, NULL, &s->err) : KEEL_OK;
}

/*
 * Writes the pinned buffer d, which the caller holds content-locked (any
 * mode, so the page cannot change under us), if it is dirty.  The write
 * goes from a private copy so that the checksum can be set without
 * touching shared memory other sessions are reading.
 */
static int flush_locked(buf_session *s, buf_desc *d)
{
    uint64_t st = atomic_load_acquire(&d->state);
    buf_tag tag;
    smgr_rel *r;
    int rc;

    for (;;) {
        if (!(st & BM_DIRTY) || !(st & BM_VALID))
            return KEEL_OK;
        if (st & BM_IO_IN_PROGRESS) {
            io_wait(d);
            st = atomic_load_acquire(&d->state);
            continue;
        }
        if (st & BM_LOCKED) {
            st = buf_hdr_wait_unlocked(d);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(
                &d->state, &st, (st | BM_IO_IN_PROGRESS) & ~BM_JUST_DIRTIED,
                memory_order_acquire, memory_order_relaxed))
            break;
    }
    tag = atomic_load_relaxed(&d->tag);
    memcpy(s->write_copy, buf_page(s->pool, d->id), BLOCK_SIZE);
    /* The write-ahead rule: the log first, up to the page's last change.
     * Once the log has failed nothing is written: pages may hold changes
     * it never got. */
    rc = KEEL_OK;
#ifndef NDEBUG
    buf_log_shadow_check(s->pool, d->id, s->write_copy);
#endif
    if (s->pool->wal != NULL) {
        uint64_t lsn = ((const page_header *)s->write_copy)->lsn;
        if (wal_failed(s->pool->wal))
            rc = wal_flush(s->pool->wal, UINT64_MAX, &s->err);
        else if (lsn != 0)
            rc = wal_flush(s->pool->wal, lsn, &s->err);
    }
    if (rc == KEEL_OK)
        rc = smgr_rel_open(s->pool->smgr, buf_tag_rel(tag), &r, &s->err);
    if (rc == KEEL_OK) {
        pthread_rwlock_rdlock(&s->pool->write_barrier);
        rc = smgr_write(r, buf_tag_block(tag), s->write_copy, &s->err);
        if (rc == KEEL_OK)
            rc = sync_request(s->pool, buf_tag_rel(tag), &s->err);
        pthread_rwlock_unlock(&s->pool->write_barrier);
    }
    /* Only now may a checkpoint waiting for this I/O go on to its syncs. */
    io_finish(d, true, rc == KEEL_OK);
    return rc;
}

/*
 * Picks a victim and, if it is dirty, writes it.  Returns it pinned (and
 * recorded in the session).  A dirty victim whose content lock is busy is
 * skipped rather than waited for: its holder may be waiting for a lock we
 * hold, and another victim is as good.
 */
static int victim_get(buf_session *s, buf_strategy *st, int32_t *out)
{
    for (;;) {
        int32_t id;
        int rc = buf_victim_pick(s->pool, st, &id, &s->err);
        buf_desc *d;

        if (rc != KEEL_OK)
            return rc;
        d = desc_of(s->pool, id);
        if (private_add(s, id) != KEEL_OK) {
            buf_unpin_shared(d);
            return KEEL_ENOMEM;
        }
        if (atomic_load_relaxed(&d->state) & BM_DIRTY) {
            if (!content_try(d, LW_SHARED)) {
                buf_release(s, id);
                continue;
            }
            rc = flush_locked(s, d);
            buf_unlock(s, id);
            if (rc != KEEL_OK) {
                buf_release(s, id);
                return rc;
            }
        }
        *out = id;
        return KEEL_OK;
    }
}

/* Locks the partitions of two hashes exclusively, in index order. */
static void lock_partitions(buf_table *t, uint32_t a, uint32_t b)
{
    if (a == b) {
        lwlock_acquire(buf_table_lock(t, a), LW_EXCLUSIVE);
        return;
    }
    lwlock_acquire(buf_table_lock(t, a < b ? a : b), LW_EXCLUSIVE);
    lwlock_acquire(buf_table_lock(t, a < b ? b : a), LW_EXCLUSIVE);
}

static void unlock_partitions(buf_table *t, uint32_t a, uint32_t b)
{
    lwlock_release(buf_table_lock(t, a));
    if (a != b)
        lwlock_release(buf_table_lock(t, b));
}

/* What victim_claim() did with its victim. */
typedef enum claim_result {
    CLAIM_TAKEN, /* the victim holds the tag now, its I/O ours to do */
    CLAIM_FOUND, /* another buffer has the tag: pinned instead */
    CLAIM_RETRY  /* the victim was pinned or dirtied since: released */
} claim_result;

/*
 * Gives the pinned victim to tag (hash), unless the exact look-up under
 * the partition lock finds a buffer that has it: then pins that one in
 * *found and releases the victim (CLAIM_FOUND; the status is the pin's).
 * Else, under both partition locks and the victim's header lock, drops the
 * victim's old mapping and maps it to tag, valid tag, no valid page, I/O
 * in progress (CLAIM_TAKEN): whoever finds it waits until the caller
 * ends that I/O with io_finish().  A victim that someone pinned or
 * dirtied since it was chosen is released (CLAIM_RETRY).
 */
static int victim_claim(buf_session *s, int32_t victim, buf_tag tag,
                        uint64_t hash, buf_strategy *strategy,
                        claim_result *res, int32_t *found)
{
    buf_pool *p = s->pool;
    buf_table *t = &p->table;
    uint32_t part = buf_table_partition(t, hash);
    buf_desc *v = desc_of(p, victim);
    buf_tag old_tag = atomic_load_relaxed(&v->tag);
    uint64_t old_hash = buf_tag_hash(old_tag);
    bool had_tag = old_tag != BUF_TAG_NONE;
    uint32_t old_part = had_tag ? buf_table_partition(t, old_hash) : part;
    int32_t id;
    uint64_t st;
    int rc;

    lock_partitions(t, part, old_part);
    id = buf_table_lookup_locked(t, tag, hash);
    if (id >= 0) {
        /* Someone loaded it while we were finding a victim. */
        rc = pin_limited(s, id, strategy ? 1 : BUF_MAX_USAGE);
        unlock_partitions(t, part, old_part);
        buf_release(s, victim);
        *res = CLAIM_FOUND;
        *found = id;
        return rc;
    }
    st = hdr_lock(v);
    if (BUF_REFCOUNT(st) != 1 || (st & (BM_DIRTY | BM_IO_IN_PROGRESS))) {
        /* Pinned or dirtied by someone since we chose it. */
        hdr_unlock(v, st);
        unlock_partitions(t, part, old_part);
        buf_release(s, victim);
        *res = CLAIM_RETRY;
        return KEEL_OK;
    }
    assert(atomic_load_relaxed(&v->tag) == old_tag);
    if (had_tag)
        buf_table_delete(t, victim, old_hash);
    atomic_store_relaxed(&v->tag, tag);
    buf_table_insert(t, victim, hash);
    hdr_unlock(v, BM_TAG_VALID | BM_IO_IN_PROGRESS | BUF_USAGE_ONE);
    unlock_partitions(t, part, old_part);
    *res = CLAIM_TAKEN;
    return KEEL_OK;
}

/*
 * The slow path of buf_read(): the block is not (or was not seen to be)
 * in the pool.  Takes a victim and gives it the block (victim_claim(),
 * whose look-up under the partition lock is exact), then loads it from
 * disk (through srel, the relation's open file); or pins the buffer that
 * has the block after all.
 */
static int read_slow(buf_session *s, buf_tag tag, uint64_t hash,
                     buf_strategy *strategy, smgr_rel *srel, int32_t *out)
{
    buf_pool *p = s->pool;
    claim_result res;
    int32_t id, victim;
    int rc;

    for (;;) {
        /*
         * No locked look-up first: the lock-free one just missed, and the
         * exact one under the exclusive lock catches the rare race.
         */
        rc = victim_get(s, strategy, &victim);
        if (rc != KEEL_OK)
            return rc;
        rc = victim_claim(s, victim, tag, hash, strategy, &res, &id);
        if (res == CLAIM_FOUND)
            break;
        if (res == CLAIM_RETRY)
            continue;
        rc = load_page(s, desc_of(p, victim), srel, &s->err);
        if (rc != KEEL_OK) {
            buf_release(s, victim);
            return rc;
        }
        *out = victim;
        return KEEL_OK;
    }
    if (rc != KEEL_OK)
        return rc;
    rc = make_valid(s, desc_of(p, id));
    if (rc != KEEL_OK) {
        buf_release(s, id);
        return rc;
    }
    *out = id;
    return KEEL_OK;
}

/*
 * buf_read()'s path when the lock-free lookup found nothing usable:
 * checks that the block exists, then loads it (read_slow()).
 */
static int read_miss(buf_session *s, buf_tag tag, uint64_t hash,
                     buf_strategy *strategy, int32_t *out)
{
    relnumber_t rel = buf_tag_rel(tag);
    blocknum_t blk = buf_tag_block(tag);
    smgr_rel *r;
    int rc = smgr_rel_open(s->pool->smgr, rel, &r, &s->err);

    if (rc != KEEL_OK)
        return rc;
    /* Refuse blocks past the end before spending a victim on them. */
    if (blk >= smgr_nblocks(r))
        return kerr_set(&s->err, KEEL_EEOF,
                        "could not read block %u of file \"%s\": "
                        "the relation has only %u blocks",
                        blk, smgr_rel_path(r), smgr_nblocks(r));
    return read_slow(s, tag, hash, strategy, r, out);
}

/*
 * Pins buffer id, which a lock-free look-up (or the caller's memory)
 * says holds tag, and confirms that it does once pinned: a buffer held
 * by nobody may have been given to another block since.  A buffer the
 * session already pins needs no atomics; one being loaded is waited for
 * (make_valid()).  KEEL_OK with *hit true: pinned, valid, in *out, and
 * with share locked in shared mode too (in the pin's fetch_add when this
 * is the session's first pin); KEEL_OK with *hit false: it holds another
 * block (or none, or is not valid yet under our own pin), nothing pinned
 * or locked; an error: nothing pinned or locked.
 */
static inline __attribute__((always_inline)) int
pin_confirm(buf_session *s, int32_t id, buf_tag tag, buf_strategy *strategy,
            bool share, bool *hit, int32_t *out)
{
    buf_desc *d = desc_of(s->pool, id);
    buf_private_ref *home = buf_private_home(s, id);
    buf_private_ref *r = home->id == id      ? home
                         : s->displaced == 0 ? NULL
                                             : private_find(s, id);
    uint32_t usage_limit = strategy ? 1 : BUF_MAX_USAGE;
    bool locked = false;
    uint64_t st;
    int rc;

    *hit = false;
    if (r != NULL) {
        /* Our own pin keeps the tag from changing: no atomics. */
        if (atomic_load_relaxed(&d->tag) != tag ||
            !(atomic_load_relaxed(&d->state) & BM_VALID))
            return KEEL_OK;
        r->count++;
        if (share)
            buf_lock(s, id, LW_SHARED);
        *hit = true;
        *out = id;
        return KEEL_OK;
    }
    if (__builtin_expect(home->id == BUF_INVALID && s->displaced == 0, 1)) {
        home->id = id;
        home->count = 1;
    } else if ((rc = private_add(s, id)) != KEEL_OK) {
        return rc;
    }
    if (share) {
        /* The pin and the shared lock in one fetch_add.  Kept only on a
         * valid page that no one holds exclusively and whose header is
         * not locked (its tag may be changing); else given back at once,
         * and the lock taken the ordinary way once the page is right. */
        st = atomic_fetch_add_explicit(&d->state,
                                       BUF_REFCOUNT_ONE + BUF_SHARE_ONE,
                                       memory_order_acquire) +
             BUF_REFCOUNT_ONE + BUF_SHARE_ONE;
        /* Shares count holds, not sessions: the field must not wrap. */
        assert(BUF_SHARES(st) != 0);
        locked = (st & (BM_LOCKED | BM_EXCLUSIVE | BM_VALID)) == BM_VALID;
        if (__builtin_expect(!locked, 0)) {
            buf_share_release(d, 0);
            if (st & BM_LOCKED)
                st = buf_hdr_wait_unlocked(d);
        }
        st = buf_usage_raise(d, st, usage_limit);
    } else {
        st = buf_pin_shared(d, usage_limit);
    }
    /* Re-check: the buffer may have been reused since the look-up. */
    if (__builtin_expect(atomic_load_relaxed(&d->tag) != tag, 0)) {
        if (locked)
            buf_unlock_release(s, id);
        else
            buf_release(s, id);
        return KEEL_OK;
    }
    if (__builtin_expect((st & BM_VALID) == 0, 0) &&
        (rc = make_valid(s, d)) != KEEL_OK) {
        buf_release(s, id);
        return rc;
    }
    if (share && !locked)
        buf_lock(s, id, LW_SHARED);
    *hit = true;
    *out = id;
    return KEEL_OK;
}

/*
 * buf_read(), each of its copies with flags (BUF_READ_*) a constant: the
 * hit path inline, with the prefetch of n lines (none for a plain read)
 * between the bucket's head and the descriptor.  If recent is a buffer id,
 * it is tried first, without the mapping table (its lines prefetched the
 * same way unless BUF_READ_RECENT or BUF_READ_PREFETCHED says the caller
 * has done so), but pinned only if its tag is the block's when first
 * read, so that a wrong guess leaves no trace (usage count, a ring's
 * claim); so is the buffer buf_prefetch() last found for this very block,
 * in place of recent (and then the lines count as fetched only if it is
 * recent).  With BUF_READ_SHARED the buffer comes back share-locked as
 * well (pin_confirm(); after a load, by buf_lock()).
 */
static inline __attribute__((always_inline)) int
read_buffer(buf_session *s, relnumber_t rel, blocknum_t blk,
            buf_strategy *strategy, const uint16_t *off, uint32_t n,
            int32_t recent, uint32_t flags, int32_t *out)
{
    buf_pool *p = s->pool;
    buf_tag tag = buf_tag_make(rel, blk);
    bool fetched = (flags & (BUF_READ_RECENT | BUF_READ_PREFETCHED)) != 0;
    bool share = (flags & BUF_READ_SHARED) != 0;
    uint64_t hash;
    int32_t id;
    bool hit;
    int rc;

    /* Tag 0 means "no block": never look it up. */
    if (__builtin_expect(rel == INVALID_RELNUMBER, 0))
        return kerr_set(&s->err, KEEL_EINVAL, "invalid relation number 0");
    if (tag == s->prefetched_tag) {
        /* The caller's lines were fetched only if it named this buffer. */
        fetched = fetched && recent == s->prefetched_id;
        recent = s->prefetched_id;
        s->prefetched_tag = BUF_TAG_NONE;
    }
    if (recent >= 0 && (uint32_t)recent < p->nbuffers) {
        const char *page = buf_session_page(s, recent);
        for (uint32_t i = 0; !fetched && i < n; i++)
            __builtin_prefetch(page + off[i]);
        if (atomic_load_relaxed(&desc_of(p, recent)->tag) == tag) {
            rc = pin_confirm(s, recent, tag, strategy, share, &hit, out);
            if (rc != KEEL_OK || hit)
                return rc;
        }
    }
    hash = buf_tag_hash(tag);
    id = buf_table_head(&p->table, hash);
    if (n > 0 && __builtin_expect(id >= 0, 1) && id != recent) {
        const char *page = buf_session_page(s, id);
        for (uint32_t i = 0; i < n; i++)
            __builtin_prefetch(page + off[i]);
    }
    id = buf_table_lookup_from(&p->table, tag, id);
    if (__builtin_expect(id >= 0, 1)) {
        rc = pin_confirm(s, id, tag, strategy, share, &hit, out);
        if (rc != KEEL_OK || hit)
            return rc;
    }
    rc = read_miss(s, tag, hash, strategy, out);
    if (share && rc == KEEL_OK)
        buf_lock(s, *out, LW_SHARED);
    return rc;
}

int buf_read_plain(buf_session *s, relnumber_t rel, blocknum_t blk,
                   buf_strategy *strategy, int32_t *out)
{
    s->reads++;
    return read_buffer(s, rel, blk, strategy, NULL, 0, BUF_INVALID, 0, out);
}

int buf_read_lines(buf_session *s, relnumber_t rel, blocknum_t blk,
                   const uint16_t *off, uint32_t n, int32_t *out)
{
    assert(n <= BUF_PREFETCH_MAX);
    s->reads++;
    return read_buffer(s, rel, blk, NULL, off, n, BUF_INVALID, 0, out);
}

int buf_read_lines_shared(buf_session *s, relnumber_t rel, blocknum_t blk,
                          const uint16_t *off, uint32_t n, int32_t *out)
{
    assert(n <= BUF_PREFETCH_MAX);
    s->reads++;
    return read_buffer(s, rel, blk, NULL, off, n, BUF_INVALID, BUF_READ_SHARED,
                       out);
}

int buf_read_recent(buf_session *s, relnumber_t rel, blocknum_t blk,
                    int32_t recent, const uint16_t *off, uint32_t n,
                    int32_t *out)
{
    assert(n <= BUF_PREFETCH_MAX);
    s->reads++;
    return read_buffer(s, rel, blk, NULL, off, n, recent, BUF_READ_RECENT, out);
}

int buf_read_recent_shared(buf_session *s, relnumber_t rel, blocknum_t blk,
                           int32_t recent, const uint16_t *off, uint32_t n,
                           int32_t *out)
{
    assert(n <= BUF_PREFETCH_MAX);
    s->reads++;
    return read_buffer(s, rel, blk, NULL, off, n, recent,
                       BUF_READ_RECENT | BUF_READ_SHARED, out);
}

/* buf_read_prefetched() and buf_read_prefetched_shared(): flags
 * BUF_READ_PREFETCHED, with or without BUF_READ_SHARED. */
static inline __attribute__((always_inline)) int
read_prefetched(buf_session *s, uint32_t flags, int32_t *out)
{
    buf_tag tag = s->prefetched_tag;

    /* The caller asked buf_prefetch_pending(): the tag names a block. */
    assert(tag != BUF_TAG_NONE);
    s->reads++;
    return read_buffer(s, buf_tag_rel(tag), buf_tag_block(tag), NULL,
                       s->prefetched_off, s->prefetched_n, s->prefetched_id,
                       flags, out);
}

int buf_read_prefetched(buf_session *s, int32_t *out)
{
    return read_prefetched(s, BUF_READ_PREFETCHED, out);
}

int buf_read_prefetched_shared(buf_session *s, int32_t *out)
{
    return read_prefetched(s, BUF_READ_PREFETCHED | BUF_READ_SHARED, out);
}

void buf_prefetch(buf_session *s, relnumber_t rel, blocknum_t blk,
                  const uint16_t *off, uint32_t n, uint32_t key)
{
    buf_pool *p = s->pool;
    buf_tag tag;
    int32_t id;

    assert(n <= BUF_PREFETCH_MAX);
    s->prefetched_tag = BUF_TAG_NONE;
    if (rel == INVALID_RELNUMBER)
        return;
    tag = buf_tag_make(rel, blk);
    id = buf_table_head(&p->table, buf_tag_hash(tag));
    if (id < 0)
        return;
    s->prefetched_tag = tag;
    s->prefetched_id = id;
    s->prefetched_key = key;
    s->prefetched_n = n;
    __builtin_prefetch(desc_of(p, id));
    for (uint32_t i = 0; i < n; i++) {
        s->prefetched_off[i] = off[i];
        __builtin_prefetch((const char *)buf_session_page(s, id) + off[i]);
    }
}

/*
 * For buf_extend(): takes the I/O of d, pinned, which a failed extension
 * left mapped to the block this one is adding (its write failed, so the
 * block is not in the file).  Waits out a read of it, which fails for the
 * same reason.  ECORRUPT if d holds a valid page, which no block past the
 * end of its file can have.
 */
static int extend_take_io(buf_session *s, buf_desc *d, smgr_rel *r,
                          blocknum_t blk)
{
    if (io_start_fill(d))
        return KEEL_OK;
    return kerr_set(&s->err, KEEL_ECORRUPT,
                    "buffer %d holds block %u of file \"%s\", past the end "
                    "of the file",
                    d->id, blk, smgr_rel_path(r));
}

int buf_extend(buf_session *s, relnumber_t rel, uint16_t special_size,
               buf_strategy *strategy, int32_t *out, blocknum_t *blk)
{
    buf_pool *p = s->pool;
    claim_result res;
    smgr_rel *r;
    int32_t id, victim;
    blocknum_t b;
    buf_tag tag;
    void *page;
    int rc;

    if (rel == INVALID_RELNUMBER)
        return kerr_set(&s->err, KEEL_EINVAL, "invalid relation number 0");
    rc = smgr_rel_open(p->smgr, rel, &r, &s->err);
    if (rc != KEEL_OK)
        return rc;
    /*
     * The buffer is mapped to the new block before the file grows, as
     * PostgreSQL 16 does it: under the relation's extension lock, the
     * victim takes the tag of the block the extension will add, with its
     * I/O in progress; then the file grows by a page of zeroes and counts
     * the block.  Whoever sees the block counted finds the buffer and
     * waits for it, so nobody can read the block from the file before it
     * is ours, and nothing needs reading back: the page is initialized in
     * the buffer.  The victim is found (and written, if dirty) before the
     * lock is taken, as in read_slow().
     */
    for (;;) {
        rc = victim_get(s, strategy, &victim);
        if (rc != KEEL_OK)
            return rc;
        pthread_rwlock_rdlock(&p->write_barrier);
        rc = smgr_extend_begin(r, &b, &s->err);
        if (rc != KEEL_OK) {
            pthread_rwlock_unlock(&p->write_barrier);
            buf_release(s, victim);
            return rc;
        }
        tag = buf_tag_make(rel, b);
        rc = victim_claim(s, victim, tag, buf_tag_hash(tag), strategy, &res,
                          &id);
        if (res == CLAIM_TAKEN) {
            id = victim;
            break;
        }
        if (res == CLAIM_FOUND && rc == KEEL_OK) {
            rc = extend_take_io(s, desc_of(p, id), r, b);
            if (rc == KEEL_OK)
                break;
            buf_release(s, id);
        }
        smgr_extend_abort(r);
        pthread_rwlock_unlock(&p->write_barrier);
        if (res == CLAIM_FOUND)
            return rc;
    }
    /*
     * A page of zeroes, which every reader takes for an unused page
     * (PostgreSQL's smgrzeroextend()): should anything fail from here on,
     * the block holds nothing that belongs to anybody (and no initialized
     * page the B-tree checker would call unreachable).
     */
    memset(s->write_copy, 0, BLOCK_SIZE);
    rc = smgr_extend_finish(r, s->write_copy, &s->err);
    if (rc == KEEL_OK)
        rc = sync_request(p, rel, &s->err);
    pthread_rwlock_unlock(&p->write_barrier);
    if (rc != KEEL_OK) {
        /* The buffer stays mapped, not valid: a read of the block finds
         * it past the end (or, if the file did grow, reads it), and the
         * next extension takes it over (extend_take_io()). */
        io_finish(desc_of(p, id), false, false);
        buf_release(s, id);
        return rc;
    }
    page = buf_page(p, id);
#ifndef NDEBUG
    buf_log_shadow_load(p, id, false);
#endif
    page_init(page, special_size);
    /* Locked before it turns valid: nobody else gets it first. */
    buf_lock(s, id, LW_EXCLUSIVE);
    io_finish(desc_of(p, id), false, true);
    buf_mark_dirty(s, id);
    fault_point(FAULT_POINT_EXTENDED, rel, b);
    *blk = b;
    *out = id;
    return KEEL_OK;
}

/* ------------------------------------------------------------------ */
/* Content locks, dirtying, flushing                                  */
/* ------------------------------------------------------------------ */

bool buf_try_lock(buf_session *s, int32_t id, lwlock_mode mode)
{
    assert(buf_pin_count(s, id) > 0);
    return content_try(desc_of(s->pool, id), mode);
}

static void mark_dirty_bits(buf_session *s, int32_t id);

/* The pending entry of page id for the log, made if need be; NULL if
 * this change is not logged. */
static buf_log_pending *log_entry(buf_session *s, int32_t id)
{
    buf_log_pending *e;
    relnumber_t rel;
    blocknum_t blk;

    if (s->pool->wal == NULL)
        return NULL;
    if (s->log_off)
        goto unlogged;
    if (s->log_skip_rel != INVALID_RELNUMBER) {
        buf_block_of(s->pool, id, &rel, &blk);
        if (rel == s->log_skip_rel)
            goto unlogged;
    }
    for (uint32_t i = 0; i < s->log_npending; i++)
        if (s->log_pending[i].id == id)
            return &s->log_pending[i];
    if (s->log_npending == BUF_LOG_MAX_PAGES)
        buf_log_emit(s); /* all still locked: logged together */
    e = &s->log_pending[s->log_npending++];
    e->id = id;
    e->nranges = 0;
    e->nops = 0;
    e->op_start = e->op_len = 0;
    e->copy_len = 0;
    return e;

unlogged:
#ifndef NDEBUG
    buf_log_shadow_load(s->pool, id, false);
#endif
    return NULL;
}

/* Notes a change of page id for the log: the range [off, off + len), or
 * the whole page if whole. */
static void log_note(buf_session *s, int32_t id, uint32_t off, uint32_t len,
                     bool whole)
{
    buf_log_pending *e = log_entry(s, id);

    if (e == NULL)
        return;
    if (whole || e->nranges == BUF_LOG_WHOLE) {
        e->nranges = BUF_LOG_WHOLE;
        return;
    }
    assert(off + len <= BLOCK_SIZE);
    if (e->nranges > 0) {
        /* Touching or overlapping the last range: one range. */
        uint32_t k = e->nranges - 1u, lo = e->off[k], hi = lo + e->len[k];
        if (off <= hi + 8 && off + len + 8 >= lo) {
            uint32_t nlo = off < lo ? off : lo;
            uint32_t nhi = off + len > hi ? off + len : hi;
            e->off[k] = (uint16_t)nlo;
            e->len[k] = (uint16_t)(nhi - nlo);
            return;
        }
    }
    if (e->nranges == BUF_LOG_MAX_RANGES) {
        e->nranges = BUF_LOG_WHOLE;
        return;
    }
    e->off[e->nranges] = (uint16_t)off;
    e->len[e->nranges] = (uint16_t)len;
    e->nranges++;
}

void buf_mark_dirty_op(buf_session *s, int32_t id, uint8_t op,
                       const void *payload, uint16_t len)
{
    uint32_t need = 4u + ((len + 1u) & ~1u);
    buf_log_pending *e;
    char *p;

    mark_dirty_bits(s, id);
    e = log_entry(s, id);
    if (e == NULL || e->nranges == BUF_LOG_WHOLE)
        return;
    /* Operations replay before ranges, and a page's operations lie
     * together in the buffer: otherwise, the whole page. */
    if (e->nranges > 0 || e->copy_len > 0 || !buf_log_op_known(op) ||
        (e->nops > 0 && e->op_start + e->op_len != s->log_opused) ||
        s->log_opused + need > BUF_LOG_OPBUF || e->nops == UINT8_MAX) {
        e->nranges = BUF_LOG_WHOLE;
        return;
    }
    if (e->nops == 0)
        e->op_start = (uint16_t)s->log_opused;
    p = s->log_opbuf + s->log_opused;
    p[0] = (char)op;
    p[1] = 0;
    memcpy(p + 2, &len, 2);
    memcpy(p + 4, payload, len);
    if (len & 1u)
        p[4 + len] = 0;
    s->log_opused += need;
    e->op_len = (uint16_t)(e->op_len + need);
    e->nops++;
}

bool buf_log_bare(buf_session *s, int32_t id, uint8_t type,
                  buf_log_bare_fn fn)
{
    wal *w = s->pool->wal;
    page_header *ph = buf_page(s->pool, id);
    wal_lsn redo, end = 0;
    kerr e;

    (void)fn;
    /* Nothing else pending either: what the session changed under other
     * locks it still holds would otherwise reach the log after this. */
    if (w == NULL || s->log_off || s->log_skip_rel != INVALID_RELNUMBER ||
        s->log_npending != 0)
        return false;
    redo = wal_redo_hint(w);
    if (ph->lsn <= redo)
        return false;
    /*
     * Dirty before the record is placed, as every logged change is (its
     * note marks it, the record follows at unlock): a checkpoint lists
     * the dirty buffers after it moves the redo pointer, so a record
     * placed before the pointer is on a page the list has (and that the
     * checkpoint writes once we unlock), and one placed after it is
     * replayed.  Marked the other way round, a checkpoint could begin
     * between the two, pass over the page as clean, and leave the
     * change to a record recovery no longer reads.  A page that ends up
     * not logged this way is noted by the caller, dirty either way.
     */
    mark_dirty_bits(s, id);
    /* Built against redo: a checkpoint that moves it past the page's LSN
     * before the record is placed has it refused (EBUSY), and the page
     * then goes whole into the caller's WAL_PAGES record. */
    if (wal_insert(w, (uint32_t)((uintptr_t)s >> 6), type, s->log_info,
                   s->log_xid, NULL, 0, 0, NULL, &redo, &end, &e) != KEEL_OK)
        return false;
#ifndef NDEBUG
    {
        buf_pool *p = s->pool;
        char *sh = p->log_shadow != NULL
                       ? p->log_shadow + (size_t)id * BLOCK_SIZE
                       : NULL;
        if (sh != NULL && p->log_shadow_ok[id]) {
            if (!fn(sh, s->log_info, s->log_xid)) {
                fprintf(stderr, "a bare record cannot be redone on its own "
                                "page\n");
                abort();
            }
            buf_log_shadow_check(p, id, ph);
        }
    }
#endif
    ph->lsn = end;
    s->log_last = end;
    s->log_info = WAL_INFO_PAGE;
    s->log_xid = 0;
    return true;
}

void buf_log_unlocking(buf_session *s, int32_t id)
{
    for (uint32_t i = 0; i < s->log_npending; i++)
        if (s->log_pending[i].id == id) {
            buf_log_emit(s);
            return;
        }
}

void buf_mark_dirty_range(buf_session *s, int32_t id, uint32_t off,
                          uint32_t len)
{
    mark_dirty_bits(s, id);
    log_note(s, id, off, len, false);
}

void buf_mark_dirty_like(buf_session *s, int32_t id, uint32_t off,
                         uint32_t len, uint32_t src, uint32_t src_len)
{
    buf_log_pending *e;

    mark_dirty_bits(s, id);
    e = log_entry(s, id);
    if (e == NULL || e->nranges == BUF_LOG_WHOLE)
        return;
    assert(off + len <= BLOCK_SIZE && src + src_len <= BLOCK_SIZE);
    assert(off + len <= src || src + src_len <= off);
    if (e->copy_len > 0 || len == 0 || len > UINT16_MAX) {
        log_note(s, id, off, len, false);
        return;
    }
    e->copy_dst = (uint16_t)off;
    e->copy_len = (uint16_t)len;
    e->copy_src = (uint16_t)src;
    e->copy_src_len = (uint16_t)src_len;
}

void buf_pool_set_wal(buf_pool *p, wal *w)
{
    p->wal = w;
#ifndef NDEBUG
    if (w != NULL && p->log_shadow == NULL) {
        p->log_shadow = calloc(p->nbuffers, BLOCK_SIZE);
        p->log_shadow_ok = calloc(p->nbuffers, 1);
        if (p->log_shadow == NULL || p->log_shadow_ok == NULL) {
            free(p->log_shadow); /* no check, then */
            free(p->log_shadow_ok);
            p->log_shadow = NULL;
            p->log_shadow_ok = NULL;
        }
    }
#endif
}

static void mark_dirty_bits(buf_session *s, int32_t id)
{
    buf_desc *d = desc_of(s->pool, id);
    uint64_t cur = atomic_load_relaxed(&d->state);
    const uint64_t bits = BM_DIRTY | BM_JUST_DIRTIED;

    assert(buf_pin_count(s, id) > 0);
    assert(buf_lock_held_exclusive(s, id));
    assert(cur & BM_VALID);
    while ((cur & bits) != bits) {
        if (cur & BM_LOCKED) {
            cur = buf_hdr_wait_unlocked(d);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&d->state, &cur, cur | bits,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
}

void buf_mark_dirty(buf_session *s, int32_t id)
{
    mark_dirty_bits(s, id);
    log_note(s, id, 0, 0, true);
}


int buf_flush(buf_session *s, int32_t id)
{
    buf_desc *d = desc_of(s->pool, id);
    int rc;

    assert(buf_pin_count(s, id) > 0);
    buf_lock(s, id, LW_SHARED);
    rc = flush_locked(s, d);
    buf_unlock(s, id);
    return rc;
}

typedef struct dirty_entry {
    buf_tag tag;
    int32_t id;
} dirty_entry;

static int cmp_dirty(const void *a, const void *b)
{
    buf_tag x = ((const dirty_entry *)a)->tag;
    buf_tag y = ((const dirty_entry *)b)->tag;
    return x < y ? -1 : x > y;
}

int buf_checkpoint(buf_session *s)
{
    buf_pool *p = s->pool;
    dirty_entry *list;
    uint32_t n = 0;
    int rc = KEEL_OK;

    /* One at a time: a checkpoint that succeeds has synced everything
     * pending when it began, even what a failed concurrent one took. */
    pthread_mutex_lock(&p->checkpoint_lock);
    list = malloc(sizeof(*list) * (p->nbuffers ? p->nbuffers : 1));
    if (list == NULL) {
        pthread_mutex_unlock(&p->checkpoint_lock);
        return kerr_set(&s->err, KEEL_ENOMEM,
                        "out of memory listing dirty buffers");
    }
    for (uint32_t i = 0; i < p->nbuffers; i++) {
        uint64_t st = atomic_load_relaxed(&p->descs[i].state);
        if ((st & (BM_DIRTY | BM_VALID)) == (BM_DIRTY | BM_VALID)) {
            list[n].tag = atomic_load_relaxed(&p->descs[i].tag);
            list[n].id = (int32_t)i;
            n++;
        }
    }
    qsort(list, n, sizeof(*list), cmp_dirty);

    for (uint32_t i = 0; i < n && rc == KEEL_OK; i++) {
        buf_desc *d = desc_of(p, list[i].id);
        rc = pin_limited(s, list[i].id, 0);
        if (rc != KEEL_OK)
            break;
        /* It may have been evicted (and so written) since we looked. */
        if (atomic_load_relaxed(&d->tag) == list[i].tag) {
            buf_lock(s, list[i].id, LW_SHARED);
            rc = flush_locked(s, d);
            buf_unlock(s, list[i].id);
        }
        buf_release(s, list[i].id);
    }
    free(list);
    if (rc == KEEL_OK)
        rc = sync_pending(p, &s->err);
    pthread_mutex_unlock(&p->checkpoint_lock);
    return rc;
}

int buf_flush_rel(buf_session *s, relnumber_t rel)
{
    buf_pool *p = s->pool;
    smgr_rel *r;
    int rc = KEEL_OK;

    for (uint32_t i = 0; i < p->nbuffers && rc == KEEL_OK; i++) {
        buf_desc *d = desc_of(p, (int32_t)i);
        buf_tag tag = atomic_load_relaxed(&d->tag);
        if (tag == BUF_TAG_NONE || buf_tag_rel(tag) != rel ||
            !(atomic_load_relaxed(&d->state) & BM_DIRTY))
            continue;
        rc = pin_limited(s, (int32_t)i, 0);
        if (rc != KEEL_OK)
            break;
        if (atomic_load_relaxed(&d->tag) == tag) {
            buf_lock(s, (int32_t)i, LW_SHARED);
            rc = flush_locked(s, d);
            buf_unlock(s, (int32_t)i);
        }
        buf_release(s, (int32_t)i);
    }
    if (rc == KEEL_OK)
        rc = smgr_rel_open(p->smgr, rel, &r, &s->err);
    if (rc == KEEL_OK)
        rc = smgr_sync(r, &s->err);
    return rc;
}

/* Whether buffer i holds a block of rel at or after from. */
static bool drop_target(buf_pool *p, uint32_t i, relnumber_t rel,
                        blocknum_t from, buf_tag *tag)
{
    *tag = atomic_load_relaxed(&p->descs[i].tag);
    return buf_tag_rel(*tag) == rel && buf_tag_block(*tag) >= from;
}

int buf_drop_rel(buf_session *s, relnumber_t rel, blocknum_t from)
{
    buf_pool *p = s->pool;
    buf_table *t = &p->table;
    buf_tag tag;

    /* The caller's own pins first, so that a drop it cannot make leaves
     * everything as it was. */
    for (uint32_t i = 0; i < p->nbuffers; i++)
        if (drop_target(p, i, rel, from, &tag) &&
            buf_pin_count(s, (int32_t)i) > 0)
            return kerr_set(&s->err, KEEL_EBUSY,
                            "cannot drop block %u of relation %u: this "
                            "session has its buffer pinned",
                            buf_tag_block(tag), rel);
    for (uint32_t i = 0; i < p->nbuffers; i++) {
        buf_desc *d = &p->descs[i];
        uint32_t waited = 0, pause = 1;

        while (drop_target(p, i, rel, from, &tag)) {
            uint64_t hash = buf_tag_hash(tag), st;
            uint32_t part = buf_table_partition(t, hash);
            bool pinned;

            lwlock_acquire(buf_table_lock(t, part), LW_EXCLUSIVE);
            st = hdr_lock(d);
            pinned =
                atomic_load_relaxed(&d->tag) == tag && BUF_REFCOUNT(st) != 0;
            if (atomic_load_relaxed(&d->tag) != tag || pinned) {
                hdr_unlock(d, st); /* re-tagged before we locked, or pinned */
            } else {
                buf_table_delete(t, (int32_t)i, hash);
                atomic_store_relaxed(&d->tag, BUF_TAG_NONE);
                hdr_unlock(d, 0);
            }
            lwlock_release(buf_table_lock(t, part));
            if (!pinned)
                continue;
            /* Another session's pin: a clock sweep's look at a victim, a
             * checkpoint's write, a look-up's check of a stale buffer
             * last a moment.  One that stays is a session still using
             * the relation. */
            if (waited >= BUF_DROP_WAIT_US)
                return kerr_set(&s->err, KEEL_EBUSY,
                                "cannot drop block %u of relation %u: "
                                "another session keeps its buffer pinned",
                                buf_tag_block(tag), rel);
            clock_sleep_us(pause);
            waited += pause;
            pause = pause < 1000 ? pause * 2 : 1000;
        }
    }
    if (from == 0)
        sync_forget(p, rel);
    return KEEL_OK;
}

/* ------------------------------------------------------------------ */
/* Pool and session lifetime                                          */
/* ------------------------------------------------------------------ */

int buf_pool_create(smgr *sm, uint32_t nbuffers, buf_pool **out, kerr *err)
{
    buf_pool *p;

    if (nbuffers < BUF_MIN_BUFFERS || nbuffers > (UINT32_C(1) << 30))
        return kerr_set(err, KEEL_EINVAL,
                        "buffer pool size %u is out of range (%u .. 2^30)",
                        nbuffers, BUF_MIN_BUFFERS);
    p = mem_alloc_aligned(sizeof(*p));
    if (p == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory for buffer pool");
    p->nbuffers = nbuffers;
    p->smgr = sm;
    p->descs = mem_alloc_aligned(sizeof(buf_desc) * (size_t)nbuffers);
    p->pages_size = (size_t)nbuffers * BLOCK_SIZE;
    p->pages = mem_alloc_pages(p->pages_size, true);
    if (p->descs == NULL || p->pages == NULL ||
        buf_table_init(&p->table, p->descs, nbuffers) != KEEL_OK) {
        mem_free_aligned(p->descs);
        mem_free_pages(p->pages, p->pages_size);
        mem_free_aligned(p);
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory for a pool of %u buffers", nbuffers);
    }
    for (uint32_t i = 0; i < nbuffers; i++) {
        buf_desc *d = &p->descs[i];
        atomic_store_relaxed(&d->state, 0);
        atomic_store_relaxed(&d->tag, BUF_TAG_NONE);
        atomic_store_relaxed(&d->hash_next, -1);
        atomic_store_relaxed(&d->lock_seq, 0);
        atomic_store_relaxed(&d->lock_waiters, 0);
        atomic_store_relaxed(&d->io_seq, 0);
        atomic_store_relaxed(&d->io_waiters, 0);
        d->id = (int32_t)i;
    }
    atomic_store_relaxed(&p->clock_hand, 0);
    {
        pthread_rwlockattr_t attr;
        /* Writer preference: a stream of page writes must not starve the
         * checkpoint's brief exclusive hold. */
        pthread_rwlockattr_init(&attr);
        pthread_rwlockattr_setkind_np(
            &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&p->write_barrier, &attr);
        pthread_rwlockattr_destroy(&attr);
    }
    pthread_mutex_init(&p->checkpoint_lock, NULL);
    pthread_mutex_init(&p->sync_lock, NULL);
    *out = p;
    return KEEL_OK;
}

void buf_pool_discard(buf_pool *p)
{
    if (p == NULL)
        return;
    buf_table_free(&p->table);
    mem_free_pages(p->pages, p->pages_size);
    mem_free_aligned(p->descs);
    pthread_mutex_destroy(&p->sync_lock);
    pthread_mutex_destroy(&p->checkpoint_lock);
    pthread_rwlock_destroy(&p->write_barrier);
    free(p->pending_sync);
#ifndef NDEBUG
    free(p->log_shadow);
    free(p->log_shadow_ok);
#endif
    mem_free_aligned(p);
}

int buf_pool_close(buf_pool *p, kerr *err)
{
    buf_session *s;
    bool dirty = false;
    int rc;

    for (uint32_t i = 0; i < p->nbuffers; i++) {
        uint64_t st = atomic_load_acquire(&p->descs[i].state);
        if (BUF_REFCOUNT(st) != 0)
            return kerr_set(err, KEEL_EBUSY,
                            "cannot close the buffer pool: buffer %u is "
                            "still pinned",
                            i);
        dirty |= (st & (BM_DIRTY | BM_VALID)) == (BM_DIRTY | BM_VALID);
    }
    /* Nothing to write or sync (a checkpoint just ran): no session, so
     * that a close after a checkpoint needs no memory. */
    pthread_mutex_lock(&p->sync_lock);
    dirty |= p->npending_sync > 0;
    pthread_mutex_unlock(&p->sync_lock);
    if (!dirty) {
        buf_pool_discard(p);
        return KEEL_OK;
    }
    rc = buf_session_create(p, &s, err);
    if (rc != KEEL_OK)
        return rc;
    rc = buf_checkpoint(s);
    if (rc != KEEL_OK && err != NULL)
        *err = s->err;
    buf_session_destroy(s);
    if (rc != KEEL_OK)
        return rc;
    buf_pool_discard(p);
    return KEEL_OK;
}

uint32_t buf_pool_size(const buf_pool *p)
{
    return p->nbuffers;
}

smgr *buf_pool_smgr(const buf_pool *p)
{
    return p->smgr;
}

void *buf_page(const buf_pool *p, int32_t id)
{
    assert(id >= 0 && (uint32_t)id < p->nbuffers);
    return p->pages + (size_t)id * BLOCK_SIZE;
}

void buf_block_of(const buf_pool *p, int32_t id, relnumber_t *rel,
                  blocknum_t *blk)
{
    buf_tag tag = atomic_load_relaxed(&desc_of(p, id)->tag);
    *rel = buf_tag_rel(tag);
    *blk = buf_tag_block(tag);
}

uint64_t buf_state(const buf_pool *p, int32_t id)
{
    return atomic_load_acquire(&desc_of(p, id)->state);
}

int buf_session_create(buf_pool *p, buf_session **out, kerr *err)
{
    buf_session *s = mem_alloc_aligned(sizeof(*s));

    if (s == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory for a session");
    for (int i = 0; i < BUF_PRIVATE_REFS; i++)
        s->refs[i].id = BUF_INVALID;
    s->log_npending = 0;
    s->log_off = false;
    s->read_zero = false;
    s->log_info = 0;
    s->log_xid = 0;
    s->log_skip_rel = INVALID_RELNUMBER;
    s->log_last = 0;
    s->log_opused = 0;
    s->pool = p;
    s->descs = p->descs;
    s->pages = p->pages;
    s->nbuffers = p->nbuffers;
    s->write_copy = mem_alloc_aligned(BLOCK_SIZE);
    if (s->write_copy == NULL) {
        mem_free_aligned(s);
        return kerr_set(err, KEEL_ENOMEM, "out of memory for a session");
    }
    kerr_clear(&s->err);
    *out = s;
    return KEEL_OK;
}

void buf_session_destroy(buf_session *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < BUF_PRIVATE_REFS; i++)
        if (s->refs[i].id != BUF_INVALID)
            buf_unpin_shared(desc_of(s->pool, s->refs[i].id));
    for (uint32_t i = 0; i < s->overflow_cap; i++)
        if (s->overflow[i].id != BUF_INVALID)
            buf_unpin_shared(desc_of(s->pool, s->overflow[i].id));
    free(s->overflow);
    mem_free_aligned(s->write_copy);
    mem_free_aligned(s);
}

const kerr *buf_session_error(const buf_session *s)
{
    return &s->err;
}
