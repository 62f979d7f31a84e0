package io.weir.datanode;

import io.weir.scheduler.IoKind;
import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NBD server under failure and abuse, with real clients on 127.0.0.1: one connection's
 * failure on the selector thread stays that connection's; a client that never finishes its
 * handshake is dropped; connections past the maximum are refused; a volume slow to open holds up
 * only the client that opens it.
 */
class NbdServerRobustnessTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    DataNode node;

    @BeforeEach
    void start() throws IOException {
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).build());
    }

    @AfterEach
    void stop() {
        node.close();
    }

    NbdTestClient client() throws IOException {
        return new NbdTestClient(node.listenAddress());
    }

    /**
     * A node that stops cuts its connections, then lets its scheduler run what is queued: the
     * requests of the cut connections, which return at once. The scheduler still held them to
     * their volumes' limits: a client of a volume capped at 16 KiB/s that had 1 MiB writes queued
     * kept the stop waiting a minute per write, past any supervisor's grace period, which then
     * killed the node before its volumes were flushed and closed.
     */
    @Test
    void aStoppingNodeDoesNotWaitAtVolumeLimitsForTheRequestsOfItsCutConnections() throws Exception {
        node.apply(config().tenant("acme").tenant("capped", 100, null, 16 * 1024L).volume("capped", "slow", 16 * MiB)
                .revision(2).build());
        String slow = TestConfigs.volumeId("capped", "slow").toString();
        NbdTestClient writer = client().open("capped/slow");
        for (int i = 0; i < 2; i++) {
            writer.request(Nbd.CMD_WRITE, 0, i, (long) i * MiB, MiB, bytes((int) MiB, i));
        }
        writer.flushOut();
        // the first write went at once (one request of overdraft), the rest wait for the limit
        await().atMost(WAIT).until(() -> node.executor().queueDepths().getOrDefault(slow, 0L) == 1);

        long started = System.nanoTime();
        node.close();
        Duration stopping = Duration.ofNanos(System.nanoTime() - started);
        writer.close();
        assertThat(stopping).as("the stop, which waited 1 MiB / 16 KiB/s = 64 s before")
                .isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void aTaskThatFailsOnTheSelectorThreadClosesItsConnectionOnlyAndTheOthersAreStillServed() throws IOException {
        try (NbdTestClient victim = client().open("acme/db1"); NbdTestClient bystander = client().open("acme/db2")) {
            bystander.write(0, bytes(4096, 1));
            NbdConnection conn = node.volume("acme/db1").clients.iterator().next();
            node.server().execute(conn, () -> {
                throw new IllegalStateException("a bug in a queued task");
            });
            assertThat(victim.closedByServer()).as("the failed task's connection is closed").isTrue();
            assertThat(bystander.read(0, 4096)).isEqualTo(bytes(4096, 1));
            try (NbdTestClient newcomer = client().open("acme/db1")) {
                assertThat(newcomer.read(0, 4096)).hasSize(4096);
            }
            await().atMost(WAIT).until(() -> node.connectionCount() == 1);
        }
    }

    /**
     * A connection at its in-flight bound stops reading until a request is done, and the end of
     * the request that brings it below the bound starts it again. When every request in flight
     * ended between the selector's check of the bound and its stop (a worker on another core),
     * nothing was left to start it: the connection was never read again. One request in flight at
     * most. Both workers are held by work of another volume until the selector, having found the
     * bound, is about to stop reading; it is held there until a worker has answered the read.
     */
    @Test
    void aConnectionWhoseRequestsAllEndedWhileItStoppedReadingIsReadAgain() throws Exception {
        node.close();
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).maxInFlight(1).build();
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).build());
        try (NbdTestClient c = client().open("acme/db1")) {
            CountDownLatch release = new CountDownLatch(1);
            for (int i = 0; i < 2; i++) {
                // one at a time: a worker that took one may not take the other in the same batch
                CountDownLatch held = new CountDownLatch(1);
                node.executor().submit(TestConfigs.volumeId("acme", "db2").toString(), IoKind.READ, 4096, () -> {
                    held.countDown();
                    return release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                });
                assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("worker %d held", i).isTrue();
            }
            AtomicBoolean once = new AtomicBoolean();
            node.server().beforePause = conn -> {
                if (once.compareAndSet(false, true)) {
                    release.countDown();
                    await().atMost(WAIT).until(() -> conn.inFlightCount() == 0);
                }
            };
            assertThat(c.read(0, 4096)).hasSize(4096);
            assertThat(once).as("the selector was held before it stopped reading").isTrue();
            assertThat(c.read(4096, 4096)).as("the next request is read").hasSize(4096);
        }
    }

    @Test
    void aConnectionDrainingAfterTheClientHalfClosedDoesNotSpinTheSelector() throws IOException {
        // db1 at 20 IOPS: ten reads take about half a second to answer
        node.apply(config().revision(2).tenant("acme").volume("acme", "db1", 16 * MiB, 100, null, 20L)
                .volume("acme", "db2", 16 * MiB).build());
        try (NbdTestClient c = client().open("acme/db1")) {
            for (int i = 0; i < 10; i++) {
                c.request(Nbd.CMD_READ, 0, i, 4096L * i, 4096, null);
            }
            c.flushOut();
            await().atMost(WAIT).until(() -> node.executor().queueDepths().getOrDefault(TestConfigs.volumeId("acme", "db1")
                    .toString(), 0L) > 0);
            long before = node.server().selectorWakeups();
            c.socket.shutdownOutput(); // end of stream: the connection drains its ten reads, then closes
            for (int i = 0; i < 10; i++) {
                assertThat(c.readReply().error()).isZero();
            }
            assertClosedByServer(c);
            long wakeups = node.server().selectorWakeups() - before;
            // About one per reply written and one per selector tick (50 ms); a selector that kept
            // finding the end of stream ready would wake up hundreds of thousands of times.
            assertThat(wakeups).as("selector wake-ups while draining").isLessThan(500);
        }
    }

    /** Restarts the node with other settings. */
    void restart(DataNode.Builder builder) throws IOException {
        node.close();
        node = builder.dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).build());
    }

    /** Reads until the server closes the connection; fails if it stays open for the socket timeout. */
    static void assertClosedByServer(NbdTestClient c) throws IOException {
        while (c.in.read() >= 0) {
            // greeting or replies still on their way
        }
    }

    @Test
    void aClientThatConnectsAndSaysNothingIsDroppedAfterTheHandshakeTimeout() throws IOException {
        // 2 s: the honest client's handshake (greeting, three options, opening db1) must fit in it
        // on a loaded 2-core machine; the silent one is still dropped well within the socket timeout
        restart(DataNode.builder().handshakeTimeout(Duration.ofSeconds(2)));
        try (NbdTestClient silent = client(); NbdTestClient busy = client().open("acme/db1")) {
            assertClosedByServer(silent);
            await().atMost(WAIT).until(() -> node.connectionCount() == 1);
            assertThat(busy.read(0, 4096)).as("a connection in transmission is not subject to it").hasSize(4096);
        }
    }

    @Test
    void connectionsBeyondTheMaximumAreRefusedCleanlyAndAcceptedAgainOnceOthersLeave() throws IOException {
        restart(DataNode.builder().maxConnections(2));
        try (NbdTestClient a = client().open("acme/db1"); NbdTestClient b = client().open("acme/db2")) {
            try (NbdTestClient refused = client()) {
                assertClosedByServer(refused); // no greeting: closed at once
            }
            assertThat(a.read(0, 4096)).hasSize(4096);
            a.disconnect();
            await().atMost(WAIT).until(() -> node.connectionCount() == 1);
            try (NbdTestClient c = client().open("acme/db1")) {
                assertThat(c.read(0, 4096)).hasSize(4096);
            }
            assertThat(b.read(0, 4096)).hasSize(4096);
        }
    }

    @Test
    void aVolumeSlowToOpenHoldsUpOnlyTheClientThatOpensItNotTheSelectorThread() throws Exception {
        try (NbdTestClient other = client().open("acme/db2")) {
            VolumeStore db1 = node.volume("acme/db1");
            assertThat(db1.isOpen()).isFalse();
            NbdTestClient opening = client().handshake();
            java.util.concurrent.FutureTask<NbdTestClient> go = new java.util.concurrent.FutureTask<>(() -> {
                opening.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db1"));
                return opening;
            });
            synchronized (db1.openLock) { // opening db1's files waits here, as on a slow disk
                new Thread(go, "test-go").start();
                other.write(0, bytes(4096, 5));
                assertThat(other.read(0, 4096)).isEqualTo(bytes(4096, 5));
                try (NbdTestClient lister = client().handshake()) {
                    assertThat(lister.option(Nbd.OPT_LIST, new byte[0])).hasSize(3);
                }
                assertThat(go.isDone()).isFalse();
            }
            try (NbdTestClient c = go.get(30, java.util.concurrent.TimeUnit.SECONDS)) {
                assertThat(c.read(0, 4096)).hasSize(4096);
            }
        }
    }

    @Test
    void aHeapOutOfMemoryErrorOnTheSelectorThreadIsFatalButOutOfDirectMemoryCostsOneConnection() throws IOException {
        java.util.List<OutOfMemoryError> fatal = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.function.Consumer<OutOfMemoryError> previous = OutOfMemory.onHeapExhausted(fatal::add);
        try (NbdTestClient direct = client().open("acme/db1"); NbdTestClient heap = client().open("acme/db1");
                NbdTestClient bystander = client().open("acme/db2")) {
            java.util.Iterator<NbdConnection> conns = node.volume("acme/db1").clients.iterator();
            NbdConnection first = conns.next();
            node.server().execute(first, () -> {
                throw new OutOfMemoryError("Cannot reserve 33554432 bytes of direct buffer memory (allocated: 1, limit: 2)");
            });
            await().atMost(WAIT).until(() -> node.connectionCount() == 2);
            assertThat(fatal).as("out of direct memory is contained: not fatal").isEmpty();

            NbdConnection second = node.volume("acme/db1").clients.iterator().next();
            OutOfMemoryError heapError = new OutOfMemoryError("Java heap space");
            node.server().execute(second, () -> {
                throw heapError;
            });
            await().atMost(WAIT).until(() -> !fatal.isEmpty());
            assertThat(fatal).as("a heap OutOfMemoryError goes to the handler, which ends the process in the command")
                    .containsExactly(heapError);
        } finally {
            OutOfMemory.onHeapExhausted(previous);
        }
    }
}
