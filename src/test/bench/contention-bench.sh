#!/usr/bin/env bash
# Contention benchmark (issue 18): what keeping weights under natural contention costs. Two Weir
# data nodes serve the same two backing files, one with QoS on (the defaults: anticipation on) and
# one with --qos off; two volumes, weights 300 and 100, no limits. Each round, alternating the nodes:
#   lone:  fio 4 KiB randread QD32 on the heavy volume alone            (IOPS)
#   pair:  one fio process per volume, both at once, 4 KiB randread QD32  (aggregate IOPS, heavy:light)
#   qd1:   fio 4 KiB randread QD1 on one volume                          (latency p50, p99)
# and prints medians and the same-round ratios QoS on / QoS off (the targets: lone and pair at
# least 0.95, QD1 p50 and p99 at most 1.10, heavy:light 3.0 with QoS on).
#
#   mvn -o -q package -DskipTests && bash src/test/bench/contention-bench.sh [rounds] [seconds] [workers]
#
# ON_FLAGS (default empty: the node's defaults) adds data node options to the QoS-on node only.
set -euo pipefail
# weir_port: the port a node printed once it serves its config
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../../.."
ROUNDS=${1:-3}
SECS=${2:-8}
WORKERS=${3:-2}
ON_FLAGS=${ON_FLAGS:-}
JAR=$(ls target/weir-*.jar | grep -v -- -agent | head -1)
WORK=$(mktemp -d /tmp/weir-contention.XXXXXX)
SIZE=$((256 * 1024 * 1024))
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
HEAVY=00000000-0000-0000-0000-00000000c001
LIGHT=00000000-0000-0000-0000-00000000c002

python3 - "$WORK" "$HEAVY" "$LIGHT" "$SIZE" <<'PY'
import json, sys
work, heavy, light, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tenant = "00000000-0000-0000-0000-00000000a001"
def pol(w):
    return {"weight": w, "minIops": None, "maxIops": None, "burstIops": None, "maxBytesPerSec": None,
            "burstBytesPerSec": None, "costModel": {"minChargeBytes": 4096}}
cfg = {"nodeId": "00000000-0000-0000-0000-000000000001", "revision": 1, "tasks": [],
       "tenants": [{"id": tenant, "name": "bench", "weight": 100, "maxIops": None, "maxBytesPerSec": None}],
       "volumes": [{"id": heavy, "tenantId": tenant, "name": "heavy", "sizeBytes": size, "effectivePolicy": pol(300)},
                   {"id": light, "tenantId": tenant, "name": "light", "sizeBytes": size, "effectivePolicy": pol(100)}],
       "usageReportIntervalSeconds": 10}
json.dump(cfg, open(work + "/config.json", "w"))
PY
mkdir -p "$WORK/on" "$WORK/off"
for v in $HEAVY $LIGHT; do
  dd if=/dev/urandom of="$WORK/on/$v.img" bs=1M count=$((SIZE >> 20)) status=none
  ln -s "$WORK/on/$v.img" "$WORK/off/$v.img"
done
for m in on off; do
  java -Xms512m -Xmx512m -jar "$JAR" datanode --config-file "$WORK/config.json" --data-dir "$WORK/$m" \
    --listen 127.0.0.1:0 --workers "$WORKERS" --qos $m $([ $m = on ] && echo "$ON_FLAGS") > "$WORK/$m.log" 2>&1 & pids+=($!)
  eval "PID_$m=$!"
done
P_on=$(weir_port $PID_on "$WORK/on.log" qos-on)
P_off=$(weir_port $PID_off "$WORK/off.log" qos-off)
uri() { local p=P_$1; echo "nbd://127.0.0.1:${!p}/bench/$2"; }
fio1() { local uri=$1 depth=$2; shift 2
         fio --name=b --ioengine=nbd --uri="$uri" --rw=randread --bs=4k --iodepth="$depth" --size=256m \
           --runtime="$SECS" --time_based --output-format=json "$@"; }
field() { python3 -c 'import json,sys; d=sys.stdin.read(); j=json.loads(d[d.index("{"):])["jobs"][0]["read"]; print(eval(sys.argv[1]))' "$1"; }
for m in on off; do fio1 "$(uri $m heavy)" 32 >/dev/null; done   # warm-up: JIT, page cache

RES=$WORK/results.tsv
for r in $(seq "$ROUNDS"); do
  order=(on off); [ $((r % 2)) = 0 ] && order=(off on)
  for m in "${order[@]}"; do
    lone=$(fio1 "$(uri $m heavy)" 32 | field 'j["iops"]')
    rm -f "$WORK"/h_iops.*.log "$WORK"/l_iops.*.log
    fio1 "$(uri $m heavy)" 32 --write_iops_log="$WORK/h" --log_avg_msec=250 --log_unix_epoch=1 > "$WORK/h.json" & a=$!
    fio1 "$(uri $m light)" 32 --write_iops_log="$WORK/l" --log_avg_msec=250 --log_unix_epoch=1 > "$WORK/l.json" & b=$!
    wait $a $b
    h=$(field 'j["iops"]' < "$WORK/h.json"); l=$(field 'j["iops"]' < "$WORK/l.json")
    # as DataNodeQosE2ETest: the median over fio's 250 ms intervals in which both clients ran
    med=$(python3 src/test/bench/intervals.py "$WORK"/h_iops.1.log "$WORK"/l_iops.1.log | cut -d' ' -f1)
    lat=$(fio1 "$(uri $m heavy)" 1 | field '"%d %d" % (j["clat_ns"]["percentile"]["50.000000"], j["clat_ns"]["percentile"]["99.000000"])')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$r" "$lone" "$h" "$l" "$lat" "$med" >> "$RES"
    printf 'round %s qos %-3s lone %8.0f heavy %8.0f light %8.0f heavy:light %5.2f (interval median %s) QD1 p50/p99 ns %s\n' \
      "$r" "$m" "$lone" "$h" "$l" "$(python3 -c "print($h / $l)")" "$med" "$lat"
  done
done

python3 - "$RES" "$ROUNDS" "$SECS" "$WORKERS" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
by = {}
for m, r, lone, h, l, lat, med in rows:
    p50, p99 = lat.split()
    by.setdefault(m, {})[int(r)] = dict(lone=float(lone), pair=float(h) + float(l), ratio=float(h) / float(l),
                                         p50=float(p50) / 1000, p99=float(p99) / 1000, interval=float(med))
rounds = sorted(by["on"])
print(f"rounds {sys.argv[2]} x {sys.argv[3]} s, 4 KiB randread, weights 300:100, no limits, workers {sys.argv[4]}")
print(f"{'':6} {'lone IOPS':>10} {'pair IOPS':>10} {'heavy:light':>12} {'QD1 p50 us':>11} {'QD1 p99 us':>11}")
for m in ("on", "off"):
    med = {k: st.median(by[m][r][k] for r in rounds) for k in ("lone", "pair", "ratio", "p50", "p99")}
    print(f"qos {m:3}{med['lone']:10.0f} {med['pair']:10.0f} {med['ratio']:12.2f} {med['p50']:11.1f} {med['p99']:11.1f}")
for k, goal in (("lone", ">= 0.95"), ("pair", ">= 0.95"), ("p50", "<= 1.10"), ("p99", "<= 1.10")):
    rs = sorted(by["on"][r][k] / by["off"][r][k] for r in rounds)
    print(f"  on/off {k:5} same-round median {st.median(rs):.3f} (rounds {rs[0]:.3f}-{rs[-1]:.3f}; goal {goal})")
rs = sorted(by["on"][r]["ratio"] for r in rounds)
print(f"  heavy:light with QoS on: median {st.median(rs):.2f} (rounds {rs[0]:.2f}-{rs[-1]:.2f}; goal 3.0 +-5%)")
rs = sorted(by["on"][r]["interval"] for r in rounds)
print(f"  heavy:light with QoS on, median of 250 ms intervals: median {st.median(rs):.2f} (rounds {rs[0]:.2f}-{rs[-1]:.2f})")
PY
