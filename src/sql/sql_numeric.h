/*
 * sql_numeric.h: arbitrary-precision decimals, PostgreSQL's numeric.
 *
 * A value is a sign, base-10000 digits (most significant first, none
 * leading or trailing zero), the weight of the first digit (its power of
 * 10000) and a display scale (the decimal digits shown after the point,
 * carried with the value: 1.50 stays 1.50).  NaN is a value, equal to
 * itself and above every number, as PostgreSQL orders it.  Results have
 * PostgreSQL's scales: a sum or difference the larger scale of its
 * operands, a product their sum, a quotient select_div_scale()'s (at
 * least 16 significant digits), rounded half away from zero.
 *
 * Every function that makes a value allocates its digits with malloc();
 * the caller frees them with numeric_free().  They return NUMERIC_OK or
 * an error, leaving *out empty (zero) on error.  Nothing here knows about
 * sessions, so the unit tests use it directly.
 *
 * Three outside forms: text (numeric_in / numeric_out); PostgreSQL's
 * binary send format (ndigits, weight, sign, dscale as 16-bit big-endian
 * words, then the digits); and keel's stored form (numeric_encode), whose
 * bytes but the last two sort in numeric order, as include/keel/keel.h
 * describes for KEEL_NUMERIC.
 */
#ifndef KEEL_SQL_SQL_NUMERIC_H
#define KEEL_SQL_SQL_NUMERIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NUMERIC_NBASE             10000
#define NUMERIC_DEC_DIGITS        4       /* decimal digits per digit */
#define NUMERIC_MAX_PRECISION     1000    /* numeric(p,s): p at most */
#define NUMERIC_MIN_SCALE         (-1000) /* s at least */
#define NUMERIC_MAX_SCALE         1000    /* s at most */
#define NUMERIC_MAX_DISPLAY_SCALE 1000    /* what a division or round keeps */
#define NUMERIC_MIN_SIG_DIGITS    16      /* a quotient's least precision */
#define NUMERIC_DSCALE_MAX        16383   /* display scale a value may have */
#define NUMERIC_WEIGHT_MAX        32767   /* 131072 digits before the point */
#define NUMERIC_WEIGHT_MIN        (-32767)

typedef enum numeric_sign {
    NUMERIC_POS = 0,
    NUMERIC_NEG = 1,
    NUMERIC_NAN = 2,
} numeric_sign;

typedef struct numeric {
    uint16_t *digits; /* ndigits, malloc'd (NULL when none) */
    int ndigits;
    int weight; /* digits[0] counts 10000^weight */
    int dscale; /* decimal digits shown after the point, >= 0 */
    numeric_sign sign;
} numeric;

typedef enum numeric_status {
    NUMERIC_OK = 0,
    NUMERIC_ENOMEM,    /* out of memory */
    NUMERIC_ESYNTAX,   /* text that is not a numeric: 22P02 */
    NUMERIC_EOVERFLOW, /* past the weight or scale supported: 22003 */
    NUMERIC_EDIVZERO,  /* division or modulo by zero: 22012 */
    NUMERIC_ERANGE,    /* a conversion's target cannot hold it: 22003 */
    NUMERIC_EFIELD,    /* numeric(p,s) cannot hold it: 22003 */
    NUMERIC_EFORMAT,   /* a malformed binary or stored form */
    NUMERIC_EINFINITY, /* Infinity, which PostgreSQL has and keel lacks */
} numeric_status;

/* An empty value (zero, scale 0); numeric_free() leaves one too. */
#define NUMERIC_INIT                                                           \
    {                                                                          \
        NULL, 0, 0, 0, NUMERIC_POS                                             \
    }
void numeric_free(numeric *n);
/* A copy of a into *out. */
numeric_status numeric_copy(const numeric *a, numeric *out);

static inline bool numeric_is_nan(const numeric *n)
{
    return n->sign == NUMERIC_NAN;
}

/* ---- conversions ---- */

/* Text as PostgreSQL's numeric_in reads it: blanks, a sign, digits with
 * one point, an exponent (e.g. -1.5e3), or NaN.  NUMERIC_EINFINITY for
 * [+-]Infinity or inf, NUMERIC_ESYNTAX for anything else,
 * NUMERIC_EOVERFLOW past the weight
 * or display scale supported (PostgreSQL's: 131072 digits before the
 * point, 16383 after). */
numeric_status numeric_in(const char *p, size_t len, numeric *out);
/* At least the length of numeric_out()'s text (without a NUL). */
size_t numeric_out_len(const numeric *n);
/* Writes n's text at buf (room for numeric_out_len() bytes; no NUL);
 * returns its length.  PostgreSQL's form: no exponent, dscale digits after the
 * point, "NaN". */
size_t numeric_out(const numeric *n, char *buf);

numeric_status numeric_from_int64(int64_t v, numeric *out);
/* Rounds n to a whole number; NUMERIC_ERANGE when NaN or outside
 * [lo, hi]. */
numeric_status numeric_to_int64(const numeric *n, int64_t lo, int64_t hi,
                                int64_t *out);
/* A double as PostgreSQL's float8_numeric: its 15 significant digits;
 * NaN to NaN; NUMERIC_ERANGE for an infinity. */
numeric_status numeric_from_double(double d, numeric *out);
double numeric_to_double(const numeric *n);

/* ---- arithmetic ---- */

int numeric_cmp(const numeric *a, const numeric *b);
numeric_status numeric_add(const numeric *a, const numeric *b, numeric *out);
numeric_status numeric_sub(const numeric *a, const numeric *b, numeric *out);
numeric_status numeric_mul(const numeric *a, const numeric *b, numeric *out);
/* a / b at select_div_scale()'s scale. */
numeric_status numeric_div(const numeric *a, const numeric *b, numeric *out);
/* a / b rounded (or truncated) at scale rscale. */
numeric_status numeric_div_scale(const numeric *a, const numeric *b, int rscale,
                                 bool round, numeric *out);
/* The remainder of a / b truncated, with a's sign. */
numeric_status numeric_mod(const numeric *a, const numeric *b, numeric *out);
numeric_status numeric_neg(const numeric *a, numeric *out);
numeric_status numeric_abs(const numeric *a, numeric *out);
/* round(a, s) / trunc(a, s): s may be negative (to tens, hundreds);
 * the result's scale is max(s, 0). */
numeric_status numeric_round(const numeric *a, int s, numeric *out);
numeric_status numeric_trunc(const numeric *a, int s, numeric *out);
numeric_status numeric_ceil(const numeric *a, numeric *out);
numeric_status numeric_floor(const numeric *a, numeric *out);

/* ---- numeric(p,s) ---- */

/* PostgreSQL's typmod of numeric(p,s): ((p << 16) | (s & 0x7ff)) + 4,
 * the scale an 11-bit signed field; -1 for none. */
static inline int32_t numeric_typmod(int p, int s)
{
    return (int32_t)(((uint32_t)p << 16) | ((uint32_t)s & 0x7ff)) + 4;
}
static inline int numeric_typmod_precision(int32_t typmod)
{
    return (int)(((uint32_t)(typmod - 4) >> 16) & 0xffff);
}
static inline int numeric_typmod_scale(int32_t typmod)
{
    return (int)((((uint32_t)(typmod - 4) & 0x7ff) ^ 1024)) - 1024;
}
/* Rounds *n in place to typmod's scale; NUMERIC_EFIELD when it then has
 * more digits before the point than p - s allows. */
numeric_status numeric_apply_typmod(numeric *n, int32_t typmod);

/* ---- binary forms ---- */

/* PostgreSQL's send format: 8 + 2 * ndigits bytes. */
size_t numeric_send_len(const numeric *n);
void numeric_send(const numeric *n, unsigned char *buf);
/* PostgreSQL's receive: NUMERIC_EFORMAT for a bad length, sign, digit
 * or scale. */
numeric_status numeric_recv(const unsigned char *p, size_t len, numeric *out);

/*
 * keel's stored form (the bytes of a KEEL_NUMERIC keel_value): a class
 * byte (0x40 negative, 0x80 zero, 0xC0 positive, 0xFF NaN); for a
 * nonzero number the weight + 0x8000 then each digit + 1 as 16-bit
 * big-endian words, all complemented for a negative one, which ends with
 * 0xFFFF; last, the display scale as a 16-bit big-endian word.  All but
 * the last two bytes compare with memcmp() as the values do, shorter
 * first when one is a prefix of the other.
 */
size_t numeric_encoded_len(const numeric *n);
void numeric_encode(const numeric *n, unsigned char *buf);
numeric_status numeric_decode(const unsigned char *p, size_t len, numeric *out);
/* Compares two stored forms as numbers (their scales aside). */
int numeric_encoded_cmp(const unsigned char *a, size_t alen,
                        const unsigned char *b, size_t blen);

#endif /* KEEL_SQL_SQL_NUMERIC_H */
