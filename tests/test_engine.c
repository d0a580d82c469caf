/*
 * test_engine.c: the public API end to end: create and open, DDL, rows of
 * every type, lookups, scans, updates, deletes, reopen, aborted DDL,
 * concurrent writers, bad inputs, bad directories, xid reservation,
 * dropping a table with its indexes, bulk loads, lookups through the
 * session's index directories, scans of a table without a primary key,
 * rows changed through a scan (keel_scan_update, keel_scan_delete),
 * a database open in one place at a time, read-only opens, files no
 * relation owns, and catalog rows and meta pages that disagree.
 */
#include "testutil.h"

/* Sessions of one thread that meet a lock give up this soon. */
#define TEST_LOCK_MS 30

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access/btree_page.h"
#include "engine/control.h"
#include "engine/engine.h"
#include "keel/keel.h"
#include "storage/fault.h"
#include "storage/page.h"

static keel_db_options opts_for(const char *dir)
{
    keel_db_options o;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 4;
    o.max_sessions = 8;
    return o;
}

static const keel_column all_cols[] = {
    {"id", KEEL_INT4, 0, true},  {"a2", KEEL_INT2, 0, false},
    {"a8", KEEL_INT8, 0, false}, {"ao", KEEL_OID, 0, false},
    {"ab", KEEL_BOOL, 0, false}, {"af", KEEL_FLOAT8, 0, false},
    {"an", KEEL_NAME, 0, false}, {"ac", KEEL_CHAR, 4, false},
    {"at", KEEL_TEXT, 0, true},
};

static void row_of(int32_t id, keel_value *v, char *textbuf)
{
    sprintf(textbuf, "text-%d", id);
    v[0] = tu_vi4(id);
    v[1].isnull = false;
    v[1].v.i2 = (int16_t)(id * 2);
    v[2].isnull = false;
    v[2].v.i8 = (int64_t)id * 10000000000LL;
    v[3].isnull = false;
    v[3].v.oid = (uint32_t)id + 7;
    v[4].isnull = false;
    v[4].v.b = id % 2;
    v[5].isnull = false;
    v[5].v.f8 = id / 4.0;
    v[6] = tu_vstr("nm");
    v[7] = tu_vstr("ab");
    v[8] = tu_vstr(textbuf);
    if (id % 3 == 0)
        v[2].isnull = true;
}

static void check_row(int32_t id, const keel_value *v)
{
    char buf[32];
    sprintf(buf, "text-%d", id);
    assert_int_equal(v[0].v.i4, id);
    assert_int_equal(v[1].v.i2, id * 2);
    assert_int_equal(v[2].isnull, id % 3 == 0);
    if (id % 3 != 0)
        assert_true(v[2].v.i8 == (int64_t)id * 10000000000LL);
    assert_int_equal(v[3].v.oid, (uint32_t)id + 7);
    assert_int_equal(v[4].v.b, id % 2);
    assert_true(v[5].v.f8 == id / 4.0);
    assert_int_equal(v[6].v.s.len, 2);
    assert_memory_equal(v[6].v.s.ptr, "nm", 2);
    assert_int_equal(v[7].v.s.len, 4);
    assert_memory_equal(v[7].v.s.ptr, "ab  ", 4);
    assert_int_equal(v[8].v.s.len, strlen(buf));
    assert_memory_equal(v[8].v.s.ptr, buf, strlen(buf));
}

/* Creates a db with schema s1, table s1.t (all types, pk id), rows 1..n. */
static void setup_db(const char *dir, keel_db **db, keel_session **s, int n)
{
    keel_db_options o = opts_for(dir);
    keel_error e;
    uint16_t pk = 1;
    keel_value v[9];
    char tb[32];

    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(*db, s, &e), KEEL_OK);
    keel_session_set_lock_timeout(*s, TEST_LOCK_MS);
    assert_int_equal(keel_create_schema(*s, "s1"), KEEL_OK);
    assert_int_equal(keel_create_table(*s, "s1", "t", all_cols, 9, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_begin(*s), KEEL_OK);
    for (int i = 1; i <= n; i++) {
        row_of(i, v, tb);
        assert_int_equal(keel_insert(*s, "s1", "t", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(*s), KEEL_OK);
}

/* A test's end: sessions a and b (either may be NULL) end, db closes
 * cleanly, and dir goes. */
static void finish(char *dir, keel_db *db, keel_session *a, keel_session *b)
{
    keel_error e;

    keel_session_end(a);
    keel_session_end(b);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

static int count_rows(keel_session *s, const char *index, int lo, int hi)
{
    keel_value lv = tu_vi4(lo), hv = tu_vi4(hi), out[9];
    keel_bound l = {&lv, 1, true}, h = {&hv, 1, true};
    keel_scan *sc;
    bool found;
    int n = 0, prev = 0;

    assert_int_equal(keel_scan_begin(s, "s1", "t", index, &l, &h, &sc),
                     KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        if (index == NULL)
            assert_true(n == 0 || out[0].v.i4 > prev); /* key order */
        prev = out[0].v.i4;
        n++;
    }
    keel_scan_end(sc);
    return n;
}

static void test_rows_and_reopen(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_value key, out[9], v[9];
    char tb[32];
    bool found;
    uint16_t k2 = 2;

    (void)state;
    setup_db(dir, &db, &s, 100);
    for (int i = 1; i <= 100; i++) {
        key = tu_vi4(i);
        assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
        assert_true(found);
        check_row(i, out);
    }
    key = tu_vi4(1000);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    assert_false(found);
    assert_int_equal(count_rows(s, NULL, 10, 29), 20);

    /* A secondary index, built from the existing rows. */
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &k2, 1, false),
                     KEEL_OK);
    {
        keel_value lv, hv;
        keel_bound l = {&lv, 1, true}, h = {&hv, 1, false};
        keel_scan *sc;
        int n = 0;
        lv.isnull = hv.isnull = false;
        lv.v.i2 = 10;
        hv.v.i2 = 20;
        assert_int_equal(keel_scan_begin(s, "s1", "t", "t_a2", &l, &h, &sc),
                         KEEL_OK);
        for (;;) {
            assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
            if (!found)
                break;
            assert_int_equal(out[1].v.i2, 10 + 2 * n);
            n++;
        }
        keel_scan_end(sc);
        assert_int_equal(n, 5);
    }

    /* Update and delete. */
    key = tu_vi4(5);
    row_of(5, v, tb);
    v[8] = tu_vstr("changed");
    assert_int_equal(keel_update(s, "s1", "t", &key, v), KEEL_OK);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_memory_equal(out[8].v.s.ptr, "changed", 7);
    key = tu_vi4(6);
    assert_int_equal(keel_delete(s, "s1", "t", &key), KEEL_OK);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    assert_false(found);
    assert_int_equal(keel_delete(s, "s1", "t", &key), KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(s), "no row"));

    /* Close refuses while a session is open. */
    assert_int_equal(keel_db_close(db, &e), KEEL_EBUSY);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    /* Reopen: everything still there, in a pool of the size asked. */
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_db_pool_mb(db), 4);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    for (int i = 1; i <= 100; i++) {
        key = tu_vi4(i);
        assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
        assert_int_equal(found, i != 6);
        if (found && i != 5)
            check_row(i, out);
    }
    assert_int_equal(count_rows(s, NULL, 1, 100), 99);
    assert_int_equal(count_rows(s, "t_a2", -32768, 32767), 99);
    finish(dir, db, s, NULL);
}

static void test_aborted_ddl(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    keel_value key = tu_vi4(1), out[9];
    bool found;
    uint16_t one = 1, n;
    keel_column c = {"x", KEEL_INT4, 0, true};

    (void)state;
    setup_db(dir, &db, &s, 3);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_create_schema(s, "gone"), KEEL_OK);
    assert_int_equal(keel_create_table(s, "gone", "g", &c, 1, &one, 1),
                     KEEL_OK);
    assert_int_equal(keel_table_columns(s, "gone", "g", &n), KEEL_OK);
    assert_int_equal(n, 1);
    assert_int_equal(keel_drop_table(s, "s1", "t"), KEEL_OK);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_ENOENT);
    keel_abort(s);
    assert_int_equal(keel_table_columns(s, "gone", "g", &n), KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(s), "gone"));
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    /* The name is free again. */
    assert_int_equal(keel_create_schema(s, "gone"), KEEL_OK);
    /* Drop schema only when empty. */
    assert_int_equal(keel_drop_schema(s, "s1"), KEEL_EBUSY);
    assert_int_equal(keel_drop_table(s, "s1", "t"), KEEL_OK);
    assert_int_equal(keel_drop_schema(s, "s1"), KEEL_OK);
    assert_int_equal(keel_drop_schema(s, "s1"), KEEL_ENOENT);
    assert_int_equal(keel_drop_schema(s, "public"), KEEL_EINVAL);
    finish(dir, db, s, NULL);
}

/* keel_rename(): a table and a column take new names, their rows and
 * indexes staying; names taken or missing are refused; an abort undoes
 * it; and it lasts past a reopen. */
static void test_rename(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_value key = tu_vi4(2), out[9];
    keel_column_info cols[9];
    keel_table_info info;
    bool found;
    uint16_t one = 1;
    keel_column c = {"x", KEEL_INT4, 0, true};

    (void)state;
    setup_db(dir, &db, &s, 3);
    assert_int_equal(keel_create_table(s, "s1", "other", &c, 1, &one, 1),
                     KEEL_OK);
    assert_int_equal(keel_rename(s, "s1", "t", NULL, "other"), KEEL_EEXIST);
    assert_int_equal(keel_rename(s, "s1", "nosuch", NULL, "u"), KEEL_ENOENT);
    assert_int_equal(keel_rename(s, "s1", "t", "nosuch", "y"), KEEL_ENOENT);
    assert_int_equal(keel_rename(s, "s1", "t", all_cols[1].name,
                                 all_cols[2].name),
                     KEEL_EEXIST);
    assert_int_equal(keel_rename(s, "s1", "t", NULL, ""), KEEL_EINVAL);
    /* Undone by an abort. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_rename(s, "s1", "t", NULL, "u"), KEEL_OK);
    assert_int_equal(keel_lookup(s, "s1", "u", &key, out, &found), KEEL_OK);
    assert_true(found);
    keel_abort(s);
    assert_int_equal(keel_lookup(s, "s1", "u", &key, out, &found), KEEL_ENOENT);
    /* Committed, and lasting past a reopen. */
    assert_int_equal(keel_rename(s, "s1", "t", NULL, "u"), KEEL_OK);
    assert_int_equal(keel_rename(s, "s1", "u", all_cols[1].name, "renamed"),
                     KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_ENOENT);
    assert_int_equal(keel_lookup(s, "s1", "u", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(out[0].v.i4, 2);
    assert_int_equal(keel_table_describe(s, "s1", "u", &info, cols, 9), KEEL_OK);
    assert_string_equal(cols[1].name, "renamed");
    assert_int_equal(info.nindexes, 1);
    finish(dir, db, s, NULL);
}

/* keel_session_set_row_nowait(): a write meeting a row another running
 * transaction changed fails at once with KEEL_EBUSY, changing nothing,
 * and the transaction goes on; once the other ends, the write succeeds. */
static void test_row_nowait(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_value k1 = tu_vi4(1), k2 = tu_vi4(2), v[9], out[9];
    char tb[32];
    bool found;

    (void)state;
    setup_db(dir, &db, &a, 3);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_set_isolation(b, KEEL_READ_COMMITTED);
    assert_int_equal(keel_begin(a), KEEL_OK);
    row_of(1, v, tb);
    v[2].v.i8 = 100;
    assert_int_equal(keel_update(a, "s1", "t", &k1, v), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    keel_session_set_row_nowait(b, true);
    row_of(1, v, tb);
    v[2].v.i8 = 200;
    assert_int_equal(keel_update(b, "s1", "t", &k1, v), KEEL_EBUSY);
    assert_non_null(strstr(keel_session_error(b), "could not obtain lock on row"));
    /* b goes on: another row, and its reads */
    row_of(2, v, tb);
    v[2].v.i8 = 300;
    assert_int_equal(keel_update(b, "s1", "t", &k2, v), KEEL_OK);
    assert_int_equal(keel_lookup(b, "s1", "t", &k1, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_not_equal(out[2].v.i8, 200);
    assert_int_equal(keel_commit(a), KEEL_OK);
    row_of(1, v, tb);
    v[2].v.i8 = 200;
    assert_int_equal(keel_update(b, "s1", "t", &k1, v), KEEL_ECHANGED);
    keel_session_set_row_nowait(b, false);
    assert_int_equal(keel_commit(b), KEEL_OK);
    assert_int_equal(keel_lookup(a, "s1", "t", &k2, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(out[2].v.i8, 300);
    keel_session_end(b);
    finish(dir, db, a, NULL);
}

/*
 * Dropping a table drops its indexes with it: their names are free again
 * for a new table and index, and nothing of the old index is reachable by
 * its name.
 */
/* DROP INDEX: the index goes (its name free again, scans by it refused,
 * unique keys no longer checked by it), the table and its primary key
 * stay; the primary key, a table and missing names are refused. */
static void test_drop_index(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_value lv = tu_vi4(0), v[9];
    keel_bound l = {&lv, 1, true};
    keel_scan *sc = NULL;
    char tb[32];
    uint16_t k2 = 2;

    (void)state;
    setup_db(dir, &db, &s, 10);
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &k2, 1, true),
                     KEEL_OK);
    assert_int_equal(count_rows(s, "t_a2", -32768, 32767), 10);
    assert_int_equal(keel_drop_index(s, "s1", "t"), KEEL_EINVAL);
    assert_int_equal(keel_drop_index(s, "s1", "t_pkey"), KEEL_EINVAL);
    assert_int_equal(keel_drop_index(s, "s1", "nosuch"), KEEL_ENOENT);
    assert_int_equal(keel_drop_index(s, "nosuch", "t_a2"), KEEL_ENOENT);
    /* Dropped in a transaction that aborts: still there. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_drop_index(s, "s1", "t_a2"), KEEL_OK);
    assert_int_equal(keel_abort(s), KEEL_OK);
    assert_int_equal(count_rows(s, "t_a2", -32768, 32767), 10);
    /* Unique: a row with a taken a2 is refused until the index goes. */
    row_of(11, v, tb);
    v[1].v.i2 = 2; /* row 1's */
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_EUNIQUE);
    assert_int_equal(keel_drop_index(s, "s1", "t_a2"), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, "s1", "t", "t_a2", &l, NULL, &sc),
                     KEEL_ENOENT);
    assert_null(sc);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    assert_int_equal(count_rows(s, NULL, 0, 100), 11);
    assert_int_equal(keel_drop_index(s, "s1", "t_a2"), KEEL_ENOENT);
    /* The name is free, and a new index under it sees every row. */
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &k2, 1, false),
                     KEEL_OK);
    assert_int_equal(count_rows(s, "t_a2", -32768, 32767), 11);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    {
        uint64_t problems = 1, notes = 0;
        assert_int_equal(keel_check(dir, NULL, NULL, &problems, &notes, &e),
                         KEEL_OK);
        assert_int_equal(problems, 0);
    }
    tu_dir_remove(dir);
}

/* The relation number of relation oid, from keel_class. */
static uint32_t relnumber_of(keel_session *s, uint32_t oid)
{
    keel_value key = tu_vi4(0), row[8];
    keel_bound b = {&key, 1, true};
    keel_scan *sc = NULL;
    bool found = false;
    uint32_t rel;

    key.v.oid = oid;
    assert_int_equal(keel_scan_begin(s, "keel_catalog", "keel_class",
                                     "keel_class_oid_index", &b, &b, &sc),
                     KEEL_OK);
    assert_int_equal(keel_scan_next(sc, row, &found), KEEL_OK);
    assert_true(found);
    rel = row[3].v.oid;
    keel_scan_end(sc);
    return rel;
}

/* The size of the file dir/rel, as stat(2) gives it. */
static uint64_t file_size(const char *dir, uint32_t rel)
{
    char path[512];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%u", dir, rel);
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/*
 * keel_relation_size() and keel_database_size(): what the files hold,
 * blocks not yet written back from the pool included (no checkpoint runs
 * here), a table's indexes apart; nothing found for an oid that names
 * nothing, or a table dropped; the table lock taken, as a read takes it.
 */
static void test_relation_size(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s, *b;
    keel_error e;
    keel_table_info info;
    keel_relation_sizes rs, is;
    keel_value key = tu_vi4(0), row[8], v[9];
    keel_bound kb = {&key, 1, true};
    keel_scan *sc = NULL;
    uint32_t index_oid;
    uint64_t before, db_bytes = 0;
    bool found = false;
    char tb[32];

    (void)state;
    setup_db(dir, &db, &s, 0);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    assert_int_equal(keel_table_describe(s, "s1", "t", &info, NULL, 0),
                     KEEL_OK);
    /* Empty: no heap block; the primary key's meta page and root. */
    assert_int_equal(keel_relation_size(s, info.oid, &rs, &found), KEEL_OK);
    assert_true(found);
    assert_false(rs.index);
    assert_int_equal(rs.bytes, 0);
    assert_true(rs.index_bytes > 0);
    assert_int_equal(rs.index_bytes % 8192, 0);
    assert_int_equal(rs.bytes, file_size(dir, relnumber_of(s, info.oid)));
    /* The index by its own oid. */
    key.v.oid = info.oid;
    assert_int_equal(keel_scan_begin(s, "keel_catalog", "keel_index",
                                     "keel_index_table_index", &kb, &kb, &sc),
                     KEEL_OK);
    assert_int_equal(keel_scan_next(sc, row, &found), KEEL_OK);
    assert_true(found);
    index_oid = row[0].v.oid;
    keel_scan_end(sc);
    assert_int_equal(keel_relation_size(s, index_oid, &is, &found), KEEL_OK);
    assert_true(found);
    assert_true(is.index);
    assert_int_equal(is.bytes, rs.index_bytes);
    assert_int_equal(is.index_bytes, 0);
    /* Rows grow both files; sizes are whole blocks, as stat sees them. */
    before = rs.index_bytes;
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int i = 1; i <= 600; i++) {
        row_of(i, v, tb);
        assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(keel_relation_size(s, info.oid, &rs, &found), KEEL_OK);
    assert_true(found);
    assert_true(rs.bytes >= 2 * 8192);
    assert_int_equal(rs.bytes % 8192, 0);
    assert_true(rs.index_bytes > before);
    assert_int_equal(rs.bytes, file_size(dir, relnumber_of(s, info.oid)));
    assert_int_equal(rs.index_bytes, file_size(dir, relnumber_of(s, index_oid)));
    assert_int_equal(keel_database_size(s, &db_bytes), KEEL_OK);
    assert_true(db_bytes >= rs.bytes + rs.index_bytes);
    /* Nothing by an oid that names nothing: no error. */
    assert_int_equal(keel_relation_size(s, 999999, &rs, &found), KEEL_OK);
    assert_false(found);
    assert_int_equal(rs.bytes, 0);
    /* The table's lock: a drop's ACCESS EXCLUSIVE keeps the reader
     * waiting, here past its timeout; once the drop commits, nothing. */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_drop_table(b, "s1", "t"), KEEL_OK);
    assert_int_equal(keel_relation_size(s, info.oid, &rs, &found),
                     KEEL_ELOCKTIMEOUT);
    assert_false(found);
    assert_int_equal(keel_commit(b), KEEL_OK);
    assert_int_equal(keel_relation_size(s, info.oid, &rs, &found), KEEL_OK);
    assert_false(found);
    assert_int_equal(keel_relation_size(s, index_oid, &rs, &found), KEEL_OK);
    assert_false(found);
    /* The dropped files stay until the close: still counted. */
    assert_int_equal(keel_database_size(s, &before), KEEL_OK);
    assert_true(before >= db_bytes);
    finish(dir, db, s, b);
}

/*
 * The read committed calls: keel_set_isolation(), keel_new_snapshot()
 * and, after an update meets a row another transaction updated and
 * committed since the snapshot (KEEL_ECHANGED), keel_fetch_changed() and
 * the update of the newest version; a row deleted since is KEEL_ENOENT.
 */
static void test_read_committed_api(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_value v[9], out[9], key;
    char tb[32];
    bool found;

    (void)state;
    setup_db(dir, &db, &a, 3);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    assert_int_equal(keel_set_isolation(a, (keel_isolation)7), KEEL_EINVAL);
    /* Repeatable read: one snapshot; a commit since is a conflict. */
    assert_int_equal(keel_new_snapshot(a), KEEL_OK); /* none running */
    assert_int_equal(keel_begin(a), KEEL_OK);
    /* Repeatable read keeps its snapshot through keel_new_snapshot(). */
    key = tu_vi4(1);
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    row_of(1, v, tb);
    v[1].v.i2 = 77;
    assert_int_equal(keel_update(b, "s1", "t", &key, v), KEEL_OK);
    assert_int_equal(keel_new_snapshot(a), KEEL_OK);
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found && out[1].v.i2 == 2);
    assert_int_equal(keel_abort(a), KEEL_OK);
    key = tu_vi4(2);
    assert_int_equal(keel_fetch_changed(a, "s1", "t", out, &found),
                     KEEL_EINVAL);
    assert_false(found);
    /* Read committed. */
    assert_int_equal(keel_set_isolation(a, KEEL_READ_COMMITTED), KEEL_OK);
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found && out[1].v.i2 == 4);
    row_of(2, v, tb);
    v[1].v.i2 = 100;
    assert_int_equal(keel_update(b, "s1", "t", &key, v), KEEL_OK);
    /* The old snapshot still sees 4; a new one sees b's commit. */
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found && out[1].v.i2 == 4);
    v[1].v.i2 = 5;
    assert_int_equal(keel_update(a, "s1", "t", &key, v), KEEL_ECHANGED);
    assert_int_equal(keel_fetch_changed(a, "s1", "t", out, &found), KEEL_OK);
    assert_true(found && out[0].v.i4 == 2 && out[1].v.i2 == 100);
    v[1].v.i2 = (int16_t)(out[1].v.i2 + 1);
    assert_int_equal(keel_update(a, "s1", "t", &key, v), KEEL_OK);
    assert_int_equal(keel_new_snapshot(a), KEEL_OK);
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found && out[1].v.i2 == 101);
    assert_int_equal(keel_commit(a), KEEL_OK);
    /* Deleted since the snapshot: nothing to change. */
    key = tu_vi4(3);
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(keel_delete(b, "s1", "t", &key), KEEL_OK);
    assert_int_equal(keel_delete(a, "s1", "t", &key), KEEL_ENOENT);
    assert_int_equal(keel_fetch_changed(a, "s1", "t", out, &found),
                     KEEL_EINVAL);
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_int_equal(count_rows(a, NULL, 0, 100), 2);
    keel_session_end(b);
    keel_session_end(a);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    {
        uint64_t problems = 1, notes = 0;
        assert_int_equal(keel_check(dir, NULL, NULL, &problems, &notes, &e),
                         KEEL_OK);
        assert_int_equal(problems, 0);
    }
    tu_dir_remove(dir);
}

static void test_drop_table_drops_indexes(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_value key = tu_vi4(1), out[9], v[9], lv = tu_vi4(0);
    keel_bound l = {&lv, 1, true};
    keel_scan *sc = NULL;
    char tb[32];
    bool found;
    uint16_t pk = 1, k2 = 2, n = 0;
    keel_column c = {"x", KEEL_INT4, 0, true};

    (void)state;
    setup_db(dir, &db, &s, 10);
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &k2, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_drop_table(s, "s1", "t"), KEEL_OK);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_ENOENT);
    /* A table under another name cannot reach the old index by name. */
    assert_int_equal(keel_create_table(s, "s1", "u", &c, 1, &pk, 1), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, "s1", "u", "t_a2", &l, NULL, &sc),
                     KEEL_ENOENT);
    assert_null(sc);
    assert_int_equal(keel_scan_begin(s, "s1", "u", "t_pkey", &l, NULL, &sc),
                     KEEL_ENOENT);
    assert_null(sc);
    /* Every name is free again: the table, its primary key, its index. */
    assert_int_equal(keel_create_table(s, "s1", "t", all_cols, 9, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_table_columns(s, "s1", "t", &n), KEEL_OK);
    assert_int_equal(n, 9);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    assert_false(found);
    row_of(1, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &k2, 1, false),
                     KEEL_OK);
    assert_int_equal(count_rows(s, NULL, 0, 100), 1);
    assert_int_equal(count_rows(s, "t_a2", -32768, 32767), 1);
    assert_int_equal(keel_create_index(s, "s1", "u", "t_pkey", &pk, 1, false),
                     KEEL_EEXIST);
    /* After a reopen too. */
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    {
        keel_db_options o = opts_for(dir);
        assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    }
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    check_row(1, out);
    assert_int_equal(keel_drop_table(s, "s1", "t"), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, "s1", "u", "t_a2", &l, NULL, &sc),
                     KEEL_ENOENT);
    assert_int_equal(keel_create_index(s, "s1", "u", "t_a2", &pk, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_create_index(s, "s1", "u", "t_pkey", &pk, 1, false),
                     KEEL_OK);
    finish(dir, db, s, NULL);
}

/* A row source for keel_load_table: ids from a list, text "r<id>". */
typedef struct load_src {
    const int32_t *ids;
    int n, pos;
    int fail_at; /* return KEEL_EIO at this row (-1: never) */
    char text[32];
} load_src;

static keel_status load_next(void *ctx, keel_value *v, bool *done)
{
    load_src *ls = ctx;

    if (ls->pos == ls->fail_at)
        return KEEL_EIO;
    if (ls->pos >= ls->n) {
        *done = true;
        return KEEL_OK;
    }
    snprintf(ls->text, sizeof(ls->text), "r%d", ls->ids[ls->pos]);
    v[0] = tu_vi4(ls->ids[ls->pos]);
    v[1] = tu_vstr(ls->text);
    ls->pos++;
    return KEEL_OK;
}

/*
 * keel_load_table: rows in any key order end up indexed and visible;
 * duplicate keys, bad values and a failing source leave no table behind;
 * an abort of the loading transaction hides the table and its rows.
 */
static void test_load_table(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    keel_error e;
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, false},
                                       {"t", KEEL_TEXT, 0, true}};
    int32_t ids[500];
    keel_value key, out[2];
    bool found;
    uint16_t pk = 1, n;
    uint64_t rows = 7;
    load_src src = {ids, 500, 0, -1, ""};

    (void)state;
    setup_db(dir, &db, &s, 1);
    for (int i = 0; i < 500; i++)
        ids[i] = (i * 7919) % 500 + 1; /* a permutation of 1..500 */
    assert_int_equal(
        keel_load_table(s, "s1", "l", cols, 2, &pk, 1, load_next, &src, &rows),
        KEEL_OK);
    assert_int_equal(rows, 500);
    for (int32_t id = 1; id <= 500; id++) {
        key = tu_vi4(id);
        assert_int_equal(keel_lookup(s, "s1", "l", &key, out, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(out[0].v.i4, id);
    }
    {
        keel_scan *sc;
        int cnt = 0, prev = 0;
        assert_int_equal(keel_scan_begin(s, "s1", "l", NULL, NULL, NULL, &sc),
                         KEEL_OK);
        for (;;) {
            assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
            if (!found)
                break;
            assert_true(out[0].v.i4 > prev);
            prev = out[0].v.i4;
            cnt++;
        }
        keel_scan_end(sc);
        assert_int_equal(cnt, 500);
    }
    /* The loaded table takes ordinary changes; its key stays unique. */
    key = tu_vi4(501);
    out[0] = key;
    out[1] = tu_vstr("new");
    assert_int_equal(keel_insert(s, "s1", "l", out), KEEL_OK);
    out[0] = tu_vi4(250);
    assert_int_equal(keel_insert(s, "s1", "l", out), KEEL_EUNIQUE);
    /* Its name is taken now. */
    src.pos = 0;
    assert_int_equal(
        keel_load_table(s, "s1", "l", cols, 2, &pk, 1, load_next, &src, NULL),
        KEEL_EEXIST);

    /* Duplicate keys: EUNIQUE, and no table. */
    ids[10] = ids[11];
    src.pos = 0;
    assert_int_equal(
        keel_load_table(s, "s1", "d", cols, 2, &pk, 1, load_next, &src, NULL),
        KEEL_EUNIQUE);
    assert_non_null(strstr(keel_session_error(s), "d_pkey"));
    assert_int_equal(keel_table_columns(s, "s1", "d", &n), KEEL_ENOENT);
    /* Without a primary key duplicates are fine. */
    src.pos = 0;
    assert_int_equal(
        keel_load_table(s, "s1", "d", cols, 2, NULL, 0, load_next, &src, &rows),
        KEEL_OK);
    assert_int_equal(rows, 500);
    /* A failing source: its status, and no table. */
    src.pos = 0;
    src.fail_at = 100;
    assert_int_equal(
        keel_load_table(s, "s1", "f", cols, 2, &pk, 1, load_next, &src, NULL),
        KEEL_EIO);
    assert_int_equal(keel_table_columns(s, "s1", "f", &n), KEEL_ENOENT);
    src.fail_at = -1;
    /* An aborted explicit transaction leaves nothing visible. */
    src.pos = 0;
    ids[10] = (10 * 7919) % 500 + 1; /* the permutation again */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(
        keel_load_table(s, "s1", "g", cols, 2, &pk, 1, load_next, &src, NULL),
        KEEL_OK);
    key = tu_vi4(3);
    assert_int_equal(keel_lookup(s, "s1", "g", &key, out, &found), KEEL_OK);
    assert_true(found);
    keel_abort(s);
    assert_int_equal(keel_lookup(s, "s1", "g", &key, out, &found), KEEL_ENOENT);
    /* Bad arguments. */
    assert_int_equal(
        keel_load_table(s, "s1", "h", cols, 2, &pk, 1, NULL, &src, NULL),
        KEEL_EINVAL);
    assert_int_equal(keel_load_table(s, "nosuch", "h", cols, 2, &pk, 1,
                                     load_next, &src, NULL),
                     KEEL_ENOENT);
    /* Lookups alternating between this 2-column table and the 9-column
     * one: the session's result row grows once and is then reused, and
     * every value comes back right. */
    for (int round = 0; round < 3; round++) {
        keel_value wide[9];
        key = tu_vi4(77);
        assert_int_equal(keel_lookup(s, "s1", "l", &key, out, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(out[0].v.i4, 77);
        assert_int_equal(out[1].v.s.len, 3);
        assert_memory_equal(out[1].v.s.ptr, "r77", 3);
        key = tu_vi4(1);
        assert_int_equal(keel_lookup(s, "s1", "t", &key, wide, &found),
                         KEEL_OK);
        assert_true(found);
        check_row(1, wide);
    }
    /* Everything survives a reopen. */
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    {
        keel_db_options o = opts_for(dir);
        assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    }
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    key = tu_vi4(77);
    assert_int_equal(keel_lookup(s, "s1", "l", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(out[1].v.s.len, 3);
    assert_memory_equal(out[1].v.s.ptr, "r77", 3);
    finish(dir, db, s, NULL);
}

/* A row source with a text primary key: row i's key is text_key(i),
 * written into one buffer that every call overwrites. */
typedef struct text_src {
    int n, pos;
    int dup_at, dup_of; /* row dup_at repeats row dup_of's key (-1: none) */
    char key[256];
} text_src;

/* Row i's key: "k<number>-" and then letters, 10 to 199 bytes in all; the
 * rows arrive in a key order unrelated to i. */
static uint32_t text_key(int32_t i, char *buf)
{
    int len = snprintf(buf, 256, "k%07d-", (int)(((int64_t)i * 7919) % 65537));
    int want = 10 + (int)(((uint32_t)i * 2654435761u) % 190);

    for (; len < want; len++)
        buf[len] = (char)('a' + (i + len) % 26);
    return (uint32_t)len;
}

static keel_status text_next(void *ctx, keel_value *v, bool *done)
{
    text_src *ts = ctx;
    int i = ts->pos;

    if (i >= ts->n) {
        *done = true;
        return KEEL_OK;
    }
    if (i == ts->dup_at)
        i = ts->dup_of;
    v[0] =
        (keel_value){.isnull = false, .v.s = {ts->key, text_key(i, ts->key)}};
    v[1] = tu_vi4(ts->pos);
    ts->pos++;
    return KEEL_OK;
}

/*
 * keel_load_table with a text primary key, the keys out of order: each
 * key is kept (the source reuses its buffer) until the index is built,
 * across more than one of the load's 1 MiB chunks of key copies; every
 * row is found by its key, a scan returns them in key order, and a
 * repeated key fails the load with KEEL_EUNIQUE and no table.
 */
static void test_load_text_key(void **state)
{
    enum { N = 20000 };
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    static const keel_column cols[] = {{"k", KEEL_TEXT, 0, false},
                                       {"i", KEEL_INT4, 0, false}};
    text_src src = {N, 0, -1, -1, ""};
    keel_value key, out[2], prev;
    keel_scan *sc;
    char buf[256], prevbuf[256];
    uint64_t rows = 0;
    uint16_t pk = 1, n;
    bool found;
    int cnt = 0;

    (void)state;
    setup_db(dir, &db, &s, 1);
    assert_int_equal(
        keel_load_table(s, "s1", "tk", cols, 2, &pk, 1, text_next, &src, &rows),
        KEEL_OK);
    assert_int_equal(rows, N);
    for (int32_t i = 0; i < N; i++) {
        key = (keel_value){.isnull = false, .v.s = {buf, text_key(i, buf)}};
        assert_int_equal(keel_lookup(s, "s1", "tk", &key, out, &found),
                         KEEL_OK);
        if (!found || out[1].v.i4 != i)
            fail_msg("row %d: found %d, i %d", i, found, out[1].v.i4);
    }
    assert_int_equal(keel_scan_begin(s, "s1", "tk", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    prev.isnull = true;
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        if (!prev.isnull) {
            size_t m =
                prev.v.s.len < out[0].v.s.len ? prev.v.s.len : out[0].v.s.len;
            int c = memcmp(prev.v.s.ptr, out[0].v.s.ptr, m);
            assert_true(c < 0 || (c == 0 && prev.v.s.len < out[0].v.s.len));
        }
        assert_true(out[0].v.s.len < sizeof(prevbuf));
        memcpy(prevbuf, out[0].v.s.ptr, out[0].v.s.len);
        prev = (keel_value){.isnull = false, .v.s = {prevbuf, out[0].v.s.len}};
        cnt++;
    }
    keel_scan_end(sc);
    assert_int_equal(cnt, N);

    src = (text_src){N, 0, N - 3, 17, ""};
    assert_int_equal(
        keel_load_table(s, "s1", "td", cols, 2, &pk, 1, text_next, &src, NULL),
        KEEL_EUNIQUE);
    assert_non_null(strstr(keel_session_error(s), "td_pkey"));
    assert_int_equal(keel_table_columns(s, "s1", "td", &n), KEEL_ENOENT);
    finish(dir, db, s, NULL);
}

static void test_bad_inputs(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    keel_value v[9], key, out[9];
    char tb[32], longname[70];
    bool found;
    uint16_t one = 1;
    keel_column bad = {"x", (keel_type)99, 0, false};

    (void)state;
    setup_db(dir, &db, &s, 3);
    memset(longname, 'n', 64);
    longname[64] = '\0';
    assert_int_equal(keel_create_schema(s, longname), KEEL_ETOOBIG);
    assert_non_null(strstr(keel_session_error(s), "longer than 63"));
    assert_int_equal(keel_create_table(s, NULL, longname, all_cols, 9, &one, 1),
                     KEEL_ETOOBIG);
    assert_int_equal(keel_create_table(s, NULL, "b", &bad, 1, NULL, 0),
                     KEEL_ETYPE);
    assert_int_equal(keel_create_schema(s, "s1"), KEEL_EEXIST);
    assert_int_equal(keel_create_table(s, "s1", "t", all_cols, 9, &one, 1),
                     KEEL_EEXIST);
    assert_int_equal(keel_create_table(s, "nosuch", "t", all_cols, 9, &one, 1),
                     KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(s), "nosuch"));
    row_of(50, v, tb);
    assert_int_equal(keel_insert(s, "s1", "nope", v), KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(s), "nope"));

    /* Inside a transaction: each failure changes nothing, and the
     * transaction goes on. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    row_of(2, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_EUNIQUE);
    row_of(50, v, tb);
    v[8].isnull = true; /* not null column */
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_ETYPE);
    row_of(50, v, tb);
    v[6] = tu_vstr(longname);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_ETOOBIG);
    row_of(50, v, tb);
    memset(&v[4].v.b, 7, 1);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_ETYPE);
    row_of(51, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    /* An empty name may come without bytes. */
    row_of(52, v, tb);
    v[6].v.s.ptr = NULL;
    v[6].v.s.len = 0;
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(count_rows(s, NULL, 1, 100), 5);
    key = tu_vi4(2);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    check_row(2, out);
    /* Update to a taken key is refused before anything changes. */
    row_of(3, v, tb);
    assert_int_equal(keel_update(s, "s1", "t", &key, v), KEEL_EUNIQUE);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    check_row(2, out);
    /* Arguments without what they point to, and names out of place. */
    assert_int_equal(keel_insert(s, "s1", "t", NULL), KEEL_EINVAL);
    assert_int_equal(keel_update(s, "s1", "t", &key, NULL), KEEL_EINVAL);
    assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
    check_row(2, out);
    assert_int_equal(
        keel_create_table(s, "keel_catalog", "t", all_cols, 9, &one, 1),
        KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(s), "system catalogs"));
    {
        uint16_t twice[2] = {1, 1};
        assert_int_equal(keel_create_table(s, "s1", "u", all_cols, 9, twice, 2),
                         KEEL_EINVAL);
        assert_non_null(strstr(keel_session_error(s), "appears twice"));
    }
    /* Column lists and keys that cannot be: each refused with its reason,
     * and no relation made. */
    {
        static const keel_column dup[] = {{"a", KEEL_INT4, 0, false},
                                          {"b", KEEL_INT4, 0, false},
                                          {"a", KEEL_TEXT, 0, false}};
        keel_column ch = {"c", KEEL_CHAR, 0, false},
                    noname = {"", KEEL_INT4, 0, false};
        keel_column many[CATALOG_MAX_COLUMNS + 1];
        static const uint16_t zero = 0, four = 4, pk3[3] = {1, 2, 3};
        uint16_t keys[2] = {1, 3};
        static const struct {
            const keel_column *cols;
            uint16_t ncols;
            const uint16_t *pkey;
            uint16_t npkey;
            int rc;
            const char *msg;
        } cases[] = {
            {all_cols, 0, NULL, 0, KEEL_EINVAL, "1 to"},
            {NULL, 3, NULL, 0, KEEL_EINVAL, "1 to"},
            {dup, 3, NULL, 0, KEEL_EEXIST, "column \"a\" appears twice"},
            {dup, 2, NULL, 1, KEEL_EINVAL, "primary key"},
            {dup, 2, &zero, 1, KEEL_EINVAL, "primary key column 0 does"},
            {dup, 2, &four, 1, KEEL_EINVAL, "primary key column 4 does"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            int rc =
                keel_create_table(s, "s1", "u", cases[i].cols, cases[i].ncols,
                                  cases[i].pkey, cases[i].npkey);
            if (rc != cases[i].rc ||
                strstr(keel_session_error(s), cases[i].msg) == NULL)
                fail_msg("case %zu: %s, \"%s\"", i, keel_status_str(rc),
                         keel_session_error(s));
        }
        assert_int_equal(
            keel_create_table(s, "s1", "u", dup, 2, pk3, BTREE_MAX_KEYS + 1),
            KEEL_EINVAL);
        assert_int_equal(keel_create_table(s, "s1", "u", &ch, 1, NULL, 0),
                         KEEL_EINVAL);
        assert_non_null(strstr(keel_session_error(s), "char length 0"));
        ch.charlen = 60000;
        assert_int_equal(keel_create_table(s, "s1", "u", &ch, 1, NULL, 0),
                         KEEL_EINVAL);
        assert_non_null(strstr(keel_session_error(s), "out of range"));
        assert_int_equal(keel_create_table(s, "s1", "u", &noname, 1, NULL, 0),
                         KEEL_EINVAL);
        assert_non_null(strstr(keel_session_error(s), "column name is empty"));
        for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
            many[i] = (keel_column){"m", KEEL_INT4, 0, false};
        assert_int_equal(
            keel_create_table(s, "s1", "u", many,
                              (uint16_t)(sizeof(many) / sizeof(many[0])), NULL,
                              0),
            KEEL_EINVAL);
        assert_int_equal(keel_relation_exists(s, "s1", "u", &found), KEEL_OK);
        assert_false(found);
        /* An index's keys: none, or a column the table lacks. */
        assert_int_equal(keel_create_index(s, "s1", "t", "t_x", keys, 0, false),
                         KEEL_EINVAL);
        assert_int_equal(keel_create_index(s, "s1", "t", "t_x", NULL, 1, false),
                         KEEL_EINVAL);
        keys[1] = 10;
        assert_int_equal(keel_create_index(s, "s1", "t", "t_x", keys, 2, false),
                         KEEL_EINVAL);
        assert_non_null(strstr(keel_session_error(s), "has no column 10"));
        assert_int_equal(keel_relation_exists(s, "s1", "t_x", &found), KEEL_OK);
        assert_false(found);
    }
    /* A name of 59 bytes leaves its primary key's 64. */
    longname[59] = '\0';
    assert_int_equal(keel_create_table(s, "s1", longname, all_cols, 9, &one, 1),
                     KEEL_ETOOBIG);
    longname[58] = '\0';
    assert_int_equal(keel_create_table(s, "s1", longname, all_cols, 9, &one, 1),
                     KEEL_OK);
    {
        keel_scan *sc = (keel_scan *)&sc; /* must become NULL */
        keel_value two[2] = {tu_vi4(1), tu_vi4(2)}, str;
        keel_bound wide = {two, 2, true}, none = {NULL, 1, true};
        str.isnull = false;
        str.v.s.ptr = NULL;
        str.v.s.len = 3;
        keel_bound nobytes = {&str, 1, true};
        assert_int_equal(keel_scan_begin(s, "s1", "t", NULL, &wide, NULL, &sc),
                         KEEL_EINVAL);
        assert_null(sc);
        assert_non_null(strstr(keel_session_error(s), "lower bound has 2"));
        assert_int_equal(keel_scan_begin(s, "s1", "t", NULL, NULL, &none, &sc),
                         KEEL_EINVAL);
        assert_int_equal(
            keel_create_index(s, "s1", "t", "t_at", &(uint16_t){9}, 1, false),
            KEEL_OK);
        assert_int_equal(
            keel_scan_begin(s, "s1", "t", "t_at", &nobytes, NULL, &sc),
            KEEL_ETYPE);
        assert_int_equal(keel_scan_begin(s, "s1", "t", "", NULL, NULL, &sc),
                         KEEL_EINVAL);
        assert_int_equal(
            keel_scan_begin(s, "s1", "t", longname, NULL, NULL, &sc),
            KEEL_ENOENT);
        memset(longname, 'n', 64);
        assert_int_equal(
            keel_scan_begin(s, "s1", "t", longname, NULL, NULL, &sc),
            KEEL_ETOOBIG);
        assert_null(sc);
    }
    /* Nothing failed half way: no transaction is left running. */
    assert_int_equal(keel_commit(s), KEEL_EINVAL);
    assert_int_equal(count_rows(s, NULL, 1, 100), 5);
    finish(dir, db, s, NULL);
}

/* Rows 1..n of s1.t through scan sc, which must hold them in order. */
static void expect_scan(keel_scan *sc, int n)
{
    keel_value out[9];
    bool found;

    for (int i = 1; i <= n; i++) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(out[0].v.i4, i);
    }
}

/*
 * A scan and the transaction calls: a scan in its own transaction goes on
 * through keel_commit (refused), keel_abort (a no-op), keel_begin
 * (refused) and a write (refused: it needs an explicit transaction); one in an explicit transaction survives a refused commit,
 * and an abort, or the session's end, leaves its handle to keel_scan_end()
 * (the sanitizer builds would see a use after free or a leak).
 */
static void test_scan_and_transactions(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s;
    keel_scan *sc;
    keel_error e;
    keel_value out[9];
    bool found;

    (void)state;
    setup_db(dir, &db, &s, 5);
    assert_int_equal(keel_scan_begin(s, "s1", "t", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    expect_scan(sc, 1);
    assert_int_equal(keel_commit(s), KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(s), "scan is open"));
    keel_abort(s);
    assert_int_equal(keel_begin(s), KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(s), "scan is open"));
    /* A row call is part of the scan's statement; one that writes needs
     * an explicit transaction, which this scan's is not. */
    assert_int_equal(keel_lookup(s, "s1", "t", &(keel_value){0}, out, &found),
                     KEEL_OK);
    assert_false(found);
    assert_int_equal(keel_delete(s, "s1", "t", &(keel_value){.v.i4 = 2}),
                     KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(s), "keel_begin"));
    expect_scan(sc, 0); /* still there: the next row is 2 */
    assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(out[0].v.i4, 2);
    keel_scan_end(sc);
    assert_int_equal(keel_commit(s), KEEL_EINVAL); /* its own ended too */

    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, "s1", "t", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    expect_scan(sc, 2);
    assert_int_equal(keel_commit(s), KEEL_EINVAL);
    expect_scan(sc, 0);
    assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
    assert_int_equal(out[0].v.i4, 3);
    keel_abort(s);
    assert_int_equal(keel_scan_next(sc, out, &found), KEEL_EINVAL);
    assert_false(found);
    keel_scan_end(sc);
    assert_int_equal(keel_commit(s), KEEL_EINVAL); /* aborted */

    assert_int_equal(keel_scan_begin(s, "s1", "t", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    expect_scan(sc, 5);
    keel_session_end(s);
    assert_int_equal(keel_scan_next(sc, out, &found), KEEL_EINVAL);
    keel_scan_end(sc);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/*
 * An index built in a transaction that cannot see every row: refused
 * with KEEL_ESERIALIZE while rows committed since it began, or a running
 * transaction's, would be left out; built whole in a new transaction.
 */
static void test_create_index_sees_every_row(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s, *other;
    keel_error e;
    keel_value v[9], key = tu_vi4(10);
    char tb[32];
    uint16_t col2 = 2;

    (void)state;
    setup_db(dir, &db, &s, 5);
    assert_int_equal(keel_session_begin(db, &other, &e), KEEL_OK);
    keel_session_set_lock_timeout(other, TEST_LOCK_MS);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(count_rows(s, NULL, 1, 100), 5); /* the snapshot */
    row_of(10, v, tb);
    assert_int_equal(keel_insert(other, "s1", "t", v), KEEL_OK);
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &col2, 1, true),
                     KEEL_ESERIALIZE);
    assert_non_null(strstr(keel_session_error(s), "t_a2"));
    keel_abort(s);
    /* A transaction still running holds a row no snapshot sees yet. */
    assert_int_equal(keel_begin(other), KEEL_OK);
    assert_int_equal(keel_delete(other, "s1", "t", &key), KEEL_OK);
    row_of(11, v, tb);
    assert_int_equal(keel_insert(other, "s1", "t", v), KEEL_OK);
    /* Its ROW EXCLUSIVE lock keeps the build's SHARE waiting. */
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &col2, 1, true),
                     KEEL_ELOCKTIMEOUT);
    assert_non_null(strstr(keel_session_error(s), "\"s1.t\""));
    assert_int_equal(keel_commit(other), KEEL_OK);
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &col2, 1, true),
                     KEEL_OK);
    assert_int_equal(count_rows(s, "t_a2", 0, 1000), 6);
    /* Unique over the rows the new transaction saw, and enforced. */
    row_of(12, v, tb);
    v[1].v.i2 = 22; /* row 11's */
    assert_int_equal(keel_insert(other, "s1", "t", v), KEEL_EUNIQUE);
    finish(dir, db, other, s);
}

/*
 * A schema dropped while another transaction creates a table in it: one
 * of the two fails, whichever way they interleave, and a failed drop in a
 * transaction that goes on keeps nothing from others.
 */
static void test_drop_schema_against_create(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_column c = {"x", KEEL_INT4, 0, true};
    uint16_t pk = 1;
    const char *names[] = {"s2", "s3", "s4", "s5", "s6"};

    (void)state;
    setup_db(dir, &db, &a, 1);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_int_equal(keel_create_schema(a, names[i]), KEEL_OK);

    /* A create in flight keeps a drop out. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_create_table(a, "s2", "x", &c, 1, &pk, 1), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s2"), KEEL_EBUSY);
    assert_non_null(strstr(keel_session_error(b), "creating relations"));
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s2"), KEEL_EBUSY);
    assert_non_null(strstr(keel_session_error(b), "not empty"));

    /* A drop in flight keeps a create out. */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s3"), KEEL_OK);
    assert_int_equal(keel_create_table(a, "s3", "y", &c, 1, &pk, 1),
                     KEEL_ESERIALIZE);
    assert_non_null(strstr(keel_session_error(a), "dropping schema \"s3\""));
    assert_int_equal(keel_commit(b), KEEL_OK);
    assert_int_equal(keel_create_table(a, "s3", "y", &c, 1, &pk, 1),
                     KEEL_ENOENT);

    /* A create whose snapshot predates a committed drop. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s4"), KEEL_OK);
    assert_int_equal(keel_create_table(a, "s4", "z", &c, 1, &pk, 1),
                     KEEL_ESERIALIZE);
    assert_non_null(strstr(keel_session_error(a), "was dropped"));
    keel_abort(a);

    /* A drop whose snapshot predates a committed create. */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_create_table(a, "s5", "w", &c, 1, &pk, 1), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s5"), KEEL_ESERIALIZE);
    assert_non_null(strstr(keel_session_error(b), "since the transaction"));
    keel_abort(b);
    assert_int_equal(keel_drop_schema(b, "s5"), KEEL_EBUSY);

    /* Two drops: the second is refused, and leaves the first's claim. */
    assert_int_equal(keel_create_schema(a, "s7"), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s7"), KEEL_OK);
    assert_int_equal(keel_drop_schema(a, "s7"), KEEL_ESERIALIZE);
    assert_int_equal(keel_create_table(a, "s7", "t", &c, 1, &pk, 1),
                     KEEL_ESERIALIZE);
    assert_int_equal(keel_commit(b), KEEL_OK);

    /* A drop that failed in a transaction that goes on claims nothing. */
    assert_int_equal(keel_create_table(a, "s6", "v", &c, 1, &pk, 1), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s6"), KEEL_EBUSY);
    assert_int_equal(keel_create_table(a, "s6", "v2", &c, 1, &pk, 1), KEEL_OK);
    assert_int_equal(keel_drop_table(b, "s2", "x"), KEEL_OK);
    assert_int_equal(keel_commit(b), KEEL_OK);
    assert_int_equal(keel_drop_schema(b, "s2"), KEEL_OK);
    finish(dir, db, a, b);
}

/*
 * A table dropped while another transaction builds an index on it: one of
 * the two fails, whichever way they interleave; a table another
 * transaction analyzed (its keel_class row replaced) is not dropped.
 */
static void test_drop_table_against_create_index(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    uint16_t k2 = 2, k3 = 3, k6 = 6;

    (void)state;
    setup_db(dir, &db, &a, 5);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);

    /* A build in flight keeps a drop waiting (its SHARE lock against
     * ACCESS EXCLUSIVE). */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "t_a2", &k2, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_drop_table(b, "s1", "t"), KEEL_ELOCKTIMEOUT);
    assert_non_null(strstr(keel_session_error(b), "AccessExclusiveLock"));
    assert_int_equal(keel_commit(a), KEEL_OK);

    /* A drop whose snapshot predates a committed build. */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "t_a8", &k3, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_drop_table(b, "s1", "t"), KEEL_ESERIALIZE);
    assert_non_null(strstr(keel_session_error(b), "since the transaction"));
    keel_abort(b);

    /* A build whose snapshot predates another's analyze of the table,
     * which replaced its keel_class row: the table is still there. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_analyze(b, "s1", "t"), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "t_af", &k6, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_commit(a), KEEL_OK);

    /* A build whose snapshot predates a committed drop, and one while a
     * drop is in flight. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_drop_table(b, "s1", "t"), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "t_x", &k3, 1, false),
                     KEEL_ELOCKTIMEOUT);
    assert_int_equal(keel_commit(b), KEEL_OK);
    /* Its first lock, on a table dropped since: the snapshot is taken
     * again, which finds no table. */
    assert_int_equal(keel_create_index(a, "s1", "t", "t_x", &k3, 1, false),
                     KEEL_ENOENT);
    assert_non_null(strstr(keel_session_error(a), "does not exist"));
    keel_abort(a);
    finish(dir, db, a, b);
}

/*
 * The engine forgets a schema's or table's claim state once it says
 * nothing (no claim, its last creator committed below the horizon, or the
 * object dropped), so that an open creating and dropping tables without
 * end does not pile them up.  A state still needed, with a snapshot older
 * than a create, stays (the drop is refused); a drop whose snapshot
 * predates another's committed drop of the object is refused too.
 */
static void test_claim_states_pruned(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_column c = {"x", KEEL_INT4, 0, true};
    uint16_t pk = 1;
    char name[32], ix[32];

    (void)state;
    setup_db(dir, &db, &a, 1);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        snprintf(ix, sizeof(ix), "c%d_x", i);
        assert_int_equal(keel_create_table(a, "s1", name, &c, 1, &pk, 1),
                         KEEL_OK);
        if (i % 2 == 0)
            assert_int_equal(
                keel_create_index(a, "s1", name, ix, &pk, 1, false), KEEL_OK);
        assert_int_equal(keel_drop_table(a, "s1", name), KEEL_OK);
        /* At most s1's, whose creator may not be below a horizon yet. */
        assert_true(db->nclaims <= 1);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof(name), "d%d", i);
        assert_int_equal(keel_create_table(a, "s1", name, &c, 1, &pk, 1),
                         KEEL_OK);
    }
    /* b's snapshot predates an index build on d0: d0's state stays, and
     * b may not drop d0; nor d1, which a dropped since. */
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "d0", "d0_y", &pk, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_drop_table(a, "s1", "d1"), KEEL_OK);
    usleep(2 * TXN_HORIZON_INTERVAL_MAX_NS / 1000);
    assert_int_equal(keel_create_table(a, "s1", "last", &c, 1, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_drop_table(b, "s1", "d0"), KEEL_ESERIALIZE);
    keel_abort(b);
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_drop_table(b, "s1", "d1"), KEEL_ENOENT);
    keel_abort(b);
    /* With b gone, a horizon past every create forgets them all. */
    assert_int_equal(keel_drop_table(a, "s1", "d0"), KEEL_OK);
    usleep(2 * TXN_HORIZON_INTERVAL_MAX_NS / 1000);
    assert_int_equal(keel_drop_table(a, "s1", "last"), KEEL_OK);
    if (txn_horizon(db->txn) != XID_INVALID) /* membarrier(2) there */
        assert_int_equal(db->nclaims, 0);
    finish(dir, db, a, b);
}

/*
 * Index builds on one table go one at a time, each seeing all before it,
 * so that no interleaving takes a table past 32 indexes (every one of
 * which each change of the table's rows keeps up); a table whose catalog
 * lists more anyway is refused as damaged, not served with some left out.
 */
static void test_index_limit_holds(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_value v[9];
    char tb[32], name[32];
    uint16_t k = 2;
    catalog_txn ct;
    catalog_namespace ns;
    catalog_relation r;
    catalog_indexdef defs[1];
    uint32_t n;
    char keys_text[64];
    keel_value vals[8];

    (void)state;
    setup_db(dir, &db, &a, 3);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    for (int i = 0; i < 30; i++) { /* with t_pkey, 31 */
        snprintf(name, sizeof(name), "t_i%d", i);
        assert_int_equal(keel_create_index(a, "s1", "t", name, &k, 1, false),
                         KEEL_OK);
    }
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "ua", &k, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_create_index(b, "s1", "t", "ub", &k, 1, true),
                     KEEL_EBUSY);
    assert_non_null(strstr(keel_session_error(b), "building an index on"));
    /* One of a transaction's own builds does not hold up the next. */
    assert_int_equal(keel_create_index(a, "s1", "t", "ua2", &k, 1, false),
                     KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(a), "32 indexes already"));
    assert_int_equal(keel_commit(a), KEEL_OK);
    /* b's snapshot lacks a's index: b may not count on it. */
    assert_int_equal(keel_create_index(b, "s1", "t", "ub", &k, 1, true),
                     KEEL_ESERIALIZE);
    assert_non_null(strstr(keel_session_error(b), "since the transaction"));
    keel_abort(b);
    assert_int_equal(keel_create_index(b, "s1", "t", "ub", &k, 1, true),
                     KEEL_EINVAL);
    row_of(4, v, tb);
    assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_OK);

    /* A 33rd keel_index row, written past the engine: the table is
     * refused as damaged. */
    assert_int_equal(engine_stmt_begin_catalog(a, true, &ct), KEEL_OK);
    assert_int_equal(catalog_namespace_by_name(db->cat, &ct, "s1", &ns),
                     KEEL_OK);
    assert_int_equal(catalog_relation_by_name(db->cat, &ct, "t", ns.oid, &r),
                     KEEL_OK);
    assert_int_equal(catalog_indexes_of(db->cat, &ct, r.oid, defs, 1, &n),
                     KEEL_OK);
    assert_int_equal(n, 32);
    defs[0].indexoid = 999999;
    catalog_index_values(&defs[0], keys_text, vals);
    assert_int_equal(catalog_insert(db->cat, &ct, CAT_INDEX, vals), KEEL_OK);
    assert_int_equal(engine_stmt_end(a, KEEL_OK, true), KEEL_OK);
    row_of(5, v, tb);
    assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_ECORRUPT);
    assert_non_null(strstr(keel_session_error(a), "33 indexes, more than 32"));
    finish(dir, db, a, b);
}

/*
 * While a transaction that built an index on a table runs, other
 * transactions' inserts and updates of the table wait for its SHARE lock
 * (here until their lock timeout, changing nothing), its own go on; once
 * it commits, the writes of transactions whose snapshots predate the
 * commit fail, and those of later ones succeed and reach the new index.
 */
static void test_writes_against_index_build(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_value v[9], key;
    char tb[32];
    uint16_t k2 = 2;

    (void)state;
    setup_db(dir, &db, &a, 5);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "t_a2", &k2, 1, false),
                     KEEL_OK);
    row_of(6, v, tb);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_ELOCKTIMEOUT);
    assert_non_null(strstr(keel_session_error(b), "RowExclusiveLock"));
    key = tu_vi4(2);
    row_of(2, v, tb);
    v[1].v.i2 = 99;
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_update(b, "s1", "t", &key, v), KEEL_ELOCKTIMEOUT);
    assert_int_equal(keel_commit(b), KEEL_OK); /* it changed nothing */
    /* Reads go on; the builder's own writes too. */
    assert_int_equal(count_rows(b, NULL, 1, 100), 5);
    row_of(7, v, tb);
    assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK); /* before the build commits */
    assert_int_equal(keel_commit(a), KEEL_OK);
    row_of(8, v, tb);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_ESERIALIZE);
    assert_non_null(strstr(keel_session_error(b), "since the transaction"));
    keel_abort(b);
    /* A transaction that sees the build writes, and into the index. */
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_OK);
    row_of(2, v, tb);
    v[1].v.i2 = 99;
    assert_int_equal(keel_update(b, "s1", "t", &key, v), KEEL_OK);
    assert_int_equal(count_rows(b, NULL, 1, 100), 7);
    assert_int_equal(count_rows(b, "t_a2", -32768, 32767), 7);
    assert_int_equal(count_rows(b, "t_a2", 99, 99), 1);
    finish(dir, db, a, b);
}

/* Every way an index build's transaction ends gives its SHARE lock back,
 * so that writers go on: after a refused name, a unique index over
 * duplicates (the lock stays until the abort), the end of the session
 * with the build running, a commit; while a transaction that built one
 * index runs, a second build that fails leaves the lock, and writers
 * still wait. */
static void test_build_failures_release_mark(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_value v[9];
    char tb[32];
    uint16_t k2 = 2, k7 = 7;
    int id = 100;

    (void)state;
    setup_db(dir, &db, &a, 5);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    /* A name taken (the table's own). */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_not_equal(keel_create_index(a, "s1", "t", "t", &k2, 1, false),
                         KEEL_OK);
    row_of(id++, v, tb);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_ELOCKTIMEOUT);
    keel_abort(a);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_OK);
    /* A unique index over duplicate values. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "u7", &k7, 1, true),
                     KEEL_EUNIQUE);
    row_of(id++, v, tb);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_ELOCKTIMEOUT);
    keel_abort(a);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_OK);
    /* A second build in the transaction fails: the first's mark stays. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "t", "i2", &k2, 1, false),
                     KEEL_OK);
    assert_int_not_equal(keel_create_index(a, "s1", "t", "i2", &k2, 1, false),
                         KEEL_OK);
    row_of(id++, v, tb);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_ELOCKTIMEOUT);
    /* The session ends with the build running. */
    keel_session_end(a);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_OK);
    /* A build in its own transaction, committed. */
    assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
    keel_session_set_lock_timeout(a, TEST_LOCK_MS);
    assert_int_equal(keel_create_index(a, "s1", "t", "i2", &k2, 1, false),
                     KEEL_OK);
    row_of(id++, v, tb);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_OK);
    finish(dir, db, a, b);
}

/* A call that succeeds leaves no message behind, though the catalogs
 * held versions it could not see (another session's uncommitted
 * creates of a table and of an index). */
static void test_success_leaves_no_message(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_column c = {"x", KEEL_INT4, 0, true};
    uint16_t pk = 1, two = 2;
    bool exists = true, found = false;
    keel_value key, out[9];

    (void)state;
    setup_db(dir, &db, &a, 1);
    keel_session_end(a);
    assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
    keel_session_set_lock_timeout(a, TEST_LOCK_MS);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    assert_int_equal(keel_begin(b), KEEL_OK);
    assert_int_equal(keel_create_table(b, "s1", "hidden", &c, 1, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_create_index(b, "s1", "t", "t_a2", &two, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_begin(a), KEEL_OK);
    key = tu_vi4(1);
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(keel_relation_exists(a, "s1", "hidden", &exists), KEEL_OK);
    assert_false(exists);
    assert_int_equal(keel_relation_exists(a, "s1", "t", &exists), KEEL_OK);
    assert_true(exists);
    assert_string_equal(keel_session_error(a), "");
    assert_int_equal(keel_commit(a), KEEL_OK);
    keel_abort(b);
    finish(dir, db, a, b);
}

/* Two transactions analyzing one table: the second is refused with
 * KEEL_ESERIALIZE, whether or not the table had statistics, and analyzes
 * it once the first has committed. */
typedef struct dup_inserter {
    keel_db *db;
    int32_t id;
    keel_status rc;
    volatile int done;
} dup_inserter;

static void *insert_dup(void *arg)
{
    dup_inserter *d = arg;
    keel_session *s;
    keel_error e;
    keel_value v[2] = {tu_vi4(d->id), tu_vi4(2)};

    assert_int_equal(keel_session_begin(d->db, &s, &e), KEEL_OK);
    d->rc = keel_insert(s, NULL, "u", v);
    __atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
    keel_session_end(s);
    return NULL;
}

/*
 * An insert meeting a key another transaction inserted and has not ended
 * waits for it, as PostgreSQL's unique check does: the key is free if it
 * aborts, 23505's KEEL_EUNIQUE if it commits.  So is one meeting a key
 * whose row another transaction is deleting.
 */
static void test_unique_waits_for_inserter(void **state)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"x", KEEL_INT4, 0, false}};
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_error e;
    keel_db *db;
    keel_session *a;
    uint16_t pk = 1;
    pthread_t t;

    (void)state;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
    assert_int_equal(keel_create_table(a, NULL, "u", cols, 2, &pk, 1), KEEL_OK);
    for (int round = 0; round < 3; round++) {
        /* 0: the inserter aborts; 1: it commits; 2: a deleter aborts. */
        dup_inserter d = {.db = db, .id = 10 + round};
        keel_value v[2] = {tu_vi4(d.id), tu_vi4(1)}, key = tu_vi4(d.id);
        if (round == 2)
            assert_int_equal(keel_insert(a, NULL, "u", v), KEEL_OK);
        assert_int_equal(keel_begin(a), KEEL_OK);
        if (round == 2)
            assert_int_equal(keel_delete(a, NULL, "u", &key), KEEL_OK);
        else
            assert_int_equal(keel_insert(a, NULL, "u", v), KEEL_OK);
        assert_int_equal(pthread_create(&t, NULL, insert_dup, &d), 0);
        usleep(50 * 1000);
        assert_int_equal(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 0);
        if (round == 1)
            assert_int_equal(keel_commit(a), KEEL_OK);
        else
            assert_int_equal(keel_abort(a), KEEL_OK);
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_int_equal(d.rc, round == 0 ? KEEL_OK : KEEL_EUNIQUE);
    }
    keel_session_end(a);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

static void test_concurrent_analyze(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;

    (void)state;
    setup_db(dir, &db, &a, 10);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    for (int round = 0; round < 2; round++) { /* first statistics, then new */
        assert_int_equal(keel_begin(a), KEEL_OK);
        assert_int_equal(keel_analyze(a, "s1", "t"), KEEL_OK);
        assert_int_equal(keel_analyze(b, "s1", "t"), KEEL_ESERIALIZE);
        if (round == 0)
            assert_non_null(strstr(keel_session_error(b), "being analyzed"));
        assert_int_equal(keel_commit(a), KEEL_OK);
        assert_int_equal(keel_analyze(b, "s1", "t"), KEEL_OK);
    }
    finish(dir, db, a, b);
}

static void test_concurrent_sessions(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s, *a, *b;
    keel_error e;
    keel_value v[9], key = tu_vi4(1), out[9];
    char tb[32];
    bool found;

    (void)state;
    setup_db(dir, &db, &s, 3);
    assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
    keel_session_set_lock_timeout(a, TEST_LOCK_MS);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    row_of(1, v, tb);
    v[8] = tu_vstr("by a");
    assert_int_equal(keel_update(a, "s1", "t", &key, v), KEEL_OK);
    v[8] = tu_vstr("by b");
    assert_int_equal(keel_update(b, "s1", "t", &key, v), KEEL_ESERIALIZE);
    /* b still sees the old row; a's change is invisible until commit. */
    assert_int_equal(keel_lookup(b, "s1", "t", &key, out, &found), KEEL_OK);
    check_row(1, out);
    assert_int_equal(keel_commit(a), KEEL_OK);
    keel_abort(b);
    assert_int_equal(keel_lookup(b, "s1", "t", &key, out, &found), KEEL_OK);
    assert_memory_equal(out[8].v.s.ptr, "by a", 4);
    /* Two sessions inserting one key: the second waits for the first
     * (in one thread, until its lock timeout), and is refused once the
     * first has committed. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_begin(b), KEEL_OK);
    row_of(77, v, tb);
    assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_OK);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_ELOCKTIMEOUT);
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_int_equal(keel_insert(b, "s1", "t", v), KEEL_EUNIQUE);
    assert_int_equal(keel_commit(b), KEEL_OK);
    keel_session_end(a);
    finish(dir, db, b, s);
}

/* Rewrites a field of block 0 (the meta page) of relation rel in dir, its
 * checksum made right again, as a hand edit or a bug could leave it: key
 * column k's type becomes type (k >= 0), the unique flag unique (>= 0). */
static void meta_set(const char *dir, uint32_t rel, int k, keel_type type,
                     int unique)
{
    union {
        uint64_t align;
        unsigned char b[BLOCK_SIZE];
    } page;
    char path[512];
    bt_meta m;
    int fd;

    snprintf(path, sizeof(path), "%s/%u", dir, rel);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, page.b, BLOCK_SIZE, 0), BLOCK_SIZE);
    memcpy(&m, page.b + PAGE_HEADER_SIZE, sizeof(m));
    assert_int_equal(m.magic, BT_MAGIC);
    if (k >= 0)
        m.attrs[k].type = (uint8_t)type;
    if (unique >= 0)
        m.unique = (uint8_t)unique;
    memcpy(page.b + PAGE_HEADER_SIZE, &m, sizeof(m));
    page_set_checksum(page.b);
    assert_int_equal(pwrite(fd, page.b, BLOCK_SIZE, 0), BLOCK_SIZE);
    close(fd);
}

/*
 * Catalog rows and meta pages that disagree (damage a page checksum
 * cannot catch): a keel_index row naming another table's index as t's, a
 * primary key whose meta page gives its key another type than the
 * table's column (or says it is not unique), a catalog index whose meta
 * page gives its key another type than the catalog's (or another
 * uniqueness).  Rows' values would be read as keys of the wrong type, or
 * a unique index's keys no longer kept unique; instead the statements
 * fail with KEEL_ECORRUPT (an open, for the catalog's index).
 */
static void test_damaged_index_catalog(void **state)
{
    static const keel_column ucols[] = {{"k", KEEL_TEXT, 0, true}};
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *a;
    keel_error e;
    keel_value v[9], key = tu_vi4(2), out[9];
    char tb[32], keys_text[64];
    uint16_t pk = 1;
    catalog_txn ct;
    catalog_namespace ns;
    catalog_relation t, u;
    catalog_indexdef def, tdef;
    uint32_t n;
    keel_value vals[8];
    bool found;

    (void)state;
    setup_db(dir, &db, &a, 3);
    assert_int_equal(keel_create_table(a, "s1", "u", ucols, 1, &pk, 1),
                     KEEL_OK);
    assert_int_equal(engine_stmt_begin_catalog(a, false, &ct), KEEL_OK);
    assert_int_equal(catalog_namespace_by_name(db->cat, &ct, "s1", &ns),
                     KEEL_OK);
    assert_int_equal(catalog_relation_by_name(db->cat, &ct, "t", ns.oid, &t),
                     KEEL_OK);
    assert_int_equal(catalog_relation_by_name(db->cat, &ct, "u", ns.oid, &u),
                     KEEL_OK);
    assert_int_equal(catalog_indexes_of(db->cat, &ct, u.oid, &def, 1, &n),
                     KEEL_OK);
    assert_int_equal(n, 1);
    assert_int_equal(engine_stmt_end(a, KEEL_OK, false), KEEL_OK);
    keel_session_end(a);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    /* t's primary key's meta page: its key (id int4) made text. */
    {
        assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
        assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
        keel_session_set_lock_timeout(a, TEST_LOCK_MS);
        assert_int_equal(engine_stmt_begin_catalog(a, false, &ct), KEEL_OK);
        assert_int_equal(catalog_indexes_of(db->cat, &ct, t.oid, &tdef, 1, &n),
                         KEEL_OK);
        assert_int_equal(engine_stmt_end(a, KEEL_OK, false), KEEL_OK);
        keel_session_end(a);
        assert_int_equal(keel_db_close(db, &e), KEEL_OK);
        meta_set(dir, tdef.indexoid, 0, KEEL_TEXT, -1);
        assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
        assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
        keel_session_set_lock_timeout(a, TEST_LOCK_MS);
        assert_int_equal(
            keel_select_column(a, "s1", "t", "at", &key, out, &found),
            KEEL_ECORRUPT);
        assert_non_null(strstr(keel_session_error(a), "does not fit"));
        assert_false(found);
        assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found),
                         KEEL_ECORRUPT);
        row_of(4, v, tb);
        assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_ECORRUPT);
        assert_int_equal(keel_delete(a, "s1", "t", &key), KEEL_ECORRUPT);
        keel_session_end(a);
        assert_int_equal(keel_db_close(db, &e), KEEL_OK);
        meta_set(dir, tdef.indexoid, 0, KEEL_INT4, -1);

        /* Its meta page no longer unique: inserts would not keep it so. */
        meta_set(dir, tdef.indexoid, -1, 0, 0);
        assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
        assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
        keel_session_set_lock_timeout(a, TEST_LOCK_MS);
        row_of(2, v, tb);
        assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_ECORRUPT);
        assert_non_null(strstr(keel_session_error(a), "unique"));
        keel_session_end(a);
        assert_int_equal(keel_db_close(db, &e), KEEL_OK);
        meta_set(dir, tdef.indexoid, -1, 0, 1);
    }

    /* u's primary key (text) listed as t's, its keel_index row changed. */
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &a, &e), KEEL_OK);
    keel_session_set_lock_timeout(a, TEST_LOCK_MS);
    key = tu_vi4(2);
    assert_int_equal(keel_lookup(a, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(engine_stmt_begin_catalog(a, true, &ct), KEEL_OK);
    def.tableoid = t.oid;
    def.primary = false;
    def.unique = false;
    catalog_index_values(&def, keys_text, vals);
    assert_int_equal(catalog_update(db->cat, &ct, CAT_INDEX, def.tid, vals),
                     KEEL_OK);
    assert_int_equal(engine_stmt_end(a, KEEL_OK, true), KEEL_OK);
    row_of(4, v, tb);
    assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_ECORRUPT);
    assert_non_null(strstr(keel_session_error(a), "does not fit"));
    row_of(2, v, tb);
    assert_int_equal(keel_update(a, "s1", "t", &key, v), KEEL_ECORRUPT);
    assert_int_equal(keel_delete(a, "s1", "t", &key), KEEL_ECORRUPT);

    /* t's primary key's row, that index put back to u, names t itself as
     * the index: a table, not to be used as one. */
    assert_int_equal(engine_stmt_begin_catalog(a, true, &ct), KEEL_OK);
    {
        catalog_indexdef both[2];
        assert_int_equal(catalog_indexes_of(db->cat, &ct, t.oid, both, 2, &n),
                         KEEL_OK);
        assert_int_equal(n, 2);
        tdef = both[both[0].indexoid == def.indexoid];
        def = both[both[0].indexoid != def.indexoid];
    }
    def.tableoid = u.oid;
    catalog_index_values(&def, keys_text, vals);
    assert_int_equal(catalog_update(db->cat, &ct, CAT_INDEX, def.tid, vals),
                     KEEL_OK);
    tdef.indexoid = t.oid;
    catalog_index_values(&tdef, keys_text, vals);
    assert_int_equal(catalog_update(db->cat, &ct, CAT_INDEX, tdef.tid, vals),
                     KEEL_OK);
    assert_int_equal(engine_stmt_end(a, KEEL_OK, true), KEEL_OK);
    assert_int_equal(keel_insert(a, "s1", "t", v), KEEL_ECORRUPT);
    assert_non_null(strstr(keel_session_error(a), "but is a table"));
    keel_session_end(a);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    /* keel_class's name index, its key (a name) made an oid, or the index
     * made not unique: no open. */
    meta_set(dir, CATALOG_CLASS_NAME_IDX, 0, KEEL_OID, -1);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ECORRUPT);
    assert_non_null(strstr(e.msg, "keel_class_name_index"));
    meta_set(dir, CATALOG_CLASS_NAME_IDX, 0, KEEL_NAME, 0);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ECORRUPT);
    meta_set(dir, CATALOG_CLASS_NAME_IDX, -1, 0, 1);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

static void test_bad_directories(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db = NULL;
    keel_error e;
    control_data c;
    kerr ke;
    char path[4200];

    (void)state;
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ENOENT);
    assert_non_null(strstr(e.msg, dir));
    assert_null(db);
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_create(&o, &e), KEEL_EEXIST);
    /* Another layout version. */
    assert_int_equal(control_read(dir, &c, &ke), KEEL_OK);
    assert_int_equal(c.state, CONTROL_SHUT_DOWN);
    c.layout_version = CONTROL_LAYOUT_VERSION + 1;
    assert_int_equal(control_write(dir, &c, &ke), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_EVERSION);
    c.layout_version = CONTROL_LAYOUT_VERSION;
    assert_int_equal(control_write(dir, &c, &ke), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(control_read(dir, &c, &ke), KEEL_OK);
    assert_int_equal(c.state, CONTROL_IN_PRODUCTION);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    /* A corrupt control file. */
    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_FILE_NAME);
    tu_flip_bit(path, 20, 3);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ECORRUPT);
    assert_non_null(strstr(e.msg, dir));
    o.pool_mb = 0;
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_EINVAL);
    tu_dir_remove(dir);
}

/* In a child that waits to be killed: dies with the test too, should a
 * failed assertion end it first. */
static void die_with_parent(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(0);
}

/* The exit status of a child that runs fn(dir), or -1 if it died. */
static int in_child(int (*fn)(const char *), const char *dir)
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fn(dir));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* 0 if opening dir fails with KEEL_EBUSY naming the parent process. */
static int open_refused_naming_parent(const char *dir)
{
    keel_db_options o = opts_for(dir);
    keel_db *db = NULL;
    keel_error e;
    char want[64];

    snprintf(want, sizeof(want), "in use by process %ld", (long)getppid());
    if (keel_db_open(&o, &db, &e) != KEEL_EBUSY || db != NULL)
        return 1;
    return strstr(e.msg, want) != NULL && strstr(e.msg, dir) != NULL ? 0 : 2;
}

/* FNV-1a of a file's bytes (0 for one that cannot be read). */
static uint64_t file_hash(const char *path)
{
    unsigned char buf[4096];
    uint64_t h = 14695981039346656037ULL;
    size_t got;
    FILE *f = fopen(path, "rb");

    if (f == NULL)
        return 0;
    while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
        for (size_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 1099511628211ULL;
    fclose(f);
    return h;
}

/*
 * What a directory holds, as text: each entry's name, inode, size,
 * modification time and a hash of its bytes (the directory itself as ".",
 * its parent left out), and the whole of the control and lock files, so
 * that any write to the directory or its files changes it.
 */
static void dir_state(const char *dir, char *out, size_t len)
{
    struct dirent **names;
    size_t used = 0;
    int n = scandir(dir, &names, NULL, alphasort);

    assert_true(n >= 0);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char path[4200], text[2 * 1024 + 1] = "";
        unsigned char raw[1024];
        struct stat st;
        FILE *f;

        /* The parent is shared with whatever else makes directories
         * there (tests running alongside): not ours to judge. */
        if (strcmp(names[i]->d_name, "..") == 0) {
            free(names[i]);
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
        assert_int_equal(lstat(path, &st), 0);
        if (strcmp(names[i]->d_name, CONTROL_FILE_NAME) == 0 ||
            strcmp(names[i]->d_name, CONTROL_LOCK_NAME) == 0) {
            size_t got;
            f = fopen(path, "rb");
            assert_non_null(f);
            got = fread(raw, 1, sizeof(raw), f);
            assert_true(got < sizeof(raw)); /* the whole file */
            fclose(f);
            for (size_t k = 0; k < got; k++) /* bytes, printably */
                snprintf(text + 2 * k, 3, "%02x", raw[k]);
        }
        used += (size_t)snprintf(
            out + used, len - used, "%s %lu %lld %lld.%09ld %016llx %s\n",
            names[i]->d_name, (unsigned long)st.st_ino, (long long)st.st_size,
            (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
            S_ISREG(st.st_mode) ? (unsigned long long)file_hash(path) : 0ULL,
            text);
        assert_true(used < len);
        free(names[i]);
    }
    free(names);
}

/* How many of this process's descriptors are open on files in dir; each
 * must be open for reading only. */
static int read_only_fds(const char *dir)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    size_t len = strlen(dir);
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        char link[300], target[4200], line[128];
        ssize_t got;
        FILE *f;
        unsigned long flags = O_ACCMODE;

        if (de->d_name[0] == '.')
            continue;
        snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
        got = readlink(link, target, sizeof(target) - 1);
        if (got < 0)
            continue; /* opendir()'s own, closed since */
        target[got] = '\0';
        if (strncmp(target, dir, len) != 0 || target[len] != '/')
            continue;
        snprintf(link, sizeof(link), "/proc/self/fdinfo/%s", de->d_name);
        f = fopen(link, "r");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f) != NULL)
            if (sscanf(line, "flags: %lo", &flags) == 1)
                break;
        fclose(f);
        if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_NONBLOCK) != 0)
            fail_msg("%s is open with flags %lo", target, flags);
        n++;
    }
    closedir(d);
    return n;
}

/* A load's rows: none. */
static keel_status no_rows(void *ctx, keel_value *values, bool *done)
{
    (void)ctx;
    (void)values;
    *done = true;
    return KEEL_OK;
}

/* A child's part of test_read_only: opens dir for writing, commits row
 * 4, inserts row 5 in a transaction left running, says so on fd and
 * waits to be killed. */
static void crash_holding(const char *dir, int fd)
{
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_value v[9];
    char tb[32];

    die_with_parent();
    if (keel_db_open(&o, &db, &e) != KEEL_OK ||
        keel_session_begin(db, &s, &e) != KEEL_OK)
        _exit(1);
    row_of(4, v, tb);
    if (keel_insert(s, "s1", "t", v) != KEEL_OK)
        _exit(2);
    row_of(5, v, tb);
    if (keel_begin(s) != KEEL_OK || keel_insert(s, "s1", "t", v) != KEEL_OK)
        _exit(3);
    /* The committed row's pages reach the files; the running one's
     * commit-log entry stays "in progress". */
    if (keel_checkpoint(db, &e) != KEEL_OK)
        _exit(4);
    if (write(fd, "x", 1) != 1)
        _exit(5);
    for (;;)
        pause();
}

/*
 * Read-only opens: they read everything, refuse every write with
 * KEEL_EREADONLY and leave the directory exactly as it was (names, sizes,
 * times, the control and lock files' bytes), also after a crash; they
 * share the lock with one another and exclude an open for writing either
 * way round.
 */
/* Fails, naming the first entry that differs, unless two dir_state()
 * texts are equal (cmocka's string message would cut them short). */
static void assert_same_state(const char *before, const char *after)
{
    const char *a = before, *b = after;

    while (*a != '\0' || *b != '\0') {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || memcmp(a, b, la) != 0)
            fail_msg("directory changed:\n  before: %.*s\n  after:  %.*s",
                     (int)la, a, (int)lb, b);
        a += la + (a[la] != '\0');
        b += lb + (b[lb] != '\0');
    }
}

static void test_read_only(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir), ro = opts_for(dir);
    keel_db *db, *r1, *r2, *w = NULL;
    keel_session *s, *s2;
    keel_error e;
    keel_value v[9];
    keel_column col = {"x", KEEL_INT4, 0, false};
    uint16_t pk = 1;
    uint64_t loaded = 0;
    char tb[32], want[64], text[8];
    static char before[32768], after[32768];
    int ready[2];
    pid_t child;

    (void)state;
    ro.read_only = true;
    assert_int_equal(keel_db_create(&ro, &e), KEEL_EINVAL);
    assert_non_null(strstr(e.msg, "read-only"));
    setup_db(dir, &db, &s, 3);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    dir_state(dir, before, sizeof(before));

    assert_int_equal(keel_db_open(&ro, &r1, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&ro, &r2, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &w, &e), KEEL_EBUSY);
    assert_null(w);
    assert_int_equal(keel_session_begin(r1, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(keel_session_begin(r2, &s2, &e), KEEL_OK);
    keel_session_set_lock_timeout(s2, TEST_LOCK_MS);
    assert_int_equal(count_rows(s, NULL, 1, 10), 3);
    assert_int_equal(count_rows(s2, NULL, 1, 10), 3);
    /* Two locks, and the catalogs' and the table's files, twice. */
    assert_true(read_only_fds(dir) >= 2 + 2 * 3);
    /* Each kind of write is refused, naming the directory, before it
     * changes anything: the explicit transaction goes on reading. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    row_of(9, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_EREADONLY);
    assert_non_null(strstr(keel_session_error(s), dir));
    assert_int_equal(keel_update(s, "s1", "t", &v[0], v), KEEL_EREADONLY);
    v[0] = tu_vi4(2);
    assert_int_equal(keel_delete(s, "s1", "t", &v[0]), KEEL_EREADONLY);
    assert_int_equal(keel_create_schema(s, "s2"), KEEL_EREADONLY);
    assert_int_equal(keel_create_table(s, "s1", "u", &col, 1, &pk, 1),
                     KEEL_EREADONLY);
    assert_int_equal(keel_analyze(s, "s1", "t"), KEEL_EREADONLY);
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &pk, 1, false),
                     KEEL_EREADONLY);
    assert_int_equal(keel_drop_table(s, "s1", "t"), KEEL_EREADONLY);
    assert_int_equal(keel_drop_schema(s, "s1"), KEEL_EREADONLY);
    assert_int_equal(
        keel_load_table(s, "s1", "u", &col, 1, &pk, 1, no_rows, NULL, &loaded),
        KEEL_EREADONLY);
    assert_int_equal(count_rows(s, NULL, 1, 10), 3);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(keel_checkpoint(r1, &e), KEEL_OK);
    keel_session_end(s);
    keel_session_end(s2);
    assert_int_equal(keel_db_close(r1, &e), KEEL_OK);
    assert_int_equal(keel_db_close(r2, &e), KEEL_OK);
    dir_state(dir, after, sizeof(after));
    assert_same_state(before, after);

    /* A process that opens it for writing and dies with a transaction
     * running: read-only opens are refused while it lives, naming it,
     * and then see its committed row, not the other, writing nothing. */
    assert_int_equal(pipe(ready), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(ready[0]);
        crash_holding(dir, ready[1]);
    }
    close(ready[1]);
    assert_int_equal(read(ready[0], text, 1), 1);
    close(ready[0]);
    assert_int_equal(keel_db_open(&ro, &r1, &e), KEEL_EBUSY);
    snprintf(want, sizeof(want), "in use by process %ld", (long)child);
    assert_non_null(strstr(e.msg, want));
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    dir_state(dir, before, sizeof(before));
    assert_int_equal(keel_db_open(&ro, &r1, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(r1, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(count_rows(s, NULL, 1, 10), 4);
    assert_int_equal(count_rows(s, NULL, 5, 5), 0);
    keel_session_end(s);
    /* An open for writing is refused while it is open. */
    assert_int_equal(keel_db_open(&o, &w, &e), KEEL_EBUSY);
    assert_int_equal(keel_db_close(r1, &e), KEEL_OK);
    dir_state(dir, after, sizeof(after));
    assert_same_state(before, after);
    /* Without a lock file (a copy made without it) it opens unlocked,
     * and makes none. */
    {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_LOCK_NAME);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(keel_db_open(&ro, &r1, &e), KEEL_OK);
        assert_int_equal(keel_db_open(&ro, &r2, &e), KEEL_OK);
        assert_int_equal(keel_session_begin(r1, &s, &e), KEEL_OK);
        keel_session_set_lock_timeout(s, TEST_LOCK_MS);
        assert_int_equal(count_rows(s, NULL, 1, 10), 4);
        keel_session_end(s);
        assert_int_equal(keel_db_close(r1, &e), KEEL_OK);
        assert_int_equal(keel_db_close(r2, &e), KEEL_OK);
        assert_int_equal(stat(path, &st), -1);
        /* A lock file that is not a regular file is refused, at once:
         * a FIFO's O_RDONLY open would wait for a writer. */
        assert_int_equal(mkfifo(path, 0600), 0);
        alarm(30);
        assert_int_not_equal(keel_db_open(&ro, &r1, &e), KEEL_OK);
        assert_int_not_equal(keel_db_open(&o, &r1, &e), KEEL_OK);
        alarm(0);
        assert_non_null(strstr(e.msg, "lock file"));
        assert_int_equal(unlink(path), 0);
    }
    /* The open for writing then finds the same rows, and writes. */
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(count_rows(s, NULL, 1, 10), 4);
    row_of(5, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    assert_int_equal(count_rows(s, NULL, 1, 10), 5);
    finish(dir, db, s, NULL);
}

/*
 * A database is open in one place at a time: a second open, in the same
 * process or another, and a create over it, fail with KEEL_EBUSY naming
 * the holder, and leave the open database as it was; a close, or the
 * holder's death without one, lets the next open in.
 */
static void test_open_once(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db, *again = NULL;
    keel_session *s;
    keel_error e;
    char path[4200], want[64], text[32];
    int ready[2];
    pid_t child;
    FILE *f;

    (void)state;
    setup_db(dir, &db, &s, 3);
    assert_int_equal(keel_db_open(&o, &again, &e), KEEL_EBUSY);
    assert_null(again);
    assert_non_null(strstr(e.msg, dir));
    assert_non_null(strstr(e.msg, "already open in this process"));
    assert_int_equal(keel_db_create(&o, &e), KEEL_EEXIST);
    /* The lock file names this process. */
    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_LOCK_NAME);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    snprintf(want, sizeof(want), "%ld\n", (long)getpid());
    assert_string_equal(text, want);
    assert_int_equal(in_child(open_refused_naming_parent, dir), 0);
    /* Refused opens took nothing away from the open one. */
    assert_int_equal(count_rows(s, NULL, 1, 10), 3);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    /* Another process opens it and dies holding it. */
    assert_int_equal(pipe(ready), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        keel_db *held;
        die_with_parent();
        close(ready[0]);
        if (keel_db_open(&o, &held, &e) != KEEL_OK)
            _exit(1);
        if (write(ready[1], "x", 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    close(ready[1]);
    assert_int_equal(read(ready[0], text, 1), 1);
    close(ready[0]);
    assert_int_equal(keel_db_open(&o, &again, &e), KEEL_EBUSY);
    snprintf(want, sizeof(want), "in use by process %ld", (long)child);
    assert_non_null(strstr(e.msg, want));
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(count_rows(s, NULL, 1, 10), 3);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    /* A child forked while the database is open does not keep its lock:
     * the close lets the next open in while the child lives. */
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        die_with_parent();
        for (;;)
            pause();
    }
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    /* Closed cleanly: open and close again, then nothing holds it. */
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/* The number of entries of dir, "." and ".." left out; -1 if it is gone. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/*
 * A database is created in an empty directory only, and a create that
 * fails leaves nothing that passes for a database: not the files it wrote,
 * nor the directory it made.
 */
static void test_create_where(void **state)
{
    char *dir = tu_mkdtemp();
    char path[4200], sub[4200];
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_error e;
    FILE *f;

    (void)state;
    snprintf(path, sizeof(path), "%s/notes.txt", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("the user's\n", f);
    fclose(f);
    assert_int_equal(keel_db_create(&o, &e), KEEL_EEXIST);
    assert_non_null(strstr(e.msg, "not empty"));
    assert_non_null(strstr(e.msg, "notes.txt"));
    assert_int_equal(dir_entries(dir), 1); /* nothing added */
    assert_int_equal(unlink(path), 0);
#ifdef KEEL_FAULT_INJECTION
    /* A failed write of the catalogs: into the directory it made, and
     * into one that was there. */
    snprintf(sub, sizeof(sub), "%s/db", dir);
    o.dir = sub;
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 3, 1, 0);
    assert_int_equal(keel_db_create(&o, &e), KEEL_ENOSPC);
    fault_disarm_all();
    assert_int_equal(dir_entries(sub), -1);
    o.dir = dir;
    fault_arm(FAULT_OP_SYNC, FAULT_EIO, 1, 1, 0);
    assert_int_equal(keel_db_create(&o, &e), KEEL_EIO);
    fault_disarm_all();
    assert_int_equal(dir_entries(dir), 0);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ENOENT);
#else
    (void)sub;
#endif
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/* The files of dir named by a user relation's number. */
static int user_relation_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        relnumber_t rel;
        n += smgr_relnumber_of(de->d_name, &rel) &&
             rel >= CATALOG_FIRST_USER_OID;
    }
    closedir(d);
    return n;
}

#ifdef KEEL_FAULT_INJECTION
/*
 * A create whose table's file, or its primary key's, cannot be made
 * durable (the directory's fsync fails): the create fails with EIO
 * naming the file, no relation by that name exists, and the clean close
 * leaves no file of it; the retry succeeds and its rows survive.
 */
static void test_create_dir_sync_fails(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_column c = {"x", KEEL_INT4, 0, true};
    keel_value x = tu_vi4(5), out;
    uint16_t pk = 1;
    bool found;
    int files;

    (void)state;
    setup_db(dir, &db, &s, 3); /* s1.t, t_pkey */
    files = user_relation_files(dir);
    assert_int_equal(files, 2);
    for (uint32_t skip = 0; skip < 2; skip++) {
        fault_arm(FAULT_OP_DIR_SYNC, FAULT_EIO, skip, 1, 0);
        assert_int_equal(keel_create_table(s, "s1", "u", &c, 1, &pk, 1),
                         KEEL_EIO);
        assert_int_equal(fault_delivered(FAULT_OP_DIR_SYNC), 1);
        assert_non_null(strstr(keel_session_error(s), "after creating"));
        assert_int_equal(keel_relation_exists(s, "s1", "u", &found), KEEL_OK);
        assert_false(found);
    }
    fault_disarm_all();
    assert_int_equal(keel_create_table(s, "s1", "u", &c, 1, &pk, 1), KEEL_OK);
    assert_int_equal(keel_insert(s, "s1", "u", &x), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(user_relation_files(dir), files + 2);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(keel_lookup(s, "s1", "u", &x, &out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(out.v.i4, 5);
    assert_int_equal(count_rows(s, NULL, 1, 100), 3);
    finish(dir, db, s, NULL);
}
#endif

/*
 * A clean close removes the files no relation owns that the process made
 * or dropped: a dropped table's and its indexes', and those of a create
 * that aborted; the live relations' files, files keel did not name, and
 * one named as a relation that the process did not make, stay.
 */
static void test_close_removes_unowned_files(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_column c = {"x", KEEL_INT4, 0, true};
    keel_value x = tu_vi4(7);
    uint16_t pk = 1, k2 = 2;
    char path[4200];
    /* 17000: named as a relation, but made by no one this process saw. */
    const char *strays[] = {"notes", "0123", "17000x", "17000"};

    (void)state;
    setup_db(dir, &db, &s, 10); /* s1.t, t_pkey */
    assert_int_equal(keel_create_index(s, "s1", "t", "t_a2", &k2, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_create_table(s, "s1", "gone", &c, 1, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_insert(s, "s1", "gone", &x), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_create_table(s, "s1", "never", &c, 1, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_insert(s, "s1", "never", &x), KEEL_OK);
    keel_abort(s);
    assert_int_equal(user_relation_files(dir), 7);
    assert_int_equal(keel_drop_table(s, "s1", "gone"), KEEL_OK);
    for (size_t i = 0; i < sizeof(strays) / sizeof(strays[0]); i++) {
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", dir, strays[i]);
        f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
    }
    assert_int_equal(user_relation_files(dir), 8); /* a drop removes none */
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(user_relation_files(dir), 4);
    for (size_t i = 0; i < sizeof(strays) / sizeof(strays[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, strays[i]);
        assert_int_equal(access(path, F_OK), 0);
    }
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(count_rows(s, NULL, 1, 100), 10);
    assert_int_equal(count_rows(s, "t_a2", -32768, 32767), 10);
    /* The names are free; the new relations get files of their own. */
    assert_int_equal(keel_create_table(s, "s1", "gone", &c, 1, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_insert(s, "s1", "gone", &x), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(user_relation_files(dir), 6);
    tu_dir_remove(dir);
}

static void test_xid_reservation(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_value v[9];
    char tb[32];
    xid_t first, second;

    (void)state;
    setup_db(dir, &db, &s, 1);
    assert_int_equal(keel_begin(s), KEEL_OK);
    row_of(2, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    first = txn_current_xid(s->ts);
    assert_true(first >= XID_FIRST_NORMAL);
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    /* No clean close: the pool is dropped as by a crash after a
     * checkpoint; the reservation alone must keep xids from repeating. */
    assert_int_equal(keel_checkpoint(db, &e), KEEL_OK);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(keel_begin(s), KEEL_OK);
    row_of(3, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    second = txn_current_xid(s->ts);
    assert_true(second > first);
    assert_true(second >= TXN_XID_RESERVE_CHUNK);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(count_rows(s, NULL, 1, 10), 3);
    finish(dir, db, s, NULL);
}

#ifdef KEEL_FAULT_INJECTION
/* Fails the test unless rc and msg are the failed write of the control
 * file (of its temporary copy, or the sync of its directory) with want. */
static void assert_control_failed(int rc, const char *msg, int want)
{
    if (rc != want || strstr(msg, "control file") == NULL)
        fail_msg("want %s for the control file, got %s: \"%s\"",
                 keel_status_str(want), keel_status_str(rc), msg);
}

/*
 * The control file cannot be written: a full disk, a failed fsync, a
 * failed sync of its directory.  Whatever needed the write fails with
 * the error, naming the file, and takes no effect: the first transaction
 * id after an open (its reservation), the first object id (a create),
 * the open itself, the close.  Nothing committed before is lost, each
 * retry once the disk is back succeeds, and a close that failed reads
 * as a crash at the next open.
 */
static void test_control_write_fails(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    keel_column c = {"x", KEEL_INT4, 0, true};
    uint16_t pk = 1;
    keel_value v[9];
    char tb[32];
    bool found;
    int rc;

    (void)state;
    setup_db(dir, &db, &s, 5);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    /* The open writes the file first (its state, its new limits). */
    fault_arm(FAULT_OP_CONTROL, FAULT_ENOSPC, 0, 1, 0);
    rc = keel_db_open(&o, &db, &e);
    assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
    assert_control_failed(rc, e.msg, KEEL_ENOSPC);
    assert_non_null(strstr(e.msg, dir));
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK); /* not locked */
    assert_int_equal(db->found_state, CONTROL_SHUT_DOWN);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);

    /* The first xid of this open: its reservation's write fails (the
     * file's own fsync, then its directory's), and so does the insert
     * that needed it, in a transaction of its own or in one begun. */
    row_of(6, v, tb);
    fault_arm(FAULT_OP_CONTROL, FAULT_EIO, 1, 1, 0);
    assert_control_failed(keel_insert(s, "s1", "t", v), keel_session_error(s),
                          KEEL_EIO);
    assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
    assert_int_equal(keel_begin(s), KEEL_OK);
    fault_arm(FAULT_OP_CONTROL, FAULT_EIO, 2, 1, 0);
    assert_control_failed(keel_insert(s, "s1", "t", v), keel_session_error(s),
                          KEEL_EIO);
    assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
    keel_abort(s);
    assert_int_equal(count_rows(s, NULL, 1, 100), 5);
    /* A short write is completed, not an error. */
    fault_arm(FAULT_OP_CONTROL, FAULT_SHORT, 0, 1, 0);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
    assert_int_equal(count_rows(s, NULL, 1, 100), 6);

    /* The first object id of this open: the create fails whole. */
    fault_arm(FAULT_OP_CONTROL, FAULT_ENOSPC, 0, 1, 0);
    assert_control_failed(keel_create_table(s, "s1", "u", &c, 1, &pk, 1),
                          keel_session_error(s), KEEL_ENOSPC);
    assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
    assert_int_equal(keel_relation_exists(s, "s1", "u", &found), KEEL_OK);
    assert_false(found);
    assert_int_equal(keel_create_table(s, "s1", "u", &c, 1, &pk, 1), KEEL_OK);
    assert_int_equal(keel_relation_exists(s, "s1", "u", &found), KEEL_OK);
    assert_true(found);

    /* The close: its checkpoint is done, its record of a clean shutdown
     * is not; the next open finds what a crash leaves, and every row. */
    keel_session_end(s);
    /* The checkpoint's own write of the control file (its redo pointer:
     * a write, a sync, a sync of the directory) goes through; the
     * shutdown's fails. */
    fault_arm(FAULT_OP_CONTROL, FAULT_EIO, 3, 1, 0);
    assert_control_failed(keel_db_close(db, &e), e.msg, KEEL_EIO);
    fault_disarm_all();
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(db->found_state, CONTROL_IN_PRODUCTION);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(count_rows(s, NULL, 1, 100), 6);
    assert_int_equal(keel_relation_exists(s, "s1", "u", &found), KEEL_OK);
    assert_true(found);
    row_of(7, v, tb);
    assert_int_equal(keel_insert(s, "s1", "t", v), KEEL_OK);
    assert_int_equal(count_rows(s, NULL, 1, 100), 7);
    finish(dir, db, s, NULL);
}
#endif

/*
 * A control file whose transaction id limit (its CRC right) lies below
 * ids the commit log records as ended: an open would hand those ids out
 * again, and a new transaction would take over an old one's rows (its
 * abort would make them vanish).  The open fails with KEEL_ECORRUPT, the
 * read-only one too; with the limit put back, the rows are all there.
 */
static void test_xid_limit_below_log(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts_for(dir);
    keel_db *db;
    keel_session *s;
    keel_error e;
    control_data c, saved;
    kerr err;

    (void)state;
    setup_db(dir, &db, &s, 5);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    saved = c;
    c.xid_limit = XID_FIRST_NORMAL;
    assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ECORRUPT);
    assert_non_null(strstr(e.msg, "transaction id limit"));
    o.read_only = true;
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ECORRUPT);
    o.read_only = false;
    assert_int_equal(control_write(dir, &saved, &err), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    keel_session_set_lock_timeout(s, TEST_LOCK_MS);
    assert_int_equal(count_rows(s, NULL, 1, 10), 5);
    finish(dir, db, s, NULL);
}

/*
 * A key with more versions than a point search keeps (the last 64; each
 * update leaves the old version in the primary key): lookups still find
 * the visible one, and an older snapshot still finds its own, before
 * those 64.
 */
static void test_lookup_many_versions(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s, *old;
    keel_error e;
    keel_value key = tu_vi4(5), v[9], out[9];
    char tb[32];
    bool found;

    (void)state;
    setup_db(dir, &db, &s, 10);
    assert_int_equal(keel_session_begin(db, &old, &e), KEEL_OK);
    keel_session_set_lock_timeout(old, TEST_LOCK_MS);
    assert_int_equal(keel_begin(old), KEEL_OK);
    assert_int_equal(keel_lookup(old, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    for (int i = 0; i < 100; i++) {
        row_of(5, v, tb);
        v[1].v.i2 = (int16_t)(1000 + i);
        assert_int_equal(keel_update(s, "s1", "t", &key, v), KEEL_OK);
        assert_int_equal(keel_lookup(s, "s1", "t", &key, out, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(out[1].v.i2, 1000 + i);
    }
    /* The transaction that began before the updates sees the original. */
    assert_int_equal(keel_lookup(old, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    check_row(5, out);
    assert_int_equal(keel_commit(old), KEEL_OK);
    finish(dir, db, old, s);
}

/* Fills table s1.<name> (columns id, v int4; pk id) with ids 1..n, v =
 * id * mult, in one transaction. */
static void fill_pair_table(keel_session *s, const char *name, int n, int mult)
{
    static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                       {"v", KEEL_INT4, 0, true}};
    uint16_t pk = 1;
    keel_value v[2];

    assert_int_equal(keel_create_table(s, "s1", name, cols, 2, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int i = 1; i <= n; i++) {
        v[0] = tu_vi4(i);
        v[1] = tu_vi4(i * mult);
        assert_int_equal(keel_insert(s, "s1", name, v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
}

/* Directory builds over the session's directories. */
static uint64_t dir_builds(const keel_session *s)
{
    uint64_t n = 0;

    for (int i = 0; i < ENGINE_SESSION_DIRS; i++)
        if (s->dirs[i] != NULL) {
            btree_dir_stats st;
            btree_dir_stats_get(s->dirs[i], &st);
            n += st.builds;
        }
    return n;
}

/* Looks up id in s1.<name>: found (with v = id * mult) or not. */
static void expect_pair(keel_session *s, const char *name, int id, int mult,
                        bool present)
{
    keel_value key = tu_vi4(id), out[2];
    bool found;

    assert_int_equal(keel_lookup(s, "s1", name, &key, out, &found), KEEL_OK);
    assert_int_equal(found, present);
    if (present) {
        assert_int_equal(out[0].v.i4, id);
        assert_int_equal(out[1].v.i4, id * mult);
    }
}

/*
 * Lookups through the session's index directories: six tables of several
 * leaves each (more indexes than a session keeps directories for), looked
 * up a few hundred at a time in turn (directories change hands) and one
 * at a time in turn (none does: no rebuild on every lookup); one index
 * alone for long (it takes over an idle directory, once); a text key
 * (no directory); a table dropped and made again under the same name;
 * keys added by another session after the directory was built (splits);
 * every answer right.
 */
/* Reads log (a, b) in storage order: the rows' a values summed, and
 * counted, in *sum and *n; each row's b must be 2 * a. */
static void scan_log(keel_session *s, int64_t *sum, int *n)
{
    keel_value out[2];
    keel_scan *sc;
    bool found;

    *sum = 0;
    *n = 0;
    assert_int_equal(keel_scan_begin(s, "s1", "log", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        assert_int_equal(out[1].v.i4, 2 * out[0].v.i4);
        *sum += out[0].v.i4;
        (*n)++;
    }
    keel_scan_end(sc);
}

/* A table without a primary key is scanned in storage order: every row
 * its transaction sees (its own new rows too, not an aborted or a later
 * transaction's), over many pages; bounds are refused, and an index
 * named still works as before. */
static void test_scan_without_primary_key(void **state)
{
    static const keel_column cols[] = {{"a", KEEL_INT4, 0, false},
                                       {"b", KEEL_INT4, 0, false}};
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s, *other;
    keel_error e;
    keel_value v[2], lv = tu_vi4(1);
    keel_bound l = {&lv, 1, true};
    keel_scan *sc = NULL;
    int64_t sum;
    int n;
    enum { ROWS = 3000 };

    (void)state;
    setup_db(dir, &db, &s, 1);
    assert_int_equal(keel_session_begin(db, &other, &e), KEEL_OK);
    keel_session_set_lock_timeout(other, TEST_LOCK_MS);
    assert_int_equal(keel_create_table(s, "s1", "log", cols, 2, NULL, 0),
                     KEEL_OK);
    scan_log(s, &sum, &n);
    assert_int_equal(n, 0);
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int i = 1; i <= ROWS; i++) {
        v[0] = tu_vi4(i);
        v[1] = tu_vi4(2 * i);
        assert_int_equal(keel_insert(s, "s1", "log", v), KEEL_OK);
    }
    /* Its own rows, before it commits; not yet another session's. */
    scan_log(s, &sum, &n);
    assert_int_equal(n, ROWS);
    assert_true(sum == (int64_t)ROWS * (ROWS + 1) / 2);
    scan_log(other, &sum, &n);
    assert_int_equal(n, 0);
    assert_int_equal(keel_commit(s), KEEL_OK);
    /* An aborted row is never seen; a snapshot taken before a commit
     * does not see its rows. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    v[0] = tu_vi4(-5);
    v[1] = tu_vi4(-10);
    assert_int_equal(keel_insert(s, "s1", "log", v), KEEL_OK);
    keel_abort(s);
    assert_int_equal(keel_begin(other), KEEL_OK);
    scan_log(other, &sum, &n);
    assert_int_equal(n, ROWS);
    v[0] = tu_vi4(7);
    v[1] = tu_vi4(14);
    assert_int_equal(keel_insert(s, "s1", "log", v), KEEL_OK);
    scan_log(other, &sum, &n);
    assert_int_equal(n, ROWS);
    assert_true(sum == (int64_t)ROWS * (ROWS + 1) / 2);
    assert_int_equal(keel_commit(other), KEEL_OK);
    scan_log(other, &sum, &n);
    assert_int_equal(n, ROWS + 1);
    assert_true(sum == (int64_t)ROWS * (ROWS + 1) / 2 + 7);
    /* Bounds need an index; the primary-key scan of t is unchanged. */
    assert_int_equal(keel_scan_begin(s, "s1", "log", NULL, &l, NULL, &sc),
                     KEEL_EINVAL);
    assert_null(sc);
    assert_non_null(strstr(keel_session_error(s), "no primary key"));
    assert_int_equal(keel_scan_begin(s, "s1", "log", NULL, NULL, &l, &sc),
                     KEEL_EINVAL);
    assert_int_equal(count_rows(s, NULL, 1, 1), 1);
    finish(dir, db, other, s);
}

/* ---- changes through a scan ------------------------------------------- */

static const keel_column np_cols[] = {{"a", KEEL_INT4, 0, false},
                                      {"b", KEEL_INT4, 0, false}};

/* Inserts (a, b) into s1.np. */
static void np_insert(keel_session *s, int32_t a, int32_t b)
{
    keel_value v[2] = {tu_vi4(a), tu_vi4(b)};

    assert_int_equal(keel_insert(s, "s1", "np", v), KEEL_OK);
}

/* Through a scan of s1.np in s's explicit transaction: the row whose b is
 * `b` deleted (del) or given b `newb`; it must be there. */
static void np_change(keel_session *s, int32_t b, int32_t newb, bool del)
{
    keel_value out[2], v[2];
    keel_scan *sc;
    bool found, done = false;

    assert_int_equal(keel_scan_begin(s, "s1", "np", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    while (!done) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        assert_true(found);
        if (out[1].v.i4 != b)
            continue;
        v[0] = out[0];
        v[1] = tu_vi4(newb);
        assert_int_equal(del ? keel_scan_delete(sc) : keel_scan_update(sc, v),
                         KEEL_OK);
        done = true;
    }
    keel_scan_end(sc);
}

/* The rows of s1.np as s sees them: their count, and the sums of a and
 * of b. */
static int np_rows(keel_session *s, int64_t *suma, int64_t *sumb)
{
    keel_value out[2];
    keel_scan *sc;
    bool found;
    int n = 0;

    *suma = *sumb = 0;
    assert_int_equal(keel_scan_begin(s, "s1", "np", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        *suma += out[0].v.i4;
        *sumb += out[1].v.i4;
        n++;
    }
    keel_scan_end(sc);
    return n;
}

/*
 * keel_scan_update() and keel_scan_delete(): the scan's current row
 * changed, in a table without a primary key (a unique index on b whose
 * key changes) and in one with one (its key changed too); no current
 * row, no explicit transaction and a system catalog are refused.  Under
 * read committed they wait for a running changer and report a committed
 * one's change as keel_update() does: a delete is KEEL_ENOENT, an update
 * KEEL_ECHANGED, after which keel_fetch_changed() returns the newest
 * version and the scan's next change applies to it, until the scan moves
 * on.
 */
static void test_scan_update_delete(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *a, *b;
    keel_error e;
    keel_value v[9], out[9], key;
    keel_scan *sc;
    uint16_t bcol = 2;
    int64_t suma, sumb;
    char tb[32];
    bool found;
    int n;

    (void)state;
    setup_db(dir, &db, &a, 3);
    assert_int_equal(keel_session_begin(db, &b, &e), KEEL_OK);
    keel_session_set_lock_timeout(b, TEST_LOCK_MS);
    assert_int_equal(keel_create_table(a, "s1", "np", np_cols, 2, NULL, 0),
                     KEEL_OK);
    assert_int_equal(keel_create_index(a, "s1", "np", "np_b", &bcol, 1, true),
                     KEEL_OK);
    assert_int_equal(keel_begin(a), KEEL_OK);
    np_insert(a, 1, 10);
    np_insert(a, 1, 11);
    np_insert(a, 2, 20);
    np_insert(a, 3, 30);
    assert_int_equal(keel_commit(a), KEEL_OK);

    /* A scan in its own transaction changes nothing. */
    assert_int_equal(keel_scan_begin(a, "s1", "np", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
    assert_true(found);
    v[0] = tu_vi4(9);
    v[1] = tu_vi4(9);
    assert_int_equal(keel_scan_update(sc, v), KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(a), "keel_begin"));
    assert_int_equal(keel_scan_delete(sc), KEEL_EINVAL);
    keel_scan_end(sc);
    assert_int_equal(keel_scan_update(NULL, v), KEEL_EINVAL);
    /* A system catalog can be scanned, not changed so. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_scan_begin(a, "keel_catalog", "keel_namespace", NULL,
                                     NULL, NULL, &sc),
                     KEEL_OK);
    assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(keel_scan_delete(sc), KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(a), "not a user table"));
    keel_scan_end(sc);
    assert_int_equal(keel_commit(a), KEEL_OK);

    /* Without a primary key. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_scan_begin(a, "s1", "np", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    assert_int_equal(keel_scan_update(sc, v), KEEL_EINVAL);
    assert_non_null(strstr(keel_session_error(a), "no current row"));
    assert_int_equal(keel_scan_delete(sc), KEEL_EINVAL);
    n = 0;
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        n++;
        v[0] = out[0];
        switch (out[1].v.i4) {
        case 10:
            assert_int_equal(keel_scan_delete(sc), KEEL_OK);
            assert_int_equal(keel_scan_delete(sc), KEEL_EINVAL);
            break;
        case 11: /* a row that another of the same a shares */
            v[1] = tu_vi4(12);
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
            break;
        case 20:
            /* Taken by (3, 30): nothing changes, the row stays current. */
            v[1] = tu_vi4(30);
            assert_int_equal(keel_scan_update(sc, v), KEEL_EUNIQUE);
            assert_non_null(strstr(keel_session_error(a), "np_b"));
            v[1] = tu_vi4(21);
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
            assert_int_equal(keel_scan_update(sc, v), KEEL_EINVAL);
            break;
        case 30: /* b's key unchanged */
            v[0] = tu_vi4(33);
            v[1] = out[1];
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
            break;
        default:
            fail_msg("row (%d, %d) met", out[0].v.i4, out[1].v.i4);
        }
    }
    assert_int_equal(n, 4); /* no new version met */
    assert_int_equal(keel_scan_update(sc, v), KEEL_EINVAL);
    assert_int_equal(keel_scan_delete(sc), KEEL_EINVAL);
    keel_scan_end(sc);
    assert_int_equal(np_rows(a, &suma, &sumb), 3);
    assert_true(suma == 1 + 2 + 33 && sumb == 12 + 21 + 30);
    assert_int_equal(np_rows(b, &suma, &sumb), 4); /* not yet committed */
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_int_equal(np_rows(b, &suma, &sumb), 3);
    assert_true(suma == 1 + 2 + 33 && sumb == 12 + 21 + 30);

    /* With a primary key, its key changed too. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_scan_begin(a, "s1", "t", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    n = 0;
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        n++;
        row_of(out[0].v.i4, v, tb);
        if (out[0].v.i4 == 1) {
            v[0] = tu_vi4(10);
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
        } else if (out[0].v.i4 == 2) {
            v[0] = tu_vi4(3); /* taken */
            assert_int_equal(keel_scan_update(sc, v), KEEL_EUNIQUE);
            v[0] = tu_vi4(2);
            v[1].v.i2 = 100;
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
        } else {
            assert_int_equal(keel_scan_delete(sc), KEEL_OK);
        }
    }
    assert_int_equal(n, 3);
    keel_scan_end(sc);
    assert_int_equal(keel_commit(a), KEEL_OK);
    key = tu_vi4(1);
    assert_int_equal(keel_lookup(b, "s1", "t", &key, out, &found), KEEL_OK);
    assert_false(found);
    key = tu_vi4(3);
    assert_int_equal(keel_lookup(b, "s1", "t", &key, out, &found), KEEL_OK);
    assert_false(found);
    key = tu_vi4(10);
    assert_int_equal(keel_lookup(b, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found && out[1].v.i2 == 2);
    key = tu_vi4(2);
    assert_int_equal(keel_lookup(b, "s1", "t", &key, out, &found), KEEL_OK);
    assert_true(found && out[1].v.i2 == 100);
    assert_int_equal(count_rows(b, NULL, 0, 100), 2);

    /* Read committed: b changes the rows a's scan returns, after a's
     * snapshot. */
    assert_int_equal(keel_begin(a), KEEL_OK);
    np_insert(a, 4, 40);
    np_insert(a, 6, 60);
    np_insert(a, 7, 70);
    assert_int_equal(keel_commit(a), KEEL_OK);
    assert_int_equal(keel_set_isolation(a, KEEL_READ_COMMITTED), KEEL_OK);
    assert_int_equal(keel_begin(a), KEEL_OK);
    assert_int_equal(keel_scan_begin(a, "s1", "np", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    n = 0;
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        n++;
        v[0] = out[0];
        assert_int_equal(keel_begin(b), KEEL_OK);
        switch (out[1].v.i4) {
        case 12: /* deleted and committed: nothing to change */
            np_change(b, 12, 0, true);
            assert_int_equal(keel_commit(b), KEEL_OK);
            assert_int_equal(keel_scan_delete(sc), KEEL_ENOENT);
            assert_int_equal(keel_fetch_changed(a, "s1", "np", out, &found),
                             KEEL_EINVAL);
            break;
        case 21: /* updated: the newest version checked and updated */
            np_change(b, 21, 22, false);
            assert_int_equal(keel_commit(b), KEEL_OK);
            v[1] = tu_vi4(99);
            assert_int_equal(keel_scan_update(sc, v), KEEL_ECHANGED);
            assert_int_equal(keel_fetch_changed(a, "s1", "np", out, &found),
                             KEEL_OK);
            assert_true(found && out[0].v.i4 == 2 && out[1].v.i4 == 22);
            v[1] = tu_vi4(out[1].v.i4 + 100);
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
            assert_int_equal(keel_scan_update(sc, v), KEEL_EINVAL);
            break;
        case 30: /* a changer still running: waited for */
            np_change(b, 30, 31, false);
            v[1] = tu_vi4(35);
            assert_int_equal(keel_scan_update(sc, v), KEEL_ELOCKTIMEOUT);
            assert_int_equal(keel_abort(b), KEEL_OK);
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
            break;
        case 40: /* updated: the newest version deleted */
            np_change(b, 40, 41, false);
            assert_int_equal(keel_commit(b), KEEL_OK);
            assert_int_equal(keel_scan_delete(sc), KEEL_ECHANGED);
            assert_int_equal(keel_fetch_changed(a, "s1", "np", out, &found),
                             KEEL_OK);
            assert_true(found && out[1].v.i4 == 41);
            assert_int_equal(keel_scan_delete(sc), KEEL_OK);
            break;
        case 60: /* updated, and left: the scan moves on */
            np_change(b, 60, 61, false);
            assert_int_equal(keel_commit(b), KEEL_OK);
            v[1] = tu_vi4(62);
            assert_int_equal(keel_scan_update(sc, v), KEEL_ECHANGED);
            break;
        case 70: /* the scan's row, not the one followed before */
            assert_int_equal(keel_commit(b), KEEL_OK);
            v[1] = tu_vi4(71);
            assert_int_equal(keel_scan_update(sc, v), KEEL_OK);
            break;
        default:
            fail_msg("row (%d, %d) met", out[0].v.i4, out[1].v.i4);
        }
    }
    assert_int_equal(n, 6);
    keel_scan_end(sc);
    assert_int_equal(keel_commit(a), KEEL_OK);
    /* Left: (2, 122), (33, 35), (6, 61), (7, 71). */
    assert_int_equal(np_rows(b, &suma, &sumb), 4);
    assert_true(suma == 2 + 33 + 6 + 7 && sumb == 122 + 35 + 61 + 71);
    keel_session_end(b);
    keel_session_end(a);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    {
        uint64_t problems = 1, notes = 0;
        assert_int_equal(keel_check(dir, NULL, NULL, &problems, &notes, &e),
                         KEEL_OK);
        assert_int_equal(problems, 0);
    }
    tu_dir_remove(dir);
}

static void test_lookup_directories(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db *db;
    keel_session *s, *other;
    keel_error e;
    char name[16];
    enum { TABLES = ENGINE_SESSION_DIRS + 2, ROWS = 1500 };

    (void)state;
    setup_db(dir, &db, &s, 1);
    for (int t = 0; t < TABLES; t++) {
        snprintf(name, sizeof(name), "p%d", t);
        fill_pair_table(s, name, ROWS, t + 1);
    }
    for (int round = 0; round < 3; round++)
        for (int t = 0; t < TABLES; t++) {
            snprintf(name, sizeof(name), "p%d", t);
            for (int id = round; id <= ROWS + 2; id += 7)
                expect_pair(s, name, id, t + 1, id >= 1 && id <= ROWS);
        }
    /* Each directory was taken over by another index, and used. */
    for (int i = 0; i < ENGINE_SESSION_DIRS; i++) {
        btree_dir_stats st;
        assert_non_null(s->dirs[i]);
        btree_dir_stats_get(s->dirs[i], &st);
        assert_true(st.builds >= 2);
        assert_true(st.uses > 0);
        assert_true(st.entries >= 2);
        assert_int_equal(st.level, 0);
    }

    /* Strictly in turn, more indexes than directories: every directory
     * stays in use, so none is taken over and rebuilt; the indexes
     * without one are searched from the root. */
    {
        uint64_t before = dir_builds(s);
        for (int i = 0; i < 3000; i++) {
            int t = i % TABLES, id = 1 + (i * 37) % ROWS;
            snprintf(name, sizeof(name), "p%d", t);
            expect_pair(s, name, id, t + 1, true);
        }
        assert_int_equal(dir_builds(s), before);
    }
    /* One index alone for longer than ENGINE_DIR_IDLE look-ups: if it had
     * no directory, it takes over the least recently used one, once. */
    {
        uint64_t before = dir_builds(s);
        for (int i = 0; i < 2 * ENGINE_DIR_IDLE; i++)
            expect_pair(s, "p5", 1 + (i * 13) % ROWS, 6, true);
        assert_true(dir_builds(s) <= before + 1);
        for (int i = 0; i < 2 * ENGINE_DIR_IDLE; i++)
            expect_pair(s, "p4", 1 + (i * 13) % ROWS, 5, true);
        assert_true(dir_builds(s) <= before + 2);
    }
    /* A text key cannot use a directory: none is asked for. */
    {
        static const keel_column tcols[] = {{"k", KEEL_TEXT, 0, true}};
        uint16_t pk = 1;
        uint64_t clock;
        keel_value v = tu_vstr("alpha"), out[1];
        bool found;
        assert_int_equal(keel_create_table(s, "s1", "tx", tcols, 1, &pk, 1),
                         KEEL_OK);
        assert_int_equal(keel_insert(s, "s1", "tx", &v), KEEL_OK);
        clock = s->dir_clock;
        assert_int_equal(keel_lookup(s, "s1", "tx", &v, out, &found), KEEL_OK);
        assert_true(found);
        assert_int_equal(s->dir_clock, clock);
    }

    /* Made again: another index under the same names. */
    assert_int_equal(keel_drop_table(s, "s1", "p0"), KEEL_OK);
    fill_pair_table(s, "p0", ROWS / 2, 100);
    for (int id = 0; id <= ROWS; id += 3)
        expect_pair(s, "p0", id, 100, id >= 1 && id <= ROWS / 2);

    /* Another session adds ids past the end and between (ids * 1000 + j):
     * the first session's directory of p1 is stale, its answers not. */
    expect_pair(s, "p1", 10, 2, true);
    assert_int_equal(keel_session_begin(db, &other, &e), KEEL_OK);
    keel_session_set_lock_timeout(other, TEST_LOCK_MS);
    assert_int_equal(keel_begin(other), KEEL_OK);
    for (int id = ROWS + 1; id <= 3 * ROWS; id++) {
        keel_value v[2] = {tu_vi4(id), tu_vi4(id * 2)};
        assert_int_equal(keel_insert(other, "s1", "p1", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(other), KEEL_OK);
    keel_session_end(other);
    for (int id = 1; id <= 3 * ROWS + 1; id++)
        expect_pair(s, "p1", id, 2, id <= 3 * ROWS);

    finish(dir, db, s, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_and_reopen),
        cmocka_unit_test(test_drop_index),
        cmocka_unit_test(test_rename),
        cmocka_unit_test(test_row_nowait),
        cmocka_unit_test(test_read_committed_api),
        cmocka_unit_test(test_unique_waits_for_inserter),
        cmocka_unit_test(test_lookup_many_versions),
        cmocka_unit_test(test_lookup_directories),
        cmocka_unit_test(test_scan_without_primary_key),
        cmocka_unit_test(test_scan_update_delete),
        cmocka_unit_test(test_aborted_ddl),
        cmocka_unit_test(test_drop_table_drops_indexes),
        cmocka_unit_test(test_load_table),
        cmocka_unit_test(test_load_text_key),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_scan_and_transactions),
        cmocka_unit_test(test_create_index_sees_every_row),
        cmocka_unit_test(test_concurrent_sessions),
        cmocka_unit_test(test_drop_schema_against_create),
        cmocka_unit_test(test_drop_table_against_create_index),
        cmocka_unit_test(test_claim_states_pruned),
        cmocka_unit_test(test_success_leaves_no_message),
        cmocka_unit_test(test_index_limit_holds),
        cmocka_unit_test(test_writes_against_index_build),
        cmocka_unit_test(test_build_failures_release_mark),
        cmocka_unit_test(test_concurrent_analyze),
        cmocka_unit_test(test_bad_directories),
        cmocka_unit_test(test_damaged_index_catalog),
        cmocka_unit_test(test_open_once),
        cmocka_unit_test(test_read_only),
        cmocka_unit_test(test_create_where),
        cmocka_unit_test(test_close_removes_unowned_files),
#ifdef KEEL_FAULT_INJECTION
        cmocka_unit_test(test_create_dir_sync_fails),
#endif
        cmocka_unit_test(test_xid_reservation),
#ifdef KEEL_FAULT_INJECTION
        cmocka_unit_test(test_control_write_fails),
#endif
        cmocka_unit_test(test_xid_limit_below_log),
        cmocka_unit_test(test_relation_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
