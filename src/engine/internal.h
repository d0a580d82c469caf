/*
 * internal.h: what keel's own benchmarks and tests reach beyond keel.h.
 *
 * Experiments need knobs and counters that an embedding application has
 * no use for and that keel must stay free to change: the process array's
 * layout (the 2016 packed one exists only to be measured against), and
 * per-session counts of shared-structure work.  They live here, outside
 * the installed header, compiled into the library but not exported from
 * it.
 */
#ifndef KEEL_ENGINE_INTERNAL_H
#define KEEL_ENGINE_INTERNAL_H

#include <stdint.h>

#include "keel/keel.h"
#include "txn/procarray.h"

/* keel_db_open() with the process array laid out as `layout`
 * (PROCARRAY_PADDED, which keel_db_open() uses, or PROCARRAY_PACKED; see
 * src/txn/README.md).  KEEL_EINVAL for another value. */
keel_status engine_db_open_layout(const keel_db_options *opts,
                                  procarray_layout layout, keel_db **out,
                                  keel_error *err);

/* What a session did since it began, in the shared structures. */
typedef struct engine_session_stats {
    uint64_t buffer_reads;     /* pages read through the buffer pool, one
                                * pin each (a hit or a read from disk) */
    uint64_t snapshots_taken;  /* snapshots made by reading every
                                * session's slot of the process array */
    uint64_t snapshots_reused; /* snapshots kept from the session's last
                                * one: no transaction with an xid ended */
    uint64_t index_dir_moves;  /* moves right, one page read each, from
                                * the leaf a session's directory of an
                                * index named (src/access/README.md) */
} engine_session_stats;

/* The session's counts (by its thread, between its calls). */
void engine_session_stats_get(const keel_session *s,
                              engine_session_stats *out);

#endif /* KEEL_ENGINE_INTERNAL_H */
