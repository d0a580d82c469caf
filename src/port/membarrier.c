/*
 * membarrier.c: membarrier(2) behind membarrier.h.
 */
#include "port/membarrier.h"

#include <pthread.h>
#include <unistd.h>

#if defined(__linux__) && defined(__has_include)
#if __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#define KEEL_HAVE_MEMBARRIER 1
#endif
#endif

static pthread_once_t membarrier_once = PTHREAD_ONCE_INIT;
static bool membarrier_ok;

static void membarrier_register(void)
{
#if defined(KEEL_HAVE_MEMBARRIER) && defined(__NR_membarrier)
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

    membarrier_ok =
        cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
        syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0,
                0) == 0;
#endif
}

bool membarrier_ready(void)
{
    pthread_once(&membarrier_once, membarrier_register);
    return membarrier_ok;
}

bool membarrier_all(void)
{
#if defined(KEEL_HAVE_MEMBARRIER) && defined(__NR_membarrier)
    return membarrier_ok &&
           syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) ==
               0;
#else
    return false;
#endif
}
