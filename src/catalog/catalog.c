/*
 * catalog.c: the system catalogs: definitions, bootstrap, generic row
 * changes through every index, and lookups (see catalog.h, README.md).
 */
#include "catalog/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port/hash.h"
#include "port/mem.h"
#include "storage/fault.h"
#include "txn/txn.h"

#define CAT_MAX_COLS 13
#define CAT_MAX_IDX  2

typedef struct col_def {
    const char *name;
    keel_type type;
    uint16_t charlen;
    bool notnull;
} col_def;

typedef struct idx_def {
    oid_t oid;
    const char *name;
    bool unique;
    uint16_t nkeys;
    uint16_t keys[3]; /* 0-based column numbers */
    catalog_cache_id cache;
} idx_def;

typedef struct cat_def {
    oid_t oid;
    const char *name;
    uint16_t ncols;
    col_def cols[CAT_MAX_COLS];
    uint16_t nidx;
    idx_def idx[CAT_MAX_IDX];
} cat_def;

static const cat_def cat_defs[CAT_COUNT] = {
    [CAT_NAMESPACE] = {CATALOG_NAMESPACE_OID,
                       "keel_namespace",
                       2,
                       {{"oid", KEEL_OID, 0, true},
                        {"name", KEEL_NAME, 0, true}},
                       2,
                       {{CATALOG_NAMESPACE_OID_IDX,
                         "keel_namespace_oid_index",
                         true,
                         1,
                         {0},
                         CACHE_NAMESPACE_OID},
                        {CATALOG_NAMESPACE_NAME_IDX,
                         "keel_namespace_name_index",
                         true,
                         1,
                         {1},
                         CACHE_NAMESPACE_NAME}}},
    [CAT_CLASS] = {CATALOG_CLASS_OID,
                   "keel_class",
                   8,
                   {{"oid", KEEL_OID, 0, true},
                    {"name", KEEL_NAME, 0, true},
                    {"namespace", KEEL_OID, 0, true},
                    {"relnumber", KEEL_OID, 0, true},
                    {"kind", KEEL_CHAR, 1, true},
                    {"natts", KEEL_INT2, 0, true},
                    {"pages", KEEL_INT4, 0, true},
                    {"tuples", KEEL_FLOAT8, 0, true}},
                   2,
                   {{CATALOG_CLASS_OID_IDX,
                     "keel_class_oid_index",
                     true,
                     1,
                     {0},
                     CACHE_CLASS_OID},
                    {CATALOG_CLASS_NAME_IDX,
                     "keel_class_name_index",
                     true,
                     2,
                     {1, 2},
                     CACHE_CLASS_NAME}}},
    [CAT_ATTRIBUTE] = {CATALOG_ATTRIBUTE_OID,
                       "keel_attribute",
                       6,
                       {{"relid", KEEL_OID, 0, true},
                        {"attnum", KEEL_INT2, 0, true},
                        {"name", KEEL_NAME, 0, true},
                        {"type", KEEL_INT2, 0, true},
                        {"charlen", KEEL_INT2, 0, true},
                        {"notnull", KEEL_BOOL, 0, true}},
                       2,
                       {{CATALOG_ATTRIBUTE_NUM_IDX,
                         "keel_attribute_num_index",
                         true,
                         2,
                         {0, 1},
                         CACHE_ATTRIBUTE_NUM},
                        {CATALOG_ATTRIBUTE_NAME_IDX,
                         "keel_attribute_name_index",
                         true,
                         2,
                         {0, 2},
                         CACHE_ATTRIBUTE_NAME}}},
    [CAT_INDEX] = {CATALOG_INDEX_OID,
                   "keel_index",
                   6,
                   {{"indexrelid", KEEL_OID, 0, true},
                    {"indrelid", KEEL_OID, 0, true},
                    {"unique", KEEL_BOOL, 0, true},
                    {"primary", KEEL_BOOL, 0, true},
                    {"nkeys", KEEL_INT2, 0, true},
                    {"keys", KEEL_TEXT, 0, true}},
                   2,
                   {{CATALOG_INDEX_OID_IDX,
                     "keel_index_oid_index",
                     true,
                     1,
                     {0},
                     CACHE_INDEX_OID},
                    {CATALOG_INDEX_TABLE_IDX,
                     "keel_index_table_index",
                     false,
                     1,
                     {1},
                     CACHE_INDEX_TABLE}}},
    [CAT_STATISTIC] = {CATALOG_STATISTIC_OID,
                       "keel_statistic",
                       13,
                       {{"relid", KEEL_OID, 0, true},
                        {"attnum", KEEL_INT2, 0, true},
                        {"inherited", KEEL_BOOL, 0, true},
                        {"nullfrac", KEEL_FLOAT8, 0, true},
                        {"ndistinct", KEEL_FLOAT8, 0, true},
                        {"mcv1", KEEL_TEXT, 0, false},
                        {"mcf1", KEEL_FLOAT8, 0, false},
                        {"mcv2", KEEL_TEXT, 0, false},
                        {"mcf2", KEEL_FLOAT8, 0, false},
                        {"mcv3", KEEL_TEXT, 0, false},
                        {"mcf3", KEEL_FLOAT8, 0, false},
                        {"mcv4", KEEL_TEXT, 0, false},
                        {"mcf4", KEEL_FLOAT8, 0, false}},
                       1,
                       {{CATALOG_STATISTIC_IDX,
                         "keel_statistic_index",
                         true,
                         3,
                         {0, 1, 2},
                         CACHE_STATISTIC}}},
};

typedef struct cat_rel {
    tuple_desc *desc;
    tuple_desc *keydesc[CAT_MAX_IDX];
    heap_rel heap;
    btree *idx[CAT_MAX_IDX];
} cat_rel;

struct catalog {
    cat_rel rels[CAT_COUNT];
};

/* ------------------------------------------------------------------ */
/* Descriptors                                                        */
/* ------------------------------------------------------------------ */

static int make_descs(const cat_def *d, cat_rel *r, kerr *err)
{
    int rc;

    r->desc = tupdesc_alloc(d->ncols);
    if (r->desc == NULL)
        return kerr_set(err, KEEL_ENOMEM, "out of memory");
    for (uint16_t i = 0; i < d->ncols; i++) {
        rc = tupdesc_set(r->desc, i, d->cols[i].type, d->cols[i].charlen,
                         d->cols[i].notnull, err);
        if (rc != KEEL_OK)
            return rc;
    }
    for (uint16_t j = 0; j < d->nidx; j++) {
        const idx_def *x = &d->idx[j];
        r->keydesc[j] = tupdesc_alloc(x->nkeys);
        if (r->keydesc[j] == NULL)
            return kerr_set(err, KEEL_ENOMEM, "out of memory");
        for (uint16_t k = 0; k < x->nkeys; k++) {
            const col_def *c = &d->cols[x->keys[k]];
            rc = tupdesc_set(r->keydesc[j], k, c->type, c->charlen, true, err);
            if (rc != KEEL_OK)
                return rc;
        }
    }
    heap_rel_init(&r->heap, d->oid, r->desc);
    return KEEL_OK;
}

static void free_rels(catalog *c)
{
    for (int i = 0; i < CAT_COUNT; i++) {
        cat_rel *r = &c->rels[i];
        for (int j = 0; j < CAT_MAX_IDX; j++) {
            btree_close(r->idx[j]);
            tupdesc_free(r->keydesc[j]);
        }
        tupdesc_free(r->desc);
    }
    free(c);
}

void catalog_close(catalog *c)
{
    if (c != NULL)
        free_rels(c);
}

const tuple_desc *catalog_desc(const catalog *c, catalog_id id)
{
    return c->rels[id].desc;
}

/* ECORRUPT unless the meta page of catalog index x (open as bt) gives it
 * the key columns the catalog puts in it (want), and x's uniqueness: a
 * damaged one would have the catalog's values read as other types, or
 * its keys no longer kept unique. */
static int check_index_keys(const idx_def *x, const btree *bt,
                            const tuple_desc *want, kerr *err)
{
    const tuple_desc *have = btree_key_desc(bt);
    bool ok = have->natts == want->natts && btree_is_unique(bt) == x->unique;

    for (uint16_t k = 0; ok && k < want->natts; k++)
        ok = have->attrs[k].type == want->attrs[k].type &&
             have->attrs[k].len == want->attrs[k].len;
    if (!ok)
        return kerr_set(err, KEEL_ECORRUPT,
                        "catalog index %s (relation %u): its meta page "
                        "gives it other key columns (or uniqueness) than "
                        "its catalog's",
                        x->name, x->oid);
    return KEEL_OK;
}

int catalog_open(buf_session *bs, catalog **out)
{
    catalog *c = calloc(1, sizeof(*c));
    int rc;

    *out = NULL;
    if (c == NULL)
        return kerr_set(&bs->err, KEEL_ENOMEM, "out of memory");
    for (int i = 0; i < CAT_COUNT; i++) {
        const cat_def *d = &cat_defs[i];
        rc = make_descs(d, &c->rels[i], &bs->err);
        if (rc == KEEL_OK && !smgr_exists(buf_pool_smgr(bs->pool), d->oid))
            rc = kerr_set(&bs->err, KEEL_ECORRUPT,
                          "catalog %s (relation %u) is missing", d->name,
                          d->oid);
        for (uint16_t j = 0; rc == KEEL_OK && j < d->nidx; j++) {
            rc = btree_open(bs, d->idx[j].oid, &c->rels[i].idx[j]);
            if (rc == KEEL_OK)
                rc = check_index_keys(&d->idx[j], c->rels[i].idx[j],
                                      c->rels[i].keydesc[j], &bs->err);
        }
        if (rc != KEEL_OK) {
            free_rels(c);
            return rc;
        }
    }
    *out = c;
    return KEEL_OK;
}

/* ------------------------------------------------------------------ */
/* Keys, hashes, liveness                                             */
/* ------------------------------------------------------------------ */

/*
 * The hash of a cache key, computed exactly as the catalog cache computes it
 * for the same key (port/hash.h): integers by value (int2 as its unsigned
 * 16 bits, bool as 0 or 1), names up to their NUL with hash_name(), char
 * without trailing blanks and other strings whole with hash_name(), floats
 * by their bits; the key columns combined in order with hash_combine().
 */
uint32_t catalog_key_hash(const tuple_desc *keydesc, const keel_value *keys)
{
    uint64_t h = 0;

    for (uint16_t i = 0; i < keydesc->natts; i++) {
        const keel_value *v = &keys[i];
        uint64_t kh;

        if (v->isnull) {
            kh = hash_int(UINT64_MAX);
        } else {
            switch (keydesc->attrs[i].type) {
            case KEEL_INT2:
                kh = hash_int((uint16_t)v->v.i2);
                break;
            case KEEL_INT4:
            case KEEL_DATE:
                kh = hash_int((uint32_t)v->v.i4);
                break;
            case KEEL_OID:
                kh = hash_int(v->v.oid);
                break;
            case KEEL_INT8:
            case KEEL_TIMESTAMP:
            case KEEL_TIMESTAMPTZ:
                kh = hash_int((uint64_t)v->v.i8);
                break;
            case KEEL_FLOAT8: {
                uint64_t bits;
                memcpy(&bits, &v->v.f8, sizeof(bits));
                kh = hash_int(bits);
                break;
            }
            case KEEL_BOOL:
                kh = hash_int(v->v.b ? 1 : 0);
                break;
            default: {
                uint32_t len = v->v.s.len;
                /* name compares up to its NUL, char without trailing
                 * blanks */
                if (keydesc->attrs[i].type == KEEL_NAME)
                    len = (uint32_t)mem_strnlen(v->v.s.ptr, len);
                if (keydesc->attrs[i].type == KEEL_CHAR)
                    while (len > 0 && v->v.s.ptr[len - 1] == ' ')
                        len--;
                /* numeric without its display scale, its last two bytes */
                if (keydesc->attrs[i].type == KEEL_NUMERIC && len >= 2)
                    len -= 2;
                kh = hash_name(v->v.s.ptr, len);
                break;
            }
            }
        }
        h = i == 0 ? kh : hash_combine(h, kh);
    }
    return hash_fold32(h);
}

static void extract_keys(const idx_def *x, const keel_value *vals,
                         keel_value *keys)
{
    for (uint16_t k = 0; k < x->nkeys; k++)
        keys[k] = vals[x->keys[k]];
}

btree_row catalog_row_is_live(void *arg, tid t)
{
    catalog_live_ctx *lc = arg;
    heap_fate fate;
    int rc = heap_fetch_running(lc->rel, lc->bs, lc->vis, t, &fate,
                                &lc->running);

    /* No row there is no live row (asked again next time); another error
     * refuses the insertion, with that error, rather than risk a
     * duplicate. */
    if (rc == KEEL_ENOENT)
        return BTREE_ROW_GONE;
    if (rc != KEEL_OK)
        return BTREE_ROW_ERROR;
    switch (fate) {
    case HEAP_GONE:
        return BTREE_ROW_GONE;
    case HEAP_DEAD:
        return BTREE_ROW_DEAD;
    default:
        return BTREE_ROW_LIVE;
    }
}

bool catalog_row_removable(void *arg, tid t)
{
    catalog_live_ctx *lc = arg;
    bool dead = false;
    xid_t deleter = XID_INVALID;

    if (heap_fetch_dead(lc->rel, lc->bs, lc->vis, t, &dead, &deleter) !=
        KEEL_OK) {
        kerr_clear(&lc->bs->err); /* not the insertion's error: the entry
                                     stays, and the row is asked about again
                                     by the next insertion */
        return false;
    }
    if (!dead)
        return false;
    if (deleter == XID_INVALID)
        return true; /* its inserter aborted */
    if (deleter >= lc->horizon && lc->txn != NULL)
        lc->horizon = txn_horizon_recent(lc->txn, deleter);
    return deleter < lc->horizon;
}

/* ------------------------------------------------------------------ */
/* Row changes                                                        */
/* ------------------------------------------------------------------ */

static void add_invals(const cat_def *d, const cat_rel *r, catalog_txn *ct,
                       const keel_value *vals)
{
    keel_value keys[3];

    if (ct->inval == NULL)
        return;
    for (uint16_t j = 0; j < d->nidx; j++) {
        extract_keys(&d->idx[j], vals, keys);
        inval_pending_add(ct->inval, d->idx[j].cache,
                          catalog_key_hash(r->keydesc[j], keys));
    }
}

/* Inserts index entries for the version at t; on failure removes those it
 * made and returns the error. */
static int index_row(catalog *c, catalog_txn *ct, catalog_id id, tid t,
                     const keel_value *vals)
{
    const cat_def *d = &cat_defs[id];
    cat_rel *r = &c->rels[id];
    catalog_live_ctx lc = {&r->heap, ct->bs, &ct->vis, NULL, XID_INVALID,
                           XID_INVALID};
    keel_value keys[3];
    int rc = KEEL_OK;
    uint16_t j;

    for (j = 0; j < d->nidx; j++) {
        extract_keys(&d->idx[j], vals, keys);
        rc = btree_insert(r->idx[j], ct->bs, keys, t,
                          ct->bootstrap ? NULL : catalog_row_is_live, &lc);
        if (rc != KEEL_OK)
            break;
    }
    if (rc != KEEL_OK) {
        kerr saved = ct->bs->err;
        fault_point(FAULT_POINT_INDEX_UNDO, r->heap.relnumber, t.block);
        while (j-- > 0) {
            extract_keys(&d->idx[j], vals, keys);
            (void)btree_delete(r->idx[j], ct->bs, keys, t);
        }
        ct->bs->err = saved;
    }
    return rc;
}

int catalog_insert(catalog *c, catalog_txn *ct, catalog_id id,
                   const keel_value *vals)
{
    cat_rel *r = &c->rels[id];
    int32_t pinned;
    tid t;
    int rc;

    /* Pinned until the entries are in: an undo then reads nothing. */
    rc = heap_insert_pinned(&r->heap, ct->bs, ct->xid, cid_stamp(ct->vis.cids),
                            vals, &t, &pinned);
    if (rc != KEEL_OK)
        return rc;
    rc = index_row(c, ct, id, t, vals);
    if (rc != KEEL_OK) {
        /* Nobody must ever see the row: delete it again as ourselves (an
         * entry left names a dead version, which readers skip). */
        kerr saved = ct->bs->err;
        if (heap_delete(&r->heap, ct->bs, &ct->vis, ct->xid, t) != KEEL_OK)
            ct->undo_failed = true;
        ct->bs->err = saved;
    } else {
        add_invals(&cat_defs[id], r, ct, vals);
    }
    buf_release(ct->bs, pinned);
    return rc;
}

int catalog_delete(catalog *c, catalog_txn *ct, catalog_id id, tid t,
                   const keel_value *vals)
{
    cat_rel *r = &c->rels[id];
    int rc = heap_delete(&r->heap, ct->bs, &ct->vis, ct->xid, t);

    if (rc == KEEL_OK)
        add_invals(&cat_defs[id], r, ct, vals);
    return rc;
}

int catalog_update(catalog *c, catalog_txn *ct, catalog_id id, tid t,
                   const keel_value *vals)
{
    cat_rel *r = &c->rels[id];
    heap_row old = {0};
    heap_update_hold hold;
    tid nt;
    int rc = heap_row_init(&old, &r->heap, &ct->bs->err);

    /* The old version's keys are named too: a cache may hold the row
     * under keys the new version no longer has. */
    if (rc == KEEL_OK)
        rc = heap_fetch(&r->heap, ct->bs, &ct->vis, t, &old);
    /* Both pages pinned until the entries are in: an undo reads nothing. */
    if (rc == KEEL_OK)
        rc = heap_update_held(&r->heap, ct->bs, &ct->vis, ct->xid, old.tid,
                              vals, false, &nt, &hold);
    if (rc == KEEL_OK) {
        rc = index_row(c, ct, id, nt, vals);
        if (rc != KEEL_OK)
            heap_update_undo(ct->bs, ct->xid, &hold);
        else
            heap_update_release(ct->bs, &hold);
    }
    if (rc == KEEL_OK) {
        add_invals(&cat_defs[id], r, ct, old.values);
        add_invals(&cat_defs[id], r, ct, vals);
    }
    heap_row_free(&old);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Scans and lookups                                                  */
/* ------------------------------------------------------------------ */

void catalog_spare_free(catalog_spare *sp)
{
    assert(!sp->row_busy);
    btree_scan_end(sp->scan);
    heap_row_free(&sp->row);
    sp->scan = NULL;
}

/* A scan of index idx of relation r between b and b (or over the whole
 * index without keys), in ct's spare if it is free. */
static int spare_scan_begin(catalog_txn *ct, cat_rel *r, int idx,
                            const btree_bound *b, btree_scan **sc)
{
    if (ct->spare != NULL)
        return btree_scan_begin_spare(r->idx[idx], ct->bs, b, b,
                                      &ct->spare->scan, sc);
    return btree_scan_begin(r->idx[idx], ct->bs, b, b, sc);
}

static void spare_scan_end(catalog_txn *ct, btree_scan *sc)
{
    if (ct->spare != NULL)
        btree_scan_end_spare(sc, &ct->spare->scan);
    else
        btree_scan_end(sc);
}

int catalog_index_scan(catalog *c, catalog_txn *ct, catalog_id id, int idx,
                       const keel_value *keys, uint16_t nkeys,
                       catalog_row_fn fn, void *arg)
{
    cat_rel *r = &c->rels[id];
    btree_bound b = {keys, nkeys, true};
    btree_scan *sc = NULL;
    heap_row own = {0}, *row = &own;
    bool stop = false;
    tid t;
    int rc;

    if (ct->spare != NULL && !ct->spare->row_busy) {
        row = &ct->spare->row;
        rc = heap_row_prepare(row, &r->heap, &ct->bs->err);
        ct->spare->row_busy = rc == KEEL_OK;
    } else {
        rc = heap_row_init(row, &r->heap, &ct->bs->err);
    }
    if (rc != KEEL_OK)
        return rc;
    rc = spare_scan_begin(ct, r, idx, nkeys ? &b : NULL, &sc);
    while (rc == KEEL_OK && !stop) {
        rc = btree_scan_next(sc, &t, NULL);
        if (rc == KEEL_ENOENT) {
            rc = KEEL_OK;
            break;
        }
        if (rc != KEEL_OK)
            break;
        rc = heap_fetch(&r->heap, ct->bs, &ct->vis, t, row);
        if (rc == KEEL_ENOENT) {
            rc = KEEL_OK; /* a version this transaction does not see */
            continue;
        }
        if (rc == KEEL_OK)
            rc = fn(arg, row, &stop);
    }
    spare_scan_end(ct, sc);
    if (row == &own)
        heap_row_free(&own);
    else
        ct->spare->row_busy = false;
    return rc;
}

int catalog_key_live(catalog *c, catalog_txn *ct, catalog_id id, int idx,
                     const keel_value *keys, uint16_t nkeys, bool *live)
{
    cat_rel *r = &c->rels[id];
    btree_bound b = {keys, nkeys, true};
    btree_scan *sc = NULL;
    tid t;
    int rc = spare_scan_begin(ct, r, idx, &b, &sc);

    *live = false;
    while (rc == KEEL_OK && !*live) {
        heap_fate fate;
        rc = btree_scan_next(sc, &t, NULL);
        if (rc == KEEL_ENOENT) {
            rc = KEEL_OK;
            break;
        }
        if (rc == KEEL_OK)
            rc = heap_fetch_fate(&r->heap, ct->bs, &ct->vis, t, &fate);
        if (rc == KEEL_ENOENT) { /* the entry outlived its version */
            rc = KEEL_OK;
            continue;
        }
        if (rc == KEEL_OK)
            *live = fate == HEAP_LIVE;
    }
    spare_scan_end(ct, sc);
    return rc;
}

static void copy_name(char *dst, const keel_value *v)
{
    size_t n = v->v.s.len < KEEL_NAME_LEN - 1 ? v->v.s.len : KEEL_NAME_LEN - 1;
    n = mem_strnlen(v->v.s.ptr, n);
    memcpy(dst, v->v.s.ptr, n);
    dst[n] = '\0';
}

static keel_value val_name(const char *s)
{
    keel_value v = {.isnull = false};
    v.v.s.ptr = s;
    v.v.s.len = (uint32_t)strlen(s);
    return v;
}

static keel_value val_oid(oid_t o)
{
    keel_value v = {.isnull = false};
    v.v.oid = o;
    return v;
}

static keel_value val_i2(int16_t i)
{
    keel_value v = {.isnull = false};
    v.v.i2 = i;
    return v;
}

static keel_value val_i4(int32_t i)
{
    keel_value v = {.isnull = false};
    v.v.i4 = i;
    return v;
}

static keel_value val_f8(double d)
{
    keel_value v = {.isnull = false};
    v.v.f8 = d;
    return v;
}

static keel_value val_bool(bool b)
{
    keel_value v = {.isnull = false};
    v.v.b = b;
    return v;
}

static keel_value val_null(void)
{
    keel_value v = {.isnull = true};
    return v;
}

void catalog_namespace_values(const catalog_namespace *r, keel_value *vals)
{
    vals[0] = val_oid(r->oid);
    vals[1] = val_name(r->name);
}

void catalog_relation_values(const catalog_relation *r, keel_value *vals)
{
    vals[0] = val_oid(r->oid);
    vals[1] = val_name(r->name);
    vals[2] = val_oid(r->nsoid);
    vals[3] = val_oid(r->relnumber);
    vals[4].isnull = false;
    vals[4].v.s.ptr = &r->kind;
    vals[4].v.s.len = 1;
    vals[5] = val_i2((int16_t)r->natts);
    vals[6] = val_i4(r->pages);
    vals[7] = val_f8(r->tuples);
}

void catalog_attribute_values(const catalog_attribute *r, keel_value *vals)
{
    vals[0] = val_oid(r->relid);
    vals[1] = val_i2((int16_t)r->attnum);
    vals[2] = val_name(r->name);
    vals[3] = val_i2((int16_t)r->type);
    vals[4] = val_i2((int16_t)r->charlen);
    vals[5] = val_bool(r->notnull);
}

void catalog_index_values(const catalog_indexdef *r, char *keys_text,
                          keel_value *vals)
{
    size_t off = 0;

    keys_text[0] = '\0';
    for (uint16_t k = 0; k < r->nkeys; k++)
        off += (size_t)sprintf(keys_text + off, k ? " %u" : "%u",
                               (unsigned)r->keys[k]);
    vals[0] = val_oid(r->indexoid);
    vals[1] = val_oid(r->tableoid);
    vals[2] = val_bool(r->unique);
    vals[3] = val_bool(r->primary);
    vals[4] = val_i2((int16_t)r->nkeys);
    vals[5] = val_name(keys_text);
}

void catalog_statistic_values(const catalog_statistic *r, keel_value *vals)
{
    vals[0] = val_oid(r->relid);
    vals[1] = val_i2((int16_t)r->attnum);
    vals[2] = val_bool(r->inherited);
    vals[3] = val_f8(r->nullfrac);
    vals[4] = val_f8(r->ndistinct);
    for (int i = 0; i < CATALOG_STAT_MCVS; i++) {
        if (i < r->nmcv) {
            vals[5 + 2 * i] = val_name(r->mcv[i]);
            vals[6 + 2 * i] = val_f8(r->mcf[i]);
        } else {
            vals[5 + 2 * i] = val_null();
            vals[6 + 2 * i] = val_null();
        }
    }
}

void catalog_namespace_decode(const heap_row *row, catalog_namespace *out)
{
    out->tid = row->tid;
    out->oid = row->values[0].v.oid;
    copy_name(out->name, &row->values[1]);
}

void catalog_relation_decode(const heap_row *row, catalog_relation *out)
{
    const keel_value *v = row->values;

    out->tid = row->tid;
    out->oid = v[0].v.oid;
    copy_name(out->name, &v[1]);
    out->nsoid = v[2].v.oid;
    out->relnumber = v[3].v.oid;
    out->kind = v[4].v.s.ptr[0];
    out->natts = (uint16_t)v[5].v.i2;
    out->pages = v[6].v.i4;
    out->tuples = v[7].v.f8;
}

void catalog_attribute_decode(const heap_row *row, catalog_attribute *out)
{
    const keel_value *v = row->values;

    out->tid = row->tid;
    out->relid = v[0].v.oid;
    out->attnum = (uint16_t)v[1].v.i2;
    copy_name(out->name, &v[2]);
    out->type = (keel_type)v[3].v.i2;
    out->charlen = (uint16_t)v[4].v.i2;
    out->notnull = v[5].v.b;
}

void catalog_index_decode(const heap_row *row, catalog_indexdef *out)
{
    const keel_value *v = row->values;
    char buf[6 * BTREE_MAX_KEYS + 1];
    size_t n = v[5].v.s.len < sizeof(buf) - 1 ? v[5].v.s.len : sizeof(buf) - 1;
    char *p = buf;

    out->tid = row->tid;
    out->indexoid = v[0].v.oid;
    out->tableoid = v[1].v.oid;
    out->unique = v[2].v.b;
    out->primary = v[3].v.b;
    out->nkeys = (uint16_t)v[4].v.i2;
    if (out->nkeys > BTREE_MAX_KEYS)
        out->nkeys = BTREE_MAX_KEYS;
    memcpy(buf, v[5].v.s.ptr, n);
    buf[n] = '\0';
    for (uint16_t k = 0; k < out->nkeys; k++)
        out->keys[k] = (uint16_t)strtoul(p, &p, 10);
}

void catalog_statistic_decode(const heap_row *row, catalog_statistic *out)
{
    const keel_value *v = row->values;

    memset(out, 0, sizeof(*out));
    out->tid = row->tid;
    out->relid = v[0].v.oid;
    out->attnum = (uint16_t)v[1].v.i2;
    out->inherited = v[2].v.b;
    out->nullfrac = v[3].v.f8;
    out->ndistinct = v[4].v.f8;
    for (int i = 0; i < CATALOG_STAT_MCVS && !v[5 + 2 * i].isnull; i++) {
        size_t n = v[5 + 2 * i].v.s.len;
        if (n > KEEL_NAME_LEN - 1)
            n = KEEL_NAME_LEN - 1;
        memcpy(out->mcv[i], v[5 + 2 * i].v.s.ptr, n);
        out->mcv[i][n] = '\0';
        out->mcf[i] = v[6 + 2 * i].v.f8;
        out->nmcv++;
    }
}

/* Collectors for the scans below. */
typedef struct collect {
    void *out;
    uint32_t max;
    uint32_t n;
    bool found;
} collect;

static int first_namespace(void *arg, const heap_row *row, bool *stop)
{
    collect *c = arg;
    catalog_namespace_decode(row, c->out);
    c->found = true;
    *stop = true;
    return KEEL_OK;
}

static int first_relation(void *arg, const heap_row *row, bool *stop)
{
    collect *c = arg;

    catalog_relation_decode(row, c->out);
    c->found = true;
    *stop = true;
    return KEEL_OK;
}

int catalog_namespace_by_name(catalog *c, catalog_txn *ct, const char *name,
                              catalog_namespace *out)
{
    keel_value key = val_name(name);
    collect co = {out, 1, 0, false};
    int rc = catalog_index_scan(c, ct, CAT_NAMESPACE, 1, &key, 1,
                                first_namespace, &co);

    if (rc == KEEL_OK && !co.found)
        rc = kerr_set(&ct->bs->err, KEEL_ENOENT, "schema \"%s\" does not exist",
                      name);
    return rc;
}

int catalog_relation_by_name(catalog *c, catalog_txn *ct, const char *name,
                             oid_t nsoid, catalog_relation *out)
{
    keel_value key[2] = {val_name(name), val_oid(nsoid)};
    collect co = {out, 1, 0, false};
    int rc =
        catalog_index_scan(c, ct, CAT_CLASS, 1, key, 2, first_relation, &co);

    if (rc == KEEL_OK && !co.found)
        rc = kerr_set(&ct->bs->err, KEEL_ENOENT,
                      "relation \"%s\" does not exist", name);
    return rc;
}

int catalog_relation_by_oid(catalog *c, catalog_txn *ct, oid_t oid,
                            catalog_relation *out)
{
    keel_value key = val_oid(oid);
    collect co = {out, 1, 0, false};
    int rc =
        catalog_index_scan(c, ct, CAT_CLASS, 0, &key, 1, first_relation, &co);

    if (rc == KEEL_OK && !co.found)
        rc = kerr_set(&ct->bs->err, KEEL_ENOENT,
                      "relation with oid %u does not exist", oid);
    return rc;
}

static int any_in_namespace(void *arg, const heap_row *row, bool *stop)
{
    collect *c = arg;

    if (row->values[2].v.oid == c->max) {
        c->found = true;
        *stop = true;
    }
    return KEEL_OK;
}

int catalog_namespace_has_relations(catalog *c, catalog_txn *ct, oid_t nsoid,
                                    bool *any)
{
    collect co = {NULL, nsoid, 0, false};
    int rc =
        catalog_index_scan(c, ct, CAT_CLASS, 0, NULL, 0, any_in_namespace, &co);

    *any = co.found;
    return rc;
}

static int collect_attribute(void *arg, const heap_row *row, bool *stop)
{
    collect *c = arg;

    if (c->n < c->max)
        catalog_attribute_decode(row, (catalog_attribute *)c->out + c->n);
    c->n++;
    return KEEL_OK;
}

int catalog_attributes(catalog *c, catalog_txn *ct, oid_t relid,
                       catalog_attribute *out, uint32_t max, uint32_t *n)
{
    keel_value key = val_oid(relid);
    collect co = {out, max, 0, false};
    int rc = catalog_index_scan(c, ct, CAT_ATTRIBUTE, 0, &key, 1,
                                collect_attribute, &co);

    *n = co.n;
    return rc;
}

static int collect_index(void *arg, const heap_row *row, bool *stop)
{
    collect *c = arg;

    if (c->n < c->max)
        catalog_index_decode(row, (catalog_indexdef *)c->out + c->n);
    c->n++;
    return KEEL_OK;
}

int catalog_index_by_oid(catalog *c, catalog_txn *ct, oid_t indexoid,
                         catalog_indexdef *out)
{
    keel_value key = val_oid(indexoid);
    collect co = {out, 1, 0, false};
    int rc =
        catalog_index_scan(c, ct, CAT_INDEX, 0, &key, 1, collect_index, &co);

    if (rc == KEEL_OK && co.n == 0)
        rc = kerr_set(&ct->bs->err, KEEL_ENOENT,
                      "index with oid %u has no keel_index row", indexoid);
    return rc;
}

int catalog_indexes_of(catalog *c, catalog_txn *ct, oid_t tableoid,
                       catalog_indexdef *out, uint32_t max, uint32_t *n)
{
    keel_value key = val_oid(tableoid);
    collect co = {out, max, 0, false};
    int rc =
        catalog_index_scan(c, ct, CAT_INDEX, 1, &key, 1, collect_index, &co);

    *n = co.n;
    return rc;
}

static int collect_statistic(void *arg, const heap_row *row, bool *stop)
{
    collect *c = arg;

    if (c->n < c->max)
        catalog_statistic_decode(row, (catalog_statistic *)c->out + c->n);
    c->n++;
    return KEEL_OK;
}

int catalog_statistics_of(catalog *c, catalog_txn *ct, oid_t relid,
                          catalog_statistic *out, uint32_t max, uint32_t *n)
{
    keel_value key = val_oid(relid);
    collect co = {out, max, 0, false};
    int rc = catalog_index_scan(c, ct, CAT_STATISTIC, 0, &key, 1,
                                collect_statistic, &co);

    *n = co.n;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Bootstrap                                                          */
/* ------------------------------------------------------------------ */

static int boot_relation(catalog *c, catalog_txn *ct, oid_t oid,
                         const char *name, char kind, uint16_t natts)
{
    catalog_relation r = {.oid = oid,
                          .nsoid = NAMESPACE_CATALOG,
                          .relnumber = oid,
                          .kind = kind,
                          .natts = natts};
    keel_value vals[8];

    snprintf(r.name, sizeof(r.name), "%s", name);
    catalog_relation_values(&r, vals);
    return catalog_insert(c, ct, CAT_CLASS, vals);
}

static int boot_rows(catalog *c, catalog_txn *ct)
{
    static const catalog_namespace ns[2] = {
        {.oid = NAMESPACE_CATALOG, .name = "keel_catalog"},
        {.oid = NAMESPACE_PUBLIC, .name = "public"}};
    keel_value vals[CAT_MAX_COLS];
    char keys_text[6 * BTREE_MAX_KEYS + 1];
    int rc;

    for (int i = 0; i < 2; i++) {
        catalog_namespace_values(&ns[i], vals);
        rc = catalog_insert(c, ct, CAT_NAMESPACE, vals);
        if (rc != KEEL_OK)
            return rc;
    }
    for (int i = 0; i < CAT_COUNT; i++) {
        const cat_def *d = &cat_defs[i];
        rc = boot_relation(c, ct, d->oid, d->name, RELKIND_TABLE, d->ncols);
        for (uint16_t a = 0; rc == KEEL_OK && a < d->ncols; a++) {
            catalog_attribute at = {.relid = d->oid,
                                    .attnum = (uint16_t)(a + 1),
                                    .type = d->cols[a].type,
                                    .charlen = d->cols[a].charlen,
                                    .notnull = d->cols[a].notnull};
            snprintf(at.name, sizeof(at.name), "%s", d->cols[a].name);
            catalog_attribute_values(&at, vals);
            rc = catalog_insert(c, ct, CAT_ATTRIBUTE, vals);
        }
        for (uint16_t j = 0; rc == KEEL_OK && j < d->nidx; j++) {
            const idx_def *x = &d->idx[j];
            catalog_indexdef ix = {.indexoid = x->oid,
                                   .tableoid = d->oid,
                                   .unique = x->unique,
                                   .primary = false,
                                   .nkeys = x->nkeys};
            for (uint16_t k = 0; k < x->nkeys; k++)
                ix.keys[k] = (uint16_t)(x->keys[k] + 1);
            rc = boot_relation(c, ct, x->oid, x->name, RELKIND_INDEX, x->nkeys);
            if (rc == KEEL_OK) {
                catalog_index_values(&ix, keys_text, vals);
                rc = catalog_insert(c, ct, CAT_INDEX, vals);
            }
        }
        if (rc != KEEL_OK)
            return rc;
    }
    return KEEL_OK;
}

int catalog_bootstrap(buf_session *bs)
{
    smgr *sm = buf_pool_smgr(bs->pool);
    catalog *c = NULL;
    snapshot snap = {.xmin = XID_FIRST_NORMAL,
                     .xmax = XID_FIRST_NORMAL,
                     .own_xid = XID_INVALID};
    catalog_txn ct = {.bs = bs,
                      .vis = {.snap = &snap},
                      .xid = XID_FROZEN,
                      .inval = NULL,
                      .bootstrap = true};
    int rc;

    for (int i = 0; i < CAT_COUNT; i++) {
        const cat_def *d = &cat_defs[i];
        cat_rel tmp = {0};
        rc = smgr_create(sm, d->oid, NULL, &bs->err);
        if (rc == KEEL_OK)
            rc = make_descs(d, &tmp, &bs->err);
        for (uint16_t j = 0; rc == KEEL_OK && j < d->nidx; j++) {
            btree *bt = NULL;
            rc = btree_create(bs, d->idx[j].oid, tmp.keydesc[j],
                              d->idx[j].unique, &bt);
            btree_close(bt);
        }
        for (int j = 0; j < CAT_MAX_IDX; j++)
            tupdesc_free(tmp.keydesc[j]);
        tupdesc_free(tmp.desc);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = catalog_open(bs, &c);
    if (rc != KEEL_OK)
        return rc;
    rc = boot_rows(c, &ct);
    catalog_close(c);
    return rc;
}
