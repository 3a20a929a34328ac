#!/usr/bin/env bash
# run.sh FUZZER WORKDIR CORPUS [LIBFUZZER FLAGS...] -- one libFuzzer run as
# CTest makes it (fuzz/CMakeLists.txt): from an emptied WORKDIR, where
# libFuzzer writes what it finds, with the checked-in CORPUS read as seeds
# and never written. The flags fix the seed and the run count, so the run
# repeats exactly; a crash or leak fails it, and its input is kept where
# -artifact_prefix says.
set -euo pipefail
fuzzer=$1 work=$2 corpus=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
exec "$fuzzer" "$@" "$work" "$corpus"
