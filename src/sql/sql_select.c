/*
 * sql_select.c: SELECT, and the table scan that SELECT, UPDATE and
 * DELETE share.
 *
 * A query reads at most one table.  Its access path is chosen from the
 * WHERE clause: conjuncts comparing primary key columns with constants
 * bound a range scan of the primary key (equality on a prefix of its
 * columns, then one range), and with none the table is read whole, in
 * primary key order (or storage order without one).  Whatever path is
 * taken, every row it yields is tested against the whole WHERE clause,
 * so the bounds only save reading.  ORDER BY collects the result and
 * sorts it; LIMIT and OFFSET stop and skip as rows go out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

keel_status sql_table_open(sql_session *s, const PgQuery__RangeVar *rv,
                           sql_table *t)
{
    keel_status rc;

    memset(t, 0, sizeof(*t));
    if (rv->catalogname != NULL && rv->catalogname[0] != '\0' &&
        strcmp(rv->catalogname, sql_setting_get(s, "database")) != 0)
        return sql_unsupported(s, rv->location,
                               "cross-database references");
    t->schema = rv->schemaname != NULL && rv->schemaname[0] != '\0'
                    ? rv->schemaname
                    : NULL;
    t->name = rv->relname;
    t->alias = rv->alias != NULL ? rv->alias->aliasname : rv->relname;
    rc = keel_table_describe(s->ks, t->schema, t->name, &t->info, NULL, 0);
    if (rc == KEEL_ENOENT)
        return sql_fail_at(s, rv->location, rc, "42P01",
                           "relation \"%s%s%s\" does not exist",
                           t->schema != NULL ? t->schema : "",
                           t->schema != NULL ? "." : "", t->name);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    t->cols = sql_alloc(&s->arena, t->info.ncols * sizeof(keel_column_info));
    if (t->cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = keel_table_describe(s->ks, t->schema, t->name, &t->info, t->cols,
                             t->info.ncols);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* ---- the scan ------------------------------------------------------------ */

/* What the WHERE clause bounds of the primary key: per key column, an
 * equality, or a lower and an upper bound. */
typedef struct key_bounds {
    const sql_expr *eq;
    const sql_expr *lo, *hi;
    bool lo_incl, hi_incl;
} key_bounds;

/* Records `col op const` (or `const op col`) when col is a key column. */
static void bound_from(const sql_table *t, const sql_expr *e, key_bounds *kb)
{
    const sql_expr *col, *val;
    sql_op op;

    if (e->kind != SQL_EXPR_OP || e->nargs != 2 || e->u.op < SQL_OP_EQ ||
        e->u.op > SQL_OP_GE)
        return;
    op = e->u.op;
    if (e->args[0]->kind == SQL_EXPR_COLUMN && e->args[1]->kind == SQL_EXPR_CONST) {
        col = e->args[0];
        val = e->args[1];
    } else if (e->args[1]->kind == SQL_EXPR_COLUMN &&
               e->args[0]->kind == SQL_EXPR_CONST) {
        col = e->args[1];
        val = e->args[0];
        /* 5 < x is x > 5 */
        op = op == SQL_OP_LT   ? SQL_OP_GT
             : op == SQL_OP_LE ? SQL_OP_GE
             : op == SQL_OP_GT ? SQL_OP_LT
             : op == SQL_OP_GE ? SQL_OP_LE
                               : op;
    } else {
        return;
    }
    /* The constant must be of the column's own type (the bound goes to
     * the index as is) and not null. */
    if (val->u.value.isnull || val->type != col->type)
        return;
    for (uint16_t k = 0; k < t->info.npkey; k++) {
        if (t->info.pkey[k] != col->u.column + 1)
            continue;
        switch (op) {
        case SQL_OP_EQ:
            kb[k].eq = val;
            break;
        case SQL_OP_GT:
        case SQL_OP_GE:
            kb[k].lo = val;
            kb[k].lo_incl = op == SQL_OP_GE;
            break;
        case SQL_OP_LT:
        case SQL_OP_LE:
            kb[k].hi = val;
            kb[k].hi_incl = op == SQL_OP_LE;
            break;
        default:
            break;
        }
    }
}

static void bounds_collect(const sql_table *t, const sql_expr *e,
                           key_bounds *kb)
{
    if (e == NULL)
        return;
    if (e->kind == SQL_EXPR_AND) {
        for (uint16_t i = 0; i < e->nargs; i++)
            bounds_collect(t, e->args[i], kb);
        return;
    }
    bound_from(t, e, kb);
}

keel_status sql_scan_begin(sql_session *s, sql_scan *sc, sql_table *t,
                           const sql_expr *where)
{
    key_bounds kb[16];
    keel_bound lower, upper, *lp = NULL, *up = NULL;
    uint16_t k = 0;
    keel_status rc;

    memset(sc, 0, sizeof(*sc));
    memset(kb, 0, sizeof(kb));
    sc->t = t;
    sc->where = where;
    sc->row = sql_alloc(&s->arena, (t->info.ncols + 1) * sizeof(sql_value));
    sc->kv = sql_alloc(&s->arena, (t->info.ncols + 1) * sizeof(keel_value));
    sc->lo = sql_alloc(&s->arena, 16 * sizeof(keel_value));
    sc->hi = sql_alloc(&s->arena, 16 * sizeof(keel_value));
    if (sc->row == NULL || sc->kv == NULL || sc->lo == NULL || sc->hi == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    bounds_collect(t, where, kb);
    /* Equalities on a prefix of the key, then one range. */
    while (k < t->info.npkey && kb[k].eq != NULL) {
        sql_value_to_keel(&kb[k].eq->u.value, &sc->lo[k]);
        sc->hi[k] = sc->lo[k];
        k++;
    }
    lower = (keel_bound){.vals = sc->lo, .ncols = k, .inclusive = true};
    upper = (keel_bound){.vals = sc->hi, .ncols = k, .inclusive = true};
    if (k < t->info.npkey && kb[k].lo != NULL) {
        sql_value_to_keel(&kb[k].lo->u.value, &sc->lo[k]);
        lower.ncols = (uint16_t)(k + 1);
        lower.inclusive = kb[k].lo_incl;
    }
    if (k < t->info.npkey && kb[k].hi != NULL) {
        sql_value_to_keel(&kb[k].hi->u.value, &sc->hi[k]);
        upper.ncols = (uint16_t)(k + 1);
        upper.inclusive = kb[k].hi_incl;
    }
    if (lower.ncols > 0)
        lp = &lower;
    if (upper.ncols > 0)
        up = &upper;
    sc->index_scan = lp != NULL || up != NULL;
    sc->eq_cols = k;
    rc = keel_scan_begin(s->ks, t->schema, t->name, NULL, lp, up, &sc->ks);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_scan_next(sql_session *s, sql_scan *sc, bool *found)
{
    keel_status rc;

    for (;;) {
        sql_value w;
        rc = sql_check_cancel(s);
        if (rc != KEEL_OK)
            return rc;
        rc = keel_scan_next(sc->ks, sc->kv, found);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (!*found)
            return KEEL_OK;
        for (uint16_t i = 0; i < sc->t->info.ncols; i++)
            sql_value_from_keel(&sc->kv[i], sc->t->cols[i].type, &sc->row[i]);
        if (sc->where == NULL)
            return KEEL_OK;
        rc = sql_expr_eval(s, sc->where, sc->row, &w);
        if (rc != KEEL_OK)
            return rc;
        if (!w.isnull && w.v.b)
            return KEEL_OK;
    }
}

void sql_scan_end(sql_scan *sc)
{
    keel_scan_end(sc->ks);
    sc->ks = NULL;
}

/* ---- SELECT ------------------------------------------------------------- */

/* One output column. */
typedef struct target {
    sql_expr *expr;
    const char *name;
} target;

/* One collected row for ORDER BY: its output values and sort keys. */
typedef struct sorted_row {
    sql_value *out;
    sql_value *keys;
} sorted_row;

typedef struct sort_key {
    sql_expr *expr;
    bool desc;
    bool nulls_first;
} sort_key;

/* The name PostgreSQL gives an unnamed output column. */
static const char *target_name(const PgQuery__ResTarget *rt)
{
    const PgQuery__Node *v = rt->val;

    if (rt->name != NULL && rt->name[0] != '\0')
        return rt->name;
    if (v == NULL)
        return "?column?";
    if (v->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        v->a_const->val_case == PG_QUERY__A__CONST__VAL_BOOLVAL &&
        !v->a_const->isnull)
        return "bool";
    if (v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
        const PgQuery__ColumnRef *c = v->column_ref;
        const char *n = c->n_fields > 0 ? sql_node_string(c->fields[c->n_fields - 1])
                                        : NULL;
        return n != NULL ? n : "?column?";
    }
    if (v->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) {
        const PgQuery__FuncCall *f = v->func_call;
        const char *n = f->n_funcname > 0
                            ? sql_node_string(f->funcname[f->n_funcname - 1])
                            : NULL;
        return n != NULL ? n : "?column?";
    }
    if (v->node_case == PG_QUERY__NODE__NODE_TYPE_CAST) {
        const PgQuery__TypeCast *tc = v->type_cast;
        if (tc->arg != NULL && tc->arg->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
            PgQuery__ResTarget inner = *rt;
            inner.val = tc->arg;
            inner.name = NULL;
            return target_name(&inner);
        }
        if (tc->type_name != NULL && tc->type_name->n_names > 0) {
            const char *n =
                sql_node_string(tc->type_name->names[tc->type_name->n_names - 1]);
            return n != NULL ? n : "?column?";
        }
    }
    if (v->node_case == PG_QUERY__NODE__NODE_CASE_EXPR)
        return "case";
    if (v->node_case == PG_QUERY__NODE__NODE_COALESCE_EXPR)
        return "coalesce";
    if (v->node_case == PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION) {
        switch (v->sqlvalue_function->op) {
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_USER:
            return "current_user";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_SESSION_USER:
            return "session_user";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_USER:
            return "current_user";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_CATALOG:
            return "current_catalog";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_SCHEMA:
            return "current_schema";
        default:
            break;
        }
    }
    return "?column?";
}

/* The output list: * expanded to the table's columns. */
static keel_status targets_analyse(sql_session *s, const sql_scope *scope,
                                   PgQuery__Node **list, size_t n,
                                   target **out, uint16_t *nout)
{
    size_t cap = 0;
    target *t;
    uint16_t k = 0;
    keel_status rc;

    for (size_t i = 0; i < n; i++) {
        const PgQuery__ResTarget *rt = list[i]->res_target;
        const PgQuery__ColumnRef *cr =
            rt->val != NULL && rt->val->node_case == PG_QUERY__NODE__NODE_COLUMN_REF
                ? rt->val->column_ref
                : NULL;
        if (cr != NULL && cr->n_fields > 0 &&
            cr->fields[cr->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR) {
            if (scope == NULL)
                return sql_fail_at(s, cr->location, KEEL_EINVAL, "42601",
                                   "SELECT * with no tables specified is not "
                                   "valid");
            cap += scope->ncols;
        } else {
            cap++;
        }
    }
    if (cap > 1664)
        return sql_fail(s, KEEL_ETOOBIG, "54011",
                        "target lists can have at most 1664 entries");
    t = sql_alloc(&s->arena, (cap + 1) * sizeof(*t));
    if (t == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (size_t i = 0; i < n; i++) {
        const PgQuery__ResTarget *rt = list[i]->res_target;
        const PgQuery__ColumnRef *cr =
            rt->val != NULL && rt->val->node_case == PG_QUERY__NODE__NODE_COLUMN_REF
                ? rt->val->column_ref
                : NULL;
        if (cr != NULL && cr->n_fields > 0 &&
            cr->fields[cr->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR) {
            const char *q = cr->n_fields == 2 ? sql_node_string(cr->fields[0]) : NULL;
            if (q != NULL && strcmp(q, scope->table) != 0)
                return sql_fail_at(s, cr->location, KEEL_ENOENT, "42P01",
                                   "missing FROM-clause entry for table \"%s\"",
                                   q);
            for (uint16_t c = 0; c < scope->ncols; c++) {
                sql_expr *e = sql_alloc(&s->arena, sizeof(*e));
                if (e == NULL)
                    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
                memset(e, 0, sizeof(*e));
                e->kind = SQL_EXPR_COLUMN;
                e->type = sql_type_of_keel(scope->cols[c].type);
                e->u.column = c;
                t[k].expr = e;
                t[k++].name = scope->cols[c].name;
            }
            continue;
        }
        rc = sql_expr_prepare(s, scope, rt->val, &t[k].expr);
        if (rc != KEEL_OK)
            return rc;
        t[k++].name = target_name(rt);
    }
    *out = t;
    *nout = k;
    return KEEL_OK;
}

/* LIMIT / OFFSET: a constant integer expression; -1 for none (or NULL). */
static keel_status limit_value(sql_session *s, const PgQuery__Node *n,
                               const char *what, int64_t *out)
{
    sql_expr *e;
    sql_value v;
    keel_status rc;

    *out = -1;
    if (n == NULL)
        return KEEL_OK;
    rc = sql_expr_prepare(s, NULL, n, &e);
    if (rc == KEEL_OK)
        rc = sql_expr_eval(s, e, NULL, &v);
    if (rc == KEEL_OK && !v.isnull)
        rc = sql_value_cast(s, &v, SQL_TYPE_INT8, -1, false, e->location);
    if (rc != KEEL_OK)
        return rc;
    if (v.isnull)
        return KEEL_OK;
    if (v.v.i < 0)
        return sql_fail_at(s, e->location, KEEL_EINVAL, "2201W",
                           "%s must not be negative", what);
    *out = v.v.i;
    return KEEL_OK;
}

/* Sends one row of values in text format. */
static keel_status send_row(sql_session *s, const sql_value *vals, uint16_t n,
                            const char **txt, uint32_t *lens)
{
    keel_status rc;

    for (uint16_t i = 0; i < n; i++) {
        rc = sql_value_text(s, &vals[i], &txt[i], &lens[i]);
        if (rc != KEEL_OK)
            return rc;
    }
    if (s->sink->row(s->sink->ctx, txt, lens, n) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}

/* A copy of v's string in the arena, so that it outlives the scan's row. */
static keel_status value_keep(sql_session *s, sql_value *v)
{
    char *p;

    if (v->isnull || !sql_type_is_string(v->type))
        return KEEL_OK;
    p = sql_alloc(&s->arena, v->v.s.len + 1);
    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(p, v->v.s.p, v->v.s.len);
    v->v.s.p = p;
    return KEEL_OK;
}

typedef struct sort_spec {
    const sort_key *keys;
    uint16_t n;
} sort_spec;

static int sorted_cmp(const void *x, const void *y, void *arg)
{
    const sorted_row *a = x, *b = y;
    const sort_spec *spec = arg;

    for (uint16_t i = 0; i < spec->n; i++) {
        const sort_key *k = &spec->keys[i];
        const sql_value *va = &a->keys[i], *vb = &b->keys[i];
        int c;
        if (va->isnull || vb->isnull) {
            if (va->isnull && vb->isnull)
                continue;
            c = va->isnull ? 1 : -1; /* NULL is larger */
            if (k->nulls_first != k->desc)
                c = -c;
            if (k->desc)
                c = -c;
        } else {
            c = sql_value_compare(va, vb);
        }
        if (c != 0)
            return k->desc ? -c : c;
    }
    return 0;
}

keel_status sql_exec_select(sql_session *s, const PgQuery__SelectStmt *st)
{
    sql_table t;
    sql_scope scope, *sp = NULL;
    sql_scan sc;
    target *tl = NULL;
    uint16_t nt = 0;
    sql_expr *where = NULL;
    sort_key *keys = NULL;
    uint16_t nkeys = 0;
    int64_t limit, offset, sent = 0, skipped = 0;
    sql_column *cols;
    sql_value *out;
    const char **txt;
    uint32_t *lens;
    sorted_row *rows = NULL;
    size_t nrows = 0, caprows = 0;
    bool scanning = false, found;
    keel_status rc;

    if (st->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
        return sql_unsupported(s, -1, "UNION, INTERSECT and EXCEPT");
    if (st->n_values_lists > 0)
        return sql_unsupported(s, -1, "VALUES lists");
    if (st->with_clause != NULL)
        return sql_unsupported(s, -1, "WITH");
    if (st->into_clause != NULL)
        return sql_unsupported(s, -1, "SELECT INTO");
    if (st->n_distinct_clause > 0)
        return sql_unsupported(s, -1, "DISTINCT");
    if (st->n_group_clause > 0 || st->having_clause != NULL)
        return sql_unsupported(s, -1, "GROUP BY and HAVING");
    if (st->n_window_clause > 0)
        return sql_unsupported(s, -1, "window functions");
    if (st->n_locking_clause > 0)
        return sql_unsupported(s, -1, "FOR UPDATE and FOR SHARE");
    if (st->n_from_clause > 1)
        return sql_unsupported(s, -1, "joins");
    if (st->n_from_clause == 1) {
        const PgQuery__Node *f = st->from_clause[0];
        if (f->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)
            return sql_unsupported(s, -1,
                                   f->node_case == PG_QUERY__NODE__NODE_JOIN_EXPR
                                       ? "joins"
                                       : "subqueries and functions in FROM");
        rc = sql_table_open(s, f->range_var, &t);
        if (rc != KEEL_OK)
            return rc;
        scope = (sql_scope){.table = t.alias, .cols = t.cols,
                            .ncols = t.info.ncols};
        sp = &scope;
    }
    rc = targets_analyse(s, sp, st->target_list, st->n_target_list, &tl, &nt);
    if (rc != KEEL_OK)
        return rc;
    if (st->where_clause != NULL) {
        rc = sql_expr_prepare(s, sp, st->where_clause, &where);
        if (rc == KEEL_OK && where->type != SQL_TYPE_BOOL) {
            if (where->type == SQL_TYPE_UNKNOWN && where->kind == SQL_EXPR_CONST) {
                rc = sql_value_cast(s, &where->u.value, SQL_TYPE_BOOL, -1, false,
                                    where->location);
                where->type = SQL_TYPE_BOOL;
            } else {
                rc = sql_fail_at(s, where->location, KEEL_ETYPE, "42804",
                                 "argument of WHERE must be type boolean, not "
                                 "type %s",
                                 sql_type_name(where->type));
            }
        }
        if (rc != KEEL_OK)
            return rc;
    }
    if (st->n_sort_clause > 0) {
        keys = sql_alloc(&s->arena, st->n_sort_clause * sizeof(*keys));
        if (keys == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (size_t i = 0; i < st->n_sort_clause; i++) {
            const PgQuery__SortBy *sb = st->sort_clause[i]->sort_by;
            const PgQuery__Node *n = sb->node;
            sort_key *k = &keys[nkeys++];
            if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
                return sql_unsupported(s, sb->location, "ORDER BY ... USING");
            k->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
            k->nulls_first =
                sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
                (sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
                 k->desc);
            /* ORDER BY 2: the second output column; ORDER BY name: an
             * output column's name first, then the table's. */
            if (n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
                int32_t pos = n->a_const->ival->ival;
                if (pos < 1 || pos > nt)
                    return sql_fail_at(s, n->a_const->location, KEEL_EINVAL,
                                       "42P10",
                                       "ORDER BY position %d is not in select "
                                       "list",
                                       pos);
                k->expr = tl[pos - 1].expr;
                continue;
            }
            k->expr = NULL;
            if (n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
                n->column_ref->n_fields == 1) {
                const char *name = sql_node_string(n->column_ref->fields[0]);
                for (uint16_t j = 0; name != NULL && j < nt; j++)
                    if (strcmp(tl[j].name, name) == 0) {
                        k->expr = tl[j].expr;
                        break;
                    }
            }
            if (k->expr == NULL) {
                rc = sql_expr_prepare(s, sp, n, &k->expr);
                if (rc != KEEL_OK)
                    return rc;
            }
            if (k->expr->type == SQL_TYPE_UNKNOWN)
                k->expr->type = SQL_TYPE_TEXT;
        }
    }
    rc = limit_value(s, st->limit_count, "LIMIT", &limit);
    if (rc == KEEL_OK)
        rc = limit_value(s, st->limit_offset, "OFFSET", &offset);
    if (rc != KEEL_OK)
        return rc;
    /* The result's description. */
    cols = sql_alloc(&s->arena, (nt + 1) * sizeof(*cols));
    out = sql_alloc(&s->arena, (nt + 1) * sizeof(*out));
    txt = sql_alloc(&s->arena, (nt + 1) * sizeof(*txt));
    lens = sql_alloc(&s->arena, (nt + 1) * sizeof(*lens));
    if (cols == NULL || out == NULL || txt == NULL || lens == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < nt; i++) {
        uint32_t type = tl[i].expr->type;
        if (type == SQL_TYPE_UNKNOWN)
            type = SQL_TYPE_TEXT;
        cols[i] = (sql_column){.name = tl[i].name, .type = type,
                               .typlen = sql_type_len(type), .typmod = -1};
        if (tl[i].expr->kind == SQL_EXPR_COLUMN && sp != NULL) {
            const keel_column_info *ci = &t.cols[tl[i].expr->u.column];
            cols[i].table = t.info.oid;
            cols[i].attnum = (int16_t)(tl[i].expr->u.column + 1);
            if (ci->type == KEEL_CHAR)
                cols[i].typmod = ci->charlen + 4;
        }
    }
    if (s->sink->columns(s->sink->ctx, cols, nt) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    if (sp != NULL) {
        rc = sql_scan_begin(s, &sc, &t, where);
        if (rc != KEEL_OK)
            return rc;
        scanning = true;
    }
    for (bool first = true; rc == KEEL_OK; first = false) {
        if (limit >= 0 && keys == NULL && sent >= limit)
            break;
        if (scanning) {
            rc = sql_scan_next(s, &sc, &found);
            if (rc != KEEL_OK || !found)
                break;
        } else {
            sql_value w;
            if (!first)
                break;
            if (where != NULL) {
                rc = sql_expr_eval(s, where, NULL, &w);
                if (rc != KEEL_OK || w.isnull || !w.v.b)
                    break;
            }
        }
        for (uint16_t i = 0; rc == KEEL_OK && i < nt; i++)
            rc = sql_expr_eval(s, tl[i].expr, scanning ? sc.row : NULL, &out[i]);
        if (rc != KEEL_OK)
            break;
        if (keys != NULL) {
            sorted_row *r;
            if (nrows == caprows) {
                size_t ncap = caprows == 0 ? 64 : caprows * 2;
                sorted_row *nr = sql_alloc(&s->arena, ncap * sizeof(*nr));
                if (nr == NULL) {
                    rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
                    break;
                }
                if (nrows > 0)
                    memcpy(nr, rows, nrows * sizeof(*nr));
                rows = nr;
                caprows = ncap;
            }
            r = &rows[nrows];
            r->out = sql_alloc(&s->arena, (nt + 1) * sizeof(sql_value));
            r->keys = sql_alloc(&s->arena, (nkeys + 1) * sizeof(sql_value));
            if (r->out == NULL || r->keys == NULL) {
                rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
                break;
            }
            for (uint16_t i = 0; rc == KEEL_OK && i < nt; i++) {
                r->out[i] = out[i];
                rc = value_keep(s, &r->out[i]);
            }
            for (uint16_t i = 0; rc == KEEL_OK && i < nkeys; i++) {
                rc = sql_expr_eval(s, keys[i].expr, scanning ? sc.row : NULL,
                                   &r->keys[i]);
                if (rc == KEEL_OK)
                    rc = value_keep(s, &r->keys[i]);
            }
            nrows++;
            continue;
        }
        if (offset > 0 && skipped < offset) {
            skipped++;
            continue;
        }
        rc = send_row(s, out, nt, txt, lens);
        sent++;
    }
    if (scanning)
        sql_scan_end(&sc);
    if (rc != KEEL_OK)
        return rc;
    if (keys != NULL) {
        sort_spec spec = {.keys = keys, .n = nkeys};
        qsort_r(rows, nrows, sizeof(*rows), sorted_cmp, &spec);
        for (size_t i = offset > 0 ? (size_t)offset : 0;
             rc == KEEL_OK && i < nrows && (limit < 0 || sent < limit); i++) {
            rc = send_row(s, rows[i].out, nt, txt, lens);
            sent++;
        }
        if (rc != KEEL_OK)
            return rc;
    }
    return sql_complete(s, "SELECT %lld", (long long)sent);
}
