/*
 * sql_check.c: CHECK constraints.
 *
 * keel's engine keeps no expressions, so the SQL layer keeps each check
 * as PostgreSQL keeps it in pg_constraint: a row of keel_sql.keel_check
 * (conrelid oid, conname text, oid oid, consrc text; primary key
 * (conrelid, conname)), made through the engine's API by the first
 * CHECK, as keel_attrdef is: transactional, logged, read in the
 * statement's snapshot.  consrc is the expression as libpg_query
 * deparses it; oid, keel_oid_new()'s, is what pg_constraint and
 * pg_get_constraintdef() name the check by.
 *
 * A table's checks are written only where the table is made: CREATE
 * TABLE, and ALTER TABLE, which makes the table anew for ADD and DROP
 * CONSTRAINT as for its other changes (a check carried over has its
 * columns renamed with them; one naming a column dropped goes, as
 * PostgreSQL drops it).  TRUNCATE moves them to the table it makes.  So
 * a session reads a table's checks once, with its defaults
 * (sql_default.c), and each statement that writes rows analyses them
 * over the table's columns (sql_checks_prepare()) and runs them on each
 * row it writes, after NOT NULL: a row passes unless one is false
 * (23514, the row shown as PostgreSQL shows it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

#define CHECK_TABLE "keel_check"

static keel_status table_ensure(sql_session *s)
{
    static const keel_column cols[4] = {
        {.name = "conrelid", .type = KEEL_OID, .notnull = true},
        {.name = "conname", .type = KEEL_TEXT, .notnull = true},
        {.name = "oid", .type = KEEL_OID, .notnull = true},
        {.name = "consrc", .type = KEEL_TEXT, .notnull = true},
    };
    static const uint16_t pkey[2] = {1, 2};

    return sql_store_ensure(s, CHECK_TABLE, cols, 4, pkey, 2);
}

keel_status sql_checks_ensure(sql_session *s)
{
    return table_ensure(s);
}

keel_status sql_checks_read(sql_session *s, uint32_t relid,
                            sql_check_row **rows, uint16_t *nrows)
{
    keel_value key = {.v.oid = relid}, row[4];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_scan *sc = NULL;
    sql_check_row *r = NULL;
    uint16_t n = 0, cap = 0;
    bool found, exists = false;
    keel_status rc = sql_store_exists(s, CHECK_TABLE, &exists);

    *rows = NULL;
    *nrows = 0;
    if (rc != KEEL_OK || !exists)
        return rc;
    rc = keel_scan_begin(s->ks, SQL_STORE_SCHEMA, CHECK_TABLE, NULL,
                         relid != 0 ? &b : NULL, relid != 0 ? &b : NULL, &sc);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    while ((rc = keel_scan_next(sc, row, &found)) == KEEL_OK && found) {
        if (n == cap) {
            sql_check_row *g;
            cap = cap == 0 ? 4 : (uint16_t)(cap * 2);
            g = sql_alloc(&s->arena, cap * sizeof(*g));
            if (g == NULL) {
                rc = KEEL_ENOMEM;
                break;
            }
            if (n > 0)
                memcpy(g, r, n * sizeof(*g));
            r = g;
        }
        r[n].relid = row[0].v.oid;
        r[n].oid = row[2].v.oid;
        r[n].name = sql_strndup(&s->arena, row[1].v.s.ptr, row[1].v.s.len);
        r[n].src = sql_strndup(&s->arena, row[3].v.s.ptr, row[3].v.s.len);
        if (r[n].name == NULL || r[n].src == NULL) {
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

static keel_status row_put(sql_session *s, uint32_t relid, const char *name,
                           uint32_t oid, const char *src)
{
    keel_value v[4] = {{.v.oid = relid}, {.isnull = false}, {.v.oid = oid},
                       {.isnull = false}};
    keel_status rc = table_ensure(s);

    v[1].v.s.ptr = name;
    v[1].v.s.len = (uint32_t)strlen(name);
    v[3].v.s.ptr = src;
    v[3].v.s.len = (uint32_t)strlen(src);
    if (rc == KEEL_OK)
        rc = keel_insert(s->ks, SQL_STORE_SCHEMA, CHECK_TABLE, v);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_checks_move(sql_session *s, uint32_t old_relid,
                            uint32_t new_relid)
{
    sql_check_row *rows;
    uint16_t n;
    keel_status rc = sql_checks_read(s, old_relid, &rows, &n);

    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        keel_value key[2] = {{.v.oid = old_relid}, {.isnull = false}};
        key[1].v.s.ptr = rows[i].name;
        key[1].v.s.len = (uint32_t)strlen(rows[i].name);
        rc = keel_delete(s->ks, SQL_STORE_SCHEMA, CHECK_TABLE, key);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (new_relid != 0)
            rc = row_put(s, new_relid, rows[i].name, rows[i].oid, rows[i].src);
    }
    return rc;
}

/* ---- a tree's column references --------------------------------------- */

/* Calls fn on each ColumnRef under m, through protobuf-c's descriptors
 * (any node kind a CHECK may hold, without a case for each). */
static void refs_walk(const ProtobufCMessage *m,
                      void (*fn)(PgQuery__ColumnRef *cr, void *arg), void *arg)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;

    if (d == &pg_query__column_ref__descriptor) {
        fn((PgQuery__ColumnRef *)m, arg);
        return;
    }
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *base = (const char *)m;
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            ProtobufCMessage *const *v =
                *(ProtobufCMessage *const *const *)(base + f->offset);
            for (size_t k = 0; k < n; k++)
                if (v[k] != NULL)
                    refs_walk(v[k], fn, arg);
        } else {
            const ProtobufCMessage *sub =
                *(const ProtobufCMessage *const *)(base + f->offset);
            /* a oneof's other members share the offset: only the set one */
            if (sub != NULL && (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                *(const uint32_t *)(base + f->quantifier_offset) != f->id)
                continue;
            if (sub != NULL)
                refs_walk(sub, fn, arg);
        }
    }
}

/* The name a column reference gives (its last field), or NULL. */
static const char *ref_name(const PgQuery__ColumnRef *cr)
{
    return cr->n_fields > 0 ? sql_node_string(cr->fields[cr->n_fields - 1])
                            : NULL;
}

/* What a rewrite does to a check's column references: each old column's
 * new name (NULL: dropped). */
typedef struct rename_ctx {
    const sql_table *old;
    const char *const *newname;
    bool dropped, nomem;
} rename_ctx;

static void ref_rename(PgQuery__ColumnRef *cr, void *arg)
{
    rename_ctx *x = arg;
    const char *name = ref_name(cr);

    for (uint16_t c = 0; name != NULL && c < x->old->info.ncols; c++)
        if (strcmp(x->old->cols[c].name, name) == 0) {
            PgQuery__String *str = cr->fields[cr->n_fields - 1]->string;
            char *copy;
            if (x->newname[c] == NULL) {
                x->dropped = true;
            } else if ((copy = strdup(x->newname[c])) == NULL) {
                x->nomem = true;
            } else {
                /* the tree is freed as unpacked: its strings malloc's */
                free(str->sval);
                str->sval = copy;
            }
            return;
        }
}

keel_status sql_checks_carry(sql_session *s, const sql_table *old,
                             const char *const *newname, sql_check_def **out,
                             uint16_t *nout)
{
    sql_check_row *rows;
    uint16_t n, k = 0;
    sql_check_def *defs;
    keel_status rc = sql_checks_read(s, old->info.oid, &rows, &n);

    *out = NULL;
    *nout = 0;
    if (rc != KEEL_OK || n == 0)
        return rc;
    defs = sql_alloc(&s->arena, n * sizeof(*defs));
    if (defs == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        PgQuery__ParseResult *tree = NULL;
        rename_ctx x = {old, newname, false, false};
        char *src = NULL;
        rc = sql_expr_reparse(s, rows[i].src, (uint32_t)strlen(rows[i].src),
                              &tree);
        if (rc != KEEL_OK)
            break;
        refs_walk(&tree->base, ref_rename, &x);
        if (x.nomem)
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (rc == KEEL_OK && !x.dropped)
            rc = sql_expr_deparse(s, sql_expr_tree_node(tree), &src);
        if (rc == KEEL_OK && !x.dropped) {
            defs[k] = (sql_check_def){.name = rows[i].name,
                                      .oid = rows[i].oid,
                                      .src = sql_strndup(&s->arena, src,
                                                         strlen(src))};
            if (defs[k].src == NULL)
                rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            k++;
        }
        free(src);
        pg_query__parse_result__free_unpacked(tree, NULL);
    }
    *out = defs;
    *nout = k;
    return rc;
}

/* ---- making them ---------------------------------------------------------- */

/* The columns e names: *col the first, *n how many different (2 for
 * any more). */
static void column_refs(const sql_expr *e, uint16_t *col, int *n)
{
    if (e->kind == SQL_EXPR_COLUMN && (*n == 0 || *col != e->u.column)) {
        if (*n == 0)
            *col = e->u.column;
        *n = *n == 0 ? 1 : 2;
    }
    for (uint16_t i = 0; i < e->nargs && *n < 2; i++)
        if (e->args[i] != NULL)
            column_refs(e->args[i], col, n);
}

/* e analysed over t's columns as a check is: boolean, no subquery,
 * aggregate, window or set-returning function. */
static keel_status check_analyse(sql_session *s, const sql_table *t,
                                 const PgQuery__Node *e, sql_expr **out)
{
    sql_scope sc;
    keel_status rc;

    memset(&sc, 0, sizeof(sc));
    sc.table = t->name;
    sc.cols = t->cols;
    sc.ncols = t->info.ncols;
    s->clause = "check constraints";
    rc = sql_expr_prepare(s, &sc, e, out);
    s->clause = NULL;
    if (rc == KEEL_OK && (*out)->type == SQL_TYPE_UNKNOWN)
        rc = sql_expr_coerce(s, out, SQL_TYPE_BOOL);
    if (rc == KEEL_OK && (*out)->type != SQL_TYPE_BOOL)
        rc = sql_fail_at(s, (*out)->location, KEEL_ETYPE, "42804",
                         "argument of CHECK must be type boolean, not type %s",
                         sql_type_name((*out)->type));
    return rc;
}

/* Whether t has a constraint (a check, or an index's name) called name. */
static bool name_taken(const sql_table *t, const keel_index_info *idx,
                       uint16_t nidx, const sql_check_def *defs, uint16_t n,
                       const char *name)
{
    for (uint16_t i = 0; i < nidx; i++)
        if (strcmp(idx[i].name, name) == 0)
            return true;
    for (uint16_t i = 0; i < n; i++)
        if (defs[i].name != NULL && strcmp(defs[i].name, name) == 0)
            return true;
    (void)t;
    return false;
}

keel_status sql_checks_define(sql_session *s, const char *schema,
                              const char *table, const char *relname,
                              sql_check_def *defs, uint16_t n)
{
    sql_table t;
    keel_index_info *idx = NULL;
    uint16_t nidx = 0;
    keel_status rc;

    if (n == 0)
        return KEEL_OK;
    memset(&t, 0, sizeof(t));
    t.schema = schema;
    t.name = t.alias = relname;
    rc = keel_table_describe(s->ks, schema, table, &t.info, NULL, 0);
    if (rc == KEEL_OK) {
        t.cols = sql_alloc(&s->arena, (t.info.ncols + 1u) * sizeof(*t.cols));
        idx = sql_alloc(&s->arena, (t.info.nindexes + 1u) * sizeof(*idx));
        if (t.cols == NULL || idx == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = keel_table_describe(s->ks, schema, table, &t.info, t.cols,
                                 t.info.ncols);
    }
    if (rc == KEEL_OK && t.info.nindexes > 0)
        rc = keel_table_indexes(s->ks, schema, table, idx, t.info.nindexes,
                                &nidx);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    /* named ones first: a name made up must not take one given */
    for (int pass = 0; pass < 2; pass++)
        for (uint16_t i = 0; i < n; i++) {
            sql_check_def *d = &defs[i];
            sql_expr *e = NULL;
            char *src = NULL;
            if ((d->name == NULL || d->made) != (pass == 1))
                continue;
            if (d->src == NULL) {
                rc = check_analyse(s, &t, d->expr, &e);
                if (rc == KEEL_OK)
                    rc = sql_expr_deparse(s, d->expr, &src);
            } else {
                /* its positions are not the statement's */
                PgQuery__ParseResult *tree = NULL;
                const char *text = s->text;
                rc = sql_expr_reparse(s, d->src, (uint32_t)strlen(d->src),
                                      &tree);
                s->text = NULL;
                if (rc == KEEL_OK)
                    rc = check_analyse(s, &t, sql_expr_tree_node(tree), &e);
                s->text = text;
                if (tree != NULL)
                    pg_query__parse_result__free_unpacked(tree, NULL);
                src = rc == KEEL_OK ? strdup(d->src) : NULL;
                if (rc == KEEL_OK && src == NULL)
                    rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            }
            if (rc == KEEL_OK && d->name == NULL) {
                /* PostgreSQL's: <table>_<column>_check when the check
                 * names one column only, else <table>_check; a number
                 * after it until no constraint of the table has it */
                char base[KEEL_NAME_LEN], *name;
                uint16_t col = 0;
                int cols = 0;
                bool one;
                column_refs(e, &col, &cols);
                one = cols == 1;
                name = sql_alloc(&s->arena, KEEL_NAME_LEN + 24);
                if (name == NULL)
                    rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
                if (one)
                    snprintf(base, sizeof(base), "%.28s_%.28s", relname,
                             t.cols[col].name);
                else
                    snprintf(base, sizeof(base), "%.57s", relname);
                for (unsigned k = 0; rc == KEEL_OK; k++) {
                    if (k == 0)
                        snprintf(name, KEEL_NAME_LEN + 24, "%s_check", base);
                    else
                        snprintf(name, KEEL_NAME_LEN + 24, "%s_check%u", base, k);
                    if (!name_taken(&t, idx, nidx, defs, n, name))
                        break;
                }
                d->name = name;
                d->made = true;
            } else if (rc == KEEL_OK && pass == 0) {
                /* PostgreSQL's words; an index's name it lets be */
                for (uint16_t j = 0; j < i; j++)
                    if (defs[j].name != NULL && !defs[j].made &&
                        strcmp(defs[j].name, d->name) == 0)
                        rc = sql_fail(s, KEEL_EINVAL, "42710",
                                      "check constraint \"%s\" already exists",
                                      d->name);
            }
            if (rc == KEEL_OK && d->oid == 0) {
                rc = keel_oid_new(s->ks, &d->oid);
                if (rc != KEEL_OK)
                    rc = sql_fail_engine(s, rc);
            }
            if (rc == KEEL_OK)
                rc = row_put(s, t.info.oid, d->name, d->oid, src);
            free(src);
            if (rc != KEEL_OK)
                return rc;
        }
    return KEEL_OK;
}

/* ---- running them ----------------------------------------------------------- */

keel_status sql_checks_prepare(sql_session *s, sql_table *t,
                               const sql_defaults *d)
{
    uint16_t n = sql_defaults_nchecks(d);
    keel_status rc = KEEL_OK;

    t->nchecks = 0;
    if (n == 0)
        return KEEL_OK;
    t->checks = sql_alloc(&s->arena, n * sizeof(*t->checks));
    t->check_names = sql_alloc(&s->arena, n * sizeof(*t->check_names));
    if (t->checks == NULL || t->check_names == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    {
        const char *text = s->text; /* the trees' positions are their own */
        s->text = NULL;
        for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
            rc = check_analyse(s, t,
                               sql_defaults_check(d, i, &t->check_names[i]),
                               &t->checks[i]);
            t->nchecks = (uint16_t)(i + 1);
        }
        s->text = text;
    }
    return rc;
}

keel_status sql_checks_run(sql_session *s, const sql_table *t,
                           const sql_value *row)
{
    for (uint16_t i = 0; i < t->nchecks; i++) {
        sql_value v;
        keel_status rc = sql_expr_eval(s, t->checks[i], row, &v);
        if (rc != KEEL_OK)
            return rc;
        if (v.isnull || v.v.b)
            continue;
        sql_fail(s, KEEL_EINVAL, "23514",
                 "new row for relation \"%s\" violates check constraint "
                 "\"%s\"",
                 t->name, t->check_names[i]);
        if (s->err != NULL)
            sql_failing_row(s, t, row, s->err->detail,
                            sizeof(s->err->detail));
        return KEEL_EINVAL;
    }
    return KEEL_OK;
}

/* ---- pg_get_constraintdef() ------------------------------------------------ */

keel_status sql_check_def_text(sql_session *s, uint32_t oid, bool pretty,
                               sql_value *out, bool *found)
{
    sql_check_row *rows;
    uint16_t n;
    keel_status rc = sql_checks_read(s, 0, &rows, &n);

    *found = false;
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        size_t len;
        char *p;
        if (rows[i].oid != oid)
            continue;
        /* PostgreSQL's plain form puts the expression in parentheses of
         * its own, its pretty form does not */
        len = strlen(rows[i].src) + (pretty ? 8 : 10);
        p = sql_alloc(&s->arena, len + 1);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        snprintf(p, len + 1, pretty ? "CHECK (%s)" : "CHECK ((%s))",
                 rows[i].src);
        out->isnull = false;
        out->type = SQL_TYPE_TEXT;
        out->v.s.p = p;
        out->v.s.len = (uint32_t)strlen(p);
        *found = true;
        break;
    }
    return rc;
}
