/*
 * test_tuple.c: tuple descriptors and the row encoding (tuple.h): every
 * type round-trips, nulls and the null bitmap, alignment and padding of the
 * data area, the limits of name and char(n) with errors naming the column,
 * descriptor errors, and value_compare's ordering for every type (NaN after
 * every number, nulls after everything, char ignoring trailing blanks);
 * decoding only a row's first columns within a length (also at the
 * columns' fixed offsets, against the walk), and the fixed size of rows
 * whose columns all have fixed widths.
 */
#include "testutil.h"

#include <stdio.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "access/tuple.h"

typedef union data_buf {
    uint64_t align;
    unsigned char b[16384];
} data_buf;

static keel_value v_null(void)
{
    keel_value v;
    memset(&v, 0, sizeof(v));
    v.isnull = true;
    return v;
}

static keel_value v_i2(int16_t x)
{
    keel_value v = {.isnull = false};
    v.v.i2 = x;
    return v;
}

static keel_value v_i4(int32_t x)
{
    keel_value v = {.isnull = false};
    v.v.i4 = x;
    return v;
}

static keel_value v_i8(int64_t x)
{
    keel_value v = {.isnull = false};
    v.v.i8 = x;
    return v;
}

static keel_value v_oid(uint32_t x)
{
    keel_value v = {.isnull = false};
    v.v.oid = x;
    return v;
}

static keel_value v_bool(bool x)
{
    keel_value v = {.isnull = false};
    v.v.b = x;
    return v;
}

static keel_value v_f8(double x)
{
    keel_value v = {.isnull = false};
    v.v.f8 = x;
    return v;
}

static keel_value v_str(const char *p, uint32_t len)
{
    keel_value v = {.isnull = false};
    v.v.s.ptr = p;
    v.v.s.len = len;
    return v;
}

static keel_value v_cstr(const char *p)
{
    return v_str(p, (uint32_t)strlen(p));
}

/* A descriptor from a list of types; char columns get length charlen. */
static tuple_desc *make_desc(uint16_t natts, const keel_type *types,
                             uint16_t charlen)
{
    tuple_desc *d = tupdesc_alloc(natts);
    kerr err;

    assert_non_null(d);
    assert_int_equal(d->natts, natts);
    for (uint16_t i = 0; i < natts; i++)
        assert_int_equal(tupdesc_set(d, i, types[i], charlen, false, &err),
                         KEEL_OK);
    return d;
}

/* Encodes vals, checks the reported size against what fill wrote (the
 * bytes past it stay untouched), and decodes into out. */
static size_t encode_decode(const tuple_desc *d, const keel_value *vals,
                            data_buf *buf, keel_value *out, bool *has_nulls)
{
    size_t size = 0;
    kerr err;

    assert_int_equal(tuple_size(d, vals, &size, has_nulls, &err), KEEL_OK);
    assert_true(size <= sizeof(buf->b) - 8);
    memset(buf->b, 0xA5, sizeof(buf->b));
    tuple_fill(d, vals, *has_nulls, buf->b);
    for (size_t i = size; i < size + 8; i++)
        assert_int_equal(buf->b[i], 0xA5);
    tuple_deform(d, buf->b, *has_nulls, out);
    return size;
}

static void assert_value_equal(const tuple_attr *a, const keel_value *x,
                               const keel_value *y)
{
    assert_int_equal(x->isnull, y->isnull);
    if (x->isnull)
        return;
    switch (a->type) {
    case KEEL_INT2:
        assert_int_equal(x->v.i2, y->v.i2);
        break;
    case KEEL_INT4:
    case KEEL_DATE:
        assert_int_equal(x->v.i4, y->v.i4);
        break;
    case KEEL_INT8:
    case KEEL_TIMESTAMP:
    case KEEL_TIMESTAMPTZ:
        assert_true(x->v.i8 == y->v.i8);
        break;
    case KEEL_OID:
        assert_true(x->v.oid == y->v.oid);
        break;
    case KEEL_BOOL:
        assert_int_equal(x->v.b, y->v.b);
        break;
    case KEEL_FLOAT8:
        /* Bitwise: NaN and -0.0 must survive too. */
        assert_memory_equal(&x->v.f8, &y->v.f8, sizeof(double));
        break;
    case KEEL_NAME:
    case KEEL_TEXT:
    case KEEL_NUMERIC:
    case KEEL_UUID:
    case KEEL_BYTEA:
    case KEEL_JSON:
    case KEEL_JSONB:
        assert_int_equal(x->v.s.len, y->v.s.len);
        if (x->v.s.len > 0)
            assert_memory_equal(x->v.s.ptr, y->v.s.ptr, x->v.s.len);
        break;
    case KEEL_CHAR:
        /* Stored blank-padded to the column's length. */
        assert_int_equal(y->v.s.len, a->len);
        assert_memory_equal(x->v.s.ptr, y->v.s.ptr, x->v.s.len);
        for (uint32_t i = x->v.s.len; i < a->len; i++)
            assert_int_equal(y->v.s.ptr[i], ' ');
        break;
    }
}

static const keel_type all_types[] = {
    KEEL_INT2,   KEEL_INT4, KEEL_INT8, KEEL_OID,       KEEL_BOOL,
    KEEL_FLOAT8, KEEL_NAME, KEEL_CHAR, KEEL_TEXT,      KEEL_TIMESTAMP,
    KEEL_TIMESTAMPTZ,       KEEL_DATE,
};
#define NTYPES ((uint16_t)(sizeof(all_types) / sizeof(all_types[0])))

static void test_roundtrip_every_type(void **state)
{
    (void)state;
    tuple_desc *d = make_desc(NTYPES, all_types, 12);
    static char longtext[6000];
    const char embedded[] = {'a', '\0', 'b'};
    keel_value rows[][NTYPES] = {
        {v_i2(INT16_MIN), v_i4(INT32_MIN), v_i8(INT64_MIN), v_oid(0),
         v_bool(false), v_f8(-DBL_MAX), v_cstr(""), v_cstr(""), v_cstr(""),
         v_i8(INT64_MIN), v_i8(INT64_MIN), v_i4(INT32_MIN)},
        {v_i2(INT16_MAX), v_i4(INT32_MAX), v_i8(INT64_MAX), v_oid(UINT32_MAX),
         v_bool(true), v_f8(INFINITY), v_cstr("pg_class"), v_cstr("abc"),
         v_cstr("hello, world"), v_i8(INT64_MAX), v_i8(INT64_MAX),
         v_i4(INT32_MAX)},
        {v_i2(-1), v_i4(42), v_i8(-123456789012345), v_oid(16384), v_bool(true),
         v_f8(-0.0), v_str(embedded, 1), v_cstr("exactly12chr"),
         v_str(embedded, 3), v_i8(0), v_i8(-1), v_i4(0)},
        {v_i2(7), v_i4(-7), v_i8(7), v_oid(7), v_bool(false), v_f8(NAN),
         v_cstr("123456789012345678901234567890123456789012345678901234567890"
                "123"),
         v_cstr(" lead"), v_str(longtext, sizeof(longtext)),
         v_i8(851212800000000), v_i8(851212800123456), v_i4(9851)},
    };

    for (size_t i = 0; i < sizeof(longtext); i++)
        longtext[i] = (char)('a' + i % 26);
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        data_buf buf;
        keel_value out[NTYPES];
        bool has_nulls = true;

        encode_decode(d, rows[r], &buf, out, &has_nulls);
        assert_false(has_nulls);
        for (uint16_t c = 0; c < NTYPES; c++)
            assert_value_equal(&d->attrs[c], &rows[r][c], &out[c]);
        /* Decoded strings point into the data area. */
        assert_true(out[8].v.s.ptr > (const char *)buf.b &&
                    out[8].v.s.ptr < (const char *)buf.b + sizeof(buf.b));
    }
    tupdesc_free(d);
}

static void test_descriptor_widths(void **state)
{
    (void)state;
    tuple_desc *d = make_desc(NTYPES, all_types, 17);
    static const uint16_t len[] = {2, 4, 8, 4, 1, 8, KEEL_NAME_LEN, 17, 0,
                                   8, 8, 4};
    static const uint8_t align[] = {2, 4, 8, 4, 1, 8, 1, 1, 4, 8, 8, 4};
    tuple_desc *c;

    for (uint16_t i = 0; i < NTYPES; i++) {
        assert_int_equal(d->attrs[i].type, all_types[i]);
        assert_int_equal(d->attrs[i].len, len[i]);
        assert_int_equal(d->attrs[i].align, align[i]);
        assert_false(d->attrs[i].notnull);
    }
    c = tupdesc_copy(d);
    assert_non_null(c);
    assert_int_equal(c->natts, d->natts);
    assert_memory_equal(c->attrs, d->attrs, sizeof(tuple_attr) * NTYPES);
    tupdesc_free(c);
    tupdesc_free(d);

    assert_string_equal(type_name(KEEL_INT2), "int2");
    assert_string_equal(type_name(KEEL_INT4), "int4");
    assert_string_equal(type_name(KEEL_INT8), "int8");
    assert_string_equal(type_name(KEEL_OID), "oid");
    assert_string_equal(type_name(KEEL_BOOL), "bool");
    assert_string_equal(type_name(KEEL_FLOAT8), "float8");
    assert_string_equal(type_name(KEEL_NAME), "name");
    assert_string_equal(type_name(KEEL_CHAR), "char");
    assert_string_equal(type_name(KEEL_TEXT), "text");
    assert_string_equal(type_name(KEEL_TIMESTAMP), "timestamp");
    assert_string_equal(type_name(KEEL_TIMESTAMPTZ), "timestamptz");
    assert_string_equal(type_name(KEEL_DATE), "date");
    assert_string_equal(type_name((keel_type)99), "unknown");
}

static void test_descriptor_errors(void **state)
{
    (void)state;
    tuple_desc *d = tupdesc_alloc(3);
    kerr err;

    assert_non_null(d);
    kerr_clear(&err);
    assert_int_equal(tupdesc_set(d, 3, KEEL_INT4, 0, false, &err), KEEL_EINVAL);
    assert_non_null(strstr(err.msg, "column 4"));
    assert_int_equal(tupdesc_set(d, 1, KEEL_CHAR, 0, false, &err), KEEL_EINVAL);
    assert_non_null(strstr(err.msg, "column 2"));
    assert_int_equal(
        tupdesc_set(d, 1, KEEL_CHAR, TUPLE_MAX_CHAR_LEN + 1, false, &err),
        KEEL_EINVAL);
    assert_int_equal(
        tupdesc_set(d, 1, KEEL_CHAR, TUPLE_MAX_CHAR_LEN, false, &err), KEEL_OK);
    assert_int_equal(d->attrs[1].len, TUPLE_MAX_CHAR_LEN);
    assert_int_equal(tupdesc_set(d, 2, (keel_type)0, 0, false, &err),
                     KEEL_EINVAL);
    assert_non_null(strstr(err.msg, "column 3"));
    assert_int_equal(tupdesc_set(d, 2, (keel_type)42, 0, false, &err),
                     KEEL_EINVAL);
    tupdesc_free(d);

    /* A refused change leaves the column, its offsets and the int4
     * prefix as they were. */
    d = tupdesc_alloc(2);
    assert_non_null(d);
    assert_int_equal(tupdesc_set(d, 0, KEEL_INT4, 0, true, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 1, KEEL_OID, 0, true, &err), KEEL_OK);
    assert_int_equal(d->int4_prefix, 2);
    assert_int_equal(tupdesc_set(d, 0, KEEL_CHAR, 0, false, &err), KEEL_EINVAL);
    assert_int_equal(tupdesc_set(d, 0, (keel_type)42, 0, false, &err),
                     KEEL_EINVAL);
    assert_int_equal(d->attrs[0].type, KEEL_INT4);
    assert_int_equal(d->attrs[0].len, 4);
    assert_true(d->attrs[0].notnull);
    assert_int_equal(d->attrs[1].fixed_off, 4);
    assert_int_equal(d->int4_prefix, 2);
    /* An accepted one recounts it. */
    assert_int_equal(tupdesc_set(d, 0, KEEL_INT8, 0, false, &err), KEEL_OK);
    assert_int_equal(d->int4_prefix, 0);
    assert_int_equal(d->attrs[1].fixed_off, 8);
    tupdesc_free(d);
}

/* The data area's size as tuple.h describes it, computed independently. */
static size_t model_size(const tuple_desc *d, const keel_value *vals)
{
    size_t off = 0;

    for (uint16_t i = 0; i < d->natts; i++)
        if (vals[i].isnull)
            off = (d->natts + 7) / 8;
    for (uint16_t i = 0; i < d->natts; i++) {
        const tuple_attr *a = &d->attrs[i];
        if (vals[i].isnull)
            continue;
        while (off % a->align != 0)
            off++;
        off += a->type == KEEL_TEXT ? 4 + vals[i].v.s.len : a->len;
    }
    return off;
}

/* Null patterns over 11 columns: the bitmap takes two bytes, bit i for
 * column i, and every non-null value survives. */
static void test_nulls_and_bitmap(void **state)
{
    (void)state;
    static const keel_type types[11] = {
        KEEL_INT8, KEEL_TEXT,   KEEL_INT2, KEEL_NAME, KEEL_BOOL, KEEL_INT4,
        KEEL_CHAR, KEEL_FLOAT8, KEEL_OID,  KEEL_INT8, KEEL_TEXT,
    };
    tuple_desc *d = make_desc(11, types, 3);
    keel_value full[11] = {
        v_i8(-5),     v_cstr("text one"), v_i2(300),      v_cstr("nm"),
        v_bool(true), v_i4(-99),          v_cstr("x"),    v_f8(2.5),
        v_oid(12345), v_i8(1LL << 40),    v_cstr("last"),
    };
    size_t size_full;
    bool has_nulls;

    {
        data_buf buf;
        keel_value out[11];
        size_full = encode_decode(d, full, &buf, out, &has_nulls);
        assert_false(has_nulls);
        assert_int_equal(size_full, model_size(d, full));
    }
    for (uint32_t mask = 0; mask < 2048; mask++) {
        keel_value vals[11], out[11];
        data_buf buf;
        size_t size;

        for (int i = 0; i < 11; i++)
            vals[i] = (mask & (1u << i)) ? v_null() : full[i];
        size = encode_decode(d, vals, &buf, out, &has_nulls);
        assert_int_equal(has_nulls, mask != 0);
        if (mask != 0) {
            uint32_t bits = (uint32_t)buf.b[0] | ((uint32_t)buf.b[1] << 8);
            assert_int_equal(bits, mask);
        }
        if (mask == 0x7FF)
            assert_int_equal(size, 2); /* just the bitmap */
        assert_int_equal(size, model_size(d, vals));
        for (int i = 0; i < 11; i++)
            assert_value_equal(&d->attrs[i], &vals[i], &out[i]);
    }
    tupdesc_free(d);
}

/* Each column sits at its alignment relative to the data area's start, and
 * padding is written as zero. */
static void test_alignment_and_padding(void **state)
{
    (void)state;
    static const keel_type types[6] = {KEEL_BOOL, KEEL_INT8, KEEL_INT2,
                                       KEEL_TEXT, KEEL_BOOL, KEEL_FLOAT8};
    tuple_desc *d = make_desc(6, types, 1);
    keel_value vals[6] = {v_bool(true), v_i8(0x0102030405060708LL),
                          v_i2(0x1122), v_cstr("abc"),
                          v_bool(true), v_f8(1.0)};
    data_buf buf;
    keel_value out[6];
    bool has_nulls;
    size_t size;
    int64_t i8;
    int16_t i2;
    uint32_t tlen;
    double f8;

    /* bool@0, pad 1..7, int8@8, int2@16, pad 18..19, text len@20, bytes
     * 24..26, bool@27, float8@32: 40 bytes. */
    size = encode_decode(d, vals, &buf, out, &has_nulls);
    assert_int_equal(size, 40);
    assert_int_equal(buf.b[0], 1);
    for (int i = 1; i < 8; i++)
        assert_int_equal(buf.b[i], 0);
    memcpy(&i8, buf.b + 8, 8);
    assert_true(i8 == 0x0102030405060708LL);
    memcpy(&i2, buf.b + 16, 2);
    assert_int_equal(i2, 0x1122);
    assert_int_equal(buf.b[18], 0);
    assert_int_equal(buf.b[19], 0);
    memcpy(&tlen, buf.b + 20, 4);
    assert_int_equal(tlen, 3);
    assert_memory_equal(buf.b + 24, "abc", 3);
    assert_int_equal(buf.b[27], 1);
    for (int i = 28; i < 32; i++)
        assert_int_equal(buf.b[i], 0);
    memcpy(&f8, buf.b + 32, 8);
    assert_true(f8 == 1.0);

    /* With a null, the one-byte bitmap comes first and shifts the rest:
     * bitmap@0, int8@8 (bool null), int2@16, ... */
    vals[0] = v_null();
    size = encode_decode(d, vals, &buf, out, &has_nulls);
    assert_true(has_nulls);
    assert_int_equal(buf.b[0], 0x01);
    for (int i = 1; i < 8; i++)
        assert_int_equal(buf.b[i], 0);
    memcpy(&i8, buf.b + 8, 8);
    assert_true(i8 == 0x0102030405060708LL);
    assert_int_equal(size, 40);
    for (int i = 0; i < 6; i++)
        assert_value_equal(&d->attrs[i], &vals[i], &out[i]);
    tupdesc_free(d);
}

static void test_name_and_char_limits(void **state)
{
    (void)state;
    static const keel_type types[3] = {KEEL_INT4, KEEL_NAME, KEEL_CHAR};
    tuple_desc *d = make_desc(3, types, 5);
    char name63[64], name64[65];
    keel_value vals[3], out[3];
    data_buf buf;
    bool has_nulls;
    size_t size;
    kerr err;

    memset(name63, 'n', 63);
    name63[63] = '\0';
    memset(name64, 'm', 64);
    name64[64] = '\0';

    /* A 63-byte name fits and is NUL-terminated in its 64-byte field. */
    vals[0] = v_i4(1);
    vals[1] = v_cstr(name63);
    vals[2] = v_cstr("abcde");
    size = encode_decode(d, vals, &buf, out, &has_nulls);
    assert_int_equal(size, 4 + KEEL_NAME_LEN + 5);
    assert_int_equal(buf.b[4 + 63], 0);
    assert_int_equal(out[1].v.s.len, 63);
    assert_value_equal(&d->attrs[1], &vals[1], &out[1]);
    assert_value_equal(&d->attrs[2], &vals[2], &out[2]);

    /* A short name is NUL-padded to 64 bytes. */
    vals[1] = v_cstr("ab");
    encode_decode(d, vals, &buf, out, &has_nulls);
    for (int i = 4 + 2; i < 4 + KEEL_NAME_LEN; i++)
        assert_int_equal(buf.b[i], 0);
    assert_int_equal(out[1].v.s.len, 2);

    /* A char value shorter than n is blank-padded; n bytes come back. */
    vals[2] = v_cstr("xy");
    encode_decode(d, vals, &buf, out, &has_nulls);
    assert_int_equal(out[2].v.s.len, 5);
    assert_memory_equal(out[2].v.s.ptr, "xy   ", 5);
    assert_memory_equal(buf.b + 4 + KEEL_NAME_LEN, "xy   ", 5);

    /* Too long: ETOOBIG, naming the column. */
    kerr_clear(&err);
    vals[1] = v_cstr(name64);
    vals[2] = v_cstr("ok");
    assert_int_equal(tuple_size(d, vals, &size, &has_nulls, &err),
                     KEEL_ETOOBIG);
    assert_int_equal(err.code, KEEL_ETOOBIG);
    assert_non_null(strstr(err.msg, "column 2"));
    vals[1] = v_cstr("fine");
    vals[2] = v_cstr("abcdef");
    assert_int_equal(tuple_size(d, vals, &size, &has_nulls, &err),
                     KEEL_ETOOBIG);
    assert_non_null(strstr(err.msg, "column 3"));
    assert_non_null(strstr(err.msg, "char(5)"));
    tupdesc_free(d);
}

static void test_not_null_and_bad_strings(void **state)
{
    (void)state;
    tuple_desc *d = tupdesc_alloc(3);
    keel_value vals[3] = {v_i4(1), v_cstr("a"), v_cstr("b")};
    size_t size;
    bool has_nulls;
    kerr err;

    assert_non_null(d);
    assert_int_equal(tupdesc_set(d, 0, KEEL_INT4, 0, true, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 1, KEEL_TEXT, 0, true, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 2, KEEL_TEXT, 0, false, &err), KEEL_OK);
    assert_true(d->attrs[0].notnull);
    assert_int_equal(tuple_size(d, vals, &size, &has_nulls, &err), KEEL_OK);
    vals[2] = v_null();
    assert_int_equal(tuple_size(d, vals, &size, &has_nulls, &err), KEEL_OK);
    assert_true(has_nulls);
    vals[1] = v_null();
    kerr_clear(&err);
    assert_int_equal(tuple_size(d, vals, &size, &has_nulls, &err), KEEL_ETYPE);
    assert_int_equal(err.code, KEEL_ETYPE);
    assert_non_null(strstr(err.msg, "column 2"));
    /* A string with a length but no bytes. */
    vals[1] = v_str(NULL, 3);
    assert_int_equal(tuple_size(d, vals, &size, &has_nulls, &err), KEEL_EINVAL);
    assert_non_null(strstr(err.msg, "column 2"));
    /* An empty string without bytes is fine. */
    vals[1] = v_str(NULL, 0);
    assert_int_equal(tuple_size(d, vals, &size, &has_nulls, &err), KEEL_OK);
    tupdesc_free(d);
}

/* Asserts that vals (n values of column a) are in strictly ascending order
 * by value_compare, and the comparison is antisymmetric and reflexive. */
static void assert_ascending(const tuple_attr *a, const keel_value *vals,
                             size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            int c = value_compare(a, &vals[i], &vals[j]);
            int expect = (i > j) - (i < j);
            if ((c > 0) - (c < 0) != expect)
                fail_msg("%s: compare(#%zu, #%zu) = %d, expected sign %d",
                         type_name(a->type), i, j, c, expect);
        }
    }
}

static void test_compare_every_type(void **state)
{
    (void)state;
    tuple_desc *d = make_desc(NTYPES, all_types, 4);
    const keel_value i2s[] = {v_i2(INT16_MIN), v_i2(-1),        v_i2(0),
                              v_i2(1),         v_i2(INT16_MAX), v_null()};
    const keel_value i4s[] = {v_i4(INT32_MIN), v_i4(-70000),    v_i4(0),
                              v_i4(70000),     v_i4(INT32_MAX), v_null()};
    const keel_value i8s[] = {v_i8(INT64_MIN), v_i8(-(1LL << 40)), v_i8(0),
                              v_i8(1LL << 40), v_i8(INT64_MAX),    v_null()};
    /* oid is unsigned: 2^32-1 sorts last. */
    const keel_value oids[] = {v_oid(0),          v_oid(1),
                               v_oid(0x7FFFFFFF), v_oid(0x80000000u),
                               v_oid(UINT32_MAX), v_null()};
    const keel_value bools[] = {v_bool(false), v_bool(true), v_null()};
    const keel_value f8s[] = {v_f8(-INFINITY), v_f8(-DBL_MAX), v_f8(-1.5),
                              v_f8(0.0),       v_f8(DBL_MIN),  v_f8(1e300),
                              v_f8(INFINITY),  v_f8(NAN),      v_null()};
    const keel_value names[] = {v_cstr(""),   v_cstr("A"), v_cstr("a"),
                                v_cstr("ab"), v_cstr("b"), v_null()};
    const keel_value chars[] = {v_cstr(""),    v_cstr("a b"), v_cstr("ab"),
                                v_cstr("abc"), v_cstr("b"),   v_null()};
    const char hi[] = {'a', (char)0xE9};
    const keel_value texts[] = {v_cstr(""),   v_cstr("a"), v_cstr("a\x01"),
                                v_str(hi, 2), v_cstr("b"), v_null()};
    keel_value a, b;

    assert_ascending(&d->attrs[0], i2s, 6);
    assert_ascending(&d->attrs[1], i4s, 6);
    assert_ascending(&d->attrs[2], i8s, 6);
    assert_ascending(&d->attrs[3], oids, 6);
    assert_ascending(&d->attrs[4], bools, 3);
    assert_ascending(&d->attrs[5], f8s, 9);
    assert_ascending(&d->attrs[6], names, 6);
    assert_ascending(&d->attrs[7], chars, 6);
    assert_ascending(&d->attrs[8], texts, 6);

    /* Equalities: NaN = NaN, -0 = +0, null = null. */
    a = v_f8(NAN);
    b = v_f8(-NAN);
    assert_int_equal(value_compare(&d->attrs[5], &a, &b), 0);
    a = v_f8(-0.0);
    b = v_f8(0.0);
    assert_int_equal(value_compare(&d->attrs[5], &a, &b), 0);
    a = v_null();
    b = v_null();
    for (uint16_t i = 0; i < NTYPES; i++)
        assert_int_equal(value_compare(&d->attrs[i], &a, &b), 0);

    /* char: trailing blanks are padding ("ab" = "ab  "); leading and inner
     * ones count. */
    a = v_cstr("ab");
    b = v_cstr("ab  ");
    assert_int_equal(value_compare(&d->attrs[7], &a, &b), 0);
    assert_int_equal(value_compare(&d->attrs[7], &b, &a), 0);
    a = v_cstr("    ");
    b = v_cstr("");
    assert_int_equal(value_compare(&d->attrs[7], &a, &b), 0);
    a = v_cstr(" ab");
    b = v_cstr("ab");
    assert_true(value_compare(&d->attrs[7], &a, &b) < 0);
    /* but text keeps its blanks. */
    a = v_cstr("ab");
    b = v_cstr("ab ");
    assert_true(value_compare(&d->attrs[8], &a, &b) < 0);
    tupdesc_free(d);
}

/* A value read back from a tuple compares equal to the one written (char
 * against its unpadded original, name through its NUL). */
static void test_compare_after_roundtrip(void **state)
{
    (void)state;
    tuple_desc *d = make_desc(NTYPES, all_types, 8);
    keel_value vals[NTYPES] = {v_i2(-3),     v_i4(5),      v_i8(-7),
                               v_oid(9),     v_bool(true), v_f8(NAN),
                               v_cstr("nm"), v_cstr("cc"), v_cstr("tt")};
    keel_value out[NTYPES];
    data_buf buf;
    bool has_nulls;

    encode_decode(d, vals, &buf, out, &has_nulls);
    for (uint16_t i = 0; i < NTYPES; i++)
        assert_int_equal(value_compare(&d->attrs[i], &vals[i], &out[i]), 0);
    tupdesc_free(d);
}

static void test_zero_columns(void **state)
{
    (void)state;
    tuple_desc *d = tupdesc_alloc(0);
    size_t size = 99;
    bool has_nulls = true;
    kerr err;

    assert_non_null(d);
    assert_int_equal(tuple_size(d, NULL, &size, &has_nulls, &err), KEEL_OK);
    assert_int_equal(size, 0);
    assert_false(has_nulls);
    tupdesc_free(d);
}

/* tuple_deform_prefix() reads the first columns only, and refuses data
 * whose values run past the length it is given, or whose null bitmap
 * has a not-null column null. */
static void test_deform_prefix(void **state)
{
    (void)state;
    const keel_type types[] = {KEEL_INT2, KEEL_TEXT, KEEL_INT8, KEEL_NAME};
    tuple_desc *d = make_desc(4, types, 0);
    keel_value in[4] = {v_i2(-7), v_cstr("hello"), v_i8(INT64_MIN),
                        v_cstr("nm")};
    keel_value out[4];
    data_buf buf;
    bool has_nulls;
    size_t size = encode_decode(d, in, &buf, out, &has_nulls);

    /* Two columns: the third and fourth are not touched. */
    memset(out, 0x5A, sizeof(out));
    assert_true(tuple_deform_prefix(d, buf.b, size, has_nulls, 2, out));
    assert_int_equal(out[0].v.i2, -7);
    assert_int_equal(out[1].v.s.len, 5);
    assert_memory_equal(out[1].v.s.ptr, "hello", 5);
    assert_int_equal(((unsigned char *)&out[2])[0], 0x5A);
    /* All of them, as tuple_deform() reads them. */
    assert_true(tuple_deform_prefix(d, buf.b, size, has_nulls, 4, out));
    for (uint16_t i = 0; i < 4; i++)
        assert_value_equal(&d->attrs[i], &in[i], &out[i]);
    /* A length short of the values. */
    assert_false(tuple_deform_prefix(d, buf.b, size - 1, has_nulls, 4, out));
    assert_true(tuple_deform_prefix(d, buf.b, 16, has_nulls, 2, out));
    assert_false(tuple_deform_prefix(d, buf.b, 8, has_nulls, 2, out));
    /* A text length that points past the data. */
    {
        uint32_t huge = 0x7FFFFFF0u;
        memcpy(buf.b + 4, &huge, 4);
        assert_false(tuple_deform_prefix(d, buf.b, size, has_nulls, 2, out));
    }
    /* Nulls: the bitmap first, null columns marked. */
    in[0] = v_null();
    in[2] = v_null();
    encode_decode(d, in, &buf, out, &has_nulls);
    assert_true(has_nulls);
    size = 0;
    {
        kerr err;
        assert_int_equal(tuple_size(d, in, &size, &has_nulls, &err), KEEL_OK);
    }
    assert_true(tuple_deform_prefix(d, buf.b, size, has_nulls, 3, out));
    assert_true(out[0].isnull);
    assert_memory_equal(out[1].v.s.ptr, "hello", 5);
    assert_true(out[2].isnull);
    assert_false(tuple_deform_prefix(d, buf.b, 0, has_nulls, 1, out));
    assert_true(tuple_valid(d, buf.b, size, has_nulls));
    {
        uint16_t col = 99;
        assert_int_equal(tuple_fault_of(d, buf.b, size, has_nulls, &col),
                         TUPLE_FAULT_NONE);
        /* No room for the bitmap itself. */
        assert_false(tuple_valid(d, buf.b, 0, has_nulls));
        assert_int_equal(tuple_fault_of(d, buf.b, 0, has_nulls, &col),
                         TUPLE_FAULT_BITMAP);
        assert_int_equal(col, 0);
    }
    /* The same bytes for a row type whose first column is not null: a
     * damaged tuple, refused (tuple_size() never makes one). */
    {
        kerr err;
        uint16_t col = 99;
        assert_int_equal(tupdesc_set(d, 0, KEEL_INT2, 0, true, &err), KEEL_OK);
        assert_false(tuple_deform_prefix(d, buf.b, size, has_nulls, 3, out));
        assert_false(tuple_deform_prefix(d, buf.b, size, has_nulls, 1, out));
        assert_false(tuple_valid(d, buf.b, size, has_nulls));
        assert_int_equal(tuple_fault_of(d, buf.b, size, has_nulls, &col),
                         TUPLE_FAULT_NULL);
        assert_int_equal(col, 0);
    }
    tupdesc_free(d);
}

/* tuple_valid() accepts what tuple_fill() writes, and refuses data too
 * short for it or whose text length points past it; tuple_fault_of()
 * agrees, and names the column that runs past the end. */
static void test_valid(void **state)
{
    (void)state;
    const keel_type types[] = {KEEL_INT2, KEEL_TEXT, KEEL_INT8, KEEL_NAME};
    const keel_type fixed[] = {KEEL_INT4, KEEL_INT8, KEEL_NAME};
    tuple_desc *d = make_desc(4, types, 0), *f = make_desc(3, fixed, 0);
    keel_value in[4] = {v_i2(-7), v_cstr("hello"), v_i8(INT64_MIN),
                        v_cstr("nm")};
    keel_value fin[3] = {v_i4(1), v_i8(2), v_cstr("x")};
    keel_value out[4];
    data_buf buf;
    bool has_nulls;
    size_t size = encode_decode(d, in, &buf, out, &has_nulls);
    uint32_t huge = 0x7FFFFFF0u;

    uint16_t col = 99;

    assert_true(tuple_valid(d, buf.b, size, has_nulls));
    assert_int_equal(tuple_fault_of(d, buf.b, size, has_nulls, &col),
                     TUPLE_FAULT_NONE);
    assert_false(tuple_valid(d, buf.b, size - 1, has_nulls));
    assert_int_equal(tuple_fault_of(d, buf.b, size - 1, has_nulls, &col),
                     TUPLE_FAULT_OVERRUN);
    assert_int_equal(col, 3); /* the name, last */
    memcpy(buf.b + 4, &huge, 4);
    assert_false(tuple_valid(d, buf.b, size, has_nulls));
    assert_int_equal(tuple_fault_of(d, buf.b, size, has_nulls, &col),
                     TUPLE_FAULT_OVERRUN);
    assert_int_equal(col, 1); /* the text */
    /* Fixed widths only: one length to compare. */
    size = encode_decode(f, fin, &buf, out, &has_nulls);
    assert_true(tuple_valid(f, buf.b, size, has_nulls));
    assert_int_equal(tuple_fault_of(f, buf.b, size, has_nulls, &col),
                     TUPLE_FAULT_NONE);
    assert_false(tuple_valid(f, buf.b, size - 1, has_nulls));
    assert_int_equal(tuple_fault_of(f, buf.b, size - 1, has_nulls, &col),
                     TUPLE_FAULT_OVERRUN);
    assert_int_equal(col, 2);
    tupdesc_free(d);
    tupdesc_free(f);
}

/* A value of type t for the fixed-offset test, from r. */
static keel_value fixed_test_value(keel_type t, uint64_t r, char *buf)
{
    switch (t) {
    case KEEL_INT2:
        return v_i2((int16_t)r);
    case KEEL_INT4:
        return v_i4((int32_t)r);
    case KEEL_INT8:
        return v_i8((int64_t)r);
    case KEEL_OID:
        return v_oid((uint32_t)r);
    case KEEL_BOOL:
        return v_bool(r & 1);
    case KEEL_FLOAT8:
        return v_f8((double)(int64_t)r / 7.0);
    default: /* name, char(5), text */
        snprintf(buf, 16, "v%u", (unsigned)(r % 10000));
        return v_cstr(buf);
    }
}

/*
 * Columns read at their fixed offsets (tuple_attr.fixed_off, the fast
 * path of tuple_deform() and tuple_deform_prefix() for tuples without
 * nulls) give what the column-by-column walk gives: random descriptors
 * of up to 12 columns of every type, set in random order, every prefix
 * of them, with the length of the data exact, one byte short of each
 * prefix's end (refused), and with nulls (the walk).  Offsets are known
 * up to the first text column and unknown after it.  One round in three
 * leads with int4 and oid columns, which a prefix of deforms by the
 * descriptor's int4_prefix alone.
 */
static void test_fixed_offsets(void **state)
{
    (void)state;
    uint64_t rng = 20261130;
    int int4_rounds = 0;

    for (int round = 0; round < 300; round++) {
        uint16_t natts = (uint16_t)(1 + tu_rand(&rng) % 12), order[12];
        tuple_desc *d = tupdesc_alloc(natts);
        keel_type types[12];
        keel_value in[12], out[12], walk[12];
        char strs[12][16];
        data_buf buf;
        bool has_nulls, text_seen = false;
        size_t size, off = 0;
        kerr err;

        assert_non_null(d);
        for (uint16_t i = 0; i < natts; i++) {
            types[i] = all_types[tu_rand(&rng) % NTYPES];
            order[i] = i;
        }
        /* One round in three leads with int4 and oid columns. */
        for (uint16_t i = 0; round % 3 == 0 && i < natts && i < 4; i++)
            types[i] = tu_rand(&rng) % 2 ? KEEL_INT4 : KEEL_OID;
        for (uint16_t i = natts; i > 1; i--) {
            uint16_t j = (uint16_t)(tu_rand(&rng) % i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (uint16_t i = 0; i < natts; i++) {
            assert_int_equal(
                tupdesc_set(d, order[i], types[order[i]], 5, false, &err),
                KEEL_OK);
        }
        /* The offsets a walk computes: known through the first text. */
        for (uint16_t i = 0; i < natts; i++) {
            const tuple_attr *a = &d->attrs[i];
            off = (off + a->align - 1) & ~(size_t)(a->align - 1);
            assert_int_equal(a->fixed_off, text_seen ? -1 : (int)off);
            off += a->len;
            text_seen = text_seen || a->type == KEEL_TEXT;
        }
        /* The leading int4 and oid columns, counted. */
        {
            uint16_t lead = 0;
            while (lead < natts &&
                   (types[lead] == KEEL_INT4 || types[lead] == KEEL_OID))
                lead++;
            assert_int_equal(d->int4_prefix, lead);
            int4_rounds += lead >= 3;
        }
        for (uint16_t i = 0; i < natts; i++)
            in[i] = fixed_test_value(types[i], tu_rand(&rng), strs[i]);
        size = encode_decode(d, in, &buf, out, &has_nulls);
        assert_false(has_nulls);
        for (uint16_t i = 0; i < natts; i++)
            assert_value_equal(&d->attrs[i], &in[i], &out[i]);
        for (uint16_t n = 1; n <= natts; n++) {
            const tuple_attr *last = &d->attrs[n - 1];
            assert_true(tuple_deform_prefix(d, buf.b, size, false, n, out));
            for (uint16_t i = 0; i < n; i++)
                assert_value_equal(&d->attrs[i], &in[i], &out[i]);
            if (last->fixed_off >= 0 && last->type != KEEL_TEXT) {
                size_t end = (size_t)last->fixed_off + last->len;
                assert_true(tuple_deform_prefix(d, buf.b, end, false, n, out));
                assert_false(
                    tuple_deform_prefix(d, buf.b, end - 1, false, n, out));
            }
        }
        /* With a null: the walk, the same values elsewhere. */
        in[tu_rand(&rng) % natts] = v_null();
        size = encode_decode(d, in, &buf, walk, &has_nulls);
        assert_true(has_nulls);
        assert_true(tuple_deform_prefix(d, buf.b, size, true, natts, out));
        for (uint16_t i = 0; i < natts; i++) {
            assert_value_equal(&d->attrs[i], &in[i], &walk[i]);
            assert_value_equal(&d->attrs[i], &in[i], &out[i]);
        }
        tupdesc_free(d);
    }
    /* The int4 path ran, with prefixes of at least three columns. */
    assert_true(int4_rounds >= 50);
}

/* tupdesc_fixed_size(): the data size of a row without nulls when every
 * column has a fixed width, else 0. */
static void test_fixed_size(void **state)
{
    (void)state;
    const keel_type fixed[] = {KEEL_INT4, KEEL_INT4, KEEL_INT4, KEEL_CHAR};
    const keel_type aligned[] = {KEEL_BOOL, KEEL_INT8, KEEL_INT2, KEEL_NAME};
    const keel_type varlen[] = {KEEL_INT4, KEEL_TEXT};
    tuple_desc *d = make_desc(4, fixed, 84);
    keel_value v[4] = {v_i4(1), v_i4(2), v_i4(3), v_cstr("x")};
    size_t size;
    bool has_nulls;
    kerr err;

    /* pgbench_accounts: three int4 and a char(84). */
    assert_int_equal(tupdesc_fixed_size(d), 96);
    assert_int_equal(tuple_size(d, v, &size, &has_nulls, &err), KEEL_OK);
    assert_int_equal(size, 96);
    tupdesc_free(d);
    d = make_desc(4, aligned, 0);
    assert_int_equal(tupdesc_fixed_size(d), 8 + 8 + 2 + KEEL_NAME_LEN);
    tupdesc_free(d);
    d = make_desc(2, varlen, 0);
    assert_int_equal(tupdesc_fixed_size(d), 0);
    tupdesc_free(d);
}

/* numeric: stored after a 2-byte length, unaligned; keys compare by
 * all but the last two bytes (the display scale), so 1.5 = 1.50. */
static void test_numeric_column(void **state)
{
    /* -2, 1.5 (scale 1), 1.50 (scale 2), 0, NaN: stored forms as
     * keel.h describes them. */
    static const char neg2[] = {0x40, 0x7f, (char)0xff, (char)0xff,
                                (char)0xfc, (char)0xff, (char)0xff, 0, 0};
    static const char p15[] = {(char)0xc0, (char)0x80, 0, 0, 2, 0x13, (char)0x89,
                               0, 1};
    static const char p150[] = {(char)0xc0, (char)0x80, 0, 0, 2, 0x13, (char)0x89,
                                0, 2};
    static const char zero[] = {(char)0x80, 0, 0};
    static const char nan[] = {(char)0xff, 0, 0};
    const char *forms[] = {neg2, zero, p15, p150, nan};
    const uint32_t lens[] = {9, 3, 9, 9, 3};
    tuple_desc *d = tupdesc_alloc(3);
    kerr err;
    (void)state;

    assert_non_null(d);
    assert_int_equal(tupdesc_set(d, 0, KEEL_BOOL, 0, true, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 1, KEEL_NUMERIC, 0, false, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 2, KEEL_INT4, 0, true, &err), KEEL_OK);
    assert_string_equal(type_name(KEEL_NUMERIC), "numeric");
    assert_int_equal(tupdesc_fixed_size(d), 0);
    for (int i = 0; i < 5; i++) {
        keel_value vals[3] = {{.v.b = true},
                              {.v.s = {forms[i], lens[i]}},
                              {.v.i4 = 77}};
        keel_value out[3];
        unsigned char buf[64];
        size_t size;
        bool nulls;
        assert_int_equal(tuple_size(d, vals, &size, &nulls, &err), KEEL_OK);
        /* bool 1, length 2, bytes, then int4 aligned to 4 */
        assert_int_equal(size, ((1 + 2 + lens[i] + 3) & ~3u) + 4);
        tuple_fill(d, vals, nulls, buf);
        assert_true(tuple_valid(d, buf, size, nulls));
        assert_false(tuple_valid(d, buf, 2, nulls));
        tuple_deform(d, buf, nulls, out);
        assert_value_equal(&d->attrs[1], &vals[1], &out[1]);
        assert_int_equal(out[2].v.i4, 77);
        for (int j = 0; j < 5; j++) {
            keel_value y = {.v.s = {forms[j], lens[j]}};
            int c = value_compare(&d->attrs[1], &out[1], &y);
            int want = (i == 2 || i == 3) && (j == 2 || j == 3) ? 0
                       : i < j                                  ? -1
                       : i > j                                  ? 1
                                                                : 0;
            assert_int_equal(c, want);
        }
    }
    {
        /* Too short to be a stored form. */
        keel_value vals[3] = {{.v.b = true}, {.v.s = {zero, 2}}, {.v.i4 = 1}};
        size_t size;
        bool nulls;
        assert_int_equal(tuple_size(d, vals, &size, &nulls, &err), KEEL_EINVAL);
    }
    tupdesc_free(d);
}

/* uuid: 16 unaligned bytes; bytea: a 4-byte length, then its bytes (NULs
 * and all); both compare as unsigned bytes, a shorter prefix first, and
 * print as PostgreSQL prints them. */
static void test_uuid_bytea_columns(void **state)
{
    static const char u1[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
                                0x77, (char)0x88, (char)0x99, (char)0xaa,
                                (char)0xbb, (char)0xcc, (char)0xdd,
                                (char)0xee, (char)0xff};
    static const char u2[16] = {(char)0x80};
    static const char b1[] = {0, (char)0xff, '\\', 'x'};
    tuple_desc *d = tupdesc_alloc(4);
    keel_value vals[4] = {{.v.b = true}, {.v.s = {u1, 16}}, {.v.s = {b1, 4}},
                          {.v.i4 = 9}};
    keel_value out[4], x, y;
    unsigned char buf[64];
    char text[48];
    size_t size;
    bool nulls;
    kerr err;
    (void)state;

    assert_non_null(d);
    assert_int_equal(tupdesc_set(d, 0, KEEL_BOOL, 0, true, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 1, KEEL_UUID, 0, false, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 2, KEEL_BYTEA, 0, false, &err), KEEL_OK);
    assert_int_equal(tupdesc_set(d, 3, KEEL_INT4, 0, true, &err), KEEL_OK);
    assert_string_equal(type_name(KEEL_UUID), "uuid");
    assert_string_equal(type_name(KEEL_BYTEA), "bytea");
    assert_int_equal(d->attrs[1].len, 16);
    assert_int_equal(d->attrs[1].align, 1);
    assert_int_equal(d->attrs[2].fixed_off, 20); /* 1 + 16, aligned to 4 */
    assert_int_equal(tupdesc_fixed_size(d), 0);
    assert_int_equal(tuple_size(d, vals, &size, &nulls, &err), KEEL_OK);
    assert_int_equal(size, 20 + 4 + 4 + 4);
    tuple_fill(d, vals, nulls, buf);
    assert_true(tuple_valid(d, buf, size, nulls));
    assert_false(tuple_valid(d, buf, 25, nulls));
    tuple_deform(d, buf, nulls, out);
    for (int c = 1; c < 3; c++)
        assert_value_equal(&d->attrs[c], &vals[c], &out[c]);
    assert_int_equal(out[3].v.i4, 9);

    value_bytes_text(KEEL_UUID, &out[1], text, sizeof(text));
    assert_string_equal(text, "00112233-4455-6677-8899-aabbccddeeff");
    value_bytes_text(KEEL_BYTEA, &out[2], text, sizeof(text));
    assert_string_equal(text, "\\x00ff5c78");
    value_bytes_text(KEEL_UUID, &out[1], text, 12); /* cut short */
    assert_string_equal(text, "00112233-44");

    /* Unsigned order: 0x80... sorts after 0x00...; a prefix first. */
    x = (keel_value){.v.s = {u2, 16}};
    assert_true(value_compare(&d->attrs[1], &out[1], &x) < 0);
    assert_true(value_compare(&d->attrs[1], &x, &out[1]) > 0);
    assert_int_equal(value_compare(&d->attrs[1], &out[1], &vals[1]), 0);
    x = (keel_value){.v.s = {b1, 2}};
    y = (keel_value){.v.s = {b1 + 1, 1}};
    assert_true(value_compare(&d->attrs[2], &x, &out[2]) < 0);
    assert_true(value_compare(&d->attrs[2], &y, &x) > 0);

    /* A uuid is 16 bytes, never another length. */
    vals[1].v.s.len = 15;
    assert_int_equal(tuple_size(d, vals, &size, &nulls, &err), KEEL_EINVAL);
    assert_non_null(strstr(err.msg, "uuid of 15 bytes"));
    /* An empty bytea is a value, not a null. */
    vals[1].v.s.len = 16;
    vals[2].v.s.len = 0;
    assert_int_equal(tuple_size(d, vals, &size, &nulls, &err), KEEL_OK);
    assert_false(nulls);
    tuple_fill(d, vals, nulls, buf);
    tuple_deform(d, buf, nulls, out);
    assert_false(out[2].isnull);
    assert_int_equal(out[2].v.s.len, 0);
    tupdesc_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_every_type),
        cmocka_unit_test(test_descriptor_widths),
        cmocka_unit_test(test_descriptor_errors),
        cmocka_unit_test(test_nulls_and_bitmap),
        cmocka_unit_test(test_alignment_and_padding),
        cmocka_unit_test(test_name_and_char_limits),
        cmocka_unit_test(test_not_null_and_bad_strings),
        cmocka_unit_test(test_compare_every_type),
        cmocka_unit_test(test_compare_after_roundtrip),
        cmocka_unit_test(test_zero_columns),
        cmocka_unit_test(test_deform_prefix),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_fixed_offsets),
        cmocka_unit_test(test_fixed_size),
        cmocka_unit_test(test_numeric_column),
        cmocka_unit_test(test_uuid_bytea_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
