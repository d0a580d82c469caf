/*
 * keel.c: the `keel` command.
 *
 *   keel bench pin [options]    buffer-pool hot-path benchmark
 *   keel version
 *
 * Errors print one line on stderr and exit non-zero (2 for bad usage).
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "keel/keel.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: keel <command> [args]\n"
               "commands:\n"
               "  bench pin [--pool-mb N] [--threads N] [--rounds N]\n"
               "            [--dir DIR] [--json FILE] [--quick]\n"
               "      measure the buffer pool's hot paths\n"
               "  version\n"
               "      print keel's version\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "version") == 0) {
        printf("keel %s\n", KEEL_VERSION_STRING);
        return 0;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "bench") == 0) {
        if (argc < 3) {
            fprintf(stderr, "keel bench: which benchmark? (pin)\n");
            return 2;
        }
        if (strcmp(argv[2], "pin") == 0)
            return bench_pin_main(argc - 3, argv + 3);
        fprintf(stderr, "keel bench: unknown benchmark '%s' (known: pin)\n",
                argv[2]);
        return 2;
    }
    fprintf(stderr, "keel: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
