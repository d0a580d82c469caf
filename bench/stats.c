/*
 * stats.c: medians and spreads of benchmark rounds, and confidence
 * intervals of means.
 */
#include "stats.h"

#include <math.h>
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

/* Two-sided 95% quantile of Student's t with df degrees of freedom: exact
 * to three decimals from a table up to 30, then the Cornish-Fisher
 * expansion around the normal quantile (error under 0.001 there). */
static double t_quantile_975(int df)
{
    static const double table[30] = {
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    const double z = 1.959964, z3 = z * z * z, z5 = z3 * z * z;
    double d = df;

    if (df <= 30)
        return table[df < 1 ? 0 : df - 1];
    return z + (z3 + z) / (4 * d) + (5 * z5 + 16 * z3 + 3 * z) / (96 * d * d);
}

bench_ci bench_ci_of(const double *v, int n)
{
    bench_ci c = {0, 0, 0, n};
    double sum = 0, ss = 0, half;

    for (int i = 0; i < n; i++)
        sum += v[i];
    c.mean = sum / n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - c.mean) * (v[i] - c.mean);
    half = n > 1 ? t_quantile_975(n - 1) * sqrt(ss / (n - 1)) / sqrt(n) : 0;
    c.low = c.mean - half;
    c.high = c.mean + half;
    return c;
}
