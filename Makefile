# Makefile -- the short commands; CMake does the building.
#
#   make          configure and build build/ (RelWithDebInfo); installs nothing
#   make run      install missing packages, build, start `build/lapis serve $(ARGS)`
#   make test     install missing packages, then every build and test stage
#                 (plain, ASan+UBSan, TSan; see scripts/test.sh)
#   make bench    build and run the benchmarks
#   make fuzz     build build-fuzz/ and run every fuzzer for FUZZ_SECONDS
#                 (default 60) each; see scripts/fuzz.sh and docs/fuzzing.md
#   make clean    remove every build directory
#
# JOBS sets the parallel build jobs (default: the number of cores).

JOBS ?= $(shell nproc)
ARGS ?=

.PHONY: all build run test bench fuzz clean

all: build

build:
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build -j $(JOBS)

run:
	scripts/deps.sh
	$(MAKE) --no-print-directory build
	build/lapis serve $(ARGS)

test:
	JOBS=$(JOBS) scripts/test.sh

bench: build
	build/bench-engine
	build/bench-informer
	BUILD_DIR=build scripts/bench-http.sh

FUZZ_SECONDS ?= 60

fuzz:
	JOBS=$(JOBS) FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

clean:
	rm -rf build build-asan build-tsan build-fuzz
