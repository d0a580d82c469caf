/*
 * report.h: what `keel bench report` reads back from its benchmarks, and
 * the functions of its parts: reading the figures (report_read.c),
 * judging the targets (report_targets.c), writing report.md
 * (report_md.c), results.json (report_json.c) and the charts
 * (report_charts.c).  bench_report.c runs the benchmarks and calls them.
 */
#ifndef KEEL_BENCH_REPORT_H
#define KEEL_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "json.h"
#include "stats.h"

#define REPORT_MAX_ARGS     24
#define REPORT_CPU_STEPS    4 /* CPUs a single client is measured on */
#define REPORT_MAX_SELECT   64
#define REPORT_MAX_ROW_RUNS BENCH_SELECT_MAX_RUNS

typedef struct report_opts {
    bool quick;
    const char *out;
    uint32_t scale;
    double seconds;        /* per select run */
    uint64_t transactions; /* per bloat client */
    int rounds;            /* of pin, lookup, catcache; select's runs */
} report_opts;

/* One sub-benchmark: how it is called and what it wrote. */
typedef struct report_step {
    const char *name;  /* its key in results.json */
    const char *bench; /* the subcommand, if not name */
    int (*main_fn)(int argc, char **argv);
    char *argv[REPORT_MAX_ARGS];
    int argc;
    char shown[512]; /* the command that reproduces it */
    char json[4200];
    json_doc doc;
    bool ran;
    bool optional; /* its failure does not stop the report */
    bool failed;   /* it exited non-zero (optional steps only) */
    double seconds;
} report_step;

/* One select configuration of either select step. */
typedef struct select_row {
    const json_doc *doc;
    const json_value *v;
    double clients, max_sessions, tps, tps_min, tps_max, ns, cpu, p50, p99;
    double runs[REPORT_MAX_ROW_RUNS]; /* each run's tps, in run order */
    int nruns;
    const char *layout;
} select_row;

/*
 * A over b, from runs measured in the same round (paired_at()): r the
 * median of the per-round ratios, lo and hi the lowest and highest,
 * ci_lo and ci_hi the confidence interval of their mean; rounds 0 when
 * the runs could not be paired (then the ratio of the medians, and the
 * ratios of the extremes as both ranges).
 */
typedef struct paired_ratio {
    double r, lo, hi, ci_lo, ci_hi;
    int rounds;
} paired_ratio;

/* Padded over packed at each client count of the main select step, each
 * interval at `level` (Bonferroni over the counts); side: where each lies
 * against 1 (layout_side()). */
typedef struct layout_cmp {
    size_t n;
    double level;
    double clients[REPORT_MAX_SELECT];
    paired_ratio r[REPORT_MAX_SELECT];
    int side[REPORT_MAX_SELECT];
} layout_cmp;

/* One client pinned to one CPU: that CPU and its select row. */
typedef struct cpu_row {
    double cpu;
    const json_value *v;
} cpu_row;

/* Everything the report's parts read, found once. */
typedef struct report_data {
    const report_opts *o;
    const report_step *steps;
    size_t nsteps;
    /* The steps by role (NULL where one did not run). */
    const report_step *pin, *catcache, *lookup, *sel, *ms, *bloat,
        *bloat_returned, *tpcb, *tpcb_insert, *tpcb_async;
    /* The pgbench comparison with PostgreSQL, if it ran (its JSON may say
     * it was skipped); compare_step even if it failed. */
    const report_step *compare, *compare_step;
    select_row *rows;
    size_t nrows;
    /* The rows the readings compare: 1, 2 and 64 clients padded, 2 and
     * 64 packed, 64 padded at max_sessions 400 and 402. */
    const select_row *one, *two, *s64, *k2, *k64, *a400, *a402;
    cpu_row cpu[REPORT_CPU_STEPS];
    size_t ncpu;
    const cpu_row *fastest; /* least ns per transaction */
    layout_cmp layout;
    double total_s, load0;
} report_data;

/* ---- report_read.c ---------------------------------------------------- */

/* Fills d from the steps that ran; rows is room for REPORT_MAX_SELECT. */
void report_data_read(report_data *d, const report_opts *o,
                      const report_step *steps, size_t nsteps, select_row *rows,
                      double total_s, double load0);

/* The row for (clients, layout, max_sessions; 0: any), or NULL. */
const select_row *select_find(const report_data *d, double clients,
                              const char *layout, double max_sessions);

/* a over b paired by round, the interval at `level`; paired() at 95%. */
paired_ratio paired_at(const select_row *a, const select_row *b, double level);
paired_ratio paired(const select_row *a, const select_row *b);

/* True if p has an interval (two rounds or more). */
bool paired_has_interval(paired_ratio p);

/* "rounds a-b, 95% CI of the mean c-d" (without the rounds unless
 * with_rounds), or "one round" / "not paired". */
void paired_span(char *buf, size_t len, paired_ratio p, bool with_rounds);

/* A bloat step's throughput, pruning on over off, from its pairs. */
paired_ratio bloat_ratio(const json_value *r);

/* Where padded over packed lies at count i: 1 beyond the noise above 1,
 * -1 below, 0 within it, 2 without an interval. */
int layout_side(const layout_cmp *lc, size_t i);

/* The median of a {median, min, max} object under key, or NaN. */
double stat_median(const json_value *root, const char *key);

/* The row of a tpcb step for `clients`, or NULL. */
const json_value *tpcb_row(const report_step *s, double clients);

/* The catalog cache bloat steps' sessions: the most final_block_bytes of
 * any session of the run with pruning `which` ("on", "off"), or NaN. */
double bloat_most_blocks(const report_step *s, const char *which);

/* ---- the pgbench comparison (report_read.c) ---- */

/* Whether the comparison has runs to read (it ran and was not skipped). */
bool compare_measured(const report_data *d);

/* The comparison's run of (script, mode, clients), or NULL. */
const json_value *compare_run(const report_data *d, const char *script,
                              const char *mode, double clients);

/* keel's over PostgreSQL's figure `what` ("tps", "cpu_us_per_txn") in one
 * run, or NaN where either is missing or PostgreSQL's is not positive. */
double compare_ratio(const json_value *run, const char *what);

/*
 * The lowest (highest with `highest`) of compare_ratio(what) over every
 * run of `script` in `mode` (NULL: both modes).  NaN if there is none, or
 * if any of them is NaN: a target over every client count is measured
 * only when every count is.
 */
double compare_extreme(const report_data *d, const char *script,
                       const char *mode, const char *what, bool highest);

/* Server `who`'s ("keel", "postgres") select-only tps at clients a over
 * clients b in `mode`, or NaN. */
double compare_scaling(const report_data *d, const char *who, const char *mode,
                       double a, double b);

/* The round-trip floor the comparison measured at `clients` (an element
 * of its JSON's floor.points), or NULL. */
const json_value *compare_floor(const report_data *d, double clients);

/*
 * The floor's bound on a select-only reading in `mode`, per run: with
 * `cpu` false the floor's round trips a second over PostgreSQL's tps
 * (the highest keel / PostgreSQL tps ratio a server could reach), the
 * lowest over the runs; with `cpu` the floor's answering CPU per round
 * trip over PostgreSQL's CPU per transaction (the least CPU ratio), the
 * highest.  NaN unless every run of the mode has its floor.
 */
double compare_floor_bound(const report_data *d, const char *mode, bool cpu);

/* The same for one run: floor over PostgreSQL, or NaN. */
double compare_floor_ratio(const json_value *run, const json_value *floor,
                           bool cpu);

/*
 * The log volume measurement (bench_compare.c's wal_measure()): server
 * `who`'s ("keel", "postgres") window `window` (0: the transactions just
 * after a CHECKPOINT, 1: the next as many), or NULL where it was not
 * measured; its figure `what` ("bytes_per_txn", "records_per_txn",
 * "fpi_per_txn", "bytes_without_fpi_per_txn") or NaN; and keel's over
 * PostgreSQL's, or NaN.
 */
const json_value *compare_wal_window(const report_data *d, const char *who,
                                    int window);
double compare_wal(const report_data *d, const char *who, int window,
                   const char *what);
double compare_wal_ratio(const report_data *d, int window, const char *what);

/* The 1-minute load average, or NaN. */
double load_average(void);

/* ---- report_targets.c ------------------------------------------------- */

/*
 * A figure as a target reads it: v, and where the target is judged on an
 * interval, lo..hi from `rounds` rounds (0: not paired, 1: one round).
 * v NaN: not measured.
 */
typedef struct report_reading {
    double v, lo, hi;
    int rounds;
} report_reading;

/* A target: its primary reading and its limit, written once. */
typedef struct report_target {
    const char *id;   /* its key in results.json */
    const char *what; /* what is measured: the primary reading */
    bench_direction dir;
    double limit;
    const char *unit; /* after the limit and the figure: " ns", "x" */
    int decimals;     /* figures are printed, and compared, to these */
    bool interval;    /* judged on the 95% interval, not the figure */
    report_reading (*read)(const report_data *d);
} report_target;

/* A target judged: its reading as printed and its verdict. */
typedef struct report_judged {
    const report_target *t;
    report_reading r; /* rounded to t->decimals */
    bool measured;
    bench_verdict v;
} report_judged;

/* A reading shown beside a target, as information: never judged. */
typedef struct report_info {
    const char *target; /* the id of the target it informs */
    const char *what;
    double per;       /* the limit in its terms: the target's over per */
    const char *unit; /* after the figure */
    int decimals;
    bool interval;
    report_reading (*read)(const report_data *d);
} report_info;

extern const report_target report_targets[];
extern const size_t report_ntargets;
extern const report_info report_infos[];
extern const size_t report_ninfos;

/* Judges every target of report_targets[] from d, into
 * out[0..report_ntargets). */
void report_judge(const report_data *d, report_judged *out);

/* The judged target with `id` in j[0..report_ntargets), which must be
 * there. */
const report_judged *report_find(const report_judged *j, const char *id);

/* The target's limit as the report shows it: ">= 1.85x", "<= 340 ns",
 * "within 0.95-1.05x" (a limit `per` times smaller where per > 0). */
void report_limit_text(char *buf, size_t len, const report_target *t,
                       double per);

/* "target `id` (<= 340 ns): met", as readings quote a verdict. */
void report_verdict_quote(char *buf, size_t len, const report_judged *j);

/* The words for j's verdict ("not measured" when nothing was). */
const char *report_verdict_text(const report_judged *j);

/* ---- report_md.c, report_json.c, report_charts.c ---------------------- */

/* Writes report.md to f.  0, or -1 if a write failed. */
int report_md_write(FILE *f, const report_data *d, const report_judged *j);

/* Writes results.json at path.  0, or -1. */
int report_json_write(const char *path, const report_data *d,
                      const report_judged *j);

/* Writes select.svg, bloat.svg, and compare.svg (tps against clients for
 * keel serve and PostgreSQL under pgbench's `script`).  0, or -1. */
int report_chart_select(const char *path, const report_data *d);
int report_chart_bloat(const char *path, const report_data *d);
int report_chart_compare(const char *path, const report_data *d,
                         const char *script);

#endif /* KEEL_BENCH_REPORT_H */
