# lib.bash -- helpers sourced by the end-to-end scripts in tests/e2e/. Not a
# test itself, hence not *.sh: CTest runs every tests/e2e/*.sh.
#
# Each test script: sources this file, calls e2e_init NAME, runs checks with
# expect_rc / check, and ends with e2e_finish, which prints the plain closing
# line "N passed, N failed" and exits non-zero if anything failed.
#
# Synchronization never sleeps: a background lapis writes its readiness (or
# progress) lines into a FIFO that the script reads with `read -t`, where the
# timeout is only a safety net (scaled by LAPIS_TEST_SLOW under sanitizers).
#
# Environment: LAPIS_BIN (the binary under test), LAPIS_TEST_SLOW,
# LAPIS_KEEP_TMP=1 keeps the work directory for a post-mortem.

# Globals set here (LAPIS, TIMEOUT, WORK, SPAWN_*) are read by the scripts.
# shellcheck disable=SC2034
e2e_init() {
	E2E_NAME=$1
	LAPIS=${LAPIS_BIN:?LAPIS_BIN must name the lapis binary}
	SLOW=${LAPIS_TEST_SLOW:-1}
	# A safety net for a hung child, never a measurement.
	TIMEOUT=$((60 * SLOW))
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/lapis-e2e-$E2E_NAME-XXXXXX")
	E2E_PASS=0
	E2E_FAIL=0
	E2E_PIDS=()
	E2E_FIFOS=0
	trap e2e_cleanup EXIT
	echo "# $E2E_NAME: binary $LAPIS, work directory $WORK"
}

e2e_cleanup() {
	local p
	for p in "${E2E_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	if [[ ${LAPIS_KEEP_TMP:-} == 1 ]]; then
		echo "# kept $WORK"
	else
		rm -rf "$WORK"
	fi
}

ok() {
	echo "ok - $*"
	E2E_PASS=$((E2E_PASS + 1))
}

not_ok() {
	echo "not ok - $*"
	E2E_FAIL=$((E2E_FAIL + 1))
}

# check DESC CONDITION...: runs the condition (a command), records the result.
check() {
	local desc=$1
	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
	fi
}

# run CMD...: runs a command with stdout in $WORK/out and stderr in
# $WORK/err, its exit code in RC.
run() {
	RC=0
	"$@" >"$WORK/out" 2>"$WORK/err" || RC=$?
}

# expect_rc CODE DESC CMD...: runs CMD and checks its exit code. On a
# mismatch, shows what the command printed.
expect_rc() {
	local want=$1 desc=$2
	shift 2
	run "$@"
	if [[ $RC == "$want" ]]; then
		ok "$desc"
	else
		not_ok "$desc (exit $RC, expected $want)"
		sed 's/^/#   stdout: /' "$WORK/out" | head -n 20
		sed 's/^/#   stderr: /' "$WORK/err" | head -n 20
	fi
}

# out_has PATTERN / err_has PATTERN: the last run's stdout / stderr matches
# the extended regular expression.
out_has() { grep -Eq -- "$1" "$WORK/out"; }
err_has() { grep -Eq -- "$1" "$WORK/err"; }
err_empty() { [[ ! -s $WORK/err ]]; }

# field FILE NAME: the value of a "name: value" line of lapis's text output.
field() {
	sed -n "s/^$2: *//p" "$1" | head -n 1
}

# spawn NAME CMD...: starts CMD in the background with its stdout on a FIFO
# that this shell reads; stderr goes to $WORK/NAME.log. Sets SPAWN_PID and
# SPAWN_FD (read lines with: read -r -t "$TIMEOUT" -u "$SPAWN_FD" line).
spawn() {
	local name=$1
	shift
	E2E_FIFOS=$((E2E_FIFOS + 1))
	local fifo=$WORK/fifo.$E2E_FIFOS
	mkfifo "$fifo"
	"$@" >"$fifo" 2>>"$WORK/$name.log" &
	SPAWN_PID=$!
	E2E_PIDS+=("$SPAWN_PID")
	# Opening the reading end waits for the child to open the writing
	# end, so after this both are open and the name can go.
	exec {SPAWN_FD}<"$fifo"
	rm -f "$fifo"
}

# reap PID: waits for a child and sets RC to its exit status.
reap() {
	RC=0
	# The redirection keeps bash's "Killed" job notice out of the log.
	{ wait "$1"; } 2>/dev/null || RC=$?
}

e2e_finish() {
	echo "$E2E_NAME: $E2E_PASS passed, $E2E_FAIL failed"
	[[ $E2E_FAIL == 0 ]]
}
