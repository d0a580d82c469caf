/*
 * fault.c: process-wide I/O fault injection state (see fault.h).
 *
 * Built only with KEEL_FAULT_INJECTION; otherwise fault.h supplies a
 * constant fault_next() and this file compiles to nothing.
 *
 * Each op has one 64-bit state word holding the calls still to skip (high
 * half) and the faults still to deliver (low half).  fault_next() moves it
 * on with a compare-and-swap, so however many threads race through it,
 * exactly `skip` calls pass and exactly `count` calls fail.  The kind and
 * relation filter are written before the state word is published with a
 * release store, so a thread that sees an armed state also sees the kind
 * and filter it was armed with.  Re-arming an op while other threads are in
 * fault_next() for it is allowed but each racing call may see either the
 * old or the new arming; tests arm from one thread between operations.
 */
#ifdef KEEL_FAULT_INJECTION

#include "storage/fault.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "port/atomics.h"

#define STATE(skip, count) (((uint64_t)(skip) << 32) | (uint64_t)(count))
#define STATE_SKIP(s)      ((uint32_t)((s) >> 32))
#define STATE_COUNT(s)     ((uint32_t)(s))

typedef struct fault_slot {
    atomic_u64 state;     /* STATE(skip, count); 0 when disarmed */
    atomic_u32 kind;      /* fault_kind to deliver */
    atomic_u32 relnumber; /* only calls on this relation count; 0: all */
    atomic_u32 delivered; /* faults delivered since the last arming */
} fault_slot;

static fault_slot fault_slots[FAULT_OP_COUNT];

void fault_arm(fault_op op, fault_kind kind, uint32_t skip, uint32_t count,
               uint32_t relnumber)
{
    fault_slot *f = &fault_slots[op];

    /* Disarm first so that no call pairs the new kind with the old count. */
    atomic_store_release(&f->state, 0);
    atomic_store_relaxed(&f->kind, (uint32_t)kind);
    atomic_store_relaxed(&f->relnumber, relnumber);
    atomic_store_relaxed(&f->delivered, 0);
    if (kind != FAULT_NONE && count > 0)
        atomic_store_release(&f->state, STATE(skip, count));
}

void fault_disarm_all(void)
{
    for (int op = 0; op < FAULT_OP_COUNT; op++)
        atomic_store_release(&fault_slots[op].state, 0);
}

fault_kind fault_next(fault_op op, uint32_t relnumber)
{
    fault_slot *f = &fault_slots[op];
    uint64_t s = atomic_load_acquire(&f->state);
    uint32_t filter;
    uint64_t next;
    bool fail;

    if (s == 0)
        return FAULT_NONE;

    /* Calls on other relations neither fail nor use up the skip count. */
    filter = atomic_load_relaxed(&f->relnumber);
    if (filter != 0 && filter != relnumber)
        return FAULT_NONE;

    do {
        if (s == 0)
            return FAULT_NONE;
        if (STATE_SKIP(s) > 0) {
            next = STATE(STATE_SKIP(s) - 1, STATE_COUNT(s));
            fail = false;
        } else {
            next = STATE(0, STATE_COUNT(s) - 1);
            fail = true;
        }
    } while (!atomic_compare_exchange_weak_explicit(
        &f->state, &s, next, memory_order_acq_rel, memory_order_acquire));

    if (!fail)
        return FAULT_NONE;
    atomic_fetch_add_explicit(&f->delivered, 1, memory_order_relaxed);
    return (fault_kind)atomic_load_relaxed(&f->kind);
}

uint32_t fault_delivered(fault_op op)
{
    return atomic_load_relaxed(&fault_slots[op].delivered);
}

static struct {
    _Atomic(fault_point_fn) fn;
    void *_Atomic ctx;
} fault_points[FAULT_POINT_COUNT];

void fault_point_set(fault_point_id p, fault_point_fn fn, void *ctx)
{
    atomic_store_explicit(&fault_points[p].ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&fault_points[p].fn, fn, memory_order_release);
}

void fault_point(fault_point_id p, uint32_t relnumber, uint32_t blk)
{
    fault_point_fn fn =
        atomic_load_explicit(&fault_points[p].fn, memory_order_acquire);

    if (fn != NULL)
        fn(atomic_load_explicit(&fault_points[p].ctx, memory_order_relaxed),
           relnumber, blk);
}

#else

/* ISO C forbids an empty translation unit. */
typedef int fault_injection_disabled;

#endif /* KEEL_FAULT_INJECTION */
