/*
 * test_sql_parse.c: the session's cache of parse trees (sql_parse.c).
 *
 * A text that reuses a cached tree must get exactly the tree a fresh
 * parse gives: for pairs of texts that differ only in their constants
 * (each constant the same length, so that every position agrees), the
 * second text's tree from the cache is packed and compared byte for byte
 * with a fresh parse of it.  Texts whose constants the grammar does more
 * with than copy must not be served from the cache; results and error
 * positions of texts served from it must be those of the text itself.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keel/keel.h"
#include "sql/sql_internal.h"

typedef struct fixture {
    char *dir;
    keel_db *db;
    sql_session *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    keel_db_options o;
    sql_error err;

    f->dir = tu_mkdtemp();
    keel_db_options_init(&o);
    o.dir = f->dir;
    o.pool_mb = 16;
    assert_int_equal(keel_db_create(&o, NULL), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &f->db, NULL), KEEL_OK);
    assert_int_equal(sql_init(), KEEL_OK);
    assert_int_equal(sql_session_create(f->db, &f->s, &err), KEEL_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    sql_session_destroy(f->s);
    assert_int_equal(keel_db_close(f->db, NULL), KEEL_OK);
    tu_dir_remove(f->dir);
    free(f);
    return 0;
}

/* The tree's protobuf bytes, malloc'd. */
static uint8_t *pack(const PgQuery__ParseResult *t, size_t *len)
{
    uint8_t *b;

    *len = pg_query__parse_result__get_packed_size(t);
    b = malloc(*len ? *len : 1);
    assert_non_null(b);
    assert_int_equal(pg_query__parse_result__pack(t, b), *len);
    return b;
}

/* Parses a through the cache, then b; whether b came from the cache, and
 * if it did, that its tree is a fresh parse's. */
static bool cached_pair(sql_session *s, const char *a, const char *b)
{
    PgQuery__ParseResult *t, *fresh;
    sql_pcache_entry *pin;
    sql_parse_stats before, after;
    uint8_t *x, *y;
    size_t xl, yl;
    sql_error err;

    assert_int_equal(strlen(a), strlen(b));
    s->err = &err;
    s->text = a;
    if (sql_parse_cached(s, a, false, &t, &pin) != KEEL_OK)
        fail_msg("\"%s\" does not parse: %s", a, err.message);
    sql_parse_done(s, t, pin);
    sql_parse_cache_stats(s, &before);
    s->text = b;
    assert_int_equal(sql_parse_cached(s, b, false, &t, &pin), KEEL_OK);
    sql_parse_cache_stats(s, &after);
    if (sql_parse_raw(s, b, &fresh) != KEEL_OK)
        fail_msg("\"%s\" does not parse: %s", b, err.message);
    x = pack(t, &xl);
    y = pack(fresh, &yl);
    if (xl != yl || memcmp(x, y, xl) != 0)
        fail_msg("the cached tree of \"%s\" is not a fresh parse's", b);
    free(x);
    free(y);
    pg_query__parse_result__free_unpacked(fresh, NULL);
    sql_parse_done(s, t, pin);
    s->text = NULL;
    return after.hits == before.hits + 1;
}

/* Texts that differ in constants only, and whether the second is served
 * from the cache. */
static const struct {
    const char *a, *b;
    bool hit;
} pairs[] = {
    {"SELECT abalance FROM pgbench_accounts WHERE aid = 12345;",
     "SELECT abalance FROM pgbench_accounts WHERE aid = 67890;", true},
    {"UPDATE pgbench_accounts SET abalance = abalance + -4321 WHERE aid = 7;",
     "UPDATE pgbench_accounts SET abalance = abalance + -1234 WHERE aid = 8;",
     true},
    {"INSERT INTO h (tid, bid, aid, delta, mtime) VALUES (5, 1, 12, - 456, "
     "CURRENT_TIMESTAMP);",
     "INSERT INTO h (tid, bid, aid, delta, mtime) VALUES (6, 2, 13, - 457, "
     "CURRENT_TIMESTAMP);",
     true},
    {"select 'ab''c', 'x', '' , 1.5, 2e10, .5, 99999999999 from t",
     "select 'xy''z', 'y', '' , 2.5, 3e10, .7, 88888888888 from t", true},
    {"SELECT -2.5, -99999999999, 3 - 4, - -5",
     "SELECT -3.5, -88888888888, 4 - 5, - -6", false},
    {"SELECT -2.5, -99999999999, 3 - 4", "SELECT -3.5, -88888888888, 4 - 5",
     true},
    {"SELECT x FROM t ORDER BY 1 LIMIT 10 OFFSET 5",
     "SELECT x FROM t ORDER BY 2 LIMIT 20 OFFSET 6", true},
    {"SELECT date '2020-01-01', '1 day'::text, CAST('7' AS int)",
     "SELECT date '2021-02-02', '2 day'::text, CAST('8' AS int)", true},
    {"CREATE TABLE t (a varchar(10), b char(4) DEFAULT 'x')",
     "CREATE TABLE t (a varchar(11), b char(5) DEFAULT 'y')", true},
    {"SELECT 1; SELECT 'two' /* 3 */ -- 4\n; SELECT 5",
     "SELECT 6; SELECT 'six' /* 3 */ -- 4\n; SELECT 7", true},
    {"SELECT $1 + 5 FROM t WHERE a IN (1, 2, 3) AND b BETWEEN 4 AND 5",
     "SELECT $1 + 6 FROM t WHERE a IN (7, 8, 9) AND b BETWEEN 1 AND 2", true},
    {"SELECT 'a'\n'b'", "SELECT 'c'\n'd'", false},
    {"SELECT E'a\\n'", "SELECT E'b\\n'", false},
    {"SELECT B'101', X'1f'", "SELECT B'100', X'2f'", false},
    {"SELECT $$abc$$", "SELECT $$abd$$", false},
    {"SELECT 'a\\b', 'c\\'", "SELECT 'd\\e', 'f\\'", true},
    {"SELECT CURRENT_TIMESTAMP(3), 1", "SELECT CURRENT_TIMESTAMP(4), 2", false},
    {"SET lock_timeout = 100", "SET lock_timeout = 200", true},
    {"SELECT 39, 38", "SELECT 06, 05", true},
    {"SELECT 0, 2147483647, 2147483648", "SELECT 1, 2147483646, 2147483649",
     true},
    {"SELECT interval '1' day", "SELECT interval '2' day", true},
    {"SELECT 1::numeric(5, 2)", "SELECT 2::numeric(6, 3)", true},
    {"SELECT float(24) '1'", "SELECT float(25) '1'", false},
    {"COPY t FROM STDIN WITH (DELIMITER ',')", "COPY t FROM STDIN WITH (DELIMITER ';')",
     false},
};

static void test_same_trees(void **state)
{
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        bool hit = cached_pair(f->s, pairs[i].a, pairs[i].b);
        if (hit != pairs[i].hit)
            fail_msg("\"%s\": %s from the cache, expected %s", pairs[i].b,
                     hit ? "served" : "not served",
                     pairs[i].hit ? "served" : "not");
    }
}

/* ---- results through the simple protocol -------------------------------- */

typedef struct capture {
    char buf[4096];
    size_t len;
} capture;

static int on_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    (void)ctx;
    (void)cols;
    (void)n;
    return 0;
}

static int on_row(void *ctx, const char *const *vals, const uint32_t *lens,
                  uint16_t n)
{
    capture *c = ctx;

    for (uint16_t i = 0; i < n; i++) {
        int w = vals[i] == NULL
                    ? snprintf(c->buf + c->len, sizeof(c->buf) - c->len, "%s<null>",
                               i ? "|" : "")
                    : snprintf(c->buf + c->len, sizeof(c->buf) - c->len, "%s%.*s",
                               i ? "|" : "", (int)lens[i], vals[i]);
        c->len += (size_t)w;
    }
    c->len += (size_t)snprintf(c->buf + c->len, sizeof(c->buf) - c->len, "\n");
    assert_true(c->len < sizeof(c->buf));
    return 0;
}

static int on_complete(void *ctx, const char *tag)
{
    (void)ctx;
    (void)tag;
    return 0;
}

/* Runs text; its rows, or "ERROR <sqlstate> <position>". */
static const char *run(sql_session *s, const char *text, capture *c)
{
    sql_sink sink = {.ctx = c, .columns = on_columns, .row = on_row,
                     .complete = on_complete};
    sql_error err;

    c->len = 0;
    c->buf[0] = '\0';
    if (sql_exec_simple(s, text, &sink, &err) != KEEL_OK)
        snprintf(c->buf, sizeof(c->buf), "ERROR %.5s %u", err.sqlstate,
                 err.position);
    return c->buf;
}

static void test_results(void **state)
{
    fixture *f = *state;
    capture c;
    sql_parse_stats st;

    /* The first text of each shape is parsed, the others come from the
     * cache: their own constants, of other lengths, in their results. */
    assert_string_equal(run(f->s, "SELECT 1, 'a', -2, 99999999999", &c),
                        "1|a|-2|99999999999\n");
    assert_string_equal(run(f->s, "SELECT 12345, 'b''cd', -34567, 1234567890123", &c),
                        "12345|b'cd|-34567|1234567890123\n");
    assert_string_equal(run(f->s, "SELECT 0, '', -0, 12345678901", &c),
                        "0||0|12345678901\n");
    sql_parse_cache_stats(f->s, &st);
    assert_int_equal(st.misses, 1);
    assert_int_equal(st.hits, 2);

    /* Errors name positions in the text run, not the one first parsed:
     * "nosuchcol" sits at 12 in the first, 16 in the second. */
    assert_string_equal(run(f->s, "SELECT 1 + nosuchcol", &c), "ERROR 42703 12");
    assert_string_equal(run(f->s, "SELECT 12345 + nosuchcol", &c),
                        "ERROR 42703 16");
    assert_string_equal(run(f->s, "SELECT 'x' || 1/0", &c), "ERROR 22012 0");
    assert_string_equal(run(f->s, "SELECT 'xyz' + 1, 1", &c), "ERROR 22P02 8");
    assert_string_equal(run(f->s, "SELECT 'abcdef' + 1, 1", &c), "ERROR 22P02 8");
    assert_string_equal(run(f->s, "SELECT 'q', 'abcdef' + 1", &c), "ERROR 22P02 13");
    assert_string_equal(run(f->s, "SELECT 'qrs', 'abcdef' + 1", &c),
                        "ERROR 22P02 15");

    /* Off: nothing is kept. */
    assert_string_equal(run(f->s, "SET parse_cache_entries = 0", &c), "");
    assert_string_equal(run(f->s, "SELECT 7, 'z'", &c), "7|z\n");
    assert_string_equal(run(f->s, "SELECT 8, 'y'", &c), "8|y\n");
    sql_parse_cache_stats(f->s, &st);
    assert_int_equal(st.entries, 0);
    assert_string_equal(run(f->s, "SET parse_cache_entries = -1", &c),
                        "ERROR 22023 0");

    /* Two entries: a third shape replaces the least recently used. */
    assert_string_equal(run(f->s, "SET parse_cache_entries = 2", &c), "");
    assert_string_equal(run(f->s, "SELECT 1 AS a", &c), "1\n");
    assert_string_equal(run(f->s, "SELECT 1 AS b", &c), "1\n");
    assert_string_equal(run(f->s, "SELECT 2 AS a", &c), "2\n");
    assert_string_equal(run(f->s, "SELECT 1 AS c", &c), "1\n");
    sql_parse_cache_stats(f->s, &st);
    assert_int_equal(st.entries, 2);
    {
        uint64_t hits = st.hits;
        assert_string_equal(run(f->s, "SELECT 3 AS a", &c), "3\n");
        assert_string_equal(run(f->s, "SELECT 4 AS c", &c), "4\n");
        sql_parse_cache_stats(f->s, &st);
        assert_int_equal(st.hits, hits + 2);
        assert_string_equal(run(f->s, "SELECT 5 AS b", &c), "5\n");
        sql_parse_cache_stats(f->s, &st);
        assert_int_equal(st.hits, hits + 2);
    }
}

/* Prepared statements share the trees of texts without constants, and
 * keep them while they live. */
static void test_prepared(void **state)
{
    fixture *f = *state;
    sql_parse_stats st;
    sql_error err;
    capture c;

    assert_string_equal(run(f->s, "SET parse_cache_entries = 1", &c), "");
    assert_int_equal(sql_parse(f->s, "a", "SELECT -$1::int4", NULL, 0, &err),
                     KEEL_OK);
    assert_int_equal(sql_parse(f->s, "b", "SELECT -$1::int4", NULL, 0, &err),
                     KEEL_OK);
    sql_parse_cache_stats(f->s, &st);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.entries, 1);
    /* Pinned by both: a simple query of another shape cannot replace it,
     * and one with constants is never kept for a prepared statement. */
    assert_string_equal(run(f->s, "SELECT 5", &c), "5\n");
    assert_int_equal(sql_parse(f->s, "c", "SELECT 7", NULL, 0, &err), KEEL_OK);
    sql_parse_cache_stats(f->s, &st);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.hits, 1);
    sql_close(f->s, 'S', "a");
    {
        sql_sink sink = {.ctx = &c, .columns = on_columns, .row = on_row,
                         .complete = on_complete};
        const char *v[1] = {"-42"};
        uint32_t l[1] = {3};
        int16_t fmt[1] = {0};
        bool suspended;
        c.len = 0;
        assert_int_equal(sql_bind(f->s, "", "b", 1, fmt, 1, v, l, 0, NULL, &err),
                         KEEL_OK);
        assert_int_equal(
            sql_execute(f->s, "", 0, false, &sink, &suspended, &err), KEEL_OK);
        assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
        c.buf[c.len] = '\0';
        assert_string_equal(c.buf, "42\n");
    }
    sql_close(f->s, 'S', "b");
    sql_close(f->s, 'S', "c");
    /* Unpinned, it is replaced by the next shape. */
    assert_string_equal(run(f->s, "SELECT 'x'", &c), "x\n");
    sql_parse_cache_stats(f->s, &st);
    assert_int_equal(st.entries, 1);
    assert_string_equal(run(f->s, "SELECT 'yz'", &c), "yz\n");
    sql_parse_cache_stats(f->s, &st);
    assert_int_equal(st.hits, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_same_trees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prepared, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
