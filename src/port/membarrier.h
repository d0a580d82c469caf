/*
 * membarrier.h: an asymmetric memory barrier.  A thread on a hot path
 * orders its store before a later load with a compiler barrier only; a
 * rare thread that must see that store calls membarrier_all(), which
 * makes every running thread of the process pass a full barrier before it
 * returns (Linux membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED).  So
 * either the hot thread's store was made visible by that barrier, or its
 * load came after it and sees whatever the rare thread stored before the
 * call, and whatever that store had waited for.
 */
#ifndef KEEL_PORT_MEMBARRIER_H
#define KEEL_PORT_MEMBARRIER_H

#include <stdbool.h>

/*
 * Registers the process for membarrier_all() (once; later calls return
 * the first one's answer).  False if the kernel offers no expedited
 * private barrier: callers must then do without it.
 */
bool membarrier_ready(void);

/* The barrier, once membarrier_ready() said true: true if it was made. */
bool membarrier_all(void);

#endif /* KEEL_PORT_MEMBARRIER_H */
