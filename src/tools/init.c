/*
 * init.c: `keel init DIR [--scale N]`: creates a database and, for N > 0,
 * the pgbench tables at scale N (pgbench.h), then closes it cleanly, so
 * that everything is fsynced before success is reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keel/keel.h"
#include "port/clock.h"
#include "tools/pgbench.h"
#include "tools/tools.h"

static void usage(void)
{
    fprintf(stderr, "usage: keel init DIR [--scale N]\n");
}

/* Parses a whole decimal number in [0, max]; false if it is not one. */
static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (s == NULL || *s < '0' || *s > '9') /* strtoul takes " +1" too */
        return false;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

int tool_init_main(int argc, char **argv)
{
    const char *dir = NULL;
    uint32_t scale = 0;
    keel_error e = {0};
    uint64_t t0 = clock_now_ns();
    pgbench_progress progress;
    int rc;

    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--scale") == 0) {
            if (!parse_u32(i + 1 < argc ? argv[i + 1] : NULL, PGBENCH_MAX_SCALE,
                           &scale)) {
                fprintf(stderr, "keel init: --scale needs a number 0..%d\n",
                        PGBENCH_MAX_SCALE);
                return 2;
            }
            i++;
        } else if (argv[i][0] == '-' || dir != NULL) {
            fprintf(stderr, "keel init: unknown option or argument '%s'\n",
                    argv[i]);
            usage();
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (dir == NULL || *dir == '\0') {
        fprintf(stderr, "keel init: no database directory given\n");
        usage();
        return 2;
    }
    progress =
        isatty(STDERR_FILENO) ? PGBENCH_PROGRESS_BAR : PGBENCH_PROGRESS_LINES;

    rc = pgbench_init(dir, scale, 0, progress, &e);
    if (rc != KEEL_OK) {
        fprintf(stderr, "keel init: %s\n", e.msg);
        return 1;
    }
    printf("keel init: created %s at scale %u in %.3f s\n", dir, scale,
           (double)(clock_now_ns() - t0) / 1e9);
    return 0;
}
