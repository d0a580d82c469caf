/*
 * bench_report.c: `keel bench report`: a short run of every benchmark on
 * one pgbench database, written up as a report.
 *
 * Creates a scale-10 database (scale 1 with --quick) in a temporary
 * directory, then runs, in this process and one after another, `keel
 * bench pin`, `catcache`, `lookup`, `select` (1, 2, 4, 16 and 64 clients in
 * both process array layouts, then 64 clients with max_sessions 400 and
 * 402, clients pinned round-robin to the CPUs; then one client pinned to
 * each CPU, up to REPORT_CPU_STEPS of them), `bloat` (memory kept, then
 * returned), `tpcb` (three ways: they change the tables) and, last,
 * `compare` (the real pgbench against keel serve and PostgreSQL 15, on
 * databases of its own; optional: skipped, or failed, it leaves the rest
 * of the report as it is), each
 * through its *_main function with --json into a temporary file, their
 * tables going to stderr as progress.  The figures are read back from
 * those files (report_read.c), the targets judged (report_targets.c), and
 * the output directory (./keel-report by default) gets:
 *   report.md    the targets and their verdicts, every table, the command
 *                that reproduces it, and a reading of its figures
 *                (report_md.c)
 *   results.json every figure: each benchmark's JSON under its name, the
 *                select configurations as one list, the pinned runs as
 *                another (select_cpu), the ratios the readings quote, and
 *                the targets as judged (report_json.c)
 *   select.svg   transactions per second against clients, per layout
 *   bloat.svg    each session's catalog cache bytes against its
 *                transactions, pruning off and on (report_charts.c)
 *   compare-select.svg, compare-tpcb.svg
 *                pgbench's tps against clients, keel serve and
 *                PostgreSQL, select-only and tpcb-like
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "bench_db.h"
#include "port/clock.h"
#include "report.h"

#define WHO "keel bench report"
/* The most CPUs the select steps pin their clients to (bench select's
 * limit on --cpus); on a machine with more they run unpinned. */
#define MAX_PINNED_CPUS 16
#define MAX_STEPS       (11 + REPORT_CPU_STEPS)

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

/* ---- the steps ------------------------------------------------------ */

/* Appends arguments (a NULL-terminated list, each copied) to a step's
 * command line, and with `shown` to the command the report shows. */
static void step_args(report_step *s, int shown, ...)
{
    va_list ap;
    const char *a;

    va_start(ap, shown);
    while ((a = va_arg(ap, const char *)) != NULL) {
        if (s->argc < REPORT_MAX_ARGS - 1)
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
        fprintf(stderr, WHO ": keel bench %s failed (status %d)%s\n", bench,
                rc, s->optional ? "; the report goes on without it" : "");
        if (!s->optional)
            return -1;
        s->failed = true;
    }
    if (json_doc_read(s->json, &s->doc, err, sizeof(err)) != 0) {
        fprintf(stderr, WHO ": keel bench %s: %s\n", bench, err);
        return s->optional ? 0 : -1;
    }
    s->ran = true;
    fprintf(stderr, "  keel bench %s: %.1f s\n", bench, s->seconds);
    return 0;
}

/* Select runs for `rounds`: the rounds rounded up to even, times `per`
 * (at most REPORT_MAX_ROW_RUNS), or 1 for one round. */
static void select_runs(char *buf, size_t len, int rounds, int per)
{
    int n = rounds < 2 ? 1 : (rounds + 1) / 2 * per;

    snprintf(buf, len, "%d", n > REPORT_MAX_ROW_RUNS ? REPORT_MAX_ROW_RUNS : n);
}

/* The CPUs this process may use: the first REPORT_CPU_STEPS into cpu[],
 * all of them (if at most MAX_PINNED_CPUS) as a list into cpulist.
 * Returns how many went into cpu[]. */
static int report_cpus(char cpu[][16], char *cpulist, size_t len)
{
    cpu_set_t allowed;
    int ncpu = 0, nallowed = 0;

    cpulist[0] = '\0';
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        CPU_ZERO(&allowed);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        size_t used = strlen(cpulist);
        if (!CPU_ISSET(c, &allowed))
            continue;
        if (ncpu < REPORT_CPU_STEPS)
            snprintf(cpu[ncpu++], 16, "%d", c);
        if (nallowed < MAX_PINNED_CPUS)
            snprintf(cpulist + used, len - used, "%s%d", used ? "," : "", c);
        nallowed++;
    }
    if (nallowed > MAX_PINNED_CPUS)
        cpulist[0] = '\0';
    return ncpu;
}

/* A new step at steps[*n]. */
static report_step *step_new(report_step *steps, size_t *n, const char *name,
                             const char *bench, int (*fn)(int, char **))
{
    report_step *s = &steps[(*n)++];

    *s = (report_step){.name = name, .bench = bench, .main_fn = fn};
    return s;
}

/*
 * The steps of a report over the database in dbdir, into steps[]: shown
 * options first, then DIR (not shown).  Returns how many.
 */
static size_t report_steps(const report_opts *o, const char *dbdir,
                           report_step *steps)
{
    char cpu[REPORT_CPU_STEPS][16], cpulist[MAX_PINNED_CPUS * 8];
    char secs[32], txns[32], scale[16], rounds[16], sel_runs[16], main_runs[16],
        ms_runs[16], pairs[16];
    int ncpu = report_cpus(cpu, cpulist, sizeof(cpulist));
    size_t n = 0;
    report_step *s;

    snprintf(secs, sizeof(secs), "%g", o->seconds);
    snprintf(txns, sizeof(txns), "%llu", (unsigned long long)o->transactions);
    snprintf(scale, sizeof(scale), "%u", o->scale);
    snprintf(rounds, sizeof(rounds), "%d", o->rounds);
    /* Select runs alternate the order of their configurations: an even
     * number of them balances it.  The pinned runs and the bloat pairs
     * take the rounds rounded up to even, doubled (8 for the default 3),
     * of half the time by default: a 99% interval of the mean of 8 spans
     * t(0.995, 7) / sqrt(8) = 1.24 standard deviations each side against
     * 5.84 / 2 = 2.92 for 4, and the runs vary with the host's state more
     * than with their length.  The main select step takes half as many
     * again (12), and max_sessions 400 against 402 twice as many (16): a
     * run the host slows by 10-15% (one in eight or so here) widens an
     * interval of the mean of 8 past a 5% limit. */
    select_runs(sel_runs, sizeof(sel_runs), o->rounds, 4);
    select_runs(main_runs, sizeof(main_runs), o->rounds, 6);
    select_runs(ms_runs, sizeof(ms_runs), o->rounds, 8);
    /* Catalog cache pairs are cheap (about 6 ms each): many, so that
     * one round the host disturbs does not decide the interval.  With
     * --quick, 8 a round, as `keel bench catcache --quick` runs 8: a quick
     * report is a look at every figure, not a verdict to trust, and in a
     * sanitizer's build each pair takes a hundred times as long. */
    snprintf(pairs, sizeof(pairs), "%d",
             o->rounds < 2 ? 2 : o->rounds * (o->quick ? 8 : 64));

    s = step_new(steps, &n, "pin", NULL, bench_pin_main);
    if (o->quick)
        step_args(s, true, "--quick", "--rounds", rounds, "--pool-mb", "16",
                  "--threads", "8", NULL);
    else
        step_args(s, true, "--rounds", rounds, NULL);
    s = step_new(steps, &n, "catcache", NULL, bench_catcache_main);
    step_args(s, true, "--quick", "--rounds", pairs, NULL);
    if (o->quick)
        step_args(s, true, "--names", "20000", NULL);
    s = step_new(steps, &n, "lookup", NULL, bench_lookup_main);
    if (o->quick)
        step_args(s, true, "--quick", NULL);
    step_args(s, true, "--scale", scale, "--rounds", rounds, NULL);
    step_args(s, false, dbdir, NULL);
    s = step_new(steps, &n, "select", NULL, bench_select_main);
    step_args(s, true, "--scale", scale, "--clients", "1,2,4,16,64", "--layout",
              "padded,packed", "--seconds", secs, "--runs", main_runs, NULL);
    if (cpulist[0] != '\0')
        step_args(s, true, "--cpus", cpulist, NULL);
    step_args(s, false, dbdir, NULL);
    s = step_new(steps, &n, "select", NULL, bench_select_main);
    step_args(s, true, "--scale", scale, "--clients", "64", "--max-sessions",
              "400,402", "--seconds", secs, "--runs", ms_runs, NULL);
    if (cpulist[0] != '\0')
        step_args(s, true, "--cpus", cpulist, NULL);
    step_args(s, false, dbdir, NULL);
    for (int c = 0; c < ncpu; c++) {
        s = step_new(steps, &n, "select_cpu", "select", bench_select_main);
        step_args(s, true, "--scale", scale, "--clients", "1", "--cpus", cpu[c],
                  "--seconds", secs, "--runs", sel_runs, NULL);
        step_args(s, false, dbdir, NULL);
    }
    s = step_new(steps, &n, "bloat", NULL, bench_bloat_main);
    step_args(s, true, "--scale", scale, "--transactions", txns, "--pairs",
              sel_runs, NULL);
    step_args(s, false, dbdir, NULL);
    s = step_new(steps, &n, "bloat_returned", "bloat", bench_bloat_main);
    step_args(s, true, "--scale", scale, "--transactions", txns, "--pairs",
              sel_runs, "--memory", "returned", NULL);
    step_args(s, false, dbdir, NULL);

    /* Last: they change the database's tables. */
    s = step_new(steps, &n, "tpcb", NULL, bench_tpcb_main);
    step_args(s, true, "--clients", "1,64", "--seconds", secs, "--runs", rounds,
              NULL);
    step_args(s, false, dbdir, NULL);
    s = step_new(steps, &n, "tpcb_insert", "tpcb", bench_tpcb_main);
    step_args(s, true, "--txn", "insert", "--clients", "1,64", "--seconds",
              secs, "--runs", rounds, NULL);
    step_args(s, false, dbdir, NULL);
    s = step_new(steps, &n, "tpcb_async", "tpcb", bench_tpcb_main);
    step_args(s, true, "--sync", "off", "--clients", "1,2", "--seconds", secs,
              "--runs", rounds, NULL);
    step_args(s, false, dbdir, NULL);

    /* The real pgbench against keel serve and PostgreSQL 15, each on its
     * own new database: 40 runs of 3 s (scale 10), or with --quick 16
     * runs of a fixed number of transactions each (scale 1), about 2 s
     * in all.  Optional: without PostgreSQL it says why and the report
     * goes on. */
    s = step_new(steps, &n, "compare", NULL, bench_compare_main);
    s->optional = true;
    if (o->quick)
        step_args(s, true, "--quick", "--scale", scale, NULL);
    else
        step_args(s, true, "--scale", scale, "--clients", "1,2,8,32,64",
                  "--seconds", "3", NULL);
    return n;
}

/* ---- the output --------------------------------------------------------- */

/* The files the report writes, in the order it writes them. */
enum {
    OUT_REPORT,
    OUT_RESULTS,
    OUT_SELECT_SVG,
    OUT_BLOAT_SVG,
    OUT_COMPARE_SVG,
    OUT_COMPARE_TPCB_SVG,
    OUT_FILES
};

/* The path of output file `which` in dir, or the temporary name it is
 * written under until all are written. */
static void out_path(char *buf, size_t len, const char *dir, int which,
                     bool tmp)
{
    static const char *const names[OUT_FILES] = {
        "report.md", "results.json",       "select.svg",
        "bloat.svg", "compare-select.svg", "compare-tpcb.svg"};

    snprintf(buf, len, "%s/%s%s", dir, names[which], tmp ? ".tmp" : "");
}

/* Writes output file `which` under its temporary name.  0, or -1. */
static int out_write(int which, const char *path, const report_data *d,
                     const report_judged *j)
{
    FILE *f;
    int rc;

    switch (which) {
    case OUT_REPORT:
        if ((f = fopen(path, "w")) == NULL)
            return -1;
        rc = report_md_write(f, d, j);
        return fclose(f) == 0 ? rc : -1;
    case OUT_RESULTS:
        return report_json_write(path, d, j);
    case OUT_SELECT_SVG:
        return report_chart_select(path, d);
    case OUT_BLOAT_SVG:
        return report_chart_bloat(path, d);
    case OUT_COMPARE_SVG:
        return report_chart_compare(path, d, "select-only");
    default:
        return report_chart_compare(path, d, "tpcb-like");
    }
}

/*
 * Reads the steps' figures, judges the targets and writes the four files,
 * each under a temporary name; they are renamed, one after another, only
 * once all are written, so that a failure leaves the previous report as
 * it was.  0, or 1 after a message.
 */
static int report_write(const report_opts *o, const report_step *steps,
                        size_t nsteps, double total, double load0)
{
    select_row *rows = calloc(REPORT_MAX_SELECT, sizeof(*rows));
    report_judged *judged = calloc(report_ntargets, sizeof(*judged));
    report_data d;
    char path[4600], final[4600];
    int rc = rows != NULL && judged != NULL ? 0 : 1;

    if (rc == 0) {
        report_data_read(&d, o, steps, nsteps, rows, total, load0);
        report_judge(&d, judged);
    }
    for (int i = 0; i < OUT_FILES && rc == 0; i++) {
        out_path(path, sizeof(path), o->out, i, true);
        if (out_write(i, path, &d, judged) != 0) {
            fprintf(stderr, WHO ": cannot write %s: %s\n", path,
                    strerror(errno));
            rc = 1;
        }
    }
    for (int i = 0; i < OUT_FILES && rc == 0; i++) {
        out_path(path, sizeof(path), o->out, i, true);
        out_path(final, sizeof(final), o->out, i, false);
        if (rename(path, final) != 0) {
            fprintf(stderr, WHO ": cannot rename %s to %s: %s\n", path, final,
                    strerror(errno));
            rc = 1;
        }
    }
    for (int i = 0; i < OUT_FILES; i++) {
        out_path(path, sizeof(path), o->out, i, true);
        unlink(path);
    }
    free(judged);
    free(rows);
    return rc;
}

/* Whether the report can be written in dir (made if absent): checked
 * before the minutes of running.  0, or 1 after a message. */
static int out_check(const char *dir)
{
    char path[4600];
    FILE *f;

    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, WHO ": cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    out_path(path, sizeof(path), dir, OUT_REPORT, true);
    f = fopen(path, "w");
    if (f == NULL || fclose(f) != 0) {
        fprintf(stderr, WHO ": cannot write in %s: %s\n", dir, strerror(errno));
        return 1;
    }
    unlink(path);
    return 0;
}

int bench_report_main(int argc, char **argv)
{
    report_opts o;
    report_step steps[MAX_STEPS];
    char dbdir[4096], tmpjson[4096];
    uint64_t t0 = clock_now_ns();
    double load0 = load_average(), total;
    size_t nsteps;
    int rc = 0;

    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    if (out_check(o.out) != 0)
        return 1;
    if (bench_tmpdir_make(WHO, "report-json", tmpjson, sizeof(tmpjson)) != 0)
        return 1;
    if (bench_db_create(WHO, "report", o.scale, dbdir, sizeof(dbdir)) != 0) {
        bench_dir_remove(tmpjson);
        return 1;
    }
    memset(steps, 0, sizeof(steps));
    nsteps = report_steps(&o, dbdir, steps);
    for (size_t k = 0; k < nsteps && rc == 0; k++) {
        snprintf(steps[k].json, sizeof(steps[k].json), "%s/%s-%zu.json",
                 tmpjson, steps[k].name, k);
        step_args(&steps[k], false, "--json", steps[k].json, NULL);
        if (step_run(&steps[k], (int)k + 1, (int)nsteps) != 0)
            rc = 1;
    }
    bench_dir_remove(dbdir);
    total = (double)(clock_now_ns() - t0) / 1e9;
    if (rc == 0)
        rc = report_write(&o, steps, nsteps, total, load0);
    if (rc == 0)
        printf("keel bench report: %s/report.md, results.json, "
               "select.svg, bloat.svg, compare-select.svg, compare-tpcb.svg "
               "written in %.1f s\n",
               o.out, total);
    for (size_t k = 0; k < nsteps; k++) {
        if (steps[k].json[0] != '\0')
            unlink(steps[k].json);
        step_free(&steps[k]);
    }
    bench_dir_remove(tmpjson);
    return rc;
}
