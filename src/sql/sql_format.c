/*
 * to_char() of dates, timestamps and numbers.
 *
 * Dates: PostgreSQL's template patterns (formatting.c's DCH set that
 * keel's types can fill), FM and TH, text in double quotes (a backslash
 * escaping a character there) and \" for a quote outside them.
 * A timestamptz's fields are the session zone's wall clock's, and TZ,
 * TZH, TZM and OF its abbreviation and offset; a timestamp has none.
 *
 * Numbers: its NUM set's digits (9, 0), point (., D), group separator
 * (",", G), signs (S, MI, PL, SG, PR) and FM.  The number is rounded to
 * the template's places; its digits fill the places before the point
 * from the right (0 from the first 0 on, else blank), # in every place
 * when they do not fit; without a sign pattern a '-' (or a blank) goes
 * just before the first digit shown.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sql/sql_internal.h"

/* A date's and time's fields, as the patterns read them. */
typedef struct dt_fields {
    int64_t year;  /* astronomical: 0 is 1 BC */
    int month, day, hour, minute, second;
    int64_t usec;
    int64_t days;  /* since 1970-01-01 */
    int doy;       /* 1..366 */
    int dow;       /* 0 Sunday .. 6 */
    int64_t isoyear, isoweek;
    bool tz;       /* timestamptz */
    int32_t off;   /* its zone's offset, seconds east */
    const char *abbr; /* and abbreviation */
} dt_fields;

static const char *const month_names[] = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
static const char *const day_names[] = {"Sunday",   "Monday", "Tuesday",
                                        "Wednesday", "Thursday", "Friday",
                                        "Saturday"};
static const char *const roman[] = {"I",   "II",  "III", "IV", "V",  "VI",
                                    "VII", "VIII", "IX", "X",  "XI", "XII"};

/* The output being built, in the arena. */
typedef struct fmt_out {
    char *p;
    size_t n, cap;
} fmt_out;

static keel_status put(sql_session *s, fmt_out *o, const char *p, size_t n)
{
    if (o->n + n + 1 > o->cap) {
        size_t cap = (o->cap + n + 1) * 2;
        char *np = sql_alloc(&s->arena, cap);
        if (np == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (o->n > 0)
            memcpy(np, o->p, o->n);
        o->p = np;
        o->cap = cap;
    }
    memcpy(o->p + o->n, p, n);
    o->n += n;
    return KEEL_OK;
}

/* A number, zero-padded to width unless fill mode (fm), then its
 * ordinal suffix if asked (th: 1 "TH", 2 "th"). */
static keel_status put_num(sql_session *s, fmt_out *o, int64_t v, int width,
                           bool fm, int th)
{
    char buf[40];
    int n = fm ? snprintf(buf, sizeof(buf), "%lld", (long long)v)
               : snprintf(buf, sizeof(buf), "%0*lld", width, (long long)v);
    keel_status rc = put(s, o, buf, (size_t)n);

    if (rc == KEEL_OK && th != 0) {
        int64_t last = (v < 0 ? -v : v) % 100;
        const char *suf = last / 10 == 1      ? "th"
                          : last % 10 == 1    ? "st"
                          : last % 10 == 2    ? "nd"
                          : last % 10 == 3    ? "rd"
                                              : "th";
        char up[3] = {(char)(suf[0] - 32), (char)(suf[1] - 32), '\0'};
        rc = put(s, o, th == 1 ? up : suf, 2);
    }
    return rc;
}

/* A name in the case the pattern was written in (upper, capitalized or
 * lower), padded to width with blanks unless fill mode. */
static keel_status put_name(sql_session *s, fmt_out *o, const char *name,
                            size_t len, int style, int width, bool fm)
{
    char buf[16];

    if (len > sizeof(buf))
        len = sizeof(buf);
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (style == 0 && c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        else if (style == 2 && c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        buf[i] = c;
    }
    if (put(s, o, buf, len) != KEEL_OK)
        return KEEL_ENOMEM;
    while (!fm && (int)len < width) {
        if (put(s, o, " ", 1) != KEEL_OK)
            return KEEL_ENOMEM;
        len++;
    }
    return KEEL_OK;
}

/* Whether text at p (n bytes left) begins with pattern pat. */
static bool starts(const char *p, size_t n, const char *pat)
{
    size_t l = strlen(pat);

    return n >= l && memcmp(p, pat, l) == 0;
}

/* The case a pattern's letters are in: 0 upper (MONTH), 1 capitalized
 * (Month), 2 lower (month). */
static int style_of(const char *p)
{
    if (p[0] >= 'a' && p[0] <= 'z')
        return 2;
    return p[1] >= 'a' && p[1] <= 'z' ? 1 : 0;
}

static void fields_of(const sql_session *s, uint32_t type, int64_t v,
                      dt_fields *f)
{
    int64_t us, secs, jan1;

    memset(f, 0, sizeof(*f));
    /* a date is PostgreSQL's to_char(timestamptz) of its midnight here;
     * a timestamp's offset is +00 and its TZ nothing */
    f->tz = type != SQL_TYPE_TIMESTAMP;
    f->abbr = "UTC";
    if (type == SQL_TYPE_DATE && s->tz_name[0] != '\0')
        f->off = sql_tz_offset(&s->tz_store,
                               sql_tz_from_local(s, v * USECS_PER_DAY),
                               &f->abbr);
    else if (type == SQL_TYPE_TIMESTAMPTZ && s->tz_name[0] != '\0')
        f->off = sql_tz_offset(&s->tz_store, v, &f->abbr);
    if (type == SQL_TYPE_TIMESTAMPTZ)
        v += (int64_t)f->off * 1000000;
    if (type == SQL_TYPE_DATE) {
        f->days = v;
        us = 0;
    } else {
        f->days = v >= 0 ? v / USECS_PER_DAY
                         : (v - USECS_PER_DAY + 1) / USECS_PER_DAY;
        us = v - f->days * USECS_PER_DAY;
    }
    f->days += SQL_EPOCH_DAYS;
    sql_date_from_days(f->days, &f->year, &f->month, &f->day);
    secs = us / 1000000;
    f->usec = us % 1000000;
    f->hour = (int)(secs / 3600);
    f->minute = (int)(secs / 60 % 60);
    f->second = (int)(secs % 60);
    jan1 = sql_days_from_date(f->year, 1, 1);
    f->doy = (int)(f->days - jan1 + 1);
    f->dow = (int)(((f->days % 7) + 7 + 4) % 7); /* 1970-01-01 a Thursday */
    sql_iso_week(f->days, &f->isoyear, &f->isoweek);
}

keel_status sql_to_char_datetime(sql_session *s, const sql_value *v,
                                 const char *fmt, uint32_t flen,
                                 sql_value *out)
{
    dt_fields f;
    fmt_out o = {0};
    size_t i = 0;
    keel_status rc = KEEL_OK;

    fields_of(s, v->type, v->v.i, &f);
    while (rc == KEEL_OK && i < flen) {
        const char *p = fmt + i;
        size_t left = flen - i, used = 0;
        bool fm = false;
        int th = 0;
        /* prefix modifiers */
        while (starts(p, left, "FM") || starts(p, left, "fm")) {
            fm = true;
            p += 2;
            left -= 2;
            i += 2;
        }
        if (starts(p, left, "TM") || starts(p, left, "tm") ||
            starts(p, left, "FX") || starts(p, left, "fx")) {
            i += 2;
            continue;
        }
        if (left == 0)
            break;
        if (*p == '"') {
            /* quoted text, backslash escaping a character in it */
            size_t k = 1;
            while (rc == KEEL_OK && k < left && p[k] != '"') {
                if (p[k] == '\\' && k + 1 < left)
                    k++;
                rc = put(s, &o, p + k, 1);
                k++;
            }
            i += k < left ? k + 1 : k;
            continue;
        }
        if (*p == '\\' && left > 1 && p[1] == '"') {
            /* outside quotes a backslash is itself, but before a quote */
            rc = put(s, &o, "\"", 1);
            i += 2;
            continue;
        }
#define PAT(x) (starts(p, left, x) && (used = strlen(x)) > 0)
        /* TH after the pattern (looked at once its length is known) */
#define SUFFIX()                                                       \
    do {                                                               \
        if (starts(p + used, left - used, "TH")) {                     \
            th = 1;                                                    \
            used += 2;                                                 \
        } else if (starts(p + used, left - used, "th")) {              \
            th = 2;                                                    \
            used += 2;                                                 \
        }                                                              \
    } while (0)
        if (PAT("Y,YYY") || PAT("y,yyy")) {
            char buf[32];
            int64_t y = f.year > 0 ? f.year : 1 - f.year;
            int n = snprintf(buf, sizeof(buf), "%lld,%03lld",
                             (long long)(y / 1000), (long long)(y % 1000));
            rc = put(s, &o, buf, (size_t)n);
        } else if (PAT("YYYY") || PAT("yyyy") || PAT("IYYY") || PAT("iyyy")) {
            int64_t y = p[0] == 'I' || p[0] == 'i' ? f.isoyear : f.year;
            SUFFIX();
            rc = put_num(s, &o, y > 0 ? y : 1 - y, 4, fm, th);
        } else if (PAT("YYY") || PAT("yyy") || PAT("IYY") || PAT("iyy")) {
            int64_t y = p[0] == 'I' || p[0] == 'i' ? f.isoyear : f.year;
            SUFFIX();
            rc = put_num(s, &o, (y > 0 ? y : 1 - y) % 1000, 3, fm, th);
        } else if (PAT("YY") || PAT("yy") || PAT("IY") || PAT("iy")) {
            int64_t y = p[0] == 'I' || p[0] == 'i' ? f.isoyear : f.year;
            SUFFIX();
            rc = put_num(s, &o, (y > 0 ? y : 1 - y) % 100, 2, fm, th);
        } else if (PAT("HH24") || PAT("hh24")) {
            SUFFIX();
            rc = put_num(s, &o, f.hour, 2, fm, th);
        } else if (PAT("HH12") || PAT("hh12") || PAT("HH") || PAT("hh")) {
            SUFFIX();
            rc = put_num(s, &o, f.hour % 12 == 0 ? 12 : f.hour % 12, 2, fm,
                         th);
        } else if (PAT("MI") || PAT("mi")) {
            SUFFIX();
            rc = put_num(s, &o, f.minute, 2, fm, th);
        } else if (PAT("SSSSS") || PAT("sssss") || PAT("SSSS") ||
                   PAT("ssss")) {
            SUFFIX();
            rc = put_num(s, &o, f.hour * 3600 + f.minute * 60 + f.second, 1,
                         true, th);
        } else if (PAT("SS") || PAT("ss")) {
            SUFFIX();
            rc = put_num(s, &o, f.second, 2, fm, th);
        } else if (PAT("MS") || PAT("ms")) {
            SUFFIX();
            rc = put_num(s, &o, f.usec / 1000, 3, fm, th);
        } else if (PAT("US") || PAT("us")) {
            SUFFIX();
            rc = put_num(s, &o, f.usec, 6, fm, th);
        } else if (PAT("A.M.") || PAT("P.M.") || PAT("a.m.") ||
                   PAT("p.m.")) {
            bool lower = p[0] == 'a' || p[0] == 'p';
            rc = put(s, &o,
                     f.hour < 12 ? (lower ? "a.m." : "A.M.")
                                 : (lower ? "p.m." : "P.M."),
                     4);
        } else if (PAT("AM") || PAT("PM") || PAT("am") || PAT("pm")) {
            bool lower = p[0] == 'a' || p[0] == 'p';
            rc = put(s, &o,
                     f.hour < 12 ? (lower ? "am" : "AM")
                                 : (lower ? "pm" : "PM"),
                     2);
        } else if (PAT("B.C.") || PAT("A.D.") || PAT("b.c.") ||
                   PAT("a.d.")) {
            bool lower = p[0] == 'a' || p[0] == 'b';
            rc = put(s, &o,
                     f.year > 0 ? (lower ? "a.d." : "A.D.")
                                : (lower ? "b.c." : "B.C."),
                     4);
        } else if (PAT("BC") || PAT("AD") || PAT("bc") || PAT("ad")) {
            bool lower = p[0] == 'a' || p[0] == 'b';
            rc = put(s, &o,
                     f.year > 0 ? (lower ? "ad" : "AD")
                                : (lower ? "bc" : "BC"),
                     2);
        } else if (PAT("MONTH") || PAT("Month") || PAT("month")) {
            const char *nm = month_names[f.month - 1];
            rc = put_name(s, &o, nm, strlen(nm), style_of(p), 9, fm);
        } else if (PAT("MON") || PAT("Mon") || PAT("mon")) {
            rc = put_name(s, &o, month_names[f.month - 1], 3, style_of(p), 3,
                          fm);
        } else if (PAT("MM") || PAT("mm")) {
            SUFFIX();
            rc = put_num(s, &o, f.month, 2, fm, th);
        } else if (PAT("DAY") || PAT("Day") || PAT("day")) {
            const char *nm = day_names[f.dow];
            rc = put_name(s, &o, nm, strlen(nm), style_of(p), 9, fm);
        } else if (PAT("DY") || PAT("Dy") || PAT("dy")) {
            rc = put_name(s, &o, day_names[f.dow], 3, style_of(p), 3, fm);
        } else if (PAT("DDD") || PAT("ddd")) {
            SUFFIX();
            rc = put_num(s, &o, f.doy, 3, fm, th);
        } else if (PAT("IDDD") || PAT("iddd")) {
            SUFFIX();
            rc = put_num(s, &o,
                         (f.isoweek - 1) * 7 + (f.dow == 0 ? 7 : f.dow), 3, fm,
                         th);
        } else if (PAT("DD") || PAT("dd")) {
            SUFFIX();
            rc = put_num(s, &o, f.day, 2, fm, th);
        } else if (PAT("ID") || PAT("id")) {
            SUFFIX();
            rc = put_num(s, &o, f.dow == 0 ? 7 : f.dow, 1, true, th);
        } else if (PAT("D") || PAT("d")) {
            SUFFIX();
            rc = put_num(s, &o, f.dow + 1, 1, true, th);
        } else if (PAT("WW") || PAT("ww")) {
            SUFFIX();
            rc = put_num(s, &o, (f.doy - 1) / 7 + 1, 2, fm, th);
        } else if (PAT("IW") || PAT("iw")) {
            SUFFIX();
            rc = put_num(s, &o, f.isoweek, 2, fm, th);
        } else if (PAT("W") || PAT("w")) {
            SUFFIX();
            rc = put_num(s, &o, (f.day - 1) / 7 + 1, 1, true, th);
        } else if (PAT("CC") || PAT("cc")) {
            int64_t cc = f.year > 0 ? (f.year + 99) / 100
                                    : -((99 - (f.year - 1)) / 100);
            SUFFIX();
            rc = put_num(s, &o, cc, 2, fm, th);
        } else if (PAT("Q") || PAT("q")) {
            SUFFIX();
            rc = put_num(s, &o, (f.month - 1) / 3 + 1, 1, true, th);
        } else if (PAT("J") || PAT("j")) {
            SUFFIX();
            rc = put_num(s, &o, f.days + 2440588, 1, true, th);
        } else if (PAT("RM") || PAT("rm")) {
            const char *r = roman[f.month - 1];
            rc = put_name(s, &o, r, strlen(r), p[0] == 'r' ? 2 : 0, 4, fm);
        } else if (PAT("TZH") || PAT("tzh") || PAT("TZM") || PAT("tzm") ||
                   PAT("OF") || PAT("of")) {
            int32_t a = f.off < 0 ? -f.off : f.off;
            char b[16];
            bool of = p[0] == 'O' || p[0] == 'o';
            int n = of ? sql_tz_offset_text(f.off, false, b, sizeof(b))
                    : p[2] == 'H' || p[2] == 'h'
                        ? snprintf(b, sizeof(b), "%c%02d", f.off < 0 ? '-' : '+',
                                   a / 3600)
                        : snprintf(b, sizeof(b), "%02d", a / 60 % 60);
            rc = put(s, &o, b, (size_t)n);
        } else if (PAT("TZ") || PAT("tz")) {
            char b[16];
            size_t n = strlen(f.abbr) < sizeof(b) ? strlen(f.abbr) : 0;
            for (size_t k = 0; k < n; k++)
                b[k] = p[0] == 't' ? (char)tolower((unsigned char)f.abbr[k])
                                   : f.abbr[k];
            rc = f.tz ? put(s, &o, b, n) : KEEL_OK;
        } else if (PAT("Y") || PAT("y") || PAT("I") || PAT("i")) {
            int64_t y = p[0] == 'I' || p[0] == 'i' ? f.isoyear : f.year;
            SUFFIX();
            rc = put_num(s, &o, (y > 0 ? y : 1 - y) % 10, 1, true, th);
        } else {
            rc = put(s, &o, p, 1);
            used = 1;
        }
#undef PAT
#undef SUFFIX
        i += used;
    }
    if (rc != KEEL_OK)
        return rc;
    out->type = SQL_TYPE_TEXT;
    out->isnull = false;
    out->v.s.p = o.p != NULL ? o.p : "";
    out->v.s.len = (uint32_t)o.n;
    return KEEL_OK;
}

/* ---- to_char() of numbers ------------------------------------------------ */

/* A number template's pieces (PostgreSQL's NUM set, as far as keel
 * reads it). */
typedef enum num_tok {
    NT_DIGIT9,
    NT_DIGIT0,
    NT_POINT,
    NT_GROUP,
    NT_SIGN,  /* S */
    NT_MINUS, /* MI */
    NT_PLUS,  /* PL */
    NT_SG,    /* SG */
    NT_PR,
    NT_TEXT,  /* one literal character */
} num_tok;

/* A character of the result, before fill mode drops what it drops. */
#define OUT_BLANK '\x01' /* a digit or separator with nothing to show */

/* The number's text rounded to post places: its digits before the point
 * (without leading zeros), after it (exactly post), and its sign. */
static keel_status num_digits(sql_session *s, const sql_value *v, int post,
                              char *ibuf, size_t isize, char *fbuf, bool *neg)
{
    char text[200], *p = text, *dot;
    size_t n;

    if (v->type == SQL_TYPE_NUMERIC) {
        numeric x = NUMERIC_INIT, r = NUMERIC_INIT;
        keel_status rc = sql_numeric_get(s, v, &x);
        numeric_status st;
        char *big;
        if (rc != KEEL_OK)
            return rc;
        st = numeric_round(&x, post, &r);
        numeric_free(&x);
        if (st != NUMERIC_OK) {
            numeric_free(&r);
            return sql_numeric_fail(s, st, -1, NULL, 0, -1);
        }
        big = sql_alloc(&s->arena, numeric_out_len(&r) + 1);
        if (big == NULL) {
            numeric_free(&r);
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        n = numeric_out(&r, big);
        big[n] = '\0';
        numeric_free(&r);
        p = big;
    } else if (v->type == SQL_TYPE_FLOAT8) {
        snprintf(text, sizeof(text), "%.*f", post, v->v.f);
    } else {
        snprintf(text, sizeof(text), "%lld", (long long)v->v.i);
    }
    *neg = *p == '-';
    if (*neg)
        p++;
    dot = strchr(p, '.');
    n = dot != NULL ? (size_t)(dot - p) : strlen(p);
    while (n > 0 && *p == '0') {
        p++;
        n--;
    }
    if (n + 1 > isize)
        n = isize - 1; /* longer than any template: it overflows anyway */
    memcpy(ibuf, p, n);
    ibuf[n] = '\0';
    for (int k = 0; k < post; k++)
        fbuf[k] = dot != NULL && dot[1 + k] != '\0' && k < (int)strlen(dot + 1)
                      ? dot[1 + k]
                      : '0';
    fbuf[post] = '\0';
    /* a zero (after rounding) has no sign */
    if (*neg && n == 0 && strspn(fbuf, "0") == (size_t)post)
        *neg = false;
    return KEEL_OK;
}

keel_status sql_to_char_number(sql_session *s, const sql_value *v,
                               const char *fmt, uint32_t flen, sql_value *out)
{
    num_tok *tok = sql_alloc(&s->arena, (flen + 1u) * sizeof(*tok));
    char *lit = sql_alloc(&s->arena, flen + 1u);
    char *res = sql_alloc(&s->arena, 2u * flen + 8u);
    char *ibuf = sql_alloc(&s->arena, flen + 2u);
    char *fbuf = sql_alloc(&s->arena, flen + 2u);
    int *rtok = sql_alloc(&s->arena, (2u * flen + 8u) * sizeof(int));
    int ntok = 0, pre = 0, post = 0, zero_start = -1, point = -1, digits = 0;
    bool fm = false, sign_tok = false, neg = false, overflow, any = false;
    bool has_s = false, has_pr = false;
    bool has_other = false; /* MI, PL or SG */
    num_tok other = NT_TEXT;
    int n = 0, ilen, floating_at = -1, di = 0, fi = 0;
    char floating = 0;
    keel_status rc;

    if (tok == NULL || lit == NULL || res == NULL || ibuf == NULL ||
        fbuf == NULL || rtok == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint32_t i = 0; i < flen;) {
        const char *p = fmt + i;
        size_t left = flen - i;
        if (starts(p, left, "FM") || starts(p, left, "fm")) {
            fm = true;
            i += 2;
            continue;
        }
        if (starts(p, left, "EEEE") || starts(p, left, "eeee") ||
            starts(p, left, "RN") || starts(p, left, "rn") ||
            starts(p, left, "TH") || starts(p, left, "th") || *p == 'V' ||
            *p == 'v' || *p == 'L' || *p == 'l')
            return sql_unsupported(s, -1,
                                   "to_char() number patterns EEEE, RN, TH, V "
                                   "and L");
        if (*p == '9' || *p == '0') {
            tok[ntok] = *p == '9' ? NT_DIGIT9 : NT_DIGIT0;
            if (point < 0) {
                if (*p == '0' && zero_start < 0)
                    zero_start = pre;
                pre++;
            } else {
                post++;
            }
            digits++;
        } else if (*p == '.' || *p == 'D' || *p == 'd') {
            if (point >= 0)
                return sql_fail(s, KEEL_EINVAL, "42601",
                                "multiple decimal points");
            point = ntok;
            tok[ntok] = NT_POINT;
        } else if (*p == ',' || *p == 'G' || *p == 'g') {
            tok[ntok] = NT_GROUP;
        } else if ((*p == 'S' || *p == 's') && !starts(p, left, "SG") &&
                   !starts(p, left, "sg")) {
            if (has_s)
                return sql_fail(s, KEEL_EINVAL, "42601",
                                "cannot use \"S\" twice");
            tok[ntok] = NT_SIGN;
            sign_tok = has_s = true;
        } else if (starts(p, left, "MI") || starts(p, left, "mi") ||
                   starts(p, left, "PL") || starts(p, left, "pl") ||
                   starts(p, left, "SG") || starts(p, left, "sg") ||
                   starts(p, left, "PR") || starts(p, left, "pr")) {
            char c = (char)(p[0] & ~0x20);
            tok[ntok] = c == 'M' ? NT_MINUS : c == 'P' && (p[1] & ~0x20) == 'L'
                                                  ? NT_PLUS
                                              : c == 'S' ? NT_SG
                                                         : NT_PR;
            sign_tok = sign_tok || tok[ntok] != NT_PLUS;
            if (tok[ntok] == NT_PR)
                has_pr = true;
            else {
                has_other = true;
                other = tok[ntok];
            }
            i += 2;
            ntok++;
            continue;
        } else if (*p == '"') {
            /* quoted text */
            uint32_t k = 1;
            while (k < left && p[k] != '"') {
                tok[ntok] = NT_TEXT;
                lit[ntok++] = p[k++];
            }
            i += k < left ? k + 1 : k;
            continue;
        } else {
            tok[ntok] = NT_TEXT;
            lit[ntok] = *p;
        }
        ntok++;
        i++;
    }
    /* PostgreSQL's checks of the sign patterns together */
    for (int k = 0, seen_pr = 0; k < ntok; k++) {
        if (tok[k] == NT_PR)
            seen_pr = 1;
        else if (seen_pr && (tok[k] == NT_DIGIT9 || tok[k] == NT_DIGIT0))
            return sql_fail(s, KEEL_EINVAL, "42601",
                            "\"9\" must be ahead of \"PR\"");
    }
    if (has_pr && (has_s || has_other))
        return sql_fail(s, KEEL_EINVAL, "42601",
                        "cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" "
                        "together");
    if (has_s && has_other)
        return sql_fail(s, KEEL_EINVAL, "42601",
                        "cannot use \"S\" and \"%s\" together",
                        other == NT_MINUS  ? "MI"
                        : other == NT_PLUS ? "PL"
                                           : "SG");
    if (zero_start < 0)
        zero_start = pre;
    rc = num_digits(s, v, post, ibuf, flen + 2u, fbuf, &neg);
    if (rc != KEEL_OK)
        return rc;
    ilen = (int)strlen(ibuf);
    if (ilen == 0 && post == 0) {
        ibuf[0] = '0';
        ibuf[1] = '\0';
        ilen = 1;
    }
    overflow = digits > 0 && ilen > pre;
    /* the sign that goes just before the number: the implicit one, S
     * before the digits, or PR's bracket */
    for (int t = 0; t < ntok && !floating; t++) {
        if (tok[t] == NT_SIGN && digits > 0 && t < ntok - 1 &&
            (tok[t + 1] == NT_DIGIT9 || tok[t + 1] == NT_DIGIT0 ||
             tok[t + 1] == NT_POINT))
            floating = neg ? '-' : '+';
        if (tok[t] == NT_PR)
            floating = neg ? '<' : ' ';
    }
    if (!floating && !sign_tok)
        floating = neg ? '-' : ' ';
    if (digits == 0)
        floating = 0; /* no number to put a sign before */
    for (int t = 0; t < ntok; t++) {
        char c;
        switch (tok[t]) {
        case NT_DIGIT9:
        case NT_DIGIT0:
            if (di < pre) {
                int k = di++;
                if (overflow)
                    c = '#';
                else if (k >= pre - ilen)
                    c = ibuf[k - (pre - ilen)];
                else
                    c = k >= zero_start ? '0' : OUT_BLANK;
            } else {
                c = overflow ? '#' : fbuf[fi];
                fi++;
            }
            break;
        case NT_POINT:
            if (post == 0)
                continue; /* no places: no point */
            c = '.';
            break;
        case NT_GROUP:
            c = any || overflow ? ',' : OUT_BLANK;
            break;
        case NT_SIGN:
            if (floating && (neg ? '-' : '+') == floating && t < ntok - 1 &&
                !any)
                continue; /* the floating one */
            c = neg ? '-' : '+';
            break;
        case NT_MINUS:
            c = neg ? '-' : OUT_BLANK;
            break;
        case NT_SG:
            c = neg ? '-' : '+';
            break;
        case NT_PLUS:
            c = neg ? OUT_BLANK : '+';
            break;
        case NT_PR:
            c = neg ? '>' : OUT_BLANK;
            break;
        default:
            c = lit[t];
            break;
        }
        if (floating_at < 0 && floating &&
            (((tok[t] == NT_DIGIT9 || tok[t] == NT_DIGIT0) &&
              c != OUT_BLANK) ||
             tok[t] == NT_POINT)) {
            floating_at = n;
            rtok[n] = -1;
            res[n++] = floating;
        }
        if ((tok[t] == NT_DIGIT9 || tok[t] == NT_DIGIT0) && c != OUT_BLANK)
            any = true;
        rtok[n] = t;
        res[n++] = c;
    }
    if (floating && floating_at < 0) {
        floating_at = n;
        rtok[n] = -1;
        res[n++] = floating;
    }
    (void)floating_at;
    if (fm) {
        /* Fill mode: no blanks, no blank sign or bracket, no trailing
         * zeros of 9s after the point; a number of which no digit is
         * left shows 0 before its point. */
        int w = 0, printed = 0;
        for (int r = n - 1; r >= 0 && !overflow; r--) {
            int tk = rtok[r];
            if (tk < 0 || (tok[tk] != NT_DIGIT9 && tok[tk] != NT_DIGIT0 &&
                           tok[tk] != NT_POINT))
                continue;
            if (tok[tk] != NT_DIGIT9 || tk < point || point < 0 ||
                res[r] != '0')
                break;
            res[r] = OUT_BLANK;
        }
        for (int r = 0; r < n; r++) {
            char c = res[r];
            if (c == OUT_BLANK || (rtok[r] < 0 && c == ' '))
                continue;
            if (c >= '0' && c <= '9' && rtok[r] >= 0 &&
                (tok[rtok[r]] == NT_DIGIT9 || tok[rtok[r]] == NT_DIGIT0))
                printed++;
            res[w++] = c;
        }
        n = w;
        if (printed == 0 && !overflow && digits > 0) {
            char *dotp = memchr(res, '.', (size_t)n);
            int at = dotp != NULL ? (int)(dotp - res) : n;
            memmove(res + at + 1, res + at, (size_t)(n - at));
            res[at] = '0';
            n++;
        }
    } else {
        for (int r = 0; r < n; r++)
            if (res[r] == OUT_BLANK)
                res[r] = ' ';
    }
    out->type = SQL_TYPE_TEXT;
    out->isnull = false;
    out->v.s.p = res;
    out->v.s.len = (uint32_t)n;
    return KEEL_OK;
}

/* ---- to_date() and to_timestamp(text, template) ---------------------------- */

/* A number of at most max digits from *p (spaces before it skipped):
 * 22007 as PostgreSQL words it when there is none. */
static keel_status read_field(sql_session *s, const char **p, const char *end,
                              int max, const char *field, int64_t *out)
{
    const char *q;
    int n = 0;

    while (*p < end && **p == ' ')
        (*p)++;
    if (*p >= end)
        return sql_fail(s, KEEL_EINVAL, "22007",
                        "source string too short for \"%s\" formatting field",
                        field);
    q = *p;
    *out = 0;
    if (*q == '-' || *q == '+')
        q++;
    while (q < end && n < max && *q >= '0' && *q <= '9') {
        *out = *out * 10 + (*q++ - '0');
        n++;
    }
    if (n == 0) {
        keel_status rc = sql_fail(s, KEEL_EINVAL, "22007",
                                  "invalid value \"%.*s\" for \"%s\"",
                                  (int)(end - *p < max ? end - *p : max), *p,
                                  field);
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail),
                     "Value must be an integer.");
        return rc;
    }
    if (**p == '-')
        *out = -*out;
    *p = q;
    return KEEL_OK;
}

keel_status sql_to_datetime(sql_session *s, const sql_value *text,
                            const sql_value *fmt, bool timestamp,
                            sql_value *out)
{
    const char *p = text->v.s.len > 0 ? text->v.s.p : "";
    const char *end = p + text->v.s.len;
    const char *f = fmt->v.s.len > 0 ? fmt->v.s.p : "";
    const char *fend = f + fmt->v.s.len;
    int64_t year = 1, month = 1, day = 1, hour = 0, minute = 0, sec = 0,
            usec = 0, v;
    bool pm = false, h12 = false;
    keel_status rc = KEEL_OK;

    /* input that ends early leaves the fields after it at their
     * defaults, as in PostgreSQL */
    while (rc == KEEL_OK && f < fend && p < end) {
        size_t left = (size_t)(fend - f);
#define TPAT(x) (left >= sizeof(x) - 1 && strncasecmp(f, x, sizeof(x) - 1) == 0)
        if (TPAT("YYYY")) {
            rc = read_field(s, &p, end, 4, "YYYY", &year);
            f += 4;
        } else if (TPAT("YY")) {
            rc = read_field(s, &p, end, 2, "YY", &year);
            year += year < 70 ? 2000 : 1900;
            f += 2;
        } else if (TPAT("MONTH") || TPAT("MON")) {
            /* a month's name, or its first three letters */
            bool full = TPAT("MONTH");
            int m = 0;
            while (p < end && *p == ' ')
                p++;
            for (int k = 0; m == 0 && k < 12; k++) {
                size_t n = full ? strlen(month_names[k]) : 3;
                if ((size_t)(end - p) >= n &&
                    strncasecmp(p, month_names[k], n) == 0) {
                    m = k + 1;
                    p += n;
                }
            }
            if (m == 0) {
                rc = sql_fail(s, KEEL_EINVAL, "22007",
                              "invalid value \"%.*s\" for \"%s\"",
                              (int)(end - p < 3 ? end - p : 3), p,
                              full ? "Month" : "Mon");
                if (s->err != NULL)
                    snprintf(s->err->detail, sizeof(s->err->detail),
                             "The given value did not match any of the "
                             "allowed values for this field.");
                return rc;
            }
            month = m;
            f += full ? 5 : 3;
        } else if (TPAT("MM")) {
            rc = read_field(s, &p, end, 2, "MM", &month);
            f += 2;
        } else if (TPAT("DDD")) {
            rc = read_field(s, &p, end, 3, "DDD", &v);
            month = 1;
            day = v;
            f += 3;
        } else if (TPAT("DD")) {
            rc = read_field(s, &p, end, 2, "DD", &day);
            f += 2;
        } else if (TPAT("HH24")) {
            rc = read_field(s, &p, end, 2, "HH24", &hour);
            f += 4;
        } else if (TPAT("HH12") || TPAT("HH")) {
            bool four = TPAT("HH12");
            rc = read_field(s, &p, end, 2, four ? "HH12" : "HH", &hour);
            h12 = true;
            f += four ? 4 : 2;
        } else if (TPAT("MI")) {
            rc = read_field(s, &p, end, 2, "MI", &minute);
            f += 2;
        } else if (TPAT("SS")) {
            rc = read_field(s, &p, end, 2, "SS", &sec);
            f += 2;
        } else if (TPAT("MS")) {
            const char *q = p;
            rc = read_field(s, &p, end, 3, "MS", &v);
            /* a fraction: "5" is 500 ms */
            for (long d = p - q; rc == KEEL_OK && d < 3; d++)
                v *= 10;
            usec = v * 1000;
            f += 2;
        } else if (TPAT("US")) {
            const char *q = p;
            rc = read_field(s, &p, end, 6, "US", &v);
            for (long d = p - q; rc == KEEL_OK && d < 6; d++)
                v *= 10;
            usec = v;
            f += 2;
        } else if (TPAT("AM") || TPAT("PM") || TPAT("A.M.") || TPAT("P.M.")) {
            bool dots = f[1] == '.';
            size_t n = dots ? 4 : 2;
            while (p < end && *p == ' ')
                p++;
            if ((size_t)(end - p) < n ||
                (strncasecmp(p, dots ? "A.M." : "AM", n) != 0 &&
                 strncasecmp(p, dots ? "P.M." : "PM", n) != 0))
                return sql_fail(s, KEEL_EINVAL, "22007",
                                "invalid value \"%.*s\" for \"%.*s\"",
                                (int)(end - p < (long)n ? end - p : (long)n),
                                p, (int)n, f);
            pm = p[0] == 'P' || p[0] == 'p';
            p += n;
            f += n;
        } else if (f[0] == '"') {
            /* quoted text: as many characters skipped */
            for (f++; f < fend && *f != '"'; f++)
                if (p < end)
                    p++;
            if (f < fend)
                f++;
        } else {
            /* anything else stands for one character of the input, a
             * space or a separator there */
            if (p < end && !((*p >= '0' && *p <= '9') ||
                             (*p >= 'a' && *p <= 'z') ||
                             (*p >= 'A' && *p <= 'Z')))
                p++;
            f++;
        }
#undef TPAT
    }
    if (rc != KEEL_OK)
        return rc;
    if (h12) {
        if (hour < 1 || hour > 12) {
            rc = sql_fail(s, KEEL_EINVAL, "22008",
                          "hour \"%lld\" is invalid for the 12-hour clock",
                          (long long)hour);
            if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "Use the 24-hour clock, or give an hour between 1 "
                         "and 12.");
            return rc;
        }
        hour = hour % 12 + (pm ? 12 : 0);
    }
    {
        /* the fields as a date's and a time's, checked as they are */
        static const int mdays[] = {31, 28, 31, 30, 31, 30,
                                    31, 31, 30, 31, 30, 31};
        bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        int64_t days;
        bool doy = month == 1 && day > 31;
        if (month < 1 || month > 12 || day < 1 ||
            (!doy && day > mdays[month - 1] + (month == 2 && leap)) ||
            (doy && day > 365 + leap) || hour > 24 || minute > 59 ||
            sec > 60 || year == 0)
            return sql_fail(s, KEEL_EINVAL, "22008",
                            "date/time field value out of range: \"%.*s\"",
                            (int)text->v.s.len, text->v.s.p);
        days = sql_days_from_date(year < 0 ? year + 1 : year, (int)month, 1) +
               day - 1 - SQL_EPOCH_DAYS;
        out->isnull = false;
        if (!timestamp) {
            out->type = SQL_TYPE_DATE;
            out->v.i = days;
            return KEEL_OK;
        }
        out->type = SQL_TYPE_TIMESTAMPTZ;
        out->v.i = sql_tz_from_local(
            s, days * USECS_PER_DAY +
                   ((hour * 60 + minute) * 60 + sec) * 1000000 + usec);
    }
    return KEEL_OK;
}
