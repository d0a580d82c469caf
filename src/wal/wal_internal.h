/*
 * wal_internal.h: what the log's writing and reading halves share.
 */
#ifndef KEEL_WAL_WAL_INTERNAL_H
#define KEEL_WAL_WAL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "port/error.h"

/* The path of segment seg in waldir. */
void wal_seg_path(const char *waldir, uint64_t seg, char *out, size_t len);

/* Makes segment seg (zeroes, synced) unless it exists. */
int wal_seg_make(const char *waldir, uint64_t seg, kerr *err);

#endif /* KEEL_WAL_WAL_INTERNAL_H */
