package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.weir.scheduler.SchedulerConfig.TenantSpec;
import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class QosExecutorTest {

    private static SchedulerConfig config(int volumes, int capacity) {
        SchedulerConfig.Builder b = SchedulerConfig.builder().defaultTasks().tenant(TenantSpec.of("t"));
        for (int i = 0; i < volumes; i++) {
            b.volume(VolumeSpec.of("v" + i, "t").withQueueCapacity(capacity));
        }
        return b.build();
    }

    /**
     * Occupies the executor's only worker with a request of {@code volume} until the answer is
     * closed, so that what is submitted meanwhile stays queued.
     */
    private static AutoCloseable holdTheWorker(QosExecutor ex, String volume) throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        ex.submit(volume, IoKind.WRITE, 4096, () -> {
            started.countDown();
            release.await();
            return 0;
        });
        started.await();
        return release::countDown;
    }

    /**
     * A worker that runs a batch of more than one request tells its listener, on its own thread:
     * the start, each request's run (its wall-clock span) and the end. A lone request is no batch.
     */
    @Test
    void aWorkerTellsItsBatchListenerAboutEachBatchOfMoreThanOneRequest() throws Exception {
        List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Object> nexts = java.util.Collections.synchronizedList(new ArrayList<>());
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        QosExecutor.BatchListener listener = new QosExecutor.BatchListener() {
            @Override
            public void batchStarted() {
                threads.add(Thread.currentThread());
                events.add("start");
            }

            @Override
            public boolean requestRan(long startNanos, long endNanos, Object next) {
                threads.add(Thread.currentThread());
                events.add((endNanos >= startNanos ? "ran" : "ran backwards") + (next == null ? " last" : ""));
                nexts.add(next);
                return false;
            }

            @Override
            public void batchEnded() {
                threads.add(Thread.currentThread());
                events.add("end");
            }
        };
        Set<Thread> workers = ConcurrentHashMap.newKeySet();
        try (QosExecutor ex = QosExecutor.builder(config(1, 100)).workers(1).batchListener(listener).build()) {
            List<CompletableFuture<Integer>> fs = new ArrayList<>();
            List<java.util.concurrent.Callable<Integer>> works = new ArrayList<>();
            try (AutoCloseable held = holdTheWorker(ex, "v0")) {
                for (int i = 0; i < 5; i++) {
                    java.util.concurrent.Callable<Integer> work = () -> {
                        workers.add(Thread.currentThread());
                        return 1;
                    };
                    works.add(work);
                    fs.add(ex.submit("v0", IoKind.READ, 4096, work));
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> ex.pending() == 6);
                assertThat(events).as("the held request alone is no batch").isEmpty();
            }
            CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).join();
            await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("end"));
            assertThat(events).containsExactly("start", "ran", "ran", "ran", "ran", "ran last", "end");
            assertThat(nexts).as("each time, the work run next").containsExactly(works.get(1), works.get(2),
                    works.get(3), works.get(4), null);
            assertThat(threads).as("the worker's thread").isEqualTo(workers).hasSize(1);
            ex.submit("v0", IoKind.READ, 4096, () -> 1).join();
            await().atMost(Duration.ofSeconds(10)).until(() -> ex.pending() == 0);
            assertThat(events).as("a lone request is no batch").hasSize(7);
        }
    }

    /**
     * A batch listener that throws (a bug in the caller's hook, as a field read twice that a
     * reconfiguration nulled in between once was) costs the batch none of its requests and the
     * executor none of its workers: every request of the batch completes, the batch still ends,
     * and the one worker goes on to run what is submitted next. Before, the exception left the
     * worker's loop: the thread died with the rest of its batch never run.
     */
    @Test
    void aBatchListenerThatThrowsCostsNeitherTheBatchsRequestsNorTheWorker() throws Exception {
        List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
        QosExecutor.BatchListener listener = new QosExecutor.BatchListener() {
            @Override
            public void batchStarted() {
                events.add("start");
            }

            @Override
            public boolean requestRan(long startNanos, long endNanos, Object next) {
                events.add("ran");
                if (events.stream().filter("ran"::equals).count() == 2) {
                    throw new IllegalStateException("the listener's own bug");
                }
                return false;
            }

            @Override
            public void batchEnded() {
                events.add("end");
            }
        };
        try (QosExecutor ex = QosExecutor.builder(config(1, 100)).workers(1).batchListener(listener).build()) {
            List<CompletableFuture<Integer>> fs = new ArrayList<>();
            try (AutoCloseable held = holdTheWorker(ex, "v0")) {
                for (int i = 0; i < 4; i++) {
                    int n = i;
                    fs.add(ex.submit("v0", IoKind.READ, 4096, () -> n));
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> ex.pending() == 5);
            }
            assertThat(CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new))).succeedsWithin(Duration.ofSeconds(10));
            assertThat(fs).extracting(CompletableFuture::join).containsExactly(0, 1, 2, 3);
            await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("end"));
            assertThat(events).containsExactly("start", "ran", "ran", "ran", "ran", "end");
            assertThat(ex.submit("v0", IoKind.READ, 4096, () -> 7)).as("the worker lives on")
                    .succeedsWithin(Duration.ofSeconds(10)).isEqualTo(7);
        }
    }

    @Test
    void manyConcurrentSubmittersGetEveryRequestCompletedExactlyOnce() throws Exception {
        int submitters = 8, perSubmitter = 2_000, n = submitters * perSubmitter;
        AtomicIntegerArray runs = new AtomicIntegerArray(n);
        List<CompletableFuture<Integer>> futures = new ArrayList<>();
        try (QosExecutor ex = QosExecutor.builder(config(4, n)).workers(2).build()) {
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            List<List<CompletableFuture<Integer>>> perThread = new ArrayList<>();
            for (int s = 0; s < submitters; s++) {
                int base = s * perSubmitter;
                List<CompletableFuture<Integer>> mine = new ArrayList<>();
                perThread.add(mine);
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    byte[] buf = new byte[4096];
                    for (int i = 0; i < perSubmitter; i++) {
                        int id = base + i;
                        String vol = "v" + (id % 4);
                        IoKind kind = id % 3 == 0 ? IoKind.WRITE : IoKind.READ;
                        mine.add(ex.submit(vol, kind, buf.length, () -> {
                            runs.incrementAndGet(id);
                            CRC32C crc = new CRC32C();
                            crc.update(buf);
                            return id;
                        }));
                    }
                });
                threads.add(t);
                t.start();
            }
            start.countDown();
            for (Thread t : threads) {
                t.join();
            }
            perThread.forEach(futures::addAll);
            CompletableFuture.allOf(futures.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).until(() -> ex.pending() == 0);
            SchedulerSnapshot snap = ex.snapshot();
            long ops = snap.volumes().values().stream().mapToLong(Stats::ops).sum();
            assertThat(ops).isEqualTo(n);
            assertThat(snap.tenant("t").writeOps()).isEqualTo((n + 2) / 3);
        }
        for (int i = 0; i < n; i++) {
            assertThat(runs.get(i)).as("runs of request %d", i).isEqualTo(1);
        }
        for (int i = 0; i < n; i++) {
            assertThat(futures.get(i)).isCompletedWithValue(i);
        }
    }

    @Test
    void closeDrainsQueuedWorkThenRejectsNewSubmissions() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        QosExecutor ex = QosExecutor.builder(config(1, 1000)).workers(1).build();
        CompletableFuture<Integer> blocker = ex.submit("v0", IoKind.READ, 4096, () -> {
            started.countDown();
            release.await();
            return -1;
        });
        started.await();
        List<CompletableFuture<Integer>> queued = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            int id = i;
            queued.add(ex.submit("v0", IoKind.READ, 4096, () -> id));
        }
        Thread closer = new Thread(ex::close);
        closer.start();
        await().atMost(Duration.ofSeconds(5)).until(ex::isClosed);
        assertThatThrownBy(() -> ex.submit("v0", IoKind.READ, 1, () -> 0))
                .isInstanceOf(RejectedExecutionException.class);
        assertThat(queued).noneMatch(CompletableFuture::isDone);
        release.countDown();
        closer.join();
        assertThat(blocker).isCompletedWithValue(-1);
        for (int i = 0; i < 100; i++) {
            assertThat(queued.get(i)).isCompletedWithValue(i);
        }
    }

    @Test
    void queueDepthsAreTheSnapshotsQueuedPlusInFlightWithoutItsStatistics() throws Exception {
        try (QosExecutor ex = QosExecutor.builder(config(2, 8)).workers(1).build();
                AutoCloseable held = holdTheWorker(ex, "v0")) {
            for (int i = 0; i < 3; i++) {
                ex.submit("v0", IoKind.READ, 4096, () -> 1);
            }
            ex.submit("v1", IoKind.READ, 4096, () -> 1);
            assertThat(ex.queueDepths()).containsExactlyInAnyOrderEntriesOf(java.util.Map.of("v0", 4L, "v1", 1L));
            SchedulerSnapshot s = ex.snapshot();
            assertThat(s.volume("v0").queueDepth() + s.volume("v0").inFlight()).isEqualTo(4);
        }
    }

    @Test
    void rejectedCountOfAVolumeSurvivesItsRemovalAndReturnWhileItDrains() throws Exception {
        // usage reports take differences of the cumulative counters: removing a volume with work
        // still queued, and placing it back, must not make its rejected count go down
        try (QosExecutor ex = QosExecutor.builder(config(2, 2)).workers(1).build();
                AutoCloseable held = holdTheWorker(ex, "v0")) {
            ex.submit("v0", IoKind.WRITE, 4096, () -> 1);
            ex.submit("v0", IoKind.WRITE, 4096, () -> 1);
            assertThatThrownBy(() -> ex.submit("v0", IoKind.WRITE, 4096, () -> 2)).isInstanceOf(QueueFullException.class);
            assertThat(ex.snapshot().volume("v0").rejected()).isEqualTo(1);

            SchedulerConfig withoutV0 = SchedulerConfig.builder().defaultTasks().tenant(TenantSpec.of("t"))
                    .volume(VolumeSpec.of("v1", "t").withQueueCapacity(2)).build();
            ex.reconfigure(withoutV0);
            assertThat(ex.snapshot().volume("v0").rejected()).as("while draining").isEqualTo(1);
            ex.reconfigure(config(2, 2));
            assertThat(ex.snapshot().volume("v0").rejected()).as("placed back").isEqualTo(1);
        }
    }

    @Test
    void rejectedCountOfATaskSurvivesItsRemovalAndReturnWhileItDrains() throws Exception {
        // the same for a background task: a config that drops scrub while its work is queued, and
        // one that brings it back, must not make its rejected count go down
        SchedulerConfig withScrub = config(1, 2).toBuilder().task(SchedulerConfig.TaskSpec.of("scrub", 5).withQueueCapacity(1))
                .build();
        try (QosExecutor ex = QosExecutor.builder(withScrub).workers(1).build();
                AutoCloseable held = holdTheWorker(ex, "v0")) {
            ex.submitBackground("scrub", () -> 1);
            assertThatThrownBy(() -> ex.submitBackground("scrub", () -> 2)).isInstanceOf(QueueFullException.class);
            assertThat(ex.snapshot().task("scrub").rejected()).isEqualTo(1);

            ex.reconfigure(withScrub.toBuilder().removeTask("scrub").build());
            assertThat(ex.snapshot().task("scrub").rejected()).as("while draining").isEqualTo(1);
            ex.reconfigure(withScrub);
            assertThat(ex.snapshot().task("scrub").rejected()).as("placed back").isEqualTo(1);
        }
    }

    @Test
    void submitPastTheQueueBoundThrowsQueueFullAtOnceAndCountsIt() throws Exception {
        try (QosExecutor ex = QosExecutor.builder(config(1, 4)).workers(1).build();
                AutoCloseable held = holdTheWorker(ex, "v0")) {
            for (int i = 0; i < 4; i++) {
                ex.submit("v0", IoKind.WRITE, 4096, () -> 1);
            }
            assertThatThrownBy(() -> ex.submit("v0", IoKind.WRITE, 4096, () -> 2))
                    .isInstanceOf(QueueFullException.class)
                    .hasMessageContaining("v0")
                    .hasMessageContaining("capacity 4");
            assertThat(ex.snapshot().volume("v0").rejected()).isEqualTo(1);
            assertThat(ex.snapshot().volume("v0").queueDepth()).isEqualTo(4);
        }
    }

    @Test
    void aLaterPieceOfARequestIsQueuedPastTheBoundAndTheRequestCountsOnce() throws Exception {
        try (QosExecutor ex = QosExecutor.builder(config(1, 2)).workers(1).build()) {
            CompletableFuture<Integer> second;
            try (AutoCloseable held = holdTheWorker(ex, "v0")) {
                ex.submit("v0", IoKind.READ, 4096, () -> 1);
                ex.submit("v0", IoKind.READ, 4096, () -> 1); // the queue's bound, 2
                assertThatThrownBy(() -> ex.submitPiece("v0", IoKind.READ, 1 << 20, true, false, () -> 2))
                        .as("a first piece is a new request").isInstanceOf(QueueFullException.class);
                second = ex.submitPiece("v0", IoKind.READ, 1 << 20, false, true, () -> 3);
            }
            assertThat(second.get(10, TimeUnit.SECONDS)).as("the queue was full, the piece's request was admitted")
                    .isEqualTo(3);
            // counted once its worker returns, just after its future completed
            await().atMost(Duration.ofSeconds(10)).until(() -> ex.snapshot().volume("v0").readBytes() == 2 * 4096 + (1 << 20));
            assertThat(ex.snapshot().volume("v0").readOps()).as("two reads; the piece's request counted at its first piece")
                    .isEqualTo(2);
        }
    }

    @Test
    void cpuTimeIsChargedToTheTaskThatBurnedItNotToTimeSpentBlocked() throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        try (QosExecutor ex = QosExecutor.builder(config(1, 100)).workers(2).build()) {
            List<CompletableFuture<?>> all = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                // gc burns ~5 ms of CPU per item
                all.add(ex.submitBackground("gc", () -> {
                    long end = mx.getCurrentThreadCpuTime() + 5_000_000L;
                    long x = 0;
                    while (mx.getCurrentThreadCpuTime() < end) {
                        x++;
                    }
                    return x;
                }));
                // foreground items block for 5 ms (like waiting on a disk) and burn almost nothing
                all.add(ex.submit("v0", IoKind.READ, 4096, () -> new CountDownLatch(1).await(5, TimeUnit.MILLISECONDS)));
            }
            CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(5)).until(() -> ex.pending() == 0);
            SchedulerSnapshot snap = ex.snapshot();
            assertThat(snap.task("gc").cpuNanos()).isGreaterThanOrEqualTo(10 * 5_000_000L);
            assertThat(snap.task("gc").cpuNanos()).isLessThan(10 * 5_000_000L * 3);
            assertThat(snap.task("foreground").cpuNanos()).isLessThan(10 * 5_000_000L / 2);
            assertThat(snap.volume("v0").cpuNanos()).isEqualTo(snap.task("foreground").cpuNanos());
            assertThat(snap.task("gc").ops()).isEqualTo(10);
        }
    }

    @Test
    void workThatThrowsCompletesItsFutureExceptionally() {
        try (QosExecutor ex = QosExecutor.builder(config(1, 10)).workers(1).build()) {
            CompletableFuture<Object> f = ex.submit("v0", IoKind.READ, 1, () -> {
                throw new IllegalStateException("disk on fire");
            });
            await().atMost(Duration.ofSeconds(5)).until(f::isDone);
            assertThatThrownBy(f::get).isInstanceOf(ExecutionException.class).hasRootCauseMessage("disk on fire");
        }
    }

    @Test
    void throttledWorkIsRunWhenItBecomesEligibleWithoutBusyWaiting() throws Exception {
        SchedulerConfig c = SchedulerConfig.builder().tenant(TenantSpec.of("t"))
                .volume(VolumeSpec.of("slow", "t").withMaxIops(200))
                .volume(VolumeSpec.of("busy", "t")).build();
        try (QosExecutor ex = QosExecutor.builder(c).workers(2).build()) {
            // Both workers are held on an unlimited volume until all 20 requests are queued, so
            // the volume is backlogged, and so throttled, between every two of its dispatches.
            // Otherwise a submitting thread slower than the 5 ms between dispatches (descheduled
            // on 2 busy cores) lets the queue run dry between submissions: idle, not throttled,
            // and throttledNanos falls below the bound. Each blocker is submitted only once the
            // previous one runs, so the first worker cannot take both in one batch.
            CountDownLatch release = new CountDownLatch(1);
            List<CompletableFuture<?>> blockers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                CountDownLatch running = new CountDownLatch(1);
                blockers.add(ex.submit("busy", IoKind.READ, 1, () -> {
                    running.countDown();
                    return release.await(30, TimeUnit.SECONDS);
                }));
                assertThat(running.await(10, TimeUnit.SECONDS)).as("blocker %d running", w).isTrue();
            }
            long t0 = System.nanoTime();
            List<CompletableFuture<?>> all = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                all.add(ex.submit("slow", IoKind.READ, 4096, () -> 0));
            }
            release.countDown();
            CompletableFuture.allOf(blockers.toArray(new CompletableFuture[0])).get(10, TimeUnit.SECONDS);
            assertThat(blockers).allMatch(b -> Boolean.TRUE.equals(b.join()));
            CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(10, TimeUnit.SECONDS);
            long elapsed = System.nanoTime() - t0;
            // 20 ops at 200 IOPS: the first goes at once, the rest 5 ms apart, less the limiter's
            // jitter tolerance (20 ms: up to 4 ops early)
            assertThat(elapsed).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(19 * 5) - Limiter.JITTER_TOLERANCE_NANOS);
            assertThat(ex.snapshot().volume("slow").throttledNanos()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    @Test
    void reconfigureWhileRequestsAreQueuedLosesNothing() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        try (QosExecutor ex = QosExecutor.builder(config(2, 1000)).workers(1).build()) {
            ex.submit("v0", IoKind.READ, 1, () -> {
                started.countDown();
                release.await();
                return 0;
            });
            started.await();
            List<CompletableFuture<Integer>> fs = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                int id = i;
                fs.add(ex.submit("v" + (i % 2), IoKind.READ, 4096, () -> id));
            }
            ex.reconfigure(config(2, 1000).toBuilder().removeVolume("v1")
                    .volume(VolumeSpec.of("v0", "t").withWeight(500)).build());
            release.countDown();
            CompletableFuture.allOf(fs.toArray(new CompletableFuture[0])).get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 50; i++) {
                assertThat(fs.get(i)).isCompletedWithValue(i);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> !ex.snapshot().volumes().containsKey("v1"));
        }
    }

    @Test
    void submittersRacingWithRepeatedReconfigurationLoseAndDuplicateNothing() throws Exception {
        int submitters = 4, perSubmitter = 3_000, n = submitters * perSubmitter;
        AtomicIntegerArray runs = new AtomicIntegerArray(n);
        SchedulerConfig a = config(4, n);
        SchedulerConfig b = a.toBuilder().volume(VolumeSpec.of("v1", "t").withWeight(1000).withMaxIops(100_000).withQueueCapacity(n))
                .task("gc", 50).build();
        List<CompletableFuture<Integer>> all = java.util.Collections.synchronizedList(new ArrayList<>());
        try (QosExecutor ex = QosExecutor.builder(a).workers(2).build()) {
            CountDownLatch start = new CountDownLatch(1);
            // Each submitter sends its first quarter under configuration a, then the loop below
            // starts reconfiguring; every submitter stops halfway until the first reconfiguration
            // is in, so the rest of its requests race the loop however the threads are scheduled.
            CountDownLatch firstQuarterSent = new CountDownLatch(submitters);
            CountDownLatch reconfiguredOnce = new CountDownLatch(1);
            // How many reconfigurations had returned when each request was submitted.
            AtomicInteger reconfigurations = new AtomicInteger();
            Set<Integer> submittedUnder = ConcurrentHashMap.newKeySet();
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < submitters; s++) {
                int base = s * perSubmitter;
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < perSubmitter; i++) {
                            if (i == perSubmitter / 4) {
                                firstQuarterSent.countDown();
                            }
                            if (i == perSubmitter / 2) {
                                reconfiguredOnce.await();
                            }
                            int id = base + i;
                            submittedUnder.add(reconfigurations.get());
                            all.add(ex.submit("v" + (id % 4), IoKind.READ, 4096, () -> {
                                runs.incrementAndGet(id);
                                return id;
                            }));
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                threads.add(t);
                t.start();
            }
            start.countDown();
            assertThat(firstQuarterSent.await(30, TimeUnit.SECONDS)).isTrue();
            ex.reconfigure(b);
            reconfigurations.incrementAndGet();
            reconfiguredOnce.countDown();
            while (threads.stream().anyMatch(Thread::isAlive)) {
                ex.reconfigure(reconfigurations.get() % 2 == 0 ? b : a);
                reconfigurations.incrementAndGet();
            }
            for (Thread t : threads) {
                t.join();
            }
            CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
            // Requests went in under the first configuration and under later ones: the race the
            // test is named for took place (it fails if the submitters finished before any
            // reconfiguration, as a fast run could before the halfway latch).
            assertThat(submittedUnder).as("reconfigurations returned before a submission")
                    .contains(0).anyMatch(g -> g >= 1);
        }
        assertThat(all).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(runs.get(i)).as("runs of request %d", i).isEqualTo(1);
        }
    }
}
