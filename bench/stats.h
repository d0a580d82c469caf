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
 * What the confidence interval [lo, hi] of a ratio a / b, from `rounds`
 * paired rounds, says of a target on the ratio.  An interval that holds 1
 * cannot tell a from b; one that reaches past a margin from 1 without
 * settling the target shows that the rounds were too few or too noisy, or
 * that the difference lies near the margin.  A narrow one may exclude 1
 * and still show a difference too small to matter.  In order of severity
 * (bench_verdict_worst()).
 */
typedef enum bench_verdict {
    BENCH_MET,          /* the target holds */
    BENCH_MET_IN_NOISE, /* a's median is below b's, but the interval holds
                           1 and stays within the margin */
    BENCH_WIDE,         /* the interval reaches past the margin and does
                           not settle the target either way */
    BENCH_UNPAIRED,     /* rounds 0: the runs could not be paired */
    BENCH_NO_INTERVAL,  /* rounds 1 (or an interval not a number): no
                           interval */
    BENCH_NOT_MET,      /* the interval lies where the target fails */
} bench_verdict;

/* "a performs like b", an equivalence within the margin: met when [lo,
 * hi] lies within 1 +- margin (whether or not it holds 1: a narrow
 * interval may show a real difference smaller than the margin); not met
 * when it lies wholly beyond the margin on one side; else BENCH_WIDE. */
bench_verdict bench_verdict_same(double lo, double hi, int rounds,
                                 double margin);

/* "a is at least as fast as b" (r the median ratio): not met when hi <
 * 1 (slower beyond the noise); BENCH_WIDE when lo < 1 - margin (it may be
 * slower by more than the margin); else met, or BENCH_MET_IN_NOISE when
 * both r and lo are below 1. */
bench_verdict bench_verdict_at_least(double r, double lo, double hi, int rounds,
                                     double margin);

/* "a costs less than `bound` times b", a ratio of times bounded above
 * (a non-inferiority margin, such as 1.01 for "no more than 1% slower"):
 * met when hi < bound, whether or not the interval holds 1; not met when
 * lo >= bound; else BENCH_WIDE. */
bench_verdict bench_verdict_below(double lo, double hi, int rounds,
                                  double bound);

/* "a keeps at least `bound` times b", a ratio of throughputs bounded below
 * (such as 0.95 for "costs at most 5%"): met when lo >= bound, whether or
 * not the interval holds 1; not met when hi < bound; else BENCH_WIDE. */
bench_verdict bench_verdict_above(double lo, double hi, int rounds,
                                  double bound);
/* The verdict of several targets that must all hold: the most severe of
 * v[0..n); met for n = 0. */
bench_verdict bench_verdict_worst(const bench_verdict *v, int n);

/* The words for a verdict: "met", "met, within the noise",
 * "inconclusive, the interval reaches past the margin", "inconclusive,
 * the runs are not paired", "inconclusive, one round gives no interval",
 * "not met". */
const char *bench_verdict_text(bench_verdict v);

/* Where [lo, hi] lies against 1 as printed to `decimals` places: 1 if
 * its lower end reads above 1, -1 if its upper end reads below 1, 0 if it
 * reads as holding 1 (or is not a number), so that what a reading says of
 * the interval agrees with the figures it prints. */
int bench_interval_side(double lo, double hi, int decimals);

#endif /* KEEL_BENCH_STATS_H */
