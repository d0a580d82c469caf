/*
 * catcache.c: the out-of-line parts of the catalog cache (catcache.h): the
 * miss path, lists, invalidation, growth with pruning by age, eviction to
 * the memory target (SIEVE), dead entries and the accounting.  The
 * protocol is in README.md beside this file.
 */
#include "cache/catcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/mem.h"

/* Initial list buckets of a cache. */
#define CATCACHE_LIST_BUCKETS 16

/* ------------------------------------------------------------------ */
/* Rings                                                              */
/* ------------------------------------------------------------------ */

static void catcache_ring_init(catcache_link *sent)
{
    sent->prev = sent;
    sent->next = sent;
}

/* Inserts l before at (at the newest end when at is the sentinel). */
static void catcache_ring_insert_before(catcache_link *at, catcache_link *l)
{
    l->prev = at->prev;
    l->next = at;
    at->prev->next = l;
    at->prev = l;
}

static void catcache_ring_remove(catcache_link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = NULL;
}

static catcache_entry *catcache_entry_of(catcache_link *l)
{
    return (catcache_entry *)((char *)l - offsetof(catcache_entry, q));
}

/* Puts a new live entry at the newest end of its kind's queue. */
static void catcache_queue_add(catcache_session *s, catcache_entry *e)
{
    catcache_ring_insert_before(&s->queue[e->kind], &e->q);
    s->qlen[e->kind]++;
}

/* Takes a live entry off its queue, moving the hand past it if it was
 * about to examine it. */
static void catcache_queue_remove(catcache_session *s, catcache_entry *e)
{
    catcache_link *sent = &s->queue[e->kind];

    assert(s->qlen[e->kind] > 0);
    if (s->hand[e->kind] == &e->q)
        s->hand[e->kind] = e->q.next == sent ? NULL : e->q.next;
    catcache_ring_remove(&e->q);
    s->qlen[e->kind]--;
}

/* Puts e at the front of the chain whose slot is head. */
static void catcache_chain_push(catcache_entry **head, catcache_entry *e)
{
    e->next = *head;
    e->pprev = head;
    if (e->next != NULL)
        e->next->pprev = &e->next;
    *head = e;
}

/*
 * Takes e off its chain.  It reads nothing of the other members: it
 * writes the link that points at e and its successor's back link, so an
 * eviction's victim, usually cold and at its chain's end, costs no walk.
 */
static void catcache_chain_del(catcache_entry *e)
{
    *e->pprev = e->next;
    if (e->next != NULL)
        e->next->pprev = e->pprev;
    e->next = NULL;
    e->pprev = NULL;
}

/* ------------------------------------------------------------------ */
/* The session's memory (see CATCACHE_SLAB)                           */
/* ------------------------------------------------------------------ */

/* The address sanitizer is told which bytes of the blocks are handed out,
 * so that it still catches overruns and uses after free in them. */
#if defined(__SANITIZE_ADDRESS__)
#define CATCACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CATCACHE_ASAN 1
#endif
#endif
#ifdef CATCACHE_ASAN
#include <sanitizer/asan_interface.h>
#define catcache_poison(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define catcache_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define catcache_poison(p, n)   ((void)(p), (void)(n))
#define catcache_unpoison(p, n) ((void)(p), (void)(n))
#endif

static size_t catcache_chunk_class(size_t size)
{
    return (size + CATCACHE_CHUNK_ALIGN - 1) / CATCACHE_CHUNK_ALIGN;
}

_Static_assert(sizeof(catcache_slab) <= CATCACHE_SLAB_HEAD,
               "a slab's header fits its line");
_Static_assert(CATCACHE_CHUNK_MAX <= CATCACHE_SLAB - CATCACHE_SLAB_HEAD,
               "a slab holds a piece of every class");
_Static_assert((CATCACHE_SLAB & (CATCACHE_SLAB - 1)) == 0,
               "slabs are found by masking an address");

/* True if sl has no freed piece and no room for a fresh one. */
static bool catcache_slab_full(const catcache_slab *sl)
{
    return sl->free == NULL &&
           sl->fresh + sl->cls * CATCACHE_CHUNK_ALIGN > CATCACHE_SLAB;
}

static void catcache_slab_unlink(catcache_session *s, catcache_slab *sl)
{
    if (sl->prev != NULL)
        sl->prev->next = sl->next;
    else
        s->room[sl->cls] = sl->next;
    if (sl->next != NULL)
        sl->next->prev = sl->prev;
}

static void catcache_slab_push(catcache_session *s, catcache_slab *sl)
{
    sl->prev = NULL;
    sl->next = s->room[sl->cls];
    if (sl->next != NULL)
        sl->next->prev = sl;
    s->room[sl->cls] = sl;
}

/*
 * An empty slab for class c, on the class's list: an emptied one (of
 * any class), or the newest region's next, or the first of a new region.
 * NULL if memory is exhausted.
 */
static catcache_slab *catcache_slab_get(catcache_session *s, size_t c)
{
    catcache_slab *sl = s->empty;

    if (sl != NULL) {
        s->empty = sl->next;
    } else {
        if (s->next_slab == s->slabs_end) {
            uint32_t n = s->regions == NULL ? CATCACHE_FIRST_SLABS
                                            : CATCACHE_REGION_SLABS;
            char *first;
            void *region = mem_alloc_start((size_t)n * CATCACHE_SLAB,
                                           CATCACHE_SLAB, (void **)&first);
            if (region == NULL)
                return NULL;
            catcache_poison(first, (size_t)n * CATCACHE_SLAB);
            catcache_unpoison(first, CATCACHE_SLAB_HEAD);
            sl = (catcache_slab *)first;
            sl->region = region;
            sl->region_slabs = n;
            sl->region_next = s->regions;
            s->regions = sl;
            s->block_bytes += CATCACHE_REGION_BYTES(n);
            s->next_slab = first;
            s->slabs_end = first + (size_t)n * CATCACHE_SLAB;
        }
        sl = (catcache_slab *)s->next_slab;
        catcache_unpoison(sl, CATCACHE_SLAB_HEAD);
        s->next_slab += CATCACHE_SLAB;
    }
    sl->free = NULL;
    sl->fresh = CATCACHE_SLAB_HEAD;
    sl->cls = (uint16_t)c;
    sl->used = 0;
    catcache_slab_push(s, sl);
    return sl;
}

/* size bytes (not zeroed) of s's memory, or NULL if memory is exhausted. */
static void *catcache_mem_alloc(catcache_session *s, size_t size)
{
    size_t c = catcache_chunk_class(size ? size : 1);
    catcache_slab *sl;
    char *p;

    if (size > CATCACHE_CHUNK_MAX)
        return malloc(size);
    sl = s->room[c];
    if (sl == NULL && (sl = catcache_slab_get(s, c)) == NULL)
        return NULL;
    if ((p = sl->free) != NULL) {
        catcache_unpoison(p, sizeof(void *));
        sl->free = *(void **)p;
    } else {
        p = (char *)sl + sl->fresh;
        sl->fresh += (uint32_t)(c * CATCACHE_CHUNK_ALIGN);
    }
    sl->used++;
    if (catcache_slab_full(sl))
        catcache_slab_unlink(s, sl);
    catcache_unpoison(p, size);
    return p;
}

/* Gives back p, of size bytes, from catcache_mem_alloc(s, size): to its
 * slab, and the slab, once empty, to the session. */
static void catcache_mem_free(catcache_session *s, void *p, size_t size)
{
    size_t c = catcache_chunk_class(size ? size : 1);
    catcache_slab *sl;
    bool was_full;

    if (size > CATCACHE_CHUNK_MAX) {
        free(p);
        return;
    }
    sl = (catcache_slab *)((uintptr_t)p & ~(uintptr_t)(CATCACHE_SLAB - 1));
    assert(sl->cls == c && sl->used > 0);
    was_full = catcache_slab_full(sl);
    catcache_unpoison(p, sizeof(void *));
    *(void **)p = sl->free;
    sl->free = p;
    catcache_poison(p, c * CATCACHE_CHUNK_ALIGN);
    if (--sl->used == 0) {
        if (!was_full)
            catcache_slab_unlink(s, sl);
        catcache_poison((char *)sl + CATCACHE_SLAB_HEAD,
                        CATCACHE_SLAB - CATCACHE_SLAB_HEAD);
        sl->next = s->empty;
        s->empty = sl;
    } else if (was_full) {
        catcache_slab_push(s, sl);
    }
}

/* catcache_mem_alloc(), zeroed: a large one by calloc(), which takes
 * fresh pages from the system already zeroed. */
static void *catcache_mem_zalloc(catcache_session *s, size_t size)
{
    void *p;

    if (size > CATCACHE_CHUNK_MAX)
        return calloc(1, size);
    p = catcache_mem_alloc(s, size);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

/* ------------------------------------------------------------------ */
/* Accounting and freeing                                             */
/* ------------------------------------------------------------------ */

static void catcache_account_add(catcache *cc, catcache_kind kind, size_t bytes)
{
    catcache_session *s = cc->sess;

    s->bytes += bytes;
    s->kind_bytes[kind] += bytes;
    s->kind_count[kind]++;
    cc->bytes += bytes;
}

static void catcache_account_buckets(catcache *cc, size_t added, size_t removed)
{
    catcache_session *s = cc->sess;

    s->bytes += added;
    s->bytes -= removed;
    s->bucket_bytes += added;
    s->bucket_bytes -= removed;
    cc->bytes += added;
    cc->bytes -= removed;
}

/* Frees an entry or list that is on no chain, queue or ring. */
static void catcache_entry_free(catcache_entry *e)
{
    catcache *cc = e->cache;
    catcache_session *s = cc->sess;

    assert(s->bytes >= e->bytes && s->kind_bytes[e->kind] >= e->bytes);
    assert(s->kind_count[e->kind] > 0 && cc->bytes >= e->bytes);
    s->bytes -= e->bytes;
    s->kind_bytes[e->kind] -= e->bytes;
    s->kind_count[e->kind]--;
    cc->bytes -= e->bytes;
    catcache_mem_free(s, e, e->bytes);
}

/*
 * Disposes of a live entry or list already unlinked from its chain: off
 * its queue, then freed, or, while referenced, marked dead and kept on the
 * dead ring until its last release.
 */
static void catcache_discard(catcache_entry *e)
{
    catcache *cc = e->cache;
    catcache_session *s = cc->sess;

    assert(!e->dead);
    catcache_queue_remove(s, e);
    if (e->kind == CATCACHE_LIST) {
        assert(cc->nlists > 0);
        cc->nlists--;
    } else {
        assert(cc->nentries > 0);
        cc->nentries--;
    }
    if (catcache_referenced(e)) {
        e->dead = 1;
        e->next = NULL;
        catcache_ring_insert_before(&s->dead, &e->q);
        return;
    }
    catcache_entry_free(e);
}

#if KEEL_CATCACHE_PRUNE
/* Unlinks a live entry or list from its chain and disposes of it. */
static void catcache_remove(catcache_entry *e)
{
    catcache_chain_del(e);
    catcache_discard(e);
}
#endif

void catcache_release_dead(catcache_entry *e)
{
    assert(e->dead);
    if (catcache_refcount(e) != 0)
        return;
    catcache_ring_remove(&e->q);
    catcache_entry_free(e);
}

/* ------------------------------------------------------------------ */
/* Use marks (protection only)                                        */
/* ------------------------------------------------------------------ */

#if KEEL_CATCACHE_PRUNE
/*
 * What a hand does as it passes e: if e was used since the last pass, it
 * clears the mark, records the session clock (or, with a stamp, the clock
 * of the last hit) as the time of last known use and returns true.
 *
 * Age bound.  Let t be the session clock when e was last used.  Claim:
 * used_at >= t whenever e is unmarked.  At creation (a use) used_at = now
 * = t.  A later use sets the mark (uses != uses_seen, or stamp != 0), and
 * the mark is cleared only here, which sets used_at to the session clock
 * of now, not earlier than t because the clock never goes back (it is set
 * once per transaction from a monotonic source; with a stamp, used_at is
 * t itself).  So an unmarked entry was last used at t <= used_at, and
 * pruning, which first clears marks as above and removes only unmarked
 * entries with now - used_at > min_age, removes only entries with
 * now - t >= now - used_at > min_age: never one used within min_age.  The
 * estimate is late by at most the interval between two passes.
 */
static bool catcache_sweep(catcache_session *s, catcache_entry *e)
{
#if CATCACHE_USES
    if (e->uses != e->uses_seen) {
        e->uses_seen = e->uses;
        e->used_at = s->now;
        return true;
    }
#else
    if (e->stamp != 0) {
        e->used_at = e->stamp - 1;
        e->stamp = 0;
        return true;
    }
#endif
    return false;
}

/* True if e was last known used more than min_age seconds ago. */
static bool catcache_too_old(const catcache_session *s, const catcache_entry *e)
{
    return (int64_t)s->now - (int64_t)e->used_at > (int64_t)s->prune_min_age;
}

/*
 * One SIEVE step on queue k: from the hand towards the newest, clears the
 * marks of used entries and evicts the first unmarked, unreferenced one,
 * leaving the hand after it.  Returns false after a whole lap without one
 * (every mark it passed is then clear).
 */
static bool catcache_sieve_step(catcache_session *s, int k)
{
    catcache_link *sent = &s->queue[k];
    uint64_t n = s->qlen[k];

    for (uint64_t i = 0; i < n; i++) {
        catcache_link *l = s->hand[k] != NULL ? s->hand[k] : sent->next;
        catcache_entry *e = catcache_entry_of(l);

        assert(l != sent);
        s->hand[k] = l->next == sent ? NULL : l->next;
        if (catcache_sweep(s, e) || catcache_referenced(e))
            continue;
        catcache_remove(e);
        s->evictions++;
        return true;
    }
    return false;
}
#endif

/*
 * Evicts unreferenced entries and lists while the session holds more than
 * its memory target: unmarked negative entries first, then unmarked
 * positive entries, then lists; a queue whose lap found nothing has had its
 * marks cleared and yields its entries next time.  Stops when only
 * referenced ones are left.
 */
static void catcache_enforce_target(catcache_session *s)
{
#if KEEL_CATCACHE_PRUNE
    int k = 0, idle = 0;

    if (s->memory_target == 0 || s->bytes <= s->memory_target || s->evicting)
        return;
    s->evicting = true;
    while (s->bytes > s->memory_target) {
        if (catcache_sieve_step(s, k)) {
            k = 0;
            idle = 0;
            continue;
        }
        if (++idle >= 2 * CATCACHE_KINDS)
            break;
        k = (k + 1) % CATCACHE_KINDS;
    }
    s->evicting = false;
#else
    (void)s;
#endif
}

/* ------------------------------------------------------------------ */
/* Sessions and caches                                                */
/* ------------------------------------------------------------------ */

void catcache_session_init(catcache_session *s, int32_t prune_min_age,
                           uint64_t memory_target)
{
    memset(s, 0, sizeof(*s));
    for (int k = 0; k < CATCACHE_KINDS; k++)
        catcache_ring_init(&s->queue[k]);
    catcache_ring_init(&s->dead);
    s->prune_min_age = prune_min_age;
    s->memory_target = memory_target;
    s->prune_enabled = prune_min_age >= 0 || memory_target > 0;
}

void catcache_session_set_options(catcache_session *s, int32_t prune_min_age,
                                  uint64_t memory_target)
{
    s->prune_min_age = prune_min_age;
    s->memory_target = memory_target;
    s->prune_enabled = prune_min_age >= 0 || memory_target > 0;
    catcache_enforce_target(s);
}

void catcache_session_destroy(catcache_session *s)
{
    while (s->dead.next != &s->dead) {
        catcache_entry *e = catcache_entry_of(s->dead.next);
        catcache_ring_remove(&e->q);
        catcache_entry_free(e);
    }
    while (s->regions != NULL) {
        catcache_slab *first = s->regions;
        void *region = first->region;
        s->regions = first->region_next;
        catcache_unpoison(first, (size_t)first->region_slabs * CATCACHE_SLAB);
        free(region);
    }
    s->block_bytes = 0;
    s->empty = NULL;
    s->next_slab = s->slabs_end = NULL;
    memset(s->room, 0, sizeof(s->room));
}

int catcache_init(catcache *cc, catcache_session *s, const catcache_def *d,
                  kerr *err)
{
    assert(d->nkeys >= 1 && d->nkeys <= CATCACHE_MAX_KEYS);
    assert(d->nbuckets > 0 && (d->nbuckets & (d->nbuckets - 1)) == 0);
    memset(cc, 0, sizeof(*cc));
    cc->sess = s;
    cc->id = d->id;
    cc->nkeys = d->nkeys;
    cc->name_mask = d->name_mask;
    memcpy(cc->key_max, d->key_max, sizeof(cc->key_max));
    cc->rowsize = d->rowsize;
    cc->list_only = d->list_only;
    cc->fill = d->fill;
    cc->fill_arg = d->fill_arg;
#if CATCACHE_WIRING == 1
    cc->hot_sess = s;
#endif
#if CATCACHE_WIRING == 2
    catcache_choose_search(cc);
#endif
    cc->buckets = catcache_mem_zalloc(s, d->nbuckets * sizeof(*cc->buckets));
    cc->lbuckets =
        catcache_mem_zalloc(s, CATCACHE_LIST_BUCKETS * sizeof(*cc->lbuckets));
    if (cc->buckets == NULL || cc->lbuckets == NULL) {
        if (cc->buckets != NULL)
            catcache_mem_free(s, cc->buckets,
                              d->nbuckets * sizeof(*cc->buckets));
        if (cc->lbuckets != NULL)
            catcache_mem_free(s, cc->lbuckets,
                              CATCACHE_LIST_BUCKETS * sizeof(*cc->lbuckets));
        cc->buckets = cc->lbuckets = NULL;
        return kerr_set(err, KEEL_ENOMEM, "out of memory for catalog cache");
    }
    cc->mask = d->nbuckets - 1;
    cc->lmask = CATCACHE_LIST_BUCKETS - 1;
    catcache_account_buckets(
        cc, (d->nbuckets + CATCACHE_LIST_BUCKETS) * sizeof(*cc->buckets), 0);
    return KEEL_OK;
}

void catcache_destroy(catcache *cc)
{
    if (cc->buckets == NULL)
        return;
    catcache_reset(cc);
    /* Referenced ones went to the dead ring: the caller gave up on them. */
    catcache_account_buckets(
        cc, 0, ((size_t)cc->mask + 1 + cc->lmask + 1) * sizeof(*cc->buckets));
    catcache_mem_free(cc->sess, cc->buckets,
                      ((size_t)cc->mask + 1) * sizeof(*cc->buckets));
    catcache_mem_free(cc->sess, cc->lbuckets,
                      ((size_t)cc->lmask + 1) * sizeof(*cc->lbuckets));
    cc->buckets = cc->lbuckets = NULL;
}

/* ------------------------------------------------------------------ */
/* Keys and rows                                                      */
/* ------------------------------------------------------------------ */

uint32_t catcache_hash_keys(const catcache *cc, uint32_t nkeys,
                            const uintptr_t *keys)
{
    size_t len[CATCACHE_MAX_KEYS];

    return catcache_keyset_hash(cc->name_mask, nkeys, keys, len);
}

/*
 * True if every key can match a row: integers within their column's
 * range, names no longer than a catalog name.  Sets namelen[i] for names.
 */
static bool catcache_keys_valid(const catcache *cc, uint32_t nkeys,
                                const uintptr_t *keys, size_t *namelen)
{
    for (uint32_t i = 0; i < nkeys; i++) {
        namelen[i] = 0;
        if (cc->name_mask & (1u << i)) {
            namelen[i] = mem_strnlen((const char *)keys[i], CATCACHE_NAME_MAX + 1);
            if (namelen[i] > CATCACHE_NAME_MAX)
                return false;
        } else if ((uint64_t)keys[i] > cc->key_max[i]) {
            return false;
        }
    }
    return true;
}

void *catcache_rowbuf_push(catcache_rowbuf *rb)
{
    void *slot;

    if (rb->count == rb->cap) {
        uint32_t cap = rb->cap ? rb->cap * 2 : 8;
        char *rows;
        if (cap > rb->max)
            cap = rb->max;
        if (cap <= rb->count)
            return NULL;
        rows = realloc(rb->rows, (size_t)cap * rb->rowsize);
        if (rows == NULL)
            return NULL;
        rb->rows = rows;
        rb->cap = cap;
    }
    slot = rb->rows + (size_t)rb->count * rb->rowsize;
    memset(slot, 0, rb->rowsize);
    rb->count++;
    return slot;
}

/* Where name copies may start in an entry (malloc gives at least this
 * alignment).  Each is preceded by a byte of its length (capped at
 * CATCACHE_NAME_LEN_CAP), which catcache_name_equal() compares first. */
#define CATCACHE_NAME_ALIGN 16

/* The offset of a name copy placed after the first off bytes: aligned,
 * with room for its length byte. */
static size_t catcache_name_start(size_t off)
{
    return (off + 1 + CATCACHE_NAME_ALIGN - 1) &
           ~(size_t)(CATCACHE_NAME_ALIGN - 1);
}

/*
 * Allocates and fills an entry or list of kind for keys (hash h, names of
 * namelen bytes) holding nrows rows; it is linked nowhere yet and counted
 * in the accounting.  A positive entry or list starts with one reference.
 * NULL if memory ran out.
 */
static catcache_entry *catcache_entry_make(catcache *cc, catcache_kind kind,
                                           uint32_t h, uint32_t nkeys,
                                           const uintptr_t *keys,
                                           const size_t *namelen,
                                           const char *rows, uint32_t nrows)
{
    size_t size = sizeof(catcache_entry) + (size_t)nrows * cc->rowsize;
    catcache_entry *e;
    size_t off;

    /* Name copies start on a CATCACHE_NAME_ALIGN boundary, so that the
     * comparisons of a hit see the same alignment whatever the header's
     * size (it differs with KEEL_CATCACHE_PRUNE). */
    for (uint32_t i = 0; i < nkeys; i++)
        if (cc->name_mask & (1u << i))
            size = catcache_name_start(size) + namelen[i] + 1;
    if (size > UINT32_MAX)
        return NULL;
    e = catcache_mem_alloc(cc->sess, size);
    if (e == NULL)
        return NULL;
    memset(e, 0, sizeof(*e));
    e->hash = h;
    e->kind = (uint8_t)kind;
    e->nkeys = (uint8_t)nkeys;
    e->cache = cc;
    e->bytes = (uint32_t)size;
    e->nrows = nrows;
    if (nrows > 0)
        memcpy(e + 1, rows, (size_t)nrows * cc->rowsize);
    off = sizeof(catcache_entry) + (size_t)nrows * cc->rowsize;
    for (uint32_t i = 0; i < nkeys; i++) {
        if (cc->name_mask & (1u << i)) {
            char *tail = (char *)e + catcache_name_start(off);
            tail[-1] = (char)(uint8_t)(namelen[i] < CATCACHE_NAME_LEN_CAP
                                           ? namelen[i]
                                           : CATCACHE_NAME_LEN_CAP);
            memcpy(tail, (const char *)keys[i], namelen[i]);
            tail[namelen[i]] = '\0';
            e->keys[i] = (uintptr_t)tail;
            off = catcache_name_start(off) + namelen[i] + 1;
        } else {
            e->keys[i] = keys[i];
        }
    }
    if (kind != CATCACHE_NEGATIVE) {
#if CATCACHE_USES
        e->uses = 1;
#else
        e->refcount = 1;
#endif
    }
#if KEEL_CATCACHE_PRUNE
#if CATCACHE_USES
    e->uses_seen = e->uses;
#endif
    e->used_at = cc->sess->now;
#endif
    catcache_account_add(cc, kind, size);
    return e;
}

/* ------------------------------------------------------------------ */
/* Growth, with pruning by age                                        */
/* ------------------------------------------------------------------ */

#if KEEL_CATCACHE_PRUNE
/*
 * Removes the unreferenced entries (or lists) of the n chains that were
 * not used for more than the session's min age (see catcache_sweep()),
 * clearing the marks of the others.
 */
static void catcache_prune_chains(catcache *cc, catcache_entry **chains,
                                  uint32_t n)
{
    catcache_session *s = cc->sess;

    for (uint32_t b = 0; b < n; b++) {
        catcache_entry *e = chains[b], *next;
        for (; e != NULL; e = next) {
            next = e->next;
            if (catcache_sweep(s, e) || catcache_referenced(e) ||
                !catcache_too_old(s, e))
                continue;
            catcache_chain_del(e);
            catcache_discard(e);
            s->age_prunes++;
        }
    }
}
#endif

/*
 * Doubles the chains array *chains of *mask + 1 chains, rehashing its
 * members.  Nothing changes if memory runs out (chains just get longer).
 */
static void catcache_double(catcache *cc, catcache_entry ***chains,
                            uint32_t *mask)
{
    uint32_t n = *mask + 1;
    catcache_entry **old = *chains;
    catcache_entry **nw;

    if (n > UINT32_MAX / 2)
        return;
    nw = catcache_mem_zalloc(cc->sess, (size_t)n * 2 * sizeof(*nw));
    if (nw == NULL)
        return;
    for (uint32_t b = 0; b < n; b++) {
        catcache_entry *e = old[b];
        while (e != NULL) {
            catcache_entry *next = e->next;
            catcache_chain_push(&nw[e->hash & (2 * n - 1)], e);
            e = next;
        }
    }
    catcache_mem_free(cc->sess, old, (size_t)n * sizeof(*old));
    *chains = nw;
    *mask = 2 * n - 1;
    catcache_account_buckets(cc, (size_t)n * sizeof(*nw), 0);
}

/*
 * Called when the chains hold more than twice as many members as there
 * are chains: first removes members unused for the min age (if age pruning
 * is on), and doubles unless that brought the count to 1.5 per chain or
 * below (so that the next prune is at least n/2 additions away).
 */
static void catcache_grow(catcache *cc, catcache_entry ***chains,
                          uint32_t *mask, const uint32_t *count)
{
#if KEEL_CATCACHE_PRUNE
    if (cc->sess->prune_min_age >= 0) {
        uint32_t n = *mask + 1;
        catcache_prune_chains(cc, *chains, n);
        if (*count <= n + n / 2)
            return;
    }
#endif
    catcache_double(cc, chains, mask);
}

/* ------------------------------------------------------------------ */
/* Searches: miss path, lists                                         */
/* ------------------------------------------------------------------ */

int catcache_miss(catcache *cc, uint32_t h, uintptr_t k1, uintptr_t k2,
                  uintptr_t k3, uintptr_t k4, catcache_entry **out)
{
    catcache_session *s = cc->sess;
    uintptr_t keys[CATCACHE_MAX_KEYS] = {k1, k2, k3, k4};
    size_t namelen[CATCACHE_MAX_KEYS];
    catcache_rowbuf rb = {NULL, 0, 0, 1, cc->rowsize};
    catcache_entry *e;
    catcache_kind kind;
    int rc;

    *out = NULL;
    cc->misses++;
    if (cc->list_only)
        return kerr_set(s->err, KEEL_EINVAL,
                        "catalog cache %u takes list searches only", cc->id);
    if (!catcache_keys_valid(cc, cc->nkeys, keys, namelen))
        return KEEL_ENOENT;
    rc = cc->fill(cc->fill_arg, cc, keys, cc->nkeys, &rb);
    if (rc != KEEL_OK) {
        free(rb.rows);
        return rc;
    }
    kind = rb.count > 0 ? CATCACHE_POSITIVE : CATCACHE_NEGATIVE;
    e = catcache_entry_make(cc, kind, h, cc->nkeys, keys, namelen, rb.rows,
                            rb.count > 0 ? 1 : 0);
    free(rb.rows);
    if (e == NULL) {
        if (kind == CATCACHE_NEGATIVE)
            return KEEL_ENOENT; /* true, just not remembered */
        return kerr_set(s->err, KEEL_ENOMEM,
                        "out of memory for a catalog cache entry");
    }
    catcache_chain_push(&cc->buckets[h & cc->mask], e);
    catcache_queue_add(s, e);
    cc->nentries++;
    if (cc->nentries > 2 * (cc->mask + 1))
        catcache_grow(cc, &cc->buckets, &cc->mask, &cc->nentries);
    catcache_enforce_target(s); /* e is evictable only if negative */
    if (kind == CATCACHE_NEGATIVE)
        return KEEL_ENOENT;
    *out = e;
    return KEEL_OK;
}

int catcache_list_miss(catcache *cc, uint32_t h, uint32_t nkeys,
                       const uintptr_t *keys, catcache_list **out)
{
    catcache_session *s = cc->sess;
    size_t namelen[CATCACHE_MAX_KEYS];
    catcache_rowbuf rb = {NULL, 0, 0, UINT32_MAX, cc->rowsize};
    catcache_entry *e;
    int rc;

    *out = NULL;
    cc->list_misses++;
    rc = KEEL_OK;
    if (catcache_keys_valid(cc, nkeys, keys, namelen))
        rc = cc->fill(cc->fill_arg, cc, keys, nkeys, &rb);
    else
        for (uint32_t i = 0; i < nkeys; i++)
            namelen[i] =
                (cc->name_mask & (1u << i)) ? strlen((const char *)keys[i]) : 0;
    if (rc != KEEL_OK) {
        free(rb.rows);
        return rc;
    }
    e = catcache_entry_make(cc, CATCACHE_LIST, h, nkeys, keys, namelen, rb.rows,
                            rb.count);
    free(rb.rows);
    if (e == NULL)
        return kerr_set(s->err, KEEL_ENOMEM,
                        "out of memory for a catalog cache list");
    catcache_chain_push(&cc->lbuckets[h & cc->lmask], e);
    catcache_queue_add(s, e);
    cc->nlists++;
    if (cc->nlists > 2 * (cc->lmask + 1))
        catcache_grow(cc, &cc->lbuckets, &cc->lmask, &cc->nlists);
    catcache_enforce_target(s); /* the new list is referenced: it stays */
    *out = (catcache_list *)e;
    return KEEL_OK;
}

#if CATCACHE_WIRING == 2
/* The search with the cache's own key count and types, for wiring 2. */
static inline int catcache_search_any(catcache *cc, int stamp, uintptr_t k1,
                                      uintptr_t k2, uintptr_t k3, uintptr_t k4,
                                      catcache_entry **out)
{
    switch (cc->nkeys) {
    case 1:
        return catcache_search(cc, cc->name_mask, 1, stamp, k1, k2, k3, k4,
                               out);
    case 2:
        return catcache_search(cc, cc->name_mask, 2, stamp, k1, k2, k3, k4,
                               out);
    case 3:
        return catcache_search(cc, cc->name_mask, 3, stamp, k1, k2, k3, k4,
                               out);
    default:
        return catcache_search(cc, cc->name_mask, 4, stamp, k1, k2, k3, k4,
                               out);
    }
}

int catcache_search_plain(catcache *cc, uintptr_t k1, uintptr_t k2,
                          uintptr_t k3, uintptr_t k4, catcache_entry **out)
{
    return catcache_search_any(cc, CATCACHE_STAMP_NEVER, k1, k2, k3, k4, out);
}

int catcache_search_pruning(catcache *cc, uintptr_t k1, uintptr_t k2,
                            uintptr_t k3, uintptr_t k4, catcache_entry **out)
{
    return catcache_search_any(cc, CATCACHE_STAMP_ALWAYS, k1, k2, k3, k4, out);
}

void catcache_choose_search(catcache *cc)
{
    cc->search = cc->sess->prune_enabled ? catcache_search_pruning
                                         : catcache_search_plain;
}
#endif

/* ------------------------------------------------------------------ */
/* Invalidation                                                       */
/* ------------------------------------------------------------------ */

/* Removes every list of cc. */
static void catcache_drop_lists(catcache *cc, bool count)
{
    if (cc->nlists == 0)
        return;
    for (uint32_t b = 0; b <= cc->lmask; b++) {
        catcache_entry *e;
        while ((e = cc->lbuckets[b]) != NULL) {
            catcache_chain_del(e);
            catcache_discard(e);
            if (count)
                cc->sess->invalidations++;
        }
    }
    assert(cc->nlists == 0);
}

void catcache_invalidate(catcache *cc, uint32_t h)
{
    catcache_entry *e = cc->buckets[h & cc->mask], *next;

    for (; e != NULL; e = next) {
        next = e->next;
        if (e->hash != h)
            continue;
        catcache_chain_del(e);
        catcache_discard(e);
        cc->sess->invalidations++;
    }
    catcache_drop_lists(cc, true);
}

void catcache_reset(catcache *cc)
{
    for (uint32_t b = 0; b <= cc->mask; b++) {
        catcache_entry *e;
        while ((e = cc->buckets[b]) != NULL) {
            catcache_chain_del(e);
            catcache_discard(e);
        }
    }
    assert(cc->nentries == 0);
    catcache_drop_lists(cc, false);
}

/* One bucket array of catcache_chains_valid(). */
static bool catcache_chains_check(catcache_entry *const *chains, uint32_t mask,
                                  uint32_t count, const char *what, char *why,
                                  size_t len)
{
    uint32_t seen = 0;

    for (uint32_t b = 0; b <= mask; b++) {
        catcache_entry *const *link = &chains[b];
        const catcache_entry *e;
        for (; (e = *link) != NULL; link = &e->next) {
            if (e->pprev != link) {
                snprintf(why, len, "%s chain %u: a member's back link is wrong",
                         what, b);
                return false;
            }
            if ((e->hash & mask) != b || e->dead) {
                snprintf(why, len, "%s chain %u: a member %s", what, b,
                         e->dead ? "is dead" : "has another chain's hash");
                return false;
            }
            if (++seen > count) {
                snprintf(why, len, "%s chains: more than %u members", what,
                         count);
                return false;
            }
        }
    }
    if (seen != count) {
        snprintf(why, len, "%s chains: %u members, %u counted", what, seen,
                 count);
        return false;
    }
    return true;
}

bool catcache_chains_valid(const catcache *cc, char *why, size_t len)
{
    return catcache_chains_check(cc->buckets, cc->mask, cc->nentries, "entry",
                                 why, len) &&
           catcache_chains_check(cc->lbuckets, cc->lmask, cc->nlists, "list",
                                 why, len);
}

/* One slab of catcache_memory_valid(): its freed pieces and its room. */
static bool catcache_slab_check(const catcache_slab *sl, char *why, size_t len)
{
    size_t n = (size_t)sl->cls * CATCACHE_CHUNK_ALIGN;
    size_t carved, nfree = 0;

    if (sl->cls == 0 || sl->cls > CATCACHE_CLASSES ||
        sl->fresh < CATCACHE_SLAB_HEAD || sl->fresh > CATCACHE_SLAB ||
        (sl->fresh - CATCACHE_SLAB_HEAD) % n != 0) {
        snprintf(why, len, "slab %p: class %u, fresh at %u", (const void *)sl,
                 sl->cls, sl->fresh);
        return false;
    }
    carved = (sl->fresh - CATCACHE_SLAB_HEAD) / n;
    for (void *p = sl->free; p != NULL; nfree++) {
        uintptr_t off = (uintptr_t)p - (uintptr_t)sl;
        void *next;
        if (nfree >= carved || off < CATCACHE_SLAB_HEAD || off >= sl->fresh ||
            (off - CATCACHE_SLAB_HEAD) % n != 0) {
            snprintf(why, len, "slab %p: a freed piece lies outside it",
                     (const void *)sl);
            return false;
        }
        catcache_unpoison(p, sizeof(void *));
        next = *(void **)p;
        catcache_poison(p, sizeof(void *));
        p = next;
    }
    if (nfree + sl->used != carved) {
        snprintf(why, len, "slab %p: %zu pieces carved, %zu freed, %u used",
                 (const void *)sl, carved, nfree, sl->used);
        return false;
    }
    return true;
}

bool catcache_memory_valid(const catcache_session *s, uint64_t *pieces,
                           char *why, size_t len)
{
    uint64_t nroom = 0, nempty = 0, used = 0, partial = 0, idle = 0;
    uint64_t region_bytes = 0;

    for (size_t c = 1; c <= CATCACHE_CLASSES; c++) {
        const catcache_slab *prev = NULL;
        for (const catcache_slab *sl = s->room[c]; sl != NULL;
             prev = sl, sl = sl->next) {
            if (sl->prev != prev || sl->cls != c || sl->used == 0 ||
                catcache_slab_full(sl)) {
                snprintf(why, len,
                         "class %zu: a slab with room is misplaced (class "
                         "%u, %u used%s)",
                         c, sl->cls, sl->used,
                         sl->prev != prev ? ", wrong back link" : "");
                return false;
            }
            nroom++;
        }
    }
    for (const catcache_slab *sl = s->empty; sl != NULL; sl = sl->next) {
        if (sl->used != 0) {
            snprintf(why, len, "an empty slab has %u pieces used", sl->used);
            return false;
        }
        nempty++;
    }
    for (const catcache_slab *first = s->regions; first != NULL;
         first = first->region_next) {
        const char *end;
        /* The oldest region is the first's size, every later one the
         * later ones'. */
        if (first->region_slabs != (first->region_next == NULL
                                        ? CATCACHE_FIRST_SLABS
                                        : CATCACHE_REGION_SLABS)) {
            snprintf(why, len, "a region of %u slabs", first->region_slabs);
            return false;
        }
        region_bytes += CATCACHE_REGION_BYTES(first->region_slabs);
        end = first == s->regions
                  ? s->next_slab
                  : (const char *)first +
                        (size_t)first->region_slabs * CATCACHE_SLAB;
        for (const char *b = (const char *)first; b < end; b += CATCACHE_SLAB) {
            const catcache_slab *sl = (const catcache_slab *)b;
            if (sl->used == 0) {
                idle++;
                continue;
            }
            if (!catcache_slab_check(sl, why, len))
                return false;
            used += sl->used;
            partial += !catcache_slab_full(sl);
        }
    }
    if (idle != nempty || partial != nroom) {
        snprintf(why, len,
                 "%llu slabs empty, %llu on the empty list; %llu with room, "
                 "%llu on the lists",
                 (unsigned long long)idle, (unsigned long long)nempty,
                 (unsigned long long)partial, (unsigned long long)nroom);
        return false;
    }
    if (region_bytes != s->block_bytes) {
        snprintf(why, len, "regions of %llu bytes, block_bytes %llu",
                 (unsigned long long)region_bytes,
                 (unsigned long long)s->block_bytes);
        return false;
    }
    *pieces = used;
    return true;
}
