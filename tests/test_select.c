/*
 * test_select.c: keel_select_column(), keel_relation_exists(),
 * keel_column_type(), keel_table_rows() and engine_session_stats_get()
 * through the public API: values of several types, the search path and
 * explicit schemas, every error, the catalog look-ups each call makes
 * (counted exactly), row versions older and newer than the transaction
 * (more than one search keeps, a row's own uncommitted change, rows
 * deleted and inserted again, rows loaded frozen and changed since), the
 * statement bracket's refusals (an open scan, a failed transaction),
 * tables dropped and made again, more tables than a session keeps
 * handles for, readers racing a writer; and the key checks keel_lookup(),
 * keel_update() and keel_delete() share with keel_select_column().
 */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/btree.h"
#include "engine/engine.h"
#include "engine/internal.h"
#include "keel/keel.h"
#include "port/atomics.h"
#include "port/mem.h"
#include "port/membarrier.h"
#include "port/clock.h"

static keel_db *open_db(const char *dir, bool create)
{
    keel_db_options o;
    keel_db *db = NULL;

    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 4;
    o.max_sessions = 8;
    if (create)
        assert_int_equal(keel_db_create(&o, NULL), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, NULL), KEEL_OK);
    return db;
}

/* Table schema.name (id int4 primary key, v int4, t text, n int8
 * nullable) with ids 1..n: v = id * mult, t = "row-<id>", n null for
 * even ids, else id. */
static void make_table(keel_session *s, const char *schema, const char *name,
                       int n, int mult)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, true},
                                       {"t", KEEL_TEXT, 0, true},
                                       {"n", KEEL_INT8, 0, false}};
    uint16_t pk = 1;
    keel_value v[4];
    char buf[32];

    assert_int_equal(keel_create_table(s, schema, name, cols, 4, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int i = 1; i <= n; i++) {
        snprintf(buf, sizeof(buf), "row-%d", i);
        v[0] = tu_vi4(i);
        v[1] = tu_vi4(i * mult);
        v[2] = tu_vstr(buf);
        v[3].isnull = i % 2 == 0;
        v[3].v.i8 = i;
        assert_int_equal(keel_insert(s, schema, name, v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
}

/* An index on p.v: then every update of v makes index entries, none is
 * heap-only (access/heap_page.h), and a row's versions are found
 * through its primary key's entries, one each. */
static void index_v(keel_session *s)
{
    uint16_t vcol = 2;

    assert_int_equal(keel_create_index(s, NULL, "p", "p_v", &vcol, 1, false),
                     KEEL_OK);
}

/* keel_select_column() of an int4 column that must succeed: *found and
 * the value (0 when not found). */
static int32_t sel_i4(keel_session *s, const char *schema, const char *table,
                      const char *column, int32_t id, bool *found)
{
    keel_value key = tu_vi4(id), out = {.isnull = true};

    assert_int_equal(
        keel_select_column(s, schema, table, column, &key, &out, found),
        KEEL_OK);
    if (!*found)
        return 0;
    assert_false(out.isnull);
    return out.v.i4;
}

/* keel_select_column() that must fail with status rc and a message
 * holding what. */
static void sel_fails(keel_session *s, const char *schema, const char *table,
                      const char *column, int rc, const char *what)
{
    keel_value key = tu_vi4(1), out;
    bool found = true;

    assert_int_equal(
        keel_select_column(s, schema, table, column, &key, &out, &found), rc);
    assert_false(found);
    assert_non_null(strstr(keel_session_error(s), what));
}

static void test_values_and_names(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s;
    keel_value key = tu_vi4(7), out;
    char long_name[80];
    bool found = false;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_create_schema(s, "s1"), KEEL_OK);
    make_table(s, "s1", "t", 20, 3);
    make_table(s, NULL, "p", 5, 10);

    /* Values of each type, outside and inside an explicit transaction. */
    assert_int_equal(sel_i4(s, "s1", "t", "v", 7, &found), 21);
    assert_true(found);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_select_column(s, "s1", "t", "t", &key, &out, &found),
                     KEEL_OK);
    assert_true(found);
    assert_int_equal(out.v.s.len, 5);
    assert_memory_equal(out.v.s.ptr, "row-7", 5);
    assert_int_equal(keel_select_column(s, "s1", "t", "n", &key, &out, &found),
                     KEEL_OK);
    assert_true(found);
    assert_false(out.isnull);
    assert_true(out.v.i8 == 7);
    key = tu_vi4(8);
    assert_int_equal(keel_select_column(s, "s1", "t", "n", &key, &out, &found),
                     KEEL_OK);
    assert_true(found);
    assert_true(out.isnull);
    /* The key column itself, and a key no row has. */
    assert_int_equal(sel_i4(s, "s1", "t", "id", 20, &found), 20);
    assert_int_equal(sel_i4(s, "s1", "t", "v", 21, &found), 0);
    assert_false(found);
    assert_int_equal(sel_i4(s, "s1", "t", "v", -1, &found), 0);
    assert_false(found);
    /* A failed call leaves the transaction usable. */
    sel_fails(s, "s1", "t", "nope", KEEL_ENOENT, "column \"nope\"");
    assert_int_equal(sel_i4(s, "s1", "t", "v", 2, &found), 6);
    /* No other call while a scan is open; then as before. */
    {
        keel_scan *sc = NULL;
        assert_int_equal(keel_scan_begin(s, "s1", "t", NULL, NULL, NULL, &sc),
                         KEEL_OK);
        sel_fails(s, "s1", "t", "v", KEEL_EINVAL, "a scan is open");
        keel_scan_end(sc);
        assert_int_equal(sel_i4(s, "s1", "t", "v", 2, &found), 6);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);

    /* Without a schema: the search path, keel_catalog then public. */
    assert_int_equal(sel_i4(s, NULL, "p", "v", 3, &found), 30);
    assert_true(found);
    assert_int_equal(sel_i4(s, "public", "p", "v", 3, &found), 30);
    sel_fails(s, NULL, "t", "v", KEEL_ENOENT, "table \"t\" does not exist");
    sel_fails(s, NULL, "keel_class", "oid", KEEL_EINVAL, "not a user table");
    /* A user table named like a catalog: the catalog comes first. */
    make_table(s, NULL, "keel_class", 2, 5);
    sel_fails(s, NULL, "keel_class", "v", KEEL_EINVAL, "not a user table");
    assert_int_equal(sel_i4(s, "public", "keel_class", "v", 2, &found), 10);
    assert_true(found);

    /* Bad names. */
    sel_fails(s, "s1", "t_pkey", "id", KEEL_EINVAL, "not a user table");
    sel_fails(s, "s1", "nope", "v", KEEL_ENOENT, "table \"nope\"");
    sel_fails(s, "nope", "t", "v", KEEL_ENOENT, "schema \"nope\"");
    memset(long_name, 'x', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    sel_fails(s, "s1", long_name, "v", KEEL_ETOOBIG, "longer than 63");
    sel_fails(s, "s1", "t", long_name, KEEL_ETOOBIG, "longer than 63");
    sel_fails(s, long_name, "t", "v", KEEL_ETOOBIG, "longer than 63");
    long_name[63] = '\0'; /* 63 bytes: a name, of nothing */
    sel_fails(s, "s1", long_name, "v", KEEL_ENOENT, "does not exist");
    sel_fails(s, "s1", "", "v", KEEL_EINVAL, "table name is empty");
    sel_fails(s, "s1", NULL, "v", KEEL_EINVAL, "table name is empty");
    sel_fails(s, "s1", "t", "", KEEL_EINVAL, "column name is empty");
    sel_fails(s, "s1", "t", NULL, KEEL_EINVAL, "column name is empty");

    /* A table without a primary key. */
    {
        static const keel_column cols[] = {{"a", KEEL_INT4, 0, true}};
        assert_int_equal(keel_create_table(s, "s1", "nopk", cols, 1, NULL, 0),
                         KEEL_OK);
        sel_fails(s, "s1", "nopk", "a", KEEL_EINVAL, "no primary key");
    }

    /* A primary key of two columns (b text, a int4), and a column
     * between them. */
    {
        static const keel_column cols[] = {{"a", KEEL_INT4, 0, true},
                                           {"v", KEEL_INT4, 0, true},
                                           {"b", KEEL_TEXT, 0, true}};
        uint16_t pk[2] = {3, 1};
        keel_value row[3], k2[2];

        assert_int_equal(keel_create_table(s, "s1", "two", cols, 3, pk, 2),
                         KEEL_OK);
        for (int a = 1; a <= 3; a++) {
            row[0] = tu_vi4(a);
            row[1] = tu_vi4(100 + a);
            row[2] = tu_vstr(a == 2 ? "y" : "x");
            assert_int_equal(keel_insert(s, "s1", "two", row), KEEL_OK);
        }
        k2[0] = tu_vstr("x");
        k2[1] = tu_vi4(3);
        assert_int_equal(
            keel_select_column(s, "s1", "two", "v", k2, &out, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(out.v.i4, 103);
        k2[1] = tu_vi4(2);
        assert_int_equal(
            keel_select_column(s, "s1", "two", "v", k2, &out, &found), KEEL_OK);
        assert_false(found);
        k2[0] = tu_vstr("y");
        assert_int_equal(
            keel_select_column(s, "s1", "two", "a", k2, &out, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(out.v.i4, 2);
    }
    /* An int8 primary key: keys that differ only above the low 32 bits
     * are different keys. */
    {
        static const keel_column cols[] = {{"k", KEEL_INT8, 0, false},
                                           {"v", KEEL_INT4, 0, true}};
        uint16_t pk = 1;
        keel_value row[2], k8 = {.isnull = false};

        assert_int_equal(keel_create_table(s, "s1", "big", cols, 2, &pk, 1),
                         KEEL_OK);
        for (int64_t i = 1; i <= 3; i++) {
            row[0] = (keel_value){.isnull = false, .v.i8 = (i << 32) + 5};
            row[1] = tu_vi4((int32_t)i);
            assert_int_equal(keel_insert(s, "s1", "big", row), KEEL_OK);
        }
        for (int64_t i = 0; i <= 4; i++) {
            k8.v.i8 = (i << 32) + 5;
            out.isnull = true;
            assert_int_equal(
                keel_select_column(s, "s1", "big", "v", &k8, &out, &found),
                KEEL_OK);
            assert_int_equal(found, i >= 1 && i <= 3);
            if (found)
                assert_int_equal(out.v.i4, (int32_t)i);
        }
        k8.v.i8 = -((int64_t)2 << 32) + 5;
        assert_int_equal(
            keel_select_column(s, "s1", "big", "k", &k8, &out, &found),
            KEEL_OK);
        assert_false(found);
    }
    /* Keys: none given, a null, a string key without bytes. */
    assert_int_equal(keel_select_column(s, "s1", "t", "v", NULL, &out, &found),
                     KEEL_EINVAL);
    assert_false(found);
    assert_non_null(strstr(keel_session_error(s), "no key"));
    key.isnull = true;
    assert_int_equal(keel_select_column(s, "s1", "t", "v", &key, &out, &found),
                     KEEL_OK);
    assert_false(found);
    {
        keel_value k2[2] = {{.isnull = false}, tu_vi4(1)};
        k2[0].v.s.len = 1;
        assert_int_equal(
            keel_select_column(s, "s1", "two", "v", k2, &out, &found),
            KEEL_ETYPE);
        assert_false(found);
        k2[0] = tu_vstr("x"); /* a null in the key's second column */
        k2[1].isnull = true;
        assert_int_equal(
            keel_select_column(s, "s1", "two", "v", k2, &out, &found), KEEL_OK);
        assert_false(found);
    }

    /* The same keys through keel_lookup(), keel_update(), keel_delete(). */
    {
        keel_value row[4], k2[2] = {{.isnull = false}, tu_vi4(1)};
        k2[0].v.s.len = 1;
        assert_int_equal(keel_lookup(s, "s1", "t", NULL, row, &found),
                         KEEL_EINVAL);
        assert_false(found);
        assert_int_equal(keel_lookup(s, "s1", "t", &key, row, &found),
                         KEEL_OK); /* key is null */
        assert_false(found);
        assert_int_equal(keel_lookup(s, "s1", "two", k2, row, &found),
                         KEEL_ETYPE);
        row[0] = tu_vi4(1);
        row[1] = tu_vi4(1);
        row[2] = tu_vstr("x");
        row[3].isnull = true;
        assert_int_equal(keel_update(s, "s1", "t", &key, row), KEEL_ENOENT);
        assert_int_equal(keel_delete(s, "s1", "t", &key), KEEL_ENOENT);
        assert_int_equal(keel_delete(s, "s1", "t", NULL), KEEL_EINVAL);
        assert_int_equal(keel_delete(s, "s1", "two", k2), KEEL_ETYPE);
        assert_int_equal(keel_update(s, "s1", "t", NULL, row), KEEL_EINVAL);
        assert_int_equal(keel_update(s, "s1", "two", k2, row), KEEL_ETYPE);
        k2[0] = tu_vstr("x");
        k2[1].isnull = true;
        assert_int_equal(keel_lookup(s, "s1", "two", k2, row, &found), KEEL_OK);
        assert_false(found);
    }

    /* Column types. */
    {
        keel_type ty = KEEL_BOOL;
        assert_int_equal(keel_column_type(s, "s1", "t", "t", &ty), KEEL_OK);
        assert_int_equal(ty, KEEL_TEXT);
        assert_int_equal(keel_column_type(s, NULL, "p", "n", &ty), KEEL_OK);
        assert_int_equal(ty, KEEL_INT8);
        assert_int_equal(keel_column_type(s, "s1", "t", "nope", &ty),
                         KEEL_ENOENT);
        assert_non_null(strstr(keel_session_error(s), "column \"nope\""));
        assert_int_equal(keel_column_type(s, "s1", "nope", "v", &ty),
                         KEEL_ENOENT);
        assert_int_equal(keel_column_type(s, "s1", "t", "", &ty), KEEL_EINVAL);
        assert_int_equal(
            keel_column_type(s, "keel_catalog", "keel_class", "oid", &ty),
            KEEL_EINVAL);
        assert_int_equal(keel_column_type(s, "s1", "t", long_name, &ty),
                         KEEL_ENOENT);
        long_name[63] = 'x';
        assert_int_equal(keel_column_type(s, "s1", "t", long_name, &ty),
                         KEEL_ETOOBIG);
        assert_int_equal(ty, KEEL_INT8);
    }
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* The catalog cache's counters a call moved. */
typedef struct cache_moves {
    uint64_t hits, negative_hits, misses, list_hits, list_misses;
} cache_moves;

/* Asserts the moves of the counters since a, as given. */
#define ASSERT_MOVES(s, a, h, neg, miss, lists)                                \
    do {                                                                       \
        cache_moves m_ = moves_since((s), (a));                                \
        assert_int_equal(m_.hits, (h));                                        \
        assert_int_equal(m_.negative_hits, (neg));                             \
        assert_int_equal(m_.misses, (miss));                                   \
        assert_int_equal(m_.list_hits, (lists));                               \
        assert_int_equal(m_.list_misses, 0);                                   \
    } while (0)

static cache_moves moves_since(keel_session *s, const keel_cache_stats *a)
{
    keel_cache_stats b;
    cache_moves m;

    keel_session_cache_stats(s, &b);
    m.hits = b.hits - a->hits;
    m.negative_hits = b.negative_hits - a->negative_hits;
    m.misses = b.misses - a->misses;
    m.list_hits = b.list_hits - a->list_hits;
    m.list_misses = b.list_misses - a->list_misses;
    return m;
}

/* The look-ups of one warm call, exactly, with the table's column
 * statistics absent, then present; and those of relation probes. */
static void test_catalog_lookups(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s;
    keel_cache_stats a;
    engine_session_stats ss0, ss1;
    double rows = -1;
    bool found, exists;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    make_table(s, NULL, "p", 300, 2);
    assert_int_equal(keel_table_rows(s, NULL, "p", &rows), KEEL_OK);
    assert_true(rows == 0);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 1, &found), 2);

    /* Warm, not analyzed: keel_catalog (negative), public (hit), the
     * column (hit), its statistics (negative), the index list (hit). */
    keel_session_cache_stats(s, &a);
    engine_session_stats_get(s, &ss0);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 150, &found), 300);
    ASSERT_MOVES(s, &a, 2, 2, 0, 1);
    /* The leaf and the heap page, and the commit log's page for the
     * row's inserter (no hint bits in this build's rows yet, or one
     * read fewer once they are set). */
    engine_session_stats_get(s, &ss1);
    assert_true(ss1.buffer_reads - ss0.buffer_reads >= 2);
    assert_true(ss1.buffer_reads - ss0.buffer_reads <=
                3 + ss1.index_dir_moves - ss0.index_dir_moves);
    /* With the schema named: the schema by name instead of keel_catalog. */
    keel_session_cache_stats(s, &a);
    assert_int_equal(sel_i4(s, "public", "p", "v", 10, &found), 20);
    ASSERT_MOVES(s, &a, 3, 1, 0, 1);
    assert_int_equal(keel_commit(s), KEEL_OK);

    /* Analyzed: the statistics are a hit, once cached. */
    assert_int_equal(keel_analyze(s, NULL, "p"), KEEL_OK);
    assert_int_equal(keel_table_rows(s, NULL, "p", &rows), KEEL_OK);
    assert_true(rows == 300);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 3, &found), 6);
    keel_session_cache_stats(s, &a);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 4, &found), 8);
    ASSERT_MOVES(s, &a, 3, 1, 0, 1);

    /* Probes: a name never asked for misses once, then is a negative
     * entry; a table and an index exist. */
    keel_session_cache_stats(s, &a);
    assert_int_equal(keel_relation_exists(s, "public", "tmp_1", &exists),
                     KEEL_OK);
    assert_false(exists);
    ASSERT_MOVES(s, &a, 1, 0, 1, 0); /* the schema's hit, the name's miss */
    keel_session_cache_stats(s, &a);
    assert_int_equal(keel_relation_exists(s, "public", "tmp_1", &exists),
                     KEEL_OK);
    assert_false(exists);
    ASSERT_MOVES(s, &a, 1, 1, 0, 0);
    assert_int_equal(keel_relation_exists(s, NULL, "p", &exists), KEEL_OK);
    assert_true(exists);
    assert_int_equal(keel_relation_exists(s, NULL, "p_pkey", &exists), KEEL_OK);
    assert_true(exists);
    assert_int_equal(keel_relation_exists(s, NULL, "keel_class", &exists),
                     KEEL_OK);
    assert_true(exists);
    assert_int_equal(keel_relation_exists(s, "keel_catalog", "p", &exists),
                     KEEL_OK);
    assert_false(exists);
    assert_int_equal(keel_commit(s), KEEL_OK);
    exists = true;
    assert_int_equal(keel_relation_exists(s, "nope", "p", &exists),
                     KEEL_ENOENT);
    assert_false(exists);
    assert_non_null(strstr(keel_session_error(s), "schema \"nope\""));
    assert_int_equal(keel_relation_exists(s, NULL, "", &exists), KEEL_EINVAL);
    assert_int_equal(keel_relation_exists(s, NULL, NULL, &exists), KEEL_EINVAL);
    {
        char long_name[80];
        memset(long_name, 'y', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        assert_int_equal(keel_relation_exists(s, NULL, long_name, &exists),
                         KEEL_ETOOBIG);
        assert_int_equal(keel_relation_exists(s, long_name, "p", &exists),
                         KEEL_ETOOBIG);
        assert_int_equal(keel_table_rows(s, NULL, long_name, &rows),
                         KEEL_ETOOBIG);
    }
    assert_int_equal(keel_table_rows(s, NULL, "nope", &rows), KEEL_ENOENT);

    /* Snapshots: a transaction after one that ended with an xid takes a
     * new one; after one without, reuses it. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    engine_session_stats_get(s, &ss0);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    engine_session_stats_get(s, &ss1);
    assert_int_equal(ss1.snapshots_reused - ss0.snapshots_reused, 1);
    assert_int_equal(ss1.snapshots_taken - ss0.snapshots_taken, 0);
    {
        keel_value v[4] = {
            tu_vi4(301), tu_vi4(602), tu_vstr("row-301"), {.isnull = 1}};
        assert_int_equal(keel_insert(s, NULL, "p", v), KEEL_OK);
    }
    engine_session_stats_get(s, &ss0);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 301, &found), 602);
    engine_session_stats_get(s, &ss1);
    assert_int_equal(ss1.snapshots_taken - ss0.snapshots_taken, 1);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* Versions: a transaction that began before thirty updates of a row sees
 * the first version, a later one the last (the first entry of the key is
 * then dead to it), a deleted row is gone only for transactions after
 * the delete. */
static void test_versions(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *old;
    keel_value key = tu_vi4(5), v[4];
    bool found;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &old, NULL), KEEL_OK);
    make_table(s, NULL, "p", 10, 1);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    for (int i = 0; i < 30; i++) {
        v[0] = tu_vi4(5);
        v[1] = tu_vi4(1000 + i);
        v[2] = tu_vstr("changed");
        v[3].isnull = true;
        assert_int_equal(keel_update(s, NULL, "p", &key, v), KEEL_OK);
        assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 1000 + i);
        assert_true(found);
    }
    /* A new transaction finds the last of 31 versions: the first entry,
     * then the last in tid order; a few pages, not one per version. */
    {
        engine_session_stats a, b;
        engine_session_stats_get(s, &a);
        assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 1029);
        engine_session_stats_get(s, &b);
        assert_true(b.buffer_reads - a.buffer_reads <= 8);
        /* keel_lookup() too: its search is taken from its last. */
        a = b;
        assert_int_equal(keel_lookup(s, NULL, "p", &key, v, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(v[1].v.i4, 1029);
        engine_session_stats_get(s, &b);
        assert_true(b.buffer_reads - a.buffer_reads <= 8);
    }
    key = tu_vi4(6);
    assert_int_equal(keel_delete(s, NULL, "p", &key), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 6, &found), 0);
    assert_false(found);
    /* The old transaction sees neither change. */
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    assert_true(found);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 6, &found), 6);
    assert_true(found);
    assert_int_equal(keel_commit(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 1029);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 6, &found), 0);
    assert_false(found);
    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* Sets row id of p (id, v, t, n) to v in its own transaction. */
static void set_v(keel_session *s, int32_t id, int32_t v)
{
    keel_value key = tu_vi4(id), row[4];

    row[0] = tu_vi4(id);
    row[1] = tu_vi4(v);
    row[2] = tu_vstr("changed");
    row[3].isnull = true;
    assert_int_equal(keel_update(s, NULL, "p", &key, row), KEEL_OK);
}

/* keel_lookup() of id in p: the row's v, or -1 when there is none. */
static int32_t lookup_v(keel_session *s, int32_t id)
{
    keel_value key = tu_vi4(id), row[4];
    bool found = false;

    assert_int_equal(keel_lookup(s, NULL, "p", &key, row, &found), KEEL_OK);
    return found ? row[1].v.i4 : -1;
}

/*
 * A row updated 600 times.  The primary key's unique check passes the
 * versions it has found dead (their deleters committed) without reading
 * them again, so an update reads a few pages, not three per version; a
 * snapshot older than every update still reads its version.  A version
 * deleted by a transaction that then aborts is not dead: after an aborted
 * update the row's key is still taken, and once the row is deleted it is
 * free.
 */
static void test_hot_row_updates(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *old;
    engine_session_stats a, b;
    keel_value key = tu_vi4(5), row[4];
    bool found;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &old, NULL), KEEL_OK);
    make_table(s, NULL, "p", 10, 1);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    for (int i = 0; i < 600; i++)
        set_v(s, 5, 1000 + i);
    engine_session_stats_get(s, &a);
    set_v(s, 5, 2000);
    engine_session_stats_get(s, &b);
    assert_true(b.buffer_reads - a.buffer_reads <= 24); /* 15 measured */
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 2000);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    assert_int_equal(lookup_v(old, 5), 5);
    assert_int_equal(keel_commit(old), KEEL_OK);

    row[0] = tu_vi4(5);
    row[1] = tu_vi4(1);
    row[2] = tu_vstr("again");
    row[3].isnull = true;
    assert_int_equal(keel_begin(s), KEEL_OK);
    set_v(s, 5, 3000);
    keel_abort(s);
    assert_int_equal(keel_insert(s, NULL, "p", row), KEEL_EUNIQUE);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 2000);
    set_v(s, 5, 2001);
    assert_int_equal(keel_insert(s, NULL, "p", row), KEEL_EUNIQUE);
    assert_int_equal(keel_delete(s, NULL, "p", &key), KEEL_OK);
    assert_int_equal(keel_insert(s, NULL, "p", row), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 1);
    assert_int_equal(lookup_v(s, 5), 1);

    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* The primary key of p, as the session's last keel_select_column() of it
 * left it, and the number of its entries for id. */
static btree *p_pkey(keel_session *s)
{
    bool found;

    (void)sel_i4(s, NULL, "p", "v", 1, &found);
    assert_non_null(s->select_index);
    return s->select_index->bt;
}

/* The heap of p, as keel_select_column() left it, and its size. */
static heap_rel *p_heap(keel_session *s)
{
    (void)p_pkey(s);
    assert_non_null(s->select_heap);
    return &s->select_heap->heap;
}

static blocknum_t heap_blocks(keel_session *s, heap_rel *h)
{
    smgr_rel *r;
    kerr err;

    assert_int_equal(smgr_rel_open(s->db->smgr, h->relnumber, &r, &err),
                     KEEL_OK);
    return smgr_nblocks(r);
}

static uint32_t key_entries(keel_session *s, btree *bt, int32_t id)
{
    keel_value key = tu_vi4(id);
    tid t[1];
    uint32_t n = 0;

    assert_int_equal(btree_search(bt, s->bs, &key, t, 1, &n), KEEL_OK);
    return n;
}

/*
 * A hot row's index entries, and its versions in the heap, go when no
 * snapshot can see the versions, and not before: while a transaction older than
 * every update is open the primary key keeps all 1,001 entries of the row (and
 * the transaction reads its version); once it ends, the next leaf that fills
 * sheds the dead ones instead of splitting, so the row's entries stay under a
 * leaf's worth however often it is updated; a snapshot taken in between
 * holds back only the versions since it began, and still reads its own.
 */
static void test_hot_row_pruning(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *old;
    btree *bt;
    heap_rel *heap;
    uint64_t pruned;
    blocknum_t blocks;
    bool found;

    (void)state;
    if (!membarrier_ready())
        skip(); /* no horizon here: nothing is ever pruned */
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &old, NULL), KEEL_OK);
    make_table(s, NULL, "p", 10, 1);
    index_v(s); /* heap-only updates: test_heap_only_row() */
    bt = p_pkey(s);
    heap = p_heap(s);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    for (int i = 0; i < 1000; i++)
        set_v(s, 5, 1000 + i);
    assert_int_equal(btree_pruned(bt), 0);
    assert_int_equal(heap_pruned(heap), 0);
    assert_int_equal(key_entries(s, bt, 5), 1001);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    assert_int_equal(lookup_v(old, 5), 5);
    assert_int_equal(keel_commit(old), KEEL_OK);

    /* The heap prunes the row's page as it fills: the 3,000 versions
     * would take 20 more pages; their line pointers, kept while indexes
     * may name them, 512 a page at most, take six. */
    blocks = heap_blocks(s, heap);
    for (int i = 0; i < 3000; i++) {
        set_v(s, 5, 3000 + i);
        /* A new horizon at least every 50 updates, however long the
         * wait between two (txn_horizon_recent()) on a loaded machine. */
        if (i % 50 == 49)
            clock_sleep_us(TXN_HORIZON_INTERVAL_MAX_NS / 1000);
    }
    assert_true(heap_blocks(s, heap) <= blocks + 8);
    assert_true(heap_pruned(heap) >= 2500);
    pruned = btree_pruned(bt);
    assert_true(pruned >= 3000);
    assert_true(key_entries(s, bt, 5) < 600);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 5999);
    assert_int_equal(lookup_v(s, 5), 5999);

    /* A snapshot in the middle keeps what it sees. */
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5999);
    for (int i = 0; i < 2000; i++)
        set_v(s, 5, 7000 + i);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5999);
    assert_int_equal(lookup_v(old, 5), 5999);
    assert_true(key_entries(s, bt, 5) >= 2001);
    assert_int_equal(keel_commit(old), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 8999);
    /* The other rows were never touched. */
    for (int32_t id = 1; id <= 10; id++)
        if (id != 5)
            assert_int_equal(lookup_v(s, id), id);

    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/*
 * The same hot row without an index on v: its updates are heap-only
 * (access/heap_page.h).  While a transaction older than every update is
 * open nothing is pruned, each page takes versions until it is full and
 * only the update that leaves a page makes an index entry; the old
 * transaction still reads its version through the chains.  Once it ends,
 * pruning turns the chain's start into a redirect and frees the other
 * line pointers for reuse, so 3,000 more updates take no new page and no
 * new entry.  A snapshot in the middle keeps its version, found from the
 * row's one entry, and new snapshots read the newest in a few page reads.
 */
static void test_heap_only_row(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *old;
    engine_session_stats a, b;
    btree *bt;
    heap_rel *heap;
    blocknum_t blocks;
    uint32_t entries;
    uint64_t hot;
    bool found;

    (void)state;
    if (!membarrier_ready())
        skip(); /* no horizon here: nothing is ever pruned */
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &old, NULL), KEEL_OK);
    make_table(s, NULL, "p", 10, 1);
    bt = p_pkey(s);
    heap = p_heap(s);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    for (int i = 0; i < 1000; i++)
        set_v(s, 5, 1000 + i);
    hot = heap_hot_updates(heap);
    entries = key_entries(s, bt, 5);
    assert_true(hot >= 950);
    assert_int_equal(entries, 1 + (1000 - hot));
    assert_int_equal(heap_pruned(heap), 0);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    assert_int_equal(lookup_v(old, 5), 5);
    engine_session_stats_get(s, &a);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 1999);
    engine_session_stats_get(s, &b);
    assert_true(b.buffer_reads - a.buffer_reads <= 24);
    assert_int_equal(keel_commit(old), KEEL_OK);

    blocks = heap_blocks(s, heap);
    for (int i = 0; i < 3000; i++) {
        set_v(s, 5, 3000 + i);
        if (i % 50 == 49)
            clock_sleep_us(TXN_HORIZON_INTERVAL_MAX_NS / 1000);
    }
    assert_true(heap_blocks(s, heap) <= blocks + 1);
    assert_true(heap_pruned(heap) >= 2500);
    assert_true(heap_hot_updates(heap) >= hot + 2900);
    assert_true(key_entries(s, bt, 5) <= entries + 2);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 5999);
    assert_int_equal(lookup_v(s, 5), 5999);

    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5999);
    for (int i = 0; i < 500; i++)
        set_v(s, 5, 7000 + i);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5999);
    assert_int_equal(lookup_v(old, 5), 5999);
    assert_int_equal(keel_commit(old), KEEL_OK);
    engine_session_stats_get(s, &a);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 7499);
    engine_session_stats_get(s, &b);
    assert_true(b.buffer_reads - a.buffer_reads <= 12);
    for (int32_t id = 1; id <= 10; id++)
        if (id != 5)
            assert_int_equal(lookup_v(s, id), id);

    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/*
 * A heap-only update that changes more of a row than an update operation
 * carries (a 1,500-byte text rewritten whole) is logged as byte ranges,
 * its new version a copy of the old one's bytes where they agree (in
 * assertion builds every record's redo is checked against the page): the
 * row reads back after each change, and after the database is opened
 * again.
 */
static void test_heap_only_large_change(void **state)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"t", KEEL_TEXT, 0, true}};
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s;
    keel_value row[2], key = tu_vi4(1), out[2];
    static char text[1500];
    uint16_t pk = 1;
    bool found;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "big", cols, 2, &pk, 1),
                     KEEL_OK);
    row[0] = tu_vi4(1);
    row[1] = (keel_value){.v.s = {text, sizeof(text)}};
    memset(text, 'a', sizeof(text));
    assert_int_equal(keel_insert(s, NULL, "big", row), KEEL_OK);
    for (char c = 'b'; c <= 'e'; c++) {
        memset(text, c, sizeof(text));
        text[0] = 'x'; /* a prefix in common */
        assert_int_equal(keel_update(s, NULL, "big", &key, row), KEEL_OK);
        assert_int_equal(keel_lookup(s, NULL, "big", &key, out, &found),
                         KEEL_OK);
        assert_true(found);
        assert_int_equal(out[1].v.s.len, sizeof(text));
        assert_memory_equal(out[1].v.s.ptr, text, sizeof(text));
    }
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    db = open_db(dir, false);
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_lookup(s, NULL, "big", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_memory_equal(out[1].v.s.ptr, text, sizeof(text));
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* The ids of p's rows whose v is v, through index p_v, in order. */
static int ids_by_v(keel_session *s, int32_t v, int32_t *ids, int max)
{
    keel_value key = tu_vi4(v), out[4];
    keel_bound b = {&key, 1, true};
    keel_scan *sc;
    bool found;
    int n = 0;

    assert_int_equal(keel_scan_begin(s, NULL, "p", "p_v", &b, &b, &sc),
                     KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        assert_int_equal(out[1].v.i4, v);
        if (n < max)
            ids[n] = out[0].v.i4;
        n++;
    }
    keel_scan_end(sc);
    return n;
}

/*
 * An index built over heap-only chains: row 5's v changed three times in
 * heap-only updates while a transaction older than all of them is open.
 * The build indexes the version it sees, 52, under the chain's root, and
 * none of the older ones (their updaters committed before its snapshot):
 * a search for 52 finds the row once, for 5 or 50 not at all.  The old
 * transaction still reads v = 5 through the primary key.  Updates of v
 * then make entries.
 */
static void test_build_over_heap_only_chain(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *old;
    int32_t ids[4];
    bool found;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &old, NULL), KEEL_OK);
    make_table(s, NULL, "p", 10, 1);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    set_v(s, 5, 50);
    set_v(s, 5, 51);
    set_v(s, 5, 52);
    assert_int_equal(heap_hot_updates(p_heap(s)), 3);
    index_v(s);
    assert_int_equal(ids_by_v(s, 52, ids, 4), 1);
    assert_int_equal(ids[0], 5);
    assert_int_equal(ids_by_v(s, 5, ids, 4), 0);
    assert_int_equal(ids_by_v(s, 50, ids, 4), 0);
    assert_int_equal(ids_by_v(s, 7, ids, 4), 1);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    assert_int_equal(lookup_v(old, 5), 5);
    assert_int_equal(keel_commit(old), KEEL_OK);

    set_v(s, 5, 60);
    assert_int_equal(heap_hot_updates(p_heap(s)), 3);
    assert_int_equal(ids_by_v(s, 60, ids, 4), 1);
    assert_int_equal(ids[0], 5);
    assert_int_equal(ids_by_v(s, 52, ids, 4), 0);
    assert_int_equal(lookup_v(s, 5), 60);

    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/*
 * More versions than one search keeps (the last 64): 71 of a row, read by
 * a transaction that began before the first update (it sees the key's
 * first entry), one that began after the third (a version before the 64
 * kept, found by the scan of the older ones, past the entry tried first),
 * one that began after the tenth (a version among the 64) and new ones
 * (the last, in a few page reads: not one per version);
 * keel_lookup() and keel_update() on the same row.  Then the session's
 * own uncommitted update, and a row deleted and inserted again in one
 * transaction and in two, against an older snapshot.  (v is indexed, so
 * that every version has its own entries.)
 */
static void test_many_versions(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *old, *early, *mid;
    engine_session_stats a, b;
    keel_value row[4];
    bool found;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &old, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &early, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &mid, NULL), KEEL_OK);
    make_table(s, NULL, "p", 10, 1);
    index_v(s);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 1, &found), 1);
    for (int i = 0; i < 70; i++) {
        if (i == 3) {
            assert_int_equal(keel_begin(early), KEEL_OK);
            assert_int_equal(sel_i4(early, NULL, "p", "v", 5, &found), 1002);
        }
        if (i == 10) {
            assert_int_equal(keel_begin(mid), KEEL_OK);
            assert_int_equal(sel_i4(mid, NULL, "p", "v", 5, &found), 1009);
        }
        set_v(s, 5, 1000 + i);
    }
    /* The newest version, in a few page reads (with the catalog cached):
     * not one per version. */
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 1069);
    engine_session_stats_get(s, &a);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 1069);
    assert_true(found);
    engine_session_stats_get(s, &b);
    assert_true(b.buffer_reads - a.buffer_reads <= 12);
    a = b;
    assert_int_equal(lookup_v(s, 5), 1069);
    engine_session_stats_get(s, &b);
    assert_true(b.buffer_reads - a.buffer_reads <= 12);
    assert_int_equal(sel_i4(early, NULL, "p", "v", 5, &found), 1002);
    assert_true(found);
    assert_int_equal(lookup_v(early, 5), 1002);
    assert_int_equal(keel_commit(early), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 5, &found), 5);
    assert_true(found);
    assert_int_equal(lookup_v(old, 5), 5);
    assert_int_equal(sel_i4(mid, NULL, "p", "v", 5, &found), 1009);
    assert_true(found);
    assert_int_equal(lookup_v(mid, 5), 1009);
    set_v(s, 5, 2000); /* finds the version to replace among 71 */
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 2000);
    assert_int_equal(sel_i4(mid, NULL, "p", "v", 5, &found), 1009);
    assert_int_equal(keel_commit(mid), KEEL_OK);

    /* Deleted after 72 versions: a new transaction reads each version
     * once (the scan of the older ones stops where the 64 kept begin),
     * and finds none; the old one still sees its own.  A version's read
     * is its heap page and the status of the two transactions that made
     * and ended it: 3 reads, so at most 3 x 72 and the index's pages. */
    row[0] = tu_vi4(5);
    assert_int_equal(keel_delete(s, NULL, "p", &row[0]), KEEL_OK);
    engine_session_stats_get(s, &a);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 0);
    assert_false(found);
    engine_session_stats_get(s, &b);
    assert_true(b.buffer_reads - a.buffer_reads >= 72);
    assert_true(b.buffer_reads - a.buffer_reads <= 240);
    assert_int_equal(lookup_v(s, 5), -1);
    assert_int_equal(lookup_v(old, 5), 5);

    /* The session's own change, seen before its commit, gone after its
     * abort. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    set_v(s, 7, 777);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 7, &found), 777);
    assert_int_equal(lookup_v(s, 7), 777);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 7, &found), 7);
    keel_abort(s);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 7, &found), 7);

    /* Deleted and inserted again: in one transaction, then in two. */
    row[0] = tu_vi4(8);
    row[1] = tu_vi4(888);
    row[2] = tu_vstr("again");
    row[3].isnull = true;
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_delete(s, NULL, "p", &row[0]), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 8, &found), 0);
    assert_false(found);
    assert_int_equal(keel_insert(s, NULL, "p", row), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 8, &found), 888);
    assert_int_equal(keel_commit(s), KEEL_OK);
    row[0] = tu_vi4(9);
    row[1] = tu_vi4(999);
    assert_int_equal(keel_delete(s, NULL, "p", &row[0]), KEEL_OK);
    assert_int_equal(keel_insert(s, NULL, "p", row), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 8, &found), 888);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 9, &found), 999);
    assert_int_equal(lookup_v(s, 9), 999);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 8, &found), 8);
    assert_int_equal(sel_i4(old, NULL, "p", "v", 9, &found), 9);
    assert_int_equal(lookup_v(old, 9), 9);
    assert_int_equal(keel_commit(old), KEEL_OK);
    keel_session_end(mid);
    keel_session_end(early);
    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/*
 * An update whose new version an index refuses (a text key over the
 * B-tree's limit) is taken back, and its transaction goes on.  A
 * transaction an insert left to be aborted (an index being built on the
 * table by another, running transaction) refuses every call,
 * keel_select_column() too, until it ends; its commit rolls it back.
 */
static void test_failed_transaction(void **state)
{
    static char big[3000];
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *s2;
    keel_value key = tu_vi4(2), row[4];
    uint16_t tcol = 3, vcol = 2;
    bool found;

    (void)state;
    memset(big, 'x', sizeof(big) - 1);
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s2, NULL), KEEL_OK);
    make_table(s, NULL, "p", 5, 1);
    assert_int_equal(keel_create_index(s, NULL, "p", "p_t", &tcol, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    row[0] = tu_vi4(2);
    row[1] = tu_vi4(222);
    row[2] = tu_vstr(big);
    row[3].isnull = true;
    assert_int_equal(keel_update(s, NULL, "p", &key, row), KEEL_ETOOBIG);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 2, &found), 2);
    assert_true(found);
    row[2] = tu_vstr("two");
    assert_int_equal(keel_update(s, NULL, "p", &key, row), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 2, &found), 222);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 2, &found), 222);

    /* An insert whose snapshot misses a committed build fails after
     * writing: the transaction can only be aborted. */
    assert_int_equal(keel_begin(s2), KEEL_OK);
    assert_int_equal(keel_create_index(s2, NULL, "p", "p_v", &vcol, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_commit(s2), KEEL_OK);
    row[0] = tu_vi4(6);
    row[1] = tu_vi4(6);
    assert_int_equal(keel_insert(s, NULL, "p", row), KEEL_ESERIALIZE);
    sel_fails(s, NULL, "p", "v", KEEL_EINVAL, "failed earlier");
    assert_int_equal(keel_commit(s), KEEL_EINVAL);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 6, &found), 0);
    assert_false(found);
    keel_session_end(s2);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* keel_load_table() rows for frozen_rows: ids 1..20, v = id * 10. */
static keel_status frozen_next(void *ctx, keel_value *v, bool *done)
{
    int32_t *next = ctx;

    if (*next > 20) {
        *done = true;
        return KEEL_OK;
    }
    v[0] = tu_vi4(*next);
    v[1] = tu_vi4(*next * 10);
    (*next)++;
    return KEEL_OK;
}

/*
 * Rows keel_load_table() wrote frozen (visible to every snapshot, the
 * benchmark's accounts): one deleted and one updated since, read by a new
 * transaction (the deleted one gone, the new version) and by one that
 * began before (both as loaded); the rest as loaded to both.  One deleted
 * by a transaction still running, and then aborted, stays visible to the
 * others throughout.
 */
static void test_frozen_rows(void **state)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, true}};
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *old, *w;
    keel_value key = tu_vi4(3), row[2];
    uint16_t pk = 1;
    int32_t next = 1;
    bool found;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &old, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &w, NULL), KEEL_OK);
    assert_int_equal(keel_load_table(s, NULL, "f", cols, 2, &pk, 1, frozen_next,
                                     &next, NULL),
                     KEEL_OK);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "f", "v", 3, &found), 30);
    assert_int_equal(keel_delete(s, NULL, "f", &key), KEEL_OK);
    key = tu_vi4(4);
    row[0] = tu_vi4(4);
    row[1] = tu_vi4(444);
    assert_int_equal(keel_update(s, NULL, "f", &key, row), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "f", "v", 3, &found), 0);
    assert_false(found);
    assert_int_equal(sel_i4(s, NULL, "f", "v", 4, &found), 444);
    assert_true(found);
    assert_int_equal(sel_i4(s, NULL, "f", "v", 5, &found), 50);
    assert_int_equal(sel_i4(old, NULL, "f", "v", 3, &found), 30);
    assert_true(found);
    assert_int_equal(sel_i4(old, NULL, "f", "v", 4, &found), 40);
    assert_int_equal(sel_i4(old, NULL, "f", "v", 5, &found), 50);
    assert_int_equal(keel_commit(old), KEEL_OK);
    assert_int_equal(sel_i4(old, NULL, "f", "v", 3, &found), 0);
    assert_false(found);
    /* Deleted by a running transaction, which then aborts. */
    key = tu_vi4(6);
    assert_int_equal(keel_begin(w), KEEL_OK);
    assert_int_equal(keel_delete(w, NULL, "f", &key), KEEL_OK);
    assert_int_equal(sel_i4(w, NULL, "f", "v", 6, &found), 0);
    assert_false(found);
    assert_int_equal(sel_i4(s, NULL, "f", "v", 6, &found), 60);
    assert_true(found);
    keel_abort(w);
    assert_int_equal(sel_i4(s, NULL, "f", "v", 6, &found), 60);
    assert_int_equal(sel_i4(w, NULL, "f", "v", 6, &found), 60);
    assert_true(found);
    keel_session_end(w);
    keel_session_end(old);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* A table dropped and made again under its name (a new oid, its columns
 * in another order) is the new one at the next call; twelve tables in
 * turn, more than a session keeps handles for, each give their own rows;
 * and all of it again after a reopen. */
static void test_tables_change(void **state)
{
    static const keel_column swapped[] = {{"v", KEEL_INT4, 0, true},
                                          {"id", KEEL_INT4, 0, true}};
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s, *other;
    keel_value row[2];
    uint16_t pk = 2;
    char name[16];
    bool found;

    (void)state;
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &other, NULL), KEEL_OK);
    make_table(s, NULL, "p", 10, 2);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 4, &found), 8);
    assert_int_equal(keel_drop_table(other, NULL, "p"), KEEL_OK);
    sel_fails(s, NULL, "p", "v", KEEL_ENOENT, "table \"p\" does not exist");
    assert_int_equal(keel_create_table(other, NULL, "p", swapped, 2, &pk, 1),
                     KEEL_OK);
    row[0] = tu_vi4(77);
    row[1] = tu_vi4(4);
    assert_int_equal(keel_insert(other, NULL, "p", row), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 4, &found), 77);
    assert_true(found);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 5, &found), 0);
    assert_false(found);

    /* The session's own DDL, before its commit and after an abort. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "q", swapped, 2, &pk, 1),
                     KEEL_OK);
    row[0] = tu_vi4(5);
    row[1] = tu_vi4(1);
    assert_int_equal(keel_insert(s, NULL, "q", row), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "q", "v", 1, &found), 5);
    assert_true(found);
    keel_abort(s);
    sel_fails(s, NULL, "q", "v", KEEL_ENOENT, "table \"q\" does not exist");
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_drop_table(s, NULL, "p"), KEEL_OK);
    sel_fails(s, NULL, "p", "v", KEEL_ENOENT, "table \"p\" does not exist");
    keel_abort(s);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 4, &found), 77);
    assert_true(found);

    for (int t = 0; t < 12; t++) {
        snprintf(name, sizeof(name), "t%d", t);
        make_table(s, NULL, name, 40, t + 1);
    }
    for (int round = 0; round < 3; round++)
        for (int t = 0; t < 12; t++) {
            int id = 1 + (t * 7 + round * 13) % 40;
            snprintf(name, sizeof(name), "t%d", t);
            assert_int_equal(sel_i4(s, NULL, name, "v", id, &found),
                             id * (t + 1));
            assert_true(found);
        }
    keel_session_end(other);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    db = open_db(dir, false);
    assert_int_equal(keel_session_begin(db, &s, NULL), KEEL_OK);
    assert_int_equal(sel_i4(s, NULL, "t11", "v", 40, &found), 480);
    assert_int_equal(sel_i4(s, NULL, "p", "v", 4, &found), 77);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* ---- readers racing a writer ------------------------------------------
 *
 * The writer rewrites random rows of p (id, v, t, n) so that v = id +
 * 1000 * generation, or deletes a row and inserts it again in one
 * transaction; readers select v of random ids, each in its own
 * transaction or several in one, and check that every row is found (its
 * first versions are dead to them after the first write), that its value
 * belongs to its id, that it is no older than what the writer had
 * committed before the reader's snapshot, and that within one
 * transaction a row's value never changes (repeatable read).
 */
#define RACE_ROWS    64
#define RACE_READERS 3

typedef struct race {
    keel_db *db;
    atomic_u32 stop;
    atomic_u32 errors;
    atomic_u32 committed[RACE_ROWS]; /* each id's generation, once committed */
    uint64_t reads[RACE_READERS];
    uint64_t writes;
} race;

typedef struct race_reader {
    race *r;
    int index;
} race_reader;

static void *race_read(void *arg)
{
    race_reader *rr = arg;
    race *r = rr->r;
    keel_session *s = NULL;
    uint64_t rng = 0x1234567 + (uint64_t)rr->index * 977;
    uint64_t n = 0;

    if (keel_session_begin(r->db, &s, NULL) != KEEL_OK) {
        atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
        return NULL;
    }
    while (!atomic_load_relaxed(&r->stop)) {
        int32_t seen[RACE_ROWS];
        uint32_t floor[RACE_ROWS];
        bool explicit = tu_rand(&rng) % 2 == 0;

        memset(seen, 0xff, sizeof(seen));
        /* What was committed before the snapshot: it must be seen. */
        for (int id = 0; explicit && id < RACE_ROWS; id++)
            floor[id] = atomic_load_acquire(&r->committed[id]);
        if (explicit && keel_begin(s) != KEEL_OK)
            break;
        for (int i = 0; i < 16; i++) {
            int32_t id = (int32_t)(tu_rand(&rng) % RACE_ROWS) + 1;
            keel_value key = tu_vi4(id), out;
            bool found = false;

            if (!explicit)
                floor[id - 1] = atomic_load_acquire(&r->committed[id - 1]);
            if (keel_select_column(s, NULL, "p", "v", &key, &out, &found) !=
                    KEEL_OK ||
                (found && (uint32_t)(out.v.i4 / 1000) < floor[id - 1]) ||
                !found || out.isnull || out.v.i4 % 1000 != id ||
                (explicit && seen[id - 1] != -1 && seen[id - 1] != out.v.i4)) {
                atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
                break;
            }
            seen[id - 1] = out.v.i4;
            n++;
        }
        if (explicit && keel_commit(s) != KEEL_OK)
            atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
    }
    r->reads[rr->index] = n;
    keel_session_end(s);
    return NULL;
}

/* ---- sessions handed from thread to thread ------------------------------
 *
 * A session is used by one thread at a time, but not always by the one
 * that began it: a pool hands its sessions to whichever worker is free.
 * Here sessions begun on the main thread go through rounds of new worker
 * threads, a different session to each worker each round, and each
 * arrives with an explicit transaction the last worker left open, which
 * its new thread commits.  Each session changes only its own rows and
 * reads them back; at the end the main thread commits the last open
 * transactions, checks every row and ends the sessions.  The sanitizer
 * builds check that nothing in a session is tied to the thread that
 * began it.
 */
#define HAND_SESSIONS 3
#define HAND_ROUNDS   4
#define HAND_ROWS     20 /* session k's rows: ids k * HAND_ROWS + 1.. */

typedef struct hand_worker {
    keel_session *s;
    int owner; /* the session's index: whose rows */
    int round;
    tu_failures *fails;
} hand_worker;

/* v of row id after round r: r * 1000 + id, and 500 more for the first
 * row of each session, which the transaction left open changes. */
static int32_t hand_value(int32_t id, int r)
{
    return r * 1000 + id + (id % HAND_ROWS == 1 ? 500 : 0);
}

static void *hand_work(void *arg)
{
    hand_worker *hw = arg;
    keel_session *s = hw->s;
    int32_t first = hw->owner * HAND_ROWS + 1;
    keel_value key, v[4], out;
    bool found;
    int rc;

    if (hw->round > 0 && (rc = keel_commit(s)) != KEEL_OK) {
        tu_fail(hw->fails, "round %d: commit of the open transaction: %s",
                hw->round, keel_session_error(s));
        return NULL;
    }
    for (int32_t id = first; id < first + HAND_ROWS; id++) {
        key = tu_vi4(id);
        v[0] = key;
        v[1] = tu_vi4(hw->round * 1000 + id);
        v[2] = tu_vstr("handed");
        v[3].isnull = true;
        rc = keel_update(s, NULL, "h", &key, v);
        if (rc == KEEL_OK)
            rc = keel_select_column(s, NULL, "h", "v", &key, &out, &found);
        if (rc != KEEL_OK || !found || out.v.i4 != v[1].v.i4) {
            tu_fail(hw->fails, "round %d, row %d: %s, found %d, v %d",
                    hw->round, (int)id, keel_session_error(s), found,
                    found ? out.v.i4 : 0);
            return NULL;
        }
    }
    /* Left open, for the next thread to commit. */
    key = tu_vi4(first);
    v[0] = key;
    v[1] = tu_vi4(hand_value(first, hw->round));
    if (keel_begin(s) != KEEL_OK ||
        keel_update(s, NULL, "h", &key, v) != KEEL_OK)
        tu_fail(hw->fails, "round %d: the open transaction: %s", hw->round,
                keel_session_error(s));
    return NULL;
}

static void test_sessions_change_threads(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s[HAND_SESSIONS];
    tu_failures fails = TU_FAILURES_INIT;
    bool found;

    (void)state;
    for (int k = 0; k < HAND_SESSIONS; k++)
        assert_int_equal(keel_session_begin(db, &s[k], NULL), KEEL_OK);
    make_table(s[0], NULL, "h", HAND_SESSIONS * HAND_ROWS, 1);
    for (int r = 0; r < HAND_ROUNDS; r++) {
        hand_worker hw[HAND_SESSIONS];
        pthread_t th[HAND_SESSIONS];
        for (int w = 0; w < HAND_SESSIONS; w++) {
            int k = (w + r) % HAND_SESSIONS;
            hw[w] = (hand_worker){s[k], k, r, &fails};
            assert_int_equal(pthread_create(&th[w], NULL, hand_work, &hw[w]),
                             0);
        }
        for (int w = 0; w < HAND_SESSIONS; w++)
            assert_int_equal(pthread_join(th[w], NULL), 0);
        tu_failures_check(&fails);
    }
    for (int k = 0; k < HAND_SESSIONS; k++)
        assert_int_equal(keel_commit(s[k]), KEEL_OK);
    for (int32_t id = 1; id <= HAND_SESSIONS * HAND_ROWS; id++) {
        assert_int_equal(
            sel_i4(s[id % HAND_SESSIONS], NULL, "h", "v", id, &found),
            hand_value(id, HAND_ROUNDS - 1));
        assert_true(found);
    }
    for (int k = 0; k < HAND_SESSIONS; k++)
        keel_session_end(s[k]);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* Whether p starts a cache line. */
static bool on_line(const void *p)
{
    return (uintptr_t)p % CACHE_LINE_SIZE == 0;
}

/*
 * What a session writes at every transaction lies on lines of its own,
 * even for sessions begun one after the other on one thread, whose
 * allocations the allocator places side by side: the session, its
 * transaction state, its index directories and the row a select reads
 * into each start a line (and mem_alloc_aligned() pads them to whole
 * lines, test_port).
 */
static void test_session_memory_lines(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db = open_db(dir, true);
    keel_session *s[3];
    bool found;

    (void)state;
    for (int i = 0; i < 3; i++)
        assert_int_equal(keel_session_begin(db, &s[i], NULL), KEEL_OK);
    make_table(s[0], NULL, "t", 50, 3);
    for (int i = 0; i < 3; i++) {
        uint32_t dirs = 0;
        assert_int_equal(sel_i4(s[i], NULL, "t", "v", 7 + i, &found),
                         3 * (7 + i));
        assert_true(found);
        assert_true(on_line(s[i]));
        assert_true(on_line(s[i]->ts));
        assert_non_null(s[i]->result.values);
        assert_true(on_line(s[i]->result.values));
        for (uint32_t d = 0; d < ENGINE_SESSION_DIRS; d++)
            if (s[i]->dirs[d] != NULL) {
                assert_true(on_line(s[i]->dirs[d]));
                dirs++;
            }
        assert_true(dirs >= 1); /* t_pkey's */
    }
    for (int i = 0; i < 3; i++)
        keel_session_end(s[i]);
    assert_int_equal(keel_db_close(db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

static void test_readers_race_writer(void **state)
{
    char *dir = tu_mkdtemp();
    race r;
    race_reader rr[RACE_READERS];
    pthread_t th[RACE_READERS];
    keel_session *w;
    uint64_t rng = 99, deadline;
    uint32_t gen[RACE_ROWS] = {0};

    (void)state;
    memset(&r, 0, sizeof(r));
    r.db = open_db(dir, true);
    assert_int_equal(keel_session_begin(r.db, &w, NULL), KEEL_OK);
    make_table(w, NULL, "p", RACE_ROWS, 1);
    for (int i = 0; i < RACE_READERS; i++) {
        rr[i].r = &r;
        rr[i].index = i;
        assert_int_equal(pthread_create(&th[i], NULL, race_read, &rr[i]), 0);
    }
    deadline = clock_now_ns() + (uint64_t)(tu_stress_seconds(1.0) * 1e9);
    while (clock_now_ns() < deadline && atomic_load_relaxed(&r.errors) == 0) {
        int32_t id = (int32_t)(tu_rand(&rng) % RACE_ROWS) + 1;
        keel_value key = tu_vi4(id), v[4];

        v[0] = tu_vi4(id);
        v[1] = tu_vi4(id + 1000 * (int32_t)++gen[id - 1]);
        v[2] = tu_vstr("w");
        v[3].isnull = true;
        if (tu_rand(&rng) % 8 == 0) {
            /* Deleted and inserted again, in one transaction. */
            assert_int_equal(keel_begin(w), KEEL_OK);
            assert_int_equal(keel_delete(w, NULL, "p", &key), KEEL_OK);
            assert_int_equal(keel_insert(w, NULL, "p", v), KEEL_OK);
            assert_int_equal(keel_commit(w), KEEL_OK);
        } else {
            assert_int_equal(keel_update(w, NULL, "p", &key, v), KEEL_OK);
        }
        atomic_store_release(&r.committed[id - 1], gen[id - 1]);
        r.writes++;
    }
    atomic_store_relaxed(&r.stop, 1);
    for (int i = 0; i < RACE_READERS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_true(r.reads[i] > 0);
    }
    assert_int_equal(atomic_load_relaxed(&r.errors), 0);
    assert_true(r.writes > 0);
    keel_session_end(w);
    assert_int_equal(keel_db_close(r.db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

/* ---- writers racing each other -----------------------------------------
 *
 * Writers change random rows of a small table at once: an update in its
 * own transaction, or in an explicit one that commits or aborts, or a
 * delete and insert again of the row in one transaction; and they try to
 * insert rows whose keys exist.  Versions die all the time, and the unique
 * checks mark their entries; no mark may let a second row of a key in.
 * Every insert of an existing key fails with EUNIQUE, every other change
 * succeeds or meets a concurrent one (ESERIALIZE), and at the end each id
 * has exactly one row.
 */
#define WRACE_ROWS    8
#define WRACE_WRITERS 3

typedef struct wrace {
    keel_db *db;
    uint64_t deadline;
    atomic_u32 errors;
    atomic_u32 changes;
    atomic_u32 conflicts;
    atomic_u32 refused;
    atomic_u32 reads; /* the reader's transactions */
} wrace;

typedef struct wrace_writer {
    wrace *r;
    int index;
} wrace_writer;

/* A change's result: counted, or an error (the rest of the run stops). */
static void wrace_count(wrace *r, int rc)
{
    if (rc == KEEL_OK)
        atomic_fetch_add_explicit(&r->changes, 1, memory_order_relaxed);
    else if (rc == KEEL_ESERIALIZE)
        atomic_fetch_add_explicit(&r->conflicts, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
}

static void *wrace_write(void *arg)
{
    wrace_writer *ww = arg;
    wrace *r = ww->r;
    keel_session *s = NULL;
    uint64_t rng = 0xabcdef + (uint64_t)ww->index * 7919;

    if (keel_session_begin(r->db, &s, NULL) != KEEL_OK) {
        atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
        return NULL;
    }
    while (clock_now_ns() < r->deadline &&
           atomic_load_relaxed(&r->errors) == 0) {
        int32_t id = (int32_t)(tu_rand(&rng) % WRACE_ROWS) + 1;
        keel_value key = tu_vi4(id), v[4];
        int rc;

        v[0] = tu_vi4(id);
        v[1] = tu_vi4(id + 1000 * (int32_t)(tu_rand(&rng) % 1000));
        v[2] = tu_vstr("w");
        v[3].isnull = true;
        switch (tu_rand(&rng) % 5) {
        case 0:
        case 1:
            wrace_count(r, keel_update(s, NULL, "p", &key, v));
            break;
        case 2:
            /* In a transaction that commits or aborts. */
            if (keel_begin(s) != KEEL_OK) {
                wrace_count(r, KEEL_EINVAL);
                break;
            }
            rc = keel_update(s, NULL, "p", &key, v);
            if (rc == KEEL_OK && tu_rand(&rng) % 2 == 0)
                rc = keel_commit(s);
            else
                keel_abort(s);
            wrace_count(r, rc);
            break;
        case 3:
            /* Deleted and inserted again in one transaction. */
            if (keel_begin(s) != KEEL_OK) {
                wrace_count(r, KEEL_EINVAL);
                break;
            }
            rc = keel_delete(s, NULL, "p", &key);
            if (rc == KEEL_OK)
                rc = keel_insert(s, NULL, "p", v);
            if (rc == KEEL_OK)
                rc = keel_commit(s);
            else
                keel_abort(s);
            wrace_count(r, rc);
            break;
        default:
            /* The key exists: refused, whatever else is going on. */
            rc = keel_insert(s, NULL, "p", v);
            if (rc == KEEL_EUNIQUE)
                atomic_fetch_add_explicit(&r->refused, 1, memory_order_relaxed);
            else
                atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
            break;
        }
    }
    keel_session_end(s);
    return NULL;
}

/* A row's v as the session's transaction sees it through both read
 * paths, or -1 (and an error counted) if they disagree or find none. */
static int32_t wrace_seen(wrace *r, keel_session *s, int32_t id)
{
    keel_value key = tu_vi4(id), out, row[4];
    bool found = false, found2 = false;

    if (keel_select_column(s, NULL, "p", "v", &key, &out, &found) != KEEL_OK ||
        !found || keel_lookup(s, NULL, "p", &key, row, &found2) != KEEL_OK ||
        !found2 || row[1].v.i4 != out.v.i4) {
        atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
        return -1;
    }
    return out.v.i4;
}

/*
 * Reads every row in transactions held open for a while: each must see
 * one version of every row, and the same one at every read (repeatable
 * read), however many versions the writers add and the unique checks
 * shed meanwhile.
 */
static void *wrace_read(void *arg)
{
    wrace *r = arg;
    keel_session *s = NULL;
    uint64_t rng = 0x5eed;

    if (keel_session_begin(r->db, &s, NULL) != KEEL_OK) {
        atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
        return NULL;
    }
    while (clock_now_ns() < r->deadline &&
           atomic_load_relaxed(&r->errors) == 0) {
        int32_t first[WRACE_ROWS];
        int rounds = (int)(tu_rand(&rng) % 16);

        if (keel_begin(s) != KEEL_OK) {
            atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
            break;
        }
        for (int32_t id = 1; id <= WRACE_ROWS; id++)
            first[id - 1] = wrace_seen(r, s, id);
        for (int k = 0; k < rounds; k++) {
            sched_yield(); /* let the writers add versions */
            for (int32_t id = 1; id <= WRACE_ROWS; id++)
                if (wrace_seen(r, s, id) != first[id - 1])
                    atomic_fetch_add_explicit(&r->errors, 1,
                                              memory_order_relaxed);
        }
        atomic_fetch_add_explicit(&r->reads, 1, memory_order_relaxed);
        if (keel_commit(s) != KEEL_OK)
            atomic_fetch_add_explicit(&r->errors, 1, memory_order_relaxed);
    }
    keel_session_end(s);
    return NULL;
}

static void test_writers_race(void **state)
{
    char *dir = tu_mkdtemp();
    wrace r;
    wrace_writer ww[WRACE_WRITERS];
    pthread_t th[WRACE_WRITERS], reader;
    keel_session *s;
    keel_scan *sc;
    keel_value out[4];
    bool found, seen[WRACE_ROWS] = {false};
    int rows = 0;

    (void)state;
    memset(&r, 0, sizeof(r));
    r.db = open_db(dir, true);
    assert_int_equal(keel_session_begin(r.db, &s, NULL), KEEL_OK);
    make_table(s, NULL, "p", WRACE_ROWS, 1);
    r.deadline = clock_now_ns() + (uint64_t)(tu_stress_seconds(1.0) * 1e9);
    for (int i = 0; i < WRACE_WRITERS; i++) {
        ww[i].r = &r;
        ww[i].index = i;
        assert_int_equal(pthread_create(&th[i], NULL, wrace_write, &ww[i]), 0);
    }
    assert_int_equal(pthread_create(&reader, NULL, wrace_read, &r), 0);
    for (int i = 0; i < WRACE_WRITERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(pthread_join(reader, NULL), 0);
    print_message(
        "%u changes, %u conflicts, %u refused, %u read "
        "transactions; %llu entries shed, %llu versions pruned\n",
        atomic_load_relaxed(&r.changes), atomic_load_relaxed(&r.conflicts),
        atomic_load_relaxed(&r.refused), atomic_load_relaxed(&r.reads),
        (unsigned long long)btree_pruned(p_pkey(s)),
        (unsigned long long)heap_pruned(p_heap(s)));
    assert_int_equal(atomic_load_relaxed(&r.errors), 0);
    assert_true(atomic_load_relaxed(&r.reads) > 0);
    assert_true(atomic_load_relaxed(&r.changes) > 0);
    assert_true(atomic_load_relaxed(&r.refused) > 0);

    /* One row per id, each the one its key finds. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, NULL, "p", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    while (keel_scan_next(sc, out, &found) == KEEL_OK && found) {
        int32_t id = out[0].v.i4;
        assert_true(id >= 1 && id <= WRACE_ROWS);
        assert_false(seen[id - 1]);
        seen[id - 1] = true;
        assert_int_equal(out[1].v.i4 % 1000, id);
        rows++;
    }
    keel_scan_end(sc);
    assert_int_equal(rows, WRACE_ROWS);
    for (int32_t id = 1; id <= WRACE_ROWS; id++)
        assert_int_equal(sel_i4(s, NULL, "p", "v", id, &found) % 1000, id);
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(r.db, NULL), KEEL_OK);
    tu_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_names),
        cmocka_unit_test(test_catalog_lookups),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_many_versions),
        cmocka_unit_test(test_hot_row_updates),
        cmocka_unit_test(test_hot_row_pruning),
        cmocka_unit_test(test_heap_only_row),
        cmocka_unit_test(test_build_over_heap_only_chain),
        cmocka_unit_test(test_heap_only_large_change),
        cmocka_unit_test(test_frozen_rows),
        cmocka_unit_test(test_failed_transaction),
        cmocka_unit_test(test_tables_change),
        cmocka_unit_test(test_session_memory_lines),
        cmocka_unit_test(test_sessions_change_threads),
        cmocka_unit_test(test_readers_race_writer),
        cmocka_unit_test(test_writers_race),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
