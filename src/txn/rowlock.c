/*
 * rowlock.c: row locks, in memory (rowlock.h).
 *
 * 64 partitions, each a mutex and a hash table of chained entries in a
 * fixed array (a free list through the unused ones), chosen by the
 * version's hash.  A partition full of entries first drops those whose
 * transaction has ended; only one still full of live ones refuses.  A
 * count of entries over all partitions lets a write skip the table when
 * it is empty, with one load.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "port/atomics.h"
#include "port/mem.h"
#include "txn/rowlock.h"

#define ROWLOCK_PARTS 64

typedef struct rowlock_entry {
    uint32_t rel, block;
    uint16_t offset;
    uint16_t mode; /* rowlock_mode */
    xid_t xid;     /* XID_INVALID: free */
    uint32_t next; /* the next in its chain or the free list, + 1; 0 none */
} rowlock_entry;

typedef struct rowlock_part {
    CACHE_ALIGNED pthread_mutex_t lock;
    uint32_t free_head; /* + 1; 0: none free */
    uint32_t fresh;     /* entries never used yet (the array's tail) */
    uint32_t *heads;    /* per bucket: the first entry + 1 */
    rowlock_entry *e;
} rowlock_part;

struct rowlock_table {
    const procarray *pa;
    void *mem; /* every partition's heads and entries, mapped */
    size_t mem_size;
    uint32_t per_part; /* entries and buckets per partition, a power of 2 */
    CACHE_ALIGNED atomic_u32 count;
    rowlock_part part[ROWLOCK_PARTS];
};

static uint64_t key_hash(uint32_t rel, uint32_t block, uint16_t offset)
{
    uint64_t h = ((uint64_t)rel << 32 | block) * 0x9E3779B97F4A7C15ull;

    h ^= (uint64_t)offset * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

int rowlock_create(const procarray *pa, uint32_t per_part, rowlock_table **out,
                   kerr *err)
{
    rowlock_table *t;
    uint32_t n = 8;
    size_t part_bytes;
    char *m;

    *out = NULL;
    while (n < per_part && n < (1u << 20))
        n <<= 1;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory for row locks");
    t->pa = pa;
    t->per_part = n;
    /* Mapped, not allocated: pages of zeroes until a lock first lands
     * on them, so a table that is never full costs the memory of its
     * busiest moment (calloc() would clear all of it at once). */
    part_bytes = (size_t)n * (sizeof(uint32_t) + sizeof(rowlock_entry));
    t->mem_size = part_bytes * ROWLOCK_PARTS;
    t->mem = mmap(NULL, t->mem_size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t->mem == MAP_FAILED) {
        free(t);
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory for row locks (%zu bytes)",
                        (size_t)part_bytes * ROWLOCK_PARTS);
    }
    m = t->mem;
    for (uint32_t p = 0; p < ROWLOCK_PARTS; p++) {
        rowlock_part *rp = &t->part[p];
        pthread_mutex_init(&rp->lock, NULL);
        rp->e = (rowlock_entry *)(void *)m;
        rp->heads = (uint32_t *)(void *)(m + (size_t)n * sizeof(rowlock_entry));
        m += part_bytes;
        rp->free_head = 0;
        rp->fresh = n;
    }
    atomic_store_relaxed(&t->count, 0);
    *out = t;
    return KEEL_OK;
}

void rowlock_destroy(rowlock_table *t)
{
    if (t == NULL)
        return;
    for (uint32_t p = 0; p < ROWLOCK_PARTS; p++)
        pthread_mutex_destroy(&t->part[p].lock);
    munmap(t->mem, t->mem_size);
    free(t);
}

/* Unlinks entry i (through the link *link that names it) into the free
 * list, under the partition's lock. */
static void entry_free(rowlock_table *t, rowlock_part *rp, uint32_t *link,
                       uint32_t i)
{
    *link = rp->e[i].next;
    rp->e[i].xid = XID_INVALID;
    rp->e[i].next = rp->free_head;
    rp->free_head = i + 1;
    atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
}

/* Frees the entries of ended transactions (but keep's): whether any. */
static bool reclaim(rowlock_table *t, rowlock_part *rp, xid_t keep)
{
    bool any = false;

    for (uint32_t b = 0; b < t->per_part; b++) {
        uint32_t *link = &rp->heads[b];
        while (*link != 0) {
            uint32_t i = *link - 1;
            if (rp->e[i].xid != keep && !procarray_contains(t->pa, rp->e[i].xid)) {
                entry_free(t, rp, link, i);
                any = true;
            } else {
                link = &rp->e[i].next;
            }
        }
    }
    return any;
}

int rowlock_add(rowlock_table *t, rowlock_owner *owner, uint32_t rel,
                uint32_t block, uint16_t offset, xid_t xid, rowlock_mode mode,
                xid_t *holder, kerr *err)
{
    uint64_t h = key_hash(rel, block, offset);
    uint32_t p = (uint32_t)(h % ROWLOCK_PARTS);
    rowlock_part *rp = &t->part[p];
    uint32_t *head = &rp->heads[(h >> 8) & (t->per_part - 1)];
    uint32_t *link = head;
    rowlock_entry *own = NULL;
    uint32_t i;

    pthread_mutex_lock(&rp->lock);
    while (*link != 0) {
        rowlock_entry *e = &rp->e[*link - 1];
        if (e->rel != rel || e->block != block || e->offset != offset) {
            link = &e->next;
        } else if (e->xid == xid) {
            own = e;
            link = &e->next;
        } else if (holder == NULL || !ROWLOCK_CONFLICTS(e->mode, mode)) {
            link = &e->next;
        } else if (!procarray_contains(t->pa, e->xid)) {
            entry_free(t, rp, link, *link - 1); /* its holder has ended */
        } else {
            *holder = e->xid;
            pthread_mutex_unlock(&rp->lock);
            return kerr_set(err, KEEL_EBUSY,
                            "relation %u row (%u,%u) is locked by "
                            "transaction %u",
                            rel, block, offset, (unsigned)e->xid);
        }
    }
    if (own != NULL) {
        if (own->mode < mode)
            own->mode = (uint16_t)mode;
        pthread_mutex_unlock(&rp->lock);
        return KEEL_OK;
    }
    if (rp->free_head == 0 && rp->fresh == 0 && !reclaim(t, rp, xid)) {
        pthread_mutex_unlock(&rp->lock);
        return kerr_set(err, KEEL_ENOMEM,
                        "out of shared memory for row locks: all %u entries "
                        "of one of the table's %u partitions are held by "
                        "running transactions",
                        t->per_part, ROWLOCK_PARTS);
    }
    if (rp->free_head != 0) {
        i = rp->free_head - 1;
        rp->free_head = rp->e[i].next;
    } else {
        i = t->per_part - rp->fresh--;
    }
    rp->e[i] = (rowlock_entry){.rel = rel, .block = block, .offset = offset,
                               .mode = (uint16_t)mode, .xid = xid,
                               .next = *head};
    *head = i + 1;
    atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&rp->lock);
    if (owner == NULL)
        return KEEL_OK; /* reclaimed once xid ends */
    if (owner->n == owner->cap) {
        uint32_t cap = owner->cap ? owner->cap * 2 : 16;
        uint32_t *ne = realloc(owner->entries, cap * sizeof(*ne));
        if (ne == NULL)
            return KEEL_OK; /* reclaimed once xid ends */
        owner->entries = ne;
        owner->cap = cap;
    }
    owner->entries[owner->n++] = p * t->per_part + i;
    return KEEL_OK;
}

xid_t rowlock_holder(rowlock_table *t, uint32_t rel, uint32_t block,
                     uint16_t offset, xid_t self, rowlock_mode at_least)
{
    uint64_t h;
    rowlock_part *rp;
    uint32_t *link;
    xid_t found = XID_INVALID;

    if (atomic_load_relaxed(&t->count) == 0)
        return XID_INVALID;
    h = key_hash(rel, block, offset);
    rp = &t->part[h % ROWLOCK_PARTS];
    pthread_mutex_lock(&rp->lock);
    link = &rp->heads[(h >> 8) & (t->per_part - 1)];
    while (*link != 0) {
        uint32_t i = *link - 1;
        const rowlock_entry *e = &rp->e[i];
        if (e->rel != rel || e->block != block || e->offset != offset ||
            e->xid == self) {
            link = &rp->e[i].next;
        } else if (!procarray_contains(t->pa, e->xid)) {
            entry_free(t, rp, link, i); /* its holder has ended */
        } else if (e->mode < at_least) {
            link = &rp->e[i].next;
        } else {
            found = e->xid;
            break;
        }
    }
    pthread_mutex_unlock(&rp->lock);
    return found;
}

int rowlock_carry(rowlock_table *t, uint32_t rel, uint32_t block,
                  uint16_t offset, uint32_t to_block, uint16_t to_offset,
                  xid_t self, kerr *err)
{
    uint64_t h;
    rowlock_part *rp;
    rowlock_entry *got = NULL;
    uint32_t n = 0, cap = 0;
    int rc = KEEL_OK;

    if (atomic_load_relaxed(&t->count) == 0)
        return KEEL_OK;
    h = key_hash(rel, block, offset);
    rp = &t->part[h % ROWLOCK_PARTS];
    /* copied out first: rowlock_add() takes the new version's partition */
    pthread_mutex_lock(&rp->lock);
    for (uint32_t i = rp->heads[(h >> 8) & (t->per_part - 1)];
         i != 0 && rc == KEEL_OK; i = rp->e[i - 1].next) {
        const rowlock_entry *e = &rp->e[i - 1];
        if (e->rel != rel || e->block != block || e->offset != offset ||
            e->xid == self || !procarray_contains(t->pa, e->xid))
            continue;
        if (n == cap) {
            uint32_t nc = cap ? cap * 2 : 8;
            rowlock_entry *g = realloc(got, nc * sizeof(*g));
            if (g == NULL) {
                rc = kerr_set(err, KEEL_ENOMEM,
                              "out of memory for the row locks of an update");
                break;
            }
            got = g;
            cap = nc;
        }
        got[n++] = *e;
    }
    pthread_mutex_unlock(&rp->lock);
    for (uint32_t k = 0; rc == KEEL_OK && k < n; k++)
        rc = rowlock_add(t, NULL, rel, to_block, to_offset, got[k].xid,
                         (rowlock_mode)got[k].mode, NULL, err);
    free(got);
    return rc;
}

void rowlock_release(rowlock_table *t, rowlock_owner *owner, xid_t xid)
{
    rowlock_release_from(t, owner, 0, xid);
}

void rowlock_release_from(rowlock_table *t, rowlock_owner *owner,
                          uint32_t from, xid_t xid)
{
    for (uint32_t k = from; k < owner->n; k++) {
        uint32_t p = owner->entries[k] / t->per_part;
        uint32_t i = owner->entries[k] % t->per_part;
        rowlock_part *rp = &t->part[p];
        uint32_t *link;
        pthread_mutex_lock(&rp->lock);
        if (rp->e[i].xid == xid) {
            /* its chain: found by its key, as it was added */
            uint64_t h = key_hash(rp->e[i].rel, rp->e[i].block,
                                  rp->e[i].offset);
            link = &rp->heads[(h >> 8) & (t->per_part - 1)];
            while (*link != 0 && *link != i + 1)
                link = &rp->e[*link - 1].next;
            if (*link == i + 1)
                entry_free(t, rp, link, i);
        }
        pthread_mutex_unlock(&rp->lock);
    }
    if (owner->n > from)
        owner->n = from;
}

void rowlock_owner_free(rowlock_owner *owner)
{
    free(owner->entries);
    *owner = (rowlock_owner){0};
}

uint32_t rowlock_count(const rowlock_table *t)
{
    return atomic_load_relaxed(&t->count);
}
