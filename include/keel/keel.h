/*
 * keel.h: the public face of keel, a PostgreSQL-style database core.
 *
 * Every function in keel's public API returns one of the status codes
 * below; KEEL_OK is zero, every failure is positive.  A failing call also
 * leaves a one-line message naming what was wrong (the file and block of a
 * corrupt page, the relation that does not exist, ...) in the error
 * context the caller passed or in its session.
 */
#ifndef KEEL_KEEL_H
#define KEEL_KEEL_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum keel_status {
    KEEL_OK = 0,
    KEEL_EINVAL,     /* an argument is out of range or malformed */
    KEEL_ENOMEM,     /* memory could not be allocated */
    KEEL_EIO,        /* the operating system reported an I/O error */
    KEEL_ENOSPC,     /* the disk is full (or a write came back short) */
    KEEL_ECORRUPT,   /* data on disk failed verification (checksum, header) */
    KEEL_ENOENT,     /* a file or relation does not exist */
    KEEL_EEXIST,     /* a file or relation already exists */
    KEEL_EEOF,       /* a block past the end of its relation was asked for */
    KEEL_EEXHAUSTED, /* every buffer in the pool is pinned */
    KEEL_EBUSY,      /* the object is in use (pinned) and cannot be changed */
    KEEL_EVERSION,   /* a file was written by an incompatible version */
    KEEL_ESERIALIZE, /* a concurrent transaction changed the row first */
    KEEL_EUNIQUE,    /* the key already exists in a unique index */
    KEEL_ETYPE,      /* a value does not match its column's type */
    KEEL_ETOOBIG,    /* a value or row does not fit (name > 63 bytes, ...) */
    KEEL_STATUS_COUNT
} keel_status;

/* A short, constant, lower-case name for a status ("corrupt data"). */
const char *keel_status_str(int status);

#define KEEL_VERSION_STRING "0.1.0"

/*
 * Column types.  Fixed-width types are stored aligned to their size; name
 * is a fixed 64-byte field holding at most 63 bytes, NUL-padded (as
 * PostgreSQL's name); char(n) is blank-padded to exactly n bytes; text is
 * variable length, up to what fits on a page.
 */
typedef enum keel_type {
    KEEL_INT2 = 1,
    KEEL_INT4,
    KEEL_INT8,
    KEEL_OID,
    KEEL_BOOL,
    KEEL_FLOAT8,
    KEEL_NAME,
    KEEL_CHAR,
    KEEL_TEXT,
} keel_type;

#define KEEL_NAME_LEN 64 /* bytes of a name field, the NUL included */

/*
 * One value of a column, as passed into and out of keel.  Strings (name,
 * char, text) are not NUL-terminated: ptr and len give their bytes.  Values
 * returned by keel point into memory that stays valid as documented by the
 * call that returned them.
 */
typedef struct keel_value {
    bool isnull;
    union {
        int16_t i2;
        int32_t i4;
        int64_t i8;
        uint32_t oid;
        bool b;
        double f8;
        struct {
            const char *ptr;
            uint32_t len;
        } s;
    } v;
} keel_value;

#ifdef __cplusplus
}
#endif
#endif /* KEEL_KEEL_H */
