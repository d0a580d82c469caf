/*
 * catalog.h: the system catalogs: what tables, indexes and schemas exist.
 *
 * Five catalogs, each a heap relation with B-tree indexes, created by
 * catalog_bootstrap() when a database is created (rows frozen) and
 * changed afterwards by DDL as ordinary transactional rows:
 *
 *   keel_namespace (oid, name)                  idx: oid; name
 *   keel_class     (oid, name, namespace, relnumber, kind, natts, pages,
 *                   tuples)                     idx: oid; (name, namespace)
 *   keel_attribute (relid, attnum, name, type, charlen, notnull)
 *                                               idx: (relid, attnum);
 *                                                    (relid, name)
 *   keel_index     (indexrelid, indrelid, unique, primary, nkeys, keys)
 *                                               idx: indexrelid; indrelid
 *   keel_statistic (relid, attnum, inherited, nullfrac, ndistinct,
 *                   mcv1, mcf1, ... mcv4, mcf4) idx: (relid, attnum,
 *                                                    inherited)
 *
 * Layout, object ids and the transaction rules are in README.md.  One
 * `catalog` per database holds the open catalog relations, shared by every
 * session (heap and B-tree handles are shareable); each call passes the
 * caller's catalog_txn: its buffer session, its visibility and, for
 * changes, its xid and its list of pending invalidations.  Errors are
 * keel_status codes with the message in the buffer session
 * (buf_session_error()).
 */
#ifndef KEEL_CATALOG_CATALOG_H
#define KEEL_CATALOG_CATALOG_H

#include <stdbool.h>
#include <stdint.h>

#include "access/btree.h"
#include "access/heapam.h"
#include "catalog/inval.h"
#include "keel/keel.h"
#include "storage/bufmgr.h"
#include "txn/snapshot.h"

typedef uint32_t oid_t;

/* Fixed relation numbers (= oids) of everything the bootstrap creates. */
#define CATALOG_CLOG_REL           1 /* the commit log */
#define CATALOG_NAMESPACE_OID      10
#define CATALOG_NAMESPACE_OID_IDX  11
#define CATALOG_NAMESPACE_NAME_IDX 12
#define CATALOG_CLASS_OID          20
#define CATALOG_CLASS_OID_IDX      21
#define CATALOG_CLASS_NAME_IDX     22
#define CATALOG_ATTRIBUTE_OID      30
#define CATALOG_ATTRIBUTE_NUM_IDX  31
#define CATALOG_ATTRIBUTE_NAME_IDX 32
#define CATALOG_INDEX_OID          40
#define CATALOG_INDEX_OID_IDX      41
#define CATALOG_INDEX_TABLE_IDX    42
#define CATALOG_STATISTIC_OID      50
#define CATALOG_STATISTIC_IDX      51

/* The two built-in namespaces. */
#define NAMESPACE_CATALOG 90 /* keel_catalog: the catalogs themselves */
#define NAMESPACE_PUBLIC  91 /* public */

/* User objects get oids (and relation numbers) from here on. */
#define CATALOG_FIRST_USER_OID 16384

/* Most columns of a user table. */
#define CATALOG_MAX_COLUMNS 256

/* Most-common values kept per column by analyze. */
#define CATALOG_STAT_MCVS 4

typedef enum catalog_id {
    CAT_NAMESPACE = 0,
    CAT_CLASS,
    CAT_ATTRIBUTE,
    CAT_INDEX,
    CAT_STATISTIC,
    CAT_COUNT
} catalog_id;

/* Catalog cache ids: one per catalog index, named in invalidations. */
typedef enum catalog_cache_id {
    CACHE_NAMESPACE_OID = 0,
    CACHE_NAMESPACE_NAME,
    CACHE_CLASS_OID,
    CACHE_CLASS_NAME,
    CACHE_ATTRIBUTE_NUM,
    CACHE_ATTRIBUTE_NAME,
    CACHE_INDEX_OID,
    CACHE_INDEX_TABLE,
    CACHE_STATISTIC,
    CACHE_COUNT
} catalog_cache_id;

/* Relation kinds (keel_class.kind). */
#define RELKIND_TABLE 't'
#define RELKIND_INDEX 'i'

typedef struct catalog catalog;

/*
 * Memory a session keeps for its catalog reads, so that one (a catalog
 * cache miss, say) allocates nothing: a B-tree scan and a heap row, each
 * taken by a read while it is free (a read nested in another's callback
 * allocates its own).  Zeroed to start; catalog_spare_free() at the end.
 */
typedef struct catalog_spare {
    btree_scan *scan;
    heap_row row;
    bool row_busy;
} catalog_spare;

void catalog_spare_free(catalog_spare *sp);

/* What a catalog call acts as.  80 bytes, xid beside the flags: every
 * statement zeroes one, which a larger size makes a loop of stores. */
typedef struct catalog_txn {
    buf_session *bs;      /* the caller's; errors land in its kerr */
    visibility vis;       /* the transaction's snapshot and oracle */
    inval_pending *inval; /* messages for changed rows, or NULL */
    catalog_spare *spare; /* memory to reuse (one thread's), or NULL */
    xid_t xid;            /* writer's xid (XID_FROZEN at bootstrap) */
    bool bootstrap;       /* no unique checks against other rows */
    /* Set when a failed change could not be taken back (a row stays
     * that must not commit): the transaction must abort. */
    bool undo_failed;
} catalog_txn;

/* Decoded rows.  Each carries its tid, for deletes and updates. */
typedef struct catalog_namespace {
    tid tid;
    oid_t oid;
    char name[KEEL_NAME_LEN];
} catalog_namespace;

typedef struct catalog_relation {
    tid tid;
    oid_t oid;
    char name[KEEL_NAME_LEN];
    oid_t nsoid;
    relnumber_t relnumber;
    char kind; /* RELKIND_* */
    uint16_t natts;
    int32_t pages;
    double tuples;
} catalog_relation;

typedef struct catalog_attribute {
    tid tid;
    oid_t relid;
    uint16_t attnum; /* 1-based */
    char name[KEEL_NAME_LEN];
    keel_type type;
    uint16_t charlen; /* n of char(n), else 0 */
    bool notnull;
} catalog_attribute;

typedef struct catalog_indexdef {
    tid tid;
    oid_t indexoid;
    oid_t tableoid;
    bool unique;
    bool primary;
    uint16_t nkeys;
    uint16_t keys[BTREE_MAX_KEYS]; /* table column numbers, 1-based */
} catalog_indexdef;

typedef struct catalog_statistic {
    tid tid;
    oid_t relid;
    uint16_t attnum;
    bool inherited;
    double nullfrac;
    double ndistinct;
    uint16_t nmcv;
    char mcv[CATALOG_STAT_MCVS][KEEL_NAME_LEN]; /* values as text, cut */
    double mcf[CATALOG_STAT_MCVS];
} catalog_statistic;

/*
 * Creates the catalogs' relation files and writes their rows (frozen):
 * the two namespaces, a keel_class row for every catalog and catalog
 * index, their attributes and keel_index rows.  The pool's storage must
 * be the new database's directory.  Errors of smgr/btree/heap.
 */
int catalog_bootstrap(buf_session *bs);

/* Opens the catalogs of an existing database (ENOENT/ECORRUPT if missing
 * or damaged, ENOMEM).  Free with catalog_close(). */
int catalog_open(buf_session *bs, catalog **out);
void catalog_close(catalog *c);

/* The descriptor of a catalog's rows. */
const tuple_desc *catalog_desc(const catalog *c, catalog_id id);

/* Hash of a cache key (the key columns of the catalog index). */
uint32_t catalog_key_hash(const tuple_desc *keydesc, const keel_value *keys);

/*
 * Inserts a row into catalog id and its indexes, as ct->xid, recording an
 * invalidation per index.  EUNIQUE (mapped by callers to EEXIST) if a
 * unique index already holds a live equal key; then the heap row is deleted
 * again (invisible to everyone) and no index entry remains.  If an index
 * fails otherwise, the same.  The row's page stays pinned until its
 * entries are in, so that delete reads nothing and cannot fail for want
 * of a buffer or an I/O error; should it fail all the same, the row stays,
 * live for the transaction and lacking index entries, and ct->undo_failed
 * is set: the transaction must abort.
 */
int catalog_insert(catalog *c, catalog_txn *ct, catalog_id id,
                   const keel_value *vals);

/* Deletes the row version at t (values vals, for the invalidations).
 * Errors of heap_delete (ESERIALIZE when another transaction changed it). */
int catalog_delete(catalog *c, catalog_txn *ct, catalog_id id, tid t,
                   const keel_value *vals);

/* Replaces the row version at t (visible to ct) by vals (same keys or not:
 * the new version is indexed anew; invalidations name the old keys and
 * the new).  If an index fails, the update is taken back
 * (heap_update_undo(): both versions' pages stay pinned until the entries
 * are in, so that reads nothing) and nothing has changed. */
int catalog_update(catalog *c, catalog_txn *ct, catalog_id id, tid t,
                   const keel_value *vals);

/*
 * Whether some version of catalog id, visible or not, whose first nkeys
 * (at least 1) key columns in index idx equal keys is live by heap_tuple_fate()
 * (its inserter committed or runs, and no deleter committed): a row another
 * transaction updated since ct's snapshot has a live version still, one
 * dropped has none.
 */
int catalog_key_live(catalog *c, catalog_txn *ct, catalog_id id, int idx,
                     const keel_value *keys, uint16_t nkeys, bool *live);

/* Receives one visible row of an index scan; set *stop to end it. */
typedef int (*catalog_row_fn)(void *arg, const heap_row *row, bool *stop);

/*
 * Calls fn for every row visible to ct->vis whose first nkeys key columns
 * in index idx (0 or 1) of catalog id equal keys, in key order.
 */
int catalog_index_scan(catalog *c, catalog_txn *ct, catalog_id id, int idx,
                       const keel_value *keys, uint16_t nkeys,
                       catalog_row_fn fn, void *arg);

/* Lookups through the indexes: ENOENT (message naming the object). */
int catalog_namespace_by_name(catalog *c, catalog_txn *ct, const char *name,
                              catalog_namespace *out);
int catalog_relation_by_name(catalog *c, catalog_txn *ct, const char *name,
                             oid_t nsoid, catalog_relation *out);
int catalog_relation_by_oid(catalog *c, catalog_txn *ct, oid_t oid,
                            catalog_relation *out);

/* True (in *any) if some relation visible to ct lives in namespace nsoid. */
int catalog_namespace_has_relations(catalog *c, catalog_txn *ct, oid_t nsoid,
                                    bool *any);

/* The attributes of relation relid in attnum order: up to max in out, the
 * count in *n. */
int catalog_attributes(catalog *c, catalog_txn *ct, oid_t relid,
                       catalog_attribute *out, uint32_t max, uint32_t *n);

/* The keel_index row of index indexoid (ENOENT if it has none). */
int catalog_index_by_oid(catalog *c, catalog_txn *ct, oid_t indexoid,
                         catalog_indexdef *out);

/* The indexes of table tableoid (up to max, the count in *n). */
int catalog_indexes_of(catalog *c, catalog_txn *ct, oid_t tableoid,
                       catalog_indexdef *out, uint32_t max, uint32_t *n);

/* The statistics rows of relation relid (up to max, count in *n). */
int catalog_statistics_of(catalog *c, catalog_txn *ct, oid_t relid,
                          catalog_statistic *out, uint32_t max, uint32_t *n);

/* Row builders: fill vals (the catalog's natts values; strings point into
 * the struct) from a decoded row. */
void catalog_namespace_values(const catalog_namespace *r, keel_value *vals);
void catalog_relation_values(const catalog_relation *r, keel_value *vals);
void catalog_attribute_values(const catalog_attribute *r, keel_value *vals);
/* keys_text: room for the index's key list as text (>= 6 * nkeys bytes). */
void catalog_index_values(const catalog_indexdef *r, char *keys_text,
                          keel_value *vals);
void catalog_statistic_values(const catalog_statistic *r, keel_value *vals);

/* Decoders of heap rows into the structs. */
void catalog_namespace_decode(const heap_row *row, catalog_namespace *out);
void catalog_relation_decode(const heap_row *row, catalog_relation *out);
void catalog_attribute_decode(const heap_row *row, catalog_attribute *out);
void catalog_index_decode(const heap_row *row, catalog_indexdef *out);
void catalog_statistic_decode(const heap_row *row, catalog_statistic *out);

/*
 * A btree_is_live_fn for unique indexes over a heap relation
 * (heap_fetch_fate()): the row at a tid may be live unless it was inserted
 * by a transaction that aborted (dead), or deleted by one that committed
 * (dead) or by the caller itself (gone), or there is no row there (gone).
 * A row inserted by another transaction still running counts as live (its
 * key is taken: keel reports the conflict rather than waiting), and so
 * does one whose header cannot be read.
 */
typedef struct catalog_live_ctx {
    heap_rel *rel;
    buf_session *bs;
    const visibility *vis; /* the caller's (own xid and oracle) */
    struct txn_mgr *txn;   /* catalog_row_removable()'s horizon, */
    xid_t horizon;         /* the last it was given (XID_INVALID first) */
    /* Set by catalog_row_is_live() when the row it last called live has
     * an inserter or deleter still running (heap_fetch_running()). */
    xid_t running;
} catalog_live_ctx;

btree_row catalog_row_is_live(void *ctx, tid t);

/*
 * A btree_removable_fn over the same context (heap_fetch_dead()): the row
 * at t can be seen by no snapshot now or later, its inserter having
 * aborted or its deleter committed below the horizon
 * (txn_horizon_recent() of txn, asked only when the last one it gave is
 * not enough; txn NULL: only the first qualifies).  An error answers
 * false.
 */
bool catalog_row_removable(void *ctx, tid t);

#endif /* KEEL_CATALOG_CATALOG_H */
