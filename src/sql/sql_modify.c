/*
 * sql_modify.c: INSERT, UPDATE and DELETE.
 *
 * INSERT ... VALUES evaluates each row's expressions, casts them to their
 * columns' types as an assignment does (a quoted literal to any type, an
 * integer to a wider or, in range, a narrower one, char(n) padded), and
 * inserts the rows one by one.  INSERT ... SELECT reads the query's rows
 * first, then assigns and inserts them the same way.
 *
 * ON CONFLICT: a row the engine refuses for its key (KEEL_EUNIQUE, which
 * it answers only once the row holding the key is committed or the
 * statement's own: it waits for a running inserter or deleter) is skipped
 * (DO NOTHING), or the row holding the key is updated as an UPDATE would
 * (DO UPDATE: found by the target index's columns, its SET and WHERE over
 * the row and EXCLUDED, the row proposed), read committed's rules for a
 * row changed meanwhile included.  A row holding the key that the
 * statement's snapshot cannot see (committed after it) is updated after a
 * new snapshot under read committed, and is 40001 under repeatable read,
 * as in PostgreSQL; so is a row the command inserted or updated itself
 * (21000), which it cannot see either.
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
#include <xxhash.h>

#include "sql/sql_internal.h"

/* Casts v to column c's type, as an assignment; location, the value's
 * expression, is shown for a literal's bad text and for a type that has
 * no assignment cast (errors PostgreSQL finds at analysis), not for a
 * value's own failure at run time. */
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
    rc = sql_value_cast(s, v, type, sql_column_typmod(c), false,
                        v->type == SQL_TYPE_UNKNOWN ? location : -1);
    if (rc == KEEL_ETYPE && s->err != NULL) {
        /* Name the column, as PostgreSQL does. */
        if (location >= 0 && s->text != NULL)
            s->err->position = (uint32_t)sql_parse_location(s, location) + 1;
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

void sql_failing_row(sql_session *s, const sql_table *t, const sql_value *row,
                     char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "Failing row contains (");

    for (uint16_t i = 0; i < t->info.ncols && used < size; i++) {
        const char *p = "null";
        uint32_t len = 4;
        if (!row[i].isnull && sql_value_text(s, &row[i], &p, &len) != KEEL_OK)
            break;
        used += (size_t)snprintf(buf + used, size - used, "%s%.*s",
                                 i > 0 ? ", " : "", (int)len, p);
    }
    if (used < size)
        snprintf(buf + used, size - used, ").");
}

/* A not-null column that row leaves null fails, as PostgreSQL's check
 * does, showing the row: "Failing row contains (1, null, ...)"; then
 * the table's CHECK constraints (sql_checks_prepare() made them). */
static keel_status check_not_null(sql_session *s, const sql_table *t,
                                  const sql_value *row)
{
    char detail[256];

    for (uint16_t c = 0; c < t->info.ncols; c++) {
        if (!row[c].isnull || !t->cols[c].notnull)
            continue;
        sql_failing_row(s, t, row, detail, sizeof(detail));
        sql_fail(s, KEEL_ETYPE, "23502",
                 "null value in column \"%s\" of relation \"%s\" violates "
                 "not-null constraint",
                 t->cols[c].name, t->name);
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail), "%s", detail);
        return KEEL_ETYPE;
    }
    return sql_checks_run(s, t, row);
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

/*
 * An UPDATE's SET list (and ON CONFLICT DO UPDATE's) over scope: per
 * column of t, into set (zeroed here; NULL keeps the column), the value's
 * expression; DEFAULT is the column's default, or NULL without one.
 */
static keel_status set_analyse(sql_session *s, const sql_table *t,
                               const sql_scope *scope, const sql_defaults *defs,
                               PgQuery__Node **targets, size_t n,
                               sql_expr **set)
{
    keel_status rc;

    memset(set, 0, (t->info.ncols + 1u) * sizeof(*set));
    for (size_t i = 0; i < n; i++) {
        const PgQuery__ResTarget *rt = targets[i]->res_target;
        const PgQuery__Node *val = rt->val;
        uint16_t c;
        if (rt->n_indirection > 0)
            return sql_unsupported(s, rt->location,
                                   "assignment to a part of a column");
        if (val != NULL &&
            val->node_case == PG_QUERY__NODE__NODE_MULTI_ASSIGN_REF) {
            /* SET (a, b) = (x, y): a's value is the row's first */
            const PgQuery__MultiAssignRef *m = val->multi_assign_ref;
            const PgQuery__Node *src = m->source;
            if (src != NULL && src->node_case == PG_QUERY__NODE__NODE_ROW_EXPR) {
                if (src->row_expr->n_args != (size_t)m->ncolumns)
                    return sql_fail_at(s, src->row_expr->location, KEEL_EINVAL,
                                       "42601",
                                       "number of columns does not match "
                                       "number of values");
                val = src->row_expr->args[m->colno - 1];
            } else if (src != NULL &&
                       src->node_case != PG_QUERY__NODE__NODE_SUB_LINK &&
                       m->ncolumns == 1) {
                val = src;
            } else {
                return sql_unsupported(s, rt->location,
                                       "SET (a, b) = (SELECT ...)");
            }
        }
        rc = column_index(s, t, rt->name, rt->location, &c);
        if (rc != KEEL_OK)
            return rc;
        if (set[c] != NULL)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "multiple assignments to same column \"%s\"",
                            rt->name);
        if (val != NULL &&
            val->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT &&
            sql_default_has(defs, c)) {
            /* Its expression, evaluated for every row. */
            rc = sql_default_expr(s, defs, c, &set[c]);
        } else if (val != NULL &&
                   val->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT) {
            sql_expr *e = sql_alloc(&s->arena, sizeof(*e));
            if (e == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            memset(e, 0, sizeof(*e));
            e->kind = SQL_EXPR_CONST;
            e->type = SQL_TYPE_UNKNOWN;
            e->u.value.isnull = true;
            e->location = rt->location;
            set[c] = e;
            rc = KEEL_OK;
        } else if (sql_default_identity(defs, c) == 'a') {
            rc = sql_fail(s, KEEL_EINVAL, "428C9",
                             "column \"%s\" can only be updated to DEFAULT",
                             rt->name);
            if (s->err != NULL)
                snprintf(s->err->detail, sizeof(s->err->detail),
                         "Column \"%s\" is an identity column defined as "
                         "GENERATED ALWAYS.",
                         rt->name);
        } else {
            s->clause = "UPDATE";
            rc = sql_expr_prepare_for(s, scope, val,
                                      sql_type_of_keel(t->cols[c].type),
                                      &set[c]);
            s->clause = NULL;
        }
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

/* ---- ON CONFLICT ---------------------------------------------------- */

/* The keys a DO UPDATE command inserted or updated (their target index's
 * columns as text), which it must not meet again: a hash set. */
typedef struct key_set {
    uint64_t *hash;
    char **key;
    uint32_t *len;
    uint32_t n, cap; /* cap: a power of two, 0 before the first */
} key_set;

static void key_set_free(key_set *ks)
{
    for (uint32_t i = 0; i < ks->cap; i++)
        free(ks->key[i]);
    free(ks->hash);
    free(ks->key);
    free(ks->len);
    memset(ks, 0, sizeof(*ks));
}

static bool key_set_has(const key_set *ks, const char *k, uint32_t len,
                        uint64_t h)
{
    for (uint32_t i = ks->cap ? (uint32_t)h & (ks->cap - 1) : 0;
         ks->cap && ks->key[i] != NULL; i = (i + 1) & (ks->cap - 1))
        if (ks->hash[i] == h && ks->len[i] == len &&
            memcmp(ks->key[i], k, len) == 0)
            return true;
    return false;
}

static bool key_set_put(key_set *ks, const char *k, uint32_t len, uint64_t h)
{
    uint32_t i;
    char *copy;

    if (key_set_has(ks, k, len, h))
        return true;
    if (2 * (ks->n + 1) > ks->cap) {
        key_set big = {0};
        big.cap = ks->cap ? 2 * ks->cap : 64;
        big.hash = calloc(big.cap, sizeof(*big.hash));
        big.key = calloc(big.cap, sizeof(*big.key));
        big.len = calloc(big.cap, sizeof(*big.len));
        if (big.hash == NULL || big.key == NULL || big.len == NULL) {
            key_set_free(&big);
            return false;
        }
        for (uint32_t j = 0; j < ks->cap; j++) {
            if (ks->key[j] == NULL)
                continue;
            for (i = (uint32_t)ks->hash[j] & (big.cap - 1); big.key[i] != NULL;
                 i = (i + 1) & (big.cap - 1))
                ;
            big.hash[i] = ks->hash[j];
            big.key[i] = ks->key[j];
            big.len[i] = ks->len[j];
            ks->key[j] = NULL;
        }
        big.n = ks->n;
        key_set_free(ks);
        *ks = big;
    }
    if ((copy = malloc(len ? len : 1)) == NULL)
        return false;
    memcpy(copy, k, len);
    for (i = (uint32_t)h & (ks->cap - 1); ks->key[i] != NULL;
         i = (i + 1) & (ks->cap - 1))
        ;
    ks->hash[i] = h;
    ks->key[i] = copy;
    ks->len[i] = len;
    ks->n++;
    return true;
}

/* INSERT's ON CONFLICT, analysed. */
typedef struct conflict {
    bool update;               /* DO UPDATE, else DO NOTHING */
    bool any;                  /* no target: a conflict on any index */
    char index[KEEL_NAME_LEN]; /* else the target's index */
    uint16_t nkeys;
    uint16_t keys[16];  /* its columns, 0-based */
    sql_expr **set;     /* DO UPDATE: per column, NULL keeps it */
    sql_expr *where;    /* DO UPDATE ... WHERE, or NULL */
    sql_expr *match;    /* the target's columns = consts[k]'s values */
    sql_expr **consts;
    sql_value *both;    /* the row met, then EXCLUDED: the proposed row */
    sql_value *newrow, *erow;
    keel_value *kk, *ekv, *kv;
    key_set seen;       /* the keys the command inserted or updated */
    char *kbuf;         /* key text */
    uint32_t kcap;
} conflict;

/* Row's key in cf's target index, as text (cf->kbuf, *len), and its
 * hash.  False if out of memory. */
static bool conflict_key(sql_session *s, conflict *cf, const sql_value *row,
                         uint32_t *len, uint64_t *h)
{
    uint32_t used = 0;

    for (uint16_t k = 0; k < cf->nkeys; k++) {
        const sql_value *v = &row[cf->keys[k]];
        const char *p = "";
        uint32_t n = 0;
        int32_t mark = -1;
        if (!v->isnull && sql_value_text(s, v, &p, &n) != KEEL_OK)
            return false;
        if (!v->isnull)
            mark = (int32_t)n;
        if (used + n + 4 > cf->kcap) {
            uint32_t cap = (used + n + 4) * 2;
            char *b = realloc(cf->kbuf, cap);
            if (b == NULL)
                return false;
            cf->kbuf = b;
            cf->kcap = cap;
        }
        memcpy(cf->kbuf + used, &mark, 4);
        memcpy(cf->kbuf + used + 4, p, n);
        used += n + 4;
    }
    *len = used;
    *h = XXH3_64bits(cf->kbuf, used);
    return true;
}

/* Notes that the command inserted or updated row (DO UPDATE only). */
static keel_status conflict_seen(sql_session *s, conflict *cf,
                                 const sql_value *row)
{
    uint32_t len;
    uint64_t h;

    if (cf == NULL || !cf->update)
        return KEEL_OK;
    if (!conflict_key(s, cf, row, &len, &h) ||
        !key_set_put(&cf->seen, cf->kbuf, len, h))
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    return KEEL_OK;
}

/*
 * Analyses st's ON CONFLICT clause oc for table t into *cf: the target
 * (an index whose columns are exactly those named, in any order, or the
 * one named by ON CONSTRAINT), and DO UPDATE's SET and WHERE over the
 * row met (t's name or alias) and EXCLUDED side by side.
 */
static keel_status conflict_analyse(sql_session *s, sql_table *t,
                                    const sql_defaults *defs,
                                    const PgQuery__OnConflictClause *oc,
                                    conflict *cf)
{
    const PgQuery__InferClause *in = oc->infer;
    keel_index_info ix[64];
    uint16_t nix = 0, n = t->info.ncols;
    keel_column_info *cols;
    const char **col_table, **tables;
    sql_scope scope;
    sql_expr *and = NULL;
    keel_status rc;

    memset(cf, 0, sizeof(*cf));
    cf->update = oc->action == PG_QUERY__ON_CONFLICT_ACTION__ONCONFLICT_UPDATE;
    if (in == NULL) {
        if (cf->update) {
            rc = sql_fail_at(s, oc->location, KEEL_EINVAL, "42601",
                             "ON CONFLICT DO UPDATE requires inference "
                             "specification or constraint name");
            if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "For example, ON CONFLICT (column_name).");
            return rc;
        }
        cf->any = true;
        return KEEL_OK;
    }
    if (in->where_clause != NULL)
        return sql_unsupported(s, in->location,
                               "ON CONFLICT with a partial index's WHERE");
    rc = keel_table_indexes(s->ks, t->schema, t->name, ix,
                            (uint16_t)(sizeof(ix) / sizeof(ix[0])), &nix);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (nix > sizeof(ix) / sizeof(ix[0]))
        nix = (uint16_t)(sizeof(ix) / sizeof(ix[0]));
    for (uint16_t i = 0; i < nix && cf->index[0] == '\0'; i++) {
        bool fits = ix[i].unique;
        if (in->conname != NULL && in->conname[0] != '\0') {
            /* A constraint: the primary key is keel's one (a unique index
             * is none, as in PostgreSQL). */
            if (!ix[i].primary || strcmp(ix[i].name, in->conname) != 0)
                continue;
        } else {
            fits = fits && ix[i].nkeys == in->n_index_elems;
            for (size_t e = 0; fits && e < in->n_index_elems; e++) {
                const PgQuery__IndexElem *ie =
                    in->index_elems[e]->node_case ==
                            PG_QUERY__NODE__NODE_INDEX_ELEM
                        ? in->index_elems[e]->index_elem
                        : NULL;
                bool has = false;
                if (ie == NULL || ie->name == NULL || ie->name[0] == '\0')
                    return sql_unsupported(s, in->location,
                                           "ON CONFLICT on an expression");
                for (uint16_t k = 0; k < ix[i].nkeys; k++)
                    has = has || strcmp(t->cols[ix[i].keys[k] - 1].name,
                                        ie->name) == 0;
                fits = has;
            }
            if (!fits)
                continue;
        }
        snprintf(cf->index, sizeof(cf->index), "%s", ix[i].name);
        cf->nkeys = ix[i].nkeys;
        for (uint16_t k = 0; k < ix[i].nkeys; k++)
            cf->keys[k] = (uint16_t)(ix[i].keys[k] - 1);
    }
    if (cf->index[0] == '\0') {
        if (in->conname != NULL && in->conname[0] != '\0')
            return sql_fail(s, KEEL_ENOENT, "42704",
                            "constraint \"%s\" for table \"%s\" does not "
                            "exist",
                            in->conname, t->name);
        return sql_fail(s, KEEL_EINVAL, "42P10",
                        "there is no unique or exclusion constraint "
                        "matching the ON CONFLICT specification");
    }
    if (!cf->update)
        return KEEL_OK;

    /* The row met and EXCLUDED, side by side. */
    cols = sql_alloc(&s->arena, 2u * n * sizeof(*cols));
    col_table = sql_alloc(&s->arena, 2u * n * sizeof(*col_table));
    tables = sql_alloc(&s->arena, 2 * sizeof(*tables));
    cf->set = sql_alloc(&s->arena, (n + 1u) * sizeof(*cf->set));
    cf->both = sql_alloc(&s->arena, 2u * n * sizeof(*cf->both));
    cf->newrow = sql_alloc(&s->arena, (n + 1u) * sizeof(*cf->newrow));
    cf->erow = sql_alloc(&s->arena, (n + 1u) * sizeof(*cf->erow));
    cf->kk = sql_alloc(&s->arena, 17 * sizeof(*cf->kk));
    cf->ekv = sql_alloc(&s->arena, (n + 1u) * sizeof(*cf->ekv));
    cf->kv = sql_alloc(&s->arena, (n + 1u) * sizeof(*cf->kv));
    cf->consts = sql_alloc(&s->arena, cf->nkeys * sizeof(*cf->consts));
    if (cols == NULL || col_table == NULL || tables == NULL ||
        cf->set == NULL || cf->both == NULL || cf->newrow == NULL ||
        cf->erow == NULL || cf->kk == NULL || cf->ekv == NULL ||
        cf->kv == NULL || cf->consts == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(cols, t->cols, n * sizeof(*cols));
    memcpy(cols + n, t->cols, n * sizeof(*cols));
    for (uint16_t c = 0; c < n; c++) {
        col_table[c] = t->alias;
        col_table[n + c] = "excluded";
    }
    tables[0] = t->alias;
    tables[1] = "excluded";
    scope = (sql_scope){.table = t->alias,
                        .cols = cols,
                        .ncols = (uint16_t)(2 * n),
                        .col_table = col_table,
                        .tables = tables,
                        .ntables = 2};
    rc = set_analyse(s, t, &scope, defs, oc->target_list, oc->n_target_list,
                     cf->set);
    if (rc != KEEL_OK)
        return rc;
    for (uint16_t c = 0; c < n; c++)
        if (cf->set[c] != NULL && sql_expr_reads_engine(cf->set[c]))
            return sql_unsupported(s, cf->set[c]->location,
                                   "reading the catalogs in ON CONFLICT's SET");
    if (oc->where_clause != NULL) {
        rc = sql_expr_prepare(s, &scope, oc->where_clause, &cf->where);
        if (rc == KEEL_OK && cf->where->type != SQL_TYPE_BOOL)
            rc = sql_fail_at(s, cf->where->location, KEEL_ETYPE, "42804",
                             "argument of WHERE must be type boolean, not "
                             "type %s",
                             sql_type_name(cf->where->type));
        if (rc == KEEL_OK && sql_expr_reads_engine(cf->where))
            rc = sql_unsupported(s, cf->where->location,
                                 "reading the catalogs in ON CONFLICT's WHERE");
        if (rc != KEEL_OK)
            return rc;
    }
    /* The target's columns = the proposed row's values (set per row). */
    for (uint16_t k = 0; k < cf->nkeys; k++) {
        sql_expr *col = sql_alloc(&s->arena, sizeof(*col));
        sql_expr *val = sql_alloc(&s->arena, sizeof(*val));
        sql_expr *eq = sql_alloc(&s->arena, sizeof(*eq));
        sql_expr **args = sql_alloc(&s->arena, 2 * sizeof(*args));
        if (col == NULL || val == NULL || eq == NULL || args == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memset(col, 0, sizeof(*col));
        memset(val, 0, sizeof(*val));
        memset(eq, 0, sizeof(*eq));
        col->kind = SQL_EXPR_COLUMN;
        col->u.column = cf->keys[k];
        col->type = sql_column_type(&t->cols[cf->keys[k]]);
        col->location = -1;
        val->kind = SQL_EXPR_CONST;
        val->type = col->type;
        val->location = -1;
        eq->kind = SQL_EXPR_OP;
        eq->u.op = SQL_OP_EQ;
        eq->type = SQL_TYPE_BOOL;
        eq->location = -1;
        eq->nargs = 2;
        eq->args = args;
        args[0] = col;
        args[1] = val;
        cf->consts[k] = val;
        if (and == NULL) {
            and = eq;
            continue;
        }
        {
            sql_expr *both = sql_alloc(&s->arena, sizeof(*both));
            sql_expr **two = sql_alloc(&s->arena, 2 * sizeof(*two));
            if (both == NULL || two == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            memset(both, 0, sizeof(*both));
            both->kind = SQL_EXPR_AND;
            both->type = SQL_TYPE_BOOL;
            both->location = -1;
            both->nargs = 2;
            both->args = two;
            two[0] = and;
            two[1] = eq;
            and = both;
        }
    }
    cf->match = and;
    return KEEL_OK;
}

/* The index the engine's unique violation names ("... constraint
 * \"name\": ..."), into name. */
static void violated_index(const char *msg, char *name, size_t size)
{
    const char *p = strchr(msg, '"'), *q = p != NULL ? strchr(p + 1, '"') : NULL;

    name[0] = '\0';
    if (q != NULL && (size_t)(q - p - 1) < size) {
        memcpy(name, p + 1, (size_t)(q - p - 1));
        name[q - p - 1] = '\0';
    }
}

/*
 * DO UPDATE: updates the row holding row's key (the one cf->match finds)
 * as the clause says.  *met: such a row was found and still holds the
 * key; *done: it was updated (not when the WHERE refused).
 */
static keel_status conflict_update(sql_session *s, sql_table *t, conflict *cf,
                                   const sql_value *row, sql_returning *ret,
                                   bool *met, bool *done)
{
    uint16_t n = t->info.ncols;
    sql_scan sc;
    bool found = false;
    write_next next;
    keel_status rc;

    *met = *done = false;
    for (uint16_t k = 0; k < cf->nkeys; k++)
        cf->consts[k]->u.value = row[cf->keys[k]];
    rc = sql_scan_begin(s, &sc, t, cf->match);
    if (rc == KEEL_OK)
        rc = sql_scan_next(s, &sc, &found);
    if (rc == KEEL_OK && found) {
        const sql_value *cur = sc.row;
        *met = true;
    again:
        for (uint16_t c = 0; c < n; c++) {
            cf->both[c] = cur[c];
            cf->both[n + c] = row[c];
        }
        if (cf->where != NULL) {
            sql_value w;
            rc = sql_expr_eval(s, cf->where, cf->both, &w);
            if (rc != KEEL_OK || w.isnull || !w.v.b)
                goto out;
        }
        for (uint16_t c = 0; rc == KEEL_OK && c < n; c++) {
            if (cf->set[c] == NULL) {
                cf->newrow[c] = cur[c];
                continue;
            }
            rc = sql_expr_eval(s, cf->set[c], cf->both, &cf->newrow[c]);
            if (rc == KEEL_OK && !cf->newrow[c].isnull)
                rc = to_column(s, t, &t->cols[c], &cf->newrow[c], -1);
            else if (rc == KEEL_OK)
                cf->newrow[c].type = sql_type_of_keel(t->cols[c].type);
        }
        if (rc == KEEL_OK)
            rc = check_not_null(s, t, cf->newrow);
        if (rc != KEEL_OK)
            goto out;
        for (uint16_t c = 0; c < n; c++)
            sql_value_to_keel(&cf->newrow[c], &cf->kv[c]);
        rc = update_current(s, t, &sc, cur, cf->kk, cf->kv);
        next = write_outcome(s, t, cf->match, cf->ekv, cf->erow, &rc, &cur);
        if (next == WRITE_AGAIN)
            goto again;
        if (next == WRITE_SKIP) {
            *met = false; /* deleted, or its key changed: insert again */
            goto out;
        }
        if (next == WRITE_FAIL)
            goto out;
        *done = true;
        rc = sql_fk_row(s, t, cur, cf->newrow);
        if (rc == KEEL_OK)
            rc = conflict_seen(s, cf, cf->newrow);
        if (rc == KEEL_OK && ret->nt > 0)
            rc = sql_returning_row(s, ret, cf->newrow);
    }
out:
    sql_scan_end(&sc);
    return rc;
}

static keel_status insert_kv(sql_session *s, const sql_table *t,
                             keel_value *kv)
{
    return keel_insert(s->ks, t->schema, t->name, kv);
}

/*
 * Row's insert met a key (KEEL_EUNIQUE, its message in the session):
 * what ON CONFLICT says to do.  *done: a row was inserted or updated.
 */
static keel_status conflict_row(sql_session *s, sql_table *t, conflict *cf,
                                sql_value *row, keel_value *kv,
                                sql_returning *ret, bool *done)
{
    char name[KEEL_NAME_LEN];
    uint32_t len;
    uint64_t h;
    keel_status rc = KEEL_EUNIQUE;

    *done = false;
    for (int tries = 0; tries < 16; tries++) {
        bool met = false;
        violated_index(keel_session_error(s->ks), name, sizeof(name));
        if (!cf->any && strcmp(name, cf->index) != 0)
            return sql_fail_engine(s, KEEL_EUNIQUE);
        if (!cf->update)
            return KEEL_OK;
        if (!conflict_key(s, cf, row, &len, &h))
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (key_set_has(&cf->seen, cf->kbuf, len, h)) {
            rc = sql_fail(s, KEEL_EINVAL, "21000",
                          "ON CONFLICT DO UPDATE command cannot affect row a "
                          "second time");
            if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "Ensure that no rows proposed for insertion within "
                         "the same command have duplicate constrained "
                         "values.");
            return rc;
        }
        rc = conflict_update(s, t, cf, row, ret, &met, done);
        if (rc != KEEL_OK || met)
            return rc;
        /* The row holding the key is one the snapshot cannot see: it
         * committed after it (or has gone since). */
        if (!s->txn_rc)
            break;
        rc = keel_new_snapshot(s->ks);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        rc = insert_kv(s, t, kv);
        if (rc == KEEL_OK) {
            *done = true;
            rc = sql_fk_row(s, t, NULL, row);
            if (rc == KEEL_OK)
                rc = conflict_seen(s, cf, row);
            if (rc == KEEL_OK && ret->nt > 0)
                rc = sql_returning_row(s, ret, row);
            return rc;
        }
        if (rc != KEEL_EUNIQUE)
            return sql_fail_engine(s, rc);
    }
    return sql_fail(s, KEEL_ESERIALIZE, "40001",
                    "could not serialize access due to concurrent update");
}

/* Casts row's values (one per table column, null where none was given)
 * to their columns and inserts it.  loc: per column, the position its
 * errors point at, or -1.  cf: ON CONFLICT's, or NULL; *done: a row was
 * inserted or (DO UPDATE) updated. */
static keel_status insert_row(sql_session *s, sql_table *t, sql_value *row,
                              const int32_t *loc, keel_value *kv,
                              sql_returning *ret, conflict *cf, bool *done)
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
    *done = false;
    rc = insert_kv(s, t, kv);
    if (rc == KEEL_EUNIQUE && cf != NULL) {
        rc = conflict_row(s, t, cf, row, kv, ret, done);
        return rc != KEEL_OK ? rc : sql_check_cancel(s);
    }
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    *done = true;
    rc = sql_fk_row(s, t, NULL, row);
    if (rc == KEEL_OK)
        rc = conflict_seen(s, cf, row);
    if (rc != KEEL_OK)
        return rc;
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
                                 sql_table *t, const sql_defaults *defs,
                                 const uint16_t *map, uint16_t nmap,
                                 sql_value *row, int32_t *loc, keel_value *kv,
                                 sql_returning *ret, conflict *cf)
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
        bool done = false;
        if (rc == KEEL_OK)
            rc = insert_row(s, t, row, loc, kv, ret, cf, &done);
        if (rc == KEEL_OK && done)
            n++;
        sql_arena_restore(&s->arena, m);
    }
    free(b.rows);
    if (rc != KEEL_OK || s->describe_only)
        return rc;
    return sql_complete_count(s, "INSERT 0", n);
}

static keel_status exec_insert(sql_session *s, const PgQuery__InsertStmt *st,
                               conflict *cf)
{
    const sql_defaults *defs;
    conflict *cfp = NULL;
    sql_returning ret;
    sql_table t;
    const PgQuery__SelectStmt *sel;
    uint16_t *map, nmap;
    sql_value *row;
    int32_t *loc;
    keel_value *kv;
    uint64_t n = 0;
    keel_status rc;

    if (st->with_clause != NULL) {
        /* WITH ... INSERT: its queries in scope for the INSERT's */
        PgQuery__InsertStmt inner = *st;
        sql_with_saved sv;
        inner.with_clause = NULL;
        rc = sql_with_push(s, st->with_clause, &sv);
        if (rc == KEEL_OK)
            rc = sql_exec_insert(s, &inner);
        sql_with_pop(s, &sv);
        return rc;
    }
    if (st->select_stmt != NULL &&
        st->select_stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return sql_unsupported(s, -1, "INSERT from this kind of query");
    sel = st->select_stmt != NULL ? st->select_stmt->select_stmt : NULL;
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
    if (rc == KEEL_OK)
        rc = sql_checks_prepare(s, &t, defs);
    if (rc == KEEL_OK && st->on_conflict_clause != NULL) {
        rc = conflict_analyse(s, &t, defs, st->on_conflict_clause, cf);
        cfp = cf;
    }
    /* identity columns: a value for one GENERATED ALWAYS only with
     * OVERRIDING SYSTEM VALUE; OVERRIDING USER VALUE takes none */
    for (uint16_t i = 0; rc == KEEL_OK && sel != NULL && i < nmap; i++) {
        char kind = sql_default_identity(defs, map[i]);
        bool given = sel->n_values_lists == 0;
        for (size_t r = 0; !given && r < sel->n_values_lists; r++) {
            const PgQuery__List *vl = sel->values_lists[r]->list;
            given = i < vl->n_items && vl->items[i]->node_case !=
                                           PG_QUERY__NODE__NODE_SET_TO_DEFAULT;
        }
        if (kind == 0 || !given)
            continue;
        if (st->override == PG_QUERY__OVERRIDING_KIND__OVERRIDING_USER_VALUE &&
            sel->n_values_lists == 0)
            rc = sql_unsupported(s, -1,
                                 "OVERRIDING USER VALUE with a query");
        else if (kind == 'a' &&
                 st->override !=
                     PG_QUERY__OVERRIDING_KIND__OVERRIDING_SYSTEM_VALUE &&
                 st->override !=
                     PG_QUERY__OVERRIDING_KIND__OVERRIDING_USER_VALUE) {
            rc = sql_fail(s, KEEL_EINVAL, "428C9",
                          "cannot insert a non-DEFAULT value into column "
                          "\"%s\"",
                          t.cols[map[i]].name);
            if (s->err != NULL) {
                snprintf(s->err->detail, sizeof(s->err->detail),
                         "Column \"%s\" is an identity column defined as "
                         "GENERATED ALWAYS.",
                         t.cols[map[i]].name);
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "Use OVERRIDING SYSTEM VALUE to override.");
            }
        }
    }
    if (rc != KEEL_OK)
        return rc;
    if (sel == NULL) {
        /* DEFAULT VALUES: every column its default (or null). */
        bool done = false;
        if (s->explain != NULL) {
            sql_explain_node(s->explain, 0, "Insert on %s", t.name);
            sql_explain_node(s->explain, 1, "Result");
        }
        if (s->describe_only)
            return KEEL_OK;
        rc = row_defaults(s, defs, &t, map, 0, row, loc);
        if (rc == KEEL_OK)
            rc = insert_row(s, &t, row, loc, kv, &ret, cfp, &done);
        return rc != KEEL_OK ? rc
                             : sql_complete_count(s, "INSERT 0", done ? 1 : 0);
    }
    if (sel->n_values_lists == 0) {
        if (s->explain != NULL)
            sql_explain_node(s->explain, 0, "Insert on %s", t.name);
        return insert_select(s, st, &t, defs, map, nmap, row, loc, kv, &ret,
                             cfp);
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
                s->clause = "VALUES";
                rc = sql_expr_prepare_for(s, NULL, vl->items[i],
                                          sql_type_of_keel(c->type), &e);
                s->clause = NULL;
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
            if (node->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT ||
                (st->override ==
                     PG_QUERY__OVERRIDING_KIND__OVERRIDING_USER_VALUE &&
                 sql_default_identity(defs, map[i]) != 0)) {
                rc = sql_default_eval(s, defs, map[i], &row[map[i]]);
                if (rc != KEEL_OK)
                    return rc;
                continue;
            }
            s->clause = "VALUES";
            rc = sql_expr_prepare_for(s, NULL, node,
                                      sql_type_of_keel(t.cols[map[i]].type), &e);
            s->clause = NULL;
            if (rc == KEEL_OK)
                rc = sql_expr_eval(s, e, NULL, &row[map[i]]);
            if (rc != KEEL_OK)
                return rc;
            loc[map[i]] = e->location;
        }
        {
            bool done = false;
            rc = insert_row(s, &t, row, loc, kv, &ret, cfp, &done);
            if (rc != KEEL_OK)
                return rc;
            n += done;
        }
    }
    return sql_complete_count(s, "INSERT 0", n);
}

keel_status sql_exec_insert(sql_session *s, const PgQuery__InsertStmt *st)
{
    conflict cf;
    keel_status rc;

    sql_fk_queue q;

    memset(&cf, 0, sizeof(cf));
    rc = sql_fk_stmt_begin(s, &q);
    if (rc == KEEL_OK)
        rc = exec_insert(s, st, &cf);
    rc = sql_fk_stmt_end(s, &q, rc);
    key_set_free(&cf.seen);
    free(cf.kbuf);
    return rc;
}

/* Analyses WHERE against the table (NULL for none). */
static keel_status where_analyse(sql_session *s, const sql_scope *scope,
                                 const PgQuery__Node *n, sql_expr **out)
{
    keel_status rc;

    *out = NULL;
    if (n == NULL)
        return KEEL_OK;
    s->clause = "WHERE";
    rc = sql_expr_prepare(s, scope, n, out);
    s->clause = NULL;
    if (rc == KEEL_OK && (*out)->type != SQL_TYPE_BOOL)
        rc = sql_fail_at(s, (*out)->location, KEEL_ETYPE, "42804",
                         "argument of WHERE must be type boolean, not type %s",
                         sql_type_name((*out)->type));
    return rc;
}


/* ---- UPDATE ... FROM and DELETE ... USING --------------------------- */

/*
 * The rows of t (named as rv names it) joined with the other items,
 * selected by where: the query SELECT * FROM rv, items WHERE where, read
 * whole into *rs before anything changes (as INSERT ... SELECT reads its
 * query), t's columns first.
 */
static keel_status join_rows(sql_session *s, PgQuery__RangeVar *rv,
                             PgQuery__Node **items, size_t nitems,
                             PgQuery__Node *where, sql_rowset *rs)
{
    PgQuery__Node **from = sql_alloc(&s->arena, (nitems + 1) * sizeof(*from));
    PgQuery__Node *rvn = sql_alloc(&s->arena, sizeof(*rvn));
    const PgQuery__SelectStmt *star;
    PgQuery__SelectStmt *sel;
    sql_explain *x = s->explain;
    keel_status rc;

    if (from == NULL || rvn == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    *rvn = (PgQuery__Node)PG_QUERY__NODE__INIT;
    rvn->node_case = PG_QUERY__NODE__NODE_RANGE_VAR;
    rvn->range_var = rv;
    rc = sql_star_select(s, rvn, &star);
    if (rc != KEEL_OK)
        return rc;
    from[0] = rvn;
    if (nitems > 0)
        memcpy(from + 1, items, nitems * sizeof(*from));
    sel = (PgQuery__SelectStmt *)star; /* the arena's, built just now */
    sel->n_from_clause = nitems + 1;
    sel->from_clause = from;
    sel->where_clause = where;
    s->explain = NULL;
    rc = sql_select_rows(s, sel, NULL, NULL, s->describe_only, rs);
    s->explain = x;
    return rc;
}

/* The scope of a joined row: its columns named by their tables. */
static keel_status join_scope(sql_session *s, const sql_rowset *rs,
                              sql_scope *scope)
{
    const char **tables = sql_alloc(&s->arena, (rs->ncols + 1u) * sizeof(*tables));
    uint16_t nt = 0;

    if (tables == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t c = 0; c < rs->ncols; c++) {
        bool seen = false;
        if (rs->col_table == NULL || rs->col_table[c] == NULL)
            continue;
        for (uint16_t k = 0; k < nt && !seen; k++)
            seen = strcmp(tables[k], rs->col_table[c]) == 0;
        if (!seen)
            tables[nt++] = rs->col_table[c];
    }
    *scope = (sql_scope){.table = nt > 0 ? tables[0] : "",
                         .cols = rs->cols,
                         .ncols = rs->ncols,
                         .col_table = rs->col_table,
                         .tables = tables,
                         .ntables = nt,
                         .types = rs->types};
    return KEEL_OK;
}

/* A target row's primary key as text, for a set of those changed. */
static keel_status pk_text(sql_session *s, const sql_table *t,
                           const sql_value *row, char **buf, uint32_t *cap,
                           uint32_t *len, uint64_t *h)
{
    uint32_t used = 0;

    for (uint16_t k = 0; k < t->info.npkey; k++) {
        const sql_value *v = &row[t->info.pkey[k] - 1];
        const char *p = "";
        uint32_t n = 0;
        if (!v->isnull && sql_value_text(s, v, &p, &n) != KEEL_OK)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (used + n + 4 > *cap) {
            uint32_t nc = (used + n + 4) * 2;
            char *b = realloc(*buf, nc);
            if (b == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            *buf = b;
            *cap = nc;
        }
        memcpy(*buf + used, &n, 4);
        memcpy(*buf + used + 4, p, n);
        used += n + 4;
    }
    *len = used;
    *h = XXH3_64bits(*buf, used);
    return KEEL_OK;
}

/*
 * UPDATE t SET ... FROM items WHERE ... (set: NULL) or DELETE FROM t
 * USING items WHERE ...: each row of t the join selects is changed once
 * (the first join row that selects it decides an UPDATE's values, as
 * PostgreSQL leaves which one unspecified), by its primary key.  Under
 * read committed a row changed since the statement's snapshot is 40001:
 * the join is not run again for its newest version.
 */
static keel_status join_modify(sql_session *s, sql_table *t, bool update,
                               PgQuery__RangeVar *rv, PgQuery__Node **items,
                               size_t nitems, PgQuery__Node *where,
                               PgQuery__Node **targets, size_t ntargets,
                               const sql_defaults *defs, sql_returning *ret,
                               PgQuery__Node **returning, size_t nreturning)
{
    sql_rowset rs = {0};
    sql_scope scope;
    sql_expr **set = NULL;
    sql_value *newrow;
    keel_value *kv, *kk;
    key_set done = {0};
    char *kbuf = NULL;
    uint32_t kcap = 0;
    uint64_t n = 0;
    uint16_t nc = t->info.ncols;
    keel_status rc;

    if (t->info.npkey == 0)
        return sql_unsupported(s, rv->location,
                               update ? "UPDATE ... FROM of a table without a "
                                        "primary key"
                                      : "DELETE ... USING of a table without "
                                        "a primary key");
    rc = join_rows(s, rv, items, nitems, where, &rs);
    if (rc == KEEL_OK)
        rc = join_scope(s, &rs, &scope);
    if (rc != KEEL_OK)
        return rc;
    newrow = sql_alloc(&s->arena, (nc + 1u) * sizeof(*newrow));
    kv = sql_alloc(&s->arena, (nc + 1u) * sizeof(*kv));
    kk = sql_alloc(&s->arena, 17 * sizeof(*kk));
    set = sql_alloc(&s->arena, (nc + 1u) * sizeof(*set));
    if (newrow == NULL || kv == NULL || kk == NULL || set == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = update ? set_analyse(s, t, &scope, defs, targets, ntargets, set)
                : KEEL_OK;
    for (uint16_t c = 0; rc == KEEL_OK && update && c < nc; c++)
        if (set[c] != NULL && sql_expr_reads_engine(set[c]))
            rc = sql_unsupported(s, set[c]->location,
                                 "reading the catalogs in UPDATE's SET");
    if (rc != KEEL_OK)
        return rc;
    rc = sql_returning_begin(s, t, returning, nreturning, ret);
    if (rc != KEEL_OK || s->describe_only)
        return rc;
    if (s->explain != NULL) {
        sql_explain_node(s->explain, 0, "%s on %s", update ? "Update" : "Delete",
                         t->name);
        sql_explain_node(s->explain, 1, "Nested Loop");
    }
    for (size_t r = 0; rc == KEEL_OK && r < rs.n; r++) {
        const sql_value *row = &rs.vals[r * rs.ncols];
        uint32_t len = 0;
        uint64_t h = 0;
        rc = pk_text(s, t, row, &kbuf, &kcap, &len, &h);
        if (rc != KEEL_OK)
            break;
        if (key_set_has(&done, kbuf, len, h))
            continue; /* changed once already */
        if (!key_set_put(&done, kbuf, len, h)) {
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            break;
        }
        for (uint16_t k = 0; k < t->info.npkey; k++)
            sql_value_to_keel(&row[t->info.pkey[k] - 1], &kk[k]);
        if (update) {
            for (uint16_t c = 0; rc == KEEL_OK && c < nc; c++) {
                if (set[c] == NULL) {
                    newrow[c] = row[c];
                    newrow[c].type = sql_type_of_keel(t->cols[c].type);
                    if (!row[c].isnull && row[c].type != newrow[c].type) {
                        newrow[c] = row[c];
                        rc = to_column(s, t, &t->cols[c], &newrow[c], -1);
                    }
                    continue;
                }
                rc = sql_expr_eval(s, set[c], row, &newrow[c]);
                if (rc == KEEL_OK && !newrow[c].isnull)
                    rc = to_column(s, t, &t->cols[c], &newrow[c], -1);
                else if (rc == KEEL_OK)
                    newrow[c].type = sql_type_of_keel(t->cols[c].type);
            }
            if (rc == KEEL_OK)
                rc = check_not_null(s, t, newrow);
            if (rc != KEEL_OK)
                break;
            for (uint16_t c = 0; c < nc; c++)
                sql_value_to_keel(&newrow[c], &kv[c]);
            rc = keel_update(s->ks, t->schema, t->name, kk, kv);
        } else {
            rc = keel_delete(s->ks, t->schema, t->name, kk);
        }
        if (rc == KEEL_ENOENT) {
            rc = KEEL_OK; /* deleted since, or changed by this statement */
            continue;
        }
        if (rc == KEEL_ECHANGED) {
            rc = sql_fail(s, KEEL_ESERIALIZE, "40001",
                          "could not serialize access due to concurrent "
                          "update");
            break;
        }
        if (rc != KEEL_OK) {
            rc = sql_fail_engine(s, rc);
            break;
        }
        rc = sql_fk_row(s, t, row, update ? newrow : NULL);
        if (rc == KEEL_OK && ret->nt > 0)
            rc = sql_returning_row(s, ret, update ? newrow : row);
        n++;
    }
    key_set_free(&done);
    free(kbuf);
    if (rc != KEEL_OK)
        return rc;
    return sql_complete_count(s, update ? "UPDATE" : "DELETE", n);
}

static keel_status exec_update(sql_session *s, const PgQuery__UpdateStmt *st)
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

    if (st->with_clause != NULL) {
        /* WITH ... UPDATE: its queries in scope for the statement's */
        PgQuery__UpdateStmt inner = *st;
        sql_with_saved sv;
        inner.with_clause = NULL;
        rc = sql_with_push(s, st->with_clause, &sv);
        if (rc == KEEL_OK)
            rc = exec_update(s, &inner);
        sql_with_pop(s, &sv);
        return rc;
    }
    rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK)
        return rc;
    rc = sql_defaults_of(s, &t, &defs);
    if (rc == KEEL_OK)
        rc = sql_checks_prepare(s, &t, defs);
    if (rc != KEEL_OK)
        return rc;
    if (st->n_from_clause > 0)
        return join_modify(s, &t, true, st->relation, st->from_clause,
                           st->n_from_clause, st->where_clause,
                           st->target_list, st->n_target_list, defs, &ret,
                           st->returning_list, st->n_returning_list);
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
    rc = set_analyse(s, &t, &scope, defs, st->target_list, st->n_target_list,
                     set);
    if (rc != KEEL_OK)
        return rc;
    rc = where_analyse(s, &scope, st->where_clause, &where);
    if (rc == KEEL_OK && sql_expr_reads_engine(where) && t.info.npkey > 0)
        /* A WHERE that reads tables (a subquery) cannot run while the
         * table's scan is open: its rows are found first, as UPDATE ...
         * FROM finds them, then changed by primary key. */
        return join_modify(s, &t, true, st->relation, NULL, 0,
                           st->where_clause, st->target_list,
                           st->n_target_list, defs, &ret, st->returning_list,
                           st->n_returning_list);
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
        rc = sql_fk_row(s, &t, cur, newrow);
        if (rc == KEEL_OK && ret.nt > 0)
            rc = sql_returning_row(s, &ret, newrow);
        if (rc != KEEL_OK)
            break;
        n++;
    }
    sql_scan_end(&sc);
    return rc != KEEL_OK ? rc : sql_complete_count(s, "UPDATE", n);
}

static keel_status exec_delete(sql_session *s, const PgQuery__DeleteStmt *st)
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

    if (st->with_clause != NULL) {
        /* WITH ... DELETE: its queries in scope for the statement's */
        PgQuery__DeleteStmt inner = *st;
        sql_with_saved sv;
        inner.with_clause = NULL;
        rc = sql_with_push(s, st->with_clause, &sv);
        if (rc == KEEL_OK)
            rc = exec_delete(s, &inner);
        sql_with_pop(s, &sv);
        return rc;
    }
    rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK)
        return rc;
    if (st->n_using_clause > 0)
        return join_modify(s, &t, false, st->relation, st->using_clause,
                           st->n_using_clause, st->where_clause, NULL, 0, NULL,
                           &ret, st->returning_list, st->n_returning_list);
    scope = (sql_scope){.table = t.alias, .cols = t.cols, .ncols = t.info.ncols};
    kk = sql_alloc(&s->arena, 17 * sizeof(*kk));
    erow = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*erow));
    ekv = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*ekv));
    if (kk == NULL || erow == NULL || ekv == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = where_analyse(s, &scope, st->where_clause, &where);
    if (rc == KEEL_OK && sql_expr_reads_engine(where) && t.info.npkey > 0)
        /* as UPDATE's: the rows found first, then deleted by key */
        return join_modify(s, &t, false, st->relation, NULL, 0,
                           st->where_clause, NULL, 0, NULL, &ret,
                           st->returning_list, st->n_returning_list);
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
        rc = sql_fk_row(s, &t, cur, NULL);
        /* RETURNING reads the deleted version, as the scan returned it. */
        if (rc == KEEL_OK && ret.nt > 0)
            rc = sql_returning_row(s, &ret, cur);
        if (rc != KEEL_OK)
            break;
        n++;
    }
    sql_scan_end(&sc);
    return rc != KEEL_OK ? rc : sql_complete_count(s, "DELETE", n);
}

/* Foreign keys' checks and actions run at the end of each (sql_fkey.c). */
keel_status sql_exec_update(sql_session *s, const PgQuery__UpdateStmt *st)
{
    sql_fk_queue q;
    keel_status rc = sql_fk_stmt_begin(s, &q);

    if (rc == KEEL_OK)
        rc = exec_update(s, st);
    return sql_fk_stmt_end(s, &q, rc);
}

keel_status sql_exec_delete(sql_session *s, const PgQuery__DeleteStmt *st)
{
    sql_fk_queue q;
    keel_status rc = sql_fk_stmt_begin(s, &q);

    if (rc == KEEL_OK)
        rc = exec_delete(s, st);
    return sql_fk_stmt_end(s, &q, rc);
}
