/*
 * futex.h: sleeping on a 32-bit word (Linux futex, process-private).
 *
 * futex_wait() sleeps only if *addr still equals expected when the kernel
 * looks, so a waker that changes the word before calling futex_wake() can
 * never be missed.  Wake-ups may be spurious: callers always re-check their
 * condition in a loop.
 */
#ifndef KEEL_PORT_FUTEX_H
#define KEEL_PORT_FUTEX_H

#include "port/atomics.h"

/* Sleeps while *addr == expected, until woken or interrupted. */
void futex_wait(atomic_u32 *addr, uint32_t expected);

/* futex_wait() for at most timeout_ns nanoseconds. */
void futex_wait_timeout(atomic_u32 *addr, uint32_t expected,
                        uint64_t timeout_ns);

/* Wakes up to n (>= 1) sleepers on addr (INT32_MAX: all).  Returns how many
 * were asleep and woken; 0 when nobody was waiting. */
int futex_wake(atomic_u32 *addr, int n);

#endif /* KEEL_PORT_FUTEX_H */
