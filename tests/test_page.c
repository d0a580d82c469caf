/*
 * test_page.c: page layout, the page checksum and page verification.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "port/crc32c.h"
#include "storage/page.h"

#define CHECKSUM_OFFSET offsetof(page_header, checksum)

/* Pages are kept 8-aligned here, as the buffer pool keeps them; one test
 * deliberately uses an unaligned copy. */
typedef union test_page {
    unsigned char b[BLOCK_SIZE];
    uint64_t align;
} test_page;

static page_header header_of(const void *page)
{
    page_header h;
    memcpy(&h, page, sizeof(h));
    return h;
}

static void header_store(void *page, const page_header *h)
{
    memcpy(page, h, sizeof(*h));
}

/* A page with some tuple-like data in it, its checksum set. */
static void make_valid_page(test_page *p, uint64_t seed)
{
    page_header h;
    uint64_t rng = seed | 1;

    page_init(p->b, 16);
    h = header_of(p->b);
    h.lower = PAGE_HEADER_SIZE + 40;
    h.upper = BLOCK_SIZE - 16 - 1000;
    h.lsn = 0x1122334455667788ull;
    header_store(p->b, &h);
    for (size_t i = h.upper; i < BLOCK_SIZE; i++)
        p->b[i] = (unsigned char)tu_rand(&rng);
    for (size_t i = PAGE_HEADER_SIZE; i < h.lower; i++)
        p->b[i] = (unsigned char)tu_rand(&rng);
    page_set_checksum(p->b);
}

static void test_init_layout(void **state)
{
    static const struct {
        uint16_t special_size;
        uint16_t special;
    } cases[] = {
        {0, BLOCK_SIZE},       {1, BLOCK_SIZE - 8},   {8, BLOCK_SIZE - 8},
        {13, BLOCK_SIZE - 16}, {16, BLOCK_SIZE - 16}, {100, BLOCK_SIZE - 104},
    };
    test_page p;

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        page_header h;

        memset(p.b, 0xA5, sizeof(p.b));
        page_init(p.b, cases[c].special_size);
        h = header_of(p.b);
        assert_int_equal(h.lsn, 0);
        assert_int_equal(h.checksum, 0);
        assert_int_equal(h.flags, 0);
        assert_int_equal(h.version, PAGE_LAYOUT_VERSION);
        assert_int_equal(h.lower, PAGE_HEADER_SIZE);
        assert_int_equal(h.upper, cases[c].special);
        assert_int_equal(h.special, cases[c].special);
        assert_int_equal(h.am_hint, 0);
        for (size_t i = PAGE_HEADER_SIZE; i < BLOCK_SIZE; i++)
            assert_int_equal(p.b[i], 0);
        assert_int_equal(page_free_space(p.b),
                         cases[c].special - PAGE_HEADER_SIZE);
        assert_false(page_is_new(p.b));
    }
}

static void test_free_space(void **state)
{
    test_page p;
    page_header h;

    page_init(p.b, 0);
    assert_int_equal(page_free_space(p.b), BLOCK_SIZE - PAGE_HEADER_SIZE);
    h = header_of(p.b);
    h.lower = 100;
    h.upper = 300;
    header_store(p.b, &h);
    assert_int_equal(page_free_space(p.b), 200);
    h.lower = h.upper = 300;
    header_store(p.b, &h);
    assert_int_equal(page_free_space(p.b), 0);
    /* An insane header must not produce a huge free space. */
    h.lower = 400;
    header_store(p.b, &h);
    assert_int_equal(page_free_space(p.b), 0);
}

static void test_is_new(void **state)
{
    test_page p;
    unsigned char *unaligned = malloc(BLOCK_SIZE + 1);

    assert_non_null(unaligned);
    memset(p.b, 0, sizeof(p.b));
    assert_true(page_is_new(p.b));
    /* Any single set bit anywhere makes the page not new. */
    for (size_t i = 0; i < BLOCK_SIZE; i++) {
        p.b[i] = (unsigned char)(1u << (i % 8));
        assert_false(page_is_new(p.b));
        p.b[i] = 0;
    }
    assert_true(page_is_new(p.b));

    memset(unaligned, 0, BLOCK_SIZE + 1);
    assert_true(page_is_new(unaligned + 1));
    unaligned[BLOCK_SIZE] = 1;
    assert_false(page_is_new(unaligned + 1));
    free(unaligned);
}

static void test_checksum_stable(void **state)
{
    test_page p, copy, ref;
    uint32_t c1, c2;

    make_valid_page(&p, 42);
    memcpy(copy.b, p.b, sizeof(p.b));
    c1 = page_checksum(p.b);
    c2 = page_checksum(p.b);
    assert_int_equal(c1, c2);
    /* page_checksum does not write the page. */
    assert_memory_equal(p.b, copy.b, BLOCK_SIZE);
    /* It is the CRC-32C of the page with the checksum field zeroed. */
    memcpy(ref.b, p.b, sizeof(p.b));
    memset(ref.b + CHECKSUM_OFFSET, 0, sizeof(uint32_t));
    assert_int_equal(c1, crc32c(ref.b, BLOCK_SIZE));
    /* page_set_checksum stores exactly that value. */
    assert_int_equal(header_of(p.b).checksum, c1);
    /* A different page gets a different checksum. */
    make_valid_page(&copy, 1234);
    assert_int_not_equal(page_checksum(copy.b), c1);
}

static void test_checksum_ignores_own_field(void **state)
{
    test_page p;
    uint32_t c = 0;

    make_valid_page(&p, 7);
    c = page_checksum(p.b);
    for (size_t i = CHECKSUM_OFFSET; i < CHECKSUM_OFFSET + 4; i++)
        for (int bit = 0; bit < 8; bit++) {
            p.b[i] ^= (unsigned char)(1u << bit);
            assert_int_equal(page_checksum(p.b), c);
            p.b[i] ^= (unsigned char)(1u << bit);
        }
}

static void flip_and_check(test_page *p, uint32_t good, size_t i, int bit)
{
    p->b[i] ^= (unsigned char)(1u << bit);
    if (page_checksum(p->b) == good)
        fail_msg("flipping bit %d of byte %zu left the checksum unchanged", bit,
                 i);
    p->b[i] ^= (unsigned char)(1u << bit);
}

static void test_checksum_sensitive(void **state)
{
    static const size_t hot[] = {
        0,
        7,
        12,
        13,
        14,
        15,
        16,
        17,
        18,
        19,
        20,
        21,
        22,
        23,
        24,
        4095,
        4096,
        BLOCK_SIZE - 8,
        BLOCK_SIZE - 2,
        BLOCK_SIZE - 1,
    };
    test_page p;
    uint32_t good;

    make_valid_page(&p, 99);
    good = page_checksum(p.b);
    /* Every byte outside the checksum field, one bit each ... */
    for (size_t i = 0; i < BLOCK_SIZE; i++) {
        if (i >= CHECKSUM_OFFSET && i < CHECKSUM_OFFSET + 4)
            continue;
        flip_and_check(&p, good, i, (int)(i % 8));
    }
    /* ... and every bit of the header, the middle and the last bytes. */
    for (size_t k = 0; k < sizeof(hot) / sizeof(hot[0]); k++)
        for (int bit = 0; bit < 8; bit++)
            flip_and_check(&p, good, hot[k], bit);
    assert_int_equal(page_checksum(p.b), good);
}

static void test_verify_new(void **state)
{
    test_page p;
    uint32_t stored = 0xdead, computed = 0xbeef;

    memset(p.b, 0, sizeof(p.b));
    assert_int_equal(page_verify(p.b, &stored, &computed), PAGE_NEW);
    assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_NEW);
}

static void test_verify_ok(void **state)
{
    test_page p;

    make_valid_page(&p, 1);
    assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_OK);
    /* A freshly initialized page, once its checksum is set. */
    page_init(p.b, 0);
    page_set_checksum(p.b);
    assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_OK);
    /* Header extremes that are still sane. */
    {
        page_header h = header_of(p.b);
        h.lower = h.upper = h.special = BLOCK_SIZE;
        header_store(p.b, &h);
        page_set_checksum(p.b);
        assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_OK);
    }
}

static void test_verify_bad_checksum(void **state)
{
    test_page p;
    uint32_t good, stored = 0, computed = 0;

    make_valid_page(&p, 2);
    good = page_checksum(p.b);
    p.b[5000] ^= 0x10;
    assert_int_equal(page_verify(p.b, &stored, &computed), PAGE_BAD_CHECKSUM);
    assert_int_equal(stored, good);
    assert_int_equal(computed, page_checksum(p.b));
    assert_int_not_equal(stored, computed);
    /* Either out-parameter may be NULL. */
    assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_BAD_CHECKSUM);
    computed = 0;
    assert_int_equal(page_verify(p.b, NULL, &computed), PAGE_BAD_CHECKSUM);
    assert_int_equal(computed, page_checksum(p.b));

    /* Corruption of the stored checksum itself. */
    make_valid_page(&p, 2);
    p.b[CHECKSUM_OFFSET + 1] ^= 0x01;
    assert_int_equal(page_verify(p.b, &stored, &computed), PAGE_BAD_CHECKSUM);
    assert_int_equal(stored, good ^ 0x100);
    assert_int_equal(computed, good);

    /* A page that was initialized but never had its checksum set. */
    page_init(p.b, 0);
    assert_int_equal(page_verify(p.b, &stored, &computed), PAGE_BAD_CHECKSUM);
    assert_int_equal(stored, 0);

    /* A single nonzero byte in an otherwise zero page is not "new". */
    memset(p.b, 0, sizeof(p.b));
    p.b[BLOCK_SIZE - 1] = 1;
    assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_BAD_CHECKSUM);
}

static void test_verify_bad_version(void **state)
{
    test_page p;
    page_header h;

    make_valid_page(&p, 3);
    h = header_of(p.b);
    h.version = PAGE_LAYOUT_VERSION + 1;
    header_store(p.b, &h);
    page_set_checksum(p.b);
    assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_BAD_VERSION);
    h.version = 0;
    header_store(p.b, &h);
    page_set_checksum(p.b);
    assert_int_equal(page_verify(p.b, NULL, NULL), PAGE_BAD_VERSION);
}

static void test_verify_bad_header(void **state)
{
    static const struct {
        uint16_t lower, upper, special;
    } bad[] = {
        {0, 100, 8192},                    /* lower inside the header */
        {PAGE_HEADER_SIZE - 1, 100, 8192}, /* likewise */
        {200, 100, 8192},                  /* lower > upper */
        {24, 8000, 7992},                  /* upper > special */
        {24, 8000, 8200},                  /* special past the page */
        {24, 8000, 8004},                  /* special not 8-aligned */
        {24, 8001, 8192},                  /* upper not 8-aligned */
        {24, 65535, 65535},                /* nonsense */
    };
    test_page p;

    for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
        page_header h;

        make_valid_page(&p, 4);
        h = header_of(p.b);
        h.lower = bad[c].lower;
        h.upper = bad[c].upper;
        h.special = bad[c].special;
        header_store(p.b, &h);
        page_set_checksum(p.b);
        if (page_verify(p.b, NULL, NULL) != PAGE_BAD_HEADER)
            fail_msg("case %zu (lower %u upper %u special %u) not rejected", c,
                     bad[c].lower, bad[c].upper, bad[c].special);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_layout),
        cmocka_unit_test(test_free_space),
        cmocka_unit_test(test_is_new),
        cmocka_unit_test(test_checksum_stable),
        cmocka_unit_test(test_checksum_ignores_own_field),
        cmocka_unit_test(test_checksum_sensitive),
        cmocka_unit_test(test_verify_new),
        cmocka_unit_test(test_verify_ok),
        cmocka_unit_test(test_verify_bad_checksum),
        cmocka_unit_test(test_verify_bad_version),
        cmocka_unit_test(test_verify_bad_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
