/*
 * syscache.c: a session's nine catalog caches (syscache.h): which catalog
 * index each one caches and with which key types, the fill function that
 * scans the catalog on a miss and decodes its rows, and the transaction
 * bracket that applies invalidation messages and sets the coarse clock.
 */
#include "cache/syscache.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Messages read from the queue per inval_read() call. */
#define SYSCACHE_INVAL_BATCH 256

/* How each cache maps onto the catalogs. */
typedef struct syscache_def {
    catalog_id cat;
    int idx;        /* index of the catalog: 0 or 1 */
    uint32_t nkeys; /* its key columns */
    keel_type keytypes[CATCACHE_MAX_KEYS];
    bool list_only; /* non-unique index: list searches only */
    uint32_t nbuckets;
} syscache_def;

static const syscache_def syscache_defs[CACHE_COUNT] = {
    [CACHE_NAMESPACE_OID] = {CAT_NAMESPACE, 0, 1, {KEEL_OID}, false, 16},
    [CACHE_NAMESPACE_NAME] = {CAT_NAMESPACE, 1, 1, {KEEL_NAME}, false, 16},
    [CACHE_CLASS_OID] = {CAT_CLASS, 0, 1, {KEEL_OID}, false, 64},
    [CACHE_CLASS_NAME] = {CAT_CLASS, 1, 2, {KEEL_NAME, KEEL_OID}, false, 64},
    [CACHE_ATTRIBUTE_NUM] =
        {CAT_ATTRIBUTE, 0, 2, {KEEL_OID, KEEL_INT2}, false, 64},
    [CACHE_ATTRIBUTE_NAME] =
        {CAT_ATTRIBUTE, 1, 2, {KEEL_OID, KEEL_NAME}, false, 64},
    [CACHE_INDEX_OID] = {CAT_INDEX, 0, 1, {KEEL_OID}, false, 32},
    [CACHE_INDEX_TABLE] = {CAT_INDEX, 1, 1, {KEEL_OID}, true, 16},
    [CACHE_STATISTIC] =
        {CAT_STATISTIC, 0, 3, {KEEL_OID, KEEL_INT2, KEEL_BOOL}, false, 32},
};

/* Bytes of the decoded row struct of each catalog. */
static size_t syscache_rowsize(catalog_id cat)
{
    switch (cat) {
    case CAT_NAMESPACE:
        return sizeof(catalog_namespace);
    case CAT_CLASS:
        return sizeof(catalog_relation);
    case CAT_ATTRIBUTE:
        return sizeof(catalog_attribute);
    case CAT_INDEX:
        return sizeof(catalog_indexdef);
    default:
        return sizeof(catalog_statistic);
    }
}

void syscache_options_default(syscache_options *o)
{
    o->prune_min_age = KEEL_CATALOG_CACHE_PRUNE_MIN_AGE_DEFAULT;
    o->memory_target = KEEL_CATALOG_CACHE_MEMORY_TARGET_DEFAULT;
}

/* ------------------------------------------------------------------ */
/* The miss path: a catalog index scan                                */
/* ------------------------------------------------------------------ */

typedef struct syscache_scan {
    catalog_id cat;
    catcache_rowbuf *rb;
    kerr *err;
} syscache_scan;

/* A catalog_row_fn: decodes each visible row into the row buffer. */
static int syscache_collect(void *arg, const heap_row *row, bool *stop)
{
    syscache_scan *ss = arg;
    void *slot = catcache_rowbuf_push(ss->rb);

    if (slot == NULL)
        return kerr_set(ss->err, KEEL_ENOMEM,
                        "out of memory for catalog cache rows");
    switch (ss->cat) {
    case CAT_NAMESPACE:
        catalog_namespace_decode(row, slot);
        break;
    case CAT_CLASS:
        catalog_relation_decode(row, slot);
        break;
    case CAT_ATTRIBUTE:
        catalog_attribute_decode(row, slot);
        break;
    case CAT_INDEX:
        catalog_index_decode(row, slot);
        break;
    default:
        catalog_statistic_decode(row, slot);
        break;
    }
    if (ss->rb->count >= ss->rb->max)
        *stop = true;
    return KEEL_OK;
}

/* A catcache_fill_fn: scans the cache's index with the transaction's
 * catalog_txn. */
static int syscache_fill(void *arg, const catcache *cc, const uintptr_t *keys,
                         uint32_t nkeys, catcache_rowbuf *rb)
{
    syscache *sc = arg;
    const syscache_def *d = &syscache_defs[cc->id];
    keel_value kv[CATCACHE_MAX_KEYS];
    catalog_txn ct;
    syscache_scan ss;

    if (sc->ct == NULL)
        return kerr_set(sc->sess.err, KEEL_EINVAL,
                        "catalog cache miss outside a transaction");
    memset(kv, 0, sizeof(kv));
    for (uint32_t i = 0; i < nkeys; i++) {
        switch (d->keytypes[i]) {
        case KEEL_OID:
            kv[i].v.oid = (uint32_t)keys[i];
            break;
        case KEEL_INT2:
            kv[i].v.i2 = (int16_t)(uint16_t)keys[i];
            break;
        case KEEL_BOOL:
            kv[i].v.b = keys[i] != 0;
            break;
        default:
            kv[i].v.s.ptr = (const char *)keys[i];
            kv[i].v.s.len = (uint32_t)strlen(kv[i].v.s.ptr);
            break;
        }
    }
    ct = *sc->ct;
    ct.spare = &sc->spare; /* a miss allocates nothing */
    ss.cat = d->cat;
    ss.rb = rb;
    ss.err = &ct.bs->err;
    return catalog_index_scan(sc->cat, &ct, d->cat, d->idx, kv, (uint16_t)nkeys,
                              syscache_collect, &ss);
}

/* ------------------------------------------------------------------ */
/* Wiring 3: the entry points behind function pointers                */
/* ------------------------------------------------------------------ */

#if CATCACHE_WIRING == 3
#define SYSCACHE_SEARCH_VARIANT(name, stamp)                                   \
    static int syscache_search1_##name(syscache *sc, catalog_cache_id id,      \
                                       syscache_key k1, catcache_entry **out)  \
    {                                                                          \
        return catcache_search(&sc->caches[id], syscache_name_mask(id), 1,     \
                               stamp, k1, 0, 0, 0, out);                       \
    }                                                                          \
    static int syscache_search2_##name(syscache *sc, catalog_cache_id id,      \
                                       syscache_key k1, syscache_key k2,       \
                                       catcache_entry **out)                   \
    {                                                                          \
        return catcache_search(&sc->caches[id], syscache_name_mask(id), 2,     \
                               stamp, k1, k2, 0, 0, out);                      \
    }                                                                          \
    static int syscache_search3_##name(syscache *sc, catalog_cache_id id,      \
                                       syscache_key k1, syscache_key k2,       \
                                       syscache_key k3, catcache_entry **out)  \
    {                                                                          \
        return catcache_search(&sc->caches[id], syscache_name_mask(id), 3,     \
                               stamp, k1, k2, k3, 0, out);                     \
    }                                                                          \
    static int syscache_search4_##name(                                        \
        syscache *sc, catalog_cache_id id, syscache_key k1, syscache_key k2,   \
        syscache_key k3, syscache_key k4, catcache_entry **out)                \
    {                                                                          \
        return catcache_search(&sc->caches[id], syscache_name_mask(id), 4,     \
                               stamp, k1, k2, k3, k4, out);                    \
    }

SYSCACHE_SEARCH_VARIANT(plain, CATCACHE_STAMP_NEVER)
SYSCACHE_SEARCH_VARIANT(pruning, CATCACHE_STAMP_ALWAYS)
#endif

/* Chooses the search routines for the session's options (wirings 2, 3). */
static void syscache_choose_searches(syscache *sc)
{
#if CATCACHE_WIRING == 2
    for (int id = 0; id < CACHE_COUNT; id++)
        catcache_choose_search(&sc->caches[id]);
#elif CATCACHE_WIRING == 3
    if (sc->sess.prune_enabled) {
        sc->search1 = syscache_search1_pruning;
        sc->search2 = syscache_search2_pruning;
        sc->search3 = syscache_search3_pruning;
        sc->search4 = syscache_search4_pruning;
    } else {
        sc->search1 = syscache_search1_plain;
        sc->search2 = syscache_search2_plain;
        sc->search3 = syscache_search3_plain;
        sc->search4 = syscache_search4_plain;
    }
#else
    (void)sc;
#endif
}

/* ------------------------------------------------------------------ */
/* Creation, options, statistics                                      */
/* ------------------------------------------------------------------ */

/* The default clock: CLOCK_MONOTONIC_COARSE in seconds. */
static uint64_t syscache_clock_default(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec;
}

/* Options with a min age below -1 read as -1. */
static syscache_options syscache_options_clean(const syscache_options *o)
{
    syscache_options r;

    if (o == NULL) {
        syscache_options_default(&r);
        return r;
    }
    r = *o;
    if (r.prune_min_age < -1)
        r.prune_min_age = -1;
    return r;
}

int syscache_create(catalog *cat, inval_queue *q, const syscache_options *o,
                    syscache **out, kerr *err)
{
    syscache *sc = mem_alloc_aligned(sizeof(*sc));
    int rc;

    *out = NULL;
    if (sc == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory for catalog caches");
    sc->cat = cat;
    sc->queue = q;
    sc->opts = syscache_options_clean(o);
    sc->clock = syscache_clock_default;
    sc->clock_ctx = NULL;
    catcache_session_init(&sc->sess, sc->opts.prune_min_age,
                          sc->opts.memory_target);
    catcache_session_set_clock(&sc->sess, (uint32_t)sc->clock(sc->clock_ctx));
    for (int id = 0; id < CACHE_COUNT; id++) {
        const syscache_def *d = &syscache_defs[id];
        catcache_def cd = {.id = (uint32_t)id,
                           .nkeys = d->nkeys,
                           .name_mask = syscache_name_mask(id),
                           .rowsize = syscache_rowsize(d->cat),
                           .list_only = d->list_only,
                           .nbuckets = d->nbuckets,
                           .fill = syscache_fill,
                           .fill_arg = sc};
        for (uint32_t i = 0; i < d->nkeys; i++) {
            switch (d->keytypes[i]) {
            case KEEL_OID:
                cd.key_max[i] = UINT32_MAX;
                break;
            case KEEL_INT2:
                cd.key_max[i] = UINT16_MAX;
                break;
            case KEEL_BOOL:
                cd.key_max[i] = 1;
                break;
            default:
                assert(d->keytypes[i] == KEEL_NAME);
                assert(cd.name_mask & (1u << i));
                break;
            }
            assert(((cd.name_mask >> i) & 1) == (d->keytypes[i] == KEEL_NAME));
        }
        rc = catcache_init(&sc->caches[id], &sc->sess, &cd, err);
        if (rc != KEEL_OK) {
            syscache_destroy(sc);
            return rc;
        }
    }
    syscache_choose_searches(sc);
    inval_reader_init(q, &sc->reader);
    *out = sc;
    return KEEL_OK;
}

void syscache_destroy(syscache *sc)
{
    if (sc == NULL)
        return;
    for (int id = 0; id < CACHE_COUNT; id++)
        catcache_destroy(&sc->caches[id]);
    catcache_session_destroy(&sc->sess);
    assert(sc->sess.bytes == 0);
    catalog_spare_free(&sc->spare);
    mem_free_aligned(sc);
}

void syscache_set_options(syscache *sc, const syscache_options *o)
{
    sc->opts = syscache_options_clean(o);
    catcache_session_set_options(&sc->sess, sc->opts.prune_min_age,
                                 sc->opts.memory_target);
    syscache_choose_searches(sc);
}

void syscache_get_stats(const syscache *sc, syscache_stats *out)
{
    const catcache_session *s = &sc->sess;

    memset(out, 0, sizeof(*out));
    out->bytes = s->bytes;
    out->positive_bytes = s->kind_bytes[CATCACHE_POSITIVE];
    out->negative_bytes = s->kind_bytes[CATCACHE_NEGATIVE];
    out->list_bytes = s->kind_bytes[CATCACHE_LIST];
    out->bucket_bytes = s->bucket_bytes;
    out->block_bytes = s->block_bytes;
    out->positive_entries = s->kind_count[CATCACHE_POSITIVE];
    out->negative_entries = s->kind_count[CATCACHE_NEGATIVE];
    out->entries = out->positive_entries + out->negative_entries;
    out->lists = s->kind_count[CATCACHE_LIST];
    out->evictions = s->evictions;
    out->age_prunes = s->age_prunes;
    out->invalidations = s->invalidations;
    out->resets = s->resets;
    for (int id = 0; id < CACHE_COUNT; id++) {
        const catcache *cc = &sc->caches[id];
        out->hits += cc->hits;
        out->negative_hits += cc->negative_hits;
        out->misses += cc->misses;
        out->list_hits += cc->list_hits;
        out->list_misses += cc->list_misses;
        out->by_cache_bytes[id] = cc->bytes;
    }
}

void syscache_set_clock(syscache *sc, syscache_clock_fn fn, void *ctx)
{
    sc->clock = fn != NULL ? fn : syscache_clock_default;
    sc->clock_ctx = fn != NULL ? ctx : NULL;
    catcache_session_set_clock(&sc->sess, (uint32_t)sc->clock(sc->clock_ctx));
}

/* ------------------------------------------------------------------ */
/* Invalidation and transactions                                      */
/* ------------------------------------------------------------------ */

void syscache_reset(syscache *sc)
{
    for (int id = 0; id < CACHE_COUNT; id++)
        catcache_reset(&sc->caches[id]);
    sc->sess.resets++;
}

/* Applies one message: drops what its key hash names in its cache (and
 * the cache's lists), or everything for a reset. */
static void syscache_apply_msg(syscache *sc, const inval_msg *m)
{
    if (m->cache_id == INVAL_RESET_ALL) {
        syscache_reset(sc);
        return;
    }
    if (m->cache_id < CACHE_COUNT)
        catcache_invalidate(&sc->caches[m->cache_id], m->hash);
}

int syscache_txn_begin(syscache *sc, const catalog_txn *ct, bool *consumed)
{
    inval_msg msgs[SYSCACHE_INVAL_BATCH];

    sc->ct = ct;
    sc->sess.err = &ct->bs->err;
    catcache_session_set_clock(&sc->sess, (uint32_t)sc->clock(sc->clock_ctx));
    *consumed = false;
    inval_wait_commits(sc->queue);
    while (inval_has_news(sc->queue, &sc->reader)) {
        uint32_t n = 0;
        if (inval_read(sc->queue, &sc->reader, msgs, SYSCACHE_INVAL_BATCH,
                       &n) == INVAL_RESET) {
            syscache_reset(sc);
            *consumed = true;
            continue;
        }
        if (n == 0)
            break;
        for (uint32_t i = 0; i < n; i++)
            syscache_apply_msg(sc, &msgs[i]);
        *consumed = true;
    }
    return KEEL_OK;
}

void syscache_txn_end(syscache *sc)
{
    sc->ct = NULL;
    sc->sess.err = NULL;
}

void syscache_apply_pending(syscache *sc, const inval_pending *p)
{
    if (p->overflow) {
        syscache_reset(sc);
        return;
    }
    for (uint32_t i = 0; i < p->count; i++)
        syscache_apply_msg(sc, &p->msgs[i]);
}

/* ------------------------------------------------------------------ */
/* Searches by array, lists, hashes                                   */
/* ------------------------------------------------------------------ */

int syscache_search(syscache *sc, catalog_cache_id id, const syscache_key *keys,
                    catcache_entry **out)
{
    switch (syscache_defs[id].nkeys) {
    case 1:
        return syscache_search1(sc, id, keys[0], out);
    case 2:
        return syscache_search2(sc, id, keys[0], keys[1], out);
    case 3:
        return syscache_search3(sc, id, keys[0], keys[1], keys[2], out);
    default:
        return syscache_search4(sc, id, keys[0], keys[1], keys[2], keys[3],
                                out);
    }
}

uint32_t syscache_hash(const syscache *sc, catalog_cache_id id,
                       const syscache_key *keys)
{
    return catcache_hash_keys(&sc->caches[id], syscache_defs[id].nkeys, keys);
}

int syscache_list_bad_keys(syscache *sc, catalog_cache_id id, uint32_t nkeys,
                           catcache_list **out)
{
    *out = NULL;
    return kerr_set(sc->sess.err, KEEL_EINVAL,
                    "list search with %u keys on a cache of %u", nkeys,
                    syscache_defs[id].nkeys);
}
