/*
 * pgbench.h: the pgbench tables, created and loaded as `pgbench -i` would,
 * for `keel init` and the benchmarks that need them.
 */
#ifndef KEEL_TOOLS_PGBENCH_H
#define KEEL_TOOLS_PGBENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "keel/keel.h"

/* Rows per unit of scale, as pgbench has them. */
#define PGBENCH_BRANCHES 1
#define PGBENCH_TELLERS  10
#define PGBENCH_ACCOUNTS 100000

/* Largest scale keel init accepts (aid stays an int4). */
#define PGBENCH_MAX_SCALE 20000

/* How progress is shown on stderr while loading. */
typedef enum pgbench_progress {
    PGBENCH_PROGRESS_NONE = 0,
    PGBENCH_PROGRESS_LINES, /* a plain line per step */
    PGBENCH_PROGRESS_BAR,   /* a bar redrawn in place (a terminal) */
} pgbench_progress;

/* The columns of pgbench table `table` ("pgbench_branches", ...,
 * "pgbench_history"), *ncols of them; NULL (and 0) for another name. */
const keel_column *pgbench_columns(const char *table, uint16_t *ncols);

/*
 * Creates the four pgbench tables in the public schema of the open
 * database, loads scale branches, 10 * scale tellers and 100000 * scale
 * accounts (keel_load_table(): frozen rows, primary keys built at the end)
 * and an empty history, and analyzes them.  Does not checkpoint.  Returns
 * a keel_status; the message is in the session.
 */
int pgbench_load(keel_session *s, uint32_t scale, pgbench_progress progress);

/*
 * Creates a database in dir (keel_db_create(): KEEL_EEXIST if dir holds
 * one already) with pool_mb MiB of buffer pool (0: the default) and, for
 * scale > 0, the pgbench tables (pgbench_load()), then closes it cleanly:
 * on success everything is written and fsynced.  Errors in err.
 */
int pgbench_init(const char *dir, uint32_t scale, uint32_t pool_mb,
                 pgbench_progress progress, keel_error *err);

#endif /* KEEL_TOOLS_PGBENCH_H */
