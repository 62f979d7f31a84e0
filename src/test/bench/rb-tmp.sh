#!/usr/bin/env bash
# Replication benchmark (issue 22, item 6). Two Weir data nodes on this machine: A serves two
# volumes, "plain" (one copy) and "repl" (two copies: A the primary, B the copy, over the
# node-to-node channel in clear: config files bring no PKI). Each round, alternating which goes
# first, fio 4 KiB QD32 on each volume through A, each run after a sync:
#   randwrite: replicated vs unreplicated IOPS (goal: at least 0.6)
#   randread:  replicated vs unreplicated IOPS (goal: at least 0.95; reads are served by the primary)
# Then a resync: a third volume "big" (1 GiB of random data on A) is added with B's copy out of
# sync, so A copies it whole under the replication task, while one fio randread QD32 per volume
# runs on plain (weight 300) and repl (weight 100). Printed: the resync rate (bytes and time from
# A's log), and the foreground's weight ratio during it.
#
#   mvn -o -q package -DskipTests && bash src/test/bench/replication-bench.sh [rounds] [seconds] [workers]
#
# JAVA_OPTS adds JVM options to both nodes (a JFR recording, say).
set -euo pipefail
# wait_log: the first capture of a pattern in a node's log, once it is there
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../../.."
ROUNDS=${1:-3}
SECS=${2:-8}
WORKERS=${3:-2}
JAR=$(ls target/weir-*.jar | grep -v -- -agent | head -1)
WORK=$(mktemp -d /tmp/weir-replication.XXXXXX)
SIZE=$((256 * 1024 * 1024))
BIG=$((1024 * 1024 * 1024))
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
A=00000000-0000-0000-0000-0000000000a1
B=00000000-0000-0000-0000-0000000000b1
PLAIN=00000000-0000-0000-0000-00000000d001
REPL=00000000-0000-0000-0000-00000000d002
BIGV=00000000-0000-0000-0000-00000000d003

# config NODE REVISION B_ADDRESS WITH_BIG: the DesiredConfig node NODE applies (A: all volumes; B: the copies)
config() {
  python3 - "$@" "$PLAIN" "$REPL" "$BIGV" "$SIZE" "$BIG" "$A" "$B" <<'PY'
import json, sys
node, rev, b_addr, with_big, plain, repl, big, size, bigsize, a, b = sys.argv[1:]
tenant = "00000000-0000-0000-0000-00000000a001"
def pol(w):
    return {"weight": w, "minIops": None, "maxIops": None, "burstIops": None, "maxBytesPerSec": None,
            "burstBytesPerSec": None, "costModel": {"minChargeBytes": 4096}}
def replicated(b_in_sync):
    return {"epoch": 1, "primaryNodeId": a, "syncSequence": 0,
            "copies": [{"nodeId": a, "address": None, "inSync": True}, {"nodeId": b, "address": b_addr, "inSync": b_in_sync}]}
vols = [{"id": repl, "tenantId": tenant, "name": "repl", "sizeBytes": int(size), "effectivePolicy": pol(100),
         "replication": replicated(True)}]
if with_big == "yes":
    vols.append({"id": big, "tenantId": tenant, "name": "big", "sizeBytes": int(bigsize), "effectivePolicy": pol(100),
                 "replication": replicated(False)})
if node == a:
    vols.insert(0, {"id": plain, "tenantId": tenant, "name": "plain", "sizeBytes": int(size), "effectivePolicy": pol(300)})
print(json.dumps({"nodeId": node, "revision": int(rev), "tasks": [],
    "tenants": [{"id": tenant, "name": "bench", "weight": 100, "maxIops": None, "maxBytesPerSec": None}],
    "volumes": vols, "usageReportIntervalSeconds": 10}))
PY
}
mkdir -p "$WORK/a" "$WORK/b"
for v in $PLAIN $REPL; do dd if=/dev/urandom of="$WORK/a/$v.img" bs=1M count=$((SIZE >> 20)) status=none; done
cp "$WORK/a/$REPL.img" "$WORK/b/$REPL.img"    # the copy starts equal to the primary
dd if=/dev/urandom of="$WORK/a/$BIGV.img" bs=1M count=$((BIG >> 20)) status=none

start() {  # start NAME
  eval "opts=\${JAVA_OPTS_$1:-}"; java -Xms512m -Xmx512m $opts -jar "$JAR" datanode --config-file "$WORK/$1.json" --data-dir "$WORK/$1" \
    --listen 127.0.0.1:0 --replication-listen 127.0.0.1:0 --workers "$WORKERS" > "$WORK/$1.log" 2>&1 & pids+=($!)
}
config $B 1 none no > "$WORK/b.json"
start b; PID_b=$!
B_ADDR=$(wait_log $PID_b "$WORK/b.log" 's/.*reachable on \([0-9.:]*\).*/\1/p' node-b)
config $A 1 "$B_ADDR" no > "$WORK/a.json"
start a; PID_a=$!
PORT=$(weir_port $PID_a "$WORK/a.log" node-a)
uri() { echo "nbd://127.0.0.1:$PORT/bench/$1"; }
fio1() { fio --name=b --ioengine=nbd --uri="$1" --rw="$2" --bs=4k --iodepth=32 --size=256m \
           --runtime="$SECS" --time_based --output-format=json; }
iops() { python3 -c 'import json,sys; d=sys.stdin.read(); j=json.loads(d[d.index("{"):])["jobs"][0]; print(j[sys.argv[1]]["iops"])' "$1"; }
for v in plain repl; do fio1 "$(uri $v)" randwrite >/dev/null; done   # warm-up: JIT, links, page cache

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # the process's CPU time, in clock ticks
TICK=$(getconf CLK_TCK)
RES=$WORK/results.tsv
for r in $(seq "$ROUNDS"); do
  order=(plain repl); [ $((r % 2)) = 0 ] && order=(repl plain)
  for v in "${order[@]}"; do
    # each run starts with nothing dirty: the write-back of the run before (on both nodes after
    # a replicated one) would otherwise take the cores from it
    sync
    a0=$(cpu $PID_a); b0=$(cpu $PID_b)
    w=$(fio1 "$(uri $v)" randwrite | iops write)
    a1=$(cpu $PID_a); b1=$(cpu $PID_b)
    sync
    rd=$(fio1 "$(uri $v)" randread | iops read)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "$w" "$rd" "$((a1 - a0))" "$((b1 - b0))" >> "$RES"
  done
done

# the resync: add "big" with B's copy out of sync (B first, so that its copy exists when A starts)
config $B 2 none yes > "$WORK/b.json.new" && mv "$WORK/b.json.new" "$WORK/b.json"
for _ in $(seq 100); do [ -f "$WORK/b/$BIGV.img" ] && break; sleep 0.1; done
config $A 2 "$B_ADDR" yes > "$WORK/a.json.new" && mv "$WORK/a.json.new" "$WORK/a.json"
fio --name=b --ioengine=nbd --uri="$(uri plain)" --rw=randread --bs=4k --iodepth=32 --size=256m --runtime="$SECS" \
    --time_based --output-format=json > "$WORK/h.json" & f1=$!
fio --name=b --ioengine=nbd --uri="$(uri repl)" --rw=randread --bs=4k --iodepth=32 --size=256m --runtime="$SECS" \
    --time_based --output-format=json > "$WORK/l.json" & f2=$!
wait $f1 $f2
IN_SYNC=$(wait_log $PID_a "$WORK/a.log" "s/.*volume $BIGV: the copy on node .* is in sync: resync copied \([0-9]*\) bytes in \([0-9]*\) ms.*/\1 \2/p" node-a)
cmp -s "$WORK/a/$BIGV.img" "$WORK/b/$BIGV.img" && SAME=yes || SAME=no

python3 - "$RES" "$ROUNDS" "$SECS" "$WORKERS" "$WORK/h.json" "$WORK/l.json" "$IN_SYNC" "$SAME" "$TICK" <<'PY'
import json, statistics as st, sys
res, rounds, secs, workers, hj, lj, insync, same, tick = sys.argv[1:]
by = {}
for line in open(res).read().split("\n"):
    if line:
        v, r, w, rd, ca, cb = line.split("\t")
        ios = float(w) * float(secs)
        by.setdefault(v, {})[int(r)] = dict(write=float(w), read=float(rd), cpu_a=int(ca) / int(tick) * 1e6 / ios,
                                            cpu_b=int(cb) / int(tick) * 1e6 / ios)
rs = sorted(by["plain"])
print(f"rounds {rounds} x {secs} s, 4 KiB QD32 through node A, workers {workers}; the copy on node B (same machine)")
print(f"{'':8} {'randwrite IOPS':>15} {'randread IOPS':>14} {'write CPU us/IO, node A':>24} {'node B':>7}")
for v in ("plain", "repl"):
    m = {k: st.median(by[v][r][k] for r in rs) for k in ("write", "read", "cpu_a", "cpu_b")}
    print(f"{v:8} {m['write']:15.0f} {m['read']:14.0f} {m['cpu_a']:24.1f} {m['cpu_b']:7.1f}")
for k, goal in (("write", ">= 0.6"), ("read", ">= 0.95")):
    x = sorted(by["repl"][r][k] / by["plain"][r][k] for r in rs)
    print(f"  replicated/unreplicated {k:5} same-round median {st.median(x):.3f} (rounds {x[0]:.3f}-{x[-1]:.3f}; goal {goal})")
def iops(f):
    d = open(f).read(); return json.loads(d[d.index("{"):])["jobs"][0]["read"]["iops"]
h, l = iops(hj), iops(lj)
b, ms = map(int, insync.split())
print(f"resync of 1 GiB (a new copy, copied whole): {b} bytes in {ms} ms = {b / ms / 1000:.1f} MB/s, copies equal: {same}")
print(f"  foreground during the first {secs} s of it: plain (300) {h:.0f} IOPS, repl (100) {l:.0f} IOPS, ratio {h / l:.2f} (weights 3.0)")
PY
