/*
 * report_targets.c: the targets `keel bench report` judges, each once,
 * from one primary reading, and the readings it shows beside them as
 * information.  Every limit is written here once: the report's labels and
 * its verdicts both come from this table.  bench/README.md says why each
 * limit is what it is.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The random load from memory the time targets were set against (ns):
 * the readings in units of a load scale the limits by it. */
#define TARGET_LOAD_NS 140

/* ---- the primary readings -------------------------------------------- */

static report_reading value_of(double v)
{
    return (report_reading){v, NAN, NAN, 1};
}

static report_reading interval_of(paired_ratio p)
{
    return (report_reading){p.r, p.ci_lo, p.ci_hi, p.rounds};
}

static const report_reading not_measured = {NAN, NAN, NAN, 0};

static report_reading read_lookup_ns(const report_data *d)
{
    return d->lookup != NULL
               ? value_of(stat_median(&d->lookup->doc.root, "lookup_ns"))
               : not_measured;
}

static report_reading read_select_ns(const report_data *d)
{
    return d->one != NULL ? value_of(d->one->ns) : not_measured;
}

static report_reading read_2_over_1(const report_data *d)
{
    return interval_of(paired(d->two, d->one));
}

static report_reading read_64_over_2(const report_data *d)
{
    return interval_of(paired(d->s64, d->two));
}

static report_reading read_padded_2(const report_data *d)
{
    return interval_of(paired(d->two, d->k2));
}

static report_reading read_max_sessions(const report_data *d)
{
    return interval_of(paired(d->a402, d->a400));
}

static report_reading read_bloat_tps(const report_data *d)
{
    return d->bloat != NULL ? interval_of(bloat_ratio(&d->bloat->doc.root))
                            : not_measured;
}

static report_reading read_catcache_time(const report_data *d)
{
    const json_value *r;

    if (d->catcache == NULL)
        return not_measured;
    r = &d->catcache->doc.root;
    return (report_reading){
        json_num(r, "prune_time_ratio"), json_num(r, "prune_time_ratio_ci_low"),
        json_num(r, "prune_time_ratio_ci_high"), (int)json_num(r, "pairs")};
}

/* The memory target of the pruned bloat runs, in bytes. */
static double bloat_target(const report_data *d)
{
    return d->bloat != NULL
               ? json_num(json_get(&d->bloat->doc.root, "on"), "memory_target")
               : NAN;
}

static report_reading read_blocks(const report_data *d)
{
    return value_of(bloat_most_blocks(d->bloat, "on") / bloat_target(d));
}

/* `keel bench catcache`'s bloat run `suffix` ("pruning_on"): its field
 * `what` over the memory target. */
static double catcache_over_target(const report_data *d, const char *what,
                                   const char *suffix)
{
    char key[64];

    if (d->catcache == NULL)
        return NAN;
    snprintf(key, sizeof(key), "bloat_%s_%s", what, suffix);
    return json_num(&d->catcache->doc.root, key) /
           json_num(&d->catcache->doc.root, "memory_target_bytes");
}

static report_reading read_rss(const report_data *d)
{
    return value_of(catcache_over_target(d, "rss_growth", "pruning_on"));
}

static report_reading read_wal_commit(const report_data *d)
{
    const json_value *r1 = tpcb_row(d->tpcb, 1);
    double loop =
        d->tpcb != NULL ? json_num(&d->tpcb->doc.root, "fsync_loop_per_s") : 0;

    return r1 != NULL && loop > 0 ? value_of(json_num(r1, "tps") / loop)
                                  : not_measured;
}

static report_reading read_group_commit(const report_data *d)
{
    const json_value *i1 = tpcb_row(d->tpcb_insert, 1);
    const json_value *i64 = tpcb_row(d->tpcb_insert, 64);

    return i1 != NULL && i64 != NULL && json_num(i1, "tps") > 0
               ? value_of(json_num(i64, "tps") / json_num(i1, "tps"))
               : not_measured;
}

/* The lower of a and b; NaN unless both are measured. */
static double lower_of(double a, double b)
{
    return isfinite(a) && isfinite(b) ? fmin(a, b) : NAN;
}

/* The pgbench comparison (`keel bench compare`): keel serve over
 * PostgreSQL 15, each pair of runs measured back to back. */
static report_reading read_pg_select_simple(const report_data *d)
{
    return value_of(
        compare_extreme(d, "select-only", "simple", "tps", false));
}

static report_reading read_pg_select_prepared(const report_data *d)
{
    return value_of(
        compare_extreme(d, "select-only", "prepared", "tps", false));
}

static report_reading read_pg_cpu_simple(const report_data *d)
{
    return value_of(
        compare_extreme(d, "select-only", "simple", "cpu_us_per_txn", true));
}

static report_reading read_pg_cpu_prepared(const report_data *d)
{
    return value_of(compare_extreme(d, "select-only", "prepared",
                                    "cpu_us_per_txn", true));
}

static report_reading read_pg_tpcb(const report_data *d)
{
    return value_of(compare_extreme(d, "tpcb-like", NULL, "tps", false));
}

static report_reading read_serve_64_over_2(const report_data *d)
{
    return value_of(lower_of(compare_scaling(d, "keel", "simple", 64, 2),
                             compare_scaling(d, "keel", "prepared", 64, 2)));
}

/* The log volume per tpcb-like transaction, keel serve's over
 * PostgreSQL 15's: with page images in the window from a CHECKPOINT;
 * without them in the window after. */
static report_reading read_wal_checkpoint(const report_data *d)
{
    return value_of(compare_wal_ratio(d, 0, "bytes_per_txn"));
}

static report_reading read_wal_steady(const report_data *d)
{
    return value_of(compare_wal_ratio(d, 1, "bytes_without_fpi_per_txn"));
}

/* ---- the targets --------------------------------------------------- */

const report_target report_targets[] = {
    {"lookup_ns", "primary-key lookup, `keel bench lookup`'s `lookup_ns`",
     BENCH_AT_MOST, 340, " ns", 0, false, read_lookup_ns},
    {"select_1_client_ns",
     "select-only transaction, 1 client: wall time per transaction (main "
     "table)",
     BENCH_AT_MOST, 455, " ns", 0, false, read_select_ns},
    {"select_2_over_1", "select-only throughput, 2 clients over 1",
     BENCH_AT_LEAST, 1.85, "x", 3, true, read_2_over_1},
    {"select_64_over_2", "select-only throughput, 64 clients over 2",
     BENCH_AT_LEAST, 0.85, "x", 3, true, read_64_over_2},
    {"padded_over_packed",
     "select-only throughput, process array slots padded over packed, 2 "
     "clients",
     BENCH_AT_LEAST, 1, "x", 3, true, read_padded_2},
    {"max_sessions_402_over_400",
     "select-only throughput, max_sessions 402 over 400, 64 clients",
     BENCH_NEAR_ONE, 0.05, "x", 3, true, read_max_sessions},
    {"bloat_throughput",
     "`keel bench bloat` throughput, catalog cache pruning on over off "
     "(memory kept)",
     BENCH_AT_LEAST, 0.95, "x", 3, true, read_bloat_tps},
    {"catcache_hit_time",
     "catalog cache hits, time with pruning enabled over disabled",
     BENCH_AT_MOST, 1.01, "x", 4, true, read_catcache_time},
    /* The slabs' headers and unused ends, alignment, the pieces freed for
     * reuse and the newest region's unused slabs: 8-9% measured. */
    {"catcache_blocks",
     "catalog cache memory blocks of a pruned session (`block_bytes`, the "
     "most of any in `keel bench bloat`) over its memory target",
     BENCH_AT_MOST, 1.125, "x", 3, false, read_blocks},
    /* The blocks, and the bucket arrays and the scan and row kept for
     * misses, which lie outside them: 13% measured. */
    {"catcache_rss",
     "resident memory the process grew by over `keel bench catcache`'s "
     "pruned bloat run, over the memory target",
     BENCH_AT_MOST, 1.25, "x", 3, false, read_rss},
    {"wal_commit_1_client",
     "pgbench's transaction, 1 client, commits waiting for the log, over "
     "the disk's own write + fdatasync loop",
     BENCH_AT_LEAST, 0.70, "x", 2, false, read_wal_commit},
    {"wal_group_commit",
     "one insert a transaction, commits waiting for the log, 64 clients "
     "over 1",
     BENCH_AT_LEAST, 10, "x", 2, false, read_group_commit},
    {"pgbench_select_simple",
     "real pgbench, select-only (`-S`), simple protocol: keel serve's tps "
     "over PostgreSQL 15's, the lowest over the client counts",
     BENCH_AT_LEAST, 2.5, "x", 2, false, read_pg_select_simple},
    {"pgbench_select_prepared",
     "real pgbench, select-only, prepared protocol (`-M prepared`): keel "
     "serve's tps over PostgreSQL 15's, the lowest over the client counts",
     BENCH_AT_LEAST, 1.3, "x", 2, false, read_pg_select_prepared},
    {"pgbench_select_cpu_simple",
     "real pgbench, select-only, simple protocol: server CPU time per "
     "transaction, keel serve's over PostgreSQL 15's, the highest over the "
     "client counts",
     BENCH_AT_MOST, 0.25, "x", 2, false, read_pg_cpu_simple},
    {"pgbench_select_cpu_prepared",
     "real pgbench, select-only, prepared protocol: server CPU time per "
     "transaction, keel serve's over PostgreSQL 15's, the highest over the "
     "client counts",
     BENCH_AT_MOST, 0.5, "x", 2, false, read_pg_cpu_prepared},
    {"pgbench_tpcb",
     "real pgbench, tpcb-like (the default script): keel serve's tps over "
     "PostgreSQL 15's, the lowest over the client counts and both "
     "protocols",
     BENCH_AT_LEAST, 2, "x", 2, false, read_pg_tpcb},
    {"pgbench_serve_64_over_2",
     "real pgbench, select-only: keel serve's tps at 64 clients over 2, the "
     "lower of the simple and prepared protocols",
     BENCH_AT_LEAST, 0.85, "x", 2, false, read_serve_64_over_2},
    {"wal_volume_checkpoint",
     "log bytes per tpcb-like transaction (pgbench -c 1 -M prepared) over "
     "the transactions just after a CHECKPOINT, page images included: keel "
     "serve's over PostgreSQL 15's",
     BENCH_AT_MOST, 1, "x", 2, false, read_wal_checkpoint},
    {"wal_volume_steady",
     "log bytes per tpcb-like transaction less the page images' bytes, over "
     "as many transactions after those: keel serve's over PostgreSQL 15's",
     BENCH_AT_MOST, 1, "x", 2, false, read_wal_steady},
};
const size_t report_ntargets =
    sizeof(report_targets) / sizeof(report_targets[0]);

/* ---- the readings shown as information ------------------------------ */

static report_reading read_lookup_loads(const report_data *d)
{
    const json_value *r;

    if (d->lookup == NULL)
        return not_measured;
    r = &d->lookup->doc.root;
    /* A smaller database than scale 10's is largely cached. */
    if (!(json_num(r, "accounts") >= 1000000))
        return not_measured;
    return value_of(stat_median(r, "lookup_ns") /
                    stat_median(r, "random_load_ns"));
}

static report_reading read_select_cpu_ns(const report_data *d)
{
    return d->one != NULL ? value_of(d->one->cpu) : not_measured;
}

static report_reading read_select_pinned_ns(const report_data *d)
{
    return d->fastest != NULL ? value_of(json_num(d->fastest->v, "ns_per_txn"))
                              : not_measured;
}

static report_reading read_select_loads(const report_data *d)
{
    if (d->one == NULL || d->lookup == NULL ||
        !(json_num(&d->lookup->doc.root, "accounts") >= 1000000))
        return not_measured;
    return value_of(d->one->ns /
                    stat_median(&d->lookup->doc.root, "random_load_ns"));
}

/* The two clients ran one on each of the main step's first two CPUs,
 * which need not be equally fast: against one client's mean over those
 * CPUs, as measured pinned to each. */
static report_reading read_2_over_cpu_mean(const report_data *d)
{
    const json_value *c;
    const cpu_row *on[2] = {NULL, NULL};
    double mean;

    if (d->two == NULL)
        return not_measured;
    c = json_get(&d->two->doc->root, "cpus");
    for (size_t i = 0; i < 2 && c != NULL && c->n >= 2; i++)
        for (size_t j = 0; j < d->ncpu; j++)
            if (json_at(c, i) != NULL && d->cpu[j].cpu == json_at(c, i)->num)
                on[i] = &d->cpu[j];
    if (on[0] == NULL || on[1] == NULL)
        return not_measured;
    mean = (json_num(on[0]->v, "tps") + json_num(on[1]->v, "tps")) / 2;
    return mean > 0 ? value_of(d->two->tps / mean) : not_measured;
}

/* What an otherwise idle machine would give, if each client had a CPU to
 * itself up to the machine's count: throughput goes as CPUs over CPU
 * time per transaction. */
static report_reading read_2_over_1_cpu(const report_data *d)
{
    return d->one != NULL && d->two != NULL
               ? value_of(2 * d->one->cpu / d->two->cpu)
               : not_measured;
}

static report_reading read_64_over_2_cpu(const report_data *d)
{
    return d->two != NULL && d->s64 != NULL
               ? value_of(d->two->cpu / d->s64->cpu)
               : not_measured;
}

static report_reading read_padded_64(const report_data *d)
{
    return interval_of(paired(d->s64, d->k64));
}

static report_reading read_padded_lowest(const report_data *d)
{
    double worst = NAN;

    for (size_t i = 0; i < d->layout.n; i++)
        if (!(d->layout.r[i].r >= worst))
            worst = d->layout.r[i].r;
    return d->layout.n > 0 ? value_of(worst) : not_measured;
}

static report_reading read_bloat_returned(const report_data *d)
{
    return d->bloat_returned != NULL
               ? interval_of(bloat_ratio(&d->bloat_returned->doc.root))
               : not_measured;
}

static report_reading read_catcache_blocks(const report_data *d)
{
    return value_of(catcache_over_target(d, "block_bytes", "pruning_on"));
}

static report_reading read_rss_off(const report_data *d)
{
    return value_of(catcache_over_target(d, "rss_growth", "pruning_off"));
}

static report_reading read_pg_tpcb_simple(const report_data *d)
{
    return value_of(compare_extreme(d, "tpcb-like", "simple", "tps", false));
}

static report_reading read_pg_tpcb_prepared(const report_data *d)
{
    return value_of(
        compare_extreme(d, "tpcb-like", "prepared", "tps", false));
}

static report_reading read_serve_64_simple(const report_data *d)
{
    return value_of(compare_scaling(d, "keel", "simple", 64, 2));
}

static report_reading read_serve_64_prepared(const report_data *d)
{
    return value_of(compare_scaling(d, "keel", "prepared", 64, 2));
}

static report_reading read_pg_64_over_2(const report_data *d)
{
    return value_of(
        lower_of(compare_scaling(d, "postgres", "simple", 64, 2),
                 compare_scaling(d, "postgres", "prepared", 64, 2)));
}

/* The round-trip floor measured beside the comparison: what no server
 * that sleeps in recv() between queries can beat on this machine. */
static report_reading read_floor_tps_simple(const report_data *d)
{
    return value_of(compare_floor_bound(d, "simple", false));
}

static report_reading read_floor_tps_prepared(const report_data *d)
{
    return value_of(compare_floor_bound(d, "prepared", false));
}

static report_reading read_floor_cpu_simple(const report_data *d)
{
    return value_of(compare_floor_bound(d, "simple", true));
}

static report_reading read_floor_cpu_prepared(const report_data *d)
{
    return value_of(compare_floor_bound(d, "prepared", true));
}

static report_reading read_wal_next_bytes(const report_data *d)
{
    return value_of(compare_wal_ratio(d, 1, "bytes_per_txn"));
}

static report_reading read_wal_records(const report_data *d)
{
    return value_of(compare_wal_ratio(d, 0, "records_per_txn"));
}

static report_reading read_wal_fpi(const report_data *d)
{
    return value_of(compare_wal_ratio(d, 0, "fpi_per_txn"));
}

static report_reading read_wal_first_without(const report_data *d)
{
    return value_of(compare_wal_ratio(d, 0, "bytes_without_fpi_per_txn"));
}

const report_info report_infos[] = {
    {"lookup_ns",
     "the same in random loads from memory (`random_load_ns`, measured "
     "alongside)",
     TARGET_LOAD_NS, "", 2, false, read_lookup_loads},
    {"select_1_client_ns", "the same, CPU time only", 0, " ns", 0, false,
     read_select_cpu_ns},
    {"select_1_client_ns",
     "the same, pinned to the fastest CPU (one client on each CPU, below)", 0,
     " ns", 0, false, read_select_pinned_ns},
    {"select_1_client_ns",
     "the same in random loads from memory, as the lookup measured them",
     TARGET_LOAD_NS, "", 2, false, read_select_loads},
    {"select_2_over_1",
     "the same against one client's mean over the two CPUs they ran on (one "
     "client on each CPU, below)",
     0, "x", 2, false, read_2_over_cpu_mean},
    {"select_2_over_1", "the same from CPU time (idle-machine estimate)", 0,
     "x", 2, false, read_2_over_1_cpu},
    {"select_64_over_2", "the same from CPU time (idle-machine estimate)", 0,
     "x", 2, false, read_64_over_2_cpu},
    {"padded_over_packed", "the same at 64 clients", 0, "x", 3, true,
     read_padded_64},
    {"padded_over_packed",
     "the same, the lowest median over every client count (each count's "
     "interval below)",
     0, "x", 3, false, read_padded_lowest},
    {"bloat_throughput",
     "the same with memory returned after every run (`--memory returned`)", 0,
     "x", 3, true, read_bloat_returned},
    {"catcache_blocks", "the same in `keel bench catcache`'s pruned bloat run",
     0, "x", 3, false, read_catcache_blocks},
    {"catcache_rss", "the same over its run with pruning off", 0, "x", 3, false,
     read_rss_off},
    {"pgbench_select_simple",
     "the most any server could read on this machine: the round-trip "
     "floor's round trips a second over PostgreSQL 15's tps, the lowest "
     "over the client counts",
     0, "x", 2, false, read_floor_tps_simple},
    {"pgbench_select_prepared",
     "the most any server could read on this machine: the round-trip "
     "floor's round trips a second over PostgreSQL 15's tps, the lowest "
     "over the client counts",
     0, "x", 2, false, read_floor_tps_prepared},
    {"pgbench_select_cpu_simple",
     "the least any server could read on this machine: the round-trip "
     "floor's answering CPU per round trip over PostgreSQL 15's per "
     "transaction, the highest over the client counts",
     0, "x", 2, false, read_floor_cpu_simple},
    {"pgbench_select_cpu_prepared",
     "the least any server could read on this machine: the round-trip "
     "floor's answering CPU per round trip over PostgreSQL 15's per "
     "transaction, the highest over the client counts",
     0, "x", 2, false, read_floor_cpu_prepared},
    {"pgbench_tpcb", "the same, simple protocol only", 0, "x", 2, false,
     read_pg_tpcb_simple},
    {"pgbench_tpcb", "the same, prepared protocol only", 0, "x", 2, false,
     read_pg_tpcb_prepared},
    {"pgbench_serve_64_over_2", "the same, simple protocol", 0, "x", 2, false,
     read_serve_64_simple},
    {"pgbench_serve_64_over_2", "the same, prepared protocol", 0, "x", 2,
     false, read_serve_64_prepared},
    {"pgbench_serve_64_over_2",
     "PostgreSQL 15's 64 clients over 2 in the same runs, the lower of the "
     "two protocols",
     0, "x", 2, false, read_pg_64_over_2},
    {"wal_volume_checkpoint",
     "the same over the next as many transactions (images included)", 0, "x",
     2, false, read_wal_next_bytes},
    {"wal_volume_checkpoint",
     "log records per transaction after the CHECKPOINT, keel's over "
     "PostgreSQL's",
     0, "x", 2, false, read_wal_records},
    {"wal_volume_checkpoint",
     "page images per transaction after the CHECKPOINT, keel's over "
     "PostgreSQL's",
     0, "x", 2, false, read_wal_fpi},
    {"wal_volume_steady",
     "the same over the transactions just after the CHECKPOINT", 0, "x", 2,
     false, read_wal_first_without},
};
const size_t report_ninfos = sizeof(report_infos) / sizeof(report_infos[0]);

/* ---- judging --------------------------------------------------------- */

/* x as printed to `decimals` places (and read back, so that a half-way
 * case rounds as printf() rounds it): a verdict follows the figures the
 * report shows. */
static double printed(double x, int decimals)
{
    char buf[64];

    if (!isfinite(x))
        return x;
    snprintf(buf, sizeof(buf), "%.*f", decimals, x);
    return strtod(buf, NULL);
}

void report_judge(const report_data *d, report_judged *out)
{
    for (size_t i = 0; i < report_ntargets; i++) {
        const report_target *t = &report_targets[i];
        report_judged *j = &out[i];
        report_reading r = t->read(d);

        j->t = t;
        j->r.v = printed(r.v, t->decimals);
        j->r.lo = printed(r.lo, t->decimals);
        j->r.hi = printed(r.hi, t->decimals);
        j->r.rounds = r.rounds;
        j->measured = isfinite(j->r.v);
        j->v = t->interval
                   ? bench_verdict_interval(j->r.lo, j->r.hi, j->r.rounds,
                                            t->dir, t->limit)
                   : bench_verdict_value(j->r.v, t->dir, t->limit);
    }
}

const report_judged *report_find(const report_judged *j, const char *id)
{
    for (size_t i = 0; i < report_ntargets; i++)
        if (strcmp(j[i].t->id, id) == 0)
            return &j[i];
    return NULL;
}

void report_limit_text(char *buf, size_t len, const report_target *t,
                       double per)
{
    const char *op = t->dir == BENCH_AT_LEAST ? ">=" : "<=";

    if (t->dir == BENCH_NEAR_ONE)
        snprintf(buf, len, "within %g-%g%s", 1 - t->limit, 1 + t->limit,
                 t->unit);
    else if (per > 0)
        snprintf(buf, len, "%s %.2f (%g%s over %g ns)", op, t->limit / per,
                 t->limit, t->unit, per);
    else
        snprintf(buf, len, "%s %g%s", op, t->limit, t->unit);
}

const char *report_verdict_text(const report_judged *j)
{
    return j->measured ? bench_verdict_text(j->v) : "not measured";
}

void report_verdict_quote(char *buf, size_t len, const report_judged *j)
{
    char limit[96];

    report_limit_text(limit, sizeof(limit), j->t, 0);
    snprintf(buf, len, "target `%s` (%s): %s", j->t->id, limit,
             report_verdict_text(j));
}
