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

/* The layout of a readable results table printed on stdout. */
typedef struct bench_table {
    int name_width; /* columns for the measure's name */
    int decimals;   /* digits after the point of median, min and max */
} bench_table;

/* Prints the table's heading line (after a blank line). */
void bench_table_header(const bench_table *t);

/* Prints one row: the name, median, min and max of s, the unit, the note. */
void bench_table_row(const bench_table *t, const char *name, bench_stat s,
                     const char *unit, const char *note);

/* Spread of a stat as a percentage of its median: (max - min) / median. */
double bench_spread_pct(bench_stat s);

/* The mean of a set of values with a confidence interval of it. */
typedef struct bench_ci {
    double mean;
    double low;  /* mean - t * sd / sqrt(n) */
    double high; /* mean + t * sd / sqrt(n) */
    int n;
} bench_ci;

/*
 * Mean of v[0..n) (n >= 2) and the two-sided 95% confidence interval of
 * the mean by Student's t with n - 1 degrees of freedom: mean +- t * sd /
 * sqrt(n), sd the sample standard deviation.  Treats the values as
 * independent draws (per-pair ratios of interleaved rounds, say).
 */
bench_ci bench_ci_of(const double *v, int n);

/* The same at confidence level `level` (0.95 for bench_ci_of()): at 1 -
 * 0.05 / m each, m intervals all hold their means together with 95%
 * confidence (Bonferroni). */
bench_ci bench_ci_at(const double *v, int n, double level);

/* The p-quantile (0.5 <= p < 1) of Student's t with df >= 1 degrees of
 * freedom (NaN outside those): to about twelve digits for p >= 0.6, and
 * within 1e-6 of the true value closer to the median, where the tail's
 * complement loses digits. */
double bench_t_quantile(double p, int df);

#endif /* KEEL_BENCH_STATS_H */
