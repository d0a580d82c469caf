/*
 * sql_modify.c: INSERT, UPDATE and DELETE.
 *
 * INSERT ... VALUES evaluates each row's expressions, casts them to their
 * columns' types as an assignment does (a quoted literal to any type, an
 * integer to a wider or, in range, a narrower one, char(n) padded), and
 * inserts the rows one by one.  INSERT ... SELECT reads the query's rows
 * first, then assigns and inserts them the same way.
 *
 * UPDATE and DELETE scan the rows the WHERE clause selects and change
 * each one while the scan is open: the version the scan returned, through
 * the scan (keel_scan_update(), keel_scan_delete(): tables with or
 * without a primary key), or by its primary key (keel_update(),
 * keel_delete()) when every key column is bound by equality and the row
 * was looked up instead of scanned.  The changes are part of the scan's
 * command, which the scan does not see (src/access/README.md, "Command
 * ids"), so a statement never meets the versions it wrote itself, not
 * even an UPDATE that moves rows forward in the order of the scan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

/* Casts v to column c's type, as an assignment. */
static keel_status to_column(sql_session *s, const sql_table *t,
                             const keel_column_info *c, sql_value *v,
                             int32_t location)
{
    uint32_t type = sql_column_type(c);
    keel_status rc;

    if (v->isnull) {
        if (c->notnull)
            return sql_fail(s, KEEL_ETYPE, "23502",
                            "null value in column \"%s\" of relation \"%s\" "
                            "violates not-null constraint",
                            c->name, t->name);
        v->type = type;
        return KEEL_OK;
    }
    rc = sql_value_cast(s, v, type, sql_column_typmod(c), false, location);
    if (rc == KEEL_ETYPE && s->err != NULL) {
        /* Name the column, as PostgreSQL does. */
        snprintf(s->err->message, sizeof(s->err->message),
                 "column \"%s\" is of type %s but expression is of type %s",
                 c->name, sql_type_name(type), sql_type_name(v->type));
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "You will need to rewrite or cast the expression.");
    }
    if (rc == KEEL_OK && c->type == KEEL_NAME && v->v.s.len > 63)
        v->v.s.len = 63;
    return rc;
}

/* A not-null column that row leaves null fails, as PostgreSQL's check
 * does, showing the row: "Failing row contains (1, null, ...)". */
static keel_status check_not_null(sql_session *s, const sql_table *t,
                                  const sql_value *row)
{
    char detail[256];
    size_t used;

    for (uint16_t c = 0; c < t->info.ncols; c++) {
        if (!row[c].isnull || !t->cols[c].notnull)
            continue;
        used = (size_t)snprintf(detail, sizeof(detail), "Failing row contains (");
        for (uint16_t i = 0; i < t->info.ncols && used < sizeof(detail); i++) {
            const char *p = "null";
            uint32_t len = 4;
            if (!row[i].isnull && sql_value_text(s, &row[i], &p, &len) != KEEL_OK)
                break;
            used += (size_t)snprintf(detail + used, sizeof(detail) - used,
                                     "%s%.*s", i > 0 ? ", " : "", (int)len, p);
        }
        if (used < sizeof(detail))
            snprintf(detail + used, sizeof(detail) - used, ").");
        sql_fail(s, KEEL_ETYPE, "23502",
                 "null value in column \"%s\" of relation \"%s\" violates "
                 "not-null constraint",
                 t->cols[c].name, t->name);
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail), "%s", detail);
        return KEEL_ETYPE;
    }
    return KEEL_OK;
}

/* The column named name (42703 if none). */
static keel_status column_index(sql_session *s, const sql_table *t,
                                const char *name, int32_t location,
                                uint16_t *out)
{
    for (uint16_t i = 0; i < t->info.ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0) {
            *out = i;
            return KEEL_OK;
        }
    return sql_fail_at(s, location, KEEL_ENOENT, "42703",
                       "column \"%s\" of relation \"%s\" does not exist", name,
                       t->name);
}

/* Starts a row: the columns that the first nset of map do not name get
 * their defaults (or null), the rest null until set. */
static keel_status row_defaults(sql_session *s, const sql_defaults *defs,
                                const sql_table *t, const uint16_t *map,
                                uint16_t nset, sql_value *row, int32_t *loc)
{
    for (uint16_t c = 0; c < t->info.ncols; c++) {
        row[c] = (sql_value){.type = SQL_TYPE_UNKNOWN, .isnull = true};
        loc[c] = -1;
    }
    for (uint16_t c = 0; c < t->info.ncols; c++) {
        bool named = false;
        keel_status rc;
        if (!sql_default_has(defs, c))
            continue;
        for (uint16_t i = 0; i < nset && !named; i++)
            named = map[i] == c;
        if (named)
            continue;
        rc = sql_default_eval(s, defs, c, &row[c]);
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

/* Casts row's values (one per table column, null where none was given)
 * to their columns and inserts it.  loc: per column, the position its
 * errors point at, or -1. */
static keel_status insert_row(sql_session *s, const sql_table *t,
                              sql_value *row, const int32_t *loc,
                              keel_value *kv, sql_returning *ret)
{
    keel_status rc;

    for (uint16_t c = 0; c < t->info.ncols; c++) {
        if (row[c].isnull) {
            row[c].type = sql_type_of_keel(t->cols[c].type);
            continue;
        }
        rc = to_column(s, t, &t->cols[c], &row[c], loc[c]);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = check_not_null(s, t, row);
    if (rc != KEEL_OK)
        return rc;
    for (uint16_t c = 0; c < t->info.ncols; c++)
        sql_value_to_keel(&row[c], &kv[c]);
    rc = keel_insert(s->ks, t->schema, t->name, kv);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (ret->nt > 0) {
        rc = sql_returning_row(s, ret, row);
        if (rc != KEEL_OK)
            return rc;
    }
    return sql_check_cancel(s);
}

/*
 * INSERT ... SELECT: the query's rows are read to a buffer first, in text
 * with their columns' types, then each is read back as its type and
 * assigned to its column as an INSERT ... VALUES row is.  Command ids
 * alone would not keep the query from meeting the rows the statement
 * inserts: the engine makes each scan a command of its own, and a query
 * may begin several (a join reads its inner table anew for each outer
 * row), the later ones after rows went in.
 */
typedef struct select_buffer {
    sql_session *s;
    const sql_sink *outer;
    uint32_t *types;
    uint16_t ncols;
    char *rows; /* per row: per column [len i32][bytes], -1 for null */
    size_t len, cap;
    uint64_t nrows;
} select_buffer;

static int buf_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    select_buffer *b = ctx;

    b->types = sql_alloc(&b->s->arena, (n + 1) * sizeof(*b->types));
    if (b->types == NULL)
        return -1;
    for (uint16_t i = 0; i < n; i++)
        b->types[i] = cols[i].type;
    b->ncols = n;
    return 0;
}

static int buf_row(void *ctx, const char *const *vals, const uint32_t *lens,
                   uint16_t n)
{
    select_buffer *b = ctx;
    size_t need = 0;

    for (uint16_t i = 0; i < n; i++)
        need += 4 + (vals[i] != NULL ? lens[i] : 0);
    if (b->len + need > b->cap) {
        size_t cap = b->cap == 0 ? 65536 : b->cap;
        char *r;
        while (cap < b->len + need)
            cap *= 2;
        r = realloc(b->rows, cap);
        if (r == NULL)
            return -1;
        b->rows = r;
        b->cap = cap;
    }
    for (uint16_t i = 0; i < n; i++) {
        int32_t len = vals[i] != NULL ? (int32_t)lens[i] : -1;
        memcpy(b->rows + b->len, &len, 4);
        b->len += 4;
        if (len > 0) {
            memcpy(b->rows + b->len, vals[i], (size_t)len);
            b->len += (size_t)len;
        }
    }
    b->nrows++;
    return 0;
}

static int buf_complete(void *ctx, const char *tag)
{
    (void)ctx;
    (void)tag;
    return 0;
}

static int buf_notice(void *ctx, const char *severity, const char *sqlstate,
                      const char *message)
{
    select_buffer *b = ctx;

    return b->outer->notice != NULL
               ? b->outer->notice(b->outer->ctx, severity, sqlstate, message)
               : 0;
}

static keel_status insert_select(sql_session *s, const PgQuery__InsertStmt *st,
                                 const sql_table *t, const sql_defaults *defs,
                                 const uint16_t *map, uint16_t nmap,
                                 sql_value *row, int32_t *loc, keel_value *kv,
                                 sql_returning *ret)
{
    select_buffer b = {.s = s, .outer = s->sink};
    sql_sink sink = {.ctx = &b, .columns = buf_columns, .row = buf_row,
                     .complete = buf_complete, .notice = buf_notice};
    const sql_sink *outer = s->sink;
    const int16_t *rformats = s->rformats;
    uint16_t nrformats = s->nrformats;
    const PgQuery__SelectStmt *sel;
    int32_t *tloc = NULL;
    uint64_t n = 0;
    size_t pos = 0;
    keel_status rc;

    if (s->explain != NULL)
        s->explain->base++;
    /* The query's values in text, whatever formats the client asked. */
    s->sink = &sink;
    s->rformats = NULL;
    s->nrformats = 0;
    rc = sql_exec_select(s, st->select_stmt->select_stmt);
    s->sink = outer;
    s->rformats = rformats;
    s->nrformats = nrformats;
    if (s->explain != NULL)
        s->explain->base--;
    /* Errors point at the query's output items when it names them one
     * by one (not through a *). */
    sel = st->select_stmt->select_stmt;
    if (rc == KEEL_OK && sel->n_target_list == b.ncols) {
        tloc = sql_alloc(&s->arena, (b.ncols + 1) * sizeof(*tloc));
        if (tloc == NULL)
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint16_t i = 0; rc == KEEL_OK && i < b.ncols; i++) {
            const PgQuery__Node *item = sel->target_list[i];
            tloc[i] = item->node_case == PG_QUERY__NODE__NODE_RES_TARGET
                          ? item->res_target->location
                          : -1;
        }
    }
    if (rc == KEEL_OK && b.ncols > nmap)
        rc = sql_fail_at(s, tloc != NULL ? tloc[nmap] : -1, KEEL_EINVAL, "42601",
                         "INSERT has more expressions than target columns");
    if (rc == KEEL_OK && b.ncols < nmap && st->n_cols > 0)
        rc = sql_fail_at(s, st->cols[b.ncols]->res_target->location, KEEL_EINVAL,
                         "42601", "INSERT has more target columns than expressions");
    for (uint64_t r = 0; rc == KEEL_OK && r < b.nrows && !s->describe_only;
         r++) {
        sql_arena_mark m = sql_arena_save(&s->arena);
        rc = row_defaults(s, defs, t, map, b.ncols, row, loc);
        for (uint16_t i = 0; rc == KEEL_OK && i < b.ncols; i++) {
            int32_t len;
            sql_value *v = &row[map[i]];
            memcpy(&len, b.rows + pos, 4);
            pos += 4;
            if (len < 0)
                continue;
            /* Read back as the query's own type, then assigned. */
            *v = (sql_value){.type = SQL_TYPE_UNKNOWN, .isnull = false};
            v->v.s.p = b.rows + pos;
            v->v.s.len = (uint32_t)len;
            pos += (size_t)len;
            loc[map[i]] = tloc != NULL ? tloc[i] : -1;
            if (b.types[i] != SQL_TYPE_UNKNOWN)
                rc = sql_value_cast(s, v, b.types[i], -1, true, -1);
        }
        if (rc == KEEL_OK)
            rc = insert_row(s, t, row, loc, kv, ret);
        if (rc == KEEL_OK)
            n++;
        sql_arena_restore(&s->arena, m);
    }
    free(b.rows);
    if (rc != KEEL_OK || s->describe_only)
        return rc;
    return sql_complete_count(s, "INSERT 0", n);
}

keel_status sql_exec_insert(sql_session *s, const PgQuery__InsertStmt *st)
{
    const sql_defaults *defs;
    sql_returning ret;
    sql_table t;
    const PgQuery__SelectStmt *sel;
    uint16_t *map, nmap;
    sql_value *row;
    int32_t *loc;
    keel_value *kv;
    uint64_t n = 0;
    keel_status rc;

    if (st->with_clause != NULL)
        return sql_unsupported(s, -1, "WITH");
    if (st->on_conflict_clause != NULL)
        return sql_unsupported(s, -1, "ON CONFLICT");
    if (st->select_stmt == NULL)
        return sql_unsupported(s, -1, "INSERT ... DEFAULT VALUES");
    if (st->select_stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return sql_unsupported(s, -1, "INSERT from this kind of query");
    sel = st->select_stmt->select_stmt;
    rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK)
        return rc;
    map = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*map));
    row = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*row));
    kv = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*kv));
    loc = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*loc));
    if (map == NULL || row == NULL || kv == NULL || loc == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    /* Which column each value goes to. */
    if (st->n_cols > 0) {
        if (st->n_cols > t.info.ncols)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "INSERT has more target columns than the table");
        nmap = (uint16_t)st->n_cols;
        for (uint16_t i = 0; i < nmap; i++) {
            const PgQuery__ResTarget *rt = st->cols[i]->res_target;
            if (rt->n_indirection > 0)
                return sql_unsupported(s, rt->location,
                                       "assignment to a part of a column");
            rc = column_index(s, &t, rt->name, rt->location, &map[i]);
            if (rc != KEEL_OK)
                return rc;
            for (uint16_t j = 0; j < i; j++)
                if (map[j] == map[i])
                    return sql_fail_at(s, rt->location, KEEL_EINVAL, "42701",
                                       "column \"%s\" specified more than once",
                                       rt->name);
        }
    } else {
        nmap = t.info.ncols;
        for (uint16_t i = 0; i < nmap; i++)
            map[i] = i;
    }
    rc = sql_returning_begin(s, &t, st->returning_list, st->n_returning_list,
                             &ret);
    if (rc == KEEL_OK)
        rc = sql_defaults_of(s, &t, &defs);
    if (rc != KEEL_OK)
        return rc;
    if (sel->n_values_lists == 0) {
        if (s->explain != NULL)
            sql_explain_node(s->explain, 0, "Insert on %s", t.name);
        return insert_select(s, st, &t, defs, map, nmap, row, loc, kv, &ret);
    }
    if (s->explain != NULL) {
        sql_explain_node(s->explain, 0, "Insert on %s", t.name);
        sql_explain_node(s->explain, 1, sel->n_values_lists > 1
                                            ? "Values Scan on \"*VALUES*\""
                                            : "Result");
    }
    if (s->describe_only) {
        /* Analysis alone: parameters take their columns' types. */
        for (size_t r = 0; r < sel->n_values_lists; r++) {
            const PgQuery__List *vl = sel->values_lists[r]->list;
            for (uint16_t i = 0; i < vl->n_items && i < nmap; i++) {
                sql_expr *e;
                const keel_column_info *c = &t.cols[map[i]];
                if (vl->items[i]->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT)
                    continue;
                rc = sql_expr_prepare_for(s, NULL, vl->items[i],
                                          sql_type_of_keel(c->type), &e);
                if (rc == KEEL_OK && e->kind == SQL_EXPR_PARAM &&
                    e->type == SQL_TYPE_UNKNOWN)
                    s->param_types[e->u.column] = sql_type_of_keel(c->type);
                if (rc != KEEL_OK)
                    return rc;
            }
        }
        return KEEL_OK;
    }
    for (size_t r = 0; r < sel->n_values_lists; r++) {
        const PgQuery__List *vl = sel->values_lists[r]->list;
        if (vl->n_items > nmap)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "INSERT has more expressions than target columns");
        if (vl->n_items < nmap && st->n_cols > 0)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "INSERT has more target columns than expressions");
        rc = row_defaults(s, defs, &t, map, (uint16_t)vl->n_items, row, loc);
        if (rc != KEEL_OK)
            return rc;
        for (uint16_t i = 0; i < vl->n_items; i++) {
            const PgQuery__Node *node = vl->items[i];
            sql_expr *e;
            if (node->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT) {
                rc = sql_default_eval(s, defs, map[i], &row[map[i]]);
                if (rc != KEEL_OK)
                    return rc;
                continue;
            }
            rc = sql_expr_prepare_for(s, NULL, node,
                                      sql_type_of_keel(t.cols[map[i]].type), &e);
            if (rc == KEEL_OK)
                rc = sql_expr_eval(s, e, NULL, &row[map[i]]);
            if (rc != KEEL_OK)
                return rc;
            /* A literal's bad text points at the literal, as in
             * PostgreSQL, where it is cast at analysis. */
            if (e->kind == SQL_EXPR_CONST && e->type == SQL_TYPE_UNKNOWN)
                loc[map[i]] = e->location;
        }
        rc = insert_row(s, &t, row, loc, kv, &ret);
        if (rc != KEEL_OK)
            return rc;
        n++;
    }
    return sql_complete_count(s, "INSERT 0", n);
}

/* Analyses WHERE against the table (NULL for none). */
static keel_status where_analyse(sql_session *s, const sql_scope *scope,
                                 const PgQuery__Node *n, sql_expr **out)
{
    keel_status rc;

    *out = NULL;
    if (n == NULL)
        return KEEL_OK;
    rc = sql_expr_prepare(s, scope, n, out);
    if (rc == KEEL_OK && (*out)->type != SQL_TYPE_BOOL)
        rc = sql_fail_at(s, (*out)->location, KEEL_ETYPE, "42804",
                         "argument of WHERE must be type boolean, not type %s",
                         sql_type_name((*out)->type));
    return rc;
}

/*
 * Read committed: the row a scan returned was updated by a transaction
 * that committed after the statement's snapshot (KEEL_ECHANGED).  Its
 * newest version goes into row (decoded from kv) and the statement's
 * WHERE is checked on it again, as PostgreSQL re-checks an updated row:
 * *keep tells whether the statement still changes it (false too if the
 * row has been deleted since).
 */
static keel_status recheck_changed(sql_session *s, const sql_table *t,
                                   const sql_expr *where, keel_value *kv,
                                   sql_value *row, bool *keep)
{
    sql_value w;
    bool found = false;
    keel_status rc = keel_fetch_changed(s->ks, t->schema, t->name, kv, &found);

    *keep = false;
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (!found)
        return KEEL_OK;
    for (uint16_t c = 0; c < t->info.ncols; c++)
        sql_value_from_keel(&kv[c], t->cols[c].type, &row[c]);
    if (where == NULL) {
        *keep = true;
        return KEEL_OK;
    }
    rc = sql_expr_eval(s, where, row, &w);
    if (rc == KEEL_OK)
        *keep = !w.isnull && w.v.b;
    return rc;
}

/* What an UPDATE's or DELETE's write of one row leads to. */
typedef enum write_next {
    WRITE_DONE,  /* the row is changed */
    WRITE_SKIP,  /* nothing to change: on to the next row */
    WRITE_AGAIN, /* changed meanwhile: write *cur, its newest version */
    WRITE_FAIL   /* the statement fails (*rc, reported) */
} write_next;

/*
 * Reads the engine's answer *rc to the write of a row (of t, the statement
 * filtered by where): a row this statement changed already or that a
 * committed transaction deleted is skipped (KEEL_ENOENT); one a committed
 * transaction updated is checked again on its newest version, which goes
 * into erow (through ekv) and *cur (KEEL_ECHANGED).
 */
static write_next write_outcome(sql_session *s, const sql_table *t,
                                const sql_expr *where, keel_value *ekv,
                                sql_value *erow, keel_status *rc,
                                const sql_value **cur)
{
    bool keep;

    switch (*rc) {
    case KEEL_OK:
        return WRITE_DONE;
    case KEEL_ENOENT:
        *rc = KEEL_OK;
        return WRITE_SKIP;
    case KEEL_ECHANGED:
        *rc = recheck_changed(s, t, where, ekv, erow, &keep);
        if (*rc != KEEL_OK)
            return WRITE_FAIL;
        if (!keep)
            return WRITE_SKIP;
        *cur = erow;
        return WRITE_AGAIN;
    default:
        *rc = sql_fail_engine(s, *rc);
        return WRITE_FAIL;
    }
}

/*
 * Replaces the row sc returned last (cur: as the scan returned it, or its
 * newest version after recheck_changed()) by kv: through the engine's
 * scan, which changes the version it returned (or, after KEEL_ECHANGED,
 * the one keel_fetch_changed() returned); by primary key (kk, filled
 * here) after a point lookup.  The engine's status, untranslated.
 */
static keel_status update_current(sql_session *s, const sql_table *t,
                                  const sql_scan *sc, const sql_value *cur,
                                  keel_value *kk, const keel_value *kv)
{
    if (sc->ks != NULL)
        return keel_scan_update(sc->ks, kv);
    for (uint16_t k = 0; k < t->info.npkey; k++)
        sql_value_to_keel(&cur[t->info.pkey[k] - 1], &kk[k]);
    return keel_update(s->ks, t->schema, t->name, kk, kv);
}

/* update_current()'s delete. */
static keel_status delete_current(sql_session *s, const sql_table *t,
                                  const sql_scan *sc, const sql_value *cur,
                                  keel_value *kk)
{
    if (sc->ks != NULL)
        return keel_scan_delete(sc->ks);
    for (uint16_t k = 0; k < t->info.npkey; k++)
        sql_value_to_keel(&cur[t->info.pkey[k] - 1], &kk[k]);
    return keel_delete(s->ks, t->schema, t->name, kk);
}

keel_status sql_exec_update(sql_session *s, const PgQuery__UpdateStmt *st)
{
    const sql_defaults *defs;
    sql_returning ret;
    sql_table t;
    sql_scope scope;
    sql_scan sc;
    sql_expr *where, **set;
    sql_value *newrow, *erow;
    keel_value *kv, *kk, *ekv;
    uint64_t n = 0;
    bool found;
    write_next next;
    keel_status rc;

    if (st->with_clause != NULL)
        return sql_unsupported(s, -1, "WITH");
    if (st->n_from_clause > 0)
        return sql_unsupported(s, -1, "UPDATE ... FROM");
    rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK)
        return rc;
    rc = sql_defaults_of(s, &t, &defs);
    if (rc != KEEL_OK)
        return rc;
    scope = (sql_scope){.table = t.alias, .cols = t.cols, .ncols = t.info.ncols};
    set = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*set));
    newrow = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*newrow));
    kv = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*kv));
    kk = sql_alloc(&s->arena, 17 * sizeof(*kk));
    erow = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*erow));
    ekv = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*ekv));
    if (set == NULL || newrow == NULL || kv == NULL || kk == NULL ||
        erow == NULL || ekv == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(set, 0, (t.info.ncols + 1) * sizeof(*set));
    for (size_t i = 0; i < st->n_target_list; i++) {
        const PgQuery__ResTarget *rt = st->target_list[i]->res_target;
        uint16_t c;
        if (rt->n_indirection > 0)
            return sql_unsupported(s, rt->location,
                                   "assignment to a part of a column");
        if (rt->val != NULL &&
            rt->val->node_case == PG_QUERY__NODE__NODE_MULTI_ASSIGN_REF)
            return sql_unsupported(s, rt->location, "SET (a, b) = ...");
        rc = column_index(s, &t, rt->name, rt->location, &c);
        if (rc != KEEL_OK)
            return rc;
        if (set[c] != NULL)
            return sql_fail_at(s, rt->location, KEEL_EINVAL, "42601",
                               "multiple assignments to same column \"%s\"",
                               rt->name);
        if (rt->val != NULL &&
            rt->val->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT &&
            sql_default_has(defs, c)) {
            /* Its expression, evaluated for every row. */
            rc = sql_default_expr(s, defs, c, &set[c]);
            if (rc != KEEL_OK)
                return rc;
            continue;
        }
        if (rt->val != NULL &&
            rt->val->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT) {
            sql_expr *e = sql_alloc(&s->arena, sizeof(*e));
            if (e == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            memset(e, 0, sizeof(*e));
            e->kind = SQL_EXPR_CONST;
            e->type = SQL_TYPE_UNKNOWN;
            e->u.value.isnull = true;
            e->location = rt->location;
            set[c] = e;
            continue;
        }
        rc = sql_expr_prepare_for(s, &scope, rt->val,
                                  sql_type_of_keel(t.cols[c].type), &set[c]);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = where_analyse(s, &scope, st->where_clause, &where);
    if (rc == KEEL_OK)
        rc = sql_returning_begin(s, &t, st->returning_list,
                                 st->n_returning_list, &ret);
    if (rc == KEEL_OK && s->explain != NULL) {
        sql_explain_node(s->explain, 0, "Update on %s", t.name);
        sql_explain_scan(s->explain, 1, &t, 0, (const sql_expr *const *)&where,
                         where != NULL);
    }
    if (rc != KEEL_OK || s->describe_only) {
        /* Parameters assigned to columns take their types. */
        for (uint16_t c = 0; rc == KEEL_OK && c < t.info.ncols; c++)
            if (set[c] != NULL && set[c]->kind == SQL_EXPR_PARAM &&
                set[c]->type == SQL_TYPE_UNKNOWN)
                s->param_types[set[c]->u.column] = sql_type_of_keel(t.cols[c].type);
        return rc;
    }
    /* Their rows are computed while the table's scan is open. */
    for (uint16_t c = 0; c < t.info.ncols; c++)
        if (sql_expr_reads_engine(set[c]))
            return sql_unsupported(s, set[c]->location,
                                   "reading the catalogs in UPDATE's SET");
    if (sql_expr_reads_engine(where))
        return sql_unsupported(s, where->location,
                               "reading the catalogs in UPDATE's WHERE");
    rc = sql_scan_begin(s, &sc, &t, where);
    if (rc != KEEL_OK)
        return rc;
    while ((rc = sql_scan_next(s, &sc, &found)) == KEEL_OK && found) {
        const sql_value *cur = sc.row;
    again:
        for (uint16_t c = 0; rc == KEEL_OK && c < t.info.ncols; c++) {
            if (set[c] == NULL) {
                newrow[c] = cur[c];
                continue;
            }
            rc = sql_expr_eval(s, set[c], cur, &newrow[c]);
            if (rc == KEEL_OK && !newrow[c].isnull)
                rc = to_column(s, &t, &t.cols[c], &newrow[c], -1);
            else if (rc == KEEL_OK)
                newrow[c].type = sql_type_of_keel(t.cols[c].type);
        }
        if (rc == KEEL_OK)
            rc = check_not_null(s, &t, newrow);
        if (rc != KEEL_OK)
            break;
        /* The row as the scan returned it, changed under the open scan:
         * its strings stay the scan's until the next row. */
        for (uint16_t c = 0; c < t.info.ncols; c++)
            sql_value_to_keel(&newrow[c], &kv[c]);
        rc = update_current(s, &t, &sc, cur, kk, kv);
        next = write_outcome(s, &t, where, ekv, erow, &rc, &cur);
        if (next == WRITE_SKIP)
            continue;
        if (next == WRITE_AGAIN)
            goto again;
        if (next == WRITE_FAIL)
            break;
        if (ret.nt > 0)
            rc = sql_returning_row(s, &ret, newrow);
        if (rc != KEEL_OK)
            break;
        n++;
    }
    sql_scan_end(&sc);
    return rc != KEEL_OK ? rc : sql_complete_count(s, "UPDATE", n);
}

keel_status sql_exec_delete(sql_session *s, const PgQuery__DeleteStmt *st)
{
    sql_returning ret;
    sql_table t;
    sql_scope scope;
    sql_scan sc;
    sql_expr *where;
    keel_value *kk, *ekv;
    sql_value *erow;
    uint64_t n = 0;
    bool found;
    write_next next;
    keel_status rc;

    if (st->with_clause != NULL)
        return sql_unsupported(s, -1, "WITH");
    if (st->n_using_clause > 0)
        return sql_unsupported(s, -1, "DELETE ... USING");
    rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK)
        return rc;
    scope = (sql_scope){.table = t.alias, .cols = t.cols, .ncols = t.info.ncols};
    kk = sql_alloc(&s->arena, 17 * sizeof(*kk));
    erow = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*erow));
    ekv = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*ekv));
    if (kk == NULL || erow == NULL || ekv == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = where_analyse(s, &scope, st->where_clause, &where);
    if (rc == KEEL_OK)
        rc = sql_returning_begin(s, &t, st->returning_list,
                                 st->n_returning_list, &ret);
    if (rc == KEEL_OK && s->explain != NULL) {
        sql_explain_node(s->explain, 0, "Delete on %s", t.name);
        sql_explain_scan(s->explain, 1, &t, 0, (const sql_expr *const *)&where,
                         where != NULL);
    }
    if (rc != KEEL_OK || s->describe_only)
        return rc;
    if (sql_expr_reads_engine(where))
        return sql_unsupported(s, where->location,
                               "reading the catalogs in DELETE's WHERE");
    rc = sql_scan_begin(s, &sc, &t, where);
    if (rc != KEEL_OK)
        return rc;
    while ((rc = sql_scan_next(s, &sc, &found)) == KEEL_OK && found) {
        const sql_value *cur = sc.row;
    again:
        rc = delete_current(s, &t, &sc, cur, kk);
        next = write_outcome(s, &t, where, ekv, erow, &rc, &cur);
        if (next == WRITE_SKIP)
            continue;
        if (next == WRITE_AGAIN)
            goto again;
        if (next == WRITE_FAIL)
            break;
        /* RETURNING reads the deleted version, as the scan returned it. */
        if (ret.nt > 0)
            rc = sql_returning_row(s, &ret, cur);
        if (rc != KEEL_OK)
            break;
        n++;
    }
    sql_scan_end(&sc);
    return rc != KEEL_OK ? rc : sql_complete_count(s, "DELETE", n);
}
