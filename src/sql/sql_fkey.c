/*
 * sql_fkey.c: FOREIGN KEY constraints.
 *
 * The SQL layer keeps each foreign key as a row of keel_sql.keel_fkey
 * (conrelid, conname, oid, confrelid, conkey and confkey as column
 * numbers in text, the update and delete actions and the match type as
 * pg_constraint's letters; primary key (conrelid, conname)), written
 * through the engine's API like keel_check's: transactional, logged.
 *
 * They run as PostgreSQL's RI triggers run: a statement that writes rows
 * queues, per row, what each foreign key from or to its table asks, and
 * when its own writes are done (the queue's statement's tag held back
 * until then) runs each as a statement of its own, which sees them:
 *
 *   - a row whose key refers to another table (inserted, or updated to a
 *     new key without nulls; MATCH FULL refuses a key that is partly
 *     null) looks its key up there and locks the row it finds, by
 *     SELECT ... FOR KEY SHARE (the engine's shared row lock: a
 *     transaction deleting the row or changing its key waits for this
 *     one, others inserting its children or updating its other columns
 *     go on beside it), or
 *     fails with 23503.  A transaction
 *     locks each parent key once: it remembers the keys it locked until
 *     it ends, forgets them at a ROLLBACK TO and when it deletes or
 *     rekeys a row of a table that others refer to.
 *   - a row whose key others refer to (deleted, or updated to a new key)
 *     runs its ON DELETE or ON UPDATE action on the rows that referred to
 *     its old key: NO ACTION (unless a row with the old key is there
 *     again) and RESTRICT fail with 23503 if there is one; CASCADE
 *     deletes them or gives them the new key; SET NULL and SET DEFAULT
 *     update them.  Those statements queue their own checks and actions,
 *     so that chains of CASCADE run to their end.  Under read committed
 *     the checks take a new snapshot first, as PostgreSQL's RI queries
 *     see the latest committed rows.
 *
 * A session reads every foreign key once into a cache and keeps it while
 * no transaction commits a change to them.  Those commits count an epoch
 * process-wide and note which tables they changed; a statement knows the
 * epoch as of its snapshot (its transaction's under repeatable read).
 * When the epoch has moved by the time a statement holds its write lock
 * on a table, and a change since touched that table, the statement's
 * snapshot cannot see it: under read committed it looks again in a new
 * snapshot, otherwise 40001, as for any change it cannot see.  A commit
 * releases its locks before it bumps the epoch, so a writer that got its
 * lock in between waits for the bump (committing_wait()).  The
 * definitions take SHARE ROW EXCLUSIVE on the table referred to, so that
 * no write of it runs beside them.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "port/atomics.h"
#include "sql/sql_internal.h"

#define FK_TABLE "keel_fkey"
#define FK_RING 256
#define FK_MAX_DEPTH 64
#define FK_LOCKED_MAX 65536

/* ---- foreign-key changes, process-wide ----------------------------------- */

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ring_cond = PTHREAD_COND_INITIALIZER;
static atomic_u64 fk_epoch = 1;
/* Transactions that changed foreign keys and are committing: from just
 * before their commit releases their locks to their epoch's bump (a list
 * of their states under ring_lock, counted for a lock-free look). */
static atomic_u32 fk_committing;
static struct sql_fk_state *committing;
static uint64_t committing_waits; /* statements that waited, for tests */
void (*sql_fk_bump_pause)(void);
static struct {
    uint64_t epoch;
    uint32_t relid;
} ring[FK_RING];
static uint64_t ring_next;    /* entries written, under ring_lock */
static uint64_t ring_evicted; /* the newest epoch written over */

uint64_t sql_fk_epoch(void)
{
    return atomic_load_acquire(&fk_epoch);
}

/* Whether the transaction of st changed relid's foreign keys. */
static bool changed_has(const struct sql_fk_state *st, uint32_t relid);

/* Takes st off the committing list, under ring_lock. */
static void committing_leave(struct sql_fk_state *st);

/* st's transaction is about to commit: until its epoch's bump, a writer
 * of a table whose keys it changed waits (committing_wait()). */
static void committing_enter(struct sql_fk_state *st);

/* Records one transaction's commit of changes to relids' foreign keys,
 * and takes it off the committing list. */
static void ring_commit(const uint32_t *relids, uint32_t n,
                        struct sql_fk_state *st)
{
    uint64_t e;

    pthread_mutex_lock(&ring_lock);
    e = atomic_load_relaxed(&fk_epoch) + 1;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t slot = ring_next++ % FK_RING;
        if (ring_next > FK_RING)
            ring_evicted = ring[slot].epoch;
        ring[slot].epoch = e;
        ring[slot].relid = relids[i];
    }
    atomic_store_release(&fk_epoch, e);
    committing_leave(st);
    pthread_mutex_unlock(&ring_lock);
}

/* Whether a change committed after epoch `since` touched relid (true
 * when that can no longer be told). */
static bool ring_touched(uint64_t since, uint32_t relid)
{
    bool hit;
    uint64_t n;

    pthread_mutex_lock(&ring_lock);
    hit = ring_evicted > since;
    n = ring_next < FK_RING ? ring_next : FK_RING;
    for (uint64_t i = 0; !hit && i < n; i++)
        hit = ring[i].epoch > since && ring[i].relid == relid;
    pthread_mutex_unlock(&ring_lock);
    return hit;
}

/* ---- a session's state ---------------------------------------------------- */

enum { Q_CHECK, Q_PRESENT, Q_REFS, Q_DELETE, Q_SETNULL, Q_SETDEFAULT,
       Q_CASCADE, Q_N };

typedef struct sql_fkey {
    uint32_t oid, conrelid, confrelid;
    char *name;
    char *index; /* the parent's unique index it rests on */
    uint16_t nkeys;
    uint16_t conkey[16], confkey[16];
    char upd, del, match;
    bool deferrable, deferred; /* DEFERRABLE, INITIALLY DEFERRED */
    /* As resolved for the statement numbered `resolved`: the tables'
     * names, the columns' names and types. */
    uint64_t resolved;
    char cschema[KEEL_NAME_LEN], cname[KEEL_NAME_LEN];
    char pschema[KEEL_NAME_LEN], pname[KEEL_NAME_LEN];
    char ccol[16][KEEL_NAME_LEN], pcol[16][KEEL_NAME_LEN];
    uint32_t ctype[16], ptype[16];
    /* The parent's columns, and for each of its primary key's columns
     * the place in the key of the column it is (-1: the key is not the
     * primary key's columns, and the parent is locked by a query). */
    uint16_t pncols;
    uint16_t pnpkey;
    int8_t pkplace[16];
    keel_type pkeel[16]; /* the key's columns' engine types */
    /* Each query's text and tree, parsed once while its text stays (as
     * of statement qstmt). */
    char *qtext[Q_N];
    PgQuery__ParseResult *qtree[Q_N];
    uint64_t qstmt[Q_N];
} sql_fkey;

/* A set of texts (open addressing, hashed). */
typedef struct text_set {
    char **slot;
    char **all; /* its n keys, to free them without a scan */
    uint32_t n, cap;
} text_set;

typedef struct sql_fk_state {
    bool loaded, stale;
    uint64_t epoch;
    sql_fkey *fks;
    uint32_t n;
    /* The tables whose foreign keys the transaction changed. */
    uint32_t *changed;
    uint32_t nchanged, changed_cap;
    /* The parent keys it locked. */
    text_set locked;
    /* Its deferred checks, to run at its commit (each key once), and
     * SET CONSTRAINTS' modes: ALL's (-1 none, 0 immediate, 1 deferred),
     * then the named ones'. */
    struct fk_event *deferred, *deferred_tail;
    text_set deferred_keys;
    int8_t all_mode;
    uint32_t *mode_oid;
    bool *mode_deferred;
    uint32_t nmodes, modes_cap;
    uint32_t depth;
    uint64_t stmt_no;
    /* On the committing list (ring_lock's). */
    bool in_commit;
    struct sql_fk_state *next_committing;
} sql_fk_state;

static bool changed_has(const sql_fk_state *st, uint32_t relid)
{
    for (uint32_t i = 0; i < st->nchanged; i++)
        if (st->changed[i] == relid)
            return true;
    return false;
}

static void committing_enter(sql_fk_state *st)
{
    pthread_mutex_lock(&ring_lock);
    st->next_committing = committing;
    committing = st;
    st->in_commit = true;
    atomic_fetch_add_explicit(&fk_committing, 1, memory_order_relaxed);
    pthread_mutex_unlock(&ring_lock);
}

static void committing_leave(sql_fk_state *st)
{
    if (!st->in_commit)
        return;
    for (sql_fk_state **p = &committing; *p != NULL; p = &(*p)->next_committing)
        if (*p == st) {
            *p = st->next_committing;
            break;
        }
    st->in_commit = false;
    atomic_fetch_sub_explicit(&fk_committing, 1, memory_order_relaxed);
    pthread_cond_broadcast(&ring_cond);
}

/*
 * A writer holding its lock on relid waits for any other transaction
 * that changed relid's keys, committed (which released the lock it
 * waited for) and has not yet bumped the epoch: until then the epoch
 * would not tell the writer that its list of keys is old.  The wait is
 * as short as a commit's end: a committing transaction waits for no one.
 */
static void committing_wait(const sql_fk_state *self, uint32_t relid)
{
    bool waited = false;

    pthread_mutex_lock(&ring_lock);
    for (;;) {
        const sql_fk_state *c = committing;
        while (c != NULL && (c == self || !changed_has(c, relid)))
            c = c->next_committing;
        if (c == NULL)
            break;
        if (!waited)
            committing_waits++;
        waited = true;
        pthread_cond_wait(&ring_cond, &ring_lock);
    }
    pthread_mutex_unlock(&ring_lock);
}

uint64_t sql_fk_committing_waits(void)
{
    uint64_t n;

    pthread_mutex_lock(&ring_lock);
    n = committing_waits;
    pthread_mutex_unlock(&ring_lock);
    return n;
}

typedef struct fk_event {
    struct fk_event *next;
    sql_fkey *fk;     /* NULL while deferred: found again by fkoid */
    uint32_t fkoid;
    bool parent; /* a row referred to changed (else: a referring row) */
    bool update;
    sql_value *oldk, *newk;
} fk_event;

static sql_fk_state *state(sql_session *s)
{
    if (s->fk == NULL && (s->fk = calloc(1, sizeof(*s->fk))) != NULL)
        s->fk->all_mode = -1;
    return s->fk;
}

static void fks_free(sql_fk_state *st)
{
    for (uint32_t i = 0; i < st->n; i++) {
        free(st->fks[i].name);
        free(st->fks[i].index);
        for (int q = 0; q < Q_N; q++) {
            free(st->fks[i].qtext[q]);
            if (st->fks[i].qtree[q] != NULL)
                pg_query__parse_result__free_unpacked(st->fks[i].qtree[q], NULL);
        }
    }
    free(st->fks);
    st->fks = NULL;
    st->n = 0;
    st->loaded = false;
}

static void set_clear(text_set *t)
{
    if (t->n == 0)
        return;
    for (uint32_t i = 0; i < t->n; i++)
        free(t->all[i]);
    memset(t->slot, 0, t->cap * sizeof(*t->slot));
    t->n = 0;
}

static void set_free(text_set *t)
{
    set_clear(t);
    free(t->slot);
    free(t->all);
    t->slot = t->all = NULL;
    t->cap = 0;
}

/* Frees n keys as rows_read() gave them. */
static void rows_free(sql_fkey *all, uint32_t n)
{
    sql_fk_state tmp = {.fks = all, .n = n};

    fks_free(&tmp);
}

static void locked_clear(sql_fk_state *st)
{
    set_clear(&st->locked);
}

static void deferred_free(sql_fk_state *st)
{
    while (st->deferred != NULL) {
        struct fk_event *next = st->deferred->next;
        free(st->deferred);
        st->deferred = next;
    }
    st->deferred_tail = NULL;
    set_clear(&st->deferred_keys);
    st->all_mode = -1;
    st->nmodes = 0;
}

void sql_fk_free(sql_session *s)
{
    if (s->fk == NULL)
        return;
    if (s->fk->in_commit) {
        pthread_mutex_lock(&ring_lock);
        committing_leave(s->fk);
        pthread_mutex_unlock(&ring_lock);
    }
    fks_free(s->fk);
    deferred_free(s->fk);
    set_free(&s->fk->locked);
    set_free(&s->fk->deferred_keys);
    free(s->fk->mode_oid);
    free(s->fk->mode_deferred);
    free(s->fk->changed);
    free(s->fk);
    s->fk = NULL;
}

void sql_fk_txn_end(sql_session *s, bool committed)
{
    sql_fk_state *st = s->fk;

    if (st == NULL)
        return;
    if (st->nchanged > 0) {
        if (committed) {
            if (sql_fk_bump_pause != NULL)
                sql_fk_bump_pause();
            ring_commit(st->changed, st->nchanged, st);
        } else if (st->in_commit) {
            pthread_mutex_lock(&ring_lock);
            committing_leave(st);
            pthread_mutex_unlock(&ring_lock);
        }
        st->nchanged = 0;
        st->stale = true;
    }
    if (st->locked.n > 0)
        locked_clear(st);
    deferred_free(st);
}

void sql_fk_rollback_to(sql_session *s)
{
    sql_fk_state *st = s->fk;

    if (st == NULL)
        return;
    if (st->nchanged > 0)
        st->stale = true;
    if (st->locked.n > 0)
        locked_clear(st);
}

/* The transaction changed relid's foreign keys (or one referring to it). */
static keel_status note_changed(sql_session *s, uint32_t relid)
{
    sql_fk_state *st = state(s);

    if (st == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    st->stale = true;
    for (uint32_t i = 0; i < st->nchanged; i++)
        if (st->changed[i] == relid)
            return KEEL_OK;
    if (st->nchanged == st->changed_cap) {
        uint32_t cap = st->changed_cap ? st->changed_cap * 2 : 8;
        uint32_t *c = realloc(st->changed, cap * sizeof(*c));
        if (c == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        st->changed = c;
        st->changed_cap = cap;
    }
    st->changed[st->nchanged++] = relid;
    return KEEL_OK;
}

/* ---- the rows ------------------------------------------------------------------ */

static keel_status table_ensure(sql_session *s)
{
    static const keel_column cols[12] = {
        {.name = "conrelid", .type = KEEL_OID, .notnull = true},
        {.name = "conname", .type = KEEL_TEXT, .notnull = true},
        {.name = "oid", .type = KEEL_OID, .notnull = true},
        {.name = "confrelid", .type = KEEL_OID, .notnull = true},
        {.name = "conkey", .type = KEEL_TEXT, .notnull = true},
        {.name = "confkey", .type = KEEL_TEXT, .notnull = true},
        {.name = "confupdtype", .type = KEEL_TEXT, .notnull = true},
        {.name = "confdeltype", .type = KEEL_TEXT, .notnull = true},
        {.name = "confmatchtype", .type = KEEL_TEXT, .notnull = true},
        {.name = "condeferrable", .type = KEEL_BOOL, .notnull = true},
        {.name = "condeferred", .type = KEEL_BOOL, .notnull = true},
        {.name = "conindname", .type = KEEL_TEXT, .notnull = true},
    };
    static const uint16_t pkey[2] = {1, 2};
    keel_status rc = sql_checks_ensure(s);

    return rc == KEEL_OK ? sql_store_ensure(s, FK_TABLE, cols, 12, pkey, 2)
                         : rc;
}

keel_status sql_fkeys_ensure(sql_session *s)
{
    return table_ensure(s);
}

static void keys_text(const uint16_t *k, uint16_t n, char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    for (uint16_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%u", i ? " " : "",
                                 (unsigned)k[i]);
}

static uint16_t keys_read(const keel_value *v, uint16_t *k)
{
    char buf[160];
    uint16_t n = 0;
    char *p, *end;

    snprintf(buf, sizeof(buf), "%.*s", (int)v->v.s.len, v->v.s.ptr);
    for (p = buf; *p != '\0' && n < 16; p = end) {
        unsigned long x = strtoul(p, &end, 10);
        if (end == p)
            break;
        k[n++] = (uint16_t)x;
    }
    return n;
}

static char letter(const keel_value *v)
{
    return v->v.s.len > 0 ? v->v.s.ptr[0] : 'a';
}

static keel_status row_put(sql_session *s, const sql_fkey *f)
{
    char ck[160], pk[160], u[2] = {f->upd, 0}, d[2] = {f->del, 0},
                           m[2] = {f->match, 0};
    keel_value v[12];
    const char *txt[12] = {NULL, f->name, NULL, NULL, ck, pk, u, d, m,
                           NULL, NULL, f->index};
    keel_status rc = table_ensure(s);

    keys_text(f->conkey, f->nkeys, ck, sizeof(ck));
    keys_text(f->confkey, f->nkeys, pk, sizeof(pk));
    memset(v, 0, sizeof(v));
    v[0].v.oid = f->conrelid;
    v[2].v.oid = f->oid;
    v[3].v.oid = f->confrelid;
    v[9].v.b = f->deferrable;
    v[10].v.b = f->deferred;
    for (int i = 0; i < 12; i++)
        if (txt[i] != NULL) {
            v[i].v.s.ptr = txt[i];
            v[i].v.s.len = (uint32_t)strlen(txt[i]);
        }
    if (rc == KEEL_OK)
        rc = keel_insert(s->ks, SQL_STORE_SCHEMA, FK_TABLE, v);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

static keel_status row_delete(sql_session *s, const sql_fkey *f)
{
    keel_value key[2] = {{.v.oid = f->conrelid}, {.isnull = false}};
    keel_status rc;

    key[1].v.s.ptr = f->name;
    key[1].v.s.len = (uint32_t)strlen(f->name);
    rc = keel_delete(s->ks, SQL_STORE_SCHEMA, FK_TABLE, key);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* Every foreign key, as the transaction sees them, into *out (malloc'd,
 * names too). */
static keel_status rows_read(sql_session *s, sql_fkey **out, uint32_t *nout)
{
    keel_value row[12];
    keel_scan *sc = NULL;
    sql_fkey *r = NULL;
    uint32_t n = 0, cap = 0;
    bool found, exists = false;
    keel_status rc = sql_store_exists(s, FK_TABLE, &exists);

    *out = NULL;
    *nout = 0;
    if (rc != KEEL_OK || !exists)
        return rc;
    rc = keel_scan_begin(s->ks, SQL_STORE_SCHEMA, FK_TABLE, NULL, NULL, NULL,
                         &sc);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    while ((rc = keel_scan_next(sc, row, &found)) == KEEL_OK && found) {
        sql_fkey *f;
        if (n == cap) {
            sql_fkey *g;
            cap = cap ? cap * 2 : 8;
            g = realloc(r, cap * sizeof(*g));
            if (g == NULL) {
                rc = KEEL_ENOMEM;
                break;
            }
            r = g;
        }
        f = &r[n];
        memset(f, 0, sizeof(*f));
        f->conrelid = row[0].v.oid;
        f->oid = row[2].v.oid;
        f->confrelid = row[3].v.oid;
        f->name = malloc(row[1].v.s.len + 1u);
        if (f->name == NULL) {
            rc = KEEL_ENOMEM;
            break;
        }
        memcpy(f->name, row[1].v.s.ptr, row[1].v.s.len);
        f->name[row[1].v.s.len] = '\0';
        n++;
        f->index = malloc(row[11].v.s.len + 1u);
        if (f->index == NULL) {
            rc = KEEL_ENOMEM;
            break;
        }
        memcpy(f->index, row[11].v.s.ptr, row[11].v.s.len);
        f->index[row[11].v.s.len] = '\0';
        f->nkeys = keys_read(&row[4], f->conkey);
        if (keys_read(&row[5], f->confkey) != f->nkeys || f->nkeys == 0) {
            rc = KEEL_ECORRUPT;
            break;
        }
        f->upd = letter(&row[6]);
        f->del = letter(&row[7]);
        f->match = letter(&row[8]);
        f->deferrable = row[9].v.b;
        f->deferred = row[10].v.b;
    }
    keel_scan_end(sc);
    if (rc != KEEL_OK) {
        rows_free(r, n);
        if (rc == KEEL_ENOMEM)
            return sql_fail(s, rc, "53200", "out of memory");
        if (rc == KEEL_ECORRUPT)
            return sql_fail(s, rc, "XX001",
                            "keel_sql.keel_fkey holds a malformed row");
        return sql_fail_engine(s, rc);
    }
    *out = r;
    *nout = n;
    return KEEL_OK;
}

/* The session's cache, read again unless it is as of the statement's
 * snapshot's epoch (and not while a statement's queue points into it). */
static keel_status cache_load(sql_session *s)
{
    sql_fk_state *st = state(s);
    sql_fkey *fks;
    uint32_t n;
    keel_status rc;

    if (st == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    /* events of a statement point into it: kept while any wait */
    if (st->loaded &&
        ((!st->stale && st->epoch == s->fk_snap_epoch) || st->depth > 0 ||
         (s->fkq != NULL && (s->fkq->head != NULL || s->fkq->outer != NULL))))
        return KEEL_OK;
    rc = rows_read(s, &fks, &n);
    if (rc != KEEL_OK)
        return rc;
    fks_free(st);
    st->fks = fks;
    st->n = n;
    st->loaded = true;
    st->stale = false;
    st->epoch = s->fk_snap_epoch;
    return KEEL_OK;
}

/* ---- names ------------------------------------------------------------------ */

/* f's tables' and columns' names and types, once per statement. */
static keel_status resolve(sql_session *s, sql_fkey *f)
{
    sql_fk_state *st = s->fk;
    keel_table_info info;
    keel_column_info *cols;
    bool found = false;
    keel_status rc;

    if (f->resolved == st->stmt_no && st->stmt_no != 0)
        return KEEL_OK;
    for (int side = 0; side < 2; side++) {
        char *schema = side ? f->pschema : f->cschema;
        char *name = side ? f->pname : f->cname;
        const uint16_t *keys = side ? f->confkey : f->conkey;
        rc = sql_relation_by_oid(s, side ? f->confrelid : f->conrelid, schema,
                                 name, &found);
        if (rc != KEEL_OK)
            return rc;
        if (!found)
            return sql_fail(s, KEEL_ECORRUPT, "XX000",
                            "foreign key \"%s\" refers to relation %u, which "
                            "does not exist",
                            f->name, side ? f->confrelid : f->conrelid);
        rc = keel_table_describe(s->ks, schema, name, &info, NULL, 0);
        cols = rc == KEEL_OK
                   ? sql_alloc(&s->arena, (info.ncols + 1u) * sizeof(*cols))
                   : NULL;
        if (rc == KEEL_OK && cols == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        if (rc == KEEL_OK)
            rc = keel_table_describe(s->ks, schema, name, &info, cols,
                                     info.ncols);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        if (side) {
            /* the key the primary key's columns: locked directly */
            f->pncols = info.ncols;
            f->pnpkey = info.npkey;
            for (uint16_t j = 0; j < 16; j++)
                f->pkplace[j] = -1;
            for (uint16_t j = 0; j < info.npkey && info.npkey == f->nkeys; j++)
                for (uint16_t k = 0; k < f->nkeys; k++)
                    if (f->confkey[k] == info.pkey[j])
                        f->pkplace[j] = (int8_t)k;
        }
        for (uint16_t k = 0; k < f->nkeys; k++) {
            if (keys[k] == 0 || keys[k] > info.ncols)
                return sql_fail(s, KEEL_ECORRUPT, "XX000",
                                "foreign key \"%s\" names column %u of \"%s\", "
                                "which has %u",
                                f->name, keys[k], name, info.ncols);
            snprintf(side ? f->pcol[k] : f->ccol[k], KEEL_NAME_LEN, "%s",
                     cols[keys[k] - 1].name);
            if (side)
                f->pkeel[k] = cols[keys[k] - 1].type;
            (side ? f->ptype : f->ctype)[k] = sql_column_type(&cols[keys[k] - 1]);
        }
    }
    f->resolved = st->stmt_no;
    return KEEL_OK;
}

/* name as a quoted identifier, appended at *used. */
static void put_ident(char *buf, size_t cap, size_t *used, const char *name)
{
    if (*used < cap)
        buf[(*used)++] = '"';
    for (const char *p = name; *p != '\0' && *used + 2 < cap; p++) {
        if (*p == '"')
            buf[(*used)++] = '"';
        buf[(*used)++] = *p;
    }
    if (*used < cap)
        buf[(*used)++] = '"';
    buf[*used < cap ? *used : cap - 1] = '\0';
}

static void put(char *buf, size_t cap, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *used, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*used >= cap)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *used, cap - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used += (size_t)n;
}

/* "schema"."name" */
static void put_table(char *buf, size_t cap, size_t *used, const char *schema,
                      const char *name)
{
    put_ident(buf, cap, used, schema);
    put(buf, cap, used, ".");
    put_ident(buf, cap, used, name);
}

/* WHERE cols[0] = $first AND ... */
static void put_where(char *buf, size_t cap, size_t *used, const sql_fkey *f,
                      bool parent, int first)
{
    put(buf, cap, used, " WHERE ");
    for (uint16_t k = 0; k < f->nkeys; k++) {
        if (k > 0)
            put(buf, cap, used, " AND ");
        put_ident(buf, cap, used, parent ? f->pcol[k] : f->ccol[k]);
        put(buf, cap, used, " = $%d", first + k);
    }
}

/* Query q's text for f. */
static void query_text(const sql_fkey *f, int q, char *buf, size_t cap)
{
    size_t used = 0;

    buf[0] = '\0';
    switch (q) {
    case Q_CHECK:
    case Q_PRESENT:
        put(buf, cap, &used, "SELECT 1 FROM ");
        put_table(buf, cap, &used, f->pschema, f->pname);
        put(buf, cap, &used, " x");
        put_where(buf, cap, &used, f, true, 1);
        if (q == Q_CHECK)
            put(buf, cap, &used, " FOR KEY SHARE OF x");
        break;
    case Q_REFS:
        put(buf, cap, &used, "SELECT 1 FROM ");
        put_table(buf, cap, &used, f->cschema, f->cname);
        put(buf, cap, &used, " x");
        put_where(buf, cap, &used, f, false, 1);
        put(buf, cap, &used, " LIMIT 1");
        break;
    case Q_DELETE:
        put(buf, cap, &used, "DELETE FROM ");
        put_table(buf, cap, &used, f->cschema, f->cname);
        put_where(buf, cap, &used, f, false, 1);
        break;
    default:
        put(buf, cap, &used, "UPDATE ");
        put_table(buf, cap, &used, f->cschema, f->cname);
        put(buf, cap, &used, " SET ");
        for (uint16_t k = 0; k < f->nkeys; k++) {
            if (k > 0)
                put(buf, cap, &used, ", ");
            put_ident(buf, cap, &used, f->ccol[k]);
            if (q == Q_SETNULL)
                put(buf, cap, &used, " = NULL");
            else if (q == Q_SETDEFAULT)
                put(buf, cap, &used, " = DEFAULT");
            else
                put(buf, cap, &used, " = $%d", f->nkeys + 1 + k);
        }
        put_where(buf, cap, &used, f, false, 1);
        break;
    }
}

/* ---- running a statement of its own ------------------------------------------ */

typedef sql_quiet quiet;

static int quiet_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    (void)ctx;
    (void)cols;
    (void)n;
    return 0;
}

static int quiet_row(void *ctx, const char *const *vals, const uint32_t *lens,
                     uint16_t n)
{
    quiet *q = ctx;

    if (q->rows++ == 0) {
        size_t used = 0;
        for (uint16_t i = 0; i < n && used < sizeof(q->first); i++)
            used += (size_t)snprintf(q->first + used, sizeof(q->first) - used,
                                     "%s%.*s", i ? ", " : "",
                                     vals[i] != NULL ? (int)lens[i] : 4,
                                     vals[i] != NULL ? vals[i] : "null");
    }
    return 0;
}

static int quiet_complete(void *ctx, const char *tag)
{
    (void)ctx;
    (void)tag;
    return 0;
}

static int quiet_notice(void *ctx, const char *severity, const char *sqlstate,
                        const char *message)
{
    (void)ctx;
    (void)severity;
    (void)sqlstate;
    (void)message;
    return 0;
}

keel_status sql_run_quietly(sql_session *s, const char *text,
                               PgQuery__ParseResult **tree,
                               const sql_value *params, uint16_t nparams,
                               quiet *q)
{
    const sql_sink sink = {.ctx = q,
                           .columns = quiet_columns,
                           .row = quiet_row,
                           .complete = quiet_complete,
                           .notice = quiet_notice};
    const sql_sink *outer_sink = s->sink;
    const char *outer_text = s->text;
    const sql_value *outer_params = s->params;
    uint32_t *outer_types = s->param_types;
    uint16_t outer_n = s->nparams, outer_cap = s->param_cap;
    const int16_t *outer_rf = s->rformats;
    uint16_t outer_nrf = s->nrformats, outer_nctes = s->nctes,
             outer_limit = s->cte_limit;
    struct sql_explain *outer_explain = s->explain;
    bool outer_locmap = s->locmap_on, outer_inferring = s->inferring;
    const char *outer_clause = s->clause;
    const PgQuery__Node *stmt;
    keel_status rc = KEEL_OK;

    if (*tree == NULL) {
        rc = sql_parse_raw(s, text, tree);
        if (rc != KEEL_OK)
            return rc;
    }
    if ((*tree)->n_stmts != 1 || (*tree)->stmts[0]->stmt == NULL)
        return sql_fail(s, KEEL_EINVAL, "XX000", "bad foreign key query");
    stmt = (*tree)->stmts[0]->stmt;
    q->rows = 0;
    q->first[0] = '\0';
    s->sink = &sink;
    s->text = NULL;
    s->param_types = NULL;
    s->param_cap = 0;
    s->nparams = 0;
    s->rformats = NULL;
    s->nrformats = 0;
    s->nctes = 0;
    s->cte_limit = 0;
    s->explain = NULL;
    s->locmap_on = false;
    s->inferring = false;
    s->clause = NULL;
    rc = sql_params_grow(s, nparams);
    for (uint16_t i = 0; rc == KEEL_OK && i < nparams; i++)
        s->param_types[i] = params[i].type;
    s->params = params;
    if (rc == KEEL_OK) {
        switch (stmt->node_case) {
        case PG_QUERY__NODE__NODE_SELECT_STMT:
            rc = sql_exec_select(s, stmt->select_stmt);
            break;
        case PG_QUERY__NODE__NODE_UPDATE_STMT:
            rc = sql_exec_update(s, stmt->update_stmt);
            break;
        case PG_QUERY__NODE__NODE_DELETE_STMT:
            rc = sql_exec_delete(s, stmt->delete_stmt);
            break;
        default:
            rc = sql_fail(s, KEEL_EINVAL, "XX000", "bad foreign key query");
        }
    }
    free(s->param_types);
    s->param_types = outer_types;
    s->param_cap = outer_cap;
    s->nparams = outer_n;
    s->params = outer_params;
    s->sink = outer_sink;
    s->text = outer_text;
    s->rformats = outer_rf;
    s->nrformats = outer_nrf;
    s->nctes = outer_nctes;
    s->cte_limit = outer_limit;
    s->explain = outer_explain;
    s->locmap_on = outer_locmap;
    s->inferring = outer_inferring;
    s->clause = outer_clause;
    return rc;
}

/* f's query q with parameters. */
static keel_status run_query(sql_session *s, sql_fkey *f, int qk,
                             const sql_value *params, uint16_t nparams,
                             quiet *q)
{
    char text[4096];
    uint64_t now = s->fk->stmt_no;

    /* names are resolved once per statement: so is the text */
    if (f->qtree[qk] != NULL && now != 0 && f->qstmt[qk] == now)
        return sql_run_quietly(s, f->qtext[qk], &f->qtree[qk], params, nparams, q);
    f->qstmt[qk] = now;
    query_text(f, qk, text, sizeof(text));
    if (f->qtext[qk] == NULL || strcmp(f->qtext[qk], text) != 0) {
        free(f->qtext[qk]);
        if (f->qtree[qk] != NULL)
            pg_query__parse_result__free_unpacked(f->qtree[qk], NULL);
        f->qtree[qk] = NULL;
        f->qtext[qk] = strdup(text);
        if (f->qtext[qk] == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    return sql_run_quietly(s, f->qtext[qk], &f->qtree[qk], params, nparams, q);
}

/* ---- checks and actions ----------------------------------------------------- */

#define MATCH_FULL_DETAIL                                                     \
    "MATCH FULL does not allow mixing of null and nonnull key values."

/* 23503 for a row of `table` whose key `name` refuses, with PostgreSQL's
 * DETAIL (NULL: none). */
static keel_status fail_child(sql_session *s, const char *table,
                              const char *name, const char *detail)
{
    sql_fail(s, KEEL_EINVAL, "23503",
             "insert or update on table \"%s\" violates foreign key "
             "constraint \"%s\"",
             table, name);
    if (detail != NULL && s->err != NULL)
        snprintf(s->err->detail, sizeof(s->err->detail), "%s", detail);
    return KEEL_EINVAL;
}

/* vals[0..n) cast to types (false, no error, if one cannot be: no row
 * can then hold it), into out. */
static keel_status cast_key(sql_session *s, const sql_value *vals, uint16_t n,
                            const uint32_t *types, sql_value *out, bool *ok)
{
    *ok = true;
    for (uint16_t k = 0; k < n; k++) {
        keel_status rc;
        out[k] = vals[k];
        if (out[k].isnull || out[k].type == types[k])
            continue;
        {
            sql_error *err = s->err; /* a failure here is no error */
            s->err = NULL;
            rc = sql_value_cast(s, &out[k], types[k], -1, false, -1);
            s->err = err;
        }
        if (rc == KEEL_ENOMEM)
            return sql_fail(s, rc, "53200", "out of memory");
        if (rc != KEEL_OK) {
            *ok = false;
            return KEEL_OK;
        }
        out[k].type = types[k];
    }
    return KEEL_OK;
}

/* "Key (a, b)=(1, 2)" of names and values, into buf. */
static void key_detail(sql_session *s, char names[][KEEL_NAME_LEN],
                       const sql_value *vals, uint16_t n, char *buf,
                       size_t cap)
{
    size_t used = 0;

    put(buf, cap, &used, "Key (");
    for (uint16_t k = 0; k < n; k++)
        put(buf, cap, &used, "%s%s", k ? ", " : "", names[k]);
    put(buf, cap, &used, ")=(");
    for (uint16_t k = 0; k < n; k++) {
        const char *p = "null";
        uint32_t len = 4;
        if (!vals[k].isnull && sql_value_text(s, &vals[k], &p, &len) != KEEL_OK)
            p = "?", len = 1;
        put(buf, cap, &used, "%s%.*s", k ? ", " : "", (int)len, p);
    }
    put(buf, cap, &used, ")");
}

/* The text a parent key is remembered by once locked. */
static char *locked_key(sql_session *s, const sql_fkey *f, const sql_value *k,
                        size_t *len)
{
    char buf[1024];
    size_t used = 0;

    put(buf, sizeof(buf), &used, "%u", f->confrelid);
    for (uint16_t i = 0; i < f->nkeys; i++) {
        const char *p = "";
        uint32_t n = 0;
        if (sql_value_text(s, &k[i], &p, &n) != KEEL_OK)
            return NULL;
        put(buf, sizeof(buf), &used, "|%u:%.*s", (unsigned)f->confkey[i],
            (int)n, p);
    }
    if (used >= sizeof(buf) - 1)
        return NULL; /* too long to remember: locked each time */
    *len = used;
    return sql_strndup(&s->arena, buf, used);
}

/* Whether key is in t; with add, it is added (a set past its limit is
 * emptied first: its keys are only a shortcut). */
static bool set_has(text_set *t, const char *key, size_t len, bool add)
{
    uint64_t h;
    uint32_t i;

    if (t->cap == 0) {
        if (!add)
            return false;
        t->slot = calloc(1024, sizeof(*t->slot));
        t->all = malloc(512 * sizeof(*t->all));
        if (t->slot == NULL || t->all == NULL) {
            free(t->slot);
            free(t->all);
            t->slot = t->all = NULL;
            return false;
        }
        t->cap = 1024;
    }
    if (add && (t->n + 1) * 2 > t->cap) {
        uint32_t cap = t->cap * 2;
        char **g = cap <= FK_LOCKED_MAX * 2 ? calloc(cap, sizeof(*g)) : NULL;
        char **a = g != NULL ? realloc(t->all, cap / 2 * sizeof(*a)) : NULL;
        if (a == NULL) {
            free(g);
            set_clear(t);
        } else {
            t->all = a;
            for (uint32_t j = 0; j < t->n; j++) {
                char *e = t->all[j];
                i = (uint32_t)(XXH3_64bits(e, strlen(e)) & (cap - 1));
                while (g[i] != NULL)
                    i = (i + 1) & (cap - 1);
                g[i] = e;
            }
            free(t->slot);
            t->slot = g;
            t->cap = cap;
        }
    }
    h = XXH3_64bits(key, len);
    for (i = (uint32_t)(h & (t->cap - 1)); t->slot[i] != NULL;
         i = (i + 1) & (t->cap - 1))
        if (strcmp(t->slot[i], key) == 0)
            return true;
    if (add && (t->slot[i] = strdup(key)) != NULL)
        t->all[t->n++] = t->slot[i];
    return false;
}

/* Whether two non-null engine values of type t are the same value (as
 * the engine stores them: a key's bytes). */
static bool keel_equal(const keel_value *a, const keel_value *b, keel_type t)
{
    if (a->isnull || b->isnull)
        return false;
    switch (t) {
    case KEEL_INT2:
        return a->v.i2 == b->v.i2;
    case KEEL_INT4:
    case KEEL_DATE:
        return a->v.i4 == b->v.i4;
    case KEEL_INT8:
    case KEEL_TIMESTAMP:
    case KEEL_TIMESTAMPTZ:
        return a->v.i8 == b->v.i8;
    case KEEL_OID:
        return a->v.oid == b->v.oid;
    case KEEL_BOOL:
        return a->v.b == b->v.b;
    case KEEL_FLOAT8:
        return a->v.f8 == b->v.f8;
    default:
        return a->v.s.len == b->v.s.len &&
               (a->v.s.len == 0 ||
                memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0);
    }
}

/*
 * A parent row locked as SELECT ... FOR KEY SHARE locks it (a shared row
 * lock, keel_lock_row()), without a query, when the key is its
 * primary key:
 * pk (the parent's types, in the key's order).  *found false if no row
 * the statement sees holds it, or (read committed) the one that did was
 * deleted or given another key by a transaction that committed since.
 */
static keel_status lock_direct(sql_session *s, const sql_fkey *f,
                               const sql_value *pk, bool *found)
{
    keel_value key[16];
    keel_value *kv = sql_alloc(&s->arena, (f->pncols + 1u) * sizeof(*kv));
    keel_status rc;

    *found = false;
    if (kv == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t j = 0; j < f->pnpkey; j++)
        sql_value_to_keel(&pk[f->pkplace[j]], &key[j]);
    for (;;) {
        rc = keel_lock_row(s->ks, f->pschema, f->pname, key,
                           KEEL_ROW_KEY_SHARE);
        if (rc == KEEL_OK) {
            *found = true;
            return KEEL_OK;
        }
        if (rc == KEEL_ENOENT)
            return KEEL_OK;
        if (rc != KEEL_ECHANGED)
            return sql_fail_engine(s, rc);
        /* changed by a commit since: its newest version, if it still
         * holds the key */
        rc = keel_fetch_changed(s->ks, f->pschema, f->pname, kv, found);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        for (uint16_t j = 0; *found && j < f->pnpkey; j++)
            *found = keel_equal(&kv[f->confkey[f->pkplace[j]] - 1], &key[j],
                                f->pkeel[f->pkplace[j]]);
        if (!*found)
            return KEEL_OK;
    }
}

/* A referring row's new key: its row in the table referred to, locked.
 * At a deferred check (commit), a key no row holds any more passes. */
static keel_status check_child(sql_session *s, fk_event *e, bool deferred)
{
    sql_fkey *f = e->fk;
    sql_value pk[16];
    char *lk = NULL;
    size_t lklen = 0;
    quiet q = {0};
    bool ok;
    keel_status rc = cast_key(s, e->newk, f->nkeys, f->ptype, pk, &ok);

    if (rc != KEEL_OK)
        return rc;
    if (ok) {
        lk = locked_key(s, f, pk, &lklen);
        if (lk != NULL && set_has(&s->fk->locked, lk, lklen, false))
            return KEEL_OK;
        bool by_pk = f->pnpkey == f->nkeys;
        for (uint16_t j = 0; by_pk && j < f->pnpkey; j++)
            by_pk = f->pkplace[j] >= 0;
        if (by_pk) {
            bool found = false;
            rc = lock_direct(s, f, pk, &found);
            q.rows = found;
        } else {
            rc = run_query(s, f, Q_CHECK, pk, f->nkeys, &q);
        }
        if (rc != KEEL_OK)
            return rc;
    }
    if (q.rows == 0 && deferred) {
        rc = run_query(s, f, Q_REFS, e->newk, f->nkeys, &q);
        if (rc != KEEL_OK || q.rows == 0)
            return rc;
        q.rows = 0;
    }
    if (q.rows == 0) {
        char key[600], detail[256];
        key_detail(s, f->ccol, e->newk, f->nkeys, key, sizeof(key));
        snprintf(detail, sizeof(detail),
                 "%.150s is not present in table \"%.63s\".", key, f->pname);
        return fail_child(s, f->cname, f->name, detail);
    }
    if (lk != NULL)
        set_has(&s->fk->locked, lk, lklen, true);
    return KEEL_OK;
}

/* A referred row's old key gone: the foreign key's action. */
static keel_status act_parent(sql_session *s, fk_event *e)
{
    sql_fkey *f = e->fk;
    char action = e->update ? f->upd : f->del;
    sql_value ck[32];
    quiet q = {0};
    bool ok;
    keel_status rc;

    if (action == 'a') {
        /* NO ACTION: nothing to do if a row holds the old key again */
        rc = run_query(s, f, Q_PRESENT, e->oldk, f->nkeys, &q);
        if (rc != KEEL_OK || q.rows > 0)
            return rc;
    }
    rc = cast_key(s, e->oldk, f->nkeys, f->ctype, ck, &ok);
    if (rc != KEEL_OK || !ok)
        return rc;
    switch (action) {
    case 'c':
        if (!e->update)
            return run_query(s, f, Q_DELETE, ck, f->nkeys, &q);
        rc = cast_key(s, e->newk, f->nkeys, f->ctype, ck + f->nkeys, &ok);
        if (rc != KEEL_OK)
            return rc;
        if (!ok) {
            /* the new key fits no referring column: as PostgreSQL's
             * assignment would, it fails */
            for (uint16_t k = 0; k < f->nkeys; k++) {
                sql_value v = e->newk[k];
                if (!v.isnull && v.type != f->ctype[k] &&
                    (rc = sql_value_cast(s, &v, f->ctype[k], -1, false, -1)) !=
                        KEEL_OK)
                    return rc;
            }
        }
        return run_query(s, f, Q_CASCADE, ck, (uint16_t)(2 * f->nkeys), &q);
    case 'n':
        return run_query(s, f, Q_SETNULL, ck, f->nkeys, &q);
    case 'd':
        /* a row given a default equal to the old key still refers to
         * it, with no key change of its own to check: NO ACTION's look */
        rc = run_query(s, f, Q_SETDEFAULT, ck, f->nkeys, &q);
        if (rc != KEEL_OK)
            return rc;
        rc = run_query(s, f, Q_PRESENT, e->oldk, f->nkeys, &q);
        if (rc != KEEL_OK || q.rows > 0)
            return rc;
        break;
    default:
        break;
    }
    rc = run_query(s, f, Q_REFS, ck, f->nkeys, &q);
    if (rc != KEEL_OK || q.rows == 0)
        return rc;
    {
        char detail[600];
        key_detail(s, f->pcol, e->oldk, f->nkeys, detail, sizeof(detail));
        sql_fail(s, KEEL_EINVAL, "23503",
                 "update or delete on table \"%s\" violates foreign key "
                 "constraint \"%s\" on table \"%s\"",
                 f->pname, f->name, f->cname);
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail),
                     "%.150s is still referenced from table \"%.63s\".", detail,
                     f->cname);
    }
    return KEEL_EINVAL;
}

/* ---- the statement's queue ------------------------------------------------ */

keel_status sql_fk_stmt_begin(sql_session *s, sql_fk_queue *q)
{
    keel_status rc = KEEL_OK;

    memset(q, 0, sizeof(*q));
    q->outer = s->fkq;
    q->sink = s->sink;
    /* The cache is read now, before the statement opens a scan (no
     * other call may run beside one); names are resolved once per
     * statement. */
    if (s->fkq == NULL && !s->describe_only &&
        (s->fk == NULL || s->fk->depth == 0)) {
        rc = cache_load(s);
        if (rc == KEEL_OK)
            s->fk->stmt_no++;
    }
    s->fkq = q;
    return rc;
}

keel_status sql_fk_stmt_end(sql_session *s, sql_fk_queue *q, keel_status rc)
{
    sql_fk_state *st = s->fk;

    s->fkq = q->outer;
    if (rc == KEEL_OK && q->head != NULL && !s->describe_only &&
        st->depth >= FK_MAX_DEPTH)
        rc = sql_fail(s, KEEL_ETOOBIG, "54001", "stack depth limit exceeded");
    if (rc == KEEL_OK && q->head != NULL && !s->describe_only) {
        /* Read committed: the checks see what committed meanwhile (not
         * under a WITH, whose statement goes on reading after them). */
        if (st->depth == 0 && s->txn_rc && s->nctes == 0) {
            keel_status w = keel_new_snapshot(s->ks);
            if (w != KEEL_OK && w != KEEL_EINVAL)
                rc = sql_fail_engine(s, w);
        }
        st->depth++;
        for (fk_event *e = q->head; rc == KEEL_OK && e != NULL; e = e->next) {
            rc = resolve(s, e->fk);
            if (rc == KEEL_OK)
                rc = e->parent ? act_parent(s, e) : check_child(s, e, false);
            if (rc == KEEL_OK)
                rc = sql_check_cancel(s);
        }
        st->depth--;
    }
    while (q->head != NULL) {
        fk_event *next = q->head->next;
        free(q->head);
        q->head = next;
    }
    if (rc == KEEL_OK && q->held &&
        q->sink->complete(q->sink->ctx, q->tag) != 0)
        rc = sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return rc;
}

/* The bytes row's key values (columns keys) point to. */
static size_t key_bytes(const sql_value *row, const uint16_t *keys, uint16_t n)
{
    size_t b = 0;

    for (uint16_t i = 0; row != NULL && i < n; i++) {
        const sql_value *v = &row[keys[i] - 1];
        if (!v->isnull && sql_type_has_bytes(v->type))
            b += v->v.s.len;
    }
    return b;
}

/* Copies n key values of row (columns keys) to k, their bytes to *at. */
static void key_copy(const sql_value *row, const uint16_t *keys, uint16_t n,
                     sql_value *k, char **at)
{
    for (uint16_t i = 0; i < n; i++) {
        k[i] = row[keys[i] - 1];
        if (!k[i].isnull && sql_type_has_bytes(k[i].type)) {
            if (k[i].v.s.len > 0)
                memcpy(*at, k[i].v.s.p, k[i].v.s.len);
            k[i].v.s.p = *at;
            *at += k[i].v.s.len;
        }
    }
}

static bool keys_equal(const sql_value *a, const sql_value *b,
                       const uint16_t *keys, uint16_t n)
{
    for (uint16_t i = 0; i < n; i++) {
        const sql_value *x = &a[keys[i] - 1], *y = &b[keys[i] - 1];
        if (x->isnull != y->isnull)
            return false;
        if (!x->isnull && sql_value_compare(x, y) != 0)
            return false;
    }
    return true;
}

/* Whether f's checks wait for the commit, as the transaction has it. */
static bool deferred_now(const sql_fk_state *st, const sql_fkey *f)
{
    if (!f->deferrable)
        return false;
    for (uint32_t i = 0; i < st->nmodes; i++)
        if (st->mode_oid[i] == f->oid)
            return st->mode_deferred[i];
    return st->all_mode >= 0 ? st->all_mode == 1 : f->deferred;
}

/* An event of f for a row (malloc'd, not the arena's: COPY gives its
 * arena back per row). */
static fk_event *event_make(sql_fkey *f, bool parent, const sql_value *oldrow,
                            const sql_value *newrow)
{
    const uint16_t *keys = parent ? f->confkey : f->conkey;
    const sql_value *oldk = parent ? oldrow : NULL;
    size_t size = sizeof(fk_event) + 2u * f->nkeys * sizeof(sql_value) +
                  key_bytes(oldk, keys, f->nkeys) +
                  key_bytes(newrow, keys, f->nkeys);
    fk_event *e = malloc(size);
    char *at;

    if (e == NULL)
        return NULL;
    memset(e, 0, sizeof(*e));
    e->fk = f;
    e->fkoid = f->oid;
    e->parent = parent;
    e->update = oldrow != NULL && newrow != NULL;
    e->oldk = (sql_value *)(e + 1);
    e->newk = e->oldk + f->nkeys;
    at = (char *)(e->newk + f->nkeys);
    if (oldk != NULL)
        key_copy(oldk, keys, f->nkeys, e->oldk, &at);
    if (newrow != NULL)
        key_copy(newrow, keys, f->nkeys, e->newk, &at);
    return e;
}

static keel_status enqueue(sql_session *s, sql_fkey *f, bool parent,
                           const sql_value *oldrow, const sql_value *newrow)
{
    sql_fk_state *st = s->fk;
    fk_event *e = event_make(f, parent, oldrow, newrow);

    if (e == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (deferred_now(st, f) && (!parent || (e->update ? f->upd : f->del) == 'a')) {
        /* to the commit, once per key: which rows hold it is asked then */
        char buf[1100];
        size_t used = 0;
        const sql_value *k = parent ? e->oldk : e->newk;
        put(buf, sizeof(buf), &used, "%u%c", f->oid, parent ? 'p' : 'c');
        for (uint16_t i = 0; i < f->nkeys; i++) {
            const char *p = "";
            uint32_t n = 0;
            if (sql_value_text(s, &k[i], &p, &n) != KEEL_OK)
                break;
            put(buf, sizeof(buf), &used, "|%.*s", (int)n, p);
        }
        if (used < sizeof(buf) - 1 &&
            set_has(&st->deferred_keys, buf, used, true)) {
            free(e);
            return KEEL_OK;
        }
        e->fk = NULL;
        if (st->deferred_tail != NULL)
            st->deferred_tail->next = e;
        else
            st->deferred = e;
        st->deferred_tail = e;
        return KEEL_OK;
    }
    if (s->fkq->tail != NULL)
        s->fkq->tail->next = e;
    else
        s->fkq->head = e;
    s->fkq->tail = e;
    return KEEL_OK;
}

/* Runs the deferred checks (of foreign key oid only, unless 0). */
static keel_status run_deferred(sql_session *s, uint32_t only)
{
    sql_fk_state *st = s->fk;
    fk_event *keep = NULL, *keep_tail = NULL, *e;
    keel_status rc;

    if (st == NULL || st->deferred == NULL)
        return KEEL_OK;
    rc = cache_load(s);
    if (rc == KEEL_OK && s->txn_rc) {
        keel_status w = keel_new_snapshot(s->ks);
        if (w != KEEL_OK && w != KEEL_EINVAL)
            rc = sql_fail_engine(s, w);
    }
    st->depth++;
    while ((e = st->deferred) != NULL) {
        st->deferred = e->next;
        e->next = NULL;
        if (rc == KEEL_OK && (only == 0 || e->fkoid == only)) {
            for (uint32_t i = 0; i < st->n && e->fk == NULL; i++)
                if (st->fks[i].oid == e->fkoid)
                    e->fk = &st->fks[i];
            if (e->fk != NULL) { /* else dropped since */
                rc = resolve(s, e->fk);
                if (rc == KEEL_OK)
                    rc = e->parent ? act_parent(s, e) : check_child(s, e, true);
            }
            free(e);
            continue;
        }
        if (keep_tail != NULL)
            keep_tail->next = e;
        else
            keep = e;
        keep_tail = e;
    }
    st->depth--;
    st->deferred = keep;
    st->deferred_tail = keep_tail;
    if (only == 0 || rc != KEEL_OK)
        set_clear(&st->deferred_keys);
    return rc;
}

keel_status sql_fk_commit_checks(sql_session *s)
{
    keel_status rc = run_deferred(s, 0);

    /* the commit comes next, and its end (sql_fk_txn_end()) bumps the
     * epoch if the transaction changed keys */
    if (rc == KEEL_OK && s->fk != NULL && s->fk->nchanged > 0)
        committing_enter(s->fk);
    return rc;
}

keel_status sql_exec_set_constraints(sql_session *s,
                                     const PgQuery__ConstraintsSetStmt *cs)
{
    sql_fk_state *st = state(s);
    keel_status rc = KEEL_OK;

    if (s->describe_only)
        return KEEL_OK;
    if (st == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (s->block == SQL_BLOCK_NONE) {
        /* PostgreSQL's warning: it lasts as long as the statement */
        if (s->sink->notice != NULL &&
            s->sink->notice(s->sink->ctx, "WARNING", "25P01",
                            "SET CONSTRAINTS can only be used in transaction "
                            "blocks") != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        return sql_complete(s, "SET CONSTRAINTS");
    }
    if (cs->n_constraints == 0) {
        st->all_mode = cs->deferred ? 1 : 0;
        st->nmodes = 0;
        if (!cs->deferred)
            rc = run_deferred(s, 0);
        return rc != KEEL_OK ? rc : sql_complete(s, "SET CONSTRAINTS");
    }
    rc = cache_load(s);
    for (size_t i = 0; rc == KEEL_OK && i < cs->n_constraints; i++) {
        const PgQuery__RangeVar *rv =
            cs->constraints[i]->node_case == PG_QUERY__NODE__NODE_RANGE_VAR
                ? cs->constraints[i]->range_var
                : NULL;
        bool found = false;
        if (rv == NULL)
            return sql_unsupported(s, -1, "this SET CONSTRAINTS");
        for (uint32_t k = 0; rc == KEEL_OK && k < st->n; k++) {
            sql_fkey *f = &st->fks[k];
            uint32_t m;
            if (strcmp(f->name, rv->relname) != 0)
                continue;
            if (rv->schemaname != NULL && rv->schemaname[0] != '\0') {
                char sch[KEEL_NAME_LEN], nm[KEEL_NAME_LEN];
                bool there = false;
                rc = sql_relation_by_oid(s, f->conrelid, sch, nm, &there);
                if (rc != KEEL_OK || !there || strcmp(sch, rv->schemaname) != 0)
                    continue;
            }
            found = true;
            if (!f->deferrable)
                return sql_fail(s, KEEL_EINVAL, "55000",
                                "constraint \"%s\" is not deferrable",
                                f->name);
            for (m = 0; m < st->nmodes && st->mode_oid[m] != f->oid; m++)
                ;
            if (m == st->nmodes) {
                if (st->nmodes == st->modes_cap) {
                    uint32_t cap = st->modes_cap ? st->modes_cap * 2 : 8;
                    uint32_t *o = realloc(st->mode_oid, cap * sizeof(*o));
                    bool *d = o != NULL ? realloc(st->mode_deferred,
                                                  cap * sizeof(*d))
                                        : NULL;
                    if (o != NULL)
                        st->mode_oid = o;
                    if (d == NULL)
                        return sql_fail(s, KEEL_ENOMEM, "53200",
                                        "out of memory");
                    st->mode_deferred = d;
                    st->modes_cap = cap;
                }
                st->mode_oid[st->nmodes++] = f->oid;
            }
            st->mode_deferred[m] = cs->deferred;
            if (!cs->deferred)
                rc = run_deferred(s, f->oid);
        }
        if (rc == KEEL_OK && !found)
            rc = sql_fail(s, KEEL_ENOENT, "42704",
                          "constraint \"%s\" does not exist", rv->relname);
    }
    return rc != KEEL_OK ? rc : sql_complete(s, "SET CONSTRAINTS");
}

/* The first write of t in the statement: whether foreign keys concern
 * it, and whether one changed after the statement's snapshot. */
static keel_status table_prepare(sql_session *s, sql_table *t)
{
    sql_fk_state *st = s->fk;

    /* read as the statement began (sql_fk_stmt_begin()) */
    if (st == NULL || !st->loaded)
        return sql_fail(s, KEEL_EINVAL, "XX000",
                        "foreign keys not read before the statement");
    if (atomic_load_acquire(&fk_committing) != 0)
        committing_wait(st, t->info.oid);
    if (sql_fk_epoch() != s->fk_snap_epoch &&
        ring_touched(s->fk_snap_epoch, t->info.oid)) {
        /* A change the statement's snapshot may not see (a commit bumps
         * the epoch only once it is visible, so one seen may look new).
         * Read committed, with no scan open (keel_new_snapshot() refuses
         * one) and nothing queued yet, looks again in a new snapshot;
         * otherwise the statement cannot go on. */
        bool again = false;
        if (s->txn_rc && st->depth == 0 && s->fkq->head == NULL &&
            s->fkq->outer == NULL) {
            uint64_t e = sql_fk_epoch();
            if (keel_new_snapshot(s->ks) == KEEL_OK) {
                keel_status rc;
                s->fk_snap_epoch = e;
                st->stale = true;
                rc = cache_load(s);
                if (rc != KEEL_OK)
                    return rc;
                again = true;
            }
        }
        if (!again)
            return sql_fail(s, KEEL_ESERIALIZE, "40001",
                            "could not serialize access due to a concurrent "
                            "change of the foreign keys of \"%s\"",
                            t->name);
    }
    t->fk_state = 1;
    for (uint32_t i = 0; i < st->n; i++)
        if (st->fks[i].conrelid == t->info.oid ||
            st->fks[i].confrelid == t->info.oid)
            t->fk_state = 2;
    return KEEL_OK;
}

keel_status sql_fk_row(sql_session *s, sql_table *t, const sql_value *oldrow,
                       const sql_value *newrow)
{
    sql_fk_state *st;
    keel_status rc;

    if (t->fk_state == 1 || s->fkq == NULL)
        return KEEL_OK;
    if (t->fk_state == 0) {
        rc = table_prepare(s, t);
        if (rc != KEEL_OK || t->fk_state == 1)
            return rc;
    }
    st = s->fk;
    for (uint32_t i = 0; i < st->n; i++) {
        sql_fkey *f = &st->fks[i];
        if (f->conrelid == t->info.oid && newrow != NULL &&
            (oldrow == NULL || !keys_equal(oldrow, newrow, f->conkey, f->nkeys))) {
            uint16_t nulls = 0;
            for (uint16_t k = 0; k < f->nkeys; k++)
                nulls += newrow[f->conkey[k] - 1].isnull;
            if (nulls > 0 && nulls < f->nkeys && f->match == 'f')
                return fail_child(s, t->name, f->name, MATCH_FULL_DETAIL);
            if (nulls == 0 && (rc = enqueue(s, f, false, NULL, newrow)) != KEEL_OK)
                return rc;
        }
        if (f->confrelid == t->info.oid && oldrow != NULL &&
            (newrow == NULL || !keys_equal(oldrow, newrow, f->confkey, f->nkeys))) {
            bool anynull = false;
            for (uint16_t k = 0; k < f->nkeys; k++)
                anynull = anynull || oldrow[f->confkey[k] - 1].isnull;
            /* a row it may have locked is going: locked keys forgotten */
            if (st->locked.n > 0)
                locked_clear(st);
            if (!anynull && (rc = enqueue(s, f, true, oldrow, newrow)) != KEEL_OK)
                return rc;
        }
    }
    return KEEL_OK;
}

/* ---- definitions ---------------------------------------------------------- */

/* Types a foreign key may join: equal, or both numbers, or both text. */
static int type_class(uint32_t t)
{
    switch (t) {
    case SQL_TYPE_INT2:
    case SQL_TYPE_INT4:
    case SQL_TYPE_INT8:
    case SQL_TYPE_NUMERIC:
    case SQL_TYPE_FLOAT8:
        return 1;
    case SQL_TYPE_TEXT:
    case SQL_TYPE_VARCHAR:
    case SQL_TYPE_BPCHAR:
    case SQL_TYPE_NAME:
        return 2;
    default:
        return 0;
    }
}

/* PostgreSQL's makeObjectName(name1, name2, label): the longer of the two
 * cut until "name1_name2_label" fits 63 bytes. */
void sql_object_name(const char *n1, const char *n2, const char *label,
                     char *out, size_t cap)
{
    size_t l1 = strlen(n1), l2 = strlen(n2), over = strlen(label) + 2;

    while (l1 + l2 + over > KEEL_NAME_LEN - 1) {
        if (l1 > l2)
            l1--;
        else
            l2--;
    }
    /* never in the middle of a UTF-8 sequence */
    while (l1 > 0 && ((unsigned char)n1[l1] & 0xC0) == 0x80)
        l1--;
    while (l2 > 0 && ((unsigned char)n2[l2] & 0xC0) == 0x80)
        l2--;
    snprintf(out, cap, "%.*s_%.*s_%s", (int)l1, n1, (int)l2, n2, label);
}

typedef struct rel_desc {
    const char *schema, *name;
    keel_table_info info;
    keel_column_info *cols;
    keel_index_info *idx;
    uint16_t nidx;
} rel_desc;

static keel_status describe(sql_session *s, const char *schema,
                            const char *name, rel_desc *d)
{
    keel_status rc;

    memset(d, 0, sizeof(*d));
    d->schema = schema;
    d->name = name;
    rc = keel_table_describe(s->ks, schema, name, &d->info, NULL, 0);
    if (rc == KEEL_OK) {
        d->cols = sql_alloc(&s->arena, (d->info.ncols + 1u) * sizeof(*d->cols));
        d->idx = sql_alloc(&s->arena,
                           (d->info.nindexes + 1u) * sizeof(*d->idx));
        if (d->cols == NULL || d->idx == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = keel_table_describe(s->ks, schema, name, &d->info, d->cols,
                                 d->info.ncols);
    }
    if (rc == KEEL_OK && d->info.nindexes > 0)
        rc = keel_table_indexes(s->ks, schema, name, d->idx, d->info.nindexes,
                                &d->nidx);
    if (rc == KEEL_ENOENT)
        return sql_fail(s, rc, "42P01", "relation \"%s\" does not exist", name);
    return rc == KEEL_OK ? KEEL_OK : sql_fail_engine(s, rc);
}

/* The column named name of d (0 if none). */
static uint16_t column_of(const rel_desc *d, const char *name)
{
    for (uint16_t c = 0; name != NULL && c < d->info.ncols; c++)
        if (strcmp(d->cols[c].name, name) == 0)
            return (uint16_t)(c + 1);
    return 0;
}

/* The unique index of d whose columns are, as a set, keys[0..n): the
 * primary key if it is one, else the first (NULL if none). */
static const char *unique_matches(const rel_desc *d, const uint16_t *keys,
                                  uint16_t n)
{
    const char *found = NULL;

    for (uint16_t x = 0; x < d->nidx; x++) {
        bool all = d->idx[x].unique && d->idx[x].nkeys == n;
        for (uint16_t k = 0; all && k < n; k++) {
            bool in = false;
            for (uint16_t j = 0; j < n; j++)
                in = in || d->idx[x].keys[j] == keys[k];
            all = in;
        }
        if (all && (found == NULL || d->idx[x].primary))
            found = d->idx[x].name;
    }
    return found;
}

/* Whether table relid has a constraint called name (an index, a check or
 * a foreign key). */
static keel_status name_taken(sql_session *s, const rel_desc *d,
                              const sql_fkey *fks, uint32_t nfks,
                              const char *name, bool *taken)
{
    sql_check_row *ck;
    uint16_t nck;
    keel_status rc;

    *taken = false;
    for (uint16_t x = 0; x < d->nidx && !*taken; x++)
        *taken = strcmp(d->idx[x].name, name) == 0;
    for (uint32_t i = 0; i < nfks && !*taken; i++)
        *taken = fks[i].conrelid == d->info.oid && strcmp(fks[i].name, name) == 0;
    if (*taken)
        return KEEL_OK;
    rc = sql_checks_read(s, d->info.oid, &ck, &nck);
    for (uint16_t i = 0; rc == KEEL_OK && i < nck && !*taken; i++)
        *taken = strcmp(ck[i].name, name) == 0;
    return rc;
}

/* ALTER TABLE ... ADD's check of the rows already there. */
static keel_status validate(sql_session *s, sql_fkey *f)
{
    char text[4096];
    size_t used = 0;
    PgQuery__ParseResult *tree = NULL;
    quiet q = {0};
    keel_status rc;

    if (f->match == 'f' && f->nkeys > 1) {
        put(text, sizeof(text), &used, "SELECT 1 FROM ");
        put_table(text, sizeof(text), &used, f->cschema, f->cname);
        put(text, sizeof(text), &used, " x WHERE num_nulls(");
        for (uint16_t k = 0; k < f->nkeys; k++) {
            put(text, sizeof(text), &used, k ? ", x." : "x.");
            put_ident(text, sizeof(text), &used, f->ccol[k]);
        }
        put(text, sizeof(text), &used, ") NOT IN (0, %u) LIMIT 1", f->nkeys);
        rc = sql_run_quietly(s, text, &tree, NULL, 0, &q);
        if (tree != NULL)
            pg_query__parse_result__free_unpacked(tree, NULL);
        tree = NULL;
        if (rc != KEEL_OK)
            return rc;
        if (q.rows > 0)
            return fail_child(s, f->cname, f->name, MATCH_FULL_DETAIL);
        used = 0;
    }
    put(text, sizeof(text), &used, "SELECT ");
    for (uint16_t k = 0; k < f->nkeys; k++) {
        put(text, sizeof(text), &used, k ? ", x." : "x.");
        put_ident(text, sizeof(text), &used, f->ccol[k]);
    }
    put(text, sizeof(text), &used, " FROM ");
    put_table(text, sizeof(text), &used, f->cschema, f->cname);
    put(text, sizeof(text), &used, " x LEFT JOIN ");
    put_table(text, sizeof(text), &used, f->pschema, f->pname);
    put(text, sizeof(text), &used, " y ON ");
    for (uint16_t k = 0; k < f->nkeys; k++) {
        put(text, sizeof(text), &used, k ? " AND y." : "y.");
        put_ident(text, sizeof(text), &used, f->pcol[k]);
        put(text, sizeof(text), &used, " = x.");
        put_ident(text, sizeof(text), &used, f->ccol[k]);
    }
    put(text, sizeof(text), &used, " WHERE y.");
    put_ident(text, sizeof(text), &used, f->pcol[0]);
    put(text, sizeof(text), &used, " IS NULL");
    for (uint16_t k = 0; k < f->nkeys; k++) {
        put(text, sizeof(text), &used, " AND x.");
        put_ident(text, sizeof(text), &used, f->ccol[k]);
        put(text, sizeof(text), &used, " IS NOT NULL");
    }
    put(text, sizeof(text), &used, " LIMIT 1");
    rc = sql_run_quietly(s, text, &tree, NULL, 0, &q);
    if (tree != NULL)
        pg_query__parse_result__free_unpacked(tree, NULL);
    if (rc != KEEL_OK || q.rows == 0)
        return rc;
    {
        char names[160], detail[256];
        size_t n = 0;
        names[0] = '\0';
        for (uint16_t k = 0; k < f->nkeys; k++)
            put(names, sizeof(names), &n, "%s%s", k ? ", " : "", f->ccol[k]);
        snprintf(detail, sizeof(detail),
                 "Key (%.50s)=(%.90s) is not present in table \"%.63s\".",
                 names, q.first, f->pname);
        return fail_child(s, f->cname, f->name, detail);
    }
}

/* con's action letter, 0A000 for what keel does not do. */
static keel_status action_of(sql_session *s, const char *a, char *out)
{
    *out = a != NULL && a[0] != '\0' ? a[0] : 'a';
    if (strchr("arcnd", *out) == NULL)
        return sql_unsupported(s, -1, "this foreign key action");
    return KEEL_OK;
}

static keel_status define_one(sql_session *s, const rel_desc *child,
                              const sql_fkey_def *def, sql_fkey *all,
                              uint32_t nall, sql_fkey *f, bool validating)
{
    const PgQuery__Constraint *con = def->con;
    const PgQuery__RangeVar *prv = con->pktable;
    const char *pschema_in = prv->schemaname != NULL && prv->schemaname[0]
                                 ? prv->schemaname
                                 : NULL;
    rel_desc parent;
    bool self;
    keel_status rc;

    memset(f, 0, sizeof(*f));
    f->deferrable = def->deferrable >= 0 ? def->deferrable > 0 : con->deferrable;
    f->deferred = def->deferred >= 0 ? def->deferred > 0 : con->initdeferred;
    if (f->deferred && def->deferrable < 0 && !con->deferrable)
        f->deferrable = true; /* INITIALLY DEFERRED says DEFERRABLE */
    if (f->deferred && !f->deferrable)
        return sql_fail(s, KEEL_EINVAL, "42601",
                        "constraint declared INITIALLY DEFERRED must be "
                        "DEFERRABLE");
    if (con->skip_validation && validating)
        return sql_unsupported(s, con->location, "NOT VALID");
    if (con->n_fk_del_set_cols > 0)
        return sql_unsupported(s, con->location,
                               "column lists of ON DELETE SET NULL and SET "
                               "DEFAULT");
    if (prv->catalogname != NULL && prv->catalogname[0] != '\0')
        return sql_unsupported(s, prv->location, "cross-database references");
    rc = action_of(s, con->fk_upd_action, &f->upd);
    if (rc == KEEL_OK)
        rc = action_of(s, con->fk_del_action, &f->del);
    if (rc != KEEL_OK)
        return rc;
    f->match = con->fk_matchtype != NULL && con->fk_matchtype[0] != '\0'
                   ? con->fk_matchtype[0]
                   : 's';
    if (f->match == 'p')
        return sql_fail(s, KEEL_EINVAL, "0A000",
                        "MATCH PARTIAL not yet implemented");
    self = strcmp(prv->relname, child->name) == 0 &&
           strcmp(pschema_in != NULL ? pschema_in : "public",
                  child->schema != NULL ? child->schema : "public") == 0;
    if (self) {
        parent = *child;
    } else {
        rc = keel_lock_table(s->ks, pschema_in, prv->relname,
                             KEEL_LOCK_SHARE_ROW_EXCLUSIVE, false);
        if (rc == KEEL_ELOCKTIMEOUT || rc == KEEL_EDEADLOCK || rc == KEEL_ENOMEM)
            return sql_fail_engine(s, rc);
        rc = describe(s, pschema_in, prv->relname, &parent);
        if (rc != KEEL_OK) {
            if (s->err != NULL)
                s->err->position = 0;
            return rc;
        }
        if (pschema_in == NULL) {
            /* through the search path: which schema it was found in */
            char sch[KEEL_NAME_LEN], nm[KEEL_NAME_LEN];
            bool found = false;
            char *keep;
            rc = sql_relation_by_oid(s, parent.info.oid, sch, nm, &found);
            if (rc != KEEL_OK)
                return rc;
            if (found && strcmp(sch, "keel_catalog") == 0)
                return sql_unsupported(s, prv->location,
                                       "foreign keys to system catalogs");
            keep = sql_strndup(&s->arena, sch, strlen(sch));
            if (keep == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            parent.schema = keep;
        }
    }
    /* the referring columns */
    if (def->col > 0) {
        if (con->n_fk_attrs > 0)
            return sql_fail(s, KEEL_EINVAL, "42601", "syntax error");
        f->conkey[0] = def->col;
        f->nkeys = 1;
    } else {
        if (con->n_fk_attrs > 16)
            return sql_fail(s, KEEL_ETOOBIG, "54011",
                            "cannot have more than 16 keys in a foreign key");
        for (size_t k = 0; k < con->n_fk_attrs; k++) {
            const char *nm = sql_node_string(con->fk_attrs[k]);
            uint16_t c = column_of(child, nm);
            if (c == 0)
                return sql_fail(s, KEEL_ENOENT, "42703",
                                "column \"%s\" referenced in foreign key "
                                "constraint does not exist",
                                nm != NULL ? nm : "?");
            f->conkey[f->nkeys++] = c;
        }
    }
    /* the referred ones: given, or the primary key */
    if (con->n_pk_attrs > 0) {
        if (con->n_pk_attrs > 16)
            return sql_fail(s, KEEL_ETOOBIG, "54011",
                            "cannot have more than 16 keys in a foreign key");
        if (con->n_pk_attrs != f->nkeys)
            return sql_fail(s, KEEL_EINVAL, "42830",
                            "number of referencing and referenced columns for "
                            "foreign key disagree");
        for (size_t k = 0; k < con->n_pk_attrs; k++) {
            const char *nm = sql_node_string(con->pk_attrs[k]);
            uint16_t c = column_of(&parent, nm);
            if (c == 0)
                return sql_fail(s, KEEL_ENOENT, "42703",
                                "column \"%s\" referenced in foreign key "
                                "constraint does not exist",
                                nm != NULL ? nm : "?");
            f->confkey[k] = c;
        }
        if (unique_matches(&parent, f->confkey, f->nkeys) == NULL)
            return sql_fail(s, KEEL_EINVAL, "42830",
                            "there is no unique constraint matching given "
                            "keys for referenced table \"%s\"",
                            prv->relname);
    } else {
        if (parent.info.npkey == 0)
            return sql_fail(s, KEEL_ENOENT, "42704",
                            "there is no primary key for referenced table "
                            "\"%s\"",
                            prv->relname);
        if (parent.info.npkey != f->nkeys)
            return sql_fail(s, KEEL_EINVAL, "42830",
                            "number of referencing and referenced columns for "
                            "foreign key disagree");
        memcpy(f->confkey, parent.info.pkey, f->nkeys * sizeof(uint16_t));
    }
    if (parent.info.npkey == 0)
        return sql_unsupported(s, con->location,
                               "foreign keys to a table without a primary key");
    f->index = strdup(unique_matches(&parent, f->confkey, f->nkeys));
    if (f->index == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    /* the name: given, or PostgreSQL's <table>_<columns>_fkey */
    if (con->conname != NULL && con->conname[0] != '\0') {
        bool taken = false;
        f->name = strdup(con->conname);
        if (f->name == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        rc = name_taken(s, child, all, nall, f->name, &taken);
        if (rc == KEEL_OK && taken)
            rc = sql_fail(s, KEEL_EEXIST, "42710",
                          "constraint \"%s\" for relation \"%s\" already "
                          "exists",
                          f->name, child->name);
        if (rc != KEEL_OK)
            return rc;
    } else {
        char cols[KEEL_NAME_LEN * 2], name[KEEL_NAME_LEN + 16];
        size_t used = 0;
        cols[0] = '\0';
        for (uint16_t k = 0; k < f->nkeys && used < sizeof(cols); k++)
            put(cols, sizeof(cols), &used, "%s%s", k ? "_" : "",
                child->cols[f->conkey[k] - 1].name);
        for (unsigned n = 0;; n++) {
            char label[16];
            bool taken = false;
            snprintf(label, sizeof(label), n ? "fkey%u" : "fkey", n);
            sql_object_name(child->name, cols, label, name, sizeof(name));
            rc = name_taken(s, child, all, nall, name, &taken);
            if (rc != KEEL_OK)
                return rc;
            if (!taken)
                break;
        }
        f->name = strdup(name);
        if (f->name == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    for (uint16_t k = 0; k < f->nkeys; k++) {
        const keel_column_info *cc = &child->cols[f->conkey[k] - 1];
        const keel_column_info *pc = &parent.cols[f->confkey[k] - 1];
        uint32_t ct = sql_column_type(cc), pt = sql_column_type(pc);
        if (ct != pt && (type_class(ct) == 0 || type_class(ct) != type_class(pt))) {
            sql_fail(s, KEEL_ETYPE, "42804",
                     "foreign key constraint \"%s\" cannot be implemented",
                     f->name);
            if (s->err != NULL)
                snprintf(s->err->detail, sizeof(s->err->detail),
                         "Key columns \"%s\" and \"%s\" are of incompatible "
                         "types: %s and %s.",
                         cc->name, pc->name, sql_type_name(ct),
                         sql_type_name(pt));
            return KEEL_ETYPE;
        }
        snprintf(f->ccol[k], KEEL_NAME_LEN, "%s", cc->name);
        snprintf(f->pcol[k], KEEL_NAME_LEN, "%s", pc->name);
        f->ctype[k] = ct;
        f->ptype[k] = pt;
    }
    snprintf(f->cschema, sizeof(f->cschema), "%s",
             child->schema != NULL ? child->schema : "public");
    snprintf(f->cname, sizeof(f->cname), "%s", child->name);
    snprintf(f->pschema, sizeof(f->pschema), "%s",
             parent.schema != NULL ? parent.schema : "public");
    snprintf(f->pname, sizeof(f->pname), "%s", parent.name);
    f->conrelid = child->info.oid;
    f->confrelid = parent.info.oid;
    rc = keel_oid_new(s->ks, &f->oid);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    if (validating) {
        rc = validate(s, f);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = row_put(s, f);
    if (rc == KEEL_OK)
        rc = note_changed(s, f->conrelid);
    if (rc == KEEL_OK)
        rc = note_changed(s, f->confrelid);
    return rc;
}

keel_status sql_fkeys_define(sql_session *s, const char *schema,
                             const char *table, const sql_fkey_def *defs,
                             uint16_t n, bool validate_rows)
{
    rel_desc child;
    sql_fkey *all = NULL, *made;
    uint32_t nall = 0, nmade = 0;
    keel_status rc;

    if (n == 0)
        return KEEL_OK;
    rc = describe(s, schema, table, &child);
    if (rc == KEEL_OK)
        rc = rows_read(s, &all, &nall);
    if (rc != KEEL_OK)
        return rc;
    made = realloc(all, (nall + n) * sizeof(*made));
    if (made == NULL) {
        rows_free(all, nall);
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    }
    all = made;
    /* Read committed: the rows to check as they are now. */
    if (validate_rows && s->txn_rc) {
        keel_status w = keel_new_snapshot(s->ks);
        if (w != KEEL_OK && w != KEEL_EINVAL)
            rc = sql_fail_engine(s, w);
    }
    for (uint16_t i = 0; rc == KEEL_OK && i < n; i++) {
        rc = define_one(s, &child, &defs[i], all, nall + nmade,
                        &all[nall + nmade], validate_rows);
        if (rc == KEEL_OK) {
            nmade++;
        } else {
            free(all[nall + nmade].name);
            free(all[nall + nmade].index);
        }
    }
    rows_free(all, nall + nmade);
    return rc;
}

/* ---- dropping and moving ------------------------------------------------------- */

keel_status sql_fkey_drop(sql_session *s, const sql_table *t, const char *name,
                          bool *found)
{
    sql_fkey *all;
    uint32_t n;
    keel_status rc = rows_read(s, &all, &n);

    *found = false;
    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++)
        if (all[i].conrelid == t->info.oid && strcmp(all[i].name, name) == 0) {
            /* as PostgreSQL, the table referred to is locked too */
            char sch[KEEL_NAME_LEN], nm[KEEL_NAME_LEN];
            bool there = false;
            rc = sql_relation_by_oid(s, all[i].confrelid, sch, nm, &there);
            if (rc == KEEL_OK && there && all[i].confrelid != t->info.oid) {
                rc = keel_lock_table(s->ks, sch, nm,
                                     KEEL_LOCK_SHARE_ROW_EXCLUSIVE, false);
                if (rc != KEEL_OK)
                    rc = sql_fail_engine(s, rc);
            }
            if (rc == KEEL_OK)
                rc = row_delete(s, &all[i]);
            if (rc == KEEL_OK)
                rc = note_changed(s, all[i].conrelid);
            if (rc == KEEL_OK)
                rc = note_changed(s, all[i].confrelid);
            *found = true;
            break;
        }
    rows_free(all, n);
    return rc;
}

keel_status sql_fkeys_index_check(sql_session *s, uint32_t relid,
                                  const char *table, const char *index,
                                  bool constraint)
{
    sql_fkey *all;
    uint32_t n;
    keel_status rc = rows_read(s, &all, &n);

    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        char sch[KEEL_NAME_LEN], other[KEEL_NAME_LEN];
        bool found = false;
        if ((relid != 0 && all[i].confrelid != relid) ||
            strcmp(all[i].index, index) != 0)
            continue;
        if (relid == 0) {
            /* DROP INDEX: the index of that name in the table's schema */
            char psch[KEEL_NAME_LEN], pname[KEEL_NAME_LEN];
            rc = sql_relation_by_oid(s, all[i].confrelid, psch, pname, &found);
            if (rc != KEEL_OK)
                break;
            if (!found || strcmp(psch, table) != 0)
                continue;
        }
        rc = sql_relation_by_oid(s, all[i].conrelid, sch, other, &found);
        if (rc != KEEL_OK)
            break;
        if (constraint)
            sql_fail(s, KEEL_EINVAL, "2BP01",
                     "cannot drop constraint %s on table %s because other "
                     "objects depend on it",
                     index, table);
        else
            sql_fail(s, KEEL_EINVAL, "2BP01",
                     "cannot drop index %s because other objects depend on "
                     "it",
                     index);
        if (s->err != NULL) {
            snprintf(s->err->detail, sizeof(s->err->detail),
                     "constraint %s on table %s depends on index %s",
                     all[i].name, other, index);
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Use DROP ... CASCADE to drop the dependent objects "
                     "too.");
        }
        rc = KEEL_EINVAL;
    }
    rows_free(all, n);
    return rc;
}

/* Whether relid is named among list[0..n) ("schema.name"). */
static keel_status listed(sql_session *s, uint32_t relid,
                          const char *const *list, uint16_t n, char *name,
                          bool *in)
{
    char sch[KEEL_NAME_LEN], full[2 * KEEL_NAME_LEN + 2];
    bool found = false;
    keel_status rc = sql_relation_by_oid(s, relid, sch, name, &found);

    *in = false;
    if (rc != KEEL_OK || !found)
        return rc;
    snprintf(full, sizeof(full), "%s.%s", sch, name);
    for (uint16_t i = 0; i < n && !*in; i++)
        *in = strcmp(list[i], full) == 0;
    return KEEL_OK;
}

keel_status sql_fkeys_drop_table(sql_session *s, uint32_t relid,
                                 const char *name, const char *const *dropping,
                                 uint16_t ndropping, bool cascade)
{
    sql_fkey *all;
    uint32_t n, ndep = 0;
    char detail[sizeof(((sql_error *)0)->detail)], first[200];
    size_t used = 0;
    keel_status rc = rows_read(s, &all, &n);

    detail[0] = first[0] = '\0';
    /* the other tables' keys on it: listed, or refused */
    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        char other[KEEL_NAME_LEN];
        bool in = false;
        if (all[i].confrelid != relid || all[i].conrelid == relid)
            continue;
        rc = listed(s, all[i].conrelid, dropping, ndropping, other, &in);
        if (rc != KEEL_OK || in)
            continue;
        if (ndep++ == 0)
            snprintf(first, sizeof(first), "constraint %s on table %s",
                     all[i].name, other);
        put(detail, sizeof(detail), &used,
            "%sconstraint %s on table %s depends on table %s",
            used ? "\n" : "", all[i].name, other, name);
    }
    if (rc == KEEL_OK && ndep > 0 && !cascade) {
        sql_fail(s, KEEL_EINVAL, "2BP01",
                 "cannot drop table %s because other objects depend on it",
                 name);
        if (s->err != NULL) {
            snprintf(s->err->detail, sizeof(s->err->detail), "%s", detail);
            snprintf(s->err->hint, sizeof(s->err->hint),
                     "Use DROP ... CASCADE to drop the dependent objects "
                     "too.");
        }
        rc = KEEL_EINVAL;
    }
    if (rc == KEEL_OK && ndep == 1)
        rc = sql_notice(s, "00000", "drop cascades to %s", first);
    else if (rc == KEEL_OK && ndep > 1)
        rc = sql_notice(s, "00000", "drop cascades to %u other objects", ndep);
    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        sql_fkey *f = &all[i];
        if (f->conrelid != relid && f->confrelid != relid)
            continue;
        rc = row_delete(s, f);
        if (rc == KEEL_OK)
            rc = note_changed(s, f->conrelid);
        if (rc == KEEL_OK)
            rc = note_changed(s, f->confrelid);
    }
    rows_free(all, n);
    return rc;
}

keel_status sql_fkeys_referring(sql_session *s, uint32_t *relids, uint16_t *n,
                                uint16_t cap)
{
    sql_fkey *all;
    uint32_t nall;
    bool grew = true;
    keel_status rc = rows_read(s, &all, &nall);

    while (rc == KEEL_OK && grew) {
        grew = false;
        for (uint32_t i = 0; i < nall; i++) {
            bool to = false, from = false;
            for (uint16_t k = 0; k < *n; k++) {
                to = to || relids[k] == all[i].confrelid;
                from = from || relids[k] == all[i].conrelid;
            }
            if (!to || from)
                continue;
            if (*n == cap) {
                rc = sql_fail(s, KEEL_ETOOBIG, "54000",
                              "too many tables to truncate");
                break;
            }
            relids[(*n)++] = all[i].conrelid;
            grew = true;
        }
    }
    rows_free(all, nall);
    return rc;
}

keel_status sql_fkeys_truncate_check(sql_session *s, uint32_t relid,
                                     const char *name,
                                     const char *const *truncating,
                                     uint16_t ntruncating)
{
    sql_fkey *all;
    uint32_t n;
    keel_status rc = rows_read(s, &all, &n);

    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        char other[KEEL_NAME_LEN];
        bool in = false;
        if (all[i].confrelid != relid || all[i].conrelid == relid)
            continue;
        rc = listed(s, all[i].conrelid, truncating, ntruncating, other, &in);
        if (rc == KEEL_OK && !in) {
            sql_fail(s, KEEL_EINVAL, "0A000",
                     "cannot truncate a table referenced in a foreign key "
                     "constraint");
            if (s->err != NULL) {
                snprintf(s->err->detail, sizeof(s->err->detail),
                         "Table \"%s\" references \"%s\".", other, name);
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "Truncate table \"%s\" at the same time, or use "
                         "TRUNCATE ... CASCADE.",
                         other);
            }
            rc = KEEL_EINVAL;
        }
    }
    rows_free(all, n);
    return rc;
}

keel_status sql_fkeys_move(sql_session *s, uint32_t old_relid,
                           uint32_t new_relid, const uint16_t *map,
                           uint16_t ncols, const char *name)
{
    sql_fkey *all;
    uint32_t n;
    keel_status rc = rows_read(s, &all, &n);

    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        sql_fkey *f = &all[i], g;
        bool gone = false;
        if (f->conrelid != old_relid && f->confrelid != old_relid)
            continue;
        g = *f;
        for (uint16_t k = 0; map != NULL && k < f->nkeys; k++) {
            if (f->conrelid == old_relid) {
                g.conkey[k] = f->conkey[k] <= ncols ? map[f->conkey[k] - 1] : 0;
                gone = gone || g.conkey[k] == 0;
            }
            if (f->confrelid == old_relid) {
                g.confkey[k] =
                    f->confkey[k] <= ncols ? map[f->confkey[k] - 1] : 0;
                if (g.confkey[k] == 0 && f->conrelid != old_relid) {
                    char sch[KEEL_NAME_LEN], other[KEEL_NAME_LEN];
                    bool found = false;
                    rc = sql_relation_by_oid(s, f->conrelid, sch, other, &found);
                    if (rc != KEEL_OK)
                        break;
                    /* the column's name is gone with the old table's
                     * description: named by the constraint */
                    sql_fail(s, KEEL_EINVAL, "2BP01",
                             "cannot drop a column of table %s because other "
                             "objects depend on it",
                             name);
                    if (s->err != NULL) {
                        snprintf(s->err->detail, sizeof(s->err->detail),
                                 "constraint %s on table %s depends on it",
                                 f->name, other);
                        snprintf(s->err->hint, sizeof(s->err->hint),
                                 "Use DROP ... CASCADE to drop the dependent "
                                 "objects too.");
                    }
                    rc = KEEL_EINVAL;
                    break;
                }
                gone = gone || g.confkey[k] == 0;
            }
        }
        if (rc != KEEL_OK)
            break;
        if (g.conrelid == old_relid)
            g.conrelid = new_relid;
        if (g.confrelid == old_relid)
            g.confrelid = new_relid;
        rc = row_delete(s, f);
        if (rc == KEEL_OK && !gone && new_relid != 0)
            rc = row_put(s, &g);
        if (rc == KEEL_OK)
            rc = note_changed(s, f->conrelid);
        if (rc == KEEL_OK)
            rc = note_changed(s, f->confrelid);
        if (rc == KEEL_OK && new_relid != 0)
            rc = note_changed(s, new_relid);
    }
    rows_free(all, n);
    return rc;
}

/* ---- pg_get_constraintdef() ------------------------------------------------ */

static const char *action_words(char a)
{
    switch (a) {
    case 'r':
        return "RESTRICT";
    case 'c':
        return "CASCADE";
    case 'n':
        return "SET NULL";
    case 'd':
        return "SET DEFAULT";
    default:
        return NULL;
    }
}

keel_status sql_fkey_def_text(sql_session *s, uint32_t oid, sql_value *out,
                              bool *found)
{
    sql_fkey *all;
    uint32_t n;
    keel_status rc = rows_read(s, &all, &n);
    sql_fk_state *st = state(s);

    *found = false;
    if (st == NULL && rc == KEEL_OK)
        rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint32_t i = 0; rc == KEEL_OK && i < n; i++) {
        sql_fkey *f = &all[i];
        char buf[1024];
        size_t used = 0;
        if (f->oid != oid)
            continue;
        f->resolved = 0;
        st->stmt_no++;
        rc = resolve(s, f);
        if (rc != KEEL_OK)
            break;
        put(buf, sizeof(buf), &used, "FOREIGN KEY (");
        for (uint16_t k = 0; k < f->nkeys; k++)
            put(buf, sizeof(buf), &used, "%s%s", k ? ", " : "", f->ccol[k]);
        put(buf, sizeof(buf), &used, ") REFERENCES ");
        if (strcmp(f->pschema, "public") != 0)
            put(buf, sizeof(buf), &used, "%s.", f->pschema);
        put(buf, sizeof(buf), &used, "%s(", f->pname);
        for (uint16_t k = 0; k < f->nkeys; k++)
            put(buf, sizeof(buf), &used, "%s%s", k ? ", " : "", f->pcol[k]);
        put(buf, sizeof(buf), &used, ")");
        if (f->match == 'f')
            put(buf, sizeof(buf), &used, " MATCH FULL");
        if (action_words(f->upd) != NULL)
            put(buf, sizeof(buf), &used, " ON UPDATE %s", action_words(f->upd));
        if (action_words(f->del) != NULL)
            put(buf, sizeof(buf), &used, " ON DELETE %s", action_words(f->del));
        if (f->deferrable)
            put(buf, sizeof(buf), &used, " DEFERRABLE");
        if (f->deferred)
            put(buf, sizeof(buf), &used, " INITIALLY DEFERRED");
        out->isnull = false;
        out->type = SQL_TYPE_TEXT;
        out->v.s.p = sql_strndup(&s->arena, buf, used);
        out->v.s.len = (uint32_t)used;
        if (out->v.s.p == NULL)
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        *found = true;
        break;
    }
    rows_free(all, n);
    return rc;
}
