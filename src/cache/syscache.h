/*
 * syscache.h: a session's catalog caches, one per catalog_cache_id, and
 * the calls that search them.
 *
 * A syscache belongs to one session (one thread at a time): searches take
 * no lock and execute no atomic instruction.  Each cache sits over one
 * catalog index (catalog.h, catalog_cache_id):
 *
 *   CACHE_NAMESPACE_OID   keel_namespace by (oid)
 *   CACHE_NAMESPACE_NAME  keel_namespace by (name)
 *   CACHE_CLASS_OID       keel_class by (oid)
 *   CACHE_CLASS_NAME      keel_class by (name, namespace)
 *   CACHE_ATTRIBUTE_NUM   keel_attribute by (relid, attnum)
 *   CACHE_ATTRIBUTE_NAME  keel_attribute by (relid, name)
 *   CACHE_INDEX_OID       keel_index by (indexrelid)
 *   CACHE_INDEX_TABLE     keel_index by (indrelid): list searches only
 *   CACHE_STATISTIC       keel_statistic by (relid, attnum, inherited)
 *
 * Keys are passed as syscache_key values: integers (oid, int2, bool as 0
 * or 1) as themselves, names as a pointer to a NUL-terminated string
 * (SYSCACHE_NAME()).
 *
 * A search returns the entry of the one row the key finds, with a
 * reference the caller gives back with syscache_release(), or NULL when
 * no row has that key (a negative entry remembers this; nothing needs
 * releasing).  Errors of the catalog scan behind a miss (I/O, memory)
 * return their status with *out NULL and the message in the kerr of the
 * buffer session of the catalog_txn given to syscache_txn_begin().
 * Integer keys larger than their column holds (an oid above UINT32_MAX,
 * an int2 above UINT16_MAX, a bool above 1) and names longer than
 * KEEL_NAME_LEN - 1 bytes match no row: KEEL_ENOENT, nothing cached.
 *
 * The rows an entry holds are the catalog.h structs (catalog_namespace,
 * catalog_relation, catalog_attribute, catalog_indexdef,
 * catalog_statistic), decoded once when the entry is built:
 * syscache_row() returns a pointer to one, valid while the reference is
 * held.
 *
 * Transactions: syscache_txn_begin() is called by the engine each time the
 * session starts a transaction, after the transaction's snapshot is taken;
 * it applies the invalidation messages committed since (see inval.h,
 * "Commit ordering") and sets the session's coarse clock.  Misses scan the
 * catalogs with the catalog_txn given there (the transaction's snapshot
 * and, for its own uncommitted changes, its xid).  A transaction's own
 * catalog changes are applied to its own caches by
 * syscache_apply_pending() after each change and again at abort.
 */
#ifndef KEEL_CACHE_SYSCACHE_H
#define KEEL_CACHE_SYSCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/catcache.h"
#include "catalog/catalog.h"
#include "catalog/inval.h"

/* A key value: an integer, or a name as a pointer (SYSCACHE_NAME). */
typedef uintptr_t syscache_key;
#define SYSCACHE_NAME(str) ((syscache_key)(const char *)(str))

/* Tunables, per session (defaults in syscache_options_default()). */
typedef struct syscache_options {
    /* Seconds an entry may stay unused before a cache that is about to
     * double removes it instead; -1 disables age pruning. */
    int32_t prune_min_age;
    /* Bytes of catalog cache memory above which a session evicts
     * unreferenced entries; 0 disables the target. */
    uint64_t memory_target;
} syscache_options;

/* The defaults: prune_min_age 300 s, memory_target 4 MiB (README.md). */
void syscache_options_default(syscache_options *o);

/* What a session's caches hold and did (keel_cache_stats in keel.h has
 * the same fields for the public API). */
typedef struct syscache_stats {
    uint64_t bytes;          /* all memory of the session's caches */
    uint64_t positive_bytes; /* held by positive entries */
    uint64_t negative_bytes; /* held by negative entries */
    uint64_t list_bytes;     /* held by lists */
    uint64_t bucket_bytes;   /* bucket arrays (the floor of bytes) */
    uint64_t block_bytes;    /* the session's memory blocks, which hold
                              * what bytes counts up to 1 KiB a piece (and
                              * freed pieces, for reuse) */
    uint64_t entries, positive_entries, negative_entries, lists;
    uint64_t hits, negative_hits, misses, list_hits, list_misses;
    uint64_t evictions;     /* removed for the memory target */
    uint64_t age_prunes;    /* removed for age when about to grow */
    uint64_t invalidations; /* entries and lists removed by messages */
    uint64_t resets;        /* resets of all caches (queue or own list) */
    uint64_t by_cache_bytes[CACHE_COUNT];
} syscache_stats;

typedef struct syscache syscache;

/*
 * Creates a session's caches over the catalogs cat, reading messages from
 * q from its current head on, with options o (NULL: the defaults; a min
 * age below -1 reads as -1) and the default clock.  ENOMEM with the
 * message in err.  Nothing is cached yet; searches that miss need a
 * transaction (syscache_txn_begin()).
 */
int syscache_create(catalog *cat, inval_queue *q, const syscache_options *o,
                    syscache **out, kerr *err);

/* Frees the caches and all they hold (NULL is fine).  References still
 * held become invalid. */
void syscache_destroy(syscache *sc);

/* Changes the options (as syscache_create()); a memory target below what
 * the caches hold evicts at once. */
void syscache_set_options(syscache *sc, const syscache_options *o);

/* Fills *out with what the caches hold now and their counters. */
void syscache_get_stats(const syscache *sc, syscache_stats *out);

/* Where the session's coarse clock comes from (seconds; tests set their
 * own).  Read once per syscache_txn_begin(), never on a lookup. */
typedef uint64_t (*syscache_clock_fn)(void *ctx);
void syscache_set_clock(syscache *sc, syscache_clock_fn fn, void *ctx);

#if CATCACHE_WIRING == 3
/* The entry points behind function pointers (wiring 3). */
typedef int (*syscache_search1_fn)(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, catcache_entry **out);
typedef int (*syscache_search2_fn)(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, syscache_key k2,
                                   catcache_entry **out);
typedef int (*syscache_search3_fn)(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, syscache_key k2,
                                   syscache_key k3, catcache_entry **out);
typedef int (*syscache_search4_fn)(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, syscache_key k2,
                                   syscache_key k3, syscache_key k4,
                                   catcache_entry **out);
#endif

/*
 * A session's caches.  Defined here only so that the searches can be
 * inline; nothing outside src/cache touches its fields.  The caches come
 * first: a search reads sc->caches[id] and nothing else of it.
 */
struct syscache {
    catcache caches[CACHE_COUNT];
#if CATCACHE_WIRING == 3
    syscache_search1_fn search1;
    syscache_search2_fn search2;
    syscache_search3_fn search3;
    syscache_search4_fn search4;
#endif
    catcache_session sess;
    catalog *cat;
    inval_queue *queue;
    inval_reader reader;
    const catalog_txn *ct; /* the running transaction's, or NULL */
    syscache_clock_fn clock;
    void *clock_ctx;
    syscache_options opts;
    catalog_spare spare; /* memory its misses' catalog reads reuse */
};

/*
 * Transaction start, after the transaction's snapshot was taken: reads the
 * clock, waits for announced commits (inval_wait_commits()) and applies
 * the queued messages; misses until syscache_txn_end() scan the catalogs
 * as *ct (kept by pointer: it must live until then).  *consumed is true if
 * any message was applied (or the caches were reset): the caller must then
 * take a new snapshot and call again, until it is false, so that every
 * message applied belongs to a commit the snapshot sees and every commit
 * it sees has had its messages applied.
 */
int syscache_txn_begin(syscache *sc, const catalog_txn *ct, bool *consumed);

/* Transaction end (commit or abort): no catalog access until the next
 * begin.  At abort the caller first applies its pending list. */
void syscache_txn_end(syscache *sc);

/* Applies a transaction's own messages to this session's caches (after
 * each catalog change, and at abort; an overflowed list resets). */
void syscache_apply_pending(syscache *sc, const inval_pending *p);

/*
 * Searches with 1 to 4 keys (as many as the cache's index has).  KEEL_OK:
 * *out is the entry, referenced; KEEL_ENOENT: no row has the key (*out
 * NULL, nothing to release); any other status is an error of the catalog
 * scan behind a miss, with its message in the session's kerr.
 */
static inline int syscache_search1(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, catcache_entry **out);
static inline int syscache_search2(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, syscache_key k2,
                                   catcache_entry **out);
static inline int syscache_search3(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, syscache_key k2,
                                   syscache_key k3, catcache_entry **out);
static inline int syscache_search4(syscache *sc, catalog_cache_id id,
                                   syscache_key k1, syscache_key k2,
                                   syscache_key k3, syscache_key k4,
                                   catcache_entry **out);

/* The row an entry holds: a catalog_namespace, catalog_relation,
 * catalog_attribute, catalog_indexdef or catalog_statistic by its cache's
 * catalog.  Valid until the entry is released. */
static inline const void *syscache_row(const catcache_entry *e);

/* Gives back a reference from a search. */
static inline void syscache_release(syscache *sc, catcache_entry *e);

/*
 * List search on the first nkeys (at most the index's) key columns: every row
 * whose leading keys equal keys, in index order, as a referenced list
 * (possibly empty).  CACHE_INDEX_TABLE (the indexes of a table) and
 * CACHE_ATTRIBUTE_NUM with one key (the columns of a relation) are the
 * uses.  Errors as for searches.
 */
static inline int syscache_list(syscache *sc, catalog_cache_id id,
                                uint32_t nkeys, const syscache_key *keys,
                                catcache_list **out);
static inline uint32_t syscache_list_count(const catcache_list *l);
static inline const void *syscache_list_row(const catcache_list *l, uint32_t i);
static inline void syscache_list_release(syscache *sc, catcache_list *l);

/* syscache_list()'s error for a key count the cache id does not take. */
int syscache_list_bad_keys(syscache *sc, catalog_cache_id id, uint32_t nkeys,
                           catcache_list **out);

/*
 * The hash the cache computes for keys (nkeys = its index's key columns),
 * which catalog_key_hash() computes for the same key: what invalidation
 * messages for that key carry.
 */
uint32_t syscache_hash(const syscache *sc, catalog_cache_id id,
                       const syscache_key *keys);

/* Searches with the keys in an array (nkeys: the cache's). */
int syscache_search(syscache *sc, catalog_cache_id id, const syscache_key *keys,
                    catcache_entry **out);

/* Removes everything every cache holds (referenced entries and lists are
 * marked dead and freed at their release), as a reset message does. */
void syscache_reset(syscache *sc);

/* ------------------------------------------------------------------ */
/* Inline bodies.  The hot work lives in catcache.h's catcache_search(). */
/* ------------------------------------------------------------------ */

/* Bit i set: key i of the cache is a name.  Four bits per cache id, so
 * that with a constant id the mask is a constant and the search unrolls
 * without a test of the key types. */
#define SYSCACHE_NAME_MASKS                                                    \
    ((UINT64_C(1) << (4 * CACHE_NAMESPACE_NAME)) |                             \
     (UINT64_C(1) << (4 * CACHE_CLASS_NAME)) |                                 \
     (UINT64_C(2) << (4 * CACHE_ATTRIBUTE_NAME)))

static inline uint32_t syscache_name_mask(catalog_cache_id id)
{
    return (uint32_t)(SYSCACHE_NAME_MASKS >> (4 * (unsigned)id)) & 0xf;
}

/*
 * A name key hashed once, for searches of one name under several second
 * keys (a relation name in each schema of a search path):
 * syscache_name_init(), then syscache_search2_name().
 */
typedef struct syscache_name {
    const char *name;
    size_t len;
    uint64_t hash;
} syscache_name;

static inline void syscache_name_init(syscache_name *n, const char *name)
{
    n->name = name;
    n->len = catcache_key_len(1, 0, (uintptr_t)name);
    n->hash = catcache_key_hash(1, 0, (uintptr_t)name, n->len);
}

#if CATCACHE_WIRING == 3
static inline __attribute__((always_inline)) int
syscache_search1(syscache *sc, catalog_cache_id id, syscache_key k1,
                 catcache_entry **out)
{
    return sc->search1(sc, id, k1, out);
}

static inline __attribute__((always_inline)) int
syscache_search2(syscache *sc, catalog_cache_id id, syscache_key k1,
                 syscache_key k2, catcache_entry **out)
{
    return sc->search2(sc, id, k1, k2, out);
}

static inline __attribute__((always_inline)) int
syscache_search3(syscache *sc, catalog_cache_id id, syscache_key k1,
                 syscache_key k2, syscache_key k3, catcache_entry **out)
{
    return sc->search3(sc, id, k1, k2, k3, out);
}

static inline __attribute__((always_inline)) int
syscache_search4(syscache *sc, catalog_cache_id id, syscache_key k1,
                 syscache_key k2, syscache_key k3, syscache_key k4,
                 catcache_entry **out)
{
    return sc->search4(sc, id, k1, k2, k3, k4, out);
}
#else
static inline __attribute__((always_inline)) int
syscache_search1(syscache *sc, catalog_cache_id id, syscache_key k1,
                 catcache_entry **out)
{
    return catcache_search_wired(&sc->caches[id], syscache_name_mask(id), 1, k1,
                                 0, 0, 0, out);
}

static inline __attribute__((always_inline)) int
syscache_search2(syscache *sc, catalog_cache_id id, syscache_key k1,
                 syscache_key k2, catcache_entry **out)
{
    return catcache_search_wired(&sc->caches[id], syscache_name_mask(id), 2, k1,
                                 k2, 0, 0, out);
}

static inline __attribute__((always_inline)) int
syscache_search3(syscache *sc, catalog_cache_id id, syscache_key k1,
                 syscache_key k2, syscache_key k3, catcache_entry **out)
{
    return catcache_search_wired(&sc->caches[id], syscache_name_mask(id), 3, k1,
                                 k2, k3, 0, out);
}

static inline __attribute__((always_inline)) int
syscache_search4(syscache *sc, catalog_cache_id id, syscache_key k1,
                 syscache_key k2, syscache_key k3, syscache_key k4,
                 catcache_entry **out)
{
    return catcache_search_wired(&sc->caches[id], syscache_name_mask(id), 4, k1,
                                 k2, k3, k4, out);
}
#endif

/* syscache_search2() of cache id, whose first key is a name, with that
 * name hashed by syscache_name_init(). */
static inline __attribute__((always_inline)) int
syscache_search2_name(syscache *sc, catalog_cache_id id,
                      const syscache_name *k1, syscache_key k2,
                      catcache_entry **out)
{
    assert(syscache_name_mask(id) & 1u);
#if CATCACHE_WIRING == 3
    return sc->search2(sc, id, SYSCACHE_NAME(k1->name), k2, out);
#else
    return catcache_search_wired_hashed(&sc->caches[id], syscache_name_mask(id),
                                        2, k1->hash, k1->len,
                                        (uintptr_t)k1->name, k2, 0, 0, out);
#endif
}

static inline const void *syscache_row(const catcache_entry *e)
{
    return catcache_row(e);
}

static inline __attribute__((always_inline)) void
syscache_release(syscache *sc, catcache_entry *e)
{
    (void)sc;
    catcache_release(e);
}

static inline __attribute__((always_inline)) int
syscache_list(syscache *sc, catalog_cache_id id, uint32_t nkeys,
              const syscache_key *keys, catcache_list **out)
{
    catcache *cc = &sc->caches[id];

    if (catcache_unlikely(nkeys < 1 || nkeys > cc->nkeys))
        return syscache_list_bad_keys(sc, id, nkeys, out);
    return catcache_list_find(cc, syscache_name_mask(id), nkeys, keys, out);
}

static inline uint32_t syscache_list_count(const catcache_list *l)
{
    return l->e.nrows;
}

static inline const void *syscache_list_row(const catcache_list *l, uint32_t i)
{
    assert(i < l->e.nrows);
    return (const char *)(&l->e + 1) + (size_t)i * l->e.cache->rowsize;
}

static inline __attribute__((always_inline)) void
syscache_list_release(syscache *sc, catcache_list *l)
{
    (void)sc;
    catcache_list_release(l);
}

#endif /* KEEL_CACHE_SYSCACHE_H */
