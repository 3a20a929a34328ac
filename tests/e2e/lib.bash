# lib.bash -- helpers sourced by the end-to-end scripts in tests/e2e/. Not a
# test itself, hence not *.sh: CTest runs every tests/e2e/*.sh.
#
# Each test script: sources this file, calls e2e_init NAME, runs checks with
# expect_rc / check, and ends with e2e_finish, which prints the plain closing
# line "N passed, N failed" and exits non-zero if anything failed.
#
# Output: a failed check prints "not ok - ..." with its evidence; a passed
# one goes to $WORK/passed only, unless LAPIS_TEST_VERBOSE=1. The suites run
# hundreds of checks, and a failure has to stand near the top of what the
# test printed: CI shows the head of a failed test's output, not all of it.
#
# Synchronization never sleeps: a background lapis writes its readiness (or
# progress) lines into a FIFO that the script reads with `read -t`, where the
# timeout is only a safety net (scaled by LAPIS_TEST_SLOW under sanitizers).
#
# Sanitizer reports fail the script: the stderr of every command run with
# run/expect_rc and the log of every spawned process are scanned (by
# scripts/sanitizer-reports.awk) when the command ends or the process is
# reaped, and each report is printed as a failed check. A spawned process
# still running at e2e_finish is stopped with SIGTERM first, so that its
# exit-time leak check runs (SIGKILL would skip it).
#
# Environment: LAPIS_BIN (the binary under test), LAPIS_TEST_SLOW,
# LAPIS_KEEP_TMP=1 keeps the work directory for a post-mortem,
# LAPIS_TEST_VERBOSE=1 prints every passed check.

# Two helpers the scripts run hundreds of times, called directly rather than
# through a wrapper that costs more than the call itself:
# - python3 is Debian's /usr/bin/python3 (the one deps.sh gives yaml and
#   kubernetes) when it exists, not a version manager's shim on PATH (pyenv's
#   adds about 0.3 s to every call).
# - kubectl is the versioned kubectl.1.33 beside the kubectl on PATH when
#   that is a dispatcher with versioned siblings: it runs exactly that
#   binary for lapis's v1.33, after asking the server's version first
#   (about 0.15 s a call). Scripts that test the default kubectl itself run
#   it with `command kubectl` (kubectl.sh, crd.sh's version loop).
if [[ -x /usr/bin/python3 ]]; then
	python3() { /usr/bin/python3 "$@"; }
fi
E2E_KDIR=$(dirname "$(readlink -f "$(command -v kubectl 2>/dev/null || echo /nonexistent)")")
if [[ -x $E2E_KDIR/kubectl.1.33 ]]; then
	kubectl() { "$E2E_KDIR/kubectl.1.33" "$@"; }
fi

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
	# pid -> log of a spawned process not reaped yet; log -> bytes scanned
	declare -gA E2E_LOG E2E_SCANNED
	E2E_LOG=()
	E2E_SCANNED=()
	trap e2e_cleanup EXIT
	# kube pretty-prints JSON for a User-Agent of curl (and Wget, and
	# browsers); the scripts' checks read compact JSON, so their curl
	# says it is another client. The pretty form is checked in api.sh
	# with an explicit -A.
	export CURL_HOME=$WORK/curlhome
	mkdir -p "$CURL_HOME"
	echo 'user-agent = "lapis-e2e"' >"$CURL_HOME/.curlrc"
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
	if [[ ${LAPIS_TEST_VERBOSE:-} == 1 ]]; then
		echo "ok - $*"
	else
		echo "ok - $*" >>"$WORK/passed"
	fi
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

E2E_SCAN_AWK=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts" && pwd)/sanitizer-reports.awk

# san_scan FILE WHAT: the sanitizer reports in the part of FILE not scanned
# yet, each printed and counted as a failed check named after WHAT.
san_scan() {
	local file=$1 what=$2 off size reports n
	[[ -f $file ]] || return 0
	off=${E2E_SCANNED[$file]:-0}
	size=$(stat -c %s "$file")
	((size > off)) || return 0
	E2E_SCANNED[$file]=$size
	reports=$(tail -c "+$((off + 1))" "$file" | head -c "$((size - off))" |
		awk -v what="$what" -f "$E2E_SCAN_AWK") && return 0
	echo "$reports"
	n=$(grep -c '^### sanitizer report' <<<"$reports")
	not_ok "$what: $n sanitizer report(s) in $(basename "$file")"
}

# run CMD...: runs a command with stdout in $WORK/out and stderr in
# $WORK/err, its exit code in RC. Sanitizer reports in its stderr fail the
# script.
run() {
	RC=0
	"$@" >"$WORK/out" 2>"$WORK/err" || RC=$?
	E2E_SCANNED[$WORK/err]=0
	san_scan "$WORK/err" "${1##*/} ${2-}"
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

# watch_lines N OUT CURL-ARG...: runs curl -sSN CURL-ARG... (a watch) into
# OUT until OUT holds N lines, the watch ends or $TIMEOUT seconds pass, then
# ends it and keeps OUT's first N lines. A watch of history thus ends as soon
# as its events are in, instead of at its timeoutSeconds.
watch_lines() {
	local n=$1
	shift
	watch_until "((\$(wc -l <\"\$1\") >= $n))" "$@"
	local head
	head=$(head -n "$n" "$1")
	[[ -z $head ]] || printf '%s\n' "$head" >"$1"
}

# watch_grep PATTERN OUT CURL-ARG...: the same, until a line of OUT holds
# the fixed string PATTERN; OUT keeps every line.
watch_grep() {
	local pat=$1
	shift
	watch_until "grep -qF -- $(printf %q "$pat") \"\$1\"" "$@"
}

watch_until() { # CONDITION OUT CURL-ARG... (CONDITION: shell code, $1 is OUT)
	local cond=$1 out=$2 i
	shift 2
	curl -sSN --max-time "$TIMEOUT" "$@" >"$out" &
	local pid=$!
	for ((i = 0; i < TIMEOUT * 20; i++)); do
		(set -- "$out"; eval "$cond") && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# refs_defined FILE: every $ref of the OpenAPI v3 document in FILE names a
# schema the document defines
refs_defined() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
S = d["components"]["schemas"]
def refs(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from refs(v)
    elif isinstance(x, list):
        for v in x:
            yield from refs(v)
bad = sorted({r for r in refs(d) if r.split("/")[-1] not in S})
if bad:
    print("#   undefined:", bad)
sys.exit(1 if bad else 0)
PY
}

# out_has PATTERN / err_has PATTERN: the last run's stdout / stderr matches
# the extended regular expression.
out_has() { grep -Eq -- "$1" "$WORK/out"; }
err_has() { grep -Eq -- "$1" "$WORK/err"; }
err_text() { grep -Fq -- "$1" "$WORK/err"; } # a fixed string
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
	E2E_LOG[$SPAWN_PID]=$WORK/$name.log
	# Opening the reading end waits for the child to open the writing
	# end, so after this both are open and the name can go.
	exec {SPAWN_FD}<"$fifo"
	rm -f "$fifo"
}

# serve_lapis NAME DATA [ARGS...]: starts `lapis serve` (TLS unless ARGS
# say --insecure-http) on a free loopback port on data directory DATA (no
# fsync, where a write commits on its HTTP thread unless another commit is
# under way, unless E2E_SYNC is set: then synced, where every write parks
# for the writer thread's group commit), stderr in
# $WORK/NAME.log; sets SERVER_PID and URL (empty when no URL line came).
serve_lapis() {
	local name=$1 data=$2 line
	shift 2
	local sync=(--nosync)
	[[ -n ${E2E_SYNC:-} ]] && sync=()
	spawn "$name" "$LAPIS" serve --data-dir "$data" --listen 127.0.0.1:0 \
		"${sync[@]}" "$@"
	SERVER_PID=$SPAWN_PID
	URL=
	while read -r -t "$TIMEOUT" -u "$SPAWN_FD" line; do
		if [[ $line =~ (https?://[0-9.:]+) ]]; then
			URL=${BASH_REMATCH[1]}
			break
		fi
	done
}

# reap PID: waits for a child and sets RC to its exit status (and REAPED_LOG
# to its log); a spawned child's log is scanned for sanitizer reports.
reap() {
	RC=0
	# The redirection keeps bash's "Killed" job notice out of the log.
	{ wait "$1"; } 2>/dev/null || RC=$?
	local log=${E2E_LOG[$1]:-}
	REAPED_LOG=$log
	if [[ -n $log ]]; then
		unset "E2E_LOG[$1]"
		san_scan "$log" "$(basename "$log" .log) (pid $1)"
	fi
}

# exited_zero: the process reap waited for exited 0; if not, shows how it
# ended (a signal is 128 + its number) and the end of its log.
exited_zero() {
	[[ $RC == 0 ]] && return 0
	echo "#   exit status $RC$( ((RC > 128)) && echo " (signal $((RC - 128)))")"
	[[ -n ${REAPED_LOG:-} && -f $REAPED_LOG ]] &&
		tail -n 20 "$REAPED_LOG" | sed 's/^/#   log: /'
	return 1
}

e2e_finish() {
	local p rc=${RC-}
	for p in "${!E2E_LOG[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			echo "# pid $p is still running at the end: SIGTERM"
			kill -TERM "$p" 2>/dev/null
		fi
		reap "$p"
	done
	RC=$rc
	echo "$E2E_NAME: $E2E_PASS passed, $E2E_FAIL failed"
	[[ $E2E_FAIL == 0 ]]
}

# schemaless_crd PLURAL GROUP KIND [SINGULAR]: the YAML of a namespaced CRD
# with one served storage version v1 that keeps whatever it is given.
schemaless_crd() {
	local singular=${4:+", singular: $4"}
	cat <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $1.$2
spec:
  group: $2
  scope: Namespaced
  names: {plural: $1$singular, kind: $3}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML
}

# req METHOD PATH [BODY [CONTENT-TYPE]]: a plain-HTTP request to $URL, the
# code in CODE and the body in $WORK/body (scripts over TLS define their
# own).
req() {
	local m=$1 p=$2 body=${3-} ct=${4:-application/json}
	if [[ -n $body ]]; then
		CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X "$m" \
			-H "Content-Type: $ct" --data-binary "$body" "$URL$p")
	else
		CODE=$(curl -sS -o "$WORK/body" -w '%{http_code}' -X "$m" "$URL$p")
	fi
}

# The curl scripts' checks of their last answer (CODE, and the body in
# $WORK/body): code_is CODE, has TEXT, code_has CODE TEXT... (every TEXT).
code_is() { [[ $CODE == "$1" ]] || { echo "#   got $CODE: $(head -c 400 "$WORK/body")"; return 1; }; }
has() { grep -qF -- "$1" "$WORK/body" || { echo "#   body lacks $1: $(head -c 400 "$WORK/body")"; return 1; }; }
code_has() {
	code_is "$1" || return 1
	shift
	local t
	for t in "$@"; do has "$t" || return 1; done
}
