/*
 * bench_db.c: temporary pgbench databases for the benchmarks.
 */
#include "bench_db.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "port/clock.h"
#include "tools/pgbench.h"

int bench_db_create(const char *who, const char *tag, uint32_t scale, char *dir,
                    size_t len)
{
    keel_error e = {0};
    const char *t = getenv("TMPDIR");
    uint64_t t0 = clock_now_ns();

    snprintf(dir, len, "%s/keel-%s-XXXXXX", t ? t : "/tmp", tag);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "%s: cannot create %s: %s\n", who, dir,
                strerror(errno));
        return -1;
    }
    fprintf(stderr, "creating a scale-%u pgbench database in %s\n", scale, dir);
    if (pgbench_init(dir, scale, 0, PGBENCH_PROGRESS_NONE, &e) != KEEL_OK) {
        fprintf(stderr, "%s: %s\n", who, e.msg);
        bench_dir_remove(dir);
        return -1;
    }
    fprintf(stderr, "  done in %.2f s\n", (double)(clock_now_ns() - t0) / 1e9);
    return 0;
}

void bench_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4200];

    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}
