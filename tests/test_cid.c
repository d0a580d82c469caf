/*
 * test_cid.c: command ids through the engine API: a statement does not see
 * its own changes, and the next one does.
 *
 * A scan is a command; the row calls made while it is open (in an explicit
 * transaction) are part of it.  So an insert made during a scan is not
 * returned by it, an update of every row the scan returns changes each
 * exactly once, through the primary key or a secondary index whose order
 * the update moves rows forward in (the index scan meets the entries of
 * the new versions, and the heap's visibility check skips them), and a
 * key deleted and inserted again within one transaction is found as its
 * last version.  An abort after many commands leaves nothing.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keel/keel.h"

static const keel_column cols[] = {
    {"id", KEEL_INT4, 0, true},
    {"x", KEEL_INT4, 0, false},
};

/* A database in a fresh directory, table public.t (id primary key, x)
 * holding rows 1..n with x = id, and an index t_x on x. */
static void setup(char **dir, keel_db **db, keel_session **s, int n)
{
    keel_db_options o;
    keel_error e;
    uint16_t pk = 1, xcol = 2;

    *dir = tu_mkdtemp();
    keel_db_options_init(&o);
    o.dir = *dir;
    o.pool_mb = 16;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(*db, s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(*s, NULL, "t", cols, 2, &pk, 1),
                     KEEL_OK);
    assert_int_equal(keel_create_index(*s, NULL, "t", "t_x", &xcol, 1, false),
                     KEEL_OK);
    assert_int_equal(keel_begin(*s), KEEL_OK);
    for (int i = 1; i <= n; i++) {
        keel_value v[2] = {tu_vi4(i), tu_vi4(i)};
        assert_int_equal(keel_insert(*s, NULL, "t", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(*s), KEEL_OK);
}

/* Prints what keel_check() found (nothing, when the test passes). */
static void print_problem(void *ctx, bool note, const char *line)
{
    (void)ctx;
    if (!note)
        printf("keel check: %s\n", line);
}

/* The session ends, the database closes and `keel check` finds its pages
 * (with their command ids and combo flags) sound; then dir goes. */
static void finish(char *dir, keel_db *db, keel_session *s)
{
    keel_error e;
    uint64_t problems = 1;

    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_equal(keel_check(dir, print_problem, NULL, &problems, NULL, &e),
                     KEEL_OK);
    assert_int_equal(problems, 0);
    tu_dir_remove(dir);
}

/* The rows of t in the order of index (NULL: the primary key): their
 * number, and the sums of id and x in *ids and *xs. */
static int scan_all(keel_session *s, const char *index, int64_t *ids,
                    int64_t *xs)
{
    keel_scan *sc;
    keel_value out[2];
    bool found;
    int n = 0;

    *ids = *xs = 0;
    assert_int_equal(keel_scan_begin(s, NULL, "t", index, NULL, NULL, &sc),
                     KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        n++;
        *ids += out[0].v.i4;
        *xs += out[1].v.i4;
    }
    keel_scan_end(sc);
    return n;
}

/* x of the row with key id, or -1 if the transaction sees none. */
static int32_t x_of(keel_session *s, int32_t id)
{
    keel_value k = tu_vi4(id), out[2];
    bool found;

    assert_int_equal(keel_lookup(s, NULL, "t", &k, out, &found), KEEL_OK);
    return found ? out[1].v.i4 : -1;
}

/*
 * An insert made while a scan is open is not seen by the scan, nor by a
 * lookup made during it (both are the scan's command), though the key
 * sorts after every row the scan has left to return; once the scan has
 * ended, the next statement sees it.
 */
static void test_insert_unseen_by_own_command(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *s;
    keel_scan *sc;
    keel_value out[2];
    int64_t ids, xs;
    bool found;
    int n = 0;

    (void)state;
    setup(&dir, &db, &s, 50);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, NULL, "t", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        n++;
        assert_true(out[0].v.i4 <= 50);
        if (out[0].v.i4 == 10) {
            keel_value v[2] = {tu_vi4(1000), tu_vi4(7)};
            assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
            assert_int_equal(x_of(s, 1000), -1);
            /* The unique check sees it all the same. */
            assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_EUNIQUE);
        }
    }
    keel_scan_end(sc);
    assert_int_equal(n, 50);
    assert_int_equal(x_of(s, 1000), 7);
    assert_int_equal(scan_all(s, NULL, &ids, &xs), 51);
    assert_int_equal(scan_all(s, "t_x", &ids, &xs), 51);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(x_of(s, 1000), 7);
    finish(dir, db, s);
}

/*
 * UPDATE t SET x = x + 1000 as a scan that updates each row it returns:
 * through the primary key, and through the index on x, where every new
 * version's entry lands ahead of the scan.  Each row changes once.
 */
static void update_while_scanning(const char *index)
{
    char *dir;
    keel_db *db;
    keel_session *s;
    keel_scan *sc;
    keel_value out[2];
    int64_t ids, xs;
    bool found;
    int n = 0, rows = 300;

    setup(&dir, &db, &s, rows);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, NULL, "t", index, NULL, NULL, &sc),
                     KEEL_OK);
    for (;;) {
        keel_value k, v[2];
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        n++;
        assert_true(out[1].v.i4 <= rows); /* never a new version */
        k = out[0];
        v[0] = out[0];
        v[1] = tu_vi4(out[1].v.i4 + 1000);
        assert_int_equal(keel_update(s, NULL, "t", &k, v), KEEL_OK);
        /* The same row again in this command: changed already. */
        assert_int_equal(keel_update(s, NULL, "t", &k, v), KEEL_ENOENT);
    }
    keel_scan_end(sc);
    assert_int_equal(n, rows);
    assert_int_equal(scan_all(s, NULL, &ids, &xs), rows);
    assert_int_equal(xs, (int64_t)rows * (rows + 1) / 2 + 1000 * rows);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(scan_all(s, "t_x", &ids, &xs), rows);
    assert_int_equal(xs, (int64_t)rows * (rows + 1) / 2 + 1000 * rows);
    assert_int_equal(x_of(s, 1), 1001);
    finish(dir, db, s);
}

static void test_update_all_by_primary_key(void **state)
{
    (void)state;
    update_while_scanning(NULL);
}

static void test_update_all_by_moving_index(void **state)
{
    (void)state;
    update_while_scanning("t_x");
}

/*
 * A key deleted and inserted again, across commands of one transaction,
 * and within one scan's command: each later statement finds the last
 * version, a scan open across the change still returns the row as it
 * was, and after the commit one row with the last values is left.
 */
static void test_delete_reinsert(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *s;
    keel_scan *sc;
    keel_value k = tu_vi4(5), out[2];
    int64_t ids, xs;
    bool found, seen = false;

    (void)state;
    setup(&dir, &db, &s, 10);
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int round = 1; round <= 3; round++) {
        keel_value v[2] = {tu_vi4(5), tu_vi4(100 * round)};
        assert_int_equal(keel_delete(s, NULL, "t", &k), KEEL_OK);
        assert_int_equal(x_of(s, 5), -1);
        assert_int_equal(keel_delete(s, NULL, "t", &k), KEEL_ENOENT);
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
        assert_int_equal(x_of(s, 5), 100 * round);
    }
    /* Within a scan's command: deleted and inserted again before the scan
     * reaches it, the row is returned as the command found it. */
    assert_int_equal(keel_scan_begin(s, NULL, "t", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    for (;;) {
        assert_int_equal(keel_scan_next(sc, out, &found), KEEL_OK);
        if (!found)
            break;
        if (out[0].v.i4 == 1) {
            keel_value v[2] = {tu_vi4(5), tu_vi4(555)};
            assert_int_equal(keel_delete(s, NULL, "t", &k), KEEL_OK);
            assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
        }
        if (out[0].v.i4 == 5) {
            assert_false(seen); /* once, not the new version too */
            assert_int_equal(out[1].v.i4, 300);
            seen = true;
        }
    }
    keel_scan_end(sc);
    assert_true(seen);
    assert_int_equal(x_of(s, 5), 555);
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(scan_all(s, NULL, &ids, &xs), 10);
    assert_int_equal(x_of(s, 5), 555);
    finish(dir, db, s);
}

/*
 * A transaction of many commands (inserts, updates of rows it inserted in
 * earlier commands, which take combo ids, deletes) that aborts leaves the
 * table as it was.
 */
static void test_abort_after_commands(void **state)
{
    char *dir;
    keel_db *db;
    keel_session *s;
    int64_t ids, xs, ids0, xs0;

    (void)state;
    setup(&dir, &db, &s, 20);
    assert_int_equal(scan_all(s, NULL, &ids0, &xs0), 20);
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int i = 21; i <= 220; i++) {
        keel_value v[2] = {tu_vi4(i), tu_vi4(i)};
        assert_int_equal(keel_insert(s, NULL, "t", v), KEEL_OK);
    }
    for (int round = 0; round < 3; round++)
        for (int i = 1; i <= 220; i += 3) {
            keel_value k = tu_vi4(i), v[2] = {tu_vi4(i), tu_vi4(-i - round)};
            assert_int_equal(keel_update(s, NULL, "t", &k, v), KEEL_OK);
            assert_int_equal(x_of(s, i), -i - round);
        }
    for (int i = 2; i <= 220; i += 5) {
        keel_value k = tu_vi4(i);
        assert_int_equal(keel_delete(s, NULL, "t", &k), KEEL_OK);
    }
    assert_int_equal(scan_all(s, NULL, &ids, &xs), 220 - 44);
    assert_int_equal(keel_abort(s), KEEL_OK);
    assert_int_equal(scan_all(s, NULL, &ids, &xs), 20);
    assert_int_equal(ids, ids0);
    assert_int_equal(xs, xs0);
    assert_int_equal(scan_all(s, "t_x", &ids, &xs), 20);
    assert_int_equal(xs, xs0);
    /* And the next transaction's commands start afresh. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    {
        keel_value k = tu_vi4(3), v[2] = {tu_vi4(3), tu_vi4(33)};
        assert_int_equal(keel_update(s, NULL, "t", &k, v), KEEL_OK);
        assert_int_equal(x_of(s, 3), 33);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(x_of(s, 3), 33);
    finish(dir, db, s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_unseen_by_own_command),
        cmocka_unit_test(test_update_all_by_primary_key),
        cmocka_unit_test(test_update_all_by_moving_index),
        cmocka_unit_test(test_delete_reinsert),
        cmocka_unit_test(test_abort_after_commands),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
