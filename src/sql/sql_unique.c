/*
 * sql_unique.c: which unique indexes are UNIQUE constraints.
 *
 * keel's engine keeps a unique index and nothing more.  PostgreSQL tells
 * the index a UNIQUE constraint made (pg_constraint's 'u' row, which
 * psql's \d shows as UNIQUE CONSTRAINT and ALTER TABLE ... DROP
 * CONSTRAINT drops) from one that CREATE UNIQUE INDEX made (which only
 * DROP INDEX drops, and not while a constraint owns it).  The SQL layer
 * keeps the first kind as rows of keel_sql.keel_unique (conrelid,
 * conname: the index's name; primary key both), written where the
 * constraint is made (CREATE TABLE, ALTER TABLE ... ADD) through the
 * engine's API, so transactional and logged as any row, and moved where
 * the table is made anew (TRUNCATE, ALTER TABLE's rewrite, which builds
 * its indexes again under their names).  The 'u' row shares its index's
 * oid, as keel's primary keys do.
 */
#include <string.h>

#include "sql/sql_internal.h"

#define UQ_TABLE "keel_unique"

static keel_status table_ensure(sql_session *s)
{
    static const keel_column cols[2] = {
        {.name = "conrelid", .type = KEEL_OID, .notnull = true},
        {.name = "conname", .type = KEEL_TEXT, .notnull = true},
    };
    static const uint16_t pkey[2] = {1, 2};
    /* pg_constraint's view of them reads keel_check's and keel_fkey's
     * rows too: they are made with it */
    keel_status rc = sql_fkeys_ensure(s);

    return rc == KEEL_OK ? sql_store_ensure(s, UQ_TABLE, cols, 2, pkey, 2) : rc;
}

static void key_of(keel_value *key, uint32_t relid, const char *name)
{
    key[0] = (keel_value){.v.oid = relid};
    key[1] = (keel_value){.isnull = false};
    key[1].v.s.ptr = name;
    key[1].v.s.len = (uint32_t)strlen(name);
}

keel_status sql_unique_add(sql_session *s, uint32_t relid, const char *name)
{
    keel_value key[2];
    keel_status rc = table_ensure(s);

    key_of(key, relid, name);
    if (rc != KEEL_OK)
        return rc;
    rc = keel_insert(s->ks, SQL_STORE_SCHEMA, UQ_TABLE, key);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_unique_has(sql_session *s, uint32_t relid, const char *name,
                           bool *has)
{
    keel_value key[2], row[2];
    bool exists = false;
    keel_status rc = sql_store_exists(s, UQ_TABLE, &exists);

    *has = false;
    if (rc != KEEL_OK || !exists)
        return rc;
    key_of(key, relid, name);
    rc = keel_lookup(s->ks, SQL_STORE_SCHEMA, UQ_TABLE, key, row, has);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_unique_remove(sql_session *s, uint32_t relid, const char *name)
{
    keel_value key[2];
    bool has = false;
    keel_status rc = sql_unique_has(s, relid, name, &has);

    if (rc != KEEL_OK || !has)
        return rc;
    key_of(key, relid, name);
    rc = keel_delete(s->ks, SQL_STORE_SCHEMA, UQ_TABLE, key);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* Table relid's constraints' names (every table's for 0), in the arena;
 * with relids, each one's table. */
static keel_status names_read(sql_session *s, uint32_t relid, char ***names,
                              uint32_t **relids, uint16_t *n)
{
    keel_value key = {.v.oid = relid}, row[2];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_scan *sc = NULL;
    char **out = NULL;
    uint32_t *rel = NULL;
    uint16_t cap = 0;
    bool found, exists = false;
    keel_status rc = sql_store_exists(s, UQ_TABLE, &exists);

    *n = 0;
    *names = NULL;
    if (relids != NULL)
        *relids = NULL;
    if (rc != KEEL_OK || !exists)
        return rc;
    rc = keel_scan_begin(s->ks, SQL_STORE_SCHEMA, UQ_TABLE, NULL,
                         relid != 0 ? &b : NULL, relid != 0 ? &b : NULL, &sc);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    while ((rc = keel_scan_next(sc, row, &found)) == KEEL_OK && found) {
        if (*n == cap) {
            uint16_t c = cap ? (uint16_t)(cap * 2) : 8;
            char **g = sql_alloc(&s->arena, c * sizeof(*g));
            uint32_t *r = sql_alloc(&s->arena, c * sizeof(*r));
            if (g == NULL || r == NULL || c < cap) {
                rc = KEEL_ENOMEM;
                break;
            }
            if (*n > 0) {
                memcpy(g, out, *n * sizeof(*g));
                memcpy(r, rel, *n * sizeof(*r));
            }
            out = g;
            rel = r;
            cap = c;
        }
        rel[*n] = row[0].v.oid;
        out[*n] = sql_strndup(&s->arena, row[1].v.s.ptr, row[1].v.s.len);
        if (out[*n] == NULL) {
            rc = KEEL_ENOMEM;
            break;
        }
        (*n)++;
    }
    keel_scan_end(sc);
    if (rc == KEEL_ENOMEM)
        return sql_fail(s, rc, "53200", "out of memory");
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    *names = out;
    if (relids != NULL)
        *relids = rel;
    return KEEL_OK;
}

keel_status sql_uniques_move(sql_session *s, uint32_t old_relid,
                             uint32_t new_relid, const char *schema,
                             const char *table)
{
    char **names;
    uint16_t n;
    keel_index_info idx[64];
    uint16_t nidx = 0;
    keel_status rc = names_read(s, old_relid, &names, NULL, &n);

    if (rc == KEEL_OK && n > 0 && new_relid != 0) {
        rc = keel_table_indexes(s->ks, schema, table, idx, 64, &nidx);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        bool kept = false;
        rc = sql_unique_remove(s, old_relid, names[i]);
        /* its index is built again unless a column of it was dropped */
        for (uint16_t x = 0; new_relid != 0 && x < nidx && x < 64; x++)
            kept = kept || strcmp(idx[x].name, names[i]) == 0;
        if (rc == KEEL_OK && kept)
            rc = sql_unique_add(s, new_relid, names[i]);
    }
    return rc;
}

keel_status sql_unique_index_owner(sql_session *s, const char *schema,
                                   const char *index, char *table, bool *owned)
{
    char **names;
    uint32_t *relids;
    uint16_t n;
    keel_status rc = names_read(s, 0, &names, &relids, &n);

    *owned = false;
    for (uint16_t i = 0; rc == KEEL_OK && i < n && !*owned; i++) {
        char sch[KEEL_NAME_LEN];
        bool found = false;
        if (strcmp(names[i], index) != 0)
            continue;
        rc = sql_relation_by_oid(s, relids[i], sch, table, &found);
        *owned = rc == KEEL_OK && found && strcmp(sch, schema) == 0;
    }
    return rc;
}
