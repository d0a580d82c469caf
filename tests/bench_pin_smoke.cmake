# Runs `keel bench pin --quick` and checks that it succeeds and writes JSON
# with every field the benchmark promises, each a positive number.
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)
execute_process(
  COMMAND ${KEEL} bench pin --quick --rounds 5 --threads 8 --pool-mb 16
          --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench pin failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT} json)
keel_check_bench_stats("${json}" 5
  read_hit_ns pin_unpin_ns repin_ns read_miss_ns pread_ns pread_cold_ns
  read_miss_over_pread read_miss_ring_ns read_hit_2threads_same_page_ns
  line_handoff_ns read_hit_2threads_mops read_hit_8threads_mops)
keel_check_bad_usage(${KEEL} bench pin --pool-mb)
keel_check_bad_usage(${KEEL} bench pin --threads 4x)
keel_check_bad_usage(${KEEL} bench pin --rounds 0)
message(STATUS "bench pin smoke: ok")
