/*
 * procarray.c: the process array in its two layouts (procarray.h), slot
 * attach and detach, and the scans that snapshots and the status oracle
 * make.  The protocol is in src/txn/README.md.
 */
#include "txn/procarray.h"

#include <assert.h>
#include <pthread.h>

struct procarray {
    /* Read by every scan, written only at attach/detach. */
    procarray_layout layout;
    uint32_t max_sessions;
    atomic_u32 high_water;         /* one past the highest slot in use */
    atomic_u32 *xids;              /* padded: the dense xid array */
    procarray_slot *slots;         /* padded: per-session lines */
    procarray_packed_slot *packed; /* packed: everything */

#ifdef KEEL_FAULT_INJECTION
    void (*scan_hook)(void *arg); /* tests: see procarray_set_scan_hook() */
    void *scan_hook_arg;
    uint32_t scan_hook_after;
#endif

    /* Attach and detach only; kept off the line scans read. */
    CACHE_ALIGNED pthread_mutex_t attach_lock;
};

int procarray_create(uint32_t max_sessions, procarray_layout layout,
                     procarray **out, kerr *err)
{
    procarray *pa;

    *out = NULL;
    if (max_sessions == 0 || max_sessions > PROCARRAY_MAX_SESSIONS)
        return kerr_set(err, KEEL_EINVAL,
                        "max_sessions must be between 1 and %u, not %u",
                        PROCARRAY_MAX_SESSIONS, max_sessions);
    if (layout != PROCARRAY_PADDED && layout != PROCARRAY_PACKED)
        return kerr_set(err, KEEL_EINVAL, "invalid process array layout %d",
                        (int)layout);
    pa = mem_alloc_aligned(sizeof(*pa));
    if (pa == NULL)
        goto nomem;
    pa->layout = layout;
    pa->max_sessions = max_sessions;
    atomic_store_relaxed(&pa->high_water, 0);
    if (layout == PROCARRAY_PADDED) {
        pa->xids = mem_alloc_aligned(sizeof(atomic_u32) * max_sessions);
        pa->slots = mem_alloc_aligned(sizeof(procarray_slot) * max_sessions);
        if (pa->xids == NULL || pa->slots == NULL)
            goto nomem;
        for (uint32_t i = 0; i < max_sessions; i++) {
            atomic_store_relaxed(&pa->xids[i], XID_INVALID);
            atomic_store_relaxed(&pa->slots[i].xmin, XID_INVALID);
        }
    } else {
        pa->packed =
            mem_alloc_aligned(sizeof(procarray_packed_slot) * max_sessions);
        if (pa->packed == NULL)
            goto nomem;
        for (uint32_t i = 0; i < max_sessions; i++) {
            atomic_store_relaxed(&pa->packed[i].xid, XID_INVALID);
            atomic_store_relaxed(&pa->packed[i].xmin, XID_INVALID);
        }
    }
    pthread_mutex_init(&pa->attach_lock, NULL);
    *out = pa;
    return KEEL_OK;

nomem:
    if (pa != NULL) {
        mem_free_aligned(pa->xids);
        mem_free_aligned(pa->slots);
        mem_free_aligned(pa->packed);
        mem_free_aligned(pa);
    }
    return kerr_set(err, KEEL_ENOMEM,
                    "out of memory for a process array of %u sessions",
                    max_sessions);
}

void procarray_destroy(procarray *pa)
{
    if (pa == NULL)
        return;
    assert(atomic_load_relaxed(&pa->high_water) == 0);
    pthread_mutex_destroy(&pa->attach_lock);
    mem_free_aligned(pa->xids);
    mem_free_aligned(pa->slots);
    mem_free_aligned(pa->packed);
    mem_free_aligned(pa);
}

procarray_layout procarray_get_layout(const procarray *pa)
{
    return pa->layout;
}

uint32_t procarray_max_sessions(const procarray *pa)
{
    return pa->max_sessions;
}

uint32_t procarray_high_water(const procarray *pa)
{
    return atomic_load_acquire(&pa->high_water);
}

static bool slot_in_use(const procarray *pa, uint32_t i)
{
    return pa->layout == PROCARRAY_PADDED ? pa->slots[i].in_use != 0
                                          : pa->packed[i].in_use != 0;
}

static void slot_mark(procarray *pa, uint32_t i, bool used)
{
    if (pa->layout == PROCARRAY_PADDED)
        pa->slots[i].in_use = used;
    else
        pa->packed[i].in_use = used;
}

static atomic_u32 *slot_xid(const procarray *pa, uint32_t i)
{
    return pa->layout == PROCARRAY_PADDED ? &pa->xids[i] : &pa->packed[i].xid;
}

static atomic_u32 *slot_xmin(const procarray *pa, uint32_t i)
{
    return pa->layout == PROCARRAY_PADDED ? &pa->slots[i].xmin
                                          : &pa->packed[i].xmin;
}

int procarray_attach(procarray *pa, uint32_t *slot, kerr *err)
{
    uint32_t hw, i;

    pthread_mutex_lock(&pa->attach_lock);
    hw = atomic_load_relaxed(&pa->high_water);
    for (i = 0; i < pa->max_sessions; i++)
        if (!slot_in_use(pa, i))
            break;
    if (i == pa->max_sessions) {
        pthread_mutex_unlock(&pa->attach_lock);
        return kerr_set(err, KEEL_EEXHAUSTED,
                        "too many sessions: all %u slots of the process "
                        "array are in use (max_sessions)",
                        pa->max_sessions);
    }
    slot_mark(pa, i, true);
    assert(atomic_load_relaxed(slot_xid(pa, i)) == XID_INVALID);
    /*
     * Raised before the session can publish anything: its xid store comes
     * later in its own program order, so whoever sees that xid with an
     * acquire load of something published after it also sees this.
     */
    if (i >= hw)
        atomic_store_release(&pa->high_water, i + 1);
    pthread_mutex_unlock(&pa->attach_lock);
    *slot = i;
    return KEEL_OK;
}

void procarray_detach(procarray *pa, uint32_t slot)
{
    uint32_t hw;

    assert(slot < pa->max_sessions);
    assert(atomic_load_relaxed(slot_xid(pa, slot)) == XID_INVALID);
    atomic_store_relaxed(slot_xmin(pa, slot), XID_INVALID);
    pthread_mutex_lock(&pa->attach_lock);
    assert(slot_in_use(pa, slot));
    slot_mark(pa, slot, false);
    /* Lower the mark past free slots: their xids are all 0, so a scan that
     * still uses the old mark only reads zeroes. */
    hw = atomic_load_relaxed(&pa->high_water);
    while (hw > 0 && !slot_in_use(pa, hw - 1))
        hw--;
    atomic_store_release(&pa->high_water, hw);
    pthread_mutex_unlock(&pa->attach_lock);
}

void procarray_set_xid(procarray *pa, uint32_t slot, xid_t xid)
{
    assert(slot < pa->max_sessions);
    atomic_store_release(slot_xid(pa, slot), xid);
}

xid_t procarray_get_xid(const procarray *pa, uint32_t slot)
{
    assert(slot < pa->max_sessions);
    return atomic_load_acquire(slot_xid(pa, slot));
}

void procarray_set_xmin(procarray *pa, uint32_t slot, xid_t xmin)
{
    assert(slot < pa->max_sessions);
    atomic_store_relaxed(slot_xmin(pa, slot), xmin);
}

xid_t procarray_get_xmin(const procarray *pa, uint32_t slot)
{
    assert(slot < pa->max_sessions);
    return atomic_load_relaxed(slot_xmin(pa, slot));
}

/*
 * Collects slots [from, to) into out from out[n] on; returns the new count.
 * The scans branch on the layout once, outside the loop, so that each
 * iteration is one load and two compares.
 */
static uint32_t collect_range(const procarray *pa, uint32_t from, uint32_t to,
                              xid_t xmax, uint32_t skip_slot, xid_t *out,
                              uint32_t n)
{
    if (pa->layout == PROCARRAY_PADDED) {
        const atomic_u32 *xids = pa->xids;

        for (uint32_t i = from; i < to; i++) {
            xid_t x = atomic_load_acquire(&xids[i]);

            if (x != XID_INVALID && x < xmax && i != skip_slot)
                out[n++] = x;
        }
    } else {
        const procarray_packed_slot *ps = pa->packed;

        for (uint32_t i = from; i < to; i++) {
            xid_t x = atomic_load_acquire(&ps[i].xid);

            if (x != XID_INVALID && x < xmax && i != skip_slot)
                out[n++] = x;
        }
    }
    return n;
}

xid_t procarray_oldest(const procarray *pa, xid_t bound, bool xids)
{
    uint32_t hw = atomic_load_acquire(&pa->high_water);
    xid_t h = bound;

    for (uint32_t i = 0; i < hw; i++) {
        xid_t m = atomic_load_relaxed(slot_xmin(pa, i));
        xid_t x = xids ? atomic_load_acquire(slot_xid(pa, i)) : XID_INVALID;

        if (m != XID_INVALID && m < h)
            h = m;
        if (x != XID_INVALID && x < h)
            h = x;
    }
    return h;
}

uint32_t procarray_collect(const procarray *pa, xid_t xmax, uint32_t skip_slot,
                           xid_t *out)
{
    uint32_t hw = atomic_load_acquire(&pa->high_water);

#ifdef KEEL_FAULT_INJECTION
    if (pa->scan_hook != NULL && pa->scan_hook_after < hw) {
        uint32_t mid = pa->scan_hook_after + 1;
        uint32_t n = collect_range(pa, 0, mid, xmax, skip_slot, out, 0);

        pa->scan_hook(pa->scan_hook_arg);
        return collect_range(pa, mid, hw, xmax, skip_slot, out, n);
    }
#endif
    return collect_range(pa, 0, hw, xmax, skip_slot, out, 0);
}

#ifdef KEEL_FAULT_INJECTION
void procarray_set_scan_hook(procarray *pa, uint32_t after,
                             void (*fn)(void *arg), void *arg)
{
    pa->scan_hook = fn;
    pa->scan_hook_arg = arg;
    pa->scan_hook_after = after;
}
#endif

bool procarray_contains(const procarray *pa, xid_t xid)
{
    uint32_t hw = atomic_load_acquire(&pa->high_water);

    if (xid == XID_INVALID)
        return false;
    if (pa->layout == PROCARRAY_PADDED) {
        for (uint32_t i = 0; i < hw; i++)
            if (atomic_load_acquire(&pa->xids[i]) == xid)
                return true;
    } else {
        for (uint32_t i = 0; i < hw; i++)
            if (atomic_load_acquire(&pa->packed[i].xid) == xid)
                return true;
    }
    return false;
}
