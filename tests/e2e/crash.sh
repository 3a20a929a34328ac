#!/usr/bin/env bash
# crash.sh -- the command line's view of crash recovery: a writer
# (`lapis debug-load`, test only) is killed with SIGKILL in the middle of a
# long load; then `lapis inspect` must pass its check, must show every
# revision the writer had acknowledged, and a second writer must take the
# lock and go on at a higher revision. One more round stands for a system
# crash: the kill, then both of LMDB's meta pages zeroed, then a writer
# recovers the store from its write-ahead log.
#
# The kill point is chosen by what the writer printed (its N-th commit), not
# by time, so a run is repeatable; where exactly inside the next commit the
# kill lands is up to the scheduler, which is the point. The engine's own
# crash test checks acknowledged writes key by key; this one checks the CLI.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/e2e/lib.bash
source "$here/lib.bash"
e2e_init crash

data=$WORK/data
seed=${LAPIS_SEED:-7}
echo "# seed $seed (set LAPIS_SEED to override)"
# Far more keys than a round writes before its kill: the load never ends
# on its own.
big=100000000

# One round per kill point: "COMMITS SYNC-MODE KEYS-PER-COMMIT". Small
# nosync commits are fast, so the writer is further ahead of what this
# script has read when the kill lands: somewhere inside a later commit.
# load_and_kill COMMITS MODE BATCH SEED: a loader killed with SIGKILL after
# it printed COMMITS commits; sets ACKED (its last acknowledged revision),
# SEEN and RC.
load_and_kill() {
	local commits=$1 mode=$2 batch=$3 lseed=$4 line flags=()
	[[ $mode == nosync ]] && flags+=(--nosync)
	spawn load "$LAPIS" debug-load --data-dir "$data" --keys "$big" \
		--value-size 300 --batch "$batch" --seed "$lseed" --progress \
		"${flags[@]}"
	local pid=$SPAWN_PID
	ACKED=0
	SEEN=0
	while ((SEEN < commits)); do
		line=
		if ! read -r -t "$TIMEOUT" -u "$SPAWN_FD" line; then
			break
		fi
		SEEN=$((SEEN + 1))
		ACKED=${line##*revision }
	done
	kill -KILL "$pid" 2>/dev/null || echo "# loader $pid ended before the kill"
	reap "$pid"
	exec {SPAWN_FD}<&-
	if [[ $RC != 137 ]]; then
		sed 's/^/#   load: /' "$WORK/load.log" | tail -n 20
	fi
}

# One round per kill point: "COMMITS SYNC-MODE KEYS-PER-COMMIT". Small
# nosync commits are fast, so the writer is further ahead of what this
# script has read when the kill lands: somewhere inside a later commit.
rounds=("3 sync 50" "40 sync 50" "25 nosync 50" "1 sync 50" "200 nosync 1")
last_rev=1
round=0
for r in "${rounds[@]}"; do
	read -r commits mode batch <<<"$r"
	round=$((round + 1))
	load_and_kill "$commits" "$mode" "$batch" "$((seed + round))"
	check "round $round: the loader was killed by SIGKILL after $commits commits ($mode, batch $batch)" \
		test "$RC" = 137 -a "$SEEN" = "$commits"

	expect_rc 0 "round $round: inspect after the crash passes its check" \
		"$LAPIS" inspect "$data"
	rev=$(field "$WORK/out" revision)
	check "round $round: check: ok" test "$(field "$WORK/out" check)" = ok
	check "round $round: every acknowledged commit survived (rev $rev >= $ACKED)" \
		test "${rev:-0}" -ge "$ACKED"
	check "round $round: the revision went up ($rev > $last_rev)" \
		test "${rev:-0}" -gt "$last_rev"
	last_rev=${rev:-0}
done

# A system crash may lose what LMDB wrote after the write-ahead log's last
# checkpoint, its meta pages worst of all (a kill keeps the page cache, so
# the test destroys them): zero both. LMDB alone then refuses the file; the
# next writer writes the checkpoint's meta pages back and replays the log.
load_and_kill 30 sync 50 "$((seed + 99))"
check "system crash: the loader was killed after 30 synced commits" \
	test "$RC" = 137 -a "$SEEN" = 30
dd if=/dev/zero of="$data/store/data.mdb" bs="$(getconf PAGESIZE)" count=2 \
	conv=notrunc status=none
expect_rc 1 "system crash: with its meta pages gone, inspect cannot read the store" \
	"$LAPIS" inspect "$data"
check "... and says a writer recovers it from its write-ahead log" \
	err_has "has a write-ahead log: a writer \(lapis serve\) recovers"
expect_rc 0 "system crash: a writer recovers it from the write-ahead log" \
	"$LAPIS" debug-load --data-dir "$data" --keys 1 --batch 1 --seed "$seed"
expect_rc 0 "system crash: inspect after recovery passes its check" \
	"$LAPIS" inspect "$data"
rev=$(field "$WORK/out" revision)
check "system crash: every acknowledged commit survived (rev $rev > $ACKED)" \
	test "${rev:-0}" -gt "$ACKED"
last_rev=${rev:-0}

expect_rc 0 "a new writer takes the lock after the crashes and goes on" \
	"$LAPIS" debug-load --data-dir "$data" --keys 200 --batch 50 --seed "$seed"
after=$(sed -n 's/.*revision \([0-9]*\)$/\1/p' "$WORK/out")
check "its revision is higher than before ($after > $last_rev)" \
	test "${after:-0}" -gt "$last_rev"
expect_rc 0 "inspect after the new writes passes its check" "$LAPIS" inspect --json "$data"
check "inspect shows the new revision" out_has "\"revision\":$after,"

e2e_finish
