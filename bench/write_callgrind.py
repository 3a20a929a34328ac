#!/usr/bin/env python3
"""write_callgrind.py -- instructions per ConfigMap create, PUT update and GET.

Usage: bench/write_callgrind.py LAPIS_BINARY OUT_DIR [s4]

Serves `LAPIS serve --ephemeral --insecure-http` under
`valgrind --tool=callgrind` on a free loopback port, waits for readiness,
warms up with 300 creates over one keep-alive connection, then measures 200
creates (POST /api/v1/namespaces/default/configmaps, 20 data keys of 40
characters, about 1.1 KB; with `s4`, bench-http's S4 body instead: two
labels and four data values of 190 letters) and 200 PUTs of those objects with changed data,
and 200 GETs of them, each phase between `callgrind_control -z` and `-d`
(the GETs also without the JSON figures, which are 0 for a GET: stored
bytes are served as they are). Prints the instructions per
request (all threads) and the inclusive share of the JSON text<->tree steps
(json_loadb, json_dumps, reg_json_load, reg_json_dump and
reg_json_dump_ordered, the stored encoding's dump). Instruction counts
are deterministic enough to compare on a loaded machine.
"""
import glob
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time

N_WARM, N = 300, 200
JSON_FUNCS = ["reg_json_load", "reg_json_dump", "reg_json_dump_ordered",
              "json_loadb", "json_dumps"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


S4_BODY = len(sys.argv) > 3 and sys.argv[3] == "s4"


def body(name, gen, rv=None):
    if S4_BODY:
        data = {"key%d" % k: "".join(chr(97 + (gen * 7 + j * 3 + k) % 26)
                                     for j in range(190)) for k in range(4)}
        meta = {"name": name, "labels": {"app": "bench", "shard": "3"}}
    else:
        data = {"key%02d" % i: ("v%d-%d-" % (gen, i) * 10)[:40]
                for i in range(20)}
        meta = {"name": name, "namespace": "default",
                "labels": {"app": "bench"}}
    if rv:
        meta["resourceVersion"] = rv
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": meta, "data": data}).encode()


def request(conn, method, path, b):
    conn.request(method, path, body=b,
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    out = r.read()
    if r.status not in (200, 201):
        sys.exit("%s %s: %d %s" % (method, path, r.status, out[:300]))
    return json.loads(out)


def control(pid, *args):
    # Name our valgrind by pid: without one, callgrind_control acts on
    # every callgrind process of the user, other people's runs included.
    subprocess.run(["callgrind_control", *args, str(pid)], check=True,
                   stdout=subprocess.DEVNULL)


def dump(pid, out_dir, tag):
    control(pid, "-d", tag)
    time.sleep(2)
    files = sorted(glob.glob(os.path.join(out_dir, "cg.out.*")),
                   key=os.path.getmtime)
    return files[-1]


def totals(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes",
                          "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    total = None
    incl = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+).*PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+\S*:(\w+)\s", line + " ")
        if m and m.group(2) in JSON_FUNCS:
            incl[m.group(2)] = max(incl.get(m.group(2), 0),
                                   int(m.group(1).replace(",", "")))
    return total, incl


def report(label, path):
    total, incl = totals(path)
    # reg_json_* call jansson only when they give up: count the outermost.
    ours = (incl.get("reg_json_load", 0) + incl.get("reg_json_dump", 0) +
            incl.get("reg_json_dump_ordered", 0))
    jans = incl.get("json_loadb", 0) + incl.get("json_dumps", 0)
    js = ours if ours else jans
    print("%-7s %8.0f instructions per request; JSON text<->tree %6.0f "
          "(%4.1f%%) %s" % (label, total / N, js / N, 100.0 * js / total,
                            {k: round(v / N) for k, v in incl.items()}))


def main():
    lapis, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    for f in glob.glob(os.path.join(out_dir, "cg.out*")):
        os.unlink(f)
    port = free_port()
    srv = subprocess.Popen(
        ["valgrind", "--tool=callgrind",
         "--callgrind-out-file=" + os.path.join(out_dir, "cg.out"),
         lapis, "serve", "--ephemeral", "--insecure-http",
         "--listen", "127.0.0.1:%d" % port],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(out_dir, "log"), "w"))
    try:
        for _ in range(120):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            time.sleep(1)
        time.sleep(8)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        path = "/api/v1/namespaces/default/configmaps"
        for i in range(N_WARM):
            request(conn, "POST", path, body("warm-%d" % i, 0))
        control(srv.pid, "-z")
        rvs = []
        for i in range(N):
            o = request(conn, "POST", path, body("cm-%d" % i, 0))
            rvs.append(o["metadata"]["resourceVersion"])
        create = dump(srv.pid, out_dir, "create")
        control(srv.pid, "-z")
        for i in range(N):
            request(conn, "PUT", path + "/cm-%d" % i,
                    body("cm-%d" % i, 1, rvs[i]))
        put = dump(srv.pid, out_dir, "put")
        control(srv.pid, "-z")
        for i in range(N):
            conn.request("GET", path + "/cm-%d" % i)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                sys.exit("GET cm-%d: %d" % (i, r.status))
        get = dump(srv.pid, out_dir, "get")
        report("create", create)
        report("put", put)
        report("get", get)
    finally:
        srv.terminate()
        srv.wait()


main()
