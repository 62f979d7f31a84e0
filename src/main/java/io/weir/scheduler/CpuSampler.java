package io.weir.scheduler;

/**
 * What a worker charges each request it runs, reading its thread's clocks at most once per sample
 * interval (see "CPU accounting" in {@link QosExecutor}). Two charges per request:
 * <ul>
 *   <li><b>CPU time</b>, what usage reports per volume and task: between samples a request is
 *       charged its wall time times the CPU/wall ratio of the previous interval; the request
 *       that closes an interval is charged the interval's measured CPU time minus what was
 *       already charged in it (never below 0), so every interval's CPU time is charged once, or,
 *       when the estimate at the previous ratio overshoots it, the interval is charged the
 *       estimate.</li>
 *   <li><b>Worker time</b>, what the tasks' shares divide and usage reports per task: the
 *       interval's CPU time plus the time its requests held the worker blocked (in a store
 *       slower than the CPU, say), which is their wall time less the interval's CPU time and
 *       {@linkplain RunDelay run delay} (time runnable but waiting for a CPU, not charged). It is
 *       spread over the interval's requests the same way, by their wall time. The run delay and
 *       the CPU time spent outside the requests (a wake-up after an idle park, the scheduling)
 *       are subtracted too, so the blocked time is a lower bound and worker time never less than
 *       the interval's CPU time. Without a run delay reader, and for an interval whose run delay
 *       could not be read, it is the CPU time.</li>
 * </ul>
 * One per worker thread, made on it; not thread-safe.
 */
final class CpuSampler {

    private final CpuClock clock;
    private final RunDelay runDelay;
    private final long interval;
    private long windowWall;
    private long windowCpu;
    private long windowDelay;
    /** Wall time of the requests run in the current interval. */
    private long windowRunWall;
    private final Split cpuSplit = new Split();
    private final Split workSplit = new Split();
    private long work;

    /**
     * @param clock the worker thread's CPU clock; read on the worker thread only
     * @param runDelay the worker thread's run delay, null to charge worker time as CPU time
     * @param intervalNanos the sample interval, 0 to read the clocks for every request
     * @param nowNanos the wall time now
     */
    CpuSampler(CpuClock clock, RunDelay runDelay, long intervalNanos, long nowNanos) {
        this.clock = clock;
        this.runDelay = runDelay;
        this.interval = intervalNanos;
        this.windowWall = nowNanos;
        this.windowCpu = clock.currentThreadCpuNanos();
        this.windowDelay = runDelay == null ? -1 : runDelay.nanos();
    }

    /**
     * The CPU time to charge a request that ran on this thread from {@code start} to {@code end}
     * (wall, ns); {@link #work()} then gives its worker time.
     */
    long charge(long start, long end) {
        windowRunWall += end - start;
        if (interval == 0 || end - windowWall >= interval) {
            long cpu = clock.currentThreadCpuNanos();
            long windowTotal = cpu - windowCpu;
            // the ratio per wall time of requests: the interval's wall counts the time the worker parked
            long charge = cpuSplit.close(windowTotal, windowRunWall);
            if (runDelay != null) {
                long delay = runDelay.nanos();
                long windowWork = windowTotal;
                if (windowDelay >= 0 && delay >= windowDelay) {
                    windowWork += Math.max(0, windowRunWall - windowTotal - (delay - windowDelay));
                }
                work = workSplit.close(windowWork, windowRunWall);
                windowDelay = delay;
            } else {
                work = charge;
            }
            windowWall = end;
            windowCpu = cpu;
            windowRunWall = 0;
            return charge;
        }
        long charge = cpuSplit.estimate(end - start);
        work = runDelay == null ? charge : workSplit.estimate(end - start);
        return charge;
    }

    /** The worker time of the request last passed to {@link #charge}. */
    long work() {
        return work;
    }

    /**
     * One currency's charges within an interval: estimates at the previous interval's ratio to
     * wall time, then the interval's measured total less what the estimates already charged.
     */
    private static final class Split {
        private long chargedInWindow;
        private double ratio = 1.0;

        long estimate(long wall) {
            long charge = (long) (wall * ratio);
            chargedInWindow += charge;
            return charge;
        }

        /**
         * Closes the interval: returns what is left of its measured {@code total} to charge (never
         * below 0), and takes {@code total / wall} (within [0, 1]) as the ratio of the next.
         */
        long close(long total, long wall) {
            long charge = Math.max(0, total - chargedInWindow);
            ratio = wall <= 0 ? 1.0 : Math.min(1.0, Math.max(0.0, (double) total / wall));
            chargedInWindow = 0;
            return charge;
        }
    }
}
