/*
 * bench_pin.c: `keel bench pin`: the cost of the buffer pool's hot paths.
 *
 * Measures, each as the median of several rounds with min and max:
 *   read_hit_ns      buf_read + buf_release of a resident page, one thread
 *                    cycling through 1000 pages
 *   pin_unpin_ns     buf_pin + buf_release by buffer id, the session's
 *                    first pin on it each time
 *   repin_ns         an extra pin + release of a buffer the session holds
 *   read_miss_ns     buf_read + buf_release of a page not in the pool but in
 *                    the OS page cache (pool smaller than the relation, so
 *                    every read evicts), next to
 *   pread_ns         a raw 8 KiB pread of the same file at the same offsets
 *   pread_cold_ns    the same preads into a region as large as the small
 *                    pool's pages, visited in the same order: what the
 *                    kernel's copy costs when its destination is not in the
 *                    CPU cache, as a miss's destination usually is not
 *   read_miss_ring_ns  read_miss_ns through a bulk-read strategy ring, whose
 *                    few buffers stay in the CPU cache: the difference to
 *                    read_miss_ns is what copying into cold memory costs
 *   read_hit_2threads_same_page_ns   two threads reading one hot page
 *   line_handoff_ns  two threads passing a counter on one cache line back
 *                    and forth: what a line written by one core costs the
 *                    next core that touches it (the price of every shared
 *                    write on a hot path, such as pinning an index's root)
 *   read_hit_2threads_mops, read_hit_<N>threads_mops   aggregate hit
 *                    throughput of 2 and N threads over 1000 pages
 * The miss and pread rounds are interleaved so that their ratio compares
 * like with like.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench_db.h"
#include "bench.h"
#include "engine/control.h"
#include "port/clock.h"
#include "port/mem.h"
#include "stats.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"

#define HOT_PAGES  1000
#define REL_HOT    1
#define REL_MISS   2
#define MAX_ROUNDS 64

/* The layout of the results table. */
static const bench_table results_table = {34, 2};

/*
 * Keeps the compiler from merging or hoisting the inlined pin and release
 * of consecutive iterations: each one must really happen in memory.
 */
#define BENCH_BARRIER() __asm__ __volatile__("" ::: "memory")

typedef struct pin_opts {
    uint32_t pool_mb;
    uint32_t threads;
    int rounds;
    bool quick;
    const char *json;
    const char *dir;
} pin_opts;

typedef struct pin_env {
    char dir[4096];
    bool own_dir;
    smgr *sm;
    buf_pool *pool;  /* holds REL_HOT entirely */
    buf_pool *small; /* smaller than REL_MISS */
    uint32_t miss_blocks;
    kerr err;
} pin_env;

static void die_kerr(const char *what, const kerr *e)
{
    fprintf(stderr, "keel bench pin: %s: %s\n", what, e->msg);
    bench_exit(1);
}

/* Appends n initialized blocks to a new relation. */
static void make_relation(pin_env *env, relnumber_t rel, uint32_t n)
{
    smgr_rel *r;
    char *page = aligned_alloc(4096, BLOCK_SIZE);

    if (page == NULL) {
        fprintf(stderr, "keel bench pin: out of memory\n");
        bench_exit(1);
    }
    if (smgr_create(env->sm, rel, &r, &env->err) != KEEL_OK)
        die_kerr("creating relation", &env->err);
    for (uint32_t i = 0; i < n; i++) {
        blocknum_t blk;
        page_init(page, 0);
        memcpy(page + PAGE_HEADER_SIZE, &i, sizeof(i));
        if (smgr_extend(r, page, &blk, &env->err) != KEEL_OK)
            die_kerr("extending relation", &env->err);
    }
    if (smgr_sync(r, &env->err) != KEEL_OK)
        die_kerr("syncing relation", &env->err);
    free(page);
}

static buf_session *new_session(pin_env *env, buf_pool *p)
{
    buf_session *s;
    if (buf_session_create(p, &s, &env->err) != KEEL_OK)
        die_kerr("creating session", &env->err);
    return s;
}

static void read_or_die(buf_session *s, relnumber_t rel, blocknum_t blk,
                        int32_t *id)
{
    if (buf_read(s, rel, blk, NULL, id) != KEEL_OK)
        die_kerr("reading a block", buf_session_error(s));
}

/* ---- single-thread measurements ---------------------------------- */

static double measure_read_hit(buf_session *s, uint64_t n)
{
    uint64_t t0 = clock_now_ns();
    for (uint64_t i = 0; i < n; i++) {
        int32_t id;
        read_or_die(s, REL_HOT, (blocknum_t)(i % HOT_PAGES), &id);
        buf_release(s, id);
    }
    return (double)(clock_now_ns() - t0) / (double)n;
}

static double measure_pin_unpin(buf_session *s, int32_t id, uint64_t n)
{
    uint64_t t0 = clock_now_ns();
    for (uint64_t i = 0; i < n; i++) {
        if (buf_pin(s, id) != KEEL_OK)
            die_kerr("pinning", buf_session_error(s));
        BENCH_BARRIER();
        buf_release(s, id);
        BENCH_BARRIER();
    }
    return (double)(clock_now_ns() - t0) / (double)n;
}

static double measure_repin(buf_session *s, int32_t id, uint64_t n)
{
    uint64_t t0;

    if (buf_pin(s, id) != KEEL_OK)
        die_kerr("pinning", buf_session_error(s));
    t0 = clock_now_ns();
    for (uint64_t i = 0; i < n; i++) {
        if (buf_pin(s, id) != KEEL_OK)
            die_kerr("pinning", buf_session_error(s));
        BENCH_BARRIER();
        buf_release(s, id);
        BENCH_BARRIER();
    }
    t0 = clock_now_ns() - t0;
    buf_release(s, id);
    return (double)t0 / (double)n;
}

static double measure_read_miss(pin_env *env, buf_session *s, buf_strategy *st,
                                uint64_t n, uint64_t *pos)
{
    uint64_t t0 = clock_now_ns();
    for (uint64_t i = 0; i < n; i++, (*pos)++) {
        int32_t id;
        if (buf_read(s, REL_MISS, (blocknum_t)(*pos % env->miss_blocks),
                     &(buf_read_opts){.strategy = st}, &id) != KEEL_OK)
            die_kerr("reading a block", buf_session_error(s));
        buf_release(s, id);
    }
    return (double)(clock_now_ns() - t0) / (double)n;
}

/* Preads n blocks into buf, or into successive pages of a region of
 * nregion pages when nregion > 1. */
static double measure_pread(int fd, uint32_t nblocks, char *buf,
                            uint32_t nregion, uint64_t n, uint64_t *pos)
{
    uint64_t t0 = clock_now_ns();
    for (uint64_t i = 0; i < n; i++, (*pos)++) {
        off_t off = (off_t)(*pos % nblocks) * BLOCK_SIZE;
        char *dst = buf + (size_t)(*pos % nregion) * BLOCK_SIZE;
        if (pread(fd, dst, BLOCK_SIZE, off) != BLOCK_SIZE) {
            fprintf(stderr, "keel bench pin: pread: %s\n", strerror(errno));
            bench_exit(1);
        }
    }
    return (double)(clock_now_ns() - t0) / (double)n;
}

/* ---- multi-thread measurements ----------------------------------- */

typedef struct hit_thread {
    pthread_t tid;
    pin_env *env;
    pthread_barrier_t *start;
    atomic_u32 *stop;
    bool same_page;
    uint32_t offset;
    uint64_t ops;
    uint64_t ns;
} hit_thread;

static void *hit_thread_main(void *arg)
{
    hit_thread *t = arg;
    buf_session *s = new_session(t->env, t->env->pool);
    uint64_t ops = 0, t0;
    uint32_t blk = t->offset % HOT_PAGES;

    pthread_barrier_wait(t->start);
    t0 = clock_now_ns();
    while (!atomic_load_relaxed(t->stop)) {
        for (int i = 0; i < 256; i++) {
            int32_t id;
            read_or_die(s, REL_HOT, t->same_page ? 0 : blk, &id);
            buf_release(s, id);
            if (++blk == HOT_PAGES)
                blk = 0;
        }
        ops += 256;
    }
    t->ns = clock_now_ns() - t0;
    t->ops = ops;
    buf_session_destroy(s);
    return NULL;
}

/* The counter line_handoff_ns passes: the thread whose parity matches
 * the counter increments it. */
typedef struct handoff {
    CACHE_ALIGNED atomic_u64 turn;
    uint64_t n;
} handoff;

/* Spins a waiting turn taker makes before it yields its CPU: far more
 * than a handoff between two running threads takes, so that it yields
 * only when the other thread is not running (both on one CPU). */
#define HANDOFF_SPINS 4096

/* Takes every turn of the given parity (0 or 1) up to 2n. */
static void handoff_take(handoff *h, uint64_t parity)
{
    for (uint64_t i = parity; i < 2 * h->n; i += 2) {
        uint32_t spins = 0;
        while (atomic_load_acquire(&h->turn) != i) {
            if (++spins % HANDOFF_SPINS == 0)
                sched_yield();
            else
                cpu_relax();
        }
        atomic_store_release(&h->turn, i + 1);
    }
}

static void *handoff_main(void *arg)
{
    handoff_take(arg, 1);
    return NULL;
}

/* Nanoseconds per one-way handoff of a written line, over n round
 * trips between this thread and another. */
static double measure_handoff(uint64_t n)
{
    handoff *h = mem_alloc_aligned(sizeof(*h));
    pthread_t t;
    uint64_t t0;
    double ns;

    if (h == NULL) {
        fprintf(stderr, "keel bench pin: out of memory\n");
        bench_exit(1);
    }
    h->n = n;
    t0 = clock_now_ns();
    if (pthread_create(&t, NULL, handoff_main, h) != 0) {
        fprintf(stderr, "keel bench pin: cannot create thread\n");
        bench_exit(1);
    }
    handoff_take(h, 0);
    pthread_join(t, NULL);
    ns = (double)(clock_now_ns() - t0) / (double)(2 * n);
    mem_free_aligned(h);
    return ns;
}

/*
 * Runs nthreads readers for ms milliseconds.  Returns aggregate millions of
 * reads per second; *ns_per_op gets the mean time of one read as seen by
 * one thread.
 */
static double run_threads(pin_env *env, uint32_t nthreads, bool same_page,
                          uint32_t ms, double *ns_per_op)
{
    hit_thread *t = calloc(nthreads, sizeof(*t));
    pthread_barrier_t start;
    atomic_u32 stop = 0;
    uint64_t ops = 0, t0, elapsed;
    double thread_ns = 0;

    pthread_barrier_init(&start, NULL, nthreads + 1);
    for (uint32_t i = 0; i < nthreads; i++) {
        t[i].env = env;
        t[i].start = &start;
        t[i].stop = &stop;
        t[i].same_page = same_page;
        t[i].offset = i * (HOT_PAGES / nthreads + 7);
        if (pthread_create(&t[i].tid, NULL, hit_thread_main, &t[i]) != 0) {
            fprintf(stderr, "keel bench pin: cannot create thread\n");
            bench_exit(1);
        }
    }
    pthread_barrier_wait(&start);
    t0 = clock_now_ns();
    clock_sleep_us(ms * 1000);
    atomic_store_relaxed(&stop, 1);
    for (uint32_t i = 0; i < nthreads; i++) {
        pthread_join(t[i].tid, NULL);
        ops += t[i].ops;
        thread_ns += (double)t[i].ns / (double)t[i].ops;
    }
    elapsed = clock_now_ns() - t0;
    pthread_barrier_destroy(&start);
    free(t);
    if (ns_per_op != NULL)
        *ns_per_op = thread_ns / nthreads;
    return (double)ops / ((double)elapsed / 1e9) / 1e6;
}

/* ---- driver ------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: keel bench pin [--pool-mb N] [--threads N] [--rounds N]\n"
            "                      [--dir DIR] [--json FILE] [--quick]\n");
}

static int pin_option(const bench_args *a, void *ctx)
{
    pin_opts *o = ctx;
    uint32_t u;

    if (strcmp(a->name, "--pool-mb") == 0) {
        return bench_args_u32(a, 16, 65536, &o->pool_mb);
    } else if (strcmp(a->name, "--threads") == 0) {
        return bench_args_u32(a, 1, 4096, &o->threads);
    } else if (strcmp(a->name, "--rounds") == 0) {
        if (bench_args_u32(a, 1, MAX_ROUNDS, &u) != 0)
            return -1;
        o->rounds = (int)u;
    } else if (strcmp(a->name, "--json") == 0) {
        return bench_args_out_file(a, &o->json);
    } else if (strcmp(a->name, "--dir") == 0) {
        o->dir = a->value;
    } else {
        return bench_args_unknown(a);
    }
    return 0;
}

static int parse_opts(int argc, char **argv, pin_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->pool_mb = 128;
    o->threads = 64;
    o->rounds = 7;
    return bench_args_parse("keel bench pin", argc, argv, &o->quick, NULL,
                            pin_option, o);
}

static void env_open(pin_env *env, const pin_opts *o)
{
    uint32_t nbuf = o->pool_mb * (1024 * 1024 / BLOCK_SIZE);

    memset(env, 0, sizeof(*env));
    if (o->dir != NULL) {
        char control[sizeof(env->dir) + 16];
        snprintf(env->dir, sizeof(env->dir), "%s", o->dir);
        snprintf(control, sizeof(control), "%s/%s", o->dir, CONTROL_FILE_NAME);
        if (access(control, F_OK) == 0) {
            fprintf(stderr,
                    "keel bench pin: %s holds a keel database; --dir "
                    "takes a directory for the benchmark's two files\n",
                    o->dir);
            bench_exit(1);
        }
    } else {
        if (bench_tmpdir_make("keel bench pin", "bench-pin", env->dir,
                              sizeof(env->dir)) != 0)
            bench_exit(1);
        env->own_dir = true;
    }
    if (smgr_open(env->dir, &env->sm, &env->err) != KEEL_OK)
        die_kerr("opening directory", &env->err);
    /* The miss relation is 4x the small pool, so every read evicts. */
    env->miss_blocks = o->quick ? 4096 : 16384;
    make_relation(env, REL_HOT, HOT_PAGES);
    make_relation(env, REL_MISS, env->miss_blocks);
    if (buf_pool_create(env->sm, nbuf, &env->pool, &env->err) != KEEL_OK ||
        buf_pool_create(env->sm, env->miss_blocks / 4, &env->small,
                        &env->err) != KEEL_OK)
        die_kerr("creating buffer pool", &env->err);
}

static void env_close(pin_env *env)
{
    if (buf_pool_close(env->pool, &env->err) != KEEL_OK ||
        buf_pool_close(env->small, &env->err) != KEEL_OK)
        die_kerr("closing buffer pool", &env->err);
    /* The relations go, so that the next run can create them again. */
    if (!env->own_dir && (smgr_unlink(env->sm, REL_HOT, &env->err) != KEEL_OK ||
                          smgr_unlink(env->sm, REL_MISS, &env->err) != KEEL_OK))
        die_kerr("removing the relations", &env->err);
    smgr_close(env->sm);
    if (env->own_dir)
        bench_dir_remove(env->dir);
}

int bench_pin_main(int argc, char **argv)
{
    pin_opts o;
    pin_env env;
    double hit[MAX_ROUNDS], pin[MAX_ROUNDS], repin[MAX_ROUNDS];
    double miss[MAX_ROUNDS], pr[MAX_ROUNDS], same[MAX_ROUNDS];
    double m2[MAX_ROUNDS], mn[MAX_ROUNDS], ratio[MAX_ROUNDS];
    double ring[MAX_ROUNDS], prc[MAX_ROUNDS], hand[MAX_ROUNDS];
    uint64_t cold_pos = 0;
    uint32_t ncold;
    char *cold;
    buf_strategy *bulk;
    uint64_t n_hit, n_pin, n_miss, miss_pos = 0, pread_pos = 0;
    uint32_t ms;
    buf_session *s, *ss;
    int32_t id0;
    char *buf;
    int fd;

    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    if (o.quick && o.rounds > 5)
        o.rounds = 5;
    n_hit = o.quick ? 200000 : 2000000;
    n_pin = o.quick ? 1000000 : 10000000;
    n_miss = o.quick ? 4096 : 32768;
    ms = o.quick ? 100 : 500;

    env_open(&env, &o);
    s = new_session(&env, env.pool);
    ss = new_session(&env, env.small);
    bulk = buf_strategy_create(env.small, BUF_STRATEGY_BULK_READ);
    if (bulk == NULL) {
        fprintf(stderr, "keel bench pin: out of memory\n");
        return 1;
    }

    /* Load the hot set, and the miss relation into the OS page cache. */
    for (blocknum_t b = 0; b < HOT_PAGES; b++) {
        int32_t id;
        read_or_die(s, REL_HOT, b, &id);
        buf_release(s, id);
    }
    read_or_die(s, REL_HOT, 0, &id0);
    buf_release(s, id0);
    {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%u", env.dir, REL_MISS);
        fd = open(path, O_RDONLY);
        buf = aligned_alloc(4096, BLOCK_SIZE);
        ncold = buf_pool_size(env.small);
        cold = mem_alloc_pages((size_t)ncold * BLOCK_SIZE, true);
        if (fd < 0 || buf == NULL || cold == NULL) {
            fprintf(stderr, "keel bench pin: cannot open %s\n", path);
            return 1;
        }
        measure_pread(fd, env.miss_blocks, buf, 1, env.miss_blocks, &pread_pos);
        measure_read_miss(&env, ss, NULL, env.miss_blocks, &miss_pos);
    }

    printf("keel bench pin: pool %u MiB (%u buffers), %d rounds%s; misses: "
           "%u-buffer pool over a %u-block relation\n",
           o.pool_mb, buf_pool_size(env.pool), o.rounds,
           o.quick ? " (quick)" : "", buf_pool_size(env.small),
           env.miss_blocks);
    fflush(stdout);
    for (int r = 0; r < o.rounds; r++) {
        hit[r] = measure_read_hit(s, n_hit);
        pin[r] = measure_pin_unpin(s, id0, n_pin);
        repin[r] = measure_repin(s, id0, n_pin);
        miss[r] = measure_read_miss(&env, ss, NULL, n_miss, &miss_pos);
        pr[r] = measure_pread(fd, env.miss_blocks, buf, 1, n_miss, &pread_pos);
        prc[r] =
            measure_pread(fd, env.miss_blocks, cold, ncold, n_miss, &cold_pos);
        ring[r] = measure_read_miss(&env, ss, bulk, n_miss, &miss_pos);
        ratio[r] = miss[r] / pr[r];
        run_threads(&env, 2, true, ms, &same[r]);
        hand[r] = measure_handoff(o.quick ? 20000 : 200000);
        m2[r] = run_threads(&env, 2, false, ms, NULL);
        mn[r] = run_threads(&env, o.threads, false, ms, NULL);
        fprintf(stderr, "  round %d/%d done\n", r + 1, o.rounds);
    }
    close(fd);
    free(buf);
    mem_free_pages(cold, (size_t)ncold * BLOCK_SIZE);
    buf_session_destroy(s);
    buf_strategy_free(bulk);
    buf_session_destroy(ss);

    char mn_name[64];
    snprintf(mn_name, sizeof(mn_name), "read_hit_%uthreads_mops", o.threads);

    /* One list feeds both the table and the JSON. */
    struct {
        const char *name;
        bench_stat st;
        const char *unit;
        const char *note;
    } rows[] = {
        {"read_hit_ns", bench_stat_of(hit, o.rounds), "ns",
         "lookup+pin+unpin, 1000 pages"},
        {"pin_unpin_ns", bench_stat_of(pin, o.rounds), "ns",
         "first pin by id + unpin"},
        {"repin_ns", bench_stat_of(repin, o.rounds), "ns",
         "pin+unpin of a held buffer"},
        {"read_miss_ns", bench_stat_of(miss, o.rounds), "ns",
         "evict + pread + verify"},
        {"pread_ns", bench_stat_of(pr, o.rounds), "ns",
         "raw 8 KiB pread, same file"},
        {"read_miss_over_pread", bench_stat_of(ratio, o.rounds), "x",
         "per-round ratio"},
        {"pread_cold_ns", bench_stat_of(prc, o.rounds), "ns",
         "pread into uncached memory"},
        {"read_miss_ring_ns", bench_stat_of(ring, o.rounds), "ns",
         "miss via bulk-read ring"},
        {"read_hit_2threads_same_page_ns", bench_stat_of(same, o.rounds), "ns",
         "per read, per thread"},
        {"line_handoff_ns", bench_stat_of(hand, o.rounds), "ns",
         "a written line to the other core"},
        {"read_hit_2threads_mops", bench_stat_of(m2, o.rounds), "Mops",
         "aggregate"},
        {mn_name, bench_stat_of(mn, o.rounds), "Mops", "aggregate"},
    };
    const size_t nrows = sizeof(rows) / sizeof(rows[0]);
    double scale = rows[nrows - 1].st.median / rows[nrows - 2].st.median;

    bench_table_header(&results_table);
    for (size_t i = 0; i < nrows; i++)
        bench_table_row(&results_table, rows[i].name, rows[i].st, rows[i].unit,
                        rows[i].note);
    printf("  %-*s %9.2f %9s %9s  %-5s %s\n", results_table.name_width,
           "scaling_vs_2threads", scale, "", "", "x", "median over median");

    if (o.json != NULL) {
        FILE *f = fopen(o.json, "w");
        if (f == NULL) {
            fprintf(stderr, "keel bench pin: cannot write %s: %s\n", o.json,
                    strerror(errno));
            env_close(&env);
            return 1;
        }
        fprintf(f,
                "{\n  \"bench\": \"pin\",\n  \"pool_mb\": %u,\n"
                "  \"buffers\": %u,\n  \"threads\": %u,\n"
                "  \"rounds\": %d,\n  \"quick\": %s,\n"
                "  \"miss_pool_buffers\": %u,\n"
                "  \"miss_relation_blocks\": %u,\n",
                o.pool_mb, buf_pool_size(env.pool), o.threads, o.rounds,
                o.quick ? "true" : "false", buf_pool_size(env.small),
                env.miss_blocks);
        for (size_t i = 0; i < nrows; i++) {
            fputs("  ", f);
            bench_json_stat(f, rows[i].name, rows[i].st);
            fputs(",\n", f);
        }
        fprintf(f, "  \"scaling_vs_2threads\": %.3f\n}\n", scale);
        if (fclose(f) != 0) {
            fprintf(stderr, "keel bench pin: cannot write %s\n", o.json);
            env_close(&env);
            return 1;
        }
    }
    env_close(&env);
    return 0;
}
