"""Heavy:light per 250 ms interval from two fio IOPS logs written with --log_unix_epoch=1.

    python3 src/test/bench/intervals.py HEAVY_LOG LIGHT_LOG

Pairs each heavy interval with the light one that ended within 125 ms of it (the clients are
separate processes, started at slightly different moments) and prints the median of the pairs'
ratios, how many fell below 2.5, how many there were and the lowest: "median below total lowest"
("nan 0 0 nan" when the runs were too short to share an interval). The median is what
DataNodeQosE2ETest asserts. Used by contention-bench.sh and weights-ab.sh.
"""
import statistics
import sys


def log(path):
    return [(int(line.split(",")[0]), float(line.split(",")[1])) for line in open(path) if line.strip()]


light = log(sys.argv[2])
ratios = []
for t, h in log(sys.argv[1]):
    near = [v for u, v in light if abs(u - t) <= 125]
    if near and near[0] > 0:
        ratios.append(h / near[0])
if ratios:
    print(f"{statistics.median(ratios):.3f} {sum(1 for r in ratios if r < 2.5)} {len(ratios)} {min(ratios):.3f}")
else:
    print("nan 0 0 nan")
