# The database commands end to end: `keel init --scale 1` creates a
# database that `keel stat` lists and `keel check` passes; a second init
# of the same directory, a missing directory and bad usage fail with one
# line and the right exit status; a stray relation-numbered file is a
# note of the check's; a relation file that cannot be opened, or is
# gone, is listed as such; stat and check write nothing.
file(REMOVE_RECURSE ${DIR})
execute_process(COMMAND ${KEEL} init ${DIR} --scale 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "created .* in [0-9.]+ s")
  message(FATAL_ERROR "keel init failed (${rc}):\n${out}\n${err}")
endif()
if(NOT err MATCHES "100000 of 100000 tuples")
  message(FATAL_ERROR "keel init showed no progress lines:\n${err}")
endif()
# stat and check open the database read-only: the control file and the
# lock file (which an open for writing rewrites with its process id) stay
# as init left them, and nothing is added.
file(SHA256 ${DIR}/keel_control control_before)
file(SHA256 ${DIR}/keel_lock lock_before)
file(GLOB files_before RELATIVE ${DIR} ${DIR}/*)
execute_process(COMMAND ${KEEL} stat ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel stat failed (${rc}):\n${out}\n${err}")
endif()
set(stat_out "${out}")
foreach(rel pgbench_branches pgbench_tellers pgbench_accounts
        pgbench_accounts_pkey pgbench_history keel_class keel_clog)
  if(NOT out MATCHES "${rel} ")
    message(FATAL_ERROR "keel stat does not list ${rel}:\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "public +pgbench_accounts +table +[0-9]+ +1[0-9][0-9][0-9] ")
  message(FATAL_ERROR "keel stat: pgbench_accounts has not ~1500 blocks:\n${out}")
endif()
execute_process(COMMAND ${KEEL} check ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "")
  message(FATAL_ERROR "keel check of a fresh database (${rc}):\n${out}\n${err}")
endif()
file(SHA256 ${DIR}/keel_control control_after)
file(SHA256 ${DIR}/keel_lock lock_after)
file(GLOB files_after RELATIVE ${DIR} ${DIR}/*)
if(NOT control_after STREQUAL control_before OR
   NOT lock_after STREQUAL lock_before OR
   NOT files_after STREQUAL files_before)
  message(FATAL_ERROR "keel stat and check changed the database directory: "
    "${files_before} / ${files_after}")
endif()
execute_process(COMMAND ${KEEL} init ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "already holds a keel database")
  message(FATAL_ERROR "second keel init gave rc=${rc}: ${err}")
endif()
foreach(cmd stat check)
  execute_process(COMMAND ${KEEL} ${cmd} ${DIR}/nosuch
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "keel ${cmd}: .*nosuch")
    message(FATAL_ERROR "keel ${cmd} of a missing database gave rc=${rc}: ${err}")
  endif()
endforeach()
# A file named as a relation's that no relation owns (as a crash leaves)
# is a note of `keel check`'s, not a problem; other names are not
# relations' files.
file(WRITE ${DIR}/99999 "")
file(WRITE ${DIR}/0777 "")
file(WRITE ${DIR}/notes "")
execute_process(COMMAND ${KEEL} check ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0
   OR NOT out MATCHES "^note: file [^\n]*/99999 is no relation's that keel_class shows: [^\n]*\n$"
   OR NOT err MATCHES "no problems, 1 note")
  message(FATAL_ERROR "keel check with a stray file (${rc}):\n${out}\n${err}")
endif()
file(REMOVE ${DIR}/99999 ${DIR}/0777 ${DIR}/notes)
# A relation's file that cannot be opened is listed with why; one that
# is gone, as missing.
if(NOT stat_out MATCHES "public +pgbench_history +table +([0-9]+) ")
  message(FATAL_ERROR "keel stat lists no pgbench_history:\n${stat_out}")
endif()
set(history ${DIR}/${CMAKE_MATCH_1})
file(REMOVE ${history})
file(MAKE_DIRECTORY ${history})
execute_process(COMMAND ${KEEL} stat ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES
   "pgbench_history +table +[0-9]+ +0 +0  \\(could not open file [^\n]*: Is a directory\\)\n")
  message(FATAL_ERROR "keel stat of a file it cannot open (${rc}):\n${out}\n${err}")
endif()
file(REMOVE_RECURSE ${history})
execute_process(COMMAND ${KEEL} stat ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES
   "pgbench_history +table +[0-9]+ +0 +0  \\(file missing\\)\n")
  message(FATAL_ERROR "keel stat of a missing file (${rc}):\n${out}\n${err}")
endif()
foreach(args "init" "init;${DIR};--scale;x" "init;${DIR}x;--scale;+1" "stat" "check;a;b")
  execute_process(COMMAND ${KEEL} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "keel ${args} gave rc=${rc}, not 2: ${err}")
  endif()
endforeach()
# keel wal: a clean init's log from its redo pointer is the shutdown
# checkpoint (the tables were loaded unlogged and synced); --stats totals
# it by kind and type; a non-number for --start or --limit is bad usage.
execute_process(COMMAND ${KEEL} wal ${DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "lsn [0-9]+ len +[0-9]+ checkpoint .*redo [0-9]+ next_xid [0-9]+"
   OR NOT out MATCHES "read 1 records")
  message(FATAL_ERROR "keel wal gave rc=${rc}:\n${out}${err}")
endif()
execute_process(COMMAND ${KEEL} wal ${DIR} --stats
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "type checkpoint +1 +[0-9]+"
   OR NOT out MATCHES "total +1 ")
  message(FATAL_ERROR "keel wal --stats gave rc=${rc}:\n${out}${err}")
endif()
foreach(bad "--limit;abc" "--start;-5" "--start;12x")
  execute_process(COMMAND ${KEEL} wal ${DIR} ${bad}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "needs a number")
    message(FATAL_ERROR "keel wal ${bad} gave rc=${rc}, not 2: ${err}")
  endif()
endforeach()
# The command itself: no command, an unknown one, bench without a name or
# with an unknown one fail with exit status 2 and say what was wrong;
# version and help succeed.
foreach(case "|usage: keel <command>" "nosuch|unknown command 'nosuch'"
        "bench|which benchmark" "bench;nosuch|unknown benchmark 'nosuch'")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts -1 want)
  list(REMOVE_AT parts -1)
  execute_process(COMMAND ${KEEL} ${parts}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${want}")
    message(FATAL_ERROR "keel ${parts} gave rc=${rc}, not 2 and \"${want}\": ${err}")
  endif()
endforeach()
execute_process(COMMAND ${KEEL} version
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^keel [0-9]")
  message(FATAL_ERROR "keel version gave rc=${rc}: ${out}${err}")
endif()
execute_process(COMMAND ${KEEL} help
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "usage: keel <command>.*bench report")
  message(FATAL_ERROR "keel help gave rc=${rc}: ${out}${err}")
endif()
file(REMOVE_RECURSE ${DIR})
message(STATUS "tools smoke: ok")
