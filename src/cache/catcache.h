/*
 * catcache.h: a session's cache of catalog rows by key, with negative
 * entries, list searches, invalidation by key hash and bloat protection.
 *
 * One catcache caches the rows of one catalog index for one session.  It
 * knows nothing of catalogs: rows are fixed-size structs that a fill
 * function (set up by syscache.c) produces on a miss.  Every catcache of a
 * session shares one catcache_session: its coarse clock, its memory
 * accounting and target, and the queues that eviction walks.  The protocol
 * (hit path, miss path, invalidation, references, pruning) is described in
 * README.md beside this file.
 *
 * Nothing here is shared between threads: a session's caches are used by
 * one thread at a time, so searches take no lock and run no atomic
 * instruction.  The hit path (catcache_search()) and the release are
 * inline; everything else is out of line in catcache.c.
 *
 * Build options (CMake defines them for the library's sources):
 *   KEEL_CATCACHE_PRUNE (1, default; 0 compiles the protection out)
 *   KEEL_CATCACHE_WIRING (0, default: the design below; 1, 2, 3: the three
 *     ways the PostgreSQL patch was wired, for instruction counts only)
 */
#ifndef KEEL_CACHE_CATCACHE_H
#define KEEL_CACHE_CATCACHE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "keel/keel.h"
#include "port/error.h"
#include "port/hash.h"
#include "port/mem.h"

#ifndef KEEL_CATCACHE_PRUNE
#define KEEL_CATCACHE_PRUNE 1
#endif
#ifndef KEEL_CATCACHE_WIRING
#define KEEL_CATCACHE_WIRING 0
#endif
#if KEEL_CATCACHE_WIRING < 0 || KEEL_CATCACHE_WIRING > 3
#error "KEEL_CATCACHE_WIRING must be 0, 1, 2 or 3"
#endif

/*
 * How a hit records use.  CATCACHE_USES (keel's design): the counter a hit
 * bumps is `uses` instead of a reference count, and a release bumps
 * `releases`; the references held are uses - releases and "used since the
 * eviction hand last passed" is uses != uses_seen, so a hit stores no more
 * than a cache without protection.  CATCACHE_STAMP (wirings 1 to 3): a
 * plain reference count, and the pruning variant of the search stores the
 * session clock into the entry on every hit, as the PostgreSQL patch did.
 * Without protection (KEEL_CATCACHE_PRUNE 0) neither: a plain reference
 * count, and the wiring option has no effect.
 */
#define CATCACHE_USES   (KEEL_CATCACHE_PRUNE && KEEL_CATCACHE_WIRING == 0)
#define CATCACHE_STAMP  (KEEL_CATCACHE_PRUNE && KEEL_CATCACHE_WIRING != 0)
#define CATCACHE_WIRING (KEEL_CATCACHE_PRUNE ? KEEL_CATCACHE_WIRING : 0)

#define CATCACHE_MAX_KEYS 4
/* The longest name key that can match a row (catalog names are cut). */
#define CATCACHE_NAME_MAX (KEEL_NAME_LEN - 1)
/* An entry's name copy is preceded by its length, or this for any length
 * from this up (names a list was searched with may be of any length). */
#define CATCACHE_NAME_LEN_CAP 255

#define catcache_likely(x)   __builtin_expect(!!(x), 1)
#define catcache_unlikely(x) __builtin_expect(!!(x), 0)

/* A doubly linked ring through a sentinel. */
typedef struct catcache_link {
    struct catcache_link *prev;
    struct catcache_link *next;
} catcache_link;

/* What an entry is (catcache_entry.kind); also the eviction queues, in
 * the order eviction prefers them. */
typedef enum catcache_kind {
    CATCACHE_NEGATIVE = 0, /* a key no row has */
    CATCACHE_POSITIVE,     /* one row */
    CATCACHE_LIST,         /* the rows of a list search */
    CATCACHE_KINDS
} catcache_kind;

typedef struct catcache catcache;
typedef struct catcache_session catcache_session;

/*
 * An entry: one key and its row (positive), or a key no row has
 * (negative).  Lists (catcache_list) begin with one.  The row(s) follow the
 * struct, then the copies of name keys.
 *
 * The first 56 bytes are what the search reads and a hit writes (a hit
 * that moves the entry to its chain's front writes the next 8 too).  With
 * protection (CATCACHE_USES) and without, the counter a hit bumps and the
 * one a release bumps are one word each and the keys sit at the same
 * offset, so that a hit and a release compile to the same instructions in
 * both builds.  Name keys point to copies after the row(s), so that an
 * entry's keys stay valid as long as it does.
 */
typedef struct catcache_entry {
    struct catcache_entry *next; /* bucket chain */
    uint32_t hash;               /* the keys' hash */
#if CATCACHE_USES
    uint32_t uses;     /* hits and references handed out (wraps) */
    uint32_t releases; /* references given back (wraps) */
#else
    uint32_t refcount; /* references held (positive entries, lists) */
#endif
#if CATCACHE_STAMP
    uint32_t stamp; /* session clock + 1 at the last hit, 0: none since the
                       hand passed */
#endif
    uint8_t kind;  /* catcache_kind */
    uint8_t dead;  /* removed while referenced: freed at the last release */
    uint8_t nkeys; /* keys that identify it (lists: the leading ones) */
    uintptr_t keys[CATCACHE_MAX_KEYS]; /* integers, or name copies */
    /* The link that points at it: its chain's slot in the bucket array, or
     * the previous member's next (NULL when on no chain), so that it
     * leaves its chain without a walk of it.  Written by a hit only when
     * it moves the entry to the front. */
    struct catcache_entry **pprev;
    /* Cold: miss, invalidation and eviction only. */
    catcache_link q; /* its eviction queue, or the session's dead ring */
    catcache *cache; /* owner */
    uint32_t bytes;  /* allocated for it, all included */
    uint32_t nrows;  /* rows that follow (positive 1, negative 0) */
#if KEEL_CATCACHE_PRUNE
#if CATCACHE_USES
    uint32_t uses_seen; /* uses when the hand last passed */
#endif
    uint32_t used_at; /* session clock at the last known use */
#endif
} catcache_entry;

/* A list: the rows whose leading keys equal its keys, in index order. */
typedef struct catcache_list {
    catcache_entry e;
} catcache_list;

/* The rows a fill function produces for a miss. */
typedef struct catcache_rowbuf {
    char *rows; /* count rows of rowsize bytes */
    uint32_t count;
    uint32_t cap;
    uint32_t max; /* most rows wanted (1 for a search) */
    size_t rowsize;
} catcache_rowbuf;

/*
 * Finds the rows for keys (the first nkeys key columns of cc's index) and
 * appends each to rb with catcache_rowbuf_push(), stopping when rb->count
 * reaches rb->max.  Returns KEEL_OK (no rows: nothing found) or an error,
 * its message in the session's kerr.
 */
typedef int (*catcache_fill_fn)(void *arg, const catcache *cc,
                                const uintptr_t *keys, uint32_t nkeys,
                                catcache_rowbuf *rb);

/* A room for one more row in rb (zeroed), or NULL if memory ran out. */
void *catcache_rowbuf_push(catcache_rowbuf *rb);

#if CATCACHE_WIRING == 2
/* The search routine behind a function pointer (wiring 2). */
typedef int (*catcache_search_fn)(catcache *cc, uintptr_t k1, uintptr_t k2,
                                  uintptr_t k3, uintptr_t k4,
                                  catcache_entry **out);
#endif

/*
 * One cache.  The first fields are the search's; counters a hit bumps sit
 * beside them, all in the cache's first line (it starts one), so that a
 * hit touches that line, a bucket head and the entry.
 */
struct catcache {
    /* nbuckets chains (a power of two) */
    CACHE_ALIGNED catcache_entry **buckets;
    uint32_t mask;          /* nbuckets - 1 */
    uint32_t nkeys;         /* key columns of the index (1..4) */
    uint64_t hits;          /* positive hits */
    uint64_t negative_hits; /* negative hits */
#if CATCACHE_WIRING == 1
    catcache_session *hot_sess; /* the clock and the pruning switch */
#endif
#if CATCACHE_WIRING == 2
    catcache_search_fn search; /* plain or pruning, chosen at creation */
#endif
    /* Cold. */
    catcache_session *sess;
    uint32_t id;        /* the cache id (invalidation messages) */
    uint32_t name_mask; /* bit i: key i is a name (else an integer) */
    uint64_t key_max[CATCACHE_MAX_KEYS]; /* largest valid integer key */
    size_t rowsize;
    bool list_only;            /* no single-row searches (non-unique index) */
    uint32_t nentries;         /* live entries in buckets */
    catcache_entry **lbuckets; /* lists, by the hash of their keys */
    uint32_t lmask;
    uint32_t nlists; /* live lists */
    uint64_t bytes;  /* entries, lists, bucket arrays */
    uint64_t misses, list_hits, list_misses;
    catcache_fill_fn fill;
    void *fill_arg;
};

/*
 * A session's cache memory: entries, lists and bucket arrays of up to
 * CATCACHE_CHUNK_MAX bytes are carved, in classes of CATCACHE_CHUNK_ALIGN
 * bytes, from slabs of CATCACHE_SLAB bytes (aligned to their size, so
 * that a piece's address names its slab), each holding pieces of one
 * class; the slabs come from regions that * the session alone uses.  A piece
 * freed goes back to its slab for the next of its class, and a slab emptied to
 * the session for any class, so that memory freed by pruning serves whatever
 * size is missed next: the regions held stay near the most the pieces ever took
 * at once.  A hit writes its entry, so that an entry beside another session's
 * (in an allocator both use: sessions begun on one thread, threads that share a
 * malloc arena) would move that line between their cores at every hit.
 * Larger pieces come from malloc().
 */
#define CATCACHE_SLAB        4096
#define CATCACHE_SLAB_HEAD   64 /* its header's cache line */
#define CATCACHE_CHUNK_ALIGN 16
#define CATCACHE_CHUNK_MAX   1024
#define CATCACHE_CLASSES     (CATCACHE_CHUNK_MAX / CATCACHE_CHUNK_ALIGN)
/* Slabs in a session's first region (64 KiB, what a session that misses
 * little needs) and in each later one (120 KiB: just under the 128 KiB
 * from which glibc's malloc() maps memory apart from its heap by default),
 * and what a region of n slabs takes from malloc(): its slabs, and room
 * to align them, which costs a later region 3% of it. */
#define CATCACHE_FIRST_SLABS  16
#define CATCACHE_REGION_SLABS 30
#define CATCACHE_REGION_BYTES(n)                                               \
    ((size_t)(n)*CATCACHE_SLAB + MEM_START_SLACK(CATCACHE_SLAB))

/* A slab's header, on its first line. */
typedef struct catcache_slab catcache_slab;
struct catcache_slab {
    /* On its class's list of slabs with room, or on the session's list
     * of empty ones (next only). */
    catcache_slab *next, *prev;
    void *free;     /* freed pieces, linked through their first word */
    uint32_t fresh; /* offset of the part never handed out since emptied */
    uint16_t cls;   /* pieces of cls * CATCACHE_CHUNK_ALIGN bytes */
    uint16_t used;  /* pieces handed out */
    /* In a region's first slab: the region's allocation, its slabs, and
     * the next region's first slab. */
    void *region;
    uint32_t region_slabs;
    catcache_slab *region_next;
};

/* What every cache of a session shares. */
struct catcache_session {
    uint32_t now; /* the coarse clock, seconds, set once per transaction */
    bool prune_enabled; /* min age >= 0 or a memory target */
    int32_t prune_min_age;
    uint64_t memory_target;
    kerr *err; /* where miss errors go (the transaction's), or NULL */
    /* Accounting: exact bytes asked for (the blocks hold them rounded). */
    uint64_t bytes;
    uint64_t kind_bytes[CATCACHE_KINDS];
    uint64_t kind_count[CATCACHE_KINDS]; /* entries and lists, dead too */
    uint64_t bucket_bytes;
    uint64_t evictions, age_prunes, invalidations, resets;
    /* Live entries by kind, oldest first (the SIEVE queues), and each
     * queue's hand: the next to examine, NULL for the oldest. */
    catcache_link queue[CATCACHE_KINDS];
    catcache_link *hand[CATCACHE_KINDS];
    uint64_t qlen[CATCACHE_KINDS];
    catcache_link dead; /* removed while referenced */
    bool evicting;
    /* Memory (see CATCACHE_SLAB): by class (class c: pieces of
     * c * CATCACHE_CHUNK_ALIGN bytes), the slabs with room; the empty
     * slabs; the newest region's slabs never used; the regions. */
    catcache_slab *room[CATCACHE_CLASSES + 1];
    catcache_slab *empty;
    char *next_slab, *slabs_end;
    catcache_slab *regions;
    uint64_t block_bytes; /* the regions' total */
};

/*
 * Sets up a session's shared state: clock 0, the given options (see
 * syscache_options), nothing allocated.
 */
void catcache_session_init(catcache_session *s, int32_t prune_min_age,
                           uint64_t memory_target);

/* Changes the options; a lower memory target evicts at once. */
void catcache_session_set_options(catcache_session *s, int32_t prune_min_age,
                                  uint64_t memory_target);

/* Frees what is left on the dead ring, and the session's memory blocks
 * (call after every cache's catcache_destroy()). */
void catcache_session_destroy(catcache_session *s);

/* Sets the session clock (seconds). */
static inline void catcache_session_set_clock(catcache_session *s, uint32_t now)
{
    s->now = now;
}

/* Describes a cache to catcache_init(). */
typedef struct catcache_def {
    uint32_t id;
    uint32_t nkeys;                      /* 1..4 */
    uint32_t name_mask;                  /* bit i: key i is a name */
    uint64_t key_max[CATCACHE_MAX_KEYS]; /* integer keys: largest value */
    size_t rowsize;                      /* bytes of a row struct (sizeof) */
    bool list_only;
    uint32_t nbuckets; /* initial, a power of two */
    catcache_fill_fn fill;
    void *fill_arg;
} catcache_def;

/* Sets up cc for session s (ENOMEM with a message in err). */
int catcache_init(catcache *cc, catcache_session *s, const catcache_def *d,
                  kerr *err);

/* Frees every entry and list of cc (referenced ones too) and its buckets. */
void catcache_destroy(catcache *cc);

/*
 * The miss path: builds a positive or negative entry for the keys (hash h)
 * after asking the fill function.  Returns as catcache_search().
 */
int catcache_miss(catcache *cc, uint32_t h, uintptr_t k1, uintptr_t k2,
                  uintptr_t k3, uintptr_t k4, catcache_entry **out);

/* The last release of a dead entry or list: frees it if unreferenced. */
void catcache_release_dead(catcache_entry *e);

/*
 * Removes every entry of cc with hash h and every list of cc; referenced
 * ones are marked dead and freed at their last release.
 */
void catcache_invalidate(catcache *cc, uint32_t h);

/* Removes every entry and list of cc (referenced ones as above). */
void catcache_reset(catcache *cc);

/*
 * Checks cc's chains: each member sits in the chain its hash selects, its
 * back link (pprev) points at the link that leads to it, it is not dead,
 * and the members number nentries (lists: nlists).  False, with the first
 * fault in why, if not.
 */
bool catcache_chains_valid(const catcache *cc, char *why, size_t len);

/*
 * Checks s's memory: every slab on its class's list has room and pieces
 * in use, every slab without pieces in use is on the empty list, each
 * slab's freed pieces and pieces in use add up to those it carved, and the
 * regions add up to block_bytes.  Sets *pieces to the pieces in use (each
 * entry, list and bucket array of up to CATCACHE_CHUNK_MAX bytes, dead
 * ones too).  False, with the first fault in why, if not.
 */
bool catcache_memory_valid(const catcache_session *s, uint64_t *pieces,
                           char *why, size_t len);

/* A list search's miss (catcache_list_find() below is the hit path):
 * builds the list of keys (hash h); KEEL_OK with *out a referenced list,
 * or an error of the fill function (or ENOMEM). */
int catcache_list_miss(catcache *cc, uint32_t h, uint32_t nkeys,
                       const uintptr_t *keys, catcache_list **out);

/* The hash of a key set, as catalog_key_hash() computes it. */
uint32_t catcache_hash_keys(const catcache *cc, uint32_t nkeys,
                            const uintptr_t *keys);

#if CATCACHE_WIRING == 2
/* The two search routines wiring 2 chooses between. */
int catcache_search_plain(catcache *cc, uintptr_t k1, uintptr_t k2,
                          uintptr_t k3, uintptr_t k4, catcache_entry **out);
int catcache_search_pruning(catcache *cc, uintptr_t k1, uintptr_t k2,
                            uintptr_t k3, uintptr_t k4, catcache_entry **out);
/* Points cc->search at the pruning variant if the session prunes, else at
 * the plain one (at creation and when the options change). */
void catcache_choose_search(catcache *cc);
#endif

/* ------------------------------------------------------------------ */
/* The hit path                                                       */
/* ------------------------------------------------------------------ */

/* References held on a positive entry or list. */
static inline uint32_t catcache_refcount(const catcache_entry *e)
{
#if CATCACHE_USES
    return e->uses - e->releases;
#else
    return e->refcount;
#endif
}

/* True if e may not be freed: a positive entry or list with references
 * (negative entries are never referenced; their counter counts hits). */
static inline bool catcache_referenced(const catcache_entry *e)
{
    return e->kind != CATCACHE_NEGATIVE && catcache_refcount(e) != 0;
}

/* The length of key i if it is a name (bit i of name_mask set), else 0. */
static inline size_t catcache_key_len(uint32_t name_mask, uint32_t i,
                                      uintptr_t k)
{
    return (name_mask & (1u << i)) ? strlen((const char *)k) : 0;
}

/* Hash of key i (a name of len bytes when bit i of name_mask is set). */
static inline uint64_t catcache_key_hash(uint32_t name_mask, uint32_t i,
                                         uintptr_t k, size_t len)
{
    if (name_mask & (1u << i))
        return hash_name((const char *)k, len);
    return hash_int(k);
}

/* Unaligned loads of 8, 4 and 2 bytes. */
static inline uint64_t catcache_load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint32_t catcache_load4(const char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint16_t catcache_load2(const char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/*
 * Equality of an entry's name copy a (its length, capped at
 * CATCACHE_NAME_LEN_CAP, in the byte before it: catcache_entry_make())
 * and a search's name b of len bytes.  Lengths first; then words, the
 * last one overlapping the one before it, so that no byte outside either
 * name is read.
 */
static inline bool catcache_name_equal(const char *a, const char *b, size_t len)
{
    size_t i;

    if (__builtin_expect(len >= CATCACHE_NAME_LEN_CAP, 0))
        return (uint8_t)a[-1] == CATCACHE_NAME_LEN_CAP && strcmp(a, b) == 0;
    if ((uint8_t)a[-1] != len)
        return false;
    if (len >= 8) {
        for (i = 0; i + 8 < len; i += 8)
            if (catcache_load8(a + i) != catcache_load8(b + i))
                return false;
        return catcache_load8(a + len - 8) == catcache_load8(b + len - 8);
    }
    if (len >= 4)
        return catcache_load4(a) == catcache_load4(b) &&
               catcache_load4(a + len - 4) == catcache_load4(b + len - 4);
    if (len >= 2)
        return catcache_load2(a) == catcache_load2(b) &&
               a[len - 1] == b[len - 1];
    return len == 0 || a[0] == b[0];
}

/* Equality of key i of an entry (a) and of a search (b; a name of len
 * bytes when bit i of name_mask is set). */
static inline bool catcache_key_equal(uint32_t name_mask, uint32_t i,
                                      uintptr_t a, uintptr_t b, size_t len)
{
    if (name_mask & (1u << i))
        return catcache_name_equal((const char *)a, (const char *)b, len);
    return a == b;
}

/* When a hit stores the clock (wirings 1 to 3 only). */
#define CATCACHE_STAMP_NEVER      0
#define CATCACHE_STAMP_ALWAYS     1
#define CATCACHE_STAMP_IF_ENABLED 2

/*
 * A hit on e, found at *link in the bucket whose first link is head:
 * moves e to the front of its bucket and counts a use (the refcount
 * without the bloat protection compiled in; ignored on negative entries).
 */
static inline __attribute__((always_inline)) void
catcache_touch(catcache_entry **head, catcache_entry **link, catcache_entry *e)
{
    if (link != head) {
        catcache_entry *n = e->next;
        *link = n;
        if (n != NULL)
            n->pprev = link;
        e->next = *head; /* read after the store: see catcache_search() */
        e->next->pprev = &e->next;
        e->pprev = head;
        *head = e;
    }
#if CATCACHE_USES
    e->uses++;
#else
    e->refcount++;
#endif
}

/*
 * The search: hashes nkeys keys (name_mask and nkeys are constants at every
 * call, so this unrolls), walks one bucket comparing hash then keys, moves
 * a hit to the front of its bucket and bumps its counter.  KEEL_OK: *out
 * is the entry, referenced (give it back with catcache_release());
 * KEEL_ENOENT: a negative entry or the miss path found no row (*out NULL);
 * other statuses are errors of the miss path.  catcache_search_hashed() is
 * the same search with the first key's hash and length (h1, l1) given, as
 * catcache_key_hash() and catcache_key_len() compute them, for a caller
 * that searches one name under several second keys.
 */
static inline __attribute__((always_inline)) int
catcache_search_hashed(catcache *cc, uint32_t name_mask, uint32_t nkeys,
                       int stamp, uint64_t h1, size_t l1, uintptr_t k1,
                       uintptr_t k2, uintptr_t k3, uintptr_t k4,
                       catcache_entry **out)
{
    size_t l2 = nkeys > 1 ? catcache_key_len(name_mask, 1, k2) : 0;
    size_t l3 = nkeys > 2 ? catcache_key_len(name_mask, 2, k3) : 0;
    size_t l4 = nkeys > 3 ? catcache_key_len(name_mask, 3, k4) : 0;
    uint64_t h64 = h1;
    catcache_entry **head, **link, *e;
    uint32_t h;

    assert(nkeys == cc->nkeys);
    if (nkeys > 1)
        h64 = hash_combine(h64, catcache_key_hash(name_mask, 1, k2, l2));
    if (nkeys > 2)
        h64 = hash_combine(h64, catcache_key_hash(name_mask, 2, k3, l3));
    if (nkeys > 3)
        h64 = hash_combine(h64, catcache_key_hash(name_mask, 3, k4, l4));
    h = hash_fold32(h64);
    head = &cc->buckets[h & cc->mask];
    for (link = head; (e = *link) != NULL; link = &e->next) {
        if (e->hash != h ||
            !catcache_key_equal(name_mask, 0, e->keys[0], k1, l1))
            continue;
        if (nkeys > 1 && !catcache_key_equal(name_mask, 1, e->keys[1], k2, l2))
            continue;
        if (nkeys > 2 && !catcache_key_equal(name_mask, 2, e->keys[2], k3, l3))
            continue;
        if (nkeys > 3 && !catcache_key_equal(name_mask, 3, e->keys[3], k4, l4))
            continue;
        catcache_touch(head, link, e);
#if CATCACHE_STAMP
#if CATCACHE_WIRING == 1
        if (stamp == CATCACHE_STAMP_IF_ENABLED && cc->hot_sess->prune_enabled)
            e->stamp = cc->hot_sess->now + 1;
#endif
        if (stamp == CATCACHE_STAMP_ALWAYS)
            e->stamp = cc->sess->now + 1;
#else
        (void)stamp;
#endif
        if (catcache_unlikely(e->kind == CATCACHE_NEGATIVE)) {
            cc->negative_hits++;
            *out = NULL;
            return KEEL_ENOENT;
        }
        cc->hits++;
        *out = e;
        return KEEL_OK;
    }
    return catcache_miss(cc, h, k1, k2, k3, k4, out);
}

static inline __attribute__((always_inline)) int
catcache_search(catcache *cc, uint32_t name_mask, uint32_t nkeys, int stamp,
                uintptr_t k1, uintptr_t k2, uintptr_t k3, uintptr_t k4,
                catcache_entry **out)
{
    size_t l1 = catcache_key_len(name_mask, 0, k1);

    return catcache_search_hashed(cc, name_mask, nkeys, stamp,
                                  catcache_key_hash(name_mask, 0, k1, l1), l1,
                                  k1, k2, k3, k4, out);
}

/* The hash of keys[0..nkeys) (name_mask and nkeys constants where
 * inlined), as catalog_key_hash() computes it; len[i] receives each
 * name's length. */
static inline __attribute__((always_inline)) uint32_t
catcache_keyset_hash(uint32_t name_mask, uint32_t nkeys, const uintptr_t *keys,
                     size_t *len)
{
    uint64_t h = 0;

    assert(nkeys >= 1 && nkeys <= CATCACHE_MAX_KEYS);
    for (uint32_t i = 0; i < nkeys; i++) {
        uint64_t kh;
        len[i] = catcache_key_len(name_mask, i, keys[i]);
        kh = catcache_key_hash(name_mask, i, keys[i], len[i]);
        h = i == 0 ? kh : hash_combine(h, kh);
    }
    return hash_fold32(h);
}

/*
 * The list search's hit path, as catcache_search()'s (name_mask and nkeys
 * constants where inlined): hashes the keys, walks one bucket of the
 * lists comparing hash, key count and keys, moves a hit to the front and
 * bumps its counter; a miss goes to catcache_list_miss().
 */
static inline __attribute__((always_inline)) int
catcache_list_find(catcache *cc, uint32_t name_mask, uint32_t nkeys,
                   const uintptr_t *keys, catcache_list **out)
{
    size_t len[CATCACHE_MAX_KEYS];
    uint32_t h = catcache_keyset_hash(name_mask, nkeys, keys, len);
    catcache_entry **head = &cc->lbuckets[h & cc->lmask], **link, *e;

    for (link = head; (e = *link) != NULL; link = &e->next) {
        uint32_t i;
        if (e->hash != h || e->nkeys != nkeys)
            continue;
        for (i = 0; i < nkeys; i++)
            if (!catcache_key_equal(name_mask, i, e->keys[i], keys[i], len[i]))
                break;
        if (i < nkeys)
            continue;
        catcache_touch(head, link, e);
#if CATCACHE_STAMP
        if (cc->sess->prune_enabled)
            e->stamp = cc->sess->now + 1;
#endif
        cc->list_hits++;
        *out = (catcache_list *)e;
        return KEEL_OK;
    }
    return catcache_list_miss(cc, h, nkeys, keys, out);
}

/* The search as each wiring calls it (name_mask constant at the call). */
static inline __attribute__((always_inline)) int
catcache_search_wired(catcache *cc, uint32_t name_mask, uint32_t nkeys,
                      uintptr_t k1, uintptr_t k2, uintptr_t k3, uintptr_t k4,
                      catcache_entry **out)
{
#if CATCACHE_WIRING == 2
    (void)name_mask;
    (void)nkeys;
    return cc->search(cc, k1, k2, k3, k4, out);
#elif CATCACHE_WIRING == 1
    return catcache_search(cc, name_mask, nkeys, CATCACHE_STAMP_IF_ENABLED, k1,
                           k2, k3, k4, out);
#else
    return catcache_search(cc, name_mask, nkeys, CATCACHE_STAMP_NEVER, k1, k2,
                           k3, k4, out);
#endif
}

/* catcache_search_wired() with the first key's hash and length given
 * (catcache_search_hashed()); wiring 2 hashes it again. */
static inline __attribute__((always_inline)) int
catcache_search_wired_hashed(catcache *cc, uint32_t name_mask, uint32_t nkeys,
                             uint64_t h1, size_t l1, uintptr_t k1, uintptr_t k2,
                             uintptr_t k3, uintptr_t k4, catcache_entry **out)
{
#if CATCACHE_WIRING == 2
    (void)name_mask;
    (void)nkeys;
    (void)h1;
    (void)l1;
    return cc->search(cc, k1, k2, k3, k4, out);
#elif CATCACHE_WIRING == 1
    return catcache_search_hashed(cc, name_mask, nkeys,
                                  CATCACHE_STAMP_IF_ENABLED, h1, l1, k1, k2, k3,
                                  k4, out);
#else
    return catcache_search_hashed(cc, name_mask, nkeys, CATCACHE_STAMP_NEVER,
                                  h1, l1, k1, k2, k3, k4, out);
#endif
}

/* Gives back a reference to a positive entry or list. */
static inline __attribute__((always_inline)) void
catcache_unref(catcache_entry *e)
{
#if CATCACHE_USES
    e->releases++;
#else
    e->refcount--;
#endif
    if (catcache_unlikely(e->dead))
        catcache_release_dead(e);
}

/* Gives back a reference to a positive entry. */
static inline __attribute__((always_inline)) void
catcache_release(catcache_entry *e)
{
    assert(e->kind == CATCACHE_POSITIVE);
    catcache_unref(e);
}

/* Gives back a list's reference. */
static inline __attribute__((always_inline)) void
catcache_list_release(catcache_list *l)
{
    assert(l->e.kind == CATCACHE_LIST && catcache_refcount(&l->e) > 0);
    catcache_unref(&l->e);
}

/* The row of a positive entry. */
static inline const void *catcache_row(const catcache_entry *e)
{
    return e + 1;
}

#endif /* KEEL_CACHE_CATCACHE_H */
