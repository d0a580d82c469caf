/*
 * spin.c: the backoff schedule behind spin_wait_once().
 *
 * Three phases, by how many times this waiter has already waited:
 *   pause  bursts of PAUSE that grow from 1 to 32, for the common case of
 *          a holder running on another core that is about to let go;
 *   yield  sched_yield(), so a preempted holder on this core can run;
 *   sleep  2 us doubling to SPIN_MAX_SLEEP_US, each jittered by +-50%.
 * Without the sleeps, 64 threads on 2 cores spend their quanta spinning
 * and yielding to each other while the holder waits for a CPU; the jitter
 * keeps waiters that started together from waking (and colliding) in step.
 */
#include "port/spin.h"

#include <assert.h>
#include <sched.h>
#include <stdint.h>

#include "port/atomics.h"
#include "port/clock.h"
#include "port/hash.h"

#define SPIN_MIN_SLEEP_US   2
#define SPIN_MAX_BURST_LOG2 5 /* the last pause bursts are 32 PAUSEs */

void spin_wait_init(spin_wait *w)
{
    w->iterations = 0;
    w->sleep_us = 0;
    w->rng = 0; /* seeded at the first sleep; most waits never get there */
}

/* xorshift32: good enough to de-synchronize sleepers, and state-local. */
static uint32_t spin_rand(spin_wait *w)
{
    uint32_t x = w->rng;

    if (x == 0) {
        /* Waiters started at the same instant still differ by address. */
        uint64_t seed = hash_u64((uint64_t)(uintptr_t)w ^ clock_now_ns());
        x = (uint32_t)(seed ^ (seed >> 32));
        if (x == 0)
            x = 0x9E3779B9u;
    }
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    w->rng = x;
    return x;
}

/*
 * Contract: w was set up by spin_wait_init(); each call counts one wait.
 * While sleeping, w->sleep_us holds the base length of the sleep just
 * taken; the actual sleep is uniform in [sleep_us/2, 3*sleep_us/2],
 * clipped to SPIN_MAX_SLEEP_US.
 */
void spin_wait_once(spin_wait *w)
{
    uint32_t n = w->iterations;

    if (w->iterations < UINT32_MAX)
        w->iterations++;

    if (n < SPIN_PAUSE_ITERATIONS) {
        uint32_t burst =
            1u << (n * (SPIN_MAX_BURST_LOG2 + 1) / SPIN_PAUSE_ITERATIONS);
        for (uint32_t i = 0; i < burst; i++)
            cpu_relax();
        return;
    }
    if (n < SPIN_PAUSE_ITERATIONS + SPIN_YIELD_ITERATIONS) {
        sched_yield();
        return;
    }

    if (w->sleep_us == 0)
        w->sleep_us = SPIN_MIN_SLEEP_US;
    else if (w->sleep_us < SPIN_MAX_SLEEP_US / 2)
        w->sleep_us *= 2;
    else
        w->sleep_us = SPIN_MAX_SLEEP_US;

    uint32_t us = w->sleep_us / 2 + spin_rand(w) % (w->sleep_us + 1);
    if (us > SPIN_MAX_SLEEP_US)
        us = SPIN_MAX_SLEEP_US;
    assert(us >= w->sleep_us / 2);
    clock_sleep_us(us);
}
