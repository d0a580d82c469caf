/*
 * sql_value.c: SQL types and values: their names, casts between them,
 * text input and output, comparison, and the conversions to and from the
 * engine's keel_value.
 *
 * The types are PostgreSQL's, named by its type oids: bool, int2, int4,
 * int8, oid, numeric (its arithmetic in sql_numeric.c), float8, text,
 * varchar, char(n) (bpchar), name, uuid and bytea (raw bytes, read and
 * printed in hex), and unknown for a quoted literal not yet given a
 * type.  Output follows
 * PostgreSQL's text formats (floats in the shortest form that reads
 * back exactly, as extra_float_digits 1 gives; booleans t and f).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sql/sql_internal.h"

/* Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch. */
#define SQL_EPOCH_UNIX 946684800LL

static keel_status datetime_in(sql_session *s, const char *text, uint32_t len,
                               uint32_t type, int32_t location, int64_t *out);
static int datetime_out(uint32_t type, int64_t v, int32_t off, char *buf,
                        size_t size);
static keel_status bytes_text(sql_session *s, const sql_value *v,
                              const char **out, uint32_t *len);

const char *sql_type_name(uint32_t type)
{
    switch (type) {
    case SQL_TYPE_BOOL:
        return "boolean";
    case SQL_TYPE_NAME:
        return "name";
    case SQL_TYPE_INT8:
        return "bigint";
    case SQL_TYPE_INT2:
        return "smallint";
    case SQL_TYPE_INT4:
        return "integer";
    case SQL_TYPE_TEXT:
        return "text";
    case SQL_TYPE_OID:
        return "oid";
    case SQL_TYPE_REGCLASS:
        return "regclass";
    case SQL_TYPE_FLOAT8:
        return "double precision";
    case SQL_TYPE_UNKNOWN:
        return "unknown";
    case SQL_TYPE_BPCHAR:
        return "character";
    case SQL_TYPE_VARCHAR:
        return "character varying";
    case SQL_TYPE_NUMERIC:
        return "numeric";
    case SQL_TYPE_DATE:
        return "date";
    case SQL_TYPE_TIMESTAMP:
        return "timestamp without time zone";
    case SQL_TYPE_TIMESTAMPTZ:
        return "timestamp with time zone";
    case SQL_TYPE_INTERVAL:
        return "interval";
    case SQL_TYPE_UUID:
        return "uuid";
    case SQL_TYPE_BYTEA:
        return "bytea";
    case SQL_TYPE_JSON:
        return "json";
    case SQL_TYPE_JSONB:
        return "jsonb";
    case SQL_TYPE_UUID_ARRAY:
        return "uuid[]";
    case SQL_TYPE_CHAR_ARRAY:
        return "\"char\"[]";
    case SQL_TYPE_NAME_ARRAY:
        return "name[]";
    case SQL_TYPE_INT2_ARRAY:
        return "smallint[]";
    case SQL_TYPE_INT4_ARRAY:
        return "integer[]";
    case SQL_TYPE_TEXT_ARRAY:
        return "text[]";
    case SQL_TYPE_OID_ARRAY:
        return "oid[]";
    case SQL_TYPE_BOOL_ARRAY:
        return "boolean[]";
    case SQL_TYPE_INT8_ARRAY:
        return "bigint[]";
    case SQL_TYPE_FLOAT8_ARRAY:
        return "double precision[]";
    case SQL_TYPE_NUMERIC_ARRAY:
        return "numeric[]";
    case SQL_TYPE_DATE_ARRAY:
        return "date[]";
    case SQL_TYPE_TIMESTAMP_ARRAY:
        return "timestamp without time zone[]";
    case SQL_TYPE_TIMESTAMPTZ_ARRAY:
        return "timestamp with time zone[]";
    default:
        return "?";
    }
}

uint32_t sql_type_of_keel(keel_type t)
{
    switch (t) {
    case KEEL_INT2:
        return SQL_TYPE_INT2;
    case KEEL_INT4:
        return SQL_TYPE_INT4;
    case KEEL_INT8:
        return SQL_TYPE_INT8;
    case KEEL_OID:
        return SQL_TYPE_OID;
    case KEEL_BOOL:
        return SQL_TYPE_BOOL;
    case KEEL_FLOAT8:
        return SQL_TYPE_FLOAT8;
    case KEEL_NAME:
        return SQL_TYPE_NAME;
    case KEEL_CHAR:
        return SQL_TYPE_BPCHAR;
    case KEEL_TIMESTAMP:
        return SQL_TYPE_TIMESTAMP;
    case KEEL_TIMESTAMPTZ:
        return SQL_TYPE_TIMESTAMPTZ;
    case KEEL_DATE:
        return SQL_TYPE_DATE;
    case KEEL_NUMERIC:
        return SQL_TYPE_NUMERIC;
    case KEEL_UUID:
        return SQL_TYPE_UUID;
    case KEEL_BYTEA:
        return SQL_TYPE_BYTEA;
    case KEEL_JSON:
        return SQL_TYPE_JSON;
    case KEEL_JSONB:
        return SQL_TYPE_JSONB;
    case KEEL_TEXT:
    default:
        return SQL_TYPE_TEXT;
    }
}

int16_t sql_type_len(uint32_t type)
{
    switch (type) {
    case SQL_TYPE_BOOL:
        return 1;
    case SQL_TYPE_INT2:
        return 2;
    case SQL_TYPE_INT4:
    case SQL_TYPE_OID:
    case SQL_TYPE_DATE:
        return 4;
    case SQL_TYPE_INT8:
    case SQL_TYPE_FLOAT8:
    case SQL_TYPE_TIMESTAMP:
    case SQL_TYPE_TIMESTAMPTZ:
        return 8;
    case SQL_TYPE_NAME:
        return 64;
    case SQL_TYPE_INTERVAL:
    case SQL_TYPE_UUID:
        return 16;
    default:
        return -1;
    }
}

const char *sql_node_string(const PgQuery__Node *node)
{
    if (node == NULL || node->node_case != PG_QUERY__NODE__NODE_STRING)
        return NULL;
    return node->string->sval;
}

keel_status sql_type_lookup(sql_session *s, const PgQuery__TypeName *tn,
                            uint32_t *type, int32_t *typmod)
{
    const char *name = NULL;
    static const struct {
        const char *name;
        uint32_t type;
    } names[] = {
        {"bool", SQL_TYPE_BOOL},       {"boolean", SQL_TYPE_BOOL},
        {"int2", SQL_TYPE_INT2},       {"smallint", SQL_TYPE_INT2},
        {"int4", SQL_TYPE_INT4},       {"int", SQL_TYPE_INT4},
        {"integer", SQL_TYPE_INT4},    {"int8", SQL_TYPE_INT8},
        {"bigint", SQL_TYPE_INT8},     {"float8", SQL_TYPE_FLOAT8},
        {"text", SQL_TYPE_TEXT},       {"varchar", SQL_TYPE_VARCHAR},
        {"bpchar", SQL_TYPE_BPCHAR},   {"char", SQL_TYPE_BPCHAR},
        {"character", SQL_TYPE_BPCHAR}, {"name", SQL_TYPE_NAME},
        {"oid", SQL_TYPE_OID},         {"date", SQL_TYPE_DATE},
        {"timestamp", SQL_TYPE_TIMESTAMP},
        {"timestamptz", SQL_TYPE_TIMESTAMPTZ},
        {"numeric", SQL_TYPE_NUMERIC}, {"decimal", SQL_TYPE_NUMERIC},
        {"uuid", SQL_TYPE_UUID},       {"bytea", SQL_TYPE_BYTEA},
        {"json", SQL_TYPE_JSON},       {"jsonb", SQL_TYPE_JSONB},
    };

    /* pg_catalog.int4 and the like: the last name counts. */
    if (tn->n_names > 0)
        name = sql_node_string(tn->names[tn->n_names - 1]);
    if (name != NULL && tn->n_array_bounds == 1) {
        /* The arrays keel has (sql_type_array_of()). */
        PgQuery__TypeName elem = *tn;
        elem.n_array_bounds = 0;
        elem.n_typmods = 0;
        if (sql_type_lookup(s, &elem, type, typmod) != KEEL_OK ||
            sql_type_array_of(*type) == 0) {
            char what[96];
            snprintf(what, sizeof(what), "arrays of type %s", name);
            return sql_unsupported(s, tn->location, what);
        }
        *type = sql_type_array_of(*type);
        *typmod = -1;
        return KEEL_OK;
    }
    if (name == NULL || tn->n_array_bounds > 0)
        return sql_unsupported(s, tn->location, "this type");
    *typmod = -1;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i].name) != 0)
            continue;
        *type = names[i].type;
        if (sql_type_is_datetime(*type) && tn->n_typmods > 0)
            return sql_unsupported(s, tn->location,
                                   "a precision for timestamps");
        if (*type == SQL_TYPE_NUMERIC && tn->n_typmods > 0) {
            int32_t pr[2] = {0, 0};
            for (size_t k = 0; k < tn->n_typmods; k++) {
                const PgQuery__Node *m = tn->typmods[k];
                if (tn->n_typmods > 2 ||
                    m->node_case != PG_QUERY__NODE__NODE_A_CONST ||
                    m->a_const->val_case != PG_QUERY__A__CONST__VAL_IVAL)
                    return sql_fail_at(s, tn->location, KEEL_EINVAL, "22023",
                                       "invalid NUMERIC type modifier");
                pr[k] = m->a_const->ival->ival;
            }
            if (pr[0] < 1 || pr[0] > NUMERIC_MAX_PRECISION)
                return sql_fail_at(s, tn->location, KEEL_EINVAL, "22023",
                                   "NUMERIC precision %d must be between 1 "
                                   "and %d",
                                   pr[0], NUMERIC_MAX_PRECISION);
            if (pr[1] < NUMERIC_MIN_SCALE || pr[1] > NUMERIC_MAX_SCALE)
                return sql_fail_at(s, tn->location, KEEL_EINVAL, "22023",
                                   "NUMERIC scale %d must be between %d and "
                                   "%d",
                                   pr[1], NUMERIC_MIN_SCALE, NUMERIC_MAX_SCALE);
            *typmod = numeric_typmod(pr[0], pr[1]);
        }
        if (*type == SQL_TYPE_VARCHAR || *type == SQL_TYPE_BPCHAR) {
            if (tn->n_typmods == 1 &&
                tn->typmods[0]->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                tn->typmods[0]->a_const->val_case ==
                    PG_QUERY__A__CONST__VAL_IVAL) {
                int32_t n = tn->typmods[0]->a_const->ival->ival;
                if (n < 1)
                    return sql_fail_at(s, tn->location, KEEL_EINVAL, "22023",
                                       "length for type %s must be at least 1",
                                       name);
                *typmod = n;
            } else if (tn->n_typmods > 0) {
                return sql_fail_at(s, tn->location, KEEL_EINVAL, "22023",
                                   "invalid type modifier");
            } else if (*type == SQL_TYPE_BPCHAR &&
                       strcmp(name, "bpchar") != 0) {
                *typmod = 1; /* char means char(1) */
            }
        }
        return KEEL_OK;
    }
    if (strcmp(name, "interval") == 0) {
        if (tn->n_typmods > 0)
            return sql_unsupported(s, tn->location,
                                   "interval fields and precisions");
        *type = SQL_TYPE_INTERVAL;
        return KEEL_OK;
    }
    if (strcmp(name, "time") == 0 || strcmp(name, "timetz") == 0)
        return sql_unsupported(s, tn->location, "types time and timetz");
    if (strcmp(name, "float4") == 0)
        return sql_unsupported(s, tn->location, "type real");
    if (strncmp(name, "reg", 3) == 0 || strcmp(name, "aclitem") == 0) {
        /* PostgreSQL's object identifier types (regclass, regtype...). */
        char what[80];
        snprintf(what, sizeof(what), "type %s", name);
        return sql_unsupported(s, tn->location, what);
    }
    return sql_fail_at(s, tn->location, KEEL_ENOENT, "42704",
                       "type \"%s\" does not exist", name);
}

/* ---- text input --------------------------------------------------------- */

static keel_status bad_input(sql_session *s, int32_t location, uint32_t type,
                             const char *p, uint32_t len)
{
    return sql_fail_at(s, location, KEEL_EINVAL, "22P02",
                       "invalid input syntax for type %s: \"%.*s\"",
                       sql_type_name(type), (int)(len > 200 ? 200 : len), p);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

/* Parses an integer of type (leading and trailing blanks allowed). */
static keel_status int_in(sql_session *s, const char *p, uint32_t len,
                          uint32_t type, int32_t location, int64_t *out)
{
    char buf[64];
    char *end;
    long long v;
    int64_t lo, hi;

    if (len >= sizeof(buf))
        return bad_input(s, location, type, p, len);
    memcpy(buf, p, len);
    buf[len] = '\0';
    errno = 0;
    v = strtoll(buf, &end, 10);
    while (*end != '\0' && is_space(*end))
        end++;
    if (end == buf || *end != '\0')
        return bad_input(s, location, type, p, len);
    {
        const char *q = buf;
        while (is_space(*q))
            q++;
        if (*q == '\0')
            return bad_input(s, location, type, p, len);
    }
    lo = type == SQL_TYPE_INT2 ? INT16_MIN
         : type == SQL_TYPE_INT4 ? INT32_MIN
         : type == SQL_TYPE_OID  ? 0
                                 : INT64_MIN;
    hi = type == SQL_TYPE_INT2 ? INT16_MAX
         : type == SQL_TYPE_INT4 ? INT32_MAX
         : type == SQL_TYPE_OID  ? UINT32_MAX
                                 : INT64_MAX;
    if (errno == ERANGE || v < lo || v > hi)
        return sql_fail_at(s, location, KEEL_EINVAL, "22003",
                           "value \"%s\" is out of range for type %s", buf,
                           sql_type_name(type));
    *out = v;
    return KEEL_OK;
}

static keel_status float_in(sql_session *s, const char *p, uint32_t len,
                            int32_t location, double *out)
{
    char buf[128];
    char *end;
    const char *q;

    if (len >= sizeof(buf))
        return bad_input(s, location, SQL_TYPE_FLOAT8, p, len);
    memcpy(buf, p, len);
    buf[len] = '\0';
    q = buf;
    while (is_space(*q))
        q++;
    errno = 0;
    *out = strtod(q, &end);
    if (end == q)
        return bad_input(s, location, SQL_TYPE_FLOAT8, p, len);
    while (is_space(*end))
        end++;
    if (*end != '\0')
        return bad_input(s, location, SQL_TYPE_FLOAT8, p, len);
    if (errno == ERANGE && (*out == HUGE_VAL || *out == -HUGE_VAL))
        return sql_fail_at(s, location, KEEL_EINVAL, "22003",
                           "\"%s\" is out of range for type double precision",
                           q);
    return KEEL_OK;
}

static keel_status bool_in(sql_session *s, const char *p, uint32_t len,
                           int32_t location, bool *out)
{
    char buf[16];
    uint32_t a = 0, b = len;
    size_t n;

    while (a < b && is_space(p[a]))
        a++;
    while (b > a && is_space(p[b - 1]))
        b--;
    if (b - a == 0 || b - a >= sizeof(buf))
        return bad_input(s, location, SQL_TYPE_BOOL, p, len);
    memcpy(buf, p + a, b - a);
    buf[b - a] = '\0';
    n = b - a;
    /* Any prefix of true, false, yes, no; on and off in full but "of";
     * 1 and 0 (PostgreSQL's boolin). */
    if (strncasecmp(buf, "true", n) == 0 || strncasecmp(buf, "yes", n) == 0 ||
        strcasecmp(buf, "on") == 0 || strcmp(buf, "1") == 0) {
        *out = true;
        return KEEL_OK;
    }
    if (strncasecmp(buf, "false", n) == 0 || strncasecmp(buf, "no", n) == 0 ||
        (n >= 2 && strncasecmp(buf, "off", n) == 0) || strcmp(buf, "0") == 0) {
        *out = false;
        return KEEL_OK;
    }
    return bad_input(s, location, SQL_TYPE_BOOL, p, len);
}

/* ---- text output -------------------------------------------------------- */

/* The shortest %g form that reads back as d. */
static int float_out(double d, char *buf, size_t size)
{
    if (isnan(d))
        return snprintf(buf, size, "NaN");
    if (isinf(d))
        return snprintf(buf, size, d > 0 ? "Infinity" : "-Infinity");
    for (int prec = 15; prec <= 17; prec++) {
        int n = snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return n;
    }
    return snprintf(buf, size, "%.17g", d);
}

keel_status sql_value_text(sql_session *s, const sql_value *v,
                           const char **out, uint32_t *len)
{
    char buf[64];
    int n;

    if (v->isnull) {
        *out = NULL;
        *len = 0;
        return KEEL_OK;
    }
    if (sql_type_in_s(v->type)) {
        *out = v->v.s.p;
        *len = v->v.s.len;
        return KEEL_OK;
    }
    if (sql_type_is_bytes(v->type))
        return bytes_text(s, v, out, len);
    if (sql_type_is_json(v->type)) {
        *out = v->v.s.p;
        *len = v->v.s.len;
        return KEEL_OK;
    }
    if (v->type == SQL_TYPE_NUMERIC) {
        numeric num = NUMERIC_INIT;
        char *p;
        keel_status rc = sql_numeric_get(s, v, &num);
        if (rc != KEEL_OK)
            return rc;
        p = sql_alloc(&s->arena, numeric_out_len(&num) + 1);
        if (p == NULL) {
            numeric_free(&num);
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        *len = (uint32_t)numeric_out(&num, p);
        p[*len] = '\0';
        *out = p;
        numeric_free(&num);
        return KEEL_OK;
    }
    switch (v->type) {
    case SQL_TYPE_BOOL:
        *out = v->v.b ? "t" : "f";
        *len = 1;
        return KEEL_OK;
    case SQL_TYPE_FLOAT8:
        n = float_out(v->v.f, buf, sizeof(buf));
        break;
    case SQL_TYPE_DATE:
    case SQL_TYPE_TIMESTAMP:
        n = datetime_out(v->type, v->v.i, 0, buf, sizeof(buf));
        break;
    case SQL_TYPE_TIMESTAMPTZ: {
        /* the session's local time, and its offset */
        int32_t off = sql_tz_off(s, v->v.i);
        n = datetime_out(v->type, v->v.i + (int64_t)off * 1000000, off, buf,
                         sizeof(buf));
        break;
    }
    case SQL_TYPE_INTERVAL:
        n = sql_interval_out(v, buf, sizeof(buf));
        break;
    default:
        n = sql_format_int(v->v.i, buf);
        break;
    }
    *out = sql_strndup(&s->arena, buf, (size_t)n);
    if (*out == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    *len = (uint32_t)n;
    return KEEL_OK;
}

/* ---- casts -------------------------------------------------------------- */

static keel_status int_range(sql_session *s, int64_t v, uint32_t type,
                             int32_t location)
{
    if ((type == SQL_TYPE_INT2 && (v < INT16_MIN || v > INT16_MAX)) ||
        (type == SQL_TYPE_INT4 && (v < INT32_MIN || v > INT32_MAX)) ||
        (type == SQL_TYPE_OID && (v < 0 || v > UINT32_MAX)))
        return sql_fail_at(s, location, KEEL_EINVAL, "22003",
                           "%s out of range", sql_type_name(type));
    return KEEL_OK;
}

/* Applies a length: char(n) pads with blanks or (explicitly) truncates,
 * varchar(n) truncates explicitly; an assignment of a longer value fails
 * with 22001 unless what goes past n is blanks. */
static keel_status string_len(sql_session *s, sql_value *v, uint32_t type,
                              int32_t typmod, bool is_explicit)
{
    uint32_t n, chars = 0, cut = v->v.s.len;

    if (typmod < 0)
        return KEEL_OK;
    n = (uint32_t)typmod;
    /* Characters, not bytes: count UTF-8 lead bytes. */
    for (uint32_t i = 0; i < v->v.s.len; i++) {
        if (((unsigned char)v->v.s.p[i] & 0xC0) != 0x80) {
            if (chars == n) {
                cut = i;
                break;
            }
            chars++;
        }
    }
    if (cut < v->v.s.len) {
        if (!is_explicit)
            for (uint32_t i = cut; i < v->v.s.len; i++)
                if (v->v.s.p[i] != ' ')
                    return sql_fail(s, KEEL_ETOOBIG, "22001",
                                    "value too long for type %s(%u)",
                                    sql_type_name(type), n);
        v->v.s.len = cut;
        return KEEL_OK;
    }
    if (type == SQL_TYPE_BPCHAR && chars < n) {
        uint32_t pad = n - chars;
        char *p = sql_alloc(&s->arena, v->v.s.len + pad);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        memcpy(p, v->v.s.p, v->v.s.len);
        memset(p + v->v.s.len, ' ', pad);
        v->v.s.p = p;
        v->v.s.len += pad;
    }
    return KEEL_OK;
}

/* ---- uuid and bytea ----------------------------------------------------- */

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A uuid from its text: 32 hex digits, in either case, with a hyphen
 * allowed after any group of four, the whole optionally in braces (as
 * PostgreSQL's uuid_in reads it). */
static keel_status uuid_in(sql_session *s, const char *p, uint32_t len,
                           int32_t location, sql_value *v)
{
    unsigned char *u = sql_alloc(&s->arena, 16);
    uint32_t at = 0;
    bool braces = len > 0 && p[0] == '{';

    if (u == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    at = braces ? 1 : 0;
    for (int i = 0; i < 16; i++) {
        int hi, lo;
        if (len - at < 2)
            return bad_input(s, location, SQL_TYPE_UUID, p, len);
        hi = hex_digit(p[at]);
        lo = hex_digit(p[at + 1]);
        if (hi < 0 || lo < 0)
            return bad_input(s, location, SQL_TYPE_UUID, p, len);
        u[i] = (unsigned char)(hi << 4 | lo);
        at += 2;
        if (at < len && p[at] == '-' && i % 2 == 1 && i < 15)
            at++;
    }
    if (braces && (at == len || p[at++] != '}'))
        return bad_input(s, location, SQL_TYPE_UUID, p, len);
    if (at != len)
        return bad_input(s, location, SQL_TYPE_UUID, p, len);
    v->type = SQL_TYPE_UUID;
    v->v.s.p = (const char *)u;
    v->v.s.len = 16;
    return KEEL_OK;
}

/* The bytes of the UTF-8 character that starts with lead (at most
 * left). */
static int char_len(unsigned char lead, uint32_t left)
{
    int n = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3
            : lead >= 0xC0 ? 2 : 1;

    return (uint32_t)n > left ? (int)left : n;
}

keel_status sql_bytea_decode(sql_session *s, const char *p, uint32_t len,
                             bool hex, int32_t location, sql_value *v)
{
    unsigned char *b = sql_alloc(&s->arena, len + 1u);
    uint32_t n = 0;

    if (b == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (hex) {
        for (uint32_t at = 0; at < len;) {
            int hi, lo;
            if (p[at] == ' ' || p[at] == '\n' || p[at] == '\t' ||
                p[at] == '\r') {
                at++;
                continue;
            }
            hi = hex_digit(p[at]);
            if (hi < 0)
                return sql_fail_at(s, location, KEEL_EINVAL, "22023",
                                   "invalid hexadecimal digit: \"%.*s\"",
                                   char_len((unsigned char)p[at], len - at),
                                   p + at);
            if (at + 1 == len)
                return sql_fail_at(s, location, KEEL_EINVAL, "22023",
                                   "invalid hexadecimal data: odd number of "
                                   "digits");
            lo = hex_digit(p[at + 1]);
            if (lo < 0)
                return sql_fail_at(s, location, KEEL_EINVAL, "22023",
                                   "invalid hexadecimal digit: \"%.*s\"",
                                   char_len((unsigned char)p[at + 1],
                                            len - at - 1),
                                   p + at + 1);
            b[n++] = (unsigned char)(hi << 4 | lo);
            at += 2;
        }
    } else {
        for (uint32_t at = 0; at < len;) {
            if (p[at] != '\\') {
                b[n++] = (unsigned char)p[at++];
            } else if (len - at >= 4 && p[at + 1] >= '0' && p[at + 1] <= '3' &&
                       p[at + 2] >= '0' && p[at + 2] <= '7' &&
                       p[at + 3] >= '0' && p[at + 3] <= '7') {
                b[n++] = (unsigned char)((p[at + 1] - '0') << 6 |
                                         (p[at + 2] - '0') << 3 |
                                         (p[at + 3] - '0'));
                at += 4;
            } else if (len - at >= 2 && p[at + 1] == '\\') {
                b[n++] = '\\';
                at += 2;
            } else {
                return sql_fail_at(s, location, KEEL_EINVAL, "22P02",
                                   "invalid input syntax for type bytea");
            }
        }
    }
    v->type = SQL_TYPE_BYTEA;
    v->v.s.p = (const char *)b;
    v->v.s.len = n;
    return KEEL_OK;
}

/* A bytea from its text: \x and hex, or the escape format (PostgreSQL's
 * byteain). */
static keel_status bytea_in(sql_session *s, const char *p, uint32_t len,
                            int32_t location, sql_value *v)
{
    bool hex = len >= 2 && p[0] == '\\' && p[1] == 'x';

    return sql_bytea_decode(s, hex ? p + 2 : p, hex ? len - 2 : len, hex,
                            location, v);
}

/* A uuid or bytea value's text (as PostgreSQL prints them: a uuid in
 * lower-case 8-4-4-4-12 hex digits, a bytea as \x and its bytes in hex)
 * in the arena. */
static keel_status bytes_text(sql_session *s, const sql_value *v,
                              const char **out, uint32_t *len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *b = (const unsigned char *)v->v.s.p;
    char *p = sql_alloc(&s->arena, (size_t)v->v.s.len * 2 + 8);
    uint32_t n = 0;

    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (v->type == SQL_TYPE_BYTEA) {
        p[n++] = '\\';
        p[n++] = 'x';
    }
    for (uint32_t i = 0; i < v->v.s.len; i++) {
        if (v->type == SQL_TYPE_UUID && (i == 4 || i == 6 || i == 8 || i == 10))
            p[n++] = '-';
        p[n++] = hex[b[i] >> 4];
        p[n++] = hex[b[i] & 15];
    }
    p[n] = '\0';
    *out = p;
    *len = n;
    return KEEL_OK;
}

/* ---- numeric ------------------------------------------------------------ */

keel_status sql_numeric_fail(sql_session *s, numeric_status st,
                             int32_t location, const char *text,
                             uint32_t len, int32_t typmod)
{
    keel_status rc;
    int p, sc, maxdigits;

    switch (st) {
    case NUMERIC_OK:
        return KEEL_OK;
    case NUMERIC_ENOMEM:
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    case NUMERIC_ESYNTAX:
        return bad_input(s, location, SQL_TYPE_NUMERIC, text, len);
    case NUMERIC_EOVERFLOW:
        return sql_fail_at(s, location, KEEL_EINVAL, "22003",
                           "value overflows numeric format");
    case NUMERIC_EDIVZERO:
        return sql_fail(s, KEEL_EINVAL, "22012", "division by zero");
    case NUMERIC_ERANGE:
        return sql_fail(s, KEEL_EINVAL, "22003", "numeric out of range");
    case NUMERIC_EFIELD:
        p = numeric_typmod_precision(typmod);
        sc = numeric_typmod_scale(typmod);
        maxdigits = p - sc;
        rc = sql_fail(s, KEEL_EINVAL, "22003", "numeric field overflow");
        snprintf(s->err->detail, sizeof(s->err->detail),
                 "A field with precision %d, scale %d must round to an "
                 "absolute value less than %s%d.",
                 p, sc, maxdigits > 0 ? "10^" : "",
                 maxdigits > 0 ? maxdigits : 1);
        return rc;
    case NUMERIC_EFORMAT:
        break;
    case NUMERIC_EINFINITY:
        return sql_unsupported(s, location, "numeric infinity");
    }
    return sql_fail(s, KEEL_EINVAL, "XX001", "invalid numeric value");
}

keel_status sql_numeric_get(sql_session *s, const sql_value *v, numeric *out)
{
    numeric_status st = numeric_decode((const unsigned char *)v->v.s.p,
                                       v->v.s.len, out);

    if (st == NUMERIC_EFORMAT)
        return sql_fail(s, KEEL_EINVAL, "XX001",
                        "invalid numeric value of %u bytes", v->v.s.len);
    return sql_numeric_fail(s, st, -1, NULL, 0, -1);
}

keel_status sql_numeric_put(sql_session *s, numeric *n, sql_value *out)
{
    size_t len = numeric_encoded_len(n);
    unsigned char *p = sql_alloc(&s->arena, len);

    if (p == NULL) {
        numeric_free(n);
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    numeric_encode(n, p);
    numeric_free(n);
    out->type = SQL_TYPE_NUMERIC;
    out->isnull = false;
    out->v.s.p = (const char *)p;
    out->v.s.len = (uint32_t)len;
    return KEEL_OK;
}

keel_status sql_numeric_charlen(sql_session *s, int32_t typmod,
                                int32_t location, uint16_t *charlen)
{
    int p, sc;

    *charlen = 0;
    if (typmod < 0)
        return KEEL_OK;
    p = numeric_typmod_precision(typmod);
    sc = numeric_typmod_scale(typmod);
    if (sc < 0 || sc > 63)
        return sql_unsupported(s, location,
                               "numeric columns with a scale outside 0 to 63");
    *charlen = (uint16_t)(p * 64 + sc);
    return KEEL_OK;
}

/*
 * Casts to or from numeric (type or v->type is numeric): text in, with
 * numeric(p,s) applied; integers and doubles in; numeric(p,s) to numeric;
 * numeric out to integers (rounded), double precision and text.
 * KEEL_ETYPE, with no error set, for a cast that does not exist.
 */
static keel_status numeric_cast(sql_session *s, sql_value *v, uint32_t type,
                                int32_t typmod, bool is_explicit,
                                int32_t location)
{
    numeric n = NUMERIC_INIT;
    numeric_status st;
    uint32_t from = v->type;
    keel_status rc;

    if (type == SQL_TYPE_NUMERIC) {
        if (from == SQL_TYPE_NUMERIC) {
            if (typmod < 0)
                return KEEL_OK;
            rc = sql_numeric_get(s, v, &n);
            if (rc != KEEL_OK)
                return rc;
        } else if (sql_type_is_string(from)) {
            if (!is_explicit && from != SQL_TYPE_UNKNOWN)
                return KEEL_ETYPE;
            st = numeric_in(v->v.s.p, v->v.s.len, &n);
            if (st != NUMERIC_OK)
                return sql_numeric_fail(s, st, location, v->v.s.p,
                                        v->v.s.len, typmod);
        } else if (sql_type_is_int(from)) {
            st = numeric_from_int64(v->v.i, &n);
            if (st != NUMERIC_OK)
                return sql_numeric_fail(s, st, -1, NULL, 0, typmod);
        } else if (from == SQL_TYPE_FLOAT8) {
            if (isinf(v->v.f))
                return sql_unsupported(s, -1, "numeric infinity");
            st = numeric_from_double(v->v.f, &n);
            if (st != NUMERIC_OK)
                return sql_numeric_fail(s, st, -1, NULL, 0, typmod);
        } else {
            return KEEL_ETYPE;
        }
        st = numeric_apply_typmod(&n, typmod);
        if (st != NUMERIC_OK) {
            numeric_free(&n);
            return sql_numeric_fail(s, st, -1, NULL, 0, typmod);
        }
        return sql_numeric_put(s, &n, v);
    }
    /* From numeric. */
    if (sql_type_is_string(type)) {
        const char *p;
        uint32_t len;
        if (!is_explicit && type != SQL_TYPE_TEXT &&
            type != SQL_TYPE_VARCHAR && type != SQL_TYPE_BPCHAR &&
            type != SQL_TYPE_NAME)
            return KEEL_ETYPE;
        rc = sql_value_text(s, v, &p, &len);
        if (rc != KEEL_OK)
            return rc;
        v->v.s.p = p;
        v->v.s.len = len;
        v->type = type;
        if (type == SQL_TYPE_NAME && v->v.s.len > 63)
            v->v.s.len = 63;
        return string_len(s, v, type, typmod, is_explicit);
    }
    if (type != SQL_TYPE_FLOAT8 && !sql_type_is_int(type))
        return KEEL_ETYPE;
    rc = sql_numeric_get(s, v, &n);
    if (rc != KEEL_OK)
        return rc;
    if (type == SQL_TYPE_FLOAT8) {
        v->v.f = numeric_to_double(&n);
        numeric_free(&n);
        if (isinf(v->v.f))
            return sql_fail(s, KEEL_EINVAL, "22003",
                            "value out of range: overflow");
        v->type = type;
        return KEEL_OK;
    }
    if (numeric_is_nan(&n)) {
        numeric_free(&n);
        return sql_fail(s, KEEL_EINVAL, "0A000", "cannot convert NaN to %s",
                        sql_type_name(type));
    }
    st = numeric_to_int64(&n,
                          type == SQL_TYPE_INT2   ? INT16_MIN
                          : type == SQL_TYPE_INT4 ? INT32_MIN
                          : type == SQL_TYPE_OID  ? 0
                                                  : INT64_MIN,
                          type == SQL_TYPE_INT2   ? INT16_MAX
                          : type == SQL_TYPE_INT4 ? INT32_MAX
                          : type == SQL_TYPE_OID  ? UINT32_MAX
                                                  : INT64_MAX,
                          &v->v.i);
    numeric_free(&n);
    if (st == NUMERIC_ERANGE)
        return sql_fail(s, KEEL_EINVAL, "22003", "%s out of range",
                        sql_type_name(type));
    if (st != NUMERIC_OK)
        return sql_numeric_fail(s, st, -1, NULL, 0, -1);
    v->type = type;
    return KEEL_OK;
}

/* A value cast to regclass: a string read as a relation's name (or an
 * oid's digits), an oid or integer taken as the oid; then the name that
 * oid prints as, its number if it names nothing. */
static keel_status regclass_cast(sql_session *s, sql_value *v,
                                 int32_t location)
{
    uint32_t oid = 0;
    const char *name = NULL;
    keel_status rc = KEEL_OK;

    if (sql_type_is_string(v->type))
        rc = sql_regclass_in(s, v->v.s.p, v->v.s.len, location, &oid);
    else if ((v->type == SQL_TYPE_OID || sql_type_is_int(v->type)) &&
             v->v.i >= 0 && v->v.i <= (int64_t)UINT32_MAX)
        oid = (uint32_t)v->v.i;
    else if (v->type == SQL_TYPE_OID || sql_type_is_int(v->type))
        return sql_fail_at(s, location, KEEL_EINVAL, "22003",
                           "OID out of range");
    else
        return sql_fail_at(s, location, KEEL_ETYPE, "42846",
                           "cannot cast type %s to regclass",
                           sql_type_name(v->type));
    if (rc == KEEL_OK)
        rc = sql_catalog_relname(s, oid, &name);
    if (rc != KEEL_OK)
        return rc;
    if (name == NULL) {
        char *p = sql_alloc(&s->arena, 12);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        snprintf(p, 12, "%u", oid);
        name = p;
    }
    v->type = SQL_TYPE_REGCLASS;
    v->v.s.p = name;
    v->v.s.len = (uint32_t)strlen(name);
    return KEEL_OK;
}

keel_status sql_value_cast(sql_session *s, sql_value *v, uint32_t type,
                           int32_t typmod, bool is_explicit, int32_t location)
{
    keel_status rc = KEEL_OK;
    uint32_t from = v->type;

    if (v->isnull) {
        v->type = type;
        return KEEL_OK;
    }
    if (from == SQL_TYPE_REGCLASS && type != SQL_TYPE_REGCLASS &&
        (type == SQL_TYPE_OID || sql_type_is_int(type))) {
        /* a regclass's oid: its name read back (the number of an oid
         * that named nothing) */
        uint32_t oid = 0;
        rc = sql_regclass_in(s, v->v.s.p, v->v.s.len, location, &oid);
        if (rc != KEEL_OK)
            return rc;
        v->type = from = SQL_TYPE_OID;
        v->v.i = oid;
        if (type == SQL_TYPE_OID)
            return KEEL_OK;
    } else if (type == SQL_TYPE_REGCLASS && from != SQL_TYPE_REGCLASS) {
        return regclass_cast(s, v, location);
    }
    if (type == SQL_TYPE_NUMERIC || from == SQL_TYPE_NUMERIC) {
        rc = numeric_cast(s, v, type, typmod, is_explicit, location);
        if (rc != KEEL_ETYPE)
            return rc;
        goto no_cast;
    }
    if (from == type && !sql_type_in_s(type))
        return KEEL_OK;
    if (sql_type_is_json(type)) {
        /* From text (read as JSON) and from the other of the two: json
         * to jsonb made canonical, jsonb to json as it prints. */
        if (from == SQL_TYPE_JSON && type == SQL_TYPE_JSON)
            return KEEL_OK;
        if (from == SQL_TYPE_JSONB) {
            v->type = type;
            return KEEL_OK;
        }
        if (from != SQL_TYPE_JSON && !sql_type_is_string(from))
            goto no_cast;
        if (from != SQL_TYPE_JSON && !is_explicit && from != SQL_TYPE_UNKNOWN)
            goto no_cast;
        return sql_json_in(s, v->v.s.p, v->v.s.len, type, location, v);
    }
    if (type == SQL_TYPE_INTERVAL) {
        /* From text; the sql_value_text() of one is its way out. */
        if (!sql_type_is_string(from))
            goto no_cast;
        return sql_interval_in(s, v->v.s.p, v->v.s.len, location, v);
    }
    if (sql_type_elem(type) != 0) {
        /* An array from its text form ('{a,b}') or one of its own type,
         * or of another type, its elements cast one by one. */
        if (from == type)
            return KEEL_OK;
        if (sql_type_elem(from) != 0)
            return sql_array_cast(s, v, type, is_explicit, location);
        if (!sql_type_is_string(from) || v->v.s.len < 2 ||
            v->v.s.p[0] != '{' || v->v.s.p[v->v.s.len - 1] != '}') {
            if (!sql_type_is_string(from))
                goto no_cast;
            return sql_fail_at(s, location, KEEL_EINVAL, "22P02",
                               "malformed array literal: \"%.*s\"",
                               (int)v->v.s.len, v->v.s.p);
        }
        /* each element read as the element type reads one, the array
         * written as PostgreSQL writes it ('{1, 2}' is {1,2}) */
        return sql_array_cast(s, v, type, is_explicit, location);
    }
    if (sql_type_is_string(type)) {
        if (!sql_type_is_string(from)) {
            const char *p;
            uint32_t len;
            if (!is_explicit && from != SQL_TYPE_UNKNOWN &&
                type != SQL_TYPE_TEXT && type != SQL_TYPE_VARCHAR &&
                type != SQL_TYPE_BPCHAR && type != SQL_TYPE_NAME)
                goto no_cast;
            /* A boolean cast to text is spelled out (PostgreSQL's
             * booltext), though it is output as t or f. */
            if (from == SQL_TYPE_BOOL) {
                p = v->v.b ? "true" : "false";
                len = v->v.b ? 4 : 5;
            } else {
                rc = sql_value_text(s, v, &p, &len);
                if (rc != KEEL_OK)
                    return rc;
            }
            v->v.s.p = p;
            v->v.s.len = len;
        }
        /* char(n)'s padding is not part of its value elsewhere. */
        if (from == SQL_TYPE_BPCHAR && type != SQL_TYPE_BPCHAR)
            while (v->v.s.len > 0 && v->v.s.p[v->v.s.len - 1] == ' ')
                v->v.s.len--;
        v->type = type;
        if (type == SQL_TYPE_NAME && v->v.s.len > 63)
            v->v.s.len = 63;
        return string_len(s, v, type, typmod, is_explicit);
    }
    if (sql_type_is_string(from)) {
        const char *p = v->v.s.p;
        uint32_t len = v->v.s.len;
        /* An assignment takes only a literal's text; an explicit cast any
         * string's. */
        if (!is_explicit && from != SQL_TYPE_UNKNOWN)
            goto no_cast;
        if (sql_type_is_int(type))
            rc = int_in(s, p, len, type, location, &v->v.i);
        else if (type == SQL_TYPE_FLOAT8)
            rc = float_in(s, p, len, location, &v->v.f);
        else if (type == SQL_TYPE_BOOL)
            rc = bool_in(s, p, len, location, &v->v.b);
        else if (sql_type_is_datetime(type))
            rc = datetime_in(s, p, len, type, location, &v->v.i);
        else if (type == SQL_TYPE_UUID)
            rc = uuid_in(s, p, len, location, v);
        else if (type == SQL_TYPE_BYTEA)
            rc = bytea_in(s, p, len, location, v);
        else
            goto no_cast;
        if (rc == KEEL_OK)
            v->type = type;
        return rc;
    }
    if (sql_type_is_int(from) && sql_type_is_int(type)) {
        rc = int_range(s, v->v.i, type, location);
        if (rc == KEEL_OK)
            v->type = type;
        return rc;
    }
    if (sql_type_is_int(from) && type == SQL_TYPE_FLOAT8) {
        v->v.f = (double)v->v.i;
        v->type = type;
        return KEEL_OK;
    }
    if (from == SQL_TYPE_FLOAT8 && sql_type_is_int(type)) {
        double r = rint(v->v.f);
        if (isnan(r) || r < -9.2233720368547758e18 || r >= 9.2233720368547758e18)
            return sql_fail_at(s, location, KEEL_EINVAL, "22003",
                               "%s out of range", sql_type_name(type));
        v->v.i = (int64_t)r;
        rc = int_range(s, v->v.i, type, location);
        if (rc == KEEL_OK)
            v->type = type;
        return rc;
    }
    if (sql_type_is_datetime(from) && sql_type_is_datetime(type)) {
        /* A timestamptz is a UTC time; a timestamp and a date are the
         * session zone's wall clock when one meets the other. */
        if (from == SQL_TYPE_DATE &&
            __builtin_mul_overflow(v->v.i, USECS_PER_DAY, &v->v.i))
            return sql_fail(s, KEEL_EINVAL, "22008",
                            "date out of range for timestamp");
        if (from == SQL_TYPE_TIMESTAMPTZ && type != SQL_TYPE_TIMESTAMPTZ)
            v->v.i = sql_tz_local(s, v->v.i);
        else if (from != SQL_TYPE_TIMESTAMPTZ && type == SQL_TYPE_TIMESTAMPTZ)
            v->v.i = sql_tz_from_local(s, v->v.i);
        if (type == SQL_TYPE_DATE)
            v->v.i = v->v.i >= 0 ? v->v.i / USECS_PER_DAY
                                 : (v->v.i - USECS_PER_DAY + 1) / USECS_PER_DAY;
        v->type = type;
        return KEEL_OK;
    }
    if (from == SQL_TYPE_BOOL && type == SQL_TYPE_INT4 && is_explicit) {
        v->v.i = v->v.b ? 1 : 0;
        v->type = type;
        return KEEL_OK;
    }
    if (from == SQL_TYPE_INT4 && type == SQL_TYPE_BOOL && is_explicit) {
        v->v.b = v->v.i != 0;
        v->type = type;
        return KEEL_OK;
    }
no_cast:
    if (is_explicit)
        return sql_fail_at(s, location, KEEL_ETYPE, "42846",
                           "cannot cast type %s to %s", sql_type_name(from),
                           sql_type_name(type));
    return sql_fail_at(s, location, KEEL_ETYPE, "42804",
                       "column is of type %s but expression is of type %s",
                       sql_type_name(type), sql_type_name(from));
}

/* ---- comparison ---------------------------------------------------------- */

/* char(n) compares without its trailing blanks, as PostgreSQL's bpchar. */
static uint32_t trimmed_len(const sql_value *v)
{
    uint32_t n = v->v.s.len;

    if (v->type == SQL_TYPE_BPCHAR)
        while (n > 0 && v->v.s.p[n - 1] == ' ')
            n--;
    return n;
}

int sql_value_compare(const sql_value *a, const sql_value *b)
{
    if (sql_type_in_s(a->type) && sql_type_in_s(b->type)) {
        uint32_t la = trimmed_len(a), lb = trimmed_len(b);
        int c = memcmp(a->v.s.p, b->v.s.p, la < lb ? la : lb);
        if (c != 0)
            return c;
        return la < lb ? -1 : la > lb;
    }
    if (a->type == SQL_TYPE_JSONB && b->type == SQL_TYPE_JSONB)
        return sql_jsonb_compare(a->v.s.p, a->v.s.len, b->v.s.p, b->v.s.len);
    if ((sql_type_is_bytes(a->type) && sql_type_is_bytes(b->type)) ||
        (sql_type_is_json(a->type) && sql_type_is_json(b->type))) {
        uint32_t la = a->v.s.len, lb = b->v.s.len;
        int c = memcmp(a->v.s.p, b->v.s.p, la < lb ? la : lb);
        if (c != 0)
            return c;
        return la < lb ? -1 : la > lb;
    }
    if (a->type == SQL_TYPE_INTERVAL && b->type == SQL_TYPE_INTERVAL)
        return sql_interval_cmp(a, b);
    if (a->type == SQL_TYPE_NUMERIC && b->type == SQL_TYPE_NUMERIC)
        return numeric_encoded_cmp((const unsigned char *)a->v.s.p, a->v.s.len,
                                   (const unsigned char *)b->v.s.p, b->v.s.len);
    if (a->type == SQL_TYPE_FLOAT8 || b->type == SQL_TYPE_FLOAT8) {
        double x = a->type == SQL_TYPE_FLOAT8 ? a->v.f : (double)a->v.i;
        double y = b->type == SQL_TYPE_FLOAT8 ? b->v.f : (double)b->v.i;
        /* NaN sorts above everything and equals itself, as in
         * PostgreSQL. */
        if (isnan(x) || isnan(y))
            return isnan(x) ? (isnan(y) ? 0 : 1) : -1;
        return x < y ? -1 : x > y;
    }
    if (a->type == SQL_TYPE_BOOL)
        return (int)a->v.b - (int)b->v.b;
    return a->v.i < b->v.i ? -1 : a->v.i > b->v.i;
}

/* ---- the engine's values -------------------------------------------------- */

void sql_value_from_keel(const keel_value *kv, keel_type kt, sql_value *out)
{
    out->type = sql_type_of_keel(kt);
    out->isnull = kv->isnull;
    if (kv->isnull)
        return;
    switch (kt) {
    case KEEL_INT2:
        out->v.i = kv->v.i2;
        break;
    case KEEL_INT4:
        out->v.i = kv->v.i4;
        break;
    case KEEL_INT8:
        out->v.i = kv->v.i8;
        break;
    case KEEL_OID:
        out->v.i = kv->v.oid;
        break;
    case KEEL_BOOL:
        out->v.b = kv->v.b;
        break;
    case KEEL_FLOAT8:
        out->v.f = kv->v.f8;
        break;
    case KEEL_TIMESTAMP:
    case KEEL_TIMESTAMPTZ:
        out->v.i = kv->v.i8;
        break;
    case KEEL_DATE:
        out->v.i = kv->v.i4;
        break;
    case KEEL_NAME: {
        /* NUL-padded to 64 bytes. */
        uint32_t n = 0;
        while (n < kv->v.s.len && kv->v.s.ptr[n] != '\0')
            n++;
        out->v.s.p = kv->v.s.ptr;
        out->v.s.len = n;
        break;
    }
    default:
        out->v.s.p = kv->v.s.ptr;
        out->v.s.len = kv->v.s.len;
        break;
    }
}

void sql_value_keel_text(void *arg, keel_type type, const keel_value *v,
                         char *buf, size_t cap)
{
    sql_session *s = arg;
    sql_error saved;
    sql_value x;
    const char *p = NULL;
    uint32_t len = 0;

    if (cap == 0)
        return;
    sql_value_from_keel(v, type, &x);
    /* A failure here (memory) must not become the statement's error. */
    if (s->err != NULL)
        saved = *s->err;
    if (sql_value_text(s, &x, &p, &len) != KEEL_OK || p == NULL) {
        p = "?";
        len = 1;
    }
    if (s->err != NULL)
        *s->err = saved;
    if (len > cap - 1)
        len = (uint32_t)(cap - 1);
    memcpy(buf, p, len);
    buf[len] = '\0';
}

void sql_value_to_keel(const sql_value *v, keel_value *out)
{
    memset(out, 0, sizeof(*out));
    out->isnull = v->isnull;
    if (v->isnull)
        return;
    switch (v->type) {
    case SQL_TYPE_INT2:
        out->v.i2 = (int16_t)v->v.i;
        break;
    case SQL_TYPE_INT4:
        out->v.i4 = (int32_t)v->v.i;
        break;
    case SQL_TYPE_INT8:
    case SQL_TYPE_TIMESTAMP:
    case SQL_TYPE_TIMESTAMPTZ:
        out->v.i8 = v->v.i;
        break;
    case SQL_TYPE_OID:
        out->v.oid = (uint32_t)v->v.i;
        break;
    case SQL_TYPE_DATE:
        out->v.i4 = (int32_t)v->v.i;
        break;
    case SQL_TYPE_BOOL:
        out->v.b = v->v.b;
        break;
    case SQL_TYPE_FLOAT8:
        out->v.f8 = v->v.f;
        break;
    default:
        out->v.s.ptr = v->v.s.p;
        out->v.s.len = v->v.s.len;
        break;
    }
}

/* ---- binary forms -------------------------------------------------------- */

static void put_be(char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (char)(v & 0xFF);
        v >>= 8;
    }
}

static uint64_t get_be(const char *p, int n)
{
    uint64_t v = 0;

    for (int i = 0; i < n; i++)
        v = (v << 8) | (unsigned char)p[i];
    return v;
}

/* A numeric in PostgreSQL's send form: digit count, weight, sign,
 * display scale, then base-10000 digits, most significant first. */
static keel_status numeric_binary(sql_session *s, const sql_value *v,
                                  const char **out, uint32_t *len)
{
    numeric n = NUMERIC_INIT;
    unsigned char *p;
    keel_status rc = sql_numeric_get(s, v, &n);

    if (rc != KEEL_OK)
        return rc;
    p = sql_alloc(&s->arena, numeric_send_len(&n));
    if (p == NULL) {
        numeric_free(&n);
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    numeric_send(&n, p);
    *out = (const char *)p;
    *len = (uint32_t)numeric_send_len(&n);
    numeric_free(&n);
    return KEEL_OK;
}

/* Appends n bytes at p to the arena buffer *buf (*used of *cap). */
static keel_status buf_add(sql_session *s, char **buf, size_t *used,
                           size_t *cap, const void *p, size_t n)
{
    if (*used + n > *cap) {
        size_t nc = (*used + n) * 2 + 64;
        char *nb = sql_alloc(&s->arena, nc);
        if (nb == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (*used > 0)
            memcpy(nb, *buf, *used);
        *buf = nb;
        *cap = nc;
    }
    if (n > 0)
        memcpy(*buf + *used, p, n);
    *used += n;
    return KEEL_OK;
}

static keel_status buf_add_be(sql_session *s, char **buf, size_t *used,
                              size_t *cap, uint64_t v, int n)
{
    char b[8];

    put_be(b, v, n);
    return buf_add(s, buf, used, cap, b, (size_t)n);
}

/*
 * An array's binary (send) form, as PostgreSQL's array_send() writes a
 * one-dimensional one: dimensions (0 when empty), whether it has nulls,
 * the element type, then for its dimension its length and lower bound
 * (1), then each element as a length (-1: null) and its binary form.
 */
static keel_status array_binary_out(sql_session *s, const sql_value *v,
                                    const char **out, uint32_t *len)
{
    uint32_t et = sql_type_elem(v->type), pos = 0, elen, n = 0;
    const char *el;
    bool isnull, nulls = false;
    char *buf = NULL, *elems = NULL;
    size_t used = 0, cap = 0, eused = 0, ecap = 0;
    keel_status rc = KEEL_OK;

    if (v->v.s.len >= 2 && v->v.s.p[1] == '{')
        return sql_unsupported(s, -1, "arrays of more than one dimension in "
                                      "binary format");
    while (rc == KEEL_OK &&
           sql_array_next(s, v->v.s.p, v->v.s.len, &pos, &el, &elen, &isnull)) {
        sql_value x = {.type = SQL_TYPE_UNKNOWN, .isnull = isnull,
                       .v.s = {el, elen}};
        const char *b;
        uint32_t blen;
        n++;
        if (isnull) {
            nulls = true;
            rc = buf_add_be(s, &elems, &eused, &ecap, 0xFFFFFFFFu, 4);
            continue;
        }
        rc = sql_value_cast(s, &x, et, -1, true, -1);
        if (rc == KEEL_OK)
            rc = sql_value_binary(s, &x, &b, &blen);
        if (rc == KEEL_OK)
            rc = buf_add_be(s, &elems, &eused, &ecap, blen, 4);
        if (rc == KEEL_OK)
            rc = buf_add(s, &elems, &eused, &ecap, b, blen);
    }
    if (rc == KEEL_OK)
        rc = buf_add_be(s, &buf, &used, &cap, n > 0 ? 1 : 0, 4);
    if (rc == KEEL_OK)
        rc = buf_add_be(s, &buf, &used, &cap, nulls ? 1 : 0, 4);
    if (rc == KEEL_OK)
        rc = buf_add_be(s, &buf, &used, &cap, et, 4);
    if (rc == KEEL_OK && n > 0)
        rc = buf_add_be(s, &buf, &used, &cap, n, 4);
    if (rc == KEEL_OK && n > 0)
        rc = buf_add_be(s, &buf, &used, &cap, 1, 4);
    if (rc == KEEL_OK)
        rc = buf_add(s, &buf, &used, &cap, elems, eused);
    if (rc != KEEL_OK)
        return rc;
    *out = buf;
    *len = (uint32_t)used;
    return KEEL_OK;
}

/* An array parameter's binary form (array_send()'s, one dimension or
 * none) read into keel's text form of type `type`; 22P03 when it is
 * malformed, 42804 for elements of another type. */
static keel_status array_binary_in(sql_session *s, const char *p, uint32_t len,
                                   uint32_t type, sql_value *out)
{
    uint32_t et = sql_type_elem(type), ndim, at = 12, n = 0;
    char *buf = NULL;
    size_t used = 0, cap = 0;
    keel_status rc;

    if (len < 12)
        return sql_fail(s, KEEL_EINVAL, "22P03",
                        "insufficient data left in message");
    ndim = (uint32_t)get_be(p, 4);
    if (ndim > 1)
        return sql_unsupported(s, -1, "arrays of more than one dimension in "
                                      "binary format");
    if ((uint32_t)get_be(p + 8, 4) != et)
        return sql_fail(s, KEEL_ETYPE, "42804",
                        "wrong element type: %u, not %s's", (unsigned)get_be(p + 8, 4),
                        sql_type_name(type));
    if (ndim == 1) {
        if (len < 20)
            return sql_fail(s, KEEL_EINVAL, "22P03",
                            "insufficient data left in message");
        n = (uint32_t)get_be(p + 12, 4);
        if ((int32_t)get_be(p + 16, 4) != 1)
            return sql_unsupported(s, -1, "arrays whose subscripts do not "
                                          "start at 1");
        at = 20;
    }
    rc = buf_add(s, &buf, &used, &cap, "{", 1);
    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        int32_t elen;
        sql_value x;
        if (len - at < 4)
            return sql_fail(s, KEEL_EINVAL, "22P03",
                            "insufficient data left in message");
        elen = (int32_t)get_be(p + at, 4);
        at += 4;
        if (elen < -1 || (elen > 0 && (uint32_t)elen > len - at))
            return sql_fail(s, KEEL_EINVAL, "22P03",
                            "insufficient data left in message");
        if (elen == -1) {
            x = (sql_value){.type = et, .isnull = true};
        } else {
            rc = sql_value_from_binary(s, p + at, (uint32_t)elen, et, &x);
            at += (uint32_t)elen;
        }
        if (rc == KEEL_OK && i > 0)
            rc = buf_add(s, &buf, &used, &cap, ",", 1);
        if (rc == KEEL_OK)
            rc = sql_array_put(s, &buf, &used, &cap, &x);
    }
    if (rc == KEEL_OK && at != len)
        return sql_fail(s, KEEL_EINVAL, "22P03",
                        "incorrect binary data format in bind parameter");
    if (rc == KEEL_OK)
        rc = buf_add(s, &buf, &used, &cap, "}", 1);
    if (rc != KEEL_OK)
        return rc;
    out->type = type;
    out->isnull = false;
    out->v.s.p = buf;
    out->v.s.len = (uint32_t)used;
    return KEEL_OK;
}

keel_status sql_value_binary(sql_session *s, const sql_value *v,
                             const char **out, uint32_t *len)
{
    char *p;
    int n;

    if (v->isnull) {
        *out = NULL;
        *len = 0;
        return KEEL_OK;
    }
    if (v->type == SQL_TYPE_NUMERIC)
        return numeric_binary(s, v, out, len);
    if (v->type == SQL_TYPE_INTERVAL)
        return sql_interval_binary_out(s, v, out, len);
    if (sql_type_elem(v->type) != 0)
        return array_binary_out(s, v, out, len);
    if (sql_type_is_string(v->type) || sql_type_is_bytes(v->type) ||
        v->type == SQL_TYPE_JSON) {
        *out = v->v.s.p;
        *len = v->v.s.len;
        return KEEL_OK;
    }
    if (v->type == SQL_TYPE_JSONB) {
        /* jsonb_send: a version byte, 1, then the text */
        p = sql_alloc(&s->arena, v->v.s.len + 1u);
        if (p == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        p[0] = 1;
        memcpy(p + 1, v->v.s.p, v->v.s.len);
        *out = p;
        *len = v->v.s.len + 1;
        return KEEL_OK;
    }
    n = v->type == SQL_TYPE_BOOL ? 1 : sql_type_len(v->type);
    p = sql_alloc(&s->arena, 8);
    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (v->type == SQL_TYPE_BOOL) {
        p[0] = v->v.b ? 1 : 0;
    } else if (v->type == SQL_TYPE_FLOAT8) {
        uint64_t bits;
        memcpy(&bits, &v->v.f, 8);
        put_be(p, bits, 8);
    } else {
        put_be(p, (uint64_t)v->v.i, n);
    }
    *out = p;
    *len = (uint32_t)n;
    return KEEL_OK;
}

keel_status sql_value_out(sql_session *s, const sql_value *v, uint16_t i,
                          const char **out, uint32_t *len)
{
    int16_t f = s->nrformats == 0   ? SQL_FORMAT_TEXT
                : s->nrformats == 1 ? s->rformats[0]
                : i < s->nrformats  ? s->rformats[i]
                                    : SQL_FORMAT_TEXT;

    if (f == SQL_FORMAT_BINARY)
        return sql_value_binary(s, v, out, len);
    return sql_value_text(s, v, out, len);
}

keel_status sql_value_from_binary(sql_session *s, const char *p, uint32_t len,
                                  uint32_t type, sql_value *out)
{
    uint32_t want;

    memset(out, 0, sizeof(*out));
    out->type = type;
    if (sql_type_elem(type) != 0)
        return array_binary_in(s, p, len, type, out);
    if (sql_type_is_string(type) || type == SQL_TYPE_BYTEA) {
        out->type = type == SQL_TYPE_UNKNOWN ? SQL_TYPE_TEXT : type;
        out->v.s.p = p;
        out->v.s.len = len;
        return KEEL_OK;
    }
    if (sql_type_is_json(type)) {
        if (type == SQL_TYPE_JSONB) {
            if (len == 0 || p[0] != 1)
                return sql_fail(s, KEEL_EINVAL, "22P03",
                                "unsupported jsonb version number %d",
                                len == 0 ? -1 : (int)(unsigned char)p[0]);
            p++;
            len--;
        }
        return sql_json_in(s, p, len, type, -1, out);
    }
    if (type == SQL_TYPE_UUID) {
        if (len != 16)
            return sql_fail(s, KEEL_EINVAL, "22P03",
                            "incorrect binary data format in bind parameter: "
                            "%u bytes for type uuid",
                            len);
        out->v.s.p = p;
        out->v.s.len = 16;
        return KEEL_OK;
    }
    if (type == SQL_TYPE_INTERVAL)
        return sql_interval_binary_in(s, p, len, out);
    if (type == SQL_TYPE_NUMERIC) {
        numeric n = NUMERIC_INIT;
        numeric_status st = numeric_recv((const unsigned char *)p, len, &n);
        if (st == NUMERIC_EFORMAT)
            return sql_fail(s, KEEL_EINVAL, "22P03",
                            "invalid binary numeric of %u bytes", len);
        if (st != NUMERIC_OK)
            return sql_numeric_fail(s, st, -1, NULL, 0, -1);
        return sql_numeric_put(s, &n, out);
    }
    want = type == SQL_TYPE_BOOL ? 1 : (uint32_t)sql_type_len(type);
    if (len != want)
        return sql_fail(s, KEEL_EINVAL, "22P03",
                        "incorrect binary data format in bind parameter: %u "
                        "bytes for type %s",
                        len, sql_type_name(type));
    switch (type) {
    case SQL_TYPE_BOOL:
        out->v.b = p[0] != 0;
        break;
    case SQL_TYPE_INT2:
        out->v.i = (int16_t)get_be(p, 2);
        break;
    case SQL_TYPE_INT4:
        out->v.i = (int32_t)get_be(p, 4);
        break;
    case SQL_TYPE_OID:
        out->v.i = (uint32_t)get_be(p, 4);
        break;
    case SQL_TYPE_INT8:
    case SQL_TYPE_TIMESTAMP:
    case SQL_TYPE_TIMESTAMPTZ:
        out->v.i = (int64_t)get_be(p, 8);
        break;
    case SQL_TYPE_DATE:
        out->v.i = (int32_t)get_be(p, 4);
        break;
    case SQL_TYPE_FLOAT8: {
        uint64_t bits = get_be(p, 8);
        memcpy(&out->v.f, &bits, 8);
        break;
    }
    default:
        return sql_fail(s, KEEL_EINVAL, "0A000",
                        "binary format of type %s is not supported yet",
                        sql_type_name(type));
    }
    return KEEL_OK;
}

/* ---- dates and timestamps ------------------------------------------------ */


int64_t sql_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ((int64_t)ts.tv_sec - SQL_EPOCH_UNIX) * 1000000 + ts.tv_nsec / 1000;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (any year): the
 * count of whole 400-year eras, then of days in the era, reckoned from
 * March so that the leap day falls last. */
int64_t sql_days_from_date(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The inverse of sql_days_from_date(). */
void sql_date_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int month_days(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 && leap ? 29 : days[m - 1];
}

/* Reads digits into *out (at most max of them); false if none. */
static bool read_num(const char **p, const char *end, int max, int64_t *out)
{
    int n = 0;

    *out = 0;
    while (*p < end && n < max && **p >= '0' && **p <= '9') {
        *out = *out * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    return n > 0;
}

/*
 * Parses text as a date (type DATE, in days) or a timestamp (in
 * microseconds): YYYY-MM-DD, then for timestamps [ T]HH:MM[:SS[.ffffff]]
 * and a zone (Z, UTC, +HH, +HH:MM, -HHMM) that timestamptz applies and
 * timestamp ignores, as PostgreSQL does; or the words now, today, epoch.
 */
static keel_status datetime_in(sql_session *s, const char *text, uint32_t len,
                               uint32_t type, int32_t location, int64_t *out)
{
    const char *p = text, *end = text + len;
    int64_t y, mo, d, h = 0, mi = 0, sec = 0, usec = 0, days, zone = 0;
    char word[16];
    uint32_t wl = 0;
    bool has_zone = false, has_named = false;
    sql_tz named;

    while (p < end && is_space(*p))
        p++;
    while (end > p && is_space(end[-1]))
        end--;
    while (p + wl < end && wl < sizeof(word) - 1 &&
           ((p[wl] >= 'a' && p[wl] <= 'z') || (p[wl] >= 'A' && p[wl] <= 'Z'))) {
        word[wl] = (char)(p[wl] | 0x20);
        wl++;
    }
    word[wl] = '\0';
    if (wl > 0 && p + wl == end) {
        /* now and today as the session's wall clock reads them, but a
         * timestamptz's now the instant itself */
        int64_t now = s->txn_start_us != 0 ? s->txn_start_us : sql_now_us();
        int64_t local = sql_tz_local(s, now);
        int64_t day = (local >= 0 ? local / USECS_PER_DAY
                                  : (local - USECS_PER_DAY + 1) / USECS_PER_DAY) *
                      USECS_PER_DAY;
        bool tz = type == SQL_TYPE_TIMESTAMPTZ;
        if (strcmp(word, "now") == 0)
            *out = tz ? now : local;
        else if (strcmp(word, "today") == 0)
            *out = tz ? sql_tz_from_local(s, day) : day;
        else if (strcmp(word, "epoch") == 0)
            *out = -SQL_EPOCH_UNIX * 1000000;
        else if (strcmp(word, "infinity") == 0)
            return sql_unsupported(s, location, "infinite dates and timestamps");
        else
            goto bad;
        if (type == SQL_TYPE_DATE)
            *out = *out >= 0 ? *out / USECS_PER_DAY
                             : (*out - USECS_PER_DAY + 1) / USECS_PER_DAY;
        return KEEL_OK;
    }
    if (!read_num(&p, end, 7, &y) || p >= end || *p++ != '-' ||
        !read_num(&p, end, 2, &mo) || p >= end || *p++ != '-' ||
        !read_num(&p, end, 2, &d))
        goto bad;
    if (p < end && (*p == ' ' || *p == 'T' || *p == 't')) {
        const char *q = p + 1;
        while (q < end && *q == ' ')
            q++;
        if (q < end && *q >= '0' && *q <= '9') {
            p = q;
            if (!read_num(&p, end, 2, &h) || p >= end || *p++ != ':' ||
                !read_num(&p, end, 2, &mi))
                goto bad;
            if (p < end && *p == ':') {
                p++;
                if (!read_num(&p, end, 2, &sec))
                    goto bad;
                if (p < end && *p == '.') {
                    int digits = 0;
                    p++;
                    if (p >= end || *p < '0' || *p > '9')
                        goto bad;
                    /* Six digits are kept; the seventh rounds them. */
                    for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
                        if (digits < 6)
                            usec = usec * 10 + (*p - '0');
                        else if (digits == 6 && *p >= '5')
                            usec++;
                    }
                    for (; digits < 6; digits++)
                        usec *= 10;
                }
            }
        }
    }
    /* A zone: an offset, or a zone's name; without one, a timestamptz
     * is the session zone's wall clock. */
    while (p < end && *p == ' ')
        p++;
    if (p < end) {
        has_zone = true;
        if ((*p == 'Z' || *p == 'z') && p + 1 == end) {
            p++;
        } else if (end - p == 3 && strncasecmp(p, "UTC", 3) == 0) {
            p += 3;
        } else if (end - p == 3 && strncasecmp(p, "GMT", 3) == 0) {
            p += 3;
        } else if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) {
            char spec[SQL_TZ_NAME];
            if ((size_t)(end - p) >= sizeof(spec))
                goto bad;
            memcpy(spec, p, (size_t)(end - p));
            spec[end - p] = '\0';
            if (!sql_tz_load(s, spec, &named) && strchr(spec, '/') != NULL) {
                for (char *c = spec; *c != '\0'; c++)
                    *c = (char)tolower((unsigned char)*c);
                return sql_fail_at(s, location, KEEL_EINVAL, "22023",
                                   "time zone \"%s\" not recognized", spec);
            }
            if (named.name[0] == '\0')
                goto bad;
            has_named = true;
            p = end;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1;
            int64_t zh, zm = 0;
            const char *q = p;
            if (!read_num(&p, end, 2, &zh))
                goto bad;
            if (p < end && *p == ':')
                p++;
            if (p < end && !read_num(&p, end, 2, &zm))
                goto bad;
            (void)q;
            if (zh > 15 || zm > 59)
                goto range;
            zone = sign * (zh * 3600 + zm * 60);
        } else {
            goto bad;
        }
    }
    if (p != end)
        goto bad;
    if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, (int)mo) || h > 24 ||
        mi > 59 || sec > 60 || (h == 24 && (mi != 0 || sec != 0 || usec != 0)))
        goto range;
    days = sql_days_from_date(y, (int)mo, (int)d) - SQL_EPOCH_DAYS;
    if (type == SQL_TYPE_DATE) {
        /* PostgreSQL's range: Julian day 0 (4713 BC) to 5874897 AD. */
        if (days < -2451545 || days > 2145031949)
            return sql_fail_at(s, location, KEEL_EINVAL, "22008",
                               "date out of range: \"%.*s\"",
                               (int)(len > 100 ? 100 : len), text);
        *out = days;
        return KEEL_OK;
    }
    {
        int64_t us;
        if (__builtin_mul_overflow(days, USECS_PER_DAY, &us) ||
            __builtin_add_overflow(us, ((h * 60 + mi) * 60 + sec) * 1000000 + usec,
                                   &us) ||
            __builtin_sub_overflow(us, type == SQL_TYPE_TIMESTAMPTZ ? zone * 1000000 : 0,
                                   &us))
            return sql_fail_at(s, location, KEEL_EINVAL, "22008",
                               "timestamp out of range: \"%.*s\"",
                               (int)(len > 100 ? 100 : len), text);
        if (type == SQL_TYPE_TIMESTAMPTZ && has_named)
            us = sql_tz_utc(&named, us);
        else if (type == SQL_TYPE_TIMESTAMPTZ && !has_zone)
            us = sql_tz_from_local(s, us);
        *out = us;
    }
    return KEEL_OK;
bad:
    return sql_fail_at(s, location, KEEL_EINVAL, "22007",
                       "invalid input syntax for type %s: \"%.*s\"",
                       sql_type_name(type), (int)(len > 100 ? 100 : len), text);
range:
    return sql_fail_at(s, location, KEEL_EINVAL, "22008",
                       "date/time field value out of range: \"%.*s\"",
                       (int)(len > 100 ? 100 : len), text);
}

/* PostgreSQL's ISO output: 2026-12-06, 2026-12-06 16:05:03.25[+00]; a
 * timestamptz's v is its local time, off its offset (seconds east). */
static int datetime_out(uint32_t type, int64_t v, int32_t off, char *buf,
                        size_t size)
{
    int64_t days, y, us;
    int m, d, n;

    if (type == SQL_TYPE_DATE) {
        days = v;
        us = 0;
    } else {
        days = v >= 0 ? v / USECS_PER_DAY : (v - USECS_PER_DAY + 1) / USECS_PER_DAY;
        us = v - days * USECS_PER_DAY;
    }
    sql_date_from_days(days + SQL_EPOCH_DAYS, &y, &m, &d);
    if (y <= 0)
        n = snprintf(buf, size, "%04lld-%02d-%02d", (long long)(1 - y), m, d);
    else
        n = snprintf(buf, size, "%04lld-%02d-%02d", (long long)y, m, d);
    if (type != SQL_TYPE_DATE) {
        int64_t secs = us / 1000000, frac = us % 1000000;
        n += snprintf(buf + n, size - (size_t)n, " %02d:%02d:%02d",
                      (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
        if (frac != 0) {
            char f[8];
            int k = snprintf(f, sizeof(f), "%06d", (int)frac);
            while (k > 0 && f[k - 1] == '0')
                f[--k] = '\0';
            n += snprintf(buf + n, size - (size_t)n, ".%s", f);
        }
        if (type == SQL_TYPE_TIMESTAMPTZ)
            n += sql_tz_offset_text(off, false, buf + n, size - (size_t)n);
    }
    if (y <= 0)
        n += snprintf(buf + n, size - (size_t)n, " BC");
    return n;
}

keel_status sql_value_keep(sql_session *s, sql_value *v)
{
    char *p;

    if (v->isnull || !sql_type_has_bytes(v->type))
        return KEEL_OK;
    p = sql_alloc(&s->arena, v->v.s.len + 1);
    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(p, v->v.s.p, v->v.s.len);
    v->v.s.p = p;
    return KEEL_OK;
}

/* ---- extract(), date_part() and date_trunc() ------------------------------ */

/* A field name, lower-cased, with PostgreSQL's plural and short forms. */
static int datetime_unit(const char *p, uint32_t len, char *out, size_t size)
{
    static const struct {
        const char *alias, *unit;
    } aliases[] = {
        {"microsecond", "microseconds"}, {"us", "microseconds"},
        {"usec", "microseconds"},        {"usecs", "microseconds"},
        {"millisecond", "milliseconds"}, {"ms", "milliseconds"},
        {"msec", "milliseconds"},        {"msecs", "milliseconds"},
        {"seconds", "second"},           {"sec", "second"},
        {"secs", "second"},              {"s", "second"},
        {"minutes", "minute"},           {"min", "minute"},
        {"mins", "minute"},              {"m", "minute"},
        {"hours", "hour"},               {"hr", "hour"},
        {"hrs", "hour"},                 {"h", "hour"},
        {"days", "day"},                 {"d", "day"},
        {"weeks", "week"},               {"w", "week"},
        {"months", "month"},             {"mon", "month"},
        {"mons", "month"},               {"quarters", "quarter"},
        {"qtr", "quarter"},              {"years", "year"},
        {"yr", "year"},                  {"yrs", "year"},
        {"y", "year"},                   {"decades", "decade"},
        {"dec", "decade"},               {"centuries", "century"},
        {"cent", "century"},             {"c", "century"},
        {"millenniums", "millennium"},   {"millennia", "millennium"},
        {"mil", "millennium"},           {"mils", "millennium"},
    };
    uint32_t n = 0;

    while (len > 0 && is_space(*p)) {
        p++;
        len--;
    }
    while (len > 0 && is_space(p[len - 1]))
        len--;
    if (len == 0 || len >= size)
        return -1;
    for (n = 0; n < len; n++)
        out[n] = (char)(p[n] >= 'A' && p[n] <= 'Z' ? p[n] - 'A' + 'a' : p[n]);
    out[n] = '\0';
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(out, aliases[i].alias) == 0) {
            snprintf(out, size, "%s", aliases[i].unit);
            break;
        }
    return 0;
}

static const char *datetime_type_words(uint32_t type)
{
    return type == SQL_TYPE_DATE        ? "date"
           : type == SQL_TYPE_TIMESTAMP ? "timestamp without time zone"
                                        : "timestamp with time zone";
}

/* A day count's ISO week year and week (weeks start on Monday; week 1
 * holds the year's first Thursday). */
void sql_iso_week(int64_t days, int64_t *isoyear, int64_t *week)
{
    int64_t y, dow = ((days % 7) + 7 + 3) % 7; /* 0 Monday; day 0 Thursday */
    int m, d;
    int64_t thursday = days - dow + 3, jan1;

    sql_date_from_days(thursday, &y, &m, &d);
    jan1 = sql_days_from_date(y, 1, 1);
    *isoyear = y;
    *week = (thursday - jan1) / 7 + 1;
}

keel_status sql_datetime_func(sql_session *s, sql_func f, const sql_value *a,
                              sql_value *out)
{
    uint32_t type = a[1].type;
    int64_t v = a[1].v.i, days, us, y, value, isoyear, week;
    char unit[32];
    int m, d, scale = 0;

    if (datetime_unit(a[0].v.s.p, a[0].v.s.len, unit, sizeof(unit)) != 0)
        snprintf(unit, sizeof(unit), "%.*s",
                 (int)(a[0].v.s.len < 24 ? a[0].v.s.len : 24), a[0].v.s.p);
    if (type == SQL_TYPE_INTERVAL) {
        if (f == SQL_FUNC_DATE_TRUNC)
            return sql_unsupported(s, -1, "date_trunc() of an interval");
        return sql_interval_extract(s, unit, &a[1], f == SQL_FUNC_DATE_PART,
                                    out);
    }
    /* a timestamptz's fields are the session zone's wall clock's */
    if (type == SQL_TYPE_TIMESTAMPTZ)
        v = sql_tz_local(s, v);
    if (type == SQL_TYPE_DATE) {
        days = v;
        us = 0;
    } else {
        days = v >= 0 ? v / USECS_PER_DAY
                      : (v - USECS_PER_DAY + 1) / USECS_PER_DAY;
        us = v - days * USECS_PER_DAY;
    }
    days += SQL_EPOCH_DAYS; /* since 1970-01-01 */
    sql_date_from_days(days, &y, &m, &d);
    if (f == SQL_FUNC_DATE_TRUNC) {
        int64_t ty = y, tm = m, td = d, tus = 0, t;
        if (strcmp(unit, "microseconds") == 0)
            tus = us;
        else if (strcmp(unit, "milliseconds") == 0)
            tus = us / 1000 * 1000;
        else if (strcmp(unit, "second") == 0)
            tus = us / 1000000 * 1000000;
        else if (strcmp(unit, "minute") == 0)
            tus = us / 60000000 * 60000000;
        else if (strcmp(unit, "hour") == 0)
            tus = us / 3600000000LL * 3600000000LL;
        else if (strcmp(unit, "day") == 0)
            tus = 0;
        else if (strcmp(unit, "week") == 0) {
            int64_t dow = ((days % 7) + 7 + 3) % 7;
            sql_date_from_days(days - dow, &ty, &m, &d);
            tm = m;
            td = d;
        } else if (strcmp(unit, "month") == 0)
            td = 1;
        else if (strcmp(unit, "quarter") == 0) {
            tm = (m - 1) / 3 * 3 + 1;
            td = 1;
        } else if (strcmp(unit, "year") == 0)
            tm = td = 1;
        else if (strcmp(unit, "decade") == 0) {
            ty = y > 0 ? y / 10 * 10 : -((8 - (y - 1)) / 10) * 10; /* PostgreSQL's arithmetic, year 0 being 1 BC */
            tm = td = 1;
        } else if (strcmp(unit, "century") == 0) {
            ty = y > 0 ? (y + 99) / 100 * 100 - 99
                       : -((99 - (y - 1)) / 100) * 100 + 1;
            tm = td = 1;
        } else if (strcmp(unit, "millennium") == 0) {
            ty = y > 0 ? (y + 999) / 1000 * 1000 - 999
                       : -((999 - (y - 1)) / 1000) * 1000 + 1;
            tm = td = 1;
        } else
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "unit \"%s\" not recognized for type %s", unit,
                            datetime_type_words(type == SQL_TYPE_DATE
                                                    ? SQL_TYPE_TIMESTAMPTZ
                                                    : type));
        t = (sql_days_from_date(ty, (int)tm, (int)td) - SQL_EPOCH_DAYS) *
                USECS_PER_DAY +
            tus;
        out->type = type == SQL_TYPE_DATE ? SQL_TYPE_TIMESTAMPTZ : type;
        out->isnull = false;
        out->v.i = t;
        /* a timestamptz cut to a day or more takes the offset its new
         * wall clock has; to an hour or less, it keeps its own, as in
         * PostgreSQL */
        if (out->type == SQL_TYPE_TIMESTAMPTZ)
            out->v.i = type == SQL_TYPE_TIMESTAMPTZ &&
                               (strcmp(unit, "microseconds") == 0 ||
                                strcmp(unit, "milliseconds") == 0 ||
                                strcmp(unit, "second") == 0 ||
                                strcmp(unit, "minute") == 0 ||
                                strcmp(unit, "hour") == 0)
                           ? t - (v - a[1].v.i)
                           : sql_tz_from_local(s, t);
        return KEEL_OK;
    }
    /* extract (numeric) and date_part (double precision): the value in
     * millionths where the field has a fraction. */
    if (type == SQL_TYPE_DATE &&
        (strcmp(unit, "microseconds") == 0 ||
         strcmp(unit, "milliseconds") == 0 || strcmp(unit, "second") == 0 ||
         strcmp(unit, "minute") == 0 || strcmp(unit, "hour") == 0))
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "unit \"%s\" not supported for type date", unit);
    if (strcmp(unit, "microseconds") == 0)
        value = us % 60000000;
    else if (strcmp(unit, "milliseconds") == 0) {
        value = us % 60000000;
        scale = 3;
    } else if (strcmp(unit, "second") == 0) {
        value = us % 60000000;
        scale = 6;
    } else if (strcmp(unit, "minute") == 0)
        value = us / 60000000 % 60;
    else if (strcmp(unit, "hour") == 0)
        value = us / 3600000000LL;
    else if (strcmp(unit, "day") == 0)
        value = d;
    else if (strcmp(unit, "month") == 0)
        value = m;
    else if (strcmp(unit, "quarter") == 0)
        value = (m - 1) / 3 + 1;
    else if (strcmp(unit, "year") == 0)
        value = y > 0 ? y : y - 1;
    else if (strcmp(unit, "decade") == 0)
        value = y >= 0 ? y / 10 : -((8 - (y - 1)) / 10);
    else if (strcmp(unit, "century") == 0)
        value = y > 0 ? (y + 99) / 100 : -((99 - (y - 1)) / 100);
    else if (strcmp(unit, "millennium") == 0)
        value = y > 0 ? (y + 999) / 1000 : -((999 - (y - 1)) / 1000);
    else if (strcmp(unit, "dow") == 0)
        value = ((days % 7) + 7 + 4) % 7;
    else if (strcmp(unit, "isodow") == 0)
        value = ((days % 7) + 7 + 3) % 7 + 1;
    else if (strcmp(unit, "doy") == 0)
        value = days - sql_days_from_date(y, 1, 1) + 1;
    else if (strcmp(unit, "week") == 0) {
        sql_iso_week(days, &isoyear, &week);
        value = week;
    } else if (strcmp(unit, "isoyear") == 0) {
        sql_iso_week(days, &isoyear, &week);
        value = isoyear > 0 ? isoyear : isoyear - 1;
    } else if (strcmp(unit, "epoch") == 0) {
        /* a timestamptz's the instant's */
        value = type == SQL_TYPE_DATE ? days * 86400
                : type == SQL_TYPE_TIMESTAMPTZ
                    ? a[1].v.i + SQL_EPOCH_DAYS * USECS_PER_DAY
                    : (days * USECS_PER_DAY + us);
        scale = type == SQL_TYPE_DATE ? 0 : 6;
    } else if ((strcmp(unit, "timezone") == 0 ||
                strcmp(unit, "timezone_hour") == 0 ||
                strcmp(unit, "timezone_minute") == 0) &&
               type == SQL_TYPE_TIMESTAMPTZ) {
        int32_t off = sql_tz_off(s, a[1].v.i);
        value = unit[8] == '\0'   ? off
                : unit[9] == 'h' ? off / 3600
                                 : off / 60 % 60;
    } else
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "unit \"%s\" not recognized for type %s", unit,
                        datetime_type_words(type));
    return sql_scaled_out(s, value, scale, f == SQL_FUNC_DATE_PART, out);
}

keel_status sql_scaled_out(sql_session *s, int64_t value, int scale,
                           bool as_double, sql_value *out)
{
    char text[48];

    out->isnull = false;
    if (as_double) {
        double p10 = scale == 6 ? 1e6 : scale == 3 ? 1e3 : 1;
        out->type = SQL_TYPE_FLOAT8;
        out->v.f = (double)value / p10;
        return KEEL_OK;
    }
    {
        numeric n = NUMERIC_INIT;
        uint64_t mag = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
        int k;
        if (scale == 0)
            k = snprintf(text, sizeof(text), "%s%llu", value < 0 ? "-" : "",
                         (unsigned long long)mag);
        else if (scale == 3)
            k = snprintf(text, sizeof(text), "%s%llu.%03llu",
                         value < 0 ? "-" : "", (unsigned long long)(mag / 1000),
                         (unsigned long long)(mag % 1000));
        else
            k = snprintf(text, sizeof(text), "%s%llu.%06llu",
                         value < 0 ? "-" : "",
                         (unsigned long long)(mag / 1000000),
                         (unsigned long long)(mag % 1000000));
        if (numeric_in(text, (size_t)k, &n) != NUMERIC_OK) {
            numeric_free(&n);
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        out->type = SQL_TYPE_NUMERIC;
        return sql_numeric_put(s, &n, out);
    }
}
