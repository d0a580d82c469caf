/*
 * test_bench_select.c: the select-only transaction of the benchmarks
 * (bench/select_txn.c) does exactly the work it claims: per transaction,
 * once warm, the catalog cache answers 3 hits and 1 negative hit (the
 * search path's keel_catalog) when the column has statistics, 2 hits and
 * 2 negative hits (the statistics too) when it has none, 1 list hit, no
 * miss; every snapshot after the first is reused while no transaction
 * with an xid ends (all as the benchmark's own select_counts_read()
 * counts them); the buffer reads are the same 3 every time (the
 * leaf, entered from the session's directory of the index, the heap page
 * and the commit log's page), plus one for each move right the directory
 * counted; and the row read is the account asked for.  A probe of a
 * missing name in public finds the schema by name (a hit), and misses
 * once, then hits its negative entry; a probe that finds a relation
 * fails the transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine/engine.h"
#include "select_txn.h"

#define ACCOUNTS 3000
#define TXNS     200

/* The directory statistics the counters leave out: lookups that asked
 * for one and builds, over the session's directories (it has one: the
 * primary key's). */
static void dir_stats(const select_client *c, btree_dir_stats *st)
{
    int n = 0;

    memset(st, 0, sizeof(*st));
    for (int i = 0; i < ENGINE_SESSION_DIRS; i++)
        if (c->s->dirs[i] != NULL) {
            btree_dir_stats one;
            btree_dir_stats_get(c->s->dirs[i], &one);
            st->uses += one.uses;
            st->builds += one.builds;
            n++;
        }
    assert_int_equal(n, 1);
}

/* A pgbench_accounts of rows 1..n (abalance = 3 * aid), not analyzed. */
static keel_db *make_db_rows(const char *dir, int32_t n)
{
    static const keel_column cols[] = {
        {"aid", KEEL_INT4, 0, true},
        {"bid", KEEL_INT4, 0, false},
        {"abalance", KEEL_INT4, 0, false},
        {"filler", KEEL_CHAR, 84, false},
    };
    const uint16_t pk = 1;
    keel_db_options o;
    keel_db *db = NULL;
    keel_session *s = NULL;
    keel_value v[4];

    keel_db_options_init(&o);
    o.dir = dir;
    assert_int_equal(keel_db_create(&o, NULL), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, SELECT_TABLE, cols, 4, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    memset(v, 0, sizeof(v));
    v[3].v.s.ptr = "x";
    v[3].v.s.len = 1;
    for (int32_t aid = 1; aid <= n; aid++) {
        v[0].v.i4 = aid;
        v[1].v.i4 = 1;
        v[2].v.i4 = 3 * aid;
        assert_int_equal(keel_insert(s, NULL, SELECT_TABLE, v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    return db;
}

static keel_db *make_db(const char *dir)
{
    return make_db_rows(dir, ACCOUNTS);
}

/* Runs one warm-up and TXNS counted transactions; checks the row of each
 * and returns the counters' differences over the counted ones (the
 * benchmark's own select_counts), and the directory's uses and builds. */
static void run_txns(select_client *c, const char *probe, select_counts *d,
                     uint64_t *dir_uses, uint64_t *dir_builds)
{
    uint64_t rng = 42;
    select_counts a, b;
    btree_dir_stats s0, s1;
    char msg[256];
    int32_t bal = 0;

    assert_int_equal(select_txn_run(c, 1, probe, &bal, msg, sizeof(msg)),
                     KEEL_OK);
    assert_int_equal(bal, 3);
    select_counts_read(c, &a);
    dir_stats(c, &s0);
    for (int i = 0; i < TXNS; i++) {
        int32_t aid = select_next_aid(&rng, ACCOUNTS);
        assert_true(aid >= 1 && aid <= ACCOUNTS);
        assert_int_equal(select_txn_run(c, aid, probe, &bal, msg, sizeof(msg)),
                         KEEL_OK);
        assert_int_equal(bal, 3 * aid);
    }
    select_counts_read(c, &b);
    dir_stats(c, &s1);
    select_counts_diff(&a, &b, d);
    *dir_uses = s1.uses - s0.uses;
    *dir_builds = s1.builds - s0.builds;
}

/* The catalog cache's and the snapshots' counts, per TXNS transactions:
 * hits and negative hits as given, one list hit, no miss, every snapshot
 * reused. */
static void assert_catalog_counts(const select_counts *d, uint64_t hits,
                                  uint64_t negative_hits)
{
    assert_int_equal(d->hits, hits);
    assert_int_equal(d->negative_hits, negative_hits);
    assert_int_equal(d->misses, 0);
    assert_int_equal(d->list_hits, TXNS);
    assert_int_equal(d->list_misses, 0);
    assert_int_equal(d->snapshots_reused, TXNS);
    assert_int_equal(d->snapshots_taken, 0);
}

static void test_counts_per_transaction(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = make_db(dir);
    select_client c;
    keel_session *s;
    char msg[256];
    select_counts d;
    uint64_t uses, builds;
    int32_t bal, n;

    (void)state;
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_OK);
    assert_true(c.tuples == 0); /* never analyzed */
    /* Never analyzed: the accounts are counted. */
    n = 0;
    assert_int_equal(select_client_accounts(&c, &n, msg, sizeof(msg)), KEEL_OK);
    assert_int_equal(n, ACCOUNTS);

    /* No statistics: the statistics look-up is a second negative hit. */
    run_txns(&c, NULL, &d, &uses, &builds);
    assert_catalog_counts(&d, 2 * TXNS, 2 * TXNS);
    /* Buffer reads: the leaf (from the directory, built in the warm-up),
     * the heap page and the commit log's page (the rows' xid is not frozen)
     * each time, and a right sibling for each move right (a key equal to
     * a leaf's first: its entry might have been left of it); the catalog
     * look-ups, all hits, read none. */
    assert_int_equal(uses, TXNS);
    assert_int_equal(builds, 0);
    assert_true(d.dir_moves < TXNS / 10);
    assert_int_equal(d.buffer_reads, 3 * TXNS + d.dir_moves);

    /* A missing account is not an error: the transaction commits. */
    assert_int_equal(
        select_txn_run(&c, ACCOUNTS + 1, NULL, &bal, msg, sizeof(msg)),
        KEEL_ENOENT);

    /* Analyze (in another session; its commit invalidates the
     * statistics' negative entry): now the statistics are a hit. */
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_analyze(s, NULL, SELECT_TABLE), KEEL_OK);
    keel_session_end(s);
    run_txns(&c, NULL, &d, &uses, &builds);
    assert_catalog_counts(&d, 3 * TXNS, TXNS);

    /* One probed name in public, the same each time: the schema by name
     * (a hit), and a negative hit after the name's first miss (in
     * run_txns' warm-up). */
    run_txns(&c, "tmp_never_created", &d, &uses, &builds);
    assert_catalog_counts(&d, 4 * TXNS, 2 * TXNS);
    /* A probe that finds a relation fails the transaction. */
    assert_int_equal(
        select_txn_run(&c, 1, SELECT_TABLE, &bal, msg, sizeof(msg)),
        KEEL_EEXIST);
    assert_non_null(strstr(msg, "exists"));
    assert_int_equal(select_txn_run(&c, 2, NULL, &bal, msg, sizeof(msg)),
                     KEEL_OK);
    assert_int_equal(bal, 6);

    select_client_close(&c);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* Counting the accounts of a table never analyzed: its aids must be
 * 1..N, as the benchmarks draw them; once analyzed, its row count is
 * taken as it stands. */
static void test_accounts(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = make_db(dir);
    select_client c;
    keel_session *s;
    keel_value key = {.isnull = false};
    char msg[256];
    int32_t n = -1;

    (void)state;
    /* A gap in the middle. */
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    key.v.i4 = ACCOUNTS / 2;
    assert_int_equal(keel_delete(s, NULL, SELECT_TABLE, &key), KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_OK);
    assert_int_equal(select_client_accounts(&c, &n, msg, sizeof(msg)),
                     KEEL_EINVAL);
    assert_int_equal(n, -1);
    assert_non_null(strstr(msg, "aids are not 1..N"));
    /* The failed count left no transaction open. */
    assert_int_equal(select_txn_run(&c, 1, NULL, &n, msg, sizeof(msg)),
                     KEEL_OK);
    assert_int_equal(n, 3);
    select_client_close(&c);

    /* Analyzed: the row count, gap or not. */
    assert_int_equal(keel_analyze(s, NULL, SELECT_TABLE), KEEL_OK);
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_OK);
    assert_int_equal(select_client_accounts(&c, &n, msg, sizeof(msg)), KEEL_OK);
    assert_int_equal(n, ACCOUNTS - 1);
    select_client_close(&c);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* An empty pgbench_accounts, never analyzed: no accounts to draw. */
static void test_no_accounts(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = make_db_rows(dir, 0);
    select_client c;
    char msg[256];
    int32_t n = -1;

    (void)state;
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_OK);
    assert_int_equal(select_client_accounts(&c, &n, msg, sizeof(msg)),
                     KEEL_EINVAL);
    assert_non_null(strstr(msg, "is empty"));
    select_client_close(&c);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* A new database in dir, opened, with no table of its own. */
static keel_db *make_empty_db(const char *dir)
{
    keel_db_options o;
    keel_db *db = NULL;

    keel_db_options_init(&o);
    o.dir = dir;
    assert_int_equal(keel_db_create(&o, NULL), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, NULL), KEEL_OK);
    return db;
}

/* A database without pgbench_accounts: opening a client fails cleanly. */
static void test_missing_table(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = make_empty_db(dir);
    select_client c;
    char msg[256] = "";

    (void)state;
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_ENOENT);
    assert_non_null(strstr(msg, SELECT_TABLE));
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* A pgbench_accounts whose abalance is not int4: opening a client fails
 * with ETYPE. */
static void test_abalance_type(void **state)
{
    static const keel_column cols[] = {{"aid", KEEL_INT4, 0, true},
                                       {"abalance", KEEL_INT8, 0, false}};
    const uint16_t pk = 1;
    char *dir = tu_mkdtemp();
    keel_db *db = make_empty_db(dir);
    keel_session *s = NULL;
    select_client c;
    char msg[256] = "";

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, SELECT_TABLE, cols, 2, &pk, 1),
                     KEEL_OK);
    keel_session_end(s);
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_ETYPE);
    assert_non_null(strstr(msg, "not int4"));
    assert_null(c.s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_per_transaction),
        cmocka_unit_test(test_accounts),
        cmocka_unit_test(test_no_accounts),
        cmocka_unit_test(test_missing_table),
        cmocka_unit_test(test_abalance_type),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
