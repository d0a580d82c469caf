/*
 * fuzz_sql.c: SQL text from the fuzzer through a SQL session, as the
 * simple query protocol would run it, against a small database made on
 * the first call.  Whatever the text, the session must answer with
 * results or an error and stay usable; after each input a failed or open
 * transaction block is rolled back, and a table the input dropped is
 * made again.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keel/keel.h"
#include "sql/sql.h"

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
    run(text);
    if (sql_txn_status(session) != 'I')
        run("ROLLBACK");
    if (sql_txn_status(session) != 'I')
        abort(); /* ROLLBACK must always end a block */
    free(text);
    return 0;
}
