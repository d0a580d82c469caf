/*
 * test_numeric.c: the decimal arithmetic of src/sql/sql_numeric.c on its
 * own: text in and out, every operator's result scale and rounding as
 * PostgreSQL 15 gives them (the expected strings are its output), huge
 * and tiny values, NaN, the errors, and the binary and stored forms.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_numeric.h"

/* Text into a numeric, which must parse. */
static numeric num(const char *text)
{
    numeric n = NUMERIC_INIT;

    assert_int_equal(numeric_in(text, strlen(text), &n), NUMERIC_OK);
    return n;
}

/* Asserts n's text is want, and frees n. */
static void expect_text(numeric *n, const char *want)
{
    size_t cap = numeric_out_len(n);
    char *buf = malloc(cap + 1);
    size_t len;

    assert_non_null(buf);
    len = numeric_out(n, buf);
    assert_true(len <= cap);
    buf[len] = '\0';
    assert_string_equal(buf, want);
    free(buf);
    numeric_free(n);
}

typedef numeric_status (*binop)(const numeric *, const numeric *, numeric *);

/* a op b must give want. */
static void expect_op(binop op, const char *a, const char *b, const char *want)
{
    numeric x = num(a), y = num(b), r = NUMERIC_INIT;

    assert_int_equal(op(&x, &y, &r), NUMERIC_OK);
    expect_text(&r, want);
    numeric_free(&x);
    numeric_free(&y);
}

static void expect_op_fails(binop op, const char *a, const char *b,
                            numeric_status want)
{
    numeric x = num(a), y = num(b), r = NUMERIC_INIT;

    assert_int_equal(op(&x, &y, &r), want);
    numeric_free(&r);
    numeric_free(&x);
    numeric_free(&y);
}

static void test_text(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"0", "0"},
        {"-0", "0"},
        {"0.00", "0.00"},
        {"1.50", "1.50"},
        {"  -12.340  ", "-12.340"},
        {"+.5", "0.5"},
        {"5.", "5"},
        {"007", "7"},
        {"1e3", "1000"},
        {"1.5E-3", "0.0015"},
        {"-2.5e+2", "-250"},
        {"1.23e1", "12.3"},
        {"12345678901234567890.000000000000000001",
         "12345678901234567890.000000000000000001"},
        {"0.00000001", "0.00000001"},
        {"10000", "10000"},
        {"99999999", "99999999"},
        {"NaN", "NaN"},
        {" nan ", "NaN"},
    };
    static const char *bad[] = {"",          " ",    "-",   ".",   "1.2.3",
                                "abc",       "1e",   "1e+", "- 1", "1 2",
                                "Infinityx", "0x10", "1,5", "++1"};
    numeric n = NUMERIC_INIT;
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        numeric v = num(cases[i].in);
        expect_text(&v, cases[i].out);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(numeric_in(bad[i], strlen(bad[i]), &n),
                         NUMERIC_ESYNTAX);
    /* PostgreSQL's Infinity, which keel lacks, is told apart. */
    assert_int_equal(numeric_in(" -Infinity", 10, &n), NUMERIC_EINFINITY);
    assert_int_equal(numeric_in("inf", 3, &n), NUMERIC_EINFINITY);
    /* Past PostgreSQL's limits: 131072 digits before the point, 16383
     * after. */
    assert_int_equal(numeric_in("1e131072", 8, &n), NUMERIC_EOVERFLOW);
    assert_int_equal(numeric_in("1e-16384", 8, &n), NUMERIC_EOVERFLOW);
    assert_int_equal(numeric_in("1e200000", 8, &n), NUMERIC_EOVERFLOW);
    numeric_free(&n);
}

static void test_huge_and_tiny(void **state)
{
    numeric big = num("9e131071"), tiny = num("1e-16383"), r = NUMERIC_INIT;
    size_t cap;
    char *buf;
    size_t len;
    (void)state;

    /* 131072 digits before the point. */
    cap = numeric_out_len(&big);
    buf = malloc(cap + 1);
    assert_non_null(buf);
    len = numeric_out(&big, buf);
    assert_int_equal(len, 131072);
    assert_int_equal(buf[0], '9');
    assert_int_equal(buf[len - 1], '0');
    free(buf);
    /* 16383 places. */
    cap = numeric_out_len(&tiny);
    buf = malloc(cap + 1);
    assert_non_null(buf);
    len = numeric_out(&tiny, buf);
    assert_int_equal(len, 16385);
    assert_memory_equal(buf, "0.000", 5);
    assert_int_equal(buf[len - 1], '1');
    free(buf);
    /* Ten times the largest is past the format. */
    {
        numeric ten = num("10");
        assert_int_equal(numeric_mul(&big, &ten, &r), NUMERIC_EOVERFLOW);
        numeric_free(&ten);
    }
    /* 1000 significant digits: (10^1000 - 1)^2 = 10^2000 - 2*10^1000 + 1 */
    {
        char *nines = malloc(1001);
        numeric a, sq = NUMERIC_INIT, back = NUMERIC_INIT;
        assert_non_null(nines);
        memset(nines, '9', 1000);
        nines[1000] = '\0';
        a = num(nines);
        assert_int_equal(numeric_mul(&a, &a, &sq), NUMERIC_OK);
        cap = numeric_out_len(&sq);
        buf = malloc(cap + 1);
        assert_non_null(buf);
        len = numeric_out(&sq, buf);
        assert_int_equal(len, 2000);
        for (size_t i = 0; i < 999; i++)
            assert_int_equal(buf[i], '9');
        assert_int_equal(buf[999], '8');
        for (size_t i = 1000; i < 1999; i++)
            assert_int_equal(buf[i], '0');
        assert_int_equal(buf[1999], '1');
        free(buf);
        /* and divided back, exactly */
        assert_int_equal(numeric_div_scale(&sq, &a, 0, true, &back),
                         NUMERIC_OK);
        assert_int_equal(numeric_cmp(&back, &a), 0);
        numeric_free(&back);
        numeric_free(&sq);
        numeric_free(&a);
        free(nines);
    }
    numeric_free(&big);
    numeric_free(&tiny);
    numeric_free(&r);
}

static void test_add_sub_mul(void **state)
{
    (void)state;
    /* The larger scale of the two. */
    expect_op(numeric_add, "1.25", "2.5", "3.75");
    expect_op(numeric_add, "1.50", "1", "2.50");
    expect_op(numeric_add, "0.000001234", "1000", "1000.000001234");
    expect_op(numeric_add, "-1.5", "1.5", "0.0");
    expect_op(numeric_add, "9999.9999", "0.0001", "10000.0000");
    expect_op(numeric_add, "-9999", "-1", "-10000");
    expect_op(numeric_sub, "1.25", "2.5", "-1.25");
    expect_op(numeric_sub, "10000", "0.0001", "9999.9999");
    expect_op(numeric_sub, "-3", "-5", "2");
    /* The sum of the scales. */
    expect_op(numeric_mul, "1.25", "2.5", "3.125");
    expect_op(numeric_mul, "0.5", "4", "2.0");
    expect_op(numeric_mul, "-1.10", "1.10", "-1.2100");
    expect_op(numeric_mul, "123456789012345678901234567890", "987654321",
              "121932631124828532112482853211126352690");
    expect_op(numeric_mul, "0", "-5.5", "0.0");
    expect_op(numeric_mul, "1.0",
              "12193263113702179522496570642237463801111263526900",
              "12193263113702179522496570642237463801111263526900.0");
}

static void test_div_mod(void **state)
{
    (void)state;
    /* select_div_scale(): at least 16 significant digits, no fewer
     * places than either operand. */
    expect_op(numeric_div, "1.0", "3", "0.33333333333333333333");
    expect_op(numeric_div, "10", "4.0", "2.5000000000000000");
    expect_op(numeric_div, "2", "3.0", "0.66666666666666666667");
    expect_op(numeric_div, "1", "7.0", "0.14285714285714285714");
    expect_op(numeric_div, "3", "2", "1.5000000000000000");
    expect_op(numeric_div, "100000", "3", "33333.333333333333");
    expect_op(numeric_div, "0.0001", "3", "0.000033333333333333333333");
    expect_op(numeric_div, "100000000000000000000.0", "3",
              "33333333333333333333.3");
    expect_op(numeric_div, "123456789012345678901234567890", "987654321",
              "124999998873437499902");
    expect_op(numeric_div, "-1", "3", "-0.33333333333333333333");
    expect_op(numeric_div, "2", "-3", "-0.66666666666666666667");
    expect_op(numeric_div, "0", "3", "0.00000000000000000000");
    expect_op(numeric_div, "1.000", "0.001", "1000.0000000000000000");
    /* modulo: the dividend's sign, the larger scale */
    expect_op(numeric_mod, "7.5", "2", "1.5");
    expect_op(numeric_mod, "-7.5", "2", "-1.5");
    expect_op(numeric_mod, "7", "-3", "1");
    expect_op(numeric_mod, "10.00", "3", "1.00");
    expect_op_fails(numeric_div, "1.5", "0", NUMERIC_EDIVZERO);
    expect_op_fails(numeric_div, "0", "0.00", NUMERIC_EDIVZERO);
    expect_op_fails(numeric_mod, "1.5", "0", NUMERIC_EDIVZERO);
}

/* A random number's text: up to 90 digits, a point somewhere or none,
 * maybe a sign. */
static void random_text(unsigned *seed, char *buf)
{
    int n = 1 + (int)(rand_r(seed) % 90), k = 0, point;

    if (rand_r(seed) % 2)
        buf[k++] = '-';
    point = (int)(rand_r(seed) % (unsigned)(n + 1));
    for (int i = 0; i < n; i++) {
        if (i == point && i > 0)
            buf[k++] = '.';
        /* runs of 9s and 0s find the estimate's corrections */
        unsigned r = rand_r(seed) % 10;
        buf[k++] = (char)('0' + (r < 3 ? 9 : r < 5 ? 0 : rand_r(seed) % 10));
    }
    buf[k] = '\0';
}

/* Division checked against multiplication over random operands: the
 * truncated quotient q of a / b leaves |a - q b| < |b|, of a's sign. */
static void test_div_random(void **state)
{
    unsigned seed = 12345;

    (void)state;
    for (int iter = 0; iter < 20000; iter++) {
        char ta[128], tb[128];
        numeric a = NUMERIC_INIT, b = NUMERIC_INIT, q = NUMERIC_INIT,
                p = NUMERIC_INIT, r = NUMERIC_INIT, ar = NUMERIC_INIT,
                ab = NUMERIC_INIT;
        random_text(&seed, ta);
        random_text(&seed, tb);
        assert_int_equal(numeric_in(ta, strlen(ta), &a), NUMERIC_OK);
        assert_int_equal(numeric_in(tb, strlen(tb), &b), NUMERIC_OK);
        if (b.ndigits == 0) {
            numeric_free(&a);
            numeric_free(&b);
            continue;
        }
        assert_int_equal(numeric_div_scale(&a, &b, 0, false, &q), NUMERIC_OK);
        assert_int_equal(numeric_mul(&q, &b, &p), NUMERIC_OK);
        assert_int_equal(numeric_sub(&a, &p, &r), NUMERIC_OK);
        assert_int_equal(numeric_abs(&r, &ar), NUMERIC_OK);
        assert_int_equal(numeric_abs(&b, &ab), NUMERIC_OK);
        if (numeric_cmp(&ar, &ab) >= 0 ||
            (r.ndigits > 0 && r.sign != a.sign))
            fail_msg("%s / %s: remainder out of range", ta, tb);
        numeric_free(&a);
        numeric_free(&b);
        numeric_free(&q);
        numeric_free(&p);
        numeric_free(&r);
        numeric_free(&ar);
        numeric_free(&ab);
    }
}

/* A quotient of 52,000 digits by one of 22,000 takes milliseconds (it
 * took seconds when digits were taken one at a time): checked by its
 * remainder. */
static void test_div_huge(void **state)
{
    size_t na = 52000, nb = 22000;
    char *ta = malloc(na + 1), *tb = malloc(nb + 1);
    numeric a = NUMERIC_INIT, b = NUMERIC_INIT, q = NUMERIC_INIT,
            p = NUMERIC_INIT, r = NUMERIC_INIT;

    (void)state;
    assert_non_null(ta);
    assert_non_null(tb);
    for (size_t i = 0; i < na; i++)
        ta[i] = (char)('1' + (i * 7) % 9);
    for (size_t i = 0; i < nb; i++)
        tb[i] = (char)('1' + (i * 5) % 9);
    ta[na] = tb[nb] = '\0';
    assert_int_equal(numeric_in(ta, na, &a), NUMERIC_OK);
    assert_int_equal(numeric_in(tb, nb, &b), NUMERIC_OK);
    assert_int_equal(numeric_div_scale(&a, &b, 0, false, &q), NUMERIC_OK);
    assert_int_equal(numeric_mul(&q, &b, &p), NUMERIC_OK);
    assert_int_equal(numeric_sub(&a, &p, &r), NUMERIC_OK);
    assert_true(r.sign == NUMERIC_POS || r.ndigits == 0);
    assert_true(numeric_cmp(&r, &b) < 0);
    numeric_free(&a);
    numeric_free(&b);
    numeric_free(&q);
    numeric_free(&p);
    numeric_free(&r);
    free(ta);
    free(tb);
}

static void test_rounding(void **state)
{
    static const struct {
        const char *in;
        int s;
        const char *round, *trunc;
    } cases[] = {
        {"2.5", 0, "3", "2"},
        {"-2.5", 0, "-3", "-2"},
        {"2.4999", 0, "2", "2"},
        {"1234.5678", 2, "1234.57", "1234.56"},
        {"1234.5678", -2, "1200", "1200"},
        {"1250", -2, "1300", "1200"},
        {"9999.9999", 2, "10000.00", "9999.99"},
        {"-0.005", 2, "-0.01", "0.00"},
        {"0.004", 2, "0.00", "0.00"},
        {"1.5", 3, "1.500", "1.500"},
        {"499", -3, "0", "0"},
        {"500", -3, "1000", "0"},
        {"NaN", 1, "NaN", "NaN"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        numeric x = num(cases[i].in), r = NUMERIC_INIT;
        assert_int_equal(numeric_round(&x, cases[i].s, &r), NUMERIC_OK);
        expect_text(&r, cases[i].round);
        assert_int_equal(numeric_trunc(&x, cases[i].s, &r), NUMERIC_OK);
        expect_text(&r, cases[i].trunc);
        numeric_free(&x);
    }
    {
        static const struct {
            const char *in, *ceil, *floor;
        } cf[] = {{"-1.5", "-1", "-2"},
                  {"1.2", "2", "1"},
                  {"3.00", "3", "3"},
                  {"-0.5", "0", "-1"},
                  {"0", "0", "0"}};
        for (size_t i = 0; i < sizeof(cf) / sizeof(cf[0]); i++) {
            numeric x = num(cf[i].in), r = NUMERIC_INIT;
            assert_int_equal(numeric_ceil(&x, &r), NUMERIC_OK);
            expect_text(&r, cf[i].ceil);
            assert_int_equal(numeric_floor(&x, &r), NUMERIC_OK);
            expect_text(&r, cf[i].floor);
            numeric_free(&x);
        }
    }
    {
        numeric x = num("-2.25"), r = NUMERIC_INIT;
        assert_int_equal(numeric_abs(&x, &r), NUMERIC_OK);
        expect_text(&r, "2.25");
        assert_int_equal(numeric_neg(&x, &r), NUMERIC_OK);
        expect_text(&r, "2.25");
        numeric_free(&x);
        x = num("0");
        assert_int_equal(numeric_neg(&x, &r), NUMERIC_OK);
        expect_text(&r, "0");
        numeric_free(&x);
    }
}

static void test_typmod(void **state)
{
    static const struct {
        const char *in;
        int p, s;
        const char *out; /* NULL: field overflow */
    } cases[] = {
        {"123.456", 5, 1, "123.5"},
        {"0.5", 1, 0, "1"},
        {"99.995", 5, 2, "100.00"},
        {"999.995", 5, 2, NULL},
        {"1234.5", 5, 2, NULL},
        {"-0.005", 12, 2, "-0.01"},
        {"1234567890.125", 12, 2, "1234567890.13"},
        {"12345678901.5", 12, 2, NULL},
        {"0.001", 3, 3, "0.001"},
        {"1", 3, 3, NULL},
        {"12345", 3, -2, "12300"},
        {"NaN", 3, 1, "NaN"},
    };
    (void)state;

    assert_int_equal(numeric_typmod_precision(numeric_typmod(12, 2)), 12);
    assert_int_equal(numeric_typmod_scale(numeric_typmod(12, 2)), 2);
    assert_int_equal(numeric_typmod_scale(numeric_typmod(5, -3)), -3);
    /* PostgreSQL's value: numeric(12,2)'s atttypmod. */
    assert_int_equal(numeric_typmod(12, 2), 786438);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        numeric x = num(cases[i].in);
        numeric_status st =
            numeric_apply_typmod(&x, numeric_typmod(cases[i].p, cases[i].s));
        if (cases[i].out == NULL) {
            assert_int_equal(st, NUMERIC_EFIELD);
            numeric_free(&x);
        } else {
            assert_int_equal(st, NUMERIC_OK);
            expect_text(&x, cases[i].out);
        }
    }
    {
        numeric x = num("1.5");
        assert_int_equal(numeric_apply_typmod(&x, -1), NUMERIC_OK);
        expect_text(&x, "1.5");
    }
}

static void test_nan_and_compare(void **state)
{
    static const char *sorted[] = {
        "-1e100", "-1.5", "-1.25", "-1",   "-0.001", "0",     "1e-30", "1",
        "1.25",   "1.5",  "10",    "9999", "10000",  "1e100", "NaN"};
    const size_t n = sizeof(sorted) / sizeof(sorted[0]);
    (void)state;

    for (size_t i = 0; i < n; i++) {
        numeric a = num(sorted[i]);
        unsigned char ea[64];
        assert_true(numeric_encoded_len(&a) <= sizeof(ea));
        numeric_encode(&a, ea);
        for (size_t j = 0; j < n; j++) {
            numeric b = num(sorted[j]);
            unsigned char eb[64];
            int want = i < j ? -1 : i > j ? 1 : 0;
            numeric_encode(&b, eb);
            assert_int_equal(numeric_cmp(&a, &b), want);
            /* The stored forms sort the same way. */
            assert_int_equal(numeric_encoded_cmp(ea, numeric_encoded_len(&a),
                                                 eb, numeric_encoded_len(&b)),
                             want);
            numeric_free(&b);
        }
        numeric_free(&a);
    }
    /* NaN equals NaN; arithmetic with it gives NaN, even / 0. */
    expect_op(numeric_add, "NaN", "1", "NaN");
    expect_op(numeric_mul, "2", "NaN", "NaN");
    expect_op(numeric_div, "NaN", "0", "NaN");
    expect_op(numeric_mod, "1", "NaN", "NaN");
    {
        numeric a = num("1.5"), b = num("1.50");
        unsigned char ea[16], eb[16];
        assert_int_equal(numeric_cmp(&a, &b), 0);
        numeric_encode(&a, ea);
        numeric_encode(&b, eb);
        /* Equal as keys, though their scales differ. */
        assert_int_equal(numeric_encoded_cmp(ea, numeric_encoded_len(&a), eb,
                                             numeric_encoded_len(&b)),
                         0);
        assert_int_not_equal(memcmp(ea, eb, numeric_encoded_len(&a)), 0);
        numeric_free(&a);
        numeric_free(&b);
    }
}

static void test_conversions(void **state)
{
    numeric n = NUMERIC_INIT;
    int64_t v;
    (void)state;

    assert_int_equal(numeric_from_int64(INT64_MIN, &n), NUMERIC_OK);
    expect_text(&n, "-9223372036854775808");
    assert_int_equal(numeric_from_int64(0, &n), NUMERIC_OK);
    expect_text(&n, "0");
    n = num("-2.5");
    assert_int_equal(numeric_to_int64(&n, INT64_MIN, INT64_MAX, &v),
                     NUMERIC_OK);
    assert_int_equal(v, -3);
    numeric_free(&n);
    n = num("32767.4");
    assert_int_equal(numeric_to_int64(&n, INT16_MIN, INT16_MAX, &v),
                     NUMERIC_OK);
    assert_int_equal(v, 32767);
    numeric_free(&n);
    n = num("32767.5");
    assert_int_equal(numeric_to_int64(&n, INT16_MIN, INT16_MAX, &v),
                     NUMERIC_ERANGE);
    numeric_free(&n);
    n = num("9223372036854775808");
    assert_int_equal(numeric_to_int64(&n, INT64_MIN, INT64_MAX, &v),
                     NUMERIC_ERANGE);
    numeric_free(&n);
    n = num("1e30");
    assert_int_equal(numeric_to_int64(&n, INT64_MIN, INT64_MAX, &v),
                     NUMERIC_ERANGE);
    numeric_free(&n);
    n = num("NaN");
    assert_int_equal(numeric_to_int64(&n, INT64_MIN, INT64_MAX, &v),
                     NUMERIC_ERANGE);
    assert_true(isnan(numeric_to_double(&n)));
    numeric_free(&n);
    /* float8 in: its 15 significant digits, as float8_numeric. */
    assert_int_equal(numeric_from_double(0.1, &n), NUMERIC_OK);
    expect_text(&n, "0.1");
    assert_int_equal(numeric_from_double(1e20, &n), NUMERIC_OK);
    expect_text(&n, "100000000000000000000");
    assert_int_equal(numeric_from_double(-1.0 / 3, &n), NUMERIC_OK);
    expect_text(&n, "-0.333333333333333");
    assert_int_equal(numeric_from_double(INFINITY, &n), NUMERIC_ERANGE);
    n = num("1.5");
    assert_true(numeric_to_double(&n) == 1.5);
    numeric_free(&n);
}

static void test_binary_forms(void **state)
{
    static const char *values[] = {
        "0",        "0.00",       "1.50",
        "-12.25",   "NaN",        "1000000000000000000000000000000",
        "0.000001", "-9999.9999", "123456789012345678901234567890.123"};
    numeric n = NUMERIC_INIT;
    (void)state;

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        numeric a = num(values[i]), b = NUMERIC_INIT, c = NUMERIC_INIT;
        unsigned char buf[128];
        size_t len = numeric_send_len(&a);
        assert_true(len <= sizeof(buf));
        numeric_send(&a, buf);
        assert_int_equal(numeric_recv(buf, len, &b), NUMERIC_OK);
        expect_text(&b, values[i]);
        len = numeric_encoded_len(&a);
        numeric_encode(&a, buf);
        assert_int_equal(numeric_decode(buf, len, &c), NUMERIC_OK);
        expect_text(&c, values[i]);
        numeric_free(&a);
    }
    {
        /* -12.25: 2 digits, weight 0, negative, scale 2: 12, 2500. */
        static const unsigned char want[] = {0, 2, 0, 0,  0x40, 0,
                                             0, 2, 0, 12, 0x09, 0xc4};
        unsigned char buf[16];
        n = num("-12.25");
        assert_int_equal(numeric_send_len(&n), sizeof(want));
        numeric_send(&n, buf);
        assert_memory_equal(buf, want, sizeof(want));
        numeric_free(&n);
    }
    {
        /* Malformed: a short length, a bad sign, a digit of 10000, a
         * scale past 16383; digits past the scale are dropped. */
        static const unsigned char shortlen[] = {0, 2, 0, 0, 0, 0, 0, 0, 0, 1};
        static const unsigned char sign[] = {0, 0, 0, 0, 0x20, 0, 0, 0};
        static const unsigned char digit[] = {0, 1, 0, 0,    0,
                                              0, 0, 0, 0x27, 0x10};
        static const unsigned char scale[] = {0, 0, 0, 0, 0, 0, 0x40, 0};
        static const unsigned char hidden[] = {0, 2, 0, 0, 0,    0,
                                               0, 1, 0, 1, 0x13, 0x88};
        assert_int_equal(numeric_recv(shortlen, sizeof(shortlen), &n),
                         NUMERIC_EFORMAT);
        assert_int_equal(numeric_recv(sign, sizeof(sign), &n), NUMERIC_EFORMAT);
        assert_int_equal(numeric_recv(digit, sizeof(digit), &n),
                         NUMERIC_EFORMAT);
        assert_int_equal(numeric_recv(scale, sizeof(scale), &n),
                         NUMERIC_EFORMAT);
        assert_int_equal(numeric_recv(hidden, sizeof(hidden), &n), NUMERIC_OK);
        expect_text(&n, "1.5");
    }
    {
        /* Stored forms that are not: too short, an unknown class, a
         * digit word of 0, a negative without its terminator. */
        static const unsigned char s1[] = {0x80, 0};
        static const unsigned char s2[] = {0x10, 0, 0};
        static const unsigned char s3[] = {0xc0, 0x80, 0, 0, 0, 0, 0};
        static const unsigned char s4[] = {0x40, 0x7f, 0xff, 0xff, 0xfc,
                                           0x12, 0x34, 0,    0};
        assert_int_equal(numeric_decode(s1, sizeof(s1), &n), NUMERIC_EFORMAT);
        assert_int_equal(numeric_decode(s2, sizeof(s2), &n), NUMERIC_EFORMAT);
        assert_int_equal(numeric_decode(s3, sizeof(s3), &n), NUMERIC_EFORMAT);
        assert_int_equal(numeric_decode(s4, sizeof(s4), &n), NUMERIC_EFORMAT);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_huge_and_tiny),
        cmocka_unit_test(test_add_sub_mul),
        cmocka_unit_test(test_div_mod),
        cmocka_unit_test(test_div_random),
        cmocka_unit_test(test_div_huge),
        cmocka_unit_test(test_rounding),
        cmocka_unit_test(test_typmod),
        cmocka_unit_test(test_nan_and_compare),
        cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_binary_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
