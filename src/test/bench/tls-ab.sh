#!/usr/bin/env bash
# Two revisions of the data node under NbdTlsBenchmark, alternating run by run in one session
# (these machines drift by tens of percent, so A and B take turns):
#
#   bash src/test/bench/tls-ab.sh REV_A REV_B RUNS [benchmark options]
#   bash src/test/bench/tls-ab.sh 989864a c7015d0 3 --rounds 2 --seconds 8 --warmup 5 --server weir
#
# Each revision is cloned from this repository into a temporary directory and built; both run the
# benchmark source of REV_B (so an older revision gets its newer options and columns). Prints every
# run's lines, then per revision, workload and server the mean over the runs of the median rate
# and of the server's and fio's CPU seconds per GiB, and B's rate and CPU as ratios of A's.
# Needs what NbdTlsBenchmark needs (fio, nbdkit, setpriv as root).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 REV_A REV_B RUNS [NbdTlsBenchmark options]" >&2; exit 2; }
a=$1 b=$2 runs=$3
shift 3
args="$*"
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/weir-tls-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
bench=src/jmh/java/io/weir/datanode/NbdTlsBenchmark.java
for side in A B; do
  rev=$a; [ $side = B ] && rev=$b
  git clone -q "$repo" "$work/$side"
  git -C "$work/$side" checkout -q "$rev"
done
git -C "$work/B" show "$b:$bench" > "$work/A/$bench"
for side in A B; do
  echo "building $side ($(git -C "$work/$side" rev-parse --short HEAD))"
  (cd "$work/$side" && mvn -B -ntp -q -Pbench test-compile > "$work/build-$side.log" 2>&1) \
    || { tail -20 "$work/build-$side.log"; exit 1; }
done
out=$work/runs.txt
for i in $(seq "$runs"); do
  for side in A B; do
    echo "run $i: $side"
    (cd "$work/$side" && mvn -B -ntp -q -Pbench exec:exec -Dbench.main=io.weir.datanode.NbdTlsBenchmark \
      -Djmh.args="$args") 2>&1 | grep -E '^(4k|1m) ' | grep -v 'tls/plain' | sed "s/^/$side /" | tee -a "$out"
  done
done
echo "# means over $runs runs; A = $a, B = $b; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
# line: SIDE WORKLOAD(3 words) SERVER(2 words) VALUE UNIT CPU s FIOCPU s
awk '{ k = $2 " " $3 " " $4 "|" $5 " " $6; v[$1, k] += $7; c[$1, k] += $9; f[$1, k] += $11; n[$1, k]++; u[k] = $8; keys[k] = 1 }
  END {
    printf "%-36s %14s %14s %7s %10s %10s %7s %9s %9s\n", "workload | server", "A", "B", "B/A", "A cpu/GiB", "B cpu/GiB", "B/A", "A fio", "B fio"
    for (k in keys) {
      if (n["A", k] == 0 || n["B", k] == 0) continue
      va = v["A", k] / n["A", k]; vb = v["B", k] / n["B", k]
      ca = c["A", k] / n["A", k]; cb = c["B", k] / n["B", k]
      printf "%-36s %8.0f %-5s %8.0f %-5s %7.3f %8.2f s %8.2f s %7.3f %7.2f s %7.2f s\n", k, va, u[k], vb, u[k], vb / va, ca, cb, cb / ca, f["A", k] / n["A", k], f["B", k] / n["B", k]
    }
  }' "$out" | sort -r
