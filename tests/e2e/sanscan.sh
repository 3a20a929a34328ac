#!/usr/bin/env bash
# sanscan.sh -- the sanitizer-report scan itself: lib.bash must fail a script
# whose spawned processes or commands print a sanitizer report, and
# scripts/sanitizer-reports.awk must find reports in ctest's log and name the
# test each came from. Fake reports, printed by shell commands, so that this
# runs in every build.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib.bash"
e2e_init sanscan
AWK=$here/../../scripts/sanitizer-reports.awk

# inner.sh MODE: an e2e script of its own, using lib.bash as the tests do.
# Each fake server sets its TERM trap before it says it is ready.
cat >"$WORK/inner.sh" <<EOF
set -uo pipefail
. "$here/lib.bash"
e2e_init inner
case \$1 in
clean)
	spawn serve bash -c 'trap "exit 0" TERM; echo ready; while :; do sleep 0.1; done'
	read -r -t "\$TIMEOUT" -u "\$SPAWN_FD" line
	kill -TERM "\$SPAWN_PID"
	reap "\$SPAWN_PID"
	expect_rc 0 "a clean command" bash -c 'echo fine >&2'
	;;
server-leak)
	# Like a server whose leak check runs when it exits on SIGTERM.
	spawn serve bash -c 'trap "echo ==1==ERROR: LeakSanitizer: detected memory leaks >&2; echo SUMMARY: AddressSanitizer: 8 byte leaked >&2; exit 0" TERM; echo ready; while :; do sleep 0.1; done'
	read -r -t "\$TIMEOUT" -u "\$SPAWN_FD" line
	kill -TERM "\$SPAWN_PID"
	reap "\$SPAWN_PID"
	check "the server exited 0" test "\$RC" = 0
	;;
left-running)
	# Never stopped by the script: e2e_finish stops it with SIGTERM.
	spawn serve bash -c 'trap "echo x.c:1:2: runtime error: load of null pointer >&2; exit 0" TERM; echo ready; while :; do sleep 0.1; done'
	read -r -t "\$TIMEOUT" -u "\$SPAWN_FD" line
	;;
command)
	expect_rc 0 "a command that exits 0" bash -c 'echo "WARNING: ThreadSanitizer: data race (pid=1)" >&2'
	;;
esac
e2e_finish
EOF

for mode in clean server-leak left-running command; do
	bash "$WORK/inner.sh" "$mode" >"$WORK/$mode.out" 2>&1
	eval "rc_${mode//-/_}=\$?"
done
check "a clean script passes" test "$rc_clean" = 0
check "a server's leak report at exit fails the script" test "$rc_server_leak" = 1
check "... and is printed with the process it came from" \
	grep -q '^### sanitizer report 1, from serve (pid [0-9]*):' "$WORK/server-leak.out"
check "... in full" grep -q '^#   SUMMARY: AddressSanitizer: 8 byte leaked' "$WORK/server-leak.out"
check "a process still running at the end is stopped and scanned" test "$rc_left_running" = 1
check "... its UBSan line is the report" grep -q 'runtime error: load of null pointer' "$WORK/left-running.out"
check "a report in a command's stderr fails the script" test "$rc_command" = 1
check "... named after the command" grep -q '^### sanitizer report 1, from bash -c:' "$WORK/command.out"

# ctest's log: each report under the name of its test.
cat >"$WORK/LastTest.log" <<'EOF'
1/3 Testing: quiet
1/3 Test: quiet
Output:
----------------------------------------------------------
all good
<end of output>
2/3 Testing: leaky
2/3 Test: leaky
Output:
----------------------------------------------------------
[====] Synthesis: Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0
==7==ERROR: LeakSanitizer: detected memory leaks
Direct leak of 48 byte(s) in 1 object(s) allocated from:
    #0 0x1 in malloc
SUMMARY: AddressSanitizer: 48 byte(s) leaked in 1 allocation(s).
<end of output>
3/3 Testing: racy
3/3 Test: racy
Output:
----------------------------------------------------------
WARNING: ThreadSanitizer: data race (pid=9)
<end of output>
EOF
awk -v ctest=1 -f "$AWK" "$WORK/LastTest.log" >"$WORK/scan.out"
check "reports in ctest's log fail the scan" test $? = 1
check "... the leak is named after its test" grep -q '^### sanitizer report 1, from leaky:' "$WORK/scan.out"
check "... the race after its own" grep -q '^### sanitizer report 2, from racy:' "$WORK/scan.out"
check "... and there are no others" test "$(grep -c '^###' "$WORK/scan.out")" = 2
printf 'FATAL: ThreadSanitizer: unexpected memory mapping 0x1-0x2\n' |
	awk -v what=x -f "$AWK" >/dev/null
check "a sanitizer's own fatal error is a report" test $? = 1
printf 'ThreadSanitizer: CHECK failed: tsan_rtl.cpp:1 "((x)) != (0)" (0x0, 0x0)\n' |
	awk -v what=x -f "$AWK" >/dev/null
check "... as is its failed CHECK" test $? = 1
head -n 6 "$WORK/LastTest.log" | awk -v ctest=1 -f "$AWK" >/dev/null
check "a log without reports passes the scan" test $? = 0
e2e_finish
