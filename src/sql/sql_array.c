/*
 * sql_array.c: array functions and format(), PostgreSQL's, over keel's
 * arrays (one dimension, held as their text form, sql_array_next() and
 * sql_array_put() reading and writing it):
 *
 *   string_to_array(text, delimiter [, null string]), array_append(),
 *   array_prepend(), array_cat(), array_remove(), array_replace(),
 *   cardinality(), array_ndims(), array_lower(); format(fmt, args...)
 *   with %s, %I, %L and %%, positions (%2$s) and widths (%-10s, %*s).
 *
 * None is strict as a whole: each says what a NULL argument gives, as
 * PostgreSQL's do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

static keel_status nomem(sql_session *s)
{
    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
}

/* ---- analysis -------------------------------------------------------------- */

/* e's argument i coerced to type t (an untyped literal read as it). */
static keel_status arg_as(sql_session *s, sql_expr *e, uint16_t i, uint32_t t)
{
    return e->args[i]->type == t ? KEEL_OK
                                 : sql_expr_coerce(s, &e->args[i], t);
}

keel_status sql_array_analyse(sql_session *s, sql_expr *e, const char *name,
                              int32_t location)
{
    uint32_t t0 = e->args[0]->type, at = 0;
    keel_status rc = KEEL_OK;
    bool ok = true;

    switch (e->u.func) {
    case SQL_FUNC_STRING_TO_ARRAY:
        for (uint16_t i = 0; ok && rc == KEEL_OK && i < e->nargs; i++) {
            ok = sql_type_is_string(e->args[i]->type) ||
                 e->args[i]->type == SQL_TYPE_UNKNOWN;
            if (ok)
                rc = arg_as(s, e, i, SQL_TYPE_TEXT);
        }
        e->type = SQL_TYPE_TEXT_ARRAY;
        break;
    case SQL_FUNC_ARRAY_PREPEND:
        at = e->args[1]->type;
        ok = sql_type_elem(at) != 0;
        if (ok)
            rc = arg_as(s, e, 0, sql_type_elem(at));
        e->type = at;
        break;
    case SQL_FUNC_ARRAY_CAT_CALL:
        /* the typed one's type, the other read as it */
        at = sql_type_elem(t0) != 0 ? t0 : e->args[1]->type;
        ok = sql_type_elem(at) != 0;
        for (uint16_t i = 0; ok && rc == KEEL_OK && i < 2; i++) {
            ok = e->args[i]->type == at ||
                 e->args[i]->type == SQL_TYPE_UNKNOWN;
            if (ok)
                rc = arg_as(s, e, i, at);
        }
        e->type = at;
        break;
    case SQL_FUNC_ARRAY_APPEND:
    case SQL_FUNC_ARRAY_REMOVE:
    case SQL_FUNC_ARRAY_REPLACE:
        ok = sql_type_elem(t0) != 0;
        for (uint16_t i = 1; ok && rc == KEEL_OK && i < e->nargs; i++)
            rc = arg_as(s, e, i, sql_type_elem(t0));
        e->type = t0;
        break;
    case SQL_FUNC_CARDINALITY:
    case SQL_FUNC_ARRAY_NDIMS:
        ok = sql_type_elem(t0) != 0;
        e->type = SQL_TYPE_INT4;
        break;
    case SQL_FUNC_ARRAY_LOWER:
        ok = sql_type_elem(t0) != 0;
        if (ok)
            rc = arg_as(s, e, 1, SQL_TYPE_INT4);
        e->type = SQL_TYPE_INT4;
        break;
    default: /* SQL_FUNC_FORMAT: a text, then values of any type */
        ok = sql_type_is_string(t0) || t0 == SQL_TYPE_UNKNOWN;
        for (uint16_t i = 0; ok && rc == KEEL_OK && i < e->nargs; i++)
            if (e->args[i]->type == SQL_TYPE_UNKNOWN)
                rc = sql_expr_coerce(s, &e->args[i], SQL_TYPE_TEXT);
        e->type = SQL_TYPE_TEXT;
        break;
    }
    if (rc != KEEL_OK)
        return rc;
    return ok ? KEEL_OK : sql_no_such_function(s, location, name, e);
}

/* ---- evaluation ------------------------------------------------------------- */

/* An array being built: "{", elements, "}". */
typedef struct arr_buf {
    char *p;
    size_t n, cap;
    uint32_t count;
} arr_buf;

static keel_status arr_add(sql_session *s, arr_buf *b, const sql_value *v)
{
    keel_status rc;

    if (b->n + 2 > b->cap) {
        size_t cap = (b->cap + 16) * 2;
        char *np = sql_alloc(&s->arena, cap);
        if (np == NULL)
            return nomem(s);
        if (b->n > 0)
            memcpy(np, b->p, b->n);
        b->p = np;
        b->cap = cap;
    }
    b->p[b->n++] = b->count++ == 0 ? '{' : ',';
    rc = sql_array_put(s, &b->p, &b->n, &b->cap, v);
    return rc;
}

static keel_status arr_done(sql_session *s, arr_buf *b, uint32_t type,
                            sql_value *out)
{
    char *p = sql_alloc(&s->arena, b->n + 3);

    if (p == NULL)
        return nomem(s);
    if (b->count == 0) /* no element: "{}" */
        p[b->n++] = '{';
    else
        memcpy(p, b->p, b->n);
    p[b->n] = '}';
    *out = (sql_value){.type = type};
    out->v.s.p = p;
    out->v.s.len = (uint32_t)(b->n + 1);
    return KEEL_OK;
}

/* Element el (text, or null) as a value of type: its text is what the
 * array holds, so the value is read from it. */
static keel_status elem_value(sql_session *s, const char *el, uint32_t len,
                              bool isnull, uint32_t type, int32_t location,
                              sql_value *out)
{
    *out = (sql_value){.type = SQL_TYPE_UNKNOWN, .isnull = isnull};
    out->v.s.p = el;
    out->v.s.len = len;
    if (isnull) {
        out->type = type;
        return KEEL_OK;
    }
    return sql_value_cast(s, out, type, -1, true, location);
}

/* Appends array a's elements (of type elem) to b; remove: those equal
 * to *match (a NULL matching NULLs) are left out, or replace: put as
 * *with. */
static keel_status arr_copy(sql_session *s, arr_buf *b, const sql_value *a,
                            uint32_t elem, const sql_value *match,
                            const sql_value *with)
{
    const char *el;
    uint32_t pos = 0, len;
    bool isnull;
    keel_status rc = KEEL_OK;

    while (rc == KEEL_OK &&
           sql_array_next(s, a->v.s.p, a->v.s.len, &pos, &el, &len, &isnull)) {
        sql_value v;
        rc = elem_value(s, el, len, isnull, elem, -1, &v);
        if (rc != KEEL_OK)
            break;
        if (match != NULL &&
            (v.isnull || match->isnull
                 ? v.isnull && match->isnull
                 : sql_key_cmp(&v, match, false, false) == 0)) {
            if (with == NULL)
                continue;
            v = *with;
        }
        rc = arr_add(s, b, &v);
    }
    return rc;
}

/* string_to_array(text, delimiter [, null string]). */
static keel_status string_to_array(sql_session *s, const sql_value *a,
                                   uint16_t nargs, sql_value *out)
{
    const sql_value *nulls = nargs > 2 && !a[2].isnull ? &a[2] : NULL;
    const char *p, *end;
    arr_buf b = {0};
    keel_status rc = KEEL_OK;

    if (a[0].isnull) {
        *out = (sql_value){.type = SQL_TYPE_TEXT_ARRAY, .isnull = true};
        return KEEL_OK;
    }
    p = a[0].v.s.p;
    end = p != NULL ? p + a[0].v.s.len : p;
    while (rc == KEEL_OK && p < end) {
        /* a NULL delimiter: each character; an empty one: the whole */
        const char *q = a[1].isnull ? p + sql_utf8_char_len(p, (uint32_t)(end - p))
                        : a[1].v.s.len == 0 ? end
                                             : NULL;
        sql_value v = {.type = SQL_TYPE_TEXT};
        if (q == NULL) {
            q = p;
            while (q < end && ((size_t)(end - q) < a[1].v.s.len ||
                               memcmp(q, a[1].v.s.p, a[1].v.s.len) != 0))
                q++;
        }
        v.v.s.p = p;
        v.v.s.len = (uint32_t)(q - p);
        v.isnull = nulls != NULL && nulls->v.s.len == v.v.s.len &&
                   memcmp(nulls->v.s.p, p, v.v.s.len) == 0;
        rc = arr_add(s, &b, &v);
        p = q;
        if (!a[1].isnull && a[1].v.s.len > 0 && q < end) {
            p += a[1].v.s.len;
            if (p == end) {
                /* a delimiter last: an empty element after it */
                v.v.s.p = end;
                v.v.s.len = 0;
                v.isnull = nulls != NULL && nulls->v.s.len == 0;
                rc = arr_add(s, &b, &v);
            }
        }
    }
    return rc == KEEL_OK ? arr_done(s, &b, SQL_TYPE_TEXT_ARRAY, out) : rc;
}

/* format(): PostgreSQL's text_format(). */
static keel_status format(sql_session *s, const sql_value *a, uint16_t nargs,
                          sql_value *out)
{
    const char *f, *end;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    uint16_t next = 1;
    keel_status rc = KEEL_OK;

    *out = (sql_value){.type = SQL_TYPE_TEXT, .isnull = a[0].isnull};
    if (a[0].isnull)
        return KEEL_OK;
    f = a[0].v.s.p;
    end = f != NULL ? f + a[0].v.s.len : f;
    while (rc == KEEL_OK && f < end) {
        long argpos = 0, width = 0;
        bool left = false, have_width = false;
        const char *text = NULL;
        uint32_t tlen = 0;
        char conv;
        if (*f != '%') {
            text = f++;
            tlen = 1;
            goto put;
        }
        if (++f >= end) {
            rc = sql_fail(s, KEEL_EINVAL, "22023",
                          "unterminated format() type specifier");
            if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "For a single \"%%\" use \"%%%%\".");
            return rc;
        }
        if (*f == '%') {
            text = f++;
            tlen = 1;
            goto put;
        }
        /* [n$][-][width|*[n$]] */
        if (*f >= '0' && *f <= '9') {
            const char *q = f;
            long v = 0;
            while (q < end && *q >= '0' && *q <= '9' && v < 1000000)
                v = v * 10 + (*q++ - '0');
            if (q < end && *q == '$') {
                if (v == 0)
                    return sql_fail(s, KEEL_EINVAL, "22023",
                                    "format specifies argument 0, but "
                                    "arguments are numbered from 1");
                argpos = v;
                f = q + 1;
            }
        }
        if (f < end && *f == '-') {
            left = true;
            f++;
        }
        if (f < end && *f == '*') {
            long wp = next;
            f++;
            if (f < end && *f >= '0' && *f <= '9') {
                wp = 0;
                while (f < end && *f >= '0' && *f <= '9' && wp < 1000000)
                    wp = wp * 10 + (*f++ - '0');
                if (f >= end || *f++ != '$')
                    return sql_fail(s, KEEL_EINVAL, "22023",
                                    "unterminated format() type specifier");
            } else {
                next++;
            }
            if (wp >= nargs)
                return sql_fail(s, KEEL_EINVAL, "22023",
                                "too few arguments for format()");
            if (!a[wp].isnull) {
                sql_value w = a[wp];
                rc = sql_value_cast(s, &w, SQL_TYPE_INT4, -1, false, -1);
                if (rc != KEEL_OK)
                    return rc;
                width = w.v.i;
                if (width < 0) {
                    left = true;
                    width = -width;
                }
            }
            have_width = true;
        } else {
            while (f < end && *f >= '0' && *f <= '9' && width < 1000000) {
                width = width * 10 + (*f++ - '0');
                have_width = true;
            }
        }
        if (f >= end)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "unterminated format() type specifier");
        conv = *f++;
        if (conv != 's' && conv != 'I' && conv != 'L') {
            rc = sql_fail(s, KEEL_EINVAL, "22023",
                          "unrecognized format() type specifier \"%c\"", conv);
            if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "For a single \"%%\" use \"%%%%\".");
            return rc;
        }
        if (argpos == 0)
            argpos = next;
        next = (uint16_t)(argpos + 1);
        if (argpos >= nargs)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "too few arguments for format()");
        if (a[argpos].isnull) {
            if (conv == 'I')
                return sql_fail(s, KEEL_EINVAL, "22004",
                                "null values cannot be formatted as an SQL "
                                "identifier");
            text = conv == 'L' ? "NULL" : "";
            tlen = conv == 'L' ? 4 : 0;
        } else {
            rc = sql_value_text(s, &a[argpos], &text, &tlen);
            if (rc == KEEL_OK && conv != 's') {
                /* quote_ident() and quote_literal()'s forms */
                char *q = sql_alloc(&s->arena, 2 * (size_t)tlen + 4);
                size_t k = 0;
                bool plain = conv == 'I' && tlen > 0 &&
                             ((text[0] >= 'a' && text[0] <= 'z') ||
                              text[0] == '_');
                for (uint32_t i = 0; conv == 'I' && plain && i < tlen; i++)
                    plain = (text[i] >= 'a' && text[i] <= 'z') ||
                            (text[i] >= '0' && text[i] <= '9') ||
                            text[i] == '_';
                if (q == NULL)
                    return nomem(s);
                if (conv == 'L' && memchr(text, '\\', tlen) != NULL)
                    q[k++] = 'E';
                if (!plain)
                    q[k++] = conv == 'I' ? '"' : '\'';
                for (uint32_t i = 0; i < tlen; i++) {
                    char c = text[i];
                    if (!plain && (c == (conv == 'I' ? '"' : '\'') ||
                                   (conv == 'L' && c == '\\')))
                        q[k++] = c;
                    q[k++] = c;
                }
                if (!plain)
                    q[k++] = conv == 'I' ? '"' : '\'';
                text = q;
                tlen = (uint32_t)k;
            }
            if (rc != KEEL_OK)
                return rc;
        }
        if (have_width && (long)sql_utf8_count(text, tlen) < width) {
            long pad = width - (long)sql_utf8_count(text, tlen);
            char *q = sql_alloc(&s->arena, (size_t)pad + tlen + 1);
            if (q == NULL)
                return nomem(s);
            memset(q + (left ? tlen : 0), ' ', (size_t)pad);
            memcpy(q + (left ? 0 : (size_t)pad), text, tlen);
            text = q;
            tlen = (uint32_t)(tlen + (uint32_t)pad);
        }
    put:
        if (n + tlen + 1 > cap) {
            size_t nc = (cap + tlen + 64) * 2;
            char *nb = sql_alloc(&s->arena, nc);
            if (nb == NULL)
                return nomem(s);
            if (n > 0)
                memcpy(nb, buf, n);
            buf = nb;
            cap = nc;
        }
        memcpy(buf + n, text, tlen);
        n += tlen;
    }
    out->v.s.p = buf != NULL ? buf : "";
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

keel_status sql_array_eval(sql_session *s, const sql_expr *e,
                           const sql_value *row, sql_value *out)
{
    sql_value *a = sql_alloc(&s->arena, (e->nargs + 1u) * sizeof(*a));
    uint32_t elem = sql_type_elem(e->type);
    arr_buf b = {0};
    keel_status rc = KEEL_OK;

    if (a == NULL)
        return nomem(s);
    for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++)
        rc = sql_expr_eval(s, e->args[i], row, &a[i]);
    if (rc != KEEL_OK)
        return rc;
    *out = (sql_value){.type = e->type, .isnull = true};
    switch (e->u.func) {
    case SQL_FUNC_STRING_TO_ARRAY:
        return string_to_array(s, a, e->nargs, out);
    case SQL_FUNC_FORMAT:
        return format(s, a, e->nargs, out);
    case SQL_FUNC_CARDINALITY:
    case SQL_FUNC_ARRAY_NDIMS:
    case SQL_FUNC_ARRAY_LOWER: {
        const char *el;
        uint32_t pos = 0, len, count = 0;
        bool isnull;
        if (a[0].isnull || (e->nargs > 1 && a[1].isnull))
            return KEEL_OK;
        while (sql_array_next(s, a[0].v.s.p, a[0].v.s.len, &pos, &el, &len,
                              &isnull))
            count++;
        out->isnull = e->u.func != SQL_FUNC_CARDINALITY &&
                      (count == 0 ||
                       (e->u.func == SQL_FUNC_ARRAY_LOWER && a[1].v.i != 1));
        out->v.i = e->u.func == SQL_FUNC_CARDINALITY ? count : 1;
        return KEEL_OK;
    }
    case SQL_FUNC_ARRAY_APPEND:
    case SQL_FUNC_ARRAY_PREPEND:
    case SQL_FUNC_ARRAY_CAT_CALL: {
        /* a NULL array is an empty one; a NULL element is one */
        const sql_value *first = &a[0], *second = &a[1];
        if (e->u.func == SQL_FUNC_ARRAY_CAT_CALL && a[0].isnull && a[1].isnull)
            return KEEL_OK;
        if (e->u.func == SQL_FUNC_ARRAY_PREPEND)
            rc = arr_add(s, &b, first);
        else if (!first->isnull)
            rc = arr_copy(s, &b, first, elem, NULL, NULL);
        if (rc == KEEL_OK && e->u.func == SQL_FUNC_ARRAY_APPEND)
            rc = arr_add(s, &b, second);
        else if (rc == KEEL_OK && !second->isnull)
            rc = arr_copy(s, &b, second, elem, NULL, NULL);
        return rc == KEEL_OK ? arr_done(s, &b, e->type, out) : rc;
    }
    default: /* SQL_FUNC_ARRAY_REMOVE, SQL_FUNC_ARRAY_REPLACE */
        if (a[0].isnull)
            return KEEL_OK;
        rc = arr_copy(s, &b, &a[0], elem, &a[1],
                      e->u.func == SQL_FUNC_ARRAY_REPLACE ? &a[2] : NULL);
        return rc == KEEL_OK ? arr_done(s, &b, e->type, out) : rc;
    }
}

keel_status sql_array_cast(sql_session *s, sql_value *v, uint32_t type,
                           bool is_explicit, int32_t location)
{
    uint32_t to = sql_type_elem(type);
    const char *el;
    uint32_t pos = 0, len;
    bool isnull;
    arr_buf b = {0};
    keel_status rc = KEEL_OK;

    /* each element read from its text as the new type reads one, as
     * PostgreSQL's array_in() of the other's output would */
    (void)is_explicit;
    if (v->isnull) {
        v->type = type;
        return KEEL_OK;
    }
    while (rc == KEEL_OK &&
           sql_array_next(s, v->v.s.p, v->v.s.len, &pos, &el, &len, &isnull)) {
        sql_value x;
        rc = elem_value(s, el, len, isnull, to, location, &x);
        if (rc == KEEL_OK)
            rc = arr_add(s, &b, &x);
    }
    if (rc == KEEL_OK)
        rc = arr_done(s, &b, type, v);
    return rc;
}
