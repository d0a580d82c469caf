# libkeel as an application gets it: `cmake --install` into a temporary
# prefix, then
#   - what is installed: keel.h and its version header (no internal
#     header), the shared library with its SONAME links, the static one,
#     keel.pc, the CMake package files and the keel command;
#   - the shared library exports keel_ symbols only, and the static one
#     defines no other global symbol;
#   - a program built by pkg-config against the shared library, and one
#     that defines functions named as keel's internal ones against the
#     static library (pkg-config --static), each run;
#   - the same two built by a CMake project with find_package(keel).
# Arguments: BUILD (this build's directory), SRC (the source tree), WORK,
# CC (the C compiler).
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}\n${err}")
endif()

# What is there, and what is not.
file(GLOB_RECURSE installed RELATIVE ${prefix} LIST_DIRECTORIES false
     ${prefix}/*)
list(SORT installed)
file(GLOB libdirs ${prefix}/lib*)
list(LENGTH libdirs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one library directory, found: ${installed}")
endif()
file(RELATIVE_PATH libdir ${prefix} ${libdirs})
file(GLOB libkeel_real ${prefix}/${libdir}/libkeel.so.*.*.*)
get_filename_component(libkeel_real_name "${libkeel_real}" NAME)
set(expected
  bin/keel
  include/keel/keel.h
  include/keel/keel_version.h
  ${libdir}/cmake/keel/keelConfig.cmake
  ${libdir}/cmake/keel/keelConfigVersion.cmake
  ${libdir}/libkeel.a
  ${libdir}/libkeel.so
  ${libdir}/libkeel.so.0
  ${libdir}/${libkeel_real_name}
  ${libdir}/pkgconfig/keel.pc)
list(SORT expected)
if(NOT "${installed}" STREQUAL "${expected}")
  message(FATAL_ERROR "installed files:\n  ${installed}\nexpected:\n  ${expected}")
endif()
execute_process(COMMAND readelf -d ${prefix}/${libdir}/libkeel.so
                OUTPUT_VARIABLE out)
if(NOT out MATCHES "SONAME.*\\[libkeel\\.so\\.0\\]")
  message(FATAL_ERROR "libkeel.so has no SONAME libkeel.so.0:\n${out}")
endif()

# Exported symbols: keel_ only, from both libraries.
execute_process(COMMAND nm -D --defined-only ${prefix}/${libdir}/libkeel.so
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(REGEX MATCHALL " [A-Za-z] [^\n]+" syms "${out}")
list(LENGTH syms nsyms)
if(NOT rc EQUAL 0 OR nsyms LESS 30)
  message(FATAL_ERROR "nm -D libkeel.so (${rc}) found ${nsyms} symbols:\n${out}")
endif()
foreach(s ${syms})
  if(NOT s MATCHES " [A-Za-z] keel_")
    message(FATAL_ERROR "libkeel.so exports a symbol not prefixed keel_:${s}")
  endif()
endforeach()
execute_process(COMMAND nm -g --defined-only ${prefix}/${libdir}/libkeel.a
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(REGEX MATCHALL " [A-Za-z] [^\n]+" syms "${out}")
foreach(s ${syms})
  if(NOT s MATCHES " [A-Za-z] keel_")
    message(FATAL_ERROR "libkeel.a defines a global symbol not prefixed keel_:${s}")
  endif()
endforeach()

# By pkg-config.
set(ENV{PKG_CONFIG_PATH} ${prefix}/${libdir}/pkgconfig)
execute_process(COMMAND pkg-config --modversion keel
                OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR "pkg-config --modversion keel (${rc}): ${version}${err}")
endif()
execute_process(COMMAND pkg-config --cflags --libs keel
                OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND pkg-config --static --cflags --libs keel
                OUTPUT_VARIABLE static_flags OUTPUT_STRIP_TRAILING_WHITESPACE)
separate_arguments(flags UNIX_COMMAND "${flags}")
separate_arguments(static_flags UNIX_COMMAND "${static_flags}")
set(consumer ${SRC}/tests/install/consumer.c)

function(build_and_run what exe)
  # ARGN: the compiler's arguments.
  execute_process(COMMAND ${CC} -Wall -Werror -o ${exe} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: build failed (${rc}):\n${out}\n${err}")
  endif()
  file(REMOVE_RECURSE ${exe}-db)
  execute_process(COMMAND ${exe} ${exe}-db
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "ok ${version}\n")
    message(FATAL_ERROR "${what}: the program failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

# The shared library found at run time through the loader's path: the
# program names it by its SONAME.
set(ENV{LD_LIBRARY_PATH} ${prefix}/${libdir})
build_and_run("pkg-config, shared" ${WORK}/pc_shared ${consumer} ${flags})
execute_process(COMMAND readelf -d ${WORK}/pc_shared OUTPUT_VARIABLE out)
if(NOT out MATCHES "NEEDED.*\\[libkeel\\.so\\.0\\]")
  message(FATAL_ERROR "the program does not need libkeel.so.0:\n${out}")
endif()
# The static library, beside the program's own hash_bytes, clock_now_ns,
# value_compare, futex_wait and type_name.
build_and_run("pkg-config, static" ${WORK}/pc_static -DCOLLIDE ${consumer}
              ${prefix}/${libdir}/libkeel.a ${static_flags})

# By find_package.
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SRC}/tests/install -B ${WORK}/cmake-build
          -DCMAKE_C_COMPILER=${CC} -DCMAKE_PREFIX_PATH=${prefix}
          -DCMAKE_BUILD_TYPE=RelWithDebInfo
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "find_package(keel) project (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/cmake-build
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "find_package(keel) build (${rc}):\n${out}\n${err}")
endif()
foreach(exe consumer_shared consumer_static)
  file(REMOVE_RECURSE ${WORK}/${exe}-db)
  execute_process(COMMAND ${WORK}/cmake-build/${exe} ${WORK}/${exe}-db
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "ok ${version}\n")
    message(FATAL_ERROR "find_package, ${exe} (${rc}):\n${out}\n${err}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
