# `keel bench bloat --prune off|on` and bench/bloat-instructions.sh, on a
# scale-1 database made in WORK:
# - --prune on --pairs 3 runs that setting alone three times, leaving
#   the database's control and lock files as they were: its JSON
#   names the setting and the runs, holds three throughputs and the
#   session's counts, and no other setting and no ratio;
# - a bad --prune value, and an odd --pairs without --prune, are refused
#   as bad usage;
# - the script (with valgrind, N1 500 and N2 1500 transactions) prints a
#   positive instruction count per transaction for each setting, says
#   that the cache had not reached its memory target by N1, and, since
#   neither setting evicted, counts the two settings within 3% of each
#   other; N2 not above N1, and a CACHE_SIM other than 0 or 1, are
#   refused.
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(db ${WORK}/db)
execute_process(COMMAND ${KEEL} init ${db} --scale 1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel init failed (${rc}):\n${out}\n${err}")
endif()

# One setting alone.  The benchmark opens DIR read-only: its control and
# lock files stay as init left them.
file(SHA256 ${db}/keel_control control_before)
file(SHA256 ${db}/keel_lock lock_before)
execute_process(
  COMMAND ${KEEL} bench bloat ${db} --clients 1 --transactions 2000
          --prune on --pairs 3 --json ${WORK}/on.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench bloat --prune on failed (${rc}):\n${out}\n${err}")
endif()
if(NOT out MATCHES "runs, pruning on only, tps: [0-9]+, [0-9]+, [0-9]+\n")
  message(FATAL_ERROR "no line of three runs' throughputs:\n${out}")
endif()
file(SHA256 ${db}/keel_control control_after)
file(SHA256 ${db}/keel_lock lock_after)
if(NOT control_after STREQUAL control_before OR
   NOT lock_after STREQUAL lock_before)
  message(FATAL_ERROR "keel bench bloat wrote to the database's control "
    "or lock file")
endif()
file(READ ${WORK}/on.json json)
string(JSON pruning GET "${json}" pruning)
string(JSON runs GET "${json}" runs)
if(NOT pruning STREQUAL "on" OR NOT runs EQUAL 3)
  message(FATAL_ERROR "pruning ${pruning}, runs ${runs}: not on, 3")
endif()
foreach(absent off pairs tps_on_over_off)
  string(JSON v ERROR_VARIABLE e GET "${json}" ${absent})
  if(e STREQUAL "NOTFOUND")
    message(FATAL_ERROR "one setting's JSON holds \"${absent}\": ${v}")
  endif()
endforeach()
string(JSON n LENGTH "${json}" on tps_runs)
if(NOT n EQUAL 3)
  message(FATAL_ERROR "${n} throughputs in on.tps_runs, not 3")
endif()
foreach(i 0 1 2)
  string(JSON t GET "${json}" on tps_runs ${i})
  if(NOT t GREATER 0)
    message(FATAL_ERROR "on.tps_runs[${i}] is ${t}")
  endif()
endforeach()
string(JSON txns GET "${json}" on sessions 0 transactions)
string(JSON misses GET "${json}" on sessions 0 cache_misses)
string(JSON neg GET "${json}" on sessions 0 negative_entries)
# Each transaction misses once (its new name); the session's cache holds
# a negative entry for each of them, the search path's first probe's too.
if(NOT txns EQUAL 2000 OR NOT misses EQUAL 2000 OR NOT neg EQUAL 2001)
  message(FATAL_ERROR
    "transactions ${txns}, cache misses ${misses}, negative entries ${neg}: "
    "not 2000, 2000, 2001")
endif()

# Bad usage.
keel_check_bad_usage(${KEEL} bench bloat ${db} --prune maybe)
keel_check_bad_usage(${KEEL} bench bloat ${db} --pairs 3)
keel_check_bad_usage(${KEEL} bench bloat ${db} --memory maybe)

# The script (it needs valgrind).
if(NOT VALGRIND)
  message(STATUS "valgrind not found: bloat-instructions.sh not run")
  file(REMOVE_RECURSE ${WORK})
  return()
endif()
set(script ${SRC}/bench/bloat-instructions.sh)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env KEEL=${KEEL} N1=500 N2=1500
          TMPDIR=${WORK} bash ${script} ${db}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bloat-instructions.sh failed (${rc}):\n${out}\n${err}")
endif()
foreach(s off on)
  if(NOT out MATCHES "instructions_per_txn_${s} ([0-9.]+)\n")
    message(FATAL_ERROR "no instructions_per_txn_${s} line:\n${out}")
  endif()
  set(ir_${s} ${CMAKE_MATCH_1})
  # A select-only transaction and a catalog cache miss: thousands.
  if(NOT ir_${s} GREATER 1000 OR NOT ir_${s} LESS 100000)
    message(FATAL_ERROR "${ir_${s}} instructions per transaction, pruning ${s}")
  endif()
  if(NOT out MATCHES "\n${s} +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n")
    message(FATAL_ERROR "no table row for pruning ${s}:\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "note: with pruning on, the cache had evicted nothing")
  message(FATAL_ERROR "no note that the target was not reached:\n${out}")
endif()
if(NOT out MATCHES "on_over_off_instructions ([0-9.]+)\n?$")
  message(FATAL_ERROR "the last line is not the ratio:\n${out}")
endif()
set(ratio ${CMAKE_MATCH_1})
if(NOT ratio GREATER 0.97 OR NOT ratio LESS 1.03)
  message(FATAL_ERROR
    "below the memory target the settings ran ${ir_on} and ${ir_off} "
    "instructions a transaction (ratio ${ratio}), not within 3%")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env KEEL=${KEEL} N1=500 N2=500
          TMPDIR=${WORK} bash ${script} ${db}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "N2 \\(500\\) must be larger than N1")
  message(FATAL_ERROR "N1 = N2: exit ${rc}:\n${err}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env KEEL=${KEEL} CACHE_SIM=yes
          TMPDIR=${WORK} bash ${script} ${db}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "CACHE_SIM must be 0 or 1: 'yes'")
  message(FATAL_ERROR "CACHE_SIM=yes: exit ${rc}:\n${err}")
endif()
file(REMOVE_RECURSE ${WORK})
