# Runs `keel bench report --quick` (a scale-1 database in a temporary
# directory; two rounds of each benchmark, short select and bloat runs)
# into OUT and checks that every file was written, that results.json holds
# every figure with a sane value and counts consistent with the run, that
# the report's verdicts follow the intervals it prints, and that the
# charts are SVG with their legends.
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)
# Quoted arguments are strings, never variable names (the checks below set
# variables such as "off").
cmake_policy(SET CMP0054 NEW)

set(TXNS 2000)
# Two rounds: the select steps run 4 times each (the one over every client
# count 6 times, max_sessions 400 against 402 8 times), so that the ratios
# have intervals and the verdicts read from them are checked.
set(ROUNDS 2)
set(SEL_RUNS 4)
set(MAIN_RUNS 6)
set(MS_RUNS 8)
file(REMOVE_RECURSE ${OUT})
execute_process(
  COMMAND ${KEEL} bench report --quick --out ${OUT} --seconds 0.05
          --transactions ${TXNS} --rounds ${ROUNDS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench report failed (${rc}):\n${out}\n${err}")
endif()
foreach(f report.md results.json select.svg bloat.svg)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "keel bench report did not write ${f}")
  endif()
endforeach()
file(GLOB half_written "${OUT}/*.tmp")
if(half_written)
  message(FATAL_ERROR "keel bench report left ${half_written}")
endif()
if(NOT err MATCHES "\\[1/[0-9]+\\] keel bench pin")
  message(FATAL_ERROR "no progress on stderr:\n${err}")
endif()

file(READ ${OUT}/results.json json)

# Fails unless `value` is a finite number greater than zero.
function(check_positive what value)
  if(NOT value MATCHES "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$"
     OR NOT value GREATER 0)
    message(FATAL_ERROR "results.json ${what} is not positive: '${value}'")
  endif()
endfunction()

# A non-negative number (as string(JSON) gives it back, which may show
# binary noise such as 12.8999999999) in tenths, rounded, into `out`.
function(to_tenths what value out)
  if(NOT value MATCHES "^([0-9]+)(\\.([0-9]*))?$")
    message(FATAL_ERROR "results.json ${what} is not a number: '${value}'")
  endif()
  string(SUBSTRING "${CMAKE_MATCH_3}00000" 0 5 dec)
  math(EXPR t "${CMAKE_MATCH_1} * 10 + (1${dec} - 100000 + 5000) / 10000")
  set(${out} ${t} PARENT_SCOPE)
endfunction()

# Fails unless `value` equals `want` within 0.0001 (if() compares numbers
# as doubles).
function(check_equal what value want)
  math(EXPR lo "${want} * 10000 - 1")
  math(EXPR hi "${want} * 10000 + 1")
  if(NOT value MATCHES "^[0-9.eE+-]+$" OR value LESS "${lo}e-4"
     OR value GREATER "${hi}e-4")
    message(FATAL_ERROR "results.json ${what} is ${value}, not ${want}")
  endif()
endfunction()

# The other benchmarks' figures, under their names.
string(JSON pin GET "${json}" pin)
keel_check_bench_stats("${pin}" ${ROUNDS} read_hit_ns pin_unpin_ns repin_ns
  read_miss_ns pread_ns read_hit_2threads_mops)
string(JSON lookup GET "${json}" lookup)
keel_check_bench_stats("${lookup}" ${ROUNDS} lookup_ns lookup_root_ns
  lookup_unhinted_ns keel_lookup_ns random_load_ns page_walk_load_ns
  cached_load_ns)
string(JSON catcache ERROR_VARIABLE no_catcache GET "${json}" catcache)
if(NOT no_catcache)
  string(JSON hit GET "${catcache}" hit1_ns median)
  check_positive("catcache.hit1_ns" "${hit}")
endif()

# select: 10 configurations (5 client counts, 2 layouts), then 64 clients
# with max_sessions 400 and 402.
string(JSON n LENGTH "${json}" select)
if(NOT n EQUAL 12)
  message(FATAL_ERROR "results.json select has ${n} entries, not 12")
endif()
math(EXPR last "${n} - 1")
set(seen "")
foreach(i RANGE ${last})
  string(JSON e GET "${json}" select ${i})
  string(JSON clients GET "${e}" clients)
  string(JSON layout GET "${e}" layout)
  string(JSON ms GET "${e}" max_sessions)
  list(APPEND seen "${clients}/${layout}/${ms}")
  foreach(k tps tps_min tps_max p50_ns p99_ns ns_per_txn cpu_ns_per_txn
          transactions)
    string(JSON v GET "${e}" ${k})
    check_positive("select[${i}].${k}" "${v}")
  endforeach()
  string(JSON tps GET "${e}" tps)
  string(JSON lo GET "${e}" tps_min)
  string(JSON hi GET "${e}" tps_max)
  if(lo GREATER tps OR tps GREATER hi)
    message(FATAL_ERROR "select[${i}]: not min ${lo} <= ${tps} <= max ${hi}")
  endif()
  # Each run's throughput: the lowest and highest are min and max, and
  # the median (of an even number) is the mean of the middle two, within
  # the rounding of the 0.1 tps the JSON is written with.
  string(JSON nruns LENGTH "${e}" tps_runs)
  string(JSON runs GET "${e}" runs)
  if(ms EQUAL 64)
    set(want_runs ${MAIN_RUNS})
  else()
    set(want_runs ${MS_RUNS})
  endif()
  if(NOT nruns EQUAL runs OR NOT runs EQUAL want_runs)
    message(FATAL_ERROR "select[${i}]: ${nruns} tps_runs for ${runs} runs")
  endif()
  # Each run's CPU time per transaction, in the same order.
  string(JSON ncpu LENGTH "${e}" cpu_ns_runs)
  if(NOT ncpu EQUAL runs)
    message(FATAL_ERROR "select[${i}]: ${ncpu} cpu_ns_runs for ${runs} runs")
  endif()
  set(tenths "")
  math(EXPR lastrun "${nruns} - 1")
  foreach(k RANGE ${lastrun})
    string(JSON ck GET "${e}" cpu_ns_runs ${k})
    check_positive("select[${i}].cpu_ns_runs[${k}]" "${ck}")
    string(JSON rk GET "${e}" tps_runs ${k})
    check_positive("select[${i}].tps_runs[${k}]" "${rk}")
    to_tenths("select[${i}].tps_runs[${k}]" "${rk}" t)
    list(APPEND tenths ${t})
  endforeach()
  list(SORT tenths COMPARE NATURAL)
  list(GET tenths 0 least)
  list(GET tenths ${lastrun} most)
  math(EXPR m1 "${nruns} / 2 - 1")
  math(EXPR m2 "${nruns} / 2")
  list(GET tenths ${m1} mid1)
  list(GET tenths ${m2} mid2)
  foreach(which tps lo hi)
    to_tenths("select[${i}].${which}" "${${which}}" t_${which})
  endforeach()
  math(EXPR twice "${t_tps} * 2 - ${mid1} - ${mid2}")
  if(NOT t_lo EQUAL least OR NOT t_hi EQUAL most OR twice GREATER 2
     OR twice LESS -2)
    message(FATAL_ERROR "select[${i}]: runs ${tenths} (tenths) against "
                        "median ${tps}, min ${lo}, max ${hi}")
  endif()
  string(JSON p50 GET "${e}" p50_ns)
  string(JSON p99 GET "${e}" p99_ns)
  if(p50 GREATER p99)
    message(FATAL_ERROR "select[${i}]: p50 ${p50} > p99 ${p99}")
  endif()
  # One latency sample per 64 transactions, every transaction counted.
  string(JSON txns GET "${e}" transactions)
  string(JSON samples GET "${e}" latency_samples)
  math(EXPR want "${samples} * 64")
  if(NOT txns EQUAL want)
    message(FATAL_ERROR
      "select[${i}]: ${txns} transactions but ${samples} latency samples")
  endif()
  # The pgbench database is analyzed: 3 hits, 1 negative hit, 1 list hit,
  # no misses once warm, every snapshot reused.
  string(JSON p GET "${e}" per_txn)
  # Buffer reads: the primary key's leaf (entered from the session's
  # directory of the index) and the heap page, 2, plus one for each move
  # right from where the directory led (rare: a key equal to a leaf's
  # first, whose entry might have been left of it); none for the catalog
  # look-ups.
  string(JSON pins GET "${p}" buffer_pins)
  string(JSON moves GET "${p}" dir_moves)
  if(NOT moves GREATER_EQUAL 0 OR moves GREATER 0.1)
    message(FATAL_ERROR "select[${i}].per_txn.dir_moves is ${moves}")
  endif()
  # pins = 2 + moves.  Each is written rounded to 4 decimals on its own,
  # so the two may differ by one in the last place (2.00225 and 0.00225
  # need not round alike in binary); CMake's integer math compares them in
  # ten-thousandths, rounded from the first five decimals.
  foreach(which pins moves)
    if(NOT ${which} MATCHES "^([0-9]+)(\\.([0-9]*))?$")
      message(FATAL_ERROR "select[${i}].per_txn: ${which} is '${${which}}'")
    endif()
    set(int_${which} ${CMAKE_MATCH_1})
    string(SUBSTRING "${CMAKE_MATCH_3}00000" 0 5 dec)
    math(EXPR e4_${which} "(1${dec} - 100000 + 5) / 10")
  endforeach()
  math(EXPR gap "${int_pins} * 10000 + ${e4_pins} - 20000 - ${int_moves} * 10000 - ${e4_moves}")
  if(gap GREATER 1 OR gap LESS -1)
    message(FATAL_ERROR
      "select[${i}].per_txn.buffer_pins ${pins} is not 2 + dir_moves ${moves}")
  endif()
  foreach(kv cache_hits=3 cache_negative_hits=1 cache_misses=0
          cache_list_hits=1 cache_list_misses=0 snapshots_reused=1
          snapshots_taken=0)
    string(REPLACE "=" ";" kv "${kv}")
    list(GET kv 0 k)
    list(GET kv 1 want)
    string(JSON v GET "${p}" ${k})
    check_equal("select[${i}].per_txn.${k}" "${v}" ${want})
  endforeach()
endforeach()
foreach(want 1/padded/64 2/padded/64 4/padded/64 16/padded/64 64/padded/64
        1/packed/64 2/packed/64 4/packed/64 16/packed/64 64/packed/64
        64/padded/400 64/padded/402)
  list(FIND seen "${want}" at)
  if(at LESS 0)
    message(FATAL_ERROR "results.json select lacks ${want}: ${seen}")
  endif()
endforeach()

# bloat: two sessions per setting, each sampled 51 times from 0 to TXNS
# transactions; every probe a miss; unpruned caches grow.
foreach(which off on)
  string(JSON tps GET "${json}" bloat ${which} tps)
  check_positive("bloat.${which}.tps" "${tps}")
  # One run of each setting per pair; tps is their median.
  string(JSON nr LENGTH "${json}" bloat ${which} tps_runs)
  if(NOT nr EQUAL SEL_RUNS)
    message(FATAL_ERROR "bloat.${which}: ${nr} runs, not ${SEL_RUNS}")
  endif()
  set(below 0)
  set(above 0)
  math(EXPR last "${SEL_RUNS} - 1")
  foreach(j RANGE ${last})
    string(JSON t GET "${json}" bloat ${which} tps_runs ${j})
    check_positive("bloat.${which}.tps_runs[${j}]" "${t}")
    set(tps_${which}_${j} ${t})
    if(t LESS tps)
      math(EXPR below "${below} + 1")
    elseif(t GREATER tps)
      math(EXPR above "${above} + 1")
    endif()
  endforeach()
  math(EXPR half "${SEL_RUNS} / 2")
  if(below GREATER half OR above GREATER half)
    message(FATAL_ERROR "bloat.${which}.tps ${tps} is not the median of its "
                        "runs (${below} below, ${above} above)")
  endif()
  string(JSON ns LENGTH "${json}" bloat ${which} sessions)
  if(NOT ns EQUAL 2)
    message(FATAL_ERROR "bloat.${which}: ${ns} sessions, not 2")
  endif()
  foreach(i 0 1)
    string(JSON s GET "${json}" bloat ${which} sessions ${i})
    string(JSON m LENGTH "${s}" bytes)
    string(JSON mt LENGTH "${s}" txn)
    string(JSON me LENGTH "${s}" elapsed_s)
    if(NOT m EQUAL 51 OR NOT mt EQUAL 51 OR NOT me EQUAL 51)
      message(FATAL_ERROR "bloat.${which}[${i}]: ${m}/${mt}/${me} samples")
    endif()
    string(JSON t0 GET "${s}" txn 0)
    string(JSON t50 GET "${s}" txn 50)
    string(JSON done GET "${s}" transactions)
    string(JSON misses GET "${s}" cache_misses)
    if(NOT t0 EQUAL 0 OR NOT t50 EQUAL TXNS OR NOT done EQUAL TXNS
       OR NOT misses EQUAL TXNS)
      message(FATAL_ERROR "bloat.${which}[${i}]: samples ${t0}..${t50}, "
                          "${done} transactions, ${misses} misses")
    endif()
    foreach(j 0 25 50)
      string(JSON b GET "${s}" bytes ${j})
      check_positive("bloat.${which}[${i}].bytes[${j}]" "${b}")
    endforeach()
    string(JSON e50 GET "${s}" elapsed_s 50)
    check_positive("bloat.${which}[${i}].elapsed_s[50]" "${e50}")
    # The cache's memory blocks hold its entries, the negative ones (each
    # over 64 bytes and under 1 KiB) among them; pruned, no more than
    # twice the target.
    string(JSON fbb GET "${s}" final_block_bytes)
    string(JSON neg GET "${s}" negative_entries)
    string(JSON target GET "${json}" bloat ${which} memory_target)
    math(EXPR least "${neg} * 64")
    math(EXPR most "${target} * 2")
    if(fbb LESS least OR (which STREQUAL "on" AND fbb GREATER most))
      message(FATAL_ERROR "bloat.${which}[${i}]: blocks of ${fbb} bytes for "
                          "${neg} negative entries (target ${target})")
    endif()
    if(which STREQUAL "off")
      string(JSON b0 GET "${s}" bytes 0)
      string(JSON b50 GET "${s}" bytes 50)
      math(EXPR grown "${b50} - ${b0}")
      math(EXPR least "${TXNS} * 32")
      if(grown LESS least)
        message(FATAL_ERROR
          "bloat.off[${i}]: grew ${grown} bytes over ${TXNS} new names")
      endif()
    endif()
  endforeach()
endforeach()

# The pairs' ratios, on over off: each run's throughput over its pair's.
string(JSON pairs GET "${json}" bloat pairs)
string(JSON nr LENGTH "${json}" bloat tps_on_over_off_runs)
if(NOT pairs EQUAL SEL_RUNS OR NOT nr EQUAL SEL_RUNS)
  message(FATAL_ERROR "bloat: ${pairs} pairs, ${nr} ratios, not ${SEL_RUNS}")
endif()
foreach(j RANGE ${last})
  string(JSON r GET "${json}" bloat tps_on_over_off_runs ${j})
  # In whole tps and hundred-thousandths (string(JSON) gives the JSON's
  # four decimals back with binary noise, or fewer of them): on * 100000
  # is off * r to within 6 * off (r rounded to four places, then cut at
  # five) and the tps' dropped fractions.
  if(NOT r MATCHES "^([0-9]+)(\\.([0-9]*))?$")
    message(FATAL_ERROR "bloat.tps_on_over_off_runs[${j}] is '${r}'")
  endif()
  string(SUBSTRING "${CMAKE_MATCH_3}00000" 0 5 dec)
  math(EXPR r5 "${CMAKE_MATCH_1} * 100000 + 1${dec} - 100000")
  string(REGEX REPLACE "\\..*" "" off "${tps_off_${j}}")
  string(REGEX REPLACE "\\..*" "" on "${tps_on_${j}}")
  math(EXPR d "${on} * 100000 - ${off} * ${r5}")
  math(EXPR tol "6 * ${off} + ${r5} + 100000")
  if(d GREATER tol OR d LESS -${tol})
    message(FATAL_ERROR "bloat.tps_on_over_off_runs[${j}] is ${r}, its "
                        "pair's runs ${tps_on_${j}} over ${tps_off_${j}}")
  endif()
endforeach()

# Memory: kept between the bloat runs, or returned after each (a second
# bloat step).  Where the allocator's thresholds were set (not under a
# sanitizer), an unpruned run with memory returned faults in at least a
# third of the pages its caches grew by, and a run with memory kept almost
# none.
string(JSON mem GET "${json}" bloat memory)
string(JSON mem_r GET "${json}" bloat_returned memory)
string(JSON alloc_set GET "${json}" bloat allocator_set)
string(JSON alloc_set_r GET "${json}" bloat_returned allocator_set)
if(NOT mem STREQUAL "kept" OR NOT mem_r STREQUAL "returned")
  message(FATAL_ERROR "bloat memory ${mem}, bloat_returned memory ${mem_r}")
endif()
if(SANITIZE STREQUAL "")
  set(want_set ON)
else()
  set(want_set OFF)
endif()
if(NOT alloc_set STREQUAL alloc_set_r OR (alloc_set AND NOT want_set)
   OR (want_set AND NOT alloc_set))
  message(FATAL_ERROR "allocator_set ${alloc_set}/${alloc_set_r} with sanitizer "
                      "'${SANITIZE}'")
endif()
string(JSON grown_pages GET "${json}" bloat_returned off sessions 0 bytes 50)
string(JSON b0 GET "${json}" bloat_returned off sessions 0 bytes 0)
math(EXPR grown_pages "(${grown_pages} - ${b0}) * 2 / 4096")
foreach(step bloat bloat_returned)
  string(JSON pairs GET "${json}" ${step} pairs)
  if(NOT pairs EQUAL SEL_RUNS)
    message(FATAL_ERROR "${step}: ${pairs} pairs, not ${SEL_RUNS}")
  endif()
  foreach(which off on)
    string(JSON tps GET "${json}" ${step} ${which} tps)
    check_positive("${step}.${which}.tps" "${tps}")
    string(JSON nf LENGTH "${json}" ${step} ${which} page_faults_runs)
    if(NOT nf EQUAL SEL_RUNS)
      message(FATAL_ERROR "${step}.${which}: ${nf} page fault counts")
    endif()
    foreach(j RANGE ${last})
      string(JSON pf GET "${json}" ${step} ${which} page_faults_runs ${j})
      if(NOT alloc_set)
        continue()
      endif()
      # (Part of what the caches take comes from free space each client
      # thread's heap keeps from the run before, up to 128 KiB at its end:
      # two of the caches' 64 KiB blocks, half of what they grow by at this
      # size.)
      math(EXPR least "${grown_pages} / 3")
      math(EXPR most "${grown_pages} / 10")
      if(step STREQUAL "bloat_returned" AND which STREQUAL "off"
         AND pf LESS least)
        message(FATAL_ERROR "${step}.off run ${j}: ${pf} page faults, "
                            "fewer than a third of the ${grown_pages} pages "
                            "grown")
      elseif(step STREQUAL "bloat" AND pf GREATER most)
        message(FATAL_ERROR "${step}.${which} run ${j}: ${pf} page faults "
                            "with memory kept (${grown_pages} pages grown)")
      endif()
    endforeach()
  endforeach()
endforeach()
file(READ ${OUT}/report.md report_md)
if(NOT report_md MATCHES "With memory returned to the system after every run")
  message(FATAL_ERROR "report.md lacks the line on memory returned")
endif()

foreach(r select_2_over_1_clients select_64_over_2_clients
        select_padded_over_packed_64_clients select_max_sessions_402_over_400
        select_ns_per_txn_1_client)
  string(JSON v GET "${json}" ratios ${r})
  check_positive("ratios.${r}" "${v}")
endforeach()

# The charts and the report.
foreach(f compare-select.svg compare-tpcb.svg)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "keel bench report did not write ${f}")
  endif()
endforeach()
file(READ ${OUT}/select.svg svg)
if(NOT svg MATCHES "^<svg" OR NOT svg MATCHES ">padded<"
   OR NOT svg MATCHES ">packed<" OR NOT svg MATCHES "transactions per second")
  message(FATAL_ERROR "select.svg lacks its start, legend or axis label")
endif()
file(READ ${OUT}/bloat.svg svg)
if(NOT svg MATCHES "^<svg" OR NOT svg MATCHES ">pruning off, session 1<"
   OR NOT svg MATCHES ">pruning on, session 2<" OR NOT svg MATCHES "MiB")
  message(FATAL_ERROR "bloat.svg lacks its start, legend or axis label")
endif()
# One client pinned to each CPU the process may use (at most 4): a
# select run each, of one client, on that CPU.
string(JSON ncpu LENGTH "${json}" select_cpu)
if(ncpu LESS 1 OR ncpu GREATER 4)
  message(FATAL_ERROR "results.json select_cpu has ${ncpu} runs")
endif()
math(EXPR last "${ncpu} - 1")
foreach(i RANGE ${last})
  string(JSON c GET "${json}" select_cpu ${i} cpus 0)
  string(JSON clients GET "${json}" select_cpu ${i} select 0 clients)
  string(JSON tps GET "${json}" select_cpu ${i} select 0 tps)
  if(NOT c GREATER_EQUAL 0 OR NOT clients EQUAL 1)
    message(FATAL_ERROR "select_cpu[${i}]: CPU '${c}', ${clients} clients")
  endif()
  check_positive("select_cpu[${i}].tps" "${tps}")
endforeach()

file(READ ${OUT}/report.md md)
foreach(want "## Select-only transactions" "keel bench select --scale 1"
        "max_sessions 400 against 402" "### One client on each CPU"
        "--cpus" "## Catalog cache bloat"
        "## Primary-key lookup" "## Buffer pool hot paths" "Reading: ")
  string(FIND "${md}" "${want}" at)
  if(at LESS 0)
    message(FATAL_ERROR "report.md lacks '${want}'")
  endif()
endforeach()
# Fails unless `value` (results.json's, to four decimals) is what the
# report printed in `cell` ("307 ns", "1.027x", ...), to its decimals.
function(check_printed what value cell)
  if(NOT cell MATCHES "^(-?)([0-9]+)(\\.([0-9]+))?")
    message(FATAL_ERROR "report.md: '${cell}' (${what}) is not a figure")
  endif()
  string(LENGTH "${CMAKE_MATCH_4}" d)
  set(frac "${CMAKE_MATCH_4}")
  if(d EQUAL 0)
    set(frac 0)
  endif()
  # In units of 1e-5: the printed figure, and half its last place plus
  # half of value's own.
  math(EXPR scale "1")
  foreach(i RANGE 1 5)
    if(i GREATER d)
      math(EXPR scale "${scale} * 10")
    endif()
  endforeach()
  math(EXPR p "${CMAKE_MATCH_2} * 100000 + ${frac} * ${scale}")
  math(EXPR tol "${scale} / 2 + 5")
  math(EXPR lo "${p} - ${tol}")
  math(EXPR hi "${p} + ${tol}")
  if(CMAKE_MATCH_1 STREQUAL "-")
    math(EXPR t "-${hi}")
    math(EXPR hi "-${lo}")
    set(lo ${t})
  endif()
  if(value LESS "${lo}e-5" OR value GREATER "${hi}e-5")
    message(FATAL_ERROR "results.json ${what} is ${value}, report.md "
                        "printed ${cell}")
  endif()
endfunction()

# The targets: each judged once.  results.json lists them in the order of
# report.md's Targets table, one row each, every id once and all of them;
# each row shows the same reading, limit, figure and verdict as the JSON.
set(want_ids lookup_ns select_1_client_ns select_2_over_1 select_64_over_2
  padded_over_packed max_sessions_402_over_400 bloat_throughput
  catcache_hit_time catcache_blocks catcache_rss wal_commit_1_client
  wal_group_commit pgbench_select_simple pgbench_select_prepared
  pgbench_select_cpu_simple pgbench_select_cpu_prepared pgbench_tpcb
  pgbench_serve_64_over_2 wal_volume_checkpoint wal_volume_steady)
list(LENGTH want_ids nwant)
string(JSON ntargets LENGTH "${json}" targets)
string(REGEX MATCH "## Targets\n\n[^\n]*\n\n[^\n]*\n[^\n]*\n(\\|[^\n]*\n)+"
  table "${md}")
string(REGEX MATCHALL "\n\\| `[a-z0-9_]+` \\|" rows_md "${table}")
list(LENGTH rows_md nrows_md)
if(NOT ntargets EQUAL nwant OR NOT nrows_md EQUAL nwant)
  message(FATAL_ERROR "results.json lists ${ntargets} targets, report.md "
                      "${nrows_md}, not ${nwant}")
endif()

# A verdict's words (bench_verdict_text()), numbered as bench/stats.h
# lists them.
set(verdicts "met" "within the noise" "inconclusive, the runs are not paired"
  "inconclusive, one round gives no interval" "not met")

# The verdict (its words, into `out`) a target `dir` ("at least", "at
# most", "within of 1", with bounds lo..hi for the last, else limit) gives
# the printed figure v or the printed interval ci_lo..ci_hi, as
# bench/stats.c's rules give it.  CMake compares numbers as doubles, as
# the report does once it has rounded them to what it prints.
function(verdict_of dir limit lo_bound hi_bound interval v ci_lo ci_hi out)
  if(NOT interval)
    set(ci_lo ${v})
    set(ci_hi ${v})
  endif()
  if(dir STREQUAL "at least")
    if(ci_lo GREATER_EQUAL limit)
      set(r 0)
    elseif(ci_hi LESS limit)
      set(r 4)
    else()
      set(r 1)
    endif()
  elseif(dir STREQUAL "at most")
    if(ci_hi LESS_EQUAL limit)
      set(r 0)
    elseif(ci_lo GREATER limit)
      set(r 4)
    else()
      set(r 1)
    endif()
  else()
    if(ci_lo GREATER_EQUAL lo_bound AND ci_hi LESS_EQUAL hi_bound)
      set(r 0)
    elseif(ci_lo GREATER hi_bound OR ci_hi LESS lo_bound)
      set(r 4)
    else()
      set(r 1)
    endif()
  endif()
  list(GET verdicts ${r} w)
  set(${out} "${w}" PARENT_SCOPE)
endfunction()

set(prev -1)
set(seen_ids "")
set(noise_rows 0)
math(EXPR last "${ntargets} - 1")
foreach(i RANGE ${last})
  foreach(k id what target direction limit interval verdict value rounds)
    string(JSON t_${k} GET "${json}" targets ${i} ${k})
  endforeach()
  list(GET want_ids ${i} want_id)
  list(FIND seen_ids "${t_id}" again)
  if(NOT t_id STREQUAL want_id OR again GREATER_EQUAL 0)
    message(FATAL_ERROR "results.json targets.${i} is '${t_id}', not "
                        "'${want_id}'")
  endif()
  list(APPEND seen_ids "${t_id}")
  # Its row, once: id, reading, limit, figure, interval, verdict.
  string(REGEX MATCHALL "\n\\| `${t_id}` \\|" once "${table}")
  list(LENGTH once nonce)
  string(FIND "${table}" "\n| `${t_id}` | ${t_what} | ${t_target} | " at)
  if(NOT nonce EQUAL 1 OR at LESS 0)
    message(FATAL_ERROR "report.md has ${nonce} rows of target '${t_id}', "
                        "or none as results.json has it ('${t_what}', "
                        "'${t_target}')")
  endif()
  if(NOT at GREATER prev)
    message(FATAL_ERROR "results.json lists '${t_id}' out of order")
  endif()
  set(prev ${at})
  math(EXPR at "${at} + 1")
  string(SUBSTRING "${table}" ${at} -1 row)
  string(FIND "${row}" "\n" eol)
  string(SUBSTRING "${row}" 0 ${eol} row)
  if(NOT row MATCHES "^\\|[^|]*\\|[^|]*\\|[^|]*\\| ([^|]*) \\| ([^|]*) \\| ([^|]*) \\|$")
    message(FATAL_ERROR "report.md: the row of '${t_id}': ${row}")
  endif()
  set(fig "${CMAKE_MATCH_1}")
  string(STRIP "${CMAKE_MATCH_2}" ci)
  set(said "${CMAKE_MATCH_3}")
  list(FIND verdicts "${said}" known)
  if(NOT said STREQUAL t_verdict OR (known LESS 0 AND
     NOT said STREQUAL "not measured"))
    message(FATAL_ERROR "report.md says '${said}' of '${t_id}', "
                        "results.json '${t_verdict}'")
  endif()
  if(said STREQUAL "not measured")
    if(NOT fig STREQUAL "not measured")
      message(FATAL_ERROR "report.md: '${t_id}' not measured, yet ${fig}")
    endif()
    continue()
  endif()
  # Resident memory may not grow at all over a short run (memory the
  # allocator had already, or, under a sanitizer, its own mappings): zero
  # is a reading there; so is a server's CPU time over runs as short as
  # --quick's, in clock ticks of 10 ms.
  if(t_id MATCHES "^(catcache_rss|pgbench_select_cpu_simple|pgbench_select_cpu_prepared)$")
    if(NOT t_value MATCHES "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$")
      message(FATAL_ERROR "results.json targets.${i}.value is not a number: "
                          "'${t_value}'")
    endif()
  else()
    check_positive("targets.${i}.value" "${t_value}")
  endif()
  check_printed("targets.${i}.value" "${t_value}" "${fig}")
  # The verdict the printed figures give.
  set(lo_bound "")
  set(hi_bound "")
  if(t_direction STREQUAL "within of 1")
    if(NOT t_target MATCHES "^within ([0-9.]+)-([0-9.]+)")
      message(FATAL_ERROR "report.md: '${t_id}' limit '${t_target}'")
    endif()
    set(lo_bound ${CMAKE_MATCH_1})
    set(hi_bound ${CMAKE_MATCH_2})
  endif()
  if(NOT fig MATCHES "^(-?[0-9.]+)")
    message(FATAL_ERROR "report.md: '${t_id}' figure '${fig}'")
  endif()
  set(v ${CMAKE_MATCH_1})
  if(t_interval AND ci STREQUAL "one round")
    set(want "inconclusive, one round gives no interval")
  elseif(t_interval AND ci STREQUAL "not paired")
    set(want "inconclusive, the runs are not paired")
  elseif(t_interval)
    if(NOT ci MATCHES "^(-?[0-9.]+)\\.\\.(-?[0-9.]+)$")
      message(FATAL_ERROR "report.md: '${t_id}' interval '${ci}'")
    endif()
    verdict_of("${t_direction}" "${t_limit}" "${lo_bound}" "${hi_bound}" ON
               ${v} ${CMAKE_MATCH_1} ${CMAKE_MATCH_2} want)
  else()
    if(NOT ci STREQUAL "")
      message(FATAL_ERROR "report.md: '${t_id}' is judged on its figure, "
                          "yet shows an interval '${ci}'")
    endif()
    verdict_of("${t_direction}" "${t_limit}" "${lo_bound}" "${hi_bound}" OFF
               ${v} "" "" want)
  endif()
  if(NOT said STREQUAL want)
    message(FATAL_ERROR "report.md: '${t_id}' reads '${said}' where its "
                        "figures (${fig}, ${ci}) give '${want}'")
  endif()
  if(said STREQUAL "within the noise")
    math(EXPR noise_rows "${noise_rows} + 1")
  endif()
  set(verdict_${t_id} "${said}")
  set(limit_${t_id} "${t_target}")
endforeach()
message(STATUS "bench report smoke: ${noise_rows} targets within the noise")

# Where a reading quotes a target, it quotes its limit and verdict as the
# table has them; the readings judge nothing themselves.
string(REGEX MATCHALL "target `[a-z0-9_]+` \\([^)]*\\): [a-z, ]+" quotes
  "${md}")
list(LENGTH quotes nquotes)
if(nquotes LESS 8)
  message(FATAL_ERROR "report.md quotes ${nquotes} verdicts:\n${quotes}")
endif()
foreach(q ${quotes})
  string(REGEX MATCH "^target `([a-z0-9_]+)` \\(([^)]*)\\): ([a-z, ]+)$" m
    "${q}")
  set(q_id "${CMAKE_MATCH_1}")
  set(q_limit "${CMAKE_MATCH_2}")
  string(REGEX REPLACE "[, ]+$" "" q_verdict "${CMAKE_MATCH_3}")
  if(NOT DEFINED verdict_${q_id})
    message(FATAL_ERROR "report.md quotes '${q_id}', not a measured target")
  endif()
  if(NOT q_limit STREQUAL limit_${q_id}
     OR NOT q_verdict STREQUAL verdict_${q_id})
    message(FATAL_ERROR "report.md quotes '${q}', the table: "
                        "'${limit_${q_id}}': '${verdict_${q_id}}'")
  endif()
endforeach()

# The other readings are information: no verdict, each naming a target.
string(REGEX MATCH "not judged:\n\n[^\n]*\n[^\n]*\n(\\|[^\n]*\n)+" info
  "${md}")
string(JSON ninfo LENGTH "${json}" information)
string(REGEX MATCHALL "\n\\| `" info_rows "${info}")
list(LENGTH info_rows ninfo_md)
if(ninfo LESS 5 OR NOT ninfo EQUAL ninfo_md)
  message(FATAL_ERROR "results.json has ${ninfo} readings as information, "
                      "report.md ${ninfo_md}")
endif()
if(info MATCHES "\\| (met|not met|within the noise|inconclusive[^|]*) \\|")
  message(FATAL_ERROR "report.md judges a reading given as information")
endif()
math(EXPR last "${ninfo} - 1")
foreach(i RANGE ${last})
  string(JSON it GET "${json}" information ${i} target)
  string(JSON iv GET "${json}" information ${i} value)
  list(FIND want_ids "${it}" at)
  if(at LESS 0)
    message(FATAL_ERROR "results.json information.${i} informs '${it}'")
  endif()
  check_positive("information.${i}.value" "${iv}")
endforeach()

# The memory targets' figures are what the benchmarks measured: the most
# blocks of a pruned bloat session, and the catalog cache benchmark's
# resident memory growth, each over the memory target (the JSON's
# integers: in thousandths, rounded).
string(JSON target GET "${json}" bloat on memory_target)
string(JSON nsess LENGTH "${json}" bloat on sessions)
set(most 0)
math(EXPR lastsess "${nsess} - 1")
foreach(s RANGE ${lastsess})
  string(JSON b GET "${json}" bloat on sessions ${s} final_block_bytes)
  if(b GREATER most)
    set(most ${b})
  endif()
endforeach()
string(JSON rss GET "${json}" catcache bloat_rss_growth_pruning_on)
string(JSON cc_target GET "${json}" catcache memory_target_bytes)
string(JSON cc_blocks GET "${json}" catcache bloat_block_bytes_pruning_on)
# (Zero growth is a reading: see the targets' check above.)
if(NOT rss MATCHES "^[0-9]+$")
  message(FATAL_ERROR "results.json catcache.bloat_rss_growth_pruning_on is "
                      "not a count: '${rss}'")
endif()
check_positive("catcache.bloat_block_bytes_pruning_on" "${cc_blocks}")
foreach(pair "catcache_blocks;${most};${target}"
        "catcache_rss;${rss};${cc_target}")
  list(GET pair 0 id)
  list(GET pair 1 num)
  list(GET pair 2 den)
  list(FIND want_ids ${id} i)
  string(JSON v GET "${json}" targets ${i} value)
  # (string(JSON) gives the three decimals back with binary noise.)
  if(NOT v MATCHES "^([0-9]+)(\\.([0-9]*))?$")
    message(FATAL_ERROR "results.json ${id} is '${v}'")
  endif()
  string(SUBSTRING "${CMAKE_MATCH_3}000000" 0 6 dec)
  math(EXPR thousandths
    "(${CMAKE_MATCH_1} * 1000000 + 1${dec} - 1000000 + 500) / 1000")
  math(EXPR want "(${num} * 1000 + ${den} / 2) / ${den}")
  math(EXPR d "${thousandths} - ${want}")
  if(d GREATER 1 OR d LESS -1)
    message(FATAL_ERROR "results.json ${id} is ${v}, not ${num} / ${den}")
  endif()
endforeach()

foreach(r select_2_over_1_clients select_padded_over_packed_2_clients
        select_padded_over_packed_64_clients select_max_sessions_402_over_400)
  string(JSON lo GET "${json}" intervals ${r} ci_low)
  string(JSON hi GET "${json}" intervals ${r} ci_high)
  string(JSON rr GET "${json}" intervals ${r} ratio)
  if(NOT lo LESS_EQUAL hi OR NOT rr GREATER 0)
    message(FATAL_ERROR "results.json intervals.${r}: ${rr} (${lo}, ${hi})")
  endif()
endforeach()
string(JSON nlay LENGTH "${json}" padded_over_packed)
if(NOT nlay EQUAL 5)
  message(FATAL_ERROR "results.json padded_over_packed has ${nlay} counts")
endif()

# The select steps pin their clients round-robin to the CPUs the process
# may use (nproc counts them), if there are at most 16.
execute_process(COMMAND nproc OUTPUT_VARIABLE ncpus
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE nproc_rc)
if(nproc_rc EQUAL 0 AND ncpus LESS_EQUAL 16)
  if(NOT md MATCHES "--layout padded,packed [^`]*--cpus [0-9]"
     OR NOT md MATCHES "--max-sessions 400,402 [^`]*--cpus [0-9]"
     OR NOT md MATCHES "the clients are pinned round-robin")
    message(FATAL_ERROR "report.md: the select steps are not pinned")
  endif()
elseif(nproc_rc EQUAL 0 AND md MATCHES "--layout padded,packed [^`]*--cpus")
  message(FATAL_ERROR "report.md: select pinned on ${ncpus} CPUs")
endif()

# A printed figure (three decimals; an interval of a mean ratio may start
# below 0) in half-thousandths, nudged by d (-1 or 1 half-thousandth).
function(half_thousandths x d out)
  if(NOT x MATCHES "^(-?)([0-9]+)\\.([0-9][0-9][0-9])$")
    message(FATAL_ERROR "report.md: '${x}' is not a ratio to 3 decimals")
  endif()
  math(EXPR v
    "${CMAKE_MATCH_1}(${CMAKE_MATCH_2} * 1000 + 1${CMAKE_MATCH_3} - 1000) * 2 + ${d}")
  set(${out} ${v} PARENT_SCOPE)
endfunction()

# max_sessions 402 over 400: the reading quotes the target, and says on
# which side of 1 the interval lies when, as printed, it excludes 1.
if(NOT md MATCHES "400 at 64 clients \\(([0-9.]+)x, rounds [0-9.]+-[0-9.]+, 95% CI of the mean (-?[0-9.]+)-(-?[0-9.]+)\\); target `max_sessions_402_over_400` \\([^)]*\\): [a-z, ]+\\.( The interval lies ([a-z]+) 1: 402 is ([a-z]+) than 400 beyond the noise in this run\\.)?\n")
  message(FATAL_ERROR "report.md: no reading of max_sessions 402 over 400")
endif()
set(ms_where "${CMAKE_MATCH_5}/${CMAKE_MATCH_6}")
if(CMAKE_MATCH_2 GREATER 1)
  set(ms_want "above/faster")
elseif(CMAKE_MATCH_3 LESS 1)
  set(ms_want "below/slower")
else()
  set(ms_want "/")
endif()
if(NOT ms_where STREQUAL ms_want)
  message(FATAL_ERROR "report.md: max_sessions says '${ms_where}' of "
                      "${CMAKE_MATCH_2}-${CMAKE_MATCH_3}")
endif()

# The bloat runs' throughput, pruning on over off: the ratio and interval
# the reading prints are results.json's.
if(NOT md MATCHES "throughput with pruning on is ([0-9.]+)x that with it off \\(the median of ${SEL_RUNS} pairs of runs, alternately off then on and on then off, each finding its memory already mapped after an uncounted warm-up with pruning off; ([^)]*)\\)[^;]*; target `bloat_throughput`")
  message(FATAL_ERROR "report.md: no bloat throughput ratio")
endif()
set(bloat_r ${CMAKE_MATCH_1})
set(bloat_span "${CMAKE_MATCH_2}")
string(JSON v GET "${json}" bloat tps_on_over_off)
check_printed("bloat.tps_on_over_off" "${v}" "${bloat_r}")
if(NOT bloat_span MATCHES "95% CI of the mean (-?[0-9.]+)-(-?[0-9.]+)$")
  message(FATAL_ERROR "report.md: no bloat interval in '${bloat_span}'")
endif()
set(lo_printed ${CMAKE_MATCH_1})
set(hi_printed ${CMAKE_MATCH_2})
string(JSON v GET "${json}" bloat tps_on_over_off_ci 0)
check_printed("bloat.tps_on_over_off_ci[0]" "${v}" "${lo_printed}")
string(JSON v GET "${json}" bloat tps_on_over_off_ci 1)
check_printed("bloat.tps_on_over_off_ci[1]" "${v}" "${hi_printed}")

# Padded over packed at every count, information: each count named in the
# sentence for the side of 1 its (Bonferroni) interval lies on, and
# results.json's side one that the printed interval gives.
string(REGEX MATCH "Padded over packed, by clients[^\n]*" lay "${md}")
string(REGEX MATCHALL
  "[0-9]+: [0-9.]+x \\([^)]*\\)" counts "${lay}")
list(LENGTH counts ncounts)
if(NOT ncounts EQUAL 5)
  message(FATAL_ERROR "report.md: ${ncounts} layout ratios, not 5:\n${lay}")
endif()
if(lay MATCHES "[Tt]arget[^.]*: (met|not met|within the noise)")
  message(FATAL_ERROR "report.md judges the layouts at every count:\n${lay}")
endif()
set(sentences "At [0-9.]+%, padded is faster beyond the noise at ([^A-Z]*)\\. "
  "At [0-9.]+%, padded and packed are within the noise of each other at ([^A-Z]*)\\. "
  "At [0-9.]+%, padded is slower beyond the noise at ([^A-Z]*)\\. "
  "There is no interval at ([^A-Z]*)\\. ")
set(side_words "faster beyond the noise" "within the noise"
  "slower beyond the noise" "no interval")
set(ci 0)
foreach(c ${counts})
  if(NOT c MATCHES "^([0-9]+): ([0-9.]+)x \\(([^)]*)\\)$")
    message(FATAL_ERROR "report.md: layout ratio '${c}'")
  endif()
  set(n ${CMAKE_MATCH_1})
  set(span "${CMAKE_MATCH_3}")
  # The side of 1 the interval lies on (3: none); a printed end of
  # exactly 1.000 may be either.
  if(span MATCHES "^[0-9.]+-[0-9.]+, CI (-?[0-9.]+)-(-?[0-9.]+)$")
    set(ci_lo ${CMAKE_MATCH_1})
    set(ci_hi ${CMAKE_MATCH_2})
    set(sides "")
    foreach(d -1 1)
      half_thousandths(${ci_lo} ${d} L)
      half_thousandths(${ci_hi} ${d} H)
      if(L GREATER 2000)
        list(APPEND sides 0)
      elseif(H LESS 2000)
        list(APPEND sides 2)
      else()
        list(APPEND sides 1)
      endif()
    endforeach()
  elseif(span STREQUAL "one round" OR span STREQUAL "not paired")
    set(sides 3)
  else()
    message(FATAL_ERROR "report.md: layout ratio '${c}' has no interval")
  endif()
  string(JSON js GET "${json}" padded_over_packed ${ci} side)
  string(JSON jc GET "${json}" padded_over_packed ${ci} clients)
  list(FIND side_words "${js}" jside)
  list(FIND sides "${jside}" ok)
  if(NOT jc EQUAL n OR ok LESS 0)
    message(FATAL_ERROR "results.json padded_over_packed.${ci}: ${jc} "
                        "clients, '${js}'; report.md: ${c}")
  endif()
  math(EXPR ci "${ci} + 1")
  set(named FALSE)
  foreach(side ${sides})
    list(GET sentences ${side} re)
    if(lay MATCHES "${re}")
      if(" ${CMAKE_MATCH_1} " MATCHES "[ ,]${n}[ ,]")
        set(named TRUE)
      endif()
    endif()
  endforeach()
  if(NOT named)
    message(FATAL_ERROR "report.md: ${c} is not named where its interval "
                        "lies:\n${lay}")
  endif()
endforeach()

# The catalog cache's time ratio: the reading names the side of 1 its
# interval (printed to four decimals) lies on when it excludes 1.
if(NOT md MATCHES "\\(95% CI ([0-9]+\\.[0-9][0-9][0-9][0-9])\\.\\.([0-9]+\\.[0-9][0-9][0-9][0-9]), ([a-z ]+)\\); target `catcache_hit_time`")
  message(FATAL_ERROR "report.md: no catalog cache time ratio reading")
endif()
set(cc_lo ${CMAKE_MATCH_1})
set(cc_hi ${CMAKE_MATCH_2})
set(cc_side "${CMAKE_MATCH_3}")
if(cc_lo GREATER 1)
  set(cc_want "slower beyond the noise")
elseif(cc_hi LESS 1)
  set(cc_want "faster beyond the noise")
else()
  set(cc_want "no difference resolved")
endif()
if(NOT cc_side STREQUAL cc_want)
  message(FATAL_ERROR "report.md: the catalog cache interval "
                      "${cc_lo}..${cc_hi} reads '${cc_side}'")
endif()
if(md MATCHES "(^|[ (|])-?(nan|inf)([ )|.,x]|$)")
  message(FATAL_ERROR "report.md holds a figure that is not a number")
endif()
# The real pgbench against keel serve and PostgreSQL 15 (--quick: scale 1,
# 1 and 2 clients, 2000 select-only or 50 tpcb-like transactions per
# client).  Without pgbench or PostgreSQL 15 the step says it was skipped,
# and why, and the rest of the report stands.
string(JSON cmp GET "${json}" compare)
string(JSON cmp_skip_type TYPE "${cmp}" skipped)
string(JSON cmp_failed GET "${cmp}" failed)
if(cmp_failed)
  string(JSON why GET "${cmp}" skipped)
  message(FATAL_ERROR "the pgbench comparison failed: ${why}")
endif()
find_program(PGBENCH pgbench PATHS /usr/lib/postgresql/15/bin NO_DEFAULT_PATH)
if(NOT PGBENCH)
  find_program(PGBENCH pgbench)
endif()
if(PGBENCH AND EXISTS /usr/lib/postgresql/15/bin/postgres
   AND EXISTS /usr/lib/postgresql/15/bin/initdb)
  set(have_pg ON)
else()
  set(have_pg OFF)
endif()
foreach(want "## The real pgbench: keel serve beside PostgreSQL 15"
        "keel bench compare --quick")
  string(FIND "${md}" "${want}" at)
  if(at LESS 0)
    message(FATAL_ERROR "report.md lacks '${want}'")
  endif()
endforeach()
if(NOT have_pg)
  if(NOT cmp_skip_type STREQUAL "STRING"
     OR NOT md MATCHES "The comparison was skipped: [^\n]*not installed")
    message(FATAL_ERROR "without PostgreSQL 15 the comparison is not "
                        "reported as skipped")
  endif()
else()
  if(NOT cmp_skip_type STREQUAL "NULL")
    string(JSON why GET "${cmp}" skipped)
    message(FATAL_ERROR "the pgbench comparison was skipped: ${why}")
  endif()
  # PostgreSQL as a default install has it: durable commits.
  foreach(kv fsync=on synchronous_commit=on max_connections=100)
    string(REPLACE "=" ";" kv "${kv}")
    list(GET kv 0 k)
    list(GET kv 1 want)
    string(JSON v GET "${cmp}" postgres_settings ${k})
    if(NOT v STREQUAL want)
      message(FATAL_ERROR "compare: PostgreSQL ran with ${k}=${v}")
    endif()
  endforeach()
  string(JSON nruns LENGTH "${cmp}" runs)
  if(NOT nruns EQUAL 8)
    message(FATAL_ERROR "compare: ${nruns} runs, not 8 (2 scripts, 2 modes, "
                        "2 client counts)")
  endif()
  set(cpu_keel_seen OFF)
  set(cpu_pg_seen OFF)
  set(lowest_simple "")
  set(seen "")
  math(EXPR last "${nruns} - 1")
  foreach(i RANGE ${last})
    string(JSON r GET "${cmp}" runs ${i})
    string(JSON script GET "${r}" script)
    string(JSON mode GET "${r}" mode)
    string(JSON clients GET "${r}" clients)
    string(JSON threads GET "${r}" threads)
    string(JSON first GET "${r}" first)
    list(APPEND seen "${script}/${mode}/${clients}")
    # Interleaved: keel first, then PostgreSQL first, and so on.
    math(EXPR odd "${i} % 2")
    if((odd AND NOT first STREQUAL "postgres")
       OR (NOT odd AND NOT first STREQUAL "keel"))
      message(FATAL_ERROR "compare.runs[${i}]: ${first} ran first")
    endif()
    if(clients LESS 2)
      set(want_threads ${clients})
    else()
      set(want_threads 2)
    endif()
    if(NOT threads EQUAL want_threads)
      message(FATAL_ERROR "compare.runs[${i}]: ${threads} threads")
    endif()
    if(script STREQUAL "select-only")
      math(EXPR want_txns "${clients} * 2000")
    else()
      math(EXPR want_txns "${clients} * 50")
    endif()
    foreach(srv keel postgres)
      string(JSON tps GET "${r}" ${srv} tps)
      string(JSON txns GET "${r}" ${srv} transactions)
      string(JSON failed GET "${r}" ${srv} failed)
      string(JSON cpu GET "${r}" ${srv} cpu_s)
      string(JSON us GET "${r}" ${srv} cpu_us_per_txn)
      check_positive("compare.runs[${i}].${srv}.tps" "${tps}")
      if(NOT txns EQUAL want_txns OR NOT failed EQUAL 0)
        message(FATAL_ERROR "compare.runs[${i}].${srv}: ${txns} transactions "
                            "(${failed} failed), not ${want_txns}")
      endif()
      if(NOT cpu MATCHES "^[0-9]+\\.[0-9]+$" OR NOT us MATCHES "^[0-9]+\\.[0-9]+$")
        message(FATAL_ERROR "compare.runs[${i}].${srv}: CPU ${cpu} s, ${us} us")
      endif()
      if(script STREQUAL "select-only")
        if(cpu GREATER 0 AND srv STREQUAL "keel")
          set(cpu_keel_seen ON)
        elseif(cpu GREATER 0)
          set(cpu_pg_seen ON)
        endif()
      endif()
    endforeach()
    # keel's over PostgreSQL's.
    string(JSON ratio GET "${r}" tps_ratio)
    if(NOT ratio GREATER 0)
      message(FATAL_ERROR "compare.runs[${i}].tps_ratio is ${ratio}")
    endif()
    if(script STREQUAL "select-only" AND mode STREQUAL "simple"
       AND (lowest_simple STREQUAL "" OR ratio LESS lowest_simple))
      set(lowest_simple ${ratio})
    endif()
  endforeach()
  foreach(want select-only/simple/1 select-only/simple/2
          select-only/prepared/1 select-only/prepared/2 tpcb-like/simple/1
          tpcb-like/simple/2 tpcb-like/prepared/1 tpcb-like/prepared/2)
    list(FIND seen "${want}" at)
    if(at LESS 0)
      message(FATAL_ERROR "compare lacks the run ${want}: ${seen}")
    endif()
  endforeach()
  if(NOT cpu_keel_seen OR NOT cpu_pg_seen)
    message(FATAL_ERROR "compare: no CPU time read over the select-only "
                        "runs (keel: ${cpu_keel_seen}, postgres: "
                        "${cpu_pg_seen})")
  endif()
  # After the tpcb-like runs each server's balances add up to its history.
  foreach(srv keel postgres)
    string(JSON up GET "${cmp}" balances ${srv} add_up)
    string(JSON a GET "${cmp}" balances ${srv} accounts)
    string(JSON h GET "${cmp}" balances ${srv} history)
    if(NOT up OR NOT a EQUAL h)
      message(FATAL_ERROR "compare: ${srv}'s balances: ${a} against the "
                          "history's ${h}, add_up ${up}")
    endif()
  endforeach()
  # The select-only simple target reads the lowest of those ratios, as
  # printed (two decimals).
  string(JSON ntargets LENGTH "${json}" targets)
  math(EXPR tl "${ntargets} - 1")
  foreach(i RANGE ${tl})
    string(JSON id GET "${json}" targets ${i} id)
    if(id STREQUAL "pgbench_select_simple")
      string(JSON v GET "${json}" targets ${i} value)
      string(JSON verdict GET "${json}" targets ${i} verdict)
      # |v - lowest| <= 0.005, in ten-thousandths.
      foreach(x v lowest_simple)
        string(REGEX MATCH "^([0-9]+)\\.?([0-9]*)" m "${${x}}")
        string(SUBSTRING "${CMAKE_MATCH_2}0000" 0 4 dec)
        math(EXPR ${x}_e4 "${CMAKE_MATCH_1} * 10000 + 1${dec} - 10000")
      endforeach()
      math(EXPR gap "${v_e4} - ${lowest_simple_e4}")
      if(gap GREATER 50 OR gap LESS -50)
        message(FATAL_ERROR "target pgbench_select_simple reads ${v}, the "
                            "lowest simple select-only ratio is "
                            "${lowest_simple}")
      endif()
    endif()
  endforeach()
  # The round-trip floor, measured before the pgbench runs at the same
  # client counts (two runs each with --quick): every run's counts agree
  # with the bytes the answering side moved; the report shows it beside
  # the tables, and as information under the select-only targets, where
  # the simple protocol's tps reading is the lowest of the floor's round
  # trips a second over PostgreSQL's tps.
  string(JSON fl_type TYPE "${cmp}" floor)
  if(NOT fl_type STREQUAL "OBJECT")
    string(JSON why GET "${cmp}" floor_error)
    message(FATAL_ERROR "compare: no round-trip floor: ${why}")
  endif()
  string(JSON npts LENGTH "${cmp}" floor points)
  if(NOT npts EQUAL 2)
    message(FATAL_ERROR "compare.floor: ${npts} client counts, not 2")
  endif()
  set(floor_lowest "")
  foreach(i 0 1)
    string(JSON p GET "${cmp}" floor points ${i})
    string(JSON c GET "${p}" clients)
    string(JSON rps GET "${p}" round_trips_per_s)
    math(EXPR want_c "${i} + 1")
    string(JSON nfr LENGTH "${p}" runs)
    if(NOT c EQUAL want_c OR NOT nfr EQUAL 2)
      message(FATAL_ERROR "compare.floor.points[${i}]: ${c} clients, ${nfr} "
                          "runs")
    endif()
    foreach(r 0 1)
      string(JSON rt GET "${p}" runs ${r} round_trips)
      string(JSON bin GET "${p}" runs ${r} answer_bytes_in)
      string(JSON bout GET "${p}" runs ${r} answer_bytes_out)
      math(EXPR want_in "${rt} * 60")
      math(EXPR want_out "${rt} * 120")
      if(NOT rt GREATER 0 OR NOT bin EQUAL want_in OR NOT bout EQUAL want_out)
        message(FATAL_ERROR "compare.floor.points[${i}].runs[${r}]: ${rt} "
                            "round trips, ${bin} bytes in, ${bout} out")
      endif()
    endforeach()
    # The floor over PostgreSQL's simple select-only tps at this count, in
    # hundredths (integer parts: close enough for a check to 0.02).
    foreach(k RANGE ${last})
      string(JSON r GET "${cmp}" runs ${k})
      string(JSON script GET "${r}" script)
      string(JSON mode GET "${r}" mode)
      string(JSON clients GET "${r}" clients)
      if(script STREQUAL "select-only" AND mode STREQUAL "simple"
         AND clients EQUAL c)
        string(JSON pg_tps GET "${r}" postgres tps)
        string(REGEX REPLACE "\\..*" "" pg_int "${pg_tps}")
        string(REGEX REPLACE "\\..*" "" rps_int "${rps}")
        math(EXPR ratio "${rps_int} * 100 / ${pg_int}")
        if(floor_lowest STREQUAL "" OR ratio LESS floor_lowest)
          set(floor_lowest ${ratio})
        endif()
      endif()
    endforeach()
  endforeach()
  set(floor_infos 0)
  math(EXPR il "${ninfo} - 1")
  foreach(i RANGE ${il})
    string(JSON it GET "${json}" information ${i} target)
    string(JSON what GET "${json}" information ${i} what)
    if(what MATCHES "round-trip floor")
      math(EXPR floor_infos "${floor_infos} + 1")
      if(it STREQUAL "pgbench_select_simple")
        string(JSON iv GET "${json}" information ${i} value)
        string(REGEX MATCH "^([0-9]+)\\.?([0-9]*)" m "${iv}")
        string(SUBSTRING "${CMAKE_MATCH_2}00" 0 2 dec)
        math(EXPR iv_e2 "${CMAKE_MATCH_1} * 100 + 1${dec} - 100")
        math(EXPR gap "${iv_e2} - ${floor_lowest}")
        if(gap GREATER 2 OR gap LESS -2)
          message(FATAL_ERROR "the floor's reading under "
                              "pgbench_select_simple is ${iv}, the lowest "
                              "floor over PostgreSQL ${floor_lowest}/100")
        endif()
      endif()
    endif()
  endforeach()
  if(NOT md MATCHES "\n\\| 2 \\| [0-9]+ \\([0-9]+-[0-9]+\\) \\| [0-9.]+ \\| [0-9.]+ / [0-9.]+ \\| [0-9.]+ / [0-9.]+ \\| [0-9.]+ / [0-9.]+ \\|\n")
    message(FATAL_ERROR "report.md lacks the floor's row for 2 clients")
  endif()
  if(NOT floor_infos EQUAL 4)
    message(FATAL_ERROR "results.json has ${floor_infos} readings of the "
                        "round-trip floor as information, not 4")
  endif()
  foreach(want "Transactions per second:" "Server CPU time per transaction"
          "The round-trip floor, measured in the same run"
          "highest reachable tps ratio"
          "after its tpcb-like runs (psql)" "they add up")
    string(FIND "${md}" "${want}" at)
    if(at LESS 0)
      message(FATAL_ERROR "report.md lacks '${want}'")
    endif()
  endforeach()
  file(READ ${OUT}/compare-select.svg svg)
  if(NOT svg MATCHES ">keel serve, simple<"
     OR NOT svg MATCHES ">PostgreSQL 15, prepared<")
    message(FATAL_ERROR "compare-select.svg lacks its legend")
  endif()
endif()
# Without PostgreSQL where it is looked for: skipped, saying why, exit 0.
execute_process(
  COMMAND ${KEEL} bench compare --quick --pg-bin ${OUT}/no-postgres
          --json ${OUT}/skipped.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(READ ${OUT}/skipped.json sj)
string(JSON why GET "${sj}" skipped)
if(NOT rc EQUAL 0 OR NOT why MATCHES "not installed")
  message(FATAL_ERROR "compare without PostgreSQL: status ${rc}, '${why}'")
endif()
keel_check_bad_usage(${KEEL} bench compare --clients 0)
keel_check_bad_usage(${KEEL} bench compare --clients 1,91)
keel_check_bad_usage(${KEEL} bench compare --seconds 0)
keel_check_bad_usage(${KEEL} bench compare --transactions 5)
keel_check_bad_usage(${KEEL} bench compare --seconds 2 --transactions 5,5)
keel_check_bad_usage(${KEEL} bench compare DIR)
keel_check_bad_usage(${KEEL} bench report --out)
keel_check_bad_usage(${KEEL} bench select --clients 0)
keel_check_bad_usage(${KEEL} bench bloat --transactions)
keel_check_bad_usage(${KEEL} bench report --scale 10q)
keel_check_bad_usage(${KEEL} bench report --seconds 0.001)
keel_check_bad_usage(${KEEL} bench select --seconds abc)
keel_check_bad_usage(${KEEL} bench select --quick)
# Lists: digits only, no empty element, no sign or blank.
keel_check_bad_usage(${KEEL} bench select --clients +4)
keel_check_bad_usage(${KEEL} bench select --clients 1,2,)
keel_check_bad_usage(${KEEL} bench select --max-sessions 400,,402)
keel_check_bad_usage(${KEEL} bench select --layout padded,,packed)
# A CPU the process may not use, or not a number.
keel_check_bad_usage(${KEEL} bench select --cpus 100000)
keel_check_bad_usage(${KEEL} bench select --cpus x)
keel_check_bad_usage(${KEEL} bench bloat --transactions 10)
# Pairs: 1, or an even number up to 16; a bloat option only.
keel_check_bad_usage(${KEEL} bench bloat --pairs 0)
keel_check_bad_usage(${KEEL} bench bloat --pairs 3)
keel_check_bad_usage(${KEEL} bench bloat --pairs 18)
keel_check_bad_usage(${KEEL} bench select --pairs 2)
keel_check_bad_usage(${KEEL} bench catcache --lookups 10)
file(REMOVE_RECURSE ${OUT})
message(STATUS "bench report smoke: ok")
