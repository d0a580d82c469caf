/*
 * sql_comment.c: COMMENT ON TABLE, COLUMN and INDEX, and what reads the
 * comments back (obj_description(), col_description(), pg_description,
 * and so psql's \d+ and \dt+).
 *
 * The engine keeps no comments, so the SQL layer keeps each as a row of
 * keel_sql.keel_description (objoid oid, objsubid int4, description
 * text; primary key (objoid, objsubid); objsubid is a column's number,
 * 0 for the relation itself), made through the engine's API by the first
 * COMMENT, as keel_attrdef is: set and removed transactionally, read in
 * the statement's snapshot.  A comment goes with its relation when it
 * is dropped, and follows it when TRUNCATE or ALTER TABLE makes the
 * table anew (its columns renumbered as ALTER leaves them, an index's
 * by the index's name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

#define DESC_TABLE "keel_description"

static keel_status table_ensure(sql_session *s)
{
    static const keel_column cols[] = {
        {.name = "objoid", .type = KEEL_OID, .notnull = true},
        {.name = "objsubid", .type = KEEL_INT4, .notnull = true},
        {.name = "description", .type = KEEL_TEXT, .notnull = true},
    };
    static const uint16_t pkey[] = {1, 2};

    return sql_store_ensure(s, DESC_TABLE, cols, 3, pkey, 2);
}

/* Sets (text not NULL) or removes the comment of (oid, subid). */
static keel_status comment_put(sql_session *s, uint32_t oid, int32_t subid,
                               const char *text, uint32_t len)
{
    keel_value key[2] = {{.v.oid = oid}, {.v.i4 = subid}}, row[3];
    keel_status rc = table_ensure(s);

    if (rc != KEEL_OK)
        return rc;
    rc = keel_delete(s->ks, SQL_STORE_SCHEMA, DESC_TABLE, key);
    if (rc != KEEL_OK && rc != KEEL_ENOENT)
        return sql_fail_engine(s, rc);
    if (text == NULL)
        return KEEL_OK;
    row[0] = key[0];
    row[1] = key[1];
    row[2] = (keel_value){.v.s = {text, len}};
    rc = keel_insert(s->ks, SQL_STORE_SCHEMA, DESC_TABLE, row);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_comment_get(sql_session *s, uint32_t oid, int32_t subid,
                            sql_value *out)
{
    keel_value key[2] = {{.v.oid = oid}, {.v.i4 = subid}}, row[3];
    bool exists = false, found = false;
    keel_status rc = sql_store_exists(s, DESC_TABLE, &exists);

    out->isnull = true;
    if (rc != KEEL_OK || !exists)
        return rc;
    rc = keel_lookup(s->ks, SQL_STORE_SCHEMA, DESC_TABLE, key, row, &found);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (!found)
        return KEEL_OK;
    out->isnull = false;
    out->v.s.p = sql_strndup(&s->arena, row[2].v.s.ptr, row[2].v.s.len);
    out->v.s.len = row[2].v.s.len;
    return out->v.s.p == NULL ? sql_fail(s, KEEL_ENOMEM, "53200", "out of memory")
                              : KEEL_OK;
}

/* The comments of oid: their subids and texts, in the arena. */
typedef struct desc_row {
    int32_t subid;
    const char *text;
    uint32_t len;
} desc_row;

static keel_status read_rows(sql_session *s, uint32_t oid, desc_row **rows,
                             uint32_t *n)
{
    keel_value key = {.v.oid = oid}, row[3];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_scan *sc = NULL;
    uint32_t cap = 0;
    bool exists = false, found;
    keel_status rc = sql_store_exists(s, DESC_TABLE, &exists);

    *rows = NULL;
    *n = 0;
    if (rc != KEEL_OK || !exists)
        return rc;
    rc = keel_scan_begin(s->ks, SQL_STORE_SCHEMA, DESC_TABLE, NULL, &b, &b, &sc);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    while ((rc = keel_scan_next(sc, row, &found)) == KEEL_OK && found) {
        if (*n == cap) {
            desc_row *g;
            cap = cap == 0 ? 8 : cap * 2;
            g = sql_alloc(&s->arena, cap * sizeof(*g));
            if (g == NULL) {
                rc = KEEL_ENOMEM;
                break;
            }
            if (*n > 0)
                memcpy(g, *rows, *n * sizeof(*g));
            *rows = g;
        }
        (*rows)[*n].subid = row[1].v.i4;
        (*rows)[*n].len = row[2].v.s.len;
        (*rows)[*n].text = sql_strndup(&s->arena, row[2].v.s.ptr, row[2].v.s.len);
        if ((*rows)[*n].text == NULL) {
            rc = KEEL_ENOMEM;
            break;
        }
        (*n)++;
    }
    keel_scan_end(sc);
    if (rc == KEEL_ENOMEM)
        return sql_fail(s, rc, "53200", "out of memory");
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

keel_status sql_comments_move(sql_session *s, uint32_t old_oid,
                              uint32_t new_oid, const uint16_t *attmap,
                              uint16_t nmap)
{
    desc_row *rows;
    uint32_t n;
    keel_status rc = read_rows(s, old_oid, &rows, &n);

    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        int32_t sub = rows[i].subid;
        rc = comment_put(s, old_oid, sub, NULL, 0);
        if (attmap != NULL && sub > 0)
            sub = sub <= nmap ? attmap[sub - 1] : 0;
        if (rc == KEEL_OK && new_oid != 0 && (sub > 0 || rows[i].subid == 0))
            rc = comment_put(s, new_oid, sub, rows[i].text, rows[i].len);
    }
    return rc;
}

/* name, quoted for regclass's input ("a""b"). */
static char *quoted(sql_session *s, const char *schema, const char *name)
{
    size_t cap = 2 * (strlen(name) + (schema != NULL ? strlen(schema) : 0)) + 8;
    char *q = sql_alloc(&s->arena, cap), *o = q;

    if (q == NULL)
        return NULL;
    for (int part = schema != NULL ? 0 : 1; part < 2; part++) {
        const char *p = part == 0 ? schema : name;
        *o++ = '"';
        for (; *p != '\0'; p++) {
            if (*p == '"')
                *o++ = '"';
            *o++ = *p;
        }
        *o++ = '"';
        if (part == 0)
            *o++ = '.';
    }
    *o = '\0';
    return q;
}

keel_status sql_relation_oid(sql_session *s, const char *schema,
                             const char *name, bool missing_ok, uint32_t *oid)
{
    char *q = quoted(s, schema, name);
    bool missing = false;
    keel_status rc;

    *oid = 0;
    if (q == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    rc = sql_reg_in(s, SQL_FUNC_REGCLASS, q, (uint32_t)strlen(q), -1,
                    missing_ok, oid, &missing);
    if (missing)
        *oid = 0;
    return rc;
}

keel_status sql_index_comments(sql_session *s, const char *schema,
                               const char *table, sql_index_comment **out,
                               uint16_t *n)
{
    keel_index_info ix[64];
    uint16_t nix = 0;
    keel_status rc = keel_table_indexes(s->ks, schema, table, ix, 64, &nix);

    *out = NULL;
    *n = 0;
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (nix > 64)
        nix = 64;
    *out = sql_alloc(&s->arena, (nix + 1u) * sizeof(**out));
    if (*out == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < nix; i++) {
        uint32_t oid;
        sql_value v;
        rc = sql_relation_oid(s, schema, ix[i].name, true, &oid);
        if (rc == KEEL_OK && oid != 0)
            rc = sql_comment_get(s, oid, 0, &v);
        if (rc != KEEL_OK)
            return rc;
        if (oid == 0 || v.isnull)
            continue;
        snprintf((*out)[*n].name, sizeof((*out)[*n].name), "%s", ix[i].name);
        (*out)[*n].oid = oid;
        (*out)[*n].text = v.v.s.p;
        (*out)[*n].len = v.v.s.len;
        (*n)++;
    }
    return KEEL_OK;
}

keel_status sql_index_comments_restore(sql_session *s, const char *schema,
                                       const sql_index_comment *c, uint16_t n)
{
    keel_status rc = KEEL_OK;

    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        uint32_t oid;
        rc = comment_put(s, c[i].oid, 0, NULL, 0);
        if (rc == KEEL_OK)
            rc = sql_relation_oid(s, schema, c[i].name, true, &oid);
        if (rc == KEEL_OK && oid != 0)
            rc = comment_put(s, oid, 0, c[i].text, c[i].len);
    }
    return rc;
}

keel_status sql_exec_comment(sql_session *s, const PgQuery__CommentStmt *st)
{
    const char *names[3] = {NULL, NULL, NULL}, *schema = NULL, *rel, *col = NULL;
    size_t n = 0;
    bool table = st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_TABLE;
    bool column = st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN;
    bool index = st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_INDEX;
    keel_table_info info;
    uint32_t oid;
    int32_t subid = 0;
    const char *text = st->comment;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    if (!table && !column && !index)
        return sql_unsupported(s, -1, "COMMENT ON this kind of object");
    if (st->object != NULL && st->object->node_case == PG_QUERY__NODE__NODE_LIST) {
        const PgQuery__List *l = st->object->list;
        for (size_t i = 0; i < l->n_items && n < 3; i++)
            names[n++] = sql_node_string(l->items[i]);
        if (l->n_items > 3 || (l->n_items == 3 && !column))
            return sql_unsupported(s, -1, "cross-database references");
    }
    if (n == 0 || (column && n < 2))
        return sql_unsupported(s, -1, "this COMMENT");
    for (size_t i = 0; i < n; i++)
        if (names[i] == NULL)
            return sql_unsupported(s, -1, "this COMMENT");
    if (column) {
        col = names[n - 1];
        n--;
    }
    rel = names[n - 1];
    if (n == 2)
        schema = names[0];
    rc = sql_relation_oid(s, schema, rel, false, &oid);
    if (rc != KEEL_OK)
        return rc;
    /* an index is no table to describe */
    rc = keel_table_describe(s->ks, schema, rel, &info, NULL, 0);
    if (rc == KEEL_EINVAL &&
        strstr(keel_session_error(s->ks), "not a user table") != NULL)
        rc = KEEL_ENOENT;
    if (rc != KEEL_OK && rc != KEEL_ENOENT)
        return sql_fail_engine(s, rc);
    if ((rc == KEEL_OK) == index)
        return sql_fail(s, KEEL_ETYPE, "42809", "\"%s\" is not %s", rel,
                        index ? "an index" : "a table");
    if (column) {
        keel_column_info *cols =
            sql_alloc(&s->arena, (info.ncols + 1u) * sizeof(*cols));
        if (cols == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = keel_table_describe(s->ks, schema, rel, &info, cols, info.ncols);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        for (uint16_t c = 0; c < info.ncols && subid == 0; c++)
            if (strcmp(cols[c].name, col) == 0)
                subid = c + 1;
        if (subid == 0)
            return sql_fail(s, KEEL_ENOENT, "42703",
                            "column \"%s\" of relation \"%s\" does not exist",
                            col, rel);
    }
    /* A lock as PostgreSQL takes for it: others' COMMENTs on the table
     * wait, its readers do not. */
    if (!index) {
        rc = keel_lock_table(s->ks, schema, rel, KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE,
                             false);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    /* An empty comment is none. */
    if (text != NULL && text[0] == '\0')
        text = NULL;
    rc = comment_put(s, oid, subid, text, text != NULL ? (uint32_t)strlen(text) : 0);
    if (rc != KEEL_OK)
        return rc;
    return sql_complete(s, "COMMENT");
}
