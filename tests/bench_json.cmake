# Shared checks for the benchmark smoke tests (cmake -P scripts).

# Fails unless every field named in ARGN is an object {median, min, max,
# rounds} of positive numbers with min <= median <= max and `rounds` rounds.
function(keel_check_bench_stats json rounds)
  foreach(field ${ARGN})
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
    string(JSON med GET "${json}" ${field} median)
    string(JSON hi GET "${json}" ${field} max)
    if(lo GREATER med OR med GREATER hi)
      message(FATAL_ERROR
        "bench JSON ${field}: not min ${lo} <= median ${med} <= max ${hi}")
    endif()
    string(JSON n GET "${json}" ${field} rounds)
    if(NOT n EQUAL rounds)
      message(FATAL_ERROR "bench JSON ${field}.rounds is ${n}, not ${rounds}")
    endif()
  endforeach()
endfunction()

# Fails unless running the command in ARGN exits 2 with a message about an
# option (bad usage is an error, not a crash).
function(keel_check_bad_usage)
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "option")
    message(FATAL_ERROR "bad usage (${ARGN}) gave rc=${rc}: ${err}")
  endif()
endfunction()
