#!/usr/bin/env bash
# NBD server benchmark: fio at iodepth 32 on one volume (4 KiB randread and randwrite, 64 KiB and
# 1 MiB sequential read and write), against the Weir data node with QoS on and 10,000 configured
# volumes, with QoS on and only that volume, with QoS off (requests bypass the scheduler),
# qemu-nbd and nbdkit's file plugin, all serving the same backing file, in one run, alternating
# server by server each round. Reports IOPS, MB/s, same-round ratios (to nbdkit, and QoS on to
# QoS off) and CPU per IO (user+sys of the server process over the IOs it served).
#
#   mvn -o -q package -DskipTests && bash src/test/bench/nbd-bench.sh [rounds] [seconds] [workers]
#
# Needs fio (nbd engine), qemu-nbd, nbdkit, python3. JAVA_OPTS adds JVM options to the Weir nodes
# (a JFR recording, say); WORKLOADS=rw:bs,... picks the workloads (default
# randread:4k,randwrite:4k,read:64k,write:64k,read:1m,write:1m); FIO_OPTS adds fio options to every
# measured run (FIO_OPTS=--end_fsync=1: each write run ends with a FLUSH inside its measured time,
# so that every server pays for making what it took durable).
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROUNDS=${1:-3}
SECS=${2:-10}
WORKERS=${3:-2}
JAR=$(ls target/weir-*.jar | grep -v -- -agent | head -1)
WORK=$(mktemp -d /tmp/weir-bench.XXXXXX)
DATA=$WORK/data
mkdir -p "$DATA"
VOL=00000000-0000-0000-0000-00000000b001
SIZE=$((1024 * 1024 * 1024))
HZ=$(getconf CLK_TCK)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

python3 - "$WORK" "$VOL" "$SIZE" <<'PY'
import json, sys, uuid
work, vol, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
tenant = "00000000-0000-0000-0000-00000000a001"
pol = {"weight": 100, "minIops": None, "maxIops": None, "burstIops": None, "maxBytesPerSec": None,
       "burstBytesPerSec": None, "costModel": {"minChargeBytes": 4096}}
def cfg(n):
    vols = [{"id": vol, "tenantId": tenant, "name": "bench", "sizeBytes": size, "effectivePolicy": pol}]
    tenants = [{"id": tenant, "name": "bench", "weight": 100, "maxIops": None, "maxBytesPerSec": None}]
    for i in range(1, n):  # the other configured volumes: 100 tenants, 1 MiB each, idle
        t = str(uuid.UUID(int=0xa000_0000 + i % 100))
        if i < 100:
            tenants.append({"id": t, "name": "t%d" % i, "weight": 100, "maxIops": None, "maxBytesPerSec": None})
        p = dict(pol, maxIops=1000 + i)
        vols.append({"id": str(uuid.UUID(int=0xb000_0000 + i)), "tenantId": t if i % 100 else tenant,
                     "name": "v%d" % i, "sizeBytes": 1 << 20, "effectivePolicy": p})
    return {"nodeId": "00000000-0000-0000-0000-000000000001", "revision": 1, "tasks": [], "tenants": tenants, "volumes": vols,
            "usageReportIntervalSeconds": 10}
json.dump(cfg(10000), open(work + "/qos-on.json", "w"))
json.dump(cfg(1), open(work + "/qos-on-1.json", "w"))
json.dump(cfg(1), open(work + "/qos-off.json", "w"))
PY

# the backing file, filled once (all servers serve this very file)
dd if=/dev/urandom of="$DATA/$VOL.img" bs=1M count=1024 status=none
FILE=$DATA/$VOL.img

# port, died, wait_port, weir_port: how the servers' ports are picked and waited for
. "$(dirname "$0")/lib.sh"

JAVA_OPTS=${JAVA_OPTS:-}
java -Xms512m -Xmx512m $JAVA_OPTS -jar "$JAR" datanode --config-file "$WORK/qos-on.json" --data-dir "$DATA" \
  --listen 127.0.0.1:0 --workers "$WORKERS" > "$WORK/on.log" 2>&1 & pids+=($!); PID_ON=$!
# A data dir belongs to one node (each sweeps files its config does not name into orphans/):
# the other nodes get their own, whose volume file is a link to the same backing file.
DATA_ONE=$WORK/data-one; mkdir -p "$DATA_ONE"; ln -s "$FILE" "$DATA_ONE/$VOL.img"
java -Xms512m -Xmx512m $JAVA_OPTS -jar "$JAR" datanode --config-file "$WORK/qos-on-1.json" --data-dir "$DATA_ONE" \
  --listen 127.0.0.1:0 --workers "$WORKERS" > "$WORK/one.log" 2>&1 & pids+=($!); PID_ONE=$!
DATA_OFF=$WORK/data-off; mkdir -p "$DATA_OFF"; ln -s "$FILE" "$DATA_OFF/$VOL.img"
java -Xms512m -Xmx512m $JAVA_OPTS -jar "$JAR" datanode --config-file "$WORK/qos-off.json" --data-dir "$DATA_OFF" \
  --listen 127.0.0.1:0 --workers "$WORKERS" --qos off > "$WORK/off.log" 2>&1 & pids+=($!); PID_OFF=$!
P_Q=$(port); qemu-nbd -f raw -x bench -b 127.0.0.1 -p $P_Q -t -e 64 "$FILE" > "$WORK/qemu.log" 2>&1 & pids+=($!); PID_Q=$!
P_K=$(port); nbdkit -f -i 127.0.0.1 -p $P_K file file="$FILE" > "$WORK/nbdkit.log" 2>&1 & pids+=($!); PID_K=$!
wait_port $P_Q $PID_Q "$WORK/qemu.log" qemu-nbd
wait_port $P_K $PID_K "$WORK/nbdkit.log" nbdkit
# the Weir nodes print their port after applying their config file (10,000 volume files to create)
P_ON=$(weir_port $PID_ON "$WORK/on.log" weir-qos-on)
P_ONE=$(weir_port $PID_ONE "$WORK/one.log" weir-qos-on-1)
P_OFF=$(weir_port $PID_OFF "$WORK/off.log" weir-qos-off)

declare -A URI=([weir-qos-on]="nbd://127.0.0.1:$P_ON/bench/bench" [weir-qos-on-1]="nbd://127.0.0.1:$P_ONE/bench/bench"
                [weir-qos-off]="nbd://127.0.0.1:$P_OFF/bench/bench"
                [qemu-nbd]="nbd://127.0.0.1:$P_Q/bench" [nbdkit-file]="nbd://127.0.0.1:$P_K/")
declare -A PID=([weir-qos-on]=$PID_ON [weir-qos-on-1]=$PID_ONE [weir-qos-off]=$PID_OFF [qemu-nbd]=$PID_Q
                [nbdkit-file]=$PID_K)
SERVERS=(weir-qos-on weir-qos-on-1 weir-qos-off qemu-nbd nbdkit-file)
IFS=, read -r -a LOADS <<< "${WORKLOADS:-randread:4k,randwrite:4k,read:64k,write:64k,read:1m,write:1m}"
for s in "${SERVERS[@]}"; do
  nbdinfo --size "${URI[$s]}" >/dev/null || { echo "$s does not serve ${URI[$s]}" >&2; exit 1; }
done
cpu() { awk '{print $14 + $15}' /proc/$1/stat; }

# warm-up: one short run each (JIT, page cache)
for s in "${SERVERS[@]}"; do
  fio --name=warm --ioengine=nbd --uri="${URI[$s]}" --rw=randread --bs=4k --iodepth=32 --size=1g --runtime=3 --time_based >/dev/null
done

RESULTS=$WORK/results.tsv
for r in $(seq "$ROUNDS"); do
  # rotate the order each round so that no server always runs first
  n=${#SERVERS[@]}
  order=("${SERVERS[@]:$(( (r - 1) % n ))}" "${SERVERS[@]:0:$(( (r - 1) % n ))}")
  for s in "${order[@]}"; do
    for load in "${LOADS[@]}"; do
      rw=${load%%:*}; bs=${load#*:}
      # All servers share the file: write back what the previous run left dirty, so that no
      # server pays for another's writes (the Weir nodes' flush task writes back every dirty page
      # of the file, theirs or not; qemu-nbd and nbdkit leave theirs to the kernel).
      sync "$FILE"
      c0=$(cpu ${PID[$s]})
      out=$(fio --name=b --ioengine=nbd --uri="${URI[$s]}" --rw=$rw --bs=$bs --iodepth=32 --size=1g \
              --runtime="$SECS" --time_based ${FIO_OPTS:-} --output-format=json)
      c1=$(cpu ${PID[$s]})
      python3 - "$s" "$rw:$bs" "$r" "$c0" "$c1" "$HZ" <<PY >> "$RESULTS"
import json, sys
s, load, r, c0, c1, hz = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
j = json.loads('''$out'''[ '''$out'''.index('{'):])["jobs"][0]
side = j["read"] if load.split(":")[0] in ("randread", "read") else j["write"]
ios = side["total_ios"]
print(f"{s}\t{load}\t{r}\t{side['iops']:.0f}\t{side['bw_bytes'] / 1e6:.1f}\t{(c1 - c0) / hz / max(ios, 1) * 1e6:.1f}")
PY
    done
  done
done

python3 - "$RESULTS" "$ROUNDS" "$SECS" "$WORKERS" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
by, loads = {}, []
for s, load, r, iops, mbs, cpu in rows:
    by.setdefault((s, load), []).append((float(iops), float(mbs), float(cpu)))
    if load not in loads:
        loads.append(load)
servers = ("weir-qos-on", "weir-qos-on-1", "weir-qos-off", "qemu-nbd", "nbdkit-file")
print(f"rounds {sys.argv[2]} x {sys.argv[3]} s, fio iodepth 32, weir workers {sys.argv[4]}; medians;"
      " weir-qos-on has 10,000 volumes configured, weir-qos-on-1 only the one it serves")
print(f"{'server':14} {'rw:bs':14} {'IOPS':>8} {'MB/s':>8} {'CPU us/IO':>10}   all rounds (IOPS)")
# The machine drifts by tens of percent between rounds: the ratio of two servers measured in the
# same round is steadier than the ratio of their medians, so the ratios are same-round ones.
def paired(a, b, load):
    rs = sorted(x[0] / y[0] for x, y in zip(by[(a, load)], by[(b, load)]))
    return f"{statistics.median(rs):.3f} (rounds {rs[0]:.3f}-{rs[-1]:.3f})"
for load in loads:
    for s in servers:
        v = by[(s, load)]
        print(f"{s:14} {load:14} {statistics.median(i for i, _, _ in v):8.0f} {statistics.median(m for _, m, _ in v):8.1f}"
              f" {statistics.median(c for _, _, c in v):10.1f}   {' '.join(f'{i:.0f}' for i, _, _ in v)}")
    print(f"  {load}: QoS on / nbdkit {paired('weir-qos-on', 'nbdkit-file', load)};"
          f" QoS on / QoS off {paired('weir-qos-on', 'weir-qos-off', load)} (10,000 volumes),"
          f" {paired('weir-qos-on-1', 'weir-qos-off', load)} (1 volume); QoS on / qemu-nbd {paired('weir-qos-on', 'qemu-nbd', load)}")
PY
