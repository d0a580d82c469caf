/*
 * test_bufmgr.c: the buffer pool through its API: pins and private
 * refcounts, reading, extending, flushing and checkpointing, eviction of
 * dirty pages, exhaustion, errors (past the end, missing relations,
 * corrupt pages), reads with prefetch hints and the mapping table's hash,
 * access strategies, dropping a relation's buffers, usage
 * counts, closing, and the descriptor layout.
 *
 * Every page these tests write carries a payload that follows from one
 * 64-bit tag (relation, block and a generation), so any page read back
 * identifies which write it came from.
 */
#include "testutil.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/buf_table.h"
#include "storage/bufmgr.h"
#include "storage/fault.h"
#include "storage/page.h"
#include "storage/smgr.h"

#define REL_A       ((relnumber_t)16384)
#define REL_B       ((relnumber_t)16385)
#define REL_C       ((relnumber_t)16386)
#define REL_MISSING ((relnumber_t)99999)

typedef union test_page {
    unsigned char b[BLOCK_SIZE];
    uint64_t align;
} test_page;

typedef struct fixture {
    char *dir;
    smgr *sm;
    buf_pool *pool;
    buf_session *s;
    buf_session *s2;
    kerr err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    tu_storage_open(&f->dir, &f->sm, &f->err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    buf_session_destroy(f->s2);
    tu_pool_drop(f->pool, f->s, &f->err);
    tu_storage_close(f->dir, f->sm);
    free(f);
    return 0;
}

/* Creates a pool of nbuffers and two sessions on it. */
static void pool_open(fixture *f, uint32_t nbuffers)
{
    assert_null(f->pool);
    assert_int_equal(buf_pool_create(f->sm, nbuffers, &f->pool, &f->err),
                     KEEL_OK);
    assert_int_equal(buf_pool_size(f->pool), nbuffers);
    assert_ptr_equal(buf_pool_smgr(f->pool), f->sm);
    assert_int_equal(buf_session_create(f->pool, &f->s, &f->err), KEEL_OK);
    assert_int_equal(buf_session_create(f->pool, &f->s2, &f->err), KEEL_OK);
}

/* Destroys the sessions and cleanly closes the pool. */
static void pool_close(fixture *f)
{
    buf_session_destroy(f->s2);
    f->s2 = NULL;
    tu_pool_close(&f->pool, &f->s, &f->err);
}

/* ---- page contents ---------------------------------------------------- */

static uint64_t tag_of(relnumber_t rel, blocknum_t blk, unsigned gen)
{
    return ((uint64_t)gen << 56) ^ ((uint64_t)rel << 24) ^ blk;
}

/* Writes the payload of tag: everything after the page header. */
static void fill_payload(void *page, uint64_t tag)
{
    unsigned char *b = page;
    uint64_t rng = tag * 2 + 1;

    memcpy(b + PAGE_HEADER_SIZE, &tag, sizeof(tag));
    for (size_t i = PAGE_HEADER_SIZE + sizeof(tag); i < BLOCK_SIZE; i++)
        b[i] = (unsigned char)tu_rand(&rng);
}

static bool payload_matches(const void *page, uint64_t tag)
{
    test_page want;

    fill_payload(want.b, tag);
    return memcmp((const unsigned char *)page + PAGE_HEADER_SIZE,
                  want.b + PAGE_HEADER_SIZE,
                  BLOCK_SIZE - PAGE_HEADER_SIZE) == 0;
}

static uint64_t payload_tag(const void *page)
{
    uint64_t tag;

    memcpy(&tag, (const unsigned char *)page + PAGE_HEADER_SIZE, sizeof(tag));
    return tag;
}

#define assert_payload(page, tag)                                              \
    do {                                                                       \
        const void *pg_ = (page);                                              \
        uint64_t tag_ = (tag);                                                 \
        if (!payload_matches(pg_, tag_))                                       \
            fail_msg("page holds tag %#llx, expected %#llx",                   \
                     (unsigned long long)payload_tag(pg_),                     \
                     (unsigned long long)tag_);                                \
    } while (0)

/* Creates rel with nblocks blocks of generation gen, through smgr. */
static void make_rel(fixture *f, relnumber_t rel, blocknum_t nblocks,
                     unsigned gen)
{
    smgr_rel *r = NULL;
    test_page p;

    assert_int_equal(smgr_create(f->sm, rel, &r, &f->err), KEEL_OK);
    for (blocknum_t i = 0; i < nblocks; i++) {
        blocknum_t blk = MAX_BLOCK_NUMBER;
        page_init(p.b, 0);
        fill_payload(p.b, tag_of(rel, i, gen));
        assert_int_equal(smgr_extend(r, p.b, &blk, &f->err), KEEL_OK);
        assert_int_equal(blk, i);
    }
}

static const char *rel_path(fixture *f, relnumber_t rel)
{
    smgr_rel *r = NULL;

    assert_int_equal(smgr_rel_open(f->sm, rel, &r, &f->err), KEEL_OK);
    return smgr_rel_path(r);
}

static blocknum_t rel_nblocks(fixture *f, relnumber_t rel)
{
    smgr_rel *r = NULL;

    assert_int_equal(smgr_rel_open(f->sm, rel, &r, &f->err), KEEL_OK);
    return smgr_nblocks(r);
}

/* Reads block blk of rel straight from the file, bypassing everything. */
static void read_disk(fixture *f, relnumber_t rel, blocknum_t blk, test_page *p)
{
    int fd = open(rel_path(f, rel), O_RDONLY);

    assert_true(fd >= 0);
    assert_int_equal(pread(fd, p->b, BLOCK_SIZE, (off_t)blk * BLOCK_SIZE),
                     BLOCK_SIZE);
    close(fd);
}

static bool disk_matches(fixture *f, relnumber_t rel, blocknum_t blk,
                         uint64_t tag)
{
    test_page p;

    read_disk(f, rel, blk, &p);
    return page_verify(p.b, NULL, NULL) == PAGE_OK && payload_matches(p.b, tag);
}

/* Reads (rel, blk) and asserts success; returns the pinned buffer. */
static int32_t read_ok(buf_session *s, relnumber_t rel, blocknum_t blk,
                       buf_strategy *st)
{
    int32_t id = BUF_INVALID;
    int rc = buf_read(s, rel, blk, &(buf_read_opts){.strategy = st}, &id);

    if (rc != KEEL_OK)
        fail_msg("buf_read(%u, %u): %s", rel, blk, buf_session_error(s)->msg);
    assert_true(id >= 0);
    return id;
}

/* Overwrites the payload of pinned buffer id with tag, marking it dirty. */
static void write_buf(fixture *f, buf_session *s, int32_t id, uint64_t tag)
{
    buf_lock(s, id, LW_EXCLUSIVE);
    fill_payload(buf_page(f->pool, id), tag);
    buf_mark_dirty(s, id);
    buf_unlock(s, id);
    assert_true(buf_state(f->pool, id) & BM_DIRTY);
}

static uint32_t refcount(fixture *f, int32_t id)
{
    return BUF_REFCOUNT(buf_state(f->pool, id));
}

static uint32_t usage(fixture *f, int32_t id)
{
    return BUF_USAGE(buf_state(f->pool, id));
}

/* Asserts that buffer id holds the page written with tag and that f->s
 * holds pins pins on it: one shared pin, the rest private. */
static void assert_held(fixture *f, int32_t id, uint64_t tag, uint32_t pins)
{
    assert_payload(buf_page(f->pool, id), tag);
    assert_int_equal(buf_pin_count(f->s, id), pins);
    assert_int_equal(refcount(f, id), 1);
}

/* Asserts that no buffer of the pool is pinned by anyone. */
static void assert_nothing_pinned(fixture *f)
{
    for (uint32_t i = 0; i < buf_pool_size(f->pool); i++)
        if (refcount(f, (int32_t)i) != 0)
            fail_msg("buffer %u has refcount %u", i, refcount(f, (int32_t)i));
    if (f->s != NULL)
        assert_int_equal(buf_session_pinned(f->s), 0);
    if (f->s2 != NULL)
        assert_int_equal(buf_session_pinned(f->s2), 0);
}

static void assert_msg_has(const buf_session *s, const char *what)
{
    const char *msg = buf_session_error(s)->msg;

    if (strstr(msg, what) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", msg, what);
}

/* ---- pins ---------------------------------------------------------- */

static void test_read_and_pin_counts(void **state)
{
    fixture *f = *state;
    relnumber_t rel;
    blocknum_t blk;
    int32_t id, id2;
    uint64_t st;

    make_rel(f, REL_A, 4, 1);
    pool_open(f, 16);

    id = read_ok(f->s, REL_A, 2, NULL);
    assert_true((uint32_t)id < 16);
    assert_payload(buf_page(f->pool, id), tag_of(REL_A, 2, 1));
    buf_block_of(f->pool, id, &rel, &blk);
    assert_int_equal(rel, REL_A);
    assert_int_equal(blk, 2);
    st = buf_state(f->pool, id);
    assert_true(st & BM_VALID);
    assert_true(st & BM_TAG_VALID);
    assert_false(st & (BM_DIRTY | BM_IO_IN_PROGRESS | BM_IO_ERROR | BM_LOCKED));
    assert_int_equal(buf_pin_count(f->s, id), 1);
    assert_int_equal(BUF_REFCOUNT(st), 1);
    assert_int_equal(buf_session_pinned(f->s), 1);

    /* Reading it again is the same buffer; only the private count grows. */
    id2 = read_ok(f->s, REL_A, 2, NULL);
    assert_int_equal(id2, id);
    assert_int_equal(buf_pin_count(f->s, id), 2);
    assert_int_equal(refcount(f, id), 1);
    assert_int_equal(buf_pin(f->s, id), KEEL_OK);
    assert_int_equal(buf_pin_count(f->s, id), 3);
    assert_int_equal(refcount(f, id), 1);
    assert_int_equal(buf_session_pinned(f->s), 1);

    /* A second session adds one shared pin. */
    id2 = read_ok(f->s2, REL_A, 2, NULL);
    assert_int_equal(id2, id);
    assert_int_equal(buf_pin_count(f->s2, id), 1);
    assert_int_equal(buf_pin_count(f->s, id), 3);
    assert_int_equal(refcount(f, id), 2);
    assert_int_equal(buf_pin(f->s2, id), KEEL_OK);
    assert_int_equal(refcount(f, id), 2);

    /* Another block is another buffer. */
    id2 = read_ok(f->s, REL_A, 3, NULL);
    assert_int_not_equal(id2, id);
    assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 3, 1));
    assert_int_equal(buf_session_pinned(f->s), 2);
    buf_release(f->s, id2);

    buf_release(f->s2, id);
    assert_int_equal(refcount(f, id), 2);
    buf_release(f->s2, id);
    assert_int_equal(buf_pin_count(f->s2, id), 0);
    assert_int_equal(refcount(f, id), 1);
    for (uint32_t left = 3; left > 0; left--) {
        assert_int_equal(buf_pin_count(f->s, id), left);
        assert_int_equal(refcount(f, id), 1);
        buf_release(f->s, id);
    }
    assert_int_equal(buf_pin_count(f->s, id), 0);
    assert_int_equal(refcount(f, id), 0);
    assert_nothing_pinned(f);

    /* Unpinned, the page stays cached: the same buffer comes back. */
    assert_int_equal(read_ok(f->s, REL_A, 2, NULL), id);
    buf_release(f->s, id);
}

/* Destroying a session releases every pin it still holds. */
static void test_session_destroy_releases_pins(void **state)
{
    fixture *f = *state;
    int32_t ids[20];

    make_rel(f, REL_A, 20, 1);
    pool_open(f, 32);
    for (blocknum_t b = 0; b < 20; b++) {
        ids[b] = read_ok(f->s2, REL_A, b, NULL);
        assert_int_equal(buf_pin(f->s2, ids[b]), KEEL_OK);
        assert_int_equal(refcount(f, ids[b]), 1);
    }
    (void)read_ok(f->s, REL_A, 0, NULL);
    assert_int_equal(refcount(f, ids[0]), 2);
    assert_int_equal(buf_session_pinned(f->s2), 20);
    buf_session_destroy(f->s2);
    f->s2 = NULL;
    assert_int_equal(refcount(f, ids[0]), 1);
    for (blocknum_t b = 1; b < 20; b++)
        assert_int_equal(refcount(f, ids[b]), 0);
    buf_release(f->s, ids[0]);
    assert_nothing_pinned(f);
}

#define OVF_BLOCKS 40

/* Checks the session's view of every buffer against the model. */
static void check_pins(fixture *f, const uint32_t *model, uint32_t nbuf)
{
    uint32_t distinct = 0;

    for (uint32_t i = 0; i < nbuf; i++) {
        if (buf_pin_count(f->s, (int32_t)i) != model[i])
            fail_msg("buffer %u: pin count %u, expected %u", i,
                     buf_pin_count(f->s, (int32_t)i), model[i]);
        if (refcount(f, (int32_t)i) != (model[i] > 0))
            fail_msg("buffer %u: refcount %u with %u private pins", i,
                     refcount(f, (int32_t)i), model[i]);
        distinct += model[i] > 0;
    }
    assert_int_equal(buf_session_pinned(f->s), distinct);
}

/*
 * More distinct buffers pinned than the eight private slots hold: the rest
 * go to the displaced slots and the overflow hash.  Random pins and
 * releases against a model, then everything released in random order.
 */
static void test_private_refcount_overflow(void **state)
{
    fixture *f = *state;
    uint32_t model[64] = {0};
    int32_t ids[OVF_BLOCKS];
    uint32_t per_home[BUF_PRIVATE_REFS] = {0};
    uint32_t crowded = 0;
    uint64_t rng = 0x1234567;
    int32_t *order;
    uint32_t norder = 0, total = 0;

    make_rel(f, REL_A, 64, 1);
    pool_open(f, 64);

    for (blocknum_t b = 0; b < OVF_BLOCKS; b++) {
        ids[b] = read_ok(f->s, REL_A, b, NULL);
        for (blocknum_t c = 0; c < b; c++)
            assert_int_not_equal(ids[c], ids[b]);
        model[ids[b]] = 1;
        per_home[(uint32_t)ids[b] % BUF_PRIVATE_REFS]++;
        /* More pins, alternately by buf_pin and by reading again. */
        for (uint32_t k = 0; k < b % 4; k++) {
            if (k % 2 == 0)
                assert_int_equal(buf_pin(f->s, ids[b]), KEEL_OK);
            else
                assert_int_equal(read_ok(f->s, REL_A, b, NULL), ids[b]);
            model[ids[b]]++;
        }
        check_pins(f, model, 64);
    }
    /* Buffers that share a home slot are among them. */
    for (int i = 0; i < BUF_PRIVATE_REFS; i++)
        crowded += per_home[i] >= 2;
    assert_true(crowded >= 1);
    assert_int_equal(buf_session_pinned(f->s), OVF_BLOCKS);
    for (blocknum_t b = 0; b < OVF_BLOCKS; b++)
        assert_payload(buf_page(f->pool, ids[b]), tag_of(REL_A, b, 1));

    /* Random pins and releases, checked against the model. */
    for (int op = 0; op < 4000; op++) {
        blocknum_t b = (blocknum_t)(tu_rand(&rng) % OVF_BLOCKS);
        int32_t id = ids[b];
        uint64_t r = tu_rand(&rng);

        if (model[id] > 0 && (r & 1)) {
            buf_release(f->s, id);
            model[id]--;
        } else if (model[id] > 0 && (r & 2)) {
            assert_int_equal(buf_pin(f->s, id), KEEL_OK);
            model[id]++;
        } else {
            /* The page stays cached (64 blocks, 64 buffers). */
            assert_int_equal(read_ok(f->s, REL_A, b, NULL), id);
            model[id]++;
        }
        if (buf_pin_count(f->s, id) != model[id])
            fail_msg("op %d: buffer %d pin count %u, expected %u", op, id,
                     buf_pin_count(f->s, id), model[id]);
        assert_int_equal(refcount(f, id), model[id] > 0);
        if (op % 97 == 0)
            check_pins(f, model, 64);
    }
    check_pins(f, model, 64);

    /* Release every pin in random order. */
    for (uint32_t i = 0; i < 64; i++)
        total += model[i];
    order = malloc(sizeof(*order) * (total ? total : 1));
    assert_non_null(order);
    for (uint32_t i = 0; i < 64; i++)
        for (uint32_t k = 0; k < model[i]; k++)
            order[norder++] = (int32_t)i;
    for (uint32_t i = norder; i > 1; i--) {
        uint32_t j = (uint32_t)(tu_rand(&rng) % i);
        int32_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (uint32_t i = 0; i < norder; i++) {
        buf_release(f->s, order[i]);
        model[order[i]]--;
        assert_int_equal(buf_pin_count(f->s, order[i]), model[order[i]]);
        if (i % 16 == 0)
            check_pins(f, model, 64);
    }
    free(order);
    check_pins(f, model, 64);
    assert_nothing_pinned(f);

    /* The session is still sound: pin them all again, release again. */
    for (blocknum_t b = 0; b < OVF_BLOCKS; b++)
        assert_int_equal(read_ok(f->s, REL_A, b, NULL), ids[b]);
    assert_int_equal(buf_session_pinned(f->s), OVF_BLOCKS);
    for (blocknum_t b = OVF_BLOCKS; b-- > 0;)
        buf_release(f->s, ids[b]);
    assert_nothing_pinned(f);
}

/* ---- extend, flush, checkpoint, reopen ---------------------------------- */

static void test_extend_flush_checkpoint_reopen(void **state)
{
    fixture *f = *state;
    int32_t ids[3];
    test_page disk;

    assert_int_equal(smgr_create(f->sm, REL_A, NULL, &f->err), KEEL_OK);
    pool_open(f, 16);

    for (blocknum_t b = 0; b < 3; b++) {
        blocknum_t blk = MAX_BLOCK_NUMBER;
        const page_header *h;
        int32_t id = BUF_INVALID;

        if (buf_extend(f->s, REL_A, 16, NULL, &id, &blk) != KEEL_OK)
            fail_msg("buf_extend: %s", buf_session_error(f->s)->msg);
        assert_int_equal(blk, b);
        assert_true(id >= 0 && id < 16);
        ids[b] = id;
        /* Pinned once, exclusively locked, an initialized page. */
        assert_int_equal(buf_pin_count(f->s, id), 1);
        assert_int_equal(refcount(f, id), 1);
        assert_true(buf_lock_held_exclusive(f->s, id));
        assert_true(buf_state(f->pool, id) & BM_VALID);
        h = buf_page(f->pool, id);
        assert_int_equal(h->version, PAGE_LAYOUT_VERSION);
        assert_int_equal(h->lower, PAGE_HEADER_SIZE);
        assert_int_equal(h->special, BLOCK_SIZE - 16);
        assert_int_equal(h->upper, BLOCK_SIZE - 16);
        /* Its space is already in the file, as zeroes; the initialized
         * page is the buffer's, dirty from the start. */
        assert_int_equal(rel_nblocks(f, REL_A), b + 1);
        read_disk(f, REL_A, b, &disk);
        assert_true(page_is_new(disk.b));
        assert_true(buf_state(f->pool, id) & BM_DIRTY);

        fill_payload(buf_page(f->pool, id), tag_of(REL_A, b, 2));
        buf_mark_dirty(f->s, id);
        assert_true(buf_state(f->pool, id) & BM_DIRTY);
        buf_unlock(f->s, id);
        assert_false(buf_lock_held(f->s, id));
        buf_release(f->s, id);
    }
    assert_nothing_pinned(f);

    /* On disk so far: zeroes, not our data. */
    for (blocknum_t b = 0; b < 3; b++) {
        read_disk(f, REL_A, b, &disk);
        assert_true(page_is_new(disk.b));
    }

    /* buf_flush writes exactly that buffer. */
    assert_int_equal(read_ok(f->s, REL_A, 0, NULL), ids[0]);
    assert_int_equal(buf_flush(f->s, ids[0]), KEEL_OK);
    assert_false(buf_state(f->pool, ids[0]) & BM_DIRTY);
    assert_true(buf_state(f->pool, ids[0]) & BM_VALID);
    assert_true(disk_matches(f, REL_A, 0, tag_of(REL_A, 0, 2)));
    read_disk(f, REL_A, 0, &disk);
    assert_int_equal(((page_header *)disk.b)->special, BLOCK_SIZE - 16);
    assert_false(disk_matches(f, REL_A, 1, tag_of(REL_A, 1, 2)));
    /* Flushing a clean buffer is a no-op that succeeds. */
    assert_int_equal(buf_flush(f->s, ids[0]), KEEL_OK);
    buf_release(f->s, ids[0]);

    /* The checkpoint writes the rest. */
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (blocknum_t b = 0; b < 3; b++) {
        assert_false(buf_state(f->pool, ids[b]) & BM_DIRTY);
        assert_true(disk_matches(f, REL_A, b, tag_of(REL_A, b, 2)));
    }

    /* A change after the checkpoint reaches disk at the clean close. */
    assert_int_equal(read_ok(f->s, REL_A, 1, NULL), ids[1]);
    write_buf(f, f->s, ids[1], tag_of(REL_A, 1, 3));
    buf_release(f->s, ids[1]);
    pool_close(f);
    smgr_close(f->sm);
    f->sm = NULL;
    assert_int_equal(smgr_open(f->dir, &f->sm, &f->err), KEEL_OK);
    pool_open(f, 16);
    for (blocknum_t b = 0; b < 3; b++) {
        int32_t id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, b == 1 ? 3 : 2));
        assert_false(buf_state(f->pool, id) & BM_DIRTY);
        buf_release(f->s, id);
    }
    assert_true(disk_matches(f, REL_A, 1, tag_of(REL_A, 1, 3)));
    assert_nothing_pinned(f);
}

/* ---- eviction ----------------------------------------------------------- */

/*
 * Every page buf_extend() returns is empty, also when the victim it reused
 * was dirty and had to be written out first (the write goes through the
 * session's private copy, which must not leak into the new page).
 */
static void test_extend_dirty_victims(void **state)
{
    fixture *f = *state;
    char empty[BLOCK_SIZE];

    pool_open(f, 16);
    assert_int_equal(smgr_create(f->sm, 1, NULL, &f->err), KEEL_OK);
    page_init(empty, 16);
    for (blocknum_t want = 0; want < 48; want++) {
        int32_t id;
        blocknum_t blk;
        char *page;

        assert_int_equal(buf_extend(f->s, 1, 16, NULL, &id, &blk), KEEL_OK);
        assert_int_equal(blk, want);
        page = buf_page(f->pool, id);
        /* Header fields and body as page_init() makes them (the stale
         * in-memory checksum aside). */
        assert_memory_equal(page + 8 + 4, empty + 8 + 4, BLOCK_SIZE - 8 - 4);
        memset(page + PAGE_HEADER_SIZE, (int)(0x40 + want % 32),
               BLOCK_SIZE - PAGE_HEADER_SIZE - 16);
        buf_mark_dirty(f->s, id);
        buf_unlock(f->s, id);
        buf_release(f->s, id);
    }
    /* And each block kept its own contents through eviction. */
    for (blocknum_t b = 0; b < 48; b++) {
        int32_t id = read_ok(f->s, 1, b, NULL);
        const unsigned char *page = buf_page(f->pool, id);
        assert_int_equal(page[PAGE_HEADER_SIZE], 0x40 + b % 32);
        assert_int_equal(page[BLOCK_SIZE - 17], 0x40 + b % 32);
        buf_release(f->s, id);
    }
    assert_nothing_pinned(f);
}

/*
 * Sessions that read a relation's last block while another extends it find
 * a new block's buffer as soon as the file counts the block, and wait for
 * it; buf_extend() must hand back an initialized page every time.
 */
typedef struct tail_reader {
    buf_pool *pool;
    smgr_rel *r;
    atomic_int *stop;
    int reads;
} tail_reader;

static void *tail_reader_main(void *arg)
{
    tail_reader *t = arg;
    buf_session *s;
    kerr e;

    if (buf_session_create(t->pool, &s, &e) != KEEL_OK)
        return NULL;
    while (!atomic_load(t->stop)) {
        blocknum_t n = smgr_nblocks(t->r);
        int32_t id;
        if (n > 0 && buf_read(s, REL_A, n - 1, NULL, &id) == KEEL_OK) {
            buf_lock(s, id, LW_SHARED);
            buf_unlock_release(s, id);
            t->reads++;
        }
    }
    buf_session_destroy(s);
    return NULL;
}

static void test_extend_against_readers(void **state)
{
    fixture *f = *state;
    atomic_int stop = 0;
    tail_reader t[2];
    pthread_t th[2];
    smgr_rel *r;

    assert_int_equal(smgr_create(f->sm, REL_A, &r, &f->err), KEEL_OK);
    pool_open(f, 256);
    for (int i = 0; i < 2; i++) {
        t[i] = (tail_reader){f->pool, r, &stop, 0};
        assert_int_equal(pthread_create(&th[i], NULL, tail_reader_main, &t[i]),
                         0);
    }
    for (blocknum_t b = 0; b < 4000; b++) {
        int32_t id = BUF_INVALID;
        blocknum_t blk = MAX_BLOCK_NUMBER;
        const page_header *h;
        if (buf_extend(f->s, REL_A, 16, NULL, &id, &blk) != KEEL_OK)
            fail_msg("buf_extend: %s", buf_session_error(f->s)->msg);
        assert_int_equal(blk, b);
        h = buf_page(f->pool, id);
        if (h->special != BLOCK_SIZE - 16 || h->lower != PAGE_HEADER_SIZE)
            fail_msg("block %u: special %u, lower %u", b, h->special, h->lower);
        assert_true(buf_state(f->pool, id) & BM_DIRTY);
        buf_unlock_release(f->s, id);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_true(t[0].reads + t[1].reads > 0);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    assert_nothing_pinned(f);
}

/*
 * The buffer is mapped to the new block before the file counts it, and
 * locked before it turns valid.  So right after the extension (the fault
 * point, before buf_extend() returns) another session that finds the block
 * counted gets the extender's buffer, valid and initialized, and cannot
 * lock it: nobody uses a new block before its extender.  And the extension
 * reads nothing from the file (a read of the relation would fail here).
 */
typedef struct seen_block {
    fixture *f;
    int32_t id;
    bool locked_out;
    bool initialized;
} seen_block;

static void see_new_block(void *ctx, uint32_t rel, uint32_t blk)
{
    seen_block *sb = ctx;
    fixture *f = sb->f;
    int32_t id = BUF_INVALID;
    const page_header *h;

    if (buf_read(f->s2, rel, blk, NULL, &id) != KEEL_OK)
        return; /* sb->id stays BUF_INVALID: the test fails below */
    h = buf_page(f->pool, id);
    sb->id = id;
    sb->locked_out = !buf_try_lock(f->s2, id, LW_SHARED);
    if (!sb->locked_out)
        buf_unlock(f->s2, id);
    sb->initialized = !page_is_new(h) && h->lower == PAGE_HEADER_SIZE &&
                      h->special == BLOCK_SIZE - 16;
    buf_release(f->s2, id);
}

static void test_extend_new_block_is_ours(void **state)
{
    fixture *f = *state;
    seen_block sb = {f, BUF_INVALID, false, false};
    int32_t id = BUF_INVALID;
    blocknum_t blk = MAX_BLOCK_NUMBER;
    int rc;

    make_rel(f, REL_A, 4, 1);
    pool_open(f, 16);
    fault_point_set(FAULT_POINT_EXTENDED, see_new_block, &sb);
    fault_arm(FAULT_OP_READ, FAULT_EIO, 0, 1, REL_A);
    rc = buf_extend(f->s, REL_A, 16, NULL, &id, &blk);
    fault_point_set(FAULT_POINT_EXTENDED, NULL, NULL);
    assert_int_equal(fault_delivered(FAULT_OP_READ), 0);
    fault_disarm_all();
    assert_int_equal(rc, KEEL_OK);
    buf_unlock_release(f->s, id);
    assert_int_equal(blk, 4);
    assert_int_equal(sb.id, id);
    assert_true(sb.locked_out);
    assert_true(sb.initialized);
    assert_nothing_pinned(f);
}

/*
 * Sessions that use the new block as a heap insert uses the last one: the
 * first to find it still zeroes initializes it and stamps it as theirs,
 * then they read other blocks, so that in a pool of 16 buffers stamped
 * pages are soon written out and their buffers reused.  However they race
 * the extender, it has every new block first (and stamps it): a block
 * another session stamped before buf_extend() returned it, or a page that
 * lost its stamp, fails the test.
 */
#define CLAIM_BLOCKS 3000
#define CLAIMERS     4

typedef struct claimer {
    buf_pool *pool;
    smgr_rel *r;
    atomic_int *stop;
    _Atomic uint32_t *claim; /* per block: 0, or the stamp of its owner */
    uint32_t stamp;
    tu_failures *log;
} claimer;

/* Stamps a new (zeroes or just initialized) page as ours, if nobody's. */
static void claim_page(_Atomic uint32_t *claim, void *page, blocknum_t blk,
                       uint32_t stamp)
{
    uint32_t none = 0;

    if (page_is_new(page))
        page_init(page, 0);
    if (atomic_compare_exchange_strong(&claim[blk], &none, stamp))
        tu_body_write(page, REL_A, blk, stamp);
}

static void *claimer_main(void *arg)
{
    claimer *c = arg;
    uint64_t rnd = c->stamp;
    buf_session *s;
    kerr e;

    if (buf_session_create(c->pool, &s, &e) != KEEL_OK) {
        tu_fail(c->log, "session: %s", e.msg);
        return NULL;
    }
    while (!atomic_load(c->stop) && !tu_failed(c->log)) {
        blocknum_t n = smgr_nblocks(c->r);
        int32_t id;
        if (n == 0 || n > CLAIM_BLOCKS)
            continue;
        if (buf_read(s, REL_A, n - 1, NULL, &id) == KEEL_OK) {
            buf_lock(s, id, LW_EXCLUSIVE);
            if (atomic_load(&c->claim[n - 1]) == 0) {
                claim_page(c->claim, buf_page(c->pool, id), n - 1, c->stamp);
                buf_mark_dirty(s, id);
            }
            buf_unlock(s, id);
            /* Written out now; the reads below take its buffer soon. */
            if (buf_flush(s, id) != KEEL_OK)
                tu_fail(c->log, "flush: %s", buf_session_error(s)->msg);
            buf_release(s, id);
        }
        for (int k = 0; k < 20; k++)
            if (buf_read(s, REL_A, (blocknum_t)(tu_rand(&rnd) % n), NULL,
                         &id) == KEEL_OK)
                buf_release(s, id);
    }
    buf_session_destroy(s);
    return NULL;
}

static void test_extend_against_claimers(void **state)
{
    fixture *f = *state;
    static _Atomic uint32_t claim[CLAIM_BLOCKS];
    tu_failures log = TU_FAILURES_INIT;
    atomic_int stop = 0;
    claimer c[CLAIMERS];
    pthread_t th[CLAIMERS];
    smgr_rel *r;
    int taken = 0;

    for (int i = 0; i < CLAIM_BLOCKS; i++)
        atomic_store(&claim[i], 0);
    assert_int_equal(smgr_create(f->sm, REL_A, &r, &f->err), KEEL_OK);
    pool_open(f, 16);
    for (int i = 0; i < CLAIMERS; i++) {
        c[i] = (claimer){f->pool, r, &stop, claim, (uint32_t)(100 + i), &log};
        assert_int_equal(pthread_create(&th[i], NULL, claimer_main, &c[i]), 0);
    }
    for (blocknum_t b = 0; b < CLAIM_BLOCKS && !tu_failed(&log); b++) {
        int32_t id = BUF_INVALID;
        blocknum_t blk = MAX_BLOCK_NUMBER;
        void *page;
        if (buf_extend(f->s, REL_A, 0, NULL, &id, &blk) != KEEL_OK)
            fail_msg("buf_extend: %s", buf_session_error(f->s)->msg);
        assert_int_equal(blk, b);
        page = buf_page(f->pool, id);
        if (atomic_load(&claim[b]) != 0) {
            tu_page_body body;
            {
                uint64_t tail;
                tu_body_read(page, &body, &tail);
            }
            if (body.value != atomic_load(&claim[b]))
                tu_fail(&log,
                        "block %u: claimed by %u, but buf_extend returned it "
                        "holding %llu",
                        b, atomic_load(&claim[b]),
                        (unsigned long long)body.value);
            taken++;
        } else {
            claim_page(claim, page, b, 1);
            buf_mark_dirty(f->s, id);
        }
        buf_unlock_release(f->s, id);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < CLAIMERS; i++)
        pthread_join(th[i], NULL);
    tu_failures_check(&log);
    if (taken != 0)
        fail_msg("%d of %d blocks claimed by another session before "
                 "buf_extend() returned them",
                 taken, CLAIM_BLOCKS);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (blocknum_t b = 0; b < CLAIM_BLOCKS; b++) {
        int32_t id = read_ok(f->s, REL_A, b, NULL);
        tu_page_body body;
        {
            uint64_t tail;
            tu_body_read(buf_page(f->pool, id), &body, &tail);
        }
        if (body.value != atomic_load(&claim[b]))
            fail_msg("block %u: holds %llu, claimed by %u", b,
                     (unsigned long long)body.value, atomic_load(&claim[b]));
        buf_release(f->s, id);
    }
    assert_nothing_pinned(f);
}

static void test_eviction_writes_dirty_pages(void **state)
{
    fixture *f = *state;
    const blocknum_t n = 200;
    uint32_t on_disk = 0;

    make_rel(f, REL_A, n, 1);
    pool_open(f, 32);

    for (blocknum_t b = 0; b < n; b++) {
        int32_t id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, 1));
        write_buf(f, f->s, id, tag_of(REL_A, b, 2));
        buf_release(f->s, id);
    }
    assert_nothing_pinned(f);
    /* At most 32 blocks can still be only in the pool. */
    for (blocknum_t b = 0; b < n; b++)
        on_disk += disk_matches(f, REL_A, b, tag_of(REL_A, b, 2));
    assert_true(on_disk >= n - 32);

    for (blocknum_t b = 0; b < n; b++) {
        int32_t id = read_ok(f->s, REL_A, b, NULL);
        buf_lock(f->s, id, LW_SHARED);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, 2));
        buf_unlock(f->s, id);
        buf_release(f->s, id);
    }
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (blocknum_t b = 0; b < n; b++)
        assert_true(disk_matches(f, REL_A, b, tag_of(REL_A, b, 2)));
    assert_nothing_pinned(f);
}

/* ---- exhaustion --------------------------------------------------------- */

static void test_exhaustion(void **state)
{
    fixture *f = *state;
    int32_t ids[16], id = BUF_INVALID;

    make_rel(f, REL_A, 20, 1);
    pool_open(f, 16);
    for (blocknum_t b = 0; b < 16; b++)
        ids[b] = read_ok(f->s, REL_A, b, NULL);
    assert_int_equal(buf_session_pinned(f->s), 16);

    assert_int_equal(buf_read(f->s, REL_A, 16, NULL, &id), KEEL_EEXHAUSTED);
    assert_int_equal(buf_session_error(f->s)->code, KEEL_EEXHAUSTED);
    assert_msg_has(f->s, "exhausted");
    /* The failed call left nothing pinned. */
    assert_int_equal(buf_session_pinned(f->s), 16);
    for (blocknum_t b = 0; b < 16; b++) {
        assert_int_equal(buf_pin_count(f->s, ids[b]), 1);
        assert_int_equal(refcount(f, ids[b]), 1);
    }
    /* Another session too, and with a strategy, and extending. */
    assert_int_equal(buf_read(f->s2, REL_A, 17, NULL, &id), KEEL_EEXHAUSTED);
    assert_msg_has(f->s2, "exhausted");
    {
        buf_strategy *st = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
        blocknum_t blk;
        assert_non_null(st);
        assert_int_equal(
            buf_read(f->s2, REL_A, 18, &(buf_read_opts){.strategy = st}, &id),
            KEEL_EEXHAUSTED);
        buf_strategy_free(st);
        assert_int_equal(buf_extend(f->s2, REL_A, 0, NULL, &id, &blk),
                         KEEL_EEXHAUSTED);
    }
    assert_int_equal(buf_session_pinned(f->s2), 0);
    /* The failed extension found no buffer before the file grew: it did
     * not grow. */
    assert_int_equal(rel_nblocks(f, REL_A), 20);
    /* A resident block can still be read. */
    assert_int_equal(read_ok(f->s2, REL_A, 3, NULL), ids[3]);
    assert_int_equal(refcount(f, ids[3]), 2);
    buf_release(f->s2, ids[3]);

    /* One buffer freed: the read succeeds, in that buffer. */
    buf_release(f->s, ids[5]);
    id = read_ok(f->s, REL_A, 16, NULL);
    assert_int_equal(id, ids[5]);
    assert_payload(buf_page(f->pool, id), tag_of(REL_A, 16, 1));
    buf_release(f->s, id);
    for (blocknum_t b = 0; b < 16; b++)
        if (b != 5)
            buf_release(f->s, ids[b]);
    assert_nothing_pinned(f);

    /* And everything is usable again. */
    for (blocknum_t b = 0; b < 20; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, 1));
        buf_release(f->s, id);
    }
    assert_int_equal(buf_read(f->s, REL_A, 20, NULL, &id), KEEL_EEOF);
    {
        blocknum_t blk = 0;
        const page_header *h;
        assert_int_equal(buf_extend(f->s, REL_A, 16, NULL, &id, &blk), KEEL_OK);
        assert_int_equal(blk, 20);
        h = buf_page(f->pool, id);
        assert_int_equal(h->special, BLOCK_SIZE - 16);
        buf_unlock_release(f->s, id);
    }
    assert_nothing_pinned(f);
}

/* ---- errors ------------------------------------------------------------- */

static void test_read_errors(void **state)
{
    fixture *f = *state;
    int32_t id = BUF_INVALID;
    blocknum_t blk;
    buf_pool *p = NULL;
    char want[4200];

    assert_int_equal(buf_pool_create(f->sm, 15, &p, &f->err), KEEL_EINVAL);
    assert_null(p);

    make_rel(f, REL_A, 2, 1);
    pool_open(f, 16);

    /* Past the end. */
    assert_int_equal(buf_read(f->s, REL_A, 2, NULL, &id), KEEL_EEOF);
    assert_int_equal(buf_session_error(f->s)->code, KEEL_EEOF);
    assert_msg_has(f->s, rel_path(f, REL_A));
    assert_msg_has(f->s, "block 2 ");
    assert_int_equal(buf_read(f->s, REL_A, 1000, NULL, &id), KEEL_EEOF);
    assert_msg_has(f->s, "block 1000 ");
    assert_int_equal(buf_read(f->s, REL_A, MAX_BLOCK_NUMBER, NULL, &id),
                     KEEL_EEOF);
    assert_nothing_pinned(f);

    /* No such relation. */
    assert_int_equal(buf_read(f->s, REL_MISSING, 0, NULL, &id), KEEL_ENOENT);
    assert_int_equal(buf_session_error(f->s)->code, KEEL_ENOENT);
    snprintf(want, sizeof(want), "%s/%u", f->dir, REL_MISSING);
    assert_msg_has(f->s, want);
    assert_int_equal(buf_extend(f->s, REL_MISSING, 0, NULL, &id, &blk),
                     KEEL_ENOENT);
    assert_false(smgr_exists(f->sm, REL_MISSING));

    /* Relation 0 is invalid. */
    assert_int_equal(buf_read(f->s, INVALID_RELNUMBER, 0, NULL, &id),
                     KEEL_EINVAL);
    assert_int_equal(buf_session_error(f->s)->code, KEEL_EINVAL);
    assert_int_equal(buf_read(f->s, INVALID_RELNUMBER, 1, NULL, &id),
                     KEEL_EINVAL);
    assert_nothing_pinned(f);

    /* None of that disturbed good reads. */
    for (blocknum_t b = 0; b < 2; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, 1));
        buf_release(f->s, id);
    }
    assert_nothing_pinned(f);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * buf_read() with lines to prefetch is a plain read with a hint: the same
 * buffers, pins and payloads, through misses and evictions, and the same
 * errors; buf_prefetch() is the hint alone and changes nothing.  The
 * mapping table's hash puts runs of 16 blocks of a relation on one line
 * of bucket heads, and keeps distinct tags distinct.
 */
static void test_read_prefetch(void **state)
{
    fixture *f = *state;
    const uint16_t lines[BUF_PREFETCH_MAX] = {0, 64, 100, 4096, 8000, 8191};
    int32_t id, id2;
    static uint64_t hashes[4 * 1024];

    uint64_t reads0;

    make_rel(f, REL_A, 40, 1);
    pool_open(f, 16);
    reads0 = buf_session_reads(f->s);
    for (int pass = 0; pass < 2; pass++) {
        for (blocknum_t b = 0; b < 40; b++) {
            uint32_t n = (b + (blocknum_t)pass) % (BUF_PREFETCH_MAX - 1);
            assert_int_equal(
                buf_read(f->s, REL_A, b,
                         &(buf_read_opts){.lines = lines, .nlines = n}, &id),
                KEEL_OK);
            assert_held(f, id, tag_of(REL_A, b, 1), 1);
            /* Again while pinned: the same buffer, a private pin. */
            assert_int_equal(
                buf_read(f->s, REL_A, b,
                         &(buf_read_opts){.lines = lines, .nlines = 2}, &id2),
                KEEL_OK);
            assert_int_equal(id2, id);
            assert_held(f, id, tag_of(REL_A, b, 1), 2);
            buf_release(f->s, id);
            buf_release(f->s, id);
        }
    }
    assert_nothing_pinned(f);
    /* Every read counts, misses (first pass) and hits alike. */
    assert_int_equal(buf_session_reads(f->s) - reads0, 2 * 40 * 2);
    assert_int_equal(buf_read(f->s, REL_A, 0, NULL, &id), KEEL_OK);
    buf_release(f->s, id);
    assert_int_equal(buf_session_reads(f->s) - reads0, 2 * 40 * 2 + 1);
    assert_int_equal(buf_read(f->s, REL_A, 40,
                              &(buf_read_opts){.lines = lines, .nlines = 3},
                              &id),
                     KEEL_EEOF);
    assert_msg_has(f->s, "block 40 ");
    assert_int_equal(buf_read(f->s, REL_MISSING, 0,
                              &(buf_read_opts){.lines = lines, .nlines = 3},
                              &id),
                     KEEL_ENOENT);
    assert_int_equal(buf_read(f->s, INVALID_RELNUMBER, 0,
                              &(buf_read_opts){.lines = lines, .nlines = 3},
                              &id),
                     KEEL_EINVAL);
    assert_nothing_pinned(f);

    /* buf_prefetch() only hints: for a resident block, one not in the
     * pool, one past the end, a missing relation or none, it pins
     * nothing, counts no read and changes no buffer's state (a pool of 16
     * buffers). */
    {
        uint64_t before[16], r0 = buf_session_reads(f->s);
        for (int32_t i = 0; i < 16; i++)
            before[i] = buf_state(f->pool, i);
        buf_prefetch(f->s, REL_A, 39, lines, BUF_PREFETCH_MAX, 0);
        buf_prefetch(f->s, REL_A, 0, lines, 3, 0);
        buf_prefetch(f->s, REL_A, 1000, lines, 3, 0);
        buf_prefetch(f->s, REL_MISSING, 0, lines, 3, 0);
        buf_prefetch(f->s, INVALID_RELNUMBER, 0, lines, 3, 0);
        buf_prefetch(f->s, REL_A, 5, NULL, 0, 0);
        /* buf_prefetch_buffer() likewise, on any buffer or none. */
        buf_prefetch_buffer(f->s, 0, lines, BUF_PREFETCH_MAX);
        buf_prefetch_buffer(f->s, 15, lines, 3);
        buf_prefetch_buffer(f->s, 16, lines, 3);
        buf_prefetch_buffer(f->s, BUF_INVALID, lines, 3);
        buf_prefetch_buffer(f->s, INT32_MAX, lines, 3);
        for (int32_t i = 0; i < 16; i++)
            assert_int_equal(buf_state(f->pool, i), before[i]);
        assert_int_equal(buf_session_reads(f->s), r0);
        assert_nothing_pinned(f);
    }

    for (uint32_t i = 0; i < 4 * 1024; i++) {
        relnumber_t rel = REL_A + i / 1024;
        blocknum_t blk = i % 1024;
        uint64_t h = buf_tag_hash(buf_tag_make(rel, blk));
        uint64_t h0 = buf_tag_hash(buf_tag_make(rel, blk & ~15u));

        assert_int_equal(h & 15, blk & 15);
        assert_true(h >> 4 == h0 >> 4);
        hashes[i] = h;
    }
    qsort(hashes, 4 * 1024, sizeof(hashes[0]), cmp_u64);
    for (uint32_t i = 1; i < 4 * 1024; i++)
        assert_true(hashes[i] != hashes[i - 1]);
}

/*
 * BUF_READ_RECENT with the buffer that holds the block, with one the
 * session already pins, with another block's buffer, with no buffer or
 * one out of range, and with the buffer the block was in before it was
 * evicted: always the block's own buffer and payload, one read counted,
 * and a wrong guess leaves no pin behind.  The buffer buf_prefetch()
 * remembers is tried the same way: after the block it found was evicted
 * and the buffer reused, a read still gets the block.
 */
static void test_read_recent(void **state)
{
    fixture *f = *state;
    const uint16_t lines[2] = {0, 4096};
    const int32_t no_buffer[] = {BUF_INVALID, 16, 1000, -5};
    int32_t id, id2, other;
    uint64_t r0;

    make_rel(f, REL_A, 40, 1);
    pool_open(f, 16);
    assert_int_equal(buf_read(f->s, REL_A, 3, NULL, &id), KEEL_OK);
    buf_release(f->s, id);
    assert_int_equal(buf_read(f->s, REL_A, 4, NULL, &other), KEEL_OK);
    buf_release(f->s, other);
    assert_true(other != id);

    /* The right buffer. */
    r0 = buf_session_reads(f->s);
    assert_int_equal(buf_read(f->s, REL_A, 3,
                              &(buf_read_opts){.flags = BUF_READ_RECENT,
                                               .recent = id,
                                               .lines = lines,
                                               .nlines = 2},
                              &id2),
                     KEEL_OK);
    assert_int_equal(id2, id);
    assert_held(f, id, tag_of(REL_A, 3, 1), 1);
    assert_int_equal(buf_session_reads(f->s), r0 + 1);
    /* Pinned already: a private pin. */
    assert_int_equal(
        buf_read(f->s, REL_A, 3,
                 &(buf_read_opts){.flags = BUF_READ_RECENT, .recent = id},
                 &id2),
        KEEL_OK);
    assert_int_equal(id2, id);
    assert_held(f, id, tag_of(REL_A, 3, 1), 2);
    buf_release(f->s, id);
    buf_release(f->s, id);

    /* Another block's buffer (left exactly as it was: not pinned, its
     * usage count not raised), no buffer, a number past the pool. */
    {
        uint64_t st = buf_state(f->pool, other);
        assert_int_equal(buf_read(f->s, REL_A, 3,
                                  &(buf_read_opts){.flags = BUF_READ_RECENT,
                                                   .recent = other,
                                                   .lines = lines,
                                                   .nlines = 2},
                                  &id2),
                         KEEL_OK);
        assert_int_equal(id2, id);
        assert_int_equal(buf_state(f->pool, other), st);
        assert_int_equal(buf_pin_count(f->s, other), 0);
        buf_release(f->s, id);
    }
    for (size_t i = 0; i < sizeof(no_buffer) / sizeof(no_buffer[0]); i++) {
        assert_int_equal(buf_read(f->s, REL_A, 3,
                                  &(buf_read_opts){.flags = BUF_READ_RECENT,
                                                   .recent = no_buffer[i],
                                                   .lines = lines,
                                                   .nlines = 2},
                                  &id2),
                         KEEL_OK);
        assert_int_equal(id2, id);
        buf_release(f->s, id);
    }

    /* Evicted, its buffer reused: the block read again, from the file. */
    for (blocknum_t b = 10; b < 40; b++) {
        assert_int_equal(buf_read(f->s, REL_A, b, NULL, &id2), KEEL_OK);
        buf_release(f->s, id2);
    }
    assert_int_equal(buf_read(f->s, REL_A, 3,
                              &(buf_read_opts){.flags = BUF_READ_RECENT,
                                               .recent = id,
                                               .lines = lines,
                                               .nlines = 2},
                              &id2),
                     KEEL_OK);
    assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 3, 1));
    assert_int_equal(buf_pin_count(f->s, id2), 1);
    if (id2 != id)
        assert_int_equal(refcount(f, id), 0);
    buf_release(f->s, id2);
    /* Errors as buf_read()'s. */
    assert_int_equal(buf_read(f->s, REL_A, 40,
                              &(buf_read_opts){.flags = BUF_READ_RECENT,
                                               .recent = id,
                                               .lines = lines,
                                               .nlines = 2},
                              &id2),
                     KEEL_EEOF);
    assert_int_equal(buf_read(f->s, REL_MISSING, 0,
                              &(buf_read_opts){.flags = BUF_READ_RECENT,
                                               .recent = id,
                                               .lines = lines,
                                               .nlines = 2},
                              &id2),
                     KEEL_ENOENT);
    assert_nothing_pinned(f);

    /* buf_prefetch()'s buffer: block 5 found, then evicted before the
     * read; block 6 found, then another block read first. */
    assert_int_equal(buf_read(f->s, REL_A, 5, NULL, &id), KEEL_OK);
    buf_release(f->s, id);
    buf_prefetch(f->s, REL_A, 5, lines, 2, 0);
    for (blocknum_t b = 10; b < 40; b++) {
        assert_int_equal(buf_read(f->s, REL_A, b, NULL, &id2), KEEL_OK);
        assert_payload(buf_page(f->pool, id2), tag_of(REL_A, b, 1));
        buf_release(f->s, id2);
    }
    assert_int_equal(buf_read(f->s, REL_A, 5, NULL, &id2), KEEL_OK);
    assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 5, 1));
    buf_release(f->s, id2);
    buf_prefetch(f->s, REL_A, 6, lines, 2, 0);
    assert_int_equal(buf_read(f->s, REL_A, 7, NULL, &id2), KEEL_OK);
    assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 7, 1));
    buf_release(f->s, id2);
    assert_int_equal(buf_read(f->s, REL_A, 6, NULL, &id2), KEEL_OK);
    assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 6, 1));
    buf_release(f->s, id2);
    assert_nothing_pinned(f);
}

/*
 * buf_prefetch_pending() names exactly the block and key of the last
 * buf_prefetch() that found a buffer, until a read of that block; and
 * BUF_READ_PREFETCHED reads that block: from the buffer the prefetch
 * found, from the one the mapping table names after an eviction moved
 * the block, or from the file; one read counted each time, errors as
 * buf_read()'s.
 */
static void test_read_prefetched(void **state)
{
    fixture *f = *state;
    const uint16_t lines[3] = {0, 64, 8128};
    int32_t id, id2;
    uint64_t r0;

    make_rel(f, REL_A, 40, 1);
    pool_open(f, 16);
    assert_int_equal(buf_read(f->s, REL_A, 3, NULL, &id), KEEL_OK);
    buf_release(f->s, id);

    /* Found where it is. */
    buf_prefetch(f->s, REL_A, 3, lines, 3, 7);
    assert_true(buf_prefetch_pending(f->s, REL_A, 3, 7));
    assert_false(buf_prefetch_pending(f->s, REL_A, 3, 8));
    assert_false(buf_prefetch_pending(f->s, REL_A, 4, 7));
    assert_false(buf_prefetch_pending(f->s, REL_B, 3, 7));
    r0 = buf_session_reads(f->s);
    assert_int_equal(buf_read(f->s, REL_A, 3,
                              &(buf_read_opts){.flags = BUF_READ_PREFETCHED},
                              &id2),
                     KEEL_OK);
    assert_int_equal(id2, id);
    assert_held(f, id, tag_of(REL_A, 3, 1), 1);
    assert_int_equal(buf_session_reads(f->s), r0 + 1);
    /* Read: no longer pending, even while pinned. */
    assert_false(buf_prefetch_pending(f->s, REL_A, 3, 7));
    buf_release(f->s, id);

    /* A plain read of the block also ends it; a prefetch of a block not
     * in the pool (an empty bucket) forgets the last one. */
    buf_prefetch(f->s, REL_A, 3, lines, 3, 7);
    assert_int_equal(buf_read(f->s, REL_A, 3, NULL, &id2), KEEL_OK);
    assert_int_equal(id2, id);
    buf_release(f->s, id2);
    assert_false(buf_prefetch_pending(f->s, REL_A, 3, 7));
    buf_prefetch(f->s, REL_A, 3, lines, 3, 7);
    buf_prefetch(f->s, REL_MISSING, 0, lines, 3, 7);
    assert_false(buf_prefetch_pending(f->s, REL_A, 3, 7));
    assert_false(buf_prefetch_pending(f->s, REL_MISSING, 0, 7));

    /* Evicted after the prefetch, the buffer reused: the block again,
     * from the file, and nothing left pinned elsewhere. */
    buf_prefetch(f->s, REL_A, 3, lines, 3, 7);
    assert_true(buf_prefetch_pending(f->s, REL_A, 3, 7));
    for (blocknum_t b = 10; b < 40; b++) {
        assert_int_equal(buf_read(f->s, REL_A, b, NULL, &id2), KEEL_OK);
        buf_release(f->s, id2);
    }
    assert_true(buf_prefetch_pending(f->s, REL_A, 3, 7));
    r0 = buf_session_reads(f->s);
    assert_int_equal(buf_read(f->s, REL_A, 3,
                              &(buf_read_opts){.flags = BUF_READ_PREFETCHED},
                              &id2),
                     KEEL_OK);
    assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 3, 1));
    assert_int_equal(buf_pin_count(f->s, id2), 1);
    assert_int_equal(buf_session_pinned(f->s), 1);
    assert_int_equal(buf_session_reads(f->s), r0 + 1);
    buf_release(f->s, id2);

    /* Evicted and loaded again by another session (which keeps it
     * pinned) before the read: the buffer it is in now. */
    {
        buf_session *s2;
        kerr e2 = {0};
        assert_int_equal(buf_session_create(f->pool, &s2, &e2), KEEL_OK);
        buf_prefetch(f->s, REL_A, 3, lines, 3, 7);
        for (blocknum_t b = 10; b < 40; b++) {
            assert_int_equal(buf_read(s2, REL_A, b, NULL, &id2), KEEL_OK);
            buf_release(s2, id2);
        }
        assert_int_equal(buf_read(s2, REL_A, 3, NULL, &id), KEEL_OK);
        assert_true(buf_prefetch_pending(f->s, REL_A, 3, 7));
        assert_int_equal(
            buf_read(f->s, REL_A, 3,
                     &(buf_read_opts){.flags = BUF_READ_PREFETCHED}, &id2),
            KEEL_OK);
        assert_int_equal(id2, id);
        assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 3, 1));
        assert_int_equal(buf_pin_count(f->s, id2), 1);
        buf_release(f->s, id2);
        buf_release(s2, id);
        buf_session_destroy(s2);
    }

    /* Cut off after the prefetch (its buffer dropped, the file
     * truncated): the read's error is buf_read()'s. */
    {
        smgr_rel *r;
        buf_prefetch(f->s, REL_A, 3, lines, 3, 7);
        assert_true(buf_prefetch_pending(f->s, REL_A, 3, 7));
        assert_int_equal(buf_drop_rel(f->s, REL_A, 3), KEEL_OK);
        assert_int_equal(smgr_rel_open(f->sm, REL_A, &r, &f->err), KEEL_OK);
        assert_int_equal(smgr_truncate(r, 3, &f->err), KEEL_OK);
        assert_int_equal(
            buf_read(f->s, REL_A, 3,
                     &(buf_read_opts){.flags = BUF_READ_PREFETCHED}, &id2),
            KEEL_EEOF);
        assert_msg_has(f->s, "block 3 ");
        assert_false(buf_prefetch_pending(f->s, REL_A, 3, 7));
    }
    assert_nothing_pinned(f);
}

/* A thread that reads a block through a locking read and reports when it
 * has it: for test_read_shared(). */
typedef struct locking_reader {
    buf_session *s;
    relnumber_t rel;
    blocknum_t blk;
    int32_t recent;
    atomic_u32 done;
    int rc;
    int32_t id;
    uint64_t payload; /* the page's payload tag, read under the lock */
} locking_reader;

static void *locking_reader_main(void *arg)
{
    locking_reader *r = arg;

    r->rc =
        buf_read(r->s, r->rel, r->blk,
                 &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                  .recent = r->recent},
                 &r->id);
    if (r->rc == KEEL_OK)
        r->payload = payload_tag(buf_session_page(r->s, r->id));
    atomic_store_release(&r->done, 1);
    return NULL;
}

/* A thread that takes a content lock exclusively on a buffer its session
 * has pinned, and reports when it has it. */
typedef struct exclusive_locker {
    buf_session *s;
    int32_t id;
    atomic_u32 done;
} exclusive_locker;

static void *exclusive_locker_main(void *arg)
{
    exclusive_locker *x = arg;

    buf_lock(x->s, x->id, LW_EXCLUSIVE);
    atomic_store_release(&x->done, 1);
    return NULL;
}

/* Waits until buffer id's content lock has a session asleep on it. */
static void wait_sleeper(fixture *f, int32_t id)
{
    while (atomic_load_acquire(&f->s->descs[id].lock_waiters) == 0)
        usleep(1000);
}

static uint32_t shares(fixture *f, int32_t id)
{
    return BUF_SHARES(buf_state(f->pool, id));
}

/*
 * The reads that lock (BUF_READ_SHARED), with lines, with a recent buffer
 * and after buf_prefetch(), return the buffer pinned and locked in shared
 * mode, counted in the state word beside the pin; buf_unlock_release()
 * gives both back.  A session that already pins the buffer adds only the
 * lock.  An exclusive holder makes a locking read wait, holding its pin
 * but no share; a shared one makes an exclusive locker wait until the
 * last share goes; a header lock makes it wait with its pin only.  Failed
 * reads leave nothing pinned or locked.
 */
static void test_read_shared(void **state)
{
    fixture *f = *state;
    const uint16_t lines[2] = {0, 4096};
    int32_t id, id2, other;
    uint64_t r0;

    make_rel(f, REL_A, 40, 1);
    pool_open(f, 16);

    /* From the file (a miss), then from the pool (a hit). */
    for (int round = 0; round < 2; round++) {
        r0 = buf_session_reads(f->s);
        assert_int_equal(buf_read(f->s, REL_A, 5,
                                  &(buf_read_opts){.flags = BUF_READ_SHARED,
                                                   .lines = lines,
                                                   .nlines = 2},
                                  &id),
                         KEEL_OK);
        assert_held(f, id, tag_of(REL_A, 5, 1), 1);
        assert_int_equal(shares(f, id), 1);
        assert_true(buf_lock_held(f->s, id));
        assert_false(buf_lock_held_exclusive(f->s, id));
        assert_int_equal(buf_session_reads(f->s), r0 + 1);
        /* Another session's exclusive attempt fails while it is held. */
        assert_int_equal(buf_read(f->s2, REL_A, 5, NULL, &id2), KEEL_OK);
        assert_false(buf_try_lock(f->s2, id2, LW_EXCLUSIVE));
        assert_true(buf_try_lock(f->s2, id2, LW_SHARED));
        assert_int_equal(shares(f, id), 2);
        assert_int_equal(refcount(f, id), 2);
        buf_unlock_release(f->s2, id2);
        assert_int_equal(shares(f, id), 1);
        assert_int_equal(refcount(f, id), 1);
        buf_unlock_release(f->s, id);
        assert_int_equal(shares(f, id), 0);
        assert_nothing_pinned(f);
    }

    /* Already pinned by the session: one pin more, one share; the last
     * buf_unlock_release() of two leaves the first pin. */
    id = read_ok(f->s, REL_A, 6, NULL);
    assert_int_equal(
        buf_read(f->s, REL_A, 6,
                 &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                  .recent = id,
                                  .lines = lines,
                                  .nlines = 2},
                 &id2),
        KEEL_OK);
    assert_int_equal(id2, id);
    assert_held(f, id, tag_of(REL_A, 6, 1), 2);
    assert_int_equal(shares(f, id), 1);
    assert_int_equal(
        buf_read(f->s, REL_A, 6,
                 &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                  .recent = BUF_INVALID},
                 &id2),
        KEEL_OK);
    assert_held(f, id, tag_of(REL_A, 6, 1), 3);
    assert_int_equal(shares(f, id), 2);
    buf_unlock_release(f->s, id);
    buf_unlock_release(f->s, id);
    assert_held(f, id, tag_of(REL_A, 6, 1), 1);
    assert_int_equal(shares(f, id), 0);
    buf_release(f->s, id);

    /* Told the wrong buffer (held by another session): the right one,
     * locked; the wrong one left as it was. */
    other = read_ok(f->s2, REL_A, 8, NULL);
    assert_int_equal(
        buf_read(f->s, REL_A, 7,
                 &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                  .recent = other,
                                  .lines = lines,
                                  .nlines = 2},
                 &id),
        KEEL_OK);
    assert_true(id != other);
    assert_payload(buf_page(f->pool, id), tag_of(REL_A, 7, 1));
    assert_int_equal(shares(f, id), 1);
    assert_int_equal(shares(f, other), 0);
    assert_int_equal(refcount(f, other), 1);
    assert_int_equal(buf_pin_count(f->s, other), 0);
    buf_release(f->s2, other);
    buf_unlock_release(f->s, id);

    /* After buf_prefetch(): from the buffer it found. */
    buf_prefetch(f->s, REL_A, 7, lines, 2, 1);
    assert_true(buf_prefetch_pending(f->s, REL_A, 7, 1));
    assert_int_equal(buf_read(f->s, REL_A, 7,
                              &(buf_read_opts){.flags = BUF_READ_SHARED |
                                                        BUF_READ_PREFETCHED},
                              &id2),
                     KEEL_OK);
    assert_int_equal(id2, id);
    assert_int_equal(shares(f, id), 1);
    assert_false(buf_prefetch_pending(f->s, REL_A, 7, 1));
    /* Released the long way: the same state. */
    buf_unlock(f->s, id);
    assert_int_equal(shares(f, id), 0);
    assert_int_equal(refcount(f, id), 1);
    buf_release(f->s, id);
    assert_nothing_pinned(f);

    /* Held exclusively by another session: the locking read waits with
     * its pin and no share, and sees what the holder wrote. */
    {
        locking_reader r = {
            .s = f->s, .rel = REL_A, .blk = 9, .recent = BUF_INVALID};
        pthread_t th;

        id2 = read_ok(f->s2, REL_A, 9, NULL);
        buf_lock(f->s2, id2, LW_EXCLUSIVE);
        assert_true(buf_lock_held_exclusive(f->s2, id2));
        r.recent = id2;
        assert_int_equal(pthread_create(&th, NULL, locking_reader_main, &r), 0);
        /* Asleep, it holds its pin and no share. */
        wait_sleeper(f, id2);
        assert_false(atomic_load_acquire(&r.done));
        assert_int_equal(refcount(f, id2), 2);
        assert_int_equal(shares(f, id2), 0);
        fill_payload(buf_page(f->pool, id2), tag_of(REL_A, 9, 2));
        buf_mark_dirty(f->s2, id2);
        buf_unlock(f->s2, id2);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_true(atomic_load_acquire(&r.done));
        assert_int_equal(r.rc, KEEL_OK);
        assert_int_equal(r.id, id2);
        assert_true(r.payload == tag_of(REL_A, 9, 2));
        assert_int_equal(shares(f, id2), 1);

        /* Now the other way: the share holds off an exclusive locker
         * until it goes. */
        exclusive_locker x = {.s = f->s2, .id = id2};
        assert_int_equal(pthread_create(&th, NULL, exclusive_locker_main, &x),
                         0);
        wait_sleeper(f, id2);
        assert_false(atomic_load_acquire(&x.done));
        assert_false(buf_lock_held_exclusive(f->s, id2));
        buf_unlock_release(f->s, r.id);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_true(atomic_load_acquire(&x.done));
        assert_true(buf_lock_held_exclusive(f->s2, id2));
        assert_int_equal(shares(f, id2), 0);
        assert_int_equal(refcount(f, id2), 1);
        buf_unlock(f->s2, id2);
        buf_release(f->s2, id2);
    }
    assert_nothing_pinned(f);

    /* Its header locked (as by a session about to re-tag it): the locking
     * read gives its share back at once and waits, pinned, for the
     * header; then it checks the tag and takes the lock the ordinary
     * way. */
    {
        locking_reader r = {
            .s = f->s, .rel = REL_A, .blk = 10, .recent = BUF_INVALID};
        buf_desc *d;
        pthread_t th;

        id2 = read_ok(f->s2, REL_A, 10, NULL);
        d = &f->s2->descs[id2];
        assert_false(atomic_fetch_or(&d->state, BM_LOCKED) & BM_LOCKED);
        r.recent = id2;
        assert_int_equal(pthread_create(&th, NULL, locking_reader_main, &r), 0);
        uint32_t pins, held;
        bool early;

        while ((refcount(f, id2) < 2 || shares(f, id2) != 0) &&
               !atomic_load_acquire(&r.done))
            usleep(1000);
        usleep(20000);
        early = atomic_load_acquire(&r.done);
        pins = refcount(f, id2);
        held = shares(f, id2);
        /* Unlocked before asserting, so that a failure cannot hang. */
        atomic_fetch_and(&d->state, ~BM_LOCKED);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_false(early);
        assert_int_equal(pins, 2);
        assert_int_equal(held, 0);
        assert_int_equal(r.rc, KEEL_OK);
        assert_int_equal(r.id, id2);
        assert_true(r.payload == tag_of(REL_A, 10, 1));
        assert_int_equal(shares(f, id2), 1);
        assert_int_equal(refcount(f, id2), 2);
        buf_unlock_release(f->s, r.id);
        buf_release(f->s2, id2);
    }
    assert_nothing_pinned(f);

    /* Errors are buf_read()'s, and leave nothing pinned or locked. */
    assert_int_equal(buf_read(f->s, REL_A, 40,
                              &(buf_read_opts){.flags = BUF_READ_SHARED,
                                               .lines = lines,
                                               .nlines = 2},
                              &id),
                     KEEL_EEOF);
    assert_int_equal(
        buf_read(f->s, REL_MISSING, 0,
                 &(buf_read_opts){.flags = BUF_READ_SHARED | BUF_READ_RECENT,
                                  .recent = BUF_INVALID,
                                  .lines = lines,
                                  .nlines = 2},
                 &id),
        KEEL_ENOENT);
    assert_int_equal(buf_read(f->s, INVALID_RELNUMBER, 0,
                              &(buf_read_opts){.flags = BUF_READ_SHARED,
                                               .lines = lines,
                                               .nlines = 2},
                              &id),
                     KEEL_EINVAL);
    for (uint32_t i = 0; i < buf_pool_size(f->pool); i++)
        assert_int_equal(shares(f, (int32_t)i), 0);
    assert_nothing_pinned(f);
}

static void test_corrupt_page(void **state)
{
    fixture *f = *state;
    const blocknum_t bad = 3;
    const long off = (long)bad * BLOCK_SIZE + 5000;
    int32_t id = BUF_INVALID;
    char blockword[32];

    assert_int_equal(smgr_create(f->sm, REL_A, NULL, &f->err), KEEL_OK);
    pool_open(f, 16);
    for (blocknum_t b = 0; b < 6; b++) {
        blocknum_t blk;
        assert_int_equal(buf_extend(f->s, REL_A, 0, NULL, &id, &blk), KEEL_OK);
        assert_int_equal(blk, b);
        fill_payload(buf_page(f->pool, id), tag_of(REL_A, b, 2));
        buf_mark_dirty(f->s, id);
        buf_unlock(f->s, id);
        buf_release(f->s, id);
    }
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    pool_close(f);

    tu_flip_bit(rel_path(f, REL_A), off, 3);
    pool_open(f, 16);
    snprintf(blockword, sizeof(blockword), "block %u ", bad);

    for (int attempt = 0; attempt < 2; attempt++) {
        id = BUF_INVALID;
        assert_int_equal(buf_read(f->s, REL_A, bad, NULL, &id), KEEL_ECORRUPT);
        assert_int_equal(buf_session_error(f->s)->code, KEEL_ECORRUPT);
        assert_msg_has(f->s, rel_path(f, REL_A));
        assert_msg_has(f->s, blockword);
        assert_nothing_pinned(f);
    }
    /* Another session is refused too: nothing was cached as valid. */
    assert_int_equal(buf_read(f->s2, REL_A, bad, NULL, &id), KEEL_ECORRUPT);
    assert_msg_has(f->s2, blockword);
    /* With a strategy as well. */
    {
        buf_strategy *st = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
        assert_non_null(st);
        assert_int_equal(
            buf_read(f->s2, REL_A, bad, &(buf_read_opts){.strategy = st}, &id),
            KEEL_ECORRUPT);
        buf_strategy_free(st);
    }
    assert_nothing_pinned(f);

    /* The other blocks are fine. */
    for (blocknum_t b = 0; b < 6; b++) {
        if (b == bad)
            continue;
        id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, 2));
        buf_release(f->s, id);
    }

    /* Repaired on disk, the next reader retries the load and succeeds. */
    tu_flip_bit(rel_path(f, REL_A), off, 3);
    id = read_ok(f->s, REL_A, bad, NULL);
    assert_payload(buf_page(f->pool, id), tag_of(REL_A, bad, 2));
    assert_true(buf_state(f->pool, id) & BM_VALID);
    assert_false(buf_state(f->pool, id) & BM_IO_ERROR);
    assert_int_equal(read_ok(f->s2, REL_A, bad, NULL), id);
    assert_int_equal(refcount(f, id), 2);
    buf_release(f->s2, id);
    buf_release(f->s, id);
    assert_nothing_pinned(f);
}

/* ---- strategies --------------------------------------------------------- */

#define HOT_BLOCKS  64
#define SCAN_BLOCKS 1000
#define RING_SLACK  2

static void read_hot(fixture *f, int32_t *hot)
{
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++) {
        hot[b] = read_ok(f->s, REL_A, b, NULL);
        buf_release(f->s, hot[b]);
    }
}

/* The hot blocks of A are still in the very buffers they were in. */
static void assert_hot_resident(fixture *f, const int32_t *hot)
{
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++) {
        relnumber_t rel;
        blocknum_t blk;

        buf_block_of(f->pool, hot[b], &rel, &blk);
        if (rel != REL_A || blk != b)
            fail_msg("hot block %u was evicted from buffer %d (now %u/%u)", b,
                     hot[b], rel, blk);
        assert_int_equal(read_ok(f->s, REL_A, b, NULL), hot[b]);
        assert_payload(buf_page(f->pool, hot[b]), tag_of(REL_A, b, 1));
        buf_release(f->s, hot[b]);
    }
}

static void test_strategy_ring_sizes(void **state)
{
    fixture *f = *state;
    buf_strategy *r, *w;

    pool_open(f, 4096);
    r = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
    w = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_WRITE);
    assert_non_null(r);
    assert_non_null(w);
    assert_int_equal(buf_strategy_ring_size(r), 32);
    assert_int_equal(buf_strategy_ring_size(w), 256);
    buf_strategy_free(r);
    buf_strategy_free(w);
    pool_close(f);

    /* Never more than an eighth of the pool. */
    pool_open(f, 16);
    r = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
    w = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_WRITE);
    assert_non_null(r);
    assert_non_null(w);
    assert_int_equal(buf_strategy_ring_size(r), 2);
    assert_int_equal(buf_strategy_ring_size(w), 2);
    buf_strategy_free(r);
    buf_strategy_free(w);
}

static void test_strategy_bulk_read(void **state)
{
    fixture *f = *state;
    int32_t hot[HOT_BLOCKS];
    bool used[256] = {false};
    uint32_t distinct = 0;
    buf_strategy *st;

    make_rel(f, REL_A, HOT_BLOCKS, 1);
    make_rel(f, REL_B, SCAN_BLOCKS, 1);
    pool_open(f, 256);
    read_hot(f, hot);
    read_hot(f, hot); /* twice: they are hot */

    st = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
    assert_non_null(st);
    assert_int_equal(buf_strategy_ring_size(st), 32);
    for (blocknum_t b = 0; b < SCAN_BLOCKS; b++) {
        int32_t id = read_ok(f->s, REL_B, b, st);
        assert_payload(buf_page(f->pool, id), tag_of(REL_B, b, 1));
        /* A page loaded for the scan has usage one, no more. */
        assert_int_equal(usage(f, id), 1);
        if (!used[id]) {
            used[id] = true;
            distinct++;
        }
        buf_release(f->s, id);
    }
    if (distinct > buf_strategy_ring_size(st) + RING_SLACK)
        fail_msg("the scan used %u buffers; its ring has %u", distinct,
                 buf_strategy_ring_size(st));
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++)
        assert_false(used[hot[b]]);
    assert_hot_resident(f, hot);

    /* A second scan with the same strategy stays in the ring as well. */
    for (blocknum_t b = 0; b < SCAN_BLOCKS; b++) {
        int32_t id = read_ok(f->s, REL_B, b, st);
        if (!used[id]) {
            used[id] = true;
            distinct++;
        }
        buf_release(f->s, id);
    }
    assert_true(distinct <= buf_strategy_ring_size(st) + RING_SLACK);
    assert_hot_resident(f, hot);

    /*
     * A ring buffer that a normal read used since (usage above one) has
     * become shared data: the ring leaves it to the clock instead of
     * reusing it, so it survives another full turn of the ring.
     */
    {
        relnumber_t rel;
        blocknum_t blk;
        int32_t kept = read_ok(f->s2, REL_B, SCAN_BLOCKS - 1, NULL);

        assert_true(used[kept]);
        assert_int_equal(usage(f, kept), 2);
        buf_release(f->s2, kept);
        for (blocknum_t b = 0; b < 3 * buf_strategy_ring_size(st); b++) {
            int32_t id = read_ok(f->s, REL_B, b, st);
            assert_int_not_equal(id, kept);
            assert_payload(buf_page(f->pool, id), tag_of(REL_B, b, 1));
            buf_release(f->s, id);
        }
        buf_block_of(f->pool, kept, &rel, &blk);
        assert_int_equal(rel, REL_B);
        assert_int_equal(blk, SCAN_BLOCKS - 1);
        assert_int_equal(read_ok(f->s, REL_B, SCAN_BLOCKS - 1, NULL), kept);
        buf_release(f->s, kept);
    }
    assert_hot_resident(f, hot);
    buf_strategy_free(st);
    assert_nothing_pinned(f);
}

static void test_strategy_bulk_write(void **state)
{
    fixture *f = *state;
    int32_t hot[HOT_BLOCKS];
    bool used[256] = {false};
    uint32_t distinct = 0;
    buf_strategy *st, *rd;

    make_rel(f, REL_A, HOT_BLOCKS, 1);
    assert_int_equal(smgr_create(f->sm, REL_C, NULL, &f->err), KEEL_OK);
    pool_open(f, 256);
    read_hot(f, hot);
    read_hot(f, hot);

    st = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_WRITE);
    assert_non_null(st);
    for (blocknum_t b = 0; b < SCAN_BLOCKS; b++) {
        int32_t id = BUF_INVALID;
        blocknum_t blk = MAX_BLOCK_NUMBER;

        if (buf_extend(f->s, REL_C, 0, st, &id, &blk) != KEEL_OK)
            fail_msg("buf_extend: %s", buf_session_error(f->s)->msg);
        assert_int_equal(blk, b);
        fill_payload(buf_page(f->pool, id), tag_of(REL_C, b, 1));
        buf_mark_dirty(f->s, id);
        buf_unlock(f->s, id);
        buf_release(f->s, id);
        if (!used[id]) {
            used[id] = true;
            distinct++;
        }
    }
    buf_strategy_free(st);
    if (distinct > 32 + RING_SLACK)
        fail_msg("the bulk load used %u buffers; its ring has 32", distinct);
    for (blocknum_t b = 0; b < HOT_BLOCKS; b++)
        assert_false(used[hot[b]]);
    assert_hot_resident(f, hot);

    /* Every block loaded reads back (the ring wrote each dirty page as it
     * reused its buffer); read with a strategy so A stays put. */
    rd = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
    assert_non_null(rd);
    for (blocknum_t b = 0; b < SCAN_BLOCKS; b++) {
        int32_t id = read_ok(f->s, REL_C, b, rd);
        assert_payload(buf_page(f->pool, id), tag_of(REL_C, b, 1));
        buf_release(f->s, id);
    }
    buf_strategy_free(rd);
    assert_hot_resident(f, hot);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (blocknum_t b = 0; b < SCAN_BLOCKS; b++)
        if (!disk_matches(f, REL_C, b, tag_of(REL_C, b, 1)))
            fail_msg("block %u of C is wrong on disk", b);
    assert_nothing_pinned(f);
}

/* ---- dropping a relation's buffers -------------------------------------- */

static void test_drop_rel(void **state)
{
    fixture *f = *state;
    int32_t id;

    make_rel(f, REL_A, 8, 1);
    make_rel(f, REL_B, 2, 1);
    pool_open(f, 32);
    for (blocknum_t b = 0; b < 8; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        write_buf(f, f->s, id, tag_of(REL_A, b, 2));
        buf_release(f->s, id);
    }
    for (blocknum_t b = 0; b < 2; b++) {
        id = read_ok(f->s, REL_B, b, NULL);
        write_buf(f, f->s, id, tag_of(REL_B, b, 2));
        buf_release(f->s, id);
    }

    /* Drop blocks 4.. of A: their changes are gone, the rest stay. */
    assert_int_equal(buf_drop_rel(f->s, REL_A, 4), KEEL_OK);
    for (blocknum_t b = 0; b < 8; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, b < 4 ? 2 : 1));
        buf_release(f->s, id);
    }

    /* Drop all of A: nothing of it is written, even at checkpoint. */
    assert_int_equal(buf_drop_rel(f->s, REL_A, 0), KEEL_OK);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    for (blocknum_t b = 0; b < 8; b++)
        assert_true(disk_matches(f, REL_A, b, tag_of(REL_A, b, 1)));
    for (blocknum_t b = 0; b < 8; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, 1));
        buf_release(f->s, id);
    }
    /* B was untouched and its changes were written. */
    for (blocknum_t b = 0; b < 2; b++) {
        assert_true(disk_matches(f, REL_B, b, tag_of(REL_B, b, 2)));
        id = read_ok(f->s, REL_B, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_B, b, 2));
        buf_release(f->s, id);
    }

    /* A pinned buffer makes the drop fail, and keeps its page. */
    id = read_ok(f->s2, REL_A, 5, NULL);
    write_buf(f, f->s2, id, tag_of(REL_A, 5, 3));
    assert_int_equal(buf_drop_rel(f->s, REL_A, 0), KEEL_EBUSY);
    assert_int_equal(buf_session_error(f->s)->code, KEEL_EBUSY);
    assert_msg_has(f->s, "pinned");
    {
        relnumber_t rel;
        blocknum_t blk;
        buf_block_of(f->pool, id, &rel, &blk);
        assert_int_equal(rel, REL_A);
        assert_int_equal(blk, 5);
    }
    assert_true(buf_state(f->pool, id) & BM_VALID);
    assert_int_equal(read_ok(f->s, REL_A, 5, NULL), id);
    assert_payload(buf_page(f->pool, id), tag_of(REL_A, 5, 3));
    buf_release(f->s, id);
    /* Dropping the blocks after it works. */
    assert_int_equal(buf_drop_rel(f->s, REL_A, 6), KEEL_OK);
    buf_release(f->s2, id);

    assert_int_equal(buf_drop_rel(f->s, REL_A, 0), KEEL_OK);
    id = read_ok(f->s, REL_A, 5, NULL);
    assert_payload(buf_page(f->pool, id), tag_of(REL_A, 5, 1));
    buf_release(f->s, id);
    /* A relation with nothing cached drops trivially. */
    assert_int_equal(buf_drop_rel(f->s, REL_MISSING, 0), KEEL_OK);
    assert_nothing_pinned(f);
}

/* A session reading REL_B, whose every miss makes the clock sweep pin the
 * buffers it passes, REL_A's among them, until told to stop. */
typedef struct sweeper {
    buf_pool *pool;
    atomic_u32 stop;
    uint64_t reads;
} sweeper;

static void *sweeper_main(void *arg)
{
    sweeper *w = arg;
    buf_session *s;
    kerr e;
    uint64_t rnd = 77;

    kerr_clear(&e);
    if (buf_session_create(w->pool, &s, &e) != KEEL_OK)
        return NULL;
    while (!atomic_load_relaxed(&w->stop)) {
        int32_t id;
        rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
        if (buf_read(s, REL_B, (blocknum_t)((rnd >> 33) % 64), NULL, &id) ==
            KEEL_OK) {
            buf_release(s, id);
            w->reads++;
        }
    }
    buf_session_destroy(s);
    return NULL;
}

/*
 * A drop the calling session's own pin stops changes nothing; other
 * sessions' passing pins (a clock sweep's, as another relation is read)
 * are waited out (an EBUSY only for one held past BUF_DROP_WAIT_US, as a
 * descheduled sweeper may: the drop is then made again), and nothing
 * dropped stays cached.
 */
static void test_drop_rel_pins(void **state)
{
    fixture *f = *state;
    sweeper w = {0};
    pthread_t th;
    int32_t id, pinned;

    make_rel(f, REL_A, 8, 1);
    make_rel(f, REL_B, 64, 1);
    pool_open(f, 32);
    for (blocknum_t b = 4; b < 8; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        write_buf(f, f->s, id, tag_of(REL_A, b, 2));
        buf_release(f->s, id);
    }
    pinned = read_ok(f->s, REL_A, 7, NULL);
    assert_int_equal(buf_drop_rel(f->s, REL_A, 4), KEEL_EBUSY);
    assert_msg_has(f->s, "this session");
    buf_release(f->s, pinned);
    for (blocknum_t b = 4; b < 8; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        assert_payload(buf_page(f->pool, id), tag_of(REL_A, b, 2));
        buf_release(f->s, id);
    }

    w.pool = f->pool;
    assert_int_equal(pthread_create(&th, NULL, sweeper_main, &w), 0);
    for (int round = 0; round < 2000; round++) {
        for (blocknum_t b = 4; b < 8; b++) {
            id = read_ok(f->s, REL_A, b, NULL);
            write_buf(f, f->s, id, tag_of(REL_A, b, 3));
            buf_release(f->s, id);
        }
        /* The sweeper's pins pass; one it held past the wait (a
         * descheduled thread) is EBUSY, and the call is made again. */
        for (int tries = 0;; tries++) {
            int rc = buf_drop_rel(f->s, REL_A, 4);
            if (rc == KEEL_OK)
                break;
            assert_int_equal(rc, KEEL_EBUSY);
            assert_msg_has(f->s, "another session");
            assert_true(tries < 100);
        }
    }
    atomic_store_relaxed(&w.stop, 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(w.reads > 0);
    /* Nothing dropped stayed cached: a read gets what the disk holds
     * (the sweep's evictions may have written some of the changes). */
    for (blocknum_t b = 4; b < 8; b++) {
        id = read_ok(f->s, REL_A, b, NULL);
        assert_true(
            disk_matches(f, REL_A, b, payload_tag(buf_page(f->pool, id))));
        buf_release(f->s, id);
    }
    assert_nothing_pinned(f);
}

static void *ckpt_main(void *arg)
{
    sweeper *w = arg;
    buf_session *s;
    kerr e;

    kerr_clear(&e);
    if (buf_session_create(w->pool, &s, &e) != KEEL_OK)
        return NULL;
    while (!atomic_load_relaxed(&w->stop))
        if (buf_checkpoint(s) == KEEL_OK)
            w->reads++;
    buf_session_destroy(s);
    return NULL;
}

static void test_drop_rel_ckpt(void **state)
{
    fixture *f = *state;
    sweeper w = {0}, c = {0};
    pthread_t th, tc;
    int32_t id;

    make_rel(f, REL_A, 8, 1);
    make_rel(f, REL_B, 64, 1);
    pool_open(f, 32);
    w.pool = c.pool = f->pool;
    assert_int_equal(pthread_create(&th, NULL, sweeper_main, &w), 0);
    assert_int_equal(pthread_create(&tc, NULL, ckpt_main, &c), 0);
    for (int round = 0; round < 3000; round++) {
        for (blocknum_t b = 0; b < 8; b++) {
            id = read_ok(f->s, REL_A, b, NULL);
            buf_lock(f->s, id, LW_EXCLUSIVE);
            fill_payload(buf_page(f->pool, id), tag_of(REL_A, b, 3));
            buf_mark_dirty(f->s, id);
            buf_unlock(f->s, id);
            buf_release(f->s, id);
        }
        assert_int_equal(buf_drop_rel(f->s, REL_A, round % 2 ? 0 : 3), KEEL_OK);
        for (uint32_t i = 0; i < 32; i++) {
            relnumber_t rel;
            blocknum_t blk;
            buf_block_of(f->pool, (int32_t)i, &rel, &blk);
            assert_false(rel == REL_A && blk >= (round % 2 ? 0u : 3u));
        }
    }
    atomic_store_relaxed(&w.stop, 1);
    atomic_store_relaxed(&c.stop, 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(pthread_join(tc, NULL), 0);
    assert_true(c.reads > 0);
    assert_nothing_pinned(f);
}

/* ---- usage counts ------------------------------------------------------- */

static void test_usage_count(void **state)
{
    fixture *f = *state;
    buf_strategy *st;
    int32_t id, id2;
    uint64_t before;

    make_rel(f, REL_A, 4, 1);
    pool_open(f, 16);

    /* Loaded: usage one.  Each first pin raises it, up to the maximum. */
    id = read_ok(f->s, REL_A, 0, NULL);
    assert_int_equal(usage(f, id), 1);
    buf_release(f->s, id);
    for (uint32_t i = 2; i <= BUF_MAX_USAGE + 5; i++) {
        buf_session *s = i % 2 ? f->s : f->s2;
        assert_int_equal(read_ok(s, REL_A, 0, NULL), id);
        assert_int_equal(usage(f, id), i < BUF_MAX_USAGE ? i : BUF_MAX_USAGE);
        buf_release(s, id);
        assert_true(usage(f, id) <= BUF_MAX_USAGE);
    }
    assert_int_equal(usage(f, id), BUF_MAX_USAGE);

    /* Repeated pins by a session that holds one touch no shared state. */
    id2 = read_ok(f->s, REL_A, 1, NULL);
    before = buf_state(f->pool, id2);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(buf_pin(f->s, id2), KEEL_OK);
        assert_int_equal(read_ok(f->s, REL_A, 1, NULL), id2);
    }
    assert_int_equal(buf_state(f->pool, id2), before);
    assert_int_equal(buf_pin_count(f->s, id2), 41);
    for (int i = 0; i < 41; i++)
        buf_release(f->s, id2);
    assert_int_equal(refcount(f, id2), 0);

    /* A checkpoint pins every dirty buffer to write it, but does not make
     * them look used: their usage counts stay as they were. */
    id2 = read_ok(f->s, REL_A, 3, NULL);
    write_buf(f, f->s, id2, tag_of(REL_A, 3, 9));
    buf_release(f->s, id2);
    assert_int_equal(usage(f, id2), 1);
    assert_int_equal(buf_checkpoint(f->s), KEEL_OK);
    assert_int_equal(usage(f, id2), 1);
    assert_int_equal(buf_state(f->pool, id2) & BM_DIRTY, 0);

    /* Strategy reads: a fresh load stays at one however often it is hit. */
    st = buf_strategy_create(f->pool, BUF_STRATEGY_BULK_READ);
    assert_non_null(st);
    id2 = read_ok(f->s, REL_A, 2, st);
    assert_int_equal(usage(f, id2), 1);
    buf_release(f->s, id2);
    for (int i = 0; i < 10; i++) {
        buf_session *s = i % 2 ? f->s : f->s2;
        assert_int_equal(read_ok(s, REL_A, 2, st), id2);
        assert_int_equal(usage(f, id2), 1);
        buf_release(s, id2);
    }
    /* A normal read raises it; a strategy read neither raises nor lowers. */
    assert_int_equal(read_ok(f->s, REL_A, 2, NULL), id2);
    buf_release(f->s, id2);
    assert_int_equal(usage(f, id2), 2);
    assert_int_equal(read_ok(f->s, REL_A, 2, st), id2);
    buf_release(f->s, id2);
    assert_int_equal(usage(f, id2), 2);
    /* And the hot block keeps its maximum under strategy reads. */
    assert_int_equal(read_ok(f->s, REL_A, 0, st), id);
    buf_release(f->s, id);
    assert_int_equal(usage(f, id), BUF_MAX_USAGE);
    buf_strategy_free(st);
    assert_nothing_pinned(f);
}

/* ---- closing ------------------------------------------------------------ */

static void test_pool_close_busy(void **state)
{
    fixture *f = *state;
    int32_t id, id2;
    kerr err;

    make_rel(f, REL_A, 4, 1);
    pool_open(f, 16);
    id = read_ok(f->s, REL_A, 1, NULL);
    write_buf(f, f->s, id, tag_of(REL_A, 1, 2));

    kerr_clear(&err);
    assert_int_equal(buf_pool_close(f->pool, &err), KEEL_EBUSY);
    assert_int_equal(err.code, KEEL_EBUSY);
    assert_non_null(strstr(err.msg, "pinned"));
    /* The pool is intact and usable, the pin still held. */
    assert_int_equal(buf_pin_count(f->s, id), 1);
    assert_int_equal(refcount(f, id), 1);
    assert_true(buf_state(f->pool, id) & BM_DIRTY);
    id2 = read_ok(f->s2, REL_A, 2, NULL);
    assert_payload(buf_page(f->pool, id2), tag_of(REL_A, 2, 1));
    assert_int_equal(buf_pool_close(f->pool, &err), KEEL_EBUSY);
    buf_release(f->s2, id2);
    assert_int_equal(buf_pool_close(f->pool, &err), KEEL_EBUSY);
    assert_false(disk_matches(f, REL_A, 1, tag_of(REL_A, 1, 2)));

    buf_release(f->s, id);
    buf_session_destroy(f->s);
    buf_session_destroy(f->s2);
    f->s = f->s2 = NULL;
    kerr_clear(&err);
    assert_int_equal(buf_pool_close(f->pool, &err), KEEL_OK);
    f->pool = NULL;
    /* The clean close wrote the dirty page. */
    assert_true(disk_matches(f, REL_A, 1, tag_of(REL_A, 1, 2)));
}

/* ---- layout ------------------------------------------------------------- */

static void test_descriptor_layout(void **state)
{
    fixture *f = *state;

    assert_int_equal(sizeof(buf_desc), 64);
    assert_int_equal(_Alignof(buf_desc), 64);
    pool_open(f, 64);
    for (int32_t i = 0; i < 64; i++) {
        uintptr_t d = (uintptr_t)&f->s->descs[i];
        uintptr_t pg = (uintptr_t)buf_page(f->pool, i);

        assert_int_equal(d % 64, 0);
        assert_int_equal(pg % 4096, 0);
        if (i > 0)
            assert_int_equal(pg - (uintptr_t)buf_page(f->pool, i - 1),
                             BLOCK_SIZE);
        assert_int_equal(f->s->descs[i].id, i);
        assert_int_equal(buf_state(f->pool, i), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_and_pin_counts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_session_destroy_releases_pins,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_private_refcount_overflow, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_extend_flush_checkpoint_reopen,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_extend_dirty_victims, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_extend_against_readers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_extend_new_block_is_ours, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_extend_against_claimers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_eviction_writes_dirty_pages, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_exhaustion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_prefetch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_prefetched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_recent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strategy_ring_sizes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_strategy_bulk_read, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_strategy_bulk_write, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_drop_rel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_rel_ckpt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_rel_pins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_close_busy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_descriptor_layout, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
