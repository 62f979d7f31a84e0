#!/usr/bin/env bash
# What a request costs the data node, by size: fio randread and randwrite at 4 KiB, 64 KiB and
# 1 MiB against one Weir data node (QoS on, one unlimited volume, config-file mode), with the
# node's CPU time (user+sys of its process) per IO for each. A least-squares line through the
# three sizes, CPU per IO = a + b x bytes, gives the node's fixed cost per request in bytes,
# a / b: the scheduler's linear cost model (scheduler.CostModel) charges a request that many bytes
# plus its own size. The script prints the per-size figures, the fit and the resulting
# readPerIoBytes / writePerIoBytes (the defaults of protocol.IoCost came from it).
#
#   mvn -o -q package -DskipTests && bash src/test/bench/cost-bench.sh [rounds] [seconds] [workers]
#
# Needs fio (nbd engine), python3.
set -euo pipefail
# weir_port: the port the node printed once it serves its config
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../../.."
ROUNDS=${1:-3}
SECS=${2:-5}
WORKERS=${3:-2}
JAR=$(ls target/weir-*.jar | grep -v -- -agent | head -1)
WORK=$(mktemp -d /tmp/weir-cost.XXXXXX)
DATA=$WORK/data
mkdir -p "$DATA"
VOL=00000000-0000-0000-0000-00000000b001
SIZE=$((1024 * 1024 * 1024))
HZ=$(getconf CLK_TCK)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

python3 - "$WORK" "$VOL" "$SIZE" <<'PY'
import json, sys
work, vol, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
tenant = "00000000-0000-0000-0000-00000000a001"
pol = {"weight": 100, "costModel": {"minChargeBytes": 4096}}
json.dump({"nodeId": "00000000-0000-0000-0000-000000000001", "revision": 1, "tasks": [],
           "tenants": [{"id": tenant, "name": "bench", "weight": 100}],
           "volumes": [{"id": vol, "tenantId": tenant, "name": "bench", "sizeBytes": size, "effectivePolicy": pol}],
           "usageReportIntervalSeconds": 10}, open(work + "/config.json", "w"))
PY
dd if=/dev/urandom of="$DATA/$VOL.img" bs=1M count=1024 status=none

java -Xms512m -Xmx512m -jar "$JAR" datanode --config-file "$WORK/config.json" --data-dir "$DATA" \
  --listen 127.0.0.1:0 --workers "$WORKERS" > "$WORK/node.log" 2>&1 & pid=$!
PORT=$(weir_port "$pid" "$WORK/node.log" "the data node")
URI="nbd://127.0.0.1:$PORT/bench/bench"
cpu() { awk '{print $14 + $15}' /proc/$pid/stat; }
fio --name=warm --ioengine=nbd --uri="$URI" --rw=randread --bs=4k --iodepth=32 --size=1g --runtime=3 --time_based >/dev/null

RESULTS=$WORK/results.tsv
for r in $(seq "$ROUNDS"); do
  for rw in randread randwrite; do
    for bs in 4096 65536 1048576; do
      sync "$DATA/$VOL.img"
      c0=$(cpu)
      out=$(fio --name=b --ioengine=nbd --uri="$URI" --rw=$rw --bs=$bs --iodepth=16 --size=1g \
              --runtime="$SECS" --time_based --output-format=json)
      sync "$DATA/$VOL.img"   # the write-back a write caused is its cost too (the node's flush task)
      c1=$(cpu)
      python3 - "$rw" "$bs" "$c0" "$c1" "$HZ" <<PY >> "$RESULTS"
import json, sys
rw, bs, c0, c1, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
j = json.loads('''$out'''['''$out'''.index('{'):])["jobs"][0]
side = j["read"] if rw == "randread" else j["write"]
print(f"{rw}\t{bs}\t{side['iops']:.1f}\t{(c1 - c0) / hz / max(side['total_ios'], 1) * 1e6:.2f}")
PY
    done
  done
done

python3 - "$RESULTS" "$ROUNDS" "$SECS" "$WORKERS" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
by = {}
for rw, bs, iops, cpu in rows:
    by.setdefault((rw, int(bs)), []).append((float(iops), float(cpu)))
print(f"rounds {sys.argv[2]} x {sys.argv[3]} s, fio iodepth 16, weir workers {sys.argv[4]}; medians")
print(f"{'rw':10} {'bs':>8} {'IOPS':>9} {'node CPU us/IO':>15}")
for rw in ("randread", "randwrite"):
    xs, ys = [], []
    for bs in (4096, 65536, 1048576):
        v = by[(rw, bs)]
        iops = statistics.median(i for i, _ in v)
        c = statistics.median(c for _, c in v)
        xs.append(bs); ys.append(c)
        print(f"{rw:10} {bs:8} {iops:9.0f} {c:15.2f}")
    # Weighted least squares with weights 1/y^2: it minimises the relative error, so the 1 MiB
    # point (tens of times the others' CPU) does not decide the fixed cost alone.
    w = [1 / y ** 2 for y in ys]; sw = sum(w)
    mx = sum(wi * x for wi, x in zip(w, xs)) / sw; my = sum(wi * y for wi, y in zip(w, ys)) / sw
    b = sum(wi * (x - mx) * (y - my) for wi, x, y in zip(w, xs, ys)) / sum(wi * (x - mx) ** 2 for wi, x in zip(w, xs))
    a = my - b * mx
    err = " ".join(f"{(a + b * x) / y - 1:+.1%}" for x, y in zip(xs, ys))
    kind = "read" if rw == "randread" else "write"
    print(f"  fit ({rw}): {a:.2f} us per IO + {b * 1024:.4f} us per KiB (off by {err} at 4 KiB, 64 KiB, 1 MiB);"
          f" {kind}PerIoBytes = a / b = {a / b:.0f}; a 64 KiB {kind} costs {(a / b + 65536) / (a / b + 4096):.2f}x a 4 KiB one")
PY
