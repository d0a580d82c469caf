/*
 * fuzz_sql.c: SQL text from the fuzzer through a SQL session, as the
 * simple query protocol would run it, against a small database made on
 * the first call.  Whatever the text, the session must answer with
 * results or an error and stay usable; after each input a failed or open
 * transaction block is rolled back, and a table the input dropped is
 * made again.
 *
 * Each input also checks the parse cache (sql_parse.c): the text is
 * parsed through the cache, then a variant with every digit changed (the
 * same length, so every position agrees); if the cache serves the variant
 * from the first text's tree, that tree must pack to the same bytes as a
 * fresh parse of the variant.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keel/keel.h"
#include "sql/sql_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static keel_db *db;
static sql_session *session;
static char dir[] = "/tmp/keel-fuzz-sql-XXXXXX";

static int quiet_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    (void)ctx;
    (void)cols;
    (void)n;
    return 0;
}

static int quiet_row(void *ctx, const char *const *vals, const uint32_t *lens,
                     uint16_t n)
{
    (void)ctx;
    /* Touch every value, so that a dangling one is found. */
    for (uint16_t i = 0; i < n; i++)
        if (vals[i] != NULL && lens[i] > 0 && vals[i][lens[i] - 1] == '\x7f')
            return 0;
    return 0;
}

static int quiet_complete(void *ctx, const char *tag)
{
    (void)ctx;
    (void)tag;
    return 0;
}

static int quiet_notice(void *ctx, const char *sev, const char *state,
                        const char *msg)
{
    (void)ctx;
    (void)sev;
    (void)state;
    (void)msg;
    return 0;
}

static int copy_in_begin(void *ctx, uint16_t n, int16_t f)
{
    (void)ctx;
    (void)n;
    (void)f;
    return 0;
}

/* A COPY FROM STDIN gets two rows, then the end. */
static int copy_in_read(void *ctx, const char **data, size_t *len, char *why,
                        size_t whylen)
{
    int *calls = ctx;

    (void)why;
    (void)whylen;
    if ((*calls)++ == 0) {
        *data = "7\tseven\t7.5\n8\t\\N\t\\N\n";
        *len = strlen(*data);
    } else {
        *len = 0;
    }
    return 0;
}

static int copy_out_begin(void *ctx, uint16_t n, int16_t f)
{
    (void)ctx;
    (void)n;
    (void)f;
    return 0;
}

static int copy_out_data(void *ctx, const char *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
    return 0;
}

static void run(const char *text)
{
    int calls = 0;
    sql_sink sink = {.ctx = &calls, .columns = quiet_columns, .row = quiet_row,
                     .complete = quiet_complete, .notice = quiet_notice,
                     .copy_in_begin = copy_in_begin, .copy_in_read = copy_in_read,
                     .copy_out_begin = copy_out_begin,
                     .copy_out_data = copy_out_data};
    sql_error err;

    (void)sql_exec_simple(session, text, &sink, &err);
}

static uint8_t *packed(const PgQuery__ParseResult *t, size_t *len)
{
    uint8_t *b;

    *len = pg_query__parse_result__get_packed_size(t);
    b = malloc(*len ? *len : 1);
    if (b == NULL)
        abort();
    pg_query__parse_result__pack(t, b);
    return b;
}

static void check_parse_cache(const char *text)
{
    size_t n = strlen(text);
    char *variant = malloc(n + 1);
    PgQuery__ParseResult *t = NULL, *fresh = NULL;
    sql_pcache_entry *pin = NULL;
    sql_parse_stats before, after;
    sql_error err;

    if (variant == NULL)
        return;
    for (size_t i = 0; i <= n; i++)
        variant[i] = text[i] >= '0' && text[i] <= '9'
                         ? (char)('0' + (text[i] - '0' + 7) % 10)
                         : text[i];
    session->err = &err;
    session->text = text;
    /* Emptied first, so that the variant can only meet text's own tree,
     * whose positions are the variant's too. */
    sql_parse_cache_resize(session, 0);
    sql_parse_cache_resize(session, 64);
    if (sql_parse_cached(session, text, false, &t, &pin) == KEEL_OK)
        sql_parse_done(session, t, pin);
    sql_parse_cache_stats(session, &before);
    session->text = variant;
    if (sql_parse_cached(session, variant, false, &t, &pin) == KEEL_OK) {
        sql_parse_cache_stats(session, &after);
        if (after.hits != before.hits) {
            size_t la, lb;
            uint8_t *a, *b;
            if (sql_parse_raw(session, variant, &fresh) != KEEL_OK)
                abort(); /* served from the cache, yet it does not parse */
            a = packed(t, &la);
            b = packed(fresh, &lb);
            if (la != lb || memcmp(a, b, la) != 0)
                abort(); /* the cache's tree is not a fresh parse's */
            free(a);
            free(b);
            pg_query__parse_result__free_unpacked(fresh, NULL);
        }
        sql_parse_done(session, t, pin);
    }
    session->text = NULL;
    free(variant);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* At exit: the session and database closed, their directory removed. */
static void teardown(void)
{
    sql_session_destroy(session);
    if (db != NULL)
        keel_db_close(db, NULL);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
    keel_db_options o;
    sql_error err;

    if (mkdtemp(dir) == NULL)
        abort();
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 8;
    o.synchronous_commit = false;
    if (keel_db_create(&o, NULL) != KEEL_OK || keel_db_open(&o, &db, NULL) != KEEL_OK ||
        sql_init() != KEEL_OK || sql_session_create(db, &session, &err) != KEEL_OK)
        abort();
    atexit(teardown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;

    if (db == NULL)
        setup();
    text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    run("CREATE TABLE IF NOT EXISTS t (a int PRIMARY KEY, b text, c float8)");
    /* A statement that would never end (a recursion without a bound)
     * ends at these, as a server's would. */
    run("SET statement_memory_limit = '64MB'");
    run("SET statement_timeout = '1s'");
    run(text);
    check_parse_cache(text);
    if (sql_txn_status(session) != 'I')
        run("ROLLBACK");
    if (sql_txn_status(session) != 'I')
        abort(); /* ROLLBACK must always end a block */
    free(text);
    return 0;
}
