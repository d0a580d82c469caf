/*
 * mem.h: cache-line alignment and large shared allocations.
 */
#ifndef KEEL_PORT_MEM_H
#define KEEL_PORT_MEM_H

#include <stdbool.h>
#include <stddef.h>

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
 * Allocates size bytes, zeroed, starting on a cache line.  Returns NULL if
 * memory is exhausted.  Free with mem_free_aligned().
 */
void *mem_alloc_aligned(size_t size);
void mem_free_aligned(void *p);

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

#endif /* KEEL_PORT_MEM_H */
