/*
 * clock.h: the monotonic clock.
 */
#ifndef KEEL_PORT_CLOCK_H
#define KEEL_PORT_CLOCK_H

#include <stdint.h>

/* Nanoseconds since an arbitrary fixed point; never goes backwards. */
uint64_t clock_now_ns(void);

/* CPU time the calling thread has used, in nanoseconds (user and system:
 * time it waits preempted does not count); 0 if the clock is missing. */
uint64_t clock_thread_cpu_ns(void);

/* Sleeps for at least us microseconds (restarting after signals). */
void clock_sleep_us(uint32_t us);

#endif /* KEEL_PORT_CLOCK_H */
