#!/usr/bin/env bash
# Weights on a freshly started data node, two revisions by turns (issue 18: weights that hold
# whenever a node is saturated, from its first seconds too):
#
#   bash src/test/bench/weights-ab.sh REV_A REV_B RUNS [ROUNDS] [SECONDS]
#   bash src/test/bench/weights-ab.sh beb7308 HEAD 3 3 6
#
# Each revision is cloned from this repository and packaged. Each run starts a fresh node of A
# and of B in turn (the order alternating by run), each serving two volumes of weights 300 and 100
# (QoS on, its defaults, no limits, 2 workers), and on it: one warm-up fio on the heavy volume,
# then ROUNDS rounds of a lone fio on the heavy volume followed by one fio process per volume at
# once (4 KiB randread, QD32, SECONDS each; the sequence of contention-bench.sh). fio logs each
# pair client's IOPS per 250 ms, stamped with the wall clock, and intervals.py pairs the two
# clients' intervals that ended within 125 ms of each other. It prints, per round, the heavy:light ratio
# of the whole run, the median of the intervals (what DataNodeQosE2ETest asserts), how many
# intervals fell below 2.5 and the lowest one; then per revision the totals. Needs fio (nbd
# engine) and python3.
set -euo pipefail
# weir_port: the port a node printed once it serves its config; build_jar: a revision packaged
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { echo "usage: $0 REV_A REV_B RUNS [ROUNDS] [SECONDS]" >&2; exit 2; }
rev_a=$1 rev_b=$2 runs=$3 rounds=${4:-3} secs=${5:-6}
work=$(mktemp -d /tmp/weir-weights-ab.XXXXXX)
node=
cleanup() { [ -n "$node" ] && kill "$node" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

build_jar "$rev_a" "$work/A.jar"
build_jar "$rev_b" "$work/B.jar"

HEAVY=00000000-0000-0000-0000-00000000c001
LIGHT=00000000-0000-0000-0000-00000000c002
python3 - "$work/config.json" "$HEAVY" "$LIGHT" <<'PY'
import json, sys
path, heavy, light = sys.argv[1:4]
tenant = "00000000-0000-0000-0000-00000000a001"
def pol(w):
    return {"weight": w, "minIops": None, "maxIops": None, "burstIops": None, "maxBytesPerSec": None,
            "burstBytesPerSec": None, "costModel": {"minChargeBytes": 4096}}
json.dump({"nodeId": "00000000-0000-0000-0000-000000000001", "revision": 1, "tasks": [],
           "tenants": [{"id": tenant, "name": "bench", "weight": 100, "maxIops": None, "maxBytesPerSec": None}],
           "volumes": [{"id": heavy, "tenantId": tenant, "name": "heavy", "sizeBytes": 256 << 20, "effectivePolicy": pol(300)},
                       {"id": light, "tenantId": tenant, "name": "light", "sizeBytes": 256 << 20, "effectivePolicy": pol(100)}],
           "usageReportIntervalSeconds": 10}, open(path, "w"))
PY
mkdir -p "$work/files"
for v in $HEAVY $LIGHT; do
  dd if=/dev/urandom of="$work/files/$v.img" bs=1M count=256 status=none
done

fio1() { local uri=$1; shift
         fio --name=b --ioengine=nbd --uri="$uri" --rw=randread --bs=4k --iodepth=32 --size=256m \
           --runtime="$secs" --time_based --output-format=json "$@"; }
out=$work/results.txt
echo "# run side round whole-run median-interval intervals-below-2.5 lowest-interval"
for run in $(seq "$runs"); do
  order="A B"; [ $((run % 2)) = 0 ] && order="B A"
  for side in $order; do
    rm -rf "$work/data"; mkdir -p "$work/data"
    ln -s "$work/files/$HEAVY.img" "$work/files/$LIGHT.img" "$work/data/"
    java -Xms512m -Xmx512m -jar "$work/$side.jar" datanode --config-file "$work/config.json" --data-dir "$work/data" \
      --listen 127.0.0.1:0 --workers 2 > "$work/node.log" 2>&1 &
    node=$!
    base=nbd://127.0.0.1:$(weir_port "$node" "$work/node.log" "node $side")/bench
    fio1 "$base/heavy" > /dev/null
    for round in $(seq "$rounds"); do
      fio1 "$base/heavy" > /dev/null
      rm -f "$work"/h_iops.*.log "$work"/l_iops.*.log
      fio1 "$base/heavy" --write_iops_log="$work/h" --log_avg_msec=250 --log_unix_epoch=1 > "$work/h.json" & a=$!
      fio1 "$base/light" --write_iops_log="$work/l" --log_avg_msec=250 --log_unix_epoch=1 > "$work/l.json" & b=$!
      wait $a $b
      read -r med below total lowest < <(python3 "$here/intervals.py" "$work/h_iops.1.log" "$work/l_iops.1.log")
      whole=$(python3 - "$work" <<'PY'
import json, sys
def iops(name):
    text = open(f"{sys.argv[1]}/{name}.json").read()
    return json.loads(text[text.index("{"):])["jobs"][0]["read"]["iops"]
print(f"{iops('h') / iops('l'):.3f}")
PY
)
      echo "$run $side $round $whole $med $below/$total $lowest" | tee -a "$out"
    done
    kill "$node"; wait "$node" 2>/dev/null || true; node=
  done
done
echo "# A = $rev_a, B = $rev_b; $runs runs of $rounds rounds of $secs s; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for side in "AB":
    rs = [r for r in rows if r[1] == side]
    below = sum(int(r[5].split("/")[0]) for r in rs)
    total = sum(int(r[5].split("/")[1]) for r in rs)
    whole = sorted(float(r[3]) for r in rs)
    print(f"{side}: whole-run heavy:light median {st.median(whole):.2f} (rounds {whole[0]:.2f}-{whole[-1]:.2f}),"
          f" rounds below 2.85 {sum(1 for w in whole if w < 2.85)}/{len(rs)}; median interval"
          f" {st.median(float(r[4]) for r in rs):.2f}; intervals below 2.5 {below}/{total};"
          f" lowest interval {min(float(r[6]) for r in rs):.2f}")
PY
