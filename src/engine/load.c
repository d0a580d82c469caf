/*
 * load.c: keel_load_table(): creating a table and filling it in one
 * statement, the fast way.
 *
 * A table created by the running transaction is reachable by nobody else
 * until that transaction commits, and by nobody at all if it aborts.  So
 * its rows can be written frozen (as PostgreSQL's COPY FREEZE does), with
 * no index maintained row by row: the heap is appended to through a
 * bulk-write ring (heap_bulk_*), the primary key's entries are collected
 * as the rows go in, and the index is built bottom-up by btree_build() at
 * the end.  Keys that arrive in ascending order (the usual case for a
 * generated key) are not sorted at all.  Neither the rows nor the index
 * are logged: both are written and synced before the statement ends, so
 * before its transaction's commit record (as PostgreSQL does with
 * wal_level = minimal).  A standby fed by the log would therefore not
 * see them: when the log is streamed, a load must log its pages whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

/* Bytes of one chunk of the arena holding copies of string keys. */
#define LOAD_ARENA_CHUNK (1u << 20)

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    char data[];
} arena_chunk;

/* The primary key's entries, collected during the load. */
typedef struct load_keys {
    const tuple_desc *keydesc;
    uint16_t nkeys;
    keel_value *keys; /* n * nkeys values */
    tid *tids;
    size_t n, cap;
    bool sorted;   /* keys so far strictly ascending in (key, tid) */
    size_t *order; /* entry numbers in (key, tid) order, if not sorted */
    size_t pos;    /* btree_build's cursor */
    arena_chunk *arena;
} load_keys;

static void load_keys_free(load_keys *lk)
{
    while (lk->arena != NULL) {
        arena_chunk *next = lk->arena->next;
        free(lk->arena);
        lk->arena = next;
    }
    free(lk->keys);
    free(lk->tids);
    free(lk->order);
}

/* A copy of len bytes in the arena, or NULL if memory is exhausted. */
static const char *arena_copy(load_keys *lk, const char *p, uint32_t len)
{
    arena_chunk *c = lk->arena;
    char *dst;

    if (c == NULL || c->cap - c->used < len) {
        size_t cap = len > LOAD_ARENA_CHUNK ? len : LOAD_ARENA_CHUNK;
        c = malloc(sizeof(*c) + cap);
        if (c == NULL)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = lk->arena;
        lk->arena = c;
    }
    dst = c->data + c->used;
    if (len > 0)
        memcpy(dst, p, len);
    c->used += len;
    return dst;
}

/* Compares entries i and j in (key, tid) order. */
static int entry_compare(const load_keys *lk, size_t i, size_t j)
{
    const keel_value *x = &lk->keys[i * lk->nkeys];
    const keel_value *y = &lk->keys[j * lk->nkeys];

    for (uint16_t k = 0; k < lk->nkeys; k++) {
        int c = value_compare(&lk->keydesc->attrs[k], &x[k], &y[k]);
        if (c != 0)
            return c;
    }
    return tid_compare(lk->tids[i], lk->tids[j]);
}

static int order_cmp(const void *a, const void *b, void *arg)
{
    return entry_compare(arg, *(const size_t *)a, *(const size_t *)b);
}

/* Appends the key columns of row (table column numbers in keys) and t.
 * ENOMEM (unset message) if memory is exhausted. */
static int load_keys_add(load_keys *lk, const uint16_t *cols,
                         const keel_value *row, tid t)
{
    keel_value *dst;

    if (lk->n == lk->cap) {
        size_t cap = lk->cap ? lk->cap * 2 : 4096;
        keel_value *nk = realloc(lk->keys, cap * lk->nkeys * sizeof(*nk));
        if (nk == NULL)
            return KEEL_ENOMEM;
        lk->keys = nk;
        tid *nt = realloc(lk->tids, cap * sizeof(*nt));
        if (nt == NULL)
            return KEEL_ENOMEM;
        lk->tids = nt;
        lk->cap = cap;
    }
    dst = &lk->keys[lk->n * lk->nkeys];
    for (uint16_t k = 0; k < lk->nkeys; k++) {
        dst[k] = row[cols[k] - 1];
        if (!dst[k].isnull && type_has_bytes(lk->keydesc->attrs[k].type)) {
            dst[k].v.s.ptr = arena_copy(lk, dst[k].v.s.ptr, dst[k].v.s.len);
            if (dst[k].v.s.ptr == NULL)
                return KEEL_ENOMEM;
        }
    }
    lk->tids[lk->n] = t;
    if (lk->sorted && lk->n > 0 && entry_compare(lk, lk->n - 1, lk->n) >= 0)
        lk->sorted = false;
    lk->n++;
    return KEEL_OK;
}

/* Orders the entries for btree_build (ENOMEM, unset message). */
static int load_keys_sort(load_keys *lk)
{
    if (lk->sorted || lk->n == 0)
        return KEEL_OK;
    lk->order = malloc(lk->n * sizeof(size_t));
    if (lk->order == NULL)
        return KEEL_ENOMEM;
    for (size_t i = 0; i < lk->n; i++)
        lk->order[i] = i;
    qsort_r(lk->order, lk->n, sizeof(size_t), order_cmp, lk);
    return KEEL_OK;
}

/* btree_build's input: the entries in (key, tid) order. */
static bool load_keys_next(void *ctx, const keel_value **keys, tid *t)
{
    load_keys *lk = ctx;
    size_t i;

    if (lk->pos >= lk->n)
        return false;
    i = lk->order != NULL ? lk->order[lk->pos] : lk->pos;
    lk->pos++;
    *keys = &lk->keys[i * lk->nkeys];
    *t = lk->tids[i];
    return true;
}

/* The row descriptor of a table with columns cols, as engine_table_handle()
 * builds it from the catalog (primary key columns not null). */
static int load_desc(keel_session *s, const keel_column *cols, uint16_t ncols,
                     const uint16_t *pkey, uint16_t npkey, tuple_desc **out)
{
    tuple_desc *d = tupdesc_alloc(ncols);
    int rc = KEEL_OK;

    if (d == NULL)
        return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    for (uint16_t i = 0; rc == KEEL_OK && i < ncols; i++) {
        bool notnull = cols[i].notnull;
        for (uint16_t k = 0; k < npkey; k++)
            notnull = notnull || pkey[k] == i + 1;
        rc = tupdesc_set(d, i, cols[i].type,
                         cols[i].type == KEEL_CHAR ? cols[i].charlen : 0,
                         notnull, &s->bs->err);
    }
    if (rc != KEEL_OK) {
        tupdesc_free(d);
        return rc;
    }
    *out = d;
    return KEEL_OK;
}

/* The key descriptor of the primary key over the row descriptor d. */
static int load_keydesc(keel_session *s, const tuple_desc *d,
                        const uint16_t *pkey, uint16_t npkey, tuple_desc **out)
{
    tuple_desc *kd = tupdesc_alloc(npkey);
    int rc = KEEL_OK;

    if (kd == NULL)
        return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    for (uint16_t k = 0; rc == KEEL_OK && k < npkey; k++) {
        const tuple_attr *a = &d->attrs[pkey[k] - 1];
        rc = tupdesc_set(kd, k, a->type, a->type == KEEL_CHAR ? a->len : 0,
                         true, &s->bs->err);
    }
    if (rc != KEEL_OK) {
        tupdesc_free(kd);
        return rc;
    }
    *out = kd;
    return KEEL_OK;
}

/* Appends every row next supplies to heap, collecting primary key entries
 * in lk (if not NULL). */
static int load_rows(keel_session *s, heap_rel *heap, const uint16_t *pkey,
                     load_keys *lk, keel_load_fn next, void *ctx,
                     uint64_t *nrows)
{
    const tuple_desc *d = heap->desc;
    keel_value *vals = calloc(d->natts, sizeof(*vals));
    heap_bulk *b = NULL;
    bool done = false;
    tid t;
    int rc;

    if (vals == NULL)
        return kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    rc = heap_bulk_begin(heap, s->bs, &b);
    while (rc == KEEL_OK) {
        rc = next(ctx, vals, &done);
        if (rc != KEEL_OK) {
            if (s->bs->err.code == KEEL_OK)
                kerr_set(&s->bs->err, rc, "loading row %llu: %s",
                         (unsigned long long)*nrows + 1, keel_status_str(rc));
            break;
        }
        if (done)
            break;
        rc = engine_check_values(s, d, vals);
        if (rc == KEEL_OK)
            rc = heap_bulk_insert(b, XID_FROZEN, vals, &t);
        if (rc == KEEL_OK && lk != NULL &&
            load_keys_add(lk, pkey, vals, t) != KEEL_OK)
            rc = kerr_set(&s->bs->err, KEEL_ENOMEM,
                          "out of memory for the primary key's entries");
        if (rc == KEEL_OK)
            (*nrows)++;
    }
    heap_bulk_end(b);
    free(vals);
    return rc;
}

keel_status keel_load_table(keel_session *s, const char *schema, const char *name,
                    const keel_column *cols, uint16_t ncols,
                    const uint16_t *pkey, uint16_t npkey, keel_load_fn next,
                    void *ctx, uint64_t *nrows)
{
    catalog_txn ct;
    tuple_desc *desc = NULL, *keydesc = NULL;
    load_keys lk = {0};
    heap_rel heap;
    oid_t toid = 0, ioid = 0;
    uint64_t n = 0;
    bool changed = false;
    int rc;

    if (nrows != NULL)
        *nrows = 0;
    if (next == NULL)
        return kerr_set(&s->bs->err, KEEL_EINVAL, "no row source given");
    rc = engine_stmt_begin_catalog(s, true, &ct);
    if (rc != KEEL_OK)
        return rc;
    /* The catalog rows first (they check every argument), the primary
     * key's index relation only reserved. */
    rc = engine_create_table(s, &ct, schema, name, cols, ncols, pkey, npkey,
                             false, &toid, &ioid, &changed);
    if (rc == KEEL_OK)
        rc = load_desc(s, cols, ncols, pkey, npkey, &desc);
    if (rc == KEEL_OK && npkey > 0)
        rc = load_keydesc(s, desc, pkey, npkey, &keydesc);
    if (rc == KEEL_OK) {
        lk.keydesc = keydesc;
        lk.nkeys = npkey;
        lk.sorted = true;
        heap_rel_init(&heap, toid, desc);
        /* Not logged (PostgreSQL's wal_level = minimal): nobody else can
         * reach the table before the commit, and its pages are on disk
         * before the commit record (below).  A crash before it leaves
         * the file to a relation that never was. */
        s->bs->log_skip_rel = toid;
        rc = load_rows(s, &heap, pkey, npkey > 0 ? &lk : NULL, next, ctx, &n);
        if (rc == KEEL_OK)
            rc = buf_flush_rel(s->bs, toid);
        s->bs->log_skip_rel = INVALID_RELNUMBER;
    }
    if (rc == KEEL_OK && npkey > 0 && load_keys_sort(&lk) != KEEL_OK)
        rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    if (rc == KEEL_OK && npkey > 0)
        rc = engine_note_file(s->db, ioid, &s->bs->err);
    if (rc == KEEL_OK && npkey > 0) {
        s->bs->log_skip_rel = ioid;
        rc = btree_build(s->bs, ioid, keydesc, true, load_keys_next, &lk, NULL,
                         NULL);
        if (rc == KEEL_OK)
            rc = buf_flush_rel(s->bs, ioid);
        s->bs->log_skip_rel = INVALID_RELNUMBER;
        if (rc == KEEL_EUNIQUE)
            kerr_set(&s->bs->err, KEEL_EUNIQUE,
                     "could not create unique index \"%s_pkey\": table \"%s\" "
                     "has duplicate keys",
                     name, name);
    }
    load_keys_free(&lk);
    tupdesc_free(keydesc);
    tupdesc_free(desc);
    rc = engine_stmt_end(s, rc, changed || ct.undo_failed);
    if (rc == KEEL_OK && nrows != NULL)
        *nrows = n;
    return rc;
}
