/*
 * inval.c: the shared invalidation queue (see inval.h).
 */
#include "catalog/inval.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "port/atomics.h"
#include "port/spin.h"

struct inval_queue {
    pthread_mutex_t lock; /* appends and reads */
    atomic_u64 head;      /* messages ever appended; written under lock */
    uint32_t capacity;
    inval_msg *ring;       /* message i lives at ring[i % capacity] */
    atomic_u32 committing; /* commits between begin and end (inval.h) */
};

void inval_pending_add(inval_pending *p, uint32_t cache_id, uint32_t hash)
{
    p->adds++;
    if (p->overflow)
        return;
    for (uint32_t i = 0; i < p->count; i++)
        if (p->msgs[i].cache_id == cache_id && p->msgs[i].hash == hash)
            return;
    if (p->count == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 16;
        inval_msg *m = realloc(p->msgs, cap * sizeof(*m));
        if (m == NULL) {
            p->overflow = true;
            return;
        }
        p->msgs = m;
        p->cap = cap;
    }
    p->msgs[p->count++] = (inval_msg){.cache_id = cache_id, .hash = hash};
}

void inval_pending_clear(inval_pending *p)
{
    p->count = 0;
    p->adds = 0;
    p->overflow = false;
}

void inval_pending_free(inval_pending *p)
{
    free(p->msgs);
    memset(p, 0, sizeof(*p));
}

int inval_queue_create(uint32_t capacity, inval_queue **out, kerr *err)
{
    inval_queue *q;

    *out = NULL;
    if (capacity == 0)
        return kerr_set(err, KEEL_EINVAL, "invalidation queue of 0 messages");
    q = calloc(1, sizeof(*q));
    if (q == NULL || (q->ring = calloc(capacity, sizeof(inval_msg))) == NULL) {
        free(q);
        return kerr_set(err, KEEL_ENOMEM,
                        "out of memory for the "
                        "invalidation queue");
    }
    pthread_mutex_init(&q->lock, NULL);
    atomic_init(&q->head, 0);
    atomic_init(&q->committing, 0);
    q->capacity = capacity;
    *out = q;
    return KEEL_OK;
}

void inval_queue_destroy(inval_queue *q)
{
    if (q == NULL)
        return;
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    free(q);
}

uint64_t inval_queue_head(const inval_queue *q)
{
    return atomic_load_explicit(&q->head, memory_order_acquire);
}

/* Stores one message at the head; caller holds the lock. */
static void append_locked(inval_queue *q, uint32_t cache_id, uint32_t hash)
{
    uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);

    q->ring[h % q->capacity] = (inval_msg){.cache_id = cache_id, .hash = hash};
    atomic_store_explicit(&q->head, h + 1, memory_order_release);
}

void inval_queue_append(inval_queue *q, inval_pending *p)
{
    if (p->count == 0 && !p->overflow)
        return;
    pthread_mutex_lock(&q->lock);
    if (p->overflow || p->count > q->capacity)
        append_locked(q, INVAL_RESET_ALL, 0);
    else
        for (uint32_t i = 0; i < p->count; i++)
            append_locked(q, p->msgs[i].cache_id, p->msgs[i].hash);
    pthread_mutex_unlock(&q->lock);
    inval_pending_clear(p);
}

static bool pending_empty(const inval_pending *p)
{
    return p->count == 0 && !p->overflow;
}

void inval_commit_begin(inval_queue *q, const inval_pending *p)
{
    if (!pending_empty(p))
        atomic_fetch_add_explicit(&q->committing, 1, memory_order_seq_cst);
}

void inval_commit_end(inval_queue *q, inval_pending *p, bool committed)
{
    if (pending_empty(p))
        return;
    if (committed)
        inval_queue_append(q, p);
    else
        inval_pending_clear(p);
    atomic_fetch_sub_explicit(&q->committing, 1, memory_order_seq_cst);
}

void inval_wait_commits(const inval_queue *q)
{
    spin_wait w;

    spin_wait_init(&w);
    while (atomic_load_explicit(&q->committing, memory_order_seq_cst) != 0)
        spin_wait_once(&w);
}

void inval_queue_append_one(inval_queue *q, uint32_t cache_id, uint32_t hash)
{
    pthread_mutex_lock(&q->lock);
    append_locked(q, cache_id, hash);
    pthread_mutex_unlock(&q->lock);
}

void inval_reader_init(inval_queue *q, inval_reader *r)
{
    r->pos = inval_queue_head(q);
}

bool inval_has_news(const inval_queue *q, const inval_reader *r)
{
    return inval_queue_head(q) != r->pos;
}

int inval_read(inval_queue *q, inval_reader *r, inval_msg *out, uint32_t max,
               uint32_t *n)
{
    uint64_t h;
    uint32_t k = 0;

    *n = 0;
    pthread_mutex_lock(&q->lock);
    h = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (h - r->pos > q->capacity) {
        r->pos = h;
        pthread_mutex_unlock(&q->lock);
        return INVAL_RESET;
    }
    while (r->pos < h && k < max) {
        out[k++] = q->ring[r->pos % q->capacity];
        r->pos++;
    }
    pthread_mutex_unlock(&q->lock);
    *n = k;
    return INVAL_MESSAGES;
}
