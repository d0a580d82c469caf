/*
 * clock.c: the monotonic clock and short sleeps.
 *
 * CLOCK_MONOTONIC, not CLOCK_REALTIME: timeouts and backoff must not jump
 * when an administrator or NTP steps the wall clock.
 */
#include "port/clock.h"

#include <errno.h>
#include <time.h>

uint64_t clock_now_ns(void)
{
    struct timespec ts;

    /* Cannot fail for CLOCK_MONOTONIC with a valid pointer. */
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

uint64_t clock_thread_cpu_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/*
 * nanosleep() reports the time still to sleep when a signal interrupts it;
 * sleeping again for that remainder keeps the "at least us" promise
 * without reading the clock.
 */
void clock_sleep_us(uint32_t us)
{
    struct timespec req, rem;

    req.tv_sec = us / 1000000u;
    req.tv_nsec = (long)(us % 1000000u) * 1000L;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}
