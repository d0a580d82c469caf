/*
 * sql_expr.c: expressions: analysis of PostgreSQL's raw expression nodes
 * into typed sql_expr trees, and their evaluation over a row.
 *
 * Analysis resolves every column reference to its position in the scope,
 * gives every node its type, and settles each operator's operand types
 * as PostgreSQL's resolution does for the types keel has: a quoted
 * literal (type unknown) takes the other operand's type; integers widen
 * to the wider of the two; an integer meets a numeric as a numeric, and
 * either meets a double as a double; text meets text.  Constants are cast at analysis, so a bad literal is
 * reported before any row is read.  Evaluation follows SQL's three-valued
 * logic: NULL in, NULL out, but for AND, OR, IS [NOT] NULL, CASE and
 * COALESCE.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/sql_internal.h"

sql_expr *sql_expr_new(sql_session *s, sql_expr_kind kind, uint32_t type,
                       int32_t location, uint16_t nargs)
{
    sql_expr *e = sql_alloc(&s->arena, sizeof(*e));

    if (e == NULL)
        return NULL;
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->type = type;
    e->location = location;
    e->nargs = nargs;
    if (nargs > 0) {
        e->args = sql_alloc(&s->arena, nargs * sizeof(sql_expr *));
        if (e->args == NULL)
            return NULL;
    }
    return e;
}

static keel_status nomem(sql_session *s)
{
    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
}

/* Casts e to type: a constant at once, anything else by a CAST node. */
static keel_status coerce(sql_session *s, sql_expr **e, uint32_t type,
                          bool is_explicit)
{
    sql_expr *c;
    keel_status rc;

    if ((*e)->type == type)
        return KEEL_OK;
    /* A parameter of no type yet takes the one its use asks for. */
    if ((*e)->kind == SQL_EXPR_PARAM && (*e)->type == SQL_TYPE_UNKNOWN) {
        s->param_types[(*e)->u.column] = type;
        (*e)->type = type;
        return KEEL_OK;
    }
    if ((*e)->kind == SQL_EXPR_CONST) {
        sql_value v = (*e)->u.value;
        rc = sql_value_cast(s, &v, type, -1, true, (*e)->location);
        if (rc != KEEL_OK)
            return rc;
        (*e)->u.value = v;
        (*e)->type = type;
        return KEEL_OK;
    }
    (void)is_explicit;
    c = sql_expr_new(s, SQL_EXPR_CAST, type, (*e)->location, 1);
    if (c == NULL)
        return nomem(s);
    c->u.value.v.i = -1; /* no length */
    c->args[0] = *e;
    *e = c;
    return KEEL_OK;
}

static int int_rank(uint32_t t)
{
    return t == SQL_TYPE_INT2                         ? 1
           : t == SQL_TYPE_INT4 || t == SQL_TYPE_OID ? 2
           : t == SQL_TYPE_INT8                      ? 3
                                                     : 4;
}

/*
 * The common type of two operands for a comparison or arithmetic, both
 * coerced to it; 42883 naming the operator when there is none.
 */
static keel_status reg_arg(sql_session *s, sql_func kind, bool missing_ok,
                           sql_expr **arg);

/* x::regclass, ::regtype or ::regnamespace: text by an oid in args[0]. */
static bool is_regcast(const sql_expr *e)
{
    return e->kind == SQL_EXPR_FUNC && (e->u.func == SQL_FUNC_REGCLASS ||
                                        e->u.func == SQL_FUNC_REGTYPE ||
                                        e->u.func == SQL_FUNC_REGNAMESPACE);
}

/* 42883 for operator name between types tl and tr, with PostgreSQL's
 * hint. */
static keel_status no_operator(sql_session *s, int32_t location, uint32_t tl,
                               const char *name, uint32_t tr)
{
    keel_status rc = sql_fail_at(s, location, KEEL_ETYPE, "42883",
                                 "operator does not exist: %s %s %s",
                                 sql_type_name(tl), name, sql_type_name(tr));

    if (s->err != NULL)
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "No operator matches the given name and argument types. "
                 "You might need to add explicit type casts.");
    return rc;
}

static keel_status unify(sql_session *s, sql_expr **a, sql_expr **b,
                         const char *opname, int32_t location, uint32_t *out)
{
    uint32_t ta, tb;
    uint32_t t;
    keel_status rc;

    /* A regclass (regtype, regnamespace) compares as its oid
     * (PostgreSQL's oid operators) with an oid, an integer, another or a
     * literal, which is then read as an oid. */
    for (int k = 0; k < 2; k++) {
        sql_expr **x = k == 0 ? a : b, **y = k == 0 ? b : a;
        if (!is_regcast(*x))
            continue;
        if (is_regcast(*y))
            *y = (*y)->args[0];
        else if (!sql_type_is_int((*y)->type) &&
                 (*y)->type != SQL_TYPE_UNKNOWN)
            continue;
        *x = (*x)->args[0];
    }
    /* Other regclass values (a subquery's, a UNION's) meet an oid or an
     * integer as the oid their name reads back as, which reads the
     * catalog. */
    for (int k = 0; k < 2; k++) {
        sql_expr **x = k == 0 ? a : b, **y = k == 0 ? b : a;
        if ((*x)->type == SQL_TYPE_REGCLASS && sql_type_is_int((*y)->type)) {
            rc = coerce(s, x, SQL_TYPE_OID, true);
            if (rc != KEEL_OK)
                return rc;
            s->expr_engine_reads++;
        }
    }
    ta = (*a)->type;
    tb = (*b)->type;

    if (ta == SQL_TYPE_UNKNOWN && tb == SQL_TYPE_UNKNOWN)
        t = SQL_TYPE_TEXT;
    else if (ta == SQL_TYPE_UNKNOWN)
        t = tb;
    else if (tb == SQL_TYPE_UNKNOWN)
        t = ta;
    else if (sql_type_is_int(ta) && sql_type_is_int(tb))
        t = int_rank(ta) >= int_rank(tb) ? ta : tb;
    else if (sql_type_is_number(ta) && sql_type_is_number(tb))
        /* integers < numeric < double precision, as PostgreSQL's
         * implicit casts go */
        t = ta == SQL_TYPE_FLOAT8 || tb == SQL_TYPE_FLOAT8 ? SQL_TYPE_FLOAT8
                                                           : SQL_TYPE_NUMERIC;
    else if (sql_type_is_string(ta) && sql_type_is_string(tb))
        t = ta == tb ? ta : SQL_TYPE_TEXT;
    else if (sql_type_is_datetime(ta) && sql_type_is_datetime(tb))
        /* date < timestamp < timestamptz: the later one */
        t = ta == SQL_TYPE_TIMESTAMPTZ || tb == SQL_TYPE_TIMESTAMPTZ
                ? SQL_TYPE_TIMESTAMPTZ
                : SQL_TYPE_TIMESTAMP;
    else if (ta == tb)
        t = ta;
    else
        return no_operator(s, location, ta, opname, tb);
    /* Strings compare as they are: no cast between string types. */
    if (!(sql_type_is_string(t) && sql_type_is_string((*a)->type) &&
          (*a)->type != SQL_TYPE_UNKNOWN)) {
        rc = coerce(s, a, t, false);
        if (rc != KEEL_OK)
            return rc;
    }
    if (!(sql_type_is_string(t) && sql_type_is_string((*b)->type) &&
          (*b)->type != SQL_TYPE_UNKNOWN)) {
        rc = coerce(s, b, t, false);
        if (rc != KEEL_OK)
            return rc;
    }
    *out = t;
    return KEEL_OK;
}

/* Makes e a boolean (a literal 't' may be one); 42804 otherwise. */
static keel_status want_bool(sql_session *s, sql_expr **e, const char *what)
{
    if ((*e)->type == SQL_TYPE_BOOL)
        return KEEL_OK;
    if ((*e)->type == SQL_TYPE_UNKNOWN)
        return coerce(s, e, SQL_TYPE_BOOL, false);
    return sql_fail_at(s, (*e)->location, KEEL_ETYPE, "42804",
                       "argument of %s must be type boolean, not type %s", what,
                       sql_type_name((*e)->type));
}

static keel_status analyse_const(sql_session *s, const PgQuery__AConst *c,
                                 sql_expr **out)
{
    sql_expr *e =
        sql_expr_new(s, SQL_EXPR_CONST, SQL_TYPE_UNKNOWN, c->location, 0);
    sql_value *v;

    if (e == NULL)
        return nomem(s);
    v = &e->u.value;
    v->type = SQL_TYPE_UNKNOWN;
    if (c->isnull) {
        v->isnull = true;
    } else {
        switch (c->val_case) {
        case PG_QUERY__A__CONST__VAL_IVAL:
            v->type = SQL_TYPE_INT4;
            v->v.i = c->ival->ival;
            break;
        case PG_QUERY__A__CONST__VAL_FVAL: {
            /* An integer too long for int4 is a bigint if it fits; any
             * other number is a numeric. */
            const char *t = c->fval->fval;
            char *end;
            long long n;
            numeric num = NUMERIC_INIT;
            numeric_status st;
            if (strpbrk(t, ".eE") == NULL) {
                errno = 0;
                n = strtoll(t, &end, 10);
                if (errno == 0 && *end == '\0') {
                    v->type = SQL_TYPE_INT8;
                    v->v.i = n;
                    break;
                }
            }
            st = numeric_in(t, strlen(t), &num);
            if (st != NUMERIC_OK)
                return sql_numeric_fail(s, st, c->location, t,
                                        (uint32_t)strlen(t), -1);
            if (sql_numeric_put(s, &num, v) != KEEL_OK)
                return KEEL_ENOMEM;
            break;
        }
        case PG_QUERY__A__CONST__VAL_BOOLVAL:
            v->type = SQL_TYPE_BOOL;
            v->v.b = c->boolval->boolval;
            break;
        case PG_QUERY__A__CONST__VAL_SVAL:
            v->v.s.p = c->sval->sval;
            v->v.s.len = (uint32_t)strlen(c->sval->sval);
            break;
        default:
            return sql_unsupported(s, c->location, "bit string literals");
        }
    }
    e->type = v->type;
    *out = e;
    return KEEL_OK;
}

static keel_status analyse_column(sql_session *s, const sql_scope *scope,
                                  const PgQuery__ColumnRef *cr, sql_expr **out)
{
    const char *table = NULL, *col;
    sql_expr *e;

    if (cr->n_fields == 0 || cr->n_fields > 2 ||
        cr->fields[cr->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR)
        return sql_unsupported(s, cr->location, "this column reference");
    if (cr->n_fields == 2)
        table = sql_node_string(cr->fields[0]);
    col = sql_node_string(cr->fields[cr->n_fields - 1]);
    if (col == NULL)
        return sql_unsupported(s, cr->location, "this column reference");
    if (table != NULL) {
        bool known = false;
        if (scope != NULL && scope->tables != NULL) {
            for (uint16_t t = 0; t < scope->ntables && !known; t++)
                known = strcmp(scope->tables[t], table) == 0;
        } else {
            known = scope != NULL && strcmp(table, scope->table) == 0;
        }
        if (!known)
            return sql_fail_at(s, cr->location, KEEL_ENOENT, "42P01",
                               "missing FROM-clause entry for table \"%s\"",
                               table);
    }
    {
        /* The query's own columns first, then an enclosing query's. */
        int32_t found = -1;
        uint16_t nouter = scope != NULL ? scope->nouter : 0;
        for (int pass = 0; pass < 2 && found < 0; pass++) {
            uint16_t from = pass == 0 ? nouter : 0;
            uint16_t to = pass == 0 ? (scope != NULL ? scope->ncols : 0) : nouter;
            for (uint16_t i = from; i < to; i++) {
                bool hidden = false;
                if (strcmp(scope->cols[i].name, col) != 0 ||
                    (table != NULL &&
                     strcmp(sql_scope_table_of(scope, i), table) != 0))
                    continue;
                for (uint16_t h = 0; table == NULL && h < scope->nhidden; h++)
                    hidden = hidden || scope->hidden[h] == i;
                if (hidden)
                    continue;
                if (found >= 0)
                    return sql_fail_at(s, cr->location, KEEL_EINVAL, "42702",
                                       "column reference \"%s\" is ambiguous",
                                       col);
                found = i;
            }
        }
        /* a one-column function's alias names its value */
        for (uint16_t k = 0; found < 0 && table == NULL && scope != NULL &&
                             k < scope->nscalar;
             k++)
            if (strcmp(scope->scalar_alias[k], col) == 0)
                found = scope->scalar_col[k];
        if (found >= 0) {
            uint16_t i = (uint16_t)found;
            e = sql_expr_new(s, SQL_EXPR_COLUMN, sql_scope_type(scope, i),
                         cr->location, 0);
            if (e == NULL)
                return nomem(s);
            e->u.column = i;
            if (scope->grouping != NULL && i < scope->nouter)
                return sql_unsupported(s, cr->location,
                                       "outer columns in a grouped "
                                       "subquery's output");
            if (scope->grouping != NULL) {
                int16_t slot = scope->grouping->key_slot[i];
                if (slot < 0)
                    return sql_fail_at(s, cr->location, KEEL_EINVAL, "42803",
                                       "column \"%s.%s\" must appear in the "
                                       "GROUP BY clause or be used in an "
                                       "aggregate function",
                                       sql_scope_table_of(scope, i), col);
                e->u.column = (uint16_t)slot;
            }
            *out = e;
            return KEEL_OK;
        }
    }
    if (table != NULL)
        return sql_fail_at(s, cr->location, KEEL_ENOENT, "42703",
                           "column %s.%s does not exist", table, col);
    return sql_fail_at(s, cr->location, KEEL_ENOENT, "42703",
                       "column \"%s\" does not exist", col);
}

/* An operator's symbol (the last name of A_Expr's name list). */
static const char *op_name(const PgQuery__AExpr *a)
{
    return a->n_name > 0 ? sql_node_string(a->name[a->n_name - 1]) : NULL;
}

static keel_status analyse_datetime_arith(sql_session *s, sql_op op,
                                          const char *name, sql_expr *l,
                                          sql_expr *r, int32_t location,
                                          sql_expr **out);

/*
 * array || array, array || element and element || array: PostgreSQL's
 * array_cat(), array_append() and array_prepend() (an untyped side read
 * as the other's array type), into *out; *out NULL when l and r are
 * none of these.
 */
static keel_status array_concat(sql_session *s, sql_expr *l, sql_expr *r,
                                int32_t location, sql_expr **out)
{
    uint32_t lt = l->type, rt = r->type, type = lt;
    sql_func f = SQL_FUNC_ARRAY_CAT;
    sql_expr *e;
    keel_status rc = KEEL_OK;

    *out = NULL;
    if (sql_type_elem(lt) != 0 && sql_type_elem(rt) != 0) {
        if (lt != rt)
            return sql_fail_at(s, location, KEEL_ETYPE, "42883",
                               "operator does not exist: %s || %s",
                               sql_type_name(lt), sql_type_name(rt));
    } else if (sql_type_elem(lt) != 0 &&
               (rt == SQL_TYPE_UNKNOWN || rt == sql_type_elem(lt))) {
        if (rt == SQL_TYPE_UNKNOWN)
            rc = coerce(s, &r, lt, false);
        else
            f = SQL_FUNC_ARRAY_APPEND;
    } else if (sql_type_elem(rt) != 0 &&
               (lt == SQL_TYPE_UNKNOWN || lt == sql_type_elem(rt))) {
        type = rt;
        if (lt == SQL_TYPE_UNKNOWN)
            rc = coerce(s, &l, rt, false);
        else
            f = SQL_FUNC_ARRAY_PREPEND;
    } else {
        return KEEL_OK;
    }
    if (rc != KEEL_OK)
        return rc;
    e = sql_expr_new(s, SQL_EXPR_FUNC, type, location, 2);
    if (e == NULL)
        return nomem(s);
    e->u.func = f;
    e->args[0] = l;
    e->args[1] = r;
    *out = e;
    return KEEL_OK;
}

static keel_status analyse_binary(sql_session *s, sql_op op, const char *name,
                                  sql_expr *l, sql_expr *r, int32_t location,
                                  sql_expr **out)
{
    sql_expr *e;
    uint32_t t;
    keel_status rc;

    if (op == SQL_OP_CONCAT) {
        rc = array_concat(s, l, r, location, out);
        if (rc != KEEL_OK || *out != NULL)
            return rc;
    }
    if (op >= SQL_OP_REGEX) {
        /* text ~ pattern: both strings, compared as text. */
        if (!sql_type_is_string(l->type) || !sql_type_is_string(r->type))
            return no_operator(s, location, l->type, name, r->type);
        rc = coerce(s, &l, SQL_TYPE_TEXT, false);
        if (rc == KEEL_OK)
            rc = coerce(s, &r, SQL_TYPE_TEXT, false);
        t = SQL_TYPE_BOOL;
    } else if (op == SQL_OP_CONCAT &&
               (l->type == SQL_TYPE_BYTEA || r->type == SQL_TYPE_BYTEA) &&
               (l->type == SQL_TYPE_BYTEA || l->type == SQL_TYPE_UNKNOWN) &&
               (r->type == SQL_TYPE_BYTEA || r->type == SQL_TYPE_UNKNOWN)) {
        /* bytea || bytea: PostgreSQL's byteacat. */
        rc = coerce(s, &l, SQL_TYPE_BYTEA, false);
        if (rc == KEEL_OK)
            rc = coerce(s, &r, SQL_TYPE_BYTEA, false);
        t = SQL_TYPE_BYTEA;
    } else if (op == SQL_OP_CONCAT) {
        /* anything || text: both as text, as PostgreSQL's anynonarray. */
        if (!sql_type_is_string(l->type) && !sql_type_is_string(r->type))
            return sql_fail_at(s, location, KEEL_ETYPE, "42883",
                               "operator does not exist: %s || %s",
                               sql_type_name(l->type), sql_type_name(r->type));
        rc = coerce(s, &l, SQL_TYPE_TEXT, true);
        if (rc == KEEL_OK)
            rc = coerce(s, &r, SQL_TYPE_TEXT, true);
        t = SQL_TYPE_TEXT;
    } else if (op <= SQL_OP_MOD &&
               (sql_type_is_datetime(l->type) || sql_type_is_datetime(r->type) ||
                l->type == SQL_TYPE_INTERVAL ||
                r->type == SQL_TYPE_INTERVAL)) {
        return analyse_datetime_arith(s, op, name, l, r, location, out);
    } else {
        rc = unify(s, &l, &r, name, location, &t);
        /* json has no equality or order; jsonb has both */
        if (rc == KEEL_OK && t == SQL_TYPE_JSON)
            return no_operator(s, location, l->type, name, r->type);
    }
    if (rc != KEEL_OK)
        return rc;
    if (op <= SQL_OP_MOD) {
        if (!sql_type_is_number(t))
            return no_operator(s, location, l->type, name, r->type);
        if (op == SQL_OP_MOD && t == SQL_TYPE_FLOAT8)
            return sql_fail_at(s, location, KEEL_ETYPE, "42883",
                               "operator does not exist: double precision %% "
                               "double precision");
        if (t == SQL_TYPE_OID)
            t = SQL_TYPE_INT8;
    }
    e = sql_expr_new(s, SQL_EXPR_OP,
                 (op >= SQL_OP_EQ && op <= SQL_OP_GE) || op >= SQL_OP_REGEX
                     ? SQL_TYPE_BOOL
                     : t,
                 location, 2);
    if (e == NULL)
        return nomem(s);
    e->u.op = op;
    e->args[0] = l;
    e->args[1] = r;
    *out = e;
    return KEEL_OK;
}

static keel_status analyse_func(sql_session *s, const sql_scope *scope,
                                const PgQuery__FuncCall *fc, sql_expr **out);

/* An operator that is a function's call: x ^ y is power(x, y), |/ x
 * sqrt(x), ||/ x cbrt(x), @ x abs(x), as in PostgreSQL's catalog. */
static keel_status analyse_op_func(sql_session *s, const sql_scope *scope,
                                   const PgQuery__AExpr *a, const char *fn,
                                   sql_expr **out)
{
    PgQuery__FuncCall fc = PG_QUERY__FUNC_CALL__INIT;
    PgQuery__String str = PG_QUERY__STRING__INIT;
    PgQuery__Node name = PG_QUERY__NODE__INIT;
    PgQuery__Node *names[1] = {&name};
    PgQuery__Node *args[2] = {a->lexpr, a->rexpr};

    str.sval = (char *)fn;
    name.node_case = PG_QUERY__NODE__NODE_STRING;
    name.string = &str;
    fc.n_funcname = 1;
    fc.funcname = names;
    fc.n_args = a->lexpr != NULL ? 2 : 1;
    fc.args = a->lexpr != NULL ? args : args + 1;
    fc.location = a->location;
    return analyse_func(s, scope, &fc, out);
}

static bool op_lookup(const char *name, sql_op *op)
{
    static const struct {
        const char *name;
        sql_op op;
    } ops[] = {
        {"+", SQL_OP_ADD}, {"-", SQL_OP_SUB}, {"*", SQL_OP_MUL},
        {"/", SQL_OP_DIV}, {"%", SQL_OP_MOD}, {"=", SQL_OP_EQ},
        {"<>", SQL_OP_NE}, {"!=", SQL_OP_NE}, {"<", SQL_OP_LT},
        {"<=", SQL_OP_LE}, {">", SQL_OP_GT}, {">=", SQL_OP_GE},
        {"||", SQL_OP_CONCAT}, {"~", SQL_OP_REGEX}, {"!~", SQL_OP_NREGEX},
        {"~*", SQL_OP_IREGEX}, {"!~*", SQL_OP_NIREGEX},
    };

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(ops[i].name, name) == 0) {
            *op = ops[i].op;
            return true;
        }
    return false;
}

/*
 * A subquery in an expression: analysed now against the query around it
 * (whose columns it may name), run for each row that query evaluates it
 * over.  Not in a grouped query's output, whose rows are groups.
 */
static keel_status analyse_sublink(sql_session *s, const sql_scope *scope,
                                   const PgQuery__SubLink *sl, sql_expr **out)
{
    sql_rowset rs;
    sql_sublink kind;
    sql_expr *e, *l = NULL;
    uint32_t type;
    keel_status rc;

    switch (sl->sub_link_type) {
    case PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK:
        kind = SQL_SUBLINK_EXPR;
        break;
    case PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK:
        kind = SQL_SUBLINK_EXISTS;
        break;
    case PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK:
        kind = SQL_SUBLINK_ARRAY;
        break;
    case PG_QUERY__SUB_LINK_TYPE__ANY_SUBLINK: {
        const char *op = sl->n_oper_name > 0
                             ? sql_node_string(sl->oper_name[sl->n_oper_name - 1])
                             : "=";
        if (op == NULL || strcmp(op, "=") != 0)
            return sql_unsupported(s, sl->location,
                                   "ANY with a subquery and an operator but =");
        kind = SQL_SUBLINK_IN;
        break;
    }
    default:
        return sql_unsupported(s, sl->location, "this kind of subquery");
    }
    if (sl->subselect == NULL ||
        sl->subselect->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return sql_unsupported(s, sl->location, "this kind of subquery");
    /* RETURNING runs as rows change: a subquery there would see the
     * statement's own writes, which PostgreSQL's command ids hide. */
    if (s->clause != NULL && strcmp(s->clause, "RETURNING") == 0)
        return sql_unsupported(s, sl->location, "subqueries in RETURNING");
    if (s->clause != NULL && strcmp(s->clause, "check constraints") == 0)
        return sql_fail_at(s, sl->location, KEEL_EINVAL, "0A000",
                           "cannot use subquery in check constraint");
    if (kind == SQL_SUBLINK_IN) {
        rc = sql_expr_analyse(s, scope, sl->testexpr, &l);
        if (rc != KEEL_OK)
            return rc;
    }
    memset(&rs, 0, sizeof(rs));
    if (scope != NULL && scope->grouping != NULL) {
        /* A grouped query's rows are groups: only a subquery that names
         * none of its columns can run for them. */
        scope = NULL;
        rc = sql_select_rows(s, sl->subselect->select_stmt, NULL, NULL, true,
                             &rs);
        if (rc != KEEL_OK && (strcmp(s->err->sqlstate, "42703") == 0 ||
                              strcmp(s->err->sqlstate, "42P01") == 0))
            rc = sql_unsupported(s, sl->location,
                                 "correlated subqueries in a grouped query's "
                                 "output");
    } else {
        rc = sql_select_rows(s, sl->subselect->select_stmt, scope, NULL, true,
                             &rs);
    }
    if (rc != KEEL_OK)
        return rc;
    if (kind != SQL_SUBLINK_EXISTS && rs.ncols != 1)
        return sql_fail_at(s, sl->location, KEEL_EINVAL, "42601",
                           rs.ncols > 1 ? "subquery must return only one column"
                                        : "subquery must return a column");
    type = kind == SQL_SUBLINK_EXISTS ? SQL_TYPE_BOOL : rs.types[0];
    e = sql_expr_new(s, SQL_EXPR_SUBLINK, type, sl->location,
                     l != NULL ? 1 : 0);
    if (e == NULL)
        return nomem(s);
    e->u.sublink = kind;
    e->sub = sl->subselect->select_stmt;
    /* The scope outlives the function that analysed it (RETURNING's is
     * a local of sql_returning_begin()); what it points to is the
     * statement's. */
    if (scope != NULL) {
        sql_scope *copy = sql_alloc(&s->arena, sizeof(*copy));
        if (copy == NULL)
            return nomem(s);
        *copy = *scope;
        scope = copy;
    }
    e->sub_scope = scope;
    e->sub_type = type;
    if (kind == SQL_SUBLINK_ARRAY) {
        e->type = sql_type_array_of(type);
        if (e->type == 0) {
            char what[96];
            snprintf(what, sizeof(what), "arrays of type %s", sql_type_name(type));
            return sql_unsupported(s, sl->location, what);
        }
    } else if (kind == SQL_SUBLINK_IN) {
        /* Compared as the common type of both sides. */
        sql_expr *r = sql_expr_new(s, SQL_EXPR_CONST, type, sl->location, 0);
        if (r == NULL)
            return nomem(s);
        r->u.value.type = type;
        r->u.value.isnull = true;
        rc = unify(s, &l, &r, "=", sl->location, &e->sub_type);
        if (rc != KEEL_OK)
            return rc;
        e->args[0] = l;
        e->type = SQL_TYPE_BOOL;
    }
    /* It runs a query: no scan may be open while it does. */
    s->expr_engine_reads++;
    *out = e;
    return KEEL_OK;
}

/* x op ANY (array): the array's elements compared with x as x's type. */
static keel_status analyse_any(sql_session *s, const sql_scope *scope,
                               const PgQuery__AExpr *a, sql_expr **out)
{
    const char *name = op_name(a);
    sql_expr *l, *r, *e;
    keel_status rc;

    if (name == NULL || strcmp(name, "=") != 0)
        return sql_unsupported(s, a->location, "ANY and ALL but = ANY");
    rc = sql_expr_analyse(s, scope, a->lexpr, &l);
    if (rc == KEEL_OK)
        rc = sql_expr_analyse(s, scope, a->rexpr, &r);
    if (rc != KEEL_OK)
        return rc;
    if (r->type == SQL_TYPE_UNKNOWN && l->type != SQL_TYPE_UNKNOWN &&
        sql_type_array_of(l->type) != 0)
        rc = coerce(s, &r, sql_type_array_of(l->type), true);
    if (rc != KEEL_OK)
        return rc;
    if (sql_type_elem(r->type) == 0)
        return sql_fail_at(s, a->location, KEEL_ETYPE, "42809",
                           "op ANY/ALL (array) requires array on right side");
    if (l->type == SQL_TYPE_UNKNOWN)
        rc = coerce(s, &l, sql_type_elem(r->type), false);
    else if (sql_type_is_string(l->type) !=
             sql_type_is_string(sql_type_elem(r->type)))
        rc = sql_fail_at(s, a->location, KEEL_ETYPE, "42883",
                         "operator does not exist: %s = %s",
                         sql_type_name(l->type),
                         sql_type_name(sql_type_elem(r->type)));
    if (rc != KEEL_OK)
        return rc;
    e = sql_expr_new(s, SQL_EXPR_ANY, SQL_TYPE_BOOL, a->location, 2);
    if (e == NULL)
        return nomem(s);
    e->args[0] = l;
    e->args[1] = r;
    *out = e;
    return KEEL_OK;
}

static keel_status unify_list(sql_session *s, sql_expr **list, uint16_t n,
                              int32_t location, const char *ctx, uint32_t *out);

/* ARRAY[elements]: of their common type (text for untyped literals
 * only), which must have an array type in keel; ARRAY[] alone has no
 * type (42P18), as in PostgreSQL, unless a cast gives it one. */
static keel_status analyse_array(sql_session *s, const sql_scope *scope,
                                 const PgQuery__AArrayExpr *ae, sql_expr **out)
{
    sql_expr *e;
    uint32_t t;
    keel_status rc;

    if (ae->n_elements == 0) {
        rc = sql_fail_at(s, ae->location, KEEL_ETYPE, "42P18",
                         "cannot determine type of empty array");
        if (s->err != NULL)
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Explicitly cast to the desired type, for example "
                     "ARRAY[]::integer[].");
        return rc;
    }
    if (ae->n_elements > UINT16_MAX)
        return sql_unsupported(s, ae->location, "arrays of so many elements");
    e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TEXT_ARRAY, ae->location,
                 (uint16_t)ae->n_elements);
    if (e == NULL)
        return nomem(s);
    e->u.func = SQL_FUNC_ARRAY;
    for (uint16_t i = 0; i < e->nargs; i++) {
        rc = sql_expr_analyse(s, scope, ae->elements[i], &e->args[i]);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = unify_list(s, e->args, e->nargs, ae->location, "ARRAY", &t);
    if (rc != KEEL_OK)
        return rc;
    if (t == SQL_TYPE_UNKNOWN) {
        t = SQL_TYPE_TEXT;
        for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++)
            rc = coerce(s, &e->args[i], t, false);
        if (rc != KEEL_OK)
            return rc;
    }
    if (sql_type_elem(t) != 0) {
        e->type = t; /* arrays of arrays: one more dimension */
    } else if (sql_type_array_of(t) != 0) {
        e->type = sql_type_array_of(t);
    } else {
        char what[96];
        snprintf(what, sizeof(what), "arrays of type %s", sql_type_name(t));
        return sql_unsupported(s, ae->location, what);
    }
    *out = e;
    return KEEL_OK;
}

/* 42883 for function name over e's arguments' types, with PostgreSQL's
 * hint. */
static keel_status no_such_function(sql_session *s, int32_t location,
                                    const char *name, const sql_expr *e)
{
    char types[160];
    size_t u = 0;
    keel_status rc;

    types[0] = '\0';
    for (uint16_t j = 0; j < e->nargs && u < sizeof(types); j++)
        u += (size_t)snprintf(types + u, sizeof(types) - u, "%s%s",
                              j > 0 ? ", " : "",
                              sql_type_name(e->args[j]->type));
    rc = sql_fail_at(s, location, KEEL_ETYPE, "42883",
                     "function %s(%s) does not exist", name, types);
    if (s->err != NULL)
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "No function matches the given name and argument types. "
                 "You might need to add explicit type casts.");
    return rc;
}

keel_status sql_no_such_function(sql_session *s, int32_t location,
                                 const char *name, const sql_expr *e)
{
    return no_such_function(s, location, name, e);
}

/*
 * nextval(), currval(), setval() and lastval(): the sequence's name as
 * text.  'name'::regclass, as PostgreSQL writes a SERIAL column's
 * default, is that text: a sequence is no relation here (sql_sequence.c).
 */
static keel_status analyse_seqfunc(sql_session *s, const sql_scope *scope,
                                   const PgQuery__FuncCall *fc,
                                   const char *name, sql_expr **out)
{
    sql_expr *e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_INT8, fc->location,
                           (uint16_t)fc->n_args);
    keel_status rc = KEEL_OK;

    if (e == NULL)
        return nomem(s);
    e->u.func = name[0] == 'n' || name[0] == 'k' ? SQL_FUNC_NEXTVAL
                : name[0] == 'c' ? SQL_FUNC_CURRVAL
                : name[0] == 's' ? SQL_FUNC_SETVAL
                                 : SQL_FUNC_LASTVAL;
    for (uint16_t i = 0; rc == KEEL_OK && i < fc->n_args; i++) {
        const PgQuery__Node *a = fc->args[i];
        uint32_t want = i == 0 ? SQL_TYPE_TEXT
                        : i == 1 ? SQL_TYPE_INT8
                                 : SQL_TYPE_BOOL;
        if (i == 0 && a->node_case == PG_QUERY__NODE__NODE_TYPE_CAST &&
            a->type_cast->type_name != NULL &&
            a->type_cast->type_name->n_names > 0 &&
            sql_node_string(a->type_cast->type_name->names
                                [a->type_cast->type_name->n_names - 1]) !=
                NULL &&
            strcmp(sql_node_string(
                       a->type_cast->type_name
                           ->names[a->type_cast->type_name->n_names - 1]),
                   "regclass") == 0)
            a = a->type_cast->arg;
        rc = sql_expr_analyse(s, scope, a, &e->args[i]);
        if (rc == KEEL_OK && i == 0 && !sql_type_is_string(e->args[0]->type))
            rc = sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                             "function %s(%s) does not exist", name,
                             sql_type_name(e->args[0]->type));
        if (rc == KEEL_OK)
            rc = coerce(s, &e->args[i], want, false);
    }
    if (rc != KEEL_OK)
        return rc;
    s->expr_engine_reads++;
    *out = e;
    return KEEL_OK;
}

/*
 * Arithmetic with dates, timestamps and intervals, as PostgreSQL's
 * operators type it: date +- integer (a date), date - date (integer
 * days), a date or timestamp +- interval (a timestamp of its kind, a date
 * giving timestamp), timestamp - timestamp (interval), interval +-
 * interval, interval * or / a number.  A literal takes the type the
 * other side needs (interval beside a date or timestamp).
 */
static keel_status analyse_datetime_arith(sql_session *s, sql_op op,
                                          const char *name, sql_expr *l,
                                          sql_expr *r, int32_t location,
                                          sql_expr **out)
{
    uint32_t tl, tr, t = 0;
    sql_expr *e;
    keel_status rc = KEEL_OK;

    /* An untyped literal beside a point in time is an interval, beside
     * an interval a number or an interval by the operator. */
    if (l->type == SQL_TYPE_UNKNOWN)
        rc = coerce(s, &l,
                    r->type == SQL_TYPE_INTERVAL && op == SQL_OP_MUL
                        ? SQL_TYPE_FLOAT8
                        : SQL_TYPE_INTERVAL,
                    false);
    if (rc == KEEL_OK && r->type == SQL_TYPE_UNKNOWN)
        rc = coerce(s, &r,
                    l->type == SQL_TYPE_INTERVAL &&
                            (op == SQL_OP_MUL || op == SQL_OP_DIV)
                        ? SQL_TYPE_FLOAT8
                    : l->type == SQL_TYPE_DATE && op == SQL_OP_SUB
                        ? SQL_TYPE_DATE
                        : SQL_TYPE_INTERVAL,
                    false);
    /* interval * numeric is interval * double precision, as PostgreSQL
     * casts the number. */
    if (rc == KEEL_OK && l->type == SQL_TYPE_INTERVAL &&
        r->type == SQL_TYPE_NUMERIC && (op == SQL_OP_MUL || op == SQL_OP_DIV))
        rc = coerce(s, &r, SQL_TYPE_FLOAT8, false);
    if (rc == KEEL_OK && r->type == SQL_TYPE_INTERVAL &&
        l->type == SQL_TYPE_NUMERIC && op == SQL_OP_MUL)
        rc = coerce(s, &l, SQL_TYPE_FLOAT8, false);
    if (rc != KEEL_OK)
        return rc;
    tl = l->type;
    tr = r->type;
    if (tl == SQL_TYPE_DATE && sql_type_is_int(tr) && tr != SQL_TYPE_INT8 &&
        (op == SQL_OP_ADD || op == SQL_OP_SUB))
        t = SQL_TYPE_DATE;
    else if (sql_type_is_int(tl) && tl != SQL_TYPE_INT8 &&
             tr == SQL_TYPE_DATE && op == SQL_OP_ADD)
        t = SQL_TYPE_DATE;
    else if (tl == SQL_TYPE_DATE && tr == SQL_TYPE_DATE && op == SQL_OP_SUB)
        t = SQL_TYPE_INT4;
    else if (sql_type_is_datetime(tl) && tr == SQL_TYPE_INTERVAL &&
             (op == SQL_OP_ADD || op == SQL_OP_SUB))
        t = tl == SQL_TYPE_DATE ? SQL_TYPE_TIMESTAMP : tl;
    else if (tl == SQL_TYPE_INTERVAL && sql_type_is_datetime(tr) &&
             op == SQL_OP_ADD)
        t = tr == SQL_TYPE_DATE ? SQL_TYPE_TIMESTAMP : tr;
    else if (sql_type_is_datetime(tl) && tl != SQL_TYPE_DATE && tl == tr &&
             op == SQL_OP_SUB)
        t = SQL_TYPE_INTERVAL;
    else if (tl == SQL_TYPE_INTERVAL && tr == SQL_TYPE_INTERVAL &&
             (op == SQL_OP_ADD || op == SQL_OP_SUB))
        t = SQL_TYPE_INTERVAL;
    else if (((tl == SQL_TYPE_INTERVAL && sql_type_is_number(tr)) ||
              (sql_type_is_number(tl) && tr == SQL_TYPE_INTERVAL &&
               op == SQL_OP_MUL)) &&
             (op == SQL_OP_MUL || op == SQL_OP_DIV) &&
             tl != SQL_TYPE_NUMERIC && tr != SQL_TYPE_NUMERIC)
        t = SQL_TYPE_INTERVAL;
    if (t == 0)
        return no_operator(s, location, tl, name, tr);
    e = sql_expr_new(s, SQL_EXPR_OP, t, location, 2);
    if (e == NULL)
        return nomem(s);
    e->u.op = op;
    e->args[0] = l;
    e->args[1] = r;
    *out = e;
    return KEEL_OK;
}

/* NULLIF(a, b): a, or NULL when a = b (compared as their common type). */
static keel_status analyse_nullif(sql_session *s, const sql_scope *scope,
                                  const PgQuery__AExpr *a, sql_expr **out)
{
    sql_expr *e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TEXT, a->location, 2);
    keel_status rc;

    if (e == NULL)
        return nomem(s);
    e->u.func = SQL_FUNC_NULLIF;
    rc = sql_expr_analyse(s, scope, a->lexpr, &e->args[0]);
    if (rc == KEEL_OK)
        rc = sql_expr_analyse(s, scope, a->rexpr, &e->args[1]);
    if (rc == KEEL_OK)
        rc = unify_list(s, e->args, 2, a->location, NULL, &e->type);
    if (rc == KEEL_OK)
        *out = e;
    return rc;
}

/* LIKE, ILIKE and their operators (~~, ~~*, and !~~, !~~* for NOT),
 * named name: text against a pattern. */
static keel_status analyse_like(sql_session *s, const sql_scope *scope,
                                const PgQuery__AExpr *a, const char *name,
                                sql_expr **out)
{
    sql_expr *l = NULL, *r = NULL, *e;
    keel_status rc = sql_expr_analyse(s, scope, a->lexpr, &l);

    if (rc == KEEL_OK)
        rc = sql_expr_analyse(s, scope, a->rexpr, &r);
    if (rc == KEEL_OK && !sql_type_is_string(l->type))
        rc = no_operator(s, a->location, l->type, name, r->type);
    if (rc == KEEL_OK)
        rc = coerce(s, &r, SQL_TYPE_TEXT, false);
    if (rc != KEEL_OK)
        return rc;
    e = sql_expr_new(s, SQL_EXPR_LIKE, SQL_TYPE_BOOL, a->location, 2);
    if (e == NULL)
        return nomem(s);
    e->u.negate = name[0] == '!';
    e->icase = name[strlen(name) - 1] == '*';
    e->args[0] = l;
    e->args[1] = r;
    *out = e;
    return KEEL_OK;
}

static keel_status analyse_aexpr(sql_session *s, const sql_scope *scope,
                                 const PgQuery__AExpr *a, sql_expr **out)
{
    const char *name = op_name(a);
    sql_expr *l = NULL, *r = NULL, *e;
    sql_op op;
    keel_status rc;

    if (name == NULL)
        return sql_unsupported(s, a->location, "this operator");
    switch (a->kind) {
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ANY:
        return analyse_any(s, scope, a, out);
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP:
        if ((strcmp(name, "^") == 0 && a->lexpr != NULL) ||
            (a->lexpr == NULL &&
             (strcmp(name, "|/") == 0 || strcmp(name, "||/") == 0 ||
              strcmp(name, "@") == 0)))
            return analyse_op_func(s, scope, a,
                                   name[0] == '^'   ? "power"
                                   : name[0] == '@' ? "abs"
                                   : name[1] == '/' ? "sqrt"
                                                    : "cbrt",
                                   out);
        if (a->lexpr != NULL &&
            (strcmp(name, "~~") == 0 || strcmp(name, "!~~") == 0 ||
             strcmp(name, "~~*") == 0 || strcmp(name, "!~~*") == 0))
            return analyse_like(s, scope, a, name, out);
        if (a->lexpr != NULL &&
            (sql_json_op_name(name) || strcmp(name, "||") == 0 ||
             strcmp(name, "-") == 0)) {
            bool json = sql_json_op_name(name);
            rc = sql_expr_analyse(s, scope, a->lexpr, &l);
            if (rc == KEEL_OK)
                rc = sql_expr_analyse(s, scope, a->rexpr, &r);
            if (rc != KEEL_OK)
                return rc;
            if (json || (name[0] == '|' && sql_json_is_concat(l, r)) ||
                (name[0] == '-' && l->type == SQL_TYPE_JSONB))
                return sql_json_op(s, name, l, r, a->location, out);
            if (!op_lookup(name, &op))
                return sql_fail_at(s, a->location, KEEL_ETYPE, "42883",
                                   "operator does not exist: %s", name);
            return analyse_binary(s, op, name, l, r, a->location, out);
        }
        if (!op_lookup(name, &op))
            return sql_fail_at(s, a->location, KEEL_ETYPE, "42883",
                               "operator does not exist: %s", name);
        if (a->lexpr == NULL) {
            /* prefix: -x, +x */
            if (op != SQL_OP_SUB && op != SQL_OP_ADD)
                return sql_fail_at(s, a->location, KEEL_ETYPE, "42883",
                                   "operator does not exist: %s", name);
            rc = sql_expr_analyse(s, scope, a->rexpr, &r);
            if (rc != KEEL_OK)
                return rc;
            if (!sql_type_is_number(r->type) && r->type != SQL_TYPE_INTERVAL)
                return sql_fail_at(s, a->location, KEEL_ETYPE, "42883",
                                   "operator does not exist: %s %s", name,
                                   sql_type_name(r->type));
            if (op == SQL_OP_ADD) {
                *out = r;
                return KEEL_OK;
            }
            e = sql_expr_new(s, SQL_EXPR_OP, r->type, a->location, 1);
            if (e == NULL)
                return nomem(s);
            e->u.op = SQL_OP_NEG;
            e->args[0] = r;
            *out = e;
            return KEEL_OK;
        }
        rc = sql_expr_analyse(s, scope, a->lexpr, &l);
        if (rc == KEEL_OK)
            rc = sql_expr_analyse(s, scope, a->rexpr, &r);
        if (rc != KEEL_OK)
            return rc;
        return analyse_binary(s, op, name, l, r, a->location, out);
    case PG_QUERY__A__EXPR__KIND__AEXPR_IN: {
        const PgQuery__List *list;
        bool negate = strcmp(name, "<>") == 0;
        uint32_t t;
        if (a->rexpr == NULL || a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST)
            return sql_unsupported(s, a->location, "IN with a subquery");
        list = a->rexpr->list;
        rc = sql_expr_analyse(s, scope, a->lexpr, &l);
        if (rc != KEEL_OK)
            return rc;
        e = sql_expr_new(s, SQL_EXPR_IN, SQL_TYPE_BOOL, a->location,
                     (uint16_t)(list->n_items + 1));
        if (e == NULL)
            return nomem(s);
        e->u.negate = negate;
        for (size_t i = 0; i < list->n_items; i++) {
            rc = sql_expr_analyse(s, scope, list->items[i], &r);
            if (rc == KEEL_OK)
                rc = unify(s, &l, &r, "=", a->location, &t);
            if (rc != KEEL_OK)
                return rc;
            e->args[i + 1] = r;
        }
        e->args[0] = l;
        *out = e;
        return KEEL_OK;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_DISTINCT:
        /* typed as = would type them */
        rc = sql_expr_analyse(s, scope, a->lexpr, &l);
        if (rc == KEEL_OK)
            rc = sql_expr_analyse(s, scope, a->rexpr, &r);
        if (rc == KEEL_OK)
            rc = analyse_binary(s, SQL_OP_EQ, "=", l, r, a->location, &e);
        if (rc != KEEL_OK)
            return rc;
        if (e->kind != SQL_EXPR_OP || e->u.op != SQL_OP_EQ)
            return sql_unsupported(s, a->location, "IS DISTINCT FROM of these "
                                                   "types");
        e->kind = SQL_EXPR_DISTINCT;
        e->u.negate = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_DISTINCT;
        *out = e;
        return KEEL_OK;
    case PG_QUERY__A__EXPR__KIND__AEXPR_LIKE:
    case PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE:
        return analyse_like(s, scope, a, name, out);
    case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN: {
        const PgQuery__List *list;
        sql_expr *lo, *hi, *l2, *c1, *c2;
        bool neg = a->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN;
        if (a->rexpr == NULL || a->rexpr->node_case != PG_QUERY__NODE__NODE_LIST ||
            a->rexpr->list->n_items != 2)
            return sql_unsupported(s, a->location, "this BETWEEN");
        list = a->rexpr->list;
        /* x BETWEEN a AND b is x >= a AND x <= b, x analysed twice. */
        rc = sql_expr_analyse(s, scope, a->lexpr, &l);
        if (rc == KEEL_OK)
            rc = sql_expr_analyse(s, scope, a->lexpr, &l2);
        if (rc == KEEL_OK)
            rc = sql_expr_analyse(s, scope, list->items[0], &lo);
        if (rc == KEEL_OK)
            rc = sql_expr_analyse(s, scope, list->items[1], &hi);
        if (rc == KEEL_OK)
            rc = analyse_binary(s, neg ? SQL_OP_LT : SQL_OP_GE,
                                neg ? "<" : ">=", l, lo, a->location, &c1);
        if (rc == KEEL_OK)
            rc = analyse_binary(s, neg ? SQL_OP_GT : SQL_OP_LE,
                                neg ? ">" : "<=", l2, hi, a->location, &c2);
        if (rc != KEEL_OK)
            return rc;
        e = sql_expr_new(s, neg ? SQL_EXPR_OR : SQL_EXPR_AND, SQL_TYPE_BOOL,
                     a->location, 2);
        if (e == NULL)
            return nomem(s);
        e->args[0] = c1;
        e->args[1] = c2;
        *out = e;
        return KEEL_OK;
    }
    default:
        return sql_unsupported(s, a->location, "this kind of operator");
    }
}

/* An aggregate: its argument analysed over the input row, the call a
 * slot of the group's row. */
static keel_status analyse_agg(sql_session *s, const sql_scope *scope,
                               const PgQuery__FuncCall *fc, const char *name,
                               sql_expr **out)
{
    sql_grouping *g = scope != NULL ? scope->grouping : NULL;
    sql_agg a = {0};
    sql_expr *e;
    uint16_t n0;
    keel_status rc;

    if (g == NULL) {
        s->saw_aggregate = true;
        if (s->clause != NULL)
            return sql_fail_at(s, fc->location, KEEL_EINVAL, "42803",
                               "aggregate functions are not allowed in %s",
                               s->clause);
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "42803",
                           "aggregate functions are not allowed here");
    }
    n0 = sql_srf_count(s);
    if (s->windowing != NULL) {
        /* Its argument holds no window function. */
        const char *inside = s->windowing->inside;
        s->windowing->inside = "aggregate";
        rc = sql_agg_build(s, g->input, fc, name, &a);
        s->windowing->inside = inside;
    } else {
        rc = sql_agg_build(s, g->input, fc, name, &a);
    }
    if (rc == KEEL_OK)
        rc = sql_srf_none_since(s, n0, "aggregate function calls");
    if (rc != KEEL_OK)
        return rc;
    if (g->naggs == g->capaggs) {
        uint16_t cap = g->capaggs == 0 ? 8 : (uint16_t)(g->capaggs * 2);
        sql_agg *na = sql_alloc(&s->arena, cap * sizeof(*na));
        if (na == NULL)
            return nomem(s);
        if (g->naggs > 0)
            memcpy(na, g->aggs, g->naggs * sizeof(*na));
        g->aggs = na;
        g->capaggs = cap;
    }
    a.order_off = g->nextra;
    g->nextra = (uint16_t)(g->nextra + a.norder);
    g->aggs[g->naggs] = a;
    e = sql_expr_new(s, SQL_EXPR_COLUMN, a.type, fc->location, 0);
    if (e == NULL)
        return nomem(s);
    e->u.column = (uint16_t)(g->nkeys + g->naggs++);
    *out = e;
    return KEEL_OK;
}

bool sql_expr_same(const sql_expr *a, const sql_expr *b)
{
    if (a == b)
        return true;
    if (a->kind != b->kind || a->type != b->type || a->nargs != b->nargs)
        return false;
    switch (a->kind) {
    case SQL_EXPR_CONST:
        if (a->u.value.isnull || b->u.value.isnull)
            return a->u.value.isnull && b->u.value.isnull;
        if (sql_key_cmp(&a->u.value, &b->u.value, false, false) != 0)
            return false;
        break;
    case SQL_EXPR_COLUMN:
    case SQL_EXPR_PARAM:
    case SQL_EXPR_WINDOW:
        if (a->u.column != b->u.column)
            return false;
        break;
    case SQL_EXPR_OP:
        if (a->u.op != b->u.op)
            return false;
        break;
    case SQL_EXPR_FUNC:
        if (a->u.func != b->u.func)
            return false;
        break;
    case SQL_EXPR_SUBLINK:
        return false;
    default:
        if (memcmp(&a->u, &b->u, sizeof(a->u)) != 0)
            return false;
        break;
    }
    for (uint16_t i = 0; i < a->nargs; i++)
        if (!sql_expr_same(a->args[i], b->args[i]))
            return false;
    return true;
}

bool sql_agg_name(const char *name)
{
    static const char *const names[] = {"count",     "sum",        "min",
                                        "max",       "avg",        "string_agg",
                                        "array_agg", "json_agg",   "jsonb_agg"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* No function (or aggregate) of that name takes fc's arguments:
 * PostgreSQL's 42883, naming their types, with its hint. */
static keel_status agg_no_such(sql_session *s, const sql_scope *scope,
                               const PgQuery__FuncCall *fc, const char *name)
{
    sql_expr *e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TEXT, fc->location,
                           (uint16_t)fc->n_args);
    keel_status rc = KEEL_OK;

    if (e == NULL)
        return nomem(s);
    for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++)
        rc = sql_expr_analyse(s, scope, fc->args[i], &e->args[i]);
    return rc != KEEL_OK ? rc : no_such_function(s, fc->location, name, e);
}

/* e without the casts analysis put around it. */
static const sql_expr *uncast(const sql_expr *e)
{
    while (e->kind == SQL_EXPR_CAST && e->nargs == 1)
        e = e->args[0];
    return e;
}

/* An aggregate's ORDER BY: its keys over the input row (scope). */
static keel_status agg_order(sql_session *s, const sql_scope *scope,
                             const PgQuery__FuncCall *fc, sql_agg *a)
{
    uint16_t n = (uint16_t)fc->n_agg_order;
    keel_status rc = KEEL_OK;

    a->order = sql_alloc(&s->arena, (n + 1u) * sizeof(*a->order));
    a->odesc = sql_alloc(&s->arena, n + 1u);
    a->onulls_first = sql_alloc(&s->arena, n + 1u);
    if (a->order == NULL || a->odesc == NULL || a->onulls_first == NULL)
        return nomem(s);
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        const PgQuery__SortBy *sb = fc->agg_order[i]->sort_by;
        if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
            return sql_unsupported(s, sb->location, "ORDER BY ... USING");
        a->odesc[i] = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
        a->onulls_first[i] =
            sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ||
            (sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_DEFAULT &&
             a->odesc[i]);
        rc = sql_expr_prepare(s, scope, sb->node, &a->order[i]);
        if (rc == KEEL_OK && a->order[i]->type == SQL_TYPE_UNKNOWN)
            rc = coerce(s, &a->order[i], SQL_TYPE_TEXT, false);
        /* With DISTINCT the values themselves are sorted. */
        if (rc == KEEL_OK && a->distinct &&
            (a->arg == NULL ||
             !sql_expr_same(uncast(a->order[i]), uncast(a->arg))))
            rc = sql_fail_at(s, a->order[i]->location, KEEL_EINVAL, "42P10",
                             "in an aggregate with DISTINCT, ORDER BY "
                             "expressions must appear in argument list");
    }
    a->norder = n;
    return rc;
}

keel_status sql_agg_build(sql_session *s, const sql_scope *scope,
                          const PgQuery__FuncCall *fc, const char *name,
                          sql_agg *out)
{
    sql_agg a = {0};
    keel_status rc;

    if (fc->agg_within_group)
        return sql_unsupported(s, fc->location, "WITHIN GROUP");
    a.distinct = fc->agg_distinct;
    if (fc->agg_filter != NULL) {
        /* Over the input row, as the argument; no aggregate in it. */
        const char *clause = s->clause;
        s->clause = "FILTER";
        rc = sql_expr_prepare(s, scope, fc->agg_filter, &a.filter);
        s->clause = clause;
        if (rc == KEEL_OK && a.filter->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &a.filter, SQL_TYPE_BOOL);
        if (rc == KEEL_OK && a.filter->type != SQL_TYPE_BOOL)
            rc = sql_fail_at(s, a.filter->location, KEEL_ETYPE, "42804",
                             "argument of FILTER must be type boolean, not "
                             "type %s",
                             sql_type_name(a.filter->type));
        if (rc != KEEL_OK)
            return rc;
    }
    if (fc->agg_star) {
        if (strcmp(name, "count") != 0)
            return sql_fail_at(s, fc->location, KEEL_EINVAL, "42809",
                               "%s(*) specified, but %s is not an aggregate "
                               "function taking *",
                               name, name);
        a.kind = SQL_AGG_COUNT_STAR;
        a.type = SQL_TYPE_INT8;
    } else if (strcmp(name, "array_agg") == 0 ||
               strcmp(name, "json_agg") == 0 ||
               strcmp(name, "jsonb_agg") == 0) {
        /* each value, NULLs too: into an array, or a json(b) array */
        if (fc->n_args != 1)
            return agg_no_such(s, scope, fc, name);
        rc = sql_expr_analyse(s, scope, fc->args[0], &a.arg);
        if (rc == KEEL_OK && a.arg->type == SQL_TYPE_UNKNOWN)
            rc = coerce(s, &a.arg, SQL_TYPE_TEXT, false);
        if (rc != KEEL_OK)
            return rc;
        a.kind = name[0] == 'a'   ? SQL_AGG_ARRAY_AGG
                 : name[4] == 'b' ? SQL_AGG_JSONB_AGG
                                  : SQL_AGG_JSON_AGG;
        a.type = name[0] == 'a'   ? sql_type_array_of(a.arg->type)
                 : name[4] == 'b' ? SQL_TYPE_JSONB
                                  : SQL_TYPE_JSON;
        if (a.type == 0) {
            char what[96];
            snprintf(what, sizeof(what), "array_agg of type %s",
                     sql_type_name(a.arg->type));
            return sql_unsupported(s, fc->location, what);
        }
    } else if (strcmp(name, "string_agg") == 0) {
        sql_expr *d;
        if (fc->n_args != 2)
            return agg_no_such(s, scope, fc, name);
        rc = sql_expr_analyse(s, scope, fc->args[0], &a.arg);
        if (rc == KEEL_OK)
            rc = sql_expr_prepare(s, scope, fc->args[1], &d);
        if (rc != KEEL_OK)
            return rc;
        if (!sql_type_is_string(a.arg->type) || !sql_type_is_string(d->type))
            return sql_fail_at(s, fc->location, KEEL_ENOENT, "42883",
                               "function string_agg(%s, %s) does not exist",
                               sql_type_name(a.arg->type),
                               sql_type_name(d->type));
        if (d->kind != SQL_EXPR_CONST)
            return sql_unsupported(s, fc->location,
                                   "string_agg with a separator that varies");
        rc = coerce(s, &a.arg, SQL_TYPE_TEXT, false);
        if (rc != KEEL_OK)
            return rc;
        a.kind = SQL_AGG_STRING_AGG;
        a.type = SQL_TYPE_TEXT;
        a.delim = d->u.value;
    } else {
        uint32_t t;
        if (fc->n_args != 1)
            return agg_no_such(s, scope, fc, name);
        rc = sql_expr_analyse(s, scope, fc->args[0], &a.arg);
        if (rc != KEEL_OK)
            return rc;
        if (a.arg->type == SQL_TYPE_UNKNOWN) {
            rc = coerce(s, &a.arg, SQL_TYPE_TEXT, false);
            if (rc != KEEL_OK)
                return rc;
        }
        t = a.arg->type;
        if (strcmp(name, "count") == 0) {
            a.kind = SQL_AGG_COUNT;
            a.type = SQL_TYPE_INT8;
        } else if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0) {
            a.kind = name[1] == 'i' ? SQL_AGG_MIN : SQL_AGG_MAX;
            a.type = t == SQL_TYPE_NAME || t == SQL_TYPE_VARCHAR ? SQL_TYPE_TEXT : t;
        } else if (t == SQL_TYPE_FLOAT8) {
            a.kind = name[0] == 's' ? SQL_AGG_SUM : SQL_AGG_AVG;
            a.type = SQL_TYPE_FLOAT8;
        } else if (name[0] == 's' &&
                   (t == SQL_TYPE_INT2 || t == SQL_TYPE_INT4)) {
            a.kind = SQL_AGG_SUM;
            a.type = SQL_TYPE_INT8;
        } else if ((t == SQL_TYPE_INT2 || t == SQL_TYPE_INT4 ||
                    t == SQL_TYPE_INT8 || t == SQL_TYPE_NUMERIC)) {
            /* sum(bigint), sum(numeric), avg of integers or numerics:
             * numeric, as in PostgreSQL. */
            a.kind = name[0] == 's' ? SQL_AGG_SUM : SQL_AGG_AVG;
            a.type = SQL_TYPE_NUMERIC;
        } else {
            return sql_fail_at(s, fc->location, KEEL_ENOENT, "42883",
                               "function %s(%s) does not exist", name,
                               sql_type_name(t));
        }
    }
    if (fc->n_agg_order > 0) {
        rc = agg_order(s, scope, fc, &a);
        if (rc != KEEL_OK)
            return rc;
    }
    *out = a;
    return KEEL_OK;
}

static keel_status analyse_func(sql_session *s, const sql_scope *scope,
                                const PgQuery__FuncCall *fc, sql_expr **out)
{
    static const struct {
        const char *name;
        sql_func func;
        uint16_t nargs;
    } funcs[] = {
        {"version", SQL_FUNC_VERSION, 0},
        {"random", SQL_FUNC_RANDOM, 0},
        {"abs", SQL_FUNC_ABS, 1},
        {"length", SQL_FUNC_LENGTH, 1},
        {"char_length", SQL_FUNC_LENGTH, 1},
        {"upper", SQL_FUNC_UPPER, 1},
        {"lower", SQL_FUNC_LOWER, 1},
        {"current_setting", SQL_FUNC_CURRENT_SETTING, 1},
        {"now", SQL_FUNC_NOW, 0},
        {"transaction_timestamp", SQL_FUNC_NOW, 0},
        {"clock_timestamp", SQL_FUNC_CLOCK_TIMESTAMP, 0},
        {"round", SQL_FUNC_ROUND, 1},
        {"round", SQL_FUNC_ROUND, 2},
        {"trunc", SQL_FUNC_TRUNC, 1},
        {"trunc", SQL_FUNC_TRUNC, 2},
        {"ceil", SQL_FUNC_CEIL, 1},
        {"ceiling", SQL_FUNC_CEIL, 1},
        {"floor", SQL_FUNC_FLOOR, 1},
        {"current_schemas", SQL_FUNC_CURRENT_SCHEMAS, 1},
        {"array_position", SQL_FUNC_ARRAY_POSITION, 2},
        {"array_to_string", SQL_FUNC_ARRAY_TO_STRING, 2},
        {"array_to_string", SQL_FUNC_ARRAY_TO_STRING, 3},
        {"pg_get_userbyid", SQL_FUNC_PG_GET_USERBYID, 1},
        {"pg_table_is_visible", SQL_FUNC_PG_TABLE_IS_VISIBLE, 1},
        {"pg_encoding_to_char", SQL_FUNC_PG_ENCODING_TO_CHAR, 1},
        {"format_type", SQL_FUNC_FORMAT_TYPE, 2},
        {"quote_ident", SQL_FUNC_QUOTE_IDENT, 1},
        {"split_part", SQL_FUNC_SPLIT_PART, 3},
        {"current_database", SQL_FUNC_CURRENT_DATABASE, 0},
        {"pg_get_expr", SQL_FUNC_PG_GET_EXPR, 2},
        {"pg_get_expr", SQL_FUNC_PG_GET_EXPR, 3},
        {"pg_get_indexdef", SQL_FUNC_PG_GET_INDEXDEF, 1},
        {"pg_get_indexdef", SQL_FUNC_PG_GET_INDEXDEF, 3},
        {"pg_get_constraintdef", SQL_FUNC_PG_GET_CONSTRAINTDEF, 1},
        {"pg_get_constraintdef", SQL_FUNC_PG_GET_CONSTRAINTDEF, 2},
        {"pg_get_statisticsobjdef_columns",
         SQL_FUNC_PG_GET_STATISTICSOBJDEF_COLUMNS, 1},
        {"pg_get_triggerdef", SQL_FUNC_PG_GET_TRIGGERDEF, 1},
        {"pg_get_triggerdef", SQL_FUNC_PG_GET_TRIGGERDEF, 2},
        {"pg_relation_is_publishable", SQL_FUNC_PG_RELATION_IS_PUBLISHABLE, 1},
        {"array_upper", SQL_FUNC_ARRAY_UPPER, 2},
        /* arrays here start at 1: a dimension's length is its upper bound */
        {"array_length", SQL_FUNC_ARRAY_UPPER, 2},
        {"pg_relation_size", SQL_FUNC_PG_RELATION_SIZE, 1},
        {"pg_relation_size", SQL_FUNC_PG_RELATION_SIZE, 2},
        {"pg_table_size", SQL_FUNC_PG_TABLE_SIZE, 1},
        {"pg_indexes_size", SQL_FUNC_PG_INDEXES_SIZE, 1},
        {"pg_total_relation_size", SQL_FUNC_PG_TOTAL_RELATION_SIZE, 1},
        {"pg_database_size", SQL_FUNC_PG_DATABASE_SIZE, 1},
        {"pg_size_pretty", SQL_FUNC_PG_SIZE_PRETTY, 1},
        {"obj_description", SQL_FUNC_OBJ_DESCRIPTION, 1},
        {"obj_description", SQL_FUNC_OBJ_DESCRIPTION, 2},
        {"col_description", SQL_FUNC_COL_DESCRIPTION, 2},
        {"shobj_description", SQL_FUNC_SHOBJ_DESCRIPTION, 2},
        {"has_database_privilege", SQL_FUNC_HAS_DATABASE_PRIVILEGE, 2},
        {"pg_type_is_visible", SQL_FUNC_PG_TYPE_IS_VISIBLE, 1},
        {"extract", SQL_FUNC_EXTRACT, 2},
        {"date_part", SQL_FUNC_DATE_PART, 2},
        {"date_trunc", SQL_FUNC_DATE_TRUNC, 2},
        {"to_char", SQL_FUNC_TO_CHAR, 2},
        {"substr", SQL_FUNC_SUBSTR, 2},
        {"substr", SQL_FUNC_SUBSTR, 3},
        {"substring", SQL_FUNC_SUBSTR, 2},
        {"substring", SQL_FUNC_SUBSTR, 3},
        {"strpos", SQL_FUNC_STRPOS, 2},
        {"position", SQL_FUNC_STRPOS, 2},
        {"replace", SQL_FUNC_REPLACE, 3},
        {"btrim", SQL_FUNC_BTRIM, 1},
        {"btrim", SQL_FUNC_BTRIM, 2},
        {"ltrim", SQL_FUNC_LTRIM, 1},
        {"ltrim", SQL_FUNC_LTRIM, 2},
        {"rtrim", SQL_FUNC_RTRIM, 1},
        {"rtrim", SQL_FUNC_RTRIM, 2},
        {"left", SQL_FUNC_LEFT, 2},
        {"right", SQL_FUNC_RIGHT, 2},
        {"repeat", SQL_FUNC_REPEAT, 2},
        {"reverse", SQL_FUNC_REVERSE, 1},
        {"lpad", SQL_FUNC_LPAD, 2},
        {"lpad", SQL_FUNC_LPAD, 3},
        {"rpad", SQL_FUNC_RPAD, 2},
        {"rpad", SQL_FUNC_RPAD, 3},
        {"starts_with", SQL_FUNC_STARTS_WITH, 2},
        {"to_regclass", SQL_FUNC_REGCLASS, 1},
        {"to_regtype", SQL_FUNC_REGTYPE, 1},
        {"to_regnamespace", SQL_FUNC_REGNAMESPACE, 1},
    };
    const char *name =
        fc->n_funcname > 0 ? sql_node_string(fc->funcname[fc->n_funcname - 1])
                           : NULL;
    sql_expr *e;
    keel_status rc;

    if (name == NULL)
        return sql_unsupported(s, fc->location, "this function call");
    /* Built-in functions live in pg_catalog; no other schema has any. */
    if (fc->n_funcname > 2 ||
        (fc->n_funcname == 2 &&
         (sql_node_string(fc->funcname[0]) == NULL ||
          strcmp(sql_node_string(fc->funcname[0]), "pg_catalog") != 0)))
        return sql_fail_at(s, fc->location, KEEL_ENOENT, "42883",
                           "function %s.%s does not exist",
                           sql_node_string(fc->funcname[0]) != NULL
                               ? sql_node_string(fc->funcname[0])
                               : "?",
                           name);
    if (fc->over != NULL)
        return sql_window_analyse(s, scope, fc, name, out);
    if (sql_window_only(name))
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "42809",
                           "window function %s requires an OVER clause", name);
    if (!fc->agg_star && !sql_agg_name(name) &&
        (fc->agg_distinct || fc->agg_filter != NULL || fc->n_agg_order > 0 ||
         fc->agg_within_group))
        return sql_fail_at(s, fc->location, KEEL_EINVAL, "42809",
                           "%s specified, but %s is not an aggregate function",
                           fc->agg_distinct          ? "DISTINCT"
                           : fc->agg_within_group    ? "WITHIN GROUP"
                           : fc->n_agg_order > 0     ? "ORDER BY"
                                                     : "FILTER",
                           name);
    /* an identity column's default: its sequence's nextval() */
    if ((strcmp(name, "nextval") == 0 && fc->n_args == 1) ||
        ((strcmp(name, "keel_identity_always") == 0 ||
          strcmp(name, "keel_identity_by_default") == 0) &&
         fc->n_args == 1) ||
        (strcmp(name, "currval") == 0 && fc->n_args == 1) ||
        (strcmp(name, "setval") == 0 &&
         (fc->n_args == 2 || fc->n_args == 3)) ||
        (strcmp(name, "lastval") == 0 && fc->n_args == 0))
        return analyse_seqfunc(s, scope, fc, name, out);
    if ((strcmp(name, "concat") == 0 && fc->n_args > 0) ||
        (strcmp(name, "concat_ws") == 0 && fc->n_args > 1)) {
        e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TEXT, fc->location,
                     (uint16_t)fc->n_args);
        if (e == NULL)
            return nomem(s);
        e->u.func = name[6] == '_' ? SQL_FUNC_CONCAT_WS : SQL_FUNC_CONCAT;
        for (uint16_t a = 0; a < fc->n_args; a++) {
            rc = sql_expr_analyse(s, scope, fc->args[a], &e->args[a]);
            if (rc == KEEL_OK && e->args[a]->type == SQL_TYPE_UNKNOWN)
                rc = coerce(s, &e->args[a], SQL_TYPE_TEXT, false);
            if (rc != KEEL_OK)
                return rc;
        }
        *out = e;
        return KEEL_OK;
    }
    if (strcmp(name, "current_schema") == 0 && fc->n_args == 0) {
        /* The first schema of the search path, as CURRENT_SCHEMA. */
        e = sql_expr_new(s, SQL_EXPR_CONST, SQL_TYPE_NAME, fc->location, 0);
        if (e == NULL)
            return nomem(s);
        e->u.value.type = SQL_TYPE_NAME;
        e->u.value.v.s.p = "public";
        e->u.value.v.s.len = 6;
        *out = e;
        return KEEL_OK;
    }
    if (fc->agg_star || sql_agg_name(name))
        return analyse_agg(s, scope, fc, name, out);
    if (sql_srf_name(name))
        return sql_srf_analyse(s, scope, fc, name, out);
    {
        bool handled;
        rc = sql_func_more(s, scope, fc, name, out, &handled);
        if (rc != KEEL_OK || handled)
            return rc;
        rc = sql_json_func(s, scope, fc, name, out, &handled);
        if (rc != KEEL_OK || handled)
            return rc;
    }
    for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
        if (strcmp(funcs[i].name, name) != 0 || fc->n_args != funcs[i].nargs)
            continue;
        e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TEXT, fc->location,
                     funcs[i].nargs);
        if (e == NULL)
            return nomem(s);
        e->u.func = funcs[i].func;
        for (uint16_t a = 0; a < funcs[i].nargs; a++) {
            rc = sql_expr_analyse(s, scope, fc->args[a], &e->args[a]);
            if (rc != KEEL_OK)
                return rc;
        }
        switch (e->u.func) {
        case SQL_FUNC_REGCLASS:
        case SQL_FUNC_REGTYPE:
        case SQL_FUNC_REGNAMESPACE:
            /* to_regclass(text) and its kin: the name read, NULL if
             * nothing has it. */
            if (!sql_type_is_string(e->args[0]->type) &&
                e->args[0]->type != SQL_TYPE_UNKNOWN)
                return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                   "function %s(%s) does not exist", name,
                                   sql_type_name(e->args[0]->type));
            rc = reg_arg(s, e->u.func, true, &e->args[0]);
            if (rc == KEEL_OK && e->u.func != SQL_FUNC_REGTYPE)
                s->expr_engine_reads++;
            if (e->u.func == SQL_FUNC_REGCLASS)
                e->type = SQL_TYPE_REGCLASS;
            if (rc != KEEL_OK)
                return rc;
            break;
        case SQL_FUNC_TO_CHAR: {
            uint32_t t = e->args[0]->type;
            if (t == SQL_TYPE_UNKNOWN || t == SQL_TYPE_OID ||
                (!sql_type_is_datetime(t) && !sql_type_is_number(t)) ||
                (!sql_type_is_string(e->args[1]->type) &&
                 e->args[1]->type != SQL_TYPE_UNKNOWN))
                return t == SQL_TYPE_INTERVAL
                           ? sql_unsupported(s, fc->location,
                                             "to_char() of intervals")
                           : no_such_function(s, fc->location, name, e);
            rc = coerce(s, &e->args[1], SQL_TYPE_TEXT, false);
            if (rc != KEEL_OK)
                return rc;
            e->type = SQL_TYPE_TEXT;
            break;
        }
        case SQL_FUNC_EXTRACT:
        case SQL_FUNC_DATE_PART:
        case SQL_FUNC_DATE_TRUNC: {
            uint32_t t = e->args[1]->type;
            if (!sql_type_is_string(e->args[0]->type) ||
                (t != SQL_TYPE_UNKNOWN && !sql_type_is_datetime(t) &&
                 t != SQL_TYPE_INTERVAL))
                return no_such_function(s, fc->location, name, e);
            rc = coerce(s, &e->args[0], SQL_TYPE_TEXT, false);
            if (rc == KEEL_OK && t == SQL_TYPE_UNKNOWN)
                rc = coerce(s, &e->args[1], SQL_TYPE_TIMESTAMPTZ, false);
            if (rc != KEEL_OK)
                return rc;
            t = e->args[1]->type;
            e->type = e->u.func == SQL_FUNC_EXTRACT     ? SQL_TYPE_NUMERIC
                      : e->u.func == SQL_FUNC_DATE_PART ? SQL_TYPE_FLOAT8
                      : t == SQL_TYPE_DATE              ? SQL_TYPE_TIMESTAMPTZ
                                                        : t;
            if (e->u.func == SQL_FUNC_DATE_TRUNC && t == SQL_TYPE_INTERVAL)
                return sql_unsupported(s, fc->location,
                                       "date_trunc() of an interval");
            break;
        }
        case SQL_FUNC_SUBSTR:
        case SQL_FUNC_STRPOS:
        case SQL_FUNC_REPLACE:
        case SQL_FUNC_BTRIM:
        case SQL_FUNC_LTRIM:
        case SQL_FUNC_RTRIM:
        case SQL_FUNC_LEFT:
        case SQL_FUNC_RIGHT:
        case SQL_FUNC_REPEAT:
        case SQL_FUNC_REVERSE:
        case SQL_FUNC_LPAD:
        case SQL_FUNC_RPAD:
        case SQL_FUNC_STARTS_WITH: {
            /* Text first; then an integer (substr, left, right, repeat,
             * the pads' length), or text. */
            bool second_int = e->u.func == SQL_FUNC_SUBSTR ||
                              e->u.func == SQL_FUNC_LEFT ||
                              e->u.func == SQL_FUNC_RIGHT ||
                              e->u.func == SQL_FUNC_REPEAT ||
                              e->u.func == SQL_FUNC_LPAD ||
                              e->u.func == SQL_FUNC_RPAD;
            for (uint16_t k = 0; k < e->nargs; k++) {
                bool want_int = k == 1 ? second_int
                                       : k == 2 && e->u.func == SQL_FUNC_SUBSTR;
                uint32_t t = e->args[k]->type;
                bool fits = t == SQL_TYPE_UNKNOWN ||
                            (want_int ? sql_type_is_int(t) && t != SQL_TYPE_INT8
                                      : sql_type_is_string(t));
                if (!fits)
                    return no_such_function(s, fc->location, name, e);
                rc = coerce(s, &e->args[k], want_int ? SQL_TYPE_INT4
                                                     : SQL_TYPE_TEXT,
                            false);
                if (rc != KEEL_OK)
                    return rc;
            }
            e->type = e->u.func == SQL_FUNC_STRPOS        ? SQL_TYPE_INT4
                      : e->u.func == SQL_FUNC_STARTS_WITH ? SQL_TYPE_BOOL
                                                          : SQL_TYPE_TEXT;
            break;
        }
        case SQL_FUNC_RANDOM:
            e->type = SQL_TYPE_FLOAT8;
            break;
        case SQL_FUNC_NOW:
        case SQL_FUNC_CLOCK_TIMESTAMP:
            e->type = SQL_TYPE_TIMESTAMPTZ;
            break;
        case SQL_FUNC_ABS:
            if (e->args[0]->type == SQL_TYPE_UNKNOWN)
                rc = coerce(s, &e->args[0], SQL_TYPE_FLOAT8, false);
            else if (!sql_type_is_number(e->args[0]->type))
                rc = sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                 "function abs(%s) does not exist",
                                 sql_type_name(e->args[0]->type));
            if (rc != KEEL_OK)
                return rc;
            e->type = e->args[0]->type;
            break;
        case SQL_FUNC_ROUND:
        case SQL_FUNC_TRUNC:
        case SQL_FUNC_CEIL:
        case SQL_FUNC_FLOOR: {
            /* One argument: numeric's or double precision's (which an
             * integer or a literal becomes, as PostgreSQL prefers it);
             * round and trunc with a scale: numeric's. */
            uint32_t t = e->args[0]->type;
            if (!sql_type_is_number(t) && t != SQL_TYPE_UNKNOWN)
                return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                   "function %s(%s%s) does not exist", name,
                                   sql_type_name(t),
                                   e->nargs == 2 ? ", integer" : "");
            t = e->nargs == 2 || t == SQL_TYPE_NUMERIC ? SQL_TYPE_NUMERIC
                                                        : SQL_TYPE_FLOAT8;
            rc = coerce(s, &e->args[0], t, false);
            if (rc == KEEL_OK && e->nargs == 2) {
                uint32_t u = e->args[1]->type;
                if (u != SQL_TYPE_UNKNOWN && u != SQL_TYPE_INT2 &&
                    u != SQL_TYPE_INT4)
                    return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                       "function %s(%s, %s) does not exist",
                                       name, sql_type_name(t),
                                       sql_type_name(u));
                rc = coerce(s, &e->args[1], SQL_TYPE_INT4, false);
            }
            if (rc != KEEL_OK)
                return rc;
            e->type = t;
            break;
        }
        case SQL_FUNC_CURRENT_SCHEMAS:
            e->type = SQL_TYPE_NAME_ARRAY;
            rc = want_bool(s, &e->args[0], "current_schemas");
            if (rc != KEEL_OK)
                return rc;
            break;
        case SQL_FUNC_ARRAY_POSITION:
        case SQL_FUNC_ARRAY_TO_STRING: {
            /* Elements are compared as their text: the second argument
             * must be of the elements' kind (a string, or a number). */
            uint32_t el = sql_type_elem(e->args[0]->type);
            uint32_t t1 = e->args[1]->type;
            bool fits = e->u.func == SQL_FUNC_ARRAY_TO_STRING
                            ? sql_type_is_string(t1)
                        : el != 0 && sql_type_is_string(el)
                            ? sql_type_is_string(t1)
                            : sql_type_is_int(t1) || t1 == SQL_TYPE_UNKNOWN;
            if (el == 0 || !fits)
                return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                   "function %s(%s, %s) does not exist", name,
                                   sql_type_name(e->args[0]->type),
                                   sql_type_name(e->args[1]->type));
            rc = coerce(s, &e->args[1], SQL_TYPE_TEXT, true);
            /* array_to_string()'s text for NULL elements */
            if (rc == KEEL_OK && e->nargs > 2)
                rc = coerce(s, &e->args[2], SQL_TYPE_TEXT, true);
            if (rc != KEEL_OK)
                return rc;
            e->type = e->u.func == SQL_FUNC_ARRAY_POSITION ? SQL_TYPE_INT4
                                                           : SQL_TYPE_TEXT;
            break;
        }
        case SQL_FUNC_PG_GET_USERBYID:
        case SQL_FUNC_PG_TABLE_IS_VISIBLE:
        case SQL_FUNC_PG_TYPE_IS_VISIBLE:
        case SQL_FUNC_PG_ENCODING_TO_CHAR:
        case SQL_FUNC_FORMAT_TYPE: {
            uint32_t want = e->u.func == SQL_FUNC_PG_ENCODING_TO_CHAR
                                ? SQL_TYPE_INT4
                                : SQL_TYPE_OID;
            if (!sql_type_is_int(e->args[0]->type) &&
                e->args[0]->type != SQL_TYPE_UNKNOWN)
                return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                   "function %s(%s) does not exist", name,
                                   sql_type_name(e->args[0]->type));
            rc = coerce(s, &e->args[0], want, false);
            if (rc == KEEL_OK && e->u.func == SQL_FUNC_FORMAT_TYPE)
                rc = coerce(s, &e->args[1], SQL_TYPE_INT4, false);
            if (rc != KEEL_OK)
                return rc;
            e->type = e->u.func == SQL_FUNC_PG_TABLE_IS_VISIBLE ||
                              e->u.func == SQL_FUNC_PG_TYPE_IS_VISIBLE
                          ? SQL_TYPE_BOOL
                      : e->u.func == SQL_FUNC_FORMAT_TYPE ? SQL_TYPE_TEXT
                                                          : SQL_TYPE_NAME;
            if (e->u.func == SQL_FUNC_PG_TABLE_IS_VISIBLE)
                s->expr_engine_reads++;
            break;
        }
        case SQL_FUNC_CURRENT_DATABASE:
            e->type = SQL_TYPE_NAME;
            break;
        case SQL_FUNC_PG_GET_EXPR:
        case SQL_FUNC_PG_GET_INDEXDEF:
        case SQL_FUNC_PG_GET_CONSTRAINTDEF:
        case SQL_FUNC_PG_GET_STATISTICSOBJDEF_COLUMNS:
        case SQL_FUNC_PG_GET_TRIGGERDEF:
        case SQL_FUNC_PG_RELATION_IS_PUBLISHABLE: {
            /* (text | oid, oid | int4, bool) as each takes them. */
            static const uint32_t want[][3] = {
                [0] = {SQL_TYPE_TEXT, SQL_TYPE_OID, SQL_TYPE_BOOL},
                [1] = {SQL_TYPE_OID, SQL_TYPE_INT4, SQL_TYPE_BOOL},
                [2] = {SQL_TYPE_OID, SQL_TYPE_BOOL, 0},
            };
            int w = e->u.func == SQL_FUNC_PG_GET_EXPR ? 0
                    : e->u.func == SQL_FUNC_PG_GET_CONSTRAINTDEF ||
                            e->u.func == SQL_FUNC_PG_GET_TRIGGERDEF
                        ? 2
                        : 1;
            for (uint16_t a = 0; rc == KEEL_OK && a < e->nargs; a++) {
                uint32_t t = e->args[a]->type;
                bool fits = want[w][a] == SQL_TYPE_TEXT ? sql_type_is_string(t)
                            : want[w][a] == SQL_TYPE_BOOL
                                ? t == SQL_TYPE_BOOL || t == SQL_TYPE_UNKNOWN
                                : sql_type_is_int(t) || t == SQL_TYPE_UNKNOWN;
                if (!fits)
                    return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                       "function %s(%s) does not exist", name,
                                       sql_type_name(t));
                rc = coerce(s, &e->args[a], want[w][a], false);
            }
            if (rc != KEEL_OK)
                return rc;
            e->type = e->u.func == SQL_FUNC_PG_RELATION_IS_PUBLISHABLE
                          ? SQL_TYPE_BOOL
                          : SQL_TYPE_TEXT;
            if (e->u.func != SQL_FUNC_PG_GET_EXPR &&
                e->u.func != SQL_FUNC_PG_GET_STATISTICSOBJDEF_COLUMNS &&
                e->u.func != SQL_FUNC_PG_GET_TRIGGERDEF)
                s->expr_engine_reads++;
            break;
        }
        case SQL_FUNC_PG_RELATION_SIZE:
        case SQL_FUNC_PG_TABLE_SIZE:
        case SQL_FUNC_PG_INDEXES_SIZE:
        case SQL_FUNC_PG_TOTAL_RELATION_SIZE:
        case SQL_FUNC_PG_DATABASE_SIZE:
        case SQL_FUNC_PG_SIZE_PRETTY:
        case SQL_FUNC_OBJ_DESCRIPTION:
        case SQL_FUNC_COL_DESCRIPTION:
        case SQL_FUNC_SHOBJ_DESCRIPTION:
        case SQL_FUNC_HAS_DATABASE_PRIVILEGE:
            rc = sql_size_analyse(s, e, name, fc->location);
            if (rc != KEEL_OK)
                return rc;
            break;
        case SQL_FUNC_SPLIT_PART:
            if (!sql_type_is_string(e->args[0]->type) ||
                !sql_type_is_string(e->args[1]->type) ||
                !(sql_type_is_int(e->args[2]->type) ||
                  e->args[2]->type == SQL_TYPE_UNKNOWN))
                return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                   "function %s(%s, %s, %s) does not exist",
                                   name, sql_type_name(e->args[0]->type),
                                   sql_type_name(e->args[1]->type),
                                   sql_type_name(e->args[2]->type));
            rc = coerce(s, &e->args[0], SQL_TYPE_TEXT, false);
            if (rc == KEEL_OK)
                rc = coerce(s, &e->args[1], SQL_TYPE_TEXT, false);
            if (rc == KEEL_OK)
                rc = coerce(s, &e->args[2], SQL_TYPE_INT4, false);
            if (rc != KEEL_OK)
                return rc;
            e->type = SQL_TYPE_TEXT;
            break;
        case SQL_FUNC_ARRAY_UPPER:
            if (sql_type_elem(e->args[0]->type) == 0 ||
                !(sql_type_is_int(e->args[1]->type) ||
                  e->args[1]->type == SQL_TYPE_UNKNOWN))
                return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                   "function %s(%s, %s) does not exist", name,
                                   sql_type_name(e->args[0]->type),
                                   sql_type_name(e->args[1]->type));
            rc = coerce(s, &e->args[1], SQL_TYPE_INT4, false);
            if (rc != KEEL_OK)
                return rc;
            e->type = SQL_TYPE_INT4;
            break;
        case SQL_FUNC_LENGTH:
            e->type = SQL_TYPE_INT4;
            if (e->args[0]->type == SQL_TYPE_BYTEA)
                break; /* its bytes */
            /* fall through */
        case SQL_FUNC_QUOTE_IDENT:
        case SQL_FUNC_UPPER:
        case SQL_FUNC_LOWER:
        case SQL_FUNC_CURRENT_SETTING:
            if (!sql_type_is_string(e->args[0]->type))
                return sql_fail_at(s, fc->location, KEEL_ETYPE, "42883",
                                   "function %s(%s) does not exist", name,
                                   sql_type_name(e->args[0]->type));
            rc = coerce(s, &e->args[0], SQL_TYPE_TEXT, false);
            if (rc != KEEL_OK)
                return rc;
            break;
        default:
            break;
        }
        *out = e;
        return KEEL_OK;
    }
    return agg_no_such(s, scope, fc, name);
}

/* The common type of CASE's results or COALESCE's arguments. */
/* The common type of list's n expressions, each coerced to it.  ctx
 * names the construct for PostgreSQL's message when two cannot be
 * matched ("CASE types integer and boolean ..."), placed at the one that
 * does not fit; NULL: a plain message at location. */
static keel_status unify_list(sql_session *s, sql_expr **list, uint16_t n,
                              int32_t location, const char *ctx, uint32_t *out)
{
    uint32_t t = SQL_TYPE_UNKNOWN;
    keel_status rc;

    for (uint16_t i = 0; i < n; i++) {
        uint32_t u = list[i]->type;
        if (u == SQL_TYPE_UNKNOWN || u == t)
            continue;
        if (t == SQL_TYPE_UNKNOWN)
            t = u;
        else if (sql_type_is_int(t) && sql_type_is_int(u))
            t = int_rank(t) >= int_rank(u) ? t : u;
        else if (sql_type_is_number(t) && sql_type_is_number(u))
            t = t == SQL_TYPE_FLOAT8 || u == SQL_TYPE_FLOAT8 ? SQL_TYPE_FLOAT8
                                                             : SQL_TYPE_NUMERIC;
        else if (sql_type_is_string(t) && sql_type_is_string(u))
            t = SQL_TYPE_TEXT;
        else if (ctx != NULL)
            return sql_fail_at(s, list[i]->location, KEEL_ETYPE, "42804",
                               "%s types %s and %s cannot be matched", ctx,
                               sql_type_name(t), sql_type_name(u));
        else
            return sql_fail_at(s, location, KEEL_ETYPE, "42804",
                               "types %s and %s cannot be matched",
                               sql_type_name(t), sql_type_name(u));
    }
    if (t == SQL_TYPE_UNKNOWN)
        t = SQL_TYPE_TEXT;
    for (uint16_t i = 0; i < n; i++) {
        if (sql_type_is_string(t) && sql_type_is_string(list[i]->type) &&
            list[i]->type != SQL_TYPE_UNKNOWN)
            continue;
        rc = coerce(s, &list[i], t, false);
        if (rc != KEEL_OK)
            return rc;
    }
    *out = t;
    return KEEL_OK;
}

static keel_status analyse_case(sql_session *s, const sql_scope *scope,
                                const PgQuery__CaseExpr *c, sql_expr **out)
{
    /* args: [arg], then when/then pairs, then [else]. */
    uint16_t base = c->arg != NULL ? 1 : 0;
    uint16_t n = (uint16_t)(base + 2 * c->n_args + (c->defresult != NULL));
    sql_expr *e = sql_expr_new(s, SQL_EXPR_CASE, SQL_TYPE_TEXT, c->location, n);
    sql_expr **results;
    uint16_t nres = 0, n0 = sql_srf_count(s);
    uint32_t t;
    keel_status rc = KEEL_OK;

    if (e == NULL)
        return nomem(s);
    e->u.has_arg = c->arg != NULL;
    e->has_else = c->defresult != NULL;
    results = sql_alloc(&s->arena, (c->n_args + 1) * sizeof(sql_expr *));
    if (results == NULL)
        return nomem(s);
    if (c->arg != NULL)
        rc = sql_expr_analyse(s, scope, c->arg, &e->args[0]);
    for (size_t i = 0; rc == KEEL_OK && i < c->n_args; i++) {
        const PgQuery__CaseWhen *w;
        sql_expr **cond = &e->args[base + 2 * i];
        if (c->args[i]->node_case != PG_QUERY__NODE__NODE_CASE_WHEN)
            return sql_unsupported(s, c->location, "this CASE");
        w = c->args[i]->case_when;
        rc = sql_expr_analyse(s, scope, w->expr, cond);
        if (rc == KEEL_OK && c->arg != NULL) {
            sql_expr *l = e->args[0];
            uint32_t u;
            rc = unify(s, &l, cond, "=", w->location, &u);
            e->args[0] = l;
        } else if (rc == KEEL_OK) {
            rc = want_bool(s, cond, "CASE/WHEN");
        }
        if (rc == KEEL_OK)
            rc = sql_expr_analyse(s, scope, w->result,
                                  &e->args[base + 2 * i + 1]);
    }
    if (rc == KEEL_OK && c->defresult != NULL)
        rc = sql_expr_analyse(s, scope, c->defresult, &e->args[n - 1]);
    if (rc == KEEL_OK)
        rc = sql_srf_none_since(s, n0, "CASE");
    if (rc != KEEL_OK)
        return rc;
    /* ELSE first, as PostgreSQL weighs them (and names a mismatch). */
    if (c->defresult != NULL)
        results[nres++] = e->args[n - 1];
    for (size_t i = 0; i < c->n_args; i++)
        results[nres++] = e->args[base + 2 * i + 1];
    rc = unify_list(s, results, nres, c->location, "CASE", &t);
    if (rc != KEEL_OK)
        return rc;
    nres = 0;
    if (c->defresult != NULL)
        e->args[n - 1] = results[nres++];
    for (size_t i = 0; i < c->n_args; i++)
        e->args[base + 2 * i + 1] = results[nres++];
    e->type = t;
    *out = e;
    return KEEL_OK;
}

/*
 * oid::regclass, ::regtype, ::regnamespace: the object's name as text (a
 * relation's qualified when not visible), the number when there is
 * none.  From an oid or integer, and for regclass from a string literal,
 * a relation's name read as regclassin reads it (sql_regclass_in()):
 * resolved once, here.  x::regclass::oid (or an integer type) is x's oid.
 */
/*
 * The oid expression a regclass (kind) takes from *arg: a string literal
 * read now, other text read when it runs (SQL_FUNC_REG_IN; missing_ok:
 * NULL for a name nothing has), an oid or integer as it is.
 */
static keel_status reg_arg(sql_session *s, sql_func kind, bool missing_ok,
                           sql_expr **arg)
{
    sql_expr *a = *arg, *in, *k;

    if (a->kind == SQL_EXPR_CONST && !a->u.value.isnull &&
        (a->type == SQL_TYPE_UNKNOWN ||
         (missing_ok && sql_type_is_string(a->type)))) {
        uint32_t oid = 0;
        bool missing = false;
        keel_status rc = sql_reg_in(s, kind, a->u.value.v.s.p,
                                    a->u.value.v.s.len, a->location,
                                    missing_ok, &oid, &missing);
        if (rc != KEEL_OK)
            return rc;
        a->u.value.type = SQL_TYPE_OID;
        a->u.value.v.i = oid;
        a->u.value.isnull = missing;
        a->type = SQL_TYPE_OID;
        return KEEL_OK;
    }
    if (!sql_type_is_string(a->type) && a->type != SQL_TYPE_UNKNOWN)
        return KEEL_OK;
    in = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_OID, a->location, 2);
    k = sql_expr_new(s, SQL_EXPR_CONST, SQL_TYPE_INT4, a->location, 0);
    if (in == NULL || k == NULL)
        return nomem(s);
    in->u.func = SQL_FUNC_REG_IN;
    k->u.value.type = SQL_TYPE_INT4;
    k->u.value.v.i = (int64_t)kind | (missing_ok ? 1 << 16 : 0);
    in->args[0] = a;
    in->args[1] = k;
    if (kind != SQL_FUNC_REGTYPE)
        s->expr_engine_reads++;
    *arg = in;
    return coerce(s, &in->args[0], SQL_TYPE_TEXT, true);
}

static keel_status analyse_regcast(sql_session *s, const sql_scope *scope,
                                   const PgQuery__TypeCast *tc,
                                   const char *tname, sql_expr **out)
{
    sql_expr *e;
    keel_status rc;

    e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TEXT, tc->location, 1);
    if (e == NULL)
        return nomem(s);
    e->u.func = tname[3] == 'c'   ? SQL_FUNC_REGCLASS
                : tname[3] == 't' ? SQL_FUNC_REGTYPE
                                  : SQL_FUNC_REGNAMESPACE;
    if (e->u.func == SQL_FUNC_REGCLASS)
        e->type = SQL_TYPE_REGCLASS;
    rc = sql_expr_analyse(s, scope, tc->arg, &e->args[0]);
    if (rc == KEEL_OK)
        rc = reg_arg(s, e->u.func, false, &e->args[0]);
    if (rc != KEEL_OK)
        return rc;
    if (!sql_type_is_int(e->args[0]->type)) {
        char what[96];
        snprintf(what, sizeof(what), "casts from %s to %s",
                 sql_type_name(e->args[0]->type), tname);
        return sql_unsupported(s, tc->location, what);
    }
    rc = coerce(s, &e->args[0], SQL_TYPE_OID, true);
    if (rc != KEEL_OK)
        return rc;
    if (e->u.func != SQL_FUNC_REGTYPE)
        s->expr_engine_reads++;
    *out = e;
    return KEEL_OK;
}

/* array[i]: one element (NULL past the ends); slices are not done. */
static keel_status analyse_subscript(sql_session *s, const sql_scope *scope,
                                     const PgQuery__AIndirection *ai,
                                     sql_expr **out)
{
    sql_expr *e, *arr, *idx;
    const PgQuery__AIndices *ix;
    keel_status rc;

    if (ai->n_indirection != 1 ||
        ai->indirection[0]->node_case != PG_QUERY__NODE__NODE_A_INDICES)
        return sql_unsupported(s, -1, "this kind of indirection");
    ix = ai->indirection[0]->a_indices;
    if (ix->is_slice || ix->uidx == NULL)
        return sql_unsupported(s, -1, "array slices");
    rc = sql_expr_analyse(s, scope, ai->arg, &arr);
    if (rc == KEEL_OK)
        rc = sql_expr_analyse(s, scope, ix->uidx, &idx);
    if (rc != KEEL_OK)
        return rc;
    if (sql_type_elem(arr->type) == 0)
        return sql_fail_at(s, arr->location, KEEL_ETYPE, "42804",
                           "cannot subscript type %s because it does not "
                           "support subscripting",
                           sql_type_name(arr->type));
    if (!sql_type_is_int(idx->type) && idx->type != SQL_TYPE_UNKNOWN)
        return sql_fail_at(s, idx->location, KEEL_ETYPE, "42804",
                           "array subscript must have type integer");
    rc = coerce(s, &idx, SQL_TYPE_INT8, false);
    if (rc != KEEL_OK)
        return rc;
    e = sql_expr_new(s, SQL_EXPR_FUNC, sql_type_elem(arr->type),
                     arr->location, 2);
    if (e == NULL)
        return nomem(s);
    e->u.func = SQL_FUNC_ARRAY_ELEMENT;
    e->args[0] = arr;
    e->args[1] = idx;
    *out = e;
    return KEEL_OK;
}

static keel_status analyse_node(sql_session *s, const sql_scope *scope,
                                const PgQuery__Node *node, sql_expr **out);
static keel_status fold(sql_session *s, sql_expr **ep);

/*
 * In a grouping query whose GROUP BY has expressions: node, analysed over
 * the input row, when it is one of them (its key's slot in the group's
 * row, *matched).  Nothing of the attempt stays: its errors, the
 * aggregates and window functions it met.
 */
static keel_status group_expr_key(sql_session *s, const sql_grouping *g,
                                  const PgQuery__Node *node, sql_expr **out,
                                  bool *matched)
{
    sql_error saved, *err = s->err;
    struct sql_windowing *w = s->windowing;
    struct sql_srf_list *srfs = s->srfs;
    bool saw = s->saw_aggregate;
    sql_expr *e = NULL;
    keel_status rc;

    *matched = false;
    if (err != NULL)
        saved = *err;
    s->windowing = NULL;
    s->srfs = NULL; /* a key holds none */
    rc = analyse_node(s, g->input, node, &e);
    if (rc == KEEL_OK)
        rc = fold(s, &e);
    s->windowing = w;
    s->srfs = srfs;
    s->saw_aggregate = saw;
    if (err != NULL)
        *err = saved;
    if (rc != KEEL_OK)
        return KEEL_OK;
    for (uint16_t k = 0; k < g->nkeys; k++) {
        if (g->key_exprs[k]->kind == SQL_EXPR_COLUMN ||
            !sql_expr_same(e, g->key_exprs[k]))
            continue;
        *out = sql_expr_new(s, SQL_EXPR_COLUMN, e->type, e->location, 0);
        if (*out == NULL)
            return nomem(s);
        (*out)->u.column = k;
        *matched = true;
        break;
    }
    return KEEL_OK;
}

keel_status sql_expr_analyse(sql_session *s, const sql_scope *scope,
                             const PgQuery__Node *node, sql_expr **out)
{
    const sql_grouping *g = scope != NULL ? scope->grouping : NULL;

    if (g != NULL && g->nexprkeys > 0 && node != NULL &&
        node->node_case != PG_QUERY__NODE__NODE_COLUMN_REF &&
        node->node_case != PG_QUERY__NODE__NODE_A_CONST) {
        bool matched;
        keel_status rc = group_expr_key(s, g, node, out, &matched);
        if (rc != KEEL_OK || matched)
            return rc;
    }
    return analyse_node(s, scope, node, out);
}

static keel_status analyse_node(sql_session *s, const sql_scope *scope,
                                const PgQuery__Node *node, sql_expr **out)
{
    sql_expr *e;
    keel_status rc;

    if (node == NULL)
        return sql_unsupported(s, -1, "an empty expression");
    switch (node->node_case) {
    case PG_QUERY__NODE__NODE_A_CONST:
        return analyse_const(s, node->a_const, out);
    case PG_QUERY__NODE__NODE_COLUMN_REF:
        return analyse_column(s, scope, node->column_ref, out);
    case PG_QUERY__NODE__NODE_A_EXPR:
        if (node->a_expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF)
            return analyse_nullif(s, scope, node->a_expr, out);
        return analyse_aexpr(s, scope, node->a_expr, out);
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR:
        return analyse_array(s, scope, node->a_array_expr, out);
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: {
        const PgQuery__MinMaxExpr *m = node->min_max_expr;
        e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TEXT, m->location,
                     (uint16_t)m->n_args);
        if (e == NULL)
            return nomem(s);
        e->u.func = m->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST
                        ? SQL_FUNC_GREATEST
                        : SQL_FUNC_LEAST;
        for (uint16_t i = 0; i < m->n_args; i++) {
            rc = sql_expr_analyse(s, scope, m->args[i], &e->args[i]);
            if (rc != KEEL_OK)
                return rc;
        }
        rc = unify_list(s, e->args, e->nargs, m->location,
                        m->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? "GREATEST"
                                                                  : "LEAST",
                        &e->type);
        if (rc != KEEL_OK)
            return rc;
        *out = e;
        return KEEL_OK;
    }
    case PG_QUERY__NODE__NODE_TYPE_CAST: {
        const PgQuery__TypeCast *tc = node->type_cast;
        uint32_t type;
        int32_t typmod;
        const char *tname =
            tc->type_name != NULL && tc->type_name->n_names > 0 &&
                    tc->type_name->n_array_bounds == 0
                ? sql_node_string(tc->type_name->names[tc->type_name->n_names - 1])
                : NULL;
        if (tname != NULL && (strcmp(tname, "regclass") == 0 ||
                              strcmp(tname, "regtype") == 0 ||
                              strcmp(tname, "regnamespace") == 0))
            return analyse_regcast(s, scope, tc, tname, out);
        if (tc->arg != NULL &&
            tc->arg->node_case == PG_QUERY__NODE__NODE_A_ARRAY_EXPR &&
            tc->arg->a_array_expr->n_elements == 0) {
            /* ARRAY[]::type[]: the cast gives the empty array its type */
            e = sql_expr_new(s, SQL_EXPR_CONST, SQL_TYPE_UNKNOWN,
                         tc->arg->a_array_expr->location, 0);
            if (e == NULL)
                return nomem(s);
            e->u.value.type = SQL_TYPE_UNKNOWN;
            e->u.value.v.s.p = "{}";
            e->u.value.v.s.len = 2;
            rc = KEEL_OK;
        } else {
            rc = sql_expr_analyse(s, scope, tc->arg, &e);
        }
        if (rc == KEEL_OK)
            rc = sql_type_lookup(s, tc->type_name, &type, &typmod);
        if (rc != KEEL_OK)
            return rc;
        /* x::regclass::oid: the oid x was, not the name it reads as. */
        if (is_regcast(e) && (type == SQL_TYPE_OID || sql_type_is_int(type)))
            e = e->args[0];
        if (e->kind == SQL_EXPR_CONST) {
            sql_value v = e->u.value;
            /* Only reading a literal's text points into the query, as
             * PostgreSQL's input functions do; a number out of range for
             * the type is a conversion's error, without a position. */
            rc = sql_value_cast(s, &v, type, typmod, true,
                                v.type == SQL_TYPE_UNKNOWN ? e->location : -1);
            if (rc != KEEL_OK)
                return rc;
            e->u.value = v;
            e->type = type;
            *out = e;
            return KEEL_OK;
        }
        *out = sql_expr_new(s, SQL_EXPR_CAST, type, tc->location, 1);
        if (*out == NULL)
            return nomem(s);
        (*out)->args[0] = e;
        /* the length a string cast keeps, numeric(p,s)'s typmod */
        (*out)->u.value.v.i = typmod;
        if (sql_expr_reads_engine(*out) && !sql_expr_reads_engine(e))
            s->expr_engine_reads++; /* a regclass's name read */
        return KEEL_OK;
    }
    case PG_QUERY__NODE__NODE_BOOL_EXPR: {
        const PgQuery__BoolExpr *b = node->bool_expr;
        sql_expr_kind k = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? SQL_EXPR_AND
                          : b->boolop == PG_QUERY__BOOL_EXPR_TYPE__OR_EXPR ? SQL_EXPR_OR
                                                                           : SQL_EXPR_NOT;
        e = sql_expr_new(s, k, SQL_TYPE_BOOL, b->location, (uint16_t)b->n_args);
        if (e == NULL)
            return nomem(s);
        for (size_t i = 0; i < b->n_args; i++) {
            const char *what = k == SQL_EXPR_AND  ? "AND"
                               : k == SQL_EXPR_OR ? "OR"
                                                  : "NOT";
            uint16_t n0 = sql_srf_count(s);
            rc = sql_expr_analyse(s, scope, b->args[i], &e->args[i]);
            if (rc == KEEL_OK)
                rc = want_bool(s, &e->args[i], what);
            if (rc == KEEL_OK && sql_srf_count(s) > n0)
                rc = sql_fail_at(s, s->srfs->v[n0]->expr->location,
                                 KEEL_ETYPE, "42804",
                                 "argument of %s must not return a set", what);
            if (rc != KEEL_OK)
                return rc;
        }
        *out = e;
        return KEEL_OK;
    }
    case PG_QUERY__NODE__NODE_NULL_TEST: {
        const PgQuery__NullTest *t = node->null_test;
        e = sql_expr_new(s,
                     t->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NULL
                         ? SQL_EXPR_ISNULL
                         : SQL_EXPR_ISNOTNULL,
                     SQL_TYPE_BOOL, t->location, 1);
        if (e == NULL)
            return nomem(s);
        rc = sql_expr_analyse(s, scope, t->arg, &e->args[0]);
        if (rc != KEEL_OK)
            return rc;
        *out = e;
        return KEEL_OK;
    }
    case PG_QUERY__NODE__NODE_FUNC_CALL:
        return analyse_func(s, scope, node->func_call, out);
    case PG_QUERY__NODE__NODE_CASE_EXPR:
        return analyse_case(s, scope, node->case_expr, out);
    case PG_QUERY__NODE__NODE_COALESCE_EXPR: {
        const PgQuery__CoalesceExpr *c = node->coalesce_expr;
        uint32_t t;
        e = sql_expr_new(s, SQL_EXPR_COALESCE, SQL_TYPE_TEXT, c->location,
                     (uint16_t)c->n_args);
        if (e == NULL)
            return nomem(s);
        uint16_t n0 = sql_srf_count(s);
        for (size_t i = 0; i < c->n_args; i++) {
            rc = sql_expr_analyse(s, scope, c->args[i], &e->args[i]);
            if (rc != KEEL_OK)
                return rc;
        }
        rc = sql_srf_none_since(s, n0, "COALESCE");
        if (rc == KEEL_OK)
            rc = unify_list(s, e->args, e->nargs, c->location, "COALESCE",
                            &t);
        if (rc != KEEL_OK)
            return rc;
        e->type = t;
        *out = e;
        return KEEL_OK;
    }
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION: {
        const PgQuery__SQLValueFunction *f = node->sqlvalue_function;
        const char *v;
        switch (f->op) {
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_ROLE:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_USER:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_USER:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_SESSION_USER:
            v = sql_setting_get(s, "user");
            break;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_CATALOG:
            v = sql_setting_get(s, "database");
            break;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_SCHEMA:
            v = "public";
            break;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIMESTAMP:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_DATE:
            e = sql_expr_new(s, SQL_EXPR_FUNC, SQL_TYPE_TIMESTAMPTZ,
                             f->location, 0);
            if (e == NULL)
                return nomem(s);
            e->u.func = SQL_FUNC_NOW;
            *out = e;
            if (f->op == PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP)
                return KEEL_OK;
            return coerce(s, out,
                          f->op == PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_DATE
                              ? SQL_TYPE_DATE
                              : SQL_TYPE_TIMESTAMP,
                          true);
        default:
            return sql_unsupported(s, f->location,
                                   "CURRENT_TIME and LOCALTIME with a precision");
        }
        e = sql_expr_new(s, SQL_EXPR_CONST, SQL_TYPE_NAME, f->location, 0);
        if (e == NULL)
            return nomem(s);
        e->u.value.type = SQL_TYPE_NAME;
        e->u.value.v.s.p = sql_strndup(&s->arena, v, strlen(v));
        e->u.value.v.s.len = (uint32_t)strlen(v);
        if (e->u.value.v.s.p == NULL)
            return nomem(s);
        *out = e;
        return KEEL_OK;
    }
    case PG_QUERY__NODE__NODE_PARAM_REF: {
        int32_t n = node->param_ref->number;
        uint32_t t;
        /* While a statement is prepared, a $n past those the client
         * typed adds parameters up to it, to be inferred. */
        if (n > s->nparams && s->inferring && n <= 65535) {
            rc = sql_params_grow(s, (uint16_t)n);
            if (rc != KEEL_OK)
                return rc;
        }
        if (n < 1 || n > s->nparams)
            return sql_fail_at(s, node->param_ref->location, KEEL_EINVAL,
                               "42P02", "there is no parameter $%d", n);
        t = s->param_types[n - 1];
        e = sql_expr_new(s, SQL_EXPR_PARAM, t == 0 ? SQL_TYPE_UNKNOWN : t,
                     node->param_ref->location, 0);
        if (e == NULL)
            return nomem(s);
        e->u.column = (uint16_t)(n - 1);
        *out = e;
        return KEEL_OK;
    }
    case PG_QUERY__NODE__NODE_SUB_LINK:
        return analyse_sublink(s, scope, node->sub_link, out);
    case PG_QUERY__NODE__NODE_A_INDIRECTION:
        return analyse_subscript(s, scope, node->a_indirection, out);
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE: {
        /* COLLATE "default" (or "C"): keel compares strings bytewise, as
         * the C collation does, so both leave the expression as it is. */
        const PgQuery__CollateClause *c = node->collate_clause;
        const char *cn = c->n_collname > 0
                             ? sql_node_string(c->collname[c->n_collname - 1])
                             : NULL;
        if (cn == NULL || (strcmp(cn, "default") != 0 && strcmp(cn, "C") != 0 &&
                           strcmp(cn, "POSIX") != 0))
            return sql_unsupported(s, c->location, "collations but default and C");
        return sql_expr_analyse(s, scope, c->arg, out);
    }
    default:
        return sql_unsupported(s, -1, "this kind of expression");
    }
}

/* ---- evaluation --------------------------------------------------------- */

/* Errors found while evaluating carry no position, as PostgreSQL's
 * executor's do not: only analysis points into the query. */
static keel_status overflow(sql_session *s, const sql_expr *e)
{
    return sql_fail(s, KEEL_EINVAL, "22003", "%s out of range",
                    sql_type_name(e->type));
}

static keel_status int_fits(sql_session *s, const sql_expr *e, int64_t v)
{
    if ((e->type == SQL_TYPE_INT2 && (v < INT16_MIN || v > INT16_MAX)) ||
        (e->type == SQL_TYPE_INT4 && (v < INT32_MIN || v > INT32_MAX)))
        return overflow(s, e);
    return KEEL_OK;
}

/* A numeric operator (unary minus: b NULL) on non-null values. */
static keel_status eval_numeric(sql_session *s, sql_op op, const sql_value *a,
                                const sql_value *b, sql_value *out)
{
    numeric x = NUMERIC_INIT, y = NUMERIC_INIT, r = NUMERIC_INIT;
    numeric_status st;
    keel_status rc = sql_numeric_get(s, a, &x);

    if (rc == KEEL_OK && b != NULL)
        rc = sql_numeric_get(s, b, &y);
    if (rc != KEEL_OK) {
        numeric_free(&x);
        return rc;
    }
    switch (op) {
    case SQL_OP_ADD:
        st = numeric_add(&x, &y, &r);
        break;
    case SQL_OP_SUB:
        st = numeric_sub(&x, &y, &r);
        break;
    case SQL_OP_MUL:
        st = numeric_mul(&x, &y, &r);
        break;
    case SQL_OP_DIV:
        st = numeric_div(&x, &y, &r);
        break;
    case SQL_OP_MOD:
        st = numeric_mod(&x, &y, &r);
        break;
    default:
        st = numeric_neg(&x, &r);
        break;
    }
    numeric_free(&x);
    numeric_free(&y);
    if (st != NUMERIC_OK)
        return sql_numeric_fail(s, st, -1, NULL, 0, -1);
    return sql_numeric_put(s, &r, out);
}

static keel_status eval_arith(sql_session *s, const sql_expr *e,
                              const sql_value *a, const sql_value *b,
                              sql_value *out)
{
    out->type = e->type;
    out->isnull = false;
    if (sql_type_is_datetime(a->type) || sql_type_is_datetime(b->type) ||
        a->type == SQL_TYPE_INTERVAL || b->type == SQL_TYPE_INTERVAL)
        return sql_interval_arith(s, e->u.op, a, b, e->type, out);
    if (e->type == SQL_TYPE_NUMERIC)
        return eval_numeric(s, e->u.op, a, b, out);
    if (e->type == SQL_TYPE_FLOAT8) {
        double x = a->v.f, y = b->v.f, r;
        switch (e->u.op) {
        case SQL_OP_ADD:
            r = x + y;
            break;
        case SQL_OP_SUB:
            r = x - y;
            break;
        case SQL_OP_MUL:
            r = x * y;
            break;
        default:
            if (y == 0)
                return sql_fail(s, KEEL_EINVAL, "22012", "division by zero");
            r = x / y;
            break;
        }
        if (isinf(r) && !isinf(x) && !isinf(y))
            return sql_fail(s, KEEL_EINVAL, "22003",
                            "value out of range: overflow");
        out->v.f = r;
        return KEEL_OK;
    }
    {
        int64_t x = a->v.i, y = b->v.i, r;
        switch (e->u.op) {
        case SQL_OP_ADD:
            if (__builtin_add_overflow(x, y, &r))
                return overflow(s, e);
            break;
        case SQL_OP_SUB:
            if (__builtin_sub_overflow(x, y, &r))
                return overflow(s, e);
            break;
        case SQL_OP_MUL:
            if (__builtin_mul_overflow(x, y, &r))
                return overflow(s, e);
            break;
        case SQL_OP_DIV:
            if (y == 0)
                return sql_fail(s, KEEL_EINVAL, "22012", "division by zero");
            if (y == -1) {
                if (__builtin_sub_overflow((int64_t)0, x, &r))
                    return overflow(s, e);
            } else {
                r = x / y;
            }
            break;
        default:
            if (y == 0)
                return sql_fail(s, KEEL_EINVAL, "22012", "division by zero");
            r = y == -1 ? 0 : x % y;
            break;
        }
        out->v.i = r;
        return int_fits(s, e, r);
    }
}

/* LIKE: % any run, _ any one character, \ escapes (UTF-8 aware). */
/* c, an ASCII capital made small when fold (ILIKE's case, as lower()'s) */
static inline char like_fold(char c, bool fold)
{
    return fold && c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

static bool like_match(const char *t, uint32_t tl, const char *p, uint32_t pl,
                       bool fold)
{
    uint32_t ti = 0, pi = 0, star_p = UINT32_MAX, star_t = 0;

    while (ti < tl) {
        if (pi < pl && p[pi] == '\\' && pi + 1 < pl) {
            if (like_fold(p[pi + 1], fold) == like_fold(t[ti], fold)) {
                pi += 2;
                ti++;
                continue;
            }
        } else if (pi < pl && p[pi] == '_') {
            /* one character: its UTF-8 bytes */
            pi++;
            ti++;
            while (ti < tl && ((unsigned char)t[ti] & 0xC0) == 0x80)
                ti++;
            continue;
        } else if (pi < pl && p[pi] == '%') {
            star_p = ++pi;
            star_t = ti;
            continue;
        } else if (pi < pl &&
                   like_fold(p[pi], fold) == like_fold(t[ti], fold)) {
            pi++;
            ti++;
            continue;
        }
        if (star_p == UINT32_MAX)
            return false;
        pi = star_p;
        ti = ++star_t;
    }
    while (pi < pl && p[pi] == '%')
        pi++;
    return pi == pl;
}

/* round, trunc, ceil, floor of a (non-null), with the scale args[1]
 * for round and trunc of numeric. */
static keel_status eval_rounding(sql_session *s, const sql_expr *e,
                                 const sql_value *row, const sql_value *a,
                                 sql_value *out)
{
    numeric x = NUMERIC_INIT, r = NUMERIC_INIT;
    numeric_status st;
    int64_t scale = 0;
    keel_status rc;

    if (e->type == SQL_TYPE_FLOAT8) {
        /* rint: half to even, as PostgreSQL's dround. */
        out->v.f = e->u.func == SQL_FUNC_ROUND   ? rint(a->v.f)
                   : e->u.func == SQL_FUNC_TRUNC ? trunc(a->v.f)
                   : e->u.func == SQL_FUNC_CEIL  ? ceil(a->v.f)
                                                 : floor(a->v.f);
        return KEEL_OK;
    }
    if (e->nargs == 2) {
        sql_value b;
        rc = sql_expr_eval(s, e->args[1], row, &b);
        if (rc != KEEL_OK)
            return rc;
        if (b.isnull) {
            out->isnull = true;
            return KEEL_OK;
        }
        scale = b.v.i;
    }
    rc = sql_numeric_get(s, a, &x);
    if (rc != KEEL_OK)
        return rc;
    switch (e->u.func) {
    case SQL_FUNC_ROUND:
        st = numeric_round(&x, (int)scale, &r);
        break;
    case SQL_FUNC_TRUNC:
        st = numeric_trunc(&x, (int)scale, &r);
        break;
    case SQL_FUNC_CEIL:
        st = numeric_ceil(&x, &r);
        break;
    default:
        st = numeric_floor(&x, &r);
        break;
    }
    numeric_free(&x);
    if (st != NUMERIC_OK)
        return sql_numeric_fail(s, st, -1, NULL, 0, -1);
    return sql_numeric_put(s, &r, out);
}

/*
 * The next element of an array's text form ({a,"b c",NULL}) from *pos:
 * its text in *out (unquoted, in the arena when it had quotes), *isnull
 * for an unquoted NULL.  False at the end.
 */
static bool array_next(sql_session *s, const char *p, uint32_t len,
                       uint32_t *pos, const char **out, uint32_t *olen,
                       bool *isnull)
{
    uint32_t i = *pos;

    if (i == 0) {
        if (len < 2 || p[0] != '{')
            return false;
        i = 1;
    }
    /* white space around an element is not part of it */
    while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
                       p[i] == '\r'))
        i++;
    if (i >= len || p[i] == '}')
        return false;
    *isnull = false;
    if (p[i] == '"') {
        char *buf = sql_alloc(&s->arena, len);
        uint32_t n = 0;
        if (buf == NULL)
            return false;
        for (i++; i < len && p[i] != '"'; i++) {
            if (p[i] == '\\' && i + 1 < len)
                i++;
            buf[n++] = p[i];
        }
        i++;
        *out = buf;
        *olen = n;
        while (i < len && p[i] != ',' && p[i] != '}')
            i++;
    } else {
        uint32_t start = i;
        while (i < len && p[i] != ',' && p[i] != '}')
            i++;
        *out = p + start;
        *olen = i - start;
        while (*olen > 0 && (p[start + *olen - 1] == ' ' ||
                             p[start + *olen - 1] == '\t' ||
                             p[start + *olen - 1] == '\n' ||
                             p[start + *olen - 1] == '\r'))
            (*olen)--;
        *isnull = *olen == 4 && strncasecmp(*out, "NULL", 4) == 0;
    }
    if (i < len && p[i] == ',')
        i++;
    *pos = i;
    return true;
}

bool sql_array_next(sql_session *s, const char *p, uint32_t len,
                    uint32_t *pos, const char **out, uint32_t *olen,
                    bool *isnull)
{
    return array_next(s, p, len, pos, out, olen, isnull);
}

/*
 * array || array (array_cat()): the elements of both, one array; an
 * operand that is NULL gives the other (NULL when both are).  Arrays are
 * held as their text form, so the texts are joined between the braces.
 */
static keel_status eval_array_cat(sql_session *s, const sql_expr *e,
                                  const sql_value *row, sql_value *out)
{
    sql_value a = {0}, b = {0};
    bool a_empty, b_empty;
    char *p;
    uint32_t n = 0;
    keel_status rc = sql_expr_eval(s, e->args[0], row, &a);

    if (rc == KEEL_OK)
        rc = sql_expr_eval(s, e->args[1], row, &b);
    if (rc != KEEL_OK)
        return rc;
    if (a.isnull || b.isnull) {
        *out = a.isnull ? b : a;
        out->type = e->type;
        return KEEL_OK;
    }
    if (a.v.s.len < 2 || b.v.s.len < 2)
        return sql_fail(s, KEEL_EINVAL, "22P02", "malformed array literal");
    a_empty = a.v.s.len == 2;
    b_empty = b.v.s.len == 2;
    p = sql_alloc(&s->arena, a.v.s.len + b.v.s.len);
    if (p == NULL)
        return nomem(s);
    memcpy(p, a.v.s.p, a.v.s.len - 1); /* "{a,b" */
    n = a.v.s.len - 1;
    if (!a_empty && !b_empty)
        p[n++] = ',';
    memcpy(p + n, b.v.s.p + 1, b.v.s.len - 1); /* "c}" */
    n += b.v.s.len - 1;
    out->type = e->type;
    out->isnull = false;
    out->v.s.p = p;
    out->v.s.len = n;
    return KEEL_OK;
}

/* ARRAY[...]: each element's text, as an array's output writes it; an
 * element that is an array itself goes in whole (ARRAY[ARRAY[1], ...],
 * one more dimension). */
static keel_status eval_array(sql_session *s, const sql_expr *e,
                              const sql_value *row, sql_value *out)
{
    size_t n = 0, cap = 16;
    char *buf = sql_alloc(&s->arena, cap);
    bool nested = sql_type_elem(e->args[0]->type) != 0;
    keel_status rc = buf != NULL ? KEEL_OK : nomem(s);

    if (rc == KEEL_OK)
        buf[n++] = '{';
    for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++) {
        sql_value v;
        rc = sql_expr_eval(s, e->args[i], row, &v);
        if (rc == KEEL_OK && nested && v.isnull)
            rc = sql_unsupported(s, e->location, "a NULL among arrays in "
                                                 "ARRAY[]");
        if (rc != KEEL_OK)
            break;
        if (n + 2 + (nested ? v.v.s.len : 0) > cap) {
            size_t nc = (n + 2 + (nested ? v.v.s.len : 0)) * 2;
            char *nb = sql_alloc(&s->arena, nc);
            if (nb == NULL)
                return nomem(s);
            memcpy(nb, buf, n);
            buf = nb;
            cap = nc;
        }
        if (i > 0)
            buf[n++] = ',';
        if (nested) {
            memcpy(buf + n, v.v.s.p, v.v.s.len);
            n += v.v.s.len;
        } else {
            rc = sql_array_put(s, &buf, &n, &cap, &v);
        }
    }
    if (rc == KEEL_OK && n + 1 > cap) {
        char *nb = sql_alloc(&s->arena, n + 1);
        if (nb == NULL)
            return nomem(s);
        memcpy(nb, buf, n);
        buf = nb;
    }
    if (rc != KEEL_OK)
        return rc;
    buf[n++] = '}';
    out->type = e->type;
    out->isnull = false;
    out->v.s.p = buf;
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

/* Whether name needs quotes to be read back as itself. */
static bool ident_needs_quotes(const char *p, uint32_t len)
{
    if (len == 0 || !((p[0] >= 'a' && p[0] <= 'z') || p[0] == '_'))
        return true;
    for (uint32_t i = 0; i < len; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
              p[i] == '_'))
            return true;
    return false;
}

/* format_type(): PostgreSQL's SQL name of a type, with its length
 * (typmod) for those that have one; NULL typmod gives the bare name. */
static const char *type_format(sql_session *s, uint32_t type, bool has_mod,
                               int64_t typmod)
{
    char *p;

    if (type == SQL_TYPE_BPCHAR || type == SQL_TYPE_VARCHAR) {
        const char *n = type == SQL_TYPE_BPCHAR ? "character" : "character varying";
        if (!has_mod)
            return type == SQL_TYPE_BPCHAR ? "bpchar" : n;
        if (typmod < 4)
            return n;
        p = sql_alloc(&s->arena, 48);
        if (p != NULL)
            snprintf(p, 48, "%s(%lld)", n, (long long)(typmod - 4));
        return p;
    }
    if (type == SQL_TYPE_NUMERIC && has_mod && typmod >= 4) {
        /* numeric(p,s): numeric_typmod()'s (p << 16 | s) + 4. */
        p = sql_alloc(&s->arena, 48);
        if (p != NULL)
            snprintf(p, 48, "numeric(%d,%d)",
                     numeric_typmod_precision((int32_t)typmod),
                     numeric_typmod_scale((int32_t)typmod));
        return p;
    }
    if (type == SQL_TYPE_CHAR_ARRAY)
        return "\"char\"[]";
    if (strcmp(sql_type_name(type), "?") == 0)
        return "???";
    return sql_type_name(type);
}

/* The functions over pg_catalog's rows (current_schemas(), ...): every
 * argument evaluated first; NULL in gives NULL out but for format_type's
 * typmod. */
static keel_status eval_catalog_func(sql_session *s, const sql_expr *e,
                                     const sql_value *row, sql_value *out)
{
    sql_value a[3] = {{0}, {0}, {0}};
    keel_status rc;

    for (uint16_t i = 0; i < e->nargs && i < 3; i++) {
        rc = sql_expr_eval(s, e->args[i], row, &a[i]);
        if (rc != KEEL_OK)
            return rc;
        if (a[i].isnull && !(e->u.func == SQL_FUNC_FORMAT_TYPE && i == 1) &&
            !(e->u.func == SQL_FUNC_ARRAY_TO_STRING && i == 2)) {
            out->type = e->type;
            out->isnull = true;
            return KEEL_OK;
        }
    }
    out->type = e->type;
    out->isnull = false;
    if (e->u.func >= SQL_FUNC_SUBSTR && e->u.func <= SQL_FUNC_STARTS_WITH)
        return sql_string_eval(s, e, a, out); /* sql_string.c's */
    switch (e->u.func) {
    case SQL_FUNC_CURRENT_SCHEMAS: {
        /* The search path: pg_catalog (where keel_catalog's tables are
         * found too) is implicit, public is the path. */
        const char *v = a[0].v.b ? "{pg_catalog,public}" : "{public}";
        out->v.s.p = v;
        out->v.s.len = (uint32_t)strlen(v);
        return KEEL_OK;
    }
    case SQL_FUNC_ARRAY_POSITION:
    case SQL_FUNC_ARRAY_TO_STRING: {
        const char *el;
        uint32_t pos = 0, elen, n = 0, used = 0;
        bool isnull;
        char *buf = NULL;
        const sql_value *nulls =
            e->nargs > 2 && !a[2].isnull ? &a[2] : NULL;
        uint32_t emitted = 0;
        if (e->u.func == SQL_FUNC_ARRAY_TO_STRING) {
            buf = sql_alloc(&s->arena,
                            a[0].v.s.len * (a[1].v.s.len + 1 +
                                            (nulls != NULL ? nulls->v.s.len
                                                           : 0)) +
                                1);
            if (buf == NULL)
                return nomem(s);
        }
        while (array_next(s, a[0].v.s.p, a[0].v.s.len, &pos, &el, &elen,
                          &isnull)) {
            n++;
            if (e->u.func == SQL_FUNC_ARRAY_POSITION) {
                if (!isnull && elen == a[1].v.s.len &&
                    memcmp(el, a[1].v.s.p, elen) == 0) {
                    out->v.i = n;
                    return KEEL_OK;
                }
                continue;
            }
            if (isnull && nulls == NULL)
                continue;
            if (emitted++ > 0) {
                memcpy(buf + used, a[1].v.s.p, a[1].v.s.len);
                used += a[1].v.s.len;
            }
            if (isnull) {
                el = nulls->v.s.p;
                elen = nulls->v.s.len;
            }
            memcpy(buf + used, el, elen);
            used += elen;
        }
        if (e->u.func == SQL_FUNC_ARRAY_POSITION) {
            out->isnull = true;
            return KEEL_OK;
        }
        out->v.s.p = buf;
        out->v.s.len = used;
        return KEEL_OK;
    }
    case SQL_FUNC_PG_GET_USERBYID: {
        /* keel has one role, the one connected, as oid 10 (PostgreSQL's
         * bootstrap superuser's); public belongs to pg_database_owner. */
        const char *v;
        char *p;
        if (a[0].v.i == 10) {
            v = sql_setting_get(s, "user");
        } else if (a[0].v.i == 6171) {
            v = "pg_database_owner";
        } else {
            p = sql_alloc(&s->arena, 32);
            if (p == NULL)
                return nomem(s);
            snprintf(p, 32, "unknown (OID=%lld)", (long long)a[0].v.i);
            v = p;
        }
        out->v.s.p = v;
        out->v.s.len = (uint32_t)strlen(v);
        return KEEL_OK;
    }
    case SQL_FUNC_PG_TABLE_IS_VISIBLE:
        return sql_catalog_visible(s, (uint32_t)a[0].v.i, &out->v.b);
    case SQL_FUNC_PG_ENCODING_TO_CHAR: {
        const char *v = a[0].v.i == 6 ? "UTF8" : a[0].v.i == 0 ? "SQL_ASCII" : "";
        out->v.s.p = v;
        out->v.s.len = (uint32_t)strlen(v);
        return KEEL_OK;
    }
    case SQL_FUNC_FORMAT_TYPE: {
        const char *v = type_format(s, (uint32_t)a[0].v.i, !a[1].isnull,
                                    a[1].v.i);
        if (v == NULL)
            return nomem(s);
        out->v.s.p = v;
        out->v.s.len = (uint32_t)strlen(v);
        return KEEL_OK;
    }
    case SQL_FUNC_SPLIT_PART: {
        /* Field n of the string split at each delimiter, counted from
         * the end when negative; "" past the fields (and for an empty
         * string), the whole string for an empty delimiter's field 1 or
         * -1, as PostgreSQL's. */
        const char *p = a[0].v.s.p, *d = a[1].v.s.p;
        uint32_t len = a[0].v.s.len, dlen = a[1].v.s.len, start = 0;
        int64_t n = a[2].v.i, nf = 1, want;
        if (n == 0)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "field position must not be zero");
        out->v.s.p = "";
        out->v.s.len = 0;
        if (len == 0)
            return KEEL_OK;
        if (dlen == 0) {
            if (n == 1 || n == -1)
                out->v.s = a[0].v.s;
            return KEEL_OK;
        }
        for (uint32_t i = 0; i + dlen <= len; i++)
            if (memcmp(p + i, d, dlen) == 0) {
                nf++;
                i += dlen - 1;
            }
        want = n > 0 ? n : nf + n + 1;
        if (want < 1 || want > nf)
            return KEEL_OK;
        for (int64_t f = 1; f < want; f++) {
            uint32_t i = start;
            while (memcmp(p + i, d, dlen) != 0)
                i++;
            start = i + dlen;
        }
        {
            uint32_t end = start;
            while (end + dlen <= len && memcmp(p + end, d, dlen) != 0)
                end++;
            if (end + dlen > len)
                end = len;
            out->v.s.p = p + start;
            out->v.s.len = end - start;
        }
        return KEEL_OK;
    }
    case SQL_FUNC_QUOTE_IDENT: {
        char *p;
        uint32_t n = 0;
        if (!ident_needs_quotes(a[0].v.s.p, a[0].v.s.len)) {
            *out = a[0];
            out->type = e->type;
            return KEEL_OK;
        }
        p = sql_alloc(&s->arena, 2 * a[0].v.s.len + 3);
        if (p == NULL)
            return nomem(s);
        p[n++] = '"';
        for (uint32_t i = 0; i < a[0].v.s.len; i++) {
            if (a[0].v.s.p[i] == '"')
                p[n++] = '"';
            p[n++] = a[0].v.s.p[i];
        }
        p[n++] = '"';
        out->v.s.p = p;
        out->v.s.len = n;
        return KEEL_OK;
    }
    case SQL_FUNC_NEXTVAL:
    case SQL_FUNC_CURRVAL:
    case SQL_FUNC_SETVAL:
    case SQL_FUNC_LASTVAL:
        return sql_sequence_eval(s, e->u.func, a, e->nargs, out);
    case SQL_FUNC_EXTRACT:
    case SQL_FUNC_DATE_PART:
    case SQL_FUNC_DATE_TRUNC:
        return sql_datetime_func(s, e->u.func, a, out);
    case SQL_FUNC_TO_CHAR:
        if (sql_type_is_number(a[0].type))
            return sql_to_char_number(s, &a[0], a[1].v.s.p, a[1].v.s.len, out);
        return sql_to_char_datetime(s, &a[0], a[1].v.s.p, a[1].v.s.len, out);
    case SQL_FUNC_PG_TYPE_IS_VISIBLE:
        /* Every type keel has is pg_catalog's. */
        out->v.b = strcmp(sql_type_name((uint32_t)a[0].v.i), "?") != 0;
        return KEEL_OK;
    case SQL_FUNC_REG_IN: {
        uint32_t oid = 0;
        bool missing = false;
        rc = sql_reg_in(s, (sql_func)(a[1].v.i & 0xFFFF), a[0].v.s.p,
                        a[0].v.s.len, -1, (a[1].v.i >> 16) != 0, &oid,
                        &missing);
        if (rc != KEEL_OK)
            return rc;
        out->v.i = oid;
        out->isnull = missing;
        return KEEL_OK;
    }
    case SQL_FUNC_CURRENT_DATABASE: {
        const char *v = sql_setting_get(s, "database");
        out->v.s.p = v;
        out->v.s.len = (uint32_t)strlen(v);
        return KEEL_OK;
    }
    case SQL_FUNC_REGCLASS:
    case SQL_FUNC_REGTYPE:
    case SQL_FUNC_REGNAMESPACE:
    case SQL_FUNC_PG_GET_INDEXDEF:
    case SQL_FUNC_PG_GET_CONSTRAINTDEF: {
        /* Text by oid; an oid that names nothing prints as its number
         * (the reg types) or gives NULL (the definitions). */
        const char *v = NULL;
        uint32_t oid = (uint32_t)a[0].v.i;
        if (e->u.func == SQL_FUNC_REGCLASS)
            rc = sql_catalog_relname(s, oid, &v);
        else if (e->u.func == SQL_FUNC_REGNAMESPACE)
            rc = sql_catalog_nspname(s, oid, &v);
        else if (e->u.func == SQL_FUNC_REGTYPE)
            v = strcmp(sql_type_name(oid), "?") != 0
                    ? type_format(s, oid, true, -1)
                    : NULL;
        else
            rc = sql_catalog_indexdef(
                s, oid,
                e->u.func == SQL_FUNC_PG_GET_INDEXDEF && e->nargs > 1
                    ? (int32_t)a[1].v.i
                    : 0,
                e->u.func == SQL_FUNC_PG_GET_CONSTRAINTDEF, &v);
        if (rc != KEEL_OK)
            return rc;
        if (v == NULL && e->u.func == SQL_FUNC_PG_GET_CONSTRAINTDEF) {
            /* not an index's: a CHECK's (pretty, its second argument,
             * without PostgreSQL's extra parentheses) */
            bool found = false;
            rc = sql_check_def_text(s, oid, e->nargs > 1 && a[1].v.b, out,
                                    &found);
            if (rc != KEEL_OK || found)
                return rc;
            rc = sql_fkey_def_text(s, oid, out, &found);
            if (rc != KEEL_OK || found)
                return rc;
        }
        if (v == NULL && e->u.func >= SQL_FUNC_PG_GET_INDEXDEF) {
            out->isnull = true;
            return KEEL_OK;
        }
        if (v == NULL) {
            char *p = sql_alloc(&s->arena, 16);
            if (p == NULL)
                return nomem(s);
            snprintf(p, 16, "%u", oid);
            v = p;
        }
        out->v.s.p = v;
        out->v.s.len = (uint32_t)strlen(v);
        return KEEL_OK;
    }
    case SQL_FUNC_PG_GET_EXPR:
        /* keel keeps no expressions (defaults, partition bounds): the
         * columns that would hold them are NULL, and other text is
         * given back as it is. */
        *out = a[0];
        out->type = e->type;
        return KEEL_OK;
    case SQL_FUNC_PG_GET_STATISTICSOBJDEF_COLUMNS:
    case SQL_FUNC_PG_GET_TRIGGERDEF:
        /* keel has no extended statistics objects, and no triggers (its
         * foreign keys are checked without them). */
        out->isnull = true;
        return KEEL_OK;
    case SQL_FUNC_PG_RELATION_IS_PUBLISHABLE:
        return sql_catalog_publishable(s, (uint32_t)a[0].v.i, &out->v.b);
    case SQL_FUNC_PG_RELATION_SIZE:
    case SQL_FUNC_PG_TABLE_SIZE:
    case SQL_FUNC_PG_INDEXES_SIZE:
    case SQL_FUNC_PG_TOTAL_RELATION_SIZE:
    case SQL_FUNC_PG_DATABASE_SIZE:
    case SQL_FUNC_PG_SIZE_PRETTY:
    case SQL_FUNC_OBJ_DESCRIPTION:
    case SQL_FUNC_COL_DESCRIPTION:
    case SQL_FUNC_SHOBJ_DESCRIPTION:
    case SQL_FUNC_HAS_DATABASE_PRIVILEGE:
        return sql_size_eval(s, e, a, out);
    case SQL_FUNC_ARRAY_UPPER:
    case SQL_FUNC_ARRAY_ELEMENT: {
        const char *el;
        uint32_t pos = 0, elen;
        int64_t n = 0;
        bool isnull;
        while (array_next(s, a[0].v.s.p, a[0].v.s.len, &pos, &el, &elen,
                          &isnull)) {
            n++;
            if (e->u.func == SQL_FUNC_ARRAY_ELEMENT && n == a[1].v.i) {
                sql_value v = {.type = SQL_TYPE_UNKNOWN, .isnull = isnull,
                               .v.s = {el, elen}};
                if (!isnull) {
                    rc = sql_value_cast(s, &v, e->type, -1, true, -1);
                    if (rc != KEEL_OK)
                        return rc;
                }
                v.type = e->type;
                *out = v;
                return KEEL_OK;
            }
        }
        if (e->u.func == SQL_FUNC_ARRAY_ELEMENT || n == 0 || a[1].v.i != 1) {
            out->isnull = true;
            return KEEL_OK;
        }
        out->v.i = n;
        return KEEL_OK;
    }
    default:
        return sql_unsupported(s, e->location, "this function");
    }
}

/* text ~ pattern, as a POSIX extended regular expression. */
static keel_status eval_regex(sql_session *s, const sql_expr *e,
                              const sql_value *a, const sql_value *b,
                              sql_value *out)
{
    char *subject = sql_strndup(&s->arena, a->v.s.p, a->v.s.len);
    char *pattern = sql_strndup(&s->arena, b->v.s.p, b->v.s.len);
    bool icase = e->u.op == SQL_OP_IREGEX || e->u.op == SQL_OP_NIREGEX;
    bool neg = e->u.op == SQL_OP_NREGEX || e->u.op == SQL_OP_NIREGEX;
    regex_t re;
    int rc;

    if (subject == NULL || pattern == NULL)
        return nomem(s);
    rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
    if (rc != 0) {
        char msg[128];
        regerror(rc, &re, msg, sizeof(msg));
        return sql_fail(s, KEEL_EINVAL, "2201B",
                        "invalid regular expression: %s", msg);
    }
    rc = regexec(&re, subject, 0, NULL, 0);
    regfree(&re);
    out->type = SQL_TYPE_BOOL;
    out->isnull = false;
    out->v.b = (rc == 0) != neg;
    return KEEL_OK;
}

/* GREATEST and LEAST (NULLs skipped; NULL if all are), and NULLIF. */
static keel_status eval_minmax(sql_session *s, const sql_expr *e,
                               const sql_value *row, sql_value *out)
{
    keel_status rc;

    out->type = e->type;
    out->isnull = true;
    if (e->u.func == SQL_FUNC_NULLIF) {
        sql_value b;
        rc = sql_expr_eval(s, e->args[0], row, out);
        if (rc == KEEL_OK && !out->isnull)
            rc = sql_expr_eval(s, e->args[1], row, &b);
        if (rc == KEEL_OK && !out->isnull && !b.isnull &&
            sql_value_compare(out, &b) == 0)
            out->isnull = true;
        out->type = e->type;
        return rc;
    }
    for (uint16_t i = 0; i < e->nargs; i++) {
        sql_value v;
        int c;
        rc = sql_expr_eval(s, e->args[i], row, &v);
        if (rc != KEEL_OK)
            return rc;
        if (v.isnull)
            continue;
        c = out->isnull ? 1 : sql_value_compare(&v, out);
        if (out->isnull || (e->u.func == SQL_FUNC_GREATEST ? c > 0 : c < 0))
            *out = v;
    }
    out->type = e->type;
    return KEEL_OK;
}

static keel_status eval_func(sql_session *s, const sql_expr *e,
                             const sql_value *row, sql_value *out)
{
    sql_value a = {0};
    keel_status rc;

    if (e->u.func >= SQL_FUNC_JSON_GET && e->u.func <= SQL_FUNC_TO_JSON)
        return sql_json_eval(s, e, row, out);
    if (e->u.func >= SQL_FUNC_SQRT && e->u.func <= SQL_FUNC_AGE)
        return sql_func_more_eval(s, e, row, out);
    if (e->u.func == SQL_FUNC_ARRAY_CAT)
        return eval_array_cat(s, e, row, out);
    if (e->u.func == SQL_FUNC_ARRAY)
        return eval_array(s, e, row, out);
    if (e->u.func == SQL_FUNC_CONCAT || e->u.func == SQL_FUNC_CONCAT_WS)
        return sql_concat_eval(s, e, row, out);
    if (e->u.func == SQL_FUNC_GREATEST || e->u.func == SQL_FUNC_LEAST ||
        e->u.func == SQL_FUNC_NULLIF)
        return eval_minmax(s, e, row, out);
    if (e->u.func >= SQL_FUNC_CURRENT_SCHEMAS)
        return eval_catalog_func(s, e, row, out);
    if (e->nargs > 0) {
        rc = sql_expr_eval(s, e->args[0], row, &a);
        if (rc != KEEL_OK)
            return rc;
        if (a.isnull) {
            out->type = e->type;
            out->isnull = true;
            return KEEL_OK;
        }
    }
    out->type = e->type;
    out->isnull = false;
    switch (e->u.func) {
    case SQL_FUNC_VERSION: {
        static const char v[] =
            "PostgreSQL 15.0 (keel " KEEL_VERSION_STRING "), 64-bit";
        out->v.s.p = v;
        out->v.s.len = sizeof(v) - 1;
        return KEEL_OK;
    }
    case SQL_FUNC_RANDOM:
        /* The session's own generator: drand48()'s state is the
         * process's, shared by every connection's thread. */
        out->v.f = erand48(s->rand_state);
        return KEEL_OK;
    case SQL_FUNC_ROUND:
    case SQL_FUNC_TRUNC:
    case SQL_FUNC_CEIL:
    case SQL_FUNC_FLOOR:
        return eval_rounding(s, e, row, &a, out);
    case SQL_FUNC_ABS:
        if (e->type == SQL_TYPE_NUMERIC) {
            numeric x = NUMERIC_INIT;
            rc = sql_numeric_get(s, &a, &x);
            if (rc != KEEL_OK)
                return rc;
            if (x.sign == NUMERIC_NEG)
                x.sign = NUMERIC_POS;
            return sql_numeric_put(s, &x, out);
        }
        if (e->type == SQL_TYPE_FLOAT8) {
            out->v.f = fabs(a.v.f);
        } else {
            if ((e->type == SQL_TYPE_INT8 && a.v.i == INT64_MIN))
                return overflow(s, e);
            out->v.i = a.v.i < 0 ? -a.v.i : a.v.i;
            return int_fits(s, e, out->v.i);
        }
        return KEEL_OK;
    case SQL_FUNC_LENGTH: {
        int64_t n = 0;
        uint32_t len = a.v.s.len;
        if (a.type == SQL_TYPE_BYTEA) {
            out->v.i = len;
            return KEEL_OK;
        }
        if (a.type == SQL_TYPE_BPCHAR)
            while (len > 0 && a.v.s.p[len - 1] == ' ')
                len--;
        for (uint32_t i = 0; i < len; i++)
            n += ((unsigned char)a.v.s.p[i] & 0xC0) != 0x80;
        out->v.i = n;
        return KEEL_OK;
    }
    case SQL_FUNC_UPPER:
    case SQL_FUNC_LOWER: {
        char *p = sql_alloc(&s->arena, a.v.s.len + 1);
        if (p == NULL)
            return nomem(s);
        for (uint32_t i = 0; i < a.v.s.len; i++) {
            char c = a.v.s.p[i];
            if (e->u.func == SQL_FUNC_UPPER && c >= 'a' && c <= 'z')
                c = (char)(c - 'a' + 'A');
            else if (e->u.func == SQL_FUNC_LOWER && c >= 'A' && c <= 'Z')
                c = (char)(c - 'A' + 'a');
            p[i] = c;
        }
        out->v.s.p = p;
        out->v.s.len = a.v.s.len;
        return KEEL_OK;
    }
    case SQL_FUNC_NOW:
        out->v.i = s->txn_start_us != 0 ? s->txn_start_us : sql_now_us();
        return KEEL_OK;
    case SQL_FUNC_CLOCK_TIMESTAMP:
        out->v.i = sql_now_us();
        return KEEL_OK;
    case SQL_FUNC_CURRENT_SETTING: {
        char *name = sql_strndup(&s->arena, a.v.s.p, a.v.s.len);
        const char *v;
        if (name == NULL)
            return nomem(s);
        v = sql_setting_get(s, name);
        if (v[0] == '\0' && strcasecmp(name, "application_name") != 0)
            return sql_fail_at(s, e->location, KEEL_ENOENT, "42704",
                               "unrecognized configuration parameter \"%s\"",
                               name);
        /* a copy: a SET (or set_config()) frees the setting's text */
        out->v.s.p = sql_strndup(&s->arena, v, strlen(v));
        if (out->v.s.p == NULL)
            return nomem(s);
        out->v.s.len = (uint32_t)strlen(v);
        return KEEL_OK;
    }
    default:
        break;
    }
    return sql_unsupported(s, e->location, "this function");
}

keel_status sql_array_put(sql_session *s, char **buf, size_t *n, size_t *cap,
                          const sql_value *v)
{
    const char *p = "NULL";
    uint32_t len = 4;
    bool quote = false;
    keel_status rc;

    if (!v->isnull) {
        rc = sql_value_text(s, v, &p, &len);
        if (rc != KEEL_OK)
            return rc;
        quote = len == 0 || (len == 4 && strncasecmp(p, "NULL", 4) == 0);
        for (uint32_t i = 0; i < len && !quote; i++)
            quote = strchr("{},\"\\ \t\n", p[i]) != NULL;
    }
    if (*n + 2 * len + 4 > *cap) {
        size_t nc = (*cap + 2 * len + 4) * 2;
        char *nb = sql_alloc(&s->arena, nc);
        if (nb == NULL)
            return nomem(s);
        if (*n > 0)
            memcpy(nb, *buf, *n);
        *buf = nb;
        *cap = nc;
    }
    if (quote)
        (*buf)[(*n)++] = '"';
    for (uint32_t i = 0; i < len; i++) {
        if (quote && (p[i] == '"' || p[i] == '\\'))
            (*buf)[(*n)++] = '\\';
        (*buf)[(*n)++] = p[i];
    }
    if (quote)
        (*buf)[(*n)++] = '"';
    return KEEL_OK;
}

/* A subquery's value for the row around it (see analyse_sublink()). */
static keel_status eval_sublink(sql_session *s, const sql_expr *e,
                                const sql_value *row, sql_value *out)
{
    sql_rowset rs;
    sql_value x = {0};
    keel_status rc;

    memset(&rs, 0, sizeof(rs));
    if (e->u.sublink == SQL_SUBLINK_IN) {
        rc = sql_expr_eval(s, e->args[0], row, &x);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = sql_select_rows(s, e->sub, e->sub_scope, row, false, &rs);
    if (rc != KEEL_OK)
        return rc;
    out->type = e->type;
    out->isnull = false;
    switch (e->u.sublink) {
    case SQL_SUBLINK_EXISTS:
        out->v.b = rs.n > 0;
        return KEEL_OK;
    case SQL_SUBLINK_EXPR:
        if (rs.n > 1)
            return sql_fail(s, KEEL_EINVAL, "21000",
                            "more than one row returned by a subquery used "
                            "as an expression");
        if (rs.n == 0) {
            out->isnull = true;
            return KEEL_OK;
        }
        *out = rs.vals[0];
        return KEEL_OK;
    case SQL_SUBLINK_ARRAY: {
        char *buf = NULL;
        size_t n = 0, cap = 0;
        rc = KEEL_OK;
        if (rs.n == 0) {
            out->v.s.p = "{}";
            out->v.s.len = 2;
            return KEEL_OK;
        }
        for (size_t i = 0; rc == KEEL_OK && i < rs.n; i++) {
            rc = sql_array_put(s, &buf, &n, &cap, &rs.vals[i]);
            if (rc == KEEL_OK)
                buf[n++] = ',';
        }
        if (rc != KEEL_OK)
            return rc;
        buf[n - 1] = '}';
        memmove(buf + 1, buf, n);
        buf[0] = '{';
        out->v.s.p = buf;
        out->v.s.len = (uint32_t)n + 1;
        return KEEL_OK;
    }
    case SQL_SUBLINK_IN: {
        /* SQL's IN: true on a match; else NULL if either side had one. */
        bool any_null = x.isnull && rs.n > 0;
        out->v.b = false;
        for (size_t i = 0; !x.isnull && i < rs.n; i++) {
            sql_value v = rs.vals[i], l = x;
            if (v.isnull) {
                any_null = true;
                continue;
            }
            rc = sql_value_cast(s, &v, e->sub_type, -1, true, -1);
            if (rc == KEEL_OK)
                rc = sql_value_cast(s, &l, e->sub_type, -1, true, -1);
            if (rc != KEEL_OK)
                return rc;
            if (sql_value_compare(&l, &v) == 0) {
                out->v.b = true;
                return KEEL_OK;
            }
        }
        out->isnull = any_null;
        return KEEL_OK;
    }
    }
    return sql_unsupported(s, e->location, "this kind of subquery");
}

/* x = ANY (array): each element read as x's type. */
static keel_status eval_any(sql_session *s, const sql_expr *e,
                            const sql_value *row, sql_value *out)
{
    sql_value x, arr;
    const char *el;
    uint32_t pos = 0, elen;
    bool isnull, any_null = false;
    keel_status rc;

    rc = sql_expr_eval(s, e->args[0], row, &x);
    if (rc == KEEL_OK)
        rc = sql_expr_eval(s, e->args[1], row, &arr);
    if (rc != KEEL_OK)
        return rc;
    out->type = SQL_TYPE_BOOL;
    out->isnull = x.isnull || arr.isnull;
    out->v.b = false;
    if (out->isnull)
        return KEEL_OK;
    while (array_next(s, arr.v.s.p, arr.v.s.len, &pos, &el, &elen, &isnull)) {
        sql_value v = {.type = SQL_TYPE_UNKNOWN, .v.s = {el, elen}};
        if (isnull) {
            any_null = true;
            continue;
        }
        rc = sql_value_cast(s, &v, x.type, -1, true, -1);
        if (rc != KEEL_OK)
            return rc;
        if (sql_value_compare(&x, &v) == 0) {
            out->v.b = true;
            return KEEL_OK;
        }
    }
    out->isnull = any_null;
    return KEEL_OK;
}

keel_status sql_expr_eval(sql_session *s, const sql_expr *e,
                          const sql_value *row, sql_value *out)
{
    sql_value a, b;
    keel_status rc;

    switch (e->kind) {
    case SQL_EXPR_CONST:
        *out = e->u.value;
        return KEEL_OK;
    case SQL_EXPR_COLUMN:
        *out = row[e->u.column];
        return KEEL_OK;
    case SQL_EXPR_SRF:
        *out = e->u.srf->cur;
        return KEEL_OK;
    case SQL_EXPR_WINDOW:
        if (s->win_vals == NULL)
            return sql_fail(s, KEEL_EINVAL, "XX000",
                            "a window function's value is not known here");
        *out = s->win_vals[e->u.column];
        return KEEL_OK;
    case SQL_EXPR_PARAM:
        if (s->params == NULL)
            return sql_fail(s, KEEL_EINVAL, "08P01",
                            "parameter $%u has no value", e->u.column + 1u);
        *out = s->params[e->u.column];
        /* Bound as its type; one no use typed is text. */
        if (!out->isnull && out->type != e->type &&
            !(sql_type_is_string(out->type) && sql_type_is_string(e->type)))
            return sql_value_cast(s, out, e->type, -1, true, -1);
        out->type = e->type == SQL_TYPE_UNKNOWN ? SQL_TYPE_TEXT : out->type;
        return KEEL_OK;
    case SQL_EXPR_CAST:
        rc = sql_expr_eval(s, e->args[0], row, out);
        if (rc != KEEL_OK)
            return rc;
        return sql_value_cast(s, out, e->type,
                              sql_type_is_string(e->type) ||
                                      e->type == SQL_TYPE_NUMERIC
                                  ? (int32_t)e->u.value.v.i
                                  : -1,
                              true, -1);
    case SQL_EXPR_OP:
        rc = sql_expr_eval(s, e->args[0], row, &a);
        if (rc != KEEL_OK)
            return rc;
        if (e->u.op == SQL_OP_NEG) {
            *out = a;
            if (a.isnull)
                return KEEL_OK;
            if (a.type == SQL_TYPE_FLOAT8) {
                out->v.f = -a.v.f;
                return KEEL_OK;
            }
            if (a.type == SQL_TYPE_NUMERIC)
                return eval_numeric(s, SQL_OP_NEG, &a, NULL, out);
            if (a.type == SQL_TYPE_INTERVAL) {
                sql_value m = {.type = SQL_TYPE_FLOAT8, .v.f = -1};
                return sql_interval_arith(s, SQL_OP_MUL, &a, &m,
                                          SQL_TYPE_INTERVAL, out);
            }
            if (a.v.i == INT64_MIN)
                return overflow(s, e);
            out->v.i = -a.v.i;
            return int_fits(s, e, out->v.i);
        }
        rc = sql_expr_eval(s, e->args[1], row, &b);
        if (rc != KEEL_OK)
            return rc;
        if (a.isnull || b.isnull) {
            out->type = e->type;
            out->isnull = true;
            return KEEL_OK;
        }
        if (e->u.op <= SQL_OP_MOD)
            return eval_arith(s, e, &a, &b, out);
        if (e->u.op >= SQL_OP_REGEX)
            return eval_regex(s, e, &a, &b, out);
        out->type = e->type;
        out->isnull = false;
        if (e->u.op == SQL_OP_CONCAT) {
            char *p = sql_alloc(&s->arena, a.v.s.len + b.v.s.len + 1);
            if (p == NULL)
                return nomem(s);
            memcpy(p, a.v.s.p, a.v.s.len);
            memcpy(p + a.v.s.len, b.v.s.p, b.v.s.len);
            out->v.s.p = p;
            out->v.s.len = a.v.s.len + b.v.s.len;
            return KEEL_OK;
        }
        {
            int c = sql_value_compare(&a, &b);
            switch (e->u.op) {
            case SQL_OP_EQ:
                out->v.b = c == 0;
                break;
            case SQL_OP_NE:
                out->v.b = c != 0;
                break;
            case SQL_OP_LT:
                out->v.b = c < 0;
                break;
            case SQL_OP_LE:
                out->v.b = c <= 0;
                break;
            case SQL_OP_GT:
                out->v.b = c > 0;
                break;
            default:
                out->v.b = c >= 0;
                break;
            }
        }
        return KEEL_OK;
    case SQL_EXPR_AND:
    case SQL_EXPR_OR: {
        /* AND: false wins over NULL; OR: true wins over NULL. */
        bool any_null = false, stop = e->kind == SQL_EXPR_OR;
        for (uint16_t i = 0; i < e->nargs; i++) {
            rc = sql_expr_eval(s, e->args[i], row, &a);
            if (rc != KEEL_OK)
                return rc;
            if (a.isnull) {
                any_null = true;
            } else if (a.v.b == stop) {
                out->type = SQL_TYPE_BOOL;
                out->isnull = false;
                out->v.b = stop;
                return KEEL_OK;
            }
        }
        out->type = SQL_TYPE_BOOL;
        out->isnull = any_null;
        out->v.b = !stop;
        return KEEL_OK;
    }
    case SQL_EXPR_NOT:
        rc = sql_expr_eval(s, e->args[0], row, out);
        if (rc == KEEL_OK && !out->isnull)
            out->v.b = !out->v.b;
        return rc;
    case SQL_EXPR_ISNULL:
    case SQL_EXPR_ISNOTNULL:
        rc = sql_expr_eval(s, e->args[0], row, &a);
        if (rc != KEEL_OK)
            return rc;
        out->type = SQL_TYPE_BOOL;
        out->isnull = false;
        out->v.b = a.isnull == (e->kind == SQL_EXPR_ISNULL);
        return KEEL_OK;
    case SQL_EXPR_FUNC:
        return eval_func(s, e, row, out);
    case SQL_EXPR_IN: {
        bool any_null = false;
        rc = sql_expr_eval(s, e->args[0], row, &a);
        if (rc != KEEL_OK)
            return rc;
        out->type = SQL_TYPE_BOOL;
        out->isnull = false;
        if (a.isnull) {
            out->isnull = true;
            return KEEL_OK;
        }
        for (uint16_t i = 1; i < e->nargs; i++) {
            rc = sql_expr_eval(s, e->args[i], row, &b);
            if (rc != KEEL_OK)
                return rc;
            if (b.isnull) {
                any_null = true;
            } else if (sql_value_compare(&a, &b) == 0) {
                out->v.b = !e->u.negate;
                return KEEL_OK;
            }
        }
        out->isnull = any_null;
        out->v.b = e->u.negate;
        return KEEL_OK;
    }
    case SQL_EXPR_SUBLINK:
        return eval_sublink(s, e, row, out);
    case SQL_EXPR_ANY:
        return eval_any(s, e, row, out);
    case SQL_EXPR_LIKE:
        rc = sql_expr_eval(s, e->args[0], row, &a);
        if (rc == KEEL_OK)
            rc = sql_expr_eval(s, e->args[1], row, &b);
        if (rc != KEEL_OK)
            return rc;
        out->type = SQL_TYPE_BOOL;
        out->isnull = a.isnull || b.isnull;
        if (!out->isnull)
            out->v.b = like_match(a.v.s.p, a.v.s.len, b.v.s.p, b.v.s.len,
                                  e->icase) != e->u.negate;
        return KEEL_OK;
    case SQL_EXPR_DISTINCT:
        /* = over non-nulls; two nulls are not distinct, one is */
        rc = sql_expr_eval(s, e->args[0], row, &a);
        if (rc == KEEL_OK)
            rc = sql_expr_eval(s, e->args[1], row, &b);
        if (rc != KEEL_OK)
            return rc;
        out->type = SQL_TYPE_BOOL;
        out->isnull = false;
        out->v.b = a.isnull || b.isnull ? a.isnull != b.isnull
                                        : sql_value_compare(&a, &b) != 0;
        out->v.b = out->v.b != e->u.negate;
        return KEEL_OK;
    case SQL_EXPR_CASE: {
        uint16_t base = e->u.has_arg ? 1 : 0;
        uint16_t pairs = (uint16_t)((e->nargs - base - e->has_else) / 2);
        sql_value x = {0};
        if (e->u.has_arg) {
            rc = sql_expr_eval(s, e->args[0], row, &x);
            if (rc != KEEL_OK)
                return rc;
        }
        for (uint16_t i = 0; i < pairs; i++) {
            bool hit;
            rc = sql_expr_eval(s, e->args[base + 2 * i], row, &a);
            if (rc != KEEL_OK)
                return rc;
            if (e->u.has_arg)
                hit = !x.isnull && !a.isnull && sql_value_compare(&x, &a) == 0;
            else
                hit = !a.isnull && a.v.b;
            if (hit)
                return sql_expr_eval(s, e->args[base + 2 * i + 1], row, out);
        }
        if (e->has_else)
            return sql_expr_eval(s, e->args[e->nargs - 1], row, out);
        out->type = e->type;
        out->isnull = true;
        return KEEL_OK;
    }
    case SQL_EXPR_COALESCE:
        for (uint16_t i = 0; i < e->nargs; i++) {
            rc = sql_expr_eval(s, e->args[i], row, out);
            if (rc != KEEL_OK || !out->isnull)
                return rc;
        }
        out->type = e->type;
        out->isnull = true;
        return KEEL_OK;
    }
    return sql_unsupported(s, e->location, "this expression");
}

bool sql_expr_reads_engine(const sql_expr *e)
{
    if (e == NULL)
        return false;
    if (e->kind == SQL_EXPR_SUBLINK)
        return true;
    /* a regclass's name read into its oid, or the other way */
    if (e->kind == SQL_EXPR_CAST &&
        (e->type == SQL_TYPE_REGCLASS
             ? e->args[0]->type != SQL_TYPE_REGCLASS
             : e->args[0]->type == SQL_TYPE_REGCLASS &&
                   sql_type_is_int(e->type)))
        return true;
    if (e->kind == SQL_EXPR_FUNC)
        switch (e->u.func) {
        case SQL_FUNC_PG_TABLE_IS_VISIBLE:
        case SQL_FUNC_REGCLASS:
        case SQL_FUNC_REGNAMESPACE:
        case SQL_FUNC_REG_IN:
        case SQL_FUNC_NEXTVAL:
        case SQL_FUNC_CURRVAL:
        case SQL_FUNC_SETVAL:
        case SQL_FUNC_LASTVAL:
        case SQL_FUNC_PG_GET_INDEXDEF:
        case SQL_FUNC_PG_GET_CONSTRAINTDEF:
        case SQL_FUNC_PG_RELATION_IS_PUBLISHABLE:
        case SQL_FUNC_PG_RELATION_SIZE:
        case SQL_FUNC_PG_TABLE_SIZE:
        case SQL_FUNC_PG_INDEXES_SIZE:
        case SQL_FUNC_PG_TOTAL_RELATION_SIZE:
        case SQL_FUNC_PG_GET_SERIAL_SEQUENCE:
            return true;
        default:
            break;
        }
    for (uint16_t i = 0; i < e->nargs; i++)
        if (sql_expr_reads_engine(e->args[i]))
            return true;
    return false;
}

keel_status sql_expr_unify(sql_session *s, sql_expr **list, uint16_t n,
                           int32_t location, uint32_t *type)
{
    return unify_list(s, list, n, location, NULL, type);
}

keel_status sql_expr_coerce(sql_session *s, sql_expr **e, uint32_t type)
{
    return coerce(s, e, type, false);
}

/* ---- constant folding ---------------------------------------------------- */

/* Whether e's value is the same every time it is evaluated. */
static bool is_stable(const sql_expr *e)
{
    return !(e->kind == SQL_EXPR_FUNC &&
             (e->u.func == SQL_FUNC_RANDOM ||
              e->u.func == SQL_FUNC_CLOCK_TIMESTAMP ||
              e->u.func == SQL_FUNC_GEN_RANDOM_UUID ||
              e->u.func == SQL_FUNC_SET_CONFIG ||
              e->u.func == SQL_FUNC_CURRENT_SETTING ||
              e->u.func == SQL_FUNC_NEXTVAL || e->u.func == SQL_FUNC_CURRVAL ||
              e->u.func == SQL_FUNC_SETVAL || e->u.func == SQL_FUNC_LASTVAL));
}

/*
 * Evaluates every subexpression of constants once, at analysis, as
 * PostgreSQL's planner does: an error in one (1/0, a bad cast) is
 * reported before the statement returns anything.
 */
static keel_status fold(sql_session *s, sql_expr **ep)
{
    sql_expr *e = *ep;
    bool all_const = true;
    sql_value v;
    keel_status rc;

    /* A subquery runs for its row, never at analysis. */
    if (e->kind == SQL_EXPR_CONST || e->kind == SQL_EXPR_COLUMN ||
        e->kind == SQL_EXPR_PARAM || e->kind == SQL_EXPR_SUBLINK ||
        e->kind == SQL_EXPR_WINDOW)
        return KEEL_OK;
    for (uint16_t i = 0; i < e->nargs; i++) {
        rc = fold(s, &e->args[i]);
        if (rc != KEEL_OK)
            return rc;
        if (e->args[i]->kind != SQL_EXPR_CONST)
            all_const = false;
    }
    /* a set-returning function's value varies by row of its own */
    if (e->kind == SQL_EXPR_SRF)
        return KEEL_OK;
    if (!all_const || !is_stable(e))
        return KEEL_OK;
    rc = sql_expr_eval(s, e, NULL, &v);
    if (rc != KEEL_OK)
        return rc;
    e->kind = SQL_EXPR_CONST;
    e->nargs = 0;
    e->u.value = v;
    e->u.value.type = e->type;
    return KEEL_OK;
}

keel_status sql_expr_prepare_for(sql_session *s, const sql_scope *scope,
                                 const PgQuery__Node *node, uint32_t type,
                                 sql_expr **out)
{
    keel_status rc = sql_expr_analyse(s, scope, node, out);

    /* A number assigned to a column of another number type takes the
     * column's, as PostgreSQL's assignment casts do. */
    if (rc == KEEL_OK && (*out)->type != type && sql_type_is_number(type) &&
        sql_type_is_number((*out)->type))
        rc = coerce(s, out, type, false);
    if (rc == KEEL_OK)
        rc = fold(s, out);
    return rc;
}

keel_status sql_expr_prepare(sql_session *s, const sql_scope *scope,
                             const PgQuery__Node *node, sql_expr **out)
{
    keel_status rc = sql_expr_analyse(s, scope, node, out);

    if (rc == KEEL_OK)
        rc = fold(s, out);
    return rc;
}
