/*
 * clock.h: the monotonic clock.
 */
#ifndef KEEL_PORT_CLOCK_H
#define KEEL_PORT_CLOCK_H

#include <stdint.h>

/* Nanoseconds since an arbitrary fixed point; never goes backwards. */
uint64_t clock_now_ns(void);

/* Sleeps for at least us microseconds (restarting after signals). */
void clock_sleep_us(uint32_t us);

#endif /* KEEL_PORT_CLOCK_H */
