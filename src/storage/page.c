/*
 * page.c: page initialization, the page checksum, and verification of pages
 * read from disk.
 *
 * Pages handed to these functions are not required to be 8-byte aligned
 * (a caller may verify a page inside a larger read buffer), so the header is
 * always copied out with memcpy rather than dereferenced in place.
 */
#include "storage/page.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "port/crc32c.h"

/* Rounds n up to a multiple of 8: the special space, and so every offset
 * derived from it, stays 8-aligned for the access method's structs. */
#define PAGE_ALIGN8(n) (((size_t)(n) + 7) & ~(size_t)7)

#define CHECKSUM_OFFSET offsetof(page_header, checksum)
#define CHECKSUM_END    (CHECKSUM_OFFSET + sizeof(uint32_t))

_Static_assert(BLOCK_SIZE % 64 == 0, "page_is_new scans 64-byte chunks");
_Static_assert(BLOCK_SIZE <= UINT16_MAX + 1, "offsets fit in uint16_t");

void page_init(void *page, uint16_t special_size)
{
    size_t special = BLOCK_SIZE - PAGE_ALIGN8(special_size);
    page_header h;

    /* The access method asks for a fixed, small special space; a request
     * that leaves no room for the header is a bug in the caller. */
    assert(PAGE_ALIGN8(special_size) <= BLOCK_SIZE - PAGE_HEADER_SIZE);

    memset(page, 0, BLOCK_SIZE);
    memset(&h, 0, sizeof(h));
    h.version = PAGE_LAYOUT_VERSION;
    h.lower = PAGE_HEADER_SIZE;
    h.upper = (uint16_t)special;
    h.special = (uint16_t)special;
    memcpy(page, &h, sizeof(h));
}

/*
 * Every page read from disk passes through here first, so this is written
 * to be cheap: OR 64 bytes at a time (which compilers vectorize) and stop at
 * the first chunk with a set bit.  A written page fails on the first chunk,
 * since its header's version is never zero.
 */
bool page_is_new(const void *page)
{
    const unsigned char *p = page;

    for (size_t off = 0; off < BLOCK_SIZE; off += 64) {
        uint64_t w[8];
        uint64_t acc = 0;

        memcpy(w, p + off, sizeof(w));
        for (int i = 0; i < 8; i++)
            acc |= w[i];
        if (acc != 0)
            return false;
    }
    return true;
}

/* The checksum field is replaced by zeroes in the CRC's input rather than in
 * the page, so that a page being verified (or shared) is never written. */
uint32_t page_checksum(const void *page)
{
    static const unsigned char zero[sizeof(uint32_t)];
    const unsigned char *p = page;
    uint32_t crc;

    crc = crc32c(p, CHECKSUM_OFFSET);
    crc = crc32c_extend(crc, zero, sizeof(zero));
    crc = crc32c_extend(crc, p + CHECKSUM_END, BLOCK_SIZE - CHECKSUM_END);
    return crc;
}

void page_set_checksum(void *page)
{
    uint32_t crc = page_checksum(page);

    memcpy((unsigned char *)page + CHECKSUM_OFFSET, &crc, sizeof(crc));
}

/*
 * Verdicts are checked in order of how much they tell the reader: an
 * all-zero page is valid and has no checksum to check; a checksum mismatch
 * means the header itself cannot be trusted, so its fields are examined
 * only once the checksum has matched.
 */
page_verdict page_verify(const void *page, uint32_t *stored, uint32_t *computed)
{
    page_header h;
    uint32_t crc;

    if (page_is_new(page))
        return PAGE_NEW;

    memcpy(&h, page, sizeof(h));
    crc = page_checksum(page);
    if (crc != h.checksum) {
        if (stored != NULL)
            *stored = h.checksum;
        if (computed != NULL)
            *computed = crc;
        return PAGE_BAD_CHECKSUM;
    }

    if (h.version != PAGE_LAYOUT_VERSION)
        return PAGE_BAD_VERSION;

    /* Items are 8-aligned from upper up, in every page kind: an upper
     * that is not would make the next item added a misaligned one. */
    if (h.lower < PAGE_HEADER_SIZE || h.lower > h.upper ||
        h.upper > h.special || h.special > BLOCK_SIZE || h.special % 8 != 0 ||
        h.upper % 8 != 0)
        return PAGE_BAD_HEADER;

    return PAGE_OK;
}
