/*
 * sql_view.c: views (CREATE [OR REPLACE] VIEW, DROP VIEW).
 *
 * keel's engine keeps no queries, so the SQL layer keeps each view as a
 * row of keel_sql.keel_view (nspname text, viewname text, query text,
 * colnames text; primary key (nspname, viewname)), made through the
 * engine's API by the first CREATE VIEW, as keel_attrdef is: created,
 * replaced and dropped transactionally, read in the statement's
 * snapshot.  query is the SELECT as libpg_query deparses it; colnames
 * the view's column list, if it has one, each name ended by a newline.
 *
 * A view is found where FROM names a relation that no table has the name
 * of (so a table's name is never looked up here): its query is parsed
 * into the statement's arena and run as a subquery named by the view,
 * seeing none of the statement's WITH queries (sql_select.c).  A view is
 * no relation to the engine: pg_class does not list it, and a table and
 * a view of one name cannot both be made only because each creation
 * checks for the other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

#define VIEW_TABLE "keel_view"

/* View nsp.name's row (values into out), *found false if none. */
static keel_status view_read(sql_session *s, const char *nsp, const char *name,
                             keel_value *out, bool *found)
{
    keel_value key[2];
    bool exists = false;
    keel_status rc = sql_store_exists(s, VIEW_TABLE, &exists);

    *found = false;
    if (rc != KEEL_OK || !exists)
        return rc;
    sql_store_key2(key, nsp, name);
    rc = keel_lookup(s->ks, SQL_STORE_SCHEMA, VIEW_TABLE, key, out, found);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

static void *arena_alloc(void *ctx, size_t n)
{
    return sql_alloc(ctx, n);
}

static void arena_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p; /* the arena goes with the statement */
}

keel_status sql_view_find(sql_session *s, const char *schema, const char *name,
                          const PgQuery__SelectStmt **query,
                          PgQuery__Alias **alias, bool *found)
{
    keel_value row[4];
    PgQueryProtobufParseResult r;
    PgQuery__ParseResult *tree;
    ProtobufCAllocator a = {arena_alloc, arena_free, &s->arena};
    PgQuery__Alias *al;
    char *text;
    keel_status rc = view_read(s, schema != NULL ? schema : "public", name, row,
                               found);

    if (rc != KEEL_OK || !*found)
        return rc;
    text = sql_alloc(&s->arena, row[2].v.s.len + 1u);
    al = sql_alloc(&s->arena, sizeof(*al));
    if (text == NULL || al == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(text, row[2].v.s.ptr, row[2].v.s.len);
    text[row[2].v.s.len] = '\0';
    r = pg_query_parse_protobuf(text);
    tree = r.error == NULL
               ? pg_query__parse_result__unpack(&a, r.parse_tree.len,
                                                (const uint8_t *)r.parse_tree.data)
               : NULL;
    pg_query_free_protobuf_parse_result(r);
    if (tree == NULL || tree->n_stmts != 1 ||
        tree->stmts[0]->stmt->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return sql_fail(s, KEEL_ECORRUPT, "XX001",
                        "the query of view \"%s\" does not parse", name);
    *query = tree->stmts[0]->stmt->select_stmt;
    /* Its column list: a name per line. */
    *al = (PgQuery__Alias)PG_QUERY__ALIAS__INIT;
    al->aliasname = sql_strndup(&s->arena, name, strlen(name));
    for (uint32_t i = 0; i < row[3].v.s.len; i++)
        al->n_colnames += row[3].v.s.ptr[i] == '\n';
    if (al->n_colnames > 0) {
        const char *p = row[3].v.s.ptr, *end = p + row[3].v.s.len;
        al->colnames = sql_alloc(&s->arena, al->n_colnames * sizeof(*al->colnames));
        if (al->colnames == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (size_t k = 0; k < al->n_colnames; k++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            PgQuery__Node *n = sql_alloc(&s->arena, sizeof(*n));
            PgQuery__String *str = sql_alloc(&s->arena, sizeof(*str));
            if (n == NULL || str == NULL || nl == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            *str = (PgQuery__String)PG_QUERY__STRING__INIT;
            str->sval = sql_strndup(&s->arena, p, (size_t)(nl - p));
            *n = (PgQuery__Node)PG_QUERY__NODE__INIT;
            n->node_case = PG_QUERY__NODE__NODE_STRING;
            n->string = str;
            al->colnames[k] = n;
            p = nl + 1;
        }
    }
    *alias = al;
    return KEEL_OK;
}

keel_status sql_exec_create_view(sql_session *s, const PgQuery__ViewStmt *st)
{
    const PgQuery__RangeVar *rv = st->view;
    const char *nsp =
        rv->schemaname != NULL && rv->schemaname[0] != '\0' ? rv->schemaname
                                                            : "public";
    keel_value row[4];
    sql_rowset rs = {0};
    char *text = NULL, *cols = NULL;
    size_t clen = 0;
    bool found = false, table = false;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    if (st->query == NULL ||
        st->query->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return sql_unsupported(s, -1, "this view's query");
    if (st->with_check_option != PG_QUERY__VIEW_CHECK_OPTION__NO_CHECK_OPTION ||
        st->n_options > 0)
        return sql_unsupported(s, -1, "view options");
    if (rv->relpersistence != NULL && rv->relpersistence[0] == 't')
        return sql_unsupported(s, rv->location, "temporary views");
    /* The query must run: its errors are the CREATE's. */
    rc = sql_select_rows(s, st->query->select_stmt, NULL, NULL, true, &rs);
    if (rc != KEEL_OK)
        return rc;
    if (st->n_aliases > rs.ncols)
        return sql_fail(s, KEEL_EINVAL, "42601",
                        "CREATE VIEW specifies more column names than "
                        "columns");
    rc = keel_relation_exists(s->ks, nsp, rv->relname, &table);
    if (rc == KEEL_ENOENT)
        return sql_fail(s, KEEL_ENOENT, "3F000", "schema \"%s\" does not exist",
                        nsp);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    rc = view_read(s, nsp, rv->relname, row, &found);
    if (rc != KEEL_OK)
        return rc;
    if (table || (found && !st->replace))
        return sql_fail(s, KEEL_EEXIST, "42P07",
                        "relation \"%s\" already exists", rv->relname);
    if (found) {
        /* OR REPLACE keeps the columns there were, as PostgreSQL does:
         * the same names and types, new ones only at the end. */
        const PgQuery__SelectStmt *oq;
        PgQuery__Alias *oa;
        sql_rowset old = {0};
        bool again = false;
        rc = sql_view_find(s, nsp, rv->relname, &oq, &oa, &again);
        if (rc == KEEL_OK)
            rc = sql_select_rows(s, oq, NULL, NULL, true, &old);
        if (rc != KEEL_OK)
            return rc;
        if (rs.ncols < old.ncols)
            return sql_fail(s, KEEL_EINVAL, "42P16",
                            "cannot drop columns from view");
        for (uint16_t c = 0; c < old.ncols; c++) {
            const char *on = c < oa->n_colnames
                                 ? sql_node_string(oa->colnames[c])
                                 : old.cols[c].name;
            const char *nn = c < st->n_aliases ? sql_node_string(st->aliases[c])
                                               : rs.cols[c].name;
            if (strcmp(on, nn) != 0) {
                rc = sql_fail(s, KEEL_EINVAL, "42P16",
                              "cannot change name of view column \"%s\" to "
                              "\"%s\"",
                              on, nn);
                if (s->err != NULL)
                    snprintf(s->err->hint, sizeof(s->err->hint),
                             "Use ALTER VIEW ... RENAME COLUMN ... to change "
                             "name of view column instead.");
                return rc;
            }
            if (old.types[c] != rs.types[c])
                return sql_fail(s, KEEL_EINVAL, "42P16",
                                "cannot change data type of view column "
                                "\"%s\" from %s to %s",
                                on, sql_type_name(old.types[c]),
                                sql_type_name(rs.types[c]));
        }
    }
    {
        static const keel_column cols4[4] = {
            {.name = "nspname", .type = KEEL_TEXT, .notnull = true},
            {.name = "viewname", .type = KEEL_TEXT, .notnull = true},
            {.name = "query", .type = KEEL_TEXT, .notnull = true},
            {.name = "colnames", .type = KEEL_TEXT, .notnull = true},
        };
        static const uint16_t pkey[2] = {1, 2};
        rc = sql_store_ensure(s, VIEW_TABLE, cols4, 4, pkey, 2);
    }
    if (rc == KEEL_OK) {
        rc = sql_deparse(s, st->query, &text);
        if (rc == KEEL_EINVAL)
            rc = sql_unsupported(s, -1, "this view's query");
    }
    for (size_t i = 0; rc == KEEL_OK && i < st->n_aliases; i++) {
        const char *n = sql_node_string(st->aliases[i]);
        size_t l = n != NULL ? strlen(n) : 0;
        char *c = realloc(cols, clen + l + 2);
        if (c == NULL) {
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            break;
        }
        cols = c;
        memcpy(cols + clen, n != NULL ? n : "", l);
        clen += l;
        cols[clen++] = '\n';
    }
    if (rc == KEEL_OK) {
        keel_value key[2];
        sql_store_key2(row, nsp, rv->relname);
        row[2] = (keel_value){.isnull = false};
        row[2].v.s.ptr = text;
        row[2].v.s.len = (uint32_t)strlen(text);
        row[3] = (keel_value){.isnull = false};
        row[3].v.s.ptr = cols != NULL ? cols : "";
        row[3].v.s.len = (uint32_t)clen;
        sql_store_key2(key, nsp, rv->relname);
        rc = found ? keel_update(s->ks, SQL_STORE_SCHEMA, VIEW_TABLE, key, row)
                   : keel_insert(s->ks, SQL_STORE_SCHEMA, VIEW_TABLE, row);
        if (rc != KEEL_OK)
            rc = sql_fail_engine(s, rc);
    }
    free(text);
    free(cols);
    return rc != KEEL_OK ? rc : sql_complete(s, "CREATE VIEW");
}

keel_status sql_view_drop(sql_session *s, const char *nsp, const char *name,
                          bool missing_ok)
{
    keel_value key[2], row[4];
    bool found = false;
    keel_status rc = view_read(s, nsp, name, row, &found);

    if (rc != KEEL_OK)
        return rc;
    if (!found && missing_ok)
        return sql_notice(s, "00000", "view \"%s\" does not exist, skipping",
                          name);
    if (!found)
        return sql_fail(s, KEEL_ENOENT, "42P01", "view \"%s\" does not exist",
                        name);
    sql_store_key2(key, nsp, name);
    rc = keel_delete(s->ks, SQL_STORE_SCHEMA, VIEW_TABLE, key);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}
