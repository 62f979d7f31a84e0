package io.weir.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The CPU time of another process, as benchmarks measure the programs they start (Linux). */
public final class ProcessCpu {

    private ProcessCpu() {
    }

    /**
     * User and system CPU time of process {@code pid} so far, in nanoseconds, from
     * {@code /proc/<pid>/stat} (fields 14 and 15, in clock ticks of 10 ms).
     *
     * @throws UncheckedIOException if the process has ended (its file is gone)
     */
    public static long nanos(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
