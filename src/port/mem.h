/*
 * mem.h: cache-line alignment and large shared allocations.
 */
#ifndef KEEL_PORT_MEM_H
#define KEEL_PORT_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * The unit of coherence.  64 bytes on every x86-64 and most ARM servers;
 * shared structures that one backend writes and others read are padded to
 * it so that one backend's stores never invalidate a line others read.
 */
#define CACHE_LINE_SIZE 64
#define CACHE_ALIGNED   _Alignas(CACHE_LINE_SIZE)

/* Rounds n up to a multiple of align (a power of two). */
#define ALIGN_UP(n, align) (((n) + ((align)-1)) & ~((size_t)(align)-1))

/*
 * Allocates size bytes, zeroed, starting on a cache line and rounded up
 * to whole lines, so that nothing else shares its lines.  Returns NULL if
 * memory is exhausted.  Free with mem_free_aligned().
 *
 * What one session writes often is allocated so, even where only that
 * session ever touches it: threads share the allocator, so a session's
 * memory may lie next to another's.  It does when the sessions were
 * begun on one thread, or on threads that share a malloc arena (glibc
 * makes at most 8 per core).  Two sessions' writes on one line would make
 * that line move between their cores on every transaction.
 */
void *mem_alloc_aligned(size_t size);
/* The same, not zeroed. */
void *mem_alloc_lines(size_t size);
void mem_free_aligned(void *p);

/* What mem_alloc_start() allocates beyond the size asked for, to start
 * it on a multiple of align (a power of two): malloc() aligns to
 * max_align_t already. */
#define MEM_START_SLACK(align)                                                 \
    ((align) > _Alignof(max_align_t) ? (align) - _Alignof(max_align_t) : 0)
#define MEM_LINE_START_SLACK MEM_START_SLACK(CACHE_LINE_SIZE)

/*
 * For a block made and freed often, whose owner writes its first lines:
 * malloc()s size bytes and MEM_START_SLACK(align) more, and sets *start
 * to the first multiple of align in them, so that the block's lines share
 * nothing with an allocation before them (or, with align a page, so that
 * its pages can be found by masking an address).  What the start does not
 * take of the slack lies past the end, where an overrun of less than that
 * escapes the address sanitizer.  Returns the block, for free(), or NULL
 * if memory is exhausted.  posix_memalign() would split free space at each
 * call, slowing the allocator and scattering its heap so that it could no
 * longer give freed space back to the system.
 */
void *mem_alloc_start(size_t size, size_t align, void **start);

/* mem_alloc_start() on a cache line. */
void *mem_alloc_line_start(size_t size, void **start);

/*
 * Allocates size bytes of zeroed, page-aligned memory with mmap, asking the
 * kernel for transparent huge pages when huge is true (a hint: the call
 * succeeds without them).  With huge true and size >= 2 MiB the result is
 * 2 MiB-aligned, so that every 2 MiB of it can be one huge page.  The
 * mapping is process-private: threads share it, forked children get a
 * copy.  Returns NULL on failure.  Free with mem_free_pages() and the same
 * size (NULL is ignored).
 */
void *mem_alloc_pages(size_t size, bool huge);
void mem_free_pages(void *p, size_t size);

/*
 * strnlen(), by the C library's memchr().  keel never calls strnlen()
 * itself: libpg_query exports a strnlen() of its own, a byte at a time,
 * which then takes the C library's place for the whole program (the
 * select-only transaction's name look-ups made 452 instructions of it).
 */
static inline size_t mem_strnlen(const char *s, size_t max)
{
    const char *z = memchr(s, 0, max);

    return z != NULL ? (size_t)(z - s) : max;
}

#endif /* KEEL_PORT_MEM_H */
