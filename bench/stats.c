/*
 * stats.c: medians and spreads of benchmark rounds, and confidence
 * intervals of means.
 */
#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

bench_stat bench_stat_of(double *v, int n)
{
    bench_stat s;

    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.rounds = n;
    return s;
}

void bench_json_stat(FILE *f, const char *name, bench_stat s)
{
    fprintf(f,
            "\"%s\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f, "
            "\"rounds\": %d}",
            name, s.median, s.min, s.max, s.rounds);
}

void bench_table_header(const bench_table *t)
{
    printf("\n  %-*s %9s %9s %9s  %-5s %s\n", t->name_width, "measure",
           "median", "min", "max", "unit", "note");
}

void bench_table_row(const bench_table *t, const char *name, bench_stat s,
                     const char *unit, const char *note)
{
    printf("  %-*s %9.*f %9.*f %9.*f  %-5s %s\n", t->name_width, name,
           t->decimals, s.median, t->decimals, s.min, t->decimals, s.max, unit,
           note);
}

double bench_spread_pct(bench_stat s)
{
    return s.median > 0 ? 100.0 * (s.max - s.min) / s.median : 0;
}

/*
 * The regularized incomplete beta function I_x(a, b), from its continued
 * fraction evaluated by the modified Lentz method, on the side of x where
 * it converges fast (the other side by I_x(a, b) = 1 - I_{1-x}(b, a)).
 */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1), h;

    d = 1 / (fabs(d) < tiny ? tiny : d);
    h = d;
    for (int m = 1; m <= 500; m++) {
        double two_m = 2.0 * m, step;
        /* The even step, then the odd one. */
        double num = m * (b - m) * x / ((a + two_m - 1) * (a + two_m));
        d = 1 + num * d;
        c = 1 + num / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1));
        d = 1 + num * d;
        c = 1 + num / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        step = d * c;
        h *= step;
        if (fabs(step - 1) < 1e-15)
            break;
    }
    return h;
}

static double beta_regularized(double a, double b, double x)
{
    double front;
    int sign; /* lgamma_r(): no write to the global signgam */

    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    front = exp(lgamma_r(a + b, &sign) - lgamma_r(a, &sign) -
                lgamma_r(b, &sign) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

/* P(T <= t) for Student's t with df degrees of freedom. */
static double t_cdf(double t, int df)
{
    double tail = 0.5 * beta_regularized(df / 2.0, 0.5, df / (df + t * t));

    return t >= 0 ? 1 - tail : tail;
}

double bench_t_quantile(double p, int df)
{
    double lo = 0, hi = 1;

    if (df < 1 || !(p >= 0.5 && p < 1))
        return NAN;
    while (t_cdf(hi, df) < p && hi < 1e15)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

bench_ci bench_ci_of(const double *v, int n)
{
    return bench_ci_at(v, n, 0.95);
}

bench_ci bench_ci_at(const double *v, int n, double level)
{
    bench_ci c = {0, 0, 0, n};
    double sum = 0, ss = 0, half;

    for (int i = 0; i < n; i++)
        sum += v[i];
    c.mean = sum / n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - c.mean) * (v[i] - c.mean);
    half = n > 1 ? bench_t_quantile(1 - (1 - level) / 2, n - 1) *
                       sqrt(ss / (n - 1)) / sqrt(n)
                 : 0;
    c.low = c.mean - half;
    c.high = c.mean + half;
    return c;
}

bench_verdict bench_verdict_value(double v, bench_direction dir, double limit)
{
    bool met;

    switch (dir) {
    case BENCH_AT_LEAST:
        met = v >= limit;
        break;
    case BENCH_AT_MOST:
        met = v <= limit;
        break;
    case BENCH_NEAR_ONE:
    default:
        met = v >= 1 - limit && v <= 1 + limit;
        break;
    }
    return met ? BENCH_MET : BENCH_NOT_MET;
}

bench_verdict bench_verdict_interval(double lo, double hi, int rounds,
                                     bench_direction dir, double limit)
{
    if (rounds == 0)
        return BENCH_UNPAIRED;
    if (rounds < 2 || !(lo <= hi))
        return BENCH_NO_INTERVAL;
    switch (dir) {
    case BENCH_AT_LEAST:
        if (lo >= limit)
            return BENCH_MET;
        return hi < limit ? BENCH_NOT_MET : BENCH_WITHIN_NOISE;
    case BENCH_AT_MOST:
        if (hi <= limit)
            return BENCH_MET;
        return lo > limit ? BENCH_NOT_MET : BENCH_WITHIN_NOISE;
    case BENCH_NEAR_ONE:
    default:
        if (lo >= 1 - limit && hi <= 1 + limit)
            return BENCH_MET;
        if (lo > 1 + limit || hi < 1 - limit)
            return BENCH_NOT_MET;
        return BENCH_WITHIN_NOISE;
    }
}

const char *bench_verdict_text(bench_verdict v)
{
    switch (v) {
    case BENCH_MET:
        return "met";
    case BENCH_WITHIN_NOISE:
        return "within the noise";
    case BENCH_UNPAIRED:
        return "inconclusive, the runs are not paired";
    case BENCH_NO_INTERVAL:
        return "inconclusive, one round gives no interval";
    case BENCH_NOT_MET:
    default:
        return "not met";
    }
}

int bench_interval_side(double lo, double hi, int decimals)
{
    double scale = pow(10, decimals);

    if (!(lo <= hi))
        return 0;
    if (round(lo * scale) > scale)
        return 1;
    if (round(hi * scale) < scale)
        return -1;
    return 0;
}
