/*
 * error.h: error contexts.
 *
 * Library functions report failure by returning a keel_status and filling
 * a caller-supplied kerr with the code and a one-line message.  Nothing in
 * the library prints, exits or aborts on a runtime error; assert() guards
 * internal invariants only.
 */
#ifndef KEEL_PORT_ERROR_H
#define KEEL_PORT_ERROR_H

#include "keel/keel.h"

#define KERR_MSG_MAX 256

typedef struct kerr {
    int code;               /* KEEL_OK when no error has been recorded */
    char msg[KERR_MSG_MAX]; /* NUL-terminated message */
} kerr;

/* Records code and a printf-style message in e (which may be NULL) and
 * returns code, so that callers can write "return kerr_set(e, ...)". */
int kerr_set(kerr *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* kerr_set() for a format whose only conversions are %u and %% (no other
 * is supported), without vsnprintf's cost: for errors a hot loop expects
 * and passes over, such as a row version the snapshot does not see. */
int kerr_set_u(kerr *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Resets e to "no error". */
void kerr_clear(kerr *e);

/* Maps an errno value from a failed system call to a keel_status. */
int kerr_from_errno(int errnum);

#endif /* KEEL_PORT_ERROR_H */
