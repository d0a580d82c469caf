/*
 * args.c: the command-line scanner of the `keel bench` subcommands (see
 * args.h).
 */
#include "args.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_args_parse(const char *who, int argc, char **argv, bool *quick,
                     const char **dir, bench_option_fn on_option, void *ctx)
{
    bench_args a = {who, NULL, NULL};
    bool have_dir = false;

    for (int i = 0; i < argc; i++) {
        a.name = argv[i];
        if (strcmp(a.name, "--quick") == 0) {
            if (quick == NULL)
                return bench_args_unknown(&a);
            *quick = true;
        } else if (a.name[0] != '-' && dir != NULL) {
            if (have_dir) {
                fprintf(stderr,
                        "%s: more than one DIR ('%s'); options start "
                        "with --\n",
                        who, a.name);
                return -1;
            }
            have_dir = true;
            *dir = a.name;
        } else if (a.name[0] != '-' || i + 1 == argc) {
            fprintf(stderr, "%s: unknown or incomplete option '%s'\n", who,
                    a.name);
            return -1;
        } else {
            a.value = argv[++i];
            if (on_option(&a, ctx) != 0)
                return -1;
        }
    }
    return 0;
}

int bench_args_unknown(const bench_args *a)
{
    fprintf(stderr, "%s: unknown option '%s'\n", a->who, a->name);
    return -1;
}

/* The value as a whole unsigned decimal number; false if it is not one. */
static bool whole_number(const char *v, uint64_t *out)
{
    unsigned long long x;
    char *end;

    if (v[0] < '0' || v[0] > '9')
        return false;
    errno = 0;
    x = strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = x;
    return true;
}

int bench_args_u64(const bench_args *a, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x;

    if (!whole_number(a->value, &x) || x < lo || x > hi) {
        fprintf(stderr,
                "%s: option %s must be a number in %llu..%llu, not "
                "'%s'\n",
                a->who, a->name, (unsigned long long)lo, (unsigned long long)hi,
                a->value);
        return -1;
    }
    *out = x;
    return 0;
}

int bench_args_u32(const bench_args *a, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t x;

    if (bench_args_u64(a, lo, hi, &x) != 0)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

int bench_args_double(const bench_args *a, double lo, double hi, double *out)
{
    char *end;
    double x;

    errno = 0;
    x = strtod(a->value, &end);
    if (errno != 0 || end == a->value || *end != '\0' || !(x >= lo) ||
        !(x <= hi)) {
        fprintf(stderr, "%s: option %s must be a number in %g..%g, not '%s'\n",
                a->who, a->name, lo, hi, a->value);
        return -1;
    }
    *out = x;
    return 0;
}

int bench_args_u32_list(const bench_args *a, uint32_t lo, uint32_t hi,
                        uint32_t *out, int max)
{
    const char *p = a->value;
    int n = 0;

    for (;;) {
        char *end = (char *)p;
        unsigned long x = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
        if (end == p || (*end != ',' && *end != '\0') || x < lo || x > hi ||
            n == max) {
            fprintf(stderr,
                    "%s: option %s takes up to %d numbers in %u..%u, "
                    "comma-separated, not '%s'\n",
                    a->who, a->name, max, lo, hi, a->value);
            return -1;
        }
        out[n++] = (uint32_t)x;
        if (*end == '\0')
            return n;
        p = end + 1;
    }
}

int bench_args_out_file(const bench_args *a, const char **out)
{
    int fd;
    bool made;

    if (strncmp(a->value, "--", 2) == 0) {
        fprintf(stderr, "%s: %s needs a file name, not '%s'\n", a->who, a->name,
                a->value);
        return -1;
    }
    fd = open(a->value, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    made = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(a->value, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: cannot write %s: %s\n", a->who, a->name,
                a->value, strerror(errno));
        return -1;
    }
    close(fd);
    if (made)
        unlink(a->value);
    *out = a->value;
    return 0;
}
