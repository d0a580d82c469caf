/*
 * sql_interval.c: the interval type, as PostgreSQL's: months, days and
 * microseconds kept apart (a month is not a fixed number of days, nor a
 * day of hours across a zone change), compared as a span of 30-day
 * months and 24-hour days.  A value's 16 bytes are held in v.s, as
 * numeric's stored form is: microseconds (int64), days, months (int32).
 *
 * In: PostgreSQL's "postgres" input of quantities and units ('1 year 2
 * mons', '3 days 04:05:06.5', '-1 day', '2 hours ago', '00:30'), its
 * abbreviations and plurals.  Out: its "postgres" style ('1 year 2 mons 3
 * days 04:05:06.5').  Arithmetic: timestamp, timestamptz and date plus or
 * minus an interval (months first, the day clamped to the month's end,
 * then days, then time), timestamp minus timestamp, date plus or minus
 * days and date minus date, interval plus, minus, times and divided by a
 * number.  An interval cannot be a column's type yet.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

#define USECS_PER_SEC 1000000LL

typedef struct interval {
    int64_t us;
    int32_t days;
    int32_t months;
} interval;

static keel_status put(sql_session *s, const interval *iv, sql_value *out)
{
    char *p = sql_alloc(&s->arena, sizeof(*iv));

    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memcpy(p, iv, sizeof(*iv));
    out->type = SQL_TYPE_INTERVAL;
    out->isnull = false;
    out->v.s.p = p;
    out->v.s.len = sizeof(*iv);
    return KEEL_OK;
}

static interval get(const sql_value *v)
{
    interval iv = {0, 0, 0};

    if (v->v.s.len == sizeof(iv))
        memcpy(&iv, v->v.s.p, sizeof(iv));
    return iv;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A unit's microseconds, days or months per one (exactly one set). */
typedef struct unit_def {
    const char *name;
    int64_t us;
    int32_t days, months;
} unit_def;

static const unit_def units[] = {
    {"microsecond", 1, 0, 0},        {"microseconds", 1, 0, 0},
    {"us", 1, 0, 0},                 {"usec", 1, 0, 0},
    {"usecs", 1, 0, 0},              {"millisecond", 1000, 0, 0},
    {"milliseconds", 1000, 0, 0},    {"ms", 1000, 0, 0},
    {"msec", 1000, 0, 0},            {"msecs", 1000, 0, 0},
    {"second", USECS_PER_SEC, 0, 0}, {"seconds", USECS_PER_SEC, 0, 0},
    {"sec", USECS_PER_SEC, 0, 0},    {"secs", USECS_PER_SEC, 0, 0},
    {"s", USECS_PER_SEC, 0, 0},      {"minute", 60 * USECS_PER_SEC, 0, 0},
    {"minutes", 60 * USECS_PER_SEC, 0, 0},
    {"min", 60 * USECS_PER_SEC, 0, 0},
    {"mins", 60 * USECS_PER_SEC, 0, 0},
    {"m", 60 * USECS_PER_SEC, 0, 0},
    {"hour", 3600 * USECS_PER_SEC, 0, 0},
    {"hours", 3600 * USECS_PER_SEC, 0, 0},
    {"hr", 3600 * USECS_PER_SEC, 0, 0},
    {"hrs", 3600 * USECS_PER_SEC, 0, 0},
    {"h", 3600 * USECS_PER_SEC, 0, 0},
    {"day", 0, 1, 0},                {"days", 0, 1, 0},
    {"d", 0, 1, 0},                  {"week", 0, 7, 0},
    {"weeks", 0, 7, 0},              {"w", 0, 7, 0},
    {"month", 0, 0, 1},              {"months", 0, 0, 1},
    {"mon", 0, 0, 1},                {"mons", 0, 0, 1},
    {"year", 0, 0, 12},              {"years", 0, 0, 12},
    {"yr", 0, 0, 12},                {"yrs", 0, 0, 12},
    {"y", 0, 0, 12},                 {"decade", 0, 0, 120},
    {"decades", 0, 0, 120},          {"century", 0, 0, 1200},
    {"centuries", 0, 0, 1200},       {"millennium", 0, 0, 12000},
    {"millennia", 0, 0, 12000},      {"millenniums", 0, 0, 12000},
};

static const unit_def *unit_find(const char *w, size_t n)
{
    char low[16];

    if (n == 0 || n >= sizeof(low))
        return NULL;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] - 'A' + 'a' : w[i]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(units[i].name, low) == 0)
            return &units[i];
    return NULL;
}

/* Adds q units of u (q may have a fraction, which spills down: a month's
 * to 30 days, a day's to 24 hours, as PostgreSQL's input does). */
static bool add_units(interval *iv, double q, const unit_def *u)
{
    double whole, frac;

    if (u->months != 0) {
        double m = q * u->months;
        whole = trunc(m);
        frac = m - whole;
        if (fabs(whole) > INT32_MAX)
            return false;
        iv->months += (int32_t)whole;
        q = frac * 30; /* days */
        whole = trunc(q);
        iv->days += (int32_t)whole;
        iv->us += (int64_t)llround((q - whole) * (double)USECS_PER_DAY);
        return true;
    }
    if (u->days != 0) {
        double d = q * u->days;
        whole = trunc(d);
        if (fabs(whole) > INT32_MAX)
            return false;
        iv->days += (int32_t)whole;
        iv->us += (int64_t)llround((d - whole) * (double)USECS_PER_DAY);
        return true;
    }
    if (fabs(q * (double)u->us) > 9.2e18)
        return false;
    iv->us += (int64_t)llround(q * (double)u->us);
    return true;
}

/* hh:mm[:ss[.frac]] at *p, its sign sign; false if it is not one. */
static bool read_time(const char **p, const char *end, int sign, int64_t *us)
{
    const char *q = *p;
    int64_t part[3] = {0, 0, 0};
    int n = 0;
    double frac = 0;

    while (n < 3) {
        int digits = 0;
        while (q < end && *q >= '0' && *q <= '9') {
            part[n] = part[n] * 10 + (*q - '0');
            q++;
            digits++;
            if (part[n] > 100000000)
                return false;
        }
        if (digits == 0)
            return false;
        n++;
        if (n < 3 && q < end && *q == ':')
            q++;
        else
            break;
    }
    if (n < 2)
        return false;
    if (n == 3 && q < end && *q == '.') {
        double scale = 0.1;
        q++;
        while (q < end && *q >= '0' && *q <= '9') {
            frac += (*q - '0') * scale;
            scale /= 10;
            q++;
        }
    }
    *us = sign * ((part[0] * 3600 + part[1] * 60 + part[2]) * USECS_PER_SEC +
                  (int64_t)llround(frac * USECS_PER_SEC));
    *p = q;
    return true;
}

keel_status sql_interval_in(sql_session *s, const char *text, uint32_t len,
                            int32_t location, sql_value *out)
{
    const char *p = text, *end = text + len;
    interval iv = {0, 0, 0};
    bool any = false, ago = false;

    while (p < end) {
        const char *w;
        double q = 0;
        int sign = 1;
        char *numend;
        char buf[64];
        size_t n;
        while (p < end && is_blank(*p))
            p++;
        if (p == end)
            break;
        if (*p == '@') {
            p++;
            continue;
        }
        if (end - p >= 3 && strncasecmp(p, "ago", 3) == 0 &&
            (end - p == 3 || is_blank(p[3]))) {
            ago = true;
            p += 3;
            continue;
        }
        w = p;
        if (*p == '+' || *p == '-') {
            sign = *p == '-' ? -1 : 1;
            p++;
        }
        /* A time: digits, then a colon. */
        {
            const char *t = p;
            while (t < end && *t >= '0' && *t <= '9')
                t++;
            if (t < end && *t == ':' && t > p) {
                int64_t us;
                if (!read_time(&p, end, sign, &us))
                    goto bad;
                iv.us += us;
                any = true;
                continue;
            }
        }
        n = 0;
        while (p < end && !is_blank(*p) && !((*p >= 'a' && *p <= 'z') ||
                                             (*p >= 'A' && *p <= 'Z')) &&
               n < sizeof(buf) - 1)
            buf[n++] = *p++;
        buf[n] = '\0';
        if (n == 0)
            goto bad;
        q = strtod(buf, &numend);
        if (*numend != '\0' || !isfinite(q))
            goto bad;
        q *= sign;
        while (p < end && is_blank(*p))
            p++;
        w = p;
        while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            p++;
        if (p == w) {
            /* A bare number is seconds, as PostgreSQL reads one. */
            if (!add_units(&iv, q, unit_find("second", 6)))
                goto range;
        } else {
            const unit_def *u = unit_find(w, (size_t)(p - w));
            if (u == NULL)
                goto bad;
            if (!add_units(&iv, q, u))
                goto range;
        }
        any = true;
    }
    if (!any)
        goto bad;
    if (ago) {
        iv.us = -iv.us;
        iv.days = -iv.days;
        iv.months = -iv.months;
    }
    return put(s, &iv, out);
bad:
    return sql_fail_at(s, location, KEEL_EINVAL, "22007",
                       "invalid input syntax for type interval: \"%.*s\"",
                       (int)(len > 100 ? 100 : len), text);
range:
    return sql_fail_at(s, location, KEEL_EINVAL, "22015",
                       "interval field value out of range: \"%.*s\"",
                       (int)(len > 100 ? 100 : len), text);
}

/* One "N unit(s)" of the output, signed as PostgreSQL's "postgres" style
 * signs it: a '+' once an earlier part was negative. */
static int out_part(char *buf, size_t size, int n, int64_t value,
                    const char *unit, bool *neg_seen)
{
    const char *sign = value < 0 ? "" : *neg_seen ? "+" : "";

    if (value == 0)
        return n;
    n += snprintf(buf + n, size - (size_t)n, "%s%s%lld %s%s", n > 0 ? " " : "",
                  sign, (long long)value, unit, value == 1 ? "" : "s");
    *neg_seen = *neg_seen || value < 0;
    return n;
}

int sql_interval_out(const sql_value *v, char *buf, size_t size)
{
    interval iv = get(v);
    int64_t years = iv.months / 12, mons = iv.months % 12, us = iv.us;
    bool neg = false;
    int n = 0;

    buf[0] = '\0';
    n = out_part(buf, size, n, years, "year", &neg);
    if (mons != 0) {
        const char *sign = mons < 0 ? "" : neg ? "+" : "";
        n += snprintf(buf + n, size - (size_t)n, "%s%s%lld mon%s",
                      n > 0 ? " " : "", sign, (long long)mons,
                      mons == 1 ? "" : "s");
        neg = neg || mons < 0;
    }
    n = out_part(buf, size, n, iv.days, "day", &neg);
    if (us != 0 || n == 0) {
        uint64_t a = us < 0 ? 0 - (uint64_t)us : (uint64_t)us;
        uint64_t secs = a / USECS_PER_SEC, frac = a % USECS_PER_SEC;
        const char *sign = us < 0 ? "-" : neg ? "+" : "";
        n += snprintf(buf + n, size - (size_t)n, "%s%s%02llu:%02llu:%02llu",
                      n > 0 ? " " : "", sign,
                      (unsigned long long)(secs / 3600),
                      (unsigned long long)(secs / 60 % 60),
                      (unsigned long long)(secs % 60));
        if (frac != 0) {
            char f[8];
            int k = snprintf(f, sizeof(f), "%06llu", (unsigned long long)frac);
            while (k > 0 && f[k - 1] == '0')
                f[--k] = '\0';
            n += snprintf(buf + n, size - (size_t)n, ".%s", f);
        }
    }
    return n;
}

/* The span PostgreSQL compares intervals by: 30-day months, 24-hour
 * days, in microseconds (128 bits: no overflow). */
static __int128 span(const interval *iv)
{
    return (__int128)iv->us +
           ((__int128)iv->days + (__int128)iv->months * 30) * USECS_PER_DAY;
}

int sql_interval_cmp(const sql_value *a, const sql_value *b)
{
    interval x = get(a), y = get(b);
    __int128 p = span(&x), q = span(&y);

    return p < q ? -1 : p > q;
}

/* ---- arithmetic ----------------------------------------------------------- */

static keel_status range_error(sql_session *s, const char *what)
{
    return sql_fail(s, KEEL_EINVAL, "22008", "%s out of range", what);
}

/* Days since 2000-01-01 of y-m-d, and back (sql_value.c's calendar). */
static void split_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 10957 + 719468, era, doe, yoe, doy, mp;

    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t join_days(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468 - 10957;
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 && leap ? 29 : dm[m - 1];
}

/* A timestamp (microseconds since 2000) plus sign times an interval. */
static keel_status ts_add(sql_session *s, int64_t ts, const interval *iv,
                          int sign, int64_t *out)
{
    int64_t days = ts >= 0 ? ts / USECS_PER_DAY
                           : (ts - USECS_PER_DAY + 1) / USECS_PER_DAY;
    int64_t us = ts - days * USECS_PER_DAY, y;
    int m, d;

    if (iv->months != 0) {
        int64_t total;
        split_days(days, &y, &m, &d);
        total = y * 12 + (m - 1) + sign * (int64_t)iv->months;
        y = total >= 0 ? total / 12 : (total - 11) / 12;
        m = (int)(total - y * 12) + 1;
        if (d > days_in_month(y, m))
            d = days_in_month(y, m);
        days = join_days(y, m, d);
    }
    days += sign * (int64_t)iv->days;
    if (__builtin_mul_overflow(days, USECS_PER_DAY, out) ||
        __builtin_add_overflow(*out, us, out) ||
        __builtin_add_overflow(*out, sign * iv->us, out))
        return range_error(s, "timestamp");
    return KEEL_OK;
}

/* ts_add() of a timestamptz (tz): its months and days counted on the
 * session zone's calendar (a day across a change of offset is 23 or 25
 * hours, as in PostgreSQL), its time on the clock. */
static keel_status tz_add(sql_session *s, bool tz, int64_t ts,
                          const interval *iv, int sign, int64_t *out)
{
    interval cal = {0, iv->days, iv->months};
    keel_status rc;

    if (!tz || s->tz == NULL || (iv->months == 0 && iv->days == 0))
        return ts_add(s, ts, iv, sign, out);
    rc = ts_add(s, sql_tz_local(s, ts), &cal, sign, out);
    if (rc != KEEL_OK)
        return rc;
    *out = sql_tz_from_local(s, *out);
    if (__builtin_add_overflow(*out, sign * iv->us, out))
        return range_error(s, "timestamp");
    return KEEL_OK;
}

keel_status sql_interval_arith(sql_session *s, sql_op op, const sql_value *a,
                               const sql_value *b, uint32_t type,
                               sql_value *out)
{
    uint32_t ta = a->type, tb = b->type;

    out->isnull = false;
    out->type = type;
    /* date +- integer, date - date */
    if (ta == SQL_TYPE_DATE && sql_type_is_int(tb)) {
        out->v.i = op == SQL_OP_ADD ? a->v.i + b->v.i : a->v.i - b->v.i;
        return KEEL_OK;
    }
    if (sql_type_is_int(ta) && tb == SQL_TYPE_DATE) {
        out->v.i = a->v.i + b->v.i;
        return KEEL_OK;
    }
    if (ta == SQL_TYPE_DATE && tb == SQL_TYPE_DATE) {
        out->v.i = a->v.i - b->v.i;
        return KEEL_OK;
    }
    /* a point in time +- an interval */
    if (sql_type_is_datetime(ta) && tb == SQL_TYPE_INTERVAL) {
        interval iv = get(b);
        int64_t t = a->v.i;
        if (ta == SQL_TYPE_DATE &&
            __builtin_mul_overflow(a->v.i, USECS_PER_DAY, &t))
            return sql_fail(s, KEEL_EINVAL, "22008",
                            "date out of range for timestamp");
        return tz_add(s, ta == SQL_TYPE_TIMESTAMPTZ, t, &iv,
                      op == SQL_OP_SUB ? -1 : 1, &out->v.i);
    }
    if (ta == SQL_TYPE_INTERVAL && sql_type_is_datetime(tb)) {
        interval iv = get(a);
        int64_t t = b->v.i;
        if (tb == SQL_TYPE_DATE &&
            __builtin_mul_overflow(b->v.i, USECS_PER_DAY, &t))
            return sql_fail(s, KEEL_EINVAL, "22008",
                            "date out of range for timestamp");
        return tz_add(s, tb == SQL_TYPE_TIMESTAMPTZ, t, &iv, 1, &out->v.i);
    }
    /* timestamp - timestamp: days and time, as justify_hours() gives */
    if (sql_type_is_datetime(ta) && sql_type_is_datetime(tb)) {
        interval iv = {0, 0, 0};
        int64_t d;
        if (__builtin_sub_overflow(a->v.i, b->v.i, &d))
            return range_error(s, "interval");
        iv.days = (int32_t)(d / USECS_PER_DAY);
        iv.us = d % USECS_PER_DAY;
        return put(s, &iv, out);
    }
    if (ta == SQL_TYPE_INTERVAL && tb == SQL_TYPE_INTERVAL) {
        interval x = get(a), y = get(b), r;
        int sign = op == SQL_OP_SUB ? -1 : 1;
        if (__builtin_add_overflow(x.months, sign * y.months, &r.months) ||
            __builtin_add_overflow(x.days, sign * y.days, &r.days) ||
            __builtin_add_overflow(x.us, sign * y.us, &r.us))
            return range_error(s, "interval");
        return put(s, &r, out);
    }
    /* interval * number, number * interval, interval / number: the
     * fractions spill down, months to days to time, as in PostgreSQL */
    {
        const sql_value *iv_v = ta == SQL_TYPE_INTERVAL ? a : b;
        const sql_value *num = ta == SQL_TYPE_INTERVAL ? b : a;
        interval x = get(iv_v), r = {0, 0, 0};
        double f = num->type == SQL_TYPE_FLOAT8 ? num->v.f : (double)num->v.i;
        double months, days;
        if (num->type == SQL_TYPE_NUMERIC)
            return sql_unsupported(s, -1, "interval arithmetic with numeric");
        if (op == SQL_OP_DIV) {
            if (f == 0)
                return sql_fail(s, KEEL_EINVAL, "22012", "division by zero");
            f = 1 / f;
        }
        months = x.months * f;
        days = x.days * f + (months - trunc(months)) * 30;
        if (fabs(months) > INT32_MAX || fabs(days) > INT32_MAX ||
            fabs((double)x.us * f) > 9.2e18)
            return range_error(s, "interval");
        r.months = (int32_t)trunc(months);
        r.days = (int32_t)trunc(days);
        r.us = (int64_t)llround((double)x.us * f +
                                (days - trunc(days)) * (double)USECS_PER_DAY);
        return put(s, &r, out);
    }
}

keel_status sql_interval_extract(sql_session *s, const char *unit,
                                 const sql_value *v, bool as_double,
                                 sql_value *out)
{
    interval iv = get(v);
    int64_t value;
    int scale = 0;

    if (strcmp(unit, "epoch") == 0) {
        /* PostgreSQL's: 365.25-day years, 30-day months */
        __int128 us = (__int128)iv.us +
                      ((__int128)iv.days + (__int128)(iv.months % 12) * 30) *
                          USECS_PER_DAY +
                      (__int128)(iv.months / 12) * 36525 * USECS_PER_DAY / 100;
        value = (int64_t)us;
        scale = 6;
    } else if (strcmp(unit, "microseconds") == 0)
        value = iv.us % (60 * USECS_PER_SEC);
    else if (strcmp(unit, "milliseconds") == 0) {
        value = iv.us % (60 * USECS_PER_SEC);
        scale = 3;
    } else if (strcmp(unit, "second") == 0) {
        value = iv.us % (60 * USECS_PER_SEC);
        scale = 6;
    } else if (strcmp(unit, "minute") == 0)
        value = iv.us / (60 * USECS_PER_SEC) % 60;
    else if (strcmp(unit, "hour") == 0)
        value = iv.us / (3600 * USECS_PER_SEC);
    else if (strcmp(unit, "day") == 0)
        value = iv.days;
    else if (strcmp(unit, "month") == 0)
        value = iv.months % 12;
    else if (strcmp(unit, "quarter") == 0)
        value = (iv.months % 12) / 3 + 1;
    else if (strcmp(unit, "year") == 0)
        value = iv.months / 12;
    else if (strcmp(unit, "decade") == 0)
        value = iv.months / 120;
    else if (strcmp(unit, "century") == 0)
        value = iv.months / 1200;
    else if (strcmp(unit, "millennium") == 0)
        value = iv.months / 12000;
    else
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "unit \"%s\" not supported for type interval", unit);
    return sql_scaled_out(s, value, scale, as_double, out);
}

keel_status sql_interval_binary_in(sql_session *s, const char *p, uint32_t len,
                                   sql_value *out)
{
    interval iv;
    uint64_t us = 0;
    uint32_t d = 0, m = 0;

    if (len != 16)
        return sql_fail(s, KEEL_EINVAL, "22P03",
                        "incorrect binary data format for type interval");
    for (int i = 0; i < 8; i++)
        us = us << 8 | (unsigned char)p[i];
    for (int i = 8; i < 12; i++)
        d = d << 8 | (unsigned char)p[i];
    for (int i = 12; i < 16; i++)
        m = m << 8 | (unsigned char)p[i];
    iv.us = (int64_t)us;
    iv.days = (int32_t)d;
    iv.months = (int32_t)m;
    return put(s, &iv, out);
}

keel_status sql_interval_binary_out(sql_session *s, const sql_value *v,
                                    const char **out, uint32_t *len)
{
    interval iv = get(v);
    unsigned char *p = sql_alloc(&s->arena, 16);
    uint64_t us = (uint64_t)iv.us;
    uint32_t d = (uint32_t)iv.days, m = (uint32_t)iv.months;

    if (p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (int i = 7; i >= 0; i--, us >>= 8)
        p[i] = (unsigned char)us;
    for (int i = 11; i >= 8; i--, d >>= 8)
        p[i] = (unsigned char)d;
    for (int i = 15; i >= 12; i--, m >>= 8)
        p[i] = (unsigned char)m;
    *out = (const char *)p;
    *len = 16;
    return KEEL_OK;
}

/* ---- age() ---------------------------------------------------------------- */

keel_status sql_interval_age(sql_session *s, const sql_value *a,
                             const sql_value *b, sql_value *out)
{
    /* in the session zone's wall clock, from its midnight today without
     * a */
    int64_t now = sql_tz_local(s, s->txn_start_us);
    int64_t t1 = a == NULL ? (now >= 0 ? now / USECS_PER_DAY
                                       : (now - USECS_PER_DAY + 1) /
                                             USECS_PER_DAY) *
                                 USECS_PER_DAY
                 : a->type == SQL_TYPE_TIMESTAMPTZ ? sql_tz_local(s, a->v.i)
                                                   : a->v.i;
    int64_t t2 = b->type == SQL_TYPE_TIMESTAMPTZ ? sql_tz_local(s, b->v.i)
                                                 : b->v.i;
    int64_t f[2][7], d[7]; /* year, month, day, h, m, s, us */
    int64_t ts[2] = {t1, t2};
    bool neg = t1 < t2;
    interval iv;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    for (int k = 0; k < 2; k++) {
        int64_t days = ts[k] >= 0 ? ts[k] / USECS_PER_DAY
                                  : (ts[k] - USECS_PER_DAY + 1) / USECS_PER_DAY;
        int64_t us = ts[k] - days * USECS_PER_DAY, y;
        int m, dd;
        sql_date_from_days(days + SQL_EPOCH_DAYS, &y, &m, &dd);
        f[k][0] = y;
        f[k][1] = m;
        f[k][2] = dd;
        f[k][3] = us / 3600000000LL;
        f[k][4] = us / 60000000 % 60;
        f[k][5] = us / 1000000 % 60;
        f[k][6] = us % 1000000;
    }
    for (int i = 0; i < 7; i++)
        d[i] = neg ? f[1][i] - f[0][i] : f[0][i] - f[1][i];
    /* borrow from the next larger field, as PostgreSQL's timestamp_age */
    while (d[6] < 0) {
        d[6] += 1000000;
        d[5]--;
    }
    while (d[5] < 0) {
        d[5] += 60;
        d[4]--;
    }
    while (d[4] < 0) {
        d[4] += 60;
        d[3]--;
    }
    while (d[3] < 0) {
        d[3] += 24;
        d[2]--;
    }
    while (d[2] < 0) {
        /* the days of the earlier one's month */
        const int64_t *early = neg ? f[0] : f[1];
        int64_t y = early[0], m = early[1];
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        d[2] += m == 2 && leap ? 29 : mdays[m - 1];
        d[1]--;
    }
    while (d[1] < 0) {
        d[1] += 12;
        d[0]--;
    }
    if (neg)
        for (int i = 0; i < 7; i++)
            d[i] = -d[i];
    iv.months = (int32_t)(d[0] * 12 + d[1]);
    iv.days = (int32_t)d[2];
    iv.us = d[3] * 3600000000LL + d[4] * 60000000LL + d[5] * 1000000LL + d[6];
    return put(s, &iv, out);
}
