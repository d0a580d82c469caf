/*
 * bench_lookup.c: `keel bench lookup`: the cost of a primary-key lookup of
 * a random pgbench account, the read at the heart of pgbench's select-only
 * script.
 *
 * Measures, each as the median of several rounds with min and max, for
 * uniformly random aids, one session, every page resident:
 *   lookup_ns       the full lookup: btree_lookup_heap() on
 *                   pgbench_accounts_pkey with the session's directory of
 *                   the index (the leaf, with a pin and a share lock,
 *                   entered from the directory, the heap row it predicts
 *                   prefetched first) + heap_fetch_cols() of the row's
 *                   first three columns (aid, bid, abalance) with the
 *                   visibility check against the benchmark transaction's
 *                   snapshot, abalance taken out
 *   lookup_root_ns  the same without the directory: the descent from the
 *                   root, a pin and a share lock on every level
 *   lookup_unhinted_ns  the same with btree_lookup(): from the root, and no
 *                   heap prefetch, the heap page's misses starting when the
 *                   leaf's have ended
 *   fetch_row_ns    lookup_ns with heap_fetch(), which copies the whole row
 *                   and decodes every column (what keel_lookup() does)
 *   keel_lookup_ns  keel_lookup() (in the same transaction), which also
 *                   resolves the table's and index's names in the catalogs
 *                   on every call
 * and, untimed, how often the heap row was predicted and how often exactly.
 * For scale, in the same rounds:
 *   random_load_ns  one dependent load from a random line of 64 MiB (a
 *                   pointer chase, on huge pages where the kernel gives
 *                   them): what one cache miss to memory costs here now
 *   page_walk_load_ns  one dependent load from a random one of 16,384
 *                   lines, one in each 4 KiB page of the same 64 MiB: 1 MiB
 *                   of lines, which the caches hold
 *   cached_load_ns  the same from 16,384 lines in 1 MiB of 256 pages; what
 *                   page_walk_load_ns costs beyond it is the address
 *                   translation (little where huge pages reach the TLB, a
 *                   page walk where they do not)
 * Without DIR a database is created in a temporary directory (at
 * --scale, by default 10, or 1 with --quick) and removed afterwards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "bench_db.h"
#include "engine/engine.h"
#include "port/clock.h"
#include "port/mem.h"
#include "stats.h"
#include "tools/pgbench.h"

#define MAX_ROUNDS 64

/* The layout of the results table. */
static const bench_table results_table = {18, 1};

/* Keeps the compiler from dropping a result it sees unused. */
#define BENCH_USE(x) __asm__ __volatile__("" : : "r"(x) : "memory")

typedef struct lookup_opts {
    const char *dir;
    const char *json;
    int rounds;
    bool quick;
    uint32_t pool_mb;
    uint32_t scale; /* of the database made without DIR; 0: default */
} lookup_opts;

typedef struct lookup_env {
    keel_db *db;
    keel_session *s;
    engine_table *t;
    catalog_txn ct;
    btree *bt;
    btree_dir *dir; /* the session's directory of bt */
    heap_row row;
    int32_t accounts;
} lookup_env;

static void usage(void)
{
    fprintf(stderr, "usage: keel bench lookup [DIR] [--scale N] [--json FILE] "
                    "[--rounds N] [--pool-mb N] [--quick]\n");
}

static int lookup_option(const bench_args *a, void *ctx)
{
    lookup_opts *o = ctx;
    uint32_t u;

    if (strcmp(a->name, "--json") == 0) {
        return bench_args_out_file(a, &o->json);
    } else if (strcmp(a->name, "--rounds") == 0) {
        if (bench_args_u32(a, 1, MAX_ROUNDS, &u) != 0)
            return -1;
        o->rounds = (int)u;
    } else if (strcmp(a->name, "--pool-mb") == 0) {
        return bench_args_u32(a, 16, 65536, &o->pool_mb);
    } else if (strcmp(a->name, "--scale") == 0) {
        return bench_args_u32(a, 1, 1000, &o->scale);
    } else {
        return bench_args_unknown(a);
    }
    return 0;
}

static int parse_opts(int argc, char **argv, lookup_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->rounds = 7;
    o->pool_mb = 512;
    return bench_args_parse("keel bench lookup", argc, argv, &o->quick, &o->dir,
                            lookup_option, o);
}

/* Opens the database and resolves pgbench_accounts and its primary key,
 * inside a read-only transaction that stays open (its snapshot is the
 * one every lookup uses). */
static int env_open(lookup_env *env, const char *dir, uint32_t pool_mb)
{
    keel_db_options o;
    keel_error e = {0};
    keel_session *s;
    uint32_t pi;
    int rc;

    memset(env, 0, sizeof(*env));
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = pool_mb;
    rc = keel_db_open(&o, &env->db, &e);
    if (rc == KEEL_OK)
        rc = keel_session_begin(env->db, &env->s, &e);
    if (rc != KEEL_OK) {
        fprintf(stderr, "keel bench lookup: %s\n", e.msg);
        if (env->db != NULL)
            (void)keel_db_close(env->db, NULL);
        env->db = NULL;
        return rc;
    }
    s = env->s;
    env->t = calloc(1, sizeof(*env->t));
    rc = env->t == NULL ? KEEL_ENOMEM : keel_begin(s);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, false, &env->ct);
    if (rc == KEEL_OK)
        rc = engine_table_open(s, &env->ct, NULL, "pgbench_accounts", true,
                               KEEL_LOCK_ACCESS_SHARE, env->t);
    for (pi = 0; rc == KEEL_OK && pi < env->t->nidx; pi++)
        if (env->t->idx[pi].primary)
            break;
    if (rc == KEEL_OK && pi == env->t->nidx)
        rc = KEEL_EINVAL;
    if (rc == KEEL_OK)
        rc = heap_row_init(&env->row, &env->t->h->heap, &s->bs->err);
    if (rc != KEEL_OK) {
        fprintf(stderr,
                "keel bench lookup: %s: no usable pgbench_accounts: %s\n", dir,
                keel_session_error(s));
        return rc;
    }
    env->bt = env->t->ih[pi]->bt;
    env->dir = engine_index_dir(s, env->bt);
    if (env->dir == NULL) {
        fprintf(stderr, "keel bench lookup: out of memory\n");
        return KEEL_ENOMEM;
    }
    env->accounts = (int32_t)env->t->rel.tuples;
    if (env->accounts <= 0) {
        fprintf(stderr,
                "keel bench lookup: %s: pgbench_accounts is empty or was "
                "never analyzed\n",
                dir);
        return KEEL_EINVAL;
    }
    return KEEL_OK;
}

static void env_close(lookup_env *env)
{
    heap_row_free(&env->row);
    free(env->t);
    if (env->s != NULL) {
        keel_abort(env->s);
        keel_session_end(env->s);
    }
    if (env->db != NULL)
        (void)keel_db_close(env->db, NULL);
}

/* The columns of pgbench_accounts a lookup decodes: aid, bid, abalance. */
#define LOOKUP_COLS 3

/* What lookup_one() does. */
typedef enum lookup_mode {
    LOOKUP_HINTED,   /* btree_lookup_heap() + heap_fetch_cols() */
    LOOKUP_ROOT,     /* the same without the directory */
    LOOKUP_UNHINTED, /* btree_lookup() + heap_fetch_cols() */
    LOOKUP_WHOLE_ROW /* btree_lookup_heap() + heap_fetch() */
} lookup_mode;

/*
 * One lookup of aid by the access path, fetching the row's first
 * LOOKUP_COLS columns (LOOKUP_WHOLE_ROW: every column, by heap_fetch());
 * returns abalance, and in *guessed (if not NULL) the heap tid the B-tree
 * predicted.  Exits on any failure.
 */
static inline int32_t lookup_one(lookup_env *env, int32_t aid, lookup_mode mode,
                                 tid *found, tid *guessed)
{
    keel_value key = {.isnull = false};
    buf_session *bs = env->s->bs;
    bool whole_row = mode == LOOKUP_WHOLE_ROW;
    tid t;
    int rc;

    key.v.i4 = aid;
    rc = mode == LOOKUP_UNHINTED
             ? btree_lookup(env->bt, bs, &key, &t)
             : btree_lookup_heap(env->bt, bs, &key, &env->t->h->heap,
                                 mode == LOOKUP_ROOT ? NULL : env->dir, &t,
                                 guessed);
    if (found != NULL)
        *found = t;
    if (rc == KEEL_OK)
        rc = whole_row
                 ? heap_fetch(&env->t->h->heap, bs, &env->ct.vis, t, &env->row)
                 : heap_fetch_cols(&env->t->h->heap, bs, &env->ct.vis, t,
                                   LOOKUP_COLS, &env->row);
    if (rc != KEEL_OK || env->row.values[0].v.i4 != aid) {
        fprintf(stderr, "keel bench lookup: account %d: %s\n", aid,
                rc != KEEL_OK ? buf_session_error(bs)->msg : "wrong row");
        bench_exit(1);
    }
    return env->row.values[2].v.i4;
}

static inline int32_t next_aid(uint64_t *rng, int32_t accounts)
{
    uint64_t x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (int32_t)((x * UINT64_C(0x2545F4914F6CDD1D)) >> 33) % accounts + 1;
}

static double measure_lookup(lookup_env *env, uint64_t n, uint64_t *rng,
                             lookup_mode mode)
{
    uint64_t t0 = clock_now_ns();
    uint32_t sum = 0;

    for (uint64_t i = 0; i < n; i++)
        sum += (uint32_t)lookup_one(env, next_aid(rng, env->accounts), mode,
                                    NULL, NULL);
    BENCH_USE(sum);
    return (double)(clock_now_ns() - t0) / (double)n;
}

/*
 * Three pointer chases through one 64 MiB block, each word holding the
 * index of the next word of its cycle, in a random order:
 *   line  word 0 of every 64-byte line: a miss in every cache and, on
 *         4 KiB pages, the TLB;
 *   page  word 1 of one random line in each 4 KiB page: 1 MiB of lines,
 *         which the caches hold, spread over every set, on as many pages
 *         as the line cycle;
 *   near  word 2 of every line of the first 1 MiB: the same number of
 *         lines on 256 pages, the cache-hit baseline for the page cycle.
 * What the page cycle costs beyond the near one is address translation.
 */
#define CHASE_BYTES ((size_t)64 << 20)
#define CHASE_LINES (CHASE_BYTES / 64)
#define CHASE_PAGES (CHASE_BYTES / 4096)

typedef struct chase {
    uint64_t *mem;
    uint64_t line_at, page_at, near_at; /* where each cycle stopped */
} chase;

/* Links word `word` of n slots of `words` words each into one random
 * cycle (Sattolo's shuffle), in slot k at line line_of[k] (line 0 if
 * line_of is NULL), with order[] as scratch space; returns a word on it. */
static uint64_t chase_link(uint64_t *mem, uint64_t *order, uint64_t n,
                           uint64_t words, const uint8_t *line_of,
                           uint64_t word, uint64_t *rng)
{
#define CHASE_AT(k)                                                            \
    (order[k] * words + (line_of ? (uint64_t)line_of[order[k]] * 8 : 0) + word)
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = (uint64_t)next_aid(rng, (int32_t)i) - 1, t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (uint64_t i = 0; i < n; i++)
        mem[CHASE_AT(i)] = CHASE_AT((i + 1) % n);
    return CHASE_AT(0);
#undef CHASE_AT
}

/* The three cycles; false if out of memory. */
static bool chase_init(chase *c, uint64_t *rng)
{
    uint64_t *order = malloc(CHASE_LINES * sizeof(uint64_t));
    uint8_t *line_of = malloc(CHASE_PAGES);

    c->mem = mem_alloc_pages(CHASE_BYTES, true);
    if (c->mem == NULL || order == NULL || line_of == NULL) {
        free(order);
        free(line_of);
        mem_free_pages(c->mem, CHASE_BYTES);
        c->mem = NULL;
        return false;
    }
    for (uint64_t p = 0; p < CHASE_PAGES; p++)
        line_of[p] = (uint8_t)(next_aid(rng, 4096 / 64) - 1);
    c->line_at = chase_link(c->mem, order, CHASE_LINES, 64 / 8, NULL, 0, rng);
    c->page_at =
        chase_link(c->mem, order, CHASE_PAGES, 4096 / 8, line_of, 1, rng);
    c->near_at = chase_link(c->mem, order, CHASE_PAGES, 64 / 8, NULL, 2, rng);
    free(order);
    free(line_of);
    return true;
}

/* Nanoseconds per load over n dependent loads from *at on. */
static double measure_chase(const uint64_t *mem, uint64_t *at, uint64_t n)
{
    uint64_t t0 = clock_now_ns(), a = *at;

    for (uint64_t i = 0; i < n; i++)
        a = mem[a];
    *at = a;
    BENCH_USE(a);
    return (double)(clock_now_ns() - t0) / (double)n;
}

/* Untimed: of n random lookups, the fraction for which the B-tree
 * predicted a heap tid, and the fraction of those it got exactly. */
static void measure_guesses(lookup_env *env, uint64_t n, uint64_t *rng,
                            double *rate, double *exact)
{
    uint64_t made = 0, right = 0;

    for (uint64_t i = 0; i < n; i++) {
        tid t, g;
        (void)lookup_one(env, next_aid(rng, env->accounts), LOOKUP_HINTED, &t,
                         &g);
        if (tid_valid(g)) {
            made++;
            right += tid_compare(g, t) == 0;
        }
    }
    *rate = (double)made / (double)n;
    *exact = made > 0 ? (double)right / (double)made : 0.0;
}

/* keel_lookup() of random accounts, in the benchmark's transaction. */
static double measure_keel_lookup(lookup_env *env, uint64_t n, uint64_t *rng)
{
    keel_value key = {.isnull = false}, out[4];
    bool found;
    uint64_t t0 = clock_now_ns();

    for (uint64_t i = 0; i < n; i++) {
        key.v.i4 = next_aid(rng, env->accounts);
        if (keel_lookup(env->s, NULL, "pgbench_accounts", &key, out, &found) !=
                KEEL_OK ||
            !found || out[0].v.i4 != key.v.i4) {
            fprintf(stderr, "keel bench lookup: keel_lookup(%d): %s\n",
                    key.v.i4, keel_session_error(env->s));
            bench_exit(1);
        }
        BENCH_USE(out[2].v.i4);
    }
    return (double)(clock_now_ns() - t0) / (double)n;
}

int bench_lookup_main(int argc, char **argv)
{
    lookup_opts o;
    lookup_env env;
    char tmp[4096];
    bool own_dir = false;
    double lk[MAX_ROUNDS], rt[MAX_ROUNDS], un[MAX_ROUNDS], fr[MAX_ROUNDS],
        kl[MAX_ROUNDS], ld[MAX_ROUNDS], pw[MAX_ROUNDS], nr[MAX_ROUNDS];
    btree_dir_stats ds;
    chase ch;
    double guess_rate, guess_exact;
    uint64_t rng = UINT64_C(0x2545F4914F6CDD1D), n, nk;
    uint32_t scale;

    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    scale = o.scale != 0 ? o.scale : o.quick ? 1 : 10;
    if (o.quick && o.rounds > 5)
        o.rounds = 5;
    if (o.dir == NULL) {
        if (bench_db_create("keel bench lookup", "bench-lookup", scale, tmp,
                            sizeof(tmp)) != 0)
            return 1;
        own_dir = true;
        o.dir = tmp;
    }
    if (env_open(&env, o.dir, o.pool_mb) != KEEL_OK) {
        env_close(&env);
        if (own_dir)
            bench_dir_remove(tmp);
        return 1;
    }
    /* Every page into the pool first: each account once, in order. */
    for (int32_t aid = 1; aid <= env.accounts; aid++)
        (void)lookup_one(&env, aid, LOOKUP_WHOLE_ROW, NULL, NULL);
    if (!chase_init(&ch, &rng)) {
        fprintf(stderr, "keel bench lookup: out of memory\n");
        env_close(&env);
        if (own_dir)
            bench_dir_remove(tmp);
        return 1;
    }
    n = o.quick ? 100000 : 1000000;
    nk = n / 10;
    printf("keel bench lookup: %s, %d accounts, pool %u MiB, %d rounds of "
           "%llu lookups%s\n",
           o.dir, env.accounts, o.pool_mb, o.rounds, (unsigned long long)n,
           o.quick ? " (quick)" : "");
    fflush(stdout);
    for (int r = 0; r < o.rounds; r++) {
        lk[r] = measure_lookup(&env, n, &rng, LOOKUP_HINTED);
        rt[r] = measure_lookup(&env, n, &rng, LOOKUP_ROOT);
        un[r] = measure_lookup(&env, n, &rng, LOOKUP_UNHINTED);
        fr[r] = measure_lookup(&env, n / 2, &rng, LOOKUP_WHOLE_ROW);
        kl[r] = measure_keel_lookup(&env, nk, &rng);
        ld[r] = measure_chase(ch.mem, &ch.line_at, n / 2);
        /* The line cycle has just evicted the others: one lap untimed. */
        (void)measure_chase(ch.mem, &ch.page_at, CHASE_PAGES);
        pw[r] = measure_chase(ch.mem, &ch.page_at, n / 2);
        (void)measure_chase(ch.mem, &ch.near_at, CHASE_PAGES);
        nr[r] = measure_chase(ch.mem, &ch.near_at, n / 2);
        fprintf(stderr, "  round %d/%d done\n", r + 1, o.rounds);
    }
    measure_guesses(&env, n / 10, &rng, &guess_rate, &guess_exact);
    bench_stat s_lk = bench_stat_of(lk, o.rounds);
    bench_stat s_rt = bench_stat_of(rt, o.rounds);
    bench_stat s_un = bench_stat_of(un, o.rounds);
    bench_stat s_ld = bench_stat_of(ld, o.rounds);
    bench_stat s_pw = bench_stat_of(pw, o.rounds);
    bench_stat s_nr = bench_stat_of(nr, o.rounds);
    bench_stat s_fr = bench_stat_of(fr, o.rounds);
    bench_stat s_kl = bench_stat_of(kl, o.rounds);
    bench_table_header(&results_table);
    bench_table_row(&results_table, "lookup_ns", s_lk, "ns",
                    "btree_lookup_heap + heap_fetch_cols (aid..abalance)");
    bench_table_row(&results_table, "lookup_root_ns", s_rt, "ns",
                    "the same from the root, without the directory");
    bench_table_row(&results_table, "lookup_unhinted_ns", s_un, "ns",
                    "from the root, no heap prefetch (btree_lookup)");
    bench_table_row(&results_table, "fetch_row_ns", s_fr, "ns",
                    "btree_lookup_heap + heap_fetch (whole row)");
    bench_table_row(&results_table, "keel_lookup_ns", s_kl, "ns",
                    "keel_lookup(): names resolved each call");
    bench_table_row(&results_table, "random_load_ns", s_ld, "ns",
                    "one dependent load from a random line of 64 MiB");
    bench_table_row(&results_table, "page_walk_load_ns", s_pw, "ns",
                    "a random cached line, one per 4 KiB page of 64 MiB");
    bench_table_row(&results_table, "cached_load_ns", s_nr, "ns",
                    "as many cached lines in 1 MiB (256 pages)");
    printf("heap row predicted for %.1f%% of lookups, %.2f%% of those exactly"
           "\n",
           100.0 * guess_rate, 100.0 * guess_exact);
    btree_dir_stats_get(env.dir, &ds);
    printf("the directory: %u entries leading to level %u, %zu bytes; "
           "built %llu times, %llu moves right in %llu lookups, %llu back to "
           "the root\n",
           ds.entries, ds.level, ds.bytes, (unsigned long long)ds.builds,
           (unsigned long long)ds.moves, (unsigned long long)ds.uses,
           (unsigned long long)ds.fallbacks);
    mem_free_pages(ch.mem, CHASE_BYTES);
    env_close(&env);
    if (own_dir)
        bench_dir_remove(tmp);

    if (o.json != NULL) {
        FILE *f = fopen(o.json, "w");
        if (f == NULL) {
            fprintf(stderr, "keel bench lookup: cannot write %s: %s\n", o.json,
                    strerror(errno));
            return 1;
        }
        fprintf(f,
                "{\n  \"bench\": \"lookup\",\n  \"accounts\": %d,\n"
                "  \"pool_mb\": %u,\n  \"rounds\": %d,\n  \"quick\": %s,\n"
                "  \"lookups_per_round\": %llu,\n  ",
                env.accounts, o.pool_mb, o.rounds, o.quick ? "true" : "false",
                (unsigned long long)n);
        bench_json_stat(f, "lookup_ns", s_lk);
        fputs(",\n  ", f);
        bench_json_stat(f, "lookup_root_ns", s_rt);
        fputs(",\n  ", f);
        bench_json_stat(f, "lookup_unhinted_ns", s_un);
        fputs(",\n  ", f);
        bench_json_stat(f, "fetch_row_ns", s_fr);
        fputs(",\n  ", f);
        bench_json_stat(f, "keel_lookup_ns", s_kl);
        fputs(",\n  ", f);
        bench_json_stat(f, "random_load_ns", s_ld);
        fputs(",\n  ", f);
        bench_json_stat(f, "page_walk_load_ns", s_pw);
        fputs(",\n  ", f);
        bench_json_stat(f, "cached_load_ns", s_nr);
        fprintf(f,
                ",\n  \"heap_guess_rate\": %.6f,\n"
                "  \"heap_guess_exact\": %.6f,\n"
                "  \"dir_entries\": %u,\n  \"dir_level\": %u,\n"
                "  \"dir_bytes\": %zu,\n  \"dir_uses\": %llu,\n"
                "  \"dir_moves\": %llu,\n  \"dir_fallbacks\": %llu\n}\n",
                guess_rate, guess_exact, ds.entries, ds.level, ds.bytes,
                (unsigned long long)ds.uses, (unsigned long long)ds.moves,
                (unsigned long long)ds.fallbacks);
        if (fclose(f) != 0) {
            fprintf(stderr, "keel bench lookup: cannot write %s\n", o.json);
            return 1;
        }
    }
    return 0;
}
