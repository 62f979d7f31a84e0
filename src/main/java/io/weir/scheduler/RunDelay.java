package io.weir.scheduler;

import java.io.IOException;
import java.io.RandomAccessFile;

/**
 * The time one thread has spent runnable but waiting for a CPU: Linux's run delay. With it a
 * worker tells the time it was blocked (in a slow store, say) from the time it waited for a CPU,
 * so that {@link CpuSampler} can charge a request its worker time. Read and closed only by the
 * thread it measures.
 */
interface RunDelay extends AutoCloseable {

    /** The thread's run delay so far, in nanoseconds; -1 if it could not be read. */
    long nanos();

    @Override
    default void close() {
    }

    /**
     * The calling thread's run delay from the second field of {@code /proc/thread-self/schedstat},
     * or null where the OS does not measure it (not Linux, or a kernel without schedstat); then
     * tasks are charged CPU time only. A kernel that keeps no schedule statistics prints
     * {@code 0 0 0}; the calling thread is running, so it has had a timeslice, and a count of 0
     * means the same. One reading is a seek and a read of a short text (4 µs on the 2-core VM of
     * the benchmarks, loaded; once per CPU sample). Not interruptible: an interrupt left set by
     * work on the worker does not close it.
     */
    static RunDelay openForCurrentThread() {
        try {
            Schedstat d = new Schedstat(new RandomAccessFile(Schedstat.PATH, "r"));
            if (d.read() && d.field(2) > 0 && d.field(1) >= 0) {
                return d;
            }
            d.close();
            return null;
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    /** {@code /proc/thread-self/schedstat}, opened by the thread it describes. */
    final class Schedstat implements RunDelay {

        static final String PATH = "/proc/thread-self/schedstat";

        private final RandomAccessFile file;
        private final byte[] buf = new byte[96];
        private int length;

        private Schedstat(RandomAccessFile file) {
            this.file = file;
        }

        @Override
        public long nanos() {
            return read() ? field(1) : -1;
        }

        /** Reads the file afresh: "<on-CPU ns> <run delay ns> <timeslices>\n". */
        boolean read() {
            try {
                file.seek(0);
                length = Math.max(0, file.read(buf));
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        /** Field {@code index} (from 0) of the last read, or -1 if it holds no digits. */
        long field(int index) {
            int i = 0;
            for (int f = 0; f < index; f++) {
                while (i < length && buf[i] != ' ') {
                    i++;
                }
                i++;
            }
            long v = 0;
            int start = i;
            for (; i < length && buf[i] >= '0' && buf[i] <= '9'; i++) {
                v = v * 10 + (buf[i] - '0');
            }
            return i == start ? -1 : v;
        }

        @Override
        public void close() {
            try {
                file.close();
            } catch (IOException e) {
                // a read-only procfs file: nothing written that could be lost
            }
        }
    }
}
