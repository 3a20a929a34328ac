#!/usr/bin/env bash
# test.sh -- every test stage of lapis, shared by `make test` and .ci/run.
#
#   deps        scripts/deps.sh (installs only what is missing)
#   build       build/       plain RelWithDebInfo build
#   test        ctest in build/, every label (unit, threads, e2e)
#   build-asan  build-asan/  ASan+UBSan (-DLAPIS_SANITIZE=asan), with the
#                            debug checks on (-DLAPIS_DEBUG=ON)
#   test-asan   ctest in build-asan/, every label
#   build-tsan  build-tsan/  TSan (-DLAPIS_SANITIZE=tsan)
#   test-tsan   ctest in build-tsan/, labels threads and e2e only
#               (not e2e_kubectl)
#               (Criterion aborts under TSan, Criterion issue #274)
#   build-fuzz  build-fuzz/  clang, ASan+UBSan, libFuzzer harnesses
#                            (-DLAPIS_FUZZ=ON; tests and benchmarks off)
#   fuzz        ctest in build-fuzz/fuzz/: each fuzzer from its corpus with
#               -seed=1 and a fixed -runs (10-20 s each), plus the
#               regression inputs (time-based fuzzing: make fuzz)
#
# Usage: scripts/test.sh [STAGE...]   (default: all, in the order above)
# Environment: JOBS (parallel build and ctest jobs; default nproc),
# CTEST_ARGS (extra ctest arguments, e.g. "-R e2e"), BUILD_PREFIX (the build
# directories are PREFIX, PREFIX-asan, PREFIX-tsan, PREFIX-fuzz; default
# "build", so that two people sharing a work tree can each run the stages in
# their own).
#
# Every stage runs even after one fails (a test stage whose build failed is
# counted failed without running); each prints its elapsed seconds, a
# summary closes the run, and the exit status is 1 if any stage failed.
set -uo pipefail
export LC_NUMERIC=C # EPOCHREALTIME and awk agree on the decimal point

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
JOBS=${JOBS:-$(nproc)}
prefix=${BUILD_PREFIX:-build}
read -r -a ctest_extra <<<"${CTEST_ARGS:-}"

all_stages=(deps build test build-asan test-asan build-tsan test-tsan build-fuzz fuzz)
if (($# > 0)); then
	stages=("$@")
else
	stages=("${all_stages[@]}")
fi

configure_and_build() { # DIR [CMAKE ARGS...]
	local dir=$1
	shift
	cmake -S "$root" -B "$root/$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" &&
		cmake --build "$root/$dir" -j "$JOBS"
}

# ctest runs under "${ctest_wrap[@]}" (empty but for TSan). Its log, which
# holds every test's whole output, passing or not, is then scanned: a
# sanitizer report anywhere fails the stage, even in a test that passed
# (scripts/sanitizer-reports.awk says why that happens).
ctest_wrap=()
run_ctest() { # DIR [CTEST ARGS...]
	local dir=$1 rc=0
	shift
	local log=$root/$dir/Testing/Temporary/LastTest.log
	rm -f "$log"
	(cd "$root/$dir" &&
		"${ctest_wrap[@]}" ctest --output-on-failure -j "$JOBS" "$@" \
			"${ctest_extra[@]}") || rc=$?
	if [[ -f $log ]] && ! awk -v ctest=1 -f "$root/scripts/sanitizer-reports.awk" "$log"; then
		echo "test.sh: sanitizer reports in the output of the tests in $dir (above)"
		rc=1
	fi
	return "$rc"
}

stage_cmd() {
	case $1 in
	deps) "$root/scripts/deps.sh" ;;
	build) configure_and_build "$prefix" ;;
	test) run_ctest "$prefix" ;;
	build-asan) configure_and_build "$prefix-asan" -DLAPIS_SANITIZE=asan -DLAPIS_DEBUG=ON ;;
	test-asan)
		# For what tests/CMakeLists.txt does not set itself (the fuzz
		# corpus replays); the tests it defines get its options, which
		# also hold when ctest runs by hand.
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			run_ctest "$prefix-asan"
		;;
	build-tsan) configure_and_build "$prefix-tsan" -DLAPIS_SANITIZE=tsan ;;
	build-fuzz)
		configure_and_build "$prefix-fuzz" -DCMAKE_C_COMPILER=clang \
			-DLAPIS_SANITIZE=asan -DLAPIS_FUZZ=ON -DLAPIS_TESTS=OFF \
			-DLAPIS_BENCH=OFF
		;;
	test-tsan)
		# A fixed address-space layout: TSan's shadow mapping fails on
		# kernels with large mmap randomization ("unexpected memory
		# mapping"); without ASLR it always fits.
		if command -v setarch >/dev/null 2>&1; then
			ctest_wrap=(setarch "$(uname -m)" -R)
		fi
		# Every end-to-end script but kubectl.sh, which replays the
		# same server flows with each kubectl version (client
		# conformance); the plain and ASan stages run it. That keeps
		# the whole run inside CI's 30 minutes.
		TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/tests/tsan/suppressions.txt" \
			run_ctest "$prefix-tsan" -L 'threads|e2e' -E '^e2e_kubectl$'
		local rc=$?
		ctest_wrap=()
		return "$rc"
		;;
	fuzz)
		# The fuzz tests are enabled in fuzz/ alone (the fuzz build turns
		# the other tests off), so ctest runs there.
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			run_ctest "$prefix-fuzz/fuzz" -L fuzz
		;;
	*)
		echo "test.sh: unknown stage '$1' (stages: ${all_stages[*]})" >&2
		return 2
		;;
	esac
}

declare -A result seconds
failed=0
t_all=$EPOCHREALTIME
for s in "${stages[@]}"; do
	# A test stage needs its build: skip it when that build failed here.
	build=${s/test/build}
	[[ $s == fuzz ]] && build=build-fuzz
	if [[ ($s == test* || $s == fuzz) && ${result[$build]:-} == FAIL ]]; then
		echo "=== $s: skipped, $build failed"
		result[$s]=FAIL
		seconds[$s]=0.0
		failed=1
		continue
	fi
	echo "=== $s"
	t0=$EPOCHREALTIME
	if stage_cmd "$s"; then
		result[$s]=ok
	else
		result[$s]=FAIL
		failed=1
	fi
	seconds[$s]=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	echo "=== $s: ${result[$s]} in ${seconds[$s]}s"
done

echo "=== summary"
for s in "${stages[@]}"; do
	printf '%-11s %-4s %8ss\n' "$s" "${result[$s]}" "${seconds[$s]}"
done
printf '%-11s %-4s %8ss\n' total "$( ((failed)) && echo FAIL || echo ok)" \
	"$(awk -v a="$t_all" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
exit "$failed"
