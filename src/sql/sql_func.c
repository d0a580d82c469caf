/*
 * sql_func.c: more of PostgreSQL's scalar functions, each strict (a NULL
 * argument gives NULL), typed as PostgreSQL resolves them:
 *
 *   maths over double precision: sqrt, cbrt, exp, ln, log, log10,
 *   power / pow, pi, sign; mod of integers (and numerics), div of
 *   numerics.  An integer or untyped argument is read as double
 *   precision, as PostgreSQL prefers; a numeric one answers 0A000 where
 *   PostgreSQL would compute in numeric (sqrt, exp, ln, log, power).
 *   strings: md5 (OpenSSL's), initcap, translate, ascii, chr,
 *   octet_length, bit_length, to_hex, regexp_replace (POSIX extended,
 *   flags g and i, \1..\9 and \& in the replacement).
 *   bytea: md5, sha224 to sha512 (OpenSSL's), octet_length, encode and
 *   decode (hex, base64, escape).  uuid: gen_random_uuid.
 *   dates: to_timestamp(epoch seconds), to_date() and to_timestamp() of
 *   text by a template (sql_format.c), make_date, age, timezone() (AT
 *   TIME ZONE).  sessions: pg_backend_pid, pg_is_in_recovery,
 *   set_config.  arrays and format(): sql_array.c's.
 */
#include <math.h>
#include <openssl/evp.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/scram.h"
#include "sql/sql_internal.h"

static const struct {
    const char *name;
    sql_func func;
    uint16_t min, max;
} more[] = {
    {"sqrt", SQL_FUNC_SQRT, 1, 1},
    {"cbrt", SQL_FUNC_CBRT, 1, 1},
    {"exp", SQL_FUNC_EXP, 1, 1},
    {"ln", SQL_FUNC_LN, 1, 1},
    {"log", SQL_FUNC_LOG10, 1, 1},
    {"log10", SQL_FUNC_LOG10, 1, 1},
    {"power", SQL_FUNC_POWER, 2, 2},
    {"pow", SQL_FUNC_POWER, 2, 2},
    {"pi", SQL_FUNC_PI, 0, 0},
    {"sign", SQL_FUNC_SIGN, 1, 1},
    {"mod", SQL_FUNC_MOD, 2, 2},
    {"div", SQL_FUNC_DIV, 2, 2},
    {"md5", SQL_FUNC_MD5, 1, 1},
    {"initcap", SQL_FUNC_INITCAP, 1, 1},
    {"translate", SQL_FUNC_TRANSLATE, 3, 3},
    {"ascii", SQL_FUNC_ASCII, 1, 1},
    {"chr", SQL_FUNC_CHR, 1, 1},
    {"octet_length", SQL_FUNC_OCTET_LENGTH, 1, 1},
    {"bit_length", SQL_FUNC_BIT_LENGTH, 1, 1},
    {"to_hex", SQL_FUNC_TO_HEX, 1, 1},
    {"regexp_replace", SQL_FUNC_REGEXP_REPLACE, 3, 4},
    {"to_timestamp", SQL_FUNC_TO_TIMESTAMP, 1, 1},
    {"to_timestamp", SQL_FUNC_TO_DATE, 2, 2},
    {"to_date", SQL_FUNC_TO_DATE, 2, 2},
    {"make_date", SQL_FUNC_MAKE_DATE, 3, 3},
    {"timezone", SQL_FUNC_TIMEZONE, 2, 2},
    {"pg_get_serial_sequence", SQL_FUNC_PG_GET_SERIAL_SEQUENCE, 2, 2},
    {"pg_backend_pid", SQL_FUNC_PG_BACKEND_PID, 0, 0},
    {"pg_is_in_recovery", SQL_FUNC_PG_IS_IN_RECOVERY, 0, 0},
    {"set_config", SQL_FUNC_SET_CONFIG, 3, 3},
    {"string_to_array", SQL_FUNC_STRING_TO_ARRAY, 2, 3},
    {"array_append", SQL_FUNC_ARRAY_APPEND, 2, 2},
    {"array_prepend", SQL_FUNC_ARRAY_PREPEND, 2, 2},
    {"array_cat", SQL_FUNC_ARRAY_CAT_CALL, 2, 2},
    {"array_remove", SQL_FUNC_ARRAY_REMOVE, 2, 2},
    {"array_replace", SQL_FUNC_ARRAY_REPLACE, 3, 3},
    {"cardinality", SQL_FUNC_CARDINALITY, 1, 1},
    {"array_ndims", SQL_FUNC_ARRAY_NDIMS, 1, 1},
    {"array_lower", SQL_FUNC_ARRAY_LOWER, 2, 2},
    {"format", SQL_FUNC_FORMAT, 1, 100},
    {"age", SQL_FUNC_AGE, 1, 2},
    {"pg_typeof", SQL_FUNC_REGTYPE, 1, 1},
    {"gen_random_uuid", SQL_FUNC_GEN_RANDOM_UUID, 0, 0},
    {"encode", SQL_FUNC_ENCODE, 2, 2},
    {"decode", SQL_FUNC_DECODE, 2, 2},
    {"sha224", SQL_FUNC_SHA224, 1, 1},
    {"sha256", SQL_FUNC_SHA256, 1, 1},
    {"sha384", SQL_FUNC_SHA384, 1, 1},
    {"sha512", SQL_FUNC_SHA512, 1, 1},
};

static keel_status nomem(sql_session *s)
{
    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
}

/* Argument i made of type t when it may be (an untyped literal, or a
 * number into double precision); false if it may not. */
static bool arg_to(sql_session *s, sql_expr *e, uint16_t i, uint32_t t,
                   keel_status *rc)
{
    uint32_t have = e->args[i]->type;
    bool ok = have == t || have == SQL_TYPE_UNKNOWN ||
              (t == SQL_TYPE_FLOAT8 && sql_type_is_number(have)) ||
              (t == SQL_TYPE_TEXT && sql_type_is_string(have)) ||
              (t == SQL_TYPE_INT4 && (have == SQL_TYPE_INT2)) ||
              (t == SQL_TYPE_NUMERIC && sql_type_is_int(have));

    if (ok && have != t)
        *rc = sql_expr_coerce(s, &e->args[i], t);
    return ok;
}

keel_status sql_func_more(sql_session *s, const sql_scope *scope,
                          const PgQuery__FuncCall *fc, const char *name,
                          sql_expr **out, bool *handled)
{
    sql_expr *e;
    keel_status rc = KEEL_OK;
    bool ok = true;
    size_t k = 0;

    *handled = false;
    while (k < sizeof(more) / sizeof(more[0]) &&
           (strcmp(more[k].name, name) != 0 || fc->n_args < more[k].min ||
            fc->n_args > more[k].max))
        k++;
    if (k == sizeof(more) / sizeof(more[0]))
        return KEEL_OK;
    *handled = true;
    e = sql_alloc(&s->arena, sizeof(*e));
    if (e == NULL)
        return nomem(s);
    memset(e, 0, sizeof(*e));
    e->kind = SQL_EXPR_FUNC;
    e->u.func = more[k].func;
    e->location = fc->location;
    e->nargs = (uint16_t)fc->n_args;
    e->args = sql_alloc(&s->arena, (e->nargs + 1u) * sizeof(*e->args));
    if (e->args == NULL)
        return nomem(s);
    for (uint16_t i = 0; i < e->nargs; i++) {
        rc = sql_expr_analyse(s, scope, fc->args[i], &e->args[i]);
        if (rc != KEEL_OK)
            return rc;
    }
    if (e->u.func >= SQL_FUNC_STRING_TO_ARRAY && e->u.func <= SQL_FUNC_FORMAT) {
        rc = sql_array_analyse(s, e, name, fc->location);
        if (rc == KEEL_OK)
            *out = e;
        return rc;
    }
    switch (e->u.func) {
    case SQL_FUNC_PG_BACKEND_PID:
        e->type = SQL_TYPE_INT4;
        break;
    case SQL_FUNC_PG_IS_IN_RECOVERY:
        e->type = SQL_TYPE_BOOL;
        break;
    case SQL_FUNC_TO_DATE:
        ok = arg_to(s, e, 0, SQL_TYPE_TEXT, &rc) &&
             arg_to(s, e, 1, SQL_TYPE_TEXT, &rc);
        e->type = name[3] == 'd' ? SQL_TYPE_DATE : SQL_TYPE_TIMESTAMPTZ;
        break;
    case SQL_FUNC_SET_CONFIG:
        ok = arg_to(s, e, 0, SQL_TYPE_TEXT, &rc) &&
             arg_to(s, e, 1, SQL_TYPE_TEXT, &rc) &&
             arg_to(s, e, 2, SQL_TYPE_BOOL, &rc);
        e->type = SQL_TYPE_TEXT;
        break;
    case SQL_FUNC_SQRT:
    case SQL_FUNC_CBRT:
    case SQL_FUNC_EXP:
    case SQL_FUNC_LN:
    case SQL_FUNC_LOG10:
    case SQL_FUNC_POWER:
    case SQL_FUNC_PI:
        for (uint16_t i = 0; i < e->nargs; i++)
            if (e->args[i]->type == SQL_TYPE_NUMERIC) {
                char what[64];
                snprintf(what, sizeof(what), "%s() of numeric", name);
                return sql_unsupported(s, fc->location, what);
            }
        for (uint16_t i = 0; ok && i < e->nargs; i++)
            ok = arg_to(s, e, i, SQL_TYPE_FLOAT8, &rc);
        e->type = SQL_TYPE_FLOAT8;
        break;
    case SQL_FUNC_SIGN:
        ok = arg_to(s, e, 0,
                    e->args[0]->type == SQL_TYPE_NUMERIC ? SQL_TYPE_NUMERIC
                                                         : SQL_TYPE_FLOAT8,
                    &rc);
        e->type = e->args[0]->type;
        break;
    case SQL_FUNC_MOD: {
        /* the two arguments' common integer type, else numeric */
        uint32_t a = e->args[0]->type, b = e->args[1]->type, t;
        if (a == SQL_TYPE_UNKNOWN)
            a = b == SQL_TYPE_UNKNOWN ? SQL_TYPE_INT4 : b;
        if (b == SQL_TYPE_UNKNOWN)
            b = a;
        t = a == SQL_TYPE_NUMERIC || b == SQL_TYPE_NUMERIC ? SQL_TYPE_NUMERIC
            : a == SQL_TYPE_INT8 || b == SQL_TYPE_INT8     ? SQL_TYPE_INT8
            : a == SQL_TYPE_INT4 || b == SQL_TYPE_INT4     ? SQL_TYPE_INT4
                                                           : SQL_TYPE_INT2;
        ok = (sql_type_is_int(a) || a == SQL_TYPE_NUMERIC) &&
             (sql_type_is_int(b) || b == SQL_TYPE_NUMERIC) &&
             a != SQL_TYPE_OID && b != SQL_TYPE_OID;
        for (uint16_t i = 0; ok && rc == KEEL_OK && i < 2; i++)
            if (e->args[i]->type != t)
                rc = sql_expr_coerce(s, &e->args[i], t);
        e->type = t;
        break;
    }
    case SQL_FUNC_DIV:
        ok = arg_to(s, e, 0, SQL_TYPE_NUMERIC, &rc) &&
             arg_to(s, e, 1, SQL_TYPE_NUMERIC, &rc);
        e->type = SQL_TYPE_NUMERIC;
        break;
    case SQL_FUNC_MD5:
        /* md5(bytea) or md5(text) */
        ok = e->args[0]->type == SQL_TYPE_BYTEA ||
             arg_to(s, e, 0, SQL_TYPE_TEXT, &rc);
        e->type = SQL_TYPE_TEXT;
        break;
    case SQL_FUNC_INITCAP:
    case SQL_FUNC_TRANSLATE:
    case SQL_FUNC_REGEXP_REPLACE:
        for (uint16_t i = 0; ok && i < e->nargs; i++)
            ok = arg_to(s, e, i, SQL_TYPE_TEXT, &rc);
        e->type = SQL_TYPE_TEXT;
        break;
    case SQL_FUNC_OCTET_LENGTH:
    case SQL_FUNC_BIT_LENGTH:
        if (e->args[0]->type == SQL_TYPE_BYTEA) {
            e->type = SQL_TYPE_INT4;
            break;
        }
        /* fall through */
    case SQL_FUNC_ASCII:
        ok = arg_to(s, e, 0, SQL_TYPE_TEXT, &rc);
        e->type = SQL_TYPE_INT4;
        break;
    case SQL_FUNC_GEN_RANDOM_UUID:
        e->type = SQL_TYPE_UUID;
        break;
    case SQL_FUNC_ENCODE:
        ok = arg_to(s, e, 0, SQL_TYPE_BYTEA, &rc) &&
             arg_to(s, e, 1, SQL_TYPE_TEXT, &rc);
        e->type = SQL_TYPE_TEXT;
        break;
    case SQL_FUNC_DECODE:
        ok = arg_to(s, e, 0, SQL_TYPE_TEXT, &rc) &&
             arg_to(s, e, 1, SQL_TYPE_TEXT, &rc);
        e->type = SQL_TYPE_BYTEA;
        break;
    case SQL_FUNC_SHA224:
    case SQL_FUNC_SHA256:
    case SQL_FUNC_SHA384:
    case SQL_FUNC_SHA512:
        ok = arg_to(s, e, 0, SQL_TYPE_BYTEA, &rc);
        e->type = SQL_TYPE_BYTEA;
        break;
    case SQL_FUNC_CHR:
        ok = arg_to(s, e, 0, SQL_TYPE_INT4, &rc);
        e->type = SQL_TYPE_TEXT;
        break;
    case SQL_FUNC_TO_HEX:
        ok = e->args[0]->type == SQL_TYPE_INT8
                 ? true
                 : arg_to(s, e, 0, SQL_TYPE_INT4, &rc);
        e->type = SQL_TYPE_TEXT;
        break;
    case SQL_FUNC_TO_TIMESTAMP:
        ok = arg_to(s, e, 0, SQL_TYPE_FLOAT8, &rc);
        e->type = SQL_TYPE_TIMESTAMPTZ;
        break;
    case SQL_FUNC_REGTYPE: {
        /* pg_typeof(x): x's type, known here, as its name (::regtype) */
        sql_expr *t = sql_alloc(&s->arena, sizeof(*t));
        if (t == NULL)
            return nomem(s);
        memset(t, 0, sizeof(*t));
        t->kind = SQL_EXPR_CONST;
        t->type = SQL_TYPE_OID;
        t->location = e->args[0]->location;
        t->u.value.type = SQL_TYPE_OID;
        t->u.value.v.i = e->args[0]->type;
        e->args[0] = t;
        e->type = SQL_TYPE_TEXT;
        break;
    }
    case SQL_FUNC_MAKE_DATE:
        for (uint16_t i = 0; ok && i < 3; i++)
            ok = arg_to(s, e, i, SQL_TYPE_INT4, &rc);
        e->type = SQL_TYPE_DATE;
        break;
    case SQL_FUNC_PG_GET_SERIAL_SEQUENCE:
        ok = arg_to(s, e, 0, SQL_TYPE_TEXT, &rc) &&
             arg_to(s, e, 1, SQL_TYPE_TEXT, &rc);
        e->type = SQL_TYPE_TEXT;
        s->expr_engine_reads++; /* it opens the table */
        break;
    case SQL_FUNC_TIMEZONE: {
        /* x AT TIME ZONE zone: a timestamp of a timestamptz (an untyped
         * one or a date read as one), a timestamptz of a timestamp */
        uint32_t t = e->args[1]->type;
        ok = arg_to(s, e, 0, SQL_TYPE_TEXT, &rc) &&
             (t == SQL_TYPE_UNKNOWN || sql_type_is_datetime(t));
        if (ok && rc == KEEL_OK && t != SQL_TYPE_TIMESTAMP &&
            t != SQL_TYPE_TIMESTAMPTZ)
            rc = sql_expr_coerce(s, &e->args[1], SQL_TYPE_TIMESTAMPTZ);
        e->type = t == SQL_TYPE_TIMESTAMP ? SQL_TYPE_TIMESTAMPTZ
                                          : SQL_TYPE_TIMESTAMP;
        break;
    }
    default: { /* SQL_FUNC_AGE: timestamps, or dates read as them */
        uint32_t t = SQL_TYPE_TIMESTAMP;
        for (uint16_t i = 0; i < e->nargs; i++)
            if (e->args[i]->type == SQL_TYPE_TIMESTAMPTZ)
                t = SQL_TYPE_TIMESTAMPTZ;
        for (uint16_t i = 0; ok && rc == KEEL_OK && i < e->nargs; i++) {
            uint32_t have = e->args[i]->type;
            ok = have == SQL_TYPE_UNKNOWN || sql_type_is_datetime(have);
            if (ok && have != t)
                rc = sql_expr_coerce(s, &e->args[i], t);
        }
        e->type = SQL_TYPE_INTERVAL;
        break;
    }
    }
    if (rc != KEEL_OK)
        return rc;
    if (!ok)
        return sql_no_such_function(s, fc->location, name, e);
    *out = e;
    return KEEL_OK;
}

/* ---- evaluation ---------------------------------------------------------- */

static keel_status put_text(sql_session *s, const char *p, size_t n,
                            sql_value *out)
{
    char *c = sql_alloc(&s->arena, n + 1);

    if (c == NULL)
        return nomem(s);
    memcpy(c, p, n);
    out->type = SQL_TYPE_TEXT;
    out->v.s.p = c;
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

static keel_status float_result(sql_session *s, double v, sql_value *out)
{
    if (isinf(v))
        return sql_fail(s, KEEL_EINVAL, "22003",
                        "value out of range: overflow");
    if (isnan(v))
        return sql_fail(s, KEEL_EINVAL, "2201F",
                        "invalid argument for power function");
    out->v.f = v;
    return KEEL_OK;
}

static keel_status eval_math(sql_session *s, sql_func f, const sql_value *a,
                             sql_value *out)
{
    double x = a[0].v.f;

    switch (f) {
    case SQL_FUNC_SQRT:
        if (x < 0)
            return sql_fail(s, KEEL_EINVAL, "2201F",
                            "cannot take square root of a negative number");
        out->v.f = sqrt(x);
        return KEEL_OK;
    case SQL_FUNC_CBRT:
        out->v.f = cbrt(x);
        return KEEL_OK;
    case SQL_FUNC_EXP:
        if (x > 709.78)
            return sql_fail(s, KEEL_EINVAL, "22003",
                            "value out of range: overflow");
        out->v.f = exp(x);
        return KEEL_OK;
    case SQL_FUNC_LN:
    case SQL_FUNC_LOG10:
        if (x == 0)
            return sql_fail(s, KEEL_EINVAL, "2201E",
                            "cannot take logarithm of zero");
        if (x < 0)
            return sql_fail(s, KEEL_EINVAL, "2201E",
                            "cannot take logarithm of a negative number");
        out->v.f = f == SQL_FUNC_LN ? log(x) : log10(x);
        return KEEL_OK;
    case SQL_FUNC_PI:
        out->v.f = M_PI;
        return KEEL_OK;
    default: { /* POWER */
        double y = a[1].v.f;
        if (x == 0 && y < 0)
            return sql_fail(s, KEEL_EINVAL, "2201F",
                            "zero raised to a negative power is undefined");
        if (x < 0 && floor(y) != y)
            return sql_fail(s, KEEL_EINVAL, "2201F",
                            "a negative number raised to a non-integer power "
                            "yields a complex result");
        return float_result(s, pow(x, y), out);
    }
    }
}

static keel_status eval_numeric2(sql_session *s, sql_func f,
                                 const sql_value *a, sql_value *out)
{
    numeric x = NUMERIC_INIT, y = NUMERIC_INIT, r = NUMERIC_INIT;
    numeric_status st = NUMERIC_OK;
    keel_status rc = sql_numeric_get(s, &a[0], &x);

    if (rc == KEEL_OK && f != SQL_FUNC_SIGN)
        rc = sql_numeric_get(s, &a[1], &y);
    if (rc == KEEL_OK) {
        if (f == SQL_FUNC_SIGN)
            st = numeric_from_int64(x.ndigits == 0            ? 0
                                    : x.sign == NUMERIC_NEG ? -1
                                                            : 1,
                                    &r);
        else if (y.ndigits == 0 && y.sign != NUMERIC_NAN)
            st = NUMERIC_EDIVZERO;
        else if (f == SQL_FUNC_MOD)
            st = numeric_mod(&x, &y, &r);
        else
            st = numeric_div_scale(&x, &y, 0, false, &r);
        if (st != NUMERIC_OK)
            rc = sql_numeric_fail(s, st, -1, NULL, 0, -1);
        else
            rc = sql_numeric_put(s, &r, out);
    }
    numeric_free(&x);
    numeric_free(&y);
    numeric_free(&r);
    return rc;
}

/* initcap(): each word's first letter upper case, the rest lower;
 * words are runs of letters and digits (ASCII's; other characters
 * are left as they are). */
static keel_status eval_initcap(sql_session *s, const sql_value *a,
                                sql_value *out)
{
    keel_status rc = put_text(s, a[0].v.s.p, a[0].v.s.len, out);
    char *p = (char *)out->v.s.p;
    bool in_word = false;

    for (uint32_t i = 0; rc == KEEL_OK && i < out->v.s.len; i++) {
        char c = p[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9') || (unsigned char)c >= 0x80;
        if (alnum && !in_word && c >= 'a' && c <= 'z')
            p[i] = (char)(c - 32);
        else if (alnum && in_word && c >= 'A' && c <= 'Z')
            p[i] = (char)(c + 32);
        in_word = alnum;
    }
    return rc;
}

/* Bytes of the UTF-8 character at p (at most left). */
static uint32_t utf8_len(const char *p, uint32_t left)
{
    unsigned char c = (unsigned char)p[0];
    uint32_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;

    return n < left ? n : left;
}

/* translate(text, from, to): each character of from replaced by the one
 * at its place in to, or dropped when to is shorter. */
static keel_status eval_translate(sql_session *s, const sql_value *a,
                                  sql_value *out)
{
    const char *p = a[0].v.s.p, *from = a[1].v.s.p, *to = a[2].v.s.p;
    uint32_t len = a[0].v.s.len, flen = a[1].v.s.len, tlen = a[2].v.s.len;
    char *r = sql_alloc(&s->arena, (size_t)len * 4 + 1);
    size_t n = 0;

    if (r == NULL)
        return nomem(s);
    for (uint32_t i = 0; i < len;) {
        uint32_t cl = utf8_len(p + i, len - i), fi = 0, k = 0, ti = 0;
        bool found = false;
        while (fi < flen) {
            uint32_t fl = utf8_len(from + fi, flen - fi);
            if (fl == cl && memcmp(from + fi, p + i, cl) == 0) {
                found = true;
                break;
            }
            fi += fl;
            k++;
        }
        if (!found) {
            memcpy(r + n, p + i, cl);
            n += cl;
        } else {
            /* the k-th character of to, if it has one */
            uint32_t j = 0;
            while (ti < tlen && j < k) {
                ti += utf8_len(to + ti, tlen - ti);
                j++;
            }
            if (ti < tlen) {
                uint32_t tl = utf8_len(to + ti, tlen - ti);
                memcpy(r + n, to + ti, tl);
                n += tl;
            }
        }
        i += cl;
    }
    out->type = SQL_TYPE_TEXT;
    out->v.s.p = r;
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

static keel_status eval_ascii(const sql_value *a, sql_value *out)
{
    const unsigned char *p = (const unsigned char *)a[0].v.s.p;
    uint32_t len = a[0].v.s.len, n, cp;

    if (len == 0) {
        out->v.i = 0;
        return KEEL_OK;
    }
    n = utf8_len(a[0].v.s.p, len);
    cp = n == 1 ? p[0] : p[0] & (0xFF >> (n + 1));
    for (uint32_t i = 1; i < n; i++)
        cp = (cp << 6) | (p[i] & 0x3F);
    out->v.i = cp;
    return KEEL_OK;
}

static keel_status eval_chr(sql_session *s, const sql_value *a, sql_value *out)
{
    int64_t cp = a[0].v.i;
    char b[4];
    size_t n;

    if (cp == 0)
        return sql_fail(s, KEEL_EINVAL, "54000",
                        "null character not permitted");
    if (cp < 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return sql_fail(s, KEEL_EINVAL, "54000",
                        "requested character too large for encoding: %lld",
                        (long long)cp);
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return put_text(s, b, n, out);
}

static keel_status eval_md5(sql_session *s, const sql_value *a, sql_value *out)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1];

    if (EVP_Digest(a[0].v.s.p, a[0].v.s.len, d, &dl, EVP_md5(), NULL) != 1)
        return sql_fail(s, KEEL_EINVAL, "XX000", "md5 failed");
    for (unsigned int i = 0; i < dl; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return put_text(s, hex, 2 * (size_t)dl, out);
}

/* sha224() to sha512() of a bytea, as a bytea. */
static keel_status eval_sha(sql_session *s, sql_func f, const sql_value *a,
                            sql_value *out)
{
    const EVP_MD *md = f == SQL_FUNC_SHA224   ? EVP_sha224()
                       : f == SQL_FUNC_SHA256 ? EVP_sha256()
                       : f == SQL_FUNC_SHA384 ? EVP_sha384()
                                              : EVP_sha512();
    unsigned char *d = sql_alloc(&s->arena, EVP_MAX_MD_SIZE);
    unsigned int dl = 0;

    if (d == NULL)
        return nomem(s);
    if (EVP_Digest(a[0].v.s.p, a[0].v.s.len, d, &dl, md, NULL) != 1)
        return sql_fail(s, KEEL_EINVAL, "XX000", "digest failed");
    out->v.s.p = (const char *)d;
    out->v.s.len = dl;
    return KEEL_OK;
}

/* gen_random_uuid(): 16 random bytes marked as version 4, variant 1
 * (RFC 4122). */
static keel_status eval_uuid(sql_session *s, sql_value *out)
{
    unsigned char *u = sql_alloc(&s->arena, 16);

    if (u == NULL)
        return nomem(s);
    if (!scram_random(u, 16))
        return sql_fail(s, KEEL_EINVAL, "XX000",
                        "could not generate random values");
    u[6] = (unsigned char)((u[6] & 0x0F) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3F) | 0x80);
    out->v.s.p = (const char *)u;
    out->v.s.len = 16;
    return KEEL_OK;
}

/* The 22023 of encode() and decode() for a format they do not know. */
static keel_status bad_format(sql_session *s, const sql_value *f)
{
    return sql_fail(s, KEEL_EINVAL, "22023", "unrecognized encoding: \"%.*s\"",
                    (int)(f->v.s.len > 64 ? 64 : f->v.s.len), f->v.s.p);
}

static bool format_is(const sql_value *f, const char *name)
{
    size_t n = strlen(name);

    return f->v.s.len == n && strncasecmp(f->v.s.p, name, n) == 0;
}

/* encode(bytea, 'hex' | 'base64' | 'escape'): PostgreSQL's text forms
 * (base64 broken into lines of 76 characters). */
static keel_status eval_encode(sql_session *s, const sql_value *a,
                               sql_value *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *b = (const unsigned char *)a[0].v.s.p;
    uint32_t len = a[0].v.s.len;
    size_t n = 0;
    char *p;

    if (format_is(&a[1], "hex")) {
        p = sql_alloc(&s->arena, (size_t)len * 2 + 1);
        if (p == NULL)
            return nomem(s);
        for (uint32_t i = 0; i < len; i++) {
            p[n++] = hex[b[i] >> 4];
            p[n++] = hex[b[i] & 15];
        }
    } else if (format_is(&a[1], "base64")) {
        size_t chars = ((size_t)len + 2) / 3 * 4;
        char *one = sql_alloc(&s->arena, chars + 1);
        p = sql_alloc(&s->arena, chars + chars / 76 + 1);
        if (one == NULL || p == NULL)
            return nomem(s);
        if (scram_b64_encode(b, len, one, chars + 1) != chars)
            return sql_fail(s, KEEL_EINVAL, "XX000", "base64 failed");
        for (size_t i = 0; i < chars; i++) {
            if (i > 0 && i % 76 == 0)
                p[n++] = '\n';
            p[n++] = one[i];
        }
    } else if (format_is(&a[1], "escape")) {
        p = sql_alloc(&s->arena, (size_t)len * 4 + 1);
        if (p == NULL)
            return nomem(s);
        for (uint32_t i = 0; i < len; i++) {
            if (b[i] == '\\') {
                p[n++] = '\\';
                p[n++] = '\\';
            } else if (b[i] == 0 || b[i] >= 0x80) {
                p[n++] = '\\';
                p[n++] = (char)('0' + (b[i] >> 6));
                p[n++] = (char)('0' + ((b[i] >> 3) & 7));
                p[n++] = (char)('0' + (b[i] & 7));
            } else {
                p[n++] = (char)b[i];
            }
        }
    } else {
        return bad_format(s, &a[1]);
    }
    out->type = SQL_TYPE_TEXT;
    out->v.s.p = p;
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

static bool is_b64(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
}

/* decode(text, 'hex' | 'base64' | 'escape'), as PostgreSQL reads them:
 * hex and base64 ignore blanks and line breaks; escape reads what a
 * bytea's escape format holds. */
static keel_status eval_decode(sql_session *s, const sql_value *a,
                               sql_value *out)
{
    const char *t = a[0].v.s.p;
    uint32_t len = a[0].v.s.len;

    if (format_is(&a[1], "hex") || format_is(&a[1], "escape")) {
        keel_status rc = sql_bytea_decode(s, t, len, format_is(&a[1], "hex"),
                                          -1, out);
        out->isnull = false;
        return rc;
    }
    if (format_is(&a[1], "base64")) {
        char *c = sql_alloc(&s->arena, (size_t)len + 1);
        uint8_t *b = sql_alloc(&s->arena, (size_t)len / 4 * 3 + 3);
        size_t n = 0;
        long got;
        if (c == NULL || b == NULL)
            return nomem(s);
        for (uint32_t i = 0; i < len; i++) {
            if (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')
                continue;
            if (!is_b64(t[i]))
                return sql_fail(s, KEEL_EINVAL, "22023",
                                "invalid symbol \"%c\" found while decoding "
                                "base64 sequence",
                                t[i]);
            c[n++] = t[i];
        }
        got = n == 0 ? 0 : scram_b64_decode(c, n, b, (size_t)len / 4 * 3 + 3);
        if (got < 0) {
            keel_status rc = sql_fail(s, KEEL_EINVAL, "22023",
                                      "invalid base64 end sequence");
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Input data is missing padding, is truncated, or is "
                     "otherwise corrupted.");
            return rc;
        }
        out->v.s.p = (const char *)b;
        out->v.s.len = (uint32_t)got;
        return KEEL_OK;
    }
    return bad_format(s, &a[1]);
}

/* regexp_replace(source, pattern, replacement [, flags]). */
static keel_status eval_regexp_replace(sql_session *s, const sql_expr *e,
                                       const sql_value *a, sql_value *out)
{
    bool global = false, icase = false;
    char *src, *pat;
    regex_t re;
    regmatch_t m[10];
    size_t n = 0, cap;
    char *r;
    uint32_t at = 0;
    int err;

    for (uint32_t i = 0; e->nargs > 3 && i < a[3].v.s.len; i++) {
        char c = a[3].v.s.p[i];
        if (c == 'g')
            global = true;
        else if (c == 'i')
            icase = true;
        else if (c != 'c')
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "invalid regular expression option: \"%c\"", c);
    }
    src = sql_strndup(&s->arena, a[0].v.s.p, a[0].v.s.len);
    pat = sql_strndup(&s->arena, a[1].v.s.p, a[1].v.s.len);
    if (src == NULL || pat == NULL)
        return nomem(s);
    err = regcomp(&re, pat, REG_EXTENDED | (icase ? REG_ICASE : 0));
    if (err != 0) {
        char msg[128];
        regerror(err, &re, msg, sizeof(msg));
        return sql_fail(s, KEEL_EINVAL, "2201B",
                        "invalid regular expression: %s", msg);
    }
    cap = (size_t)a[0].v.s.len + 64;
    r = sql_alloc(&s->arena, cap);
    while (r != NULL && at <= a[0].v.s.len &&
           regexec(&re, src + at, 10, m, at > 0 ? REG_NOTBOL : 0) == 0) {
        size_t need;
        /* the text before the match, then the replacement */
        need = n + (size_t)m[0].rm_so + a[2].v.s.len * (a[0].v.s.len + 1) + 8;
        if (need > cap) {
            char *nr = sql_alloc(&s->arena, need * 2);
            if (nr == NULL) {
                r = NULL;
                break;
            }
            memcpy(nr, r, n);
            r = nr;
            cap = need * 2;
        }
        memcpy(r + n, src + at, (size_t)m[0].rm_so);
        n += (size_t)m[0].rm_so;
        for (uint32_t i = 0; i < a[2].v.s.len; i++) {
            char c = a[2].v.s.p[i];
            int g = -1;
            if (c == '\\' && i + 1 < a[2].v.s.len) {
                char d = a[2].v.s.p[i + 1];
                if (d >= '1' && d <= '9')
                    g = d - '0';
                else if (d == '&')
                    g = 0;
                else if (d == '\\')
                    g = -2;
            }
            if (g == -1) {
                r[n++] = c;
                continue;
            }
            i++;
            if (g == -2) {
                r[n++] = '\\';
                continue;
            }
            if (m[g].rm_so >= 0) {
                size_t l = (size_t)(m[g].rm_eo - m[g].rm_so);
                if (n + l + a[2].v.s.len + 8 > cap) {
                    char *nr = sql_alloc(&s->arena, (n + l) * 2 + cap);
                    if (nr == NULL) {
                        r = NULL;
                        break;
                    }
                    memcpy(nr, r, n);
                    r = nr;
                    cap = (n + l) * 2 + cap;
                }
                memcpy(r + n, src + at + m[g].rm_so, l);
                n += l;
            }
        }
        if (r == NULL)
            break;
        if (m[0].rm_eo == m[0].rm_so) {
            /* an empty match: copy one character and go on past it */
            if (at + (uint32_t)m[0].rm_eo < a[0].v.s.len)
                r[n++] = src[at + (uint32_t)m[0].rm_eo];
            at += (uint32_t)m[0].rm_eo + 1;
        } else {
            at += (uint32_t)m[0].rm_eo;
        }
        if (!global)
            break;
    }
    regfree(&re);
    if (r == NULL)
        return nomem(s);
    if (at < a[0].v.s.len) {
        if (n + (a[0].v.s.len - at) > cap) {
            char *nr = sql_alloc(&s->arena, n + (a[0].v.s.len - at) + 1);
            if (nr == NULL)
                return nomem(s);
            memcpy(nr, r, n);
            r = nr;
        }
        memcpy(r + n, src + at, a[0].v.s.len - at);
        n += a[0].v.s.len - at;
    }
    out->type = SQL_TYPE_TEXT;
    out->v.s.p = r;
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

keel_status sql_func_more_eval(sql_session *s, const sql_expr *e,
                               const sql_value *row, sql_value *out)
{
    sql_value a[4];
    keel_status rc;

    if (e->u.func >= SQL_FUNC_STRING_TO_ARRAY && e->u.func <= SQL_FUNC_FORMAT)
        return sql_array_eval(s, e, row, out);
    out->type = e->type;
    out->isnull = false;
    for (uint16_t i = 0; i < e->nargs && i < 4; i++) {
        rc = sql_expr_eval(s, e->args[i], row, &a[i]);
        if (rc != KEEL_OK)
            return rc;
        if (a[i].isnull) {
            out->isnull = true;
            return KEEL_OK;
        }
    }
    switch (e->u.func) {
    case SQL_FUNC_SQRT:
    case SQL_FUNC_CBRT:
    case SQL_FUNC_EXP:
    case SQL_FUNC_LN:
    case SQL_FUNC_LOG10:
    case SQL_FUNC_POWER:
    case SQL_FUNC_PI:
        return eval_math(s, e->u.func, a, out);
    case SQL_FUNC_SIGN:
        if (e->type == SQL_TYPE_NUMERIC)
            return eval_numeric2(s, SQL_FUNC_SIGN, a, out);
        out->v.f = a[0].v.f > 0 ? 1.0 : a[0].v.f < 0 ? -1.0 : 0.0;
        return KEEL_OK;
    case SQL_FUNC_MOD:
        if (e->type == SQL_TYPE_NUMERIC)
            return eval_numeric2(s, SQL_FUNC_MOD, a, out);
        if (a[1].v.i == 0)
            return sql_fail(s, KEEL_EINVAL, "22012", "division by zero");
        /* INT64_MIN % -1 is 0, and traps in C */
        out->v.i = a[1].v.i == -1 ? 0 : a[0].v.i % a[1].v.i;
        return KEEL_OK;
    case SQL_FUNC_DIV:
        return eval_numeric2(s, SQL_FUNC_DIV, a, out);
    case SQL_FUNC_MD5:
        return eval_md5(s, a, out);
    case SQL_FUNC_INITCAP:
        return eval_initcap(s, a, out);
    case SQL_FUNC_TRANSLATE:
        return eval_translate(s, a, out);
    case SQL_FUNC_ASCII:
        return eval_ascii(a, out);
    case SQL_FUNC_CHR:
        return eval_chr(s, a, out);
    case SQL_FUNC_OCTET_LENGTH:
        out->v.i = a[0].v.s.len;
        return KEEL_OK;
    case SQL_FUNC_GEN_RANDOM_UUID:
        return eval_uuid(s, out);
    case SQL_FUNC_ENCODE:
        return eval_encode(s, a, out);
    case SQL_FUNC_DECODE:
        return eval_decode(s, a, out);
    case SQL_FUNC_SHA224:
    case SQL_FUNC_SHA256:
    case SQL_FUNC_SHA384:
    case SQL_FUNC_SHA512:
        return eval_sha(s, e->u.func, a, out);
    case SQL_FUNC_BIT_LENGTH:
        out->v.i = (int64_t)a[0].v.s.len * 8;
        return KEEL_OK;
    case SQL_FUNC_TO_HEX: {
        char buf[24];
        uint64_t u = e->args[0]->type == SQL_TYPE_INT8
                         ? (uint64_t)a[0].v.i
                         : (uint64_t)(uint32_t)a[0].v.i;
        int n = snprintf(buf, sizeof(buf), "%llx", (unsigned long long)u);
        return put_text(s, buf, (size_t)n, out);
    }
    case SQL_FUNC_REGEXP_REPLACE:
        return eval_regexp_replace(s, e, a, out);
    case SQL_FUNC_TO_TIMESTAMP: {
        double secs = a[0].v.f;
        if (isnan(secs) || secs < -210866803200.0 || secs >= 9224318016000.0)
            return sql_fail(s, KEEL_EINVAL, "22008",
                            "timestamp out of range: \"%g\"", secs);
        out->v.i = (int64_t)llround((secs - (double)SQL_EPOCH_DAYS * 86400.0) *
                                    1000000.0);
        return KEEL_OK;
    }
    case SQL_FUNC_MAKE_DATE: {
        int64_t y = a[0].v.i, m = a[1].v.i, d = a[2].v.i, yy, back;
        int bm, bd;
        if (y == 0 || m < 1 || m > 12 || d < 1 || d > 31 || y > 5874897 ||
            y < -4713)
            return sql_fail(s, KEEL_EINVAL, "22008",
                            "date field value out of range: %lld-%02lld-%02lld",
                            (long long)y, (long long)m, (long long)d);
        yy = y < 0 ? y + 1 : y; /* BC years: year 0 is 1 BC */
        back = sql_days_from_date(yy, (int)m, (int)d);
        sql_date_from_days(back, &yy, &bm, &bd);
        if (bm != m || bd != d)
            return sql_fail(s, KEEL_EINVAL, "22008",
                            "date field value out of range: %lld-%02lld-%02lld",
                            (long long)y, (long long)m, (long long)d);
        out->v.i = back - SQL_EPOCH_DAYS;
        return KEEL_OK;
    }
    case SQL_FUNC_PG_GET_SERIAL_SEQUENCE:
        return sql_serial_sequence(s, &a[0], &a[1], out);
    case SQL_FUNC_PG_BACKEND_PID:
        out->v.i = (int64_t)sql_backend_pid(s);
        return KEEL_OK;
    case SQL_FUNC_PG_IS_IN_RECOVERY:
        out->v.b = false; /* keel has no standbys */
        return KEEL_OK;
    case SQL_FUNC_SET_CONFIG:
        return sql_set_config(s, &a[0], &a[1], a[2].v.b, out);
    case SQL_FUNC_TO_DATE:
        return sql_to_datetime(s, &a[0], &a[1],
                               e->type == SQL_TYPE_TIMESTAMPTZ, out);
    case SQL_FUNC_TIMEZONE: {
        sql_tz z;
        char spec[SQL_TZ_NAME];
        if (a[0].v.s.len >= sizeof(spec))
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "time zone \"%.*s\" not recognized", 64,
                            a[0].v.s.p);
        memcpy(spec, a[0].v.s.p, a[0].v.s.len);
        spec[a[0].v.s.len] = '\0';
        if (!sql_tz_load(s, spec, &z))
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "time zone \"%s\" not recognized", spec);
        out->v.i = e->type == SQL_TYPE_TIMESTAMP
                       ? a[1].v.i +
                             (int64_t)sql_tz_offset(&z, a[1].v.i, NULL) * 1000000
                       : sql_tz_utc(&z, a[1].v.i);
        return KEEL_OK;
    }
    default: /* SQL_FUNC_AGE */
        return sql_interval_age(s, e->nargs == 2 ? &a[0] : NULL,
                                e->nargs == 2 ? &a[1] : &a[0], out);
    }
}
