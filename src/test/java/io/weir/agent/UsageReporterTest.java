package io.weir.agent;

import io.weir.support.ManualClock;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.protocol.UsageReport;
import io.weir.protocol.UsageReport.Gap;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import io.weir.scheduler.IoKind;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class UsageReporterTest {

    private static final UUID V1 = UUID.fromString("00000000-0000-4000-8000-000000000001");
    private static final UUID V2 = UUID.fromString("00000000-0000-4000-8000-000000000002");
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    /** A clock the test moves by hand. */

    private static SchedulerConfig config() {
        return SchedulerConfig.builder().defaultTasks().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of(V1.toString(), "t").withQueueCapacity(100_000))
                .volume(VolumeSpec.of(V2.toString(), "t").withQueueCapacity(100_000))
                .volume(VolumeSpec.of("not-a-uuid", "t"))
                .build();
    }

    private static void complete(QosExecutor ex, UUID volume, IoKind kind, int n, long bytes) {
        List<CompletableFuture<Integer>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fs.add(ex.submit(volume.toString(), kind, bytes, () -> 1));
        }
        CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).join();
        settled(ex);
    }

    /**
     * Waits until the workers have reported every completed request to the scheduler (they do it
     * just after completing its future, on their next pass through the scheduler lock).
     */
    private static void settled(QosExecutor ex) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> ex.pending() == 0);
    }

    private static VolumeUsage volume(UsageReport r, UUID id) {
        return r.volumes().stream().filter(v -> v.volumeId().equals(id)).findFirst().orElseThrow();
    }

    @Test
    void aReportCountsTheIoCompletedInItsIntervalOnly() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            complete(ex, V1, IoKind.READ, 5, 4096); // before the reporter: not in any report
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).build();
            complete(ex, V1, IoKind.READ, 7, 4096);
            complete(ex, V1, IoKind.WRITE, 3, 8192);
            complete(ex, V1, IoKind.REPLICA, 2, 65536);
            clock.advance(Duration.ofSeconds(10));
            UsageReport first = reporter.tick().orElseThrow();

            assertThat(first.sequence()).isEqualTo(1);
            assertThat(first.from()).isEqualTo(T0);
            assertThat(first.to()).isEqualTo(T0.plusSeconds(10));
            VolumeUsage v1 = volume(first, V1);
            assertThat(v1.readOps()).isEqualTo(7);
            assertThat(v1.writeOps()).isEqualTo(3);
            assertThat(v1.readBytes()).isEqualTo(7 * 4096);
            assertThat(v1.writeBytes()).isEqualTo(3 * 8192);
            assertThat(v1.replicaOps()).as("applied as a copy for the primary, apart").isEqualTo(2);
            assertThat(v1.replicaBytes()).isEqualTo(2 * 65536);
            assertThat(v1.latencyMaxUs()).isGreaterThanOrEqualTo(v1.latencyP99Us());
            assertThat(v1.latencyP99Us()).isGreaterThanOrEqualTo(v1.latencyP50Us());
            assertThat(v1.queuedP50Us()).as("the queued part of the median").isBetween(0L, v1.latencyP50Us());
            assertThat(v1.queuedP99Us()).as("the queued part of the 99th percentile").isBetween(0L, v1.latencyP99Us());
            assertThat(volume(first, V2).ops()).isZero();
            assertThat(first.volumes()).extracting(VolumeUsage::volumeId).doesNotContainNull().hasSize(2);
            assertThat(reporter.skippedVolumeIds()).isEqualTo(1);
            assertThat(first.tasks()).extracting(UsageReport.TaskUsage::name).contains("foreground");

            complete(ex, V2, IoKind.WRITE, 4, 512);
            clock.advance(Duration.ofSeconds(10));
            UsageReport second = reporter.tick().orElseThrow();
            assertThat(second.sequence()).isEqualTo(2);
            assertThat(second.from()).isEqualTo(first.to());
            assertThat(volume(second, V1).ops()).isZero();
            assertThat(volume(second, V1).replicaOps()).as("counted in the interval they completed in").isZero();
            assertThat(volume(second, V2).writeOps()).isEqualTo(4);
            assertThat(volume(second, V2).writeBytes()).isEqualTo(4 * 512);
        }
    }

    /**
     * A clock that jumps forward more than the longest interval a report may cover (a VM resumed
     * after days, NTP stepping a clock that was far behind) must not stop usage for good: the
     * report after the jump covers the last day up to now and carries everything counted since the
     * report before, and the next report follows as usual. The reporter kept retrying the
     * impossible interval before, silently, until the agent restarted.
     */
    @Test
    void aClockThatJumpsForwardDaysCostsNoUsageAndReportingGoesOn() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).build();
            complete(ex, V1, IoKind.READ, 7, 4096);
            clock.advance(Duration.ofDays(3));
            UsageReport after = reporter.tick().orElseThrow();
            assertThat(after.to()).isEqualTo(T0.plus(Duration.ofDays(3)));
            assertThat(after.from()).as("the longest interval a report may cover").isEqualTo(after.to().minus(UsageReport.MAX_INTERVAL));
            assertThat(volume(after, V1).readOps()).as("what was counted before the jump").isEqualTo(7);

            complete(ex, V1, IoKind.READ, 2, 4096);
            clock.advance(Duration.ofSeconds(10));
            UsageReport next = reporter.tick().orElseThrow();
            assertThat(next.from()).isEqualTo(after.to());
            assertThat(next.sequence()).isEqualTo(after.sequence() + 1);
            assertThat(volume(next, V1).readOps()).isEqualTo(2);
        }
    }

    /**
     * A node that boots with its clock before any time a report may name (1970, until NTP sets it)
     * reports nothing meanwhile and loses nothing: once the clock is right, the next report carries
     * what was counted.
     */
    @Test
    void aClockBeforeTheEarliestReportableTimeDefersReportsWithoutLosingUsage() {
        Instant boot = Instant.parse("1970-01-01T00:05:00Z");
        ManualClock clock = new ManualClock(boot);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).build();
            complete(ex, V1, IoKind.WRITE, 5, 4096);
            clock.advance(Duration.ofSeconds(10));
            assertThat(reporter.tick()).as("no report can name 1970").isEmpty();
            clock.set(T0); // NTP sets the clock
            UsageReport r = reporter.tick().orElseThrow();
            assertThat(r.from()).isEqualTo(T0.minus(UsageReport.MAX_INTERVAL));
            assertThat(r.to()).isEqualTo(T0);
            assertThat(volume(r, V1).writeOps()).isEqualTo(5);
        }
    }

    /**
     * A task's worker time counts the time its requests held a worker blocked, as a read from a
     * store slower than the CPU does; CPU time leaves it out. Assumes Linux, whose schedstat gives
     * the run delay that worker time needs (elsewhere worker time is CPU time).
     */
    @Test
    void aTasksWorkerTimeCountsTheTimeItsRequestsHeldAWorkerBlocked() {
        ManualClock clock = new ManualClock(T0);
        long blocked = Duration.ofMillis(50).toNanos();
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).cpuSampleInterval(0).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).interval(Duration.ofSeconds(10)).build();
            ex.submit(V1.toString(), IoKind.READ, 4096, () -> {
                long until = System.nanoTime() + blocked;
                for (long left = blocked; left > 0; left = until - System.nanoTime()) {
                    LockSupport.parkNanos(left); // the slow store's service time, not a wait for an event
                }
                return 1;
            }).join();
            settled(ex);
            clock.advance(Duration.ofSeconds(10));
            TaskUsage fg = reporter.tick().orElseThrow().tasks().stream().filter(t -> t.name().equals("foreground"))
                    .findFirst().orElseThrow();
            assertThat(fg.cpuNanos()).as("CPU time").isLessThan(blocked / 2);
            assertThat(fg.workerNanos()).as("worker time").isGreaterThanOrEqualTo(fg.cpuNanos() + blocked * 9 / 10);
        }
    }

    @Test
    void ticksBeforeTheIntervalEndsOnlySampleTheQueues() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).interval(Duration.ofSeconds(10)).build();
            clock.advance(Duration.ofSeconds(9));
            assertThat(reporter.tick()).isEmpty();
            clock.advance(Duration.ofSeconds(1));
            assertThat(reporter.tick()).isPresent();
            reporter.setInterval(Duration.ofSeconds(30));
            clock.advance(Duration.ofSeconds(10));
            assertThat(reporter.tick()).isEmpty();
            clock.advance(Duration.ofSeconds(20));
            assertThat(reporter.tick().orElseThrow().from()).isEqualTo(T0.plusSeconds(10));
        }
    }

    @Test
    void meanQueueDepthAveragesTheSamplesOfTheInterval() {
        ManualClock clock = new ManualClock(T0);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).build();
            clock.advance(Duration.ofSeconds(1));
            reporter.tick(); // sample 1: nothing pending
            CompletableFuture<Integer> blocker = ex.submit(V1.toString(), IoKind.READ, 4096, () -> {
                running.countDown();
                release.await();
                return 1;
            });
            await(running);
            List<CompletableFuture<Integer>> queued = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                queued.add(ex.submit(V1.toString(), IoKind.READ, 4096, () -> 1));
            }
            clock.advance(Duration.ofSeconds(1));
            reporter.tick(); // sample 2: one in flight, three queued
            release.countDown();
            blocker.join();
            queued.forEach(CompletableFuture::join);
            settled(ex);
            clock.advance(Duration.ofSeconds(8));
            UsageReport r = reporter.tick().orElseThrow(); // sample 3: nothing pending
            assertThat(volume(r, V1).queueDepth()).isEqualTo(4.0 / 3.0);
            assertThat(volume(r, V1).readOps()).isEqualTo(4);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new AssertionError("timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void reportsMadeWhileIoRunsAddUpToExactlyTheIoCompleted() throws Exception {
        ManualClock clock = new ManualClock(T0);
        AtomicLong completed = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        long reported = 0;
        try (QosExecutor ex = QosExecutor.builder(config()).workers(2).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).build();
            Thread load = new Thread(() -> {
                while (!stop.get()) {
                    List<CompletableFuture<Integer>> fs = new ArrayList<>();
                    for (int i = 0; i < 50; i++) {
                        fs.add(ex.submit(V1.toString(), i % 2 == 0 ? IoKind.READ : IoKind.WRITE, 4096, () -> 1)
                                .whenComplete((x, e) -> completed.incrementAndGet()));
                    }
                    CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).join();
                }
            });
            load.start();
            for (int i = 0; i < 40; i++) {
                // each report is made while IO runs: more has completed since the last one (the
                // ticks alone take microseconds and could all pass, and the load stop, before the
                // load thread's first batch: nothing completed, nothing reported)
                long before = completed.get();
                Awaitility.await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(30))
                        .until(() -> completed.get() > before);
                clock.advance(Duration.ofSeconds(10));
                reported += volume(reporter.tick().orElseThrow(), V1).ops();
            }
            stop.set(true);
            load.join();
            settled(ex);
            clock.advance(Duration.ofSeconds(10));
            reported += volume(reporter.tick().orElseThrow(), V1).ops();
        }
        assertThat(reported).isEqualTo(completed.get()).isPositive();
    }

    @Test
    void acknowledgedReportsLeaveTheBufferAndTheRestAreResentInOrder() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            List<UsageReport> sent = new ArrayList<>();
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).sink(sent::add).build();
            for (int i = 0; i < 4; i++) {
                clock.advance(Duration.ofSeconds(10));
                reporter.tick();
            }
            assertThat(sent).extracting(UsageReport::sequence).containsExactly(1L, 2L, 3L, 4L);
            assertThat(reporter.acknowledge(3)).isTrue();
            assertThat(reporter.acknowledge(3)).isFalse();
            assertThat(reporter.acknowledge(1)).isTrue();
            assertThat(reporter.acknowledge(99)).isFalse();
            assertThat(reporter.unacknowledged()).extracting(UsageReport::sequence).containsExactly(2L, 4L);
            assertThat(reporter.pendingGaps()).isEmpty();
        }
    }

    @Test
    void reportsOlderThanTheAgeBoundAreDroppedAndTheGapIsCarriedUntilAcknowledged() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).maxAge(Duration.ofSeconds(35)).build();
            List<UsageReport> reports = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                clock.advance(Duration.ofSeconds(10));
                reports.add(reporter.tick().orElseThrow());
            }
            // At 60 s, reports ending before 25 s (1: 0-10, 2: 10-20) are too old.
            assertThat(reporter.unacknowledged()).extracting(UsageReport::sequence).containsExactly(3L, 4L, 5L, 6L);
            Gap gap = new Gap(1, 2, T0, T0.plusSeconds(20));
            assertThat(reporter.pendingGaps()).containsExactly(gap);
            assertThat(reports.get(5).gaps()).containsExactly(gap);
            assertThat(reporter.droppedReports()).isEqualTo(2);

            for (long seq = 3; seq <= 6; seq++) {
                reporter.acknowledge(seq);
            }
            assertThat(reporter.pendingGaps()).isEmpty();
            clock.advance(Duration.ofSeconds(10));
            assertThat(reporter.tick().orElseThrow().gaps()).isEmpty();
        }
    }

    @Test
    void theCountBoundDropsTheOldestAndGapsGrowWhileNothingIsAcknowledged() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).maxReports(2).build();
            Optional<UsageReport> last = Optional.empty();
            for (int i = 0; i < 5; i++) {
                clock.advance(Duration.ofSeconds(10));
                last = reporter.tick();
            }
            assertThat(reporter.unacknowledged()).extracting(UsageReport::sequence).containsExactly(4L, 5L);
            Gap gap = new Gap(1, 3, T0, T0.plusSeconds(30));
            assertThat(last.orElseThrow().gaps()).containsExactly(gap);
            // Acknowledging a report made before the gap grew does not forget the grown gap.
            reporter.acknowledge(4);
            assertThat(reporter.pendingGaps()).containsExactly(gap);
            reporter.acknowledge(5);
            assertThat(reporter.pendingGaps()).isEmpty();
        }
    }

    @Test
    void dropsAcrossAcknowledgedReportsAreSeparateGaps() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).maxReports(2).build();
            List<UsageReport> reports = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                clock.advance(Duration.ofSeconds(10));
                reports.add(reporter.tick().orElseThrow());
                if (i == 1) {
                    reporter.acknowledge(2);
                }
            }
            // Kept {1}, then {1, 3}; report 4 drops 1, report 5 drops 3: 2 was acknowledged in between.
            assertThat(reports.get(3).gaps()).containsExactly(new Gap(1, 1, T0, T0.plusSeconds(10)));
            assertThat(reports.get(4).gaps()).containsExactly(new Gap(1, 1, T0, T0.plusSeconds(10)),
                    new Gap(3, 3, T0.plusSeconds(20), T0.plusSeconds(30)));
            // Acknowledging report 4 forgets the gap it carried; 3..3 stays until report 5 is acknowledged.
            reporter.acknowledge(4);
            assertThat(reporter.pendingGaps()).containsExactly(new Gap(3, 3, T0.plusSeconds(20), T0.plusSeconds(30)));
        }
    }

    /**
     * A report the control plane refused for good (it stored nothing of it, gaps included) is a
     * loss too: the gaps it carried stay pending, and it becomes one. Taken as an acknowledgement,
     * the gaps it carried were forgotten, and the losses were never recorded.
     */
    @Test
    void aRefusedReportKeepsTheGapsItCarriedAndIsAGapItself() {
        ManualClock clock = new ManualClock(T0);
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(ex).clock(clock).maxReports(2).build();
            for (int i = 0; i < 3; i++) { // report 3 drops report 1 and carries its gap
                clock.advance(Duration.ofSeconds(10));
                reporter.tick();
            }
            Gap first = new Gap(1, 1, T0, T0.plusSeconds(10));
            assertThat(reporter.pendingGaps()).containsExactly(first);
            assertThat(reporter.refused(3)).isTrue();
            assertThat(reporter.pendingGaps()).containsExactly(first, new Gap(3, 3, T0.plusSeconds(20), T0.plusSeconds(30)));
            assertThat(reporter.unacknowledged()).extracting(UsageReport::sequence).containsExactly(2L);
            clock.advance(Duration.ofSeconds(10));
            assertThat(reporter.tick().orElseThrow().gaps()).as("the next report carries both").hasSize(2);
        }
    }

    /**
     * A report that cannot be made (here the scheduler's snapshot fails; a node holding more
     * volumes than a report names was another way) is said, at WARNING, once for as long as it
     * keeps failing the same way: the ticking thread swallowed it without a word, and the node's
     * usage stopped with nothing in its log.
     */
    @Test
    void aReportThatCannotBeMadeIsLoggedOnceWhileItKeepsFailing() throws Exception {
        java.util.List<java.util.logging.LogRecord> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger(UsageReporter.class.getName());
        java.util.logging.Handler handler = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
                    logged.add(r);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        jul.addHandler(handler);
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ScheduledExecutorService scheduler = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try (QosExecutor ex = QosExecutor.builder(config()).workers(1).build()) {
            UsageReporter reporter = UsageReporter.builder(reset -> {
                if (asked.incrementAndGet() > 1) { // the baseline at the start is taken; every report after fails
                    throw new IllegalStateException("the snapshot failed");
                }
                return ex.snapshot(reset);
            }).clock(java.time.Clock.systemUTC()).interval(Duration.ofMillis(1)).sampleInterval(Duration.ofMillis(5)).build();
            reporter.start(scheduler);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> asked.get() >= 5);
            assertThat(logged).as("said once, not per tick").hasSize(1);
            assertThat(logged.get(0).getMessage() + java.util.Arrays.toString(logged.get(0).getParameters()))
                    .contains("the snapshot failed");
        } finally {
            scheduler.shutdownNow();
            jul.removeHandler(handler);
        }
    }
}
