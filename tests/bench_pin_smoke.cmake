# Runs `keel bench pin --quick` and checks that it succeeds and writes JSON
# with every field the benchmark promises, each a positive number; that
# with --dir it leaves the directory as it found it, so that it runs there
# again; and that it refuses a database's directory.
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)
file(REMOVE_RECURSE ${OUT}.dir)
file(MAKE_DIRECTORY ${OUT}.dir)
execute_process(
  COMMAND ${KEEL} bench pin --quick --rounds 5 --threads 8 --pool-mb 16
          --json ${OUT} --dir ${OUT}.dir
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench pin failed (${rc}):\n${out}\n${err}")
endif()
file(GLOB left "${OUT}.dir/*")
if(left)
  message(FATAL_ERROR "keel bench pin --dir left ${left}")
endif()
execute_process(
  COMMAND ${KEEL} bench pin --quick --rounds 1 --threads 2 --pool-mb 16
          --dir ${OUT}.dir
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err2)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench pin --dir a second time failed (${rc}):\n${err2}")
endif()
file(WRITE ${OUT}.dir/keel_control "")
execute_process(
  COMMAND ${KEEL} bench pin --quick --rounds 1 --dir ${OUT}.dir
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err2)
if(NOT rc EQUAL 1 OR NOT err2 MATCHES "holds a keel database")
  message(FATAL_ERROR "keel bench pin --dir DATABASE gave ${rc}:\n${err2}")
endif()
file(REMOVE_RECURSE ${OUT}.dir)
file(READ ${OUT} json)
keel_check_bench_stats("${json}" 5
  read_hit_ns pin_unpin_ns repin_ns read_miss_ns pread_ns pread_cold_ns
  read_miss_over_pread read_miss_ring_ns read_hit_2threads_same_page_ns
  line_handoff_ns read_hit_2threads_mops read_hit_8threads_mops)
keel_check_bad_usage(${KEEL} bench pin --pool-mb)
keel_check_bad_usage(${KEEL} bench pin --threads 4x)
keel_check_bad_usage(${KEEL} bench pin --rounds 0)
message(STATUS "bench pin smoke: ok")
