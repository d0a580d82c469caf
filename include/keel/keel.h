/*
 * keel.h: the public face of keel, a PostgreSQL-style database core.
 *
 * Every function in keel's public API that can fail returns one of the
 * status codes below; KEEL_OK is zero, every failure is positive.  A failing call also
 * leaves a one-line message naming what was wrong (the file and block of a
 * corrupt page, the relation that does not exist, ...) in the error
 * context the caller passed or in its session.
 *
 * keel runs on Linux only: it waits on futex(2), orders memory with
 * membarrier(2), locks its directory with flock(2) and makes its log
 * durable with fdatasync(2).
 *
 * Threads.  Unless a function says otherwise:
 *   - functions without a database or session (keel_status_str(),
 *     keel_version(), keel_db_options_init(), keel_db_create(),
 *     keel_db_open(), keel_check()) may be called from any thread at any
 *     time;
 *   - functions that take a keel_db (keel_checkpoint(),
 *     keel_session_begin()) may be called from any thread while the
 *     database is open, concurrently with each other and with every
 *     session's calls; keel_db_close() is the exception (below);
 *   - functions that take a keel_session, or a keel_scan (which belongs to
 *     the session that began it), may be called by one thread at a time
 *     per session; different sessions' calls run concurrently.
 */
#ifndef KEEL_KEEL_H
#define KEEL_KEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keel/keel_version.h"

/* What the shared library exports: keel_ functions only. */
#if defined(__GNUC__)
#define KEEL_API __attribute__((visibility("default")))
#else
#define KEEL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum keel_status {
    KEEL_OK = 0,
    KEEL_EINVAL,     /* an argument is out of range or malformed */
    KEEL_ENOMEM,     /* memory could not be allocated */
    KEEL_EIO,        /* the operating system reported an I/O error */
    KEEL_ENOSPC,     /* the disk is full (or a write came back short) */
    KEEL_ECORRUPT,   /* data on disk failed verification (checksum, header) */
    KEEL_ENOENT,     /* a file or relation does not exist */
    KEEL_EEXIST,     /* a file or relation already exists */
    KEEL_EEOF,       /* a block past the end of its relation was asked for */
    KEEL_EEXHAUSTED, /* pool all pinned, max_sessions open, ids used up */
    KEEL_EBUSY,      /* in use: pinned, sessions open, open elsewhere */
    KEEL_EVERSION,   /* a file was written by an incompatible version */
    KEEL_ESERIALIZE, /* a concurrent transaction changed the row first */
    KEEL_EUNIQUE,    /* the key already exists in a unique index */
    KEEL_ETYPE,      /* a value does not match its column's type */
    KEEL_ETOOBIG,    /* a value or row does not fit (name > 63 bytes, ...) */
    KEEL_EREADONLY,  /* a write to a database opened read-only */
    KEEL_ELOCKTIMEOUT, /* a table lock was not granted in time (or NOWAIT) */
    KEEL_EDEADLOCK,  /* a lock wait closed a cycle of waiters */
    KEEL_ECHANGED,   /* read committed: the row changed since the snapshot */
    KEEL_STATUS_COUNT
} keel_status;

/* A short, constant, lower-case name for a status ("corrupt data"). */
KEEL_API const char *keel_status_str(keel_status status);

/* The version of the library running (KEEL_VERSION_STRING of the build
 * that made it), which may differ from the header a program was compiled
 * with: its major version must be KEEL_VERSION_MAJOR.  The on-disk layout
 * has a version of its own, in the control file (KEEL_EVERSION). */
KEEL_API const char *keel_version(void);

/*
 * Column types.  Fixed-width types are stored aligned to their size
 * (timestamps as int8, dates as int4, with PostgreSQL's epoch); name
 * is a fixed 64-byte field holding at most 63 bytes, NUL-padded (as
 * PostgreSQL's name); char(n) is blank-padded to exactly n bytes; text is
 * variable length, up to what fits on a page.
 */
typedef enum keel_type {
    KEEL_INT2 = 1,
    KEEL_INT4,
    KEEL_INT8,
    KEEL_OID,
    KEEL_BOOL,
    KEEL_FLOAT8,
    KEEL_NAME,
    KEEL_CHAR,
    KEEL_TEXT,
    KEEL_TIMESTAMP,   /* microseconds since 2000-01-01 00:00, in i8 */
    KEEL_TIMESTAMPTZ, /* the same instant in UTC, in i8 */
    KEEL_DATE,        /* days since 2000-01-01, in i4 */
    KEEL_NUMERIC,     /* a decimal, its stored form in s (below) */
    KEEL_UUID,        /* 16 bytes in s, compared as unsigned bytes */
    KEEL_BYTEA,       /* any bytes in s, compared as unsigned bytes */
    KEEL_JSON,        /* JSON text in s, as written */
    KEEL_JSONB,       /* JSON text in s, in jsonb's canonical form */
} keel_type;

/*
 * A KEEL_NUMERIC value is the bytes (v.s, 3 to 65535 of them) of a
 * decimal's stored form: a class byte (0x40 negative, 0x80 zero, 0xC0
 * positive, 0xFF NaN); for a nonzero number, 16-bit big-endian words:
 * its weight (the power of 10000 of its first base-10000 digit) plus
 * 0x8000, then each base-10000 digit plus 1 (no leading or trailing zero
 * digits), every word complemented (x ^ 0xFFFF) for a negative number,
 * which ends with 0xFFFF; last, the display scale (digits shown after
 * the point) as a big-endian 16-bit word.  All but the last two bytes
 * compare with memcmp() (a prefix first) as the numbers do, NaN above
 * every number; so keys order numerically and 1.5 equals 1.50 as a key.
 * The SQL layer makes and reads these (src/sql/sql_numeric.h); the engine
 * only stores and compares them.
 */

#define KEEL_NAME_LEN 64 /* bytes of a name field, the NUL included */

/*
 * One value of a column, as passed into and out of keel.  Strings (name,
 * char, text) are not NUL-terminated: ptr and len give their bytes.  Values
 * returned by keel point into memory that stays valid as documented by the
 * call that returned them.
 */
typedef struct keel_value {
    bool isnull;
    union {
        int16_t i2;
        int32_t i4;
        int64_t i8;
        uint32_t oid;
        bool b;
        double f8;
        struct {
            const char *ptr;
            uint32_t len;
        } s;
    } v;
} keel_value;

/* ======================================================================
 * The engine API.
 *
 * A database is a directory (keel_db_create); one open keel_db is shared
 * by every thread; each thread works through its own keel_session.  A
 * session is used by one thread at a time, but may pass to another between
 * calls (as a pool hands its connections out), even in the middle of a
 * transaction: it is tied to no thread.  Every function that can fail
 * returns a keel_status.  Functions that take a session leave a one-line
 * message in it on failure (keel_session_error()); the others fill the
 * caller's keel_error (which may be NULL).
 *
 * Transactions are repeatable read with "first updater wins": changing a
 * row that another transaction changed since this one began fails with
 * KEEL_ESERIALIZE.  keel_begin() starts one explicitly; a call made outside
 * one runs in its own transaction, committed on success and aborted on
 * failure.  Inside an explicit transaction a failed call changes nothing
 * and the transaction may continue, except where a call says that the
 * transaction must be aborted, and where an error (I/O, no buffer free)
 * struck after the call had changed what it cannot take back (a table's
 * or an index's first catalog row, statistics): then every later call but
 * keel_abort() fails with KEEL_EINVAL, and so does keel_commit(), which
 * aborts.
 *
 * Statements.  Each call is a statement, and a statement does not see its
 * own changes, only those of the statements before it in its transaction
 * (PostgreSQL's command ids; the engine advances them itself, and nothing
 * needs to be called between statements): every call sees every change
 * its transaction made in earlier calls.  A scan is one statement from
 * keel_scan_begin() to keel_scan_end(), and the row calls made while it
 * is open (keel_insert, keel_lookup, keel_update, keel_delete,
 * keel_fetch_changed, keel_scan_update, keel_scan_delete; every other
 * call fails with KEEL_EINVAL) are part of it: the scan does not
 * return the rows they insert or the new versions of the rows they
 * update, and goes on returning the rows they delete or update as they
 * were when it began, so that a scan that updates every row it returns
 * changes each one once, whatever the order the scan reads in; those
 * calls see the table as the scan does (a row they changed already
 * cannot be changed again within the scan: KEEL_ENOENT).  A row call
 * that writes during a scan needs the scan to run in an explicit
 * transaction (KEEL_EINVAL otherwise).  A transaction may have at most
 * 2^31 - 1 statements that write (KEEL_EEXHAUSTED after them).
 *
 * Names (schemas, tables, columns, indexes) are at most 63 bytes
 * (KEEL_ETOOBIG otherwise); schema NULL means "public", except where a
 * call says it means the search path (keel_catalog, then public), as an
 * unqualified name in a PostgreSQL query does.  Unknown names
 * give KEEL_ENOENT, an existing name KEEL_EEXIST, each naming the object.
 * ====================================================================== */

typedef struct keel_db keel_db;
typedef struct keel_session keel_session;
typedef struct keel_scan keel_scan;

#define KEEL_ERROR_MSG_MAX 256

/* A failure of a call that has no session. */
typedef struct keel_error {
    keel_status code;             /* KEEL_OK when nothing failed */
    char msg[KEEL_ERROR_MSG_MAX]; /* NUL-terminated */
} keel_error;

typedef struct keel_db_options {
    const char *dir;              /* the database directory */
    uint32_t pool_mb;             /* buffer pool size, MiB (>= 1) */
    uint32_t max_sessions;        /* sessions at once (1 .. 65536) */
    /* Each session's catalog cache (see keel_session_set_cache_options). */
    int32_t catalog_cache_prune_min_age;  /* seconds, -1: no age pruning */
    uint64_t catalog_cache_memory_target; /* bytes, 0: no target */
    bool read_only;                       /* open to read only (keel_db_open) */
    /* Whether keel_commit() waits until its commit record is durable (the
     * default, true).  false acknowledges at once; the log writer makes
     * the record durable within KEEL_WAL_WRITER_DELAY_MS, and a crash may
     * lose the transactions of that last moment, never part of one (as
     * PostgreSQL's synchronous_commit = off). */
    bool synchronous_commit;
} keel_db_options;

/* How long, at most, a commit acknowledged without waiting
 * (synchronous_commit false) stays only in memory: the log writer flushes
 * every this many milliseconds. */
#define KEEL_WAL_WRITER_DELAY_MS 10

/* Catalog cache defaults: entries unused for 5 minutes may go when a cache
 * would grow, and each session keeps its cache under 4 MiB of what it
 * asks for (4,000 sessions: 16 GiB at most, against PostgreSQL's
 * unbounded growth; the memory that holds it takes about 10% more,
 * block_bytes below). */
#define KEEL_CATALOG_CACHE_PRUNE_MIN_AGE_DEFAULT 300
#define KEEL_CATALOG_CACHE_MEMORY_TARGET_DEFAULT (UINT64_C(4) << 20)

/* Defaults: no directory, 64 MiB pool, 64 sessions, synchronous commit,
 * the catalog cache defaults above. */
KEEL_API void keel_db_options_init(keel_db_options *o);

/*
 * Creates a database in opts->dir (created if absent; KEEL_EEXIST if it
 * holds a database or any other file): the control file, the commit log
 * and the system catalogs, all fsynced before success.  KEEL_EINVAL for
 * bad options; KEEL_EBUSY if another create or an open holds the
 * directory (below); I/O errors.  A failed create removes what it wrote,
 * and the directory if it made it.
 */
KEEL_API keel_status keel_db_create(const keel_db_options *opts, keel_error *err);

/*
 * Opens the database in opts->dir.  KEEL_ENOENT if the directory holds no
 * keel database, KEEL_ECORRUPT if its control file or a catalog is damaged,
 * KEEL_EVERSION if it was written by another layout version; each message
 * names the directory.  Marks the control file "in production" (an open
 * that fails after that marks a database it found shut down cleanly shut
 * down again, so that it does not look as if it had crashed).  A
 * database is open in one place at a time: until keel_db_close(), or the
 * end of the process, another open, in this process or any other, fails
 * with KEEL_EBUSY, its message naming the process that holds it (the lock
 * is an flock(2) on the file keel_lock in the directory).  A child made by
 * fork() does not share the lock (its copy of the descriptor is pointed
 * at /dev/null), and must not use the parent's handles.
 *
 * With opts->read_only the open writes nothing to the directory, so that
 * a database can be read where it cannot be written (read-only media,
 * files the caller may read but not write) and inspected without being
 * changed:
 * files are opened O_RDONLY, the control file is left as it was, and the
 * lock is a shared flock(2) on keel_lock.  Read-only opens exclude an open
 * for writing, in either order, but not one another (if keel_lock is
 * absent, as in a copy made without it, none is taken, and an open for
 * writing that comes later makes the file and is not kept out).  Every
 * transaction may read; a statement that would write (DML, DDL, keel_analyze, a
 * load) fails with KEEL_EREADONLY before it changes anything, which leaves an
 * explicit transaction usable.  After a crash the transactions that were
 * running read as aborted, as they do in an open for writing, but nothing
 * records it.  keel_db_create() refuses read_only (KEEL_EINVAL).
 */
KEEL_API keel_status keel_db_open(const keel_db_options *opts, keel_db **out, keel_error *err);

/*
 * Closes the database: checkpoints, removes the files of the relations
 * this open dropped, or created in transactions that aborted (after the
 * checkpoint, so that a file goes only once its relation's end is on disk;
 * only files this open made or dropped, never one merely missing from the
 * catalogs), records a clean shutdown and frees db.  KEEL_EBUSY if a session is
 * still open (nothing is done); if the checkpoint fails, its error is returned
 * and db stays open; a failure after it (closing the pool, writing the control
 * file) is returned too, but db is freed (everything was on disk).  Nothing
 * after the checkpoint allocates memory, so KEEL_ENOMEM always leaves db open
 * for another try.  A read-only open's close only releases the lock and
 * frees db.
 *
 * Threads: one thread calls it, and no other thread may call anything on
 * db, or on its sessions and scans, from when the close begins (a
 * keel_checkpoint() or keel_session_begin() racing it, or any call after
 * it has freed db, is undefined).  A failed close leaves db usable again.
 */
KEEL_API keel_status keel_db_close(keel_db *db, keel_error *err);

/* A checkpoint: writes every page changed before it began, fsyncs the
 * files and records in the log and the control file where recovery would
 * start (I/O errors).  Sessions go on writing meanwhile; a checkpoint
 * thread runs them by log volume and time, and calls from several threads
 * run one after another.  Nothing, and KEEL_OK, for a read-only open. */
KEEL_API keel_status keel_checkpoint(keel_db *db, keel_error *err);

/* The buffer pool's size in MiB, as db was opened (keel_db_options's
 * pool_mb). */
KEEL_API uint32_t keel_db_pool_mb(const keel_db *db);

/*
 * What the write-ahead log did since the database was opened: every
 * counter starts at zero at keel_db_open() (PostgreSQL's pg_stat_wal;
 * the SQL views keel_stat_wal and pg_stat_wal read it).  Counted without
 * a lock, so while sessions write, the figures are each as of some moment
 * during the call.
 */
typedef struct keel_wal_stats {
    uint64_t records;      /* log records inserted (fillers included) */
    uint64_t fpi;          /* whole page images in them */
    uint64_t fpi_bytes;    /* the images' page bytes, holes left out */
    uint64_t bytes;        /* bytes of log inserted: headers, bodies, padding */
    uint64_t buffers_full; /* inserts that found the log's buffer full */
    uint64_t writes;       /* writes of the log to its files */
    uint64_t syncs;        /* fdatasyncs of the log's files */
    uint64_t insert_lsn;   /* the log's insert position (an LSN) now */
    int64_t reset_us;      /* when counting began: us since 1970 (UTC) */
} keel_wal_stats;

KEEL_API void keel_db_wal_stats(keel_db *db, keel_wal_stats *out);

/* Starts a session (for one thread at a time, see above).  KEEL_EEXHAUSTED
 * when max_sessions are open, KEEL_ENOMEM. */
KEEL_API keel_status keel_session_begin(keel_db *db, keel_session **out, keel_error *err);

/* Ends a session, aborting its transaction if one is running (a scan
 * still open is left to keel_scan_end(), as by keel_abort).  NULL is
 * fine. */
KEEL_API void keel_session_end(keel_session *s);

/* The message of the session's last failure ("" if none). */
KEEL_API const char *keel_session_error(const keel_session *s);

/* Transactions.  keel_begin: KEEL_EINVAL if one is running.  keel_commit:
 * KEEL_EINVAL if none is; if it fails the transaction is aborted.
 * keel_abort: a no-op outside a transaction; the transaction is aborted
 * whatever it returns, but an I/O error writing its abort (the commit
 * log's page, or a log that has failed) is returned, its message in the
 * session: its changes stay invisible all the same (a transaction that
 * ends without a commit reads as aborted), and a reopen's recovery
 * records the abort.  With a scan open (which
 * must end first) keel_begin and keel_commit fail with KEEL_EINVAL and
 * change nothing; keel_abort aborts an explicit transaction and ends what
 * the scan holds, leaving its handle to keel_scan_end(), and leaves a
 * scan that runs in its own transaction alone. */
KEEL_API keel_status keel_begin(keel_session *s);
KEEL_API keel_status keel_commit(keel_session *s);
KEEL_API keel_status keel_abort(keel_session *s);

/*
 * Savepoints, in a transaction keel_begin() began, numbered from 1 in the
 * order they were set.  keel_savepoint() sets one and returns its level
 * in *level.  keel_rollback_to_savepoint() takes back every change of a
 * row the transaction made since savepoint `level` was set, forgets the
 * later savepoints and keeps that one.  It fails with KEEL_EINVAL,
 * changing nothing, when a call since left the transaction to abort (see
 * above), and when the transaction changed the schema or statistics since
 * the savepoint (DDL, keel_analyze()), which it cannot take back; an I/O
 * error while taking changes back leaves the transaction to abort (every
 * later call but keel_abort() fails).  keel_release_savepoint() forgets savepoint
 * `level` and the later ones, keeping their changes.  Table locks taken
 * since a savepoint are kept until the transaction ends.  KEEL_EINVAL
 * outside such a transaction, with a scan open, or for a level that is
 * not set; KEEL_ENOMEM.  While a savepoint is set, each change of a row
 * takes a few bytes of the session's memory until the transaction ends
 * or the last savepoint is released.
 */
/*
 * Compares and sets, in place, int8 column col (0-based) of the row of
 * schema.table whose primary key is key, as the transaction sees it: if
 * it holds expect, it becomes set; *actual gets what it held.  The change
 * is outside every transaction: the row gets no new version, every
 * transaction reads the new value at once, and no abort undoes it (a
 * counter, as a SQL sequence: nextval() is this in a loop).  It is logged:
 * once a later commit's record is durable, so is the change.  The row
 * is the counter in its newest version: if another transaction has
 * replaced the version the transaction sees (and did not abort), the
 * change goes to the newest one, after waiting for a transaction still
 * replacing it, whatever the snapshot.  KEEL_EINVAL unless the column is
 * NOT NULL int8 with only fixed-width columns before it; KEEL_ENOENT
 * without such a row (or one holding a null, or one deleted since);
 * a wait's errors.  keel_cas_int8_row() also copies that version's values
 * into row (one per column, strings valid until the session's next call).
 */
KEEL_API keel_status keel_cas_int8(keel_session *s, const char *schema,
                                   const char *table, const keel_value *key,
                                   uint16_t col, int64_t expect, int64_t set,
                                   int64_t *actual);
KEEL_API keel_status keel_cas_int8_row(keel_session *s, const char *schema,
                                       const char *table,
                                       const keel_value *key, uint16_t col,
                                       int64_t expect, int64_t set,
                                       int64_t *actual, keel_value *row);

KEEL_API keel_status keel_savepoint(keel_session *s, uint32_t *level);
KEEL_API keel_status keel_rollback_to_savepoint(keel_session *s, uint32_t level);
KEEL_API keel_status keel_release_savepoint(keel_session *s, uint32_t level);

/*
 * Isolation.  A session's transactions are repeatable read (above) unless
 * it asks for read committed, which applies from its next call on:
 *
 *   - keel_new_snapshot() takes a new snapshot for the running
 *     transaction: the calls after it see every transaction that
 *     committed before it.  A statement made of several calls (a lookup,
 *     then an update computed from it) calls it once, first, as
 *     PostgreSQL takes a snapshot per statement.
 *   - keel_update() and keel_delete() meeting a row that another
 *     transaction is changing wait for it to end (up to the lock timeout,
 *     KEEL_ELOCKTIMEOUT; KEEL_EDEADLOCK if the wait closes a cycle of
 *     waiters, through table locks too) instead of failing.  If it
 *     aborted, the call goes on.  If it (or one before it) committed
 *     after the snapshot and deleted the row: KEEL_ENOENT.  If it updated
 *     the row: KEEL_ECHANGED, nothing changed, and the transaction goes
 *     on (a call outside a transaction fails, its own transaction
 *     aborted, and may be tried again); keel_fetch_changed() then returns the row's newest version, for
 *     the caller to check again and compute its change from (PostgreSQL's
 *     re-check of an updated row), and a keel_update() or keel_delete()
 *     of that table with the newest version's key changes that version
 *     (as does the scan's next keel_scan_update() or keel_scan_delete()
 *     after one of them returned KEEL_ECHANGED).
 *
 * keel_set_isolation: KEEL_EINVAL for an unknown level.
 * keel_new_snapshot: a no-op outside a transaction (a call there takes
 * its own) and under repeatable read (whose snapshot stays), so that a
 * statement may begin with it whatever the level; KEEL_EINVAL with a
 * scan open, or after the transaction failed.
 * keel_fetch_changed: *found false if the row has been deleted since;
 * KEEL_EINVAL if the session's last keel_update() or keel_delete() of
 * the table did not return KEEL_ECHANGED.  out as keel_lookup()'s.
 */
typedef enum keel_isolation {
    KEEL_REPEATABLE_READ = 0,
    KEEL_READ_COMMITTED
} keel_isolation;
KEEL_API keel_status keel_set_isolation(keel_session *s, keel_isolation level);
KEEL_API keel_status keel_new_snapshot(keel_session *s);
KEEL_API keel_status keel_fetch_changed(keel_session *s, const char *schema,
                                        const char *table, keel_value *out,
                                        bool *found);

/*
 * Table locks, PostgreSQL's modes with its conflict table:
 *
 *   mode                     conflicts with
 *   ACCESS_SHARE             ACCESS_EXCLUSIVE
 *   ROW_SHARE                EXCLUSIVE, ACCESS_EXCLUSIVE
 *   ROW_EXCLUSIVE            SHARE, SHARE_ROW_EXCLUSIVE, EXCLUSIVE,
 *                            ACCESS_EXCLUSIVE
 *   SHARE_UPDATE_EXCLUSIVE   SHARE_UPDATE_EXCLUSIVE, SHARE,
 *                            SHARE_ROW_EXCLUSIVE, EXCLUSIVE, ACCESS_EXCLUSIVE
 *   SHARE                    ROW_EXCLUSIVE, SHARE_UPDATE_EXCLUSIVE,
 *                            SHARE_ROW_EXCLUSIVE, EXCLUSIVE, ACCESS_EXCLUSIVE
 *   SHARE_ROW_EXCLUSIVE      all but ACCESS_SHARE and ROW_SHARE
 *   EXCLUSIVE                all but ACCESS_SHARE
 *   ACCESS_EXCLUSIVE         all
 *
 * Every call takes its table's lock itself and holds it until the
 * transaction ends: ACCESS_SHARE to read (lookups, scans, selects,
 * keel_table_describe() and the other questions about a table),
 * ROW_EXCLUSIVE to insert, update or delete, SHARE_UPDATE_EXCLUSIVE for
 * keel_analyze(), SHARE for keel_create_index(), ACCESS_EXCLUSIVE for
 * keel_drop_table() and keel_add_primary_key().  A request that conflicts
 * with another transaction's lock waits until it is granted, up to the
 * session's lock timeout (then KEEL_ELOCKTIMEOUT), or until the wait is
 * found to close a cycle of waiters (after a short delay; then
 * KEEL_EDEADLOCK for the one that found it).  A call that fails so
 * changed nothing; the transaction may go on.  A transaction whose first
 * lock had to wait, or found its table dropped by a commit since its
 * snapshot, and that has changed no catalog row, takes its snapshot again
 * once granted, so that it sees what the holder committed (a table it
 * waited on may then no longer exist: KEEL_ENOENT).  For a transaction
 * that holds other locks, a table dropped since its snapshot is
 * KEEL_ENOENT as well.
 */
typedef enum keel_lock_mode {
    KEEL_LOCK_ACCESS_SHARE = 1,
    KEEL_LOCK_ROW_SHARE,
    KEEL_LOCK_ROW_EXCLUSIVE,
    KEEL_LOCK_SHARE_UPDATE_EXCLUSIVE,
    KEEL_LOCK_SHARE,
    KEEL_LOCK_SHARE_ROW_EXCLUSIVE,
    KEEL_LOCK_EXCLUSIVE,
    KEEL_LOCK_ACCESS_EXCLUSIVE,
} keel_lock_mode;

/*
 * Locks table schema.table (schema NULL: public) in mode until the running
 * explicit transaction ends (PostgreSQL's LOCK TABLE).  With nowait a
 * conflicting lock fails at once with KEEL_ELOCKTIMEOUT.  KEEL_EINVAL
 * outside a transaction (the lock would end with the call) or for a mode
 * out of range; KEEL_ENOENT; KEEL_ELOCKTIMEOUT; KEEL_EDEADLOCK.
 */
KEEL_API keel_status keel_lock_table(keel_session *s, const char *schema,
                                     const char *table, keel_lock_mode mode,
                                     bool nowait);

/* The longest a lock request of the session waits, in milliseconds (0:
 * for ever, the default), as PostgreSQL's lock_timeout. */
KEEL_API void keel_session_set_lock_timeout(keel_session *s,
                                            uint32_t timeout_ms);

/* While nowait is set, a keel_update() or keel_delete() (or a scan's)
 * that meets a row another running transaction is changing fails at
 * once with KEEL_EBUSY ("could not obtain lock on row in relation ..."),
 * changing nothing, rather than wait for that transaction (SQL's NOWAIT
 * and SKIP LOCKED).  Off by default. */
KEEL_API void keel_session_set_row_nowait(keel_session *s, bool nowait);

/* Writes a non-null value of column type `type` as text into buf (cap
 * bytes, NUL-terminated, cut short if need be); arg is the one given to
 * keel_session_set_value_text(). */
typedef void (*keel_value_text_fn)(void *arg, keel_type type,
                                   const keel_value *v, char *buf,
                                   size_t cap);

/* How the session's messages show values (a unique violation's key):
 * fn, where the caller has its own text for them (a date as 2024-02-29
 * rather than its day number); NULL, the default, for the engine's own. */
KEEL_API void keel_session_set_value_text(keel_session *s,
                                          keel_value_text_fn fn, void *arg);

/* A new object id, never given out before (the oids of tables and
 * indexes come from the same counter), for an object its caller keeps
 * (a check constraint): an id handed out and never used is skipped. */
KEEL_API keel_status keel_oid_new(keel_session *s, uint32_t *out);

/* ---- DDL: each call is transactional (an abort leaves no visible trace;
 * the files of relations created by an aborted transaction, or dropped,
 * stay until the clean keel_db_close() of that open; a crash leaves them
 * for good). ---- */

/* One column of a new table.  charlen: n of char(n) (1..4096); for text,
 * a declared maximum length in characters (varchar(n)) that keel keeps
 * and reports but leaves to its caller to enforce, or 0 for none; for
 * numeric, 0 or the SQL layer's note of its precision and scale, which
 * the engine keeps without reading; else 0. */
typedef struct keel_column {
    const char *name;
    keel_type type;
    uint16_t charlen;
    bool notnull;
} keel_column;

/* KEEL_EEXIST if the schema exists, KEEL_ETOOBIG for a long name. */
KEEL_API keel_status keel_create_schema(keel_session *s, const char *name);

/* KEEL_ENOENT if it does not exist, KEEL_EBUSY if it holds relations or
 * another transaction is creating one in it, KEEL_ESERIALIZE if one that
 * did committed after this transaction began, KEEL_EINVAL for the
 * built-in schemas. */
KEEL_API keel_status keel_drop_schema(keel_session *s, const char *name);

/*
 * Creates table schema.name with ncols (1..256) columns.  pkey lists
 * npkey (0..16) distinct column numbers (1-based) of the primary key; with
 * npkey > 0 a unique index "<name>_pkey" is created on them and the key
 * columns become not null.  Errors: KEEL_ENOENT (schema), KEEL_EEXIST
 * (table, or two columns with one name), KEEL_ETOOBIG (a name, or a
 * primary key's name over 63 bytes: name at most 58), KEEL_ETYPE (unknown
 * column type), KEEL_EINVAL (bad counts, column numbers, char length, the
 * schema keel_catalog), KEEL_ESERIALIZE (another transaction is dropping
 * the schema, or dropped it after this one began).
 */
KEEL_API keel_status keel_create_table(keel_session *s, const char *schema, const char *name,
                      const keel_column *cols, uint16_t ncols,
                      const uint16_t *pkey, uint16_t npkey);

/* Drops a table and its indexes and statistics (KEEL_ENOENT; KEEL_EBUSY
 * while another transaction builds an index on it, KEEL_ESERIALIZE if one
 * that did committed after this transaction began, or another is dropping
 * it). */
KEEL_API keel_status keel_drop_table(keel_session *s, const char *schema, const char *name);

/* Drops index `name` (in schema, NULL for public), locking its table as
 * keel_drop_table() does.  KEEL_ENOENT if there is none, KEEL_EINVAL if
 * name is not an index or is the table's primary key (drop the table, or
 * keep the key). */
KEEL_API keel_status keel_drop_index(keel_session *s, const char *schema, const char *name);

/*
 * Creates index `index` (in the table's schema) on columns keys[0..nkeys)
 * of the table and builds it from the rows the transaction sees.
 * KEEL_EUNIQUE if unique and two of those rows have equal keys (nothing
 * created); KEEL_ESERIALIZE if the table holds rows the transaction cannot
 * see yet, whose inserters committed after it began or are running (the
 * index would lack them; nothing created), if another transaction is
 * dropping the table or dropped it after this one began, or if another
 * built an index on it that committed after this one began; KEEL_EBUSY
 * while another transaction builds an index on the table (one at a time,
 * so that the limit of 32 indexes holds); KEEL_ENOENT, KEEL_EEXIST,
 * KEEL_ETOOBIG, KEEL_EINVAL (32 indexes already) as above.  From the
 * build until its transaction ends, other transactions' inserts and
 * updates of the table fail (below), so that no row the build's scan
 * missed goes without an entry.
 */
KEEL_API keel_status keel_create_index(keel_session *s, const char *schema, const char *table,
                      const char *index, const uint16_t *keys, uint16_t nkeys,
                      bool unique);

/*
 * Renames table `table` (in schema, NULL for public) to newname, or, when
 * column is not NULL, its column `column` to newname, under the lock
 * keel_drop_table() takes; its oid, file, indexes and rows stay as they
 * are.  KEEL_ENOENT (the table, or the column), KEEL_EEXIST (a relation
 * of the schema, or a column of the table, has the name), KEEL_EINVAL
 * and KEEL_ETOOBIG for an empty or long name, KEEL_ESERIALIZE as
 * keel_drop_table().
 */
KEEL_API keel_status keel_rename(keel_session *s, const char *schema,
                                 const char *table, const char *column,
                                 const char *newname);

/*
 * Makes columns keys[0..nkeys) the table's primary key, as ALTER TABLE
 * ... ADD PRIMARY KEY: a unique index named `index` (NULL:
 * "<table>_pkey") built as keel_create_index() builds one, after which
 * the columns are not null.  Errors: those of keel_create_index(),
 * KEEL_EEXIST if the table has a primary key, KEEL_ETYPE if a key column
 * holds a null.
 */
KEEL_API keel_status keel_add_primary_key(keel_session *s, const char *schema,
                                          const char *table, const char *index,
                                          const uint16_t *keys, uint16_t nkeys);

/*
 * Computes, for every column of the table, the fraction of nulls, the
 * number of distinct values and up to 4 most common values, and writes
 * them as keel_statistic rows (replacing earlier ones), and the table's
 * page and row counts into keel_class.  Tables of up to 30000 rows are
 * described exactly; of larger ones a uniform random sample of 30000 rows
 * is taken (repeatably), as PostgreSQL does, and the number of distinct
 * values is estimated from it (Haas-Stokes).  The row count is exact.
 * KEEL_ESERIALIZE if another transaction analyzes the table at the same
 * time, or did since this one began.
 */
KEEL_API keel_status keel_analyze(keel_session *s, const char *schema, const char *table);

/* ---- rows ----
 *
 * Values are passed one per column, in column order.  A keel_value has no
 * type of its own: the union member that matches the column's type must be
 * set (i2 for int2, i4 int4, i8 int8, oid oid, b bool, f8 float8, s for
 * name, char and text).  Checked: KEEL_ETYPE for a null in a not-null
 * column, a bool that is neither 0 nor 1, a name with a NUL byte, a string
 * without bytes; KEEL_ETOOBIG for a name over 63 bytes, a char(n) value
 * over n bytes, a row that does not fit a page; KEEL_EINVAL for values
 * NULL. */

/*
 * Inserts a row and an entry in every index of the table.  KEEL_EUNIQUE
 * (naming the key) if a unique index already holds the key of a row that
 * may be live; nothing stays visible then.  KEEL_ESERIALIZE, leaving the
 * transaction to be aborted, while another transaction that built an
 * index on the table runs, or if one committed after this transaction
 * began (its view of the table's indexes lacks it): retry in a new one.
 * A failure after the row went into the table (an index's I/O error, no
 * buffer free) takes the row out again, and the transaction may go on:
 * the row's page stays pinned until its index entries are in, so taking
 * it out reads nothing.
 */
KEEL_API keel_status keel_insert(keel_session *s, const char *schema, const char *table,
                const keel_value *values);

/*
 * Looks a row up by its primary key (key: one value per key column; a
 * null in it finds no row).  *found tells whether a visible row has that
 * key; if so out (one value per column) holds it, its strings valid until
 * the session's next call.  KEEL_EINVAL if the table has no primary key
 * or key is NULL, KEEL_ETYPE for a string key without bytes.
 */
KEEL_API keel_status keel_lookup(keel_session *s, const char *schema, const char *table,
                const keel_value *key, keel_value *out, bool *found);

/*
 * SELECT column FROM table WHERE <primary key> = key, planned afresh on
 * every call as a PostgreSQL backend plans a query it is sent as text,
 * through the session's catalog cache: the table by name (with schema
 * NULL through the search path, keel_catalog then public, as an
 * unqualified name in a query), the column by name, the column's
 * statistics (found or not), and the table's list of indexes, from which
 * the primary key is taken.  Then the primary key's B-tree is descended
 * and the version of the key that the transaction sees is fetched,
 * decoding the row's columns only as far as `column` and the key's: the
 * key's first entry first, then, if the row was updated or deleted, its
 * last 64 entries in tid order, the last first (where an update's new
 * version usually lands), and only if none of those is seen the ones
 * before them, oldest first.  key holds one value per key column (a null
 * in it finds no row).  *found tells whether a visible row has that
 * key; if so *out holds its `column` (a string valid until the session's
 * next call).
 *
 * Cost: inside an explicit transaction, once the session has run it on
 * the table (its catalog entries cached, the table's handles kept), a
 * call allocates nothing and takes no mutex (except when the transaction
 * sees none of a key's last 64 versions: the ones before them are then
 * scanned), and writes shared memory only to pin and share-lock the
 * pages it reads and to release them: the index leaf, the heap page, and
 * the commit log's page when the row was not written frozen (as
 * keel_load_table() writes rows).  A row updated since the transaction's
 * snapshot costs one more search of the index and a read of each version
 * tried.  Outside an explicit transaction a call also begins and commits
 * its own.
 *
 * Errors: KEEL_ENOENT (schema, table or column), KEEL_EINVAL (an empty
 * name, a system catalog, an index, a table without a primary key, no
 * key, a scan open or the transaction failed earlier), KEEL_ETOOBIG (a
 * name), KEEL_ETYPE (a string key without bytes), KEEL_ECORRUPT (the
 * index led to a row with another key), I/O errors.  *found is false
 * after any error.
 */
KEEL_API keel_status keel_select_column(keel_session *s, const char *schema, const char *table,
                       const char *column, const keel_value *key,
                       keel_value *out, bool *found);

/*
 * Whether relation `name` (a table, an index or a system catalog) exists
 * for the transaction, through the session's catalog cache: with schema
 * NULL in the search path (keel_catalog, then public), else in that
 * schema.  As in PostgreSQL, a name that is not found is remembered as a
 * negative entry, so an application that probes ever new names grows the
 * cache until it is pruned.  A missing relation is not an error:
 * KEEL_ENOENT is for a schema that does not exist; KEEL_EINVAL for an
 * empty name, KEEL_ETOOBIG for a long one.
 */
KEEL_API keel_status keel_relation_exists(keel_session *s, const char *schema, const char *name,
                         bool *exists);

/*
 * Replaces the row with primary key `key` by values (key as for
 * keel_lookup(), whose errors for it apply).  KEEL_ENOENT if there is
 * none (a key with a null has none), KEEL_ESERIALIZE if another
 * transaction changed it first, or as keel_insert() for an index build,
 * KEEL_EUNIQUE if a new key is taken (checked before anything changes).
 * A failure once the new version is written (a conflict found later, an
 * index's I/O error, no buffer free) takes the update back, and the
 * transaction may go on: both versions' pages stay pinned until the new
 * version's index entries are in, so that reads nothing.
 */
KEEL_API keel_status keel_update(keel_session *s, const char *schema, const char *table,
                const keel_value *key, const keel_value *values);

/* keel_lock_row()'s strengths, PostgreSQL's four: KEY SHARE holds off
 * deletes and updates of the row's key (a unique index's columns) and
 * FOR UPDATE; SHARE every delete and update and both UPDATE modes;
 * NO KEY UPDATE all but KEY SHARE; UPDATE everything. */
typedef enum keel_row_lock {
    KEEL_ROW_KEY_SHARE = 1,
    KEEL_ROW_SHARE = 2,
    KEEL_ROW_NO_KEY_UPDATE = 3,
    KEEL_ROW_UPDATE = 4,
} keel_row_lock;

/*
 * Locks the row with primary key `key` for the rest of the transaction,
 * as SELECT ... FOR KEY SHARE, FOR SHARE, FOR NO KEY UPDATE or FOR UPDATE
 * does in PostgreSQL: it waits for a transaction holding a lock that
 * conflicts with mode (or writing the row), and then other transactions'
 * conflicting locks and writes wait until this one ends, deadlocks found
 * as for any row; under repeatable read a writer held off then fails
 * with KEEL_ESERIALIZE if this one committed.  Nothing is written: no new
 * version, no log record.  The errors and read committed's waits and
 * KEEL_ECHANGED are keel_delete()'s (KEEL_EBUSY under
 * keel_session_set_row_nowait()); KEEL_ENOMEM when the database's table
 * of row locks (524,288 entries) has no room left, KEEL_EINVAL for
 * another mode.
 */
KEEL_API keel_status keel_lock_row(keel_session *s, const char *schema,
                                   const char *table, const keel_value *key,
                                   keel_row_lock mode);

/* Deletes the row with primary key `key` (KEEL_ENOENT, KEEL_ESERIALIZE;
 * key as for keel_lookup(), whose errors for it apply). */
KEEL_API keel_status keel_delete(keel_session *s, const char *schema, const char *table,
                const keel_value *key);

/* A scan bound: the first ncols key columns in vals. */
typedef struct keel_bound {
    const keel_value *vals;
    uint16_t ncols;
    bool inclusive;
} keel_bound;

/*
 * Starts a range scan of the table in the order of index `index` (NULL:
 * the primary key) between lower and upper (NULL: unbounded), returning
 * the rows the transaction sees.  A table without a primary key is read
 * in storage order when index is NULL, and then takes no bounds
 * (KEEL_EINVAL).  A bound has at most the index's key columns, with
 * values (KEEL_EINVAL), strings with bytes (KEEL_ETYPE).  The scan must
 * end (keel_scan_end) before the transaction does and before the
 * session's next call other than a row call (see keel_begin, and
 * "Statements" above for the row calls made while it is open).
 */
KEEL_API keel_status keel_scan_begin(keel_session *s, const char *schema, const char *table,
                    const char *index, const keel_bound *lower,
                    const keel_bound *upper, keel_scan **out);

/* The next row in out (one value per column, valid until the next call);
 * *found false at the end.  KEEL_EINVAL, with no message, once the scan's
 * transaction or session has ended (keel_abort, keel_session_end).  After
 * another error (KEEL_EEXHAUSTED, I/O) the scan has not moved: called
 * again, it goes on with the row it could not return. */
KEEL_API keel_status keel_scan_next(keel_scan *sc, keel_value *out, bool *found);

/*
 * Changes the scan's current row, the version its last keel_scan_next()
 * returned, as PostgreSQL's WHERE CURRENT OF does: keel_scan_update()
 * replaces it by values (one per column, as for keel_insert), and
 * keel_scan_delete() deletes it.  For a table with a primary key or
 * without one.  They are row calls of the scan's statement (see
 * "Statements" above), and need the scan to run in an explicit
 * transaction (KEEL_EINVAL otherwise); KEEL_EINVAL also when the scan has
 * no current row (before its first row, after its end, or once the row
 * was changed through it) and for a scan of a system catalog.  Otherwise as keel_update() and keel_delete()
 * (ROW EXCLUSIVE on the table; KEEL_EUNIQUE for a new key of a unique
 * index that is taken, checked before anything changes; KEEL_ENOENT for a
 * row changed by the statement already; KEEL_ESERIALIZE, or under read
 * committed the waits, KEEL_ENOENT and KEEL_ECHANGED described with
 * keel_set_isolation()).  After KEEL_ECHANGED the row stays current, and
 * once keel_fetch_changed() has returned its newest version, the scan's
 * next keel_scan_update() or keel_scan_delete() changes that version
 * instead of the scan's row; the scan's next keel_scan_next() ends that.
 * KEEL_EINVAL, with no message, once the scan's transaction or session has
 * ended (or with sc NULL).
 */
KEEL_API keel_status keel_scan_update(keel_scan *sc, const keel_value *values);
KEEL_API keel_status keel_scan_delete(keel_scan *sc);

/* Ends a scan and frees it (NULL is fine); also one whose transaction or
 * session ended first.  The session's message (keel_session_error()) is
 * left as it was. */
KEEL_API void keel_scan_end(keel_scan *sc);

/* ---- bulk loading ---- */

/*
 * Supplies the next row of a load: fills values (one per column, as for
 * keel_insert; strings must stay valid until the next call) and returns
 * KEEL_OK, or sets *done to true at the end.  Any other status stops the
 * load, which then fails with that status.
 */
typedef keel_status (*keel_load_fn)(void *ctx, keel_value *values, bool *done);

/*
 * Creates a table as keel_create_table() does and fills it with the rows
 * next supplies, the fast way (PostgreSQL's COPY FREEZE into a table
 * created in the same transaction): rows are appended through a bulk-write
 * ring and written frozen, visible to everyone once the table itself is
 * (nobody can reach them before: the table is new, and an abort leaves
 * them unreachable in a file no relation owns); the primary key is built at the
 * end from the keys in one pass (sorted first unless they arrived in
 * ascending order).  *nrows (may be NULL) gets the number of rows loaded.
 * Errors: those of keel_create_table() and keel_insert() (KEEL_EUNIQUE,
 * naming the index, if two rows have equal primary keys), KEEL_ENOMEM, I/O
 * errors, or the status next returned; the table is not created then
 * (inside an explicit transaction, a failure after the argument checks
 * leaves the transaction to be aborted).  The rows and the primary key
 * are not logged: they are written and synced before the call returns,
 * so they are durable once the transaction's commit is.
 */
KEEL_API keel_status keel_load_table(keel_session *s, const char *schema, const char *name,
                    const keel_column *cols, uint16_t ncols,
                    const uint16_t *pkey, uint16_t npkey, keel_load_fn next,
                    void *ctx, uint64_t *nrows);

/*
 * Catalog cache tuning for one session, overriding the database's options:
 * prune_min_age in seconds (-1 disables pruning by age), memory_target in
 * bytes (0 disables it).  KEEL_EINVAL for a min age below -1.  Takes
 * effect at once (entries over a lowered target go at the next addition).
 */
KEEL_API keel_status keel_session_set_cache_options(keel_session *s, int32_t prune_min_age,
                                   uint64_t memory_target);

/* Whether the session's commits wait until their commit record is
 * durable, overriding the database's synchronous_commit for this session
 * (PostgreSQL's SET synchronous_commit). */
KEEL_API void keel_session_set_synchronous_commit(keel_session *s, bool on);

/* What a session's catalog cache holds and did since the session began. */
typedef struct keel_cache_stats {
    uint64_t bytes;          /* all memory the cache holds */
    uint64_t positive_bytes; /* of it, entries for rows that exist */
    uint64_t negative_bytes; /* of it, entries remembering a miss */
    uint64_t list_bytes;     /* of it, list results */
    uint64_t entries;        /* positive + negative */
    uint64_t negative_entries;
    uint64_t hits;          /* lookups answered by a positive entry */
    uint64_t negative_hits; /* lookups answered by a negative entry */
    uint64_t misses;        /* lookups that read the catalogs */
    uint64_t list_hits;     /* list lookups answered by a cached list */
    uint64_t list_misses;   /* list lookups that read the catalogs */
    uint64_t evictions;     /* entries dropped for the memory target */
    uint64_t age_prunes;    /* entries dropped for age */
    uint64_t invalidations; /* entries and lists dropped by catalog changes */
    uint64_t resets;        /* whole-cache resets */
    /* What the session's cache memory blocks take: the pieces of up to
     * 1 KiB that bytes counts, rounded up to 16 bytes, in slabs of one
     * size each, with the slabs' headers and unused ends, pieces and
     * slabs freed for reuse, and the newest block's unused slabs.  Kept
     * until the session ends. */
    uint64_t block_bytes;
} keel_cache_stats;

KEEL_API void keel_session_cache_stats(const keel_session *s, keel_cache_stats *out);

/* Column count of a table (KEEL_ENOENT), for callers sizing value arrays. */
KEEL_API keel_status keel_table_columns(keel_session *s, const char *schema, const char *table,
                       uint16_t *ncols);

/* The type of a table's column, in *type (unchanged on error):
 * KEEL_ENOENT for the table or the column, KEEL_EINVAL for an empty name
 * or a system catalog, KEEL_ETOOBIG for a long name. */
KEEL_API keel_status keel_column_type(keel_session *s, const char *schema, const char *table,
                     const char *column, keel_type *type);

/* A table's shape, as keel_table_describe() gives it. */
typedef struct keel_table_info {
    uint32_t oid;        /* the table's object id */
    uint16_t ncols;      /* its columns */
    uint16_t npkey;      /* columns in its primary key, 0 if none */
    uint16_t pkey[16];   /* the primary key's column numbers, 1-based */
    uint16_t nindexes;   /* its indexes, the primary key's included */
    char pkey_name[KEEL_NAME_LEN]; /* the primary key's index, "" if none */
} keel_table_info;

/* One column of a table (keel_table_describe()). */
typedef struct keel_column_info {
    char name[KEEL_NAME_LEN]; /* NUL-terminated */
    keel_type type;
    uint16_t charlen; /* n of char(n) or of varchar(n) (text), else 0 */
    bool notnull;
} keel_column_info;

/*
 * Describes table schema.name (schema NULL: the search path, keel_catalog
 * then public, as keel_select_column()) as the transaction sees it: *info,
 * and the first min(ncols, max_cols) columns in cols (cols may be NULL
 * when max_cols is 0).  KEEL_ENOENT (schema or table, or the name is an
 * index's), KEEL_EINVAL for an empty name, KEEL_ETOOBIG for a long one.
 */
KEEL_API keel_status keel_table_describe(keel_session *s, const char *schema,
                                         const char *table,
                                         keel_table_info *info,
                                         keel_column_info *cols,
                                         uint16_t max_cols);

/* One index of a table (keel_table_indexes()). */
typedef struct keel_index_info {
    char name[KEEL_NAME_LEN]; /* NUL-terminated */
    uint16_t nkeys;           /* its key columns */
    uint16_t keys[16];        /* their column numbers, 1-based */
    bool unique;
    bool primary;
} keel_index_info;

/*
 * The indexes of table schema.name (as keel_table_describe() finds it):
 * their number in *n, and the first min(*n, max) in out (which may be
 * NULL when max is 0), in the order of their creation.  Errors as
 * keel_table_describe()'s.
 */
KEEL_API keel_status keel_table_indexes(keel_session *s, const char *schema,
                                        const char *table, keel_index_info *out,
                                        uint16_t max, uint16_t *n);

/* The row count the table's last keel_analyze() recorded (0 if it was
 * never analyzed, as for an empty table) (KEEL_ENOENT). */
KEEL_API keel_status keel_table_rows(keel_session *s, const char *schema, const char *table,
                    double *rows);

/* What a relation's files hold (keel_relation_size()). */
typedef struct keel_relation_sizes {
    uint64_t bytes;       /* the relation's own file */
    uint64_t index_bytes; /* a table's indexes' files together; 0 for an index */
    bool index;           /* the relation is an index */
} keel_relation_sizes;

/*
 * The size on disk of relation oid (a table, an index or a system
 * catalog) as the transaction sees it, as PostgreSQL's pg_relation_size()
 * and pg_indexes_size() report theirs: what its file holds, in whole
 * 8192-byte blocks (a block enters the file when the relation grows by
 * it, before its contents are written back from the buffer pool; 0 for
 * a relation without a file), and for a table the same of each of its
 * indexes.  Locks the table (an index's table) in ACCESS SHARE.  *found
 * is false, and the call succeeds, when the transaction sees no relation
 * oid, or when a drop of it committed while the lock was waited for.
 * Errors: the lock's (KEEL_ELOCKTIMEOUT, KEEL_EDEADLOCK), KEEL_ECORRUPT
 * for catalog rows that disagree, I/O errors.
 */
KEEL_API keel_status keel_relation_size(keel_session *s, uint32_t oid,
                                        keel_relation_sizes *out, bool *found);

/*
 * The bytes of every relation file in the database's directory, the
 * commit log's and those of dropped relations that the clean close is
 * yet to remove included, as PostgreSQL's pg_database_size() counts the
 * files of its database's directory (the write-ahead log and the control
 * file are not counted).  Reads the directory, whatever the transaction
 * sees.  KEEL_EIO if it cannot be read.
 */
KEEL_API keel_status keel_database_size(keel_session *s, uint64_t *bytes);

/* ---- checking ---- */

/* Receives one problem, or (note true) one note, as a line (no newline)
 * naming the relation, and the file and block concerned where there is
 * one. */
typedef void (*keel_check_fn)(void *ctx, bool note, const char *line);

/*
 * Checks the database in dir, which may not be open anywhere (its lock
 * sees to that), as `keel check DIR` does.  A database a crash left is
 * first recovered (an open for writing and a clean close), if its
 * directory can be written; then it is opened read-only and verified:
 *   - that every relation keel_class lists has its schema, and an index
 *     its table;
 *   - every block of every relation file (the commit log, the catalogs,
 *     every table and index): checksum and page header, and that every
 *     file keel_class names exists;
 *   - every heap page's structure, and every tuple of every table decoded
 *     as a row of its table, its transaction ids below the control file's
 *     limit;
 *   - that no catalog row gives an object an id at or past the control
 *     file's object id limit;
 *   - every commit-log status, every B-tree's structure;
 *   - that each table and its indexes agree: every index entry points to
 *     a heap tuple, every heap tuple is indexed exactly once by each
 *     index, and every entry a unique check marked dead points to a
 *     tuple that is dead.
 * Each problem goes to fn (which may be NULL), and their number to
 * *problems; notes, what is not damage itself but may be its sign (a
 * file named as a relation's that no relation owns, a crash that was
 * recovered), go to fn too, and their number to *notes (notes may be
 * NULL).  Returns KEEL_OK when the check ran, whatever it found; else the
 * error that kept it from running, with the message in err: KEEL_ENOENT
 * (not a database), KEEL_EBUSY (open elsewhere), KEEL_ENOMEM, I/O
 * errors.  A control file or catalog too damaged to open is a problem
 * found.  Threads: any; fn is called on the calling thread.
 */
KEEL_API keel_status keel_check(const char *dir, keel_check_fn fn, void *ctx,
                                uint64_t *problems, uint64_t *notes,
                                keel_error *err);

#ifdef __cplusplus
}
#endif
#endif /* KEEL_KEEL_H */
