/*
 * sql_internal.h: what the SQL layer's files share: the session, values,
 * analysed expressions, the per-statement arena and error reporting.
 *
 * A statement goes through three steps, each in its own file: the text is
 * parsed by libpg_query into PostgreSQL's raw parse tree (sql_parse.c);
 * expressions are analysed against the tables in scope into sql_expr
 * trees whose columns are resolved to positions and whose types are
 * known (sql_expr.c); and the statement is executed over the engine's API
 * (sql_select.c, sql_modify.c, sql_ddl.c), its results leaving through
 * the session's sql_sink.  Everything a statement allocates comes from
 * the session's arena, reset when the statement ends.
 */
#ifndef KEEL_SQL_SQL_INTERNAL_H
#define KEEL_SQL_SQL_INTERNAL_H

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>
#include <stdarg.h>

#include "port/atomics.h"
#include "sql/sql.h"
#include "sql/sql_numeric.h"

/* ---- the arena: a statement's memory --------------------------------- */

typedef struct sql_arena_block {
    struct sql_arena_block *next;
    size_t used, size;
    char data[];
} sql_arena_block;

typedef struct sql_arena {
    sql_arena_block *head;
    size_t bytes; /* its blocks' */
    size_t limit; /* the most they may hold (statement_memory_limit), or 0 */
    bool refused; /* an allocation went past limit */
} sql_arena;

/* n bytes aligned to 8, freed by sql_arena_reset(); NULL when memory is
 * exhausted or the arena's limit would be passed. */
void *sql_alloc(sql_arena *a, size_t n);
/* A NUL-terminated copy of n bytes of p. */
char *sql_strndup(sql_arena *a, const char *p, size_t n);
/* A point in the arena to come back to, freeing what was allocated
 * since (a loop's per-row memory). */
typedef struct sql_arena_mark {
    sql_arena_block *block;
    size_t used;
} sql_arena_mark;

sql_arena_mark sql_arena_save(const sql_arena *a);
void sql_arena_restore(sql_arena *a, sql_arena_mark m);

/* Frees all but the first block, which is kept for the next statement. */
void sql_arena_reset(sql_arena *a);
void sql_arena_free(sql_arena *a);

/* ---- values ------------------------------------------------------------ */

/*
 * One value during execution.  Integers of every width are held in i and
 * checked against their type's range by the operations that make them;
 * strings (text, name, char(n), a literal of unknown type) point into a
 * row the engine returned or into the arena; so does a numeric, as its
 * stored form (keel.h's KEEL_NUMERIC), which compares with memcmp and
 * is decoded only for arithmetic and output.
 */
typedef struct sql_value {
    uint32_t type; /* SQL_TYPE_* */
    bool isnull;
    union {
        int64_t i;
        double f;
        bool b;
        struct {
            const char *p;
            uint32_t len;
        } s;
    } v;
} sql_value;

/* Whether type is int2, int4, int8 or oid (held in i). */
static inline bool sql_type_is_int(uint32_t type)
{
    return type == SQL_TYPE_INT2 || type == SQL_TYPE_INT4 ||
           type == SQL_TYPE_INT8 || type == SQL_TYPE_OID;
}

/* Whether type is a number: an integer, numeric or float8. */
static inline bool sql_type_is_number(uint32_t type)
{
    return sql_type_is_int(type) || type == SQL_TYPE_NUMERIC ||
           type == SQL_TYPE_FLOAT8;
}

/* Whether type is a date or a timestamp (held in i: days, or
 * microseconds, since 2000-01-01). */
static inline bool sql_type_is_datetime(uint32_t type)
{
    return type == SQL_TYPE_DATE || type == SQL_TYPE_TIMESTAMP ||
           type == SQL_TYPE_TIMESTAMPTZ;
}

/* Whether type is held as a string. */
/*
 * regclass: a relation named by its oid.  Its values are held as the
 * name it prints as (sql_catalog_relname()'s), so that it is a string
 * wherever text is taken and is sent as text (clients are told text:
 * a value in binary would be the oid, read at output); where it meets
 * an oid or an integer (a comparison, a UNION, a cast) the name is read
 * back into the oid (sql_value_cast()).  x::regclass itself is an
 * SQL_FUNC_REGCLASS expression over the oid, which comparisons take the
 * oid of directly.
 */
#define SQL_TYPE_REGCLASS 2205

static inline bool sql_type_is_string(uint32_t type)
{
    return type == SQL_TYPE_TEXT || type == SQL_TYPE_VARCHAR ||
           type == SQL_TYPE_BPCHAR || type == SQL_TYPE_NAME ||
           type == SQL_TYPE_UNKNOWN || type == SQL_TYPE_REGCLASS;
}

/* The type a client is told a column of type t has. */
static inline uint32_t sql_type_wire(uint32_t t)
{
    return t == SQL_TYPE_REGCLASS ? SQL_TYPE_TEXT : t;
}

/* A table column's SQL type: its keel type's, but varchar for text with
 * a length (varchar(n)); and its length, n of char(n) or varchar(n), or
 * numeric(p,s)'s typmod (PostgreSQL's, 4 included: its charlen is
 * p * 64 + s), or -1. */
static inline uint32_t sql_column_type(const keel_column_info *c);
static inline int32_t sql_column_typmod(const keel_column_info *c)
{
    if (c->type == KEEL_NUMERIC)
        return c->charlen > 0 ? numeric_typmod(c->charlen / 64, c->charlen % 64)
                              : -1;
    return (c->type == KEEL_CHAR || c->type == KEEL_TEXT) && c->charlen > 0
               ? (int32_t)c->charlen
               : -1;
}

/* ---- numeric values (sql_value.c) ---- */

/* v's numeric (a NUMERIC value's stored form decoded) into *out. */
keel_status sql_numeric_get(sql_session *s, const sql_value *v, numeric *out);
/* n (freed) as a NUMERIC value in the arena. */
keel_status sql_numeric_put(sql_session *s, numeric *n, sql_value *out);
/* The SQL error for a numeric_status other than NUMERIC_OK (text: the
 * input, for 22P02; typmod: numeric(p,s)'s, for the field overflow). */
keel_status sql_numeric_fail(sql_session *s, numeric_status st,
                             int32_t location, const char *text,
                             uint32_t len, int32_t typmod);
/* numeric(p,s) as a column's charlen (keel_column): p * 64 + s, which
 * holds a scale of 0 to 63; 0A000 for others. */
keel_status sql_numeric_charlen(sql_session *s, int32_t typmod,
                                int32_t location, uint16_t *charlen);
/* Arrays, as keel has them so far: one dimension, held as their text
 * form ({pg_catalog,public}), which the array functions and = ANY read
 * element by element. */
#define SQL_TYPE_CHAR_ARRAY 1002 /* "char"[] */
#define SQL_TYPE_NAME_ARRAY 1003
#define SQL_TYPE_INT2_ARRAY 1005
#define SQL_TYPE_INT4_ARRAY 1007
#define SQL_TYPE_TEXT_ARRAY 1009
#define SQL_TYPE_OID_ARRAY 1028
#define SQL_TYPE_BOOL_ARRAY 1000
#define SQL_TYPE_INT8_ARRAY 1016
#define SQL_TYPE_FLOAT8_ARRAY 1022
#define SQL_TYPE_NUMERIC_ARRAY 1231
#define SQL_TYPE_DATE_ARRAY 1182
#define SQL_TYPE_TIMESTAMP_ARRAY 1115
#define SQL_TYPE_TIMESTAMPTZ_ARRAY 1185
#define SQL_TYPE_UUID_ARRAY 2951

/* The element type of array type t, 0 if t is no array. */
static inline uint32_t sql_type_elem(uint32_t t)
{
    switch (t) {
    case SQL_TYPE_CHAR_ARRAY:
        return SQL_TYPE_BPCHAR;
    case SQL_TYPE_NAME_ARRAY:
        return SQL_TYPE_NAME;
    case SQL_TYPE_INT2_ARRAY:
        return SQL_TYPE_INT2;
    case SQL_TYPE_INT4_ARRAY:
        return SQL_TYPE_INT4;
    case SQL_TYPE_TEXT_ARRAY:
        return SQL_TYPE_TEXT;
    case SQL_TYPE_OID_ARRAY:
        return SQL_TYPE_OID;
    case SQL_TYPE_BOOL_ARRAY:
        return SQL_TYPE_BOOL;
    case SQL_TYPE_INT8_ARRAY:
        return SQL_TYPE_INT8;
    case SQL_TYPE_FLOAT8_ARRAY:
        return SQL_TYPE_FLOAT8;
    case SQL_TYPE_NUMERIC_ARRAY:
        return SQL_TYPE_NUMERIC;
    case SQL_TYPE_DATE_ARRAY:
        return SQL_TYPE_DATE;
    case SQL_TYPE_TIMESTAMP_ARRAY:
        return SQL_TYPE_TIMESTAMP;
    case SQL_TYPE_TIMESTAMPTZ_ARRAY:
        return SQL_TYPE_TIMESTAMPTZ;
    case SQL_TYPE_UUID_ARRAY:
        return SQL_TYPE_UUID;
    default:
        return 0;
    }
}

/* The array type of element type t, 0 if keel has none. */
static inline uint32_t sql_type_array_of(uint32_t t)
{
    switch (t) {
    case SQL_TYPE_BPCHAR:
        return SQL_TYPE_CHAR_ARRAY;
    case SQL_TYPE_NAME:
        return SQL_TYPE_NAME_ARRAY;
    case SQL_TYPE_INT2:
        return SQL_TYPE_INT2_ARRAY;
    case SQL_TYPE_INT4:
        return SQL_TYPE_INT4_ARRAY;
    case SQL_TYPE_TEXT:
    case SQL_TYPE_VARCHAR:
    case SQL_TYPE_UNKNOWN:
    case SQL_TYPE_REGCLASS:
        return SQL_TYPE_TEXT_ARRAY;
    case SQL_TYPE_OID:
        return SQL_TYPE_OID_ARRAY;
    case SQL_TYPE_BOOL:
        return SQL_TYPE_BOOL_ARRAY;
    case SQL_TYPE_INT8:
        return SQL_TYPE_INT8_ARRAY;
    case SQL_TYPE_FLOAT8:
        return SQL_TYPE_FLOAT8_ARRAY;
    case SQL_TYPE_NUMERIC:
        return SQL_TYPE_NUMERIC_ARRAY;
    case SQL_TYPE_DATE:
        return SQL_TYPE_DATE_ARRAY;
    case SQL_TYPE_TIMESTAMP:
        return SQL_TYPE_TIMESTAMP_ARRAY;
    case SQL_TYPE_TIMESTAMPTZ:
        return SQL_TYPE_TIMESTAMPTZ_ARRAY;
    case SQL_TYPE_UUID:
        return SQL_TYPE_UUID_ARRAY;
    default:
        return 0;
    }
}

/* Whether a value of type is held in s: the string types and arrays. */
static inline bool sql_type_in_s(uint32_t type)
{
    return sql_type_is_string(type) || sql_type_elem(type) != 0;
}

/* Whether a value of type is raw bytes in s (uuid's 16, bytea's any),
 * which compare as unsigned bytes, then by length. */
static inline bool sql_type_is_bytes(uint32_t type)
{
    return type == SQL_TYPE_UUID || type == SQL_TYPE_BYTEA;
}

/* Whether type is json or jsonb, held as their text in s (jsonb's
 * canonical). */
static inline bool sql_type_is_json(uint32_t type)
{
    return type == SQL_TYPE_JSON || type == SQL_TYPE_JSONB;
}

/* Whether a value of type has bytes in s that a copy must take along:
 * those held in s, raw bytes, and numeric's stored form. */
static inline bool sql_type_has_bytes(uint32_t type)
{
    return sql_type_in_s(type) || sql_type_is_bytes(type) ||
           sql_type_is_json(type) || type == SQL_TYPE_NUMERIC ||
           type == SQL_TYPE_INTERVAL;
}

/* A bytea's bytes from len bytes of text at p (into v, in the arena):
 * with hex, pairs of hex digits, blanks between pairs allowed (22023 for
 * anything else); else the escape format (a byte as itself, \\ for a
 * backslash, \ooo in octal; 22P02 for another backslash). */
keel_status sql_bytea_decode(sql_session *s, const char *p, uint32_t len,
                             bool hex, int32_t location, sql_value *v);

/* ---- json and jsonb (sql_json.c) ---- */

/* A JSON value's kind, in jsonb's order between kinds. */
typedef enum sql_json_kind {
    SQL_JSON_NULL,
    SQL_JSON_STRING,
    SQL_JSON_NUMBER,
    SQL_JSON_BOOL,
    SQL_JSON_ARRAY,
    SQL_JSON_OBJECT,
} sql_json_kind;

/* A parsed JSON value, in the statement's arena. */
typedef struct sql_json sql_json;
struct sql_json {
    sql_json_kind kind;
    bool b;                /* BOOL */
    const char *src;       /* its text in the input */
    uint32_t srclen;
    const char *str;       /* STRING: its characters; NUMBER: its text */
    uint32_t len;
    uint32_t n;            /* ARRAY: elements; OBJECT: pairs */
    sql_json **kids;       /* ARRAY: n elements; OBJECT: key, value, ... */
};

/* How sql_json_parse() reads: only checking (a json value's input: its
 * strings' escapes not decoded, \u0000 allowed), decoding strings, or
 * as jsonb (decoded, objects canonical, numbers as numeric prints
 * them). */
enum { SQL_JSON_VALIDATE, SQL_JSON_DECODE, SQL_JSON_JSONB };

/* Text being made, in the arena. */
typedef struct sql_json_buf {
    char *p;
    size_t len, cap;
} sql_json_buf;

/* Parses len bytes at p; PostgreSQL's 22P02 (detail and context) for
 * what is not JSON, pointing at location. */
keel_status sql_json_parse(sql_session *s, const char *p, uint32_t len,
                           int mode, int32_t location, sql_json **out);
/* Text as a json (kept as it is) or jsonb (canonical) value of type. */
keel_status sql_json_in(sql_session *s, const char *p, uint32_t len,
                        uint32_t type, int32_t location, sql_value *out);
keel_status sql_json_buf_add(sql_session *s, sql_json_buf *b, const char *p,
                             size_t n);
/* n bytes as a JSON string, quoted and escaped. */
keel_status sql_json_quote(sql_session *s, sql_json_buf *b, const char *p,
                           uint32_t n);
/* j's text as jsonb writes it. */
keel_status sql_json_write(sql_session *s, sql_json_buf *b, const sql_json *j);
/* v as JSON (to_json()): numbers and booleans as themselves, arrays as
 * arrays, json as it is, dates and times in ISO 8601, anything else as
 * its text in a string; NULL as null. */
keel_status sql_json_from_value(sql_session *s, const sql_value *v,
                                sql_json_buf *b);
/* jsonb's order (-1, 0, 1) and equality, of two trees and of two
 * values' text. */
int sql_json_cmp(const sql_json *a, const sql_json *b);
int sql_jsonb_compare(const char *a, uint32_t alen, const char *b,
                      uint32_t blen);
/* Two keys in jsonb's key order: by length, then bytes. */
int sql_json_key_cmp(const sql_json *a, const sql_json *b);
const sql_json *sql_json_get(const sql_json *j, const char *key, uint32_t n);
bool sql_json_contains(const sql_json *a, const sql_json *b);
bool sql_json_exists(const sql_json *j, const char *key, uint32_t n);

/* PostgreSQL's name for a type oid ("integer", "text", ...). */
const char *sql_type_name(uint32_t type);
/* The type oid of a keel column type, and its RowDescription length. */
uint32_t sql_type_of_keel(keel_type t);
int16_t sql_type_len(uint32_t type);

static inline uint32_t sql_column_type(const keel_column_info *c)
{
    return c->type == KEEL_TEXT && c->charlen > 0 ? SQL_TYPE_VARCHAR
                                                   : sql_type_of_keel(c->type);
}

/* ---- the session ------------------------------------------------------- */

/* A setting a session can SET, SHOW and RESET. */
typedef struct sql_setting {
    char name[64];
    char *value;     /* malloc'd */
    char *reset_to;  /* malloc'd: the startup value, or the default */
    struct sql_setting *next;
} sql_setting;

/* WITH queries in scope at once (sql_select.c). */
#define SQL_MAX_CTES 32

/* What undoing a transaction's SET of a setting needs (sql_session.c,
 * "settings in transactions"). */
typedef struct sql_setting_save {
    char name[64];
    uint32_t level; /* 1 the transaction, 2 and up its savepoints' */
    uint8_t state;  /* SAVE_SET, SAVE_LOCAL, SAVE_SET_LOCAL */
    char *prior;    /* malloc'd: the value before the level changed it */
    char *masked;   /* malloc'd: with SAVE_SET_LOCAL, the SET's value */
} sql_setting_save;

/* Where the session is between statements. */
typedef enum sql_block {
    SQL_BLOCK_NONE,   /* no transaction block: each message its own */
    SQL_BLOCK_OPEN,   /* BEGIN ran: 'T' */
    SQL_BLOCK_FAILED, /* a statement failed in the block: 'E' */
} sql_block;

typedef struct sql_pcache_entry sql_pcache_entry;
typedef struct sql_defaults sql_defaults;

/* A prepared statement (Parse). */
typedef struct sql_stmt {
    char name[64];
    char *text;                 /* malloc'd */
    PgQuery__ParseResult *tree; /* its parse, freed with it */
    sql_pcache_entry *pin;      /* the parse cache's entry tree is from */
    const PgQuery__Node *node;  /* the statement, NULL for an empty one */
    uint32_t *types;            /* nparams parameter types (malloc'd) */
    uint16_t nparams;
    /* The result's column types as Describe sent them (malloc'd; NULL if
     * it was not described): an Execute whose columns differ (a table
     * altered since) fails rather than send rows the client cannot read. */
    uint32_t *desc_types;
    uint16_t desc_n;
    struct sql_stmt *next;
} sql_stmt;

/* A portal (Bind): a statement with its parameters' values. */
typedef struct sql_portal {
    char name[64];
    sql_stmt *stmt;
    sql_value *params;     /* nparams, malloc'd with their strings */
    char *numerics;        /* numeric params' stored forms (malloc'd) */
    int16_t *rformats;     /* per result column, malloc'd (or NULL) */
    uint16_t nrformats;
    /* A run that Execute's row limit suspended: its rows, as DataRow
     * bodies would carry them, and its command tag. */
    bool started, done;
    char *rows;            /* [n u16][len i32, bytes]... per row */
    size_t rows_len, rows_cap, rows_pos;
    char tag[64];
    struct sql_portal *next;
} sql_portal;

/* ---- time zones (sql_tz.c) ---------------------------------------------- */

#define SQL_TZ_NAME 64

/* An offset from UTC and its abbreviation ("CEST", "+0530"). */
typedef struct sql_tz_type {
    int32_t off; /* seconds east of Greenwich */
    bool dst;
    char abbr[12];
} sql_tz_type;

/* A POSIX TZ rule's date: kind 'M' (day d, 0 Sunday, of week w, 5 the
 * last, of month m), 'J' (day d of 1..365, February 29 never counted)
 * or 'N' (day d of 0..365); at secs past local midnight. */
typedef struct sql_tz_when {
    char kind;
    int m, w, d;
    int32_t secs;
} sql_tz_when;

typedef struct sql_tz_rule {
    sql_tz_type std, dst;
    bool has_dst;
    sql_tz_when start, end; /* in standard, then in daylight time */
} sql_tz_rule;

/* A zone: a file's transitions (shared, kept for the process) and its
 * rule after them, or a rule alone. */
typedef struct sql_tz {
    char name[SQL_TZ_NAME]; /* as SHOW shows it */
    const int64_t *trans;   /* Unix seconds */
    const uint8_t *idx;
    uint32_t ntrans, ntypes;
    const sql_tz_type *types;
    bool has_rule;
    sql_tz_rule rule;
} sql_tz;

struct sql_session {
    keel_db *db;
    keel_session *ks;
    sql_block block;
    bool in_txn;       /* the engine's transaction is running */
    bool txn_rc;       /* ... read committed (else repeatable read) */
    bool txn_ran;      /* ... and has run a statement */
    int8_t next_iso;   /* the level the next one takes: -1 the default */
    /* The block's savepoints, oldest first: each one's name, its engine
     * level (keel_savepoint()) being its place plus one.  While there are
     * any, a failed statement leaves the engine's transaction running,
     * for a ROLLBACK TO one of them. */
    char (*savepoints)[64];
    uint32_t nsavepoints, savepoints_cap;
    bool default_rc;   /* default_transaction_isolation: read committed */
    sql_setting *settings;
    uint64_t settings_version; /* sql_settings_version()'s */
    /* The simple protocol's message holds several statements: outside a
     * block they run as one implicit block (SET LOCAL does not warn). */
    bool implicit_block;
    /* The WITH queries in scope while a query is analysed and run,
     * outermost first; a name is looked for among the first cte_limit
     * (a WITH query sees only those before it). */
    const PgQuery__CommonTableExpr *ctes[SQL_MAX_CTES];
    uint16_t nctes, cte_limit;
    /* Beside each: WITH RECURSIVE's state (sql_select.c). */
    struct sql_cte_state {
        bool recursive;  /* its WITH says RECURSIVE: it sees them all */
        bool read;       /* its working table was read */
        uint16_t end;    /* its WITH's last query's place + 1 */
        /* While its recursive term runs, the rows the last step found
         * (the working table); while anything else of it runs, a
         * marker that refuses a reference to it; else NULL. */
        const struct sql_rowset *rows;
        /* An INSERT, UPDATE or DELETE: run once when its WITH is
         * reached, its RETURNING rows (NULL when it has none) read by
         * the query as a table. */
        bool dml;
        const struct sql_rowset *dml_rows;
    } cte_state[SQL_MAX_CTES];
    int16_t cte_running; /* the recursive WITH query running, or -1 */
    /* The rows data-modifying WITH queries returned (an INSERT ... SELECT
     * gives back the main arena after each row), emptied as each
     * statement starts; and the tables those queries changed, which the
     * rest of the statement may not read (it would see their changes,
     * where PostgreSQL's sees the table as the statement began). */
    sql_arena cte_arena;
    /* How deep in subqueries (and data-modifying WITH queries) the
     * statement is running: a data-modifying WITH must be at 0. */
    uint16_t subquery_depth;
    const PgQuery__RangeVar *cte_changed[SQL_MAX_CTES];
    uint16_t ncte_changed;
    /* Sequences: the last value nextval() gave of each (sql_sequence.c),
     * and of any (lastval()). */
    struct seq_last *seq_last;
    int64_t seq_lastval;
    bool seq_lastval_set;
    /* The running transaction's changes of settings, oldest first. */
    sql_setting_save *saves;
    uint32_t nsaves, saves_cap;
    sql_arena arena;
    const sql_sink *sink;
    sql_error *err;
    atomic_u32 cancel; /* set by sql_cancel(), cleared per statement */
    /* statement_timeout's, in ms (0: none), and the running statement's
     * end by it on clock_now_ns()'s clock (0: none). */
    uint32_t stmt_timeout_ms;
    uint64_t stmt_deadline_ns;
    /* The statement being run: its text, for error positions. */
    const char *text;
    /* The running transaction's start, microseconds since 2000-01-01
     * (now(), CURRENT_TIMESTAMP). */
    int64_t txn_start_us;
    unsigned short rand_state[3]; /* random()'s, seeded per session */
    /* Analysis met an aggregate function outside a grouping scope. */
    bool saw_aggregate;
    /* The window functions of the query whose output is analysed, and
     * the values of the row being sent (sql_window.c). */
    struct sql_windowing *windowing;
    const sql_value *win_vals;
    /* The TimeZone setting's zone, NULL while it is UTC's offset (and
     * its name, stored as the setting's value). */
    sql_tz tz_store;
    const sql_tz *tz;
    char tz_name[SQL_TZ_NAME];
    /* The set-returning functions of the output list being analysed
     * (sql_select.c), NULL where none may be. */
    struct sql_srf_list *srfs;
    /* The clause being analysed where its errors name it ("RETURNING"),
     * or NULL. */
    const char *clause;
    /* Counts the expressions analysed that read the engine when they
     * run (pg_table_is_visible()): a query holding one keeps no scan
     * open while it evaluates. */
    uint32_t expr_engine_reads;
    /* The extended protocol: statements, portals, and what the statement
     * being analysed or run sees of its parameters.  describe_only:
     * analyse (inferring parameter types, describing the result) and
     * change nothing. */
    sql_stmt *stmts;
    sql_portal *portals;
    uint32_t *param_types; /* the statement's, inferred into */
    uint16_t nparams;
    const sql_value *params; /* the portal's values, NULL while parsing */
    bool describe_only;
    const int16_t *rformats;
    uint16_t nrformats;
    bool extended_failed; /* an error since the last Sync */
    bool inferring;       /* a Parse: $n may add parameters */
    struct sql_explain *explain; /* EXPLAIN: statements describe their plan */
    uint16_t param_cap;   /* param_types' room */
    /* The cache of parse trees (sql_parse.c): at most pcache_limit
     * entries.  While a cached tree runs, locmap maps its positions into
     * the text being run (locmap_on). */
    struct sql_pcache *pcache;
    uint32_t pcache_limit;
    /* Tables' column defaults as read (sql_default.c), by table oid. */
    sql_defaults *defaults;
    /* Its catalog cache's figures as of its last statement, for other
     * sessions' keel_stat_catcache (sql_stat.c), and its place in the
     * list of sessions. */
    struct sql_stat_pub *pub;
    struct sql_session *reg_next, *reg_prev;
    const sql_pcache_entry *locmap;
    bool locmap_on;
    /* Foreign keys (sql_fkey.c): its state, the epoch of foreign-key
     * changes as of the snapshot the statement reads in, and the queue of
     * the checks and actions the running statement's rows call for. */
    struct sql_fk_state *fk;
    uint64_t fk_snap_epoch;
    struct sql_fk_queue *fkq;
};

/* The plan EXPLAIN shows, a line each. */
typedef struct sql_explain {
    char lines[48][200];
    int n;
    int base; /* added to every node's depth (a plan under another) */
} sql_explain;

/* Adds a plan node at depth (0 the top) in PostgreSQL's text layout. */
void sql_explain_node(sql_explain *x, int depth, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Makes room for n parameters (new ones of no type yet) while a
 * statement is prepared. */
keel_status sql_params_grow(sql_session *s, uint16_t n);

/*
 * Fills the session's error: severity ERROR, the SQLSTATE, the message
 * (printf-style).  Returns status, which the caller returns in turn.
 */
keel_status sql_fail(sql_session *s, keel_status status, const char *sqlstate,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same, with a character position (a parse node's location, 0-based,
 * or -1 for none). */
keel_status sql_fail_at(sql_session *s, int32_t location, keel_status status,
                        const char *sqlstate, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* An engine call's failure: its status mapped to a SQLSTATE, its message
 * the session's. */
keel_status sql_fail_engine(sql_session *s, keel_status status);

/* Sends a NOTICE (08006 if the connection is gone). */
keel_status sql_notice(sql_session *s, const char *sqlstate, const char *fmt,
                       ...) __attribute__((format(printf, 3, 4)));
/* 0A000: "<what> is not supported yet". */
keel_status sql_unsupported(sql_session *s, int32_t location,
                            const char *what);
/* 57014 if a cancel was asked for. */
keel_status sql_check_cancel(sql_session *s);

/* The value of setting name ("" if it is not set). */
const char *sql_setting_get(const sql_session *s, const char *name);

/* ---- parsing (sql_parse.c) ------------------------------------------- */

/* Parses text; *out to be freed by pg_query__parse_result__free_unpacked.
 * 42601 with the parser's message and position. */
keel_status sql_parse_raw(sql_session *s, const char *text,
                          PgQuery__ParseResult **out);

/*
 * Parses text through the session's cache: a text that differs from one
 * parsed before only in its constants gets that tree, with its constants
 * rewritten (*pin set: the tree is the cache's until sql_parse_done()).
 * Otherwise the text is parsed, and its tree kept for next time if its
 * constants allow.  `shared`: the tree is kept past the statement (a
 * prepared statement's), so only a text without constants is cached,
 * its tree never rewritten while pinned.
 */
keel_status sql_parse_cached(sql_session *s, const char *text, bool shared,
                             PgQuery__ParseResult **out,
                             sql_pcache_entry **pin);
/* Gives back a tree from sql_parse_cached(): unpinned, or freed. */
void sql_parse_done(sql_session *s, PgQuery__ParseResult *tree,
                    sql_pcache_entry *pin);
/* A position in the tree being run, as a position in its text. */
int32_t sql_parse_location(const sql_session *s, int32_t location);
/* The cache's size in entries (0: off), dropping what no longer fits. */
void sql_parse_cache_resize(sql_session *s, uint32_t limit);
void sql_parse_cache_free(sql_session *s);

typedef struct sql_parse_stats {
    uint64_t entries, hits, misses, uncacheable;
} sql_parse_stats;

void sql_parse_cache_stats(const sql_session *s, sql_parse_stats *out);

/* ---- analysed expressions --------------------------------------------- */

typedef enum sql_expr_kind {
    SQL_EXPR_CONST,
    SQL_EXPR_COLUMN, /* the row's column `column` */
    SQL_EXPR_OP,     /* a binary or unary operator */
    SQL_EXPR_AND,
    SQL_EXPR_OR,
    SQL_EXPR_NOT,
    SQL_EXPR_ISNULL,
    SQL_EXPR_ISNOTNULL,
    SQL_EXPR_CAST,
    SQL_EXPR_FUNC,
    SQL_EXPR_CASE,     /* args: [arg] when then ... [else] */
    SQL_EXPR_COALESCE,
    SQL_EXPR_IN,       /* args[0] IN (args[1..]) */
    SQL_EXPR_LIKE,
    SQL_EXPR_PARAM, /* $n: u.column = n - 1 */
    SQL_EXPR_ANY,   /* args[0] = ANY (args[1], an array) */
    SQL_EXPR_SUBLINK, /* a subquery: u.sublink says what of its rows */
    SQL_EXPR_WINDOW,  /* window function u.column's value for the row */
    SQL_EXPR_DISTINCT, /* args[0] IS DISTINCT FROM args[1] (u.negate: NOT) */
    /* A set-returning function in an output list: its value for the row
     * being sent (u.srf; args are its arguments, which it never
     * evaluates itself). */
    SQL_EXPR_SRF,
} sql_expr_kind;

/* What a subquery in an expression gives. */
typedef enum sql_sublink {
    SQL_SUBLINK_EXPR,   /* its one value (NULL for no row) */
    SQL_SUBLINK_EXISTS, /* whether it has a row */
    SQL_SUBLINK_ARRAY,  /* its values as an array */
    SQL_SUBLINK_IN,     /* whether args[0] equals one of its values */
} sql_sublink;

/* Operators. */
typedef enum sql_op {
    SQL_OP_ADD,
    SQL_OP_SUB,
    SQL_OP_MUL,
    SQL_OP_DIV,
    SQL_OP_MOD,
    SQL_OP_NEG,
    SQL_OP_EQ,
    SQL_OP_NE,
    SQL_OP_LT,
    SQL_OP_LE,
    SQL_OP_GT,
    SQL_OP_GE,
    SQL_OP_CONCAT,
    SQL_OP_REGEX,   /* ~: a POSIX regular expression matches */
    SQL_OP_NREGEX,  /* !~ */
    SQL_OP_IREGEX,  /* ~*: the same ignoring case */
    SQL_OP_NIREGEX, /* !~* */
} sql_op;

/* Built-in functions. */
typedef enum sql_func {
    SQL_FUNC_VERSION,
    SQL_FUNC_RANDOM,
    SQL_FUNC_ABS,
    SQL_FUNC_LENGTH,
    SQL_FUNC_UPPER,
    SQL_FUNC_LOWER,
    SQL_FUNC_CURRENT_SETTING,
    SQL_FUNC_NOW,             /* the transaction's start: timestamptz */
    SQL_FUNC_CLOCK_TIMESTAMP, /* the clock now */
    SQL_FUNC_ROUND,           /* round(x), round(numeric, int) */
    SQL_FUNC_TRUNC,
    SQL_FUNC_CEIL,
    SQL_FUNC_FLOOR,
    SQL_FUNC_CURRENT_SCHEMAS,   /* name[]: the implicit search path */
    SQL_FUNC_ARRAY_POSITION,    /* an element's 1-based place, or NULL */
    SQL_FUNC_ARRAY_TO_STRING,   /* the elements joined by a separator */
    SQL_FUNC_PG_GET_USERBYID,   /* a role's name by oid */
    SQL_FUNC_PG_TABLE_IS_VISIBLE, /* an unqualified name finds it */
    SQL_FUNC_PG_TYPE_IS_VISIBLE,  /* the same of a type */
    SQL_FUNC_PG_ENCODING_TO_CHAR, /* an encoding's name by number */
    SQL_FUNC_FORMAT_TYPE,       /* a type's SQL name, by oid and typmod */
    SQL_FUNC_QUOTE_IDENT,       /* a name quoted where SQL needs it */
    SQL_FUNC_CURRENT_DATABASE,
    SQL_FUNC_REGCLASS,          /* oid::regclass, as its text */
    SQL_FUNC_REGTYPE,           /* oid::regtype, as its text */
    SQL_FUNC_REGNAMESPACE,      /* oid::regnamespace, as its text */
    SQL_FUNC_PG_GET_EXPR,       /* a stored expression's text */
    SQL_FUNC_PG_GET_INDEXDEF,   /* CREATE INDEX ... of an index */
    SQL_FUNC_PG_GET_CONSTRAINTDEF, /* PRIMARY KEY (...) of a constraint */
    SQL_FUNC_PG_GET_STATISTICSOBJDEF_COLUMNS,
    SQL_FUNC_PG_GET_TRIGGERDEF,
    SQL_FUNC_PG_RELATION_IS_PUBLISHABLE,
    SQL_FUNC_ARRAY_UPPER,       /* an array's last subscript */
    SQL_FUNC_ARRAY_ELEMENT,     /* a[i] */
    /* sql_size.c's: sizes of relations and the database, and the
     * descriptions keel keeps none of. */
    SQL_FUNC_PG_RELATION_SIZE,
    SQL_FUNC_PG_TABLE_SIZE,
    SQL_FUNC_PG_INDEXES_SIZE,
    SQL_FUNC_PG_TOTAL_RELATION_SIZE,
    SQL_FUNC_PG_DATABASE_SIZE,
    SQL_FUNC_PG_SIZE_PRETTY,
    SQL_FUNC_OBJ_DESCRIPTION,
    SQL_FUNC_COL_DESCRIPTION,
    SQL_FUNC_SHOBJ_DESCRIPTION,
    SQL_FUNC_HAS_DATABASE_PRIVILEGE,
    SQL_FUNC_SPLIT_PART, /* split_part(text, delimiter, n) */
    SQL_FUNC_ARRAY_CAT, /* array || array: NULL with NULL only */
    /* text -> oid as regclassin, regtypein or regnamespacein read it
     * (args[1], a constant: the kind, SQL_FUNC_REGCLASS and the like,
     * plus 1 << 16 for to_regclass() and its kin, NULL when missing). */
    SQL_FUNC_REG_IN,
    /* sql_string.c's (strict). */
    SQL_FUNC_SUBSTR,
    SQL_FUNC_STRPOS,
    SQL_FUNC_REPLACE,
    SQL_FUNC_BTRIM,
    SQL_FUNC_LTRIM,
    SQL_FUNC_RTRIM,
    SQL_FUNC_LEFT,
    SQL_FUNC_RIGHT,
    SQL_FUNC_REPEAT,
    SQL_FUNC_REVERSE,
    SQL_FUNC_LPAD,
    SQL_FUNC_RPAD,
    SQL_FUNC_STARTS_WITH,
    /* Not strict: any number of arguments, NULLs skipped. */
    SQL_FUNC_CONCAT,
    SQL_FUNC_CONCAT_WS,
    SQL_FUNC_GREATEST,
    SQL_FUNC_LEAST,
    SQL_FUNC_NULLIF, /* args[0], or NULL when it equals args[1] */
    SQL_FUNC_ARRAY,  /* ARRAY[args...]: an array of them, NULLs too */
    /* extract(unit FROM x) (numeric), date_part(unit, x) (double
     * precision), date_trunc(unit, x) (sql_value.c; strict). */
    SQL_FUNC_EXTRACT,
    SQL_FUNC_DATE_PART,
    SQL_FUNC_DATE_TRUNC,
    SQL_FUNC_TO_CHAR, /* to_char(date or timestamp, text) (sql_format.c) */
    /* sql_sequence.c's (strict; they read and change the engine). */
    SQL_FUNC_NEXTVAL,
    SQL_FUNC_CURRVAL,
    SQL_FUNC_SETVAL,
    SQL_FUNC_LASTVAL,
    /* sql_func.c's (strict), SQRT to AGE. */
    SQL_FUNC_SQRT,
    SQL_FUNC_CBRT,
    SQL_FUNC_EXP,
    SQL_FUNC_LN,
    SQL_FUNC_LOG10,
    SQL_FUNC_POWER,
    SQL_FUNC_PI,
    SQL_FUNC_SIGN,
    SQL_FUNC_MOD,
    SQL_FUNC_DIV,
    SQL_FUNC_MD5,
    SQL_FUNC_INITCAP,
    SQL_FUNC_TRANSLATE,
    SQL_FUNC_ASCII,
    SQL_FUNC_CHR,
    SQL_FUNC_OCTET_LENGTH,
    SQL_FUNC_BIT_LENGTH,
    SQL_FUNC_TO_HEX,
    SQL_FUNC_REGEXP_REPLACE,
    SQL_FUNC_TO_TIMESTAMP,
    SQL_FUNC_MAKE_DATE,
    SQL_FUNC_TIMEZONE,
    SQL_FUNC_PG_GET_SERIAL_SEQUENCE,
    SQL_FUNC_PG_BACKEND_PID,
    SQL_FUNC_PG_IS_IN_RECOVERY,
    SQL_FUNC_SET_CONFIG,
    SQL_FUNC_TO_DATE, /* and to_timestamp(text, text) */
    /* sql_array.c's, in this order: */
    SQL_FUNC_STRING_TO_ARRAY,
    SQL_FUNC_ARRAY_APPEND,
    SQL_FUNC_ARRAY_PREPEND,
    SQL_FUNC_ARRAY_CAT_CALL, /* array_cat(): || of two arrays */
    SQL_FUNC_ARRAY_REMOVE,
    SQL_FUNC_ARRAY_REPLACE,
    SQL_FUNC_CARDINALITY,
    SQL_FUNC_ARRAY_NDIMS,
    SQL_FUNC_ARRAY_LOWER,
    SQL_FUNC_FORMAT,
    SQL_FUNC_GEN_RANDOM_UUID, /* a version 4 (random) uuid */
    SQL_FUNC_ENCODE,          /* encode(bytea, format): text */
    SQL_FUNC_DECODE,          /* decode(text, format): bytea */
    SQL_FUNC_SHA224,          /* sha224(bytea) to sha512(bytea): bytea */
    SQL_FUNC_SHA256,
    SQL_FUNC_SHA384,
    SQL_FUNC_SHA512,
    SQL_FUNC_AGE,
    /* sql_json.c's, JSON_GET to TO_JSON; of json or jsonb (e->type). */
    SQL_FUNC_JSON_GET,          /* -> */
    SQL_FUNC_JSON_GET_TEXT,     /* ->> */
    SQL_FUNC_JSON_PATH,         /* #> */
    SQL_FUNC_JSON_PATH_TEXT,    /* #>> */
    SQL_FUNC_JSONB_CONTAINS,    /* @> (and <@, its arguments swapped) */
    SQL_FUNC_JSONB_EXISTS,      /* ? */
    SQL_FUNC_JSON_TYPEOF,
    SQL_FUNC_JSON_ARRAY_LENGTH,
    SQL_FUNC_JSON_BUILD_OBJECT, /* not strict */
    SQL_FUNC_JSON_BUILD_ARRAY,  /* not strict */
    SQL_FUNC_JSONB_CONCAT,      /* jsonb || jsonb */
    SQL_FUNC_JSONB_DELETE,      /* jsonb - text, jsonb - integer */
    SQL_FUNC_JSONB_SET,
    SQL_FUNC_JSONB_STRIP_NULLS,
    SQL_FUNC_TO_JSON,
} sql_func;

typedef struct sql_expr {
    sql_expr_kind kind;
    uint32_t type; /* the result's type oid */
    int32_t location;
    union {
        sql_value value;  /* CONST */
        uint16_t column;  /* COLUMN: 0-based */
        sql_op op;        /* OP */
        sql_func func;    /* FUNC */
        bool negate;      /* LIKE: NOT LIKE; IN: NOT IN */
        bool has_arg;     /* CASE: a simple CASE (CASE x WHEN ...) */
        sql_sublink sublink; /* SUBLINK */
        struct sql_srf *srf; /* SRF */
    } u;
    uint16_t nargs;
    bool has_else; /* CASE */
    bool icase;    /* LIKE: ILIKE, ASCII letters matched in either case */
    struct sql_expr **args;
    /* SUBLINK: the subquery, and the scope of the query around it, whose
     * row it is run for; its rows' type (IN: what both are compared as). */
    const PgQuery__SelectStmt *sub;
    const struct sql_scope *sub_scope;
    uint32_t sub_type;
} sql_expr;

/* Aggregate functions. */
typedef enum sql_agg_kind {
    SQL_AGG_COUNT_STAR,
    SQL_AGG_COUNT,
    SQL_AGG_SUM,
    SQL_AGG_MIN,
    SQL_AGG_MAX,
    SQL_AGG_AVG,
    SQL_AGG_STRING_AGG, /* the values as text, joined by delim */
    SQL_AGG_ARRAY_AGG,  /* the values (NULLs too) as an array */
    SQL_AGG_JSON_AGG,   /* the values (NULLs too) as a json array */
    SQL_AGG_JSONB_AGG,  /* the same as jsonb */
} sql_agg_kind;

typedef struct sql_agg {
    sql_agg_kind kind;
    struct sql_expr *arg; /* over the input row; NULL for count(*) */
    uint32_t type;        /* the result's */
    sql_value delim;      /* STRING_AGG: its separator (a constant) */
    bool distinct;        /* over the group's distinct values, in order */
    struct sql_expr *filter; /* FILTER (WHERE ...) over the input row */
    /* ORDER BY inside the call: its keys over the input row, and where
     * a grouping input keeps their values (after the keys and the
     * aggregates' arguments: sql_grouping's extra slots). */
    struct sql_expr **order;
    bool *odesc, *onulls_first;
    uint16_t norder, order_off;
} sql_agg;

/* A WITH clause's queries brought into scope (sql_with_push()) for a
 * statement, and taken out after it (sql_with_pop(), whether the push
 * failed or not): what they covered, kept meanwhile. */
typedef struct sql_with_saved {
    uint16_t base, limit, nchanged;
    const PgQuery__CommonTableExpr *hidden[SQL_MAX_CTES];
    struct sql_cte_state hidden_state[SQL_MAX_CTES];
} sql_with_saved;
keel_status sql_with_push(sql_session *s, const PgQuery__WithClause *w,
                          sql_with_saved *sv);
void sql_with_pop(sql_session *s, const sql_with_saved *sv);
/* 0A000 if table schema.name (rv names it) was changed by a WITH
 * query's INSERT, UPDATE or DELETE of the statement (rv itself excepted:
 * that query's own target). */
keel_status sql_cte_changed_check(sql_session *s, const PgQuery__RangeVar *rv,
                                  const char *schema, const char *name);

/* Whether two analysed expressions compute the same (a subquery never
 * does). */
bool sql_expr_same(const struct sql_expr *a, const struct sql_expr *b);
/* Whether name is one of the json operators (->, ->>, #>, #>>, @>, <@,
 * ?), and the expression of one. */
bool sql_json_op_name(const char *name);
/* Whether l || r (or l - r) is jsonb's (a jsonb and a jsonb or an
 * untyped literal). */
bool sql_json_is_concat(const sql_expr *l, const sql_expr *r);
keel_status sql_json_op(sql_session *s, const char *name, sql_expr *l,
                        sql_expr *r, int32_t location, sql_expr **out);
/* The json functions (jsonb_typeof() and the like): *handled false if
 * name is none of them. */
keel_status sql_json_func(sql_session *s, const struct sql_scope *scope,
                          const PgQuery__FuncCall *fc, const char *name,
                          sql_expr **out, bool *handled);
keel_status sql_json_eval(sql_session *s, const sql_expr *e,
                          const sql_value *row, sql_value *out);
/* The json functions that return rows, in FROM (jsonb_each() and the
 * like): a number for name (0 if it is none), the columns it gives for
 * its argument *arg (an untyped literal made json or jsonb), and its
 * rows for the argument's value, added to rs. */
int sql_json_srf(const char *name);
keel_status sql_json_srf_columns(sql_session *s, int srf, sql_expr **arg,
                                 int32_t location, const char *alias,
                                 struct sql_rowset *rs);
keel_status sql_json_srf_rows(sql_session *s, int srf, const sql_value *arg,
                              struct sql_rowset *rs);

/* sql_func.c: a call of one of its functions analysed into *out
 * (*handled false when name and argument count are none of them), its
 * value, and whether f is one of them. */
keel_status sql_func_more(sql_session *s, const struct sql_scope *scope,
                          const PgQuery__FuncCall *fc, const char *name,
                          struct sql_expr **out, bool *handled);
keel_status sql_func_more_eval(sql_session *s, const struct sql_expr *e,
                               const sql_value *row, sql_value *out);
/* PostgreSQL's 42883 for a call no function takes, naming the types of
 * e's arguments, with its hint. */
keel_status sql_no_such_function(sql_session *s, int32_t location,
                                 const char *name, const struct sql_expr *e);
/* age(a, b) of two timestamps (a NULL: today's midnight), as
 * PostgreSQL's: years, months and days apart, then the time. */
keel_status sql_interval_age(sql_session *s, const sql_value *a,
                             const sql_value *b, sql_value *out);
/* Whether name is an aggregate function's (count, sum, ...). */
bool sql_agg_name(const char *name);
/* Appends v's text to an array's text form in *buf (at *n, room *cap),
 * quoted where PostgreSQL's array output quotes (NULL for a null). */
keel_status sql_array_put(sql_session *s, char **buf, size_t *n, size_t *cap,
                          const sql_value *v);

/* An aggregate's running state beside its value: a numeric sum's total,
 * integers in i (128 bits, as PostgreSQL's int8 sums), numerics in n. */
typedef struct sql_agg_acc {
    __int128 i;
    numeric n;
} sql_agg_acc;

/* An aggregate's state made empty: *st its value over no rows. */
void sql_agg_init(const sql_agg *a, sql_value *st, sql_agg_acc *acc,
                  int64_t *count);
/* Folds value v (unused by count(*)) into a's state. */
keel_status sql_agg_step(sql_session *s, const sql_agg *a, sql_value *st,
                         sql_agg_acc *acc, int64_t *count, const sql_value *v);
/* Makes *st the aggregate's result; acc is used up. */
keel_status sql_agg_final(sql_session *s, const sql_agg *a, sql_value *st,
                          sql_agg_acc *acc, int64_t count);
/* Analyses aggregate call fc (name: its function's), its argument over
 * scope, into *a. */
keel_status sql_agg_build(sql_session *s, const struct sql_scope *scope,
                          const PgQuery__FuncCall *fc, const char *name,
                          sql_agg *a);

/* Orders values as ORDER BY does: NULL above every value (first with
 * DESC, unless NULLS says otherwise). */
int sql_key_cmp(const sql_value *a, const sql_value *b, bool desc,
                bool nulls_first);

/* ---- window functions (sql_window.c) ---- */

typedef enum sql_win_kind {
    SQL_WIN_AGG, /* an aggregate over the frame */
    SQL_WIN_ROW_NUMBER,
    SQL_WIN_RANK,
    SQL_WIN_DENSE_RANK,
    SQL_WIN_PERCENT_RANK,
    SQL_WIN_CUME_DIST,
    SQL_WIN_NTILE,
    SQL_WIN_LAG,
    SQL_WIN_LEAD,
    SQL_WIN_FIRST_VALUE,
    SQL_WIN_LAST_VALUE,
    SQL_WIN_NTH_VALUE,
} sql_win_kind;

/* A window: PARTITION BY, ORDER BY and the frame (PostgreSQL's
 * FRAMEOPTION bits), each offset an expression without columns. */
typedef struct sql_window {
    struct sql_expr **keys; /* the partition's, then the order's */
    bool *desc, *nulls_first; /* per key */
    uint16_t npart, norder;
    int32_t frame;
    struct sql_expr *start_off, *end_off;
    /* RANGE with an offset: the order key's type (0 otherwise) */
    uint32_t range_type;
    const void *def; /* the definition it came from, to share it */
} sql_window;

typedef struct sql_window_fn {
    sql_win_kind kind;
    sql_agg agg;             /* SQL_WIN_AGG's */
    struct sql_expr *args[3]; /* over the row; agg's is agg.arg */
    uint16_t nargs;
    uint16_t win;            /* its window */
    uint32_t type;           /* its result's */
} sql_window_fn;

/*
 * A query's window functions: its output and ORDER BY name each one's
 * value (SQL_EXPR_WINDOW).  The rows that reach the output stage are
 * kept (width values each), then each function computed over them, then
 * each row sent on with its functions' values in s->win_vals.
 */
typedef struct sql_windowing {
    const PgQuery__SelectStmt *st; /* its WINDOW clause */
    sql_window_fn *fns;
    uint16_t nfns, capfns;
    sql_window *wins;
    uint16_t nwins, capwins;
    /* Analysing a function's arguments ("nested") or a window's
     * definition, where no window function may be: NULL elsewhere. */
    const char *inside;
    sql_value **rows;
    size_t nrows, caprows;
    uint16_t width;
} sql_windowing;

/* fc, which has OVER, analysed over scope: s->windowing's (42P20 where
 * there is none). */
keel_status sql_window_analyse(sql_session *s, const struct sql_scope *scope,
                               const PgQuery__FuncCall *fc, const char *name,
                               struct sql_expr **out);
/* Whether name is a window function's that is no aggregate's. */
bool sql_window_only(const char *name);
/* Keeps a copy of row (w->width values). */
keel_status sql_window_keep(sql_session *s, sql_windowing *w,
                            const sql_value *row);
/* Computes every function over the rows kept, then calls emit for each
 * row, in the last window's order, with s->win_vals its values, until
 * emit sets *done. */
keel_status sql_window_run(sql_session *s, sql_windowing *w,
                           keel_status (*emit)(sql_session *s, void *ctx,
                                               const sql_value *row,
                                               bool *done),
                           void *ctx);
/* EXPLAIN's lines for the windows, from depth on; the depth below. */
int sql_window_explain(struct sql_explain *x, const sql_windowing *w,
                       int depth);

/*
 * A grouping query's analysis: its output, HAVING and ORDER BY are
 * expressions over a group's row, which holds the group's key values
 * (slots 0..nkeys) then its aggregates' results.  A table column is
 * usable there only as a key (42803 otherwise); an aggregate's argument
 * is analysed over the input row.
 */
typedef struct sql_grouping {
    int16_t *key_slot; /* per table column: its key slot, or -1 */
    uint16_t nkeys;
    struct sql_expr **key_exprs; /* each key over the input row */
    int16_t *target_key; /* per output list item: the key it is, or -1 */
    sql_agg *aggs;
    uint16_t naggs, capaggs;
    uint16_t nextra; /* input slots for the aggregates' ORDER BY keys */
    uint16_t nexprkeys; /* keys that are expressions, not columns */
    const struct sql_scope *input;
} sql_grouping;

/* The columns expressions may name: one table's, in its column order. */
typedef struct sql_scope {
    const char *table; /* its name, or its alias */
    const keel_column_info *cols;
    uint16_t ncols;
    sql_grouping *grouping; /* a grouping query's, else NULL */
    /* A join's: each column's table (name or alias), its columns side by
     * side in cols; NULL when they are all `table`'s. */
    const char *const *col_table;
    const char *const *tables; /* a join's tables, for qualifiers */
    uint16_t ntables;
    /* Each column's SQL type (a subquery's columns have any); NULL: the
     * keel type's in cols. */
    const uint32_t *types;
    /* Columns [0, nouter) are an enclosing query's (a LATERAL subquery's
     * left neighbours, a correlated subquery's outer row): a name is
     * looked for there only when no column of the query's own has it. */
    uint16_t nouter;
    /* JOIN ... USING: the right side's columns merged into the left's,
     * which an unqualified name or * does not see; and the merged
     * columns, which * shows first (PostgreSQL's order). */
    const uint16_t *hidden, *first;
    uint16_t nhidden, nfirst;
    /* FROM functions of one column (jsonb_array_elements(...) AS e):
     * their aliases, which name that column too, as a function's
     * whole-row value is its one value in PostgreSQL. */
    const char *const *scalar_alias;
    const uint16_t *scalar_col;
    uint16_t nscalar;
} sql_scope;

/* The table (name or alias) column i of scope belongs to. */
static inline const char *sql_scope_table_of(const sql_scope *sc, uint16_t i)
{
    return sc->col_table != NULL ? sc->col_table[i] : sc->table;
}

/* The SQL type of column i of scope. */
static inline uint32_t sql_scope_type(const sql_scope *sc, uint16_t i)
{
    return sc->types != NULL ? sc->types[i] : sql_column_type(&sc->cols[i]);
}

/*
 * Analyses node against scope (NULL: no columns): resolves column names
 * (42703 for an unknown one, 42P01 for an unknown table qualifier), types
 * the operators (42883 when none fits), folds nothing.  *out in the arena.
 */
keel_status sql_expr_analyse(sql_session *s, const sql_scope *scope,
                             const PgQuery__Node *node, sql_expr **out);

/* sql_expr_analyse(), then every subexpression of constants evaluated
 * (so that 1/0 fails before any row is read); 0A000 for a numeric
 * literal left without a type keel has.  What statements call. */
keel_status sql_expr_prepare(sql_session *s, const sql_scope *scope,
                             const PgQuery__Node *node, sql_expr **out);

/* sql_expr_prepare() of a value assigned to a column of type `type`: a
 * numeric literal (1.5e6) takes that type when it is a number's. */
keel_status sql_expr_prepare_for(sql_session *s, const sql_scope *scope,
                                 const PgQuery__Node *node, uint32_t type,
                                 sql_expr **out);

/* Whether evaluating e reads the engine (pg_table_is_visible()), which
 * it cannot while a scan is open. */
bool sql_expr_reads_engine(const sql_expr *e);

/*
 * The next element of an array's text form ({a,"b c",NULL}) from *pos (0
 * at first): its text in *out (unquoted, in the arena when it had
 * quotes), *isnull for an unquoted NULL.  False at the end.
 */
bool sql_array_next(sql_session *s, const char *p, uint32_t len,
                    uint32_t *pos, const char **out, uint32_t *olen,
                    bool *isnull);

/* *e made of type `type`: a constant cast now, else a cast around it. */
keel_status sql_expr_coerce(sql_session *s, sql_expr **e, uint32_t type);
/* A new expression node in the arena, its nargs arguments unset (NULL
 * when memory is exhausted). */
sql_expr *sql_expr_new(sql_session *s, sql_expr_kind kind, uint32_t type,
                       int32_t location, uint16_t nargs);

/* The common type of n expressions (as CASE's results or a VALUES
 * column's), each coerced to it; 42804 when there is none. */
keel_status sql_expr_unify(sql_session *s, sql_expr **list, uint16_t n,
                           int32_t location, uint32_t *type);

/* ---- object sizes and descriptions (sql_size.c) ---- */

/* A relation's name (or oid in digits) read as PostgreSQL's regclassin
 * reads it, into *oid: 42P01 naming it if there is none, errors at
 * location. */
keel_status sql_regclass_in(sql_session *s, const char *p, uint32_t len,
                            int32_t location, uint32_t *oid);
/* a, a string literal (SQL_TYPE_UNKNOWN constant), made the oid constant
 * sql_regclass_in() reads it as; a NULL stays NULL, of type oid. */
keel_status sql_regclass_const(sql_session *s, sql_expr *a);
/* Argument *arg of function name where PostgreSQL takes a regclass,
 * made an oid expression: x::regclass's x, a literal read as a name (or
 * digits), a regclass value's name read back, an oid or integer as it
 * is; 42883 for other types. */
keel_status sql_regclass_arg(sql_session *s, const char *name,
                             int32_t location, sql_expr **arg);

/* Splits a possibly qualified, possibly quoted name into up to four
 * parts (*n of them; 0 for bad syntax), as PostgreSQL's name input
 * functions read one (sql_size.c). */
void sql_split_names(const char *p, uint32_t len, char parts[4][KEEL_NAME_LEN],
                     int *n);

/* Dates: days since 2000-01-01 (PostgreSQL's epoch) in a DATE, and
 * microseconds since its midnight in a timestamp; days since 1970-01-01
 * in the helpers below (proleptic Gregorian, year 0 being 1 BC). */
#define SQL_EPOCH_DAYS 10957 /* 2000-01-01 in days since 1970-01-01 */
#define USECS_PER_DAY 86400000000LL
int64_t sql_days_from_date(int64_t y, int m, int d);
void sql_date_from_days(int64_t days, int64_t *y, int *m, int *d);
/* The ISO 8601 year and week of a day. */
void sql_iso_week(int64_t days, int64_t *isoyear, int64_t *week);
/* to_char(v, fmt) of a date, timestamp or timestamptz (sql_format.c). */
keel_status sql_to_char_datetime(sql_session *s, const sql_value *v,
                                 const char *fmt, uint32_t flen,
                                 sql_value *out);
/* to_date(text, template) (a date) and to_timestamp(text, template) (a
 * timestamptz, the session zone's wall clock): PostgreSQL's YYYY, YY,
 * MM, Mon, Month, DD, DDD, HH24, HH12, HH, MI, SS, MS, US, AM and PM,
 * quoted text, and any other character standing for a separator. */
keel_status sql_to_datetime(sql_session *s, const sql_value *text,
                            const sql_value *fmt, bool timestamp,
                            sql_value *out);
/* to_char(v, fmt) of an integer, numeric or double precision: the
 * template's 9, 0, . / D, , / G, S, MI, PL, SG, PR and FM. */
keel_status sql_to_char_number(sql_session *s, const sql_value *v,
                               const char *fmt, uint32_t flen,
                               sql_value *out);

/* extract(), date_part() and date_trunc() over a[0] (the unit's text)
 * and a[1] (a date, timestamp or timestamptz), as PostgreSQL's. */
keel_status sql_datetime_func(sql_session *s, sql_func f, const sql_value *a,
                              sql_value *out);

/* sql_store.c: the SQL layer's own tables in schema keel_sql:
 * whether one exists (false too without the schema), making it (and the
 * schema) unless it does, and a key of two text columns. */
#define SQL_STORE_SCHEMA "keel_sql"
keel_status sql_store_exists(sql_session *s, const char *table, bool *exists);
keel_status sql_store_ensure(sql_session *s, const char *table,
                             const keel_column *cols, uint16_t ncols,
                             const uint16_t *pkey, uint16_t npkey);
void sql_store_key2(keel_value *key, const char *a, const char *b);

/* A statement's tree as text, as libpg_query deparses it (malloc'd in
 * *out); KEEL_EINVAL, with no error set, for a tree it cannot deparse. */
keel_status sql_deparse(sql_session *s, PgQuery__Node *stmt, char **out);

/* sql_comment.c: COMMENT ON.  sql_comment_get(): the comment of (oid,
 * subid: a column's number, 0 for the relation), NULL if none.
 * sql_comments_move(): a relation's comments to new_oid (0: dropped),
 * with attmap[old column - 1] giving each column's new number (0: gone;
 * NULL: the same).  sql_relation_oid(): a relation's oid by name (0, with
 * missing_ok, if none has it).  The index comments of a table, kept
 * across a rewrite that makes its indexes anew, by their names. */
keel_status sql_exec_comment(sql_session *s, const PgQuery__CommentStmt *st);
keel_status sql_comment_get(sql_session *s, uint32_t oid, int32_t subid,
                            sql_value *out);
keel_status sql_comments_move(sql_session *s, uint32_t old_oid,
                              uint32_t new_oid, const uint16_t *attmap,
                              uint16_t nmap);
keel_status sql_relation_oid(sql_session *s, const char *schema,
                             const char *name, bool missing_ok, uint32_t *oid);
typedef struct sql_index_comment {
    char name[KEEL_NAME_LEN];
    uint32_t oid;
    const char *text;
    uint32_t len;
} sql_index_comment;
keel_status sql_index_comments(sql_session *s, const char *schema,
                               const char *table, sql_index_comment **out,
                               uint16_t *n);
keel_status sql_index_comments_restore(sql_session *s, const char *schema,
                                       const sql_index_comment *c, uint16_t n);

/* sql_view.c: views. sql_view_find() parses view schema.name's query
 * (schema NULL: public) into the statement's arena, with an alias
 * holding its column list; *found false if there is no such view. */
keel_status sql_exec_create_view(sql_session *s, const PgQuery__ViewStmt *st);
keel_status sql_view_drop(sql_session *s, const char *nsp, const char *name,
                          bool missing_ok);
keel_status sql_view_find(sql_session *s, const char *schema, const char *name,
                          const PgQuery__SelectStmt **query,
                          PgQuery__Alias **alias, bool *found);

/* A value in millionths or thousandths (scale 6, 3 or 0) as numeric, or
 * as double precision (extract() and date_part()). */
keel_status sql_scaled_out(sql_session *s, int64_t value, int scale,
                           bool as_double, sql_value *out);

/* sql_interval.c: the interval type (held in v.s, 16 bytes). */
keel_status sql_interval_in(sql_session *s, const char *text, uint32_t len,
                            int32_t location, sql_value *out);
int sql_interval_out(const sql_value *v, char *buf, size_t size);

/* A zone by what PostgreSQL takes as one (a name of the system's zone
 * database, in any case; a POSIX TZ string; hours east; "interval
 * '+05:30'") into *z; false if spec is none. */
bool sql_tz_load(sql_session *s, const char *spec, sql_tz *z);
/* Whether z is UTC all the time. */
bool sql_tz_is_utc(const sql_tz *z);
/* z's offset (seconds east) at a UTC time, and its abbreviation. */
int32_t sql_tz_offset(const sql_tz *z, int64_t utc_us, const char **abbr);
/* The UTC time of a local time in z (a skipped one read with the offset
 * before the change, a repeated one with the offset after). */
int64_t sql_tz_utc(const sql_tz *z, int64_t local_us);
/* Whether b holds a TZif file this reads (the tests' check of it). */
bool sql_tz_tzif_ok(const uint8_t *b, size_t len);
/* An offset as PostgreSQL prints one after a time: +02, +05:30,
 * -03:30:52 (minutes: +02:00 too, as json's). */
int sql_tz_offset_text(int32_t off, bool minutes, char *buf, size_t size);
/* The session's zone's offset at a UTC time, and the local time of one
 * and the UTC time of a local one (timestamps in microseconds). */
static inline int32_t sql_tz_off(const sql_session *s, int64_t utc_us)
{
    return s->tz != NULL ? sql_tz_offset(s->tz, utc_us, NULL) : 0;
}
static inline int64_t sql_tz_local(const sql_session *s, int64_t utc_us)
{
    return utc_us + (int64_t)sql_tz_off(s, utc_us) * 1000000;
}
static inline int64_t sql_tz_from_local(const sql_session *s, int64_t local_us)
{
    return s->tz != NULL ? sql_tz_utc(s->tz, local_us) : local_us;
}
int sql_interval_cmp(const sql_value *a, const sql_value *b);
/* a op b where one is a date, timestamp or interval, into out of type. */
keel_status sql_interval_arith(sql_session *s, sql_op op, const sql_value *a,
                               const sql_value *b, uint32_t type,
                               sql_value *out);
keel_status sql_interval_extract(sql_session *s, const char *unit,
                                 const sql_value *v, bool as_double,
                                 sql_value *out);
keel_status sql_interval_binary_in(sql_session *s, const char *p, uint32_t len,
                                   sql_value *out);
keel_status sql_interval_binary_out(sql_session *s, const sql_value *v,
                                    const char **out, uint32_t *len);

/* sql_sequence.c: sequences. */
keel_status sql_exec_create_sequence(sql_session *s,
                                     const PgQuery__CreateSeqStmt *st);
keel_status sql_sequence_create(sql_session *s, const char *nsp,
                                const char *name, int64_t start, int64_t inc,
                                int64_t min, int64_t max, bool cycle,
                                const char *ownernsp, const char *ownerrel,
                                bool if_not_exists, bool *made);
/* A sequence's options (START WITH, INCREMENT BY, MINVALUE, MAXVALUE,
 * CYCLE, CACHE, AS) as CREATE SEQUENCE and an identity column take
 * them, within [tmin, tmax] unless AS says otherwise. */
typedef struct sql_seq_opts {
    int64_t start, inc, min, max;
    bool cycle;
} sql_seq_opts;
keel_status sql_sequence_options(sql_session *s, PgQuery__Node **opts,
                                 size_t n, int64_t tmin, int64_t tmax,
                                 sql_seq_opts *out);
keel_status sql_sequence_drop(sql_session *s, const char *nsp,
                              const char *name, bool missing_ok);
keel_status sql_sequences_owned_drop(sql_session *s, const char *nsp,
                                     const char *rel);
keel_status sql_exec_alter_sequence(sql_session *s,
                                    const PgQuery__AlterSeqStmt *st);
keel_status sql_sequence_exists(sql_session *s, const char *nsp,
                                const char *name, bool *found);
/* Whether role name is one CREATE ROLE made (keel_auth.keel_authid). */
keel_status sql_role_exists(sql_session *s, const char *name, bool *found);
/* TRUNCATE ... RESTART IDENTITY: the sequences table nsp.rel owns back
 * at their START values, in the transaction (55000 for one that has
 * none kept). */
keel_status sql_sequences_restart_owned(sql_session *s, const char *nsp,
                                        const char *rel);
keel_status sql_sequence_eval(sql_session *s, sql_func f, const sql_value *a,
                              uint16_t nargs, sql_value *out);
void sql_sequences_free(sql_session *s);

/* sql_string.c: a strict string function of e over its arguments' values
 * a (none NULL); concat() and concat_ws() over row. */
keel_status sql_string_eval(sql_session *s, const sql_expr *e,
                            const sql_value *a, sql_value *out);
keel_status sql_concat_eval(sql_session *s, const sql_expr *e,
                            const sql_value *row, sql_value *out);

/*
 * A string read as PostgreSQL's input function of kind (SQL_FUNC_REGCLASS,
 * SQL_FUNC_REGTYPE, SQL_FUNC_REGNAMESPACE) reads it, into *oid; errors
 * point at location.  With missing_ok a name nothing has (and a type keel
 * lacks) sets *missing instead of failing.
 */
keel_status sql_reg_in(sql_session *s, sql_func kind, const char *p,
                       uint32_t len, int32_t location, bool missing_ok,
                       uint32_t *oid, bool *missing);
/* Types e's arguments (already analysed) as function `name` (called at
 * location) takes them, and sets e's result type; e->u.func is one of
 * SQL_FUNC_PG_RELATION_SIZE to SQL_FUNC_HAS_DATABASE_PRIVILEGE.  A string
 * literal where PostgreSQL takes a regclass is read as a relation's name
 * now (42P01 if none has it). */
keel_status sql_size_analyse(sql_session *s, sql_expr *e, const char *name,
                             int32_t location);
/* Evaluates e with its arguments' values a (none NULL) into *out. */
keel_status sql_size_eval(sql_session *s, const sql_expr *e,
                          const sql_value *a, sql_value *out);

/* Evaluates e over row (one value per scope column; NULL with no scope)
 * into *out (strings in the arena or the row's memory).  22003 for an
 * integer overflow, 22012 for a division by zero, ... */
keel_status sql_expr_eval(sql_session *s, const sql_expr *e,
                          const sql_value *row, sql_value *out);

/* Converts v to type (an explicit cast when is_explicit, else an
 * assignment's), in place.  22P02 for text that is not a value of the
 * type, 22003 out of range, 42846 for a cast that does not exist. */
keel_status sql_value_cast(sql_session *s, sql_value *v, uint32_t type,
                           int32_t typmod, bool is_explicit, int32_t location);

/* v in the format result column i was asked in (text, or binary). */
keel_status sql_value_out(sql_session *s, const sql_value *v, uint16_t i,
                          const char **out, uint32_t *len);
/* The binary (send) form of v into the arena. */
keel_status sql_value_binary(sql_session *s, const sql_value *v,
                             const char **out, uint32_t *len);
/* A parameter's binary form read as type (22P03 when malformed). */
keel_status sql_value_from_binary(sql_session *s, const char *p, uint32_t len,
                                  uint32_t type, sql_value *out);

/* The text format of v into the arena (*out, *len); NULL values have
 * none (the caller sends NULL). */
keel_status sql_value_text(sql_session *s, const sql_value *v,
                           const char **out, uint32_t *len);

/* Copies v's string, if it has one, into the arena, so that it outlives
 * the row it came from (a scan's, which the next row replaces). */
keel_status sql_value_keep(sql_session *s, sql_value *v);

/* Compares two non-null values of comparable types (after analysis):
 * <0, 0, >0. */
int sql_value_compare(const sql_value *a, const sql_value *b);

/* The type oid named by a TypeName (int, integer, int4, bigint, text,
 * varchar, boolean, double precision, ...), and its typmod; 42704 for an
 * unknown type. */
keel_status sql_type_lookup(sql_session *s, const PgQuery__TypeName *tn,
                            uint32_t *type, int32_t *typmod);

/* Engine value <-> SQL value for a column of keel type kt. */
void sql_value_from_keel(const keel_value *kv, keel_type kt, sql_value *out);
void sql_value_to_keel(const sql_value *v, keel_value *out);
/* The engine's keel_value_text_fn (arg: the sql_session): a value as
 * SQL prints it, for the engine's messages (a duplicate key's). */
void sql_value_keel_text(void *arg, keel_type type, const keel_value *v,
                         char *buf, size_t cap);

/* The clock, in microseconds since 2000-01-01 UTC. */
int64_t sql_now_us(void);

/* The string of a String node (NULL if node is not one). */
const char *sql_node_string(const PgQuery__Node *node);

/* ---- statements -------------------------------------------------------- */

keel_status sql_exec_select(sql_session *s, const PgQuery__SelectStmt *st);
keel_status sql_exec_insert(sql_session *s, const PgQuery__InsertStmt *st);
keel_status sql_exec_update(sql_session *s, const PgQuery__UpdateStmt *st);
keel_status sql_exec_delete(sql_session *s, const PgQuery__DeleteStmt *st);
keel_status sql_exec_create_table(sql_session *s, const PgQuery__CreateStmt *st);
keel_status sql_exec_create_table_as(sql_session *s,
                                     const PgQuery__CreateTableAsStmt *st);
keel_status sql_exec_drop(sql_session *s, const PgQuery__DropStmt *st);
keel_status sql_exec_create_schema(sql_session *s,
                                   const PgQuery__CreateSchemaStmt *st);
keel_status sql_exec_create_index(sql_session *s, const PgQuery__IndexStmt *st);
keel_status sql_exec_vacuum(sql_session *s, const PgQuery__VacuumStmt *st);
keel_status sql_exec_truncate(sql_session *s, const PgQuery__TruncateStmt *st);
/* LOCK [TABLE] name [, ...] [IN mode MODE] [NOWAIT], inside a block. */
keel_status sql_exec_lock(sql_session *s, const PgQuery__LockStmt *st);
keel_status sql_exec_copy(sql_session *s, const PgQuery__CopyStmt *st);
keel_status sql_exec_create_role(sql_session *s,
                                 const PgQuery__CreateRoleStmt *st);
keel_status sql_exec_alter_role(sql_session *s,
                                const PgQuery__AlterRoleStmt *st);
keel_status sql_exec_drop_role(sql_session *s,
                               const PgQuery__DropRoleStmt *st);
keel_status sql_exec_alter_table(sql_session *s,
                                 const PgQuery__AlterTableStmt *st);
/* LIMIT's or OFFSET's value (what: "LIMIT" or "OFFSET"), -1 for none
 * or NULL; 2201W if negative. */
keel_status sql_limit_value(sql_session *s, const PgQuery__Node *n,
                            const char *what, int64_t *out);
/* SELECT ... FOR UPDATE / SHARE of one table (sql_lock.c). */
keel_status sql_select_locked(sql_session *s, const PgQuery__SelectStmt *st);
/* A SELECT target naming column table.name (arena nodes; NULL: out of
 * memory). */
PgQuery__Node *sql_column_target(sql_session *s, const char *table,
                                 const char *name);
/* ALTER TABLE ... RENAME [COLUMN] ... TO (sql_ddl.c). */
keel_status sql_exec_rename(sql_session *s, const PgQuery__RenameStmt *st);
/* CHECKPOINT (sql_wal.c): superusers only, as PostgreSQL 15's. */
keel_status sql_exec_checkpoint(sql_session *s);
/* Whether role `name` is a superuser, in the statement's transaction: a
 * name with no role of its own is (the owner, as pg_roles shows it). */
keel_status sql_role_is_super(sql_session *s, const char *name, bool *super);

/* Sends a command tag (printf-style) to the sink. */
keel_status sql_complete(sql_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sends the tag "<verb> <n>" ("SELECT 1", "INSERT 0 5"): what every
 * statement that counts rows ends with, formatted without printf. */
keel_status sql_complete_count(sql_session *s, const char *verb, uint64_t n);

/* Writes v in decimal at buf (at least 21 bytes), without a NUL;
 * returns the length. */
static inline int sql_format_int(int64_t v, char *buf)
{
    char tmp[20];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int n = 0, len = 0;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        buf[len++] = '-';
    while (n > 0)
        buf[len++] = tmp[--n];
    return len;
}

/* An output column: its expression and name. */
typedef struct sql_target {
    sql_expr *expr;
    const char *name;
    const char *table; /* a column * expanded to: its table's name */
} sql_target;

/* Analyses a target list (ResTargets, * expanded over scope) into *out,
 * naming each column as PostgreSQL does. */
keel_status sql_targets_analyse(sql_session *s, const sql_scope *scope,
                                PgQuery__Node **list, size_t n,
                                sql_target **out, uint16_t *nout);

/* A table of a statement: resolved (42P01 if missing) and described. */
typedef struct sql_table {
    const char *schema; /* NULL: the search path */
    const char *name;
    const char *alias;  /* what columns are qualified by */
    keel_table_info info;
    keel_column_info *cols; /* in the arena */
    /* Its indexes, when it has more than its primary key (in the arena;
     * the planner's choices besides the primary key). */
    keel_index_info *idx;
    uint16_t nidx;
    /* Its CHECK constraints, analysed for a statement that writes rows
     * (sql_checks_prepare()). */
    struct sql_expr **checks;
    const char **check_names;
    uint16_t nchecks;
    /* Whether foreign keys refer to it or from it, as a statement writing
     * it found (sql_fk_row()): 0 not looked yet, 1 none, 2 some. */
    uint8_t fk_state;
} sql_table;

keel_status sql_table_open(sql_session *s, const PgQuery__RangeVar *rv,
                           sql_table *t);

/* ---- column defaults (sql_default.c) ---------------------------------- */

/* Table t's defaults, read once per session and kept. */
keel_status sql_defaults_of(sql_session *s, const sql_table *t,
                            const sql_defaults **out);
/* Column col's default expression as parsed (NULL if it has none),
 * valid while the session keeps d. */
const PgQuery__Node *sql_default_node(const sql_defaults *d, uint16_t col);
/* Whether column col (0-based) has a default. */
bool sql_default_has(const sql_defaults *d, uint16_t col);
/* Column col's identity: 'a' (GENERATED ALWAYS), 'd' (BY DEFAULT), or 0
 * for none.  An identity column's default is its sequence's
 * keel_identity_always('seq'::regclass) or keel_identity_by_default(...),
 * which run as nextval() and survive wherever defaults go (TRUNCATE,
 * ALTER TABLE's rewrite). */
char sql_default_identity(const sql_defaults *d, uint16_t col);
/* The table's CHECK constraints as read with its defaults: how many, and
 * the i-th's name and expression. */
uint16_t sql_defaults_nchecks(const sql_defaults *d);
const PgQuery__Node *sql_defaults_check(const sql_defaults *d, uint16_t i,
                                        const char **name);
/* An expression as SQL text (malloc'd), deparsed by libpg_query; and
 * text read back into a "SELECT expr" tree (malloc'd), whose expression
 * sql_expr_tree_node() gives. */
keel_status sql_expr_deparse(sql_session *s, const PgQuery__Node *expr,
                             char **out);
keel_status sql_expr_reparse(sql_session *s, const char *src, uint32_t len,
                             PgQuery__ParseResult **out);
const PgQuery__Node *sql_expr_tree_node(const PgQuery__ParseResult *t);

/* sql_string.c: the bytes of the UTF-8 character at p (at most left),
 * and the characters in len bytes. */
uint32_t sql_utf8_char_len(const char *p, uint32_t left);
uint32_t sql_utf8_count(const char *p, uint32_t len);

/* pg_backend_pid(): the id BackendKeyData gave the session (0 for one
 * not a connection's). */
uint32_t sql_backend_pid(const sql_session *s);
/* set_config(name, value, is_local): SET [LOCAL] name = value, then the
 * value as current_setting() shows it. */
keel_status sql_set_config(sql_session *s, const sql_value *name,
                           const sql_value *value, bool local,
                           sql_value *out);

/* sql_array.c: array functions and format() (SQL_FUNC_STRING_TO_ARRAY
 * to SQL_FUNC_FORMAT): e, its arguments analysed, typed (42883 as name's
 * at location when they fit none), and its value, not strict. */
keel_status sql_array_analyse(sql_session *s, sql_expr *e, const char *name,
                              int32_t location);
keel_status sql_array_eval(sql_session *s, const sql_expr *e,
                           const sql_value *row, sql_value *out);
/* *v, an array, as an array of type: each element read from its text
 * as type's elements are (22P02 for one that is none). */
keel_status sql_array_cast(sql_session *s, sql_value *v, uint32_t type,
                           bool is_explicit, int32_t location);

/* ---- CHECK constraints (sql_check.c) ------------------------------------ */

/* A check as keel_check keeps it. */
typedef struct sql_check_row {
    uint32_t relid, oid;
    char *name, *src; /* in the arena */
} sql_check_row;

/* A check to make: a new one's expression (name NULL: one is made up,
 * made then set) or one carried over (src, its oid kept). */
typedef struct sql_check_def {
    const char *name;
    const PgQuery__Node *expr;
    const char *src;
    uint32_t oid;
    bool made;
} sql_check_def;

/* keel_sql.keel_check made unless it exists (pg_constraint's views read
 * it whenever keel_fkey exists). */
keel_status sql_checks_ensure(sql_session *s);
/* Table relid's checks (every table's for 0), in the arena. */
keel_status sql_checks_read(sql_session *s, uint32_t relid,
                            sql_check_row **rows, uint16_t *nrows);
/* Records checks for table schema.table, which exists (relname: the name
 * its messages and the checks' made-up names give it): each analysed
 * over its columns (42804 unless boolean; no subquery, aggregate, window
 * or set-returning function), named (42710 for a name the table's
 * constraints have) and given an oid. */
keel_status sql_checks_define(sql_session *s, const char *schema,
                              const char *table, const char *relname,
                              sql_check_def *defs, uint16_t n);
/* A table's checks to TRUNCATE's new table (or dropped, new_relid 0). */
keel_status sql_checks_move(sql_session *s, uint32_t old_relid,
                            uint32_t new_relid);
/* Table old's checks for its rewrite, their columns renamed as newname
 * says for each old column (NULL: dropped, and a check naming it goes). */
keel_status sql_checks_carry(sql_session *s, const sql_table *old,
                             const char *const *newname, sql_check_def **out,
                             uint16_t *nout);
/* A statement writing rows of t: its checks analysed (d its defaults),
 * then run on each row (23514 for one that is false). */
keel_status sql_checks_prepare(sql_session *s, sql_table *t,
                               const sql_defaults *d);
keel_status sql_checks_run(sql_session *s, const sql_table *t,
                           const sql_value *row);
/* pg_get_constraintdef() of a check by its oid (*found false if none). */
keel_status sql_check_def_text(sql_session *s, uint32_t oid, bool pretty,
                               sql_value *out, bool *found);
/* ---- UNIQUE constraints' indexes (sql_unique.c) ----------------------- */

/* Unique index `name` of table relid is a UNIQUE constraint's (made by
 * CREATE TABLE or ALTER TABLE ... ADD): recorded, asked, forgotten. */
keel_status sql_unique_add(sql_session *s, uint32_t relid, const char *name);
keel_status sql_unique_has(sql_session *s, uint32_t relid, const char *name,
                           bool *has);
keel_status sql_unique_remove(sql_session *s, uint32_t relid,
                              const char *name);
/* A table made anew (TRUNCATE, ALTER TABLE's rewrite; new_relid 0:
 * dropped): its constraints follow it to schema.table's new oid, those
 * whose index it no longer has go. */
keel_status sql_uniques_move(sql_session *s, uint32_t old_relid,
                             uint32_t new_relid, const char *schema,
                             const char *table);
/* Whether index `index` in schema is a UNIQUE constraint's (*owned), and
 * of which table (into table, KEEL_NAME_LEN bytes). */
keel_status sql_unique_index_owner(sql_session *s, const char *schema,
                                   const char *index, char *table, bool *owned);

/* ---- foreign keys (sql_fkey.c) ------------------------------------------ */

/* keel_sql.keel_fkey made unless it exists (and keel_check with it). */
keel_status sql_fkeys_ensure(sql_session *s);

/* One FOREIGN KEY of a CREATE TABLE or an ALTER TABLE ADD: its
 * constraint, and for a column's REFERENCES that column (1-based; 0 for
 * a table constraint). */
typedef struct sql_fkey_def {
    const PgQuery__Constraint *con;
    uint16_t col;
    /* A column constraint's DEFERRABLE and INITIALLY DEFERRED, which
     * follow it (-1: not said, else 0 or 1); a table constraint's are
     * its own. */
    int8_t deferrable, deferred;
} sql_fkey_def;

/* Records foreign keys of table schema.table (which exists), checked and
 * named as PostgreSQL checks and names them; with validate, the rows the
 * table has already are checked (ALTER TABLE ... ADD). */
keel_status sql_fkeys_define(sql_session *s, const char *schema,
                             const char *table, const sql_fkey_def *defs,
                             uint16_t n, bool validate);
/* ALTER TABLE ... DROP CONSTRAINT of a foreign key of t: *found false
 * (nothing done) if t has none of that name. */
keel_status sql_fkey_drop(sql_session *s, const sql_table *t, const char *name,
                          bool *found);
/* Before DROP TABLE of relid (called name): its own foreign keys go;
 * one another table has on it fails (2BP01) unless that table is among
 * the statement's (dropping[0..ndropping), "schema.name") or cascade. */
keel_status sql_fkeys_drop_table(sql_session *s, uint32_t relid,
                                 const char *name, const char *const *dropping,
                                 uint16_t ndropping, bool cascade);
/* Before TRUNCATE of relid (called name): 0A000 if another table not
 * among the statement's (truncating, as above) refers to it. */
keel_status sql_fkeys_truncate_check(sql_session *s, uint32_t relid,
                                     const char *name,
                                     const char *const *truncating,
                                     uint16_t ntruncating);
/* TRUNCATE ... CASCADE: relids[0..*n) grown by every table that refers
 * to one of them, and to those, in turn (cap in all: 54000 past it). */
keel_status sql_fkeys_referring(sql_session *s, uint32_t *relids, uint16_t *n,
                                uint16_t cap);
/* A table made anew (TRUNCATE, ALTER TABLE's rewrite): its foreign keys,
 * and those that refer to it, follow it to new_relid; map (NULL: the
 * same columns) gives each old column's new number (0: dropped; a key of
 * the table's own goes with it, one that refers to it is 2BP01). */
keel_status sql_fkeys_move(sql_session *s, uint32_t old_relid,
                           uint32_t new_relid, const uint16_t *map,
                           uint16_t ncols, const char *name);
/* What a statement run by sql_run_quietly() returned: its rows' count,
 * and its first row's values joined by ", ". */
typedef struct sql_quiet {
    uint64_t rows;
    char first[512];
} sql_quiet;
/* Runs text (a SELECT, UPDATE or DELETE; *tree: its parse, made and
 * kept there when NULL) with parameters, as a statement of its own whose
 * rows are counted into *q and not sent: its errors carry no position,
 * and the running statement's parameters and WITH queries are out of its
 * sight. */
keel_status sql_run_quietly(sql_session *s, const char *text,
                            PgQuery__ParseResult **tree,
                            const sql_value *params, uint16_t nparams,
                            sql_quiet *q);
/* PostgreSQL's makeObjectName(): "n1_n2_label" in 63 bytes, the longer
 * of n1 and n2 cut first. */
void sql_object_name(const char *n1, const char *n2, const char *label,
                     char *out, size_t cap);
/* 2BP01 if a foreign key rests on unique index `index` of table relid
 * (called table), which ALTER TABLE ... DROP CONSTRAINT would drop; for
 * DROP INDEX (constraint false), relid 0 and table the index's schema. */
keel_status sql_fkeys_index_check(sql_session *s, uint32_t relid,
                                  const char *table, const char *index,
                                  bool constraint);
/* pg_get_constraintdef() of a foreign key by its oid. */
keel_status sql_fkey_def_text(sql_session *s, uint32_t oid, sql_value *out,
                              bool *found);
/* A row of t written: old NULL for an insert, new NULL for a delete.
 * Queues the checks and actions of the foreign keys from and to t for
 * the statement's end (23503 at once for MATCH FULL's mixed nulls). */
keel_status sql_fk_row(sql_session *s, sql_table *t, const sql_value *oldrow,
                       const sql_value *newrow);
/* Around a statement that writes rows: the queue begun (its command tag
 * held back), then run at its end and the tag sent (or rc returned). */
typedef struct sql_fk_queue {
    struct fk_event *head, *tail;
    struct sql_fk_queue *outer;
    const sql_sink *sink;
    char tag[64];
    bool held;
} sql_fk_queue;
keel_status sql_fk_stmt_begin(sql_session *s, sql_fk_queue *q);
keel_status sql_fk_stmt_end(sql_session *s, sql_fk_queue *q, keel_status rc);
/* The transaction's deferred checks, run as it commits. */
keel_status sql_fk_commit_checks(sql_session *s);
/* SET CONSTRAINTS { ALL | name, ... } { DEFERRED | IMMEDIATE }. */
keel_status sql_exec_set_constraints(sql_session *s,
                                     const PgQuery__ConstraintsSetStmt *cs);
/* The epoch of committed foreign-key changes, process-wide. */
uint64_t sql_fk_epoch(void);
/* The transaction ends (committed or not), or rolls back to a savepoint. */
void sql_fk_txn_end(sql_session *s, bool committed);
void sql_fk_rollback_to(sql_session *s);
void sql_fk_free(sql_session *s);
/* A relation's schema and name by oid (*found false if none). */
keel_status sql_relation_by_oid(sql_session *s, uint32_t relid, char *schema,
                                char *name, bool *found);

/* "Failing row contains (1, null, ...)." of row of t, into buf. */
void sql_failing_row(sql_session *s, const sql_table *t, const sql_value *row,
                     char *buf, size_t size);
/* pg_get_serial_sequence(table, column): the sequence a SERIAL or
 * identity column takes its values from, qualified and quoted as
 * PostgreSQL gives it; NULL for another column. */
keel_status sql_serial_sequence(sql_session *s, const sql_value *table,
                                const sql_value *column, sql_value *out);
/* Column col's default for one row (a null of unknown type if it has
 * none), to be assigned to the column by the caller. */
keel_status sql_default_eval(sql_session *s, const sql_defaults *d,
                             uint16_t col, sql_value *out);
/* Column col's default (it has one) analysed, to evaluate per row. */
keel_status sql_default_expr(sql_session *s, const sql_defaults *d,
                             uint16_t col, sql_expr **out);
/* Records the defaults of a table just created: exprs[i] is column i's
 * expression, or NULL. */
keel_status sql_defaults_store(sql_session *s, const char *schema,
                               const char *table,
                               const PgQuery__Node *const *exprs, uint16_t ncols);
/* Moves a table's defaults to new_relid (TRUNCATE), or drops them
 * (new_relid 0: DROP TABLE). */
keel_status sql_defaults_move(sql_session *s, uint32_t old_relid,
                              uint32_t new_relid);
void sql_defaults_free(sql_session *s);

/* A RETURNING list (sql_returning.c): analysed over a table's row, its
 * columns described once, then a row sent per changed row. */
typedef struct sql_returning {
    sql_target *tl;
    uint16_t nt;
    sql_value *out;
    const char **txt;
    uint32_t *lens;
} sql_returning;

/* Analyses list (n items; n == 0: no RETURNING, *r zeroed) over table
 * t's columns and sends the columns' description. */
keel_status sql_returning_begin(sql_session *s, const sql_table *t,
                                PgQuery__Node **list, size_t n,
                                sql_returning *r);
/* Sends list's values over row (one value per table column). */
keel_status sql_returning_row(sql_session *s, sql_returning *r,
                              const sql_value *row);

/*
 * The rows of a subquery, a view or a nested join, read whole into the
 * arena: ncols columns (names in cols, types in types), n rows of ncols
 * values in vals.  col_table, when not NULL, gives each column's table
 * (a nested join's columns keep their tables' qualifiers).
 */
typedef struct sql_rowset {
    uint16_t ncols;
    keel_column_info *cols;
    /* Each column's typmod (-1 for none): set by the query when the
     * caller asks (want_typmods), from the table columns it names. */
    int32_t *typmods;
    bool want_typmods;
    uint32_t *types;
    const char **col_table;
    sql_value *vals;
    size_t n, cap;
    /* Set by the caller: untyped literal columns stay unknown (a UNION's
     * arm, typed by the other arm), rather than becoming text. */
    bool keep_unknown;
} sql_rowset;

/*
 * Set-returning functions in a SELECT's output list (generate_series(),
 * unnest(), the json ones of one column), as PostgreSQL's ProjectSet
 * runs them: for each row reaching the output, each function's rows are
 * made for that row, and the row is sent once per row of the longest,
 * the functions side by side (a shorter one's value NULL once it has
 * run out); none for a row where every one gives none.
 */
typedef struct sql_srf {
    struct sql_expr *expr; /* its SQL_EXPR_SRF node */
    bool unnest;
    int json_srf;          /* sql_json_srf()'s, or 0 */
    sql_rowset rs;         /* its rows for the current input row */
    sql_value cur;         /* what expr gives now */
    /* An integer generate_series(): its values counted out as they are
     * sent rather than kept in rs (more: one is left). */
    bool ints, more;
    int64_t next, stop, step;
} sql_srf;

typedef struct sql_srf_list {
    sql_srf **v;
    uint16_t n, cap;
    /* Analysing another function's arguments, where none may be: what
     * to call the place, else NULL. */
    const char *inside;
} sql_srf_list;

/* fc (generate_series, unnest or a json function of rows) analysed over
 * scope into an SQL_EXPR_SRF of s->srfs: 0A000 where no set-returning
 * function may be (s->clause names the clause). */
keel_status sql_srf_analyse(sql_session *s, const sql_scope *scope,
                            const PgQuery__FuncCall *fc, const char *name,
                            struct sql_expr **out);
/* Whether name is such a function's. */
bool sql_srf_name(const char *name);
/* 0A000 if analysing what began with s->srfs holding n0 functions added
 * one: it was inside `what` (CASE, COALESCE, an aggregate's argument),
 * where PostgreSQL allows none either. */
keel_status sql_srf_none_since(sql_session *s, uint16_t n0, const char *what);
static inline uint16_t sql_srf_count(const sql_session *s)
{
    return s->srfs != NULL ? s->srfs->n : 0;
}

/* Appends a row of out->ncols values, their strings copied. */
keel_status sql_rowset_add(sql_session *s, sql_rowset *out,
                           const sql_value *row);

/*
 * Runs SELECT st, its rows collected into *out rather than sent.  outer,
 * when not NULL, is the scope of an enclosing query whose columns st may
 * name (LATERAL), with their values in outer_row (NULL while only
 * describing).  describe: the columns only, no rows read.
 */
keel_status sql_select_rows(sql_session *s, const PgQuery__SelectStmt *st,
                            const sql_scope *outer, const sql_value *outer_row,
                            bool describe, sql_rowset *out);

/* ---- pg_catalog: views over keel's catalogs (sql_catalog.c) ---------- */

/* Whether name is one of pg_catalog's views. */
bool sql_catalog_is_view(const char *name);
/* The oid PostgreSQL gives catalog `name`, which a view here stands
 * for; 0 if none does. */
uint32_t sql_catalog_view_oid(const char *name);
/* Whether information_schema has a view of that name (tables, columns,
 * views, schemata); sql_catalog_view_rows() reads it by its name with
 * "information_schema." before it. */
bool sql_catalog_is_info_view(const char *name);

/* The rows of pg_catalog view `name` as the transaction sees them
 * (describe: its columns only). */
keel_status sql_catalog_view_rows(sql_session *s, const char *name,
                                  bool describe, sql_rowset *out);

/* pg_table_is_visible(relid): whether an unqualified name finds the
 * relation (pg_catalog's views, then keel_catalog, then public). */
keel_status sql_catalog_visible(sql_session *s, uint32_t relid, bool *out);

/* regclass's text of relid: its name, qualified by its schema unless
 * visible (*out NULL if there is no such relation), in the arena. */
keel_status sql_catalog_relname(sql_session *s, uint32_t relid,
                                const char **out);
/* regnamespace's text of nsp: its name (*out NULL if there is none). */
keel_status sql_catalog_nspname(sql_session *s, uint32_t nsp, const char **out);
/* pg_relation_is_publishable(): whether relid is a user's table. */
keel_status sql_catalog_publishable(sql_session *s, uint32_t relid, bool *out);
/*
 * pg_get_indexdef(indexid, column) ("CREATE [UNIQUE] INDEX name ON
 * schema.table USING btree (cols)", or with column > 0 that key column's
 * name) and, constraint, pg_get_constraintdef() of the primary key or
 * unique constraint the index is ("PRIMARY KEY (cols)"); *out NULL if
 * there is no such index.
 */
keel_status sql_catalog_indexdef(sql_session *s, uint32_t indexid,
                                 int32_t column, bool constraint,
                                 const char **out);

/*
 * A scan of a table's rows that pass a WHERE clause (sql_select.c), by a
 * range of the primary key where the clause bounds it, else whole.  The
 * current row's values (row) are valid until the next call.
 */
typedef struct sql_scan {
    sql_table *t;
    const sql_expr *where;
    keel_scan *ks;
    sql_value *row;              /* the current row, one value a column */
    keel_value *kv, *lo, *hi;    /* the engine's row and bounds */
    bool index_scan;             /* bounded by the primary key */
    uint16_t eq_cols;            /* key columns bound by equality */
    /* Every key column bound by equality: one lookup of the key instead
     * of a scan; `pending` until its row is returned. */
    bool point, pending;
    /* The query counts on the order of the index it chose (ORDER BY is
     * not sorted again): it is read in that order even when no bound
     * could be had; order_index, when set, is the index read whole for
     * that order when no condition bounds the table. */
    bool ordered;
    const char *order_index;
} sql_scan;

/* SELECT * FROM from, built in the arena. */
keel_status sql_star_select(sql_session *s, PgQuery__Node *from,
                            const PgQuery__SelectStmt **out);

keel_status sql_scan_begin(sql_session *s, sql_scan *sc, sql_table *t,
                           const sql_expr *where);
/* The scan a table would get under the conditions conds: "Index Scan
 * using ... on ..." or "Seq Scan on ...". */
void sql_explain_scan(sql_explain *x, int depth, const sql_table *t,
                      uint16_t off, const sql_expr *const *conds,
                      uint16_t nconds);
keel_status sql_scan_next(sql_session *s, sql_scan *sc, bool *found);
void sql_scan_end(sql_scan *sc);

/* ---- session statistics (sql_stat.c) ----------------------------------- */

/* Enters a new session in the list keel_stat_catcache reads (ENOMEM),
 * and takes it out. */
keel_status sql_stat_register(sql_session *s);
void sql_stat_unregister(sql_session *s);
/* Publishes the session's catalog cache figures (every 16th call): at
 * each query message's and Sync's end. */
void sql_stat_publish(sql_session *s);
/* keel_stat_catcache's rows: one per session, the caller's own as of
 * now, the others' as of their last statement. */
keel_status sql_stat_catcache_rows(sql_session *s, bool describe,
                                   sql_rowset *out);
/* keel_stat_wal's one row: the log's counters since the database
 * opened (sql_wal.c). */
keel_status sql_stat_wal_rows(sql_session *s, bool describe, sql_rowset *out);

#endif /* KEEL_SQL_SQL_INTERNAL_H */
