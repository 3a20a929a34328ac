#!/usr/bin/env bash
# python.sh -- Debian's python3-kubernetes client against the real binary
# over TLS (tests/e2e/python_client.py does the talking).
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init python

PY=/usr/bin/python3
if ! "$PY" -c 'import kubernetes' 2>/dev/null; then
	echo "SKIPPED: python3-kubernetes is not installed (scripts/deps.sh installs it)"
	e2e_finish
	exit 0
fi
DATA=$WORK/data
serve_lapis serve "$DATA"
check "server starts" [ -n "$URL" ]
KUBECONFIG=$DATA/kubeconfig "$PY" "$(dirname "$0")/python_client.py" >"$WORK/py.out" 2>&1
RC=$?
cat "$WORK/py.out"
check "the Python client's checks pass" exited_zero
kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0 on SIGTERM" exited_zero
e2e_finish
