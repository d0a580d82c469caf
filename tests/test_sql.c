/*
 * test_sql.c: SQL sessions through sql.h, as the wire protocol drives
 * them: each query's results are rendered the way a client would print
 * them (column names and types, then rows with | between values, NULL
 * as an empty field, then the command tag), and compared with what
 * PostgreSQL answers for the same query; errors by SQLSTATE, message and
 * position; transaction blocks by their status letter.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keel/keel.h"
#include "port/clock.h"
#include "sql/sql.h"

/* What a client saw of one query. */
typedef struct capture {
    char buf[16384];
    size_t len;
} capture;

static void put(capture *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void put(capture *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    c->len += (size_t)vsnprintf(c->buf + c->len, sizeof(c->buf) - c->len, fmt, ap);
    va_end(ap);
    assert_true(c->len < sizeof(c->buf));
}

static int on_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++)
        put(ctx, "%s%s:%u", i > 0 ? "," : "", cols[i].name, cols[i].type);
    put(ctx, "\n");
    return 0;
}

static int on_row(void *ctx, const char *const *vals, const uint32_t *lens,
                  uint16_t n)
{
    for (uint16_t i = 0; i < n; i++) {
        if (i > 0)
            put(ctx, "|");
        capture *c = ctx;
        if (vals[i] == NULL) {
            put(ctx, "<null>");
        } else {
            /* Bytes as they come: binary values hold NULs. */
            assert_true(c->len + lens[i] < sizeof(c->buf));
            memcpy(c->buf + c->len, vals[i], lens[i]);
            c->len += lens[i];
            c->buf[c->len] = '\0';
        }
    }
    put(ctx, "\n");
    return 0;
}

static int on_complete(void *ctx, const char *tag)
{
    put(ctx, "%s\n", tag);
    return 0;
}

static int on_notice(void *ctx, const char *severity, const char *sqlstate,
                     const char *message)
{
    put(ctx, "%s %s: %s\n", severity, sqlstate, message);
    return 0;
}

static int on_empty(void *ctx)
{
    put(ctx, "EMPTY\n");
    return 0;
}

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

/* Runs text; returns what the client saw, an error rendered as
 * "ERROR <sqlstate>: <message>" (and " at <position>" when there is
 * one), in a static buffer. */
static const char *run_into(sql_session *s, const char *text, capture *cp)
{
    capture *c = cp;
    sql_sink sink = {.ctx = c, .columns = on_columns, .row = on_row,
                     .complete = on_complete, .notice = on_notice,
                     .empty = on_empty};
    sql_error err;

    c->len = 0;
    c->buf[0] = '\0';
    if (sql_exec_simple(s, text, &sink, &err) != KEEL_OK) {
        put(c, "%s %s: %s", err.severity, err.sqlstate, err.message);
        if (err.position > 0)
            put(c, " at %u", err.position);
        put(c, "\n");
    }
    return c->buf;
}

static const char *run(sql_session *s, const char *text)
{
    static capture c;

    return run_into(s, text, &c);
}

#define EXPECT(s, text, want) assert_string_equal(run(s, text), want)

static void test_constants(void **state)
{
    fixture *f = *state;

    EXPECT(f->s, "SELECT 1",
           "?column?:23\n1\nSELECT 1\n");
    EXPECT(f->s, "select 1 + 2 * 3 as x, 'ab' || 'c', true, null, -7 / 2, 7 % 3",
           "x:23,?column?:25,bool:16,?column?:25,?column?:23,?column?:23\n"
           "7|abc|t|<null>|-3|1\nSELECT 1\n");
    EXPECT(f->s, "SELECT 2.5::float8 * 2, 1e300::float8 * 10 > 0, 0.1::float8",
           "?column?:701,?column?:16,float8:701\n5|t|0.1\nSELECT 1\n");
    EXPECT(f->s, "SELECT 10000000000, 2147483647 + 1",
           "ERROR 22003: integer out of range\n");
    EXPECT(f->s, "SELECT 10000000000 + 1",
           "?column?:20\n10000000001\nSELECT 1\n");
    EXPECT(f->s, "SELECT '42'::int, 'yes'::boolean, 'x'::char(3) || '|'",
           "int4:23,bool:16,?column?:25\n42|t|x|\nSELECT 1\n");
    EXPECT(f->s, "SELECT 1 WHERE false", "?column?:23\nSELECT 0\n");
    /* random() is the session's own sequence, new at every call. */
    EXPECT(f->s, "SELECT random() >= 0 AND random() < 1, random() <> random()",
           "?column?:16,?column?:16\nt|t\nSELECT 1\n");
    /* Three-valued logic. */
    EXPECT(f->s,
           "SELECT null = 1, null OR true, null AND false, NOT (null::bool), "
           "null IS NULL, 1 IN (2, null), 1 IN (1, null), 2 NOT IN (1, null)",
           "?column?:16,?column?:16,?column?:16,?column?:16,?column?:16,"
           "?column?:16,?column?:16,?column?:16\n"
           "<null>|t|f|<null>|t|<null>|t|<null>\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END, "
           "CASE 3 WHEN 1 THEN 10 WHEN 3 THEN 30 END, coalesce(null, 5), "
           "5 BETWEEN 1 AND 5, 'abc' LIKE 'a%', 'abc' LIKE '_b', "
           "length('héllo'), upper('abc')",
           "case:25,case:23,coalesce:23,?column?:16,?column?:16,?column?:16,"
           "length:23,upper:25\nb|30|5|t|t|f|5|ABC\nSELECT 1\n");
}

static void test_errors(void **state)
{
    fixture *f = *state;

    EXPECT(f->s, "SELEC 1",
           "ERROR 42601: syntax error at or near \"SELEC\" at 1\n");
    EXPECT(f->s, "SELECT 1/0", "ERROR 22012: division by zero\n");
    EXPECT(f->s, "SELECT * FROM nosuch",
           "ERROR 42P01: relation \"nosuch\" does not exist at 15\n");
    EXPECT(f->s, "SELECT 'x'::int",
           "ERROR 22P02: invalid input syntax for type integer: \"x\" at 8\n");
    EXPECT(f->s, "SELECT 1 + 'a'::text",
           "ERROR 42883: operator does not exist: integer + text at 10\n");
    EXPECT(f->s, "SELECT 1.5", "?column?:1700\n1.5\nSELECT 1\n");
    EXPECT(f->s, "SELECT 1.5 / 0", "ERROR 22012: division by zero\n");
    EXPECT(f->s, "SELECT 'x1'::numeric",
           "ERROR 22P02: invalid input syntax for type numeric: \"x1\" at 8\n");
    EXPECT(f->s, "SELECT 'Infinity'::numeric",
           "ERROR 0A000: numeric infinity is not supported yet at 8\n");
    EXPECT(f->s, "SELECT 1.5::numeric(2,1) * 100::numeric(2,0)",
           "ERROR 22003: numeric field overflow\n");
    EXPECT(f->s, "SELECT to_char(interval '1 day', 'DD')",
           "ERROR 0A000: to_char() of intervals is not supported yet at 8\n");
    EXPECT(f->s, "SELECT to_char(1.5, '9.9EEEE')",
           "ERROR 0A000: to_char() number patterns EEEE, RN, TH, V and L is "
           "not supported yet\n");
    EXPECT(f->s, "SELECT regexp_replace('a', '(', 'x')",
           "ERROR 2201B: invalid regular expression: Unmatched ( or \\(\n");
    EXPECT(f->s, "SELECT sqrt(2.0)",
           "ERROR 0A000: sqrt() of numeric is not supported yet at 8\n");
    EXPECT(f->s, "SELECT nosuchfunc(1)",
           "ERROR 42883: function nosuchfunc(integer) does not exist at 8\n");
    EXPECT(f->s, "SELECT nosuchfunc(1, 'a', now(), NULL::text)",
           "ERROR 42883: function nosuchfunc(integer, unknown, timestamp with "
           "time zone, text) does not exist at 8\n");
    EXPECT(f->s, "LISTEN x",
           "ERROR 0A000: statement listen_stmt is not supported yet\n");
    EXPECT(f->s, "", "EMPTY\n");
    EXPECT(f->s, ";;", "EMPTY\n");
}

static void test_blocks(void **state)
{
    fixture *f = *state;

    assert_int_equal(sql_txn_status(f->s), 'I');
    EXPECT(f->s, "BEGIN", "BEGIN\n");
    assert_int_equal(sql_txn_status(f->s), 'T');
    EXPECT(f->s, "BEGIN",
           "WARNING 25001: there is already a transaction in progress\nBEGIN\n");
    EXPECT(f->s, "SELECT 1/0", "ERROR 22012: division by zero\n");
    assert_int_equal(sql_txn_status(f->s), 'E');
    EXPECT(f->s, "SELECT 1",
           "ERROR 25P02: current transaction is aborted, commands ignored "
           "until end of transaction block\n");
    EXPECT(f->s, "COMMIT", "ROLLBACK\n");
    assert_int_equal(sql_txn_status(f->s), 'I');
    EXPECT(f->s, "ROLLBACK",
           "WARNING 25P01: there is no transaction in progress\nROLLBACK\n");
    EXPECT(f->s, "SAVEPOINT a",
           "ERROR 25P01: SAVEPOINT can only be used in transaction blocks\n");
    /* A rollback to a savepoint opens a failed block again; one set
     * before a schema change is refused, and the block stays failed. */
    EXPECT(f->s, "BEGIN; SAVEPOINT a; SELECT 1/0",
           "BEGIN\nSAVEPOINT\nERROR 22012: division by zero\n");
    assert_int_equal(sql_txn_status(f->s), 'E');
    EXPECT(f->s, "ROLLBACK TO a", "ROLLBACK\n");
    assert_int_equal(sql_txn_status(f->s), 'T');
    EXPECT(f->s, "CREATE TABLE sp_later (x int); ROLLBACK TO a",
           "CREATE TABLE\nERROR 0A000: the transaction changed the schema "
           "(or statistics) since the savepoint, which a rollback to a "
           "savepoint cannot take back: it can only be rolled back\n");
    assert_int_equal(sql_txn_status(f->s), 'E');
    EXPECT(f->s, "ROLLBACK TO a",
           "ERROR 3B001: savepoint \"a\" does not exist\n");
    EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
    EXPECT(f->s, "SELECT count(*) FROM pg_class WHERE relname = 'sp_later'",
           "count:20\n0\nSELECT 1\n");
    EXPECT(f->s, "BEGIN ISOLATION LEVEL SERIALIZABLE",
           "ERROR 0A000: isolation level serializable is not supported yet "
           "at 7\n");
    EXPECT(f->s, "START TRANSACTION ISOLATION LEVEL REPEATABLE READ; END",
           "BEGIN\nCOMMIT\n");
}

static void test_tables(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL, "
           "c char(3), f double precision, b boolean)",
           "CREATE TABLE\n");
    EXPECT(f->s, "CREATE TABLE t (x int)",
           "ERROR 42P07: relation \"t\" already exists\n");
    EXPECT(f->s, "CREATE TABLE IF NOT EXISTS t (x int)",
           "NOTICE 42P07: relation \"t\" already exists, skipping\n"
           "CREATE TABLE\n");
    EXPECT(f->s,
           "INSERT INTO t VALUES (1, 'one', 'a', 1.5::float8, true), "
           "(2, 'two', null, null, false); "
           "INSERT INTO t (name, id) VALUES ('three', 3)",
           "INSERT 0 2\nINSERT 0 1\n");
    EXPECT(f->s, "SELECT * FROM t ORDER BY id DESC",
           "id:23,name:25,c:1042,f:701,b:16\n"
           "3|three|<null>|<null>|<null>\n"
           "2|two|<null>|<null>|f\n"
           "1|one|a  |1.5|t\n"
           "SELECT 3\n");
    EXPECT(f->s, "SELECT name FROM t WHERE id = 2", "name:25\ntwo\nSELECT 1\n");
    EXPECT(f->s, "SELECT id FROM t WHERE id >= 2 AND id < 3 OR name = 'one'",
           "id:23\n1\n2\nSELECT 2\n");
    EXPECT(f->s, "SELECT t.id, f IS NULL FROM t WHERE b IS NOT NULL ORDER BY 1",
           "id:23,?column?:16\n1|f\n2|t\nSELECT 2\n");
    EXPECT(f->s, "SELECT id FROM t ORDER BY name LIMIT 2 OFFSET 1",
           "id:23\n3\n2\nSELECT 2\n");
    EXPECT(f->s, "SELECT id FROM t LIMIT 1", "id:23\n1\nSELECT 1\n");
    /* Errors a row causes. */
    EXPECT(f->s, "INSERT INTO t VALUES (1, 'again')",
           "ERROR 23505: duplicate key value violates unique constraint "
           "\"t_pkey\"\n");
    EXPECT(f->s, "INSERT INTO t VALUES (4, null)",
           "ERROR 23502: null value in column \"name\" of relation \"t\" "
           "violates not-null constraint\n");
    EXPECT(f->s, "INSERT INTO t (id, name, c) VALUES (4, 'x', 'abcd')",
           "ERROR 22001: value too long for type character(3)\n");
    EXPECT(f->s, "INSERT INTO t (id, name) VALUES ('x', 'y')",
           "ERROR 22P02: invalid input syntax for type integer: \"x\" at 34\n");
    EXPECT(f->s, "SELECT nosuch FROM t",
           "ERROR 42703: column \"nosuch\" does not exist at 8\n");
    /* A statement never meets the versions it wrote: moving every key
     * forward changes each row once. */
    EXPECT(f->s, "UPDATE t SET id = id + 10 WHERE id > 0", "UPDATE 3\n");
    EXPECT(f->s, "SELECT id FROM t ORDER BY id", "id:23\n11\n12\n13\nSELECT 3\n");
    EXPECT(f->s, "UPDATE t SET name = name || '!' WHERE id = 12", "UPDATE 1\n");
    EXPECT(f->s, "DELETE FROM t WHERE name LIKE '%!'", "DELETE 1\n");
    EXPECT(f->s, "SELECT id, name FROM t ORDER BY id",
           "id:23,name:25\n11|one\n13|three\nSELECT 2\n");
    /* A message outside a block is one transaction: all or nothing. */
    EXPECT(f->s, "INSERT INTO t (id, name) VALUES (20, 'x'); SELECT 1/0",
           "INSERT 0 1\nERROR 22012: division by zero\n");
    EXPECT(f->s, "SELECT id FROM t WHERE id = 20", "id:23\nSELECT 0\n");
    /* Indexes, analyze, vacuum, drop. */
    EXPECT(f->s, "CREATE UNIQUE INDEX t_name ON t (name)", "CREATE INDEX\n");
    EXPECT(f->s, "INSERT INTO t (id, name) VALUES (30, 'one')",
           "ERROR 23505: duplicate key value violates unique constraint "
           "\"t_name\"\n");
    EXPECT(f->s, "ANALYZE t", "ANALYZE\n");
    EXPECT(f->s, "VACUUM t",
           "NOTICE 00000: VACUUM does no work in keel: its heap prunes dead "
           "versions from a page as it is read\nVACUUM\n");
    EXPECT(f->s, "BEGIN; VACUUM t",
           "BEGIN\nERROR 25001: VACUUM cannot run inside a transaction block\n");
    EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
    EXPECT(f->s, "CREATE TABLE u (a int DEFAULT 5, b int CHECK (b > 0))",
           "CREATE TABLE\n");
    EXPECT(f->s, "INSERT INTO u (b) VALUES (0)",
           "ERROR 23514: new row for relation \"u\" violates check "
           "constraint \"u_b_check\"\n");
    EXPECT(f->s, "INSERT INTO u (b) VALUES (NULL), (1) RETURNING a, b",
           "a:23,b:23\n5|<null>\n5|1\nINSERT 0 2\n");
    EXPECT(f->s, "DROP TABLE u", "DROP TABLE\n");
    EXPECT(f->s, "DROP TABLE t; DROP TABLE IF EXISTS t",
           "DROP TABLE\nNOTICE 00000: table \"t\" does not exist, skipping\n"
           "DROP TABLE\n");
    EXPECT(f->s, "DROP TABLE t",
           "ERROR 42P01: table \"t\" does not exist\n");
    /* DDL is transactional. */
    EXPECT(f->s, "BEGIN; CREATE TABLE v (a int); ROLLBACK; SELECT * FROM v",
           "BEGIN\nCREATE TABLE\nROLLBACK\n"
           "ERROR 42P01: relation \"v\" does not exist at 56\n");
    /* OWNER TO another role than the one connected: keel keeps none */
    EXPECT(f->s, "CREATE ROLE own2", "CREATE ROLE\n");
    EXPECT(f->s, "CREATE TABLE owned (a int)", "CREATE TABLE\n");
    EXPECT(f->s, "ALTER TABLE owned OWNER TO own2",
           "ERROR 0A000: owners other than the connected user is not "
           "supported yet\n");
    EXPECT(f->s, "DROP TABLE owned; DROP ROLE own2",
           "DROP TABLE\nDROP ROLE\n");
}

static void test_settings(void **state)
{
    fixture *f = *state;
    sql_error err;

    assert_int_equal(sql_set_startup(f->s, "application_name", "app", &err),
                     KEEL_OK);
    assert_int_not_equal(sql_set_startup(f->s, "nosuch", "1", &err), KEEL_OK);
    assert_string_equal(err.sqlstate, "42704");
    assert_int_not_equal(
        sql_set_startup(f->s, "client_encoding", "LATIN1", &err), KEEL_OK);
    assert_string_equal(err.sqlstate, "22023");
    EXPECT(f->s, "SHOW application_name",
           "application_name:25\napp\nSHOW\n");
    EXPECT(f->s, "SET application_name = 'other'; SHOW application_name",
           "SET\napplication_name:25\nother\nSHOW\n");
    EXPECT(f->s, "RESET application_name; SELECT current_setting('application_name')",
           "RESET\ncurrent_setting:25\napp\nSELECT 1\n");
    EXPECT(f->s, "SET nosuch = 1",
           "ERROR 42704: unrecognized configuration parameter \"nosuch\"\n");
    EXPECT(f->s, "SET server_version = '1'",
           "ERROR 55P02: parameter \"server_version\" cannot be changed\n");
    EXPECT(f->s, "SET catalog_cache_memory_target = -5",
           "ERROR 22023: invalid value for parameter "
           "\"catalog_cache_memory_target\": \"-5\"\n");
    EXPECT(f->s, "SET catalog_cache_memory_target = 1024; "
                 "SHOW catalog_cache_memory_target",
           "SET\ncatalog_cache_memory_target:25\n1024\nSHOW\n");
    EXPECT(f->s, "SET synchronous_commit = off; SHOW synchronous_commit",
           "SET\nsynchronous_commit:25\noff\nSHOW\n");
    EXPECT(f->s, "SET synchronous_commit = sometimes",
           "ERROR 22023: invalid value for parameter \"synchronous_commit\": "
           "\"sometimes\"\n");
    EXPECT(f->s, "SHOW server_version",
           "server_version:25\n15.0 (keel " KEEL_VERSION_STRING ")\nSHOW\n");
}

static void test_aggregates(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "CREATE TABLE g (id int PRIMARY KEY, k text, v int, w float8); "
           "INSERT INTO g VALUES (1, 'a', 10, 1), (2, 'b', 20, 2), "
           "(3, 'a', null, 3), (4, 'c', 5, null), (5, 'b', 1, 0.5::float8)",
           "CREATE TABLE\nINSERT 0 5\n");
    EXPECT(f->s, "SELECT count(*), count(v), sum(v), min(v), max(k), avg(w) "
                 "FROM g",
           "count:20,count:20,sum:20,min:23,max:25,avg:701\n"
           "5|4|36|1|c|1.625\nSELECT 1\n");
    EXPECT(f->s, "SELECT k, count(*), sum(v) FROM g GROUP BY k ORDER BY k",
           "k:25,count:20,sum:20\na|2|10\nb|2|21\nc|1|5\nSELECT 3\n");
    EXPECT(f->s, "SELECT k, sum(v) AS s FROM g GROUP BY 1 "
                 "HAVING count(*) > 1 ORDER BY s DESC",
           "k:25,s:20\nb|21\na|10\nSELECT 2\n");
    /* No rows: one group without GROUP BY, none with it. */
    EXPECT(f->s, "SELECT count(*), sum(v), max(v) FROM g WHERE id > 100",
           "count:20,sum:20,max:23\n0|<null>|<null>\nSELECT 1\n");
    EXPECT(f->s, "SELECT k, count(*) FROM g WHERE id > 100 GROUP BY k",
           "k:25,count:20\nSELECT 0\n");
    EXPECT(f->s, "SELECT count(*)", "count:20\n1\nSELECT 1\n");
    /* Grouping by an output column's expression, by position or by its
     * name. */
    EXPECT(f->s,
           "SELECT CASE WHEN v > 9 THEN 'big' ELSE 'small' END AS size, "
           "count(*) FROM g GROUP BY 1 ORDER BY 1",
           "size:25,count:20\nbig|2\nsmall|3\nSELECT 2\n");
    EXPECT(f->s, "SELECT coalesce(v, -1) AS cv, count(*) FROM g GROUP BY cv "
                 "ORDER BY cv",
           "cv:23,count:20\n-1|1\n1|1\n5|1\n10|1\n20|1\nSELECT 5\n");
    EXPECT(f->s, "SELECT count(*) FROM g GROUP BY v + 1 ORDER BY 1",
           "count:20\n1\n1\n1\n1\n1\nSELECT 5\n");
    EXPECT(f->s, "SELECT (v + 1) * 2 AS w FROM g GROUP BY v + 1 ORDER BY w",
           "w:23\n4\n12\n22\n42\n<null>\nSELECT 5\n");
    EXPECT(f->s, "SELECT DISTINCT k FROM g ORDER BY k DESC",
           "k:25\nc\nb\na\nSELECT 3\n");
    EXPECT(f->s, "SELECT k, v FROM g GROUP BY k",
           "ERROR 42803: column \"g.v\" must appear in the GROUP BY clause or "
           "be used in an aggregate function at 11\n");
    EXPECT(f->s, "SELECT id FROM g WHERE count(*) > 1",
           "ERROR 42803: aggregate functions are not allowed in WHERE at 24\n");
    /* sum(bigint) and avg of integers are numeric, as in PostgreSQL. */
    EXPECT(f->s, "SELECT sum(id::bigint), sum(id::bigint) > 14.5 FROM g",
           "sum:1700,?column?:16\n15|t\nSELECT 1\n");
    EXPECT(f->s, "SELECT avg(v) FROM g",
           "avg:1700\n9.0000000000000000\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT sum(CASE WHEN id > 0 THEN 9223372036854775807 END) FROM g",
           "sum:1700\n46116860184273879035\nSELECT 1\n");
}

static void test_datetime(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "SELECT '2026-12-06 16:05:03.25'::timestamp, "
           "'2024-02-29'::date, '1999-12-31 23:59:59+02'::timestamptz, "
           "'2000-01-01T00:00:00.0000005Z'::timestamptz",
           "timestamp:1114,date:1082,timestamptz:1184,timestamptz:1184\n"
           "2026-12-06 16:05:03.25|2024-02-29|1999-12-31 21:59:59+00|"
           "2000-01-01 00:00:00.000001+00\nSELECT 1\n");
    EXPECT(f->s, "SELECT '2023-02-29'::date",
           "ERROR 22008: date/time field value out of range: \"2023-02-29\" "
           "at 8\n");
    /* Dates past what a timestamp holds: errors, not wrapped numbers. */
    EXPECT(f->s, "SELECT '9999999-01-01'::timestamp",
           "ERROR 22008: timestamp out of range: \"9999999-01-01\" at 8\n");
    EXPECT(f->s, "SELECT '5000000-01-01'::date::timestamp",
           "ERROR 22008: date out of range for timestamp\n");
    EXPECT(f->s, "SELECT 'yesterday'::date",
           "ERROR 22007: invalid input syntax for type date: \"yesterday\" "
           "at 8\n");
    EXPECT(f->s,
           "SELECT '1970-01-01'::date < '2000-01-02 00:00'::timestamp, "
           "'0001-01-01'::date, '2000-03-01'::date::timestamp, "
           "'2001-01-01 12:00'::timestamp::date",
           "?column?:16,date:1082,timestamp:1114,date:1082\n"
           "t|0001-01-01|2000-03-01 00:00:00|2001-01-01\nSELECT 1\n");
    /* now() is the transaction's start: the same through the block. */
    EXPECT(f->s,
           "CREATE TABLE h (id int PRIMARY KEY, at timestamp, d date); "
           "BEGIN; INSERT INTO h VALUES (1, now(), current_date); "
           "INSERT INTO h VALUES (2, CURRENT_TIMESTAMP, '2020-05-17'); COMMIT",
           "CREATE TABLE\nBEGIN\nINSERT 0 1\nINSERT 0 1\nCOMMIT\n");
    EXPECT(f->s, "SELECT count(DISTINCT at) FROM h",
           "count:20\n1\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT max(at) = min(at), now() - now() = interval '0' FROM h",
           "?column?:16,?column?:16\nt|t\nSELECT 1\n");
    /* An interval is no column's type yet. */
    EXPECT(f->s, "CREATE TABLE iv_col (i interval)",
           "ERROR 0A000: this column type is not supported yet at 24\n");
    EXPECT(f->s, "SELECT max(at) = min(at), min(d) FROM h",
           "?column?:16,min:1082\nt|2020-05-17\nSELECT 1\n");
    EXPECT(f->s, "SELECT id FROM h WHERE at > '2001-01-01' ORDER BY id",
           "id:23\n1\n2\nSELECT 2\n");
}

/* Window functions: the plan, what is refused, and frames folded two
 * ways over enough rows to tell them apart. */
static void test_windows(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "CREATE TABLE wt (id int PRIMARY KEY, k int); "
           "INSERT INTO wt SELECT g, g % 7 FROM generate_series(1, 3000) g",
           "CREATE TABLE\nINSERT 0 3000\n");
    EXPECT(f->s,
           "EXPLAIN SELECT id, row_number() OVER (PARTITION BY k ORDER BY id), "
           "sum(id) OVER () FROM wt ORDER BY 2 LIMIT 1",
           "QUERY PLAN:25\nLimit\n  ->  Sort\n        ->  WindowAgg\n"
           "              ->  WindowAgg\n                    ->  Sort\n"
           "                          ->  Seq Scan on wt\nEXPLAIN\n");
    /* A running sum folded a row at a time, and the same sums folded
     * whole for each row from the other end. */
    EXPECT(f->s,
           "SELECT count(*), sum(a), sum(CASE WHEN a = b THEN 0 ELSE 1 END) "
           "FROM (SELECT sum(id) OVER (PARTITION BY k ORDER BY id) AS a, "
           "sum(id) OVER (PARTITION BY k ORDER BY id DESC ROWS BETWEEN "
           "CURRENT ROW AND UNBOUNDED FOLLOWING) AS b FROM wt) x",
           "count:20,sum:1700,sum:20\n3000|645431072|0\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT max(rn), count(DISTINCT rn) FROM (SELECT row_number() "
           "OVER (ORDER BY id DESC) AS rn FROM wt) x",
           "max:20,count:20\n3000|3000\nSELECT 1\n");
    EXPECT(f->s,
           "EXPLAIN SELECT DISTINCT ON (k) k, id FROM wt ORDER BY k, id DESC",
           "QUERY PLAN:25\nUnique\n  ->  Sort\n        ->  Seq Scan on wt\n"
           "EXPLAIN\n");
    EXPECT(f->s,
           "SELECT DISTINCT ON (k) k, id FROM wt ORDER BY k, id DESC",
           "k:23,id:23\n0|2996\n1|2997\n2|2998\n3|2999\n4|3000\n5|2994\n"
           "6|2995\nSELECT 7\n");
    EXPECT(f->s,
           "WITH x AS (DELETE FROM wt WHERE k < 0 RETURNING *) "
           "SELECT count(*) FROM x",
           "count:20\n0\nSELECT 1\n");
    /* A frame's offset from a parameter. */
    EXPECT(f->s,
           "PREPARE wp(int) AS SELECT id, sum(id) OVER (ORDER BY id ROWS "
           "BETWEEN $1 PRECEDING AND CURRENT ROW) FROM wt WHERE id <= 4; "
           "EXECUTE wp(2)",
           "PREPARE\nid:23,sum:20\n1|1\n2|3\n3|6\n4|9\nSELECT 4\n");
    /* Found once rows are read, as PostgreSQL finds it: after the
     * description. */
    EXPECT(f->s, "EXECUTE wp(-1)",
           "id:23,sum:20\n"
           "ERROR 22013: frame starting offset must not be negative\n");
    /* GROUPS and RANGE frames over 3,000 rows: the sum of the ids in
     * the peer groups around (k: id % 7, so each group is 428 or 429
     * ids), and of the ids within 10 of each. */
    EXPECT(f->s,
           "SELECT sum(s) FROM (SELECT sum(id) OVER (ORDER BY k GROUPS "
           "BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s FROM wt) x",
           "sum:1700\n5237729205\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT count(*), sum(s) FROM (SELECT id, sum(id) OVER (ORDER BY id "
           "RANGE BETWEEN 10 PRECEDING AND 10 FOLLOWING) AS s FROM wt) x "
           "WHERE s <> (least(id + 10, 3000) - greatest(id - 10, 1) + 1) * "
           "(least(id + 10, 3000) + greatest(id - 10, 1)) / 2",
           "count:20,sum:1700\n0|<null>\nSELECT 1\n");
    EXPECT(f->s, "SELECT DISTINCT count(*) FILTER (WHERE k = 1) OVER () FROM wt",
           "count:20\n429\nSELECT 1\n");
    EXPECT(f->s, "UPDATE wt SET k = row_number() OVER () WHERE id = 1",
           "ERROR 42P20: window functions are not allowed in UPDATE at 19\n");
    EXPECT(f->s, "UPDATE wt SET k = sum(id)",
           "ERROR 42803: aggregate functions are not allowed in UPDATE at 19\n");
    EXPECT(f->s, "DELETE FROM wt WHERE row_number() OVER () = 1",
           "ERROR 42P20: window functions are not allowed in WHERE at 22\n");
    EXPECT(f->s, "INSERT INTO wt VALUES (row_number() OVER (), 1)",
           "ERROR 42P20: window functions are not allowed in VALUES at 24\n");
    EXPECT(f->s, "SELECT 1 FROM wt JOIN wt w2 ON row_number() OVER () = 1",
           "ERROR 42P20: window functions are not allowed in JOIN conditions "
           "at 32\n");
    EXPECT(f->s, "INSERT INTO wt VALUES (1, 1) RETURNING row_number() OVER ()",
           "ERROR 42P20: window functions are not allowed in RETURNING at 40\n");
}

/* statement_timeout and statement_memory_limit end a statement that
 * would not end, and aggregates without GROUP BY fold within a little
 * memory. */
static void test_statement_limits(void **state)
{
    fixture *f = *state;
    const char *forever = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL "
                          "SELECT n + 1 FROM t) SELECT count(*) FROM t";
    static capture c;
    sql_sink sink = {.ctx = &c, .columns = on_columns, .row = on_row,
                     .complete = on_complete, .notice = on_notice,
                     .empty = on_empty};
    sql_error err;

    EXPECT(f->s, "SET statement_timeout = '50ms'; SHOW statement_timeout",
           "SET\nstatement_timeout:25\n50ms\nSHOW\n");
    EXPECT(f->s, forever,
           "ERROR 57014: canceling statement due to statement timeout\n");
    /* The clock runs per statement: the next one has its own. */
    EXPECT(f->s, "SELECT 1 AS one", "one:23\n1\nSELECT 1\n");
    EXPECT(f->s, "RESET statement_timeout; SHOW statement_timeout",
           "RESET\nstatement_timeout:25\n0\nSHOW\n");
    EXPECT(f->s, "SET statement_memory_limit = '2MB'; "
                 "SHOW statement_memory_limit",
           "SET\nstatement_memory_limit:25\n2MB\nSHOW\n");
    c.len = 0;
    assert_int_not_equal(sql_exec_simple(f->s, forever, &sink, &err), KEEL_OK);
    assert_string_equal(err.sqlstate, "53200");
    assert_string_equal(err.message, "out of memory");
    assert_string_equal(err.detail, "The statement needed more than "
                                    "statement_memory_limit (2048 kB).");
    EXPECT(f->s, "SET statement_memory_limit = '512kB'",
           "ERROR 22023: 512 kB is outside the valid range for parameter "
           "\"statement_memory_limit\" (1024 .. 2147483647)\n");
    EXPECT(f->s, "SET statement_memory_limit = '1 PB'",
           "ERROR 22023: invalid value for parameter "
           "\"statement_memory_limit\": \"1 PB\"\n");
    EXPECT(f->s, "RESET statement_memory_limit; "
                 "CREATE TABLE lim (id int PRIMARY KEY, t text); "
                 "INSERT INTO lim SELECT g, 'row ' || g || repeat('.', 60) "
                 "FROM generate_series(1, 40000) g",
           "RESET\nCREATE TABLE\nINSERT 0 40000\n");
    /* 40,000 rows (about 3MB of text) folded in 1MB; sorted, they do not
     * fit. */
    EXPECT(f->s, "SET statement_memory_limit = '1MB'; "
                 "SELECT count(*), sum(id), left(min(t), 6), left(max(t), 9) "
                 "FROM lim",
           "SET\ncount:20,sum:20,left:25,left:25\n"
           "40000|800020000|row 1.|row 9999.\nSELECT 1\n");
    EXPECT(f->s, "SELECT left(t, 9) FROM lim ORDER BY t DESC LIMIT 1",
           "left:25\nERROR 53200: out of memory\n");
    EXPECT(f->s, "RESET statement_memory_limit; "
                 "SELECT left(t, 9) FROM lim ORDER BY t DESC LIMIT 1",
           "RESET\nleft:25\nrow 9999.\nSELECT 1\n");
}

static void test_joins(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "CREATE TABLE dept (id int PRIMARY KEY, name text); "
           "CREATE TABLE emp (id int PRIMARY KEY, name text, dept int); "
           "CREATE TABLE badge (emp int PRIMARY KEY, color text); "
           "INSERT INTO dept VALUES (1, 'eng'), (2, 'ops'), (3, 'empty'); "
           "INSERT INTO emp VALUES (10, 'ann', 1), (11, 'bob', 1), "
           "(12, 'cy', 2), (13, 'dee', null); "
           "INSERT INTO badge VALUES (10, 'red'), (12, 'blue')",
           "CREATE TABLE\nCREATE TABLE\nCREATE TABLE\nINSERT 0 3\n"
           "INSERT 0 4\nINSERT 0 2\n");
    /* An inner join, the inner side looked up by its primary key. */
    EXPECT(f->s,
           "SELECT e.name, d.name FROM emp e JOIN dept d ON d.id = e.dept "
           "ORDER BY e.id",
           "name:25,name:25\nann|eng\nbob|eng\ncy|ops\nSELECT 3\n");
    /* LEFT JOIN: rows without a match get nulls; three tables. */
    EXPECT(f->s,
           "SELECT d.name, e.name, b.color FROM dept d "
           "LEFT JOIN emp e ON e.dept = d.id LEFT JOIN badge b ON b.emp = e.id "
           "ORDER BY d.id, e.id",
           "name:25,name:25,color:25\neng|ann|red\neng|bob|<null>\n"
           "ops|cy|blue\nempty|<null>|<null>\nSELECT 4\n");
    /* Comma joins with the condition in WHERE; t.*; grouping over a
     * join. */
    EXPECT(f->s,
           "SELECT b.*, emp.name FROM emp, badge b WHERE b.emp = emp.id "
           "ORDER BY 1",
           "emp:23,color:25,name:25\n10|red|ann\n12|blue|cy\nSELECT 2\n");
    EXPECT(f->s,
           "SELECT d.name, count(e.id) FROM dept d LEFT JOIN emp e "
           "ON e.dept = d.id GROUP BY d.name ORDER BY 2 DESC, 1",
           "name:25,count:20\neng|2\nops|1\nempty|0\nSELECT 3\n");
    EXPECT(f->s, "SELECT count(*) FROM emp, dept", "count:20\n12\nSELECT 1\n");
    EXPECT(f->s, "SELECT name FROM emp, dept",
           "ERROR 42702: column reference \"name\" is ambiguous at 8\n");
    EXPECT(f->s, "SELECT x.id FROM emp",
           "ERROR 42P01: missing FROM-clause entry for table \"x\" at 8\n");
    EXPECT(f->s, "SELECT 1 FROM emp, emp",
           "ERROR 42712: table name \"emp\" specified more than once at 20\n");
    EXPECT(f->s,
           "EXPLAIN SELECT d.name, count(*) FROM dept d JOIN emp e "
           "ON e.dept = d.id LEFT JOIN badge b ON b.emp = e.id "
           "GROUP BY 1 ORDER BY 2 LIMIT 5",
           "QUERY PLAN:25\nLimit\n  ->  Sort\n        ->  GroupAggregate\n"
           "              ->  Sort\n"
           "                    ->  Nested Loop Left Join\n"
           "                          ->  Hash Join\n"
           "                                ->  Seq Scan on dept d\n"
           "                                ->  Hash\n"
           "                                      ->  Seq Scan on emp e\n"
           "                          ->  Index Scan using badge_pkey on badge b\n"
           "EXPLAIN\n");
    EXPECT(f->s, "EXPLAIN UPDATE emp SET name = 'x' WHERE id = 3",
           "QUERY PLAN:25\nUpdate on emp\n  ->  Index Scan using emp_pkey on "
           "emp\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN DELETE FROM emp WHERE name = 'x'",
           "QUERY PLAN:25\nDelete on emp\n  ->  Seq Scan on emp\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN ANALYZE SELECT 1",
           "ERROR 0A000: EXPLAIN ANALYZE is not supported yet at 9\n");
    /* The catalogs, read as tables (the unqualified name finds them
     * first, as pg_catalog's are). */
    EXPECT(f->s,
           "SELECT c.name, n.name FROM keel_class c JOIN keel_namespace n "
           "ON n.oid = c.namespace WHERE c.name LIKE 'emp%' ORDER BY 1",
           "name:19,name:19\nemp|public\nemp_pkey|public\nSELECT 2\n");
    EXPECT(f->s,
           "SELECT a.name, a.notnull FROM keel_catalog.keel_attribute a, "
           "keel_class c WHERE c.oid = a.relid AND c.name = 'badge' ORDER BY "
           "a.attnum",
           "name:19,notnull:16\nemp|t\ncolor|f\nSELECT 2\n");
    EXPECT(f->s, "INSERT INTO keel_namespace VALUES (1, 'x')",
           "ERROR 42809: \"keel_catalog.keel_namespace\" is not a user table\n");
}

/* The second line of run()'s output for a one-value query: its value. */
static long long one_value(sql_session *s, const char *text)
{
    const char *out = run(s, text), *nl = strchr(out, '\n');

    assert_non_null(nl);
    if (strncmp(nl + 1, "<null>", 6) == 0)
        return -1;
    return atoll(nl + 1);
}

/*
 * RIGHT and FULL joins.  Over random tables, each query's rows are
 * checked against what they must be: a RIGHT JOIN the LEFT JOIN with
 * its sides swapped, a FULL JOIN the inner join's rows plus each side's
 * rows that match nothing (NOT EXISTS), both for an equality (a hash
 * join) and for a range (a nested loop, which PostgreSQL refuses for a
 * FULL JOIN).
 */
static void test_outer_joins(void **state)
{
    fixture *f = *state;
    char q[1024];
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    static const char *const conds[] = {"a.k = b.k",
                                        "a.k BETWEEN b.k - 2 AND b.k + 1",
                                        "a.k = b.k AND a.v < b.v"};

    EXPECT(f->s,
           "CREATE TABLE ra (id int PRIMARY KEY, k int, v int); "
           "CREATE TABLE rb (id int PRIMARY KEY, k int, v int)",
           "CREATE TABLE\nCREATE TABLE\n");
    for (int round = 0; round < 4; round++) {
        EXPECT(f->s, "TRUNCATE ra, rb", "TRUNCATE TABLE\n");
        for (int t = 0; t < 2; t++)
            for (int i = 0; i < 150; i++) {
                int k, v;
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                k = (int)(seed % 60) - 5;
                v = (int)(seed >> 20) % 100;
                snprintf(q, sizeof(q), "INSERT INTO %s VALUES (%d, %s, %d)",
                         t == 0 ? "ra" : "rb", i,
                         seed % 11 == 0 ? "NULL" : (char[12]){0}, v);
                if (seed % 11 != 0)
                    snprintf(q, sizeof(q), "INSERT INTO %s VALUES (%d, %d, %d)",
                             t == 0 ? "ra" : "rb", i, k, v);
                EXPECT(f->s, q, "INSERT 0 1\n");
            }
        for (size_t c = 0; c < sizeof(conds) / sizeof(conds[0]); c++) {
            long long right, left, full, inner, alone_a, alone_b;
            const char *sum = "count(*) * 1000003 + coalesce(sum(a.id * 7 + "
                              "b.id * 13), 0) + count(a.id) * 17 + "
                              "count(b.id) * 19";
            snprintf(q, sizeof(q), "SELECT %s FROM ra a RIGHT JOIN rb b ON %s",
                     sum, conds[c]);
            right = one_value(f->s, q);
            snprintf(q, sizeof(q), "SELECT %s FROM rb b LEFT JOIN ra a ON %s",
                     sum, conds[c]);
            left = one_value(f->s, q);
            assert_int_equal(right, left);
            snprintf(q, sizeof(q),
                     "SELECT count(*) FROM ra a FULL JOIN rb b ON %s", conds[c]);
            full = one_value(f->s, q);
            snprintf(q, sizeof(q), "SELECT count(*) FROM ra a JOIN rb b ON %s",
                     conds[c]);
            inner = one_value(f->s, q);
            snprintf(q, sizeof(q),
                     "SELECT count(*) FROM ra a WHERE NOT EXISTS "
                     "(SELECT 1 FROM rb b WHERE %s)",
                     conds[c]);
            alone_a = one_value(f->s, q);
            snprintf(q, sizeof(q),
                     "SELECT count(*) FROM rb b WHERE NOT EXISTS "
                     "(SELECT 1 FROM ra a WHERE %s)",
                     conds[c]);
            alone_b = one_value(f->s, q);
            assert_int_equal(full, inner + alone_a + alone_b);
            assert_true(alone_a > 0 && alone_b > 0 && inner > 0);
            /* the unmatched rows of each side, as FULL JOIN gives them */
            snprintf(q, sizeof(q),
                     "SELECT count(*) FROM ra a FULL JOIN rb b ON %s "
                     "WHERE b.id IS NULL",
                     conds[c]);
            assert_int_equal(one_value(f->s, q), alone_a);
            snprintf(q, sizeof(q),
                     "SELECT count(*) FROM ra a FULL JOIN rb b ON %s "
                     "WHERE a.id IS NULL",
                     conds[c]);
            assert_int_equal(one_value(f->s, q), alone_b);
        }
        /* FULL JOIN ... USING: one k per row, a's where a has one */
        EXPECT(f->s,
               "SELECT count(*) FROM ra a FULL JOIN rb b USING (k) "
               "WHERE k IS DISTINCT FROM coalesce(a.k, b.k)",
               "count:20\n0\nSELECT 1\n");
    }
    /* The plans: a hash of the right side for an equality in ON, else a
     * nested loop over it, read whole either way. */
    EXPECT(f->s, "EXPLAIN SELECT * FROM ra a FULL JOIN rb b ON a.k = b.k",
           "QUERY PLAN:25\nHash Full Join\n  ->  Seq Scan on ra a\n"
           "  ->  Hash\n        ->  Seq Scan on rb b\nEXPLAIN\n");
    EXPECT(f->s,
           "EXPLAIN SELECT * FROM ra a RIGHT JOIN rb b ON a.k < b.k "
           "WHERE b.id = 3",
           "QUERY PLAN:25\nNested Loop Right Join\n  ->  Seq Scan on ra a\n"
           "  ->  Seq Scan on rb b\nEXPLAIN\n");
    /* A range FULL JOIN, which PostgreSQL has no plan for. */
    EXPECT(f->s,
           "SELECT x, y FROM (VALUES (1), (5), (9)) s(x) FULL JOIN "
           "(VALUES (2), (3), (20)) t(y) ON y BETWEEN x AND x + 2 "
           "ORDER BY x, y",
           "x:23,y:23\n1|2\n1|3\n5|<null>\n9|<null>\n<null>|20\n"
           "SELECT 5\n");
    /* LIMIT stops the rows that match nothing too. */
    EXPECT(f->s,
           "SELECT count(*) FROM (SELECT b.id FROM ra a RIGHT JOIN rb b "
           "ON false LIMIT 7) x",
           "count:20\n7\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT * FROM ra a RIGHT JOIN LATERAL (SELECT 1 AS one) x ON true",
           "ERROR 0A000: RIGHT and FULL joins to a LATERAL subquery is not "
           "supported yet\n");
    EXPECT(f->s,
           "SELECT * FROM ra a FULL JOIN generate_series(1, a.k) g ON true",
           "ERROR 42P10: invalid reference to FROM-clause entry in the "
           "arguments of generate_series()\n");
    EXPECT(f->s,
           "SELECT g, count(a.id) FROM ra a RIGHT JOIN "
           "generate_series(100, 102) g ON a.k = g GROUP BY g ORDER BY g",
           "g:23,count:20\n100|0\n101|0\n102|0\nSELECT 3\n");
}

/* pg_catalog's views, and the FROM clauses that read them: subqueries,
 * LATERAL, joins nested on their right side. */
static void test_catalog(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "CREATE SCHEMA s1; CREATE TABLE s1.a (id int PRIMARY KEY, v text); "
           "CREATE TABLE b (id int PRIMARY KEY, a int); "
           "INSERT INTO s1.a VALUES (1, 'x'), (2, 'y'); "
           "INSERT INTO b VALUES (10, 1), (11, 1), (12, 3)",
           "CREATE SCHEMA\nCREATE TABLE\nCREATE TABLE\nINSERT 0 2\nINSERT 0 3\n");
    EXPECT(f->s, "CREATE SCHEMA s1",
           "ERROR 42P06: schema \"s1\" already exists\n");
    EXPECT(f->s, "CREATE SCHEMA IF NOT EXISTS s1",
           "NOTICE 42P06: schema \"s1\" already exists, skipping\n"
           "CREATE SCHEMA\n");
    /* pgbench's question, for a table in a schema off the path and one
     * in public. */
    EXPECT(f->s,
           "select c.relname, o.n from pg_catalog.pg_class as c join "
           "pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross "
           "join lateral (select pg_catalog.array_position("
           "pg_catalog.current_schemas(true), n.nspname)) as o(n) "
           "where c.relname in ('a', 'b') order by 1",
           "relname:19,n:23\na|<null>\nb|2\nSELECT 2\n");
    /* A view reads the catalogs in the transaction's snapshot. */
    EXPECT(f->s,
           "BEGIN; CREATE TABLE c (x int); "
           "SELECT relname, relkind, relhasindex FROM pg_class "
           "WHERE relname = 'c'; ROLLBACK; "
           "SELECT count(*) FROM pg_catalog.pg_class WHERE relname = 'c'",
           "BEGIN\nCREATE TABLE\nrelname:19,relkind:1042,relhasindex:16\n"
           "c|r|f\nSELECT 1\nROLLBACK\ncount:20\n0\nSELECT 1\n");
    /* A table with the name of a view is found only qualified. */
    EXPECT(f->s,
           "CREATE TABLE pg_am (x int); SELECT amname FROM pg_am ORDER BY 1; "
           "SELECT count(*) FROM public.pg_am; "
           "SELECT pg_table_is_visible(c.oid) FROM pg_class c "
           "WHERE relname = 'pg_am'; DROP TABLE pg_am",
           "CREATE TABLE\namname:19\nbtree\nheap\nSELECT 2\ncount:20\n0\n"
           "SELECT 1\npg_table_is_visible:16\nf\nSELECT 1\nDROP TABLE\n");
    /* pg_table_is_visible() reads the catalogs while the table it is
     * called over is read: every row is read first. */
    EXPECT(f->s,
           "SELECT name, pg_table_is_visible(oid) FROM keel_catalog.keel_class "
           "WHERE name IN ('a', 'b', 'keel_index') ORDER BY 1",
           "name:19,pg_table_is_visible:16\na|f\nb|t\nkeel_index|t\n"
           "SELECT 3\n");
    /* Not where a scan is open as they run: UPDATE and DELETE find
     * their rows first, by the primary key (b's), then change them. */
    EXPECT(f->s, "BEGIN; DELETE FROM b WHERE pg_table_is_visible(id); "
                 "ROLLBACK",
           "BEGIN\nDELETE 3\nROLLBACK\n");
    EXPECT(f->s, "BEGIN; UPDATE b SET a = 1 WHERE pg_table_is_visible(id); "
                 "ROLLBACK",
           "BEGIN\nUPDATE 3\nROLLBACK\n");
    EXPECT(f->s,
           "UPDATE b SET a = 3 WHERE pg_table_is_visible(16384) OR id = 12; "
           "SELECT a FROM b WHERE id = 12",
           "UPDATE 1\na:23\n3\nSELECT 1\n");
    /* Subqueries, LATERAL, nested joins. */
    EXPECT(f->s,
           "SELECT s.k, s.n FROM (SELECT a AS k, count(*) AS n FROM b "
           "GROUP BY a) s(k) ORDER BY 1",
           "k:23,n:20\n1|2\n3|1\nSELECT 2\n");
    EXPECT(f->s,
           "SELECT a.v, l.n FROM s1.a, LATERAL (SELECT count(*) AS n FROM b "
           "WHERE b.a = a.id) l ORDER BY 1",
           "v:25,n:20\nx|2\ny|0\nSELECT 2\n");
    EXPECT(f->s,
           "SELECT b.id, a.v, a2.id FROM b LEFT JOIN (s1.a JOIN s1.a a2 "
           "ON a2.id = a.id) ON a.id = b.a ORDER BY 1",
           "id:23,v:25,id:23\n10|x|1\n11|x|1\n12|<null>|<null>\nSELECT 3\n");
    EXPECT(f->s,
           "EXPLAIN SELECT * FROM b JOIN (SELECT * FROM s1.a) s ON s.id = b.a",
           "QUERY PLAN:25\nNested Loop\n  ->  Seq Scan on b\n"
           "  ->  Subquery Scan on s\nEXPLAIN\n");
    EXPECT(f->s, "SELECT * FROM (SELECT 1)",
           "ERROR 42601: subquery in FROM must have an alias at 15\n");
    EXPECT(f->s, "SELECT * FROM (SELECT 1, 2) s(a, b, c)",
           "ERROR 42P10: table \"s\" has 2 columns available but 3 columns "
           "specified\n");
    EXPECT(f->s, "SELECT s.x FROM (SELECT 1 AS x) s, (SELECT 2 AS x) s",
           "ERROR 42712: table name \"s\" specified more than once\n");
    EXPECT(f->s,
           "SELECT l.v FROM b, LATERAL (SELECT count(*), b.id AS v FROM s1.a) l",
           "ERROR 0A000: outer columns in a grouped subquery's output is not "
           "supported yet at 46\n");
    /* Arrays: name[] as current_schemas() gives it. */
    EXPECT(f->s,
           "SELECT current_schemas(true), "
           "array_position(current_schemas(false), 'public'), "
           "array_to_string(current_schemas(true), '/'), "
           "current_schemas(true)::text || '!'",
           "current_schemas:1003,array_position:23,array_to_string:25,"
           "?column?:25\n{pg_catalog,public}|1|pg_catalog/public|"
           "{pg_catalog,public}!\nSELECT 1\n");
    EXPECT(f->s, "SELECT array_position(current_schemas(true), 1)",
           "ERROR 42883: function array_position(name[], integer) does not "
           "exist at 8\n");
    EXPECT(f->s, "SELECT 'a' ~ 1",
           "ERROR 42883: operator does not exist: unknown ~ integer at 12\n");
    EXPECT(f->s, "SELECT 'abc' ~ '('",
           "ERROR 2201B: invalid regular expression: Unmatched ( or \\(\n");
    EXPECT(f->s, "SELECT nosuch.version()",
           "ERROR 42883: function nosuch.version does not exist at 8\n");
    /* What psql's \d asks: oids as names, index definitions, UNION,
     * generate_series() in FROM, subscripts, string_agg(). */
    EXPECT(f->s,
           "SELECT c.oid::regclass, c.relnamespace::regnamespace, "
           "23::pg_catalog.regtype, 1::regclass, pg_get_indexdef(i.oid), "
           "pg_get_constraintdef(i.oid), pg_get_indexdef(i.oid, 1, true) "
           "FROM pg_class c, pg_class i WHERE c.relname = 'a' "
           "AND i.relname = 'a_pkey'",
           "oid:25,relnamespace:25,regtype:25,regclass:25,pg_get_indexdef:25,"
           "pg_get_constraintdef:25,pg_get_indexdef:25\n"
           "s1.a|s1|integer|1|CREATE UNIQUE INDEX a_pkey ON s1.a USING btree "
           "(id)|PRIMARY KEY (id)|id\nSELECT 1\n");
    /* A name read as regclassin reads it: a is in s1, not on the search
     * path. */
    EXPECT(f->s, "SELECT 'a'::regclass",
           "ERROR 42P01: relation \"a\" does not exist at 8\n");
    EXPECT(f->s, "SELECT 's1.a'::regclass, 's1.a'::regclass = 1",
           "regclass:25,?column?:16\ns1.a|f\nSELECT 1\n");
    /* regtype and regnamespace from text, as their input functions read
     * it; to_regtype() and its kin give NULL for a name nothing has. */
    EXPECT(f->s,
           "SELECT 'int4'::regtype, 'character varying'::regtype::oid, "
           "'public'::regnamespace, to_regtype('hstore') IS NULL, "
           "to_regclass('s1.a') = 's1.a'::regclass, "
           "to_regnamespace('nope') IS NULL",
           "regtype:25,oid:26,regnamespace:25,?column?:16,?column?:16,"
           "?column?:16\ninteger|1043|public|t|t|t\nSELECT 1\n");
    EXPECT(f->s, "SELECT 'hstore'::regtype",
           "ERROR 42704: type \"hstore\" does not exist at 8\n");
    EXPECT(f->s, "SELECT 'int4; DROP TABLE b'::regtype",
           "ERROR 42601: invalid type name \"int4; DROP TABLE b\" at 8\n");
    EXPECT(f->s, "SELECT 'nope'::regnamespace",
           "ERROR 3F000: schema \"nope\" does not exist at 8\n");
    EXPECT(f->s, "SELECT 23::regtype, $$text$$::text::regtype",
           "regtype:25,regtype:25\ninteger|text\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT id FROM b UNION SELECT 1 UNION ALL SELECT NULL ORDER BY 1 "
           "DESC LIMIT 3",
           "id:23\n<null>\n12\n11\nSELECT 3\n");
    EXPECT(f->s, "SELECT 1 UNION SELECT 'x'::text",
           "ERROR 42804: UNION types integer and text cannot be matched\n");
    EXPECT(f->s, "SELECT 1 INTERSECT SELECT 1, 2",
           "ERROR 42601: each INTERSECT query must have the same number of "
           "columns\n");
    EXPECT(f->s, "SELECT 1 EXCEPT SELECT 'x'::text",
           "ERROR 42804: EXCEPT types integer and text cannot be matched\n");
    EXPECT(f->s, "EXPLAIN SELECT 1 EXCEPT ALL SELECT 2",
           "QUERY PLAN:25\nSetOp Except All\nEXPLAIN\n");
    EXPECT(f->s,
           "SELECT string_agg(v, ', '), (SELECT string_agg(v, '') FROM s1.a "
           "WHERE false) FROM s1.a, generate_series(1, 2) g WHERE g = a.id",
           "string_agg:25,string_agg:25\nx, y|<null>\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT x, ('{5,6,7}'::int[])[x], array_upper('{a,b}'::text[], 1) "
           "FROM pg_catalog.generate_series(3, 0, -2) AS g(x)",
           "x:23,int4:23,array_upper:23\n3|7|2\n1|5|2\nSELECT 2\n");
    EXPECT(f->s, "SELECT * FROM generate_series(1, 2, 0)",
           "generate_series:23\nERROR 22023: step size cannot equal zero\n");
    EXPECT(f->s, "SELECT * FROM unnest('{1,NULL,3}'::int[])",
           "unnest:23\n1\n<null>\n3\nSELECT 3\n");
    EXPECT(f->s, "SELECT * FROM unnest(1)",
           "ERROR 42883: function unnest(integer) does not exist at 15\n");
    EXPECT(f->s, "SELECT * FROM lower('x')",
           "ERROR 0A000: functions in FROM but generate_series(), "
           "unnest(), pg_partition_ancestors() and the json ones is not "
           "supported yet\n");
    EXPECT(f->s, "SELECT * FROM pg_catalog.pg_rewrite",
           "ERROR 0A000: the catalog pg_catalog.pg_rewrite is not "
           "supported yet at 15\n");
    /* Subqueries in expressions, run for each row around them. */
    EXPECT(f->s,
           "SELECT a.v, (SELECT count(*) FROM b WHERE b.a = a.id) AS n, "
           "EXISTS (SELECT 1 FROM b WHERE b.a = a.id), "
           "ARRAY(SELECT b.id FROM b WHERE b.a = a.id ORDER BY 1), "
           "(SELECT b.id FROM b WHERE b.id = 99) FROM s1.a ORDER BY 1",
           "v:25,n:20,exists:16,array:1007,id:23\n"
           "x|2|t|{10,11}|<null>\ny|0|f|{}|<null>\nSELECT 2\n");
    EXPECT(f->s,
           "SELECT id FROM b WHERE a IN (SELECT id FROM s1.a) ORDER BY 1; "
           "SELECT id FROM b WHERE a NOT IN (SELECT id FROM s1.a); "
           "SELECT 1 IN (SELECT NULL::int), 2 NOT IN (SELECT 1 WHERE false)",
           "id:23\n10\n11\nSELECT 2\nid:23\n12\nSELECT 1\n"
           "?column?:16,?column?:16\n<null>|t\nSELECT 1\n");
    EXPECT(f->s, "SELECT (SELECT id FROM b)",
           "id:23\nERROR 21000: more than one row returned by a subquery used "
           "as an expression\n");
    /* RETURNING would see the statement's own writes. */
    EXPECT(f->s, "INSERT INTO b VALUES (13, 1) RETURNING (SELECT count(*) FROM b)",
           "ERROR 0A000: subqueries in RETURNING is not supported yet at 40\n");
    EXPECT(f->s, "SELECT (SELECT 1, 2)",
           "ERROR 42601: subquery must return only one column at 8\n");
    EXPECT(f->s, "SELECT count(*), (SELECT 1), (SELECT max(id) FROM b) FROM b",
           "count:20,?column?:23,max:23\n3|1|12\nSELECT 1\n");
    EXPECT(f->s, "SELECT a, (SELECT b.a) FROM b GROUP BY a",
           "ERROR 0A000: correlated subqueries in a grouped query's output "
           "is not supported yet at 11\n");
    EXPECT(f->s,
           "SELECT 10 = ANY('{1,10}'::int[]), 'q' = ANY('{\"a b\",q}'::name[]), "
           "3 = ANY('{1,NULL}'::oid[]), 1 = ANY(NULL::int[])",
           "?column?:16,?column?:16,?column?:16,?column?:16\n"
           "t|t|<null>|<null>\nSELECT 1\n");
    EXPECT(f->s, "SELECT 1 = ANY(1)",
           "ERROR 42809: op ANY/ALL (array) requires array on right side "
           "at 10\n");
    EXPECT(f->s, "SELECT 1 < ANY('{1}'::int[])",
           "ERROR 0A000: ANY and ALL but = ANY is not supported yet at 10\n");
    EXPECT(f->s, "SELECT '1'::int[]",
           "ERROR 22P02: malformed array literal: \"1\" at 8\n");
    EXPECT(f->s, "SELECT 'a' COLLATE \"en_US\"",
           "ERROR 0A000: collations but default and C is not supported yet "
           "at 12\n");
}

/* pgbench's initialization, step by step as pgbench -i sends it. */
/* psql 15's \di+ sz.*, as it sends it. */
#define DI_PLUS                                                                \
    "SELECT n.nspname as \"Schema\",\n  c.relname as \"Name\",\n"            \
    "  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' "    \
    "THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN "           \
    "'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' "   \
    "WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' "    \
    "END as \"Type\",\n"                                                       \
    "  pg_catalog.pg_get_userbyid(c.relowner) as \"Owner\",\n"                \
    "  c2.relname as \"Table\",\n"                                             \
    "  CASE c.relpersistence WHEN 'p' THEN 'permanent' WHEN 't' THEN "        \
    "'temporary' WHEN 'u' THEN 'unlogged' END as \"Persistence\",\n"          \
    "  am.amname as \"Access method\",\n"                                      \
    "  pg_catalog.pg_size_pretty(pg_catalog.pg_table_size(c.oid)) as "        \
    "\"Size\",\n"                                                              \
    "  pg_catalog.obj_description(c.oid, 'pg_class') as \"Description\"\n"    \
    "FROM pg_catalog.pg_class c\n"                                             \
    "     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace\n"    \
    "     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam\n"                 \
    "     LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid\n"          \
    "     LEFT JOIN pg_catalog.pg_class c2 ON i.indrelid = c2.oid\n"          \
    "WHERE c.relkind IN ('i','I','s','')\n"                                    \
    "  AND n.nspname OPERATOR(pg_catalog.~) '^(sz)$' COLLATE "               \
    "pg_catalog.default\nORDER BY 1,2;"

/*
 * Sizes as psql's \di+ shows them, which the psql scripts cannot compare
 * with PostgreSQL's (an empty B-tree is its meta page and a root here,
 * 16 kB; PostgreSQL's is its meta page alone): each index's file,
 * growing with its keys; and the size functions where a scan is open.
 */
static void test_sizes(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "CREATE SCHEMA sz; CREATE TABLE sz.t (a int PRIMARY KEY, b int); "
           "CREATE INDEX t_b ON sz.t (b)",
           "CREATE SCHEMA\nCREATE TABLE\nCREATE INDEX\n");
    EXPECT(f->s, DI_PLUS,
           "Schema:19,Name:19,Type:25,Owner:19,Table:19,Persistence:25,"
           "Access method:19,Size:25,Description:25\n"
           "sz|t_b|index||t|permanent|btree|16 kB|<null>\n"
           "sz|t_pkey|index||t|permanent|btree|16 kB|<null>\n"
           "SELECT 2\n");
    EXPECT(f->s,
           "INSERT INTO sz.t SELECT g, g FROM generate_series(1, 20000) g; "
           "SELECT pg_table_size('sz.t_pkey') > 16384, "
           "pg_indexes_size('sz.t') = pg_table_size('sz.t_pkey') + "
           "pg_relation_size('sz.t_b'), "
           "pg_size_pretty(pg_total_relation_size('sz.t')) = "
           "pg_size_pretty(pg_table_size('sz.t') + pg_indexes_size('sz.t'))",
           "INSERT 0 20000\n?column?:16,?column?:16,?column?:16\nt|t|t\n"
           "SELECT 1\n");
    /* The sizes read the engine: where a scan is open they cannot. */
    EXPECT(f->s, "CREATE TABLE sz.nokey (a int); "
                 "DELETE FROM sz.nokey WHERE pg_relation_size(a) > 0",
           "CREATE TABLE\nERROR 0A000: reading the catalogs in DELETE's "
           "WHERE is not supported yet at 79\n");
    /* psql's \l+: the database's size as pg_database_size() has it. */
    {
        char want[512], size[64];
        const char *r = run(f->s, "SELECT pg_size_pretty(pg_database_size("
                                  "current_database())), current_database()");
        const char *v = strchr(r, '\n') + 1;
        size_t n = strcspn(v, "|");
        assert_true(n < sizeof(size));
        memcpy(size, v, n);
        size[n] = '\0';
        assert_true(strstr(size, " kB") != NULL || strstr(size, " MB") != NULL);
        snprintf(want, sizeof(want),
                 "Name:19,Size:25,Tablespace:19,Description:25\n"
                 "%.*s|%s|pg_default|<null>\nSELECT 1\n",
                 (int)strcspn(v + n + 1, "\n"), v + n + 1, size);
        EXPECT(f->s,
               "SELECT d.datname as \"Name\",\n"
               "       CASE WHEN pg_catalog.has_database_privilege(d.datname, "
               "'CONNECT')\n"
               "            THEN pg_catalog.pg_size_pretty("
               "pg_catalog.pg_database_size(d.datname))\n"
               "            ELSE 'No Access'\n"
               "       END as \"Size\",\n"
               "       t.spcname as \"Tablespace\",\n"
               "       pg_catalog.shobj_description(d.oid, 'pg_database') as "
               "\"Description\"\n"
               "FROM pg_catalog.pg_database d\n"
               "  JOIN pg_catalog.pg_tablespace t on d.dattablespace = t.oid\n"
               "ORDER BY 1;",
               want);
    }
    /* By oid, as psql's queries pass it: whole blocks. */
    EXPECT(f->s,
           "SELECT c.relname, pg_relation_size(c.oid) % 8192, "
           "pg_relation_size(c.oid) > 0 FROM pg_class c "
           "JOIN pg_namespace n ON n.oid = c.relnamespace "
           "WHERE n.nspname = 'sz' ORDER BY 1",
           "relname:19,?column?:20,?column?:16\nt|0|t\nt_b|0|t\nt_pkey|0|t\n"
           "SELECT 3\n");
}

static void test_pgbench_init(void **state)
{
    fixture *f = *state;

    EXPECT(f->s,
           "drop table if exists pgbench_accounts, pgbench_branches, "
           "pgbench_history, pgbench_tellers",
           "NOTICE 00000: table \"pgbench_accounts\" does not exist, skipping\n"
           "NOTICE 00000: table \"pgbench_branches\" does not exist, skipping\n"
           "NOTICE 00000: table \"pgbench_history\" does not exist, skipping\n"
           "NOTICE 00000: table \"pgbench_tellers\" does not exist, skipping\n"
           "DROP TABLE\n");
    EXPECT(f->s,
           "create table pgbench_history(tid int,bid int,aid    int,delta "
           "int,mtime timestamp,filler char(22)); "
           "create table pgbench_tellers(tid int not null,bid int,tbalance "
           "int,filler char(84)) with (fillfactor=100); "
           "create table pgbench_branches(bid int not null,bbalance int,filler "
           "char(88)) with (fillfactor=100)",
           "CREATE TABLE\nCREATE TABLE\nCREATE TABLE\n");
    EXPECT(f->s,
           "begin; truncate table pgbench_branches, pgbench_history, "
           "pgbench_tellers; insert into pgbench_branches(bid,bbalance) "
           "values(1,0); insert into pgbench_tellers(tid,bid,tbalance) values "
           "(1,1,0); insert into pgbench_tellers(tid,bid,tbalance) values "
           "(2,1,0); commit",
           "BEGIN\nTRUNCATE TABLE\nINSERT 0 1\nINSERT 0 1\nINSERT 0 1\n"
           "COMMIT\n");
    EXPECT(f->s, "vacuum analyze pgbench_branches",
           "NOTICE 00000: VACUUM does no work in keel: its heap prunes dead "
           "versions from a page as it is read\nVACUUM\n");
    EXPECT(f->s,
           "alter table pgbench_branches add primary key (bid); "
           "alter table pgbench_tellers add primary key (tid)",
           "ALTER TABLE\nALTER TABLE\n");
    EXPECT(f->s, "alter table pgbench_tellers add primary key (bid)",
           "ERROR 42P16: multiple primary keys for table \"pgbench_tellers\" "
           "are not allowed\n");
    EXPECT(f->s, "alter table pgbench_history add primary key (tid)",
           "ALTER TABLE\n");
    /* The key is enforced, its columns not null, and it addresses rows. */
    EXPECT(f->s, "insert into pgbench_tellers(tid,bid,tbalance) values (1,1,0)",
           "ERROR 23505: duplicate key value violates unique constraint "
           "\"pgbench_tellers_pkey\"\n");
    EXPECT(f->s, "insert into pgbench_history(bid) values (1)",
           "ERROR 23502: null value in column \"tid\" of relation "
           "\"pgbench_history\" violates not-null constraint\n");
    EXPECT(f->s,
           "BEGIN; UPDATE pgbench_tellers SET tbalance = tbalance + 5 WHERE "
           "tid = 2; UPDATE pgbench_branches SET bbalance = bbalance + 5 WHERE "
           "bid = 1; INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) "
           "VALUES (2, 1, 7, 5, CURRENT_TIMESTAMP); END",
           "BEGIN\nUPDATE 1\nUPDATE 1\nINSERT 0 1\nCOMMIT\n");
    EXPECT(f->s,
           "select (select 1) ",
           "?column?:23\n1\nSELECT 1\n");
    EXPECT(f->s,
           "select sum(tbalance), (select 1) from pgbench_tellers",
           "sum:20,?column?:23\n5|1\nSELECT 1\n");
    EXPECT(f->s,
           "select t.tbalance = b.bbalance, h.delta from pgbench_tellers t "
           "join pgbench_branches b on b.bid = t.bid join pgbench_history h "
           "on h.tid = t.tid",
           "?column?:16,delta:23\nt|5\nSELECT 1\n");
}

/* COPY's data: chunks handed out one per read, as CopyData messages
 * would arrive (NULL ends them: CopyDone; "FAIL" stands for CopyFail). */
typedef struct copy_feed {
    capture *c;
    const char *const *chunks;
    size_t next;
} copy_feed;

static int feed_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    return on_columns(((copy_feed *)ctx)->c, cols, n);
}

static int feed_row(void *ctx, const char *const *vals, const uint32_t *lens,
                    uint16_t n)
{
    return on_row(((copy_feed *)ctx)->c, vals, lens, n);
}

static int feed_complete(void *ctx, const char *tag)
{
    return on_complete(((copy_feed *)ctx)->c, tag);
}

static int feed_in_begin(void *ctx, uint16_t ncols, int16_t format)
{
    put(((copy_feed *)ctx)->c, "COPY IN %u %d\n", ncols, format);
    return 0;
}

static int feed_in_read(void *ctx, const char **data, size_t *len, char *why,
                        size_t whylen)
{
    copy_feed *f = ctx;
    const char *chunk = f->chunks[f->next];

    if (chunk == NULL) {
        *len = 0;
        return 0;
    }
    f->next++;
    if (strcmp(chunk, "FAIL") == 0) {
        snprintf(why, whylen, "client gave up");
        return 1;
    }
    *data = chunk;
    *len = strlen(chunk);
    return 0;
}

static int feed_out_begin(void *ctx, uint16_t ncols, int16_t format)
{
    put(((copy_feed *)ctx)->c, "COPY OUT %u %d\n", ncols, format);
    return 0;
}

static int feed_out_data(void *ctx, const char *data, size_t len)
{
    put(((copy_feed *)ctx)->c, "%.*s", (int)len, data);
    return 0;
}

/* Runs a COPY with its data in chunks; what the client saw. */
static const char *run_copy(sql_session *s, const char *text,
                            const char *const *chunks)
{
    static capture c;
    copy_feed f = {.c = &c, .chunks = chunks};
    sql_sink sink = {.ctx = &f, .columns = feed_columns, .row = feed_row,
                     .complete = feed_complete, .copy_in_begin = feed_in_begin,
                     .copy_in_read = feed_in_read,
                     .copy_out_begin = feed_out_begin,
                     .copy_out_data = feed_out_data};
    sql_error err;

    c.len = 0;
    c.buf[0] = '\0';
    if (sql_exec_simple(s, text, &sink, &err) != KEEL_OK) {
        put(&c, "%s %s: %s", err.severity, err.sqlstate, err.message);
        if (err.detail[0] != '\0')
            put(&c, " (%s)", err.detail);
        if (err.context[0] != '\0')
            put(&c, " [%s]", err.context);
        put(&c, "\n");
    }
    /* Every chunk was read, even after an error. */
    assert_null(chunks[f.next]);
    return c.buf;
}

static void test_copy(void **state)
{
    fixture *f = *state;
    const char *const text_rows[] = {"1\tone\t\\N\n2\ttw", "o\\tx\t2.5\n",
                                     "3\t\\N\t-1\n\\.\n", NULL};
    const char *const csv_rows[] = {"id,name,w\n10,\"a, \"\"b\"\"\",1\n11,,\n",
                                    "12,\"multi\nline\",\n\\.\n", NULL};
    const char *const bad_rows[] = {"20\tx\t1\n", "zz\ty\t2\n", "21\tz\t3\n",
                                    NULL};
    const char *const fail_rows[] = {"30\tx\t1\n", "FAIL", NULL};
    const char *const none[] = {NULL};

    EXPECT(f->s, "CREATE TABLE c (id int PRIMARY KEY, name text, w float8)",
           "CREATE TABLE\n");
    assert_string_equal(run_copy(f->s, "COPY c FROM STDIN", text_rows),
                        "COPY IN 3 0\nCOPY 3\n");
    assert_string_equal(
        run_copy(f->s, "COPY c FROM STDIN WITH (FORMAT csv, HEADER)", csv_rows),
        "COPY IN 3 0\nCOPY 3\n");
    EXPECT(f->s, "SELECT id, name, w FROM c ORDER BY id",
           "id:23,name:25,w:701\n1|one|<null>\n2|two\tx|2.5\n3|<null>|-1\n"
           "10|a, \"b\"|1\n11|<null>|<null>\n12|multi\nline|<null>\n"
           "SELECT 6\n");
    /* A bad row: nothing of the COPY stays, the line is named. */
    assert_string_equal(
        run_copy(f->s, "COPY c FROM STDIN", bad_rows),
        "COPY IN 3 0\nERROR 22P02: invalid input syntax for type integer: "
        "\"zz\" [COPY c, line 2, column id: \"zz\"]\n");
    assert_string_equal(run_copy(f->s, "COPY c FROM STDIN", fail_rows),
                        "COPY IN 3 0\nERROR 57014: COPY from stdin failed: "
                        "client gave up\n");
    EXPECT(f->s, "SELECT count(*) FROM c", "count:20\n6\nSELECT 1\n");
    assert_string_equal(
        run_copy(f->s, "COPY c (id, name) TO STDOUT", none),
        "COPY OUT 2 0\n1\tone\n2\ttwo\\tx\n3\t\\N\n10\ta, \"b\"\n11\t\\N\n"
        "12\tmulti\\nline\nCOPY 6\n");
    assert_string_equal(
        run_copy(f->s, "COPY c TO STDOUT (FORMAT csv, HEADER) ", none),
        "COPY OUT 3 0\nid,name,w\n1,one,\n2,two\tx,2.5\n3,,-1\n"
        "10,\"a, \"\"b\"\"\",1\n11,,\n12,\"multi\nline\",\nCOPY 6\n");
    assert_string_equal(run_copy(f->s, "COPY c FROM '/etc/passwd'", none),
                        "ERROR 0A000: COPY to or from a server file or program "
                        "is not supported yet\n");
    /* c owns no sequence: RESTART IDENTITY has nothing to restart */
    EXPECT(f->s, "BEGIN; TRUNCATE c RESTART IDENTITY; ROLLBACK",
           "BEGIN\nTRUNCATE TABLE\nROLLBACK\n");
    EXPECT(f->s, "SELECT count(*) FROM c", "count:20\n6\nSELECT 1\n");
    EXPECT(f->s, "TRUNCATE c CONTINUE IDENTITY", "TRUNCATE TABLE\n");
    EXPECT(f->s, "SELECT count(*) FROM c", "count:20\n0\nSELECT 1\n");
    EXPECT(f->s, "BEGIN; INSERT INTO c VALUES (1, 'x', 1); TRUNCATE c; ROLLBACK",
           "BEGIN\nINSERT 0 1\nTRUNCATE TABLE\nROLLBACK\n");
    EXPECT(f->s, "SELECT count(*) FROM c", "count:20\n0\nSELECT 1\n");
}

/* The extended protocol's steps, as a driver sends them. */
static sql_sink capture_sink(capture *c)
{
    return (sql_sink){.ctx = c, .columns = on_columns, .row = on_row,
                      .complete = on_complete, .notice = on_notice,
                      .empty = on_empty};
}

static void test_extended(void **state)
{
    fixture *f = *state;
    static capture c;
    sql_sink sink = capture_sink(&c);
    sql_error err;
    uint32_t types[8];
    uint16_t np = 0;
    bool no_data, suspended;
    const char *vals[4];
    uint32_t lens[4];
    int16_t binary = SQL_FORMAT_BINARY;
    char be4[4] = {0, 0, 0, 2};

    EXPECT(f->s,
           "CREATE TABLE g (id int PRIMARY KEY, k text, v int, w float8); "
           "INSERT INTO g VALUES (1, 'a', 10, 1), (2, 'b', 20, 2), "
           "(3, 'c', 30, 3)",
           "CREATE TABLE\nINSERT 0 3\n");
    /* A WITH query's DELETE is described, not run, by Describe. */
    assert_int_equal(sql_parse(f->s, "wd",
                               "WITH d AS (DELETE FROM g RETURNING id, k) "
                               "SELECT k, id * 2 AS twice FROM d",
                               NULL, 0, &err),
                     KEEL_OK);
    c.len = 0;
    assert_int_equal(sql_describe_statement(f->s, "wd", types, 8, &np, &sink,
                                            &no_data, &err),
                     KEEL_OK);
    assert_string_equal(c.buf, "k:25,twice:23\n");
    EXPECT(f->s, "SELECT count(*) FROM g", "count:20\n3\nSELECT 1\n");
    /* Parse with an untyped parameter: its type comes from its use. */
    assert_int_equal(sql_parse(f->s, "q", "SELECT k, v FROM g WHERE id = $1",
                               NULL, 0, &err),
                     KEEL_OK);
    c.len = 0;
    assert_int_equal(sql_describe_statement(f->s, "q", types, 8, &np, &sink,
                                            &no_data, &err),
                     KEEL_OK);
    assert_int_equal(np, 1);
    assert_int_equal(types[0], SQL_TYPE_INT4);
    assert_false(no_data);
    assert_string_equal(c.buf, "k:25,v:23\n");
    /* Bind "2" as text, run. */
    vals[0] = "2";
    lens[0] = 1;
    assert_int_equal(sql_bind(f->s, "", "q", 0, NULL, 1, vals, lens, 0, NULL,
                              &err),
                     KEEL_OK);
    c.len = 0;
    assert_int_equal(sql_execute(f->s, "", 0, false, &sink, &suspended, &err), KEEL_OK);
    assert_false(suspended);
    assert_string_equal(c.buf, "b|20\nSELECT 1\n");
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    /* The parameter in binary; results in binary: v as 4 big-endian
     * bytes. */
    vals[0] = be4;
    lens[0] = 4;
    assert_int_equal(sql_bind(f->s, "p", "q", 1, &binary, 1, vals, lens, 1,
                              &binary, &err),
                     KEEL_OK);
    c.len = 0;
    assert_int_equal(sql_describe_portal(f->s, "p", &sink, &no_data, &err),
                     KEEL_OK);
    assert_string_equal(c.buf, "k:25,v:23\n");
    c.len = 0;
    assert_int_equal(sql_execute(f->s, "p", 0, false, &sink, &suspended, &err), KEEL_OK);
    assert_int_equal(memcmp(c.buf, "b|\0\0\0\x14\nSELECT 1\n", 17), 0);
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    /* numeric in PostgreSQL's binary form, both ways: 12.25 is 2 digits,
     * weight 0, sign +, scale 2, then 12 and 2500; 13.75 comes back. */
    if (sql_parse(f->s, "n", "SELECT $1 + 1.5", NULL, 0, &err) != KEEL_OK)
        fail_msg("%s %s", err.sqlstate, err.message);
    {
        static const char in[] = {0, 2, 0, 0, 0, 0, 0, 2, 0, 12, 0x09, (char)0xc4};
        static const char want[] = {0, 2, 0, 0, 0, 0, 0, 2, 0, 13, 0x1d, 0x4c};
        static const char bad[] = {0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10};
        vals[0] = in;
        lens[0] = sizeof(in);
        assert_int_equal(sql_bind(f->s, "pn", "n", 1, &binary, 1, vals, lens,
                                  1, &binary, &err),
                         KEEL_OK);
        c.len = 0;
        assert_int_equal(sql_execute(f->s, "pn", 0, false, &sink, &suspended,
                                     &err),
                         KEEL_OK);
        assert_int_equal(c.len, sizeof(want) + 10);
        assert_memory_equal(c.buf, want, sizeof(want));
        /* A digit of 10000 is no base-10000 digit. */
        vals[0] = bad;
        lens[0] = sizeof(bad);
        assert_int_not_equal(sql_bind(f->s, "pn2", "n", 1, &binary, 1, vals,
                                      lens, 1, &binary, &err),
                             KEEL_OK);
        assert_string_equal(err.sqlstate, "22P03");
    }
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    /* A row limit suspends the portal; the next Execute goes on. */
    assert_int_equal(sql_parse(f->s, "", "SELECT id FROM g ORDER BY id DESC",
                               NULL, 0, &err),
                     KEEL_OK);
    assert_int_equal(sql_bind(f->s, "", "", 0, NULL, 0, NULL, NULL, 0, NULL,
                              &err),
                     KEEL_OK);
    c.len = 0;
    assert_int_equal(sql_execute(f->s, "", 2, false, &sink, &suspended, &err), KEEL_OK);
    assert_true(suspended);
    assert_string_equal(c.buf, "3\n2\n");
    c.len = 0;
    assert_int_equal(sql_execute(f->s, "", 2, false, &sink, &suspended, &err), KEEL_OK);
    assert_false(suspended);
    assert_string_equal(c.buf, "1\nSELECT 3\n");
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    /* INSERT's parameters take their columns' types. */
    assert_int_equal(sql_parse(f->s, "ins", "INSERT INTO g VALUES ($1, $2, $3, $4)",
                               NULL, 0, &err),
                     KEEL_OK);
    assert_int_equal(sql_describe_statement(f->s, "ins", types, 8, &np, &sink,
                                            &no_data, &err),
                     KEEL_OK);
    assert_int_equal(np, 4);
    assert_int_equal(types[0], SQL_TYPE_INT4);
    assert_int_equal(types[1], SQL_TYPE_TEXT);
    assert_int_equal(types[3], SQL_TYPE_FLOAT8);
    assert_true(no_data);
    vals[0] = "4";
    vals[1] = "d";
    vals[2] = NULL;
    vals[3] = "4.5";
    for (int i = 0; i < 4; i++)
        lens[i] = vals[i] != NULL ? (uint32_t)strlen(vals[i]) : 0;
    assert_int_equal(sql_bind(f->s, "", "ins", 0, NULL, 4, vals, lens, 0, NULL,
                              &err),
                     KEEL_OK);
    c.len = 0;
    assert_int_equal(sql_execute(f->s, "", 0, false, &sink, &suspended, &err), KEEL_OK);
    assert_string_equal(c.buf, "INSERT 0 1\n");
    /* An error until Sync: the transaction is rolled back, the insert
     * with it. */
    vals[0] = "x";
    lens[0] = 1;
    assert_int_not_equal(sql_bind(f->s, "", "q", 0, NULL, 1, vals, lens, 0,
                                  NULL, &err),
                         KEEL_OK);
    assert_string_equal(err.sqlstate, "22P02");
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    EXPECT(f->s, "SELECT count(*) FROM g", "count:20\n3\nSELECT 1\n");
    /* Errors of the protocol's own. */
    assert_int_not_equal(sql_parse(f->s, "q", "SELECT 1", NULL, 0, &err), KEEL_OK);
    assert_string_equal(err.sqlstate, "42P05");
    assert_int_not_equal(sql_parse(f->s, "", "SELECT * FROM nosuch", NULL, 0,
                                   &err),
                         KEEL_OK);
    assert_string_equal(err.sqlstate, "42P01");
    assert_int_not_equal(sql_parse(f->s, "", "SELECT 1; SELECT 2", NULL, 0,
                                   &err),
                         KEEL_OK);
    assert_string_equal(err.sqlstate, "42601");
    assert_int_not_equal(sql_bind(f->s, "", "q", 0, NULL, 0, NULL, NULL, 0,
                                  NULL, &err),
                         KEEL_OK);
    assert_string_equal(err.sqlstate, "08P01");
    assert_int_not_equal(sql_execute(f->s, "nosuch", 0, false, &sink, &suspended, &err),
                         KEEL_OK);
    assert_string_equal(err.sqlstate, "34000");
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    sql_close(f->s, 'S', "q");
    assert_int_equal(sql_parse(f->s, "q", "SELECT $1::int + 1", NULL, 0, &err),
                     KEEL_OK);
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    /* In a block, an Execute's failure fails the block. */
    EXPECT(f->s, "BEGIN", "BEGIN\n");
    vals[0] = "2147483647";
    lens[0] = 10;
    assert_int_equal(sql_bind(f->s, "", "q", 0, NULL, 1, vals, lens, 0, NULL,
                              &err),
                     KEEL_OK);
    assert_int_not_equal(sql_execute(f->s, "", 0, false, &sink, &suspended, &err),
                         KEEL_OK);
    assert_string_equal(err.sqlstate, "22003");
    assert_int_equal(sql_sync(f->s, &err), KEEL_OK);
    assert_int_equal(sql_txn_status(f->s), 'E');
    EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
}

/* Secondary indexes in plans: equality and ranges on an index's leading
 * columns use it (EXPLAIN says which), for a scan, an UPDATE through it
 * that moves keys along it, and the inner side of a join; the answers
 * are those of a sequential scan. */
static void test_secondary_index_plans(void **state)
{
    fixture *f = *state;

    EXPECT(f->s, "CREATE TABLE item (id int PRIMARY KEY, cat int, name text); "
                 "INSERT INTO item SELECT g, g % 4, 'n' || g FROM "
                 "generate_series(1, 40) g; "
                 "CREATE INDEX item_cat_name ON item (cat, name); "
                 "CREATE INDEX item_name ON item (name); "
                 "CREATE TABLE cat (id int PRIMARY KEY, label text)",
           "CREATE TABLE\nINSERT 0 40\nCREATE INDEX\nCREATE INDEX\n"
           "CREATE TABLE\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item WHERE cat = 2",
           "QUERY PLAN:25\nIndex Scan using item_cat_name on item\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item WHERE name = 'n7' AND cat = 3",
           "QUERY PLAN:25\nIndex Scan using item_cat_name on item\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item WHERE name > 'n38'",
           "QUERY PLAN:25\nIndex Scan using item_name on item\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item WHERE id = 3 AND cat = 3",
           "QUERY PLAN:25\nIndex Scan using item_pkey on item\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item WHERE name LIKE 'n1%'",
           "QUERY PLAN:25\nSeq Scan on item\nEXPLAIN\n");
    EXPECT(f->s, "SELECT count(*), min(id), max(id) FROM item WHERE cat = 2",
           "count:20,min:23,max:23\n10|2|38\nSELECT 1\n");
    /* ORDER BY that the scan's order gives is not sorted again, and
     * LIMIT stops the scan: the primary key's order, bounded or not, and
     * an index's past the columns its equalities fix */
    EXPECT(f->s, "EXPLAIN SELECT id FROM item ORDER BY id LIMIT 3",
           "QUERY PLAN:25\nLimit\n  ->  Index Scan using item_pkey on item\n"
           "EXPLAIN\n");
    EXPECT(f->s, "SELECT id FROM item ORDER BY id LIMIT 3 OFFSET 10",
           "id:23\n11\n12\n13\nSELECT 3\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item WHERE id > 30 ORDER BY id",
           "QUERY PLAN:25\nIndex Scan using item_pkey on item\nEXPLAIN\n");
    EXPECT(f->s, "SELECT id, name FROM item WHERE cat = 1 ORDER BY name, cat "
                 "LIMIT 4",
           "id:23,name:25\n1|n1\n13|n13\n17|n17\n21|n21\nSELECT 4\n");
    EXPECT(f->s, "EXPLAIN SELECT id, name FROM item WHERE cat = 1 "
                 "ORDER BY name, cat LIMIT 4",
           "QUERY PLAN:25\nLimit\n  ->  Index Scan using item_cat_name on "
           "item\nEXPLAIN\n");
    /* what the scan's order does not give is sorted: descending, a key
     * after one the index lacks, an expression, another index's column */
    EXPECT(f->s, "SELECT id FROM item ORDER BY id DESC LIMIT 2",
           "id:23\n40\n39\nSELECT 2\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item WHERE cat = 1 ORDER BY id",
           "QUERY PLAN:25\nSort\n  ->  Index Scan using item_cat_name on item\n"
           "EXPLAIN\n");
    EXPECT(f->s, "SELECT id FROM item WHERE cat = 1 ORDER BY id LIMIT 3",
           "id:23\n1\n5\n9\nSELECT 3\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item ORDER BY id + 0",
           "QUERY PLAN:25\nSort\n  ->  Seq Scan on item\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM item ORDER BY cat, id",
           "QUERY PLAN:25\nSort\n  ->  Seq Scan on item\nEXPLAIN\n");
    /* no condition bounds it: an index whose leading column ORDER BY
     * names is read whole, rows with a null key last, as ASC puts them */
    EXPECT(f->s, "EXPLAIN SELECT id FROM item ORDER BY name LIMIT 2",
           "QUERY PLAN:25\nLimit\n  ->  Index Scan using item_name on item\n"
           "EXPLAIN\n");
    EXPECT(f->s, "INSERT INTO item VALUES (41, 0, NULL); "
                 "SELECT id FROM item ORDER BY name LIMIT 2",
           "INSERT 0 1\nid:23\n1\n10\nSELECT 2\n");
    EXPECT(f->s, "SELECT id, name FROM item ORDER BY name OFFSET 39",
           "id:23,name:25\n9|n9\n41|<null>\nSELECT 2\n");
    EXPECT(f->s, "DELETE FROM item WHERE id = 41", "DELETE 1\n");
    EXPECT(f->s, "EXPLAIN SELECT DISTINCT id FROM item ORDER BY id",
           "QUERY PLAN:25\nUnique\n  ->  Sort\n        ->  Seq Scan on item\n"
           "EXPLAIN\n");
    EXPECT(f->s, "SELECT id FROM item WHERE cat = 3 AND name = 'n7'",
           "id:23\n7\nSELECT 1\n");
    EXPECT(f->s, "SELECT id FROM item WHERE name >= 'n38' ORDER BY id",
           "id:23\n4\n5\n6\n7\n8\n9\n38\n39\n40\nSELECT 9\n");
    EXPECT(f->s, "SELECT count(*) FROM item WHERE cat = 9", "count:20\n0\nSELECT 1\n");
    /* An UPDATE through the index that moves each row further along it
     * changes each row once. */
    EXPECT(f->s, "EXPLAIN UPDATE item SET name = name || 'x' WHERE name > 'n3'",
           "QUERY PLAN:25\nUpdate on item\n  ->  Index Scan using item_name on "
           "item\nEXPLAIN\n");
    EXPECT(f->s, "UPDATE item SET name = name || 'x' WHERE name > 'n3'",
           "UPDATE 17\n");
    EXPECT(f->s, "SELECT count(*) FROM item WHERE name LIKE 'n%x' AND "
                 "name NOT LIKE '%xx'",
           "count:20\n17\nSELECT 1\n");
    EXPECT(f->s, "SELECT id, name FROM item WHERE name = 'n39x'",
           "id:23,name:25\n39|n39x\nSELECT 1\n");
    /* The inner side of a join, bound by the outer row. */
    EXPECT(f->s, "INSERT INTO cat VALUES (0, 'zero'), (1, 'one'), (2, 'two'), "
                 "(3, 'three')",
           "INSERT 0 4\n");
    EXPECT(f->s, "EXPLAIN SELECT c.label, i.id FROM cat c JOIN item i "
                 "ON i.cat = c.id",
           "QUERY PLAN:25\nNested Loop\n  ->  Seq Scan on cat c\n"
           "  ->  Index Scan using item_cat_name on item i\nEXPLAIN\n");
    EXPECT(f->s, "SELECT c.label, count(*) FROM cat c JOIN item i "
                 "ON i.cat = c.id GROUP BY 1 ORDER BY 1",
           "label:25,count:20\none|10\nthree|10\ntwo|10\nzero|10\n"
           "SELECT 4\n");
    /* No index on the join column: a hash join, inner and left, with
     * NULL keys joining nothing and every ON condition still checked. */
    EXPECT(f->s, "CREATE TABLE tag (item int, word text); "
                 "INSERT INTO tag SELECT g % 45, 'w' || g FROM "
                 "generate_series(1, 90) g; INSERT INTO tag VALUES (NULL, 'none')",
           "CREATE TABLE\nINSERT 0 90\nINSERT 0 1\n");
    EXPECT(f->s, "EXPLAIN SELECT count(*) FROM item i LEFT JOIN tag t "
                 "ON t.item = i.id AND t.word <> 'w3'",
           "QUERY PLAN:25\nAggregate\n  ->  Hash Left Join\n"
           "        ->  Seq Scan on item i\n        ->  Hash\n"
           "              ->  Seq Scan on tag t\nEXPLAIN\n");
    EXPECT(f->s, "SELECT count(*), count(t.word), sum(i.id) FROM item i "
                 "LEFT JOIN tag t ON t.item = i.id AND t.word <> 'w3'",
           "count:20,count:20,sum:20\n79|79|1637\nSELECT 1\n");
    EXPECT(f->s, "SELECT i.id, t.word FROM tag t JOIN item i ON i.cat = 2 "
                 "AND t.item = i.id WHERE i.id < 12 ORDER BY 2",
           "id:23,word:25\n10|w10\n2|w2\n2|w47\n6|w51\n10|w55\n6|w6\n"
           "SELECT 6\n");
    EXPECT(f->s, "SELECT count(*) FROM tag a JOIN tag b ON a.item = b.item",
           "count:20\n180\nSELECT 1\n");
    EXPECT(f->s, "DELETE FROM item WHERE cat = 1", "DELETE 10\n");
    EXPECT(f->s, "SELECT count(*) FROM item WHERE cat = 1",
           "count:20\n0\nSELECT 1\n");
    EXPECT(f->s, "SELECT count(*) FROM item", "count:20\n30\nSELECT 1\n");
}

/* Under repeatable read, two sessions update one row: the second gets
 * 40001 and its block fails; after ROLLBACK it may try again.  Under
 * read committed (the default) the second's statement sees the first's
 * commit. */
static void test_serialization(void **state)
{
    fixture *f = *state;
    sql_session *b;
    sql_error err;

    assert_int_equal(sql_session_create(f->db, &b, &err), KEEL_OK);
    EXPECT(f->s, "CREATE TABLE acc (id int PRIMARY KEY, bal int); "
                 "INSERT INTO acc VALUES (1, 0)",
           "CREATE TABLE\nINSERT 0 1\n");
    EXPECT(f->s, "BEGIN; UPDATE acc SET bal = bal + 1 WHERE id = 1",
           "BEGIN\nUPDATE 1\n");
    EXPECT(b, "BEGIN ISOLATION LEVEL REPEATABLE READ; "
              "SELECT bal FROM acc WHERE id = 1; SHOW transaction_isolation",
           "BEGIN\nbal:23\n0\nSELECT 1\ntransaction_isolation:25\n"
           "repeatable read\nSHOW\n");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    EXPECT(b, "UPDATE acc SET bal = bal + 10 WHERE id = 1",
           "ERROR 40001: could not serialize access due to concurrent update\n");
    assert_int_equal(sql_txn_status(b), 'E');
    EXPECT(b, "ROLLBACK; UPDATE acc SET bal = bal + 10 WHERE id = 1; "
              "SELECT bal FROM acc",
           "ROLLBACK\nUPDATE 1\nbal:23\n11\nSELECT 1\n");
    /* Read committed: a later statement sees a commit since the block's
     * first, and an update computes from the row's newest version. */
    EXPECT(b, "SHOW transaction_isolation; BEGIN; SELECT bal FROM acc",
           "transaction_isolation:25\nread committed\nSHOW\nBEGIN\n"
           "bal:23\n11\nSELECT 1\n");
    EXPECT(f->s, "UPDATE acc SET bal = bal + 5 WHERE id = 1", "UPDATE 1\n");
    EXPECT(b, "SELECT bal FROM acc; UPDATE acc SET bal = bal * 2; COMMIT; "
              "SELECT bal FROM acc",
           "bal:23\n16\nSELECT 1\nUPDATE 1\nCOMMIT\nbal:23\n32\n"
           "SELECT 1\n");
    EXPECT(b, "BEGIN; SELECT 1; SET TRANSACTION ISOLATION LEVEL "
              "REPEATABLE READ",
           "BEGIN\n?column?:23\n1\nSELECT 1\nERROR 25001: SET "
           "TRANSACTION ISOLATION LEVEL must be called before any query\n");
    EXPECT(b, "ROLLBACK; SET default_transaction_isolation = 'serializable'",
           "ROLLBACK\nERROR 0A000: isolation level serializable is not "
           "supported yet\n");
    EXPECT(b, "SET default_transaction_isolation = 'repeatable read'; BEGIN; "
              "SHOW transaction_isolation; COMMIT; "
              "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "
              "READ COMMITTED; SHOW default_transaction_isolation",
           "SET\nBEGIN\ntransaction_isolation:25\nrepeatable read\nSHOW\n"
           "COMMIT\nSET\ndefault_transaction_isolation:25\nread committed\n"
           "SHOW\n");
    EXPECT(b, "SET default_transaction_isolation = 'sometimes'",
           "ERROR 22023: invalid value for parameter "
           "\"default_transaction_isolation\": \"sometimes\"\n");
    sql_session_destroy(b);
}

/* A statement of session s run on a thread of its own. */
typedef struct bg_stmt {
    pthread_t th;
    sql_session *s;
    const char *text;
    capture out;
} bg_stmt;

static void *bg_run(void *arg)
{
    bg_stmt *b = arg;

    run_into(b->s, b->text, &b->out);
    return NULL;
}

static void bg_start(bg_stmt *b, sql_session *s, const char *text)
{
    b->s = s;
    b->text = text;
    assert_int_equal(pthread_create(&b->th, NULL, bg_run, b), 0);
    clock_sleep_us(100000); /* long enough to be waiting */
}

static const char *bg_join(bg_stmt *b)
{
    assert_int_equal(pthread_join(b->th, NULL), 0);
    return b->out.buf;
}

/*
 * INSERT, UPDATE and DELETE in WITH: each runs once even when nothing
 * reads it; the rest of the statement may not read a table one of them
 * changes (it would see the change, where PostgreSQL's does not): 0A000,
 * the statement undone; the next statement reads it.
 */
static void test_with_dml(void **state)
{
    fixture *f = *state;

    EXPECT(f->s, "CREATE TABLE wd (id int PRIMARY KEY, n int); "
                 "INSERT INTO wd VALUES (1, 1), (2, 2), (3, 3)",
           "CREATE TABLE\nINSERT 0 3\n");
    EXPECT(f->s, "WITH d AS (DELETE FROM wd WHERE id = 1 RETURNING n) "
                 "SELECT count(*) FROM wd",
           "ERROR 0A000: reading a table that a WITH query's INSERT, UPDATE "
           "or DELETE changes is not supported yet at 74\n");
    EXPECT(f->s, "WITH u AS (UPDATE wd SET n = n + 1 RETURNING id) "
                 "UPDATE wd SET n = 0 WHERE id IN (SELECT id FROM u)",
           "ERROR 0A000: reading a table that a WITH query's INSERT, UPDATE "
           "or DELETE changes is not supported yet at 57\n");
    EXPECT(f->s, "WITH a AS (INSERT INTO wd VALUES (4, 4) RETURNING id), "
                 "b AS (DELETE FROM wd WHERE id = 2 RETURNING id) "
                 "SELECT 1",
           "ERROR 0A000: reading a table that a WITH query's INSERT, UPDATE "
           "or DELETE changes is not supported yet at 74\n");
    /* unread, it runs all the same; the next statement sees it */
    EXPECT(f->s, "WITH a AS (INSERT INTO wd VALUES (4, 4) RETURNING id), "
                 "b AS (SELECT count(*) AS c FROM a) SELECT c FROM b; "
                 "WITH gone AS (DELETE FROM wd WHERE id = 2) SELECT 1; "
                 "SELECT id, n FROM wd ORDER BY id",
           "c:20\n1\nSELECT 1\n?column?:23\n1\nSELECT 1\n"
           "id:23,n:23\n1|1\n3|3\n4|4\nSELECT 3\n");
    /* an error after the DELETE ran undoes it */
    EXPECT(f->s, "WITH d AS (DELETE FROM wd RETURNING id) "
                 "SELECT 1 / (id - id) FROM d",
           "?column?:23\nERROR 22012: division by zero\n");
    EXPECT(f->s, "SELECT count(*) FROM wd", "count:20\n3\nSELECT 1\n");
    /* only at the top: a subquery may run many times */
    EXPECT(f->s, "SELECT id, (WITH d AS (DELETE FROM wd RETURNING id) "
                 "SELECT count(*) FROM d) FROM generate_series(1, 2) id",
           "ERROR 0A000: WITH clause containing a data-modifying statement "
           "must be at the top level at 18\n");
    EXPECT(f->s, "WITH a AS (WITH d AS (DELETE FROM wd RETURNING id) "
                 "SELECT * FROM d) SELECT * FROM a",
           "ERROR 0A000: WITH clause containing a data-modifying statement "
           "must be at the top level at 17\n");
    EXPECT(f->s, "SELECT count(*) FROM wd", "count:20\n3\nSELECT 1\n");
    EXPECT(f->s, "WITH RECURSIVE d AS (DELETE FROM wd RETURNING id) "
                 "SELECT * FROM d",
           "ERROR 0A000: INSERT, UPDATE and DELETE in WITH RECURSIVE is not "
           "supported yet at 16\n");
}

/*
 * SELECT ... FOR UPDATE: a second locker or writer of the row waits for
 * the first; under read committed it then locks the newest version if
 * that still passes its WHERE (two workers taking the first new job: the
 * second finds it taken and takes the next), under repeatable read it
 * fails with 40001.  SKIP LOCKED passes over locked rows, NOWAIT fails.
 */
static void test_for_update(void **state)
{
    fixture *f = *state;
    sql_session *b;
    sql_error err;
    bg_stmt bg = {0};

    assert_int_equal(sql_session_create(f->db, &b, &err), KEEL_OK);
    EXPECT(f->s, "CREATE TABLE fq (id int PRIMARY KEY, state text, n int); "
                 "INSERT INTO fq VALUES (1, 'new', 0), (2, 'new', 0)",
           "CREATE TABLE\nINSERT 0 2\n");
    /* EXPLAIN: PostgreSQL's Limit over LockRows over the query */
    EXPECT(f->s,
           "EXPLAIN SELECT id FROM fq WHERE state = 'new' ORDER BY n, id "
           "LIMIT 1 FOR UPDATE SKIP LOCKED",
           "QUERY PLAN:25\nLimit\n  ->  LockRows\n        ->  Sort\n"
           "              ->  Seq Scan on fq\nEXPLAIN\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM fq WHERE id = 2 FOR SHARE",
           "QUERY PLAN:25\nLockRows\n  ->  Index Scan using fq_pkey on fq\n"
           "EXPLAIN\n");
    /* a worker takes job 1; the other waits, finds it taken once the
     * first commits, and takes job 2 (LIMIT counts rows locked) */
    EXPECT(f->s, "BEGIN; SELECT id FROM fq WHERE state = 'new' ORDER BY id "
                 "LIMIT 1 FOR UPDATE",
           "BEGIN\nid:23\n1\nSELECT 1\n");
    bg_start(&bg, b, "SELECT id, state FROM fq WHERE state = 'new' "
                     "ORDER BY id LIMIT 1 FOR UPDATE");
    EXPECT(f->s, "UPDATE fq SET state = 'done' WHERE id = 1; COMMIT",
           "UPDATE 1\nCOMMIT\n");
    assert_string_equal(bg_join(&bg), "id:23,state:25\n2|new\nSELECT 1\n");
    /* SKIP LOCKED passes over a locked job, NOWAIT fails on it */
    EXPECT(f->s, "INSERT INTO fq VALUES (3, 'new', 0), (4, 'new', 0)",
           "INSERT 0 2\n");
    EXPECT(f->s, "BEGIN; SELECT id FROM fq WHERE state = 'new' ORDER BY id "
                 "LIMIT 1 FOR UPDATE",
           "BEGIN\nid:23\n2\nSELECT 1\n");
    EXPECT(b, "SELECT id FROM fq WHERE state = 'new' ORDER BY id "
              "LIMIT 1 FOR UPDATE SKIP LOCKED",
           "id:23\n3\nSELECT 1\n");
    EXPECT(b, "BEGIN; SELECT id FROM fq WHERE state = 'new' ORDER BY id "
              "FOR NO KEY UPDATE SKIP LOCKED",
           "BEGIN\nid:23\n3\n4\nSELECT 2\n");
    EXPECT(b, "SELECT id FROM fq WHERE id = 2 FOR UPDATE NOWAIT",
           "id:23\nERROR 55P03: could not obtain lock on row in relation "
           "\"fq\"\n");
    EXPECT(b, "ROLLBACK", "ROLLBACK\n");
    EXPECT(f->s, "SELECT id FROM fq WHERE id > 1 ORDER BY id OFFSET 1 "
                 "FOR UPDATE NOWAIT",
           "id:23\n3\n4\nSELECT 2\n");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    /* a row changed while the locker waits: it gets the new version */
    EXPECT(f->s, "BEGIN; UPDATE fq SET n = n + 1 WHERE id = 2",
           "BEGIN\nUPDATE 1\n");
    bg_start(&bg, b, "SELECT n FROM fq WHERE id = 2 FOR UPDATE");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(bg_join(&bg), "n:23\n1\nSELECT 1\n");
    /* a locked row holds off writers until its locker ends */
    EXPECT(f->s, "BEGIN; SELECT n FROM fq WHERE id = 2 FOR SHARE",
           "BEGIN\nn:23\n1\nSELECT 1\n");
    bg_start(&bg, b, "UPDATE fq SET n = 10 WHERE id = 2 RETURNING n");
    EXPECT(f->s, "SELECT n FROM fq WHERE id = 2", "n:23\n1\nSELECT 1\n");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(bg_join(&bg), "n:23\n10\nUPDATE 1\n");
    /* shared locks: two sharers of a row at once, neither waiting; a
     * writer waits for both (lock_timeout ends its wait while either
     * holds on), and nothing was written for them */
    {
        sql_session *c;
        capture *cc = calloc(1, sizeof(*cc));
        assert_non_null(cc);
        assert_int_equal(sql_session_create(f->db, &c, &err), KEEL_OK);
        EXPECT(f->s, "BEGIN; SELECT n FROM fq WHERE id = 2 FOR SHARE",
               "BEGIN\nn:23\n10\nSELECT 1\n");
        EXPECT(b, "SET lock_timeout = '10s'; BEGIN; "
                  "SELECT n FROM fq WHERE id = 2 FOR KEY SHARE",
               "SET\nBEGIN\nn:23\n10\nSELECT 1\n");
        assert_string_equal(run_into(c, "SET lock_timeout = '100ms'", cc),
                            "SET\n");
        assert_non_null(strstr(run_into(c, "UPDATE fq SET n = 11 WHERE id = 2",
                                        cc),
                               "ERROR 55P03: canceling statement due to lock "
                               "timeout"));
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_non_null(strstr(run_into(c, "DELETE FROM fq WHERE id = 2", cc),
                               "ERROR 55P03: canceling statement due to lock "
                               "timeout"));
        EXPECT(b, "COMMIT; RESET lock_timeout", "COMMIT\nRESET\n");
        assert_string_equal(run_into(c, "UPDATE fq SET n = 11 WHERE id = 2 "
                                        "RETURNING n",
                                     cc),
                            "n:23\n11\nUPDATE 1\n");
        /* FOR KEY SHARE holds off a delete and a change of the key, not
         * an update of other columns, whose new version it then holds */
        EXPECT(f->s, "BEGIN; SELECT n FROM fq WHERE id = 2 FOR KEY SHARE",
               "BEGIN\nn:23\n11\nSELECT 1\n");
        assert_string_equal(run_into(c, "UPDATE fq SET n = 12 WHERE id = 2 "
                                        "RETURNING n",
                                     cc),
                            "n:23\n12\nUPDATE 1\n");
        assert_non_null(strstr(run_into(c, "DELETE FROM fq WHERE id = 2", cc),
                               "ERROR 55P03: canceling statement due to lock "
                               "timeout"));
        assert_non_null(strstr(run_into(c, "UPDATE fq SET id = 20 "
                                           "WHERE id = 2",
                                        cc),
                               "ERROR 55P03: canceling statement due to lock "
                               "timeout"));
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(run_into(c, "UPDATE fq SET n = 11 WHERE id = 2",
                                     cc),
                            "UPDATE 1\n");
        /* FOR NO KEY UPDATE lets FOR KEY SHARE in, not FOR SHARE; FOR
         * UPDATE neither */
        EXPECT(f->s, "BEGIN; SELECT n FROM fq WHERE id = 2 FOR NO KEY UPDATE",
               "BEGIN\nn:23\n11\nSELECT 1\n");
        assert_string_equal(run_into(c, "BEGIN; SELECT n FROM fq WHERE id = 2 "
                                        "FOR KEY SHARE; COMMIT",
                                     cc),
                            "BEGIN\nn:23\n11\nSELECT 1\nCOMMIT\n");
        assert_non_null(strstr(run_into(c, "SELECT n FROM fq WHERE id = 2 "
                                           "FOR SHARE",
                                        cc),
                               "ERROR 55P03: canceling statement due to lock "
                               "timeout"));
        EXPECT(f->s, "COMMIT; BEGIN; SELECT n FROM fq WHERE id = 2 FOR UPDATE",
               "COMMIT\nBEGIN\nn:23\n11\nSELECT 1\n");
        assert_non_null(strstr(run_into(c, "SELECT n FROM fq WHERE id = 2 "
                                           "FOR KEY SHARE",
                                        cc),
                               "ERROR 55P03: canceling statement due to lock "
                               "timeout"));
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        /* Two sharers that both want FOR UPDATE wait for each other:
         * one gets 40P01, and the other then has its lock */
        EXPECT(f->s, "BEGIN; SELECT n FROM fq WHERE id = 2 FOR SHARE",
               "BEGIN\nn:23\n11\nSELECT 1\n");
        EXPECT(b, "BEGIN; SELECT n FROM fq WHERE id = 2 FOR SHARE",
               "BEGIN\nn:23\n11\nSELECT 1\n");
        bg_start(&bg, f->s, "SELECT n FROM fq WHERE id = 2 FOR UPDATE");
        {
            const char *b_out = run(b, "SELECT n FROM fq WHERE id = 2 "
                                       "FOR UPDATE");
            if (strstr(b_out, "40P01") != NULL) {
                EXPECT(b, "ROLLBACK", "ROLLBACK\n");
                assert_string_equal(bg_join(&bg), "n:23\n11\nSELECT 1\n");
                EXPECT(f->s, "COMMIT", "COMMIT\n");
            } else {
                assert_non_null(strstr(bg_join(&bg),
                                       "ERROR 40P01: deadlock detected"));
                assert_string_equal(b_out, "n:23\n11\nSELECT 1\n");
                EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
                EXPECT(b, "COMMIT", "COMMIT\n");
            }
        }
        /* ROLLBACK TO releases the shared locks taken since the
         * savepoint, not those taken before it */
        EXPECT(f->s, "BEGIN; SAVEPOINT a; "
                     "SELECT n FROM fq WHERE id = 2 FOR SHARE; ROLLBACK TO a",
               "BEGIN\nSAVEPOINT\nn:23\n11\nSELECT 1\nROLLBACK\n");
        assert_string_equal(run_into(c, "UPDATE fq SET n = 12 WHERE id = 2",
                                     cc),
                            "UPDATE 1\n");
        EXPECT(f->s, "SELECT n FROM fq WHERE id = 2 FOR SHARE; SAVEPOINT b; "
                     "SELECT n FROM fq WHERE id = 1 FOR SHARE; ROLLBACK TO b",
               "n:23\n12\nSELECT 1\nSAVEPOINT\nn:23\n0\nSELECT 1\n"
               "ROLLBACK\n");
        assert_non_null(strstr(run_into(c, "UPDATE fq SET n = 13 WHERE id = 2",
                                        cc),
                               "ERROR 55P03: canceling statement due to lock "
                               "timeout"));
        assert_string_equal(run_into(c, "UPDATE fq SET n = 0 WHERE id = 1",
                                     cc),
                            "UPDATE 1\n");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        sql_session_destroy(c);
        free(cc);
    }
    /* repeatable read: a row changed since the snapshot is 40001 */
    EXPECT(b, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT n FROM fq "
              "WHERE id = 1",
           "BEGIN\nn:23\n0\nSELECT 1\n");
    EXPECT(f->s, "UPDATE fq SET n = 5 WHERE id = 1", "UPDATE 1\n");
    EXPECT(b, "SELECT n FROM fq WHERE id = 1 FOR UPDATE",
           "n:23\nERROR 40001: could not serialize access due to concurrent "
           "update\n");
    EXPECT(b, "ROLLBACK", "ROLLBACK\n");
    /* LIMIT's rows are found in batches: with more rows locked than the
     * first batch holds (LIMIT 2: 12 rows), the next goes on past them,
     * never taking a row twice, in order or among ties */
    EXPECT(f->s, "CREATE TABLE fb (id int PRIMARY KEY, n int); "
                 "INSERT INTO fb SELECT g, 0 FROM generate_series(1, 40) g",
           "CREATE TABLE\nINSERT 0 40\n");
    assert_non_null(strstr(run(b, "BEGIN; SELECT id FROM fb WHERE id <= 15 "
                                  "FOR UPDATE"),
                           "\n15\nSELECT 15\n"));
    EXPECT(f->s, "BEGIN; SELECT id FROM fb ORDER BY id LIMIT 2 "
                 "FOR UPDATE SKIP LOCKED",
           "BEGIN\nid:23\n16\n17\nSELECT 2\n");
    /* (its own locks on 16 and 17 hold it off no more than PostgreSQL's) */
    EXPECT(f->s, "SELECT id FROM fb ORDER BY id LIMIT 2 OFFSET 3 "
                 "FOR UPDATE SKIP LOCKED",
           "id:23\n19\n20\nSELECT 2\n");
    EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
    {
        /* ties (every n is 0), sorted: 20 rows, none twice, none b's */
        const char *got = run(f->s, "SELECT id FROM fb ORDER BY n LIMIT 20 "
                                    "FOR UPDATE SKIP LOCKED");
        bool seen[41] = {false};
        int rows = 0, id;
        const char *p = strchr(got, '\n');
        assert_non_null(strstr(got, "SELECT 20\n"));
        while (p != NULL && sscanf(p + 1, "%d", &id) == 1) {
            assert_true(id > 15 && id <= 40 && !seen[id]);
            seen[id] = true;
            rows++;
            p = strchr(p + 1, '\n');
        }
        assert_int_equal(rows, 20);
    }
    EXPECT(b, "ROLLBACK", "ROLLBACK\n");
    /* what it does not do */
    EXPECT(f->s, "SELECT 1 FROM fq, fq AS g FOR UPDATE",
           "ERROR 0A000: FOR UPDATE and FOR SHARE but of one table is not "
           "supported yet\n");
    sql_session_destroy(b);
}

/*
 * Read committed's waits: an UPDATE or DELETE that meets a row another
 * transaction is changing waits for it; then it goes on if that one
 * aborted, skips the row if it was deleted, and checks the row's newest
 * version against its WHERE again if it was updated; in a table without
 * a primary key too.  Two transactions waiting for each other's rows: one
 * gets 40P01 and the other goes on.
 */
static void test_read_committed_waits(void **state)
{
    fixture *f = *state;
    sql_session *b;
    sql_error err;
    bg_stmt bg = {0};
    const char *a_out, *b_out;

    assert_int_equal(sql_session_create(f->db, &b, &err), KEEL_OK);
    EXPECT(f->s, "CREATE TABLE acc (id int PRIMARY KEY, bal int); "
                 "INSERT INTO acc VALUES (1, 0), (2, 0), (3, 0)",
           "CREATE TABLE\nINSERT 0 3\n");
    /* Updated and committed while b waits: b adds to the new balance. */
    EXPECT(f->s, "BEGIN; UPDATE acc SET bal = bal + 1 WHERE id = 1",
           "BEGIN\nUPDATE 1\n");
    bg_start(&bg, b, "UPDATE acc SET bal = bal + 10 WHERE id = 1");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(bg_join(&bg), "UPDATE 1\n");
    EXPECT(f->s, "SELECT bal FROM acc WHERE id = 1", "bal:23\n11\nSELECT 1\n");
    /* Aborted while b waits: b changes the version it found. */
    EXPECT(f->s, "BEGIN; UPDATE acc SET bal = 100 WHERE id = 1",
           "BEGIN\nUPDATE 1\n");
    bg_start(&bg, b, "UPDATE acc SET bal = bal + 1 WHERE id = 1");
    EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
    assert_string_equal(bg_join(&bg), "UPDATE 1\n");
    EXPECT(f->s, "SELECT bal FROM acc WHERE id = 1", "bal:23\n12\nSELECT 1\n");
    /* Updated to fail b's WHERE: b's scan found the row, the re-check
     * drops it. */
    EXPECT(f->s, "BEGIN; UPDATE acc SET bal = 500 WHERE id = 1",
           "BEGIN\nUPDATE 1\n");
    bg_start(&bg, b, "UPDATE acc SET bal = 0 WHERE bal < 50 RETURNING id");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    b_out = bg_join(&bg);
    assert_true(strstr(b_out, "\n2\n") != NULL && strstr(b_out, "\n3\n") != NULL &&
                strstr(b_out, "\n1\n") == NULL);
    assert_true(strstr(b_out, "UPDATE 2\n") != NULL);
    /* Deleted while b waits: b's DELETE finds nothing left. */
    EXPECT(f->s, "BEGIN; DELETE FROM acc WHERE id = 1", "BEGIN\nDELETE 1\n");
    bg_start(&bg, b, "DELETE FROM acc WHERE id = 1");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(bg_join(&bg), "DELETE 0\n");
    /* A cycle: f->s waits for b's row 3, then b for f->s's row 2. */
    EXPECT(f->s, "BEGIN; UPDATE acc SET bal = 1 WHERE id = 2",
           "BEGIN\nUPDATE 1\n");
    EXPECT(b, "BEGIN; UPDATE acc SET bal = 2 WHERE id = 3",
           "BEGIN\nUPDATE 1\n");
    bg_start(&bg, f->s, "UPDATE acc SET bal = 1 WHERE id = 3");
    b_out = run(b, "UPDATE acc SET bal = 2 WHERE id = 2");
    if (strstr(b_out, "40P01") != NULL) {
        EXPECT(b, "ROLLBACK", "ROLLBACK\n");
        assert_string_equal(bg_join(&bg), "UPDATE 1\n");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
    } else {
        /* f->s's wait found the cycle first (its own check came after
         * b's wait began). */
        a_out = bg_join(&bg);
        assert_true(strstr(a_out, "ERROR 40P01: deadlock detected") != NULL);
        assert_string_equal(b_out, "UPDATE 1\n");
        EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
        EXPECT(b, "COMMIT", "COMMIT\n");
    }
    EXPECT(f->s, "SELECT count(*) FROM acc WHERE bal IN (1, 2)",
           "count:20\n2\nSELECT 1\n");
    /* A table without a primary key: the same waits, each row changed
     * through the scan that returned it; two identical rows both. */
    EXPECT(f->s, "CREATE TABLE ledger (acct int, bal int); "
                 "INSERT INTO ledger VALUES (1, 0), (1, 0), (2, 0)",
           "CREATE TABLE\nINSERT 0 3\n");
    EXPECT(f->s, "BEGIN; UPDATE ledger SET bal = bal + 1 WHERE acct = 1",
           "BEGIN\nUPDATE 2\n");
    bg_start(&bg, b, "UPDATE ledger SET bal = bal + 10 WHERE acct = 1");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(bg_join(&bg), "UPDATE 2\n");
    EXPECT(f->s, "SELECT count(*), sum(bal) FROM ledger WHERE bal = 11",
           "count:20,sum:20\n2|22\nSELECT 1\n");
    EXPECT(f->s, "BEGIN; UPDATE ledger SET bal = 100 WHERE acct = 2",
           "BEGIN\nUPDATE 1\n");
    bg_start(&bg, b, "UPDATE ledger SET bal = bal + 1 WHERE acct = 2");
    EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
    assert_string_equal(bg_join(&bg), "UPDATE 1\n");
    EXPECT(f->s, "SELECT bal FROM ledger WHERE acct = 2",
           "bal:23\n1\nSELECT 1\n");
    EXPECT(f->s, "BEGIN; UPDATE ledger SET acct = 5 WHERE acct = 2",
           "BEGIN\nUPDATE 1\n");
    bg_start(&bg, b, "UPDATE ledger SET bal = 0 WHERE acct < 3 RETURNING acct");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(bg_join(&bg), "acct:23\n1\n1\nUPDATE 2\n");
    EXPECT(f->s, "BEGIN; DELETE FROM ledger WHERE acct = 1",
           "BEGIN\nDELETE 2\n");
    bg_start(&bg, b, "DELETE FROM ledger WHERE acct = 1");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(bg_join(&bg), "DELETE 0\n");
    EXPECT(f->s, "SELECT acct, bal FROM ledger",
           "acct:23,bal:23\n5|1\nSELECT 1\n");
    /* A wait past lock_timeout fails with 55P03. */
    EXPECT(f->s, "BEGIN; UPDATE acc SET bal = 7 WHERE id = 2",
           "BEGIN\nUPDATE 1\n");
    b_out = run(b, "SET lock_timeout = 50; UPDATE acc SET bal = 8 WHERE id = 2");
    assert_true(strstr(b_out, "ERROR 55P03: canceling statement due to lock "
                              "timeout") != NULL);
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    sql_session_destroy(b);
}

/* ---- concurrent TRUNCATE ------------------------------------------------ */

typedef struct trunc_worker {
    pthread_t th;
    keel_db *db;
    int rounds, number;
    char failure[512];
    capture out;
} trunc_worker;

static void *trunc_work(void *arg)
{
    trunc_worker *w = arg;
    sql_session *s;
    sql_error err;
    char q[128];

    if (sql_session_create(w->db, &s, &err) != KEEL_OK) {
        snprintf(w->failure, sizeof(w->failure), "session: %.200s", err.message);
        return NULL;
    }
    for (int i = 0; i < w->rounds && w->failure[0] == '\0'; i++) {
        const char *got;
        snprintf(q, sizeof(q),
                 "BEGIN; TRUNCATE tr; INSERT INTO tr VALUES (%d, %d); COMMIT",
                 w->number, i);
        got = run_into(s, q, &w->out);
        if (strcmp(got, "BEGIN\nTRUNCATE TABLE\nINSERT 0 1\nCOMMIT\n") != 0)
            snprintf(w->failure, sizeof(w->failure), "round %d: %.400s", i, got);
    }
    sql_session_destroy(s);
    return NULL;
}

/* Sessions truncating one table at once queue on its lock, each taking
 * ACCESS EXCLUSIVE before it reads the table (a weaker lock first would
 * let two of them wait for each other); the table keeps its index. */
static void test_concurrent_truncate(void **state)
{
    fixture *f = *state;
    trunc_worker w[3];

    EXPECT(f->s, "CREATE TABLE tr (id int PRIMARY KEY, v int); "
                 "CREATE UNIQUE INDEX tr_v ON tr (v)",
           "CREATE TABLE\nCREATE INDEX\n");
    memset(w, 0, sizeof(w));
    for (int i = 0; i < 3; i++) {
        w[i].db = f->db;
        w[i].rounds = 40;
        w[i].number = i + 1;
        assert_int_equal(pthread_create(&w[i].th, NULL, trunc_work, &w[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(w[i].th, NULL), 0);
        if (w[i].failure[0] != '\0')
            fail_msg("worker %d: %s", i, w[i].failure);
    }
    EXPECT(f->s, "SELECT count(*), max(v) FROM tr", "count:20,max:23\n1|39\nSELECT 1\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM tr WHERE v = 39",
           "QUERY PLAN:25\nIndex Scan using tr_v on tr\nEXPLAIN\n");
}

/* ---- read committed under load ------------------------------------------ */

#define RC_THREADS  4
#define RC_ACCOUNTS 6

typedef struct rc_worker {
    pthread_t th;
    keel_db *db;
    double seconds;
    int number;
    long commits, deadlocks, serialization;
    long net[RC_ACCOUNTS + 1]; /* committed changes per account */
    char failure[512];          /* the first unexpected answer */
    capture out;
} rc_worker;

/* Runs text in w's session; true if the answer begins with want, else
 * false, with the answer kept unless it is an expected retry (40P01 or
 * 40001, counted). */
static bool rc_step(rc_worker *w, sql_session *s, const char *text,
                    const char *want)
{
    const char *got = run_into(s, text, &w->out);

    if (strncmp(got, want, strlen(want)) == 0)
        return true;
    if (strstr(got, "ERROR 40P01") != NULL)
        w->deadlocks++;
    else if (strstr(got, "ERROR 40001") != NULL)
        w->serialization++;
    else if (w->failure[0] == '\0')
        snprintf(w->failure, sizeof(w->failure), "%s -> %s", text, got);
    return false;
}

/* Transfers of one unit between two random accounts, every transfer
 * counted in row 0, most under read committed and some under repeatable
 * read; deadlocks (the two accounts taken in either order) and, under
 * repeatable read, serialization failures are rolled back. */
static void *rc_work(void *arg)
{
    rc_worker *w = arg;
    sql_session *s;
    sql_error err;
    uint64_t rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(w->number + 1);
    uint64_t end = clock_now_ns() + (uint64_t)(w->seconds * 1e9);

    if (sql_session_create(w->db, &s, &err) != KEEL_OK) {
        snprintf(w->failure, sizeof(w->failure), "session: %.200s", err.message);
        return NULL;
    }
    while (clock_now_ns() < end && w->failure[0] == '\0') {
        int a = 1 + (int)(tu_rand(&rnd) % RC_ACCOUNTS);
        int b = 1 + (int)(tu_rand(&rnd) % (RC_ACCOUNTS - 1));
        bool rr = tu_rand(&rnd) % 8 == 0;
        char q1[96], q2[96];
        if (b >= a)
            b++;
        snprintf(q1, sizeof(q1), "UPDATE acc SET bal = bal + 1 WHERE id = %d", a);
        snprintf(q2, sizeof(q2), "UPDATE acc SET bal = bal - 1 WHERE id = %d", b);
        if (!rc_step(w, s, rr ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN",
                     "BEGIN\n"))
            break;
        if (rc_step(w, s, q1, "UPDATE 1\n") && rc_step(w, s, q2, "UPDATE 1\n") &&
            rc_step(w, s, "UPDATE acc SET bal = bal + 1 WHERE id = 0",
                    "UPDATE 1\n")) {
            if (rc_step(w, s, "COMMIT", "COMMIT\n")) {
                w->commits++;
                w->net[a]++;
                w->net[b]--;
            }
        } else {
            rc_step(w, s, "ROLLBACK", "ROLLBACK\n");
        }
    }
    sql_session_destroy(s);
    return NULL;
}

/*
 * Concurrent transfers: the sum of the accounts stays 0, each account
 * holds exactly what the committed transfers moved, and row 0 counts
 * every commit (no update lost to a wait or a re-check).  Read
 * committed's only retries are deadlocks.
 */
static void test_read_committed_stress(void **state)
{
    fixture *f = *state;
    rc_worker w[RC_THREADS];
    long commits = 0, deadlocks = 0, serialization = 0;
    char want[256], q[96];

    EXPECT(f->s, "CREATE TABLE acc (id int PRIMARY KEY, bal int)",
           "CREATE TABLE\n");
    for (int i = 0; i <= RC_ACCOUNTS; i++) {
        snprintf(q, sizeof(q), "INSERT INTO acc VALUES (%d, 0)", i);
        EXPECT(f->s, q, "INSERT 0 1\n");
    }
    memset(w, 0, sizeof(w));
    for (int i = 0; i < RC_THREADS; i++) {
        w[i].db = f->db;
        w[i].number = i;
        w[i].seconds = tu_stress_seconds(1.0);
        assert_int_equal(pthread_create(&w[i].th, NULL, rc_work, &w[i]), 0);
    }
    for (int i = 0; i < RC_THREADS; i++) {
        assert_int_equal(pthread_join(w[i].th, NULL), 0);
        if (w[i].failure[0] != '\0')
            fail_msg("worker %d: %s", i, w[i].failure);
        commits += w[i].commits;
        deadlocks += w[i].deadlocks;
        serialization += w[i].serialization;
    }
    print_message("read committed transfers: %ld committed, %ld deadlocks, "
                  "%ld serialization failures (repeatable read)\n",
                  commits, deadlocks, serialization);
    assert_true(commits > 0);
    snprintf(want, sizeof(want), "bal:23\n%ld\nSELECT 1\n", commits);
    EXPECT(f->s, "SELECT bal FROM acc WHERE id = 0", want);
    EXPECT(f->s, "SELECT sum(bal) FROM acc WHERE id > 0",
           "sum:20\n0\nSELECT 1\n");
    for (int a = 1; a <= RC_ACCOUNTS; a++) {
        long net = 0;
        for (int i = 0; i < RC_THREADS; i++)
            net += w[i].net[a];
        snprintf(q, sizeof(q), "SELECT bal FROM acc WHERE id = %d", a);
        snprintf(want, sizeof(want), "bal:23\n%ld\nSELECT 1\n", net);
        EXPECT(f->s, q, want);
    }
}

/* ---- ordered scans beside writers -------------------------------------- */

typedef struct ord_worker {
    pthread_t th;
    keel_db *db;
    int number;
    double seconds;
    long rounds;
    char failure[512];
} ord_worker;

/* Whether the ids of got (one a line after its header, then the tag)
 * rise strictly: no row twice and none out of order; *n the rows. */
static bool ids_rise(const char *got, int *n)
{
    const char *p = strchr(got, '\n');
    long last = -1, id;

    *n = 0;
    while (p != NULL && sscanf(p + 1, "%ld\n", &id) == 1 &&
           strncmp(p + 1, "SELECT", 6) != 0) {
        if (id <= last)
            return false;
        last = id;
        (*n)++;
        p = strchr(p + 1, '\n');
    }
    return p != NULL && strncmp(p + 1, "SELECT", 6) == 0;
}

/* Workers 0 and 1 write (move rows between groups, delete and insert
 * again, update their values); the others read in index order with
 * LIMIT, streaming without a sort, and check what they read rises. */
static void *ord_work(void *arg)
{
    ord_worker *w = arg;
    sql_session *s;
    sql_error err;
    capture *c = calloc(1, sizeof(*c));
    uint64_t rng = 0x2545F4914F6CDD1Dull * (uint64_t)(w->number + 1);
    uint64_t end = clock_now_ns() + (uint64_t)(w->seconds * 1e9);
    char q[200];

    assert_non_null(c);
    assert_int_equal(sql_session_create(w->db, &s, &err), KEEL_OK);
    while (clock_now_ns() < end && w->failure[0] == '\0') {
        int id = (int)(tu_rand(&rng) % 400), g = (int)(tu_rand(&rng) % 4);
        const char *got;
        int n = 0;
        if (w->number < 2) {
            switch (tu_rand(&rng) % 3) {
            case 0:
                snprintf(q, sizeof(q), "UPDATE og SET g = %d, v = v + 1 "
                                       "WHERE id = %d", g, id);
                break;
            case 1:
                snprintf(q, sizeof(q), "DELETE FROM og WHERE id = %d", id);
                break;
            default:
                snprintf(q, sizeof(q), "INSERT INTO og VALUES (%d, %d, 0) "
                                       "ON CONFLICT (id) DO NOTHING", id, g);
            }
            got = run_into(s, q, c);
            if (strstr(got, "ERROR") != NULL &&
                strstr(got, "ERROR 40") == NULL) /* retried by clients */
                snprintf(w->failure, sizeof(w->failure), "%s: %s", q, got);
        } else {
            int k = (int)(tu_rand(&rng) % 3);
            if (k == 0)
                snprintf(q, sizeof(q), "SELECT id FROM og WHERE id >= %d "
                                       "ORDER BY id LIMIT 40", id);
            else if (k == 1)
                snprintf(q, sizeof(q), "SELECT id FROM og WHERE g = %d "
                                       "ORDER BY id LIMIT 60", g);
            else /* a range on g: its index's order is not id's, sorted */
                snprintf(q, sizeof(q), "SELECT id FROM og WHERE g >= %d "
                                       "ORDER BY id LIMIT 60", g);
            got = run_into(s, q, c);
            if (!ids_rise(got, &n) || n > 60)
                snprintf(w->failure, sizeof(w->failure), "%s: %s", q, got);
        }
        w->rounds++;
    }
    sql_session_destroy(s);
    free(c);
    return NULL;
}

/*
 * Ordered scans (ORDER BY the scan's own order, no sort, LIMIT stopping
 * the scan) beside writers that move, delete and insert rows: every
 * result rises strictly, under ThreadSanitizer too.
 */
static void test_ordered_scan_stress(void **state)
{
    fixture *f = *state;
    ord_worker w[4];
    long rounds = 0;

    EXPECT(f->s, "CREATE TABLE og (id int PRIMARY KEY, g int NOT NULL, v int); "
                 "CREATE INDEX og_g ON og (g, id); "
                 "INSERT INTO og SELECT x, x % 4, 0 FROM generate_series(0, 399) x",
           "CREATE TABLE\nCREATE INDEX\nINSERT 0 400\n");
    EXPECT(f->s, "EXPLAIN SELECT id FROM og WHERE g = 1 ORDER BY id LIMIT 60",
           "QUERY PLAN:25\nLimit\n  ->  Index Scan using og_g on og\n"
           "EXPLAIN\n");
    memset(w, 0, sizeof(w));
    for (int i = 0; i < 4; i++) {
        w[i].db = f->db;
        w[i].number = i;
        w[i].seconds = tu_stress_seconds(1.0);
        assert_int_equal(pthread_create(&w[i].th, NULL, ord_work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(w[i].th, NULL), 0);
    for (int i = 0; i < 4; i++) {
        if (w[i].failure[0] != '\0')
            fail_msg("worker %d: %s", i, w[i].failure);
        rounds += w[i].rounds;
    }
    print_message("ordered scans beside writers: %ld statements\n", rounds);
    assert_true(w[2].rounds > 0 && w[3].rounds > 0);
}

typedef struct upserter {
    keel_db *db;
    int id;
    int upserts;  /* DO UPDATE statements that counted their row */
    int inserted; /* DO NOTHING statements that inserted theirs */
    char bad[256];
} upserter;

static void *upsert_main(void *arg)
{
    upserter *u = arg;
    sql_session *s;
    sql_error err;
    capture *c = calloc(1, sizeof(*c));
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(u->id + 1);
    char q[160];

    assert_non_null(c);
    assert_int_equal(sql_session_create(u->db, &s, &err), KEEL_OK);
    for (int i = 0; i < 300 && u->bad[0] == '\0'; i++) {
        const char *got;
        snprintf(q, sizeof(q),
                 "INSERT INTO up_c VALUES (%d, 1) ON CONFLICT (id) DO UPDATE "
                 "SET n = up_c.n + 1",
                 (int)(tu_rand(&rng) % 8));
        got = run_into(s, q, c);
        if (strcmp(got, "INSERT 0 1\n") == 0)
            u->upserts++;
        else
            snprintf(u->bad, sizeof(u->bad), "%s: %s", q, got);
        snprintf(q, sizeof(q),
                 "INSERT INTO up_once VALUES (%d, %d) ON CONFLICT DO NOTHING",
                 i, u->id);
        got = run_into(s, q, c);
        if (strcmp(got, "INSERT 0 1\n") == 0)
            u->inserted++;
        else if (strcmp(got, "INSERT 0 0\n") != 0 && u->bad[0] == '\0')
            snprintf(u->bad, sizeof(u->bad), "%s: %s", q, got);
    }
    sql_session_destroy(s);
    free(c);
    return NULL;
}

/*
 * Concurrent upserts: sessions racing to insert the same keys each add
 * one to the row whoever inserted it holds (none is lost, none fails),
 * and racing DO NOTHING inserts put each key in once, counted once.
 */
static void test_upsert_concurrent(void **state)
{
    fixture *f = *state;
    upserter u[4];
    pthread_t t[4];
    int upserts = 0, inserted = 0;
    char want[64];

    EXPECT(f->s, "CREATE TABLE up_c (id int PRIMARY KEY, n int NOT NULL)",
           "CREATE TABLE\n");
    EXPECT(f->s, "CREATE TABLE up_once (id int PRIMARY KEY, who int)",
           "CREATE TABLE\n");
    for (int i = 0; i < 4; i++) {
        memset(&u[i], 0, sizeof(u[i]));
        u[i].db = f->db;
        u[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, upsert_main, &u[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (u[i].bad[0] != '\0')
            fail_msg("%s", u[i].bad);
        upserts += u[i].upserts;
        inserted += u[i].inserted;
    }
    assert_int_equal(upserts, 4 * 300);
    assert_int_equal(inserted, 300);
    snprintf(want, sizeof(want), "sum:20\n%d\nSELECT 1\n", upserts);
    EXPECT(f->s, "SELECT sum(n) FROM up_c", want);
    EXPECT(f->s, "SELECT count(*), min(id), max(id) FROM up_once",
           "count:20,min:23,max:23\n300|0|299\nSELECT 1\n");
}

typedef struct seq_caller {
    keel_db *db;
    int id;
    int64_t got[300];
    int n;
    char bad[256];
} seq_caller;

static void *seq_main(void *arg)
{
    seq_caller *c = arg;
    sql_session *s;
    sql_error err;
    capture *cp = calloc(1, sizeof(*cp));

    assert_non_null(cp);
    assert_int_equal(sql_session_create(c->db, &s, &err), KEEL_OK);
    for (int i = 0; i < 300 && c->bad[0] == '\0'; i++) {
        /* Every third in a transaction that rolls back: its value is
         * not given out again. */
        const char *q = i % 3 == 0 ? "BEGIN; SELECT nextval('cc'); ROLLBACK"
                                   : "SELECT nextval('cc')";
        const char *got = run_into(s, q, cp);
        const char *nl = strstr(got, "nextval:20\n");
        long long v;
        if (nl == NULL || sscanf(nl + 11, "%lld", &v) != 1) {
            snprintf(c->bad, sizeof(c->bad), "%s: %s", q, got);
            break;
        }
        c->got[c->n++] = v;
    }
    sql_session_destroy(s);
    free(cp);
    return NULL;
}

/* ALTER SEQUENCE beside the callers: parameter changes that keep the
 * count (committed or rolled back) must neither skip nor repeat a
 * value. */
static void *seq_alter_main(void *arg)
{
    seq_caller *c = arg;
    sql_session *s;
    sql_error err;
    capture *cp = calloc(1, sizeof(*cp));

    assert_non_null(cp);
    assert_int_equal(sql_session_create(c->db, &s, &err), KEEL_OK);
    for (int i = 0; i < 40 && c->bad[0] == '\0'; i++) {
        const char *q = i % 2 == 0
                            ? "BEGIN; ALTER SEQUENCE cc INCREMENT BY 1 "
                              "MAXVALUE 900000; ROLLBACK"
                            : "ALTER SEQUENCE cc NO CYCLE MAXVALUE 1000000";
        const char *got = run_into(s, q, cp);
        if (strstr(got, "ERROR") != NULL) {
            snprintf(c->bad, sizeof(c->bad), "%s: %s", q, got);
            break;
        }
        c->n++;
    }
    sql_session_destroy(s);
    free(cp);
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/*
 * Concurrent nextval() calls, some in transactions that roll back, and
 * ALTER SEQUENCE replacing the sequence's row meanwhile: every value is
 * given out once, and together they are 1..N without a gap.
 */
static void test_sequence_concurrent(void **state)
{
    fixture *f = *state;
    seq_caller c[5];
    pthread_t t[5];
    int64_t all[4 * 300];
    int n = 0;

    EXPECT(f->s, "CREATE SEQUENCE cc", "CREATE SEQUENCE\n");
    for (int i = 0; i < 5; i++) {
        memset(&c[i], 0, sizeof(c[i]));
        c[i].db = f->db;
        c[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL,
                                        i < 4 ? seq_main : seq_alter_main,
                                        &c[i]),
                         0);
    }
    /* every thread joined before a failure ends the test: they use c */
    for (int i = 0; i < 5; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 5; i++) {
        if (c[i].bad[0] != '\0')
            fail_msg("%s", c[i].bad);
        if (i == 4)
            break;
        memcpy(all + n, c[i].got, (size_t)c[i].n * sizeof(all[0]));
        n += c[i].n;
    }
    assert_int_equal(c[4].n, 40);
    assert_int_equal(n, 4 * 300);
    qsort(all, (size_t)n, sizeof(all[0]), cmp_i64);
    for (int i = 0; i < n; i++)
        if (all[i] != i + 1)
            fail_msg("value %d is %lld", i + 1, (long long)all[i]);
    EXPECT(f->s, "SELECT nextval('cc')", "nextval:20\n1201\nSELECT 1\n");
}

/*
 * ALTER SEQUENCE replaces the sequence's row in its transaction, under a
 * lock on every sequence: another session's nextval() waits for it
 * (here until lock_timeout), an ALTER waits for a transaction that
 * called nextval(), a rollback leaves the count where the callers left
 * it, and a caller whose snapshot is older than a committed ALTER (a
 * repeatable read transaction's, or a statement's that waited for the
 * lock) counts on the new row and its parameters, as PostgreSQL's
 * nextval() does.
 */
static void test_sequence_alter(void **state)
{
    fixture *f = *state;
    sql_session *b;
    sql_error err;

    assert_int_equal(sql_session_create(f->db, &b, &err), KEEL_OK);
    EXPECT(f->s, "CREATE SEQUENCE q; SELECT nextval('q')",
           "CREATE SEQUENCE\nnextval:20\n1\nSELECT 1\n");
    EXPECT(f->s, "BEGIN; ALTER SEQUENCE q RESTART WITH 100; "
                 "SELECT nextval('q')",
           "BEGIN\nALTER SEQUENCE\nnextval:20\n100\nSELECT 1\n");
    assert_non_null(strstr(run(b, "SET lock_timeout = 50; "
                                  "SELECT nextval('q')"),
                           "ERROR 55P03: canceling statement due to lock "
                           "timeout"));
    EXPECT(f->s, "ROLLBACK", "ROLLBACK\n");
    EXPECT(b, "SELECT nextval('q')", "nextval:20\n2\nSELECT 1\n");
    /* a transaction that called nextval() holds ALTER off */
    EXPECT(b, "BEGIN; SELECT nextval('q')",
           "BEGIN\nnextval:20\n3\nSELECT 1\n");
    assert_non_null(strstr(run(f->s, "SET lock_timeout = 50; "
                                     "ALTER SEQUENCE q RESTART WITH 700"),
                           "SET\nERROR 55P03: canceling statement due to "
                           "lock timeout"));
    EXPECT(b, "COMMIT", "COMMIT\n");
    EXPECT(f->s, "ALTER SEQUENCE q RESTART WITH 700; RESET lock_timeout",
           "ALTER SEQUENCE\nRESET\n");
    EXPECT(b, "SELECT nextval('q')", "nextval:20\n700\nSELECT 1\n");
    /* repeatable read, its snapshot older than the RESTART */
    EXPECT(b, "RESET lock_timeout; "
              "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1 AS one",
           "RESET\nBEGIN\none:23\n1\nSELECT 1\n");
    EXPECT(f->s, "ALTER SEQUENCE q RESTART WITH 900", "ALTER SEQUENCE\n");
    EXPECT(b, "SELECT nextval('q')", "nextval:20\n900\nSELECT 1\n");
    EXPECT(b, "ROLLBACK", "ROLLBACK\n");
    EXPECT(b, "SELECT nextval('q')", "nextval:20\n901\nSELECT 1\n");
    /* a statement whose snapshot was taken before it waited for the
     * lock, the ALTER committing meanwhile, counts on the new row too */
    {
        bg_stmt bg;
        EXPECT(f->s, "BEGIN; ALTER SEQUENCE q RESTART WITH 5000",
               "BEGIN\nALTER SEQUENCE\n");
        bg_start(&bg, b, "SELECT nextval('q')");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(bg_join(&bg), "nextval:20\n5000\nSELECT 1\n");
        EXPECT(f->s, "BEGIN; ALTER SEQUENCE q INCREMENT BY 10",
               "BEGIN\nALTER SEQUENCE\n");
        bg_start(&bg, b, "SELECT nextval('q'), nextval('q')");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(bg_join(&bg),
                            "nextval:20,nextval:20\n5001|5011\nSELECT 1\n");
    }
    /* RESTART IDENTITY of two tables, side by side: the second waits
     * for the first's sequences lock, then restarts its own */
    {
        bg_stmt bg;
        EXPECT(f->s, "CREATE TABLE ri1 (id serial, v int); "
                     "CREATE TABLE ri2 (id serial, v int); "
                     "INSERT INTO ri1 (v) VALUES (1), (2); "
                     "INSERT INTO ri2 (v) VALUES (1), (2)",
               "CREATE TABLE\nCREATE TABLE\nINSERT 0 2\nINSERT 0 2\n");
        EXPECT(f->s, "BEGIN; TRUNCATE ri1 RESTART IDENTITY",
               "BEGIN\nTRUNCATE TABLE\n");
        bg_start(&bg, b, "TRUNCATE ri2 RESTART IDENTITY; "
                         "INSERT INTO ri2 (v) VALUES (3) RETURNING id");
        EXPECT(f->s, "INSERT INTO ri1 (v) VALUES (3) RETURNING id; COMMIT",
               "id:23\n1\nINSERT 0 1\nCOMMIT\n");
        assert_string_equal(bg_join(&bg),
                            "TRUNCATE TABLE\nid:23\n1\nINSERT 0 1\n");
        EXPECT(f->s, "DROP TABLE ri1, ri2", "DROP TABLE\n");
    }
    /* a sequence made before START values were kept has none */
    EXPECT(f->s,
           "BEGIN; DELETE FROM keel_sql.keel_seqstart WHERE seqname = 'q'; "
           "ALTER SEQUENCE q RESTART",
           "BEGIN\nDELETE 1\nERROR 55000: sequence \"q\" has no START "
           "value to restart at\n");
    EXPECT(f->s, "ROLLBACK; ALTER SEQUENCE q RESTART; SELECT nextval('q')",
           "ROLLBACK\nALTER SEQUENCE\nnextval:20\n1\nSELECT 1\n");
    sql_session_destroy(b);
}

/*
 * After a crash, a sequence goes on past every value that committed rows
 * hold: the in-place changes of its row are replayed from the log, made
 * durable by the commits that came after them (without that replay the
 * next insert would reuse id 1).  Values a transaction that never
 * committed took may come again, as in PostgreSQL: nothing durable
 * holds them.
 */
static void test_sequence_crash(void **state)
{
    fixture *f = *state;
    keel_db_options o;
    pid_t pid;
    int status;

    EXPECT(f->s, "CREATE TABLE cr (id serial PRIMARY KEY, v text)",
           "CREATE TABLE\n");
    sql_session_destroy(f->s);
    f->s = NULL;
    assert_int_equal(keel_db_close(f->db, NULL), KEEL_OK);
    f->db = NULL;
    keel_db_options_init(&o);
    o.dir = f->dir;
    o.pool_mb = 16;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        keel_db *db;
        sql_session *s;
        sql_error err;
        capture *cp = calloc(1, sizeof(*cp));
        if (cp == NULL || keel_db_open(&o, &db, NULL) != KEEL_OK ||
            sql_session_create(db, &s, &err) != KEEL_OK)
            _exit(1);
        for (int i = 0; i < 50; i++)
            if (strcmp(run_into(s, "INSERT INTO cr (v) VALUES ('x')", cp),
                       "INSERT 0 1\n") != 0)
                _exit(2);
        /* Given out, never committed. */
        if (strstr(run_into(s, "BEGIN; SELECT nextval('cr_id_seq'), "
                               "nextval('cr_id_seq')",
                            cp),
                   "51|52") == NULL)
            _exit(3);
        /* A RESTART that commits (a new version of the row, logged as
         * any update), then one that does not. */
        if (strcmp(run_into(s, "ROLLBACK; ALTER SEQUENCE cr_id_seq "
                               "RESTART WITH 1000; "
                               "INSERT INTO cr (v) VALUES ('y')",
                            cp),
                   "ROLLBACK\nALTER SEQUENCE\nINSERT 0 1\n") != 0)
            _exit(4);
        if (strstr(run_into(s, "BEGIN; ALTER SEQUENCE cr_id_seq RESTART "
                               "WITH 5000; SELECT nextval('cr_id_seq')",
                            cp),
                   "\n5000\n") == NULL)
            _exit(5);
        _exit(0); /* no close, no commit: a crash */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(keel_db_open(&o, &f->db, NULL), KEEL_OK);
    {
        sql_error err;
        assert_int_equal(sql_session_create(f->db, &f->s, &err), KEEL_OK);
    }
    EXPECT(f->s, "SELECT count(*), max(id) FROM cr",
           "count:20,max:23\n51|1000\nSELECT 1\n");
    /* After the committed RESTART's row; the one that never committed is
     * gone with what its transaction counted on it. */
    EXPECT(f->s,
           "INSERT INTO cr (v) VALUES ('after') RETURNING id",
           "id:23\n1001\nINSERT 0 1\n");
}

/*
 * ALTER TABLE rewrites the table under ACCESS EXCLUSIVE: another session
 * waits for it (here until lock_timeout), then sees the new shape; what
 * committed survives a crash, what did not is gone.
 */
/* CHECK constraints across sessions and a crash: a session that has
 * read a table's checks meets the ones another added or dropped (the
 * table is made anew, so it is another table to the reader); what a
 * committed ALTER made survives a crash, what an uncommitted one did
 * does not. */
static void test_check_crash(void **state)
{
    fixture *f = *state;
    keel_db_options o;
    sql_session *other;
    sql_error err;
    capture oc;
    pid_t pid;
    int status;

    EXPECT(f->s,
           "CREATE TABLE ckc (id int PRIMARY KEY, n int CHECK (n >= 0)); "
           "INSERT INTO ckc VALUES (1, 1)",
           "CREATE TABLE\nINSERT 0 1\n");
    assert_int_equal(sql_session_create(f->db, &other, &err), KEEL_OK);
    assert_string_equal(run_into(other, "INSERT INTO ckc VALUES (2, -1)", &oc),
                        "ERROR 23514: new row for relation \"ckc\" violates "
                        "check constraint \"ckc_n_check\"\n");
    EXPECT(f->s, "ALTER TABLE ckc ADD CONSTRAINT small CHECK (n < 10)",
           "ALTER TABLE\n");
    assert_string_equal(run_into(other, "INSERT INTO ckc VALUES (2, 10)", &oc),
                        "ERROR 23514: new row for relation \"ckc\" violates "
                        "check constraint \"small\"\n");
    EXPECT(f->s, "ALTER TABLE ckc DROP CONSTRAINT ckc_n_check",
           "ALTER TABLE\n");
    assert_string_equal(run_into(other, "INSERT INTO ckc VALUES (2, -1)", &oc),
                        "INSERT 0 1\n");
    sql_session_destroy(other);
    sql_session_destroy(f->s);
    f->s = NULL;
    assert_int_equal(keel_db_close(f->db, NULL), KEEL_OK);
    f->db = NULL;
    keel_db_options_init(&o);
    o.dir = f->dir;
    o.pool_mb = 16;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        keel_db *db;
        sql_session *s;
        capture *cp = calloc(1, sizeof(*cp));
        if (cp == NULL || keel_db_open(&o, &db, NULL) != KEEL_OK ||
            sql_session_create(db, &s, &err) != KEEL_OK)
            _exit(1);
        if (strcmp(run_into(s, "ALTER TABLE ckc ADD CHECK (id < 100); "
                               "ALTER TABLE ckc RENAME COLUMN n TO m",
                            cp),
                   "ALTER TABLE\nALTER TABLE\n") != 0)
            _exit(2);
        /* Not committed: undone by the crash. */
        if (strcmp(run_into(s, "BEGIN; ALTER TABLE ckc DROP CONSTRAINT small",
                            cp),
                   "BEGIN\nALTER TABLE\n") != 0)
            _exit(3);
        _exit(0); /* no close, no commit: a crash */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(keel_db_open(&o, &f->db, NULL), KEEL_OK);
    assert_int_equal(sql_session_create(f->db, &f->s, &err), KEEL_OK);
    EXPECT(f->s, "INSERT INTO ckc VALUES (3, 10)",
           "ERROR 23514: new row for relation \"ckc\" violates check "
           "constraint \"small\"\n");
    EXPECT(f->s, "INSERT INTO ckc VALUES (300, 1)",
           "ERROR 23514: new row for relation \"ckc\" violates check "
           "constraint \"ckc_id_check\"\n");
    EXPECT(f->s,
           "INSERT INTO ckc VALUES (3, -5); "
           "SELECT conname, pg_get_constraintdef(oid, true) FROM pg_constraint "
           "WHERE conrelid = 'ckc'::regclass AND contype = 'c' ORDER BY 1",
           "INSERT 0 1\nconname:19,pg_get_constraintdef:25\n"
           "ckc_id_check|CHECK (id < 100)\nsmall|CHECK (m < 10)\nSELECT 2\n");
}

/*
 * Foreign keys across sessions: one that read none meets those another
 * adds and loses those it drops (each session keeps them in a cache);
 * what keel refuses; a committed foreign key survives a crash that
 * undoes an uncommitted DROP CONSTRAINT.
 */
/* Holds a committer between its commit and its bump of the foreign
 * keys' epoch until a statement waits for the bump (or 10 s pass). */
static uint64_t fk_waits_before;

static void fk_pause(void)
{
    uint64_t until = clock_now_ns() + 10000000000ull;

    while (sql_fk_committing_waits() == fk_waits_before &&
           clock_now_ns() < until)
        clock_sleep_us(1000);
}

static void test_fkey_crash(void **state)
{
    fixture *f = *state;
    keel_db_options o;
    sql_session *other;
    sql_error err;
    capture oc;
    pid_t pid;
    int status;

    EXPECT(f->s,
           "CREATE TABLE fp (id int PRIMARY KEY); "
           "CREATE TABLE fc (id int PRIMARY KEY, pid int); "
           "INSERT INTO fp VALUES (1), (2)",
           "CREATE TABLE\nCREATE TABLE\nINSERT 0 2\n");
    assert_int_equal(sql_session_create(f->db, &other, &err), KEEL_OK);
    assert_string_equal(run_into(other, "INSERT INTO fc VALUES (1, 1)", &oc),
                        "INSERT 0 1\n");
    EXPECT(f->s, "ALTER TABLE fc ADD CONSTRAINT fc_p FOREIGN KEY (pid) "
                 "REFERENCES fp",
           "ALTER TABLE\n");
    assert_string_equal(run_into(other, "INSERT INTO fc VALUES (2, 7)", &oc),
                        "ERROR 23503: insert or update on table \"fc\" "
                        "violates foreign key constraint \"fc_p\"\n");
    assert_string_equal(run_into(other, "DELETE FROM fp WHERE id = 1", &oc),
                        "ERROR 23503: update or delete on table \"fp\" "
                        "violates foreign key constraint \"fc_p\" on table "
                        "\"fc\"\n");
    /* Two transactions inserting children of one parent both lock it
     * (shared), neither waiting for the other, under read committed and
     * repeatable read, for an integer key and a text one; a transaction
     * deleting the parent waits for both, then finds their children. */
    EXPECT(f->s,
           "CREATE TABLE ftp (k text PRIMARY KEY); "
           "CREATE TABLE ftc (id int PRIMARY KEY, k text REFERENCES ftp); "
           "INSERT INTO ftp VALUES ('a'), ('b')",
           "CREATE TABLE\nCREATE TABLE\nINSERT 0 2\n");
    EXPECT(f->s,
           "BEGIN; INSERT INTO fc VALUES (20, 2); "
           "INSERT INTO ftc VALUES (1, 'b')",
           "BEGIN\nINSERT 0 1\nINSERT 0 1\n");
    assert_string_equal(
        run_into(other, "SET lock_timeout = '10s'; "
                        "INSERT INTO fc VALUES (21, 2); "
                        "INSERT INTO ftc VALUES (2, 'b')",
                 &oc),
        "SET\nINSERT 0 1\nINSERT 0 1\n");
    assert_string_equal(run_into(other,
                                 "BEGIN ISOLATION LEVEL REPEATABLE READ; "
                                 "INSERT INTO fc VALUES (22, 2); COMMIT",
                                 &oc),
                        "BEGIN\nINSERT 0 1\nCOMMIT\n");
    {
        bg_stmt b;
        bg_start(&b, other, "DELETE FROM ftc WHERE id = 2; "
                            "DELETE FROM fc WHERE id IN (21, 22); "
                            "DELETE FROM ftp WHERE k = 'b'");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(bg_join(&b),
                            "DELETE 1\nDELETE 2\nERROR 23503: update or "
                            "delete on table \"ftp\" violates foreign key "
                            "constraint \"ftc_k_fkey\" on table \"ftc\"\n");
        /* Under repeatable read the deleter cannot see what the locker
         * committed: 40001 once it ends. */
        EXPECT(f->s, "BEGIN; INSERT INTO ftc VALUES (3, 'a')",
               "BEGIN\nINSERT 0 1\n");
        bg_start(&b, other, "BEGIN ISOLATION LEVEL REPEATABLE READ; "
                            "SELECT count(*) FROM ftc; "
                            "DELETE FROM ftp WHERE k = 'a'");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(bg_join(&b),
                            "BEGIN\ncount:20\n2\nSELECT 1\nERROR 40001: "
                            "could not serialize access due to concurrent "
                            "update\n");
        assert_string_equal(run_into(other, "ROLLBACK; RESET lock_timeout",
                                     &oc),
                            "ROLLBACK\nRESET\n");
        /* a parent's other columns may change while its children are
         * inserted; its delete still waits for them */
        EXPECT(f->s,
               "CREATE TABLE fkp (id int PRIMARY KEY, n int); "
               "CREATE TABLE fkc (id int PRIMARY KEY, p int REFERENCES fkp); "
               "INSERT INTO fkp VALUES (1, 0)",
               "CREATE TABLE\nCREATE TABLE\nINSERT 0 1\n");
        EXPECT(f->s, "BEGIN; INSERT INTO fkc VALUES (1, 1)",
               "BEGIN\nINSERT 0 1\n");
        assert_string_equal(
            run_into(other, "SET lock_timeout = '10s'; "
                            "UPDATE fkp SET n = n + 1 WHERE id = 1",
                     &oc),
            "SET\nUPDATE 1\n");
        bg_start(&b, other, "DELETE FROM fkp WHERE id = 1");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(bg_join(&b),
                            "ERROR 23503: update or delete on table \"fkp\" "
                            "violates foreign key constraint \"fkc_p_fkey\" "
                            "on table \"fkc\"\n");
        EXPECT(f->s, "SELECT * FROM fkp", "id:23,n:23\n1|1\nSELECT 1\n");
        /* BEGIN after a query in the same message: the level applies to
         * the transaction the query began, or 25001 as PostgreSQL */
        assert_string_equal(
            run_into(other, "SELECT 1 AS x; "
                            "BEGIN ISOLATION LEVEL REPEATABLE READ",
                     &oc),
            "x:23\n1\nSELECT 1\nERROR 25001: SET TRANSACTION ISOLATION "
            "LEVEL must be called before any query\n");
        assert_string_equal(
            run_into(other, "BEGIN; SHOW transaction_isolation; COMMIT", &oc),
            "BEGIN\ntransaction_isolation:25\nread committed\nSHOW\n"
            "COMMIT\n");
        /* and a parent deleted meanwhile is not there */
        EXPECT(f->s, "BEGIN; DELETE FROM ftc; DELETE FROM ftp WHERE k = 'b'",
               "BEGIN\nDELETE 3\nDELETE 1\n");
        bg_start(&b, other, "INSERT INTO ftc VALUES (4, 'b')");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(bg_join(&b),
                            "ERROR 23503: insert or update on table \"ftc\" "
                            "violates foreign key constraint \"ftc_k_fkey\"\n");
    }
    EXPECT(f->s, "DELETE FROM fc WHERE id >= 20", "DELETE 3\n");
    EXPECT(f->s, "ALTER TABLE fc DROP CONSTRAINT fc_p", "ALTER TABLE\n");
    assert_string_equal(run_into(other, "INSERT INTO fc VALUES (2, 7); "
                                        "DELETE FROM fc WHERE id = 2",
                                 &oc),
                        "INSERT 0 1\nDELETE 1\n");
    /* A repeatable read transaction that began before another session
     * committed a foreign key on a table cannot see it: it may not
     * write that table (it would not check the key). */
    assert_string_equal(
        run_into(other, "BEGIN ISOLATION LEVEL REPEATABLE READ; "
                        "SELECT count(*) FROM fp",
                 &oc),
        "BEGIN\ncount:20\n2\nSELECT 1\n");
    EXPECT(f->s, "ALTER TABLE fc ADD CONSTRAINT fc_p FOREIGN KEY (pid) "
                 "REFERENCES fp ON DELETE CASCADE",
           "ALTER TABLE\n");
    assert_string_equal(run_into(other, "INSERT INTO fc VALUES (3, 9)", &oc),
                        "ERROR 40001: could not serialize access due to a "
                        "concurrent change of the foreign keys of \"fc\"\n");
    assert_string_equal(run_into(other, "ROLLBACK; INSERT INTO fc VALUES (3, 9)",
                                 &oc),
                        "ROLLBACK\nERROR 23503: insert or update on table "
                        "\"fc\" violates foreign key constraint \"fc_p\"\n");
    /* Under read committed a statement that waited for the transaction
     * adding a key to its table checks that key (its snapshot is taken
     * again; the epoch it began with is behind). */
    EXPECT(f->s,
           "CREATE TABLE fq (id int PRIMARY KEY); "
           "CREATE TABLE fr (id int PRIMARY KEY, q int); "
           "INSERT INTO fq VALUES (1)",
           "CREATE TABLE\nCREATE TABLE\nINSERT 0 1\n");
    EXPECT(f->s, "BEGIN; ALTER TABLE fr ADD FOREIGN KEY (q) REFERENCES fq",
           "BEGIN\nALTER TABLE\n");
    {
        bg_stmt b;
        bg_start(&b, other, "INSERT INTO fr VALUES (1, 999)");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        assert_string_equal(bg_join(&b),
                            "ERROR 23503: insert or update on table \"fr\" "
                            "violates foreign key constraint \"fr_q_fkey\"\n");
    }
    /* ... and so does one that gets its lock between that commit and
     * the epoch's bump: it waits for the bump (fk_pause() holds the
     * committer there until the statement waits, or 10 s). */
    EXPECT(f->s,
           "CREATE TABLE fq2 (id int PRIMARY KEY); "
           "CREATE TABLE fr2 (id int PRIMARY KEY, q int); "
           "INSERT INTO fq2 VALUES (1)",
           "CREATE TABLE\nCREATE TABLE\nINSERT 0 1\n");
    EXPECT(f->s, "BEGIN; ALTER TABLE fr2 ADD FOREIGN KEY (q) REFERENCES fq2",
           "BEGIN\nALTER TABLE\n");
    {
        bg_stmt b;
        fk_waits_before = sql_fk_committing_waits();
        sql_fk_bump_pause = fk_pause;
        bg_start(&b, other, "INSERT INTO fr2 VALUES (1, 999)");
        EXPECT(f->s, "COMMIT", "COMMIT\n");
        sql_fk_bump_pause = NULL;
        assert_string_equal(bg_join(&b),
                            "ERROR 23503: insert or update on table \"fr2\" "
                            "violates foreign key constraint \"fr2_q_fkey\"\n");
        assert_int_equal(sql_fk_committing_waits(), fk_waits_before + 1);
    }
    /* what keel does not do yet */
    EXPECT(f->s, "CREATE TABLE fx (a int PRIMARY KEY DEFERRABLE)",
           "ERROR 0A000: DEFERRABLE constraints but foreign keys is not "
           "supported yet at 36\n");
    EXPECT(f->s, "ALTER TABLE fc ADD FOREIGN KEY (pid) REFERENCES fp NOT VALID",
           "ERROR 0A000: NOT VALID is not supported yet at 20\n");
    EXPECT(f->s, "CREATE TABLE fnk (a int UNIQUE); "
                 "CREATE TABLE fx (a int REFERENCES fnk (a))",
           "CREATE TABLE\nERROR 0A000: foreign keys to a table without a "
           "primary key is not supported yet at 57\n");
    sql_session_destroy(other);
    sql_session_destroy(f->s);
    f->s = NULL;
    assert_int_equal(keel_db_close(f->db, NULL), KEEL_OK);
    f->db = NULL;
    keel_db_options_init(&o);
    o.dir = f->dir;
    o.pool_mb = 16;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        keel_db *db;
        sql_session *s;
        capture *cp = calloc(1, sizeof(*cp));
        if (cp == NULL || keel_db_open(&o, &db, NULL) != KEEL_OK ||
            sql_session_create(db, &s, &err) != KEEL_OK)
            _exit(1);
        if (strcmp(run_into(s, "CREATE TABLE fd (id int PRIMARY KEY, "
                               "pid int REFERENCES fp ON DELETE SET NULL); "
                               "INSERT INTO fd VALUES (1, 2)",
                            cp),
                   "CREATE TABLE\nINSERT 0 1\n") != 0)
            _exit(2);
        /* Not committed: undone by the crash. */
        if (strcmp(run_into(s, "BEGIN; ALTER TABLE fc DROP CONSTRAINT fc_p; "
                               "SELECT id FROM fp WHERE id = 1 FOR SHARE",
                            cp),
                   "BEGIN\nALTER TABLE\nid:23\n1\nSELECT 1\n") != 0)
            _exit(3);
        _exit(0); /* no close, no commit: a crash */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(keel_db_open(&o, &f->db, NULL), KEEL_OK);
    assert_int_equal(sql_session_create(f->db, &f->s, &err), KEEL_OK);
    EXPECT(f->s, "INSERT INTO fc VALUES (3, 9)",
           "ERROR 23503: insert or update on table \"fc\" violates foreign "
           "key constraint \"fc_p\"\n");
    /* (the shared lock on fp's row 1 went with the crash) */
    EXPECT(f->s,
           "DELETE FROM fp WHERE id = 1; DELETE FROM fp WHERE id = 2; "
           "SELECT count(*) FROM fc; SELECT * FROM fd",
           "DELETE 1\nDELETE 1\ncount:20\n0\nSELECT 1\nid:23,pid:23\n1|<null>\n"
           "SELECT 1\n");
}

#define FK_THREADS 4
#define FK_PARENTS 8

typedef struct fk_worker {
    pthread_t th;
    keel_db *db;
    int number;
    double seconds;
    long inserted, refused, deleted, busy;
    char failure[512];
} fk_worker;

/* Whether got is an answer a racing statement may get. */
static bool fk_answer_ok(fk_worker *w, const char *text, const char *got,
                         const char *want)
{
    if (strcmp(got, want) == 0)
        return true;
    if (strstr(got, "ERROR 23503") != NULL) {
        w->refused++;
        return false;
    }
    if (strstr(got, "ERROR 40001") != NULL || strstr(got, "ERROR 40P01") != NULL) {
        w->busy++;
        return false;
    }
    if (w->failure[0] == '\0')
        snprintf(w->failure, sizeof(w->failure), "%s -> %s", text, got);
    return false;
}

/* Children inserted, parents updated, deleted and put back at random, some
 * in transactions of several statements, some under repeatable read. */
static void *fk_work(void *arg)
{
    fk_worker *w = arg;
    sql_session *s;
    sql_error err;
    capture *c = calloc(1, sizeof(*c));
    uint64_t rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(w->number + 7);
    uint64_t end = clock_now_ns() + (uint64_t)(w->seconds * 1e9);
    int next_id = w->number * 1000000;

    if (c == NULL || sql_session_create(w->db, &s, &err) != KEEL_OK) {
        snprintf(w->failure, sizeof(w->failure), "session");
        free(c);
        return NULL;
    }
    while (clock_now_ns() < end && w->failure[0] == '\0') {
        int p = 1 + (int)(tu_rand(&rnd) % FK_PARENTS);
        int op = (int)(tu_rand(&rnd) % 6);
        char q[200];
        const char *got;
        if (op <= 1) {
            /* a third of them to the table whose key waits for COMMIT */
            const char *table = tu_rand(&rnd) % 3 == 0 ? "fkcd"
                                : op == 0              ? "fkc"
                                                       : "fkcc";
            bool block = tu_rand(&rnd) % 3 == 0;
            bool rr = block && tu_rand(&rnd) % 2 == 0;
            if (block)
                run_into(s, rr ? "BEGIN ISOLATION LEVEL REPEATABLE READ"
                               : "BEGIN",
                         c);
            snprintf(q, sizeof(q), "INSERT INTO %s VALUES (%d, %d), (%d, %d)",
                     table, next_id, p, next_id + 1,
                     1 + (int)(tu_rand(&rnd) % FK_PARENTS));
            next_id += 2;
            bool in;
            got = run_into(s, q, c);
            in = fk_answer_ok(w, q, got, "INSERT 0 2\n");
            if (block) {
                /* a failed block ends in ROLLBACK; a deferred key may
                 * fail the COMMIT */
                got = run_into(s, "COMMIT", c);
                if (strcmp(got, in ? "COMMIT\n" : "ROLLBACK\n") != 0) {
                    fk_answer_ok(w, "COMMIT", got, "COMMIT\n");
                    in = false;
                }
            }
            if (in)
                w->inserted += 2;
        } else if (op == 2 && tu_rand(&rnd) % 2 == 0) {
            /* another column of the parent: its children's locks go on
             * to the new version */
            snprintf(q, sizeof(q), "UPDATE fkp SET n = n + 1 WHERE id = %d",
                     p);
            got = run_into(s, q, c);
            if (strcmp(got, "UPDATE 0\n") != 0)
                fk_answer_ok(w, q, got, "UPDATE 1\n");
        } else if (op == 2 || op == 3) {
            snprintf(q, sizeof(q), "DELETE FROM fkp WHERE id = %d", p);
            got = run_into(s, q, c);
            if (strcmp(got, "DELETE 0\n") == 0 ||
                fk_answer_ok(w, q, got, "DELETE 1\n"))
                w->deleted += strcmp(got, "DELETE 1\n") == 0;
        } else if (op == 4) {
            snprintf(q, sizeof(q),
                     "INSERT INTO fkp VALUES (%d) ON CONFLICT DO NOTHING", p);
            got = run_into(s, q, c);
            if (strcmp(got, "INSERT 0 0\n") != 0)
                fk_answer_ok(w, q, got, "INSERT 0 1\n");
        } else {
            /* children moved to another parent, or their rows deleted */
            snprintf(q, sizeof(q),
                     "UPDATE fkc SET pid = %d WHERE id %% 7 = %d", p,
                     (int)(tu_rand(&rnd) % 7));
            got = run_into(s, q, c);
            if (strncmp(got, "UPDATE ", 7) != 0)
                fk_answer_ok(w, q, got, "UPDATE");
        }
    }
    sql_session_destroy(s);
    free(c);
    return NULL;
}

/*
 * Concurrent inserts of children and deletes of their parents (NO
 * ACTION for one table, CASCADE for another, a third's key checked at
 * COMMIT): whatever commits, no child is ever left without its parent.
 */
static void test_fkey_stress(void **state)
{
    fixture *f = *state;
    fk_worker w[FK_THREADS];
    long inserted = 0, refused = 0, deleted = 0, busy = 0;
    char q[96];

    EXPECT(f->s,
           "CREATE TABLE fkp (id int PRIMARY KEY, n int DEFAULT 0); "
           "CREATE TABLE fkc (id int PRIMARY KEY, pid int REFERENCES fkp); "
           "CREATE TABLE fkcc (id int PRIMARY KEY, "
           "pid int REFERENCES fkp ON DELETE CASCADE); "
           "CREATE TABLE fkcd (id int PRIMARY KEY, "
           "pid int REFERENCES fkp DEFERRABLE INITIALLY DEFERRED)",
           "CREATE TABLE\nCREATE TABLE\nCREATE TABLE\nCREATE TABLE\n");
    for (int i = 1; i <= FK_PARENTS; i++) {
        snprintf(q, sizeof(q), "INSERT INTO fkp VALUES (%d)", i);
        EXPECT(f->s, q, "INSERT 0 1\n");
    }
    memset(w, 0, sizeof(w));
    for (int i = 0; i < FK_THREADS; i++) {
        w[i].db = f->db;
        w[i].number = i;
        w[i].seconds = tu_stress_seconds(1.0);
        assert_int_equal(pthread_create(&w[i].th, NULL, fk_work, &w[i]), 0);
    }
    for (int i = 0; i < FK_THREADS; i++) {
        assert_int_equal(pthread_join(w[i].th, NULL), 0);
        if (w[i].failure[0] != '\0')
            fail_msg("worker %d: %s", i, w[i].failure);
        inserted += w[i].inserted;
        refused += w[i].refused;
        deleted += w[i].deleted;
        busy += w[i].busy;
    }
    print_message("foreign keys: %ld children inserted, %ld refused, %ld "
                  "parents deleted, %ld serialization failures or deadlocks\n",
                  inserted, refused, deleted, busy);
    assert_true(inserted > 0);
    assert_true(refused > 0);
    EXPECT(f->s,
           "SELECT count(*) FROM fkc LEFT JOIN fkp ON fkp.id = fkc.pid "
           "WHERE fkp.id IS NULL",
           "count:20\n0\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT count(*) FROM fkcc LEFT JOIN fkp ON fkp.id = fkcc.pid "
           "WHERE fkp.id IS NULL",
           "count:20\n0\nSELECT 1\n");
    EXPECT(f->s,
           "SELECT count(*) FROM fkcd LEFT JOIN fkp ON fkp.id = fkcd.pid "
           "WHERE fkp.id IS NULL",
           "count:20\n0\nSELECT 1\n");
}

static void test_alter_crash(void **state)
{
    fixture *f = *state;
    keel_db_options o;
    sql_session *other;
    sql_error err;
    capture oc;
    pid_t pid;
    int status;

    EXPECT(f->s,
           "CREATE TABLE al (id int PRIMARY KEY, v text DEFAULT 'd'); "
           "CREATE UNIQUE INDEX al_v ON al (v); "
           "INSERT INTO al VALUES (1, 'a'), (2, 'b'), (3, 'c')",
           "CREATE TABLE\nCREATE INDEX\nINSERT 0 3\n");
    /* A session keeps 256 tables' defaults, then lets them all go at the
     * next table's: a rewrite, which reads the old table's then the new
     * one's (its INSERT), must not use the old ones after that.  In a
     * fresh session that read al's and then 252 to 255 others', the
     * rewrite's own reads meet the limit; al's default must come
     * through. */
    for (int i = 0; i < 256; i++) {
        char q[160];
        snprintf(q, sizeof(q), "CREATE TABLE dflt%d (a int DEFAULT %d)", i, i);
        EXPECT(f->s, q, "CREATE TABLE\n");
    }
    for (int extra = 0; extra < 4; extra++) {
        sql_session *fresh;
        assert_int_equal(sql_session_create(f->db, &fresh, &err), KEEL_OK);
        assert_string_equal(run_into(fresh, "INSERT INTO al (id) VALUES (9)",
                                     &oc),
                            "INSERT 0 1\n");
        for (int i = 0; i < 252 + extra; i++) {
            char q[160];
            snprintf(q, sizeof(q), "INSERT INTO dflt%d DEFAULT VALUES", i);
            assert_string_equal(run_into(fresh, q, &oc), "INSERT 0 1\n");
        }
        assert_string_equal(
            run_into(fresh,
                     "ALTER TABLE al ADD COLUMN w int; "
                     "ALTER TABLE al DROP COLUMN w; "
                     "DELETE FROM al WHERE id = 9; "
                     "INSERT INTO al (id) VALUES (9) RETURNING v; "
                     "DELETE FROM al WHERE id = 9",
                     &oc),
            "ALTER TABLE\nALTER TABLE\nDELETE 1\nv:25\nd\nINSERT 0 1\n"
            "DELETE 1\n");
        sql_session_destroy(fresh);
    }
    assert_int_equal(sql_session_create(f->db, &other, &err), KEEL_OK);
    EXPECT(f->s, "BEGIN; ALTER TABLE al ADD COLUMN n int DEFAULT 7",
           "BEGIN\nALTER TABLE\n");
    assert_string_equal(run_into(other, "SET lock_timeout = '50ms'; "
                                         "SELECT * FROM al", &oc),
                        "SET\nERROR 55P03: canceling statement due to lock "
                        "timeout: AccessShareLock on relation \"public.al\" "
                        "not granted within 50 ms\n");
    EXPECT(f->s, "COMMIT", "COMMIT\n");
    assert_string_equal(run_into(other, "SELECT * FROM al ORDER BY id", &oc),
                        "id:23,v:25,n:23\n1|a|7\n2|b|7\n3|c|7\nSELECT 3\n");
    /* the unique index came along */
    assert_string_equal(run_into(other, "INSERT INTO al VALUES (4, 'a')", &oc),
                        "ERROR 23505: duplicate key value violates unique "
                        "constraint \"al_v\"\n");
    sql_session_destroy(other);
    sql_session_destroy(f->s);
    f->s = NULL;
    assert_int_equal(keel_db_close(f->db, NULL), KEEL_OK);
    f->db = NULL;
    keel_db_options_init(&o);
    o.dir = f->dir;
    o.pool_mb = 16;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        keel_db *db;
        sql_session *s;
        capture *cp = calloc(1, sizeof(*cp));
        if (cp == NULL || keel_db_open(&o, &db, NULL) != KEEL_OK ||
            sql_session_create(db, &s, &err) != KEEL_OK)
            _exit(1);
        if (strcmp(run_into(s, "ALTER TABLE al RENAME COLUMN n TO num; "
                               "ALTER TABLE al ALTER COLUMN v SET DEFAULT 'e', "
                               "DROP COLUMN num; "
                               "ALTER TABLE al RENAME TO al2",
                            cp),
                   "ALTER TABLE\nALTER TABLE\nALTER TABLE\n") != 0)
            _exit(2);
        /* Not committed: gone after the crash. */
        if (strcmp(run_into(s, "BEGIN; ALTER TABLE al2 ADD COLUMN lost int; "
                               "ALTER TABLE al2 RENAME TO al3",
                            cp),
                   "BEGIN\nALTER TABLE\nALTER TABLE\n") != 0)
            _exit(3);
        _exit(0); /* no close, no commit: a crash */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(keel_db_open(&o, &f->db, NULL), KEEL_OK);
    assert_int_equal(sql_session_create(f->db, &f->s, &err), KEEL_OK);
    EXPECT(f->s, "INSERT INTO al2 (id) VALUES (5); SELECT * FROM al2 ORDER BY id",
           "INSERT 0 1\nid:23,v:25\n1|a\n2|b\n3|c\n5|e\nSELECT 4\n");
    EXPECT(f->s, "SELECT 1 FROM al3",
           "ERROR 42P01: relation \"al3\" does not exist at 15\n");
    EXPECT(f->s,
           "SELECT c.relname, i.indisprimary FROM pg_index i JOIN pg_class c "
           "ON c.oid = i.indexrelid WHERE c.relname LIKE 'al%' ORDER BY 1",
           "relname:19,indisprimary:16\nal_pkey|t\nal_v|f\nSELECT 2\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_constants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_for_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_with_dml, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_committed_waits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_secondary_index_plans, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_read_committed_stress, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_truncate, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upsert_concurrent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sequence_concurrent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sequence_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequence_alter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ordered_scan_stress, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_alter_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fkey_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fkey_stress, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aggregates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_datetime, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_joins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outer_joins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statement_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_catalog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pgbench_init, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serialization, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
