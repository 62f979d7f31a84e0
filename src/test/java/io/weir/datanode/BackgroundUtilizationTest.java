package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.Curve;
import io.weir.scheduler.SchedulerConfig.DynamicShare;
import io.weir.scheduler.SchedulerConfig.TaskSpec;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The utilization each background task reports, seen as the dynamic share it gives the task in
 * the executor's snapshot. Every task here has the share {@code 1 + 1024 u} (linear from 1 at
 * u = 0 to 1025 at u = 1), so a share of 2 is a utilization of 1/1024. The executor's only worker
 * is held by a blocker task while the work is pending, so the steps that would take it away wait.
 */
class BackgroundUtilizationTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final DynamicShare RAMP = new DynamicShare(0, 1, 1, 1025, Curve.LINEAR);

    @TempDir
    Path dir;
    QosExecutor executor;
    VolumeStore volume;
    final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception {
        executor = QosExecutor.builder(SchedulerConfig.builder().task(SchedulerConfig.FOREGROUND, 60)
                .task(TaskSpec.of("gc", 10).withDynamic(RAMP)).task(TaskSpec.of("flush", 10).withDynamic(RAMP))
                .task(TaskSpec.of("scrub", 10).withDynamic(RAMP)).task("blocker", 10).build()).workers(1).build();
        volume = VolumeStore.create(dir, "v", "acme/v", 16 * MiB);
        volume.open();
    }

    @AfterEach
    void stop() {
        release.countDown();
        executor.close();
        volume.close();
    }

    /** Occupies the executor's only worker until {@link #release}. */
    void holdTheWorker() {
        CountDownLatch running = new CountDownLatch(1);
        CompletableFuture<Object> f = executor.submitBackground("blocker", () -> {
            running.countDown();
            release.await();
            return null;
        });
        await().atMost(WAIT).until(() -> running.getCount() == 0 || f.isDone());
        assertThat(f).isNotDone();
    }

    double share(String task) {
        return executor.snapshot().task(task).share();
    }

    @Test
    void gcReportsTrimmedBytesAwaitingReclamationAndZeroOnceReclaimed() throws Exception {
        volume.write(0, ByteBuffer.wrap(bytes((int) MiB, 1)), false);
        try (BackgroundTasks tasks = new BackgroundTasks(executor, () -> List.of(volume), Long.MAX_VALUE)) {
            assertThat(share("gc")).as("nothing trimmed: utilization 0").isEqualTo(1);
            holdTheWorker();
            volume.trim(0, MiB);
            // 1 MiB of 1 GiB (GC_FULL_BYTES) pending: u = 1/1024
            await().atMost(WAIT).until(() -> share("gc") > 1);
            assertThat(share("gc")).isCloseTo(1 + 1024.0 * MiB / BackgroundTasks.GC_FULL_BYTES, within(1e-9));
            release.countDown();
            await().atMost(WAIT).until(() -> volume.pendingTrimBytes() == 0);
            await("gc's utilization back to 0").atMost(WAIT).until(() -> share("gc") == 1);
        }
    }

    @Test
    void flushReportsUnflushedBytesAndZeroOnceDestaged() throws Exception {
        try (BackgroundTasks tasks = new BackgroundTasks(executor, () -> List.of(volume), Long.MAX_VALUE)) {
            assertThat(share("flush")).as("nothing written: utilization 0").isEqualTo(1);
            holdTheWorker();
            volume.write(0, ByteBuffer.wrap(bytes((int) MiB, 1)), false);
            // 1 MiB of 256 MiB (FLUSH_FULL_BYTES) unflushed: u = 1/256
            await().atMost(WAIT).until(() -> share("flush") > 1);
            assertThat(share("flush")).isCloseTo(1 + 1024.0 * MiB / BackgroundTasks.FLUSH_FULL_BYTES, within(1e-9));
            release.countDown();
            await().atMost(WAIT).until(() -> volume.dirtyBytes.get() == 0);
            await("flush's utilization back to 0").atMost(WAIT).until(() -> share("flush") == 1);
        }
    }

    @Test
    void scrubReportsHowFarItsPassIsOverdueAsAFractionOfThePeriod() throws Exception {
        long period = Duration.ofSeconds(2).toNanos();
        volume.write(0, ByteBuffer.wrap(bytes((int) MiB, 1)), false);
        holdTheWorker(); // the pass that falls due cannot progress
        long start = System.nanoTime();
        try (BackgroundTasks tasks = new BackgroundTasks(executor, () -> List.of(volume), period)) {
            assertThat(share("scrub")).as("no pass due: utilization 0").isEqualTo(1);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(5)).until(() -> share("scrub") > 1);
            double justDue = (share("scrub") - 1) / 1024;
            long elapsed = System.nanoTime() - start;
            assertThat(justDue).as("a pass just due is hardly overdue").isLessThanOrEqualTo(
                    Math.max(0, (double) (elapsed - period) / period) + 1e-9);
            // a period later the pass, held back all along, is a whole period overdue
            await().atMost(WAIT).until(() -> share("scrub") == 1025);
            assertThat(System.nanoTime() - start).as("time until utilization 1").isGreaterThanOrEqualTo(2 * period);
            release.countDown();
            await().atMost(WAIT).until(() -> tasks.scrubPasses() > 0);
            await("scrub's utilization back to 0 between passes").atMost(WAIT).until(() -> share("scrub") == 1);
        }
    }
}
