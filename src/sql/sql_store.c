/*
 * sql_store.c: the tables the SQL layer keeps what the engine does not
 * (column defaults, sequences, views) in, in schema keel_sql, each made
 * through the engine's API by the first statement that needs it, in that
 * statement's transaction; and the deparsing of a statement's tree back
 * into text that they store.
 */
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

keel_status sql_store_exists(sql_session *s, const char *table, bool *exists)
{
    keel_status rc = keel_relation_exists(s->ks, SQL_STORE_SCHEMA, table, exists);

    if (rc == KEEL_ENOENT) { /* no schema yet: no table */
        *exists = false;
        return KEEL_OK;
    }
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_store_ensure(sql_session *s, const char *table,
                             const keel_column *cols, uint16_t ncols,
                             const uint16_t *pkey, uint16_t npkey)
{
    bool exists = false;
    keel_status rc = sql_store_exists(s, table, &exists);

    if (rc != KEEL_OK || exists)
        return rc;
    rc = keel_create_schema(s->ks, SQL_STORE_SCHEMA);
    if (rc != KEEL_OK && rc != KEEL_EEXIST)
        return sql_fail_engine(s, rc);
    rc = keel_create_table(s->ks, SQL_STORE_SCHEMA, table, cols, ncols, pkey,
                           npkey);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

void sql_store_key2(keel_value *key, const char *a, const char *b)
{
    key[0] = (keel_value){.isnull = false};
    key[1] = (keel_value){.isnull = false};
    key[0].v.s.ptr = a;
    key[0].v.s.len = (uint32_t)strlen(a);
    key[1].v.s.ptr = b;
    key[1].v.s.len = (uint32_t)strlen(b);
}

keel_status sql_deparse(sql_session *s, PgQuery__Node *stmt, char **out)
{
    PgQuery__RawStmt raw = PG_QUERY__RAW_STMT__INIT;
    PgQuery__ParseResult pr = PG_QUERY__PARSE_RESULT__INIT;
    PgQuery__RawStmt *stmts[1] = {&raw};
    PgQueryProtobuf pb;
    PgQueryDeparseResult d;
    keel_status rc = KEEL_OK;

    *out = NULL;
    raw.stmt = stmt;
    pr.version = PG_VERSION_NUM;
    pr.n_stmts = 1;
    pr.stmts = stmts;
    pb.len = pg_query__parse_result__get_packed_size(&pr);
    pb.data = malloc(pb.len ? pb.len : 1);
    if (pb.data == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    pg_query__parse_result__pack(&pr, (uint8_t *)pb.data);
    d = pg_query_deparse_protobuf(pb);
    free(pb.data);
    if (d.error != NULL)
        rc = KEEL_EINVAL; /* the caller names what it is */
    else if ((*out = strdup(d.query)) == NULL)
        rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    pg_query_free_deparse_result(d);
    return rc;
}
