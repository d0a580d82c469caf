/*
 * test_wal_stats.c: the log's counters (keel_db_wal_stats()) against the
 * log itself.
 *
 * A workload of inserts, updates and deletes from four sessions at once,
 * with a checkpoint in the middle (so that pages are logged whole again
 * and a record may become a filler), runs between two readings of the
 * counters.  The log between the two readings' insert positions is then
 * read back record by record, as `keel wal --stats` reads it: its
 * records, whole page images, their bytes and the bytes of the records
 * must equal the counters' differences exactly.
 */
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/buf_log.h"
#include "wal/wal.h"

#define WRITERS 4
#define ROWS    1500 /* per writer */

static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                   {"v", KEEL_INT4, 0, true},
                                   {"pad", KEEL_TEXT, 0, true}};

static const char pad[] = "0123456789012345678901234567890123456789"
                          "0123456789012345678901234567890123456789";

typedef struct writer_arg {
    keel_db *db;
    int n;
    tu_failures *f;
} writer_arg;

static int put(keel_session *s, int32_t id, int32_t v)
{
    keel_value row[3] = {tu_vi4(id), tu_vi4(v), tu_vstr(pad)};

    return keel_insert(s, NULL, "t", row);
}

/* Writer n: its own key range, inserted in transactions of 50 rows, then
 * every third row updated and every seventh deleted. */
static void *writer_main(void *p)
{
    writer_arg *a = p;
    keel_session *s;
    keel_error e;
    int32_t base = a->n * 100000;

    if (keel_session_begin(a->db, &s, &e) != KEEL_OK) {
        tu_fail(a->f, "session: %s", e.msg);
        return NULL;
    }
    for (int i = 0; i < ROWS && !tu_failed(a->f); i += 50) {
        int rc = keel_begin(s);
        for (int k = i; k < i + 50 && rc == KEEL_OK; k++)
            rc = put(s, base + k, k);
        if (rc == KEEL_OK)
            rc = keel_commit(s);
        if (rc != KEEL_OK)
            tu_fail(a->f, "insert: %s", keel_session_error(s));
    }
    for (int i = 0; i < ROWS && !tu_failed(a->f); i += 3) {
        keel_value key = tu_vi4(base + i);
        keel_value row[3] = {tu_vi4(base + i), tu_vi4(-i), tu_vstr(pad)};
        if (keel_update(s, NULL, "t", &key, row) != KEEL_OK)
            tu_fail(a->f, "update: %s", keel_session_error(s));
    }
    for (int i = 1; i < ROWS && !tu_failed(a->f); i += 7) {
        keel_value key = tu_vi4(base + i);
        if (keel_delete(s, NULL, "t", &key) != KEEL_OK)
            tu_fail(a->f, "delete: %s", keel_session_error(s));
    }
    keel_session_end(s);
    return NULL;
}

typedef struct walked {
    uint64_t images, image_bytes;
} walked;

static void on_block(void *arg, const buf_log_block *b, uint32_t data_len)
{
    walked *w = arg;

    if (b->flags & BUF_LOG_FULL) {
        w->images++;
        w->image_bytes += data_len;
    }
}

static void test_counters_match_the_log(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_wal_stats a, b;
    pthread_t th[WRITERS];
    writer_arg args[WRITERS];
    tu_failures f = TU_FAILURES_INIT;
    uint16_t pk = 1;
    uint64_t records = 0, bytes = 0, noops = 0;
    walked w = {0, 0};
    wal_reader *r;
    const wal_record *h;
    const char *body;
    kerr err;
    int64_t now_us;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 16;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", cols, 3, &pk, 1), KEEL_OK);
    assert_int_equal(keel_checkpoint(db, &e), KEEL_OK);
    keel_db_wal_stats(db, &a);
    /* Counting began at the open, a moment ago. */
    assert_true(a.reset_us <= now_us && a.reset_us > now_us - 60000000);
    assert_true(a.records > 0);

    for (int i = 0; i < WRITERS; i++) {
        args[i] = (writer_arg){db, i, &f};
        assert_int_equal(pthread_create(&th[i], NULL, writer_main, &args[i]),
                         0);
    }
    /* A checkpoint while they write: pages logged whole again. */
    assert_int_equal(keel_checkpoint(db, &e), KEEL_OK);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    tu_failures_check(&f);
    /* A last commit: the log is durable up to it, so all before it can
     * be read back. */
    assert_int_equal(put(s, 999999, 1), KEEL_OK);
    keel_db_wal_stats(db, &b);
    assert_true(b.syncs > a.syncs);
    assert_true(b.writes > a.writes);
    assert_int_equal(b.reset_us, a.reset_us);

    assert_int_equal(wal_reader_open(dir, a.insert_lsn, &r, &err), KEEL_OK);
    while (wal_reader_end(r) < b.insert_lsn) {
        int rc = wal_reader_next(r, &h, &body, &err);
        if (rc != KEEL_OK)
            fail_msg("the log ends at %" PRIu64 " before %" PRIu64 ": %s",
                     wal_reader_end(r), b.insert_lsn, err.msg);
        records++;
        bytes += wal_align(h->len);
        if (h->type == WAL_NOOP)
            noops++;
        if (h->type == WAL_PAGES)
            assert_int_equal(buf_log_blocks(h, body, on_block, &w, &err),
                             KEEL_OK);
    }
    assert_int_equal(wal_reader_end(r), b.insert_lsn);
    wal_reader_close(r);
    print_message("%" PRIu64 " records (%" PRIu64 " fillers), %" PRIu64
                  " images of %" PRIu64 " bytes, %" PRIu64 " bytes\n",
                  records, noops, w.images, w.image_bytes, bytes);
    assert_int_equal(b.records - a.records, records);
    assert_int_equal(b.fpi - a.fpi, w.images);
    assert_int_equal(b.fpi_bytes - a.fpi_bytes, w.image_bytes);
    assert_int_equal(b.bytes - a.bytes, bytes);
    assert_int_equal(b.insert_lsn - a.insert_lsn, bytes);
    /* The workload logged whole pages (after each checkpoint) and more
     * records than it made rows. */
    assert_true(w.images > 0);
    assert_true(records > WRITERS * ROWS);

    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

/* The counters start at zero at every open. */
static void test_counters_start_at_open(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_wal_stats a, b;
    uint16_t pk = 1;

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 8;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", cols, 3, &pk, 1), KEEL_OK);
    for (int i = 0; i < 200; i++)
        assert_int_equal(put(s, i, i), KEEL_OK);
    keel_db_wal_stats(db, &a);
    assert_true(a.records >= 200);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);

    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    keel_db_wal_stats(db, &b);
    /* A clean open logs nothing. */
    assert_int_equal(b.records, 0);
    assert_int_equal(b.fpi, 0);
    assert_int_equal(b.fpi_bytes, 0);
    assert_int_equal(b.bytes, 0);
    assert_true(b.insert_lsn > a.insert_lsn); /* the close's checkpoint */
    assert_true(b.reset_us >= a.reset_us);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    tu_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_match_the_log),
        cmocka_unit_test(test_counters_start_at_open),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
