#!/usr/bin/env bash
# Two revisions of the data node and nbdkit under fio, by turns in one session (these machines
# drift by tens of percent, so the servers take turns and each round's ratios are what count):
#
#   bash src/test/bench/nbd-ab.sh REV_A REV_B ROUNDS SECONDS [WORKLOADS]
#   bash src/test/bench/nbd-ab.sh b602fd6 abc201b 6 6 write:64k,write:1m,read:64k
#
# WORKLOADS is a comma-separated list of fio rw:bs (default randwrite:4k,write:64k,write:1m).
# Each revision is cloned from this repository into a temporary directory and packaged; its node
# serves one 1 GiB volume (QoS on, no limits, 2 workers), nbdkit the same backing file. Each round
# runs every workload on the three servers in an order that rotates by round: fio at iodepth 32 on
# one connection for SECONDS, the backing file written back (sync) before each. Prints every
# measurement, then per workload the medians over the rounds of the same-round ratios B/A,
# A/nbdkit and B/nbdkit (with their range), of the rates, and of each server's CPU (user + system
# of its process) per IO. Needs fio (nbd engine), nbdkit and python3.
set -euo pipefail
# port, died, wait_port, weir_port: how the servers' ports are picked and waited for; build_jar: a revision packaged
. "$(dirname "$0")/lib.sh"
[ $# -ge 4 ] || { echo "usage: $0 REV_A REV_B ROUNDS SECONDS [WORKLOADS]" >&2; exit 2; }
rev_a=$1 rev_b=$2 rounds=$3 secs=$4
IFS=, read -r -a LOADS <<< "${5:-randwrite:4k,write:64k,write:1m}"
work=$(mktemp -d /tmp/weir-nbd-ab.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

build_jar "$rev_a" "$work/A.jar"
build_jar "$rev_b" "$work/B.jar"

VOL=00000000-0000-0000-0000-00000000b001
python3 - "$work/config.json" "$VOL" <<'PY'
import json, sys
path, vol = sys.argv[1:3]
tenant = "00000000-0000-0000-0000-00000000a001"
pol = {"weight": 100, "minIops": None, "maxIops": None, "burstIops": None, "maxBytesPerSec": None,
       "burstBytesPerSec": None, "costModel": {"minChargeBytes": 4096}}
json.dump({"nodeId": "00000000-0000-0000-0000-000000000001", "revision": 1, "tasks": [],
           "tenants": [{"id": tenant, "name": "bench", "weight": 100, "maxIops": None, "maxBytesPerSec": None}],
           "volumes": [{"id": vol, "tenantId": tenant, "name": "bench", "sizeBytes": 1 << 30, "effectivePolicy": pol}],
           "usageReportIntervalSeconds": 10}, open(path, "w"))
PY
FILE=$work/backing.img
dd if=/dev/urandom of="$FILE" bs=1M count=1024 status=none
declare -A URI PID
for side in A B; do
  mkdir -p "$work/data-$side"; ln -s "$FILE" "$work/data-$side/$VOL.img"
  java -Xms512m -Xmx512m -jar "$work/$side.jar" datanode --config-file "$work/config.json" --data-dir "$work/data-$side" \
    --listen 127.0.0.1:0 --workers 2 > "$work/$side.log" 2>&1 &
  pids+=($!); PID[$side]=$!
done
P_K=$(port)
nbdkit -f -i 127.0.0.1 -p "$P_K" file file="$FILE" > "$work/nbdkit.log" 2>&1 &
pids+=($!); PID[K]=$!; URI[K]=nbd://127.0.0.1:$P_K/
for side in A B; do
  URI[$side]=nbd://127.0.0.1:$(weir_port "${PID[$side]}" "$work/$side.log" "node $side")/bench/bench
done
wait_port "$P_K" "${PID[K]}" "$work/nbdkit.log" nbdkit
for s in A B K; do
  fio --name=warm --ioengine=nbd --uri="${URI[$s]}" --rw=randread --bs=4k --iodepth=32 --size=1g --runtime=2 \
    --time_based > /dev/null
done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
out=$work/results.txt
echo "# round workload server IOPS cpu-us-per-IO"
for r in $(seq "$rounds"); do
  case $((r % 3)) in 1) order="A B K" ;; 2) order="B K A" ;; *) order="K A B" ;; esac
  for load in "${LOADS[@]}"; do
    for s in $order; do
      sync "$FILE"
      c0=$(cpu "${PID[$s]}")
      res=$(fio --name=b --ioengine=nbd --uri="${URI[$s]}" --rw="${load%%:*}" --bs="${load##*:}" --iodepth=32 \
        --size=1g --runtime="$secs" --time_based --output-format=json 2>/dev/null | sed -n '/^{/,$p' \
        | python3 -c 'import json, sys
j = json.load(sys.stdin)["jobs"][0]; d = j["write"] if j["write"]["io_bytes"] else j["read"]
print(d["iops"], d["total_ios"])')
      c1=$(cpu "${PID[$s]}")
      read -r iops ios <<< "$res"
      echo "$r $load $s $iops $(python3 -c "print(($c1 - $c0) * 1e6 / $HZ / $ios)")" | tee -a "$out"
    done
  done
done
echo "# A = $rev_a, B = $rev_b; $rounds rounds of $secs s; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import collections, statistics as st, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, load, s, iops, cpu = line.split()
    runs[load, r][s] = (float(iops), float(cpu))
def med(xs):
    xs = list(xs)
    return f"{st.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"
for load in sorted({k[0] for k in runs}):
    rs = [v for k, v in runs.items() if k[0] == load]
    print(f"{load}: B/A {med(v['B'][0] / v['A'][0] for v in rs)}, A/nbdkit {med(v['A'][0] / v['K'][0] for v in rs)},"
          f" B/nbdkit {med(v['B'][0] / v['K'][0] for v in rs)}; median IOPS A {st.median(v['A'][0] for v in rs):.0f},"
          f" B {st.median(v['B'][0] for v in rs):.0f}, nbdkit {st.median(v['K'][0] for v in rs):.0f};"
          f" CPU us per IO A {st.median(v['A'][1] for v in rs):.1f}, B {st.median(v['B'][1] for v in rs):.1f},"
          f" nbdkit {st.median(v['K'][1] for v in rs):.1f}")
PY
