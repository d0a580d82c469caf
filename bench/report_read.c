/*
 * report_read.c: the figures of `keel bench report`, read back from the
 * benchmarks' JSON: the select rows of both select steps as one list, the
 * ratios between them paired by round with their confidence intervals,
 * the one-client runs pinned to each CPU, and the bloat runs' ratios.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

/* The step named `name` that ran (the first of several), or NULL. */
static const report_step *step_named(const report_step *steps, size_t n,
                                     const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(steps[i].name, name) == 0 && steps[i].ran)
            return &steps[i];
    return NULL;
}

/* Each run's tps of a select row; none unless every one is a number. */
static void select_row_runs(select_row *r)
{
    const json_value *t = json_get(r->v, "tps_runs");

    r->nruns = 0;
    for (size_t j = 0; t != NULL && t->kind == JSON_ARRAY && j < t->n &&
                       j < REPORT_MAX_ROW_RUNS;
         j++) {
        const json_value *x = json_at(t, j);
        if (x == NULL || x->kind != JSON_NUMBER) {
            r->nruns = 0;
            return;
        }
        r->runs[r->nruns++] = x->num;
    }
}

/* The select configurations of both select steps, as one list. */
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
            select_row_runs(r);
        }
    }
    return n;
}

const select_row *select_find(const report_data *d, double clients,
                              const char *layout, double max_sessions)
{
    for (size_t i = 0; i < d->nrows; i++) {
        const select_row *r = &d->rows[i];
        if (r->clients == clients && strcmp(r->layout, layout) == 0 &&
            (max_sessions == 0 || r->max_sessions == max_sessions))
            return r;
    }
    return NULL;
}

/*
 * The runs of every configuration of a select step are interleaved (run
 * 1 of each, then run 2, ..., every second run in reverse order), so run
 * i of a and run i of b saw the same state of the host: their ratios are
 * paired.  The interval is Student's t at `level` (the ratio itself with
 * one round).
 */
paired_ratio paired_at(const select_row *a, const select_row *b, double level)
{
    paired_ratio p = {NAN, NAN, NAN, NAN, NAN, 0};
    double v[REPORT_MAX_ROW_RUNS];
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
    p.r = b->tps > 0 ? a->tps / b->tps : NAN;
    p.lo = p.ci_lo = b->tps_max > 0 ? a->tps_min / b->tps_max : NAN;
    p.hi = p.ci_hi = b->tps_min > 0 ? a->tps_max / b->tps_min : NAN;
    return p;
}

paired_ratio paired(const select_row *a, const select_row *b)
{
    return paired_at(a, b, 0.95);
}

bool paired_has_interval(paired_ratio p)
{
    return p.rounds >= 2 && p.ci_lo <= p.ci_hi;
}

void paired_span(char *buf, size_t len, paired_ratio p, bool with_rounds)
{
    if (!paired_has_interval(p))
        snprintf(buf, len, "%s", p.rounds == 0 ? "not paired" : "one round");
    else if (with_rounds)
        snprintf(buf, len, "rounds %.3f-%.3f, 95%% CI of the mean %.3f-%.3f",
                 p.lo, p.hi, p.ci_lo, p.ci_hi);
    else
        snprintf(buf, len, "95%% CI of the mean %.3f-%.3f", p.ci_lo, p.ci_hi);
}

paired_ratio bloat_ratio(const json_value *r)
{
    const json_value *ci = json_get(r, "tps_on_over_off_ci");
    double pairs = json_num(r, "pairs");
    paired_ratio p = {json_num(r, "tps_on_over_off"),
                      json_num(r, "tps_on_over_off_min"),
                      json_num(r, "tps_on_over_off_max"),
                      NAN,
                      NAN,
                      pairs >= 1 && pairs <= REPORT_MAX_ROW_RUNS ? (int)pairs
                                                                 : 0};

    if (p.rounds == 1) {
        p.ci_lo = p.ci_hi = p.r;
    } else if (ci != NULL && ci->n == 2) {
        p.ci_lo = ci->items[0].num;
        p.ci_hi = ci->items[1].num;
    }
    return p;
}

int layout_side(const layout_cmp *lc, size_t i)
{
    const paired_ratio *p = &lc->r[i];

    if (!paired_has_interval(*p))
        return 2;
    return bench_interval_side(p->ci_lo, p->ci_hi, 3);
}

/*
 * Padded over packed at each client count of the main select step.
 * Shown together, the n intervals are each at 1 - 0.05 / n (Bonferroni),
 * so that all of them hold their means together with 95% confidence and
 * a count that only looks slower by chance is not called slower beyond
 * the noise.
 */
static void layout_compare(report_data *d)
{
    layout_cmp *c = &d->layout;
    const select_row *pad[REPORT_MAX_SELECT], *pack[REPORT_MAX_SELECT];
    const json_doc *main_doc = d->sel != NULL ? &d->sel->doc : NULL;

    c->n = 0;
    for (size_t i = 0; i < d->nrows && c->n < REPORT_MAX_SELECT; i++) {
        const select_row *k, *r = &d->rows[i];
        if (r->doc != main_doc || strcmp(r->layout, "padded") != 0)
            continue;
        k = select_find(d, r->clients, "packed", r->max_sessions);
        if (k == NULL || k->doc != main_doc)
            continue;
        pad[c->n] = r;
        pack[c->n++] = k;
    }
    c->level = c->n > 0 ? 1 - 0.05 / (double)c->n : 0.95;
    for (size_t i = 0; i < c->n; i++) {
        c->clients[i] = pad[i]->clients;
        c->r[i] = paired_at(pad[i], pack[i], c->level);
        c->side[i] = layout_side(c, i);
    }
}

/* The select_cpu steps' rows. */
static void cpu_rows(report_data *d)
{
    d->ncpu = 0;
    d->fastest = NULL;
    for (size_t k = 0; k < d->nsteps && d->ncpu < REPORT_CPU_STEPS; k++) {
        const report_step *s = &d->steps[k];
        const json_value *c, *v;
        if (!s->ran || strcmp(s->name, "select_cpu") != 0)
            continue;
        c = json_at(json_get(&s->doc.root, "cpus"), 0);
        v = json_at(json_get(&s->doc.root, "select"), 0);
        if (c == NULL || v == NULL)
            continue;
        d->cpu[d->ncpu].cpu = c->num;
        d->cpu[d->ncpu].v = v;
        d->ncpu++;
    }
    for (size_t i = 0; i < d->ncpu; i++)
        if (d->fastest == NULL || json_num(d->cpu[i].v, "ns_per_txn") <
                                      json_num(d->fastest->v, "ns_per_txn"))
            d->fastest = &d->cpu[i];
}

void report_data_read(report_data *d, const report_opts *o,
                      const report_step *steps, size_t nsteps, select_row *rows,
                      double total_s, double load0)
{
    memset(d, 0, sizeof(*d));
    d->o = o;
    d->steps = steps;
    d->nsteps = nsteps;
    d->total_s = total_s;
    d->load0 = load0;
    d->pin = step_named(steps, nsteps, "pin");
    d->catcache = step_named(steps, nsteps, "catcache");
    d->lookup = step_named(steps, nsteps, "lookup");
    d->bloat = step_named(steps, nsteps, "bloat");
    d->bloat_returned = step_named(steps, nsteps, "bloat_returned");
    d->tpcb = step_named(steps, nsteps, "tpcb");
    d->tpcb_insert = step_named(steps, nsteps, "tpcb_insert");
    d->tpcb_async = step_named(steps, nsteps, "tpcb_async");
    d->compare = step_named(steps, nsteps, "compare");
    for (size_t k = 0; k < nsteps; k++)
        if (strcmp(steps[k].name, "compare") == 0)
            d->compare_step = &steps[k];
    /* The two select steps: every count and layout, then max_sessions. */
    for (size_t k = 0; k < nsteps; k++)
        if (steps[k].ran && strcmp(steps[k].name, "select") == 0) {
            if (d->sel == NULL)
                d->sel = &steps[k];
            else if (d->ms == NULL)
                d->ms = &steps[k];
        }
    d->rows = rows;
    d->nrows =
        rows != NULL ? select_rows(steps, nsteps, rows, REPORT_MAX_SELECT) : 0;
    d->one = select_find(d, 1, "padded", 0);
    d->two = select_find(d, 2, "padded", 0);
    d->s64 = select_find(d, 64, "padded", 0);
    d->k2 = select_find(d, 2, "packed", 0);
    d->k64 = select_find(d, 64, "packed", 0);
    d->a400 = select_find(d, 64, "padded", 400);
    d->a402 = select_find(d, 64, "padded", 402);
    layout_compare(d);
    cpu_rows(d);
}

double stat_median(const json_value *root, const char *key)
{
    return json_num(json_get(root, key), "median");
}

const json_value *tpcb_row(const report_step *s, double clients)
{
    const json_value *a, *r;

    if (s == NULL)
        return NULL;
    a = json_get(&s->doc.root, "tpcb");
    for (size_t i = 0; a != NULL && (r = json_at(a, i)) != NULL; i++)
        if (json_num(r, "clients") == clients)
            return r;
    return NULL;
}

double bloat_most_blocks(const report_step *s, const char *which)
{
    const json_value *ss;
    double most = NAN;

    if (s == NULL)
        return NAN;
    ss = json_get(json_get(&s->doc.root, which), "sessions");
    for (size_t i = 0; ss != NULL && i < ss->n; i++) {
        double b = json_num(&ss->items[i], "final_block_bytes");
        if (isfinite(b) && !(b <= most))
            most = b;
    }
    return most;
}

bool compare_measured(const report_data *d)
{
    const json_value *runs;

    if (d->compare == NULL)
        return false;
    runs = json_get(&d->compare->doc.root, "runs");
    return json_str(&d->compare->doc.root, "skipped") == NULL &&
           runs != NULL && runs->n > 0;
}

const json_value *compare_run(const report_data *d, const char *script,
                              const char *mode, double clients)
{
    const json_value *runs, *r;
    const char *sc, *m;

    if (!compare_measured(d))
        return NULL;
    runs = json_get(&d->compare->doc.root, "runs");
    for (size_t i = 0; (r = json_at(runs, i)) != NULL; i++)
        if ((sc = json_str(r, "script")) != NULL && strcmp(sc, script) == 0 &&
            (m = json_str(r, "mode")) != NULL && strcmp(m, mode) == 0 &&
            json_num(r, "clients") == clients)
            return r;
    return NULL;
}

double compare_ratio(const json_value *run, const char *what)
{
    double k = json_num(json_get(run, "keel"), what);
    double p = json_num(json_get(run, "postgres"), what);

    return isfinite(k) && p > 0 ? k / p : NAN;
}

/* The highest (or lowest) of of(d, run, arg) over the comparison's runs of
 * script in mode (NULL: both modes); NaN if one is missing. */
static double runs_extreme(const report_data *d, const char *script,
                          const char *mode, bool highest,
                          double (*of)(const report_data *d,
                                       const json_value *run, const void *arg),
                          const void *arg)
{
    const json_value *runs, *r;
    double best = NAN;
    size_t n = 0;

    if (!compare_measured(d))
        return NAN;
    runs = json_get(&d->compare->doc.root, "runs");
    for (size_t i = 0; (r = json_at(runs, i)) != NULL; i++) {
        const char *sc = json_str(r, "script"), *m = json_str(r, "mode");
        double v;
        if (sc == NULL || strcmp(sc, script) != 0 ||
            (mode != NULL && (m == NULL || strcmp(m, mode) != 0)))
            continue;
        v = of(d, r, arg);
        if (!isfinite(v))
            return NAN;
        if (n++ == 0 || (highest ? v > best : v < best))
            best = v;
    }
    return best;
}

static double run_ratio(const report_data *d, const json_value *run,
                        const void *what)
{
    (void)d;
    return compare_ratio(run, what);
}

double compare_extreme(const report_data *d, const char *script,
                       const char *mode, const char *what, bool highest)
{
    return runs_extreme(d, script, mode, highest, run_ratio, what);
}

double compare_scaling(const report_data *d, const char *who, const char *mode,
                       double a, double b)
{
    const json_value *ra = compare_run(d, "select-only", mode, a);
    const json_value *rb = compare_run(d, "select-only", mode, b);
    double ta = json_num(json_get(ra, who), "tps");
    double tb = json_num(json_get(rb, who), "tps");

    return isfinite(ta) && tb > 0 ? ta / tb : NAN;
}

const json_value *compare_floor(const report_data *d, double clients)
{
    const json_value *pts, *p;

    if (!compare_measured(d))
        return NULL;
    pts = json_get(json_get(&d->compare->doc.root, "floor"), "points");
    for (size_t i = 0; (p = json_at(pts, i)) != NULL; i++)
        if (json_num(p, "clients") == clients)
            return p;
    return NULL;
}

double compare_floor_ratio(const json_value *run, const json_value *floor,
                           bool cpu)
{
    double f = json_num(floor, cpu ? "answer_cpu_us_per_round_trip"
                                   : "round_trips_per_s");
    double p =
        json_num(json_get(run, "postgres"), cpu ? "cpu_us_per_txn" : "tps");

    return isfinite(f) && p > 0 ? f / p : NAN;
}

static double run_floor_ratio(const report_data *d, const json_value *run,
                              const void *cpu)
{
    return compare_floor_ratio(run, compare_floor(d, json_num(run, "clients")),
                               *(const bool *)cpu);
}

double compare_floor_bound(const report_data *d, const char *mode, bool cpu)
{
    return runs_extreme(d, "select-only", mode, cpu, run_floor_ratio, &cpu);
}

const json_value *compare_wal_window(const report_data *d, const char *who,
                                    int window)
{
    const json_value *w;
    const json_value *m;

    if (!compare_measured(d))
        return NULL;
    w = json_at(json_get(json_get(&d->compare->doc.root, "wal_volume"), who),
                (size_t)window);
    m = json_get(w, "measured");
    return m != NULL && m->kind == JSON_BOOL && m->b ? w : NULL;
}

double compare_wal(const report_data *d, const char *who, int window,
                   const char *what)
{
    return json_num(compare_wal_window(d, who, window), what);
}

double compare_wal_ratio(const report_data *d, int window, const char *what)
{
    double k = compare_wal(d, "keel", window, what);
    double p = compare_wal(d, "postgres", window, what);

    return isfinite(k) && p > 0 ? k / p : NAN;
}

double load_average(void)
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
