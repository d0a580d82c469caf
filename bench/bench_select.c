/*
 * bench_select.c: `keel bench select` and `keel bench bloat`, the whole
 * engine under pgbench's select-only transaction (select_txn.h).
 *
 * select: for each client count, one thread per client, each with its own
 * session, runs the transaction on random accounts for --seconds; the
 * throughput is all transactions over the time from the common start to
 * the last client's stop.  Each configuration (layout, max_sessions,
 * clients) is measured --runs times (default 3); the runs are interleaved
 * (run 1 of every configuration, then run 2, ...; runs 2, 4, ... go
 * through them in reverse order, so that a drift of the machine's speed
 * favours no configuration) and reported as median, min and max, and each run's
 * figure in the JSON.  Each layout and max_sessions opens the database
 * anew, reads every page of pgbench_accounts and its primary key into the
 * pool (sized for the database: --pool-mb, or 24 MiB and 16 per scale, or
 * 24 MiB and a tenth more than DIR's files if that is more, up to 64 GiB),
 * and gives each client
 * 64 transactions of warm-up before timing starts.  The accounts drawn
 * are 1..N, N the table's analyzed row count, or its rows counted if it
 * was never analyzed (select_client_accounts()).  Latency: every 64th
 * transaction of each client is timed alone with two clock reads (so a sample
 * includes one clock read, about 20 ns); p50 and p99 are over one run's samples
 * of all clients, reported as the median of the runs.  CPU time per
 * transaction: the clients' thread CPU time (CLOCK_THREAD_CPUTIME_ID) over the
 * timed part divided by their transactions, a figure other load on the machine
 * does not inflate the way it inflates wall time.  Per-transaction counts are
 * the differences of each session's counters (keel_session_cache_stats():
 * catalog cache; engine_session_stats_get(): snapshots reused, buffer pins)
 * over the timed part, summed over clients and runs,
 * divided by the transactions.  With --cpus, client i runs on the i-th CPU of
 * the list (round-robin), so that a single client's cost can be measured on
 * each CPU of a machine whose CPUs are not equally fast (virtual CPUs the host
 * shares with other work), and configurations compared on the same CPUs.
 *
 * bloat: --clients threads each run --transactions select-only
 * transactions that also look up a relation name never asked for before
 * ("tmp_<run>_<client>_<n>" in public), so that every transaction adds a
 * negative entry; with pruning disabled and with the default options, in
 * --pairs pairs (2 by default) of one run of each, alternately off then
 * on and on then off.  In the first counted run of each setting, each client
 * samples its own cache's bytes 51 times, evenly by transaction count,
 * with the elapsed time; the throughput of a run is all transactions over
 * the time from the common start to the last client's end, a setting's
 * the median of its runs', and pruning's effect on it the ratios of the
 * pairs' runs, on over off, with their median and the 95% confidence
 * interval of their mean.  --prune off or on runs only that setting,
 * --pairs times (for profilers: bench/bloat-instructions.sh counts the
 * transactions' instructions under callgrind this way).
 *
 * Memory: a run's sessions free their caches when it ends, and whether the
 * next run gets that memory back from the allocator or must map it anew
 * (a page fault and a zeroed page for every 4 KiB) decides much of what an
 * unpruned run costs.  glibc's allocator decides that by thresholds it
 * raises as the process frees large blocks, so that left to itself the
 * answer depends on what the process did before.  So the thresholds are
 * set for the runs (mallopt()), one of two ways (--memory):
 *   kept (the default): freed memory stays with the process (no trimming;
 *     blocks up to 32 MiB come from the heap), and with both settings an
 *     uncounted warm-up run with pruning off, the hungrier setting, comes
 *     first, so every counted run finds its memory mapped.  The comparison
 *     is then of the caches' own work, and an unpruned run is not charged
 *     for the pages it maps.
 *   returned: glibc's default thresholds, fixed: as a run's sessions free
 *     their caches, the heaps give what lies past 128 KiB of free space at
 *     their ends back to the system, so every run maps its memory anew, as
 *     a new session does, and an unpruned run pays for every page its
 *     cache grows by.
 * The thresholds stay set for the rest of the process.
 */
#include <ctype.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "args.h"
#include "bench.h"
#include "bench_db.h"
#include "engine/internal.h"
#include "json.h"
#include "port/atomics.h"
#include "port/clock.h"
#include "select_txn.h"
#include "stats.h"

#define MAX_RUNS        BENCH_SELECT_MAX_RUNS
#define MAX_COUNTS      16 /* client counts, layouts, max_sessions each */
#define MAX_CLIENTS     1024
#define LATENCY_EVERY   64 /* one transaction in this many is timed */
#define WARMUP_TXNS     64 /* per client, before timing starts */
#define BLOAT_SAMPLES   51 /* per session: at 0, T/50, ..., T */
#define BLOAT_MAX_NAME  64
#define BLOAT_MAX_PAIRS BENCH_SELECT_MAX_RUNS
/* Whether bloat_memory_set() sets anything: not under a sanitizer, whose
 * allocator replaces glibc's and ignores its options. */
#ifdef KEEL_SANITIZER_BUILD
#define BLOAT_MEMORY_SET 0
#else
#define BLOAT_MEMORY_SET 1
#endif

#define CLIENT_STACK (1024 * 1024) /* bytes of stack per client thread */

/* ---- options ----------------------------------------------------- */

typedef struct select_opts {
    const char *who;
    bool bloat; /* the options of bloat, not select */
    const char *dir;
    const char *json;
    uint32_t scale;
    uint32_t pool_mb;
    double seconds;
    int runs;
    uint32_t clients[MAX_COUNTS];
    int nclients;
    procarray_layout layouts[MAX_COUNTS];
    int nlayouts;
    uint32_t max_sessions[MAX_COUNTS];
    int nmax_sessions;         /* 0: the largest client count, at least 64 */
    uint32_t cpus[MAX_COUNTS]; /* client i runs on cpus[i % ncpus] */
    int ncpus;                 /* 0: wherever the scheduler puts it */
    uint64_t transactions;     /* bloat: per client */
    int pairs;                 /* bloat: runs of each setting */
    int pruning;               /* bloat: -1 both settings, 0 off, 1 on */
    bool memory_returned;      /* bloat: --memory returned (else kept) */
} select_opts;

static void usage_select(void)
{
    fprintf(stderr,
            "usage: keel bench select [DIR] [--scale N] [--clients N,N,...]\n"
            "           [--seconds S] [--runs N] [--layout padded|packed,...]\n"
            "           [--max-sessions N,...] [--cpus N,...] [--pool-mb N]\n"
            "           [--json FILE]\n");
}

static void usage_bloat(void)
{
    fprintf(stderr, "usage: keel bench bloat [DIR] [--scale N] [--clients N]\n"
                    "           [--transactions T] [--pairs N] [--pool-mb N]\n"
                    "           [--prune off|on] [--memory kept|returned]\n"
                    "           [--json FILE]\n");
}

/* Parses "a,b,c" into up to MAX_COUNTS integers in lo..hi. */
static int parse_list(const char *who, const char *opt, const char *v,
                      uint32_t lo, uint32_t hi, uint32_t *out, int *n)
{
    const char *p = v;

    *n = 0;
    for (;;) {
        char *end = (char *)p;
        /* Digits only: strtoul() alone takes a sign and blanks. */
        unsigned long x = isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : 0;
        if (end == p || (*end != ',' && *end != '\0') || x < lo || x > hi ||
            *n == MAX_COUNTS) {
            fprintf(stderr,
                    "%s: option %s takes up to %d numbers in %u..%u, "
                    "comma-separated: '%s'\n",
                    who, opt, MAX_COUNTS, lo, hi, v);
            return -1;
        }
        out[(*n)++] = (uint32_t)x;
        if (*end == '\0')
            return 0;
        p = end + 1; /* a number must follow the comma */
    }
}

/* Parses "padded,packed" (up to MAX_COUNTS names) into o->layouts. */
static int parse_layouts(const char *who, const char *v, select_opts *o)
{
    const char *p = v;

    o->nlayouts = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (o->nlayouts == MAX_COUNTS) {
            fprintf(stderr, "%s: option --layout takes up to %d names: '%s'\n",
                    who, MAX_COUNTS, v);
            return -1;
        }
        if (len == 6 && strncmp(p, "padded", len) == 0) {
            o->layouts[o->nlayouts++] = PROCARRAY_PADDED;
        } else if (len == 6 && strncmp(p, "packed", len) == 0) {
            o->layouts[o->nlayouts++] = PROCARRAY_PACKED;
        } else {
            fprintf(stderr,
                    "%s: option --layout takes padded or packed, "
                    "comma-separated: '%s'\n",
                    who, v);
            return -1;
        }
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

static const char *layout_name(procarray_layout l)
{
    return l == PROCARRAY_PACKED ? "packed" : "padded";
}

/* One option of select or bloat (o->bloat) into o: 0, or -1 after a
 * message. */
static int select_option(const bench_args *a, void *ctx)
{
    select_opts *o = ctx;
    const char *n = a->name, *v = a->value;
    bool bloat = o->bloat;
    uint32_t u;

    if (strcmp(n, "--json") == 0) {
        return bench_args_out_file(a, &o->json);
    } else if (strcmp(n, "--scale") == 0) {
        return bench_args_u32(a, 1, 1000, &o->scale);
    } else if (strcmp(n, "--pool-mb") == 0) {
        return bench_args_u32(a, 16, 65536, &o->pool_mb);
    } else if (strcmp(n, "--clients") == 0) {
        if (parse_list(o->who, n, v, 1, MAX_CLIENTS, o->clients,
                       &o->nclients) != 0)
            return -1;
        if (bloat && o->nclients != 1) {
            fprintf(stderr, "%s: option --clients takes one number\n", o->who);
            return -1;
        }
    } else if (!bloat && strcmp(n, "--seconds") == 0) {
        return bench_args_double(a, 0.01, 3600, &o->seconds);
    } else if (!bloat && strcmp(n, "--runs") == 0) {
        if (bench_args_u32(a, 1, MAX_RUNS, &u) != 0)
            return -1;
        o->runs = (int)u;
    } else if (!bloat && strcmp(n, "--layout") == 0) {
        return parse_layouts(o->who, v, o);
    } else if (!bloat && strcmp(n, "--max-sessions") == 0) {
        return parse_list(o->who, n, v, 1, 65536, o->max_sessions,
                          &o->nmax_sessions);
    } else if (!bloat && strcmp(n, "--cpus") == 0) {
        cpu_set_t allowed;
        if (parse_list(o->who, n, v, 0, CPU_SETSIZE - 1, o->cpus, &o->ncpus) !=
            0)
            return -1;
        if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
            CPU_ZERO(&allowed);
        for (int i = 0; i < o->ncpus; i++)
            if (!CPU_ISSET(o->cpus[i], &allowed)) {
                fprintf(stderr, "%s: CPU %u is not one this process may use\n",
                        o->who, o->cpus[i]);
                return -1;
            }
    } else if (bloat && strcmp(n, "--transactions") == 0) {
        return bench_args_u64(a, BLOAT_SAMPLES - 1, UINT64_C(100000000),
                              &o->transactions);
    } else if (bloat && strcmp(n, "--pairs") == 0) {
        if (bench_args_u32(a, 1, BLOAT_MAX_PAIRS, &u) != 0)
            return -1;
        o->pairs = (int)u;
    } else if (bloat && strcmp(n, "--prune") == 0) {
        if (strcmp(v, "off") == 0 || strcmp(v, "on") == 0) {
            o->pruning = v[1] == 'n';
        } else {
            fprintf(stderr, "%s: option --prune takes off or on: '%s'\n",
                    o->who, v);
            return -1;
        }
    } else if (bloat && strcmp(n, "--memory") == 0) {
        if (strcmp(v, "kept") == 0 || strcmp(v, "returned") == 0) {
            o->memory_returned = v[0] == 'r';
        } else {
            fprintf(stderr,
                    "%s: option --memory takes kept or returned: '%s'\n",
                    o->who, v);
            return -1;
        }
    } else {
        return bench_args_unknown(a);
    }
    return 0;
}

/* Parses the options of select (bloat false) or bloat.  0, or -1 after a
 * message. */
static int parse_opts(int argc, char **argv, bool bloat, select_opts *o)
{
    uint64_t bytes;

    memset(o, 0, sizeof(*o));
    o->bloat = bloat;
    o->who = bloat ? "keel bench bloat" : "keel bench select";
    o->scale = 10;
    o->pool_mb = 0;
    o->seconds = 2;
    o->runs = 3;
    o->transactions = 500000;
    o->pairs = 2;
    o->pruning = -1;
    if (bloat) {
        o->clients[0] = 2;
        o->nclients = 1;
    } else {
        static const uint32_t def[] = {1, 2, 4, 8, 16, 32, 64};
        memcpy(o->clients, def, sizeof(def));
        o->nclients = 7;
    }
    o->layouts[0] = PROCARRAY_PADDED;
    o->nlayouts = 1;
    if (bench_args_parse(o->who, argc, argv, NULL, &o->dir, select_option, o) !=
        0)
        return -1;
    /* As many pairs of each order, so that neither setting gains from
     * running first (one pair: a quick look, no interval); one setting
     * alone runs any number of times. */
    if (bloat && o->pruning < 0 && o->pairs > 1 && o->pairs % 2 != 0) {
        fprintf(stderr,
                "%s: option --pairs takes 1 or an even number (any number "
                "with --prune)\n",
                o->who);
        return -1;
    }
    /* The whole database: about 14.5 MiB per scale, or what DIR holds
     * with a tenth to spare if that is more. */
    if (o->pool_mb == 0) {
        o->pool_mb = 24 + 16 * o->scale;
        if (o->dir != NULL && bench_dir_bytes(o->dir, &bytes) == 0) {
            uint64_t mb = 24 + bytes * 11 / 10 / (1024 * 1024);
            if (mb > o->pool_mb)
                o->pool_mb = mb < 65536 ? (uint32_t)mb : 65536;
        }
    }
    return 0;
}

/* ---- the database ------------------------------------------------ */

/* Opens dir read-only (the runs only read, and leave DIR as it was) with
 * the given layout and max_sessions; 0 or -1 after a message. */
static int db_open(const select_opts *o, const char *dir,
                   procarray_layout layout, uint32_t max_sessions,
                   keel_db **db)
{
    keel_db_options opt;
    keel_error e = {0};

    keel_db_options_init(&opt);
    opt.dir = dir;
    opt.pool_mb = o->pool_mb;
    opt.max_sessions = max_sessions;
    opt.read_only = true;
    if (engine_db_open_layout(&opt, layout, db, &e) != KEEL_OK) {
        fprintf(stderr, "%s: %s\n", o->who, e.msg);
        return -1;
    }
    return 0;
}

static void db_close(keel_db *db)
{
    keel_error e = {0};
    if (keel_db_close(db, &e) != KEEL_OK)
        fprintf(stderr, "keel bench: closing the database: %s\n", e.msg);
}

/*
 * Reads every page of pgbench_accounts and its primary key into the pool
 * (accounts in steps of 60, fewer than a heap page or a leaf holds: about
 * 66 and 500), and returns the number of accounts
 * (select_client_accounts()) in *accounts.  0, or -1 after a message.
 */
static int db_warm(const select_opts *o, keel_db *db, int32_t *accounts)
{
    select_client c;
    char msg[KEEL_ERROR_MSG_MAX];
    int32_t bal, n;

    if (select_client_open(db, &c, msg, sizeof(msg)) != KEEL_OK) {
        fprintf(stderr, "%s: %s\n", o->who, msg);
        return -1;
    }
    if (select_client_accounts(&c, &n, msg, sizeof(msg)) != KEEL_OK) {
        fprintf(stderr, "%s: %s\n", o->who, msg);
        select_client_close(&c);
        return -1;
    }
    for (int32_t aid = 1; aid <= n;
         aid = aid < n && aid + 60 > n ? n : aid + 60)
        if (select_txn_run(&c, aid, NULL, &bal, msg, sizeof(msg)) != KEEL_OK) {
            fprintf(stderr, "%s: account %d: %s\n", o->who, aid, msg);
            select_client_close(&c);
            return -1;
        }
    select_client_close(&c);
    *accounts = n;
    return 0;
}

/* ---- clients ----------------------------------------------------- */

/* One bloat sample: after txn transactions, elapsed_ns into the run. */
typedef struct bloat_sample {
    uint64_t txn;
    uint64_t elapsed_ns;
    uint64_t bytes;
} bloat_sample;

/* A session's catalog cache options (keel_session_set_cache_options()). */
typedef struct cache_opts {
    int32_t prune_min_age;
    uint64_t memory_target;
} cache_opts;

/* What all clients of one measurement share. */
typedef struct client_run {
    const select_opts *o;
    keel_db *db;
    int32_t accounts;
    pthread_barrier_t ready; /* clients opened and warmed, main */
    pthread_barrier_t go;
    atomic_u32 stop;
    atomic_u32 failed;
    uint64_t t0; /* the start, set by the main thread before `go` */
    /* bloat */
    bool bloat;
    int bloat_run; /* names differ between runs */
    const cache_opts *cache_opts;
} client_run;

typedef struct client_thread {
    pthread_t tid;
    client_run *run;
    uint32_t index;
    uint64_t end_ns;
    uint64_t cpu_ns; /* the thread's CPU time in the timed part */
    select_counts counts;
    uint64_t *lat; /* latency samples, ns */
    size_t nlat, caplat;
    bloat_sample samples[BLOAT_SAMPLES];
    keel_cache_stats final;
    char msg[KEEL_ERROR_MSG_MAX];
} client_thread;

/* Stops the run: the client failed, its message in t->msg. */
static void client_fail(client_thread *t)
{
    atomic_store_relaxed(&t->run->failed, 1);
    atomic_store_relaxed(&t->run->stop, 1);
}

static void client_sample(client_thread *t, select_client *c, int i,
                          uint64_t txn)
{
    keel_cache_stats st;

    keel_session_cache_stats(c->s, &st);
    t->samples[i].txn = txn;
    t->samples[i].elapsed_ns = clock_now_ns() - t->run->t0;
    t->samples[i].bytes = st.bytes;
}

/* The timed loop of select: batches of LATENCY_EVERY transactions, the
 * first of each timed, until told to stop.  Returns the transactions. */
static uint64_t client_loop_select(client_thread *t, select_client *c,
                                   uint64_t *rng)
{
    client_run *run = t->run;
    uint64_t n = 0;
    int32_t bal;

    while (!atomic_load_relaxed(&run->stop)) {
        uint64_t t0 = clock_now_ns(), t1;
        int rc = select_txn_run(c, select_next_aid(rng, run->accounts), NULL,
                                &bal, t->msg, sizeof(t->msg));
        t1 = clock_now_ns();
        for (int i = 1; rc == KEEL_OK && i < LATENCY_EVERY; i++)
            rc = select_txn_run(c, select_next_aid(rng, run->accounts), NULL,
                                &bal, t->msg, sizeof(t->msg));
        if (rc != KEEL_OK) {
            client_fail(t);
            break;
        }
        n += LATENCY_EVERY;
        if (t->nlat == t->caplat) {
            size_t cap = t->caplat ? t->caplat * 2 : 4096;
            uint64_t *p = cap <= (size_t)1 << 24
                              ? realloc(t->lat, cap * sizeof(*p))
                              : NULL;
            if (p == NULL)
                continue; /* enough samples: keep the ones taken */
            t->lat = p;
            t->caplat = cap;
        }
        t->lat[t->nlat++] = t1 - t0;
    }
    return n;
}

/* Writes n in decimal at dst (NUL-terminated; 21 bytes suffice): the
 * bloat loop's names without snprintf()'s cost in every transaction. */
static void put_decimal(char *dst, uint64_t n)
{
    char tmp[24];
    int k = 0;

    do {
        tmp[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n != 0);
    while (k > 0)
        *dst++ = tmp[--k];
    *dst = '\0';
}

/* The loop of bloat: the run's transactions, each probing a new name,
 * sampled BLOAT_SAMPLES times.  Returns the transactions done. */
static uint64_t client_loop_bloat(client_thread *t, select_client *c,
                                  uint64_t *rng)
{
    client_run *run = t->run;
    uint64_t total = run->o->transactions, n;
    char name[BLOAT_MAX_NAME];
    int prefix, next = 1;
    int32_t bal;

    prefix =
        snprintf(name, sizeof(name), "tmp_%d_%u_", run->bloat_run, t->index);
    client_sample(t, c, 0, 0);
    for (n = 0; n < total; n++) {
        /* Another client failed: the run is over. */
        if ((n & 1023) == 0 && atomic_load_relaxed(&run->stop))
            break;
        put_decimal(name + prefix, n);
        if (select_txn_run(c, select_next_aid(rng, run->accounts), name, &bal,
                           t->msg, sizeof(t->msg)) != KEEL_OK) {
            client_fail(t);
            break;
        }
        if (n + 1 == total * (uint64_t)next / (BLOAT_SAMPLES - 1))
            client_sample(t, c, next++, n + 1);
    }
    return n;
}

static void *client_main(void *arg)
{
    client_thread *t = arg;
    client_run *run = t->run;
    uint64_t rng = UINT64_C(0x9E3779B97F4A7C15) * (t->index + 1) + 12345;
    select_client c;
    select_counts a, b;
    int32_t bal;
    bool ok;

    ok = select_client_open(run->db, &c, t->msg, sizeof(t->msg)) == KEEL_OK;
    if (ok && run->cache_opts != NULL &&
        keel_session_set_cache_options(c.s, run->cache_opts->prune_min_age,
                                       run->cache_opts->memory_target) !=
            KEEL_OK) {
        snprintf(t->msg, sizeof(t->msg), "%s", keel_session_error(c.s));
        ok = false;
    }
    for (int i = 0; ok && i < WARMUP_TXNS; i++)
        ok = select_txn_run(&c, select_next_aid(&rng, run->accounts), NULL,
                            &bal, t->msg, sizeof(t->msg)) == KEEL_OK;
    if (!ok) {
        atomic_store_relaxed(&run->failed, 1);
        atomic_store_relaxed(&run->stop, 1);
    }
    pthread_barrier_wait(&run->ready);
    pthread_barrier_wait(&run->go);
    if (ok) {
        uint64_t txns, cpu0;
        select_counts_read(&c, &a);
        cpu0 = clock_thread_cpu_ns();
        if (run->bloat)
            txns = client_loop_bloat(t, &c, &rng);
        else
            txns = client_loop_select(t, &c, &rng);
        t->end_ns = clock_now_ns();
        t->cpu_ns = clock_thread_cpu_ns() - cpu0;
        select_counts_read(&c, &b);
        select_counts_diff(&a, &b, &t->counts);
        t->counts.txns = txns;
        keel_session_cache_stats(c.s, &t->final);
    }
    select_client_close(&c);
    return NULL;
}

/*
 * Starts n clients on run->db, lets them run (select: for seconds; bloat:
 * their transactions), and joins them.  Returns the threads (the caller
 * frees them and their latency samples) with *elapsed_ns from the start
 * to the last client's end, or NULL after a message.
 */
static client_thread *clients_run(client_run *run, uint32_t n, double seconds,
                                  uint64_t *elapsed_ns)
{
    client_thread *t = calloc(n, sizeof(*t));
    pthread_attr_t attr;
    uint64_t end = 0;
    uint32_t started = 0;

    if (t == NULL) {
        fprintf(stderr, "%s: out of memory\n", run->o->who);
        return NULL;
    }
    atomic_store_relaxed(&run->stop, 0);
    atomic_store_relaxed(&run->failed, 0);
    pthread_barrier_init(&run->ready, NULL, n + 1);
    pthread_barrier_init(&run->go, NULL, n + 1);
    /* Clients need little stack; a small one keeps 64 of them cheap to
     * start (in sanitizer builds above all). */
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, CLIENT_STACK);
    for (; started < n; started++) {
        t[started].run = run;
        t[started].index = started;
        if (run->o->ncpus > 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(run->o->cpus[started % (uint32_t)run->o->ncpus], &one);
            if (pthread_attr_setaffinity_np(&attr, sizeof(one), &one) != 0) {
                fprintf(stderr, "%s: cannot pin client %u to CPU %u\n",
                        run->o->who, started,
                        run->o->cpus[started % (uint32_t)run->o->ncpus]);
                bench_exit(1);
            }
        }
        if (pthread_create(&t[started].tid, &attr, client_main, &t[started]) !=
            0) {
            fprintf(stderr, "%s: cannot create thread %u\n", run->o->who,
                    started);
            bench_exit(1);
        }
    }
    pthread_attr_destroy(&attr);
    pthread_barrier_wait(&run->ready);
    run->t0 = clock_now_ns();
    pthread_barrier_wait(&run->go);
    if (!run->bloat) {
        bench_sleep_until(run->t0 + (uint64_t)(seconds * 1e9), &run->failed);
        atomic_store_relaxed(&run->stop, 1);
    }
    for (uint32_t i = 0; i < n; i++) {
        pthread_join(t[i].tid, NULL);
        if (t[i].end_ns > end)
            end = t[i].end_ns;
    }
    pthread_barrier_destroy(&run->ready);
    pthread_barrier_destroy(&run->go);
    if (atomic_load_relaxed(&run->failed)) {
        for (uint32_t i = 0; i < n; i++)
            if (t[i].msg[0] != '\0') {
                fprintf(stderr, "%s: client %u: %s\n", run->o->who, i,
                        t[i].msg);
                break;
            }
        for (uint32_t i = 0; i < n; i++)
            free(t[i].lat);
        free(t);
        return NULL;
    }
    *elapsed_ns = end - run->t0;
    return t;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of sorted v[0..n), nearest rank; 0 if n is 0. */
static double quantile(const uint64_t *v, size_t n, double q)
{
    size_t i;

    if (n == 0)
        return 0;
    i = (size_t)ceil(q * (double)n);
    return (double)v[i > 0 ? i - 1 : 0];
}

/* ---- select ------------------------------------------------------ */

/* One configuration's results over the runs. */
typedef struct select_result {
    uint32_t clients;
    procarray_layout layout;
    uint32_t max_sessions;
    double tps[MAX_RUNS];
    double p50[MAX_RUNS];
    double p99[MAX_RUNS];
    double cpu[MAX_RUNS]; /* CPU ns per transaction, all clients */
    select_counts counts; /* summed over runs */
    size_t samples;       /* latency samples, summed over runs */
} select_result;

/* Measures one run of res->clients clients on db into run r of res. */
static int select_measure(client_run *run, select_result *res, int r)
{
    uint64_t elapsed, *all, cpu = 0;
    size_t nall = 0;
    client_thread *t;

    t = clients_run(run, res->clients, run->o->seconds, &elapsed);
    if (t == NULL)
        return -1;
    for (uint32_t i = 0; i < res->clients; i++)
        nall += t[i].nlat;
    all = malloc((nall ? nall : 1) * sizeof(*all));
    if (all == NULL) {
        fprintf(stderr, "%s: out of memory\n", run->o->who);
        bench_exit(1);
    }
    nall = 0;
    select_counts sum = {0};
    for (uint32_t i = 0; i < res->clients; i++) {
        if (t[i].nlat > 0)
            memcpy(all + nall, t[i].lat, t[i].nlat * sizeof(*all));
        nall += t[i].nlat;
        select_counts_add(&sum, &t[i].counts);
        cpu += t[i].cpu_ns;
        free(t[i].lat);
    }
    free(t);
    qsort(all, nall, sizeof(*all), cmp_u64);
    res->tps[r] = (double)sum.txns / ((double)elapsed / 1e9);
    res->p50[r] = quantile(all, nall, 0.50);
    res->p99[r] = quantile(all, nall, 0.99);
    res->cpu[r] = sum.txns ? (double)cpu / (double)sum.txns : 0;
    res->samples += nall;
    select_counts_add(&res->counts, &sum);
    free(all);
    return 0;
}

static double per_txn(uint64_t x, const select_counts *c)
{
    return c->txns ? (double)x / (double)c->txns : 0;
}

/* A configuration's figures over its runs. */
typedef struct select_summary {
    bench_stat tps;
    double ns;  /* clients / median tps: one client's time per transaction */
    double cpu; /* CPU time per transaction (median of runs) */
    double p50, p99;
} select_summary;

static void select_summarize(const select_opts *o, const select_result *r,
                             select_summary *out)
{
    double v[MAX_RUNS];

    memcpy(v, r->tps, sizeof(v));
    out->tps = bench_stat_of(v, o->runs);
    out->ns = 1e9 / out->tps.median * r->clients;
    memcpy(v, r->cpu, sizeof(v));
    out->cpu = bench_stat_of(v, o->runs).median;
    memcpy(v, r->p50, sizeof(v));
    out->p50 = bench_stat_of(v, o->runs).median;
    memcpy(v, r->p99, sizeof(v));
    out->p99 = bench_stat_of(v, o->runs).median;
}

static void select_print(const select_opts *o, select_result *res, int nres)
{
    printf("\n  %7s %-6s %6s %10s %10s %10s %7s %7s %7s %7s %5s %5s %5s "
           "%5s %5s %5s\n",
           "clients", "layout", "maxses", "tps", "min", "max", "ns/txn",
           "cpu_ns", "p50_ns", "p99_ns", "hit", "neg", "miss", "list", "snap",
           "pins");
    for (int i = 0; i < nres; i++) {
        const select_result *r = &res[i];
        const select_counts *c = &r->counts;
        select_summary m;
        select_summarize(o, r, &m);
        printf("  %7u %-6s %6u %10.0f %10.0f %10.0f %7.1f %7.1f %7.0f %7.0f "
               "%5.2f %5.2f %5.2f %5.2f %5.2f %5.2f\n",
               r->clients, layout_name(r->layout), r->max_sessions,
               m.tps.median, m.tps.min, m.tps.max, m.ns, m.cpu, m.p50, m.p99,
               per_txn(c->hits, c), per_txn(c->negative_hits, c),
               per_txn(c->misses, c), per_txn(c->list_hits, c),
               per_txn(c->snapshots_reused, c), per_txn(c->buffer_reads, c));
    }
    printf("  (ns/txn: clients / tps, one client's time per transaction; "
           "cpu_ns: CPU time per transaction;\n   hit, neg, miss, list: "
           "catalog cache hits, negative hits, misses, list hits per "
           "transaction;\n   snap: snapshots reused per transaction; pins: "
           "buffer reads (pins) per transaction)\n");
}

static int select_write_json(const select_opts *o, const char *dir,
                             int32_t accounts, select_result *res, int nres)
{
    FILE *f = fopen(o->json, "w");

    if (f == NULL) {
        fprintf(stderr, "%s: cannot write %s: %s\n", o->who, o->json,
                strerror(errno));
        return -1;
    }
    fputs("{\n  \"bench\": \"select\",\n  \"dir\": ", f);
    json_write_string(f, o->dir != NULL ? dir : "");
    fprintf(f,
            ",\n  \"accounts\": %d,\n  \"pool_mb\": %u,\n  \"seconds\": "
            "%.3f,\n  \"runs\": %d,\n  \"latency_sample_every\": %d,\n"
            "  \"cpus\": [",
            accounts, o->pool_mb, o->seconds, o->runs, LATENCY_EVERY);
    for (int i = 0; i < o->ncpus; i++)
        fprintf(f, "%s%u", i ? ", " : "", o->cpus[i]);
    fputs("],\n  \"select\": [", f);
    for (int i = 0; i < nres; i++) {
        const select_result *r = &res[i];
        const select_counts *c = &r->counts;
        select_summary m;
        char runs[MAX_RUNS * 24] = "", cpus[MAX_RUNS * 24] = "";
        size_t used = 0, cused = 0;
        select_summarize(o, r, &m);
        /* Each run's throughput and CPU time per transaction, in run
         * order: the runs of every configuration are interleaved, so run
         * i of two configurations was measured in the same round. */
        for (int k = 0; k < o->runs && used < sizeof(runs); k++)
            used += (size_t)snprintf(runs + used, sizeof(runs) - used, "%s%.1f",
                                     k ? ", " : "", r->tps[k]);
        for (int k = 0; k < o->runs && cused < sizeof(cpus); k++)
            cused += (size_t)snprintf(cpus + cused, sizeof(cpus) - cused,
                                      "%s%.1f", k ? ", " : "", r->cpu[k]);
        fprintf(f,
                "%s\n    {\"clients\": %u, \"layout\": \"%s\", "
                "\"max_sessions\": %u, \"tps\": %.1f, \"tps_min\": %.1f, "
                "\"tps_max\": %.1f, \"runs\": %d, \"ns_per_txn\": %.2f, "
                "\"cpu_ns_per_txn\": %.2f, \"p50_ns\": %.0f, "
                "\"p99_ns\": %.0f, \"latency_samples\": %zu, "
                "\"transactions\": %llu,\n"
                "     \"tps_runs\": [%s],\n     \"cpu_ns_runs\": [%s],\n"
                "     \"per_txn\": {\"cache_hits\": %.4f, "
                "\"cache_negative_hits\": %.4f, \"cache_misses\": %.4f, "
                "\"cache_list_hits\": %.4f, \"cache_list_misses\": %.4f, "
                "\"snapshots_reused\": %.4f, \"snapshots_taken\": %.4f, "
                "\"buffer_pins\": %.4f, \"dir_moves\": %.4f}}",
                i ? "," : "", r->clients, layout_name(r->layout),
                r->max_sessions, m.tps.median, m.tps.min, m.tps.max, o->runs,
                m.ns, m.cpu, m.p50, m.p99, r->samples,
                (unsigned long long)c->txns, runs, cpus, per_txn(c->hits, c),
                per_txn(c->negative_hits, c), per_txn(c->misses, c),
                per_txn(c->list_hits, c), per_txn(c->list_misses, c),
                per_txn(c->snapshots_reused, c), per_txn(c->snapshots_taken, c),
                per_txn(c->buffer_reads, c), per_txn(c->dir_moves, c));
    }
    fputs("\n  ]\n}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", o->who, o->json);
        return -1;
    }
    return 0;
}

/*
 * Measures every configuration; 0 or -1 after a message.  One layout and
 * max_sessions is open at a time, each round opening them in turn: with
 * two opens resident at once (each with its own pool), one ran 20-25%
 * faster than the other for as long as both stayed open, in two reports
 * on this project's development VM (bench/README.md), a bias between
 * configurations that no pairing of runs undoes.
 */
static int select_all(const select_opts *o, const char *dir, select_result *res,
                      int32_t *accounts)
{
    client_run run;

    memset(&run, 0, sizeof(run));
    run.o = o;
    for (int r = 0; r < o->runs; r++) {
        /* Runs 2, 4, ... go through the configurations in reverse
         * order, so that a drift of the machine's speed over a round
         * does not favour the configurations measured first. */
        bool rev = r % 2 == 1;
        int ngroups = o->nlayouts * o->nmax_sessions;
        for (int gi = 0; gi < ngroups; gi++) {
            int g = rev ? ngroups - 1 - gi : gi;
            int li = g / o->nmax_sessions, mi = g % o->nmax_sessions;
            if (db_open(o, dir, o->layouts[li], o->max_sessions[mi], &run.db) !=
                0)
                return -1;
            if (db_warm(o, run.db, &run.accounts) != 0) {
                db_close(run.db);
                return -1;
            }
            for (int cj = 0; cj < o->nclients; cj++) {
                int ci = rev ? o->nclients - 1 - cj : cj;
                int k = g * o->nclients + ci;
                if (select_measure(&run, &res[k], r) != 0) {
                    db_close(run.db);
                    return -1;
                }
                fprintf(stderr,
                        "  run %d/%d: %s, max_sessions %u, %u clients: "
                        "%.0f tps\n",
                        r + 1, o->runs, layout_name(o->layouts[li]),
                        o->max_sessions[mi], o->clients[ci], res[k].tps[r]);
            }
            db_close(run.db);
        }
    }
    *accounts = run.accounts;
    return 0;
}

int bench_select_main(int argc, char **argv)
{
    select_opts o;
    select_result *res;
    char tmp[4096];
    const char *dir;
    int nres, rc = 0;
    int32_t accounts = 0;
    uint32_t most = 0;

    if (parse_opts(argc, argv, false, &o) != 0) {
        usage_select();
        return 2;
    }
    for (int i = 0; i < o.nclients; i++)
        if (o.clients[i] > most)
            most = o.clients[i];
    if (o.nmax_sessions == 0) {
        o.max_sessions[0] = most > 64 ? most : 64;
        o.nmax_sessions = 1;
    }
    for (int i = 0; i < o.nmax_sessions; i++)
        if (o.max_sessions[i] < most) {
            fprintf(stderr, "%s: --max-sessions %u is fewer than %u clients\n",
                    o.who, o.max_sessions[i], most);
            return 2;
        }
    nres = o.nlayouts * o.nmax_sessions * o.nclients;
    res = calloc((size_t)nres, sizeof(*res));
    if (res == NULL)
        return 1;
    for (int li = 0, k = 0; li < o.nlayouts; li++)
        for (int mi = 0; mi < o.nmax_sessions; mi++)
            for (int ci = 0; ci < o.nclients; ci++, k++) {
                res[k].clients = o.clients[ci];
                res[k].layout = o.layouts[li];
                res[k].max_sessions = o.max_sessions[mi];
            }
    if (o.dir == NULL) {
        if (bench_db_create(o.who, "bench-select", o.scale, tmp, sizeof(tmp)) !=
            0) {
            free(res);
            return 1;
        }
        dir = tmp;
    } else {
        dir = o.dir;
    }
    printf("keel bench select: %s, pool %u MiB, %d runs of %.2f s per "
           "configuration\n",
           dir, o.pool_mb, o.runs, o.seconds);
    fflush(stdout);
    if (select_all(&o, dir, res, &accounts) != 0)
        rc = 1;
    if (rc == 0) {
        select_print(&o, res, nres);
        if (o.json != NULL &&
            select_write_json(&o, dir, accounts, res, nres) != 0)
            rc = 1;
    }
    if (o.dir == NULL)
        bench_dir_remove(tmp);
    free(res);
    return rc;
}

/* ---- bloat ------------------------------------------------------- */

typedef struct bloat_result {
    const char *pruning; /* "off" or "on" */
    cache_opts opts;
    double tps;                      /* the median of tps_run[] */
    double tps_run[BLOAT_MAX_PAIRS]; /* pair by pair */
    /* The process's minor page faults over each run (getrusage()). */
    uint64_t faults_run[BLOAT_MAX_PAIRS];
    uint64_t elapsed_ns; /* of the first run */
    client_thread *t;    /* the first run's clients, with their samples */
} bloat_result;

/* The pairs' throughput ratios, pruning on over off (o->pairs of them),
 * and their summary. */
typedef struct bloat_ratios {
    double r[BLOAT_MAX_PAIRS];
    bench_stat st; /* median, min, max */
    bench_ci ci;   /* of the mean; with one pair, no interval */
} bloat_ratios;

/* Pair p runs off then on if p is even, on then off if odd, so that
 * neither setting gains from running first or last: the setting of the
 * pair's run j (0 or 1). */
static int bloat_setting(int p, int j)
{
    return p % 2 == 0 ? j : 1 - j;
}

static void bloat_ratios_of(const select_opts *o, const bloat_result *res,
                            bloat_ratios *q)
{
    double v[BLOAT_MAX_PAIRS];

    for (int p = 0; p < o->pairs; p++)
        q->r[p] = v[p] = res[1].tps_run[p] / res[0].tps_run[p];
    q->ci = bench_ci_of(q->r, o->pairs);
    q->st = bench_stat_of(v, o->pairs);
}

static int bloat_write_json(const select_opts *o, int32_t accounts,
                            const bloat_result *res)
{
    FILE *f = fopen(o->json, "w");
    uint32_t n = o->clients[0];
    bloat_ratios q;

    if (f == NULL) {
        fprintf(stderr, "%s: cannot write %s: %s\n", o->who, o->json,
                strerror(errno));
        return -1;
    }
    fprintf(f,
            "{\n  \"bench\": \"bloat\",\n  \"accounts\": %d,\n"
            "  \"clients\": %u,\n  \"transactions\": %llu,\n"
            "  \"samples_per_session\": %d,\n  \"memory\": \"%s\",\n"
            "  \"allocator_set\": %s",
            accounts, n, (unsigned long long)o->transactions, BLOAT_SAMPLES,
            o->memory_returned ? "returned" : "kept",
            BLOAT_MEMORY_SET ? "true" : "false");
    if (o->pruning >= 0) {
        fprintf(f, ",\n  \"pruning\": \"%s\",\n  \"runs\": %d",
                res[o->pruning].pruning, o->pairs);
    } else {
        bloat_ratios_of(o, res, &q);
        fprintf(f,
                ",\n  \"pairs\": %d,\n"
                "  \"order\": \"pairs alternate: off then on, on then "
                "off\",\n"
                "  \"tps_on_over_off\": %.4f,\n"
                "  \"tps_on_over_off_min\": %.4f,\n"
                "  \"tps_on_over_off_max\": %.4f,\n"
                "  \"tps_on_over_off_runs\": [",
                o->pairs, q.st.median, q.st.min, q.st.max);
        for (int p = 0; p < o->pairs; p++)
            fprintf(f, "%s%.4f", p ? ", " : "", q.r[p]);
        fputs("]", f);
        if (o->pairs >= 2)
            fprintf(f,
                    ",\n  \"tps_on_over_off_mean\": %.4f,\n"
                    "  \"tps_on_over_off_ci\": [%.4f, %.4f]",
                    q.ci.mean, q.ci.low, q.ci.high);
    }
    for (int k = 0; k < 2; k++) {
        const bloat_result *b = &res[k];
        if (b->t == NULL)
            continue;
        fprintf(f, ",\n  \"%s\": {\"tps\": %.1f, \"tps_runs\": [", b->pruning,
                b->tps);
        for (int p = 0; p < o->pairs; p++)
            fprintf(f, "%s%.1f", p ? ", " : "", b->tps_run[p]);
        fputs("], \"page_faults_runs\": [", f);
        for (int p = 0; p < o->pairs; p++)
            fprintf(f, "%s%llu", p ? ", " : "",
                    (unsigned long long)b->faults_run[p]);
        fprintf(f,
                "], \"elapsed_s\": %.4f, "
                "\"prune_min_age\": %d, \"memory_target\": %llu,\n"
                "    \"sessions\": [",
                (double)b->elapsed_ns / 1e9, b->opts.prune_min_age,
                (unsigned long long)b->opts.memory_target);
        for (uint32_t i = 0; i < n; i++) {
            const client_thread *t = &b->t[i];
            const char *sep = "";
            fprintf(f,
                    "%s\n      {\"client\": %u, \"transactions\": %llu, "
                    "\"final_bytes\": %llu, \"final_block_bytes\": %llu, "
                    "\"entries\": %llu, "
                    "\"negative_entries\": %llu, \"evictions\": %llu, "
                    "\"age_prunes\": %llu, \"cache_misses\": %llu,\n"
                    "       \"txn\": [",
                    i ? "," : "", i, (unsigned long long)t->counts.txns,
                    (unsigned long long)t->final.bytes,
                    (unsigned long long)t->final.block_bytes,
                    (unsigned long long)t->final.entries,
                    (unsigned long long)t->final.negative_entries,
                    (unsigned long long)t->final.evictions,
                    (unsigned long long)t->final.age_prunes,
                    (unsigned long long)t->counts.misses);
            for (int s = 0; s < BLOAT_SAMPLES; s++, sep = ", ")
                fprintf(f, "%s%llu", sep,
                        (unsigned long long)t->samples[s].txn);
            fputs("],\n       \"elapsed_s\": [", f);
            sep = "";
            for (int s = 0; s < BLOAT_SAMPLES; s++, sep = ", ")
                fprintf(f, "%s%.4f", sep,
                        (double)t->samples[s].elapsed_ns / 1e9);
            fputs("],\n       \"bytes\": [", f);
            sep = "";
            for (int s = 0; s < BLOAT_SAMPLES; s++, sep = ", ")
                fprintf(f, "%s%llu", sep,
                        (unsigned long long)t->samples[s].bytes);
            fputs("]}", f);
        }
        fputs("\n    ]}", f);
    }
    fputs("\n}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", o->who, o->json);
        return -1;
    }
    return 0;
}

static void bloat_print(const select_opts *o, const bloat_result *res)
{
    printf("\n  %-7s %6s %10s %9s %12s %12s %12s %10s\n", "pruning", "client",
           "tps", "elapsed_s", "bytes_start", "bytes_mid", "bytes_end",
           "bytes/txn");
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; res[k].t != NULL && i < o->clients[0]; i++) {
            const client_thread *t = &res[k].t[i];
            const bloat_sample *s = t->samples;
            double slope = (double)((int64_t)s[BLOAT_SAMPLES - 1].bytes -
                                    (int64_t)s[0].bytes) /
                           (double)o->transactions;
            printf("  %-7s %6u %10.0f %9.3f %12llu %12llu %12llu %10.1f\n",
                   res[k].pruning, i, res[k].tps,
                   (double)res[k].elapsed_ns / 1e9,
                   (unsigned long long)s[0].bytes,
                   (unsigned long long)s[BLOAT_SAMPLES / 2].bytes,
                   (unsigned long long)s[BLOAT_SAMPLES - 1].bytes, slope);
        }
    if (o->pruning >= 0) {
        const bloat_result *b = &res[o->pruning];
        printf("  runs, pruning %s only, tps:", b->pruning);
        for (int p = 0; p < o->pairs; p++)
            printf("%s %.0f", p ? "," : "", b->tps_run[p]);
        printf("\n");
    } else {
        bloat_ratios q;
        bloat_ratios_of(o, res, &q);
        printf("  throughput with pruning on / off: median %.3f of %d %s "
               "(%.3f-%.3f",
               q.st.median, o->pairs, o->pairs == 1 ? "pair" : "pairs",
               q.st.min, q.st.max);
        if (o->pairs >= 2)
            printf("; 95%% CI of the mean %.3f-%.3f", q.ci.low, q.ci.high);
        printf(")\n  pairs, alternately off then on and on then off, tps off "
               "/ on:");
        for (int p = 0; p < o->pairs; p++)
            printf("%s %.0f / %.0f", p ? "," : "", res[0].tps_run[p],
                   res[1].tps_run[p]);
        printf("\n");
    }
}

/* Sets the allocator's thresholds for --memory (see the file's comment).
 * 0, or -1 after a message. */
static int bloat_memory_set(const select_opts *o)
{
    if (!BLOAT_MEMORY_SET)
        return 0;
    /* kept: no trimming, and blocks up to glibc's largest mmap threshold
     * (32 MiB on 64 bits) from the heap; returned: glibc's defaults,
     * fixed, so that freeing large blocks does not raise them. */
    int mmap_at = o->memory_returned ? 128 * 1024 : 32 * 1024 * 1024;
    int trim_at = o->memory_returned ? 128 * 1024 : -1;

    if (mallopt(M_MMAP_THRESHOLD, mmap_at) != 1 ||
        mallopt(M_TRIM_THRESHOLD, trim_at) != 1) {
        fprintf(stderr, "%s: the allocator refused its thresholds\n", o->who);
        return -1;
    }
    return 0;
}

/* The process's minor page faults so far (0 if getrusage() fails). */
static uint64_t minor_faults(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_minflt : 0;
}

/* One run of the clients with the cache options of res, its page faults
 * in *faults.  NULL after a message. */
static client_thread *bloat_run(client_run *run, const bloat_result *res,
                                int index, uint64_t *elapsed, uint64_t *faults)
{
    uint64_t f0 = minor_faults();
    client_thread *t;

    run->bloat_run = index;
    run->cache_opts = &res->opts;
    t = clients_run(run, run->o->clients[0], 0, elapsed);
    *faults = minor_faults() - f0;
    return t;
}

int bench_bloat_main(int argc, char **argv)
{
    select_opts o;
    bloat_result res[2];
    client_run run;
    char tmp[4096];
    const char *dir;
    int rc = 0, nset;

    if (parse_opts(argc, argv, true, &o) != 0) {
        usage_bloat();
        return 2;
    }
    nset = o.pruning < 0 ? 2 : 1;
    memset(res, 0, sizeof(res));
    res[0].pruning = "off";
    res[0].opts.prune_min_age = -1;
    res[0].opts.memory_target = 0;
    res[1].pruning = "on";
    res[1].opts.prune_min_age = KEEL_CATALOG_CACHE_PRUNE_MIN_AGE_DEFAULT;
    res[1].opts.memory_target = KEEL_CATALOG_CACHE_MEMORY_TARGET_DEFAULT;
    if (o.dir == NULL) {
        if (bench_db_create(o.who, "bench-bloat", o.scale, tmp, sizeof(tmp)) !=
            0)
            return 1;
        dir = tmp;
    } else {
        dir = o.dir;
    }
    memset(&run, 0, sizeof(run));
    run.o = &o;
    run.bloat = true;
    if (db_open(&o, dir, PROCARRAY_PADDED,
                o.clients[0] + 1 > 64 ? o.clients[0] + 1 : 64, &run.db) != 0 ||
        db_warm(&o, run.db, &run.accounts) != 0) {
        if (run.db != NULL)
            db_close(run.db);
        if (o.dir == NULL)
            bench_dir_remove(tmp);
        return 1;
    }
    printf("keel bench bloat: %s, %u clients, %llu transactions each, each "
           "probing a new name%s; memory %s\n",
           dir, o.clients[0], (unsigned long long)o.transactions,
           nset == 2   ? ""
           : o.pruning ? "; pruning on only"
                       : "; pruning off only",
           o.memory_returned ? "returned after each run" : "kept");
    fflush(stdout);
    if (bloat_memory_set(&o) != 0)
        rc = 1;
    if (rc == 0 && nset == 2 && !o.memory_returned) {
        uint64_t elapsed, faults;
        client_thread *t =
            bloat_run(&run, &res[0], nset * o.pairs, &elapsed, &faults);
        if (t == NULL) {
            rc = 1;
        } else {
            fprintf(stderr,
                    "  warm-up, pruning off, not counted: %llu page faults\n",
                    (unsigned long long)faults);
            for (uint32_t i = 0; i < o.clients[0]; i++)
                free(t[i].lat);
            free(t);
        }
    }
    for (int j = 0; j < nset * o.pairs && rc == 0; j++) {
        int p = j / nset;
        int k = nset == 2 ? bloat_setting(p, j % 2) : o.pruning;
        uint64_t txns = 0, elapsed;
        client_thread *t =
            bloat_run(&run, &res[k], j, &elapsed, &res[k].faults_run[p]);
        if (t == NULL) {
            rc = 1;
            break;
        }
        for (uint32_t i = 0; i < o.clients[0]; i++)
            txns += t[i].counts.txns;
        res[k].tps_run[p] = (double)txns / ((double)elapsed / 1e9);
        fprintf(stderr, "  %s %d/%d, pruning %s: %.0f tps, %llu page faults\n",
                nset == 2 ? "pair" : "run", p + 1, o.pairs, res[k].pruning,
                res[k].tps_run[p], (unsigned long long)res[k].faults_run[p]);
        if (res[k].t == NULL) {
            res[k].t = t;
            res[k].elapsed_ns = elapsed;
        } else {
            for (uint32_t i = 0; i < o.clients[0]; i++)
                free(t[i].lat);
            free(t);
        }
    }
    for (int k = 0; k < 2 && rc == 0; k++) {
        double v[BLOAT_MAX_PAIRS];
        if (res[k].t == NULL)
            continue;
        memcpy(v, res[k].tps_run, sizeof(v));
        res[k].tps = bench_stat_of(v, o.pairs).median;
    }
    db_close(run.db);
    if (rc == 0) {
        bloat_print(&o, res);
        if (o.json != NULL && bloat_write_json(&o, run.accounts, res) != 0)
            rc = 1;
    }
    for (int k = 0; k < 2; k++) {
        if (res[k].t == NULL)
            continue;
        for (uint32_t i = 0; i < o.clients[0]; i++)
            free(res[k].t[i].lat);
        free(res[k].t);
    }
    if (o.dir == NULL)
        bench_dir_remove(tmp);
    return rc;
}
