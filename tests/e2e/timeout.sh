#!/usr/bin/env bash
# timeout.sh -- writes run off libmicrohttpd's threads, and --request-timeout
# answers a write that cannot finish with kube's 504 Timeout Status.
#
# A second process (lmdb_hold, tests/support/lmdb_hold.c) holds the store's
# LMDB write lock, so no write can commit until the test lets go: a write
# that times out here is one that cannot have finished, whatever the load.
# Nothing depends on how fast anything runs; the one wait is the server's
# own --request-timeout.
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init timeout
# synced: a store without fsync runs writes on libmicrohttpd's threads,
# with no write pool and so no 504 for a write that cannot finish
E2E_SYNC=1

HOLD=${LAPIS_LMDB_HOLD:-$(dirname "$LAPIS")/tests/lmdb_hold}
DATA=$WORK/data
NS=/api/v1/namespaces/default/configmaps

start_server() {
	serve_lapis serve "$DATA" --insecure-http "$@"
	[[ -n $URL ]]
}

# req METHOD PATH [BODY]: code in CODE, body in $WORK/body
req() {
	local m=$1 p=$2 body=${3-}
	CODE=$(curl -sS -m "$TIMEOUT" -o "$WORK/body" -w '%{http_code}' -X "$m" \
		-H "Content-Type: application/json" ${body:+--data-binary "$body"} \
		"$URL$p")
}
cm() { echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\"}}"; }
exists() { req GET "$NS/$1"; [[ $CODE == 200 ]]; }

# hold_start / hold_release: the store's write lock, from another process.
hold_start() {
	mkfifo "$WORK/hold.in"
	exec {HOLD_IN}<>"$WORK/hold.in"
	spawn hold bash -c 'exec "$0" "$1" <"$2"' "$HOLD" "$DATA/store" "$WORK/hold.in"
	HOLD_PID=$SPAWN_PID
	local line=
	read -r -t "$TIMEOUT" -u "$SPAWN_FD" line
	[[ $line == holding ]]
}
hold_release() {
	echo go >&"$HOLD_IN"
	reap "$HOLD_PID"
	exec {HOLD_IN}>&-
	rm -f "$WORK/hold.in"
	[[ $RC == 0 ]]
}

expect_rc 2 "--write-workers 0 is a usage error" "$LAPIS" serve --write-workers 0
expect_rc 2 "--write-workers 5000 is a usage error" "$LAPIS" serve --write-workers 5000
expect_rc 0 "serve --help documents --request-timeout and --write-workers" \
	bash -c "'$LAPIS' serve --help | grep -q -- --request-timeout && '$LAPIS' serve --help | grep -q -- --write-workers"

# One worker, so the second stuck write waits in the queue; the timeout
# scales with the sanitizers' slowness so that ordinary writes stay well
# inside it.
check "server starts with --request-timeout and one write worker" \
	start_server --request-timeout "${SLOW}s" --write-workers 1
req POST "$NS" "$(cm before)"
check "a write commits" code_is 201

check "a second process holds the store's write lock" hold_start
req POST "$NS" "$(cm stuck)"
check "a write that cannot commit gets 504 Timeout after --request-timeout" \
	code_has 504 '"kind":"Status"' '"status":"Failure"' '"reason":"Timeout"' '"code":504' \
	'"message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504'
req GET "$NS/before"
check "reads are served while a write waits for its commit" code_is 200
req GET /readyz
check "readyz answers while a write waits" code_is 200
req PATCH "$NS/before" '{"data":{"k":"v"}}'
check "a patch that cannot commit (queued behind the stuck one) gets 504" code_has 504 '"reason":"Timeout"'
CODE=$(curl -sS -A curl/8.1.2 -o "$WORK/body" -w '%{http_code}' -X PATCH -H 'Content-Type: application/merge-patch+json' \
	--data-binary '{"data":{"k":"w"}}' "$URL$NS/before")
check "... and curl's 504 is indented, as kube prints it for curl" eval 'code_has 504 "\"reason\": \"Timeout\"" && python3 -c "
import json; b=open(\"$WORK/body\").read(); assert b==json.dumps(json.loads(b), indent=2), b"'
# A client that sends a write and hangs up without reading the answer.
port=${URL##*:}
body=$(cm gone)
exec {RAW}<>"/dev/tcp/127.0.0.1/$port"
printf 'POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
	"$NS" "${#body}" "$body" >&"$RAW"
exec {RAW}>&-
req DELETE "$NS/before"
check "a delete that cannot commit gets 504" code_has 504 '"reason":"Timeout"'

check "the lock holder lets go" hold_release
req POST "$NS" "$(cm after)"
check "writes commit again once the store is free" code_is 201
# With one worker, "stuck" held it in its commit while the patch, the hung-up
# client's create and the delete waited in the queue: those timed out there
# and never ran; "stuck" may have committed after its 504, as in kube.
req GET "$NS/before"
check "a write that timed out in the queue never ran (patch)" bash -c "[[ $CODE == 200 ]] && ! grep -q '\"k\":\"v\"' '$WORK/body'"
check "a write that timed out in the queue never ran (delete)" code_is 200
n=0
for name in stuck gone; do exists "$name" && n=$((n + 1)); done
check "at most one of the writes that timed out committed ($n)" [ "$n" -le 1 ]

# Shut-down with writes in flight: the lock is held; "last" gets its 504
# (so it reached the pool, and its worker may still wait in the commit),
# another write races the SIGTERM (it may or may not get in). The server
# finishes what it took once the store is free, resumes every suspended
# connection and exits 0 (and, under ASan, leaks nothing).
check "the lock is held again" hold_start
req POST "$NS" "$(cm last)"
check "a write in flight at shut-down got its 504" code_is 504
curl -sS -m "$TIMEOUT" -o /dev/null -X POST -H "Content-Type: application/json" \
	--data-binary "$(cm racer)" "$URL$NS" 2>/dev/null &
CURL_PID=$!
kill -TERM "$SERVER_PID"
check "the lock holder lets go" hold_release
reap "$SERVER_PID"
check "the server exits 0 after SIGTERM with writes in flight" exited_zero
wait "$CURL_PID" 2>/dev/null

# Defaults: the ordinary path, many writers at once through the pool.
check "server restarts with the default pool" start_server
# kube's ?timeout= shortens --request-timeout (60s here) for one request.
check "the lock is held once more" hold_start
req POST "$NS?timeout=${SLOW}s" "$(cm short)"
check "?timeout= below --request-timeout: a stuck write gets 504 by then" \
	code_has 504 '"reason":"Timeout"'
req GET "$NS/before?timeout=${SLOW}s"
check "?timeout= is accepted on reads" code_is 200
check "the lock holder lets go" hold_release
req POST "$NS?timeout=soon" "$(cm bad)"
check "a malformed ?timeout= is 400 with Go's message" code_has 400 '"reason":"BadRequest"' \
	'invalid timeout specified in the request URL - time: invalid duration \"soon\"'
req GET "$NS?timeout=5x"
check "a ?timeout= with an unknown unit is 400" code_has 400 'time: unknown unit \"x\" in duration \"5x\"'
req GET "$NS?timeout=5"
check "a ?timeout= without a unit is 400" code_has 400 'time: missing unit in duration \"5\"'
req POST "$NS?timeout=-1s" "$(cm negative)"
check "a negative ?timeout= leaves --request-timeout (the write commits)" code_is 201
req GET "$NS?watch=1&timeout=soon&timeoutSeconds=1"
check "watches ignore ?timeout= (kube: long-running)" code_is 200
for i in $(seq 1 32); do
	curl -sS -o /dev/null -w '%{http_code}\n' -X POST -H "Content-Type: application/json" \
		--data-binary "$(cm "p$i")" "$URL$NS" >>"$WORK/codes" &
done
wait_curls() { local j; for j in $(jobs -p); do [[ $j == "$SERVER_PID" ]] || wait "$j"; done; }
wait_curls
check "32 concurrent creates all get 201" bash -c "[[ \$(grep -c '^201$' '$WORK/codes') == 32 ]]"
req GET "$NS"
check "and all 32 are listed" bash -c "[[ \$(grep -o '\"name\":\"p[0-9]*\"' '$WORK/body' | wc -l) == 32 ]]"
# Patches retry a conflicting commit (WRITE_RETRIES, 8 tries): each of 8
# racing patches loses at most 7 times, to the 7 others.
for i in $(seq 1 8); do
	curl -sS -o /dev/null -w '%{http_code}\n' -X PATCH -H "Content-Type: application/merge-patch+json" \
		--data-binary "{\"data\":{\"k$i\":\"v$i\"}}" "$URL$NS/p1" >>"$WORK/pcodes" &
done
wait_curls
check "8 concurrent patches of one object all get 200" bash -c "[[ \$(grep -c '^200$' '$WORK/pcodes') == 8 ]]"
req GET "$NS/p1"
check "and the object holds all 8 keys" bash -c "[[ \$(grep -o '\"k[0-9]*\":\"v[0-9]*\"' '$WORK/body' | wc -l) == 8 ]]"
kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0" exited_zero

# Writes parked on a commit that cannot happen, more of them than slots:
# four run (each parked in its commit on a fiber) and the rest queue for a
# slot. Reads go on; once the store is free every write commits, once.
check "server starts with four write slots" start_server --write-workers 4
check "the lock is held for the parked writes" hold_start
for i in $(seq 1 24); do
	curl -sS -o /dev/null -w '%{http_code}\n' -X POST -H "Content-Type: application/json" \
		--data-binary "$(cm "q$i")" "$URL$NS" >>"$WORK/qcodes" &
done
req GET "$NS/before"
check "a GET answers while 24 writes wait for 4 slots and a commit" code_is 200
check "the lock holder lets go" hold_release
wait_curls
check "the 24 parked and queued creates all get 201" bash -c "[[ \$(grep -c '^201$' '$WORK/qcodes') == 24 ]]"
req GET "$NS"
check "and all 24 are listed, each at its own resourceVersion" python3 -c "
import json, sys
items = [i for i in json.load(open('$WORK/body'))['items'] if i['metadata']['name'].startswith('q')]
sys.exit(not (len(items) == 24 and len({i['metadata']['resourceVersion'] for i in items}) == 24))"
kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0 (four slots)" exited_zero

# Clients that hang up while their write waits: one whose write is parked
# on its commit, one whose write waits for the only slot. Once the store is
# free, each write finishes with nobody to answer, its slot is given on,
# and the server still takes writes and shuts down.
# hangup NAME: send a create and reset the connection (SO_LINGER 0)
# without reading.
hangup() {
	python3 - "${URL##*:}" "$NS" "$(cm "$1")" <<'PY'
import socket, struct, sys
port, path, body = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          b"Content-Length: %d\r\n\r\n" % (path.encode(), len(body)) + body)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
PY
}
check "server starts with one write slot" start_server --write-workers 1
check "the lock is held for the hung-up writers" hold_start
curl -sS -o /dev/null -w '%{http_code}\n' -X POST -H "Content-Type: application/json" \
	--data-binary "$(cm slot1)" "$URL$NS" >"$WORK/s1code" &
SLOT_PID=$!
hangup hung1
hangup hung2
req GET "$NS/before"
check "reads go on while writes of clients that hung up wait" code_is 200
check "the lock holder lets go" hold_release
wait "$SLOT_PID"
check "the write holding the slot gets 201" bash -c "[[ \$(cat '$WORK/s1code') == 201 ]]"
req POST "$NS" "$(cm afterhang)"
check "a write after the hung-up ones gets the slot and 201" code_is 201
# A write whose ?timeout= passes while its body is still on the way: kube's
# timeout filter answers 504 and the handler's storage call finds its
# context done, so nothing is written (this waits 1 s of the server's clock
# by design: the deadline is the subject).
check "a write whose deadline passed before its body came gets 504" python3 - "$URL" <<'PY'
import socket, sys, time, json
host, port = sys.argv[1].split('//')[1].split(':')
b = json.dumps({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'latebody'}}).encode()
s = socket.create_connection((host, int(port)))
s.sendall(b'POST /api/v1/namespaces/default/configmaps?timeout=1s HTTP/1.1\r\nHost: x\r\n'
          b'Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n' % len(b))
time.sleep(1.5)
s.sendall(b)
resp = b''
while True:
    d = s.recv(65536)
    if not d:
        break
    resp += d
assert resp.startswith(b'HTTP/1.1 504') and b'"reason":"Timeout"' in resp, resp[:300]
PY
req GET "$NS/latebody"
check "... and never ran" code_is 404
kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0 after clients hung up on their writes" exited_zero

# The request-head deadline (kube's ReadHeaderTimeout): a client that sends
# its head a byte at a time is cut off, idle keep-alive connections are not.
expect_rc 2 "--read-header-timeout 0 is a usage error" "$LAPIS" serve --read-header-timeout 0
expect_rc 0 "serve --help documents --read-header-timeout" \
	bash -c "'$LAPIS' serve --help | grep -q -- --read-header-timeout"
DATA=$WORK/data-head
check "a server with a 1 s head deadline starts" start_server --read-header-timeout 1s --idle-timeout 30s
check "connections that send no head, or send it slowly, are closed; idle and busy ones are not" python3 - "$URL" <<'PY'
import socket, subprocess, sys, time
url = sys.argv[1]
host, port = url.split('//')[1].split(':')
def conn():
    s = socket.create_connection((host, int(port)))
    s.settimeout(1)
    return s
def ended(s):
    """True once the server has closed s (without answering)."""
    try:
        d = s.recv(4096)
    except socket.timeout:
        return False
    except OSError:
        return True
    assert not d, ('an answer to an unfinished head', d)
    return True
# a watch that outlives the deadline ends by its own timeoutSeconds, whole
w = subprocess.Popen(['curl', '-sS', '-N', '-o', '/dev/null', '-w', '%{http_code}',
                      url + '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=4'],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
# a head sent a byte a second: never idle, never complete; 25 s would
# be 25 bytes: the deadline cuts it long before
s = conn()
s.sendall(b'GET /healthz HTTP/1.1\r\nHost: x\r\n')
for i in range(25):
    if ended(s):
        break
    try:
        s.sendall(b'X')
    except OSError:
        break
else:
    raise AssertionError('a head dripping for 25 s was not cut')
# a connection that sends nothing: cut by the deadline, not the 30 s idle
s = conn()
for i in range(25):
    if ended(s):
        break
else:
    raise AssertionError('a silent connection was kept 25 s')
# keep-alive: idle past the head deadline, then a second request
s = conn()
s.settimeout(30)
for i in range(2):
    s.sendall(b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
    r = s.recv(4096)
    assert r.startswith(b'HTTP/1.1 200'), (i, r)
    time.sleep(3)
out, err = w.communicate(timeout=60)
assert w.returncode == 0 and out == b'200', (w.returncode, out, err)
PY
check "... and the log says so" grep -q 'connection(s) whose request head was not complete in time' "$WORK/serve.log"
kill -TERM "$SERVER_PID"
reap "$SERVER_PID"
check "server exits 0 with connections cut for their head" exited_zero

e2e_finish
