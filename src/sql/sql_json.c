/*
 * sql_json.c: json and jsonb, as PostgreSQL 15 has them.
 *
 * A json value is its text, kept as written once it parses; a jsonb
 * value is the canonical text of its parse: object keys sorted by length
 * and then bytes with the last of a repeated key kept, numbers as numeric
 * prints them, strings with only the escapes they need, ": " and ", "
 * between the parts.  Each operator and function parses the text it is
 * given into a tree in the statement's arena (sql_json_parse()); jsonb
 * compares, tests containment and answers `?` over such trees.
 *
 * Input errors are PostgreSQL's: "invalid input syntax for type json"
 * with its detail ("Expected \":\", but found \"}\".") and its context
 * ("JSON data, line 1: {\"a\"}").
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

/* Deeper nesting fails (54001) rather than exhaust the stack. */
#define JSON_MAX_DEPTH 2000

typedef enum jtok {
    JT_NONE, /* none read yet */
    JT_END,
    JT_OBJ_START,
    JT_OBJ_END,
    JT_ARR_START,
    JT_ARR_END,
    JT_COMMA,
    JT_COLON,
    JT_STRING,
    JT_NUMBER,
    JT_TRUE,
    JT_FALSE,
    JT_NULL,
} jtok;

/* What a failed parse was expecting (PostgreSQL's parse contexts). */
typedef enum jctx {
    JC_VALUE,
    JC_STRING,
    JC_OBJECT_START,
    JC_OBJECT_LABEL,
    JC_OBJECT_NEXT,
    JC_ARRAY_NEXT,
    JC_END,
} jctx;

typedef struct jlex {
    sql_session *s;    /* where errors go; NULL: none are reported */
    sql_arena *arena;  /* where the tree goes */
    const char *in;
    uint32_t len;
    uint32_t at;                  /* the next byte to read */
    uint32_t tok_start, tok_end;  /* the current token */
    jtok tok;
    uint32_t line, line_start;
    int32_t location;
    bool decode;   /* strings unescaped; \u0000 refused */
    bool jsonb;    /* objects made canonical, numbers as numeric's */
    int depth;
    /* a string token's bytes, unescaped (when decode) */
    char *str;
    uint32_t slen, scap;
} jlex;

static keel_status nomem(sql_session *s)
{
    return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
}

static keel_status jnomem(jlex *x)
{
    return x->s != NULL ? nomem(x->s) : KEEL_ENOMEM;
}

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || (unsigned char)c >= 0x80;
}

static uint32_t mb_len(const jlex *x, uint32_t at)
{
    unsigned char c = (unsigned char)x->in[at];
    uint32_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;

    return n > x->len - at ? x->len - at : n;
}

/*
 * Fails with the error of a bad input at x's current token: message
 * (sqlstate), detail, and PostgreSQL's context line, which shows the
 * input's line up to where the error was found (the last 50 bytes or so,
 * with "..." around what it leaves out).
 */
static keel_status jfail(jlex *x, const char *sqlstate, const char *message,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static keel_status jfail(jlex *x, const char *sqlstate, const char *message,
                         const char *fmt, ...)
{
    va_list ap;
    keel_status rc;
    uint32_t from = x->line_start, to = x->tok_end;
    bool more;

    if (x->s == NULL)
        return KEEL_EINVAL;
    rc = sql_fail_at(x->s, x->location, KEEL_EINVAL, sqlstate, "%s", message);
    if (x->s->err == NULL)
        return rc;
    va_start(ap, fmt);
    vsnprintf(x->s->err->detail, sizeof(x->s->err->detail), fmt, ap);
    va_end(ap);
    if (to < from)
        to = from;
    while (to - from >= 50)
        from += mb_len(x, from);
    if (from - x->line_start <= 3)
        from = x->line_start;
    more = x->tok != JT_END && to < x->len && x->in[to] != '\n' &&
           x->in[to] != '\r';
    snprintf(x->s->err->context, sizeof(x->s->err->context),
             "JSON data, line %u: %s%.*s%s", x->line,
             from > x->line_start ? "..." : "", (int)(to - from), x->in + from,
             more ? "..." : "");
    return rc;
}

static keel_status bad_json(jlex *x, const char *fmt, const char *arg,
                            uint32_t arglen)
{
    char detail[160];

    snprintf(detail, sizeof(detail), fmt, (int)arglen, arg);
    return jfail(x, "22P02", "invalid input syntax for type json", "%s",
                 detail);
}

static keel_status str_add(jlex *x, const char *p, uint32_t n)
{
    if (x->slen + n > x->scap) {
        uint32_t cap = (x->slen + n) * 2 + 32;
        char *b = sql_alloc(x->arena, cap);
        if (b == NULL)
            return jnomem(x);
        if (x->slen > 0)
            memcpy(b, x->str, x->slen);
        x->str = b;
        x->scap = cap;
    }
    memcpy(x->str + x->slen, p, n);
    x->slen += n;
    return KEEL_OK;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static keel_status put_utf8(jlex *x, uint32_t cp)
{
    char b[4];
    uint32_t n;

    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return str_add(x, b, n);
}

/* A string token from x->at (its opening quote). */
static keel_status lex_string(jlex *x)
{
    int32_t hi = -1;
    uint32_t p = x->at + 1;

    x->slen = 0;
    for (;; p++) {
        char c;
        if (p >= x->len) {
            x->tok_end = p;
            return bad_json(x, "Token \"%.*s\" is invalid.", x->in + x->tok_start,
                            p - x->tok_start);
        }
        c = x->in[p];
        if (c == '"')
            break;
        if ((unsigned char)c < 32) {
            x->tok_end = p;
            return jfail(x, "22P02", "invalid input syntax for type json",
                         "Character with value 0x%02x must be escaped.",
                         (unsigned char)c);
        }
        if (c != '\\') {
            if (hi >= 0) {
                x->tok_end = p;
                return jfail(x, "22P02", "invalid input syntax for type json",
                             "Unicode low surrogate must follow a high "
                             "surrogate.");
            }
            if (x->decode && str_add(x, &c, 1) != KEEL_OK)
                return KEEL_ENOMEM;
            continue;
        }
        if (++p >= x->len) {
            x->tok_end = p;
            return bad_json(x, "Token \"%.*s\" is invalid.", x->in + x->tok_start,
                            p - x->tok_start);
        }
        c = x->in[p];
        if (c == 'u') {
            uint32_t cp = 0;
            for (int i = 0; i < 4; i++) {
                int h;
                if (++p >= x->len) {
                    x->tok_end = p;
                    return bad_json(x, "Token \"%.*s\" is invalid.",
                                    x->in + x->tok_start, p - x->tok_start);
                }
                h = hexval(x->in[p]);
                if (h < 0) {
                    x->tok_end = p + mb_len(x, p);
                    return jfail(x, "22P02",
                                 "invalid input syntax for type json",
                                 "\"\\u\" must be followed by four "
                                 "hexadecimal digits.");
                }
                cp = cp * 16 + (uint32_t)h;
            }
            if (!x->decode)
                continue;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (hi >= 0) {
                    x->tok_end = p + 1;
                    return jfail(x, "22P02",
                                 "invalid input syntax for type json",
                                 "Unicode high surrogate must not follow a "
                                 "high surrogate.");
                }
                hi = (int32_t)cp;
                continue;
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                if (hi < 0) {
                    x->tok_end = p + 1;
                    return jfail(x, "22P02",
                                 "invalid input syntax for type json",
                                 "Unicode low surrogate must follow a high "
                                 "surrogate.");
                }
                cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + (cp - 0xDC00);
                hi = -1;
            }
            if (hi >= 0) {
                x->tok_end = p + 1;
                return jfail(x, "22P02", "invalid input syntax for type json",
                             "Unicode low surrogate must follow a high "
                             "surrogate.");
            }
            if (cp == 0) {
                x->tok_end = p + 1;
                return jfail(x, "22P05", "unsupported Unicode escape sequence",
                             "\\u0000 cannot be converted to text.");
            }
            if (put_utf8(x, cp) != KEEL_OK)
                return KEEL_ENOMEM;
            continue;
        }
        if (hi >= 0 && x->decode) {
            x->tok_end = p + 1;
            return jfail(x, "22P02", "invalid input syntax for type json",
                         "Unicode low surrogate must follow a high "
                         "surrogate.");
        }
        {
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *hit = memchr(from, c, 8);
            if (hit == NULL) {
                x->tok_start = p;
                x->tok_end = p + mb_len(x, p);
                return bad_json(x, "Escape sequence \"\\%.*s\" is invalid.",
                                x->in + p, x->tok_end - p);
            }
            if (x->decode && str_add(x, &to[hit - from], 1) != KEEL_OK)
                return KEEL_ENOMEM;
        }
    }
    if (hi >= 0 && x->decode) {
        x->tok_end = p + 1;
        return jfail(x, "22P02", "invalid input syntax for type json",
                     "Unicode low surrogate must follow a high surrogate.");
    }
    x->tok = JT_STRING;
    x->tok_end = p + 1;
    x->at = p + 1;
    return KEEL_OK;
}

/* A number token from x->at (a '-' or a digit), as JSON writes them;
 * alphanumerics after it are part of the (invalid) token. */
static keel_status lex_number(jlex *x)
{
    uint32_t p = x->at;
    bool bad = false;

    if (x->in[p] == '-')
        p++;
    if (p < x->len && x->in[p] == '0') {
        p++;
    } else if (p < x->len && x->in[p] >= '1' && x->in[p] <= '9') {
        while (p < x->len && x->in[p] >= '0' && x->in[p] <= '9')
            p++;
    } else {
        bad = true;
    }
    if (p < x->len && x->in[p] == '.') {
        p++;
        if (p == x->len || x->in[p] < '0' || x->in[p] > '9')
            bad = true;
        while (p < x->len && x->in[p] >= '0' && x->in[p] <= '9')
            p++;
    }
    if (p < x->len && (x->in[p] == 'e' || x->in[p] == 'E')) {
        p++;
        if (p < x->len && (x->in[p] == '+' || x->in[p] == '-'))
            p++;
        if (p == x->len || x->in[p] < '0' || x->in[p] > '9')
            bad = true;
        while (p < x->len && x->in[p] >= '0' && x->in[p] <= '9')
            p++;
    }
    while (p < x->len && alnum(x->in[p])) {
        p++;
        bad = true;
    }
    x->tok_end = p;
    if (bad)
        return bad_json(x, "Token \"%.*s\" is invalid.", x->in + x->tok_start,
                        p - x->tok_start);
    x->tok = JT_NUMBER;
    x->at = p;
    return KEEL_OK;
}

static keel_status lex(jlex *x)
{
    char c;
    uint32_t p;

    while (x->at < x->len) {
        c = x->in[x->at];
        if (c == '\n') {
            x->line++;
            x->line_start = x->at + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            break;
        }
        x->at++;
    }
    x->tok_start = x->at;
    if (x->at == x->len) {
        x->tok = JT_END;
        x->tok_end = x->at;
        return KEEL_OK;
    }
    c = x->in[x->at];
    switch (c) {
    case '{':
    case '}':
    case '[':
    case ']':
    case ',':
    case ':':
        x->tok = c == '{'   ? JT_OBJ_START
                 : c == '}' ? JT_OBJ_END
                 : c == '[' ? JT_ARR_START
                 : c == ']' ? JT_ARR_END
                 : c == ',' ? JT_COMMA
                            : JT_COLON;
        x->tok_end = ++x->at;
        return KEEL_OK;
    case '"':
        return lex_string(x);
    case '-':
        return lex_number(x);
    default:
        break;
    }
    if (c >= '0' && c <= '9')
        return lex_number(x);
    for (p = x->at; p < x->len && alnum(x->in[p]); p++)
        ;
    if (p == x->at) {
        x->tok_end = x->at + mb_len(x, x->at);
        return bad_json(x, "Token \"%.*s\" is invalid.", x->in + x->at,
                        x->tok_end - x->at);
    }
    x->tok_end = p;
    if (p - x->at == 4 && memcmp(x->in + x->at, "true", 4) == 0)
        x->tok = JT_TRUE;
    else if (p - x->at == 4 && memcmp(x->in + x->at, "null", 4) == 0)
        x->tok = JT_NULL;
    else if (p - x->at == 5 && memcmp(x->in + x->at, "false", 5) == 0)
        x->tok = JT_FALSE;
    else
        return bad_json(x, "Token \"%.*s\" is invalid.", x->in + x->at,
                        p - x->at);
    x->at = p;
    return KEEL_OK;
}

/* The error for an unexpected token where ctx was expected. */
static keel_status unexpected(jlex *x, jctx ctx)
{
    static const char *const what[] = {
        [JC_VALUE] = "Expected JSON value, but found \"%.*s\".",
        [JC_STRING] = "Expected string, but found \"%.*s\".",
        [JC_OBJECT_START] = "Expected string or \"}\", but found \"%.*s\".",
        [JC_OBJECT_LABEL] = "Expected \":\", but found \"%.*s\".",
        [JC_OBJECT_NEXT] = "Expected \",\" or \"}\", but found \"%.*s\".",
        [JC_ARRAY_NEXT] = "Expected \",\" or \"]\", but found \"%.*s\".",
        [JC_END] = "Expected end of input, but found \"%.*s\".",
    };

    if (x->tok == JT_END)
        return jfail(x, "22P02", "invalid input syntax for type json", "%s",
                     "The input string ended unexpectedly.");
    return bad_json(x, what[ctx], x->in + x->tok_start,
                    x->tok_end - x->tok_start);
}

static sql_json *node_new(jlex *x, sql_json_kind kind)
{
    sql_json *j = sql_alloc(x->arena, sizeof(*j));

    if (j != NULL) {
        memset(j, 0, sizeof(*j));
        j->kind = kind;
    }
    return j;
}

/* Appends j to the growing list *kids (n of cap). */
static keel_status kid_add(jlex *x, sql_json ***kids, uint32_t *n,
                           uint32_t *cap, sql_json *j)
{
    if (*n == *cap) {
        uint32_t nc = *cap * 2 + 8;
        sql_json **b = sql_alloc(x->arena, nc * sizeof(*b));
        if (b == NULL)
            return jnomem(x);
        if (*n > 0)
            memcpy(b, *kids, *n * sizeof(*b));
        *kids = b;
        *cap = nc;
    }
    (*kids)[(*n)++] = j;
    return KEEL_OK;
}

int sql_json_key_cmp(const sql_json *a, const sql_json *b)
{
    int c;

    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    c = a->len > 0 ? memcmp(a->str, b->str, a->len) : 0;
    return (c > 0) - (c < 0);
}

/* Sorts the pair numbers order[0..n) by their keys in kids, stably
 * (a merge sort, tmp its room). */
static void sort_pairs(uint32_t *order, uint32_t *tmp, uint32_t n,
                       sql_json *const *kids)
{
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n;
            uint32_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = sql_json_key_cmp(kids[2 * order[b]],
                                            kids[2 * order[a]]) < 0
                               ? order[b++]
                               : order[a++];
            while (a < mid)
                tmp[o++] = order[a++];
            while (b < hi)
                tmp[o++] = order[b++];
        }
        memcpy(order, tmp, n * sizeof(*order));
    }
}

/* An object's pairs made canonical: sorted by key, the last of equal
 * keys kept. */
static keel_status object_canonical(jlex *x, sql_json *j)
{
    uint32_t *order, n = 0;
    sql_json **kids;

    if (j->n < 2)
        return KEEL_OK;
    order = sql_alloc(x->arena, 2 * j->n * sizeof(*order));
    kids = sql_alloc(x->arena, 2 * j->n * sizeof(*kids));
    if (order == NULL || kids == NULL)
        return jnomem(x);
    for (uint32_t i = 0; i < j->n; i++)
        order[i] = i;
    sort_pairs(order, order + j->n, j->n, j->kids);
    for (uint32_t i = 0; i < j->n; i++) {
        uint32_t k = order[i];
        if (i + 1 < j->n &&
            sql_json_key_cmp(j->kids[2 * k], j->kids[2 * order[i + 1]]) == 0)
            continue; /* a later one of the same key follows */
        kids[2 * n] = j->kids[2 * k];
        kids[2 * n + 1] = j->kids[2 * k + 1];
        n++;
    }
    j->kids = kids;
    j->n = n;
    return KEEL_OK;
}

static keel_status parse_value(jlex *x, sql_json **out);

static keel_status parse_scalar(jlex *x, sql_json **out)
{
    sql_json *j;

    switch (x->tok) {
    case JT_STRING:
        j = node_new(x, SQL_JSON_STRING);
        break;
    case JT_NUMBER:
        j = node_new(x, SQL_JSON_NUMBER);
        break;
    case JT_TRUE:
    case JT_FALSE:
        j = node_new(x, SQL_JSON_BOOL);
        break;
    case JT_NULL:
        j = node_new(x, SQL_JSON_NULL);
        break;
    default:
        return unexpected(x, JC_VALUE);
    }
    if (j == NULL)
        return jnomem(x);
    j->src = x->in + x->tok_start;
    j->srclen = x->tok_end - x->tok_start;
    j->b = x->tok == JT_TRUE;
    if (x->tok == JT_STRING) {
        j->str = x->decode ? x->str : j->src + 1;
        j->len = x->decode ? x->slen : j->srclen - 2;
        x->str = NULL;
        x->slen = x->scap = 0;
    } else if (x->tok == JT_NUMBER) {
        j->str = j->src;
        j->len = j->srclen;
        if (x->jsonb) {
            /* as numeric prints it: 1e2 is 100, -0 is 0 */
            numeric n = NUMERIC_INIT;
            char *t;
            if (numeric_in(j->src, j->srclen, &n) != NUMERIC_OK) {
                numeric_free(&n);
                return x->s == NULL
                           ? KEEL_EINVAL
                           : sql_fail_at(x->s, x->location, KEEL_EINVAL,
                                         "22003",
                                         "value overflows numeric format");
            }
            t = sql_alloc(x->arena, numeric_out_len(&n) + 1);
            if (t == NULL) {
                numeric_free(&n);
                return jnomem(x);
            }
            j->len = (uint32_t)numeric_out(&n, t);
            j->str = t;
            numeric_free(&n);
        }
    }
    *out = j;
    return lex(x);
}

static keel_status parse_object(jlex *x, sql_json **out)
{
    sql_json *j = node_new(x, SQL_JSON_OBJECT);
    uint32_t start = x->tok_start, cap = 0;
    keel_status rc;

    if (j == NULL)
        return jnomem(x);
    rc = lex(x);
    if (rc == KEEL_OK && x->tok != JT_STRING && x->tok != JT_OBJ_END)
        return unexpected(x, JC_OBJECT_START);
    while (rc == KEEL_OK && x->tok == JT_STRING) {
        sql_json *k, *v;
        rc = parse_scalar(x, &k);
        if (rc == KEEL_OK && x->tok != JT_COLON)
            return unexpected(x, JC_OBJECT_LABEL);
        if (rc == KEEL_OK)
            rc = lex(x);
        if (rc == KEEL_OK)
            rc = parse_value(x, &v);
        if (rc == KEEL_OK)
            rc = kid_add(x, &j->kids, &j->n, &cap, k);
        if (rc == KEEL_OK)
            rc = kid_add(x, &j->kids, &j->n, &cap, v);
        if (rc != KEEL_OK)
            return rc;
        if (x->tok != JT_COMMA)
            break;
        rc = lex(x);
        if (rc == KEEL_OK && x->tok != JT_STRING)
            return unexpected(x, JC_STRING);
    }
    if (rc != KEEL_OK)
        return rc;
    if (x->tok != JT_OBJ_END)
        return unexpected(x, JC_OBJECT_NEXT);
    j->n /= 2;
    j->src = x->in + start;
    j->srclen = x->tok_end - start;
    if (x->jsonb && (rc = object_canonical(x, j)) != KEEL_OK)
        return rc;
    *out = j;
    return lex(x);
}

static keel_status parse_array(jlex *x, sql_json **out)
{
    sql_json *j = node_new(x, SQL_JSON_ARRAY);
    uint32_t start = x->tok_start, cap = 0;
    keel_status rc;

    if (j == NULL)
        return jnomem(x);
    rc = lex(x);
    if (rc == KEEL_OK && x->tok != JT_ARR_END) {
        for (;;) {
            sql_json *v;
            rc = parse_value(x, &v);
            if (rc == KEEL_OK)
                rc = kid_add(x, &j->kids, &j->n, &cap, v);
            if (rc != KEEL_OK || x->tok != JT_COMMA)
                break;
            rc = lex(x);
            if (rc != KEEL_OK)
                break;
        }
    }
    if (rc != KEEL_OK)
        return rc;
    if (x->tok != JT_ARR_END)
        return unexpected(x, JC_ARRAY_NEXT);
    j->src = x->in + start;
    j->srclen = x->tok_end - start;
    *out = j;
    return lex(x);
}

static keel_status parse_value(jlex *x, sql_json **out)
{
    keel_status rc;

    if (x->tok != JT_OBJ_START && x->tok != JT_ARR_START)
        return parse_scalar(x, out);
    if (++x->depth > JSON_MAX_DEPTH) {
        if (x->s == NULL)
            return KEEL_ETOOBIG;
        rc = sql_fail(x->s, KEEL_ETOOBIG, "54001", "stack depth limit exceeded");
        if (x->s->err != NULL)
            snprintf(x->s->err->hint, sizeof(x->s->err->hint),
                     "JSON nested more than %d deep.", JSON_MAX_DEPTH);
        return rc;
    }
    rc = x->tok == JT_OBJ_START ? parse_object(x, out) : parse_array(x, out);
    x->depth--;
    return rc;
}

static keel_status parse(sql_session *s, sql_arena *arena, const char *p,
                         uint32_t len, int mode, int32_t location,
                         sql_json **out)
{
    jlex x = {.s = s, .arena = arena, .in = p, .len = len, .line = 1,
              .location = location, .decode = mode != SQL_JSON_VALIDATE,
              .jsonb = mode == SQL_JSON_JSONB};
    keel_status rc = lex(&x);

    if (rc == KEEL_OK)
        rc = parse_value(&x, out);
    if (rc == KEEL_OK && x.tok != JT_END)
        return unexpected(&x, JC_END);
    return rc;
}

keel_status sql_json_parse(sql_session *s, const char *p, uint32_t len,
                           int mode, int32_t location, sql_json **out)
{
    return parse(s, &s->arena, p, len, mode, location, out);
}

int sql_jsonb_compare(const char *a, uint32_t alen, const char *b,
                      uint32_t blen)
{
    sql_arena arena = {0};
    sql_json *x, *y;
    int c;

    /* Stored values parse: they were read as jsonb.  Their trees go in
     * an arena of their own, as the comparison has no session. */
    if (parse(NULL, &arena, a, alen, SQL_JSON_DECODE, -1, &x) == KEEL_OK &&
        parse(NULL, &arena, b, blen, SQL_JSON_DECODE, -1, &y) == KEEL_OK) {
        c = sql_json_cmp(x, y);
    } else {
        uint32_t n = alen < blen ? alen : blen;
        c = n > 0 ? memcmp(a, b, n) : 0;
        if (c == 0)
            c = (alen > blen) - (alen < blen);
    }
    sql_arena_free(&arena);
    return (c > 0) - (c < 0);
}

/* ---- output ---------------------------------------------------------------- */

keel_status sql_json_buf_add(sql_session *s, sql_json_buf *b, const char *p,
                             size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2 + 64;
        char *nb = sql_alloc(&s->arena, cap);
        if (nb == NULL)
            return nomem(s);
        if (b->len > 0)
            memcpy(nb, b->p, b->len);
        b->p = nb;
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    return KEEL_OK;
}

keel_status sql_json_quote(sql_session *s, sql_json_buf *b, const char *p,
                           uint32_t n)
{
    keel_status rc = sql_json_buf_add(s, b, "\"", 1);
    uint32_t run = 0;

    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        char esc[8];
        const char *e = NULL;
        switch (c) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\b':
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof(esc), "\\u%04x", c);
                e = esc;
            }
            break;
        }
        if (e == NULL) {
            run++;
            continue;
        }
        rc = sql_json_buf_add(s, b, p + i - run, run);
        run = 0;
        if (rc == KEEL_OK)
            rc = sql_json_buf_add(s, b, e, strlen(e));
    }
    if (rc == KEEL_OK && run > 0)
        rc = sql_json_buf_add(s, b, p + n - run, run);
    if (rc == KEEL_OK)
        rc = sql_json_buf_add(s, b, "\"", 1);
    return rc;
}

keel_status sql_json_write(sql_session *s, sql_json_buf *b, const sql_json *j)
{
    keel_status rc = KEEL_OK;

    switch (j->kind) {
    case SQL_JSON_NULL:
        return sql_json_buf_add(s, b, "null", 4);
    case SQL_JSON_BOOL:
        return j->b ? sql_json_buf_add(s, b, "true", 4)
                    : sql_json_buf_add(s, b, "false", 5);
    case SQL_JSON_NUMBER:
        return sql_json_buf_add(s, b, j->str, j->len);
    case SQL_JSON_STRING:
        return sql_json_quote(s, b, j->str, j->len);
    case SQL_JSON_ARRAY:
        rc = sql_json_buf_add(s, b, "[", 1);
        for (uint32_t i = 0; rc == KEEL_OK && i < j->n; i++) {
            if (i > 0)
                rc = sql_json_buf_add(s, b, ", ", 2);
            if (rc == KEEL_OK)
                rc = sql_json_write(s, b, j->kids[i]);
        }
        return rc == KEEL_OK ? sql_json_buf_add(s, b, "]", 1) : rc;
    case SQL_JSON_OBJECT:
        rc = sql_json_buf_add(s, b, "{", 1);
        for (uint32_t i = 0; rc == KEEL_OK && i < j->n; i++) {
            if (i > 0)
                rc = sql_json_buf_add(s, b, ", ", 2);
            if (rc == KEEL_OK)
                rc = sql_json_write(s, b, j->kids[2 * i]);
            if (rc == KEEL_OK)
                rc = sql_json_buf_add(s, b, ": ", 2);
            if (rc == KEEL_OK)
                rc = sql_json_write(s, b, j->kids[2 * i + 1]);
        }
        return rc == KEEL_OK ? sql_json_buf_add(s, b, "}", 1) : rc;
    }
    return KEEL_OK;
}

keel_status sql_json_in(sql_session *s, const char *p, uint32_t len,
                        uint32_t type, int32_t location, sql_value *out)
{
    sql_json *j;
    sql_json_buf b = {0};
    keel_status rc = sql_json_parse(s, p, len,
                                    type == SQL_TYPE_JSONB ? SQL_JSON_JSONB
                                                           : SQL_JSON_VALIDATE,
                                    location, &j);

    if (rc != KEEL_OK)
        return rc;
    out->type = type;
    out->isnull = false;
    if (type == SQL_TYPE_JSON) {
        out->v.s.p = p;
        out->v.s.len = len;
        return KEEL_OK;
    }
    rc = sql_json_write(s, &b, j);
    if (rc != KEEL_OK)
        return rc;
    out->v.s.p = b.p != NULL ? b.p : "";
    out->v.s.len = (uint32_t)b.len;
    return KEEL_OK;
}

/* ---- jsonb order and containment ---------------------------------------- */

static int scalar_cmp(const sql_json *a, const sql_json *b)
{
    switch (a->kind) {
    case SQL_JSON_STRING: {
        uint32_t n = a->len < b->len ? a->len : b->len;
        int c = n > 0 ? memcmp(a->str, b->str, n) : 0;
        if (c != 0)
            return (c > 0) - (c < 0);
        return (a->len > b->len) - (a->len < b->len);
    }
    case SQL_JSON_NUMBER: {
        numeric x = NUMERIC_INIT, y = NUMERIC_INIT;
        int c = 0;
        if (numeric_in(a->str, a->len, &x) == NUMERIC_OK &&
            numeric_in(b->str, b->len, &y) == NUMERIC_OK)
            c = numeric_cmp(&x, &y);
        numeric_free(&x);
        numeric_free(&y);
        return (c > 0) - (c < 0);
    }
    case SQL_JSON_BOOL:
        return (int)a->b - (int)b->b;
    default:
        return 0;
    }
}

/* PostgreSQL's jsonb order below the top: null < string < number <
 * boolean < array < object; arrays by length, then element by element;
 * objects by their number of pairs, then key, value, key... in key
 * order. */
static int inner_cmp(const sql_json *a, const sql_json *b)
{
    uint32_t n;

    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->kind != SQL_JSON_ARRAY && a->kind != SQL_JSON_OBJECT)
        return scalar_cmp(a, b);
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    n = a->kind == SQL_JSON_OBJECT ? 2 * a->n : a->n;
    for (uint32_t i = 0; i < n; i++) {
        int c = inner_cmp(a->kids[i], b->kids[i]);
        if (c != 0)
            return c;
    }
    return 0;
}

int sql_json_cmp(const sql_json *a, const sql_json *b)
{
    /* At the top a scalar is an array of one that sorts before a real
     * array of one; an empty array sorts before any scalar. */
    bool ascalar = a->kind != SQL_JSON_ARRAY && a->kind != SQL_JSON_OBJECT;
    bool bscalar = b->kind != SQL_JSON_ARRAY && b->kind != SQL_JSON_OBJECT;

    if (ascalar || bscalar) {
        uint32_t an = ascalar ? 1 : a->n, bn = bscalar ? 1 : b->n;
        if (a->kind == SQL_JSON_OBJECT || b->kind == SQL_JSON_OBJECT)
            return a->kind == SQL_JSON_OBJECT ? 1 : -1;
        if (an != bn)
            return an < bn ? -1 : 1;
        if (ascalar != bscalar)
            return ascalar ? -1 : 1;
        return inner_cmp(a, b);
    }
    return inner_cmp(a, b);
}

/* The value of key (n bytes) in object j, the last of equal keys (a
 * canonical object has one), or NULL. */
const sql_json *sql_json_get(const sql_json *j, const char *key, uint32_t n)
{
    const sql_json *hit = NULL;

    if (j->kind != SQL_JSON_OBJECT)
        return NULL;
    for (uint32_t i = 0; i < j->n; i++) {
        const sql_json *k = j->kids[2 * i];
        if (k->len == n && (n == 0 || memcmp(k->str, key, n) == 0))
            hit = j->kids[2 * i + 1];
    }
    return hit;
}

/* PostgreSQL's JsonbDeepContains below the top. */
static bool contains(const sql_json *a, const sql_json *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == SQL_JSON_OBJECT) {
        for (uint32_t i = 0; i < b->n; i++) {
            const sql_json *bk = b->kids[2 * i], *bv = b->kids[2 * i + 1];
            const sql_json *av = sql_json_get(a, bk->str, bk->len);
            if (av == NULL || av->kind != bv->kind)
                return false;
            if (bv->kind == SQL_JSON_OBJECT || bv->kind == SQL_JSON_ARRAY) {
                if (!contains(av, bv))
                    return false;
            } else if (scalar_cmp(av, bv) != 0) {
                return false;
            }
        }
        return true;
    }
    if (a->kind == SQL_JSON_ARRAY) {
        for (uint32_t i = 0; i < b->n; i++) {
            const sql_json *be = b->kids[i];
            bool found = false;
            for (uint32_t k = 0; k < a->n && !found; k++) {
                const sql_json *ae = a->kids[k];
                if (be->kind == SQL_JSON_OBJECT || be->kind == SQL_JSON_ARRAY)
                    found = ae->kind == be->kind && contains(ae, be);
                else
                    found = ae->kind == be->kind && scalar_cmp(ae, be) == 0;
            }
            if (!found)
                return false;
        }
        return true;
    }
    return scalar_cmp(a, b) == 0;
}

bool sql_json_contains(const sql_json *a, const sql_json *b)
{
    bool ascalar = a->kind != SQL_JSON_ARRAY && a->kind != SQL_JSON_OBJECT;
    bool bscalar = b->kind != SQL_JSON_ARRAY && b->kind != SQL_JSON_OBJECT;

    /* An array contains a scalar it has; a scalar no array. */
    if (bscalar && a->kind == SQL_JSON_ARRAY) {
        sql_json one = {.kind = SQL_JSON_ARRAY, .n = 1};
        const sql_json *kid = b;
        one.kids = (sql_json **)&kid;
        return contains(a, &one);
    }
    if (ascalar && !bscalar)
        return false;
    return contains(a, b);
}

bool sql_json_exists(const sql_json *j, const char *key, uint32_t n)
{
    if (j->kind == SQL_JSON_OBJECT)
        return sql_json_get(j, key, n) != NULL;
    if (j->kind == SQL_JSON_ARRAY) {
        for (uint32_t i = 0; i < j->n; i++) {
            const sql_json *e = j->kids[i];
            if (e->kind == SQL_JSON_STRING && e->len == n &&
                (n == 0 || memcmp(e->str, key, n) == 0))
                return true;
        }
        return false;
    }
    return j->kind == SQL_JSON_STRING && j->len == n &&
           (n == 0 || memcmp(j->str, key, n) == 0);
}

/* ---- values to json ------------------------------------------------------- */

/* Whether text is a JSON number (a float's "NaN" and "Infinity" are
 * not). */
static bool is_json_number(const char *p, uint32_t n)
{
    uint32_t q = 0;

    if (n == 0 || !(p[0] == '-' || (p[0] >= '0' && p[0] <= '9')))
        return false;
    /* as lex_number() scans */
    if (p[q] == '-')
        q++;
    if (q < n && p[q] == '0')
        q++;
    else if (q < n && p[q] >= '1' && p[q] <= '9')
        while (q < n && p[q] >= '0' && p[q] <= '9')
            q++;
    else
        return false;
    if (q < n && p[q] == '.') {
        if (++q == n || p[q] < '0' || p[q] > '9')
            return false;
        while (q < n && p[q] >= '0' && p[q] <= '9')
            q++;
    }
    if (q < n && (p[q] == 'e' || p[q] == 'E')) {
        q++;
        if (q < n && (p[q] == '+' || p[q] == '-'))
            q++;
        if (q == n || p[q] < '0' || p[q] > '9')
            return false;
        while (q < n && p[q] >= '0' && p[q] <= '9')
            q++;
    }
    return q == n;
}

keel_status sql_json_from_value(sql_session *s, const sql_value *v,
                                sql_json_buf *b)
{
    const char *p;
    uint32_t n;
    keel_status rc;

    if (v->isnull)
        return sql_json_buf_add(s, b, "null", 4);
    if (v->type == SQL_TYPE_BOOL)
        return v->v.b ? sql_json_buf_add(s, b, "true", 4)
                      : sql_json_buf_add(s, b, "false", 5);
    if (v->type == SQL_TYPE_JSON || v->type == SQL_TYPE_JSONB)
        return sql_json_buf_add(s, b, v->v.s.p, v->v.s.len);
    if (sql_type_elem(v->type) != 0) {
        /* an array's elements, each as its own type makes it */
        uint32_t et = sql_type_elem(v->type), pos = 0, elen;
        const char *el;
        bool isnull, first = true;
        rc = sql_json_buf_add(s, b, "[", 1);
        while (rc == KEEL_OK && sql_array_next(s, v->v.s.p, v->v.s.len, &pos,
                                               &el, &elen, &isnull)) {
            sql_value x = {.type = SQL_TYPE_UNKNOWN, .isnull = isnull,
                           .v.s = {el, elen}};
            if (!first)
                rc = sql_json_buf_add(s, b, ",", 1);
            first = false;
            if (rc == KEEL_OK)
                rc = sql_value_cast(s, &x, et, -1, true, -1);
            if (rc == KEEL_OK)
                rc = sql_json_from_value(s, &x, b);
        }
        return rc == KEEL_OK ? sql_json_buf_add(s, b, "]", 1) : rc;
    }
    rc = sql_value_text(s, v, &p, &n);
    if (rc != KEEL_OK)
        return rc;
    if (sql_type_is_number(v->type))
        return is_json_number(p, n) ? sql_json_buf_add(s, b, p, n)
                                    : sql_json_quote(s, b, p, n);
    if (sql_type_is_datetime(v->type) && n > 10 && p[10] == ' ' &&
        p[0] != 'i' && p[0] != '-') {
        /* ISO 8601, as PostgreSQL's json writes them: a T between date
         * and time, the zone as +HH:MM */
        char *t = sql_alloc(&s->arena, n + 4u);
        uint32_t m = n;
        if (t == NULL)
            return nomem(s);
        memcpy(t, p, n);
        t[10] = 'T';
        if (v->type == SQL_TYPE_TIMESTAMPTZ && n >= 3 &&
            (t[n - 3] == '+' || t[n - 3] == '-')) {
            memcpy(t + n, ":00", 3);
            m += 3;
        }
        return sql_json_quote(s, b, t, m);
    }
    return sql_json_quote(s, b, p, n);
}

/* The text in b as a value of type json, or of jsonb made canonical. */
static keel_status buf_value(sql_session *s, sql_json_buf *b, uint32_t type,
                             sql_value *out)
{
    out->isnull = false;
    if (type == SQL_TYPE_JSONB)
        return sql_json_in(s, b->p, (uint32_t)b->len, SQL_TYPE_JSONB, -1, out);
    out->type = type;
    out->v.s.p = b->p != NULL ? b->p : "";
    out->v.s.len = (uint32_t)b->len;
    return KEEL_OK;
}

/* ---- operators and functions --------------------------------------------- */

static bool is_json(uint32_t t)
{
    return t == SQL_TYPE_JSON || t == SQL_TYPE_JSONB;
}

static sql_expr *func_new(sql_session *s, sql_func f, uint32_t type,
                          int32_t location, uint16_t nargs)
{
    sql_expr *e = sql_expr_new(s, SQL_EXPR_FUNC, type, location, nargs);

    if (e != NULL)
        e->u.func = f;
    return e;
}

static keel_status no_op(sql_session *s, int32_t location, const char *name,
                         const sql_expr *l, const sql_expr *r)
{
    keel_status rc = sql_fail_at(s, location, KEEL_ETYPE, "42883",
                                 "operator does not exist: %s %s %s",
                                 sql_type_name(l->type), name,
                                 sql_type_name(r->type));

    if (s->err != NULL)
        snprintf(s->err->hint, sizeof(s->err->hint),
                 "No operator matches the given name and argument types. "
                 "You might need to add explicit type casts.");
    return rc;
}

bool sql_json_is_concat(const sql_expr *l, const sql_expr *r)
{
    return (l->type == SQL_TYPE_JSONB &&
            (r->type == SQL_TYPE_JSONB || r->type == SQL_TYPE_UNKNOWN)) ||
           (r->type == SQL_TYPE_JSONB && l->type == SQL_TYPE_UNKNOWN);
}

bool sql_json_op_name(const char *name)
{
    return strcmp(name, "->") == 0 || strcmp(name, "->>") == 0 ||
           strcmp(name, "#>") == 0 || strcmp(name, "#>>") == 0 ||
           strcmp(name, "@>") == 0 || strcmp(name, "<@") == 0 ||
           strcmp(name, "?") == 0;
}

keel_status sql_json_op(sql_session *s, const char *name, sql_expr *l,
                        sql_expr *r, int32_t location, sql_expr **out)
{
    sql_expr *e;
    sql_func f;
    uint32_t type;
    keel_status rc = KEEL_OK;

    if (strcmp(name, "||") == 0) {
        /* jsonb || jsonb */
        if (l->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &l, SQL_TYPE_JSONB);
        if (rc == KEEL_OK && r->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &r, SQL_TYPE_JSONB);
        if (rc != KEEL_OK)
            return rc;
        f = SQL_FUNC_JSONB_CONCAT;
        type = SQL_TYPE_JSONB;
        goto make;
    }
    if (strcmp(name, "-") == 0) {
        /* jsonb - key, jsonb - element's number */
        if (r->type == SQL_TYPE_UNKNOWN || sql_type_is_string(r->type))
            rc = sql_expr_coerce(s, &r, SQL_TYPE_TEXT);
        else if (r->type == SQL_TYPE_INT2 || r->type == SQL_TYPE_INT8)
            rc = sql_expr_coerce(s, &r, SQL_TYPE_INT4);
        if (rc != KEEL_OK)
            return rc;
        if (r->type != SQL_TYPE_TEXT && r->type != SQL_TYPE_INT4)
            return no_op(s, location, name, l, r);
        f = SQL_FUNC_JSONB_DELETE;
        type = SQL_TYPE_JSONB;
        goto make;
    }
    if (l->type == SQL_TYPE_UNKNOWN) {
        /* json's and jsonb's alike: PostgreSQL cannot choose */
        rc = sql_fail_at(s, location, KEEL_ETYPE, "42725",
                         "operator is not unique: %s %s %s",
                         sql_type_name(l->type), name, sql_type_name(r->type));
        if (s->err != NULL)
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Could not choose a best candidate operator. You might "
                     "need to add explicit type casts.");
        return rc;
    }
    if (name[0] == '-' || name[0] == '#') {
        bool text = name[strlen(name) - 1] == '>' && strlen(name) == 3;
        if (!is_json(l->type))
            return no_op(s, location, name, l, r);
        if (name[0] == '-') {
            /* a key (text) or an element's number (integer) */
            if (r->type == SQL_TYPE_UNKNOWN)
                rc = sql_expr_coerce(s, &r, SQL_TYPE_TEXT);
            else if (r->type == SQL_TYPE_INT2 || r->type == SQL_TYPE_INT8)
                rc = sql_expr_coerce(s, &r, SQL_TYPE_INT4);
            else if (sql_type_is_string(r->type) && r->type != SQL_TYPE_TEXT)
                rc = sql_expr_coerce(s, &r, SQL_TYPE_TEXT);
            if (rc == KEEL_OK && r->type != SQL_TYPE_TEXT &&
                r->type != SQL_TYPE_INT4)
                return no_op(s, location, name, l, r);
        } else {
            if (r->type == SQL_TYPE_UNKNOWN)
                rc = sql_expr_coerce(s, &r, SQL_TYPE_TEXT_ARRAY);
            if (rc == KEEL_OK && r->type != SQL_TYPE_TEXT_ARRAY)
                return no_op(s, location, name, l, r);
        }
        if (rc != KEEL_OK)
            return rc;
        f = name[0] == '-' ? (text ? SQL_FUNC_JSON_GET_TEXT : SQL_FUNC_JSON_GET)
                           : (text ? SQL_FUNC_JSON_PATH_TEXT
                                   : SQL_FUNC_JSON_PATH);
        type = text ? SQL_TYPE_TEXT : l->type;
    } else if (name[0] == '?') {
        if (l->type != SQL_TYPE_JSONB)
            return no_op(s, location, name, l, r);
        if (r->type != SQL_TYPE_TEXT)
            rc = sql_type_is_string(r->type)
                     ? sql_expr_coerce(s, &r, SQL_TYPE_TEXT)
                     : no_op(s, location, name, l, r);
        if (rc != KEEL_OK)
            return rc;
        f = SQL_FUNC_JSONB_EXISTS;
        type = SQL_TYPE_BOOL;
    } else {
        /* @> and <@, of two jsonb */
        if (l->type == SQL_TYPE_UNKNOWN && r->type == SQL_TYPE_JSONB)
            rc = sql_expr_coerce(s, &l, SQL_TYPE_JSONB);
        if (r->type == SQL_TYPE_UNKNOWN && l->type == SQL_TYPE_JSONB)
            rc = sql_expr_coerce(s, &r, SQL_TYPE_JSONB);
        if (rc != KEEL_OK)
            return rc;
        if (l->type != SQL_TYPE_JSONB || r->type != SQL_TYPE_JSONB)
            return no_op(s, location, name, l, r);
        if (name[0] == '<') {
            sql_expr *t = l;
            l = r;
            r = t;
        }
        f = SQL_FUNC_JSONB_CONTAINS;
        type = SQL_TYPE_BOOL;
    }
make:
    e = func_new(s, f, type, location, 2);
    if (e == NULL)
        return nomem(s);
    e->args[0] = l;
    e->args[1] = r;
    *out = e;
    return KEEL_OK;
}

static const struct {
    const char *name;
    sql_func func;
    uint32_t type;
} jfuncs[] = {
    {"json_typeof", SQL_FUNC_JSON_TYPEOF, SQL_TYPE_JSON},
    {"jsonb_typeof", SQL_FUNC_JSON_TYPEOF, SQL_TYPE_JSONB},
    {"json_array_length", SQL_FUNC_JSON_ARRAY_LENGTH, SQL_TYPE_JSON},
    {"jsonb_array_length", SQL_FUNC_JSON_ARRAY_LENGTH, SQL_TYPE_JSONB},
    {"json_build_object", SQL_FUNC_JSON_BUILD_OBJECT, SQL_TYPE_JSON},
    {"jsonb_build_object", SQL_FUNC_JSON_BUILD_OBJECT, SQL_TYPE_JSONB},
    {"json_build_array", SQL_FUNC_JSON_BUILD_ARRAY, SQL_TYPE_JSON},
    {"jsonb_build_array", SQL_FUNC_JSON_BUILD_ARRAY, SQL_TYPE_JSONB},
    {"jsonb_set", SQL_FUNC_JSONB_SET, SQL_TYPE_JSONB},
    {"jsonb_strip_nulls", SQL_FUNC_JSONB_STRIP_NULLS, SQL_TYPE_JSONB},
    {"to_json", SQL_FUNC_TO_JSON, SQL_TYPE_JSON},
    {"to_jsonb", SQL_FUNC_TO_JSON, SQL_TYPE_JSONB},
};

keel_status sql_json_func(sql_session *s, const sql_scope *scope,
                          const PgQuery__FuncCall *fc, const char *name,
                          sql_expr **out, bool *handled)
{
    size_t k = 0;
    sql_expr *e;
    keel_status rc = KEEL_OK;
    uint32_t jt;

    *handled = false;
    while (k < sizeof(jfuncs) / sizeof(jfuncs[0]) &&
           strcmp(jfuncs[k].name, name) != 0)
        k++;
    if (k == sizeof(jfuncs) / sizeof(jfuncs[0]))
        return KEEL_OK;
    *handled = true;
    jt = jfuncs[k].type;
    e = func_new(s, jfuncs[k].func, jt, fc->location, (uint16_t)fc->n_args);
    if (e == NULL)
        return nomem(s);
    for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++) {
        rc = sql_expr_analyse(s, scope, fc->args[i], &e->args[i]);
        /* an untyped literal is text, as PostgreSQL's "any" takes it */
        if (rc == KEEL_OK && e->args[i]->type == SQL_TYPE_UNKNOWN &&
            (e->u.func == SQL_FUNC_JSON_BUILD_OBJECT ||
             e->u.func == SQL_FUNC_JSON_BUILD_ARRAY ||
             e->u.func == SQL_FUNC_TO_JSON))
            rc = sql_expr_coerce(s, &e->args[i], SQL_TYPE_TEXT);
    }
    if (rc != KEEL_OK)
        return rc;
    switch (e->u.func) {
    case SQL_FUNC_JSON_TYPEOF:
    case SQL_FUNC_JSON_ARRAY_LENGTH:
        if (e->nargs != 1)
            return sql_no_such_function(s, fc->location, name, e);
        if (e->args[0]->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &e->args[0], jt);
        if (rc != KEEL_OK)
            return rc;
        if (e->args[0]->type != jt)
            return sql_no_such_function(s, fc->location, name, e);
        e->type = e->u.func == SQL_FUNC_JSON_TYPEOF ? SQL_TYPE_TEXT
                                                    : SQL_TYPE_INT4;
        break;
    case SQL_FUNC_TO_JSON:
        if (e->nargs != 1)
            return sql_no_such_function(s, fc->location, name, e);
        break;
    case SQL_FUNC_JSONB_STRIP_NULLS:
        if (e->nargs == 1 && e->args[0]->type == SQL_TYPE_UNKNOWN)
            rc = sql_expr_coerce(s, &e->args[0], SQL_TYPE_JSONB);
        if (e->nargs != 1 || e->args[0]->type != SQL_TYPE_JSONB)
            return sql_no_such_function(s, fc->location, name, e);
        break;
    case SQL_FUNC_JSONB_SET:
        /* jsonb_set(target, path text[], new jsonb [, create bool]) */
        if (e->nargs < 3 || e->nargs > 4)
            return sql_no_such_function(s, fc->location, name, e);
        for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++) {
            uint32_t want = i == 1   ? SQL_TYPE_TEXT_ARRAY
                            : i == 3 ? SQL_TYPE_BOOL
                                     : SQL_TYPE_JSONB;
            if (e->args[i]->type == SQL_TYPE_UNKNOWN)
                rc = sql_expr_coerce(s, &e->args[i], want);
            if (rc == KEEL_OK && e->args[i]->type != want)
                return sql_no_such_function(s, fc->location, name, e);
        }
        break;
    case SQL_FUNC_JSON_BUILD_OBJECT:
        if (e->nargs % 2 != 0) {
            rc = sql_fail(s, KEEL_EINVAL, "22023",
                          "argument list must have even number of elements");
            if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "The arguments of %s() must consist of alternating "
                         "keys and values.",
                         name);
            return rc;
        }
        break;
    default:
        break;
    }
    if (rc != KEEL_OK) /* an argument that its type cannot read */
        return rc;
    *out = e;
    return KEEL_OK;
}

/* x's tree: a json or jsonb value parsed (its strings unescaped). */
static keel_status tree_of(sql_session *s, const sql_value *x, sql_json **j)
{
    return sql_json_parse(s, x->v.s.p, x->v.s.len,
                          x->type == SQL_TYPE_JSONB ? SQL_JSON_JSONB
                                                    : SQL_JSON_DECODE,
                          -1, j);
}

/* Element i of array j, counting from the end when negative; NULL
 * past either end.  A jsonb scalar at the top (root) is an array of
 * itself alone, as PostgreSQL stores one. */
static const sql_json *element(const sql_json *j, int64_t i, bool root)
{
    if (root && j->kind != SQL_JSON_ARRAY && j->kind != SQL_JSON_OBJECT)
        return i == 0 || i == -1 ? j : NULL;
    if (j->kind != SQL_JSON_ARRAY)
        return NULL;
    if (i < 0)
        i += j->n;
    return i >= 0 && i < (int64_t)j->n ? j->kids[i] : NULL;
}

/* j as a value of e's result: ->'s json (its own text) or jsonb, or
 * ->>'s text (a string's own characters; NULL for a JSON null). */
static keel_status result_of(sql_session *s, const sql_expr *e,
                             uint32_t from, const sql_json *j, sql_value *out)
{
    sql_json_buf b = {0};
    keel_status rc;

    if (j == NULL || (e->type == SQL_TYPE_TEXT && j->kind == SQL_JSON_NULL)) {
        out->isnull = true;
        return KEEL_OK;
    }
    if (e->type == SQL_TYPE_TEXT && j->kind == SQL_JSON_STRING) {
        out->v.s.p = j->str;
        out->v.s.len = j->len;
        return KEEL_OK;
    }
    if (from == SQL_TYPE_JSON) {
        out->v.s.p = j->src;
        out->v.s.len = j->srclen;
        return KEEL_OK;
    }
    rc = sql_json_write(s, &b, j);
    out->v.s.p = b.p != NULL ? b.p : "";
    out->v.s.len = (uint32_t)b.len;
    return rc;
}

static keel_status eval_build(sql_session *s, const sql_expr *e,
                              const sql_value *a, sql_value *out)
{
    bool object = e->u.func == SQL_FUNC_JSON_BUILD_OBJECT;
    sql_json_buf b = {0};
    keel_status rc = sql_json_buf_add(s, &b, object ? "{" : "[", 1);

    for (uint16_t i = 0; rc == KEEL_OK && i < e->nargs; i++) {
        if (i > 0)
            rc = object && i % 2 == 1 ? sql_json_buf_add(s, &b, " : ", 3)
                                      : sql_json_buf_add(s, &b, ", ", 2);
        if (rc != KEEL_OK)
            break;
        if (object && i % 2 == 0) {
            /* a key: its text, quoted */
            const char *p;
            uint32_t n;
            if (a[i].isnull) {
                rc = sql_fail(s, KEEL_EINVAL, "22004",
                              "argument %u cannot be null", i + 1u);
                if (s->err != NULL)
                    snprintf(s->err->hint, sizeof(s->err->hint),
                             "Object keys should be text.");
                return rc;
            }
            rc = sql_value_text(s, &a[i], &p, &n);
            if (rc == KEEL_OK)
                rc = sql_json_quote(s, &b, p, n);
        } else {
            rc = sql_json_from_value(s, &a[i], &b);
        }
    }
    if (rc == KEEL_OK)
        rc = sql_json_buf_add(s, &b, object ? "}" : "]", 1);
    if (rc != KEEL_OK)
        return rc;
    return buf_value(s, &b, e->type, out);
}

/* Copies n kid pointers (none: src may be NULL). */
static void kids_copy(sql_json **dst, sql_json *const *src, uint32_t n)
{
    if (n > 0)
        memcpy(dst, src, n * sizeof(*dst));
}

/* A new container node of kind for n kids (pairs: 2n). */
static sql_json *container(sql_session *s, sql_json_kind kind, uint32_t n)
{
    sql_json *j = sql_alloc(&s->arena, sizeof(*j));
    uint32_t k = kind == SQL_JSON_OBJECT ? 2 * n : n;

    if (j == NULL)
        return NULL;
    memset(j, 0, sizeof(*j));
    j->kind = kind;
    j->n = n;
    j->kids = sql_alloc(&s->arena, (k + 1u) * sizeof(*j->kids));
    return j->kids == NULL ? NULL : j;
}

/* x || y as PostgreSQL's jsonb_concat: two objects merged (y's keys
 * win), else both as arrays (a scalar or object as an array of
 * itself) one after the other. */
static sql_json *concat(sql_session *s, const sql_json *x, const sql_json *y)
{
    sql_json *j;
    uint32_t xn, yn;

    if (x->kind == SQL_JSON_OBJECT && y->kind == SQL_JSON_OBJECT) {
        /* canonical once written and read again: y's come later */
        j = container(s, SQL_JSON_OBJECT, x->n + y->n);
        if (j != NULL) {
            kids_copy(j->kids, x->kids, 2 * x->n);
            kids_copy(j->kids + 2 * x->n, y->kids, 2 * y->n);
        }
        return j;
    }
    xn = x->kind == SQL_JSON_ARRAY ? x->n : 1;
    yn = y->kind == SQL_JSON_ARRAY ? y->n : 1;
    j = container(s, SQL_JSON_ARRAY, xn + yn);
    if (j == NULL)
        return NULL;
    if (x->kind == SQL_JSON_ARRAY)
        kids_copy(j->kids, x->kids, xn);
    else
        j->kids[0] = (sql_json *)x;
    if (y->kind == SQL_JSON_ARRAY)
        kids_copy(j->kids + xn, y->kids, yn);
    else
        j->kids[xn] = (sql_json *)y;
    return j;
}

/* j without its object fields that are null, at every depth. */
static sql_json *strip_nulls(sql_session *s, const sql_json *j)
{
    sql_json *c;
    uint32_t n = 0;

    if (j->kind != SQL_JSON_OBJECT && j->kind != SQL_JSON_ARRAY)
        return (sql_json *)j;
    c = container(s, j->kind, j->n);
    if (c == NULL)
        return NULL;
    for (uint32_t i = 0; i < j->n; i++) {
        if (j->kind == SQL_JSON_ARRAY) {
            if ((c->kids[n++] = strip_nulls(s, j->kids[i])) == NULL)
                return NULL;
            continue;
        }
        if (j->kids[2 * i + 1]->kind == SQL_JSON_NULL)
            continue;
        c->kids[2 * n] = j->kids[2 * i];
        if ((c->kids[2 * n + 1] = strip_nulls(s, j->kids[2 * i + 1])) == NULL)
            return NULL;
        n++;
    }
    c->n = n;
    return c;
}

/* jsonb_set()'s walk: a copy of j with path[at..n) set to v (added at
 * the last step when create and it is missing); j itself where the path
 * leads nowhere. */
static keel_status set_path(sql_session *s, const sql_json *j,
                            const char *const *path, const uint32_t *plen,
                            uint32_t at, uint32_t n, const sql_json *v,
                            bool create, sql_json **out)
{
    sql_json *c;
    keel_status rc;

    *out = (sql_json *)j;
    if (at == n)
        return KEEL_OK;
    if (j->kind == SQL_JSON_OBJECT) {
        uint32_t i = 0;
        while (i < j->n && !(j->kids[2 * i]->len == plen[at] &&
                             memcmp(j->kids[2 * i]->str, path[at], plen[at]) == 0))
            i++;
        if (i == j->n && !(create && at + 1 == n))
            return KEEL_OK;
        c = container(s, SQL_JSON_OBJECT, j->n + (i == j->n));
        if (c == NULL)
            return nomem(s);
        kids_copy(c->kids, j->kids, 2 * j->n);
        if (i == j->n) {
            sql_json *k = sql_alloc(&s->arena, sizeof(*k));
            if (k == NULL)
                return nomem(s);
            memset(k, 0, sizeof(*k));
            k->kind = SQL_JSON_STRING;
            k->str = path[at];
            k->len = plen[at];
            c->kids[2 * i] = k;
            c->kids[2 * i + 1] = (sql_json *)v;
            *out = c;
            return KEEL_OK;
        }
        rc = set_path(s, j->kids[2 * i + 1], path, plen, at + 1, n, v, create,
                      &c->kids[2 * i + 1]);
        if (at + 1 == n)
            c->kids[2 * i + 1] = (sql_json *)v;
        *out = c;
        return rc;
    }
    if (j->kind == SQL_JSON_ARRAY) {
        char num[24];
        char *end;
        long long idx;
        if (plen[at] == 0 || plen[at] >= sizeof(num))
            idx = 0, end = num, num[0] = 'x';
        else {
            memcpy(num, path[at], plen[at]);
            num[plen[at]] = '\0';
            idx = strtoll(num, &end, 10);
        }
        if (*end != '\0') {
            keel_status e = sql_fail(s, KEEL_EINVAL, "22P02",
                                     "path element at position %u is not an "
                                     "integer: \"%.*s\"",
                                     at + 1, (int)plen[at], path[at]);
            return e;
        }
        if (idx < 0)
            idx += j->n;
        if (idx >= 0 && idx < (long long)j->n) {
            c = container(s, SQL_JSON_ARRAY, j->n);
            if (c == NULL)
                return nomem(s);
            kids_copy(c->kids, j->kids, j->n);
            if (at + 1 == n)
                c->kids[idx] = (sql_json *)v;
            else
                rc = set_path(s, j->kids[idx], path, plen, at + 1, n, v,
                              create, &c->kids[idx]);
            *out = c;
            return at + 1 == n ? KEEL_OK : rc;
        }
        if (!(create && at + 1 == n))
            return KEEL_OK;
        /* past the start: first; past the end: last */
        c = container(s, SQL_JSON_ARRAY, j->n + 1);
        if (c == NULL)
            return nomem(s);
        if (idx < 0) {
            c->kids[0] = (sql_json *)v;
            kids_copy(c->kids + 1, j->kids, j->n);
        } else {
            kids_copy(c->kids, j->kids, j->n);
            c->kids[j->n] = (sql_json *)v;
        }
        *out = c;
        return KEEL_OK;
    }
    return KEEL_OK;
}

/* ||, -, jsonb_set() and jsonb_strip_nulls(): a new jsonb, canonical. */
static keel_status eval_change(sql_session *s, const sql_expr *e,
                               const sql_value *a, sql_value *out)
{
    sql_json *x, *y = NULL, *r = NULL;
    sql_json_buf b = {0};
    keel_status rc = tree_of(s, &a[0], &x);
    bool scalar;

    if (rc != KEEL_OK)
        return rc;
    scalar = x->kind != SQL_JSON_ARRAY && x->kind != SQL_JSON_OBJECT;
    switch (e->u.func) {
    case SQL_FUNC_JSONB_CONCAT:
        rc = tree_of(s, &a[1], &y);
        if (rc == KEEL_OK && (r = concat(s, x, y)) == NULL)
            rc = nomem(s);
        break;
    case SQL_FUNC_JSONB_STRIP_NULLS:
        if ((r = strip_nulls(s, x)) == NULL)
            rc = nomem(s);
        break;
    case SQL_FUNC_JSONB_DELETE:
        if (scalar)
            return sql_fail(s, KEEL_EINVAL, "22023", "cannot delete from scalar");
        if (a[1].type == SQL_TYPE_INT4 && x->kind == SQL_JSON_OBJECT)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "cannot delete from object using integer index");
        r = container(s, x->kind, x->n);
        if (r == NULL)
            return nomem(s);
        r->n = 0;
        for (uint32_t i = 0; i < x->n; i++) {
            int64_t idx = a[1].v.i < 0 ? a[1].v.i + x->n : a[1].v.i;
            const sql_json *k = x->kind == SQL_JSON_OBJECT ? x->kids[2 * i]
                                                           : x->kids[i];
            bool drop = a[1].type == SQL_TYPE_INT4
                            ? (int64_t)i == idx
                            : k->kind == SQL_JSON_STRING &&
                                  k->len == a[1].v.s.len &&
                                  memcmp(k->str, a[1].v.s.p, k->len) == 0;
            if (drop)
                continue;
            if (x->kind == SQL_JSON_OBJECT) {
                r->kids[2 * r->n] = x->kids[2 * i];
                r->kids[2 * r->n + 1] = x->kids[2 * i + 1];
            } else {
                r->kids[r->n] = x->kids[i];
            }
            r->n++;
        }
        break;
    default: { /* SQL_FUNC_JSONB_SET */
        const char *path[64];
        uint32_t plen[64], n = 0, pos = 0, elen;
        const char *el;
        bool isnull, create = e->nargs < 4 || a[3].v.b;
        if (scalar)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "cannot set path in scalar");
        while (sql_array_next(s, a[1].v.s.p, a[1].v.s.len, &pos, &el, &elen,
                              &isnull)) {
            if (isnull)
                return sql_fail(s, KEEL_EINVAL, "22004",
                                "path element at position %u is null", n + 1);
            if (n == 64)
                return sql_unsupported(s, -1, "paths of more than 64 steps");
            path[n] = el;
            plen[n++] = elen;
        }
        rc = tree_of(s, &a[2], &y);
        if (rc == KEEL_OK)
            rc = set_path(s, x, path, plen, 0, n, y, create, &r);
        break;
    }
    }
    if (rc == KEEL_OK)
        rc = sql_json_write(s, &b, r);
    if (rc != KEEL_OK)
        return rc;
    return sql_json_in(s, b.p, (uint32_t)b.len, SQL_TYPE_JSONB, -1, out);
}

keel_status sql_json_eval(sql_session *s, const sql_expr *e,
                          const sql_value *row, sql_value *out)
{
    sql_value stack[8], *a = stack;
    sql_json *j, *k;
    keel_status rc = KEEL_OK;
    bool strict = e->u.func != SQL_FUNC_JSON_BUILD_OBJECT &&
                  e->u.func != SQL_FUNC_JSON_BUILD_ARRAY;

    out->type = e->type;
    out->isnull = false;
    if (e->nargs > 8 && (a = sql_alloc(&s->arena, e->nargs * sizeof(*a))) == NULL)
        return nomem(s);
    for (uint16_t i = 0; i < e->nargs; i++) {
        rc = sql_expr_eval(s, e->args[i], row, &a[i]);
        if (rc != KEEL_OK)
            return rc;
        if (a[i].isnull && strict) {
            out->isnull = true;
            return KEEL_OK;
        }
    }
    switch (e->u.func) {
    case SQL_FUNC_JSON_BUILD_OBJECT:
    case SQL_FUNC_JSON_BUILD_ARRAY:
        return eval_build(s, e, a, out);
    case SQL_FUNC_JSONB_CONCAT:
    case SQL_FUNC_JSONB_DELETE:
    case SQL_FUNC_JSONB_SET:
    case SQL_FUNC_JSONB_STRIP_NULLS:
        return eval_change(s, e, a, out);
    case SQL_FUNC_TO_JSON: {
        sql_json_buf b = {0};
        rc = sql_json_from_value(s, &a[0], &b);
        return rc == KEEL_OK ? buf_value(s, &b, e->type, out) : rc;
    }
    default:
        break;
    }
    rc = tree_of(s, &a[0], &j);
    if (rc != KEEL_OK)
        return rc;
    switch (e->u.func) {
    case SQL_FUNC_JSON_GET:
    case SQL_FUNC_JSON_GET_TEXT:
        if (a[1].type == SQL_TYPE_INT4)
            return result_of(s, e, a[0].type,
                             element(j, a[1].v.i, a[0].type == SQL_TYPE_JSONB),
                             out);
        return result_of(s, e, a[0].type,
                         sql_json_get(j, a[1].v.s.p, a[1].v.s.len), out);
    case SQL_FUNC_JSON_PATH:
    case SQL_FUNC_JSON_PATH_TEXT: {
        /* each step a key, or in an array an element's number */
        const sql_json *at = j;
        uint32_t pos = 0, elen;
        const char *el;
        bool isnull;
        while (at != NULL && sql_array_next(s, a[1].v.s.p, a[1].v.s.len, &pos,
                                            &el, &elen, &isnull)) {
            if (isnull) {
                at = NULL;
            } else if (at->kind == SQL_JSON_OBJECT) {
                at = sql_json_get(at, el, elen);
            } else if (at->kind == SQL_JSON_ARRAY) {
                char num[24];
                char *end;
                long long i;
                if (elen == 0 || elen >= sizeof(num)) {
                    at = NULL;
                    break;
                }
                memcpy(num, el, elen);
                num[elen] = '\0';
                i = strtoll(num, &end, 10);
                at = *end == '\0' ? element(at, i, false) : NULL;
            } else {
                at = NULL;
            }
        }
        return result_of(s, e, a[0].type, at, out);
    }
    case SQL_FUNC_JSONB_CONTAINS:
        rc = tree_of(s, &a[1], &k);
        if (rc == KEEL_OK)
            out->v.b = sql_json_contains(j, k);
        return rc;
    case SQL_FUNC_JSONB_EXISTS:
        out->v.b = sql_json_exists(j, a[1].v.s.p, a[1].v.s.len);
        return KEEL_OK;
    case SQL_FUNC_JSON_TYPEOF: {
        static const char *const names[] = {
            [SQL_JSON_NULL] = "null",     [SQL_JSON_STRING] = "string",
            [SQL_JSON_NUMBER] = "number", [SQL_JSON_BOOL] = "boolean",
            [SQL_JSON_ARRAY] = "array",   [SQL_JSON_OBJECT] = "object"};
        out->v.s.p = names[j->kind];
        out->v.s.len = (uint32_t)strlen(names[j->kind]);
        return KEEL_OK;
    }
    case SQL_FUNC_JSON_ARRAY_LENGTH:
        if (j->kind != SQL_JSON_ARRAY)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "cannot get array length of a %s",
                            j->kind == SQL_JSON_OBJECT ? "non-array"
                                                       : "scalar");
        out->v.i = j->n;
        return KEEL_OK;
    default:
        return sql_fail(s, KEEL_EINVAL, "XX000", "unknown json function");
    }
}

/* ---- set-returning functions in FROM ------------------------------------- */

typedef struct json_srf {
    const char *name;
    uint32_t type;    /* the argument's: json or jsonb */
    bool each;        /* key and value columns, of an object */
    bool keys;        /* the keys alone */
    bool text;        /* values as text */
} json_srf;

static const json_srf srfs[] = {
    {"json_array_elements", SQL_TYPE_JSON, false, false, false},
    {"jsonb_array_elements", SQL_TYPE_JSONB, false, false, false},
    {"json_array_elements_text", SQL_TYPE_JSON, false, false, true},
    {"jsonb_array_elements_text", SQL_TYPE_JSONB, false, false, true},
    {"json_each", SQL_TYPE_JSON, true, false, false},
    {"jsonb_each", SQL_TYPE_JSONB, true, false, false},
    {"json_each_text", SQL_TYPE_JSON, true, false, true},
    {"jsonb_each_text", SQL_TYPE_JSONB, true, false, true},
    {"json_object_keys", SQL_TYPE_JSON, false, true, true},
    {"jsonb_object_keys", SQL_TYPE_JSONB, false, true, true},
};

int sql_json_srf(const char *name)
{
    for (size_t i = 0; i < sizeof(srfs) / sizeof(srfs[0]); i++)
        if (strcmp(srfs[i].name, name) == 0)
            return (int)i + 1;
    return 0;
}

keel_status sql_json_srf_columns(sql_session *s, int srf, sql_expr **arg,
                                 int32_t location, const char *alias,
                                 sql_rowset *rs)
{
    const json_srf *f = &srfs[srf - 1];
    uint16_t n = f->each ? 2 : 1;
    keel_status rc = KEEL_OK;

    if ((*arg)->type == SQL_TYPE_UNKNOWN)
        rc = sql_expr_coerce(s, arg, f->type);
    if (rc != KEEL_OK)
        return rc;
    if ((*arg)->type != f->type) {
        rc = sql_fail_at(s, location, KEEL_ETYPE, "42883",
                         "function %s(%s) does not exist", f->name,
                         sql_type_name((*arg)->type));
        if (s->err != NULL)
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "No function matches the given name and argument "
                     "types. You might need to add explicit type casts.");
        return rc;
    }
    rs->ncols = n;
    rs->cols = sql_alloc(&s->arena, n * sizeof(*rs->cols));
    rs->types = sql_alloc(&s->arena, n * sizeof(uint32_t));
    if (rs->cols == NULL || rs->types == NULL)
        return nomem(s);
    memset(rs->cols, 0, n * sizeof(*rs->cols));
    for (uint16_t c = 0; c < n; c++) {
        /* PostgreSQL's output columns: key and value; a function of one
         * unnamed column is named after its alias */
        bool key = f->each && c == 0;
        const char *name = key ? "key" : f->keys ? alias : "value";
        snprintf(rs->cols[c].name, sizeof(rs->cols[c].name), "%s", name);
        rs->cols[c].type = KEEL_TEXT;
        rs->types[c] = key || f->text ? SQL_TYPE_TEXT : f->type;
    }
    rs->col_table = NULL;
    return KEEL_OK;
}

/* A value of an element or pair as the function gives it: its json or
 * jsonb, or as text (a string's characters, NULL for null). */
static keel_status srf_value(sql_session *s, int srf, const sql_json *j,
                             sql_value *out)
{
    sql_expr e = {.type = srfs[srf - 1].text ? SQL_TYPE_TEXT
                                             : srfs[srf - 1].type};

    out->type = e.type;
    out->isnull = false;
    return result_of(s, &e, srfs[srf - 1].type, j, out);
}

keel_status sql_json_srf_rows(sql_session *s, int srf, const sql_value *arg,
                              sql_rowset *rs)
{
    const json_srf *f = &srfs[srf - 1];
    sql_json *j;
    keel_status rc;

    if (arg->isnull)
        return KEEL_OK;
    rc = tree_of(s, arg, &j);
    if (rc != KEEL_OK)
        return rc;
    if (f->each || f->keys) {
        if (j->kind != SQL_JSON_OBJECT && f->each && f->type == SQL_TYPE_JSON)
            return sql_fail(s, KEEL_EINVAL, "22023", "%s",
                            j->kind == SQL_JSON_ARRAY
                                ? "cannot deconstruct an array as an object"
                                : "cannot deconstruct a scalar");
        if (j->kind != SQL_JSON_OBJECT)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            f->keys ? "cannot call %s on %s"
                                    : "cannot call %s on a non-object",
                            f->name,
                            j->kind == SQL_JSON_ARRAY ? "an array"
                                                      : "a scalar");
        for (uint32_t i = 0; i < j->n; i++) {
            const sql_json *k = j->kids[2 * i];
            sql_value row[2] = {{.type = SQL_TYPE_TEXT,
                                 .v.s = {k->str, k->len}}};
            rc = sql_check_cancel(s);
            if (rc == KEEL_OK && f->each)
                rc = srf_value(s, srf, j->kids[2 * i + 1], &row[1]);
            if (rc == KEEL_OK)
                rc = sql_rowset_add(s, rs, row);
            if (rc != KEEL_OK)
                return rc;
        }
        return KEEL_OK;
    }
    if (j->kind != SQL_JSON_ARRAY)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "cannot extract elements from %s",
                        j->kind == SQL_JSON_OBJECT ? "an object" : "a scalar");
    for (uint32_t i = 0; i < j->n; i++) {
        sql_value v;
        rc = sql_check_cancel(s);
        if (rc == KEEL_OK)
            rc = srf_value(s, srf, j->kids[i], &v);
        if (rc == KEEL_OK)
            rc = sql_rowset_add(s, rs, &v);
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}
