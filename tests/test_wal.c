/*
 * test_wal.c: the write-ahead log's failures and damage.
 *
 * - A failed write or sync of the log (EIO, ENOSPC, a short write): the
 *   commit waiting on it is not acknowledged, every later write is
 *   refused, reads go on; after a reopen (recovery) every acknowledged
 *   row is there.
 * - A record damaged in the middle of the log, followed by records that
 *   say it was durable: the open refuses, naming the segment and offset.
 *   The same damage at the log's unsynced tail ends replay quietly.  So
 *   does a damaged record in a hand-made log whose next valid record lies
 *   past a run of zeros (also across a block's end, and across a segment
 *   of zeros into the next): corrupt if that record says it was durable,
 *   the log's end if not.
 */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/control.h"
#include "engine/engine.h"
#include "port/crc32c.h"
#include "port/error.h"
#include "storage/buf_log.h"
#include "storage/fault.h"
#include "txn/clog.h"
#include "txn/txn.h"
#include "wal/wal.h"

static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                   {"v", KEEL_INT4, 0, true}};

static keel_db_options opts(const char *dir)
{
    keel_db_options o;

    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 8;
    return o;
}

static int insert(keel_session *s, int32_t id)
{
    keel_value v[2] = {{.v.i4 = id}, {.v.i4 = id * 7}};

    return keel_insert(s, NULL, "t", v);
}

static bool present(keel_session *s, int32_t id)
{
    keel_value key = {.v.i4 = id}, out[2];
    bool found = false;

    assert_int_equal(keel_lookup(s, NULL, "t", &key, out, &found), KEEL_OK);
    if (found)
        assert_int_equal(out[1].v.i4, id * 7);
    return found;
}

/* A database with table t holding rows 1..n, closed cleanly. */
static char *make_db(int n)
{
    char *dir = tu_mkdtemp();
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    uint16_t pk = 1;

    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", cols, 2, &pk, 1), KEEL_OK);
    for (int i = 1; i <= n; i++)
        assert_int_equal(insert(s, i), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    return dir;
}

static void check_rows(const char *dir, int from, int to, bool want)
{
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    for (int i = from; i <= to; i++)
        if (present(s, i) != want)
            fail_msg("row %d is %s", i, want ? "missing" : "there");
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
}

/*
 * The failing side of log_failure(), in a child (a failed log leaves a
 * database only a crash can end: its close cannot checkpoint).  Returns
 * the exit status: 0 if everything behaved, else which step did not.
 */
static int fail_in_child(const char *dir, fault_op op, fault_kind kind)
{
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    keel_session *s, *s2;
    keel_value key = {.v.i4 = 5}, out[2];
    bool found = false;
    int rc;

    if (keel_db_open(&o, &db, &e) != KEEL_OK ||
        keel_session_begin(db, &s, &e) != KEEL_OK ||
        keel_session_begin(db, &s2, &e) != KEEL_OK)
        return 10;
    if (insert(s, 11) != KEEL_OK) /* acknowledged */
        return 11;
    /* A transaction running when the log fails, which then aborts. */
    if (keel_begin(s2) != KEEL_OK || insert(s2, 14) != KEEL_OK)
        return 16;
    fault_arm(op, kind, 0, 1, 0);
    rc = insert(s, 12);
    fault_disarm_all();
    /* Not acknowledged, and the database takes no more changes. */
    if (rc == KEEL_OK || strstr(keel_session_error(s), "log segment") == NULL)
        return 12;
    if (insert(s, 13) == KEEL_OK ||
        strstr(keel_session_error(s), "write-ahead log failed") == NULL)
        return 13;
    /* Reads go on. */
    if (keel_lookup(s, NULL, "t", &key, out, &found) != KEEL_OK || !found)
        return 14;
    /* The abort ends the transaction, and says that it could not be
     * recorded: its row stays invisible all the same. */
    if (keel_abort(s2) == KEEL_OK ||
        strstr(keel_session_error(s2), "could not be recorded") == NULL)
        return 17;
    found = true;
    key.v.i4 = 14;
    if (keel_lookup(s, NULL, "t", &key, out, &found) != KEEL_OK || found)
        return 18;
    keel_session_end(s2);
    keel_session_end(s);
    /* No page may be written: the close's checkpoint fails. */
    if (keel_db_close(db, &e) == KEEL_OK)
        return 15;
    return 0;
}

/* One kind of log failure, on the first call of op after a commit. */
static void log_failure(fault_op op, fault_kind kind)
{
    char *dir = make_db(10);
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fail_in_child(dir, op, kind));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("the failing side stopped at step %d", WEXITSTATUS(status));
    /* Reopened (recovered): every acknowledged row, none refused. */
    check_rows(dir, 1, 11, true);
    check_rows(dir, 13, 14, false);
    tu_dir_remove(dir);
}

static void test_log_write_eio(void **state)
{
    (void)state;
    log_failure(FAULT_OP_WAL_WRITE, FAULT_EIO);
}

static void test_log_write_enospc(void **state)
{
    (void)state;
    log_failure(FAULT_OP_WAL_WRITE, FAULT_ENOSPC);
}

static void crash_after_rows(const char *dir, int from, int to, bool shorts);

/* A short write of the log is completed, not an error: the commits it
 * carried are acknowledged and survive a crash. */
static void test_log_write_short(void **state)
{
    char *dir = make_db(10);

    (void)state;
    crash_after_rows(dir, 11, 20, true);
    check_rows(dir, 1, 20, true);
    tu_dir_remove(dir);
}

/*
 * A session that turns synchronous_commit off is acknowledged without a
 * sync: with every log sync failing, its commit still returns at once;
 * turned back on, a commit waits for the sync and so fails.  In a child,
 * as the failed log leaves the database to a crash.
 */
static int async_in_child(const char *dir)
{
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    int rc = KEEL_OK;

    if (keel_db_open(&o, &db, &e) != KEEL_OK ||
        keel_session_begin(db, &s, &e) != KEEL_OK)
        return 10;
    keel_session_set_synchronous_commit(s, false);
    fault_arm(FAULT_OP_WAL_SYNC, FAULT_EIO, 0, 1, 0);
    if (insert(s, 11) != KEEL_OK)
        return 11;
    keel_session_set_synchronous_commit(s, true);
    for (int32_t i = 12; i < 1000 && rc == KEEL_OK; i++)
        rc = insert(s, i);
    fault_disarm_all();
    return rc == KEEL_OK ? 12 : 0;
}

static void test_synchronous_commit_per_session(void **state)
{
    char *dir = make_db(10);
    pid_t pid;
    int status;

    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(async_in_child(dir));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("the asynchronous side stopped at step %d",
                 WEXITSTATUS(status));
    /* Reopened: what was acknowledged before the failure is there. */
    check_rows(dir, 1, 10, true);
    tu_dir_remove(dir);
}

static void test_log_sync_eio(void **state)
{
    (void)state;
    log_failure(FAULT_OP_WAL_SYNC, FAULT_EIO);
}

/* Commits rows from..to in a child that then dies without a close;
 * with shorts, every write of the log comes back short first. */
static void crash_after_rows(const char *dir, int from, int to, bool shorts)
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        keel_db_options o = opts(dir);
        keel_error e;
        keel_db *db;
        keel_session *s;
        if (keel_db_open(&o, &db, &e) != KEEL_OK ||
            keel_session_begin(db, &s, &e) != KEEL_OK)
            _exit(1);
        if (shorts)
            fault_arm(FAULT_OP_WAL_WRITE, FAULT_SHORT, 0, 1000, 0);
        for (int i = from; i <= to; i++)
            if (insert(s, i) != KEEL_OK)
                _exit(2);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A transaction's end is one bodiless WAL_XACT_END record of 24 bytes
 * (WAL_INFO_COMMIT or WAL_INFO_ABORT) once its commit log page has been
 * logged since the redo pointer, the first end after it a WAL_PAGES
 * record carrying the page whole; after a crash, recovery replays them:
 * the committed rows are there, the aborted one is not, and the commit
 * log says so of each transaction.
 */
static void test_transaction_ends_replayed(void **state)
{
    char *dir = make_db(5);
    keel_db_options o = opts(dir);
    control_data c;
    wal_reader *r;
    const wal_record *h;
    const char *b;
    keel_error e;
    keel_db *db;
    keel_session *s;
    kerr err;
    pid_t pid;
    int status, rc, pages_commits = 0, bare_commits = 0, bare_aborts = 0;
    uint32_t aborted = 0;

    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (keel_db_open(&o, &db, &e) != KEEL_OK ||
            keel_session_begin(db, &s, &e) != KEEL_OK)
            _exit(1);
        for (int i = 6; i <= 30; i++) {
            if (i == 21) {
                if (keel_begin(s) != KEEL_OK || insert(s, i) != KEEL_OK ||
                    keel_abort(s) != KEEL_OK)
                    _exit(3);
            } else if (insert(s, i) != KEEL_OK) {
                _exit(2);
            }
        }
        _exit(0); /* no close: a crash */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    assert_int_equal(wal_reader_open(dir, c.redo_lsn, &r, &err), KEEL_OK);
    while ((rc = wal_reader_next(r, &h, &b, &err)) == KEEL_OK) {
        if (h->type == WAL_PAGES && h->info == WAL_INFO_COMMIT) {
            /* Only the first: the page whole, since the redo pointer. */
            assert_int_equal(bare_commits + bare_aborts, 0);
            pages_commits++;
        } else if (h->type == WAL_XACT_END) {
            assert_int_equal(h->len, WAL_HDR_SIZE);
            assert_int_equal(h->body_len, 0);
            if (h->info == WAL_INFO_ABORT) {
                bare_aborts++;
                aborted = h->xid;
            } else {
                assert_int_equal(h->info, WAL_INFO_COMMIT);
                bare_commits++;
            }
        }
    }
    assert_int_equal(rc, KEEL_EEOF);
    wal_reader_close(r);
    assert_int_equal(pages_commits, 1);
    assert_int_equal(bare_commits, 23);
    assert_int_equal(bare_aborts, 1);
    assert_true(aborted >= XID_FIRST_NORMAL);

    /* Recovered: without the records' redo, every row of the child would
     * read as its transaction's in progress, that is aborted. */
    check_rows(dir, 1, 20, true);
    check_rows(dir, 21, 21, false);
    check_rows(dir, 22, 30, true);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    {
        clog *cl = txn_mgr_clog(db->txn);
        buf_session *bs;
        xid_status st = XID_STATUS_IN_PROGRESS;
        assert_int_equal(buf_session_create(db->pool, &bs, &err), KEEL_OK);
        assert_int_equal(clog_get(cl, bs, aborted, &st, &err), KEEL_OK);
        assert_int_equal(st, XID_STATUS_ABORTED);
        assert_int_equal(clog_get(cl, bs, aborted + 1, &st, &err), KEEL_OK);
        assert_int_equal(st, XID_STATUS_COMMITTED);
        buf_session_destroy(bs);
    }
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/* The blocks of a WAL_PAGES record (test_update_across_pages_replayed). */
typedef struct rec_blocks {
    int n;
    buf_log_block b[4];
} rec_blocks;

static void on_rec_block(void *arg, const buf_log_block *b, uint32_t len)
{
    rec_blocks *rb = arg;

    (void)len;
    if (rb->n < 4)
        rb->b[rb->n] = *b;
    rb->n++;
}

/*
 * An update whose row's page is full puts the new version on another page
 * locked beside it: the claim, the new version and the link are one
 * record of both blocks, which recovery replays after a crash.
 */
static void test_update_across_pages_replayed(void **state)
{
    char *dir = make_db(400); /* block 0 full, block 1 not */
    keel_db_options o = opts(dir);
    control_data c;
    wal_reader *r;
    const wal_record *h;
    const char *b;
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_value key = {.v.i4 = 1}, out[2];
    bool found = false;
    kerr err;
    pid_t pid;
    int status, rc, updates = 0, inserts = 0;

    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        keel_value v[2] = {{.v.i4 = 1}, {.v.i4 = 12345}};
        if (keel_db_open(&o, &db, &e) != KEEL_OK ||
            keel_session_begin(db, &s, &e) != KEEL_OK)
            _exit(1);
        if (keel_update(s, NULL, "t", &key, v) != KEEL_OK)
            _exit(2);
        _exit(0); /* no close: a crash */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    assert_int_equal(wal_reader_open(dir, c.redo_lsn, &r, &err), KEEL_OK);
    while ((rc = wal_reader_next(r, &h, &b, &err)) == KEEL_OK) {
        rec_blocks rb = {0};
        if (h->type != WAL_PAGES)
            continue;
        assert_int_equal(buf_log_blocks(h, b, on_rec_block, &rb, &err),
                         KEEL_OK);
        if (h->info == WAL_INFO_HEAP_INSERT)
            inserts++;
        if (h->info != WAL_INFO_HEAP_UPDATE)
            continue;
        updates++;
        assert_int_equal(rb.n, 2);
        assert_int_equal(rb.b[0].rel, rb.b[1].rel);
        assert_int_equal(rb.b[0].blk, 0);
        assert_int_equal(rb.b[1].blk, 1);
    }
    assert_int_equal(rc, KEEL_EEOF);
    wal_reader_close(r);
    assert_int_equal(updates, 1);
    assert_int_equal(inserts, 0);

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_lookup(s, NULL, "t", &key, out, &found), KEEL_OK);
    assert_true(found);
    assert_int_equal(out[1].v.i4, 12345);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    check_rows(dir, 2, 400, true);
    tu_dir_remove(dir);
}

static int set_v(keel_session *s, int32_t id, int32_t v)
{
    keel_value key = {.v.i4 = id}, row[2] = {{.v.i4 = id}, {.v.i4 = v}};

    return keel_update(s, NULL, "t", &key, row);
}

static int32_t v_of(keel_session *s, int32_t id)
{
    keel_value key = {.v.i4 = id}, out[2];
    bool found = false;

    assert_int_equal(keel_lookup(s, NULL, "t", &key, out, &found), KEEL_OK);
    return found ? out[1].v.i4 : -1;
}

/*
 * A rollback to a savepoint takes back inserts, updates (one of a row the
 * transaction had updated before the savepoint, one of a row it updated
 * twice since) and a delete, each as a logged change of its page, and a
 * crash after the commit replays them: the rows are as the commit left
 * them, not as the changes taken back did.
 */
static void test_savepoint_rollback_replayed(void **state)
{
    char *dir = make_db(400);
    keel_db_options o = opts(dir);
    control_data c;
    wal_reader *r;
    const wal_record *h;
    const char *b;
    keel_error e;
    keel_db *db;
    keel_session *s;
    kerr err;
    pid_t pid;
    int status, rc, undone = 0;

    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint32_t level = 0;
        if (keel_db_open(&o, &db, &e) != KEEL_OK ||
            keel_session_begin(db, &s, &e) != KEEL_OK)
            _exit(1);
        if (keel_begin(s) != KEEL_OK || set_v(s, 1, 111) != KEEL_OK)
            _exit(2);
        if (keel_savepoint(s, &level) != KEEL_OK || level != 1)
            _exit(3);
        if (insert(s, 1000) != KEEL_OK || insert(s, 1001) != KEEL_OK ||
            set_v(s, 2, 222) != KEEL_OK || set_v(s, 1, 999) != KEEL_OK ||
            set_v(s, 1, 998) != KEEL_OK ||
            keel_delete(s, NULL, "t",
                        &(keel_value){.v.i4 = 3}) != KEEL_OK)
            _exit(4);
        if (keel_rollback_to_savepoint(s, 1) != KEEL_OK)
            _exit(5);
        if (v_of(s, 1) != 111 || v_of(s, 2) != 14 || v_of(s, 3) != 21 ||
            v_of(s, 1000) != -1)
            _exit(6);
        if (insert(s, 1002) != KEEL_OK || keel_commit(s) != KEEL_OK)
            _exit(7);
        _exit(0); /* no close: a crash */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    /* Two inserts, two updates' two versions each... */
    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    assert_int_equal(wal_reader_open(dir, c.redo_lsn, &r, &err), KEEL_OK);
    while ((rc = wal_reader_next(r, &h, &b, &err)) == KEEL_OK)
        if (h->type == WAL_PAGES && h->info == WAL_INFO_HEAP_UNDO)
            undone++;
    assert_int_equal(rc, KEEL_EEOF);
    wal_reader_close(r);
    /* 1000, 1001; row 2's two versions; row 1's second and third
     * versions and the claims on its first and second; row 3's claim. */
    assert_int_equal(undone, 9);

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(v_of(s, 1), 111);
    assert_int_equal(v_of(s, 2), 14);
    assert_int_equal(v_of(s, 3), 21);
    assert_int_equal(v_of(s, 1000), -1);
    assert_int_equal(v_of(s, 1001), -1);
    assert_int_equal(v_of(s, 1002), 1002 * 7);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    check_rows(dir, 4, 400, true);
    tu_dir_remove(dir);
}

/* The LSN of the n-th record after the redo pointer, and the end. */
static void nth_record(const char *dir, int n, uint64_t *lsn, uint64_t *end)
{
    control_data c;
    wal_reader *r;
    const wal_record *h;
    const char *b;
    kerr err;
    int i = 0, rc;

    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    assert_int_equal(wal_reader_open(dir, c.redo_lsn, &r, &err), KEEL_OK);
    *lsn = 0;
    while ((rc = wal_reader_next(r, &h, &b, &err)) == KEEL_OK)
        if (i++ == n)
            *lsn = h->lsn;
    assert_int_equal(rc, KEEL_EEOF);
    *end = wal_reader_end(r);
    wal_reader_close(r);
    assert_true(*lsn != 0);
}

/* Flips a byte of the log at lsn + off. */
static void damage(const char *dir, uint64_t lsn)
{
    char path[600];
    unsigned char byte;
    int fd;

    snprintf(path, sizeof(path), "%s/%s/%016" PRIX64, dir, WAL_DIR_NAME,
             lsn / WAL_SEG_SIZE);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &byte, 1, (off_t)(lsn % WAL_SEG_SIZE)), 1);
    byte ^= 0x40;
    assert_int_equal(pwrite(fd, &byte, 1, (off_t)(lsn % WAL_SEG_SIZE)), 1);
    close(fd);
}

static void test_corrupt_record_in_the_middle(void **state)
{
    char *dir = make_db(5);
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    uint64_t lsn, end;

    (void)state;
    crash_after_rows(dir, 6, 60, false);
    nth_record(dir, 3, &lsn, &end);
    damage(dir, lsn + WAL_HDR_SIZE + 2);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_ECORRUPT);
    assert_non_null(strstr(e.msg, "log segment"));
    assert_non_null(strstr(e.msg, "offset"));
    tu_dir_remove(dir);
}

static void test_torn_tail_ends_quietly(void **state)
{
    char *dir = make_db(5);
    uint64_t lsn, end, last = 0;
    control_data c;
    wal_reader *r;
    const wal_record *h;
    const char *b;
    kerr err;

    (void)state;
    crash_after_rows(dir, 6, 20, false);
    /* The last record, damaged: nothing after it says it was durable,
     * so it is a torn tail, and the rows before it are all there. */
    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    assert_int_equal(wal_reader_open(dir, c.redo_lsn, &r, &err), KEEL_OK);
    while (wal_reader_next(r, &h, &b, &err) == KEEL_OK)
        last = h->lsn;
    wal_reader_close(r);
    nth_record(dir, 0, &lsn, &end);
    damage(dir, last + WAL_HDR_SIZE);
    check_rows(dir, 1, 19, true);
    tu_dir_remove(dir);
}

/* A table made, committed, then the power fails before its file's
 * directory entry is on disk (simulated: the file removed): the open
 * replays the log's record of the file and makes it again. */
static void test_file_create_replayed(void **state)
{
    char *dir = make_db(1);
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    char path[600];
    uint16_t pk = 1;
    bool found;
    pid_t pid;
    int status;

    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (keel_db_open(&o, &db, &e) != KEEL_OK ||
            keel_session_begin(db, &s, &e) != KEEL_OK ||
            keel_create_table(s, NULL, "empty", cols, 2, &pk, 1) != KEEL_OK)
            _exit(1);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The newest relation files are the table's and its key's. */
    {
        DIR *d = opendir(dir);
        struct dirent *de;
        unsigned max = 0, rel;
        assert_non_null(d);
        while ((de = readdir(d)) != NULL)
            if (sscanf(de->d_name, "%u", &rel) == 1 && rel > max)
                max = rel;
        closedir(d);
        snprintf(path, sizeof(path), "%s/%u", dir, max - 1);
        assert_int_equal(unlink(path), 0);
    }
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_relation_exists(s, NULL, "empty", &found), KEEL_OK);
    assert_true(found);
    {
        keel_value v[2] = {{.v.i4 = 1}, {.v.i4 = 2}};
        assert_int_equal(keel_insert(s, NULL, "empty", v), KEEL_OK);
    }
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/*
 * A record built against a redo pointer that a checkpoint moved before
 * the record's place: its space becomes a filler (WAL_NOOP, the whole
 * length, valid to a reader), the caller is told the new pointer
 * (KEEL_EBUSY), and the log reads on past it.  The counters count the
 * filler as a record, without the images of the record it replaced.
 */
static void test_moved_redo_gives_filler(void **state)
{
    char *dir = tu_mkdtemp();
    char body[3000];
    struct iovec part = {body, sizeof(body)};
    wal_options wo;
    wal *w;
    wal_reader *r;
    const wal_record *h;
    const char *b;
    uint64_t redo, end1, end2, end3;
    wal_fpi two = {2, 1500}, one = {1, 1000};
    wal_stats st;
    kerr err;

    (void)state;
    memset(body, 0x5a, sizeof(body));
    wal_options_init(&wo);
    assert_int_equal(wal_create(dir, &err), KEEL_OK);
    assert_int_equal(wal_open(dir, WAL_FIRST_LSN, WAL_FIRST_LSN, false, false,
                              &wo, &w, &err),
                     KEEL_OK);
    redo = wal_redo_hint(w);
    assert_int_equal(wal_insert(w, 0, WAL_PAGES, 0, 7, &part, 1, sizeof(body),
                                &two, &redo, &end1, &err),
                     KEEL_OK);
    assert_int_equal(wal_redo_begin(w), end1); /* a checkpoint begins */
    assert_int_equal(wal_insert(w, 0, WAL_PAGES, 0, 8, &part, 1, sizeof(body),
                                &two, &redo, &end2, &err),
                     KEEL_EBUSY);
    assert_int_equal(redo, end1);
    assert_int_equal(wal_insert(w, 0, WAL_PAGES, 0, 9, &part, 1, sizeof(body),
                                &one, &redo, &end3, &err),
                     KEEL_OK);
    assert_int_equal(wal_flush(w, end3, &err), KEEL_OK);
    /* The counters: three records, the filler's images not counted. */
    wal_stats_read(w, &st);
    assert_int_equal(st.records, 3);
    assert_int_equal(st.fpi, 3);
    assert_int_equal(st.fpi_bytes, 2500);
    assert_int_equal(st.bytes, end3 - WAL_FIRST_LSN);
    assert_int_equal(st.insert_lsn, end3);
    assert_true(st.syncs >= 1);
    assert_true(st.writes >= 1);
    assert_true(st.reset_ns > 0);
    wal_close(w);

    assert_int_equal(wal_reader_open(dir, WAL_FIRST_LSN, &r, &err), KEEL_OK);
    assert_int_equal(wal_reader_next(r, &h, &b, &err), KEEL_OK);
    assert_int_equal(h->xid, 7);
    assert_int_equal(wal_reader_next(r, &h, &b, &err), KEEL_OK);
    assert_int_equal(h->type, WAL_NOOP);
    assert_int_equal(h->lsn, end1);
    assert_int_equal(h->lsn + h->len, end2);
    for (uint32_t i = 0; i < h->body_len; i++)
        assert_int_equal(b[i], 0);
    assert_int_equal(wal_reader_next(r, &h, &b, &err), KEEL_OK);
    assert_int_equal(h->xid, 9);
    assert_int_equal(h->type, WAL_PAGES);
    assert_memory_equal(b, body, sizeof(body));
    assert_int_equal(wal_reader_next(r, &h, &b, &err), KEEL_EEOF);
    assert_int_equal(wal_reader_end(r), end3);
    wal_reader_close(r);
    tu_dir_remove(dir);
}

/* ---- a block logged as a copy ------------------------------------------ */

typedef struct seen_blocks {
    int n;
    buf_log_block b;
    uint32_t data_len;
} seen_blocks;

static void on_block(void *arg, const buf_log_block *b, uint32_t data_len)
{
    seen_blocks *sb = arg;
    sb->n++;
    sb->b = *b;
    sb->data_len = data_len;
}

static char *put(char *p, const void *v, size_t n)
{
    memcpy(p, v, n);
    return p + n;
}

/* A record body of one block (relation 16384, block 3) with one range of
 * 4 bytes at 100 and copy c with its middle. */
static uint32_t copy_body(char *body, const buf_log_copy *c)
{
    uint16_t nblocks = 1, off = 100, len = 4;
    uint32_t rel = 16384, blk = 3;
    uint8_t flags = BUF_LOG_COPY, nranges = 1;
    char *p = body;
    uint32_t mid = c->len >= c->prefix + c->suffix
                       ? (uint32_t)(c->len - c->prefix - c->suffix)
                       : 0;

    p = put(p, &nblocks, 2);
    p = put(p, &rel, 4);
    p = put(p, &blk, 4);
    p = put(p, &flags, 1);
    p = put(p, &nranges, 1);
    p = put(p, &off, 2);
    p = put(p, &len, 2);
    p = put(p, c, BUF_LOG_COPY_BYTES);
    p = put(p, "RRRR", 4);
    memset(p, 'M', mid);
    p += mid;
    return (uint32_t)(p - body);
}

static int walk_copy(const buf_log_copy *c, seen_blocks *sb)
{
    char body[256];
    wal_record h;
    kerr err;
    uint32_t n = copy_body(body, c);

    memset(&h, 0, sizeof(h));
    h.len = WAL_HDR_SIZE + n;
    h.body_len = n;
    h.lsn = 4096;
    h.type = WAL_PAGES;
    memset(sb, 0, sizeof(*sb));
    return buf_log_blocks(&h, body, on_block, sb, &err);
}

/*
 * A new version beside its old one is logged as a copy: the bytes
 * between their common prefix and suffix, the rest copied on the page.
 * Redo (buf_log_copy_apply()) makes it again; a record whose copy would
 * leave the page, read what it writes or claim more than its length is
 * malformed.
 */
static void test_block_copy(void **state)
{
    static char page[8192];
    buf_log_copy c = {.dst = 4000, .len = 40, .src = 5000, .prefix = 6,
                      .tail = 5030, .suffix = 10};
    seen_blocks sb;
    char middle[24];

    (void)state;
    for (int i = 0; i < 64; i++)
        page[5000 + i] = (char)('a' + i % 26);
    memset(middle, 'M', sizeof(middle));
    buf_log_copy_apply(page, &c, middle);
    assert_memory_equal(page + 4000, "abcdef", 6);
    assert_memory_equal(page + 4006, middle, 24);
    assert_memory_equal(page + 4030, page + 5030, 10);

    assert_int_equal(walk_copy(&c, &sb), KEEL_OK);
    assert_int_equal(sb.n, 1);
    assert_int_equal(sb.b.rel, 16384);
    assert_int_equal(sb.b.blk, 3);
    assert_int_equal(sb.b.flags, BUF_LOG_COPY);
    assert_int_equal(sb.b.nranges, 1);
    /* The range's 4 bytes, the copy's table and its 24 middle bytes. */
    assert_int_equal(sb.data_len, 4 + BUF_LOG_COPY_BYTES + 24);

    c = (buf_log_copy){8180, 40, 5000, 6, 5030, 10}; /* off the page */
    assert_int_equal(walk_copy(&c, &sb), KEEL_ECORRUPT);
    c = (buf_log_copy){4000, 10, 5000, 6, 5030, 10}; /* more than len */
    assert_int_equal(walk_copy(&c, &sb), KEEL_ECORRUPT);
    c = (buf_log_copy){4000, 40, 4020, 6, 5030, 10}; /* reads what it writes */
    assert_int_equal(walk_copy(&c, &sb), KEEL_ECORRUPT);
    c = (buf_log_copy){4000, 40, 5000, 6, 8190, 10}; /* suffix off the page */
    assert_int_equal(walk_copy(&c, &sb), KEEL_ECORRUPT);
}

/* ---- the record header ------------------------------------------------- */

/*
 * The header's helpers: what wal_hdr_make() packs, wal_hdr_decode() gives
 * back, at every LSN width; the durable gap where it fits, "not known"
 * (claiming nothing) where it does not, and never a claim past what was
 * durable; the CRC covering every field after itself.
 */
static void test_header_round_trip(void **state)
{
    static const uint64_t lsns[] = {WAL_FIRST_LSN, UINT64_C(5) << 32,
                                    (UINT64_C(1) << 48) - 8,
                                    (UINT64_C(7) << 48) + 4096, UINT64_MAX - 7};
    wal_rec_hdr h;
    wal_record d;

    (void)state;
    for (size_t i = 0; i < sizeof(lsns) / sizeof(lsns[0]); i++) {
        uint64_t lsn = lsns[i];
        wal_hdr_make(&h, 1000, lsn, lsn - 4096, 123456789, WAL_PAGES,
                     WAL_INFO_CLOG_EXTEND);
        wal_hdr_decode(&h, lsn, &d);
        assert_int_equal(d.lsn, lsn);
        assert_int_equal(d.len, 1000);
        assert_int_equal(d.body_len, 1000 - WAL_HDR_SIZE);
        assert_int_equal(d.xid, 123456789);
        assert_int_equal(d.type, WAL_PAGES);
        assert_int_equal(d.info, WAL_INFO_CLOG_EXTEND);
        assert_int_equal(d.durable, lsn - 4096);
        assert_true(wal_hdr_at(&h, lsn));
        assert_false(wal_hdr_at(&h, lsn + WAL_ALIGN));
        assert_false(wal_hdr_at(&h, lsn - WAL_SEG_SIZE));
        assert_false(wal_hdr_at(&h, lsn ^ (UINT64_C(1) << 47)));
        /* Only the low 48 bits are kept: a position 2^48 away reads the
         * same (which no stale record of this log can be). */
        assert_true(wal_hdr_at(&h, lsn + (UINT64_C(1) << 48)));
    }
    /* Every type and info byte, beside the LSN's top bits. */
    for (unsigned t = 0; t < 256; t += 51)
        for (unsigned f = 0; f < 256; f += 17) {
            wal_hdr_make(&h, 24, WAL_LSN_MASK & ~UINT64_C(7), 0, 0, (uint8_t)t,
                         (uint8_t)f);
            assert_int_equal(wal_hdr_type(&h), t);
            assert_int_equal(wal_hdr_info(&h), f);
            assert_true(wal_hdr_at(&h, WAL_LSN_MASK & ~UINT64_C(7)));
        }

    /* The durable gap: the largest that fits, and the first that does
     * not, which claims nothing. */
    {
        uint64_t lsn = UINT64_C(5) << 32;
        wal_hdr_make(&h, 24, lsn, lsn - (WAL_GAP_UNKNOWN - 1), 0, 0, 0);
        assert_int_equal(wal_hdr_durable(&h, lsn), lsn - (WAL_GAP_UNKNOWN - 1));
        wal_hdr_make(&h, 24, lsn, lsn - WAL_GAP_UNKNOWN, 0, 0, 0);
        assert_int_equal(wal_hdr_durable(&h, lsn), 0);
        wal_hdr_make(&h, 24, lsn, 0, 0, 0, 0);
        assert_int_equal(wal_hdr_durable(&h, lsn), 0);
        wal_hdr_make(&h, 24, lsn, lsn, 0, 0, 0);
        assert_int_equal(wal_hdr_durable(&h, lsn), lsn);
        /* A durable end past the record cannot be; it claims the
         * record's own position, less than was said, not more. */
        wal_hdr_make(&h, 24, lsn, lsn + 800, 0, 0, 0);
        assert_int_equal(wal_hdr_durable(&h, lsn), lsn);
        /* A small LSN: every gap fits, durable end 0 included. */
        wal_hdr_make(&h, 24, WAL_FIRST_LSN, 0, 0, 0, 0);
        assert_int_equal(wal_hdr_durable(&h, WAL_FIRST_LSN), 0);
    }

    /* The CRC covers every field after it: position, type, info, xid and
     * gap; the length is checked against the bytes read. */
    {
        const char body[8] = "abcdefg";
        uint32_t bc = crc32c_extend(0, body, sizeof(body));
        wal_rec_hdr g;
        wal_hdr_make(&h, 32, WAL_FIRST_LSN, WAL_FIRST_LSN - 64, 9, WAL_PAGES,
                     WAL_INFO_COMMIT);
        wal_hdr_seal(&h, bc);
        assert_int_equal(wal_hdr_crc(&h, bc), h.crc);
        for (size_t off = offsetof(wal_rec_hdr, pos); off < WAL_HDR_SIZE;
             off++) {
            g = h;
            ((unsigned char *)&g)[off] ^= 1;
            assert_true(wal_hdr_crc(&g, bc) != h.crc);
        }
    }
}

/* Writes a record at lsn into dir's log (segment files made as needed,
 * the record split between two where it crosses): header from the
 * helpers, body of n bytes of c; torn: one body byte changed after the
 * CRC was taken.  Returns the next record's LSN. */
static uint64_t put_record(const char *dir, uint64_t lsn, uint64_t durable,
                           char c, uint32_t n, bool torn)
{
    char rec[512];
    uint32_t len = (uint32_t)wal_align(WAL_HDR_SIZE + n), done = 0;
    wal_rec_hdr h;

    assert_true(len <= sizeof(rec));
    memset(rec, 0, sizeof(rec));
    memset(rec + WAL_HDR_SIZE, c, n);
    wal_hdr_make(&h, WAL_HDR_SIZE + n, lsn, durable, 77, WAL_PAGES,
                 WAL_INFO_HEAP_INSERT);
    wal_hdr_seal(&h, crc32c_extend(0, rec + WAL_HDR_SIZE, n));
    memcpy(rec, &h, sizeof(h));
    if (torn)
        rec[WAL_HDR_SIZE + n / 2] ^= 0x40;
    while (done < len) {
        uint64_t at = lsn + done, off = at % WAL_SEG_SIZE;
        uint32_t k = len - done;
        char path[600];
        int fd;
        if (k > WAL_SEG_SIZE - off)
            k = (uint32_t)(WAL_SEG_SIZE - off);
        snprintf(path, sizeof(path), "%s/%s/%016" PRIX64, dir, WAL_DIR_NAME,
                 at / WAL_SEG_SIZE);
        fd = open(path, O_RDWR | O_CREAT, 0600);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, rec + done, k, (off_t)off), (ssize_t)k);
        close(fd);
        done += k;
    }
    return lsn + len;
}

/* Reads dir's log from start to its end: the records read, *end where it
 * ended, and the reader's code (KEEL_EEOF at a quiet end). */
static int read_log(const char *dir, uint64_t start, int *n, uint64_t *end,
                    kerr *err)
{
    wal_reader *r;
    const wal_record *h;
    const char *b;
    int rc;

    *n = 0;
    assert_int_equal(wal_reader_open(dir, start, &r, err), KEEL_OK);
    while ((rc = wal_reader_next(r, &h, &b, err)) == KEEL_OK) {
        assert_int_equal(h->lsn, wal_reader_end(r) - wal_align(h->len));
        (*n)++;
    }
    *end = wal_reader_end(r);
    wal_reader_close(r);
    return rc;
}

/*
 * A valid record copied elsewhere in the log (as a recycled segment's
 * stale bytes would lie) is no record there: its header names another
 * position.  At the tail it ends the log; followed by a record that says
 * the log was durable past it, it is corruption.
 */
static void test_copied_record_rejected(void **state)
{
    char *dir = tu_mkdtemp();
    char body[200];
    struct iovec part = {body, sizeof(body)};
    char rec[WAL_HDR_SIZE + sizeof(body)];
    wal_options wo;
    wal *w;
    uint64_t lsn[4], end;
    kerr err;
    int n, fd;
    char path[600];

    (void)state;
    wal_options_init(&wo);
    assert_int_equal(wal_create(dir, &err), KEEL_OK);
    assert_int_equal(wal_open(dir, WAL_FIRST_LSN, WAL_FIRST_LSN, false, false,
                              &wo, &w, &err),
                     KEEL_OK);
    /* Four records of one size, each flushed: each says the ones before
     * it were durable. */
    lsn[0] = WAL_FIRST_LSN;
    for (int i = 0; i < 4; i++) {
        memset(body, 'a' + i, sizeof(body));
        assert_int_equal(wal_insert(w, 0, WAL_PAGES, 0, (uint32_t)i + 1, &part,
                                    1, sizeof(body), NULL, NULL, &end, &err),
                         KEEL_OK);
        assert_int_equal(wal_flush(w, end, &err), KEEL_OK);
        if (i < 3)
            lsn[i + 1] = end;
    }
    wal_close(w);
    assert_int_equal(read_log(dir, WAL_FIRST_LSN, &n, &end, &err), KEEL_EEOF);
    assert_int_equal(n, 4);

    /* The first record's bytes, whole and valid where they were. */
    snprintf(path, sizeof(path), "%s/%s/%016" PRIX64, dir, WAL_DIR_NAME,
             WAL_FIRST_LSN / WAL_SEG_SIZE);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, rec, sizeof(rec), 0), (ssize_t)sizeof(rec));
    /* Over the last record: the log ends there, quietly. */
    assert_int_equal(
        pwrite(fd, rec, sizeof(rec), (off_t)(lsn[3] % WAL_SEG_SIZE)),
        (ssize_t)sizeof(rec));
    assert_int_equal(read_log(dir, WAL_FIRST_LSN, &n, &end, &err), KEEL_EEOF);
    assert_int_equal(n, 3);
    assert_int_equal(end, lsn[3]);
    /* Over the second: the third says it was durable. */
    assert_int_equal(
        pwrite(fd, rec, sizeof(rec), (off_t)(lsn[1] % WAL_SEG_SIZE)),
        (ssize_t)sizeof(rec));
    close(fd);
    assert_int_equal(read_log(dir, WAL_FIRST_LSN, &n, &end, &err),
                     KEEL_ECORRUPT);
    assert_int_equal(n, 1);
    {
        char want[200];
        snprintf(want, sizeof(want),
                 "log segment %016" PRIX64 " at offset %" PRIu64
                 " holds a damaged record",
                 lsn[1] / WAL_SEG_SIZE, lsn[1] % WAL_SEG_SIZE);
        assert_non_null(strstr(err.msg, want));
    }
    tu_dir_remove(dir);
}

/*
 * The durable gap at the reader: a torn record followed by a valid one
 * ends the log quietly if the valid one's durable end is at or before
 * the torn one, or not known (a gap too large for the header, which
 * claims nothing), and is corruption, named by segment and offset, if it
 * lies past it.  Written by hand past 4 GiB, where a gap can be too
 * large, the torn record crossing into a new segment.
 */
static void test_durable_gap(void **state)
{
    const uint64_t base = (UINT64_C(5) << 32) + 3 * WAL_SEG_SIZE - 512;
    char *dir = tu_mkdtemp();
    uint64_t torn, third, end, claims[6];
    const int rcs[6] = {KEEL_EEOF, KEEL_EEOF,     KEEL_EEOF,
                        KEEL_EEOF, KEEL_ECORRUPT, KEEL_ECORRUPT};
    kerr err;
    int n;

    (void)state;
    assert_int_equal(wal_create(dir, &err), KEEL_OK);
    torn = put_record(dir, base, base, 'x', 400, false);
    third = put_record(dir, torn, base, 'y', 300, true);
    assert_int_equal(torn / WAL_SEG_SIZE + 1, third / WAL_SEG_SIZE);
    claims[0] = 0;                             /* a gap of 5 GiB */
    claims[1] = third - WAL_GAP_UNKNOWN;       /* the first that does not fit */
    claims[2] = third - (WAL_GAP_UNKNOWN - 1); /* the last that does */
    claims[3] = torn;                          /* up to the torn one */
    claims[4] = torn + 1;                      /* past it */
    claims[5] = third;                         /* up to itself (gap 0) */
    for (int i = 0; i < 6; i++) {
        wal_rec_hdr h;
        wal_hdr_make(&h, 100, third, claims[i], 0, 0, 0);
        /* What the header claims: never more than was said; nothing
         * where the gap does not fit. */
        assert_int_equal(wal_hdr_durable(&h, third), i < 2 ? 0 : claims[i]);
        put_record(dir, third, claims[i], 'z', 100, false);
        kerr_clear(&err);
        if (read_log(dir, base, &n, &end, &err) != rcs[i])
            fail_msg("claim %d (durable end %" PRIu64 "): %s", i, claims[i],
                     err.msg);
        assert_int_equal(n, 1);
        if (rcs[i] == KEEL_EEOF) {
            assert_int_equal(end, torn);
        } else {
            char want[200];
            snprintf(want, sizeof(want),
                     "log segment %016" PRIX64 " at offset %" PRIu64
                     " holds a damaged record, which the record at LSN "
                     "%" PRIu64 " says was durable",
                     torn / WAL_SEG_SIZE, torn % WAL_SEG_SIZE, third);
            if (strstr(err.msg, want) == NULL)
                fail_msg("claim %d: %s", i, err.msg);
        }
    }
    /* The torn record repaired: the log reads through. */
    put_record(dir, torn, base, 'y', 300, false);
    assert_int_equal(read_log(dir, base, &n, &end, &err), KEEL_EEOF);
    assert_int_equal(n, 3);
    assert_int_equal(end, third + wal_align(WAL_HDR_SIZE + 100));
    tu_dir_remove(dir);
}

/* Writes a WAL_NOOP record with an 8-byte body at lsn into buf (the log's
 * bytes from `from`), its CRC right unless `damaged`; durable as given. */
static void put_noop(char *buf, uint64_t from, uint64_t lsn, uint64_t durable,
                     bool damaged)
{
    wal_rec_hdr h;
    char *rec = buf + (lsn - from);

    wal_hdr_make(&h, WAL_HDR_SIZE + 8, lsn, durable, 0, WAL_NOOP, 0);
    memcpy(rec + WAL_HDR_SIZE, "8 bytes.", 8);
    wal_hdr_seal(&h, crc32c_extend(0, rec + WAL_HDR_SIZE, 8));
    if (damaged)
        h.crc ^= 1;
    memcpy(rec, &h, sizeof(h));
}

/* Writes len bytes at the log's position lsn into its segment file, made
 * if missing (a file shorter than the write's end is extended). */
static void put_log(const char *dir, uint64_t lsn, const char *bytes,
                    size_t len)
{
    char path[600];
    int fd;

    snprintf(path, sizeof(path), "%s/%s/%016" PRIX64, dir, WAL_DIR_NAME,
             lsn / WAL_SEG_SIZE);
    fd = open(path, O_RDWR | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, bytes, len, (off_t)(lsn % WAL_SEG_SIZE)),
                     (ssize_t)len);
    close(fd);
}

/* What reading a hand-made log from WAL_FIRST_LSN gives after its first
 * record: A (valid), B (damaged) right after it, zeros, and C (valid) at
 * c_lsn, durable as given; the segments are made here, segment 1 of
 * seg1_len bytes (C may cross into segment 2). */
static int tail_after_zeros(uint64_t c_lsn, uint64_t c_durable,
                            uint64_t seg1_len)
{
    char *dir = tu_mkdtemp(), path[600], head[128], c[40];
    uint64_t a = WAL_FIRST_LSN, b = a + wal_align(WAL_HDR_SIZE + 8), split;
    const wal_record *h;
    const char *body;
    wal_reader *r;
    kerr err;
    int fd, rc;

    snprintf(path, sizeof(path), "%s/%s", dir, WAL_DIR_NAME);
    assert_int_equal(mkdir(path, 0700), 0);
    memset(head, 0, sizeof(head));
    put_noop(head, a, a, a, false);
    put_noop(head, a, b, b, true);
    put_log(dir, a, head, sizeof(head));
    snprintf(path, sizeof(path), "%s/%s/%016" PRIX64, dir, WAL_DIR_NAME,
             a / WAL_SEG_SIZE);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)seg1_len), 0);
    close(fd);
    put_noop(c, c_lsn, c_lsn, c_durable, false);
    split = c_lsn + sizeof(c) > 2 * WAL_SEG_SIZE ? 2 * WAL_SEG_SIZE - c_lsn
                                                 : sizeof(c);
    put_log(dir, c_lsn, c, split);
    if (split < sizeof(c))
        put_log(dir, 2 * WAL_SEG_SIZE, c + split, sizeof(c) - split);

    assert_int_equal(wal_reader_open(dir, a, &r, &err), KEEL_OK);
    assert_int_equal(wal_reader_next(r, &h, &body, &err), KEEL_OK);
    assert_int_equal(h->lsn, a);
    rc = wal_reader_next(r, &h, &body, &err);
    assert_int_equal(wal_reader_end(r), b);
    wal_reader_close(r);
    tu_dir_remove(dir);
    return rc;
}

/*
 * A damaged record with a run of zeros after it (the reader passes over
 * such runs in blocks), then a valid one: corruption if that one says the
 * log was durable past the damaged one, else a torn tail; also with the
 * valid record just past a block's end, and crossing into the next
 * segment after a segment of zeros.
 */
static void test_durable_record_after_zeros(void **state)
{
    uint64_t a = WAL_FIRST_LSN, b = a + wal_align(WAL_HDR_SIZE + 8);
    uint64_t at[] = {a + 10000, a + 4096 + 8, a + 8192 - 32 + 8,
                     2 * WAL_SEG_SIZE - 16};

    (void)state;
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        uint64_t len = at[i] > a + WAL_SEG_SIZE / 2 ? WAL_SEG_SIZE : 65536;
        assert_int_equal(tail_after_zeros(at[i], b + 8, len), KEEL_ECORRUPT);
        assert_int_equal(tail_after_zeros(at[i], b, len), KEEL_EEOF);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_write_eio),
        cmocka_unit_test(test_log_write_enospc),
        cmocka_unit_test(test_log_write_short),
        cmocka_unit_test(test_log_sync_eio),
        cmocka_unit_test(test_synchronous_commit_per_session),
        cmocka_unit_test(test_corrupt_record_in_the_middle),
        cmocka_unit_test(test_torn_tail_ends_quietly),
        cmocka_unit_test(test_durable_record_after_zeros),
        cmocka_unit_test(test_file_create_replayed),
        cmocka_unit_test(test_transaction_ends_replayed),
        cmocka_unit_test(test_update_across_pages_replayed),
        cmocka_unit_test(test_savepoint_rollback_replayed),
        cmocka_unit_test(test_moved_redo_gives_filler),
        cmocka_unit_test(test_block_copy),
        cmocka_unit_test(test_header_round_trip),
        cmocka_unit_test(test_copied_record_rejected),
        cmocka_unit_test(test_durable_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
