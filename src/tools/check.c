/*
 * check.c: `keel check DIR`, which runs keel_check() (keel.h) and prints
 * what it finds, one line each, notes prefixed "note: ".
 */
#include <stdio.h>

#include "keel/keel.h"
#include "tools/tools.h"

static void print_problem(void *ctx, bool is_note, const char *line)
{
    (void)ctx;
    printf("%s%s\n", is_note ? "note: " : "", line);
}

int tool_check_main(int argc, char **argv)
{
    keel_error e = {0};
    uint64_t problems = 0, notes = 0;
    char also[64] = "";
    keel_status rc;

    if (argc != 1 || argv[0][0] == '-' || argv[0][0] == '\0') {
        fprintf(stderr, "usage: keel check DIR\n");
        return 2;
    }
    rc = keel_check(argv[0], print_problem, NULL, &problems, &notes, &e);
    if (rc != KEEL_OK) {
        fprintf(stderr, "keel check: %s\n", e.msg);
        return 1;
    }
    if (notes > 0)
        snprintf(also, sizeof(also), ", %llu note(s)",
                 (unsigned long long)notes);
    if (problems > 0) {
        fprintf(stderr, "keel check: %s: %llu problem(s)%s\n", argv[0],
                (unsigned long long)problems, also);
        return 1;
    }
    fprintf(stderr, "keel check: %s: no problems%s\n", argv[0], also);
    return 0;
}
