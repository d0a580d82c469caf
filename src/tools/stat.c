/*
 * stat.c: `keel stat DIR`: the relations of a database, with their files'
 * sizes, as a table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/page.h"
#include "check/dbinfo.h"
#include "tools/tools.h"

int tool_stat_main(int argc, char **argv)
{
    keel_db_options o;
    keel_db *db = NULL;
    keel_session *s = NULL;
    keel_error e = {0};
    dbinfo_rel *r = NULL;
    size_t n = 0;
    uint64_t total = 0;
    int rc;

    if (argc != 1 || argv[0][0] == '-' || argv[0][0] == '\0') {
        fprintf(stderr, "usage: keel stat DIR\n");
        return 2;
    }
    keel_db_options_init(&o);
    o.dir = argv[0];
    o.pool_mb = 16;
    o.read_only = true;
    rc = keel_db_open(&o, &db, &e);
    if (rc != KEEL_OK) {
        fprintf(stderr, "keel stat: %s\n", e.msg);
        return 1;
    }
    rc = keel_session_begin(db, &s, &e);
    if (rc == KEEL_OK) {
        rc = dbinfo_relations(s, &r, &n, NULL);
        if (rc != KEEL_OK)
            snprintf(e.msg, sizeof(e.msg), "%s", keel_session_error(s));
        keel_session_end(s);
    }
    if (rc != KEEL_OK)
        fprintf(stderr, "keel stat: %s\n", e.msg);
    if (keel_db_close(db, &e) != KEEL_OK && rc == KEEL_OK) {
        fprintf(stderr, "keel stat: %s\n", e.msg);
        rc = e.code;
    }
    if (rc != KEEL_OK) {
        free(r);
        return 1;
    }
    printf("%-14s %-26s %-6s %10s %10s %14s\n", "schema", "name", "kind",
           "relnumber", "blocks", "bytes");
    for (size_t i = 0; i < n; i++) {
        uint64_t bytes = (uint64_t)r[i].blocks * BLOCK_SIZE;
        total += bytes;
        printf("%-14s %-26s %-6s %10u %10u %14llu%s%s%s\n", r[i].schema,
               r[i].name, dbinfo_kind_name(r[i].kind), r[i].relnumber,
               r[i].blocks, (unsigned long long)bytes,
               r[i].missing      ? "  (file missing)"
               : r[i].unreadable ? "  ("
                                 : "",
               r[i].unreadable ? r[i].why : "", r[i].unreadable ? ")" : "");
    }
    printf("%zu relations, %llu bytes\n", n, (unsigned long long)total);
    free(r);
    return 0;
}
