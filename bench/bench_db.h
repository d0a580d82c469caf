/*
 * bench_db.h: the pgbench databases the whole-engine benchmarks run on:
 * created in a temporary directory when the caller names none, removed
 * afterwards.
 */
#ifndef KEEL_BENCH_BENCH_DB_H
#define KEEL_BENCH_BENCH_DB_H

#include <stddef.h>
#include <stdint.h>

/*
 * Creates a directory "$TMPDIR/keel-<tag>-XXXXXX" (TMPDIR defaulting to
 * /tmp) holding a scale-`scale` pgbench database (keel init's
 * pgbench_init()), its name in dir (len bytes).  Progress and errors go to
 * stderr, prefixed by `who`.  Returns 0, or -1 with nothing left behind.
 */
int bench_db_create(const char *who, const char *tag, uint32_t scale, char *dir,
                    size_t len);

/* Removes a directory and the files in it (no subdirectories); a missing
 * directory is fine. */
void bench_dir_remove(const char *dir);

#endif /* KEEL_BENCH_BENCH_DB_H */
