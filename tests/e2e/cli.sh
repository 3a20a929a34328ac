#!/usr/bin/env bash
# cli.sh -- end-to-end tests of the lapis command line, with the real binary
# ($LAPIS_BIN) on real data directories:
#   - help and usage errors and their exit codes (0 / 2), duration parsing;
#   - serve: prints its data directory, stops with exit 0 on SIGTERM and
#     SIGINT, refuses a second server (and debug-load) on the same directory;
#   - with a server running: backup from a second process, inspect of the
#     backup and of the data directory (same keys and hash), --json;
#   - restore: bumps the revision, compacted == revision, keys and hash kept,
#     refuses a non-empty directory, the result can be served.
# Data goes in with the test-only `lapis debug-load` until the API exists.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/e2e/lib.bash
source "$here/lib.bash"
e2e_init cli

# ---------------------------------------------------------------- help, usage

expect_rc 0 "--help exits 0" "$LAPIS" --help
check "--help prints the usage on stdout" out_has '^usage: lapis COMMAND'
check "--help prints nothing on stderr" err_empty
check "--help lists serve, backup, restore, inspect, version" \
	bash -c "for c in serve backup restore inspect version; do grep -q \"^  \$c \" '$WORK/out' || exit 1; done"
check "--help does not list the test-only debug-load" \
	bash -c "! grep -q debug-load '$WORK/out'"
expect_rc 0 "help exits 0" "$LAPIS" help
expect_rc 2 "no command exits 2" "$LAPIS"
check "no command prints the usage on stderr" err_has '^usage: lapis'
expect_rc 2 "an unknown command exits 2" "$LAPIS" frobnicate
check "an unknown command is named" err_has "unknown command 'frobnicate'"
expect_rc 2 "an unknown top-level flag exits 2" "$LAPIS" --frobnicate

for cmd in serve backup restore inspect version debug-load; do
	expect_rc 0 "$cmd --help exits 0" "$LAPIS" "$cmd" --help
	check "$cmd --help prints its usage on stdout" out_has "^usage: lapis $cmd"
	check "$cmd --help prints nothing on stderr" err_empty
	expect_rc 0 "help $cmd exits 0" "$LAPIS" help "$cmd"
	expect_rc 2 "$cmd with an unknown flag exits 2" "$LAPIS" "$cmd" --no-such-flag
	check "$cmd usage error prints the usage on stderr" err_has "^usage: lapis $cmd"
done
check "debug-load --help says it is test-only" \
	bash -c "'$LAPIS' debug-load --help | grep -q 'TEST ONLY'"

expect_rc 0 "version exits 0" "$LAPIS" version
check "version prints 'lapis X.Y.Z'" out_has '^lapis [0-9]+\.[0-9]+\.[0-9]+'
if [[ -z ${LAPIS_SANITIZE:-} && ${LAPIS_MALLOC:-mimalloc} == mimalloc ]]; then
	check "version: malloc is mimalloc's (linked before libc)" \
		out_has '^allocator: mimalloc [0-9]+\.[0-9]+\.[0-9]+$'
else
	check "version: a sanitizer or LAPIS_MALLOC=libc build runs on libc's malloc" \
		out_has '^allocator: libc$'
fi
expect_rc 2 "version with an argument exits 2" "$LAPIS" version extra

expect_rc 2 "serve --data-dir without its argument exits 2" "$LAPIS" serve --data-dir
expect_rc 2 "serve with a stray argument exits 2" "$LAPIS" serve stray
for bad in garbage 5 5x 1.5 -1s 1h-5m "" 1ns 999us 99999999999999999999h s .s; do
	expect_rc 2 "serve --compaction-interval '$bad' exits 2" \
		"$LAPIS" serve --data-dir "$WORK/never" --compaction-interval "$bad"
done
check "a refused interval creates no data directory" test ! -e "$WORK/never"
for bad in bad 127.0.0.1 127.0.0.1:99999 nohost.example:80 :80; do
	expect_rc 2 "serve --listen '$bad' exits 2" \
		"$LAPIS" serve --data-dir "$WORK/never" --listen "$bad"
done
check "... before it makes a data directory (found by an audit)" test ! -e "$WORK/never"
expect_rc 2 "backup without --out exits 2" "$LAPIS" backup --data-dir "$WORK/x"
expect_rc 2 "inspect without a path exits 2" "$LAPIS" inspect
expect_rc 2 "inspect with two paths exits 2" "$LAPIS" inspect a b
expect_rc 2 "restore without --data-dir exits 2" "$LAPIS" restore --from x
expect_rc 2 "restore --bump-revision 0 exits 2" \
	"$LAPIS" restore --from x --data-dir y --bump-revision 0
expect_rc 2 "restore --bump-revision abc exits 2" \
	"$LAPIS" restore --from x --data-dir y --bump-revision abc
expect_rc 2 "debug-load without --keys exits 2" "$LAPIS" debug-load --data-dir "$WORK/x"

# ---------------------------------------------------------------- serve

# start_server DIR [ARGS]: starts serve (plain HTTP on a free loopback
# port, so tests running side by side never share a port) and reads its
# first line into LINE, which looks like
#   lapis: serving URL (data directory DIR, revision N)
# SERVED_DIR and SERVED_REV are taken from it (empty if it did not come).
start_server() {
	local dir=$1
	shift
	spawn serve "$LAPIS" serve --data-dir "$dir" --listen 127.0.0.1:0 \
		--insecure-http --nosync "$@"
	SERVER_PID=$SPAWN_PID
	SERVER_FD=$SPAWN_FD
	LINE=
	SERVED_DIR=
	SERVED_REV=
	read -r -t "$TIMEOUT" -u "$SERVER_FD" LINE || true
	local re='^lapis: serving [^ ]+ \(data directory (.*), revision ([0-9]+)\)$'
	if [[ $LINE =~ $re ]]; then
		SERVED_DIR=${BASH_REMATCH[1]}
		SERVED_REV=${BASH_REMATCH[2]}
	fi
}

# stop_server SIGNAL: sends the signal and sets RC to the exit status.
# A server that already died is reaped all the same, and its log shown.
stop_server() {
	kill "-$1" "$SERVER_PID" 2>/dev/null || echo "# serve $SERVER_PID was already gone"
	reap "$SERVER_PID"
	exec {SERVER_FD}<&-
	if [[ $RC != 0 ]]; then
		sed 's/^/#   serve: /' "$WORK/serve.log" | tail -n 20
	fi
}

data=$WORK/data
start_server "$data"
abs=$(cd "$data" 2>/dev/null && pwd -P || echo "$data")
check "serve prints its URL, data directory and revision" \
	test -n "$SERVED_REV" -a "$SERVED_DIR" = "$abs"
# A new store holds what serve creates on first start (the built-in
# namespaces, kube-apiserver's own Service and Endpoints default/kubernetes
# and the Service's cluster IP): the baseline for every count below. Each
# later start on another port moves the Service's targetPort and the
# Endpoints to it (two revisions).
rev0=${SERVED_REV:-1}
check "serve creates store/ and lapis.lock" test -d "$data/store" -a -f "$data/lapis.lock"
check "serve logs the default compaction interval" \
	grep -q 'compaction every 5m0s' "$WORK/serve.log"

expect_rc 1 "a second serve on the same directory exits 1" "$LAPIS" serve --data-dir "$data"
check "a second serve says the directory is in use" err_has 'in use by another process'
check "a second serve names the pid holding the lock" err_has "pid $SERVER_PID"
expect_rc 1 "debug-load on a served directory exits 1" \
	"$LAPIS" debug-load --data-dir "$data" --keys 1
stop_server TERM
check "serve exits 0 on SIGTERM" test "$RC" = 0

start_server "$data" --compaction-interval 1h30m
check "serve restarts on the same directory" test -n "$LINE"
stop_server INT
check "serve exits 0 on SIGINT" test "$RC" = 0
check "serve logs a Go-style interval" grep -q 'compaction every 1h30m0s' "$WORK/serve.log"
start_server "$data" --compaction-interval 0
stop_server TERM
check "--compaction-interval 0 turns compaction off" grep -q 'compaction off' "$WORK/serve.log"
start_server "$data" --compaction-interval 250ms
data_rev=$SERVED_REV
stop_server TERM
check "--compaction-interval 250ms is accepted" grep -q 'compaction every 250ms' "$WORK/serve.log"
# A compaction that had work logs its revision and how long it took (one
# line each; bench-http's S5 reads them). A new store has revisions to
# compact (its namespaces), so the first tick compacts; serve.log is
# appended to, so count the lines before.
n_cmp0=$(grep -c 'compacted to revision' "$WORK/serve.log" || true)
start_server "$WORK/compact-data" --compaction-interval 250ms
for _ in $(seq 300); do
	[[ $(grep -c 'compacted to revision' "$WORK/serve.log" || true) -gt $n_cmp0 ]] && break
	sleep 0.1
done
stop_server TERM
n_cmp1=$(grep -c 'compacted to revision' "$WORK/serve.log" || true)
check "a compaction of a new store is logged" test "$n_cmp1" -gt "$n_cmp0"
check "the compaction line has the revision, the duration and the slices, at info" \
	bash -c "grep 'compacted to revision' '$WORK/serve.log' | tail -n 1 |
		grep -Eq ' info compacted to revision [0-9]+ in [0-9]+ ms \([0-9]+ slices, [0-9]+ in write groups\)\$'"

# ---------------------------------------------------------------- data

expect_rc 0 "inspect of a stopped server's directory" "$LAPIS" inspect "$data"
keys0=$(field "$WORK/out" keys)
check "a stop writes nothing: inspect shows the revision the last start printed" \
	test "$(field "$WORK/out" revision)" = "$data_rev"
check "restarts wrote at most the new port: two revisions each" \
	test "$(field "$WORK/out" revision)" -le "$((rev0 + 6))"
rev0=$(field "$WORK/out" revision)
expect_rc 0 "debug-load writes keys into a stopped server's directory" \
	"$LAPIS" debug-load --data-dir "$data" --keys 500 --value-size 64 --batch 100 --nosync
rev1=$((rev0 + 5))
keys1=$((${keys0:-0} + 500))
check "debug-load reports the revision after 5 commits" out_has "wrote 500 keys, revision $rev1\$"
check "debug-load prints its seed" err_has 'seed [0-9]+'

start_server "$data"
check "serve sees the loaded revision (and moves the kubernetes Service to its port)" \
	test "$SERVED_REV" -ge "$rev1" -a "$SERVED_REV" -le "$((rev1 + 2))"
rev1=$SERVED_REV

# ---------------------------------------------------------------- backup

backup=$WORK/backup.db
expect_rc 0 "backup of a running server from a second process" \
	"$LAPIS" backup --data-dir "$data" --out "$backup"
check "the backup file exists" test -s "$backup"
check "backup prints the revision" test "$(field "$WORK/out" revision)" = "$rev1"
bhash=$(field "$WORK/out" hash)
check "backup prints a hash" test -n "$bhash"
check "backup leaves no temporary file" bash -c "! compgen -G '$backup.tmp*' >/dev/null"
# two backups to one file at once each write a temporary file of their own:
# both succeed and leave a whole backup (found by an audit: they shared
# FILE.tmp, and one could report success for a corrupt file)
"$LAPIS" backup --data-dir "$data" --out "$WORK/twice.db" --force >"$WORK/tw1" 2>&1 &
twpid=$!
"$LAPIS" backup --data-dir "$data" --out "$WORK/twice.db" --force >"$WORK/tw2" 2>&1
tw2=$?
wait "$twpid"
tw1=$?
check "two backups to one file at once both succeed" test "$tw1/$tw2" = 0/0
expect_rc 0 "... and leave a whole one" "$LAPIS" inspect "$WORK/twice.db"
# a backup into the store directory it copies would replace data.mdb
# under the running server (found by an audit)
expect_rc 1 "backup --force onto the live store's data.mdb exits 1" \
	"$LAPIS" backup --data-dir "$data" --out "$data/store/data.mdb" --force
check "... saying why" err_has 'is in the store directory of'
expect_rc 1 "... or into its store directory" \
	"$LAPIS" backup --data-dir "$data" --out "$data/store/b.mdb"
expect_rc 1 "serve on a store directory (holding data.mdb) exits 1" \
	"$LAPIS" serve --data-dir "$data/store" --insecure-http --listen 127.0.0.1:0
check "... saying it is no data directory, and makes nothing in it" bash -c "grep -q 'it is a store directory' '$WORK/err' && [[ ! -e '$data/store/store' && ! -e '$data/store/pki' ]]"
expect_rc 1 "backup refuses to overwrite a file" \
	"$LAPIS" backup --data-dir "$data" --out "$backup"
expect_rc 0 "backup --force overwrites" \
	"$LAPIS" backup --data-dir "$data" --out "$backup" --force
expect_rc 1 "backup of a missing directory exits 1" \
	"$LAPIS" backup --data-dir "$WORK/missing" --out "$WORK/b2"

# ---------------------------------------------------------------- inspect

expect_rc 0 "inspect of the backup passes its check" "$LAPIS" inspect "$backup"
cp "$WORK/out" "$WORK/inspect-backup"
check "inspect of the backup says check: ok" test "$(field "$WORK/inspect-backup" check)" = ok
check "inspect of the backup shows 500 more keys" \
	test "$(field "$WORK/inspect-backup" keys)" = "$keys1"
check "inspect of the backup shows the backup's hash" \
	test "$(field "$WORK/inspect-backup" hash)" = "$bhash"
check "inspect leaves no temporary directory beside the backup" \
	bash -c "! ls -A '$WORK' | grep -q '^.lapis-open'"

expect_rc 0 "inspect of the served data directory passes its check" "$LAPIS" inspect "$data"
cp "$WORK/out" "$WORK/inspect-data"
for f in revision keys hash "data bytes"; do
	check "inspect: $f equal in data directory and backup" \
		test "$(field "$WORK/inspect-data" "$f")" = "$(field "$WORK/inspect-backup" "$f")"
done
expect_rc 0 "inspect of the store directory" "$LAPIS" inspect "$data/store"
check "inspect of the store directory shows the same hash" \
	test "$(field "$WORK/out" hash)" = "$bhash"

expect_rc 0 "inspect --json" "$LAPIS" inspect --json "$backup"
check "inspect --json prints one JSON object with every key" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
want = {"revision", "compactedRevision", "keys", "dataBytes", "fileBytes",
        "historyEntries", "logEntries", "format", "clusterID", "hash", "check"}
assert set(o) == want, sorted(set(o) ^ want)
assert o["keys"] == int(sys.argv[3]) and o["revision"] == int(sys.argv[4]), o
assert o["check"] == "ok" and o["hash"] == sys.argv[2], o
' "$WORK/out" "$bhash" "$keys1" "$rev1"
expect_rc 0 "inspect accepts --json after the path" "$LAPIS" inspect "$backup" --json
check "inspect --json after the path prints JSON" out_has "^\\{\"revision\":$rev1,"

printf 'this is not a store\n' >"$WORK/garbage.db"
expect_rc 1 "inspect of a file that is not a store exits 1" "$LAPIS" inspect "$WORK/garbage.db"
expect_rc 1 "inspect of a missing path exits 1" "$LAPIS" inspect "$WORK/missing"
mkdir "$WORK/emptydir"
expect_rc 1 "inspect of a directory without a store exits 1" "$LAPIS" inspect "$WORK/emptydir"

stop_server TERM
check "serve still exits 0 after backups and inspects beside it" test "$RC" = 0

# ---------------------------------------------------------------- restore

restored=$WORK/restored
expect_rc 0 "restore into a new directory" \
	"$LAPIS" restore --from "$backup" --data-dir "$restored"
rrev1=$((rev1 + 1000000))
check "restore prints the bumped revision" test "$(field "$WORK/out" revision)" = "$rrev1"
expect_rc 0 "inspect of the restored directory passes its check" "$LAPIS" inspect "$restored"
rrev=$(field "$WORK/out" revision)
check "restored revision is the backup's plus the default bump" test "$rrev" = "$rrev1"
check "restored compacted revision equals the revision" \
	test "$(field "$WORK/out" "compacted revision")" = "$rrev"
check "restored keys and hash are the backup's" \
	test "$(field "$WORK/out" keys)/$(field "$WORK/out" hash)" = "$keys1/$bhash"
check "restore leaves the backup file as it was" test -s "$backup"

expect_rc 0 "restore with --bump-revision 10" \
	"$LAPIS" restore --from "$backup" --data-dir "$WORK/restored10" --bump-revision 10
check "--bump-revision 10 adds 10" test "$(field "$WORK/out" revision)" = "$((rev1 + 10))"

ls -A "$restored" >"$WORK/before"
expect_rc 1 "restore into a non-empty directory exits 1" \
	"$LAPIS" restore --from "$backup" --data-dir "$restored"
check "restore into a non-empty directory says why" err_has 'not empty'
check "a refused restore leaves the directory as it was" \
	bash -c "ls -A '$restored' | cmp -s - '$WORK/before'"
expect_rc 1 "restore from a missing file exits 1" \
	"$LAPIS" restore --from "$WORK/missing" --data-dir "$WORK/r3"
check "a restore from a missing file creates nothing" test ! -e "$WORK/r3"
expect_rc 1 "restore from a file that is not a store exits 1" \
	"$LAPIS" restore --from "$WORK/garbage.db" --data-dir "$WORK/r4"
check "a failed restore removes what it created" test ! -e "$WORK/r4"
mkdir "$WORK/r5"
expect_rc 1 "restore from a bad file into an empty directory exits 1" \
	"$LAPIS" restore --from "$WORK/garbage.db" --data-dir "$WORK/r5"
check "a failed restore leaves the empty directory empty" \
	bash -c "[[ -d '$WORK/r5' && -z \$(ls -A '$WORK/r5') ]]"

# A backup cut short (a full disk, an interrupted copy) or empty is refused
# with why, by restore (creating nothing) and inspect, never mapped: LMDB
# died of SIGBUS reading past its end, and an empty file restored to an
# empty store (found by an audit).
head -c "$(($(stat -c %s "$backup") / 2))" "$backup" >"$WORK/cut.db"
: >"$WORK/empty.db"
for f in cut empty; do
	expect_rc 1 "restore from a $f backup exits 1" \
		"$LAPIS" restore --from "$WORK/$f.db" --data-dir "$WORK/r-$f"
	check "... saying why, and creates nothing" bash -c "grep -q 'not a whole backup: .* is $( [[ $f == cut ]] && echo truncated || echo empty)' '$WORK/err' && [[ ! -e '$WORK/r-$f' ]]"
	expect_rc 1 "inspect of a $f backup exits 1" "$LAPIS" inspect "$WORK/$f.db"
	check "... saying why" err_has "is $( [[ $f == cut ]] && echo truncated || echo empty)"
done

# A data directory served before whose data.mdb went empty or missing is
# refused: LMDB would make a new, empty store of it, and the cluster would
# come back empty with its revisions reused (found by an audit). serve
# tells it by the kubeconfig it made; the engine by the write-ahead log's
# checkpoint (a synced store), also without the kubeconfig
lost=$WORK/lost
start_server "$lost"
stop_server TERM
: >"$lost/store/data.mdb"
expect_rc 1 "serve refuses an empty data.mdb in a directory served before" \
	timeout 30 "$LAPIS" serve --data-dir "$lost" --listen 127.0.0.1:0 --insecure-http --nosync
check "... saying why" err_has "data.mdb is empty, but .* was served before"
rm -rf "$lost"
expect_rc 124 "a synced server runs (then stops at timeout's TERM)" \
	timeout -s TERM 2 "$LAPIS" serve --data-dir "$lost" --listen 127.0.0.1:0 --insecure-http
rm -f "$lost/kubeconfig"
for how in empty missing; do
	if [[ $how == empty ]]; then : >"$lost/store/data.mdb"; else rm -f "$lost/store/data.mdb"; fi
	expect_rc 1 "a synced store whose data.mdb is $how is refused, by its log" \
		timeout 30 "$LAPIS" serve --data-dir "$lost" --listen 127.0.0.1:0 --insecure-http
	check "... saying why" err_has "data.mdb is $how, but the write-ahead log shows the store at revision"
done

# A process that dies inside a read (a killed backup or inspect) leaves its
# LMDB reader slot, which pins its snapshot: no page freed after it was
# used again, and data.mdb grew with every write until a restart (found by
# an audit). The writer frees such slots (mdb_reader_check) at most every
# 5 s, before a commit
HOLD=${LAPIS_LMDB_HOLD:-$(dirname "$LAPIS")/tests/lmdb_hold}
start_server "$WORK/readers"
RURL=$(sed -n 's/^lapis: serving \(http:[^ ]*\) .*/\1/p' <<<"$LINE")
mkfifo "$WORK/hold.in"
exec {hold_in}<>"$WORK/hold.in" # kept open: it waits on stdin until killed
spawn hold bash -c 'exec "$0" -r "$1" <"$2"' "$HOLD" "$WORK/readers/store" "$WORK/hold.in"
hold_pid=$SPAWN_PID
hline=
read -r -t "$TIMEOUT" -u "$SPAWN_FD" hline || true
exec {SPAWN_FD}<&-
check "a second process reads the served store" test "$hline" = holding
kill -KILL "$hold_pid" 2>/dev/null || true
reap "$hold_pid"
exec {hold_in}>&-
rm -f "$WORK/hold.in"
check "its reader slot outlives it" bash -c "mdb_stat -r '$WORK/readers/store' | grep -qw '$hold_pid'"
for i in $(seq 40); do
	curl -sS -o /dev/null -XPOST "$RURL/api/v1/namespaces/default/configmaps" \
		-H 'Content-Type: application/json' -d "{\"metadata\":{\"name\":\"r$i\"}}"
	grep -q 'freed 1 reader slot' "$WORK/serve.log" && break
	sleep 0.5
done
check "the server frees a dead reader's slot within seconds of writes" \
	grep -q 'freed 1 reader slot of a process that died inside a read' "$WORK/serve.log"
check "... and the slot is gone" bash -c "! mdb_stat -r '$WORK/readers/store' | grep -qw '$hold_pid'"
stop_server TERM
check "the server exits 0" test "$RC" = 0

# A restart that would write the same kubeconfig (the same port) writes
# none: on a full disk serve could not, and did not start (found by an
# audit). The file's inode shows whether it was replaced
kcdir=$WORK/kc
start_server "$kcdir"
kport=$(sed -n 's/^lapis: serving http:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' <<<"$LINE")
stop_server TERM
ino1=$(stat -c %i "$kcdir/kubeconfig")
spawn serve "$LAPIS" serve --data-dir "$kcdir" --listen "127.0.0.1:$kport" --insecure-http --nosync
SERVER_PID=$SPAWN_PID
SERVER_FD=$SPAWN_FD
LINE=
read -r -t "$TIMEOUT" -u "$SERVER_FD" LINE || true
check "a restart on the same port serves" grep -q "^lapis: serving http://127.0.0.1:$kport " <<<"$LINE"
check "... and leaves the kubeconfig as it was" test "$(stat -c %i "$kcdir/kubeconfig")" = "$ino1"
stop_server TERM

# A full disk: LMDB reports the short write as EIO, which was answered
# "Internal error occurred: input/output error". The engine tells a full
# disk by the file system's free space: kube's 500 says "the store is
# full", reads go on (found by an audit). On a 24 MiB tmpfs in a mount
# namespace of the test's own (unshare -rm: no root needed)
mkdir -p "$WORK/fullmnt"
run unshare -rm bash "$here/support/fulldisk.sh" "$LAPIS" "$WORK/fullmnt" "$WORK/full.out"
check "the full-disk run ran (unshare -rm and a tmpfs mount)" test "$RC" = 0 -a -s "$WORK/full.out"
check "a create on a full disk is 500 'the store is full'" \
	grep -qx 'fail 500 Internal error occurred: the store is full' "$WORK/full.out"
check "... after some were created" grep -q '^created [1-9]' "$WORK/full.out"
check "... and reads go on" grep -qx 'get 200' "$WORK/full.out"
check "... and the server stops with exit 0" grep -qx 'rc 0' "$WORK/full.out"
[[ -s $WORK/full.out ]] || sed 's/^/#   /' "$WORK/fulldisk.log" "$WORK/err" | tail -n 20

# A damaged page: LMDB trusts its pages, and a zeroed one tripped its
# assertions (abort) in inspect's walk, which died with exit 134 instead of
# reporting (found by an audit). The walk runs in a child: a crash is a
# failed check, exit 1. Every 3rd page of a backup zeroed in turn
expect_rc 0 "a store to damage" "$LAPIS" debug-load --data-dir "$WORK/dmg" --keys 400 --value-size 300 --nosync
expect_rc 0 "... updated" "$LAPIS" debug-load --data-dir "$WORK/dmg" --keys 400 --value-size 300 --seed 2 --nosync
expect_rc 0 "... backed up" "$LAPIS" backup --data-dir "$WORK/dmg" --out "$WORK/dmg.mdb"
npages=$(($(stat -c %s "$WORK/dmg.mdb") / 4096))
crashed=0 caught=0 bad=
for ((pg = 2; pg < npages; pg += 3)); do
	cp "$WORK/dmg.mdb" "$WORK/dmgpg.mdb"
	dd if=/dev/zero of="$WORK/dmgpg.mdb" bs=4096 seek="$pg" count=1 conv=notrunc 2>/dev/null
	run "$LAPIS" inspect "$WORK/dmgpg.mdb"
	case $RC in
	0) ;;
	1) caught=$((caught + 1))
	   grep -q 'reading the store crashed' "$WORK/out" && crashed=$((crashed + 1)) ;;
	*) bad+=" page $pg: exit $RC" ;;
	esac
done
check "inspect of a store with a zeroed page exits 0 or 1, never dies${bad:+ (}${bad}${bad:+)}" test -z "$bad"
check "... reports the damage ($caught of $(((npages - 1) / 3)) pages)" test "$caught" -gt 0
check "... and an LMDB crash as a failed check ($crashed pages)" test "$crashed" -gt 0
check "... and leaves no store of its own beside the file (.lapis-open-*)" \
	bash -c "! ls -A '$WORK' | grep -q '^\.lapis-open-'"
# restore of such a backup aborted the same way, and left NEW half made
# (a second restore refused it as not empty; serve died on it). Every 3rd
# page again: each restore exits 0 or 1, and one that fails leaves nothing
rcrash=0 rbad=
for ((pg = 2; pg < npages; pg += 3)); do
	cp "$WORK/dmg.mdb" "$WORK/dmgpg.mdb"
	dd if=/dev/zero of="$WORK/dmgpg.mdb" bs=4096 seek="$pg" count=1 conv=notrunc 2>/dev/null
	rm -rf "$WORK/dmg-restored"
	run "$LAPIS" restore --from "$WORK/dmgpg.mdb" --data-dir "$WORK/dmg-restored"
	case $RC in
	0) ;;
	1) grep -q 'reading the backup crashed' "$WORK/err" && rcrash=$((rcrash + 1))
	   [[ -e $WORK/dmg-restored ]] && rbad+=" page $pg: left NEW" ;;
	*) rbad+=" page $pg: exit $RC" ;;
	esac
done
check "restore of a backup with a zeroed page exits 0 or 1 and leaves nothing when it fails${rbad:+ (}${rbad}${rbad:+)}" test -z "$rbad"
check "... and reports an LMDB crash ($rcrash pages)" test "$rcrash" -gt 0
# backup of a live store with a garbage page: LMDB's copy took an overflow
# page count from it and died of SIGBUS or SIGSEGV, leaving FILE.tmp.*
# (its stderr is not scanned: under ASan the dying copy reports the bad
# memcpy LMDB makes, which is the damage, not ours; abort_on_error makes
# that report a death by signal, as the crash it is without a sanitizer:
# ASan and TSan would exit 1 and 66)
expect_rc 0 "a store to damage live" "$LAPIS" debug-load --data-dir "$WORK/dmglive" --keys 5000 --value-size 300 --nosync
python3 -c "import random,sys; random.seed(300); f=open(sys.argv[1],'r+b'); f.seek(300*4096); f.write(bytes(random.randrange(256) for _ in range(4096)))" "$WORK/dmglive/store/data.mdb"
RC=0
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}abort_on_error=1 \
	TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}abort_on_error=1 \
	"$LAPIS" backup --data-dir "$WORK/dmglive" --out "$WORK/dmglive.bak" >"$WORK/bk.out" 2>"$WORK/bk.err" || RC=$?
check "backup of a store whose page crashes LMDB exits 1 (got $RC)" test "$RC" = 1
check "... leaving no file" bash -c "! ls '$WORK' | grep -q '^dmglive\.bak'"

# --quota-bytes, etcd's --quota-backend-bytes: past the quota a create
# fails with 500 "the store is full" while deletes go on; once deletes and
# compaction free the pages, creates come back. A full disk had no such
# room: deletes failed too (found by an audit)
expect_rc 2 "--quota-bytes takes a size" "$LAPIS" serve --data-dir "$WORK/q0" --quota-bytes 12x
check "... saying so" err_has "quota-bytes: want 0 or a size"
expect_rc 2 "--quota-bytes refuses under 1Mi" "$LAPIS" serve --data-dir "$WORK/q0" --quota-bytes 1000
# jcall.call(method, url, body=None): (status, the error's Status or None)
cat >"$WORK/jcall.py" <<'PY'
import json, urllib.request, urllib.error
def call(method, url, body=None):
    req = urllib.request.Request(url, data=body and json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(req, timeout=30).status, None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
PY
start_server "$WORK/quota" --quota-bytes 16Mi --compaction-interval 1s
QURL=$(sed -n 's/^lapis: serving \(http:[^ ]*\) .*/\1/p' <<<"$LINE")
check "past the quota creates fail, deletes go on, and creates come back" python3 - "$QURL" "$WORK" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[2])
from jcall import call
cms = sys.argv[1] + "/api/v1/namespaces/default/configmaps"
big = "x" * 700000
made = 0
for i in range(200):
    code, st = call("POST", cms, {"metadata": {"name": "q%d" % i}, "data": {"k": big}})
    if code != 201:
        assert code == 500 and st["message"] == "Internal error occurred: the store is full", (code, st)
        break
    made += 1
assert 10 < made < 200, made
for i in range(made):
    code, st = call("DELETE", cms + "/q%d" % i)
    assert code == 200, (i, code, st)
for _ in range(30):
    code, st = call("POST", cms, {"metadata": {"name": "again"}, "data": {"k": big}})
    if code == 201:
        break
    time.sleep(0.5)
assert code == 201, (code, st)
PY
check "the server logs the quota passed and the way back" \
	bash -c "grep -q 'over the quota of 16 MiB' '$WORK/serve.log' && grep -q 'back under the quota of 16 MiB' '$WORK/serve.log'"
# a system namespace deleted, then the store filled: the next start could
# not create the namespace and refused to serve, so nothing could be
# deleted to make room (found by an audit)
check "kube-node-lease deleted and the store filled past the quota" python3 - "$QURL" "$WORK" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[2])
from jcall import call
base = sys.argv[1]
code, st = call("DELETE", base + "/api/v1/namespaces/kube-node-lease")
assert code == 200, (code, st)
for _ in range(100):
    if call("GET", base + "/api/v1/namespaces/kube-node-lease")[0] == 404:
        break
    time.sleep(0.2)
assert call("GET", base + "/api/v1/namespaces/kube-node-lease")[0] == 404
for i in range(200):
    code, st = call("POST", base + "/api/v1/namespaces/default/configmaps",
                    {"metadata": {"name": "f%d" % i}, "data": {"k": "x" * 700000}})
    if code != 201:
        assert code == 500 and "the store is full" in st["message"], (code, st)
        break
assert code == 500
PY
stop_server TERM
check "the server exits 0" test "$RC" = 0
export LAPIS_BOOTSTRAP_INTERVAL_MS=200
start_server "$WORK/quota" --quota-bytes 16Mi --compaction-interval 1s
unset LAPIS_BOOTSTRAP_INTERVAL_MS
QURL=$(sed -n 's/^lapis: serving \(http:[^ ]*\) .*/\1/p' <<<"$LINE")
check "a full store missing a system namespace still serves" test -n "$QURL"
check "... saying why the namespace is missing" grep -q 'the system namespaces are not all there and the store is full' "$WORK/serve.log"
check "... and once objects are deleted the namespace comes back" python3 - "$QURL" "$WORK" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[2])
from jcall import call
base = sys.argv[1]
for i in range(200):
    if call("DELETE", base + "/api/v1/namespaces/default/configmaps/f%d" % i)[0] == 404:
        break
for _ in range(100):
    if call("GET", base + "/api/v1/namespaces/kube-node-lease")[0] == 200:
        break
    time.sleep(0.2)
assert call("GET", base + "/api/v1/namespaces/kube-node-lease")[0] == 200
PY
stop_server TERM
check "the server exits 0" test "$RC" = 0

start_server "$restored"
rabs=$(cd "$restored" 2>/dev/null && pwd -P || echo "$restored")
check "the restored directory can be served" \
	test "$SERVED_DIR" = "$rabs" -a "$SERVED_REV" -ge "$rrev1" -a "$SERVED_REV" -le "$((rrev1 + 2))"
rrev1=$SERVED_REV
stop_server TERM
check "the restored server exits 0" test "$RC" = 0
expect_rc 0 "writes continue after the bumped revision" \
	"$LAPIS" debug-load --data-dir "$restored" --keys 10 --nosync
check "the next write gets the bumped revision + 1" out_has "revision $((rrev1 + 1))\$"
expect_rc 0 "inspect after writes on a restored store passes" "$LAPIS" inspect "$restored"


# A continue token whose revision was compacted (reference §3.4): 410
# Expired with kube's message and a fresh token (rv -1, the same start key)
# in the Status's metadata.continue, which lists the rest at the latest
# revision
start_server "$WORK/expire" --compaction-interval 1s
EURL=$(sed -n 's/^lapis: serving \(http:[^ ]*\) .*/\1/p' <<<"$LINE")
CM=$EURL/api/v1/namespaces/default/configmaps
for i in 1 2 3 4 5; do
	curl -sS -o /dev/null -H 'Content-Type: application/json' \
		--data "{\"metadata\":{\"name\":\"cm$i\"}}" "$CM"
done
curl -sS "$CM?limit=2" >"$WORK/page1"
tok=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["continue"])' "$WORK/page1")
check "a first page of 2 has a continue token" test -n "$tok"
curl -sS -o /dev/null -H 'Content-Type: application/json' \
	--data '{"metadata":{"name":"cm6"}}' "$CM"
# the compactor compacts at the revision it saw one tick before
expired=
for i in $(seq 1 40); do
	sleep 0.25
	code=$(curl -sS -o "$WORK/page2" -w '%{http_code}' "$CM?limit=2&continue=$tok")
	[[ $code == 410 ]] && { expired=1; break; }
done
check "after compaction the old token is 410 Expired" test -n "$expired"
check "... with kube's message" grep -q 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results.' "$WORK/page2"
fresh=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"].get("continue",""))' "$WORK/page2" 2>/dev/null)
check "... and a fresh token in metadata.continue" test -n "$fresh"
check "... at revision -1 from the same key" python3 - "$fresh" "$tok" <<'PY'
import base64, json, sys
dec = lambda t: json.loads(base64.urlsafe_b64decode(t + "=" * (-len(t) % 4)))
new, old = dec(sys.argv[1]), dec(sys.argv[2])
assert new["rv"] == -1 and new["start"] == old["start"] and new["v"] == "meta.k8s.io/v1", (new, old)
PY
code=$(curl -sS -o "$WORK/page3" -w '%{http_code}' "$CM?limit=10&continue=$fresh")
check "the fresh token lists the rest at the latest revision, the new object too" \
	python3 - "$code" "$WORK/page3" <<'PY'
import json, sys
assert sys.argv[1] == "200", sys.argv[1]
d = json.load(open(sys.argv[2]))
names = [i["metadata"]["name"] for i in d["items"]]
assert names == ["cm3", "cm4", "cm5", "cm6"], names
PY
code=$(curl -sS -o "$WORK/page4" -w '%{http_code}' "$CM?limit=2&resourceVersion=2&resourceVersionMatch=Exact")
check "an Exact list at a compacted revision is 410 without a token" \
	bash -c "[[ $code == 410 ]] && grep -q 'The resourceVersion for the provided list is too old.' '$WORK/page4' && ! grep -q '\"continue\"' '$WORK/page4'"
# A watch from a compacted revision of a resource that has not changed
# since (kube's watch cache serves it: the Python client re-watches from
# its last event after a quiet half hour) starts from now and sees what
# comes next; a resource that changed after it is 410 in the stream.
LS=$EURL/apis/coordination.k8s.io/v1/namespaces/default/leases
curl -sS -o "$WORK/lease" -H 'Content-Type: application/json' --data '{"metadata":{"name":"quiet"}}' "$LS"
lrv=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["resourceVersion"])' "$WORK/lease")
curl -sS -o /dev/null -H 'Content-Type: application/json' --data '{"metadata":{"name":"cm7"}}' "$CM"
gone=
for i in $(seq 1 40); do
	sleep 0.25
	code=$(curl -sS -o /dev/null -w '%{http_code}' "$CM?resourceVersion=$lrv&resourceVersionMatch=Exact")
	[[ $code == 410 ]] && { gone=1; break; }
done
check "the lease's revision is compacted" test -n "$gone"
(sleep 1; curl -sS -o /dev/null -H 'Content-Type: application/json' --data '{"metadata":{"name":"loud"}}' "$LS") &
writer=$!
curl -sS -N -m 4 -o "$WORK/qwatch" "$LS?watch=1&resourceVersion=$lrv&timeoutSeconds=3"
wait "$writer"
check "a watch of the quiet leases from it is not expired and sees the next lease" python3 -c "
import json
ev = [json.loads(l) for l in open('$WORK/qwatch') if l.strip()]
assert [(e['type'], e['object']['metadata']['name']) for e in ev] == [('ADDED', 'loud')], ev"
curl -sS -N -m 4 -o "$WORK/lwatch" "$CM?watch=1&resourceVersion=$lrv&timeoutSeconds=2"
check "... one of the configmaps, which changed since, is 410 Expired" grep -q '"code":410' "$WORK/lwatch"
stop_server TERM
check "that server exits 0" test "$RC" = 0

# ---------------------------------------------------------------- accept
# At the open-file limit the accept thread (server/acceptor.c) leaves new
# connections waiting in the listener's backlog and takes them once
# descriptors are free again; the connections it holds keep being served.
start_server "$WORK/fdlimit"
FURL=$(sed -n 's/^lapis: serving \(http:[^ ]*\) .*/\1/p' <<<"$LINE")
check "the server's open-file limit lowered to 60" prlimit --pid "$SERVER_PID" --nofile=60:60
check "at the limit, connections wait and are served once descriptors free up" python3 - "${FURL#http://}" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
addr = (host, int(port))
def ready(s):
    s.settimeout(10)
    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
    got = s.recv(100)
    assert got.startswith(b"HTTP/1.1 200"), got
socks = [socket.create_connection(addr) for _ in range(80)]  # past the limit
ready(socks[0])
for s in socks:
    s.close()
s = socket.create_connection(addr)
ready(s)
s.close()
PY
stop_server TERM
check "that server exits 0" test "$RC" = 0

# ---------------------------------------------------------------- bootstrap
# kube-apiserver's bootstrap controllers while serving (every 10 s and every
# minute; shortened here): the kubernetes Service and its Endpoints are made
# again when deleted, the Service otherwise left as users made it; the
# system namespaces are made again (kube-node-lease: the others may not be
# deleted).
LAPIS_BOOTSTRAP_INTERVAL_MS=100 start_server "$WORK/boot"
BURL=$(sed -n 's/^lapis: serving \(http:[^ ]*\) .*/\1/p' <<<"$LINE")
SVC=$BURL/api/v1/namespaces/default/services/kubernetes
EPS=$BURL/api/v1/namespaces/default/endpoints/kubernetes
NSL=$BURL/api/v1/namespaces/kube-node-lease
jfield() { # URL EXPR: EXPR of the JSON object at URL (d), or "missing"
	curl -sS "$1" | python3 -c "import json,sys; d=json.load(sys.stdin)
print($2 if d.get('kind') != 'Status' else 'missing')"
}
# until_is URL EXPR VALUE: polls (20 a second, $TIMEOUT at most) until it is
until_is() {
	local i
	for ((i = 0; i < TIMEOUT * 20; i++)); do
		[[ $(jfield "$1" "$2") == "$3" ]] && return 0
		sleep 0.05
	done
	echo "#   $1: $2 is $(jfield "$1" "$2"), not $3"
	return 1
}
uid0=$(jfield "$SVC" "d['metadata']['uid']")
curl -sS -o /dev/null -X DELETE "$SVC"
curl -sS -o /dev/null -X DELETE "$EPS"
check "a deleted kubernetes Service is made again, at the first cluster IP" \
	until_is "$SVC" "d['spec']['clusterIP'] + (' new' if d['metadata']['uid'] != '$uid0' else ' old')" "10.96.0.1 new"
check "... with its Endpoints" until_is "$EPS" "d['subsets'][0]['ports'][0]['name']" https
curl -sS -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
	--data '{"metadata":{"labels":{"mine":"yes"}},"spec":{"ports":[{"name":"https","port":443,"targetPort":9999,"protocol":"TCP"}]}}' "$SVC"
# the Endpoints' next remake says a tick has passed since the patch
curl -sS -o /dev/null -X DELETE "$EPS"
check "... (the Endpoints again after a later delete)" until_is "$EPS" "d['kind']" Endpoints
check "... while the Service keeps the ports and labels a user gave it" \
	until_is "$SVC" "str(d['spec']['ports'][0]['targetPort']) + d['metadata']['labels'].get('mine', '')" 9999yes
nsuid0=$(jfield "$NSL" "d['metadata']['uid']")
curl -sS -o /dev/null -X DELETE "$NSL"
check "a deleted kube-node-lease is finalized by the namespace controller and made again" \
	until_is "$NSL" "d['status']['phase'] + (' new' if d['metadata']['uid'] != '$nsuid0' else ' old')" "Active new"
LTT=$BURL/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking
ltuid0=$(jfield "$LTT" "d['metadata']['uid']")
curl -sS -o /dev/null -X DELETE "$LTT"
check "a deleted legacy token tracking ConfigMap is made again (kube's controller)" \
	until_is "$LTT" "str(len(d['data']['since'])) + (' new' if d['metadata']['uid'] != '$ltuid0' else ' old')" "10 new"
curl -sS -o "$WORK/boot-del" -w '%{http_code}' -X DELETE "$BURL/api/v1/namespaces/kube-public" >"$WORK/boot-code"
check "kube-public may not be deleted (403)" grep -qx 403 "$WORK/boot-code"
stop_server TERM
check "that server exits 0" test "$RC" = 0
# Between its rounds the controller waits: with an hour between them, a
# deleted Service stays deleted (a controller that does not wait, as one
# whose condition variable's clock was not the deadline's, makes it again
# at once, and spins).
LAPIS_BOOTSTRAP_INTERVAL_MS=3600000 start_server "$WORK/boot-idle"
BURL=$(sed -n 's/^lapis: serving \(http:[^ ]*\) .*/\1/p' <<<"$LINE")
curl -sS -o /dev/null -X DELETE "$BURL/api/v1/namespaces/default/services/kubernetes"
for i in 1 2 3 4 5; do
	curl -sS -o /dev/null "$BURL/api/v1/namespaces/default/configmaps"
done
check "the controller waits its interval between rounds" \
	test "$(jfield "$BURL/api/v1/namespaces/default/services/kubernetes" "d['kind']")" = missing
stop_server TERM
check "that server exits 0" test "$RC" = 0

e2e_finish
