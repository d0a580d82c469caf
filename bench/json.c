/*
 * json.c: a recursive-descent JSON parser for the benchmarks' results.
 */
#include "json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

typedef struct json_parser {
    const char *s;
    size_t pos, len;
    char *err;
    size_t errlen;
    const char *path;
} json_parser;

static int json_fail(json_parser *p, const char *what)
{
    if (p->err[0] == '\0')
        snprintf(p->err, p->errlen, "%s: %s at offset %zu", p->path, what,
                 p->pos);
    return -1;
}

static void skip_ws(json_parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\n' ||
                               p->s[p->pos] == '\r' || p->s[p->pos] == '\t'))
        p->pos++;
}

static void value_free(json_value *v)
{
    for (size_t i = 0; i < v->n; i++)
        value_free(&v->items[i]);
    free(v->items);
    free(v->str);
    free(v->key);
    memset(v, 0, sizeof(*v));
}

/* Parses a string at p->pos (the opening quote) into a malloc'd copy. */
static int parse_string(json_parser *p, char **out)
{
    size_t cap = 16, n = 0;
    char *buf = malloc(cap);

    if (buf == NULL)
        return json_fail(p, "out of memory");
    p->pos++;
    while (p->pos < p->len && p->s[p->pos] != '"') {
        char c = p->s[p->pos++];
        if ((unsigned char)c < 0x20) {
            free(buf);
            return json_fail(p, "control character in a string");
        }
        if (c == '\\') {
            char e = p->pos < p->len ? p->s[p->pos++] : '\0';
            switch (e) {
            case 'n':
                c = '\n';
                break;
            case 't':
                c = '\t';
                break;
            case 'r':
                c = '\r';
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case '"':
            case '\\':
            case '/':
                c = e;
                break;
            case 'u':
                c = '\\';
                p->pos--;
                break; /* kept as written */
            default:
                free(buf);
                return json_fail(p, "bad escape in a string");
            }
        }
        if (n + 2 > cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                return json_fail(p, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        buf[n++] = c;
    }
    if (p->pos >= p->len) {
        free(buf);
        return json_fail(p, "unterminated string");
    }
    p->pos++;
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* The length of the JSON number at s (RFC 8259: -?(0|[1-9][0-9]*),
 * then .[0-9]+ and [eE][+-]?[0-9]+ if present), 0 if there is none: not
 * the nan, inf, hexadecimal or "+1" strtod() would also take. */
static size_t number_len(const char *s)
{
    size_t i = 0;

    if (s[i] == '-')
        i++;
    if (s[i] == '0')
        i++;
    else if (s[i] >= '1' && s[i] <= '9')
        while (isdigit((unsigned char)s[i]))
            i++;
    else
        return 0;
    if (s[i] == '.') {
        if (!isdigit((unsigned char)s[++i]))
            return 0;
        while (isdigit((unsigned char)s[i]))
            i++;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        if (!isdigit((unsigned char)s[i]))
            return 0;
        while (isdigit((unsigned char)s[i]))
            i++;
    }
    return i;
}

static int parse_value(json_parser *p, json_value *v, int depth);

/* Appends a zeroed element to v's items; NULL when memory is out. */
static json_value *items_push(json_value *v, size_t *cap)
{
    if (v->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        json_value *ni = realloc(v->items, nc * sizeof(*ni));
        if (ni == NULL)
            return NULL;
        v->items = ni;
        *cap = nc;
    }
    memset(&v->items[v->n], 0, sizeof(v->items[0]));
    return &v->items[v->n++];
}

static int parse_container(json_parser *p, json_value *v, int depth)
{
    bool object = p->s[p->pos] == '{';
    char close = object ? '}' : ']';
    size_t cap = 0;

    v->kind = object ? JSON_OBJECT : JSON_ARRAY;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        json_value *it = items_push(v, &cap);
        char *key = NULL;
        if (it == NULL)
            return json_fail(p, "out of memory");
        skip_ws(p);
        if (object) {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return json_fail(p, "expected a member name");
            if (parse_string(p, &key) != 0)
                return -1;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(key);
                return json_fail(p, "expected ':'");
            }
            p->pos++;
        }
        if (parse_value(p, it, depth + 1) != 0) {
            free(key);
            return -1;
        }
        it->key = key;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return 0;
        }
        return json_fail(p, object ? "expected ',' or '}'"
                                   : "expected ',' or ']'");
    }
}

static int parse_value(json_parser *p, json_value *v, int depth)
{
    int rc = 0;

    if (depth > JSON_MAX_DEPTH)
        return json_fail(p, "nested too deeply");
    skip_ws(p);
    if (p->pos >= p->len)
        return json_fail(p, "unexpected end");
    v->start = p->pos;
    switch (p->s[p->pos]) {
    case '{':
    case '[':
        rc = parse_container(p, v, depth);
        break;
    case '"':
        v->kind = JSON_STRING;
        rc = parse_string(p, &v->str);
        break;
    default:
        if (strncmp(p->s + p->pos, "true", 4) == 0) {
            v->kind = JSON_BOOL;
            v->b = true;
            p->pos += 4;
        } else if (strncmp(p->s + p->pos, "false", 5) == 0) {
            v->kind = JSON_BOOL;
            p->pos += 5;
        } else if (strncmp(p->s + p->pos, "null", 4) == 0) {
            v->kind = JSON_NULL;
            p->pos += 4;
        } else {
            size_t n = number_len(p->s + p->pos);
            char *end;
            errno = 0;
            v->kind = JSON_NUMBER;
            v->num = n > 0 ? strtod(p->s + p->pos, &end) : 0;
            if (n == 0 || end != p->s + p->pos + n || errno == ERANGE)
                return json_fail(p, "bad value");
            p->pos += n;
        }
    }
    v->end = p->pos;
    return rc;
}

int json_doc_read(const char *path, json_doc *doc, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    json_parser p;
    long len;

    memset(doc, 0, sizeof(*doc));
    err[0] = '\0';
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 ||
        (doc->text = malloc((size_t)len + 1)) == NULL ||
        fread(doc->text, 1, (size_t)len, f) != (size_t)len) {
        snprintf(err, errlen, "%s: cannot read it", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    doc->text[len] = '\0';
    memset(&p, 0, sizeof(p));
    p.s = doc->text;
    p.len = (size_t)len;
    p.err = err;
    p.errlen = errlen;
    p.path = path;
    if (parse_value(&p, &doc->root, 0) != 0)
        return -1;
    skip_ws(&p);
    if (p.pos != p.len)
        return json_fail(&p, "text after the value");
    return 0;
}

void json_doc_free(json_doc *doc)
{
    value_free(&doc->root);
    free(doc->text);
    memset(doc, 0, sizeof(*doc));
}

const json_value *json_get(const json_value *v, const char *key)
{
    if (v == NULL || v->kind != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->items[i].key, key) == 0)
            return &v->items[i];
    return NULL;
}

const json_value *json_at(const json_value *v, size_t i)
{
    if (v == NULL || v->kind != JSON_ARRAY || i >= v->n)
        return NULL;
    return &v->items[i];
}

double json_num(const json_value *v, const char *key)
{
    const json_value *m = json_get(v, key);
    return m != NULL && m->kind == JSON_NUMBER ? m->num : NAN;
}

const char *json_str(const json_value *v, const char *key)
{
    const json_value *m = json_get(v, key);
    return m != NULL && m->kind == JSON_STRING ? m->str : NULL;
}

void json_write_verbatim(FILE *f, const json_doc *doc, const json_value *v)
{
    fwrite(doc->text + v->start, 1, v->end - v->start, f);
}

/* The length of the well-formed UTF-8 sequence at s (1..4), or 0 if the
 * bytes there are not one (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF). */
static int utf8_len(const unsigned char *s)
{
    int n;
    unsigned min, cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2, min = 0x80, cp = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, min = 0x800, cp = s[0] & 0x0F;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, min = 0x10000, cp = s[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void json_write_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', f);
    while (*p != '\0') {
        unsigned char c = *p;
        int n = utf8_len(p);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c < 0x20 || n == 0)
            /* A control character, or a byte that is not UTF-8 (a path
             * may hold any): as the code point of its value. */
            fprintf(f, "\\u%04x", c);
        else
            fwrite(p, 1, (size_t)n, f);
        p += n > 0 ? n : 1;
    }
    fputc('"', f);
}
