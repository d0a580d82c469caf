/*
 * btree_search.c: finding entries by key.  A reader descends Lehman-Yao
 * style, holding a share lock on one page at a time and never locking a
 * parent: at each page, if its key is >= the page's high key, a split
 * moved it right and the reader follows the right-link.  Here are reading
 * and locking a page, the search of a page (binary, or interpolated for
 * an integer key), the descent, the point searches and lookups, the
 * integer fast path, and the session's directory that starts it below
 * the root (src/access/README.md, "Search" and "Directories").
 */
#include "access/btree.h"

#include <stdlib.h>
#include <string.h>

#include "access/btree_internal.h"
#include "access/btree_page.h"
#include "access/heapam.h"
#include "port/mem.h"
#include "storage/bufmgr.h"

/* ---- reading pages ----------------------------------------------------- */

/*
 * The lines of a page a search reads first, into lines[0..4), returning
 * how many: the header (item count, first line pointers) and the special
 * space (level, links); and, if guess is in [0, 1) (the page is a leaf
 * about to be searched for a key that sits at that fraction of its key
 * range), the lines of the line pointer and item there if the page is a
 * full bulk-built one.
 */
static inline uint32_t bt_guess_lines(double guess, uint16_t *lines)
{
    uint32_t n = 2;

    lines[0] = 0;
    lines[1] = BT_SPECIAL_OFF;
    if (guess >= 0.0 && guess < 1.0) {
        uint32_t k = (uint32_t)(guess * BT_LEAF_FAST_ITEMS);
        lines[n++] = (uint16_t)(PAGE_HEADER_SIZE + 2 * (k + 1));
        lines[n++] = (uint16_t)(BT_SPECIAL_OFF - 16 * (k + 1));
    }
    return n;
}

/*
 * Reads block blk of the index, pins and locks it in mode, and checks that
 * it is a tree page of level `level` (any level if level < 0), the n
 * lines of the page at offsets lines[] (bt_guess_lines()) fetched with
 * the buffer's descriptor.  If recent is a buffer, the caller remembers
 * the block there and has prefetched those lines from it
 * (buf_prefetch_buffer()).  On error nothing is left pinned.
 */
static int bt_read_lock_lines(const btree *bt, buf_session *s, blocknum_t blk,
                              lwlock_mode mode, int level,
                              const uint16_t *lines, uint32_t n, int32_t recent,
                              int32_t *id)
{
    buf_read_opts o = {.flags = BUF_READ_RECENT,
                       .recent = recent,
                       .lines = lines,
                       .nlines = n};
    const void *page;
    const bt_opaque *op;
    int rc;

    if (blk == BT_META_BLOCK || blk == BT_NONE)
        return kerr_set(&s->err, KEEL_ECORRUPT,
                        "index %u: link to invalid block %u", bt->rel, blk);
    if (mode == LW_SHARED) {
        o.flags |= BUF_READ_SHARED;
        rc = buf_read(s, bt->rel, blk, &o, id);
        if (rc != KEEL_OK)
            return rc;
    } else {
        rc = buf_read(s, bt->rel, blk, &o, id);
        if (rc != KEEL_OK)
            return rc;
        buf_lock(s, *id, mode);
    }
    page = bt_page(s, *id);
    op = btpage_opaque_c(page);
    if (btpage_header(page)->special != BT_SPECIAL_OFF ||
        (op->flags & BT_META) || (level >= 0 && op->level != level)) {
        buf_unlock_release(s, *id);
        return kerr_set(&s->err, KEEL_ECORRUPT,
                        "index %u block %u: not a B-tree page of level %d",
                        bt->rel, blk, level);
    }
    return KEEL_OK;
}

/* The error of a read of block blk, which failed with rc: ECORRUPT for a
 * block past the end of the index (pages are never removed: a bad link). */
static int bt_read_failed(const btree *bt, buf_session *s, blocknum_t blk,
                          int rc)
{
    if (rc != KEEL_EEOF)
        return rc;
    return kerr_set(&s->err, KEEL_ECORRUPT,
                    "index %u: link to block %u, past the end of the index",
                    bt->rel, blk);
}

/*
 * bt_read_lock_lines() with the lines bt_guess_lines() names for guess;
 * a link past the end of the index is ECORRUPT.  What a page holds (its
 * high key, its downlinks) need not be checked: every page read from disk
 * passed bt_read_check().
 */
static inline int bt_read_lock_guess(const btree *bt, buf_session *s,
                                     blocknum_t blk, lwlock_mode mode,
                                     int level, double guess, int32_t recent,
                                     int32_t *id)
{
    uint16_t lines[4];
    int rc = bt_read_lock_lines(bt, s, blk, mode, level, lines,
                                bt_guess_lines(guess, lines), recent, id);

    if (rc != KEEL_OK)
        return bt_read_failed(bt, s, blk, rc);
    return KEEL_OK;
}

int bt_read_lock(const btree *bt, buf_session *s, blocknum_t blk,
                 lwlock_mode mode, int level, int32_t *id)
{
    return bt_read_lock_guess(bt, s, blk, mode, level, -1.0, BUF_INVALID, id);
}

__attribute__((noinline, cold)) int
bt_walk_limit(const btree *bt, buf_session *s, uint32_t n, blocknum_t blk)
{
    smgr_rel *r;
    int rc = smgr_rel_open(buf_pool_smgr(s->pool), bt->rel, &r, &s->err);

    if (rc != KEEL_OK || n < smgr_nblocks(r))
        return rc;
    return kerr_set(&s->err, KEEL_ECORRUPT,
                    "index %u: %u moves right (the last to block %u) in an "
                    "index of %u blocks: its right-links loop",
                    bt->rel, n, blk, smgr_nblocks(r));
}

/*
 * The fast path's test of an item against sk: below it (or_equal false) or
 * not above it (or_equal true).  One integer compare unless the item's key
 * is null (sorts last) or equal (then the tid or unspec decides).
 */
static inline bool bt_fast_before(const btree *bt, const bt_scankey *sk,
                                  const bt_item *it, bool leaf, bool or_equal)
{
    int64_t v;

    if (__builtin_expect((it->info & BT_INFO_NULLS) != 0, 0))
        return false;
    v = bt_fast_value(bt, btitem_key(it, leaf));
    if (__builtin_expect(v != sk->ival, 1))
        return v < sk->ival;
    return or_equal ? bt_compare(bt, sk, it, leaf) >= 0
                    : bt_compare(bt, sk, it, leaf) > 0;
}

/*
 * Counts, from slot lo, the items before sk in [lo, hi) (ordered): the
 * position of sk.  Branch-free halving: with random keys the usual branch
 * is a coin toss, and a conditional move does not stall on it.
 */
static inline uint16_t bt_fast_search(const btree *bt, const void *page,
                                      const bt_scankey *sk, uint16_t lo,
                                      uint16_t hi, bool leaf, bool or_equal)
{
    uint32_t base = lo, n = (uint32_t)(hi - lo);

    while (n > 1) {
        uint32_t half = n / 2;
        bool before = bt_fast_before(
            bt, sk, btpage_item(page, (uint16_t)(base + half - 1)), leaf,
            or_equal);
        base = before ? base + half : base;
        n -= half;
    }
    if (n == 1 && bt_fast_before(bt, sk, btpage_item(page, (uint16_t)base),
                                 leaf, or_equal))
        base++;
    return (uint16_t)base;
}

/*
 * Key bounds of a page as its parent saw them, for guessing where a key
 * sits on it: every entry's key is >= lo (if has_lo) and <= hi (if has_hi;
 * the page's high key).  lo_tid and hi_tid are the heap tids of those two
 * separators: the page's first entry and its right sibling's (for
 * guessing where a row is, bt_prefetch_heap()).  Only a hint: a concurrent
 * split or a page reached by moving right may make it wrong, which costs
 * probes, never a wrong answer.
 */
typedef struct bt_hint {
    int64_t lo, hi;
    tid lo_tid, hi_tid;
    bool has_lo, has_hi;
} bt_hint;

static const bt_hint bt_no_hint = {0, 0, {0, 0}, {0, 0}, false, false};

/* Reads an item's integer key into *v unless it has a null. */
static inline bool bt_fast_key(const btree *bt, const bt_item *it, bool leaf,
                               int64_t *v)
{
    if (it->info & BT_INFO_NULLS)
        return false;
    *v = bt_fast_value(bt, btitem_key(it, leaf));
    return true;
}

/*
 * The slot of [lo, hi) where key x should sit if keys rise evenly from
 * kmin (at lo) to kmax (at hi - 1): lo at or below kmin, hi - 1 at or
 * above kmax.  The differences are taken as 64-bit integers, exact, so
 * int8 keys far apart round but never give 0 / 0.
 */
static inline uint32_t bt_interp_guess(int64_t x, int64_t kmin, int64_t kmax,
                                       uint32_t lo, uint32_t hi)
{
    uint32_t g;

    if (x <= kmin || kmax <= kmin)
        return lo;
    if (x >= kmax)
        return hi - 1;
    g = lo + (uint32_t)((double)((uint64_t)x - (uint64_t)kmin) /
                        (double)((uint64_t)kmax - (uint64_t)kmin) *
                        (double)(hi - lo));
    return g < hi ? g : hi - 1;
}

/* Whether slot i of some ordered range is below a search key (ctx). */
typedef bool (*bt_below_fn)(const void *ctx, uint32_t i);

/*
 * The first slot of [lo, hi) not below the search key (hi if none), the
 * slots below it coming first: from guess g (BT_NO_GUESS: none), a gallop
 * outwards to bracket the answer, then halving.  Inlined with a constant
 * below, so the predicate is inlined too.
 */
#define BT_NO_GUESS UINT32_MAX

static inline __attribute__((always_inline)) uint32_t
bt_rank_from(uint32_t lo, uint32_t hi, uint32_t g, bt_below_fn below,
             const void *ctx)
{
    uint32_t a = lo, b = hi, step;

    if (g != BT_NO_GUESS && below(ctx, g)) {
        a = g + 1;
        for (step = 1; a < hi; step *= 2) {
            uint32_t p = g + step < hi ? g + step : hi - 1;
            if (!below(ctx, p)) {
                b = p;
                break;
            }
            a = p + 1;
        }
    } else if (g != BT_NO_GUESS) {
        b = g;
        for (step = 1; b > lo; step *= 2) {
            uint32_t p = g >= lo + step ? g - step : lo;
            if (below(ctx, p)) {
                a = p + 1;
                break;
            }
            b = p;
        }
    }
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (below(ctx, m))
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/*
 * bt_fast_search() by interpolation: guesses sk's slot in [lo, hi) from
 * the key bounds (the hint's, else the range's first and last keys),
 * probes there and gallops outwards to bracket the answer, then halves the
 * bracket.  Integer keys are usually spread evenly (serials, account
 * numbers), so the guess is typically within a slot or two, and the few
 * probes fall on neighbouring line pointers and items: two or three cache
 * lines instead of one or two per halving step.  Skewed keys cost at most
 * about twice the halving search's probes.
 */
static uint16_t bt_interp_search(const btree *bt, const void *page,
                                 const bt_scankey *sk, uint16_t lo, uint16_t hi,
                                 bool leaf, bool or_equal, const bt_hint *h)
{
    int64_t kmin, kmax, x = sk->ival;
    uint32_t g, blo, bhi, step;

    if (hi - lo < 8)
        return bt_fast_search(bt, page, sk, lo, hi, leaf, or_equal);
    if (h->has_lo)
        kmin = h->lo;
    else if (!bt_fast_key(bt, btpage_item(page, lo), leaf, &kmin))
        return bt_fast_search(bt, page, sk, lo, hi, leaf, or_equal);
    if (h->has_hi)
        kmax = h->hi;
    else if (!bt_fast_key(bt, btpage_item(page, (uint16_t)(hi - 1)), leaf,
                          &kmax))
        return bt_fast_search(bt, page, sk, lo, hi, leaf, or_equal);
    g = bt_interp_guess(x, kmin, kmax, lo, hi);

    /* Where the guessed item is if the page stores its items in slot
     * order from the end (bulk-built and split pages do; random inserts
     * do not): fetch that line while the line pointer is read, instead of
     * after.  Leaf items of an integer key are 16 bytes; internal ones 24,
     * after the 16-byte minus-infinity item. */
    {
        uint32_t back = leaf ? 16 * (g - lo + 1) : 16 + 24 * (g - lo + 1);
        if (back <= BT_PAGE_CAP)
            __builtin_prefetch((const char *)page + BT_SPECIAL_OFF - back);
    }

    /* Bracket the answer (the first slot not before sk) in [blo, bhi]. */
    if (bt_fast_before(bt, sk, btpage_item(page, (uint16_t)g), leaf,
                       or_equal)) {
        blo = g + 1;
        bhi = hi;
        for (step = 1; blo < hi; step *= 2) {
            uint32_t p = g + step < hi ? g + step : (uint32_t)hi - 1;
            if (p < blo)
                break;
            if (!bt_fast_before(bt, sk, btpage_item(page, (uint16_t)p), leaf,
                                or_equal)) {
                bhi = p;
                break;
            }
            blo = p + 1;
        }
    } else {
        blo = lo;
        bhi = g;
        for (step = 1; bhi > lo; step *= 2) {
            uint32_t p = g >= lo + step ? g - step : lo;
            if (bt_fast_before(bt, sk, btpage_item(page, (uint16_t)p), leaf,
                               or_equal)) {
                blo = p + 1;
                break;
            }
            bhi = p;
        }
    }
    if (blo >= bhi)
        return (uint16_t)blo;
    return bt_fast_search(bt, page, sk, (uint16_t)blo, (uint16_t)bhi, leaf,
                          or_equal);
}

uint16_t bt_lower_bound(const btree *bt, const void *page, const bt_scankey *sk,
                        const bt_hint *h)
{
    uint16_t lo = btpage_first(page), hi = btpage_nitems(page);

    if (sk->fast)
        return bt_interp_search(bt, page, sk, lo, hi, true, false,
                                h != NULL ? h : &bt_no_hint);

    while (lo < hi) {
        uint16_t mid = (uint16_t)(lo + (hi - lo) / 2);
        if (bt_compare(bt, sk, btpage_item(page, mid), true) > 0)
            lo = (uint16_t)(mid + 1);
        else
            hi = mid;
    }
    return lo;
}

bool bt_beyond(const btree *bt, const void *page, const bt_scankey *sk)
{
    return !btpage_rightmost(page) &&
           bt_compare(bt, sk, btpage_item(page, BT_HIKEY),
                      btpage_is_leaf(page)) >= 0;
}

/*
 * On an internal page, the slot of the child whose key range holds sk:
 * the last item <= sk (the minus-infinity first item is <= everything).
 * Returns BT_MAX_ITEMS instead if sk is at or above the page's high key
 * (a split moved it right).  The high key is read only when every item is
 * <= sk: an item above sk is below the high key, and so is sk.  h holds
 * the page's key bounds on entry (hints) and the child's on return.
 */
static uint16_t bt_child_slot(const btree *bt, const void *page,
                              const bt_scankey *sk, bt_hint *h)
{
    uint16_t first = btpage_first(page), n = btpage_nitems(page);
    uint16_t lo = (uint16_t)(first + 1), hi = n;

    if (sk->fast) {
        lo = bt_interp_search(bt, page, sk, lo, hi, false, true, h);
    } else {
        while (lo < hi) {
            uint16_t mid = (uint16_t)(lo + (hi - lo) / 2);
            if (bt_compare(bt, sk, btpage_item(page, mid), false) >= 0)
                lo = (uint16_t)(mid + 1);
            else
                hi = mid;
        }
    }
    if (lo == n && bt_beyond(bt, page, sk))
        return BT_MAX_ITEMS;
    if (sk->fast) {
        /* The child's bounds: its downlink's key and the next one's (the
         * last child inherits this page's upper bound). */
        if (lo - 1 > first) {
            const bt_item *it = btpage_item(page, (uint16_t)(lo - 1));
            h->has_lo = bt_fast_key(bt, it, false, &h->lo);
            h->lo_tid = btitem_tid(it, false);
        }
        if (lo < n) {
            const bt_item *it = btpage_item(page, lo);
            h->has_hi = bt_fast_key(bt, it, false, &h->hi);
            h->hi_tid = btitem_tid(it, false);
        }
    }
    return (uint16_t)(lo - 1);
}

/* ---- descent ----------------------------------------------------------- */

/*
 * The root block and level: from the handle's cache unless refresh (or
 * unknown), else from the meta page (under its share lock, held alone),
 * refreshing the cache.
 */
static int bt_root_get(btree *bt, buf_session *s, bool refresh,
                       blocknum_t *root, uint32_t *level)
{
    uint64_t c = refresh ? 0 : atomic_load_relaxed(&bt->root_cache);
    bt_meta meta;
    int32_t id;
    int rc;

    if (c == 0) {
        rc = buf_read(s, bt->rel, BT_META_BLOCK, NULL, &id);
        if (rc != KEEL_OK)
            return rc;
        buf_lock(s, id, LW_SHARED);
        rc = bt_meta_parse(bt_page(s, id), bt->rel, &meta, NULL, &s->err);
        buf_unlock_release(s, id);
        if (rc != KEEL_OK)
            return rc;
        c = (uint64_t)meta.level << 32 | meta.root;
        atomic_store_relaxed(&bt->root_cache, c);
    }
    *root = (blocknum_t)c;
    *level = (uint32_t)(c >> 32);
    return KEEL_OK;
}

/*
 * On the way from level 1 to leaf h describes (its key bounds and the
 * heap tids of its bounding separators, f the key's fraction of the way
 * between the bounds): if heap_tid_guess() places the key's row from
 * them, prefetches it, and records the guess in *guessed (if not NULL).
 * Called before the leaf is read, so that the heap page's misses overlap
 * the leaf's.  A unique index has at most one entry per key value between
 * the bounds; if the heap follows the index, no more rows either.
 */
static inline void bt_prefetch_heap(const btree *bt, buf_session *s,
                                    const heap_rel *heap, const bt_hint *h,
                                    double f, tid *guessed)
{
    tid g;

    if (heap_tid_guess(heap, h->lo_tid, h->hi_tid, f,
                       bt->unique ? (uint64_t)h->hi - (uint64_t)h->lo
                                  : HEAP_GUESS_MAX_ROWS,
                       &g)) {
        heap_prefetch(heap, s, g);
        if (guessed != NULL)
            *guessed = g;
    }
}

int bt_descend(btree *bt, buf_session *s, const bt_scankey *sk, uint32_t target,
               lwlock_mode mode, blocknum_t *stack, uint32_t *stack_top,
               bt_hint *hint, int32_t *out_id, blocknum_t *out_blk,
               const heap_rel *heap, tid *guessed, const bt_held *held)
{
    bool refresh = false;

    for (int attempt = 0;; attempt++) {
        bt_hint h = bt_no_hint;
        uint32_t walk = 0;
        blocknum_t blk;
        uint32_t level;
        int32_t id;
        void *page;
        int rc;

        if (attempt >= 1000)
            return kerr_set(&s->err, KEEL_ECORRUPT,
                            "index %u: the meta page's root is not a root "
                            "page of level >= %u",
                            bt->rel, target);
        rc = bt_root_get(bt, s, refresh, &blk, &level);
        if (rc != KEEL_OK)
            return rc;
        refresh = true;
        if (level < target)
            continue;
        rc = bt_read_lock_held(bt, s, blk, level == target ? mode : LW_SHARED,
                               -1, held, &id);
        if (rc != KEEL_OK)
            return rc;
        page = bt_page(s, id);
        if (!(btpage_opaque(page)->flags & BT_ROOT) ||
            btpage_opaque(page)->level != level) {
            /* A stale cache: the root split (or the meta page moved on). */
            buf_unlock_release(s, id);
            continue;
        }
        if (stack_top != NULL)
            *stack_top = level;
        for (;;) {
            blocknum_t next;
            uint16_t slot;
            double guess;

            if (level == target) {
                if (hint != NULL) {
                    *hint = h;
                } else {
                    while (bt_beyond(bt, page, sk)) {
                        next = btpage_opaque(page)->right;
                        buf_unlock_release(s, id);
                        rc = bt_walk_step(bt, s, ++walk, next);
                        if (rc == KEEL_OK)
                            rc = bt_read_lock_held(bt, s, next, mode,
                                                   (int)level, held, &id);
                        if (rc != KEEL_OK)
                            return rc;
                        blk = next;
                        page = bt_page(s, id);
                    }
                }
                *out_id = id;
                *out_blk = blk;
                return KEEL_OK;
            }
            slot = bt_child_slot(bt, page, sk, &h);
            if (slot == BT_MAX_ITEMS) {
                /* A split moved sk right: the sibling's bounds are unknown. */
                next = btpage_opaque(page)->right;
                buf_unlock_release(s, id);
                rc = bt_walk_step(bt, s, ++walk, next);
                if (rc == KEEL_OK)
                    rc = bt_read_lock_held(bt, s, next, LW_SHARED, (int)level,
                                           held, &id);
                if (rc != KEEL_OK)
                    return rc;
                blk = next;
                page = bt_page(s, id);
                h = bt_no_hint;
                continue;
            }
            if (stack != NULL)
                stack[level] = blk;
            blk = btpage_item(page, slot)->block;
            buf_unlock_release(s, id);
            level--;
            guess = -1.0;
            if (level == 0 && sk->fast && h.has_lo && h.has_hi && h.hi > h.lo) {
                guess = ((double)sk->ival - (double)h.lo) /
                        ((double)h.hi - (double)h.lo);
                if (heap != NULL)
                    bt_prefetch_heap(bt, s, heap, &h, guess, guessed);
            }
            if (held != NULL)
                rc = bt_read_lock_held(bt, s, blk,
                                       level == target ? mode : LW_SHARED,
                                       (int)level, held, &id);
            else
                rc = bt_read_lock_guess(bt, s, blk,
                                        level == target ? mode : LW_SHARED,
                                        (int)level, guess, BUF_INVALID, &id);
            if (rc != KEEL_OK)
                return rc;
            page = bt_page(s, id);
        }
    }
}

/* ---- point search ------------------------------------------------------ */

/* Reverses tids[a..b). */
static void bt_tids_reverse(tid *tids, uint32_t a, uint32_t b)
{
    while (a + 1 < b) {
        tid t = tids[a];
        tids[a++] = tids[--b];
        tids[b] = t;
    }
}

/*
 * Stores the tid of a search's entry number found (from 0) in tids: the
 * first max entries, or with last a ring of the latest max.
 */
static inline void bt_tids_put(tid *tids, uint32_t max, bool last,
                               uint32_t found, tid t)
{
    if (found < max)
        tids[found] = t;
    else if (last && max > 0)
        tids[found % max] = t;
}

/*
 * After found entries went through bt_tids_put() with last: puts the ring
 * back in tid order, the oldest of the last max first.
 */
static void bt_tids_unring(tid *tids, uint32_t max, uint32_t found)
{
    uint32_t start;

    if (max == 0 || found <= max || (start = found % max) == 0)
        return;
    bt_tids_reverse(tids, 0, start);
    bt_tids_reverse(tids, start, max);
    bt_tids_reverse(tids, 0, max);
}

/*
 * Collects the tids of the entries equal to keys (the first max into
 * tids, or with last the last max, counting all in *count; with
 * first_only stops at the first).  Moves right while the equal keys
 * continue past a page's end.
 */
static int bt_search_eq(btree *bt, buf_session *s, const keel_value *keys,
                        tid *tids, uint32_t max, bool last, uint32_t *count,
                        bool first_only, const heap_rel *heap, tid *guessed)
{
    bt_scankey sk;
    bt_hint hint;
    uint32_t walk = 0;
    uint32_t found = 0;
    blocknum_t blk;
    int32_t id;
    uint16_t pos;
    void *page;
    int rc;

    bt_scankey_init(bt, &sk, keys, bt->natts, -1);
    rc = bt_descend(bt, s, &sk, 0, LW_SHARED, NULL, NULL, &hint, &id, &blk,
                    heap, guessed, NULL);
    if (rc != KEEL_OK)
        return rc;
    page = bt_page(s, id);
    /* The descent left the high-key test to us: it is needed only when no
     * entry of the page is >= sk. */
    for (;;) {
        pos = bt_lower_bound(bt, page, &sk, &hint);
        if (pos < btpage_nitems(page) || !bt_beyond(bt, page, &sk))
            break;
        blk = btpage_opaque(page)->right;
        buf_unlock_release(s, id);
        rc = bt_walk_step(bt, s, ++walk, blk);
        if (rc == KEEL_OK)
            rc = bt_read_lock(bt, s, blk, LW_SHARED, 0, &id);
        if (rc != KEEL_OK)
            return rc;
        page = bt_page(s, id);
        hint = bt_no_hint;
    }
    sk.unspec = 0; /* from here on: equality */
    for (;;) {
        uint16_t n = btpage_nitems(page), start = pos;
        bool all_equal = false;

        for (; pos < n; pos++) {
            const bt_item *it = btpage_item(page, pos);
            if (!all_equal && bt_compare(bt, &sk, it, true) != 0)
                goto done;
            bt_tids_put(tids, max, last, found, btitem_tid(it, true));
            found++;
            if (first_only)
                goto done;
            /* As in bt_int_collect(): a second equal entry, with more than
             * max after it, and the high key equal too. */
            if (last && pos == start + 1 && (uint32_t)(n - pos - 1) > max &&
                bt_beyond(bt, page, &sk)) {
                all_equal = true;
                found += (uint32_t)(n - pos - 1) - max;
                pos = (uint16_t)(n - max - 1);
            }
        }
        /* Equal keys may continue right only if the high key is equal. */
        if (!all_equal && !bt_beyond(bt, page, &sk))
            goto done;
        blk = btpage_opaque(page)->right;
        buf_unlock_release(s, id);
        rc = bt_walk_step(bt, s, ++walk, blk);
        if (rc == KEEL_OK)
            rc = bt_read_lock(bt, s, blk, LW_SHARED, 0, &id);
        if (rc != KEEL_OK)
            return rc;
        page = bt_page(s, id);
        pos = btpage_first(page);
    }
done:
    buf_unlock_release(s, id);
    if (last)
        bt_tids_unring(tids, max, found);
    *count = found;
    return KEEL_OK;
}

/* ---- point lookup on one integer column -------------------------------- */

/*
 * The key of item it (not minus infinity) as an integer, for an index whose
 * fast path is `fast` (a constant where this is inlined); false if the key
 * is null (nulls sort after every value).
 */
static inline __attribute__((always_inline)) bool
bt_int_key(const bt_item *it, bool leaf, int fast, int64_t *v)
{
    const void *key = btitem_key(it, leaf);

    if (__builtin_expect((it->info & BT_INFO_NULLS) != 0, 0))
        return false;
    switch (fast) {
    case BT_FAST_INT2: {
        int16_t x;
        memcpy(&x, key, 2);
        *v = x;
        break;
    }
    case BT_FAST_INT4: {
        int32_t x;
        memcpy(&x, key, 4);
        *v = x;
        break;
    }
    case BT_FAST_OID: {
        uint32_t x;
        memcpy(&x, key, 4);
        *v = x;
        break;
    }
    default:
        memcpy(v, key, 8);
        break;
    }
    return true;
}

/* What bt_int_below() compares: a page's items with an integer key. */
typedef struct bt_int_probe {
    const void *page;
    int64_t k;
    bool leaf;
    int fast;
} bt_int_probe;

/* Whether the item in slot i has a key (not null) below k. */
static inline __attribute__((always_inline)) bool bt_int_below(const void *ctx,
                                                               uint32_t i)
{
    const bt_int_probe *q = ctx;
    int64_t v;

    return bt_int_key(btpage_item(q->page, (uint16_t)i), q->leaf, q->fast,
                      &v) &&
           v < q->k;
}

/*
 * The number of slots in [lo, hi) whose item's key is below k, the slots
 * being in key order: where (k, minus infinity) sits among them.  As
 * bt_interp_search(): a guess interpolated between the bounds [kmin, kmax]
 * (h's, else the range's end keys), a gallop outwards from it to bracket
 * the answer, and halving (bt_rank_from()).  The guessed item's line is
 * prefetched while its line pointer is read.
 */
static inline __attribute__((always_inline)) uint32_t
bt_int_rank(const void *page, int64_t k, uint32_t lo, uint32_t hi, bool leaf,
            int fast, const bt_hint *h)
{
    const bt_int_probe q = {page, k, leaf, fast};
    int64_t kmin, kmax;
    uint32_t g, back;

    if (hi - lo < 8 ||
        !(h->has_lo ? (kmin = h->lo, true)
                    : bt_int_key(btpage_item(page, (uint16_t)lo), leaf, fast,
                                 &kmin)) ||
        !(h->has_hi ? (kmax = h->hi, true)
                    : bt_int_key(btpage_item(page, (uint16_t)(hi - 1)), leaf,
                                 fast, &kmax)))
        return bt_rank_from(lo, hi, BT_NO_GUESS, bt_int_below, &q);
    g = bt_interp_guess(k, kmin, kmax, lo, hi);
    back = leaf ? 16 * (g - lo + 1) : 16 + 24 * (g - lo + 1);
    if (back <= BT_PAGE_CAP)
        __builtin_prefetch((const char *)page + BT_SPECIAL_OFF - back);
    return bt_rank_from(lo, hi, g, bt_int_below, &q);
}

/*
 * Whether (k, minus infinity), or with or_equal an entry of key k, may lie
 * right of the share-locked page: the page has a high key, not null, and
 * k is above it (or_equal: not below it).
 */
static inline __attribute__((always_inline)) bool
bt_int_beyond(const void *page, int fast, int64_t k, bool or_equal)
{
    int64_t hk;

    if (btpage_rightmost(page) || !bt_int_key(btpage_item(page, BT_HIKEY),
                                              btpage_is_leaf(page), fast, &hk))
        return false;
    return or_equal ? k >= hk : k > hk;
}

/* Releases the page and reads its right sibling at level, share-locked:
 * the search's move right number walk. */
static int bt_move_right(const btree *bt, buf_session *s, int level,
                         uint32_t walk, int32_t *id, const void **page)
{
    blocknum_t next = btpage_opaque_c(*page)->right;
    int rc;

    buf_unlock_release(s, *id);
    rc = bt_walk_step(bt, s, walk, next);
    if (rc == KEEL_OK)
        rc = bt_read_lock(bt, s, next, LW_SHARED, level, id);
    if (rc == KEEL_OK)
        *page = bt_page(s, *id);
    return rc;
}

/*
 * The rest of an integer point search whose first entry of key k is at
 * pos on the share-locked leaf id: collects the tids of the entries equal
 * to k, the first max of them into tids (with last the last max) and
 * their number into *count, following right-links while the high key is
 * k (bt_search_eq()'s loop, with integer compares).  Releases the page;
 * KEEL_OK or an error.
 */
static int bt_int_collect(const btree *bt, buf_session *s, int fast, int64_t k,
                          int32_t id, const void *page, uint32_t pos, tid *tids,
                          uint32_t max, bool last, uint32_t *count)
{
    uint32_t walk = 0;
    uint32_t found = 0;
    int rc;

    for (;;) {
        uint32_t n = btpage_nitems(page), start = pos;
        bool all_equal = false;

        for (; pos < n; pos++) {
            const bt_item *it = btpage_item(page, (uint16_t)pos);
            int64_t v;
            if (!all_equal && (!bt_int_key(it, true, fast, &v) || v != k))
                goto done;
            bt_tids_put(tids, max, last, found, btitem_tid(it, true));
            found++;
            /* A second entry of k, and more than max after it: if the high
             * key is k, every entry to the page's end is k (they are below
             * the high key and not below k), and with last only the page's
             * last max of them can stay in the ring; the others are only
             * counted.  (A key with one entry never reads the high key.) */
            if (last && pos == start + 1 && n - pos - 1 > max &&
                bt_int_beyond(page, fast, k, true)) {
                all_equal = true;
                found += n - pos - 1 - max;
                pos = n - max - 1;
            }
        }
        /* Equal keys may continue right only if the high key is k. */
        if (!all_equal && !bt_int_beyond(page, fast, k, true))
            goto done;
        rc = bt_move_right(bt, s, 0, ++walk, &id, &page);
        if (rc != KEEL_OK)
            return rc;
        pos = btpage_first(page);
    }
done:
    buf_unlock_release(s, id);
    if (last)
        bt_tids_unring(tids, max, found);
    *count = found;
    return KEEL_OK;
}

/* ---- the session's directory of an internal level ---------------------- */

/* Moves right at the directory's level one lookup may make before it
 * gives up on the directory and descends from the root. */
#define BT_DIR_MAX_MOVES 2
/* Lookups after a build that found nothing to hold before the next. */
#define BT_DIR_RETRY 4096

/* The downlinks of one level, as collected: see struct btree_dir. */
typedef struct bt_dir_level {
    int64_t *keys;     /* keys[i]: child i's lower bound (i > 0) */
    tid *tids;         /* tids[i]: that separator's heap tid */
    blocknum_t *child; /* the child's block */
    int32_t *bufs;     /* the buffer it was last read from, or BUF_INVALID */
    uint32_t n, cap;
} bt_dir_level;

struct btree_dir {
    const btree *bt;     /* handle it was built through (NULL: none) */
    relnumber_t rel;     /* and its index */
    uint32_t level;      /* level of the pages the entries lead to */
    uint32_t root_level; /* the root's level when it was built */
    uint32_t max;        /* most entries it may hold */
    bt_dir_level e;      /* e.n == 0: nothing to use */
    uint64_t uses;       /* lookups since the last build */
    uint64_t stale;      /* of their moves, those past a high key below
                          * the key: splits since the build */
    btree_dir_stats stats;
};

btree_dir *btree_dir_new(uint32_t max_entries)
{
    /* Its counters are written at every lookup (port/mem.h). */
    btree_dir *d = mem_alloc_aligned(sizeof(btree_dir));

    if (d != NULL)
        d->max = max_entries == 0 ? BTREE_DIR_DEFAULT_ENTRIES
                 : max_entries > BTREE_DIR_MAX_ENTRIES ? BTREE_DIR_MAX_ENTRIES
                                                       : max_entries;
    return d;
}

static void bt_dir_level_free(bt_dir_level *l)
{
    free(l->keys);
    free(l->tids);
    free(l->child);
    free(l->bufs);
    memset(l, 0, sizeof(*l));
}

void btree_dir_free(btree_dir *d)
{
    if (d == NULL)
        return;
    bt_dir_level_free(&d->e);
    mem_free_aligned(d);
}

bool btree_dir_applies(const btree *bt)
{
    return bt->natts == 1 && bt->fast != BT_FAST_NONE;
}

bool btree_dir_is_for(const btree_dir *d, const btree *bt)
{
    return d->bt == bt && d->rel == bt->rel;
}

void btree_dir_stats_get(const btree_dir *d, btree_dir_stats *out)
{
    *out = d->stats;
    out->level = d->e.n > 0 ? d->level : 0;
    out->entries = d->e.n;
    out->bytes =
        sizeof(*d) + (size_t)d->e.cap * (sizeof(int64_t) + sizeof(tid) +
                                         sizeof(blocknum_t) + sizeof(int32_t));
}

/* Appends child c of low bound (has_key: key, t) to l; false when l
 * holds max entries already or memory runs out. */
static bool bt_dir_push(bt_dir_level *l, uint32_t max, bool has_key,
                        int64_t key, tid t, blocknum_t c)
{
    if (l->n == max)
        return false;
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 64;
        int64_t *k;
        tid *ts;
        blocknum_t *ch;
        int32_t *b;

        if (cap > max)
            cap = max;
        if ((k = realloc(l->keys, cap * sizeof(*k))) != NULL)
            l->keys = k;
        if ((ts = realloc(l->tids, cap * sizeof(*ts))) != NULL)
            l->tids = ts;
        if ((ch = realloc(l->child, cap * sizeof(*ch))) != NULL)
            l->child = ch;
        if ((b = realloc(l->bufs, cap * sizeof(*b))) != NULL)
            l->bufs = b;
        if (k == NULL || ts == NULL || ch == NULL || b == NULL)
            return false;
        l->cap = cap;
    }
    /* Only the first entry, the level's leftmost page, has no bound. */
    l->keys[l->n] = has_key ? key : INT64_MIN;
    l->tids[l->n] = t;
    l->child[l->n] = c;
    l->bufs[l->n] = BUF_INVALID;
    l->n++;
    return true;
}

/* Moves the first n elements of *arr (size bytes each) to lines of their
 * own (port/mem.h); kept where they are if memory runs out. */
static void bt_dir_array_settle(void **arr, uint32_t n, size_t size)
{
    void *p = mem_alloc_lines(n * size);

    if (p == NULL)
        return;
    memcpy(p, *arr, n * size);
    free(*arr);
    *arr = p;
}

/*
 * Gives back l's room beyond its entries, in allocations of whole lines:
 * a lookup writes bufs, and reads the rest, so that another session's
 * memory beside them would cost a line's move at every lookup.
 */
static void bt_dir_level_trim(bt_dir_level *l)
{
    if (l->n == 0)
        return;
    bt_dir_array_settle((void **)&l->keys, l->n, sizeof(*l->keys));
    bt_dir_array_settle((void **)&l->tids, l->n, sizeof(*l->tids));
    bt_dir_array_settle((void **)&l->child, l->n, sizeof(*l->child));
    bt_dir_array_settle((void **)&l->bufs, l->n, sizeof(*l->bufs));
    /* Each array holds n entries at least, moved or not. */
    l->cap = l->n;
}

/*
 * Collects into l the downlinks of every page of level `level`, walking
 * right from its leftmost page blk, each page share-locked alone; the
 * leftmost downlink goes to *first_child.  Stops at the first null key:
 * nulls sort last, so the child left of it holds every greater integer
 * key, and those right of it only nulls.  False (l unusable, no error)
 * when l would hold more than max entries, memory runs out or the keys
 * are out of order; an I/O or corruption error returns its code in *rc.
 */
static bool bt_dir_walk(const btree *bt, buf_session *s, uint32_t level,
                        blocknum_t blk, uint32_t max, bt_dir_level *l,
                        blocknum_t *first_child, int *rc)
{
    bool has_low = false, ok = true, end = false;
    int64_t low = 0;
    tid low_tid = {0, 0};

    l->n = 0;
    *rc = KEEL_OK;
    while (ok && !end) {
        const void *page;
        uint32_t first, n;
        int32_t id;

        *rc = bt_read_lock(bt, s, blk, LW_SHARED, (int)level, &id);
        if (*rc != KEEL_OK)
            return false;
        page = bt_page(s, id);
        first = btpage_first(page);
        n = btpage_nitems(page); /* > first: bt_read_lock() saw to it */
        if (l->n == 0)
            *first_child = btpage_item(page, (uint16_t)first)->block;
        /* The minus-infinity downlink's bound is the page's own, the high
         * key of the page left of it. */
        ok = bt_dir_push(l, max, has_low, low, low_tid,
                         btpage_item(page, (uint16_t)first)->block);
        for (uint32_t i = first + 1; ok && !end && i < n; i++) {
            const bt_item *it = btpage_item(page, (uint16_t)i);
            int64_t v = 0;
            if (!bt_int_key(it, false, bt->fast, &v))
                end = true;
            else
                ok = (!has_low || v >= low) &&
                     bt_dir_push(l, max, true, v, btitem_tid(it, false),
                                 it->block);
            has_low = true;
            low = v;
        }
        if (ok && !end && !btpage_rightmost(page)) {
            const bt_item *hk = btpage_item(page, BT_HIKEY);
            int64_t v = 0;
            if (!bt_int_key(hk, false, bt->fast, &v))
                end = true;
            else
                ok = !has_low || v >= low;
            low = v;
            low_tid = btitem_tid(hk, false);
            has_low = true;
        }
        end = end || btpage_rightmost(page);
        blk = btpage_opaque_c(page)->right;
        buf_unlock_release(s, id);
    }
    return ok;
}

/*
 * (Re)builds d for bt: the downlinks of the lowest internal level that
 * fit in d->max entries, leading to pages of level d->level.  Leaves
 * d empty (e.n == 0) when the root is a leaf or nothing fits.  An error
 * (I/O, corruption) while reading a level leaves d with the level above
 * it, or empty at the root's, for the lookup's own descent to meet the
 * error and report it.
 */
static __attribute__((noinline, cold)) void
bt_dir_build(btree *bt, buf_session *s, btree_dir *d)
{
    bt_dir_level next = {0};
    blocknum_t blk;
    uint32_t rlevel;
    int rc;

    d->bt = bt;
    d->rel = bt->rel;
    d->e.n = 0;
    d->uses = d->stale = 0;
    d->stats.builds++;
    rc = bt_root_get(bt, s, true, &blk, &rlevel);
    if (rc != KEEL_OK)
        return;
    d->root_level = rlevel;
    for (uint32_t level = rlevel; level >= 1; level--) {
        blocknum_t child = BT_NONE;
        bt_dir_level t;

        if (!bt_dir_walk(bt, s, level, blk, d->max, &next, &child, &rc))
            break;
        t = d->e;
        d->e = next;
        next = t;
        d->level = level - 1;
        blk = child;
    }
    bt_dir_level_free(&next);
    bt_dir_level_trim(&d->e);
}

/*
 * Whether d may start bt's lookup now, (re)building it first if it was
 * built for another index, the tree has grown a level since, or splits
 * since the build have made lookups move right from where it led more
 * than 16 times and more than once in 32 lookups.
 */
static inline bool bt_dir_ready(btree *bt, buf_session *s, btree_dir *d)
{
    uint64_t root = atomic_load_relaxed(&bt->root_cache);

    if (d->bt != bt || d->rel != bt->rel ||
        (root != 0 && (uint32_t)(root >> 32) != d->root_level) ||
        (d->e.n == 0 ? d->uses >= BT_DIR_RETRY
                     : d->stale > 16 && d->stale * 32 > d->uses))
        bt_dir_build(bt, s, d);
    d->uses++;
    d->stats.uses++;
    return d->e.n > 0;
}

/* What bt_dir_below() compares: a directory's keys with k. */
typedef struct bt_dir_probe {
    const int64_t *keys;
    int64_t k;
} bt_dir_probe;

static inline bool bt_dir_below(const void *ctx, uint32_t i)
{
    const bt_dir_probe *q = ctx;

    return q->keys[i] < q->k;
}

/*
 * The entry of d whose child's key range holds (k, minus infinity): the
 * last whose bound is below k (entry 0 has none).  The bounds are
 * ordered; a guess is interpolated between the first and the last, then
 * bracketed and halved, as in bt_int_rank().
 */
static inline uint32_t bt_dir_find(const btree_dir *d, int64_t k)
{
    const bt_dir_probe q = {d->e.keys, k};
    uint32_t lo = 1, hi = d->e.n;

    return bt_rank_from(lo, hi,
                        hi - lo < 8 ? BT_NO_GUESS
                                    : bt_interp_guess(k, q.keys[lo],
                                                      q.keys[hi - 1], lo, hi),
                        bt_dir_below, &q) -
           1;
}

/*
 * Reads the child blk of level `level` whose bounds h gives, share-locked,
 * for the lookup of k: on the way to a leaf, the heap row is guessed from
 * the leaf's bounding separators (heap_tid_guess()) and prefetched (with
 * heap), and the leaf's lines where k should sit are fetched with it.  If
 * the caller remembers the buffer the child was in (recent), its lines
 * are asked for first, before the heap row's guess and the mapping table
 * look-up it takes: the leaf is read first, and its miss is the one the
 * lookup waits for.
 */
static inline __attribute__((always_inline)) int
bt_int_child(const btree *bt, buf_session *s, int64_t k, const heap_rel *heap,
             const bt_hint *h, blocknum_t blk, uint32_t level, int32_t recent,
             tid *guessed, int32_t *id)
{
    bool leaf = level == 0 && h->has_lo && h->has_hi && h->hi > h->lo;
    double guess =
        leaf ? ((double)k - (double)h->lo) / ((double)h->hi - (double)h->lo)
             : -1.0;
    uint16_t lines[4];
    uint32_t n = bt_guess_lines(guess, lines);

    buf_prefetch_buffer(s, recent, lines, n);
    if (leaf && heap != NULL)
        bt_prefetch_heap(bt, s, heap, h, guess, guessed);
    return bt_read_lock_lines(bt, s, blk, LW_SHARED, (int)level, lines, n,
                              recent, id);
}

/*
 * btree_lookup_heap() (count NULL: the first entry's tid into tids[0],
 * KEEL_ENOENT if none) or btree_search_heap() and btree_search_last()
 * (count not NULL: see bt_int_collect()) for an index on one integer column
 * (fast path `fast`, a constant where inlined) and the non-null key k: the
 * descent of bt_descend() and the leaf search of bt_search_eq() in one loop,
 * with the key compared as an integer.  Same protocol: one share lock at a
 * time, right-links followed where a split moved the key.  With heap, on
 * the way from level 1 to the leaf, the heap row is guessed from the
 * leaf's bounding separators (heap_tid_guess()) and prefetched.
 *
 * With dir (see btree_dir_new()), the descent starts at the page of d's
 * level that d names for k, without reading the pages above it.  Pages
 * are never deleted and a split keeps a page's lower bound, so that page
 * still holds k or lies left of it: moving right finds k as after any
 * split.  If it takes more than BT_DIR_MAX_MOVES moves, the lookup starts
 * over from the root.
 */
static inline __attribute__((always_inline)) int
bt_lookup_int(btree *bt, buf_session *s, int64_t k, int fast,
              const heap_rel *heap, btree_dir *dir, tid *tids, uint32_t max,
              bool last, uint32_t *count, tid *guessed)
{
    bool refresh = false;
    bool use_dir = dir != NULL && bt_dir_ready(bt, s, dir);

    for (int attempt = 0;; attempt++) {
        bt_hint h = bt_no_hint;
        uint32_t walk = 0;
        const void *page;
        blocknum_t blk;
        uint32_t level, dir_level = UINT32_MAX, moves = 0;
        int32_t id;
        int rc;

        if (attempt >= 1000)
            return kerr_set(&s->err, KEEL_ECORRUPT,
                            "index %u: the meta page's root is not a root "
                            "page of level >= 0",
                            bt->rel);
        if (use_dir) {
            uint32_t i = bt_dir_find(dir, k);
            bt_dir_level *e = &dir->e;

            h.has_lo = i > 0;
            h.lo = e->keys[i];
            h.lo_tid = e->tids[i];
            if (i + 1 < e->n) {
                h.has_hi = true;
                h.hi = e->keys[i + 1];
                h.hi_tid = e->tids[i + 1];
            }
            level = dir_level = dir->level;
            rc = bt_int_child(bt, s, k, heap, &h, e->child[i], level,
                              e->bufs[i], guessed, &id);
            if (rc != KEEL_OK)
                return rc;
            e->bufs[i] = id;
            page = bt_page(s, id);
        } else {
            rc = bt_root_get(bt, s, refresh, &blk, &level);
            if (rc != KEEL_OK)
                return rc;
            refresh = true;
            rc = bt_read_lock(bt, s, blk, LW_SHARED, -1, &id);
            if (rc != KEEL_OK)
                return rc;
            page = bt_page(s, id);
            if (!(btpage_opaque_c(page)->flags & BT_ROOT) ||
                btpage_opaque_c(page)->level != level) {
                /* A stale cache: the root split (or the meta page moved
                 * on). */
                buf_unlock_release(s, id);
                continue;
            }
        }
        while (level > 0) {
            uint32_t first = btpage_first(page), n = btpage_nitems(page);
            uint32_t slot;

            slot = bt_int_rank(page, k, first + 1, n, false, fast, &h);

            if (slot == n && bt_int_beyond(page, fast, k, false)) {
                /* A split moved k right: the sibling's bounds are unknown. */
                if (level == dir_level) {
                    dir->stale++;
                    dir->stats.moves++;
                    if (++moves > BT_DIR_MAX_MOVES)
                        goto over;
                }
                rc = bt_move_right(bt, s, (int)level, ++walk, &id, &page);
                if (rc != KEEL_OK)
                    return rc;
                h = bt_no_hint;
                continue;
            }
            /* The child's bounds: its downlink's key and the next one's
             * (the last child inherits this page's upper bound). */
            if (slot - 1 > first) {
                const bt_item *it = btpage_item(page, (uint16_t)(slot - 1));
                h.has_lo = bt_int_key(it, false, fast, &h.lo);
                h.lo_tid = btitem_tid(it, false);
            }
            if (slot < n) {
                const bt_item *it = btpage_item(page, (uint16_t)slot);
                h.has_hi = bt_int_key(it, false, fast, &h.hi);
                h.hi_tid = btitem_tid(it, false);
            }
            blk = btpage_item(page, (uint16_t)(slot - 1))->block;
            buf_unlock_release(s, id);
            level--;
            rc = bt_int_child(bt, s, k, heap, &h, blk, level, BUF_INVALID,
                              guessed, &id);
            if (rc != KEEL_OK)
                return rc;
            page = bt_page(s, id);
        }
        for (;;) {
            uint32_t first = btpage_first(page), n = btpage_nitems(page);
            uint32_t pos;
            int64_t v;

            pos = bt_int_rank(page, k, first, n, true, fast, &h);

            if (pos < n) {
                const bt_item *it = btpage_item(page, (uint16_t)pos);
                if (count != NULL)
                    return bt_int_collect(bt, s, fast, k, id, page, pos, tids,
                                          max, last, count);
                rc = bt_int_key(it, true, fast, &v) && v == k ? KEEL_OK
                                                              : KEEL_ENOENT;
                if (rc == KEEL_OK)
                    tids[0] = btitem_tid(it, true);
                buf_unlock_release(s, id);
                return rc;
            }
            /* Every entry here is below k: k's first entry is right of
             * this page if k is not below the high key. */
            if (!bt_int_beyond(page, fast, k, true)) {
                buf_unlock_release(s, id);
                if (count != NULL) {
                    *count = 0;
                    return KEEL_OK;
                }
                return KEEL_ENOENT;
            }
            if (dir_level == 0) {
                /* k equal to the high key is no sign of staleness: its
                 * first entry may have been left of the separator. */
                if (bt_int_beyond(page, fast, k, false))
                    dir->stale++;
                dir->stats.moves++;
                if (++moves > BT_DIR_MAX_MOVES)
                    goto over;
            }
            rc = bt_move_right(bt, s, 0, ++walk, &id, &page);
            if (rc != KEEL_OK)
                return rc;
            h = bt_no_hint;
        }
    over:
        /* The directory is far behind the tree here: from the root. */
        buf_unlock_release(s, id);
        dir->stats.fallbacks++;
        use_dir = false;
    }
}

int btree_lookup(btree *bt, buf_session *s, const keel_value *keys, tid *t)
{
    return btree_lookup_heap(bt, s, keys, NULL, NULL, t, NULL);
}

/*
 * bt_lookup_int() for keys if the index is on one integer column and the
 * key is not null, with the key's type a constant in each copy: true and
 * its result in *rc; false (nothing done) otherwise.
 */
static bool bt_int_path(btree *bt, buf_session *s, const keel_value *keys,
                        const heap_rel *heap, btree_dir *dir, tid *tids,
                        uint32_t max, bool last, uint32_t *count, tid *guessed,
                        int *rc)
{
    if (bt->natts != 1 || keys[0].isnull)
        return false;
    switch (bt->fast) {
    case BT_FAST_INT2:
        *rc = bt_lookup_int(bt, s, keys[0].v.i2, BT_FAST_INT2, heap, dir, tids,
                            max, last, count, guessed);
        return true;
    case BT_FAST_INT4:
        *rc = bt_lookup_int(bt, s, keys[0].v.i4, BT_FAST_INT4, heap, dir, tids,
                            max, last, count, guessed);
        return true;
    case BT_FAST_OID:
        *rc = bt_lookup_int(bt, s, keys[0].v.oid, BT_FAST_OID, heap, dir, tids,
                            max, last, count, guessed);
        return true;
    case BT_FAST_INT8:
        *rc = bt_lookup_int(bt, s, keys[0].v.i8, BT_FAST_INT8, heap, dir, tids,
                            max, last, count, guessed);
        return true;
    default:
        return false;
    }
}

int btree_lookup_heap(btree *bt, buf_session *s, const keel_value *keys,
                      const heap_rel *heap, btree_dir *dir, tid *t,
                      tid *guessed)
{
    uint32_t n = 0;
    int rc;

    if (guessed != NULL)
        guessed->block = guessed->offset = 0;
    if (bt_int_path(bt, s, keys, heap, dir, t, 1, false, NULL, guessed, &rc))
        return rc;
    rc = bt_search_eq(bt, s, keys, t, 1, false, &n, true, heap, guessed);
    if (rc != KEEL_OK)
        return rc;
    return n > 0 ? KEEL_OK : KEEL_ENOENT;
}

int btree_search(btree *bt, buf_session *s, const keel_value *keys, tid *tids,
                 uint32_t max, uint32_t *count)
{
    return btree_search_heap(bt, s, keys, NULL, NULL, tids, max, count, NULL);
}

/* btree_search_heap() (last false) and btree_search_last() (true). */
static int bt_search(btree *bt, buf_session *s, const keel_value *keys,
                     const heap_rel *heap, btree_dir *dir, tid *tids,
                     uint32_t max, bool last, uint32_t *count, tid *guessed)
{
    int rc;

    if (guessed != NULL)
        guessed->block = guessed->offset = 0;
    if (bt_int_path(bt, s, keys, heap, dir, tids, max, last, count, guessed,
                    &rc))
        return rc;
    return bt_search_eq(bt, s, keys, tids, max, last, count, false, heap,
                        guessed);
}

int btree_search_heap(btree *bt, buf_session *s, const keel_value *keys,
                      const heap_rel *heap, btree_dir *dir, tid *tids,
                      uint32_t max, uint32_t *count, tid *guessed)
{
    return bt_search(bt, s, keys, heap, dir, tids, max, false, count, guessed);
}

int btree_search_last(btree *bt, buf_session *s, const keel_value *keys,
                      btree_dir *dir, tid *tids, uint32_t max, uint32_t *count)
{
    return bt_search(bt, s, keys, NULL, dir, tids, max, true, count, NULL);
}
