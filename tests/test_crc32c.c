/*
 * test_crc32c.c: CRC-32C against published vectors, and the hardware path
 * against the table path for every length and alignment it treats
 * differently.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "port/crc32c.h"

/* Longer than two of the hardware loop's largest blocks, plus slack for
 * misaligning the start. */
#define BIG_LEN (3 * 8192 + 64)

typedef uint32_t (*crc_impl)(uint32_t crc, const void *data, size_t len);

struct vector {
    const char *name;
    unsigned char data[32];
    size_t len;
    uint32_t crc;
};

static struct vector vectors[6];

/* RFC 3720 (iSCSI), appendix B.4, plus the customary "123456789". */
static void vectors_init(void)
{
    vectors[0] = (struct vector){"123456789", {0}, 9, 0xE3069283u};
    memcpy(vectors[0].data, "123456789", 9);
    vectors[1] = (struct vector){"32 x 0x00", {0}, 32, 0x8A9136AAu};
    vectors[2] = (struct vector){"32 x 0xFF", {0}, 32, 0x62A8AB43u};
    memset(vectors[2].data, 0xFF, 32);
    vectors[3] = (struct vector){"0x00..0x1F", {0}, 32, 0x46DD794Eu};
    vectors[4] = (struct vector){"0x1F..0x00", {0}, 32, 0x113FDB5Cu};
    for (int i = 0; i < 32; i++) {
        vectors[3].data[i] = (unsigned char)i;
        vectors[4].data[i] = (unsigned char)(31 - i);
    }
    vectors[5] = (struct vector){"empty", {0}, 0, 0};
}

static void check_vectors(crc_impl impl)
{
    /* Copy to every alignment, so the head loop is exercised too. */
    unsigned char buf[32 + 8];

    for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
        for (size_t mis = 0; mis < 8; mis++) {
            memcpy(buf + mis, vectors[v].data, vectors[v].len);
            uint32_t got = impl(0, buf + mis, vectors[v].len);
            if (got != vectors[v].crc)
                fail_msg("%s at offset %zu: got %08x, want %08x",
                         vectors[v].name, mis, got, vectors[v].crc);
        }
    }
}

static void skip_without_hw(void)
{
    if (!crc32c_hw_available())
        skip();
}

static void fill_random(unsigned char *buf, size_t len, uint64_t seed)
{
    uint64_t state = seed | 1;

    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(tu_rand(&state) >> 56);
}

static uint32_t crc32c_via_dispatch(uint32_t crc, const void *data, size_t len)
{
    return crc == 0 ? crc32c(data, len) : crc32c_extend(crc, data, len);
}

static void test_vectors_sw(void **state)
{
    check_vectors(crc32c_sw);
}

static void test_vectors_hw(void **state)
{
    skip_without_hw();
    check_vectors(crc32c_hw);
}

static void test_vectors_dispatch(void **state)
{
    check_vectors(crc32c_via_dispatch);
    check_vectors(crc32c_extend);
    assert_int_equal(crc32c("", 0), 0);
    assert_int_equal(crc32c(NULL, 0), 0);
    /* Extending by nothing leaves a CRC as it is. */
    assert_int_equal(crc32c_extend(0xE3069283u, NULL, 0), 0xE3069283u);
}

/*
 * The reference for every prefix of buf, one byte at a time: a byte-wise
 * extend runs only the simplest loop of crc32c_sw (checked against the
 * vectors above), none of the word loops or stream joins under test.
 */
static void prefix_crcs(const unsigned char *buf, size_t len, uint32_t *out)
{
    out[0] = 0;
    for (size_t i = 0; i < len; i++)
        out[i + 1] = crc32c_sw(out[i], buf + i, 1);
}

/*
 * hw == reference for every length 0..9000 at start offsets 0..7: this
 * crosses every block-size boundary of the hardware loop, with every
 * possible head and tail.  The table path has no thresholds past 8 bytes,
 * so it is checked at every offset up to 256 bytes and at one offset per
 * length after that (which keeps sanitizer builds quick).
 */
static void test_hw_matches_sw_all_lengths(void **state)
{
    const size_t max_len = 9000;
    unsigned char *buf;
    uint32_t *ref;

    skip_without_hw();
    buf = malloc(max_len + 8);
    ref = malloc((max_len + 1) * sizeof(uint32_t));
    assert_non_null(buf);
    assert_non_null(ref);
    fill_random(buf, max_len + 8, 0x1234567);
    for (size_t mis = 0; mis < 8; mis++) {
        prefix_crcs(buf + mis, max_len, ref);
        for (size_t len = 0; len <= max_len; len++) {
            uint32_t hw = crc32c_hw(0, buf + mis, len);
            if (hw != ref[len])
                fail_msg("len %zu offset %zu: hw %08x, want %08x", len, mis, hw,
                         ref[len]);
            if (len > 256 && len % 8 != mis)
                continue;
            uint32_t sw = crc32c_sw(0, buf + mis, len);
            if (sw != ref[len])
                fail_msg("len %zu offset %zu: sw %08x, want %08x", len, mis, sw,
                         ref[len]);
        }
    }
    free(ref);
    free(buf);
}

/* Lengths that need several of the largest blocks, and arbitrary
 * non-zero starting CRCs. */
static void test_hw_matches_sw_long(void **state)
{
    unsigned char *buf;
    uint64_t rng = 0xfeedface;

    skip_without_hw();
    buf = malloc(BIG_LEN);
    assert_non_null(buf);
    fill_random(buf, BIG_LEN, 99);
    for (int i = 0; i < 200; i++) {
        size_t mis = tu_rand(&rng) % 8;
        size_t len = tu_rand(&rng) % (BIG_LEN - 8);
        uint32_t start = (uint32_t)tu_rand(&rng);
        assert_int_equal(crc32c_hw(start, buf + mis, len),
                         crc32c_sw(start, buf + mis, len));
    }
    free(buf);
}

static void check_extend(crc_impl impl)
{
    unsigned char *buf = malloc(BIG_LEN);
    uint64_t rng = 0xabcdef;

    assert_non_null(buf);
    fill_random(buf, BIG_LEN, 7);
    for (int i = 0; i < 300; i++) {
        size_t len = tu_rand(&rng) % BIG_LEN;
        size_t split = len == 0 ? 0 : tu_rand(&rng) % (len + 1);
        uint32_t whole = impl(0, buf, len);
        uint32_t first = impl(0, buf, split);
        assert_int_equal(impl(first, buf + split, len - split), whole);
        assert_int_equal(
            crc32c_extend(crc32c(buf, split), buf + split, len - split), whole);
    }
    free(buf);
}

static void test_extend_sw(void **state)
{
    check_extend(crc32c_sw);
}

static void test_extend_hw(void **state)
{
    skip_without_hw();
    check_extend(crc32c_hw);
}

/* CRC-32C detects every single-bit error: flip bits of a page in turn,
 * every stride-th one, and check that each flip changes the CRC. */
static void check_bit_flips(crc_impl impl, unsigned stride)
{
    unsigned char *page = malloc(8192);

    assert_non_null(page);
    fill_random(page, 8192, 31337);
    uint32_t good = impl(0, page, 8192);
    for (unsigned bit = 0; bit < 8192 * 8; bit += stride) {
        page[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        uint32_t bad = impl(0, page, 8192);
        page[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        if (bad == good)
            fail_msg("flipping bit %u left the CRC at %08x", bit, good);
    }
    assert_int_equal(impl(0, page, 8192), good);
    free(page);
}

static void test_bit_flip_hw(void **state)
{
    skip_without_hw();
    check_bit_flips(crc32c_hw, 1);
}

static void test_bit_flip_sw(void **state)
{
    /* An odd stride still reaches every bit position within a byte, and
     * bytes all over the page; the hardware test above flips every bit. */
    check_bit_flips(crc32c_sw, 61);
}

static void test_dispatch_matches_impl(void **state)
{
    unsigned char buf[1000];

    fill_random(buf, sizeof(buf), 5);
    uint32_t want = crc32c_hw_available() ? crc32c_hw(0, buf, sizeof(buf))
                                          : crc32c_sw(0, buf, sizeof(buf));
    assert_int_equal(crc32c(buf, sizeof(buf)), want);
    assert_int_equal(crc32c_sw(0, buf, sizeof(buf)), want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_sw),
        cmocka_unit_test(test_vectors_hw),
        cmocka_unit_test(test_vectors_dispatch),
        cmocka_unit_test(test_hw_matches_sw_all_lengths),
        cmocka_unit_test(test_hw_matches_sw_long),
        cmocka_unit_test(test_extend_sw),
        cmocka_unit_test(test_extend_hw),
        cmocka_unit_test(test_bit_flip_hw),
        cmocka_unit_test(test_bit_flip_sw),
        cmocka_unit_test(test_dispatch_matches_impl),
    };

    vectors_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
