/*
 * test_bench_json.c: the reader the report reads the benchmarks' JSON
 * with (bench/json.c), and the string writer they name paths with.  Valid
 * documents give their values; numbers outside RFC 8259's grammar (nan,
 * inf, hexadecimal, a leading + or 0, a bare point or exponent), which
 * strtod() alone would take, are refused with the offset, as are
 * truncated documents and missing files; a written string reads back as
 * it was, whatever it holds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "json.h"

/* Writes text to dir/name and reads it back: json_doc_read()'s result. */
static int read_text(const char *dir, const char *text, json_doc *doc,
                     char *err, size_t errlen)
{
    char path[4200];
    FILE *f;

    snprintf(path, sizeof(path), "%s/doc.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    return json_doc_read(path, doc, err, errlen);
}

static void test_values(void **state)
{
    char *dir = tu_mkdtemp();
    char err[256];
    json_doc doc;
    const json_value *b;

    (void)state;
    assert_int_equal(read_text(dir,
                               "{\"a\": -0.5e+3, \"b\": [1, 2.25, 0, 1E2], "
                               "\"c\": \"x\\\"y\\\\z\", \"d\": true, "
                               "\"e\": null, \"f\": {\"g\": -0}}\n",
                               &doc, err, sizeof(err)),
                     0);
    assert_true(json_num(&doc.root, "a") == -500.0);
    b = json_get(&doc.root, "b");
    assert_non_null(b);
    assert_int_equal(b->n, 4);
    assert_true(json_at(b, 1)->num == 2.25);
    assert_true(json_at(b, 3)->num == 100.0);
    assert_null(json_at(b, 4));
    assert_string_equal(json_str(&doc.root, "c"), "x\"y\\z");
    assert_true(json_get(&doc.root, "d")->b);
    assert_int_equal(json_get(&doc.root, "e")->kind, JSON_NULL);
    assert_true(json_num(json_get(&doc.root, "f"), "g") == 0.0);
    /* Absent or not a number: NaN. */
    assert_true(isnan(json_num(&doc.root, "zz")));
    assert_true(isnan(json_num(&doc.root, "c")));
    json_doc_free(&doc);
    tu_dir_remove(dir);
}

static void test_bad_numbers(void **state)
{
    static const char *const bad[] = {
        "nan", "-nan", "inf", "-inf", "infinity", "0x10", "+1",   "01",
        "-01", "1.",   ".5",  "1e",   "1e+",      "-",    "1.e3", "--1",
    };
    char *dir = tu_mkdtemp();
    char err[256], text[64];
    json_doc doc;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(text, sizeof(text), "{\"a\": %s}", bad[i]);
        assert_int_equal(read_text(dir, text, &doc, err, sizeof(err)), -1);
        if (strstr(err, "doc.json") == NULL) {
            fail_msg("'%s' refused without naming the file: %s", bad[i], err);
        }
        json_doc_free(&doc);
    }
    /* Truncated, and missing. */
    assert_int_equal(read_text(dir, "{\"a\": 1", &doc, err, sizeof(err)), -1);
    json_doc_free(&doc);
    {
        char path[4200];
        snprintf(path, sizeof(path), "%s/absent.json", dir);
        assert_int_equal(json_doc_read(path, &doc, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "absent.json"));
        json_doc_free(&doc);
    }
    tu_dir_remove(dir);
}

/* A written string reads back as it was: quotes, backslashes and
 * control characters escaped (\u0001 is kept as written, json.h), UTF-8
 * as it is, and bytes that are not UTF-8 (a stray continuation byte, a
 * truncated sequence, an overlong form, a surrogate) escaped, so the
 * document still parses. */
static void test_write_string(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"/tmp/a \"quoted\" \\ dir\n\twith\x01 controls",
         "/tmp/a \"quoted\" \\ dir\n\twith\\u0001 controls"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"a\x80"
         "b",
         "a\\u0080b"},
        {"\xc3", "\\u00c3"},
        {"\xc0\xaf", "\\u00c0\\u00af"},
        {"\xed\xa0\x80", "\\u00ed\\u00a0\\u0080"},
        {"\xff/x", "\\u00ff/x"},
    };
    char *dir = tu_mkdtemp();
    char path[4200], err[256];
    json_doc doc;
    FILE *f;

    (void)state;
    snprintf(path, sizeof(path), "%s/b.json", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("{\"s\": ", f);
        json_write_string(f, cases[i].in);
        fputs("}\n", f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(json_doc_read(path, &doc, err, sizeof(err)), 0);
        assert_string_equal(json_str(&doc.root, "s"), cases[i].out);
        json_doc_free(&doc);
    }
    tu_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_write_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
