/*
 * test_btree_concurrent.c: the B-tree under concurrent sessions.
 *
 * 1. Writers insert distinct keys (long enough that pages hold few, so
 *    splits happen at every level, new roots included) while readers look
 *    up keys already inserted (each writer publishes how far it got with
 *    an atomic high-water mark) and must always find them, exactly once,
 *    and range-scan around them checking order.  Lehman-Yao right-links
 *    are what make this work: a reader holding one page at a time must
 *    never be lost by a split.
 *    The same again with an index on the integer column alone, whose
 *    readers take the integer path of btree_lookup(), btree_lookup_heap()
 *    and btree_search_heap() in turn (the latter two reading the
 *    separators' tids and guessing rows while pages split: same answers,
 *    and the guesses are tids), the latter two also entered from each
 *    reader's directory (btree_dir), which the splits keep making stale.
 * 2. Threads insert the same keys into a unique index at the same time:
 *    exactly one insert per key succeeds, the others get KEEL_EUNIQUE.
 *
 * Each ends with the structural checker (no problems) and every key found
 * exactly once.  Runs for tu_stress_seconds(2.0) at most; no timing is
 * asserted.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "access/btree.h"
#include "access/heapam.h"
#include "access/tuple.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"

#define REL_IDX  ((relnumber_t)30000)
#define NWRITERS 3
#define NREADERS 3
#define PAD_LEN  180

typedef tu_fixture fixture;

/* A fixture with a pool of 96 buffers open. */
static int setup(void **state)
{
    fixture *f;

    tu_fixture_setup(state);
    f = *state;
    tu_pool_open(f->sm, 96, &f->pool, &f->s, &f->err);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    tu_assert_pool_quiet(f->pool);
    tu_pool_drop(f->pool, f->s, &f->err);
    tu_storage_close(f->dir, f->sm);
    free(f);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- keys: (int8 k, text pad) ------------------------------------------- */

/* The i-th key of writer w: a bijection of i, scattered over the key
 * space, interleaved between writers. */
static int64_t key_of(int w, uint32_t i)
{
    return (int64_t)(uint32_t)(i * 2654435761u) * NWRITERS + w;
}

static tid tid_of(int w, uint32_t i)
{
    return (tid){.block = (blocknum_t)(i / 100 + 1) + (blocknum_t)w * 1000000,
                 .offset = (uint16_t)(i % 100 + 1)};
}

/* vals[0] = k, vals[1] = a pad that follows from k (buf: PAD_LEN bytes). */
static void make_key(int64_t k, keel_value *vals, char *buf)
{
    for (int i = 0; i < PAD_LEN; i++)
        buf[i] = (char)('a' + (uint64_t)(k + i) % 26);
    vals[0] = (keel_value){.isnull = false, .v.i8 = k};
    vals[1] = (keel_value){.isnull = false, .v.s = {buf, PAD_LEN}};
}

/* The key (int8, text), or with int_only the int8 column alone (the index
 * then takes the integer lookup path). */
static tuple_desc *key_desc(bool int_only)
{
    tuple_desc *d = tupdesc_alloc(int_only ? 1 : 2);
    kerr e;

    assert_non_null(d);
    assert_int_equal(tupdesc_set(d, 0, KEEL_INT8, 0, true, &e), KEEL_OK);
    if (!int_only)
        assert_int_equal(tupdesc_set(d, 1, KEEL_TEXT, 0, true, &e), KEEL_OK);
    return d;
}

/* ---- 1: writers and readers --------------------------------------------- */

typedef struct shared {
    buf_pool *pool;
    btree *bt;
    bool int_key;  /* the index is on the int8 column alone */
    heap_rel heap; /* for btree_lookup_heap(): rows of the key's type */
    double deadline;
    atomic_int writers_done;
    _Atomic uint32_t hwm[NWRITERS]; /* writer w inserted its keys < hwm */
    tu_failures fail;
} shared;

typedef struct worker {
    shared *sh;
    int id;
    uint64_t ops;
    btree_dir_stats dir; /* a reader's directory, at its end */
} worker;

static void *writer_main(void *arg)
{
    worker *wk = arg;
    shared *sh = wk->sh;
    buf_session *s = NULL;
    keel_value vals[2];
    char buf[PAD_LEN];
    kerr e;

    if (buf_session_create(sh->pool, &s, &e) != KEEL_OK) {
        tu_fail(&sh->fail, "writer: no session");
        goto out;
    }
    for (uint32_t i = 0; i < 2000000; i++) {
        int rc;
        if ((i & 15) == 0 && now_s() > sh->deadline)
            break;
        make_key(key_of(wk->id, i), vals, buf);
        rc = btree_insert(sh->bt, s, vals, tid_of(wk->id, i), NULL, NULL);
        if (rc != KEEL_OK) {
            tu_fail(&sh->fail, "writer %d insert %u: %.200s", wk->id, i,
                    buf_session_error(s)->msg);
            break;
        }
        atomic_store_explicit(&sh->hwm[wk->id], i + 1, memory_order_release);
        wk->ops++;
    }
out:
    buf_session_destroy(s);
    atomic_fetch_add(&sh->writers_done, 1);
    return NULL;
}

/* Scans keys [k - span, k + span]: ascending (key, tid), k present. */
static bool reader_scan(shared *sh, buf_session *s, int64_t k, tid want,
                        char *msg, size_t msgsz)
{
    keel_value lo = {.isnull = false, .v.i8 = k - 50000000};
    keel_value hi = {.isnull = false, .v.i8 = k + 50000000};
    btree_bound lb = {.vals = &lo, .ncols = 1, .inclusive = true};
    btree_bound ub = {.vals = &hi, .ncols = 1, .inclusive = false};
    btree_scan *sc = NULL;
    keel_value got[2];
    int64_t prev = INT64_MIN;
    bool seen = false;
    tid t;
    int rc;

    if (btree_scan_begin(sh->bt, s, &lb, &ub, &sc) != KEEL_OK) {
        snprintf(msg, msgsz, "scan_begin: %.200s", buf_session_error(s)->msg);
        return false;
    }
    while ((rc = btree_scan_next(sc, &t, got)) == KEEL_OK) {
        if (got[0].v.i8 <= prev || got[0].v.i8 < lo.v.i8 ||
            got[0].v.i8 >= hi.v.i8) {
            snprintf(msg, msgsz, "scan: key %lld after %lld (range %lld..)",
                     (long long)got[0].v.i8, (long long)prev,
                     (long long)lo.v.i8);
            btree_scan_end(sc);
            return false;
        }
        if (got[0].v.i8 == k)
            seen = tid_compare(t, want) == 0;
        prev = got[0].v.i8;
    }
    btree_scan_end(sc);
    if (rc != KEEL_ENOENT) {
        snprintf(msg, msgsz, "scan_next: %.200s", buf_session_error(s)->msg);
        return false;
    }
    if (!seen) {
        snprintf(msg, msgsz, "scan around %lld missed it", (long long)k);
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
    char buf[PAD_LEN], msg[256];
    /* Readers' directories hold the leaves' downlinks, or (odd readers,
     * 8 entries at most) those of a level further up. */
    btree_dir *dir = btree_dir_new(wk->id % 2 ? 8 : 0);
    kerr e;

    if (dir == NULL || buf_session_create(sh->pool, &s, &e) != KEEL_OK) {
        btree_dir_free(dir);
        tu_fail(&sh->fail, "reader: no session");
        return NULL;
    }
    while (atomic_load(&sh->writers_done) < NWRITERS && !tu_failed(&sh->fail)) {
        int w = (int)(tu_rand(&rng) % NWRITERS);
        uint32_t hwm = atomic_load_explicit(&sh->hwm[w], memory_order_acquire);
        uint32_t i;
        tid got[4], want;
        uint32_t count = 0;
        int64_t k;

        if (hwm == 0)
            continue;
        /* Mostly the newest keys: they sit where the splits are. */
        i = (tu_rand(&rng) & 1)
                ? hwm - 1 - (uint32_t)(tu_rand(&rng) % (hwm < 64 ? hwm : 64))
                : (uint32_t)(tu_rand(&rng) % hwm);
        k = key_of(w, i);
        want = tid_of(w, i);
        make_key(k, vals, buf);
        if (sh->int_key) {
            /* The integer path, right-links included: btree_lookup(),
             * btree_lookup_heap() and btree_search_heap() in turn, the
             * latter two from the root and from the reader's directory,
             * which splits keep making stale. */
            tid g = {0, 0};
            int rc = KEEL_OK;
            count = 1; /* what the searches must find */
            switch (wk->ops % 5) {
            case 0:
                rc = btree_lookup(sh->bt, s, vals, &got[0]);
                break;
            case 1:
            case 3:
                rc = btree_lookup_heap(sh->bt, s, vals, &sh->heap,
                                       wk->ops % 5 == 3 ? dir : NULL, &got[0],
                                       &g);
                break;
            default:
                rc = btree_search_heap(sh->bt, s, vals, &sh->heap,
                                       wk->ops % 5 == 4 ? dir : NULL, got, 4,
                                       &count, &g);
                break;
            }
            if (rc == KEEL_OK && count != 1) {
                tu_fail(&sh->fail, "search of key %lld: %u matches",
                        (long long)k, count);
                break;
            }
            if (g.block != 0 && !tid_valid(g)) {
                tu_fail(&sh->fail, "key %lld: guessed (%u,0)", (long long)k,
                        g.block);
                break;
            }
            if (rc != KEEL_OK || tid_compare(got[0], want) != 0) {
                tu_fail(&sh->fail,
                        "lookup of key %lld (writer %d #%u, hwm %u): %.150s",
                        (long long)k, w, i, hwm,
                        rc != KEEL_OK ? buf_session_error(s)->msg
                                      : "wrong tid");
                break;
            }
        } else if (btree_search(sh->bt, s, vals, got, 4, &count) != KEEL_OK) {
            tu_fail(&sh->fail, "search: %.200s", buf_session_error(s)->msg);
            break;
        }
        if (!sh->int_key && (count != 1 || tid_compare(got[0], want) != 0)) {
            tu_fail(&sh->fail, "key %lld (writer %d #%u, hwm %u): %u matches",
                    (long long)k, w, i, hwm, count);
            break;
        }
        if (wk->ops % 64 == 63 &&
            !reader_scan(sh, s, k, want, msg, sizeof(msg))) {
            tu_fail(&sh->fail, "%s", msg);
            break;
        }
        wk->ops++;
    }
    btree_dir_stats_get(dir, &wk->dir);
    btree_dir_free(dir);
    buf_session_destroy(s);
    return NULL;
}

static void on_problem(void *ctx, const char *line)
{
    uint64_t *n = ctx;

    if ((*n)++ < 5)
        print_message("problem: %s\n", line);
}

/* Writers insert, readers look up and scan, for the key of key_desc(). */
static void run_writers_and_readers(fixture *f, bool int_key)
{
    tuple_desc *d = key_desc(int_key);
    shared sh = {.fail = TU_FAILURES_INIT};
    worker w[NWRITERS + NREADERS];
    pthread_t th[NWRITERS + NREADERS];
    uint64_t problems = 0, shown = 0, total = 0;
    keel_value vals[2];
    char buf[PAD_LEN];

    sh.pool = f->pool;
    sh.int_key = int_key;
    /* No such relation: what a guess prefetches is never read. */
    heap_rel_init(&sh.heap, REL_IDX + 1, d);
    assert_int_equal(btree_create(f->s, REL_IDX, d, true, &sh.bt), KEEL_OK);
    sh.deadline = now_s() + tu_stress_seconds(2.0);
    for (int i = 0; i < NWRITERS + NREADERS; i++) {
        w[i] = (worker){.sh = &sh, .id = i < NWRITERS ? i : i - NWRITERS};
        assert_int_equal(
            pthread_create(&th[i], NULL,
                           i < NWRITERS ? writer_main : reader_main, &w[i]),
            0);
    }
    for (int i = 0; i < NWRITERS + NREADERS; i++)
        pthread_join(th[i], NULL);
    tu_failures_check(&sh.fail);
    for (int i = 0; i < NWRITERS; i++)
        total += w[i].ops;
    print_message("inserted %llu keys; readers did %llu, %llu, %llu ops\n",
                  (unsigned long long)total,
                  (unsigned long long)w[NWRITERS].ops,
                  (unsigned long long)w[NWRITERS + 1].ops,
                  (unsigned long long)w[NWRITERS + 2].ops);
    if (int_key) {
        for (int i = NWRITERS; i < NWRITERS + NREADERS; i++) {
            const btree_dir_stats *ds = &w[i].dir;
            print_message(
                "reader %d's directory: %llu lookups, %llu builds, "
                "%llu moves right, %llu back to the root, at the "
                "end %u entries to level %u\n",
                i - NWRITERS, (unsigned long long)ds->uses,
                (unsigned long long)ds->builds, (unsigned long long)ds->moves,
                (unsigned long long)ds->fallbacks, ds->entries, ds->level);
            /* Two lookups in five asked for it, and it was built. */
            assert_true(ds->uses >= 2 * (w[i].ops / 5));
            assert_true(ds->builds >= 1);
        }
    }

    /* Everything is there exactly once, and the tree is sound. */
    for (int wr = 0; wr < NWRITERS; wr++) {
        uint32_t hwm = atomic_load(&sh.hwm[wr]);
        assert_int_equal(hwm, w[wr].ops);
        for (uint32_t i = 0; i < hwm; i++) {
            tid got[2];
            uint32_t count = 0;
            make_key(key_of(wr, i), vals, buf);
            assert_int_equal(btree_search(sh.bt, f->s, vals, got, 2, &count),
                             KEEL_OK);
            assert_int_equal(count, 1);
            assert_int_equal(tid_compare(got[0], tid_of(wr, i)), 0);
        }
    }
    assert_int_equal(
        btree_check(f->s, REL_IDX, on_problem, NULL, &shown, &problems),
        KEEL_OK);
    assert_int_equal(problems, 0);
    btree_close(sh.bt);
    tupdesc_free(d);
}

static void test_writers_and_readers(void **state)
{
    run_writers_and_readers(*state, false);
}

/* The same with an index on the int8 column alone: readers use
 * btree_lookup(), whose integer path must follow right-links too. */
static void test_int_lookups_during_splits(void **state)
{
    run_writers_and_readers(*state, true);
}

/* ---- 2: the same keys into a unique index ------------------------------- */

#define NRACERS 4
#define NKEYS   3000

typedef struct race {
    buf_pool *pool;
    btree *bt;
    double deadline;
    atomic_int wins[NKEYS];    /* successful inserts per key */
    _Atomic int winner[NKEYS]; /* which racer won it */
    tu_failures fail;
    atomic_int unfinished; /* racers stopped by the deadline */
} race;

typedef struct racer {
    race *r;
    int id;
} racer;

static tid race_tid(int racer_id, int k)
{
    return (tid){.block = (blocknum_t)racer_id + 1,
                 .offset = (uint16_t)(k % 60000 + 1)};
}

static void *racer_main(void *arg)
{
    racer *rc_ = arg;
    race *r = rc_->r;
    buf_session *s = NULL;
    keel_value vals[2];
    char buf[PAD_LEN];
    kerr e;

    if (buf_session_create(r->pool, &s, &e) != KEEL_OK) {
        tu_fail(&r->fail, "racer %d: no session", rc_->id);
        return NULL;
    }
    for (int n = 0; n < NKEYS; n++) {
        /* Half go up, half come down: every key is contended. */
        int k = (rc_->id & 1) ? NKEYS - 1 - n : n;
        int rc;

        if ((n & 31) == 0 && now_s() > r->deadline) {
            atomic_fetch_add(&r->unfinished, 1);
            break;
        }
        make_key(k, vals, buf);
        rc = btree_insert(r->bt, s, vals, race_tid(rc_->id, k), NULL, NULL);
        if (rc == KEEL_OK) {
            atomic_fetch_add(&r->wins[k], 1);
            atomic_store(&r->winner[k], rc_->id);
        } else if (rc != KEEL_EUNIQUE) {
            tu_fail(&r->fail, "insert %d: %.200s", k,
                    buf_session_error(s)->msg);
            break;
        }
    }
    buf_session_destroy(s);
    return NULL;
}

static void test_unique_races(void **state)
{
    fixture *f = *state;
    tuple_desc *d = key_desc(false);
    race *r = calloc(1, sizeof(*r));
    racer rs[NRACERS];
    pthread_t th[NRACERS];
    uint64_t problems = 0, shown = 0;
    keel_value vals[2];
    char buf[PAD_LEN];

    assert_non_null(r);
    r->fail = (tu_failures)TU_FAILURES_INIT;
    r->pool = f->pool;
    r->deadline = now_s() + tu_stress_seconds(2.0);
    assert_int_equal(btree_create(f->s, REL_IDX + 1, d, true, &r->bt), KEEL_OK);
    for (int i = 0; i < NRACERS; i++) {
        rs[i] = (racer){.r = r, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, racer_main, &rs[i]), 0);
    }
    for (int i = 0; i < NRACERS; i++)
        pthread_join(th[i], NULL);
    tu_failures_check(&r->fail);
    for (int k = 0; k < NKEYS; k++) {
        tid got[4];
        uint32_t count = 0;
        int wins = atomic_load(&r->wins[k]);

        if (wins > 1)
            fail_msg("key %d inserted %d times", k, wins);
        make_key(k, vals, buf);
        assert_int_equal(btree_search(r->bt, f->s, vals, got, 4, &count),
                         KEEL_OK);
        assert_int_equal(count, (uint32_t)wins);
        if (wins == 1)
            assert_int_equal(
                tid_compare(got[0], race_tid(atomic_load(&r->winner[k]), k)),
                0);
        else if (atomic_load(&r->unfinished) == 0)
            fail_msg("key %d: no insert succeeded", k);
    }
    assert_int_equal(
        btree_check(f->s, REL_IDX + 1, on_problem, NULL, &shown, &problems),
        KEEL_OK);
    assert_int_equal(problems, 0);
    btree_close(r->bt);
    tupdesc_free(d);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_writers_and_readers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_int_lookups_during_splits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unique_races, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
