# Runs `keel bench pin --quick` and checks that it succeeds and writes JSON
# with every field the benchmark promises, each a positive number.
execute_process(
  COMMAND ${KEEL} bench pin --quick --rounds 5 --threads 8 --pool-mb 16
          --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench pin failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT} json)
foreach(field read_hit_ns pin_unpin_ns repin_ns read_miss_ns pread_ns
        read_hit_2threads_same_page_ns read_hit_2threads_mops
        read_hit_8threads_mops)
  foreach(part median min max)
    string(JSON v ERROR_VARIABLE jerr GET "${json}" ${field} ${part})
    if(jerr)
      message(FATAL_ERROR "bench JSON lacks ${field}.${part}: ${jerr}")
    endif()
    if(NOT v GREATER 0)
      message(FATAL_ERROR "bench JSON ${field}.${part} is not positive: ${v}")
    endif()
  endforeach()
  string(JSON lo GET "${json}" ${field} min)
  string(JSON hi GET "${json}" ${field} max)
  if(lo GREATER hi)
    message(FATAL_ERROR "bench JSON ${field}: min ${lo} > max ${hi}")
  endif()
endforeach()
string(JSON rounds GET "${json}" read_hit_ns rounds)
if(NOT rounds EQUAL 5)
  message(FATAL_ERROR "bench JSON read_hit_ns.rounds is ${rounds}, not 5")
endif()
# Bad usage is an error with a message, not a crash.
execute_process(COMMAND ${KEEL} bench pin --pool-mb
                RESULT_VARIABLE rc2 ERROR_VARIABLE err2 OUTPUT_QUIET)
if(NOT rc2 EQUAL 2 OR NOT err2 MATCHES "option")
  message(FATAL_ERROR "bad usage gave rc=${rc2}: ${err2}")
endif()
message(STATUS "bench pin smoke: ok")
