/*
 * test_powerloss.c: simulated power loss over many crash points.
 *
 * A child process runs a workload that splits B-tree pages, updates
 * rows, changes the catalogs (a table made and dropped every third
 * transaction) and checkpoints now and then, in a pool small enough that
 * pages are written all the time.  The fault layer (storage/powerloss.h)
 * journals every write that no fsync has covered and, at a chosen write
 * or sync, undoes them (all, or a random subset of their 512-byte
 * sectors: torn pages) and ends the child.  The parent then opens the
 * database, which replays the log, and checks:
 *
 *   - every transaction whose commit was acknowledged is there (it
 *     reported them on a pipe after keel_commit() returned);
 *   - no transaction is there in part: each inserted 25 rows into t and
 *     added one to a row of u, so count(t) = 25 * sum(u.v), and t holds
 *     ids 1..count(t), each with v = 7 * id;
 *   - u's rows keep their note, a text that their updates carry over
 *     unchanged: a new version beside its old one is logged as the bytes
 *     that differ from the old one's, which redo must take from the old
 *     one again (heapam.c's update operation);
 *   - the consistency checker finds nothing.
 *
 * The database carries over from round to round, so later rounds replay
 * logs that earlier recoveries wrote after.  KEEL_STRESS_SECONDS runs
 * rounds for that long (at least MIN_ROUND).
 */
#include "testutil.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "port/clock.h"
#include "storage/powerloss.h"

#define BATCH     25
#define U_ROWS    50
#define TXNS      60
#define CRASHED   77
/* Rounds at least: 40, or 20 in the sanitizers' builds, where each
 * round's fork, recovery and check take several times as long. */
#ifdef KEEL_SANITIZER_BUILD
#define MIN_ROUND 20
#else
#define MIN_ROUND 40
#endif

static const keel_column cols[] = {{"id", KEEL_INT4, 0, true},
                                   {"v", KEEL_INT4, 0, true},
                                   {"note", KEEL_TEXT, 0, true}};

/* Row id of u's note, in buf (at least 96 bytes): long enough that most
 * of an update's new version is rebuilt from the old one's bytes. */
static keel_value note_of(int32_t id, char *buf)
{
    int n = snprintf(buf, 96, "row %d of u, which every update of it keeps "
                              "as it is, byte for byte",
                     id);
    return (keel_value){.v.s = {buf, (uint32_t)n}};
}

static keel_db_options opts(const char *dir)
{
    keel_db_options o;

    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 1;
    o.max_sessions = 4;
    return o;
}

static void make_db(const char *dir)
{
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    uint16_t pk = 1;

    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "t", cols, 2, &pk, 1), KEEL_OK);
    assert_int_equal(keel_create_table(s, NULL, "u", cols, 3, &pk, 1), KEEL_OK);
    for (int i = 1; i <= U_ROWS; i++) {
        char buf[96];
        keel_value v[3] = {{.v.i4 = i}, {.v.i4 = 0}, note_of(i, buf)};
        assert_int_equal(keel_insert(s, NULL, "u", v), KEEL_OK);
    }
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
}

/* One transaction of the workload: rows next..next+BATCH-1 into t, one
 * more in u's row k. */
static int txn(keel_session *s, int32_t next, int32_t k)
{
    keel_value key = {.v.i4 = 1 + k % U_ROWS}, out[3];
    bool found;
    int rc = keel_begin(s);

    for (int i = 0; rc == KEEL_OK && i < BATCH; i++) {
        keel_value v[2] = {{.v.i4 = next + i}, {.v.i4 = 7 * (next + i)}};
        rc = keel_insert(s, NULL, "t", v);
    }
    if (rc == KEEL_OK)
        rc = keel_lookup(s, NULL, "u", &key, out, &found);
    if (rc == KEEL_OK) {
        char buf[96];
        keel_value v[3] = {key, {.v.i4 = out[1].v.i4 + 1},
                           note_of(key.v.i4, buf)};
        rc = found ? keel_update(s, NULL, "u", &key, v) : KEEL_ENOENT;
    }
    return rc == KEEL_OK ? (int)keel_commit(s) : rc;
}

/* The child: the workload from row next on, reporting each acknowledged
 * transaction's last row on fd, until the power fails. */
static void child(const char *dir, int fd, int32_t next, uint64_t seed,
                  uint64_t crash_at)
{
    keel_db_options o = opts(dir);
    static const keel_column c1[] = {{"id", KEEL_INT4, 0, true}};
    keel_error e;
    keel_db *db;
    keel_session *s;
    uint16_t pk = 1;
    char name[32], prev[32] = "";

    powerloss_arm(seed, crash_at, CRASHED);
    if (keel_db_open(&o, &db, &e) != KEEL_OK ||
        keel_session_begin(db, &s, &e) != KEEL_OK) {
        fprintf(stderr, "child: open: %s\n", e.msg);
        _exit(1);
    }
    for (int k = 0; k < TXNS; k++) {
        int rc = txn(s, next, k);
        if (rc != KEEL_OK) {
            fprintf(stderr, "child: %s\n", keel_session_error(s));
            _exit(2);
        }
        next += BATCH;
        if (write(fd, &next, sizeof(next)) != sizeof(next))
            _exit(3);
        if (k % 3 == 2) {
            /* Catalog changes: a table made (named after the rows so
             * far: unique), the one this child made before dropped. */
            snprintf(name, sizeof(name), "c%d", next);
            if (keel_create_table(s, NULL, name, c1, 1, &pk, 1) != KEEL_OK) {
                fprintf(stderr, "child: %s\n", keel_session_error(s));
                _exit(4);
            }
            if (prev[0] != '\0' && keel_drop_table(s, NULL, prev) != KEEL_OK)
                _exit(6);
            memcpy(prev, name, sizeof(prev));
        }
        if (k % 10 == 9 && keel_checkpoint(db, &e) != KEEL_OK)
            _exit(5);
    }
    powerloss_crash();
}

static void count_problem(void *ctx, bool note, const char *line)
{
    if (!note) {
        (*(int *)ctx)++;
        fprintf(stderr, "  problem: %s\n", line);
    }
}

/* After a crash: what must hold (above).  Returns the rows in t. */
static int32_t verify(const char *dir, int round, uint64_t seed,
                      int32_t acked)
{
    keel_db_options o = opts(dir);
    keel_error e;
    keel_db *db;
    keel_session *s;
    keel_scan *sc;
    keel_value out[3];
    char buf[96];
    bool found;
    int32_t n = 0, urows = 0;
    int64_t sum = 0;
    uint64_t problems = 0, notes = 0;
    int counted = 0;

    if (keel_db_open(&o, &db, &e) != KEEL_OK)
        fail_msg("round %d (seed %#llx): the open after the crash failed: %s",
                 round, (unsigned long long)seed, e.msg);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(keel_begin(s), KEEL_OK);
    assert_int_equal(keel_scan_begin(s, NULL, "t", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    while (keel_scan_next(sc, out, &found) == KEEL_OK && found) {
        n++;
        if (out[0].v.i4 != n || out[1].v.i4 != 7 * n)
            fail_msg("round %d (seed %#llx): t's row %d is (%d, %d)", round,
                     (unsigned long long)seed, n, out[0].v.i4, out[1].v.i4);
    }
    keel_scan_end(sc);
    assert_int_equal(keel_scan_begin(s, NULL, "u", NULL, NULL, NULL, &sc),
                     KEEL_OK);
    while (keel_scan_next(sc, out, &found) == KEEL_OK && found) {
        keel_value want = note_of(out[0].v.i4, buf);
        urows++;
        sum += out[1].v.i4;
        if (out[2].v.s.len != want.v.s.len ||
            memcmp(out[2].v.s.ptr, want.v.s.ptr, want.v.s.len) != 0)
            fail_msg("round %d (seed %#llx): u's row %d has note \"%.*s\"",
                     round, (unsigned long long)seed, out[0].v.i4,
                     (int)out[2].v.s.len, out[2].v.s.ptr);
    }
    keel_scan_end(sc);
    if (urows != U_ROWS)
        fail_msg("round %d (seed %#llx): u has %d rows", round,
                 (unsigned long long)seed, urows);
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    if (n < acked - 1)
        fail_msg("round %d (seed %#llx): %d rows, but %d were acknowledged",
                 round, (unsigned long long)seed, n, acked - 1);
    if ((int64_t)n != BATCH * sum)
        fail_msg("round %d (seed %#llx): a transaction is there in part: "
                 "%d rows in t, u adds up to %lld transactions",
                 round, (unsigned long long)seed, n, (long long)sum);
    if (keel_check(dir, count_problem, &counted, &problems, &notes, &e) !=
        KEEL_OK)
        fail_msg("round %d: the check could not run: %s", round, e.msg);
    if (problems != 0)
        fail_msg("round %d (seed %#llx): the check found %llu problems",
                 round, (unsigned long long)seed,
                 (unsigned long long)problems);
    return n;
}

static void test_power_loss(void **state)
{
    char *dir = tu_mkdtemp();
    double seconds = tu_stress_seconds(0);
    uint64_t start = clock_now_ns(), rng = clock_now_ns() | 1;
    int32_t rows = 0;
    int rounds = 0, crashed = 0, torn_rows = 0;

    (void)state;
    if (getenv("KEEL_STRESS_SEED") != NULL)
        rng = strtoull(getenv("KEEL_STRESS_SEED"), NULL, 0) | 1;
    fprintf(stderr, "seed %#llx\n", (unsigned long long)rng);
    make_db(dir);
    while (rounds < MIN_ROUND ||
           (double)(clock_now_ns() - start) / 1e9 < seconds) {
        int fds[2], status;
        int32_t acked = rows + 1, got;
        uint64_t seed, crash_at;
        pid_t pid;

        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        seed = rng;
        crash_at = 1 + seed % 400;
        assert_int_equal(pipe(fds), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child(dir, fds[1], rows + 1, seed, crash_at);
        }
        close(fds[1]);
        while (read(fds[0], &got, sizeof(got)) == sizeof(got))
            acked = got;
        close(fds[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != CRASHED)
            fail_msg("round %d (seed %#llx): the child ended with status %d",
                     rounds, (unsigned long long)seed, status);
        crashed++;
        got = verify(dir, rounds, seed, acked);
        torn_rows += got > acked - 1 ? got - (acked - 1) : 0;
        rows = got;
        rounds++;
    }
    fprintf(stderr,
            "%d power losses, %d rows in the end, %d rows of unacknowledged "
            "transactions found whole\n",
            crashed, rows, torn_rows);
    tu_dir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
