/*
 * sql_default.c: column defaults (CREATE TABLE ... DEFAULT expr).
 *
 * keel's engine keeps no expressions, so the SQL layer keeps them, as
 * PostgreSQL keeps them in pg_attrdef: in a table of its own,
 * keel_sql.keel_attrdef (adrelid oid, adnum int2, adsrc text, primary key
 * (adrelid, adnum)), made through the engine's API by the first CREATE
 * TABLE that has a default, in that statement's transaction, so that it
 * is logged, transactional and read in the transaction's snapshot like
 * any table.  adsrc is the expression as libpg_query deparses it.
 *
 * A table's defaults are read once per session, when a statement first
 * needs them, and kept by the table's oid: an oid is never given to
 * another table, and a table's defaults are written only in the
 * transaction that creates it (TRUNCATE, which makes the table anew,
 * copies them to its new oid), so what a session read stays true.
 * INSERT, COPY FROM and UPDATE ... SET col = DEFAULT evaluate the
 * expression for every row (now(), random()), then assign it to the
 * column as any value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

#define DEF_TABLE "keel_attrdef"
/* Tables whose defaults a session keeps. */
#define DEF_KEPT_MAX 256

/* One table's defaults, as a session read them. */
struct sql_defaults {
    uint32_t relid;
    uint16_t ncols;
    PgQuery__ParseResult **trees; /* per column: "SELECT expr", or NULL */
    uint32_t *types;              /* per column: its SQL type */
    /* The table's CHECK constraints (sql_check.c): names and trees. */
    uint16_t nchecks;
    char **check_names;
    PgQuery__ParseResult **check_trees;
    struct sql_defaults *next;
};

static void defaults_free_one(sql_defaults *d)
{
    for (uint16_t i = 0; i < d->ncols; i++)
        if (d->trees[i] != NULL)
            pg_query__parse_result__free_unpacked(d->trees[i], NULL);
    for (uint16_t i = 0; i < d->nchecks; i++) {
        free(d->check_names[i]);
        if (d->check_trees[i] != NULL)
            pg_query__parse_result__free_unpacked(d->check_trees[i], NULL);
    }
    free(d->check_names);
    free(d->check_trees);
    free(d->trees);
    free(d->types);
    free(d);
}

uint16_t sql_defaults_nchecks(const sql_defaults *d)
{
    return d != NULL ? d->nchecks : 0;
}

const PgQuery__Node *sql_defaults_check(const sql_defaults *d, uint16_t i,
                                        const char **name)
{
    *name = d->check_names[i];
    return sql_expr_tree_node(d->check_trees[i]);
}

/* d's checks, from keel_check (sql_check.c). */
static keel_status checks_load(sql_session *s, sql_defaults *d)
{
    sql_check_row *rows;
    uint16_t n;
    keel_status rc = sql_checks_read(s, d->relid, &rows, &n);

    if (rc != KEEL_OK || n == 0)
        return rc;
    d->check_names = calloc(n, sizeof(*d->check_names));
    d->check_trees = calloc(n, sizeof(*d->check_trees));
    if (d->check_names == NULL || d->check_trees == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        d->check_names[i] = strdup(rows[i].name);
        d->nchecks = (uint16_t)(i + 1);
        if (d->check_names[i] == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = sql_expr_reparse(s, rows[i].src, (uint32_t)strlen(rows[i].src),
                              &d->check_trees[i]);
    }
    return rc;
}

void sql_defaults_free(sql_session *s)
{
    while (s->defaults != NULL) {
        sql_defaults *d = s->defaults;
        s->defaults = d->next;
        defaults_free_one(d);
    }
}

/* The expression node of a "SELECT expr" tree. */
const PgQuery__Node *sql_expr_tree_node(const PgQuery__ParseResult *t)
{
    return t->stmts[0]->stmt->select_stmt->target_list[0]->res_target->val;
}

keel_status sql_expr_deparse(sql_session *s, const PgQuery__Node *expr,
                             char **out)
{
    PgQuery__ResTarget rt = PG_QUERY__RES_TARGET__INIT;
    PgQuery__Node rtn = PG_QUERY__NODE__INIT, seln = PG_QUERY__NODE__INIT;
    PgQuery__SelectStmt sel = PG_QUERY__SELECT_STMT__INIT;
    PgQuery__Node *tl[1] = {&rtn};
    char *text = NULL;
    keel_status rc;

    *out = NULL;
    rt.val = (PgQuery__Node *)expr;
    rtn.node_case = PG_QUERY__NODE__NODE_RES_TARGET;
    rtn.res_target = &rt;
    sel.n_target_list = 1;
    sel.target_list = tl;
    sel.limit_option = PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_DEFAULT;
    sel.op = PG_QUERY__SET_OPERATION__SETOP_NONE;
    seln.node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
    seln.select_stmt = &sel;
    rc = sql_deparse(s, &seln, &text);
    if (rc == KEEL_EINVAL)
        return sql_unsupported(s, -1, "this default expression");
    if (rc != KEEL_OK)
        return rc;
    if (strncmp(text, "SELECT ", 7) != 0 || (*out = strdup(text + 7)) == NULL)
        rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    free(text);
    return rc;
}

keel_status sql_expr_reparse(sql_session *s, const char *src, uint32_t len,
                            PgQuery__ParseResult **out)
{
    char *text = malloc((size_t)len + 8);
    const char *saved = s->text;
    keel_status rc;

    if (text == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(text, "SELECT ", 7);
    memcpy(text + 7, src, len);
    text[7 + len] = '\0';
    s->text = NULL; /* its positions are not the statement's */
    rc = sql_parse_raw(s, text, out);
    s->text = saved;
    free(text);
    if (rc == KEEL_OK &&
        ((*out)->n_stmts != 1 ||
         (*out)->stmts[0]->stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT ||
         (*out)->stmts[0]->stmt->select_stmt->n_target_list != 1)) {
        pg_query__parse_result__free_unpacked(*out, NULL);
        *out = NULL;
        rc = sql_fail(s, KEEL_ECORRUPT, "XX001",
                      "keel_sql holds an expression that is not one: "
                      "\"%.*s\"",
                      (int)len, src);
    }
    return rc;
}

/* The rows of keel_attrdef for relid: their adnum and adsrc (copied into
 * the arena), through a scan of its primary key. */
typedef struct def_row {
    uint16_t attnum;
    const char *src;
    uint32_t len;
} def_row;

static keel_status read_rows(sql_session *s, uint32_t relid, def_row **rows,
                             uint16_t *nrows)
{
    keel_value key = {.v.oid = relid}, row[3];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_scan *sc = NULL;
    uint16_t n = 0, cap = 0;
    def_row *r = NULL;
    bool found;
    keel_status rc;

    *rows = NULL;
    *nrows = 0;
    rc = keel_scan_begin(s->ks, SQL_STORE_SCHEMA, DEF_TABLE, NULL, &b, &b, &sc);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    while ((rc = keel_scan_next(sc, row, &found)) == KEEL_OK && found) {
        if (n == cap) {
            def_row *g;
            cap = cap == 0 ? 8 : (uint16_t)(cap * 2);
            g = sql_alloc(&s->arena, cap * sizeof(*g));
            if (g == NULL) {
                rc = KEEL_ENOMEM;
                break;
            }
            if (n > 0)
                memcpy(g, r, n * sizeof(*g));
            r = g;
        }
        r[n].attnum = (uint16_t)row[1].v.i2;
        r[n].len = row[2].isnull ? 0 : row[2].v.s.len;
        r[n].src = sql_strndup(&s->arena, row[2].isnull ? "" : row[2].v.s.ptr,
                               r[n].len);
        if (r[n].src == NULL) {
            rc = KEEL_ENOMEM;
            break;
        }
        n++;
    }
    keel_scan_end(sc);
    if (rc == KEEL_ENOMEM)
        return sql_fail(s, rc, "53200", "out of memory");
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    *rows = r;
    *nrows = n;
    return KEEL_OK;
}

keel_status sql_defaults_of(sql_session *s, const sql_table *t,
                            const sql_defaults **out)
{
    sql_defaults *d;
    def_row *rows = NULL;
    uint16_t nrows = 0;
    bool exists = false;
    keel_status rc;

    uint32_t kept = 0;

    for (d = s->defaults; d != NULL; d = d->next, kept++)
        if (d->relid == t->info.oid) {
            *out = d;
            return KEEL_OK;
        }
    /* A session that meets ever new tables (TRUNCATE makes one each
     * time) starts over rather than grow: each statement asks for one
     * table's defaults, so none it holds is freed. */
    if (kept >= DEF_KEPT_MAX)
        sql_defaults_free(s);
    rc = sql_store_exists(s, DEF_TABLE, &exists);
    if (rc == KEEL_OK && exists)
        rc = read_rows(s, t->info.oid, &rows, &nrows);
    if (rc != KEEL_OK)
        return rc;
    d = calloc(1, sizeof(*d));
    if (d == NULL || (d->trees = calloc(t->info.ncols + 1u, sizeof(*d->trees))) == NULL ||
        (d->types = calloc(t->info.ncols + 1u, sizeof(*d->types))) == NULL) {
        if (d != NULL)
            free(d->trees);
        free(d);
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    for (uint16_t c = 0; c < t->info.ncols; c++)
        d->types[c] = sql_column_type(&t->cols[c]);
    d->relid = t->info.oid;
    d->ncols = t->info.ncols;
    d->next = s->defaults;
    s->defaults = d;
    for (uint16_t i = 0; rc == KEEL_OK && i < nrows; i++) {
        if (rows[i].attnum < 1 || rows[i].attnum > d->ncols ||
            d->trees[rows[i].attnum - 1] != NULL)
            rc = sql_fail(s, KEEL_ECORRUPT, "XX001",
                          "keel_attrdef has a default for column %u of table "
                          "\"%s\", which has %u columns",
                          rows[i].attnum, t->name, d->ncols);
        else
            rc = sql_expr_reparse(s, rows[i].src, rows[i].len,
                         &d->trees[rows[i].attnum - 1]);
    }
    if (rc == KEEL_OK)
        rc = checks_load(s, d);
    if (rc != KEEL_OK) {
        /* Not kept half read: the next statement reads them again. */
        s->defaults = d->next;
        d->next = NULL;
        defaults_free_one(d);
        return rc;
    }
    *out = d;
    return KEEL_OK;
}

const PgQuery__Node *sql_default_node(const sql_defaults *d, uint16_t col)
{
    return d != NULL && col < d->ncols && d->trees[col] != NULL
               ? sql_expr_tree_node(d->trees[col])
               : NULL;
}

char sql_default_identity(const sql_defaults *d, uint16_t col)
{
    const PgQuery__Node *n = sql_default_node(d, col);
    const char *name;

    if (n == NULL || n->node_case != PG_QUERY__NODE__NODE_FUNC_CALL ||
        n->func_call->n_funcname != 1)
        return 0;
    name = sql_node_string(n->func_call->funcname[0]);
    if (name != NULL && strcmp(name, "keel_identity_always") == 0)
        return 'a';
    if (name != NULL && strcmp(name, "keel_identity_by_default") == 0)
        return 'd';
    return 0;
}

bool sql_default_has(const sql_defaults *d, uint16_t col)
{
    return d != NULL && col < d->ncols && d->trees[col] != NULL;
}

keel_status sql_default_expr(sql_session *s, const sql_defaults *d,
                             uint16_t col, sql_expr **out)
{
    return sql_expr_prepare_for(s, NULL, sql_expr_tree_node(d->trees[col]),
                                d->types[col], out);
}

keel_status sql_default_eval(sql_session *s, const sql_defaults *d,
                             uint16_t col, sql_value *out)
{
    sql_expr *e;
    keel_status rc;

    if (!sql_default_has(d, col)) {
        *out = (sql_value){.type = SQL_TYPE_UNKNOWN, .isnull = true};
        return KEEL_OK;
    }
    rc = sql_default_expr(s, d, col, &e);
    if (rc == KEEL_OK)
        rc = sql_expr_eval(s, e, NULL, out);
    return rc;
}

/* Makes keel_sql.keel_attrdef (and its schema) unless it exists. */
static keel_status table_ensure(sql_session *s)
{
    static const keel_column cols[3] = {
        {.name = "adrelid", .type = KEEL_OID, .notnull = true},
        {.name = "adnum", .type = KEEL_INT2, .notnull = true},
        {.name = "adsrc", .type = KEEL_TEXT, .notnull = true},
    };
    static const uint16_t pkey[2] = {1, 2};

    return sql_store_ensure(s, DEF_TABLE, cols, 3, pkey, 2);
}

static keel_status row_insert(sql_session *s, uint32_t relid, uint16_t attnum,
                              const char *src, size_t len)
{
    keel_value v[3] = {{.v.oid = relid}, {.v.i2 = (int16_t)attnum}, {.isnull = false}};
    keel_status rc;

    v[2].v.s.ptr = src;
    v[2].v.s.len = (uint32_t)len;
    rc = keel_insert(s->ks, SQL_STORE_SCHEMA, DEF_TABLE, v);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/*
 * A default that is a string literal (or one cast to the column's own
 * type), as PostgreSQL stores and shows it: read as the column's type
 * (without its length) and printed as a constant of that type is, an
 * integer or a float-looking numeric bare, a boolean as true or false,
 * anything else quoted and labelled ('x'::text, 'abc'::character
 * varying, '[]'::jsonb).  NULL (no error set) for any other default,
 * which is deparsed as written.
 */
static char *literal_default(sql_session *s, const PgQuery__Node *e,
                             const keel_column_info *col)
{
    uint32_t type = sql_column_type(col), ct;
    int32_t tm;
    const PgQuery__AConst *c;
    sql_value v = {.type = SQL_TYPE_UNKNOWN};
    sql_error saved;
    const char *p, *label;
    uint32_t len;
    keel_status rc;
    size_t cap, o = 0;
    char *out;
    bool bare;

    if (e->node_case == PG_QUERY__NODE__NODE_TYPE_CAST) {
        const PgQuery__TypeCast *tc = e->type_cast;
        if (tc->arg == NULL || tc->type_name == NULL ||
            tc->arg->node_case != PG_QUERY__NODE__NODE_A_CONST ||
            s->err == NULL)
            return NULL;
        saved = *s->err;
        rc = sql_type_lookup(s, tc->type_name, &ct, &tm);
        *s->err = saved;
        if (rc != KEEL_OK || ct != type)
            return NULL;
        e = tc->arg;
    }
    if (e->node_case != PG_QUERY__NODE__NODE_A_CONST || s->err == NULL)
        return NULL;
    c = e->a_const;
    if (c->isnull || c->val_case != PG_QUERY__A__CONST__VAL_SVAL ||
        sql_type_elem(type) != 0)
        return NULL;
    v.v.s.p = c->sval->sval;
    v.v.s.len = (uint32_t)strlen(c->sval->sval);
    saved = *s->err;
    rc = sql_value_cast(s, &v, type, -1, false, -1);
    if (rc == KEEL_OK)
        rc = sql_value_text(s, &v, &p, &len);
    *s->err = saved;
    if (rc != KEEL_OK)
        return NULL;
    if (type == SQL_TYPE_BOOL)
        return strdup(v.v.b ? "true" : "false");
    bare = (type == SQL_TYPE_INT4 && p[0] != '-') ||
           (type == SQL_TYPE_NUMERIC && p[0] >= '0' && p[0] <= '9' &&
            strcspn(p, "eE.") < len);
    label = type == SQL_TYPE_BPCHAR ? "bpchar" : sql_type_name(type);
    cap = 2 * (size_t)len + strlen(label) + 8;
    if ((out = malloc(cap)) == NULL)
        return NULL;
    if (bare) {
        memcpy(out, p, len);
        out[len] = '\0';
        return out;
    }
    out[o++] = '\'';
    for (uint32_t i = 0; i < len; i++) {
        if (p[i] == '\'')
            out[o++] = '\'';
        out[o++] = p[i];
    }
    snprintf(out + o, cap - o, "'::%s", label);
    return out;
}

keel_status sql_defaults_store(sql_session *s, const char *schema,
                               const char *table,
                               const PgQuery__Node *const *exprs, uint16_t ncols)
{
    keel_table_info info;
    keel_column_info *cols;
    bool any = false;
    keel_status rc;

    for (uint16_t i = 0; i < ncols; i++)
        any = any || exprs[i] != NULL;
    if (!any)
        return KEEL_OK;
    cols = sql_alloc(&s->arena, (ncols + 1u) * sizeof(*cols));
    if (cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = keel_table_describe(s->ks, schema, table, &info, cols, ncols);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    /* What the session read of the table before this statement's rows
     * went in (ALTER TABLE's INSERT into the table it rewrites into)
     * is stale now. */
    for (sql_defaults **p = &s->defaults; *p != NULL; p = &(*p)->next)
        if ((*p)->relid == info.oid) {
            sql_defaults *d = *p;
            *p = d->next;
            d->next = NULL;
            defaults_free_one(d);
            break;
        }
    rc = table_ensure(s);
    for (uint16_t i = 0; rc == KEEL_OK && i < ncols; i++) {
        char *src;
        if (exprs[i] == NULL)
            continue;
        src = i < info.ncols ? literal_default(s, exprs[i], &cols[i]) : NULL;
        if (src == NULL)
            rc = sql_expr_deparse(s, exprs[i], &src);
        if (rc != KEEL_OK)
            break;
        rc = row_insert(s, info.oid, (uint16_t)(i + 1), src, strlen(src));
        free(src);
    }
    return rc;
}

keel_status sql_defaults_move(sql_session *s, uint32_t old_relid,
                              uint32_t new_relid)
{
    def_row *rows;
    uint16_t n;
    bool exists = false;
    keel_status rc = sql_store_exists(s, DEF_TABLE, &exists);

    if (rc != KEEL_OK || !exists)
        return rc;
    rc = read_rows(s, old_relid, &rows, &n);
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        keel_value key[2] = {{.v.oid = old_relid}, {.v.i2 = (int16_t)rows[i].attnum}};
        rc = keel_delete(s->ks, SQL_STORE_SCHEMA, DEF_TABLE, key);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (new_relid != 0)
            rc = row_insert(s, new_relid, rows[i].attnum, rows[i].src, rows[i].len);
    }
    return rc;
}

/* A name quoted as quote_ident() quotes one, into buf. */
static void ident_put(const char *name, char *buf, size_t size)
{
    bool plain = (name[0] >= 'a' && name[0] <= 'z') || name[0] == '_';
    size_t n = 0;

    for (const char *p = name; plain && *p != '\0'; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                *p == '_';
    if (plain) {
        snprintf(buf, size, "%s", name);
        return;
    }
    if (n + 1 < size)
        buf[n++] = '"';
    for (const char *p = name; *p != '\0' && n + 3 < size; p++) {
        if (*p == '"')
            buf[n++] = '"';
        buf[n++] = *p;
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

keel_status sql_serial_sequence(sql_session *s, const sql_value *table,
                                const sql_value *column, sql_value *out)
{
    char parts[4][KEEL_NAME_LEN], col[KEEL_NAME_LEN], nsp[2 * KEEL_NAME_LEN + 4],
        seq[2 * KEEL_NAME_LEN + 4], sp[2][KEEL_NAME_LEN];
    PgQuery__RangeVar rv = PG_QUERY__RANGE_VAR__INIT;
    const sql_defaults *d;
    const PgQuery__Node *n, *arg;
    const char *text, *dot;
    sql_table t;
    int np = 0;
    uint16_t c;
    keel_status rc;

    out->isnull = true;
    sql_split_names(table->v.s.p, table->v.s.len, parts, &np);
    if (np < 1 || np > 2)
        return sql_fail(s, KEEL_EINVAL, "42602", "invalid name syntax");
    snprintf(col, sizeof(col), "%.*s",
             (int)(column->v.s.len < sizeof(col) - 1 ? column->v.s.len
                                                     : sizeof(col) - 1),
             column->v.s.p);
    rv.schemaname = np == 2 ? parts[0] : "";
    rv.relname = parts[np - 1];
    rv.location = -1;
    rc = sql_table_open(s, &rv, &t);
    if (rc != KEEL_OK)
        return rc;
    for (c = 0; c < t.info.ncols && strcmp(t.cols[c].name, col) != 0; c++)
        ;
    if (c == t.info.ncols)
        return sql_fail(s, KEEL_ENOENT, "42703",
                        "column \"%s\" of relation \"%s\" does not exist", col,
                        t.name);
    rc = sql_defaults_of(s, &t, &d);
    if (rc != KEEL_OK)
        return rc;
    /* nextval('seq'::regclass), a SERIAL's, or an identity column's */
    n = sql_default_node(d, c);
    if (n == NULL || n->node_case != PG_QUERY__NODE__NODE_FUNC_CALL ||
        n->func_call->n_args != 1 ||
        (strcmp(sql_node_string(n->func_call->funcname[0]), "nextval") != 0 &&
         sql_default_identity(d, c) == 0))
        return KEEL_OK;
    arg = n->func_call->args[0];
    if (arg->node_case == PG_QUERY__NODE__NODE_TYPE_CAST)
        arg = arg->type_cast->arg;
    if (arg->node_case != PG_QUERY__NODE__NODE_A_CONST ||
        arg->a_const->val_case != PG_QUERY__A__CONST__VAL_SVAL)
        return KEEL_OK;
    text = arg->a_const->sval->sval;
    dot = strchr(text, '.');
    if (dot != NULL)
        snprintf(sp[0], sizeof(sp[0]), "%.*s",
                 (int)((size_t)(dot - text) < sizeof(sp[0]) - 1
                           ? (size_t)(dot - text)
                           : sizeof(sp[0]) - 1),
                 text);
    else
        snprintf(sp[0], sizeof(sp[0]), "%s",
                 t.schema != NULL ? t.schema : "public");
    snprintf(sp[1], sizeof(sp[1]), "%s", dot != NULL ? dot + 1 : text);
    ident_put(sp[0], nsp, sizeof(nsp));
    ident_put(sp[1], seq, sizeof(seq));
    {
        size_t len = strlen(nsp) + 1 + strlen(seq);
        char *p = sql_alloc(&s->arena, len + 1);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        snprintf(p, len + 1, "%s.%s", nsp, seq);
        out->isnull = false;
        out->type = SQL_TYPE_TEXT;
        out->v.s.p = p;
        out->v.s.len = (uint32_t)len;
    }
    return KEEL_OK;
}
