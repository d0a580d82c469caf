/*
 * test_buf_fault.c: the buffer pool under injected I/O faults.
 *
 * EIO, ENOSPC and short transfers are injected (storage/fault.h) into the
 * reads, writes and fsyncs the pool issues when it loads a page, evicts a
 * dirty page, flushes, checkpoints, closes and extends.  Each test checks
 * that the failure comes back as the right status with a message naming
 * the file (and block), that nothing is left pinned, locked or in I/O, and
 * that no page is lost: after the fault is disarmed the operation can be
 * retried, and after a clean close and reopen every page holds its latest
 * contents.
 *
 * Two tests race a checkpoint against a concurrent flush or checkpoint
 * while every fsync fails, to catch a checkpoint that reports success
 * without having synced a file it had to.
 *
 * Fault injection exists only in KEEL_FAULT_INJECTION builds; elsewhere
 * the one test skips.
 */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "port/atomics.h"
#include "port/clock.h"
#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "storage/page.h"
#include "storage/smgr.h"

#ifdef KEEL_FAULT_INJECTION

#define REL_A     ((relnumber_t)16384)
#define REL_B     ((relnumber_t)16385)
#define POOL_SIZE 16
#define NBLOCKS   32 /* twice the pool: reading them all evicts */

typedef tu_fixture fixture;

/* Fails unless page holds (rel, blk) with a consistent value; returns it. */
static uint64_t body_check(const void *page, relnumber_t rel, blocknum_t blk)
{
    tu_page_body b;
    uint64_t tail;

    tu_body_read(page, &b, &tail);
    if (b.rel != rel || b.blk != blk)
        fail_msg("page of block %u of relation %u holds block %u of "
                 "relation %u",
                 blk, rel, b.blk, b.rel);
    if (tail != b.value)
        fail_msg("block %u of relation %u is torn: value %llu, tail %llu", blk,
                 rel, (unsigned long long)b.value, (unsigned long long)tail);
    return b.value;
}

/* Creates rel with nblocks pages holding value 0, directly on disk. */
static void make_rel(fixture *f, relnumber_t rel, blocknum_t nblocks)
{
    smgr_rel *r = tu_body_rel_create(f->sm, rel, nblocks, &f->err);

    assert_int_equal(smgr_sync(r, &f->err), KEEL_OK);
}

static void open_pool(fixture *f)
{
    assert_int_equal(smgr_open(f->dir, &f->sm, &f->err), KEEL_OK);
    tu_pool_open(f->sm, POOL_SIZE, &f->pool, &f->s, &f->err);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    fault_disarm_all();
    f->dir = tu_mkdtemp();
    open_pool(f);
    make_rel(f, REL_A, NBLOCKS);
    make_rel(f, REL_B, NBLOCKS);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    fault_disarm_all();
    buf_session_destroy(f->s);
    buf_pool_discard(f->pool);
    tu_storage_close(f->dir, f->sm);
    free(f);
    return 0;
}

/* Closes the pool cleanly (which must succeed), then reopens everything. */
static void reopen(fixture *f)
{
    tu_pool_close(&f->pool, &f->s, &f->err);
    smgr_close(f->sm);
    f->sm = NULL;
    open_pool(f);
}

/* Reads (rel, blk) through the pool and returns its value. */
static uint64_t get_value(fixture *f, relnumber_t rel, blocknum_t blk)
{
    int32_t id = BUF_INVALID;
    uint64_t v;
    int rc = buf_read(f->s, rel, blk, NULL, &id);

    if (rc != KEEL_OK)
        fail_msg("buf_read(%u, %u): %s: %s", rel, blk, keel_status_str(rc),
                 buf_session_error(f->s)->msg);
    buf_lock(f->s, id, LW_SHARED);
    v = body_check(buf_page(f->pool, id), rel, blk);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    return v;
}

/* Sets the value of (rel, blk) through the pool, leaving it dirty. */
static void set_value(fixture *f, relnumber_t rel, blocknum_t blk,
                      uint64_t value)
{
    int32_t id = BUF_INVALID;
    int rc = buf_read(f->s, rel, blk, NULL, &id);

    if (rc != KEEL_OK)
        fail_msg("buf_read(%u, %u): %s: %s", rel, blk, keel_status_str(rc),
                 buf_session_error(f->s)->msg);
    buf_lock(f->s, id, LW_EXCLUSIVE);
    body_check(buf_page(f->pool, id), rel, blk);
    tu_body_write(buf_page(f->pool, id), rel, blk, value);
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
}

static void assert_values(fixture *f, relnumber_t rel, blocknum_t nblocks,
                          const uint64_t *want)
{
    for (blocknum_t i = 0; i < nblocks; i++) {
        uint64_t v = get_value(f, rel, i);
        if (v != want[i])
            fail_msg("block %u of relation %u: value %llu, expected %llu", i,
                     rel, (unsigned long long)v, (unsigned long long)want[i]);
    }
}

/* The buffer holding (rel, blk), or BUF_INVALID. */
static int32_t find_buffer(fixture *f, relnumber_t rel, blocknum_t blk)
{
    for (uint32_t i = 0; i < buf_pool_size(f->pool); i++) {
        relnumber_t r;
        blocknum_t b;
        buf_block_of(f->pool, (int32_t)i, &r, &b);
        if (r == rel && b == blk &&
            (buf_state(f->pool, (int32_t)i) & BM_TAG_VALID))
            return (int32_t)i;
    }
    return BUF_INVALID;
}

/*
 * Nothing is pinned (the session holds nothing, every refcount is zero),
 * no I/O is in progress, no header lock is held, and every content lock is
 * free (checked by taking each exclusively without waiting).
 */
static void assert_quiet(fixture *f)
{
    if (f->s != NULL)
        assert_int_equal(buf_session_pinned(f->s), 0);
    tu_assert_pool_quiet(f->pool);
}

static void assert_msg_has(const kerr *e, const char *needle)
{
    if (strstr(e->msg, needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", e->msg, needle);
}

/* Asserts rc == code, recorded in e with a message naming rel's file and,
 * if blk is not MAX_BLOCK_NUMBER, the block. */
static void assert_error(fixture *f, const kerr *e, int rc, int code,
                         relnumber_t rel, blocknum_t blk)
{
    char path[4200];

    if (rc != code)
        fail_msg("expected status %s, got %s (%s)", keel_status_str(code),
                 keel_status_str(rc), e->msg);
    assert_int_equal(e->code, code);
    snprintf(path, sizeof(path), "\"%s/%u\"", f->dir, rel);
    assert_msg_has(e, path);
    if (blk != MAX_BLOCK_NUMBER) {
        char what[64];
        snprintf(what, sizeof(what), "block %u ", blk);
        assert_msg_has(e, what);
    }
}

/* The status a write fault of kind surfaces as. */
static int write_status(fault_kind kind)
{
    return kind == FAULT_EIO ? KEEL_EIO : KEEL_ENOSPC;
}

static const fault_kind write_kinds[] = {FAULT_EIO, FAULT_ENOSPC, FAULT_SHORT};
#define NKINDS (sizeof(write_kinds) / sizeof(write_kinds[0]))

static const char *kind_name(fault_kind k)
{
    return k == FAULT_EIO ? "EIO" : k == FAULT_ENOSPC ? "ENOSPC" : "short";
}

/* ---- reads ------------------------------------------------------------- */

static void read_fault(fixture *f, fault_kind kind)
{
    int32_t id = BUF_INVALID, b;
    int rc;

    set_value(f, REL_A, 1, 11);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);

    /* Two faults: the failed read is not remembered, the next reader
     * retries the I/O (and fails again). */
    fault_arm(FAULT_OP_READ, kind, 0, 2, REL_A);
    for (int attempt = 0; attempt < 2; attempt++) {
        rc = buf_read(f->s, REL_A, 3, NULL, &id);
        assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_A, 3);
        if (kind == FAULT_SHORT)
            assert_msg_has(buf_session_error(f->s), "read only 4096 of 8192");
        assert_int_equal(fault_delivered(FAULT_OP_READ), attempt + 1);
        assert_quiet(f);
        /* If a buffer still carries the tag, it is not valid. */
        b = find_buffer(f, REL_A, 3);
        if (b != BUF_INVALID) {
            uint64_t st = buf_state(f->pool, b);
            assert_false(st & BM_VALID);
            assert_false(st & BM_DIRTY);
        }
    }
    /* A block already in the pool is a hit and needs no read. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 100, 0);
    assert_int_equal(get_value(f, REL_A, 1), 11);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 0);

    fault_disarm_all();
    assert_int_equal(get_value(f, REL_A, 3), 0);
    b = find_buffer(f, REL_A, 3);
    assert_int_not_equal(b, BUF_INVALID);
    assert_true(buf_state(f->pool, b) & BM_VALID);
    assert_false(buf_state(f->pool, b) & BM_IO_ERROR);
    assert_quiet(f);

    /* The other blocks never noticed. */
    for (blocknum_t i = 0; i < NBLOCKS; i++)
        assert_int_equal(get_value(f, REL_A, i), i == 1 ? 11 : 0);
    reopen(f);
    assert_int_equal(get_value(f, REL_A, 1), 11);
    assert_int_equal(get_value(f, REL_A, 3), 0);
}

static void test_read_eio(void **state)
{
    read_fault(*state, FAULT_EIO);
}

static void test_read_short(void **state)
{
    read_fault(*state, FAULT_SHORT);
}

/* A strategy read that fails gives its buffer back too. */
static void test_read_fault_with_strategy(void **state)
{
    fixture *f = *state;
    buf_strategy *st = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
    int32_t id = BUF_INVALID;
    int rc;

    assert_non_null(st);
    for (blocknum_t i = 0; i < NBLOCKS; i++) {
        if (i == 7 || i == 20) {
            fault_arm(FAULT_OP_READ, i == 7 ? FAULT_EIO : FAULT_SHORT, 0, 1,
                      REL_B);
            rc =
                buf_read(f->s, REL_B, i, &(buf_read_opts){.strategy = st}, &id);
            assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_B, i);
            assert_int_equal(fault_delivered(FAULT_OP_READ), 1);
            assert_quiet(f);
        }
        rc = buf_read(f->s, REL_B, i, &(buf_read_opts){.strategy = st}, &id);
        assert_int_equal(rc, KEEL_OK);
        body_check(buf_page(f->pool, id), REL_B, i);
        buf_release(f->s, id);
    }
    buf_strategy_free(st);
    assert_quiet(f);
}

/*
 * The reads that pin and lock in one atomic, on a failed load: from the
 * file, and from the buffer a failed load left tagged but not valid (the
 * combined share is given back, the load retried and failed again).
 * Each leaves nothing pinned or locked; once the fault is gone the read
 * returns the page locked.
 */
static void test_read_fault_locking(void **state)
{
    fixture *f = *state;
    const uint16_t lines[2] = {0, 4096};
    int32_t id = BUF_INVALID, b;
    int rc;

    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 2, REL_A);
    rc = buf_read(
        f->s, REL_A, 5,
        &(buf_read_opts){.flags = BUF_READ_SHARED, .lines = lines, .nlines = 2},
        &id);
    assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_A, 5);
    assert_quiet(f);
    b = find_buffer(f, REL_A, 5);
    assert_int_not_equal(b, BUF_INVALID);
    assert_false(buf_state(f->pool, b) & BM_VALID);
    rc = buf_read(f->s, REL_A, 5,
                  &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                   .recent = b,
                                   .lines = lines,
                                   .nlines = 2},
                  &id);
    assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_A, 5);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 2);
    assert_quiet(f);

    fault_disarm_all();
    assert_int_equal(
        buf_read(f->s, REL_A, 5,
                 &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                  .recent = b,
                                  .lines = lines,
                                  .nlines = 2},
                 &id),
        KEEL_OK);
    body_check(buf_page(f->pool, id), REL_A, 5);
    assert_true(buf_lock_held(f->s, id));
    assert_int_equal(BUF_SHARES(buf_state(f->pool, id)), 1);
    buf_unlock_release(f->s, id);
    assert_quiet(f);
}

/* ---- buf_flush --------------------------------------------------------- */

static void test_flush_write_faults(void **state)
{
    fixture *f = *state;

    for (size_t k = 0; k < NKINDS; k++) {
        fault_kind kind = write_kinds[k];
        int32_t id = BUF_INVALID;
        blocknum_t blk = (blocknum_t)(2 + k);
        int rc;

        set_value(f, REL_A, blk, 100 + k);
        assert_int_equal(buf_read(f->s, REL_A, blk, NULL, &id), KEEL_OK);
        fault_arm(FAULT_OP_WRITE, kind, 0, 1, REL_A);
        rc = buf_flush(f->s, id);
        assert_error(f, buf_session_error(f->s), rc, write_status(kind), REL_A,
                     blk);
        assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
        /* Still ours, still valid and dirty, content intact. */
        assert_int_equal(buf_pin_count(f->s, id), 1);
        assert_true(buf_state(f->pool, id) & BM_DIRTY);
        assert_true(buf_state(f->pool, id) & BM_VALID);
        assert_int_equal(body_check(buf_page(f->pool, id), REL_A, blk),
                         100 + k);
        buf_release(f->s, id);
        assert_quiet(f);

        /* Retry after disarming: clean. */
        fault_disarm_all();
        assert_int_equal(buf_read(f->s, REL_A, blk, NULL, &id), KEEL_OK);
        assert_int_equal(buf_flush(f->s, id), KEEL_OK);
        assert_false(buf_state(f->pool, id) & BM_DIRTY);
        assert_false(buf_state(f->pool, id) & BM_IO_ERROR);
        buf_release(f->s, id);
        assert_quiet(f);
    }
    /* A torn block left by the short write was rewritten whole. */
    reopen(f);
    for (size_t k = 0; k < NKINDS; k++)
        assert_int_equal(get_value(f, REL_A, (blocknum_t)(2 + k)), 100 + k);
}

/* A fault while a page is dirtied again during a failed flush: the later
 * change is kept too (the buffer never becomes clean in between). */
static void test_flush_fault_then_redirty(void **state)
{
    fixture *f = *state;
    int32_t id = BUF_INVALID;

    set_value(f, REL_B, 5, 1);
    assert_int_equal(buf_read(f->s, REL_B, 5, NULL, &id), KEEL_OK);
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 0, 1, 0);
    assert_int_equal(buf_flush(f->s, id), KEEL_ENOSPC);
    fault_disarm_all();
    buf_lock(f->s, id, LW_EXCLUSIVE);
    tu_body_write(buf_page(f->pool, id), REL_B, 5, 2);
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    assert_quiet(f);
    reopen(f);
    assert_int_equal(get_value(f, REL_B, 5), 2);
}

/* ---- eviction of a dirty page ------------------------------------------ */

/*
 * Every buffer holds a dirty page, so loading another block must write a
 * victim first; that write fails.  The read reports the write's error
 * (naming the victim's block), the victim stays in the pool dirty, and
 * after disarming, the read works and every change reaches disk.
 */
static void test_evict_dirty_fault(void **state)
{
    fixture *f = *state;
    uint64_t want[NBLOCKS] = {0};

    for (size_t k = 0; k < NKINDS; k++) {
        fault_kind kind = write_kinds[k];
        int32_t id = BUF_INVALID;
        const kerr *e;
        unsigned victim;
        char needle[64];
        int rc;

        for (blocknum_t i = 0; i < POOL_SIZE; i++) {
            want[i] = 1000 * (k + 1) + i;
            set_value(f, REL_A, i, want[i]);
        }
        for (uint32_t i = 0; i < POOL_SIZE; i++)
            assert_true(buf_state(f->pool, (int32_t)i) & BM_DIRTY);

        fault_arm(FAULT_OP_WRITE, kind, 0, 1, REL_A);
        rc = buf_read(f->s, REL_A, POOL_SIZE + 4, NULL, &id);
        e = buf_session_error(f->s);
        if (rc != write_status(kind))
            fail_msg("%s: expected %s, got %s (%s)", kind_name(kind),
                     keel_status_str(write_status(kind)), keel_status_str(rc),
                     e->msg);
        assert_int_equal(e->code, rc);
        assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
        snprintf(needle, sizeof(needle), "\"%s/%u\"", f->dir, REL_A);
        assert_msg_has(e, needle);
        assert_msg_has(e, "could not write block ");
        assert_int_equal(sscanf(strstr(e->msg, "block "), "block %u", &victim),
                         1);
        assert_true(victim < POOL_SIZE);
        assert_quiet(f);

        /* The failed victim still holds its block, dirty and valid. */
        {
            int32_t b = find_buffer(f, REL_A, victim);
            assert_int_not_equal(b, BUF_INVALID);
            assert_true(buf_state(f->pool, b) & BM_DIRTY);
            assert_true(buf_state(f->pool, b) & BM_VALID);
        }
        /* Every dirty page is still in memory: reading them needs no I/O. */
        fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1000, 0);
        assert_values(f, REL_A, POOL_SIZE, want);
        assert_int_equal(fault_delivered(FAULT_OP_READ), 0);
        fault_disarm_all();

        /* Now the read succeeds (writing some victim). */
        assert_int_equal(get_value(f, REL_A, POOL_SIZE + 4), 0);
        assert_quiet(f);

        /* Everything reached disk; and the next round starts with an
         * empty pool, so that its pages fill every buffer. */
        reopen(f);
        assert_values(f, REL_A, POOL_SIZE, want);
        reopen(f);
    }
}

/* The same through a bulk-read ring whose buffers are dirty. */
static void test_evict_dirty_fault_strategy(void **state)
{
    fixture *f = *state;
    buf_strategy *st = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
    uint64_t want[NBLOCKS] = {0};
    int32_t id = BUF_INVALID;
    int rc;

    assert_non_null(st);
    for (blocknum_t i = 0; i < POOL_SIZE; i++) {
        want[i] = 500 + i;
        set_value(f, REL_B, i, want[i]);
    }
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 0, 1000, REL_B);
    rc = buf_read(f->s, REL_B, NBLOCKS - 1, &(buf_read_opts){.strategy = st},
                  &id);
    assert_int_equal(rc, KEEL_ENOSPC);
    assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
    assert_quiet(f);
    fault_disarm_all();
    for (blocknum_t i = POOL_SIZE; i < NBLOCKS; i++) {
        assert_int_equal(
            buf_read(f->s, REL_B, i, &(buf_read_opts){.strategy = st}, &id),
            KEEL_OK);
        body_check(buf_page(f->pool, id), REL_B, i);
        buf_release(f->s, id);
    }
    buf_strategy_free(st);
    assert_quiet(f);
    reopen(f);
    assert_values(f, REL_B, POOL_SIZE, want);
}

/* ---- checkpoint -------------------------------------------------------- */

/*
 * Pages 0..7 checkpointed with one value, changed to another; the
 * checkpoint's fourth write (block 3, since it writes in block order)
 * fails.  The checkpoint reports it; blocks before it are clean, the rest
 * still dirty; a retry after disarming succeeds and everything survives.
 */
static void checkpoint_write_fault(fixture *f, fault_kind kind)
{
    uint64_t want[8];
    int rc;

    for (blocknum_t i = 0; i < 8; i++)
        set_value(f, REL_A, i, 10 + i);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (blocknum_t i = 0; i < 8; i++) {
        want[i] = 20 + i;
        set_value(f, REL_A, i, want[i]);
    }

    fault_arm(FAULT_OP_WRITE, kind, 3, 1, REL_A);
    fault_arm(FAULT_OP_SYNC, FAULT_EIO, 0, 1000, 0);
    rc = buf_checkpoint(f->s);
    assert_error(f, buf_session_error(f->s), rc, write_status(kind), REL_A, 3);
    assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
    /* A failed write phase does not go on to sync. */
    assert_int_equal(fault_delivered(FAULT_OP_SYNC), 0);
    assert_quiet(f);
    for (blocknum_t i = 0; i < 8; i++) {
        int32_t b = find_buffer(f, REL_A, i);
        assert_int_not_equal(b, BUF_INVALID);
        if (i < 3)
            assert_false(buf_state(f->pool, b) & BM_DIRTY);
        else
            assert_true(buf_state(f->pool, b) & BM_DIRTY);
    }
    assert_values(f, REL_A, 8, want);

    fault_disarm_all();
    rc = buf_checkpoint(f->s);
    if (rc != KEEL_OK)
        fail_msg("retried checkpoint: %s", buf_session_error(f->s)->msg);
    for (blocknum_t i = 0; i < 8; i++)
        assert_false(buf_state(f->pool, find_buffer(f, REL_A, i)) & BM_DIRTY);
    assert_quiet(f);
    reopen(f);
    assert_values(f, REL_A, 8, want);
}

static void test_checkpoint_write_eio(void **state)
{
    checkpoint_write_fault(*state, FAULT_EIO);
}

static void test_checkpoint_write_enospc(void **state)
{
    checkpoint_write_fault(*state, FAULT_ENOSPC);
}

static void test_checkpoint_write_short(void **state)
{
    checkpoint_write_fault(*state, FAULT_SHORT);
}

/*
 * A checkpoint that failed in its write phase, then a crash (the pool
 * discarded with its dirty pages): what the last successful checkpoint
 * wrote is all still there, plus what the failed one managed to write.
 */
static void test_checkpoint_fault_then_crash(void **state)
{
    fixture *f = *state;
    uint64_t want[8];

    for (blocknum_t i = 0; i < 8; i++)
        set_value(f, REL_A, i, 10 + i);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (blocknum_t i = 0; i < 8; i++)
        set_value(f, REL_A, i, 20 + i);
    fault_arm(FAULT_OP_WRITE, FAULT_EIO, 3, 1, REL_A);
    assert_int_equal(buf_checkpoint(f->s), KEEL_EIO);
    fault_disarm_all();
    assert_quiet(f);

    buf_session_destroy(f->s);
    f->s = NULL;
    buf_pool_discard(f->pool);
    f->pool = NULL;
    smgr_close(f->sm);
    f->sm = NULL;
    open_pool(f);
    for (blocknum_t i = 0; i < 8; i++)
        want[i] = i < 3 ? 20 + i : 10 + i;
    assert_values(f, REL_A, 8, want);
}

/*
 * fsync fails at checkpoint: EIO naming the file.  The failed file, and
 * those after it, stay pending: a retry syncs them again (shown by arming
 * a fault for each in turn), and once a checkpoint succeeds nothing is
 * pending any more (a checkpoint with nothing to do syncs nothing).
 */
static void test_checkpoint_sync_fault(void **state)
{
    fixture *f = *state;
    const fault_kind kinds[] = {FAULT_EIO, FAULT_ENOSPC, FAULT_SHORT};
    int rc;

    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        set_value(f, REL_A, 1, 30 + k);
        set_value(f, REL_B, 2, 40 + k);

        fault_arm(FAULT_OP_SYNC, kinds[k], 0, 1, 0);
        rc = buf_checkpoint(f->s);
        /* Files are synced in relation order: A first. */
        assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_A,
                     MAX_BLOCK_NUMBER);
        assert_msg_has(buf_session_error(f->s), "fsync");
        assert_int_equal(fault_delivered(FAULT_OP_SYNC), 1);
        assert_quiet(f);
        /* The write phase finished: the pages are clean. */
        assert_false(buf_state(f->pool, find_buffer(f, REL_A, 1)) & BM_DIRTY);
        assert_false(buf_state(f->pool, find_buffer(f, REL_B, 2)) & BM_DIRTY);

        /* A is still pending ... */
        fault_arm(FAULT_OP_SYNC, FAULT_EIO, 0, 1, REL_A);
        rc = buf_checkpoint(f->s);
        assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_A,
                     MAX_BLOCK_NUMBER);
        assert_int_equal(fault_delivered(FAULT_OP_SYNC), 1);
        /* ... and so is B, after it. */
        fault_arm(FAULT_OP_SYNC, FAULT_EIO, 0, 1, REL_B);
        rc = buf_checkpoint(f->s);
        assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_B,
                     MAX_BLOCK_NUMBER);
        assert_int_equal(fault_delivered(FAULT_OP_SYNC), 1);
        assert_quiet(f);

        fault_disarm_all();
        rc = buf_checkpoint(f->s);
        if (rc != KEEL_OK)
            fail_msg("retried checkpoint: %s", buf_session_error(f->s)->msg);
        /* Nothing pending now: another checkpoint issues no fsync. */
        fault_arm(FAULT_OP_SYNC, FAULT_EIO, 0, 1000, 0);
        assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
        assert_int_equal(fault_delivered(FAULT_OP_SYNC), 0);
        fault_disarm_all();
        assert_quiet(f);
    }
    reopen(f);
    assert_int_equal(get_value(f, REL_A, 1), 32);
    assert_int_equal(get_value(f, REL_B, 2), 42);
}

/* A file written by eviction (not by the checkpoint) is synced by the
 * next checkpoint: a sync fault on it proves the request was recorded. */
static void test_checkpoint_syncs_evicted_writes(void **state)
{
    fixture *f = *state;
    int rc;

    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    set_value(f, REL_B, 0, 77);
    /* Cycle the pool through relation A until B's page has been evicted. */
    for (int round = 0; round < 4 && find_buffer(f, REL_B, 0) != BUF_INVALID;
         round++)
        for (blocknum_t i = 0; i < NBLOCKS; i++)
            get_value(f, REL_A, i);
    assert_int_equal(find_buffer(f, REL_B, 0), BUF_INVALID);

    fault_arm(FAULT_OP_SYNC, FAULT_EIO, 0, 1, REL_B);
    rc = buf_checkpoint(f->s);
    assert_error(f, buf_session_error(f->s), rc, KEEL_EIO, REL_B,
                 MAX_BLOCK_NUMBER);
    fault_disarm_all();
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    reopen(f);
    assert_int_equal(get_value(f, REL_B, 0), 77);
}

/* ---- close ------------------------------------------------------------- */

/*
 * A write or sync fault during buf_pool_close: the close reports it and
 * leaves the pool open, intact and usable; after disarming it closes.
 */
static void close_fault(fixture *f, fault_op op, fault_kind kind, int code)
{
    uint64_t want[NBLOCKS];
    kerr err;
    int rc;

    for (blocknum_t i = 0; i < NBLOCKS; i++)
        want[i] = 0;
    for (blocknum_t i = 4; i < 12; i++) {
        want[i] = 60 + i;
        set_value(f, REL_A, i, want[i]);
    }
    buf_session_destroy(f->s);
    f->s = NULL;

    kerr_clear(&err);
    fault_arm(op, kind, op == FAULT_OP_WRITE ? 2 : 0, 1, REL_A);
    rc = buf_pool_close(f->pool, &err);
    assert_error(f, &err, rc, code, REL_A,
                 op == FAULT_OP_WRITE ? 6 : MAX_BLOCK_NUMBER);
    assert_int_equal(fault_delivered(op), 1);
    fault_disarm_all();

    /* Still open: nothing pinned, the data readable from memory. */
    assert_quiet(f);
    assert_int_equal(buf_session_create(f->pool, &f->s, &f->err), KEEL_OK);
    assert_values(f, REL_A, NBLOCKS, want);
    set_value(f, REL_A, 20, 99);
    want[20] = 99;
    assert_quiet(f);

    /* Fails again while the fault persists, then succeeds. */
    buf_session_destroy(f->s);
    f->s = NULL;
    fault_arm(op, kind, 0, 1, 0);
    assert_int_equal(buf_pool_close(f->pool, &err), code);
    fault_disarm_all();
    assert_int_equal(buf_session_create(f->pool, &f->s, &f->err), KEEL_OK);
    reopen(f);
    assert_values(f, REL_A, NBLOCKS, want);
}

static void test_close_write_eio(void **state)
{
    close_fault(*state, FAULT_OP_WRITE, FAULT_EIO, KEEL_EIO);
}

static void test_close_write_enospc(void **state)
{
    close_fault(*state, FAULT_OP_WRITE, FAULT_ENOSPC, KEEL_ENOSPC);
}

static void test_close_write_short(void **state)
{
    close_fault(*state, FAULT_OP_WRITE, FAULT_SHORT, KEEL_ENOSPC);
}

static void test_close_sync_eio(void **state)
{
    close_fault(*state, FAULT_OP_SYNC, FAULT_EIO, KEEL_EIO);
}

/* ---- checkpoint racing other writers ----------------------------------- */

/*
 * A checkpoint that returns KEEL_OK has made durable every change made
 * before it began.  In these trials every fsync of REL_B fails, so a
 * checkpoint must report the failure whenever REL_B holds a write not yet
 * synced; if it returns KEEL_OK instead, it skipped the sync of a file
 * whose data is not on stable storage.
 *
 * Each trial dirties a page of REL_B, then runs a checkpoint (racer 0)
 * against a second thread (racer 1) that either flushes that page or
 * checkpoints too:
 *
 * - checkpoint: a page of REL_A is dirtied too, so that racer 0, after
 *   writing both pages, spends a while in a real fsync of REL_A (files are
 *   synced in relation order) before it reaches REL_B.  Racer 1 is let go
 *   once both pages are written and racer 0 is seen asleep (in that
 *   fsync), so it runs its whole checkpoint while racer 0 is syncing.
 * - flush: both start together.  The window (between the flusher marking
 *   its write done and recording the file for sync) is short, so this
 *   race is lost only now and then, more often on a loaded machine.
 *
 * Between trials REL_B's pending sync is dropped (buf_drop_rel) rather
 * than synced, which keeps the trials cheap; no trial relies on an earlier
 * one being durable.  One lost race fails the test.
 */
#define RACE_TRIALS 200

typedef struct racer {
    atomic_u32 *go; /* wait until it is non-zero first, unless NULL */
    buf_session *s;
    int32_t id;      /* buffer to flush, or BUF_INVALID to checkpoint */
    atomic_u32 tid;  /* the thread's id, once started */
    atomic_u32 done; /* set when the operation has returned */
    int rc;
    char msg[KERR_MSG_MAX];
} racer;

static void *racer_main(void *arg)
{
    racer *r = arg;

    atomic_store(&r->tid, (uint32_t)syscall(SYS_gettid));
    if (r->go != NULL)
        while (atomic_load(r->go) == 0)
            sched_yield();
    if (r->id != BUF_INVALID)
        r->rc = buf_flush(r->s, r->id);
    else
        r->rc = buf_checkpoint(r->s);
    snprintf(r->msg, sizeof(r->msg), "%s", buf_session_error(r->s)->msg);
    atomic_store(&r->done, 1);
    return NULL;
}

/* True if thread tid of this process is asleep (state S or D). */
static bool thread_asleep(uint32_t tid)
{
    char path[64], buf[512];
    const char *p;
    FILE *fp;
    size_t n;

    snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
    fp = fopen(path, "r");
    if (fp == NULL)
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the state follows "(comm) " */
    return p != NULL && (p[2] == 'S' || p[2] == 'D');
}

/* The pages of both relations have been written (or were never dirty). */
static bool race_pages_written(fixture *f)
{
    int32_t a = find_buffer(f, REL_A, 0), b = find_buffer(f, REL_B, 0);

    return (a == BUF_INVALID || !(buf_state(f->pool, a) & BM_DIRTY)) &&
           (b == BUF_INVALID || !(buf_state(f->pool, b) & BM_DIRTY));
}

static void checkpoint_race(fixture *f, bool second_flushes)
{
    racer rc[2];
    atomic_u32 go;
    int lost = 0, trial;

    memset(rc, 0, sizeof(rc));
    for (int i = 0; i < 2; i++)
        assert_int_equal(buf_session_create(f->pool, &rc[i].s, &f->err),
                         KEEL_OK);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (trial = 1; trial <= RACE_TRIALS && lost == 0; trial++) {
        pthread_t th[2];

        set_value(f, REL_B, 0, (uint64_t)trial);
        if (!second_flushes)
            set_value(f, REL_A, 0, (uint64_t)trial);
        atomic_store(&go, 0);
        for (int i = 0; i < 2; i++) {
            rc[i].go = &go;
            rc[i].id = BUF_INVALID;
            rc[i].rc = -1;
            atomic_store(&rc[i].tid, 0);
            atomic_store(&rc[i].done, 0);
        }
        if (second_flushes)
            assert_int_equal(buf_read(rc[1].s, REL_B, 0, NULL, &rc[1].id),
                             KEEL_OK);
        else
            rc[0].go = NULL; /* racer 0 checkpoints at once */
        fault_arm(FAULT_OP_SYNC, FAULT_EIO, 0, UINT32_MAX, REL_B);

        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&th[i], NULL, racer_main, &rc[i]),
                             0);
        if (!second_flushes) {
            /* Wait (at most a second) for racer 0 to sleep in its fsync
             * of REL_A. */
            uint64_t deadline = clock_now_ns() + 1000000000;
            while (!atomic_load(&rc[0].done) && clock_now_ns() < deadline) {
                uint32_t tid = atomic_load(&rc[0].tid);
                if (tid != 0 && race_pages_written(f) && thread_asleep(tid))
                    break;
                sched_yield();
            }
        } else {
            while (atomic_load(&rc[0].tid) == 0 || atomic_load(&rc[1].tid) == 0)
                sched_yield();
        }
        atomic_store(&go, 1);
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_join(th[i], NULL), 0);
        fault_disarm_all();

        for (int i = 0; i < 2; i++) {
            if (rc[i].id != BUF_INVALID) {
                /* Writes are not faulted: the flush itself must work. */
                if (rc[i].rc != KEEL_OK)
                    fail_msg("trial %d: buf_flush: %s", trial, rc[i].msg);
                buf_release(rc[i].s, rc[i].id);
            } else if (rc[i].rc != KEEL_EIO) {
                lost++;
                print_message("trial %d: checkpoint %d returned %s, expected "
                              "%s\n",
                              trial, i, keel_status_str(rc[i].rc),
                              keel_status_str(KEEL_EIO));
            }
        }
        assert_quiet(f);
        /* Settle: the page was written (by the flush, or by the
         * checkpoints' write phase); forget REL_B's pending sync. */
        {
            int32_t b = find_buffer(f, REL_B, 0);
            assert_true(b == BUF_INVALID ||
                        !(buf_state(f->pool, b) & BM_DIRTY));
        }
        assert_int_equal(buf_drop_rel(f->s, REL_B, 0), KEEL_OK);
        if (buf_checkpoint(f->s) != KEEL_OK)
            fail_msg("trial %d: settling checkpoint: %s", trial,
                     buf_session_error(f->s)->msg);
    }
    for (int i = 0; i < 2; i++)
        buf_session_destroy(rc[i].s);
    if (lost != 0)
        fail_msg("trial %d of %d: a checkpoint returned KEEL_OK although "
                 "every fsync of \"%s/%u\" failed and a change made before "
                 "it began had not been synced",
                 trial - 1, RACE_TRIALS, f->dir, REL_B);
    reopen(f);
    assert_int_equal(get_value(f, REL_B, 0), RACE_TRIALS);
}

/* A checkpoint against a buf_flush of the page it must sync. */
static void test_checkpoint_races_flush(void **state)
{
    checkpoint_race(*state, true);
}

/* Two checkpoints at once: both must report the failed sync. */
static void test_checkpoint_races_checkpoint(void **state)
{
    checkpoint_race(*state, false);
}

/* ---- extension --------------------------------------------------------- */

static long file_size(fixture *f, relnumber_t rel)
{
    char path[4200];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%u", f->dir, rel);
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

/* The extension's own write fails: error, size unchanged, nothing held. */
static void test_extend_fault(void **state)
{
    fixture *f = *state;
    smgr_rel *r = NULL;

    assert_int_equal(smgr_rel_open(f->sm, REL_A, &r, &f->err), KEEL_OK);
    for (size_t k = 0; k < NKINDS; k++) {
        fault_kind kind = write_kinds[k];
        int32_t id = BUF_INVALID;
        blocknum_t blk = MAX_BLOCK_NUMBER;
        int rc;

        fault_arm(FAULT_OP_WRITE, kind, 0, 1, REL_A);
        rc = buf_extend(f->s, REL_A, 0, NULL, &id, &blk);
        assert_error(f, buf_session_error(f->s), rc, write_status(kind), REL_A,
                     MAX_BLOCK_NUMBER);
        assert_msg_has(buf_session_error(f->s), "block 32");
        assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
        assert_int_equal(smgr_nblocks(r), NBLOCKS);
        assert_int_equal(file_size(f, REL_A), (long)NBLOCKS * BLOCK_SIZE);
        assert_quiet(f);
        fault_disarm_all();
    }
    /* The failed extensions left their buffer mapped to block 32, not
     * valid: a read of the block finds it and fails, as past the end. */
    {
        int32_t b = BUF_INVALID;
        assert_int_equal(buf_read(f->s, REL_A, NBLOCKS, NULL, &b), KEEL_EEOF);
        assert_msg_has(buf_session_error(f->s), "block 32");
        assert_quiet(f);
    }
    /* The next extension gets the same block number. */
    {
        int32_t id = BUF_INVALID;
        blocknum_t blk = MAX_BLOCK_NUMBER;
        assert_int_equal(buf_extend(f->s, REL_A, 0, NULL, &id, &blk), KEEL_OK);
        assert_int_equal(blk, NBLOCKS);
        tu_body_write(buf_page(f->pool, id), REL_A, blk, 5);
        buf_mark_dirty(f->s, id);
        buf_unlock(f->s, id);
        buf_release(f->s, id);
    }
    assert_quiet(f);
    reopen(f);
    assert_int_equal(get_value(f, REL_A, NBLOCKS), 5);
}

/*
 * The buffer for the new block needs a dirty victim whose write fails.  The
 * victim is found before the file grows, so the error comes back with the
 * file as it was: nothing is held, the victim's change is kept, and the
 * next extension adds the same block.
 */
static void test_extend_victim_fault(void **state)
{
    fixture *f = *state;
    uint64_t want[POOL_SIZE];
    smgr_rel *r = NULL;
    int32_t id = BUF_INVALID;
    blocknum_t blk = MAX_BLOCK_NUMBER;
    int rc;

    assert_int_equal(smgr_rel_open(f->sm, REL_A, &r, &f->err), KEEL_OK);
    for (blocknum_t i = 0; i < POOL_SIZE; i++) {
        want[i] = 300 + i;
        set_value(f, REL_A, i, want[i]);
    }
    /* Every buffer is dirty: the first write is the victim's. */
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 0, 1, REL_A);
    rc = buf_extend(f->s, REL_A, 0, NULL, &id, &blk);
    assert_int_equal(rc, KEEL_ENOSPC);
    assert_msg_has(buf_session_error(f->s), "could not write block");
    assert_int_equal(blk, MAX_BLOCK_NUMBER);
    assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
    assert_quiet(f);
    fault_disarm_all();
    assert_values(f, REL_A, POOL_SIZE, want);
    assert_int_equal(smgr_nblocks(r), NBLOCKS);
    assert_int_equal(file_size(f, REL_A), (long)NBLOCKS * BLOCK_SIZE);
    assert_int_equal(buf_extend(f->s, REL_A, 0, NULL, &id, &blk), KEEL_OK);
    assert_int_equal(blk, NBLOCKS);
    assert_true(page_is_new(buf_page(f->pool, id)) == false);
    buf_unlock_release(f->s, id);
    reopen(f);
    assert_values(f, REL_A, POOL_SIZE, want);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_read_eio),
        T(test_read_short),
        T(test_read_fault_with_strategy),
        T(test_read_fault_locking),
        T(test_flush_write_faults),
        T(test_flush_fault_then_redirty),
        T(test_evict_dirty_fault),
        T(test_evict_dirty_fault_strategy),
        T(test_checkpoint_write_eio),
        T(test_checkpoint_write_enospc),
        T(test_checkpoint_write_short),
        T(test_checkpoint_fault_then_crash),
        T(test_checkpoint_sync_fault),
        T(test_checkpoint_syncs_evicted_writes),
        T(test_checkpoint_races_flush),
        T(test_checkpoint_races_checkpoint),
        T(test_close_write_eio),
        T(test_close_write_enospc),
        T(test_close_write_short),
        T(test_close_sync_eio),
        T(test_extend_fault),
        T(test_extend_victim_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !KEEL_FAULT_INJECTION */

static void test_fault_injection_not_built(void **state)
{
    (void)state;
    print_message("built without KEEL_FAULT_INJECTION: nothing to test\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_injection_not_built),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* KEEL_FAULT_INJECTION */
