# keel: two commands.
#   make run    build (release) and run every benchmark: report in
#               ./keel-report (report.md, results.json, charts)
#   make test   build the normal, ThreadSanitizer and AddressSanitizer+UBSan
#               variants and run every test in each through ctest
#   make install [PREFIX=/usr/local]
#               build (release) and install libkeel (shared and static),
#               keel.h, keel.pc, the CMake package files and the keel command
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_Q = cmake -Wno-dev --log-level=WARNING
PREFIX ?= /usr/local

.PHONY: all run test test-normal test-tsan test-asan deps release install clean

all: release

deps:
	@sh scripts/install-deps

release: deps
	@$(CMAKE_Q) -S . -B build/release -DKEEL_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_TESTS=OFF -DKEEL_LTO=ON -DKEEL_ASSERTS=OFF
	@cmake --build build/release -j $(JOBS)

install: release
	cmake --install build/release --prefix $(PREFIX)

run: release
	./build/release/keel bench report

test: test-normal test-tsan test-asan

test-normal: deps
	@$(CMAKE_Q) -S . -B build/test -DKEEL_WERROR=ON -DKEEL_FAULT_INJECTION=ON
	@cmake --build build/test -j $(JOBS)
	ctest --test-dir build/test --output-on-failure -j $(JOBS)

test-tsan: deps
	@$(CMAKE_Q) -S . -B build/tsan -DKEEL_WERROR=ON -DKEEL_FAULT_INJECTION=ON -DKEEL_SANITIZE=thread
	@cmake --build build/tsan -j $(JOBS)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	    ctest --test-dir build/tsan --output-on-failure -j $(JOBS)

test-asan: deps
	@CC=clang $(CMAKE_Q) -S . -B build/asan -DKEEL_WERROR=ON -DKEEL_FAULT_INJECTION=ON -DKEEL_SANITIZE=address
	@cmake --build build/asan -j $(JOBS)
	ASAN_OPTIONS="detect_leaks=1 abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" \
	    ctest --test-dir build/asan --output-on-failure -j $(JOBS)

clean:
	rm -rf build
