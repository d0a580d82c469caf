/*
 * keel.c: the `keel` command.
 *
 *   keel init DIR [--scale N]   create a database (with pgbench tables)
 *   keel stat DIR               list a database's relations and sizes
 *   keel check DIR              verify pages, B-trees and indexes
 *   keel wal DIR [--stats]      print the write-ahead log
 *   keel serve DIR [options]    serve it over PostgreSQL's protocol
 *   keel bench pin [options]    buffer-pool hot-path benchmark
 *   keel bench lookup [DIR] [options]  primary-key lookup benchmark
 *   keel bench catcache [DIR] [options]  catalog cache benchmark
 *   keel bench select [DIR] [options]    select-only transactions
 *   keel bench bloat [DIR] [options]     catalog cache under new names
 *   keel bench tpcb [DIR] [options]      read-write transactions
 *   keel bench compare [options]         pgbench: keel serve and PostgreSQL
 *   keel bench floor [options]           the machine's round-trip floor
 *   keel bench report [options]          every benchmark, written up
 *   keel version
 *
 * Errors print one line on stderr and exit non-zero (2 for bad usage).
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "keel/keel.h"
#include "tools/tools.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: keel <command> [args]\n"
            "commands:\n"
            "  init DIR [--scale N]\n"
            "      create a database; with N > 0, the pgbench tables at\n"
            "      scale N, analyzed\n"
            "  stat DIR\n"
            "      list the relations of a database with their sizes\n"
            "  check DIR\n"
            "      verify every page, B-tree and index of a database;\n"
            "      one line per problem, exit 1 if there is any (or if\n"
            "      it cannot check: not a database, in use); a note per\n"
            "      file named as a relation's that no relation owns,\n"
            "      and one if it was not shut down cleanly\n"
            "  wal DIR [--stats] [--start LSN] [--limit N]\n"
            "      print the write-ahead log from the last checkpoint's\n"
            "      redo pointer (or LSN): one line per record, or with\n"
            "      --stats the records, bytes and page images per kind\n"
            "  serve DIR [--port N] [--listen ADDR] [--socket-dir DIR]\n"
            "            [--max-connections N] [--pool-mb N] [--auth trust]\n"
            "      serve a database over PostgreSQL's protocol 3.0 (psql,\n"
            "      libpq) on ADDR (127.0.0.1; loopback only) and the Unix\n"
            "      socket DIR/.s.PGSQL.N (/tmp), port N (5432), until\n"
            "      SIGTERM or SIGINT; '' for ADDR or DIR listens on none\n"
            "  bench pin [--pool-mb N] [--threads N] [--rounds N]\n"
            "            [--dir DIR] [--json FILE] [--quick]\n"
            "      measure the buffer pool's hot paths\n"
            "  bench lookup [DIR] [--scale N] [--json FILE] [--rounds N]\n"
            "               [--pool-mb N] [--quick]\n"
            "      measure a primary-key lookup of a random pgbench\n"
            "      account (scale 10 in a temporary database without DIR)\n"
            "  bench catcache [DIR] [--json FILE] [--rounds N] [--lookups N]\n"
            "                 [--names N] [--quick]\n"
            "      measure catalog cache hits with bloat protection on and\n"
            "      off, and its memory under lookups of missing names (a\n"
            "      temporary database without DIR; in DIR, made there if\n"
            "      it is empty, its tables cc_* are added)\n"
            "  bench catcache [DIR] --loop N [--rounds N] [--prune on|off]\n"
            "      run N cache hits of each kind (for callgrind)\n"
            "  bench select [DIR] [--scale N] [--clients N,N,...]\n"
            "               [--seconds S] [--runs N]\n"
            "               [--layout padded|packed,...]\n"
            "               [--max-sessions N,...] [--cpus N,...]\n"
            "               [--pool-mb N] [--json FILE]\n"
            "      pgbench's select-only transaction (begin, catalog cache\n"
            "      look-ups, primary-key lookup, commit), one thread per\n"
            "      client (a temporary scale-N database without DIR)\n"
            "  bench bloat [DIR] [--scale N] [--clients N]\n"
            "              [--transactions T] [--pairs N] [--pool-mb N]\n"
            "              [--prune off|on] [--memory kept|returned]\n"
            "              [--json FILE]\n"
            "      the same, each transaction also looking up a new\n"
            "      missing name: cache memory with pruning off and on,\n"
            "      and throughput in N pairs of runs (2); with\n"
            "      --prune, N runs of that setting alone\n"
            "  bench tpcb [DIR] [--scale N] [--clients N,N,...]\n"
            "             [--seconds S] [--runs N] [--pool-mb N]\n"
            "             [--sync on|off] [--txn tpcb|insert] [--json FILE]\n"
            "      pgbench's read-write transaction (three updates, a\n"
            "      select, an insert), retried on conflicts; checks that\n"
            "      the balances add up (changes DIR's tables); --sync off\n"
            "      commits without waiting for the log, --txn insert\n"
            "      runs an insert-only transaction\n"
            "  bench compare [--quick] [--scale N] [--clients N,N,...]\n"
            "                [--seconds S | --transactions N,M]\n"
            "                [--pg-bin DIR] [--floor-seconds S]\n"
            "                [--wal-transactions N] [--json FILE]\n"
            "      the real pgbench against keel serve and a private\n"
            "      PostgreSQL 15 cluster (temporary, on Unix sockets):\n"
            "      tps and server CPU per transaction side by side, the\n"
            "      round-trip floor (below) at the same client counts\n"
            "      (--floor-seconds S per run, 0 for none), and the log's\n"
            "      volume per transaction over two windows of N after a\n"
            "      CHECKPOINT (--wal-transactions N, 3000; 0 for none)\n"
            "  bench floor [--quick] [--clients N,N,...] [--seconds S]\n"
            "              [--runs N] [--threads N] [--query-bytes N]\n"
            "              [--reply-bytes N] [--json FILE]\n"
            "      the machine's round-trip floor: N socket pairs, each to\n"
            "      a forked process that only recv()s a query and send()s\n"
            "      a reply (60 and 120 bytes), driven by\n"
            "      min(N, threads) polling client threads; round trips a\n"
            "      second and CPU time per round trip\n"
            "  bench report [--quick] [--out DIR] [--scale N]\n"
            "               [--seconds S] [--transactions T] [--rounds N]\n"
            "      run every benchmark briefly and write report.md,\n"
            "      results.json and charts to DIR (./keel-report)\n"
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
        printf("keel %s\n", keel_version());
        return 0;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "init") == 0)
        return tool_init_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "stat") == 0)
        return tool_stat_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "check") == 0)
        return tool_check_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "wal") == 0)
        return tool_wal_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "serve") == 0)
        return tool_serve_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "bench") == 0) {
        if (argc < 3) {
            fprintf(stderr,
                    "keel bench: which benchmark? (pin, lookup, catcache, "
                    "select, bloat, tpcb, compare, floor, report)\n");
            return 2;
        }
        if (strcmp(argv[2], "pin") == 0)
            return bench_pin_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "lookup") == 0)
            return bench_lookup_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "catcache") == 0)
            return bench_catcache_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "select") == 0)
            return bench_select_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "bloat") == 0)
            return bench_bloat_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "tpcb") == 0)
            return bench_tpcb_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "compare") == 0)
            return bench_compare_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "floor") == 0)
            return bench_floor_main(argc - 3, argv + 3);
        if (strcmp(argv[2], "report") == 0)
            return bench_report_main(argc - 3, argv + 3);
        fprintf(stderr,
                "keel bench: unknown benchmark '%s' (known: pin, lookup, "
                "catcache, select, bloat, tpcb, compare, floor, report)\n",
                argv[2]);
        return 2;
    }
    fprintf(stderr, "keel: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
