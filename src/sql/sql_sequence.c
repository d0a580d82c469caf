/*
 * sql_sequence.c: sequences (CREATE SEQUENCE, DROP SEQUENCE, nextval(),
 * currval(), setval(), lastval(), and the SERIAL columns that make one).
 *
 * keel's engine has no sequence relations, so the SQL layer keeps each
 * sequence as a row of keel_sql.keel_sequence (next_value int8,
 * increment int8, minvalue int8, maxvalue int8, cycle bool, ownernsp
 * text, ownerrel text, nspname text, seqname text; primary key (nspname,
 * seqname); every column NOT NULL; a SERIAL column's sequence names its
 * table, by name, which TRUNCATE keeps, and goes with it), made through
 * the engine's API by the
 * first CREATE SEQUENCE, as keel_attrdef is.  Creating and dropping a
 * sequence is transactional, like any row.  Its value is not:
 * next_value, the value nextval() gives next, is changed in place by
 * keel_cas_int8(), outside every transaction, so that concurrent
 * nextval() calls never wait for each other's transactions, an abort
 * does not give a value out twice, and every session reads the new value
 * at once, as PostgreSQL's sequences behave.  The in-place change is
 * logged; a commit that used the value makes it durable, since its
 * record comes later in the log.
 *
 * Its START value is a row of keel_sql.keel_seqstart (nspname text,
 * seqname text, start_value int8; primary key (nspname, seqname)), made
 * with it; a sequence made before keel kept one has none, and RESTART
 * without a value refuses to guess it.  ALTER SEQUENCE and TRUNCATE ...
 * RESTART IDENTITY replace a sequence's row with a new version, in their
 * transaction: they first lock keel_sql.keel_sequence ACCESS EXCLUSIVE
 * until it ends, so that no nextval() (which reads the table under
 * ACCESS SHARE) counts on the old version meanwhile, nor reads the new
 * one before it commits.  A caller whose snapshot is older than the
 * change (repeatable read, or a statement that waited for the lock)
 * still counts on the newest version, which keel_cas_int8_row() follows
 * the row to and whose parameters it returns, as PostgreSQL's nextval()
 * reads the sequence as it is.  PostgreSQL's lock is the one sequence's;
 * keel's holds every sequence's callers while such a transaction runs.
 *
 * A sequence is not in keel_class: its name is not a relation's, and
 * pg_class does not list it.  nextval('name'::regclass), which PostgreSQL
 * stores as a SERIAL column's default, takes the literal's text as the
 * name (sql_expr.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

#define SEQ_TABLE "keel_sequence"

enum {
    SEQ_NEXT,
    SEQ_INC,
    SEQ_MIN,
    SEQ_MAX,
    SEQ_CYCLE,
    SEQ_OWNERNSP,
    SEQ_OWNERREL,
    SEQ_NSP,
    SEQ_NAME,
    SEQ_NCOLS
};

/* One sequence's row. */
typedef struct seq_row {
    int64_t next, inc, min, max;
    bool cycle;
} seq_row;

static keel_status table_ensure(sql_session *s)
{
    static const keel_column cols[SEQ_NCOLS] = {
        {.name = "next_value", .type = KEEL_INT8, .notnull = true},
        {.name = "increment", .type = KEEL_INT8, .notnull = true},
        {.name = "minvalue", .type = KEEL_INT8, .notnull = true},
        {.name = "maxvalue", .type = KEEL_INT8, .notnull = true},
        {.name = "cycle", .type = KEEL_BOOL, .notnull = true},
        {.name = "ownernsp", .type = KEEL_TEXT, .notnull = true},
        {.name = "ownerrel", .type = KEEL_TEXT, .notnull = true},
        {.name = "nspname", .type = KEEL_TEXT, .notnull = true},
        {.name = "seqname", .type = KEEL_TEXT, .notnull = true},
    };
    static const uint16_t pkey[2] = {SEQ_NSP + 1, SEQ_NAME + 1};

    return sql_store_ensure(s, SEQ_TABLE, cols, SEQ_NCOLS, pkey, 2);
}

/* ---- START values (keel_sql.keel_seqstart) -------------------------------- */

#define START_TABLE "keel_seqstart"

enum { START_NSP, START_NAME, START_VALUE, START_NCOLS };

/* Sequence nsp.name's START value, *found false if none is kept. */
static keel_status start_read(sql_session *s, const char *nsp,
                              const char *name, int64_t *start, bool *found)
{
    keel_value key[2], out[START_NCOLS];
    bool exists = false;
    keel_status rc = sql_store_exists(s, START_TABLE, &exists);

    *found = false;
    if (rc != KEEL_OK || !exists)
        return rc;
    sql_store_key2(key, nsp, name);
    rc = keel_lookup(s->ks, SQL_STORE_SCHEMA, START_TABLE, key, out, found);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (*found)
        *start = out[START_VALUE].v.i8;
    return KEEL_OK;
}

static keel_status start_write(sql_session *s, const char *nsp,
                               const char *name, int64_t start)
{
    static const keel_column cols[START_NCOLS] = {
        {.name = "nspname", .type = KEEL_TEXT, .notnull = true},
        {.name = "seqname", .type = KEEL_TEXT, .notnull = true},
        {.name = "start_value", .type = KEEL_INT8, .notnull = true},
    };
    static const uint16_t pkey[2] = {START_NSP + 1, START_NAME + 1};
    keel_value row[START_NCOLS];
    int64_t old = 0;
    bool found = false;
    keel_status rc = sql_store_ensure(s, START_TABLE, cols, START_NCOLS,
                                      pkey, 2);

    if (rc == KEEL_OK)
        rc = start_read(s, nsp, name, &old, &found);
    if (rc != KEEL_OK || (found && old == start))
        return rc;
    memset(row, 0, sizeof(row));
    sql_store_key2(row, nsp, name);
    row[START_VALUE].v.i8 = start;
    rc = found ? keel_update(s->ks, SQL_STORE_SCHEMA, START_TABLE, row, row)
               : keel_insert(s->ks, SQL_STORE_SCHEMA, START_TABLE, row);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

static keel_status start_drop(sql_session *s, const char *nsp,
                              const char *name)
{
    keel_value key[2];
    int64_t start = 0;
    bool found = false;
    keel_status rc = start_read(s, nsp, name, &start, &found);

    if (rc != KEEL_OK || !found)
        return rc;
    sql_store_key2(key, nsp, name);
    rc = keel_delete(s->ks, SQL_STORE_SCHEMA, START_TABLE, key);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* Sequence nsp.name's row, *found false if there is none. */
static keel_status seq_read(sql_session *s, const char *nsp, const char *name,
                            seq_row *r, bool *found)
{
    keel_value key[2], out[SEQ_NCOLS];
    bool exists = false;
    keel_status rc = sql_store_exists(s, SEQ_TABLE, &exists);

    *found = false;
    if (rc != KEEL_OK || !exists)
        return rc;
    sql_store_key2(key, nsp, name);
    rc = keel_lookup(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, key, out, found);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (*found) {
        r->next = out[SEQ_NEXT].v.i8;
        r->inc = out[SEQ_INC].v.i8;
        r->min = out[SEQ_MIN].v.i8;
        r->max = out[SEQ_MAX].v.i8;
        r->cycle = out[SEQ_CYCLE].v.b;
    }
    return KEEL_OK;
}

keel_status sql_sequence_exists(sql_session *s, const char *nsp,
                                const char *name, bool *found)
{
    seq_row r;

    return seq_read(s, nsp, name, &r, found);
}

/* A sequence's name as text gives it: "name" or "schema.name", quoted
 * or not; public when unqualified. */
static keel_status seq_name(sql_session *s, const sql_value *v, char *nsp,
                            char *name)
{
    char parts[4][KEEL_NAME_LEN];
    int n = 0;

    sql_split_names(v->v.s.p, v->v.s.len, parts, &n);
    if (n < 1 || n > 2)
        return sql_fail(s, KEEL_EINVAL, "42602", "invalid name syntax");
    snprintf(nsp, KEEL_NAME_LEN, "%s", n == 2 ? parts[0] : "public");
    snprintf(name, KEEL_NAME_LEN, "%s", parts[n - 1]);
    return KEEL_OK;
}

static keel_status missing(sql_session *s, const char *name)
{
    return sql_fail(s, KEEL_ENOENT, "42P01",
                    "relation \"%s\" does not exist", name);
}

/* The session's last value of each sequence it called nextval() on. */
typedef struct seq_last {
    char nsp[KEEL_NAME_LEN], name[KEEL_NAME_LEN];
    int64_t last;
    struct seq_last *next;
} seq_last;

static keel_status remember(sql_session *s, const char *nsp, const char *name,
                            int64_t v)
{
    seq_last *l;

    for (l = s->seq_last; l != NULL; l = l->next)
        if (strcmp(l->nsp, nsp) == 0 && strcmp(l->name, name) == 0)
            break;
    if (l == NULL) {
        l = calloc(1, sizeof(*l));
        if (l == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        snprintf(l->nsp, sizeof(l->nsp), "%s", nsp);
        snprintf(l->name, sizeof(l->name), "%s", name);
        l->next = s->seq_last;
        s->seq_last = l;
    }
    l->last = v;
    s->seq_lastval = v;
    s->seq_lastval_set = true;
    return KEEL_OK;
}

void sql_sequences_free(sql_session *s)
{
    while (s->seq_last != NULL) {
        seq_last *l = s->seq_last;
        s->seq_last = l->next;
        free(l);
    }
}

/* Compares and sets next_value in the row's newest version (which a
 * snapshot taken before an ALTER SEQUENCE committed does not see): *actual
 * what it held, and r that version's parameters. */
static keel_status seq_cas(sql_session *s, const char *nsp, const char *name,
                           int64_t expect, int64_t set, int64_t *actual,
                           seq_row *r)
{
    keel_value key[2], row[SEQ_NCOLS];
    keel_status rc;

    sql_store_key2(key, nsp, name);
    rc = keel_cas_int8_row(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, key, SEQ_NEXT,
                           expect, set, actual, row);
    if (rc == KEEL_ENOENT)
        return missing(s, name);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    r->inc = row[SEQ_INC].v.i8;
    r->min = row[SEQ_MIN].v.i8;
    r->max = row[SEQ_MAX].v.i8;
    r->cycle = row[SEQ_CYCLE].v.b;
    return KEEL_OK;
}

static keel_status nextval(sql_session *s, const char *nsp, const char *name,
                           int64_t *out)
{
    seq_row r;
    bool found = false;
    keel_status rc = seq_read(s, nsp, name, &r, &found);

    if (rc != KEEL_OK)
        return rc;
    if (!found)
        return missing(s, name);
    for (;;) {
        int64_t v = r.next, after, actual;
        bool past = r.inc > 0 ? v > r.max : v < r.min;
        if (past && !r.cycle)
            return sql_fail(s, KEEL_EINVAL, "2200H",
                            "nextval: reached %s value of sequence \"%s\" "
                            "(%" PRId64 ")",
                            r.inc > 0 ? "maximum" : "minimum", name,
                            r.inc > 0 ? r.max : r.min);
        if (past)
            v = r.inc > 0 ? r.min : r.max;
        /* Past the end (or overflowing) reads as past it next time. */
        if (__builtin_add_overflow(v, r.inc, &after))
            after = r.inc > 0 ? INT64_MAX : INT64_MIN;
        if (r.inc > 0 && after < v)
            after = INT64_MAX;
        if (r.inc > 0 && v == INT64_MAX)
            after = r.cycle ? r.min : INT64_MAX;
        rc = seq_cas(s, nsp, name, r.next, after, &actual, &r);
        if (rc != KEEL_OK)
            return rc;
        if (actual == r.next) {
            if (r.inc > 0 && v == INT64_MAX && !r.cycle) {
                /* The last value: the next call fails. */
            }
            *out = v;
            return remember(s, nsp, name, v);
        }
        r.next = actual; /* another session's call came first */
    }
}

keel_status sql_sequence_eval(sql_session *s, sql_func f, const sql_value *a,
                              uint16_t nargs, sql_value *out)
{
    char nsp[KEEL_NAME_LEN], name[KEEL_NAME_LEN];
    keel_status rc;

    out->type = SQL_TYPE_INT8;
    out->isnull = false;
    if (f == SQL_FUNC_LASTVAL) {
        if (!s->seq_lastval_set)
            return sql_fail(s, KEEL_EINVAL, "55000",
                            "lastval is not yet defined in this session");
        out->v.i = s->seq_lastval;
        return KEEL_OK;
    }
    rc = seq_name(s, &a[0], nsp, name);
    if (rc != KEEL_OK)
        return rc;
    if (f == SQL_FUNC_NEXTVAL)
        return nextval(s, nsp, name, &out->v.i);
    if (f == SQL_FUNC_CURRVAL) {
        seq_row r;
        bool found = false;
        rc = seq_read(s, nsp, name, &r, &found);
        if (rc == KEEL_OK && !found)
            rc = missing(s, name);
        if (rc != KEEL_OK)
            return rc;
        for (seq_last *l = s->seq_last; l != NULL; l = l->next)
            if (strcmp(l->nsp, nsp) == 0 && strcmp(l->name, name) == 0) {
                out->v.i = l->last;
                return KEEL_OK;
            }
        return sql_fail(s, KEEL_EINVAL, "55000",
                        "currval of sequence \"%s\" is not yet defined in "
                        "this session",
                        name);
    }
    /* setval(name, value [, is_called]) */
    {
        seq_row r;
        bool found = false, called = nargs < 3 || a[2].v.b;
        int64_t v = a[1].v.i, want, actual;
        rc = seq_read(s, nsp, name, &r, &found);
        if (rc == KEEL_OK && !found)
            rc = missing(s, name);
        if (rc != KEEL_OK)
            return rc;
        if (v < r.min || v > r.max)
            return sql_fail(s, KEEL_EINVAL, "22003",
                            "setval: value %" PRId64 " is out of bounds for "
                            "sequence \"%s\" (%" PRId64 "..%" PRId64 ")",
                            v, name, r.min, r.max);
        want = v;
        if (called && __builtin_add_overflow(v, r.inc, &want))
            want = r.inc > 0 ? INT64_MAX : INT64_MIN;
        for (;;) {
            seq_row now = r;
            rc = seq_cas(s, nsp, name, r.next, want, &actual, &now);
            if (rc != KEEL_OK || actual == r.next)
                break;
            /* another call came first, or an ALTER SEQUENCE: its bounds */
            r = now;
            r.next = actual;
            if (v < r.min || v > r.max)
                return sql_fail(s, KEEL_EINVAL, "22003",
                                "setval: value %" PRId64 " is out of bounds "
                                "for sequence \"%s\" (%" PRId64 "..%" PRId64
                                ")",
                                v, name, r.min, r.max);
            want = v;
            if (called && __builtin_add_overflow(v, r.inc, &want))
                want = r.inc > 0 ? INT64_MAX : INT64_MIN;
        }
        if (rc == KEEL_OK && called)
            rc = remember(s, nsp, name, v);
        out->v.i = v;
        return rc;
    }
}

keel_status sql_sequence_create(sql_session *s, const char *nsp,
                                const char *name, int64_t start, int64_t inc,
                                int64_t min, int64_t max, bool cycle,
                                const char *ownernsp, const char *ownerrel,
                                bool if_not_exists, bool *made)
{
    keel_value row[SEQ_NCOLS];
    seq_row r;
    bool found = false;
    keel_status rc;

    *made = false;
    if (inc == 0)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "INCREMENT must not be zero");
    if (min >= max)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "MINVALUE (%" PRId64 ") must be less than MAXVALUE "
                        "(%" PRId64 ")",
                        min, max);
    if (start < min)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "START value (%" PRId64 ") cannot be less than "
                        "MINVALUE (%" PRId64 ")",
                        start, min);
    if (start > max)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "START value (%" PRId64 ") cannot be greater than "
                        "MAXVALUE (%" PRId64 ")",
                        start, max);
    rc = seq_read(s, nsp, name, &r, &found);
    if (rc == KEEL_OK && !found) {
        /* A table's name is taken too, as in pg_class. */
        rc = keel_relation_exists(s->ks, nsp, name, &found);
        if (rc == KEEL_ENOENT)
            return sql_fail(s, KEEL_ENOENT, "3F000",
                            "schema \"%s\" does not exist", nsp);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    if (rc != KEEL_OK)
        return rc;
    if (found && if_not_exists)
        return sql_notice(s, "42P07", "relation \"%s\" already exists, skipping",
                          name);
    if (found)
        return sql_fail(s, KEEL_EEXIST, "42P07",
                        "relation \"%s\" already exists", name);
    rc = table_ensure(s);
    if (rc != KEEL_OK)
        return rc;
    memset(row, 0, sizeof(row));
    row[SEQ_NEXT].v.i8 = start;
    row[SEQ_INC].v.i8 = inc;
    row[SEQ_MIN].v.i8 = min;
    row[SEQ_MAX].v.i8 = max;
    row[SEQ_CYCLE].v.b = cycle;
    sql_store_key2(&row[SEQ_OWNERNSP], ownernsp, ownerrel);
    sql_store_key2(&row[SEQ_NSP], nsp, name);
    rc = keel_insert(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, row);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    *made = true;
    return start_write(s, nsp, name, start);
}

/* An option's integer value (its location in *loc). */
static keel_status opt_int(sql_session *s, const PgQuery__DefElem *d,
                           int64_t *out)
{
    const PgQuery__Node *a = d->arg;

    if (a != NULL && a->node_case == PG_QUERY__NODE__NODE_INTEGER) {
        *out = a->integer->ival;
        return KEEL_OK;
    }
    if (a != NULL && a->node_case == PG_QUERY__NODE__NODE_FLOAT) {
        char *end;
        long long v = strtoll(a->float_->fval, &end, 10);
        if (*end == '\0') {
            *out = v;
            return KEEL_OK;
        }
    }
    return sql_fail_at(s, d->location, KEEL_EINVAL, "22023",
                       "%s requires an integer value", d->defname);
}

keel_status sql_sequence_options(sql_session *s, PgQuery__Node **opts,
                                 size_t n, int64_t tmin, int64_t tmax,
                                 sql_seq_opts *out)
{
    int64_t inc = 1, start = 0, min = 0, max = 0;
    bool has_start = false, has_min = false, has_max = false, cycle = false;
    keel_status rc;

    for (size_t i = 0; i < n; i++) {
        const PgQuery__DefElem *d = opts[i]->def_elem;
        if (strcmp(d->defname, "increment") == 0) {
            rc = opt_int(s, d, &inc);
        } else if (strcmp(d->defname, "start") == 0) {
            rc = opt_int(s, d, &start);
            has_start = true;
        } else if (strcmp(d->defname, "minvalue") == 0) {
            has_min = d->arg != NULL;
            rc = has_min ? opt_int(s, d, &min) : KEEL_OK;
        } else if (strcmp(d->defname, "maxvalue") == 0) {
            has_max = d->arg != NULL;
            rc = has_max ? opt_int(s, d, &max) : KEEL_OK;
        } else if (strcmp(d->defname, "cycle") == 0) {
            cycle = d->arg != NULL &&
                    d->arg->node_case == PG_QUERY__NODE__NODE_BOOLEAN &&
                    d->arg->boolean->boolval;
            rc = KEEL_OK;
        } else if (strcmp(d->defname, "cache") == 0) {
            int64_t c = 1;
            rc = opt_int(s, d, &c);
            if (rc == KEEL_OK && c < 1)
                rc = sql_fail_at(s, d->location, KEEL_EINVAL, "22023",
                                 "CACHE (%" PRId64 ") must be greater than "
                                 "zero",
                                 c);
        } else if (strcmp(d->defname, "as") == 0) {
            uint32_t type;
            int32_t typmod;
            rc = d->arg != NULL &&
                         d->arg->node_case == PG_QUERY__NODE__NODE_TYPE_NAME
                     ? sql_type_lookup(s, d->arg->type_name, &type, &typmod)
                     : sql_unsupported(s, d->location, "this AS type");
            if (rc == KEEL_OK && type == SQL_TYPE_INT2) {
                tmin = INT16_MIN;
                tmax = INT16_MAX;
            } else if (rc == KEEL_OK && type == SQL_TYPE_INT4) {
                tmin = INT32_MIN;
                tmax = INT32_MAX;
            } else if (rc == KEEL_OK && type != SQL_TYPE_INT8) {
                rc = sql_fail_at(s, d->location, KEEL_EINVAL, "22023",
                                 "sequence type must be smallint, integer, or "
                                 "bigint");
            }
        } else {
            char what[96];
            snprintf(what, sizeof(what), "sequence option %s", d->defname);
            rc = sql_unsupported(s, d->location, what);
        }
        if (rc != KEEL_OK)
            return rc;
    }
    if (!has_min)
        min = inc > 0 ? 1 : tmin;
    if (!has_max)
        max = inc > 0 ? tmax : -1;
    if (!has_start)
        start = inc > 0 ? min : max;
    *out = (sql_seq_opts){start, inc, min, max, cycle};
    return KEEL_OK;
}

keel_status sql_exec_create_sequence(sql_session *s,
                                     const PgQuery__CreateSeqStmt *st)
{
    const PgQuery__RangeVar *rv = st->sequence;
    sql_seq_opts o;
    bool made = false;
    keel_status rc;

    if (rv->relpersistence != NULL && rv->relpersistence[0] == 't')
        return sql_unsupported(s, rv->location, "temporary sequences");
    rc = sql_sequence_options(s, st->options, st->n_options, INT64_MIN,
                              INT64_MAX, &o);
    if (rc == KEEL_OK)
        rc = sql_sequence_create(
            s,
            rv->schemaname != NULL && rv->schemaname[0] != '\0'
                ? rv->schemaname
                : "public",
            rv->relname, o.start, o.inc, o.min, o.max, o.cycle, "", "",
            st->if_not_exists, &made);
    return rc != KEEL_OK ? rc : sql_complete(s, "CREATE SEQUENCE");
}

keel_status sql_sequence_drop(sql_session *s, const char *nsp,
                              const char *name, bool missing_ok)
{
    keel_value key[2];
    seq_row r;
    bool found = false;
    keel_status rc = seq_read(s, nsp, name, &r, &found);

    if (rc != KEEL_OK)
        return rc;
    if (!found && missing_ok)
        return sql_notice(s, "00000", "sequence \"%s\" does not exist, skipping",
                          name);
    if (!found)
        return sql_fail(s, KEEL_ENOENT, "42P01",
                        "sequence \"%s\" does not exist", name);
    sql_store_key2(key, nsp, name);
    rc = keel_delete(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, key);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    return start_drop(s, nsp, name);
}

/* The sequences table nsp.rel owns (SERIAL's and identity columns', and
 * OWNED BY's), as names[i][0] (schema) and names[i][1], *n of them
 * (malloc'd: the caller frees *names). */
static keel_status owned_list(sql_session *s, const char *nsp, const char *rel,
                              char (**out)[2][KEEL_NAME_LEN], size_t *nout)
{
    keel_value row[SEQ_NCOLS];
    keel_scan *sc = NULL;
    bool exists = false, found = true;
    char (*names)[2][KEEL_NAME_LEN] = NULL;
    size_t n = 0, cap = 0;
    keel_status rc = sql_store_exists(s, SEQ_TABLE, &exists);

    *out = NULL;
    *nout = 0;
    if (rc != KEEL_OK || !exists)
        return rc;
    rc = keel_scan_begin(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, NULL, NULL, NULL, &sc);
    while (rc == KEEL_OK && (rc = keel_scan_next(sc, row, &found)) == KEEL_OK &&
           found) {
        if (row[SEQ_OWNERNSP].v.s.len != strlen(nsp) ||
            memcmp(row[SEQ_OWNERNSP].v.s.ptr, nsp, strlen(nsp)) != 0 ||
            row[SEQ_OWNERREL].v.s.len != strlen(rel) ||
            memcmp(row[SEQ_OWNERREL].v.s.ptr, rel, strlen(rel)) != 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 8;
            void *p = realloc(names, nc * sizeof(*names));
            if (p == NULL) {
                rc = KEEL_ENOMEM;
                break;
            }
            names = p;
            cap = nc;
        }
        snprintf(names[n][0], KEEL_NAME_LEN, "%.*s",
                 (int)row[SEQ_NSP].v.s.len, row[SEQ_NSP].v.s.ptr);
        snprintf(names[n][1], KEEL_NAME_LEN, "%.*s",
                 (int)row[SEQ_NAME].v.s.len, row[SEQ_NAME].v.s.ptr);
        n++;
    }
    keel_scan_end(sc);
    if (rc != KEEL_OK) {
        free(names);
        return rc == KEEL_ENOMEM
                   ? sql_fail(s, KEEL_ENOMEM, "53200", "out of memory")
                   : sql_fail_engine(s, rc);
    }
    *out = names;
    *nout = n;
    return KEEL_OK;
}

keel_status sql_sequences_owned_drop(sql_session *s, const char *nsp,
                                     const char *rel)
{
    char (*names)[2][KEEL_NAME_LEN] = NULL;
    size_t n = 0;
    /* The rows first, then their deletes: the scan does not see them. */
    keel_status rc = owned_list(s, nsp, rel, &names, &n);

    for (size_t i = 0; rc == KEEL_OK && i < n; i++) {
        keel_value key[2];
        sql_store_key2(key, names[i][0], names[i][1]);
        rc = keel_delete(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, key);
        if (rc != KEEL_OK)
            rc = sql_fail_engine(s, rc);
        else
            rc = start_drop(s, names[i][0], names[i][1]);
    }
    free(names);
    return rc;
}

/* ---- ALTER SEQUENCE and RESTART IDENTITY ------------------------------------ */

/* keel_sql.keel_sequence locked ACCESS EXCLUSIVE until the transaction
 * ends (see the file's comment), then, under read committed, a snapshot
 * taken after the lock: what it reads no one changes before the end. */
static keel_status seq_lock(sql_session *s)
{
    keel_status rc = keel_lock_table(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE,
                                     KEEL_LOCK_ACCESS_EXCLUSIVE, false);

    if (rc == KEEL_OK)
        rc = keel_new_snapshot(s->ks);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* A sequence's row as keel_lookup() gave it, its strings copied into
 * names (owner schema, owner table, schema, name): the engine's buffer
 * they point into is the next look-up's. */
static void seq_row_keep(keel_value *row, char names[4][KEEL_NAME_LEN])
{
    for (int i = 0; i < 4; i++) {
        keel_value *v = &row[SEQ_OWNERNSP + i];
        snprintf(names[i], KEEL_NAME_LEN, "%.*s", (int)v->v.s.len,
                 v->v.s.ptr != NULL ? v->v.s.ptr : "");
    }
    sql_store_key2(&row[SEQ_OWNERNSP], names[0], names[1]);
    sql_store_key2(&row[SEQ_NSP], names[2], names[3]);
}

/* A sequence's row replaced by row (its new version, in the
 * transaction). */
static keel_status seq_replace(sql_session *s, const keel_value *row)
{
    keel_status rc =
        keel_update(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, &row[SEQ_NSP], row);

    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* The value RESTART without one goes back to: the START kept. */
static keel_status restart_value(sql_session *s, const char *nsp,
                                 const char *name, int64_t *out)
{
    bool found = false;
    keel_status rc = start_read(s, nsp, name, out, &found);

    if (rc != KEEL_OK || found)
        return rc;
    rc = sql_fail(s, KEEL_EINVAL, "55000",
                  "sequence \"%s\" has no START value to restart at", name);
    if (s->err != NULL)
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "It was made before keel kept one: ALTER SEQUENCE %s START "
                 "WITH n records it.",
                 name);
    return rc;
}

/* OWNED BY's list of names (table.column, schema.table.column or none)
 * into the owner's schema and table ("" for none); the column must be
 * the table's, and the table in the sequence's schema nsp. */
static keel_status owned_by(sql_session *s, const PgQuery__DefElem *d,
                            const char *nsp, char *onsp, char *orel)
{
    const PgQuery__List *l =
        d->arg != NULL && d->arg->node_case == PG_QUERY__NODE__NODE_LIST
            ? d->arg->list
            : NULL;
    const char *parts[3] = {NULL, NULL, NULL};
    PgQuery__RangeVar rv = PG_QUERY__RANGE_VAR__INIT;
    sql_table t;
    keel_status rc;

    for (size_t i = 0; l != NULL && i < l->n_items && i < 3; i++)
        parts[i] = sql_node_string(l->items[i]);
    if (l != NULL && l->n_items == 1 && parts[0] != NULL &&
        strcmp(parts[0], "none") == 0) {
        onsp[0] = orel[0] = '\0';
        return KEEL_OK;
    }
    if (l == NULL || l->n_items < 2 || l->n_items > 3 || parts[0] == NULL ||
        parts[1] == NULL || (l->n_items == 3 && parts[2] == NULL)) {
        rc = sql_fail(s, KEEL_EINVAL, "42601", "invalid OWNED BY option");
        if (s->err != NULL)
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Specify OWNED BY table.column or OWNED BY NONE.");
        return rc;
    }
    rv.schemaname = l->n_items == 3 ? (char *)parts[0] : NULL;
    rv.relname = (char *)parts[l->n_items - 2];
    rv.location = -1;
    rc = sql_table_open(s, &rv, &t);
    if (rc != KEEL_OK)
        return rc;
    if (strcmp(l->n_items == 3 ? parts[0] : "public", nsp) != 0)
        return sql_fail(s, KEEL_EINVAL, "55000",
                        "sequence must be in same schema as table it is "
                        "linked to");
    for (uint16_t c = 0; c < t.info.ncols; c++)
        if (strcmp(t.cols[c].name, parts[l->n_items - 1]) == 0) {
            snprintf(onsp, KEEL_NAME_LEN, "%s", nsp);
            snprintf(orel, KEEL_NAME_LEN, "%s", t.name);
            return KEEL_OK;
        }
    return sql_fail(s, KEEL_ENOENT, "42703",
                    "column \"%s\" of relation \"%s\" does not exist",
                    parts[l->n_items - 1], t.name);
}

/*
 * ALTER SEQUENCE [IF EXISTS] name: INCREMENT BY, [NO] MINVALUE, [NO]
 * MAXVALUE (NO: bigint's bounds, as keel keeps no AS type), START WITH
 * (kept for RESTART), RESTART [WITH], [NO] CYCLE, CACHE (checked,
 * ignored) and OWNED BY, each changed in the transaction; what is not
 * named stays.  RESTART's value is the one nextval() gives next.
 */
keel_status sql_exec_alter_sequence(sql_session *s,
                                    const PgQuery__AlterSeqStmt *st)
{
    const PgQuery__RangeVar *rv = st->sequence;
    const char *nsp = rv->schemaname != NULL && rv->schemaname[0] != '\0'
                          ? rv->schemaname
                          : "public";
    const char *name = rv->relname;
    keel_value key[2], row[SEQ_NCOLS];
    char onsp[KEEL_NAME_LEN], orel[KEEL_NAME_LEN], kept[4][KEEL_NAME_LEN];
    int64_t inc, min, max, start = 0, restart = 0;
    bool found = false, exists = false, cycle, has_start = false;
    bool has_restart = false, no_min = false, no_max = false, owner = false;
    bool start_known = false, restart_start = false;
    keel_status rc = sql_store_exists(s, SEQ_TABLE, &exists);

    if (rc == KEEL_OK && exists)
        rc = seq_lock(s);
    if (rc == KEEL_OK && exists) {
        sql_store_key2(key, nsp, name);
        rc = keel_lookup(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, key, row, &found);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    if (rc != KEEL_OK)
        return rc;
    if (!found) {
        bool rel = false;
        if (keel_relation_exists(s->ks, nsp, name, &rel) == KEEL_OK && rel)
            return sql_fail(s, KEEL_ETYPE, "42809",
                            "\"%s\" is not a sequence", name);
        if (st->missing_ok) {
            rc = sql_notice(s, "00000",
                            "relation \"%s\" does not exist, skipping", name);
            return rc != KEEL_OK ? rc : sql_complete(s, "ALTER SEQUENCE");
        }
        return missing(s, name);
    }
    seq_row_keep(row, kept);
    inc = row[SEQ_INC].v.i8;
    min = row[SEQ_MIN].v.i8;
    max = row[SEQ_MAX].v.i8;
    cycle = row[SEQ_CYCLE].v.b;
    for (size_t i = 0; i < st->n_options; i++) {
        const PgQuery__DefElem *d = st->options[i]->def_elem;
        rc = KEEL_OK;
        if (strcmp(d->defname, "increment") == 0) {
            rc = opt_int(s, d, &inc);
            if (rc == KEEL_OK && inc == 0)
                rc = sql_fail(s, KEEL_EINVAL, "22023",
                              "INCREMENT must not be zero");
        } else if (strcmp(d->defname, "minvalue") == 0) {
            no_min = d->arg == NULL;
            rc = no_min ? KEEL_OK : opt_int(s, d, &min);
        } else if (strcmp(d->defname, "maxvalue") == 0) {
            no_max = d->arg == NULL;
            rc = no_max ? KEEL_OK : opt_int(s, d, &max);
        } else if (strcmp(d->defname, "start") == 0) {
            rc = opt_int(s, d, &start);
            has_start = true;
        } else if (strcmp(d->defname, "restart") == 0) {
            has_restart = true;
            restart_start = d->arg == NULL;
            rc = d->arg != NULL ? opt_int(s, d, &restart) : KEEL_OK;
        } else if (strcmp(d->defname, "cycle") == 0) {
            cycle = d->arg != NULL &&
                    d->arg->node_case == PG_QUERY__NODE__NODE_BOOLEAN &&
                    d->arg->boolean->boolval;
        } else if (strcmp(d->defname, "cache") == 0) {
            int64_t c = 1;
            rc = opt_int(s, d, &c);
            if (rc == KEEL_OK && c < 1)
                rc = sql_fail(s, KEEL_EINVAL, "22023",
                              "CACHE (%" PRId64 ") must be greater than zero",
                              c);
        } else if (strcmp(d->defname, "owned_by") == 0) {
            rc = owned_by(s, d, nsp, onsp, orel);
            owner = true;
        } else {
            char what[96];
            snprintf(what, sizeof(what), "ALTER SEQUENCE ... %s", d->defname);
            rc = sql_unsupported(s, d->location, what);
        }
        if (rc != KEEL_OK)
            return rc;
    }
    if (no_min)
        min = inc > 0 ? 1 : INT64_MIN;
    if (no_max)
        max = inc > 0 ? INT64_MAX : -1;
    if (min >= max)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "MINVALUE (%" PRId64 ") must be less than MAXVALUE "
                        "(%" PRId64 ")",
                        min, max);
    if (!has_start) {
        rc = start_read(s, nsp, name, &start, &start_known);
        if (rc != KEEL_OK)
            return rc;
    }
    /* RESTART without a value: at START, the one this statement gives
     * if it gives one, as PostgreSQL reads the options */
    if (restart_start && has_start)
        restart = start;
    else if (restart_start && start_known)
        restart = start;
    else if (restart_start)
        return restart_value(s, nsp, name, &restart);
    if ((has_start || start_known) && (start < min || start > max))
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "START value (%" PRId64 ") cannot be %s than "
                        "%s (%" PRId64 ")",
                        start, start < min ? "less" : "greater",
                        start < min ? "MINVALUE" : "MAXVALUE",
                        start < min ? min : max);
    if (has_restart && (restart < min || restart > max))
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "RESTART value (%" PRId64 ") cannot be %s than "
                        "%s (%" PRId64 ")",
                        restart, restart < min ? "less" : "greater",
                        restart < min ? "MINVALUE" : "MAXVALUE",
                        restart < min ? min : max);
    if (has_restart)
        row[SEQ_NEXT].v.i8 = restart;
    row[SEQ_INC].v.i8 = inc;
    row[SEQ_MIN].v.i8 = min;
    row[SEQ_MAX].v.i8 = max;
    row[SEQ_CYCLE].v.b = cycle;
    if (owner)
        sql_store_key2(&row[SEQ_OWNERNSP], onsp, orel);
    rc = seq_replace(s, row);
    if (rc == KEEL_OK && has_start)
        rc = start_write(s, nsp, name, start);
    return rc != KEEL_OK ? rc : sql_complete(s, "ALTER SEQUENCE");
}

keel_status sql_sequences_restart_owned(sql_session *s, const char *nsp,
                                        const char *rel)
{
    char (*names)[2][KEEL_NAME_LEN] = NULL;
    size_t n = 0;
    bool exists = false;
    /* locked before it is read, so that two of these do not both hold
     * ACCESS SHARE and wait for each other's ACCESS EXCLUSIVE */
    keel_status rc = sql_store_exists(s, SEQ_TABLE, &exists);

    if (rc != KEEL_OK || !exists)
        return rc;
    rc = seq_lock(s);
    if (rc == KEEL_OK)
        rc = owned_list(s, nsp, rel, &names, &n);
    for (size_t i = 0; rc == KEEL_OK && i < n; i++) {
        keel_value key[2], row[SEQ_NCOLS];
        char kept[4][KEEL_NAME_LEN];
        int64_t start = 0;
        bool found = false;
        sql_store_key2(key, names[i][0], names[i][1]);
        rc = keel_lookup(s->ks, SQL_STORE_SCHEMA, SEQ_TABLE, key, row, &found);
        if (rc != KEEL_OK) {
            rc = sql_fail_engine(s, rc);
            break;
        }
        if (!found)
            continue;
        seq_row_keep(row, kept);
        rc = restart_value(s, names[i][0], names[i][1], &start);
        if (rc != KEEL_OK)
            break;
        row[SEQ_NEXT].v.i8 = start;
        rc = seq_replace(s, row);
    }
    free(names);
    return rc;
}
