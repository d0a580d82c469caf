# The benchmarks' temporary directories (databases, intermediate JSON) do
# not outlive them: not when a signal stops them in the middle of a run
# (they then die of that signal), not when they ignore it because they
# were started ignoring it (nohup), not when the reader of their output
# goes away, and not when the report refuses its output directory.  Everything runs with TMPDIR set to WORK, which must
# hold nothing named keel-* after.  STOP (tests/stop_when.c) sends each
# signal once stderr shows the benchmark's database made (its "  done in"
# line), so that how long that takes on a loaded machine does not
# matter.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(check_nothing_left what)
  file(GLOB left "${WORK}/keel-*" "${WORK}/out/*.tmp")
  if(left)
    message(FATAL_ERROR "${what} left ${left} behind")
  endif()
endfunction()

# Each signal ends the run, the process dying of it (128 + its number).
foreach(sig INT:130 TERM:143 HUP:129)
  string(REPLACE ":" ";" sig "${sig}")
  list(GET sig 1 want)
  list(GET sig 0 sig)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
            ${STOP} ${sig} "\n  done in" ${WORK}/err
            ${KEEL} bench select --scale 1 --clients 1 --seconds 100
    RESULT_VARIABLE rc ERROR_VARIABLE stop_err)
  file(READ ${WORK}/err err)
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "keel bench select given SIG${sig} ended with ${rc}, "
                        "not ${want}:\n${stop_err}\n${err}")
  endif()
  if(NOT err MATCHES "database in ${WORK}/keel-bench-select-")
    message(FATAL_ERROR "keel bench select made no database:\n${err}")
  endif()
  check_nothing_left("keel bench select stopped by SIG${sig}")
endforeach()

# Started with SIGHUP ignored, as under nohup: a hangup changes nothing,
# and SIGINT still ends it cleanly.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
          ${STOP} ignored-HUP "\n  done in" ${WORK}/err
          ${KEEL} bench select --scale 1 --clients 1 --seconds 2 --runs 1
  RESULT_VARIABLE rc ERROR_VARIABLE stop_err)
file(READ ${WORK}/err err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench select with SIGHUP ignored ended with "
                      "${rc} on a hangup:\n${stop_err}\n${err}")
endif()
check_nothing_left("keel bench select run to its end")

# A reader that goes away (`| head`): the writes that follow fail, and the
# run ends as usual, removing its database.  One round: every write after
# the first line fails alike, and more rounds only time more lookups.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
          sh -c "'${KEEL}' bench lookup --quick --scale 1 --rounds 1 2>&1 | head -c 1"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR out STREQUAL "")
  message(FATAL_ERROR "keel bench lookup | head gave ${rc}: '${out}' ${err}")
endif()
check_nothing_left("keel bench lookup writing to a closed pipe")

# The report, stopped in one of its steps: its database and its
# intermediate JSON go, and nothing half-written is left in --out.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
          ${STOP} INT "] keel bench pin" ${WORK}/err
          ${KEEL} bench report --quick --out ${WORK}/out
  RESULT_VARIABLE rc ERROR_VARIABLE stop_err)
file(READ ${WORK}/err err)
if(NOT rc EQUAL 130)
  message(FATAL_ERROR "keel bench report given SIGINT ended with ${rc}:\n"
                      "${stop_err}\n${err}")
endif()
check_nothing_left("keel bench report stopped by SIGINT")

# The pgbench comparison, stopped while both servers run: keel serve and
# the PostgreSQL cluster are stopped before their directory goes, and no
# process of theirs is left (skipped without PostgreSQL 15 and pgbench).
find_program(PGREP pgrep)
if(PGREP AND EXISTS /usr/lib/postgresql/15/bin/postgres
   AND EXISTS /usr/lib/postgresql/15/bin/initdb
   AND (EXISTS /usr/lib/postgresql/15/bin/pgbench OR EXISTS /usr/bin/pgbench))
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${WORK}
            ${STOP} INT "against postgres" ${WORK}/err
            ${KEEL} bench compare --scale 1 --clients 1 --seconds 100
    RESULT_VARIABLE rc ERROR_VARIABLE stop_err)
  file(READ ${WORK}/err err)
  if(NOT rc EQUAL 130)
    message(FATAL_ERROR "keel bench compare given SIGINT ended with ${rc}:\n"
                        "${stop_err}\n${err}")
  endif()
  check_nothing_left("keel bench compare stopped by SIGINT")
  execute_process(COMMAND ${PGREP} -f -a "${WORK}/keel-compare"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE left)
  if(rc EQUAL 0)
    message(FATAL_ERROR "keel bench compare stopped by SIGINT left:\n${left}")
  endif()
endif()

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
