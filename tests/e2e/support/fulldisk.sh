#!/usr/bin/env bash
# fulldisk.sh LAPIS MNT OUT -- run by cli.sh as `unshare -rm bash
# fulldisk.sh ...`: in a mount namespace of its own, puts a 24 MiB tmpfs on
# MNT, serves a data directory on it (synced, so with the write-ahead log),
# creates 700 KB ConfigMaps until a create fails, and writes to OUT:
#   fail CODE MESSAGE   the first failed create's status code and message
#   created N           how many were created before it
#   get CODE            a GET of the first one after the failure
#   rc RC               the server's exit status at SIGTERM
set -u
lapis=$1 mnt=$2 out=$3
mount -t tmpfs -o size=24m none "$mnt" || exit 3
"$lapis" serve --data-dir "$mnt/d" --listen 127.0.0.1:0 --insecure-http >"$mnt/../fulldisk.log" 2>&1 &
pid=$!
url=
for _ in $(seq 100); do
	url=$(grep -o 'http://127[0-9.:]*' "$mnt/../fulldisk.log" | head -n 1)
	[[ -n $url ]] && break
	sleep 0.1
done
python3 - "$url" "$out" <<'PY'
import json, sys, urllib.request, urllib.error
url, out = sys.argv[1], sys.argv[2]
cms = url + "/api/v1/namespaces/default/configmaps"
big = "x" * 700000
lines = []
n = 0
for i in range(100):
    body = json.dumps({"metadata": {"name": "big%d" % i}, "data": {"k": big}}).encode()
    try:
        urllib.request.urlopen(urllib.request.Request(cms, data=body,
            headers={"Content-Type": "application/json"}), timeout=30)
        n += 1
    except urllib.error.HTTPError as e:
        st = json.loads(e.read())
        lines.append("fail %d %s" % (e.code, st.get("message")))
        break
lines.append("created %d" % n)
try:
    code = urllib.request.urlopen(cms + "/big0", timeout=30).status
except urllib.error.HTTPError as e:
    code = e.code
lines.append("get %d" % code)
open(out, "w").write("\n".join(lines) + "\n")
PY
kill -TERM "$pid"
wait "$pid"
echo "rc $?" >>"$out"
