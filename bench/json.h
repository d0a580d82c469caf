/*
 * json.h: reading back the JSON the benchmarks write: a small parser into
 * a tree of values, each remembering where its text lies in the source so
 * that a value can be copied out verbatim.
 *
 * Accepts RFC 8259 JSON; string escapes other than \uXXXX are decoded,
 * \uXXXX is kept as the six characters (benchmark output has none).
 */
#ifndef KEEL_BENCH_JSON_H
#define KEEL_BENCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum json_kind {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
} json_kind;

typedef struct json_value {
    json_kind kind;
    bool b;
    double num;
    char *str;                /* JSON_STRING: the decoded string */
    char *key;                /* a member of an object: its name */
    struct json_value *items; /* array elements, object members */
    size_t n;                 /* how many */
    size_t start, end;        /* its text: source[start, end) */
} json_value;

/* A parsed document: its source text and the root value. */
typedef struct json_doc {
    char *text;
    json_value root;
} json_doc;

/*
 * Reads and parses the file at path into *doc.  0, or -1 with a message
 * (naming the file, and the offset of a syntax error) in err.  Free with
 * json_doc_free() either way.
 */
int json_doc_read(const char *path, json_doc *doc, char *err, size_t errlen);

void json_doc_free(json_doc *doc);

/* The member `key` of an object, or NULL (also when v is NULL or not an
 * object). */
const json_value *json_get(const json_value *v, const char *key);

/* Element i of an array, or NULL. */
const json_value *json_at(const json_value *v, size_t i);

/* The number at v's member key, or NaN if it is absent or not a number. */
double json_num(const json_value *v, const char *key);

/* The string at v's member key, or NULL. */
const char *json_str(const json_value *v, const char *key);

/* Writes s as a JSON string: quoted, with '"', '\\' and control
 * characters escaped, and each byte that is not part of well-formed UTF-8
 * written as \u00XX of its value, so that the JSON stays valid whatever a
 * path holds. */
void json_write_string(FILE *f, const char *s);

/* Writes v's source text as it stands in doc. */
void json_write_verbatim(FILE *f, const json_doc *doc, const json_value *v);

#endif /* KEEL_BENCH_JSON_H */
