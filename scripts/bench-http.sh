#!/usr/bin/env bash
# bench-http.sh -- the HTTP benchmark of issue 3 in one sitting: lapis
# against a bare libmicrohttpd responder serving the same bytes, and against
# etcd (docs/bench-http.md has the figures and how to read them).
#
#   scripts/bench-http.sh [bench-http options]     e.g. --quick, --only s1,s3
#
# Installs etcd-server and etcd-client from Debian when etcd is missing (as
# root; otherwise the etcd figures are skipped), builds build/bench-http and
# build/lapis (BUILD_DIR, default build), then runs the benchmark once.
# It prints figures and never fails on one: a non-zero exit means the
# benchmark could not run. Takes about 4 minutes on 2 cores.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

etcd_opt=()
if ! command -v etcd >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "bench-http.sh: installing etcd-server and etcd-client" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			etcd-server etcd-client >/dev/null
	fi
fi
if ! command -v etcd >/dev/null 2>&1; then
	echo "bench-http.sh: no etcd: etcd figures skipped" >&2
	etcd_opt=(--etcd none)
fi

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
	cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target lapis bench-http >/dev/null

tmp=${TMPDIR:-/tmp}
echo "== bench-http $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "uptime (before): $(uptime)"
echo "machine: $(nproc) CPUs, $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "temporary directory: $(df -T "$tmp" | awk 'NR==2 {print $1, $2}') at $tmp"
command -v etcd >/dev/null 2>&1 && echo "etcd: $(etcd --version 2>/dev/null | head -1)"
echo "lapis: $("$BUILD_DIR/lapis" version 2>/dev/null | head -1) ($BUILD_DIR, $(grep -m1 CMAKE_BUILD_TYPE: "$BUILD_DIR/CMakeCache.txt" | cut -d= -f2))"
echo
start=$(date +%s)
"$BUILD_DIR/bench-http" --lapis "$BUILD_DIR/lapis" "${etcd_opt[@]}" "$@"
echo
echo "took $(( $(date +%s) - start )) s"
echo "uptime (after): $(uptime)"
