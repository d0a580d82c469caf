/*
 * spin.h: spin-waiting with adaptive backoff.
 *
 * A waiter first spins with a CPU pause (the holder is probably running on
 * another core and about to finish), then yields, then sleeps for
 * exponentially growing, jittered intervals.  The sleeps are what keep 64
 * threads on 2 cores making progress: a waiter whose lock holder was
 * preempted gives its quantum back instead of burning it.
 *
 * Usage:
 *     spin_wait w;
 *     spin_wait_init(&w);
 *     while (!condition())
 *         spin_wait_once(&w);
 */
#ifndef KEEL_PORT_SPIN_H
#define KEEL_PORT_SPIN_H

#include <stdint.h>

typedef struct spin_wait {
    uint32_t iterations; /* calls to spin_wait_once() so far */
    uint32_t sleep_us;   /* base length of the last sleep, before jitter;
                            0 while still pausing or yielding */
    uint32_t rng;        /* jitter state */
} spin_wait;

void spin_wait_init(spin_wait *w);

/* Waits a little: a pause, a yield or a sleep, depending on how long this
 * waiter has already waited.  Never asks the kernel for a sleep longer than
 * SPIN_MAX_SLEEP_US (the scheduler may still wake it late). */
void spin_wait_once(spin_wait *w);

/* Calls that pause before the first yield, calls that yield before the
 * first sleep, and the longest single sleep. */
#define SPIN_PAUSE_ITERATIONS 100
#define SPIN_YIELD_ITERATIONS 10
#define SPIN_MAX_SLEEP_US     1000

#endif /* KEEL_PORT_SPIN_H */
