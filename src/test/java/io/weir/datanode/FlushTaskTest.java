package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flush task's passes: each volume with unflushed writes is destaged at most once per pass,
 * so a client that keeps writing does not keep a pass going (it used to: every step found new
 * writes and asked for the next, and the task flushed back to back instead of every second).
 */
class FlushTaskTest {

    @TempDir
    Path dir;

    @Test
    void aPassDestagesEachWrittenVolumeOnceEvenWhileWritesGoOn() throws Exception {
        VolumeStore a = VolumeStore.create(dir, "a", "acme/a", 1 << 20);
        VolumeStore b = VolumeStore.create(dir, "b", "acme/b", 1 << 20);
        // no background tasks configured: the driver cannot submit steps, this test runs them
        try (QosExecutor ex = QosExecutor.builder(SchedulerConfig.builder().build()).workers(1).build();
                BackgroundTasks tasks = new BackgroundTasks(ex, () -> List.of(a, b), Long.MAX_VALUE)) {
            write(a);
            write(b);

            assertThat(tasks.flushStep()).isTrue();
            assertThat(a.dirtyBytes.get()).isZero();
            write(a); // the client goes on writing during the pass
            assertThat(tasks.flushStep()).isTrue();
            assertThat(b.dirtyBytes.get()).isZero();
            assertThat(tasks.flushStep()).as("the pass is over although a has new writes").isFalse();
            assertThat(a.dirtyBytes.get()).isEqualTo(4096);

            assertThat(tasks.flushStep()).as("the next pass takes a's new writes").isTrue();
            assertThat(a.dirtyBytes.get()).isZero();
            assertThat(tasks.flushStep()).isFalse();
        } finally {
            a.close();
            b.close();
        }
    }

    private static void write(VolumeStore v) throws Exception {
        v.write(0, ByteBuffer.wrap(NbdServerTest.bytes(4096, 3)), false);
    }
}
