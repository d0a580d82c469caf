/*
 * sql_numeric.c: arbitrary-precision decimals (sql_numeric.h).
 *
 * Values are base-10000 digit arrays.  Addition, subtraction and
 * multiplication work on them directly; division, rounding and text go
 * through a decimal expansion (one byte per decimal digit), where the
 * long division is the schoolbook one, a quotient digit at a time by
 * repeated subtraction: O(n * m) for an n-digit dividend and m-digit
 * divisor, which the sizes SQL meets (tens to a few thousand digits)
 * make cheap enough, and which is simple enough to be right.
 */
#include "sql/sql_numeric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- basics ----------------------------------------------------------- */

void numeric_free(numeric *n)
{
    free(n->digits);
    *n = (numeric)NUMERIC_INIT;
}

/* Gives *n room for nd digits (zeroed), dropping what it held. */
static numeric_status digits_alloc(numeric *n, int nd)
{
    free(n->digits);
    n->digits = NULL;
    n->ndigits = 0;
    if (nd > 0) {
        n->digits = calloc((size_t)nd, sizeof(uint16_t));
        if (n->digits == NULL)
            return NUMERIC_ENOMEM;
    }
    n->ndigits = nd;
    return NUMERIC_OK;
}

numeric_status numeric_copy(const numeric *a, numeric *out)
{
    numeric r = NUMERIC_INIT;

    if (digits_alloc(&r, a->ndigits) != NUMERIC_OK)
        return NUMERIC_ENOMEM;
    if (a->ndigits > 0)
        memcpy(r.digits, a->digits, (size_t)a->ndigits * sizeof(uint16_t));
    r.weight = a->weight;
    r.dscale = a->dscale;
    r.sign = a->sign;
    numeric_free(out);
    *out = r;
    return NUMERIC_OK;
}

static numeric_status make_nan(numeric *out)
{
    numeric_free(out);
    out->sign = NUMERIC_NAN;
    return NUMERIC_OK;
}

/* Drops leading and trailing zero digits; zero is positive with none.
 * Then checks the weight and scale against what is supported. */
static numeric_status finish(numeric *n)
{
    int lead = 0, nd = n->ndigits;

    if (n->sign == NUMERIC_NAN)
        return NUMERIC_OK;
    while (lead < nd && n->digits[lead] == 0)
        lead++;
    while (nd > lead && n->digits[nd - 1] == 0)
        nd--;
    if (lead == nd) {
        n->ndigits = 0;
        n->weight = 0;
        n->sign = NUMERIC_POS;
    } else {
        if (lead > 0)
            memmove(n->digits, n->digits + lead,
                    (size_t)(nd - lead) * sizeof(uint16_t));
        n->ndigits = nd - lead;
        n->weight -= lead;
    }
    if (n->weight > NUMERIC_WEIGHT_MAX || n->dscale > NUMERIC_DSCALE_MAX) {
        numeric_free(n);
        return NUMERIC_EOVERFLOW;
    }
    if (n->weight < NUMERIC_WEIGHT_MIN) { /* too small to hold: zero */
        n->ndigits = 0;
        n->weight = 0;
        n->sign = NUMERIC_POS;
    }
    return NUMERIC_OK;
}

/* floor(e / 4) for any e. */
static int fdiv4(int e)
{
    return e >= 0 ? e / 4 : -((-e + 3) / 4);
}

static const int pow10_4[4] = {1, 10, 100, 1000};

/* The decimal scale of n's digits: how many decimal places they reach. */
static int digit_scale(const numeric *n)
{
    int s = (n->ndigits - n->weight - 1) * NUMERIC_DEC_DIGITS;
    return s > 0 ? s : 0;
}

/* ---- decimal expansions ----------------------------------------------- */

/*
 * |n| as decimal digits, a leading zero first, then its integer part
 * (at least one digit), then `scale` digits after the point (those past
 * it dropped): *dd malloc'd, *len digits.
 */
static numeric_status to_dec(const numeric *n, int scale, uint8_t **dd,
                             int *len)
{
    int intdigits = n->weight >= 0 ? (n->weight + 1) * NUMERIC_DEC_DIGITS : 1;
    int total = 1 + intdigits + scale;
    uint8_t *p = calloc((size_t)total, 1);

    if (p == NULL)
        return NUMERIC_ENOMEM;
    for (int k = 1; k < total; k++) {
        int e = intdigits - k; /* the decimal exponent at k */
        int w = fdiv4(e);
        int i = n->weight - w;
        if (i >= 0 && i < n->ndigits)
            p[k] = (uint8_t)(n->digits[i] / pow10_4[e - 4 * w] % 10);
    }
    *dd = p;
    *len = total;
    return NUMERIC_OK;
}

/* The value dd (len decimal digits) / 10^scale with that sign and
 * display scale into *out. */
static numeric_status from_dec(const uint8_t *dd, int len, int scale,
                               numeric_sign sign, int dscale, numeric *out)
{
    numeric r = NUMERIC_INIT;
    int top, bottom;
    numeric_status st;

    if (len == 0) {
        numeric_free(out);
        out->dscale = dscale;
        return NUMERIC_OK;
    }
    top = fdiv4(len - 1 - scale);
    bottom = fdiv4(-scale);
    if (top - bottom + 1 > 1 << 20)
        return NUMERIC_EOVERFLOW;
    if (digits_alloc(&r, top - bottom + 1) != NUMERIC_OK)
        return NUMERIC_ENOMEM;
    for (int k = 0; k < len; k++) {
        int e = len - 1 - k - scale;
        int w = fdiv4(e);
        r.digits[top - w] =
            (uint16_t)(r.digits[top - w] + dd[k] * pow10_4[e - 4 * w]);
    }
    r.weight = top;
    r.sign = sign;
    r.dscale = dscale;
    st = finish(&r);
    if (st != NUMERIC_OK)
        return st;
    numeric_free(out);
    *out = r;
    return NUMERIC_OK;
}

/*
 * Rounds (or truncates) a to s decimal places (s < 0: to 10^-s) with
 * display scale dscale, half away from zero.
 */
static numeric_status round_to(const numeric *a, int s, bool round, int dscale,
                               numeric *out)
{
    uint8_t *dd;
    int len, t, keep;
    numeric_status st;

    if (a->sign == NUMERIC_NAN)
        return make_nan(out);
    /* Digits to the place after the last kept one, which decides. */
    t = s + 1 > 0 ? s + 1 : 0;
    st = to_dec(a, t, &dd, &len);
    if (st != NUMERIC_OK)
        return st;
    keep = len - (t - s);
    if (keep < 1) {
        memset(dd, 0, (size_t)len);
    } else {
        bool up = round && dd[keep] >= 5;
        memset(dd + keep, 0, (size_t)(len - keep));
        for (int k = keep - 1; up && k >= 0; k--) {
            up = dd[k] == 9;
            dd[k] = up ? 0 : (uint8_t)(dd[k] + 1);
        }
    }
    st = from_dec(dd, len, t, a->sign, dscale, out);
    free(dd);
    return st;
}

/* ---- text -------------------------------------------------------------- */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

numeric_status numeric_in(const char *p, size_t len, numeric *out)
{
    const char *end = p + len, *q;
    numeric_sign sign = NUMERIC_POS;
    uint8_t *dd;
    int nd = 0, frac = 0, scale, dscale;
    bool seen_point = false;
    long exponent = 0;
    numeric_status st;

    while (p < end && is_blank(*p))
        p++;
    while (end > p && is_blank(end[-1]))
        end--;
    if (end - p == 3 && (p[0] | 0x20) == 'n' && (p[1] | 0x20) == 'a' &&
        (p[2] | 0x20) == 'n')
        return make_nan(out);
    if (p < end && (*p == '+' || *p == '-')) {
        sign = *p == '-' ? NUMERIC_NEG : NUMERIC_POS;
        p++;
    }
    if ((end - p == 8 && strncasecmp(p, "infinity", 8) == 0) ||
        (end - p == 3 && strncasecmp(p, "inf", 3) == 0))
        return NUMERIC_EINFINITY;
    dd = malloc((size_t)(end - p) + 1);
    if (dd == NULL)
        return NUMERIC_ENOMEM;
    for (q = p; q < end; q++) {
        if (*q >= '0' && *q <= '9') {
            dd[nd++] = (uint8_t)(*q - '0');
            frac += seen_point;
        } else if (*q == '.' && !seen_point) {
            seen_point = true;
        } else {
            break;
        }
    }
    if (nd == 0)
        goto bad;
    if (q < end && (*q == 'e' || *q == 'E')) {
        bool neg = false;
        int ed = 0;
        q++;
        if (q < end && (*q == '+' || *q == '-'))
            neg = *q++ == '-';
        for (; q < end && *q >= '0' && *q <= '9'; q++, ed++)
            if (exponent <= 10000000)
                exponent = exponent * 10 + (*q - '0');
        if (ed == 0)
            goto bad;
        exponent = neg ? -exponent : exponent;
        /* Past any weight or scale a value may have. */
        if (q == end && (exponent > (NUMERIC_WEIGHT_MAX + 1) * 4 ||
                         exponent < -(NUMERIC_DSCALE_MAX + 4 + nd))) {
            free(dd);
            return NUMERIC_EOVERFLOW;
        }
    }
    if (q != end)
        goto bad;
    scale = frac - (int)exponent;
    dscale = scale > 0 ? scale : 0;
    if (dscale > NUMERIC_DSCALE_MAX) {
        free(dd);
        return NUMERIC_EOVERFLOW;
    }
    if (scale < 0) {
        /* 15e3: the digits, then zeros to the point. */
        uint8_t *w = realloc(dd, (size_t)nd + (size_t)-scale);
        if (w == NULL) {
            free(dd);
            return NUMERIC_ENOMEM;
        }
        dd = w;
        memset(dd + nd, 0, (size_t)-scale);
        nd += -scale;
        scale = 0;
    }
    st = from_dec(dd, nd, scale, sign, dscale, out);
    free(dd);
    return st;
bad:
    free(dd);
    return NUMERIC_ESYNTAX;
}

size_t numeric_out_len(const numeric *n)
{
    if (n->sign == NUMERIC_NAN)
        return 3;
    return 2 + (size_t)(n->weight >= 0 ? (n->weight + 1) * 4 : 1) + 1 +
           (size_t)n->dscale;
}

size_t numeric_out(const numeric *n, char *buf)
{
    size_t o = 0;
    int intdigits, k;

    if (n->sign == NUMERIC_NAN) {
        memcpy(buf, "NaN", 3);
        return 3;
    }
    if (n->sign == NUMERIC_NEG)
        buf[o++] = '-';
    /* The digits by hand rather than through to_dec(), to need no
     * memory: integer part, then dscale places. */
    intdigits = n->weight >= 0 ? (n->weight + 1) * NUMERIC_DEC_DIGITS : 1;
    {
        bool started = false;
        for (k = 0; k < intdigits + n->dscale; k++) {
            int e = intdigits - 1 - k;
            int w = fdiv4(e), i = n->weight - w, d = 0;
            if (i >= 0 && i < n->ndigits)
                d = n->digits[i] / pow10_4[e - 4 * w] % 10;
            if (e == -1)
                buf[o++] = '.';
            if (e >= 0 && !started && d == 0 && e > 0)
                continue;
            started = true;
            buf[o++] = (char)('0' + d);
        }
    }
    return o;
}

/* ---- integers and doubles --------------------------------------------- */

numeric_status numeric_from_int64(int64_t v, numeric *out)
{
    numeric r = NUMERIC_INIT;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    uint16_t tmp[5];
    int nd = 0;

    while (u > 0) {
        tmp[nd++] = (uint16_t)(u % NUMERIC_NBASE);
        u /= NUMERIC_NBASE;
    }
    if (digits_alloc(&r, nd) != NUMERIC_OK)
        return NUMERIC_ENOMEM;
    for (int i = 0; i < nd; i++)
        r.digits[i] = tmp[nd - 1 - i];
    r.weight = nd - 1;
    r.sign = v < 0 ? NUMERIC_NEG : NUMERIC_POS;
    (void)finish(&r);
    numeric_free(out);
    *out = r;
    return NUMERIC_OK;
}

numeric_status numeric_to_int64(const numeric *n, int64_t lo, int64_t hi,
                                int64_t *out)
{
    numeric r = NUMERIC_INIT;
    __int128 v = 0;
    numeric_status st;

    if (n->sign == NUMERIC_NAN)
        return NUMERIC_ERANGE;
    st = round_to(n, 0, true, 0, &r);
    if (st != NUMERIC_OK)
        return st;
    if (r.weight > 5) {
        numeric_free(&r);
        return NUMERIC_ERANGE;
    }
    for (int w = r.weight, i = 0; w >= 0; w--, i++)
        v = v * NUMERIC_NBASE + (i < r.ndigits ? r.digits[i] : 0);
    if (r.sign == NUMERIC_NEG)
        v = -v;
    numeric_free(&r);
    if (v < lo || v > hi)
        return NUMERIC_ERANGE;
    *out = (int64_t)v;
    return NUMERIC_OK;
}

numeric_status numeric_from_double(double d, numeric *out)
{
    char buf[64];
    int n;

    if (isnan(d))
        return make_nan(out);
    if (isinf(d))
        return NUMERIC_ERANGE;
    n = snprintf(buf, sizeof(buf), "%.15g", d);
    return numeric_in(buf, (size_t)n, out);
}

double numeric_to_double(const numeric *n)
{
    char stack[128];
    size_t len = numeric_out_len(n);
    char *buf = len < sizeof(stack) ? stack : malloc(len + 1);
    double d;

    if (n->sign == NUMERIC_NAN)
        return NAN;
    if (buf == NULL)
        return NAN;
    len = numeric_out(n, buf);
    buf[len] = '\0';
    d = strtod(buf, NULL);
    if (buf != stack)
        free(buf);
    return d;
}

/* ---- comparison, addition and subtraction ------------------------------ */

static int cmp_abs(const numeric *a, const numeric *b)
{
    if (a->ndigits == 0 || b->ndigits == 0)
        return (a->ndigits != 0) - (b->ndigits != 0);
    if (a->weight != b->weight)
        return a->weight > b->weight ? 1 : -1;
    for (int i = 0; i < a->ndigits && i < b->ndigits; i++)
        if (a->digits[i] != b->digits[i])
            return a->digits[i] > b->digits[i] ? 1 : -1;
    return (a->ndigits > b->ndigits) - (a->ndigits < b->ndigits);
}

int numeric_cmp(const numeric *a, const numeric *b)
{
    int c;

    if (a->sign == NUMERIC_NAN || b->sign == NUMERIC_NAN)
        return (a->sign == NUMERIC_NAN) - (b->sign == NUMERIC_NAN);
    if (a->ndigits == 0 && b->ndigits == 0)
        return 0;
    if (a->ndigits == 0)
        return b->sign == NUMERIC_NEG ? 1 : -1;
    if (b->ndigits == 0)
        return a->sign == NUMERIC_NEG ? -1 : 1;
    if (a->sign != b->sign)
        return a->sign == NUMERIC_NEG ? -1 : 1;
    c = cmp_abs(a, b);
    return a->sign == NUMERIC_NEG ? -c : c;
}

/* The digit of n counting 10000^w (0 outside its digits). */
static inline int digit_at(const numeric *n, int w)
{
    int i = n->weight - w;

    return i >= 0 && i < n->ndigits ? n->digits[i] : 0;
}

/* |a| + |b| (sub: |a| - |b|, where |a| >= |b|) into *r's digits. */
static numeric_status add_sub_abs(const numeric *a, const numeric *b, bool sub,
                                  numeric *r)
{
    int hi = (a->weight > b->weight ? a->weight : b->weight) + 1;
    int alo = a->weight - a->ndigits + 1, blo = b->weight - b->ndigits + 1;
    int lo = a->ndigits == 0   ? blo
             : b->ndigits == 0 ? alo
             : alo < blo       ? alo
                               : blo;
    int carry = 0;

    if (digits_alloc(r, hi - lo + 1) != NUMERIC_OK)
        return NUMERIC_ENOMEM;
    for (int w = lo; w <= hi; w++) {
        int d = sub ? digit_at(a, w) - digit_at(b, w) + carry
                    : digit_at(a, w) + digit_at(b, w) + carry;
        carry = 0;
        if (d >= NUMERIC_NBASE) {
            d -= NUMERIC_NBASE;
            carry = 1;
        } else if (d < 0) {
            d += NUMERIC_NBASE;
            carry = -1;
        }
        r->digits[hi - w] = (uint16_t)d;
    }
    r->weight = hi;
    return NUMERIC_OK;
}

/* a + b, b's sign flipped when negate_b. */
static numeric_status add_signed(const numeric *a, const numeric *b,
                                 bool negate_b, numeric *out)
{
    numeric r = NUMERIC_INIT;
    numeric_sign bs;
    numeric_status st;

    if (a->sign == NUMERIC_NAN || b->sign == NUMERIC_NAN)
        return make_nan(out);
    bs = negate_b && b->ndigits > 0 ? (numeric_sign)(1 - b->sign) : b->sign;
    if (a->sign == bs || a->ndigits == 0 || b->ndigits == 0) {
        st = add_sub_abs(a, b, false, &r);
        r.sign = a->ndigits == 0 ? bs : a->sign;
    } else if (cmp_abs(a, b) >= 0) {
        st = add_sub_abs(a, b, true, &r);
        r.sign = a->sign;
    } else {
        st = add_sub_abs(b, a, true, &r);
        r.sign = bs;
    }
    if (st != NUMERIC_OK) {
        numeric_free(&r);
        return st;
    }
    r.dscale = a->dscale > b->dscale ? a->dscale : b->dscale;
    st = finish(&r);
    if (st != NUMERIC_OK)
        return st;
    numeric_free(out);
    *out = r;
    return NUMERIC_OK;
}

numeric_status numeric_add(const numeric *a, const numeric *b, numeric *out)
{
    return add_signed(a, b, false, out);
}

numeric_status numeric_sub(const numeric *a, const numeric *b, numeric *out)
{
    return add_signed(a, b, true, out);
}

/* ---- multiplication ------------------------------------------------------ */

numeric_status numeric_mul(const numeric *a, const numeric *b, numeric *out)
{
    numeric r = NUMERIC_INIT;
    uint64_t *acc;
    int n;
    numeric_status st;

    if (a->sign == NUMERIC_NAN || b->sign == NUMERIC_NAN)
        return make_nan(out);
    n = a->ndigits + b->ndigits;
    if (digits_alloc(&r, n) != NUMERIC_OK)
        return NUMERIC_ENOMEM;
    acc = calloc((size_t)n + 1, sizeof(uint64_t));
    if (acc == NULL) {
        numeric_free(&r);
        return NUMERIC_ENOMEM;
    }
    /* Each product is below 10^8: a column of up to 2^30 of them fits. */
    for (int i = 0; i < a->ndigits; i++)
        for (int j = 0; j < b->ndigits; j++)
            acc[i + j + 1] += (uint64_t)a->digits[i] * b->digits[j];
    for (int k = n - 1; k > 0; k--) {
        acc[k - 1] += acc[k] / NUMERIC_NBASE;
        acc[k] %= NUMERIC_NBASE;
    }
    for (int k = 0; k < n; k++)
        r.digits[k] = (uint16_t)acc[k];
    free(acc);
    r.weight = a->weight + b->weight + 1;
    r.sign = a->sign == b->sign ? NUMERIC_POS : NUMERIC_NEG;
    r.dscale = a->dscale + b->dscale;
    if (r.dscale > NUMERIC_DSCALE_MAX)
        r.dscale = NUMERIC_DSCALE_MAX;
    st = finish(&r);
    if (st != NUMERIC_OK)
        return st;
    if (digit_scale(&r) > r.dscale) {
        /* Only when an operand held digits past its scale. */
        numeric t = NUMERIC_INIT;
        st = round_to(&r, r.dscale, true, r.dscale, &t);
        numeric_free(&r);
        if (st != NUMERIC_OK)
            return st;
        r = t;
    }
    numeric_free(out);
    *out = r;
    return NUMERIC_OK;
}

/* ---- division ------------------------------------------------------------ */

/* PostgreSQL's select_div_scale(): enough places for at least 16
 * significant digits, and no fewer than either operand shows. */
static int div_scale(const numeric *a, const numeric *b)
{
    int w1 = 0, w2 = 0, f1 = 0, f2 = 0, qweight, rscale;

    if (a->ndigits > 0) {
        w1 = a->weight;
        f1 = a->digits[0];
    }
    if (b->ndigits > 0) {
        w2 = b->weight;
        f2 = b->digits[0];
    }
    qweight = w1 - w2;
    if (f1 <= f2)
        qweight--;
    rscale = NUMERIC_MIN_SIG_DIGITS - qweight * NUMERIC_DEC_DIGITS;
    if (rscale < a->dscale)
        rscale = a->dscale;
    if (rscale < b->dscale)
        rscale = b->dscale;
    if (rscale < 0)
        rscale = 0;
    if (rscale > NUMERIC_MAX_DISPLAY_SCALE)
        rscale = NUMERIC_MAX_DISPLAY_SCALE;
    return rscale;
}

/* Packs nd decimal digits (most significant first) into base-10000
 * limbs, the first limb taking what is left over: nl of them. */
static void dec_pack(const uint8_t *d, int nd, int32_t *l, int nl)
{
    int k = nd;

    for (int i = nl - 1; i >= 0; i--) {
        int32_t v = 0, m = 1;
        for (int j = 0; j < 4 && k > 0; j++, m *= 10)
            v += d[--k] * m;
        l[i] = v;
    }
}

/*
 * q (nn decimal digits, leading zeros included) = floor(N / D): N of nn
 * decimal digits, D of dn whose first is not zero.  Knuth's algorithm D
 * (The Art of Computer Programming, 4.3.1) in base 10000: each quotient
 * limb estimated from the remainder's two leading limbs, corrected at
 * most twice, then its multiple of D taken away.  NUMERIC_ENOMEM when
 * memory is short.
 */
static numeric_status dec_divide(const uint8_t *N, int nn, const uint8_t *D,
                                 int dn, uint8_t *q)
{
    const int64_t B = 10000;
    int ul = (nn + 3) / 4, n = (dn + 3) / 4, ql = ul - n + 1;
    int32_t *u = calloc((size_t)ul + 2, sizeof(*u));
    int32_t *v = calloc((size_t)n + 1, sizeof(*v));
    int32_t *ql_limbs = calloc((size_t)(ql > 0 ? ql : 1), sizeof(*u));
    numeric_status st = NUMERIC_OK;

    if (u == NULL || v == NULL || ql_limbs == NULL) {
        st = NUMERIC_ENOMEM;
        goto done;
    }
    memset(q, 0, (size_t)nn);
    if (ql <= 0)
        goto done; /* D has more limbs than N: the quotient is 0 */
    dec_pack(N, nn, u + 1, ul);
    dec_pack(D, dn, v, n);
    if (n == 1) {
        int64_t rem = 0;
        for (int i = 0; i < ul; i++) {
            int64_t cur = rem * B + u[i + 1];
            ql_limbs[i] = (int32_t)(cur / v[0]);
            rem = cur % v[0];
        }
    } else {
        /* normalize: v's first limb at least B / 2 */
        int64_t f = B / ((int64_t)v[0] + 1), c = 0;
        for (int i = n - 1; i >= 0; i--) {
            int64_t x = v[i] * f + c;
            v[i] = (int32_t)(x % B);
            c = x / B;
        }
        c = 0;
        for (int i = ul; i >= 0; i--) {
            int64_t x = u[i] * f + c;
            u[i] = (int32_t)(x % B);
            c = x / B;
        }
        for (int j = 0; j < ql; j++) {
            int64_t num = (int64_t)u[j] * B + u[j + 1];
            int64_t qhat = num / v[0], rhat = num % v[0], carry = 0,
                    borrow = 0, top;
            while (qhat >= B || qhat * v[1] > rhat * B + u[j + 2]) {
                qhat--;
                rhat += v[0];
                if (rhat >= B)
                    break;
            }
            /* u[j .. j + n] -= qhat * v */
            for (int i = n - 1; i >= 0; i--) {
                int64_t p = qhat * v[i] + carry, x;
                carry = p / B;
                x = u[j + 1 + i] - p % B - borrow;
                borrow = x < 0;
                u[j + 1 + i] = (int32_t)(x < 0 ? x + B : x);
            }
            top = u[j] - carry - borrow;
            if (top < 0) {
                /* qhat was one too many: add v back */
                int64_t cc = 0;
                qhat--;
                for (int i = n - 1; i >= 0; i--) {
                    int64_t x = (int64_t)u[j + 1 + i] + v[i] + cc;
                    cc = x >= B;
                    u[j + 1 + i] = (int32_t)(cc ? x - B : x);
                }
                top += cc;
            }
            u[j] = (int32_t)top;
            ql_limbs[j] = (int32_t)qhat;
        }
    }
    /* the quotient's limbs, 4 digits each, right-aligned into q */
    for (int i = ql - 1, k = nn - 1; i >= 0 && k >= 0; i--) {
        int32_t x = ql_limbs[i];
        for (int j = 0; j < 4 && k >= 0; j++, k--) {
            q[k] = (uint8_t)(x % 10);
            x /= 10;
        }
    }
done:
    free(u);
    free(v);
    free(ql_limbs);
    return st;
}

numeric_status numeric_div_scale(const numeric *a, const numeric *b, int rscale,
                                 bool round, numeric *out)
{
    uint8_t *na = NULL, *nb = NULL, *q = NULL;
    int la, lb, sa, sb, t, k, dn;
    const uint8_t *d;
    numeric_status st;
    numeric_sign sign;

    if (a->sign == NUMERIC_NAN || b->sign == NUMERIC_NAN)
        return make_nan(out);
    if (b->ndigits == 0)
        return NUMERIC_EDIVZERO;
    if (rscale < 0)
        rscale = 0;
    sign = a->sign == b->sign ? NUMERIC_POS : NUMERIC_NEG;
    t = rscale + (round ? 1 : 0);
    sa = digit_scale(a);
    sb = digit_scale(b);
    /* q = |a| * 10^sa * 10^k / (|b| * 10^sb), k = t - sa + sb, is the
     * quotient to t places; a negative k scales the divisor instead. */
    k = t - sa + sb;
    st = to_dec(a, sa + (k > 0 ? k : 0), &na, &la);
    if (st == NUMERIC_OK)
        st = to_dec(b, sb + (k < 0 ? -k : 0), &nb, &lb);
    if (st != NUMERIC_OK)
        goto done;
    d = nb;
    dn = lb;
    while (dn > 1 && d[0] == 0) {
        d++;
        dn--;
    }
    q = calloc((size_t)la + 1, 1);
    if (q == NULL) {
        st = NUMERIC_ENOMEM;
        goto done;
    }
    st = dec_divide(na, la, d, dn, q + 1);
    if (st != NUMERIC_OK)
        goto done;
    /* q[0] is the guard zero a rounding carries into. */
    if (round) {
        bool up = q[la] >= 5;
        q[la] = 0;
        for (int i = la - 1; up && i >= 0; i--) {
            up = q[i] == 9;
            q[i] = up ? 0 : (uint8_t)(q[i] + 1);
        }
        st = from_dec(q, la, rscale, sign, rscale, out);
    } else {
        st = from_dec(q, la + 1, rscale, sign, rscale, out);
    }
done:
    free(na);
    free(nb);
    free(q);
    return st;
}

numeric_status numeric_div(const numeric *a, const numeric *b, numeric *out)
{
    if (a->sign == NUMERIC_NAN || b->sign == NUMERIC_NAN)
        return make_nan(out);
    return numeric_div_scale(a, b, div_scale(a, b), true, out);
}

numeric_status numeric_mod(const numeric *a, const numeric *b, numeric *out)
{
    numeric q = NUMERIC_INIT, p = NUMERIC_INIT;
    numeric_status st;

    if (a->sign == NUMERIC_NAN || b->sign == NUMERIC_NAN)
        return make_nan(out);
    st = numeric_div_scale(a, b, 0, false, &q);
    if (st == NUMERIC_OK)
        st = numeric_mul(b, &q, &p);
    if (st == NUMERIC_OK)
        st = numeric_sub(a, &p, out);
    numeric_free(&q);
    numeric_free(&p);
    return st;
}

/* ---- sign, rounding ------------------------------------------------------ */

numeric_status numeric_neg(const numeric *a, numeric *out)
{
    numeric_status st = numeric_copy(a, out);

    if (st == NUMERIC_OK && out->sign != NUMERIC_NAN && out->ndigits > 0)
        out->sign = (numeric_sign)(1 - out->sign);
    return st;
}

numeric_status numeric_abs(const numeric *a, numeric *out)
{
    numeric_status st = numeric_copy(a, out);

    if (st == NUMERIC_OK && out->sign == NUMERIC_NEG)
        out->sign = NUMERIC_POS;
    return st;
}

static int clamp_scale(int s)
{
    return s < -NUMERIC_MAX_DISPLAY_SCALE  ? -NUMERIC_MAX_DISPLAY_SCALE
           : s > NUMERIC_MAX_DISPLAY_SCALE ? NUMERIC_MAX_DISPLAY_SCALE
                                           : s;
}

numeric_status numeric_round(const numeric *a, int s, numeric *out)
{
    s = clamp_scale(s);
    return round_to(a, s, true, s > 0 ? s : 0, out);
}

numeric_status numeric_trunc(const numeric *a, int s, numeric *out)
{
    s = clamp_scale(s);
    return round_to(a, s, false, s > 0 ? s : 0, out);
}

/* ceil (up) or floor: the whole number toward +inf or -inf. */
static numeric_status ceil_floor(const numeric *a, bool up, numeric *out)
{
    numeric t = NUMERIC_INIT, one = NUMERIC_INIT;
    numeric_status st;

    if (a->sign == NUMERIC_NAN)
        return make_nan(out);
    st = round_to(a, 0, false, 0, &t);
    if (st != NUMERIC_OK)
        return st;
    if (numeric_cmp(&t, a) != 0 && (a->sign == NUMERIC_NEG) != up) {
        st = numeric_from_int64(up ? 1 : -1, &one);
        if (st == NUMERIC_OK)
            st = numeric_add(&t, &one, &t);
        numeric_free(&one);
        t.dscale = 0;
    }
    if (st != NUMERIC_OK) {
        numeric_free(&t);
        return st;
    }
    numeric_free(out);
    *out = t;
    return NUMERIC_OK;
}

numeric_status numeric_ceil(const numeric *a, numeric *out)
{
    return ceil_floor(a, true, out);
}

numeric_status numeric_floor(const numeric *a, numeric *out)
{
    return ceil_floor(a, false, out);
}

numeric_status numeric_apply_typmod(numeric *n, int32_t typmod)
{
    int p, s, maxdigits, ddigits;
    numeric r = NUMERIC_INIT;
    numeric_status st;

    if (typmod < 4 || n->sign == NUMERIC_NAN)
        return NUMERIC_OK;
    p = numeric_typmod_precision(typmod);
    s = numeric_typmod_scale(typmod);
    st = round_to(n, s, true, s > 0 ? s : 0, &r);
    if (st != NUMERIC_OK)
        return st;
    maxdigits = p - s;
    if (r.ndigits > 0 && r.weight >= 0) {
        ddigits = (r.weight + 1) * NUMERIC_DEC_DIGITS;
        for (int i = 3; i > 0 && r.digits[0] < pow10_4[i]; i--)
            ddigits--;
        if (ddigits > maxdigits) {
            numeric_free(&r);
            return NUMERIC_EFIELD;
        }
    }
    numeric_free(n);
    *n = r;
    return NUMERIC_OK;
}

/* ---- binary forms ----------------------------------------------------------
 */

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static unsigned get16(const unsigned char *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

size_t numeric_send_len(const numeric *n)
{
    return 8 + 2 * (size_t)n->ndigits;
}

void numeric_send(const numeric *n, unsigned char *buf)
{
    put16(buf, (unsigned)n->ndigits);
    put16(buf + 2, (unsigned)(uint16_t)(int16_t)n->weight);
    put16(buf + 4, n->sign == NUMERIC_NAN   ? 0xC000
                   : n->sign == NUMERIC_NEG ? 0x4000
                                            : 0);
    put16(buf + 6, (unsigned)n->dscale);
    for (int i = 0; i < n->ndigits; i++)
        put16(buf + 8 + 2 * i, n->digits[i]);
}

numeric_status numeric_recv(const unsigned char *p, size_t len, numeric *out)
{
    numeric r = NUMERIC_INIT;
    unsigned nd, sign, dscale;
    numeric_status st;

    if (len < 8)
        return NUMERIC_EFORMAT;
    nd = get16(p);
    sign = get16(p + 4);
    dscale = get16(p + 6);
    if (len != 8 + 2 * (size_t)nd ||
        (sign != 0 && sign != 0x4000 && sign != 0xC000) ||
        dscale > NUMERIC_DSCALE_MAX)
        return NUMERIC_EFORMAT;
    if (sign == 0xC000)
        return make_nan(out);
    if (digits_alloc(&r, (int)nd) != NUMERIC_OK)
        return NUMERIC_ENOMEM;
    for (unsigned i = 0; i < nd; i++) {
        unsigned d = get16(p + 8 + 2 * i);
        if (d >= NUMERIC_NBASE) {
            numeric_free(&r);
            return NUMERIC_EFORMAT;
        }
        r.digits[i] = (uint16_t)d;
    }
    r.weight = (int16_t)get16(p + 2);
    r.sign = sign == 0x4000 ? NUMERIC_NEG : NUMERIC_POS;
    r.dscale = (int)dscale;
    st = finish(&r);
    if (st != NUMERIC_OK)
        return st;
    /* Digits the scale would hide are dropped, as PostgreSQL does. */
    if (digit_scale(&r) > r.dscale) {
        st = round_to(&r, r.dscale, false, r.dscale, out);
        numeric_free(&r);
        return st;
    }
    numeric_free(out);
    *out = r;
    return NUMERIC_OK;
}

/* ---- the stored form --------------------------------------------------------
 */

#define ENC_NEG  0x40
#define ENC_ZERO 0x80
#define ENC_POS  0xC0
#define ENC_NAN  0xFF

size_t numeric_encoded_len(const numeric *n)
{
    if (n->sign == NUMERIC_NAN || n->ndigits == 0)
        return 3;
    return 1 + 2 + 2 * (size_t)n->ndigits + (n->sign == NUMERIC_NEG ? 2 : 0) +
           2;
}

void numeric_encode(const numeric *n, unsigned char *buf)
{
    size_t o = 1;
    unsigned flip;

    if (n->sign == NUMERIC_NAN || n->ndigits == 0) {
        buf[0] = n->sign == NUMERIC_NAN ? ENC_NAN : ENC_ZERO;
        put16(buf + 1, (unsigned)n->dscale);
        return;
    }
    flip = n->sign == NUMERIC_NEG ? 0xFFFF : 0;
    buf[0] = n->sign == NUMERIC_NEG ? ENC_NEG : ENC_POS;
    put16(buf + o, ((unsigned)(n->weight + 0x8000)) ^ flip);
    o += 2;
    for (int i = 0; i < n->ndigits; i++, o += 2)
        put16(buf + o, ((unsigned)n->digits[i] + 1) ^ flip);
    if (flip) {
        put16(buf + o, 0xFFFF);
        o += 2;
    }
    put16(buf + o, (unsigned)n->dscale);
}

numeric_status numeric_decode(const unsigned char *p, size_t len, numeric *out)
{
    numeric r = NUMERIC_INIT;
    unsigned flip;
    size_t body;
    int nd;

    if (len < 3)
        return NUMERIC_EFORMAT;
    if (p[0] == ENC_NAN || p[0] == ENC_ZERO) {
        if (len != 3)
            return NUMERIC_EFORMAT;
        numeric_free(out);
        out->sign = p[0] == ENC_NAN ? NUMERIC_NAN : NUMERIC_POS;
        out->dscale = (int)get16(p + 1);
        return NUMERIC_OK;
    }
    if (p[0] != ENC_POS && p[0] != ENC_NEG)
        return NUMERIC_EFORMAT;
    flip = p[0] == ENC_NEG ? 0xFFFF : 0;
    /* class, weight, digits, [terminator], scale */
    body = len - 1 - 2 - 2 - (flip ? 2 : 0);
    if (len < 1 + 2 + 2 + (flip ? 2u : 0u) + 2 || body % 2 != 0 ||
        (flip && get16(p + len - 4) != 0xFFFF))
        return NUMERIC_EFORMAT;
    nd = (int)(body / 2);
    if (digits_alloc(&r, nd) != NUMERIC_OK)
        return NUMERIC_ENOMEM;
    r.weight = (int)(get16(p + 1) ^ flip) - 0x8000;
    for (int i = 0; i < nd; i++) {
        unsigned d = get16(p + 3 + 2 * (size_t)i) ^ flip;
        if (d < 1 || d > NUMERIC_NBASE) {
            numeric_free(&r);
            return NUMERIC_EFORMAT;
        }
        r.digits[i] = (uint16_t)(d - 1);
    }
    r.sign = flip ? NUMERIC_NEG : NUMERIC_POS;
    r.dscale = (int)get16(p + len - 2);
    numeric_free(out);
    *out = r;
    return NUMERIC_OK;
}

int numeric_encoded_cmp(const unsigned char *a, size_t alen,
                        const unsigned char *b, size_t blen)
{
    size_t al = alen >= 2 ? alen - 2 : 0, bl = blen >= 2 ? blen - 2 : 0;
    size_t n = al < bl ? al : bl;
    int c = n > 0 ? memcmp(a, b, n) : 0;

    if (c != 0)
        return c < 0 ? -1 : 1;
    return (al > bl) - (al < bl);
}
