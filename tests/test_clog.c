/*
 * test_clog.c: the commit status log: statuses of many ids across several
 * pages (each id's two bits independent of its neighbours'), ids with a
 * fixed status, persistence through a checkpoint and a reopen, concurrent
 * setters on shared pages (and racing extensions: every page added once),
 * the last id whose end is recorded, and errors from the buffer pool
 * (injected read and write faults, corrupt bits) coming back to the
 * caller.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "storage/smgr.h"
#include "txn/clog.h"

#define REL_CLOG    ((relnumber_t)16400)
#define REL_MISSING ((relnumber_t)16401)
#define POOL_SIZE   64

typedef struct fixture {
    char *dir;
    smgr *sm;
    buf_pool *pool;
    buf_session *s;
    clog *c;
    kerr err;
} fixture;

static void open_all(fixture *f)
{
    if (f->sm == NULL)
        assert_int_equal(smgr_open(f->dir, &f->sm, &f->err), KEEL_OK);
    tu_pool_open(f->sm, POOL_SIZE, &f->pool, &f->s, &f->err);
    assert_int_equal(clog_open(f->pool, REL_CLOG, &f->c, &f->err), KEEL_OK);
    assert_int_equal(clog_relnumber(f->c), REL_CLOG);
}

/* Clean close of everything, storage manager included. */
static void close_all(fixture *f)
{
    clog_close(f->c);
    f->c = NULL;
    tu_pool_close(&f->pool, &f->s, &f->err);
    smgr_close(f->sm);
    f->sm = NULL;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    tu_storage_open(&f->dir, &f->sm, &f->err);
    assert_int_equal(smgr_create(f->sm, REL_CLOG, NULL, &f->err), KEEL_OK);
    open_all(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

#ifdef KEEL_FAULT_INJECTION
    fault_disarm_all();
#endif
    clog_close(f->c);
    tu_pool_drop(f->pool, f->s, &f->err);
    tu_storage_close(f->dir, f->sm);
    free(f);
    return 0;
}

/* The status the tests give xid: all three, in an irregular pattern. */
static xid_status pattern(xid_t xid, unsigned gen)
{
    return (xid_status)((xid * 7u + xid / 5u + gen) % 3u);
}

static xid_status get(fixture *f, xid_t xid)
{
    xid_status st = (xid_status)-1;

    if (clog_get(f->c, f->s, xid, &st, &f->err) != KEEL_OK)
        fail_msg("clog_get(%u): %s", xid, f->err.msg);
    return st;
}

static void set(fixture *f, xid_t xid, xid_status st)
{
    if (clog_set(f->c, f->s, xid, st, &f->err) != KEEL_OK)
        fail_msg("clog_set(%u): %s", xid, f->err.msg);
}

#define NPAGES_USED 3
#define LAST_XID    (CLOG_XIDS_PER_PAGE * NPAGES_USED - 1)

/* Sets every id of three pages to the pattern and checks them all. */
static void set_pattern(fixture *f, unsigned gen)
{
    for (xid_t x = XID_FIRST_NORMAL; x <= LAST_XID; x++)
        set(f, x, pattern(x, gen));
}

static void check_pattern(fixture *f, unsigned gen)
{
    for (xid_t x = XID_FIRST_NORMAL; x <= LAST_XID; x++) {
        xid_status st = get(f, x);
        if (st != pattern(x, gen))
            fail_msg("xid %u: status %d, expected %d", x, (int)st,
                     (int)pattern(x, gen));
    }
}

static void test_set_get_across_pages(void **state)
{
    fixture *f = *state;

    assert_int_equal(clog_npages(f->c), 0);
    /* Nothing stored yet: in progress, and reading does not extend. */
    assert_int_equal(get(f, XID_FIRST_NORMAL), XID_STATUS_IN_PROGRESS);
    assert_int_equal(get(f, LAST_XID), XID_STATUS_IN_PROGRESS);
    assert_int_equal(clog_npages(f->c), 0);

    set_pattern(f, 0);
    assert_int_equal(clog_npages(f->c), NPAGES_USED);
    check_pattern(f, 0);
    /* Every id changes (gen 1 shifts each one's status): no id's bits
     * survive or leak into a neighbour's. */
    set_pattern(f, 1);
    check_pattern(f, 1);

    /* Page boundaries: the last id of page 0 and the first of page 1. */
    set(f, CLOG_XIDS_PER_PAGE - 1, XID_STATUS_ABORTED);
    set(f, CLOG_XIDS_PER_PAGE, XID_STATUS_COMMITTED);
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE - 1), XID_STATUS_ABORTED);
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE), XID_STATUS_COMMITTED);
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE - 2),
                     pattern(CLOG_XIDS_PER_PAGE - 2, 1));
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE + 1),
                     pattern(CLOG_XIDS_PER_PAGE + 1, 1));

    /* A far id extends through every page up to its own. */
    set(f, CLOG_XIDS_PER_PAGE * 6 + 17, XID_STATUS_COMMITTED);
    assert_int_equal(clog_npages(f->c), 7);
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE * 6 + 17), XID_STATUS_COMMITTED);
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE * 6 + 16),
                     XID_STATUS_IN_PROGRESS);
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE * 4), XID_STATUS_IN_PROGRESS);

    /* clog_ensure adds the page and nothing else. */
    assert_int_equal(clog_ensure(f->c, f->s, CLOG_XIDS_PER_PAGE * 7, &f->err),
                     KEEL_OK);
    assert_int_equal(clog_npages(f->c), 8);
    assert_int_equal(clog_ensure(f->c, f->s, CLOG_XIDS_PER_PAGE * 7, &f->err),
                     KEEL_OK);
    assert_int_equal(clog_npages(f->c), 8);
    assert_int_equal(buf_session_pinned(f->s), 0);
}

static void test_fixed_ids(void **state)
{
    fixture *f = *state;
    xid_status st;

    assert_int_equal(get(f, XID_INVALID), XID_STATUS_COMMITTED);
    assert_int_equal(get(f, 1), XID_STATUS_COMMITTED);
    assert_int_equal(get(f, XID_FROZEN), XID_STATUS_COMMITTED);
    assert_int_equal(
        clog_set(f->c, f->s, XID_FROZEN, XID_STATUS_ABORTED, &f->err),
        KEEL_EINVAL);
    assert_int_equal(get(f, XID_FROZEN), XID_STATUS_COMMITTED);
    assert_int_equal(
        clog_set(f->c, f->s, XID_FIRST_NORMAL, (xid_status)3, &f->err),
        KEEL_EINVAL);
    assert_int_equal(clog_get(f->c, f->s, XID_FIRST_NORMAL, &st, &f->err),
                     KEEL_OK);
    assert_int_equal(st, XID_STATUS_IN_PROGRESS);
}

static void test_open_errors(void **state)
{
    fixture *f = *state;
    clog *c = (clog *)&c;

    assert_int_equal(clog_open(f->pool, REL_MISSING, &c, &f->err), KEEL_ENOENT);
    assert_null(c);
    assert_int_equal(clog_open(f->pool, INVALID_RELNUMBER, &c, &f->err),
                     KEEL_EINVAL);
    assert_null(c);
}

static void test_persistence(void **state)
{
    fixture *f = *state;

    set_pattern(f, 2);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    set(f, 100, XID_STATUS_COMMITTED); /* after the checkpoint: close
                                          writes it */
    close_all(f);
    open_all(f);
    assert_int_equal(clog_npages(f->c), NPAGES_USED);
    for (xid_t x = XID_FIRST_NORMAL; x <= LAST_XID; x++) {
        xid_status want = x == 100 ? XID_STATUS_COMMITTED : pattern(x, 2);
        xid_status st = get(f, x);
        if (st != want)
            fail_msg("after reopen xid %u: status %d, expected %d", x, (int)st,
                     (int)want);
    }
}

/* Concurrent setters: thread t owns the ids congruent to t mod NTHREADS. */
#define NTHREADS      4
#define CONC_LAST_XID (CLOG_XIDS_PER_PAGE * 2 + CLOG_XIDS_PER_PAGE / 3)

typedef struct setter {
    fixture *f;
    unsigned t;
    pthread_barrier_t *start;
    int failed_rc;
    kerr err;
} setter;

static void *setter_main(void *arg)
{
    setter *w = arg;
    buf_session *bs;

    if (buf_session_create(w->f->pool, &bs, &w->err) != KEEL_OK) {
        w->failed_rc = w->err.code;
        pthread_barrier_wait(w->start);
        return NULL;
    }
    pthread_barrier_wait(w->start);
    /* Everyone walks up the ids together, so they reach each new page at
     * about the same time and race to extend it. */
    for (xid_t x = XID_FIRST_NORMAL + w->t; x <= CONC_LAST_XID; x += NTHREADS) {
        int rc = clog_set(w->f->c, bs, x, pattern(x, 5), &w->err);
        if (rc != KEEL_OK) {
            w->failed_rc = rc;
            break;
        }
    }
    buf_session_destroy(bs);
    return NULL;
}

static void test_concurrent_setters(void **state)
{
    fixture *f = *state;
    pthread_t th[NTHREADS];
    setter w[NTHREADS];
    pthread_barrier_t start;

    pthread_barrier_init(&start, NULL, NTHREADS);
    for (unsigned t = 0; t < NTHREADS; t++) {
        memset(&w[t], 0, sizeof(w[t]));
        w[t].f = f;
        w[t].t = t;
        w[t].start = &start;
        assert_int_equal(pthread_create(&th[t], NULL, setter_main, &w[t]), 0);
    }
    for (unsigned t = 0; t < NTHREADS; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    pthread_barrier_destroy(&start);
    for (unsigned t = 0; t < NTHREADS; t++)
        if (w[t].failed_rc != KEEL_OK)
            fail_msg("setter %u: %s", t, w[t].err.msg);
    /* Each page added exactly once despite the races. */
    assert_int_equal(clog_npages(f->c), CONC_LAST_XID / CLOG_XIDS_PER_PAGE + 1);
    for (xid_t x = XID_FIRST_NORMAL; x <= CONC_LAST_XID; x++) {
        xid_status st = get(f, x);
        if (st != pattern(x, 5))
            fail_msg("xid %u: status %d, expected %d (lost update?)", x,
                     (int)st, (int)pattern(x, 5));
    }
    tu_assert_pool_quiet(f->pool);
}

/* clog_last_ended(): the highest id whose end is recorded, found on the
 * last page or, when that one was only just added, the one before it. */
static void test_last_ended(void **state)
{
    fixture *f = *state;
    xid_t last = 1;

    assert_int_equal(clog_last_ended(f->c, f->s, &last, &f->err), KEEL_OK);
    assert_int_equal(last, XID_INVALID);
    set(f, 5, XID_STATUS_ABORTED);
    set(f, 40, XID_STATUS_COMMITTED);
    assert_int_equal(clog_last_ended(f->c, f->s, &last, &f->err), KEEL_OK);
    assert_int_equal(last, 40);
    set(f, 43, XID_STATUS_COMMITTED); /* the last of its byte */
    assert_int_equal(clog_last_ended(f->c, f->s, &last, &f->err), KEEL_OK);
    assert_int_equal(last, 43);
    set(f, CLOG_XIDS_PER_PAGE - 1, XID_STATUS_ABORTED);
    assert_int_equal(clog_ensure(f->c, f->s, CLOG_XIDS_PER_PAGE, &f->err),
                     KEEL_OK);
    assert_int_equal(clog_last_ended(f->c, f->s, &last, &f->err), KEEL_OK);
    assert_int_equal(last, CLOG_XIDS_PER_PAGE - 1);
    set(f, CLOG_XIDS_PER_PAGE + 2, XID_STATUS_COMMITTED);
    assert_int_equal(clog_last_ended(f->c, f->s, &last, &f->err), KEEL_OK);
    assert_int_equal(last, CLOG_XIDS_PER_PAGE + 2);
    assert_int_equal(buf_session_pinned(f->s), 0);
}

static void test_corrupt_bits(void **state)
{
    fixture *f = *state;
    xid_status st;
    int32_t id;

    set(f, 40, XID_STATUS_COMMITTED);
    assert_int_equal(buf_read(f->s, REL_CLOG, 0, NULL, &id), KEEL_OK);
    buf_lock(f->s, id, LW_EXCLUSIVE);
    /* Xids 40..43 share the byte at 24 + 10; 3 is no status. */
    ((unsigned char *)buf_page(f->pool, id))[PAGE_HEADER_SIZE + 10] = 0xFF;
    buf_mark_dirty(f->s, id);
    buf_unlock(f->s, id);
    buf_release(f->s, id);
    assert_int_equal(clog_get(f->c, f->s, 41, &st, &f->err), KEEL_ECORRUPT);
    assert_non_null(strstr(f->err.msg, "41"));
    assert_int_equal(buf_session_pinned(f->s), 0);
}

#ifdef KEEL_FAULT_INJECTION
static void test_faults_propagate(void **state)
{
    fixture *f = *state;
    xid_status st;

    set(f, 50, XID_STATUS_COMMITTED);
    set(f, 51, XID_STATUS_ABORTED);
    close_all(f);
    open_all(f);

    /* The page is not in the new pool: reading it fails, with the pool's
     * message (naming the file) and no pin left. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, REL_CLOG);
    kerr_clear(&f->err);
    assert_int_equal(clog_get(f->c, f->s, 50, &st, &f->err), KEEL_EIO);
    assert_int_equal(f->err.code, KEEL_EIO);
    assert_non_null(strstr(f->err.msg, "16400"));
    assert_int_equal(fault_delivered(FAULT_OP_READ), 1);
    assert_int_equal(buf_session_pinned(f->s), 0);
    /* clog_set reads the page too. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, REL_CLOG);
    assert_int_equal(clog_set(f->c, f->s, 52, XID_STATUS_COMMITTED, &f->err),
                     KEEL_EIO);
    fault_disarm_all();
    assert_int_equal(get(f, 50), XID_STATUS_COMMITTED);
    assert_int_equal(get(f, 51), XID_STATUS_ABORTED);
    assert_int_equal(get(f, 52), XID_STATUS_IN_PROGRESS);

    /* Extension fails: nothing added, and a retry works. */
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 0, 1, REL_CLOG);
    assert_int_equal(clog_set(f->c, f->s, CLOG_XIDS_PER_PAGE + 5,
                              XID_STATUS_COMMITTED, &f->err),
                     KEEL_ENOSPC);
    assert_int_equal(clog_npages(f->c), 1);
    assert_int_equal(clog_ensure(f->c, f->s, CLOG_XIDS_PER_PAGE, &f->err),
                     KEEL_OK); /* disarmed after one fault */
    assert_int_equal(clog_npages(f->c), 2);
    fault_disarm_all();
    set(f, CLOG_XIDS_PER_PAGE + 5, XID_STATUS_COMMITTED);
    assert_int_equal(get(f, CLOG_XIDS_PER_PAGE + 5), XID_STATUS_COMMITTED);
    assert_int_equal(buf_session_pinned(f->s), 0);
}
#else
static void test_faults_propagate(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_get_across_pages, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fixed_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_setters, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_last_ended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_bits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_faults_propagate, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
