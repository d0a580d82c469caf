/*
 * error.c: error contexts and status names.
 */
#include "port/error.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[KEEL_STATUS_COUNT] = {
    [KEEL_OK] = "ok",
    [KEEL_EINVAL] = "invalid argument",
    [KEEL_ENOMEM] = "out of memory",
    [KEEL_EIO] = "I/O error",
    [KEEL_ENOSPC] = "no space left on device",
    [KEEL_ECORRUPT] = "corrupt data",
    [KEEL_ENOENT] = "does not exist",
    [KEEL_EEXIST] = "already exists",
    [KEEL_EEOF] = "beyond end of relation",
    [KEEL_EEXHAUSTED] = "exhausted (buffers, sessions or ids)",
    [KEEL_EBUSY] = "in use",
    [KEEL_EVERSION] = "incompatible version",
    [KEEL_ESERIALIZE] = "could not serialize access",
    [KEEL_EUNIQUE] = "duplicate key",
    [KEEL_ETYPE] = "wrong type",
    [KEEL_ETOOBIG] = "too big",
    [KEEL_EREADONLY] = "read-only database",
    [KEEL_ELOCKTIMEOUT] = "lock not available",
    [KEEL_EDEADLOCK] = "deadlock detected",
    [KEEL_ECHANGED] = "row changed since the snapshot",
};

const char *keel_status_str(keel_status status)
{
    int i = (int)status;

    if (i < 0 || i >= KEEL_STATUS_COUNT)
        return "unknown status";
    return status_names[i];
}

int kerr_set(kerr *e, int code, const char *fmt, ...)
{
    if (e != NULL) {
        va_list ap;
        e->code = code;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

int kerr_set_u(kerr *e, int code, const char *fmt, ...)
{
    const size_t cap = sizeof(e->msg) - 1;
    const char *p = fmt;
    va_list ap;
    size_t n = 0;

    if (e == NULL)
        return code;
    e->code = code;
    va_start(ap, fmt);
    while (n < cap) {
        const char *pct = strchr(p, '%');
        size_t run = pct != NULL ? (size_t)(pct - p) : strlen(p);
        char digits[10];
        unsigned int v;
        int d = 0;

        /* The text up to the next conversion. */
        if (run > cap - n)
            run = cap - n;
        memcpy(e->msg + n, p, run);
        n += run;
        if (pct == NULL || n == cap)
            break;
        /* Nothing else is supported (the format attribute checks the %u
         * arguments' types, not that there are no others). */
        assert(pct[1] == 'u' || pct[1] == '%');
        if (pct[1] != 'u') {
            /* "%%" is one '%' (anything else would stand as it is). */
            e->msg[n++] = '%';
            p = pct + (pct[1] == '%' ? 2 : 1);
            continue;
        }
        p = pct + 2;
        v = va_arg(ap, unsigned int);
        do
            digits[d++] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        while (d > 0 && n < cap)
            e->msg[n++] = digits[--d];
    }
    va_end(ap);
    e->msg[n] = '\0';
    return code;
}

void kerr_clear(kerr *e)
{
    if (e != NULL) {
        e->code = KEEL_OK;
        e->msg[0] = '\0';
    }
}

int kerr_from_errno(int errnum)
{
    switch (errnum) {
    case 0:
        return KEEL_OK;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return KEEL_ENOSPC;
    case ENOENT:
        return KEEL_ENOENT;
    case EEXIST:
        return KEEL_EEXIST;
    case ENOMEM:
        return KEEL_ENOMEM;
    case EINVAL:
        return KEEL_EINVAL;
    default:
        return KEEL_EIO;
    }
}
