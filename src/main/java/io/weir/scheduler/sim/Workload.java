package io.weir.scheduler.sim;

import io.weir.scheduler.IoKind;
import java.util.Objects;

/**
 * One source of simulated load: foreground IO on a volume or work for a background task.
 *
 * <p>A workload is <em>closed loop</em> (keeps {@code depth} requests outstanding, issuing a new one
 * when one completes, after {@code thinkNanos}) or <em>open loop</em> (requests arrive at
 * {@code ratePerSec}, evenly spaced or Poisson, whether or not earlier ones completed). It is
 * active in {@code [startNanos, stopNanos)} and, if {@code onNanos > 0}, alternates on/off
 * periods within it. Each request costs {@code cpuBaseNanos + cpuNanosPerByte * bytes} of
 * simulated CPU time.
 *
 * @param target volume id or task name
 * @param background true for a background task
 * @param depth outstanding requests of a closed loop; 0 for open loop
 * @param ratePerSec arrival rate of an open loop
 * @param poisson exponential inter-arrival times instead of even spacing (open loop)
 * @param thinkNanos delay between a completion and the next request (closed loop)
 * @param sizes request size distribution (ignored for background)
 * @param writeFraction probability a request is a write
 * @param cpuBaseNanos fixed CPU cost per request
 * @param cpuNanosPerByte CPU cost per byte
 * @param startNanos when the workload starts
 * @param stopNanos when it stops issuing (Long.MAX_VALUE for never)
 * @param onNanos length of an on period (0 = always on)
 * @param offNanos length of an off period
 */
public record Workload(String target, boolean background, int depth, double ratePerSec, boolean poisson,
        long thinkNanos, SizeMix sizes, double writeFraction, long cpuBaseNanos, double cpuNanosPerByte,
        long startNanos, long stopNanos, long onNanos, long offNanos) {

    public Workload {
        Objects.requireNonNull(target);
        Objects.requireNonNull(sizes);
        if (depth <= 0 && !(ratePerSec > 0)) {
            throw new IllegalArgumentException("a workload needs depth > 0 (closed) or rate > 0 (open)");
        }
    }

    /** A closed loop of {@code depth} outstanding 4 KiB reads costing 10 us of CPU each. */
    public static Workload closed(String volume, int depth) {
        return new Workload(volume, false, depth, 0, false, 0, SizeMix.fixed(4096), 0, 10_000, 0, 0,
                Long.MAX_VALUE, 0, 0);
    }

    /** An open loop of 4 KiB reads arriving at {@code iops}, evenly spaced. */
    public static Workload open(String volume, double iops) {
        return new Workload(volume, false, 0, iops, false, 0, SizeMix.fixed(4096), 0, 10_000, 0, 0,
                Long.MAX_VALUE, 0, 0);
    }

    /** A background task kept busy with {@code depth} outstanding items of {@code cpuNanos} each. */
    public static Workload background(String task, int depth, long cpuNanos) {
        return new Workload(task, true, depth, 0, false, 0, SizeMix.fixed(0), 0, cpuNanos, 0, 0,
                Long.MAX_VALUE, 0, 0);
    }

    public Workload sizes(SizeMix s) {
        return new Workload(target, background, depth, ratePerSec, poisson, thinkNanos, s, writeFraction, cpuBaseNanos,
                cpuNanosPerByte, startNanos, stopNanos, onNanos, offNanos);
    }

    public Workload cpu(long baseNanos, double perByte) {
        return new Workload(target, background, depth, ratePerSec, poisson, thinkNanos, sizes, writeFraction, baseNanos,
                perByte, startNanos, stopNanos, onNanos, offNanos);
    }

    public Workload writes(double fraction) {
        return new Workload(target, background, depth, ratePerSec, poisson, thinkNanos, sizes, fraction, cpuBaseNanos,
                cpuNanosPerByte, startNanos, stopNanos, onNanos, offNanos);
    }

    public Workload withPoissonArrivals() {
        return new Workload(target, background, depth, ratePerSec, true, thinkNanos, sizes, writeFraction, cpuBaseNanos,
                cpuNanosPerByte, startNanos, stopNanos, onNanos, offNanos);
    }

    public Workload think(long nanos) {
        return new Workload(target, background, depth, ratePerSec, poisson, nanos, sizes, writeFraction, cpuBaseNanos,
                cpuNanosPerByte, startNanos, stopNanos, onNanos, offNanos);
    }

    public Workload activeBetween(long start, long stop) {
        return new Workload(target, background, depth, ratePerSec, poisson, thinkNanos, sizes, writeFraction, cpuBaseNanos,
                cpuNanosPerByte, start, stop, onNanos, offNanos);
    }

    public Workload onOff(long on, long off) {
        return new Workload(target, background, depth, ratePerSec, poisson, thinkNanos, sizes, writeFraction, cpuBaseNanos,
                cpuNanosPerByte, startNanos, stopNanos, on, off);
    }

    /** True if the workload issues requests at time {@code t}. */
    public boolean activeAt(long t) {
        if (t < startNanos || t >= stopNanos) {
            return false;
        }
        if (onNanos <= 0) {
            return true;
        }
        return (t - startNanos) % (onNanos + offNanos) < onNanos;
    }

    IoKind kindFor(double u) {
        return u < writeFraction ? IoKind.WRITE : IoKind.READ;
    }
}
