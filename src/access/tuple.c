/*
 * tuple.c: tuple descriptors, forming and deforming tuples, comparing
 * values.  The layout is described in tuple.h.
 */
#include "access/tuple.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/mem.h"

#define ALIGN_TO(off, a) (((off) + (size_t)(a)-1) & ~((size_t)(a)-1))

/* The length word before a variable-length value: 4 bytes for text, 2
 * for numeric (whose stored forms are short). */
static inline size_t varlen_hdr(keel_type type)
{
    return type == KEEL_NUMERIC ? 2 : 4;
}

/* Reads the length word of a variable-length value at p. */
static inline uint32_t varlen_get(keel_type type, const unsigned char *p)
{
    if (type != KEEL_NUMERIC) {
        uint32_t len;
        memcpy(&len, p, 4);
        return len;
    } else {
        uint16_t len;
        memcpy(&len, p, 2);
        return len;
    }
}

tuple_desc *tupdesc_alloc(uint16_t natts)
{
    tuple_desc *d = calloc(1, sizeof(tuple_desc) + sizeof(tuple_attr) * natts);

    if (d != NULL) {
        d->natts = natts;
        for (uint16_t i = 0; i < natts; i++)
            d->attrs[i].fixed_off = -1;
    }
    return d;
}

/* Recomputes every column's fixed_off: offsets stay known up to and
 * including the first text column; a column not set yet, and every one
 * after it, gets -1.  And int4_prefix. */
static void tupdesc_offsets(tuple_desc *d)
{
    size_t off = 0;
    bool known = true, int4s = true;

    d->int4_prefix = 0;
    for (uint16_t i = 0; i < d->natts; i++) {
        tuple_attr *a = &d->attrs[i];

        known = known && a->align != 0;
        if (known)
            off = ALIGN_TO(off, a->align);
        known = known && off <= INT16_MAX;
        a->fixed_off = known ? (int16_t)off : -1;
        int4s = int4s && known && (a->type == KEEL_INT4 || a->type == KEEL_OID);
        d->int4_prefix += int4s;
        if (type_is_varlen(a->type))
            known = false;
        off += a->len;
    }
}

void tupdesc_free(tuple_desc *d)
{
    free(d);
}

tuple_desc *tupdesc_copy(const tuple_desc *d)
{
    size_t n = tupdesc_size(d);
    tuple_desc *c = malloc(n);

    if (c != NULL)
        memcpy(c, d, n);
    return c;
}

const char *type_name(keel_type type)
{
    switch (type) {
    case KEEL_INT2:
        return "int2";
    case KEEL_INT4:
        return "int4";
    case KEEL_INT8:
        return "int8";
    case KEEL_TIMESTAMP:
        return "timestamp";
    case KEEL_TIMESTAMPTZ:
        return "timestamptz";
    case KEEL_DATE:
        return "date";
    case KEEL_OID:
        return "oid";
    case KEEL_BOOL:
        return "bool";
    case KEEL_FLOAT8:
        return "float8";
    case KEEL_NAME:
        return "name";
    case KEEL_CHAR:
        return "char";
    case KEEL_TEXT:
        return "text";
    case KEEL_NUMERIC:
        return "numeric";
    case KEEL_UUID:
        return "uuid";
    case KEEL_BYTEA:
        return "bytea";
    case KEEL_JSON:
        return "json";
    case KEEL_JSONB:
        return "jsonb";
    }
    return "unknown";
}

void value_bytes_text(keel_type type, const keel_value *v, char *buf,
                      size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)v->v.s.ptr;
    size_t o = 0;

    if (cap == 0)
        return;
    if (type == KEEL_BYTEA && cap > 2) {
        buf[o++] = '\\';
        buf[o++] = 'x';
    }
    for (uint32_t i = 0; i < v->v.s.len && o + 2 < cap; i++) {
        if (type == KEEL_UUID && (i == 4 || i == 6 || i == 8 || i == 10)) {
            if (o + 3 >= cap)
                break;
            buf[o++] = '-';
        }
        buf[o++] = hex[p[i] >> 4];
        buf[o++] = hex[p[i] & 15];
    }
    buf[o] = '\0';
}

void value_numeric_text(const keel_value *v, char *buf, size_t cap)
{
    static const unsigned pow10[4] = {1, 10, 100, 1000};
    const unsigned char *p = (const unsigned char *)v->v.s.ptr;
    uint32_t len = v->v.s.len;
    unsigned flip;
    int weight, nd, dscale, intdigits;
    size_t o = 0;
    bool started = false;

    if (cap == 0)
        return;
    buf[0] = '\0';
    if (len < 3 || p[0] == 0xFF) {
        snprintf(buf, cap, len < 3 ? "?" : "NaN");
        return;
    }
    flip = p[0] == 0x40 ? 0xFFFF : 0;
    dscale = p[len - 2] << 8 | p[len - 1];
    if (p[0] == 0x80) {
        weight = 0;
        nd = 0;
    } else {
        if (len < 5 + (flip ? 2u : 0u))
            return;
        weight = (int)(((unsigned)p[1] << 8 | p[2]) ^ flip) - 0x8000;
        nd = (int)(len - 5 - (flip ? 2 : 0)) / 2;
    }
    if (flip && o + 1 < cap)
        buf[o++] = '-';
    intdigits = weight >= 0 ? (weight + 1) * 4 : 1;
    for (int k = 0; k < intdigits + dscale && o + 2 < cap; k++) {
        int e = intdigits - 1 - k;
        int w = e >= 0 ? e / 4 : -((-e + 3) / 4);
        int i = weight - w;
        unsigned d = 0;
        if (i >= 0 && i < nd)
            d = ((((unsigned)p[3 + 2 * i] << 8 | p[4 + 2 * i]) ^ flip) - 1) /
                pow10[e - 4 * w] % 10;
        if (e == -1)
            buf[o++] = '.';
        if (e > 0 && !started && d == 0)
            continue;
        started = true;
        buf[o++] = (char)('0' + d);
    }
    buf[o] = '\0';
}

int tupdesc_set(tuple_desc *d, uint16_t i, keel_type type, uint16_t charlen,
                bool notnull, kerr *err)
{
    tuple_attr a = {.type = type, .notnull = notnull, .fixed_off = -1};

    if (i >= d->natts)
        return kerr_set(err, KEEL_EINVAL, "column %u out of range (%u columns)",
                        i + 1, d->natts);
    switch (type) {
    case KEEL_INT2:
        a.len = a.align = 2;
        break;
    case KEEL_INT4:
    case KEEL_DATE:
    case KEEL_OID:
        a.len = a.align = 4;
        break;
    case KEEL_INT8:
    case KEEL_TIMESTAMP:
    case KEEL_TIMESTAMPTZ:
    case KEEL_FLOAT8:
        a.len = a.align = 8;
        break;
    case KEEL_BOOL:
        a.len = a.align = 1;
        break;
    case KEEL_NAME:
        a.len = KEEL_NAME_LEN;
        a.align = 1;
        break;
    case KEEL_CHAR:
        if (charlen < 1 || charlen > TUPLE_MAX_CHAR_LEN)
            return kerr_set(err, KEEL_EINVAL,
                            "column %u: char length %u is out of range "
                            "(1 .. %d)",
                            i + 1, charlen, TUPLE_MAX_CHAR_LEN);
        a.len = charlen;
        a.align = 1;
        break;
    case KEEL_TEXT:
        a.len = 0;
        a.align = 4;
        break;
    case KEEL_NUMERIC:
        a.len = 0;
        a.align = 1;
        break;
    case KEEL_UUID:
        a.len = 16;
        a.align = 1;
        break;
    case KEEL_BYTEA:
    case KEEL_JSON:
    case KEEL_JSONB:
        a.len = 0;
        a.align = 4;
        break;
    default:
        return kerr_set(err, KEEL_EINVAL, "column %u: unknown type %d", i + 1,
                        (int)type);
    }
    /* Only a valid column changes the descriptor. */
    d->attrs[i] = a;
    tupdesc_offsets(d);
    return KEEL_OK;
}

static inline size_t bitmap_bytes(uint16_t natts)
{
    return ((size_t)natts + 7) / 8;
}

int tuple_size(const tuple_desc *d, const keel_value *vals, size_t *size,
               bool *has_nulls, kerr *err)
{
    bool nulls = false;
    size_t off;

    for (uint16_t i = 0; i < d->natts; i++) {
        const tuple_attr *a = &d->attrs[i];
        if (vals[i].isnull) {
            if (a->notnull)
                return kerr_set(err, KEEL_ETYPE,
                                "null value in column %u, which is not null",
                                i + 1);
            nulls = true;
            continue;
        }
        if (a->type == KEEL_NAME && vals[i].v.s.len >= KEEL_NAME_LEN)
            return kerr_set(err, KEEL_ETOOBIG,
                            "column %u: name of %u bytes is longer than %d",
                            i + 1, vals[i].v.s.len, KEEL_NAME_LEN - 1);
        if (a->type == KEEL_CHAR && vals[i].v.s.len > a->len)
            return kerr_set(err, KEEL_ETOOBIG,
                            "column %u: value of %u bytes is too long for "
                            "char(%u)",
                            i + 1, vals[i].v.s.len, a->len);
        if (type_has_bytes(a->type) && vals[i].v.s.len > 0 &&
            vals[i].v.s.ptr == NULL)
            return kerr_set(err, KEEL_EINVAL,
                            "column %u: string value without bytes", i + 1);
        if (a->type == KEEL_UUID && vals[i].v.s.len != 16)
            return kerr_set(err, KEEL_EINVAL,
                            "column %u: uuid of %u bytes, not 16", i + 1,
                            vals[i].v.s.len);
        if (a->type == KEEL_NUMERIC &&
            (vals[i].v.s.len < 3 || vals[i].v.s.len > UINT16_MAX))
            return kerr_set(err,
                            vals[i].v.s.len < 3 ? KEEL_EINVAL : KEEL_ETOOBIG,
                            "column %u: numeric of %u bytes (3 to %u)", i + 1,
                            vals[i].v.s.len, (unsigned)UINT16_MAX);
    }
    off = nulls ? bitmap_bytes(d->natts) : 0;
    for (uint16_t i = 0; i < d->natts; i++) {
        const tuple_attr *a = &d->attrs[i];
        if (vals[i].isnull)
            continue;
        off = ALIGN_TO(off, a->align);
        off += type_is_varlen(a->type)
                   ? varlen_hdr(a->type) + (size_t)vals[i].v.s.len
                   : a->len;
    }
    *size = off;
    *has_nulls = nulls;
    return KEEL_OK;
}

void tuple_fill(const tuple_desc *d, const keel_value *vals, bool has_nulls,
                void *data)
{
    unsigned char *p = data;
    size_t off = 0;

    if (has_nulls) {
        off = bitmap_bytes(d->natts);
        memset(p, 0, off);
        for (uint16_t i = 0; i < d->natts; i++)
            if (vals[i].isnull)
                p[i / 8] |= (unsigned char)(1u << (i % 8));
    }
    for (uint16_t i = 0; i < d->natts; i++) {
        const tuple_attr *a = &d->attrs[i];
        const keel_value *v = &vals[i];
        size_t start;

        assert(has_nulls || !v->isnull);
        if (v->isnull)
            continue;
        start = ALIGN_TO(off, a->align);
        memset(p + off, 0, start - off);
        off = start;
        switch (a->type) {
        case KEEL_INT2:
            memcpy(p + off, &v->v.i2, 2);
            break;
        case KEEL_INT4:
        case KEEL_DATE:
            memcpy(p + off, &v->v.i4, 4);
            break;
        case KEEL_OID:
            memcpy(p + off, &v->v.oid, 4);
            break;
        case KEEL_INT8:
        case KEEL_TIMESTAMP:
        case KEEL_TIMESTAMPTZ:
            memcpy(p + off, &v->v.i8, 8);
            break;
        case KEEL_FLOAT8:
            memcpy(p + off, &v->v.f8, 8);
            break;
        case KEEL_BOOL:
            p[off] = v->v.b ? 1 : 0;
            break;
        case KEEL_NAME:
            memset(p + off, 0, KEEL_NAME_LEN);
            if (v->v.s.len > 0)
                memcpy(p + off, v->v.s.ptr, v->v.s.len);
            break;
        case KEEL_CHAR:
            memset(p + off, ' ', a->len);
            if (v->v.s.len > 0)
                memcpy(p + off, v->v.s.ptr, v->v.s.len);
            break;
        case KEEL_UUID:
            memcpy(p + off, v->v.s.ptr, 16);
            break;
        case KEEL_TEXT:
        case KEEL_BYTEA:
        case KEEL_JSON:
        case KEEL_JSONB: {
            uint32_t len = v->v.s.len;
            memcpy(p + off, &len, 4);
            if (len > 0)
                memcpy(p + off + 4, v->v.s.ptr, len);
            off += 4 + (size_t)len;
            continue;
        }
        case KEEL_NUMERIC: {
            uint16_t len = (uint16_t)v->v.s.len;
            memcpy(p + off, &len, 2);
            memcpy(p + off + 2, v->v.s.ptr, len);
            off += 2 + (size_t)len;
            continue;
        }
        }
        off += a->len;
    }
}

/*
 * Reads the non-null value of column a at p + off (off already aligned)
 * into v; returns the offset just past it.
 */
static inline size_t value_read(const tuple_attr *a, const unsigned char *p,
                                size_t off, keel_value *v)
{
    v->isnull = false;
    switch (a->type) {
    case KEEL_INT2:
        memcpy(&v->v.i2, p + off, 2);
        break;
    case KEEL_INT4:
    case KEEL_DATE:
        memcpy(&v->v.i4, p + off, 4);
        break;
    case KEEL_OID:
        memcpy(&v->v.oid, p + off, 4);
        break;
    case KEEL_INT8:
    case KEEL_TIMESTAMP:
    case KEEL_TIMESTAMPTZ:
        memcpy(&v->v.i8, p + off, 8);
        break;
    case KEEL_FLOAT8:
        memcpy(&v->v.f8, p + off, 8);
        break;
    case KEEL_BOOL:
        v->v.b = p[off] != 0;
        break;
    case KEEL_NAME:
        v->v.s.ptr = (const char *)p + off;
        v->v.s.len = (uint32_t)mem_strnlen((const char *)p + off, KEEL_NAME_LEN);
        break;
    case KEEL_CHAR:
    case KEEL_UUID:
        v->v.s.ptr = (const char *)p + off;
        v->v.s.len = a->len;
        break;
    case KEEL_TEXT:
    case KEEL_BYTEA:
    case KEEL_JSON:
    case KEEL_JSONB:
    case KEEL_NUMERIC: {
        uint32_t len = varlen_get(a->type, p + off);
        size_t hdr = varlen_hdr(a->type);
        v->v.s.ptr = (const char *)p + off + hdr;
        v->v.s.len = len;
        return off + hdr + (size_t)len;
    }
    }
    return off + a->len;
}

/*
 * Where the first ncols (> 0) columns of a tuple without nulls end if
 * each of them has a fixed width (then each lies at its fixed_off), or 0.
 */
static inline size_t fixed_prefix_end(const tuple_desc *d, uint16_t ncols)
{
    const tuple_attr *last = &d->attrs[ncols - 1];

    if (last->fixed_off < 0 || type_is_varlen(last->type))
        return 0;
    return (size_t)last->fixed_off + last->len;
}

void tuple_deform(const tuple_desc *d, const void *data, bool has_nulls,
                  keel_value *vals)
{
    const unsigned char *p = data;
    size_t off = has_nulls ? bitmap_bytes(d->natts) : 0;

    if (!has_nulls && d->natts > 0 && fixed_prefix_end(d, d->natts) > 0) {
        for (uint16_t i = 0; i < d->natts; i++)
            (void)value_read(&d->attrs[i], p, (size_t)d->attrs[i].fixed_off,
                             &vals[i]);
        return;
    }

    for (uint16_t i = 0; i < d->natts; i++) {
        const tuple_attr *a = &d->attrs[i];

        if (has_nulls && (p[i / 8] & (1u << (i % 8)))) {
            vals[i].isnull = true;
            continue;
        }
        off = value_read(a, p, ALIGN_TO(off, a->align), &vals[i]);
    }
}

size_t tuple_fixed_size(const tuple_desc *d)
{
    return d->natts > 0 ? fixed_prefix_end(d, d->natts) : 0;
}

/*
 * The walk of tuple_valid() and tuple_fault_of(), column by column: the
 * first fault, with the column it concerns in *col.  Inline in both, so
 * that tuple_valid(), on every read's path, pays nothing for the column.
 */
static inline tuple_fault fault_walk(const tuple_desc *d,
                                     const unsigned char *p, size_t len,
                                     bool has_nulls, uint16_t *col)
{
    size_t off = has_nulls ? bitmap_bytes(d->natts) : 0;

    *col = 0;
    if (off > len)
        return TUPLE_FAULT_BITMAP;
    for (uint16_t i = 0; i < d->natts; i++) {
        const tuple_attr *a = &d->attrs[i];

        *col = i;
        if (has_nulls && (p[i / 8] & (1u << (i % 8)))) {
            if (a->notnull)
                return TUPLE_FAULT_NULL;
            continue;
        }
        off = ALIGN_TO(off, a->align);
        if (type_is_varlen(a->type)) {
            size_t hdr = varlen_hdr(a->type);
            uint32_t tl;
            if (off + hdr > len)
                return TUPLE_FAULT_OVERRUN;
            tl = varlen_get(a->type, p + off);
            if (tl > len - off - hdr)
                return TUPLE_FAULT_OVERRUN;
            off += hdr + (size_t)tl;
        } else {
            if (off + a->len > len)
                return TUPLE_FAULT_OVERRUN;
            off += a->len;
        }
    }
    return TUPLE_FAULT_NONE;
}

bool tuple_valid(const tuple_desc *d, const void *data, size_t len,
                 bool has_nulls)
{
    uint16_t col;

    if (!has_nulls && d->natts > 0) {
        size_t end = fixed_prefix_end(d, d->natts);
        if (end > 0)
            return end <= len;
    }
    return fault_walk(d, data, len, has_nulls, &col) == TUPLE_FAULT_NONE;
}

tuple_fault tuple_fault_of(const tuple_desc *d, const void *data, size_t len,
                           bool has_nulls, uint16_t *col)
{
    return fault_walk(d, data, len, has_nulls, col);
}

bool tuple_deform_prefix(const tuple_desc *d, const void *data, size_t len,
                         bool has_nulls, uint16_t ncols, keel_value *vals)
{
    const unsigned char *p = data;
    size_t off = has_nulls ? bitmap_bytes(d->natts) : 0;

    assert(ncols <= d->natts);
    if (off > len)
        return false;
    if (!has_nulls && ncols > 0) {
        size_t end = fixed_prefix_end(d, ncols);
        if (end > 0 && end <= len) {
            if (ncols <= d->int4_prefix) {
                /* int4 and oid share the union's first four bytes. */
                for (uint16_t i = 0; i < ncols; i++) {
                    vals[i].isnull = false;
                    memcpy(&vals[i].v.i4, p + d->attrs[i].fixed_off, 4);
                }
                return true;
            }
            for (uint16_t i = 0; i < ncols; i++)
                (void)value_read(&d->attrs[i], p, (size_t)d->attrs[i].fixed_off,
                                 &vals[i]);
            return true;
        }
    }
    for (uint16_t i = 0; i < ncols; i++) {
        const tuple_attr *a = &d->attrs[i];

        if (has_nulls && (p[i / 8] & (1u << (i % 8)))) {
            if (a->notnull) /* never stored: a damaged tuple */
                return false;
            vals[i].isnull = true;
            continue;
        }
        off = ALIGN_TO(off, a->align);
        /* The fixed part (a text's length word) must be inside. */
        if (off + (type_is_varlen(a->type) ? varlen_hdr(a->type) : a->len) >
            len)
            return false;
        off = value_read(a, p, off, &vals[i]);
        if (off > len)
            return false;
    }
    return true;
}

size_t tupdesc_fixed_size(const tuple_desc *d)
{
    size_t off = 0;

    for (uint16_t i = 0; i < d->natts; i++) {
        const tuple_attr *a = &d->attrs[i];
        if (type_is_varlen(a->type))
            return 0;
        off = ALIGN_TO(off, a->align) + a->len;
    }
    return off;
}

static int cmp_bytes(const char *x, uint32_t xl, const char *y, uint32_t yl)
{
    uint32_t n = xl < yl ? xl : yl;
    int c = n > 0 ? memcmp(x, y, n) : 0;

    if (c != 0)
        return c;
    return xl < yl ? -1 : xl > yl;
}

int value_compare(const tuple_attr *a, const keel_value *x, const keel_value *y)
{
    if (x->isnull || y->isnull)
        return x->isnull - y->isnull;
    switch (a->type) {
    case KEEL_INT2:
        return (x->v.i2 > y->v.i2) - (x->v.i2 < y->v.i2);
    case KEEL_INT4:
    case KEEL_DATE:
        return (x->v.i4 > y->v.i4) - (x->v.i4 < y->v.i4);
    case KEEL_INT8:
    case KEEL_TIMESTAMP:
    case KEEL_TIMESTAMPTZ:
        return (x->v.i8 > y->v.i8) - (x->v.i8 < y->v.i8);
    case KEEL_OID:
        return (x->v.oid > y->v.oid) - (x->v.oid < y->v.oid);
    case KEEL_BOOL:
        return (int)x->v.b - (int)y->v.b;
    case KEEL_FLOAT8: {
        bool xn = x->v.f8 != x->v.f8, yn = y->v.f8 != y->v.f8;
        if (xn || yn)
            return (int)xn - (int)yn;
        return (x->v.f8 > y->v.f8) - (x->v.f8 < y->v.f8);
    }
    case KEEL_CHAR: {
        /* Trailing blanks are padding and do not count, so a key given
         * unpadded finds the padded value stored. */
        uint32_t xl = x->v.s.len, yl = y->v.s.len;
        while (xl > 0 && x->v.s.ptr[xl - 1] == ' ')
            xl--;
        while (yl > 0 && y->v.s.ptr[yl - 1] == ' ')
            yl--;
        return cmp_bytes(x->v.s.ptr, xl, y->v.s.ptr, yl);
    }
    case KEEL_NAME:
    case KEEL_TEXT:
    case KEEL_UUID:
    case KEEL_BYTEA:
    case KEEL_JSON:
    case KEEL_JSONB:
        return cmp_bytes(x->v.s.ptr, x->v.s.len, y->v.s.ptr, y->v.s.len);
    case KEEL_NUMERIC: {
        /* The stored form sorts as the numbers do but for its last two
         * bytes, the display scale: 1.5 and 1.50 are one key. */
        uint32_t xl = x->v.s.len >= 2 ? x->v.s.len - 2 : 0;
        uint32_t yl = y->v.s.len >= 2 ? y->v.s.len - 2 : 0;
        int c = cmp_bytes(x->v.s.ptr, xl, y->v.s.ptr, yl);
        return (c > 0) - (c < 0);
    }
    }
    return 0;
}
