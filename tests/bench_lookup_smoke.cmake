# Runs `keel bench lookup --quick` (a scale-1 database in a temporary
# directory) and checks that it succeeds and writes JSON with lookup_ns,
# lookup_root_ns, lookup_unhinted_ns, fetch_row_ns, keel_lookup_ns,
# random_load_ns, page_walk_load_ns and cached_load_ns, each {median,
# min, max, rounds} with positive times; that
# on pgbench's freshly loaded accounts the B-tree predicted the heap row
# for at least 99% of lookups and got every prediction right; and that the
# session's directory held the leaves' downlinks (one per leaf of a
# 100,000-row index) and never sent a lookup back to the root.
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)
execute_process(
  COMMAND ${KEEL} bench lookup --quick --rounds 3 --pool-mb 64 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench lookup failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT} json)
keel_check_bench_stats("${json}" 3 lookup_ns lookup_root_ns lookup_unhinted_ns
  fetch_row_ns keel_lookup_ns random_load_ns page_walk_load_ns
  cached_load_ns)
string(JSON dir_entries GET "${json}" dir_entries)
string(JSON dir_level GET "${json}" dir_level)
string(JSON dir_fallbacks GET "${json}" dir_fallbacks)
string(JSON dir_uses GET "${json}" dir_uses)
if(dir_entries LESS 100 OR dir_entries GREATER 1000 OR NOT dir_level EQUAL 0)
  message(FATAL_ERROR
    "directory: ${dir_entries} entries to level ${dir_level}, not 100..1000 "
    "leaves")
endif()
if(NOT dir_fallbacks EQUAL 0 OR dir_uses LESS 100000)
  message(FATAL_ERROR
    "directory: ${dir_fallbacks} lookups back to the root of ${dir_uses}")
endif()
string(JSON rate GET "${json}" heap_guess_rate)
string(JSON exact GET "${json}" heap_guess_exact)
if(NOT rate GREATER_EQUAL 0.99 OR NOT rate LESS_EQUAL 1)
  message(FATAL_ERROR "heap_guess_rate is ${rate}, not in [0.99, 1]")
endif()
if(NOT exact EQUAL 1)
  message(FATAL_ERROR "heap_guess_exact is ${exact}, not 1")
endif()
string(JSON accounts GET "${json}" accounts)
if(NOT accounts EQUAL 100000)
  message(FATAL_ERROR "bench JSON accounts is ${accounts}, not 100000")
endif()
if(NOT out MATCHES "lookup_ns")
  message(FATAL_ERROR "no table printed:\n${out}")
endif()
keel_check_bad_usage(${KEEL} bench lookup --rounds)
# Numbers must be whole numbers in range; one DIR at most.
keel_check_bad_usage(${KEEL} bench lookup --rounds 3x)
keel_check_bad_usage(${KEEL} bench lookup --pool-mb 8)
keel_check_bad_usage(${KEEL} bench lookup dir1 dir2)
# A --json file that cannot be written is refused before the run, and one
# that would not exist is not left behind by the check.
execute_process(COMMAND ${KEEL} bench lookup --quick --json ${OUT}.d/no/x.json
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--json: cannot write .*no/x.json"
   OR err MATCHES "creating")
  message(FATAL_ERROR "an unwritable --json gave rc=${rc}: ${err}")
endif()
execute_process(COMMAND ${KEEL} bench lookup --json --quick
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 2 OR NOT err MATCHES "needs a file name, not '--quick'")
  message(FATAL_ERROR "--json --quick gave rc=${rc}: ${err}")
endif()
message(STATUS "bench lookup smoke: ok")
