package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 22, item 5: the control plane down during a failover. The control plane runs in its own
 * JVM over a database of its own ({@link ForkedControlPlane}) and is killed with SIGKILL, as a
 * crash takes it; the 2-copy volume is {@link ReplicatedPair}'s, written by fio with
 * {@code --verify} ({@link FioVerifiedRun}). In turn:
 * <ol>
 * <li>the control plane dies in the middle of a run: the run goes on to its end (the control plane
 * is not in the data path);
 * <li>the primary is killed in the middle of the next run and restarted, the control plane still
 * down: it serves again once its copy has confirmed its epoch, with every acknowledged write;
 * <li>the primary is killed again, the control plane still down: nothing promotes the copy, which
 * serves nothing; the control plane restarts on its database and port, and promotes the copy
 * once the agents' reconnect grace and the lease have passed; the new primary has every write
 * acknowledged before;
 * <li>the old primary returns and is brought back in sync.
 * </ol>
 * Everything runs with its defaults (the lease of 10 s, the reconnect grace of 30 s, the agents'
 * reconnect backoff up to 30 s); the kill points are times into rate-limited fio runs.
 */
@Tag("e2e")
class ReplicationControlPlaneDownE2ETest {

    private static final AtomicInteger DATABASES = new AtomicInteger();
    /** How long fio may take to notice its server is gone before the test stops it. */
    private static final Duration FIO_AFTER_KILL = Duration.ofSeconds(10);
    /** The promotion after the restart: the grace (30 s) and the lease (10 s), with room. */
    private static final Duration PROMOTION = Duration.ofMinutes(2);

    @TempDir
    Path dir;

    private ForkedControlPlane controlPlane;
    private ReplicatedPair pair;
    private FioVerifiedRun fio;

    @AfterEach
    void stop() throws InterruptedException {
        if (fio != null) {
            fio.stop();
        }
        if (pair != null) {
            pair.close();
        }
        if (controlPlane != null) {
            controlPlane.close();
        }
    }

    @Test
    void writesGoOnWithTheControlPlaneDownAndTheFailoverWaitsForItWithoutLosingAnAcknowledgedWrite() throws Exception {
        String jdbcUrl = ForkedControlPlane.newDatabase("weir_cp_down_" + ProcessHandle.current().pid() + "_"
                + DATABASES.incrementAndGet());
        Path controlPlaneDir = Files.createDirectories(dir.resolve("control-plane"));
        controlPlane = ForkedControlPlane.start(jdbcUrl, controlPlaneDir, 0);
        pair = ReplicatedPair.start(controlPlane.adminApi(), controlPlane.url(), dir, "cpdown");
        JsonNode v = pair.volume();
        String primary = v.get("primaryNodeId").asString();
        String copy = pair.other(primary);
        long epoch = v.get("epoch").asLong();
        String uri = pair.primaryUri();

        // 1. the control plane dies half a second into a run of about a second
        FioVerifiedRun during = fio = FioVerifiedRun.start(uri, run("during"), 1, 0, 16);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
        controlPlane.kill();
        long controlPlaneKilledAt = during.elapsedMillis();
        assertThat(during.awaitExit()).as("fio, the control plane killed:%n%s", during.output()).isZero();
        assertThat(during.acknowledged()).as("writes acknowledged after the control plane died")
                .anyMatch(w -> w[1] > controlPlaneKilledAt);

        // 2. the primary dies in the middle of the next run and comes back on the config it kept
        FioVerifiedRun cut = fio = FioVerifiedRun.start(uri, run("cut"), 2, 16, 16);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
        pair.kill(primary);
        boolean cutStopped = cut.awaitEnd(FIO_AFTER_KILL);
        pair.start(primary);
        String restarted = pair.nbdAddress(primary);
        pair.awaitOrExplain("the restarted primary serving, confirmed by its copy", ReplicatedPair.LONG,
                () -> NbdTestClient.writeAccepted(restarted, pair.exportName, ReplicatedPair.PROBE_OFFSET));
        assertNothingLost("the restarted primary", pair.uri(restarted), during, cut);

        // 3. killed again in the middle of a run: no control plane, no promotion
        FioVerifiedRun last = fio = FioVerifiedRun.start(pair.uri(restarted), run("last"), 3, 32, 32);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1000));
        pair.kill(primary);
        boolean lastStopped = last.awaitEnd(FIO_AFTER_KILL);
        assertThat(NbdTestClient.writeAccepted(pair.nbdAddress(copy), pair.exportName, ReplicatedPair.PROBE_OFFSET))
                .as("the copy, never promoted, serves nothing").isFalse();

        controlPlane = ForkedControlPlane.start(jdbcUrl, controlPlaneDir, controlPlane.port);
        long back = System.nanoTime();
        pair.awaitPromotion("the promotion once the control plane is back", primary, epoch, PROMOTION);
        long failoverMillis = pair.awaitProbeAccepted(back);
        assertThat(pair.volume().get("primaryNodeId").asString()).isEqualTo(copy);
        assertNothingLost("the new primary", pair.primaryUri(), during, cut, last);

        // 4. the old primary returns, as a copy
        pair.start(primary);
        pair.awaitAllInSync();
        System.out.printf("control plane down: writes acknowledged after its kill %d; the primary restarted without it"
                + " served again; a failover with it down took %d ms from its restart (grace and lease included); fio runs"
                + " stopped by the test after a kill: %d%n", during.acknowledged().stream()
                        .filter(w -> w[1] > controlPlaneKilledAt).count(), failoverMillis,
                (cutStopped ? 1 : 0) + (lastStopped ? 1 : 0));
    }

    /** A new directory for a fio run's files. */
    private Path run(String name) throws java.io.IOException {
        return Files.createDirectories(dir.resolve("fio-" + name));
    }

    /**
     * Has fio read back each run from {@code uri}: a run that ended by itself must be there whole,
     * one cut by a kill every write it saw acknowledged (a run whose fio had to be stopped left no
     * record to check and is skipped, as the kill test counts it).
     */
    private static void assertNothingLost(String where, String uri, FioVerifiedRun... runs) throws Exception {
        for (FioVerifiedRun run : runs) {
            if (!run.verifiable()) {
                System.out.printf("a fio run stopped by the test is not verified on %s%n", where);
                continue;
            }
            FioVerifiedRun.Verification check = run.verifyOn(uri);
            assertThat(check.lost()).as("acknowledged writes missing on %s:%n%s", where, check.output()).isEmpty();
            if (run.completed()) {
                assertThat(check.bad()).as("writes of a run that ended by itself missing on %s:%n%s", where, check.output())
                        .isEmpty();
            }
            assertThat(check.verified()).as("writes fio verified on %s", where).isPositive();
        }
    }
}
