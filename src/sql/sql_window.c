/*
 * Window functions: a call with OVER analysed into a slot of the query's
 * windowing, and every such call computed over the rows the query would
 * send (sql_internal.h's sql_windowing).
 *
 * The rows that pass WHERE, grouping and HAVING are kept.  Each window
 * sorts them (by index, so the rows stay where they are) by its
 * PARTITION BY and then its ORDER BY keys; a partition is a run of equal
 * partition keys, peers a run of equal order keys in it.  Each function
 * then walks its window's order.  An aggregate over a frame that starts
 * at the partition's start is folded as the frame's end moves on, one
 * step a row; any other frame is folded whole for each row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

/* PostgreSQL's FRAMEOPTION bits, as its grammar sets them. */
#define FRAME_ROWS 0x00004
#define FRAME_GROUPS 0x00008
#define FRAME_START_UNBOUNDED_PRECEDING 0x00020
#define FRAME_END_UNBOUNDED_FOLLOWING 0x00100
#define FRAME_START_CURRENT_ROW 0x00200
#define FRAME_END_CURRENT_ROW 0x00400
#define FRAME_START_OFFSET_PRECEDING 0x00800
#define FRAME_END_OFFSET_PRECEDING 0x01000
#define FRAME_START_OFFSET_FOLLOWING 0x02000
#define FRAME_END_OFFSET_FOLLOWING 0x04000
#define FRAME_EXCLUDE_CURRENT_ROW 0x08000
#define FRAME_EXCLUDE_GROUP 0x10000
#define FRAME_EXCLUDE_TIES 0x20000
#define FRAME_NONDEFAULT 0x00001
#define FRAME_START_OFFSET \
    (FRAME_START_OFFSET_PRECEDING | FRAME_START_OFFSET_FOLLOWING)
#define FRAME_END_OFFSET (FRAME_END_OFFSET_PRECEDING | FRAME_END_OFFSET_FOLLOWING)
#define FRAME_EXCLUDE \
    (FRAME_EXCLUDE_CURRENT_ROW | FRAME_EXCLUDE_GROUP | FRAME_EXCLUDE_TIES)

static const struct {
    const char *name;
    sql_win_kind kind;
    uint16_t min_args, max_args;
} win_funcs[] = {
    {"row_number", SQL_WIN_ROW_NUMBER, 0, 0},
    {"rank", SQL_WIN_RANK, 0, 0},
    {"dense_rank", SQL_WIN_DENSE_RANK, 0, 0},
    {"percent_rank", SQL_WIN_PERCENT_RANK, 0, 0},
    {"cume_dist", SQL_WIN_CUME_DIST, 0, 0},
    {"ntile", SQL_WIN_NTILE, 1, 1},
    {"lag", SQL_WIN_LAG, 1, 3},
    {"lead", SQL_WIN_LEAD, 1, 3},
    {"first_value", SQL_WIN_FIRST_VALUE, 1, 1},
    {"last_value", SQL_WIN_LAST_VALUE, 1, 1},
    {"nth_value", SQL_WIN_NTH_VALUE, 2, 2},
};

static keel_status nomem(sql_session *s)
{
    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
}

bool sql_window_only(const char *name)
{
    for (size_t i = 0; i < sizeof(win_funcs) / sizeof(win_funcs[0]); i++)
        if (strcmp(win_funcs[i].name, name) == 0)
            return true;
    return false;
}

/* ---- analysis ------------------------------------------------------------ */

/* A window's parts once references to named windows are followed. */
typedef struct win_parts {
    PgQuery__Node **part, **order;
    size_t npart, norder;
    int32_t frame;
    PgQuery__Node *start_off, *end_off;
    const void *def;
} win_parts;

static keel_status win_named(sql_session *s, const char *name,
                             int32_t location, const PgQuery__WindowDef **out)
{
    const PgQuery__SelectStmt *st = s->windowing->st;

    for (size_t i = 0; st != NULL && i < st->n_window_clause; i++) {
        const PgQuery__WindowDef *d = st->window_clause[i]->window_def;
        if (d != NULL && d->name != NULL && strcmp(d->name, name) == 0) {
            *out = d;
            return KEEL_OK;
        }
    }
    return sql_fail_at(s, location, KEEL_ENOENT, "42704",
                       "window \"%s\" does not exist", name);
}

/* d's parts: over, an OVER clause's (OVER name names a window whole);
 * depth bounds a chain of references. */
static keel_status win_resolve(sql_session *s, const PgQuery__WindowDef *d,
                               bool over, int depth, win_parts *p)
{
    const PgQuery__WindowDef *ref;
    win_parts b;
    keel_status rc;

    if (depth > 64)
        return sql_fail_at(s, d->location, KEEL_EINVAL, "42P20",
                           "window references nest too deeply");
    if (over && d->name != NULL && d->name[0] != '\0') {
        rc = win_named(s, d->name, d->location, &ref);
        if (rc == KEEL_OK)
            rc = win_resolve(s, ref, false, depth + 1, p);
        return rc;
    }
    memset(p, 0, sizeof(*p));
    p->part = d->partition_clause;
    p->npart = d->n_partition_clause;
    p->order = d->order_clause;
    p->norder = d->n_order_clause;
    if (d->refname != NULL && d->refname[0] != '\0') {
        rc = win_named(s, d->refname, d->location, &ref);
        if (rc == KEEL_OK)
            rc = win_resolve(s, ref, false, depth + 1, &b);
        if (rc != KEEL_OK)
            return rc;
        if (d->n_partition_clause > 0)
            return sql_fail_at(s, d->location, KEEL_EINVAL, "42P20",
                               "cannot override PARTITION BY clause of window "
                               "\"%s\"",
                               d->refname);
        if (d->n_order_clause > 0 && b.norder > 0)
            return sql_fail_at(s, d->location, KEEL_EINVAL, "42P20",
                               "cannot override ORDER BY clause of window "
                               "\"%s\"",
                               d->refname);
        if (b.frame & FRAME_NONDEFAULT) {
            rc = sql_fail_at(s, d->location, KEEL_EINVAL, "42P20",
                             "cannot copy window \"%s\" because it has a "
                             "frame clause",
                             d->refname);
            if (over)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "Omit the parentheses in this OVER clause.");
            return rc;
        }
        p->part = b.part;
        p->npart = b.npart;
        if (d->n_order_clause == 0) {
            p->order = b.order;
            p->norder = b.norder;
        }
    }
    p->frame = d->frame_options;
    p->start_off = d->start_offset;
    p->end_off = d->end_offset;
    p->def = d;
    return KEEL_OK;
}

/* A frame's offset: an integer expression of no columns, as bigint. */
static keel_status frame_offset(sql_session *s, const PgQuery__Node *n,
                                const char *mode, sql_expr **out)
{
    keel_status rc = sql_expr_prepare(s, NULL, n, out);

    if (rc != KEEL_OK)
        return rc;
    if (!sql_type_is_int((*out)->type) && (*out)->type != SQL_TYPE_UNKNOWN)
        return sql_fail_at(s, (*out)->location, KEEL_ETYPE, "42804",
                           "argument of %s must be type bigint, not type %s",
                           mode, sql_type_name((*out)->type));
    return sql_expr_coerce(s, out, SQL_TYPE_INT8);
}

/* A RANGE frame's offset, of the type the order key's type calls for:
 * an integer's, numeric, double precision, or an interval for dates and
 * timestamps, as PostgreSQL's in_range functions take them. */
static keel_status range_offset(sql_session *s, const PgQuery__Node *n,
                                uint32_t key_type, int32_t location,
                                sql_expr **out)
{
    uint32_t want = sql_type_is_int(key_type) && key_type != SQL_TYPE_OID
                        ? SQL_TYPE_INT8
                    : key_type == SQL_TYPE_NUMERIC ? SQL_TYPE_NUMERIC
                    : key_type == SQL_TYPE_FLOAT8  ? SQL_TYPE_FLOAT8
                    : sql_type_is_datetime(key_type) ? SQL_TYPE_INTERVAL
                                                     : 0;
    keel_status rc;
    uint32_t t;

    if (want == 0)
        return sql_fail_at(s, location, KEEL_ENOENT, "42883",
                           "RANGE with offset PRECEDING/FOLLOWING is not "
                           "supported for column type %s",
                           sql_type_name(key_type));
    rc = sql_expr_prepare(s, NULL, n, out);
    if (rc != KEEL_OK)
        return rc;
    t = (*out)->type;
    if (t != want && t != SQL_TYPE_UNKNOWN &&
        !(want != SQL_TYPE_INTERVAL && sql_type_is_int(t) &&
          t != SQL_TYPE_OID) &&
        !(want == SQL_TYPE_FLOAT8 && sql_type_is_number(t)))
        return sql_fail_at(s, location, KEEL_ENOENT, "42883",
                           "RANGE with offset PRECEDING/FOLLOWING is not "
                           "supported for column type %s and offset type %s",
                           sql_type_name(key_type), sql_type_name(t));
    return t == want ? KEEL_OK : sql_expr_coerce(s, out, want);
}

/* The window of OVER clause d: one already analysed from the same
 * definition, or a new one. */
static keel_status win_add(sql_session *s, const sql_scope *scope,
                           const PgQuery__WindowDef *d, uint16_t *out)
{
    sql_windowing *w = s->windowing;
    sql_window *win;
    win_parts p;
    uint16_t nk;
    keel_status rc = win_resolve(s, d, true, 0, &p);

    if (rc != KEEL_OK)
        return rc;
    for (uint16_t i = 0; i < w->nwins; i++)
        if (w->wins[i].def == p.def) {
            *out = i;
            return KEEL_OK;
        }
    if ((p.frame & FRAME_GROUPS) && p.norder == 0)
        return sql_fail_at(s, d->location, KEEL_EINVAL, "42P20",
                           "GROUPS mode requires an ORDER BY clause");
    if (!(p.frame & (FRAME_ROWS | FRAME_GROUPS)) &&
        (p.frame & (FRAME_START_OFFSET | FRAME_END_OFFSET)) && p.norder != 1)
        return sql_fail_at(s, d->location, KEEL_EINVAL, "42P20",
                           "RANGE with offset PRECEDING/FOLLOWING requires "
                           "exactly one ORDER BY column");
    if (p.npart + p.norder > 1600)
        return sql_fail_at(s, d->location, KEEL_ETOOBIG, "54011",
                           "too many window keys");
    if (w->nwins == w->capwins) {
        uint16_t cap = w->capwins == 0 ? 4 : (uint16_t)(w->capwins * 2);
        sql_window *nw = sql_alloc(&s->arena, cap * sizeof(*nw));
        if (nw == NULL)
            return nomem(s);
        if (w->nwins > 0)
            memcpy(nw, w->wins, w->nwins * sizeof(*nw));
        w->wins = nw;
        w->capwins = cap;
    }
    win = &w->wins[w->nwins];
    memset(win, 0, sizeof(*win));
    nk = (uint16_t)(p.npart + p.norder);
    win->keys = sql_alloc(&s->arena, (nk + 1u) * sizeof(*win->keys));
    win->desc = sql_alloc(&s->arena, nk + 1u);
    win->nulls_first = sql_alloc(&s->arena, nk + 1u);
    if (win->keys == NULL || win->desc == NULL || win->nulls_first == NULL)
        return nomem(s);
    w->inside = "window definitions";
    for (uint16_t i = 0; rc == KEEL_OK && i < nk; i++) {
        const PgQuery__Node *n;
        win->desc[i] = win->nulls_first[i] = false;
        if (i < p.npart) {
            n = p.part[i];
        } else {
            const PgQuery__SortBy *sb = p.order[i - p.npart]->sort_by;
            if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING) {
                rc = sql_unsupported(s, sb->location, "ORDER BY ... USING");
                break;
            }
            n = sb->node;
            win->desc[i] = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
            win->nulls_first[i] =
                sb->sortby_nulls ==
                    PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
                (sb->sortby_nulls ==
                     PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
                 win->desc[i]);
        }
        rc = sql_expr_prepare(s, scope, n, &win->keys[i]);
        if (rc == KEEL_OK && win->keys[i]->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &win->keys[i], SQL_TYPE_TEXT);
    }
    w->inside = NULL;
    if (rc == KEEL_OK && !(p.frame & (FRAME_ROWS | FRAME_GROUPS)) &&
        (p.frame & (FRAME_START_OFFSET | FRAME_END_OFFSET))) {
        win->range_type = win->keys[p.npart]->type;
        if (rc == KEEL_OK && (p.frame & FRAME_START_OFFSET))
            rc = range_offset(s, p.start_off, win->range_type, d->location,
                              &win->start_off);
        if (rc == KEEL_OK && (p.frame & FRAME_END_OFFSET))
            rc = range_offset(s, p.end_off, win->range_type, d->location,
                              &win->end_off);
    } else {
        if (rc == KEEL_OK && (p.frame & FRAME_START_OFFSET))
            rc = frame_offset(s, p.start_off,
                              p.frame & FRAME_GROUPS ? "GROUPS" : "ROWS",
                              &win->start_off);
        if (rc == KEEL_OK && (p.frame & FRAME_END_OFFSET))
            rc = frame_offset(s, p.end_off,
                              p.frame & FRAME_GROUPS ? "GROUPS" : "ROWS",
                              &win->end_off);
    }
    if (rc != KEEL_OK)
        return rc;
    win->npart = (uint16_t)p.npart;
    win->norder = (uint16_t)p.norder;
    win->frame = p.frame;
    win->def = p.def;
    *out = w->nwins++;
    return KEEL_OK;
}

/* An integer argument (ntile's, lag's offset, nth_value's n): int4. */
static keel_status int_arg(sql_session *s, sql_expr **e, bool *ok)
{
    uint32_t t = (*e)->type;

    *ok = t == SQL_TYPE_UNKNOWN ||
          (sql_type_is_int(t) && t != SQL_TYPE_INT8 && t != SQL_TYPE_OID);
    return *ok ? sql_expr_coerce(s, e, SQL_TYPE_INT4) : KEEL_OK;
}

static keel_status no_such(sql_session *s, int32_t location, const char *name,
                           sql_expr **args, uint16_t n)
{
    char buf[256];
    size_t len = 0;

    buf[0] = '\0';
    for (uint16_t i = 0; i < n && len < sizeof(buf); i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
                                i > 0 ? ", " : "",
                                sql_type_name(args[i]->type));
    return sql_fail_at(s, location, KEEL_ENOENT, "42883",
                       "function %s(%s) does not exist", name, buf);
}

/* A window function's arguments and result type. */
static keel_status win_args(sql_session *s, const sql_scope *scope,
                            const PgQuery__FuncCall *fc, const char *name,
                            sql_window_fn *fn, uint32_t *type)
{
    bool ok = true;
    keel_status rc = KEEL_OK;

    for (uint16_t a = 0; rc == KEEL_OK && a < fn->nargs; a++)
        rc = sql_expr_prepare(s, scope, fc->args[a], &fn->args[a]);
    if (rc != KEEL_OK)
        return rc;
    switch (fn->kind) {
    case SQL_WIN_ROW_NUMBER:
    case SQL_WIN_RANK:
    case SQL_WIN_DENSE_RANK:
        *type = SQL_TYPE_INT8;
        break;
    case SQL_WIN_PERCENT_RANK:
    case SQL_WIN_CUME_DIST:
        *type = SQL_TYPE_FLOAT8;
        break;
    case SQL_WIN_NTILE:
        rc = int_arg(s, &fn->args[0], &ok);
        *type = SQL_TYPE_INT4;
        break;
    case SQL_WIN_NTH_VALUE:
        rc = int_arg(s, &fn->args[1], &ok);
        /* fall through */
    default: /* the value functions: their argument's type */
        if (rc == KEEL_OK && fn->args[0]->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &fn->args[0], SQL_TYPE_TEXT);
        if (rc == KEEL_OK && ok && fn->nargs > 1 &&
            (fn->kind == SQL_WIN_LAG || fn->kind == SQL_WIN_LEAD))
            rc = int_arg(s, &fn->args[1], &ok);
        if (rc == KEEL_OK && ok && fn->nargs > 2) {
            /* lag's and lead's default: the value's type with it */
            sql_expr *pair[2] = {fn->args[0], fn->args[2]};
            uint32_t t;
            rc = sql_expr_unify(s, pair, 2, fn->args[2]->location, &t);
            fn->args[0] = pair[0];
            fn->args[2] = pair[1];
        }
        *type = fn->args[0]->type;
        break;
    }
    if (rc == KEEL_OK && !ok)
        return no_such(s, fc->location, name, fn->args, fn->nargs);
    return rc;
}

keel_status sql_window_analyse(sql_session *s, const sql_scope *scope,
                               const PgQuery__FuncCall *fc, const char *name,
                               sql_expr **out)
{
    sql_windowing *w = s->windowing;
    sql_window_fn fn;
    sql_expr *e;
    uint32_t type = 0;
    uint16_t n0;
    bool agg = false;
    keel_status rc;

    if (w == NULL)
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "42P20",
                           "window functions are not allowed %s%s",
                           s->clause != NULL ? "in " : "here",
                           s->clause != NULL ? s->clause : "");
    if (w->inside != NULL && strcmp(w->inside, "aggregate") == 0)
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "42803",
                           "aggregate function calls cannot contain window "
                           "function calls");
    if (w->inside != NULL && strcmp(w->inside, "nested") == 0)
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "42P20",
                           "window function calls cannot be nested");
    if (w->inside != NULL)
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "42P20",
                           "window functions are not allowed in %s",
                           w->inside);
    memset(&fn, 0, sizeof(fn));
    fn.kind = SQL_WIN_AGG;
    for (size_t i = 0; i < sizeof(win_funcs) / sizeof(win_funcs[0]); i++)
        if (strcmp(win_funcs[i].name, name) == 0) {
            if (fc->n_args < win_funcs[i].min_args ||
                fc->n_args > win_funcs[i].max_args || fc->agg_star)
                return sql_fail_at(s, fc->location, KEEL_ENOENT, "42883",
                                   "function %s with %zu argument(s) does not "
                                   "exist",
                                   name, fc->n_args);
            fn.kind = win_funcs[i].kind;
            fn.nargs = (uint16_t)fc->n_args;
        }
    if (fn.kind == SQL_WIN_AGG) {
        agg = fc->agg_star || sql_agg_name(name);
        if (!agg)
            return sql_fail_at(s, fc->location, KEEL_EINVAL, "42809",
                               "OVER specified, but %s is not a window "
                               "function nor an aggregate function",
                               name);
    }
    if (fc->agg_distinct)
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "0A000",
                           "DISTINCT is not implemented for window functions");
    if (fc->n_agg_order > 0)
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "0A000",
                           "aggregate ORDER BY is not implemented for window "
                           "functions");
    if (fc->agg_filter != NULL && !agg)
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "0A000",
                           "FILTER is not implemented for non-aggregate "
                           "window functions");
    w->inside = "nested";
    n0 = sql_srf_count(s);
    if (agg) {
        rc = sql_agg_build(s, scope, fc, name, &fn.agg);
        type = fn.agg.type;
    } else {
        rc = win_args(s, scope, fc, name, &fn, &type);
    }
    w->inside = NULL;
    if (rc == KEEL_OK)
        rc = sql_srf_none_since(s, n0, "window function calls");
    /* its window's rows are those before the output list's functions
     * run */
    if (rc == KEEL_OK)
        rc = win_add(s, scope, fc->over, &fn.win);
    if (rc == KEEL_OK && sql_srf_count(s) > n0)
        rc = sql_unsupported(s, s->srfs->v[n0]->expr->location,
                             "set-returning functions in a window's "
                             "definition");
    if (rc != KEEL_OK)
        return rc;
    if (w->nfns == w->capfns) {
        uint16_t cap = w->capfns == 0 ? 4 : (uint16_t)(w->capfns * 2);
        sql_window_fn *nf = sql_alloc(&s->arena, cap * sizeof(*nf));
        if (nf == NULL)
            return nomem(s);
        if (w->nfns > 0)
            memcpy(nf, w->fns, w->nfns * sizeof(*nf));
        w->fns = nf;
        w->capfns = cap;
    }
    e = sql_alloc(&s->arena, sizeof(*e));
    if (e == NULL)
        return nomem(s);
    memset(e, 0, sizeof(*e));
    e->kind = SQL_EXPR_WINDOW;
    e->type = type;
    e->location = fc->location;
    e->u.column = w->nfns;
    fn.type = type;
    w->fns[w->nfns++] = fn;
    *out = e;
    return KEEL_OK;
}

int sql_window_explain(sql_explain *x, const sql_windowing *w, int depth)
{
    for (uint16_t i = w->nwins; i-- > 0;) {
        sql_explain_node(x, depth++, "WindowAgg");
        if (w->wins[i].npart + w->wins[i].norder > 0)
            sql_explain_node(x, depth++, "Sort");
    }
    return depth;
}

/* ---- running ------------------------------------------------------------- */

keel_status sql_window_keep(sql_session *s, sql_windowing *w,
                            const sql_value *row)
{
    sql_value *copy;
    keel_status rc = KEEL_OK;

    if (w->nrows == w->caprows) {
        size_t cap = w->caprows == 0 ? 64 : w->caprows * 2;
        sql_value **nr = sql_alloc(&s->arena, cap * sizeof(*nr));
        if (nr == NULL)
            return nomem(s);
        if (w->nrows > 0)
            memcpy(nr, w->rows, w->nrows * sizeof(*nr));
        w->rows = nr;
        w->caprows = cap;
    }
    copy = sql_alloc(&s->arena, (w->width + 1u) * sizeof(*copy));
    if (copy == NULL)
        return nomem(s);
    if (w->width > 0)
        memcpy(copy, row, w->width * sizeof(*copy));
    for (uint16_t i = 0; rc == KEEL_OK && i < w->width; i++)
        rc = sql_value_keep(s, &copy[i]);
    if (rc == KEEL_OK)
        w->rows[w->nrows++] = copy;
    return rc;
}

/* Each row's values of n expressions, evaluated once (an expression may
 * be NULL: count(*)'s argument). */
static keel_status eval_all(sql_session *s, const sql_windowing *w,
                            sql_expr *const *exprs, uint16_t n,
                            sql_value **out)
{
    size_t rows = w->nrows;
    sql_value *v = sql_alloc(&s->arena, (rows * n + 1u) * sizeof(*v));
    keel_status rc = KEEL_OK;

    if (v == NULL)
        return nomem(s);
    memset(v, 0, (rows * n + 1u) * sizeof(*v));
    for (size_t r = 0; rc == KEEL_OK && r < rows; r++) {
        if ((r & 1023) == 1023)
            rc = sql_check_cancel(s);
        for (uint16_t k = 0; rc == KEEL_OK && k < n; k++) {
            if (exprs[k] == NULL)
                continue;
            rc = sql_expr_eval(s, exprs[k], w->rows[r], &v[r * n + k]);
            if (rc == KEEL_OK)
                rc = sql_value_keep(s, &v[r * n + k]);
        }
    }
    *out = v;
    return rc;
}

typedef struct win_sort {
    const sql_window *win;
    const sql_value *keys; /* per row, npart + norder */
    uint16_t nk;
} win_sort;

/* Compares keys [0, upto) of rows x and y. */
static int keys_cmp(const win_sort *ws, size_t x, size_t y, uint16_t upto)
{
    const sql_value *a = &ws->keys[x * ws->nk], *b = &ws->keys[y * ws->nk];

    for (uint16_t k = 0; k < upto; k++) {
        int c = sql_key_cmp(&a[k], &b[k], ws->win->desc[k],
                            ws->win->nulls_first[k]);
        if (c != 0)
            return c;
    }
    return 0;
}

static int idx_cmp(const void *x, const void *y, void *arg)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    const win_sort *ws = arg;
    int c = keys_cmp(ws, a, b, ws->nk);

    if (c != 0)
        return c;
    return a < b ? -1 : a > b;
}

/* What a function needs of its window's order, partition by partition. */
typedef struct win_pass {
    const sql_window *win;
    const size_t *idx;  /* rows in the window's order */
    size_t ps, pe;      /* the partition: positions [ps, pe) */
    const size_t *gs, *ge; /* each position's peers [gs, ge) */
    /* GROUPS: each position's peer group's number, and each group's
     * first position (one more: the end) */
    const size_t *gno, *gstart;
    int64_t soff, eoff; /* the frame's offsets */
    const size_t *rlo, *rhi; /* RANGE with offsets: each position's */
} win_pass;

/* GROUPS: where the group off groups from position pos's begins (end:
 * ends), within the partition. */
static int64_t group_edge(const win_pass *p, size_t pos, int64_t off, bool end)
{
    int64_t g = (int64_t)p->gno[pos] + off;
    int64_t g0 = (int64_t)p->gno[p->ps], gl = (int64_t)p->gno[p->pe - 1];

    if (g < g0)
        return (int64_t)p->ps;
    if (g > gl)
        return (int64_t)p->pe;
    return (int64_t)p->gstart[g + (end ? 1 : 0)];
}

/* Position pos's frame [*fs, *fe). */
static void frame_of(const win_pass *p, size_t pos, size_t *fs, size_t *fe)
{
    int32_t f = p->win->frame;
    bool rows = (f & FRAME_ROWS) != 0;
    int64_t lo, hi, at = (int64_t)pos;

    bool groups = (f & FRAME_GROUPS) != 0;

    if (f & FRAME_START_UNBOUNDED_PRECEDING)
        lo = (int64_t)p->ps;
    else if (f & FRAME_START_CURRENT_ROW)
        lo = rows ? at : (int64_t)p->gs[pos];
    else if (f & FRAME_START_OFFSET_PRECEDING)
        lo = groups ? group_edge(p, pos, -p->soff, false) : at - p->soff;
    else
        lo = groups ? group_edge(p, pos, p->soff, false) : at + p->soff;
    if (p->rlo != NULL && (f & FRAME_START_OFFSET))
        lo = (int64_t)p->rlo[pos];
    if (f & FRAME_END_UNBOUNDED_FOLLOWING)
        hi = (int64_t)p->pe;
    else if (f & FRAME_END_CURRENT_ROW)
        hi = rows ? at + 1 : (int64_t)p->ge[pos];
    else if (f & FRAME_END_OFFSET_PRECEDING)
        hi = groups ? group_edge(p, pos, -p->eoff, true) : at - p->eoff + 1;
    else
        hi = groups ? group_edge(p, pos, p->eoff, true) : at + p->eoff + 1;
    if (p->rlo != NULL && (f & FRAME_END_OFFSET))
        hi = (int64_t)p->rhi[pos];
    if (lo < (int64_t)p->ps)
        lo = (int64_t)p->ps;
    if (hi > (int64_t)p->pe)
        hi = (int64_t)p->pe;
    if (hi < lo)
        hi = lo;
    *fs = (size_t)lo;
    *fe = (size_t)hi;
}

/* Whether the frame of position pos leaves out position j. */
static bool excluded(const win_pass *p, size_t pos, size_t j)
{
    int32_t f = p->win->frame;

    if ((f & FRAME_EXCLUDE_CURRENT_ROW) && j == pos)
        return true;
    if ((f & FRAME_EXCLUDE_GROUP) && j >= p->gs[pos] && j < p->ge[pos])
        return true;
    return (f & FRAME_EXCLUDE_TIES) && j != pos && j >= p->gs[pos] &&
           j < p->ge[pos];
}

/* The aggregate's result over the state so far, which goes on. */
static keel_status agg_peek(sql_session *s, const sql_agg *a,
                            const sql_value *st, const sql_agg_acc *acc,
                            int64_t count, sql_value *out)
{
    sql_agg_acc tmp = {.i = acc->i, .n = NUMERIC_INIT};

    if (a->arg != NULL && a->arg->type == SQL_TYPE_NUMERIC &&
        numeric_copy(&acc->n, &tmp.n) != NUMERIC_OK)
        return nomem(s);
    *out = *st;
    return sql_agg_final(s, a, out, &tmp, count);
}

/* Whether a row's values (the argument's, then FILTER's) go into the
 * aggregate. */
static bool agg_takes(const sql_agg *a, const sql_value *v)
{
    return a->filter == NULL || (!v[1].isnull && v[1].v.b);
}

/* An aggregate over each position's frame in the partition. */
static keel_status win_agg(sql_session *s, const win_pass *p,
                           const sql_window_fn *fn, const sql_value *args,
                           sql_value *vals, uint16_t nf, uint16_t f)
{
    const sql_agg *a = &fn->agg;
    size_t stride = a->filter != NULL ? 2 : 1; /* the value, the FILTER's */
    bool running = (p->win->frame & FRAME_START_UNBOUNDED_PRECEDING) &&
                   !(p->win->frame & FRAME_EXCLUDE);
    sql_agg_acc acc;
    sql_value st, last = {0};
    int64_t count;
    size_t upto = p->ps, last_fe = SIZE_MAX;
    keel_status rc = KEEL_OK;

    sql_agg_init(a, &st, &acc, &count);
    for (size_t pos = p->ps; rc == KEEL_OK && pos < p->pe; pos++) {
        sql_value *out = &vals[p->idx[pos] * nf + f];
        size_t fs, fe;
        frame_of(p, pos, &fs, &fe);
        if (running) {
            /* The frame grows from the partition's start. */
            for (; rc == KEEL_OK && upto < fe; upto++)
                if (agg_takes(a, &args[p->idx[upto] * stride]))
                    rc = sql_agg_step(s, a, &st, &acc, &count,
                                      &args[p->idx[upto] * stride]);
            if (rc == KEEL_OK && fe != last_fe)
                rc = agg_peek(s, a, &st, &acc, count, &last);
            last_fe = fe;
            *out = last;
            continue;
        }
        numeric_free(&acc.n);
        sql_agg_init(a, &st, &acc, &count);
        for (size_t j = fs; rc == KEEL_OK && j < fe; j++) {
            if ((j & 1023) == 1023)
                rc = sql_check_cancel(s);
            if (rc == KEEL_OK && !excluded(p, pos, j) &&
                agg_takes(a, &args[p->idx[j] * stride]))
                rc = sql_agg_step(s, a, &st, &acc, &count,
                                  &args[p->idx[j] * stride]);
        }
        if (rc == KEEL_OK)
            rc = sql_agg_final(s, a, &st, &acc, count);
        *out = st;
    }
    numeric_free(&acc.n);
    return rc;
}

/* first_value, last_value, nth_value: the frame's row's value. */
static keel_status win_value(sql_session *s, const win_pass *p,
                             const sql_window_fn *fn, const sql_value *args,
                             sql_value *vals, uint16_t nf, uint16_t f)
{
    for (size_t pos = p->ps; pos < p->pe; pos++) {
        sql_value *out = &vals[p->idx[pos] * nf + f];
        const sql_value *mine = &args[p->idx[pos] * fn->nargs];
        int64_t want = 1, seen = 0;
        size_t fs, fe, pick = SIZE_MAX;
        frame_of(p, pos, &fs, &fe);
        memset(out, 0, sizeof(*out));
        out->type = fn->type;
        out->isnull = true;
        if (fn->kind == SQL_WIN_NTH_VALUE) {
            if (mine[1].isnull)
                continue;
            want = mine[1].v.i;
            if (want <= 0)
                return sql_fail(s, KEEL_EINVAL, "22016",
                                "argument of nth_value must be greater than "
                                "zero");
        }
        if (fn->kind == SQL_WIN_LAST_VALUE) {
            for (size_t j = fe; j-- > fs;)
                if (!excluded(p, pos, j)) {
                    pick = j;
                    break;
                }
        } else {
            for (size_t j = fs; j < fe; j++)
                if (!excluded(p, pos, j) && ++seen == want) {
                    pick = j;
                    break;
                }
        }
        if (pick != SIZE_MAX)
            *out = args[p->idx[pick] * fn->nargs];
    }
    return KEEL_OK;
}

/* One function over one partition. */
static keel_status win_fn(sql_session *s, const win_pass *p,
                          const sql_window_fn *fn, const sql_value *args,
                          sql_value *vals, uint16_t nf, uint16_t f)
{
    uint32_t type = fn->type;
    size_t n = p->pe - p->ps;
    int64_t dense = 0, buckets = 0;

    if (fn->kind == SQL_WIN_AGG)
        return win_agg(s, p, fn, args, vals, nf, f);
    if (fn->kind == SQL_WIN_FIRST_VALUE || fn->kind == SQL_WIN_LAST_VALUE ||
        fn->kind == SQL_WIN_NTH_VALUE)
        return win_value(s, p, fn, args, vals, nf, f);
    if (fn->kind == SQL_WIN_NTILE) {
        /* The bucket count is read at the partition's first row. */
        const sql_value *b = &args[p->idx[p->ps]];
        if (!b->isnull && b->v.i <= 0)
            return sql_fail(s, KEEL_EINVAL, "22014",
                            "argument of ntile must be greater than zero");
        buckets = b->isnull ? 0 : b->v.i;
    }
    for (size_t pos = p->ps; pos < p->pe; pos++) {
        size_t r = p->idx[pos];
        sql_value *out = &vals[r * nf + f];
        int64_t i = (int64_t)(pos - p->ps);
        memset(out, 0, sizeof(*out));
        out->type = type;
        if (pos == p->gs[pos])
            dense++;
        switch (fn->kind) {
        case SQL_WIN_ROW_NUMBER:
            out->v.i = i + 1;
            break;
        case SQL_WIN_RANK:
            out->v.i = (int64_t)(p->gs[pos] - p->ps) + 1;
            break;
        case SQL_WIN_DENSE_RANK:
            out->v.i = dense;
            break;
        case SQL_WIN_PERCENT_RANK:
            out->v.f = n > 1 ? (double)(p->gs[pos] - p->ps) / (double)(n - 1)
                             : 0.0;
            break;
        case SQL_WIN_CUME_DIST:
            out->v.f = (double)(p->ge[pos] - p->ps) / (double)n;
            break;
        case SQL_WIN_NTILE: {
            /* n rows into `buckets`, the first n % buckets one larger */
            int64_t per, extra, big;
            if (buckets == 0) {
                out->isnull = true;
                break;
            }
            per = (int64_t)n / buckets;
            extra = (int64_t)n % buckets;
            big = extra * (per + 1);
            out->v.i = i < big ? i / (per + 1) + 1
                               : extra + (i - big) / (per > 0 ? per : 1) + 1;
            break;
        }
        default: { /* LAG, LEAD */
            const sql_value *mine = &args[r * fn->nargs];
            int64_t off = fn->nargs > 1 ? mine[1].v.i : 1, at;
            if (fn->nargs > 1 && mine[1].isnull) {
                out->isnull = true;
                break;
            }
            at = fn->kind == SQL_WIN_LAG ? i - off : i + off;
            if (at >= 0 && at < (int64_t)n)
                *out = args[p->idx[p->ps + (size_t)at] * fn->nargs];
            else if (fn->nargs > 2)
                *out = mine[2];
            else
                out->isnull = true;
            break;
        }
        }
    }
    return KEEL_OK;
}

/* A frame's offset, once for the window: not null, not negative. */
static keel_status offset_value(sql_session *s, const sql_expr *e,
                                const char *which, int64_t *out)
{
    sql_value v;
    keel_status rc;

    *out = 0;
    if (e == NULL)
        return KEEL_OK;
    rc = sql_expr_eval(s, e, NULL, &v);
    if (rc != KEEL_OK)
        return rc;
    if (v.isnull)
        return sql_fail(s, KEEL_EINVAL, "22004",
                        "frame %s offset must not be null", which);
    if (v.v.i < 0)
        return sql_fail(s, KEEL_EINVAL, "22013",
                        "frame %s offset must not be negative", which);
    /* Past every row is as far as it need go (and adds without
     * overflow). */
    *out = v.v.i < ((int64_t)1 << 40) ? v.v.i : ((int64_t)1 << 40);
    return KEEL_OK;
}

/* A date as the timestamp of its midnight (RANGE compares them so). */
static sql_value as_timestamp(const sql_value *v)
{
    sql_value t = *v;

    if (!v->isnull && v->type == SQL_TYPE_DATE) {
        t.type = SQL_TYPE_TIMESTAMP;
        t.v.i = v->v.i * USECS_PER_DAY;
    }
    return t;
}

/* key + off (sub: key - off) for a RANGE frame's bound; integers
 * saturate. */
static keel_status range_add(sql_session *s, const sql_value *key,
                             const sql_value *off, bool sub, sql_value *out)
{
    *out = *key;
    switch (key->type) {
    case SQL_TYPE_INT2:
    case SQL_TYPE_INT4:
    case SQL_TYPE_INT8:
        if (sub ? __builtin_sub_overflow(key->v.i, off->v.i, &out->v.i)
                : __builtin_add_overflow(key->v.i, off->v.i, &out->v.i))
            out->v.i = sub ? INT64_MIN : INT64_MAX;
        return KEEL_OK;
    case SQL_TYPE_FLOAT8:
        out->v.f = sub ? key->v.f - off->v.f : key->v.f + off->v.f;
        return KEEL_OK;
    case SQL_TYPE_NUMERIC: {
        numeric a = NUMERIC_INIT, b = NUMERIC_INIT, r = NUMERIC_INIT;
        numeric_status st;
        keel_status rc = sql_numeric_get(s, key, &a);
        if (rc == KEEL_OK)
            rc = sql_numeric_get(s, off, &b);
        if (rc == KEEL_OK) {
            st = sub ? numeric_sub(&a, &b, &r) : numeric_add(&a, &b, &r);
            rc = st == NUMERIC_OK ? sql_numeric_put(s, &r, out)
                                  : sql_numeric_fail(s, st, -1, NULL, 0, -1);
        }
        numeric_free(&a);
        numeric_free(&b);
        numeric_free(&r);
        return rc;
    }
    default: { /* dates and timestamps, with an interval */
        sql_value k = as_timestamp(key);
        return sql_interval_arith(s, sub ? SQL_OP_SUB : SQL_OP_ADD, &k, off,
                                  k.type, out);
    }
    }
}

/* Whether a RANGE frame's offset is below zero (or not a number). */
static bool range_negative(sql_session *s, const sql_value *v)
{
    sql_value zero = *v;

    switch (v->type) {
    case SQL_TYPE_FLOAT8:
        return !(v->v.f >= 0);
    case SQL_TYPE_NUMERIC: {
        numeric x = NUMERIC_INIT;
        bool neg = sql_numeric_get(s, v, &x) != KEEL_OK ||
                   x.sign == NUMERIC_NAN ||
                   (x.sign == NUMERIC_NEG && x.ndigits > 0);
        numeric_free(&x);
        return neg;
    }
    case SQL_TYPE_INTERVAL: {
        static const char none[16] = {0};
        zero.v.s.p = none;
        zero.v.s.len = sizeof(none);
        return sql_interval_cmp(v, &zero) < 0;
    }
    default:
        return v->v.i < 0;
    }
}

/* RANGE with offsets: each position's frame start (*rlo) and end (*rhi)
 * in partition p, where the order key reaches its value less (or more)
 * the offset, found by binary search in the sorted keys. */
static keel_status range_frames(sql_session *s, const win_pass *p,
                                const sql_value *keys, uint16_t nk,
                                const sql_value *soff, const sql_value *eoff,
                                size_t *rlo, size_t *rhi)
{
    const sql_window *win = p->win;
    uint16_t ok = win->npart;
    bool desc = win->desc[ok], nf = win->nulls_first[ok];
    keel_status rc = KEEL_OK;

    for (size_t pos = p->ps; rc == KEEL_OK && pos < p->pe; pos++) {
        const sql_value *k = &keys[p->idx[pos] * nk + ok];
        for (int side = 0; rc == KEEL_OK && side < 2; side++) {
            int32_t f = win->frame;
            bool start = side == 0, preceding, inclusive = start;
            const sql_value *off = start ? soff : eoff;
            sql_value b, bt;
            size_t lo = p->ps, hi = p->pe;
            if (!(f & (start ? FRAME_START_OFFSET : FRAME_END_OFFSET)))
                continue;
            if (k->isnull) {
                /* a NULL key's frame: its peers */
                if (start)
                    rlo[pos] = p->gs[pos];
                else
                    rhi[pos] = p->ge[pos];
                continue;
            }
            preceding = start ? (f & FRAME_START_OFFSET_PRECEDING) != 0
                              : (f & FRAME_END_OFFSET_PRECEDING) != 0;
            /* PRECEDING lies toward the sort's start: below the key
             * ascending, above it descending */
            rc = range_add(s, k, off, preceding != desc, &b);
            if (rc != KEEL_OK)
                break;
            bt = as_timestamp(&b);
            /* the first position past the bound (start: not before it) */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                sql_value kv = as_timestamp(&keys[p->idx[mid] * nk + ok]);
                int c = sql_key_cmp(&kv, &bt, desc, nf);
                if (inclusive ? c >= 0 : c > 0)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            if (start)
                rlo[pos] = lo;
            else
                rhi[pos] = lo;
        }
        if ((pos & 1023) == 1023 && rc == KEEL_OK)
            rc = sql_check_cancel(s);
    }
    return rc;
}

/* Window k's functions: the rows sorted into idx, then each partition. */
static keel_status win_run_one(sql_session *s, sql_windowing *w, uint16_t k,
                               size_t *idx, size_t *gs, size_t *ge,
                               size_t *gno, size_t *gstart, sql_value *vals)
{
    const sql_window *win = &w->wins[k];
    win_sort ws = {.win = win, .nk = (uint16_t)(win->npart + win->norder)};
    win_pass p = {.win = win, .idx = idx, .gs = gs, .ge = ge, .gno = gno,
                  .gstart = gstart};
    size_t n = w->nrows;
    sql_value *keys, **args, soffv = {0}, eoffv = {0};
    size_t ngroups = 0, *rlo = NULL, *rhi = NULL;
    keel_status rc = eval_all(s, w, win->keys, ws.nk, &keys);

    if (rc == KEEL_OK && win->range_type == 0)
        rc = offset_value(s, win->start_off, "starting", &p.soff);
    if (rc == KEEL_OK && win->range_type == 0)
        rc = offset_value(s, win->end_off, "ending", &p.eoff);
    for (int side = 0; rc == KEEL_OK && win->range_type != 0 && side < 2;
         side++) {
        const sql_expr *e = side == 0 ? win->start_off : win->end_off;
        sql_value *v = side == 0 ? &soffv : &eoffv;
        if (e == NULL)
            continue;
        rc = sql_expr_eval(s, e, NULL, v);
        if (rc == KEEL_OK && v->isnull)
            rc = sql_fail(s, KEEL_EINVAL, "22004",
                          "frame %s offset must not be null",
                          side == 0 ? "starting" : "ending");
        if (rc == KEEL_OK && range_negative(s, v))
            rc = sql_fail(s, KEEL_EINVAL, "22013",
                          "invalid preceding or following size in window "
                          "function");
    }
    if (rc != KEEL_OK)
        return rc;
    if (win->range_type != 0) {
        rlo = malloc((n + 1) * sizeof(*rlo));
        rhi = malloc((n + 1) * sizeof(*rhi));
        if (rlo == NULL || rhi == NULL) {
            free(rlo);
            free(rhi);
            return nomem(s);
        }
        p.rlo = rlo;
        p.rhi = rhi;
    }
    ws.keys = keys;
    for (size_t r = 0; r < n; r++)
        idx[r] = r;
    if (n > 1)
        qsort_r(idx, n, sizeof(*idx), idx_cmp, &ws);
    /* Peers: equal in every key. */
    for (size_t pos = 0; pos < n;) {
        size_t end = pos + 1;
        while (end < n && keys_cmp(&ws, idx[pos], idx[end], ws.nk) == 0)
            end++;
        for (size_t j = pos; j < end; j++) {
            gs[j] = pos;
            ge[j] = end;
            gno[j] = ngroups;
        }
        gstart[ngroups++] = pos;
        pos = end;
    }
    gstart[ngroups] = n;
    args = sql_alloc(&s->arena, (w->nfns + 1u) * sizeof(*args));
    if (args == NULL)
        rc = nomem(s);
    for (uint16_t f = 0; rc == KEEL_OK && f < w->nfns; f++) {
        /* an aggregate's: its argument, and its FILTER's verdict */
        sql_expr *agg[2] = {w->fns[f].agg.arg, w->fns[f].agg.filter};
        if (w->fns[f].win != k)
            continue;
        rc = w->fns[f].kind == SQL_WIN_AGG
                 ? eval_all(s, w, agg, agg[1] != NULL ? 2 : 1, &args[f])
                 : eval_all(s, w, w->fns[f].args, w->fns[f].nargs, &args[f]);
    }
    for (size_t pos = 0; rc == KEEL_OK && pos < n;) {
        p.ps = pos;
        p.pe = pos + 1;
        while (p.pe < n &&
               keys_cmp(&ws, idx[pos], idx[p.pe], win->npart) == 0)
            p.pe++;
        if (rlo != NULL)
            rc = range_frames(s, &p, keys, ws.nk, &soffv, &eoffv, rlo, rhi);
        for (uint16_t f = 0; rc == KEEL_OK && f < w->nfns; f++)
            if (w->fns[f].win == k)
                rc = win_fn(s, &p, &w->fns[f], args[f], vals, w->nfns, f);
        if (rc == KEEL_OK)
            rc = sql_check_cancel(s);
        pos = p.pe;
    }
    free(rlo);
    free(rhi);
    return rc;
}

keel_status sql_window_run(sql_session *s, sql_windowing *w,
                           keel_status (*emit)(sql_session *s, void *ctx,
                                               const sql_value *row,
                                               bool *done),
                           void *ctx)
{
    size_t n = w->nrows;
    uint16_t nf = w->nfns;
    size_t *idx = malloc((5 * n + 2) * sizeof(*idx));
    sql_value *vals = sql_alloc(&s->arena, (n * nf + 1u) * sizeof(*vals));
    const sql_value *saved = s->win_vals;
    bool done = false;
    keel_status rc = KEEL_OK;

    if (idx == NULL || vals == NULL) {
        free(idx);
        return nomem(s);
    }
    for (uint16_t k = 0; rc == KEEL_OK && k < w->nwins; k++)
        rc = win_run_one(s, w, k, idx, idx + n, idx + 2 * n, idx + 3 * n,
                         idx + 4 * n, vals);
    /* The rows go on in the last window's order (PostgreSQL's, when the
     * query has no ORDER BY of its own). */
    if (w->nwins == 0)
        for (size_t r = 0; r < n; r++)
            idx[r] = r;
    for (size_t i = 0; rc == KEEL_OK && !done && i < n; i++) {
        s->win_vals = &vals[idx[i] * nf];
        rc = emit(s, ctx, w->rows[idx[i]], &done);
    }
    s->win_vals = saved;
    free(idx);
    return rc;
}
