/*
 * test_split_stress.c: B-tree inserts that fail half-way through their
 * splits and put every level back, while other sessions read, scan and
 * delete.
 *
 * Writers insert distinct keys of about 1500 bytes (an int8 and a text
 * pad that follows from it) into one unique index in a small buffer pool:
 * a page holds four or five, so nearly every other insert splits, splits
 * climb several levels, and most pages are read back from the file.
 * Writer 0 also deletes every third of its own keys a while after
 * inserting it.  Readers look keys up (btree_search(), btree_lookup())
 * and range-scan around them.  Meanwhile a fault thread keeps arming one
 * failing read (EIO) or write (ENOSPC) of the index file at a random
 * point; whichever session makes that I/O gets the error: a search, a
 * delete, or an insert, which may fail after it split one or more levels
 * (reading a parent or an old right sibling, growing the file for a new
 * page, writing out a victim for it) and must then put every level back.
 *
 * Checked:
 *  - a failed insert leaves its key absent (a search finds nothing), and
 *    retrying the same key never gets KEEL_EEXIST; every fourth key whose
 *    insert failed is not retried, and nobody may ever see it;
 *  - a lookup of a key known present for its whole duration finds it
 *    exactly once with its own tid; of a deleted or abandoned key, none;
 *  - a scan returns strictly ascending keys (none twice), each with its
 *    writer's tid and pad, none abandoned, and finds the key it was started
 *    around when that key stayed present;
 *  - a failed delete leaves its key present;
 *  - the only errors are KEEL_EIO and KEEL_ENOSPC: a failed read gives EIO,
 *    a failed write ENOSPC, to whoever made the I/O, including a session
 *    that needed a buffer and had to write out a dirty victim first.
 *    KEEL_ENOENT is accepted only where it is an answer, not an error:
 *    btree_lookup() of an absent key, the end of a scan.  The pool is
 *    large enough that no session can find every buffer pinned, so
 *    KEEL_EEXHAUSTED is a failure too (the tree's height is checked
 *    against that bound at the end);
 *  - at the end, with no faults: every key whose insert succeeded and was
 *    not deleted is found exactly once by lookup, by a full scan and by
 *    btree_check(), which finds no problem and counts exactly those
 *    entries; and the same after a checkpoint, closing the pool and
 *    opening the index again from the file.
 *
 * Prints how many inserts failed and were retried or abandoned, and the
 * blocks of zeroes in the file (right halves of splits that were put back,
 * or new blocks a failed split could not get a buffer for); fails if fewer
 * than MIN_FAILED inserts failed or no split failed.  Runs for
 * tu_stress_seconds(2.0).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "access/btree.h"
#include "access/btree_page.h"
#include "access/tuple.h"
#include "port/clock.h"
#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "storage/page.h"
#include "storage/smgr.h"

#define REL_IDX  ((relnumber_t)30000)
#define NWRITERS 4
#define NREADERS 3
#define PAD_LEN  1500
#define MAXKEYS  (1u << 20) /* keys per writer at most */
/* Writer 0 deletes its key i - DELETE_LAG when that is a multiple of 3. */
#define DELETE_LAG 24
/* Attempts at one insert, delete or search before the test gives up. */
#define MAX_ATTEMPTS 50
/* Failed inserts the run must have seen. */
#define MIN_FAILED 5
/*
 * Pool size.  A writer holds at most three pins per level it splits (the
 * halves and the old right sibling) and two more (the parent it inserts
 * into, or the meta page and a new root); a reader at most two (a page and
 * its right sibling).  For trees of up to MAX_LEVELS levels PINS_MAX
 * bounds the pins held at once, and POOL_BUFFERS leaves a margin above it,
 * so the clock sweep always finds an unpinned buffer.
 */
#define MAX_LEVELS   16
#define PINS_MAX     ((3 * MAX_LEVELS + 2) * NWRITERS + 2 * NREADERS)
#define POOL_BUFFERS 256
_Static_assert(PINS_MAX + 2 * (NWRITERS + NREADERS) <= POOL_BUFFERS,
               "pool too small for the pins of MAX_LEVELS levels");

typedef tu_fixture fixture;

static int setup(void **state)
{
    tu_fixture_setup(state);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    if (f->pool != NULL)
        tu_assert_pool_quiet(f->pool);
    tu_pool_drop(f->pool, f->s, &f->err);
    tu_storage_close(f->dir, f->sm);
    free(f);
    return 0;
}

/* ---- keys: (int8 k, text pad) ------------------------------------------- */

#define KEY_MUL 2654435761u /* odd: a bijection of uint32_t */

/* The i-th key of writer w: scattered over the key space, the writers'
 * keys interleaved. */
static int64_t key_of(int w, uint32_t i)
{
    return (int64_t)(uint32_t)(i * KEY_MUL) * NWRITERS + w;
}

/* The inverse of KEY_MUL modulo 2^32 (Newton's iteration). */
static uint32_t key_mul_inverse(void)
{
    uint32_t x = KEY_MUL;

    for (int n = 0; n < 5; n++)
        x *= 2u - KEY_MUL * x;
    return x;
}

/* Which writer's which key k is; false if k is no key of any writer. */
static bool key_decode(int64_t k, int *w, uint32_t *i)
{
    if (k < 0 || k / NWRITERS > (int64_t)UINT32_MAX)
        return false;
    *w = (int)(k % NWRITERS);
    *i = (uint32_t)(k / NWRITERS) * key_mul_inverse();
    return *i < MAXKEYS;
}

static tid tid_of(int w, uint32_t i)
{
    return (tid){.block = (blocknum_t)(i / 100 + 1) + (blocknum_t)w * 1000000,
                 .offset = (uint16_t)(i % 100 + 1)};
}

static char pad_byte(int64_t k, int j)
{
    return (char)('a' + (uint64_t)(k + j) % 26);
}

/* vals[0] = k, vals[1] = the pad that follows from k (buf: PAD_LEN). */
static void make_key(int64_t k, keel_value *vals, char *buf)
{
    for (int j = 0; j < PAD_LEN; j++)
        buf[j] = pad_byte(k, j);
    vals[0] = (keel_value){.isnull = false, .v.i8 = k};
    vals[1] = (keel_value){.isnull = false, .v.s = {buf, PAD_LEN}};
}

static bool pad_ok(int64_t k, const keel_value *pad)
{
    if (pad->isnull || pad->v.s.len != PAD_LEN)
        return false;
    for (int j = 0; j < PAD_LEN; j++)
        if (pad->v.s.ptr[j] != pad_byte(k, j))
            return false;
    return true;
}

static bool fault_error(int rc)
{
    return rc == KEEL_EIO || rc == KEEL_ENOSPC;
}

/* ---- shared state ------------------------------------------------------- */

/* What is known of a key: set by its writer once its insert has ended,
 * and by writer 0 around a delete. */
enum {
    KEY_PENDING = 0, /* its insert has not ended */
    KEY_IN,          /* inserted, not being deleted */
    KEY_ABANDONED,   /* its insert failed and was not retried */
    KEY_DELETING,    /* writer 0 is deleting it */
    KEY_DELETED,
};

typedef struct shared {
    buf_pool *pool;
    btree *bt;
    uint64_t deadline; /* clock_now_ns() */
    atomic_int writers_done;
    _Atomic uint32_t hwm[NWRITERS]; /* writer w's keys < hwm have ended */
    _Atomic uint8_t *state[NWRITERS];
    atomic_ulong failed_inserts, retried, abandoned, deletes, failed_deletes,
        failed_reads;
    tu_failures fail;
} shared;

typedef struct worker {
    shared *sh;
    int id;
    uint64_t ops, scans;
} worker;

/*
 * Searches for writer w's key i, retrying after injected faults; the
 * number of entries found goes to *count, the first tid to *t.  Records
 * a failure and returns false on any other error.
 */
static bool search_key(shared *sh, buf_session *s, int w, uint32_t i,
                       uint32_t *count, tid *t)
{
    keel_value vals[2];
    char buf[PAD_LEN];
    tid got[4];
    int rc = KEEL_OK;

    make_key(key_of(w, i), vals, buf);
    for (int a = 0; a < MAX_ATTEMPTS; a++) {
        rc = btree_search(sh->bt, s, vals, got, 4, count);
        if (rc == KEEL_OK) {
            *t = got[0];
            return true;
        }
        if (!fault_error(rc))
            break;
        atomic_fetch_add(&sh->failed_reads, 1);
    }
    tu_fail(&sh->fail, "search of writer %d's key %u: %s (%.200s)", w, i,
            keel_status_str(rc), buf_session_error(s)->msg);
    return false;
}

/* Whether writer w's key i is there exactly once with its tid (want 1),
 * or not at all (want 0); records a failure if not. */
static bool expect_key(shared *sh, buf_session *s, int w, uint32_t i,
                       uint32_t want, const char *why)
{
    uint32_t count = 0;
    tid t = {0, 0};

    if (!search_key(sh, s, w, i, &count, &t))
        return false;
    if (count != want || (want == 1 && tid_compare(t, tid_of(w, i)) != 0)) {
        tu_fail(&sh->fail,
                "writer %d's key %u %s: %u entries found (first (%u,%u))", w, i,
                why, count, count > 0 ? t.block : 0, count > 0 ? t.offset : 0);
        return false;
    }
    return true;
}

/* ---- writers ------------------------------------------------------------ */

/* Writer 0 deletes its key i (present, in state KEY_IN), retrying after
 * injected faults; a failed delete must leave the key there. */
static bool delete_key(shared *sh, buf_session *s, uint32_t i)
{
    keel_value vals[2];
    char buf[PAD_LEN];
    int rc = KEEL_OK;

    atomic_store(&sh->state[0][i], KEY_DELETING);
    make_key(key_of(0, i), vals, buf);
    for (int a = 0; a < MAX_ATTEMPTS; a++) {
        rc = btree_delete(sh->bt, s, vals, tid_of(0, i));
        if (rc == KEEL_OK) {
            atomic_store(&sh->state[0][i], KEY_DELETED);
            atomic_fetch_add(&sh->deletes, 1);
            return true;
        }
        if (!fault_error(rc))
            break;
        atomic_fetch_add(&sh->failed_deletes, 1);
        if (!expect_key(sh, s, 0, i, 1, "after a failed delete"))
            return false;
    }
    tu_fail(&sh->fail, "delete of key %u: %s (%.200s)", i, keel_status_str(rc),
            buf_session_error(s)->msg);
    return false;
}

/*
 * Inserts writer w's key i until it succeeds; after each failure the key
 * must be absent.  Every fourth key is given up after its first failure.
 * Returns the key's state, or KEY_PENDING after recording a failure.
 */
static int insert_key(shared *sh, buf_session *s, int w, uint32_t i)
{
    keel_value vals[2];
    char buf[PAD_LEN];
    int rc = KEEL_OK;

    make_key(key_of(w, i), vals, buf);
    for (int a = 0; a < MAX_ATTEMPTS; a++) {
        rc = btree_insert(sh->bt, s, vals, tid_of(w, i), NULL, NULL);
        if (rc == KEEL_OK)
            return KEY_IN;
        if (!fault_error(rc)) {
            tu_fail(&sh->fail, "writer %d's key %u, attempt %d: %s (%.200s)", w,
                    i, a + 1, keel_status_str(rc), buf_session_error(s)->msg);
            return KEY_PENDING;
        }
        atomic_fetch_add(&sh->failed_inserts, 1);
        if (!expect_key(sh, s, w, i, 0, "after a failed insert"))
            return KEY_PENDING;
        if (i % 4 == 3) {
            atomic_fetch_add(&sh->abandoned, 1);
            return KEY_ABANDONED;
        }
        atomic_fetch_add(&sh->retried, 1);
    }
    tu_fail(&sh->fail, "writer %d's key %u: %d failed inserts, the last %s", w,
            i, MAX_ATTEMPTS, keel_status_str(rc));
    return KEY_PENDING;
}

static void *writer_main(void *arg)
{
    worker *wk = arg;
    shared *sh = wk->sh;
    buf_session *s = NULL;
    kerr e;

    if (buf_session_create(sh->pool, &s, &e) != KEEL_OK) {
        tu_fail(&sh->fail, "writer %d: no session: %s", wk->id, e.msg);
        goto out;
    }
    for (uint32_t i = 0; i < MAXKEYS && !tu_failed(&sh->fail); i++) {
        int st;

        if ((i & 15) == 0 && clock_now_ns() > sh->deadline)
            break;
        st = insert_key(sh, s, wk->id, i);
        if (st == KEY_PENDING)
            break;
        atomic_store(&sh->state[wk->id][i], (uint8_t)st);
        atomic_store(&sh->hwm[wk->id], i + 1);
        wk->ops++;
        if (wk->id == 0 && i >= DELETE_LAG && (i - DELETE_LAG) % 3 == 0 &&
            atomic_load(&sh->state[0][i - DELETE_LAG]) == KEY_IN &&
            !delete_key(sh, s, i - DELETE_LAG))
            break;
    }
out:
    buf_session_destroy(s);
    atomic_fetch_add(&sh->writers_done, 1);
    return NULL;
}

/* ---- readers ------------------------------------------------------------ */

/*
 * Checks one entry a scan returned: a key of some writer, with that
 * writer's tid and pad, whose insert did not fail for good, and above the
 * previous one (*prev).
 */
static bool scan_entry_ok(shared *sh, tid t, const keel_value *got,
                          int64_t *prev, char *msg, size_t msgsz)
{
    int64_t k = got[0].v.i8;
    uint32_t i;
    int w;

    if (got[0].isnull || k <= *prev) {
        snprintf(msg, msgsz, "scan: key %lld after %lld", (long long)k,
                 (long long)*prev);
        return false;
    }
    *prev = k;
    if (!key_decode(k, &w, &i)) {
        snprintf(msg, msgsz, "scan: key %lld is no writer's", (long long)k);
        return false;
    }
    if (tid_compare(t, tid_of(w, i)) != 0 || !pad_ok(k, &got[1])) {
        snprintf(msg, msgsz, "scan: writer %d's key %u with tid (%u,%u)%s", w,
                 i, t.block, t.offset,
                 pad_ok(k, &got[1]) ? "" : " and a wrong pad");
        return false;
    }
    if (atomic_load(&sh->state[w][i]) == KEY_ABANDONED) {
        snprintf(msg, msgsz, "scan: writer %d's key %u, whose insert failed", w,
                 i);
        return false;
    }
    return true;
}

/*
 * Scans the keys within 2^26 of writer w's key i, which was present when
 * the scan began: checks every entry, and that the key is among them if it
 * is still present at the end.  Injected faults end a scan early.
 */
static bool reader_scan(shared *sh, buf_session *s, int w, uint32_t i,
                        char *msg, size_t msgsz)
{
    int64_t k = key_of(w, i);
    keel_value lo = {.isnull = false, .v.i8 = k - (INT64_C(1) << 26)};
    keel_value hi = {.isnull = false, .v.i8 = k + (INT64_C(1) << 26)};
    btree_bound lb = {.vals = &lo, .ncols = 1, .inclusive = true};
    btree_bound ub = {.vals = &hi, .ncols = 1, .inclusive = true};
    btree_scan *sc = NULL;
    keel_value got[2];
    int64_t prev = INT64_MIN;
    bool seen = false;
    tid t;
    int rc;

    rc = btree_scan_begin(sh->bt, s, &lb, &ub, &sc);
    if (rc != KEEL_OK) {
        snprintf(msg, msgsz, "scan_begin: %s (%.200s)", keel_status_str(rc),
                 buf_session_error(s)->msg);
        return false;
    }
    while ((rc = btree_scan_next(sc, &t, got)) == KEEL_OK) {
        if (got[0].v.i8 < lo.v.i8 || got[0].v.i8 > hi.v.i8) {
            snprintf(msg, msgsz, "scan: key %lld out of range",
                     (long long)got[0].v.i8);
            btree_scan_end(sc);
            return false;
        }
        if (!scan_entry_ok(sh, t, got, &prev, msg, msgsz)) {
            btree_scan_end(sc);
            return false;
        }
        seen |= got[0].v.i8 == k;
    }
    btree_scan_end(sc);
    if (fault_error(rc)) {
        atomic_fetch_add(&sh->failed_reads, 1);
        return true;
    }
    if (rc != KEEL_ENOENT) {
        snprintf(msg, msgsz, "scan_next: %s (%.200s)", keel_status_str(rc),
                 buf_session_error(s)->msg);
        return false;
    }
    if (!seen && atomic_load(&sh->state[w][i]) == KEY_IN) {
        snprintf(msg, msgsz, "scan around writer %d's key %u missed it", w, i);
        return false;
    }
    return true;
}

static void *reader_main(void *arg)
{
    worker *wk = arg;
    shared *sh = wk->sh;
    buf_session *s = NULL;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(wk->id + 1);
    keel_value vals[2];
    char buf[PAD_LEN], msg[320];
    kerr e;

    if (buf_session_create(sh->pool, &s, &e) != KEEL_OK) {
        tu_fail(&sh->fail, "reader %d: no session: %s", wk->id, e.msg);
        return NULL;
    }
    while (atomic_load(&sh->writers_done) < NWRITERS && !tu_failed(&sh->fail)) {
        int w = (int)(tu_rand(&rng) % NWRITERS);
        uint32_t hwm = atomic_load(&sh->hwm[w]), i, count = 0;
        int before, after, rc;
        tid got[4];

        if (hwm == 0)
            continue;
        /* Mostly the newest keys: their leaves split the most lately. */
        i = (tu_rand(&rng) & 1)
                ? hwm - 1 - (uint32_t)(tu_rand(&rng) % (hwm < 64 ? hwm : 64))
                : (uint32_t)(tu_rand(&rng) % hwm);
        make_key(key_of(w, i), vals, buf);
        before = atomic_load(&sh->state[w][i]);
        if (wk->ops % 2 == 0) {
            rc = btree_search(sh->bt, s, vals, got, 4, &count);
        } else {
            rc = btree_lookup(sh->bt, s, vals, &got[0]);
            count = rc == KEEL_OK;
            if (rc == KEEL_ENOENT)
                rc = KEEL_OK;
        }
        after = atomic_load(&sh->state[w][i]);
        wk->ops++;
        if (fault_error(rc)) {
            atomic_fetch_add(&sh->failed_reads, 1);
            continue;
        }
        if (rc != KEEL_OK) {
            tu_fail(&sh->fail, "reader %d, writer %d's key %u: %s (%.200s)",
                    wk->id, w, i, keel_status_str(rc),
                    buf_session_error(s)->msg);
            break;
        }
        /* A key in one state before and after the lookup was in it all
         * along: present exactly once, or absent for good. */
        if (before == after &&
            ((before == KEY_IN &&
              (count != 1 || tid_compare(got[0], tid_of(w, i)) != 0)) ||
             ((before == KEY_ABANDONED || before == KEY_DELETED) &&
              count != 0))) {
            tu_fail(&sh->fail,
                    "reader %d, writer %d's key %u (state %d): %u entries, "
                    "first (%u,%u)",
                    wk->id, w, i, before, count, count ? got[0].block : 0,
                    count ? got[0].offset : 0);
            break;
        }
        if (before == KEY_IN && wk->ops % 16 == 0) {
            wk->scans++;
            if (!reader_scan(sh, s, w, i, msg, sizeof(msg))) {
                tu_fail(&sh->fail, "reader %d: %s", wk->id, msg);
                break;
            }
        }
    }
    buf_session_destroy(s);
    return NULL;
}

/* ---- faults ------------------------------------------------------------- */

typedef struct faulter {
    shared *sh;
    uint64_t armed, delivered;
} faulter;

/* Keeps one failing read or write of the index armed at a random point
 * until the writers are done, counting the faults delivered. */
static void *faulter_main(void *arg)
{
    faulter *ft = arg;
    shared *sh = ft->sh;
    uint64_t rng = 12345;

    while (atomic_load(&sh->writers_done) < NWRITERS) {
        uint64_t x = tu_rand(&rng);
        fault_op op = (x & 1) ? FAULT_OP_WRITE : FAULT_OP_READ;

        if (op == FAULT_OP_WRITE)
            fault_arm(op, FAULT_ENOSPC, (uint32_t)(x >> 8) % 16, 1, REL_IDX);
        else
            fault_arm(op, FAULT_EIO, (uint32_t)(x >> 8) % 64, 1, REL_IDX);
        ft->armed++;
        clock_sleep_us(1000);
        fault_disarm_all();
        ft->delivered += fault_delivered(op);
    }
    return NULL;
}

/* ---- the final checks --------------------------------------------------- */

typedef struct final_check {
    shared *sh;
    uint64_t entries; /* entries btree_check() passed on */
    uint64_t bad;     /* of them, not a present key with its tid and pad */
    uint64_t shown;   /* problems printed */
    char first[200];
} final_check;

/* btree_check()'s entry callback: each entry a present key of a writer. */
static void on_entry(void *ctx, const keel_value *keys, tid t, bool dead)
{
    final_check *fc = ctx;
    uint32_t i;
    int w;

    fc->entries++;
    if (dead || keys[0].isnull || !key_decode(keys[0].v.i8, &w, &i) ||
        i >= atomic_load(&fc->sh->hwm[w]) ||
        atomic_load(&fc->sh->state[w][i]) != KEY_IN ||
        tid_compare(t, tid_of(w, i)) != 0 || !pad_ok(keys[0].v.i8, &keys[1])) {
        if (fc->bad++ == 0)
            snprintf(fc->first, sizeof(fc->first),
                     "key %lld with tid (%u,%u)%s", (long long)keys[0].v.i8,
                     t.block, t.offset, dead ? ", marked dead" : "");
    }
}

static void on_problem(void *ctx, const char *line)
{
    final_check *fc = ctx;

    if (fc->shown++ < 5)
        print_message("problem: %s\n", line);
}

/* Root level of the index, from its meta page. */
static uint32_t root_level(fixture *f)
{
    int32_t id;
    bt_meta m;

    TU_SESSION_OK(f->s, buf_read(f->s, REL_IDX, BT_META_BLOCK, NULL, &id));
    buf_lock(f->s, id, LW_SHARED);
    memcpy(&m, (char *)buf_page(f->pool, id) + PAGE_HEADER_SIZE, sizeof(m));
    buf_unlock_release(f->s, id);
    assert_int_equal(m.magic, BT_MAGIC);
    return m.level;
}

/* Blocks of the index that are pages of zeroes. */
static uint64_t zero_blocks(fixture *f)
{
    smgr_rel *r = NULL;
    uint64_t n = 0;
    blocknum_t nblocks;

    assert_int_equal(smgr_rel_open(f->sm, REL_IDX, &r, &f->err), KEEL_OK);
    nblocks = smgr_nblocks(r);
    for (blocknum_t b = 1; b < nblocks; b++) {
        int32_t id;

        TU_SESSION_OK(f->s, buf_read(f->s, REL_IDX, b, NULL, &id));
        buf_lock(f->s, id, LW_SHARED);
        n += page_is_new(buf_page(f->pool, id));
        buf_unlock_release(f->s, id);
    }
    return n;
}

/*
 * With nothing else running: every key of every writer is found as its
 * state says, a full scan and btree_check() find exactly the present keys,
 * and the checker finds no problem.  Returns the number of present keys.
 */
static uint64_t check_all(fixture *f, shared *sh)
{
    final_check fc = {.sh = sh};
    uint64_t present = 0, scanned = 0, problems = 0;
    btree_scan *sc = NULL;
    keel_value got[2];
    int64_t prev = INT64_MIN;
    char msg[320];
    tid t;
    int rc;

    for (int w = 0; w < NWRITERS; w++) {
        uint32_t hwm = atomic_load(&sh->hwm[w]);

        for (uint32_t i = 0; i < hwm; i++) {
            int st = atomic_load(&sh->state[w][i]);

            assert_true(st == KEY_IN || st == KEY_ABANDONED ||
                        st == KEY_DELETED);
            present += st == KEY_IN;
            if (!expect_key(sh, f->s, w, i, st == KEY_IN, "at the end"))
                break;
        }
    }
    tu_failures_check(&sh->fail);

    TU_SESSION_OK(f->s, btree_scan_begin(sh->bt, f->s, NULL, NULL, &sc));
    while ((rc = btree_scan_next(sc, &t, got)) == KEEL_OK) {
        uint32_t i = 0;
        int w = 0;

        if (!scan_entry_ok(sh, t, got, &prev, msg, sizeof(msg))) {
            btree_scan_end(sc);
            fail_msg("full %s", msg);
        }
        assert_true(key_decode(got[0].v.i8, &w, &i));
        if (atomic_load(&sh->state[w][i]) != KEY_IN) {
            btree_scan_end(sc);
            fail_msg("full scan: writer %d's key %u, in state %d", w, i,
                     atomic_load(&sh->state[w][i]));
        }
        scanned++;
    }
    btree_scan_end(sc);
    if (rc != KEEL_ENOENT)
        fail_msg("full scan: %s (%s)", keel_status_str(rc),
                 buf_session_error(f->s)->msg);
    assert_int_equal(scanned, present);

    assert_int_equal(
        btree_check(f->s, REL_IDX, on_problem, on_entry, &fc, &problems),
        KEEL_OK);
    if (problems != 0 || fc.bad != 0)
        fail_msg("btree_check: %llu problems, %llu bad entries (first: %s)",
                 (unsigned long long)problems, (unsigned long long)fc.bad,
                 fc.first);
    assert_int_equal(fc.entries, present);
    return present;
}

/* ---- the test ----------------------------------------------------------- */

static void test_split_undo_under_concurrency(void **state)
{
    fixture *f = *state;
    tuple_desc *d = tupdesc_alloc(2);
    shared *sh = calloc(1, sizeof(*sh));
    worker w[NWRITERS + NREADERS];
    pthread_t th[NWRITERS + NREADERS], fth;
    faulter ft;
    uint64_t present, zeroes, inserted = 0, scans = 0;
    uint32_t level;

    assert_non_null(d);
    assert_non_null(sh);
    assert_int_equal(tupdesc_set(d, 0, KEEL_INT8, 0, true, &f->err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 1, KEEL_TEXT, 0, true, &f->err), KEEL_OK);
    sh->fail = (tu_failures)TU_FAILURES_INIT;
    for (int i = 0; i < NWRITERS; i++) {
        sh->state[i] = calloc(MAXKEYS, sizeof(*sh->state[i]));
        assert_non_null(sh->state[i]);
    }
    tu_pool_open(f->sm, POOL_BUFFERS, &f->pool, &f->s, &f->err);
    sh->pool = f->pool;
    TU_SESSION_OK(f->s, btree_create(f->s, REL_IDX, d, true, &sh->bt));

    sh->deadline = clock_now_ns() + (uint64_t)(tu_stress_seconds(2.0) * 1e9);
    ft = (faulter){.sh = sh};
    for (int i = 0; i < NWRITERS + NREADERS; i++) {
        w[i] = (worker){.sh = sh, .id = i < NWRITERS ? i : i - NWRITERS};
        assert_int_equal(
            pthread_create(&th[i], NULL,
                           i < NWRITERS ? writer_main : reader_main, &w[i]),
            0);
    }
    assert_int_equal(pthread_create(&fth, NULL, faulter_main, &ft), 0);
    for (int i = 0; i < NWRITERS + NREADERS; i++)
        pthread_join(th[i], NULL);
    pthread_join(fth, NULL);
    fault_disarm_all();
    tu_failures_check(&sh->fail);

    for (int i = 0; i < NWRITERS; i++)
        inserted += w[i].ops;
    for (int i = NWRITERS; i < NWRITERS + NREADERS; i++)
        scans += w[i].scans;
    level = root_level(f);
    present = check_all(f, sh);
    zeroes = zero_blocks(f);
    print_message(
        "%llu keys (%llu present, %lu deleted), root at level %u; "
        "%lu inserts failed: %lu retried, %lu keys abandoned; "
        "%lu deletes and %lu reads failed; %llu of %llu faults "
        "delivered; %llu scans; %llu blocks of zeroes\n",
        (unsigned long long)inserted, (unsigned long long)present,
        atomic_load(&sh->deletes), level, atomic_load(&sh->failed_inserts),
        atomic_load(&sh->retried), atomic_load(&sh->abandoned),
        atomic_load(&sh->failed_deletes), atomic_load(&sh->failed_reads),
        (unsigned long long)ft.delivered, (unsigned long long)ft.armed,
        (unsigned long long)scans, (unsigned long long)zeroes);
    assert_true(level < MAX_LEVELS);
    assert_true(atomic_load(&sh->failed_inserts) >= MIN_FAILED);
    assert_true(zeroes > 0);
    assert_true(atomic_load(&sh->deletes) > 0);

    /* What reaches the file is the same tree. */
    btree_close(sh->bt);
    sh->bt = NULL;
    TU_SESSION_OK(f->s, buf_checkpoint(f->s));
    tu_pool_close(&f->pool, &f->s, &f->err);
    tu_pool_open(f->sm, POOL_BUFFERS, &f->pool, &f->s, &f->err);
    TU_SESSION_OK(f->s, btree_open(f->s, REL_IDX, &sh->bt));
    assert_int_equal(root_level(f), level);
    assert_int_equal(check_all(f, sh), present);
    assert_int_equal(zero_blocks(f), zeroes);

    btree_close(sh->bt);
    tupdesc_free(d);
    for (int i = 0; i < NWRITERS; i++)
        free((void *)sh->state[i]);
    free(sh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_split_undo_under_concurrency,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
