/*
 * report_text.h: the fixed prose of report.md, in one place.
 *
 * Each is a string literal, so that the compiler still checks the
 * formats against the arguments report_md.c passes (listed above each,
 * in order); those without arguments are written as they stand, their
 * percent signs single.  The limits of the targets are never written
 * here: readings quote them, with their verdicts, from report_targets.c.
 */
#ifndef KEEL_BENCH_REPORT_TEXT_H
#define KEEL_BENCH_REPORT_TEXT_H

/* ---- the heading ------------------------------------------------------ */

/* quick option, date, host, CPUs, CPU model, compiler, " with link-time
 * optimization" or "", ", assertions off|on", scale, accounts, seconds in
 * all, load average at the start and at the end. */
#define RT_HEADER                                                              \
    "# keel benchmark report\n\n"                                              \
    "`keel bench report%s`: %s on %s, %ld CPUs (%s), compiler %s%s%s; "        \
    "a scale-%u pgbench database (%u accounts); %.0f s in all.  "              \
    "Load average (1 minute) %.2f at the start, %.2f at the end (the "         \
    "end counts this run's own client threads too); a load above 0 "           \
    "at the start means other work shared the CPUs, which inflates "           \
    "wall-clock figures.\n\n"                                                  \
    "Each section names the command that reproduces its table "                \
    "(without DIR each creates its own database of the same "                  \
    "scale).\n\n"

/* ---- the targets ------------------------------------------------------ */

#define RT_TARGETS_HEAD                                                        \
    "## Targets\n\n"                                                           \
    "Each target is judged once, on the one reading its row names. Where "     \
    "that reading has a 95% confidence interval (the mean of ratios of "       \
    "runs paired by round), the target is met only when the whole "            \
    "interval meets its limit, not met when the whole interval fails it, "     \
    "and within the noise when the interval holds the limit: the runs "        \
    "cannot tell. Figures are compared as printed.\n\n"                        \
    "| target | what | limit | measured | 95% CI | verdict |\n"                \
    "|---|---|---|---:|---|---|\n"

#define RT_INFO_HEAD                                                           \
    "\nOther readings of the same targets, shown as information and not "      \
    "judged:\n\n"                                                              \
    "| target | reading | measured | 95% CI | the limit in its terms |\n"      \
    "|---|---|---:|---|---|\n"

/* ---- select ----------------------------------------------------------- */

/* The main select step's command. */
#define RT_SELECT_HEAD                                                         \
    "## Select-only transactions\n\n`keel bench select%s`\n\n"                 \
    "Each transaction is `keel_begin()`, `keel_select_column()` "              \
    "(five catalog cache look-ups, the primary key's descent and "             \
    "the heap fetch) and `keel_commit()`, through the public "                 \
    "API.\n\n"                                                                 \
    "![transactions per second against clients](select.svg)\n\n"               \
    "| clients | layout | max_sessions | tps (median) | min | max | "          \
    "ns/txn per client | CPU ns/txn | p50 ns | p99 ns |\n"                     \
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"

/* One client's tps, ns and CPU ns, and the select_1_client_ns quote; 2
 * over 1 and its quote; 64 over 2 and its quote; padded "x% faster" or
 * "slower" than packed at 2 clients, the median, the interval and the
 * padded_over_packed quote; the same at 64 clients, without a quote. */
#define RT_SELECT_READING                                                      \
    "\nReading: one client runs %.0f transactions per second "                 \
    "(%.0f ns each, %.0f ns of CPU, all catalog look-ups "                     \
    "included; %s); 2 clients give %.3fx one (%s), 64 clients %.3fx two "      \
    "(%s); padded is %s than packed at 2 clients (median %.3fx, %s; %s), "     \
    "and %s at 64 clients (median %.3fx, %s).\n\n"

#define RT_SELECT_RATIOS                                                       \
    "Ratios between rows are the median of the ratios of runs "                \
    "measured in the same round (every configuration's run 1, then "           \
    "every one's run 2 in reverse order, and so on), with the 95% "            \
    "confidence interval of their mean in brackets (in the line by "           \
    "clients below, the lowest and highest ratio too, and intervals "          \
    "at the level it states); a difference is within the noise when "          \
    "that interval holds 1"

#define RT_SELECT_PINNED                                                       \
    "; the clients are pinned round-robin to the CPUs "                        \
    "listed, so that both layouts run on the same CPUs.\n\n"

#define RT_LAYOUT_HEAD "Padded over packed, by clients"

/* The level of each interval in percent, and how many. */
#define RT_LAYOUT_LEAD                                                         \
    " (each interval at %.1f%%, so that all %zu hold "                         \
    "together with at least 95%% confidence)"

/* The level, for each of the three sentences by side of 1. */
#define RT_LAYOUT_FASTER " At %.1f%%, padded is faster beyond the noise at"
#define RT_LAYOUT_NOISE                                                        \
    " At %.1f%%, padded and packed are within the noise of each other at"
#define RT_LAYOUT_SLOWER " At %.1f%%, padded is slower beyond the noise at"
#define RT_LAYOUT_NONE   " There is no interval at"

#define RT_LAYOUT_INFO                                                         \
    " This line is information: the target is judged on the 95% interval "     \
    "at 2 clients, above.\n\n"

/* line_handoff_ns; the CPU time's change from 1 to 2 clients; the 2 over
 * 1 limit and the change in CPU time it allows. */
#define RT_SELECT_LINES                                                        \
    "A transaction writes three shared cache lines: its "                      \
    "session's process array slot (its xmin, at begin and at "                 \
    "commit), on a line of its own when padded and beside "                    \
    "other sessions' slots when packed, and the two buffers it "               \
    "pins, a random leaf of the primary key and a random heap "                \
    "page (the index's root and level-1 pages are found in the "               \
    "session's own directory of the index). So, padded, two "                  \
    "clients seldom write the same line. Where they do, what a "               \
    "line's move between cores costs depends on where the host "               \
    "runs the two virtual CPUs; in this run %.0f ns "                          \
    "(`line_handoff_ns`, under the buffer pool's hot paths "                   \
    "below). From 1 to 2 clients the CPU time per transaction "                \
    "changed by %+.0f ns; %gx allows about %+.0f ns.\n\n"

#define RT_SELECT_TIMES                                                        \
    "ns/txn per client is clients / tps, the wall time one client "            \
    "spends per transaction; CPU ns/txn is the clients' CPU time "             \
    "(CLOCK_THREAD_CPUTIME_ID) over their transactions, which other "          \
    "load on the machine does not inflate.\n\n"                                \
    "Latency: every 64th transaction of each client is timed alone "           \
    "(two clock reads, about 20 ns of it the clock); p50 and p99 are "         \
    "over all clients' samples of a run, the median of the runs.\n\n"

#define RT_COUNTS_HEAD                                                         \
    "| clients | layout | buffer pins | cache hits | negative hits | "         \
    "misses | list hits | list misses | snapshots reused | snapshots "         \
    "taken |\n"                                                                \
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"

/* Buffer pins, moves right, hits, negative hits, the unanalyzed column's
 * words or "", list hits, misses, snapshots reused. */
#define RT_COUNTS_READING                                                      \
    "\nReading: per transaction %.4f buffer pins (the primary "                \
    "key's leaf and the heap page, and %.4f moves right from "                 \
    "the leaf the session's directory named), %.2f catalog "                   \
    "cache hits, %.2f "                                                        \
    "negative hits (the search path's keel_catalog%s), %.2f "                  \
    "list hits and %.4f misses; %.2f of the snapshots were "                   \
    "reused (no transaction with an xid ended in between).\n\n"
#define RT_COUNTS_UNANALYZED ", and the statistics of an unanalyzed column"

/* The max_sessions step's command. */
#define RT_MS_HEAD                                                             \
    "### max_sessions 400 against 402\n\n`keel bench select%s`\n\n"            \
    "| max_sessions | clients | tps (median) | min | max | p50 ns "            \
    "| p99 ns |\n|---:|---:|---:|---:|---:|---:|---:|\n"

/* "x% faster" or "slower", the median, the rounds and interval, the
 * max_sessions_402_over_400 quote, and RT_MS_SIDE or "". */
#define RT_MS_READING                                                          \
    "\nReading: max_sessions 402 is %s than 400 at 64 clients "                \
    "(%.3fx, %s); %s.%s\n\n"

/* "above" or "below", "faster" or "slower". */
#define RT_MS_SIDE                                                             \
    " The interval lies %s 1: 402 is %s than 400 beyond the noise in this "    \
    "run."

/* The first pinned step's command. */
#define RT_CPU_HEAD                                                            \
    "### One client on each CPU\n\n`keel bench select%s` (and the "            \
    "same for each CPU)\n\n| CPU | tps (median) | min | max | "                \
    "ns/txn | CPU ns/txn | p50 ns | p99 ns |\n"                                \
    "|---:|---:|---:|---:|---:|---:|---:|---:|\n"

/* The fastest CPU's ns per transaction, and that CPU. */
#define RT_CPU_READING                                                         \
    "\nReading: pinned to one CPU, one client's transaction costs "            \
    "%.0f ns on CPU %.0f (the fastest here)"

/* The slowest's ns, its CPU, and its ns over the fastest's. */
#define RT_CPU_WORST " and %.0f ns on CPU %.0f (%.2fx)"

/* The main table's CPU (if pinned) and its one-client ns. */
#define RT_CPU_MAIN_PINNED   "; in the table above, on CPU %.0f, %.0f ns"
#define RT_CPU_MAIN_UNPINNED "; unpinned, as in the table above, %.0f ns"

#define RT_CPU_END                                                             \
    ". The same code on CPUs of one machine should cost the same; "            \
    "where it does not, the host runs the virtual CPUs at different "          \
    "speeds (sharing their cores with other work), and a single "              \
    "client's figure depends on where the scheduler puts it.\n\n"

/* ---- bloat ------------------------------------------------------------ */

/* The bloat step's command. */
#define RT_BLOAT_HEAD                                                          \
    "## Catalog cache bloat under the select-only load\n\n"                    \
    "`keel bench bloat%s`\n\n"                                                 \
    "![catalog cache bytes against transactions](bloat.svg)\n\n"               \
    "| pruning | tps | elapsed s | session | bytes at start | bytes "          \
    "at half | bytes at end | most bytes | bytes per transaction | "           \
    "blocks at end |\n"                                                        \
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"

/* The growth per transaction with pruning off. */
#define RT_BLOAT_GROWTH                                                        \
    "\nReading: with pruning off each session's cache grows by "               \
    "%.0f bytes per transaction (one negative entry each); "

#define RT_BLOAT_NO_SAMPLES                                                    \
    "with pruning on there are no samples to hold against a target"

/* Samples, the most bytes counted in MiB, the memory target in MiB, the
 * most blocks in MiB, the blocks over the target, and the
 * catcache_blocks quote. */
#define RT_BLOAT_MEMORY                                                        \
    "with pruning on the most any session's cache counted in its %zu "         \
    "samples is %.2f MiB (its memory target is %.2f MiB, and the evictor "     \
    "keeps what the cache counts under it), and the memory blocks of the "     \
    "session that held the most (the pieces of up to 1 KiB that the cache "    \
    "counts, rounded up to 16 bytes, in slabs of one size each, and those "    \
    "freed for reuse; larger bucket arrays lie outside them) took %.2f MiB "   \
    "at the end, %.3fx the target (%s)"

/* The ratio, "one pair of runs, off then on" or "runs", its span. */
#define RT_BLOAT_TPS_ONE                                                       \
    "; throughput with pruning on is %.3fx that with it off (%s; %s)"

/* The ratio, the pairs, their span. */
#define RT_BLOAT_TPS                                                           \
    "; throughput with pruning on is %.3fx that with it off (the "             \
    "median of %d pairs of runs, alternately off then on and on "              \
    "then off, each finding its memory already mapped after an "               \
    "uncounted warm-up with pruning off; %s)"

#define RT_BLOAT_FASTER ", the pruned runs the faster beyond the noise"
#define RT_BLOAT_FASTER_WHY                                                    \
    ", their caches staying within the target while the unpruned ones keep "   \
    "growing"

/* The bloat_throughput quote. */
#define RT_BLOAT_VERDICT "; %s.\n\n"

/* The command, tps off and on, on over off, its span, the transactions
 * per new page unpruned, the memory target in MiB. */
#define RT_BLOAT_RETURNED                                                      \
    "With memory returned to the system after every run, so that "             \
    "each run maps its memory anew as a new session does "                     \
    "(`keel bench bloat%s`): %.0f tps with pruning off, %.0f "                 \
    "with it on, on over off %.3fx (%s). An unpruned session "                 \
    "maps a new 4 KiB page about every %.0f transactions, and "                \
    "each costs a page fault; a pruned one maps no more than "                 \
    "its target of %.2f MiB and the blocks that hold it. The target uses "     \
    "the runs with memory kept, which do not charge the unpruned runs for "    \
    "their pages.\n\n"

/* ---- catalog cache ------------------------------------------------------ */

/* The command, and " (build: CONFIG)" or "". */
#define RT_CC_HEAD                                                             \
    "## Catalog cache look-ups\n\n`keel bench catcache%s`%s\n\n"               \
    "| look-up | pruning enabled, ns (min..max) | pruning disabled, "          \
    "ns (min..max) | time ratio enabled/disabled (95%% CI) |\n"                \
    "|---|---:|---:|---:|\n"

#define RT_CC_BLOAT_HEAD                                                       \
    "\n| bloat run | bytes before | bytes after | peak bytes | block bytes "   \
    "| resident memory growth | hot-set hit ratio |\n"                         \
    "|---|---:|---:|---:|---:|---:|---:|\n"

/* The time ratio, its interval, the side of 1 it lies on, the
 * catcache_hit_time quote; names; unpruned growth of the cache and of
 * resident memory in MiB; pruned bytes, target, blocks and resident
 * growth in MiB, the growth over the target and the catcache_rss quote. */
#define RT_CC_READING                                                          \
    "\nReading: with pruning enabled the three hit paths take "                \
    "%.4fx the time they take with it disabled (95%% CI "                      \
    "%.4f..%.4f, %s); %s. %.0f missing names grow an unpruned cache by "       \
    "%.1f MiB and the process's resident memory by %.1f MiB; a pruned one "    \
    "ends at %.2f MiB as it counts itself (its memory target %.2f MiB), "      \
    "in memory blocks of %.2f MiB, and resident memory grew by %.2f MiB, "     \
    "%.3fx the target (%s).\n\n"

/* ---- lookup, pin ---------------------------------------------------- */

/* The lookup step's command. */
#define RT_LOOKUP_HEAD "## Primary-key lookup\n\n`keel bench lookup%s`\n\n"

/* lookup_ns, over random_load_ns, random_load_ns, page_walk_load_ns,
 * cached_load_ns, lookup_root_ns and its ratio, lookup_unhinted_ns and
 * its ratio, the guess rate and exact share in percent, keel_lookup_ns. */
#define RT_LOOKUP_READING                                                      \
    "\nReading: the index lookup and heap fetch of a random "                  \
    "account cost %.0f ns, %.1f times one random load from memory "            \
    "(%.0f ns here now; of 16,384 lines the caches hold, one on each "         \
    "4 KiB page of 64 MiB takes %.0f ns against %.0f ns on 256 pages: "        \
    "the address translation, `page_walk_load_ns` over "                       \
    "`cached_load_ns`), entering the "                                         \
    "index at its leaf from the "                                              \
    "session's directory; descending from the root instead takes "             \
    "%.0f ns (%.2fx), and without the heap prefetch as well %.0f ns "          \
    "(%.2fx), the heap page's misses waiting for the leaf's (the row "         \
    "was predicted for %.1f%% of lookups, %.2f%% of them exactly); "           \
    "keel_lookup(), which resolves names in the catalogs on every "            \
    "call, %.0f ns"

/* The transaction's ns at one client, and its difference from the
 * lookup's. */
#define RT_LOOKUP_TXN_MORE                                                     \
    "; the whole select-only transaction (begin, 5 catalog cache "             \
    "look-ups, this lookup, commit) takes %.0f ns at one client, "             \
    "%.0f ns more than the lookup alone"
#define RT_LOOKUP_TXN_LESS                                                     \
    "; the whole select-only transaction (begin, 5 catalog cache "             \
    "look-ups, this lookup, commit) measured %.0f ns at one "                  \
    "client, %.0f ns less than the lookup alone: the two ran at "              \
    "different moments, and the difference is the machine's "                  \
    "noise, not the transaction's cost"

/* The pin step's command. */
#define RT_PIN_HEAD "## Buffer pool hot paths\n\n`keel bench pin%s`\n\n"

/* read_hit_ns, pin_unpin_ns, the many-thread measure's name, its
 * throughput over 2 threads'. */
#define RT_PIN_READING                                                         \
    "\nReading: a resident page costs %.1f ns to look up, pin and "            \
    "unpin; a first pin by id %.1f ns; %s gives %.2fx the aggregate "          \
    "throughput of 2 threads.\n\n"

/* ---- the write-ahead log ---------------------------------------------- */

/* The three tpcb steps' commands. */
#define RT_TPCB_HEAD                                                           \
    "## Durability: the write-ahead log\n\n`keel bench tpcb%s`, "              \
    "`keel bench tpcb%s` and `keel bench tpcb%s`\n\n"                          \
    "| transaction, synchronous_commit | clients | tps (median) | "            \
    "min | max | tries/commit | log bytes/commit |\n|---|---:|---:|"           \
    "---:|---:|---:|---:|\n"

/* The disk's loop per second. */
#define RT_TPCB_LOOP                                                           \
    "\nThe disk's own 8 KiB write + fdatasync loop in the same "               \
    "directory: %.0f per second (measured before the first "                   \
    "step).  `insert` is a transaction of one history row: what "              \
    "limits it is the commit alone.\n\n"

/* The ratio to the loop, the wal_commit_1_client quote. */
#define RT_TPCB_ONE                                                            \
    "- One client, pgbench's transaction, commits waiting for "                \
    "the log: %.2fx the disk's loop (%s).\n"

/* The ratio, the wal_group_commit quote. */
#define RT_TPCB_GROUP                                                          \
    "- Group commit, 64 clients over one (insert): %.2fx (%s).\n"

/* The ratio, the branches. */
#define RT_TPCB_64                                                             \
    "- pgbench's transaction, 64 clients over one: %.2fx "                     \
    "(information).  Every transaction updates one of the %d "                 \
    "branch rows, and under read committed (as pgbench's against "             \
    "PostgreSQL) a row's next updater waits for its last one's "               \
    "commit and adds to the new version: a commit holds its rows "             \
    "until its record is durable, so no more commits than "                    \
    "branches can share an fdatasync.\n"

#define RT_TPCB_ASYNC                                                          \
    "- With synchronous_commit off the figures above compare with "            \
    "keel's without a log, which this build cannot run: "                      \
    "bench/README.md (\"The write-ahead log\") holds that "                    \
    "comparison, made with the build before the log.\n\n"

/* ---- the pgbench comparison ------------------------------------------- */

/* The compare step's command. */
#define RT_CMP_HEAD                                                            \
    "## The real pgbench: keel serve beside PostgreSQL 15\n\n"                 \
    "`keel bench compare%s`\n\n"

/* Why it was skipped or failed. */
#define RT_CMP_SKIPPED                                                         \
    "The comparison was skipped: %s.  Its targets read \"not "                 \
    "measured\"; everything else in this report ran.\n\n"
#define RT_CMP_FAILED                                                          \
    "The comparison failed: %s.  Its targets read \"not measured\"; "         \
    "everything else in this report ran.\n\n"
#define RT_CMP_NO_JSON                                                         \
    "The comparison failed before it wrote its results (its messages "         \
    "are in the report's output).  Its targets read \"not measured\"; "       \
    "everything else in this report ran.\n\n"

/* pgbench's version and path; scale; "-T N" or "-t N (select-only) and
 * -t M (tpcb-like)" as one string; keel's and PostgreSQL's init times;
 * PostgreSQL's version; its settings as "name=value, ...". */
#define RT_CMP_HOW                                                             \
    "%s (`%s`) drives both servers, one after the other, each over its "       \
    "own Unix socket in a temporary directory (neither listens on "           \
    "TCP): `keel serve` (this binary, `/proc/self/exe`, with its "            \
    "defaults: a 128 MiB buffer pool, 100 connections, commits waiting "       \
    "for the log's fdatasync) on a new database, and a private "              \
    "PostgreSQL cluster that initdb made in a temporary directory, "          \
    "started on a free port with `listen_addresses=''` and stopped and "      \
    "removed afterwards (run as the `postgres` user when the report runs "    \
    "as root).  Both got `pgbench -i -s %u` (%.1f s against keel, %.1f s "     \
    "against PostgreSQL).  PostgreSQL %s ran with initdb's defaults "         \
    "(`initdb -U postgres -A trust -E UTF8 --locale=C --no-sync`; "           \
    "`--no-sync` only skips initdb's own final flush): %s.\n\n"              \
    "Each configuration (script, protocol mode, client count) ran once "      \
    "against each server, back to back, keel first and PostgreSQL first "     \
    "in turn, with `pgbench -n %s -c N -j min(N, 2) --max-tries=1000` "       \
    "(`-S` for select-only; two threads at most, for the two CPUs; no "       \
    "vacuum before a run: the tables are freshly loaded, and the "            \
    "history keeps every run's rows).  tps is pgbench's (\"without "          \
    "initial connection time\").  A server's CPU time is read from /proc "    \
    "before and after each run, once the run's connections have gone: "       \
    "keel serve's utime + stime (every thread's), PostgreSQL's "              \
    "postmaster's utime + stime + cutime + cstime (its exited backends) "     \
    "plus its live children's utime + stime (the background processes), "     \
    "over the transactions pgbench counted; the clock ticks are 10 ms, "      \
    "so short runs read coarsely.  The clients (pgbench) run on the same "    \
    "two CPUs and their time is in neither server's figure.\n\n"

#define RT_CMP_TPS_HEAD                                                        \
    "![pgbench select-only tps against clients](compare-select.svg)\n\n"      \
    "![pgbench tpcb-like tps against clients](compare-tpcb.svg)\n\n"          \
    "Transactions per second:\n\n"                                            \
    "| script | mode | clients | keel serve | PostgreSQL 15 | keel / "         \
    "PostgreSQL | first |\n|---|---|---:|---:|---:|---:|---|\n"

#define RT_CMP_CPU_HEAD                                                        \
    "\nServer CPU time per transaction (µs):\n\n"                              \
    "| script | mode | clients | keel serve | PostgreSQL 15 | keel / "         \
    "PostgreSQL |\n|---|---|---:|---:|---:|---:|\n"

/* The floor's query and reply sizes, its runs and seconds per run. */
#define RT_CMP_FLOOR_HEAD                                                      \
    "\nThe round-trip floor, measured in the same run just before the "       \
    "pgbench runs, with both servers idle (`keel bench floor`, "              \
    "bench/README.md): %.0f-byte queries and %.0f-byte replies, pgbench "     \
    "-S's sizes, over AF_UNIX socket pairs, each to a forked process that "   \
    "only recv()s and send()s, blocking; the pairs driven "                   \
    "as pgbench drives its connections, by min(N, 2) client threads that "    \
    "keep a query outstanding on each pair and wait in poll(); %.0f runs "    \
    "of %.2f s per client count, their median.  A server that sleeps in "     \
    "recv() between queries does at least this much work per transaction, "  \
    "so at each client count the floor's round trips a second over "          \
    "PostgreSQL's tps is the highest tps ratio any such server could reach "  \
    "on this machine, and the floor's answering CPU per round trip over "     \
    "PostgreSQL's CPU per transaction the least CPU ratio:\n\n"               \
    "| clients | floor round trips/s (min-max) | answering CPU µs per "       \
    "round trip | highest reachable tps ratio, simple / prepared | keel "     \
    "serve's tps over the floor, simple / prepared | least reachable CPU "    \
    "ratio, simple / prepared |\n|---:|---:|---:|---:|---:|---:|\n"

/* Why the floor is missing: ": " and the reason, or "" and "". */
#define RT_CMP_FLOOR_NONE                                                      \
    "\nThe round-trip floor was not measured in this run%s%s.\n"

/* The six targets' readings with their quotes (cmp_figure()), in
 * report_targets.c's order. */
#define RT_CMP_READING                                                         \
    "\nReading: select-only, keel serve's tps over PostgreSQL's, the "        \
    "lowest over the client counts, is %s with the simple protocol and "     \
    "%s with the prepared one.  Server CPU time per select-only "            \
    "transaction, keel's over PostgreSQL's, the highest over the client "    \
    "counts, is %s simple and %s prepared.  tpcb-like, keel serve's tps "    \
    "over PostgreSQL's, the lowest over both modes and the client counts, "  \
    "is %s.  keel serve's select-only tps at 64 clients over its tps at "    \
    "2, the lower of the two modes, is %s.\n"

/* A target's figure and quote, or "not measured" and why. */
#define RT_CMP_FIGURE       "%.2fx (%s)"
#define RT_CMP_NOT_MEASURED "not measured (this run lacks a client count it needs)"

/* The server, the four totals, "add up" or "do NOT add up". */
#define RT_CMP_BALANCES                                                        \
    "- %s after its tpcb-like runs (psql): sum(abalance) %lld, "              \
    "sum(tbalance) %lld, sum(bbalance) %lld, sum(delta) of the history "      \
    "%lld: they %s.\n"

/* The failed transactions pgbench counted, keel's and PostgreSQL's. */
#define RT_CMP_FAILURES                                                        \
    "- Transactions that failed after their retries: %.0f against keel, "     \
    "%.0f against PostgreSQL.\n"

/* The log volume per transaction: N, N, the measurement's seconds. */
#define RT_CMP_WAL_HOW                                                         \
    "\n### The log's volume per transaction\n\n"                               \
    "After `pgbench -i` and before the runs above, each server got a "        \
    "`CHECKPOINT` and then `pgbench -n -t %u -c 1 -M prepared` "               \
    "(tpcb-like) twice, its log's counters read before, between and "         \
    "after: keel's `keel_stat_wal`, PostgreSQL's `pg_stat_wal`, read once "   \
    "pgbench's connection had gone (a PostgreSQL backend adds its counts "    \
    "when it exits).  The first window starts at the checkpoint, so the "     \
    "first change of each page after it logs the whole page (PostgreSQL's "   \
    "full_page_writes; keel always); the second is the next %u "              \
    "transactions, further from it.  PostgreSQL's image bytes, which "        \
    "pg_stat_wal lacks, are `pg_waldump --stats`' over each window's LSNs "   \
    "(`pg_current_wal_insert_lsn()` at each reading), whose records and "     \
    "bytes must agree with pg_stat_wal's within 5%%.  Bytes are the "          \
    "records' own: keel's with their padding to 8 bytes, PostgreSQL's "       \
    "without the padding and page headers.  The measurement took %.1f s "     \
    "in all.  Per transaction:\n\n"                                          \
    "| window | server | records | page images | bytes | bytes without "     \
    "images |\n|---|---|---:|---:|---:|---:|\n"

#define RT_CMP_WAL_NONE                                                        \
    "\n### The log's volume per transaction\n\n"                               \
    "Not measured in this run (`--wal-transactions 0`, or results from "      \
    "before the measurement).\n"

/* The two targets' quotes: with images after the checkpoint, without
 * them in the next window. */
#define RT_CMP_WAL_READING                                                     \
    "\nReading: keel serve's log bytes per transaction over PostgreSQL's "    \
    "are %s over the transactions just after the checkpoint, images "         \
    "included, and %s without the images over the next ones.\n"

#define RT_CMP_WAL_CHECK                                                       \
    "- The counters' check did not pass: %s.\n"

#define RT_CMP_END                                                             \
    "\nThe two servers shared the machine with pgbench and whatever else "    \
    "ran on it: a pair of runs measured back to back saw the same host, "     \
    "but a single pair is one sample, and ratios move from report to "        \
    "report by more than the targets' margins allow for.  `keel bench "       \
    "compare` reruns the comparison alone (bench/README.md).\n\n"

#endif /* KEEL_BENCH_REPORT_TEXT_H */
