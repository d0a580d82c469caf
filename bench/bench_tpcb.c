/*
 * bench_tpcb.c: `keel bench tpcb`, the whole engine under pgbench's
 * default read-write transaction (tpcb_txn.h).
 *
 * For each client count, one thread per client, each with its own session,
 * runs the transaction on random rows for --seconds, at read committed as
 * pgbench's against PostgreSQL (--isolation repeatable-read: retrying it
 * whenever a concurrent transaction changed one of its rows first,
 * KEEL_ESERIALIZE, as pgbench --max-tries 0 does); the throughput is the committed
 * transactions over the time from the common start to the last client's
 * stop.  The runs are interleaved as in `keel bench select` (run 1 of
 * every count, then run 2 in reverse order, ...) and reported as median,
 * min and max.  Nothing reclaims old row versions yet, so every update
 * leaves one behind and a hot row (a branch, at scale 1 the only one) is
 * slower to update with every version: later runs start from more
 * versions than earlier ones, which the interleaving spreads over the
 * counts.
 *
 * Before the first run and after the last, the four tables are read in
 * full (tpcb_totals_read()); the benchmark fails unless the three balance
 * sums and the history's delta sum moved by the same amount and the
 * history grew by exactly the transactions committed.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "bench.h"
#include "bench_db.h"
#include "port/atomics.h"
#include "port/clock.h"
#include "engine/engine.h"
#include "wal/wal.h"
#include "stats.h"
#include "tpcb_txn.h"

#define MAX_COUNTS   16
#define MAX_CLIENTS  256
#define MAX_RUNS     BENCH_SELECT_MAX_RUNS
#define CLIENT_STACK (1024 * 1024)
#define WHO          "keel bench tpcb"

typedef struct tpcb_opts {
    const char *dir, *json;
    uint32_t scale, pool_mb;
    uint32_t clients[MAX_COUNTS];
    int nclients;
    double seconds;
    int runs;
    bool async; /* --sync off: synchronous_commit off */
    bool repeatable; /* --isolation repeatable-read (else read committed) */
    bool insert_only; /* --txn insert: a history row per transaction */
    double fsync_rate; /* the disk's write + fdatasync loops per second */
} tpcb_opts;

static void usage(void)
{
    fprintf(
        stderr,
        "usage: keel bench tpcb [DIR] [--scale N] [--clients N,N,...]\n"
        "           [--seconds S] [--runs N] [--pool-mb N] [--sync on|off]\n"
        "           [--txn tpcb|insert]\n"
        "           [--isolation read-committed|repeatable-read] [--json FILE]\n");
}

static int parse_clients(const char *v, tpcb_opts *o)
{
    const char *p = v;

    o->nclients = 0;
    for (;;) {
        char *end = (char *)p;
        unsigned long x = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
        if (end == p || (*end != ',' && *end != '\0') || x < 1 ||
            x > MAX_CLIENTS || o->nclients == MAX_COUNTS) {
            fprintf(stderr,
                    WHO ": option --clients takes up to %d numbers in 1..%d, "
                        "comma-separated: '%s'\n",
                    MAX_COUNTS, MAX_CLIENTS, v);
            return -1;
        }
        o->clients[o->nclients++] = (uint32_t)x;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

static int on_option(const bench_args *a, void *ctx)
{
    tpcb_opts *o = ctx;
    uint32_t u;

    if (strcmp(a->name, "--json") == 0) {
        return bench_args_out_file(a, &o->json);
    } else if (strcmp(a->name, "--scale") == 0) {
        return bench_args_u32(a, 1, 1000, &o->scale);
    } else if (strcmp(a->name, "--pool-mb") == 0) {
        return bench_args_u32(a, 16, 65536, &o->pool_mb);
    } else if (strcmp(a->name, "--clients") == 0) {
        return parse_clients(a->value, o);
    } else if (strcmp(a->name, "--seconds") == 0) {
        return bench_args_double(a, 0.01, 3600, &o->seconds);
    } else if (strcmp(a->name, "--sync") == 0) {
        if (strcmp(a->value, "on") == 0)
            o->async = false;
        else if (strcmp(a->value, "off") == 0)
            o->async = true;
        else
            return bench_args_unknown(a);
    } else if (strcmp(a->name, "--isolation") == 0) {
        if (strcmp(a->value, "read-committed") == 0)
            o->repeatable = false;
        else if (strcmp(a->value, "repeatable-read") == 0)
            o->repeatable = true;
        else
            return bench_args_unknown(a);
    } else if (strcmp(a->name, "--txn") == 0) {
        if (strcmp(a->value, "tpcb") == 0)
            o->insert_only = false;
        else if (strcmp(a->value, "insert") == 0)
            o->insert_only = true;
        else
            return bench_args_unknown(a);
    } else if (strcmp(a->name, "--runs") == 0) {
        if (bench_args_u32(a, 1, MAX_RUNS, &u) != 0)
            return -1;
        o->runs = (int)u;
    } else {
        return bench_args_unknown(a);
    }
    return 0;
}

/* ---- clients ----------------------------------------------------- */

/* What the clients of one run share. */
typedef struct tpcb_run {
    keel_db *db;
    bool insert_only; /* transactions of one history insert (delta 0) */
    bool repeatable;  /* sessions at repeatable read, not read committed */
    const tpcb_totals *sizes;
    atomic_u32 stop, failed;
    pthread_barrier_t ready, go;
} tpcb_run;

typedef struct tpcb_client {
    tpcb_run *run;
    pthread_t thread;
    uint64_t seed;
    uint64_t commits, tries;
    uint64_t end_ns;
    char msg[KEEL_ERROR_MSG_MAX];
} tpcb_client;

/*
 * --txn insert: a transaction that only inserts a history row with delta
 * 0 (so that the sums still agree), and commits: rows no two clients
 * share, so that what limits many clients is the commit alone (group
 * commit), not first-updater-wins on pgbench's ten branches.
 */
static int insert_txn(keel_session *s, const tpcb_params *p, int64_t mtime,
                      uint32_t *tries, char *msg, size_t msglen)
{
    keel_value h[6];
    int rc;

    *tries = 1;
    for (int i = 0; i < 6; i++)
        h[i].isnull = false;
    h[0].v.i4 = p->tid;
    h[1].v.i4 = p->bid;
    h[2].v.i4 = p->aid;
    h[3].v.i4 = 0;
    h[4].v.i8 = mtime;
    h[5].isnull = true;
    rc = keel_begin(s);
    if (rc == KEEL_OK)
        rc = keel_insert(s, NULL, "pgbench_history", h);
    if (rc == KEEL_OK)
        rc = keel_commit(s);
    if (rc != KEEL_OK) {
        snprintf(msg, msglen, "%s", keel_session_error(s));
        keel_abort(s);
    }
    return rc;
}

static void *client_main(void *arg)
{
    tpcb_client *c = arg;
    tpcb_run *run = c->run;
    keel_session *s = NULL;
    keel_error e = {0};
    uint64_t rng = c->seed;
    int rc = keel_session_begin(run->db, &s, &e);

    if (rc == KEEL_OK)
        rc = keel_set_isolation(s, run->repeatable ? KEEL_REPEATABLE_READ
                                                   : KEEL_READ_COMMITTED);
    if (rc != KEEL_OK) {
        snprintf(c->msg, sizeof(c->msg), "%s",
                 s != NULL ? keel_session_error(s) : e.msg);
        atomic_store_relaxed(&run->failed, 1);
    }
    pthread_barrier_wait(&run->ready);
    pthread_barrier_wait(&run->go);
    while (rc == KEEL_OK && !atomic_load_relaxed(&run->stop)) {
        tpcb_params p;
        uint32_t tries = 0;
        struct timespec ts;

        tpcb_params_next(&rng, run->sizes, &p);
        clock_gettime(CLOCK_REALTIME, &ts);
        if (run->insert_only)
            rc = insert_txn(s, &p,
                            (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
                            &tries, c->msg, sizeof(c->msg));
        else
            rc = tpcb_txn_run(s, &p,
                              (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
                              0, &tries, c->msg, sizeof(c->msg));
        c->tries += tries;
        if (rc == KEEL_OK)
            c->commits++;
        else
            atomic_store_relaxed(&run->failed, 1);
    }
    c->end_ns = clock_now_ns();
    keel_session_end(s);
    return NULL;
}

/*
 * One run of n clients for seconds: the commits and tries summed into
 * *commits and *tries, the time from the common start to the last
 * client's end into *elapsed_ns.  0, or -1 after a message.
 */
static int run_clients(tpcb_run *run, uint32_t n, double seconds,
                       uint64_t *commits, uint64_t *tries, uint64_t *elapsed_ns)
{
    tpcb_client *c = calloc(n, sizeof(*c));
    pthread_attr_t attr;
    uint64_t t0, until, end = 0;
    int rc = 0;

    if (c == NULL) {
        fprintf(stderr, WHO ": out of memory\n");
        return -1;
    }
    atomic_store_relaxed(&run->stop, 0);
    atomic_store_relaxed(&run->failed, 0);
    pthread_barrier_init(&run->ready, NULL, n + 1);
    pthread_barrier_init(&run->go, NULL, n + 1);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, CLIENT_STACK);
    for (uint32_t i = 0; i < n; i++) {
        c[i].run = run;
        c[i].seed = UINT64_C(0x9E3779B97F4A7C15) * (clock_now_ns() | 1) +
                    (uint64_t)i * 2 + 1;
        if (pthread_create(&c[i].thread, &attr, client_main, &c[i]) != 0) {
            fprintf(stderr, WHO ": cannot create thread %u\n", i);
            bench_exit(1);
        }
    }
    pthread_attr_destroy(&attr);
    pthread_barrier_wait(&run->ready);
    t0 = clock_now_ns();
    until = t0 + (uint64_t)(seconds * 1e9);
    pthread_barrier_wait(&run->go);
    bench_sleep_until(until, &run->failed);
    atomic_store_relaxed(&run->stop, 1);
    *commits = *tries = 0;
    for (uint32_t i = 0; i < n; i++) {
        pthread_join(c[i].thread, NULL);
        *commits += c[i].commits;
        *tries += c[i].tries;
        if (c[i].end_ns > end)
            end = c[i].end_ns;
    }
    pthread_barrier_destroy(&run->ready);
    pthread_barrier_destroy(&run->go);
    if (atomic_load_relaxed(&run->failed)) {
        for (uint32_t i = 0; i < n; i++)
            if (c[i].msg[0] != '\0') {
                fprintf(stderr, WHO ": client %u: %s\n", i, c[i].msg);
                break;
            }
        rc = -1;
    }
    *elapsed_ns = end - t0;
    free(c);
    return rc;
}

/* ---- the benchmark ----------------------------------------------- */

typedef struct tpcb_result {
    uint32_t clients;
    double tps[MAX_RUNS];
    uint64_t commits, tries;
    uint64_t log_bytes; /* of the log, over its runs */
} tpcb_result;

static int read_totals(keel_db *db, tpcb_totals *t)
{
    keel_session *s = NULL;
    keel_error e = {0};
    char msg[KEEL_ERROR_MSG_MAX];
    int rc = keel_session_begin(db, &s, &e);

    if (rc != KEEL_OK) {
        fprintf(stderr, WHO ": %s\n", e.msg);
        return -1;
    }
    rc = tpcb_totals_read(s, t, msg, sizeof(msg));
    keel_session_end(s);
    if (rc != KEEL_OK) {
        fprintf(stderr, WHO ": %s\n", msg);
        return -1;
    }
    return 0;
}

/*
 * Whether after - before is what the committed transactions did: equal
 * moves of the four sums, one history row each.  Prints the check.
 */
static bool totals_check(const tpcb_totals *before, const tpcb_totals *after,
                         uint64_t commits)
{
    int64_t db = after->bbalance - before->bbalance;
    int64_t dt = after->tbalance - before->tbalance;
    int64_t da = after->abalance - before->abalance;
    int64_t dd = after->delta - before->delta;
    uint64_t dh = after->history - before->history;
    bool ok = db == dt && dt == da && da == dd && dh == commits;

    printf("check: %llu transactions committed, %llu history rows added; "
           "balances of branches %+lld, tellers %+lld, accounts %+lld, "
           "history deltas %+lld: %s\n",
           (unsigned long long)commits, (unsigned long long)dh, (long long)db,
           (long long)dt, (long long)da, (long long)dd,
           ok ? "consistent" : "INCONSISTENT");
    return ok;
}

static int write_json(const tpcb_opts *o, const tpcb_totals *sizes,
                      const tpcb_result *res, bool consistent)
{
    FILE *f = fopen(o->json, "w");

    if (f == NULL) {
        fprintf(stderr, WHO ": cannot write %s: %s\n", o->json,
                strerror(errno));
        return -1;
    }
    fprintf(f,
            "{\n  \"bench\": \"tpcb\",\n  \"branches\": %d,\n  \"tellers\": "
            "%d,\n  \"accounts\": %d,\n  \"pool_mb\": %u,\n  \"seconds\": "
            "%.3f,\n  \"runs\": %d,\n  \"consistent\": %s,\n"
            "  \"synchronous_commit\": %s,\n  \"fsync_loop_per_s\": %.1f,\n"
            "  \"txn\": \"%s\",\n  \"isolation\": \"%s\",\n  \"tpcb\": [",
            sizes->branches, sizes->tellers, sizes->accounts, o->pool_mb,
            o->seconds, o->runs, consistent ? "true" : "false",
            o->async ? "false" : "true", o->fsync_rate,
            o->insert_only ? "insert" : "tpcb",
            o->repeatable ? "repeatable read" : "read committed");
    for (int i = 0; i < o->nclients; i++) {
        double v[MAX_RUNS];
        bench_stat st;
        memcpy(v, res[i].tps, sizeof(v));
        st = bench_stat_of(v, o->runs);
        fprintf(f,
                "%s\n    {\"clients\": %u, \"tps\": %.1f, \"tps_min\": %.1f, "
                "\"tps_max\": %.1f, \"commits\": %llu, \"tries\": %llu, "
                "\"tries_per_commit\": %.4f, \"log_bytes_per_commit\": "
                "%.1f, \"tps_runs\": [",
                i ? "," : "", res[i].clients, st.median, st.min, st.max,
                (unsigned long long)res[i].commits,
                (unsigned long long)res[i].tries,
                res[i].commits ? (double)res[i].tries / (double)res[i].commits
                               : 0.0,
                res[i].commits
                    ? (double)res[i].log_bytes / (double)res[i].commits
                    : 0.0);
        for (int r = 0; r < o->runs; r++)
            fprintf(f, "%s%.1f", r ? ", " : "", res[i].tps[r]);
        fputs("]}", f);
    }
    fputs("\n  ]\n}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, WHO ": cannot write %s\n", o->json);
        return -1;
    }
    return 0;
}

/*
 * What the disk under dir allows one committer: 8 KiB written at the
 * same place of a file whose blocks exist, then fdatasync, for `seconds`;
 * returns the loops per second (0 if it could not).  A commit that waits
 * for the log does at least this much.
 */
static double fsync_loop_rate(const char *dir, double seconds)
{
    char path[4200];
    static char page[8192];
    uint64_t start, n = 0;
    int fd;

    snprintf(path, sizeof(path), "%s/keel_fsync_loop", dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 0;
    if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) ||
        fsync(fd) != 0) {
        close(fd);
        unlink(path);
        return 0;
    }
    start = clock_now_ns();
    while (clock_now_ns() - start < (uint64_t)(seconds * 1e9)) {
        page[0] = (char)n;
        if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) ||
            fdatasync(fd) != 0)
            break;
        n++;
    }
    seconds = (double)(clock_now_ns() - start) / 1e9;
    close(fd);
    unlink(path);
    return seconds > 0 ? (double)n / seconds : 0;
}

/* Runs every count --runs times on dir; 0, 1 (a failure) or 3 (the
 * totals did not add up). */
static int tpcb_all(tpcb_opts *o, const char *dir, tpcb_result *res)
{
    keel_db_options opt;
    keel_error e = {0};
    keel_db *db = NULL;
    tpcb_totals before, after;
    tpcb_run run;
    uint64_t commits = 0;
    bool consistent;
    int rc = 0;

    keel_db_options_init(&opt);
    opt.dir = dir;
    opt.pool_mb = o->pool_mb;
    opt.synchronous_commit = !o->async;
    o->fsync_rate = fsync_loop_rate(dir, 1.0);
    if (keel_db_open(&opt, &db, &e) != KEEL_OK) {
        fprintf(stderr, WHO ": %s\n", e.msg);
        return 1;
    }
    if (read_totals(db, &before) != 0) {
        keel_db_close(db, &e);
        return 1;
    }
    printf(WHO ": %s, %d branches, %d tellers, %d accounts, pool %u MiB, "
               "%d runs of %.2f s per client count, synchronous_commit %s, "
               "%s\n",
           dir, before.branches, before.tellers, before.accounts, o->pool_mb,
           o->runs, o->seconds, o->async ? "off" : "on",
           o->repeatable ? "repeatable read" : "read committed");
    if (o->insert_only)
        printf("transactions: one history insert each (--txn insert)\n");
    printf("the disk's own 8 KiB write + fdatasync loop: %.0f per second\n",
           o->fsync_rate);
    fflush(stdout);
    memset(&run, 0, sizeof(run));
    run.db = db;
    run.insert_only = o->insert_only;
    run.repeatable = o->repeatable;
    run.sizes = &before;
    for (int r = 0; r < o->runs && rc == 0; r++)
        for (int k = 0; k < o->nclients && rc == 0; k++) {
            int i = r % 2 == 0 ? k : o->nclients - 1 - k;
            uint64_t c = 0, t = 0, ns = 0;
            uint64_t lsn0 = wal_insert_lsn(db->wal), lsn1;
            int failed =
                run_clients(&run, res[i].clients, o->seconds, &c, &t, &ns);
            lsn1 = wal_insert_lsn(db->wal);
            res[i].log_bytes += lsn1 - lsn0;
            commits += c; /* committed, even in a run that failed */
            if (failed != 0) {
                rc = 1;
                break;
            }
            res[i].tps[r] = ns > 0 ? (double)c * 1e9 / (double)ns : 0;
            res[i].commits += c;
            res[i].tries += t;
            fprintf(stderr,
                    "  run %d/%d: %u clients: %.0f tps, %.3f tries "
                    "per commit\n",
                    r + 1, o->runs, res[i].clients, res[i].tps[r],
                    c ? (double)t / (double)c : 0.0);
        }
    /* Whatever committed before a failure is checked too. */
    if (read_totals(db, &after) != 0) {
        rc = 1;
    } else {
        consistent = totals_check(&before, &after, commits);
        if (!consistent)
            rc = 3;
        if (rc == 0) {
            printf("\n  clients        tps        min        max  "
                   "tries/commit  log bytes/commit  tps/disk loop\n");
            for (int i = 0; i < o->nclients; i++) {
                double v[MAX_RUNS];
                bench_stat st;
                memcpy(v, res[i].tps, sizeof(v));
                st = bench_stat_of(v, o->runs);
                printf("  %7u %10.0f %10.0f %10.0f  %12.3f  %16.0f  %13.2f\n",
                       res[i].clients, st.median, st.min, st.max,
                       res[i].commits
                           ? (double)res[i].tries / (double)res[i].commits
                           : 0.0,
                       res[i].commits ? (double)res[i].log_bytes /
                                            (double)res[i].commits
                                      : 0.0,
                       o->fsync_rate > 0 ? st.median / o->fsync_rate : 0.0);
            }
            if (o->json != NULL && write_json(o, &before, res, consistent) != 0)
                rc = 1;
        }
    }
    if (keel_db_close(db, &e) != KEEL_OK) {
        fprintf(stderr, WHO ": closing the database: %s\n", e.msg);
        if (rc == 0)
            rc = 1;
    }
    return rc;
}

int bench_tpcb_main(int argc, char **argv)
{
    tpcb_opts o;
    tpcb_result res[MAX_COUNTS];
    char tmp[4096];
    const char *dir;
    uint64_t bytes;
    int rc;

    memset(&o, 0, sizeof(o));
    o.scale = 10;
    o.seconds = 2;
    o.runs = 3;
    o.clients[0] = 1;
    o.clients[1] = 2;
    o.nclients = 2;
    if (bench_args_parse(WHO, argc, argv, NULL, &o.dir, on_option, &o) != 0) {
        usage();
        return 2;
    }
    /* The database and room for the versions the runs add (each
     * transaction about 600 bytes of rows and entries, so 1 GiB holds some
     * 1.7 million): a pool they outgrow spends the later runs writing
     * pages out, which is not what this measures. */
    if (o.pool_mb == 0) {
        o.pool_mb = 1024 + 16 * o.scale;
        if (o.dir != NULL && bench_dir_bytes(o.dir, &bytes) == 0) {
            uint64_t mb = 1024 + bytes * 11 / 10 / (1024 * 1024);
            if (mb > o.pool_mb)
                o.pool_mb = mb < 65536 ? (uint32_t)mb : 65536;
        }
    }
    memset(res, 0, sizeof(res));
    for (int i = 0; i < o.nclients; i++)
        res[i].clients = o.clients[i];
    if (o.dir == NULL) {
        if (bench_db_create(WHO, "bench-tpcb", o.scale, tmp, sizeof(tmp)) != 0)
            return 1;
        dir = tmp;
    } else {
        dir = o.dir;
    }
    rc = tpcb_all(&o, dir, res);
    if (o.dir == NULL)
        bench_dir_remove(tmp);
    return rc;
}
