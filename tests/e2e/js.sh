#!/usr/bin/env bash
# js.sh -- the JavaScript client, @kubernetes/client-node, against the real
# binary, over TLS (CA and bearer token from the kubeconfig lapis writes) and
# over --insecure-http. tests/e2e/js_client.mjs does the talking.
#
# The client comes from the npm registry at the version pinned in
# tests/e2e/js/package-lock.json (`npm ci`), installed into a cache outside
# the source tree: $LAPIS_JS_CACHE, by default js-client/ beside the lapis
# binary (so each build directory has its own). A cache whose lock file
# matches is reused without asking npm anything, so re-runs work offline.
#
# Why 1.3.0: it is the newest client-node that runs on Debian 12's nodejs
# (18.20): 1.4.0's Watch calls AbortSignal.any (Node >= 20.3), and 2.x needs
# undici 8 (Node >= 22). The lock overrides jsep to 1.4.0, since 1.6.0
# declares Node >= 20.16.
set -uo pipefail
. "$(dirname "$0")/lib.bash"
e2e_init js

SRC=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "SKIPPED: node and npm are not installed (scripts/deps.sh installs them)"
	e2e_finish
	exit 0
fi
NODE_VERSION=$(node --version)
if [[ ! $NODE_VERSION =~ ^v([0-9]+)\. ]] || ((BASH_REMATCH[1] < 18)); then
	echo "SKIPPED: node $NODE_VERSION is older than 18"
	e2e_finish
	exit 0
fi
echo "# node $NODE_VERSION"

CACHE=${LAPIS_JS_CACHE:-$(dirname "$(readlink -f "$LAPIS")")/js-client}
MODULE=$CACHE/node_modules/@kubernetes/client-node/package.json

# install_client: `npm ci` into $CACHE unless it already holds this lock.
# The lock is copied to installed.lock only after a whole install, so an
# interrupted one is redone; flock keeps two runs on one cache apart.
install_client() {
	mkdir -p "$CACHE" || return 1
	(
		flock 9 || exit 1
		if cmp -s "$SRC/js/package-lock.json" "$CACHE/installed.lock"; then
			echo "# client-node: reusing $CACHE"
			exit 0
		fi
		rm -f "$CACHE/installed.lock"
		cp "$SRC/js/package.json" "$SRC/js/package-lock.json" "$CACHE/" &&
			(cd "$CACHE" && npm ci --prefer-offline --no-audit --no-fund \
				--loglevel=error >"$WORK/npm.log" 2>&1) &&
			cp "$SRC/js/package-lock.json" "$CACHE/installed.lock"
		local rc=$?
		((rc == 0)) || sed 's/^/#   npm: /' "$WORK/npm.log" | tail -n 20
		exit "$rc"
	) 9>"$CACHE/.lock"
}
check "the pinned @kubernetes/client-node is installed (npm ci)" install_client
echo "# client-node $(sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$MODULE" 2>/dev/null)"

# run_client NAME KUBECONFIG: js_client.mjs against one server.
run_client() {
	local out=$WORK/$1.out
	RC=0
	node "$SRC/js_client.mjs" "$CACHE" "$2" >"$out" 2>&1 || RC=$?
	sed "s/^/[$1] /" "$out"
	check "$1: the JavaScript client's checks pass" exited_zero
}

# start_server ARGS...: starts lapis on port 0, KCFG names its kubeconfig.
start_server() {
	spawn serve "$LAPIS" serve --listen 127.0.0.1:0 "$@"
	SERVER_PID=$SPAWN_PID
	local line
	URL=
	KCFG=
	while read -r -t "$TIMEOUT" -u "$SPAWN_FD" line; do
		[[ $line =~ (https?://[0-9.:]+) ]] && URL=${BASH_REMATCH[1]}
		if [[ $line =~ ^export\ KUBECONFIG=(.*)$ ]]; then
			KCFG=${BASH_REMATCH[1]}
			break
		fi
	done
	[[ -n $URL && -f $KCFG ]]
}
kcfg_is_tls() {
	[[ $URL == https://* ]] && grep -q 'certificate-authority-data: ' "$KCFG" &&
		grep -q 'token: ' "$KCFG"
}
stop_server() {
	kill -TERM "$SERVER_PID"
	reap "$SERVER_PID"
	check "$1: server exits 0 on SIGTERM" exited_zero
}

if [[ -f $MODULE ]]; then
	check "tls: server starts" start_server --data-dir "$WORK/data" --nosync
	check "tls: an https URL, the kubeconfig has a CA and a token" kcfg_is_tls
	run_client tls "$KCFG"
	stop_server tls

	check "http: server starts" start_server --ephemeral --insecure-http
	run_client http "$KCFG"
	stop_server http
fi
e2e_finish
