/*
 * test_control.c: the control file: round trips, and every way a
 * directory can fail to be a readable keel database; the lock file, when
 * it is replaced between its opening and its locking; writes that fail.
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/control.h"
#include "storage/fault.h"
#include "storage/page.h"

static char *control_file(const char *dir)
{
    static char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_FILE_NAME);
    return path;
}

static void sample(control_data *c)
{
    control_init(c);
    c->state = CONTROL_IN_PRODUCTION;
    c->xid_limit = 65536;
    c->next_oid = 16384;
    c->oid_limit = 20000;
    c->checkpoints = 7;
}

/* When set, the next flock() first removes this file, as a failed
 * create's cleanup can between an opener's open() and its flock(). */
static const char *unlink_before_flock;

/* Stands in for the C library's flock() in this program (the library is
 * linked in statically, so its calls come here). */
int flock(int fd, int op)
{
    if (unlink_before_flock != NULL) {
        unlink(unlink_before_flock);
        unlink_before_flock = NULL;
    }
    return (int)syscall(SYS_flock, fd, op);
}

/*
 * The lock file removed after an opener opened it and before it locked
 * it: the opener locks the file the path names now, so that the next one
 * to try is refused, instead of both holding a lock each.
 */
static void test_lock_file_replaced(void **state)
{
    char *dir = tu_mkdtemp();
    char path[4200];
    int first, second;
    kerr err;

    (void)state;
    snprintf(path, sizeof(path), "%s/%s", dir, CONTROL_LOCK_NAME);
    unlink_before_flock = path;
    assert_int_equal(control_lock(dir, &first, &err), KEEL_OK);
    assert_null(unlink_before_flock); /* it ran */
    assert_int_equal(control_lock(dir, &second, &err), KEEL_EBUSY);
    assert_non_null(strstr(err.msg, "already open in this process"));
    control_unlock(first);
    assert_int_equal(control_lock(dir, &second, &err), KEEL_OK);
    control_unlock(second);
    tu_dir_remove(dir);
}

static void test_round_trip(void **state)
{
    char *dir = tu_mkdtemp();
    control_data c, r;
    kerr err;
    struct stat st;

    (void)state;
    sample(&c);
    assert_int_equal(control_create(dir, &c, &err), KEEL_OK);
    assert_int_equal(stat(control_file(dir), &st), 0);
    assert_int_equal(st.st_size, 512);
    assert_int_equal(control_read(dir, &r, &err), KEEL_OK);
    assert_memory_equal(&c, &r, sizeof(c));

    /* A second create refuses: the directory is a database already. */
    assert_int_equal(control_create(dir, &c, &err), KEEL_EEXIST);
    assert_non_null(strstr(err.msg, dir));

    /* Replacing keeps one file and no temporary. */
    c.state = CONTROL_SHUT_DOWN;
    c.xid_limit = 131072;
    c.checkpoints = 8;
    assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
    assert_int_equal(control_read(dir, &r, &err), KEEL_OK);
    assert_memory_equal(&c, &r, sizeof(c));
    {
        char tmp[4300];
        snprintf(tmp, sizeof(tmp), "%s.tmp", control_file(dir));
        assert_int_not_equal(access(tmp, F_OK), 0);
    }
    tu_dir_remove(dir);
}

static void test_not_a_database(void **state)
{
    char *dir = tu_mkdtemp();
    control_data r;
    kerr err;

    (void)state;
    assert_int_equal(control_read(dir, &r, &err), KEEL_ENOENT);
    assert_non_null(strstr(err.msg, "not a keel database"));
    assert_non_null(strstr(err.msg, dir));

    /* A file of the right size that is not a control file. */
    {
        char junk[512];
        int fd = open(control_file(dir), O_WRONLY | O_CREAT, 0600);
        memset(junk, 'x', sizeof(junk));
        assert_int_equal(write(fd, junk, sizeof(junk)), 512);
        close(fd);
    }
    assert_int_equal(control_read(dir, &r, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "not a keel control file"));
    tu_dir_remove(dir);
}

static void test_corrupt(void **state)
{
    char *dir = tu_mkdtemp();
    control_data c, r;
    kerr err;

    (void)state;
    sample(&c);
    assert_int_equal(control_create(dir, &c, &err), KEEL_OK);

    /* A flipped bit in the counters is caught by the checksum... */
    tu_flip_bit(control_file(dir), 8 + 16, 3);
    assert_int_equal(control_read(dir, &r, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "checksum mismatch"));
    /* ...and so is one in the padding, or in the checksum itself. */
    tu_flip_bit(control_file(dir), 8 + 16, 3);
    assert_int_equal(control_read(dir, &r, &err), KEEL_OK);
    tu_flip_bit(control_file(dir), 300, 0);
    assert_int_equal(control_read(dir, &r, &err), KEEL_ECORRUPT);
    tu_flip_bit(control_file(dir), 300, 0);
    tu_flip_bit(control_file(dir), 510, 7);
    assert_int_equal(control_read(dir, &r, &err), KEEL_ECORRUPT);
    tu_flip_bit(control_file(dir), 510, 7);
    assert_int_equal(control_read(dir, &r, &err), KEEL_OK);

    /* A truncated file, and one with a byte too many. */
    assert_int_equal(truncate(control_file(dir), 100), 0);
    assert_int_equal(control_read(dir, &r, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "100 bytes"));
    assert_int_equal(truncate(control_file(dir), 513), 0);
    assert_int_equal(control_read(dir, &r, &err), KEEL_ECORRUPT);
    tu_dir_remove(dir);
}

static void test_wrong_version(void **state)
{
    char *dir = tu_mkdtemp();
    control_data c, r;
    kerr err;

    (void)state;
    sample(&c);
    c.layout_version = CONTROL_LAYOUT_VERSION + 1;
    assert_int_equal(control_create(dir, &c, &err), KEEL_OK);
    assert_int_equal(control_read(dir, &r, &err), KEEL_EVERSION);
    assert_non_null(strstr(err.msg, "layout version"));

    c.layout_version = CONTROL_LAYOUT_VERSION;
    c.block_size = 4096;
    assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
    assert_int_equal(control_read(dir, &r, &err), KEEL_EVERSION);
    assert_non_null(strstr(err.msg, "4096-byte blocks"));

    c.block_size = BLOCK_SIZE;
    c.state = 99;
    assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
    assert_int_equal(control_read(dir, &r, &err), KEEL_ECORRUPT);
    assert_non_null(strstr(err.msg, "unknown state 99"));
    tu_dir_remove(dir);
}

/*
 * Databases made before transactions' ends were bodiless records (layout
 * version 5), before heap-only chains (4) and before the log's 24-byte
 * record header (3), whose logs this keel cannot read or replay:
 * refused at open, the message naming both versions.
 */
static void test_older_layout_refused(void **state)
{
    char *dir = tu_mkdtemp();
    keel_db_options o;
    keel_error e;
    keel_db *db = NULL;
    control_data c;
    kerr err;
    char want[160];

    (void)state;
    keel_db_options_init(&o);
    o.dir = dir;
    o.pool_mb = 8;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(control_read(dir, &c, &err), KEEL_OK);
    assert_int_equal(c.layout_version, 6);
    for (uint32_t v = 3; v <= 5; v++) {
        c.layout_version = v;
        assert_int_equal(control_write(dir, &c, &err), KEEL_OK);
        assert_int_equal(keel_db_open(&o, &db, &e), KEEL_EVERSION);
        assert_null(db);
        snprintf(want, sizeof(want),
                 "database \"%s\" has layout version %u; this keel reads "
                 "version 6",
                 dir, v);
        if (strstr(e.msg, want) == NULL)
            fail_msg("got: %s", e.msg);
    }
    tu_dir_remove(dir);
}

static void test_missing_directory(void **state)
{
    control_data c, r;
    kerr err;

    (void)state;
    sample(&c);
    assert_int_equal(control_read("/nonexistent/keel/db", &r, &err),
                     KEEL_ENOENT);
    assert_non_null(strstr(err.msg, "no such directory"));
    assert_int_equal(control_read("/dev/null", &r, &err), KEEL_ENOENT);
    assert_non_null(strstr(err.msg, "not a directory"));
    assert_int_equal(control_create("/nonexistent/keel/db", &c, &err),
                     KEEL_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/keel/db"));
}

#ifdef KEEL_FAULT_INJECTION
/* Whether dir holds a temporary control file. */
static bool has_tmp(const char *dir)
{
    char tmp[4300];

    snprintf(tmp, sizeof(tmp), "%s.tmp", control_file(dir));
    return access(tmp, F_OK) == 0;
}

/*
 * Every system call of a replacement failing in turn (the write, the
 * file's fsync, the directory's): the error names the file and says
 * why, the old contents stay readable (or, past the rename, the new
 * ones), and no temporary file is left.  A create that fails leaves no
 * file, so the directory is still no database.  A short write is
 * completed.
 */
static void test_write_fails(void **state)
{
    static const struct {
        fault_kind kind;
        uint32_t skip;
        int rc;
        const char *msg;
        bool replaced;
    } cases[] = {
        {FAULT_ENOSPC, 0, KEEL_ENOSPC, "No space left", false},
        {FAULT_EIO, 0, KEEL_EIO, "Input/output error", false},
        {FAULT_ENOSPC, 1, KEEL_ENOSPC, "No space left", false},
        {FAULT_SHORT, 1, KEEL_EIO, "Input/output error", false},
        {FAULT_EIO, 2, KEEL_EIO, "after writing its control file", true},
    };
    char *dir = tu_mkdtemp();
    control_data c, next, r;
    kerr err;

    (void)state;
    sample(&c);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fault_arm(FAULT_OP_CONTROL, cases[i].kind, cases[i].skip, 1, 0);
        assert_int_equal(control_create(dir, &c, &err), cases[i].rc);
        assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
        assert_non_null(strstr(err.msg, cases[i].msg));
        assert_non_null(strstr(err.msg, dir));
        if (cases[i].replaced) /* the file is there, its sync failed */
            assert_int_equal(unlink(control_file(dir)), 0);
        assert_int_equal(control_read(dir, &r, &err), KEEL_ENOENT);
    }
    fault_disarm_all();
    assert_int_equal(control_create(dir, &c, &err), KEEL_OK);

    next = c;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        next.xid_limit += 65536;
        fault_arm(FAULT_OP_CONTROL, cases[i].kind, cases[i].skip, 1, 0);
        assert_int_equal(control_write(dir, &next, &err), cases[i].rc);
        assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
        if (strstr(err.msg, cases[i].msg) == NULL ||
            strstr(err.msg, "control file") == NULL)
            fail_msg("case %zu: \"%s\"", i, err.msg);
        assert_false(has_tmp(dir));
        assert_int_equal(control_read(dir, &r, &err), KEEL_OK);
        assert_memory_equal(&r, cases[i].replaced ? &next : &c, sizeof(r));
    }
    fault_arm(FAULT_OP_CONTROL, FAULT_SHORT, 0, 1, 0);
    next.checkpoints++;
    assert_int_equal(control_write(dir, &next, &err), KEEL_OK);
    assert_int_equal(fault_delivered(FAULT_OP_CONTROL), 1);
    fault_disarm_all();
    assert_int_equal(control_read(dir, &r, &err), KEEL_OK);
    assert_memory_equal(&r, &next, sizeof(r));
    assert_false(has_tmp(dir));
    tu_dir_remove(dir);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_lock_file_replaced),
        cmocka_unit_test(test_not_a_database),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_wrong_version),
        cmocka_unit_test(test_older_layout_refused),
        cmocka_unit_test(test_missing_directory),
#ifdef KEEL_FAULT_INJECTION
        cmocka_unit_test(test_write_fails),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
