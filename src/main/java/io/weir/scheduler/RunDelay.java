package io.weir.scheduler;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

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
     * tasks are charged CPU time only. One reading is one {@code pread} of a short text (2.5 µs on
     * the 2-core VM of the benchmarks).
     */
    static RunDelay openForCurrentThread() {
        try {
            Schedstat d = new Schedstat(FileChannel.open(Schedstat.PATH));
            if (d.nanos() >= 0) {
                return d;
            }
            d.close();
            return null;
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /** {@code /proc/thread-self/schedstat}, opened by the thread it describes. */
    final class Schedstat implements RunDelay {

        static final Path PATH = Path.of("/proc/thread-self/schedstat");

        private final FileChannel file;
        private final ByteBuffer buf = ByteBuffer.allocate(96);

        private Schedstat(FileChannel file) {
            this.file = file;
        }

        @Override
        public long nanos() {
            buf.clear();
            try {
                file.read(buf, 0);
            } catch (IOException e) {
                return -1;
            }
            // "<on-CPU ns> <run delay ns> <timeslices>\n"
            int n = buf.position();
            int i = 0;
            while (i < n && buf.get(i) != ' ') {
                i++;
            }
            i++;
            if (i >= n) {
                return -1;
            }
            long v = 0;
            for (byte c; i < n && (c = buf.get(i)) >= '0' && c <= '9'; i++) {
                v = v * 10 + (c - '0');
            }
            return v;
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
