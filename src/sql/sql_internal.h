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

/* ---- the arena: a statement's memory --------------------------------- */

typedef struct sql_arena_block {
    struct sql_arena_block *next;
    size_t used, size;
    char data[];
} sql_arena_block;

typedef struct sql_arena {
    sql_arena_block *head;
} sql_arena;

/* n bytes aligned to 8, freed by sql_arena_reset(); NULL when memory is
 * exhausted. */
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
 * row the engine returned or into the arena.
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

/* Whether type is int2, int4, int8 or oid. */
/* Whether type is held as an integer in i: the integer types, and
 * numeric as keel has it so far (sum(bigint)'s results: whole numbers
 * within bigint's range, past which arithmetic fails with 22003). */
static inline bool sql_type_is_int(uint32_t type)
{
    return type == SQL_TYPE_INT2 || type == SQL_TYPE_INT4 ||
           type == SQL_TYPE_INT8 || type == SQL_TYPE_OID ||
           type == SQL_TYPE_NUMERIC;
}

/* Whether type is a date or a timestamp (held in i: days, or
 * microseconds, since 2000-01-01). */
static inline bool sql_type_is_datetime(uint32_t type)
{
    return type == SQL_TYPE_DATE || type == SQL_TYPE_TIMESTAMP ||
           type == SQL_TYPE_TIMESTAMPTZ;
}

/* Whether type is held as a string. */
static inline bool sql_type_is_string(uint32_t type)
{
    return type == SQL_TYPE_TEXT || type == SQL_TYPE_VARCHAR ||
           type == SQL_TYPE_BPCHAR || type == SQL_TYPE_NAME ||
           type == SQL_TYPE_UNKNOWN;
}

/* PostgreSQL's name for a type oid ("integer", "text", ...). */
const char *sql_type_name(uint32_t type);
/* The type oid of a keel column type, and its RowDescription length. */
uint32_t sql_type_of_keel(keel_type t);
int16_t sql_type_len(uint32_t type);

/* ---- the session ------------------------------------------------------- */

/* A setting a session can SET, SHOW and RESET. */
typedef struct sql_setting {
    char name[64];
    char *value;     /* malloc'd */
    char *reset_to;  /* malloc'd: the startup value, or the default */
    struct sql_setting *next;
} sql_setting;

/* Where the session is between statements. */
typedef enum sql_block {
    SQL_BLOCK_NONE,   /* no transaction block: each message its own */
    SQL_BLOCK_OPEN,   /* BEGIN ran: 'T' */
    SQL_BLOCK_FAILED, /* a statement failed in the block: 'E' */
} sql_block;

/* A prepared statement (Parse). */
typedef struct sql_stmt {
    char name[64];
    char *text;                 /* malloc'd */
    PgQuery__ParseResult *tree; /* its parse, freed with it */
    const PgQuery__Node *node;  /* the statement, NULL for an empty one */
    uint32_t *types;            /* nparams parameter types (malloc'd) */
    uint16_t nparams;
    struct sql_stmt *next;
} sql_stmt;

/* A portal (Bind): a statement with its parameters' values. */
typedef struct sql_portal {
    char name[64];
    sql_stmt *stmt;
    sql_value *params;     /* nparams, malloc'd with their strings */
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

struct sql_session {
    keel_db *db;
    keel_session *ks;
    sql_block block;
    bool in_txn;       /* the engine's transaction is running */
    sql_setting *settings;
    sql_arena arena;
    const sql_sink *sink;
    sql_error *err;
    atomic_u32 cancel; /* set by sql_cancel(), cleared per statement */
    /* The statement being run: its text, for error positions. */
    const char *text;
    /* The running transaction's start, microseconds since 2000-01-01
     * (now(), CURRENT_TIMESTAMP). */
    int64_t txn_start_us;
    unsigned short rand_state[3]; /* random()'s, seeded per session */
    /* Analysis met an aggregate function outside a grouping scope. */
    bool saw_aggregate;
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
};

/* The plan EXPLAIN shows, a line each. */
typedef struct sql_explain {
    char lines[48][200];
    int n;
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
/* 0A000: "<what> is not supported yet". */
keel_status sql_unsupported(sql_session *s, int32_t location,
                            const char *what);
/* 57014 if a cancel was asked for. */
keel_status sql_check_cancel(sql_session *s);

/* The value of setting name ("" if it is not set). */
const char *sql_setting_get(const sql_session *s, const char *name);

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
} sql_expr_kind;

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
    } u;
    uint16_t nargs;
    bool has_else; /* CASE */
    struct sql_expr **args;
} sql_expr;

/* Aggregate functions. */
typedef enum sql_agg_kind {
    SQL_AGG_COUNT_STAR,
    SQL_AGG_COUNT,
    SQL_AGG_SUM,
    SQL_AGG_MIN,
    SQL_AGG_MAX,
    SQL_AGG_AVG,
} sql_agg_kind;

typedef struct sql_agg {
    sql_agg_kind kind;
    struct sql_expr *arg; /* over the input row; NULL for count(*) */
    uint32_t type;        /* the result's */
} sql_agg;

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
} sql_scope;

/* The table (name or alias) column i of scope belongs to. */
static inline const char *sql_scope_table_of(const sql_scope *sc, uint16_t i)
{
    return sc->col_table != NULL ? sc->col_table[i] : sc->table;
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
keel_status sql_exec_drop(sql_session *s, const PgQuery__DropStmt *st);
keel_status sql_exec_create_index(sql_session *s, const PgQuery__IndexStmt *st);
keel_status sql_exec_vacuum(sql_session *s, const PgQuery__VacuumStmt *st);
keel_status sql_exec_truncate(sql_session *s, const PgQuery__TruncateStmt *st);
/* LOCK [TABLE] name [, ...] [IN mode MODE] [NOWAIT], inside a block. */
keel_status sql_exec_lock(sql_session *s, const PgQuery__LockStmt *st);
keel_status sql_exec_copy(sql_session *s, const PgQuery__CopyStmt *st);
keel_status sql_exec_alter_table(sql_session *s,
                                 const PgQuery__AlterTableStmt *st);

/* Sends a command tag (printf-style) to the sink. */
keel_status sql_complete(sql_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A table of a statement: resolved (42P01 if missing) and described. */
typedef struct sql_table {
    const char *schema; /* NULL: the search path */
    const char *name;
    const char *alias;  /* what columns are qualified by */
    keel_table_info info;
    keel_column_info *cols; /* in the arena */
} sql_table;

keel_status sql_table_open(sql_session *s, const PgQuery__RangeVar *rv,
                           sql_table *t);

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
} sql_scan;

keel_status sql_scan_begin(sql_session *s, sql_scan *sc, sql_table *t,
                           const sql_expr *where);
/* The scan a table would get under the conditions conds: "Index Scan
 * using ... on ..." or "Seq Scan on ...". */
void sql_explain_scan(sql_explain *x, int depth, const sql_table *t,
                      uint16_t off, const sql_expr *const *conds,
                      uint16_t nconds);
keel_status sql_scan_next(sql_session *s, sql_scan *sc, bool *found);
void sql_scan_end(sql_scan *sc);

#endif /* KEEL_SQL_SQL_INTERNAL_H */
