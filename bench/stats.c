/*
 * stats.c: medians and spreads of benchmark rounds.
 */
#include "stats.h"

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
