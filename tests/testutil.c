/*
 * testutil.c: helpers shared by keel's tests.
 */
#include "testutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/keel-test-XXXXXX", base ? base : "/tmp");
    assert_non_null(mkdtemp(path));
    return path;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void tu_rmdir(const char *dir)
{
    if (dir != NULL)
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

double tu_stress_seconds(double dflt)
{
    const char *s = getenv("KEEL_STRESS_SECONDS");
    if (s != NULL && atof(s) > 0)
        return atof(s);
    return dflt;
}

void tu_flip_bit(const char *path, long offset, int bit)
{
    int fd = open(path, O_RDWR);
    unsigned char b;
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &b, 1, offset), 1);
    b ^= (unsigned char)(1u << bit);
    assert_int_equal(pwrite(fd, &b, 1, offset), 1);
    close(fd);
}
