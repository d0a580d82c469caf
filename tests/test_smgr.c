/*
 * test_smgr.c: the storage manager: relation files, block I/O, checksum
 * verification on read, partial trailing blocks, concurrent extension,
 * read-only opens, and (in fault-injection builds) behaviour under
 * injected I/O faults.
 */
#include "testutil.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/fault.h"
#include "storage/page.h"
#include "storage/smgr.h"

#define REL_A ((relnumber_t)16384)
#define REL_B ((relnumber_t)16385)

typedef union test_page {
    unsigned char b[BLOCK_SIZE];
    uint64_t align;
} test_page;

typedef struct fixture {
    char *dir;
    smgr *s;
    kerr err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    tu_storage_open(&f->dir, &f->s, &f->err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

#ifdef KEEL_FAULT_INJECTION
    fault_disarm_all();
#endif
    tu_storage_close(f->dir, f->s);
    free(f);
    return 0;
}

/*
 * A page whose whole content follows from tag: a header, the tag after it,
 * and pseudo-random bytes to the end, so that any block identifies the one
 * tag it was written with and any mix of two writes is detected.
 */
static void fill_page(test_page *p, uint64_t tag)
{
    uint64_t rng = tag * 2 + 1;

    page_init(p->b, 8);
    memcpy(p->b + PAGE_HEADER_SIZE, &tag, sizeof(tag));
    for (size_t i = PAGE_HEADER_SIZE + sizeof(tag); i < BLOCK_SIZE; i++)
        p->b[i] = (unsigned char)tu_rand(&rng);
}

static uint64_t page_tag(const test_page *p)
{
    uint64_t tag;

    memcpy(&tag, p->b + PAGE_HEADER_SIZE, sizeof(tag));
    return tag;
}

/* True if p is exactly what fill_page(tag) wrote, checksum included. */
static bool page_matches(const test_page *p, uint64_t tag)
{
    test_page want;

    fill_page(&want, tag);
    page_set_checksum(want.b);
    return memcmp(p->b, want.b, BLOCK_SIZE) == 0;
}

static long file_size(const char *path)
{
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

static smgr_rel *create_rel(fixture *f, relnumber_t rel, int nblocks,
                            uint64_t tag0)
{
    smgr_rel *r = NULL;
    test_page p;

    assert_int_equal(smgr_create(f->s, rel, &r, &f->err), KEEL_OK);
    assert_non_null(r);
    for (int i = 0; i < nblocks; i++) {
        blocknum_t blk = 9999;
        fill_page(&p, tag0 + (uint64_t)i);
        assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), KEEL_OK);
        assert_int_equal(blk, (blocknum_t)i);
    }
    return r;
}

static void assert_block(fixture *f, smgr_rel *r, blocknum_t blk, uint64_t tag)
{
    test_page p;

    assert_int_equal(smgr_read(r, blk, p.b, &f->err), KEEL_OK);
    if (!page_matches(&p, tag))
        fail_msg("block %u: expected tag %llu, found tag %llu", blk,
                 (unsigned long long)tag, (unsigned long long)page_tag(&p));
}

/* Asserts that the last error message contains s. */
static void assert_msg_has(fixture *f, const char *s)
{
    if (strstr(f->err.msg, s) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", f->err.msg, s);
}

/* ---- relation files -------------------------------------------------- */

static void test_create(void **state)
{
    fixture *f = *state;
    smgr_rel *r = NULL, *r2 = NULL;
    char path[4200];

    assert_string_equal(smgr_dir(f->s), f->dir);
    assert_false(smgr_exists(f->s, REL_A));
    assert_int_equal(smgr_create(f->s, REL_A, &r, &f->err), KEEL_OK);
    assert_non_null(r);
    assert_true(smgr_exists(f->s, REL_A));
    assert_int_equal(smgr_rel_number(r), REL_A);
    snprintf(path, sizeof(path), "%s/%u", f->dir, REL_A);
    assert_string_equal(smgr_rel_path(r), path);
    assert_int_equal(smgr_nblocks(r), 0);
    assert_int_equal(file_size(path), 0);

    /* A second create fails whether or not the relation is open. */
    assert_int_equal(smgr_create(f->s, REL_A, NULL, &f->err), KEEL_EEXIST);
    assert_int_equal(f->err.code, KEEL_EEXIST);
    assert_msg_has(f, path);

    /* rel_open of an open relation returns the same handle. */
    assert_int_equal(smgr_rel_open(f->s, REL_A, &r2, &f->err), KEEL_OK);
    assert_ptr_equal(r, r2);

    /* Relation 0 is invalid. */
    assert_int_equal(smgr_create(f->s, INVALID_RELNUMBER, NULL, &f->err),
                     KEEL_EINVAL);
}

static void test_create_existing_unopened(void **state)
{
    fixture *f = *state;
    char path[4200];
    int fd;

    /* A file made behind the storage manager's back still blocks create. */
    snprintf(path, sizeof(path), "%s/%u", f->dir, REL_B);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(smgr_create(f->s, REL_B, NULL, &f->err), KEEL_EEXIST);
}

static void test_open_missing(void **state)
{
    fixture *f = *state;
    smgr_rel *r = (smgr_rel *)0x1;
    smgr *s2 = (smgr *)0x1;
    char path[4200];

    assert_int_equal(smgr_rel_open(f->s, REL_B, &r, &f->err), KEEL_ENOENT);
    assert_null(r);
    assert_int_equal(f->err.code, KEEL_ENOENT);
    snprintf(path, sizeof(path), "%s/%u", f->dir, REL_B);
    assert_msg_has(f, path);

    snprintf(path, sizeof(path), "%s/no-such-dir", f->dir);
    assert_int_equal(smgr_open(path, &s2, &f->err), KEEL_ENOENT);
    assert_null(s2);
}

static void test_extend_read(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 5, 100);

    assert_int_equal(smgr_nblocks(r), 5);
    assert_int_equal(file_size(smgr_rel_path(r)), 5L * BLOCK_SIZE);
    for (blocknum_t b = 0; b < 5; b++)
        assert_block(f, r, b, 100 + b);
}

static void test_write_read(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 3, 100);
    test_page p;

    fill_page(&p, 777);
    assert_int_equal(smgr_write(r, 1, p.b, &f->err), KEEL_OK);
    assert_block(f, r, 0, 100);
    assert_block(f, r, 1, 777);
    assert_block(f, r, 2, 102);
    assert_int_equal(smgr_nblocks(r), 3);
}

static void test_new_page(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 0, 0);
    test_page p, back;
    blocknum_t blk;

    /* Extending with zeroes (as after a crash mid-extension, or a buffer
     * manager that extends first and initializes later) reads back as a
     * new page, not as a page with a bad header. */
    memset(p.b, 0, sizeof(p.b));
    assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), KEEL_OK);
    assert_int_equal(blk, 0);
    assert_true(page_is_new(p.b));
    memset(back.b, 0xff, sizeof(back.b));
    assert_int_equal(smgr_read(r, 0, back.b, &f->err), KEEL_OK);
    assert_true(page_is_new(back.b));
    assert_int_equal(smgr_write(r, 0, p.b, &f->err), KEEL_OK);
    assert_int_equal(smgr_read(r, 0, back.b, &f->err), KEEL_OK);
    assert_true(page_is_new(back.b));
}

static void test_read_beyond_end(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 3, 100);
    test_page p;

    assert_int_equal(smgr_read(r, 3, p.b, &f->err), KEEL_EEOF);
    assert_int_equal(f->err.code, KEEL_EEOF);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 3 ");
    assert_msg_has(f, "3 blocks");

    assert_int_equal(smgr_read(r, 4000000, p.b, &f->err), KEEL_EEOF);
    assert_msg_has(f, "block 4000000 ");

    fill_page(&p, 5);
    assert_int_equal(smgr_write(r, 3, p.b, &f->err), KEEL_EEOF);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 3 ");
    assert_int_equal(smgr_nblocks(r), 3);
    assert_int_equal(file_size(smgr_rel_path(r)), 3L * BLOCK_SIZE);
}

static void test_truncate(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 5, 100);
    test_page p;
    blocknum_t blk;

    assert_int_equal(smgr_truncate(r, 2, &f->err), KEEL_OK);
    assert_int_equal(smgr_nblocks(r), 2);
    assert_int_equal(file_size(smgr_rel_path(r)), 2L * BLOCK_SIZE);
    assert_block(f, r, 1, 101);
    assert_int_equal(smgr_read(r, 2, p.b, &f->err), KEEL_EEOF);

    /* Growing by truncation is refused. */
    assert_int_equal(smgr_truncate(r, 3, &f->err), KEEL_EINVAL);
    assert_msg_has(f, smgr_rel_path(r));
    assert_int_equal(smgr_nblocks(r), 2);

    /* The next extension continues at the new end. */
    fill_page(&p, 200);
    assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), KEEL_OK);
    assert_int_equal(blk, 2);
    assert_block(f, r, 2, 200);

    assert_int_equal(smgr_truncate(r, 0, &f->err), KEEL_OK);
    assert_int_equal(smgr_nblocks(r), 0);
    assert_int_equal(file_size(smgr_rel_path(r)), 0);
    assert_int_equal(smgr_read(r, 0, p.b, &f->err), KEEL_EEOF);
}

static void test_unlink(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    char path[4200];

    snprintf(path, sizeof(path), "%s", smgr_rel_path(r));
    create_rel(f, REL_B, 1, 300);
    assert_int_equal(smgr_unlink(f->s, REL_A, &f->err), KEEL_OK);
    assert_false(smgr_exists(f->s, REL_A));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(smgr_rel_open(f->s, REL_A, &r, &f->err), KEEL_ENOENT);
    assert_int_equal(smgr_unlink(f->s, REL_A, &f->err), KEEL_ENOENT);
    assert_msg_has(f, path);

    /* The other relation is untouched, and the number can be reused. */
    assert_int_equal(smgr_rel_open(f->s, REL_B, &r, &f->err), KEEL_OK);
    assert_block(f, r, 0, 300);
    r = create_rel(f, REL_A, 0, 0);
    assert_int_equal(smgr_nblocks(r), 0);
}

static void test_many_relations(void **state)
{
    fixture *f = *state;
    smgr_rel *r;

    /* Enough to make the table grow a few times. */
    for (relnumber_t rel = 1; rel <= 600; rel++)
        assert_int_equal(smgr_create(f->s, rel, NULL, &f->err), KEEL_OK);
    for (relnumber_t rel = 2; rel <= 600; rel += 2)
        assert_int_equal(smgr_unlink(f->s, rel, &f->err), KEEL_OK);
    for (relnumber_t rel = 1; rel <= 600; rel++) {
        int rc = smgr_rel_open(f->s, rel, &r, &f->err);
        assert_int_equal(rc, rel % 2 ? KEEL_OK : KEEL_ENOENT);
        if (rc == KEEL_OK)
            assert_int_equal(smgr_rel_number(r), rel);
    }
}

static void test_persistence(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 3, 100);
    test_page written[3], p;

    for (blocknum_t b = 0; b < 3; b++) {
        fill_page(&written[b], 500 + b);
        assert_int_equal(smgr_write(r, b, written[b].b, &f->err), KEEL_OK);
    }
    assert_int_equal(smgr_sync(r, &f->err), KEEL_OK);
    smgr_close(f->s);
    f->s = NULL;

    assert_int_equal(smgr_open(f->dir, &f->s, &f->err), KEEL_OK);
    assert_true(smgr_exists(f->s, REL_A));
    assert_int_equal(smgr_rel_open(f->s, REL_A, &r, &f->err), KEEL_OK);
    assert_int_equal(smgr_nblocks(r), 3);
    for (blocknum_t b = 0; b < 3; b++) {
        assert_int_equal(smgr_read(r, b, p.b, &f->err), KEEL_OK);
        /* smgr_write set the checksum in place, so this compares it too. */
        assert_memory_equal(p.b, written[b].b, BLOCK_SIZE);
    }
}

static void test_dir_trailing_slash(void **state)
{
    fixture *f = *state;
    smgr *s2 = NULL;
    smgr_rel *r;
    char dir[4200], path[4200];

    snprintf(dir, sizeof(dir), "%s//", f->dir);
    assert_int_equal(smgr_open(dir, &s2, &f->err), KEEL_OK);
    assert_string_equal(smgr_dir(s2), f->dir);
    assert_int_equal(smgr_create(s2, REL_A, &r, &f->err), KEEL_OK);
    snprintf(path, sizeof(path), "%s/%u", f->dir, REL_A);
    assert_string_equal(smgr_rel_path(r), path);
    smgr_close(s2);
}

/* ---- corruption ------------------------------------------------------ */

static void test_corrupt_block(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 4, 100);
    test_page p;

    tu_flip_bit(smgr_rel_path(r), 2L * BLOCK_SIZE + 5000, 3);
    assert_int_equal(smgr_read(r, 2, p.b, &f->err), KEEL_ECORRUPT);
    assert_int_equal(f->err.code, KEEL_ECORRUPT);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 2 ");
    assert_msg_has(f, "checksum mismatch");
    assert_msg_has(f, "stored 0x");
    /* Its neighbours are fine. */
    assert_block(f, r, 1, 101);
    assert_block(f, r, 3, 103);

    /* A flipped bit in the stored checksum itself, in the header. */
    tu_flip_bit(smgr_rel_path(r), 3L * BLOCK_SIZE + 9, 0);
    assert_int_equal(smgr_read(r, 3, p.b, &f->err), KEEL_ECORRUPT);
    assert_msg_has(f, "block 3 ");

    /* A flipped bit in the last byte of the file. */
    tu_flip_bit(smgr_rel_path(r), 1L * BLOCK_SIZE + BLOCK_SIZE - 1, 7);
    assert_int_equal(smgr_read(r, 1, p.b, &f->err), KEEL_ECORRUPT);
    assert_msg_has(f, "block 1 ");

    /* Rewriting the block repairs it. */
    fill_page(&p, 900);
    assert_int_equal(smgr_write(r, 2, p.b, &f->err), KEEL_OK);
    assert_block(f, r, 2, 900);
}

static void test_corrupt_zero_page(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 0, 0);
    test_page p;
    blocknum_t blk;

    /* One bit set in a never-written block is not a new page. */
    memset(p.b, 0, sizeof(p.b));
    assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), KEEL_OK);
    tu_flip_bit(smgr_rel_path(r), 4000, 1);
    assert_int_equal(smgr_read(r, 0, p.b, &f->err), KEEL_ECORRUPT);
    assert_msg_has(f, "block 0 ");
}

static void test_bad_version_and_header(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    test_page p;
    page_header h;

    /* smgr_write sets a valid checksum, so the header is what is wrong. */
    fill_page(&p, 1);
    memcpy(&h, p.b, sizeof(h));
    h.version = PAGE_LAYOUT_VERSION + 1;
    memcpy(p.b, &h, sizeof(h));
    assert_int_equal(smgr_write(r, 0, p.b, &f->err), KEEL_OK);
    assert_int_equal(smgr_read(r, 0, p.b, &f->err), KEEL_EVERSION);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 0 ");

    fill_page(&p, 2);
    memcpy(&h, p.b, sizeof(h));
    h.lower = 5000;
    h.upper = 4000;
    memcpy(p.b, &h, sizeof(h));
    assert_int_equal(smgr_write(r, 1, p.b, &f->err), KEEL_OK);
    assert_int_equal(smgr_read(r, 1, p.b, &f->err), KEEL_ECORRUPT);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 1 ");
}

/*
 * A partial block at the end of the file (a crash during extension) is not
 * counted, reads past the whole blocks are EEOF, and the next extension
 * overwrites it so that the file is whole blocks again.
 */
static void append_garbage(const char *path, size_t len)
{
    unsigned char junk[BLOCK_SIZE];
    int fd = open(path, O_WRONLY | O_APPEND);

    assert_true(fd >= 0);
    memset(junk, 0x5a, sizeof(junk));
    assert_int_equal(write(fd, junk, len), (ssize_t)len);
    close(fd);
}

static void test_partial_trailing_block(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    char path[4200];
    test_page p;
    blocknum_t blk;

    snprintf(path, sizeof(path), "%s", smgr_rel_path(r));
    smgr_close(f->s);
    append_garbage(path, 8000);
    assert_int_equal(file_size(path), 2L * BLOCK_SIZE + 8000);

    assert_int_equal(smgr_open(f->dir, &f->s, &f->err), KEEL_OK);
    assert_int_equal(smgr_rel_open(f->s, REL_A, &r, &f->err), KEEL_OK);
    assert_int_equal(smgr_nblocks(r), 2);
    assert_block(f, r, 1, 101);
    assert_int_equal(smgr_read(r, 2, p.b, &f->err), KEEL_EEOF);

    fill_page(&p, 102);
    assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), KEEL_OK);
    assert_int_equal(blk, 2);
    assert_int_equal(smgr_nblocks(r), 3);
    assert_int_equal(file_size(path), 3L * BLOCK_SIZE);
    assert_block(f, r, 2, 102);

    /* A tiny tail is cut off by truncation too. */
    smgr_close(f->s);
    append_garbage(path, 100);
    assert_int_equal(smgr_open(f->dir, &f->s, &f->err), KEEL_OK);
    assert_int_equal(smgr_rel_open(f->s, REL_A, &r, &f->err), KEEL_OK);
    assert_int_equal(smgr_nblocks(r), 3);
    assert_int_equal(smgr_truncate(r, 3, &f->err), KEEL_OK);
    assert_int_equal(file_size(path), 3L * BLOCK_SIZE);
    for (blocknum_t b = 0; b < 3; b++)
        assert_block(f, r, b, 100 + b);
}

/* ---- concurrency ----------------------------------------------------- */

#define EXT_THREADS    4
#define EXT_PER_THREAD 200

typedef struct extender {
    smgr_rel *r;
    uint32_t id;
    int failures; /* cmocka asserts are for the main thread only */
    blocknum_t blocks[EXT_PER_THREAD];
} extender;

static uint64_t ext_tag(uint32_t thread, uint32_t seq)
{
    return ((uint64_t)(thread + 1) << 32) | seq;
}

static void *extender_main(void *arg)
{
    extender *x = arg;
    test_page p, back;

    for (uint32_t seq = 0; seq < EXT_PER_THREAD; seq++) {
        kerr err;
        blocknum_t blk;

        fill_page(&p, ext_tag(x->id, seq));
        if (smgr_extend(x->r, p.b, &blk, &err) != KEEL_OK) {
            x->failures++;
            continue;
        }
        x->blocks[seq] = blk;
        /* A block is readable as soon as its extension returns. */
        if (smgr_read(x->r, blk, back.b, &err) != KEEL_OK ||
            memcmp(back.b, p.b, BLOCK_SIZE) != 0)
            x->failures++;
    }
    return NULL;
}

/*
 * A read-only storage manager over f's directory: reads what the other
 * wrote; refuses create, unlink, write, extend, truncate and sync with
 * EREADONLY, naming the file or directory, leaving the file as it was;
 * and refuses a directory, a FIFO (without waiting for a writer) and a
 * symlink to /dev/zero named as relations, as the writable one does.
 */
static void test_read_only(void **state)
{
    fixture *f = *state;
    smgr *ro;
    smgr_rel *w, *r;
    test_page p, q;
    blocknum_t blk = 0;
    char path[4200];
    struct stat st;
    kerr e;

    fill_page(&p, 7);
    assert_int_equal(smgr_create(f->s, REL_A, &w, &f->err), KEEL_OK);
    assert_int_equal(smgr_extend(w, p.b, &blk, &f->err), KEEL_OK);
    assert_int_equal(smgr_sync(w, &f->err), KEEL_OK);
    assert_int_equal(smgr_open_read_only(f->dir, &ro, &e), KEEL_OK);
    assert_int_equal(smgr_rel_open(ro, REL_A, &r, &e), KEEL_OK);
    assert_int_equal(smgr_nblocks(r), 1);
    assert_int_equal(smgr_read(r, 0, q.b, &e), KEEL_OK);
    assert_memory_equal(p.b, q.b, BLOCK_SIZE);

    fill_page(&q, 8);
    assert_int_equal(smgr_write(r, 0, q.b, &e), KEEL_EREADONLY);
    assert_non_null(strstr(e.msg, "read-only"));
    assert_int_equal(smgr_extend(r, q.b, &blk, &e), KEEL_EREADONLY);
    assert_int_equal(smgr_truncate(r, 0, &e), KEEL_EREADONLY);
    assert_int_equal(smgr_sync(r, &e), KEEL_EREADONLY);
    assert_int_equal(smgr_create(ro, REL_B, NULL, &e), KEEL_EREADONLY);
    assert_non_null(strstr(e.msg, f->dir));
    assert_int_equal(smgr_unlink(ro, REL_A, &e), KEEL_EREADONLY);
    snprintf(path, sizeof(path), "%s/%u", f->dir, REL_B);
    assert_int_equal(stat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/%u", f->dir, REL_A);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, BLOCK_SIZE);
    assert_int_equal(smgr_nblocks(r), 1);
    assert_int_equal(smgr_read(r, 0, q.b, &e), KEEL_OK);
    assert_memory_equal(p.b, q.b, BLOCK_SIZE);

    /* Files that are not regular. */
    snprintf(path, sizeof(path), "%s/%u", f->dir, REL_B);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(smgr_rel_open(ro, REL_B, &r, &e), KEEL_EIO);
    assert_non_null(strstr(e.msg, "Is a directory"));
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(smgr_rel_open(ro, REL_B, &r, &e), KEEL_EIO);
    assert_non_null(strstr(e.msg, "not a regular file"));
    assert_int_equal(smgr_rel_open(f->s, REL_B, &r, &e), KEEL_EIO);
    assert_non_null(strstr(e.msg, "not a regular file"));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink("/dev/zero", path), 0);
    assert_int_equal(smgr_rel_open(ro, REL_B, &r, &e), KEEL_EIO);
    assert_non_null(strstr(e.msg, "not a regular file"));
    assert_int_equal(unlink(path), 0);
    smgr_close(ro);
}

static void test_concurrent_extend(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 0, 0);
    static extender ext[EXT_THREADS];
    pthread_t tid[EXT_THREADS];
    int seen[EXT_THREADS][EXT_PER_THREAD];
    test_page p;

    memset(seen, 0, sizeof(seen));
    for (uint32_t t = 0; t < EXT_THREADS; t++) {
        memset(&ext[t], 0, sizeof(ext[t]));
        ext[t].r = r;
        ext[t].id = t;
        assert_int_equal(pthread_create(&tid[t], NULL, extender_main, &ext[t]),
                         0);
    }
    for (int t = 0; t < EXT_THREADS; t++) {
        assert_int_equal(pthread_join(tid[t], NULL), 0);
        assert_int_equal(ext[t].failures, 0);
    }

    assert_int_equal(smgr_nblocks(r), EXT_THREADS * EXT_PER_THREAD);
    assert_int_equal(file_size(smgr_rel_path(r)),
                     (long)EXT_THREADS * EXT_PER_THREAD * BLOCK_SIZE);
    for (blocknum_t b = 0; b < EXT_THREADS * EXT_PER_THREAD; b++) {
        uint64_t tag;
        uint32_t t, seq;

        assert_int_equal(smgr_read(r, b, p.b, &f->err), KEEL_OK);
        tag = page_tag(&p);
        t = (uint32_t)(tag >> 32) - 1;
        seq = (uint32_t)tag;
        if (t >= EXT_THREADS || seq >= EXT_PER_THREAD)
            fail_msg("block %u holds unknown tag %llx", b,
                     (unsigned long long)tag);
        if (!page_matches(&p, tag))
            fail_msg("block %u: content does not match its tag", b);
        assert_int_equal(ext[t].blocks[seq], b);
        seen[t][seq]++;
    }
    for (int t = 0; t < EXT_THREADS; t++)
        for (int seq = 0; seq < EXT_PER_THREAD; seq++)
            if (seen[t][seq] != 1)
                fail_msg("thread %d seq %d appears %d times", t, seq,
                         seen[t][seq]);
}

/* ---- fault injection ------------------------------------------------- */

#ifdef KEEL_FAULT_INJECTION

static void test_fault_read_eio(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    test_page p;

    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, 0);
    assert_int_equal(smgr_read(r, 1, p.b, &f->err), KEEL_EIO);
    assert_int_equal(f->err.code, KEEL_EIO);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 1 ");
    assert_int_equal(fault_delivered(FAULT_OP_READ), 1);
    assert_block(f, r, 1, 101);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 1);
}

static void test_fault_read_short(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    test_page p;

    fault_arm(FAULT_OP_READ, FAULT_SHORT, 0, 1, 0);
    assert_int_equal(smgr_read(r, 0, p.b, &f->err), KEEL_EIO);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 0 ");
    assert_msg_has(f, "4096 of 8192");
    assert_block(f, r, 0, 100);
}

static void test_fault_write_errors(void **state)
{
    static const struct {
        fault_kind kind;
        int code;
    } cases[] = {{FAULT_EIO, KEEL_EIO}, {FAULT_ENOSPC, KEEL_ENOSPC}};
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    test_page p;

    for (size_t c = 0; c < 2; c++) {
        fault_arm(FAULT_OP_WRITE, cases[c].kind, 0, 1, 0);
        fill_page(&p, 800 + c);
        assert_int_equal(smgr_write(r, 1, p.b, &f->err), cases[c].code);
        assert_int_equal(f->err.code, cases[c].code);
        assert_msg_has(f, smgr_rel_path(r));
        assert_msg_has(f, "block 1 ");
        assert_int_equal(fault_delivered(FAULT_OP_WRITE), 1);
        /* The block keeps what it had. */
        assert_block(f, r, 1, 101);
    }
    /* And the next write goes through. */
    fill_page(&p, 850);
    assert_int_equal(smgr_write(r, 1, p.b, &f->err), KEEL_OK);
    assert_block(f, r, 1, 850);
}

static void test_fault_write_short(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    test_page p;

    fault_arm(FAULT_OP_WRITE, FAULT_SHORT, 0, 1, 0);
    fill_page(&p, 888);
    assert_int_equal(smgr_write(r, 0, p.b, &f->err), KEEL_ENOSPC);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "block 0 ");
    assert_msg_has(f, "wrote only 4096 of 8192");
    /* Half a page really was written: the torn block fails its checksum. */
    assert_int_equal(smgr_read(r, 0, p.b, &f->err), KEEL_ECORRUPT);
    assert_int_equal(file_size(smgr_rel_path(r)), 2L * BLOCK_SIZE);
}

static void test_fault_extend(void **state)
{
    static const struct {
        fault_kind kind;
        int code;
        const char *msg;
    } cases[] = {
        {FAULT_ENOSPC, KEEL_ENOSPC, "No space left"},
        {FAULT_SHORT, KEEL_ENOSPC, "wrote only 4096 of 8192"},
        {FAULT_EIO, KEEL_EIO, "Input/output error"},
    };
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 2, 100);
    long size = file_size(smgr_rel_path(r));
    test_page p;
    blocknum_t blk;

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        fault_arm(FAULT_OP_WRITE, cases[c].kind, 0, 1, 0);
        fill_page(&p, 600);
        blk = 12345;
        assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), cases[c].code);
        assert_int_equal(blk, 12345);
        assert_msg_has(f, smgr_rel_path(r));
        assert_msg_has(f, "block 2");
        assert_msg_has(f, cases[c].msg);
        assert_int_equal(smgr_nblocks(r), 2);
        assert_int_equal(file_size(smgr_rel_path(r)), size);
        assert_int_equal(smgr_read(r, 2, p.b, &f->err), KEEL_EEOF);
    }
    fill_page(&p, 102);
    assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), KEEL_OK);
    assert_int_equal(blk, 2);
    assert_int_equal(file_size(smgr_rel_path(r)), size + BLOCK_SIZE);
    assert_block(f, r, 2, 102);
}

static void test_fault_sync(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 1, 100);

    fault_arm(FAULT_OP_SYNC, FAULT_EIO, 0, 1, 0);
    assert_int_equal(smgr_sync(r, &f->err), KEEL_EIO);
    assert_msg_has(f, smgr_rel_path(r));
    assert_msg_has(f, "fsync");
    assert_int_equal(smgr_sync(r, &f->err), KEEL_OK);

    /* Whatever the fault, a failed sync is reported as EIO. */
    fault_arm(FAULT_OP_SYNC, FAULT_ENOSPC, 0, 1, 0);
    assert_int_equal(smgr_sync(r, &f->err), KEEL_EIO);
    fault_arm(FAULT_OP_SYNC, FAULT_SHORT, 0, 1, 0);
    assert_int_equal(smgr_sync(r, &f->err), KEEL_EIO);
    assert_int_equal(fault_delivered(FAULT_OP_SYNC), 1);
    assert_int_equal(smgr_sync(r, &f->err), KEEL_OK);
}

/*
 * The directory's fsync failing after a file was created: the create
 * fails with EIO naming the directory and the file, and takes the file
 * back, so a retry succeeds.  After a file was removed: the unlink
 * reports it (the file is gone, not durably).  Only the relation the
 * fault names counts.
 */
static void test_fault_dir_sync(void **state)
{
    fixture *f = *state;
    smgr_rel *r = NULL;
    char name[32];

    snprintf(name, sizeof(name), "%u", (unsigned)REL_A);
    fault_arm(FAULT_OP_DIR_SYNC, FAULT_EIO, 0, 1, REL_A);
    assert_int_equal(smgr_create(f->s, REL_B, NULL, &f->err), KEEL_OK);
    assert_int_equal(smgr_create(f->s, REL_A, &r, &f->err), KEEL_EIO);
    assert_int_equal(fault_delivered(FAULT_OP_DIR_SYNC), 1);
    assert_null(r);
    assert_msg_has(f, f->dir);
    assert_msg_has(f, name);
    assert_msg_has(f, "after creating");
    assert_false(smgr_exists(f->s, REL_A));
    assert_int_equal(smgr_create(f->s, REL_A, &r, &f->err), KEEL_OK);
    assert_non_null(r);
    assert_true(smgr_exists(f->s, REL_A));

    fault_arm(FAULT_OP_DIR_SYNC, FAULT_ENOSPC, 0, 1, 0);
    assert_int_equal(smgr_unlink(f->s, REL_A, &f->err), KEEL_EIO);
    assert_int_equal(fault_delivered(FAULT_OP_DIR_SYNC), 1);
    assert_msg_has(f, "after unlinking");
    assert_msg_has(f, name);
    assert_false(smgr_exists(f->s, REL_A));
    assert_int_equal(smgr_unlink(f->s, REL_B, &f->err), KEEL_OK);
    assert_false(smgr_exists(f->s, REL_B));
}

static void test_fault_skip_count(void **state)
{
    fixture *f = *state;
    smgr_rel *r = create_rel(f, REL_A, 1, 100);
    static const int want1[] = {KEEL_OK, KEEL_OK, KEEL_EIO, KEEL_OK, KEEL_OK};
    static const int want2[] = {KEEL_OK, KEEL_EIO, KEEL_EIO, KEEL_OK};
    test_page p;

    /* Skip 2, then 1 failure. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 2, 1, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(smgr_read(r, 0, p.b, &f->err), want1[i]);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 1);

    /* Re-arming resets the count; skip 1, then 2 failures. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 1, 2, 0);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(smgr_read(r, 0, p.b, &f->err), want2[i]);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 2);

    /* Other ops neither fail nor use up a READ fault. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, 0);
    fill_page(&p, 100);
    assert_int_equal(smgr_write(r, 0, p.b, &f->err), KEEL_OK);
    assert_int_equal(smgr_sync(r, &f->err), KEEL_OK);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 0);
    assert_int_equal(smgr_read(r, 0, p.b, &f->err), KEEL_EIO);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 1);

    /* Disarming cancels a pending fault. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, 0);
    fault_disarm_all();
    assert_block(f, r, 0, 100);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 0);

    /* A count of zero arms nothing. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 0, 0);
    assert_block(f, r, 0, 100);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 0);
}

static void test_fault_relnumber_filter(void **state)
{
    fixture *f = *state;
    smgr_rel *a = create_rel(f, REL_A, 1, 100);
    smgr_rel *b = create_rel(f, REL_B, 1, 200);
    test_page p;

    /* Calls on B neither fail nor use up A's skip. */
    fault_arm(FAULT_OP_READ, FAULT_EIO, 1, 1, REL_A);
    for (int i = 0; i < 3; i++)
        assert_block(f, b, 0, 200);
    assert_block(f, a, 0, 100);
    assert_block(f, b, 0, 200);
    assert_int_equal(smgr_read(a, 0, p.b, &f->err), KEEL_EIO);
    assert_msg_has(f, smgr_rel_path(a));
    assert_block(f, a, 0, 100);
    assert_block(f, b, 0, 200);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 1);

    /* Relation 0 means every relation. */
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 0, 2, 0);
    fill_page(&p, 1);
    assert_int_equal(smgr_write(a, 0, p.b, &f->err), KEEL_ENOSPC);
    assert_int_equal(smgr_write(b, 0, p.b, &f->err), KEEL_ENOSPC);
    assert_int_equal(smgr_write(b, 0, p.b, &f->err), KEEL_OK);
    assert_int_equal(fault_delivered(FAULT_OP_WRITE), 2);
}

#define FAULT_THREADS 4
#define FAULT_CALLS   20000

typedef struct fault_caller {
    uint32_t faults;
    uint32_t wrong_kind;
} fault_caller;

static void *fault_caller_main(void *arg)
{
    fault_caller *c = arg;

    for (int i = 0; i < FAULT_CALLS; i++) {
        fault_kind k = fault_next(FAULT_OP_WRITE, 7);
        if (k != FAULT_NONE) {
            c->faults++;
            if (k != FAULT_ENOSPC)
                c->wrong_kind++;
        }
    }
    return NULL;
}

/* The skip and count are used up exactly, however many threads race. */
static void test_fault_concurrent_exact(void **state)
{
    fault_caller callers[FAULT_THREADS];
    pthread_t tid[FAULT_THREADS];
    uint32_t total = 0;

    memset(callers, 0, sizeof(callers));
    fault_arm(FAULT_OP_WRITE, FAULT_ENOSPC, 30000, 25000, 0);
    for (int t = 0; t < FAULT_THREADS; t++)
        assert_int_equal(
            pthread_create(&tid[t], NULL, fault_caller_main, &callers[t]), 0);
    for (int t = 0; t < FAULT_THREADS; t++) {
        assert_int_equal(pthread_join(tid[t], NULL), 0);
        total += callers[t].faults;
        assert_int_equal(callers[t].wrong_kind, 0);
    }
    assert_int_equal(total, 25000);
    assert_int_equal(fault_delivered(FAULT_OP_WRITE), 25000);
    assert_int_equal(fault_next(FAULT_OP_WRITE, 7), FAULT_NONE);
}

#endif /* KEEL_FAULT_INJECTION */

/* A page check that refuses a page whose byte 100 is *arg. */
static bool refuse_marked(const void *page, blocknum_t blk, const void *arg,
                          char *why, size_t len)
{
    unsigned char mark = *(const unsigned char *)arg;

    (void)blk;
    if (((const unsigned char *)page)[100] != mark)
        return true;
    snprintf(why, len, "byte 100 is %u", mark);
    return false;
}

/*
 * A relation's page check: none until registered; then applied to each
 * page as read, naming the file and block; the same registration again
 * changes nothing, a different one replaces it; a new (all-zero) page is
 * never checked.
 */
static void test_page_check(void **state)
{
    fixture *f = *state;
    test_page p, zero, in;
    unsigned char mark = 7, other = 8, nul = 0;
    blocknum_t b0, b1;
    smgr_rel *r;

    memset(&zero, 0, sizeof(zero));
    page_init(p.b, 8);
    p.b[100] = 7;
    assert_int_equal(smgr_create(f->s, REL_A, &r, &f->err), KEEL_OK);
    assert_int_equal(smgr_extend(r, p.b, &b0, &f->err), KEEL_OK);
    assert_int_equal(smgr_extend(r, zero.b, &b1, &f->err), KEEL_OK);

    assert_int_equal(smgr_read(r, b0, in.b, &f->err), KEEL_OK);
    assert_int_equal(smgr_check(r, b0, in.b, &f->err), KEEL_OK);
    assert_int_equal(smgr_rel_set_check(r, refuse_marked, &mark, 1, &f->err),
                     KEEL_OK);
    assert_int_equal(smgr_check(r, b0, in.b, &f->err), KEEL_ECORRUPT);
    assert_non_null(strstr(f->err.msg, "block 0 of file"));
    assert_non_null(strstr(f->err.msg, smgr_rel_path(r)));
    assert_non_null(strstr(f->err.msg, "byte 100 is 7"));
    /* The same again: still refused. */
    assert_int_equal(smgr_rel_set_check(r, refuse_marked, &mark, 1, &f->err),
                     KEEL_OK);
    assert_int_equal(smgr_check(r, b0, in.b, &f->err), KEEL_ECORRUPT);
    /* Another argument replaces it. */
    assert_int_equal(smgr_rel_set_check(r, refuse_marked, &other, 1, &f->err),
                     KEEL_OK);
    assert_int_equal(smgr_check(r, b0, in.b, &f->err), KEEL_OK);
    /* An all-zero page passes a check that would refuse its bytes; the
     * same bytes under a header do not. */
    assert_int_equal(smgr_rel_set_check(r, refuse_marked, &nul, 1, &f->err),
                     KEEL_OK);
    assert_int_equal(smgr_read(r, b1, in.b, &f->err), KEEL_OK);
    assert_int_equal(smgr_check(r, b1, in.b, &f->err), KEEL_OK);
    page_init(in.b, 8);
    assert_int_equal(smgr_check(r, b1, in.b, &f->err), KEEL_ECORRUPT);
    assert_non_null(strstr(f->err.msg, "block 1 of file"));
}

typedef struct check_racer {
    smgr_rel *r;
    const test_page *page; /* byte 100 is 7 */
    int id;
    uint64_t refused, passed, wrong;
} check_racer;

static void *check_racer_main(void *arg)
{
    static const unsigned char marks[2] = {7, 8};
    check_racer *c = arg;
    kerr e;

    for (int i = 0; i < 20000; i++) {
        if (i % 64 == c->id)
            if (smgr_rel_set_check(c->r, refuse_marked, &marks[(i / 64) % 2], 1,
                                   &e) != KEEL_OK)
                c->wrong++;
        switch (smgr_check(c->r, 0, c->page->b, &e)) {
        case KEEL_OK:
            c->passed++;
            break;
        case KEEL_ECORRUPT:
            c->refused++;
            if (strstr(e.msg, "byte 100 is 7") == NULL)
                c->wrong++;
            break;
        default:
            c->wrong++;
        }
    }
    return NULL;
}

/* Threads register two checks in turn while others apply them: every
 * result is one of the two checks' (ThreadSanitizer watches the rest). */
static void test_page_check_concurrent(void **state)
{
    fixture *f = *state;
    check_racer c[4];
    pthread_t t[4];
    test_page p;
    uint64_t passed = 0, refused = 0;
    blocknum_t b;
    smgr_rel *r;

    page_init(p.b, 8);
    p.b[100] = 7;
    assert_int_equal(smgr_create(f->s, REL_A, &r, &f->err), KEEL_OK);
    assert_int_equal(smgr_extend(r, p.b, &b, &f->err), KEEL_OK);
    for (int i = 0; i < 4; i++) {
        c[i] = (check_racer){.r = r, .page = &p, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, check_racer_main, &c[i]),
                         0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(c[i].wrong, 0);
        passed += c[i].passed;
        refused += c[i].refused;
    }
    assert_int_equal(passed + refused, 4 * 20000);
    assert_true(refused > 0); /* the first registration is 7's */
}

/* File names as relation numbers: exactly the names smgr gives files. */
static void test_relnumber_of(void **state)
{
    static const char *const no[] = {
        "",   "0",  "01",        "1a",   "4294967296", "99999999999999999999",
        "-1", " 1", "keel_lock", "1.tmp"};
    relnumber_t rel = 0;

    (void)state;
    assert_true(smgr_relnumber_of("1", &rel));
    assert_int_equal(rel, 1);
    assert_true(smgr_relnumber_of("16384", &rel));
    assert_int_equal(rel, 16384);
    assert_true(smgr_relnumber_of("4294967295", &rel));
    assert_int_equal(rel, UINT32_MAX);
    rel = 7;
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        if (smgr_relnumber_of(no[i], &rel))
            fail_msg("\"%s\" taken for a relation number", no[i]);
        assert_int_equal(rel, 7); /* untouched */
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relnumber_of),
        T(test_create),
        T(test_create_existing_unopened),
        T(test_open_missing),
        T(test_extend_read),
        T(test_write_read),
        T(test_new_page),
        T(test_read_beyond_end),
        T(test_truncate),
        T(test_unlink),
        T(test_many_relations),
        T(test_persistence),
        T(test_dir_trailing_slash),
        T(test_corrupt_block),
        T(test_corrupt_zero_page),
        T(test_bad_version_and_header),
        T(test_partial_trailing_block),
        T(test_read_only),
        T(test_page_check),
        T(test_page_check_concurrent),
        T(test_concurrent_extend),
#ifdef KEEL_FAULT_INJECTION
        T(test_fault_read_eio),
        T(test_fault_read_short),
        T(test_fault_write_errors),
        T(test_fault_write_short),
        T(test_fault_extend),
        T(test_fault_sync),
        T(test_fault_dir_sync),
        T(test_fault_skip_count),
        T(test_fault_relnumber_filter),
        T(test_fault_concurrent_exact),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
