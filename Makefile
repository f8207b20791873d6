# Holdfast: the two commands are `make serve` and `make test`.
# Every target installs what it needs first (scripts/install-deps.sh is idempotent).

BUILD_DIR ?= build
FUZZ_DIR  ?= build-fuzz
BUILD_TYPE ?= RelWithDebInfo
CTEST_JOBS ?= 2
SERVE_ARGS ?=
BENCH_ARGS ?=

.PHONY: all deps deps-test deps-bench configure build serve test unit-test fuzz bench format clean

all: build

deps:
	@scripts/install-deps.sh build

deps-test:
	@scripts/install-deps.sh test

deps-bench:
	@scripts/install-deps.sh bench

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR)

serve: build
	./$(BUILD_DIR)/holdfast serve $(SERVE_ARGS)

# Unit, black-box, example and smoke tests (gcc build), then the fuzzers (clang build).
test: deps-test build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(CTEST_JOBS) --timeout 600
	$(MAKE) --no-print-directory fuzz

fuzz: deps-test
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DHOLDFAST_FUZZ=ON
	cmake --build $(FUZZ_DIR)
	cd $(FUZZ_DIR) && ctest --output-on-failure

bench: deps-bench build
	./$(BUILD_DIR)/holdfast-bench --out bench/results $(BENCH_ARGS)

format:
	find include src tests fuzz bench examples -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR)
