/*
 * test_heap.c: the heap access method (heapam.h) and its slotted page
 * (heap_page.h).
 *
 * Transactions are simulated on the test side: a fake transaction manager
 * hands out xids, keeps the set of running ones under a mutex (so that
 * snapshots are consistent), and answers the heap's status questions from
 * a table of atomics, as the real commit log would.  Many tests instead
 * build snapshots and set statuses by hand, to put rows in exactly the
 * state a case needs.
 *
 * Covered: the page (adding, finding, deleting and compacting items, line
 * pointer reuse, verification catching damage, damaged items refused and
 * left in place); rows on damaged pages (bad text lengths, null bitmaps,
 * line pointers, special space, line pointer counts) refused with
 * KEEL_ECORRUPT by every reader and writer; insert/fetch round trips of
 * every type with nulls and long text; rows across many pages, the free
 * space hint and extension; scans returning exactly the visible rows; the
 * visibility matrix (inserter and deleter in every state); fetching only
 * a row's first columns (heap_fetch_cols()); updates (new
 * tid, old version for old snapshots); write conflicts (first updater
 * wins); rows too big and bad values changing nothing; failures (I/O
 * errors, oracle errors) leaving no pin or lock and nothing half done;
 * persistence across a checkpoint and reopen; bulk inserts staying in their
 * ring; reusing a row's memory (heap_row_prepare()); guessing a row's tid
 * between two others (heap_tid_guess()) and the
 * B-tree's heap prefetch built on it (btree_lookup_heap(): right guesses
 * over a table in key order, few over a shuffled one, the same answers
 * either way); and two concurrency tests: concurrent inserts, and concurrent
 * increments of shared counters with random aborts (no lost updates).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/btree.h"
#include "access/heap_page.h"
#include "access/heapam.h"
#include "access/tuple.h"
#include "port/atomics.h"
#include "port/clock.h"
#include "storage/buf_log.h"
#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "storage/smgr.h"
#include "txn/snapshot.h"

#define REL     ((relnumber_t)16384)
#define REL_HOT ((relnumber_t)16390)

typedef union page_buf {
    uint64_t align;
    unsigned char b[BLOCK_SIZE];
} page_buf;

/* ------------------------------------------------------------------ */
/* A fake transaction manager                                         */
/* ------------------------------------------------------------------ */

#define TXM_MAX_XIDS (1u << 22)

typedef struct fake_txm {
    pthread_mutex_t lock;
    xid_t next;               /* next xid to hand out (under lock) */
    xid_t *running;           /* ascending (under lock) */
    uint32_t nrunning;        /* (under lock) */
    _Atomic(uint8_t) *status; /* xid -> xid_status, read without lock */
    atomic_u32 fail_xid;      /* the oracle fails for this xid (0: never) */
    atomic_u32 calls;         /* oracle calls */
    atomic_u32 horizon;       /* what the horizon function answers */
} fake_txm;

static fake_txm *txm_create(void)
{
    fake_txm *t = calloc(1, sizeof(*t));

    assert_non_null(t);
    pthread_mutex_init(&t->lock, NULL);
    t->next = XID_FIRST_NORMAL;
    t->running = calloc(1024, sizeof(xid_t));
    t->status = calloc(TXM_MAX_XIDS, sizeof(*t->status));
    assert_non_null(t->running);
    assert_non_null(t->status);
    atomic_store(&t->status[XID_FROZEN], XID_STATUS_COMMITTED);
    return t;
}

static void txm_free(fake_txm *t)
{
    if (t == NULL)
        return;
    pthread_mutex_destroy(&t->lock);
    free(t->running);
    free((void *)t->status);
    free(t);
}

/* The status oracle the heap calls. */
static int txm_status_fn(void *ctx, xid_t xid, xid_status *st, kerr *err)
{
    fake_txm *t = ctx;

    atomic_fetch_add_explicit(&t->calls, 1, memory_order_relaxed);
    if (xid == atomic_load_explicit(&t->fail_xid, memory_order_relaxed))
        return kerr_set(err, KEEL_EIO, "fake commit log: cannot read xid %u",
                        xid);
    if (xid >= TXM_MAX_XIDS)
        return kerr_set(err, KEEL_EINVAL, "fake commit log: xid %u", xid);
    *st =
        (xid_status)atomic_load_explicit(&t->status[xid], memory_order_acquire);
    return KEEL_OK;
}

/* The horizon pruning asks for: whatever the test has set (0 at first:
 * no committed deleter is below it, so nothing is pruned). */
static xid_t txm_horizon_fn(void *ctx, xid_t want)
{
    fake_txm *t = ctx;

    (void)want;
    return atomic_load(&t->horizon);
}

/* Sets the horizon to the lowest running xid, or the next one. */
static void txm_horizon_now(fake_txm *t)
{
    pthread_mutex_lock(&t->lock);
    atomic_store(&t->horizon, t->nrunning > 0 ? t->running[0] : t->next);
    pthread_mutex_unlock(&t->lock);
}

static void txm_set(fake_txm *t, xid_t xid, xid_status st)
{
    atomic_store_explicit(&t->status[xid], (uint8_t)st, memory_order_release);
}

static xid_t txm_begin(fake_txm *t)
{
    xid_t xid;

    pthread_mutex_lock(&t->lock);
    xid = t->next++;
    assert_true(xid < TXM_MAX_XIDS && t->nrunning < 1024);
    t->running[t->nrunning++] = xid;
    pthread_mutex_unlock(&t->lock);
    return xid;
}

/* Records the outcome, then leaves the running set, atomically as far as
 * snapshots are concerned. */
static void txm_end(fake_txm *t, xid_t xid, xid_status st)
{
    pthread_mutex_lock(&t->lock);
    txm_set(t, xid, st);
    for (uint32_t i = 0; i < t->nrunning; i++) {
        if (t->running[i] == xid) {
            memmove(&t->running[i], &t->running[i + 1],
                    (t->nrunning - i - 1) * sizeof(xid_t));
            t->nrunning--;
            break;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

/* A snapshot for own (XID_INVALID: read-only); free s->xip afterwards. */
static void txm_snapshot(fake_txm *t, xid_t own, snapshot *s)
{
    pthread_mutex_lock(&t->lock);
    s->xmax = t->next;
    s->xmin = t->nrunning > 0 ? t->running[0] : t->next;
    s->own_xid = own;
    s->xip = calloc(t->nrunning + 1, sizeof(xid_t));
    s->nxip = 0;
    for (uint32_t i = 0; i < t->nrunning; i++)
        if (t->running[i] != own)
            s->xip[s->nxip++] = t->running[i];
    pthread_mutex_unlock(&t->lock);
}

/* A transaction as the tests drive one. */
typedef struct tx {
    xid_t xid;
    snapshot snap;
    visibility vis;
} tx;

static void tx_begin(fake_txm *t, tx *x)
{
    x->xid = txm_begin(t);
    txm_snapshot(t, x->xid, &x->snap);
    x->vis = (visibility){0};
    x->vis.snap = &x->snap;
    x->vis.status = txm_status_fn;
    x->vis.status_ctx = t;
    x->vis.horizon = txm_horizon_fn;
    x->vis.conflict = NULL;
    x->vis.cids = NULL; /* no command ids: sees all of its own changes */
    x->vis.met = NULL;
    x->vis.committed_ok = false;
    x->vis.in_array = NULL;
}

/* A read-only snapshot. */
static void tx_reader(fake_txm *t, tx *x)
{
    x->xid = XID_INVALID;
    txm_snapshot(t, XID_INVALID, &x->snap);
    x->vis = (visibility){0};
    x->vis.snap = &x->snap;
    x->vis.status = txm_status_fn;
    x->vis.status_ctx = t;
    x->vis.horizon = txm_horizon_fn;
    x->vis.conflict = NULL;
    x->vis.cids = NULL; /* no command ids: sees all of its own changes */
    x->vis.met = NULL;
    x->vis.committed_ok = false;
    x->vis.in_array = NULL;
}

static void tx_end(fake_txm *t, tx *x, xid_status st)
{
    if (x->xid != XID_INVALID)
        txm_end(t, x->xid, st);
    free(x->snap.xip);
    x->snap.xip = NULL;
}

/* ------------------------------------------------------------------ */
/* Fixture                                                            */
/* ------------------------------------------------------------------ */

typedef struct fixture {
    char *dir;
    smgr *sm;
    buf_pool *pool;
    buf_session *s;
    kerr err;
    tuple_desc *desc; /* (id int4 not null, n int8, payload text) */
    heap_rel rel;
    fake_txm *tm;
} fixture;

static void pool_open(fixture *f, uint32_t nbuffers)
{
    assert_null(f->pool);
    tu_pool_open(f->sm, nbuffers, &f->pool, &f->s, &f->err);
}

static void pool_close(fixture *f)
{
    tu_pool_close(&f->pool, &f->s, &f->err);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    kerr err;

    assert_non_null(f);
    tu_storage_open(&f->dir, &f->sm, &f->err);
    assert_int_equal(smgr_create(f->sm, REL, NULL, &f->err), KEEL_OK);
    f->desc = tupdesc_alloc(3);
    assert_non_null(f->desc);
    assert_int_equal(tupdesc_set(f->desc, 0, KEEL_INT4, 0, true, &err),
                     KEEL_OK);
    assert_int_equal(tupdesc_set(f->desc, 1, KEEL_INT8, 0, false, &err),
                     KEEL_OK);
    assert_int_equal(tupdesc_set(f->desc, 2, KEEL_TEXT, 0, false, &err),
                     KEEL_OK);
    heap_rel_init(&f->rel, REL, f->desc);
    f->tm = txm_create();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

#ifdef KEEL_FAULT_INJECTION
    fault_disarm_all();
#endif
    tu_pool_drop(f->pool, f->s, &f->err);
    tu_storage_close(f->dir, f->sm);
    tupdesc_free(f->desc);
    txm_free(f->tm);
    free(f);
    return 0;
}

/* Fails with the session's message unless rc is KEEL_OK. */
#define OK(f, call) TU_SESSION_OK((f)->s, call)

static void mkrow(keel_value v[3], int32_t id, int64_t n, const char *payload)
{
    memset(v, 0, 3 * sizeof(*v));
    v[0].v.i4 = id;
    v[1].v.i8 = n;
    if (payload == NULL) {
        v[2].isnull = true;
    } else {
        v[2].v.s.ptr = payload;
        v[2].v.s.len = (uint32_t)strlen(payload);
    }
}

static tid ins(fixture *f, xid_t xid, int32_t id, int64_t n,
               const char *payload)
{
    keel_value v[3];
    tid t = TID_INVALID;

    mkrow(v, id, n, payload);
    OK(f, heap_insert(&f->rel, f->s, xid, CID_FIRST, v, &t));
    assert_true(tid_valid(t));
    return t;
}

static void assert_row(const heap_row *r, int32_t id, int64_t n,
                       const char *payload)
{
    assert_int_equal(r->natts, 3);
    assert_false(r->values[0].isnull);
    assert_int_equal(r->values[0].v.i4, id);
    assert_true(r->values[1].v.i8 == n);
    if (payload == NULL) {
        assert_true(r->values[2].isnull);
    } else {
        assert_false(r->values[2].isnull);
        assert_int_equal(r->values[2].v.s.len, strlen(payload));
        assert_memory_equal(r->values[2].v.s.ptr, payload, strlen(payload));
    }
}

/* A visibility that sees everything committed so far, for checks. */
static void reader_vis(fixture *f, tx *x)
{
    tx_reader(f->tm, x);
}

/* Scans with vis and returns the number of rows; ids[] (if not NULL, room
 * for max) receives each row's id, tids[] its tid. */
static uint32_t scan_ids(fixture *f, const visibility *vis, int32_t *ids,
                         tid *tids, uint32_t max)
{
    heap_scan *sc = NULL;
    heap_row row;
    uint32_t n = 0;
    bool found = true;
    tid prev = TID_INVALID;

    OK(f, heap_row_init(&row, &f->rel, &f->err));
    OK(f, heap_scan_begin(&f->rel, f->s, vis, &sc));
    for (;;) {
        OK(f, heap_scan_next(sc, &row, &found));
        if (!found)
            break;
        /* Nothing pinned between calls; tids ascend. */
        assert_int_equal(buf_session_pinned(f->s), 0);
        assert_true(tid_compare(prev, row.tid) < 0);
        prev = row.tid;
        if (ids != NULL && n < max)
            ids[n] = row.values[0].v.i4;
        if (tids != NULL && n < max)
            tids[n] = row.tid;
        n++;
    }
    heap_scan_end(sc);
    heap_row_free(&row);
    return n;
}

static blocknum_t nblocks(fixture *f)
{
    smgr_rel *r;

    assert_int_equal(smgr_rel_open(f->sm, REL, &r, &f->err), KEEL_OK);
    return smgr_nblocks(r);
}

/* Copies block blk of REL as it is in the pool. */
static void read_page(fixture *f, blocknum_t blk, page_buf *out)
{
    int32_t id;

    OK(f, buf_read(f->s, REL, blk, NULL, &id));
    buf_lock(f->s, id, LW_SHARED);
    memcpy(out->b, buf_page(f->pool, id), BLOCK_SIZE);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
}

/* The raw header of the version at t. */
static heap_tuple_header raw_header(fixture *f, tid t)
{
    page_buf p;
    heap_tuple_header h;
    size_t len;
    const void *item;

    read_page(f, t.block, &p);
    item = heappage_get_item_const(p.b, t.offset, &len);
    assert_non_null(item);
    memcpy(&h, item, sizeof(h));
    return h;
}

/* Every page of REL passes heappage_verify(). */
static void verify_all_pages(fixture *f)
{
    blocknum_t n = nblocks(f);

    for (blocknum_t b = 0; b < n; b++) {
        page_buf p;
        kerr err;
        read_page(f, b, &p);
        if (heappage_verify(p.b, b, &err) != KEEL_OK)
            fail_msg("block %u: %s", b, err.msg);
    }
}

/* The end of every test: nothing pinned or locked, pages sane. */
static void assert_quiet(fixture *f)
{
    assert_int_equal(buf_session_pinned(f->s), 0);
    tu_assert_pool_quiet(f->pool);
    verify_all_pages(f);
}

/* ------------------------------------------------------------------ */
/* The slotted page                                                   */
/* ------------------------------------------------------------------ */

/* A fake tuple of len bytes (>= header) tagged with tag. */
static void make_item(unsigned char *buf, size_t len, uint8_t tag)
{
    heap_tuple_header h;

    memset(buf, tag, len);
    memset(&h, 0, sizeof(h));
    h.xmin = XID_FROZEN;
    h.hoff = HEAP_TUPLE_HOFF;
    h.next_offset = 1;
    memcpy(buf, &h, sizeof(h));
}

static bool item_is(const void *page, uint16_t off, size_t len, uint8_t tag)
{
    size_t got;
    const unsigned char *p = heappage_get_item_const(page, off, &got);

    if (p == NULL || got != len)
        return false;
    for (size_t i = sizeof(heap_tuple_header); i < len; i++)
        if (p[i] != tag)
            return false;
    return true;
}

static void test_page_items(void **state)
{
    (void)state;
    page_buf p;
    unsigned char item[HEAP_MAX_TUPLE_SIZE + 8];
    uint16_t n = 0;
    size_t len, failed_len = 0;
    kerr err;

    heappage_init(p.b);
    assert_int_equal(heappage_nitems(p.b), 0);
    assert_null(heappage_get_item_const(p.b, 1, &len));
    assert_null(heappage_get_item_const(p.b, 0, &len));
    assert_int_equal(heappage_verify(p.b, 0, &err), KEEL_OK);

    /* Items of varying length until the page is full. */
    for (;;) {
        size_t l = 24 + (size_t)(n * 7) % 90;
        uint16_t off;
        make_item(item, l, (uint8_t)(n + 1));
        if (!heappage_fits(p.b, l)) {
            page_buf before = p;
            failed_len = l;
            assert_int_equal(heappage_add_item(p.b, item, l), 0);
            assert_memory_equal(before.b, p.b, BLOCK_SIZE);
            break;
        }
        off = heappage_add_item(p.b, item, l);
        assert_int_equal(off, n + 1);
        n++;
    }
    assert_true(n > 50);
    assert_int_equal(heappage_nitems(p.b), n);
    assert_true(page_free_space(p.b) <
                ((failed_len + 7) & ~(size_t)7) + HEAPPAGE_LP_SIZE);
    for (uint16_t i = 1; i <= n; i++)
        assert_true(
            item_is(p.b, i, 24 + (size_t)((i - 1) * 7) % 90, (uint8_t)i));
    assert_null(heappage_get_item_const(p.b, (uint16_t)(n + 1), &len));
    assert_int_equal(heappage_verify(p.b, 0, &err), KEEL_OK);

    /* Deleting reclaims storage; the others keep offsets and bytes. */
    {
        size_t free_before = page_free_space(p.b);
        size_t l3 = 24 + (size_t)(2 * 7) % 90;
        assert_int_equal(heappage_delete_item(p.b, 3, &err), KEEL_OK);
        assert_int_equal(page_free_space(p.b), free_before + ((l3 + 7) & ~7u));
        assert_int_equal(heappage_nitems(p.b), n);
        assert_int_equal(heappage_lp_state_of(heappage_get_lp(p.b, 3)),
                         HEAPPAGE_LP_DEAD);
        assert_null(heappage_get_item_const(p.b, 3, &len));
        assert_int_equal(heappage_delete_item(p.b, 3, &err), KEEL_EINVAL);
        assert_int_equal(heappage_delete_item(p.b, 0, &err), KEEL_EINVAL);
        assert_int_equal(heappage_delete_item(p.b, (uint16_t)(n + 1), &err),
                         KEEL_EINVAL);
        for (uint16_t i = 1; i <= n; i++)
            if (i != 3)
                assert_true(item_is(p.b, i, 24 + (size_t)((i - 1) * 7) % 90,
                                    (uint8_t)i));
        assert_int_equal(heappage_verify(p.b, 0, &err), KEEL_OK);
        /* A dead pointer is not reused: the new item gets a new number. */
        make_item(item, 24, 0xEE);
        assert_int_equal(heappage_add_item(p.b, item, 24), n + 1);
        n++;
    }

    /* An UNUSED pointer (as a vacuum would leave) is reused. */
    {
        heappage_lp *lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
        page_header *h = (page_header *)p.b;
        assert_int_equal(heappage_delete_item(p.b, 4, &err), KEEL_OK);
        lps[3 - 1] = heappage_lp_make(0, HEAPPAGE_LP_UNUSED, 0);
        h->flags |= PAGE_FLAG_HAS_FREE_LINES;
        make_item(item, 24, 0xDD);
        assert_int_equal(heappage_add_item(p.b, item, 24), 3);
        assert_true(item_is(p.b, 3, 24, 0xDD));
        assert_false(h->flags & PAGE_FLAG_HAS_FREE_LINES);
        assert_int_equal(heappage_verify(p.b, 0, &err), KEEL_OK);
    }

    /* Limits: a zero-length item and one over the maximum never fit; the
     * maximum fits an empty page exactly once. */
    heappage_init(p.b);
    assert_false(heappage_fits(p.b, 0));
    assert_false(heappage_fits(p.b, HEAP_MAX_TUPLE_SIZE + 1));
    make_item(item, HEAP_MAX_TUPLE_SIZE, 0x11);
    assert_true(heappage_fits(p.b, HEAP_MAX_TUPLE_SIZE));
    assert_int_equal(heappage_add_item(p.b, item, HEAP_MAX_TUPLE_SIZE), 1);
    assert_false(heappage_fits(p.b, 8));
    assert_true(item_is(p.b, 1, HEAP_MAX_TUPLE_SIZE, 0x11));
    assert_int_equal(heappage_verify(p.b, 0, &err), KEEL_OK);

    /* A new (all-zero) page is empty and valid. */
    memset(p.b, 0, BLOCK_SIZE);
    assert_int_equal(heappage_nitems(p.b), 0);
    assert_int_equal(heappage_verify(p.b, 0, &err), KEEL_OK);
}

static void test_page_compact_many_deletes(void **state)
{
    (void)state;
    page_buf p;
    unsigned char item[200];
    uint64_t rng = 42;
    bool live[400] = {false};
    size_t lens[400];
    uint16_t n = 0;
    kerr err;

    heappage_init(p.b);
    for (int round = 0; round < 2000; round++) {
        if (tu_rand(&rng) % 3 != 0 || n == 0) {
            size_t l = 24 + tu_rand(&rng) % 170;
            if (!heappage_fits(p.b, l) || n >= 400)
                continue;
            make_item(item, l, (uint8_t)(n + 1));
            assert_int_equal(heappage_add_item(p.b, item, l), n + 1);
            lens[n] = l;
            live[n] = true;
            n++;
        } else {
            uint16_t victim = (uint16_t)(tu_rand(&rng) % n);
            int rc = heappage_delete_item(p.b, (uint16_t)(victim + 1), &err);
            assert_int_equal(rc, live[victim] ? KEEL_OK : KEEL_EINVAL);
            live[victim] = false;
        }
        if (heappage_verify(p.b, 0, &err) != KEEL_OK)
            fail_msg("round %d: %s", round, err.msg);
    }
    for (uint16_t i = 0; i < n; i++) {
        size_t len;
        if (live[i])
            assert_true(
                item_is(p.b, (uint16_t)(i + 1), lens[i], (uint8_t)(i + 1)));
        else
            assert_null(heappage_get_item_const(p.b, (uint16_t)(i + 1), &len));
    }
}

/*
 * Items removed without compaction (pruning's way): their storage holes,
 * zeroed, nothing else moves, an item as large as a removed one goes into its
 * hole, heappage_fits() counts the holes and heappage_add_item() compacts
 * when it needs them; every live item keeps its bytes and the page stays
 * valid throughout, up to HEAPPAGE_MAX_LINES line pointers.
 */
/* Every byte of the page between the line pointers and the end that no
 * NORMAL item covers is zero (free space, holes and padding). */
static bool unused_bytes_zero(const void *page)
{
    static _Alignas(8) unsigned char used[BLOCK_SIZE];
    const unsigned char *b = page;
    const page_header *h = page;
    uint16_t n = heappage_nitems(page);

    memset(used, 0, sizeof(used));
    for (uint16_t i = 1; i <= n; i++) {
        heappage_lp lp = heappage_get_lp(page, i);
        if (heappage_lp_state_of(lp) == HEAPPAGE_LP_NORMAL)
            memset(used + heappage_lp_off(lp), 1, heappage_lp_len(lp));
    }
    for (size_t i = h->lower; i < BLOCK_SIZE; i++)
        if (!used[i] && b[i] != 0)
            return false;
    return true;
}

static void test_page_remove_holes(void **state)
{
    (void)state;
    page_buf p;
    unsigned char item[200];
    uint64_t rng = 7;
    bool live[HEAPPAGE_MAX_LINES + 1] = {false};
    size_t lens[HEAPPAGE_MAX_LINES + 1];
    uint8_t tags[HEAPPAGE_MAX_LINES + 1];
    uint16_t n = 0, holes_used = 0, compactions = 0;
    kerr err;

    heappage_init(p.b);
    for (int round = 0; round < 5000; round++) {
        const page_header *h = (const page_header *)p.b;
        if (tu_rand(&rng) % 3 != 0) {
            size_t l = 24 + tu_rand(&rng) % 170;
            bool fits = heappage_fits(p.b, l), had_holes;
            uint16_t off;
            make_item(item, l, (uint8_t)(round + 1));
            had_holes = (h->flags & PAGE_FLAG_HAS_HOLES) != 0 &&
                        page_free_space(p.b) <
                            ((l + 7) & ~(size_t)7) + HEAPPAGE_LP_SIZE;
            off = heappage_add_item(p.b, item, l);
            assert_int_equal(off != 0, fits);
            if (off == 0)
                continue;
            assert_int_equal(off, n + 1);
            compactions += had_holes;
            lens[n] = l;
            tags[n] = (uint8_t)(round + 1);
            live[n] = true;
            n++;
        } else {
            uint16_t victims[3], nv = 0, placed;
            size_t l = 24 + tu_rand(&rng) % 170;
            uint32_t before[HEAPPAGE_MAX_LINES];
            for (uint16_t i = 0; i < n && nv < 3; i++)
                if (live[i] && tu_rand(&rng) % 4 == 0)
                    victims[nv++] = (uint16_t)(i + 1);
            for (uint16_t i = 0; i < n; i++)
                before[i] = heappage_get_lp(p.b, (uint16_t)(i + 1));
            make_item(item, l, (uint8_t)(round + 1));
            placed = heappage_remove_items(p.b, victims, nv,
                                           round % 2 ? item : NULL, l);
            for (uint16_t v = 0; v < nv; v++)
                live[victims[v] - 1] = false;
            /* Nothing else moved. */
            for (uint16_t i = 0; i < n; i++)
                if (live[i])
                    assert_int_equal(heappage_get_lp(p.b, (uint16_t)(i + 1)),
                                     before[i]);
            if (nv > 0)
                assert_true(h->flags & PAGE_FLAG_HAS_HOLES);
            if (placed != 0) {
                assert_int_equal(placed, n + 1);
                holes_used++;
                lens[n] = l;
                tags[n] = (uint8_t)(round + 1);
                live[n] = true;
                n++;
            }
        }
        if (heappage_verify(p.b, 0, &err) != KEEL_OK)
            fail_msg("round %d: %s", round, err.msg);
        for (uint16_t i = 0; i < n; i++)
            if (live[i])
                assert_true(item_is(p.b, (uint16_t)(i + 1), lens[i], tags[i]));
        if (!unused_bytes_zero(p.b))
            fail_msg("round %d: a removed item's bytes are left", round);
    }
    assert_true(n <= HEAPPAGE_MAX_LINES);
    assert_int_equal(n, HEAPPAGE_MAX_LINES); /* it filled up with lines */
    assert_true(holes_used >= 20);
    assert_true(compactions >= 5); /* 73 and 8 with this seed */
    /* Full of line pointers: nothing more goes in, however small. */
    assert_false(heappage_fits(p.b, 24));
    make_item(item, 24, 1);
    assert_int_equal(heappage_add_item(p.b, item, 24), 0);
}

/* Sets the header fields of the item at off of page that a heap-only
 * chain uses. */
static void set_chain(void *page, uint16_t off, xid_t xmin, xid_t xmax,
                      uint16_t flags, uint16_t next)
{
    size_t len;
    heap_tuple_header *h = heappage_get_item(page, off, &len);

    assert_non_null(h);
    h->xmin = xmin;
    h->xmax = xmax;
    h->flags = flags;
    h->next_block = 7;
    h->next_offset = next;
}

/*
 * A heap-only chain's page states (heap_page.h, "Heap-only updates"): a
 * root updated heap-only twice verifies; pruning makes the root a
 * REDIRECT to its last version and the middle one UNUSED, whose number
 * the next item reuses; verify refuses a redirect or a heap-only link to
 * a version that is not heap-only or not made by the updater, and a
 * redirect to nothing.
 */
static void test_hot_page_states(void **state)
{
    page_buf good, p;
    unsigned char item[64];
    heappage_lp *lps;
    uint16_t one = 1, two = 2, three = 3;
    kerr err;

    (void)state;
    heappage_init(good.b);
    for (uint8_t i = 1; i <= 3; i++) {
        make_item(item, 40, i);
        assert_int_equal(heappage_add_item(good.b, item, 40), i);
    }
    set_chain(good.b, 1, 100, 101,
              HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED, 2);
    set_chain(good.b, 2, 101, 102,
              HEAP_TUPLE_HEAP_ONLY | HEAP_TUPLE_XMAX_UPDATE |
                  HEAP_TUPLE_HOT_UPDATED,
              3);
    set_chain(good.b, 3, 102, 0, HEAP_TUPLE_HEAP_ONLY, 3);
    assert_int_equal(heappage_verify(good.b, 7, &err), KEEL_OK);

    /* Pruned: 1 redirects to 3, 2 is free again. */
    p = good;
    assert_int_equal(heappage_prune_items(p.b, &one, &three, 1, NULL, 0, &two,
                                          1, NULL, 0),
                     0);
    lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
    assert_int_equal(heappage_lp_state_of(lps[0]), HEAPPAGE_LP_REDIRECT);
    assert_int_equal(heappage_lp_off(lps[0]), 3);
    assert_int_equal(heappage_lp_state_of(lps[1]), HEAPPAGE_LP_UNUSED);
    assert_null(heappage_get_item(p.b, 1, &(size_t){0}));
    assert_true(((page_header *)p.b)->flags & PAGE_FLAG_HAS_FREE_LINES);
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_OK);
    make_item(item, 40, 9);
    assert_int_equal(heappage_add_item(p.b, item, 40), 2);
    assert_false(((page_header *)p.b)->flags & PAGE_FLAG_HAS_FREE_LINES);
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_OK);
    /* The whole chain gone: the redirect becomes DEAD. */
    assert_int_equal(heappage_prune_items(p.b, NULL, NULL, 0, &one, 1, &three,
                                          1, NULL, 0),
                     0);
    assert_int_equal(heappage_lp_state_of(lps[0]), HEAPPAGE_LP_DEAD);
    assert_int_equal(heappage_lp_state_of(lps[2]), HEAPPAGE_LP_UNUSED);
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_OK);

    /* Damage. */
    p = good;
    set_chain(p.b, 2, 101, 102, HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED,
              3); /* not heap-only */
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "item 1"));
    p = good;
    set_chain(p.b, 3, 99, 0, HEAP_TUPLE_HEAP_ONLY, 3); /* another's */
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "item 2"));
    p = good;
    set_chain(p.b, 1, 100, 0, 0, 1);
    assert_int_equal(heappage_prune_items(p.b, &two, &one, 1, NULL, 0, NULL, 0,
                                          NULL, 0),
                     0); /* to the root, not a heap-only version */
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "redirect"));
    p = good;
    lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
    lps[1] = heappage_lp_make(9, HEAPPAGE_LP_REDIRECT, 0); /* past the end */
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "names no other item"));
}

/* One record operation as buf_log_run_ops() reads it; its length. */
static uint16_t put_op(char *buf, uint8_t op, const void *payload,
                       uint16_t len)
{
    buf[0] = (char)op;
    buf[1] = 0;
    memcpy(buf + 2, &len, 2);
    memcpy(buf + 4, payload, len);
    if (len & 1)
        buf[4 + len] = 0;
    return (uint16_t)(4 + ((len + 1u) & ~1u));
}

/* A BUF_OP_HEAP_UPDATE payload (heapam.c's heap_update_op, then the
 * changed bytes); its length. */
static uint16_t update_payload(char *p, uint16_t old_off, uint16_t new_off,
                               xid_t xid, uint32_t cid, uint16_t new_flags,
                               uint16_t new_len, uint16_t prefix,
                               uint16_t hint, const char *middle,
                               uint16_t mlen)
{
    memcpy(p, &old_off, 2);
    memcpy(p + 2, &new_off, 2);
    memcpy(p + 4, &xid, 4);
    memcpy(p + 8, &cid, 4);
    memcpy(p + 12, &cid, 4);
    memcpy(p + 16, &new_flags, 2);
    memcpy(p + 18, &new_len, 2);
    memcpy(p + 20, &prefix, 2);
    memcpy(p + 22, &hint, 2);
    memcpy(p + 24, middle, mlen);
    return (uint16_t)(24 + mlen);
}

/*
 * Redo of a same-page update logged as one operation: the new version
 * rebuilt from the old one's bytes and the one byte that changed, added
 * beside it, the old one claimed with the heap-only link; payloads that
 * claim more than the versions hold, name no version, or do not land
 * where they say are refused (a damaged log: recovery stops there).
 */
static void test_update_op_redo(void **state)
{
    page_buf base, p;
    unsigned char item[40], want[40];
    char pay[64], ops[96];
    heap_tuple_header h;
    const heap_tuple_header *oh;
    const unsigned char *got;
    size_t len = 0;
    uint16_t n;
    kerr err;

    (void)state;
    heap_log_register();
    memset(&h, 0, sizeof(h));
    h.xmin = 50;
    h.next_block = 7;
    h.next_offset = 1;
    h.natts = 2;
    h.hoff = HEAP_TUPLE_HOFF;
    memcpy(item, &h, sizeof(h));
    memcpy(item + 24, "AAAAAAAABBBBBBBB", 16);
    heappage_init(base.b);
    assert_int_equal(heappage_add_item(base.b, item, 40), 1);
    /* What the update makes: the header redo foresees, one byte new. */
    h.xmin = 60;
    h.next_offset = 2;
    h.flags = HEAP_TUPLE_HEAP_ONLY;
    h.cid = 3;
    memcpy(want, &h, sizeof(h));
    memcpy(want + 24, "AAAAAAAACBBBBBBB", 16);

    p = base;
    n = put_op(ops, BUF_OP_HEAP_UPDATE, pay,
               update_payload(pay, 1, 2, 60, 3, HEAP_TUPLE_HEAP_ONLY, 40, 32,
                              1, "C", 1));
    assert_true(buf_log_run_ops(p.b, 7, ops, n, 1));
    got = heappage_get_item_const(p.b, 2, &len);
    assert_non_null(got);
    assert_int_equal(len, 40);
    assert_memory_equal(got, want, 40);
    oh = heappage_get_item_const(p.b, 1, &len);
    assert_int_equal(oh->xmax, 60);
    assert_int_equal(oh->cid, 3);
    assert_int_equal(oh->flags,
                     HEAP_TUPLE_XMAX_UPDATE | HEAP_TUPLE_HOT_UPDATED);
    assert_int_equal(oh->next_block, 7);
    assert_int_equal(oh->next_offset, 2);
    assert_true(((page_header *)p.b)->flags & PAGE_FLAG_PRUNABLE);
    assert_int_equal(((page_header *)p.b)->am_hint, 1);
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_OK);

#define REFUSED(payload_len)                                                   \
    do {                                                                       \
        p = base;                                                              \
        n = put_op(ops, BUF_OP_HEAP_UPDATE, pay, (payload_len));              \
        assert_false(buf_log_run_ops(p.b, 7, ops, n, 1));                      \
    } while (0)
    /* More shared bytes than the new version has; no old version; a new
     * line other than the one the add gives; a short payload; a hole on
     * a page that has none. */
    REFUSED(update_payload(pay, 1, 2, 60, 3, 0, 40, 41, 1, "C", 1));
    REFUSED(update_payload(pay, 5, 2, 60, 3, 0, 40, 32, 1, "C", 1));
    REFUSED(update_payload(pay, 1, 3, 60, 3, 0, 40, 32, 1, "C", 1));
    REFUSED(update_payload(pay, 1, 2, 60, 3, 0, 40, 32, 1, "C", 1) - 8);
    {
        uint16_t flagged = 40 | 0x8000, at = 8000;
        uint16_t l = update_payload(pay, 1, 2, 60, 3, 0, 40, 32, 1, "", 0);
        memcpy(pay + 18, &flagged, 2);
        memcpy(pay + 24, &at, 2);
        memcpy(pay + 26, "C", 1);
        REFUSED((uint16_t)(l + 3));
    }
#undef REFUSED
}

/* A BUF_OP_HEAP_INSERT payload (heapam.c's heap_insert_op, then the
 * data); its length. */
static uint16_t insert_payload(char *p, xid_t xmin, uint16_t off,
                               uint16_t hole, uint16_t hint, uint16_t prunable,
                               uint16_t natts, const char *data, uint16_t dlen)
{
    xid_t xmax = 0;
    uint32_t cid = 2;
    uint16_t flags = 0, hoff = HEAP_TUPLE_HOFF;

    memcpy(p, &xmin, 4);
    memcpy(p + 4, &xmax, 4);
    memcpy(p + 8, &cid, 4);
    memcpy(p + 12, &off, 2);
    memcpy(p + 14, &hole, 2);
    memcpy(p + 16, &hint, 2);
    memcpy(p + 18, &prunable, 2);
    memcpy(p + 20, &flags, 2);
    memcpy(p + 22, &natts, 2);
    memcpy(p + 24, &hoff, 2);
    memcpy(p + 26, data, dlen);
    return (uint16_t)(26 + dlen);
}

/*
 * Redo of an insert logged as one operation: the version rebuilt with its
 * own tid as next and added after the page's one item, the page's flag
 * and hint as logged; payloads that would land elsewhere, carry a bad
 * flag or are short, or name a hole on a page without any, are refused.
 */
static void test_insert_op_redo(void **state)
{
    page_buf base, p;
    unsigned char item[40];
    char pay[64], ops[96];
    const heap_tuple_header *h;
    size_t len = 0;
    uint16_t n;
    kerr err;

    (void)state;
    heap_log_register();
    make_item(item, 40, 1);
    heappage_init(base.b);
    assert_int_equal(heappage_add_item(base.b, item, 40), 1);

    p = base;
    n = put_op(ops, BUF_OP_HEAP_INSERT, pay,
               insert_payload(pay, 70, 2, 0, 1, 1, 2, "0123456789abcdef", 16));
    assert_true(buf_log_run_ops(p.b, 9, ops, n, 1));
    h = heappage_get_item_const(p.b, 2, &len);
    assert_non_null(h);
    assert_int_equal(len, 40);
    assert_int_equal(h->xmin, 70);
    assert_int_equal(h->xmax, 0);
    assert_int_equal(h->cid, 2);
    assert_int_equal(h->natts, 2);
    assert_int_equal(h->next_block, 9);
    assert_int_equal(h->next_offset, 2);
    assert_memory_equal((const char *)h + 24, "0123456789abcdef", 16);
    assert_true(((page_header *)p.b)->flags & PAGE_FLAG_PRUNABLE);
    assert_int_equal(((page_header *)p.b)->am_hint, 1);
    assert_int_equal(heappage_verify(p.b, 9, &err), KEEL_OK);

#define REFUSED(payload_len)                                                   \
    do {                                                                       \
        p = base;                                                              \
        n = put_op(ops, BUF_OP_HEAP_INSERT, pay, (payload_len));              \
        assert_false(buf_log_run_ops(p.b, 9, ops, n, 1));                      \
    } while (0)
    REFUSED(insert_payload(pay, 70, 3, 0, 1, 1, 2, "0123456789abcdef", 16));
    REFUSED(insert_payload(pay, 70, 2, 0, 1, 2, 2, "0123456789abcdef", 16));
    REFUSED(insert_payload(pay, 70, 2, 0, 1, 1, 2, "", 0) - 4);
    REFUSED(insert_payload(pay, 70, 2, 4000, 1, 1, 2, "0123456789abcdef", 16));
#undef REFUSED
}

/*
 * Redo of a claim logged as one operation: the version's xmax, command id
 * and flags, its next tid its own, the page's flag and hint; a claim on a
 * line with no version, or with a bad flag or length, is refused.
 */
static void test_claim_op_redo(void **state)
{
    page_buf base, p;
    unsigned char item[40];
    char pay[16], ops[32];
    const heap_tuple_header *h;
    xid_t xmax = 80;
    uint32_t cid = 4;
    uint16_t w[4] = {1, HEAP_TUPLE_XMAX_UPDATE, 1, 1}, n;
    size_t len;

    (void)state;
    heap_log_register();
    make_item(item, 40, 1);
    heappage_init(base.b);
    assert_int_equal(heappage_add_item(base.b, item, 40), 1);
    memcpy(pay, &xmax, 4);
    memcpy(pay + 4, &cid, 4);
    memcpy(pay + 8, w, 8);
    p = base;
    n = put_op(ops, BUF_OP_HEAP_CLAIM, pay, 16);
    assert_true(buf_log_run_ops(p.b, 5, ops, n, 1));
    h = heappage_get_item_const(p.b, 1, &len);
    assert_int_equal(h->xmax, 80);
    assert_int_equal(h->cid, 4);
    assert_int_equal(h->flags, HEAP_TUPLE_XMAX_UPDATE);
    assert_int_equal(h->next_block, 5);
    assert_int_equal(h->next_offset, 1);
    assert_true(((page_header *)p.b)->flags & PAGE_FLAG_PRUNABLE);
    assert_int_equal(((page_header *)p.b)->am_hint, 1);

    w[0] = 2; /* no version there */
    memcpy(pay + 8, w, 8);
    p = base;
    n = put_op(ops, BUF_OP_HEAP_CLAIM, pay, 16);
    assert_false(buf_log_run_ops(p.b, 5, ops, n, 1));
    w[0] = 1;
    w[3] = 7; /* not a flag */
    memcpy(pay + 8, w, 8);
    n = put_op(ops, BUF_OP_HEAP_CLAIM, pay, 16);
    assert_false(buf_log_run_ops(p.b, 5, ops, n, 1));
    w[3] = 1;
    memcpy(pay + 8, w, 8);
    n = put_op(ops, BUF_OP_HEAP_CLAIM, pay, 14);
    assert_false(buf_log_run_ops(p.b, 5, ops, n, 1));
}

/*
 * BUF_OP_HEAP_COMPACT: redo compacts the page as it was and gets the
 * page heappage_compact() made, checked against the upper the record
 * names; a wrong upper, or a page that is not a heap page, fails.
 */
static void test_compact_op_redo(void **state)
{
    page_buf base, want, p;
    unsigned char item[200];
    uint16_t victims[2] = {2, 4}, upper, n;
    char ops[16];

    (void)state;
    heap_log_register();
    heappage_init(base.b);
    for (uint8_t i = 1; i <= 5; i++) {
        make_item(item, 200, i);
        assert_int_equal(heappage_add_item(base.b, item, 200), i);
    }
    (void)heappage_remove_items(base.b, victims, 2, NULL, 0);
    assert_true(((page_header *)base.b)->flags & PAGE_FLAG_HAS_HOLES);
    want = base;
    assert_true(heappage_compact(want.b));
    upper = ((page_header *)want.b)->upper;
    assert_true(upper > ((page_header *)base.b)->upper);

    p = base;
    n = put_op(ops, BUF_OP_HEAP_COMPACT, &upper, 2);
    assert_true(buf_log_run_ops(p.b, 5, ops, n, 1));
    assert_memory_equal(p.b, want.b, BLOCK_SIZE);
    for (uint8_t i = 1; i <= 5; i++)
        if (i != 2 && i != 4)
            assert_true(item_is(p.b, i, 200, i));

    upper = (uint16_t)(upper - 8); /* not what the compaction leaves */
    p = base;
    n = put_op(ops, BUF_OP_HEAP_COMPACT, &upper, 2);
    assert_false(buf_log_run_ops(p.b, 5, ops, n, 1));
    upper = ((page_header *)want.b)->upper;
    p = base;
    ((page_header *)p.b)->special = BLOCK_SIZE - 16; /* not a heap page */
    n = put_op(ops, BUF_OP_HEAP_COMPACT, &upper, 2);
    assert_false(buf_log_run_ops(p.b, 5, ops, n, 1));
    p = base;
    n = put_op(ops, BUF_OP_HEAP_COMPACT, &upper, 1);
    assert_false(buf_log_run_ops(p.b, 5, ops, n, 1));
}

static void test_page_verify_catches_damage(void **state)
{
    (void)state;
    page_buf good, p;
    unsigned char item[64];
    heappage_lp *lps;
    page_header *h;
    heap_tuple_header th;
    kerr err;

    heappage_init(good.b);
    for (uint8_t i = 1; i <= 3; i++) {
        make_item(item, 40, i);
        assert_int_equal(heappage_add_item(good.b, item, 40), i);
    }
    assert_int_equal(heappage_verify(good.b, 7, &err), KEEL_OK);

#define DAMAGED(what)                                                          \
    do {                                                                       \
        kerr_clear(&err);                                                      \
        assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_ECORRUPT);        \
        assert_non_null(strstr(err.msg, "block 7"));                           \
        (void)(what);                                                          \
    } while (0)

    /* Overlapping items: item 2 pointed into item 1's second half, which
     * holds a valid tuple header, so only the overlap is wrong. */
    heappage_init(p.b);
    make_item(item, 64, 9);
    memcpy(item + 32, item, sizeof(heap_tuple_header));
    assert_int_equal(heappage_add_item(p.b, item, 64), 1);
    make_item(item, 32, 10);
    assert_int_equal(heappage_add_item(p.b, item, 32), 2);
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_OK);
    lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
    lps[1] =
        heappage_lp_make(heappage_lp_off(lps[0]) + 32, HEAPPAGE_LP_NORMAL, 32);
    DAMAGED("overlap");
    assert_non_null(strstr(err.msg, "overlap"));

    /* An item beyond the page's end, or below upper. */
    p = good;
    lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
    lps[0] = heappage_lp_make(BLOCK_SIZE - 16, HEAPPAGE_LP_NORMAL, 40);
    DAMAGED("past end");
    assert_non_null(strstr(err.msg, "item 1"));
    p = good;
    lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
    lps[2] = heappage_lp_make(((page_header *)p.b)->upper - 48,
                              HEAPPAGE_LP_NORMAL, 40);
    DAMAGED("below upper");

    /* A misaligned item; a dead pointer with storage. */
    p = good;
    lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
    lps[0] =
        heappage_lp_make(heappage_lp_off(lps[0]) + 4, HEAPPAGE_LP_NORMAL, 36);
    DAMAGED("misaligned");
    p = good;
    lps = (heappage_lp *)(p.b + PAGE_HEADER_SIZE);
    lps[0] = heappage_lp_make(heappage_lp_off(lps[0]), HEAPPAGE_LP_DEAD, 40);
    DAMAGED("dead with storage");

    /* Bad header offsets. */
    p = good;
    h = (page_header *)p.b;
    h->lower = (uint16_t)(h->lower + 2);
    DAMAGED("lower");
    p = good;
    h = (page_header *)p.b;
    h->special = BLOCK_SIZE - 16;
    DAMAGED("special");

    /* Bad tuple headers: data offset, flags, xids. */
    p = good;
    memcpy(&th, heappage_get_item(p.b, 2, &(size_t){0}), sizeof(th));
    th.hoff = 64;
    memcpy(heappage_get_item(p.b, 2, &(size_t){0}), &th, sizeof(th));
    DAMAGED("hoff");
    assert_non_null(strstr(err.msg, "item 2"));
    p = good;
    th.hoff = HEAP_TUPLE_HOFF;
    th.flags = 0x80;
    memcpy(heappage_get_item(p.b, 2, &(size_t){0}), &th, sizeof(th));
    DAMAGED("flags");
    p = good;
    th.flags = 0;
    th.xmin = 0;
    memcpy(heappage_get_item(p.b, 2, &(size_t){0}), &th, sizeof(th));
    DAMAGED("xmin");
    p = good;
    th.xmin = XID_FROZEN;
    th.flags = HEAP_TUPLE_XMAX_UPDATE;
    memcpy(heappage_get_item(p.b, 2, &(size_t){0}), &th, sizeof(th));
    DAMAGED("update without xmax");
    /* Any command id is a writer's own business; a combo id needs the
     * inserter to be the deleter. */
    p = good;
    th.flags = 0;
    th.xmin = 100;
    th.xmax = 0;
    th.cid = 12345;
    memcpy(heappage_get_item(p.b, 2, &(size_t){0}), &th, sizeof(th));
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_OK);
    th.cid = CID_COMBO | 3;
    th.xmax = 100;
    memcpy(heappage_get_item(p.b, 2, &(size_t){0}), &th, sizeof(th));
    assert_int_equal(heappage_verify(p.b, 7, &err), KEEL_OK);
    th.xmax = 101;
    memcpy(heappage_get_item(p.b, 2, &(size_t){0}), &th, sizeof(th));
    DAMAGED("combo id of two transactions");
    assert_non_null(strstr(err.msg, "combo"));
#undef DAMAGED
}

/* Sets line pointer offset of p, and p's header, through memcpy: the test
 * copies pages as whole unions right after changing them. */
static void lp_put(page_buf *p, uint16_t offset, heappage_lp lp)
{
    memcpy(p->b + PAGE_HEADER_SIZE + (size_t)(offset - 1) * HEAPPAGE_LP_SIZE,
           &lp, sizeof(lp));
}

static void header_put(page_buf *p, const page_header *h)
{
    memcpy(p->b, h, sizeof(*h));
}

/*
 * A damaged page (its checksum made right again, as a bug or a hand edit
 * leaves one) whose items overlap, lie outside it or are misaligned:
 * heappage_get_item() refuses a misaligned item as it does one outside the
 * page, and compaction, which would move items over one another, leaves
 * the page as it is (an insert that needs it finds no room; a delete
 * fails).
 */
static void test_page_damage_refused(void **state)
{
    (void)state;
    page_buf good, p, before;
    unsigned char item[64];
    page_header h;
    size_t len;
    kerr err;

    heappage_init(good.b);
    for (uint8_t i = 1; i <= 3; i++) {
        make_item(item, 40, i);
        assert_int_equal(heappage_add_item(good.b, item, 40), i);
    }

    /* Item 2 four bytes further on: inside the page, but misaligned. */
    p = good;
    lp_put(&p, 2,
           heappage_lp_make(heappage_lp_off(heappage_get_lp(good.b, 2)) + 4,
                            HEAPPAGE_LP_NORMAL, 36));
    assert_null(heappage_get_item(p.b, 2, &len));
    assert_true(heappage_item_damaged(p.b, 2));
    assert_non_null(heappage_get_item(p.b, 1, &len));
    assert_false(heappage_item_damaged(p.b, 1));

    /* Item 2 over item 1, on a page with holes to close. */
    p = good;
    lp_put(&p, 2,
           heappage_lp_make(heappage_lp_off(heappage_get_lp(good.b, 1)),
                            HEAPPAGE_LP_NORMAL, 40));
    memcpy(&h, p.b, sizeof(h));
    h.flags |= PAGE_FLAG_HAS_HOLES;
    header_put(&p, &h);
    before = p;
    assert_false(heappage_compact(p.b));
    assert_memory_equal(p.b, before.b, BLOCK_SIZE);
    assert_int_equal(heappage_delete_item(p.b, 3, &err), KEEL_ECORRUPT);
    assert_memory_equal(p.b, before.b, BLOCK_SIZE);
    /* Free space only once compacted: not to be had. */
    h.upper = h.lower;
    header_put(&p, &h);
    before = p;
    make_item(item, 40, 4);
    assert_int_equal(heappage_add_item(p.b, item, 40), 0);
    assert_memory_equal(p.b, before.b, BLOCK_SIZE);

    /* An item running past the page's end is not moved either. */
    p = good;
    lp_put(&p, 1, heappage_lp_make(BLOCK_SIZE - 16, HEAPPAGE_LP_NORMAL, 40));
    before = p;
    assert_false(heappage_compact(p.b));
    assert_memory_equal(p.b, before.b, BLOCK_SIZE);

    /* The undamaged page still compacts. */
    p = good;
    assert_int_equal(heappage_delete_item(p.b, 2, &err), KEEL_OK);
    assert_true(item_is(p.b, 1, 40, 1));
    assert_true(item_is(p.b, 3, 40, 3));
}

/* ------------------------------------------------------------------ */
/* Insert and fetch                                                   */
/* ------------------------------------------------------------------ */

static void test_roundtrip_every_type(void **state)
{
    fixture *f = *state;
    static const keel_type types[] = {KEEL_INT2, KEEL_INT4, KEEL_INT8,
                                      KEEL_OID,  KEEL_BOOL, KEEL_FLOAT8,
                                      KEEL_NAME, KEEL_CHAR, KEEL_TEXT};
    tuple_desc *d = tupdesc_alloc(9);
    heap_rel rel;
    heap_row row;
    static char longtext[7000];
    keel_value rows[4][9];
    tid tids[4];
    tx r;

    pool_open(f, 64);
    assert_non_null(d);
    for (uint16_t i = 0; i < 9; i++)
        OK(f, tupdesc_set(d, i, types[i], 10, false, &f->err));
    heap_rel_init(&rel, REL, d);
    for (size_t i = 0; i < sizeof(longtext); i++)
        longtext[i] = (char)(' ' + i % 90);

    memset(rows, 0, sizeof(rows));
    /* Row 0: extremes. */
    rows[0][0].v.i2 = INT16_MIN;
    rows[0][1].v.i4 = INT32_MAX;
    rows[0][2].v.i8 = INT64_MIN;
    rows[0][3].v.oid = UINT32_MAX;
    rows[0][4].v.b = true;
    rows[0][5].v.f8 = -1.25e300;
    rows[0][6].v.s.ptr = "pg_catalog";
    rows[0][6].v.s.len = 10;
    rows[0][7].v.s.ptr = "abc";
    rows[0][7].v.s.len = 3;
    rows[0][8].v.s.ptr = "";
    rows[0][8].v.s.len = 0;
    /* Row 1: every column null. */
    for (int c = 0; c < 9; c++)
        rows[1][c].isnull = true;
    /* Row 2: some null, long text. */
    rows[2][0].isnull = true;
    rows[2][1].v.i4 = -1;
    rows[2][2].isnull = true;
    rows[2][3].v.oid = 16384;
    rows[2][4].v.b = false;
    rows[2][5].isnull = true;
    rows[2][6].v.s.ptr = "x";
    rows[2][6].v.s.len = 1;
    rows[2][7].v.s.ptr = "0123456789";
    rows[2][7].v.s.len = 10;
    rows[2][8].v.s.ptr = longtext;
    rows[2][8].v.s.len = sizeof(longtext);
    /* Row 3: a text as long as a page allows, alone on a new page. */
    rows[3][0].v.i2 = 3;
    rows[3][1].isnull = true;
    rows[3][2].isnull = true;
    rows[3][3].isnull = true;
    rows[3][4].isnull = true;
    rows[3][5].isnull = true;
    rows[3][6].isnull = true;
    rows[3][7].isnull = true;
    {
        /* header 24, bitmap 2, int2 at 2..3, text length at 4, bytes. */
        size_t max = HEAP_MAX_TUPLE_SIZE - HEAP_TUPLE_HOFF - 8;
        char *big = malloc(max);
        size_t size;
        assert_non_null(big);
        memset(big, 'q', max);
        rows[3][8].v.s.ptr = big;
        rows[3][8].v.s.len = (uint32_t)max;
        OK(f, heap_row_size(&rel, rows[3], &size, &f->err));
        assert_int_equal(size, HEAP_MAX_TUPLE_SIZE);
    }

    for (int i = 0; i < 4; i++)
        OK(f, heap_insert(&rel, f->s, i == 0 ? XID_FROZEN : 5, CID_FIRST,
                          rows[i], &tids[i]));
    txm_set(f->tm, 5, XID_STATUS_COMMITTED);
    f->tm->next = 6;
    assert_int_equal(tids[3].offset, 1); /* the maximum needs its own page */
    assert_true(tids[3].block > tids[2].block);

    tx_reader(f->tm, &r);
    OK(f, heap_row_init(&row, &rel, &f->err));
    for (int i = 0; i < 4; i++) {
        OK(f, heap_fetch(&rel, f->s, &r.vis, tids[i], &row));
        assert_int_equal(buf_session_pinned(f->s), 0);
        assert_int_equal(tid_compare(row.tid, tids[i]), 0);
        assert_int_equal(row.xmin, i == 0 ? XID_FROZEN : 5);
        assert_int_equal(row.xmax, 0);
        for (uint16_t c = 0; c < 9; c++) {
            const keel_value *in = &rows[i][c], *out = &row.values[c];
            assert_int_equal(in->isnull, out->isnull);
            if (in->isnull)
                continue;
            if (types[c] == KEEL_CHAR) {
                /* blank-padded to 10; equal by value_compare */
                assert_int_equal(out->v.s.len, 10);
                assert_memory_equal(out->v.s.ptr, in->v.s.ptr, in->v.s.len);
            }
            if (value_compare(&d->attrs[c], in, out) != 0)
                fail_msg("row %d column %u differs", i, c + 1);
        }
    }
    /* Values live in the row: they survive eviction of the page. */
    OK(f, heap_fetch(&rel, f->s, &r.vis, tids[2], &row));
    pool_close(f);
    pool_open(f, 64);
    assert_int_equal(row.values[8].v.s.len, sizeof(longtext));
    assert_memory_equal(row.values[8].v.s.ptr, longtext, sizeof(longtext));

    heap_row_free(&row);
    heap_row_free(&row); /* twice is fine */
    free((void *)rows[3][8].v.s.ptr);
    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    tupdesc_free(d);
    assert_quiet(f);
}

/* Many rows across many pages: pages are filled before the relation grows,
 * the hint follows the last page, and everything reads back. */
static void test_many_rows_across_pages(void **state)
{
    fixture *f = *state;
    enum { N = 6000 };
    tid *tids = calloc(N, sizeof(tid));
    int32_t *ids = calloc(N, sizeof(int32_t));
    char payload[128];
    heap_row row;
    tx r;

    assert_non_null(tids);
    assert_non_null(ids);
    pool_open(f, 128); /* smaller than the relation: pages get evicted */
    assert_int_equal(atomic_load(&f->rel.hint), HEAP_NO_BLOCK);
    for (int i = 0; i < N; i++) {
        snprintf(
            payload, sizeof(payload), "row %d %.*s", i, i % 90,
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghij"
            "klmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
        tids[i] = ins(f, XID_FROZEN, i, (int64_t)i * 3, payload);
        assert_int_equal(atomic_load(&f->rel.hint), tids[i].block);
        if (i > 0) {
            assert_true(tid_compare(tids[i - 1], tids[i]) < 0);
            /* A new page only when the row did not fit on the last one. */
            if (tids[i].block != tids[i - 1].block) {
                page_buf p;
                size_t size;
                keel_value v[3];
                assert_int_equal(tids[i].block, tids[i - 1].block + 1);
                assert_int_equal(tids[i].offset, 1);
                read_page(f, tids[i - 1].block, &p);
                mkrow(v, i, (int64_t)i * 3, payload);
                OK(f, heap_row_size(&f->rel, v, &size, &f->err));
                assert_false(heappage_fits(p.b, size));
            } else {
                assert_int_equal(tids[i].offset, tids[i - 1].offset + 1);
            }
        }
    }
    assert_int_equal(nblocks(f), tids[N - 1].block + 1);
    assert_true(nblocks(f) > 50);

    reader_vis(f, &r);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    for (int i = 0; i < N; i += 7) {
        OK(f, heap_fetch(&f->rel, f->s, &r.vis, tids[i], &row));
        assert_int_equal(row.values[0].v.i4, i);
        assert_true(row.values[1].v.i8 == (int64_t)i * 3);
        snprintf(payload, sizeof(payload), "row %d ", i);
        assert_memory_equal(row.values[2].v.s.ptr, payload, strlen(payload));
    }
    assert_int_equal(scan_ids(f, &r.vis, ids, NULL, N), N);
    for (int i = 0; i < N; i++)
        assert_int_equal(ids[i], i);

    /* A stale hint (none, or past the end) still finds the last page. */
    {
        blocknum_t before = nblocks(f);
        tid t;
        atomic_store(&f->rel.hint, HEAP_NO_BLOCK);
        t = ins(f, XID_FROZEN, N, 0, "x");
        assert_int_equal(t.block, before - 1);
        atomic_store(&f->rel.hint, before + 100);
        t = ins(f, XID_FROZEN, N + 1, 0, "y");
        assert_int_equal(t.block, before - 1);
        assert_int_equal(nblocks(f), before);
        /* A hint to an early, full block moves on to the last one. */
        atomic_store(&f->rel.hint, 0);
        memset(payload, 'w', sizeof(payload) - 1);
        payload[sizeof(payload) - 1] = '\0';
        t = ins(f, XID_FROZEN, N + 2, 0, payload);
        {
            page_buf p0;
            size_t size;
            keel_value v[3];
            read_page(f, 0, &p0);
            mkrow(v, N + 2, 0, payload);
            OK(f, heap_row_size(&f->rel, v, &size, &f->err));
            assert_false(heappage_fits(p0.b, size));
        }
        assert_int_equal(t.block, before - 1);

        /* A hint to an early block with room for the row is followed. */
        {
            keel_value v[3];
            size_t size;
            blocknum_t b;
            mkrow(v, N + 3, 0, NULL);
            OK(f, heap_row_size(&f->rel, v, &size, &f->err));
            for (b = 0; b + 1 < before; b++) {
                page_buf pb;
                read_page(f, b, &pb);
                if (heappage_fits(pb.b, size))
                    break;
            }
            assert_true(b + 1 < before); /* some early page has a gap */
            atomic_store(&f->rel.hint, b);
            OK(f, heap_insert(&f->rel, f->s, XID_FROZEN, CID_FIRST, v, &t));
            assert_int_equal(t.block, b);
            assert_int_equal(atomic_load(&f->rel.hint), b);
        }
    }

    /* No such tid: ENOENT, nothing pinned. */
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis, TID_INVALID, &row),
                     KEEL_ENOENT);
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis,
                                (tid){.block = 0, .offset = 999}, &row),
                     KEEL_ENOENT);
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis,
                                (tid){.block = 100000, .offset = 1}, &row),
                     KEEL_ENOENT);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "past the end"));

    heap_row_free(&row);
    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    free(tids);
    free(ids);
    assert_quiet(f);
}

/* A block left all zeroes (a crash during extension) is used as an empty
 * page. */
static void test_new_page_is_used(void **state)
{
    fixture *f = *state;
    smgr_rel *sr;
    page_buf zero;
    blocknum_t blk;
    tid t;
    tx r;

    memset(zero.b, 0, BLOCK_SIZE);
    assert_int_equal(smgr_rel_open(f->sm, REL, &sr, &f->err), KEEL_OK);
    assert_int_equal(smgr_extend(sr, zero.b, &blk, &f->err), KEEL_OK);
    assert_int_equal(blk, 0);
    pool_open(f, 32);
    reader_vis(f, &r);
    assert_int_equal(scan_ids(f, &r.vis, NULL, NULL, 0), 0);
    t = ins(f, XID_FROZEN, 1, 1, "one");
    assert_int_equal(t.block, 0);
    assert_int_equal(t.offset, 1);
    assert_int_equal(nblocks(f), 1);
    assert_int_equal(scan_ids(f, &r.vis, NULL, NULL, 0), 1);
    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    assert_quiet(f);
}

/* ------------------------------------------------------------------ */
/* Visibility                                                         */
/* ------------------------------------------------------------------ */

/* What a transaction is to the reader's snapshot. */
typedef enum cat {
    CAT_NONE,             /* (deleter only) not deleted */
    CAT_FROZEN,           /* (inserter only) */
    CAT_COMMITTED_BEFORE, /* committed before the snapshot */
    CAT_COMMITTED_AFTER,  /* running at the snapshot, committed since */
    CAT_IN_PROGRESS,      /* running at the snapshot and now */
    CAT_ABORTED,          /* aborted (before the snapshot) */
    CAT_ABORTED_AFTER,    /* running at the snapshot, aborted since */
    CAT_OWN,              /* the reader itself */
    CAT_FUTURE,           /* started after the snapshot, committed */
    CAT_COUNT
} cat;

static const char *cat_name[CAT_COUNT] = {
    "none",    "frozen",  "committed-before", "committed-after",
    "running", "aborted", "aborted-after",    "own",
    "future",
};

static bool cat_inserted(cat c)
{
    return c == CAT_FROZEN || c == CAT_COMMITTED_BEFORE || c == CAT_OWN;
}

static bool cat_deleted(cat c)
{
    return c == CAT_COMMITTED_BEFORE || c == CAT_OWN;
}

/* What heap_tuple_fate() says of a version inserted by ic and deleted by
 * dc (two transactions, unless both are the reader's own). */
static heap_fate cat_fate(cat ic, cat dc)
{
    if (ic == CAT_ABORTED || ic == CAT_ABORTED_AFTER ||
        dc == CAT_COMMITTED_BEFORE || dc == CAT_COMMITTED_AFTER ||
        dc == CAT_FUTURE)
        return HEAP_DEAD;
    return dc == CAT_OWN ? HEAP_GONE : HEAP_LIVE;
}

static void test_visibility_matrix(void **state)
{
    fixture *f = *state;
    enum { MAXROWS = CAT_COUNT * CAT_COUNT };
    const xid_t own = 160, snap_xmax = 1000;
    xid_t ins_xid[MAXROWS], del_xid[MAXROWS];
    cat ins_cat[MAXROWS], del_cat[MAXROWS];
    tid tids[MAXROWS];
    bool expect[MAXROWS];
    xid_t xip[2 * MAXROWS];
    uint32_t nrows = 0, nxip = 0, nexpect = 0;
    xid_t next_before = 200, next_after = 500, next_future = snap_xmax + 10;
    snapshot snap;
    visibility vis = {
        .snap = &snap, .status = txm_status_fn, .status_ctx = f->tm};
    heap_fate fate;
    heap_row row;

    pool_open(f, 64);
    OK(f, heap_row_init(&row, &f->rel, &f->err));

    /* Build every (inserter, deleter) pair while everyone looks
     * committed, then give each xid its real status. */
    for (int ic = CAT_FROZEN; ic < CAT_COUNT; ic++) {
        for (int dc = CAT_NONE; dc < CAT_COUNT; dc++) {
            xid_t xids[2] = {0, 0};
            cat cats[2] = {(cat)ic, (cat)dc};
            if (dc == CAT_FROZEN)
                continue;
            for (int k = 0; k < 2; k++) {
                switch (cats[k]) {
                case CAT_NONE:
                    xids[k] = XID_INVALID;
                    break;
                case CAT_FROZEN:
                    xids[k] = XID_FROZEN;
                    break;
                case CAT_OWN:
                    xids[k] = own;
                    break;
                case CAT_COMMITTED_BEFORE:
                case CAT_ABORTED:
                    xids[k] = next_before++;
                    break;
                case CAT_COMMITTED_AFTER:
                case CAT_IN_PROGRESS:
                case CAT_ABORTED_AFTER:
                    xids[k] = next_after++;
                    xip[nxip++] = xids[k];
                    break;
                case CAT_FUTURE:
                    xids[k] = next_future++;
                    break;
                case CAT_COUNT:
                    break;
                }
                if (xids[k] != XID_INVALID && xids[k] != XID_FROZEN)
                    txm_set(f->tm, xids[k], XID_STATUS_COMMITTED);
            }
            ins_cat[nrows] = (cat)ic;
            del_cat[nrows] = (cat)dc;
            ins_xid[nrows] = xids[0];
            del_xid[nrows] = xids[1];
            tids[nrows] =
                ins(f, xids[0], (int32_t)nrows, ic * 100 + dc, cat_name[ic]);
            if (xids[1] != XID_INVALID) {
                /* The deleter sees everything. */
                snapshot ds = {.xmin = 1u << 30,
                               .xmax = 1u << 30,
                               .own_xid = xids[1],
                               .nxip = 0,
                               .xip = NULL};
                visibility dv = {
                    .snap = &ds, .status = txm_status_fn, .status_ctx = f->tm};
                OK(f, heap_delete(&f->rel, f->s, &dv, xids[1], tids[nrows]));
            }
            expect[nrows] = cat_inserted((cat)ic) &&
                            (dc == CAT_NONE || !cat_deleted((cat)dc));
            nexpect += expect[nrows];
            nrows++;
        }
    }
    for (uint32_t i = 0; i < nrows; i++) {
        for (int k = 0; k < 2; k++) {
            xid_t x = k == 0 ? ins_xid[i] : del_xid[i];
            cat c = k == 0 ? ins_cat[i] : del_cat[i];
            if (x == XID_INVALID || x == XID_FROZEN)
                continue;
            txm_set(f->tm, x,
                    c == CAT_IN_PROGRESS || c == CAT_OWN
                        ? XID_STATUS_IN_PROGRESS
                    : c == CAT_ABORTED || c == CAT_ABORTED_AFTER
                        ? XID_STATUS_ABORTED
                        : XID_STATUS_COMMITTED);
        }
    }
    /* xip must ascend: it was filled in ascending order. */
    snap.xmin = 150;
    snap.xmax = snap_xmax;
    snap.own_xid = own;
    snap.nxip = nxip;
    snap.xip = xip;

    for (uint32_t i = 0; i < nrows; i++) {
        int rc = heap_fetch(&f->rel, f->s, &vis, tids[i], &row);
        bool vis_direct;
        if (rc != (expect[i] ? KEEL_OK : KEEL_ENOENT))
            fail_msg("inserter %s, deleter %s: fetch gave %s, expected %s",
                     cat_name[ins_cat[i]], cat_name[del_cat[i]],
                     keel_status_str(rc), expect[i] ? "visible" : "invisible");
        if (rc == KEEL_OK)
            assert_row(&row, (int32_t)i, ins_cat[i] * 100 + del_cat[i],
                       cat_name[ins_cat[i]]);
        if (rc == KEEL_ENOENT) {
            char want[96];
            snprintf(want, sizeof(want),
                     "relation %u: row (%u,%u) is not visible to this "
                     "snapshot",
                     f->rel.relnumber, tids[i].block, tids[i].offset);
            assert_string_equal(buf_session_error(f->s)->msg, want);
        }
        OK(f, heap_tuple_visible(&vis, ins_xid[i], del_xid[i], &vis_direct,
                                 &f->err));
        assert_int_equal(vis_direct, expect[i]);
        OK(f, heap_fetch_fate(&f->rel, f->s, &vis, tids[i], &fate));
        if (fate != cat_fate(ins_cat[i], del_cat[i]))
            fail_msg("inserter %s, deleter %s: fate %d, expected %d",
                     cat_name[ins_cat[i]], cat_name[del_cat[i]], (int)fate,
                     (int)cat_fate(ins_cat[i], del_cat[i]));
    }
    /* One running transaction that inserted and deleted a version: gone
     * while it runs, dead once it ends either way.  No transaction's id
     * (below the first normal one, not frozen): never live. */
    txm_set(f->tm, 900, XID_STATUS_IN_PROGRESS);
    OK(f, heap_tuple_fate(&vis, 900, 900, &fate, &f->err));
    assert_int_equal(fate, HEAP_GONE);
    txm_set(f->tm, 900, XID_STATUS_ABORTED);
    OK(f, heap_tuple_fate(&vis, 900, 900, &fate, &f->err));
    assert_int_equal(fate, HEAP_DEAD);
    txm_set(f->tm, 900, XID_STATUS_COMMITTED);
    OK(f, heap_tuple_fate(&vis, 900, 900, &fate, &f->err));
    assert_int_equal(fate, HEAP_DEAD);
    OK(f, heap_tuple_fate(&vis, 1, XID_INVALID, &fate, &f->err));
    assert_int_equal(fate, HEAP_GONE);
    /* A tid past the end names no row. */
    assert_int_equal(
        heap_fetch_fate(&f->rel, f->s, &vis, (tid){nblocks(f) + 5, 1}, &fate),
        KEEL_ENOENT);
    /* The scan returns exactly the expected rows. */
    {
        int32_t ids[MAXROWS];
        uint32_t n = scan_ids(f, &vis, ids, NULL, MAXROWS);
        assert_int_equal(n, nexpect);
        for (uint32_t i = 0, j = 0; i < nrows; i++)
            if (expect[i])
                assert_int_equal(ids[j++], (int32_t)i);
    }
    /* A reader without an xid sees no "own" rows. */
    snap.own_xid = XID_INVALID;
    for (uint32_t i = 0; i < nrows; i++) {
        bool v;
        OK(f, heap_tuple_visible(&vis, ins_xid[i], del_xid[i], &v, &f->err));
        if (ins_cat[i] == CAT_OWN)
            assert_false(v);
    }
    snap.own_xid = own;

    /* Oracle failures come back from fetch and scan, leaving nothing
     * pinned, and a scan can be resumed after one. */
    {
        heap_scan *sc;
        bool found;
        uint32_t n = 0;
        int failures = 0;
        uint32_t i0 = 0;
        while (ins_cat[i0] != CAT_COMMITTED_BEFORE || del_cat[i0] != CAT_NONE)
            i0++;
        atomic_store(&f->tm->fail_xid, ins_xid[i0]);
        assert_int_equal(heap_fetch(&f->rel, f->s, &vis, tids[i0], &row),
                         KEEL_EIO);
        assert_non_null(strstr(buf_session_error(f->s)->msg, "fake"));
        assert_int_equal(heap_fetch_fate(&f->rel, f->s, &vis, tids[i0], &fate),
                         KEEL_EIO);
        assert_non_null(strstr(buf_session_error(f->s)->msg, "fake"));
        assert_int_equal(buf_session_pinned(f->s), 0);
        OK(f, heap_scan_begin(&f->rel, f->s, &vis, &sc));
        for (;;) {
            int rc = heap_scan_next(sc, &row, &found);
            if (rc == KEEL_EIO) {
                failures++;
                assert_true(failures < 3);
                atomic_store(&f->tm->fail_xid, 0);
                continue;
            }
            assert_int_equal(rc, KEEL_OK);
            if (!found)
                break;
            n++;
        }
        heap_scan_end(sc);
        assert_int_equal(failures, 1);
        assert_int_equal(n, nexpect);
    }
    heap_row_free(&row);
    assert_quiet(f);
}

/* A transaction sees its own inserts and deletes; others do not until it
 * commits, and never if it aborts. */
static void test_own_changes(void **state)
{
    fixture *f = *state;
    tx a, b, c;
    tid t1, t2, t3;
    heap_row row;

    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &a);
    tx_begin(f->tm, &b);
    t1 = ins(f, a.xid, 1, 10, "a1");
    t2 = ins(f, a.xid, 2, 20, "a2");
    OK(f, heap_fetch(&f->rel, f->s, &a.vis, t1, &row));
    assert_row(&row, 1, 10, "a1");
    assert_int_equal(heap_fetch(&f->rel, f->s, &b.vis, t1, &row), KEEL_ENOENT);
    assert_int_equal(scan_ids(f, &a.vis, NULL, NULL, 0), 2);
    assert_int_equal(scan_ids(f, &b.vis, NULL, NULL, 0), 0);

    /* a deletes its own row, and updates the other. */
    OK(f, heap_delete(&f->rel, f->s, &a.vis, a.xid, t1));
    assert_int_equal(heap_fetch(&f->rel, f->s, &a.vis, t1, &row), KEEL_ENOENT);
    assert_int_equal(heap_delete(&f->rel, f->s, &a.vis, a.xid, t1),
                     KEEL_ENOENT);
    {
        keel_value v[3];
        mkrow(v, 2, 21, "a2'");
        OK(f, heap_update(&f->rel, f->s, &a.vis, a.xid, t2, v, &t3));
    }
    assert_int_equal(heap_fetch(&f->rel, f->s, &a.vis, t2, &row), KEEL_ENOENT);
    OK(f, heap_fetch(&f->rel, f->s, &a.vis, t3, &row));
    assert_row(&row, 2, 21, "a2'");
    assert_int_equal(scan_ids(f, &a.vis, NULL, NULL, 0), 1);
    /* b cannot touch a's uncommitted rows: they are not visible to it. */
    assert_int_equal(heap_delete(&f->rel, f->s, &b.vis, b.xid, t3),
                     KEEL_ENOENT);
    tx_end(f->tm, &a, XID_STATUS_COMMITTED);
    /* b's snapshot predates a's commit: still nothing. */
    assert_int_equal(scan_ids(f, &b.vis, NULL, NULL, 0), 0);
    tx_end(f->tm, &b, XID_STATUS_COMMITTED);
    tx_reader(f->tm, &c);
    assert_int_equal(scan_ids(f, &c.vis, NULL, NULL, 0), 1);
    OK(f, heap_fetch(&f->rel, f->s, &c.vis, t3, &row));
    assert_row(&row, 2, 21, "a2'");
    tx_end(f->tm, &c, XID_STATUS_COMMITTED);

    /* An aborted transaction's rows never appear. */
    tx_begin(f->tm, &a);
    ins(f, a.xid, 3, 30, "gone");
    tx_end(f->tm, &a, XID_STATUS_ABORTED);
    tx_reader(f->tm, &c);
    assert_int_equal(scan_ids(f, &c.vis, NULL, NULL, 0), 1);
    tx_end(f->tm, &c, XID_STATUS_COMMITTED);
    heap_row_free(&row);
    assert_quiet(f);
}

/*
 * Rows of a fixed-width table (the handle has a stride, and fetches guess
 * where tuples sit from it), some with nulls, so shorter, putting every
 * later tuple of their page somewhere else than guessed: heap_fetch_cols()
 * gives what heap_fetch() gives.
 */
static void fetch_cols_fixed(fixture *f, const visibility *vis, xid_t xid)
{
    const relnumber_t rel = 16391;
    tuple_desc *d = tupdesc_alloc(4);
    heap_row row, full;
    heap_rel r;
    tid t[300];
    kerr err;

    assert_non_null(d);
    for (uint16_t i = 0; i < 3; i++)
        assert_int_equal(tupdesc_set(d, i, KEEL_INT4, 0, false, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 3, KEEL_CHAR, 84, false, &err), KEEL_OK);
    heap_rel_init(&r, rel, d);
    assert_int_equal(r.stride, 24 + 96); /* pgbench_accounts: 120 */
    assert_int_equal(r.plain_cols, 3);
    assert_int_equal(smgr_create(f->sm, rel, NULL, &f->err), KEEL_OK);
    OK(f, heap_row_init(&row, &r, &f->err));
    OK(f, heap_row_init(&full, &r, &f->err));
    for (int i = 0; i < 300; i++) {
        keel_value v[4] = {{.v.i4 = i}, {.v.i4 = -i}, {.v.i4 = 7 * i}};
        v[1].isnull = i % 3 == 1;
        v[3].v.s.ptr = "filler";
        v[3].v.s.len = 6;
        OK(f, heap_insert(&r, f->s, xid, CID_FIRST, v, &t[i]));
    }
    for (int i = 0; i < 300; i++) {
        OK(f, heap_fetch(&r, f->s, vis, t[i], &full));
        OK(f, heap_fetch_cols(&r, f->s, vis, t[i], 4, &row));
        assert_int_equal(row.values[0].v.i4, i);
        assert_int_equal(row.values[1].isnull, i % 3 == 1);
        if (i % 3 != 1)
            assert_int_equal(row.values[1].v.i4, -i);
        assert_int_equal(row.values[2].v.i4, 7 * i);
        assert_int_equal(row.values[3].v.s.len, 84);
        assert_memory_equal(row.values[3].v.s.ptr, full.values[3].v.s.ptr, 84);
    }
    heap_row_free(&row);
    heap_row_free(&full);
    tupdesc_free(d);
}

/*
 * Command ids: a transaction that inserts rows in one command and then, in
 * the next, updates every row a sequential scan of its own returns
 * changes each once (the new versions, on the scan's later pages or on
 * pages not copied yet, are the scan's own command's and unseen); the
 * next command sees only the new versions.  The old versions, inserted
 * and deleted by the transaction in two commands, share one combo id.
 * An update taken back leaves the old version as its command left it.
 */
static void test_scan_updates_own_command(void **state)
{
    fixture *f = *state;
    cid_state cids;
    tx a, b;
    heap_scan *sc = NULL;
    heap_row row;
    heap_update_hold hold;
    keel_value v[3];
    bool found;
    tid nt;
    int n = 0, rows = 400;

    pool_open(f, 64);
    cid_state_init(&cids);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &a);
    a.vis.cids = &cids;
    for (int i = 1; i <= rows; i++) {
        tid t;
        mkrow(v, i, i, "row");
        OK(f, heap_insert(&f->rel, f->s, a.xid, cid_stamp(&cids), v, &t));
    }
    /* The inserting command does not see its rows; the next one does. */
    cids.reading = cids.current;
    assert_int_equal(scan_ids(f, &a.vis, NULL, NULL, 0), 0);
    OK(f, cid_next(&cids, &f->err));
    cids.reading = cids.current;
    assert_int_equal(scan_ids(f, &a.vis, NULL, NULL, 0), (uint32_t)rows);

    OK(f, heap_scan_begin(&f->rel, f->s, &a.vis, &sc));
    for (;;) {
        OK(f, heap_scan_next(sc, &row, &found));
        if (!found)
            break;
        assert_true(row.values[1].v.i8 <= rows); /* an old version */
        n++;
        mkrow(v, row.values[0].v.i4, row.values[1].v.i8 + 1000,
              "a longer payload, so that some versions move elsewhere");
        OK(f, heap_update(&f->rel, f->s, &a.vis, a.xid, row.tid, v, &nt));
        /* Met again by this command: changed already. */
        assert_int_equal(
            heap_update(&f->rel, f->s, &a.vis, a.xid, row.tid, v, &nt),
            KEEL_ENOENT);
    }
    heap_scan_end(sc);
    assert_int_equal(n, rows);
    assert_int_equal(cids.npairs, 1);
    assert_int_equal(cids.pairs[0].cmin, CID_FIRST);
    assert_int_equal(cids.pairs[0].cmax, CID_FIRST + 1);
    /* The command that updated still sees the old versions alone. */
    assert_int_equal(scan_ids(f, &a.vis, NULL, NULL, 0), (uint32_t)rows);
    OK(f, cid_next(&cids, &f->err));
    cids.reading = cids.current;
    OK(f, heap_scan_begin(&f->rel, f->s, &a.vis, &sc));
    n = 0;
    for (;;) {
        OK(f, heap_scan_next(sc, &row, &found));
        if (!found)
            break;
        assert_true(row.values[1].v.i8 > 1000);
        n++;
    }
    heap_scan_end(sc);
    assert_int_equal(n, rows);
    /* As a reader of every command, and by xids alone for others. */
    cids.reading = CID_ALL;
    assert_int_equal(scan_ids(f, &a.vis, NULL, NULL, 0), (uint32_t)rows);
    tx_begin(f->tm, &b);
    assert_int_equal(scan_ids(f, &b.vis, NULL, NULL, 0), 0);
    tx_end(f->tm, &b, XID_STATUS_ABORTED);

    /* An update taken back gives the old version its command id back:
     * inserted by command 2, it is seen by command 3 after the undo. */
    cids.reading = cids.current;
    mkrow(v, 9999, 1, "undo");
    {
        tid t;
        OK(f, heap_insert(&f->rel, f->s, a.xid, cid_stamp(&cids), v, &t));
        OK(f, cid_next(&cids, &f->err));
        cids.reading = cids.current;
        mkrow(v, 9999, 2, "undone");
        OK(f, heap_update_held(&f->rel, f->s, &a.vis, a.xid, t, v, false, &nt, &hold));
        heap_update_undo(f->s, a.xid, &hold);
        OK(f, cid_next(&cids, &f->err));
        cids.reading = cids.current;
        OK(f, heap_fetch(&f->rel, f->s, &a.vis, t, &row));
        assert_row(&row, 9999, 1, "undo");
        assert_int_equal(row.cid, 2); /* its cmin again, no combo id */
        assert_int_equal(heap_fetch(&f->rel, f->s, &a.vis, nt, &row),
                         KEEL_ENOENT);
    }
    tx_end(f->tm, &a, XID_STATUS_COMMITTED);
    heap_row_free(&row);
    cid_state_free(&cids);
}

/*
 * heap_fetch_cols(): the first columns of a visible row, the same as
 * heap_fetch() gives; string values owned by the row, not pointing into
 * the page; the rest of the row untouched; the same ENOENT cases; EINVAL
 * for a column count out of range.  And the handle's stride.
 */
static void test_fetch_cols(void **state)
{
    fixture *f = *state;
    tx a, b, c;
    tid t[40];
    heap_row row, full;
    char payload[64];

    /* The stride: fixed-width rows only. */
    assert_int_equal(f->rel.stride, 0); /* (int4, int8, text) */
    assert_int_equal(f->rel.plain_cols, 2);

    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    OK(f, heap_row_init(&full, &f->rel, &f->err));
    tx_begin(f->tm, &a);
    for (int i = 0; i < 40; i++) {
        snprintf(payload, sizeof(payload), "payload %d", i);
        t[i] = ins(f, a.xid, i, 1000 + i, i % 5 == 4 ? NULL : payload);
    }
    tx_end(f->tm, &a, XID_STATUS_COMMITTED);
    tx_begin(f->tm, &b);
    for (int i = 0; i < 40; i += 2)
        OK(f, heap_delete(&f->rel, f->s, &b.vis, b.xid, t[i]));
    tx_end(f->tm, &b, XID_STATUS_COMMITTED);
    tx_reader(f->tm, &c);
    for (int i = 0; i < 40; i++) {
        if (i % 2 == 0) {
            assert_int_equal(
                heap_fetch_cols(&f->rel, f->s, &c.vis, t[i], 3, &row),
                KEEL_ENOENT);
            continue;
        }
        OK(f, heap_fetch(&f->rel, f->s, &c.vis, t[i], &full));
        for (uint16_t n = 1; n <= 3; n++) {
            memset(row.values, 0x5A, 3 * sizeof(*row.values));
            OK(f, heap_fetch_cols(&f->rel, f->s, &c.vis, t[i], n, &row));
            assert_int_equal(tid_compare(row.tid, t[i]), 0);
            assert_int_equal(row.xmin, full.xmin);
            assert_int_equal(row.xmax, full.xmax);
            assert_int_equal(row.values[0].v.i4, i);
            if (n >= 2)
                assert_true(row.values[1].v.i8 == 1000 + i);
            else
                assert_int_equal(((unsigned char *)&row.values[1])[0], 0x5A);
        }
        snprintf(payload, sizeof(payload), "payload %d", i);
        assert_row(&row, i, 1000 + i, i % 5 == 4 ? NULL : payload);
        /* The string is the row's own: not a pointer into the page. */
        if (!row.values[2].isnull)
            assert_true((const char *)row.values[2].v.s.ptr >=
                            (const char *)row.data &&
                        (const char *)row.values[2].v.s.ptr <
                            (const char *)row.data + BLOCK_SIZE);
    }
    /* Not visible to an older snapshot, or to a running inserter's. */
    tx_begin(f->tm, &a);
    {
        tid tn = ins(f, a.xid, 99, 99, "new");
        assert_int_equal(heap_fetch_cols(&f->rel, f->s, &c.vis, tn, 1, &row),
                         KEEL_ENOENT);
        OK(f, heap_fetch_cols(&f->rel, f->s, &a.vis, tn, 3, &row));
        assert_row(&row, 99, 99, "new");
    }
    fetch_cols_fixed(f, &a.vis, a.xid);
    tx_end(f->tm, &a, XID_STATUS_ABORTED);
    /* No such row, block, or column count. */
    assert_int_equal(
        heap_fetch_cols(&f->rel, f->s, &c.vis, (tid){t[1].block, 999}, 1, &row),
        KEEL_ENOENT);
    assert_int_equal(
        heap_fetch_cols(&f->rel, f->s, &c.vis, (tid){5000, 1}, 1, &row),
        KEEL_ENOENT);
    assert_int_equal(
        heap_fetch_cols(&f->rel, f->s, &c.vis, TID_INVALID, 1, &row),
        KEEL_ENOENT);
    assert_int_equal(heap_fetch_cols(&f->rel, f->s, &c.vis, t[1], 0, &row),
                     KEEL_EINVAL);
    assert_int_equal(heap_fetch_cols(&f->rel, f->s, &c.vis, t[1], 4, &row),
                     KEEL_EINVAL);
    /* A line pointer that points past its page (damage) is reported, and
     * nothing is copied from beyond the page. */
    {
        int32_t id;
        heappage_lp *lps, saved;

        OK(f, buf_read(f->s, f->rel.relnumber, t[1].block, NULL, &id));
        buf_lock(f->s, id, LW_EXCLUSIVE);
        lps = (heappage_lp *)((char *)buf_session_page(f->s, id) +
                              PAGE_HEADER_SIZE);
        saved = lps[t[1].offset - 1];
        lps[t[1].offset - 1] =
            heappage_lp_make(BLOCK_SIZE - 16, HEAPPAGE_LP_NORMAL, 20000);
        assert_true(
            heappage_item_damaged(buf_session_page(f->s, id), t[1].offset));
        buf_unlock(f->s, id);
        assert_int_equal(heap_fetch_cols(&f->rel, f->s, &c.vis, t[1], 3, &row),
                         KEEL_ECORRUPT);
        assert_non_null(strstr(f->s->err.msg, "outside"));
        assert_int_equal(heap_fetch(&f->rel, f->s, &c.vis, t[1], &full),
                         KEEL_ECORRUPT);
        buf_lock(f->s, id, LW_EXCLUSIVE);
        lps[t[1].offset - 1] = saved;
        assert_false(
            heappage_item_damaged(buf_session_page(f->s, id), t[1].offset));
        buf_unlock(f->s, id);
        buf_release(f->s, id);
        OK(f, heap_fetch_cols(&f->rel, f->s, &c.vis, t[1], 3, &row));
    }
    tx_end(f->tm, &c, XID_STATUS_COMMITTED);
    heap_row_free(&row);
    heap_row_free(&full);
    assert_quiet(f);
}

/* ------------------------------------------------------------------ */
/* Update and write conflicts                                         */
/* ------------------------------------------------------------------ */

static void test_update_versions(void **state)
{
    fixture *f = *state;
    tx setup_tx, old_reader, u, new_reader;
    tid t, nt, far;
    heap_row row;
    keel_value v[3];
    heap_tuple_header h;

    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &setup_tx);
    t = ins(f, setup_tx.xid, 7, 1, "first");
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);

    tx_reader(f->tm, &old_reader);
    tx_begin(f->tm, &u);
    mkrow(v, 7, 2, "second");
    OK(f, heap_update(&f->rel, f->s, &u.vis, u.xid, t, v, &nt));
    assert_true(tid_valid(nt));
    assert_int_not_equal(tid_compare(t, nt), 0);
    assert_int_equal(nt.block, t.block); /* room on the same page */
    h = raw_header(f, t);
    assert_int_equal(h.xmax, u.xid);
    assert_true(h.flags & HEAP_TUPLE_XMAX_UPDATE);
    assert_int_equal(h.next_block, nt.block);
    assert_int_equal(h.next_offset, nt.offset);
    h = raw_header(f, nt);
    assert_int_equal(h.xmin, u.xid);
    assert_int_equal(h.xmax, 0);
    tx_end(f->tm, &u, XID_STATUS_COMMITTED);

    /* The old snapshot keeps seeing the old version only. */
    OK(f, heap_fetch(&f->rel, f->s, &old_reader.vis, t, &row));
    assert_row(&row, 7, 1, "first");
    assert_int_equal(row.xmax, u.xid);
    assert_int_equal(heap_fetch(&f->rel, f->s, &old_reader.vis, nt, &row),
                     KEEL_ENOENT);
    {
        tid tids[4];
        assert_int_equal(scan_ids(f, &old_reader.vis, NULL, tids, 4), 1);
        assert_int_equal(tid_compare(tids[0], t), 0);
    }
    /* A later snapshot sees only the new one. */
    tx_reader(f->tm, &new_reader);
    assert_int_equal(heap_fetch(&f->rel, f->s, &new_reader.vis, t, &row),
                     KEEL_ENOENT);
    OK(f, heap_fetch(&f->rel, f->s, &new_reader.vis, nt, &row));
    assert_row(&row, 7, 2, "second");
    {
        tid tids[4];
        assert_int_equal(scan_ids(f, &new_reader.vis, NULL, tids, 4), 1);
        assert_int_equal(tid_compare(tids[0], nt), 0);
    }
    tx_end(f->tm, &new_reader, XID_STATUS_COMMITTED);
    tx_end(f->tm, &old_reader, XID_STATUS_COMMITTED);

    /* Fill the page; an update that grows the row moves it to another. */
    tx_begin(f->tm, &setup_tx);
    while (ins(f, setup_tx.xid, 99, 0, "filler filler filler").block ==
           nt.block)
        ;
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    tx_begin(f->tm, &u);
    {
        char big[3000];
        memset(big, 'b', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        mkrow(v, 7, 3, big);
        OK(f, heap_update(&f->rel, f->s, &u.vis, u.xid, nt, v, &far));
        assert_int_not_equal(far.block, nt.block);
        h = raw_header(f, nt);
        assert_int_equal(h.xmax, u.xid);
        assert_int_equal(h.next_block, far.block);
        assert_int_equal(h.next_offset, far.offset);
        OK(f, heap_fetch(&f->rel, f->s, &u.vis, far, &row));
        assert_row(&row, 7, 3, big);
    }
    tx_end(f->tm, &u, XID_STATUS_COMMITTED);
    heap_row_free(&row);
    assert_quiet(f);
}

/* An update in a thread of its own (test_update_beside_busy_page()). */
typedef struct apart_update {
    fixture *f;
    tx *u;
    tid t, nt;
    const keel_value *v;
    int rc;
    char msg[KERR_MSG_MAX];
} apart_update;

static void *apart_main(void *arg)
{
    apart_update *a = arg;
    buf_session *s = NULL;
    kerr err;

    a->rc = buf_session_create(a->f->pool, &s, &err);
    if (a->rc != KEEL_OK) {
        snprintf(a->msg, sizeof(a->msg), "%s", err.msg);
        return NULL;
    }
    a->rc = heap_update(&a->f->rel, s, &a->u->vis, a->u->xid, a->t, a->v,
                        &a->nt);
    snprintf(a->msg, sizeof(a->msg), "%s", buf_session_error(s)->msg);
    buf_session_destroy(s);
    return NULL;
}

/*
 * An update whose old page is full and whose new version's page comes
 * before it: taken beside the old page's lock if it is free at once (one
 * log record), and if another session holds it, placed with the old page
 * unlocked, waiting for that page meanwhile instead of holding the old
 * one (no two sessions can then wait on each other).  Either way the old
 * version links to the new one, which reads back.
 */
static void test_update_beside_busy_page(void **state)
{
    fixture *f = *state;
    tx setup_tx, u;
    tid small, t1, t2;
    heap_tuple_header h;
    heap_row row;
    keel_value v[3];
    char big[3000], mid[700];
    apart_update a;
    pthread_t th;
    buf_session *ms = NULL;
    int32_t held;

    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    memset(big, 'g', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memset(mid, 'm', sizeof(mid) - 1);
    mid[sizeof(mid) - 1] = '\0';
    /* Block 0: two big rows and room for about 2,100 bytes more, two rows
     * of mid; the third big row begins block 1, which fillers then fill. */
    tx_begin(f->tm, &setup_tx);
    assert_int_equal(ins(f, setup_tx.xid, 1, 0, big).block, 0);
    assert_int_equal(ins(f, setup_tx.xid, 2, 0, big).block, 0);
    assert_int_equal(ins(f, setup_tx.xid, 3, 0, big).block, 1);
    small = ins(f, setup_tx.xid, 5, 0, "small");
    assert_int_equal(small.block, 1);
    t2 = ins(f, setup_tx.xid, 100, 0, "filler filler");
    assert_int_equal(t2.block, 1);
    for (int i = 1; ins(f, setup_tx.xid, 100 + i, 0, "filler filler").block ==
                    1;
         i++)
        ;
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    assert_int_equal(heap_updates_apart(&f->rel), 0);

    /* The page for the new version, block 0, busy: the update waits for
     * it with block 1 unlocked. */
    assert_int_equal(buf_session_create(f->pool, &ms, &f->err), KEEL_OK);
    assert_int_equal(buf_read(ms, REL, 0, NULL, &held), KEEL_OK);
    buf_lock(ms, held, LW_EXCLUSIVE);
    atomic_store_relaxed(&f->rel.hint, 0);
    tx_begin(f->tm, &u);
    mkrow(v, 5, 1, mid);
    a = (apart_update){.f = f, .u = &u, .t = small, .v = v, .rc = -1};
    assert_int_equal(pthread_create(&th, NULL, apart_main, &a), 0);
    for (int i = 0; i < 30000 && heap_updates_apart(&f->rel) == 0; i++)
        clock_sleep_us(1000);
    assert_int_equal(heap_updates_apart(&f->rel), 1);
    /* Block 1 is free while the update waits. */
    {
        int32_t other;
        assert_int_equal(buf_read(ms, REL, 1, NULL, &other), KEEL_OK);
        assert_true(buf_try_lock(ms, other, LW_EXCLUSIVE));
        buf_unlock(ms, other);
        buf_release(ms, other);
    }
    buf_unlock(ms, held);
    buf_release(ms, held);
    assert_int_equal(pthread_join(th, NULL), 0);
    if (a.rc != KEEL_OK)
        fail_msg("update: %s", a.msg);
    t1 = a.nt;
    assert_int_equal(t1.block, 0);
    h = raw_header(f, small);
    assert_int_equal(h.xmax, u.xid);
    assert_int_equal(h.next_block, t1.block);
    assert_int_equal(h.next_offset, t1.offset);
    OK(f, heap_fetch(&f->rel, f->s, &u.vis, t1, &row));
    assert_row(&row, 5, 1, mid);
    tx_end(f->tm, &u, XID_STATUS_COMMITTED);

    /* Free at once: taken beside the old page, nothing apart. */
    atomic_store_relaxed(&f->rel.hint, 0);
    tx_begin(f->tm, &u);
    mkrow(v, 100, 2, mid);
    OK(f, heap_update(&f->rel, f->s, &u.vis, u.xid, t2, v, &t1));
    assert_int_equal(t1.block, 0);
    assert_int_equal(heap_updates_apart(&f->rel), 1);
    h = raw_header(f, t2);
    assert_int_equal(h.next_block, 0);
    assert_int_equal(h.next_offset, t1.offset);
    OK(f, heap_fetch(&f->rel, f->s, &u.vis, t1, &row));
    assert_row(&row, 100, 2, mid);
    tx_end(f->tm, &u, XID_STATUS_COMMITTED);

    buf_session_destroy(ms);
    heap_row_free(&row);
    assert_quiet(f);
}

/*
 * An update taken back (heap_update_held(), heap_update_undo()), its new
 * version beside the old one and on another page: while held, both pages
 * stay pinned (an eviction is refused); after, the old version has no
 * deleter and is what every snapshot, the updater's own too, sees; the
 * new one is deleted by its inserter, seen by nobody; the updater can
 * update the row again, and so can others once it has ended.
 */
static void test_update_undo(void **state)
{
    fixture *f = *state;
    tx setup_tx, r0, u, w, late;
    tid t, nt, far;
    heap_update_hold hold;
    heap_tuple_header h;
    heap_row row;
    keel_value v[3];
    char big[3000];

    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &setup_tx);
    t = ins(f, setup_tx.xid, 7, 1, "first");
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    tx_reader(f->tm, &r0);

    /* Beside the old version. */
    tx_begin(f->tm, &u);
    mkrow(v, 7, 2, "second");
    OK(f, heap_update_held(&f->rel, f->s, &u.vis, u.xid, t, v, false, &nt, &hold));
    assert_int_equal(nt.block, t.block);
    assert_int_equal(hold.old_id, hold.new_id);
    assert_int_equal(buf_pin_count(f->s, hold.old_id), 2);
    assert_int_equal(buf_drop_rel(f->s, REL, 0), KEEL_EBUSY);
    heap_update_undo(f->s, u.xid, &hold);
    assert_int_equal(buf_session_pinned(f->s), 0);
    h = raw_header(f, t);
    assert_int_equal(h.xmax, XID_INVALID);
    assert_false(h.flags & HEAP_TUPLE_XMAX_UPDATE);
    assert_int_equal(h.next_block, t.block);
    assert_int_equal(h.next_offset, t.offset);
    h = raw_header(f, nt);
    assert_int_equal(h.xmin, u.xid);
    assert_int_equal(h.xmax, u.xid);
    OK(f, heap_fetch(&f->rel, f->s, &u.vis, t, &row));
    assert_row(&row, 7, 1, "first");
    assert_int_equal(heap_fetch(&f->rel, f->s, &u.vis, nt, &row), KEEL_ENOENT);
    OK(f, heap_fetch(&f->rel, f->s, &r0.vis, t, &row));
    assert_row(&row, 7, 1, "first");

    /* On another page: fill this one first. */
    tx_begin(f->tm, &setup_tx);
    while (ins(f, setup_tx.xid, 99, 0, "filler filler filler").block == t.block)
        ;
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    memset(big, 'b', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    mkrow(v, 7, 3, big);
    OK(f, heap_update_held(&f->rel, f->s, &u.vis, u.xid, t, v, false, &far, &hold));
    assert_int_not_equal(far.block, t.block);
    assert_int_not_equal(hold.old_id, hold.new_id);
    assert_int_equal(buf_session_pinned(f->s), 2);
    heap_update_undo(f->s, u.xid, &hold);
    assert_int_equal(buf_session_pinned(f->s), 0);
    h = raw_header(f, t);
    assert_int_equal(h.xmax, XID_INVALID);
    assert_int_equal(raw_header(f, far).xmax, u.xid);
    assert_int_equal(heap_fetch(&f->rel, f->s, &u.vis, far, &row), KEEL_ENOENT);

    /* The updater updates it again, for good; then ends. */
    mkrow(v, 7, 4, "fourth");
    OK(f, heap_update(&f->rel, f->s, &u.vis, u.xid, t, v, &nt));
    tx_end(f->tm, &u, XID_STATUS_COMMITTED);
    tx_reader(f->tm, &late);
    assert_int_equal(heap_fetch(&f->rel, f->s, &late.vis, t, &row),
                     KEEL_ENOENT);
    OK(f, heap_fetch(&f->rel, f->s, &late.vis, nt, &row));
    assert_row(&row, 7, 4, "fourth");
    OK(f, heap_fetch(&f->rel, f->s, &r0.vis, t, &row));
    assert_row(&row, 7, 1, "first");
    tx_end(f->tm, &late, XID_STATUS_COMMITTED);
    tx_end(f->tm, &r0, XID_STATUS_COMMITTED);

    /* Another transaction can update the new version. */
    tx_begin(f->tm, &w);
    mkrow(v, 7, 5, "fifth");
    OK(f, heap_update(&f->rel, f->s, &w.vis, w.xid, nt, v, &far));
    tx_end(f->tm, &w, XID_STATUS_COMMITTED);
    heap_row_free(&row);
    assert_quiet(f);
}

/* The state of t's line pointer, read from a copy of its page. */
static heappage_lp_state lp_state(fixture *f, tid t)
{
    page_buf p;

    read_page(f, t.block, &p);
    assert_true(t.offset <= heappage_nitems(p.b));
    return heappage_lp_state_of(heappage_get_lp(p.b, t.offset));
}

/* Updates the row at *t to (id, n, payload) in a transaction of its own
 * that ends as st; *t becomes the new version's tid. */
static void update_ended(fixture *f, tid *t, int32_t id, int64_t n,
                         const char *payload, xid_status st)
{
    keel_value v[3];
    tx u;
    tid nt;

    tx_begin(f->tm, &u);
    mkrow(v, id, n, payload);
    OK(f, heap_update(&f->rel, f->s, &u.vis, u.xid, *t, v, &nt));
    tx_end(f->tm, &u, st);
    if (st == XID_STATUS_COMMITTED)
        *t = nt;
}

/*
 * Pruning: a row updated 400 times, each update committed and below the
 * horizon, keeps to its one page (its versions would fill four; the
 * page's line pointers, which stay, allow about 500); what
 * pruning removed fetches as nothing, and as dead for good; a snapshot
 * holding the horizon back keeps the versions it may see, and once it
 * ends the row settles on a page again.
 */
static void test_prune(void **state)
{
    fixture *f = *state;
    char payload[33];
    tx setup_tx, reader, check;
    tid t, first, held;
    heap_row row;
    heap_fate fate;
    bool dead;
    xid_t deleter;
    blocknum_t spilled, at;
    uint64_t before;

    memset(payload, 'p', sizeof(payload) - 1);
    payload[sizeof(payload) - 1] = '\0';
    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &setup_tx);
    first = t = ins(f, setup_tx.xid, 1, 0, payload);
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);

    /* Horizon 0: nothing goes, and the versions spill over. */
    for (int i = 1; i <= 300; i++)
        update_ended(f, &t, 1, i, payload, XID_STATUS_COMMITTED);
    assert_int_equal(heap_pruned(&f->rel), 0);
    spilled = nblocks(f);
    assert_true(spilled >= 3);

    /* Every deleter below the horizon: the row stays where it is. */
    txm_horizon_now(f->tm);
    at = t.block;
    for (int i = 301; i <= 700; i++) {
        update_ended(f, &t, 1, i, payload, XID_STATUS_COMMITTED);
        txm_horizon_now(f->tm);
    }
    assert_int_equal(t.block, at);
    assert_int_equal(nblocks(f), spilled);
    /* All but the versions since the page's last pruning (under 100). */
    assert_true(heap_pruned(&f->rel) >= 300);
    tx_reader(f->tm, &check);
    OK(f, heap_fetch(&f->rel, f->s, &check.vis, t, &row));
    assert_row(&row, 1, 700, payload);
    assert_int_equal(scan_ids(f, &check.vis, NULL, NULL, 0), 1);
    tx_end(f->tm, &check, XID_STATUS_COMMITTED);
    /* The first page was never pruned (nothing was placed there since);
     * a version of the row's page was: no row there, and dead for good. */
    assert_int_equal(lp_state(f, first), HEAPPAGE_LP_NORMAL);
    {
        tid gone = {.block = at, .offset = 1};
        assert_int_equal(lp_state(f, gone), HEAPPAGE_LP_DEAD);
        tx_reader(f->tm, &check);
        assert_int_equal(heap_fetch(&f->rel, f->s, &check.vis, gone, &row),
                         KEEL_ENOENT);
        OK(f, heap_fetch_fate(&f->rel, f->s, &check.vis, gone, &fate));
        assert_int_equal(fate, HEAP_DEAD);
        OK(f,
           heap_fetch_dead(&f->rel, f->s, &check.vis, gone, &dead, &deleter));
        assert_true(dead);
        assert_int_equal(deleter, XID_INVALID);
        tx_end(f->tm, &check, XID_STATUS_COMMITTED);
    }
    verify_all_pages(f);

    /* A reader holds the horizon back: its version, and every later one,
     * stay, so they spill over again. */
    tx_reader(f->tm, &reader);
    held = t;
    atomic_store(&f->tm->horizon, reader.snap.xmin);
    for (int i = 701; i <= 1200; i++)
        update_ended(f, &t, 1, i, payload, XID_STATUS_COMMITTED);
    OK(f, heap_fetch(&f->rel, f->s, &reader.vis, held, &row));
    assert_row(&row, 1, 700, payload);
    assert_int_equal(lp_state(f, held), HEAPPAGE_LP_NORMAL);
    assert_true(nblocks(f) > spilled);
    tx_end(f->tm, &reader, XID_STATUS_COMMITTED);

    /* It ended: the row's page is pruned again, and the row keeps to it. */
    txm_horizon_now(f->tm);
    spilled = nblocks(f);
    before = heap_pruned(&f->rel);
    for (int i = 1201; i <= 1600; i++) {
        update_ended(f, &t, 1, i, payload, XID_STATUS_COMMITTED);
        txm_horizon_now(f->tm);
    }
    assert_int_equal(nblocks(f), spilled);
    assert_true(heap_pruned(&f->rel) - before >= 300);
    tx_reader(f->tm, &check);
    OK(f, heap_fetch(&f->rel, f->s, &check.vis, t, &row));
    assert_row(&row, 1, 1600, payload);
    assert_int_equal(scan_ids(f, &check.vis, NULL, NULL, 0), 1);
    tx_end(f->tm, &check, XID_STATUS_COMMITTED);
    verify_all_pages(f);
    heap_row_free(&row);
    assert_quiet(f);
}

/*
 * An aborted update's new version is pruned once its deleter is found
 * aborted, and the old version's claim is cleared; a committed deleter's
 * version goes too.  Page 0 holds three large rows: a, the version an
 * aborted update of a left, and d.  Updates of d prune the page and stay
 * on it, and nothing pruned was visible.
 */
static void test_prune_aborted(void **state)
{
    fixture *f = *state;
    char big[2601];
    tx setup_tx, check;
    tid a, d, v1, nd, nd2, ids_t[4];
    heap_row row;
    heap_tuple_header h;
    int32_t ids[4];

    memset(big, 'b', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &setup_tx);
    a = ins(f, setup_tx.xid, 1, 0, big);
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    v1 = a;
    update_ended(f, &v1, 1, 1, big, XID_STATUS_ABORTED);
    h = raw_header(f, a);
    v1.block = h.next_block;
    v1.offset = h.next_offset;
    assert_int_equal(v1.block, a.block);
    assert_int_not_equal(v1.offset, a.offset);
    tx_begin(f->tm, &setup_tx);
    d = ins(f, setup_tx.xid, 2, 0, big);
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    assert_int_equal(d.block, a.block);

    txm_horizon_now(f->tm);
    nd = d;
    {
        page_buf p;
        heappage_lp lp_a, lp_d, lp_v1;
        read_page(f, a.block, &p);
        lp_a = heappage_get_lp(p.b, a.offset);
        lp_d = heappage_get_lp(p.b, d.offset);
        lp_v1 = heappage_get_lp(p.b, v1.offset);
        update_ended(f, &nd, 2, 1, big, XID_STATUS_COMMITTED);
        /* d's new version went where v1 was; nothing moved. */
        read_page(f, a.block, &p);
        assert_int_equal(heappage_get_lp(p.b, a.offset), lp_a);
        assert_int_equal(heappage_get_lp(p.b, d.offset), lp_d);
        assert_int_equal(heappage_lp_off(heappage_get_lp(p.b, nd.offset)),
                         heappage_lp_off(lp_v1));
    }
    assert_int_equal(nd.block, a.block);
    assert_int_equal(lp_state(f, v1), HEAPPAGE_LP_DEAD);
    assert_int_equal(lp_state(f, d), HEAPPAGE_LP_NORMAL); /* its deleter ran */
    assert_int_equal(heap_pruned(&f->rel), 1);
    h = raw_header(f, a);
    assert_int_equal(h.xmax, XID_INVALID);
    assert_false(h.flags & HEAP_TUPLE_XMAX_UPDATE);
    assert_int_equal(h.next_block, a.block);
    assert_int_equal(h.next_offset, a.offset);

    txm_horizon_now(f->tm);
    nd2 = nd;
    update_ended(f, &nd2, 2, 2, big, XID_STATUS_COMMITTED);
    assert_int_equal(nd2.block, a.block);
    assert_int_equal(lp_state(f, d), HEAPPAGE_LP_DEAD);
    assert_int_equal(heap_pruned(&f->rel), 2);
    assert_int_equal(nblocks(f), 1);

    tx_reader(f->tm, &check);
    assert_int_equal(scan_ids(f, &check.vis, ids, ids_t, 4), 2);
    assert_int_equal(ids[0], 1);
    assert_int_equal(tid_compare(ids_t[0], a), 0);
    assert_int_equal(ids[1], 2);
    assert_int_equal(tid_compare(ids_t[1], nd2), 0);
    OK(f, heap_fetch(&f->rel, f->s, &check.vis, a, &row));
    assert_row(&row, 1, 0, big);
    OK(f, heap_fetch(&f->rel, f->s, &check.vis, nd2, &row));
    assert_row(&row, 2, 2, big);
    tx_end(f->tm, &check, XID_STATUS_COMMITTED);
    verify_all_pages(f);
    heap_row_free(&row);
    assert_quiet(f);
}

/*
 * An update that overwrites an aborted update's claim drops the version
 * that update left on the page, whatever the horizon (its inserter
 * aborted): the claim was the only link to it.
 */
static void test_overwrite_aborted_claim(void **state)
{
    fixture *f = *state;
    tx setup_tx, check;
    tid r, v, nr;
    heap_row row;
    heap_tuple_header h;
    int32_t ids[4];

    pool_open(f, 32);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &setup_tx);
    r = ins(f, setup_tx.xid, 1, 0, "r");
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    v = r;
    update_ended(f, &v, 1, 1, "aborted", XID_STATUS_ABORTED);
    h = raw_header(f, r);
    v.block = h.next_block;
    v.offset = h.next_offset;
    assert_int_equal(v.block, r.block);
    assert_int_equal(lp_state(f, v), HEAPPAGE_LP_NORMAL);

    nr = r;
    update_ended(f, &nr, 1, 2, "kept", XID_STATUS_COMMITTED);
    assert_int_equal(lp_state(f, v), HEAPPAGE_LP_DEAD);
    assert_int_equal(heap_pruned(&f->rel), 1);
    tx_reader(f->tm, &check);
    assert_int_equal(scan_ids(f, &check.vis, ids, NULL, 4), 1);
    OK(f, heap_fetch(&f->rel, f->s, &check.vis, nr, &row));
    assert_row(&row, 1, 2, "kept");
    tx_end(f->tm, &check, XID_STATUS_COMMITTED);
    verify_all_pages(f);
    heap_row_free(&row);
    assert_quiet(f);
}

static void test_write_conflicts(void **state)
{
    fixture *f = *state;
    tx setup_tx, t1, t2, t3;
    tid a, b, c, d, nt;
    keel_value v[3];
    page_buf before, after;

    pool_open(f, 32);
    tx_begin(f->tm, &setup_tx);
    a = ins(f, setup_tx.xid, 1, 0, "a");
    b = ins(f, setup_tx.xid, 2, 0, "b");
    c = ins(f, setup_tx.xid, 3, 0, "c");
    d = ins(f, setup_tx.xid, 4, 0, "d");
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);

    tx_begin(f->tm, &t1);
    tx_begin(f->tm, &t2); /* t1 is in t2's snapshot's xip */
    mkrow(v, 1, 1, "a'");
    OK(f, heap_update(&f->rel, f->s, &t1.vis, t1.xid, a, v, &nt));
    OK(f, heap_delete(&f->rel, f->s, &t1.vis, t1.xid, b));

    /* t1 is running: t2 fails on both rows, changing nothing. */
    read_page(f, 0, &before);
    mkrow(v, 1, 2, "a''");
    assert_int_equal(heap_update(&f->rel, f->s, &t2.vis, t2.xid, a, v, &nt),
                     KEEL_ESERIALIZE);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "updated"));
    assert_non_null(strstr(buf_session_error(f->s)->msg, "in progress"));
    assert_int_equal(heap_delete(&f->rel, f->s, &t2.vis, t2.xid, a),
                     KEEL_ESERIALIZE);
    assert_int_equal(heap_delete(&f->rel, f->s, &t2.vis, t2.xid, b),
                     KEEL_ESERIALIZE);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "deleted"));
    mkrow(v, 2, 2, "b'");
    assert_int_equal(heap_update(&f->rel, f->s, &t2.vis, t2.xid, b, v, &nt),
                     KEEL_ESERIALIZE);
    read_page(f, 0, &after);
    assert_memory_equal(before.b, after.b, BLOCK_SIZE);
    assert_int_equal(buf_session_pinned(f->s), 0);

    /* t1 commits: still a conflict for t2 (committed after its
     * snapshot), and the row is still visible to t2. */
    tx_end(f->tm, &t1, XID_STATUS_COMMITTED);
    assert_int_equal(heap_delete(&f->rel, f->s, &t2.vis, t2.xid, a),
                     KEEL_ESERIALIZE);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "committed after"));
    mkrow(v, 2, 2, "b'");
    assert_int_equal(heap_update(&f->rel, f->s, &t2.vis, t2.xid, b, v, &nt),
                     KEEL_ESERIALIZE);
    {
        heap_row row;
        OK(f, heap_row_init(&row, &f->rel, &f->err));
        OK(f, heap_fetch(&f->rel, f->s, &t2.vis, a, &row));
        assert_row(&row, 1, 0, "a");
        heap_row_free(&row);
    }
    read_page(f, 0, &after);
    assert_memory_equal(before.b, after.b, BLOCK_SIZE);

    /* t2 may still change rows nobody else touched. */
    OK(f, heap_delete(&f->rel, f->s, &t2.vis, t2.xid, c));
    tx_end(f->tm, &t2, XID_STATUS_ABORTED);

    /* A newer transaction no longer sees the old versions at all. */
    tx_begin(f->tm, &t3);
    assert_int_equal(heap_delete(&f->rel, f->s, &t3.vis, t3.xid, a),
                     KEEL_ENOENT);
    assert_int_equal(heap_delete(&f->rel, f->s, &t3.vis, t3.xid, b),
                     KEEL_ENOENT);
    /* c was deleted by the aborted t2: t3 sees it and may delete it, which
     * overwrites t2's xmax. */
    OK(f, heap_delete(&f->rel, f->s, &t3.vis, t3.xid, c));
    assert_int_equal(raw_header(f, c).xmax, t3.xid);
    /* Deleting twice in one transaction: ENOENT, not a conflict. */
    assert_int_equal(heap_delete(&f->rel, f->s, &t3.vis, t3.xid, c),
                     KEEL_ENOENT);
    /* The writing xid must be the snapshot's own. */
    assert_int_equal(heap_delete(&f->rel, f->s, &t3.vis, t3.xid + 1, d),
                     KEEL_EINVAL);
    mkrow(v, 4, 0, "d'");
    assert_int_equal(
        heap_update(&f->rel, f->s, &t3.vis, XID_INVALID, d, v, &nt),
        KEEL_EINVAL);
    /* An update aborted: the next writer wins. */
    OK(f, heap_update(&f->rel, f->s, &t3.vis, t3.xid, d, v, &nt));
    tx_end(f->tm, &t3, XID_STATUS_ABORTED);
    tx_begin(f->tm, &t3);
    assert_int_equal(heap_delete(&f->rel, f->s, &t3.vis, t3.xid, nt),
                     KEEL_ENOENT); /* the aborted version */
    mkrow(v, 4, 1, "d''");
    OK(f, heap_update(&f->rel, f->s, &t3.vis, t3.xid, d, v, &nt));
    /* A delete after an aborted update clears the update's marks. */
    tx_end(f->tm, &t3, XID_STATUS_ABORTED);
    tx_begin(f->tm, &t3);
    OK(f, heap_delete(&f->rel, f->s, &t3.vis, t3.xid, d));
    {
        heap_tuple_header h = raw_header(f, d);
        assert_int_equal(h.xmax, t3.xid);
        assert_false(h.flags & HEAP_TUPLE_XMAX_UPDATE);
        assert_int_equal(h.next_block, d.block);
        assert_int_equal(h.next_offset, d.offset);
    }
    tx_end(f->tm, &t3, XID_STATUS_COMMITTED);
    assert_quiet(f);
}

/* Rows that are too big or do not match the columns change nothing. */
static void test_too_big_and_bad_values(void **state)
{
    fixture *f = *state;
    tx x;
    tid t, nt = TID_INVALID;
    keel_value v[3];
    page_buf before, after;
    char *big = malloc(BLOCK_SIZE + 1);
    blocknum_t n;
    size_t size;

    assert_non_null(big);
    memset(big, 'z', BLOCK_SIZE);
    big[BLOCK_SIZE] = '\0';
    pool_open(f, 32);
    t = ins(f, XID_FROZEN, 1, 1, "small");
    n = nblocks(f);
    read_page(f, 0, &before);
    tx_begin(f->tm, &x);

    mkrow(v, 2, 2, big);
    assert_int_equal(heap_row_size(&f->rel, v, &size, &f->err), KEEL_ETOOBIG);
    assert_int_equal(heap_insert(&f->rel, f->s, x.xid, CID_FIRST, v, &nt),
                     KEEL_ETOOBIG);
    {
        char want[64];
        snprintf(want, sizeof(want), "%zu bytes",
                 (size_t)HEAP_TUPLE_HOFF + 20 + BLOCK_SIZE);
        if (strstr(buf_session_error(f->s)->msg, want) == NULL)
            fail_msg("message \"%s\" does not name the size (%s)",
                     buf_session_error(f->s)->msg, want);
    }
    assert_false(tid_valid(nt));
    assert_int_equal(heap_update(&f->rel, f->s, &x.vis, x.xid, t, v, &nt),
                     KEEL_ETOOBIG);
    /* The limit is exact: int4, int8, text length at 16, bytes at 20. */
    big[HEAP_MAX_TUPLE_SIZE - HEAP_TUPLE_HOFF - 20 + 1] = '\0';
    mkrow(v, 2, 2, big);
    assert_int_equal(heap_row_size(&f->rel, v, &size, &f->err), KEEL_ETOOBIG);
    assert_int_equal(heap_insert(&f->rel, f->s, x.xid, CID_FIRST, v, &nt),
                     KEEL_ETOOBIG);
    big[HEAP_MAX_TUPLE_SIZE - HEAP_TUPLE_HOFF - 20] = '\0';
    mkrow(v, 2, 2, big);
    OK(f, heap_row_size(&f->rel, v, &size, &f->err));
    assert_int_equal(size, HEAP_MAX_TUPLE_SIZE);
    /* A null in the not-null column. */
    mkrow(v, 2, 2, "x");
    v[0].isnull = true;
    assert_int_equal(heap_insert(&f->rel, f->s, x.xid, CID_FIRST, v, &nt),
                     KEEL_ETYPE);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "column 1"));
    assert_int_equal(heap_update(&f->rel, f->s, &x.vis, x.xid, t, v, &nt),
                     KEEL_ETYPE);
    /* An invalid xid. */
    mkrow(v, 2, 2, "x");
    assert_int_equal(heap_insert(&f->rel, f->s, XID_INVALID, CID_FIRST, v, &nt),
                     KEEL_EINVAL);

    read_page(f, 0, &after);
    assert_memory_equal(before.b, after.b, BLOCK_SIZE);
    assert_int_equal(nblocks(f), n);
    /* The row is intact and can still be updated. */
    mkrow(v, 1, 2, "fine");
    OK(f, heap_update(&f->rel, f->s, &x.vis, x.xid, t, v, &nt));
    tx_end(f->tm, &x, XID_STATUS_COMMITTED);
    free(big);
    assert_quiet(f);
}

/* ------------------------------------------------------------------ */
/* Failures and durability                                            */
/* ------------------------------------------------------------------ */

static void test_persistence(void **state)
{
    fixture *f = *state;
    enum { N = 2000 };
    tid *tids = calloc(N, sizeof(tid));
    int32_t *ids = calloc(N, sizeof(int32_t));
    tx w, r;
    heap_row row;
    uint32_t n;

    assert_non_null(tids);
    assert_non_null(ids);
    pool_open(f, 64);
    tx_begin(f->tm, &w);
    for (int i = 0; i < N; i++) {
        char payload[32];
        snprintf(payload, sizeof(payload), "persist %d", i);
        tids[i] = ins(f, w.xid, i, i, payload);
    }
    tx_end(f->tm, &w, XID_STATUS_COMMITTED);
    tx_begin(f->tm, &w);
    for (int i = 0; i < N; i += 10)
        OK(f, heap_delete(&f->rel, f->s, &w.vis, w.xid, tids[i]));
    for (int i = 5; i < N; i += 10) {
        keel_value v[3];
        mkrow(v, i, -i, "updated");
        OK(f, heap_update(&f->rel, f->s, &w.vis, w.xid, tids[i], v, &tids[i]));
    }
    tx_end(f->tm, &w, XID_STATUS_COMMITTED);
    OK(f, buf_checkpoint(f->s));
    pool_close(f);

    /* A new pool reads everything back from disk. */
    smgr_close(f->sm);
    assert_int_equal(smgr_open(f->dir, &f->sm, &f->err), KEEL_OK);
    pool_open(f, 64);
    heap_rel_init(&f->rel, REL, f->desc);
    tx_reader(f->tm, &r);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    n = scan_ids(f, &r.vis, ids, NULL, N);
    assert_int_equal(n, N - N / 10);
    for (int i = 0; i < N; i++) {
        int rc = heap_fetch(&f->rel, f->s, &r.vis, tids[i], &row);
        if (i % 10 == 0) {
            assert_int_equal(rc, KEEL_ENOENT);
            continue;
        }
        assert_int_equal(rc, KEEL_OK);
        assert_int_equal(row.values[0].v.i4, i);
        assert_true(row.values[1].v.i8 == (i % 10 == 5 ? -i : i));
    }
    verify_all_pages(f);

#ifdef KEEL_FAULT_INJECTION
    /* A read error reaches the caller with nothing left pinned, and a
     * retry succeeds. */
    pool_close(f);
    pool_open(f, 64);
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, REL);
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis, tids[1], &row),
                     KEEL_EIO);
    assert_int_equal(buf_session_pinned(f->s), 0);
    OK(f, heap_fetch(&f->rel, f->s, &r.vis, tids[1], &row));
    fault_arm(FAULT_OP_READ, FAULT_EIO, 3, 1, REL);
    {
        heap_scan *sc;
        bool found;
        int errors = 0;
        n = 0;
        OK(f, heap_scan_begin(&f->rel, f->s, &r.vis, &sc));
        for (;;) {
            int rc = heap_scan_next(sc, &row, &found);
            if (rc == KEEL_EIO) {
                errors++;
                assert_int_equal(buf_session_pinned(f->s), 0);
                continue;
            }
            assert_int_equal(rc, KEEL_OK);
            if (!found)
                break;
            n++;
        }
        heap_scan_end(sc);
        assert_int_equal(errors, 1);
        assert_int_equal(n, N - N / 10);
    }
    fault_disarm_all();
#endif
    heap_row_free(&row);
    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    free(tids);
    free(ids);
    assert_quiet(f);
}

#ifdef KEEL_FAULT_INJECTION
/* An update whose new version cannot be placed (the relation cannot be
 * extended) fails, and the old version is as it was: unclaimed, so others
 * may update it. */
static void test_update_failure_restores(void **state)
{
    fixture *f = *state;
    tx setup_tx, u, w;
    tid t, nt = TID_INVALID, last;
    keel_value v[3];
    heap_tuple_header h0, h1;
    blocknum_t n;
    char big[2000];

    pool_open(f, 32);
    tx_begin(f->tm, &setup_tx);
    t = ins(f, setup_tx.xid, 1, 1, "victim");
    do
        last = ins(f, setup_tx.xid, 2, 2, "filler filler filler filler");
    while (last.block == t.block);
    /* Fill the second page too, so no page has room for a big row. */
    while (ins(f, setup_tx.xid, 2, 2, "filler filler filler filler").block ==
           last.block)
        ;
    tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    /* Leave the last page almost full: add until a big row won't fit. */
    memset(big, 'B', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    n = nblocks(f);
    {
        page_buf p;
        size_t size;
        mkrow(v, 1, 9, big);
        OK(f, heap_row_size(&f->rel, v, &size, &f->err));
        tx_begin(f->tm, &setup_tx);
        for (;;) {
            read_page(f, n - 1, &p);
            if (!heappage_fits(p.b, size))
                break;
            ins(f, setup_tx.xid, 3, 3, "more filler");
            assert_int_equal(nblocks(f), n);
        }
        tx_end(f->tm, &setup_tx, XID_STATUS_COMMITTED);
    }
    h0 = raw_header(f, t);

    tx_begin(f->tm, &u);
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 0, 1, REL);
    assert_int_equal(heap_update(&f->rel, f->s, &u.vis, u.xid, t, v, &nt),
                     KEEL_ENOSPC);
    fault_disarm_all();
    assert_int_equal(buf_session_pinned(f->s), 0);
    h1 = raw_header(f, t);
    assert_memory_equal(&h0, &h1, sizeof(h0));
    assert_int_equal(nblocks(f), n);
    tx_end(f->tm, &u, XID_STATUS_ABORTED);

    /* Someone else can now update it. */
    tx_begin(f->tm, &w);
    OK(f, heap_update(&f->rel, f->s, &w.vis, w.xid, t, v, &nt));
    assert_int_equal(nt.block, n); /* on a new page */
    tx_end(f->tm, &w, XID_STATUS_COMMITTED);
    assert_quiet(f);
}
#endif

/* Block blk of REL in the pool, pinned and exclusively locked, for a test
 * to damage; damage_done() marks it dirty and lets it go. */
static void *damage_begin(fixture *f, blocknum_t blk, int32_t *id)
{
    OK(f, buf_read(f->s, REL, blk, NULL, id));
    buf_lock(f->s, *id, LW_EXCLUSIVE);
    return buf_page(f->pool, *id);
}

static void damage_done(fixture *f, int32_t id)
{
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
}

/* The data area of the version at t on page. */
static unsigned char *data_of(void *page, tid t)
{
    size_t len;
    unsigned char *item = heappage_get_item(page, t.offset, &len);

    assert_non_null(item);
    return item + HEAP_TUPLE_HOFF;
}

/*
 * Rows on pages damaged in ways a page checksum cannot catch: every fetch,
 * scan, update and delete of them fails with KEEL_ECORRUPT (naming the
 * column at fault) and leaves nothing pinned, and none reads outside the
 * row or trips an assertion (a scan may be moved past such a row):
 * a text length past the tuple's end, a null bitmap with the not-null id
 * null, a misaligned line pointer, a page with special space (not a heap
 * page), and a page with far more line pointers than a page gets, which
 * pruning must not walk into its arrays' ends.
 */
static void test_damaged_rows_refused(void **state)
{
    fixture *f = *state;
    tx w, r, d;
    tid t1, t2, t3, nt;
    heap_row row;
    heap_scan *sc;
    keel_value v[3];
    bool found;
    int32_t id;
    void *page;
    uint32_t saved;
    heappage_lp lp2;
    page_buf copy;
    page_header *ph;

    pool_open(f, 16);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    tx_begin(f->tm, &w);
    t1 = ins(f, w.xid, 1, 10, "one");
    t2 = ins(f, w.xid, 2, 20, "two");
    t3 = ins(f, w.xid, 3, 30, NULL); /* a null bitmap before id */
    tx_end(f->tm, &w, XID_STATUS_COMMITTED);
    reader_vis(f, &r);

    /* Row 1's text length (after id int4 and n int8) far past its end. */
    page = damage_begin(f, t1.block, &id);
    memcpy(&saved, data_of(page, t1) + 16, 4);
    memcpy(data_of(page, t1) + 16, &(uint32_t){100000}, 4);
    damage_done(f, id);
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis, t1, &row),
                     KEEL_ECORRUPT);
    assert_non_null(strstr(buf_session_error(f->s)->msg,
                           "column 3 (text) runs past the end"));
    assert_int_equal(heap_fetch_cols(&f->rel, f->s, &r.vis, t1, 3, &row),
                     KEEL_ECORRUPT);
    assert_non_null(strstr(buf_session_error(f->s)->msg,
                           "column 3 (text) runs past the end"));
    OK(f, heap_scan_begin(&f->rel, f->s, &r.vis, &sc));
    assert_false(heap_scan_skip(sc)); /* nothing failed */
    assert_int_equal(heap_scan_next(sc, &row, &found), KEEL_ECORRUPT);
    /* Moved past the damaged row, the scan goes on with the others. */
    assert_true(heap_scan_skip(sc));
    assert_false(heap_scan_skip(sc));
    OK(f, heap_scan_next(sc, &row, &found));
    assert_true(found);
    assert_row(&row, 2, 20, "two");
    heap_scan_end(sc);
    assert_int_equal(buf_session_pinned(f->s), 0);
    page = damage_begin(f, t1.block, &id);
    memcpy(data_of(page, t1) + 16, &saved, 4);
    damage_done(f, id);
    OK(f, heap_fetch(&f->rel, f->s, &r.vis, t1, &row));
    assert_row(&row, 1, 10, "one");

    /* Row 2's line pointer names the page's last 8 bytes: too short for
     * a tuple header, which no fetch reads (a chain's flags included). */
    page = damage_begin(f, t2.block, &id);
    lp2 = heappage_get_lp(page, t2.offset);
    ((heappage_lp *)((char *)page + PAGE_HEADER_SIZE))[t2.offset - 1] =
        heappage_lp_make(BLOCK_SIZE - 8, HEAPPAGE_LP_NORMAL, 8);
    damage_done(f, id);
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis, t2, &row),
                     KEEL_ECORRUPT);
    assert_int_equal(heap_fetch_cols(&f->rel, f->s, &r.vis, t2, 1, &row),
                     KEEL_ECORRUPT);
    assert_int_equal(buf_session_pinned(f->s), 0);
    page = damage_begin(f, t2.block, &id);
    ((heappage_lp *)((char *)page + PAGE_HEADER_SIZE))[t2.offset - 1] = lp2;
    damage_done(f, id);
    OK(f, heap_fetch(&f->rel, f->s, &r.vis, t2, &row));
    assert_row(&row, 2, 20, "two");

    /* Row 3's null bitmap says id, which is not null, is. */
    page = damage_begin(f, t3.block, &id);
    data_of(page, t3)[0] |= 1;
    damage_done(f, id);
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis, t3, &row),
                     KEEL_ECORRUPT);
    assert_non_null(strstr(buf_session_error(f->s)->msg,
                           "column 1 (int4) is null, but the row type has it "
                           "not null"));
    assert_int_equal(heap_fetch_cols(&f->rel, f->s, &r.vis, t3, 1, &row),
                     KEEL_ECORRUPT);
    page = damage_begin(f, t3.block, &id);
    data_of(page, t3)[0] &= (unsigned char)~1u;
    damage_done(f, id);
    OK(f, heap_fetch(&f->rel, f->s, &r.vis, t3, &row));
    assert_row(&row, 3, 30, NULL);

    /* Row 2's line pointer four bytes on: misaligned. */
    page = damage_begin(f, t2.block, &id);
    lp2 = heappage_get_lp(page, t2.offset);
    ((heappage_lp *)((char *)page + PAGE_HEADER_SIZE))[t2.offset - 1] =
        heappage_lp_make(heappage_lp_off(lp2) + 4, HEAPPAGE_LP_NORMAL,
                         (uint16_t)(heappage_lp_len(lp2) - 4));
    damage_done(f, id);
    assert_int_equal(heap_fetch(&f->rel, f->s, &r.vis, t2, &row),
                     KEEL_ECORRUPT);
    assert_int_equal(heap_fetch_cols(&f->rel, f->s, &r.vis, t2, 1, &row),
                     KEEL_ECORRUPT);
    page = damage_begin(f, t2.block, &id);
    ((heappage_lp *)((char *)page + PAGE_HEADER_SIZE))[t2.offset - 1] = lp2;
    damage_done(f, id);

    /* Special space on the page: no heap page, to update or delete on
     * (row 3, the lowest on the page, still lies below it). */
    page = damage_begin(f, t3.block, &id);
    ((page_header *)page)->special = BLOCK_SIZE - 8;
    damage_done(f, id);
    read_page(f, t3.block, &copy);
    tx_begin(f->tm, &d);
    mkrow(v, 3, 31, "drei");
    assert_int_equal(heap_update(&f->rel, f->s, &d.vis, d.xid, t3, v, &nt),
                     KEEL_ECORRUPT);
    assert_non_null(strstr(buf_session_error(f->s)->msg, "not a heap page"));
    assert_int_equal(heap_delete(&f->rel, f->s, &d.vis, d.xid, t3),
                     KEEL_ECORRUPT);
    assert_int_equal(buf_session_pinned(f->s), 0);
    {
        page_buf now;
        read_page(f, t3.block, &now);
        assert_memory_equal(now.b, copy.b, BLOCK_SIZE);
    }
    tx_end(f->tm, &d, XID_STATUS_ABORTED);
    page = damage_begin(f, t3.block, &id);
    ((page_header *)page)->special = BLOCK_SIZE;
    damage_done(f, id);

    /* Row 2 deleted for good; then 600 line pointers, each a copy of its
     * own, on a page that says some may be free and none has room: an
     * update of row 1 makes pruning look at the page. */
    tx_begin(f->tm, &d);
    OK(f, heap_delete(&f->rel, f->s, &d.vis, d.xid, t2));
    tx_end(f->tm, &d, XID_STATUS_COMMITTED);
    txm_horizon_now(f->tm);
    page = damage_begin(f, t2.block, &id);
    ph = page;
    lp2 = heappage_get_lp(page, t2.offset);
    for (uint16_t i = heappage_nitems(page); i < 600; i++)
        ((heappage_lp *)((char *)page + PAGE_HEADER_SIZE))[i] = lp2;
    ph->lower = (uint16_t)(PAGE_HEADER_SIZE + 600 * HEAPPAGE_LP_SIZE);
    ph->upper = ph->lower;
    ph->flags |= PAGE_FLAG_PRUNABLE | PAGE_FLAG_HAS_FREE_LINES;
    ph->am_hint = HEAPPAGE_HINT_MANY;
    damage_done(f, id);
    tx_begin(f->tm, &d);
    mkrow(v, 1, 12, "eins");
    OK(f, heap_update(&f->rel, f->s, &d.vis, d.xid, t1, v, &nt));
    assert_int_not_equal(nt.block, t1.block); /* that page took nothing */
    tx_end(f->tm, &d, XID_STATUS_COMMITTED);
    assert_int_equal(buf_session_pinned(f->s), 0);

    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    heap_row_free(&row);
    tu_assert_pool_quiet(f->pool);
}

/* heap_row_prepare() keeps a row's memory while it has room, grows it
 * when it has not, and always leaves zeroed values for the new row type. */
static void test_row_prepare(void **state)
{
    fixture *f = *state;
    tuple_desc *wide = tupdesc_alloc(9);
    heap_rel wr;
    heap_row row = {0};
    keel_value *values;
    void *data;
    kerr err;

    assert_non_null(wide);
    for (uint16_t i = 0; i < 9; i++)
        assert_int_equal(tupdesc_set(wide, i, KEEL_INT8, 0, false, &err),
                         KEEL_OK);
    heap_rel_init(&wr, REL + 50, wide);

    /* A zeroed row is allocated, for f->rel's 3 columns. */
    OK(f, heap_row_prepare(&row, &f->rel, &f->err));
    assert_int_equal(row.natts, 3);
    assert_int_equal(row.room, 3);
    assert_non_null(row.values);
    assert_non_null(row.data);
    values = row.values;
    data = row.data;
    row.values[1].v.i8 = 42;
    row.xmin = 9;
    /* Again for the same rows: the same memory, cleared. */
    OK(f, heap_row_prepare(&row, &f->rel, &f->err));
    assert_ptr_equal(row.values, values);
    assert_ptr_equal(row.data, data);
    assert_int_equal(row.values[1].v.i8, 0);
    assert_int_equal(row.xmin, 0);
    /* Wider rows: room for 9. */
    OK(f, heap_row_prepare(&row, &wr, &f->err));
    assert_int_equal(row.natts, 9);
    assert_int_equal(row.room, 9);
    values = row.values;
    for (uint16_t i = 0; i < 9; i++)
        assert_false(row.values[i].isnull || row.values[i].v.i8 != 0);
    /* Narrower again: the 9 entries stay, 3 are used. */
    OK(f, heap_row_prepare(&row, &f->rel, &f->err));
    assert_ptr_equal(row.values, values);
    assert_int_equal(row.natts, 3);
    assert_int_equal(row.room, 9);
    heap_row_free(&row);
    assert_null(row.values);
    assert_int_equal(row.room, 0);
    heap_row_free(&row);
    tupdesc_free(wide);
}

/* ------------------------------------------------------------------ */
/* Guessing where a row is, and the B-tree's heap prefetch            */
/* ------------------------------------------------------------------ */

#define REL_GUESS     ((relnumber_t)16391)
#define REL_GUESS_IX  ((relnumber_t)16392)
#define REL_GUESS_IX2 ((relnumber_t)16393)

/* Lookups of every key 0..n-1 in bt: each finds want[key], as
 * btree_lookup() and btree_search_heap() do too, the latter guessing the
 * same tid by its general descent; returns how many times a heap tid was
 * guessed, and in *exact how many of the guesses were want[key]. */
static uint32_t lookup_guesses(fixture *f, btree *bt, const heap_rel *r,
                               const tid *want, uint32_t n, uint32_t *exact)
{
    uint32_t guessed = 0;

    *exact = 0;
    for (uint32_t i = 0; i < n; i++) {
        keel_value k = {.v.i4 = (int32_t)i};
        tid t, plain, g = {7, 7}, g2 = {7, 7}, all[2];
        uint32_t count = 0;
        OK(f, btree_lookup_heap(bt, f->s, &k, r, NULL, &t, &g));
        OK(f, btree_lookup(bt, f->s, &k, &plain));
        OK(f, btree_search_heap(bt, f->s, &k, r, NULL, all, 2, &count, &g2));
        assert_int_equal(count, 1);
        assert_true(tid_compare(all[0], want[i]) == 0);
        assert_true(tid_compare(g, g2) == 0);
        if (tid_compare(t, want[i]) != 0 || tid_compare(plain, want[i]) != 0)
            fail_msg("key %u: found (%u,%u) and (%u,%u), want (%u,%u)", i,
                     t.block, t.offset, plain.block, plain.offset,
                     want[i].block, want[i].offset);
        if (tid_valid(g)) {
            guessed++;
            *exact += tid_compare(g, t) == 0;
        } else {
            assert_int_equal(g.block, 0); /* reset, not left as it was */
        }
    }
    return guessed;
}

static void test_tid_guess(void **state)
{
    fixture *f = *state;
    enum { N = 20000 };
    tuple_desc *d = tupdesc_alloc(4), *kd = tupdesc_alloc(1);
    keel_value *keys = calloc(N, sizeof(keel_value));
    btree_entry *e = calloc(N, sizeof(btree_entry));
    tid *tids = calloc(N, sizeof(tid)), *shuffled = calloc(N, sizeof(tid));
    uint32_t per_page, guessed, exact;
    heap_bulk *bulk = NULL;
    btree *bt = NULL;
    uint64_t rng = 12345;
    tid g;
    kerr err;

    assert_non_null(d);
    assert_non_null(kd);
    assert_true(keys && e && tids && shuffled);
    /* pgbench_accounts' row type: fixed width, so the stride is known. */
    for (uint16_t i = 0; i < 3; i++)
        assert_int_equal(tupdesc_set(d, i, KEEL_INT4, 0, i == 0, &err),
                         KEEL_OK);
    assert_int_equal(tupdesc_set(d, 3, KEEL_CHAR, 84, false, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(kd, 0, KEEL_INT4, 0, true, &err), KEEL_OK);
    heap_rel r;
    heap_rel_init(&r, REL_GUESS, d);
    per_page = (BLOCK_SIZE - PAGE_HEADER_SIZE) / (r.stride + HEAPPAGE_LP_SIZE);
    assert_int_equal(r.per_page, per_page);
    assert_int_equal(f->rel.per_page, 0);
    assert_int_equal(smgr_create(f->sm, REL_GUESS, NULL, &f->err), KEEL_OK);
    pool_open(f, 1024);

    /* A bulk load fills each page to the last row that fits, in order:
     * what the guess assumes. */
    OK(f, heap_bulk_begin(&r, f->s, &bulk));
    for (uint32_t i = 0; i < N; i++) {
        keel_value v[4] = {{.v.i4 = (int32_t)i}, {.v.i4 = 1}, {.v.i4 = 0}};
        v[3].v.s.ptr = "filler";
        v[3].v.s.len = 6;
        OK(f, heap_bulk_insert(bulk, XID_FROZEN, v, &tids[i]));
        assert_int_equal(tids[i].block, i / per_page);
        assert_int_equal(tids[i].offset, i % per_page + 1);
    }
    heap_bulk_end(bulk);

    /* Every row between two others, up to HEAP_GUESS_MAX_ROWS apart. */
    for (uint32_t a = 0; a + HEAP_GUESS_MAX_ROWS < N; a += 997) {
        uint32_t b = a + (a % 3 == 0 ? HEAP_GUESS_MAX_ROWS : 371);
        for (uint32_t i = a; i <= b; i++) {
            double frac = (double)(i - a) / (double)(b - a);
            assert_true(heap_tid_guess(&r, tids[a], tids[b], frac,
                                       HEAP_GUESS_MAX_ROWS, &g));
            if (tid_compare(g, tids[i]) != 0)
                fail_msg("row %u between %u and %u: guessed (%u,%u)", i, a, b,
                         g.block, g.offset);
        }
    }
    /* No guess: out of order, further apart than HEAP_GUESS_MAX_ROWS or
     * the caller's bound, rows of varying width (f->rel has a text
     * column), a fraction outside [0, 1], no tid, an offset that no full
     * page of these rows has. */
    const uint64_t most = HEAP_GUESS_MAX_ROWS;
    assert_false(heap_tid_guess(&r, tids[500], tids[499], 0.5, most, &g));
    assert_false(
        heap_tid_guess(&r, tids[0], tids[most + 1], 0.5, most + 1, &g));
    assert_true(heap_tid_guess(&r, tids[0], tids[most], 0.5, most, &g));
    assert_false(heap_tid_guess(&r, tids[0], tids[100], 0.5, 99, &g));
    assert_true(heap_tid_guess(&r, tids[0], tids[100], 0.5, 100, &g));
    assert_true(tid_compare(g, tids[50]) == 0);
    assert_int_equal(f->rel.stride, 0);
    assert_false(heap_tid_guess(&f->rel, tids[0], tids[10], 0.5, most, &g));
    assert_false(heap_tid_guess(&r, tids[0], tids[10], 1.5, most, &g));
    assert_false(heap_tid_guess(&r, tids[0], tids[10], -0.1, most, &g));
    assert_false(heap_tid_guess(&r, tids[0], tids[10], 0.0 / 0.0, most, &g));
    assert_false(heap_tid_guess(&r, TID_INVALID, tids[10], 0.5, most, &g));
    assert_false(heap_tid_guess(&r, (tid){0, (uint16_t)(per_page + 1)},
                                tids[10], 0.5, most, &g));

    /* An index in heap order: every lookup guesses, and guesses right,
     * except in the leftmost leaf (no separator bounds it below; a leaf
     * holds fewer than 500 int4 entries). */
    for (uint32_t i = 0; i < N; i++) {
        keys[i].v.i4 = (int32_t)i;
        e[i].keys = &keys[i];
        e[i].t = tids[i];
    }
    OK(f, btree_build_array(f->s, REL_GUESS_IX, kd, true, e, N, &bt));
    guessed = lookup_guesses(f, bt, &r, tids, N, &exact);
    assert_true(guessed >= N - 500);
    assert_int_equal(exact, guessed);
    /* Without the heap: no guess, same answers. */
    assert_int_equal(lookup_guesses(f, bt, NULL, tids, N, &exact), 0);
    btree_close(bt);

    /* An index whose keys are in no relation to the heap's order: the
     * separators' tids are far apart, so it seldom guesses; the answers
     * are the same as without guessing. */
    memcpy(shuffled, tids, N * sizeof(tid));
    for (uint32_t i = N - 1; i > 0; i--) {
        uint32_t j;
        tid t;
        rng = rng * UINT64_C(6364136223846793005) + 1442695040888963407u;
        j = (uint32_t)((rng >> 33) % (i + 1));
        t = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = t;
    }
    for (uint32_t i = 0; i < N; i++)
        e[i].t = shuffled[i];
    OK(f, btree_build_array(f->s, REL_GUESS_IX2, kd, true, e, N, &bt));
    guessed = lookup_guesses(f, bt, &r, shuffled, N, &exact);
    assert_true(guessed <= N / 10);
    btree_close(bt);

    assert_int_equal(buf_session_pinned(f->s), 0);
    tupdesc_free(kd);
    tupdesc_free(d);
    free(keys);
    free(e);
    free(tids);
    free(shuffled);
}

/* ------------------------------------------------------------------ */
/* Bulk insert                                                        */
/* ------------------------------------------------------------------ */

#define HOT_BLOCKS 48

static void test_bulk_insert_ring(void **state)
{
    fixture *f = *state;
    enum { N = 20000, POOL = 256, SLACK = 3 };
    int32_t hot[HOT_BLOCKS];
    heap_bulk *bulk = NULL;
    uint32_t heap_buffers = 0;
    char payload[200];
    tid prev = TID_INVALID;
    tx r;

    /* A hot relation whose pages are read often. */
    assert_int_equal(smgr_create(f->sm, REL_HOT, NULL, &f->err), KEEL_OK);
    pool_open(f, POOL);
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++) {
        int32_t id;
        blocknum_t blk;
        OK(f, buf_extend(f->s, REL_HOT, 0, NULL, &id, &blk));
        buf_mark_dirty(f->s, id);
        buf_unlock(f->s, id);
        buf_release(f->s, id);
    }
    for (int round = 0; round < 3; round++)
        for (blocknum_t b = 0; b < HOT_BLOCKS; b++) {
            OK(f, buf_read(f->s, REL_HOT, b, NULL, &hot[b]));
            buf_release(f->s, hot[b]);
        }

    memset(payload, 'p', sizeof(payload) - 1);
    payload[sizeof(payload) - 1] = '\0';
    OK(f, heap_bulk_begin(&f->rel, f->s, &bulk));
    for (int i = 0; i < N; i++) {
        keel_value v[3];
        tid t;
        mkrow(v, i, i, payload);
        OK(f, heap_bulk_insert(bulk, XID_FROZEN, v, &t));
        assert_true(tid_compare(prev, t) < 0);
        prev = t;
        /* Only the page being filled stays pinned. */
        assert_int_equal(buf_session_pinned(f->s), 1);
    }
    /* A too-big row changes nothing and keeps the state usable. */
    {
        keel_value v[3];
        char *big = malloc(BLOCK_SIZE + 1);
        tid t;
        assert_non_null(big);
        memset(big, 'x', BLOCK_SIZE);
        big[BLOCK_SIZE] = '\0';
        mkrow(v, -1, 0, big);
        assert_int_equal(heap_bulk_insert(bulk, XID_FROZEN, v, &t),
                         KEEL_ETOOBIG);
        free(big);
    }
    heap_bulk_end(bulk);
    heap_bulk_end(NULL);
    assert_int_equal(buf_session_pinned(f->s), 0);
    assert_true(nblocks(f) > 3 * POOL / 2);
    assert_int_equal(atomic_load(&f->rel.hint), nblocks(f) - 1);

    /* The load went round its ring: the hot pages are still where they
     * were, and few buffers hold heap pages. */
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++) {
        relnumber_t rel;
        blocknum_t blk;
        assert_int_equal(buf_pin(f->s, hot[b]), KEEL_OK);
        buf_block_of(f->pool, hot[b], &rel, &blk);
        buf_release(f->s, hot[b]);
        if (rel != REL_HOT || blk != b)
            fail_msg("hot block %u was evicted by the bulk load", b);
    }
    for (int32_t id = 0; id < POOL; id++) {
        relnumber_t rel;
        blocknum_t blk;
        assert_int_equal(buf_pin(f->s, id), KEEL_OK);
        buf_block_of(f->pool, id, &rel, &blk);
        buf_release(f->s, id);
        heap_buffers += rel == REL;
    }
    if (heap_buffers > POOL / 8 + SLACK)
        fail_msg("the bulk load occupies %u buffers; its ring has %u",
                 heap_buffers, POOL / 8);

    /* Everything is there. */
    reader_vis(f, &r);
    {
        int32_t *ids = calloc(N, sizeof(int32_t));
        assert_non_null(ids);
        assert_int_equal(scan_ids(f, &r.vis, ids, NULL, N), N);
        for (int i = 0; i < N; i++)
            assert_int_equal(ids[i], i);
        free(ids);
    }
    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    assert_quiet(f);
}

/* ------------------------------------------------------------------ */
/* Concurrency                                                        */
/* ------------------------------------------------------------------ */

enum { INS_THREADS = 4, INS_MAX_ROWS = 20000 };

typedef struct ins_worker {
    fixture *f;
    tu_failures *fl;
    int index;
    uint64_t deadline_ns;
    uint32_t rows; /* inserted and committed */
    bool bulk;     /* through a bulk insert state */
} ins_worker;

static void *ins_main(void *arg)
{
    ins_worker *w = arg;
    fixture *f = w->f;
    buf_session *s = NULL;
    heap_bulk *bulk = NULL;
    kerr err;
    char payload[64];

    if (buf_session_create(f->pool, &s, &err) != KEEL_OK) {
        tu_fail(w->fl, "session: %s", err.msg);
        return NULL;
    }
    if (w->bulk && heap_bulk_begin(&f->rel, s, &bulk) != KEEL_OK) {
        tu_fail(w->fl, "bulk: %s", buf_session_error(s)->msg);
        buf_session_destroy(s);
        return NULL;
    }
    while (w->rows < INS_MAX_ROWS && !tu_failed(w->fl) &&
           (w->rows < 100 || clock_now_ns() < w->deadline_ns)) {
        /* A transaction of up to 50 rows. */
        xid_t xid = txm_begin(f->tm);
        uint32_t batch = 1 + (w->rows * 7u + (uint32_t)w->index) % 50;
        for (uint32_t i = 0; i < batch; i++) {
            keel_value v[3];
            tid t;
            int rc;
            int32_t id = w->index * 1000000 + (int32_t)(w->rows + i);
            snprintf(payload, sizeof(payload), "thread %d row %u", w->index,
                     w->rows + i);
            mkrow(v, id, w->index, payload);
            rc = bulk != NULL ? heap_bulk_insert(bulk, xid, v, &t)
                              : heap_insert(&f->rel, s, xid, CID_FIRST, v, &t);
            if (rc != KEEL_OK) {
                tu_fail(w->fl, "insert: %s", buf_session_error(s)->msg);
                break;
            }
        }
        txm_end(f->tm, xid, XID_STATUS_COMMITTED);
        w->rows += batch;
    }
    heap_bulk_end(bulk);
    buf_session_destroy(s);
    return NULL;
}

static void test_concurrent_inserts(void **state)
{
    fixture *f = *state;
    ins_worker w[INS_THREADS];
    pthread_t th[INS_THREADS];
    tu_failures fl = TU_FAILURES_INIT;
    uint64_t deadline =
        clock_now_ns() + (uint64_t)(tu_stress_seconds(2.0) * 1e9 / 2);
    uint8_t *seen[INS_THREADS];
    uint32_t total = 0;
    tx r;
    heap_scan *sc;
    heap_row row;
    bool found;

    pool_open(f, 512);
    for (int i = 0; i < INS_THREADS; i++) {
        w[i] = (ins_worker){.f = f,
                            .fl = &fl,
                            .index = i,
                            .deadline_ns = deadline,
                            .bulk = i == 0};
        assert_int_equal(pthread_create(&th[i], NULL, ins_main, &w[i]), 0);
    }
    for (int i = 0; i < INS_THREADS; i++)
        pthread_join(th[i], NULL);
    tu_failures_check(&fl);

    for (int i = 0; i < INS_THREADS; i++) {
        seen[i] = calloc(w[i].rows, 1);
        assert_non_null(seen[i]);
        total += w[i].rows;
    }
    reader_vis(f, &r);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    OK(f, heap_scan_begin(&f->rel, f->s, &r.vis, &sc));
    for (uint32_t n = 0;; n++) {
        int32_t id, t, k;
        OK(f, heap_scan_next(sc, &row, &found));
        if (!found) {
            assert_int_equal(n, total);
            break;
        }
        id = row.values[0].v.i4;
        t = id / 1000000;
        k = id % 1000000;
        assert_true(t >= 0 && t < INS_THREADS);
        assert_true(k >= 0 && (uint32_t)k < w[t].rows);
        assert_true(row.values[1].v.i8 == t);
        if (seen[t][k])
            fail_msg("row %d of thread %d appears twice", k, t);
        seen[t][k] = 1;
    }
    heap_scan_end(sc);
    for (int i = 0; i < INS_THREADS; i++) {
        for (uint32_t k = 0; k < w[i].rows; k++)
            if (!seen[i][k])
                fail_msg("row %u of thread %d is missing", k, i);
        free(seen[i]);
    }
    heap_row_free(&row);
    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    assert_quiet(f);
}

enum { CTR_THREADS = 4, CTR_ROWS = 3 };

typedef struct ctr_shared {
    fixture *f;
    tu_failures fl;
    uint64_t deadline_ns;
    atomic_u64 tid_hint[CTR_ROWS]; /* a recent version's tid, packed */
} ctr_shared;

typedef struct ctr_worker {
    ctr_shared *sh;
    int index;
    uint64_t committed[CTR_ROWS]; /* increments this thread committed */
    uint64_t conflicts;
    uint64_t aborts;
} ctr_worker;

static uint64_t tid_pack(tid t)
{
    return ((uint64_t)t.block << 16) | t.offset;
}

static tid tid_unpack(uint64_t p)
{
    return (tid){.block = (blocknum_t)(p >> 16), .offset = (uint16_t)p};
}

/*
 * Finds row k's version visible to x: first at the shared hint (valid if
 * it is visible and is row k: a snapshot sees one version of each row),
 * else by scanning, which must find exactly one.
 */
static int ctr_find(ctr_shared *sh, buf_session *s, tx *x, int k, heap_row *row)
{
    fixture *f = sh->f;
    heap_scan *sc;
    bool found;
    int rc, hits = 0;
    tid t = tid_unpack(atomic_load(&sh->tid_hint[k]));

    rc = heap_fetch(&f->rel, s, &x->vis, t, row);
    if (rc == KEEL_OK && row->values[0].v.i4 == k)
        return KEEL_OK;
    if (rc != KEEL_OK && rc != KEEL_ENOENT)
        return rc;
    rc = heap_scan_begin(&f->rel, s, &x->vis, &sc);
    if (rc != KEEL_OK)
        return rc;
    for (;;) {
        rc = heap_scan_next(sc, row, &found);
        if (rc != KEEL_OK || !found)
            break;
        if (row->values[0].v.i4 == k) {
            t = row->tid;
            hits++;
        }
    }
    heap_scan_end(sc);
    if (rc != KEEL_OK)
        return rc;
    if (hits != 1) {
        tu_fail(&sh->fl, "xid %u sees %d versions of row %d", x->xid, hits, k);
        return KEEL_ECORRUPT;
    }
    return heap_fetch(&f->rel, s, &x->vis, t, row);
}

static void *ctr_main(void *arg)
{
    ctr_worker *w = arg;
    ctr_shared *sh = w->sh;
    fixture *f = sh->f;
    buf_session *s = NULL;
    heap_row row;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(w->index + 1);
    kerr err;

    if (buf_session_create(f->pool, &s, &err) != KEEL_OK) {
        tu_fail(&sh->fl, "session: %s", err.msg);
        return NULL;
    }
    if (heap_row_init(&row, &f->rel, &err) != KEEL_OK) {
        tu_fail(&sh->fl, "row: %s", err.msg);
        buf_session_destroy(s);
        return NULL;
    }
    while (!tu_failed(&sh->fl) && clock_now_ns() < sh->deadline_ns) {
        int k = (int)(tu_rand(&rng) % CTR_ROWS);
        bool commit = tu_rand(&rng) % 4 != 0;
        keel_value v[3];
        tid nt;
        tx x;
        int rc;

        tx_begin(f->tm, &x);
        rc = ctr_find(sh, s, &x, k, &row);
        if (rc != KEEL_OK) {
            tu_fail(&sh->fl, "find row %d: %s (%s)", k, keel_status_str(rc),
                    buf_session_error(s)->msg);
            tx_end(f->tm, &x, XID_STATUS_ABORTED);
            break;
        }
        mkrow(v, k, row.values[1].v.i8 + 1, "counter");
        rc = heap_update(&f->rel, s, &x.vis, x.xid, row.tid, v, &nt);
        if (rc == KEEL_ESERIALIZE) {
            w->conflicts++;
            tx_end(f->tm, &x, XID_STATUS_ABORTED);
            continue;
        }
        if (rc != KEEL_OK) {
            /* The version this snapshot sees is there to update: ENOENT
             * would mean a lost or doubled version. */
            tu_fail(&sh->fl, "update row %d: %s (%s)", k, keel_status_str(rc),
                    buf_session_error(s)->msg);
            tx_end(f->tm, &x, XID_STATUS_ABORTED);
            break;
        }
        if (buf_session_pinned(s) != 0)
            tu_fail(&sh->fl, "update left %u pins", buf_session_pinned(s));
        if (commit) {
            tx_end(f->tm, &x, XID_STATUS_COMMITTED);
            w->committed[k]++;
            atomic_store(&sh->tid_hint[k], tid_pack(nt));
        } else {
            tx_end(f->tm, &x, XID_STATUS_ABORTED);
            w->aborts++;
        }
    }
    heap_row_free(&row);
    buf_session_destroy(s);
    return NULL;
}

static void test_concurrent_counters(void **state)
{
    fixture *f = *state;
    ctr_shared sh = {.fl = TU_FAILURES_INIT};
    ctr_worker w[CTR_THREADS];
    pthread_t th[CTR_THREADS];
    uint64_t expect[CTR_ROWS] = {0}, conflicts = 0, updates = 0;
    tx r;
    heap_row row;

    sh.f = f;
    pool_open(f, 256);
    for (int k = 0; k < CTR_ROWS; k++) {
        tid t = ins(f, XID_FROZEN, k, 0, "counter");
        atomic_store(&sh.tid_hint[k], tid_pack(t));
    }
    sh.deadline_ns =
        clock_now_ns() + (uint64_t)(tu_stress_seconds(2.0) * 1e9 / 2);
    for (int i = 0; i < CTR_THREADS; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].sh = &sh;
        w[i].index = i;
        assert_int_equal(pthread_create(&th[i], NULL, ctr_main, &w[i]), 0);
    }
    for (int i = 0; i < CTR_THREADS; i++)
        pthread_join(th[i], NULL);
    tu_failures_check(&sh.fl);
    for (int i = 0; i < CTR_THREADS; i++) {
        for (int k = 0; k < CTR_ROWS; k++) {
            expect[k] += w[i].committed[k];
            updates += w[i].committed[k];
        }
        updates += w[i].aborts;
        conflicts += w[i].conflicts;
    }
    print_message("counters: %llu updates, %llu conflicts\n",
                  (unsigned long long)updates, (unsigned long long)conflicts);

    /* Each counter is the number of committed increments, and each row has
     * exactly one visible version. */
    reader_vis(f, &r);
    OK(f, heap_row_init(&row, &f->rel, &f->err));
    {
        heap_scan *sc;
        bool found;
        int hits[CTR_ROWS] = {0};
        OK(f, heap_scan_begin(&f->rel, f->s, &r.vis, &sc));
        for (;;) {
            int k;
            OK(f, heap_scan_next(sc, &row, &found));
            if (!found)
                break;
            k = row.values[0].v.i4;
            assert_true(k >= 0 && k < CTR_ROWS);
            hits[k]++;
            if ((uint64_t)row.values[1].v.i8 != expect[k])
                fail_msg("row %d: counter %lld, %llu increments committed", k,
                         (long long)row.values[1].v.i8,
                         (unsigned long long)expect[k]);
        }
        heap_scan_end(sc);
        for (int k = 0; k < CTR_ROWS; k++)
            assert_int_equal(hits[k], 1);
    }
    /* On the pages: one version per update plus the originals, less those
     * of aborted updates that a later update dropped (their line pointers
     * DEAD; the horizon is 0, so nothing else is pruned), and exactly one
     * live one (committed inserter, no committed deleter) per row. */
    {
        blocknum_t n = nblocks(f);
        uint64_t versions = 0, dropped = 0, aborts = 0;
        int live[CTR_ROWS] = {0};
        for (blocknum_t b = 0; b < n; b++) {
            page_buf p;
            read_page(f, b, &p);
            for (uint16_t off = 1; off <= heappage_nitems(p.b); off++) {
                heap_tuple_header h;
                size_t len;
                const void *item = heappage_get_item_const(p.b, off, &len);
                xid_status smin = XID_STATUS_ABORTED, smax = XID_STATUS_ABORTED;
                tid t = {.block = b, .offset = off};
                if (item == NULL) {
                    dropped +=
                        heappage_lp_state_of(heappage_get_lp(p.b, off)) ==
                        HEAPPAGE_LP_DEAD;
                    continue;
                }
                versions++;
                memcpy(&h, item, sizeof(h));
                OK(f, txm_status_fn(f->tm, h.xmin, &smin, &f->err));
                if (h.xmax != 0)
                    OK(f, txm_status_fn(f->tm, h.xmax, &smax, &f->err));
                if (smin == XID_STATUS_COMMITTED &&
                    smax != XID_STATUS_COMMITTED) {
                    OK(f, heap_fetch(&f->rel, f->s, &r.vis, t, &row));
                    live[row.values[0].v.i4]++;
                }
            }
        }
        for (int i = 0; i < CTR_THREADS; i++)
            aborts += w[i].aborts;
        assert_true(versions + dropped == CTR_ROWS + updates);
        assert_true(dropped == heap_pruned(&f->rel));
        assert_true(dropped <= aborts);
        for (int k = 0; k < CTR_ROWS; k++)
            assert_int_equal(live[k], 1);
    }
    heap_row_free(&row);
    tx_end(f->tm, &r, XID_STATUS_COMMITTED);
    assert_quiet(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_items),
        cmocka_unit_test(test_page_compact_many_deletes),
        cmocka_unit_test(test_page_remove_holes),
        cmocka_unit_test(test_page_verify_catches_damage),
        cmocka_unit_test(test_hot_page_states),
        cmocka_unit_test(test_update_op_redo),
        cmocka_unit_test(test_insert_op_redo),
        cmocka_unit_test(test_claim_op_redo),
        cmocka_unit_test(test_compact_op_redo),
        cmocka_unit_test(test_page_damage_refused),
        cmocka_unit_test_setup_teardown(test_roundtrip_every_type, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_many_rows_across_pages, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_new_page_is_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_visibility_matrix, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_own_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_updates_own_command, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fetch_cols, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_undo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_beside_busy_page, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_rows_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_prune_aborted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overwrite_aborted_claim, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_write_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_big_and_bad_values, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
#ifdef KEEL_FAULT_INJECTION
        cmocka_unit_test_setup_teardown(test_update_failure_restores, setup,
                                        teardown),
#endif
        cmocka_unit_test_setup_teardown(test_bulk_insert_ring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tid_guess, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_prepare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_inserts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_counters, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
