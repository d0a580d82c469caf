/*
 * test_buf_stress.c: the buffer pool under concurrent load.
 *
 * Several threads, each with its own session, hammer relations several
 * times larger than the pool with random reads, updates, long-held pins,
 * bulk-read scans, flushes and checkpoints, so that buffers are evicted
 * and reloaded all the time (reads go through buf_read(): plain, after a
 * buf_prefetch() plain and with BUF_READ_PREFETCHED, and with
 * BUF_READ_RECENT told the buffer that some block was last found in; half
 * the checking reads with BUF_READ_SHARED, which takes the shared content
 * lock with the pin).  Every page carries its identity (relation,
 * block) and an update counter; the test keeps, per page, an atomic count
 * of the updates it made.  What must hold throughout:
 *
 * - a page's contents always match its tag: the buffer returned for
 *   (rel, blk) holds that block's page;
 * - no update is lost: under its content lock a page's counter equals the
 *   number of updates made so far (updates are counted while the
 *   exclusive lock is still held), however often it was evicted;
 * - a pinned buffer is never evicted: a pin held across other operations
 *   still names the same block with the same contents, and reading that
 *   block again returns the same buffer;
 * - a failed call leaves nothing pinned (with a tiny pool, KEEL_EEXHAUSTED
 *   is allowed and the thread retries).
 *
 * At the end every pin is gone, no content lock is held, the pool closes
 * cleanly, and after reopening every page's counter equals its count.
 *
 * Worker threads never call cmocka; they record the first failure and the
 * main thread asserts after joining them.  Each run lasts
 * tu_stress_seconds(2.0) (KEEL_STRESS_SECONDS); KEEL_STRESS_SEED sets the
 * random seed.
 */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/atomics.h"
#include "port/clock.h"
#include "storage/bufmgr.h"
#include "storage/page.h"
#include "storage/smgr.h"

#define NREL     4
#define NBLK     256
#define REL_BASE ((relnumber_t)16384)
#define NPAGES   (NREL * NBLK)

/* Blocks per bulk-read scan. */
#define SCAN_LENGTH 16
/* Pins a worker may keep across operations. */
#define MAX_HELD 4
/* Thread 0 checkpoints this often (nanoseconds). */
#define CHECKPOINT_EVERY_NS 150000000

/* Pages carry a tu_page_body (testutil.h) whose value is the page's
 * update counter. */

typedef struct stress_config {
    const char *name;
    uint32_t nbuffers;
    int nthreads;
    int max_held;       /* pins each worker keeps across operations */
    bool exhaustion_ok; /* KEEL_EEXHAUSTED may happen (tiny pool) */
} stress_config;

typedef struct stress_run {
    const stress_config *cfg;
    buf_pool *pool;
    uint64_t deadline_ns;

    /* Updates made to each page (page index = rel index * NBLK + blk). */
    atomic_u64 expected[NPAGES];

    tu_failures fail;

    /* What was done, for the report and a sanity check. */
    atomic_u64 reads, updates, held_checks, scans, flushes, checkpoints,
        exhausted;
} stress_run;

#define RECENT_SLOTS 64

typedef struct worker {
    stress_run *run;
    buf_session *sess;
    buf_strategy *strategy;
    int index;
    uint64_t rng;

    /* Pins kept across other operations, each on a different block;
     * unused slots have id BUF_INVALID. */
    struct held_pin {
        int32_t id;
        relnumber_t rel;
        blocknum_t blk;
        uint32_t ops; /* operations left before it is checked and dropped */
    } held[MAX_HELD];

    /* The buffer some block hashing to each slot was last read from: what
     * a BUF_READ_RECENT read is told (often another block's, or stale). */
    int32_t recent[RECENT_SLOTS];
    uint64_t reads; /* reads made, which picks the way to read */
} worker;

static uint32_t page_index(relnumber_t rel, blocknum_t blk)
{
    return (rel - REL_BASE) * NBLK + blk;
}

/*
 * Checks, under a content lock on pinned buffer id, that it holds
 * (rel, blk), untorn, with exactly the counter the test expects.
 */
static bool check_page(worker *w, int32_t id, relnumber_t rel, blocknum_t blk,
                       const char *what)
{
    stress_run *run = w->run;
    tu_page_body b;
    uint64_t tail, want;
    relnumber_t trel;
    blocknum_t tblk;

    buf_block_of(run->pool, id, &trel, &tblk);
    if (trel != rel || tblk != blk) {
        tu_fail(&run->fail, "%s: buffer %d for (%u, %u) is tagged (%u, %u)",
                what, id, rel, blk, trel, tblk);
        return false;
    }
    tu_body_read(buf_page(run->pool, id), &b, &tail);
    if (b.rel != rel || b.blk != blk) {
        tu_fail(&run->fail, "%s: buffer %d for (%u, %u) holds page (%u, %u)",
                what, id, rel, blk, b.rel, b.blk);
        return false;
    }
    if (tail != b.value) {
        tu_fail(&run->fail, "%s: page (%u, %u) torn: counter %llu, tail %llu",
                what, rel, blk, (unsigned long long)b.value,
                (unsigned long long)tail);
        return false;
    }
    want = atomic_load_relaxed(&run->expected[page_index(rel, blk)]);
    if (b.value != want) {
        tu_fail(&run->fail,
                "%s: page (%u, %u) in buffer %d has counter %llu, "
                "expected %llu (an update was lost)",
                what, rel, blk, id, (unsigned long long)b.value,
                (unsigned long long)want);
        return false;
    }
    return true;
}

static void random_block(worker *w, relnumber_t *rel, blocknum_t *blk)
{
    uint64_t r = tu_rand(&w->rng);

    *rel = REL_BASE + (relnumber_t)(r % NREL);
    *blk = (blocknum_t)((r >> 8) % NBLK);
}

/* The held pin on (rel, blk), or NULL. */
static struct held_pin *held_find(worker *w, relnumber_t rel, blocknum_t blk)
{
    for (int i = 0; i < MAX_HELD; i++)
        if (w->held[i].id != BUF_INVALID && w->held[i].rel == rel &&
            w->held[i].blk == blk)
            return &w->held[i];
    return NULL;
}

/* Checks a held pin: still the same block, same contents; drops it. */
static void held_check_release(worker *w, struct held_pin *h)
{
    stress_run *run = w->run;
    int32_t id = h->id;
    uint64_t st = buf_state(run->pool, id);

    if (BUF_REFCOUNT(st) == 0 || !(st & BM_VALID))
        tu_fail(&run->fail,
                "held buffer %d: state %#llx (refcount 0 or invalid)", id,
                (unsigned long long)st);
    if (buf_pin_count(w->sess, id) != 1)
        tu_fail(&run->fail, "held buffer %d: session pin count %u, expected 1",
                id, buf_pin_count(w->sess, id));
    buf_lock(w->sess, id, LW_SHARED);
    check_page(w, id, h->rel, h->blk, "held pin");
    buf_unlock(w->sess, id);
    buf_release(w->sess, id);
    h->id = BUF_INVALID;
    atomic_fetch_add_explicit(&run->held_checks, 1, memory_order_relaxed);
}

/*
 * Reads (rel, blk), checking the answer; with share (and no strategy)
 * through the calls that return the buffer locked in shared mode too.
 * KEEL_EEXHAUSTED, where allowed, is retried after dropping the held pins
 * (so that the pool can drain) until the run's deadline; any other error
 * is a failure.  A failed call must leave the session's pins as they were.
 */
static int worker_read(worker *w, relnumber_t rel, blocknum_t blk,
                       buf_strategy *st, bool share, int32_t *id)
{
    stress_run *run = w->run;

    for (;;) {
        uint32_t pinned = buf_session_pinned(w->sess);
        uint32_t slot = (page_index(rel, blk) * 7) % RECENT_SLOTS;
        static const uint16_t lines[2] = {0, 4096};
        uint32_t shared = share ? BUF_READ_SHARED : 0;
        int rc;
        const kerr *e;

        /* Without a strategy, in turn: plain, after buf_prefetch() of the
         * block (whose buffer is then tried first) plain and with
         * BUF_READ_PREFETCHED, and from a remembered buffer. */
        switch (st != NULL ? 0 : w->reads++ % 4) {
        case 0:
            rc = buf_read(w->sess, rel, blk, &(buf_read_opts){.strategy = st},
                          id);
            if (rc == KEEL_OK && share)
                buf_lock(w->sess, *id, LW_SHARED);
            break;
        case 1:
            buf_prefetch(w->sess, rel, blk, lines, 2, blk);
            rc = share ? buf_read(w->sess, rel, blk,
                                  &(buf_read_opts){.flags = BUF_READ_SHARED,
                                                   .lines = lines,
                                                   .nlines = 2},
                                  id)
                       : buf_read(w->sess, rel, blk, NULL, id);
            break;
        case 2: {
            /* Every other time asked with another key (not pending, so
             * a plain read); every fourth, another block read in between,
             * which leaves the prefetch pending while other threads may
             * evict its buffer. */
            uint32_t key = blk + (uint32_t)((w->reads >> 2) & 1);
            buf_prefetch(w->sess, rel, blk, lines, 2, blk);
            if ((w->reads >> 3) & 1) {
                bool was = buf_prefetch_pending(w->sess, rel, blk, blk);
                int32_t other;
                if (buf_read(w->sess, rel, (blk + 1) % NBLK, NULL, &other) ==
                    KEEL_OK)
                    buf_release(w->sess, other);
                if (buf_prefetch_pending(w->sess, rel, blk, blk) != was) {
                    tu_fail(&run->fail,
                            "reading (%u, %u) changed whether (%u, %u)'s "
                            "prefetch is pending",
                            rel, (blk + 1) % NBLK, rel, blk);
                    return KEEL_EINVAL;
                }
            }
            /* Not pending when the block's bucket was empty. */
            if (buf_prefetch_pending(w->sess, rel, blk, key))
                rc = buf_read(
                    w->sess, rel, blk,
                    &(buf_read_opts){.flags = BUF_READ_PREFETCHED | shared},
                    id);
            else
                rc = buf_read(w->sess, rel, blk,
                              &(buf_read_opts){.flags = shared}, id);
            break;
        }
        default:
            buf_prefetch_buffer(w->sess, w->recent[slot], lines, 2);
            rc = buf_read(w->sess, rel, blk,
                          &(buf_read_opts){.flags = BUF_READ_RECENT | shared,
                                           .recent = w->recent[slot],
                                           .lines = lines,
                                           .nlines = 2},
                          id);
            break;
        }
        e = buf_session_error(w->sess);
        if (rc == KEEL_OK)
            w->recent[slot] = *id;

        if (rc == KEEL_OK) {
            atomic_fetch_add_explicit(&run->reads, 1, memory_order_relaxed);
            struct held_pin *h = held_find(w, rel, blk);
            if (h != NULL && *id != h->id) {
                tu_fail(&run->fail,
                        "(%u, %u) is pinned in buffer %d but buf_read "
                        "returned buffer %d",
                        rel, blk, h->id, *id);
                if (share)
                    buf_unlock_release(w->sess, *id);
                else
                    buf_release(w->sess, *id);
                return KEEL_EINVAL;
            }
            return KEEL_OK;
        }
        if (buf_session_pinned(w->sess) != pinned) {
            tu_fail(&run->fail,
                    "failed buf_read(%u, %u) (%s) changed the pinned "
                    "count from %u to %u",
                    rel, blk, keel_status_str(rc), pinned,
                    buf_session_pinned(w->sess));
            return rc;
        }
        if (e->code != rc) {
            tu_fail(&run->fail, "buf_read returned %s but recorded %s",
                    keel_status_str(rc), keel_status_str(e->code));
            return rc;
        }
        if (rc != KEEL_EEXHAUSTED || !run->cfg->exhaustion_ok) {
            tu_fail(&run->fail, "buf_read(%u, %u): %s: %s", rel, blk,
                    keel_status_str(rc), e->msg);
            return rc;
        }
        if (strstr(e->msg, "exhausted") == NULL) {
            tu_fail(&run->fail, "exhaustion message \"%s\"", e->msg);
            return rc;
        }
        atomic_fetch_add_explicit(&run->exhausted, 1, memory_order_relaxed);
        for (int i = 0; i < MAX_HELD; i++)
            if (w->held[i].id != BUF_INVALID)
                held_check_release(w, &w->held[i]);
        if (clock_now_ns() > run->deadline_ns)
            return rc; /* give up quietly: the run is over */
        sched_yield();
    }
}

/* Read + share lock + check: every other time the read takes the lock
 * itself (with the first pin, in one atomic), and one atomic gives both
 * back. */
static void op_read(worker *w)
{
    bool share = tu_rand(&w->rng) % 2 == 0;
    relnumber_t rel;
    blocknum_t blk;
    int32_t id;

    struct held_pin *h = &w->held[tu_rand(&w->rng) % MAX_HELD];

    /* Now and then read a held block: it must come back in its buffer. */
    if (h->id != BUF_INVALID && tu_rand(&w->rng) % 4 == 0) {
        rel = h->rel;
        blk = h->blk;
    } else {
        random_block(w, &rel, &blk);
    }
    if (worker_read(w, rel, blk, NULL, share, &id) != KEEL_OK)
        return;
    if (!share)
        buf_lock(w->sess, id, LW_SHARED);
    if (!buf_lock_held(w->sess, id) || buf_lock_held_exclusive(w->sess, id))
        tu_fail(&w->run->fail, "buffer %d: not locked shared after a read%s",
                id, share ? " that locks" : " and buf_lock()");
    check_page(w, id, rel, blk, share ? "locking read" : "shared read");
    if (share || tu_rand(&w->rng) % 2 == 0) {
        buf_unlock_release(w->sess, id);
    } else {
        buf_unlock(w->sess, id);
        buf_release(w->sess, id);
    }
}

/* Read + exclusive lock + increment + mark dirty; counted under the lock. */
static void op_update(worker *w)
{
    stress_run *run = w->run;
    relnumber_t rel;
    blocknum_t blk;
    int32_t id;

    random_block(w, &rel, &blk);
    if (worker_read(w, rel, blk, NULL, false, &id) != KEEL_OK)
        return;
    buf_lock(w->sess, id, LW_EXCLUSIVE);
    if (check_page(w, id, rel, blk, "update")) {
        void *page = buf_page(run->pool, id);
        tu_page_body b;
        uint64_t tail;

        tu_body_read(page, &b, &tail);
        tu_body_write(page, rel, blk, b.value + 1);
        buf_mark_dirty(w->sess, id);
        /* Nobody can write the page out while we hold it exclusively. */
        if (!(buf_state(run->pool, id) & BM_DIRTY))
            tu_fail(&run->fail, "buffer %d not dirty after buf_mark_dirty", id);
        atomic_fetch_add_explicit(&run->expected[page_index(rel, blk)], 1,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&run->updates, 1, memory_order_relaxed);
    }
    buf_unlock(w->sess, id);
    buf_release(w->sess, id);
}

/* Takes a pin to hold across the next few operations. */
static void op_hold(worker *w)
{
    struct held_pin *h = NULL;
    relnumber_t rel;
    blocknum_t blk;
    int32_t id;

    for (int i = 0; i < w->run->cfg->max_held && h == NULL; i++)
        if (w->held[i].id == BUF_INVALID)
            h = &w->held[i];
    if (h == NULL)
        return;
    random_block(w, &rel, &blk);
    if (held_find(w, rel, blk) != NULL)
        return;
    if (worker_read(w, rel, blk, NULL, false, &id) != KEEL_OK)
        return;
    /* worker_read may have dropped the held pins to get out of exhaustion;
     * h is free either way. */
    h->id = id;
    h->rel = rel;
    h->blk = blk;
    h->ops = 1 + (uint32_t)(tu_rand(&w->rng) % 48);
}

/* A short sequential scan through the session's bulk-read strategy. */
static void op_scan(worker *w)
{
    relnumber_t rel;
    blocknum_t start;

    random_block(w, &rel, &start);
    for (blocknum_t i = 0; i < SCAN_LENGTH && !tu_failed(&w->run->fail); i++) {
        blocknum_t blk = (start + i) % NBLK;
        int32_t id;

        if (worker_read(w, rel, blk, w->strategy, false, &id) != KEEL_OK)
            return;
        buf_lock(w->sess, id, LW_SHARED);
        check_page(w, id, rel, blk, "bulk read");
        buf_unlock(w->sess, id);
        buf_release(w->sess, id);
    }
    atomic_fetch_add_explicit(&w->run->scans, 1, memory_order_relaxed);
}

/* Writes out a random (pinned) page. */
static void op_flush(worker *w)
{
    relnumber_t rel;
    blocknum_t blk;
    int32_t id;
    int rc;

    random_block(w, &rel, &blk);
    if (worker_read(w, rel, blk, NULL, false, &id) != KEEL_OK)
        return;
    rc = buf_flush(w->sess, id);
    if (rc != KEEL_OK)
        tu_fail(&w->run->fail, "buf_flush(%u, %u): %s: %s", rel, blk,
                keel_status_str(rc), buf_session_error(w->sess)->msg);
    buf_release(w->sess, id);
    atomic_fetch_add_explicit(&w->run->flushes, 1, memory_order_relaxed);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    stress_run *run = w->run;
    uint64_t next_checkpoint = clock_now_ns() + CHECKPOINT_EVERY_NS;

    while (!tu_failed(&run->fail)) {
        uint64_t now = clock_now_ns();
        uint32_t dice;

        if (now >= run->deadline_ns)
            break;
        if (w->index == 0 && now >= next_checkpoint) {
            int rc = buf_checkpoint(w->sess);
            if (rc != KEEL_OK)
                tu_fail(&run->fail, "buf_checkpoint: %s: %s",
                        keel_status_str(rc), buf_session_error(w->sess)->msg);
            atomic_fetch_add_explicit(&run->checkpoints, 1,
                                      memory_order_relaxed);
            next_checkpoint = clock_now_ns() + CHECKPOINT_EVERY_NS;
        }

        dice = (uint32_t)(tu_rand(&w->rng) % 100);
        if (dice < 45)
            op_read(w);
        else if (dice < 80)
            op_update(w);
        else if (dice < 90)
            op_hold(w);
        else if (dice < 95)
            op_scan(w);
        else
            op_flush(w);

        for (int i = 0; i < MAX_HELD; i++)
            if (w->held[i].id != BUF_INVALID && --w->held[i].ops == 0)
                held_check_release(w, &w->held[i]);
    }
    /* A pin still held here is left for buf_session_destroy() to drop. */
    return NULL;
}

/* Creates the relations on disk, every page with counter 0. */
static void create_relations(smgr *sm)
{
    kerr err;

    for (int r = 0; r < NREL; r++)
        tu_body_rel_create(sm, REL_BASE + (relnumber_t)r, NBLK, &err);
}

static uint64_t stress_seed(void)
{
    const char *s = getenv("KEEL_STRESS_SEED");

    if (s != NULL && strtoull(s, NULL, 0) != 0)
        return strtoull(s, NULL, 0);
    return UINT64_C(0x9E3779B97F4A7C15);
}

static void run_stress(const stress_config *cfg)
{
    char *dir = tu_mkdtemp();
    double seconds = tu_stress_seconds(2.0);
    uint64_t seed = stress_seed();
    stress_run *run = calloc(1, sizeof(*run));
    worker *w = calloc((size_t)cfg->nthreads, sizeof(*w));
    pthread_t *th = calloc((size_t)cfg->nthreads, sizeof(*th));
    uint64_t total = 0, sum = 0;
    buf_session *s = NULL;
    smgr *sm = NULL;
    kerr err;

    assert_non_null(run);
    assert_non_null(w);
    assert_non_null(th);
    run->fail = (tu_failures)TU_FAILURES_INIT;
    run->cfg = cfg;
    assert_int_equal(smgr_open(dir, &sm, &err), KEEL_OK);
    create_relations(sm);
    assert_int_equal(buf_pool_create(sm, cfg->nbuffers, &run->pool, &err),
                     KEEL_OK);

    for (int i = 0; i < cfg->nthreads; i++) {
        w[i].run = run;
        w[i].index = i;
        w[i].rng =
            (seed ^ ((uint64_t)(i + 1) * UINT64_C(0xD1B54A32D192ED03))) | 1;
        for (int h = 0; h < MAX_HELD; h++)
            w[i].held[h].id = BUF_INVALID;
        for (int r = 0; r < RECENT_SLOTS; r++)
            w[i].recent[r] = BUF_INVALID;
        assert_int_equal(buf_session_create(run->pool, &w[i].sess, &err),
                         KEEL_OK);
        w[i].strategy = buf_strategy_create(run->pool, BUF_STRATEGY_BULK_READ);
        assert_non_null(w[i].strategy);
    }
    run->deadline_ns = clock_now_ns() + (uint64_t)(seconds * 1e9);
    for (int i = 0; i < cfg->nthreads; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < cfg->nthreads; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);

    print_message(
        "%s: %d threads, %u buffers, %.1f s, seed %#llx: %llu "
        "reads, %llu updates, %llu held-pin checks, %llu scans, "
        "%llu flushes, %llu checkpoints, %llu exhausted\n",
        cfg->name, cfg->nthreads, cfg->nbuffers, seconds,
        (unsigned long long)seed, (unsigned long long)run->reads,
        (unsigned long long)run->updates, (unsigned long long)run->held_checks,
        (unsigned long long)run->scans, (unsigned long long)run->flushes,
        (unsigned long long)run->checkpoints,
        (unsigned long long)run->exhausted);
    tu_failures_check(&run->fail);

    /* Destroying the sessions drops the pins some workers still hold. */
    for (int i = 0; i < cfg->nthreads; i++) {
        buf_strategy_free(w[i].strategy);
        buf_session_destroy(w[i].sess);
    }
    tu_assert_pool_quiet(run->pool);

    /* The run did real work, updates and checkpoints included. */
    assert_true(run->reads > (uint64_t)cfg->nthreads);
    assert_true(run->updates > 0);
    assert_true(run->checkpoints > 0 || seconds < 0.2);
    if (!cfg->exhaustion_ok)
        assert_int_equal(run->exhausted, 0);

    if (buf_pool_close(run->pool, &err) != KEEL_OK)
        fail_msg("buf_pool_close: %s", err.msg);
    smgr_close(sm);

    /* Reopen: every update is on disk. */
    assert_int_equal(smgr_open(dir, &sm, &err), KEEL_OK);
    tu_pool_open(sm, 64, &run->pool, &s, &err);
    for (int r = 0; r < NREL; r++) {
        for (blocknum_t b = 0; b < NBLK; b++) {
            relnumber_t rel = REL_BASE + (relnumber_t)r;
            uint64_t want = atomic_load(&run->expected[page_index(rel, b)]);
            tu_page_body body;
            uint64_t tail;
            int32_t id;
            int rc = buf_read(s, rel, b, NULL, &id);

            if (rc != KEEL_OK)
                fail_msg("after reopen, buf_read(%u, %u): %s", rel, b,
                         buf_session_error(s)->msg);
            buf_lock(s, id, LW_SHARED);
            tu_body_read(buf_page(run->pool, id), &body, &tail);
            buf_unlock(s, id);
            buf_release(s, id);
            if (body.rel != rel || body.blk != b || tail != body.value ||
                body.value != want)
                fail_msg("after reopen, block %u of relation %u holds (%u, "
                         "%u) counter %llu tail %llu; expected counter %llu",
                         b, rel, body.rel, body.blk,
                         (unsigned long long)body.value,
                         (unsigned long long)tail, (unsigned long long)want);
            sum += body.value;
            total += want;
        }
    }
    assert_int_equal(total, run->updates);
    assert_int_equal(sum, run->updates);
    tu_pool_close(&run->pool, &s, &err);
    tu_storage_close(dir, sm);
    free(th);
    free(w);
    free(run);
}

/* 4 x 256 blocks through 64 buffers, 6 threads. */
static void test_stress_pool(void **state)
{
    static const stress_config cfg = {
        .name = "pool of 64",
        .nbuffers = 64,
        .nthreads = 6,
        .max_held = 2,
        .exhaustion_ok = false,
    };

    (void)state;
    run_stress(&cfg);
}

/* 16 buffers, 8 threads each holding up to four pins (three kept across
 * operations, one for the operation itself): the pool runs dry. */
static void test_stress_tiny_pool(void **state)
{
    static const stress_config cfg = {
        .name = "pool of 16",
        .nbuffers = 16,
        .nthreads = 8,
        .max_held = 3,
        .exhaustion_ok = true,
    };

    (void)state;
    run_stress(&cfg);
}

/* ---- content locks on two hot buffers ------------------------------- */

#define HOT_BLOCKS 2

typedef struct hot_run {
    buf_pool *pool;
    uint64_t deadline_ns;
    atomic_u64 expected[HOT_BLOCKS]; /* increments made, under the lock */
    tu_failures fail;
    atomic_u64 exclusive, shared, nested, tried, held_long;
} hot_run;

typedef struct hot_worker {
    hot_run *run;
    buf_session *sess;
    uint64_t rng;
    uint64_t seen[HOT_BLOCKS]; /* the last counter each block showed */
} hot_worker;

/*
 * Under a content lock on buffer id, which holds block blk: the page is
 * the block's and untorn, its counter never went back as this thread saw
 * it, and, held exclusively, equals the increments made.  Returns the
 * counter.
 */
static uint64_t hot_check(hot_worker *w, int32_t id, blocknum_t blk,
                          bool exclusive, const char *what)
{
    tu_page_body b;
    uint64_t tail;

    tu_body_read(buf_page(w->run->pool, id), &b, &tail);
    if (b.rel != REL_BASE || b.blk != blk || tail != b.value)
        tu_fail(&w->run->fail,
                "%s: block %u in buffer %d: (%u, %u) counter %llu "
                "tail %llu",
                what, blk, id, b.rel, b.blk, (unsigned long long)b.value,
                (unsigned long long)tail);
    if (b.value < w->seen[blk])
        tu_fail(&w->run->fail,
                "%s: block %u's counter went back from %llu to %llu", what, blk,
                (unsigned long long)w->seen[blk], (unsigned long long)b.value);
    if (exclusive && b.value != atomic_load_relaxed(&w->run->expected[blk]))
        tu_fail(
            &w->run->fail,
            "%s: block %u has counter %llu, %llu increments made", what, blk,
            (unsigned long long)b.value,
            (unsigned long long)atomic_load_relaxed(&w->run->expected[blk]));
    w->seen[blk] = b.value;
    return b.value;
}

/* Under the exclusive lock: one increment, counted before unlocking. */
static void hot_increment(hot_worker *w, int32_t id, blocknum_t blk)
{
    uint64_t v = hot_check(w, id, blk, true, "exclusive");

    tu_body_write(buf_page(w->run->pool, id), REL_BASE, blk, v + 1);
    buf_mark_dirty(w->sess, id);
    atomic_fetch_add_explicit(&w->run->expected[blk], 1, memory_order_relaxed);
    w->seen[blk] = v + 1;
    atomic_fetch_add_explicit(&w->run->exclusive, 1, memory_order_relaxed);
}

static void *hot_main(void *arg)
{
    hot_worker *w = arg;
    hot_run *run = w->run;
    const uint16_t lines[2] = {0, 4096};

    while (!tu_failed(&run->fail) && clock_now_ns() < run->deadline_ns) {
        uint64_t r = tu_rand(&w->rng);
        blocknum_t blk = (blocknum_t)(r % HOT_BLOCKS);
        int32_t id;
        int rc;

        switch ((r >> 8) % 8) {
        case 0:
        case 1: /* an increment under the exclusive lock */
            rc = buf_read(w->sess, REL_BASE, blk, NULL, &id);
            if (rc != KEEL_OK)
                break;
            buf_lock(w->sess, id, LW_EXCLUSIVE);
            hot_increment(w, id, blk);
            buf_unlock(w->sess, id);
            buf_release(w->sess, id);
            break;
        case 2:
        case 3:
        case 4: /* a read that pins and locks in one */
            if ((r >> 16) % 3 == 0) {
                rc = buf_read(w->sess, REL_BASE, blk,
                              &(buf_read_opts){.flags = BUF_READ_SHARED,
                                               .lines = lines,
                                               .nlines = 2},
                              &id);
            } else if ((r >> 16) % 3 == 1) {
                buf_prefetch(w->sess, REL_BASE, blk, lines, 2, blk);
                rc = buf_prefetch_pending(w->sess, REL_BASE, blk, blk)
                         ? buf_read(
                               w->sess, REL_BASE, blk,
                               &(buf_read_opts){.flags = BUF_READ_SHARED |
                                                         BUF_READ_PREFETCHED},
                               &id)
                         : buf_read(w->sess, REL_BASE, blk,
                                    &(buf_read_opts){.flags = BUF_READ_SHARED,
                                                     .lines = lines,
                                                     .nlines = 2},
                                    &id);
            } else {
                rc = buf_read(
                    w->sess, REL_BASE, blk,
                    &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                     .recent = (int32_t)((r >> 24) % 16),
                                     .lines = lines,
                                     .nlines = 2},
                    &id);
            }
            if (rc != KEEL_OK)
                break;
            hot_check(w, id, blk, false, "locking read");
            buf_unlock_release(w->sess, id);
            atomic_fetch_add_explicit(&run->shared, 1, memory_order_relaxed);
            break;
        case 5: /* two shares on one pin, given back one at a time */
            rc = buf_read(w->sess, REL_BASE, blk, NULL, &id);
            if (rc != KEEL_OK)
                break;
            buf_lock(w->sess, id, LW_SHARED);
            {
                int32_t id2 = BUF_INVALID;
                rc = buf_read(
                    w->sess, REL_BASE, blk,
                    &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                     .recent = id},
                    &id2);
                if (rc == KEEL_OK && id2 != id)
                    tu_fail(&run->fail,
                            "block %u read again in buffer %d, held "
                            "in %d",
                            blk, id2, id);
                if (rc == KEEL_OK) {
                    hot_check(w, id2, blk, false, "two shares");
                    buf_unlock_release(w->sess, id2);
                }
            }
            hot_check(w, id, blk, false, "one share of two");
            buf_unlock_release(w->sess, id);
            atomic_fetch_add_explicit(&run->nested, 1, memory_order_relaxed);
            break;
        case 6: /* try-locks in either mode */
            rc = buf_read(w->sess, REL_BASE, blk, NULL, &id);
            if (rc != KEEL_OK)
                break;
            if ((r >> 16) & 1) {
                if (buf_try_lock(w->sess, id, LW_EXCLUSIVE)) {
                    hot_increment(w, id, blk);
                    buf_unlock(w->sess, id);
                    atomic_fetch_add_explicit(&run->tried, 1,
                                              memory_order_relaxed);
                }
            } else if (buf_try_lock(w->sess, id, LW_SHARED)) {
                hot_check(w, id, blk, false, "try-locked read");
                buf_unlock(w->sess, id);
                atomic_fetch_add_explicit(&run->tried, 1, memory_order_relaxed);
            }
            buf_release(w->sess, id);
            break;
        default: /* a lock held across a yield, so that others sleep */
            if ((r >> 16) & 1) {
                rc = buf_read(
                    w->sess, REL_BASE, blk,
                    &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                     .recent = BUF_INVALID},
                    &id);
                if (rc != KEEL_OK)
                    break;
                sched_yield();
                hot_check(w, id, blk, false, "long read");
                buf_unlock_release(w->sess, id);
            } else {
                rc = buf_read(w->sess, REL_BASE, blk, NULL, &id);
                if (rc != KEEL_OK)
                    break;
                buf_lock(w->sess, id, LW_EXCLUSIVE);
                sched_yield();
                hot_increment(w, id, blk);
                buf_unlock(w->sess, id);
                buf_release(w->sess, id);
            }
            atomic_fetch_add_explicit(&run->held_long, 1, memory_order_relaxed);
            break;
        }
        if (rc != KEEL_OK)
            tu_fail(&run->fail, "reading block %u: %s: %s", blk,
                    keel_status_str(rc), buf_session_error(w->sess)->msg);
    }
    return NULL;
}

/*
 * The content lock under contention: six threads on two buffers, mixing
 * exclusive increments, reads that pin and lock in one atomic, two
 * shares on one pin, try-locks, and locks held across a yield so that
 * waiters go to sleep.  No reader sees a torn page or a counter going
 * back; an exclusive holder sees every increment; some session slept on
 * a lock (the futex path ran; not required of a run shorter than 0.2 s,
 * KEEL_STRESS_SECONDS); at the end every increment is in the page, and
 * no pin or lock is left.
 */
static void test_stress_hot_locks(void **state)
{
    enum { NTHREADS = 6 };
    double seconds = tu_stress_seconds(1.0);
    hot_run *run = calloc(1, sizeof(*run));
    hot_worker w[NTHREADS];
    pthread_t th[NTHREADS];
    int32_t ids[HOT_BLOCKS];
    uint32_t sleepers = 0;
    buf_session *s = NULL;
    char *dir = NULL;
    smgr *sm = NULL;
    kerr err;

    (void)state;
    assert_non_null(run);
    run->fail = (tu_failures)TU_FAILURES_INIT;
    tu_storage_open(&dir, &sm, &err);
    tu_body_rel_create(sm, REL_BASE, HOT_BLOCKS, &err);
    tu_pool_open(sm, 16, &run->pool, &s, &err);
    /* Held by this session throughout, so their buffers stay put. */
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++)
        assert_int_equal(buf_read(s, REL_BASE, b, NULL, &ids[b]), KEEL_OK);
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (hot_worker){
            .run = run,
            .rng = (stress_seed() ^ (uint64_t)(i + 1) * UINT64_C(0x9E37)) | 1,
        };
        assert_int_equal(buf_session_create(run->pool, &w[i].sess, &err),
                         KEEL_OK);
    }
    run->deadline_ns = clock_now_ns() + (uint64_t)(seconds * 1e9);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hot_main, &w[i]), 0);
    while (clock_now_ns() < run->deadline_ns) {
        for (int b = 0; b < HOT_BLOCKS; b++) {
            uint32_t n = atomic_load_acquire(&s->descs[ids[b]].lock_waiters);
            if (n > sleepers)
                sleepers = n;
        }
        sched_yield();
    }
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    print_message("hot locks: %d threads, %.1f s: %llu exclusive, %llu "
                  "locking reads, %llu nested, %llu try-locks, %llu held "
                  "across a yield; at most %u asleep at once\n",
                  NTHREADS, seconds, (unsigned long long)run->exclusive,
                  (unsigned long long)run->shared,
                  (unsigned long long)run->nested,
                  (unsigned long long)run->tried,
                  (unsigned long long)run->held_long, sleepers);
    tu_failures_check(&run->fail);
    assert_true(run->exclusive > 0 && run->shared > 0 && run->nested > 0);
    assert_true(sleepers > 0 || seconds < 0.2);

    for (int i = 0; i < NTHREADS; i++)
        buf_session_destroy(w[i].sess);
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++) {
        tu_page_body body;
        uint64_t tail;

        assert_false(buf_lock_held(s, ids[b]));
        buf_lock(s, ids[b], LW_SHARED);
        tu_body_read(buf_page(run->pool, ids[b]), &body, &tail);
        buf_unlock(s, ids[b]);
        assert_int_equal(body.value, atomic_load(&run->expected[b]));
        assert_int_equal(tail, body.value);
        buf_release(s, ids[b]);
    }
    tu_assert_pool_quiet(run->pool);
    tu_pool_close(&run->pool, &s, &err);
    tu_storage_close(dir, sm);
    free(run);
}

/*
 * Exhaustion, deterministically: with every buffer pinned, reading another
 * block fails with KEEL_EEXHAUSTED, takes no pin, and works again once a
 * pin is dropped.  The same through a strategy.
 */
static void test_exhaustion_leaves_nothing_pinned(void **state)
{
    char *dir = NULL;
    int32_t ids[16], id;
    buf_strategy *st;
    buf_pool *pool = NULL;
    buf_session *s = NULL;
    smgr *sm = NULL;
    kerr err;

    (void)state;
    tu_storage_open(&dir, &sm, &err);
    create_relations(sm);
    tu_pool_open(sm, 16, &pool, &s, &err);
    st = buf_strategy_create(pool, BUF_STRATEGY_BULK_READ);
    assert_non_null(st);

    for (blocknum_t b = 0; b < 16; b++)
        assert_int_equal(buf_read(s, REL_BASE, b, NULL, &ids[b]), KEEL_OK);
    assert_int_equal(buf_session_pinned(s), 16);
    for (int round = 0; round < 2; round++) {
        int rc = buf_read(s, REL_BASE + 1, 7,
                          &(buf_read_opts){.strategy = round ? st : NULL}, &id);
        assert_int_equal(rc, KEEL_EEXHAUSTED);
        assert_int_equal(buf_session_error(s)->code, KEEL_EEXHAUSTED);
        assert_int_equal(buf_session_pinned(s), 16);
        for (int i = 0; i < 16; i++)
            assert_int_equal(BUF_REFCOUNT(buf_state(pool, i)), 1);
    }
    /* A hit needs no victim. */
    assert_int_equal(buf_read(s, REL_BASE, 3, NULL, &id), KEEL_OK);
    assert_int_equal(id, ids[3]);
    buf_release(s, id);

    buf_release(s, ids[5]);
    assert_int_equal(buf_read(s, REL_BASE + 1, 7, NULL, &id), KEEL_OK);
    assert_int_equal(id, ids[5]);
    buf_release(s, id);
    for (blocknum_t b = 0; b < 16; b++)
        if (b != 5)
            buf_release(s, ids[b]);
    assert_int_equal(buf_session_pinned(s), 0);
    tu_assert_pool_quiet(pool);

    buf_strategy_free(st);
    tu_pool_close(&pool, &s, &err);
    tu_storage_close(dir, sm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exhaustion_leaves_nothing_pinned),
        cmocka_unit_test(test_stress_pool),
        cmocka_unit_test(test_stress_tiny_pool),
        cmocka_unit_test(test_stress_hot_locks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
