/*
 * test_catalog.c: the catalogs: self-description after bootstrap, lookups
 * through the indexes, DDL rows surviving reopen, invalidations recorded
 * at commit only, statistics written by analyze.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

static void test_catalog_rows(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    keel_db *db;
    keel_session *s;
    keel_error e;
    catalog_txn ct;
    catalog_relation r;
    catalog_attribute atts[16];
    catalog_indexdef ix[4];
    catalog_statistic st[8];
    inval_reader rd;
    inval_msg msgs[64];
    uint32_t n;
    uint16_t pk = 1;
    keel_column cols[2] = {{"k", KEEL_INT4, 0, true},
                           {"v", KEEL_TEXT, 0, false}};

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 4;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);

    /* The catalogs describe themselves. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(engine_catalog_txn(s, false, &ct), KEEL_OK);
    assert_int_equal(catalog_relation_by_name(db->cat, &ct, "keel_class",
                                              NAMESPACE_CATALOG, &r),
                     KEEL_OK);
    assert_int_equal(r.oid, CATALOG_CLASS_OID);
    assert_int_equal(r.natts, 8);
    assert_int_equal(
        catalog_attributes(db->cat, &ct, CATALOG_CLASS_OID, atts, 16, &n),
        KEEL_OK);
    assert_int_equal(n, 8);
    assert_string_equal(atts[1].name, "name");
    assert_int_equal(atts[1].type, KEEL_NAME);
    assert_int_equal(
        catalog_indexes_of(db->cat, &ct, CATALOG_CLASS_OID, ix, 4, &n),
        KEEL_OK);
    assert_int_equal(n, 2);
    assert_int_equal(
        catalog_relation_by_name(db->cat, &ct, "nope", NAMESPACE_PUBLIC, &r),
        KEEL_ENOENT);
    keel_abort(s);

    /* DDL records invalidations at commit, none at abort. */
    inval_reader_init(db->inval, &rd);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_create_schema(s, "x"), KEEL_OK);
    keel_abort(s);
    assert_false(inval_has_news(db->inval, &rd));
    assert_int_equal(keel_create_table(s, NULL, "kv", cols, 2, &pk, 1),
                     KEEL_OK);
    assert_int_equal(inval_read(db->inval, &rd, msgs, 64, &n), INVAL_MESSAGES);
    /* class (2 keys) x 2 rows, attribute 2 x 2, index 2 */
    assert_int_equal(n, 10);

    /* Analyze writes statistics. */
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int i = 0; i < 20; i++) {
        keel_value v[2];
        v[0].isnull = false;
        v[0].v.i4 = i;
        v[1].isnull = i % 4 == 0;
        v[1].v.s.ptr = i % 2 ? "odd" : "even";
        v[1].v.s.len = i % 2 ? 3 : 4;
        assert_int_equal(keel_insert(s, NULL, "kv", v), KEEL_OK);
    }
    assert_int_equal(keel_commit(s), KEEL_OK);
    assert_int_equal(keel_analyze(s, NULL, "kv"), KEEL_OK);
    assert_int_equal(keel_analyze(s, NULL, "kv"), KEEL_OK); /* replaces */
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    /* After reopen: the table's rows are all in the catalogs. */
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(engine_catalog_txn(s, false, &ct), KEEL_OK);
    assert_int_equal(
        catalog_relation_by_name(db->cat, &ct, "kv", NAMESPACE_PUBLIC, &r),
        KEEL_OK);
    assert_true(r.oid >= CATALOG_FIRST_USER_OID);
    assert_int_equal(r.tuples, 20);
    assert_true(r.pages >= 1);
    assert_int_equal(catalog_relation_by_oid(db->cat, &ct, r.oid, &r), KEEL_OK);
    assert_string_equal(r.name, "kv");
    assert_int_equal(catalog_attributes(db->cat, &ct, r.oid, atts, 16, &n),
                     KEEL_OK);
    assert_int_equal(n, 2);
    assert_string_equal(atts[0].name, "k");
    assert_true(atts[0].notnull);
    assert_string_equal(atts[1].name, "v");
    assert_int_equal(atts[1].type, KEEL_TEXT);
    assert_int_equal(catalog_indexes_of(db->cat, &ct, r.oid, ix, 4, &n),
                     KEEL_OK);
    assert_int_equal(n, 1);
    assert_true(ix[0].primary && ix[0].unique);
    assert_int_equal(ix[0].nkeys, 1);
    assert_int_equal(ix[0].keys[0], 1);
    assert_int_equal(catalog_statistics_of(db->cat, &ct, r.oid, st, 8, &n),
                     KEEL_OK);
    assert_int_equal(n, 2);
    assert_true(st[0].nullfrac == 0.0);
    assert_true(st[0].ndistinct == 20.0);
    assert_true(st[1].nullfrac == 0.25);
    assert_true(st[1].ndistinct == 2.0);
    assert_int_equal(st[1].nmcv, 2);
    assert_string_equal(st[1].mcv[0], "odd"); /* 10 odd, 5 even */
    assert_true(st[1].mcf[0] == 0.5);
    keel_abort(s);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/* Review: nested catalog reads through one spare, and a spare reused after
 * a scan stopped early or failed in its callback. */
typedef struct nest {
    catalog *c;
    catalog_txn *ct;
    uint32_t outer, inner, fail_at;
} nest;

static int nest_inner(void *arg, const heap_row *row, bool *stop)
{
    (void)row;
    (void)stop;
    ((nest *)arg)->inner++;
    return KEEL_OK;
}

static int nest_outer(void *arg, const heap_row *row, bool *stop)
{
    nest *n = arg;
    keel_value key = row->values[0]; /* keel_class.oid */
    int rc;

    (void)stop;
    if (++n->outer == n->fail_at)
        return kerr_set(&n->ct->bs->err, KEEL_EIO, "injected");
    rc = catalog_index_scan(n->c, n->ct, CAT_ATTRIBUTE, 0, &key, 1, nest_inner,
                            n);
    /* the outer row must be intact after the nested read */
    assert_int_equal(row->values[0].v.oid, key.v.oid);
    return rc;
}

static int stop_first(void *arg, const heap_row *row, bool *stop)
{
    (void)row;
    ((nest *)arg)->outer++;
    *stop = true;
    return KEEL_OK;
}

static void test_spare_nested(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    keel_db *db;
    keel_session *s;
    keel_error e;
    catalog_txn ct;
    catalog_spare sp;
    nest plain = {0}, spare = {0};

    (void)state;
    memset(&sp, 0, sizeof(sp));
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 4;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(engine_catalog_txn(s, false, &ct), KEEL_OK);

    plain.c = spare.c = db->cat;
    plain.ct = spare.ct = &ct;
    assert_int_equal(catalog_index_scan(db->cat, &ct, CAT_CLASS, 0, NULL, 0,
                                        nest_outer, &plain),
                     KEEL_OK);
    assert_true(plain.outer > 3 && plain.inner > 3);
    ct.spare = &sp;
    for (int round = 0; round < 3; round++) {
        spare.outer = spare.inner = 0;
        assert_int_equal(catalog_index_scan(db->cat, &ct, CAT_CLASS, 0, NULL, 0,
                                            nest_outer, &spare),
                         KEEL_OK);
        assert_int_equal(spare.outer, plain.outer);
        assert_int_equal(spare.inner, plain.inner);
        assert_false(sp.row_busy);
        assert_non_null(sp.scan);
    }
    /* a failing callback releases the spare */
    spare.outer = spare.inner = 0;
    spare.fail_at = 3;
    assert_int_equal(catalog_index_scan(db->cat, &ct, CAT_CLASS, 0, NULL, 0,
                                        nest_outer, &spare),
                     KEEL_EIO);
    assert_false(sp.row_busy);
    /* a scan stopped at its first row, then a whole-index scan again */
    spare.outer = 0;
    assert_int_equal(catalog_index_scan(db->cat, &ct, CAT_ATTRIBUTE, 0, NULL, 0,
                                        stop_first, &spare),
                     KEEL_OK);
    assert_int_equal(spare.outer, 1);
    spare.outer = spare.inner = 0;
    spare.fail_at = 0;
    assert_int_equal(catalog_index_scan(db->cat, &ct, CAT_CLASS, 0, NULL, 0,
                                        nest_outer, &spare),
                     KEEL_OK);
    assert_int_equal(spare.outer, plain.outer);
    assert_int_equal(spare.inner, plain.inner);
    catalog_spare_free(&sp);
    keel_abort(s);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_rows),
        cmocka_unit_test(test_spare_nested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
