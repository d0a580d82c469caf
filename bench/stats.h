/*
 * stats.h: summarizing repeated benchmark rounds, and writing results.
 */
#ifndef KEEL_BENCH_STATS_H
#define KEEL_BENCH_STATS_H

#include <stdio.h>

/* Median, minimum and maximum of a set of rounds. */
typedef struct bench_stat {
    double median;
    double min;
    double max;
    int rounds;
} bench_stat;

/* Summarizes v[0..n) (n >= 1; v is reordered). */
bench_stat bench_stat_of(double *v, int n);

/* Writes `"name": {"median": m, "min": a, "max": b, "rounds": n}`. */
void bench_json_stat(FILE *f, const char *name, bench_stat s);

/* Spread of a stat as a percentage of its median: (max - min) / median. */
double bench_spread_pct(bench_stat s);

#endif /* KEEL_BENCH_STATS_H */
