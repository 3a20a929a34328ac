#!/usr/bin/env bash
# run.sh FUZZER WORKDIR CORPUS [LIBFUZZER FLAGS...] -- one libFuzzer run as
# CTest makes it (fuzz/CMakeLists.txt): from an emptied WORKDIR, where
# libFuzzer writes what it finds, with the checked-in CORPUS read as seeds
# and never written. The flags fix the seed and the run count and, with
# address randomisation off (below) and jansson's hash seed fixed
# (fuzz.h), the run repeats; a crash or leak fails it, and its input is
# kept where -artifact_prefix says.
set -euo pipefail
fuzzer=$1 work=$2 corpus=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
# Pointers that the program compares reach libFuzzer's table of compared
# values and so its mutations: with address randomisation on, no two runs
# would be the same. setarch -R turns it off for this process where the
# machine lets us.
if setarch "$(uname -m)" -R true 2>/dev/null; then
	exec setarch "$(uname -m)" -R "$fuzzer" "$@" "$work" "$corpus"
fi
exec "$fuzzer" "$@" "$work" "$corpus"
