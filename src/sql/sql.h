/*
 * sql.h: SQL sessions, the layer between the wire protocol (src/server/)
 * and the engine (include/keel/keel.h).
 *
 * A sql_session is one connection's state: its keel_session, its
 * transaction block (idle, in a block, or in a failed block that only
 * ROLLBACK ends, as PostgreSQL's 25P02), and its settings (SET, SHOW,
 * RESET and the parameters a client sends at startup).  Text is parsed by
 * PostgreSQL's own grammar (libpg_query), then analysed, planned and
 * executed here; a statement keel does not support yet fails with
 * SQLSTATE 0A000 naming the feature.
 *
 * Results leave through a sql_sink that the protocol layer implements:
 * for each statement, columns() before its first row if it returns rows,
 * row() per row, complete() with its command tag.  Values are handed over
 * in text format.  A sql_session is used by one thread at a time.
 */
#ifndef KEEL_SQL_SQL_H
#define KEEL_SQL_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keel/keel.h"

/* PostgreSQL's type oids, as RowDescription and ParameterDescription
 * carry them. */
#define SQL_TYPE_BOOL 16
#define SQL_TYPE_JSON 114
#define SQL_TYPE_JSONB 3802
#define SQL_TYPE_BYTEA 17
#define SQL_TYPE_NAME 19
#define SQL_TYPE_INT8 20
#define SQL_TYPE_INT2 21
#define SQL_TYPE_INT4 23
#define SQL_TYPE_TEXT 25
#define SQL_TYPE_OID 26
#define SQL_TYPE_FLOAT8 701
#define SQL_TYPE_UNKNOWN 705
#define SQL_TYPE_BPCHAR 1042
#define SQL_TYPE_NUMERIC 1700
#define SQL_TYPE_VARCHAR 1043
#define SQL_TYPE_DATE 1082
#define SQL_TYPE_TIMESTAMP 1114
#define SQL_TYPE_TIMESTAMPTZ 1184
#define SQL_TYPE_INTERVAL 1186
#define SQL_TYPE_UUID 2950

/* One result column, as RowDescription describes it. */
typedef struct sql_column {
    const char *name;
    uint32_t type;   /* a SQL_TYPE_ oid */
    int16_t typlen;  /* bytes, or -1 for variable length */
    int32_t typmod;  /* -1, or the type's modifier (varchar(n): n + 4) */
    uint32_t table;  /* the table's oid if the column is a table's, else 0 */
    int16_t attnum;  /* its column number in that table, else 0 */
    int16_t format;  /* SQL_FORMAT_TEXT or SQL_FORMAT_BINARY (Bind's) */
} sql_column;

/*
 * Where a statement's results go.  Each callback returns 0, or non-zero
 * to stop the statement (the connection is gone): the statement then
 * fails with SQLSTATE 08006 and its transaction aborts.
 */
typedef struct sql_sink {
    void *ctx;
    /* The columns of the rows that follow (RowDescription). */
    int (*columns)(void *ctx, const sql_column *cols, uint16_t n);
    /* One row: n values in text format, vals[i] NULL for SQL NULL, else
     * lens[i] bytes (not NUL-terminated), valid only during the call. */
    int (*row)(void *ctx, const char *const *vals, const uint32_t *lens,
               uint16_t n);
    /* A statement's end, with its command tag ("SELECT 3", "INSERT 0 1",
     * "BEGIN", ...). */
    int (*complete)(void *ctx, const char *tag);
    /* A notice or warning (NoticeResponse): severity "NOTICE" or
     * "WARNING", a five-character SQLSTATE, a message. */
    int (*notice)(void *ctx, const char *severity, const char *sqlstate,
                  const char *message);
    /* A query string holding no statement (EmptyQueryResponse). */
    int (*empty)(void *ctx);
    /* COPY ... FROM STDIN: the client is asked for ncols columns' data
     * in format (CopyInResponse; 0 text, which CSV is too). */
    int (*copy_in_begin)(void *ctx, uint16_t ncols, int16_t format);
    /* The client's next chunk of data (a CopyData's bytes), valid until
     * the next call; *len 0 when it is done (CopyDone).  Non-zero when it
     * gave up (CopyFail: its message in why) or the connection failed. */
    int (*copy_in_read)(void *ctx, const char **data, size_t *len, char *why,
                        size_t whylen);
    /* COPY ... TO STDOUT: CopyOutResponse, then the rows' data in pieces
     * (CopyData); complete() follows the last (after CopyDone). */
    int (*copy_out_begin)(void *ctx, uint16_t ncols, int16_t format);
    int (*copy_out_data)(void *ctx, const char *data, size_t len);
} sql_sink;

/* A failed statement, as ErrorResponse reports it. */
typedef struct sql_error {
    char severity[8];  /* "ERROR", or "FATAL" when the session must end */
    char sqlstate[6];  /* five characters and a NUL */
    char message[512];
    char detail[256];  /* "" if none */
    char hint[256];    /* "" if none */
    char context[256]; /* where it happened (CONTEXT: "COPY t, line 3"), or "" */
    uint32_t position; /* 1-based character position in the query, or 0 */
} sql_error;

typedef struct sql_session sql_session;

/* Prepares what every session shares (the parser); once per process,
 * before the first sql_session_create().  Returns KEEL_OK. */
keel_status sql_init(void);

/*
 * Starts a SQL session on db (a keel_session of its own).  Errors:
 * KEEL_EEXHAUSTED when the database's max_sessions are open, KEEL_ENOMEM;
 * err says what (SQLSTATE 53300 for the first).
 */
keel_status sql_session_create(keel_db *db, sql_session **out, sql_error *err);

/* Ends a session: aborts its transaction if one runs, frees it.  NULL is
 * fine. */
void sql_session_destroy(sql_session *s);

/* The process id the connection's BackendKeyData gave its client, shown
 * by keel_stat_catcache (0 until set). */
void sql_set_backend_pid(sql_session *s, uint32_t pid);

/*
 * A startup parameter from the client (user, database, application_name,
 * client_encoding, DateStyle, options, ...), before any query.  Settings
 * a session can SET take their value; the rest are remembered.  A
 * client_encoding other than UTF8 fails with 22023.
 */
keel_status sql_set_startup(sql_session *s, const char *name,
                            const char *value, sql_error *err);

/* A number that changes whenever a setting's value may have: a SET,
 * RESET, set_config(), or a transaction's end or abort setting one back
 * (keel serve reports the parameters anew when it moved). */
uint64_t sql_settings_version(const sql_session *s);

/*
 * The parameters to report at startup (ParameterStatus): calls fn for
 * each (server_version, server_encoding, client_encoding, DateStyle,
 * integer_datetimes, standard_conforming_strings, TimeZone,
 * application_name, is_superuser, session_authorization, IntervalStyle).
 */
void sql_report_parameters(sql_session *s,
                           void (*fn)(void *ctx, const char *name,
                                      const char *value),
                           void *ctx);

/*
 * Runs a simple Query message: every statement in text, in order, each
 * its own implicit transaction outside a transaction block (PostgreSQL's
 * rules: a multi-statement string outside a block runs as one
 * transaction).  Stops at the first statement that fails: returns its
 * status (not KEEL_OK) with err filled; the statements before it have
 * completed.  An empty string calls sink->empty.
 */
keel_status sql_exec_simple(sql_session *s, const char *text,
                            const sql_sink *sink, sql_error *err);

/* ---- the extended query protocol ------------------------------------ */

/*
 * Parse: prepares text (one statement, or none) as statement `name`
 * ("" is the unnamed statement, which each Parse of it replaces; a named
 * one must be closed before its name is used again: 42P05).  param_types
 * holds nparams type oids from the client, 0 for one to infer from its
 * use ($1 compared with an integer column is an integer); parameters
 * whose type nothing settles are text.  The statement is analysed at
 * once, so that an unknown table or column fails here, as in PostgreSQL.
 */
keel_status sql_parse(sql_session *s, const char *name, const char *text,
                      const uint32_t *param_types, uint16_t nparams,
                      sql_error *err);

/*
 * Describe of a statement: its parameters' types (their number in
 * *nparams, the first max of them in types), and the columns of the rows
 * it returns through sink->columns (*no_data true, and no call, for a
 * statement that returns none).
 */
keel_status sql_describe_statement(sql_session *s, const char *name,
                                   uint32_t *types, uint16_t max,
                                   uint16_t *nparams, const sql_sink *sink,
                                   bool *no_data, sql_error *err);

/* Formats of values: 0 text, 1 binary (PostgreSQL's send/recv forms). */
#define SQL_FORMAT_TEXT 0
#define SQL_FORMAT_BINARY 1

/*
 * Bind: makes portal `portal` ("" the unnamed one, replaced by each Bind
 * of it) from statement `stmt` with its parameters' values: values[i]
 * NULL for SQL NULL, else lens[i] bytes in format formats[i] (nformats 0:
 * all text, 1: all formats[0], else one each); results in rformats
 * likewise (nrformats 0, 1 or one per column).  08P01 for counts that do
 * not match, 22P02 / 22003 for a value that is not one of its type.
 */
keel_status sql_bind(sql_session *s, const char *portal, const char *stmt,
                     uint16_t nformats, const int16_t *formats,
                     uint16_t nvalues, const char *const *values,
                     const uint32_t *lens, uint16_t nrformats,
                     const int16_t *rformats, sql_error *err);

/* Describe of a portal: the columns of its rows, in the formats Bind
 * asked for, or *no_data. */
keel_status sql_describe_portal(sql_session *s, const char *portal,
                                const sql_sink *sink, bool *no_data,
                                sql_error *err);

/*
 * Execute: runs the portal, sending at most max_rows rows (0: all).
 * When rows remain, *suspended is true and the next Execute of the portal
 * goes on (PortalSuspended); else complete() gives the command tag.  Rows
 * only: no columns() call (Describe gives those), unless `describe`: then
 * the portal's first run also calls columns() before its rows, as a
 * Describe of the portal just before would have (a statement without
 * rows calls none, which a Describe reports as NoData), saving the second
 * analysis of the statement that a separate Describe costs.  Outside a
 * transaction block the statements executed up to the next Sync form one
 * transaction.
 */
keel_status sql_execute(sql_session *s, const char *portal, uint32_t max_rows,
                        bool describe, const sql_sink *sink, bool *suspended,
                        sql_error *err);

/* Close of a statement (kind 'S') or a portal ('P'); one that does not
 * exist is no error. */
void sql_close(sql_session *s, char kind, const char *name);

/*
 * Sync: ends the messages since the last one.  Outside a transaction
 * block, commits the transaction they ran in, or aborts it if one failed
 * (the protocol layer skips messages after an error until Sync); closes
 * the unnamed portal.  A failed commit is returned, err filled.
 */
keel_status sql_sync(sql_session *s, sql_error *err);

/* The transaction status ReadyForQuery reports: 'I' idle, 'T' in a
 * transaction block, 'E' in a failed one. */
char sql_txn_status(const sql_session *s);

/* Asks the session's running statement to stop (a CancelRequest): it
 * fails with 57014 at its next check.  Any thread may call it while the
 * session exists. */
void sql_cancel(sql_session *s);

/* A role, as the server reads it to authenticate a client. */
typedef struct sql_role {
    bool exists;
    bool canlogin;      /* LOGIN */
    bool super;         /* SUPERUSER */
    char password[256]; /* its SCRAM-SHA-256 verifier, "" if it has none */
} sql_role;

/*
 * Reads role name from keel_auth.keel_authid (its own transaction: call
 * it outside one, as the server does before the first query).  A
 * database without that table has no roles.  Returns KEEL_OK with
 * out->exists telling whether there is one, or an engine failure with
 * err filled.
 */
keel_status sql_role_find(sql_session *s, const char *name, sql_role *out,
                          sql_error *err);

/*
 * For tests of the foreign keys' epoch (sql_fkey.c): a function called
 * between the commit of a transaction that changed keys and its bump of
 * the epoch (NULL: none), and how many statements have waited for such
 * a bump.
 */
extern void (*sql_fk_bump_pause)(void);
uint64_t sql_fk_committing_waits(void);

#endif /* KEEL_SQL_SQL_H */
