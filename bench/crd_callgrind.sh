#!/bin/bash
# crd_callgrind.sh -- instructions per request, custom resource against
# ConfigMap, GET and LIST limit=500, counted by callgrind: deterministic,
# so a difference of 1% shows where wall-clock rates on a shared machine
# cannot.
#
#   bench/crd_callgrind.sh [--lapis PATH] [--bench-crd PATH] [--keep]
#
# 1. bench-crd (one short round, --keep) makes a data directory with one
#    CRD, 1,000 custom resources and 1,000 ConfigMaps of the same size.
# 2. lapis serves it under valgrind --tool=callgrind. For each kind, curl
#    sends 5 warm-up requests, then callgrind's counters are zeroed, then
#    one connection sends N GETs of objects spread over the set (or NL
#    first pages of LIST limit=500), then the counters are dumped. Two
#    rounds; the idle server's own count over 3 s is printed too.
# 3. Prints the process's instructions per request (all threads), the same
#    without libc memset (libmicrohttpd zeroes its 32 KiB connection pool
#    for every request with rep stosb, which callgrind counts per byte),
#    and ConfigMap/CR. With --keep the dumps stay, for callgrind_annotate.
#
# A benchmark, not a test: exit 0 whatever the figures, 1 when it cannot run.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
lapis=$here/build/lapis
bench=$here/build/bench-crd
keep=false
N=${N:-200}
NL=${NL:-20}
while [ $# -gt 0 ]; do
	case $1 in
	--lapis) lapis=$(readlink -f "$2"); shift 2 ;;
	--bench-crd) bench=$(readlink -f "$2"); shift 2 ;;
	--keep) keep=true; shift ;;
	-h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: crd_callgrind.sh [--lapis PATH] [--bench-crd PATH] [--keep]" >&2; exit 2 ;;
	esac
done
for t in valgrind callgrind_control callgrind_annotate curl; do
	command -v $t >/dev/null || { echo "crd_callgrind: needs $t" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/crd-callgrind-XXXXXX")
vp=
cleanup() {
	if [ -n "$vp" ]; then kill "$vp" 2>/dev/null || true; wait "$vp" 2>/dev/null || true; fi
	$keep || rm -rf "$work"
}
trap cleanup EXIT

# 1. the data: bench-crd's own objects, kept
made=$(cd "$work" && TMPDIR=$work "$bench" --lapis "$lapis" --crds 1 --objects 1000 \
	--nosync --rounds 1 --seconds 0.1 --no-pin --keep | sed -n 's/^kept //p')
data=$made/data
[ -d "$data/store" ] || { echo "crd_callgrind: bench-crd made no data directory" >&2; exit 1; }

# 2. the server under callgrind (no controllers, no compaction: nothing but
#    the requests runs while counting)
valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" \
	"$lapis" serve --data-dir "$data" --listen 127.0.0.1:0 --insecure-http \
	--nosync --compaction-interval 0 --controllers "" >"$work/log" 2>&1 &
vp=$!
port=
for _ in $(seq 600); do
	port=$(sed -n 's/.*serving http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/log" | head -1)
	[ -n "$port" ] && break
	kill -0 "$vp" 2>/dev/null || break
	sleep 0.2
done
[ -n "$port" ] || { echo "crd_callgrind: lapis did not start:" >&2; cat "$work/log" >&2; exit 1; }
base=http://127.0.0.1:$port
cr=$base/apis/g0.bench.example.com/v1/namespaces/default/w0000s
cm=$base/api/v1/namespaces/default/configmaps

# A curl config of n requests on one connection, bodies discarded. Not
# curl's own User-Agent: kube (and lapis) pretty-print JSON for curl.
requests() { # collection n get|list
	local i
	echo 'user-agent = "crd-callgrind"'
	for i in $(seq 1 "$2"); do
		if [ "$3" = get ]; then
			printf 'url = "%s/o%05d"\n' "$1" $(((i * 37) % 1000))
		else
			printf 'url = "%s?limit=500"\n' "$1"
		fi
		echo 'output = "/dev/null"'
	done
}
measure() { # label collection n get|list
	requests "$2" 5 "$4" | curl -sf -K -
	callgrind_control -z "$vp" >/dev/null 2>&1
	requests "$2" "$3" "$4" | curl -sf -K -
	callgrind_control -d "$1" "$vp" >/dev/null 2>&1
}
callgrind_control -z "$vp" >/dev/null 2>&1
sleep 3
callgrind_control -d idle "$vp" >/dev/null 2>&1
for round in 1 2; do
	measure "cm_get$round" "$cm" "$N" get
	measure "cr_get$round" "$cr" "$N" get
	measure "cm_list$round" "$cm" "$NL" list
	measure "cr_list$round" "$cr" "$NL" list
done
kill "$vp"
wait "$vp" || true
vp=

# 3. the figures
declare -A tot nomem
for f in "$work"/cg.*.*; do
	label=$(sed -n 's/^desc: Trigger: dump //p' "$f")
	t=$(sed -n 's/^summary: //p' "$f")
	m=$(callgrind_annotate --threshold=100 "$f" 2>/dev/null |
		awk '/__memset_avx2_unaligned_erms|__memset_.*erms/ && !/=>/ {gsub(",","",$1); s+=$1} END {print s+0}')
	tot[$label]=$t
	nomem[$label]=$((t - m))
done
echo "callgrind, instructions per request (all of lapis's threads; $N GETs, $NL LIST pages per round):"
echo "idle server over 3 s: ${tot[idle]} instructions"
printf '%-22s %12s %12s %8s   %12s %12s %8s\n' "" "ConfigMap" "CR" "CM/CR" "CM w/o memset" "CR w/o memset" "CM/CR"
for kind in get list; do
	n=$N
	[ $kind = list ] && n=$NL
	for round in 1 2; do
		a=$((tot[cm_$kind$round] / n)) b=$((tot[cr_$kind$round] / n))
		c=$((nomem[cm_$kind$round] / n)) d=$((nomem[cr_$kind$round] / n))
		printf '%-22s %12d %12d %8s   %12d %12d %8s\n' \
			"$([ $kind = get ] && echo "GET one object" || echo "LIST limit=500 page") r$round" \
			$a $b "$(awk -v x=$a -v y=$b 'BEGIN{printf "%.3f", x/y}')" \
			$c $d "$(awk -v x=$c -v y=$d 'BEGIN{printf "%.3f", x/y}')"
	done
done
$keep && echo "kept $work (callgrind dumps cg.PID.N; e.g. callgrind_annotate --inclusive=yes $work/cg.*.3)"
exit 0
