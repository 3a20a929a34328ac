# Makefile -- the short commands; CMake does the building.
#
#   make          configure and build build/ (RelWithDebInfo); installs nothing
#   make run      install missing packages, build, start `build/lapis serve $(ARGS)`
#   make test     install missing packages, then every build and test stage
#                 (plain, ASan+UBSan, TSan; see scripts/test.sh)
#   make bench    build and run the benchmarks
#   make fuzz     the fuzzers (none yet)
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

fuzz:
	@echo "no fuzz harnesses yet (issue 6)"

clean:
	rm -rf build build-asan build-tsan
