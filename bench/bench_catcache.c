/*
 * bench_catcache.c: `keel bench catcache`: the catalog cache's hit path,
 * and its memory under a stream of lookups of names that do not exist.
 *
 * Hit path.  In one session with its own syscache, every entry used is
 * first brought into the cache; then tight loops of search + release,
 * each lookup a cache hit, are timed:
 *   hit1_ns          syscache_search1(CACHE_CLASS_OID): a relation by oid,
 *                    cycling over 8 relations
 *   hit3_ns          syscache_search3(CACHE_STATISTIC): (relid, attnum,
 *                    inherited) of one table, cycling over its 8 analyzed
 *                    columns, as PostgreSQL's catcachebench does
 *   negative_hit_ns  syscache_search2(CACHE_CLASS_NAME) of a name cached
 *                    as missing in keel_catalog, cycling over 8 names
 * Each is measured with the protection against bloat enabled at run time
 * (syscache_options_default(): age pruning and the memory target) and
 * disabled (prune_min_age -1, memory_target 0), in pairs of rounds whose
 * order alternates (on/off, off/on, ...), each round its own transaction
 * and worth, per measure, the fastest of 5 runs of a fifth of its lookups.
 * Reported: the median over rounds with min and max of each, and per
 * measure the ratio enabled/disabled as the mean of the per-pair ratios
 * with its 95% confidence interval by Student's t (bench_ci_of());
 * prune_time_ratio is that of the per-pair ratio of the three measures'
 * summed times.
 *
 * Bloat.  In a fresh syscache, N distinct names that do not exist
 * (CACHE_CLASS_NAME in public) are looked up in transactions of 100, each
 * followed by a lookup from a hot set of 10,000 existing keel_attribute
 * rows (CACHE_ATTRIBUTE_NUM of 40 tables of 250 columns), taken in turn.
 * Once with the protection disabled, once enabled; reported: the cache's
 * bytes before and after (and the most seen after any lookup), the
 * memory blocks the cache's allocator holds at the end (block_bytes), the
 * process's resident memory before the run (once freed memory has been
 * given back to the system, malloc_trim()) and at its end, before the
 * cache is destroyed, and the hit ratio of the hot lookups after the hot
 * set's first pass.  A
 * third run has age pruning alone (no memory target) with a simulated
 * clock that advances a second per transaction, so that entries age
 * within the run: the missing names then outlive prune_min_age while the
 * hot set, used every 100 transactions, does not.
 *
 * Sizes: 100 pairs of rounds of 1,000,000 lookups per measure and
 * 1,000,000 names (--rounds, --lookups, --names); --quick: 8 pairs of
 * 100,000 and 50,000 names.
 *
 * --loop N runs exactly N lookups + releases of each kind in the loop
 * functions the timings use (bench_catcache_loop_hit1, _hit3, _negative),
 * after 8 of each through the same functions to bring the entries in, for
 * `valgrind --tool=callgrind --toggle-collect=bench_catcache_loop*` to
 * count (bench/catcache-instructions.sh), and prints their time; with
 * --rounds R it runs them R times and prints the fastest round of each.
 *
 * Without DIR the database is created in a temporary directory and
 * removed afterwards; with DIR it is opened, or created there if DIR holds
 * none, and the benchmark's tables are added if missing.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "bench_db.h"
#include "cache/syscache.h"
#include "engine/engine.h"
#include "port/clock.h"
#include "stats.h"

#define MAX_PAIRS 256

/* The table whose columns are analyzed (hit3), and its size. */
#define STAT_TABLE   "cc_stat"
#define STAT_COLUMNS 8
#define STAT_ROWS    1000

/* The hot set of the bloat runs: every column of HOT_TABLES tables. */
#define HOT_TABLES  40
#define HOT_COLUMNS 250
#define HOT_SET     (HOT_TABLES * HOT_COLUMNS)

/* Lookups of missing names per transaction in the bloat runs. */
#define BLOAT_TXN_NAMES 100

/* Simulated seconds per transaction of the age-only bloat run. */
#define AGE_CLOCK_STEP 1

/* Runs per timing round; the fastest counts (time_round()). */
#define ROUND_RUNS 5

/* Entries each hit loop cycles over (a power of two). */
#define CYCLE 8

/* The layout of the results table. */
static const bench_table results_table = {28, 2};

/* Keeps the compiler from dropping a result it sees unused, and from
 * merging or hoisting the memory accesses of consecutive iterations. */
#define BENCH_USE(x) __asm__ __volatile__("" : : "r"(x) : "memory")

typedef struct cc_opts {
    const char *dir;
    const char *json;
    int pairs;       /* ON/OFF pairs of timing rounds; --loop: rounds */
    uint64_t iters;  /* lookups per measure and round */
    uint64_t names;  /* missing names per bloat run */
    uint64_t loop;   /* --loop N, 0 without */
    bool loop_prune; /* --loop with the protection enabled */
    bool quick;
} cc_opts;

typedef struct cc_env {
    keel_db *db;
    keel_session *s;
    catalog_txn ct; /* the running transaction's, for the cache's misses */
    oid_t stat_oid;
    oid_t hot_oid[HOT_TABLES];
    oid_t hit1_oid[CYCLE];               /* relations of the hit1 loop */
    char neg_name[CYCLE][KEEL_NAME_LEN]; /* names of the negative loop */
} cc_env;

/* One bloat run's results. */
typedef struct cc_bloat {
    syscache_stats before, after;
    uint64_t peak_bytes;   /* most bytes seen after a step */
    uint64_t hot_lookups;  /* hot lookups after the first pass */
    uint64_t hot_hits;     /* of which found in the cache */
    double ns_per_name;    /* a missing name and a hot lookup, per name */
    uint64_t count_errors; /* transactions whose counters do not add up */
    uint64_t rss_before;   /* resident bytes before the cache was made */
    uint64_t rss_after;    /* and at the run's end (0: unreadable) */
} cc_bloat;

static void usage(void)
{
    fprintf(stderr, "usage: keel bench catcache [DIR] [--json FILE] "
                    "[--rounds N] [--lookups N] [--names N] [--quick]\n"
                    "       keel bench catcache [DIR] --loop N "
                    "[--rounds N] [--prune on|off]\n");
}

/* What the catcache options set beyond cc_opts: 0 where not given. */
typedef struct cc_args {
    cc_opts *o;
    uint64_t rounds, names, lookups;
} cc_args;

static int cc_option(const bench_args *a, void *ctx)
{
    cc_args *c = ctx;

    if (strcmp(a->name, "--json") == 0) {
        return bench_args_out_file(a, &c->o->json);
    } else if (strcmp(a->name, "--rounds") == 0) {
        return bench_args_u64(a, 1, MAX_PAIRS, &c->rounds);
    } else if (strcmp(a->name, "--lookups") == 0) {
        return bench_args_u64(a, 1000, UINT64_C(100000000), &c->lookups);
    } else if (strcmp(a->name, "--names") == 0) {
        return bench_args_u64(a, 2 * HOT_SET, UINT64_C(100000000), &c->names);
    } else if (strcmp(a->name, "--loop") == 0) {
        return bench_args_u64(a, 1, UINT64_MAX, &c->o->loop);
    } else if (strcmp(a->name, "--prune") == 0) {
        if (strcmp(a->value, "on") != 0 && strcmp(a->value, "off") != 0) {
            fprintf(stderr, "%s: option --prune takes on or off, not '%s'\n",
                    a->who, a->value);
            return -1;
        }
        c->o->loop_prune = strcmp(a->value, "on") == 0;
    } else {
        return bench_args_unknown(a);
    }
    return 0;
}

static int parse_opts(int argc, char **argv, cc_opts *o)
{
    cc_args c = {o, 0, 0, 0};

    memset(o, 0, sizeof(*o));
    o->loop_prune = true;
    if (bench_args_parse("keel bench catcache", argc, argv, &o->quick, &o->dir,
                         cc_option, &c) != 0)
        return -1;
    if (c.rounds == 1 && o->loop == 0) {
        fprintf(stderr, "keel bench catcache: bad value '1' for option "
                        "--rounds: at least 2 pairs (1 with --loop)\n");
        return -1;
    }
    o->pairs = c.rounds ? (int)c.rounds : o->loop ? 1 : o->quick ? 8 : 100;
    o->iters = c.lookups ? c.lookups : o->quick ? 100000 : 1000000;
    o->names = c.names ? c.names : o->quick ? 50000 : 1000000;
    /* Whole transactions of BLOAT_TXN_NAMES. */
    o->names =
        (o->names + BLOAT_TXN_NAMES - 1) / BLOAT_TXN_NAMES * BLOAT_TXN_NAMES;
    return 0;
}

/* Reports a failed call of the session and exits. */
__attribute__((noreturn, cold, noinline)) static void
cc_die(const cc_env *env, const char *what, int rc)
{
    fprintf(stderr, "keel bench catcache: %s: %s (%s)\n", what,
            keel_session_error(env->s), keel_status_str(rc));
    bench_exit(1);
}

/* ---- transactions ------------------------------------------------- */

/*
 * Starts a transaction of the session and sc's transaction on top of it:
 * retakes the snapshot until syscache_txn_begin() applied no message, so
 * that the cache and the snapshot agree.  Exits on failure.
 */
static void cc_txn_begin(cc_env *env, syscache *sc)
{
    keel_session *s = env->s;
    bool consumed = true;
    int rc = keel_begin(s);

    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, false, &env->ct);
    while (rc == KEEL_OK) {
        rc = syscache_txn_begin(sc, &env->ct, &consumed);
        if (rc != KEEL_OK || !consumed)
            break;
        rc = txn_refresh_snapshot(s->ts, &s->bs->err);
        if (rc == KEEL_OK)
            rc = engine_catalog_txn(s, false, &env->ct);
    }
    if (rc != KEEL_OK)
        cc_die(env, "starting a transaction", rc);
}

/* Ends sc's transaction and commits the session's.  Exits on failure. */
static void cc_txn_end(cc_env *env, syscache *sc)
{
    int rc;

    syscache_txn_end(sc);
    rc = keel_commit(env->s);
    if (rc != KEEL_OK)
        cc_die(env, "committing", rc);
}

/* ---- one lookup of each kind ---------------------------------------- */

/*
 * A lookup + release of each kind below is always inlined, so that a loop
 * measures the cache's inline search itself, as its callers compile it.
 */

__attribute__((noreturn, cold, noinline)) static void
cc_die_lookup(const cc_env *env, const char *kind, int rc)
{
    char what[64];

    snprintf(what, sizeof(what), "%s lookup", kind);
    cc_die(env, what, rc == KEEL_OK ? KEEL_EINVAL : rc);
}

/* A relation by oid; it must exist. */
static inline __attribute__((always_inline)) void
cc_hit1(const cc_env *env, syscache *sc, oid_t oid)
{
    catcache_entry *e;
    int rc = syscache_search1(sc, CACHE_CLASS_OID, oid, &e);

    if (__builtin_expect(rc != KEEL_OK, 0))
        cc_die_lookup(env, "CACHE_CLASS_OID", rc);
    BENCH_USE(e);
    syscache_release(sc, e);
}

/* The statistics of column attnum of relation relid; they must exist. */
static inline __attribute__((always_inline)) void
cc_hit3(const cc_env *env, syscache *sc, oid_t relid, uint16_t attnum)
{
    catcache_entry *e;
    int rc = syscache_search3(sc, CACHE_STATISTIC, relid, attnum, 0, &e);

    if (__builtin_expect(rc != KEEL_OK, 0))
        cc_die_lookup(env, "CACHE_STATISTIC", rc);
    BENCH_USE(e);
    syscache_release(sc, e);
}

/* A relation name in namespace nsoid; it must not exist. */
static inline __attribute__((always_inline)) void
cc_negative(const cc_env *env, syscache *sc, const char *name, oid_t nsoid)
{
    catcache_entry *e = NULL;
    int rc =
        syscache_search2(sc, CACHE_CLASS_NAME, SYSCACHE_NAME(name), nsoid, &e);

    if (__builtin_expect(rc != KEEL_ENOENT, 0)) {
        if (rc == KEEL_OK)
            syscache_release(sc, e);
        cc_die_lookup(env, "CACHE_CLASS_NAME (a missing name)", rc);
    }
    BENCH_USE(e);
}

/* ---- the hit loops ------------------------------------------------ */

/*
 * n lookups + releases of one kind, every one a cache hit, cycling over
 * CYCLE entries.  Not inlined: the timings call them, and callgrind's
 * --toggle-collect=bench_catcache_loop* counts exactly these (--loop).
 */
__attribute__((noinline)) static void
bench_catcache_loop_hit1(const cc_env *env, syscache *sc, uint64_t n)
{
    const oid_t *oids = env->hit1_oid;

    for (uint64_t i = 0; i < n; i++)
        cc_hit1(env, sc, oids[i & (CYCLE - 1)]);
}

__attribute__((noinline)) static void
bench_catcache_loop_hit3(const cc_env *env, syscache *sc, uint64_t n)
{
    oid_t relid = env->stat_oid;

    for (uint64_t i = 0; i < n; i++)
        cc_hit3(env, sc, relid, (uint16_t)((i & (CYCLE - 1)) + 1));
}

__attribute__((noinline)) static void
bench_catcache_loop_negative(const cc_env *env, syscache *sc, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        cc_negative(env, sc, env->neg_name[i & (CYCLE - 1)], NAMESPACE_CATALOG);
}

/* Brings every entry of the hit loops into sc (inside a transaction). */
static void cc_warm(const cc_env *env, syscache *sc)
{
    bench_catcache_loop_hit1(env, sc, CYCLE);
    bench_catcache_loop_hit3(env, sc, CYCLE);
    bench_catcache_loop_negative(env, sc, CYCLE);
}

typedef void (*cc_loop_fn)(const cc_env *env, syscache *sc, uint64_t n);

/* Nanoseconds per lookup of n lookups by loop. */
static double time_loop(const cc_env *env, syscache *sc, cc_loop_fn loop,
                        uint64_t n)
{
    uint64_t t0 = clock_now_ns();

    loop(env, sc, n);
    return (double)(clock_now_ns() - t0) / (double)n;
}

/* A new syscache over the database, with options o; exits on failure. */
static syscache *cc_syscache(cc_env *env, const syscache_options *o)
{
    syscache *sc;
    kerr err = {0};

    if (syscache_create(env->db->cat, env->db->inval, o, &sc, &err) !=
        KEEL_OK) {
        fprintf(stderr, "keel bench catcache: creating a syscache: %s\n",
                err.msg);
        bench_exit(1);
    }
    return sc;
}

/* ---- bloat -------------------------------------------------------- */

/*
 * One step of a bloat run: a missing name, then a hot-set column, through
 * the out-of-line syscache_search() (this is not the hit path measured).
 */
static void cc_bloat_step(const cc_env *env, syscache *sc, const char *name,
                          oid_t relid, uint16_t attnum)
{
    syscache_key neg[2] = {SYSCACHE_NAME(name), NAMESPACE_PUBLIC};
    syscache_key att[2] = {relid, attnum};
    catcache_entry *e = NULL;
    int rc = syscache_search(sc, CACHE_CLASS_NAME, neg, &e);

    if (rc != KEEL_ENOENT) {
        if (rc == KEEL_OK)
            syscache_release(sc, e);
        cc_die_lookup(env, "CACHE_CLASS_NAME (a missing name)", rc);
    }
    rc = syscache_search(sc, CACHE_ATTRIBUTE_NUM, att, &e);
    if (rc != KEEL_OK)
        cc_die_lookup(env, "CACHE_ATTRIBUTE_NUM", rc);
    syscache_release(sc, e);
}

/*
 * The process's resident memory in bytes (/proc/self/statm's second
 * field, in pages), or 0 if it cannot be read.
 */
static uint64_t cc_resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size, resident;
    long page = sysconf(_SC_PAGESIZE);
    int n;

    if (f == NULL)
        return 0;
    n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    return n == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}

/* A session clock that a bloat run advances by itself (seconds). */
static uint64_t cc_clock_read(void *ctx)
{
    return *(const uint64_t *)ctx;
}

/*
 * One bloat run in a fresh syscache with options o: names missing names,
 * each followed by the next hot-set lookup, BLOAT_TXN_NAMES per
 * transaction.  With clock_step > 0 the session's clock is simulated and
 * advances clock_step seconds per transaction (else it is the real one).
 * A hot lookup's hit or miss is told by the cache's own counters: a
 * missing name that was never looked up cannot be a hit, so the positive
 * hits of a transaction are its hot lookups' hits.
 */
static void run_bloat(cc_env *env, const syscache_options *o, uint64_t names,
                      uint32_t clock_step, cc_bloat *out)
{
    syscache *sc;
    syscache_stats st;
    char name[KEEL_NAME_LEN];
    uint64_t t0, k = 0, now = 1000000;

    memset(out, 0, sizeof(*out));
    /* What an earlier run freed goes back to the system first, so that
     * the growth counts the pages this run's cache maps, not the reuse of
     * ones already resident. */
    malloc_trim(0);
    out->rss_before = cc_resident_bytes();
    sc = cc_syscache(env, o);
    if (clock_step > 0)
        syscache_set_clock(sc, cc_clock_read, &now);
    syscache_get_stats(sc, &out->before);
    t0 = clock_now_ns();
    for (uint64_t t = 0; t < names / BLOAT_TXN_NAMES; t++) {
        syscache_stats st0;
        uint64_t counted;

        now += clock_step;
        cc_txn_begin(env, sc);
        syscache_get_stats(sc, &st0);
        for (int j = 0; j < BLOAT_TXN_NAMES; j++, k++) {
            uint64_t h = k % HOT_SET;
            snprintf(name, sizeof(name), "cc_missing_%08llu",
                     (unsigned long long)k);
            cc_bloat_step(env, sc, name, env->hot_oid[h / HOT_COLUMNS],
                          (uint16_t)(h % HOT_COLUMNS + 1));
            syscache_get_stats(sc, &st);
            if (st.bytes > out->peak_bytes)
                out->peak_bytes = st.bytes;
        }
        /* Transactions wholly after the first pass (HOT_SET is a multiple
         * of BLOAT_TXN_NAMES). */
        if (k > HOT_SET) {
            out->hot_lookups += BLOAT_TXN_NAMES;
            out->hot_hits += st.hits - st0.hits;
        }
        /* Every lookup is a hit, a negative hit or a miss, and no missing
         * name was seen before: else the counters cannot tell hot hits. */
        counted = (st.hits - st0.hits) + (st.misses - st0.misses) +
                  (st.negative_hits - st0.negative_hits);
        if (counted != 2 * BLOAT_TXN_NAMES ||
            st.negative_hits != st0.negative_hits)
            out->count_errors++;
        cc_txn_end(env, sc);
    }
    out->ns_per_name = (double)(clock_now_ns() - t0) / (double)names;
    if (out->count_errors > 0)
        fprintf(stderr,
                "keel bench catcache: warning: in %llu transactions the "
                "cache's hit, negative hit and miss counters do not add up "
                "to the lookups made\n",
                (unsigned long long)out->count_errors);
    syscache_get_stats(sc, &out->after);
    out->rss_after = cc_resident_bytes();
    syscache_destroy(sc);
}

/* The resident memory the run grew by (0 if unread or shrunk). */
static uint64_t cc_rss_growth(const cc_bloat *b)
{
    return b->rss_before > 0 && b->rss_after > b->rss_before
               ? b->rss_after - b->rss_before
               : 0;
}

/* ---- the database --------------------------------------------------- */

/* Creates table name with ncols int4 columns named prefix%03d unless it
 * exists; with rows, fills it with that many rows and analyzes it. */
static void ensure_table(cc_env *env, const char *name, uint16_t ncols,
                         const char *prefix, int rows)
{
    keel_session *s = env->s;
    keel_column cols[CATALOG_MAX_COLUMNS];
    keel_value vals[CATALOG_MAX_COLUMNS];
    char names[CATALOG_MAX_COLUMNS][16];
    uint16_t have;
    int rc = keel_table_columns(s, NULL, name, &have);

    if (rc == KEEL_OK)
        return;
    if (rc != KEEL_ENOENT)
        cc_die(env, name, rc);
    memset(cols, 0, sizeof(cols));
    for (uint16_t c = 0; c < ncols; c++) {
        snprintf(names[c], sizeof(names[c]), "%s%03u", prefix, c + 1u);
        cols[c].name = names[c];
        cols[c].type = KEEL_INT4;
    }
    rc = keel_create_table(s, NULL, name, cols, ncols, NULL, 0);
    if (rc != KEEL_OK)
        cc_die(env, "creating a table", rc);
    if (rows == 0)
        return;
    rc = keel_begin(s);
    for (int r = 0; rc == KEEL_OK && r < rows; r++) {
        for (uint16_t c = 0; c < ncols; c++) {
            vals[c].isnull = false;
            /* Column c has c + 2 distinct values: statistics differ. */
            vals[c].v.i4 = r % (c + 2);
        }
        rc = keel_insert(s, NULL, name, vals);
    }
    if (rc == KEEL_OK)
        rc = keel_commit(s);
    else
        keel_abort(s);
    if (rc == KEEL_OK)
        rc = keel_analyze(s, NULL, name);
    if (rc != KEEL_OK)
        cc_die(env, "filling the analyzed table", rc);
}

/* The oid of table name in public (exits if there is none). */
static oid_t table_oid(cc_env *env, const char *name)
{
    catalog_relation rel;
    int rc = keel_begin(env->s);

    if (rc == KEEL_OK)
        rc = engine_catalog_txn(env->s, false, &env->ct);
    if (rc == KEEL_OK)
        rc = catalog_relation_by_name(env->db->cat, &env->ct, name,
                                      NAMESPACE_PUBLIC, &rel);
    if (rc == KEEL_OK)
        rc = keel_commit(env->s);
    else
        keel_abort(env->s);
    if (rc != KEEL_OK)
        cc_die(env, name, rc);
    return rel.oid;
}

/*
 * Opens (or creates, with create) the database in dir, starts a session,
 * creates the benchmark's tables if they are missing and resolves their
 * oids.  Exits on failure.
 */
static void env_open(cc_env *env, const char *dir, bool create)
{
    keel_db_options o;
    keel_error e = {0};
    char name[KEEL_NAME_LEN];
    int rc;

    memset(env, 0, sizeof(*env));
    keel_db_options_init(&o);
    o.dir = dir;
    rc = create ? KEEL_ENOENT : keel_db_open(&o, &env->db, &e);
    if (rc == KEEL_ENOENT) {
        fprintf(stderr, "creating a database in %s\n", dir);
        rc = keel_db_create(&o, &e);
        if (rc == KEEL_OK)
            rc = keel_db_open(&o, &env->db, &e);
    }
    if (rc == KEEL_OK)
        rc = keel_session_begin(env->db, &env->s, &e);
    if (rc != KEEL_OK) {
        fprintf(stderr, "keel bench catcache: %s\n", e.msg);
        bench_exit(1);
    }
    for (int t = 0; t < HOT_TABLES; t++) {
        snprintf(name, sizeof(name), "cc_hot_%02d", t);
        ensure_table(env, name, HOT_COLUMNS, "a", 0);
        env->hot_oid[t] = table_oid(env, name);
    }
    ensure_table(env, STAT_TABLE, STAT_COLUMNS, "c", STAT_ROWS);
    env->stat_oid = table_oid(env, STAT_TABLE);
    env->hit1_oid[0] = env->stat_oid;
    for (int i = 1; i < CYCLE; i++)
        env->hit1_oid[i] = env->hot_oid[i - 1];
    for (int i = 0; i < CYCLE; i++)
        snprintf(env->neg_name[i], KEEL_NAME_LEN, "cc_no_such_relation_%d", i);
}

static void env_close(cc_env *env)
{
    keel_error e = {0};

    keel_session_end(env->s);
    if (keel_db_close(env->db, &e) != KEEL_OK)
        fprintf(stderr, "keel bench catcache: closing: %s\n", e.msg);
}

/* ---- the modes ---------------------------------------------------- */

/* The build's pruning configuration, as text for the output. */
static void build_config(char *buf, size_t len)
{
#if KEEL_CATCACHE_PRUNE
    snprintf(buf, len, "pruning compiled in, wiring %d",
             (int)KEEL_CATCACHE_WIRING);
#else
    snprintf(buf, len, "pruning compiled out");
#endif
}

/* The measures of the hit path. */
enum { M_HIT1, M_HIT3, M_NEG, M_COUNT };

static const char *const measure_name[M_COUNT] = {"hit1", "hit3",
                                                  "negative_hit"};
static const char *const measure_note[M_COUNT] = {
    "CACHE_CLASS_OID, 1 key", "CACHE_STATISTIC, 3 keys",
    "CACHE_CLASS_NAME, cached miss"};
static const double measure_target[M_COUNT] = {8, 10, 12};
static const cc_loop_fn measure_loop[M_COUNT] = {bench_catcache_loop_hit1,
                                                 bench_catcache_loop_hit3,
                                                 bench_catcache_loop_negative};

/*
 * --loop N: N lookups of each kind by the hit loops, timed, in one
 * transaction after the entries were brought into a new cache; with
 * --rounds R, R times, reporting the fastest round of each kind (the
 * least disturbed by other work on the machine).
 */
static int run_loop(cc_env *env, const cc_opts *o)
{
    static double t[M_COUNT][MAX_PAIRS];
    syscache_options so;
    syscache_stats st0, st1;
    syscache *sc;
    char cfg[96];
    double best[M_COUNT], sum = 0;

    syscache_options_default(&so);
    if (!o->loop_prune) {
        so.prune_min_age = -1;
        so.memory_target = 0;
    }
    sc = cc_syscache(env, &so);
    cc_txn_begin(env, sc);
    cc_warm(env, sc);
    syscache_get_stats(sc, &st0);
    for (int r = 0; r < o->pairs; r++)
        for (int m = 0; m < M_COUNT; m++)
            t[m][r] = time_loop(env, sc, measure_loop[m], o->loop);
    syscache_get_stats(sc, &st1);
    cc_txn_end(env, sc);
    syscache_destroy(sc);
    build_config(cfg, sizeof(cfg));
    printf("keel bench catcache --loop: %llu lookups of each kind in each of "
           "%d rounds, pruning %s at run time, %s\n",
           (unsigned long long)o->loop, o->pairs, o->loop_prune ? "on" : "off",
           cfg);
    if (st1.misses != st0.misses)
        printf("warning: %llu lookups of the loop missed the cache\n",
               (unsigned long long)(st1.misses - st0.misses));
    printf("lookups %llu\n",
           (unsigned long long)(M_COUNT * o->loop * (uint64_t)o->pairs));
    for (int m = 0; m < M_COUNT; m++) {
        best[m] = bench_stat_of(t[m], o->pairs).min;
        sum += best[m];
        printf("%s_ns %.3f\n", measure_name[m], best[m]);
    }
    printf("loop_ns_per_lookup %.3f\n", sum / M_COUNT);
    return 0;
}

/*
 * One round of each measure in its own transaction, with options o: the
 * fastest of ROUND_RUNS runs of n / ROUND_RUNS lookups, so that a round
 * the scheduler interrupts still reports what the loop costs.
 */
static void time_round(cc_env *env, syscache *sc, const syscache_options *o,
                       uint64_t n, double *t)
{
    syscache_set_options(sc, o);
    cc_txn_begin(env, sc);
    for (int m = 0; m < M_COUNT; m++) {
        t[m] = time_loop(env, sc, measure_loop[m], n / ROUND_RUNS);
        for (int r = 1; r < ROUND_RUNS; r++) {
            double x = time_loop(env, sc, measure_loop[m], n / ROUND_RUNS);
            t[m] = x < t[m] ? x : t[m];
        }
    }
    cc_txn_end(env, sc);
}

static void print_bloat_row(const char *label, const cc_bloat *b,
                            uint64_t target)
{
    double ratio = b->hot_lookups ? (double)b->hot_hits / b->hot_lookups : 0;
    printf("  %-12s %12llu %12llu %12llu %12llu %12llu %12llu %10.4f %10llu "
           "%9llu %8.0f\n",
           label, (unsigned long long)b->before.bytes,
           (unsigned long long)b->after.bytes,
           (unsigned long long)b->peak_bytes,
           (unsigned long long)b->after.block_bytes,
           (unsigned long long)cc_rss_growth(b), (unsigned long long)target,
           ratio, (unsigned long long)b->after.evictions,
           (unsigned long long)b->after.age_prunes, b->ns_per_name);
}

static void json_bloat(FILE *f, const char *suffix, const cc_bloat *b)
{
    fprintf(f,
            "  \"bloat_bytes_before_%s\": %llu,\n"
            "  \"bloat_bytes_%s\": %llu,\n"
            "  \"bloat_peak_bytes_%s\": %llu,\n"
            "  \"bloat_block_bytes_%s\": %llu,\n"
            "  \"bloat_rss_before_%s\": %llu,\n"
            "  \"bloat_rss_after_%s\": %llu,\n"
            "  \"bloat_rss_growth_%s\": %llu,\n"
            "  \"bloat_positive_bytes_%s\": %llu,\n"
            "  \"bloat_negative_bytes_%s\": %llu,\n"
            "  \"bloat_entries_%s\": %llu,\n"
            "  \"bloat_evictions_%s\": %llu,\n"
            "  \"bloat_age_prunes_%s\": %llu,\n"
            "  \"bloat_ns_per_name_%s\": %.1f,\n"
            "  \"bloat_counter_mismatches_%s\": %llu,\n"
            "  \"hot_hit_ratio_%s\": %.6f,\n",
            suffix, (unsigned long long)b->before.bytes, suffix,
            (unsigned long long)b->after.bytes, suffix,
            (unsigned long long)b->peak_bytes, suffix,
            (unsigned long long)b->after.block_bytes, suffix,
            (unsigned long long)b->rss_before, suffix,
            (unsigned long long)b->rss_after, suffix,
            (unsigned long long)cc_rss_growth(b), suffix,
            (unsigned long long)b->after.positive_bytes, suffix,
            (unsigned long long)b->after.negative_bytes, suffix,
            (unsigned long long)b->after.entries, suffix,
            (unsigned long long)b->after.evictions, suffix,
            (unsigned long long)b->after.age_prunes, suffix, b->ns_per_name,
            suffix, (unsigned long long)b->count_errors, suffix,
            b->hot_lookups ? (double)b->hot_hits / b->hot_lookups : 0.0);
}

int bench_catcache_main(int argc, char **argv)
{
    static double t_on[M_COUNT][MAX_PAIRS], t_off[M_COUNT][MAX_PAIRS];
    static double ratio[M_COUNT + 1][MAX_PAIRS];
    cc_opts o;
    cc_env env;
    syscache_options on, off, age;
    syscache *sc;
    cc_bloat b_off, b_on, b_age;
    bench_stat st_on[M_COUNT], st_off[M_COUNT];
    bench_ci ci[M_COUNT + 1];
    char cfg[96];
    bool own_dir = false;
    char tmpdir[4096];
    int rc = 0;

    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    if (o.dir == NULL) {
        /* Removed at exit, even by a failure, if not before. */
        if (bench_tmpdir_make("keel bench catcache", "bench-catcache", tmpdir,
                              sizeof(tmpdir)) != 0)
            return 1;
        own_dir = true;
        o.dir = tmpdir;
    }
    env_open(&env, o.dir, own_dir);
    if (o.loop > 0) {
        rc = run_loop(&env, &o);
        env_close(&env);
        if (own_dir)
            bench_dir_remove(tmpdir);
        return rc;
    }

    syscache_options_default(&on);
    off = on;
    off.prune_min_age = -1;
    off.memory_target = 0;
    age = on;
    age.memory_target = 0;
    build_config(cfg, sizeof(cfg));
    printf("keel bench catcache: %s, %s; %d pairs of rounds (pruning on/off "
           "alternating), %llu lookups per measure and round%s\n",
           o.dir, cfg, o.pairs, (unsigned long long)o.iters,
           o.quick ? " (quick)" : "");
    fflush(stdout);

    /* Hit path: one cache, warmed, options switched between rounds. */
    sc = cc_syscache(&env, &on);
    cc_txn_begin(&env, sc);
    cc_warm(&env, sc);
    cc_txn_end(&env, sc);
    {
        syscache_stats s0, s1;
        double dummy[M_COUNT];

        /* One unreported pair first: code and data into the CPU caches. */
        time_round(&env, sc, &on, o.iters / 4, dummy);
        time_round(&env, sc, &off, o.iters / 4, dummy);
        syscache_get_stats(sc, &s0);
        for (int p = 0; p < o.pairs; p++) {
            double a[M_COUNT], b[M_COUNT], son = 0, soff = 0;
            if (p % 2 == 0) {
                time_round(&env, sc, &on, o.iters, a);
                time_round(&env, sc, &off, o.iters, b);
            } else {
                time_round(&env, sc, &off, o.iters, b);
                time_round(&env, sc, &on, o.iters, a);
            }
            for (int m = 0; m < M_COUNT; m++) {
                t_on[m][p] = a[m];
                t_off[m][p] = b[m];
                ratio[m][p] = a[m] / b[m];
                son += a[m];
                soff += b[m];
            }
            ratio[M_COUNT][p] = son / soff;
        }
        syscache_get_stats(sc, &s1);
        if (s1.misses != s0.misses)
            fprintf(stderr,
                    "keel bench catcache: warning: %llu timed lookups missed "
                    "the cache\n",
                    (unsigned long long)(s1.misses - s0.misses));
    }
    syscache_destroy(sc);
    for (int m = 0; m <= M_COUNT; m++)
        ci[m] = bench_ci_of(ratio[m], o.pairs);
    for (int m = 0; m < M_COUNT; m++) {
        st_on[m] = bench_stat_of(t_on[m], o.pairs);
        st_off[m] = bench_stat_of(t_off[m], o.pairs);
    }

    /* Bloat: off first, then on, each in a fresh cache. */
    fprintf(stderr, "bloat run, pruning off: %llu missing names\n",
            (unsigned long long)o.names);
    run_bloat(&env, &off, o.names, 0, &b_off);
    fprintf(stderr, "bloat run, pruning on: %llu missing names\n",
            (unsigned long long)o.names);
    run_bloat(&env, &on, o.names, 0, &b_on);
    fprintf(stderr,
            "bloat run, age pruning only, simulated clock %d s per "
            "transaction: %llu missing names\n",
            AGE_CLOCK_STEP, (unsigned long long)o.names);
    run_bloat(&env, &age, o.names, AGE_CLOCK_STEP, &b_age);
    env_close(&env);
    if (own_dir)
        bench_dir_remove(tmpdir);

    bench_table_header(&results_table);
    for (int m = 0; m < M_COUNT; m++) {
        char name[64], note[96];
        snprintf(name, sizeof(name), "%s_ns", measure_name[m]);
        snprintf(note, sizeof(note), "%s, pruning on (target <= %.0f)",
                 measure_note[m], measure_target[m]);
        bench_table_row(&results_table, name, st_on[m], "ns", note);
        snprintf(name, sizeof(name), "%s_ns_pruning_off", measure_name[m]);
        bench_table_row(&results_table, name, st_off[m], "ns",
                        "the same, pruning off at run time");
    }
    printf("\n  %-*s %9s %9s %9s  (mean of %d per-pair ratios, 95%% CI by "
           "Student's t)\n",
           results_table.name_width, "time ratio on/off", "mean", "ci_low",
           "ci_high", o.pairs);
    for (int m = 0; m <= M_COUNT; m++) {
        char name[64];
        snprintf(name, sizeof(name), "%s",
                 m < M_COUNT ? measure_name[m] : "prune_time_ratio");
        printf("  %-*s %9.4f %9.4f %9.4f\n", results_table.name_width, name,
               ci[m].mean, ci[m].low, ci[m].high);
    }
    printf("\n  bloat: %llu missing names, %d per transaction, each followed "
           "by a lookup of a hot set of %d entries\n",
           (unsigned long long)o.names, BLOAT_TXN_NAMES, HOT_SET);
    printf("  %-12s %12s %12s %12s %12s %12s %12s %10s %10s %9s %8s\n",
           "pruning", "bytes before", "bytes after", "peak bytes",
           "block bytes", "RSS growth", "target", "hot hits", "evictions",
           "age prune", "ns/name");
    print_bloat_row("off", &b_off, 0);
    print_bloat_row("on", &b_on, on.memory_target);
    print_bloat_row("age only", &b_age, 0);
    /* Bytes per name are MB per million names. */
    printf("  growth with pruning off: %.1f MB per million names "
           "(PostgreSQL 15: 234 MB)\n",
           (double)(b_off.after.bytes - b_off.before.bytes) / (double)o.names);

    if (o.json != NULL) {
        FILE *f = fopen(o.json, "w");
        if (f == NULL) {
            fprintf(stderr, "keel bench catcache: cannot write %s: %s\n",
                    o.json, strerror(errno));
            return 1;
        }
        fprintf(f,
                "{\n  \"bench\": \"catcache\",\n  \"quick\": %s,\n"
                "  \"config\": \"%s\",\n  \"pairs\": %d,\n"
                "  \"lookups_per_round\": %llu,\n",
                o.quick ? "true" : "false", cfg, o.pairs,
                (unsigned long long)o.iters);
        for (int m = 0; m < M_COUNT; m++) {
            char name[64];
            snprintf(name, sizeof(name), "%s_ns", measure_name[m]);
            fputs("  ", f);
            bench_json_stat(f, name, st_on[m]);
            snprintf(name, sizeof(name), "%s_ns_pruning_off", measure_name[m]);
            fputs(",\n  ", f);
            bench_json_stat(f, name, st_off[m]);
            fputs(",\n", f);
        }
        for (int m = 0; m <= M_COUNT; m++) {
            const char *n = m < M_COUNT ? measure_name[m] : "prune_time";
            fprintf(f,
                    "  \"%s_ratio\": %.5f,\n  \"%s_ratio_ci_low\": %.5f,\n"
                    "  \"%s_ratio_ci_high\": %.5f,\n",
                    n, ci[m].mean, n, ci[m].low, n, ci[m].high);
        }
        fprintf(f,
                "  \"prune_time_ratio_ci_method\": \"mean of the per-pair "
                "ratios (pruning on / off, interleaved rounds) +- "
                "t(0.975, n-1) * sd / sqrt(n)\",\n"
                "  \"bloat_names\": %llu,\n  \"bloat_names_per_txn\": %d,\n"
                "  \"hot_set\": %d,\n  \"memory_target_bytes\": %llu,\n"
                "  \"prune_min_age_s\": %d,\n",
                (unsigned long long)o.names, BLOAT_TXN_NAMES, HOT_SET,
                (unsigned long long)on.memory_target, (int)on.prune_min_age);
        json_bloat(f, "pruning_off", &b_off);
        json_bloat(f, "pruning_on", &b_on);
        json_bloat(f, "age_only", &b_age);
        fprintf(f,
                "  \"bloat_growth_per_million_names_pruning_off\": %.0f\n}\n",
                (double)(b_off.after.bytes - b_off.before.bytes) * 1e6 /
                    (double)o.names);
        if (fclose(f) != 0) {
            fprintf(stderr, "keel bench catcache: cannot write %s\n", o.json);
            return 1;
        }
    }
    return 0;
}
