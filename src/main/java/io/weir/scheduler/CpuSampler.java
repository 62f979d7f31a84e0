package io.weir.scheduler;

/**
 * What a worker charges each request it runs in CPU time, reading its thread's CPU clock at most
 * once per sample interval (see "CPU accounting" in {@link QosExecutor}): between samples a
 * request is charged its wall time times the CPU/wall ratio of the previous interval; the request
 * that closes an interval is charged the interval's measured CPU time minus what was already
 * charged in it (never below 0), so every interval's CPU time is charged once, or, when the
 * estimate at the previous ratio overshoots it, the interval is charged the estimate. One per
 * worker thread; not thread-safe.
 */
final class CpuSampler {

    private final CpuClock clock;
    private final long interval;
    private long windowWall;
    private long windowCpu;
    private long chargedInWindow;
    private double ratio = 1.0;

    /**
     * @param clock the worker thread's CPU clock; read on the worker thread only
     * @param intervalNanos the sample interval, 0 to read the clock for every request
     * @param nowNanos the wall time now
     */
    CpuSampler(CpuClock clock, long intervalNanos, long nowNanos) {
        this.clock = clock;
        this.interval = intervalNanos;
        this.windowWall = nowNanos;
        this.windowCpu = clock.currentThreadCpuNanos();
    }

    /** The CPU time to charge a request that ran on this thread from {@code start} to {@code end} (wall, ns). */
    long charge(long start, long end) {
        if (interval == 0 || end - windowWall >= interval) {
            long cpu = clock.currentThreadCpuNanos();
            long windowTotal = cpu - windowCpu;
            long wall = end - windowWall;
            long charge = Math.max(0, windowTotal - chargedInWindow);
            ratio = wall <= 0 ? 1.0 : Math.min(1.0, Math.max(0.0, (double) windowTotal / wall));
            windowWall = end;
            windowCpu = cpu;
            chargedInWindow = 0;
            return charge;
        }
        long charge = (long) ((end - start) * ratio);
        chargedInWindow += charge;
        return charge;
    }
}
