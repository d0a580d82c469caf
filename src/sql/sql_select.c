/*
 * sql_select.c: SELECT, and the table scan that SELECT, UPDATE and
 * DELETE share.
 *
 * A query's FROM items are joined left to right as nested loops.  An item
 * is a table, or rows read whole into the arena: a subquery, a pg_catalog
 * view, a join nested on the right of another (each run as a SELECT of
 * its own, once, or for a LATERAL subquery once per row of the items
 * before it, seeing their columns as an enclosing query's).  A table's
 * access path is chosen from the WHERE clause: conjuncts comparing
 * primary key columns with constants bound a range scan of the primary
 * key (equality on a prefix of its columns, then one range), and with
 * none the table is read whole, in primary key order (or storage order
 * without one).  Whatever path is
 * taken, every row it yields is tested against the whole WHERE clause,
 * so the bounds only save reading.  ORDER BY collects the result and
 * sorts it; LIMIT and OFFSET stop and skip as rows go out.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/hash.h"
#include "sql/sql_internal.h"

/* The one function in FROM or an output list that runs as unnest(), of
 * an empty array (srf_columns()). */
#define ANCESTORS "pg_partition_ancestors"

/* Columns a table is first described with. */
#define TABLE_COLS_GUESS 16

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
    if (s->ncte_changed > 0) {
        rc = sql_cte_changed_check(s, rv, t->schema, t->name);
        if (rc != KEEL_OK)
            return rc;
    }
    t->alias = rv->alias != NULL ? rv->alias->aliasname : rv->relname;
    /* An unqualified name is looked for among the system catalogs first,
     * then in public, as PostgreSQL puts pg_catalog before the path. */
    if (t->schema == NULL) {
        bool in_catalog = false;
        rc = keel_relation_exists(s->ks, "keel_catalog", t->name, &in_catalog);
        if (rc != KEEL_OK && rc != KEEL_ETOOBIG && rc != KEEL_EINVAL)
            return sql_fail_engine(s, rc);
        if (rc == KEEL_OK && in_catalog)
            t->schema = "keel_catalog";
    }
    /* Room for most tables' columns, so that one call describes them. */
    t->cols = sql_alloc(&s->arena, TABLE_COLS_GUESS * sizeof(keel_column_info));
    if (t->cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = keel_table_describe(s->ks, t->schema, t->name, &t->info, t->cols,
                             TABLE_COLS_GUESS);
    if (rc == KEEL_ENOENT)
        return sql_fail_at(s, rv->location, rc, "42P01",
                           "relation \"%s%s%s\" does not exist",
                           t->schema != NULL ? t->schema : "",
                           t->schema != NULL ? "." : "", t->name);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (t->info.ncols > TABLE_COLS_GUESS) {
        t->cols = sql_alloc(&s->arena, t->info.ncols * sizeof(keel_column_info));
        if (t->cols == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = keel_table_describe(s->ks, t->schema, t->name, &t->info, t->cols,
                                 t->info.ncols);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    /* Indexes besides the primary key: what else a scan may use. */
    if (t->info.nindexes > (t->info.npkey > 0 ? 1 : 0)) {
        t->idx = sql_alloc(&s->arena, t->info.nindexes * sizeof(*t->idx));
        if (t->idx == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = keel_table_indexes(s->ks, t->schema, t->name, t->idx,
                                t->info.nindexes, &t->nidx);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (t->nidx > t->info.nindexes)
            t->nidx = t->info.nindexes;
    }
    return KEEL_OK;
}

/* ---- the scan ------------------------------------------------------------ */

/* What conditions bound of the primary key: per key column, an equality,
 * or a lower and an upper bound, each an expression the scan evaluates
 * when it begins. */
typedef struct key_bounds {
    const sql_expr *eq;
    const sql_expr *lo, *hi;
    bool lo_incl, hi_incl;
} key_bounds;

/* Whether e reads a column at or after `from` (a table the scan cannot
 * know yet, its own included). */
/* The first column reference in e to a column from `from` on, or NULL. */
static const sql_expr *column_from(const sql_expr *e, uint16_t from)
{
    if (e->kind == SQL_EXPR_COLUMN)
        return e->u.column >= from ? e : NULL;
    for (uint16_t i = 0; i < e->nargs; i++) {
        const sql_expr *c = column_from(e->args[i], from);
        if (c != NULL)
            return c;
    }
    return NULL;
}

static bool reads_columns_from(const sql_expr *e, uint16_t from)
{
    if (e->kind == SQL_EXPR_COLUMN)
        return e->u.column >= from;
    for (uint16_t i = 0; i < e->nargs; i++)
        if (reads_columns_from(e->args[i], from))
            return true;
    return false;
}

/*
 * Records `col op value` (or `value op col`) when col is one of the key
 * columns keys (column numbers, 1-based) of the table whose columns
 * start at `off` in the row, and value reads only columns before it
 * (constants, parameters, an outer table's).
 */
static void bound_from(const sql_table *t, const uint16_t *keys,
                       uint16_t nkeys, uint16_t off, const sql_expr *e,
                       key_bounds *kb)
{
    const sql_expr *col, *val;
    sql_op op;

    if (e->kind != SQL_EXPR_OP || e->nargs != 2 || e->u.op < SQL_OP_EQ ||
        e->u.op > SQL_OP_GE)
        return;
    op = e->u.op;
    if (e->args[0]->kind == SQL_EXPR_COLUMN && e->args[0]->u.column >= off &&
        !reads_columns_from(e->args[1], off)) {
        col = e->args[0];
        val = e->args[1];
    } else if (e->args[1]->kind == SQL_EXPR_COLUMN && e->args[1]->u.column >= off &&
               !reads_columns_from(e->args[0], off)) {
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
    /* The value goes to the index as is: it must be of the column's own
     * type. */
    if (val->type != col->type || col->u.column - off >= t->info.ncols)
        return;
    for (uint16_t k = 0; k < nkeys; k++) {
        if (keys[k] != col->u.column - off + 1)
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

static void bounds_collect(const sql_table *t, const uint16_t *keys,
                           uint16_t nkeys, uint16_t off, const sql_expr *e,
                           key_bounds *kb)
{
    if (e == NULL)
        return;
    if (e->kind == SQL_EXPR_AND) {
        for (uint16_t i = 0; i < e->nargs; i++)
            bounds_collect(t, keys, nkeys, off, e->args[i], kb);
        return;
    }
    bound_from(t, keys, nkeys, off, e, kb);
}

/* How a scan reads its table: through index `name` (NULL: the primary
 * key), whose key columns are keys, bounded as kb says; or in storage
 * order (keys NULL). */
typedef struct access_path {
    const char *index;
    const uint16_t *keys;
    uint16_t nkeys;
    key_bounds kb[16];
} access_path;

/*
 * The access path for t under conds: the primary key if they bound its
 * first column, else the other index with the most leading columns bound
 * by equality (a range on the next one counting half a column), else a
 * sequential scan.
 */
static void choose_path(const sql_table *t, uint16_t off,
                        const sql_expr *const *conds, uint16_t nconds,
                        access_path *ap)
{
    key_bounds kb[16];
    int best = -1, best_score = 0;

    memset(ap, 0, sizeof(*ap));
    if (t->info.npkey > 0) {
        for (uint16_t i = 0; i < nconds; i++)
            bounds_collect(t, t->info.pkey, t->info.npkey, off, conds[i],
                           ap->kb);
        if (ap->kb[0].eq != NULL || ap->kb[0].lo != NULL ||
            ap->kb[0].hi != NULL) {
            ap->keys = t->info.pkey;
            ap->nkeys = t->info.npkey;
            return;
        }
    }
    for (uint16_t x = 0; x < t->nidx; x++) {
        const keel_index_info *ix = &t->idx[x];
        uint16_t k = 0;
        int score = 0;
        if (ix->primary || ix->nkeys == 0 || ix->nkeys > 16)
            continue;
        memset(kb, 0, sizeof(kb));
        for (uint16_t i = 0; i < nconds; i++)
            bounds_collect(t, ix->keys, ix->nkeys, off, conds[i], kb);
        while (k < ix->nkeys && kb[k].eq != NULL) {
            score += 2;
            k++;
        }
        if (k < ix->nkeys && (kb[k].lo != NULL || kb[k].hi != NULL))
            score++;
        if (score > best_score) {
            best = x;
            best_score = score;
            memcpy(ap->kb, kb, sizeof(kb));
        }
    }
    if (best >= 0) {
        ap->index = t->idx[best].name;
        ap->keys = t->idx[best].keys;
        ap->nkeys = t->idx[best].nkeys;
    } else {
        memset(ap->kb, 0, sizeof(ap->kb));
    }
}

/* A bound's value over the outer row, false when it is null or cannot be
 * had: then it bounds nothing (the conditions, tested on every row,
 * still decide). */
static bool bound_value(sql_session *s, const sql_expr *e, const sql_value *row,
                        keel_value *out)
{
    sql_value v;

    if (e->kind == SQL_EXPR_PARAM && s->params == NULL)
        return false;
    if (sql_expr_eval(s, e, row, &v) != KEEL_OK || v.isnull || v.type != e->type)
        return false;
    sql_value_to_keel(&v, out);
    return true;
}

/*
 * Opens a scan of table t, whose columns start at `off` in the rows of
 * its query, bounded by what conds (conjunctions) say of its primary key
 * given the outer row (the columns before `off`).  The scan's arrays are
 * allocated on its first opening and reused after.
 */
static keel_status scan_open(sql_session *s, sql_scan *sc, sql_table *t,
                             const sql_expr *const *conds, uint16_t nconds,
                             const sql_value *row, uint16_t off)
{
    access_path ap;
    const key_bounds *kb = ap.kb;
    keel_bound lower, upper, *lp = NULL, *up = NULL;
    uint16_t k = 0;
    keel_status rc;

    sc->t = t;
    sc->ks = NULL;
    if (sc->row == NULL) {
        sc->row = sql_alloc(&s->arena, (t->info.ncols + 1) * sizeof(sql_value));
        sc->kv = sql_alloc(&s->arena, (t->info.ncols + 1) * sizeof(keel_value));
        sc->lo = sql_alloc(&s->arena, 16 * sizeof(keel_value));
        sc->hi = sql_alloc(&s->arena, 16 * sizeof(keel_value));
        if (sc->row == NULL || sc->kv == NULL || sc->lo == NULL || sc->hi == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    choose_path(t, off, conds, nconds, &ap);
    if (ap.keys == NULL && sc->order_index != NULL)
        ap.index = sc->order_index; /* read whole, for ORDER BY */
    /* Equalities on a prefix of the key, then one range. */
    while (k < ap.nkeys && kb[k].eq != NULL &&
           bound_value(s, kb[k].eq, row, &sc->lo[k])) {
        sc->hi[k] = sc->lo[k];
        k++;
    }
    lower = (keel_bound){.vals = sc->lo, .ncols = k, .inclusive = true};
    upper = (keel_bound){.vals = sc->hi, .ncols = k, .inclusive = true};
    if (k < ap.nkeys && kb[k].lo != NULL &&
        bound_value(s, kb[k].lo, row, &sc->lo[k])) {
        lower.ncols = (uint16_t)(k + 1);
        lower.inclusive = kb[k].lo_incl;
    }
    if (k < ap.nkeys && kb[k].hi != NULL &&
        bound_value(s, kb[k].hi, row, &sc->hi[k])) {
        upper.ncols = (uint16_t)(k + 1);
        upper.inclusive = kb[k].hi_incl;
    }
    if (lower.ncols > 0)
        lp = &lower;
    if (upper.ncols > 0)
        up = &upper;
    sc->index_scan = lp != NULL || up != NULL;
    sc->eq_cols = k;
    sc->point = ap.index == NULL && k > 0 && k == t->info.npkey;
    if (sc->point) {
        /* At most one row: looked up now, returned by the first next. */
        rc = keel_lookup(s->ks, t->schema, t->name, sc->lo, sc->kv, &sc->pending);
        return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
    }
    /* An index's bounds that could not be had (a null): no index, unless
     * the query counts on its order. */
    rc = keel_scan_begin(s->ks, t->schema, t->name,
                         lp != NULL || up != NULL || sc->ordered ? ap.index
                                                                 : NULL,
                         lp, up, &sc->ks);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

void sql_explain_node(sql_explain *x, int depth, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (x->n >= (int)(sizeof(x->lines) / sizeof(x->lines[0])))
        return;
    depth += x->base;
    n = depth == 0 ? 0
                   : snprintf(x->lines[x->n], sizeof(x->lines[0]), "%*s->  ",
                              (depth - 1) * 6 + 2, "");
    va_start(ap, fmt);
    vsnprintf(x->lines[x->n] + n, sizeof(x->lines[0]) - (size_t)n, fmt, ap);
    va_end(ap);
    x->n++;
}

void sql_explain_scan(sql_explain *x, int depth, const sql_table *t,
                      uint16_t off, const sql_expr *const *conds,
                      uint16_t nconds)
{
    access_path ap;
    char alias[80] = "";

    choose_path(t, off, conds, nconds, &ap);
    if (strcmp(t->alias, t->name) != 0)
        snprintf(alias, sizeof(alias), " %s", t->alias);
    if (ap.keys != NULL)
        sql_explain_node(x, depth, "Index Scan using %s on %s%s",
                         ap.index != NULL ? ap.index : t->info.pkey_name,
                         t->name, alias);
    else
        sql_explain_node(x, depth, "Seq Scan on %s%s", t->name, alias);
}

keel_status sql_scan_begin(sql_session *s, sql_scan *sc, sql_table *t,
                           const sql_expr *where)
{
    memset(sc, 0, sizeof(*sc));
    sc->where = where;
    return scan_open(s, sc, t, &where, where != NULL ? 1 : 0, NULL, 0);
}

keel_status sql_scan_next(sql_session *s, sql_scan *sc, bool *found)
{
    keel_status rc;

    for (;;) {
        sql_value w;
        rc = sql_check_cancel(s);
        if (rc != KEEL_OK)
            return rc;
        if (sc->point) {
            *found = sc->pending;
            sc->pending = false;
        } else {
            rc = keel_scan_next(sc->ks, sc->kv, found);
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
        }
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
typedef sql_target target;

/* One collected output row: its values and sort keys. */
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
    if (v->node_case == PG_QUERY__NODE__NODE_A_ARRAY_EXPR)
        return "array";
    if (v->node_case == PG_QUERY__NODE__NODE_TYPE_CAST) {
        const PgQuery__TypeCast *tc = v->type_cast;
        if (tc->arg != NULL && (tc->arg->node_case == PG_QUERY__NODE__NODE_COLUMN_REF ||
                                tc->arg->node_case == PG_QUERY__NODE__NODE_FUNC_CALL ||
                                tc->arg->node_case == PG_QUERY__NODE__NODE_A_ARRAY_EXPR)) {
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
    if (v->node_case == PG_QUERY__NODE__NODE_A_INDIRECTION &&
        v->a_indirection->arg != NULL) {
        /* a[1]: a's name. */
        PgQuery__ResTarget inner = *rt;
        inner.val = v->a_indirection->arg;
        inner.name = NULL;
        return target_name(&inner);
    }
    if (v->node_case == PG_QUERY__NODE__NODE_SUB_LINK) {
        /* EXISTS, ARRAY, or a subquery's one output's name. */
        const PgQuery__SubLink *sl = v->sub_link;
        if (sl->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK)
            return "exists";
        if (sl->sub_link_type == PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK)
            return "array";
        if (sl->sub_link_type == PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK &&
            sl->subselect != NULL &&
            sl->subselect->node_case == PG_QUERY__NODE__NODE_SELECT_STMT &&
            sl->subselect->select_stmt->n_target_list > 0 &&
            sl->subselect->select_stmt->target_list[0]->node_case ==
                PG_QUERY__NODE__NODE_RES_TARGET)
            return target_name(
                sl->subselect->select_stmt->target_list[0]->res_target);
    }
    if (v->node_case == PG_QUERY__NODE__NODE_CASE_EXPR)
        return "case";
    if (v->node_case == PG_QUERY__NODE__NODE_COALESCE_EXPR)
        return "coalesce";
    if (v->node_case == PG_QUERY__NODE__NODE_MIN_MAX_EXPR)
        return v->min_max_expr->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST
                   ? "greatest"
                   : "least";
    if (v->node_case == PG_QUERY__NODE__NODE_A_EXPR &&
        v->a_expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF)
        return "nullif";
    if (v->node_case == PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION) {
        switch (v->sqlvalue_function->op) {
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_USER:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_USER:
            return "current_user";
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_SESSION_USER:
            return "session_user";
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

static bool is_star(const PgQuery__ResTarget *rt, const PgQuery__ColumnRef **cr)
{
    *cr = rt->val != NULL && rt->val->node_case == PG_QUERY__NODE__NODE_COLUMN_REF
              ? rt->val->column_ref
              : NULL;
    return *cr != NULL && (*cr)->n_fields > 0 &&
           (*cr)->fields[(*cr)->n_fields - 1]->node_case ==
               PG_QUERY__NODE__NODE_A_STAR;
}

/* The output list: * expanded to the table's columns. */
keel_status sql_targets_analyse(sql_session *s, const sql_scope *scope,
                                PgQuery__Node **list, size_t n,
                                sql_target **out, uint16_t *nout)
{
    const PgQuery__ColumnRef *cr;
    size_t cap = 0;
    target *t;
    uint16_t k = 0;
    keel_status rc;

    for (size_t i = 0; i < n; i++) {
        if (is_star(list[i]->res_target, &cr)) {
            if (scope == NULL || scope->ncols == scope->nouter)
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
        if (is_star(rt, &cr)) {
            const char *q = cr->n_fields == 2 ? sql_node_string(cr->fields[0]) : NULL;
            bool known = q == NULL;
            for (uint16_t c = scope->nouter; !known && c < scope->ncols; c++)
                known = strcmp(sql_scope_table_of(scope, c), q) == 0;
            if (!known)
                return sql_fail_at(s, cr->location, KEEL_ENOENT, "42P01",
                                   "missing FROM-clause entry for table \"%s\"",
                                   q);
            for (uint16_t oi = 0;
                 oi < scope->nfirst + scope->ncols - scope->nouter; oi++) {
                /* unqualified: USING's merged columns first, then the
                 * rest but those merged away */
                uint16_t c = oi < scope->nfirst
                                 ? scope->first[oi]
                                 : (uint16_t)(scope->nouter + oi - scope->nfirst);
                sql_expr *e;
                bool skip = false;
                if (q != NULL && oi < scope->nfirst)
                    continue;
                for (uint16_t h = 0; q == NULL && oi >= scope->nfirst &&
                                     h < scope->nhidden + scope->nfirst;
                     h++)
                    skip = skip || (h < scope->nhidden
                                        ? scope->hidden[h]
                                        : scope->first[h - scope->nhidden]) == c;
                if (skip)
                    continue;
                if (q != NULL && strcmp(sql_scope_table_of(scope, c), q) != 0)
                    continue;
                e = sql_alloc(&s->arena, sizeof(*e));
                if (e == NULL)
                    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
                memset(e, 0, sizeof(*e));
                e->kind = SQL_EXPR_COLUMN;
                e->type = sql_scope_type(scope, c);
                e->location = cr->location;
                e->u.column = c;
                if (scope->grouping != NULL) {
                    if (scope->grouping->key_slot[c] < 0)
                        return sql_fail_at(s, cr->location, KEEL_EINVAL, "42803",
                                           "column \"%s.%s\" must appear in the "
                                           "GROUP BY clause or be used in an "
                                           "aggregate function",
                                           sql_scope_table_of(scope, c),
                                           scope->cols[c].name);
                    e->u.column = (uint16_t)scope->grouping->key_slot[c];
                }
                t[k].expr = e;
                t[k].table = sql_scope_table_of(scope, c);
                t[k++].name = scope->cols[c].name;
            }
            continue;
        }
        if (scope != NULL && scope->grouping != NULL &&
            scope->grouping->target_key != NULL &&
            scope->grouping->target_key[i] >= 0) {
            /* An output column grouped by: the group's key itself. */
            const sql_grouping *g = scope->grouping;
            int16_t slot = g->target_key[i];
            sql_expr *e = sql_alloc(&s->arena, sizeof(*e));
            if (e == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            memset(e, 0, sizeof(*e));
            e->kind = SQL_EXPR_COLUMN;
            e->type = g->key_exprs[slot]->type;
            e->location = g->key_exprs[slot]->location;
            e->u.column = (uint16_t)slot;
            t[k].expr = e;
            t[k].table = NULL;
            t[k++].name = target_name(rt);
            continue;
        }
        rc = sql_expr_prepare(s, scope, rt->val, &t[k].expr);
        if (rc != KEEL_OK)
            return rc;
        t[k].table = NULL;
        t[k++].name = target_name(rt);
    }
    *out = t;
    *nout = k;
    return KEEL_OK;
}

/* LIMIT / OFFSET: a constant integer expression; -1 for none (or NULL). */
keel_status sql_limit_value(sql_session *s, const PgQuery__Node *n,
                            const char *what, int64_t *out)
{
    sql_expr *e;
    sql_value v;
    const char *clause = s->clause;
    keel_status rc;

    *out = -1;
    if (n == NULL)
        return KEEL_OK;
    s->clause = what;
    rc = sql_expr_prepare(s, NULL, n, &e);
    s->clause = clause;
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

int sql_key_cmp(const sql_value *a, const sql_value *b, bool desc,
                   bool nulls_first)
{
    int c;

    if (a->isnull || b->isnull) {
        if (a->isnull && b->isnull)
            return 0;
        return a->isnull == nulls_first ? -1 : 1;
    }
    c = sql_value_compare(a, b);
    return desc ? -c : c;
}

typedef struct sort_spec {
    const sort_key *keys;
    uint16_t nkeys;
    uint16_t nout; /* DISTINCT: then every output value */
} sort_spec;

static int sorted_cmp(const void *x, const void *y, void *arg)
{
    const sorted_row *a = x, *b = y;
    const sort_spec *spec = arg;
    int c;

    for (uint16_t i = 0; i < spec->nkeys; i++) {
        c = sql_key_cmp(&a->keys[i], &b->keys[i], spec->keys[i].desc,
                    spec->keys[i].nulls_first);
        if (c != 0)
            return c;
    }
    for (uint16_t i = 0; i < spec->nout; i++) {
        c = sql_key_cmp(&a->out[i], &b->out[i], false, false);
        if (c != 0)
            return c;
    }
    return 0;
}

/* ---- the output stage -------------------------------------------------- */

/* What the output stage needs, whatever feeds it rows. */
typedef struct output {
    target *tl;
    uint16_t nt;
    sql_expr *having;
    sort_key *keys;
    uint16_t nkeys;
    bool distinct;
    uint16_t ndistinct_on; /* DISTINCT ON: rows equal in keys[0, n) */
    int64_t limit, offset, sent, skipped;
    bool collect; /* ORDER BY or DISTINCT: rows are kept, then sorted */
    sorted_row *rows;
    size_t nrows, caprows;
    sql_value *out;
    const char **txt;
    uint32_t *lens;
    sql_rowset *into; /* a subquery's: rows are kept there, not sent */
    sql_windowing *win; /* window functions: rows are kept for them */
    sql_srf_list *srfs; /* set-returning functions in tl, or NULL */
} output;

static keel_status send_values(sql_session *s, output *o, const sql_value *vals)
{
    keel_status rc;

    if (o->into != NULL) {
        rc = sql_rowset_add(s, o->into, vals);
        if (rc == KEEL_OK)
            o->sent++;
        return rc;
    }
    for (uint16_t i = 0; i < o->nt; i++) {
        rc = sql_value_out(s, &vals[i], i, &o->txt[i], &o->lens[i]);
        if (rc != KEEL_OK)
            return rc;
    }
    if (s->sink->row(s->sink->ctx, o->txt, o->lens, o->nt) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    o->sent++;
    return KEEL_OK;
}

/* Whether the output is complete (LIMIT reached while streaming). */
static bool output_full(const output *o)
{
    return !o->collect && o->limit >= 0 && o->sent >= o->limit;
}

static keel_status output_emit(sql_session *s, output *o,
                               const sql_value *row);
static keel_status srf_rows(sql_session *s, bool unnest, int json_srf,
                            sql_expr *const *args, const sql_value *row,
                            sql_rowset *rs);
static keel_status series_args(sql_session *s, sql_expr *const *args,
                               const sql_value *row, sql_value *v,
                               bool *empty);

/* One row (an input row, or a group's) through HAVING, then kept for the
 * window functions, or through the output list and on to the client or
 * the collection. */
static keel_status output_row(sql_session *s, output *o, const sql_value *row)
{
    keel_status rc;

    if (o->having != NULL) {
        sql_value h;
        rc = sql_expr_eval(s, o->having, row, &h);
        if (rc != KEEL_OK || h.isnull || !h.v.b)
            return rc;
    }
    if (o->win != NULL)
        return sql_window_keep(s, o->win, row);
    return output_emit(s, o, row);
}

/* The output list over row, on to the client or the collection. */
static keel_status output_project(sql_session *s, output *o,
                                  const sql_value *row)
{
    keel_status rc;

    for (uint16_t i = 0; i < o->nt; i++) {
        rc = sql_expr_eval(s, o->tl[i].expr, row, &o->out[i]);
        if (rc != KEEL_OK)
            return rc;
    }
    if (!o->collect) {
        if (o->skipped < o->offset) {
            o->skipped++;
            return KEEL_OK;
        }
        return send_values(s, o, o->out);
    }
    if (o->nrows == o->caprows) {
        size_t cap = o->caprows == 0 ? 64 : o->caprows * 2;
        sorted_row *nr = sql_alloc(&s->arena, cap * sizeof(*nr));
        if (nr == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (o->nrows > 0)
            memcpy(nr, o->rows, o->nrows * sizeof(*nr));
        o->rows = nr;
        o->caprows = cap;
    }
    {
        sorted_row *r = &o->rows[o->nrows];
        r->out = sql_alloc(&s->arena, (o->nt + 1) * sizeof(sql_value));
        r->keys = sql_alloc(&s->arena, (o->nkeys + 1) * sizeof(sql_value));
        if (r->out == NULL || r->keys == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint16_t i = 0; i < o->nt; i++) {
            r->out[i] = o->out[i];
            rc = sql_value_keep(s, &r->out[i]);
            if (rc != KEEL_OK)
                return rc;
        }
        for (uint16_t i = 0; i < o->nkeys; i++) {
            rc = sql_expr_eval(s, o->keys[i].expr, row, &r->keys[i]);
            if (rc == KEEL_OK)
                rc = sql_value_keep(s, &r->keys[i]);
            if (rc != KEEL_OK)
                return rc;
        }
    }
    o->nrows++;
    return KEEL_OK;
}

/* A row through the output list: once, or once per row its
 * set-returning functions give (sql_srf_list). */
static keel_status output_emit(sql_session *s, output *o, const sql_value *row)
{
    sql_srf_list *l = o->srfs;
    keel_status rc = KEEL_OK;

    if (l == NULL)
        return output_project(s, o, row);
    for (uint16_t f = 0; rc == KEEL_OK && f < l->n; f++) {
        sql_srf *x = l->v[f];
        sql_value v[3];
        bool empty;
        x->ints = !x->unnest && x->json_srf == 0 && x->expr->args[3] == NULL;
        if (!x->ints) {
            rc = srf_rows(s, x->unnest, x->json_srf, x->expr->args, row,
                          &x->rs);
            continue;
        }
        /* integers are counted out as they are sent, not kept */
        rc = series_args(s, x->expr->args, row, v, &empty);
        x->next = v[0].v.i;
        x->stop = v[1].v.i;
        x->step = v[2].v.i;
        x->more = rc == KEEL_OK && !empty &&
                  (x->step > 0 ? x->next <= x->stop : x->next >= x->stop);
    }
    for (size_t i = 0; rc == KEEL_OK && !output_full(o); i++) {
        bool any = false;
        for (uint16_t f = 0; f < l->n; f++) {
            sql_srf *x = l->v[f];
            x->cur = (sql_value){.type = x->expr->type, .isnull = true};
            if (x->ints && x->more) {
                x->cur.isnull = false;
                x->cur.v.i = x->next;
                x->more = !__builtin_add_overflow(x->next, x->step, &x->next) &&
                          (x->step > 0 ? x->next <= x->stop
                                       : x->next >= x->stop);
                any = true;
            } else if (!x->ints && i < x->rs.n) {
                x->cur = x->rs.vals[i];
                any = true;
            }
        }
        if (!any)
            break;
        rc = sql_check_cancel(s);
        if (rc == KEEL_OK)
            rc = output_project(s, o, row);
    }
    return rc;
}

/* A row with its window functions' values: on through the output list,
 * until LIMIT is reached while streaming. */
static keel_status window_emit(sql_session *s, void *ctx, const sql_value *row,
                               bool *done)
{
    output *o = ctx;
    keel_status rc = output_emit(s, o, row);

    *done = output_full(o);
    return rc;
}

/* The collected rows, sorted (and made distinct), to the client. */
static keel_status output_finish(sql_session *s, output *o)
{
    sort_spec spec = {.keys = o->keys, .nkeys = o->nkeys,
                      .nout = o->distinct ? o->nt : 0};
    keel_status rc = KEEL_OK;

    if (!o->collect)
        return KEEL_OK;
    if (o->nrows > 1)
        qsort_r(o->rows, o->nrows, sizeof(*o->rows), sorted_cmp, &spec);
    for (size_t i = 0; i < o->nrows && (o->limit < 0 || o->sent < o->limit);
         i++) {
        if (o->distinct && i > 0) {
            bool same = true;
            for (uint16_t c = 0; same && c < o->nt; c++)
                same = sql_key_cmp(&o->rows[i].out[c], &o->rows[i - 1].out[c],
                               false, false) == 0;
            if (same)
                continue;
        }
        if (o->ndistinct_on > 0 && i > 0) {
            bool same = true;
            for (uint16_t k = 0; same && k < o->ndistinct_on; k++)
                same = sql_key_cmp(&o->rows[i].keys[k],
                                   &o->rows[i - 1].keys[k], false, false) == 0;
            if (same)
                continue;
        }
        if (o->skipped < o->offset) {
            o->skipped++;
            continue;
        }
        rc = send_values(s, o, o->rows[i].out);
        if (rc != KEEL_OK)
            break;
    }
    return rc;
}

/* ---- grouping ------------------------------------------------------------ */

/* A grouping input's value an aggregate's FILTER left out. */
#define AGG_FILTERED UINT32_MAX

/* One input row's part in grouping: its key values then its aggregates'
 * arguments. */
typedef struct group_input {
    sql_value *vals;
} group_input;

typedef struct group_spec {
    uint16_t nkeys;
} group_spec;

static int group_cmp(const void *x, const void *y, void *arg)
{
    const group_input *a = x, *b = y;
    const group_spec *g = arg;

    for (uint16_t i = 0; i < g->nkeys; i++) {
        int c = sql_key_cmp(&a->vals[i], &b->vals[i], false, false);
        if (c != 0)
            return c;
    }
    return 0;
}

/* Folds v into a numeric sum's accumulator. */
static keel_status agg_numeric_step(sql_session *s, const sql_agg *a,
                                    sql_agg_acc *acc, const sql_value *v)
{
    numeric x = NUMERIC_INIT;
    numeric_status st;
    keel_status rc;

    if (a->arg->type != SQL_TYPE_NUMERIC) {
        acc->i += v->v.i;
        return KEEL_OK;
    }
    rc = sql_numeric_get(s, v, &x);
    if (rc != KEEL_OK)
        return rc;
    st = numeric_add(&acc->n, &x, &acc->n);
    numeric_free(&x);
    return sql_numeric_fail(s, st, -1, NULL, 0, -1);
}

/* A numeric sum's or average's result into *out (count rows summed). */
static keel_status agg_numeric_finish(sql_session *s, const sql_agg *a,
                                      sql_agg_acc *acc, int64_t count,
                                      sql_value *out)
{
    numeric r = NUMERIC_INIT, c = NUMERIC_INIT;
    numeric_status st = NUMERIC_OK;

    if (a->arg->type != SQL_TYPE_NUMERIC) {
        /* The 128-bit total in decimal, read as a numeric. */
        char buf[48], *p = buf + sizeof(buf);
        unsigned __int128 u = acc->i < 0 ? -(unsigned __int128)acc->i
                                         : (unsigned __int128)acc->i;
        do {
            *--p = (char)('0' + (int)(u % 10));
            u /= 10;
        } while (u != 0);
        if (acc->i < 0)
            *--p = '-';
        st = numeric_in(p, (size_t)(buf + sizeof(buf) - p), &acc->n);
    }
    if (st == NUMERIC_OK && a->kind == SQL_AGG_AVG) {
        st = numeric_from_int64(count, &c);
        if (st == NUMERIC_OK)
            st = numeric_div(&acc->n, &c, &r);
        numeric_free(&c);
    } else if (st == NUMERIC_OK) {
        r = acc->n;
        acc->n = (numeric)NUMERIC_INIT;
    }
    numeric_free(&acc->n);
    if (st != NUMERIC_OK) {
        numeric_free(&r);
        return sql_numeric_fail(s, st, -1, NULL, 0, -1);
    }
    return sql_numeric_put(s, &r, out);
}

void sql_agg_init(const sql_agg *a, sql_value *st, sql_agg_acc *acc,
                  int64_t *count)
{
    memset(st, 0, sizeof(*st));
    st->type = a->type;
    st->isnull = a->kind != SQL_AGG_COUNT && a->kind != SQL_AGG_COUNT_STAR;
    *count = 0;
    acc->i = 0;
    acc->n = (numeric)NUMERIC_INIT;
}

keel_status sql_agg_final(sql_session *s, const sql_agg *a, sql_value *st,
                          sql_agg_acc *acc, int64_t count)
{
    if ((a->kind == SQL_AGG_JSON_AGG || a->kind == SQL_AGG_JSONB_AGG) &&
        !st->isnull) {
        /* the elements in brackets; jsonb's made canonical */
        sql_json_buf b = {0};
        keel_status rc = sql_json_buf_add(s, &b, "[", 1);
        if (rc == KEEL_OK)
            rc = sql_json_buf_add(s, &b, st->v.s.p, st->v.s.len);
        if (rc == KEEL_OK)
            rc = sql_json_buf_add(s, &b, "]", 1);
        if (rc == KEEL_OK && a->kind == SQL_AGG_JSONB_AGG)
            return sql_json_in(s, b.p, (uint32_t)b.len, SQL_TYPE_JSONB, -1, st);
        st->v.s.p = b.p;
        st->v.s.len = (uint32_t)b.len;
        acc->i = 0;
        return rc;
    }
    if (a->kind == SQL_AGG_ARRAY_AGG && !st->isnull) {
        char *p = sql_alloc(&s->arena, st->v.s.len + 3u);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        p[0] = '{';
        memcpy(p + 1, st->v.s.p, st->v.s.len);
        p[st->v.s.len + 1] = '}';
        st->v.s.p = p;
        st->v.s.len += 2;
        acc->i = 0;
        return KEEL_OK;
    }
    if (a->type == SQL_TYPE_NUMERIC &&
        (a->kind == SQL_AGG_SUM || a->kind == SQL_AGG_AVG) && count > 0)
        return agg_numeric_finish(s, a, acc, count, st);
    numeric_free(&acc->n);
    if (a->kind == SQL_AGG_AVG && count > 0)
        st->v.f /= (double)count;
    return KEEL_OK;
}

keel_status sql_agg_step(sql_session *s, const sql_agg *a, sql_value *st,
                         sql_agg_acc *acc, int64_t *n, const sql_value *v)
{
    if (a->kind == SQL_AGG_COUNT_STAR) {
        st->v.i++;
        return KEEL_OK;
    }
    if (a->kind == SQL_AGG_JSON_AGG || a->kind == SQL_AGG_JSONB_AGG) {
        /* The elements so far as JSON, separated by ", ", in a buffer
         * that grows (its room in acc->i), put in brackets by
         * sql_agg_final(). */
        sql_json_buf b = {.p = (char *)st->v.s.p,
                          .len = st->isnull ? 0 : st->v.s.len,
                          .cap = (size_t)acc->i};
        keel_status rc = KEEL_OK;
        if (!st->isnull)
            rc = sql_json_buf_add(s, &b, ", ", 2);
        if (rc == KEEL_OK)
            rc = sql_json_from_value(s, v, &b);
        if (rc != KEEL_OK)
            return rc;
        st->isnull = false;
        st->v.s.p = b.p;
        st->v.s.len = (uint32_t)b.len;
        acc->i = (__int128)b.cap;
        (*n)++;
        return KEEL_OK;
    }
    if (a->kind == SQL_AGG_ARRAY_AGG) {
        /* The elements so far, comma-separated, in a buffer that grows
         * (its room in acc->i); sql_agg_final() copies them into braces,
         * so a window can read the state and go on. */
        char *buf = (char *)st->v.s.p;
        size_t len = st->isnull ? 0 : st->v.s.len, cap = (size_t)acc->i;
        keel_status rc;
        if (!st->isnull) {
            if (len + 1 > cap) {
                char *nb = sql_alloc(&s->arena, cap * 2 + 16);
                if (nb == NULL)
                    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
                memcpy(nb, buf, len);
                buf = nb;
                cap = cap * 2 + 16;
            }
            buf[len++] = ',';
        }
        rc = sql_array_put(s, &buf, &len, &cap, v);
        if (rc != KEEL_OK)
            return rc;
        st->isnull = false;
        st->v.s.p = buf;
        st->v.s.len = (uint32_t)len;
        acc->i = (__int128)cap;
        (*n)++;
        return KEEL_OK;
    }
    if (v->isnull)
        return KEEL_OK;
    switch (a->kind) {
    case SQL_AGG_COUNT:
        st->v.i++;
        break;
    case SQL_AGG_STRING_AGG: {
        /* A new string each time: the groups are small where it is
         * used (psql's). */
        uint32_t dl = st->isnull || a->delim.isnull ? 0 : a->delim.v.s.len;
        uint32_t len = (st->isnull ? 0 : st->v.s.len) + dl + v->v.s.len;
        char *p = sql_alloc(&s->arena, len + 1u);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (!st->isnull) {
            memcpy(p, st->v.s.p, st->v.s.len);
            if (dl > 0)
                memcpy(p + st->v.s.len, a->delim.v.s.p, dl);
        }
        memcpy(p + len - v->v.s.len, v->v.s.p, v->v.s.len);
        st->isnull = false;
        st->v.s.p = p;
        st->v.s.len = len;
        break;
    }
    case SQL_AGG_SUM:
    case SQL_AGG_AVG:
        if (a->type == SQL_TYPE_NUMERIC) {
            st->isnull = false;
            (*n)++;
            return agg_numeric_step(s, a, acc, v);
        }
        if (st->isnull) {
            st->isnull = false;
            if (a->type == SQL_TYPE_FLOAT8)
                st->v.f = 0;
            else
                st->v.i = 0;
        }
        if (a->type == SQL_TYPE_FLOAT8)
            st->v.f += v->v.f;
        else if (__builtin_add_overflow(st->v.i, v->v.i, &st->v.i))
            return sql_fail(s, KEEL_EINVAL, "22003", "bigint out of range");
        (*n)++;
        break;
    default: /* MIN, MAX */
        if (st->isnull ||
            (a->kind == SQL_AGG_MIN ? sql_value_compare(v, st) < 0
                                    : sql_value_compare(v, st) > 0)) {
            *st = *v;
            st->type = a->type;
        }
        break;
    }
    return KEEL_OK;
}

/* How agg_sorted() orders a group's input rows for one aggregate. */
typedef struct agg_sort {
    const group_input *in;
    const sql_agg *a;
    uint16_t slot, key_slot; /* its argument's, its ORDER BY keys' */
} agg_sort;

static int agg_row_cmp(const void *x, const void *y, void *arg)
{
    const agg_sort *as = arg;
    size_t ra = *(const size_t *)x, rb = *(const size_t *)y;
    const sql_agg *a = as->a;
    int c;

    if (a->distinct) {
        /* the values themselves, as its ORDER BY (of them) says */
        c = sql_key_cmp(&as->in[ra].vals[as->slot], &as->in[rb].vals[as->slot],
                        a->norder > 0 && a->odesc[0],
                        a->norder > 0 && a->onulls_first[0]);
        if (c != 0)
            return c;
    }
    for (uint16_t k = 0; !a->distinct && k < a->norder; k++) {
        c = sql_key_cmp(&as->in[ra].vals[as->key_slot + k],
                        &as->in[rb].vals[as->key_slot + k], a->odesc[k],
                        a->onulls_first[k]);
        if (c != 0)
            return c;
    }
    return ra < rb ? -1 : ra > rb; /* ties keep the input's order */
}

/* Folds aggregate a over the group's input rows in[first, last) in the
 * order its ORDER BY gives, or over their distinct values in order
 * (DISTINCT): the rows its FILTER left out, and (but for array_agg) the
 * distinct NULL, are not folded.  rows: room for the rows' numbers. */
static keel_status agg_sorted(sql_session *s, const sql_grouping *g,
                              uint16_t ai, sql_value *st, sql_agg_acc *acc,
                              int64_t *count, const group_input *in,
                              size_t first, size_t last, size_t *rows)
{
    const sql_agg *a = &g->aggs[ai];
    agg_sort as = {.in = in, .a = a, .slot = (uint16_t)(g->nkeys + ai),
                   .key_slot = (uint16_t)(g->nkeys + g->naggs + a->order_off)};
    size_t nr = 0;
    keel_status rc = KEEL_OK;

    for (size_t r = first; r < last; r++) {
        const sql_value *v = &in[r].vals[as.slot];
        if (v->type == AGG_FILTERED ||
            (a->distinct && v->isnull && a->kind != SQL_AGG_ARRAY_AGG &&
             a->kind != SQL_AGG_JSON_AGG && a->kind != SQL_AGG_JSONB_AGG))
            continue;
        rows[nr++] = r;
    }
    if (nr > 1)
        qsort_r(rows, nr, sizeof(*rows), agg_row_cmp, &as);
    for (size_t k = 0; rc == KEEL_OK && k < nr; k++) {
        const sql_value *v = &in[rows[k]].vals[as.slot];
        if (a->distinct && k > 0 &&
            sql_key_cmp(&in[rows[k - 1]].vals[as.slot], v, false, false) == 0)
            continue;
        rc = sql_agg_step(s, a, st, acc, count, v);
    }
    return rc;
}

/* Groups the input rows (sorted by key), computes each group's
 * aggregates and sends its row to the output stage. */
static keel_status group_finish(sql_session *s, const sql_grouping *g,
                                group_input *in, size_t n, output *o)
{
    group_spec spec = {.nkeys = g->nkeys};
    uint16_t width = (uint16_t)(g->nkeys + g->naggs);
    sql_value *row = sql_alloc(&s->arena, (width + 1) * sizeof(*row));
    int64_t *counts = sql_alloc(&s->arena, (g->naggs + 1) * sizeof(*counts));
    /* malloc's alignment, which __int128 needs and the arena's lacks */
    sql_agg_acc *accs = calloc((size_t)g->naggs + 1, sizeof(*accs));
    size_t *rows = NULL;
    bool sorted = false;
    keel_status rc = KEEL_OK;
    size_t i = 0;

    for (uint16_t a = 0; a < g->naggs; a++)
        sorted = sorted || g->aggs[a].distinct || g->aggs[a].norder > 0;
    if (sorted)
        rows = malloc((n + 1) * sizeof(*rows));
    if (row == NULL || counts == NULL || accs == NULL ||
        (sorted && rows == NULL)) {
        free(accs);
        free(rows);
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    for (uint16_t a = 0; a < g->naggs; a++)
        accs[a] = (sql_agg_acc){.i = 0, .n = NUMERIC_INIT};
    if (n > 1)
        qsort_r(in, n, sizeof(*in), group_cmp, &spec);
    /* Without GROUP BY there is one group, even of no rows. */
    while (rc == KEEL_OK && (i < n || (i == 0 && g->nkeys == 0))) {
        size_t first = i;
        for (uint16_t a = 0; a < g->naggs; a++) {
            numeric_free(&accs[a].n);
            sql_agg_init(&g->aggs[a], &row[g->nkeys + a], &accs[a],
                         &counts[a]);
        }
        for (uint16_t k = 0; k < g->nkeys && first < n; k++)
            row[k] = in[first].vals[k];
        while (i < n && (i == first || group_cmp(&in[i], &in[first], &spec) == 0)) {
            for (uint16_t a = 0; rc == KEEL_OK && a < g->naggs; a++)
                if (!g->aggs[a].distinct && g->aggs[a].norder == 0 &&
                    in[i].vals[g->nkeys + a].type != AGG_FILTERED)
                    rc = sql_agg_step(s, &g->aggs[a], &row[g->nkeys + a],
                                      &accs[a], &counts[a],
                                      &in[i].vals[g->nkeys + a]);
            i++;
        }
        for (uint16_t a = 0; rc == KEEL_OK && a < g->naggs; a++)
            if (g->aggs[a].distinct || g->aggs[a].norder > 0)
                rc = agg_sorted(s, g, a, &row[g->nkeys + a], &accs[a],
                                &counts[a], in, first, i, rows);
        for (uint16_t a = 0; rc == KEEL_OK && a < g->naggs; a++)
            rc = sql_agg_final(s, &g->aggs[a], &row[g->nkeys + a], &accs[a],
                               counts[a]);
        if (rc == KEEL_OK)
            rc = output_row(s, o, row);
        if (n == 0)
            break;
        if (rc == KEEL_OK && output_full(o))
            break;
    }
    for (uint16_t a = 0; a < g->naggs; a++)
        numeric_free(&accs[a].n);
    free(accs);
    free(rows);
    return rc;
}

/* ---- FROM: tables joined ------------------------------------------------- */

/* One item of a query's FROM, joined to those before it: a table, or
 * rows read whole (a subquery, a pg_catalog view, a parenthesized
 * join). */
typedef struct from_item {
    sql_table t;            /* a rowset's: its alias, names and width */
    bool left;              /* LEFT JOIN: a row of nulls when none matches */
    /* RIGHT or FULL JOIN (it is then never the first item, and the items
     * before it are the join's left side): its rows are read once
     * (right_build()), and each one no row before it matched comes out
     * once the join is done, with nulls for the items before it. */
    bool right;
    const PgQuery__Node *on;
    sql_expr *on_expr;
    uint16_t off;           /* its first column in the joined row */
    sql_scan sc;
    bool is_rows;           /* rs holds its rows */
    int32_t cte_location;   /* a WITH query's: where it is named, else 0 */
    bool lateral;           /* sub runs again for each row before it */
    const PgQuery__SelectStmt *sub;
    const PgQuery__Alias *alias;
    sql_scope lscope;       /* LATERAL: what sub sees of the items before */
    sql_rowset rs;
    /* generate_series(start, stop[, step]) or unnest(array) in FROM
     * (unnest true): its arguments, over lscope (a function in FROM sees
     * the items before it). */
    const PgQuery__FuncCall *func;
    bool unnest;
    int json_srf; /* or a json function's rows (sql_json_srf()) */
    bool ordinality; /* WITH ORDINALITY: a last column counts its rows */
    sql_expr *fargs[4]; /* srf_columns()'s */
    /* A hash join's inner side (hash_key()): its table's rows, read once
     * into the arena and chained by the hash of column hcol's value;
     * hhead[h & hmask] is the first row's number + 1, hnext the next. */
    bool hbuilt;
    /* Whether it is a hash join's inner side (hash_key()), decided at
     * its first run (0: not yet, 1: yes, with the outer side's key in
     * hkey, 2: no): the conditions, not their values, decide. */
    uint8_t hplan;
    const sql_expr *hkey;
    uint16_t hcol;
    sql_value *hrows;
    uint32_t *hhead, *hnext, hmask;
    /* FULL JOIN ... USING's merged columns (rs's types and names): the
     * j-th is coalesce() of the columns at merge[2j] and merge[2j + 1]
     * (item, column), set in each joined row as it reaches this item. */
    const uint16_t (*merge)[2];
    size_t hn;          /* how many rows hrows holds */
    uint8_t *rmatched;  /* RIGHT or FULL: a bit per row, set once matched */
} from_item;

typedef struct from_list {
    from_item *items;
    uint16_t n, cap;
    /* JOIN ... USING: (item, column) of each right column merged away,
     * and of each merged left column, outermost join's first; resolved
     * into the joined row's columns by from_scope_upto(). */
    struct {
        uint16_t item, col;
    } hidden_at[64], first_at[64];
    uint16_t nhidden, nfirst;
    uint16_t *hidden, *first;
    const char **scalar_alias; /* sql_scope's */
    uint16_t *scalar_col;
    keel_column_info *cols; /* every item's columns, side by side */
    const char **col_table;
    const char **tables;
    uint32_t *types;
    uint16_t ncols;
} from_list;

/* Where a query's FROM is read: an enclosing query's scope and row (a
 * subquery's), or none. */
typedef struct from_ctx {
    const sql_scope *outer;
    const sql_value *outer_row;
    bool describe;
} from_ctx;

static from_item *from_new(sql_session *s, from_list *f)
{
    if (f->n == f->cap) {
        uint16_t cap = f->cap == 0 ? 4 : (uint16_t)(f->cap * 2);
        from_item *ni = sql_alloc(&s->arena, cap * sizeof(*ni));
        if (ni == NULL)
            return NULL;
        if (f->n > 0)
            memcpy(ni, f->items, f->n * sizeof(*ni));
        f->items = ni;
        f->cap = cap;
    }
    memset(&f->items[f->n], 0, sizeof(f->items[0]));
    return &f->items[f->n];
}

/* A rowset item's columns as its table's, renamed by its alias's column
 * list (`AS o(n)`); 42P10 for more names than columns. */
static keel_status rows_columns(sql_session *s, from_item *it)
{
    const PgQuery__Alias *a = it->alias;

    if (a != NULL && a->n_colnames > it->rs.ncols && it->cte_location > 0)
        return sql_fail_at(s, it->cte_location - 1, KEEL_EINVAL, "42P10",
                           "WITH query \"%s\" has %u columns available but "
                           "%zu columns specified",
                           it->t.alias, it->rs.ncols, a->n_colnames);
    if (a != NULL && a->n_colnames > it->rs.ncols)
        return sql_fail(s, KEEL_EINVAL, "42P10",
                        "table \"%s\" has %u columns available but %zu "
                        "columns specified",
                        it->t.alias, it->rs.ncols, a->n_colnames);
    for (size_t i = 0; a != NULL && i < a->n_colnames; i++) {
        const char *n = sql_node_string(a->colnames[i]);
        if (n != NULL)
            snprintf(it->rs.cols[i].name, sizeof(it->rs.cols[i].name), "%s", n);
    }
    /* Only a parenthesized join's columns keep their tables; a
     * subquery's and a view's are its alias's. */
    if (it->alias != NULL || it->t.alias[0] != '\0')
        it->rs.col_table = NULL;
    it->t.info.ncols = it->rs.ncols;
    it->t.cols = it->rs.cols;
    return KEEL_OK;
}

/* A SELECT * over one FROM item (a parenthesized join), built in the
 * arena, so that the join runs as a subquery of its own. */
keel_status sql_star_select(sql_session *s, PgQuery__Node *from,
                            const PgQuery__SelectStmt **out)
{
    PgQuery__SelectStmt *sel = sql_alloc(&s->arena, sizeof(*sel));
    PgQuery__Node *tn = sql_alloc(&s->arena, sizeof(*tn));
    PgQuery__Node *cn = sql_alloc(&s->arena, sizeof(*cn));
    PgQuery__Node *sn = sql_alloc(&s->arena, sizeof(*sn));
    PgQuery__ResTarget *rt = sql_alloc(&s->arena, sizeof(*rt));
    PgQuery__ColumnRef *cr = sql_alloc(&s->arena, sizeof(*cr));
    PgQuery__AStar *star = sql_alloc(&s->arena, sizeof(*star));
    PgQuery__Node **tl = sql_alloc(&s->arena, sizeof(*tl));
    PgQuery__Node **fl = sql_alloc(&s->arena, sizeof(*fl));
    PgQuery__Node **fields = sql_alloc(&s->arena, sizeof(*fields));

    if (sel == NULL || tn == NULL || cn == NULL || sn == NULL || rt == NULL ||
        cr == NULL || star == NULL || tl == NULL || fl == NULL || fields == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    pg_query__select_stmt__init(sel);
    pg_query__node__init(tn);
    pg_query__node__init(cn);
    pg_query__node__init(sn);
    pg_query__res_target__init(rt);
    pg_query__column_ref__init(cr);
    pg_query__a__star__init(star);
    sn->node_case = PG_QUERY__NODE__NODE_A_STAR;
    sn->a_star = star;
    fields[0] = sn;
    cr->n_fields = 1;
    cr->fields = fields;
    cr->location = -1;
    cn->node_case = PG_QUERY__NODE__NODE_COLUMN_REF;
    cn->column_ref = cr;
    rt->val = cn;
    rt->location = -1;
    tn->node_case = PG_QUERY__NODE__NODE_RES_TARGET;
    tn->res_target = rt;
    tl[0] = tn;
    fl[0] = from;
    sel->n_target_list = 1;
    sel->target_list = tl;
    sel->n_from_clause = 1;
    sel->from_clause = fl;
    sel->op = PG_QUERY__SET_OPERATION__SETOP_NONE;
    sel->limit_option = PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_DEFAULT;
    *out = sel;
    return KEEL_OK;
}

/*
 * A WITH query named in FROM (by rv): run as a subquery, seeing only the
 * WITH queries before it (at), its columns named by its column list and
 * then by rv's alias.
 */
/*
 * A named query in FROM (a view's, a WITH query's), by rv: run as a
 * subquery that sees the WITH queries below limit, its columns named by
 * alias (the query's column list) and then by rv's alias.
 */
/* A FROM item of rows, named by alias (or rv's own alias). */
static void from_rows_named(from_item *it, const PgQuery__SelectStmt *query,
                            PgQuery__Alias *alias, const PgQuery__RangeVar *rv,
                            bool left, const PgQuery__Node *on)
{
    if (rv->alias != NULL)
        alias->aliasname = rv->alias->aliasname;
    it->is_rows = true;
    it->sub = query;
    it->alias = alias;
    it->t.name = it->t.alias = alias->aliasname;
    it->left = left;
    it->on = on;
}

/* Its rows' columns, named by its alias's column list, then rv's. */
static keel_status from_rows_columns(sql_session *s, from_item *it,
                                     const PgQuery__RangeVar *rv)
{
    keel_status rc = rows_columns(s, it);

    if (rc == KEEL_OK && rv->alias != NULL && rv->alias->n_colnames > 0) {
        it->alias = rv->alias;
        rc = rows_columns(s, it);
    }
    return rc;
}

static keel_status from_query(sql_session *s, const from_ctx *ctx,
                              from_item *it, const PgQuery__SelectStmt *query,
                              PgQuery__Alias *alias, uint16_t limit,
                              const PgQuery__RangeVar *rv, bool left,
                              const PgQuery__Node *on)
{
    uint16_t saved = s->cte_limit;
    keel_status rc;

    from_rows_named(it, query, alias, rv, left, on);
    s->cte_limit = limit;
    rc = sql_select_rows(s, query, ctx->outer, ctx->outer_row, ctx->describe,
                         &it->rs);
    s->cte_limit = saved;
    if (rc == KEEL_OK)
        rc = from_rows_columns(s, it, rv);
    return rc;
}

/* ---- WITH RECURSIVE ------------------------------------------------------ */

static bool hashable(uint32_t t);
static uint64_t value_hash(const sql_value *v);
static uint32_t setop_type(uint32_t a, uint32_t b);

/* What a WITH query's state holds while it must not be read. */
static const sql_rowset cte_busy;

/* A set of rows by value, as UNION's duplicates are told: open
 * addressing over row numbers + 1 of the rowset the rows are in. */
typedef struct row_set {
    size_t *slots;
    size_t mask, n;
} row_set;

static uint64_t row_hash(const sql_value *row, uint16_t ncols)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;

    for (uint16_t c = 0; c < ncols; c++)
        h = hash_u64(h ^ (row[c].isnull          ? 1
                          : hashable(row[c].type) ? value_hash(&row[c])
                                                  : 2));
    return h;
}

/* Whether row is among the set's rows of rs; if not, and add, rs's row
 * number `add_as` joins the set. */
static keel_status row_set_has(sql_session *s, row_set *set,
                               const sql_rowset *rs, const sql_value *row,
                               size_t add_as, bool *has)
{
    uint16_t nc = rs->ncols;
    size_t i;

    if ((set->n + 1) * 2 > set->mask + 1 || set->slots == NULL) {
        size_t cap = set->slots == NULL ? 64 : (set->mask + 1) * 2;
        size_t *ns = calloc(cap, sizeof(*ns));
        if (ns == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (size_t k = 0; set->slots != NULL && k <= set->mask; k++) {
            size_t r = set->slots[k];
            if (r == 0)
                continue;
            i = row_hash(&rs->vals[(r - 1) * nc], nc) & (cap - 1);
            while (ns[i] != 0)
                i = (i + 1) & (cap - 1);
            ns[i] = r;
        }
        free(set->slots);
        set->slots = ns;
        set->mask = cap - 1;
    }
    for (i = row_hash(row, nc) & set->mask; set->slots[i] != 0;
         i = (i + 1) & set->mask) {
        const sql_value *o = &rs->vals[(set->slots[i] - 1) * nc];
        uint16_t c = 0;
        while (c < nc && sql_key_cmp(&o[c], &row[c], false, false) == 0)
            c++;
        if (c == nc) {
            *has = true;
            return KEEL_OK;
        }
    }
    *has = false;
    set->slots[i] = add_as + 1;
    set->n++;
    return KEEL_OK;
}

/* Appends the rows of `from` not yet in `all` (every one with ALL) to
 * `all`, and keeps only those in `from`. */
static keel_status cte_add_rows(sql_session *s, bool union_all, row_set *set,
                                sql_rowset *all, sql_rowset *from)
{
    uint16_t nc = from->ncols;
    size_t kept = 0;
    keel_status rc = KEEL_OK;

    for (size_t r = 0; rc == KEEL_OK && r < from->n; r++) {
        const sql_value *row = &from->vals[r * nc];
        bool has = false;
        if (!union_all)
            rc = row_set_has(s, set, all, row, all->n, &has);
        if (rc == KEEL_OK && !has) {
            rc = sql_rowset_add(s, all, row);
            if (kept != r)
                memmove(&from->vals[kept * nc], row, nc * sizeof(*row));
            kept++;
        }
    }
    from->n = kept;
    return rc;
}

/* Where node n begins in the text, when it says (else -1). */
static int32_t node_location(const PgQuery__Node *n)
{
    if (n == NULL)
        return -1;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_A_CONST:
        return n->a_const->location;
    case PG_QUERY__NODE__NODE_COLUMN_REF:
        return n->column_ref->location;
    case PG_QUERY__NODE__NODE_A_EXPR:
        return n->a_expr->location;
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        return n->func_call->location;
    case PG_QUERY__NODE__NODE_TYPE_CAST:
        return n->type_cast->location;
    case PG_QUERY__NODE__NODE_PARAM_REF:
        return n->param_ref->location;
    case PG_QUERY__NODE__NODE_RES_TARGET:
        return n->res_target->location;
    case PG_QUERY__NODE__NODE_SORT_BY:
        return node_location(n->sort_by->node);
    default:
        return -1;
    }
}

/* Where column c of a query's output is written, else -1. */
static int32_t target_location(const PgQuery__SelectStmt *q, uint16_t c)
{
    if (q == NULL || c >= q->n_target_list)
        return -1;
    return node_location(q->target_list[c]);
}

/* The recursive term's columns made the non-recursive term's, as
 * PostgreSQL requires: the same number, each of the type the two give
 * it together, which must be the non-recursive term's. */
static keel_status cte_fit(sql_session *s, const PgQuery__CommonTableExpr *cte,
                           const sql_rowset *all, sql_rowset *step)
{
    const PgQuery__SelectStmt *q = cte->ctequery->select_stmt;
    keel_status rc = KEEL_OK;

    if (step->ncols != all->ncols)
        return sql_fail_at(s, target_location(q->rarg, 0), KEEL_EINVAL,
                           "42601",
                           "each UNION query must have the same number of "
                           "columns");
    for (uint16_t c = 0; c < all->ncols; c++) {
        uint32_t want = all->types[c], got = step->types[c];
        uint32_t both = setop_type(want, got);
        if (got == want)
            continue;
        if (both != want) {
            rc = sql_fail_at(s, target_location(q->larg, c), KEEL_ETYPE,
                             "42804",
                             "recursive query \"%s\" column %u has type %s in "
                             "non-recursive term but type %s overall",
                             cte->ctename, c + 1u, sql_type_name(want),
                             sql_type_name(both != 0 ? both : got));
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Cast the output of the non-recursive term to the "
                     "correct type.");
            return rc;
        }
        for (size_t r = 0; rc == KEEL_OK && r < step->n; r++) {
            sql_value *v = &step->vals[r * step->ncols + c];
            if (!v->isnull)
                rc = sql_value_cast(s, v, want, -1, false, cte->location);
            v->type = want;
        }
        step->types[c] = want;
    }
    return rc;
}

/* Rows copied out of the arena (so that they outlive its restore to a
 * mark): rs's values, then its bytes, in one malloc'd block, rs->vals
 * pointing into it. */
static keel_status stash_rows(sql_session *s, sql_rowset *rs, void **block)
{
    size_t nv = rs->n * rs->ncols, nb = 0;
    sql_value *v;
    char *p;

    for (size_t i = 0; i < nv; i++)
        if (!rs->vals[i].isnull && sql_type_has_bytes(rs->vals[i].type))
            nb += rs->vals[i].v.s.len;
    *block = malloc((nv + 1) * sizeof(*v) + nb + 1);
    if (*block == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    v = *block;
    p = (char *)(v + nv + 1);
    for (size_t i = 0; i < nv; i++) {
        v[i] = rs->vals[i];
        if (!v[i].isnull && sql_type_has_bytes(v[i].type)) {
            if (v[i].v.s.len > 0)
                memcpy(p, v[i].v.s.p, v[i].v.s.len);
            v[i].v.s.p = p;
            p += v[i].v.s.len;
        }
    }
    rs->vals = v;
    return KEEL_OK;
}

/* A rowset with all's columns and no rows. */
static void rowset_like(sql_rowset *out, const sql_rowset *all)
{
    memset(out, 0, sizeof(*out));
    out->ncols = all->ncols;
    out->cols = all->cols;
    out->types = all->types;
    out->col_table = all->col_table;
}

/*
 * A recursive WITH query's rows into *all: its non-recursive term's, then
 * over and over its recursive term's, each step reading (as the query's
 * own name) the rows the step before found, until a step finds none new.
 * UNION keeps one of each row found, UNION ALL every one.  A WITH query
 * of RECURSIVE that is no such UNION, or whose second term does not read
 * it, runs once.
 */
static keel_status cte_iterate(sql_session *s, const from_ctx *ctx,
                               const PgQuery__CommonTableExpr *cte,
                               uint16_t at, sql_rowset *all)
{
    struct sql_cte_state *cs = &s->cte_state[at];
    const PgQuery__SelectStmt *q = cte->ctequery->select_stmt;
    bool union_all = q->all;
    uint16_t saved = s->cte_limit;
    sql_rowset work, step;
    void *work_block = NULL;
    row_set set = {0};
    int16_t running = s->cte_running;
    keel_status rc;

    memset(all, 0, sizeof(*all));
    s->cte_limit = cs->end;
    s->cte_running = (int16_t)at;
    cs->rows = &cte_busy;
    if (q->op != PG_QUERY__SET_OPERATION__SETOP_UNION) {
        rc = sql_select_rows(s, q, ctx->outer, ctx->outer_row, ctx->describe,
                             all);
        goto out;
    }
    if (q->n_sort_clause > 0 || q->limit_count != NULL ||
        q->limit_offset != NULL || q->n_locking_clause > 0) {
        rc = sql_fail_at(s,
                         node_location(q->n_sort_clause > 0 ? q->sort_clause[0]
                                       : q->limit_count != NULL
                                           ? q->limit_count
                                           : q->limit_offset),
                         KEEL_EINVAL, "0A000",
                         "%s in a recursive query is not implemented",
                         q->n_sort_clause > 0     ? "ORDER BY"
                         : q->limit_count != NULL ? "LIMIT"
                         : q->limit_offset != NULL ? "OFFSET"
                                                   : "FOR UPDATE/SHARE");
        goto out;
    }
    memset(&work, 0, sizeof(work));
    rc = sql_select_rows(s, q->larg, ctx->outer, ctx->outer_row, ctx->describe,
                         &work);
    if (rc != KEEL_OK)
        goto out;
    if (ctx->describe) {
        *all = work;
        goto out;
    }
    rowset_like(all, &work);
    rc = cte_add_rows(s, union_all, &set, all, &work);
    while (rc == KEEL_OK && work.n > 0) {
        /* A step's memory goes back once its rows are copied out: a
         * recursion of a million steps keeps only its rows. */
        sql_arena_mark mark = sql_arena_save(&s->arena);
        void *block = NULL;
        memset(&step, 0, sizeof(step));
        cs->rows = &work;
        cs->read = false;
        rc = sql_select_rows(s, q->rarg, ctx->outer, ctx->outer_row, false,
                             &step);
        cs->rows = &cte_busy;
        if (rc == KEEL_OK)
            rc = cte_fit(s, cte, all, &step);
        if (rc == KEEL_OK)
            rc = stash_rows(s, &step, &block);
        sql_arena_restore(&s->arena, mark);
        if (rc == KEEL_OK)
            rc = cte_add_rows(s, union_all, &set, all, &step);
        if (rc == KEEL_OK)
            rc = sql_check_cancel(s);
        /* The rows new in this step are the next one's working table. */
        free(work_block);
        work_block = block;
        work.n = step.n;
        work.vals = step.vals;
        if (!cs->read)
            break; /* it did not read itself: once is all */
    }
out:
    cs->rows = NULL;
    s->cte_limit = saved;
    s->cte_running = running;
    free(set.slots);
    free(work_block);
    return rc;
}

/* A WITH query named in FROM: it sees only the WITH queries before it
 * (at), or with RECURSIVE all of its WITH's. */
static keel_status from_cte(sql_session *s, const from_ctx *ctx, from_item *it,
                            const PgQuery__CommonTableExpr *cte, uint16_t at,
                            const PgQuery__RangeVar *rv, bool left,
                            const PgQuery__Node *on)
{
    struct sql_cte_state *cs = &s->cte_state[at];
    PgQuery__Alias *a = sql_alloc(&s->arena, sizeof(*a));
    keel_status rc;

    if (a == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    *a = (PgQuery__Alias)PG_QUERY__ALIAS__INIT;
    a->aliasname = cte->ctename;
    a->n_colnames = cte->n_aliascolnames;
    a->colnames = cte->aliascolnames;
    it->cte_location = cte->location + 1;
    if (cs->dml) {
        if (cs->dml_rows == NULL)
            return sql_fail_at(s, rv->location, KEEL_ENOENT, "42P01",
                               "WITH query \"%s\" does not have a RETURNING "
                               "clause",
                               cte->ctename);
        from_rows_named(it, NULL, a, rv, left, on);
        it->rs = *cs->dml_rows;
        it->rs.cols = sql_alloc(&s->arena,
                                (it->rs.ncols + 1u) * sizeof(*it->rs.cols));
        if (it->rs.cols == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memcpy(it->rs.cols, cs->dml_rows->cols,
               (it->rs.ncols + 1u) * sizeof(*it->rs.cols));
        return from_rows_columns(s, it, rv);
    }
    if (!cs->recursive)
        return from_query(s, ctx, it, cte->ctequery->select_stmt, a, at, rv,
                          left, on);
    if (cs->rows == &cte_busy &&
        cte->ctequery->select_stmt->op != PG_QUERY__SET_OPERATION__SETOP_UNION)
        return sql_fail_at(s, cte->location, KEEL_EINVAL, "42P19",
                           "recursive query \"%s\" does not have the form "
                           "non-recursive-term UNION [ALL] recursive-term",
                           cte->ctename);
    if (cs->rows == &cte_busy)
        return sql_fail_at(s, rv->location, KEEL_EINVAL, "42P19",
                           "recursive reference to query \"%s\" must not "
                           "appear within its non-recursive term",
                           cte->ctename);
    if (cs->rows != NULL && s->cte_running != (int16_t)at)
        return sql_fail_at(s, cte->location, KEEL_EINVAL, "0A000",
                           "mutual recursion between WITH items is not "
                           "implemented");
    from_rows_named(it, cte->ctequery->select_stmt, a, rv, left, on);
    if (cs->rows != NULL) {
        /* The working table: the rows the last step found, its
         * columns copied (rows_columns() names them). */
        size_t bytes = (cs->rows->ncols + 1u) * sizeof(*it->rs.cols);
        it->rs = *cs->rows;
        it->rs.cols = sql_alloc(&s->arena, bytes);
        if (it->rs.cols == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memcpy(it->rs.cols, cs->rows->cols, bytes);
        cs->read = true;
    } else {
        rc = cte_iterate(s, ctx, cte, at, &it->rs);
        if (rc != KEEL_OK)
            return rc;
    }
    return from_rows_columns(s, it, rv);
}

static PgQuery__Node *node_new(sql_session *s, PgQuery__Node__NodeCase c)
{
    PgQuery__Node *n = sql_alloc(&s->arena, sizeof(*n));

    if (n != NULL) {
        *n = (PgQuery__Node)PG_QUERY__NODE__INIT;
        n->node_case = c;
    }
    return n;
}

static PgQuery__Node *string_node(sql_session *s, const char *v)
{
    PgQuery__Node *n = node_new(s, PG_QUERY__NODE__NODE_STRING);
    PgQuery__String *str = sql_alloc(&s->arena, sizeof(*str));

    if (n == NULL || str == NULL)
        return NULL;
    *str = (PgQuery__String)PG_QUERY__STRING__INIT;
    str->sval = (char *)v;
    n->string = str;
    return n;
}

/* table.column as a parse tree's ColumnRef. */
static PgQuery__Node *column_node(sql_session *s, const char *table,
                                  const char *col)
{
    PgQuery__Node *n = node_new(s, PG_QUERY__NODE__NODE_COLUMN_REF);
    PgQuery__ColumnRef *cr = sql_alloc(&s->arena, sizeof(*cr));
    PgQuery__Node **fields = sql_alloc(&s->arena, 2 * sizeof(*fields));

    if (n == NULL || cr == NULL || fields == NULL)
        return NULL;
    *cr = (PgQuery__ColumnRef)PG_QUERY__COLUMN_REF__INIT;
    fields[0] = string_node(s, table);
    fields[1] = string_node(s, col);
    if (fields[0] == NULL || fields[1] == NULL)
        return NULL;
    cr->n_fields = 2;
    cr->fields = fields;
    cr->location = -1;
    n->column_ref = cr;
    return n;
}

PgQuery__Node *sql_column_target(sql_session *s, const char *table,
                                 const char *name)
{
    PgQuery__Node *n = node_new(s, PG_QUERY__NODE__NODE_RES_TARGET);
    PgQuery__ResTarget *rt = sql_alloc(&s->arena, sizeof(*rt));
    PgQuery__Node *ref = column_node(s, table, name);

    if (n == NULL || rt == NULL || ref == NULL)
        return NULL;
    *rt = (PgQuery__ResTarget)PG_QUERY__RES_TARGET__INIT;
    rt->val = ref;
    rt->location = -1;
    n->res_target = rt;
    return n;
}

/* The left item among [from, to) with a visible column named name:
 * *item, *col; 0 found, 1 none, 2 more than one. */
static int using_find(const from_list *f, uint16_t from, uint16_t to,
                      const char *name, uint16_t *item, uint16_t *col)
{
    int found = 0;

    for (uint16_t k = from; k < to; k++)
        for (uint16_t c = 0; c < f->items[k].t.info.ncols; c++) {
            bool hidden = false;
            if (strcmp(f->items[k].t.cols[c].name, name) != 0)
                continue;
            for (uint16_t h = 0; h < f->nhidden; h++)
                hidden = hidden || (f->hidden_at[h].item == k &&
                                    f->hidden_at[h].col == c);
            if (hidden)
                continue;
            if (found++ == 0) {
                *item = k;
                *col = c;
            }
        }
    return found == 0 ? 1 : found == 1 ? 0 : 2;
}

/* Column c's type in from item it. */
static uint32_t item_col_type(const from_item *it, uint16_t c)
{
    return it->is_rows ? it->rs.types[c] : sql_column_type(&it->t.cols[c]);
}

/*
 * FULL JOIN ... USING: each merged column is coalesce(left, right), the
 * type both convert to, in an item of its own after the right side
 * (join_level() sets it); both sides' columns are then hidden from
 * unqualified names and *, which shows the merged ones first.
 */
static keel_status join_merge(sql_session *s, from_list *f, uint16_t nn,
                              const char *const *names, const uint16_t *li,
                              const uint16_t *lc, const uint16_t *rcol)
{
    uint16_t ri = (uint16_t)(f->n - 1), mi = f->n;
    uint16_t(*pairs)[2] = sql_alloc(&s->arena, (2u * nn + 1u) * sizeof(*pairs));
    from_item *m = from_new(s, f);
    char *qual;

    if (m == NULL || pairs == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (f->nhidden + 2 * nn > 64)
        return sql_unsupported(s, -1, "more than 64 USING columns");
    m->is_rows = true;
    m->t.name = m->t.alias = "";
    m->rs.ncols = m->t.info.ncols = nn;
    m->rs.cols = m->t.cols = sql_alloc(&s->arena, (nn + 1u) * sizeof(*m->rs.cols));
    m->rs.types = sql_alloc(&s->arena, (nn + 1u) * sizeof(uint32_t));
    m->rs.col_table = sql_alloc(&s->arena, (nn + 1u) * sizeof(char *));
    qual = sql_alloc(&s->arena, 16);
    if (m->rs.cols == NULL || m->rs.types == NULL || m->rs.col_table == NULL ||
        qual == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    /* a name for the merged columns that a later USING's condition can
     * qualify them by, and no unquoted name can be */
    snprintf(qual, 16, "(using %u)", (unsigned)mi);
    memset(m->rs.cols, 0, (nn + 1u) * sizeof(*m->rs.cols));
    for (uint16_t i = 0; i < nn; i++) {
        uint32_t lt = item_col_type(&f->items[li[i]], lc[i]);
        uint32_t rt = item_col_type(&f->items[ri], rcol[i]);
        uint32_t t = setop_type(lt, rt);
        if (t == 0)
            return sql_fail(s, KEEL_EINVAL, "42804",
                            "JOIN/USING types %s and %s cannot be matched",
                            sql_type_name(lt), sql_type_name(rt));
        snprintf(m->rs.cols[i].name, sizeof(m->rs.cols[i].name), "%s",
                 names[i]);
        m->rs.types[i] = t;
        m->rs.col_table[i] = qual;
        pairs[2 * i][0] = li[i];
        pairs[2 * i][1] = lc[i];
        pairs[2 * i + 1][0] = ri;
        pairs[2 * i + 1][1] = rcol[i];
        f->hidden_at[f->nhidden].item = li[i];
        f->hidden_at[f->nhidden++].col = lc[i];
        f->hidden_at[f->nhidden].item = ri;
        f->hidden_at[f->nhidden++].col = rcol[i];
    }
    m->merge = (const uint16_t(*)[2])pairs;
    /* the merged columns first, then those of the joins inside it but
     * the ones merged again here */
    {
        uint16_t w = nn;
        struct {
            uint16_t item, col;
        } keep[64];
        for (uint16_t i = 0; i < f->nfirst; i++) {
            bool dup = false;
            for (uint16_t k = 0; k < nn; k++)
                dup = dup || (li[k] == f->first_at[i].item &&
                              lc[k] == f->first_at[i].col);
            if (!dup && w < 64) {
                keep[w - nn].item = f->first_at[i].item;
                keep[w++ - nn].col = f->first_at[i].col;
            }
        }
        for (uint16_t i = nn; i < w; i++) {
            f->first_at[i].item = keep[i - nn].item;
            f->first_at[i].col = keep[i - nn].col;
        }
        for (uint16_t i = 0; i < nn; i++) {
            f->first_at[i].item = mi;
            f->first_at[i].col = i;
        }
        f->nfirst = w;
    }
    f->n++;
    return KEEL_OK;
}

/*
 * JOIN ... USING (names) or NATURAL JOIN, once its right item (the last)
 * is added after the left side's [lstart, lend): the condition
 * left.name = right.name for each, the right's columns merged into the
 * left's (hidden from unqualified names and *), and the merged ones
 * shown first by *, as PostgreSQL does.
 */
static keel_status join_using(sql_session *s, from_list *f,
                              const PgQuery__JoinExpr *j, uint16_t lstart,
                              uint16_t lend)
{
    from_item *r = &f->items[f->n - 1];
    const char *names[64];
    uint16_t nn = 0, li[64], lc[64], rc_[64];
    PgQuery__Node *cond = NULL;
    PgQuery__Node **ands;

    if (j->is_natural) {
        /* the names both sides have, in the left side's order */
        for (uint16_t k = lstart; k < lend; k++)
            for (uint16_t c = 0; c < f->items[k].t.info.ncols && nn < 64; c++) {
                const char *nm = f->items[k].t.cols[c].name;
                uint16_t rk, rcol, li0, lc0;
                bool dup = false;
                if (using_find(f, (uint16_t)(f->n - 1), f->n, nm, &rk,
                               &rcol) == 1 ||
                    using_find(f, k, (uint16_t)(k + 1), nm, &li0, &lc0) != 0 ||
                    lc0 != c)
                    continue;
                for (uint16_t i = 0; i < nn; i++)
                    dup = dup || strcmp(names[i], nm) == 0;
                if (!dup)
                    names[nn++] = nm;
            }
    } else {
        if (j->n_using_clause > 64)
            return sql_unsupported(s, -1, "more than 64 USING columns");
        for (size_t i = 0; i < j->n_using_clause; i++) {
            const char *nm = sql_node_string(j->using_clause[i]);
            if (nm == NULL)
                return sql_unsupported(s, -1, "this USING column");
            for (uint16_t k = 0; k < nn; k++)
                if (strcmp(names[k], nm) == 0)
                    return sql_fail(s, KEEL_EINVAL, "42701",
                                    "column name \"%s\" appears more than "
                                    "once in USING clause",
                                    nm);
            names[nn++] = nm;
        }
    }
    if (f->nhidden + nn > 64 || f->nfirst + nn > 64)
        return sql_unsupported(s, -1, "more than 64 USING columns");
    for (uint16_t i = 0; i < nn; i++) {
        uint16_t k = 0, col = 0, rk;
        int lf = using_find(f, lstart, lend, names[i], &k, &col);
        int rf = using_find(f, (uint16_t)(f->n - 1), f->n, names[i], &rk,
                            &rc_[i]);
        if (lf == 1 || rf == 1)
            return sql_fail(s, KEEL_ENOENT, "42703",
                            "column \"%s\" specified in USING clause does not "
                            "exist in %s table",
                            names[i], lf == 1 ? "left" : "right");
        if (lf == 2 || rf == 2)
            return sql_fail(s, KEEL_EINVAL, "42702",
                            "common column name \"%s\" appears more than once "
                            "in %s table",
                            names[i], lf == 2 ? "left" : "right");
        if ((f->items[k].t.alias[0] == '\0' && f->items[k].merge == NULL) ||
            r->t.alias[0] == '\0')
            return sql_unsupported(s, -1, "USING over a parenthesized join");
        li[i] = k;
        lc[i] = col;
    }
    ands = sql_alloc(&s->arena, (nn + 1u) * sizeof(*ands));
    if (ands == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < nn; i++) {
        PgQuery__Node *eq = node_new(s, PG_QUERY__NODE__NODE_A_EXPR);
        PgQuery__AExpr *ae = sql_alloc(&s->arena, sizeof(*ae));
        PgQuery__Node **op = sql_alloc(&s->arena, sizeof(*op));
        if (eq == NULL || ae == NULL || op == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        *ae = (PgQuery__AExpr)PG_QUERY__A__EXPR__INIT;
        ae->kind = PG_QUERY__A__EXPR__KIND__AEXPR_OP;
        op[0] = string_node(s, "=");
        ae->n_name = 1;
        ae->name = op;
        ae->lexpr = column_node(s,
                                f->items[li[i]].merge != NULL
                                    ? f->items[li[i]].rs.col_table[lc[i]]
                                    : f->items[li[i]].t.alias,
                                names[i]);
        ae->rexpr = column_node(s, r->t.alias, names[i]);
        ae->location = -1;
        if (op[0] == NULL || ae->lexpr == NULL || ae->rexpr == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        eq->a_expr = ae;
        ands[i] = eq;
    }
    if (nn == 1) {
        cond = ands[0];
    } else if (nn > 1) {
        PgQuery__BoolExpr *be = sql_alloc(&s->arena, sizeof(*be));
        cond = node_new(s, PG_QUERY__NODE__NODE_BOOL_EXPR);
        if (be == NULL || cond == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        *be = (PgQuery__BoolExpr)PG_QUERY__BOOL_EXPR__INIT;
        be->boolop = PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR;
        be->n_args = nn;
        be->args = ands;
        be->location = -1;
        cond->bool_expr = be;
    }
    r->on = cond;
    if (r->left && r->right)
        return join_merge(s, f, nn, names, li, lc, rc_);
    /* this join's merged columns before those of the joins inside it
     * (a column merged twice shows once) */
    {
        uint16_t w = 0, nf = 0;
        struct {
            uint16_t item, col;
        } order[128];
        for (uint16_t i = 0; i < nn; i++) {
            order[nf].item = r->right ? (uint16_t)(f->n - 1) : li[i];
            order[nf++].col = r->right ? rc_[i] : lc[i];
        }
        for (uint16_t i = 0; i < f->nfirst; i++) {
            bool dup = false;
            for (uint16_t k = 0; k < nn; k++)
                dup = dup || (li[k] == f->first_at[i].item &&
                              lc[k] == f->first_at[i].col);
            if (!dup) {
                order[nf].item = f->first_at[i].item;
                order[nf++].col = f->first_at[i].col;
            }
        }
        for (; w < nf && w < 64; w++) {
            f->first_at[w].item = order[w].item;
            f->first_at[w].col = order[w].col;
        }
        f->nfirst = w;
    }
    /* A RIGHT JOIN's merged column is its right side's. */
    for (uint16_t i = 0; i < nn; i++) {
        f->hidden_at[f->nhidden].item = r->right ? li[i] : (uint16_t)(f->n - 1);
        f->hidden_at[f->nhidden++].col = r->right ? lc[i] : rc_[i];
    }
    return KEEL_OK;
}

/* Marks the item just added as a RIGHT or FULL join's right side. */
static keel_status join_right(sql_session *s, from_list *f, bool right)
{
    from_item *it = &f->items[f->n - 1];

    if (!right)
        return KEEL_OK;
    if (it->lateral && it->func == NULL)
        return sql_unsupported(s, -1, "RIGHT and FULL joins to a LATERAL "
                                      "subquery");
    it->right = true;
    return KEEL_OK;
}

/* Adds a FROM item: a table or view, a subquery, or a join (its left
 * side's items, then its right side: an item, or a parenthesized join
 * read as a subquery). */
static keel_status from_add(sql_session *s, from_list *f, const from_ctx *ctx,
                            PgQuery__Node *n, bool left,
                            const PgQuery__Node *on)
{
    from_item *it;
    int32_t location = -1;
    keel_status rc;

    if (n->node_case == PG_QUERY__NODE__NODE_JOIN_EXPR) {
        const PgQuery__JoinExpr *j = n->join_expr;
        uint16_t lstart = f->n;
        bool jleft = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_LEFT ||
                     j->jointype == PG_QUERY__JOIN_TYPE__JOIN_FULL;
        bool jright = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_RIGHT ||
                      j->jointype == PG_QUERY__JOIN_TYPE__JOIN_FULL;
        if (j->jointype != PG_QUERY__JOIN_TYPE__JOIN_INNER && !jleft &&
            !jright)
            return sql_unsupported(s, -1, "this kind of join");
        if (j->alias != NULL)
            return sql_unsupported(s, -1, "aliases of joins");
        /* A join on the right of another, or a RIGHT or FULL one after
         * other items (whose left side is not everything before it): its
         * rows, read whole. */
        if (left || on != NULL || (jright && f->n > 0)) {
            /* A join on the right of another: its rows, read whole. */
            it = from_new(s, f);
            if (it == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            it->is_rows = true;
            it->t.name = it->t.alias = "";
            it->left = left;
            it->on = on;
            rc = sql_star_select(s, n, &it->sub);
            if (rc == KEEL_OK)
                rc = sql_select_rows(s, it->sub, ctx->outer, ctx->outer_row,
                                     ctx->describe, &it->rs);
            if (rc == KEEL_OK)
                rc = rows_columns(s, it);
            if (rc == KEEL_OK)
                f->n++;
            return rc;
        }
        rc = from_add(s, f, ctx, j->larg, false, NULL);
        if (rc != KEEL_OK)
            return rc;
        if (j->is_natural || j->n_using_clause > 0) {
            uint16_t lend = f->n;
            if (j->rarg->node_case == PG_QUERY__NODE__NODE_JOIN_EXPR)
                return sql_unsupported(s, -1,
                                       "USING with a join on its right");
            rc = from_add(s, f, ctx, j->rarg, jleft, NULL);
            if (rc == KEEL_OK)
                rc = join_right(s, f, jright);
            if (rc == KEEL_OK)
                rc = join_using(s, f, j, lstart, lend);
            return rc;
        }
        rc = from_add(s, f, ctx, j->rarg, jleft, j->quals);
        if (rc == KEEL_OK)
            rc = join_right(s, f, jright);
        return rc;
    }
    if (n->node_case == PG_QUERY__NODE__NODE_RANGE_SUBSELECT) {
        const PgQuery__RangeSubselect *rs = n->range_subselect;
        if (rs->alias == NULL)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "subquery in FROM must have an alias");
        if (rs->subquery == NULL ||
            rs->subquery->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
            return sql_unsupported(s, -1, "this subquery in FROM");
        it = from_new(s, f);
        if (it == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        it->is_rows = true;
        it->sub = rs->subquery->select_stmt;
        it->lateral = rs->lateral;
        it->alias = rs->alias;
        it->t.name = it->t.alias = rs->alias->aliasname;
        it->left = left;
        it->on = on;
        /* A LATERAL subquery is described once the items before it are
         * known (from_lateral()), and runs for each of their rows. */
        if (!it->lateral) {
            rc = sql_select_rows(s, it->sub, ctx->outer, ctx->outer_row,
                                 ctx->describe, &it->rs);
            if (rc == KEEL_OK)
                rc = rows_columns(s, it);
            if (rc != KEEL_OK)
                return rc;
        }
    } else if (n->node_case == PG_QUERY__NODE__NODE_RANGE_VAR) {
        const PgQuery__RangeVar *rv = n->range_var;
        bool pgc = rv->schemaname != NULL &&
                   strcmp(rv->schemaname, "pg_catalog") == 0;
        uint16_t c = s->cte_limit;
        it = from_new(s, f);
        if (it == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        location = rv->location;
        /* A WITH query's name, the innermost first, hides a table's. */
        while (c > 0 && (rv->schemaname == NULL || rv->schemaname[0] == '\0') &&
               strcmp(s->ctes[c - 1]->ctename, rv->relname) != 0)
            c--;
        if (c > 0 && (rv->schemaname == NULL || rv->schemaname[0] == '\0')) {
            rc = from_cte(s, ctx, it, s->ctes[c - 1], c - 1, rv, left, on);
            if (rc != KEEL_OK)
                return rc;
        } else if ((pgc || rv->schemaname == NULL ||
                    rv->schemaname[0] == '\0') &&
                   sql_catalog_is_view(rv->relname)) {
            /* pg_catalog's views come first, as PostgreSQL searches
             * pg_catalog before the path. */
            it->is_rows = true;
            it->t.name = rv->relname;
            it->t.alias = rv->alias != NULL ? rv->alias->aliasname : rv->relname;
            it->alias = rv->alias;
            rc = sql_catalog_view_rows(s, rv->relname, false, &it->rs);
            if (rc == KEEL_OK)
                rc = rows_columns(s, it);
        } else if (rv->schemaname != NULL &&
                   strcmp(rv->schemaname, "information_schema") == 0) {
            char full[KEEL_NAME_LEN + 24];
            if (!sql_catalog_is_info_view(rv->relname))
                return sql_fail_at(s, rv->location, KEEL_ENOENT, "42P01",
                                   "relation \"information_schema.%s\" does "
                                   "not exist",
                                   rv->relname);
            snprintf(full, sizeof(full), "information_schema.%s", rv->relname);
            it->is_rows = true;
            it->t.name = rv->relname;
            it->t.alias = rv->alias != NULL ? rv->alias->aliasname : rv->relname;
            it->alias = rv->alias;
            rc = sql_catalog_view_rows(s, full, false, &it->rs);
            if (rc == KEEL_OK)
                rc = rows_columns(s, it);
        } else if (pgc) {
            char what[128];
            snprintf(what, sizeof(what), "the catalog pg_catalog.%s",
                     rv->relname);
            rc = sql_unsupported(s, rv->location, what);
        } else {
            rc = sql_table_open(s, rv, &it->t);
            /* No table of the name: a view's (sql_view.c). */
            if (rc == KEEL_ENOENT) {
                const PgQuery__SelectStmt *vq = NULL;
                PgQuery__Alias *va = NULL;
                bool vf = false;
                sql_error saved;
                if (s->err != NULL)
                    saved = *s->err;
                rc = sql_view_find(s,
                                   rv->schemaname != NULL &&
                                           rv->schemaname[0] != '\0'
                                       ? rv->schemaname
                                       : NULL,
                                   rv->relname, &vq, &va, &vf);
                if (rc == KEEL_OK && vf)
                    rc = from_query(s, ctx, it, vq, va, 0, rv, left, on);
                else if (rc == KEEL_OK) {
                    rc = KEEL_ENOENT; /* the table's error stands */
                    if (s->err != NULL)
                        *s->err = saved;
                }
                if (rc == KEEL_OK)
                    goto item_done;
            }
            /* A WITH query named after this one, which it cannot see. */
            for (uint16_t k = s->cte_limit; rc == KEEL_ENOENT && s->err &&
                                            k < s->nctes;
                 k++)
                if (strcmp(s->ctes[k]->ctename, rv->relname) == 0) {
                    snprintf(s->err->detail, sizeof(s->err->detail),
                             "There is a WITH item named \"%s\", but it "
                             "cannot be referenced from this part of the "
                             "query.",
                             rv->relname);
                    snprintf(s->err->hint, sizeof(s->err->hint),
                             "Use WITH RECURSIVE, or re-order the WITH items "
                             "to remove forward references.");
                    break;
                }
        }
        if (rc != KEEL_OK)
            return rc;
    item_done:;
    } else if (n->node_case == PG_QUERY__NODE__NODE_RANGE_FUNCTION) {
        const PgQuery__RangeFunction *rf = n->range_function;
        const PgQuery__Node *fn =
            rf->n_functions == 1 &&
                    rf->functions[0]->node_case == PG_QUERY__NODE__NODE_LIST &&
                    rf->functions[0]->list->n_items > 0
                ? rf->functions[0]->list->items[0]
                : NULL;
        const PgQuery__FuncCall *fc =
            fn != NULL && fn->node_case == PG_QUERY__NODE__NODE_FUNC_CALL
                ? fn->func_call
                : NULL;
        const char *fname =
            fc != NULL && fc->n_funcname > 0
                ? sql_node_string(fc->funcname[fc->n_funcname - 1])
                : NULL;
        bool unnest = fname != NULL && (strcmp(fname, "unnest") == 0 ||
                                        strcmp(fname, ANCESTORS) == 0);
        int json_srf = fname != NULL ? sql_json_srf(fname) : 0;
        if (rf->is_rowsfrom || rf->n_coldeflist > 0 ||
            fname == NULL ||
            (strcmp(fname, "generate_series") != 0 && !unnest &&
             json_srf == 0) ||
            (fc->n_funcname == 2 &&
             strcmp(sql_node_string(fc->funcname[0]) != NULL
                        ? sql_node_string(fc->funcname[0])
                        : "",
                    "pg_catalog") != 0))
            return sql_unsupported(s, -1, "functions in FROM but "
                                          "generate_series(), unnest(), "
                                          "pg_partition_ancestors() and "
                                          "the json ones");
        if (json_srf != 0 && fc->n_args != 1)
            return sql_fail(s, KEEL_ENOENT, "42883",
                            "function %s() with %zu argument(s) does not "
                            "exist",
                            fname, fc->n_args);
        if (unnest && fc->n_args != 1)
            return sql_fail(s, KEEL_ENOENT, "42883",
                            "function %s() with %zu argument(s) "
                            "does not exist",
                            fname, fc->n_args);
        if (!unnest && json_srf == 0 && (fc->n_args < 2 || fc->n_args > 3))
            return sql_fail(s, KEEL_ENOENT, "42883",
                            "function generate_series() with %zu argument(s) "
                            "does not exist",
                            fc->n_args);
        it = from_new(s, f);
        if (it == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        it->is_rows = true;
        it->lateral = true;
        it->func = fc;
        it->unnest = unnest;
        it->json_srf = json_srf;
        it->ordinality = rf->ordinality;
        it->alias = rf->alias;
        it->t.name = it->t.alias =
            rf->alias != NULL ? rf->alias->aliasname : fname;
    } else {
        return sql_unsupported(s, -1, "this kind of FROM item");
    }
    for (uint16_t k = 0; k < f->n; k++)
        if (strcmp(f->items[k].t.alias, it->t.alias) == 0 && it->t.alias[0])
            return sql_fail_at(s, location, KEEL_EINVAL, "42712",
                            "table name \"%s\" specified more than once",
                            it->t.alias);
    it->left = left;
    it->on = on;
    f->n++;
    return KEEL_OK;
}

/*
 * Builds the joined row's columns for items [0, upto), after the
 * enclosing query's (outer, if any), and the scope over them.
 */
static keel_status from_scope_upto(sql_session *s, from_list *f, uint16_t upto,
                                   const sql_scope *outer, sql_scope *sc)
{
    uint16_t nouter = outer != NULL ? outer->ncols : 0;
    uint16_t total = nouter, ntab = 0, cap_tab;

    for (uint16_t k = 0; k < upto; k++) {
        f->items[k].off = total;
        if (total + f->items[k].t.info.ncols > 1664)
            return sql_fail(s, KEEL_ETOOBIG, "54000",
                            "joins can have at most 1664 columns");
        total = (uint16_t)(total + f->items[k].t.info.ncols);
    }
    cap_tab = (uint16_t)(total + upto + (outer != NULL ? outer->ntables + 1 : 0));
    f->cols = sql_alloc(&s->arena, (total + 1u) * sizeof(*f->cols));
    f->col_table = sql_alloc(&s->arena, (total + 1u) * sizeof(char *));
    f->types = sql_alloc(&s->arena, (total + 1u) * sizeof(uint32_t));
    f->tables = sql_alloc(&s->arena, (cap_tab + 1u) * sizeof(char *));
    if (f->cols == NULL || f->col_table == NULL || f->types == NULL ||
        f->tables == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t c = 0; c < nouter; c++) {
        f->cols[c] = outer->cols[c];
        f->col_table[c] = sql_scope_table_of(outer, c);
        f->types[c] = sql_scope_type(outer, c);
    }
    if (outer != NULL && outer->tables != NULL)
        for (uint16_t t = 0; t < outer->ntables; t++)
            f->tables[ntab++] = outer->tables[t];
    else if (outer != NULL && outer->table != NULL && outer->table[0] != '\0')
        f->tables[ntab++] = outer->table;
    for (uint16_t k = 0; k < upto; k++) {
        const from_item *it = &f->items[k];
        if (it->t.alias[0] != '\0')
            f->tables[ntab++] = it->t.alias;
        for (uint16_t c = 0; c < it->t.info.ncols; c++) {
            uint16_t at = (uint16_t)(it->off + c);
            f->cols[at] = it->t.cols[c];
            if (it->is_rows) {
                f->types[at] = it->rs.types[c];
                f->col_table[at] = it->rs.col_table != NULL &&
                                           it->rs.col_table[c] != NULL
                                       ? it->rs.col_table[c]
                                       : it->t.alias;
            } else {
                f->types[at] = sql_column_type(&it->t.cols[c]);
                f->col_table[at] = it->t.alias;
            }
            if (f->col_table[at] != it->t.alias) {
                bool seen = false;
                for (uint16_t t = 0; t < ntab && !seen; t++)
                    seen = strcmp(f->tables[t], f->col_table[at]) == 0;
                if (!seen)
                    f->tables[ntab++] = f->col_table[at];
            }
        }
    }
    f->ncols = total;
    *sc = (sql_scope){.table = upto == 1 && nouter == 0 ? f->items[0].t.alias : "",
                      .cols = f->cols, .ncols = total,
                      .col_table = f->col_table, .tables = f->tables,
                      .ntables = ntab, .types = f->types, .nouter = nouter};
    {
        /* one-column functions' aliases, the enclosing query's too */
        uint16_t cap = (uint16_t)(upto + (outer != NULL ? outer->nscalar : 0));
        f->scalar_alias = sql_alloc(&s->arena, (cap + 1u) * sizeof(char *));
        f->scalar_col = sql_alloc(&s->arena, (cap + 1u) * sizeof(uint16_t));
        if (f->scalar_alias == NULL || f->scalar_col == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint16_t k = 0; outer != NULL && k < outer->nscalar; k++) {
            f->scalar_alias[sc->nscalar] = outer->scalar_alias[k];
            f->scalar_col[sc->nscalar++] = outer->scalar_col[k];
        }
        for (uint16_t k = 0; k < upto; k++)
            if (f->items[k].func != NULL && f->items[k].t.info.ncols == 1 &&
                f->items[k].t.alias[0] != '\0') {
                f->scalar_alias[sc->nscalar] = f->items[k].t.alias;
                f->scalar_col[sc->nscalar++] = f->items[k].off;
            }
        sc->scalar_alias = f->scalar_alias;
        sc->scalar_col = f->scalar_col;
    }
    if (f->nhidden > 0 || f->nfirst > 0) {
        f->hidden = sql_alloc(&s->arena, (f->nhidden + 1u) * sizeof(uint16_t));
        f->first = sql_alloc(&s->arena, (f->nfirst + 1u) * sizeof(uint16_t));
        if (f->hidden == NULL || f->first == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint16_t h = 0; h < f->nhidden; h++)
            if (f->hidden_at[h].item < upto)
                f->hidden[sc->nhidden++] =
                    (uint16_t)(f->items[f->hidden_at[h].item].off +
                               f->hidden_at[h].col);
        for (uint16_t h = 0; h < f->nfirst; h++)
            if (f->first_at[h].item < upto)
                f->first[sc->nfirst++] =
                    (uint16_t)(f->items[f->first_at[h].item].off +
                               f->first_at[h].col);
        sc->hidden = f->hidden;
        sc->first = f->first;
    }
    return KEEL_OK;
}

/*
 * generate_series()'s type from its arguments (analysed), as PostgreSQL
 * picks among its forms: integer, bigint or numeric from start, stop
 * and step; timestamp, or timestamp with time zone (a date's), from
 * start and stop with an interval step.  The arguments are cast to it,
 * and for all but the integers args[3] is made the expression of the
 * next value: column 0 (the value) + column 1 (the step).
 */
static keel_status series_type(sql_session *s, const PgQuery__FuncCall *fc,
                               sql_expr **args, uint32_t *type)
{
    bool ts = false, tz = false, num = false, i8 = false;
    uint16_t n = (uint16_t)fc->n_args;
    sql_expr call = {.nargs = n, .args = args}, *c0, *c1;
    keel_status rc = KEEL_OK;

    for (uint16_t a = 0; a < n; a++) {
        uint32_t t = args[a]->type;
        if (t == SQL_TYPE_TIMESTAMP && a < 2)
            ts = true;
        else if ((t == SQL_TYPE_TIMESTAMPTZ || t == SQL_TYPE_DATE) && a < 2)
            tz = true;
        else if (t == SQL_TYPE_NUMERIC)
            num = true;
        else if (t == SQL_TYPE_INT8)
            i8 = true;
        else if (!(t == SQL_TYPE_INT2 || t == SQL_TYPE_INT4 ||
                   t == SQL_TYPE_UNKNOWN || (t == SQL_TYPE_INTERVAL && a == 2)))
            return sql_no_such_function(s, fc->location, "generate_series",
                                        &call);
    }
    *type = ts || tz ? (tz ? SQL_TYPE_TIMESTAMPTZ : SQL_TYPE_TIMESTAMP)
            : num    ? SQL_TYPE_NUMERIC
            : i8     ? SQL_TYPE_INT8
                     : SQL_TYPE_INT4;
    if ((ts || tz) && (n != 3 || (args[2]->type != SQL_TYPE_INTERVAL &&
                                  args[2]->type != SQL_TYPE_UNKNOWN)))
        return sql_no_such_function(s, fc->location, "generate_series", &call);
    if (*type == SQL_TYPE_INT4 || *type == SQL_TYPE_INT8)
        return KEEL_OK;
    for (uint16_t a = 0; rc == KEEL_OK && a < n; a++)
        if (args[a]->type != (a == 2 && (ts || tz) ? SQL_TYPE_INTERVAL : *type))
            rc = sql_expr_coerce(s, &args[a],
                                 a == 2 && (ts || tz) ? SQL_TYPE_INTERVAL
                                                      : *type);
    if (rc != KEEL_OK)
        return rc;
    c0 = sql_expr_new(s, SQL_EXPR_COLUMN, *type, fc->location, 0);
    c1 = sql_expr_new(s, SQL_EXPR_COLUMN,
                      ts || tz ? SQL_TYPE_INTERVAL : *type, fc->location, 0);
    args[3] = sql_expr_new(s, SQL_EXPR_OP, *type, fc->location, 2);
    if (c0 == NULL || c1 == NULL || args[3] == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    c1->u.column = 1;
    args[3]->u.op = SQL_OP_ADD;
    args[3]->args[0] = c0;
    args[3]->args[1] = c1;
    return KEEL_OK;
}

/* Whether fc calls pg_partition_ancestors() (which runs as unnest()). */
static bool is_ancestors(const PgQuery__FuncCall *fc)
{
    const char *n = fc->n_funcname > 0
                        ? sql_node_string(fc->funcname[fc->n_funcname - 1])
                        : NULL;

    return n != NULL && strcmp(n, ANCESTORS) == 0;
}

/*
 * A set-returning function's arguments (args, four slots) analysed over
 * scope, and the columns of its rows (rs's), the one of a function of
 * one named `name`: generate_series()'s integer, or bigint if an
 * argument is; unnest()'s its array's element type; a json function's
 * what sql_json_srf_columns() says.
 */
static keel_status srf_columns(sql_session *s, const sql_scope *scope,
                               const PgQuery__FuncCall *fc, bool unnest,
                               int json_srf, sql_expr **args,
                               const char *name, sql_rowset *rs)
{
    uint32_t type = SQL_TYPE_INT4;
    keel_status rc;

    for (size_t a = 0; a < fc->n_args; a++) {
        uint32_t t;
        rc = sql_expr_prepare(s, scope, fc->args[a], &args[a]);
        if (rc != KEEL_OK)
            return rc;
        if (json_srf != 0)
            return sql_json_srf_columns(s, json_srf, &args[a], fc->location,
                                        name, rs);
        if (unnest && is_ancestors(fc)) {
            /* pg_partition_ancestors(regclass): PostgreSQL's gives rows
             * for partitions and partitioned tables only, and keel has
             * none: no rows, as unnest() of an empty array gives (its
             * column PostgreSQL's relid, an oid here) */
            sql_expr *none = sql_expr_new(s, SQL_EXPR_CONST,
                                          SQL_TYPE_OID_ARRAY, fc->location, 0);
            if (none == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            rc = sql_regclass_arg(s, ANCESTORS, fc->location, &args[a]);
            if (rc != KEEL_OK)
                return rc;
            none->u.value.type = SQL_TYPE_OID_ARRAY;
            none->u.value.v.s.p = "{}";
            none->u.value.v.s.len = 2;
            args[a] = none;
            name = "relid";
        }
        t = args[a]->type;
        if (unnest) {
            /* Its one column: the array's elements. */
            type = sql_type_elem(t);
            if (type == 0) {
                sql_expr call = {.nargs = 1, .args = args};
                return sql_no_such_function(s, fc->location, "unnest", &call);
            }
        }
    }
    if (!unnest) {
        rc = series_type(s, fc, args, &type);
        if (rc != KEEL_OK)
            return rc;
    }
    rs->ncols = 1;
    rs->cols = sql_alloc(&s->arena, sizeof(*rs->cols));
    rs->types = sql_alloc(&s->arena, sizeof(uint32_t));
    if (rs->cols == NULL || rs->types == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(rs->cols, 0, sizeof(*rs->cols));
    snprintf(rs->cols[0].name, sizeof(rs->cols[0].name), "%s", name);
    rs->cols[0].type = KEEL_INT8;
    rs->types[0] = type;
    rs->col_table = NULL;
    return KEEL_OK;
}

/* generate_series()'s arguments analysed over the items before it, and
 * its columns: one, named after its alias, as in PostgreSQL, else after
 * the function. */
static keel_status series_columns(sql_session *s, from_item *it)
{
    sql_rowset *rs = &it->rs;
    keel_column_info *cols;
    uint32_t *types;
    keel_status rc = srf_columns(s, &it->lscope, it->func, it->unnest,
                                 it->json_srf, it->fargs, it->t.alias, rs);

    if (rc != KEEL_OK || !it->ordinality)
        return rc;
    /* WITH ORDINALITY: a bigint after the function's columns */
    cols = sql_alloc(&s->arena, (rs->ncols + 1u) * sizeof(*cols));
    types = sql_alloc(&s->arena, (rs->ncols + 1u) * sizeof(*types));
    if (cols == NULL || types == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(cols, rs->cols, rs->ncols * sizeof(*cols));
    memcpy(types, rs->types, rs->ncols * sizeof(*types));
    memset(&cols[rs->ncols], 0, sizeof(*cols));
    snprintf(cols[rs->ncols].name, sizeof(cols[rs->ncols].name), "ordinality");
    cols[rs->ncols].type = KEEL_INT8;
    types[rs->ncols] = SQL_TYPE_INT8;
    rs->cols = cols;
    rs->types = types;
    rs->ncols++;
    return KEEL_OK;
}

/* unnest()'s rows for row: one per element of the array (none for
 * NULL), in order. */
static keel_status unnest_rows(sql_session *s, const sql_expr *arg,
                               const sql_value *row, sql_rowset *rs)
{
    sql_value arr = {0};
    const char *el;
    uint32_t pos = 0, elen;
    bool isnull;
    keel_status rc = sql_expr_eval(s, arg, row, &arr);

    if (rc != KEEL_OK || arr.isnull)
        return rc;
    while (sql_array_next(s, arr.v.s.p, arr.v.s.len, &pos, &el, &elen,
                          &isnull)) {
        sql_value x = {.type = SQL_TYPE_UNKNOWN, .isnull = isnull,
                       .v.s = {el, elen}};
        rc = sql_check_cancel(s);
        if (rc == KEEL_OK && !isnull)
            rc = sql_value_cast(s, &x, rs->types[0], -1, true, -1);
        x.type = rs->types[0];
        if (rc == KEEL_OK)
            rc = sql_rowset_add(s, rs, &x);
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

/* generate_series() of numeric or timestamps: start (v[0]), then each
 * value plus the step (v[2], else 1) while not past stop (v[1]);
 * next computes a value plus the step (series_type()). */
static keel_status series_step_rows(sql_session *s, const sql_expr *next,
                                    const sql_value *v, bool has_step,
                                    sql_rowset *rs)
{
    sql_value pair[2] = {v[0], v[2]}, cur = v[0];
    int dir;
    keel_status rc = KEEL_OK;

    if (!has_step) {
        pair[1] = (sql_value){.type = SQL_TYPE_INT8, .v.i = 1};
        rc = sql_value_cast(s, &pair[1], SQL_TYPE_NUMERIC, -1, true, -1);
    }
    /* the step's sign: where it takes start */
    if (rc == KEEL_OK)
        rc = sql_expr_eval(s, next, pair, &cur);
    if (rc != KEEL_OK)
        return rc;
    dir = sql_value_compare(&cur, &v[0]);
    if (dir == 0)
        return sql_fail(s, KEEL_EINVAL, "22023", "step size cannot equal zero");
    cur = v[0];
    while (dir > 0 ? sql_value_compare(&cur, &v[1]) <= 0
                   : sql_value_compare(&cur, &v[1]) >= 0) {
        rc = sql_check_cancel(s);
        if (rc == KEEL_OK)
            rc = sql_rowset_add(s, rs, &cur);
        pair[0] = cur;
        if (rc == KEEL_OK)
            rc = sql_expr_eval(s, next, pair, &cur);
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

/* generate_series()'s arguments' values for row (v[2] 1 without a step),
 * integers as bigint: 22023 for a step of 0, *empty when one is NULL. */
static keel_status series_args(sql_session *s, sql_expr *const *args,
                               const sql_value *row, sql_value *v, bool *empty)
{
    keel_status rc;

    *empty = false;
    v[2] = (sql_value){.type = SQL_TYPE_INT8, .v.i = 1};
    for (uint16_t a = 0; a < 3 && args[a] != NULL; a++) {
        rc = sql_expr_eval(s, args[a], row, &v[a]);
        if (rc == KEEL_OK && !v[a].isnull && args[3] == NULL)
            rc = sql_value_cast(s, &v[a], SQL_TYPE_INT8, -1, true, -1);
        if (rc != KEEL_OK)
            return rc;
        if (v[a].isnull) {
            *empty = true;
            return KEEL_OK;
        }
    }
    if (args[3] == NULL && v[2].v.i == 0)
        return sql_fail(s, KEEL_EINVAL, "22023", "step size cannot equal zero");
    return KEEL_OK;
}

/* A set-returning function's rows for row (in place of rs's): args are
 * srf_columns()'s. */
static keel_status srf_rows(sql_session *s, bool unnest, int json_srf,
                            sql_expr *const *args, const sql_value *row,
                            sql_rowset *rs)
{
    sql_value v[3] = {{0}, {0}, {0}};
    int64_t step = 1;
    bool empty;
    keel_status rc;

    rs->n = 0;
    if (unnest)
        return unnest_rows(s, args[0], row, rs);
    if (json_srf != 0) {
        sql_value arg;
        rc = sql_expr_eval(s, args[0], row, &arg);
        return rc == KEEL_OK ? sql_json_srf_rows(s, json_srf, &arg, rs) : rc;
    }
    rc = series_args(s, args, row, v, &empty);
    if (rc != KEEL_OK || empty)
        return rc;
    if (args[3] != NULL)
        return series_step_rows(s, args[3], v, args[2] != NULL, rs);
    if (args[2] != NULL)
        step = v[2].v.i;
    for (int64_t i = v[0].v.i; step > 0 ? i <= v[1].v.i : i >= v[1].v.i;) {
        sql_value x = {.type = rs->types[0], .v.i = i};
        rc = sql_check_cancel(s);
        if (rc == KEEL_OK)
            rc = sql_rowset_add(s, rs, &x);
        if (rc != KEEL_OK)
            return rc;
        if (__builtin_add_overflow(i, step, &i))
            break;
    }
    return KEEL_OK;
}

/* A function in FROM: its rows for the row before it (WITH ORDINALITY:
 * each numbered from 1 in its last column). */
static keel_status series_rows(sql_session *s, from_item *it,
                               const sql_value *row)
{
    sql_rowset *rs = &it->rs;
    sql_value *wide;
    uint16_t n;
    keel_status rc;

    if (!it->ordinality)
        return srf_rows(s, it->unnest, it->json_srf, it->fargs, row, rs);
    n = --rs->ncols;
    rc = srf_rows(s, it->unnest, it->json_srf, it->fargs, row, rs);
    rs->ncols++;
    if (rc != KEEL_OK)
        return rc;
    wide = sql_alloc(&s->arena, (rs->n + 1) * rs->ncols * sizeof(*wide));
    if (wide == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (size_t r = 0; r < rs->n; r++) {
        memcpy(&wide[r * rs->ncols], &rs->vals[r * n], n * sizeof(*wide));
        wide[r * rs->ncols + n] =
            (sql_value){.type = SQL_TYPE_INT8, .v.i = (int64_t)r + 1};
    }
    rs->vals = wide;
    rs->cap = rs->n;
    return KEEL_OK;
}

/* ---- set-returning functions in an output list ---------------------------- */

bool sql_srf_name(const char *name)
{
    return strcmp(name, "generate_series") == 0 ||
           strcmp(name, "unnest") == 0 || strcmp(name, ANCESTORS) == 0 ||
           sql_json_srf(name) != 0;
}

keel_status sql_srf_none_since(sql_session *s, uint16_t n0, const char *what)
{
    keel_status rc;

    if (sql_srf_count(s) <= n0)
        return KEEL_OK;
    rc = sql_fail_at(s, s->srfs->v[n0]->expr->location, KEEL_EINVAL, "0A000",
                     strstr(what, "calls") != NULL
                         ? "%s cannot contain set-returning function calls"
                         : "set-returning functions are not allowed in %s",
                     what);
    if (s->err != NULL)
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "You might be able to move the set-returning function into "
                 "a LATERAL FROM item.");
    return rc;
}

keel_status sql_srf_analyse(sql_session *s, const sql_scope *scope,
                            const PgQuery__FuncCall *fc, const char *name,
                            sql_expr **out)
{
    sql_srf_list *l = s->srfs;
    sql_srf *f;
    sql_expr *e;
    keel_status rc;

    /* PostgreSQL groups by one's rows */
    if (l == NULL && s->clause != NULL && strcmp(s->clause, "GROUP BY") == 0)
        return sql_unsupported(s, fc->location,
                               "set-returning functions in GROUP BY");
    if (s->clause != NULL) /* not NULL in FILTER of an output list's */
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "0A000",
                           "set-returning functions are not allowed in %s",
                           s->clause);
    if (l == NULL || l->inside != NULL)
        return sql_unsupported(s, fc->location,
                               l != NULL ? l->inside
                                         : "set-returning functions outside "
                                           "a SELECT's output list");
    f = sql_alloc(&s->arena, sizeof(*f));
    e = sql_expr_new(s, SQL_EXPR_SRF, SQL_TYPE_UNKNOWN, fc->location,
                     (uint16_t)fc->n_args);
    if (f == NULL || e == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(f, 0, sizeof(*f));
    /* srf_columns()'s four slots: srf_rows() reads the arguments up to
     * the first NULL of three */
    e->args = sql_alloc(&s->arena, (4u + fc->n_args) * sizeof(*e->args));
    if (e->args == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(e->args, 0, (4u + fc->n_args) * sizeof(*e->args));
    f->expr = e;
    f->unnest = strcmp(name, "unnest") == 0 || strcmp(name, ANCESTORS) == 0;
    f->json_srf = sql_json_srf(name);
    if (f->unnest || f->json_srf != 0 ? fc->n_args != 1
                                      : fc->n_args < 2 || fc->n_args > 3) {
        /* (unnest() of several arrays is FROM's only) */
        for (uint16_t a = 0; a < e->nargs; a++) {
            rc = sql_expr_analyse(s, scope, fc->args[a], &e->args[a]);
            if (rc != KEEL_OK)
                return rc;
        }
        return sql_no_such_function(s, fc->location, name, e);
    }
    l->inside = "set-returning functions in another's arguments";
    rc = srf_columns(s, scope, fc, f->unnest, f->json_srf, e->args, name,
                     &f->rs);
    l->inside = NULL;
    if (rc != KEEL_OK)
        return rc;
    if (f->rs.ncols != 1)
        return sql_unsupported(s, fc->location,
                               "set-returning functions of records in an "
                               "output list");
    e->type = f->rs.types[0];
    e->u.srf = f;
    if (l->n == l->cap) {
        uint16_t cap = l->cap == 0 ? 4 : (uint16_t)(l->cap * 2);
        sql_srf **nv = sql_alloc(&s->arena, cap * sizeof(*nv));
        if (nv == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (l->n > 0)
            memcpy(nv, l->v, l->n * sizeof(*nv));
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = f;
    *out = e;
    return KEEL_OK;
}

/* Describes each LATERAL subquery against the items before it. */
static keel_status from_lateral(sql_session *s, from_list *f,
                                const sql_scope *outer)
{
    keel_status rc;

    for (uint16_t k = 0; k < f->n; k++) {
        from_item *it = &f->items[k];
        if (!it->lateral)
            continue;
        rc = from_scope_upto(s, f, k, outer, &it->lscope);
        if (rc == KEEL_OK && it->func != NULL)
            rc = series_columns(s, it);
        else if (rc == KEEL_OK)
            rc = sql_select_rows(s, it->sub, &it->lscope, NULL, true, &it->rs);
        /* a RIGHT or FULL join's function runs once (right_build()) */
        for (uint16_t a = 0; rc == KEEL_OK && it->right && it->func != NULL &&
                             a < 3 && it->fargs[a] != NULL;
             a++)
            if (reads_columns_from(it->fargs[a], f->items[0].off))
                rc = sql_fail(s, KEEL_EINVAL, "42P10",
                              "invalid reference to FROM-clause entry in the "
                              "arguments of %s()",
                              it->unnest ? "unnest"
                              : it->json_srf != 0
                                  ? sql_node_string(
                                        it->func->funcname[it->func->n_funcname -
                                                           1])
                                  : "generate_series");
        if (rc == KEEL_OK)
            rc = rows_columns(s, it);
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

/* The FROM item column i of the joined row belongs to (NULL for the
 * enclosing query's). */
static const from_item *from_item_of(const from_list *f, uint16_t i)
{
    for (uint16_t k = f->n; k-- > 0;)
        if (i >= f->items[k].off)
            return &f->items[k];
    return NULL;
}

/* Adds key e (over the input row) to g; a plain column once. */
static keel_status group_key_add(sql_session *s, sql_grouping *g, sql_expr *e,
                                 uint16_t *cols, int16_t *slot)
{
    if (e->kind == SQL_EXPR_COLUMN && g->key_slot[e->u.column] >= 0) {
        *slot = g->key_slot[e->u.column];
        return KEEL_OK;
    }
    if (g->nkeys >= 1664)
        return sql_fail(s, KEEL_ETOOBIG, "54000", "too many GROUP BY items");
    for (uint16_t k = 0; e->kind != SQL_EXPR_COLUMN && k < g->nkeys; k++)
        if (sql_expr_same(g->key_exprs[k], e)) {
            *slot = (int16_t)k;
            return KEEL_OK;
        }
    g->key_exprs[g->nkeys] = e;
    cols[g->nkeys] = e->kind == SQL_EXPR_COLUMN ? e->u.column : UINT16_MAX;
    if (e->kind == SQL_EXPR_COLUMN)
        g->key_slot[e->u.column] = (int16_t)g->nkeys;
    else
        g->nexprkeys++;
    *slot = (int16_t)g->nkeys++;
    return KEEL_OK;
}

/*
 * Resolves GROUP BY's items as PostgreSQL does: a position names an
 * output column, whatever its expression; a name is an input column's,
 * else an output column's; any other expression is one over the input
 * row, which the output, HAVING and ORDER BY may use whole
 * (group_expr_key()).  A table whose primary key is grouped by gives its
 * other columns as keys too: they depend on it, as PostgreSQL allows.
 */
static keel_status group_keys(sql_session *s, const PgQuery__SelectStmt *st,
                              const sql_scope *plain, const from_list *from,
                              sql_grouping *g, uint16_t *cols)
{
    g->key_exprs = sql_alloc(&s->arena, (st->n_group_clause + plain->ncols + 1) *
                                            sizeof(sql_expr *));
    g->target_key = sql_alloc(&s->arena, (st->n_target_list + 1) * sizeof(int16_t));
    if (g->key_exprs == NULL || g->target_key == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t c = 0; c < plain->ncols; c++)
        g->key_slot[c] = -1;
    for (size_t i = 0; i < st->n_target_list; i++)
        g->target_key[i] = -1;
    for (size_t i = 0; i < st->n_group_clause; i++) {
        const PgQuery__Node *n = st->group_clause[i];
        int32_t tpos = -1;
        sql_expr *e;
        int16_t slot = -1;
        keel_status rc;
        if (n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
            n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
            int32_t pos = n->a_const->ival->ival;
            if (pos < 1 || (size_t)pos > st->n_target_list)
                return sql_fail_at(s, n->a_const->location, KEEL_EINVAL, "42P10",
                                   "GROUP BY position %d is not in select list",
                                   pos);
            tpos = pos - 1;
        } else if (n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
                   n->column_ref->n_fields == 1) {
            /* An input column's name first, then an output column's. */
            const char *name = sql_node_string(n->column_ref->fields[0]);
            bool input = false;
            for (uint16_t c = 0; name != NULL && c < plain->ncols && !input; c++)
                input = strcmp(plain->cols[c].name, name) == 0;
            for (size_t t = 0; name != NULL && !input && t < st->n_target_list; t++) {
                const PgQuery__ResTarget *rt = st->target_list[t]->res_target;
                if (rt->name != NULL && strcmp(rt->name, name) == 0)
                    tpos = (int32_t)t;
            }
        }
        if (tpos >= 0)
            n = st->target_list[tpos]->res_target->val;
        if (n == NULL)
            return sql_unsupported(s, -1, "this GROUP BY item");
        rc = sql_expr_prepare(s, plain, n, &e);
        if (rc == KEEL_OK && e->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &e, SQL_TYPE_TEXT);
        if (rc == KEEL_OK)
            rc = group_key_add(s, g, e, cols, &slot);
        if (rc != KEEL_OK)
            return rc;
        if (tpos >= 0)
            g->target_key[tpos] = slot;
    }
    /* Functional dependence on a grouped primary key. */
    for (uint16_t k = 0; k < from->n; k++) {
        const from_item *it = &from->items[k];
        bool whole = it->t.info.npkey > 0 && !it->is_rows;
        for (uint16_t j = 0; whole && j < it->t.info.npkey; j++)
            whole = g->key_slot[it->off + it->t.info.pkey[j] - 1] >= 0;
        for (uint16_t c = 0; whole && c < it->t.info.ncols; c++) {
            uint16_t col = (uint16_t)(it->off + c);
            sql_expr *e;
            int16_t slot;
            keel_status rc;
            if (g->key_slot[col] >= 0)
                continue;
            e = sql_alloc(&s->arena, sizeof(*e));
            if (e == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            memset(e, 0, sizeof(*e));
            e->kind = SQL_EXPR_COLUMN;
            e->type = sql_scope_type(plain, col);
            e->u.column = col;
            rc = group_key_add(s, g, e, cols, &slot);
            if (rc != KEEL_OK)
                return rc;
        }
    }
    return KEEL_OK;
}

/* ---- SELECT ------------------------------------------------------------- */

/* The expression a sort item n stands for: ORDER BY 2 the second output
 * column, ORDER BY name an output column's name first, then the table's
 * (what), as PostgreSQL's SQL-92 rules read ORDER BY and DISTINCT ON. */
static keel_status sort_item(sql_session *s, const PgQuery__Node *n,
                             int32_t location, const char *what,
                             const sql_scope *sp, output *o, sql_expr **out)
{
    keel_status rc;

    if (n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
        int32_t pos = n->a_const->ival->ival;
        if (pos < 1 || pos > o->nt)
            return sql_fail_at(s, n->a_const->location, KEEL_EINVAL, "42P10",
                               "%s position %d is not in select list", what,
                               pos);
        *out = o->tl[pos - 1].expr;
        return KEEL_OK;
    }
    *out = NULL;
    if (n->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
        n->column_ref->n_fields == 1) {
        const char *name = sql_node_string(n->column_ref->fields[0]);
        for (uint16_t j = 0; name != NULL && j < o->nt; j++) {
            if (strcmp(o->tl[j].name, name) != 0)
                continue;
            /* two output columns of the name computing different things */
            if (*out != NULL && !sql_expr_same(*out, o->tl[j].expr))
                return sql_fail_at(s, n->column_ref->location, KEEL_EINVAL,
                                   "42702", "%s \"%s\" is ambiguous", what,
                                   name);
            if (*out == NULL)
                *out = o->tl[j].expr;
        }
        if (*out != NULL)
            return KEEL_OK;
    }
    if (o->distinct && o->ndistinct_on == 0)
        return sql_fail_at(s, location, KEEL_EINVAL, "42P10",
                           "for SELECT DISTINCT, ORDER BY expressions "
                           "must appear in select list");
    rc = sql_expr_prepare(s, sp, n, out);
    if (rc == KEEL_OK && (*out)->type == SQL_TYPE_UNKNOWN)
        (*out)->type = SQL_TYPE_TEXT;
    return rc;
}

static keel_status order_by(sql_session *s, const PgQuery__SelectStmt *st,
                            const sql_scope *sp, output *o)
{
    keel_status rc;

    o->keys = sql_alloc(&s->arena, (st->n_sort_clause + o->ndistinct_on + 1) *
                                       sizeof(*o->keys));
    if (o->keys == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (size_t i = 0; i < st->n_sort_clause; i++) {
        const PgQuery__SortBy *sb = st->sort_clause[i]->sort_by;
        sort_key *k = &o->keys[o->nkeys++];
        if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
            return sql_unsupported(s, sb->location, "ORDER BY ... USING");
        k->desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
        k->nulls_first =
            sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
            (sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
             k->desc);
        rc = sort_item(s, sb->node, sb->location, "ORDER BY", sp, o, &k->expr);
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

/*
 * DISTINCT ON (exprs): the first row of each run of equal values, in
 * the sort: ORDER BY's first items must be those expressions (in any
 * order), as PostgreSQL requires; those it lacks sort after its own.
 */
static keel_status distinct_on(sql_session *s, const PgQuery__SelectStmt *st,
                               const sql_scope *sp, output *o)
{
    uint16_t n = (uint16_t)st->n_distinct_clause, had, matched = 0;
    sql_expr **on = sql_alloc(&s->arena, (n + 1u) * sizeof(*on));
    bool skipped = false;
    keel_status rc;

    if (on == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < n; i++) {
        rc = sort_item(s, st->distinct_clause[i], -1, "DISTINCT ON", sp, o,
                       &on[i]);
        if (rc != KEEL_OK)
            return rc;
    }
    /* PostgreSQL's reading: ORDER BY's items that are among them, up to
     * the first that is not; each of them missing there is added after,
     * unless ORDER BY went on past one that is not. */
    had = o->nkeys;
    for (uint16_t k = 0; k < had; k++) {
        uint16_t i = 0, j = 0;
        while (j < k && !sql_expr_same(o->keys[k].expr, o->keys[j].expr))
            j++;
        if (j < k)
            continue; /* a repeat sorts nothing more */
        while (i < n && !sql_expr_same(o->keys[k].expr, on[i]))
            i++;
        if (i == n)
            skipped = true;
        else if (skipped)
            return sql_fail_at(s, node_location(st->distinct_clause[i]),
                               KEEL_EINVAL, "42P10",
                               "SELECT DISTINCT ON expressions must match "
                               "initial ORDER BY expressions");
        else
            matched = (uint16_t)(k + 1);
    }
    for (uint16_t i = 0; i < n; i++) {
        uint16_t k = 0;
        while (k < o->nkeys && !sql_expr_same(o->keys[k].expr, on[i]))
            k++;
        if (k < matched || (k < o->nkeys && k >= had))
            continue;
        if (skipped)
            return sql_fail_at(s, node_location(st->distinct_clause[i]),
                               KEEL_EINVAL, "42P10",
                               "SELECT DISTINCT ON expressions must match "
                               "initial ORDER BY expressions");
        o->keys[o->nkeys++] = (sort_key){.expr = on[i]};
    }
    o->ndistinct_on = skipped ? matched : o->nkeys;
    return KEEL_OK;
}

/* What the join loop feeds: the output stage, or grouping's inputs. */
typedef struct select_run {
    from_list *from;
    sql_expr *where;
    const sql_expr *conds[2]; /* an item's ON, then WHERE: its bounds */
    sql_value *row;           /* the joined row */
    output *o;
    sql_grouping *g;          /* grouping, or NULL */
    uint16_t *gcols;
    group_input *gin;
    size_t ngin, capgin;
    /* Aggregates without GROUP BY or DISTINCT: folded as rows come, into
     * one state each (malloc'd: __int128 wants its alignment). */
    bool fold;
    sql_value *fstate;
    sql_agg_acc *facc;
    int64_t *fcount;
    /* Expressions read the engine (pg_table_is_visible()): no scan may
     * stay open while they run, so every level is read first. */
    bool materialize;
} select_run;

/* Whether aggregate a's FILTER (if any) lets row in. */
static keel_status agg_filter(sql_session *s, const sql_agg *a,
                              const sql_value *row, bool *pass)
{
    sql_value f;
    keel_status rc;

    *pass = true;
    if (a->filter == NULL)
        return KEEL_OK;
    rc = sql_expr_eval(s, a->filter, row, &f);
    *pass = rc == KEEL_OK && !f.isnull && f.v.b;
    return rc;
}

/* A joined row that passed WHERE: to the output, or kept for grouping. */
static keel_status select_emit(sql_session *s, select_run *r)
{
    sql_grouping *g = r->g;
    sql_value *vals;
    keel_status rc = KEEL_OK;

    if (g == NULL)
        return output_row(s, r->o, r->row);
    if (r->fold) {
        for (uint16_t a = 0; rc == KEEL_OK && a < g->naggs; a++) {
            sql_value v = {0}, *st = &r->fstate[a];
            bool pass = true;
            rc = agg_filter(s, &g->aggs[a], r->row, &pass);
            if (rc != KEEL_OK || !pass)
                continue;
            if (g->aggs[a].arg != NULL)
                rc = sql_expr_eval(s, g->aggs[a].arg, r->row, &v);
            if (rc == KEEL_OK)
                rc = sql_agg_step(s, &g->aggs[a], st, &r->facc[a],
                                  &r->fcount[a], &v);
            /* min and max took the row's value itself: keep it */
            if (rc == KEEL_OK && !st->isnull && !v.isnull &&
                sql_type_has_bytes(st->type) && st->v.s.p == v.v.s.p)
                rc = sql_value_keep(s, st);
        }
        return rc;
    }
    if (r->ngin == r->capgin) {
        size_t cap = r->capgin == 0 ? 256 : r->capgin * 2;
        group_input *ni = sql_alloc(&s->arena, cap * sizeof(*ni));
        if (ni == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (r->ngin > 0)
            memcpy(ni, r->gin, r->ngin * sizeof(*ni));
        r->gin = ni;
        r->capgin = cap;
    }
    vals = sql_alloc(&s->arena, (g->nkeys + g->naggs + g->nextra + 1u) *
                                    sizeof(sql_value));
    if (vals == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t k = 0; rc == KEEL_OK && k < g->nkeys; k++) {
        rc = sql_expr_eval(s, g->key_exprs[k], r->row, &vals[k]);
        if (rc == KEEL_OK)
            rc = sql_value_keep(s, &vals[k]);
    }
    for (uint16_t a = 0; rc == KEEL_OK && a < g->naggs; a++) {
        sql_value *v = &vals[g->nkeys + a];
        bool pass = true;
        memset(v, 0, sizeof(*v));
        rc = agg_filter(s, &g->aggs[a], r->row, &pass);
        if (rc == KEEL_OK && !pass) {
            /* left out: a null to DISTINCT, a mark to the rest */
            v->isnull = true;
            v->type = AGG_FILTERED;
            continue;
        }
        if (rc == KEEL_OK && g->aggs[a].arg != NULL) {
            rc = sql_expr_eval(s, g->aggs[a].arg, r->row, v);
            if (rc == KEEL_OK)
                rc = sql_value_keep(s, v);
        }
        /* its ORDER BY's keys, in the extra slots */
        for (uint16_t k = 0; rc == KEEL_OK && k < g->aggs[a].norder; k++) {
            sql_value *kv =
                &vals[g->nkeys + g->naggs + g->aggs[a].order_off + k];
            rc = sql_expr_eval(s, g->aggs[a].order[k], r->row, kv);
            if (rc == KEEL_OK)
                rc = sql_value_keep(s, kv);
        }
    }
    r->gin[r->ngin++].vals = vals;
    return rc;
}

/* One level's rows, read before the levels below it run: the engine
 * keeps one scan open per session. */
typedef struct level_rows {
    sql_value *vals; /* n rows of ncols */
    size_t n, cap;
    char *strs;      /* their strings; offsets until the read ends */
    size_t slen, scap;
} level_rows;

static bool level_add(level_rows *lr, const sql_value *row, uint16_t ncols)
{
    if (lr->n == lr->cap) {
        size_t cap = lr->cap == 0 ? 16 : lr->cap * 2;
        sql_value *nv = realloc(lr->vals, cap * ncols * sizeof(*nv));
        if (nv == NULL)
            return false;
        lr->vals = nv;
        lr->cap = cap;
    }
    for (uint16_t c = 0; c < ncols; c++) {
        sql_value v = row[c];
        if (!v.isnull && sql_type_has_bytes(v.type)) {
            if (lr->slen + v.v.s.len + 1 > lr->scap) {
                size_t cap = lr->scap == 0 ? 4096 : lr->scap;
                char *ns;
                while (cap < lr->slen + v.v.s.len + 1)
                    cap *= 2;
                ns = realloc(lr->strs, cap);
                if (ns == NULL)
                    return false;
                lr->strs = ns;
                lr->scap = cap;
            }
            memcpy(lr->strs + lr->slen, v.v.s.p, v.v.s.len);
            v.v.s.p = (const char *)(uintptr_t)lr->slen;
            lr->slen += v.v.s.len + 1;
        }
        lr->vals[lr->n * ncols + c] = v;
    }
    lr->n++;
    return true;
}

/* Turns the stored offsets into pointers, once the strings stay put. */
static void level_fix(level_rows *lr, uint16_t ncols)
{
    for (size_t i = 0; i < lr->n * ncols; i++) {
        sql_value *v = &lr->vals[i];
        if (!v->isnull && sql_type_has_bytes(v->type))
            v->v.s.p = lr->strs + (uintptr_t)v->v.s.p;
    }
}

static keel_status join_level(sql_session *s, select_run *r, uint16_t level);

/* Item it's columns in the joined row all null: an outer join's row
 * that nothing matched. */
static void item_nulls(const from_item *it, sql_value *row)
{
    for (uint16_t c = 0; c < it->t.info.ncols; c++)
        row[it->off + c] =
            (sql_value){.type = item_col_type(it, c), .isnull = true};
}

/* FULL JOIN ... USING's merged columns for the joined row so far. */
static keel_status merge_level(sql_session *s, select_run *r, uint16_t level)
{
    const from_item *it = &r->from->items[level];
    keel_status rc = KEEL_OK;

    for (uint16_t j = 0; rc == KEEL_OK && j < it->t.info.ncols; j++) {
        const uint16_t *l = it->merge[2 * j], *rt = it->merge[2 * j + 1];
        sql_value v = r->row[r->from->items[l[0]].off + l[1]];
        if (v.isnull)
            v = r->row[r->from->items[rt[0]].off + rt[1]];
        if (!v.isnull && v.type != it->rs.types[j])
            rc = sql_value_cast(s, &v, it->rs.types[j], -1, true, -1);
        v.type = it->rs.types[j];
        r->row[it->off + j] = v;
    }
    return rc == KEEL_OK ? join_level(s, r, (uint16_t)(level + 1)) : rc;
}

/* A candidate row (nc values) of item `level`, copied into the joined
 * row: if its ON condition accepts it, *matched is set and the levels
 * after run. */
static keel_status join_candidate(sql_session *s, select_run *r,
                                  uint16_t level, const sql_value *vals,
                                  uint16_t nc, bool *matched)
{
    const from_item *it = &r->from->items[level];

    memcpy(r->row + it->off, vals, nc * sizeof(sql_value));
    if (it->on_expr != NULL) {
        sql_value v;
        keel_status rc = sql_expr_eval(s, it->on_expr, r->row, &v);
        if (rc != KEEL_OK || v.isnull || !v.v.b)
            return rc;
    }
    *matched = true;
    return join_level(s, r, (uint16_t)(level + 1));
}

/* Whether values of type t can be hashed so that equal ones (as `=`
 * says) hash alike: integers, dates and times, booleans, and text, uuid
 * and bytea by their bytes (numeric, floats and char(n) have equal values
 * that differ). */
static bool hashable(uint32_t t)
{
    return sql_type_is_int(t) || sql_type_is_datetime(t) ||
           t == SQL_TYPE_BOOL || t == SQL_TYPE_TEXT || t == SQL_TYPE_VARCHAR ||
           t == SQL_TYPE_NAME || sql_type_is_bytes(t);
}

static uint64_t value_hash(const sql_value *v)
{
    if (sql_type_has_bytes(v->type))
        return XXH3_64bits(v->v.s.p, v->v.s.len);
    if (v->type == SQL_TYPE_BOOL)
        return hash_u64(v->v.b ? 1 : 0);
    return hash_u64((uint64_t)v->v.i);
}

/* In condition e (a conjunction), an equality of one of item it's
 * columns with an expression of the items before it, both of one
 * hashable type: the expression, with the column (0-based in the item)
 * in *col; NULL if there is none. */
static const sql_expr *hash_key_in(const from_item *it, const sql_expr *e,
                                   uint16_t *col)
{
    if (e == NULL)
        return NULL;
    if (e->kind == SQL_EXPR_AND) {
        for (uint16_t i = 0; i < e->nargs; i++) {
            const sql_expr *k = hash_key_in(it, e->args[i], col);
            if (k != NULL)
                return k;
        }
        return NULL;
    }
    if (e->kind != SQL_EXPR_OP || e->nargs != 2 || e->u.op != SQL_OP_EQ)
        return NULL;
    for (int side = 0; side < 2; side++) {
        const sql_expr *c = e->args[side], *o = e->args[1 - side];
        if (c->kind == SQL_EXPR_COLUMN && c->u.column >= it->off &&
            c->u.column < it->off + it->t.info.ncols && c->type == o->type &&
            hashable(c->type) && !reads_columns_from(o, it->off) &&
            !sql_expr_reads_engine(o)) {
            *col = (uint16_t)(c->u.column - it->off);
            return o;
        }
    }
    return NULL;
}

/* The outer side's key of a hash join for item it (not the first) under
 * conds: when no index bounds its table, the first equality joining a
 * column of it to the items before it; NULL for a nested loop. */
static const sql_expr *hash_key(const from_item *it, uint16_t level,
                                const sql_expr *const *conds, uint16_t *col)
{
    access_path ap;

    if (level == 0 || it->is_rows)
        return NULL;
    choose_path(&it->t, it->off, conds, 2, &ap);
    if (ap.keys != NULL)
        return NULL;
    for (int i = 0; i < 2; i++) {
        const sql_expr *k = hash_key_in(it, conds[i], col);
        if (k != NULL)
            return k;
    }
    return NULL;
}

/* Reads item it's table whole into the arena and chains its rows by the
 * hash of column col (none if col is UINT16_MAX): a hash join's build,
 * once per statement. */
static keel_status hash_build(sql_session *s, from_item *it, uint16_t col)
{
    uint16_t nc = it->t.info.ncols;
    level_rows lr = {0};
    char *strs = NULL;
    bool found;
    keel_status rc = scan_open(s, &it->sc, &it->t, NULL, 0, NULL, it->off);
    size_t nb = 16;

    if (rc != KEEL_OK)
        return rc;
    while ((rc = sql_scan_next(s, &it->sc, &found)) == KEEL_OK && found)
        if (!level_add(&lr, it->sc.row, nc)) {
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            break;
        }
    sql_scan_end(&it->sc);
    if (rc == KEEL_OK && lr.n > UINT32_MAX - 1)
        rc = sql_fail(s, KEEL_ETOOBIG, "54000", "too many rows to hash");
    while (nb < lr.n * 2)
        nb *= 2;
    if (rc == KEEL_OK) {
        it->hrows = sql_alloc(&s->arena, (lr.n * nc + 1) * sizeof(sql_value));
        it->hhead = sql_alloc(&s->arena, nb * sizeof(uint32_t));
        it->hnext = sql_alloc(&s->arena, (lr.n + 1) * sizeof(uint32_t));
        strs = sql_alloc(&s->arena, lr.slen + 1);
        if (it->hrows == NULL || it->hhead == NULL || it->hnext == NULL ||
            strs == NULL)
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    if (rc == KEEL_OK) {
        if (lr.slen > 0)
            memcpy(strs, lr.strs, lr.slen);
        free(lr.strs);
        lr.strs = strs;
        level_fix(&lr, nc);
        if (lr.n > 0)
            memcpy(it->hrows, lr.vals, lr.n * nc * sizeof(sql_value));
        memset(it->hhead, 0, nb * sizeof(uint32_t));
        it->hmask = (uint32_t)(nb - 1);
        it->hcol = col;
        it->hn = lr.n;
        for (size_t i = 0; i < lr.n && col != UINT16_MAX; i++) {
            const sql_value *v = &it->hrows[i * nc + col];
            uint32_t h;
            if (v->isnull)
                continue; /* = never holds */
            h = (uint32_t)value_hash(v) & it->hmask;
            it->hnext[i] = it->hhead[h];
            it->hhead[h] = (uint32_t)(i + 1);
        }
        it->hbuilt = true;
        lr.strs = NULL;
    }
    free(lr.vals);
    free(lr.strs);
    return rc;
}

/* A hash join's level: the built rows whose key hashes as the outer
 * side's value, those that ON accepts going on (or, for a LEFT JOIN
 * without one, a row of nulls). */
static keel_status hash_level(sql_session *s, select_run *r, uint16_t level,
                              const sql_expr *key, uint16_t col)
{
    from_item *it = &r->from->items[level];
    uint16_t nc = it->t.info.ncols;
    bool matched = false;
    sql_value k;
    keel_status rc = KEEL_OK;

    if (!it->hbuilt)
        rc = hash_build(s, it, col);
    if (rc == KEEL_OK)
        rc = sql_expr_eval(s, key, r->row, &k);
    if (rc == KEEL_OK && !k.isnull) {
        uint32_t i = it->hhead[(uint32_t)value_hash(&k) & it->hmask];
        for (; rc == KEEL_OK && i != 0 && !output_full(r->o);
             i = it->hnext[i - 1])
            rc = join_candidate(s, r, level, it->hrows + (size_t)(i - 1) * nc,
                                nc, &matched);
    }
    if (rc == KEEL_OK && !matched && it->left && !output_full(r->o)) {
        item_nulls(it, r->row);
        rc = join_level(s, r, (uint16_t)(level + 1));
    }
    return rc;
}

/* A rowset's level of the join: its rows (a LATERAL subquery's, run for
 * the row before it) that ON accepts, or a row of nulls for a LEFT JOIN
 * without one. */
static keel_status join_rows(sql_session *s, select_run *r, uint16_t level)
{
    from_item *it = &r->from->items[level];
    uint16_t nc = it->rs.ncols;
    bool matched = false;
    keel_status rc = KEEL_OK;

    if (it->func != NULL) {
        rc = series_rows(s, it, r->row);
        if (rc != KEEL_OK)
            return rc;
    } else if (it->lateral) {
        it->rs.n = 0;
        rc = sql_select_rows(s, it->sub, &it->lscope, r->row, false, &it->rs);
        if (rc != KEEL_OK)
            return rc;
    }
    for (size_t i = 0; rc == KEEL_OK && i < it->rs.n && !output_full(r->o);
         i++)
        rc = join_candidate(s, r, level, it->rs.vals + i * nc, nc, &matched);
    if (rc == KEEL_OK && !matched && it->left && !output_full(r->o)) {
        item_nulls(it, r->row);
        rc = join_level(s, r, (uint16_t)(level + 1));
    }
    return rc;
}

/*
 * A RIGHT or FULL join's right item, read once: a table whole into the
 * arena (chained by the hash of its column that an equality in ON joins
 * to the items before it, if one does), or its rows (generate_series()
 * run once: from_lateral() saw that its arguments do not read the items
 * before it); a bit per row for whether any row before it matched it.
 */
static keel_status right_build(sql_session *s, select_run *r, from_item *it)
{
    size_t n;
    keel_status rc = KEEL_OK;

    if (it->rmatched != NULL)
        return KEEL_OK;
    if (!it->is_rows) {
        uint16_t col = 0;
        it->hkey = hash_key_in(it, it->on_expr, &col);
        if (!it->hbuilt)
            rc = hash_build(s, it, it->hkey != NULL ? col : UINT16_MAX);
        n = it->hn;
    } else {
        if (it->func != NULL)
            rc = series_rows(s, it, r->row);
        n = it->rs.n;
    }
    if (rc == KEEL_OK) {
        it->rmatched = sql_alloc(&s->arena, n / 8 + 1);
        if (it->rmatched == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memset(it->rmatched, 0, n / 8 + 1);
    }
    return rc;
}

/* A RIGHT or FULL join's right item's rows (its width in *nc). */
static const sql_value *right_rows(const from_item *it, size_t *n,
                                   uint16_t *nc)
{
    *n = it->is_rows ? it->rs.n : it->hn;
    *nc = it->t.info.ncols;
    return it->is_rows ? it->rs.vals : it->hrows;
}

/* A RIGHT or FULL join's level: the rows of its item that ON accepts
 * for the row before it, each marked matched; for a FULL join without
 * one, a row of nulls. */
static keel_status right_level(sql_session *s, select_run *r, uint16_t level)
{
    from_item *it = &r->from->items[level];
    const sql_value *rows;
    size_t n;
    uint16_t nc;
    bool matched = false;
    keel_status rc = right_build(s, r, it);

    if (rc != KEEL_OK)
        return rc;
    rows = right_rows(it, &n, &nc);
    if (it->hkey != NULL) {
        sql_value k;
        rc = sql_expr_eval(s, it->hkey, r->row, &k);
        for (uint32_t i = rc == KEEL_OK && !k.isnull
                              ? it->hhead[(uint32_t)value_hash(&k) & it->hmask]
                              : 0;
             rc == KEEL_OK && i != 0 && !output_full(r->o);
             i = it->hnext[i - 1]) {
            bool m = false;
            rc = join_candidate(s, r, level, rows + (size_t)(i - 1) * nc, nc,
                                &m);
            if (m)
                it->rmatched[(i - 1) / 8] |= (uint8_t)(1u << ((i - 1) % 8));
            matched = matched || m;
        }
    } else {
        for (size_t i = 0; rc == KEEL_OK && i < n && !output_full(r->o); i++) {
            bool m = false;
            rc = join_candidate(s, r, level, rows + i * nc, nc, &m);
            if (m)
                it->rmatched[i / 8] |= (uint8_t)(1u << (i % 8));
            matched = matched || m;
        }
    }
    if (rc == KEEL_OK && !matched && it->left && !output_full(r->o)) {
        item_nulls(it, r->row);
        rc = join_level(s, r, (uint16_t)(level + 1));
    }
    return rc;
}

/* Once the join has run: each RIGHT or FULL join's rows that nothing
 * before them matched, with nulls for the items before, joined on to the
 * items after (so the first such join's go first: a later one's may
 * match them). */
static keel_status right_rest(sql_session *s, select_run *r)
{
    keel_status rc = KEEL_OK;

    for (uint16_t k = 1; rc == KEEL_OK && k < r->from->n; k++) {
        from_item *it = &r->from->items[k];
        const sql_value *rows;
        size_t n;
        uint16_t nc;
        if (!it->right)
            continue;
        rc = right_build(s, r, it);
        rows = right_rows(it, &n, &nc);
        for (size_t i = 0; rc == KEEL_OK && i < n && !output_full(r->o); i++) {
            if (it->rmatched[i / 8] & (1u << (i % 8)))
                continue;
            for (uint16_t j = 0; j < k; j++)
                item_nulls(&r->from->items[j], r->row);
            memcpy(r->row + it->off, rows + i * nc, nc * sizeof(sql_value));
            rc = sql_check_cancel(s);
            if (rc == KEEL_OK)
                rc = join_level(s, r, (uint16_t)(k + 1));
        }
    }
    return rc;
}

/*
 * The join as nested loops: for each row of the tables before `level`,
 * the rows of its table that its ON condition accepts (its primary key
 * bounded by ON and WHERE where they give its key from the outer row: an
 * index nested loop), or for a LEFT JOIN without one, a row of nulls.
 * The last table's rows stream; the others' are read first, since a
 * session has one scan open at a time.
 */
static keel_status join_level(sql_session *s, select_run *r, uint16_t level)
{
    from_item *it;
    level_rows lr = {0};
    bool matched = false, found, last;
    keel_status rc;

    if (level == r->from->n) {
        if (r->where != NULL) {
            sql_value w;
            rc = sql_expr_eval(s, r->where, r->row, &w);
            if (rc != KEEL_OK || w.isnull || !w.v.b)
                return rc;
        }
        return select_emit(s, r);
    }
    it = &r->from->items[level];
    if (it->merge != NULL)
        return merge_level(s, r, level);
    if (it->right)
        return right_level(s, r, level);
    if (it->is_rows)
        return join_rows(s, r, level);
    last = level + 1 == r->from->n && !r->materialize;
    r->conds[0] = it->on_expr;
    r->conds[1] = r->where;
    if (it->hplan == 0) {
        uint16_t col = 0;
        it->hkey = hash_key(it, level, r->conds, &col);
        it->hcol = col;
        it->hplan = it->hkey != NULL ? 1 : 2;
    }
    if (it->hplan == 1)
        return hash_level(s, r, level, it->hkey, it->hcol);
    rc = scan_open(s, &it->sc, &it->t, r->conds, 2, r->row, it->off);
    if (rc != KEEL_OK)
        return rc;
    while (!output_full(r->o)) {
        rc = sql_scan_next(s, &it->sc, &found);
        if (rc != KEEL_OK || !found)
            break;
        memcpy(r->row + it->off, it->sc.row, it->t.info.ncols * sizeof(sql_value));
        if (it->on_expr != NULL) {
            sql_value v;
            rc = sql_expr_eval(s, it->on_expr, r->row, &v);
            if (rc != KEEL_OK)
                break;
            if (v.isnull || !v.v.b)
                continue;
        }
        matched = true;
        if (last) {
            rc = join_level(s, r, (uint16_t)(level + 1));
            if (rc != KEEL_OK)
                break;
        } else if (!level_add(&lr, it->sc.row, it->t.info.ncols)) {
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            break;
        }
    }
    sql_scan_end(&it->sc);
    level_fix(&lr, it->t.info.ncols);
    for (size_t i = 0; rc == KEEL_OK && i < lr.n && !output_full(r->o); i++) {
        memcpy(r->row + it->off, lr.vals + i * it->t.info.ncols,
               it->t.info.ncols * sizeof(sql_value));
        rc = join_level(s, r, (uint16_t)(level + 1));
    }
    free(lr.vals);
    free(lr.strs);
    if (rc == KEEL_OK && !matched && it->left && !output_full(r->o)) {
        item_nulls(it, r->row);
        rc = join_level(s, r, (uint16_t)(level + 1));
    }
    return rc;
}

/* One FROM item's scan as EXPLAIN shows it. */
static void explain_item(sql_explain *x, int depth, const from_item *it,
                         const sql_expr *const *conds)
{
    access_path ap;

    if (!it->is_rows && it->sc.ordered) {
        /* read in an index's order for ORDER BY, bounded or not */
        choose_path(&it->t, it->off, conds, 2, &ap);
        if (ap.keys == NULL) {
            sql_explain_node(x, depth, "Index Scan using %s on %s%s%s",
                             it->sc.order_index != NULL
                                 ? it->sc.order_index
                                 : it->t.info.pkey_name,
                             it->t.name,
                             strcmp(it->t.alias, it->t.name) != 0 ? " " : "",
                             strcmp(it->t.alias, it->t.name) != 0 ? it->t.alias
                                                                  : "");
            return;
        }
    }
    if (!it->is_rows)
        sql_explain_scan(x, depth, &it->t, it->off, conds, 2);
    else if (it->t.alias[0] == '\0')
        sql_explain_node(x, depth, "Subquery Scan");
    else
        sql_explain_node(x, depth, "Subquery Scan on %s", it->t.alias);
}

/* The join of items 0..k as EXPLAIN shows it: a nested loop over the
 * join of those before k (outer) and item k (inner). */
static void explain_join(sql_explain *x, const from_list *f,
                         const sql_expr *where, uint16_t k, int depth)
{
    const sql_expr *c[2] = {f->items[k].on_expr, where};
    uint16_t col;

    if (k == 0) {
        explain_item(x, depth, &f->items[0], c);
        return;
    }
    if (f->items[k].merge != NULL) {
        explain_join(x, f, where, (uint16_t)(k - 1), depth);
        return;
    }
    if (f->items[k].right) {
        const char *kind = f->items[k].left ? "Full" : "Right";
        bool hash = !f->items[k].is_rows &&
                    hash_key_in(&f->items[k], f->items[k].on_expr, &col) != NULL;
        c[0] = c[1] = NULL; /* read whole */
        if (hash)
            sql_explain_node(x, depth, "Hash %s Join", kind);
        else
            sql_explain_node(x, depth, "Nested Loop %s Join", kind);
        explain_join(x, f, where, (uint16_t)(k - 1), depth + 1);
        if (hash)
            sql_explain_node(x, ++depth, "Hash");
        explain_item(x, depth + 1, &f->items[k], c);
        return;
    }
    if (hash_key(&f->items[k], k, c, &col) != NULL) {
        sql_explain_node(x, depth, "Hash%s Join",
                         f->items[k].left ? " Left" : "");
        explain_join(x, f, where, (uint16_t)(k - 1), depth + 1);
        sql_explain_node(x, depth + 1, "Hash");
        explain_item(x, depth + 2, &f->items[k], c);
        return;
    }
    sql_explain_node(x, depth, "Nested Loop%s",
                     f->items[k].left ? " Left Join" : "");
    explain_join(x, f, where, (uint16_t)(k - 1), depth + 1);
    explain_item(x, depth + 1, &f->items[k], c);
}

keel_status sql_rowset_add(sql_session *s, sql_rowset *out,
                           const sql_value *row)
{
    keel_status rc;

    if (out->n == out->cap) {
        size_t cap = out->cap == 0 ? 16 : out->cap * 2;
        sql_value *nv = sql_alloc(&s->arena,
                                  cap * (out->ncols + 1u) * sizeof(*nv));
        if (nv == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (out->n > 0)
            memcpy(nv, out->vals, out->n * out->ncols * sizeof(*nv));
        out->vals = nv;
        out->cap = cap;
    }
    for (uint16_t c = 0; c < out->ncols; c++) {
        sql_value *v = &out->vals[out->n * out->ncols + c];
        *v = row[c];
        /* An untyped literal's column is text, as PostgreSQL resolves
         * a subquery's unknown outputs. */
        if (v->type == SQL_TYPE_UNKNOWN)
            v->type = out->types[c];
        rc = sql_value_keep(s, v);
        if (rc != KEEL_OK)
            return rc;
    }
    out->n++;
    return KEEL_OK;
}

/* The type a UNION's column takes from its two arms' (UNKNOWN: an
 * untyped literal), or 0 when they cannot be matched. */
static uint32_t setop_type(uint32_t a, uint32_t b)
{
    if (a == b)
        return a;
    if (a == SQL_TYPE_UNKNOWN)
        return b;
    if (b == SQL_TYPE_UNKNOWN)
        return a;
    /* a regclass beside an oid or integer: its oid (sql_value_cast()) */
    if (a == SQL_TYPE_REGCLASS && sql_type_is_int(b))
        a = SQL_TYPE_OID;
    if (b == SQL_TYPE_REGCLASS && sql_type_is_int(a))
        b = SQL_TYPE_OID;
    if (sql_type_is_int(a) && sql_type_is_int(b))
        return a == SQL_TYPE_INT8 || b == SQL_TYPE_INT8   ? SQL_TYPE_INT8
               : a == SQL_TYPE_INT4 || b == SQL_TYPE_INT4 ? SQL_TYPE_INT4
               : a == SQL_TYPE_OID || b == SQL_TYPE_OID   ? SQL_TYPE_OID
                                                          : SQL_TYPE_INT2;
    /* Numbers: integers go to numeric, numeric to double precision, as
     * PostgreSQL's preferred types for the numeric category. */
    if ((sql_type_is_int(a) || a == SQL_TYPE_NUMERIC) &&
        (sql_type_is_int(b) || b == SQL_TYPE_NUMERIC))
        return SQL_TYPE_NUMERIC;
    if ((sql_type_is_int(a) || a == SQL_TYPE_NUMERIC || a == SQL_TYPE_FLOAT8) &&
        (sql_type_is_int(b) || b == SQL_TYPE_NUMERIC || b == SQL_TYPE_FLOAT8))
        return SQL_TYPE_FLOAT8;
    if (sql_type_is_string(a) && sql_type_is_string(b))
        return SQL_TYPE_TEXT;
    return 0;
}

/*
 * UNION [ALL] of two queries (each perhaps a UNION itself): both arms'
 * rows read whole, each column given one type, duplicates removed unless
 * ALL; then the statement's own ORDER BY (by output position or name),
 * LIMIT and OFFSET.  INTERSECT and EXCEPT are not done.
 */
/* Orders two rows of a set operation (pointers to their first values;
 * arg: the column count), NULL equal to NULL as the operations treat it. */
static int setop_row_cmp(const void *x, const void *y, void *arg)
{
    const sql_value *a = *(sql_value *const *)x, *b = *(sql_value *const *)y;
    uint16_t n = *(const uint16_t *)arg;

    for (uint16_t c = 0; c < n; c++) {
        int r = sql_key_cmp(&a[c], &b[c], false, false);
        if (r != 0)
            return r;
    }
    return 0;
}

static keel_status setop_query(sql_session *s, const PgQuery__SelectStmt *st,
                               const sql_scope *outer,
                               const sql_value *outer_row, bool describe,
                               sql_rowset *into)
{
    sql_rowset arm[2];
    sql_scope scope;
    output o;
    sql_column *cols;
    keel_status rc;

    const char *opname =
        st->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT ? "INTERSECT"
        : st->op == PG_QUERY__SET_OPERATION__SETOP_EXCEPT  ? "EXCEPT"
                                                           : "UNION";
    bool is_union = st->op == PG_QUERY__SET_OPERATION__SETOP_UNION;
    sql_value **right = NULL;
    uint32_t *used = NULL;

    if (st->op != PG_QUERY__SET_OPERATION__SETOP_UNION &&
        st->op != PG_QUERY__SET_OPERATION__SETOP_INTERSECT &&
        st->op != PG_QUERY__SET_OPERATION__SETOP_EXCEPT)
        return sql_unsupported(s, -1, "this set operation");
    if (st->larg == NULL || st->rarg == NULL)
        return sql_unsupported(s, -1, "this set operation");
    memset(&o, 0, sizeof(o));
    memset(arm, 0, sizeof(arm));
    for (int k = 0; k < 2; k++) {
        arm[k].keep_unknown = true;
        rc = sql_select_rows(s, k == 0 ? st->larg : st->rarg, outer, outer_row,
                             describe, &arm[k]);
        if (rc != KEEL_OK)
            return rc;
    }
    if (arm[0].ncols != arm[1].ncols)
        return sql_fail(s, KEEL_EINVAL, "42601",
                        "each %s query must have the same number of "
                        "columns",
                        opname);
    for (uint16_t c = 0; c < arm[0].ncols; c++) {
        uint32_t t = setop_type(arm[0].types[c], arm[1].types[c]);
        if (t == 0)
            return sql_fail(s, KEEL_ETYPE, "42804",
                            "%s types %s and %s cannot be matched", opname,
                            sql_type_name(arm[0].types[c]),
                            sql_type_name(arm[1].types[c]));
        arm[0].types[c] = t == SQL_TYPE_UNKNOWN ? SQL_TYPE_TEXT : t;
    }
    /* The output: the left arm's columns, as the union's types. */
    scope = (sql_scope){.table = "", .cols = arm[0].cols, .ncols = arm[0].ncols,
                        .types = arm[0].types};
    o.nt = arm[0].ncols;
    o.tl = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(*o.tl));
    o.out = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(*o.out));
    o.txt = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(*o.txt));
    o.lens = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(*o.lens));
    cols = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(*cols));
    if (o.tl == NULL || o.out == NULL || o.txt == NULL || o.lens == NULL ||
        cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t c = 0; c < o.nt; c++) {
        sql_expr *e = sql_alloc(&s->arena, sizeof(*e));
        if (e == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memset(e, 0, sizeof(*e));
        e->kind = SQL_EXPR_COLUMN;
        e->type = arm[0].types[c];
        e->location = -1;
        e->u.column = c;
        o.tl[c] = (target){.expr = e, .name = arm[0].cols[c].name};
        cols[c] = (sql_column){.name = arm[0].cols[c].name,
                               .type = sql_type_wire(e->type),
                               .typlen = sql_type_len(e->type), .typmod = -1};
        if (into == NULL && s->nrformats > 0)
            cols[c].format = s->rformats[s->nrformats == 1 ? 0 : c];
    }
    o.distinct = !st->all;
    o.into = into;
    if (st->n_sort_clause > 0) {
        rc = order_by(s, st, &scope, &o);
        if (rc != KEEL_OK)
            return rc;
    }
    o.collect = o.nkeys > 0 || o.distinct;
    rc = sql_limit_value(s, st->limit_count, "LIMIT", &o.limit);
    if (rc == KEEL_OK)
        rc = sql_limit_value(s, st->limit_offset, "OFFSET", &o.offset);
    if (rc != KEEL_OK)
        return rc;
    if (o.offset < 0)
        o.offset = 0;
    if (into != NULL) {
        into->ncols = o.nt;
        into->n = into->cap = 0;
        into->vals = NULL;
        into->cols = arm[0].cols;
        into->col_table = NULL;
        into->types = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(uint32_t));
        if (into->types == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint16_t c = 0; c < o.nt; c++)
            into->types[c] = arm[0].types[c];
    } else if (s->explain != NULL) {
        if (is_union)
            sql_explain_node(s->explain, 0, "%s",
                             o.distinct ? "Unique" : "Append");
        else
            sql_explain_node(s->explain, 0, "SetOp %s%s",
                             st->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT
                                 ? "Intersect"
                                 : "Except",
                             st->all ? " All" : "");
        return KEEL_OK;
    } else if (s->sink->columns(s->sink->ctx, cols, o.nt) != 0) {
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    }
    if (describe)
        return KEEL_OK;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < arm[k].n; i++) {
            sql_value *row = arm[k].vals + i * arm[0].ncols;
            for (uint16_t c = 0; c < o.nt; c++) {
                rc = sql_value_cast(s, &row[c], arm[0].types[c], -1, true, -1);
                if (rc != KEEL_OK)
                    return rc;
            }
        }
    if (!is_union) {
        /* The right arm sorted, each left row's matches found by binary
         * search; `used` counts, per run of equal right rows, the left
         * rows that ALL has matched against it. */
        right = malloc((arm[1].n + 1) * sizeof(*right));
        used = calloc(arm[1].n + 1, sizeof(*used));
        if (right == NULL || used == NULL) {
            free(right);
            free(used);
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        for (size_t i = 0; i < arm[1].n; i++)
            right[i] = arm[1].vals + i * arm[0].ncols;
        if (arm[1].n > 1)
            qsort_r(right, arm[1].n, sizeof(*right), setop_row_cmp, &o.nt);
    }
    for (int k = 0; k < (is_union ? 2 : 1); k++)
        for (size_t i = 0; i < arm[k].n && !output_full(&o); i++) {
            sql_value *row = arm[k].vals + i * arm[0].ncols;
            if (!is_union) {
                size_t lo = 0, hi = arm[1].n, first, n;
                bool keep;
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (setop_row_cmp(&right[mid], &row, &o.nt) < 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                first = lo;
                for (n = 0; first + n < arm[1].n &&
                            setop_row_cmp(&right[first + n], &row, &o.nt) == 0;
                     n++)
                    ;
                if (st->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT)
                    keep = n > 0 && (!st->all || used[first] < n);
                else
                    keep = n == 0 || (st->all && used[first] >= n);
                if (st->all && n > 0 && used[first] < n)
                    used[first]++;
                if (!keep)
                    continue;
            }
            rc = output_row(s, &o, row);
            if (rc != KEEL_OK)
                break;
        }
    free(right);
    free(used);
    if (rc != KEEL_OK)
        return rc;
    rc = output_finish(s, &o);
    if (rc != KEEL_OK || into != NULL)
        return rc;
    return sql_complete_count(s, "SELECT", (uint64_t)o.sent);
}

/*
 * A SELECT: analysed against the enclosing query's scope (outer, or
 * NULL), then its rows sent to the client, or collected into `into` (a
 * subquery's).  describe: the result's columns only.
 */
static keel_status select_body(sql_session *s, const PgQuery__SelectStmt *st,
                               const sql_scope *outer,
                               const sql_value *outer_row, bool describe,
                               sql_rowset *into);

/*
 * VALUES lists as rows, into `into`: columns column1, column2, ... of
 * each column's common type, over the enclosing query's row (outer).
 */
static keel_status values_rows(sql_session *s, const PgQuery__SelectStmt *st,
                               const sql_scope *outer,
                               const sql_value *outer_row, bool describe,
                               sql_rowset *into)
{
    size_t nrows = st->n_values_lists;
    uint16_t ncols;
    sql_expr **ex, **col;
    sql_value *row;
    keel_status rc = KEEL_OK;

    if (st->values_lists[0]->node_case != PG_QUERY__NODE__NODE_LIST)
        return sql_unsupported(s, -1, "this VALUES list");
    ncols = (uint16_t)st->values_lists[0]->list->n_items;
    ex = sql_alloc(&s->arena, (nrows * ncols + 1) * sizeof(*ex));
    col = sql_alloc(&s->arena, (nrows + 1) * sizeof(*col));
    row = sql_alloc(&s->arena, (ncols + 1u) * sizeof(*row));
    into->ncols = ncols;
    into->n = into->cap = 0;
    into->vals = NULL;
    into->cols = sql_alloc(&s->arena, (ncols + 1u) * sizeof(*into->cols));
    into->types = sql_alloc(&s->arena, (ncols + 1u) * sizeof(uint32_t));
    into->col_table = sql_alloc(&s->arena, (ncols + 1u) * sizeof(char *));
    if (ex == NULL || col == NULL || row == NULL || into->cols == NULL ||
        into->types == NULL || into->col_table == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(into->cols, 0, (ncols + 1u) * sizeof(*into->cols));
    for (size_t r = 0; rc == KEEL_OK && r < nrows; r++) {
        const PgQuery__List *l = st->values_lists[r]->list;
        if (l->n_items != ncols) {
            /* Pointing at the list's first item, as PostgreSQL does. */
            sql_expr *first = NULL;
            int32_t at = l->n_items > 0 &&
                                 sql_expr_prepare(s, outer, l->items[0],
                                                  &first) == KEEL_OK
                             ? first->location
                             : -1;
            return sql_fail_at(s, at, KEEL_EINVAL, "42601",
                               "VALUES lists must all be the same length");
        }
        s->clause = "VALUES";
        for (uint16_t c = 0; rc == KEEL_OK && c < ncols; c++)
            rc = l->items[c]->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT
                     ? sql_fail(s, KEEL_EINVAL, "42601",
                                "DEFAULT is not allowed in this context")
                     : sql_expr_prepare(s, outer, l->items[c],
                                        &ex[r * ncols + c]);
        s->clause = NULL;
    }
    for (uint16_t c = 0; rc == KEEL_OK && c < ncols; c++) {
        uint32_t type = SQL_TYPE_TEXT;
        for (size_t r = 0; r < nrows; r++)
            col[r] = ex[r * ncols + c];
        rc = sql_expr_unify(s, col, (uint16_t)(nrows > UINT16_MAX ? UINT16_MAX
                                                                 : nrows),
                            -1, &type);
        for (size_t r = 0; rc == KEEL_OK && r < nrows; r++) {
            ex[r * ncols + c] = col[r];
            if (sql_type_is_string(type) && col[r]->type != type)
                rc = sql_expr_coerce(s, &ex[r * ncols + c], type);
        }
        snprintf(into->cols[c].name, sizeof(into->cols[c].name), "column%u",
                 (unsigned)c + 1);
        into->cols[c].type = KEEL_TEXT;
        into->types[c] = type;
        into->col_table[c] = NULL;
    }
    for (size_t r = 0; rc == KEEL_OK && !describe && r < nrows; r++) {
        for (uint16_t c = 0; rc == KEEL_OK && c < ncols; c++)
            rc = sql_expr_eval(s, ex[r * ncols + c], outer_row, &row[c]);
        if (rc == KEEL_OK)
            rc = sql_rowset_add(s, into, row);
    }
    return rc;
}

/*
 * WITH: its queries come into scope for the query and its subqueries,
 * each run where FROM names it (from_cte()), as PostgreSQL may inline
 * one; a query that only reads gives the same rows either way.  With
 * RECURSIVE each sees them all, itself included (cte_iterate()).  Not
 * yet: INSERT, UPDATE or DELETE in WITH.
 */
/* What a data-modifying WITH query's RETURNING sends, kept as rows. */
typedef struct dml_capture {
    sql_session *s;
    const sql_sink *outer;
    sql_rowset *rs;
    keel_status rc;
} dml_capture;

static int dml_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    dml_capture *d = ctx;
    sql_session *s = d->s;

    d->rs->ncols = n;
    d->rs->cols = sql_alloc(&s->cte_arena, (n + 1u) * sizeof(*d->rs->cols));
    d->rs->types = sql_alloc(&s->cte_arena, (n + 1u) * sizeof(uint32_t));
    if (d->rs->cols == NULL || d->rs->types == NULL) {
        d->rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        return 1;
    }
    memset(d->rs->cols, 0, (n + 1u) * sizeof(*d->rs->cols));
    for (uint16_t i = 0; i < n; i++) {
        snprintf(d->rs->cols[i].name, sizeof(d->rs->cols[i].name), "%s",
                 cols[i].name);
        d->rs->types[i] = cols[i].type;
    }
    return 0;
}

static int dml_row(void *ctx, const char *const *vals, const uint32_t *lens,
                   uint16_t n)
{
    dml_capture *d = ctx;
    sql_session *s = d->s;
    sql_rowset *rs = d->rs;
    sql_value *row;

    if (rs->n == rs->cap) {
        size_t cap = rs->cap == 0 ? 16 : rs->cap * 2;
        sql_value *nv = sql_alloc(&s->cte_arena, cap * (n + 1u) * sizeof(*nv));
        if (nv == NULL) {
            d->rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            return 1;
        }
        if (rs->n > 0)
            memcpy(nv, rs->vals, rs->n * n * sizeof(*nv));
        rs->vals = nv;
        rs->cap = cap;
    }
    row = &rs->vals[rs->n * n];
    for (uint16_t i = 0; i < n && d->rc == KEEL_OK; i++) {
        row[i] = (sql_value){.type = SQL_TYPE_UNKNOWN, .isnull = vals[i] == NULL};
        if (vals[i] == NULL) {
            row[i].type = rs->types[i];
            continue;
        }
        row[i].v.s.p = vals[i];
        row[i].v.s.len = lens[i];
        d->rc = sql_value_cast(s, &row[i], rs->types[i], -1, true, -1);
        /* its bytes kept past the statement's arena */
        if (d->rc == KEEL_OK && !row[i].isnull &&
            sql_type_has_bytes(row[i].type)) {
            char *p = sql_strndup(&s->cte_arena, row[i].v.s.p, row[i].v.s.len);
            if (p == NULL)
                d->rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            row[i].v.s.p = p;
        }
    }
    if (d->rc != KEEL_OK)
        return 1;
    rs->n++;
    return 0;
}

static int dml_complete(void *ctx, const char *tag)
{
    (void)ctx;
    (void)tag;
    return 0;
}

static int dml_notice(void *ctx, const char *severity, const char *sqlstate,
                      const char *message)
{
    dml_capture *d = ctx;

    return d->outer->notice != NULL
               ? d->outer->notice(d->outer->ctx, severity, sqlstate, message)
               : 0;
}

/*
 * A data-modifying WITH query (INSERT, UPDATE or DELETE): run once, here,
 * its RETURNING rows kept in the arena as the query's table (their text
 * read back as their types), its command tag dropped.  Describing a
 * statement only describes it.  The statement it is part of runs in the
 * same command, so it does not see the changes, only the rows returned,
 * as in PostgreSQL.
 */
static keel_status cte_dml(sql_session *s, const PgQuery__CommonTableExpr *c,
                           struct sql_cte_state *cs)
{
    sql_rowset *rs = sql_alloc(&s->cte_arena, sizeof(*rs));
    dml_capture d = {.s = s, .outer = s->sink, .rs = rs};
    sql_sink sink = {.ctx = &d, .columns = dml_columns, .row = dml_row,
                     .complete = dml_complete, .notice = dml_notice};
    const sql_sink *outer = s->sink;
    const int16_t *rformats = s->rformats;
    uint16_t nrformats = s->nrformats;
    keel_status rc;

    if (rs == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(rs, 0, sizeof(*rs));
    s->sink = &sink;
    s->rformats = NULL;
    s->nrformats = 0; /* its rows in text, to read back */
    s->subquery_depth++; /* a WITH inside it is not at the top */
    switch (c->ctequery->node_case) {
    case PG_QUERY__NODE__NODE_INSERT_STMT:
        rc = sql_exec_insert(s, c->ctequery->insert_stmt);
        break;
    case PG_QUERY__NODE__NODE_UPDATE_STMT:
        rc = sql_exec_update(s, c->ctequery->update_stmt);
        break;
    default:
        rc = sql_exec_delete(s, c->ctequery->delete_stmt);
        break;
    }
    s->subquery_depth--;
    s->sink = outer;
    s->rformats = rformats;
    s->nrformats = nrformats;
    if (rc == KEEL_OK && d.rc != KEEL_OK)
        rc = d.rc;
    if (rc != KEEL_OK)
        return rc;
    cs->dml_rows = rs->cols != NULL ? rs : NULL;
    if (s->ncte_changed < SQL_MAX_CTES) {
        const PgQuery__Node *q = c->ctequery;
        s->cte_changed[s->ncte_changed++] =
            q->node_case == PG_QUERY__NODE__NODE_INSERT_STMT ? q->insert_stmt->relation
            : q->node_case == PG_QUERY__NODE__NODE_UPDATE_STMT
                ? q->update_stmt->relation
                : q->delete_stmt->relation;
    }
    return KEEL_OK;
}

keel_status sql_cte_changed_check(sql_session *s, const PgQuery__RangeVar *rv,
                                  const char *schema, const char *name)
{
    for (uint16_t i = 0; i < s->ncte_changed; i++) {
        const PgQuery__RangeVar *c = s->cte_changed[i];
        const char *cs = c->schemaname != NULL && c->schemaname[0] != '\0'
                             ? c->schemaname
                             : "public";
        if (c == rv || strcmp(c->relname, name) != 0 ||
            strcmp(cs, schema != NULL ? schema : "public") != 0)
            continue;
        return sql_unsupported(s, rv != NULL ? rv->location : -1,
                               "reading a table that a WITH query's INSERT, "
                               "UPDATE or DELETE changes");
    }
    return KEEL_OK;
}

keel_status sql_with_push(sql_session *s, const PgQuery__WithClause *w,
                          sql_with_saved *sv)
{
    uint16_t first;
    keel_status rc = KEEL_OK;

    sv->base = s->nctes;
    sv->limit = s->cte_limit;
    sv->nchanged = s->ncte_changed;
    /* Inner WITHs go after the ones in scope, over those not in scope
     * here (a WITH query's later siblings), which come back after. */
    memcpy(sv->hidden, s->ctes + sv->limit,
           (size_t)(sv->base - sv->limit) * sizeof(*sv->hidden));
    memcpy(sv->hidden_state, s->cte_state + sv->limit,
           (size_t)(sv->base - sv->limit) * sizeof(*sv->hidden_state));
    s->nctes = s->cte_limit;
    first = s->nctes;
    for (size_t i = 0; rc == KEEL_OK && i < w->n_ctes; i++) {
        const PgQuery__CommonTableExpr *c =
            w->ctes[i]->node_case == PG_QUERY__NODE__NODE_COMMON_TABLE_EXPR
                ? w->ctes[i]->common_table_expr
                : NULL;
        bool dml = c != NULL && c->ctequery != NULL &&
                   (c->ctequery->node_case == PG_QUERY__NODE__NODE_INSERT_STMT ||
                    c->ctequery->node_case == PG_QUERY__NODE__NODE_UPDATE_STMT ||
                    c->ctequery->node_case == PG_QUERY__NODE__NODE_DELETE_STMT);
        if (c == NULL || c->ctequery == NULL ||
            (c->ctequery->node_case != PG_QUERY__NODE__NODE_SELECT_STMT &&
             !dml)) {
            rc = sql_unsupported(s, c != NULL ? c->location : w->location,
                                 "this statement in WITH");
            break;
        }
        /* Run once per statement: not in a subquery or a view, which
         * may run many times (PostgreSQL's rule too). */
        if (dml && s->subquery_depth > 0) {
            rc = sql_fail_at(s, c->location, KEEL_EINVAL, "0A000",
                             "WITH clause containing a data-modifying "
                             "statement must be at the top level");
            break;
        }
        if (dml && w->recursive) {
            rc = sql_unsupported(s, c->location,
                                 "INSERT, UPDATE and DELETE in WITH RECURSIVE");
            break;
        }
        for (uint16_t k = s->cte_limit; rc == KEEL_OK && k < s->nctes; k++)
            if (strcmp(s->ctes[k]->ctename, c->ctename) == 0)
                rc = sql_fail_at(s, c->location, KEEL_EINVAL, "42712",
                                 "WITH query name \"%s\" specified more than "
                                 "once",
                                 c->ctename);
        if (rc == KEEL_OK && s->nctes == SQL_MAX_CTES)
            rc = sql_unsupported(s, c->location, "more than 32 WITH queries");
        if (rc == KEEL_OK && (c->search_clause != NULL || c->cycle_clause != NULL))
            rc = sql_unsupported(s, c->location, "SEARCH and CYCLE");
        if (rc == KEEL_OK) {
            s->cte_state[s->nctes] =
                (struct sql_cte_state){.recursive = w->recursive, .dml = dml};
            s->ctes[s->nctes++] = c;
        }
        /* An INSERT, UPDATE or DELETE runs now, once, seeing the WITH
         * queries before it. */
        if (rc == KEEL_OK && dml) {
            uint16_t limit = s->cte_limit;
            s->cte_limit = (uint16_t)(s->nctes - 1);
            rc = cte_dml(s, c, &s->cte_state[s->nctes - 1]);
            s->cte_limit = limit;
        }
    }
    for (uint16_t k = first; k < s->nctes; k++)
        s->cte_state[k].end = s->nctes;
    if (rc == KEEL_OK)
        s->cte_limit = s->nctes;
    return rc;
}

void sql_with_pop(sql_session *s, const sql_with_saved *sv)
{
    memcpy(s->ctes + sv->limit, sv->hidden,
           (size_t)(sv->base - sv->limit) * sizeof(*sv->hidden));
    memcpy(s->cte_state + sv->limit, sv->hidden_state,
           (size_t)(sv->base - sv->limit) * sizeof(*sv->hidden_state));
    s->nctes = sv->base;
    s->cte_limit = sv->limit;
    s->ncte_changed = sv->nchanged;
}

static keel_status select_query(sql_session *s, const PgQuery__SelectStmt *st,
                                const sql_scope *outer,
                                const sql_value *outer_row, bool describe,
                                sql_rowset *into)
{
    sql_with_saved sv;
    keel_status rc;

    if (st->with_clause == NULL)
        return select_body(s, st, outer, outer_row, describe, into);
    rc = sql_with_push(s, st->with_clause, &sv);
    if (rc == KEEL_OK)
        rc = select_body(s, st, outer, outer_row, describe, into);
    sql_with_pop(s, &sv);
    return rc;
}

/* Whether the rows of a key of type k come out of its B-tree in the order
 * ORDER BY's sort gives them (value_compare() and sql_key_cmp() agree,
 * nulls last): not for floats, numeric and json, whose sorts and keys
 * differ in corners (NaN, display scale, jsonb's order). */
static bool order_type(keel_type k)
{
    return k != KEEL_FLOAT8 && k != KEEL_NUMERIC && k != KEEL_JSON &&
           k != KEEL_JSONB;
}

/*
 * Whether a query of one table needs no sort for its ORDER BY: every key
 * a column of the table, ascending with nulls last, and together, past
 * the columns its access path binds by equality (constant in every
 * row), the leading columns of the index it scans (choose_path(), as
 * join_level() will call it), or when none bounds it, of its primary key
 * (keel_scan_begin()'s order then) or else of another index, then read
 * whole (*order_index).  The rows then stream, and LIMIT stops the
 * scan.
 */
static bool keys_give_order(const from_item *it, const output *o,
                            const uint16_t *keys, uint16_t nkeys,
                            uint16_t neq);

static bool scan_sorts(const from_list *from, const sql_expr *where,
                       const output *o, const char **order_index)
{
    const from_item *it = &from->items[0];
    const sql_table *t = &it->t;
    const sql_expr *conds[2] = {it->on_expr, where};
    uint16_t neq = 0;
    access_path ap;

    *order_index = NULL;
    if (from->n != 1 || it->is_rows || it->right || it->merge != NULL ||
        o->nkeys == 0 || o->distinct || o->ndistinct_on > 0 ||
        o->win != NULL || o->srfs != NULL)
        return false;
    choose_path(t, it->off, conds, 2, &ap);
    if (ap.keys != NULL) {
        while (neq < ap.nkeys && ap.kb[neq].eq != NULL)
            neq++;
        return keys_give_order(it, o, ap.keys, ap.nkeys, neq);
    }
    /* Unbounded: the primary key's order, or an index read whole */
    if (t->info.npkey > 0 &&
        keys_give_order(it, o, t->info.pkey, t->info.npkey, 0))
        return true;
    for (uint16_t x = 0; x < t->nidx; x++)
        if (!t->idx[x].primary && t->idx[x].nkeys > 0 &&
            t->idx[x].nkeys <= 16 &&
            keys_give_order(it, o, t->idx[x].keys, t->idx[x].nkeys, 0)) {
            *order_index = t->idx[x].name;
            return true;
        }
    return false;
}

/* Whether ORDER BY's keys are the key columns keys[] (after the first
 * neq, which equalities fix: constant in every row), in order. */
static bool keys_give_order(const from_item *it, const output *o,
                            const uint16_t *keys, uint16_t nkeys,
                            uint16_t neq)
{
    const sql_table *t = &it->t;
    uint16_t at = 0;

    for (uint16_t i = 0; i < o->nkeys; i++) {
        const sort_key *k = &o->keys[i];
        uint16_t a, j;
        if (k->desc || k->nulls_first || k->expr->kind != SQL_EXPR_COLUMN ||
            k->expr->u.column < it->off ||
            k->expr->u.column >= it->off + t->info.ncols)
            return false;
        a = (uint16_t)(k->expr->u.column - it->off + 1);
        if (!order_type(t->cols[a - 1].type))
            return false;
        /* past the columns equality fixes, up to this one */
        while (at < neq && keys[at] != a)
            at++;
        if (at < nkeys && keys[at] == a) {
            at++;
            continue;
        }
        for (j = 0; j < neq && keys[j] != a; j++)
            ;
        if (j == neq)
            return false; /* neither next in the index nor constant */
    }
    return true;
}

static keel_status select_run_body(sql_session *s,
                                   const PgQuery__SelectStmt *st,
                                   const sql_scope *outer,
                                   const sql_value *outer_row, bool describe,
                                   sql_rowset *into)
{
    from_list from;
    from_ctx ctx = {.outer = outer, .outer_row = outer_row,
                    .describe = describe};
    sql_scope scope, gscope, *sp = NULL, *op;
    sql_grouping g;
    sql_windowing win;
    sql_srf_list srfs;
    select_run run;
    output o;
    sql_column *cols;
    bool grouped;
    uint32_t reads = s->expr_engine_reads;
    keel_status rc;

    memset(&o, 0, sizeof(o));
    memset(&g, 0, sizeof(g));
    memset(&from, 0, sizeof(from));
    memset(&run, 0, sizeof(run));
    memset(&win, 0, sizeof(win));
    memset(&srfs, 0, sizeof(srfs));
    win.st = st;
    o.into = into;
    if (st->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
        return setop_query(s, st, outer, outer_row, describe, into);
    if (st->n_values_lists > 0) {
        /* A subquery's rows are the lists'; a query of its own is
         * SELECT * FROM (VALUES ...) "*VALUES*", with its ORDER BY and
         * LIMIT. */
        PgQuery__RangeSubselect *rs;
        PgQuery__Alias *al;
        PgQuery__Node *vfrom;
        PgQuery__SelectStmt *sel;
        const PgQuery__SelectStmt *star;
        if (into != NULL && st->n_sort_clause == 0 && st->limit_count == NULL &&
            st->limit_offset == NULL)
            return values_rows(s, st, outer, outer_row, describe, into);
        rs = sql_alloc(&s->arena, sizeof(*rs));
        al = sql_alloc(&s->arena, sizeof(*al));
        vfrom = sql_alloc(&s->arena, sizeof(*vfrom));
        sel = sql_alloc(&s->arena, sizeof(*sel));
        if (rs == NULL || al == NULL || vfrom == NULL || sel == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        *al = (PgQuery__Alias)PG_QUERY__ALIAS__INIT;
        al->aliasname = "*VALUES*";
        *rs = (PgQuery__RangeSubselect)PG_QUERY__RANGE_SUBSELECT__INIT;
        rs->subquery = sql_alloc(&s->arena, sizeof(*rs->subquery));
        if (rs->subquery == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        *rs->subquery = (PgQuery__Node)PG_QUERY__NODE__INIT;
        rs->subquery->node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
        /* The lists alone: the sort and limit apply outside. */
        *sel = *st;
        sel->n_sort_clause = 0;
        sel->limit_count = sel->limit_offset = NULL;
        rs->subquery->select_stmt = sel;
        rs->alias = al;
        *vfrom = (PgQuery__Node)PG_QUERY__NODE__INIT;
        vfrom->node_case = PG_QUERY__NODE__NODE_RANGE_SUBSELECT;
        vfrom->range_subselect = rs;
        rc = sql_star_select(s, vfrom, &star);
        if (rc != KEEL_OK)
            return rc;
        {
            PgQuery__SelectStmt *q = (PgQuery__SelectStmt *)star;
            q->n_sort_clause = st->n_sort_clause;
            q->sort_clause = st->sort_clause;
            q->limit_count = st->limit_count;
            q->limit_offset = st->limit_offset;
            q->limit_option = st->limit_option;
        }
        return select_body(s, star, outer, outer_row, describe, into);
    }
    if (st->into_clause != NULL)
        return sql_unsupported(s, -1, "SELECT INTO");
    if (st->n_locking_clause > 0)
        return sql_unsupported(s, -1, "FOR UPDATE and FOR SHARE");
    if (st->n_distinct_clause > 0) {
        /* DISTINCT is a list holding one empty node; DISTINCT ON names. */
        if (st->n_distinct_clause > 1 || st->distinct_clause[0]->node_case != 0)
            o.ndistinct_on = (uint16_t)st->n_distinct_clause;
        else
            o.distinct = true;
    }
    for (size_t i = 0; i < st->n_from_clause; i++) {
        rc = from_add(s, &from, &ctx, st->from_clause[i], false, NULL);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = from_lateral(s, &from, outer);
    if (rc != KEEL_OK)
        return rc;
    if (from.n > 0 || outer != NULL) {
        rc = from_scope_upto(s, &from, from.n, outer, &scope);
        if (rc != KEEL_OK)
            return rc;
        sp = &scope;
    }
    /* ON conditions see the tables joined so far (and, as in
     * PostgreSQL's scoping errors, are checked against all). */
    for (uint16_t k = 0; k < from.n; k++) {
        sql_expr *e;
        if (from.items[k].on == NULL)
            continue;
        s->clause = "JOIN conditions";
        rc = sql_expr_prepare(s, sp, from.items[k].on, &e);
        s->clause = NULL;
        if (rc == KEEL_OK && e->type != SQL_TYPE_BOOL)
            rc = sql_fail_at(s, e->location, KEEL_ETYPE, "42804",
                             "argument of JOIN/ON must be type boolean, not "
                             "type %s",
                             sql_type_name(e->type));
        if (rc == KEEL_OK) {
            /* nothing joined after it: its columns are not read yet */
            const sql_expr *late = column_from(
                e, (uint16_t)(from.items[k].off + from.items[k].t.info.ncols));
            if (late != NULL)
                rc = sql_fail_at(s, late->location, KEEL_ENOENT, "42P01",
                                 "missing FROM-clause entry for table \"%s\"",
                                 sql_scope_table_of(sp, late->u.column));
        }
        if (rc != KEEL_OK)
            return rc;
        from.items[k].on_expr = e;
    }
    if (st->where_clause != NULL) {
        s->clause = "WHERE";
        rc = sql_expr_prepare(s, sp, st->where_clause, &run.where);
        s->clause = NULL;
        if (rc == KEEL_OK && run.where->type != SQL_TYPE_BOOL)
            rc = sql_fail_at(s, run.where->location, KEEL_ETYPE, "42804",
                             "argument of WHERE must be type boolean, not type "
                             "%s",
                             sql_type_name(run.where->type));
        if (rc != KEEL_OK)
            return rc;
    }
    /* A query groups when it says GROUP BY or HAVING, or when its output
     * holds an aggregate (found by analysing it as not grouping). */
    grouped = st->n_group_clause > 0 || st->having_clause != NULL;
    op = sp;
    s->windowing = &win;
    s->srfs = &srfs;
    if (!grouped) {
        s->saw_aggregate = false;
        rc = sql_targets_analyse(s, sp, st->target_list, st->n_target_list, &o.tl,
                             &o.nt);
        if (rc != KEEL_OK && !s->saw_aggregate)
            return rc;
        grouped = rc != KEEL_OK;
    }
    if (grouped) {
        g.key_slot = sql_alloc(&s->arena, (from.ncols + 1u) * sizeof(int16_t));
        run.gcols = sql_alloc(&s->arena, (from.ncols + st->n_group_clause + 1u) *
                                             sizeof(uint16_t));
        if (g.key_slot == NULL || run.gcols == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (sp == NULL && st->n_group_clause > 0)
            return sql_unsupported(s, -1, "GROUP BY without FROM");
        win.nfns = win.nwins = 0;
        if (sp != NULL) {
            s->windowing = NULL;
            s->srfs = NULL;
            s->clause = "GROUP BY";
            rc = group_keys(s, st, sp, &from, &g, run.gcols);
            s->windowing = &win;
            s->srfs = &srfs;
            s->clause = NULL;
            if (rc != KEEL_OK)
                return rc;
            gscope = *sp;
        } else {
            memset(&gscope, 0, sizeof(gscope));
            gscope.table = "";
        }
        g.input = sp;
        gscope.grouping = &g;
        op = &gscope;
        srfs.n = 0; /* the first try's are gone */
        rc = sql_targets_analyse(s, op, st->target_list, st->n_target_list, &o.tl,
                             &o.nt);
        s->srfs = NULL;
        if (rc == KEEL_OK && st->having_clause != NULL) {
            s->windowing = NULL;
            s->clause = "HAVING";
            rc = sql_expr_prepare(s, op, st->having_clause, &o.having);
            s->windowing = &win;
            s->clause = NULL;
            if (rc == KEEL_OK && o.having->type != SQL_TYPE_BOOL)
                rc = sql_fail_at(s, o.having->location, KEEL_ETYPE, "42804",
                                 "argument of HAVING must be type boolean, not "
                                 "type %s",
                                 sql_type_name(o.having->type));
        }
        if (rc != KEEL_OK)
            return rc;
        run.g = &g;
    }
    s->srfs = NULL;
    o.srfs = srfs.n > 0 ? &srfs : NULL;
    if (st->n_sort_clause > 0 || o.ndistinct_on > 0) {
        rc = order_by(s, st, op, &o);
        if (rc == KEEL_OK && o.ndistinct_on > 0)
            rc = distinct_on(s, st, op, &o);
        if (rc != KEEL_OK)
            return rc;
    }
    s->windowing = NULL;
    if (win.nfns > 0) {
        o.win = &win;
        win.width = grouped ? (uint16_t)(g.nkeys + g.naggs) : from.ncols;
    }
    /* ORDER BY that the scan's own order gives: no sort (asked only of a
     * query that has one) */
    if (o.nkeys > 0 && !grouped && from.n == 1) {
        const char *order_index = NULL;
        if (scan_sorts(&from, run.where, &o, &order_index)) {
            from.items[0].sc.ordered = true;
            from.items[0].sc.order_index = order_index;
            o.nkeys = 0;
        }
    }
    o.collect = o.nkeys > 0 || o.distinct;
    run.materialize = s->expr_engine_reads != reads;
    rc = sql_limit_value(s, st->limit_count, "LIMIT", &o.limit);
    if (rc == KEEL_OK)
        rc = sql_limit_value(s, st->limit_offset, "OFFSET", &o.offset);
    if (rc != KEEL_OK)
        return rc;
    if (o.offset < 0)
        o.offset = 0;
    if (into != NULL) {
        /* A subquery's result: its columns, then (unless describing)
         * its rows. */
        into->ncols = o.nt;
        into->n = into->cap = 0;
        into->vals = NULL;
        into->cols = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(*into->cols));
        into->types = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(uint32_t));
        into->col_table = sql_alloc(&s->arena, (o.nt + 1u) * sizeof(char *));
        if (into->cols == NULL || into->types == NULL || into->col_table == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memset(into->cols, 0, (o.nt + 1u) * sizeof(*into->cols));
        for (uint16_t i = 0; i < o.nt; i++) {
            uint32_t type = o.tl[i].expr->type;
            snprintf(into->cols[i].name, sizeof(into->cols[i].name), "%s",
                     o.tl[i].name);
            into->cols[i].type = KEEL_TEXT;
            into->types[i] = type == SQL_TYPE_UNKNOWN && !into->keep_unknown
                                 ? SQL_TYPE_TEXT
                                 : type;
            into->col_table[i] = o.tl[i].table;
        }
        if (into->want_typmods) {
            into->typmods =
                sql_alloc(&s->arena, (o.nt + 1u) * sizeof(*into->typmods));
            if (into->typmods == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        for (uint16_t i = 0; into->want_typmods && i < o.nt; i++) {
            /* A table's column named whole keeps its length. */
            const sql_expr *e = o.tl[i].expr;
            uint16_t c = e->kind == SQL_EXPR_COLUMN && sp != NULL
                             ? e->u.column
                             : UINT16_MAX;
            const from_item *it;
            into->typmods[i] = -1;
            if (grouped && c != UINT16_MAX)
                c = c < g.nkeys ? run.gcols[c] : UINT16_MAX;
            it = c != UINT16_MAX ? from_item_of(&from, c) : NULL;
            if (it != NULL && !it->is_rows)
                into->typmods[i] =
                    sql_column_typmod(&it->t.cols[c - it->off]);
        }
    } else if (s->explain != NULL) {
        /* The plan, top down: what limits, sorts and groups the rows,
         * then the joins as left-deep nested loops. */
        sql_explain *x = s->explain;
        int depth = 0;
        if (o.limit >= 0 || o.offset > 0)
            sql_explain_node(x, depth++, "Limit");
        if (o.distinct || o.ndistinct_on > 0)
            sql_explain_node(x, depth++, "Unique");
        if (o.nkeys > 0 || o.distinct)
            sql_explain_node(x, depth++, "Sort");
        if (o.srfs != NULL)
            sql_explain_node(x, depth++, "ProjectSet");
        if (o.win != NULL)
            depth = sql_window_explain(x, &win, depth);
        if (grouped)
            sql_explain_node(x, depth++, g.nkeys > 0 ? "GroupAggregate"
                                                     : "Aggregate");
        if (grouped && g.nkeys > 0)
            sql_explain_node(x, depth++, "Sort");
        if (from.n == 0)
            sql_explain_node(x, depth, "Result");
        if (from.n > 0)
            explain_join(x, &from, run.where, (uint16_t)(from.n - 1), depth);
        return KEEL_OK;
    }
    /* The result's description. */
    cols = sql_alloc(&s->arena, (o.nt + 1) * sizeof(*cols));
    o.out = sql_alloc(&s->arena, (o.nt + 1) * sizeof(*o.out));
    o.txt = sql_alloc(&s->arena, (o.nt + 1) * sizeof(*o.txt));
    o.lens = sql_alloc(&s->arena, (o.nt + 1) * sizeof(*o.lens));
    run.row = sql_alloc(&s->arena, (from.ncols + 1u) * sizeof(sql_value));
    if (cols == NULL || o.out == NULL || o.txt == NULL || o.lens == NULL ||
        run.row == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (outer_row != NULL && outer != NULL)
        memcpy(run.row, outer_row, outer->ncols * sizeof(sql_value));
    for (uint16_t i = 0; i < o.nt; i++) {
        const sql_expr *e = o.tl[i].expr;
        uint32_t type = e->type == SQL_TYPE_UNKNOWN ? SQL_TYPE_TEXT
                                                  : sql_type_wire(e->type);
        cols[i] = (sql_column){.name = o.tl[i].name, .type = type,
                               .typlen = sql_type_len(type), .typmod = -1};
        if (s->nrformats > 0)
            cols[i].format = s->rformats[s->nrformats == 1 ? 0 : i];
        if (e->kind == SQL_EXPR_COLUMN && sp != NULL) {
            uint16_t c = e->u.column;
            if (grouped)
                c = c < g.nkeys ? run.gcols[c] : UINT16_MAX;
            if (c != UINT16_MAX) {
                const from_item *it = from_item_of(&from, c);
                uint16_t a = it != NULL ? (uint16_t)(c - it->off) : 0;
                if (it == NULL || it->is_rows)
                    continue;
                cols[i].table = it->t.info.oid;
                cols[i].attnum = (int16_t)(a + 1);
                if (sql_column_typmod(&it->t.cols[a]) >= 0) {
                    cols[i].type = sql_column_type(&it->t.cols[a]);
                    /* numeric's typmod has PostgreSQL's 4 in it */
                    cols[i].typmod =
                        sql_column_typmod(&it->t.cols[a]) +
                        (it->t.cols[a].type == KEEL_NUMERIC ? 0 : 4);
                }
            }
        }
    }
    if (into == NULL && s->sink->columns(s->sink->ctx, cols, o.nt) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    if (describe)
        return KEEL_OK;
    run.from = &from;
    run.o = &o;
    if (grouped && g.nkeys == 0) {
        /* One group: its aggregates fold as the rows come, unless one
         * needs its values sorted (DISTINCT). */
        run.fold = true;
        for (uint16_t a = 0; a < g.naggs; a++)
            run.fold = run.fold && !g.aggs[a].distinct && g.aggs[a].norder == 0;
    }
    if (run.fold) {
        run.fstate = sql_alloc(&s->arena, (g.naggs + 1u) * sizeof(sql_value));
        run.fcount = sql_alloc(&s->arena, (g.naggs + 1u) * sizeof(int64_t));
        run.facc = calloc(g.naggs + 1u, sizeof(*run.facc));
        if (run.fstate == NULL || run.fcount == NULL || run.facc == NULL) {
            free(run.facc);
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        for (uint16_t a = 0; a < g.naggs; a++)
            sql_agg_init(&g.aggs[a], &run.fstate[a], &run.facc[a],
                         &run.fcount[a]);
    }
    rc = join_level(s, &run, 0);
    if (rc == KEEL_OK)
        rc = right_rest(s, &run);
    if (run.fold) {
        for (uint16_t a = 0; rc == KEEL_OK && a < g.naggs; a++)
            rc = sql_agg_final(s, &g.aggs[a], &run.fstate[a], &run.facc[a],
                               run.fcount[a]);
        if (rc == KEEL_OK)
            rc = output_row(s, &o, run.fstate);
        for (uint16_t a = 0; a < g.naggs; a++)
            numeric_free(&run.facc[a].n);
        free(run.facc);
    } else if (rc == KEEL_OK && grouped) {
        rc = group_finish(s, &g, run.gin, run.ngin, &o);
    }
    if (rc == KEEL_OK && o.win != NULL)
        rc = sql_window_run(s, &win, window_emit, &o);
    if (rc == KEEL_OK)
        rc = output_finish(s, &o);
    if (rc != KEEL_OK || into != NULL)
        return rc;
    return sql_complete_count(s, "SELECT", (uint64_t)o.sent);
}

/* A query of its own: the window functions, their values and the clause
 * being analysed are those of the query around it only once it ends. */
static keel_status select_body(sql_session *s, const PgQuery__SelectStmt *st,
                               const sql_scope *outer,
                               const sql_value *outer_row, bool describe,
                               sql_rowset *into)
{
    sql_windowing *w = s->windowing;
    const sql_value *wv = s->win_vals;
    sql_srf_list *srfs = s->srfs;
    const char *clause = s->clause;
    keel_status rc;

    s->windowing = NULL;
    s->srfs = NULL;
    s->clause = NULL;
    rc = select_run_body(s, st, outer, outer_row, describe, into);
    s->windowing = w;
    s->win_vals = wv;
    s->srfs = srfs;
    s->clause = clause;
    return rc;
}

keel_status sql_select_rows(sql_session *s, const PgQuery__SelectStmt *st,
                            const sql_scope *outer, const sql_value *outer_row,
                            bool describe, sql_rowset *out)
{
    /* A subquery is no statement of its own: nothing of it is sent, nor
     * explained. */
    sql_explain *x = s->explain;
    keel_status rc;

    s->explain = NULL;
    s->subquery_depth++;
    rc = select_query(s, st, outer, outer_row, describe, out);
    s->subquery_depth--;
    s->explain = x;
    return rc;
}

keel_status sql_exec_select(sql_session *s, const PgQuery__SelectStmt *st)
{
    if (st->into_clause != NULL) {
        /* SELECT ... INTO name: CREATE TABLE name AS SELECT ... */
        PgQuery__CreateTableAsStmt ctas = PG_QUERY__CREATE_TABLE_AS_STMT__INIT;
        PgQuery__SelectStmt *q = sql_alloc(&s->arena, sizeof(*q));
        PgQuery__Node *n = sql_alloc(&s->arena, sizeof(*n));
        if (q == NULL || n == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        *q = *st;
        q->into_clause = NULL;
        *n = (PgQuery__Node)PG_QUERY__NODE__INIT;
        n->node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
        n->select_stmt = q;
        ctas.query = n;
        ctas.into = st->into_clause;
        ctas.objtype = PG_QUERY__OBJECT_TYPE__OBJECT_TABLE;
        ctas.is_select_into = true;
        return sql_exec_create_table_as(s, &ctas);
    }
    if (st->n_locking_clause > 0)
        return sql_select_locked(s, st);
    return select_query(s, st, NULL, NULL, s->describe_only, NULL);
}
