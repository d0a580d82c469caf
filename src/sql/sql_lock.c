/*
 * sql_lock.c: SELECT ... FOR UPDATE (and FOR NO KEY UPDATE, FOR SHARE,
 * FOR KEY SHARE) of one table with a primary key.
 *
 * Each row is locked by the engine's row lock (keel_lock_row()) of the
 * clause's strength (the strongest, with several): it waits for a
 * transaction writing the row or holding a lock that conflicts, under
 * repeatable read fails with 40001 when the row changed since the
 * snapshot, and then holds off the writers and lockers its strength
 * conflicts with until the transaction ends, writing nothing.
 *
 * The statement runs in three steps, as PostgreSQL's LockRows node sits
 * between its sort and its LIMIT: the query itself, with the table's
 * primary key added to its output, finds the rows (sorted, not limited
 * by the statement's LIMIT, which counts rows locked: with one, in
 * batches of the query's first rows, each twice the last, so that a
 * queue's worker reads few when its scan gives ORDER BY's order); each
 * is then locked in that order until LIMIT rows are (OFFSET's first ones
 * locked but not returned); and the output is computed from the version
 * locked.  Under read committed a row that a transaction
 * updated and committed after the statement's snapshot is locked in its
 * newest version, if that still passes WHERE (skipped otherwise), as
 * PostgreSQL re-checks it.  SKIP LOCKED passes over a row another
 * running transaction is writing or has locked, NOWAIT fails on it
 * (55P03), where the others wait (keel_session_set_row_nowait()).
 */
#include <string.h>

#include "sql/sql_internal.h"

static const char *strength_name(PgQuery__LockClauseStrength st)
{
    switch (st) {
    case PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORKEYSHARE:
        return "FOR KEY SHARE";
    case PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORSHARE:
        return "FOR SHARE";
    case PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORNOKEYUPDATE:
        return "FOR NO KEY UPDATE";
    default:
        return "FOR UPDATE";
    }
}

/* 0A000 "FOR UPDATE is not allowed with ..." as PostgreSQL words it. */
static keel_status not_with(sql_session *s, const char *lock, const char *what)
{
    return sql_fail(s, KEEL_EINVAL, "0A000", "%s is not allowed with %s", lock,
                    what);
}

/* Copies the bytes kv's values point to (the engine's, valid until its
 * next call) into the arena. */
static keel_status own_values(sql_session *s, const sql_table *t,
                              keel_value *kv)
{
    for (uint16_t c = 0; c < t->info.ncols; c++) {
        keel_type k = t->cols[c].type;
        char *p;
        if (kv[c].isnull || !sql_type_has_bytes(sql_type_of_keel(k)))
            continue;
        p = sql_alloc(&s->arena, kv[c].v.s.len + 1u);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memcpy(p, kv[c].v.s.ptr, kv[c].v.s.len);
        kv[c].v.s.ptr = p;
    }
    return KEEL_OK;
}

/* Whether where (NULL: none) accepts row. */
static keel_status passes(sql_session *s, const sql_expr *where,
                          const sql_value *row, bool *keep)
{
    sql_value w;
    keel_status rc;

    *keep = true;
    if (where == NULL)
        return KEEL_OK;
    rc = sql_expr_eval(s, where, row, &w);
    *keep = rc == KEEL_OK && !w.isnull && w.v.b;
    return rc;
}

/* Whether the primary key key (n values) is among the ndone in done. */
static bool key_taken(const sql_value *done, size_t ndone,
                      const sql_value *key, uint16_t n)
{
    for (size_t i = 0; i < ndone; i++) {
        uint16_t k = 0;
        while (k < n && sql_value_compare(&done[i * n + k], &key[k]) == 0)
            k++;
        if (k == n)
            return true;
    }
    return false;
}

/* key (n values) kept in the arena among done's. */
static keel_status key_keep(sql_session *s, sql_value **done, size_t *ndone,
                            size_t *cap, const sql_value *key, uint16_t n)
{
    keel_status rc = KEEL_OK;

    if (*ndone == *cap) {
        size_t nc = *cap == 0 ? 16 : *cap * 2;
        sql_value *nd = sql_alloc(&s->arena, nc * n * sizeof(*nd));
        if (nd == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (*ndone > 0)
            memcpy(nd, *done, *ndone * n * sizeof(*nd));
        *done = nd;
        *cap = nc;
    }
    for (uint16_t k = 0; rc == KEEL_OK && k < n; k++) {
        (*done)[*ndone * n + k] = key[k];
        rc = sql_value_keep(s, &(*done)[*ndone * n + k]);
    }
    if (rc == KEEL_OK)
        (*ndone)++;
    return rc;
}

keel_status sql_select_locked(sql_session *s, const PgQuery__SelectStmt *st)
{
    const char *lock = "FOR UPDATE";
    keel_row_lock mode = KEEL_ROW_KEY_SHARE; /* the strongest clause's */
    const PgQuery__RangeVar *rv;
    PgQuery__SelectStmt q;
    PgQuery__Node **targets;
    sql_scope scope;
    sql_expr *where = NULL;
    sql_returning ret;
    sql_rowset rs;
    sql_table t;
    keel_value *kv, kk[16];
    sql_value *row;
    uint64_t n = 0, seen = 0;
    int64_t limit = -1, offset = -1, batch = -1;
    bool skip = false, nowait = false;
    PgQuery__Node lim_node;
    PgQuery__AConst lim_const;
    PgQuery__Integer lim_int;
    sql_value *done = NULL;
    size_t ndone = 0, capdone = 0, ndone_runs = 0;
    keel_status rc;

    for (size_t i = 0; i < st->n_locking_clause; i++) {
        const PgQuery__LockingClause *lc = st->locking_clause[i]->locking_clause;
        keel_row_lock m =
            lc->strength == PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORKEYSHARE
                ? KEEL_ROW_KEY_SHARE
            : lc->strength == PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORSHARE
                ? KEEL_ROW_SHARE
            : lc->strength == PG_QUERY__LOCK_CLAUSE_STRENGTH__LCS_FORNOKEYUPDATE
                ? KEEL_ROW_NO_KEY_UPDATE
                : KEEL_ROW_UPDATE;
        lock = strength_name(lc->strength);
        if (m > mode)
            mode = m;
        if (lc->wait_policy == PG_QUERY__LOCK_WAIT_POLICY__LockWaitSkip)
            skip = true;
        if (lc->wait_policy == PG_QUERY__LOCK_WAIT_POLICY__LockWaitError)
            nowait = true;
    }
    if (st->op != PG_QUERY__SET_OPERATION__SETOP_NONE)
        return not_with(s, lock, "UNION/INTERSECT/EXCEPT");
    if (st->n_distinct_clause > 0)
        return not_with(s, lock, "DISTINCT clause");
    if (st->n_group_clause > 0)
        return not_with(s, lock, "GROUP BY clause");
    if (st->having_clause != NULL)
        return not_with(s, lock, "HAVING clause");
    if (st->n_window_clause > 0)
        return not_with(s, lock, "window functions");
    if (st->with_clause != NULL)
        return sql_unsupported(s, -1, "FOR UPDATE with WITH");
    if (st->n_from_clause != 1 ||
        st->from_clause[0]->node_case != PG_QUERY__NODE__NODE_RANGE_VAR)
        return sql_unsupported(s, -1, "FOR UPDATE and FOR SHARE but of one "
                                      "table");
    rv = st->from_clause[0]->range_var;
    rc = sql_table_open(s, rv, &t);
    if (rc != KEEL_OK)
        return rc;
    for (size_t i = 0; i < st->n_locking_clause; i++) {
        const PgQuery__LockingClause *lc = st->locking_clause[i]->locking_clause;
        for (size_t k = 0; k < lc->n_locked_rels; k++) {
            const PgQuery__Node *r = lc->locked_rels[k];
            const char *name = r->node_case == PG_QUERY__NODE__NODE_RANGE_VAR
                                   ? r->range_var->relname
                                   : NULL;
            if (name == NULL || strcmp(name, t.alias) != 0)
                return sql_fail(s, KEEL_ENOENT, "42P01",
                                "relation \"%s\" in %s clause not found in "
                                "FROM clause",
                                name != NULL ? name : "?", lock);
        }
    }
    if (t.schema != NULL && strcmp(t.schema, "keel_catalog") == 0)
        return sql_unsupported(s, -1, "FOR UPDATE of a system catalog");
    if (st->n_target_list == 0)
        return sql_unsupported(s, -1, "FOR UPDATE without output columns");
    if (t.info.npkey == 0 || t.info.npkey > 16)
        return sql_unsupported(s, -1, "FOR UPDATE of a table without a "
                                      "primary key");
    /* The output, described first (a prepared statement's too). */
    rc = sql_returning_begin(s, &t, st->target_list, st->n_target_list, &ret);
    if (rc != KEEL_OK && s->err != NULL &&
        strstr(s->err->message, "aggregate functions are not allowed") != NULL)
        return not_with(s, lock, "aggregate functions");
    if (rc != KEEL_OK && s->err != NULL &&
        strstr(s->err->message, "window functions are not allowed") != NULL)
        return not_with(s, lock, "window functions");
    if (rc != KEEL_OK || (s->describe_only && s->explain == NULL))
        return rc;
    scope = (sql_scope){.table = t.alias, .cols = t.cols,
                        .ncols = t.info.ncols};
    if (st->where_clause != NULL) {
        s->clause = "WHERE";
        rc = sql_expr_prepare(s, &scope, st->where_clause, &where);
        s->clause = NULL;
        if (rc != KEEL_OK)
            return rc;
    }
    /* The rows, sorted and limited: the query with the primary key's
     * columns after its own (so that ORDER BY's positions and names
     * still mean the query's), the last of its output. */
    targets = sql_alloc(&s->arena,
                        (st->n_target_list + t.info.npkey + 1) * sizeof(*targets));
    kv = sql_alloc(&s->arena, (t.info.ncols + 1u) * sizeof(*kv));
    row = sql_alloc(&s->arena, (t.info.ncols + 1u) * sizeof(*row));
    if (targets == NULL || kv == NULL || row == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(targets, st->target_list, st->n_target_list * sizeof(*targets));
    for (uint16_t k = 0; k < t.info.npkey; k++) {
        targets[st->n_target_list + k] =
            sql_column_target(s, t.alias, t.cols[t.info.pkey[k] - 1].name);
        if (targets[st->n_target_list + k] == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    /* LIMIT and OFFSET count the rows locked, not those found (a row
     * left out after a wait, or skipped, makes room for the next), as
     * PostgreSQL's Limit sits above its LockRows: so the query finds
     * every row, and they are counted here. */
    rc = sql_limit_value(s, st->limit_count, "LIMIT", &limit);
    if (rc == KEEL_OK)
        rc = sql_limit_value(s, st->limit_offset, "OFFSET", &offset);
    if (rc != KEEL_OK)
        return rc;
    q = *st;
    q.n_locking_clause = 0;
    q.locking_clause = NULL;
    q.n_target_list = st->n_target_list + t.info.npkey;
    q.target_list = targets;
    q.limit_count = NULL;
    q.limit_offset = NULL;
    if (s->explain != NULL) {
        /* EXPLAIN: PostgreSQL's Limit over LockRows over the query */
        int depth = 0;
        if (st->limit_count != NULL || st->limit_offset != NULL)
            sql_explain_node(s->explain, depth++, "Limit");
        sql_explain_node(s->explain, depth++, "LockRows");
        s->explain->base += depth;
        rc = sql_exec_select(s, &q);
        s->explain->base -= depth;
        return rc;
    }
    /* With LIMIT, the rows are found in batches, each the query's first
     * `batch` rows, twice as many as the last: a queue's worker that
     * wants one row need not read them all.  A row a batch before this
     * one took up is passed over (its keys are kept in done). */
    if (limit >= 0) {
        int64_t want = limit + (offset > 0 ? offset : 0);
        batch = want < (INT32_MAX - 8) / 2 ? want * 2 + 8 : -1;
    }
next_batch:
    if (batch >= 0) {
        lim_int = (PgQuery__Integer)PG_QUERY__INTEGER__INIT;
        lim_const = (PgQuery__AConst)PG_QUERY__A__CONST__INIT;
        lim_node = (PgQuery__Node)PG_QUERY__NODE__INIT;
        lim_int.ival = (int32_t)batch;
        lim_const.val_case = PG_QUERY__A__CONST__VAL_IVAL;
        lim_const.ival = &lim_int;
        lim_const.location = -1;
        lim_node.node_case = PG_QUERY__NODE__NODE_A_CONST;
        lim_node.a_const = &lim_const;
        q.limit_count = &lim_node;
    }
    memset(&rs, 0, sizeof(rs));
    rc = sql_select_rows(s, &q, NULL, NULL, false, &rs);
    if (rc != KEEL_OK)
        return rc;
    for (size_t r = 0; rc == KEEL_OK && r < rs.n &&
                       (limit < 0 || n < (uint64_t)limit);
         r++) {
        const sql_value *found_row = &rs.vals[r * rs.ncols];
        const sql_value *key = &found_row[rs.ncols - t.info.npkey];
        bool found = false, keep = true;
        if (ndone_runs > 0 && key_taken(done, ndone, key, t.info.npkey))
            continue;
        if (batch >= 0)
            rc = key_keep(s, &done, &ndone, &capdone, key, t.info.npkey);
        if (rc != KEEL_OK)
            break;
        for (uint16_t k = 0; k < t.info.npkey; k++)
            sql_value_to_keel(&key[k], &kk[k]);
        rc = keel_lookup(s->ks, t.schema, t.name, kk, kv, &found);
        if (rc != KEEL_OK) {
            rc = sql_fail_engine(s, rc);
            break;
        }
        if (!found)
            continue;
        rc = own_values(s, &t, kv);
        /* Lock it, or its newest version if a transaction that committed
         * since the snapshot changed it (read committed). */
        while (rc == KEEL_OK) {
            keel_status w;
            keel_session_set_row_nowait(s->ks, skip || nowait);
            w = keel_lock_row(s->ks, t.schema, t.name, kk, mode);
            keel_session_set_row_nowait(s->ks, false);
            if (w == KEEL_OK || w == KEEL_ENOENT || (w == KEEL_EBUSY && skip)) {
                keep = w == KEEL_OK;
                break;
            }
            if (w == KEEL_EBUSY) {
                rc = sql_fail(s, w, "55P03",
                              "could not obtain lock on row in relation "
                              "\"%s\"",
                              t.name);
                break;
            }
            if (w != KEEL_ECHANGED) {
                rc = sql_fail_engine(s, w);
                break;
            }
            rc = keel_fetch_changed(s->ks, t.schema, t.name, kv, &found);
            if (rc != KEEL_OK) {
                rc = sql_fail_engine(s, rc);
                break;
            }
            if (!found) {
                keep = false;
                break;
            }
            rc = own_values(s, &t, kv);
            for (uint16_t c = 0; rc == KEEL_OK && c < t.info.ncols; c++)
                sql_value_from_keel(&kv[c], t.cols[c].type, &row[c]);
            if (rc == KEEL_OK)
                rc = passes(s, where, row, &keep);
            if (rc != KEEL_OK || !keep)
                break;
            for (uint16_t k = 0; k < t.info.npkey; k++)
                kk[k] = kv[t.info.pkey[k] - 1];
        }
        if (rc != KEEL_OK || !keep)
            continue;
        if (offset > 0 && seen++ < (uint64_t)offset)
            continue; /* locked, not returned */
        for (uint16_t c = 0; c < t.info.ncols; c++)
            sql_value_from_keel(&kv[c], t.cols[c].type, &row[c]);
        rc = sql_returning_row(s, &ret, row);
        n++;
    }
    if (rc != KEEL_OK)
        return rc;
    if (batch >= 0 && n < (uint64_t)limit && rs.n == (size_t)batch) {
        /* the batch ran out before LIMIT's rows were locked */
        ndone_runs++;
        batch = batch < INT32_MAX / 2 ? batch * 2 : -1;
        if (batch < 0)
            q.limit_count = NULL;
        goto next_batch;
    }
    return sql_complete_count(s, "SELECT", n);
}
