/*
 * report_md.c: report.md, the report's tables and readings.  The figures
 * come from report_read.c, the verdicts from report_targets.c (quoted
 * where a reading names a target, never judged again here), the fixed
 * prose from report_text.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "report_text.h"

#define MIB 1048576.0

/* The verdict quote of target `id` (report_verdict_quote()). */
static const char *quote(char *buf, size_t len, const report_judged *j,
                         const char *id)
{
    report_verdict_quote(buf, len, report_find(j, id));
    return buf;
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

/* ---- the heading and the targets --------------------------------------- */

static void md_header(FILE *f, const report_data *d)
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
    fprintf(f, RT_HEADER, d->o->quick ? " --quick" : "", line,
            host[0] ? host : "?", sysconf(_SC_NPROCESSORS_ONLN), cpu,
            __VERSION__,
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
            d->o->scale, d->o->scale * 100000, d->total_s, d->load0,
            load_average());
}

/* A figure as the targets' tables print it, or "not measured". */
static void figure_text(char *buf, size_t len, double v, int decimals,
                        const char *unit)
{
    if (isfinite(v))
        snprintf(buf, len, "%.*f%s", decimals, v, unit);
    else
        snprintf(buf, len, "not measured");
}

/* A reading's interval as the targets' tables print it: nothing for a
 * target judged on its figure. */
static void interval_text(char *buf, size_t len, report_reading r, int decimals,
                          bool interval)
{
    if (!interval || !isfinite(r.v))
        buf[0] = '\0';
    else if (r.rounds == 0)
        snprintf(buf, len, "not paired");
    else if (r.rounds < 2 || !(r.lo <= r.hi))
        snprintf(buf, len, "one round");
    else
        snprintf(buf, len, "%.*f..%.*f", decimals, r.lo, decimals, r.hi);
}

static void md_targets(FILE *f, const report_data *d, const report_judged *j)
{
    char limit[128], fig[64], ci[64];

    fputs(RT_TARGETS_HEAD, f);
    for (size_t i = 0; i < report_ntargets; i++) {
        const report_target *t = j[i].t;
        report_limit_text(limit, sizeof(limit), t, 0);
        figure_text(fig, sizeof(fig), j[i].r.v, t->decimals, t->unit);
        interval_text(ci, sizeof(ci), j[i].r, t->decimals, t->interval);
        fprintf(f, "| `%s` | %s | %s | %s | %s | %s |\n", t->id, t->what, limit,
                fig, ci, report_verdict_text(&j[i]));
    }
    fputs(RT_INFO_HEAD, f);
    for (size_t i = 0; i < report_ninfos; i++) {
        const report_info *in = &report_infos[i];
        report_reading r = in->read(d);
        if (!isfinite(r.v))
            continue;
        report_limit_text(limit, sizeof(limit), report_find(j, in->target)->t,
                          in->per);
        figure_text(fig, sizeof(fig), r.v, in->decimals, in->unit);
        interval_text(ci, sizeof(ci), r, in->decimals, in->interval);
        fprintf(f, "| `%s` | %s | %s | %s | %s |\n", in->target, in->what, fig,
                ci, limit);
    }
    fputs("\n", f);
}

/* ---- select ------------------------------------------------------------ */

/* Writes `lead` and the client counts of lc on `side` (layout_side();
 * "2 and 4 clients", with the median difference where beyond the noise),
 * ending the sentence; nothing if there are none. */
static void md_layout_class(FILE *f, const layout_cmp *lc, int side,
                            const char *lead)
{
    size_t k = 0, m = 0;
    double last = 0;

    for (size_t i = 0; i < lc->n; i++)
        m += lc->side[i] == side;
    if (m == 0)
        return;
    fputs(lead, f);
    for (size_t i = 0; i < lc->n; i++) {
        if (lc->side[i] != side)
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

/* Padded over packed at every count, by the side of 1 each lies on. */
static void md_layout(FILE *f, const layout_cmp *lc)
{
    char lead[128];
    bool any = false;

    if (lc->n == 0)
        return;
    for (size_t i = 0; i < lc->n; i++)
        any = any || lc->side[i] != 2;
    fputs(RT_LAYOUT_HEAD, f);
    if (any)
        fprintf(f, RT_LAYOUT_LEAD, 100 * lc->level, lc->n);
    fputs(":", f);
    for (size_t i = 0; i < lc->n; i++) {
        const paired_ratio *p = &lc->r[i];
        fprintf(f, "%s %.0f: %.3fx", i ? ";" : "", lc->clients[i], p->r);
        if (lc->side[i] != 2)
            fprintf(f, " (%.3f-%.3f, CI %.3f-%.3f)", p->lo, p->hi, p->ci_lo,
                    p->ci_hi);
        else
            fputs(p->rounds == 0 ? " (not paired)" : " (one round)", f);
    }
    fputs(".", f);
    snprintf(lead, sizeof(lead), RT_LAYOUT_FASTER, 100 * lc->level);
    md_layout_class(f, lc, 1, lead);
    snprintf(lead, sizeof(lead), RT_LAYOUT_NOISE, 100 * lc->level);
    md_layout_class(f, lc, 0, lead);
    snprintf(lead, sizeof(lead), RT_LAYOUT_SLOWER, 100 * lc->level);
    md_layout_class(f, lc, -1, lead);
    md_layout_class(f, lc, 2, RT_LAYOUT_NONE);
    fputs(RT_LAYOUT_INFO, f);
}

static void md_select_reading(FILE *f, const report_data *d,
                              const report_judged *j)
{
    paired_ratio p2 = paired(d->two, d->k2), p64 = paired(d->s64, d->k64);
    char q1[160], q2[160], q3[160], q4[160], fs2[64], fs64[64], sp2[96],
        sp64[96];

    faster_slower(fs2, sizeof(fs2), p2.r);
    faster_slower(fs64, sizeof(fs64), p64.r);
    paired_span(sp2, sizeof(sp2), p2, false);
    paired_span(sp64, sizeof(sp64), p64, false);
    fprintf(f, RT_SELECT_READING, d->one ? d->one->tps : NAN,
            d->one ? d->one->ns : NAN, d->one ? d->one->cpu : NAN,
            quote(q1, sizeof(q1), j, "select_1_client_ns"),
            paired(d->two, d->one).r,
            quote(q2, sizeof(q2), j, "select_2_over_1"),
            paired(d->s64, d->two).r,
            quote(q3, sizeof(q3), j, "select_64_over_2"), fs2, p2.r, sp2,
            quote(q4, sizeof(q4), j, "padded_over_packed"), fs64, p64.r, sp64);
}

static void md_select_counts(FILE *f, const report_data *d)
{
    fputs(RT_COUNTS_HEAD, f);
    for (size_t i = 0; i < d->nrows; i++) {
        const json_value *p = json_get(d->rows[i].v, "per_txn");
        if (d->rows[i].doc != &d->sel->doc)
            continue;
        fprintf(
            f,
            "| %.0f | %s | %.3f | %.3f | %.3f | %.4f | %.3f | %.4f | %.3f | "
            "%.3f |\n",
            d->rows[i].clients, d->rows[i].layout, json_num(p, "buffer_pins"),
            json_num(p, "cache_hits"), json_num(p, "cache_negative_hits"),
            json_num(p, "cache_misses"), json_num(p, "cache_list_hits"),
            json_num(p, "cache_list_misses"), json_num(p, "snapshots_reused"),
            json_num(p, "snapshots_taken"));
    }
    if (d->one != NULL) {
        const json_value *p = json_get(d->one->v, "per_txn");
        fprintf(f, RT_COUNTS_READING, json_num(p, "buffer_pins"),
                json_num(p, "dir_moves"), json_num(p, "cache_hits"),
                json_num(p, "cache_negative_hits"),
                json_num(p, "cache_negative_hits") > 1.5 ? RT_COUNTS_UNANALYZED
                                                         : "",
                json_num(p, "cache_list_hits"), json_num(p, "cache_misses"),
                json_num(p, "snapshots_reused"));
    }
}

static void md_max_sessions(FILE *f, const report_data *d,
                            const report_judged *j)
{
    paired_ratio r = paired(d->a402, d->a400);
    int side =
        paired_has_interval(r) ? bench_interval_side(r.ci_lo, r.ci_hi, 3) : 0;
    char fs[64], span[96], q[160], excl[160] = "";

    fprintf(f, RT_MS_HEAD, d->ms->shown);
    for (size_t i = 0; i < d->nrows; i++)
        if (d->rows[i].doc == &d->ms->doc)
            fprintf(f, "| %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
                    d->rows[i].max_sessions, d->rows[i].clients, d->rows[i].tps,
                    d->rows[i].tps_min, d->rows[i].tps_max, d->rows[i].p50,
                    d->rows[i].p99);
    faster_slower(fs, sizeof(fs), r.r);
    paired_span(span, sizeof(span), r, true);
    if (side != 0)
        snprintf(excl, sizeof(excl), RT_MS_SIDE, side > 0 ? "above" : "below",
                 side > 0 ? "faster" : "slower");
    fprintf(f, RT_MS_READING, fs, r.r, span,
            quote(q, sizeof(q), j, "max_sessions_402_over_400"), excl);
}

static void md_select(FILE *f, const report_data *d, const report_judged *j)
{
    const report_judged *two_over_one = report_find(j, "select_2_over_1");

    fprintf(f, RT_SELECT_HEAD, d->sel->shown);
    for (size_t i = 0; i < d->nrows; i++) {
        const select_row *r = &d->rows[i];
        if (r->doc != &d->sel->doc)
            continue;
        fprintf(f,
                "| %.0f | %s | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | "
                "%.0f | %.0f |\n",
                r->clients, r->layout, r->max_sessions, r->tps, r->tps_min,
                r->tps_max, r->ns, r->cpu, r->p50, r->p99);
    }
    md_select_reading(f, d, j);
    fputs(RT_SELECT_RATIOS, f);
    {
        const json_value *c = json_get(&d->sel->doc.root, "cpus");
        fputs(c != NULL && c->n > 0 ? RT_SELECT_PINNED : ".\n\n", f);
    }
    md_layout(f, &d->layout);
    if (d->one != NULL && d->two != NULL && d->pin != NULL) {
        double limit = two_over_one->t->limit;
        fprintf(f, RT_SELECT_LINES,
                stat_median(&d->pin->doc.root, "line_handoff_ns"),
                d->two->cpu - d->one->cpu, limit,
                d->one->cpu * (2 / limit - 1));
    }
    fputs(RT_SELECT_TIMES, f);
    md_select_counts(f, d);
    if (d->ms != NULL && d->a400 != NULL && d->a402 != NULL)
        md_max_sessions(f, d, j);
}

/* The section on one client pinned to each CPU. */
static void md_select_cpu(FILE *f, const report_data *d)
{
    const cpu_row *best = d->fastest, *worst = NULL;
    const char *shown = NULL;

    if (d->ncpu == 0)
        return;
    for (size_t k = 0; k < d->nsteps; k++)
        if (d->steps[k].ran && strcmp(d->steps[k].name, "select_cpu") == 0) {
            shown = d->steps[k].shown;
            break;
        }
    fprintf(f, RT_CPU_HEAD, shown != NULL ? shown : "");
    for (size_t i = 0; i < d->ncpu; i++) {
        const json_value *v = d->cpu[i].v;
        fprintf(f,
                "| %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | %.0f | %.0f |\n",
                d->cpu[i].cpu, json_num(v, "tps"), json_num(v, "tps_min"),
                json_num(v, "tps_max"), json_num(v, "ns_per_txn"),
                json_num(v, "cpu_ns_per_txn"), json_num(v, "p50_ns"),
                json_num(v, "p99_ns"));
        if (worst == NULL ||
            json_num(v, "ns_per_txn") > json_num(worst->v, "ns_per_txn"))
            worst = &d->cpu[i];
    }
    fprintf(f, RT_CPU_READING, json_num(best->v, "ns_per_txn"), best->cpu);
    if (worst != best)
        fprintf(f, RT_CPU_WORST, json_num(worst->v, "ns_per_txn"), worst->cpu,
                json_num(worst->v, "ns_per_txn") /
                    json_num(best->v, "ns_per_txn"));
    if (d->one != NULL) {
        const json_value *c = json_at(json_get(&d->one->doc->root, "cpus"), 0);
        if (c != NULL)
            fprintf(f, RT_CPU_MAIN_PINNED, c->num, d->one->ns);
        else
            fprintf(f, RT_CPU_MAIN_UNPINNED, d->one->ns);
    }
    fputs(RT_CPU_END, f);
}

/* ---- bloat --------------------------------------------------------------- */

/* What the bloat table's rows add up to. */
typedef struct bloat_sums {
    double growth_off; /* the most bytes per transaction, pruning off */
    double max_on;     /* the most bytes any pruned session counted */
    size_t samples;    /* the fewest samples of a pruned session */
} bloat_sums;

/* The bloat table: each session of each setting. */
static bloat_sums md_bloat_table(FILE *f, const json_value *r)
{
    static const char *const which[] = {"off", "on"};
    double txns = json_num(r, "transactions");
    bloat_sums s = {0, 0, 0};

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
            for (size_t n = 0; n < b->n; n++)
                most = fmax(most, b->items[n].num);
            fprintf(f,
                    "| %s | %.0f | %.3f | %zu | %.0f | %.0f | %.0f | %.0f | "
                    "%.1f | %.0f |\n",
                    which[k], json_num(run, "tps"), json_num(run, "elapsed_s"),
                    i, first, half, last, most, (last - first) / txns,
                    json_num(&ss->items[i], "final_block_bytes"));
            if (k == 0) {
                s.growth_off = fmax(s.growth_off, (last - first) / txns);
            } else {
                s.max_on = fmax(s.max_on, most);
                s.samples =
                    s.samples == 0 || b->n < s.samples ? b->n : s.samples;
            }
        }
    }
    return s;
}

/*
 * The bloat figures: the runs with memory kept between them (the
 * targets'), and a line on those with memory returned after every run.
 */
static void md_bloat(FILE *f, const report_data *d, const report_judged *j)
{
    const json_value *r = &d->bloat->doc.root;
    const report_judged *blocks = report_find(j, "catcache_blocks");
    double target = json_num(json_get(r, "on"), "memory_target");
    paired_ratio p = bloat_ratio(r);
    bloat_sums s;
    char span[128], q[192];

    fprintf(f, RT_BLOAT_HEAD, d->bloat->shown);
    s = md_bloat_table(f, r);
    fprintf(f, RT_BLOAT_GROWTH, s.growth_off);
    if (s.samples == 0 || !isfinite(target))
        fputs(RT_BLOAT_NO_SAMPLES, f);
    else
        fprintf(f, RT_BLOAT_MEMORY, s.samples, s.max_on / MIB, target / MIB,
                bloat_most_blocks(d->bloat, "on") / MIB, blocks->r.v,
                quote(q, sizeof(q), j, "catcache_blocks"));
    paired_span(span, sizeof(span), p, true);
    if (p.rounds <= 1)
        fprintf(f, RT_BLOAT_TPS_ONE, p.r,
                p.rounds == 1 ? "one pair of runs, off then on" : "runs", span);
    else
        fprintf(f, RT_BLOAT_TPS, p.r, p.rounds, span);
    if (paired_has_interval(p) && bench_interval_side(p.ci_lo, p.ci_hi, 3) > 0)
        fprintf(f, "%s%s", RT_BLOAT_FASTER,
                s.samples > 0 && s.max_on <= target && s.growth_off > 0
                    ? RT_BLOAT_FASTER_WHY
                    : "");
    fprintf(f, RT_BLOAT_VERDICT, quote(q, sizeof(q), j, "bloat_throughput"));
    if (d->bloat_returned != NULL) {
        const json_value *rr = &d->bloat_returned->doc.root;
        paired_ratio q2 = bloat_ratio(rr);
        paired_span(span, sizeof(span), q2, true);
        fprintf(f, RT_BLOAT_RETURNED, d->bloat_returned->shown,
                json_num(json_get(rr, "off"), "tps"),
                json_num(json_get(rr, "on"), "tps"), q2.r, span,
                s.growth_off > 0 ? 4096 / s.growth_off : NAN, target / MIB);
    }
}

/* ---- catalog cache ------------------------------------------------------- */

/* The hit paths' timings, pruning enabled and disabled. */
static void md_catcache_hits(FILE *f, const json_value *r)
{
    static const char *const m[] = {"hit1", "hit3", "negative_hit"};
    char key[96];

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
}

/* The bloat run with pruning `suffix`'s field `what`. */
static double cc_bloat(const json_value *r, const char *what,
                       const char *suffix)
{
    char key[96];

    snprintf(key, sizeof(key), "bloat_%s_%s", what, suffix);
    return json_num(r, key);
}

static void md_catcache(FILE *f, const report_data *d, const report_judged *j)
{
    static const char *const runs[2][2] = {{"pruning off", "pruning_off"},
                                           {"pruning on", "pruning_on"}};
    const json_value *r = &d->catcache->doc.root;
    const char *cfg = json_str(r, "config");
    double lo = json_num(r, "prune_time_ratio_ci_low");
    double hi = json_num(r, "prune_time_ratio_ci_high");
    double target = json_num(r, "memory_target_bytes");
    int side = bench_interval_side(lo, hi, 4);
    char build[128] = "", q1[160], q2[192], key[96];

    if (cfg != NULL)
        snprintf(build, sizeof(build), " (build: %s)", cfg);
    fprintf(f, RT_CC_HEAD, d->catcache->shown, build);
    md_catcache_hits(f, r);
    fputs(RT_CC_BLOAT_HEAD, f);
    for (int k = 0; k < 2; k++) {
        snprintf(key, sizeof(key), "hot_hit_ratio_%s", runs[k][1]);
        fprintf(f, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.4f |\n",
                runs[k][0], cc_bloat(r, "bytes_before", runs[k][1]),
                cc_bloat(r, "bytes", runs[k][1]),
                cc_bloat(r, "peak_bytes", runs[k][1]),
                cc_bloat(r, "block_bytes", runs[k][1]),
                cc_bloat(r, "rss_growth", runs[k][1]), json_num(r, key));
    }
    fprintf(f, RT_CC_READING, json_num(r, "prune_time_ratio"), lo, hi,
            side > 0   ? "slower beyond the noise"
            : side < 0 ? "faster beyond the noise"
                       : "no difference resolved",
            quote(q1, sizeof(q1), j, "catcache_hit_time"),
            json_num(r, "bloat_names"),
            (cc_bloat(r, "bytes", "pruning_off") -
             cc_bloat(r, "bytes_before", "pruning_off")) /
                MIB,
            cc_bloat(r, "rss_growth", "pruning_off") / MIB,
            cc_bloat(r, "bytes", "pruning_on") / MIB, target / MIB,
            cc_bloat(r, "block_bytes", "pruning_on") / MIB,
            cc_bloat(r, "rss_growth", "pruning_on") / MIB,
            report_find(j, "catcache_rss")->r.v,
            quote(q2, sizeof(q2), j, "catcache_rss"));
}

/* ---- lookup, pin ---------------------------------------------------- */

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

static void md_lookup(FILE *f, const report_data *d)
{
    const json_value *r = &d->lookup->doc.root;
    double lk = stat_median(r, "lookup_ns");

    fprintf(f, RT_LOOKUP_HEAD, d->lookup->shown);
    md_stat_table(f, r);
    fprintf(f, RT_LOOKUP_READING, lk, lk / stat_median(r, "random_load_ns"),
            stat_median(r, "random_load_ns"),
            stat_median(r, "page_walk_load_ns"),
            stat_median(r, "cached_load_ns"), stat_median(r, "lookup_root_ns"),
            stat_median(r, "lookup_root_ns") / lk,
            stat_median(r, "lookup_unhinted_ns"),
            stat_median(r, "lookup_unhinted_ns") / lk,
            100 * json_num(r, "heap_guess_rate"),
            100 * json_num(r, "heap_guess_exact"),
            stat_median(r, "keel_lookup_ns"));
    if (d->one != NULL && d->one->ns >= lk)
        fprintf(f, RT_LOOKUP_TXN_MORE, d->one->ns, d->one->ns - lk);
    else if (d->one != NULL)
        fprintf(f, RT_LOOKUP_TXN_LESS, d->one->ns, lk - d->one->ns);
    fputs(".\n\n", f);
}

static void md_pin(FILE *f, const report_data *d)
{
    const json_value *r = &d->pin->doc.root;
    double two = stat_median(r, "read_hit_2threads_mops");
    double many = NAN;
    const char *many_name = "";

    for (size_t i = 0; i < r->n; i++)
        if (strstr(r->items[i].key, "threads_mops") != NULL &&
            strcmp(r->items[i].key, "read_hit_2threads_mops") != 0) {
            many = json_num(&r->items[i], "median");
            many_name = r->items[i].key;
        }
    fprintf(f, RT_PIN_HEAD, d->pin->shown);
    md_stat_table(f, r);
    fprintf(f, RT_PIN_READING, stat_median(r, "read_hit_ns"),
            stat_median(r, "pin_unpin_ns"), many_name, many / two);
}

/* ---- the write-ahead log ------------------------------------------------ */

/*
 * pgbench's read-write transaction with commits that wait for the log (1
 * and 64 clients), one insert a transaction (1 and 64) and pgbench's with
 * synchronous_commit off (1 and 2), beside the disk's own write +
 * fdatasync loop measured in the same directory just before.
 */
static void md_tpcb(FILE *f, const report_data *d, const report_judged *j)
{
    const report_step *all[3] = {d->tpcb, d->tpcb_insert, d->tpcb_async};
    static const char *const kind[3] = {"tpcb, on", "insert, on", "tpcb, off"};
    const json_value *r1 = tpcb_row(d->tpcb, 1), *r64 = tpcb_row(d->tpcb, 64);
    const report_judged *one = report_find(j, "wal_commit_1_client");
    const report_judged *group = report_find(j, "wal_group_commit");
    char q[192];

    fprintf(f, RT_TPCB_HEAD, all[0]->shown, all[1]->shown, all[2]->shown);
    for (int k = 0; k < 3; k++) {
        const json_value *a = json_get(&all[k]->doc.root, "tpcb"), *r;
        for (size_t i = 0; a != NULL && (r = json_at(a, i)) != NULL; i++)
            fprintf(f, "| %s | %.0f | %.0f | %.0f | %.0f | %.3f | %.0f |\n",
                    kind[k], json_num(r, "clients"), json_num(r, "tps"),
                    json_num(r, "tps_min"), json_num(r, "tps_max"),
                    json_num(r, "tries_per_commit"),
                    json_num(r, "log_bytes_per_commit"));
    }
    fprintf(f, RT_TPCB_LOOP, json_num(&d->tpcb->doc.root, "fsync_loop_per_s"));
    if (one->measured)
        fprintf(f, RT_TPCB_ONE, one->r.v,
                quote(q, sizeof(q), j, "wal_commit_1_client"));
    if (group->measured)
        fprintf(f, RT_TPCB_GROUP, group->r.v,
                quote(q, sizeof(q), j, "wal_group_commit"));
    if (r1 != NULL && r64 != NULL && json_num(r1, "tps") > 0)
        fprintf(f, RT_TPCB_64, json_num(r64, "tps") / json_num(r1, "tps"),
                (int)json_num(&d->tpcb->doc.root, "branches"));
    fputs(RT_TPCB_ASYNC, f);
}

/* ---- the pgbench comparison ---------------------------------------------- */

/* A figure to `decimals` places, or "-" where there is none. */
static const char *cell(char *buf, size_t len, double v, int decimals)
{
    if (isfinite(v))
        snprintf(buf, len, "%.*f", decimals, v);
    else
        snprintf(buf, len, "-");
    return buf;
}

/* A comparison target's figure and verdict quote, or why it has none. */
static const char *cmp_figure(char *buf, size_t len, const report_judged *j,
                              const char *id)
{
    const report_judged *t = report_find(j, id);
    char q[192];

    if (!t->measured)
        snprintf(buf, len, RT_CMP_NOT_MEASURED);
    else
        snprintf(buf, len, RT_CMP_FIGURE, t->r.v, quote(q, sizeof(q), j, id));
    return buf;
}

/* The comparison's two tables: tps, then CPU per transaction. */
static void md_compare_tables(FILE *f, const report_data *d)
{
    const json_value *runs = json_get(&d->compare->doc.root, "runs"), *r;
    char a[32], b[32], c[32];

    for (int table = 0; table < 2; table++) {
        const char *what = table == 0 ? "tps" : "cpu_us_per_txn";
        fputs(table == 0 ? RT_CMP_TPS_HEAD : RT_CMP_CPU_HEAD, f);
        for (size_t i = 0; (r = json_at(runs, i)) != NULL; i++) {
            const char *script = json_str(r, "script");
            const char *mode = json_str(r, "mode");
            const char *first = json_str(r, "first");
            int dec = table == 0 ? 0 : 1;
            fprintf(f, "| %s | %s | %.0f | %s | %s | %s |",
                    script != NULL ? script : "?", mode != NULL ? mode : "?",
                    json_num(r, "clients"),
                    cell(a, sizeof(a), json_num(json_get(r, "keel"), what),
                         dec),
                    cell(b, sizeof(b), json_num(json_get(r, "postgres"), what),
                         dec),
                    cell(c, sizeof(c), compare_ratio(r, what), 2));
            if (table == 0)
                fprintf(f, " %s |", first != NULL && strcmp(first, "keel") == 0
                                        ? "keel"
                                        : "PostgreSQL");
            fputs("\n", f);
        }
    }
}

/* The round-trip floor at each select-only client count, and what it
 * bounds: the tps and CPU ratios a server could reach, and keel's tps as
 * a fraction of it. */
static void md_compare_floor(FILE *f, const report_data *d)
{
    const json_value *root = &d->compare->doc.root;
    const json_value *fl = json_get(root, "floor"), *p;
    const char *why = json_str(root, "floor_error");
    char a[6][32], span[64];

    if (json_get(fl, "points") == NULL) {
        fprintf(f, RT_CMP_FLOOR_NONE, why != NULL ? ": " : "",
                why != NULL ? why : "");
        return;
    }
    fprintf(f, RT_CMP_FLOOR_HEAD, json_num(fl, "query_bytes"),
            json_num(fl, "reply_bytes"), json_num(fl, "runs"),
            json_num(fl, "seconds_per_run"));
    for (size_t i = 0; (p = json_at(json_get(fl, "points"), i)) != NULL; i++) {
        double c = json_num(p, "clients");
        const json_value *rs = compare_run(d, "select-only", "simple", c);
        const json_value *rp = compare_run(d, "select-only", "prepared", c);
        double fr = json_num(p, "round_trips_per_s");
        snprintf(span, sizeof(span), "%.0f (%.0f-%.0f)", fr,
                 json_num(p, "round_trips_per_s_min"),
                 json_num(p, "round_trips_per_s_max"));
        fprintf(f, "| %.0f | %s | %.2f | %s / %s | %s / %s | %s / %s |\n", c,
                span, json_num(p, "answer_cpu_us_per_round_trip"),
                cell(a[0], sizeof(a[0]), compare_floor_ratio(rs, p, false), 2),
                cell(a[1], sizeof(a[1]), compare_floor_ratio(rp, p, false), 2),
                cell(a[2], sizeof(a[2]),
                     json_num(json_get(rs, "keel"), "tps") / fr, 2),
                cell(a[3], sizeof(a[3]),
                     json_num(json_get(rp, "keel"), "tps") / fr, 2),
                cell(a[4], sizeof(a[4]), compare_floor_ratio(rs, p, true), 2),
                cell(a[5], sizeof(a[5]), compare_floor_ratio(rp, p, true), 2));
    }
}

/* A log volume target's figure and quote, or "not measured". */
static const char *wal_figure(char *buf, size_t len, const report_judged *j,
                              const char *id)
{
    const report_judged *t = report_find(j, id);
    char q[192];

    if (!t->measured)
        snprintf(buf, len, "not measured");
    else
        snprintf(buf, len, RT_CMP_FIGURE, t->r.v, quote(q, sizeof(q), j, id));
    return buf;
}

/* The log volume per transaction: both windows, both servers, and keel's
 * over PostgreSQL's. */
static void md_compare_wal(FILE *f, const report_data *d,
                           const report_judged *j)
{
    static const char *const who[2] = {"keel", "postgres"};
    static const char *const shown[2] = {"keel serve", "PostgreSQL 15"};
    static const char *const windows[2] = {"after the CHECKPOINT", "next"};
    static const char *const what[4] = {"records_per_txn", "fpi_per_txn",
                                        "bytes_per_txn",
                                        "bytes_without_fpi_per_txn"};
    static const int dec[4] = {2, 3, 0, 0};
    const json_value *v = json_get(&d->compare->doc.root, "wal_volume");
    const char *check = json_str(v, "check");
    char c[4][32], q[2][256];

    if (compare_wal_window(d, "keel", 0) == NULL ||
        compare_wal_window(d, "postgres", 0) == NULL) {
        fputs(RT_CMP_WAL_NONE, f);
        return;
    }
    fprintf(f, RT_CMP_WAL_HOW, (unsigned)json_num(v, "transactions"),
            (unsigned)json_num(v, "transactions"), json_num(v, "seconds"));
    for (int w = 0; w < 2; w++) {
        for (int s = 0; s < 2; s++) {
            for (int k = 0; k < 4; k++)
                cell(c[k], sizeof(c[k]), compare_wal(d, who[s], w, what[k]),
                     dec[k]);
            fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", windows[w],
                    shown[s], c[0], c[1], c[2], c[3]);
        }
        for (int k = 0; k < 4; k++)
            cell(c[k], sizeof(c[k]), compare_wal_ratio(d, w, what[k]), 2);
        fprintf(f, "| %s | keel / PostgreSQL | %s | %s | %s | %s |\n",
                windows[w], c[0], c[1], c[2], c[3]);
    }
    fprintf(f, RT_CMP_WAL_READING,
            wal_figure(q[0], sizeof(q[0]), j, "wal_volume_checkpoint"),
            wal_figure(q[1], sizeof(q[1]), j, "wal_volume_steady"));
    if (check != NULL)
        fprintf(f, RT_CMP_WAL_CHECK, check);
}

static void md_compare(FILE *f, const report_data *d, const report_judged *j)
{
    static const char *const ids[6] = {
        "pgbench_select_simple",       "pgbench_select_prepared",
        "pgbench_select_cpu_simple",   "pgbench_select_cpu_prepared",
        "pgbench_tpcb",                "pgbench_serve_64_over_2"};
    static const char *const who[2] = {"keel", "postgres"};
    static const char *const shown[2] = {"keel serve", "PostgreSQL"};
    const json_value *r, *st, *runs;
    char q[6][256], settings[1024] = "", amount[96];
    double failed[2] = {0, 0};
    const char *skipped;

    fprintf(f, RT_CMP_HEAD, d->compare_step->shown);
    if (d->compare == NULL) {
        fputs(RT_CMP_NO_JSON, f);
        return;
    }
    r = &d->compare->doc.root;
    skipped = json_str(r, "skipped");
    if (skipped != NULL || !compare_measured(d)) {
        const json_value *fl = json_get(r, "failed");
        fprintf(f,
                fl != NULL && fl->kind == JSON_BOOL && fl->b ? RT_CMP_FAILED
                                                    : RT_CMP_SKIPPED,
                skipped != NULL ? skipped : "no runs");
        return;
    }
    st = json_get(r, "postgres_settings");
    for (size_t i = 0; st != NULL && st->kind == JSON_OBJECT && i < st->n;
         i++) {
        size_t n = strlen(settings);
        snprintf(settings + n, sizeof(settings) - n, "%s%s=%s", i ? ", " : "",
                 st->items[i].key,
                 st->items[i].kind == JSON_STRING ? st->items[i].str : "?");
    }
    if (isfinite(json_num(r, "seconds")))
        snprintf(amount, sizeof(amount), "-T %.0f", json_num(r, "seconds"));
    else
        snprintf(amount, sizeof(amount),
                 "-t %.0f (select-only) or -t %.0f (tpcb-like)",
                 json_num(json_get(r, "transactions_per_client"),
                          "select-only"),
                 json_num(json_get(r, "transactions_per_client"),
                          "tpcb-like"));
    fprintf(f, RT_CMP_HOW,
            json_str(r, "pgbench_version") ? json_str(r, "pgbench_version")
                                           : "pgbench",
            json_str(r, "pgbench") ? json_str(r, "pgbench") : "?",
            (unsigned)json_num(r, "scale"),
            json_num(json_get(r, "init_seconds"), "keel"),
            json_num(json_get(r, "init_seconds"), "postgres"),
            json_str(r, "postgres_version") ? json_str(r, "postgres_version")
                                            : "?",
            settings, amount);
    md_compare_tables(f, d);
    md_compare_floor(f, d);
    for (int i = 0; i < 6; i++)
        cmp_figure(q[i], sizeof(q[i]), j, ids[i]);
    fprintf(f, RT_CMP_READING, q[0], q[1], q[2], q[3], q[4], q[5]);
    fputs("\n", f);
    for (int w = 0; w < 2; w++) {
        const json_value *b = json_get(json_get(r, "balances"), who[w]);
        const json_value *up = json_get(b, "add_up");
        if (b == NULL)
            continue;
        fprintf(f, RT_CMP_BALANCES, shown[w],
                (long long)json_num(b, "accounts"),
                (long long)json_num(b, "tellers"),
                (long long)json_num(b, "branches"),
                (long long)json_num(b, "history"),
                up != NULL && up->kind == JSON_BOOL && up->b ? "add up"
                                                    : "do NOT add up");
    }
    runs = json_get(r, "runs");
    for (size_t i = 0; json_at(runs, i) != NULL; i++)
        for (int w = 0; w < 2; w++)
            failed[w] += json_num(json_get(json_at(runs, i), who[w]), "failed");
    fprintf(f, RT_CMP_FAILURES, failed[0], failed[1]);
    md_compare_wal(f, d, j);
    fputs(RT_CMP_END, f);
}

int report_md_write(FILE *f, const report_data *d, const report_judged *j)
{
    md_header(f, d);
    md_targets(f, d, j);
    if (d->sel != NULL)
        md_select(f, d, j);
    md_select_cpu(f, d);
    if (d->bloat != NULL)
        md_bloat(f, d, j);
    if (d->catcache != NULL)
        md_catcache(f, d, j);
    if (d->lookup != NULL)
        md_lookup(f, d);
    if (d->pin != NULL)
        md_pin(f, d);
    if (d->tpcb != NULL && d->tpcb_insert != NULL && d->tpcb_async != NULL)
        md_tpcb(f, d, j);
    if (d->compare_step != NULL)
        md_compare(f, d, j);
    return ferror(f) ? -1 : 0;
}
