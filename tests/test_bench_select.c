/*
 * test_bench_select.c: the select-only transaction of the benchmarks
 * (bench/select_txn.c) does exactly the work it claims: per transaction,
 * once warm, the catalog cache answers 3 hits and 1 negative hit (the
 * search path's keel_catalog) when the column has statistics, 2 hits and
 * 2 negative hits (the statistics too) when it has none, 1 list hit, no
 * miss; every snapshot after the first is reused while no transaction
 * with an xid ends; the buffer reads are the same 3 every time (the
 * leaf, entered from the session's directory of the index, the heap page
 * and the commit log's page), plus one for each move right the directory
 * counted; and the row read is the account asked for.  A probe of a
 * missing name misses once, then hits its negative entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cache/syscache.h"
#include "select_txn.h"

#define ACCOUNTS 3000
#define TXNS     200

typedef struct counts {
    uint64_t hits, negative_hits, misses, list_hits, list_misses;
    uint64_t reused, taken;
    uint64_t pins;
    uint64_t dir_uses, dir_moves, dir_builds; /* the index's directory */
} counts;

static void counts_now(const select_client *c, counts *out)
{
    syscache_stats cs;
    txn_stats ts;

    syscache_get_stats(c->s->cache, &cs);
    txn_session_stats(c->s->ts, &ts);
    out->hits = cs.hits;
    out->negative_hits = cs.negative_hits;
    out->misses = cs.misses;
    out->list_hits = cs.list_hits;
    out->list_misses = cs.list_misses;
    out->reused = ts.snapshots_reused;
    out->taken = ts.snapshots_taken;
    out->pins = buf_session_reads(c->s->bs);
    if (c->pkey != NULL) {
        btree_dir_stats st;
        btree_dir *d = engine_index_dir(c->s, c->pkey->bt);
        assert_non_null(d);
        btree_dir_stats_get(d, &st);
        out->dir_uses = st.uses;
        out->dir_moves = st.moves;
        out->dir_builds = st.builds;
    }
}

/* A pgbench_accounts of ACCOUNTS rows (abalance = 3 * aid), not
 * analyzed. */
static keel_db *make_db(const char *dir)
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
    for (int32_t aid = 1; aid <= ACCOUNTS; aid++) {
        v[0].v.i4 = aid;
        v[1].v.i4 = 1;
        v[2].v.i4 = 3 * aid;
        assert_int_equal(keel_insert(s, NULL, SELECT_TABLE, v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    return db;
}

/* Runs one warm-up and TXNS counted transactions; checks the row of each
 * and returns the counters' differences over the counted ones. */
static void run_txns(select_client *c, const char *probe, counts *d)
{
    uint64_t rng = 42;
    counts a, b;
    int32_t bal = 0;

    assert_int_equal(select_txn_run(c, 1, probe, &bal), KEEL_OK);
    assert_int_equal(bal, 3);
    counts_now(c, &a);
    for (int i = 0; i < TXNS; i++) {
        int32_t aid = select_next_aid(&rng, ACCOUNTS);
        assert_true(aid >= 1 && aid <= ACCOUNTS);
        assert_int_equal(select_txn_run(c, aid, probe, &bal), KEEL_OK);
        assert_int_equal(bal, 3 * aid);
    }
    counts_now(c, &b);
    d->hits = b.hits - a.hits;
    d->negative_hits = b.negative_hits - a.negative_hits;
    d->misses = b.misses - a.misses;
    d->list_hits = b.list_hits - a.list_hits;
    d->list_misses = b.list_misses - a.list_misses;
    d->reused = b.reused - a.reused;
    d->taken = b.taken - a.taken;
    d->pins = b.pins - a.pins;
    d->dir_uses = b.dir_uses - a.dir_uses;
    d->dir_moves = b.dir_moves - a.dir_moves;
    d->dir_builds = b.dir_builds - a.dir_builds;
}

static void test_counts_per_transaction(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = make_db(dir);
    select_client c;
    keel_session *s;
    char msg[256];
    counts d;
    int32_t bal;

    (void)state;
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_OK);
    assert_true(c.tuples == 0); /* never analyzed */

    /* No statistics: the statistics look-up is a second negative hit. */
    run_txns(&c, NULL, &d);
    assert_int_equal(d.hits, 2 * TXNS);
    assert_int_equal(d.negative_hits, 2 * TXNS);
    assert_int_equal(d.misses, 0);
    assert_int_equal(d.list_hits, TXNS);
    assert_int_equal(d.list_misses, 0);
    assert_int_equal(d.reused, TXNS);
    assert_int_equal(d.taken, 0);
    /* Buffer reads: the leaf (from the directory, built in the warm-up),
     * the heap page and the commit log's page (the rows' xid is not frozen)
     * each time, and a right sibling for each move right (a key equal to
     * a leaf's first: its entry might have been left of it); the catalog
     * look-ups, all hits, read none. */
    assert_int_equal(d.dir_uses, TXNS);
    assert_int_equal(d.dir_builds, 0);
    assert_true(d.dir_moves < TXNS / 10);
    assert_int_equal(d.pins, 3 * TXNS + d.dir_moves);

    /* A missing account is not an error: the transaction commits. */
    assert_int_equal(select_txn_run(&c, ACCOUNTS + 1, NULL, &bal), KEEL_ENOENT);

    /* Analyze (in another session; its commit invalidates the
     * statistics' negative entry): now the statistics are a hit. */
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_analyze(s, NULL, SELECT_TABLE), KEEL_OK);
    keel_session_end(s);
    run_txns(&c, NULL, &d);
    assert_int_equal(d.hits, 3 * TXNS);
    assert_int_equal(d.negative_hits, TXNS);
    assert_int_equal(d.misses, 0);
    assert_int_equal(d.list_hits, TXNS);
    assert_int_equal(d.list_misses, 0);
    assert_int_equal(d.reused, TXNS);
    assert_int_equal(d.taken, 0);

    /* One probed name, the same each time: a negative hit after its first
     * miss (in run_txns' warm-up). */
    run_txns(&c, "tmp_never_created", &d);
    assert_int_equal(d.hits, 3 * TXNS);
    assert_int_equal(d.negative_hits, 2 * TXNS);
    assert_int_equal(d.misses, 0);

    select_client_close(&c);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* A database without pgbench_accounts: opening a client fails cleanly. */
static void test_missing_table(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    keel_db *db = NULL;
    select_client c;
    char msg[256] = "";

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    assert_int_equal(keel_db_create(&o, NULL), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, NULL), KEEL_OK);
    assert_int_equal(select_client_open(db, &c, msg, sizeof(msg)), KEEL_ENOENT);
    assert_non_null(strstr(msg, SELECT_TABLE));
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_per_transaction),
        cmocka_unit_test(test_missing_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
