/*
 * sql_stat.c: keel_stat_catcache, each session's catalog cache as the
 * pruning proposal's pg_stat_syscache would show it.
 *
 * A session's cache is its own: its counters are plain fields that only
 * its thread touches, on the lookup path whose cost keel counts.  So each
 * session publishes their figures, into a block of its own that others
 * only read, under a sequence count (odd while a copy is being written;
 * a reader retries until it reads the same even count before and after).
 * Gathering them costs about 200 instructions, a sixtieth of a
 * select-only transaction over the simple protocol, so a session
 * publishes at the end of every 16th query message or Sync, and at its
 * first; another session's row is therefore as of up to 16 statements
 * before, and the caller's own as of now.
 * Every field is an atomic, so a reader never races the writer in C's
 * terms.  The view reads the list of sessions under a mutex that only
 * session start and end, and the view, take.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql_internal.h"

/* The figures keel_stat_catcache shows, in its column order after pid. */
enum {
    PUB_ENTRIES,
    PUB_NEGATIVE_ENTRIES,
    PUB_BYTES,
    PUB_HITS,
    PUB_NEGATIVE_HITS,
    PUB_MISSES,
    PUB_AGE_PRUNES,
    PUB_EVICTIONS,
    PUB_INVALIDATIONS,
    PUB_N
};

static const char *const pub_names[PUB_N] = {
    "entries", "negative_entries", "bytes",          "hits",          "negative_hits",
    "misses",  "pruned_by_age",    "pruned_by_size", "invalidations",
};

/* Publishing once in this many statements. */
#define PUB_EVERY 16

struct sql_stat_pub {
    uint32_t tick; /* statements since the last publishing (owner's) */
    atomic_u32 seq;
    atomic_u32 pid; /* the client's BackendKeyData process id */
    atomic_u64 f[PUB_N];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static sql_session *reg_head;

keel_status sql_stat_register(sql_session *s)
{
    /* A block of its own: the owner's writes touch no line another
     * session's data shares. */
    s->pub = aligned_alloc(64, (sizeof(*s->pub) + 63) / 64 * 64);
    if (s->pub == NULL)
        return KEEL_ENOMEM;
    s->pub->tick = 0;
    atomic_store_explicit(&s->pub->seq, 0, memory_order_relaxed);
    atomic_store_explicit(&s->pub->pid, 0, memory_order_relaxed);
    for (int i = 0; i < PUB_N; i++)
        atomic_store_explicit(&s->pub->f[i], 0, memory_order_relaxed);
    pthread_mutex_lock(&reg_lock);
    s->reg_prev = NULL;
    s->reg_next = reg_head;
    if (reg_head != NULL)
        reg_head->reg_prev = s;
    reg_head = s;
    pthread_mutex_unlock(&reg_lock);
    return KEEL_OK;
}

void sql_stat_unregister(sql_session *s)
{
    if (s->pub == NULL)
        return;
    pthread_mutex_lock(&reg_lock);
    if (s->reg_prev != NULL)
        s->reg_prev->reg_next = s->reg_next;
    else
        reg_head = s->reg_next;
    if (s->reg_next != NULL)
        s->reg_next->reg_prev = s->reg_prev;
    pthread_mutex_unlock(&reg_lock);
    free(s->pub);
    s->pub = NULL;
}

void sql_set_backend_pid(sql_session *s, uint32_t pid)
{
    if (s->pub != NULL)
        atomic_store_explicit(&s->pub->pid, pid, memory_order_relaxed);
}

uint32_t sql_backend_pid(const sql_session *s)
{
    return s->pub != NULL
               ? atomic_load_explicit(&s->pub->pid, memory_order_relaxed)
               : 0;
}

static void publish_now(sql_session *s)
{
    keel_cache_stats st;
    uint64_t v[PUB_N];
    uint32_t seq;

    s->pub->tick = 0;
    keel_session_cache_stats(s->ks, &st);
    v[PUB_ENTRIES] = st.entries;
    v[PUB_NEGATIVE_ENTRIES] = st.negative_entries;
    v[PUB_BYTES] = st.bytes;
    v[PUB_HITS] = st.hits;
    v[PUB_NEGATIVE_HITS] = st.negative_hits;
    v[PUB_MISSES] = st.misses;
    v[PUB_AGE_PRUNES] = st.age_prunes;
    v[PUB_EVICTIONS] = st.evictions;
    v[PUB_INVALIDATIONS] = st.invalidations;
    /* Only this thread writes: odd while the copy is under way (the
     * increment's acquire keeps the stores after it). */
    seq = atomic_fetch_add_explicit(&s->pub->seq, 1, memory_order_acq_rel);
    for (int i = 0; i < PUB_N; i++)
        atomic_store_explicit(&s->pub->f[i], v[i], memory_order_relaxed);
    atomic_store_explicit(&s->pub->seq, seq + 2, memory_order_release);
}

void sql_stat_publish(sql_session *s)
{
    if (s->pub != NULL && s->pub->tick++ % PUB_EVERY == 0)
        publish_now(s);
}

/* A consistent copy of another session's published figures. */
static void pub_read(const struct sql_stat_pub *p, uint64_t *v)
{
    for (;;) {
        uint32_t a = atomic_load_explicit(&p->seq, memory_order_acquire), b;
        if (a & 1)
            continue; /* a copy is being written: a moment */
        /* Acquire loads keep the count's second read after them. */
        for (int i = 0; i < PUB_N; i++)
            v[i] = atomic_load_explicit(&p->f[i], memory_order_acquire);
        b = atomic_load_explicit(&p->seq, memory_order_relaxed);
        if (a == b)
            return;
    }
}

keel_status sql_stat_catcache_rows(sql_session *s, bool describe,
                                   sql_rowset *out)
{
    sql_value row[PUB_N + 1];
    keel_status rc = KEEL_OK;

    memset(out, 0, sizeof(*out));
    out->ncols = PUB_N + 1;
    out->cols = sql_alloc(&s->arena, out->ncols * sizeof(*out->cols));
    out->types = sql_alloc(&s->arena, out->ncols * sizeof(uint32_t));
    if (out->cols == NULL || out->types == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    memset(out->cols, 0, out->ncols * sizeof(*out->cols));
    memcpy(out->cols[0].name, "pid", 4);
    out->cols[0].type = KEEL_INT4;
    out->types[0] = SQL_TYPE_INT4;
    for (int i = 0; i < PUB_N; i++) {
        memcpy(out->cols[i + 1].name, pub_names[i], strlen(pub_names[i]) + 1);
        out->cols[i + 1].type = KEEL_INT8;
        out->types[i + 1] = SQL_TYPE_INT8;
    }
    if (describe)
        return KEEL_OK;
    /* The caller's own, as of now. */
    publish_now(s);
    pthread_mutex_lock(&reg_lock);
    for (sql_session *x = reg_head; x != NULL && rc == KEEL_OK; x = x->reg_next) {
        uint64_t v[PUB_N];
        pub_read(x->pub, v);
        row[0] = (sql_value){
            .type = SQL_TYPE_INT4,
            .v.i = atomic_load_explicit(&x->pub->pid, memory_order_relaxed)};
        for (int i = 0; i < PUB_N; i++)
            row[i + 1] = (sql_value){.type = SQL_TYPE_INT8, .v.i = (int64_t)v[i]};
        rc = sql_rowset_add(s, out, row);
    }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}
