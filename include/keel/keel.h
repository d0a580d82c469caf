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
    KEEL_STATUS_COUNT
} keel_status;

/* A short, constant, lower-case name for a status ("corrupt data"). */
const char *keel_status_str(int status);

#define KEEL_VERSION_STRING "0.1.0"

#ifdef __cplusplus
}
#endif
#endif /* KEEL_KEEL_H */
