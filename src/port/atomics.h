/*
 * atomics.h: a thin layer over C11 <stdatomic.h>.
 *
 * Every shared field that is read without a lock is an _Atomic type and
 * every access to it names its memory order, so that a reader sees at a
 * glance what each load and store synchronizes with.  These macros only
 * shorten the spelling; they add nothing.
 */
#ifndef KEEL_PORT_ATOMICS_H
#define KEEL_PORT_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

typedef _Atomic(uint32_t) atomic_u32;
typedef _Atomic(uint64_t) atomic_u64;
typedef _Atomic(int32_t) atomic_i32;

#define atomic_load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define atomic_load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define atomic_store_relaxed(p, v)                                             \
    atomic_store_explicit((p), (v), memory_order_relaxed)
#define atomic_store_release(p, v)                                             \
    atomic_store_explicit((p), (v), memory_order_release)

/* Hint to the CPU that we are in a spin loop (PAUSE on x86). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif /* KEEL_PORT_ATOMICS_H */
