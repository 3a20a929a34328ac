#!/usr/bin/env bash
# fuzz.sh -- `make fuzz`: build the libFuzzer harnesses (scripts/test.sh
# stage build-fuzz: clang, ASan+UBSan, -DLAPIS_FUZZ=ON, in build-fuzz/) and
# run each fuzzer for FUZZ_SECONDS, one after the other, then print what
# each did (executions, executions per second, libFuzzer's cov: and ft:
# figures, corpus size) and any crash.
#
# Usage: scripts/fuzz.sh [TARGET...]   (default: every fuzz/fuzz_<target>.c)
# Environment:
#   FUZZ_SECONDS  time per fuzzer (default 60), libFuzzer -max_total_time
#   FUZZ_MERGE=1  afterwards, merge into fuzz/corpus/<target>/ the inputs
#                 that add coverage to it (libFuzzer -merge=1); review them
#                 before committing: keep each corpus under ~50 small files
#   FUZZ_ARGS     extra libFuzzer flags, e.g. "-seed=7 -max_len=8192"
#   JOBS, BUILD_PREFIX  as in scripts/test.sh (the build is PREFIX-fuzz)
#
# Runs are time-based, so they differ from run to run: that is what makes
# them find new things. `make test` runs the same fuzzers deterministically
# (fixed seed and run count; fuzz/CMakeLists.txt). New inputs are kept in
# PREFIX-fuzz/fuzz/corpus-<target>/ and feed the next run; crashes land in
# PREFIX-fuzz/fuzz/crashes/, and each must become a regression input
# fuzz/regress/<target>-<what> (and a corpus entry), see docs/fuzzing.md.
# The list-paging harness (issue 6, harness 1) joins when fuzz_list_paging.c
# exists: targets are found from the file names.
#
# Exit status: 0 when every fuzzer ran without a crash, 1 otherwise.
set -uo pipefail
export LC_NUMERIC=C

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
seconds=${FUZZ_SECONDS:-60}
prefix=${BUILD_PREFIX:-build}
bdir=$root/$prefix-fuzz/fuzz
read -r -a extra <<<"${FUZZ_ARGS:-}"

if (($# > 0)); then
	targets=("$@")
else
	targets=()
	for f in fuzz/fuzz_*.c; do
		t=${f#fuzz/fuzz_}
		targets+=("${t%.c}")
	done
fi

JOBS=${JOBS:-$(nproc)} BUILD_PREFIX=$prefix "$root/scripts/test.sh" build-fuzz ||
	exit 1

mkdir -p "$bdir/crashes"
declare -A summary
failed=0
for t in "${targets[@]}"; do
	exe=$bdir/fuzz_$t
	if [[ ! -x $exe ]]; then
		echo "fuzz.sh: no fuzzer for '$t' ($exe)" >&2
		summary[$t]="missing"
		failed=1
		continue
	fi
	work=$bdir/corpus-$t
	log=$bdir/log-$t.txt
	mkdir -p "$work"
	flags=(-max_total_time="$seconds" -max_len=4096 -timeout=25
		-print_final_stats=1 -artifact_prefix="$bdir/crashes/$t-")
	[[ -f fuzz/$t.dict ]] && flags+=(-dict="fuzz/$t.dict")
	echo "=== fuzz $t: ${seconds}s (log: $log)"
	# New inputs go to the first directory; the checked-in seeds are read.
	"$exe" "${flags[@]}" "${extra[@]}" "$work" "fuzz/corpus/$t" >"$log" 2>&1
	rc=$?
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
	ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
	corp=$(sed -nE 's/.* corp: ([0-9]+\/[0-9a-zA-Z]+).*/\1/p' <<<"$last")
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")
	eps=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log")
	if ((rc != 0)); then
		result=CRASH
		failed=1
		grep -E 'SUMMARY|invariant failed|Test unit written' "$log" | head -n 5
	else
		result=ok
	fi
	summary[$t]="$(printf '%-6s %10s %8s %6s %7s %12s' "$result" \
		"${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")"
	if [[ ${FUZZ_MERGE:-0} == 1 && $rc == 0 ]]; then
		echo "=== merge $t into fuzz/corpus/$t"
		"$exe" -merge=1 -max_len=4096 "fuzz/corpus/$t" "$work" \
			>"$bdir/merge-$t.txt" 2>&1 || failed=1
	fi
done

echo "=== fuzz summary (${seconds}s each)"
printf '%-10s %-6s %10s %8s %6s %7s %12s\n' target result runs exec/s cov ft corpus
for t in "${targets[@]}"; do
	printf '%-10s %s\n' "$t" "${summary[$t]}"
done
if ls "$bdir/crashes/"* >/dev/null 2>&1; then
	echo "crash inputs (make each a fuzz/regress/<target>-<what>):"
	ls -l "$bdir/crashes/"
fi
exit "$failed"
