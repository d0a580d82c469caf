# Runs `keel bench report --quick` (a scale-1 database in a temporary
# directory; one round of each benchmark, short select and bloat runs)
# into OUT and checks that every
# file was written, that results.json holds every figure with a sane value
# and counts consistent with the run, and that the charts are SVG with
# their legends.
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)

set(TXNS 2000)
file(REMOVE_RECURSE ${OUT})
execute_process(
  COMMAND ${KEEL} bench report --quick --out ${OUT} --seconds 0.05
          --transactions ${TXNS} --rounds 1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench report failed (${rc}):\n${out}\n${err}")
endif()
foreach(f report.md results.json select.svg bloat.svg)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "keel bench report did not write ${f}")
  endif()
endforeach()
if(NOT err MATCHES "\\[1/[0-9]\\] keel bench pin")
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
keel_check_bench_stats("${pin}" 1 read_hit_ns pin_unpin_ns repin_ns
  read_miss_ns pread_ns read_hit_2threads_mops)
string(JSON lookup GET "${json}" lookup)
keel_check_bench_stats("${lookup}" 1 lookup_ns lookup_root_ns
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
  # Each run's throughput (one run here): the median is among them.
  string(JSON nruns LENGTH "${e}" tps_runs)
  string(JSON runs GET "${e}" runs)
  if(NOT nruns EQUAL runs OR NOT runs EQUAL 1)
    message(FATAL_ERROR "select[${i}]: ${nruns} tps_runs for ${runs} runs")
  endif()
  string(JSON r0 GET "${e}" tps_runs 0)
  check_positive("select[${i}].tps_runs[0]" "${r0}")
  if(NOT r0 EQUAL tps)
    message(FATAL_ERROR "select[${i}]: one run of ${r0} tps, median ${tps}")
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

foreach(r select_2_over_1_clients select_64_over_2_clients
        select_padded_over_packed_64_clients select_max_sessions_402_over_400
        select_ns_per_txn_1_client)
  string(JSON v GET "${json}" ratios ${r})
  check_positive("ratios.${r}" "${v}")
endforeach()

# The charts and the report.
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
# The max_sessions verdict follows its interval: met when it holds 1 and
# lies within +-5%, inconclusive when it holds 1 but is wider (or when one
# round gives none: this run's --rounds 1), not met when it excludes 1.
if(NOT md MATCHES "400 at 64 clients \\(([0-9.]+)x, rounds ([0-9.]+)-([0-9.]+), 95% CI of the mean ([0-9.]+)-([0-9.]+)\\)")
  message(FATAL_ERROR "report.md: no interval for max_sessions 402 over 400")
endif()
set(ms_lo ${CMAKE_MATCH_4})
set(ms_hi ${CMAKE_MATCH_5})
set(ms_one_round FALSE)
if(CMAKE_MATCH_2 STREQUAL CMAKE_MATCH_3 AND ms_lo STREQUAL ms_hi)
  set(ms_one_round TRUE)
endif()
if(NOT md MATCHES "\\| max_sessions 402 over 400, 64 clients \\|[^|]*\\|[^|]*\\| ([a-z, ]+) \\|")
  message(FATAL_ERROR "report.md: no max_sessions target row")
endif()
set(ms_verdict "${CMAKE_MATCH_1}")
if(ms_one_round)
  set(ms_want "inconclusive, one round gives no interval")
elseif(ms_lo GREATER 1 OR ms_hi LESS 1)
  set(ms_want "not met")
elseif(ms_lo LESS 0.95 OR ms_hi GREATER 1.05)
  set(ms_want "inconclusive, the interval is wider")
else()
  set(ms_want "met")
endif()
if(NOT ms_verdict STREQUAL ms_want)
  message(FATAL_ERROR "report.md: max_sessions interval ${ms_lo}-${ms_hi} "
                      "reads '${ms_verdict}', expected '${ms_want}'")
endif()
# The layout verdicts follow the intervals printed with them.  The summary's
# row for every count takes the worst of the counts' verdicts, each read
# from the by-clients line: no interval with one round, not met when the
# interval lies below 1, inconclusive when it reaches below 0.95, met
# within the noise when the median is below 1, else met.  A value within
# rounding (0.0005) of a threshold could read either way, and is skipped.
string(REGEX MATCH "Padded over packed, by clients[^\n]*" lay "${md}")
string(REGEX MATCHALL
  "[0-9]+: [0-9.]+x \\([0-9.]+-[0-9.]+, CI [0-9.]+-[0-9.]+\\)"
  counts "${lay}")
list(LENGTH counts ncounts)
if(NOT ncounts EQUAL 5)
  message(FATAL_ERROR "report.md: ${ncounts} layout intervals, not 5:\n${lay}")
endif()
set(verdicts "met" "met, within the noise"
  "inconclusive, the interval is wider"
  "inconclusive, one round gives no interval" "not met")
set(worst 0)
set(sure TRUE)
foreach(c ${counts})
  string(REGEX MATCH
    "^[0-9]+: ([0-9.]+)x \\(([0-9.]+)-([0-9.]+), CI ([0-9.]+)-([0-9.]+)\\)"
    _ "${c}")
  set(r ${CMAKE_MATCH_1})
  set(ci_lo ${CMAKE_MATCH_4})
  set(ci_hi ${CMAKE_MATCH_5})
  if(CMAKE_MATCH_2 STREQUAL CMAKE_MATCH_3 AND ci_lo STREQUAL ci_hi)
    set(v 3)
  elseif(ci_hi LESS 1)
    set(v 4)
  elseif(ci_lo LESS 0.95)
    set(v 2)
  elseif(r LESS 1)
    set(v 1)
  else()
    set(v 0)
  endif()
  foreach(x ${r} ${ci_lo} ${ci_hi})
    if((x GREATER 0.9495 AND x LESS 0.9505)
       OR (x GREATER 0.9995 AND x LESS 1.0005))
      set(sure FALSE)
    endif()
  endforeach()
  if(v GREATER worst)
    set(worst ${v})
  endif()
endforeach()
list(GET verdicts ${worst} lay_want)
if(NOT md MATCHES "\\| padded over packed, lowest over every client count [^|]*\\|[^|]*\\|[^|]*\\| ([a-z, ]+) \\|")
  message(FATAL_ERROR "report.md: no layout target row")
endif()
set(lay_row "${CMAKE_MATCH_1}")
if(NOT lay MATCHES "The target, padded at least as fast at every count [^:]*: ([a-z, ]+)\\.")
  message(FATAL_ERROR "report.md: the layout reading has no verdict:\n${lay}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL lay_row)
  message(FATAL_ERROR "report.md: the layout row reads '${lay_row}', "
                      "its reading '${CMAKE_MATCH_1}'")
endif()
if(sure AND NOT lay_row STREQUAL lay_want)
  message(FATAL_ERROR "report.md: layout intervals ${counts} read "
                      "'${lay_row}', expected '${lay_want}'")
endif()
if(md MATCHES "(^|[ (|])-?(nan|inf)([ )|.,x]|$)")
  message(FATAL_ERROR "report.md holds a figure that is not a number")
endif()
keel_check_bad_usage(${KEEL} bench report --out)
keel_check_bad_usage(${KEEL} bench select --clients 0)
keel_check_bad_usage(${KEEL} bench bloat --transactions)
keel_check_bad_usage(${KEEL} bench report --scale 10q)
keel_check_bad_usage(${KEEL} bench report --seconds 0.001)
keel_check_bad_usage(${KEEL} bench select --seconds abc)
keel_check_bad_usage(${KEEL} bench select --quick)
# A CPU the process may not use, or not a number.
keel_check_bad_usage(${KEEL} bench select --cpus 100000)
keel_check_bad_usage(${KEEL} bench select --cpus x)
keel_check_bad_usage(${KEEL} bench bloat --transactions 10)
file(REMOVE_RECURSE ${OUT})
message(STATUS "bench report smoke: ok")
