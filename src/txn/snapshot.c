/*
 * snapshot.c: asking a snapshot about a transaction id.
 */
#include "txn/snapshot.h"

bool snapshot_running(const snapshot *s, xid_t xid)
{
    uint32_t lo = 0, hi = s->nxip;

    if (xid == s->own_xid)
        return false;
    if (xid >= s->xmax)
        return true;
    if (xid < s->xmin)
        return false;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->xip[mid] < xid)
            lo = mid + 1;
        else if (s->xip[mid] > xid)
            hi = mid;
        else
            return true;
    }
    return false;
}
