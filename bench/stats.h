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

/*
 * What a target asks of a figure: at least a limit, at most a limit, or
 * within a limit of 1 on both sides (two settings that should perform
 * alike: 1 - limit .. 1 + limit).
 */
typedef enum bench_direction {
    BENCH_AT_LEAST,
    BENCH_AT_MOST,
    BENCH_NEAR_ONE,
} bench_direction;

/*
 * What a figure, or the confidence interval [lo, hi] of one from `rounds`
 * paired rounds, says of a target.  An interval that holds the limit
 * cannot tell whether the target holds: that is "within the noise", its
 * own verdict, never a pass.
 */
typedef enum bench_verdict {
    BENCH_MET,          /* the figure, or the whole interval, meets it */
    BENCH_WITHIN_NOISE, /* the interval holds the limit */
    BENCH_UNPAIRED,     /* rounds 0: the runs could not be paired */
    BENCH_NO_INTERVAL,  /* rounds 1 (or an interval not a number) */
    BENCH_NOT_MET,      /* the figure, or the whole interval, fails it */
} bench_verdict;

/* A single figure against a limit: met or not met (not met if v is not a
 * number).  Limits are inclusive: v >= limit, v <= limit, |v - 1| <=
 * limit. */
bench_verdict bench_verdict_value(double v, bench_direction dir, double limit);

/*
 * An interval against a limit.  At least: met when lo >= limit, not met
 * when hi < limit.  At most: met when hi <= limit, not met when lo >
 * limit.  Near one: met when the interval lies within 1 +- limit (whether
 * or not it holds 1: a narrow one may show a real difference smaller than
 * the limit), not met when it lies wholly beyond one side.  Anything else
 * holds a limit: BENCH_WITHIN_NOISE.  BENCH_UNPAIRED for rounds 0,
 * BENCH_NO_INTERVAL for rounds 1 or an interval that is not one.
 */
bench_verdict bench_verdict_interval(double lo, double hi, int rounds,
                                     bench_direction dir, double limit);

/* The words for a verdict: "met", "within the noise", "inconclusive, the
 * runs are not paired", "inconclusive, one round gives no interval", "not
 * met". */
const char *bench_verdict_text(bench_verdict v);

/* Where [lo, hi] lies against 1 as printed to `decimals` places: 1 if
 * its lower end reads above 1, -1 if its upper end reads below 1, 0 if it
 * reads as holding 1 (or is not a number), so that what a reading says of
 * the interval agrees with the figures it prints. */
int bench_interval_side(double lo, double hi, int decimals);

#endif /* KEEL_BENCH_STATS_H */
