/*
 * sql_returning.c: the RETURNING lists of INSERT, UPDATE and DELETE.
 *
 * The list is analysed over the table's row, as a SELECT's output over
 * its one table, and its columns described before the statement changes
 * anything (so a prepared statement describes them too).  Each row the
 * statement inserts, updates (its new version) or deletes (the version it
 * deleted) is then evaluated and sent as a DataRow, and the statement
 * still ends with its own command tag (INSERT 0 n, UPDATE n, DELETE n),
 * as PostgreSQL's do.
 */
#include <string.h>

#include "sql/sql_internal.h"

keel_status sql_returning_begin(sql_session *s, const sql_table *t,
                                PgQuery__Node **list, size_t n,
                                sql_returning *r)
{
    sql_scope scope = {.table = t->alias, .cols = t->cols, .ncols = t->info.ncols};
    sql_column *cols;
    keel_status rc;

    memset(r, 0, sizeof(*r));
    if (n == 0)
        return KEEL_OK;
    s->clause = "RETURNING";
    rc = sql_targets_analyse(s, &scope, list, n, &r->tl, &r->nt);
    s->clause = NULL;
    if (rc != KEEL_OK)
        return rc;
    cols = sql_alloc(&s->arena, (r->nt + 1) * sizeof(*cols));
    r->out = sql_alloc(&s->arena, (r->nt + 1) * sizeof(*r->out));
    r->txt = sql_alloc(&s->arena, (r->nt + 1) * sizeof(*r->txt));
    r->lens = sql_alloc(&s->arena, (r->nt + 1) * sizeof(*r->lens));
    if (cols == NULL || r->out == NULL || r->txt == NULL || r->lens == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < r->nt; i++) {
        const sql_expr *e = r->tl[i].expr;
        uint32_t type = e->type == SQL_TYPE_UNKNOWN ? SQL_TYPE_TEXT
                                                  : sql_type_wire(e->type);
        cols[i] = (sql_column){.name = r->tl[i].name, .type = type,
                               .typlen = sql_type_len(type), .typmod = -1};
        if (s->nrformats > 0)
            cols[i].format = s->rformats[s->nrformats == 1 ? 0 : i];
        if (e->kind == SQL_EXPR_COLUMN) {
            uint16_t a = e->u.column;
            cols[i].table = t->info.oid;
            cols[i].attnum = (int16_t)(a + 1);
            if (sql_column_typmod(&t->cols[a]) >= 0) {
                cols[i].type = sql_column_type(&t->cols[a]);
                /* numeric's typmod has PostgreSQL's 4 in it */
                cols[i].typmod = sql_column_typmod(&t->cols[a]) +
                                 (t->cols[a].type == KEEL_NUMERIC ? 0 : 4);
            }
        }
    }
    if (s->sink->columns(s->sink->ctx, cols, r->nt) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}

keel_status sql_returning_row(sql_session *s, sql_returning *r,
                              const sql_value *row)
{
    keel_status rc;

    for (uint16_t i = 0; i < r->nt; i++) {
        rc = sql_expr_eval(s, r->tl[i].expr, row, &r->out[i]);
        if (rc == KEEL_OK)
            rc = sql_value_out(s, &r->out[i], i, &r->txt[i], &r->lens[i]);
        if (rc != KEEL_OK)
            return rc;
    }
    if (s->sink->row(s->sink->ctx, r->txt, r->lens, r->nt) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}
