/*
 * bench_compare.c: `keel bench compare`: the real pgbench against `keel
 * serve` and against a private PostgreSQL 15 cluster, over each one's
 * Unix socket, side by side.
 *
 * Both servers start in one temporary directory (pgserver.h): keel serve
 * (this binary) on a new database, PostgreSQL on a cluster initdb makes
 * with its defaults.  Each gets `pgbench -i -s N`; then, for each script
 * (select-only, then the default tpcb-like), protocol mode (simple,
 * prepared) and client count, pgbench runs once against each server, the
 * two runs back to back and in alternating order (keel first, then
 * PostgreSQL first at the next configuration, ...), so that what the
 * host does to one configuration it does to both.  Every run is `-n`:
 * the tables were vacuumed by the initialization, and the history table
 * keeps every run's rows, so that after the tpcb-like runs each server's
 * balances must add up to its history (read with psql).
 *
 * Before the pgbench runs, with both servers idle, it measures the
 * machine's round-trip floor at the same client counts (wire_floor.h):
 * what a client and a server that do no work reach over a Unix socket,
 * which bounds what either server can read here.  Its JSON goes beside
 * the runs' ("floor"); a failure to measure it leaves it null and the
 * comparison goes on.
 *
 * A run's server CPU time is read from /proc before and after it, once
 * the run's connections have ended (pgserver_settle()), and divided by
 * the transactions pgbench counted.  Without pgbench, psql or PostgreSQL
 * 15 the comparison is skipped: the JSON says why and the command exits 0.
 * A failure on the way (a server that does not start, a pgbench run that
 * fails) is written to the JSON the same way, and the command exits 1.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "bench_db.h"
#include "child.h"
#include "json.h"
#include "pgserver.h"
#include "port/clock.h"
#include "wire_floor.h"

#define WHO            "keel bench compare"
#define MAX_COUNTS     8
#define MAX_RUNS       (2 * 2 * MAX_COUNTS)
#define DEFAULT_PG_BIN "/usr/lib/postgresql/15/bin"
#define SETTLE_MS      10000
/* The round-trip floor's runs per client count. */
#define FLOOR_RUNS       3
#define FLOOR_RUNS_QUICK 2

static const char *const scripts[2] = {"select-only", "tpcb-like"};
static const char *const modes[2] = {"simple", "prepared"};

typedef struct compare_opts {
    bool quick;
    const char *json, *pg_bin;
    uint32_t scale;
    uint32_t clients[MAX_COUNTS];
    int nclients;
    uint32_t seconds;      /* -T per run; 0: by transactions */
    uint32_t select_txns;  /* -t per client, select-only */
    uint32_t tpcb_txns;    /* -t per client, tpcb-like */
    double floor_seconds;  /* per run of the round-trip floor; 0: none */
    bool floor_given;
    uint32_t wal_txns;     /* per log volume window; 0: none */
    bool wal_txns_set;
} compare_opts;

/* One server's side of a run. */
typedef struct side {
    double tps, cpu_s, cpu_us;
    uint64_t txns, failed;
} side;

typedef struct compare_run {
    int script, mode;
    uint32_t clients, threads;
    bool keel_first;
    side s[2]; /* keel, postgres */
} compare_run;

/* The log's counters at one moment (wal_read()): keel_stat_wal's, or
 * PostgreSQL's pg_stat_wal (no image bytes) and its insert LSN. */
typedef struct wal_counts {
    double records, fpi, bytes, fpi_bytes;
    char lsn[32];
} wal_counts;

/* One window of the log volume measurement, on one server. */
typedef struct wal_window {
    bool measured;
    double seconds; /* pgbench's run */
    wal_counts d;   /* the counters' differences over the window */
    /* PostgreSQL: pg_waldump --stats' totals over the window's LSNs:
     * records, their bytes (records.bytes) and image bytes. */
    bool dumped;
    wal_counts dump;
} wal_window;

#define WAL_WINDOWS 2

/* The log volume per transaction on both servers (wal_measure()). */
typedef struct wal_volume {
    uint32_t txns; /* per window */
    wal_window w[2][WAL_WINDOWS];
    double seconds; /* the whole measurement, both servers */
    char check[512]; /* "" or what did not add up */
} wal_volume;

/* The four totals after the tpcb-like runs. */
typedef struct balances {
    bool read;
    long long accounts, tellers, branches, history;
} balances;

typedef struct compare_state {
    compare_opts o;
    char pgbench[4300], psql[4300], dir[4096], out[4300];
    char pgbench_version[256], pg_version[128];
    char settings[16][96];
    int nsettings;
    pgserver srv[2];
    double init_s[2];
    compare_run runs[MAX_RUNS];
    int nruns;
    balances bal[2];
    wal_volume wal;
    char skipped[2048];
    /* The round-trip floor at each client count (nfloor of them, 0 when
     * it was not measured; floor_error says why, if it failed). */
    wire_floor_point floor[MAX_COUNTS];
    int nfloor;
    char floor_error[512];
} compare_state;

static void usage(void)
{
    fprintf(stderr,
            "usage: keel bench compare [--quick] [--scale N] "
            "[--clients N,N,...]\n"
            "           [--seconds S | --transactions N,M] "
            "[--wal-transactions N]\n"
            "           [--pg-bin DIR] [--json FILE] [--floor-seconds S]\n");
}

static int compare_option(const bench_args *a, void *ctx)
{
    compare_opts *o = ctx;
    uint32_t t[2];

    if (strcmp(a->name, "--json") == 0)
        return bench_args_out_file(a, &o->json);
    if (strcmp(a->name, "--pg-bin") == 0) {
        o->pg_bin = a->value;
        return 0;
    }
    if (strcmp(a->name, "--scale") == 0)
        return bench_args_u32(a, 1, 1000, &o->scale);
    if (strcmp(a->name, "--floor-seconds") == 0) {
        o->floor_given = true;
        return bench_args_double(a, 0, 10, &o->floor_seconds);
    }
    if (strcmp(a->name, "--seconds") == 0)
        return bench_args_u32(a, 1, 600, &o->seconds);
    if (strcmp(a->name, "--wal-transactions") == 0) {
        o->wal_txns_set = true;
        return bench_args_u32(a, 0, 1000000, &o->wal_txns);
    }
    if (strcmp(a->name, "--clients") == 0) {
        o->nclients = bench_args_u32_list(a, 1, 90, o->clients, MAX_COUNTS);
        return o->nclients > 0 ? 0 : -1;
    }
    if (strcmp(a->name, "--transactions") == 0) {
        if (bench_args_u32_list(a, 1, 10000000, t, 2) != 2) {
            fprintf(stderr,
                    "%s: option --transactions takes two numbers: per "
                    "client, select-only and tpcb-like\n",
                    a->who);
            return -1;
        }
        o->select_txns = t[0];
        o->tpcb_txns = t[1];
        return 0;
    }
    return bench_args_unknown(a);
}

static int parse_opts(int argc, char **argv, compare_opts *o)
{
    memset(o, 0, sizeof(*o));
    if (bench_args_parse(WHO, argc, argv, &o->quick, NULL, compare_option,
                         o) != 0)
        return -1;
    if (o->seconds != 0 && o->select_txns != 0) {
        fprintf(stderr, WHO ": options --seconds and --transactions exclude "
                            "each other\n");
        return -1;
    }
    if (o->pg_bin == NULL)
        o->pg_bin = DEFAULT_PG_BIN;
    if (o->scale == 0)
        o->scale = o->quick ? 1 : 10;
    if (!o->floor_given)
        o->floor_seconds = o->quick ? 0.1 : 0.25;
    if (o->nclients == 0) {
        static const uint32_t full[] = {1, 2, 8, 32, 64};
        static const uint32_t quick[] = {1, 2};
        o->nclients = o->quick ? 2 : 5;
        memcpy(o->clients, o->quick ? quick : full,
               (size_t)o->nclients * sizeof(uint32_t));
    }
    if (!o->wal_txns_set)
        o->wal_txns = o->quick ? 200 : 3000;
    if (o->seconds == 0 && o->select_txns == 0) {
        if (o->quick) {
            o->select_txns = 2000;
            o->tpcb_txns = 50;
        } else {
            o->seconds = 3;
        }
    }
    return 0;
}

/* ---- running the programs ------------------------------------------------ */

/* PostgreSQL's program `name`: in the bin folder, else in /usr/bin (the
 * wrappers of Debian's postgresql-common).  0, or -1. */
static int find_program(const compare_opts *o, const char *name, char *path,
                        size_t len)
{
    snprintf(path, len, "%s/%s", o->pg_bin, name);
    if (access(path, X_OK) == 0)
        return 0;
    snprintf(path, len, "/usr/bin/%s", name);
    return access(path, X_OK) == 0 ? 0 : -1;
}

/* Runs co's program (co->out must be st->out), then reads its output into
 * buf (len bytes, the end kept if longer).  0, or -1 with the reason in
 * err. */
static int run_capture_as(compare_state *st, const child_opts *co,
                          int timeout_ms, char *buf, size_t len, char *err,
                          size_t errlen)
{
    char why[512];
    int rc = child_run(co, timeout_ms, why, sizeof(why));
    FILE *f = fopen(st->out, "r");
    size_t n = 0;

    buf[0] = '\0';
    if (f != NULL) {
        long size;
        if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > (long)len - 1)
            fseek(f, size - (long)len + 1, SEEK_SET);
        else
            fseek(f, 0, SEEK_SET);
        n = fread(buf, 1, len - 1, f);
        fclose(f);
        buf[n] = '\0';
    }
    if (rc != 0) {
        const char *tail = n > 300 ? buf + n - 300 : buf;
        snprintf(err, errlen, "%s (output: %s)", why, tail);
        return -1;
    }
    return 0;
}

/* run_capture_as() as this process's user. */
static int run_capture(compare_state *st, const char *const *argv,
                       int timeout_ms, char *buf, size_t len, char *err,
                       size_t errlen)
{
    child_opts co = {.argv = argv, .out = st->out, .stop_signal = SIGKILL};

    return run_capture_as(st, &co, timeout_ms, buf, len, err, errlen);
}

/* The number after `key` in pgbench's output, or NaN. */
static double output_num(const char *out, const char *key)
{
    const char *p = strstr(out, key);

    return p != NULL ? strtod(p + strlen(key), NULL) : NAN;
}

/* psql -c `sql` against s: its unaligned output, into buf.  0, or -1. */
static int psql(compare_state *st, const pgserver *s, const char *sql,
                char *buf, size_t len, char *err, size_t errlen)
{
    char port[16];
    const char *argv[] = {st->psql, "-X",    "-At",   "-h", s->sock,
                          "-p",     port,    "-U",    s->user, "-d",
                          s->db,    "-c",    sql,     NULL};

    snprintf(port, sizeof(port), "%u", s->port);
    if (run_capture(st, argv, 60000, buf, len, err, errlen) != 0)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* pgbench -i -s N against server i. */
static int pgbench_init(compare_state *st, int i, char *err, size_t len)
{
    const pgserver *s = &st->srv[i];
    char port[16], scale[16], out[8192];
    const char *argv[] = {st->pgbench, "-i", "-s", scale,  "-h",
                          s->sock,     "-p", port, "-U",   s->user,
                          s->db,       NULL};
    uint64_t t0 = clock_now_ns();

    snprintf(port, sizeof(port), "%u", s->port);
    snprintf(scale, sizeof(scale), "%u", st->o.scale);
    fprintf(stderr, "pgbench -i -s %u against %s\n", st->o.scale, s->name);
    if (run_capture(st, argv, 600000, out, sizeof(out), err, len) != 0)
        return -1;
    st->init_s[i] = (double)(clock_now_ns() - t0) / 1e9;
    return 0;
}

/* One pgbench run against server i into *sd, its CPU time read around
 * it.  0, or -1 with the reason. */
static int pgbench_run(compare_state *st, const compare_run *r, int i, side *sd,
                       char *err, size_t len)
{
    const pgserver *s = &st->srv[i];
    char port[16], clients[16], threads[16], amount[16], out[8192];
    const char *argv[24];
    int n = 0;
    double cpu0, cpu1;
    uint32_t txns = r->script == 0 ? st->o.select_txns : st->o.tpcb_txns;

    snprintf(port, sizeof(port), "%u", s->port);
    snprintf(clients, sizeof(clients), "%u", r->clients);
    snprintf(threads, sizeof(threads), "%u", r->threads);
    snprintf(amount, sizeof(amount), "%u", st->o.seconds ? st->o.seconds : txns);
    argv[n++] = st->pgbench;
    argv[n++] = "-n";
    if (r->script == 0)
        argv[n++] = "-S";
    argv[n++] = "-M";
    argv[n++] = modes[r->mode];
    argv[n++] = "-c";
    argv[n++] = clients;
    argv[n++] = "-j";
    argv[n++] = threads;
    argv[n++] = st->o.seconds ? "-T" : "-t";
    argv[n++] = amount;
    /* Both servers run read committed, where pgbench's scripts meet no
     * serialization failure; a deadlock (40P01) would be retried. */
    argv[n++] = "--max-tries=1000";
    argv[n++] = "-h";
    argv[n++] = s->sock;
    argv[n++] = "-p";
    argv[n++] = port;
    argv[n++] = "-U";
    argv[n++] = s->user;
    argv[n++] = s->db;
    argv[n] = NULL;

    if (pgserver_settle(s, SETTLE_MS) != 0)
        fprintf(stderr, WHO ": %s: connections still open after %d s\n",
                s->name, SETTLE_MS / 1000);
    if (pgserver_cpu_ns(s, &cpu0) != 0) {
        snprintf(err, len, "%s: cannot read its CPU time", s->name);
        return -1;
    }
    if (run_capture(st, argv, (int)(st->o.seconds + 300) * 1000, out,
                    sizeof(out), err, len) != 0)
        return -1;
    if (pgserver_settle(s, SETTLE_MS) != 0)
        fprintf(stderr, WHO ": %s: connections still open after %d s\n",
                s->name, SETTLE_MS / 1000);
    if (pgserver_cpu_ns(s, &cpu1) != 0) {
        snprintf(err, len, "%s: cannot read its CPU time", s->name);
        return -1;
    }
    sd->tps = output_num(out, "\ntps = ");
    sd->txns =
        (uint64_t)output_num(out, "number of transactions actually processed: ");
    sd->failed = strstr(out, "number of failed transactions: ") != NULL
                     ? (uint64_t)output_num(out,
                                            "number of failed transactions: ")
                     : 0;
    if (!(sd->tps > 0) || sd->txns == 0) {
        snprintf(err, len, "pgbench against %s: no throughput in: %.400s",
                 s->name, out);
        return -1;
    }
    sd->cpu_s = (cpu1 - cpu0) / 1e9;
    sd->cpu_us = (cpu1 - cpu0) / 1e3 / (double)sd->txns;
    return 0;
}

/* The totals of the balance columns and the history's deltas. */
static int balances_read(compare_state *st, int i, char *err, size_t len)
{
    static const char *const q[4] = {
        "SELECT sum(abalance) FROM pgbench_accounts",
        "SELECT sum(tbalance) FROM pgbench_tellers",
        "SELECT sum(bbalance) FROM pgbench_branches",
        "SELECT sum(delta) FROM pgbench_history"};
    long long v[4];
    char buf[256];

    for (int k = 0; k < 4; k++) {
        if (psql(st, &st->srv[i], q[k], buf, sizeof(buf), err, len) != 0)
            return -1;
        v[k] = strtoll(buf, NULL, 10); /* an empty sum is NULL: 0 */
    }
    st->bal[i] = (balances){true, v[0], v[1], v[2], v[3]};
    return 0;
}

static bool balances_add_up(const balances *b)
{
    return b->read && b->accounts == b->tellers &&
           b->tellers == b->branches && b->branches == b->history;
}

/* PostgreSQL's settings that a reader of the comparison needs, as
 * name=value. */
static void postgres_settings(compare_state *st)
{
    char buf[4096], err[512];
    const char *sql =
        "SELECT string_agg(name || '=' || current_setting(name), ';' ORDER BY "
        "name) FROM pg_settings WHERE name IN ('shared_buffers', "
        "'max_connections', 'fsync', 'synchronous_commit', 'wal_level', "
        "'wal_sync_method', 'full_page_writes', 'checkpoint_timeout', "
        "'max_wal_size', 'autovacuum', 'work_mem', 'huge_pages', "
        "'jit', 'effective_io_concurrency')";
    char *p, *save = NULL;

    if (psql(st, &st->srv[1], "SHOW server_version", st->pg_version,
             sizeof(st->pg_version), err, sizeof(err)) != 0)
        snprintf(st->pg_version, sizeof(st->pg_version), "?");
    if (psql(st, &st->srv[1], sql, buf, sizeof(buf), err, sizeof(err)) != 0)
        return;
    for (p = strtok_r(buf, ";", &save); p != NULL && st->nsettings < 16;
         p = strtok_r(NULL, ";", &save))
        snprintf(st->settings[st->nsettings++], sizeof(st->settings[0]), "%s",
                 p);
}

/* ---- the log's volume per transaction ------------------------------------ */

/*
 * Both servers' log volume over the same tpcb-like transactions, measured
 * the same way once `pgbench -i` has loaded them (wal_measure()): a
 * CHECKPOINT, the log's counters (keel_stat_wal, or PostgreSQL's
 * pg_stat_wal with pg_current_wal_insert_lsn()), `pgbench -n -t N -c 1
 * -M prepared`, the counters again (window 0, from the checkpoint: each
 * page's first change after it is logged whole), then N more
 * transactions and the counters again (window 1, further from it).
 *
 * PostgreSQL's backends add their counts to pg_stat_wal when they exit,
 * so the counters are read once pgbench's connection has gone
 * (pgserver_settle()).  pg_stat_wal has no image bytes: they come from
 * `pg_waldump --stats` over each window's LSNs (run as the cluster's
 * owner), whose record count and record bytes check pg_stat_wal's
 * (wal_check()).  keel's counters come from its own log, image bytes
 * included.
 */

static const char *const wal_window_names[WAL_WINDOWS] = {"after_checkpoint",
                                                          "next"};

/* The log's counters of server i now, into *c.  0, or -1. */
static int wal_read(compare_state *st, int i, wal_counts *c, char *err,
                    size_t len)
{
    const char *sql =
        st->srv[i].kind == PGSERVER_KEEL
            ? "SELECT wal_records, wal_fpi, wal_bytes, fpi_bytes, insert_lsn "
              "FROM keel_stat_wal"
            : "SELECT wal_records, wal_fpi, wal_bytes, 0, "
              "pg_current_wal_insert_lsn() FROM pg_stat_wal";
    char buf[512];

    if (pgserver_settle(&st->srv[i], SETTLE_MS) != 0)
        fprintf(stderr, WHO ": %s: connections still open after %d s\n",
                st->srv[i].name, SETTLE_MS / 1000);
    if (psql(st, &st->srv[i], sql, buf, sizeof(buf), err, len) != 0)
        return -1;
    memset(c, 0, sizeof(*c));
    if (sscanf(buf, "%lf|%lf|%lf|%lf|%31s", &c->records, &c->fpi, &c->bytes,
               &c->fpi_bytes, c->lsn) != 5) {
        snprintf(err, len, "%s: cannot read the log's counters from '%.200s'",
                 st->srv[i].name, buf);
        return -1;
    }
    return 0;
}

/* `pgbench -n -t n -c 1 -M prepared` (tpcb-like) against server i; its
 * wall time into *secs.  0, or -1. */
static int wal_pgbench(compare_state *st, int i, uint32_t n, double *secs,
                       char *err, size_t len)
{
    const pgserver *s = &st->srv[i];
    char port[16], amount[16], out[8192];
    const char *argv[] = {st->pgbench, "-n",  "-M",    "prepared", "-c",
                          "1",         "-t",  amount,  "-h",       s->sock,
                          "-p",        port,  "-U",    s->user,    s->db,
                          NULL};
    uint64_t t0 = clock_now_ns();

    snprintf(port, sizeof(port), "%u", s->port);
    snprintf(amount, sizeof(amount), "%u", n);
    if (run_capture(st, argv, 600000, out, sizeof(out), err, len) != 0)
        return -1;
    if (output_num(out, "number of transactions actually processed: ") !=
        (double)n) {
        snprintf(err, len, "pgbench against %s did not run %u transactions: "
                           "%.300s",
                 s->name, n, out);
        return -1;
    }
    *secs = (double)(clock_now_ns() - t0) / 1e9;
    return 0;
}

/* Waits (5 s at most) until PostgreSQL's log is flushed past lsn, so that
 * pg_waldump finds every record below it. */
static void wal_wait_flushed(compare_state *st, const char *lsn)
{
    char sql[160], buf[64], err[512];

    snprintf(sql, sizeof(sql),
             "SELECT pg_current_wal_flush_lsn() >= '%s'::pg_lsn", lsn);
    for (int k = 0; k < 50; k++) {
        if (psql(st, &st->srv[1], sql, buf, sizeof(buf), err, sizeof(err)) ==
                0 &&
            strcmp(buf, "t") == 0)
            return;
        usleep(100000);
    }
}

/* pg_waldump --stats over [from, to) of PostgreSQL's log: its Total
 * line's records, record bytes and image bytes into *c.  0, or -1. */
static int wal_dump(compare_state *st, const char *from, const char *to,
                    wal_counts *c, char *err, size_t len)
{
    const pgserver *s = &st->srv[1];
    char prog[4300], waldir[4300], out[16384];
    const char *argv[] = {prog, "--stats", "-p", waldir, "-s",
                          from, "-e",      to,   NULL};
    child_opts co = {.argv = argv,
                     .out = st->out,
                     .as_user = s->as_user,
                     .uid = s->uid,
                     .gid = s->gid,
                     .stop_signal = SIGKILL};
    const char *p;
    char *end;

    if (find_program(&st->o, "pg_waldump", prog, sizeof(prog)) != 0) {
        snprintf(err, len, "pg_waldump is not installed");
        return -1;
    }
    snprintf(waldir, sizeof(waldir), "%s/pg_wal", s->data);
    wal_wait_flushed(st, to);
    /* A read that meets the end of what is written says so and exits 1,
     * after its totals: those are what was read. */
    if (run_capture_as(st, &co, 120000, out, sizeof(out), err, len) != 0 &&
        strstr(out, "\nTotal") == NULL)
        return -1;
    p = strstr(out, "\nTotal");
    if (p == NULL) {
        snprintf(err, len, "no totals from pg_waldump: %.300s", out);
        return -1;
    }
    /* "Total  N  record-bytes [x%]  fpi-bytes [y%]  combined [100%]" */
    memset(c, 0, sizeof(*c));
    c->records = strtod(p + 6, &end);
    c->bytes = strtod(end, &end);
    p = strchr(end, ']');
    c->fpi_bytes = p != NULL ? strtod(p + 1, &end) : NAN;
    p = p != NULL ? strchr(end, ']') : NULL;
    if (p == NULL || !(c->records > 0)) {
        snprintf(err, len, "cannot read pg_waldump's totals: %.200s",
                 strstr(out, "\nTotal") + 1);
        return -1;
    }
    /* Combined: records and images. */
    c->bytes = strtod(p + 1, NULL);
    return 0;
}

/* Whether a and b agree within 5% of b. */
static bool wal_close_to(double a, double b)
{
    return fabs(a - b) <= 0.05 * b;
}

/* Checks that the counters moved as a tpcb-like transaction moves them
 * (3 updates, an insert, a commit: at least 5 records each), and that
 * PostgreSQL's pg_stat_wal agrees with its log; what does not goes to
 * st->wal.check. */
static void wal_check(compare_state *st)
{
    wal_volume *v = &st->wal;
    size_t n = 0;

    for (int i = 0; i < 2; i++)
        for (int k = 0; k < WAL_WINDOWS; k++) {
            const wal_window *w = &v->w[i][k];
            if (!w->measured)
                continue;
            if (w->d.records < 5.0 * v->txns && n < sizeof(v->check))
                n += (size_t)snprintf(v->check + n, sizeof(v->check) - n,
                                      "%s%s window %d: %.0f records for %u "
                                      "transactions",
                                      n ? "; " : "", st->srv[i].name, k,
                                      w->d.records, v->txns);
            if (w->dumped && n < sizeof(v->check) &&
                (!wal_close_to(w->d.records, w->dump.records) ||
                 !wal_close_to(w->d.bytes, w->dump.bytes)))
                n += (size_t)snprintf(
                    v->check + n, sizeof(v->check) - n,
                    "%spostgres window %d: pg_stat_wal counts %.0f records "
                    "of %.0f bytes, pg_waldump %.0f of %.0f",
                    n ? "; " : "", k, w->d.records, w->d.bytes,
                    w->dump.records, w->dump.bytes);
        }
}

/* The log volume measurement (above), after both servers' pgbench -i.
 * 0, or -1 with the reason in st->skipped. */
static int wal_measure(compare_state *st)
{
    wal_volume *v = &st->wal;
    uint64_t t0 = clock_now_ns();
    char err[1024], buf[256];

    v->txns = st->o.wal_txns;
    if (v->txns == 0)
        return 0;
    for (int i = 0; i < 2; i++) {
        wal_counts c[WAL_WINDOWS + 1];
        fprintf(stderr, "log volume against %s: CHECKPOINT, then %d x %u "
                        "tpcb-like transactions\n",
                st->srv[i].name, WAL_WINDOWS, v->txns);
        if (psql(st, &st->srv[i], "CHECKPOINT", buf, sizeof(buf), err,
                 sizeof(err)) != 0 ||
            wal_read(st, i, &c[0], err, sizeof(err)) != 0)
            goto fail;
        for (int k = 0; k < WAL_WINDOWS; k++) {
            wal_window *w = &v->w[i][k];
            if (wal_pgbench(st, i, v->txns, &w->seconds, err, sizeof(err)) !=
                    0 ||
                wal_read(st, i, &c[k + 1], err, sizeof(err)) != 0)
                goto fail;
            w->d.records = c[k + 1].records - c[k].records;
            w->d.fpi = c[k + 1].fpi - c[k].fpi;
            w->d.bytes = c[k + 1].bytes - c[k].bytes;
            w->d.fpi_bytes = c[k + 1].fpi_bytes - c[k].fpi_bytes;
            w->measured = true;
        }
        for (int k = 0; i == 1 && k < WAL_WINDOWS; k++) {
            wal_window *w = &v->w[i][k];
            if (wal_dump(st, c[k].lsn, c[k + 1].lsn, &w->dump, err,
                         sizeof(err)) != 0) {
                snprintf(v->check, sizeof(v->check), "pg_waldump: %.480s", err);
                break;
            }
            w->dumped = true;
            w->d.fpi_bytes = w->dump.fpi_bytes;
        }
    }
    v->seconds = (double)(clock_now_ns() - t0) / 1e9;
    if (v->check[0] == '\0')
        wal_check(st);
    if (v->check[0] != '\0')
        fprintf(stderr, WHO ": log volume: %s\n", v->check);
    return 0;
fail:
    snprintf(st->skipped, sizeof(st->skipped), "log volume: %s", err);
    return -1;
}

/* Window w's figure per transaction: records, fpi, bytes, or bytes less
 * the images' (NaN where the image bytes are unknown). */
static double wal_per_txn(const wal_volume *v, const wal_window *w, int what)
{
    double x = what == 0   ? w->d.records
               : what == 1 ? w->d.fpi
               : what == 2 ? w->d.bytes
               : w->d.bytes - w->d.fpi_bytes;

    return w->measured && v->txns > 0 ? x / v->txns : NAN;
}

/* ---- the comparison ------------------------------------------------------ */

/* Checks the programs and starts both servers; 0, 1 when skipped (the
 * reason in st->skipped), -1 on failure (the same). */
static int compare_setup(compare_state *st)
{
    char err[1024], buf[256];
    const char *ver[] = {st->pgbench, "--version", NULL};

    if (find_program(&st->o, "pgbench", st->pgbench, sizeof(st->pgbench)) !=
        0) {
        snprintf(st->skipped, sizeof(st->skipped),
                 "pgbench is not installed (neither %s/pgbench nor "
                 "/usr/bin/pgbench; Debian's postgresql-client-15 has it)",
                 st->o.pg_bin);
        return 1;
    }
    if (find_program(&st->o, "psql", st->psql, sizeof(st->psql)) != 0) {
        snprintf(st->skipped, sizeof(st->skipped),
                 "psql is not installed (postgresql-client-15 has it)");
        return 1;
    }
    if (bench_tmpdir_make(WHO, "compare", st->dir, sizeof(st->dir)) != 0) {
        snprintf(st->skipped, sizeof(st->skipped),
                 "cannot create a temporary directory");
        return -1;
    }
    /* The postgres user must reach its folders inside. */
    chmod(st->dir, 0755);
    snprintf(st->out, sizeof(st->out), "%s/client.out", st->dir);
    if (pgserver_init(&st->srv[0], PGSERVER_KEEL, st->dir, st->o.pg_bin, err,
                      sizeof(err)) != 0 ||
        pgserver_init(&st->srv[1], PGSERVER_POSTGRES, st->dir, st->o.pg_bin,
                      err, sizeof(err)) != 0) {
        snprintf(st->skipped, sizeof(st->skipped), "%s", err);
        return 1;
    }
    if (run_capture(st, ver, 10000, buf, sizeof(buf), err, sizeof(err)) == 0) {
        buf[strcspn(buf, "\n")] = '\0';
        snprintf(st->pgbench_version, sizeof(st->pgbench_version), "%s", buf);
    }
    for (int i = 0; i < 2; i++) {
        fprintf(stderr, "starting %s\n", st->srv[i].name);
        if (pgserver_start(&st->srv[i], err, sizeof(err)) != 0) {
            snprintf(st->skipped, sizeof(st->skipped), "%s", err);
            return -1;
        }
    }
    postgres_settings(st);
    return 0;
}

/* Every run, in order; 0, or -1 with the reason in st->skipped. */
static int compare_runs(compare_state *st)
{
    char err[1024];
    int k = 0;

    for (int i = 0; i < 2; i++)
        if (pgbench_init(st, i, err, sizeof(err)) != 0) {
            snprintf(st->skipped, sizeof(st->skipped), "pgbench -i: %s", err);
            return -1;
        }
    if (wal_measure(st) != 0)
        return -1;
    for (int sc = 0; sc < 2; sc++) {
        for (int m = 0; m < 2; m++)
            for (int c = 0; c < st->o.nclients; c++, k++) {
                compare_run *r = &st->runs[st->nruns];
                *r = (compare_run){.script = sc,
                                   .mode = m,
                                   .clients = st->o.clients[c],
                                   .keel_first = k % 2 == 0};
                r->threads = r->clients < 2 ? r->clients : 2;
                for (int j = 0; j < 2; j++) {
                    int i = r->keel_first ? j : 1 - j;
                    if (pgbench_run(st, r, i, &r->s[i], err, sizeof(err)) !=
                        0) {
                        snprintf(st->skipped, sizeof(st->skipped), "%s", err);
                        return -1;
                    }
                }
                fprintf(stderr,
                        "  %-11s %-8s %2u clients: keel %9.0f tps %7.1f "
                        "us/txn, postgres %9.0f tps %7.1f us/txn\n",
                        scripts[sc], modes[m], r->clients, r->s[0].tps,
                        r->s[0].cpu_us, r->s[1].tps, r->s[1].cpu_us);
                st->nruns++;
            }
        /* After the tpcb-like runs: each server's balances. */
        if (sc == 1)
            for (int i = 0; i < 2; i++)
                if (balances_read(st, i, err, sizeof(err)) != 0) {
                    snprintf(st->skipped, sizeof(st->skipped),
                             "reading the balances: %s", err);
                    return -1;
                }
    }
    return 0;
}

/*
 * The round-trip floor (wire_floor.h) at each client count, driven as
 * pgbench drives them (min(N, 2) client threads), before any pgbench run
 * and with both servers idle.  A failure is not the comparison's: it
 * leaves the floor unmeasured, with the reason in st->floor_error.
 */
static void compare_floor(compare_state *st)
{
    const compare_opts *o = &st->o;

    if (o->floor_seconds <= 0)
        return;
    fprintf(stderr, "measuring the round-trip floor\n");
    for (int c = 0; c < o->nclients; c++)
        st->floor[c].s = (wire_floor_setting){
            .pairs = o->clients[c],
            .threads = o->clients[c] < 2 ? o->clients[c] : 2,
            .query_bytes = WIRE_FLOOR_QUERY_BYTES,
            .reply_bytes = WIRE_FLOOR_REPLY_BYTES,
            .seconds = o->floor_seconds};
    if (wire_floor_series(st->floor, (size_t)o->nclients,
                          o->quick ? FLOOR_RUNS_QUICK : FLOOR_RUNS,
                          st->floor_error, sizeof(st->floor_error)) != 0) {
        fprintf(stderr, WHO ": the round-trip floor: %s\n", st->floor_error);
        return;
    }
    st->nfloor = o->nclients;
}

/* ---- the output ----------------------------------------------------------- */

static void wal_print(const compare_state *st)
{
    const wal_volume *v = &st->wal;

    if (v->txns == 0 || !v->w[0][0].measured)
        return;
    printf("\nlog volume per tpcb-like transaction (%u per window, -c 1 -M "
           "prepared, %.1f s in all)\n%-16s %-8s %9s %7s %9s %12s\n",
           v->txns, v->seconds, "window", "server", "records", "images",
           "bytes", "w/o images");
    for (int k = 0; k < WAL_WINDOWS; k++)
        for (int i = 0; i < 2; i++) {
            const wal_window *w = &v->w[i][k];
            if (!w->measured)
                continue;
            printf("%-16s %-8s %9.2f %7.3f %9.0f %12.0f\n", wal_window_names[k],
                   st->srv[i].name, wal_per_txn(v, w, 0), wal_per_txn(v, w, 1),
                   wal_per_txn(v, w, 2), wal_per_txn(v, w, 3));
        }
    if (v->check[0] != '\0')
        printf("check: %s\n", v->check);
}

static void print_table(const compare_state *st)
{
    printf("%-11s %-8s %7s %10s %10s %7s %9s %9s %7s\n", "script", "mode",
           "clients", "keel tps", "pg tps", "ratio", "keel us", "pg us",
           "ratio");
    for (int i = 0; i < st->nruns; i++) {
        const compare_run *r = &st->runs[i];
        printf("%-11s %-8s %7u %10.0f %10.0f %7.2f %9.1f %9.1f %7.2f\n",
               scripts[r->script], modes[r->mode], r->clients, r->s[0].tps,
               r->s[1].tps, r->s[0].tps / r->s[1].tps, r->s[0].cpu_us,
               r->s[1].cpu_us, r->s[0].cpu_us / r->s[1].cpu_us);
    }
    for (int i = 0; i < 2; i++)
        if (st->bal[i].read)
            printf("%s balances after tpcb-like: accounts %lld, tellers %lld, "
                   "branches %lld, history %lld: %s\n",
                   st->srv[i].name, st->bal[i].accounts, st->bal[i].tellers,
                   st->bal[i].branches, st->bal[i].history,
                   balances_add_up(&st->bal[i]) ? "they add up"
                                                : "they do NOT add up");
    wal_print(st);
}

/* The floor as a member of the comparison's JSON object: `"floor": {...}`,
 * or null with `"floor_error"` when it was not measured. */
static void json_floor(FILE *f, const compare_state *st)
{
    fputs(",\n  \"floor\": ", f);
    if (st->nfloor > 0)
        wire_floor_json(f, st->floor, (size_t)st->nfloor);
    else
        fputs("null", f);
    fputs(",\n  \"floor_error\": ", f);
    if (st->floor_error[0] != '\0')
        json_write_string(f, st->floor_error);
    else
        fputs("null", f);
}

static void json_num_or_null(FILE *f, double v, int decimals)
{
    if (isfinite(v))
        fprintf(f, "%.*f", decimals, v);
    else
        fputs("null", f);
}

static void json_side(FILE *f, const side *s)
{
    fputs("{\"tps\": ", f);
    json_num_or_null(f, s->tps, 1);
    fprintf(f, ", \"transactions\": %llu, \"failed\": %llu, \"cpu_s\": ",
            (unsigned long long)s->txns, (unsigned long long)s->failed);
    json_num_or_null(f, s->cpu_s, 3);
    fputs(", \"cpu_us_per_txn\": ", f);
    json_num_or_null(f, s->cpu_us, 2);
    fputs("}", f);
}

static void wal_json(FILE *f, const compare_state *st)
{
    const wal_volume *v = &st->wal;
    static const char *const per[4] = {
        "records_per_txn", "fpi_per_txn", "bytes_per_txn",
        "bytes_without_fpi_per_txn"};

    fprintf(f, ",\n  \"wal_volume\": {\"transactions\": %u, \"seconds\": ",
            v->txns);
    json_num_or_null(f, v->txns > 0 ? v->seconds : NAN, 2);
    fputs(", \"check\": ", f);
    if (v->check[0] != '\0')
        json_write_string(f, v->check);
    else
        fputs("null", f);
    for (int i = 0; i < 2; i++) {
        fprintf(f, ",\n    \"%s\": [", st->srv[i].name);
        for (int k = 0; k < WAL_WINDOWS; k++) {
            const wal_window *w = &v->w[i][k];
            fprintf(f, "%s\n      {\"window\": \"%s\", \"measured\": %s",
                    k ? "," : "", wal_window_names[k],
                    w->measured ? "true" : "false");
            if (w->measured) {
                fprintf(f, ", \"seconds\": %.2f, \"records\": %.0f, "
                           "\"fpi\": %.0f, \"bytes\": %.0f, \"fpi_bytes\": ",
                        w->seconds, w->d.records, w->d.fpi, w->d.bytes);
                json_num_or_null(f, w->d.fpi_bytes, 0);
                for (int q = 0; q < 4; q++) {
                    fprintf(f, ", \"%s\": ", per[q]);
                    json_num_or_null(f, wal_per_txn(v, w, q), 3);
                }
            }
            if (w->dumped)
                fprintf(f, ", \"pg_waldump\": {\"records\": %.0f, "
                           "\"bytes\": %.0f, \"fpi_bytes\": %.0f}",
                        w->dump.records, w->dump.bytes, w->dump.fpi_bytes);
            fputs("}", f);
        }
        fputs("]", f);
    }
    fputs("}", f);
}

static int write_json(const compare_state *st, bool failed)
{
    const compare_opts *o = &st->o;
    FILE *f = fopen(o->json, "w");

    if (f == NULL)
        return -1;
    fprintf(f, "{\n  \"bench\": \"compare\",\n  \"quick\": %s,\n",
            o->quick ? "true" : "false");
    fprintf(f, "  \"failed\": %s,\n", failed ? "true" : "false");
    fputs("  \"skipped\": ", f);
    if (st->skipped[0] != '\0')
        json_write_string(f, st->skipped);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"scale\": %u,\n  \"clients\": [", o->scale);
    for (int i = 0; i < o->nclients; i++)
        fprintf(f, "%s%u", i ? ", " : "", o->clients[i]);
    fprintf(f, "],\n  \"threads\": \"min(clients, 2)\",\n  \"seconds\": ");
    if (o->seconds)
        fprintf(f, "%u", o->seconds);
    else
        fputs("null", f);
    fputs(",\n  \"transactions_per_client\": ", f);
    if (o->seconds)
        fputs("null", f);
    else
        fprintf(f, "{\"select-only\": %u, \"tpcb-like\": %u}", o->select_txns,
                o->tpcb_txns);
    fputs(",\n  \"pgbench\": ", f);
    json_write_string(f, st->pgbench);
    fputs(",\n  \"pgbench_version\": ", f);
    json_write_string(f, st->pgbench_version);
    fputs(",\n  \"postgres_version\": ", f);
    json_write_string(f, st->pg_version);
    fputs(",\n  \"postgres_settings\": {", f);
    for (int i = 0; i < st->nsettings; i++) {
        char name[96];
        const char *eq = strchr(st->settings[i], '=');
        if (eq == NULL)
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(eq - st->settings[i]),
                 st->settings[i]);
        fputs(i ? ", " : "", f);
        json_write_string(f, name);
        fputs(": ", f);
        json_write_string(f, eq + 1);
    }
    fputs("},\n  \"init_seconds\": {\"keel\": ", f);
    json_num_or_null(f, st->init_s[0] > 0 ? st->init_s[0] : NAN, 2);
    fputs(", \"postgres\": ", f);
    json_num_or_null(f, st->init_s[1] > 0 ? st->init_s[1] : NAN, 2);
    fputs("},\n  \"runs\": [", f);
    for (int i = 0; i < st->nruns; i++) {
        const compare_run *r = &st->runs[i];
        fprintf(f,
                "%s\n    {\"script\": \"%s\", \"mode\": \"%s\", \"clients\": "
                "%u, \"threads\": %u, \"first\": \"%s\", \"keel\": ",
                i ? "," : "", scripts[r->script], modes[r->mode], r->clients,
                r->threads, r->keel_first ? "keel" : "postgres");
        json_side(f, &r->s[0]);
        fputs(", \"postgres\": ", f);
        json_side(f, &r->s[1]);
        fputs(", \"tps_ratio\": ", f);
        json_num_or_null(f, r->s[0].tps / r->s[1].tps, 4);
        fputs(", \"cpu_ratio\": ", f);
        json_num_or_null(f, r->s[0].cpu_us / r->s[1].cpu_us, 4);
        fputs("}", f);
    }
    fputs("\n  ],\n  \"balances\": {", f);
    for (int i = 0, k = 0; i < 2; i++) {
        const balances *b = &st->bal[i];
        if (!b->read)
            continue;
        fprintf(f,
                "%s\"%s\": {\"accounts\": %lld, \"tellers\": %lld, "
                "\"branches\": %lld, \"history\": %lld, \"add_up\": %s}",
                k++ ? ", " : "", st->srv[i].name, b->accounts, b->tellers,
                b->branches, b->history, balances_add_up(b) ? "true" : "false");
    }
    fputs("}", f);
    json_floor(f, st);
    wal_json(f, st);
    fputs("\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

int bench_compare_main(int argc, char **argv)
{
    compare_state *st = calloc(1, sizeof(*st));
    int rc;

    if (st == NULL) {
        fprintf(stderr, WHO ": out of memory\n");
        return 1;
    }
    if (parse_opts(argc, argv, &st->o) != 0) {
        usage();
        free(st);
        return 2;
    }
    rc = compare_setup(st);
    if (rc == 0)
        compare_floor(st);
    if (rc == 0)
        rc = compare_runs(st);
    for (int i = 0; i < 2; i++)
        pgserver_stop(&st->srv[i]);
    if (st->dir[0] != '\0')
        bench_dir_remove(st->dir);
    if (st->skipped[0] != '\0')
        fprintf(stderr, WHO ": %s: %s\n", rc > 0 ? "skipped" : "failed",
                st->skipped);
    else
        print_table(st);
    if (st->nfloor > 0)
        wire_floor_print(stdout, st->floor, (size_t)st->nfloor);
    if (st->o.json != NULL && write_json(st, rc < 0) != 0) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", st->o.json,
                strerror(errno));
        rc = -1;
    }
    free(st);
    return rc < 0 ? 1 : 0;
}
