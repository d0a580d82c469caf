/*
 * mem.c: cache-line-aligned and page-aligned allocation.
 */
#include "port/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE_SIZE ((size_t)2 << 20)

void *mem_alloc_lines(size_t size)
{
    void *p = NULL;

    if (size > SIZE_MAX - CACHE_LINE_SIZE)
        return NULL;
    size = ALIGN_UP(size ? size : 1, CACHE_LINE_SIZE);
    if (posix_memalign(&p, CACHE_LINE_SIZE, size) != 0)
        return NULL;
    return p;
}

void *mem_alloc_start(size_t size, size_t align, void **start)
{
    size_t slack = MEM_START_SLACK(align);
    char *p;

    if (size > SIZE_MAX - slack)
        return NULL;
    p = malloc(size + slack);
    if (p != NULL)
        *start = (void *)ALIGN_UP((uintptr_t)p, align);
    return p;
}

void *mem_alloc_line_start(size_t size, void **start)
{
    return mem_alloc_start(size, CACHE_LINE_SIZE, start);
}

void *mem_alloc_aligned(size_t size)
{
    void *p = mem_alloc_lines(size);

    if (p != NULL)
        memset(p, 0, ALIGN_UP(size ? size : 1, CACHE_LINE_SIZE));
    return p;
}

void mem_free_aligned(void *p)
{
    free(p);
}

/*
 * The length actually mapped for a request of size bytes.  Requests of a
 * huge page or more are rounded up to whole huge pages, whether or not
 * huge pages were asked for, so that mem_free_pages(), which is not told,
 * unmaps exactly what mem_alloc_pages() kept.  Returns 0 on overflow.
 */
static size_t mem_pages_length(size_t size)
{
    if (size < HUGE_PAGE_SIZE)
        return size;
    if (size > SIZE_MAX - HUGE_PAGE_SIZE)
        return 0;
    return ALIGN_UP(size, HUGE_PAGE_SIZE);
}

/*
 * With huge set and at least 2 MiB asked for, the result is 2 MiB-aligned:
 * the kernel can back only aligned 2 MiB ranges with a huge page, so an
 * unaligned mapping would lose one at each end.  mmap() gives only page
 * alignment, so map an extra 2 MiB and trim the unaligned head and tail.
 */
void *mem_alloc_pages(size_t size, bool huge)
{
    size_t length = mem_pages_length(size);
    bool align = huge && length >= HUGE_PAGE_SIZE;
    size_t map_length;
    char *map, *p;

    if (length == 0)
        return NULL;
    map_length = align ? length + HUGE_PAGE_SIZE : length;
    if (map_length < length)
        return NULL;
    map = mmap(NULL, map_length, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    if (!align)
        return map;

    p = (char *)ALIGN_UP((uintptr_t)map, HUGE_PAGE_SIZE);
    if (p > map)
        (void)munmap(map, (size_t)(p - map));
    if (map + map_length > p + length)
        (void)munmap(p + length, (size_t)(map + map_length - (p + length)));
#ifdef MADV_HUGEPAGE
    /* Only a hint: without THP the pool still works, with more TLB misses. */
    (void)madvise(p, length, MADV_HUGEPAGE);
#endif
    return p;
}

void mem_free_pages(void *p, size_t size)
{
    if (p != NULL)
        (void)munmap(p, mem_pages_length(size));
}
