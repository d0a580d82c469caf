/*
 * sql_string.c: PostgreSQL's string functions over UTF-8 text, counting
 * characters, not bytes, as PostgreSQL does in a UTF8 database:
 *
 *   substr(text, int [, int]) and substring(... FROM ... FOR ...),
 *   strpos(text, text) and position(... IN ...), replace(), btrim(),
 *   ltrim(), rtrim() (and TRIM(... FROM ...)), left(), right(),
 *   repeat(), reverse(), lpad(), rpad(), starts_with(); concat() and
 *   concat_ws() (any arguments, NULLs skipped).
 *
 * Every function but concat() and concat_ws() is strict: a NULL argument
 * gives NULL before it is called (sql_expr.c).
 */
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

uint32_t sql_utf8_char_len(const char *p, uint32_t left)
{
    unsigned char c = (unsigned char)p[0];
    uint32_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;

    return n < left ? n : left;
}

uint32_t sql_utf8_count(const char *p, uint32_t len)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < len; i += sql_utf8_char_len(p + i, len - i))
        n++;
    return n;
}

/* The byte offset of character k (0-based; the end when k is past it). */
static uint32_t char_offset(const char *p, uint32_t len, int64_t k)
{
    uint32_t i = 0;

    for (; k > 0 && i < len; k--)
        i += sql_utf8_char_len(p + i, len - i);
    return i;
}

static keel_status text_out(sql_session *s, sql_value *out, const char *p,
                            uint32_t len)
{
    char *q = sql_alloc(&s->arena, len + 1u);

    if (q == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(q, p, len);
    q[len] = '\0';
    out->v.s.p = q;
    out->v.s.len = len;
    return KEEL_OK;
}

/* Whether the character at p (n bytes) is one of set's. */
static bool in_set(const char *p, uint32_t n, const sql_value *set)
{
    const char *q = set->v.s.p;
    uint32_t len = set->v.s.len;

    for (uint32_t i = 0; i < len;) {
        uint32_t m = sql_utf8_char_len(q + i, len - i);
        if (m == n && memcmp(q + i, p, n) == 0)
            return true;
        i += m;
    }
    return false;
}

static keel_status trim(sql_session *s, sql_func f, const sql_value *a,
                        const sql_value *set, sql_value *out)
{
    static const sql_value space = {.type = SQL_TYPE_TEXT,
                                    .v.s = {.p = " ", .len = 1}};
    const char *p = a->v.s.p;
    uint32_t lo = 0, hi = a->v.s.len;

    if (set == NULL)
        set = &space;
    if (f != SQL_FUNC_RTRIM)
        while (lo < hi && in_set(p + lo, sql_utf8_char_len(p + lo, hi - lo), set))
            lo += sql_utf8_char_len(p + lo, hi - lo);
    if (f != SQL_FUNC_LTRIM)
        while (hi > lo) {
            uint32_t start = hi - 1;
            while (start > lo && ((unsigned char)p[start] & 0xC0) == 0x80)
                start--;
            if (!in_set(p + start, hi - start, set))
                break;
            hi = start;
        }
    return text_out(s, out, p + lo, hi - lo);
}

static keel_status pad(sql_session *s, sql_func f, const sql_value *a,
                       int64_t want, const sql_value *fill, sql_value *out)
{
    uint32_t have = sql_utf8_count(a->v.s.p, a->v.s.len), flen, used = 0;
    const char *fp = fill != NULL ? fill->v.s.p : " ";
    uint64_t need;
    char *q;

    flen = fill != NULL ? fill->v.s.len : 1;
    if (want <= 0)
        return text_out(s, out, "", 0);
    if (want <= have || flen == 0)
        return text_out(s, out, a->v.s.p,
                        char_offset(a->v.s.p, a->v.s.len,
                                    want < have ? want : have));
    need = (uint64_t)a->v.s.len + (uint64_t)(want - have) * 4;
    if (need > (1u << 30))
        return sql_fail(s, KEEL_ETOOBIG, "54000", "requested length too large");
    q = sql_alloc(&s->arena, (size_t)need + 1);
    if (q == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (f == SQL_FUNC_RPAD) {
        memcpy(q, a->v.s.p, a->v.s.len);
        used = a->v.s.len;
    }
    for (int64_t k = 0, i = 0; k < want - have; k++) {
        uint32_t m = sql_utf8_char_len(fp + i, flen - (uint32_t)i);
        memcpy(q + used, fp + i, m);
        used += m;
        i += m;
        if ((uint32_t)i >= flen)
            i = 0;
    }
    if (f == SQL_FUNC_LPAD) {
        memcpy(q + used, a->v.s.p, a->v.s.len);
        used += a->v.s.len;
    }
    out->v.s.p = q;
    out->v.s.len = used;
    return KEEL_OK;
}

keel_status sql_string_eval(sql_session *s, const sql_expr *e,
                            const sql_value *a, sql_value *out)
{
    const char *p = a[0].v.s.p;
    uint32_t len = a[0].v.s.len;

    switch (e->u.func) {
    case SQL_FUNC_SUBSTR: {
        int64_t start = a[1].v.i, from = start > 1 ? start : 1, end;
        uint32_t b0, b1;
        if (e->nargs < 3) {
            b0 = char_offset(p, len, from - 1);
            return text_out(s, out, p + b0, len - b0);
        }
        if (a[2].v.i < 0)
            return sql_fail(s, KEEL_EINVAL, "22011",
                            "negative substring length not allowed");
        end = start + a[2].v.i; /* exclusive, 1-based */
        if (end <= from)
            return text_out(s, out, "", 0);
        b0 = char_offset(p, len, from - 1);
        b1 = b0 + char_offset(p + b0, len - b0, end - from);
        return text_out(s, out, p + b0, b1 - b0);
    }
    case SQL_FUNC_STRPOS: {
        const char *sub = a[1].v.s.p;
        uint32_t n = a[1].v.s.len;
        out->v.i = 0;
        if (n == 0) {
            out->v.i = 1;
            return KEEL_OK;
        }
        for (uint32_t i = 0, k = 1; i + n <= len; i += sql_utf8_char_len(p + i, len - i), k++)
            if (memcmp(p + i, sub, n) == 0) {
                out->v.i = k;
                break;
            }
        return KEEL_OK;
    }
    case SQL_FUNC_REPLACE: {
        const char *from = a[1].v.s.p, *to = a[2].v.s.p;
        uint32_t fn = a[1].v.s.len, tn = a[2].v.s.len, hits = 0, used = 0;
        char *q;
        if (fn == 0)
            return text_out(s, out, p, len);
        for (uint32_t i = 0; i + fn <= len;)
            if (memcmp(p + i, from, fn) == 0) {
                hits++;
                i += fn;
            } else {
                i++;
            }
        if ((uint64_t)len + (uint64_t)hits * tn > (1u << 30))
            return sql_fail(s, KEEL_ETOOBIG, "54000",
                            "requested length too large");
        q = sql_alloc(&s->arena, (size_t)len + (size_t)hits * tn + 1);
        if (q == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint32_t i = 0; i < len;)
            if (i + fn <= len && memcmp(p + i, from, fn) == 0) {
                memcpy(q + used, to, tn);
                used += tn;
                i += fn;
            } else {
                q[used++] = p[i++];
            }
        out->v.s.p = q;
        out->v.s.len = used;
        return KEEL_OK;
    }
    case SQL_FUNC_BTRIM:
    case SQL_FUNC_LTRIM:
    case SQL_FUNC_RTRIM:
        return trim(s, e->u.func, &a[0], e->nargs > 1 ? &a[1] : NULL, out);
    case SQL_FUNC_LEFT:
    case SQL_FUNC_RIGHT: {
        int64_t n = a[1].v.i, have = sql_utf8_count(p, len), keep;
        keep = n >= 0 ? (n < have ? n : have) : (have + n > 0 ? have + n : 0);
        if (e->u.func == SQL_FUNC_LEFT)
            return text_out(s, out, p, char_offset(p, len, keep));
        {
            uint32_t b = char_offset(p, len, have - keep);
            return text_out(s, out, p + b, len - b);
        }
    }
    case SQL_FUNC_REPEAT: {
        int64_t n = a[1].v.i > 0 ? a[1].v.i : 0;
        char *q;
        if ((uint64_t)n * len > (1u << 30))
            return sql_fail(s, KEEL_ETOOBIG, "54000",
                            "requested length too large");
        q = sql_alloc(&s->arena, (size_t)n * len + 1);
        if (q == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (int64_t i = 0; i < n; i++)
            memcpy(q + (size_t)i * len, p, len);
        out->v.s.p = q;
        out->v.s.len = (uint32_t)(n * len);
        return KEEL_OK;
    }
    case SQL_FUNC_REVERSE: {
        char *q = sql_alloc(&s->arena, len + 1u);
        if (q == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint32_t i = 0; i < len;) {
            uint32_t m = sql_utf8_char_len(p + i, len - i);
            memcpy(q + len - i - m, p + i, m);
            i += m;
        }
        out->v.s.p = q;
        out->v.s.len = len;
        return KEEL_OK;
    }
    case SQL_FUNC_LPAD:
    case SQL_FUNC_RPAD:
        return pad(s, e->u.func, &a[0], a[1].v.i, e->nargs > 2 ? &a[2] : NULL,
                   out);
    case SQL_FUNC_STARTS_WITH:
        out->v.b = a[1].v.s.len <= len && memcmp(p, a[1].v.s.p, a[1].v.s.len) == 0;
        return KEEL_OK;
    default:
        return sql_unsupported(s, e->location, "this function");
    }
}

keel_status sql_concat_eval(sql_session *s, const sql_expr *e,
                            const sql_value *row, sql_value *out)
{
    bool ws = e->u.func == SQL_FUNC_CONCAT_WS;
    sql_value sep = {.isnull = true};
    char *buf = NULL;
    uint32_t used = 0, cap = 0;
    bool first = true;
    keel_status rc;

    out->type = SQL_TYPE_TEXT;
    out->isnull = false;
    if (ws) {
        rc = sql_expr_eval(s, e->args[0], row, &sep);
        if (rc != KEEL_OK)
            return rc;
        if (sep.isnull) {
            out->isnull = true;
            return KEEL_OK;
        }
        rc = sql_value_text(s, &sep, &sep.v.s.p, &sep.v.s.len);
        if (rc != KEEL_OK)
            return rc;
    }
    for (uint16_t i = ws ? 1 : 0; i < e->nargs; i++) {
        sql_value v;
        const char *p;
        uint32_t n, add;
        rc = sql_expr_eval(s, e->args[i], row, &v);
        if (rc != KEEL_OK)
            return rc;
        if (v.isnull)
            continue;
        rc = sql_value_text(s, &v, &p, &n);
        if (rc != KEEL_OK)
            return rc;
        add = n + (ws && !first ? sep.v.s.len : 0);
        if ((uint64_t)used + add > (1u << 30))
            return sql_fail(s, KEEL_ETOOBIG, "54000",
                            "requested length too large");
        if (used + add + 1 > cap) {
            uint32_t ncap = (used + add + 1) * 2;
            char *nb = sql_alloc(&s->arena, ncap);
            if (nb == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            if (used > 0)
                memcpy(nb, buf, used);
            buf = nb;
            cap = ncap;
        }
        if (ws && !first) {
            memcpy(buf + used, sep.v.s.p, sep.v.s.len);
            used += sep.v.s.len;
        }
        memcpy(buf + used, p, n);
        used += n;
        first = false;
    }
    out->v.s.p = buf != NULL ? buf : "";
    out->v.s.len = used;
    return KEEL_OK;
}
