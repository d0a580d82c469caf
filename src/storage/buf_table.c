/*
 * buf_table.c: the lock-free-read mapping table (see buf_table.h).
 *
 * Memory ordering: all loads on the lookup path are relaxed.  A lookup's
 * answer is only a hint that the caller validates by pinning the buffer
 * (an acquire operation on its state word, which synchronizes with the
 * release that published the tag) and comparing the tag again.  Writers
 * hold the partition lock, whose release orders their stores for the next
 * locked reader.
 */
#include "storage/buf_table.h"

#include <assert.h>

int buf_table_init(buf_table *t, buf_desc *descs, uint32_t nbuffers)
{
    uint32_t nbuckets = BUF_TABLE_PARTITIONS;

    /* At least two buckets per buffer keeps chains around one entry. */
    while (nbuckets < 2 * (uint64_t)nbuffers)
        nbuckets *= 2;
    t->descs = descs;
    t->bucket_mask = nbuckets - 1;
    t->buckets = mem_alloc_aligned(sizeof(atomic_i32) * (size_t)nbuckets);
    t->parts = mem_alloc_aligned(sizeof(buf_partition) * BUF_TABLE_PARTITIONS);
    if (t->buckets == NULL || t->parts == NULL) {
        buf_table_free(t);
        return KEEL_ENOMEM;
    }
    for (uint32_t i = 0; i < nbuckets; i++)
        atomic_store_relaxed(&t->buckets[i], -1);
    for (uint32_t i = 0; i < BUF_TABLE_PARTITIONS; i++)
        lwlock_init(&t->parts[i].lock);
    return KEEL_OK;
}

void buf_table_free(buf_table *t)
{
    mem_free_aligned(t->buckets);
    mem_free_aligned(t->parts);
    t->buckets = NULL;
    t->parts = NULL;
}

int32_t buf_table_lookup_locked(const buf_table *t, buf_tag tag, uint64_t hash)
{
    int32_t id = atomic_load_relaxed(&t->buckets[hash & t->bucket_mask]);

    assert(lwlock_held(&t->parts[buf_table_partition(t, hash)].lock));
    while (id >= 0) {
        const buf_desc *d = &t->descs[id];
        if (atomic_load_relaxed(&d->tag) == tag)
            return id;
        id = atomic_load_relaxed(&d->hash_next);
    }
    return -1;
}

void buf_table_insert(buf_table *t, int32_t id, uint64_t hash)
{
    atomic_i32 *head = &t->buckets[hash & t->bucket_mask];

    assert(lwlock_held_exclusive(&t->parts[buf_table_partition(t, hash)].lock));
    /* Link first, then publish: a reader sees either chain, both whole. */
    atomic_store_relaxed(&t->descs[id].hash_next, atomic_load_relaxed(head));
    atomic_store_release(head, id);
}

void buf_table_delete(buf_table *t, int32_t id, uint64_t hash)
{
    atomic_i32 *link = &t->buckets[hash & t->bucket_mask];
    int32_t cur;

    assert(lwlock_held_exclusive(&t->parts[buf_table_partition(t, hash)].lock));
    while ((cur = atomic_load_relaxed(link)) != id) {
        assert(cur >= 0);
        link = &t->descs[cur].hash_next;
    }
    /* Unlink; id's own next link stays intact for readers standing on it. */
    atomic_store_release(link, atomic_load_relaxed(&t->descs[id].hash_next));
}
