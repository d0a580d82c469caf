/*
 * db.c: creating, opening, checkpointing and closing a database, and the
 * durable reservations of transaction ids and object ids in the control
 * file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "port/clock.h"
#include "storage/buf_log.h"
#include "txn/clog.h"
#include "wal/wal.h"

static void to_public(keel_error *out, const kerr *e)
{
    if (out == NULL)
        return;
    out->code = e->code;
    snprintf(out->msg, sizeof(out->msg), "%s", e->msg);
}

static int fail(keel_error *out, kerr *e)
{
    to_public(out, e);
    return e->code;
}

const char *keel_version(void)
{
    return KEEL_VERSION_STRING;
}

void keel_db_options_init(keel_db_options *o)
{
    memset(o, 0, sizeof(*o));
    o->pool_mb = 64;
    o->max_sessions = 64;
    o->synchronous_commit = true;
    o->catalog_cache_prune_min_age = KEEL_CATALOG_CACHE_PRUNE_MIN_AGE_DEFAULT;
    o->catalog_cache_memory_target = KEEL_CATALOG_CACHE_MEMORY_TARGET_DEFAULT;
}

static int check_options(const keel_db_options *o, kerr *e)
{
    if (o == NULL || o->dir == NULL || o->dir[0] == '\0')
        return kerr_set(e, KEEL_EINVAL, "no database directory given");
    if (o->pool_mb == 0 || o->pool_mb > 1024 * 1024)
        return kerr_set(e, KEEL_EINVAL, "pool size of %u MiB is out of range",
                        o->pool_mb);
    if (o->max_sessions == 0 || o->max_sessions > PROCARRAY_MAX_SESSIONS)
        return kerr_set(e, KEEL_EINVAL, "max_sessions %u is out of range",
                        o->max_sessions);
    if (o->catalog_cache_prune_min_age < -1)
        return kerr_set(e, KEEL_EINVAL,
                        "catalog_cache_prune_min_age %d is below -1",
                        (int)o->catalog_cache_prune_min_age);
    return KEEL_OK;
}

static uint32_t pool_buffers(const keel_db_options *o)
{
    uint64_t n = (uint64_t)o->pool_mb * 1024 * 1024 / BLOCK_SIZE;
    return n < 16 ? 16 : (uint32_t)n;
}

/* Whether name is one of the files a database keeps in its directory:
 * keel_control (and its .tmp), keel_lock, or a relation's number. */
static bool is_db_file(const char *name)
{
    relnumber_t rel;

    return strncmp(name, "keel_", 5) == 0 || smgr_relnumber_of(name, &rel);
}

/*
 * KEEL_EEXIST unless dir is empty but for a lock file: a database made
 * among other files (a damaged database's, say, without its control file)
 * would take them for its own, or fail on them half made.
 */
static int check_empty(const char *dir, kerr *e)
{
    char path[4200];
    struct dirent *de;
    DIR *d;
    int rc = KEEL_OK;

    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_FILE_NAME);
    if (access(path, F_OK) == 0)
        return kerr_set(e, KEEL_EEXIST, "\"%s\" already holds a keel database",
                        dir);
    d = opendir(dir);
    if (d == NULL)
        return kerr_set(e, kerr_from_errno(errno),
                        "cannot read directory \"%s\": %s", dir,
                        strerror(errno));
    while (rc == KEEL_OK && (de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
            strcmp(de->d_name, CONTROL_LOCK_NAME) != 0)
            rc = kerr_set(e, KEEL_EEXIST,
                          "directory \"%s\" is not empty (it holds \"%s\"): "
                          "a database is created in an empty one",
                          dir, de->d_name);
    closedir(d);
    return rc;
}

/* After a failed create, with the lock held: removes the database's files
 * from dir, which held none before, and dir itself if the create made it.
 * The control file goes first and the lock file last, so that an opener
 * that waited for the lock finds no database under it. */
static void remove_created(const char *dir, bool made_dir)
{
    char path[4200];
    struct dirent *de;
    DIR *d;

    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_FILE_NAME);
    unlink(path);
    d = opendir(dir);
    if (d != NULL) {
        while ((de = readdir(d)) != NULL)
            if (is_db_file(de->d_name) &&
                strcmp(de->d_name, CONTROL_LOCK_NAME) != 0) {
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                unlink(path);
            }
        closedir(d);
    }
    snprintf(path, sizeof(path), "%s/%s", dir, WAL_DIR_NAME);
    d = opendir(path);
    if (d != NULL) {
        while ((de = readdir(d)) != NULL)
            if (de->d_name[0] != '.') {
                char seg[4600];
                snprintf(seg, sizeof(seg), "%.4200s/%.255s", path, de->d_name);
                unlink(seg);
            }
        closedir(d);
        rmdir(path);
    }
    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_LOCK_NAME);
    unlink(path);
    if (made_dir)
        rmdir(dir);
}

keel_status keel_db_create(const keel_db_options *opts, keel_error *out)
{
    kerr e;
    control_data c;
    smgr *sm = NULL;
    buf_pool *pool = NULL;
    buf_session *bs = NULL;
    int rc, lock_fd = -1;
    bool made_dir;

    kerr_clear(&e);
    rc = check_options(opts, &e);
    if (rc == KEEL_OK && opts->read_only)
        rc = kerr_set(&e, KEEL_EINVAL,
                      "cannot create database \"%s\" read-only", opts->dir);
    if (rc != KEEL_OK)
        return fail(out, &e);
    made_dir = mkdir(opts->dir, 0700) == 0;
    if (!made_dir && errno != EEXIST)
        return kerr_set(&e, kerr_from_errno(errno),
                        "cannot create directory \"%s\": %s", opts->dir,
                        strerror(errno)),
               fail(out, &e);
    /* Empty before the lock (which leaves a file) and under it.  The lock
     * is held throughout, so that nothing opens the database half made. */
    rc = check_empty(opts->dir, &e);
    if (rc == KEEL_OK)
        rc = control_lock(opts->dir, &lock_fd, &e);
    if (rc == KEEL_OK)
        rc = check_empty(opts->dir, &e);
    if (rc != KEEL_OK) {
        /* The lock file stays: another create may have made a database
         * here meanwhile, whose openers rely on it. */
        control_unlock(lock_fd);
        if (made_dir)
            rmdir(opts->dir);
        return fail(out, &e);
    }
    control_init(&c);
    c.state = CONTROL_IN_PRODUCTION; /* until everything below is synced */
    c.xid_limit = XID_FIRST_NORMAL;
    c.next_oid = CATALOG_FIRST_USER_OID;
    c.oid_limit = CATALOG_FIRST_USER_OID;
    c.redo_lsn = WAL_FIRST_LSN;
    rc = control_create(opts->dir, &c, &e);
    /* The catalogs are written and synced before the create succeeds, so
     * nothing of it is logged: the log starts empty. */
    if (rc == KEEL_OK)
        rc = wal_create(opts->dir, &e);
    if (rc == KEEL_OK)
        rc = smgr_open(opts->dir, &sm, &e);
    if (rc == KEEL_OK)
        rc = smgr_create(sm, CATALOG_CLOG_REL, NULL, &e);
    if (rc == KEEL_OK)
        rc = buf_pool_create(sm, pool_buffers(opts), &pool, &e);
    if (rc == KEEL_OK)
        rc = buf_session_create(pool, &bs, &e);
    if (rc == KEEL_OK) {
        rc = catalog_bootstrap(bs);
        if (rc == KEEL_OK)
            rc = buf_checkpoint(bs);
        if (rc != KEEL_OK)
            e = *buf_session_error(bs);
        buf_session_destroy(bs);
    }
    if (pool != NULL) {
        if (rc == KEEL_OK)
            rc = buf_pool_close(pool, &e);
        if (rc != KEEL_OK)
            buf_pool_discard(pool);
    }
    smgr_close(sm);
    if (rc == KEEL_OK) {
        c.state = CONTROL_SHUT_DOWN;
        rc = control_write(opts->dir, &c, &e);
    }
    /* A database half made must not pass for one (nor block a retry). */
    if (rc != KEEL_OK)
        remove_created(opts->dir, made_dir);
    control_unlock(lock_fd);
    return rc == KEEL_OK ? KEEL_OK : fail(out, &e);
}

/* The transaction manager's reservation hook: record the new xid limit. */
static int reserve_xids(void *ctx, xid_t new_limit, kerr *err)
{
    keel_db *db = ctx;
    control_data c;
    int rc;

    if (db->read_only)
        return kerr_set(err, KEEL_EREADONLY,
                        "database \"%s\" is open read-only", db->dir);
    pthread_mutex_lock(&db->control_lock);
    c = db->control;
    c.xid_limit = new_limit;
    rc = control_write(db->dir, &c, err);
    if (rc == KEEL_OK)
        db->control = c;
    pthread_mutex_unlock(&db->control_lock);
    return rc;
}

int engine_oid_next(keel_db *db, oid_t *out, kerr *err)
{
    int rc = KEEL_OK;

    if (db->read_only)
        return kerr_set(err, KEEL_EREADONLY,
                        "database \"%s\" is open read-only", db->dir);
    pthread_mutex_lock(&db->control_lock);
    if (db->next_oid >= db->control.oid_limit) {
        control_data c = db->control;
        if (db->next_oid > UINT32_MAX - ENGINE_OID_RESERVE_CHUNK) {
            rc = kerr_set(err, KEEL_EEXHAUSTED, "object ids are used up");
        } else {
            c.oid_limit = db->next_oid + ENGINE_OID_RESERVE_CHUNK;
            c.next_oid = db->next_oid;
            rc = control_write(db->dir, &c, err);
            if (rc == KEEL_OK)
                db->control = c;
        }
    }
    if (rc == KEEL_OK)
        *out = db->next_oid++;
    pthread_mutex_unlock(&db->control_lock);
    return rc;
}

static void free_rels(keel_db *db)
{
    engine_rel *r = db->rels;

    while (r != NULL) {
        engine_rel *next = r->next;
        btree_close(r->bt);
        tupdesc_free(r->desc);
        free(r);
        r = next;
    }
    db->rels = NULL;
}

static void checkpointer_stop(keel_db *db)
{
    if (!db->checkpointer_running)
        return;
    pthread_mutex_lock(&db->checkpointer_lock);
    db->checkpointer_stop = true;
    pthread_cond_signal(&db->checkpointer_cond);
    pthread_mutex_unlock(&db->checkpointer_lock);
    pthread_join(db->checkpointer, NULL);
    db->checkpointer_running = false;
}

/* Frees whatever of db was set up, writing nothing. */
static void db_discard(keel_db *db)
{
    checkpointer_stop(db);
    free_rels(db);
    catalog_close(db->cat);
    txn_mgr_destroy(db->txn);
    inval_queue_destroy(db->inval);
    lmgr_destroy(db->locks);
    if (db->pool != NULL)
        buf_pool_discard(db->pool);
    wal_close(db->wal);
    smgr_close(db->smgr);
    control_unlock(db->lock_fd);
    pthread_mutex_destroy(&db->checkpoint_lock);
    pthread_mutex_destroy(&db->checkpointer_lock);
    pthread_cond_destroy(&db->checkpointer_cond);
    pthread_mutex_destroy(&db->control_lock);
    pthread_mutex_destroy(&db->rel_lock);
    pthread_mutex_destroy(&db->claim_lock);
    free(db->claims);
    free(db->made);
    free(db->dir);
    free(db);
}

/*
 * A failed open's end: what it set up goes, and what its reads left dirty
 * in the pool is dropped (as before it failed: it ran no transaction, so
 * nothing on disk needs it).  A database it found shut down cleanly is
 * recorded as shut down again, under the lock still held, rather than
 * left looking as if it had crashed; if that write fails, the next open
 * finds what a crash leaves, which is no worse.
 */
static void open_undo(keel_db *db, bool wrote_control)
{
    control_data c = db->control;
    kerr e;

    if (wrote_control && db->found_state == CONTROL_SHUT_DOWN) {
        c.state = CONTROL_SHUT_DOWN;
        (void)control_write(db->dir, &c, &e);
    }
    db_discard(db);
}

/*
 * ECORRUPT if the commit log records the end of a transaction at or past
 * next, the first id this open is to hand out (the control file's limit):
 * ids at or below one used already would be handed out again, and a
 * transaction given one would take over the old one's rows and status.
 * The limit is written, synced, before an id below it is used, so only a
 * damaged control file is below the log.
 */
static int xid_limit_check(keel_db *db, buf_session *bs, xid_t next, kerr *err)
{
    xid_t last;
    int rc = clog_last_ended(txn_mgr_clog(db->txn), bs, &last, err);

    if (rc == KEEL_OK && last != XID_INVALID && last >= next)
        rc = kerr_set(err, KEEL_ECORRUPT,
                      "database \"%s\": the control file's transaction id "
                      "limit %u is not past transaction %u, whose end the "
                      "commit log records",
                      db->dir, next, last);
    return rc;
}

/*
 * Replays the log from the last checkpoint's redo pointer into the pool
 * (its changes not logged again), and sets *end to where the valid log
 * ends.  Read-only, the replayed pages stay in memory (the pool cannot
 * write them: a log larger than the pool fails the open).  ECORRUPT for
 * a damaged log (wal_reader_next()) or record.
 */
static int recover(keel_db *db, uint64_t redo, uint64_t *end, kerr *err)
{
    buf_session *bs = NULL;
    wal_reader *r = NULL;
    const wal_record *h;
    const char *body;
    uint64_t start = clock_now_ns(), n = 0;
    int rc = wal_reader_open(db->dir, redo, &r, err);

    if (rc == KEEL_OK)
        rc = buf_session_create(db->pool, &bs, err);
    if (rc == KEEL_OK)
        bs->log_off = true;
    while (rc == KEEL_OK && (rc = wal_reader_next(r, &h, &body, err)) == KEEL_OK) {
        n++;
        if (h->type == WAL_PAGES) {
            rc = buf_log_redo(bs, h, body);
            if (rc != KEEL_OK)
                *err = *buf_session_error(bs);
        } else if (h->type == WAL_XACT_END) {
            rc = clog_redo_end(bs, h, CATALOG_CLOG_REL);
            if (rc != KEEL_OK)
                *err = *buf_session_error(bs);
        } else if (h->type == WAL_FILE_CREATE &&
                   h->body_len >= sizeof(wal_file_body)) {
            wal_file_body f;
            memcpy(&f, body, sizeof(f));
            if (!smgr_exists(db->smgr, f.relnumber))
                rc = smgr_create(db->smgr, f.relnumber, NULL, err);
        }
    }
    if (rc == KEEL_EEOF) {
        rc = KEEL_OK;
        *end = wal_reader_end(r);
    } else if (rc == KEEL_EREADONLY) {
        rc = kerr_set(err, KEEL_EREADONLY,
                      "database \"%s\" was not shut down cleanly, and its "
                      "log (from LSN %llu) is more than a read-only open's "
                      "pool can replay: open it for writing once, which "
                      "recovers it",
                      db->dir, (unsigned long long)redo);
    }
    buf_session_destroy(bs);
    wal_reader_close(r);
    db->recovered_records = n;
    db->recovery_ns = clock_now_ns() - start;
    return rc;
}

/* Checkpoints whenever the log says one is due, until told to stop. */
static void *checkpointer_main(void *arg)
{
    keel_db *db = arg;

    pthread_mutex_lock(&db->checkpointer_lock);
    while (!db->checkpointer_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&db->checkpointer_cond, &db->checkpointer_lock,
                               &ts);
        if (db->checkpointer_stop)
            break;
        pthread_mutex_unlock(&db->checkpointer_lock);
        if (wal_checkpoint_due(db->wal))
            (void)keel_checkpoint(db, NULL);
        pthread_mutex_lock(&db->checkpointer_lock);
    }
    pthread_mutex_unlock(&db->checkpointer_lock);
    return NULL;
}

keel_status keel_db_open(const keel_db_options *opts, keel_db **out,
                         keel_error *err)
{
    return engine_db_open_layout(opts, PROCARRAY_PADDED, out, err);
}

keel_status engine_db_open_layout(const keel_db_options *opts,
                                  procarray_layout layout, keel_db **out,
                                  keel_error *err)
{
    keel_db *db;
    buf_session *bs = NULL;
    control_data c;
    kerr e;
    xid_t next;
    uint64_t end = 0;
    int rc, lock_fd = -1;
    bool wrote = false;

    kerr_clear(&e);
    *out = NULL;
    rc = check_options(opts, &e);
    if (rc == KEEL_OK && layout != PROCARRAY_PADDED &&
        layout != PROCARRAY_PACKED)
        rc = kerr_set(&e, KEEL_EINVAL, "unknown process array layout %d",
                      (int)layout);
    /* Read before the lock, so that a directory that holds no database
     * gets no lock file; and again under it, since a holder closing
     * meanwhile replaces the file. */
    if (rc == KEEL_OK)
        rc = control_read(opts->dir, &c, &e);
    if (rc == KEEL_OK)
        rc = opts->read_only ? control_lock_shared(opts->dir, &lock_fd, &e)
                             : control_lock(opts->dir, &lock_fd, &e);
    if (rc == KEEL_OK)
        rc = control_read(opts->dir, &c, &e);
    if (rc != KEEL_OK) {
        control_unlock(lock_fd);
        return fail(err, &e);
    }
    db = calloc(1, sizeof(*db));
    if (db == NULL || (db->dir = strdup(opts->dir)) == NULL) {
        free(db);
        control_unlock(lock_fd);
        kerr_set(&e, KEEL_ENOMEM, "out of memory");
        return fail(err, &e);
    }
    db->lock_fd = lock_fd;
    db->read_only = opts->read_only;
    pthread_mutex_init(&db->control_lock, NULL);
    pthread_mutex_init(&db->rel_lock, NULL);
    pthread_mutex_init(&db->claim_lock, NULL);
    pthread_mutex_init(&db->checkpoint_lock, NULL);
    pthread_mutex_init(&db->checkpointer_lock, NULL);
    pthread_cond_init(&db->checkpointer_cond, NULL);
    db->cache_prune_min_age = opts->catalog_cache_prune_min_age;
    db->cache_memory_target = opts->catalog_cache_memory_target;
    /* Restart past everything that may have been handed out. */
    next = c.xid_limit < XID_FIRST_NORMAL ? XID_FIRST_NORMAL : c.xid_limit;
    db->next_oid = c.oid_limit < CATALOG_FIRST_USER_OID ? CATALOG_FIRST_USER_OID
                                                        : c.oid_limit;
    db->found_state = c.state;
    c.state = CONTROL_IN_PRODUCTION;
    c.xid_limit = next;
    c.oid_limit = db->next_oid;
    c.next_oid = db->next_oid;
    db->control = c;
    /* Read-only: whatever a crashed run left in progress reads as aborted
     * (txn_xid_status), in memory only; the control file stays as it is. */
    if (db->read_only)
        rc = smgr_open_read_only(db->dir, &db->smgr, &e);
    else if ((rc = control_write(db->dir, &c, &e)) == KEEL_OK) {
        wrote = true;
        rc = smgr_open(db->dir, &db->smgr, &e);
    }
    if (rc == KEEL_OK)
        rc = buf_pool_create(db->smgr, pool_buffers(opts), &db->pool, &e);
    if (rc == KEEL_OK) {
        btree_log_register();
        heap_log_register();
        rc = recover(db, c.redo_lsn, &end, &e);
    }
    if (rc == KEEL_OK) {
        wal_options wo;
        wal_options_init(&wo);
        wo.synchronous_commit = opts->synchronous_commit;
        rc = wal_open(db->dir, end, c.redo_lsn, db->read_only,
                      db->found_state != CONTROL_SHUT_DOWN, &wo, &db->wal, &e);
    }
    if (rc == KEEL_OK)
        buf_pool_set_wal(db->pool, db->wal);
    if (rc == KEEL_OK)
        rc = txn_mgr_create(db->pool, CATALOG_CLOG_REL, opts->max_sessions,
                            layout, next, next,
                            reserve_xids, db, &db->txn, &e);
    if (rc == KEEL_OK)
        txn_mgr_set_wal(db->txn, db->wal);
    if (rc == KEEL_OK)
        rc = inval_queue_create(ENGINE_INVAL_CAPACITY, &db->inval, &e);
    if (rc == KEEL_OK)
        rc = lmgr_create(&db->locks, &e);
    if (rc == KEEL_OK)
        rc = buf_session_create(db->pool, &bs, &e);
    if (rc == KEEL_OK && (rc = xid_limit_check(db, bs, next, &e)) != KEEL_OK)
        buf_session_destroy(bs);
    if (rc == KEEL_OK) {
        rc = catalog_open(bs, &db->cat);
        if (rc != KEEL_OK)
            e = *buf_session_error(bs);
        buf_session_destroy(bs);
    }
    /* What recovery replayed goes to disk now, so that the next crash
     * replays from here (an end-of-recovery checkpoint). */
    if (rc == KEEL_OK && !db->read_only && db->recovered_records > 1) {
        keel_error ke;
        rc = keel_checkpoint(db, &ke);
        if (rc != KEEL_OK)
            kerr_set(&e, rc, "%s", ke.msg);
    }
    if (rc == KEEL_OK && !db->read_only) {
        if (pthread_create(&db->checkpointer, NULL, checkpointer_main, db) != 0)
            rc = kerr_set(&e, KEEL_ENOMEM, "cannot start the checkpointer");
        else
            db->checkpointer_running = true;
    }
    if (rc != KEEL_OK) {
        open_undo(db, wrote);
        return fail(err, &e);
    }
    *out = db;
    return KEEL_OK;
}

/*
 * A checkpoint (fuzzy: writers go on): the redo pointer moves to the log's
 * insert position, every page dirty then is written and every file
 * synced, then a checkpoint record is logged and made durable, and the
 * control file records both; segments wholly before the redo pointer go.
 * One at a time (checkpoint_lock).
 */
uint32_t keel_db_pool_mb(const keel_db *db)
{
    return (uint32_t)(((uint64_t)buf_pool_size(db->pool) * BLOCK_SIZE) >> 20);
}

keel_status keel_checkpoint(keel_db *db, keel_error *err)
{
    buf_session *bs;
    wal_checkpoint_body body;
    struct iovec part;
    control_data c;
    uint64_t redo, end = 0;
    kerr e;
    int rc;

    kerr_clear(&e);
    if (db->read_only)
        return KEEL_OK; /* nothing can be dirty */
    rc = buf_session_create(db->pool, &bs, &e);
    if (rc != KEEL_OK)
        return fail(err, &e);
    pthread_mutex_lock(&db->checkpoint_lock);
    redo = wal_redo_begin(db->wal);
    rc = buf_checkpoint(bs);
    if (rc != KEEL_OK)
        e = *buf_session_error(bs);
    buf_session_destroy(bs);
    if (rc == KEEL_OK) {
        pthread_mutex_lock(&db->control_lock);
        c = db->control;
        pthread_mutex_unlock(&db->control_lock);
        memset(&body, 0, sizeof(body));
        body.redo = redo;
        body.next_xid = c.xid_limit;
        body.next_oid = c.oid_limit;
        {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            body.time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        }
        part = (struct iovec){&body, sizeof(body)};
        rc = wal_insert(db->wal, 0, WAL_CHECKPOINT, 0, 0, &part, 1,
                        sizeof(body), NULL, NULL, &end, &e);
        if (rc == KEEL_OK)
            rc = wal_flush(db->wal, end, &e);
    }
    if (rc == KEEL_OK) {
        pthread_mutex_lock(&db->control_lock);
        c = db->control;
        c.checkpoints++;
        c.redo_lsn = redo;
        c.checkpoint_lsn = end - wal_align(sizeof(wal_rec_hdr) + sizeof(body));
        rc = control_write(db->dir, &c, &e);
        if (rc == KEEL_OK)
            db->control = c;
        pthread_mutex_unlock(&db->control_lock);
    }
    if (rc == KEEL_OK)
        wal_remove_old(db->wal, redo);
    pthread_mutex_unlock(&db->checkpoint_lock);
    return rc == KEEL_OK ? KEEL_OK : fail(err, &e);
}

void keel_db_wal_stats(keel_db *db, keel_wal_stats *out)
{
    wal_stats st;

    wal_stats_read(db->wal, &st);
    out->records = st.records;
    out->fpi = st.fpi;
    out->fpi_bytes = st.fpi_bytes;
    out->bytes = st.bytes;
    out->buffers_full = st.buffers_full;
    out->writes = st.writes;
    out->syncs = st.syncs;
    out->insert_lsn = st.insert_lsn;
    out->reset_us = (int64_t)(st.reset_ns / 1000u);
}

/* ---- files no relation owns ------------------------------------------ */

/*
 * Moves to the front of db->made the relations keel_class does not hold,
 * as a snapshot taken after every transaction of this open sees it (each
 * looked up by oid, which a user relation's number is): tables and
 * indexes dropped, or created by transactions that aborted.  Sets *out to
 * how many; to 0 on any error, so that files stay rather than go wrongly,
 * and returns the error (in err).  db->made stays a permutation of what it
 * was, so that a later call finds the same.
 */
static int find_unowned(keel_db *db, uint32_t *out, kerr *err)
{
    keel_session *s = NULL;
    keel_error ke;
    catalog_txn ct;
    catalog_relation r;
    uint32_t n = 0;
    int rc = keel_session_begin(db, &s, &ke);

    if (rc != KEEL_OK)
        kerr_set(err, rc, "%s", ke.msg);
    if (rc == KEEL_OK)
        rc = keel_begin(s);
    if (rc == KEEL_OK)
        rc = engine_catalog_txn(s, false, &ct);
    for (uint32_t i = 0; rc == KEEL_OK && i < db->nmade; i++) {
        relnumber_t rel = db->made[i];
        if (rel < CATALOG_FIRST_USER_OID)
            continue;
        rc = catalog_relation_by_oid(db->cat, &ct, rel, &r);
        if (rc == KEEL_ENOENT) {
            db->made[i] = db->made[n]; /* n <= i: nothing unread is lost */
            db->made[n++] = rel;
            rc = KEEL_OK;
        }
    }
    if (rc != KEEL_OK && s != NULL)
        kerr_set(err, rc, "%s", keel_session_error(s));
    keel_session_end(s);
    *out = rc == KEEL_OK ? n : 0;
    return rc;
}

keel_status keel_db_close(keel_db *db, keel_error *err)
{
    control_data c;
    uint32_t n, unowned;
    kerr e;
    int rc;

    kerr_clear(&e);
    pthread_mutex_lock(&db->rel_lock);
    n = db->nsessions;
    pthread_mutex_unlock(&db->rel_lock);
    if (n != 0) {
        kerr_set(&e, KEEL_EBUSY, "%u session(s) of database \"%s\" still open",
                 n, db->dir);
        return fail(err, &e);
    }
    if (db->read_only) {
        db_discard(db); /* nothing to write, nothing made or dropped */
        return KEEL_OK;
    }
    /* Read before the checkpoint, which then writes whatever the read
     * changed.  No session is open: no relation is being made or
     * dropped.  Short of memory, the close fails with db open (a retry
     * can still remove the files); other errors leave the files. */
    unowned = 0;
    if (db->nmade > 0 && find_unowned(db, &unowned, &e) == KEEL_ENOMEM)
        return fail(err, &e);
    checkpointer_stop(db);
    rc = keel_checkpoint(db, err);
    if (rc != KEEL_OK) {
        /* Still open: its checkpoints go on. */
        db->checkpointer_stop = false;
        if (pthread_create(&db->checkpointer, NULL, checkpointer_main, db) ==
            0)
            db->checkpointer_running = true;
        return rc;
    }
    /* Everything is on disk: the handles can go, then the pool. */
    free_rels(db);
    catalog_close(db->cat);
    db->cat = NULL;
    txn_mgr_destroy(db->txn);
    db->txn = NULL;
    rc = buf_pool_close(db->pool, &e);
    if (rc != KEEL_OK) {
        db_discard(db);
        return fail(err, &e);
    }
    db->pool = NULL;
    /* The files of relations that ended in this open, now that the
     * catalogs saying so are on disk (the checkpoint), and only those: a
     * file merely missing from keel_class, as a damaged page could make a
     * live table's look, stays.  A failure leaves a file behind. */
    for (uint32_t i = 0; i < unowned; i++)
        if (smgr_exists(db->smgr, db->made[i])) {
            kerr_clear(&e);
            (void)smgr_unlink(db->smgr, db->made[i], &e);
        }
    c = db->control;
    c.state = CONTROL_SHUT_DOWN;
    c.next_oid = db->next_oid;
    rc = control_write(db->dir, &c, &e);
    db_discard(db);
    return rc == KEEL_OK ? KEEL_OK : fail(err, &e);
}
