/*
 * page.h: the 8 KiB page and its header.
 *
 * Every block of every relation file is one page.  The header comes first;
 * line pointers (or other data) grow up from its end to `lower`, tuples
 * grow down from `special` to `upper`, and the space between is free.  The
 * special space at the end belongs to the access method (a B-tree's
 * right-link, for instance).
 *
 *   0        24                lower        upper          special    8192
 *   | header | item pointers -> |   free    | <- tuples     | special |
 *
 * The checksum is CRC-32C over the whole page with the checksum field taken
 * as zero.  It is set when a page is written and verified when it is read;
 * in memory it is stale and nobody looks at it.  A page of all zeroes is a
 * "new" page (a block that was allocated but never written, as after a crash
 * during extension) and verifies as valid.
 */
#ifndef KEEL_STORAGE_PAGE_H
#define KEEL_STORAGE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCK_SIZE          8192
/* 2: the heap tuple header's last word, zero before, holds a command id
 * (access/heap_page.h). */
#define PAGE_LAYOUT_VERSION 2

typedef struct page_header {
    uint64_t lsn;      /* WAL position of the last change (0 until WAL) */
    uint32_t checksum; /* CRC-32C, see above */
    uint16_t flags;    /* PAGE_FLAG_* */
    uint16_t version;  /* PAGE_LAYOUT_VERSION */
    uint16_t lower;    /* offset of the start of free space */
    uint16_t upper;    /* offset of the end of free space */
    uint16_t special;  /* offset of the special space */
    uint16_t am_hint;  /* the access method's (heap: heap_page.h); else 0 */
} page_header;

_Static_assert(sizeof(page_header) == 24, "page header is 24 bytes");

#define PAGE_HEADER_SIZE ((uint16_t)sizeof(page_header))

/* Flags (none are used by the storage layer itself yet). */
#define PAGE_FLAG_HAS_FREE_LINES 0x0001
#define PAGE_FLAG_ALL_VISIBLE    0x0002
#define PAGE_FLAG_PRUNABLE       0x0004 /* heap: a version here has a deleter */
#define PAGE_FLAG_HAS_HOLES      0x0008 /* heap: removed items' storage left */

/* Initializes page (BLOCK_SIZE bytes) as empty, with special_size bytes of
 * special space at the end (rounded up to 8). */
void page_init(void *page, uint16_t special_size);

/* True if every byte of the page is zero. */
bool page_is_new(const void *page);

/* Computes the page's checksum (the checksum field taken as zero). */
uint32_t page_checksum(const void *page);

/* Stores page_checksum(page) in the header. */
void page_set_checksum(void *page);

/* Result of page_verify(). */
typedef enum page_verdict {
    PAGE_OK = 0,       /* checksum matches and the header is sane */
    PAGE_NEW,          /* all zeroes: valid, never written */
    PAGE_BAD_CHECKSUM, /* stored and computed checksums differ */
    PAGE_BAD_VERSION,  /* checksum fine, but another layout version */
    PAGE_BAD_HEADER,   /* checksum fine, but lower/upper/special insane
                        * (out of order, past the page, or special or
                        * upper not 8-aligned) */
} page_verdict;

/*
 * Verifies a page read from disk.  On PAGE_BAD_CHECKSUM, *stored and
 * *computed (either may be NULL) receive the two checksums for the error
 * message.
 */
page_verdict page_verify(const void *page, uint32_t *stored,
                         uint32_t *computed);

/* Free space between lower and upper, in bytes. */
static inline size_t page_free_space(const void *page)
{
    const page_header *h = (const page_header *)page;
    return h->upper > h->lower ? (size_t)(h->upper - h->lower) : 0;
}

#endif /* KEEL_STORAGE_PAGE_H */
