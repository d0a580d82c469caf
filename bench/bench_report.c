/*
 * bench_report.c: `keel bench report`: a short run of every benchmark on
 * one pgbench database, written up as a report.
 *
 * Creates a scale-10 database (scale 1 with --quick) in a temporary
 * directory, then runs, in this process and one after another, `keel
 * bench pin`, `catcache`, `lookup`, `select` (1, 2, 4, 16 and 64 clients in
 * both process array layouts, then 64 clients with max_sessions 400 and
 * 402, clients pinned round-robin to the CPUs; then one client pinned to
 * each CPU, up to MAX_CPU_STEPS of them)
 * and `bloat`, each through its *_main function with --json into a
 * temporary file, their tables going to stderr as progress.  The figures
 * are read back from those files and written to the output directory
 * (./keel-report by default):
 *   report.md    every table, the command that reproduces it, and a
 *                one-line reading computed from its figures
 *   results.json every figure: each benchmark's JSON under its name, the
 *                select configurations as one list, the pinned runs as
 *                another (select_cpu), and the ratios the readings quote
 *   select.svg   transactions per second against clients, per layout
 *   bloat.svg    each session's catalog cache bytes against its
 *                transactions, pruning off and on
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "bench_db.h"
#include "json.h"
#include "port/clock.h"
#include "stats.h"
#include "svg.h"

#define WHO           "keel bench report"
#define MAX_ARGS      24
#define MAX_CPU_STEPS 4 /* CPUs a single client is measured on */
/* The most CPUs the select steps pin their clients to (bench select's
 * limit on --cpus); on a machine with more they run unpinned. */
#define MAX_PINNED_CPUS 16
#define MAX_SELECT      64
#define BLOAT_LINES     16

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
    char *argv[MAX_ARGS];
    int argc;
    char shown[512]; /* the command that reproduces it */
    char json[4200];
    json_doc doc;
    bool ran;
    double seconds;
} report_step;

static void usage(void)
{
    fprintf(stderr, "usage: keel bench report [--quick] [--out DIR] "
                    "[--scale N] [--seconds S]\n"
                    "                         [--transactions T] "
                    "[--rounds N]\n");
}

static int report_option(const bench_args *a, void *ctx)
{
    report_opts *o = ctx;
    uint32_t u;

    if (strcmp(a->name, "--out") == 0) {
        o->out = a->value;
    } else if (strcmp(a->name, "--scale") == 0) {
        return bench_args_u32(a, 1, 1000, &o->scale);
    } else if (strcmp(a->name, "--seconds") == 0) {
        return bench_args_double(a, 0.01, 60, &o->seconds);
    } else if (strcmp(a->name, "--rounds") == 0) {
        if (bench_args_u32(a, 1, 16, &u) != 0)
            return -1;
        o->rounds = (int)u;
    } else if (strcmp(a->name, "--transactions") == 0) {
        return bench_args_u64(a, 50, 100000000, &o->transactions);
    } else {
        return bench_args_unknown(a);
    }
    return 0;
}

static int parse_opts(int argc, char **argv, report_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->out = "keel-report";
    if (bench_args_parse(WHO, argc, argv, &o->quick, NULL, report_option, o) !=
        0)
        return -1;
    if (o->scale == 0)
        o->scale = o->quick ? 1 : 10;
    if (o->seconds == 0)
        o->seconds = o->quick ? 0.1 : 0.5;
    if (o->transactions == 0)
        o->transactions = o->quick ? 20000 : 200000;
    if (o->rounds == 0)
        o->rounds = 3;
    return 0;
}

/* Appends arguments (a NULL-terminated list, each copied) to a step's
 * command line, and with `shown` to the command the report shows. */
static void step_args(report_step *s, int shown, ...)
{
    va_list ap;
    const char *a;

    va_start(ap, shown);
    while ((a = va_arg(ap, const char *)) != NULL) {
        if (s->argc < MAX_ARGS - 1)
            s->argv[s->argc++] = strdup(a);
        if (shown) {
            size_t n = strlen(s->shown);
            snprintf(s->shown + n, sizeof(s->shown) - n, " %s", a);
        }
    }
    va_end(ap);
}

static void step_free(report_step *s)
{
    for (int i = 0; i < s->argc; i++)
        free(s->argv[i]);
    json_doc_free(&s->doc);
}

/*
 * Runs a step with its standard output sent to standard error (its table
 * is progress here) and reads its JSON back.  0, or -1 after a message.
 */
static int step_run(report_step *s, int i, int n)
{
    char err[512];
    uint64_t t0 = clock_now_ns();
    const char *bench = s->bench != NULL ? s->bench : s->name;
    int saved, rc;

    fprintf(stderr, "[%d/%d] keel bench %s%s\n", i, n, bench, s->shown);
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, WHO ": cannot redirect output: %s\n", strerror(errno));
        return -1;
    }
    s->argv[s->argc] = NULL;
    rc = s->main_fn(s->argc, s->argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    s->seconds = (double)(clock_now_ns() - t0) / 1e9;
    if (rc != 0) {
        fprintf(stderr, WHO ": keel bench %s failed (status %d)\n", bench, rc);
        return -1;
    }
    if (json_doc_read(s->json, &s->doc, err, sizeof(err)) != 0) {
        fprintf(stderr, WHO ": keel bench %s: %s\n", bench, err);
        return -1;
    }
    s->ran = true;
    fprintf(stderr, "  keel bench %s: %.1f s\n", bench, s->seconds);
    return 0;
}

/* ---- reading the figures --------------------------------------------- */

/* The select configurations of both select steps, as one list. */
#define MAX_ROW_RUNS BENCH_SELECT_MAX_RUNS

typedef struct select_row {
    const json_doc *doc;
    const json_value *v;
    double clients, max_sessions, tps, tps_min, tps_max, ns, cpu, p50, p99;
    double runs[MAX_ROW_RUNS]; /* each run's tps, in run order */
    int nruns;
    const char *layout;
} select_row;

static size_t select_rows(const report_step *steps, size_t nsteps,
                          select_row *rows, size_t max)
{
    size_t n = 0;

    for (size_t k = 0; k < nsteps; k++) {
        const json_value *list = json_get(&steps[k].doc.root, "select");
        if (strcmp(steps[k].name, "select") != 0 || !steps[k].ran)
            continue;
        for (size_t i = 0; list != NULL && i < list->n && n < max; i++) {
            const json_value *v = &list->items[i];
            select_row *r = &rows[n++];
            r->doc = &steps[k].doc;
            r->v = v;
            r->clients = json_num(v, "clients");
            r->max_sessions = json_num(v, "max_sessions");
            r->tps = json_num(v, "tps");
            r->tps_min = json_num(v, "tps_min");
            r->tps_max = json_num(v, "tps_max");
            r->ns = json_num(v, "ns_per_txn");
            r->cpu = json_num(v, "cpu_ns_per_txn");
            r->p50 = json_num(v, "p50_ns");
            r->p99 = json_num(v, "p99_ns");
            r->layout = json_str(v, "layout");
            if (r->layout == NULL)
                r->layout = "?";
            {
                /* Each run's tps; none unless every one is a number. */
                const json_value *t = json_get(v, "tps_runs");
                r->nruns = 0;
                for (size_t j = 0; t != NULL && t->kind == JSON_ARRAY &&
                                   j < t->n && j < MAX_ROW_RUNS;
                     j++) {
                    const json_value *x = json_at(t, j);
                    if (x == NULL || x->kind != JSON_NUMBER) {
                        r->nruns = 0;
                        break;
                    }
                    r->runs[r->nruns++] = x->num;
                }
            }
        }
    }
    return n;
}

/* The row for (clients, layout, max_sessions; 0: the first of any), or
 * NULL. */
static const select_row *select_find(const select_row *rows, size_t n,
                                     double clients, const char *layout,
                                     double max_sessions)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].clients == clients && strcmp(rows[i].layout, layout) == 0 &&
            (max_sessions == 0 || rows[i].max_sessions == max_sessions))
            return &rows[i];
    return NULL;
}

/* The rows the readings and targets compare (NULL where a run lacks
 * them): 1, 2 and 64 clients padded, 64 packed, and 64 padded at
 * max_sessions 400 and 402. */
typedef struct select_picks {
    const select_row *one, *two, *s64, *k64, *a400, *a402;
} select_picks;

static select_picks select_pick(const select_row *rows, size_t n)
{
    select_picks p;

    p.one = select_find(rows, n, 1, "padded", 0);
    p.two = select_find(rows, n, 2, "padded", 0);
    p.s64 = select_find(rows, n, 64, "padded", 0);
    p.k64 = select_find(rows, n, 64, "packed", 0);
    p.a400 = select_find(rows, n, 64, "padded", 400);
    p.a402 = select_find(rows, n, 64, "padded", 402);
    return p;
}

static double ratio(const select_row *a, const select_row *b)
{
    return a != NULL && b != NULL && b->tps > 0 ? a->tps / b->tps : NAN;
}

/*
 * a over b, from runs measured in the same round: the runs of every
 * configuration of a select step are interleaved (run 1 of each, then run
 * 2, ..., every second run in reverse order), so run i of a and run i of
 * b saw the same state of the host.  r is the median of the per-round
 * ratios, lo and hi the lowest and highest, ci_lo and ci_hi the
 * confidence interval of their mean at `level` (Student's t; the ratio
 * itself where there is one round); without paired runs (or where a run
 * has no throughput), the ratio of the medians, and the ratios of the
 * extremes as both ranges.  paired() is paired_at() at 95%.
 */
typedef struct paired_ratio {
    double r, lo, hi, ci_lo, ci_hi;
    int rounds; /* 0: not paired */
} paired_ratio;

static paired_ratio paired_at(const select_row *a, const select_row *b,
                              double level)
{
    paired_ratio p = {NAN, NAN, NAN, NAN, NAN, 0};
    double v[MAX_ROW_RUNS];
    bool same_rounds;
    bench_stat st;
    bench_ci ci;

    if (a == NULL || b == NULL)
        return p;
    same_rounds = a->doc == b->doc && a->nruns > 0 && a->nruns == b->nruns;
    for (int i = 0; same_rounds && i < a->nruns; i++) {
        v[i] = a->runs[i] > 0 && b->runs[i] > 0 ? a->runs[i] / b->runs[i] : NAN;
        /* A run without a throughput leaves the medians to compare. */
        same_rounds = isfinite(v[i]);
    }
    if (same_rounds) {
        ci = bench_ci_at(v, a->nruns, level);
        st = bench_stat_of(v, a->nruns);
        p.r = st.median;
        p.lo = st.min;
        p.hi = st.max;
        p.ci_lo = ci.low;
        p.ci_hi = ci.high;
        p.rounds = a->nruns;
        return p;
    }
    p.r = ratio(a, b);
    p.lo = p.ci_lo = b->tps_max > 0 ? a->tps_min / b->tps_max : NAN;
    p.hi = p.ci_hi = b->tps_min > 0 ? a->tps_max / b->tps_min : NAN;
    return p;
}

static paired_ratio paired(const select_row *a, const select_row *b)
{
    return paired_at(a, b, 0.95);
}

/* How far from 1 an interval may reach and still show that a difference,
 * if there is one, is too small to matter: between two settings that
 * should perform alike, or below 1 for one that should be at least as
 * fast as another.  One that reaches past it without settling the target
 * shows that the rounds were too few or too noisy, or that the difference
 * lies near the margin.  (The 2016 max_sessions swing was 30%.) */
#define VERDICT_MARGIN 0.05

/* The verdict on two settings that should perform alike (p: one over the
 * other): see bench_verdict_same(). */
static bench_verdict same_verdict(paired_ratio p)
{
    return bench_verdict_same(p.ci_lo, p.ci_hi, p.rounds, VERDICT_MARGIN);
}

/* The verdict on "a at least as fast as b" (p: a over b): see
 * bench_verdict_at_least(). */
static bench_verdict at_least_verdict(paired_ratio p)
{
    return bench_verdict_at_least(p.r, p.ci_lo, p.ci_hi, p.rounds,
                                  VERDICT_MARGIN);
}

/* True if p has an interval: two rounds or more (paired_at() gives a
 * finite one then). */
static bool paired_has_interval(paired_ratio p)
{
    return p.rounds >= 2 && p.ci_lo <= p.ci_hi;
}

/* What a reading says of p's spread: "rounds a-b, 95% CI of the mean
 * c-d" (without the rounds unless with_rounds), or why there is no
 * interval, as the verdicts say it. */
static void paired_span(char *buf, size_t len, paired_ratio p, bool with_rounds)
{
    if (!paired_has_interval(p))
        snprintf(buf, len, "%s", p.rounds == 0 ? "not paired" : "one round");
    else if (with_rounds)
        snprintf(buf, len, "rounds %.3f-%.3f, 95%% CI of the mean %.3f-%.3f",
                 p.lo, p.hi, p.ci_lo, p.ci_hi);
    else
        snprintf(buf, len, "95%% CI of the mean %.3f-%.3f", p.ci_lo, p.ci_hi);
}

/* The bloat runs' throughput, pruning on over off, from their pairs (a
 * paired_ratio, as the select rows'). */
static paired_ratio bloat_ratio(const json_value *r)
{
    const json_value *ci = json_get(r, "tps_on_over_off_ci");
    double pairs = json_num(r, "pairs");
    paired_ratio p = {json_num(r, "tps_on_over_off"),
                      json_num(r, "tps_on_over_off_min"),
                      json_num(r, "tps_on_over_off_max"),
                      NAN,
                      NAN,
                      pairs >= 1 && pairs <= MAX_ROW_RUNS ? (int)pairs : 0};

    if (p.rounds == 1) {
        p.ci_lo = p.ci_hi = p.r;
    } else if (ci != NULL && ci->n == 2) {
        p.ci_lo = ci->items[0].num;
        p.ci_hi = ci->items[1].num;
    }
    return p;
}

/* The verdict on the bloat runs' throughput read as pruning's cost: at
 * most VERDICT_MARGIN (bench_verdict_above()). */
static bench_verdict bloat_cost_verdict(paired_ratio p)
{
    return bench_verdict_above(p.ci_lo, p.ci_hi, p.rounds, 1 - VERDICT_MARGIN);
}

static const report_step *step_named(const report_step *steps, size_t n,
                                     const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(steps[i].name, name) == 0 && steps[i].ran)
            return &steps[i];
    return NULL;
}

/* "3.1% faster" / "2.0% slower" for a ratio a/b. */
static void faster_slower(char *buf, size_t len, double r)
{
    if (!isfinite(r))
        snprintf(buf, len, "not comparable");
    else if (r >= 1)
        snprintf(buf, len, "%.1f%% faster", 100 * (r - 1));
    else
        snprintf(buf, len, "%.1f%% slower", 100 * (1 - r));
}

/* The 1-minute load average, or NaN. */
static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double v = NAN;

    if (f != NULL) {
        if (fscanf(f, "%lf", &v) != 1)
            v = NAN;
        fclose(f);
    }
    return v;
}

/* Padded over packed at each client count of the main select run, paired
 * by round (paired_at()).  "At every count" is one claim made of n
 * comparisons, so each interval is at 1 - 0.05 / n (Bonferroni): all of
 * them hold their means together with 95% confidence, and a count that
 * only looks slower by chance is not called slower beyond the noise. */
typedef struct layout_cmp {
    size_t n;
    double level; /* each interval's confidence level */
    double clients[MAX_SELECT];
    paired_ratio r[MAX_SELECT];
    bench_verdict v[MAX_SELECT]; /* at_least_verdict() of each */
    double worst;                /* the lowest median ratio */
    bench_verdict verdict;       /* the worst of v: at every count */
} layout_cmp;

static layout_cmp layout_compare(const select_row *rows, size_t n,
                                 const json_doc *main_doc)
{
    layout_cmp c = {.n = 0, .worst = NAN, .verdict = BENCH_MET};
    const select_row *pad[MAX_SELECT], *pack[MAX_SELECT];

    for (size_t i = 0; i < n && c.n < MAX_SELECT; i++) {
        const select_row *k;
        if (rows[i].doc != main_doc || strcmp(rows[i].layout, "padded") != 0)
            continue;
        k = select_find(rows, n, rows[i].clients, "packed",
                        rows[i].max_sessions);
        if (k == NULL || k->doc != main_doc)
            continue;
        pad[c.n] = &rows[i];
        pack[c.n++] = k;
    }
    c.level = c.n > 0 ? 1 - 0.05 / (double)c.n : 0.95;
    for (size_t i = 0; i < c.n; i++) {
        c.clients[i] = pad[i]->clients;
        c.r[i] = paired_at(pad[i], pack[i], c.level);
        if (!(c.r[i].r >= c.worst))
            c.worst = c.r[i].r;
        c.v[i] = at_least_verdict(c.r[i]);
    }
    c.verdict = bench_verdict_worst(c.v, (int)c.n);
    return c;
}

/* ---- report.md ------------------------------------------------------- */

/* A table of every {median, min, max} object of a benchmark's JSON. */
static void md_stat_table(FILE *f, const json_value *root)
{
    fputs("| measure | median | min | max |\n|---|---:|---:|---:|\n", f);
    for (size_t i = 0; root != NULL && i < root->n; i++) {
        const json_value *v = &root->items[i];
        if (v->kind != JSON_OBJECT || !isfinite(json_num(v, "median")))
            continue;
        fprintf(f, "| `%s` | %.2f | %.2f | %.2f |\n", v->key,
                json_num(v, "median"), json_num(v, "min"), json_num(v, "max"));
    }
}

static double stat_median(const json_value *root, const char *key)
{
    return json_num(json_get(root, key), "median");
}

static void md_pin(FILE *f, const report_step *s)
{
    const json_value *r = &s->doc.root;
    double two = stat_median(r, "read_hit_2threads_mops");
    double many = NAN;
    const char *many_name = "";

    for (size_t i = 0; i < r->n; i++)
        if (strstr(r->items[i].key, "threads_mops") != NULL &&
            strcmp(r->items[i].key, "read_hit_2threads_mops") != 0) {
            many = json_num(&r->items[i], "median");
            many_name = r->items[i].key;
        }
    fprintf(f, "## Buffer pool hot paths\n\n`keel bench%s%s`\n\n", " pin",
            s->shown);
    md_stat_table(f, r);
    fprintf(f,
            "\nReading: a resident page costs %.1f ns to look up, pin and "
            "unpin; a first pin by id %.1f ns; %s gives %.2fx the aggregate "
            "throughput of 2 threads.\n\n",
            stat_median(r, "read_hit_ns"), stat_median(r, "pin_unpin_ns"),
            many_name, many / two);
}

/* One count's row of a tpcb step's JSON, or NULL. */
static const json_value *tpcb_row(const report_step *s, double clients)
{
    const json_value *a = json_get(&s->doc.root, "tpcb"), *r;

    for (size_t i = 0; a != NULL && (r = json_at(a, i)) != NULL; i++)
        if (json_num(r, "clients") == clients)
            return r;
    return NULL;
}

/*
 * The write-ahead log: pgbench's read-write transaction with commits that
 * wait for the log (1 and 64 clients) and with synchronous_commit off (1
 * and 2), beside the disk's own write + fdatasync loop measured in the
 * same directory just before.
 */
static void md_tpcb(FILE *f, const report_step *on, const report_step *ins,
                    const report_step *off)
{
    double loop = json_num(&on->doc.root, "fsync_loop_per_s");
    const json_value *r1 = tpcb_row(on, 1), *r64 = tpcb_row(on, 64);
    const json_value *i1 = tpcb_row(ins, 1), *i64 = tpcb_row(ins, 64);
    const report_step *all[3] = {on, ins, off};
    static const char *const kind[3] = {"tpcb, on", "insert, on",
                                        "tpcb, off"};

    fprintf(f, "## Durability: the write-ahead log\n\n`keel bench tpcb%s`, "
               "`keel bench tpcb%s` and `keel bench tpcb%s`\n\n",
            on->shown, ins->shown, off->shown);
    fprintf(f, "| transaction, synchronous_commit | clients | tps (median) | "
               "min | max | tries/commit | log bytes/commit |\n|---|---:|---:|"
               "---:|---:|---:|---:|\n");
    for (int k = 0; k < 3; k++) {
        const json_value *a = json_get(&all[k]->doc.root, "tpcb"), *r;
        for (size_t i = 0; a != NULL && (r = json_at(a, i)) != NULL; i++)
            fprintf(f, "| %s | %.0f | %.0f | %.0f | %.0f | %.3f | %.0f |\n",
                    kind[k], json_num(r, "clients"), json_num(r, "tps"),
                    json_num(r, "tps_min"), json_num(r, "tps_max"),
                    json_num(r, "tries_per_commit"),
                    json_num(r, "log_bytes_per_commit"));
    }
    fprintf(f, "\nThe disk's own 8 KiB write + fdatasync loop in the same "
               "directory: %.0f per second (measured before the first "
               "step).  `insert` is a transaction of one history row: what "
               "limits it is the commit alone.\n\n",
            loop);
    if (r1 != NULL && loop > 0)
        fprintf(f,
                "- One client, pgbench's transaction, commits waiting for "
                "the log: %.2fx the disk's loop (target: at least 0.70x): "
                "%s.\n",
                json_num(r1, "tps") / loop,
                json_num(r1, "tps") / loop >= 0.7 ? "met" : "not met");
    if (i1 != NULL && i64 != NULL && json_num(i1, "tps") > 0)
        fprintf(f,
                "- Group commit, 64 clients over one (insert): %.2fx "
                "(target: at least 10x): %s.\n",
                json_num(i64, "tps") / json_num(i1, "tps"),
                json_num(i64, "tps") / json_num(i1, "tps") >= 10 ? "met"
                                                                   : "not met");
    if (r1 != NULL && r64 != NULL && json_num(r1, "tps") > 0)
        fprintf(f,
                "- pgbench's transaction, 64 clients over one: %.2fx "
                "(information).  Every transaction updates one of the %d "
                "branch rows, and under repeatable read a row's next updater "
                "waits for its last one's commit and then starts over "
                "(first updater wins): no more commits than branches can "
                "share an fdatasync, and the retries write to the log "
                "too.\n",
                json_num(r64, "tps") / json_num(r1, "tps"),
                (int)json_num(&on->doc.root, "branches"));
    fprintf(f, "- With synchronous_commit off the figures above compare with "
               "keel's without a log, which this build cannot run: "
               "bench/README.md (\"The write-ahead log\") holds that "
               "comparison, made with the build before the log.\n\n");
}

static void md_lookup(FILE *f, const report_step *s, const select_row *one)
{
    const json_value *r = &s->doc.root;
    double lk = stat_median(r, "lookup_ns");

    fprintf(f, "## Primary-key lookup\n\n`keel bench lookup%s`\n\n", s->shown);
    md_stat_table(f, r);
    fprintf(f,
            "\nReading: the index lookup and heap fetch of a random "
            "account cost %.0f ns, %.1f times one random load from memory "
            "(%.0f ns here now; of 16,384 lines the caches hold, one on each "
            "4 KiB page of 64 MiB takes %.0f ns against %.0f ns on 256 pages: "
            "the address translation, `page_walk_load_ns` over "
            "`cached_load_ns`), entering the "
            "index at its leaf from the "
            "session's directory; descending from the root instead takes "
            "%.0f ns (%.2fx), and without the heap prefetch as well %.0f ns "
            "(%.2fx), the heap page's misses waiting for the leaf's (the row "
            "was predicted for %.1f%% of lookups, %.2f%% of them exactly); "
            "keel_lookup(), which resolves names in the catalogs on every "
            "call, %.0f ns",
            lk, lk / stat_median(r, "random_load_ns"),
            stat_median(r, "random_load_ns"),
            stat_median(r, "page_walk_load_ns"),
            stat_median(r, "cached_load_ns"), stat_median(r, "lookup_root_ns"),
            stat_median(r, "lookup_root_ns") / lk,
            stat_median(r, "lookup_unhinted_ns"),
            stat_median(r, "lookup_unhinted_ns") / lk,
            100 * json_num(r, "heap_guess_rate"),
            100 * json_num(r, "heap_guess_exact"),
            stat_median(r, "keel_lookup_ns"));
    if (one != NULL && one->ns >= lk)
        fprintf(f,
                "; the whole select-only transaction (begin, 5 catalog cache "
                "look-ups, this lookup, commit) takes %.0f ns at one client, "
                "%.0f ns more than the lookup alone",
                one->ns, one->ns - lk);
    else if (one != NULL)
        fprintf(f,
                "; the whole select-only transaction (begin, 5 catalog cache "
                "look-ups, this lookup, commit) measured %.0f ns at one "
                "client, %.0f ns less than the lookup alone: the two ran at "
                "different moments, and the difference is the machine's "
                "noise, not the transaction's cost",
                one->ns, lk - one->ns);
    fputs(".\n\n", f);
}

/*
 * The catalog cache's hit paths with pruning enabled may take at most 1%
 * longer than with it disabled: the upper end of the 95% interval of the
 * time ratio lies below CATCACHE_TIME_BOUND (an interval that excludes 1
 * by less shows a real but negligible difference; the instruction counts
 * of bench/catcache-instructions.sh settle whether there is one).
 */
#define CATCACHE_TIME_BOUND 1.01

/* A catalog cache ratio's interval end as printed (four decimals), so
 * that its verdict and the reading's words follow the printed figures. */
static double catcache_printed(const json_value *r, const char *key)
{
    return round(json_num(r, key) * 1e4) / 1e4;
}

/* The verdict on the catalog cache's time ratio (bench_verdict_below()). */
static bench_verdict catcache_verdict(const json_value *r)
{
    return bench_verdict_below(catcache_printed(r, "prune_time_ratio_ci_low"),
                               catcache_printed(r, "prune_time_ratio_ci_high"),
                               (int)json_num(r, "pairs"), CATCACHE_TIME_BOUND);
}

static void md_catcache(FILE *f, const report_step *s)
{
    const json_value *r = &s->doc.root;
    static const char *const m[] = {"hit1", "hit3", "negative_hit"};
    char key[96];
    const char *cfg = json_str(r, "config");

    fprintf(f, "## Catalog cache look-ups\n\n`keel bench catcache%s`%s%s%s\n\n",
            s->shown, cfg != NULL ? " (build: " : "", cfg != NULL ? cfg : "",
            cfg != NULL ? ")" : "");
    fputs("| look-up | pruning enabled, ns (min..max) | pruning disabled, "
          "ns (min..max) | time ratio enabled/disabled (95% CI) |\n"
          "|---|---:|---:|---:|\n",
          f);
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        const json_value *on, *off;
        snprintf(key, sizeof(key), "%s_ns", m[i]);
        on = json_get(r, key);
        snprintf(key, sizeof(key), "%s_ns_pruning_off", m[i]);
        off = json_get(r, key);
        if (on == NULL || off == NULL)
            continue;
        fprintf(f, "| `%s` | %.2f (%.2f..%.2f) | %.2f (%.2f..%.2f) | ", m[i],
                json_num(on, "median"), json_num(on, "min"),
                json_num(on, "max"), json_num(off, "median"),
                json_num(off, "min"), json_num(off, "max"));
        snprintf(key, sizeof(key), "%s_ratio", m[i]);
        fprintf(f, "%.4f", json_num(r, key));
        snprintf(key, sizeof(key), "%s_ratio_ci_low", m[i]);
        fprintf(f, " (%.4f..", json_num(r, key));
        snprintf(key, sizeof(key), "%s_ratio_ci_high", m[i]);
        fprintf(f, "%.4f) |\n", json_num(r, key));
    }
    fprintf(f,
            "\n| bloat run | bytes before | bytes after | peak bytes | "
            "hot-set hit ratio |\n|---|---:|---:|---:|---:|\n"
            "| pruning off | %.0f | %.0f | %.0f | %.4f |\n"
            "| pruning on | %.0f | %.0f | %.0f | %.4f |\n",
            json_num(r, "bloat_bytes_before_pruning_off"),
            json_num(r, "bloat_bytes_pruning_off"),
            json_num(r, "bloat_peak_bytes_pruning_off"),
            json_num(r, "hot_hit_ratio_pruning_off"),
            json_num(r, "bloat_bytes_before_pruning_on"),
            json_num(r, "bloat_bytes_pruning_on"),
            json_num(r, "bloat_peak_bytes_pruning_on"),
            json_num(r, "hot_hit_ratio_pruning_on"));
    {
        double pr = json_num(r, "prune_time_ratio");
        double lo = json_num(r, "prune_time_ratio_ci_low");
        double hi = json_num(r, "prune_time_ratio_ci_high");
        int side = bench_interval_side(lo, hi, 4);
        fprintf(f,
                "\nReading: with pruning enabled the three hit paths take "
                "%.4fx the time they take with it disabled (95%% CI "
                "%.4f..%.4f, %s); the target asks the interval to end "
                "below %.2f (at most %.0f%% slower): %s. %.0f missing names "
                "grow an unpruned cache by %.1f MiB, a pruned one ends at "
                "%.2f MiB (target %.2f MiB).\n\n",
                pr, lo, hi,
                side > 0   ? "slower beyond the noise"
                : side < 0 ? "faster beyond the noise"
                           : "no difference resolved",
                CATCACHE_TIME_BOUND, 100 * (CATCACHE_TIME_BOUND - 1),
                bench_verdict_text(catcache_verdict(r)),
                json_num(r, "bloat_names"),
                (json_num(r, "bloat_bytes_pruning_off") -
                 json_num(r, "bloat_bytes_before_pruning_off")) /
                    1048576.0,
                json_num(r, "bloat_bytes_pruning_on") / 1048576.0,
                json_num(r, "memory_target_bytes") / 1048576.0);
    }
}

/* Where padded over packed lies at one count of lc: 1 beyond the noise
 * above 1 (its interval wholly above), -1 beyond it below, 0 within the
 * noise, 2 without an interval (one round, or runs not paired). */
static int layout_side(const layout_cmp *lc, size_t i)
{
    const paired_ratio *p = &lc->r[i];

    if (!paired_has_interval(*p))
        return 2;
    return bench_interval_side(p->ci_lo, p->ci_hi, 3);
}

/* Writes `lead` and the client counts of lc on `side` (layout_side();
 * "2 and 4 clients", with the median difference where beyond the noise),
 * ending the sentence; nothing if there are none. */
static void md_layout_class(FILE *f, const layout_cmp *lc, int side,
                            const char *lead)
{
    size_t k = 0, m = 0;
    double last = 0;

    for (size_t i = 0; i < lc->n; i++)
        m += layout_side(lc, i) == side;
    if (m == 0)
        return;
    fputs(lead, f);
    for (size_t i = 0; i < lc->n; i++) {
        if (layout_side(lc, i) != side)
            continue;
        fprintf(f, "%s %.0f",
                k == 0       ? ""
                : k + 1 == m ? " and"
                             : ",",
                lc->clients[i]);
        if (side == 1 || side == -1)
            fprintf(f, " (median %+.1f%%)", 100 * (lc->r[i].r - 1));
        last = lc->clients[i];
        k++;
    }
    fprintf(f, " client%s.", m == 1 && last == 1 ? "" : "s");
}

static void md_select(FILE *f, const report_step *main_step,
                      const report_step *ms_step, const select_row *rows,
                      size_t n, const report_step *pin_step)
{
    const select_picks sel = select_pick(rows, n);
    char buf[64];

    fprintf(f,
            "## Select-only transactions\n\n`keel bench select%s`\n\n"
            "Each transaction is `keel_begin()`, `keel_select_column()` "
            "(five catalog cache look-ups, the primary key's descent and "
            "the heap fetch) and `keel_commit()`, through the public "
            "API.\n\n"
            "![transactions per second against clients](select.svg)\n\n"
            "| clients | layout | max_sessions | tps (median) | min | max | "
            "ns/txn per client | CPU ns/txn | p50 ns | p99 ns |\n"
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            main_step->shown);
    for (size_t i = 0; i < n; i++) {
        const select_row *r = &rows[i];
        if (r->doc != &main_step->doc)
            continue;
        fprintf(f,
                "| %.0f | %s | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | "
                "%.0f | %.0f |\n",
                r->clients, r->layout, r->max_sessions, r->tps, r->tps_min,
                r->tps_max, r->ns, r->cpu, r->p50, r->p99);
    }
    {
        paired_ratio lay = paired(sel.s64, sel.k64);
        char span[96];

        faster_slower(buf, sizeof(buf), lay.r);
        paired_span(span, sizeof(span), lay, false);
        fprintf(f,
                "\nReading: one client runs %.0f transactions per second "
                "(%.0f ns each, %.0f ns of CPU, all catalog look-ups "
                "included; target <= 455 ns); 2 clients give %.2fx one "
                "(target >= 1.85), 64 clients %.2fx two (target >= 0.85); "
                "padded is %s than packed at 64 clients (median %.3fx, "
                "%s).\n\n",
                sel.one ? sel.one->tps : NAN, sel.one ? sel.one->ns : NAN,
                sel.one ? sel.one->cpu : NAN, paired(sel.two, sel.one).r,
                paired(sel.s64, sel.two).r, buf, lay.r, span);
    }
    fputs("Ratios between rows are the median of the ratios of runs "
          "measured in the same round (every configuration's run 1, then "
          "every one's run 2 in reverse order, and so on), with the 95% "
          "confidence interval of their mean in brackets (in the line by "
          "clients below, the lowest and highest ratio too, and intervals "
          "at the level it states); a difference is within the noise when "
          "that interval holds 1",
          f);
    {
        const json_value *c = json_get(&main_step->doc.root, "cpus");
        fputs(c != NULL && c->n > 0
                  ? "; the clients are pinned round-robin to the CPUs "
                    "listed, so that both layouts run on the same CPUs.\n\n"
                  : ".\n\n",
              f);
    }
    {
        layout_cmp lc = layout_compare(rows, n, &main_step->doc);
        if (lc.n > 0) {
            char lead[96];
            bool any = false;
            for (size_t i = 0; i < lc.n; i++)
                any = any || layout_side(&lc, i) != 2;
            fputs("Padded over packed, by clients", f);
            if (any)
                fprintf(f,
                        " (each interval at %.1f%%, so that all %zu hold "
                        "together with at least 95%% confidence)",
                        100 * lc.level, lc.n);
            fputs(":", f);
            for (size_t i = 0; i < lc.n; i++) {
                const paired_ratio *p = &lc.r[i];
                fprintf(f, "%s %.0f: %.3fx", i ? ";" : "", lc.clients[i], p->r);
                if (layout_side(&lc, i) != 2)
                    fprintf(f, " (%.3f-%.3f, CI %.3f-%.3f)", p->lo, p->hi,
                            p->ci_lo, p->ci_hi);
                else
                    fputs(p->rounds == 0 ? " (not paired)" : " (one round)", f);
            }
            fputs(".", f);
            /* The sides are those of these intervals, which may differ
             * from what the 95% interval quoted above says of 64. */
            snprintf(lead, sizeof(lead),
                     " At %.1f%%, padded is faster beyond the noise at",
                     100 * lc.level);
            md_layout_class(f, &lc, 1, lead);
            snprintf(lead, sizeof(lead),
                     " At %.1f%%, padded and packed are within the noise "
                     "of each other at",
                     100 * lc.level);
            md_layout_class(f, &lc, 0, lead);
            snprintf(lead, sizeof(lead),
                     " At %.1f%%, padded is slower beyond the noise at",
                     100 * lc.level);
            md_layout_class(f, &lc, -1, lead);
            md_layout_class(f, &lc, 2, " There is no interval at");
            fprintf(f,
                    " The target, padded at least as fast at every count "
                    "(every interval's upper end at least 1 and lower end "
                    "at least %.2f): %s.\n\n",
                    1 - VERDICT_MARGIN, bench_verdict_text(lc.verdict));
        }
    }
    if (sel.one != NULL && sel.two != NULL && pin_step != NULL)
        fprintf(f,
                "A transaction writes three shared cache lines: its "
                "session's process array slot (its xmin, at begin and at "
                "commit), on a line of its own when padded and beside "
                "other sessions' slots when packed, and the two buffers it "
                "pins, a random leaf of the primary key and a random heap "
                "page (the index's root and level-1 pages are found in the "
                "session's own directory of the index). So, padded, two "
                "clients seldom write the same line. Where they do, what a "
                "line's move between cores costs depends on where the host "
                "runs the two virtual CPUs; in this run %.0f ns "
                "(`line_handoff_ns`, under the buffer pool's hot paths "
                "below). From 1 to 2 clients the CPU time per transaction "
                "changed by %+.0f ns; 1.85x allows about %+.0f ns.\n\n",
                stat_median(&pin_step->doc.root, "line_handoff_ns"),
                sel.two->cpu - sel.one->cpu, sel.one->cpu * (2 / 1.85 - 1));
    fputs("ns/txn per client is clients / tps, the wall time one client "
          "spends per transaction; CPU ns/txn is the clients' CPU time "
          "(CLOCK_THREAD_CPUTIME_ID) over their transactions, which other "
          "load on the machine does not inflate.\n\n",
          f);
    fputs("Latency: every 64th transaction of each client is timed alone "
          "(two clock reads, about 20 ns of it the clock); p50 and p99 are "
          "over all clients' samples of a run, the median of the runs.\n\n",
          f);

    /* Per-transaction counts. */
    fputs("| clients | layout | buffer pins | cache hits | negative hits | "
          "misses | list hits | list misses | snapshots reused | snapshots "
          "taken |\n"
          "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const json_value *p = json_get(rows[i].v, "per_txn");
        if (rows[i].doc != &main_step->doc)
            continue;
        fprintf(
            f,
            "| %.0f | %s | %.3f | %.3f | %.3f | %.4f | %.3f | %.4f | %.3f | "
            "%.3f |\n",
            rows[i].clients, rows[i].layout, json_num(p, "buffer_pins"),
            json_num(p, "cache_hits"), json_num(p, "cache_negative_hits"),
            json_num(p, "cache_misses"), json_num(p, "cache_list_hits"),
            json_num(p, "cache_list_misses"), json_num(p, "snapshots_reused"),
            json_num(p, "snapshots_taken"));
    }
    if (sel.one != NULL) {
        const json_value *p = json_get(sel.one->v, "per_txn");
        fprintf(f,
                "\nReading: per transaction %.4f buffer pins (the primary "
                "key's leaf and the heap page, and %.4f moves right from "
                "the leaf the session's directory named), %.2f catalog "
                "cache hits, %.2f "
                "negative hits (the search path's keel_catalog%s), %.2f "
                "list hits and %.4f misses; %.2f of the snapshots were "
                "reused (no transaction with an xid ended in between).\n\n",
                json_num(p, "buffer_pins"), json_num(p, "dir_moves"),
                json_num(p, "cache_hits"), json_num(p, "cache_negative_hits"),
                json_num(p, "cache_negative_hits") > 1.5
                    ? ", and the statistics of an unanalyzed column"
                    : "",
                json_num(p, "cache_list_hits"), json_num(p, "cache_misses"),
                json_num(p, "snapshots_reused"));
    }

    if (ms_step != NULL && sel.a400 != NULL && sel.a402 != NULL) {
        paired_ratio r = paired(sel.a402, sel.a400);
        bench_verdict v = same_verdict(r);
        int side = paired_has_interval(r)
                       ? bench_interval_side(r.ci_lo, r.ci_hi, 3)
                       : 0;
        char span[96], excl[160] = "";

        fprintf(f,
                "### max_sessions 400 against 402\n\n`keel bench select%s`\n\n"
                "| max_sessions | clients | tps (median) | min | max | p50 ns "
                "| p99 ns |\n|---:|---:|---:|---:|---:|---:|---:|\n",
                ms_step->shown);
        for (size_t i = 0; i < n; i++)
            if (rows[i].doc == &ms_step->doc)
                fprintf(f,
                        "| %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f "
                        "|\n",
                        rows[i].max_sessions, rows[i].clients, rows[i].tps,
                        rows[i].tps_min, rows[i].tps_max, rows[i].p50,
                        rows[i].p99);
        faster_slower(buf, sizeof(buf), r.r);
        paired_span(span, sizeof(span), r, true);
        /* An interval that excludes 1 shows a difference, met or not. */
        if (side != 0 && v != BENCH_NOT_MET)
            snprintf(excl, sizeof(excl),
                     " The interval lies %s 1: 402 is %s than 400 beyond the "
                     "noise in this run, %s than the margin.",
                     side > 0 ? "above" : "below",
                     side > 0 ? "faster" : "slower",
                     v == BENCH_MET ? "by less" : "perhaps by more");
        fprintf(f,
                "\nReading: max_sessions 402 is %s than 400 at 64 clients "
                "(%.3fx, %s); the target asks the interval to lie within "
                "+-%.0f%% of 1: %s.%s\n\n",
                buf, r.r, span, 100 * VERDICT_MARGIN, bench_verdict_text(v),
                excl);
    }
}

/*
 * The bloat figures: s's runs, with memory kept between runs (the
 * targets'), and a line on ret's, with memory returned after every run
 * (NULL if it did not run).
 */
static void md_bloat(FILE *f, const report_step *s, const report_step *ret)
{
    const json_value *r = &s->doc.root;
    static const char *const which[] = {"off", "on"};
    double growth_off = 0, max_on = 0, txns = json_num(r, "transactions");
    double blocks_on = 0;
    paired_ratio p = bloat_ratio(r);
    char span[128];
    size_t samples = 0;
    double target = json_num(json_get(r, "on"), "memory_target");

    fprintf(f,
            "## Catalog cache bloat under the select-only load\n\n"
            "`keel bench bloat%s`\n\n"
            "![catalog cache bytes against transactions](bloat.svg)\n\n"
            "| pruning | tps | elapsed s | session | bytes at start | bytes "
            "at half | bytes at end | most bytes | bytes per transaction | "
            "blocks at end |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            s->shown);
    for (int k = 0; k < 2; k++) {
        const json_value *run = json_get(r, which[k]);
        const json_value *ss = json_get(run, "sessions");
        for (size_t i = 0; ss != NULL && i < ss->n; i++) {
            const json_value *b = json_get(&ss->items[i], "bytes");
            double first, half, last, most = 0;
            if (b == NULL || b->n == 0)
                continue;
            first = b->items[0].num;
            half = b->items[b->n / 2].num;
            last = b->items[b->n - 1].num;
            for (size_t j = 0; j < b->n; j++)
                most = fmax(most, b->items[j].num);
            double blocks = json_num(&ss->items[i], "final_block_bytes");
            fprintf(f,
                    "| %s | %.0f | %.3f | %zu | %.0f | %.0f | %.0f | %.0f | "
                    "%.1f | %.0f |\n",
                    which[k], json_num(run, "tps"), json_num(run, "elapsed_s"),
                    i, first, half, last, most, (last - first) / txns, blocks);
            if (k == 0) {
                growth_off = fmax(growth_off, (last - first) / txns);
            } else {
                max_on = fmax(max_on, most);
                blocks_on = fmax(blocks_on, blocks);
                samples =
                    samples == 0 ? b->n : (b->n < samples ? b->n : samples);
            }
        }
    }
    fprintf(f,
            "\nReading: with pruning off each session's cache grows by "
            "%.0f bytes per transaction (one negative entry each); ",
            growth_off);
    if (samples == 0 || !isfinite(target))
        fputs("with pruning on there are no samples to hold against a "
              "target",
              f);
    else if (max_on <= target)
        fprintf(f,
                "with pruning on the most any session's cache held in its "
                "%zu samples is %.2f MiB (target %.2f MiB, met), and its "
                "memory blocks took %.2f MiB at the end (the pieces of up to "
                "1 KiB that the cache counts, rounded up to 16 bytes, in "
                "slabs of one size each, and those freed for reuse; larger "
                "bucket arrays lie outside them)",
                samples, max_on / 1048576.0, target / 1048576.0,
                blocks_on / 1048576.0);
    else
        fprintf(f,
                "with pruning on the most any session's cache held in its "
                "%zu samples is %.0f bytes, %.0f over its target of %.0f",
                samples, max_on, max_on - target, target);
    paired_span(span, sizeof(span), p, true);
    if (p.rounds <= 1)
        fprintf(f,
                "; throughput with pruning on is %.3fx that with it off (%s; "
                "%s)",
                p.r, p.rounds == 1 ? "one pair of runs, off then on" : "runs",
                span);
    else
        fprintf(f,
                "; throughput with pruning on is %.3fx that with it off (the "
                "median of %d pairs of runs, alternately off then on and on "
                "then off, each finding its memory already mapped after an "
                "uncounted warm-up with pruning off; %s)",
                p.r, p.rounds, span);
    if (paired_has_interval(p) && p.ci_lo > 1 + VERDICT_MARGIN)
        fprintf(f, ", the pruned runs the faster%s",
                samples > 0 && max_on <= target && growth_off > 0
                    ? ", their caches staying within the target while the "
                      "unpruned ones keep growing"
                    : "");
    fprintf(f,
            ". The target, throughput within %.0f%%, asks the interval to "
            "lie within +-%.0f%% of 1: %s; read as pruning's cost, at most "
            "%.0f%%, it asks the interval to start at or above %.2f: %s.\n\n",
            100 * VERDICT_MARGIN, 100 * VERDICT_MARGIN,
            bench_verdict_text(same_verdict(p)), 100 * VERDICT_MARGIN,
            1 - VERDICT_MARGIN, bench_verdict_text(bloat_cost_verdict(p)));
    if (ret != NULL) {
        const json_value *rr = &ret->doc.root;
        paired_ratio q = bloat_ratio(rr);
        paired_span(span, sizeof(span), q, true);
        fprintf(f,
                "With memory returned to the system after every run, so that "
                "each run maps its memory anew as a new session does "
                "(`keel bench bloat%s`): %.0f tps with pruning off, %.0f "
                "with it on, on over off %.3fx (%s). An unpruned session "
                "maps a new 4 KiB page about every %.0f transactions, and "
                "each costs a page fault; a pruned one maps no more than "
                "its target of %.2f MiB. The targets above use the runs "
                "with memory kept, which do not charge the unpruned runs "
                "for their pages.\n\n",
                ret->shown, json_num(json_get(rr, "off"), "tps"),
                json_num(json_get(rr, "on"), "tps"), q.r, span,
                growth_off > 0 ? 4096 / growth_off : NAN, target / 1048576.0);
    }
}

/* ---- the charts ------------------------------------------------------ */

static int chart_select(const char *path, const report_step *main_step,
                        const select_row *rows, size_t n)
{
    static const char *const layouts[] = {"padded", "packed"};
    double x[2][MAX_SELECT], y[2][MAX_SELECT];
    svg_series se[2];
    size_t ns = 0;

    for (int l = 0; l < 2; l++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (rows[i].doc == &main_step->doc &&
                strcmp(rows[i].layout, layouts[l]) == 0 && k < MAX_SELECT) {
                x[l][k] = rows[i].clients;
                y[l][k++] = rows[i].tps;
            }
        if (k == 0)
            continue;
        se[ns] = (svg_series){layouts[l], x[l], y[l], k, l == 1};
        ns++;
    }
    svg_chart c = {"Select-only transactions (median of runs)",
                   "clients (one thread and session each)",
                   "transactions per second",
                   true,
                   true,
                   se,
                   ns};
    return svg_write_line_chart(path, &c);
}

static int chart_bloat(const char *path, const report_step *s)
{
    static const char *const which[] = {"off", "on"};
    const json_value *r = &s->doc.root;
    double *xs[BLOAT_LINES] = {0}, *ys[BLOAT_LINES] = {0};
    char labels[BLOAT_LINES][64];
    svg_series se[BLOAT_LINES];
    size_t ns = 0;
    int rc;

    for (int k = 0; k < 2; k++) {
        const json_value *ss = json_get(json_get(r, which[k]), "sessions");
        for (size_t i = 0; ss != NULL && i < ss->n && ns < BLOAT_LINES; i++) {
            const json_value *tx = json_get(&ss->items[i], "txn");
            const json_value *by = json_get(&ss->items[i], "bytes");
            size_t m;
            if (tx == NULL || by == NULL)
                continue;
            m = tx->n < by->n ? tx->n : by->n;
            xs[ns] = calloc(m + 1, sizeof(double));
            ys[ns] = calloc(m + 1, sizeof(double));
            if (xs[ns] == NULL || ys[ns] == NULL)
                break;
            for (size_t j = 0; j < m; j++) {
                xs[ns][j] = tx->items[j].num;
                ys[ns][j] = by->items[j].num / 1048576.0;
            }
            snprintf(labels[ns], sizeof(labels[ns]), "pruning %s, session %zu",
                     which[k], i + 1);
            se[ns] = (svg_series){labels[ns], xs[ns], ys[ns], m, i > 0};
            ns++;
        }
    }
    /* The memory target of the pruned runs, as a flat line. */
    double target = json_num(json_get(r, "on"), "memory_target");
    double tx[2] = {0, json_num(r, "transactions")};
    double ty[2] = {target / 1048576.0, target / 1048576.0};
    if (target > 0 && ns < BLOAT_LINES)
        se[ns++] = (svg_series){"memory target", tx, ty, 2, true};
    svg_chart c = {"Catalog cache memory per session, one new missing name "
                   "per transaction",
                   "transactions run by the session",
                   "catalog cache size (MiB)",
                   false,
                   true,
                   se,
                   ns};
    rc = svg_write_line_chart(path, &c);
    for (size_t i = 0; i < BLOAT_LINES; i++) {
        free(xs[i]);
        free(ys[i]);
    }
    return rc;
}

/* ---- results.json ---------------------------------------------------- */

static void json_ratio(FILE *f, const char *name, double v, bool last)
{
    if (isfinite(v))
        fprintf(f, "    \"%s\": %.4f%s\n", name, v, last ? "" : ",");
    else
        fprintf(f, "    \"%s\": null%s\n", name, last ? "" : ",");
}

/* A number to four decimals, or null when it is not finite. */
static void json_number4(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.4f", v);
    else
        fputs("null", f);
}

/* A number, or null when it is not finite. */
static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.2f", v);
    else
        fputs("null", f);
}

/* The summary's rows, as report.md shows them and results.json lists
 * them: the table they go to, and what each says. */
#define MAX_TARGETS 32
typedef struct target_row {
    char what[192];
    char target[96];
    double v;
    char verdict[64];
} target_row;
typedef struct target_list {
    FILE *f;
    size_t n;
    target_row r[MAX_TARGETS];
} target_list;

/* Writes "name": {"ratio": r, "ci_low": .., "ci_high": .., "rounds": n}
 * for a paired ratio (nulls where it has no interval). */
static void json_paired(FILE *f, const char *name, paired_ratio p, bool last)
{
    fprintf(f, "    \"%s\": {\"ratio\": ", name);
    json_number4(f, p.r);
    fputs(", \"ci_low\": ", f);
    json_number4(f, paired_has_interval(p) ? p.ci_lo : NAN);
    fputs(", \"ci_high\": ", f);
    json_number4(f, paired_has_interval(p) ? p.ci_hi : NAN);
    fprintf(f, ", \"rounds\": %d}%s\n", p.rounds, last ? "" : ",");
}

static int write_results(const char *path, const report_opts *o,
                         const report_step *steps, size_t nsteps,
                         const select_row *rows, size_t n,
                         const json_doc *main_doc, const target_list *tl,
                         double total_s, double load0)
{
    FILE *f = fopen(path, "w");
    const select_row *one = select_find(rows, n, 1, "padded", 0);
    const select_row *two = select_find(rows, n, 2, "padded", 0);

    if (f == NULL)
        return -1;
    fprintf(f,
            "{\n  \"bench\": \"report\",\n  \"quick\": %s,\n  \"scale\": %u,\n"
            "  \"accounts\": %u,\n  \"select_seconds\": %.3f,\n"
            "  \"bloat_transactions\": %llu,\n  \"seconds\": %.2f",
            o->quick ? "true" : "false", o->scale, o->scale * 100000,
            o->seconds, (unsigned long long)o->transactions, total_s);
    fputs(",\n  \"load_average_start\": ", f);
    json_number(f, load0);
    fputs(",\n  \"load_average_end\": ", f);
    json_number(f, load_average());
    for (size_t k = 0; k < nsteps; k++) {
        if (!steps[k].ran || strcmp(steps[k].name, "select") == 0 ||
            strcmp(steps[k].name, "select_cpu") == 0)
            continue;
        fprintf(f, ",\n  \"%s\": ", steps[k].name);
        json_write_verbatim(f, &steps[k].doc, &steps[k].doc.root);
    }
    fputs(",\n  \"select_cpu\": [", f);
    for (size_t k = 0, i = 0; k < nsteps; k++)
        if (steps[k].ran && strcmp(steps[k].name, "select_cpu") == 0) {
            fputs(i++ ? ",\n    " : "\n    ", f);
            json_write_verbatim(f, &steps[k].doc, &steps[k].doc.root);
        }
    fputs("\n  ]", f);
    fputs(",\n  \"select\": [", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_write_verbatim(f, rows[i].doc, rows[i].v);
    }
    fputs("\n  ],\n  \"ratios\": {\n", f);
    /* Medians of per-round ratios (paired()). */
    json_ratio(f, "select_2_over_1_clients", paired(two, one).r, false);
    json_ratio(f, "select_64_over_2_clients",
               paired(select_find(rows, n, 64, "padded", 0), two).r, false);
    json_ratio(f, "select_padded_over_packed_64_clients",
               paired(select_find(rows, n, 64, "padded", 0),
                      select_find(rows, n, 64, "packed", 0))
                   .r,
               false);
    json_ratio(f, "select_max_sessions_402_over_400",
               paired(select_find(rows, n, 64, "padded", 402),
                      select_find(rows, n, 64, "padded", 400))
                   .r,
               false);
    json_ratio(f, "select_ns_per_txn_1_client", one ? one->ns : NAN, true);
    /* The same ratios with their 95% intervals, and padded over packed at
     * each count with the interval at the level the report judges it. */
    fputs("  },\n  \"intervals\": {\n", f);
    json_paired(f, "select_2_over_1_clients", paired(two, one), false);
    json_paired(f, "select_64_over_2_clients",
                paired(select_find(rows, n, 64, "padded", 0), two), false);
    json_paired(f, "select_padded_over_packed_64_clients",
                paired(select_find(rows, n, 64, "padded", 0),
                       select_find(rows, n, 64, "packed", 0)),
                false);
    json_paired(f, "select_max_sessions_402_over_400",
                paired(select_find(rows, n, 64, "padded", 402),
                       select_find(rows, n, 64, "padded", 400)),
                true);
    fputs("  },\n  \"padded_over_packed\": [", f);
    if (main_doc != NULL) {
        layout_cmp lc = layout_compare(rows, n, main_doc);
        for (size_t i = 0; i < lc.n; i++) {
            const paired_ratio *p = &lc.r[i];
            bool has = paired_has_interval(*p);
            fprintf(f, "%s\n    {\"clients\": %.0f, \"ratio\": ", i ? "," : "",
                    lc.clients[i]);
            json_number4(f, p->r);
            fputs(", \"ci_low\": ", f);
            json_number4(f, has ? p->ci_lo : NAN);
            fputs(", \"ci_high\": ", f);
            json_number4(f, has ? p->ci_hi : NAN);
            fprintf(f, ", \"level\": %.3f, \"rounds\": %d, \"verdict\": ",
                    lc.level, p->rounds);
            json_write_string(f, bench_verdict_text(lc.v[i]));
            fputs("}", f);
        }
    }
    fputs("\n  ],\n  \"targets\": [", f);
    for (size_t i = 0; tl != NULL && i < tl->n; i++) {
        const target_row *r = &tl->r[i];
        fputs(i ? ",\n    {\"what\": " : "\n    {\"what\": ", f);
        json_write_string(f, r->what);
        fputs(", \"target\": ", f);
        json_write_string(f, r->target);
        fputs(", \"value\": ", f);
        json_number4(f, r->v);
        fputs(", \"verdict\": ", f);
        json_write_string(f, r->verdict);
        fputs("}", f);
    }
    fputs("\n  ]\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- the command ----------------------------------------------------- */

static void md_header(FILE *f, const report_opts *o, double total_s,
                      double load0)
{
    char host[256] = "", cpu[256] = "unknown";
    char line[512];
    time_t now = time(NULL);
    struct tm tm;
    FILE *ci = fopen("/proc/cpuinfo", "r");

    while (ci != NULL && fgets(line, sizeof(line), ci) != NULL)
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p != NULL) {
                snprintf(cpu, sizeof(cpu), "%s", p + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
            }
            break;
        }
    if (ci != NULL)
        fclose(ci);
    gethostname(host, sizeof(host) - 1);
    gmtime_r(&now, &tm);
    strftime(line, sizeof(line), "%Y-%m-%d %H:%M UTC", &tm);
    fprintf(f,
            "# keel benchmark report\n\n"
            "`keel bench report%s`: %s on %s, %ld CPUs (%s), compiler %s%s%s; "
            "a scale-%u pgbench database (%u accounts); %.0f s in all.  "
            "Load average (1 minute) %.2f at the start, %.2f at the end (the "
            "end counts this run's own client threads too); a load above 0 "
            "at the start means other work shared the CPUs, which inflates "
            "wall-clock figures.\n\n"
            "Each section names the command that reproduces its table "
            "(without DIR each creates its own database of the same "
            "scale).\n\n",
            o->quick ? " --quick" : "", line, host[0] ? host : "?",
            sysconf(_SC_NPROCESSORS_ONLN), cpu, __VERSION__,
#ifdef KEEL_BUILD_LTO
            " with link-time optimization",
#else
            "",
#endif
#ifdef NDEBUG
            ", assertions off",
#else
            ", assertions on",
#endif
            o->scale, o->scale * 100000, total_s, load0, load_average());
}

/* One row of the summary: a target, the figure measured (v, printed with
 * fmt, or "not measured" if not a number), the verdict's words. */
static void md_target_verdict(target_list *t, const char *what,
                              const char *target, double v, const char *fmt,
                              const char *verdict)
{
    char buf[64];

    snprintf(buf, sizeof(buf), fmt, v);
    fprintf(t->f, "| %s | %s | %s | %s |\n", what, target,
            isfinite(v) ? buf : "not measured", isfinite(v) ? verdict : "");
    if (t->n < MAX_TARGETS) {
        target_row *r = &t->r[t->n++];
        snprintf(r->what, sizeof(r->what), "%s", what);
        snprintf(r->target, sizeof(r->target), "%s", target);
        r->v = v;
        snprintf(r->verdict, sizeof(r->verdict), "%s",
                 isfinite(v) ? verdict : "not measured");
    }
}

/* A row whose verdict is a plain comparison (met). */
static void md_target(target_list *t, const char *what, const char *target,
                      double v, const char *fmt, bool met)
{
    md_target_verdict(t, what, target, v, fmt, met ? "met" : "not met");
}

/* The summary's row for two settings that should perform alike (p: the
 * ratio of one to the other; same_verdict()). */
static void md_target_same(target_list *t, const char *what, paired_ratio p)
{
    char target[64];

    snprintf(target, sizeof(target), "95%% CI of the mean within +-%.0f%% of 1",
             100 * VERDICT_MARGIN);
    md_target_verdict(t, what, target, p.r, "%.3fx",
                      bench_verdict_text(same_verdict(p)));
}

/* One client pinned to one CPU: that run's CPU and its select row. */
typedef struct cpu_row {
    double cpu;
    const json_value *v;
} cpu_row;

/* The select_cpu steps' rows, up to max; returns how many. */
static size_t cpu_rows(const report_step *steps, size_t nsteps, cpu_row *out,
                       size_t max)
{
    size_t n = 0;

    for (size_t k = 0; k < nsteps && n < max; k++) {
        const json_value *r = &steps[k].doc.root, *c, *v;
        if (!steps[k].ran || strcmp(steps[k].name, "select_cpu") != 0)
            continue;
        c = json_at(json_get(r, "cpus"), 0);
        v = json_at(json_get(r, "select"), 0);
        if (c == NULL || v == NULL)
            continue;
        out[n].cpu = c->num;
        out[n].v = v;
        n++;
    }
    return n;
}

/* The row of the fastest CPU (least ns per transaction), or NULL. */
static const cpu_row *cpu_fastest(const cpu_row *rows, size_t n)
{
    const cpu_row *best = NULL;

    for (size_t i = 0; i < n; i++)
        if (best == NULL ||
            json_num(rows[i].v, "ns_per_txn") < json_num(best->v, "ns_per_txn"))
            best = &rows[i];
    return best;
}

/* The section on one client pinned to each CPU. */
static void md_select_cpu(FILE *f, const report_step *steps, size_t nsteps,
                          const select_row *main_one)
{
    cpu_row rows[MAX_CPU_STEPS];
    size_t n = cpu_rows(steps, nsteps, rows, MAX_CPU_STEPS);
    const cpu_row *best = cpu_fastest(rows, n), *worst = NULL;
    const char *shown = NULL;

    if (n == 0)
        return;
    for (size_t k = 0; k < nsteps; k++)
        if (steps[k].ran && strcmp(steps[k].name, "select_cpu") == 0) {
            shown = steps[k].shown;
            break;
        }
    fprintf(f,
            "### One client on each CPU\n\n`keel bench select%s` (and the "
            "same for each CPU)\n\n| CPU | tps (median) | min | max | "
            "ns/txn | CPU ns/txn | p50 ns | p99 ns |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            shown != NULL ? shown : "");
    for (size_t i = 0; i < n; i++) {
        const json_value *v = rows[i].v;
        fprintf(f,
                "| %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | %.0f | %.0f |\n",
                rows[i].cpu, json_num(v, "tps"), json_num(v, "tps_min"),
                json_num(v, "tps_max"), json_num(v, "ns_per_txn"),
                json_num(v, "cpu_ns_per_txn"), json_num(v, "p50_ns"),
                json_num(v, "p99_ns"));
        if (worst == NULL ||
            json_num(v, "ns_per_txn") > json_num(worst->v, "ns_per_txn"))
            worst = &rows[i];
    }
    fprintf(f,
            "\nReading: pinned to one CPU, one client's transaction costs "
            "%.0f ns on CPU %.0f (the fastest here)",
            json_num(best->v, "ns_per_txn"), best->cpu);
    if (worst != best)
        fprintf(f, " and %.0f ns on CPU %.0f (%.2fx)",
                json_num(worst->v, "ns_per_txn"), worst->cpu,
                json_num(worst->v, "ns_per_txn") /
                    json_num(best->v, "ns_per_txn"));
    if (main_one != NULL) {
        const json_value *c =
            json_at(json_get(&main_one->doc->root, "cpus"), 0);
        if (c != NULL)
            fprintf(f, "; in the table above, on CPU %.0f, %.0f ns", c->num,
                    main_one->ns);
        else
            fprintf(f, "; unpinned, as in the table above, %.0f ns",
                    main_one->ns);
    }
    fputs(". The same code on CPUs of one machine should cost the same; "
          "where it does not, the host runs the virtual CPUs at different "
          "speeds (sharing their cores with other work), and a single "
          "client's figure depends on where the scheduler puts it.\n\n",
          f);
}

/* The targets the benchmarks are measured against, with this run's
 * figures. */
static void md_summary(target_list *t, const select_row *rows, size_t n,
                       const report_step *lookup, const report_step *bloat,
                       const report_step *cc, const report_step *steps,
                       size_t nsteps)
{
    FILE *f = t->f;
    const select_picks sel = select_pick(rows, n);
    cpu_row crows[MAX_CPU_STEPS];
    size_t ncpu_rows = cpu_rows(steps, nsteps, crows, MAX_CPU_STEPS);
    const cpu_row *best = cpu_fastest(crows, ncpu_rows);
    paired_ratio pr;
    double v;

    fputs("## Targets\n\n| what | target | measured | |\n"
          "|---|---|---:|---|\n",
          f);
    if (lookup != NULL) {
        const json_value *r = &lookup->doc.root;
        v = stat_median(r, "lookup_ns");
        md_target(t, "primary-key lookup (`lookup_ns`)", "<= 340 ns", v,
                  "%.0f ns", v <= 340);
        /* The target was set where a random load cost 140 ns, on the
         * scale-10 database (a smaller one is largely cached). */
        v = stat_median(r, "lookup_ns") / stat_median(r, "random_load_ns");
        if (json_num(r, "accounts") >= 1000000)
            md_target(
                t,
                "the same in units of a random load from memory measured "
                "alongside (the target's 340 ns was set where one cost 140 "
                "ns)",
                "<= 2.43", v, "%.2f", v <= 340.0 / 140.0);
    }
    v = sel.one != NULL ? sel.one->ns : NAN;
    md_target(t, "select-only transaction, 1 client", "<= 455 ns", v, "%.0f ns",
              v <= 455);
    v = sel.one != NULL ? sel.one->cpu : NAN;
    md_target(t, "the same, CPU time only", "<= 455 ns", v, "%.0f ns",
              v <= 455);
    v = best != NULL ? json_num(best->v, "ns_per_txn") : NAN;
    md_target(t,
              "the same, pinned to the fastest CPU (one client on each CPU, "
              "below)",
              "<= 455 ns", v, "%.0f ns", v <= 455);
    /* A derived target, for a host whose memory is slower or faster than
     * when the targets were set: 455 ns scaled as the lookup's 340 ns
     * is, by the 140 ns load its text names. */
    if (lookup != NULL && json_num(&lookup->doc.root, "accounts") >= 1000000) {
        v = sel.one != NULL
                ? sel.one->ns / stat_median(&lookup->doc.root, "random_load_ns")
                : NAN;
        md_target(t,
                  "the same (main table) in units of the random load the "
                  "lookup measured (a derived target: 455 ns over the 140 ns "
                  "the lookup's target is scaled by)",
                  "<= 3.25", v, "%.2f", v <= 455.0 / 140.0);
    }
    v = paired(sel.two, sel.one).r;
    md_target(t, "2 clients over 1", ">= 1.85x", v, "%.2fx", v >= 1.85);
    /* The two clients ran one on each of the main step's first two CPUs,
     * which need not be equally fast: against one client's mean over
     * those CPUs, as measured pinned to each. */
    if (sel.two != NULL) {
        const json_value *c = json_get(&sel.two->doc->root, "cpus");
        const cpu_row *on[2] = {NULL, NULL};
        for (size_t i = 0; i < 2 && c != NULL && c->n >= 2; i++)
            for (size_t j = 0; j < ncpu_rows; j++)
                if (json_at(c, i) != NULL && crows[j].cpu == json_at(c, i)->num)
                    on[i] = &crows[j];
        if (on[0] != NULL && on[1] != NULL) {
            double mean =
                (json_num(on[0]->v, "tps") + json_num(on[1]->v, "tps")) / 2;
            v = mean > 0 ? sel.two->tps / mean : NAN;
            md_target(t,
                      "2 clients over 1, against one client's mean over "
                      "the two CPUs they ran on (one client on each CPU, "
                      "below)",
                      ">= 1.85x", v, "%.2fx", v >= 1.85);
        }
    }
    v = paired(sel.s64, sel.two).r;
    md_target(t, "64 clients over 2", ">= 0.85x", v, "%.2fx", v >= 0.85);
    /* What an otherwise idle machine would give, if each client had a CPU
     * to itself up to the machine's count: throughput goes as CPUs over
     * CPU time per transaction. */
    v = sel.one != NULL && sel.two != NULL ? 2 * sel.one->cpu / sel.two->cpu
                                           : NAN;
    md_target(t, "2 clients over 1, from CPU time (idle-machine estimate)",
              ">= 1.85x", v, "%.2fx", v >= 1.85);
    v = sel.two != NULL && sel.s64 != NULL ? sel.two->cpu / sel.s64->cpu : NAN;
    md_target(t, "64 clients over 2, from CPU time (idle-machine estimate)",
              ">= 0.85x", v, "%.2fx", v >= 0.85);
    {
        char target[96];
        layout_cmp lc =
            layout_compare(rows, n, sel.one != NULL ? sel.one->doc : NULL);

        /* At least as fast: the interval must reach 1 and stay within
         * the margin below it (at_least_verdict()). */
        snprintf(target, sizeof(target),
                 ">= 1x: 95%% CI of the mean ending at or above 1, starting "
                 "at or above %.2f",
                 1 - VERDICT_MARGIN);
        pr = paired(sel.s64, sel.k64);
        md_target_verdict(t, "padded over packed, 64 clients", target, pr.r,
                          "%.3fx", bench_verdict_text(at_least_verdict(pr)));
        snprintf(target, sizeof(target),
                 ">= 1x: each count's CI ending at or above 1, starting at or "
                 "above %.2f",
                 1 - VERDICT_MARGIN);
        md_target_verdict(t,
                          "padded over packed, lowest over every client count "
                          "(intervals together at 95%)",
                          target, lc.n > 0 ? lc.worst : NAN, "%.3fx",
                          bench_verdict_text(lc.verdict));
    }
    md_target_same(t, "max_sessions 402 over 400, 64 clients",
                   paired(sel.a402, sel.a400));
    if (bloat != NULL) {
        paired_ratio p = bloat_ratio(&bloat->doc.root);
        char target[64];

        md_target_same(t, "bloat: throughput, pruning on over off", p);
        /* The same ratio read as pruning's cost: at most 5% of the
         * throughput (a ratio above 1.05, which misses the row above,
         * means the unpruned runs paid more for their growing caches than
         * pruning cost). */
        snprintf(target, sizeof(target),
                 "95%% CI of the mean starting at or above %.2f",
                 1 - VERDICT_MARGIN);
        md_target_verdict(t,
                          "bloat: throughput, pruning on over off, read as "
                          "pruning's cost",
                          target, p.r, "%.3fx",
                          bench_verdict_text(bloat_cost_verdict(p)));
    }
    if (cc != NULL) {
        const json_value *r = &cc->doc.root;
        char target[64];

        snprintf(target, sizeof(target),
                 "95%% CI of the mean ending below %.2f", CATCACHE_TIME_BOUND);
        md_target_verdict(
            t, "catalog cache hits, time with pruning enabled over disabled",
            target, json_num(r, "prune_time_ratio"), "%.4fx",
            bench_verdict_text(catcache_verdict(r)));
    }
    fputs("\n", f);
}

/* The files the report writes, in the order it writes them. */
enum { OUT_RESULTS, OUT_SELECT_SVG, OUT_BLOAT_SVG, OUT_REPORT, OUT_FILES };

/* The path of output file `which` in dir, or the temporary name it is
 * written under until all are written. */
static void out_path(char *buf, size_t len, const char *dir, int which,
                     bool tmp)
{
    static const char *const names[OUT_FILES] = {"results.json", "select.svg",
                                                 "bloat.svg", "report.md"};

    snprintf(buf, len, "%s/%s%s", dir, names[which], tmp ? ".tmp" : "");
}

int bench_report_main(int argc, char **argv)
{
    report_opts o;
    report_step steps[10 + MAX_CPU_STEPS];
    char cpu[MAX_CPU_STEPS][16];
    char cpulist[MAX_PINNED_CPUS * 8] = "";
    cpu_set_t allowed;
    int ncpu = 0, nallowed = 0;
    size_t nsteps = 0;
    char dbdir[4096], tmpjson[4096], path[4600], secs[32], txns[32], scale[16],
        rounds[16], sel_runs[16], main_runs[16], ms_runs[16], pairs[16];
    select_row *rows;
    size_t nrows;
    uint64_t t0 = clock_now_ns();
    double load0 = load_average();
    int rc = 0;
    target_list *targets = NULL;
    FILE *f;

    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    if (mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, WHO ": cannot create %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    /* Before the minutes of running: can the report be written there? */
    out_path(path, sizeof(path), o.out, OUT_REPORT, true);
    f = fopen(path, "w");
    if (f == NULL || fclose(f) != 0) {
        fprintf(stderr, WHO ": cannot write in %s: %s\n", o.out,
                strerror(errno));
        return 1;
    }
    unlink(path);
    if (bench_tmpdir_make(WHO, "report-json", tmpjson, sizeof(tmpjson)) != 0)
        return 1;
    if (bench_db_create(WHO, "report", o.scale, dbdir, sizeof(dbdir)) != 0) {
        bench_dir_remove(tmpjson);
        return 1;
    }
    snprintf(secs, sizeof(secs), "%g", o.seconds);
    snprintf(txns, sizeof(txns), "%llu", (unsigned long long)o.transactions);
    snprintf(scale, sizeof(scale), "%u", o.scale);
    memset(steps, 0, sizeof(steps));

    /* Each step: shown options first, then DIR and --json (not shown). */
    snprintf(rounds, sizeof(rounds), "%d", o.rounds);
    /* Select runs alternate the order of their configurations: an even
     * number of them balances it.  There are the rounds rounded up to
     * even, doubled (8 for the default 3), of half the time by default: a
     * 99% interval of the mean of 8 spans t(0.995, 7) / sqrt(8) = 1.24
     * standard deviations each side against 5.84 / 2 = 2.92 for 4, and
     * the runs vary with the host's state more than with their length.
     * At most MAX_ROW_RUNS. */
    snprintf(sel_runs, sizeof(sel_runs), "%d",
             o.rounds < 2                            ? 1
             : (o.rounds + 1) / 2 * 4 > MAX_ROW_RUNS ? MAX_ROW_RUNS
                                                     : (o.rounds + 1) / 2 * 4);
    /* The comparisons the targets read at 99% (padded against packed at
     * each count, 2 clients over 1, 64 over 2) take half as many runs
     * again (12 for the default 3), and max_sessions 400 against 402 twice
     * as many (16): a run the host slows by 10-15% (one in eight or so
     * here) widens an interval of the mean of 8 past the 5% margin. */
    snprintf(main_runs, sizeof(main_runs), "%d",
             o.rounds < 2                            ? 1
             : (o.rounds + 1) / 2 * 6 > MAX_ROW_RUNS ? MAX_ROW_RUNS
                                                     : (o.rounds + 1) / 2 * 6);
    snprintf(ms_runs, sizeof(ms_runs), "%d",
             o.rounds < 2                            ? 1
             : (o.rounds + 1) / 2 * 8 > MAX_ROW_RUNS ? MAX_ROW_RUNS
                                                     : (o.rounds + 1) / 2 * 8);
    /* Catalog cache pairs are cheap (about 6 ms each): many, so that
     * one round the host disturbs does not decide the interval. */
    snprintf(pairs, sizeof(pairs), "%d", o.rounds < 2 ? 2 : o.rounds * 64);
    steps[nsteps] = (report_step){.name = "pin", .main_fn = bench_pin_main};
    if (o.quick)
        step_args(&steps[nsteps], true, "--quick", "--rounds", rounds,
                  "--pool-mb", "16", "--threads", "8", NULL);
    else
        step_args(&steps[nsteps], true, "--rounds", rounds, NULL);
    nsteps++;
    steps[nsteps] =
        (report_step){.name = "catcache", .main_fn = bench_catcache_main};
    if (o.quick)
        step_args(&steps[nsteps], true, "--quick", "--rounds", pairs, "--names",
                  "20000", NULL);
    else
        step_args(&steps[nsteps], true, "--quick", "--rounds", pairs, NULL);
    nsteps++;
    steps[nsteps] =
        (report_step){.name = "lookup", .main_fn = bench_lookup_main};
    if (o.quick)
        step_args(&steps[nsteps], true, "--quick", NULL);
    step_args(&steps[nsteps], true, "--scale", scale, "--rounds", rounds, NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;
    /* The CPUs this process may use.  If there are at most
     * MAX_PINNED_CPUS, the select steps pin their clients to them
     * round-robin, so that every configuration runs on the same CPUs.
     * One client is measured on each of the first MAX_CPU_STEPS (virtual
     * CPUs need not be equally fast). */
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        CPU_ZERO(&allowed);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        size_t used = strlen(cpulist);
        if (!CPU_ISSET(c, &allowed))
            continue;
        if (ncpu < MAX_CPU_STEPS)
            snprintf(cpu[ncpu], sizeof(cpu[ncpu]), "%d", c);
        if (nallowed < MAX_PINNED_CPUS)
            snprintf(cpulist + used, sizeof(cpulist) - used, "%s%d",
                     used ? "," : "", c);
        ncpu += ncpu < MAX_CPU_STEPS;
        nallowed++;
    }
    if (nallowed > MAX_PINNED_CPUS)
        cpulist[0] = '\0';
    steps[nsteps] =
        (report_step){.name = "select", .main_fn = bench_select_main};
    step_args(&steps[nsteps], true, "--scale", scale, "--clients",
              "1,2,4,16,64", "--layout", "padded,packed", "--seconds", secs,
              "--runs", main_runs, NULL);
    if (cpulist[0] != '\0')
        step_args(&steps[nsteps], true, "--cpus", cpulist, NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;
    steps[nsteps] =
        (report_step){.name = "select", .main_fn = bench_select_main};
    step_args(&steps[nsteps], true, "--scale", scale, "--clients", "64",
              "--max-sessions", "400,402", "--seconds", secs, "--runs", ms_runs,
              NULL);
    if (cpulist[0] != '\0')
        step_args(&steps[nsteps], true, "--cpus", cpulist, NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;
    for (int c = 0; c < ncpu; c++) {
        steps[nsteps] = (report_step){.name = "select_cpu",
                                      .bench = "select",
                                      .main_fn = bench_select_main};
        step_args(&steps[nsteps], true, "--scale", scale, "--clients", "1",
                  "--cpus", cpu[c], "--seconds", secs, "--runs", sel_runs,
                  NULL);
        step_args(&steps[nsteps], false, dbdir, NULL);
        nsteps++;
    }
    steps[nsteps] = (report_step){.name = "bloat", .main_fn = bench_bloat_main};
    step_args(&steps[nsteps], true, "--scale", scale, "--transactions", txns,
              "--pairs", sel_runs, NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;
    steps[nsteps] = (report_step){.name = "bloat_returned",
                                  .bench = "bloat",
                                  .main_fn = bench_bloat_main};
    step_args(&steps[nsteps], true, "--scale", scale, "--transactions", txns,
              "--pairs", sel_runs, "--memory", "returned", NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;

    /* Last: they change the database's tables. */
    steps[nsteps] = (report_step){.name = "tpcb", .main_fn = bench_tpcb_main};
    step_args(&steps[nsteps], true, "--clients", "1,64", "--seconds", secs,
              "--runs", rounds, NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;
    steps[nsteps] = (report_step){.name = "tpcb_insert",
                                  .bench = "tpcb",
                                  .main_fn = bench_tpcb_main};
    step_args(&steps[nsteps], true, "--txn", "insert", "--clients", "1,64",
              "--seconds", secs, "--runs", rounds, NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;
    steps[nsteps] = (report_step){.name = "tpcb_async",
                                  .bench = "tpcb",
                                  .main_fn = bench_tpcb_main};
    step_args(&steps[nsteps], true, "--sync", "off", "--clients", "1,2",
              "--seconds", secs, "--runs", rounds, NULL);
    step_args(&steps[nsteps], false, dbdir, NULL);
    nsteps++;

    for (size_t k = 0; k < nsteps && rc == 0; k++) {
        snprintf(steps[k].json, sizeof(steps[k].json), "%s/%s-%zu.json",
                 tmpjson, steps[k].name, k);
        step_args(&steps[k], false, "--json", steps[k].json, NULL);
        if (step_run(&steps[k], (int)k + 1, (int)nsteps) != 0)
            rc = 1;
    }
    bench_dir_remove(dbdir);

    rows = calloc(MAX_SELECT, sizeof(*rows));
    nrows = rc == 0 && rows != NULL
                ? select_rows(steps, nsteps, rows, MAX_SELECT)
                : 0;
    if (rc == 0) {
        double total = (double)(clock_now_ns() - t0) / 1e9;
        const report_step *sel = NULL, *ms = NULL;
        for (size_t k = 0; k < nsteps; k++)
            if (strcmp(steps[k].name, "select") == 0) {
                if (sel == NULL)
                    sel = &steps[k];
                else
                    ms = &steps[k];
            }
        /* Each file is written under a temporary name, and the four are
         * renamed, one after another, only once all are written: a
         * failure to write leaves the previous report as it was.
         * report.md first: its summary's rows go into results.json
         * too. */
        out_path(path, sizeof(path), o.out, OUT_REPORT, true);
        f = fopen(path, "w");
        if (f != NULL && (targets = calloc(1, sizeof(*targets))) != NULL) {
            const report_step *st;
            targets->f = f;
            md_header(f, &o, total, load0);
            md_summary(targets, rows, nrows,
                       step_named(steps, nsteps, "lookup"),
                       step_named(steps, nsteps, "bloat"),
                       step_named(steps, nsteps, "catcache"), steps, nsteps);
            if (sel != NULL)
                md_select(f, sel, ms, rows, nrows,
                          step_named(steps, nsteps, "pin"));
            md_select_cpu(f, steps, nsteps,
                          select_find(rows, nrows, 1, "padded", 0));
            if ((st = step_named(steps, nsteps, "bloat")) != NULL)
                md_bloat(f, st, step_named(steps, nsteps, "bloat_returned"));
            if ((st = step_named(steps, nsteps, "catcache")) != NULL)
                md_catcache(f, st);
            if ((st = step_named(steps, nsteps, "lookup")) != NULL)
                md_lookup(f, st, select_find(rows, nrows, 1, "padded", 0));
            if ((st = step_named(steps, nsteps, "pin")) != NULL)
                md_pin(f, st);
            if ((st = step_named(steps, nsteps, "tpcb")) != NULL &&
                step_named(steps, nsteps, "tpcb_async") != NULL &&
                step_named(steps, nsteps, "tpcb_insert") != NULL)
                md_tpcb(f, st, step_named(steps, nsteps, "tpcb_insert"),
                        step_named(steps, nsteps, "tpcb_async"));
        } else {
            rc = 1;
        }
        if (f != NULL && fclose(f) != 0)
            rc = 1;
        /* path names the file that failed, if one did. */
        if (rc == 0) {
            out_path(path, sizeof(path), o.out, OUT_RESULTS, true);
            if (write_results(path, &o, steps, nsteps, rows, nrows,
                              sel != NULL ? &sel->doc : NULL, targets, total,
                              load0) != 0)
                rc = 1;
        }
        if (rc == 0) {
            out_path(path, sizeof(path), o.out, OUT_SELECT_SVG, true);
            if (chart_select(path, sel, rows, nrows) != 0)
                rc = 1;
        }
        if (rc == 0) {
            out_path(path, sizeof(path), o.out, OUT_BLOAT_SVG, true);
            if (chart_bloat(path, step_named(steps, nsteps, "bloat")) != 0)
                rc = 1;
        }
        if (rc != 0)
            fprintf(stderr, WHO ": cannot write %s: %s\n", path,
                    strerror(errno));
        for (int i = 0; i < OUT_FILES && rc == 0; i++) {
            char final[4200];
            out_path(path, sizeof(path), o.out, i, true);
            out_path(final, sizeof(final), o.out, i, false);
            if (rename(path, final) != 0) {
                fprintf(stderr, WHO ": cannot rename %s to %s: %s\n", path,
                        final, strerror(errno));
                rc = 1;
            }
        }
        if (rc == 0)
            printf("keel bench report: %s/report.md, results.json, "
                   "select.svg, bloat.svg written in %.1f s\n",
                   o.out, total);
    }
    for (int i = 0; i < OUT_FILES; i++) {
        out_path(path, sizeof(path), o.out, i, true);
        unlink(path);
    }
    free(rows);
    free(targets);
    for (size_t k = 0; k < nsteps; k++) {
        if (steps[k].json[0] != '\0')
            unlink(steps[k].json);
        step_free(&steps[k]);
    }
    bench_dir_remove(tmpjson);
    return rc;
}
