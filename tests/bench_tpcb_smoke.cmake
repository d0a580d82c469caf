# Runs `keel bench tpcb` on a scale-1 database made by keel init, twice:
# each run must succeed, print its consistency check and write JSON whose
# figures fit the run (one branch, 10 tellers, 100,000 accounts; for each
# client count a positive throughput and commits, at least one try per
# commit, exactly one for a lone client, which has nobody to conflict
# with); the second run starts from the first one's versions and must
# still find the balances adding up; keel check must then pass the
# database, its indexes' dead-version marks included.  Without DIR it
# runs on a temporary database of its own.
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(DB ${WORK}/db)
execute_process(COMMAND ${KEEL} init ${DB} --scale 1
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel init failed (${rc}): ${err}")
endif()
foreach(round 1 2)
  set(OUT ${WORK}/tpcb-${round}.json)
  execute_process(
    COMMAND ${KEEL} bench tpcb ${DB} --clients 1,3 --seconds 0.3 --runs 2
            --json ${OUT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "keel bench tpcb failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "check: [0-9]+ transactions committed, [0-9]+ history rows added;.*: consistent")
    message(FATAL_ERROR "no consistency check printed:\n${out}")
  endif()
  file(READ ${OUT} json)
  foreach(pair "branches;1" "tellers;10" "accounts;100000" "runs;2")
    list(GET pair 0 key)
    list(GET pair 1 want)
    string(JSON got GET "${json}" ${key})
    if(NOT got EQUAL want)
      message(FATAL_ERROR "bench JSON ${key} is ${got}, not ${want}")
    endif()
  endforeach()
  string(JSON consistent GET "${json}" consistent)
  if(NOT consistent STREQUAL "ON" AND NOT consistent STREQUAL "true")
    message(FATAL_ERROR "bench JSON consistent is ${consistent}")
  endif()
  string(JSON n LENGTH "${json}" tpcb)
  if(NOT n EQUAL 2)
    message(FATAL_ERROR "bench JSON has ${n} client counts, not 2")
  endif()
  foreach(i 0 1)
    string(JSON clients GET "${json}" tpcb ${i} clients)
    string(JSON tps GET "${json}" tpcb ${i} tps)
    string(JSON commits GET "${json}" tpcb ${i} commits)
    string(JSON tries GET "${json}" tpcb ${i} tries)
    string(JSON runs LENGTH "${json}" tpcb ${i} tps_runs)
    if(NOT tps GREATER 0 OR NOT commits GREATER 0 OR tries LESS commits
       OR NOT runs EQUAL 2)
      message(FATAL_ERROR
        "${clients} clients: tps ${tps}, ${commits} commits in ${tries} "
        "tries, ${runs} runs")
    endif()
    if(clients EQUAL 1 AND NOT tries EQUAL commits)
      message(FATAL_ERROR
        "one client took ${tries} tries for ${commits} commits")
    endif()
  endforeach()
endforeach()
execute_process(COMMAND ${KEEL} check ${DB}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel check after the runs failed (${rc}):\n${out}\n${err}")
endif()
# A temporary database of its own, removed afterwards.
execute_process(
  COMMAND ${KEEL} bench tpcb --scale 1 --clients 2 --seconds 0.1 --runs 1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES ": consistent")
  message(FATAL_ERROR "keel bench tpcb without DIR failed (${rc}):\n${out}\n${err}")
endif()
keel_check_bad_usage(${KEEL} bench tpcb --clients 0)
keel_check_bad_usage(${KEEL} bench tpcb --runs 99)
keel_check_bad_usage(${KEEL} bench tpcb --seconds x)
keel_check_bad_usage(${KEEL} bench tpcb --layout packed)
file(REMOVE_RECURSE ${WORK})
message(STATUS "bench tpcb smoke: ok")
