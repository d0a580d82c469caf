/*
 * sql_copy.c: COPY table FROM STDIN and COPY table TO STDOUT, in
 * PostgreSQL's text and CSV formats.
 *
 * COPY FROM pulls the client's data through the sink (copy_in_read) and
 * cuts it into rows as it comes: in text format a row ends at a newline
 * (a newline in a value arrives escaped as \n) and values are separated
 * by the delimiter, \N is NULL and backslash sequences are undone; in CSV
 * a quoted value may hold delimiters, newlines and doubled quotes, and an
 * unquoted empty value is NULL.  Each row's values are read as their
 * columns' types, as literals are, and inserted.  A bad row fails the
 * statement with its line in the error's context, worded as PostgreSQL
 * words it; the rest of the client's data is then read and dropped, so
 * that the connection stays in step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/sql_internal.h"

typedef struct copy_opts {
    bool csv;
    char delim;
    const char *null_str;
    bool header;
} copy_opts;

static keel_status copy_options(sql_session *s, const PgQuery__CopyStmt *st,
                                copy_opts *o)
{
    o->csv = false;
    o->delim = 0;
    o->null_str = NULL;
    o->header = false;
    for (size_t i = 0; i < st->n_options; i++) {
        const PgQuery__DefElem *d = st->options[i]->def_elem;
        const char *v = NULL;
        if (d->arg != NULL) {
            v = sql_node_string(d->arg);
            if (v == NULL && d->arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                d->arg->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL)
                v = d->arg->a_const->sval->sval;
        }
        if (strcmp(d->defname, "format") == 0) {
            if (v != NULL && strcasecmp(v, "csv") == 0)
                o->csv = true;
            else if (v == NULL || strcasecmp(v, "text") != 0)
                return sql_unsupported(s, d->location, "COPY in this format");
        } else if (strcmp(d->defname, "delimiter") == 0) {
            if (v == NULL || strlen(v) != 1 || v[0] == '\n' || v[0] == '\r' ||
                v[0] == '\\')
                return sql_fail_at(s, d->location, KEEL_EINVAL, "22023",
                                   "COPY delimiter must be a single one-byte "
                                   "character");
            o->delim = v[0];
        } else if (strcmp(d->defname, "null") == 0) {
            if (v == NULL)
                return sql_fail_at(s, d->location, KEEL_EINVAL, "22023",
                                   "NULL requires a string");
            o->null_str = v;
        } else if (strcmp(d->defname, "header") == 0) {
            /* HEADER, HEADER true/false/on/off (MATCH is not kept). */
            o->header = d->arg == NULL ||
                        (d->arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                         d->arg->a_const->val_case ==
                             PG_QUERY__A__CONST__VAL_BOOLVAL &&
                         d->arg->a_const->boolval->boolval) ||
                        (v != NULL && (strcasecmp(v, "true") == 0 ||
                                       strcasecmp(v, "on") == 0));
        } else if (strcmp(d->defname, "freeze") == 0) {
            /* A hint for the storage of a new table: keel writes every
             * row as it would anyway. */
        } else {
            return sql_unsupported(s, d->location, "this COPY option");
        }
    }
    if (o->delim == 0)
        o->delim = o->csv ? ',' : '\t';
    if (o->null_str == NULL)
        o->null_str = o->csv ? "" : "\\N";
    if (o->header && !o->csv)
        return sql_unsupported(s, -1, "COPY HEADER in text format");
    return KEEL_OK;
}

/* The columns a COPY names (all, in order, if none). */
static keel_status copy_columns(sql_session *s, const PgQuery__CopyStmt *st,
                                const sql_table *t, uint16_t **cols,
                                uint16_t *n)
{
    *cols = sql_alloc(&s->arena, (t->info.ncols + 1) * sizeof(uint16_t));
    if (*cols == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (st->n_attlist == 0) {
        for (uint16_t i = 0; i < t->info.ncols; i++)
            (*cols)[i] = i;
        *n = t->info.ncols;
        return KEEL_OK;
    }
    *n = 0;
    for (size_t i = 0; i < st->n_attlist; i++) {
        const char *name = sql_node_string(st->attlist[i]);
        bool found = false;
        for (uint16_t c = 0; name != NULL && c < t->info.ncols; c++)
            if (strcmp(t->cols[c].name, name) == 0) {
                for (uint16_t j = 0; j < *n; j++)
                    if ((*cols)[j] == c)
                        return sql_fail(s, KEEL_EINVAL, "42701",
                                        "column \"%s\" specified more than "
                                        "once",
                                        name);
                if (*n >= t->info.ncols)
                    break;
                (*cols)[(*n)++] = c;
                found = true;
            }
        if (!found)
            return sql_fail(s, KEEL_ENOENT, "42703",
                            "column \"%s\" of relation \"%s\" does not exist",
                            name != NULL ? name : "?", t->name);
    }
    return KEEL_OK;
}

/* ---- COPY FROM ------------------------------------------------------------ */

/* An error's CONTEXT as PostgreSQL words it: COPY t, line N[, column c:
 * "value" | : "line"]. */
static void copy_context(sql_session *s, const sql_table *t, uint64_t line,
                         const char *column, const char *text)
{
    char *ctx;
    size_t at, cap;

    if (s->err == NULL)
        return;
    /* a context the value's input gave (JSON data, line 1: ...) comes
     * first, on a line of its own */
    at = strlen(s->err->context);
    if (at > 0 && at + 2 < sizeof(s->err->context))
        s->err->context[at++] = '\n';
    else
        at = 0;
    ctx = s->err->context + at;
    cap = sizeof(s->err->context) - at;
    if (column != NULL)
        snprintf(ctx, cap, "COPY %s, line %llu, column %s: \"%s\"", t->name,
                 (unsigned long long)line, column, text);
    else if (text != NULL)
        snprintf(ctx, cap, "COPY %s, line %llu: \"%s\"", t->name,
                 (unsigned long long)line, text);
    else
        snprintf(ctx, cap, "COPY %s, line %llu", t->name,
                 (unsigned long long)line);
}

/* A growable byte buffer. */
typedef struct bytes {
    char *p;
    size_t len, cap;
} bytes;

static bool bytes_put(bytes *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap == 0 ? 1024 : b->cap;
        char *np;
        while (cap < b->len + n + 1)
            cap *= 2;
        np = realloc(b->p, cap);
        if (np == NULL)
            return false;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return true;
}

/* Undoes text format's backslash sequences in field f (in place). */
static size_t text_unescape(char *f, size_t n)
{
    size_t i = 0, o = 0;

    while (i < n) {
        char c = f[i++];
        if (c != '\\' || i >= n) {
            f[o++] = c;
            continue;
        }
        c = f[i++];
        switch (c) {
        case 'b':
            f[o++] = '\b';
            break;
        case 'f':
            f[o++] = '\f';
            break;
        case 'n':
            f[o++] = '\n';
            break;
        case 'r':
            f[o++] = '\r';
            break;
        case 't':
            f[o++] = '\t';
            break;
        case 'v':
            f[o++] = '\v';
            break;
        case 'x': {
            int v = 0, k = 0;
            while (k < 2 && i < n &&
                   ((f[i] >= '0' && f[i] <= '9') || ((f[i] | 0x20) >= 'a' &&
                                                     (f[i] | 0x20) <= 'f'))) {
                char h = (char)(f[i] | 0x20);
                v = v * 16 + (h <= '9' ? h - '0' : h - 'a' + 10);
                i++;
                k++;
            }
            f[o++] = k > 0 ? (char)v : 'x';
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0', k = 1;
                while (k < 3 && i < n && f[i] >= '0' && f[i] <= '7') {
                    v = v * 8 + (f[i++] - '0');
                    k++;
                }
                f[o++] = (char)v;
            } else {
                f[o++] = c; /* \\ and any other character stand for it */
            }
            break;
        }
    }
    return o;
}

/* One parsed row: field pointers into the row buffer. */
typedef struct copy_row {
    char **f;
    size_t *len;
    bool *isnull;
    uint16_t n, cap;
} copy_row;

static bool row_add(copy_row *r, char *p, size_t len, bool isnull)
{
    if (r->n == r->cap) {
        uint16_t cap = r->cap == 0 ? 16 : (uint16_t)(r->cap * 2);
        char **f = realloc(r->f, cap * sizeof(*f));
        size_t *l;
        bool *nl;
        if (f == NULL)
            return false;
        r->f = f;
        l = realloc(r->len, cap * sizeof(*l));
        if (l == NULL)
            return false;
        r->len = l;
        nl = realloc(r->isnull, cap * sizeof(*nl));
        if (nl == NULL)
            return false;
        r->isnull = nl;
        r->cap = cap;
    }
    r->f[r->n] = p;
    r->len[r->n] = len;
    r->isnull[r->n++] = isnull;
    return true;
}

/* Splits one text-format line (no newline) into fields. */
static bool split_text(char *line, size_t n, const copy_opts *o, copy_row *r)
{
    size_t start = 0, nl = strlen(o->null_str);

    r->n = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && line[i] == '\\') {
            i++; /* an escaped character is never a delimiter */
            continue;
        }
        if (i == n || line[i] == o->delim) {
            size_t len = i - start;
            bool isnull = len == nl && memcmp(line + start, o->null_str, nl) == 0;
            if (!row_add(r, line + start, isnull ? 0 : text_unescape(line + start, len),
                         isnull))
                return false;
            start = i + 1;
        }
    }
    return true;
}

/* Splits one CSV record (its quoted newlines included) into fields,
 * removing quotes in place. */
static bool split_csv(char *rec, size_t n, const copy_opts *o, copy_row *r)
{
    size_t i = 0, nl = strlen(o->null_str);

    r->n = 0;
    for (;;) {
        size_t out = i, start = i;
        bool quoted = false, any_quote = false;
        while (i < n) {
            char c = rec[i];
            if (quoted) {
                if (c == '"' && i + 1 < n && rec[i + 1] == '"') {
                    rec[out++] = '"';
                    i += 2;
                } else if (c == '"') {
                    quoted = false;
                    i++;
                } else {
                    rec[out++] = c;
                    i++;
                }
            } else if (c == '"') {
                quoted = any_quote = true;
                i++;
            } else if (c == o->delim) {
                break;
            } else {
                rec[out++] = c;
                i++;
            }
        }
        {
            size_t len = out - start;
            bool isnull = !any_quote && len == nl &&
                          memcmp(rec + start, o->null_str, nl) == 0;
            if (!row_add(r, rec + start, isnull ? 0 : len, isnull))
                return false;
        }
        if (i >= n)
            return true;
        i++; /* the delimiter */
    }
}

/* Whether a CSV record ending at p[n] is complete: its quotes balance. */
static bool csv_complete(const char *p, size_t n)
{
    bool quoted = false;

    for (size_t i = 0; i < n; i++)
        if (p[i] == '"')
            quoted = !quoted;
    return !quoted;
}

static keel_status copy_from(sql_session *s, const PgQuery__CopyStmt *st,
                             sql_table *t, const copy_opts *o)
{
    uint16_t *cols, ncols;
    const sql_defaults *defs;
    bool *unlisted;
    bytes pending = {0}; /* data not yet cut into rows */
    copy_row r = {0};
    keel_value *kv = NULL;
    sql_value *vals = NULL;
    uint64_t line = 0, rows = 0;
    char linebuf[200];
    sql_arena_mark mark;
    bool done = false, skip_header = o->header, failed_client = false;
    keel_status rc;
    char why[256] = "";

    rc = copy_columns(s, st, t, &cols, &ncols);
    if (rc == KEEL_OK)
        rc = sql_defaults_of(s, t, &defs);
    if (rc == KEEL_OK)
        rc = sql_checks_prepare(s, t, defs);
    if (rc != KEEL_OK)
        return rc;
    /* The columns the data leaves out take their defaults. */
    unlisted = sql_alloc(&s->arena, t->info.ncols + 1u);
    if (unlisted == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t c = 0; c < t->info.ncols; c++)
        unlisted[c] = sql_default_has(defs, c);
    for (uint16_t i = 0; i < ncols; i++)
        unlisted[cols[i]] = false;
    if (s->sink->copy_in_begin == NULL || s->sink->copy_in_read == NULL)
        return sql_unsupported(s, -1, "COPY FROM STDIN over this connection");
    kv = calloc(t->info.ncols + 1u, sizeof(*kv));
    vals = calloc(t->info.ncols + 1u, sizeof(*vals));
    if (kv == NULL || vals == NULL) {
        free(kv);
        free(vals);
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    if (s->sink->copy_in_begin(s->sink->ctx, ncols, 0) != 0) {
        rc = sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        goto out;
    }
    while (rc == KEEL_OK && !done) {
        const char *data;
        size_t len, consumed = 0;
        if (s->sink->copy_in_read(s->sink->ctx, &data, &len, why, sizeof(why)) !=
            0) {
            failed_client = true;
            rc = why[0] != '\0'
                     ? sql_fail(s, KEEL_EINVAL, "57014",
                                "COPY from stdin failed: %s", why)
                     : sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
            break;
        }
        if (len == 0) {
            done = true;
            /* A last row without its newline. */
            if (pending.len > 0 && !bytes_put(&pending, "\n", 1))
                rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        } else if (!bytes_put(&pending, data, len)) {
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        /* Every complete row in what has arrived. */
        while (rc == KEEL_OK) {
            char *nlp = memchr(pending.p + consumed, '\n', pending.len - consumed);
            size_t end, rlen;
            char *rec;
            if (nlp == NULL)
                break;
            end = (size_t)(nlp - pending.p);
            if (o->csv && !csv_complete(pending.p + consumed, end - consumed)) {
                /* A quoted newline: the record goes on; find the next. */
                char *more = nlp;
                while (more != NULL &&
                       !csv_complete(pending.p + consumed,
                                     (size_t)(more - pending.p) - consumed))
                    more = memchr(more + 1, '\n',
                                  pending.len - (size_t)(more + 1 - pending.p));
                if (more == NULL)
                    break;
                end = (size_t)(more - pending.p);
            }
            rec = pending.p + consumed;
            rlen = end - consumed;
            consumed = end + 1;
            if (rlen > 0 && rec[rlen - 1] == '\r')
                rlen--;
            line++;
            if (skip_header) {
                skip_header = false;
                continue;
            }
            if (rlen == 2 && rec[0] == '\\' && rec[1] == '.') {
                /* The end-of-data marker, alone on its line in either
                 * format: what follows is ignored. */
                done = true;
                consumed = pending.len;
                break;
            }
            rc = sql_check_cancel(s);
            if (rc != KEEL_OK)
                break;
            mark = sql_arena_save(&s->arena);
            /* The line as it came, for an error's context. */
            if (rlen < sizeof(linebuf)) {
                memcpy(linebuf, rec, rlen);
                linebuf[rlen] = '\0';
            } else {
                memcpy(linebuf, rec, sizeof(linebuf) - 4);
                memcpy(linebuf + sizeof(linebuf) - 4, "...", 4);
            }
            if (!(o->csv ? split_csv(rec, rlen, o, &r) : split_text(rec, rlen, o, &r))) {
                rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
                break;
            }
            /* As PostgreSQL: too many fields first, then each column in
             * order, missing or read as its type. */
            if (r.n > ncols) {
                rc = sql_fail(s, KEEL_EINVAL, "22P04",
                              "extra data after last expected column");
                copy_context(s, t, line, NULL, linebuf);
            }
            for (uint16_t c = 0; rc == KEEL_OK && c < t->info.ncols; c++)
                vals[c] = (sql_value){.type = SQL_TYPE_UNKNOWN, .isnull = true};
            for (uint16_t i = 0; rc == KEEL_OK && i < ncols; i++) {
                const keel_column_info *ci = &t->cols[cols[i]];
                sql_value *v = &vals[cols[i]];
                if (i >= r.n) {
                    rc = sql_fail(s, KEEL_EINVAL, "22P04",
                                  "missing data for column \"%s\"", ci->name);
                    copy_context(s, t, line, NULL, linebuf);
                    break;
                }
                if (r.isnull[i])
                    continue;
                v->isnull = false;
                v->type = SQL_TYPE_UNKNOWN;
                v->v.s.p = r.f[i];
                v->v.s.len = (uint32_t)r.len[i];
                rc = sql_value_cast(s, v, sql_column_type(ci),
                                    sql_column_typmod(ci), false, -1);
                if (rc != KEEL_OK) {
                    char field[128];
                    snprintf(field, sizeof(field), "%.*s",
                             (int)(r.len[i] < 100 ? r.len[i] : 100), r.f[i]);
                    copy_context(s, t, line, ci->name, field);
                }
            }
            for (uint16_t c = 0; rc == KEEL_OK && c < t->info.ncols; c++) {
                if (!unlisted[c])
                    continue;
                rc = sql_default_eval(s, defs, c, &vals[c]);
                if (rc == KEEL_OK && !vals[c].isnull)
                    rc = sql_value_cast(s, &vals[c], sql_column_type(&t->cols[c]),
                                        sql_column_typmod(&t->cols[c]), false, -1);
                if (rc != KEEL_OK)
                    copy_context(s, t, line, NULL, NULL);
            }
            for (uint16_t c = 0; rc == KEEL_OK && c < t->info.ncols; c++) {
                if (vals[c].isnull && t->cols[c].notnull) {
                    rc = sql_fail(s, KEEL_ETYPE, "23502",
                                  "null value in column \"%s\" of relation "
                                  "\"%s\" violates not-null constraint",
                                  t->cols[c].name, t->name);
                    copy_context(s, t, line, NULL, NULL);
                }
                vals[c].type = sql_type_of_keel(t->cols[c].type);
                sql_value_to_keel(&vals[c], &kv[c]);
            }
            if (rc == KEEL_OK) {
                rc = sql_checks_run(s, t, vals);
                if (rc != KEEL_OK)
                    copy_context(s, t, line, NULL, linebuf);
            }
            if (rc == KEEL_OK) {
                rc = keel_insert(s->ks, t->schema, t->name, kv);
                if (rc != KEEL_OK) {
                    rc = sql_fail_engine(s, rc);
                    copy_context(s, t, line, NULL, NULL);
                }
            }
            if (rc == KEEL_OK)
                rc = sql_fk_row(s, t, NULL, vals);
            if (rc == KEEL_OK)
                rows++;
            sql_arena_restore(&s->arena, mark);
        }
        /* Keep what is left of a row cut by the chunk's end. */
        if (consumed > 0) {
            memmove(pending.p, pending.p + consumed, pending.len - consumed);
            pending.len -= consumed;
        }
        if (done && pending.len > 0 && rc == KEEL_OK)
            rc = sql_fail(s, KEEL_EINVAL, "22P04",
                          "unterminated CSV quoted field");
    }
    /* After a failure the client's data is read to its end and dropped. */
    while (rc != KEEL_OK && !done && !failed_client) {
        const char *data;
        size_t len;
        if (s->sink->copy_in_read(s->sink->ctx, &data, &len, why, sizeof(why)) !=
                0 ||
            len == 0)
            break;
    }
    if (rc == KEEL_OK)
        rc = sql_complete_count(s, "COPY", rows);
out:
    free(pending.p);
    free(r.f);
    free(r.len);
    free(r.isnull);
    free(kv);
    free(vals);
    return rc;
}

/* ---- COPY TO -------------------------------------------------------------- */

static bool put_text_field(bytes *b, const char *p, uint32_t n, char delim)
{
    for (uint32_t i = 0; i < n; i++) {
        char c = p[i], e = 0;
        switch (c) {
        case '\\':
            e = '\\';
            break;
        case '\n':
            e = 'n';
            break;
        case '\r':
            e = 'r';
            break;
        case '\t':
            e = 't';
            break;
        case '\b':
            e = 'b';
            break;
        case '\f':
            e = 'f';
            break;
        case '\v':
            e = 'v';
            break;
        default:
            if (c == delim)
                e = c;
            break;
        }
        if (e != 0) {
            char esc[2] = {'\\', e};
            if (!bytes_put(b, esc, 2))
                return false;
        } else if (!bytes_put(b, &c, 1)) {
            return false;
        }
    }
    return true;
}

static bool put_csv_field(bytes *b, const char *p, uint32_t n, char delim,
                          const char *null_str)
{
    bool quote = n == 0 || (strlen(null_str) == n && memcmp(p, null_str, n) == 0);

    for (uint32_t i = 0; i < n && !quote; i++)
        quote = p[i] == delim || p[i] == '"' || p[i] == '\n' || p[i] == '\r';
    if (!quote)
        return bytes_put(b, p, n);
    if (!bytes_put(b, "\"", 1))
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!bytes_put(b, p + i, 1) || (p[i] == '"' && !bytes_put(b, "\"", 1)))
            return false;
    return bytes_put(b, "\"", 1);
}

static keel_status copy_to(sql_session *s, const PgQuery__CopyStmt *st,
                           sql_table *t, const copy_opts *o)
{
    uint16_t *cols, ncols;
    sql_scan sc;
    sql_arena_mark mark;
    bytes b = {0};
    uint64_t rows = 0;
    bool found;
    keel_status rc;

    rc = copy_columns(s, st, t, &cols, &ncols);
    if (rc != KEEL_OK)
        return rc;
    if (s->sink->copy_out_begin == NULL || s->sink->copy_out_data == NULL)
        return sql_unsupported(s, -1, "COPY TO STDOUT over this connection");
    if (s->sink->copy_out_begin(s->sink->ctx, ncols, 0) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    if (o->header) {
        for (uint16_t i = 0; i < ncols; i++) {
            const char *name = t->cols[cols[i]].name;
            if ((i > 0 && !bytes_put(&b, &o->delim, 1)) ||
                !put_csv_field(&b, name, (uint32_t)strlen(name), o->delim,
                               o->null_str))
                rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        if (rc == KEEL_OK && (!bytes_put(&b, "\n", 1) ||
                              s->sink->copy_out_data(s->sink->ctx, b.p, b.len) != 0))
            rc = sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        b.len = 0;
    }
    if (rc == KEEL_OK)
        rc = sql_scan_begin(s, &sc, t, NULL);
    if (rc != KEEL_OK) {
        free(b.p);
        return rc;
    }
    mark = sql_arena_save(&s->arena);
    while ((rc = sql_scan_next(s, &sc, &found)) == KEEL_OK && found) {
        bool ok = true;
        b.len = 0;
        for (uint16_t i = 0; ok && i < ncols; i++) {
            const sql_value *v = &sc.row[cols[i]];
            const char *p;
            uint32_t len;
            if (i > 0)
                ok = bytes_put(&b, &o->delim, 1);
            if (!ok)
                break;
            if (v->isnull) {
                ok = bytes_put(&b, o->null_str, strlen(o->null_str));
                continue;
            }
            rc = sql_value_text(s, v, &p, &len);
            if (rc != KEEL_OK)
                break;
            ok = o->csv ? put_csv_field(&b, p, len, o->delim, o->null_str)
                        : put_text_field(&b, p, len, o->delim);
        }
        if (rc != KEEL_OK)
            break;
        if (!ok || !bytes_put(&b, "\n", 1)) {
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            break;
        }
        if (s->sink->copy_out_data(s->sink->ctx, b.p, b.len) != 0) {
            rc = sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
            break;
        }
        rows++;
        sql_arena_restore(&s->arena, mark);
    }
    sql_scan_end(&sc);
    free(b.p);
    if (rc != KEEL_OK)
        return rc;
    return sql_complete_count(s, "COPY", rows);
}

keel_status sql_exec_copy(sql_session *s, const PgQuery__CopyStmt *st)
{
    sql_table t;
    copy_opts o;
    keel_status rc;

    if (st->query != NULL)
        return sql_unsupported(s, -1, "COPY of a query");
    if (st->filename != NULL && st->filename[0] != '\0')
        return sql_unsupported(s, -1, "COPY to or from a server file or program");
    if (st->where_clause != NULL)
        return sql_unsupported(s, -1, "COPY ... WHERE");
    rc = copy_options(s, st, &o);
    if (rc == KEEL_OK)
        rc = sql_table_open(s, st->relation, &t);
    if (rc != KEEL_OK || s->describe_only)
        return rc;
    if (st->is_from) {
        /* its rows' foreign keys checked at its end (sql_fkey.c) */
        sql_fk_queue q;
        rc = sql_fk_stmt_begin(s, &q);
        if (rc == KEEL_OK)
            rc = copy_from(s, st, &t, &o);
        return sql_fk_stmt_end(s, &q, rc);
    }
    return copy_to(s, st, &t, &o);
}
