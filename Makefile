# Holdfast: the two commands are `make serve` and `make test`.
# Every target installs what it needs first (scripts/install-deps.sh is idempotent).

BUILD_DIR ?= build
FUZZ_DIR  ?= build-fuzz
COVERAGE_DIR ?= build-coverage
SANITIZE_DIR ?= build-sanitize
TSAN_DIR ?= build-tsan
BUILD_TYPE ?= RelWithDebInfo
CTEST_JOBS ?= 2
SERVE_ARGS ?=
BENCH_ARGS ?=
TORTURE_SECONDS ?= 600
TORTURE_ARGS ?=

.PHONY: all deps deps-test deps-bench deps-package configure configure-tests build serve package test check-deps unit-test fuzz fuzz-build bench coverage sanitize tsan torture format clean

all: build

deps:
	@scripts/install-deps.sh build

deps-test:
	@scripts/install-deps.sh test

deps-bench:
	@scripts/install-deps.sh bench

deps-package:
	@scripts/install-deps.sh package

# A fresh build dir is configured without the tests, which need more than the build packages;
# one that `make test` configured keeps them (it then has what they need).
$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DHOLDFAST_TESTS=OFF

configure: deps $(BUILD_DIR)/build.ninja

configure-tests: deps-test
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DHOLDFAST_TESTS=ON

build: configure
	cmake --build $(BUILD_DIR)

serve: configure
	cmake --build $(BUILD_DIR) --target holdfast
	$(BUILD_DIR)/holdfast serve $(SERVE_ARGS)

# The Debian package of the server (packaging/CMakeLists.txt says what it holds), from the
# build dir as it is configured: builds the binary, its manual page and completions, runs cpack.
package: deps-package $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) --target holdfast holdfast_package_files
	cd $(BUILD_DIR) && cpack -G DEB
	@echo "make package: $$(ls -t $(BUILD_DIR)/package/holdfast_*.deb | head -n 1)"

# The formatting check, the check that the build needs only the build packages, unit,
# black-box, example and smoke tests (gcc build), and the fuzzers (clang build), which compile
# beside ctest, whose tests mostly wait; scripts/test-beside.sh says how.
test: configure-tests
	scripts/check-format.sh
	scripts/check-build-deps.sh $(BUILD_DIR)/check-build-deps
	cmake --build $(BUILD_DIR)
	scripts/test-beside.sh $(BUILD_DIR) $(FUZZ_DIR) $(CTEST_JOBS)

# Configures the server and runs its build steps with only the build packages' programs and
# files (scripts/check-build-deps.sh says how); part of `make test`.
check-deps: deps
	scripts/check-build-deps.sh $(BUILD_DIR)/check-build-deps

fuzz: deps-test
	$(MAKE) --no-print-directory fuzz-build
	cd $(FUZZ_DIR) && ctest --output-on-failure -j $(CTEST_JOBS)

# The fuzzers' clang tree, built (what `fuzz` runs; `make test` builds it beside its ctest).
fuzz-build:
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DHOLDFAST_FUZZ=ON
	cmake --build $(FUZZ_DIR)

# Not part of `make test` (each takes about 15 minutes on 2 cores): which lines no test runs,
# and every test with AddressSanitizer and UndefinedBehaviorSanitizer in the server too.
# Sanitizer reports go to files, one per process (a server's leak report on stderr could fill
# a pipe nobody reads); any report fails the target. Left out: client_find_package (it links
# the installed, instrumented library into a plain project) and the one test that measures the
# server's RSS (ASan keeps freed memory in quarantine; its leak checker covers that test's point),
# and the one that runs a server out of file descriptors (UBSan's vptr check probes memory
# through a pipe, so with no descriptor left it takes a virtual call it has not seen for a bad one).
coverage: deps-test
	scripts/coverage.sh $(COVERAGE_DIR)

sanitize: deps-test
	cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_FLAGS="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  -DCMAKE_C_FLAGS="-fsanitize=address,undefined" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
	cmake --build $(SANITIZE_DIR)
	rm -f $(SANITIZE_DIR)/report.*
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=log_path=$(CURDIR)/$(SANITIZE_DIR)/report \
	  UBSAN_OPTIONS=log_path=$(CURDIR)/$(SANITIZE_DIR)/report:print_stacktrace=1 \
	  GTEST_FILTER=-HttpApi.ConnectionsWhoseResponseWaitedForTheLogGiveTheirMemoryBack:Descriptors.AServerOutOfDescriptors* \
	  ctest --output-on-failure -j $(CTEST_JOBS) --timeout 900 -E client_find_package
	@! ls $(SANITIZE_DIR)/report.* 2>/dev/null || { cat $(SANITIZE_DIR)/report.*; exit 1; }

# Not part of `make test` either: every test under ThreadSanitizer, the server it starts too (its
# loop, the log writer, the snapshot child, PostgreSQL offload threads). Reports go to files as
# above. Built without the allocation tests (TSan's runtime replaces operator new itself).
tsan: deps-test
	cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DHOLDFAST_ALLOCATION_TESTS=OFF \
	  -DCMAKE_CXX_FLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
	  -DCMAKE_C_FLAGS="-fsanitize=thread" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
	  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread"
	cmake --build $(TSAN_DIR)
	rm -f $(TSAN_DIR)/report.*
	cd $(TSAN_DIR) && TSAN_OPTIONS=log_path=$(CURDIR)/$(TSAN_DIR)/report:second_deadlock_stack=1 \
	  ctest --output-on-failure -j $(CTEST_JOBS) --timeout 900 -E client_find_package
	@! ls $(TSAN_DIR)/report.* 2>/dev/null || { cat $(TSAN_DIR)/report.*; exit 1; }

# Not part of `make test` (which runs a short version of each backend) nor of CI: the fault-injection
# torture program for TORTURE_SECONDS per backend: the embedded store, a node over PostgreSQL,
# then three nodes over a primary and its synchronous standby failing over (each set-up; every
# node must grant again within 2 s of each promotion). docs/faults.md describes them; add
# TORTURE_ARGS="--backend failover" for the failovers alone. Needs root for the full-disk
# faults (they are skipped otherwise).
torture: configure-tests
	cmake --build $(BUILD_DIR) --target holdfast holdfast-torture
	$(BUILD_DIR)/tests/torture/holdfast-torture --seconds $(TORTURE_SECONDS) $(TORTURE_ARGS)

bench: deps-bench build
	$(BUILD_DIR)/holdfast-bench --out bench/results $(BENCH_ARGS)

format:
	git ls-files -- '*.h' '*.cc' | grep -v '^fuzz/corpus/' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR) $(COVERAGE_DIR) $(SANITIZE_DIR)
