/*
 * futex.c: futex(2) wait and wake on a process-private 32-bit word.
 *
 * glibc has no wrapper, so these call the system call directly.  The
 * _PRIVATE operations let the kernel key the wait queue on the virtual
 * address alone, skipping the shared-mapping lookup; keel's words live in
 * one process.
 */
#include "port/futex.h"

#include <assert.h>
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Returns when woken, when *addr != expected on entry (EAGAIN), or when a
 * signal arrives (EINTR); the caller re-checks its condition in every case,
 * so none of these is an error.  Other failures (EFAULT, EINVAL) mean a bad
 * address and are caught by the assertion in debug builds.
 */
void futex_wait(atomic_u32 *addr, uint32_t expected)
{
    long rc = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected,
                      NULL, NULL, 0);

    assert(rc == 0 || errno == EAGAIN || errno == EINTR);
    (void)rc;
}

void futex_wait_timeout(atomic_u32 *addr, uint32_t expected,
                        uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u),
                          (long)(timeout_ns % 1000000000u)};
    long rc = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected,
                      &ts, NULL, 0);

    assert(rc == 0 || errno == EAGAIN || errno == EINTR || errno == ETIMEDOUT);
    (void)rc;
}

int futex_wake(atomic_u32 *addr, int n)
{
    long rc;

    assert(n > 0);
    rc = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL,
                 0);
    assert(rc >= 0);
    return rc < 0 ? 0 : (int)rc;
}
