# The benchmarks' temporary directories (databases, intermediate JSON) do
# not outlive them: not when a signal stops them in the middle of a run,
# and not when the report refuses its output directory.  Everything runs
# with TMPDIR set to WORK, which must hold nothing named keel-* after.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(check_nothing_left what)
  file(GLOB left "${WORK}/keel-*" "${WORK}/out/*.tmp")
  if(left)
    message(FATAL_ERROR "${what} left ${left} behind")
  endif()
endfunction()

# Stopped by each signal once its database exists: the stderr line after
# "creating a scale-1 pgbench database in $TMPDIR/keel-..." says it does.
foreach(sig INT TERM)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
            timeout -s ${sig} 5 ${KEEL} bench select --scale 1 --clients 1
            --seconds 100
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 124)
    message(FATAL_ERROR "keel bench select was not stopped by SIG${sig} "
                        "(${rc}):\n${err}")
  endif()
  if(NOT err MATCHES "in ${WORK}/keel-bench-select-[^\n]*\n  done in")
    message(FATAL_ERROR "keel bench select made no database in 5 s:\n${err}")
  endif()
  check_nothing_left("keel bench select stopped by SIG${sig}")
endforeach()

# The report, stopped in one of its steps: its database and its
# intermediate JSON go, and nothing half-written is left in --out.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
          timeout -s INT 8 ${KEEL} bench report --quick --out ${WORK}/out
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 124 OR NOT err MATCHES "\\[1/[0-9]\\] keel bench pin")
  message(FATAL_ERROR "keel bench report was not stopped in a step "
                      "(${rc}):\n${err}")
endif()
check_nothing_left("keel bench report stopped by SIGINT")

# An output "directory" that is a file: refused at once, before any
# database is made.
file(WRITE ${WORK}/file "not a directory\n")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
          ${KEEL} bench report --quick --out ${WORK}/file
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "cannot write in ${WORK}/file: Not a directory")
  message(FATAL_ERROR "keel bench report --out FILE gave ${rc}:\n${err}")
endif()
if(err MATCHES "creating")
  message(FATAL_ERROR "keel bench report made a database before refusing "
                      "its output directory:\n${err}")
endif()
check_nothing_left("keel bench report refusing --out")
file(REMOVE_RECURSE ${WORK})
message(STATUS "bench temporary directories: ok")
