package io.weir.scheduler;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Measures the CPU time of the calling thread, which {@link QosExecutor} charges to the task of
 * each request it runs (the patent's "number of cycles processed by the CPU for each task").
 *
 * <p>Implementations must be callable from any thread and return a per-thread monotonic value.
 */
@FunctionalInterface
public interface CpuClock {

    /** The calling thread's CPU time in nanoseconds. */
    long currentThreadCpuNanos();

    /**
     * The thread CPU time of the JVM ({@link ThreadMXBean#getCurrentThreadCpuTime()}); falls back to
     * {@link #wallClock()} where the JVM cannot measure it. Costs a system call (a few hundred
     * nanoseconds on Linux) per reading.
     */
    static CpuClock threadCpuTime() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isCurrentThreadCpuTimeSupported()) {
            return wallClock();
        }
        if (!mx.isThreadCpuTimeEnabled()) {
            mx.setThreadCpuTimeEnabled(true);
        }
        return mx::getCurrentThreadCpuTime;
    }

    /**
     * Wall-clock time as a stand-in for CPU time: cheap (tens of nanoseconds), exact for
     * CPU-bound work, but it also charges time a request spends blocked.
     */
    static CpuClock wallClock() {
        return System::nanoTime;
    }
}
