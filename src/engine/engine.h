/*
 * engine.h: the engine's shared and per-session state behind the public
 * keel_db and keel_session (include/keel/keel.h), and the helpers the
 * engine's files share.
 *
 * One keel_db holds the storage manager, buffer pool, transaction manager,
 * the open catalogs, the invalidation queue, the in-memory copy of the
 * control file (under control_lock: xid and oid reservations rewrite it)
 * and a cache of open user relation handles (under rel_lock; entries are
 * immutable once published, and live until close: oids are never reused).
 */
#ifndef KEEL_ENGINE_ENGINE_H
#define KEEL_ENGINE_ENGINE_H

#include <pthread.h>

#include "access/btree.h"
#include "access/heapam.h"
#include "catalog/catalog.h"
#include "catalog/inval.h"
#include "cache/syscache.h"
#include "engine/control.h"
#include "keel/keel.h"
#include "port/atomics.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "txn/txn.h"

/* Oids reserved per control file write. */
#define ENGINE_OID_RESERVE_CHUNK 1024
/* Messages the invalidation queue holds. */
#define ENGINE_INVAL_CAPACITY 4096
/* Most indexes per table. */
#define ENGINE_MAX_INDEXES 32
/* Index directories one session keeps (engine_index_dir()). */
#define ENGINE_SESSION_DIRS 4
/* engine_index_dir() calls a directory must go unused before another
 * index may take it over. */
#define ENGINE_DIR_IDLE 1024
/* Relation handles one session keeps at hand, without rel_lock (see
 * rel_cached() in session.c). */
#define ENGINE_SESSION_RELS 8

/* An open user relation: a table's heap or an index's B-tree. */
typedef struct engine_rel {
    oid_t oid;
    char kind;        /* RELKIND_TABLE or RELKIND_INDEX */
    tuple_desc *desc; /* table: its columns */
    heap_rel heap;    /* table */
    btree *bt;        /* index */
    /* Table: the xid of the last transaction that built an index on it
     * and committed; read by every insert and update of its rows
     * (engine_write_guard()). */
    atomic_u32 last_build;
    /* Table: set (to 1) once a transaction that dropped it committed,
     * before its locks go: whoever locks it afterwards finds it gone
     * (engine_table_lock()). */
    atomic_u32 dropped;
    struct engine_rel *next;
} engine_rel;

/*
 * What the running transactions do to one schema or table, which its
 * catalog rows show others only once committed: how many are creating
 * something in it (a relation in a schema, an index on a table), which one
 * is dropping it, and the last creator to commit (a drop whose snapshot
 * misses that commit would miss what it created too).
 */
typedef struct engine_claim_state {
    oid_t oid;
    uint32_t creators;
    keel_session *dropper;
    xid_t last_create;
} engine_claim_state;

/*
 * A change of a row the session's transaction made while a savepoint was
 * set (keel_savepoint()), to take back at a rollback to it: the version
 * it inserted, or the one it deleted or updated (claimed) and the command
 * id word that version had before.  The table cannot be dropped while
 * the transaction holds its lock, and one the transaction changed the
 * schema of since the savepoint is not taken back (savepoint.c).
 */
typedef struct engine_undo {
    engine_rel *h;
    tid t;
    uint32_t old_cid;
    bool insert;
} engine_undo;

/* A savepoint: how far the undo list, the transaction's row locks
 * and its schema changes had gone when it was set. */
typedef struct engine_savepoint {
    uint32_t nundo;
    uint32_t nrowlocks;
    uint32_t nheld, ndrops;
    uint64_t inval_adds;
    bool inval_overflow;
} engine_savepoint;

/* A claim a session's transaction holds, released when it ends. */
typedef struct engine_claim_held {
    oid_t oid;
    bool drop;
    engine_rel *built; /* a table this transaction built an index on */
} engine_claim_held;

struct keel_db {
    char *dir;
    int lock_fd;     /* holds the database's lock (control_lock) until closed */
    bool read_only;  /* opened so: nothing is written to dir */
    uint32_t found_state;       /* the control file's state at open */
    pthread_mutex_t claim_lock; /* claims..., made... */
    engine_claim_state *claims;
    uint32_t nclaims, claims_cap;
    /* Relations whose files this process created or whose drops it ran:
     * the close removes those the catalogs do not hold (engine_note_file). */
    relnumber_t *made;
    uint32_t nmade, made_cap;
    smgr *smgr;
    buf_pool *pool;
    txn_mgr *txn;
    catalog *cat;
    inval_queue *inval;
    int32_t cache_prune_min_age; /* new sessions' catalog cache options */
    uint64_t cache_memory_target;
    pthread_mutex_t control_lock; /* control, next_oid */
    control_data control;
    uint32_t next_oid;
    pthread_mutex_t rel_lock; /* rels, nsessions */
    engine_rel *rels;
    uint32_t nsessions;
    /* The write-ahead log, and the checkpointer thread that checkpoints
     * when the log says one is due (wal_checkpoint_due()). */
    wal *wal;
    pthread_mutex_t checkpoint_lock; /* one checkpoint at a time */
    pthread_t checkpointer;
    bool checkpointer_running;
    pthread_mutex_t checkpointer_lock; /* checkpointer_stop */
    pthread_cond_t checkpointer_cond;
    bool checkpointer_stop;
    /* What the open's recovery replayed. */
    uint64_t recovered_records, recovery_ns;
    /* Table locks (src/storage/README.md, "Table locks"). */
    lmgr *locks;
};

struct keel_session {
    keel_db *db;
    buf_session *bs; /* its err is the session's error */
    txn_session *ts;
    syscache *cache;        /* its catalog caches */
    catalog_txn cache_ct;   /* what the caches' misses read as */
    inval_pending inval;    /* the running transaction's messages */
    uint64_t inval_applied; /* inval.adds when last applied to cache */
    bool failed;            /* an error left the transaction half done */
    bool implicit;          /* the running transaction is the call's own */
    heap_row result;        /* keel_lookup's row, kept for the next one */
    keel_scan *scan;        /* the open scan, if any */
    btree_dir *dirs[ENGINE_SESSION_DIRS];   /* its index directories */
    uint64_t dir_used[ENGINE_SESSION_DIRS]; /* dir_clock at last use */
    uint64_t dir_clock;                     /* engine_index_dir() calls */
    /* Handles found in db->rels, looked up again without rel_lock. */
    oid_t rel_oids[ENGINE_SESSION_RELS];
    engine_rel *rel_handles[ENGINE_SESSION_RELS];
    uint32_t rel_next; /* the slot the next one takes */
    /* keel_select_column()'s last table and primary key handles. */
    engine_rel *select_heap, *select_index;
    /* The running transaction's claims (engine_claim()). */
    engine_claim_held *held;
    uint32_t nheld, held_cap;
    /* Table locks: the session's fast path and waits (on lines of their
     * own), the partitions' strong counts its fast path reads. */
    lmgr_proc *lp;
    const atomic_u32 *lock_strong;
    /* Tables the running transaction dropped, marked at its commit. */
    engine_rel **drops;
    uint32_t ndrops, drops_cap;
    /* Its savepoints, oldest first, and while there are any, its changes
     * of rows since the first (engine_undo_note()). */
    engine_savepoint *savepoints;
    uint32_t nsavepoints, savepoints_cap;
    engine_undo *undo;
    uint32_t nundo, undo_cap;
    /* Read committed (keel_set_isolation()), and the row whose change a
     * KEEL_ECHANGED reported: its table, the version to follow from and
     * the transaction that made it (heap_follow() checks it). */
    bool read_committed;
    /* keel_session_set_row_nowait(): a write meeting a running writer's
     * row fails with KEEL_EBUSY rather than waiting. */
    bool row_nowait;
    /* keel_session_set_value_text(): the text of values in messages. */
    keel_value_text_fn value_text;
    void *value_text_arg;
    bool follow_set;
    oid_t follow_table;
    tid follow_tid;
    xid_t follow_xmin;
};

/*
 * Waits for transaction xid, which changed a row the session must change,
 * to end (read committed): KEEL_OK once it has, KEEL_EDEADLOCK if the wait
 * closes a cycle, KEEL_ELOCKTIMEOUT after the session's lock timeout,
 * KEEL_EBUSY at once if it is running and the session waits for no row
 * (keel_session_set_row_nowait()); the message names the table.
 */
int engine_wait_xid(keel_session *s, xid_t xid, const char *table);

/*
 * Claims schema or table oid (table says which; name, for messages) for
 * the session's transaction until it ends: to create in it (a relation in
 * a schema, an index on a table: drop false), or to drop it.  A create
 * fails with ESERIALIZE while another transaction drops it; a drop fails
 * with ESERIALIZE while another drops it too, with EBUSY while another
 * creates in it, and with ESERIALIZE if one that did committed after vis's
 * snapshot.  ENOMEM.
 */
int engine_claim(keel_session *s, oid_t oid, bool table, const char *name,
                 bool drop, const visibility *vis);

/* Releases the session's claims as its transaction ends, with the xid it
 * committed (XID_INVALID when it aborted). */
void engine_claims_release(keel_session *s, xid_t committed);

/*
 * Marks table h (on which the session's transaction holds a claim to
 * create, engine_claim(), and a SHARE lock) as having an index built on
 * it by the transaction: if it commits, its xid becomes h's last build.
 */
void engine_build_begin(keel_session *s, engine_rel *h);

/*
 * Called after an insert or update wrote a version of table t's rows and
 * its index entries: ESERIALIZE (the statement has changed the
 * transaction, which must abort) if a transaction that built an index on
 * t committed and vis's snapshot does not see it: the index list the
 * write followed lacks that index.  (While a build runs, its SHARE lock
 * keeps writers, who hold ROW EXCLUSIVE, away.)
 */
int engine_write_guard(keel_session *s, const visibility *vis,
                       const engine_rel *h, const char *table);

/* Notes that relation rel's file is about to be created, or its relation
 * dropped: a clean close removes the file unless keel_class then holds
 * rel (an aborted create, a committed drop).  KEEL_ENOMEM (in err) if it
 * cannot: the caller then fails before the file or the drop exists, so
 * that no file outlives its relation unnoted. */
int engine_note_file(keel_db *db, relnumber_t rel, kerr *err);

/*
 * The session's directory of index bt (btree_dir_new()), for its lookups:
 * the one last used for bt, else a new one while there is room, else the
 * least recently used one if it has gone unused for ENGINE_DIR_IDLE calls
 * (it is rebuilt for bt on its first use).  NULL, and lookups start at the
 * root, when bt cannot use one (btree_dir_applies()), when every one is in
 * use (so that more indexes than directories in turn do not rebuild them
 * on every lookup), or when memory runs out.
 */
btree_dir *engine_index_dir(keel_session *s, const btree *bt);

/* A table resolved for one call: its catalog row, handle and indexes. */
typedef struct engine_table {
    catalog_relation rel;
    engine_rel *h;
    uint32_t nidx;
    catalog_indexdef idx[ENGINE_MAX_INDEXES];
    engine_rel *ih[ENGINE_MAX_INDEXES];
} engine_table;

/*
 * Brings the session's caches up to its own catalog changes: if the
 * running transaction changed catalog rows since the last call, applies
 * its whole message list (a change to a row whose key is already in the
 * list adds no message, so the list is applied again as a whole).
 * Called before every cache search the engine makes.
 */
static inline void engine_cache_sync(keel_session *s)
{
    if (s->inval.adds != s->inval_applied) {
        syscache_apply_pending(s->cache, &s->inval);
        s->inval_applied = s->inval.adds;
    }
}

/*
 * Savepoints (savepoint.c).  While the session's transaction has one,
 * each change of a row it makes is noted: engine_undo_reserve() makes
 * room for n notes before the change (ENOMEM, nothing noted), and
 * engine_undo_note() notes it once made (it cannot fail after a
 * reserve).  Both do nothing without a savepoint.  engine_savepoints_end()
 * forgets them all as the transaction ends.
 */
int engine_undo_reserve_slow(keel_session *s, uint32_t n);
void engine_undo_note_slow(keel_session *s, engine_rel *h, tid t, bool insert,
                           uint32_t old_cid);

static inline int engine_undo_reserve(keel_session *s, uint32_t n)
{
    return s->nsavepoints == 0 ? KEEL_OK : engine_undo_reserve_slow(s, n);
}

static inline void engine_undo_note(keel_session *s, engine_rel *h, tid t,
                                    bool insert, uint32_t old_cid)
{
    if (s->nsavepoints != 0)
        engine_undo_note_slow(s, h, t, insert, old_cid);
}

void engine_savepoints_end(keel_session *s);

/* engine_stmt_begin() and engine_stmt_end() past their common case. */
int engine_stmt_begin_slow(keel_session *s);
int engine_stmt_end_slow(keel_session *s, int rc, bool changed);

/* Statement bracket: clears the error; begins an implicit transaction if
 * none is running; refuses while a scan is open or in a failed
 * transaction.  Inside a running transaction that has not failed, with no
 * scan open, it only clears the error (inline). */
static inline int engine_stmt_begin(keel_session *s)
{
    if (s->scan == NULL && !s->failed && txn_in_progress(s->ts)) {
        kerr_clear(&s->bs->err);
        return KEEL_OK;
    }
    return engine_stmt_begin_slow(s);
}

/* Ends the statement with status rc: an implicit transaction is committed
 * (rc OK) or aborted; in an explicit one, `changed` with rc != OK marks
 * the transaction failed.  Returns the final status; a statement that
 * succeeded inside an explicit transaction returns at once (inline). */
static inline int engine_stmt_end(keel_session *s, int rc, bool changed)
{
    if (!s->implicit && rc == KEEL_OK)
        return KEEL_OK;
    return engine_stmt_end_slow(s, rc, changed);
}

/* A catalog_txn for the running transaction; with write, assigns the xid
 * first. */
int engine_catalog_txn(keel_session *s, bool write, catalog_txn *ct);

/*
 * engine_stmt_begin() then engine_catalog_txn(s, write, ct): the opening of
 * a call that reads or writes catalog rows.  On failure nothing is left to
 * end (a begun statement is ended with the error, unchanged) and the error
 * is returned: the caller returns it.  On success the caller ends the
 * statement with engine_stmt_end().
 */
int engine_stmt_begin_catalog(keel_session *s, bool write, catalog_txn *ct);

/*
 * For a call that writes a table it has yet to lock: KEEL_EREADONLY on a
 * read-only database, else engine_catalog_txn(s, false, ct), no xid.  The
 * caller takes the xid with engine_catalog_txn(s, true, ct) once the
 * table is locked (engine_table_open()): a lock that waited may take the
 * transaction's snapshot again only while it has no xid
 * (engine_table_settle()), and an xid taken after the snapshot is what
 * keel check relies on for an index build (src/check/README.md).
 */
int engine_catalog_txn_unlocked(keel_session *s, catalog_txn *ct);

/* engine_stmt_begin() then engine_catalog_txn_unlocked(), failing as
 * engine_stmt_begin_catalog() does. */
int engine_stmt_begin_unlocked(keel_session *s, catalog_txn *ct);

/* Checks a name: EINVAL empty/NULL, ETOOBIG over 63 bytes. */
int engine_check_name(keel_session *s, const char *what, const char *name);

/* The next user oid, reserved durably in the control file first. */
int engine_oid_next(keel_db *db, oid_t *out, kerr *err);

/* The oid of schema name, through the session's cache: ENOENT if there is
 * none, EINVAL or ETOOBIG for a bad name. */
int engine_schema_oid(keel_session *s, const char *schema, oid_t *out);

/*
 * Finds the keel_class entry of relation name: in schema, or with schema
 * NULL through the search path (keel_catalog, then public), the name
 * hashed once for both.  KEEL_OK with *e held (syscache_release()), or
 * with *e NULL when no relation has the name (no message; a name too long
 * for one finds none); KEEL_ENOENT for a schema that does not exist, or
 * another error.  name must not be NULL.  Inline: the search path is
 * keel_select_column()'s hot path.
 */
static inline int engine_relation_find(keel_session *s, const char *schema,
                                       const char *name, catcache_entry **e)
{
    oid_t nsoid = NAMESPACE_PUBLIC;
    syscache_name key;
    int rc;

    syscache_name_init(&key, name);
    if (schema == NULL) {
        rc = syscache_search2_name(s->cache, CACHE_CLASS_NAME, &key,
                                   NAMESPACE_CATALOG, e);
        if (rc != KEEL_ENOENT)
            return rc;
    } else {
        rc = engine_schema_oid(s, schema, &nsoid);
        if (rc != KEEL_OK) {
            *e = NULL;
            return rc;
        }
    }
    rc = syscache_search2_name(s->cache, CACHE_CLASS_NAME, &key, nsoid, e);
    return rc == KEEL_ENOENT ? KEEL_OK : rc;
}

/*
 * The handle of table rel (built from its attributes on first use: ct
 * NULL takes the running transaction's view).  Handles live until the
 * database closes.
 */
int engine_table_handle(keel_session *s, catalog_txn *ct,
                        const catalog_relation *rel, engine_rel **out);

/*
 * Resolves schema.name (a table) with its indexes (ENOENT), locking it in
 * mode first (engine_table_lock(), engine_table_settle()): the catalog
 * entry is trusted only once the lock is held.  Mode 0 takes no lock (the
 * caller takes it, as keel_lock_table()'s NOWAIT does).  A system catalog
 * is one only for reading (read true); else EINVAL.
 */
int engine_table_open(keel_session *s, catalog_txn *ct, const char *schema,
                      const char *name, bool read, keel_lock_mode mode,
                      engine_table *t);

/* The error of a lock request rc (ELOCKTIMEOUT, EDEADLOCK, ENOMEM) on
 * table schema.name, with its message; nowait for the message. */
int engine_lock_error(keel_session *s, int rc, keel_lock_mode mode,
                      bool nowait, const char *schema, const char *name);

/* Results past every keel_status: engine_table_lock()'s for a table
 * whose drop committed, engine_table_settle()'s when the caller must
 * resolve the name again. */
#define ENGINE_DROPPED 1001
#define ENGINE_AGAIN   1002

/*
 * Locks table h in mode for the running transaction, waiting up to the
 * session's lock timeout: KEEL_OK if the catalog entry that named it can
 * be trusted, the lock having come without a wait and no drop of the
 * table having committed (inline: lmgr_acquire()'s fast path and one
 * load).  Anything else (LMGR_WAITED, ENGINE_DROPPED, an error) the caller
 * hands to engine_table_settle(), off its common path.
 */
static inline int engine_table_lock(keel_session *s, const engine_rel *h,
                                    keel_lock_mode mode)
{
    int rc = lmgr_acquire(s->lp, s->lock_strong, h->oid, mode, false);

    if (__builtin_expect(rc == KEEL_OK, 1))
        return atomic_load_acquire(&h->dropped) == 0 ? KEEL_OK
                                                     : ENGINE_DROPPED;
    return rc;
}

/*
 * What engine_table_lock()'s result rc (not KEEL_OK) on table h
 * (schema.name, for messages) means.  A lock not granted: its error
 * (engine_lock_error()).  A wait, or a drop that committed: with
 * may_refresh, if this lock is the transaction's only one and it has
 * changed no catalog row and has no xid yet, its snapshot and catalog
 * caches are taken again (as if it began now) and ENGINE_AGAIN tells the
 * caller to resolve the name once more.  ENGINE_REFRESH_AGAIN as
 * may_refresh says the same of a caller resolving the name again after
 * that, whose every lock was taken while resolving it (locks on tables
 * found dropped, which nothing was read under): a name whose table is
 * dropped and made again while it waits, more than once, is followed to
 * the table it names now.  Else a dropped table is KEEL_ENOENT, and a
 * wait alone KEEL_OK (the snapshot stays: later checks refuse what it
 * misses).
 */
/* How many times a name is resolved again after waits at most. */
#define ENGINE_RESOLVE_ROUNDS 1000
#define ENGINE_REFRESH_ONCE  1
#define ENGINE_REFRESH_AGAIN 2
int engine_table_settle(keel_session *s, const engine_rel *h,
                        keel_lock_mode mode, int rc, int may_refresh,
                        const char *schema, const char *name)
    __attribute__((cold));

/* The handle of index idxdef (opened on first use).  ECORRUPT if oid is
 * a table's (engine_table_handle() likewise for an index's). */
int engine_index_handle(keel_session *s, oid_t oid, engine_rel **out);

/*
 * Whether index (keel_index row ix) fits table (oid tableoid): the row
 * names the table, and its key columns are columns of the table with the
 * types that the index's meta page gives its keys.  Rows' values become
 * the index's keys through them, so a damaged keel_index row or meta page
 * is refused (ECORRUPT) before it is used.
 */
int engine_index_fits(keel_session *s, const engine_rel *table, oid_t tableoid,
                      const engine_rel *index, const catalog_indexdef *ix);

/*
 * The body of keel_create_table() inside a running statement (ct from
 * engine_catalog_txn(s, true, ...)): checks the arguments, creates the
 * table's file and writes its keel_class, keel_attribute and (with npkey
 * > 0) its primary key's keel_class and keel_index rows.  With create_pkey
 * the primary key's B-tree is created empty; without, only its oid is
 * reserved and the caller must build the index in relation *pkey_oid
 * before the statement ends.  *table_oid and *pkey_oid (0 without a
 * primary key) are set on success; *changed tells whether a catalog row
 * was written (for engine_stmt_end()).
 */
int engine_create_table(keel_session *s, catalog_txn *ct, const char *schema,
                        const char *name, const keel_column *cols,
                        uint16_t ncols, const uint16_t *pkey, uint16_t npkey,
                        bool create_pkey, oid_t *table_oid, oid_t *pkey_oid,
                        bool *changed);

/* Ends what the session's open scan holds, if it has one, leaving the
 * handle for keel_scan_end() to free (keel_abort, keel_session_end). */
void engine_scan_orphan(keel_session *s);

/* Whether the session's open scan runs in a transaction of its own. */
bool engine_scan_implicit(const keel_session *s);

/* Checks what tuple_size() cannot: values given, bools, names with NUL
 * bytes. */
int engine_check_values(keel_session *s, const tuple_desc *d,
                        const keel_value *vals);

/*
 * Grows arr, a malloc'd array of *cap elements of size bytes, to twice as
 * many elements (first_cap when *cap is 0).  Returns the new array with
 * *cap updated, or NULL if memory is exhausted or the size would overflow:
 * arr and *cap are then unchanged and arr is still the caller's to free.
 */
void *engine_array_grow(void *arr, size_t *cap, size_t first_cap, size_t size);

/*
 * Copies v, a value of attribute a, into *out; the bytes of a non-null
 * string go into a malloc'd buffer of the copy's own (NUL-terminated),
 * freed by engine_value_free().  Returns KEEL_OK, or KEEL_ENOMEM with no
 * message set and *out unchanged.
 */
int engine_value_copy(const tuple_attr *a, const keel_value *v,
                      keel_value *out);

/* Frees the string bytes engine_value_copy() allocated for v, a value of
 * attribute a (nothing for a null or non-string value). */
void engine_value_free(const tuple_attr *a, const keel_value *v);

/* The key of index ix taken from a row's values. */
void engine_index_key(const catalog_indexdef *ix, const keel_value *row,
                      keel_value *keys);

#endif /* KEEL_ENGINE_ENGINE_H */
