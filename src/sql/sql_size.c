/*
 * sql_size.c: PostgreSQL's object size functions over keel's files, and
 * the descriptions psql's `+` commands ask for.
 *
 *   pg_relation_size(regclass [, fork text]), pg_table_size(regclass),
 *   pg_indexes_size(regclass), pg_total_relation_size(regclass): bigint,
 *     from keel_relation_size(), NULL for an oid that names no relation;
 *   pg_database_size(name | oid): bigint, from keel_database_size();
 *   pg_size_pretty(bigint | numeric): text, PostgreSQL's units and
 *     rounding;
 *   obj_description(oid [, name]), col_description(oid, int4): the
 *     comments COMMENT ON keeps (sql_comment.c), of relations and their
 *     columns; shobj_description(oid, name): NULL;
 *   has_database_privilege(name | oid, text): true for this database,
 *     since keel has no privileges (psql's \l+ asks).
 *
 * A regclass argument is an oid or integer expression, `x::regclass`
 * (its oid), or a string literal, read at analysis as PostgreSQL's
 * regclassin reads it: digits are an oid; otherwise a name, quoted or
 * not, qualified or found through the search path (keel_catalog, then
 * public), 42P01 when nothing has it.
 *
 * keel's relations are one file each: a table has no free space map,
 * visibility map or TOAST table, so pg_table_size() is the heap's file,
 * and the forks but 'main' are empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/sql_internal.h"

/* ---- regclass arguments ---- */

/* The oid of schema name by keel_namespace's name index, 0 if none. */
static keel_status namespace_oid(sql_session *s, const char *name,
                                 uint32_t *oid)
{
    keel_value key = {.isnull = false}, row[2];
    keel_bound b = {.vals = &key, .ncols = 1, .inclusive = true};
    keel_scan *sc = NULL;
    bool found = false;
    keel_status rc;

    key.v.s.ptr = name;
    key.v.s.len = (uint32_t)strlen(name);
    *oid = 0;
    rc = keel_scan_begin(s->ks, "keel_catalog", "keel_namespace",
                         "keel_namespace_name_index", &b, &b, &sc);
    if (rc == KEEL_OK)
        rc = keel_scan_next(sc, row, &found);
    if (rc == KEEL_OK && found)
        *oid = row[0].v.oid;
    keel_scan_end(sc);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* The oid of relation name in schema nsp by keel_class's name index, 0
 * if none. */
static keel_status class_oid(sql_session *s, const char *name, uint32_t nsp,
                             uint32_t *oid)
{
    keel_value key[2] = {{.isnull = false}, {.isnull = false}}, row[8];
    keel_bound b = {.vals = key, .ncols = 2, .inclusive = true};
    keel_scan *sc = NULL;
    bool found = false;
    keel_status rc;

    key[0].v.s.ptr = name;
    key[0].v.s.len = (uint32_t)strlen(name);
    key[1].v.oid = nsp;
    *oid = 0;
    rc = keel_scan_begin(s->ks, "keel_catalog", "keel_class",
                         "keel_class_name_index", &b, &b, &sc);
    if (rc == KEEL_OK)
        rc = keel_scan_next(sc, row, &found);
    if (rc == KEEL_OK && found)
        *oid = row[0].v.oid;
    keel_scan_end(sc);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/*
 * Splits text (len bytes) into dotted names as PostgreSQL's
 * SplitIdentifierString() does: a part in double quotes keeps its case
 * ("" is a quote), one without is folded to lower case and trimmed of
 * blanks.  Up to 4 parts of KEEL_NAME_LEN bytes into parts; *n their
 * number, 0 when the syntax is bad.
 */
static void split_names(const char *p, uint32_t len,
                        char parts[4][KEEL_NAME_LEN], int *n)
{
    uint32_t i = 0;

    *n = 0;
    for (;;) {
        char *out;
        size_t o = 0;
        while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n'))
            i++;
        if (*n == 4) {
            *n = 5; /* too many */
            return;
        }
        out = parts[(*n)++];
        if (i < len && p[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    *n = 0; /* unterminated */
                    return;
                }
                if (p[i] == '"') {
                    if (i + 1 < len && p[i + 1] == '"') {
                        i++;
                    } else {
                        i++;
                        break;
                    }
                }
                if (o + 1 < KEEL_NAME_LEN)
                    out[o++] = p[i];
                i++;
            }
            if (o == 0) {
                *n = 0; /* "" names nothing */
                return;
            }
        } else {
            while (i < len && p[i] != '.' && p[i] != ' ' && p[i] != '\t' &&
                   p[i] != '\n') {
                char c = p[i++];
                if (c >= 'A' && c <= 'Z')
                    c = (char)(c - 'A' + 'a');
                if (o + 1 < KEEL_NAME_LEN)
                    out[o++] = c;
            }
            if (o == 0) {
                *n = 0;
                return;
            }
        }
        out[o] = '\0';
        while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n'))
            i++;
        if (i == len)
            return;
        if (p[i] != '.') {
            *n = 0;
            return;
        }
        i++;
    }
}

/* A string read as regclassin reads it, into *oid (see the file's
 * comment); errors point at location. */
keel_status sql_regclass_in(sql_session *s, const char *p, uint32_t len,
                            int32_t location, uint32_t *oid)
{
    char parts[4][KEEL_NAME_LEN];
    uint32_t nsp = 0;
    int n;
    bool digits = len > 0;
    keel_status rc;

    for (uint32_t i = 0; i < len; i++)
        digits = digits && p[i] >= '0' && p[i] <= '9';
    if (digits && len <= 10) {
        unsigned long long v = strtoull(p, NULL, 10);
        if (v <= UINT32_MAX) {
            *oid = (uint32_t)v;
            return KEEL_OK;
        }
    }
    split_names(p, len, parts, &n);
    if (n == 0)
        return sql_fail_at(s, location, KEEL_EINVAL, "42602",
                           "invalid name syntax");
    if (n > 2) {
        /* A database name before the schema: this one only. */
        if (n > 3)
            return sql_fail_at(s, location, KEEL_EINVAL, "42601",
                               "improper relation name (too many dotted "
                               "names): %.*s",
                               (int)len, p);
        if (strcmp(parts[0], sql_setting_get(s, "database")) != 0)
            return sql_fail_at(s, location, KEEL_EINVAL, "0A000",
                               "cross-database references are not "
                               "implemented: %.*s",
                               (int)len, p);
        memmove(parts[0], parts[1], 2 * KEEL_NAME_LEN);
        n = 2;
    }
    if (n == 2 && strcmp(parts[0], "pg_catalog") == 0) {
        /* pg_catalog's views, by the oids of the catalogs they stand
         * for */
        *oid = sql_catalog_view_oid(parts[1]);
        rc = KEEL_OK;
    } else if (n == 1 && (*oid = sql_catalog_view_oid(parts[0])) != 0) {
        return KEEL_OK; /* pg_catalog comes first on the path */
    } else if (n == 2) {
        rc = namespace_oid(s, parts[0], &nsp);
        if (rc == KEEL_OK && nsp == 0)
            return sql_fail_at(s, location, KEEL_ENOENT, "3F000",
                               "schema \"%s\" does not exist", parts[0]);
        if (rc == KEEL_OK)
            rc = class_oid(s, parts[1], nsp, oid);
    } else {
        /* The search path: keel_catalog (where pg_catalog's names are
         * looked for), then public. */
        rc = namespace_oid(s, "keel_catalog", &nsp);
        *oid = 0;
        if (rc == KEEL_OK && nsp != 0)
            rc = class_oid(s, parts[0], nsp, oid);
        if (rc == KEEL_OK && *oid == 0)
            rc = namespace_oid(s, "public", &nsp);
        if (rc == KEEL_OK && *oid == 0 && nsp != 0)
            rc = class_oid(s, parts[0], nsp, oid);
    }
    if (rc == KEEL_OK && *oid == 0)
        return sql_fail_at(s, location, KEEL_ENOENT, "42P01",
                           "relation \"%s%s%s\" does not exist",
                           n == 2 ? parts[0] : "", n == 2 ? "." : "",
                           n == 2 ? parts[1] : parts[0]);
    return rc;
}

/* A string read as regtypein reads it: digits are an oid, otherwise a
 * type's name as a cast would name it, parsed by PostgreSQL's grammar
 * as "SELECT NULL::name" (nothing but that cast may come out). */
static keel_status regtype_in(sql_session *s, const char *p, uint32_t len,
                              int32_t location, uint32_t *oid)
{
    static const char head[] = "SELECT NULL::";
    PgQueryProtobufParseResult r;
    PgQuery__ParseResult *tree = NULL;
    const PgQuery__SelectStmt *sel = NULL;
    const PgQuery__TypeCast *tc = NULL;
    char *text;
    keel_status rc = KEEL_OK;
    int32_t typmod;

    if (memchr(p, ';', len) != NULL || memchr(p, '\0', len) != NULL)
        goto bad;
    text = sql_alloc(&s->arena, sizeof(head) + len);
    if (text == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(text, head, sizeof(head) - 1);
    memcpy(text + sizeof(head) - 1, p, len);
    text[sizeof(head) - 1 + len] = '\0';
    r = pg_query_parse_protobuf(text);
    if (r.error == NULL)
        tree = pg_query__parse_result__unpack(NULL, r.parse_tree.len,
                                              (const uint8_t *)r.parse_tree.data);
    pg_query_free_protobuf_parse_result(r);
    if (tree != NULL && tree->n_stmts == 1 &&
        tree->stmts[0]->stmt->node_case == PG_QUERY__NODE__NODE_SELECT_STMT)
        sel = tree->stmts[0]->stmt->select_stmt;
    if (sel != NULL && sel->n_target_list == 1 && sel->n_from_clause == 0 &&
        sel->where_clause == NULL && sel->n_sort_clause == 0 &&
        sel->limit_count == NULL && sel->op ==
            PG_QUERY__SET_OPERATION__SETOP_NONE &&
        sel->target_list[0]->node_case == PG_QUERY__NODE__NODE_RES_TARGET &&
        sel->target_list[0]->res_target->val != NULL &&
        sel->target_list[0]->res_target->val->node_case ==
            PG_QUERY__NODE__NODE_TYPE_CAST)
        tc = sel->target_list[0]->res_target->val->type_cast;
    if (tc == NULL || tc->type_name == NULL || tc->arg == NULL ||
        tc->arg->node_case != PG_QUERY__NODE__NODE_A_CONST ||
        !tc->arg->a_const->isnull) {
        pg_query__parse_result__free_unpacked(tree, NULL);
        goto bad;
    }
    tc->type_name->location = location;
    rc = sql_type_lookup(s, tc->type_name, oid, &typmod);
    pg_query__parse_result__free_unpacked(tree, NULL);
    return rc;
bad:
    return sql_fail_at(s, location, KEEL_EINVAL, "42601",
                       "invalid type name \"%.*s\"", (int)(len > 200 ? 200 : len),
                       p);
}

/* A string read as regnamespacein reads it: digits are an oid, otherwise
 * a schema's name, quoted or not; 3F000 when none has it. */
static keel_status regnamespace_in(sql_session *s, const char *p, uint32_t len,
                                   int32_t location, uint32_t *oid)
{
    char parts[4][KEEL_NAME_LEN];
    int n;
    keel_status rc;

    split_names(p, len, parts, &n);
    if (n != 1)
        return sql_fail_at(s, location, KEEL_EINVAL, "42602",
                           "invalid name syntax");
    rc = namespace_oid(s, parts[0], oid);
    if (rc == KEEL_OK && *oid == 0)
        return sql_fail_at(s, location, KEEL_ENOENT, "3F000",
                           "schema \"%s\" does not exist", parts[0]);
    return rc;
}

void sql_split_names(const char *p, uint32_t len, char parts[4][KEEL_NAME_LEN],
                     int *n)
{
    split_names(p, len, parts, n);
}

keel_status sql_reg_in(sql_session *s, sql_func kind, const char *p,
                       uint32_t len, int32_t location, bool missing_ok,
                       uint32_t *oid, bool *missing)
{
    keel_status rc = KEEL_OK;
    bool digits = len > 0;

    *missing = false;
    *oid = 0;
    for (uint32_t i = 0; i < len; i++)
        digits = digits && p[i] >= '0' && p[i] <= '9';
    if (digits && len <= 10 && strtoull(p, NULL, 10) <= UINT32_MAX) {
        *oid = (uint32_t)strtoull(p, NULL, 10);
        return KEEL_OK;
    }
    if (kind == SQL_FUNC_REGCLASS)
        rc = sql_regclass_in(s, p, len, location, oid);
    else if (kind == SQL_FUNC_REGTYPE)
        rc = regtype_in(s, p, len, location, oid);
    else
        rc = regnamespace_in(s, p, len, location, oid);
    /* to_regclass() and its kin: NULL for a name nothing has (or a type
     * keel does not have), as PostgreSQL's give. */
    if (missing_ok && (rc == KEEL_ENOENT ||
                       (rc == KEEL_EINVAL && s->err != NULL &&
                        memcmp(s->err->sqlstate, "0A000", 5) == 0))) {
        *missing = true;
        *oid = 0;
        if (s->err != NULL)
            memset(s->err, 0, sizeof(*s->err));
        return KEEL_OK;
    }
    return rc;
}

keel_status sql_regclass_const(sql_session *s, sql_expr *a)
{
    uint32_t oid = 0;

    if (!a->u.value.isnull) {
        keel_status rc = sql_regclass_in(s, a->u.value.v.s.p,
                                         a->u.value.v.s.len, a->location,
                                         &oid);
        if (rc != KEEL_OK)
            return rc;
    }
    a->u.value.type = SQL_TYPE_OID;
    a->u.value.v.i = oid;
    a->type = SQL_TYPE_OID;
    return KEEL_OK;
}

/* 42883 for function name(types), with PostgreSQL's hint. */
static keel_status no_function(sql_session *s, int32_t location,
                               const char *name, const char *types)
{
    keel_status rc = sql_fail_at(s, location, KEEL_ETYPE, "42883",
                                 "function %s(%s) does not exist", name, types);

    snprintf(s->err->hint, sizeof(s->err->hint),
             "No function matches the given name and argument types. You "
             "might need to add explicit type casts.");
    return rc;
}

/* Argument *arg of function name where PostgreSQL takes a regclass, made
 * an oid expression (see the file's comment). */
keel_status sql_regclass_arg(sql_session *s, const char *name,
                             int32_t location, sql_expr **arg)
{
    sql_expr *a = *arg;

    if (a->kind == SQL_EXPR_FUNC && a->u.func == SQL_FUNC_REGCLASS) {
        *arg = a->args[0]; /* x::regclass: x, an oid already */
        return KEEL_OK;
    }
    if (a->kind == SQL_EXPR_CONST && a->type == SQL_TYPE_UNKNOWN)
        return sql_regclass_const(s, a);
    if (a->type == SQL_TYPE_REGCLASS) {
        s->expr_engine_reads++; /* its name read back */
        return sql_expr_coerce(s, arg, SQL_TYPE_OID);
    }
    if (!sql_type_is_int(a->type) && a->type != SQL_TYPE_UNKNOWN)
        return no_function(s, location, name, sql_type_name(a->type));
    return sql_expr_coerce(s, arg, SQL_TYPE_OID);
}

keel_status sql_size_analyse(sql_session *s, sql_expr *e, const char *name,
                             int32_t location)
{
    keel_status rc = KEEL_OK;

    switch (e->u.func) {
    case SQL_FUNC_PG_RELATION_SIZE:
    case SQL_FUNC_PG_TABLE_SIZE:
    case SQL_FUNC_PG_INDEXES_SIZE:
    case SQL_FUNC_PG_TOTAL_RELATION_SIZE:
        if (e->nargs == 2 && !sql_type_is_string(e->args[1]->type)) {
            char types[96];
            snprintf(types, sizeof(types), "%s, %s",
                     e->args[0]->kind == SQL_EXPR_FUNC &&
                             e->args[0]->u.func == SQL_FUNC_REGCLASS
                         ? "regclass"
                         : sql_type_name(e->args[0]->type),
                     sql_type_name(e->args[1]->type));
            return no_function(s, location, name, types);
        }
        rc = sql_regclass_arg(s, name, location, &e->args[0]);
        if (rc == KEEL_OK && e->nargs == 2)
            rc = sql_expr_coerce(s, &e->args[1], SQL_TYPE_TEXT);
        e->type = SQL_TYPE_INT8;
        s->expr_engine_reads++;
        return rc;
    case SQL_FUNC_PG_DATABASE_SIZE: {
        /* (name) or (oid); a literal is a name. */
        uint32_t t = e->args[0]->type;
        if (!sql_type_is_string(t) && !sql_type_is_int(t))
            return no_function(s, location, name, sql_type_name(t));
        rc = sql_expr_coerce(s, &e->args[0],
                             sql_type_is_string(t) ? SQL_TYPE_NAME
                                                   : SQL_TYPE_OID);
        e->type = SQL_TYPE_INT8;
        return rc;
    }
    case SQL_FUNC_PG_SIZE_PRETTY: {
        /* bigint's or numeric's: a smaller integer or a literal could be
         * either, as PostgreSQL finds. */
        uint32_t t = e->args[0]->type;
        if (t == SQL_TYPE_INT2 || t == SQL_TYPE_INT4 || t == SQL_TYPE_UNKNOWN) {
            rc = sql_fail_at(s, location, KEEL_ETYPE, "42725",
                             "function %s(%s) is not unique", name,
                             sql_type_name(t));
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Could not choose a best candidate function. You might "
                     "need to add explicit type casts.");
            return rc;
        }
        if (t != SQL_TYPE_INT8 && t != SQL_TYPE_NUMERIC)
            return no_function(s, location, name, sql_type_name(t));
        e->type = SQL_TYPE_TEXT;
        return KEEL_OK;
    }
    case SQL_FUNC_HAS_DATABASE_PRIVILEGE: {
        /* (name | oid, text). */
        uint32_t t = e->args[0]->type, u = e->args[1]->type;
        if ((!sql_type_is_string(t) && !sql_type_is_int(t)) ||
            !sql_type_is_string(u)) {
            char types[96];
            snprintf(types, sizeof(types), "%s, %s", sql_type_name(t),
                     sql_type_name(u));
            return no_function(s, location, name, types);
        }
        rc = sql_expr_coerce(s, &e->args[0],
                             sql_type_is_string(t) ? SQL_TYPE_NAME
                                                   : SQL_TYPE_OID);
        if (rc == KEEL_OK)
            rc = sql_expr_coerce(s, &e->args[1], SQL_TYPE_TEXT);
        e->type = SQL_TYPE_BOOL;
        return rc;
    }
    case SQL_FUNC_OBJ_DESCRIPTION:
    case SQL_FUNC_COL_DESCRIPTION:
    case SQL_FUNC_SHOBJ_DESCRIPTION: {
        /* (oid [, name]) and (oid, integer). */
        uint32_t want[2] = {SQL_TYPE_OID, e->u.func == SQL_FUNC_COL_DESCRIPTION
                                              ? SQL_TYPE_INT4
                                              : SQL_TYPE_NAME};
        /* x::regclass: x, its oid */
        if (e->nargs > 0 && e->args[0]->kind == SQL_EXPR_FUNC &&
            e->args[0]->u.func == SQL_FUNC_REGCLASS)
            e->args[0] = e->args[0]->args[0];
        for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++) {
            uint32_t t = e->args[i]->type;
            bool fits = want[i] == SQL_TYPE_NAME
                            ? sql_type_is_string(t)
                            : sql_type_is_int(t) || t == SQL_TYPE_UNKNOWN;
            if (!fits)
                return no_function(s, location, name, sql_type_name(t));
            rc = sql_expr_coerce(s, &e->args[i], want[i]);
        }
        e->type = SQL_TYPE_TEXT;
        return rc;
    }
    default:
        return sql_unsupported(s, location, "this function");
    }
}

/* ---- pg_size_pretty ---- */

/*
 * PostgreSQL's units: a size is shown in the first unit under whose limit
 * it stays, the last unit taking any size.  Sizes are carried from unit
 * to unit by division truncating toward zero, keeping one more bit than
 * the unit needs for a unit that rounds: it is then halved, rounding half
 * away from zero.  So 10239 bytes stay bytes, 10240 are 10 kB, and a kB
 * figure stays kB up to 20479 half-kB (10239.5 kB).
 */
typedef struct size_unit {
    const char *name;
    int64_t limit; /* in the unit's own terms (half-units when it rounds) */
    bool round;
    uint8_t bits; /* log2 of the unit's bytes */
} size_unit;

static const size_unit units[] = {
    {"bytes", 10 * 1024, false, 0},  {"kB", 20 * 1024 - 1, true, 10},
    {"MB", 20 * 1024 - 1, true, 20}, {"GB", 20 * 1024 - 1, true, 30},
    {"TB", 20 * 1024 - 1, true, 40}, {"PB", 20 * 1024 - 1, true, 50},
};
#define NUNITS (sizeof(units) / sizeof(units[0]))

/* The bits a size is divided by on its way from unit u to the next. */
static unsigned unit_shift(size_t u)
{
    return (unsigned)(units[u + 1].bits - units[u].bits -
                      (units[u + 1].round ? 1 : 0) + (units[u].round ? 1 : 0));
}

static keel_status pretty_int(sql_session *s, int64_t size, sql_value *out)
{
    char *p = sql_alloc(&s->arena, 40);

    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (size_t u = 0; u < NUNITS; u++) {
        /* |size| < limit, written so that INT64_MIN has no absolute
         * value to overflow. */
        if (u + 1 == NUNITS ||
            (size < units[u].limit && size > -units[u].limit)) {
            if (units[u].round)
                size = (size + (size < 0 ? -1 : 1)) / 2;
            snprintf(p, 40, "%lld %s", (long long)size, units[u].name);
            break;
        }
        size /= (int64_t)1 << unit_shift(u);
    }
    out->v.s.p = p;
    out->v.s.len = (uint32_t)strlen(p);
    return KEEL_OK;
}

static keel_status pretty_numeric(sql_session *s, const sql_value *a,
                                  sql_value *out)
{
    numeric size = NUMERIC_INIT, t = NUMERIC_INIT, abs = NUMERIC_INIT,
            lim = NUMERIC_INIT, one = NUMERIC_INIT, two = NUMERIC_INIT;
    numeric_status st = NUMERIC_OK;
    const char *unit = NULL;
    char *p;
    size_t n;
    keel_status rc = sql_numeric_get(s, a, &size);

    if (rc != KEEL_OK)
        return rc;
    st = numeric_from_int64(1, &one);
    if (st == NUMERIC_OK)
        st = numeric_from_int64(2, &two);
    for (size_t u = 0; st == NUMERIC_OK && u < NUNITS; u++) {
        bool below = false;
        if (u + 1 < NUNITS) {
            st = numeric_abs(&size, &abs);
            if (st == NUMERIC_OK)
                st = numeric_from_int64(units[u].limit, &lim);
            /* NaN compares above every number: never below. */
            below = st == NUMERIC_OK && numeric_cmp(&abs, &lim) < 0;
            numeric_free(&abs);
            numeric_free(&lim);
        }
        if (st != NUMERIC_OK)
            break;
        if (u + 1 == NUNITS || below) {
            if (units[u].round) {
                /* Away from zero by one, then halved, truncating. */
                bool neg = size.sign == NUMERIC_NEG;
                st = neg ? numeric_sub(&size, &one, &t)
                         : numeric_add(&size, &one, &t);
                numeric_free(&size);
                if (st == NUMERIC_OK)
                    st = numeric_div_scale(&t, &two, 0, false, &size);
                numeric_free(&t);
            }
            unit = units[u].name;
            break;
        }
        st = numeric_from_int64((int64_t)1 << unit_shift(u), &lim);
        if (st == NUMERIC_OK)
            st = numeric_div_scale(&size, &lim, 0, false, &t);
        numeric_free(&lim);
        numeric_free(&size);
        size = t;
        t = (numeric)NUMERIC_INIT;
    }
    numeric_free(&one);
    numeric_free(&two);
    if (st != NUMERIC_OK) {
        numeric_free(&size);
        return sql_numeric_fail(s, st, -1, NULL, 0, -1);
    }
    n = numeric_out_len(&size);
    p = sql_alloc(&s->arena, n + 8);
    if (p == NULL) {
        numeric_free(&size);
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    n = numeric_out(&size, p);
    numeric_free(&size);
    n += (size_t)snprintf(p + n, 8, " %s", unit);
    out->v.s.p = p;
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

/* ---- evaluation ---- */

/* Whether fork names one PostgreSQL has (every one but main is empty
 * here); 22023 with PostgreSQL's hint otherwise. */
static keel_status fork_main(sql_session *s, const sql_value *fork, bool *main)
{
    static const char *const forks[] = {"main", "fsm", "vm", "init"};

    for (size_t i = 0; i < sizeof(forks) / sizeof(forks[0]); i++)
        if (fork->v.s.len == strlen(forks[i]) &&
            memcmp(fork->v.s.p, forks[i], fork->v.s.len) == 0) {
            *main = i == 0;
            return KEEL_OK;
        }
    sql_fail(s, KEEL_EINVAL, "22023", "invalid fork name");
    snprintf(s->err->hint, sizeof(s->err->hint),
             "Valid fork names are \"main\", \"fsm\", \"vm\", and \"init\".");
    return KEEL_EINVAL;
}

/*
 * has_database_privilege(database, privileges): true for this database
 * (keel has no privileges: every role may do everything); 3D000 for
 * another database's name, NULL for another oid (as PostgreSQL answers
 * for a database that is gone); 22023 for a privilege PostgreSQL does
 * not know (CREATE, CONNECT, TEMPORARY or TEMP, each optionally WITH
 * GRANT OPTION, separated by commas, in any case).
 */
static keel_status database_privilege(sql_session *s, const sql_expr *e,
                                      const sql_value *a, sql_value *out)
{
    static const char *const privs[] = {"create", "connect", "temporary",
                                        "temp"};
    const char *db = sql_setting_get(s, "database");
    const char *p = a[1].v.s.p, *end = p + a[1].v.s.len;

    if (e->args[0]->type == SQL_TYPE_OID && a[0].v.i != 1) {
        out->isnull = true;
        return KEEL_OK;
    }
    if (e->args[0]->type != SQL_TYPE_OID &&
        (a[0].v.s.len != strlen(db) ||
         memcmp(a[0].v.s.p, db, a[0].v.s.len) != 0))
        return sql_fail(s, KEEL_ENOENT, "3D000",
                        "database \"%.*s\" does not exist", (int)a[0].v.s.len,
                        a[0].v.s.p);
    for (;;) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        const char *q = c != NULL ? c : end, *b = p, *t = q;
        bool known = false;
        while (b < t && (*b == ' ' || *b == '\t'))
            b++;
        while (t > b && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if ((size_t)(t - b) > 18 &&
            strncasecmp(t - 18, " with grant option", 18) == 0)
            t -= 18;
        for (size_t i = 0; i < sizeof(privs) / sizeof(privs[0]); i++)
            known = known || ((size_t)(t - b) == strlen(privs[i]) &&
                              strncasecmp(b, privs[i], strlen(privs[i])) == 0);
        if (!known)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "unrecognized privilege type: \"%.*s\"",
                            (int)(t - b), b);
        if (c == NULL)
            break;
        p = c + 1;
    }
    out->v.b = true;
    return KEEL_OK;
}

keel_status sql_size_eval(sql_session *s, const sql_expr *e, const sql_value *a,
                          sql_value *out)
{
    keel_relation_sizes rs;
    bool found = false, main = true;
    uint64_t bytes = 0;
    keel_status rc;

    out->type = e->type;
    out->isnull = false;
    switch (e->u.func) {
    case SQL_FUNC_PG_SIZE_PRETTY:
        if (e->args[0]->type == SQL_TYPE_NUMERIC)
            return pretty_numeric(s, &a[0], out);
        return pretty_int(s, a[0].v.i, out);
    case SQL_FUNC_OBJ_DESCRIPTION:
        /* a relation's (pg_class's, the catalog named or none) */
        if (e->nargs == 2 &&
            !(a[1].v.s.len == 8 && memcmp(a[1].v.s.p, "pg_class", 8) == 0)) {
            out->isnull = true;
            return KEEL_OK;
        }
        return sql_comment_get(s, (uint32_t)a[0].v.i, 0, out);
    case SQL_FUNC_COL_DESCRIPTION:
        if (a[1].v.i <= 0 || a[1].v.i > INT32_MAX) {
            out->isnull = true;
            return KEEL_OK;
        }
        return sql_comment_get(s, (uint32_t)a[0].v.i, (int32_t)a[1].v.i, out);
    case SQL_FUNC_SHOBJ_DESCRIPTION:
        out->isnull = true; /* no shared objects have comments */
        return KEEL_OK;
    case SQL_FUNC_HAS_DATABASE_PRIVILEGE:
        return database_privilege(s, e, a, out);
    case SQL_FUNC_PG_DATABASE_SIZE: {
        /* This database only: pg_database's one row, oid 1. */
        const char *db = sql_setting_get(s, "database");
        if (e->args[0]->type == SQL_TYPE_OID && a[0].v.i != 1) {
            out->isnull = true;
            return KEEL_OK;
        }
        if (e->args[0]->type != SQL_TYPE_OID &&
            (a[0].v.s.len != strlen(db) ||
             memcmp(a[0].v.s.p, db, a[0].v.s.len) != 0))
            return sql_fail(s, KEEL_ENOENT, "3D000",
                            "database \"%.*s\" does not exist",
                            (int)a[0].v.s.len, a[0].v.s.p);
        rc = keel_database_size(s->ks, &bytes);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        out->v.i = (int64_t)bytes;
        return KEEL_OK;
    }
    default:
        break;
    }
    if (e->nargs == 2) {
        rc = fork_main(s, &a[1], &main);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = keel_relation_size(s->ks, (uint32_t)a[0].v.i, &rs, &found);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (!found) {
        out->isnull = true; /* dropped, or never was: as PostgreSQL */
        return KEEL_OK;
    }
    switch (e->u.func) {
    case SQL_FUNC_PG_RELATION_SIZE:
        bytes = main ? rs.bytes : 0;
        break;
    case SQL_FUNC_PG_TABLE_SIZE:
        bytes = rs.bytes;
        break;
    case SQL_FUNC_PG_INDEXES_SIZE:
        bytes = rs.index_bytes;
        break;
    default: /* pg_total_relation_size */
        bytes = rs.bytes + rs.index_bytes;
        break;
    }
    out->v.i = (int64_t)bytes;
    return KEEL_OK;
}
