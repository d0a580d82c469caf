/*
 * sql_ddl.c: CREATE TABLE, DROP TABLE and SCHEMA, CREATE INDEX, and
 * VACUUM / ANALYZE, over the engine's transactional DDL.
 *
 * Column types map onto keel's: smallint, integer, bigint, double
 * precision, boolean, text, varchar and varchar(n), char(n),
 * name and oid.  Column defaults are kept by the SQL layer
 * (sql_default.c).  A column constraint or option keel cannot keep
 * (CHECK, a foreign key) fails with 0A000 rather
 * than being dropped silently; storage options (fillfactor) are accepted
 * and have no effect.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

/* The integer type of smallserial, serial or bigserial (serial2, 4,
 * 8), else 0. */
static keel_type serial_type(const PgQuery__TypeName *tn)
{
    const char *n = tn != NULL && tn->n_names == 1 && tn->n_array_bounds == 0
                        ? sql_node_string(tn->names[0])
                        : NULL;

    if (n == NULL)
        return 0;
    if (strcmp(n, "smallserial") == 0 || strcmp(n, "serial2") == 0)
        return KEEL_INT2;
    if (strcmp(n, "serial") == 0 || strcmp(n, "serial4") == 0)
        return KEEL_INT4;
    if (strcmp(n, "bigserial") == 0 || strcmp(n, "serial8") == 0)
        return KEEL_INT8;
    return 0;
}

/* nextval('seq'::regclass), as PostgreSQL stores a SERIAL column's
 * default (qualified when the table is), made in the arena; or for an
 * identity column (fname) keel_identity_always('seq'::regclass) or
 * keel_identity_by_default(...), which run as nextval() does and say
 * what the column is (sql_default_identity()). */
static keel_status serial_default(sql_session *s, const char *schema,
                                  const char *seq, const char *fname,
                                  const PgQuery__Node **out)
{
    PgQuery__Node *fn = sql_alloc(&s->arena, sizeof(*fn));
    PgQuery__FuncCall *fc = sql_alloc(&s->arena, sizeof(*fc));
    PgQuery__Node *name = sql_alloc(&s->arena, sizeof(*name));
    PgQuery__String *namestr = sql_alloc(&s->arena, sizeof(*namestr));
    PgQuery__Node *cast = sql_alloc(&s->arena, sizeof(*cast));
    PgQuery__TypeCast *tc = sql_alloc(&s->arena, sizeof(*tc));
    PgQuery__Node *lit = sql_alloc(&s->arena, sizeof(*lit));
    PgQuery__AConst *ac = sql_alloc(&s->arena, sizeof(*ac));
    PgQuery__String *sv = sql_alloc(&s->arena, sizeof(*sv));
    PgQuery__TypeName *tn = sql_alloc(&s->arena, sizeof(*tn));
    PgQuery__Node *tname = sql_alloc(&s->arena, sizeof(*tname));
    PgQuery__String *tstr = sql_alloc(&s->arena, sizeof(*tstr));
    PgQuery__Node **fnames = sql_alloc(&s->arena, sizeof(*fnames));
    PgQuery__Node **args = sql_alloc(&s->arena, sizeof(*args));
    PgQuery__Node **tnames = sql_alloc(&s->arena, sizeof(*tnames));
    char *text = sql_alloc(&s->arena, 2 * KEEL_NAME_LEN + 2);

    if (fn == NULL || fc == NULL || name == NULL || namestr == NULL ||
        cast == NULL || tc == NULL || lit == NULL || ac == NULL ||
        sv == NULL || tn == NULL || tname == NULL || tstr == NULL ||
        fnames == NULL || args == NULL || tnames == NULL || text == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (schema != NULL)
        snprintf(text, 2 * KEEL_NAME_LEN + 2, "%s.%s", schema, seq);
    else
        snprintf(text, 2 * KEEL_NAME_LEN + 2, "%s", seq);
    *namestr = (PgQuery__String)PG_QUERY__STRING__INIT;
    namestr->sval = (char *)fname;
    *name = (PgQuery__Node)PG_QUERY__NODE__INIT;
    name->node_case = PG_QUERY__NODE__NODE_STRING;
    name->string = namestr;
    *sv = (PgQuery__String)PG_QUERY__STRING__INIT;
    sv->sval = text;
    *ac = (PgQuery__AConst)PG_QUERY__A__CONST__INIT;
    ac->val_case = PG_QUERY__A__CONST__VAL_SVAL;
    ac->sval = sv;
    ac->location = -1;
    *lit = (PgQuery__Node)PG_QUERY__NODE__INIT;
    lit->node_case = PG_QUERY__NODE__NODE_A_CONST;
    lit->a_const = ac;
    *tstr = (PgQuery__String)PG_QUERY__STRING__INIT;
    tstr->sval = "regclass";
    *tname = (PgQuery__Node)PG_QUERY__NODE__INIT;
    tname->node_case = PG_QUERY__NODE__NODE_STRING;
    tname->string = tstr;
    tnames[0] = tname;
    *tn = (PgQuery__TypeName)PG_QUERY__TYPE_NAME__INIT;
    tn->n_names = 1;
    tn->names = tnames;
    tn->typemod = -1;
    tn->location = -1;
    *tc = (PgQuery__TypeCast)PG_QUERY__TYPE_CAST__INIT;
    tc->arg = lit;
    tc->type_name = tn;
    tc->location = -1;
    *cast = (PgQuery__Node)PG_QUERY__NODE__INIT;
    cast->node_case = PG_QUERY__NODE__NODE_TYPE_CAST;
    cast->type_cast = tc;
    fnames[0] = name;
    args[0] = cast;
    *fc = (PgQuery__FuncCall)PG_QUERY__FUNC_CALL__INIT;
    fc->n_funcname = 1;
    fc->funcname = fnames;
    fc->n_args = 1;
    fc->args = args;
    fc->funcformat = PG_QUERY__COERCION_FORM__COERCE_EXPLICIT_CALL;
    fc->location = -1;
    *fn = (PgQuery__Node)PG_QUERY__NODE__INIT;
    fn->node_case = PG_QUERY__NODE__NODE_FUNC_CALL;
    fn->func_call = fc;
    *out = fn;
    return KEEL_OK;
}

/*
 * An identity column's sequence, <table>_<column>_seq as a SERIAL's,
 * owned by the table, its options con's (START WITH, INCREMENT BY, ...)
 * within the column's type, and its default (serial_default()).
 */
static keel_status identity_make(sql_session *s, const char *schema,
                                 const char *table, const keel_column *c,
                                 const PgQuery__Constraint *con,
                                 const PgQuery__Node **def)
{
    char seq[KEEL_NAME_LEN];
    const char *seq_schema = schema;
    sql_seq_opts o;
    bool made = false;
    PgQuery__Node **opts =
        sql_alloc(&s->arena, (con->n_options + 1) * sizeof(*opts));
    size_t nopts = 0;
    keel_status rc;

    if (opts == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (c->type != KEEL_INT2 && c->type != KEEL_INT4 && c->type != KEEL_INT8)
        return sql_fail(s, KEEL_ETYPE, "22023",
                        "identity column type must be smallint, integer, or "
                        "bigint");
    snprintf(seq, sizeof(seq), "%.29s_%.29s_seq", table, c->name);
    /* SEQUENCE NAME [schema.]name, as pg_dump writes it; the others are
     * CREATE SEQUENCE's */
    for (size_t i = 0; i < con->n_options; i++) {
        const PgQuery__DefElem *d = con->options[i]->def_elem;
        const PgQuery__List *l =
            d->arg != NULL && d->arg->node_case == PG_QUERY__NODE__NODE_LIST
                ? d->arg->list
                : NULL;
        if (strcmp(d->defname, "sequence_name") != 0) {
            opts[nopts++] = con->options[i];
            continue;
        }
        if (l == NULL || l->n_items < 1 || l->n_items > 2 ||
            sql_node_string(l->items[l->n_items - 1]) == NULL ||
            (l->n_items == 2 && sql_node_string(l->items[0]) == NULL))
            return sql_unsupported(s, d->location, "this SEQUENCE NAME");
        snprintf(seq, sizeof(seq), "%s",
                 sql_node_string(l->items[l->n_items - 1]));
        if (l->n_items == 2)
            seq_schema = sql_node_string(l->items[0]);
    }
    rc = sql_sequence_options(s, opts, nopts,
                              c->type == KEEL_INT2   ? INT16_MIN
                              : c->type == KEEL_INT4 ? INT32_MIN
                                                     : INT64_MIN,
                              c->type == KEEL_INT2   ? INT16_MAX
                              : c->type == KEEL_INT4 ? INT32_MAX
                                                     : INT64_MAX,
                              &o);
    if (rc != KEEL_OK)
        return rc;
    if (strcmp(seq_schema != NULL ? seq_schema : "public",
               schema != NULL ? schema : "public") != 0)
        return sql_fail(s, KEEL_EINVAL, "55000",
                        "sequence must be in same schema as table it is "
                        "linked to");
    rc = sql_sequence_create(s, schema != NULL ? schema : "public", seq,
                             o.start, o.inc, o.min, o.max, o.cycle,
                             schema != NULL ? schema : "public", table, false,
                             &made);
    if (rc != KEEL_OK)
        return rc;
    return serial_default(s, schema, seq,
                          con->generated_when != NULL &&
                                  con->generated_when[0] == 'a'
                              ? "keel_identity_always"
                              : "keel_identity_by_default",
                          def);
}

/* The keel column type of a SQL type (0A000 for one keel lacks). */
static keel_status type_column(sql_session *s, uint32_t type, int32_t typmod,
                               int32_t location, keel_column *col);

static keel_status column_type(sql_session *s, const PgQuery__TypeName *tn,
                               keel_column *col)
{
    uint32_t type;
    int32_t typmod;
    keel_status rc = sql_type_lookup(s, tn, &type, &typmod);

    if (rc != KEEL_OK)
        return rc;
    return type_column(s, type, typmod, tn->location, col);
}

/* A column of SQL type `type` (typmod, -1 for none): its keel type and
 * length. */
static keel_status type_column(sql_session *s, uint32_t type, int32_t typmod,
                               int32_t location, keel_column *col)
{
    col->charlen = 0;
    switch (type) {
    case SQL_TYPE_BOOL:
        col->type = KEEL_BOOL;
        break;
    case SQL_TYPE_INT2:
        col->type = KEEL_INT2;
        break;
    case SQL_TYPE_INT4:
        col->type = KEEL_INT4;
        break;
    case SQL_TYPE_INT8:
        col->type = KEEL_INT8;
        break;
    case SQL_TYPE_OID:
        col->type = KEEL_OID;
        break;
    case SQL_TYPE_FLOAT8:
        col->type = KEEL_FLOAT8;
        break;
    case SQL_TYPE_NAME:
        col->type = KEEL_NAME;
        break;
    case SQL_TYPE_TEXT:
    case SQL_TYPE_REGCLASS: /* kept as the name it printed as */
        col->type = KEEL_TEXT;
        break;
    case SQL_TYPE_TIMESTAMP:
        col->type = KEEL_TIMESTAMP;
        break;
    case SQL_TYPE_TIMESTAMPTZ:
        col->type = KEEL_TIMESTAMPTZ;
        break;
    case SQL_TYPE_DATE:
        col->type = KEEL_DATE;
        break;
    case SQL_TYPE_UUID:
        col->type = KEEL_UUID;
        break;
    case SQL_TYPE_BYTEA:
        col->type = KEEL_BYTEA;
        break;
    case SQL_TYPE_JSON:
        col->type = KEEL_JSON;
        break;
    case SQL_TYPE_JSONB:
        col->type = KEEL_JSONB;
        break;
    case SQL_TYPE_NUMERIC:
        col->type = KEEL_NUMERIC;
        return sql_numeric_charlen(s, typmod, location, &col->charlen);
    case SQL_TYPE_VARCHAR:
        if (typmod > 65535)
            return sql_unsupported(s, location, "varchar(n) over 65535");
        col->type = KEEL_TEXT;
        col->charlen = typmod > 0 ? (uint16_t)typmod : 0;
        break;
    case SQL_TYPE_BPCHAR:
        if (typmod < 0 || typmod > 4096)
            return sql_unsupported(s, location,
                                   typmod < 0 ? "bpchar without a length"
                                              : "char(n) over 4096");
        col->type = KEEL_CHAR;
        col->charlen = (uint16_t)typmod;
        break;
    default:
        return sql_unsupported(s, location, "this column type");
    }
    return KEEL_OK;
}

/* Adds column name's number to keys (42703 if no such column, 42701 if
 * named twice). */
/* Whether a column of type can be an index's key: json has no order
 * (PostgreSQL's 42704); jsonb's is not the one its bytes have, so keel
 * does not index it (0A000). */
static keel_status key_type_ok(sql_session *s, keel_type type,
                               int32_t location)
{
    keel_status rc;

    if (type == KEEL_JSONB)
        return sql_unsupported(s, location, "btree indexes on jsonb");
    if (type != KEEL_JSON)
        return KEEL_OK;
    rc = sql_fail_at(s, location, KEEL_ETYPE, "42704",
                     "data type json has no default operator class for "
                     "access method \"btree\"");
    if (s->err != NULL)
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "You must specify an operator class for the index or define "
                 "a default operator class for the data type.");
    return rc;
}

static keel_status key_add(sql_session *s, const keel_column *cols,
                           uint16_t ncols, const char *name, int32_t location,
                           uint16_t *keys, uint16_t *nkeys)
{
    for (uint16_t i = 0; i < ncols; i++) {
        if (strcmp(cols[i].name, name) != 0)
            continue;
        for (uint16_t k = 0; k < *nkeys; k++)
            if (keys[k] == i + 1)
                return sql_fail_at(s, location, KEEL_EINVAL, "42701",
                                   "column \"%s\" appears twice in primary "
                                   "key constraint",
                                   name);
        if (*nkeys >= 16)
            return sql_fail_at(s, location, KEEL_ETOOBIG, "54011",
                               "cannot use more than 16 columns in an index");
        keys[(*nkeys)++] = (uint16_t)(i + 1);
        return key_type_ok(s, cols[i].type, location);
    }
    return sql_fail_at(s, location, KEEL_ENOENT, "42703",
                       "column \"%s\" named in key does not exist", name);
}

/* Storage options: fillfactor (10..100) is accepted; others are not. */
static keel_status table_options(sql_session *s, PgQuery__Node **opts,
                                 size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const PgQuery__DefElem *d;
        if (opts[i]->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            return sql_unsupported(s, -1, "this table option");
        d = opts[i]->def_elem;
        if (strcmp(d->defname, "fillfactor") != 0)
            return sql_unsupported(s, d->location, "this storage parameter");
    }
    return KEEL_OK;
}

/* A unique index to make after the table: its columns. */
typedef struct unique_def {
    uint16_t keys[16];
    uint16_t nkeys;
    const char *name;
} unique_def;

/* A default expression must be analysable without columns, and a
 * constant one must be assignable to its column, as PostgreSQL checks
 * at CREATE TABLE. */
static keel_status default_check(sql_session *s, const keel_column *c,
                                 const PgQuery__Node *expr)
{
    keel_column_info ci = {.type = c->type, .charlen = c->charlen};
    uint32_t type = sql_column_type(&ci);
    sql_expr *e;
    sql_value v;
    keel_status rc;

    if (expr == NULL)
        return KEEL_OK;
    s->clause = "DEFAULT expressions";
    rc = sql_expr_prepare_for(s, NULL, expr, type, &e);
    s->clause = NULL;
    /* Without columns in scope, an unknown column is a column reference. */
    if (rc != KEEL_OK && s->err != NULL && memcmp(s->err->sqlstate, "42703", 5) == 0) {
        memcpy(s->err->sqlstate, "0A000", 5);
        snprintf(s->err->message, sizeof(s->err->message),
                 "cannot use column reference in DEFAULT expression");
    }
    if (rc != KEEL_OK || e->kind != SQL_EXPR_CONST)
        return rc;
    v = e->u.value;
    if (v.isnull)
        return KEEL_OK;
    /* The type only: a length is checked when a row takes the value. */
    rc = sql_value_cast(s, &v, type, -1, false, e->location);
    if (rc == KEEL_ETYPE && s->err != NULL) {
        snprintf(s->err->message, sizeof(s->err->message),
                 "column \"%s\" is of type %s but default expression is of "
                 "type %s",
                 c->name, sql_type_name(type), sql_type_name(e->u.value.type));
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "You will need to rewrite or cast the expression.");
    }
    return rc;
}

/* IF NOT EXISTS: *exists when rv names a relation already, which is
 * then reported as PostgreSQL reports it (a NOTICE, the command's tag). */
static keel_status exists_skip(sql_session *s, const char *schema,
                               const PgQuery__RangeVar *rv, const char *tag,
                               bool *exists)
{
    char msg[160];
    keel_status rc = keel_relation_exists(
        s->ks, schema != NULL ? schema : "public", rv->relname, exists);

    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (!*exists)
        return KEEL_OK;
    snprintf(msg, sizeof(msg), "relation \"%s\" already exists, skipping",
             rv->relname);
    if (s->sink->notice != NULL &&
        s->sink->notice(s->sink->ctx, "NOTICE", "42P07", msg) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return sql_complete(s, "%s", tag);
}

keel_status sql_exec_create_table(sql_session *s, const PgQuery__CreateStmt *st)
{
    const PgQuery__RangeVar *rv = st->relation;
    const char *schema =
        rv->schemaname != NULL && rv->schemaname[0] != '\0' ? rv->schemaname : NULL;
    keel_column *cols;
    const PgQuery__Node **defs;
    keel_type *serial;
    const PgQuery__Constraint **ident;
    sql_check_def *checks;
    sql_fkey_def *fkeys;
    uint16_t ncols = 0, pkey[16], npkey = 0, nuniq = 0, nchecks = 0,
             nfkeys = 0;
    unique_def *uniq;
    keel_table_info created = {0};
    bool exists = false;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK; /* changes things: nothing to analyse first */

    if (rv->relpersistence != NULL && rv->relpersistence[0] == 't')
        return sql_unsupported(s, rv->location, "temporary tables");
    if (rv->relpersistence != NULL && rv->relpersistence[0] == 'u')
        return sql_unsupported(s, rv->location, "unlogged tables");
    if (st->n_inh_relations > 0)
        return sql_unsupported(s, rv->location, "INHERITS");
    if (st->partspec != NULL || st->partbound != NULL)
        return sql_unsupported(s, rv->location, "partitioned tables");
    if (st->of_typename != NULL)
        return sql_unsupported(s, rv->location, "typed tables");
    rc = table_options(s, st->options, st->n_options);
    if (rc != KEEL_OK)
        return rc;
    cols = sql_alloc(&s->arena, (st->n_table_elts + 1) * sizeof(*cols));
    uniq = sql_alloc(&s->arena, (st->n_table_elts + 1) * sizeof(*uniq));
    defs = sql_alloc(&s->arena, (st->n_table_elts + 1) * sizeof(*defs));
    serial = sql_alloc(&s->arena, (st->n_table_elts + 1) * sizeof(*serial));
    ident = sql_alloc(&s->arena, (st->n_table_elts + 1) * sizeof(*ident));
    {
        size_t ncon = 0;
        for (size_t i = 0; i < st->n_table_elts; i++)
            ncon += st->table_elts[i]->node_case ==
                            PG_QUERY__NODE__NODE_COLUMN_DEF
                        ? st->table_elts[i]->column_def->n_constraints
                        : 1;
        checks = ncon < UINT16_MAX
                     ? sql_alloc(&s->arena, (ncon + 1) * sizeof(*checks))
                     : NULL;
        fkeys = ncon < UINT16_MAX
                    ? sql_alloc(&s->arena, (ncon + 1) * sizeof(*fkeys))
                    : NULL;
    }
    if (cols == NULL || uniq == NULL || defs == NULL || serial == NULL ||
        ident == NULL || checks == NULL || fkeys == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    /* Columns first, so that table constraints may name any of them. */
    for (size_t i = 0; i < st->n_table_elts; i++) {
        const PgQuery__Node *el = st->table_elts[i];
        const PgQuery__ColumnDef *cd;
        keel_column *c;
        if (el->node_case == PG_QUERY__NODE__NODE_CONSTRAINT)
            continue;
        if (el->node_case != PG_QUERY__NODE__NODE_COLUMN_DEF)
            return sql_unsupported(s, -1, "LIKE in CREATE TABLE");
        if (ncols >= 256)
            return sql_fail(s, KEEL_ETOOBIG, "54011",
                            "tables can have at most 256 columns");
        cd = el->column_def;
        defs[ncols] = NULL;
        ident[ncols] = NULL;
        c = &cols[ncols++];
        memset(c, 0, sizeof(*c));
        c->name = cd->colname;
        serial[ncols - 1] = serial_type(cd->type_name);
        if (serial[ncols - 1] != 0) {
            /* smallserial, serial, bigserial: an integer NOT NULL whose
             * default is the next value of a sequence of its own. */
            c->type = serial[ncols - 1];
            c->notnull = true;
        } else {
            rc = column_type(s, cd->type_name, c);
            if (rc != KEEL_OK)
                return rc;
        }
        if (cd->raw_default != NULL || cd->identity[0] != '\0' ||
            cd->generated[0] != '\0')
            return sql_unsupported(s, cd->location, "column defaults");
        c->notnull = c->notnull || cd->is_not_null;
        for (size_t k = 0; k < cd->n_constraints; k++) {
            const PgQuery__Constraint *con = cd->constraints[k]->constraint;
            switch (con->contype) {
            case PG_QUERY__CONSTR_TYPE__CONSTR_NOTNULL:
                c->notnull = true;
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_NULL:
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY:
                if (npkey > 0)
                    return sql_fail_at(s, con->location, KEEL_EINVAL, "42P16",
                                       "multiple primary keys for table \"%s\" "
                                       "are not allowed",
                                       rv->relname);
                pkey[npkey++] = ncols;
                rc = key_type_ok(s, c->type, con->location);
                if (rc != KEEL_OK)
                    return rc;
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE:
                rc = key_type_ok(s, c->type, con->location);
                if (rc != KEEL_OK)
                    return rc;
                uniq[nuniq].keys[0] = ncols;
                uniq[nuniq].nkeys = 1;
                uniq[nuniq++].name = con->conname[0] != '\0' ? con->conname : NULL;
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_DEFAULT:
                if (defs[ncols - 1] != NULL)
                    return sql_fail_at(s, con->location, KEEL_EINVAL, "42601",
                                       "multiple default values specified for "
                                       "column \"%s\" of table \"%s\"",
                                       c->name, rv->relname);
                rc = default_check(s, c, con->raw_expr);
                if (rc != KEEL_OK)
                    return rc;
                /* DEFAULT NULL is what every column has. */
                if (con->raw_expr != NULL &&
                    !(con->raw_expr->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                      con->raw_expr->a_const->isnull))
                    defs[ncols - 1] = con->raw_expr;
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_IDENTITY:
                if (ident[ncols - 1] != NULL)
                    return sql_fail_at(s, con->location, KEEL_EINVAL, "42601",
                                       "multiple identity specifications for "
                                       "column \"%s\" of table \"%s\"",
                                       c->name, rv->relname);
                ident[ncols - 1] = con;
                c->notnull = true;
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_CHECK:
                checks[nchecks++] = (sql_check_def){
                    .name = con->conname[0] != '\0' ? con->conname : NULL,
                    .expr = con->raw_expr};
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN:
                fkeys[nfkeys++] = (sql_fkey_def){
                    .con = con, .col = ncols, .deferrable = -1, .deferred = -1};
                break;
            case PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_DEFERRABLE:
            case PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_NOT_DEFERRABLE:
            case PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_DEFERRED:
            case PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_IMMEDIATE: {
                /* of the constraint before it: a foreign key's are kept
                 * (sql_fkey.c), another's may only say what it is */
                const PgQuery__Constraint *prev =
                    k > 0 ? cd->constraints[k - 1]->constraint : NULL;
                bool on = con->contype ==
                              PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_DEFERRABLE ||
                          con->contype ==
                              PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_DEFERRED;
                for (size_t j = k; prev != NULL &&
                                   prev->contype >= PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_DEFERRABLE &&
                                   j > 1;
                     j--)
                    prev = cd->constraints[j - 2]->constraint;
                if (prev != NULL &&
                    prev->contype == PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN &&
                    nfkeys > 0) {
                    sql_fkey_def *fd = &fkeys[nfkeys - 1];
                    if (con->contype ==
                            PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_DEFERRABLE ||
                        con->contype ==
                            PG_QUERY__CONSTR_TYPE__CONSTR_ATTR_NOT_DEFERRABLE)
                        fd->deferrable = on;
                    else
                        fd->deferred = on;
                    if (fd->deferred > 0 && fd->deferrable == 0)
                        return sql_fail_at(s, con->location, KEEL_EINVAL,
                                           "42601",
                                           "constraint declared INITIALLY "
                                           "DEFERRED must be DEFERRABLE");
                } else if (on) {
                    return sql_unsupported(s, con->location,
                                           "DEFERRABLE constraints but "
                                           "foreign keys");
                }
                break;
            }
            default:
                return sql_unsupported(s, con->location,
                                       "this column constraint");
            }
            /* the second of the two, where PostgreSQL points */
            if (defs[ncols - 1] != NULL && ident[ncols - 1] != NULL)
                return sql_fail_at(s, con->location, KEEL_EINVAL, "42601",
                                   "both default and identity specified for "
                                   "column \"%s\" of table \"%s\"",
                                   c->name, rv->relname);
        }
        if (ident[ncols - 1] != NULL && serial[ncols - 1] == 0 &&
            c->type != KEEL_INT2 && c->type != KEEL_INT4 &&
            c->type != KEEL_INT8)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "identity column type must be smallint, integer, "
                            "or bigint");
    }
    if (ncols == 0)
        return sql_unsupported(s, rv->location, "tables without columns");
    for (size_t i = 0; i < st->n_table_elts; i++) {
        const PgQuery__Node *el = st->table_elts[i];
        const PgQuery__Constraint *con;
        uint16_t *keys, *nkeys;
        if (el->node_case != PG_QUERY__NODE__NODE_CONSTRAINT)
            continue;
        con = el->constraint;
        if (con->contype == PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY) {
            if (npkey > 0)
                return sql_fail_at(s, con->location, KEEL_EINVAL, "42P16",
                                   "multiple primary keys for table \"%s\" are "
                                   "not allowed",
                                   rv->relname);
            keys = pkey;
            nkeys = &npkey;
        } else if (con->contype == PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE) {
            uniq[nuniq].nkeys = 0;
            uniq[nuniq].name = con->conname[0] != '\0' ? con->conname : NULL;
            keys = uniq[nuniq].keys;
            nkeys = &uniq[nuniq].nkeys;
            nuniq++;
        } else if (con->contype == PG_QUERY__CONSTR_TYPE__CONSTR_CHECK) {
            checks[nchecks++] = (sql_check_def){
                .name = con->conname[0] != '\0' ? con->conname : NULL,
                .expr = con->raw_expr};
            continue;
        } else if (con->contype == PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN) {
            fkeys[nfkeys++] = (sql_fkey_def){
                .con = con, .col = 0, .deferrable = -1, .deferred = -1};
            continue;
        } else {
            return sql_unsupported(s, con->location, "this table constraint");
        }
        if (con->n_including > 0)
            return sql_unsupported(s, con->location, "INCLUDE");
        for (size_t k = 0; k < con->n_keys; k++) {
            const char *name = sql_node_string(con->keys[k]);
            rc = key_add(s, cols, ncols, name != NULL ? name : "", con->location,
                         keys, nkeys);
            if (rc != KEEL_OK)
                return rc;
        }
    }
    if (st->if_not_exists) {
        rc = exists_skip(s, schema, rv, "CREATE TABLE", &exists);
        if (rc != KEEL_OK || exists)
            return rc;
    }
    {
        /* A view's name is a relation's in PostgreSQL's one namespace. */
        const PgQuery__SelectStmt *vq;
        PgQuery__Alias *va;
        bool view = false;
        rc = sql_view_find(s, schema, rv->relname, &vq, &va, &view);
        if (rc == KEEL_OK && view)
            rc = sql_fail(s, KEEL_EEXIST, "42P07",
                          "relation \"%s\" already exists", rv->relname);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = keel_create_table(s->ks, schema, rv->relname, cols, ncols, pkey, npkey);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    for (uint16_t u = 0; u < nuniq; u++) {
        char name[KEEL_NAME_LEN + 16];
        if (uniq[u].name != NULL) {
            snprintf(name, sizeof(name), "%s", uniq[u].name);
        } else {
            /* PostgreSQL's <table>_<columns>_key, numbered while a
             * relation or a constraint named in the statement has it */
            char cn[2 * KEEL_NAME_LEN];
            size_t used = 0;
            cn[0] = '\0';
            for (uint16_t k = 0; k < uniq[u].nkeys && used < sizeof(cn); k++)
                used += (size_t)snprintf(cn + used, sizeof(cn) - used, "%s%s",
                                         k ? "_" : "",
                                         cols[uniq[u].keys[k] - 1].name);
            for (unsigned n = 0;; n++) {
                char label[16];
                bool taken = false;
                snprintf(label, sizeof(label), n ? "key%u" : "key", n);
                sql_object_name(rv->relname, cn, label, name, sizeof(name));
                for (uint16_t v = 0; v < nuniq && !taken; v++)
                    taken = uniq[v].name != NULL &&
                            strcmp(uniq[v].name, name) == 0;
                if (!taken) {
                    rc = keel_relation_exists(
                        s->ks, schema != NULL ? schema : "public", name, &taken);
                    if (rc != KEEL_OK)
                        return sql_fail_engine(s, rc);
                }
                if (!taken)
                    break;
            }
        }
        rc = keel_create_index(s->ks, schema, rv->relname, name, uniq[u].keys,
                               uniq[u].nkeys, true);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        /* a constraint's index (sql_unique.c) */
        if (created.oid == 0) {
            rc = keel_table_describe(s->ks, schema, rv->relname, &created,
                                     NULL, 0);
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
        }
        rc = sql_unique_add(s, created.oid, name);
        if (rc != KEEL_OK)
            return rc;
    }
    for (uint16_t c = 0; c < ncols; c++) {
        char seq[KEEL_NAME_LEN];
        bool made = false;
        if (serial[c] == 0)
            continue;
        if (defs[c] != NULL)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "multiple default values specified for column "
                            "\"%s\" of table \"%s\"",
                            cols[c].name, rv->relname);
        snprintf(seq, sizeof(seq), "%.29s_%.29s_seq", rv->relname,
                 cols[c].name);
        rc = sql_sequence_create(
            s, schema != NULL ? schema : "public", seq, 1, 1, 1,
            serial[c] == KEEL_INT2   ? INT16_MAX
            : serial[c] == KEEL_INT4 ? INT32_MAX
                                     : INT64_MAX,
            false, schema != NULL ? schema : "public", rv->relname, false,
            &made);
        if (rc == KEEL_OK)
            rc = serial_default(s, schema, seq, "nextval", &defs[c]);
        if (rc != KEEL_OK)
            return rc;
    }
    for (uint16_t c = 0; c < ncols; c++) {
        if (ident[c] == NULL)
            continue;
        if (defs[c] != NULL)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "both default and identity specified for column "
                            "\"%s\" of table \"%s\"",
                            cols[c].name, rv->relname);
        rc = identity_make(s, schema, rv->relname, &cols[c], ident[c],
                           &defs[c]);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = sql_defaults_store(s, schema, rv->relname, defs, ncols);
    if (rc == KEEL_OK)
        rc = sql_checks_define(s, schema, rv->relname, rv->relname, checks,
                               nchecks);
    if (rc == KEEL_OK)
        rc = sql_fkeys_define(s, schema, rv->relname, fkeys, nfkeys, false);
    if (rc != KEEL_OK)
        return rc;
    return sql_complete(s, "CREATE TABLE");
}

/* DROP INDEX of one index, with PostgreSQL's errors. */
static keel_status drop_index(sql_session *s, const char *schema,
                              const char *name, bool missing_ok)
{
    uint32_t oid = 0;
    keel_status rc = sql_relation_oid(s, schema, name, true, &oid);
    const char *msg;

    if (rc == KEEL_OK && oid != 0) {
        /* a UNIQUE constraint's index goes with the constraint only */
        char table[KEEL_NAME_LEN];
        bool owned = false;
        rc = sql_unique_index_owner(s, schema != NULL ? schema : "public",
                                    name, table, &owned);
        if (rc == KEEL_OK && owned) {
            sql_fail(s, KEEL_EINVAL, "2BP01",
                     "cannot drop index %s because constraint %s on table %s "
                     "requires it",
                     name, name, table);
            if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "You can drop constraint %s on table %s instead.",
                         name, table);
            return KEEL_EINVAL;
        }
    }
    if (rc == KEEL_OK && oid != 0)
        rc = sql_fkeys_index_check(s, 0, schema != NULL ? schema : "public",
                                   name, false);
    if (rc != KEEL_OK)
        return rc;
    rc = keel_drop_index(s->ks, schema, name);
    if (rc == KEEL_OK)
        return oid != 0 ? sql_comments_move(s, oid, 0, NULL, 0) : KEEL_OK;
    msg = keel_session_error(s->ks);
    if (rc == KEEL_ENOENT && strstr(msg, "schema") == NULL) {
        char note[200];
        if (!missing_ok)
            return sql_fail(s, rc, "42704", "index \"%s\" does not exist", name);
        snprintf(note, sizeof(note), "index \"%s\" does not exist, skipping",
                 name);
        if (s->sink->notice != NULL &&
            s->sink->notice(s->sink->ctx, "NOTICE", "00000", note) != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        return KEEL_OK;
    }
    if (rc == KEEL_EINVAL && strstr(msg, "primary key of table ") != NULL) {
        const char *table = strstr(msg, "primary key of table ") + 21;
        sql_fail(s, rc, "2BP01",
                 "cannot drop index %s because constraint %s on table %s "
                 "requires it",
                 name, name, table);
        if (s->err != NULL)
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "You can drop constraint %s on table %s instead.", name,
                     table);
        return rc;
    }
    if (rc == KEEL_EINVAL && strstr(msg, "is not an index") != NULL) {
        sql_fail(s, rc, "42809", "\"%s\" is not an index", name);
        if (s->err != NULL)
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Use DROP TABLE to remove a table.");
        return rc;
    }
    return sql_fail_engine(s, rc);
}

static keel_status named_tables(sql_session *s, PgQuery__Node *const *objs,
                                size_t n, bool lists, const char ***out);

keel_status sql_exec_drop(sql_session *s, const PgQuery__DropStmt *st)
{
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK; /* changes things: nothing to analyse first */

    if (st->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE &&
        st->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_SCHEMA &&
        st->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_INDEX &&
        st->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE &&
        st->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_VIEW)
        return sql_unsupported(s, -1, "DROP of this kind of object");
    if (st->concurrent)
        return sql_unsupported(s, -1, "DROP ... CONCURRENTLY");
    for (size_t i = 0; i < st->n_objects; i++) {
        const PgQuery__Node *o = st->objects[i];
        const char *schema = NULL, *name = NULL;
        bool table = st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_TABLE;
        if (o->node_case == PG_QUERY__NODE__NODE_LIST) {
            const PgQuery__List *l = o->list;
            if (l->n_items == 1) {
                name = sql_node_string(l->items[0]);
            } else if (l->n_items == 2) {
                schema = sql_node_string(l->items[0]);
                name = sql_node_string(l->items[1]);
            } else {
                return sql_unsupported(s, -1, "cross-database references");
            }
        } else {
            name = sql_node_string(o);
        }
        if (name == NULL)
            return sql_unsupported(s, -1, "this DROP");
        if (st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_INDEX) {
            rc = drop_index(s, schema, name, st->missing_ok);
            if (rc != KEEL_OK)
                return rc;
            continue;
        }
        if (st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_VIEW) {
            rc = sql_view_drop(s, schema != NULL ? schema : "public", name,
                               st->missing_ok);
            if (rc != KEEL_OK)
                return rc;
            continue;
        }
        if (st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE) {
            rc = sql_sequence_drop(s, schema != NULL ? schema : "public", name,
                                   st->missing_ok);
            if (rc != KEEL_OK)
                return rc;
            continue;
        }
        if (table) {
            keel_table_info info = {0};
            /* The table's oid, for its defaults: read under the lock the
             * drop takes, so that the drop does not have to upgrade a
             * weaker one (two drops of a table would deadlock). */
            sql_index_comment *ic = NULL;
            uint16_t nic = 0;
            bool described =
                keel_lock_table(s->ks, schema, name, KEEL_LOCK_ACCESS_EXCLUSIVE,
                                false) == KEEL_OK &&
                keel_table_describe(s->ks, schema, name, &info, NULL, 0) == KEEL_OK;
            if (described) {
                const char **named = NULL;
                rc = sql_index_comments(s, schema, name, &ic, &nic);
                if (rc == KEEL_OK)
                    rc = named_tables(s, st->objects, st->n_objects, true,
                                      &named);
                if (rc == KEEL_OK)
                    rc = sql_fkeys_drop_table(
                        s, info.oid, name, named, (uint16_t)st->n_objects,
                        st->behavior == PG_QUERY__DROP_BEHAVIOR__DROP_CASCADE);
                if (rc != KEEL_OK)
                    return rc;
            }
            rc = keel_drop_table(s->ks, schema, name);
            /* Its defaults, checks and comments go with it, and its
             * SERIAL columns' sequences. */
            if (rc == KEEL_OK && described) {
                rc = sql_defaults_move(s, info.oid, 0);
                if (rc == KEEL_OK)
                    rc = sql_checks_move(s, info.oid, 0);
                if (rc == KEEL_OK)
                    rc = sql_uniques_move(s, info.oid, 0, schema, name);
                if (rc == KEEL_OK)
                    rc = sql_comments_move(s, info.oid, 0, NULL, 0);
                for (uint16_t k = 0; rc == KEEL_OK && k < nic; k++)
                    rc = sql_comments_move(s, ic[k].oid, 0, NULL, 0);
                if (rc == KEEL_OK)
                    rc = sql_sequences_owned_drop(
                        s, schema != NULL ? schema : "public", name);
                if (rc != KEEL_OK)
                    return rc;
            }
        } else {
            rc = keel_drop_schema(s->ks, name);
        }
        if (rc == KEEL_ENOENT && st->missing_ok) {
            char msg[200];
            snprintf(msg, sizeof(msg), "%s \"%s\" does not exist, skipping",
                     table ? "table" : "schema", name);
            if (s->sink->notice != NULL &&
                s->sink->notice(s->sink->ctx, "NOTICE", "00000", msg) != 0)
                return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
            continue;
        }
        if (rc == KEEL_ENOENT)
            return sql_fail(s, rc, table ? "42P01" : "3F000",
                            "%s \"%s\" does not exist", table ? "table" : "schema",
                            name);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    return sql_complete(s, st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_TABLE
                               ? "DROP TABLE"
                           : st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_INDEX
                               ? "DROP INDEX"
                           : st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE
                               ? "DROP SEQUENCE"
                           : st->remove_type == PG_QUERY__OBJECT_TYPE__OBJECT_VIEW
                               ? "DROP VIEW"
                               : "DROP SCHEMA");
}

keel_status sql_exec_create_schema(sql_session *s,
                                   const PgQuery__CreateSchemaStmt *st)
{
    keel_status rc;

    if (st->authrole != NULL)
        return sql_unsupported(s, -1, "CREATE SCHEMA ... AUTHORIZATION");
    if (st->n_schema_elts > 0)
        return sql_unsupported(s, -1, "statements inside CREATE SCHEMA");
    rc = keel_create_schema(s->ks, st->schemaname);
    if (rc == KEEL_EEXIST && st->if_not_exists) {
        char msg[160];
        snprintf(msg, sizeof(msg), "schema \"%s\" already exists, skipping",
                 st->schemaname);
        if (s->sink->notice != NULL &&
            s->sink->notice(s->sink->ctx, "NOTICE", "42P06", msg) != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        return sql_complete(s, "CREATE SCHEMA");
    }
    if (rc == KEEL_EEXIST)
        return sql_fail(s, rc, "42P06", "schema \"%s\" already exists",
                        st->schemaname);
    if (rc == KEEL_ETOOBIG)
        return sql_fail(s, rc, "42622", "schema name \"%s\" is too long",
                        st->schemaname);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    return sql_complete(s, "CREATE SCHEMA");
}

/* name quoted as an identifier, appended to buf at *used. */
static void quote_into(char *buf, size_t cap, size_t *used, const char *name)
{
    if (*used + 1 < cap)
        buf[(*used)++] = '"';
    for (const char *p = name; *p != '\0' && *used + 3 < cap; p++) {
        if (*p == '"')
            buf[(*used)++] = '"';
        buf[(*used)++] = *p;
    }
    if (*used + 1 < cap)
        buf[(*used)++] = '"';
    buf[*used] = '\0';
}

/* A unique index `name` on keys of t that its rows refuse (KEEL_EUNIQUE):
 * 23505 with PostgreSQL's DETAIL, the least key held twice. */
static keel_status unique_build_failed(sql_session *s, const sql_table *t,
                                       const char *name, const uint16_t *keys,
                                       uint16_t n)
{
    char text[4096], list[2048];
    size_t used = 0, lused = 0;
    PgQuery__ParseResult *tree = NULL;
    sql_quiet q = {0};
    keel_status rc;

    list[0] = '\0';
    for (uint16_t k = 0; k < n; k++) {
        if (k > 0 && lused + 2 < sizeof(list)) {
            list[lused++] = ',';
            list[lused++] = ' ';
        }
        quote_into(list, sizeof(list), &lused, t->cols[keys[k] - 1].name);
    }
    used = (size_t)snprintf(text, sizeof(text), "SELECT %s FROM ", list);
    quote_into(text, sizeof(text), &used,
               t->schema != NULL ? t->schema : "public");
    if (used + 1 < sizeof(text))
        text[used++] = '.';
    quote_into(text, sizeof(text), &used, t->name);
    for (uint16_t k = 0; k < n && used < sizeof(text); k++) {
        used += (size_t)snprintf(text + used, sizeof(text) - used, " %s ",
                                 k ? "AND" : "WHERE");
        quote_into(text, sizeof(text), &used, t->cols[keys[k] - 1].name);
        if (used < sizeof(text))
            used += (size_t)snprintf(text + used, sizeof(text) - used,
                                     " IS NOT NULL");
    }
    if (used < sizeof(text))
        snprintf(text + used, sizeof(text) - used,
                 " GROUP BY %s HAVING count(*) > 1 ORDER BY %s LIMIT 1", list,
                 list);
    rc = sql_run_quietly(s, text, &tree, NULL, 0, &q);
    if (tree != NULL)
        pg_query__parse_result__free_unpacked(tree, NULL);
    if (rc != KEEL_OK)
        return rc;
    sql_fail(s, KEEL_EUNIQUE, "23505", "could not create unique index \"%s\"",
             name);
    if (q.rows > 0 && s->err != NULL) {
        char names[200];
        size_t nused = 0;
        names[0] = '\0';
        for (uint16_t k = 0; k < n && nused < sizeof(names); k++)
            nused += (size_t)snprintf(names + nused, sizeof(names) - nused,
                                      "%s%s", k ? ", " : "",
                                      t->cols[keys[k] - 1].name);
        snprintf(s->err->detail, sizeof(s->err->detail),
                 "Key (%.80s)=(%.120s) is duplicated.", names, q.first);
    }
    return KEEL_EUNIQUE;
}

keel_status sql_exec_create_index(sql_session *s, const PgQuery__IndexStmt *st)
{
    sql_table t;
    uint16_t keys[16], nkeys = 0;
    char name[KEEL_NAME_LEN];
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK; /* changes things: nothing to analyse first */

    if (st->where_clause != NULL)
        return sql_unsupported(s, -1, "partial indexes");
    if (st->n_index_including_params > 0)
        return sql_unsupported(s, -1, "INCLUDE");
    if (st->concurrent)
        return sql_unsupported(s, -1, "CREATE INDEX CONCURRENTLY");
    if (st->access_method != NULL && st->access_method[0] != '\0' &&
        strcmp(st->access_method, "btree") != 0)
        return sql_unsupported(s, -1, "index methods other than btree");
    rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK)
        return rc;
    for (size_t i = 0; i < st->n_index_params; i++) {
        const PgQuery__IndexElem *ie = st->index_params[i]->index_elem;
        bool ok = false;
        if (ie->expr != NULL || ie->name == NULL || ie->name[0] == '\0')
            return sql_unsupported(s, -1, "indexes on expressions");
        if (ie->ordering == PG_QUERY__SORT_BY_DIR__SORTBY_DESC)
            return sql_unsupported(s, -1, "descending index columns");
        if (nkeys >= 16)
            return sql_fail(s, KEEL_ETOOBIG, "54011",
                            "cannot use more than 16 columns in an index");
        for (uint16_t c = 0; c < t.info.ncols; c++)
            if (strcmp(t.cols[c].name, ie->name) == 0) {
                keys[nkeys++] = (uint16_t)(c + 1);
                ok = true;
                rc = key_type_ok(s, t.cols[c].type, -1);
                if (rc != KEEL_OK)
                    return rc;
            }
        if (!ok)
            return sql_fail(s, KEEL_ENOENT, "42703",
                            "column \"%s\" does not exist", ie->name);
    }
    if (st->idxname != NULL && st->idxname[0] != '\0')
        snprintf(name, sizeof(name), "%s", st->idxname);
    else
        snprintf(name, sizeof(name), "%.29s_%.28s_idx", t.name,
                 t.cols[keys[0] - 1].name);
    if (st->if_not_exists) {
        bool exists = false;
        rc = keel_relation_exists(s->ks, t.schema != NULL ? t.schema : "public",
                                  name, &exists);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (exists) {
            char msg[160];
            snprintf(msg, sizeof(msg), "relation \"%s\" already exists, skipping",
                     name);
            if (s->sink->notice != NULL &&
                s->sink->notice(s->sink->ctx, "NOTICE", "42P07", msg) != 0)
                return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
            return sql_complete(s, "CREATE INDEX");
        }
    }
    rc = keel_create_index(s->ks, t.schema, t.name, name, keys, nkeys,
                           st->unique);
    if (rc == KEEL_EUNIQUE && st->unique)
        return unique_build_failed(s, &t, name, keys, nkeys);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    return sql_complete(s, "CREATE INDEX");
}

keel_status sql_exec_vacuum(sql_session *s, const PgQuery__VacuumStmt *st)
{
    bool analyze = !st->is_vacuumcmd;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK; /* changes things: nothing to analyse first */

    for (size_t i = 0; i < st->n_options; i++) {
        const PgQuery__DefElem *d = st->options[i]->def_elem;
        if (strcmp(d->defname, "analyze") == 0)
            analyze = true;
    }
    if (st->is_vacuumcmd && s->block != SQL_BLOCK_NONE)
        return sql_fail(s, KEEL_EINVAL, "25001",
                        "VACUUM cannot run inside a transaction block");
    if (st->n_rels == 0 && analyze)
        return sql_unsupported(s, -1, "ANALYZE without a table list");
    for (size_t i = 0; i < st->n_rels; i++) {
        const PgQuery__VacuumRelation *vr = st->rels[i]->vacuum_relation;
        sql_table t;
        if (vr->n_va_cols > 0)
            return sql_unsupported(s, -1, "ANALYZE of some columns");
        rc = sql_table_open(s, vr->relation, &t);
        if (rc != KEEL_OK)
            return rc;
        if (analyze) {
            rc = keel_analyze(s->ks, t.schema, t.name);
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
        }
    }
    if (st->is_vacuumcmd && s->sink->notice != NULL &&
        s->sink->notice(s->sink->ctx, "NOTICE", "00000",
                        "VACUUM does no work in keel: its heap prunes dead "
                        "versions from a page as it is read") != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return sql_complete(s, st->is_vacuumcmd ? "VACUUM" : "ANALYZE");
}

/*
 * TRUNCATE: each table is dropped and made again, empty, in the same
 * transaction, so that an abort brings the rows back: its columns, its
 * primary key and its other indexes as they were.
 */
/* The tables a statement names, as "schema.name" (public for an
 * unqualified one), for the foreign keys among them (sql_fkey.c). */
static keel_status named_tables(sql_session *s, PgQuery__Node *const *objs,
                                size_t n, bool lists, const char ***out)
{
    const char **l = sql_alloc(&s->arena, (n + 1) * sizeof(*l));

    if (l == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *schema = "public", *name = "";
        char *full;
        if (!lists && objs[i]->node_case == PG_QUERY__NODE__NODE_RANGE_VAR) {
            const PgQuery__RangeVar *rv = objs[i]->range_var;
            if (rv->schemaname != NULL && rv->schemaname[0] != '\0')
                schema = rv->schemaname;
            name = rv->relname;
        } else if (lists && objs[i]->node_case == PG_QUERY__NODE__NODE_LIST) {
            const PgQuery__List *li = objs[i]->list;
            const char *a = li->n_items > 0 ? sql_node_string(li->items[0]) : NULL;
            const char *b = li->n_items > 1 ? sql_node_string(li->items[1]) : NULL;
            if (b != NULL && a != NULL) {
                schema = a;
                name = b;
            } else if (a != NULL) {
                name = a;
            }
        }
        full = sql_alloc(&s->arena, strlen(schema) + strlen(name) + 2);
        if (full == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        sprintf(full, "%s.%s", schema, name);
        l[i] = full;
    }
    *out = l;
    return KEEL_OK;
}

static PgQuery__RangeVar *rw_range_var(sql_session *s, const char *schema,
                                       const char *name);

keel_status sql_exec_truncate(sql_session *s, const PgQuery__TruncateStmt *st)
{
    const char **named = NULL;
    PgQuery__TruncateStmt cascade;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    if (st->behavior == PG_QUERY__DROP_BEHAVIOR__DROP_CASCADE) {
        /* the tables that refer to those named go too, each noticed */
        uint32_t relids[256];
        uint16_t n = 0;
        PgQuery__Node **all;
        for (size_t i = 0; i < st->n_relations && n < 256; i++) {
            const PgQuery__RangeVar *rv = st->relations[i]->range_var;
            uint32_t oid = 0;
            rc = sql_relation_oid(s,
                                  rv->schemaname != NULL && rv->schemaname[0]
                                      ? rv->schemaname
                                      : NULL,
                                  rv->relname, true, &oid);
            if (rc != KEEL_OK)
                return rc;
            if (oid != 0)
                relids[n++] = oid;
        }
        rc = sql_fkeys_referring(s, relids, &n, 256);
        all = rc == KEEL_OK
                  ? sql_alloc(&s->arena, (st->n_relations + n + 1) * sizeof(*all))
                  : NULL;
        if (rc == KEEL_OK && all == NULL)
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (rc != KEEL_OK)
            return rc;
        memcpy(all, st->relations, st->n_relations * sizeof(*all));
        cascade = *st;
        cascade.relations = all;
        for (uint16_t k = 0; k < n; k++) {
            char sch[KEEL_NAME_LEN], nm[KEEL_NAME_LEN];
            bool found = false, named_already = false;
            PgQuery__Node *node;
            PgQuery__RangeVar *rv;
            rc = sql_relation_by_oid(s, relids[k], sch, nm, &found);
            if (rc != KEEL_OK)
                return rc;
            for (size_t i = 0; i < st->n_relations && !named_already; i++)
                named_already =
                    strcmp(st->relations[i]->range_var->relname, nm) == 0;
            if (!found || named_already)
                continue;
            rc = sql_notice(s, "00000", "truncate cascades to table \"%s\"", nm);
            node = sql_alloc(&s->arena, sizeof(*node));
            rv = rw_range_var(s, sql_strndup(&s->arena, sch, strlen(sch)),
                              sql_strndup(&s->arena, nm, strlen(nm)));
            if (rc == KEEL_OK && (node == NULL || rv == NULL))
                rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            if (rc != KEEL_OK)
                return rc;
            pg_query__node__init(node);
            node->node_case = PG_QUERY__NODE__NODE_RANGE_VAR;
            node->range_var = rv;
            all[cascade.n_relations++] = node;
        }
        st = &cascade;
    }
    rc = named_tables(s, st->relations, st->n_relations, false, &named);
    if (rc != KEEL_OK)
        return rc;
    for (size_t i = 0; i < st->n_relations; i++) {
        const PgQuery__RangeVar *rv = st->relations[i]->range_var;
        sql_table t;
        keel_column *cols;
        /* Locked as the drop will lock it before it is described, so
         * that the drop does not upgrade a weaker lock (two TRUNCATEs of
         * one table would wait for each other).  A name the lock does
         * not find is left to sql_table_open() to report. */
        if (rv->schemaname == NULL || rv->schemaname[0] == '\0' ||
            strcmp(rv->schemaname, "public") == 0) {
            rc = keel_lock_table(s->ks, NULL, rv->relname,
                                 KEEL_LOCK_ACCESS_EXCLUSIVE, false);
            if (rc == KEEL_ELOCKTIMEOUT || rc == KEEL_EDEADLOCK ||
                rc == KEEL_ENOMEM)
                return sql_fail_engine(s, rc);
        }
        rc = sql_table_open(s, rv, &t);
        if (rc == KEEL_OK)
            rc = sql_fkeys_truncate_check(s, t.info.oid, t.name, named,
                                          (uint16_t)st->n_relations);
        if (rc != KEEL_OK)
            return rc;
        cols = sql_alloc(&s->arena, (t.info.ncols + 1) * sizeof(*cols));
        if (cols == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint16_t c = 0; c < t.info.ncols; c++)
            cols[c] = (keel_column){.name = t.cols[c].name,
                                    .type = t.cols[c].type,
                                    .charlen = t.cols[c].charlen,
                                    .notnull = t.cols[c].notnull};
        {
            sql_index_comment *ic = NULL;
            uint16_t nic = 0;
            rc = sql_index_comments(s, t.schema, t.name, &ic, &nic);
            if (rc != KEEL_OK)
                return rc;
            rc = keel_drop_table(s->ks, t.schema, t.name);
            if (rc == KEEL_OK)
                rc = keel_create_table(s->ks, t.schema, t.name, cols,
                                       t.info.ncols, t.info.pkey,
                                       t.info.npkey);
            /* Its other indexes, made again on the empty table. */
            for (uint16_t x = 0; rc == KEEL_OK && x < t.nidx; x++)
                if (!t.idx[x].primary)
                    rc = keel_create_index(s->ks, t.schema, t.name,
                                           t.idx[x].name, t.idx[x].keys,
                                           t.idx[x].nkeys, t.idx[x].unique);
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
            rc = sql_index_comments_restore(s, t.schema, ic, nic);
            if (rc != KEEL_OK)
                return rc;
        }
        if (rc == KEEL_OK) {
            keel_table_info made;
            rc = keel_table_describe(s->ks, t.schema, t.name, &made, NULL, 0);
            if (rc == KEEL_OK) {
                /* The table is made anew: its defaults, checks and
                 * comments go with it. */
                rc = sql_defaults_move(s, t.info.oid, made.oid);
                if (rc == KEEL_OK)
                    rc = sql_checks_move(s, t.info.oid, made.oid);
                if (rc == KEEL_OK)
                    rc = sql_comments_move(s, t.info.oid, made.oid, NULL, 0);
                if (rc == KEEL_OK)
                    rc = sql_fkeys_move(s, t.info.oid, made.oid, NULL, 0,
                                        t.name);
                if (rc == KEEL_OK)
                    rc = sql_uniques_move(s, t.info.oid, made.oid, t.schema,
                                          t.name);
                /* RESTART IDENTITY: its sequences back at their start */
                if (rc == KEEL_OK && st->restart_seqs)
                    rc = sql_sequences_restart_owned(
                        s, t.schema != NULL ? t.schema : "public", t.name);
                if (rc != KEEL_OK)
                    return rc;
            }
        }
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    return sql_complete(s, "TRUNCATE TABLE");
}

/*
 * LOCK: each table in turn, in the statement's mode (PostgreSQL's lock
 * mode numbers are keel_lock_mode's; ACCESS EXCLUSIVE without IN ...
 * MODE).  A name is looked up first, without a lock, for PostgreSQL's
 * message; the lock itself is the engine's (keel_lock_table()), held
 * until the block ends.  Outside a block it fails (25P01) before anything.
 */
keel_status sql_exec_lock(sql_session *s, const PgQuery__LockStmt *st)
{
    keel_status rc;

    if (s->block == SQL_BLOCK_NONE)
        return sql_fail(s, KEEL_EINVAL, "25P01",
                        "LOCK TABLE can only be used in transaction blocks");
    if (st->mode < KEEL_LOCK_ACCESS_SHARE ||
        st->mode > KEEL_LOCK_ACCESS_EXCLUSIVE)
        return sql_fail(s, KEEL_EINVAL, "22023", "unrecognized lock mode: %d",
                        (int)st->mode);
    if (s->describe_only)
        return KEEL_OK;
    for (size_t i = 0; i < st->n_relations; i++) {
        const PgQuery__RangeVar *rv = st->relations[i]->range_var;
        const char *schema = rv->schemaname != NULL && rv->schemaname[0] != '\0'
                                 ? rv->schemaname
                                 : NULL;
        bool exists = false;
        rc = keel_relation_exists(s->ks, schema, rv->relname, &exists);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (!exists)
            return sql_fail(s, KEEL_ENOENT, "42P01",
                            "relation \"%s%s%s\" does not exist",
                            schema != NULL ? schema : "",
                            schema != NULL ? "." : "", rv->relname);
        rc = keel_lock_table(s->ks, schema, rv->relname,
                             (keel_lock_mode)st->mode, st->nowait);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    return sql_complete(s, "LOCK TABLE");
}

/* ---- ALTER TABLE -------------------------------------------------------- */

/* The INSERT behind a rewrite or CREATE TABLE AS: its count kept, its
 * notices passed on, nothing else sent. */
typedef struct ctas_sink {
    sql_sink sink;
    const sql_sink *outer;
    uint64_t rows;
} ctas_sink;

static int ctas_complete(void *ctx, const char *tag)
{
    ctas_sink *c = ctx;
    const char *sp = strrchr(tag, ' ');

    c->rows = sp != NULL ? strtoull(sp + 1, NULL, 10) : 0;
    return 0;
}

static int ctas_notice(void *ctx, const char *severity, const char *sqlstate,
                       const char *message)
{
    ctas_sink *c = ctx;

    return c->outer->notice != NULL
               ? c->outer->notice(c->outer->ctx, severity, sqlstate, message)
               : 0;
}

/* Runs ins with the sink of ctas_sink, its row count in *rows. */
static keel_status insert_quietly(sql_session *s, const PgQuery__InsertStmt *ins,
                                  uint64_t *rows)
{
    const sql_sink *outer = s->sink;
    ctas_sink cs = {.outer = outer};
    keel_status rc;

    cs.sink = *outer;
    cs.sink.ctx = &cs;
    cs.sink.complete = ctas_complete;
    cs.sink.notice = ctas_notice;
    s->sink = &cs.sink;
    rc = sql_exec_insert(s, ins);
    s->sink = outer;
    *rows = cs.rows;
    return rc;
}

/* One column of a table being rewritten: its definition, the old column
 * (1-based) it is, or 0 for a new one; what its values are, when not the
 * old column's (an expression over the old row; for a new column NULL
 * means null); its default (NULL: none). */
typedef struct rw_col {
    keel_column c;
    uint16_t from;
    const PgQuery__Node *value;
    const PgQuery__Node *def;
} rw_col;

static PgQuery__Node *rw_node(sql_session *s, PgQuery__Node__NodeCase kind,
                              size_t size, void **body)
{
    PgQuery__Node *n = sql_alloc(&s->arena, sizeof(*n));

    *body = sql_alloc(&s->arena, size);
    if (n == NULL || *body == NULL)
        return NULL;
    pg_query__node__init(n);
    memset(*body, 0, size);
    n->node_case = kind;
    return n;
}

static PgQuery__Node *rw_string(sql_session *s, const char *v)
{
    PgQuery__String *str;
    PgQuery__Node *n = rw_node(s, PG_QUERY__NODE__NODE_STRING, sizeof(*str),
                               (void **)&str);

    if (n == NULL)
        return NULL;
    pg_query__string__init(str);
    str->sval = (char *)v;
    n->string = str;
    return n;
}

static PgQuery__RangeVar *rw_range_var(sql_session *s, const char *schema,
                                       const char *name)
{
    PgQuery__RangeVar *rv = sql_alloc(&s->arena, sizeof(*rv));

    if (rv == NULL)
        return NULL;
    pg_query__range_var__init(rv);
    rv->schemaname = (char *)(schema != NULL ? schema : "");
    rv->relname = (char *)name;
    rv->inh = true;
    rv->relpersistence = (char *)"p";
    rv->location = -1;
    return rv;
}

/* A target of the rewrite's SELECT: old column `name`, or value (NULL:
 * a null). */
static PgQuery__Node *rw_target(sql_session *s, const char *name,
                                const PgQuery__Node *value)
{
    PgQuery__ResTarget *rt;
    PgQuery__Node *n = rw_node(s, PG_QUERY__NODE__NODE_RES_TARGET,
                               sizeof(*rt), (void **)&rt);

    if (n == NULL)
        return NULL;
    pg_query__res_target__init(rt);
    rt->location = -1;
    n->res_target = rt;
    if (name != NULL) {
        PgQuery__ColumnRef *cr;
        PgQuery__Node *f = rw_string(s, name);
        PgQuery__Node **fields = sql_alloc(&s->arena, sizeof(*fields));
        rt->val = rw_node(s, PG_QUERY__NODE__NODE_COLUMN_REF, sizeof(*cr),
                          (void **)&cr);
        if (rt->val == NULL || f == NULL || fields == NULL)
            return NULL;
        pg_query__column_ref__init(cr);
        fields[0] = f;
        cr->n_fields = 1;
        cr->fields = fields;
        cr->location = -1;
        rt->val->column_ref = cr;
    } else if (value != NULL) {
        rt->val = (PgQuery__Node *)value;
    } else {
        PgQuery__AConst *k;
        rt->val = rw_node(s, PG_QUERY__NODE__NODE_A_CONST, sizeof(*k),
                          (void **)&k);
        if (rt->val == NULL)
            return NULL;
        pg_query__a__const__init(k);
        k->isnull = true;
        k->location = -1;
        rt->val->a_const = k;
    }
    return n;
}

/* table_rewrite()'s checks, recorded for the new table tmp. */
static keel_status rewrite_checks(sql_session *s, const sql_table *t,
                                  const rw_col *cols, uint16_t ncols,
                                  const char *tmp, const sql_check_def *add,
                                  uint16_t nadd, const char *drop)
{
    const char **newname = sql_alloc(&s->arena,
                                     (t->info.ncols + 1u) * sizeof(*newname));
    sql_check_def *old = NULL, *all;
    uint16_t nold = 0, n = 0;
    bool dropped = false;
    keel_status rc;

    if (newname == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < t->info.ncols; i++) {
        newname[i] = NULL;
        for (uint16_t c = 0; c < ncols; c++)
            if (cols[c].from == i + 1)
                newname[i] = cols[c].c.name;
    }
    rc = sql_checks_carry(s, t, newname, &old, &nold);
    if (rc != KEEL_OK)
        return rc;
    all = sql_alloc(&s->arena, (nold + nadd + 1u) * sizeof(*all));
    if (all == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < nold; i++) {
        if (drop != NULL && strcmp(old[i].name, drop) == 0) {
            dropped = true;
            continue;
        }
        all[n++] = old[i];
    }
    if (drop != NULL && !dropped)
        return sql_fail(s, KEEL_ENOENT, "42704",
                        "constraint \"%s\" of relation \"%s\" does not exist",
                        drop, t->name);
    for (uint16_t i = 0; i < nadd; i++)
        all[n++] = add[i];
    return sql_checks_define(s, t->schema, tmp, t->name, all, n);
}

/*
 * Rewrites table t as the columns cols[0..ncols): a new table (under a
 * name of its own) takes the rows, each column's value its old column's
 * (cast as an assignment) or a new one's value, evaluated for each row;
 * then t is dropped, the new table takes its name, and its primary key
 * and indexes are built again on the columns that are left (one on a
 * column no longer there goes, as PostgreSQL drops it), with their names,
 * and its defaults recorded.  All in the statement's transaction, under
 * the ACCESS EXCLUSIVE lock the caller took: an abort brings t back.
 * The rows are read whole into memory, as INSERT ... SELECT reads them.
 * Its CHECK constraints are t's, their columns renamed as the columns
 * are and those naming a column dropped gone, then add's, but drop's;
 * each row is checked as it goes in (23514 "is violated by some row").
 */
static keel_status table_rewrite(sql_session *s, const sql_table *t,
                                 const rw_col *cols, uint16_t ncols,
                                 const sql_check_def *add, uint16_t nadd,
                                 const char *drop)
{
    char tmp[KEEL_NAME_LEN];
    keel_column *kc = sql_alloc(&s->arena, (ncols + 1u) * sizeof(*kc));
    const PgQuery__Node **defs = sql_alloc(&s->arena, (ncols + 1u) * sizeof(*defs));
    PgQuery__Node **targets = sql_alloc(&s->arena, (ncols + 1u) * sizeof(*targets));
    PgQuery__Node **from = sql_alloc(&s->arena, sizeof(*from));
    keel_index_info *idx = NULL;
    uint16_t nidx = 0, nic = 0;
    sql_index_comment *ic = NULL;
    PgQuery__InsertStmt ins = PG_QUERY__INSERT_STMT__INIT;
    PgQuery__SelectStmt sel = PG_QUERY__SELECT_STMT__INIT;
    PgQuery__Node seln = PG_QUERY__NODE__INIT;
    PgQuery__RangeVar *fromrv;
    uint64_t rows = 0;
    keel_status rc;

    if (kc == NULL || defs == NULL || targets == NULL || from == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (ncols == 0)
        return sql_unsupported(s, -1, "tables without columns");
    if (t->info.nindexes > 0) {
        idx = sql_alloc(&s->arena, t->info.nindexes * sizeof(*idx));
        if (idx == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = keel_table_indexes(s->ks, t->schema, t->name, idx,
                                t->info.nindexes, &nidx);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (nidx > t->info.nindexes)
            nidx = t->info.nindexes;
    }
    snprintf(tmp, sizeof(tmp), "keel_rewrite_%u", (unsigned)t->info.oid);
    for (uint16_t c = 0; c < ncols; c++) {
        kc[c] = cols[c].c;
        defs[c] = cols[c].def;
        targets[c] = rw_target(s,
                               cols[c].from > 0 && cols[c].value == NULL
                                   ? t->cols[cols[c].from - 1].name
                                   : NULL,
                               cols[c].value);
        if (targets[c] == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    fromrv = rw_range_var(s, t->schema, t->name);
    from[0] = sql_alloc(&s->arena, sizeof(PgQuery__Node));
    ins.relation = rw_range_var(s, t->schema, tmp);
    if (fromrv == NULL || from[0] == NULL || ins.relation == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    pg_query__node__init(from[0]);
    from[0]->node_case = PG_QUERY__NODE__NODE_RANGE_VAR;
    from[0]->range_var = fromrv;
    sel.n_target_list = ncols;
    sel.target_list = targets;
    sel.n_from_clause = 1;
    sel.from_clause = from;
    sel.op = PG_QUERY__SET_OPERATION__SETOP_NONE;
    sel.limit_option = PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_DEFAULT;
    seln.node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
    seln.select_stmt = &sel;
    ins.select_stmt = &seln;
    /* the rows keep their values, identity columns' too */
    ins.override = PG_QUERY__OVERRIDING_KIND__OVERRIDING_SYSTEM_VALUE;
    rc = keel_create_table(s->ks, t->schema, tmp, kc, ncols, NULL, 0);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    /* The defaults now, while the old ones' trees are certainly kept
     * (the session may let them go when it reads another table's). */
    rc = sql_defaults_store(s, t->schema, tmp, defs, ncols);
    if (rc == KEEL_OK)
        rc = rewrite_checks(s, t, cols, ncols, tmp, add, nadd, drop);
    if (rc == KEEL_OK)
        rc = insert_quietly(s, &ins, &rows);
    if (rc != KEEL_OK && s->err != NULL &&
        memcmp(s->err->sqlstate, "23514", 5) == 0) {
        /* a row the checks refuse: named as PostgreSQL names it */
        const char *q = strstr(s->err->message, "check constraint \"");
        char name[KEEL_NAME_LEN + 24];
        if (q != NULL && sscanf(q, "check constraint \"%87[^\"]\"", name) == 1)
            snprintf(s->err->message, sizeof(s->err->message),
                     "check constraint \"%s\" of relation \"%s\" is violated "
                     "by some row",
                     name, t->name);
        s->err->detail[0] = '\0';
    }
    if (rc != KEEL_OK && s->err != NULL &&
        memcmp(s->err->sqlstate, "23502", 5) == 0) {
        /* a null for a NOT NULL column: named as PostgreSQL names it */
        for (uint16_t c = 0; c < ncols; c++) {
            char want[KEEL_NAME_LEN + 16];
            snprintf(want, sizeof(want), "column \"%s\"", cols[c].c.name);
            if (strstr(s->err->message, want) != NULL) {
                snprintf(s->err->message, sizeof(s->err->message),
                         "column \"%s\" of relation \"%s\" contains null "
                         "values",
                         cols[c].c.name, t->name);
                s->err->detail[0] = '\0';
                break;
            }
        }
    }
    if (rc != KEEL_OK)
        return rc;
    rc = sql_index_comments(s, t->schema, t->name, &ic, &nic);
    if (rc != KEEL_OK)
        return rc;
    rc = keel_drop_table(s->ks, t->schema, t->name);
    if (rc == KEEL_OK)
        rc = keel_rename(s->ks, t->schema, tmp, NULL, t->name);
    /* The primary key first (its columns become not null), then the
     * other indexes, in their order, on the columns still there. */
    for (int pass = 0; rc == KEEL_OK && pass < 2; pass++)
        for (uint16_t x = 0; rc == KEEL_OK && x < nidx; x++) {
            uint16_t keys[16], n = 0;
            if (idx[x].primary != (pass == 0))
                continue;
            for (uint16_t k = 0; k < idx[x].nkeys && k < 16; k++)
                for (uint16_t c = 0; c < ncols; c++)
                    if (cols[c].from == idx[x].keys[k])
                        keys[n++] = (uint16_t)(c + 1);
            if (n != idx[x].nkeys)
                continue;
            for (uint16_t k = 0; k < n; k++) {
                rc = key_type_ok(s, cols[keys[k] - 1].c.type, -1);
                if (rc != KEEL_OK)
                    return rc;
            }
            rc = idx[x].primary
                     ? keel_add_primary_key(s->ks, t->schema, t->name,
                                            idx[x].name, keys, n)
                     : keel_create_index(s->ks, t->schema, t->name,
                                         idx[x].name, keys, n, idx[x].unique);
        }
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    rc = sql_defaults_move(s, t->info.oid, 0);
    if (rc == KEEL_OK)
        rc = sql_checks_move(s, t->info.oid, 0);
    if (rc == KEEL_OK)
        rc = sql_index_comments_restore(s, t->schema, ic, nic);
    if (rc == KEEL_OK) {
        /* the table's comments, and its columns' where they went */
        keel_table_info made;
        uint16_t *map = sql_alloc(&s->arena,
                                  (t->info.ncols + 1u) * sizeof(*map));
        if (map == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memset(map, 0, (t->info.ncols + 1u) * sizeof(*map));
        for (uint16_t c = 0; c < ncols; c++)
            if (cols[c].from > 0 && cols[c].from <= t->info.ncols)
                map[cols[c].from - 1] = (uint16_t)(c + 1);
        rc = keel_table_describe(s->ks, t->schema, t->name, &made, NULL, 0);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        rc = sql_comments_move(s, t->info.oid, made.oid, map, t->info.ncols);
        if (rc == KEEL_OK)
            rc = sql_fkeys_move(s, t->info.oid, made.oid, map, t->info.ncols,
                                t->name);
        if (rc == KEEL_OK)
            rc = sql_uniques_move(s, t->info.oid, made.oid, t->schema,
                                  t->name);
    }
    return rc;
}

/* The columns of t as they are, to be changed and rewritten (their
 * defaults' trees valid until the session reads another table's). */
static keel_status rw_cols_of(sql_session *s, const sql_table *t,
                              rw_col **out)
{
    const sql_defaults *d = NULL;
    rw_col *cols = sql_alloc(&s->arena, (t->info.ncols + 2u) * sizeof(*cols));
    keel_status rc = sql_defaults_of(s, t, &d);

    if (rc != KEEL_OK)
        return rc;
    if (cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t c = 0; c < t->info.ncols; c++)
        cols[c] = (rw_col){.c = {.name = t->cols[c].name,
                                 .type = t->cols[c].type,
                                 .charlen = t->cols[c].charlen,
                                 .notnull = t->cols[c].notnull},
                           .from = (uint16_t)(c + 1),
                           .def = sql_default_node(d, c)};
    *out = cols;
    return KEEL_OK;
}

/* default_check() for ALTER TABLE, whose errors PostgreSQL places
 * nowhere in the statement. */
static keel_status alter_default_check(sql_session *s, const keel_column *c,
                                       const PgQuery__Node *expr)
{
    keel_status rc = default_check(s, c, expr);

    if (rc != KEEL_OK && s->err != NULL)
        s->err->position = 0;
    return rc;
}

/* expr cast to type tn (a new column's value: an untyped literal
 * default takes the column's type, as its assignment would). */
static PgQuery__Node *rw_cast(sql_session *s, const PgQuery__Node *expr,
                              PgQuery__TypeName *tn)
{
    PgQuery__TypeCast *tc;
    PgQuery__Node *n = rw_node(s, PG_QUERY__NODE__NODE_TYPE_CAST, sizeof(*tc),
                               (void **)&tc);

    if (n == NULL)
        return NULL;
    pg_query__type_cast__init(tc);
    tc->arg = (PgQuery__Node *)expr;
    tc->type_name = tn;
    tc->location = -1;
    n->type_cast = tc;
    return n;
}

/* Column `name` of t (0-based), or -1 after 42703 (or, for missing_ok,
 * PostgreSQL's notice, *skip set). */
static int rw_find(sql_session *s, const sql_table *t, const char *name,
                   bool missing_ok, bool *skip)
{
    char msg[200];

    for (uint16_t c = 0; name != NULL && c < t->info.ncols; c++)
        if (strcmp(t->cols[c].name, name) == 0)
            return c;
    if (!missing_ok) {
        sql_fail(s, KEEL_ENOENT, "42703",
                 "column \"%s\" of relation \"%s\" does not exist",
                 name != NULL ? name : "?", t->name);
        return -1;
    }
    snprintf(msg, sizeof(msg),
             "column \"%s\" of relation \"%s\" does not exist, skipping",
             name != NULL ? name : "?", t->name);
    *skip = true;
    if (s->sink->notice != NULL &&
        s->sink->notice(s->sink->ctx, "NOTICE", "00000", msg) != 0)
        sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return -1;
}

/*
 * ADD [COLUMN] [IF NOT EXISTS] name type [constraints]: existing rows
 * take its default (evaluated for each, as PostgreSQL's rewrite does:
 * a SERIAL column numbers them), else null, which NOT NULL refuses if
 * there are rows.  PRIMARY KEY and UNIQUE make their index.
 */
static keel_status alter_add_column(sql_session *s, const sql_table *t,
                                    const PgQuery__AlterTableCmd *cmd)
{
    const PgQuery__ColumnDef *cd = cmd->def->column_def;
    rw_col *cols;
    rw_col *nc;
    keel_type serial = serial_type(cd->type_name);
    bool pkey = false, unique = false;
    const char *uname = NULL;
    keel_status rc;

    for (uint16_t c = 0; c < t->info.ncols; c++)
        if (strcmp(t->cols[c].name, cd->colname) == 0) {
            char msg[200];
            if (!cmd->missing_ok)
                return sql_fail(s, KEEL_EEXIST, "42701",
                                "column \"%s\" of relation \"%s\" already "
                                "exists",
                                cd->colname, t->name);
            snprintf(msg, sizeof(msg),
                     "column \"%s\" of relation \"%s\" already exists, "
                     "skipping",
                     cd->colname, t->name);
            if (s->sink->notice != NULL &&
                s->sink->notice(s->sink->ctx, "NOTICE", "42701", msg) != 0)
                return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
            return KEEL_OK;
        }
    if (t->info.ncols >= 256)
        return sql_fail(s, KEEL_ETOOBIG, "54011",
                        "tables can have at most 256 columns");
    rc = rw_cols_of(s, t, &cols);
    if (rc != KEEL_OK)
        return rc;
    nc = &cols[t->info.ncols];
    memset(nc, 0, sizeof(*nc));
    nc->c.name = cd->colname;
    if (serial != 0) {
        nc->c.type = serial;
        nc->c.notnull = true;
    } else {
        rc = column_type(s, cd->type_name, &nc->c);
        if (rc != KEEL_OK)
            return rc;
    }
    if (cd->raw_default != NULL || cd->identity[0] != '\0' ||
        cd->generated[0] != '\0')
        return sql_unsupported(s, cd->location, "identity and generated columns");
    nc->c.notnull = nc->c.notnull || cd->is_not_null;
    for (size_t k = 0; k < cd->n_constraints; k++) {
        const PgQuery__Constraint *con = cd->constraints[k]->constraint;
        switch (con->contype) {
        case PG_QUERY__CONSTR_TYPE__CONSTR_NOTNULL:
            nc->c.notnull = true;
            break;
        case PG_QUERY__CONSTR_TYPE__CONSTR_NULL:
            break;
        case PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY:
            if (t->info.npkey > 0)
                return sql_fail(s, KEEL_EINVAL, "42P16",
                                "multiple primary keys for table \"%s\" are "
                                "not allowed",
                                t->name);
            pkey = true;
            uname = con->conname[0] != '\0' ? con->conname : NULL;
            break;
        case PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE:
            unique = true;
            uname = con->conname[0] != '\0' ? con->conname : NULL;
            break;
        case PG_QUERY__CONSTR_TYPE__CONSTR_DEFAULT:
            if (nc->def != NULL)
                return sql_fail_at(s, con->location, KEEL_EINVAL, "42601",
                                   "multiple default values specified for "
                                   "column \"%s\" of table \"%s\"",
                                   nc->c.name, t->name);
            rc = alter_default_check(s, &nc->c, con->raw_expr);
            if (rc != KEEL_OK)
                return rc;
            if (con->raw_expr != NULL &&
                !(con->raw_expr->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                  con->raw_expr->a_const->isnull))
                nc->def = con->raw_expr;
            break;
        case PG_QUERY__CONSTR_TYPE__CONSTR_CHECK:
            return sql_unsupported(s, con->location, "CHECK constraints");
        case PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN:
            return sql_unsupported(s, con->location, "foreign keys");
        default:
            return sql_unsupported(s, con->location, "this column constraint");
        }
    }
    if (serial != 0) {
        char seq[KEEL_NAME_LEN];
        const char *nsp = t->schema != NULL ? t->schema : "public";
        bool made = false;
        if (nc->def != NULL)
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "multiple default values specified for column "
                            "\"%s\" of table \"%s\"",
                            nc->c.name, t->name);
        snprintf(seq, sizeof(seq), "%.29s_%.29s_seq", t->name, nc->c.name);
        rc = sql_sequence_create(s, nsp, seq, 1, 1, 1,
                                 serial == KEEL_INT2   ? INT16_MAX
                                 : serial == KEEL_INT4 ? INT32_MAX
                                                       : INT64_MAX,
                                 false, nsp, t->name, false, &made);
        if (rc == KEEL_OK)
            rc = serial_default(s, t->schema, seq, "nextval", &nc->def);
        if (rc != KEEL_OK)
            return rc;
    }
    nc->value = nc->def;
    if (serial == 0 && nc->def != NULL &&
        (nc->value = rw_cast(s, nc->def, cd->type_name)) == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (pkey || unique) {
        rc = key_type_ok(s, nc->c.type, -1);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = table_rewrite(s, t, cols, (uint16_t)(t->info.ncols + 1), NULL, 0,
                       NULL);
    if (rc == KEEL_OK && (pkey || unique)) {
        uint16_t key = (uint16_t)(t->info.ncols + 1);
        char name[KEEL_NAME_LEN];
        if (uname != NULL)
            snprintf(name, sizeof(name), "%s", uname);
        else if (pkey)
            snprintf(name, sizeof(name), "%.58s_pkey", t->name);
        else
            snprintf(name, sizeof(name), "%.28s_%.28s_key", t->name,
                     nc->c.name);
        rc = pkey ? keel_add_primary_key(s->ks, t->schema, t->name, name, &key, 1)
                  : keel_create_index(s->ks, t->schema, t->name, name, &key, 1,
                                      true);
        if (rc == KEEL_OK && !pkey) {
            keel_table_info made;
            rc = keel_table_describe(s->ks, t->schema, t->name, &made, NULL, 0);
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
            rc = sql_unique_add(s, made.oid, name);
            if (rc != KEEL_OK)
                return rc;
        }
        if (rc == KEEL_EUNIQUE)
            return sql_fail(s, rc, "23505", "could not create unique index "
                                            "\"%s\"",
                            name);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    return rc;
}

/*
 * DROP COLUMN, ALTER COLUMN ... SET/DROP DEFAULT, SET/DROP NOT NULL and
 * [SET DATA] TYPE [USING expr]: the table rewritten with the column
 * changed (or without it: its indexes go with it).
 */
static keel_status alter_column(sql_session *s, const sql_table *t,
                                const PgQuery__AlterTableCmd *cmd)
{
    bool skip = false;
    int col = rw_find(s, t, cmd->name, cmd->missing_ok, &skip);
    rw_col *cols;
    uint16_t ncols = t->info.ncols;
    keel_status rc;

    if (col < 0)
        return skip ? KEEL_OK : KEEL_ENOENT;
    rc = rw_cols_of(s, t, &cols);
    if (rc != KEEL_OK)
        return rc;
    switch (cmd->subtype) {
    case PG_QUERY__ALTER_TABLE_TYPE__AT_DropColumn:
        memmove(&cols[col], &cols[col + 1],
                (size_t)(ncols - col - 1) * sizeof(*cols));
        ncols--;
        break;
    case PG_QUERY__ALTER_TABLE_TYPE__AT_ColumnDefault:
        rc = alter_default_check(s, &cols[col].c, cmd->def);
        if (rc != KEEL_OK)
            return rc;
        cols[col].def = cmd->def != NULL &&
                                !(cmd->def->node_case ==
                                      PG_QUERY__NODE__NODE_A_CONST &&
                                  cmd->def->a_const->isnull)
                            ? cmd->def
                            : NULL;
        break;
    case PG_QUERY__ALTER_TABLE_TYPE__AT_AddIdentity: {
        /* ALTER COLUMN ... ADD GENERATED ... AS IDENTITY [(options)], as
         * pg_dump writes an identity column: its sequence made, its
         * default the identity's */
        const PgQuery__Constraint *con =
            cmd->def != NULL &&
                    cmd->def->node_case == PG_QUERY__NODE__NODE_CONSTRAINT
                ? cmd->def->constraint
                : NULL;
        const sql_defaults *d = NULL;
        const PgQuery__Node *def = NULL;
        const char *why = NULL;
        if (con == NULL)
            return sql_unsupported(s, -1, "this ADD IDENTITY");
        rc = sql_defaults_of(s, t, &d);
        if (rc != KEEL_OK)
            return rc;
        if (!cols[col].c.notnull)
            why = "must be declared NOT NULL before identity can be added";
        else if (sql_default_identity(d, col) != 0)
            why = "is already an identity column";
        else if (cols[col].def != NULL)
            why = "already has a default value";
        if (why != NULL)
            return sql_fail(s, KEEL_EINVAL, "55000",
                            "column \"%s\" of relation \"%s\" %s", cmd->name,
                            t->name, why);
        rc = identity_make(s, t->schema, t->name, &cols[col].c, con, &def);
        if (rc != KEEL_OK)
            return rc;
        cols[col].def = def;
        break;
    }
    case PG_QUERY__ALTER_TABLE_TYPE__AT_SetNotNull:
        if (cols[col].c.notnull)
            return KEEL_OK;
        cols[col].c.notnull = true;
        break;
    case PG_QUERY__ALTER_TABLE_TYPE__AT_DropNotNull:
        for (uint16_t k = 0; k < t->info.npkey; k++)
            if (t->info.pkey[k] == col + 1)
                return sql_fail(s, KEEL_EINVAL, "42P16",
                                "column \"%s\" is in a primary key",
                                cmd->name);
        if (!cols[col].c.notnull)
            return KEEL_OK;
        cols[col].c.notnull = false;
        break;
    default: { /* AT_AlterColumnType */
        const PgQuery__ColumnDef *cd =
            cmd->def != NULL &&
                    cmd->def->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF
                ? cmd->def->column_def
                : NULL;
        PgQuery__Node *cast;
        if (cd == NULL || cd->type_name == NULL)
            return sql_unsupported(s, -1, "this ALTER COLUMN TYPE");
        if (serial_type(cd->type_name) != 0)
            return sql_fail(s, KEEL_ENOENT, "42704", "type \"%s\" does not exist",
                            sql_node_string(cd->type_name->names[cd->type_name->n_names - 1]));
        rc = column_type(s, cd->type_name, &cols[col].c);
        if (rc != KEEL_OK)
            return rc;
        if (cd->raw_default == NULL) {
            /* Without USING, only a cast PostgreSQL makes on assignment:
             * not from a string to anything else, nor between booleans
             * and numbers. */
            keel_column_info from = t->cols[col], to = {.type = cols[col].c.type,
                                                       .charlen = cols[col].c.charlen};
            uint32_t ft = sql_column_type(&from), tt = sql_column_type(&to);
            if ((sql_type_is_string(ft) && !sql_type_is_string(tt)) ||
                ((ft == SQL_TYPE_BOOL) != (tt == SQL_TYPE_BOOL))) {
                rc = sql_fail(s, KEEL_ETYPE, "42804",
                              "column \"%s\" cannot be cast automatically to "
                              "type %s",
                              cmd->name, sql_type_name(tt));
                if (s->err != NULL)
                    snprintf(s->err->hint, sizeof(s->err->hint),
                             "You might need to specify \"USING %s::%s\".",
                             cmd->name, sql_type_name(tt));
                return rc;
            }
        }
        if (cd->raw_default != NULL) {
            cast = rw_cast(s, cd->raw_default, cd->type_name); /* USING */
        } else {
            PgQuery__Node *ref = rw_target(s, t->cols[col].name, NULL);
            cast = ref != NULL ? rw_cast(s, ref->res_target->val, cd->type_name)
                               : NULL;
        }
        if (cast == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        cols[col].value = cast;
        /* The default must suit the new type (PostgreSQL casts it). */
        rc = alter_default_check(s, &cols[col].c, cols[col].def);
        if (rc != KEEL_OK)
            return rc;
        break;
    }
    }
    return table_rewrite(s, t, cols, ncols, NULL, 0, NULL);
}

/* ALTER TABLE [IF EXISTS] name command, ...: ADD PRIMARY KEY, ADD COLUMN,
 * DROP COLUMN, ALTER COLUMN (SET/DROP DEFAULT, SET/DROP NOT NULL, TYPE),
 * each in turn, under ACCESS EXCLUSIVE; others answer 0A000. */
/* ALTER TABLE ... DROP CONSTRAINT [IF EXISTS] name: a check goes with a
 * rewrite; a primary key or unique constraint is an index's (0A000). */
static keel_status alter_drop_constraint(sql_session *s, const sql_table *t,
                                         const PgQuery__AlterTableCmd *cmd)
{
    sql_check_row *rows;
    uint16_t n;
    rw_col *cols;
    bool fkey = false;
    keel_status rc = sql_fkey_drop(s, t, cmd->name, &fkey);

    if (rc != KEEL_OK || fkey)
        return rc;
    rc = sql_checks_read(s, t->info.oid, &rows, &n);
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++)
        if (strcmp(rows[i].name, cmd->name) == 0) {
            rc = rw_cols_of(s, t, &cols);
            return rc != KEEL_OK ? rc
                                 : table_rewrite(s, t, cols, t->info.ncols,
                                                 NULL, 0, cmd->name);
        }
    for (uint16_t i = 0; rc == KEEL_OK && i < t->info.nindexes; i++) {
        keel_index_info idx[64];
        uint16_t nidx = 0;
        rc = keel_table_indexes(s->ks, t->schema, t->name, idx, 64, &nidx);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        for (uint16_t k = 0; k < nidx; k++) {
            if (strcmp(idx[k].name, cmd->name) != 0)
                continue;
            bool owned = false;
            if (idx[k].primary)
                return sql_unsupported(s, -1,
                                       "dropping a PRIMARY KEY constraint");
            /* a UNIQUE constraint's: its index goes, unless a foreign
             * key rests on it; one CREATE INDEX made is no constraint */
            rc = sql_unique_has(s, t->info.oid, cmd->name, &owned);
            if (rc != KEEL_OK || !owned)
                break;
            rc = sql_fkeys_index_check(s, t->info.oid, t->name, cmd->name,
                                       true);
            if (rc != KEEL_OK)
                return rc;
            rc = keel_drop_index(s->ks, t->schema, cmd->name);
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
            return sql_unique_remove(s, t->info.oid, cmd->name);
        }
        break;
    }
    if (rc != KEEL_OK)
        return rc;
    if (cmd->missing_ok) {
        char msg[KEEL_NAME_LEN * 2 + 64];
        snprintf(msg, sizeof(msg),
                 "constraint \"%s\" of relation \"%s\" does not exist, "
                 "skipping",
                 cmd->name, t->name);
        if (s->sink->notice != NULL &&
            s->sink->notice(s->sink->ctx, "NOTICE", "00000", msg) != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        return KEEL_OK;
    }
    return sql_fail(s, KEEL_ENOENT, "42704",
                    "constraint \"%s\" of relation \"%s\" does not exist",
                    cmd->name, t->name);
}

/* ALTER TABLE ... ADD [CONSTRAINT name] UNIQUE (columns): a unique
 * index, named as PostgreSQL names the constraint's. */
static keel_status alter_add_unique(sql_session *s, const sql_table *t,
                                    const PgQuery__Constraint *con)
{
    uint16_t keys[16], nkeys = 0;
    char cols[2 * KEEL_NAME_LEN], name[KEEL_NAME_LEN + 16];
    size_t used = 0;
    keel_status rc;

    if (con->n_including > 0)
        return sql_unsupported(s, con->location, "INCLUDE");
    if (con->deferrable || con->initdeferred)
        return sql_unsupported(s, con->location,
                               "DEFERRABLE constraints but foreign keys");
    cols[0] = '\0';
    for (size_t k = 0; k < con->n_keys; k++) {
        const char *cn = sql_node_string(con->keys[k]);
        uint16_t c = 0;
        while (cn != NULL && c < t->info.ncols &&
               strcmp(t->cols[c].name, cn) != 0)
            c++;
        if (cn == NULL || c == t->info.ncols)
            return sql_fail(s, KEEL_ENOENT, "42703",
                            "column \"%s\" named in key does not exist",
                            cn != NULL ? cn : "?");
        if (nkeys >= 16)
            return sql_fail(s, KEEL_ETOOBIG, "54011",
                            "cannot use more than 16 columns in an index");
        rc = key_type_ok(s, t->cols[c].type, con->location);
        if (rc != KEEL_OK)
            return rc;
        keys[nkeys++] = (uint16_t)(c + 1);
        if (used < sizeof(cols))
            used += (size_t)snprintf(cols + used, sizeof(cols) - used, "%s%s",
                                     k ? "_" : "", cn);
    }
    if (con->conname != NULL && con->conname[0] != '\0') {
        snprintf(name, sizeof(name), "%s", con->conname);
    } else {
        /* <table>_<columns>_key, numbered while a relation has it */
        for (unsigned n = 0;; n++) {
            char label[16];
            bool exists = false;
            snprintf(label, sizeof(label), n ? "key%u" : "key", n);
            sql_object_name(t->name, cols, label, name, sizeof(name));
            rc = keel_relation_exists(s->ks,
                                      t->schema != NULL ? t->schema : "public",
                                      name, &exists);
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
            if (!exists)
                break;
        }
    }
    rc = keel_create_index(s->ks, t->schema, t->name, name, keys, nkeys, true);
    if (rc == KEEL_EUNIQUE)
        return unique_build_failed(s, t, name, keys, nkeys);
    if (rc == KEEL_EEXIST)
        return sql_fail(s, rc, "42P07", "relation \"%s\" already exists", name);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    return sql_unique_add(s, t->info.oid, name);
}

/*
 * ALTER TABLE | SEQUENCE | VIEW name OWNER TO role, as a dump names each
 * relation's owner: keel keeps no owner but the user connected (who owns
 * everything, pg_class's relowner 10), so the statement does nothing
 * when it names that user (by name, CURRENT_USER, SESSION_USER or
 * CURRENT_ROLE), and is 0A000 for another role; 42704 for a role that
 * does not exist, 42P01 for a relation that does not.
 */
static keel_status alter_owner(sql_session *s, const PgQuery__AlterTableStmt *st,
                               const PgQuery__RoleSpec *to)
{
    const PgQuery__RangeVar *rv = st->relation;
    const char *nsp = rv->schemaname != NULL && rv->schemaname[0] != '\0'
                          ? rv->schemaname
                          : "public";
    const char *user = sql_setting_get(s, "user");
    const PgQuery__SelectStmt *q = NULL;
    PgQuery__Alias *al = NULL;
    bool found = false;
    uint32_t oid = 0;
    keel_status rc = KEEL_OK;

    if (st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE)
        rc = sql_sequence_exists(s, nsp, rv->relname, &found);
    else if (st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_VIEW)
        rc = sql_view_find(s, nsp, rv->relname, &q, &al, &found);
    else {
        rc = sql_relation_oid(s, nsp, rv->relname, true, &oid);
        found = oid != 0;
        /* ALTER TABLE names any relation: a view or a sequence too */
        if (rc == KEEL_OK && !found)
            rc = sql_view_find(s, nsp, rv->relname, &q, &al, &found);
        if (rc == KEEL_OK && !found)
            rc = sql_sequence_exists(s, nsp, rv->relname, &found);
    }
    if (rc != KEEL_OK)
        return rc;
    if (!found && st->missing_ok) {
        rc = sql_notice(s, "00000", "relation \"%s\" does not exist, skipping",
                        rv->relname);
        return rc != KEEL_OK ? rc : sql_complete(s, "ALTER TABLE");
    }
    if (!found)
        return sql_fail(s, KEEL_ENOENT, "42P01",
                        "relation \"%s\" does not exist", rv->relname);
    if (to->roletype == PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CSTRING &&
        strcmp(to->rolename, user) != 0) {
        rc = sql_role_exists(s, to->rolename, &found);
        if (rc != KEEL_OK)
            return rc;
        if (!found)
            return sql_fail(s, KEEL_ENOENT, "42704",
                            "role \"%s\" does not exist", to->rolename);
        return sql_unsupported(s, -1, "owners other than the connected user");
    }
    if (to->roletype == PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_PUBLIC)
        return sql_fail(s, KEEL_ENOENT, "42704",
                        "role \"public\" does not exist");
    return sql_complete(s,
                        st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE
                            ? "ALTER SEQUENCE"
                        : st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_VIEW
                            ? "ALTER VIEW"
                            : "ALTER TABLE");
}

keel_status sql_exec_alter_table(sql_session *s, const PgQuery__AlterTableStmt *st)
{
    sql_table t;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    if (st->n_cmds == 1 &&
        st->cmds[0]->alter_table_cmd->subtype ==
            PG_QUERY__ALTER_TABLE_TYPE__AT_ChangeOwner &&
        st->cmds[0]->alter_table_cmd->newowner != NULL &&
        (st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_TABLE ||
         st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE ||
         st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_VIEW))
        return alter_owner(s, st, st->cmds[0]->alter_table_cmd->newowner);
    if (st->objtype != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE)
        return sql_unsupported(s, -1, "ALTER of this kind of object");
    /* Locked before it is described, as TRUNCATE locks it. */
    if (st->relation->schemaname == NULL ||
        st->relation->schemaname[0] == '\0' ||
        strcmp(st->relation->schemaname, "public") == 0) {
        rc = keel_lock_table(s->ks, NULL, st->relation->relname,
                             KEEL_LOCK_ACCESS_EXCLUSIVE, false);
        if (rc == KEEL_ELOCKTIMEOUT || rc == KEEL_EDEADLOCK || rc == KEEL_ENOMEM)
            return sql_fail_engine(s, rc);
    }
    rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK && s->err != NULL)
        s->err->position = 0; /* PostgreSQL places it nowhere */
    if (rc == KEEL_ENOENT && st->missing_ok) {
        char msg[160];
        snprintf(msg, sizeof(msg), "relation \"%s\" does not exist, skipping",
                 st->relation->relname);
        if (s->sink->notice != NULL &&
            s->sink->notice(s->sink->ctx, "NOTICE", "00000", msg) != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        return sql_complete(s, "ALTER TABLE");
    }
    if (rc != KEEL_OK)
        return rc;
    for (size_t i = 0; i < st->n_cmds; i++) {
        const PgQuery__AlterTableCmd *cmd = st->cmds[i]->alter_table_cmd;
        const PgQuery__Constraint *con;
        uint16_t keys[16], nkeys = 0;
        switch (cmd->subtype) {
        case PG_QUERY__ALTER_TABLE_TYPE__AT_AddColumn:
            if (cmd->def == NULL ||
                cmd->def->node_case != PG_QUERY__NODE__NODE_COLUMN_DEF)
                return sql_unsupported(s, -1, "this ADD COLUMN");
            rc = alter_add_column(s, &t, cmd);
            break;
        case PG_QUERY__ALTER_TABLE_TYPE__AT_DropColumn:
        case PG_QUERY__ALTER_TABLE_TYPE__AT_ColumnDefault:
        case PG_QUERY__ALTER_TABLE_TYPE__AT_AddIdentity:
        case PG_QUERY__ALTER_TABLE_TYPE__AT_SetNotNull:
        case PG_QUERY__ALTER_TABLE_TYPE__AT_DropNotNull:
        case PG_QUERY__ALTER_TABLE_TYPE__AT_AlterColumnType:
            rc = alter_column(s, &t, cmd);
            break;
        case PG_QUERY__ALTER_TABLE_TYPE__AT_AddConstraint:
            if (cmd->def != NULL &&
                cmd->def->node_case == PG_QUERY__NODE__NODE_CONSTRAINT &&
                cmd->def->constraint->contype ==
                    PG_QUERY__CONSTR_TYPE__CONSTR_CHECK) {
                /* the table made anew, each row checked on the way */
                sql_check_def d = {
                    .name = cmd->def->constraint->conname[0] != '\0'
                                ? cmd->def->constraint->conname
                                : NULL,
                    .expr = cmd->def->constraint->raw_expr};
                rw_col *cols;
                rc = rw_cols_of(s, &t, &cols);
                if (rc == KEEL_OK)
                    rc = table_rewrite(s, &t, cols, t.info.ncols, &d, 1, NULL);
                break;
            }
            if (cmd->def != NULL &&
                cmd->def->node_case == PG_QUERY__NODE__NODE_CONSTRAINT &&
                cmd->def->constraint->contype ==
                    PG_QUERY__CONSTR_TYPE__CONSTR_FOREIGN) {
                /* the rows there checked; the table stays as it is */
                sql_fkey_def d = {.con = cmd->def->constraint, .col = 0,
                                  .deferrable = -1, .deferred = -1};
                rc = sql_fkeys_define(s, t.schema, t.name, &d, 1, true);
                break;
            }
            if (cmd->def != NULL &&
                cmd->def->node_case == PG_QUERY__NODE__NODE_CONSTRAINT &&
                cmd->def->constraint->contype ==
                    PG_QUERY__CONSTR_TYPE__CONSTR_UNIQUE) {
                rc = alter_add_unique(s, &t, cmd->def->constraint);
                break;
            }
            if (cmd->def == NULL ||
                cmd->def->node_case != PG_QUERY__NODE__NODE_CONSTRAINT ||
                cmd->def->constraint->contype !=
                    PG_QUERY__CONSTR_TYPE__CONSTR_PRIMARY)
                return sql_unsupported(s, -1, "constraints but PRIMARY KEY, "
                                              "UNIQUE, CHECK and FOREIGN "
                                              "KEY");
            con = cmd->def->constraint;
            if (con->n_including > 0)
                return sql_unsupported(s, con->location, "INCLUDE");
            for (size_t k = 0; k < con->n_keys; k++) {
                const char *name = sql_node_string(con->keys[k]);
                bool found = false;
                for (uint16_t c = 0; name != NULL && c < t.info.ncols && !found;
                     c++)
                    if (strcmp(t.cols[c].name, name) == 0) {
                        for (uint16_t j = 0; j < nkeys; j++)
                            if (keys[j] == c + 1)
                                return sql_fail_at(s, con->location, KEEL_EINVAL,
                                                   "42701",
                                                   "column \"%s\" appears twice "
                                                   "in primary key constraint",
                                                   name);
                        if (nkeys >= 16)
                            return sql_fail(s, KEEL_ETOOBIG, "54011",
                                            "cannot use more than 16 columns "
                                            "in an index");
                        keys[nkeys++] = (uint16_t)(c + 1);
                        found = true;
                        rc = key_type_ok(s, t.cols[c].type, con->location);
                        if (rc != KEEL_OK)
                            return rc;
                    }
                if (!found)
                    return sql_fail_at(s, con->location, KEEL_ENOENT, "42703",
                                       "column \"%s\" of relation \"%s\" does "
                                       "not exist",
                                       name != NULL ? name : "?", t.name);
            }
            rc = keel_add_primary_key(s->ks, t.schema, t.name,
                                      con->conname != NULL &&
                                              con->conname[0] != '\0'
                                          ? con->conname
                                          : NULL,
                                      keys, nkeys);
            if (rc == KEEL_EEXIST)
                return sql_fail(s, rc, "42P16", "%s", keel_session_error(s->ks));
            if (rc == KEEL_ETYPE)
                return sql_fail(s, rc, "23502", "%s", keel_session_error(s->ks));
            if (rc != KEEL_OK)
                return sql_fail_engine(s, rc);
            break;
        case PG_QUERY__ALTER_TABLE_TYPE__AT_DropConstraint:
            rc = alter_drop_constraint(s, &t, cmd);
            break;
        default:
            return sql_unsupported(s, -1, "this ALTER TABLE command");
        }
        if (rc != KEEL_OK)
            return rc;
        /* The next command sees what this one did. */
        rc = sql_table_open(s, st->relation, &t);
        if (rc != KEEL_OK)
            return rc;
    }
    return sql_complete(s, "ALTER TABLE");
}

/* ALTER TABLE [IF EXISTS] name RENAME TO new, RENAME [COLUMN] a TO b. */
keel_status sql_exec_rename(sql_session *s, const PgQuery__RenameStmt *st)
{
    const PgQuery__RangeVar *rv = st->relation;
    sql_table t;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    if (rv == NULL ||
        (st->rename_type != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE &&
         st->rename_type != PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN) ||
        (st->rename_type == PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN &&
         st->relation_type != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE))
        return sql_unsupported(s, -1, "RENAME of this kind of object");
    rc = sql_table_open(s, rv, &t);
    if (rc != KEEL_OK && s->err != NULL)
        s->err->position = 0; /* PostgreSQL places it nowhere */
    if (rc == KEEL_ENOENT && st->missing_ok) {
        char msg[160];
        snprintf(msg, sizeof(msg), "relation \"%s\" does not exist, skipping",
                 rv->relname);
        if (s->sink->notice != NULL &&
            s->sink->notice(s->sink->ctx, "NOTICE", "00000", msg) != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        return sql_complete(s, "ALTER TABLE");
    }
    if (rc != KEEL_OK)
        return rc;
    if (st->rename_type == PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN) {
        bool found = false;
        for (uint16_t c = 0; c < t.info.ncols; c++)
            found = found || strcmp(t.cols[c].name, st->subname) == 0;
        if (!found)
            return sql_fail(s, KEEL_ENOENT, "42703",
                            "column \"%s\" does not exist", st->subname);
    } else {
        /* A view's name is a relation's, as in PostgreSQL. */
        const PgQuery__SelectStmt *vq;
        PgQuery__Alias *va;
        bool view = false;
        rc = sql_view_find(s, t.schema, st->newname, &vq, &va, &view);
        if (rc == KEEL_OK && view)
            rc = sql_fail(s, KEEL_EEXIST, "42P07",
                          "relation \"%s\" already exists", st->newname);
        if (rc != KEEL_OK)
            return rc;
    }
    if (st->rename_type == PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN) {
        /* Checks name columns: a table that has any is made anew, its
         * checks' names for the column changed with it (a session keeps
         * a table's checks for as long as its oid). */
        sql_check_row *ck;
        uint16_t nck = 0;
        rc = sql_checks_read(s, t.info.oid, &ck, &nck);
        if (rc != KEEL_OK)
            return rc;
        if (nck > 0) {
            rw_col *cols;
            for (uint16_t c = 0; c < t.info.ncols; c++)
                if (strcmp(t.cols[c].name, st->newname) == 0)
                    return sql_fail(s, KEEL_EEXIST, "42701",
                                    "column \"%s\" of relation \"%s\" "
                                    "already exists",
                                    st->newname, t.name);
            rc = rw_cols_of(s, &t, &cols);
            for (uint16_t c = 0; rc == KEEL_OK && c < t.info.ncols; c++)
                if (strcmp(cols[c].c.name, st->subname) == 0)
                    cols[c].c.name = st->newname;
            if (rc == KEEL_OK)
                rc = table_rewrite(s, &t, cols, t.info.ncols, NULL, 0, NULL);
            return rc != KEEL_OK ? rc : sql_complete(s, "ALTER TABLE");
        }
    }
    rc = keel_rename(s->ks, t.schema, t.name,
                     st->rename_type == PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN
                         ? st->subname
                         : NULL,
                     st->newname);
    if (rc == KEEL_EEXIST)
        return sql_fail(s, rc,
                        st->rename_type == PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN
                            ? "42701"
                            : "42P07",
                        "%s", keel_session_error(s->ks));
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    return sql_complete(s, "ALTER TABLE");
}

/* ---- CREATE TABLE ... AS, SELECT ... INTO --------------------------------- */

/*
 * CREATE TABLE name [(columns)] AS query [WITH [NO] DATA]: a table of the
 * query's columns (their names, or the list's; their types, with the
 * length of a table column named whole), without a primary key, then the
 * query's rows inserted into it, as PostgreSQL's.  SELECT ... INTO name
 * comes here too.
 */
keel_status sql_exec_create_table_as(sql_session *s,
                                     const PgQuery__CreateTableAsStmt *st)
{
    const PgQuery__IntoClause *into = st->into;
    const PgQuery__RangeVar *rv = into != NULL ? into->rel : NULL;
    const char *schema;
    sql_rowset rs;
    keel_column *cols;
    keel_status rc;

    if (s->describe_only)
        return KEEL_OK;
    if (st->objtype == PG_QUERY__OBJECT_TYPE__OBJECT_MATVIEW)
        return sql_unsupported(s, -1, "materialized views");
    if (rv == NULL || st->query == NULL ||
        st->query->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return sql_unsupported(s, -1, "CREATE TABLE AS EXECUTE");
    if (rv->relpersistence != NULL && rv->relpersistence[0] == 't')
        return sql_unsupported(s, rv->location, "temporary tables");
    if (rv->relpersistence != NULL && rv->relpersistence[0] == 'u')
        return sql_unsupported(s, rv->location, "unlogged tables");
    if (into->on_commit != PG_QUERY__ON_COMMIT_ACTION__ONCOMMIT_NOOP &&
        into->on_commit != PG_QUERY__ON_COMMIT_ACTION__ON_COMMIT_ACTION_UNDEFINED)
        return sql_unsupported(s, rv->location, "ON COMMIT");
    rc = table_options(s, into->options, into->n_options);
    if (rc != KEEL_OK)
        return rc;
    schema = rv->schemaname != NULL && rv->schemaname[0] != '\0'
                 ? rv->schemaname
                 : NULL;
    if (st->if_not_exists) {
        bool exists = false;
        rc = exists_skip(s, schema, rv, "CREATE TABLE AS", &exists);
        if (rc != KEEL_OK || exists)
            return rc;
    }
    /* The query's columns, from its analysis alone. */
    memset(&rs, 0, sizeof(rs));
    rs.want_typmods = true;
    rc = sql_select_rows(s, st->query->select_stmt, NULL, NULL, true, &rs);
    if (rc != KEEL_OK)
        return rc;
    if (into->n_col_names > rs.ncols)
        return sql_fail(s, KEEL_EINVAL, "42601",
                        "too many column names were specified");
    if (rs.ncols > 256)
        return sql_fail(s, KEEL_ETOOBIG, "54011",
                        "tables can have at most 256 columns");
    cols = sql_alloc(&s->arena, (rs.ncols + 1u) * sizeof(*cols));
    if (cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < rs.ncols; i++) {
        keel_column *c = &cols[i];
        memset(c, 0, sizeof(*c));
        c->name = i < into->n_col_names ? sql_node_string(into->col_names[i])
                                         : rs.cols[i].name;
        for (uint16_t j = 0; j < i; j++)
            if (strcmp(cols[j].name, c->name) == 0)
                return sql_fail(s, KEEL_EINVAL, "42701",
                                "column \"%s\" specified more than once",
                                c->name);
        rc = type_column(s, rs.types[i], rs.typmods[i], -1, c);
        if (rc != KEEL_OK)
            return rc;
    }
    if (rs.ncols == 0)
        return sql_unsupported(s, rv->location, "tables without columns");
    rc = keel_create_table(s->ks, schema, rv->relname, cols, rs.ncols, NULL, 0);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (into->skip_data)
        return sql_complete(s, "CREATE TABLE AS");
    {
        /* INSERT INTO name SELECT ..., its count the statement's. */
        PgQuery__InsertStmt ins = PG_QUERY__INSERT_STMT__INIT;
        uint64_t rows = 0;
        ins.relation = (PgQuery__RangeVar *)rv;
        ins.select_stmt = st->query;
        rc = insert_quietly(s, &ins, &rows);
        if (rc != KEEL_OK)
            return rc;
        return sql_complete_count(s, "SELECT", rows);
    }
}
