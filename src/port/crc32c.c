/*
 * crc32c.c: CRC-32C (Castagnoli), in software and with the SSE4.2 CRC32
 * instruction.
 *
 * Both implementations work on the raw CRC register (no pre/post
 * complement); the public entry points complement on the way in and out so
 * that a finished CRC can be extended.  All tables are built once, under
 * pthread_once, the first time any entry point runs.
 *
 * The hardware path is tuned for 8 KiB pages.  One CRC32 instruction has a
 * latency of three cycles, so a single dependent chain manages 8 bytes per
 * three cycles, while the CPU can start one (Intel, AMD up to Zen 4) or
 * more (AMD Zen 5: measured above two) such instructions every cycle.  Long
 * buffers are therefore cut into blocks of six equal streams that are
 * checksummed side by side and then joined.  Six chains keep a 2-per-cycle
 * unit busy and cost a 1-per-cycle one, which three would already keep
 * busy, only a few more joins per block.  Joining needs the CRC of a stream
 * "shifted" past the bytes that follow it, a multiplication by x^(8n) mod P,
 * done with a per-length lookup table (a linear map over the 32 register bits).
 */
#include "port/crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define CRC32C_HAVE_HW 1
#else
#define CRC32C_HAVE_HW 0
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "crc32c.c assumes a little-endian CPU"
#endif

/* The Castagnoli polynomial, bit-reflected (bit 31 holds x^0). */
#define CRC32C_POLY 0x82F63B78u

/*
 * Per-stream lengths of the three block sizes of the six-way hardware loop
 * (multiples of 8).  The long one makes an 8 KiB page a single block plus a
 * 32-byte tail, and still fits when a caller leaves a small page header out
 * of the sum; the middle one makes 4 KiB two blocks plus 64 bytes.  The short
 * one keeps buffers of a few hundred bytes off the single chain, where five
 * joins (about 40 cycles, which overlap the next block) still beat 48 serial
 * instructions (144 cycles).
 */
#define CRC32C_STREAMS 6
#define CRC32C_LONG    1360
#define CRC32C_MID     336
#define CRC32C_SHORT   64

typedef uint32_t (*crc32c_fn)(uint32_t crc, const unsigned char *p, size_t len);

static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

/* crc32c_slice[k][b]: the register after b is followed by k zero bytes. */
static uint32_t crc32c_slice[8][256];

/* Shift tables: entry [k][b] is (b << 8k) * x^(8 * len) mod P, so that the
 * XOR of four lookups shifts a whole register past len zero bytes. */
static uint32_t crc32c_shift_long[4][256];
static uint32_t crc32c_shift_mid[4][256];
static uint32_t crc32c_shift_short[4][256];

/* The raw-register implementation crc32c() and crc32c_extend() use. */
static crc32c_fn crc32c_raw;

/* Multiplies a and b modulo P, both in reflected representation. */
static uint32_t gf2_mulmod(uint32_t a, uint32_t b)
{
    uint32_t product = 0;

    for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
        if (a & m)
            product ^= b;
        b = (b >> 1) ^ ((b & 1) ? CRC32C_POLY : 0);
    }
    return product;
}

/* x^(8n) mod P: the factor by which n zero bytes multiply a register. */
static uint32_t gf2_x_pow_8n(uint64_t n)
{
    uint32_t result = 1u << 31; /* x^0 */
    uint32_t square = 1u << 23; /* x^8 */

    while (n != 0) {
        if (n & 1)
            result = gf2_mulmod(result, square);
        square = gf2_mulmod(square, square);
        n >>= 1;
    }
    return result;
}

static void crc32c_build_shift(uint32_t table[4][256], size_t len)
{
    uint32_t factor = gf2_x_pow_8n(len);

    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++)
            table[k][b] = gf2_mulmod(factor, b << (8 * k));
}

/* Shifts register crc past the zero bytes that table was built for. */
static inline uint32_t crc32c_shift(const uint32_t table[4][256], uint32_t crc)
{
    return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^
           table[2][(crc >> 16) & 0xff] ^ table[3][crc >> 24];
}

static uint32_t crc32c_sw_raw(uint32_t crc, const unsigned char *p, size_t len)
{
    /* Byte at a time up to an 8-byte boundary, so the word loads below
     * never straddle a cache line. */
    while (len > 0 && ((uintptr_t)p & 7) != 0) {
        crc = (crc >> 8) ^ crc32c_slice[0][(crc ^ *p++) & 0xff];
        len--;
    }
    while (len >= 8) {
        uint32_t lo, hi, from_hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
        /* The upper word does not depend on crc: look it up first, and
         * keep the XORs a tree, so the loop-carried chain stays short. */
        from_hi =
            (crc32c_slice[3][hi & 0xff] ^ crc32c_slice[2][(hi >> 8) & 0xff]) ^
            (crc32c_slice[1][(hi >> 16) & 0xff] ^ crc32c_slice[0][hi >> 24]);
        lo ^= crc;
        crc = (crc32c_slice[7][lo & 0xff] ^ crc32c_slice[6][(lo >> 8) & 0xff]) ^
              (crc32c_slice[5][(lo >> 16) & 0xff] ^ crc32c_slice[4][lo >> 24]) ^
              from_hi;
        p += 8;
        len -= 8;
    }
    while (len > 0) {
        crc = (crc >> 8) ^ crc32c_slice[0][(crc ^ *p++) & 0xff];
        len--;
    }
    return crc;
}

#if CRC32C_HAVE_HW

#define CRC32C_TARGET __attribute__((target("sse4.2")))

static inline uint64_t load_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/*
 * Checksums one block of six consecutive streams of stream_len bytes each,
 * starting from register crc, and returns the register after the block.
 * The first stream continues crc and the others start from zero; since
 * the CRC is linear, the block's register is, Horner-style,
 * shift(...shift(shift(A) ^ B) ^ C ...) ^ F, where shift moves a register
 * past stream_len zero bytes, so one table serves all five joins.  Inlined
 * with a constant stream_len, so all loads are fixed offsets of one
 * pointer.
 */
CRC32C_TARGET static inline __attribute__((always_inline)) uint32_t
crc32c_hw_block(uint32_t crc, const unsigned char *p, size_t stream_len,
                const uint32_t shift[4][256])
{
    uint64_t a = crc, b = 0, c = 0, d = 0, e = 0, f = 0;
    const unsigned char *end = p + stream_len;
    uint32_t r;

    for (; p < end; p += 8) {
        a = _mm_crc32_u64(a, load_u64(p));
        b = _mm_crc32_u64(b, load_u64(p + stream_len));
        c = _mm_crc32_u64(c, load_u64(p + 2 * stream_len));
        d = _mm_crc32_u64(d, load_u64(p + 3 * stream_len));
        e = _mm_crc32_u64(e, load_u64(p + 4 * stream_len));
        f = _mm_crc32_u64(f, load_u64(p + 5 * stream_len));
    }
    r = crc32c_shift(shift, (uint32_t)a) ^ (uint32_t)b;
    r = crc32c_shift(shift, r) ^ (uint32_t)c;
    r = crc32c_shift(shift, r) ^ (uint32_t)d;
    r = crc32c_shift(shift, r) ^ (uint32_t)e;
    return crc32c_shift(shift, r) ^ (uint32_t)f;
}

CRC32C_TARGET static uint32_t crc32c_hw_raw(uint32_t crc,
                                            const unsigned char *p, size_t len)
{
    while (len > 0 && ((uintptr_t)p & 7) != 0) {
        crc = _mm_crc32_u8(crc, *p++);
        len--;
    }
    while (len >= CRC32C_STREAMS * CRC32C_LONG) {
        crc = crc32c_hw_block(crc, p, CRC32C_LONG, crc32c_shift_long);
        p += CRC32C_STREAMS * CRC32C_LONG;
        len -= CRC32C_STREAMS * CRC32C_LONG;
    }
    while (len >= CRC32C_STREAMS * CRC32C_MID) {
        crc = crc32c_hw_block(crc, p, CRC32C_MID, crc32c_shift_mid);
        p += CRC32C_STREAMS * CRC32C_MID;
        len -= CRC32C_STREAMS * CRC32C_MID;
    }
    while (len >= CRC32C_STREAMS * CRC32C_SHORT) {
        crc = crc32c_hw_block(crc, p, CRC32C_SHORT, crc32c_shift_short);
        p += CRC32C_STREAMS * CRC32C_SHORT;
        len -= CRC32C_STREAMS * CRC32C_SHORT;
    }
    if (len >= 8) {
        uint64_t crc64 = crc;
        do {
            crc64 = _mm_crc32_u64(crc64, load_u64(p));
            p += 8;
            len -= 8;
        } while (len >= 8);
        crc = (uint32_t)crc64;
    }
    while (len > 0) {
        crc = _mm_crc32_u8(crc, *p++);
        len--;
    }
    return crc;
}

bool crc32c_hw_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

#else /* !CRC32C_HAVE_HW */

static uint32_t crc32c_hw_raw(uint32_t crc, const unsigned char *p, size_t len)
{
    return crc32c_sw_raw(crc, p, len);
}

bool crc32c_hw_available(void)
{
    return false;
}

#endif /* CRC32C_HAVE_HW */

static void crc32c_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t crc = b;
        for (int i = 0; i < 8; i++)
            crc = (crc >> 1) ^ ((crc & 1) ? CRC32C_POLY : 0);
        crc32c_slice[0][b] = crc;
    }
    for (int k = 1; k < 8; k++)
        for (int b = 0; b < 256; b++) {
            uint32_t prev = crc32c_slice[k - 1][b];
            crc32c_slice[k][b] = (prev >> 8) ^ crc32c_slice[0][prev & 0xff];
        }
    crc32c_build_shift(crc32c_shift_long, CRC32C_LONG);
    crc32c_build_shift(crc32c_shift_mid, CRC32C_MID);
    crc32c_build_shift(crc32c_shift_short, CRC32C_SHORT);
    crc32c_raw = crc32c_hw_available() ? crc32c_hw_raw : crc32c_sw_raw;
}

uint32_t crc32c_sw(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&crc32c_once, crc32c_init);
    return ~crc32c_sw_raw(~crc, data, len);
}

/* Contract: the caller has checked crc32c_hw_available(); without SSE4.2
 * this faults with an illegal instruction. */
uint32_t crc32c_hw(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&crc32c_once, crc32c_init);
    return ~crc32c_hw_raw(~crc, data, len);
}

uint32_t crc32c_extend(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&crc32c_once, crc32c_init);
    return ~crc32c_raw(~crc, data, len);
}

uint32_t crc32c(const void *data, size_t len)
{
    return crc32c_extend(0, data, len);
}
