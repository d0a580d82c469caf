/*
 * test_savepoint.c: savepoints through the public API: what a rollback to
 * one takes back and what it keeps, what it refuses, another session
 * meeting a row a rollback gave back, and concurrent transfers between
 * accounts whose steps are taken back at random, whose balances and
 * history must add up to exactly the steps kept by the commits.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keel/keel.h"

static double now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define NACCT     20
#define START_BAL 1000

static const keel_column acct_cols[] = {
    {"id", KEEL_INT4, 0, true},
    {"bal", KEEL_INT4, 0, true},
};

static keel_db_options opts_for(const char *dir)
{
    keel_db_options o;

    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 4;
    o.max_sessions = 8;
    return o;
}

/* A database with tables acct (NACCT rows of START_BAL) and hist. */
static char *make_db(keel_db **db, keel_session **s)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    uint16_t pk = 1;

    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(*db, s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(*s, NULL, "acct", acct_cols, 2, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_create_table(*s, NULL, "hist", acct_cols, 2, &pk, 1),
                     KEEL_OK);
    for (int32_t i = 1; i <= NACCT; i++) {
        keel_value v[2] = {tu_vi4(i), tu_vi4(START_BAL)};
        assert_int_equal(keel_insert(*s, NULL, "acct", v), KEEL_OK);
    }
    return dir;
}

/* Row id's balance, or GONE if the session does not see it. */
#define GONE INT32_MIN

static int32_t bal_of(keel_session *s, const char *table, int32_t id)
{
    keel_value key = tu_vi4(id), out[2];
    bool found = false;

    assert_int_equal(keel_lookup(s, NULL, table, &key, out, &found), KEEL_OK);
    return found ? out[1].v.i4 : GONE;
}

static keel_status set_bal(keel_session *s, int32_t id, int32_t bal)
{
    keel_value key = tu_vi4(id), v[2] = {tu_vi4(id), tu_vi4(bal)};

    return keel_update(s, NULL, "acct", &key, v);
}

static keel_status add_row(keel_session *s, const char *table, int32_t id,
                           int32_t bal)
{
    keel_value v[2] = {tu_vi4(id), tu_vi4(bal)};

    return keel_insert(s, NULL, table, v);
}

static void close_and_check(char *dir, keel_db *db, keel_session *s)
{
    keel_error e;
    uint64_t problems = 1, notes = 0;

    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(keel_check(dir, NULL, NULL, &problems, &notes, &e),
                     KEEL_OK);
    assert_int_equal(problems, 0);
    tu_dir_remove(dir);
}

static void test_savepoint_basics(void **state)
{
    keel_db *db;
    keel_session *s;
    char *dir = make_db(&db, &s);
    uint32_t level = 0;

    (void)state;
    /* Only in a transaction keel_begin() began. */
    assert_int_equal(keel_savepoint(s, &level), KEEL_EINVAL);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_rollback_to_savepoint(s, 1), KEEL_EINVAL);
    assert_int_equal(keel_release_savepoint(s, 1), KEEL_EINVAL);

    assert_int_equal(keel_savepoint(s, &level), KEEL_OK);
    assert_int_equal(level, 1);
    assert_int_equal(set_bal(s, 1, 1500), KEEL_OK);
    assert_int_equal(keel_savepoint(s, &level), KEEL_OK);
    assert_int_equal(level, 2);
    assert_int_equal(add_row(s, "acct", 21, 5), KEEL_OK);
    assert_int_equal(keel_delete(s, NULL, "acct", &(keel_value){.v.i4 = 2}),
                     KEEL_OK);
    assert_int_equal(set_bal(s, 3, 3), KEEL_OK);
    assert_int_equal(set_bal(s, 3, 33), KEEL_OK);
    /* A failed call changes nothing: the transaction goes on. */
    assert_int_equal(add_row(s, "acct", 4, 0), KEEL_EUNIQUE);
    assert_int_equal(keel_rollback_to_savepoint(s, 3), KEEL_EINVAL);
    assert_int_equal(keel_rollback_to_savepoint(s, 2), KEEL_OK);
    assert_int_equal(bal_of(s, "acct", 21), GONE);
    assert_int_equal(bal_of(s, "acct", 2), START_BAL);
    assert_int_equal(bal_of(s, "acct", 3), START_BAL);
    assert_int_equal(bal_of(s, "acct", 1), 1500);
    /* Savepoint 2 stays; a new one comes after it. */
    assert_int_equal(keel_savepoint(s, &level), KEEL_OK);
    assert_int_equal(level, 3);
    assert_int_equal(add_row(s, "acct", 21, 6), KEEL_OK); /* key free again */
    assert_int_equal(keel_release_savepoint(s, 2), KEEL_OK);
    assert_int_equal(keel_rollback_to_savepoint(s, 2), KEEL_EINVAL);
    assert_int_equal(bal_of(s, "acct", 21), 6);
    assert_int_equal(keel_rollback_to_savepoint(s, 1), KEEL_OK);
    assert_int_equal(bal_of(s, "acct", 21), GONE);
    assert_int_equal(bal_of(s, "acct", 1), START_BAL);
    assert_int_equal(set_bal(s, 5, 55), KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(bal_of(s, "acct", 5), 55);
    assert_int_equal(bal_of(s, "acct", 1), START_BAL);
    assert_int_equal(bal_of(s, "acct", 21), GONE);

    /* A schema change since the savepoint is not taken back: refused,
     * changing nothing. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_savepoint(s, &level), KEEL_OK);
    assert_int_equal(set_bal(s, 6, 66), KEEL_OK);
    assert_int_equal(
        keel_create_table(s, NULL, "later", acct_cols, 2, &(uint16_t){1}, 1),
        KEEL_OK);
    assert_int_equal(keel_rollback_to_savepoint(s, 1), KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(s), "schema"));
    assert_int_equal(bal_of(s, "acct", 6), 66);
    assert_int_equal(keel_abort(s), KEEL_OK);
    assert_int_equal(bal_of(s, "acct", 6), START_BAL);
    /* A savepoint set after it rolls back as usual. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(
        keel_create_table(s, NULL, "later", acct_cols, 2, &(uint16_t){1}, 1),
        KEEL_OK);
    assert_int_equal(keel_savepoint(s, &level), KEEL_OK);
    assert_int_equal(add_row(s, "later", 1, 1), KEEL_OK);
    assert_int_equal(keel_rollback_to_savepoint(s, 1), KEEL_OK);
    assert_int_equal(add_row(s, "later", 2, 2), KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(bal_of(s, "later", 1), GONE);
    assert_int_equal(bal_of(s, "later", 2), 2);
    close_and_check(dir, db, s);
}

typedef struct waiter {
    keel_db *db;
    keel_status rc;
    int32_t bal;
} waiter;

/* Read committed: waits for the row's changer, then changes the row. */
static void *wait_and_update(void *arg)
{
    waiter *w = arg;
    keel_session *s;
    keel_error e;

    assert_int_equal(keel_session_begin(w->db, &s, &e), KEEL_OK);
    assert_int_equal(keel_set_isolation(s, KEEL_READ_COMMITTED), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    w->rc = set_bal(s, 7, 777);
    if (w->rc == KEEL_OK)
        w->rc = keel_commit(s);
    else
        keel_abort(s);
    w->bal = bal_of(s, "acct", 7);
    keel_session_end(s);
    return NULL;
}

/* Other sessions meet a row whose change was taken back as a row nobody
 * changed. */
static void test_savepoint_gives_rows_back(void **state)
{
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    char *dir = make_db(&db, &a);
    uint32_t level;
    pthread_t t;
    waiter w = {.db = db};

    (void)state;
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    /* Repeatable read: the row is free once the change is taken back,
     * while its transaction still runs. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_savepoint(a, &level), KEEL_OK);
    assert_int_equal(set_bal(a, 5, 555), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(set_bal(b, 5, 5), KEEL_ESERIALIZE);
    assert_int_equal(keel_rollback_to_savepoint(a, level), KEEL_OK);
    assert_int_equal(set_bal(b, 5, 5), KEEL_OK);
    assert_int_equal(keel_commit(b), KEEL_OK);
    /* ... and the first updater is b now. */
    assert_int_equal(set_bal(a, 5, 556), KEEL_ESERIALIZE);
    assert_int_equal(keel_abort(a), KEEL_OK);
    assert_int_equal(bal_of(a, "acct", 5), 5);

    /* Read committed: a session waiting for the changer's transaction
     * changes the row as the rollback left it. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_savepoint(a, &level), KEEL_OK);
    assert_int_equal(set_bal(a, 7, 70), KEEL_OK);
    assert_int_equal(pthread_create(&t, NULL, wait_and_update, &w), 0);
    usleep(50 * 1000);
    assert_int_equal(keel_rollback_to_savepoint(a, level), KEEL_OK);
    assert_int_equal(bal_of(a, "acct", 7), START_BAL);
    usleep(20 * 1000);
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(w.rc, KEEL_OK);
    assert_int_equal(w.bal, 777);
    assert_int_equal(bal_of(a, "acct", 7), 777);
    keel_session_end(b);
    close_and_check(dir, db, a);
}

#define NTHREADS 4
#define STEPS    4

typedef struct mover {
    keel_db *db;
    int id;
    double seconds;
    /* Kept by committed transactions: each account's change, the
     * history's rows and amounts. */
    int64_t delta[NACCT + 1];
    int64_t hist_rows, hist_sum;
    uint64_t commits, rolled_back, failed;
} mover;

/*
 * One step of a transfer: amt from account x to y and a history row,
 * under savepoint `level`; the balances are read first.  Any failure
 * (another transaction changed a row first) leaves the caller to take
 * the step back.
 */
static keel_status transfer(keel_session *s, int32_t x, int32_t y, int32_t amt,
                            int32_t hist_id)
{
    int32_t bx = bal_of(s, "acct", x), by = bal_of(s, "acct", y);
    keel_status rc;

    assert_true(bx != GONE && by != GONE);
    rc = set_bal(s, x, bx - amt);
    if (rc == KEEL_OK)
        rc = set_bal(s, y, by + amt);
    if (rc == KEEL_OK)
        rc = add_row(s, "hist", hist_id, amt);
    return rc;
}

static void *mover_main(void *arg)
{
    mover *m = arg;
    keel_session *s;
    keel_error e;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(m->id + 1);
    double until = now_seconds() + m->seconds;
    int32_t next_hist = m->id * 10000000;

    assert_int_equal(keel_session_begin(m->db, &s, &e), KEEL_OK);
    while (now_seconds() < until) {
        int64_t delta[NACCT + 1] = {0};
        int64_t rows = 0, sum = 0;
        bool ok = keel_begin(s) == KEEL_OK;
        for (int step = 0; ok && step < STEPS; step++) {
            int32_t x = (int32_t)(tu_rand(&rng) % NACCT) + 1;
            int32_t y = (int32_t)(tu_rand(&rng) % (NACCT - 1)) + 1;
            int32_t amt = (int32_t)(tu_rand(&rng) % 50) + 1;
            uint32_t level = 0;
            keel_status rc;
            if (y >= x)
                y++;
            assert_int_equal(keel_savepoint(s, &level), KEEL_OK);
            assert_int_equal(level, 1);
            rc = transfer(s, x, y, amt, next_hist);
            if (rc != KEEL_OK)
                assert_int_equal(rc, KEEL_ESERIALIZE);
            if (rc != KEEL_OK || tu_rand(&rng) % 3 == 0) {
                /* Taken back; the history id comes round again. */
                assert_int_equal(keel_rollback_to_savepoint(s, level), KEEL_OK);
                assert_int_equal(keel_release_savepoint(s, level), KEEL_OK);
                m->rolled_back++;
                continue;
            }
            assert_int_equal(keel_release_savepoint(s, level), KEEL_OK);
            delta[x] -= amt;
            delta[y] += amt;
            rows++;
            sum += amt;
            next_hist++;
        }
        if (ok && keel_commit(s) == KEEL_OK) {
            for (int i = 1; i <= NACCT; i++)
                m->delta[i] += delta[i];
            m->hist_rows += rows;
            m->hist_sum += sum;
            m->commits++;
        } else {
            m->failed++;
        }
    }
    keel_session_end(s);
    return NULL;
}

static void test_savepoint_transfers(void **state)
{
    keel_db *db;
    keel_session *s;
    char *dir = make_db(&db, &s);
    mover m[NTHREADS];
    pthread_t t[NTHREADS];
    int64_t want[NACCT + 1] = {0}, rows = 0, sum = 0, got_sum = 0;
    uint64_t commits = 0, rolled_back = 0;
    int64_t got_rows = 0;
    keel_scan *sc;
    bool found;

    (void)state;
    for (int i = 0; i < NTHREADS; i++) {
        memset(&m[i], 0, sizeof(m[i]));
        m[i].db = db;
        m[i].id = i;
        m[i].seconds = tu_stress_seconds(1.0);
        assert_int_equal(pthread_create(&t[i], NULL, mover_main, &m[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        for (int a = 1; a <= NACCT; a++)
            want[a] += m[i].delta[a];
        rows += m[i].hist_rows;
        sum += m[i].hist_sum;
        commits += m[i].commits;
        rolled_back += m[i].rolled_back;
    }
    printf("# %llu commits, %llu steps taken back\n",
           (unsigned long long)commits, (unsigned long long)rolled_back);
    assert_true(commits > 0);
    assert_true(rolled_back > 0);
    for (int a = 1; a <= NACCT; a++)
        if (bal_of(s, "acct", a) != START_BAL + want[a])
            fail_msg("account %d: balance %d, the kept steps give %lld", a,
                     bal_of(s, "acct", a), (long long)(START_BAL + want[a]));
    assert_int_equal(keel_scan_begin(s, NULL, "hist", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    for (;;) {
        keel_value v[2];
        assert_int_equal(keel_scan_next(sc, v, &found), KEEL_OK);
        if (!found)
            break;
        got_rows++;
        got_sum += v[1].v.i4;
    }
    keel_scan_end(sc);
    assert_int_equal(got_rows, rows);
    assert_int_equal(got_sum, sum);
    close_and_check(dir, db, s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_savepoint_basics),
        cmocka_unit_test(test_savepoint_gives_rows_back),
        cmocka_unit_test(test_savepoint_transfers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
