/*
 * dbinfo.c: listing a database's relations from keel_namespace,
 * keel_class and keel_index, read by sequential scans of their heaps so
 * that a damaged catalog index does not hide anything.
 */
#include "check/dbinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

const char *dbinfo_kind_name(char kind)
{
    switch (kind) {
    case RELKIND_TABLE:
        return "table";
    case RELKIND_INDEX:
        return "index";
    case DBINFO_KIND_CLOG:
        return "clog";
    default:
        return "?";
    }
}

typedef struct rel_list {
    dbinfo_rel *r;
    size_t n, cap;
    catalog_namespace *ns;
    size_t nns, capns;
    uint64_t *skipped; /* rows left out, or NULL: a damaged row fails */
} rel_list;

static dbinfo_rel *list_add(rel_list *l)
{
    if (l->n == l->cap) {
        dbinfo_rel *nr = engine_array_grow(l->r, &l->cap, 64, sizeof(*nr));
        if (nr == NULL)
            return NULL;
        l->r = nr;
    }
    memset(&l->r[l->n], 0, sizeof(l->r[0]));
    return &l->r[l->n++];
}

/* Calls fn for every row of catalog id that ct sees (but those that do
 * not decode, if l counts them skipped). */
static int scan_catalog(keel_session *s, catalog_txn *ct, catalog_id id,
                        int (*fn)(rel_list *, const heap_row *), rel_list *l)
{
    heap_rel h;
    heap_scan *sc = NULL;
    heap_row row = {0};
    bool found;
    int rc;

    static const relnumber_t relnumbers[CAT_COUNT] = {
        [CAT_NAMESPACE] = CATALOG_NAMESPACE_OID,
        [CAT_CLASS] = CATALOG_CLASS_OID,
        [CAT_ATTRIBUTE] = CATALOG_ATTRIBUTE_OID,
        [CAT_INDEX] = CATALOG_INDEX_OID,
        [CAT_STATISTIC] = CATALOG_STATISTIC_OID,
    };

    heap_rel_init(&h, relnumbers[id], catalog_desc(s->db->cat, id));
    rc = heap_row_init(&row, &h, &s->bs->err);
    if (rc == KEEL_OK)
        rc = heap_scan_begin(&h, s->bs, &ct->vis, &sc);
    while (rc == KEEL_OK) {
        rc = heap_scan_next(sc, &row, &found);
        if (rc == KEEL_ECORRUPT && l->skipped != NULL && heap_scan_skip(sc)) {
            (*l->skipped)++;
            kerr_clear(&s->bs->err);
            rc = KEEL_OK;
            continue;
        }
        if (rc != KEEL_OK || !found)
            break;
        rc = fn(l, &row);
        if (rc != KEEL_OK)
            kerr_set(&s->bs->err, rc, "out of memory");
    }
    heap_scan_end(sc);
    heap_row_free(&row);
    return rc;
}

static int take_namespace(rel_list *l, const heap_row *row)
{
    catalog_namespace *ns;

    if (l->nns == l->capns) {
        catalog_namespace *nn =
            engine_array_grow(l->ns, &l->capns, 16, sizeof(*nn));
        if (nn == NULL)
            return KEEL_ENOMEM;
        l->ns = nn;
    }
    ns = &l->ns[l->nns++];
    memset(ns, 0, sizeof(*ns));
    ns->oid = row->values[0].v.oid;
    snprintf(ns->name, sizeof(ns->name), "%.*s", (int)row->values[1].v.s.len,
             row->values[1].v.s.ptr);
    return KEEL_OK;
}

static int take_class(rel_list *l, const heap_row *row)
{
    catalog_relation cr;
    dbinfo_rel *r = list_add(l);

    if (r == NULL)
        return KEEL_ENOMEM;
    catalog_relation_decode(row, &cr);
    snprintf(r->name, sizeof(r->name), "%s", cr.name);
    snprintf(r->schema, sizeof(r->schema), "%u", cr.nsoid); /* named later */
    r->kind = cr.kind;
    r->oid = cr.oid;
    r->relnumber = cr.relnumber;
    r->natts = cr.natts;
    return KEEL_OK;
}

static int take_index(rel_list *l, const heap_row *row)
{
    catalog_indexdef ix;

    catalog_index_decode(row, &ix);
    for (size_t i = 0; i < l->n; i++)
        if (l->r[i].oid == ix.indexoid) {
            l->r[i].table = ix.tableoid;
            l->r[i].unique = ix.unique;
            l->r[i].built = row->xmin;
        }
    return KEEL_OK;
}

static int by_relnumber(const void *a, const void *b)
{
    const dbinfo_rel *x = a, *y = b;
    return (x->relnumber > y->relnumber) - (x->relnumber < y->relnumber);
}

int dbinfo_relations(keel_session *s, dbinfo_rel **out, size_t *n,
                     uint64_t *skipped)
{
    rel_list l = {.skipped = skipped};
    catalog_txn ct;
    dbinfo_rel *log;
    int rc = engine_stmt_begin(s);

    *out = NULL;
    *n = 0;
    if (skipped != NULL)
        *skipped = 0;
    if (rc != KEEL_OK)
        return rc;
    log = list_add(&l);
    if (log == NULL) {
        rc = kerr_set(&s->bs->err, KEEL_ENOMEM, "out of memory");
    } else {
        snprintf(log->schema, sizeof(log->schema), "keel_catalog");
        snprintf(log->name, sizeof(log->name), "keel_clog");
        log->kind = DBINFO_KIND_CLOG;
        log->oid = log->relnumber = CATALOG_CLOG_REL;
    }
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, false, &ct);
    if (rc == KEEL_OK)
        rc = scan_catalog(s, &ct, CAT_NAMESPACE, take_namespace, &l);
    if (rc == KEEL_OK)
        rc = scan_catalog(s, &ct, CAT_CLASS, take_class, &l);
    if (rc == KEEL_OK)
        rc = scan_catalog(s, &ct, CAT_INDEX, take_index, &l);
    rc = engine_stmt_end(s, rc, false);
    for (size_t i = 1; rc == KEEL_OK && i < l.n; i++) {
        uint32_t nsoid = (uint32_t)strtoul(l.r[i].schema, NULL, 10);
        l.r[i].no_schema = true;
        for (size_t j = 0; j < l.nns && l.r[i].no_schema; j++)
            if (l.ns[j].oid == nsoid) {
                snprintf(l.r[i].schema, sizeof(l.r[i].schema), "%s",
                         l.ns[j].name);
                l.r[i].no_schema = false;
            }
    }
    for (size_t i = 0; rc == KEEL_OK && i < l.n; i++) {
        smgr_rel *sr;
        kerr e;
        kerr_clear(&e);
        if (smgr_rel_open(s->db->smgr, l.r[i].relnumber, &sr, &e) == KEEL_OK) {
            l.r[i].blocks = smgr_nblocks(sr);
        } else if (e.code == KEEL_ENOENT) {
            l.r[i].missing = true;
        } else {
            l.r[i].unreadable = true;
            snprintf(l.r[i].why, sizeof(l.r[i].why), "%s", e.msg);
        }
    }
    free(l.ns);
    if (rc != KEEL_OK) {
        free(l.r);
        return rc;
    }
    qsort(l.r, l.n, sizeof(*l.r), by_relnumber);
    *out = l.r;
    *n = l.n;
    return KEEL_OK;
}
