/*
 * test_bench_tpcb.c: pgbench's read-write transaction of the benchmarks
 * (bench/tpcb_txn.c) on small pgbench tables: one transaction adds its
 * delta to exactly one account, teller and branch and records it in the
 * history, keeping each row's filler; a row another transaction holds
 * makes it fail whole with KEEL_ESERIALIZE and a retry after that
 * transaction ends succeeds; a missing row fails it whole; the totals
 * refuse tables whose ids are not 1..N.  Under concurrent clients (few
 * rows, so that they collide often) every transaction commits in the end,
 * the four sums stay equal, the history holds one row per commit, and
 * each account, teller and branch holds exactly the sum of its history's
 * deltas.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "tools/pgbench.h"
#include "tpcb_txn.h"

#define BRANCHES 2
#define TELLERS  6
#define ACCOUNTS 60

typedef struct fixture {
    char *dir;
    keel_db *db;
    keel_session *s;
} fixture;

/* Row id of a table of n columns: id, (bid,) balance 0, a filler naming
 * the row. */
static void insert_row(keel_session *s, const char *table, uint16_t ncols,
                       int32_t id)
{
    keel_value v[4];
    char filler[32];
    uint16_t i = 0;

    snprintf(filler, sizeof(filler), "%s-%d", table + 8, id);
    v[i++] = tu_vi4(id);
    if (ncols == 4)
        v[i++] = tu_vi4((id - 1) % BRANCHES + 1);
    v[i++] = tu_vi4(0);
    v[i++] = tu_vstr(filler);
    assert_int_equal(keel_insert(s, NULL, table, v), KEEL_OK);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    keel_db_options o;
    keel_error e;
    uint16_t pk = 1;

    assert_non_null(f);
    f->dir = tu_mkdtemp();
    keel_db_options_init(&o);
    o.dir = f->dir;
    o.pool_mb = 8;
    o.max_sessions = 16;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &f->db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(f->db, &f->s, &e), KEEL_OK);
    for (int i = 0; i < 4; i++) {
        static const char *const tables[] = {
            "pgbench_branches", "pgbench_tellers", "pgbench_accounts",
            "pgbench_history"};
        uint16_t ncols = 0;
        const keel_column *cols = pgbench_columns(tables[i], &ncols);
        assert_non_null(cols);
        assert_int_equal(keel_create_table(f->s, NULL, tables[i], cols, ncols,
                                           i < 3 ? &pk : NULL, i < 3 ? 1 : 0),
                         KEEL_OK);
    }
    assert_int_equal(keel_begin(f->s), KEEL_OK);
    for (int32_t id = 1; id <= BRANCHES; id++)
        insert_row(f->s, "pgbench_branches", 3, id);
    for (int32_t id = 1; id <= TELLERS; id++)
        insert_row(f->s, "pgbench_tellers", 4, id);
    for (int32_t id = 1; id <= ACCOUNTS; id++)
        insert_row(f->s, "pgbench_accounts", 4, id);
    assert_int_equal(keel_commit(f->s), KEEL_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    keel_error e;

    keel_session_end(f->s);
    assert_int_equal(keel_db_close(f->db, &e), KEEL_OK);
    tu_dir_remove(f->dir);
    free(f);
    return 0;
}

static void read_totals(keel_session *s, tpcb_totals *t)
{
    char msg[KEEL_ERROR_MSG_MAX] = "";
    int rc = tpcb_totals_read(s, t, msg, sizeof(msg));

    if (rc != KEEL_OK)
        fail_msg("tpcb_totals_read: %s", msg);
}

/* The balance and filler of row id of table (balance column col). */
static int32_t row_balance(keel_session *s, const char *table, uint16_t col,
                           int32_t id, char *filler, size_t len)
{
    keel_value key = tu_vi4(id), row[4];
    bool found = false;

    assert_int_equal(keel_lookup(s, NULL, table, &key, row, &found), KEEL_OK);
    assert_true(found);
    if (filler != NULL) {
        const keel_value *fv = &row[col + 1];
        assert_false(fv->isnull);
        assert_true(fv->v.s.len < len);
        memcpy(filler, fv->v.s.ptr, fv->v.s.len);
        filler[fv->v.s.len] = '\0';
    }
    return row[col].v.i4;
}

/* A filler as insert_row() wrote it, blank-padded to its char(n). */
static void expect_filler(const char *got, const char *table, int32_t id,
                          size_t n)
{
    char want[128];

    snprintf(want, sizeof(want), "%s-%d", table + 8, id);
    assert_int_equal(strlen(got), n);
    assert_memory_equal(got, want, strlen(want));
    for (size_t i = strlen(want); i < n; i++)
        assert_int_equal(got[i], ' ');
}

static void test_one_transaction(void **state)
{
    fixture *f = *state;
    tpcb_params p = {.aid = 5, .tid = 3, .bid = 2, .delta = 123};
    tpcb_totals t;
    char msg[KEEL_ERROR_MSG_MAX], fill[128];
    int32_t bal = 0;

    read_totals(f->s, &t);
    assert_int_equal(t.branches, BRANCHES);
    assert_int_equal(t.tellers, TELLERS);
    assert_int_equal(t.accounts, ACCOUNTS);
    assert_true(t.history == 0 && t.abalance == 0 && t.delta == 0);
    assert_int_equal(tpcb_txn_try(f->s, &p, 42, &bal, msg, sizeof(msg)),
                     KEEL_OK);
    assert_int_equal(bal, 123);
    p.delta = -200;
    assert_int_equal(tpcb_txn_try(f->s, &p, 43, &bal, msg, sizeof(msg)),
                     KEEL_OK);
    assert_int_equal(bal, -77);
    read_totals(f->s, &t);
    assert_true(tpcb_totals_consistent(&t));
    assert_true(t.history == 2 && t.abalance == -77 && t.delta == -77);
    assert_int_equal(
        row_balance(f->s, "pgbench_accounts", 2, 5, fill, sizeof(fill)), -77);
    expect_filler(fill, "pgbench_accounts", 5, 84);
    assert_int_equal(
        row_balance(f->s, "pgbench_tellers", 2, 3, fill, sizeof(fill)), -77);
    expect_filler(fill, "pgbench_tellers", 3, 84);
    assert_int_equal(
        row_balance(f->s, "pgbench_branches", 1, 2, fill, sizeof(fill)), -77);
    expect_filler(fill, "pgbench_branches", 2, 88);
    /* Nothing else moved. */
    assert_int_equal(row_balance(f->s, "pgbench_accounts", 2, 6, NULL, 0), 0);
    assert_int_equal(row_balance(f->s, "pgbench_branches", 1, 1, NULL, 0), 0);
    /* Only pgbench's four tables have columns to give. */
    uint16_t n = 1;
    assert_null(pgbench_columns("pgbench_nope", &n));
    assert_int_equal(n, 0);
    /* The draws stay inside the tables. */
    uint64_t rng = 7;
    for (int i = 0; i < 10000; i++) {
        tpcb_params_next(&rng, &t, &p);
        assert_true(p.aid >= 1 && p.aid <= ACCOUNTS);
        assert_true(p.tid >= 1 && p.tid <= TELLERS);
        assert_true(p.bid >= 1 && p.bid <= BRANCHES);
        assert_true(p.delta >= -5000 && p.delta <= 5000);
    }
}

static void test_conflict_and_retry(void **state)
{
    fixture *f = *state;
    tpcb_params p = {.aid = 9, .tid = 4, .bid = 1, .delta = 50};
    keel_session *holder;
    keel_value key = tu_vi4(1), row[3];
    tpcb_totals before, after;
    keel_error e;
    char msg[KEEL_ERROR_MSG_MAX];
    bool found;
    uint32_t tries = 0;
    int32_t bal;

    read_totals(f->s, &before);
    /* Another transaction holds branch 1 (an update that changes
     * nothing, so the sums stay equal). */
    assert_int_equal(keel_session_begin(f->db, &holder, &e), KEEL_OK);
    assert_int_equal(keel_begin(holder), KEEL_OK);
    assert_int_equal(
        keel_lookup(holder, NULL, "pgbench_branches", &key, row, &found),
        KEEL_OK);
    assert_true(found);
    assert_int_equal(keel_update(holder, NULL, "pgbench_branches", &key, row),
                     KEEL_OK);
    /* The account and teller updates that came first are undone. */
    assert_int_equal(tpcb_txn_try(f->s, &p, 1, &bal, msg, sizeof(msg)),
                     KEEL_ESERIALIZE);
    assert_int_equal(tpcb_txn_run(f->s, &p, 1, 3, &tries, msg, sizeof(msg)),
                     KEEL_ESERIALIZE);
    assert_int_equal(tries, 3);
    read_totals(f->s, &after);
    assert_true(after.history == before.history);
    assert_true(after.abalance == before.abalance);
    assert_true(after.tbalance == before.tbalance);
    assert_int_equal(row_balance(f->s, "pgbench_accounts", 2, 9, NULL, 0), 0);
    /* Once the holder ends, the next try commits. */
    assert_int_equal(keel_commit(holder), KEEL_OK);
    assert_int_equal(tpcb_txn_run(f->s, &p, 1, 0, &tries, msg, sizeof(msg)),
                     KEEL_OK);
    assert_int_equal(tries, 1);
    read_totals(f->s, &after);
    assert_true(tpcb_totals_consistent(&after));
    assert_true(after.history == before.history + 1);
    assert_true(after.abalance == before.abalance + 50);
    keel_session_end(holder);
}

static void test_missing_rows(void **state)
{
    fixture *f = *state;
    tpcb_params p = {.aid = ACCOUNTS + 1, .tid = 1, .bid = 1, .delta = 10};
    tpcb_totals before, after;
    char msg[KEEL_ERROR_MSG_MAX];
    int32_t bal;

    read_totals(f->s, &before);
    assert_int_equal(tpcb_txn_try(f->s, &p, 1, &bal, msg, sizeof(msg)),
                     KEEL_ENOENT);
    assert_string_equal(msg, "pgbench_accounts has no row 61");
    /* A missing teller, after the account's update: undone too. */
    p.aid = 1;
    p.tid = TELLERS + 1;
    assert_int_equal(tpcb_txn_try(f->s, &p, 1, &bal, msg, sizeof(msg)),
                     KEEL_ENOENT);
    assert_string_equal(msg, "pgbench_tellers has no row 7");
    read_totals(f->s, &after);
    assert_memory_equal(&before, &after, sizeof(before));
    /* Ids that are not 1..N: the draws could not be trusted. */
    keel_value key = tu_vi4(1);
    assert_int_equal(keel_delete(f->s, NULL, "pgbench_branches", &key),
                     KEEL_OK);
    assert_int_equal(tpcb_totals_read(f->s, &after, msg, sizeof(msg)),
                     KEEL_EINVAL);
    assert_non_null(strstr(msg, "pgbench_branches"));
    assert_int_equal(keel_delete(f->s, NULL, "pgbench_branches",
                                 &(keel_value){.isnull = false, .v.i4 = 2}),
                     KEEL_OK);
    assert_int_equal(tpcb_totals_read(f->s, &after, msg, sizeof(msg)),
                     KEEL_EINVAL);
    assert_string_equal(msg, "pgbench_branches has 0 rows");
}

/* ---- concurrent clients ------------------------------------------ */

typedef struct client {
    keel_db *db;
    const tpcb_totals *sizes;
    double seconds;
    uint64_t seed;
    uint64_t commits, tries;
    bool read_committed;
    int rc;
    char msg[KEEL_ERROR_MSG_MAX];
} client;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *client_main(void *arg)
{
    client *c = arg;
    keel_session *s = NULL;
    keel_error e;
    double end = now_s() + c->seconds;
    uint64_t rng = c->seed;

    c->rc = keel_session_begin(c->db, &s, &e);
    if (c->rc != KEEL_OK) {
        snprintf(c->msg, sizeof(c->msg), "%s", e.msg);
        return NULL;
    }
    if (c->read_committed)
        c->rc = keel_set_isolation(s, KEEL_READ_COMMITTED);
    while (c->rc == KEEL_OK && now_s() < end) {
        tpcb_params p;
        uint32_t tries = 0;
        tpcb_params_next(&rng, c->sizes, &p);
        c->rc = tpcb_txn_run(s, &p, (int64_t)c->commits, 0, &tries, c->msg,
                             sizeof(c->msg));
        c->tries += tries;
        c->commits += c->rc == KEEL_OK;
    }
    keel_session_end(s);
    return NULL;
}

/* The sums of the history's deltas by account, teller and branch must be
 * the rows' balances. */
static void check_rows_against_history(keel_session *s)
{
    int64_t by_aid[ACCOUNTS + 1] = {0}, by_tid[TELLERS + 1] = {0},
                              by_bid[BRANCHES + 1] = {0};
    keel_value row[6];
    keel_scan *sc;
    bool found;

    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(
        keel_scan_begin(s, NULL, "pgbench_history", NULL, NULL, NULL, &sc),
        KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, row, &found), KEEL_OK);
        if (!found)
            break;
        assert_true(row[0].v.i4 >= 1 && row[0].v.i4 <= TELLERS);
        assert_true(row[1].v.i4 >= 1 && row[1].v.i4 <= BRANCHES);
        assert_true(row[2].v.i4 >= 1 && row[2].v.i4 <= ACCOUNTS);
        by_tid[row[0].v.i4] += row[3].v.i4;
        by_bid[row[1].v.i4] += row[3].v.i4;
        by_aid[row[2].v.i4] += row[3].v.i4;
    }
    keel_scan_end(sc);
    for (int32_t id = 1; id <= ACCOUNTS; id++)
        assert_true(row_balance(s, "pgbench_accounts", 2, id, NULL, 0) ==
                    by_aid[id]);
    for (int32_t id = 1; id <= TELLERS; id++)
        assert_true(row_balance(s, "pgbench_tellers", 2, id, NULL, 0) ==
                    by_tid[id]);
    for (int32_t id = 1; id <= BRANCHES; id++)
        assert_true(row_balance(s, "pgbench_branches", 1, id, NULL, 0) ==
                    by_bid[id]);
    assert_int_equal(keel_commit(s), KEEL_OK);
}

/*
 * Four clients on the tables at once, repeatable read (retrying what
 * conflicts) or read committed (waiting, then adding to the newest
 * version, with nothing to retry: the transaction takes its rows in one
 * order, so no wait closes a cycle).  Either way the sums agree, the
 * history holds every commit, and every row's balance is its history's.
 */
static void concurrent_clients(void **state, bool read_committed)
{
    enum { CLIENTS = 4 };
    fixture *f = *state;
    pthread_t th[CLIENTS];
    client c[CLIENTS];
    tpcb_totals before, after;
    uint64_t commits = 0, tries = 0;

    read_totals(f->s, &before);
    for (int i = 0; i < CLIENTS; i++) {
        memset(&c[i], 0, sizeof(c[i]));
        c[i].db = f->db;
        c[i].sizes = &before;
        c[i].seconds = tu_stress_seconds(1.0);
        c[i].seed = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        c[i].read_committed = read_committed;
        assert_int_equal(pthread_create(&th[i], NULL, client_main, &c[i]), 0);
    }
    for (int i = 0; i < CLIENTS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        if (c[i].rc != KEEL_OK)
            fail_msg("client %d: %s", i, c[i].msg);
        commits += c[i].commits;
        tries += c[i].tries;
    }
    read_totals(f->s, &after);
    print_message("%llu commits in %llu tries\n", (unsigned long long)commits,
                  (unsigned long long)tries);
    assert_true(commits > 0);
    assert_true(tpcb_totals_consistent(&after));
    assert_true(after.history == before.history + commits);
    if (read_committed)
        assert_true(tries == commits);
    check_rows_against_history(f->s);
}

static void test_concurrent_clients(void **state)
{
    concurrent_clients(state, false);
}

static void test_concurrent_read_committed(void **state)
{
    concurrent_clients(state, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflict_and_retry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_missing_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_clients, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_read_committed, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
