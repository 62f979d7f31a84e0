package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Volumes coming and going while IO and background work are under way, seen by real NBD clients:
 * a closed volume's files are never touched through a descriptor number that another volume has
 * since been given, and a volume re-added while it drains keeps its files.
 */
class VolumeLifecycleTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    DataNode node;

    @BeforeEach
    void start() throws IOException {
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
    }

    @AfterEach
    void stop() {
        node.close();
    }

    NbdTestClient client() throws IOException {
        return new NbdTestClient(node.listenAddress());
    }

    Path file(String volume) {
        return dir.resolve(TestConfigs.volumeId("acme", volume) + ".img");
    }

    @Test
    void theBackgroundTasksSeeOnlyVolumesWhoseFilesAreOpen() throws IOException {
        node.apply(config().tenant("acme").volume("acme", "a", 16 * MiB).volume("acme", "b", 16 * MiB)
                .volume("acme", "c", 16 * MiB).build());
        assertThat(node.openVolumes()).isEmpty();

        try (NbdTestClient c = client().open("acme/b")) {
            assertThat(node.openVolumes()).containsExactly(node.volume("acme/b"));
        }
        assertThat(node.openVolumes()).containsExactly(node.volume("acme/b")); // open until closed

        node.apply(config().tenant("acme").volume("acme", "a", 16 * MiB).volume("acme", "c", 16 * MiB).build());
        assertThat(node.openVolumes()).isEmpty();
    }

    @Test
    void gcOfAVolumeClosedUnderItNeverPunchesTheFileOfAVolumeOpenedAfterIt() throws IOException {
        node.apply(config().tenant("acme").volume("acme", "old", 16 * MiB).volume("acme", "new", 16 * MiB).build());
        VolumeStore old = node.volume("acme/old");
        old.lockAll(); // gc takes the volume's files, then waits here for the stripes
        boolean held = true;
        try {
            try (NbdTestClient c = client().open("acme/old")) {
                assertThat(c.call(Nbd.CMD_TRIM, 0, 0, MiB, null).error()).isZero();
            }
            await().atMost(WAIT).until(old::writersWaiting);
            // the old volume leaves the config: its files are closed and deleted while gc waits
            node.apply(config().tenant("acme").volume("acme", "new", 16 * MiB).revision(2).build());
            await().atMost(WAIT).until(() -> !Files.exists(file("old")));
            // the new volume opens after it: the kernel hands out the descriptor numbers just freed
            try (NbdTestClient c = client().open("acme/new")) {
                c.write(0, bytes((int) MiB, 2));
                c.flush();
                old.unlockAll();
                held = false;
                await().atMost(WAIT).until(() -> !old.writersWaiting() && old.pendingTrimBytes() == 0);
                old.lockAll(); // returns once the gc step has let go of the stripes: its punch is done
                held = true;
                await("the old volume's descriptors close after its last user").atMost(WAIT).until(old::filesClosed);
                assertThat(sha256(c.read(0, (int) MiB))).as("the new volume's data after the old one's gc")
                        .isEqualTo(sha256(bytes((int) MiB, 2)));
            }
        } finally {
            if (held) {
                old.unlockAll();
            }
        }
    }

    /**
     * A removed volume's files are deleted without forcing them to the disk first: the node
     * waited for the disk to write what it was about to delete, holding the lock config pushes
     * and the background tasks' scheduling take.
     */
    @Test
    void aRemovedVolumesFilesAreDeletedWithoutForcingThemFirst() throws IOException {
        node.apply(config().tenant("acme").volume("acme", "db", 16 * MiB).build());
        VolumeStore v = node.volume("acme/db");
        try (NbdTestClient c = client().open("acme/db")) {
            c.write(0, bytes((int) MiB, 1)); // not flushed
        }
        await().atMost(WAIT).until(() -> node.connectionCount() == 0);
        node.apply(config().tenant("acme").revision(2).build());
        await().atMost(WAIT).until(() -> !Files.exists(file("db")));
        assertThat(v.forced()).as("forces of the removed volume").isZero();
    }

    @Test
    void aVolumeReAddedWhileItsConnectionsDrainKeepsItsFilesAndItsData() throws IOException {
        node.apply(config().tenant("acme").volume("acme", "db", 16 * MiB).build());
        VolumeStore v = node.volume("acme/db");
        try (NbdTestClient draining = client().open("acme/db")) {
            draining.write(0, bytes((int) MiB, 1));
            v.lockAll(); // holds the next write on its worker, so the connection has a request in flight
            try {
                draining.request(Nbd.CMD_WRITE, 0, 7, MiB, 4096, bytes(4096, 7));
                draining.flushOut();
                await().atMost(WAIT).until(v::writersWaiting);
                node.apply(config().tenant("acme").revision(2).build()); // removed: its connection drains
                node.apply(config().tenant("acme").volume("acme", "db", 16 * MiB).revision(3).build()); // and back
            } finally {
                v.unlockAll();
            }
            assertThat(draining.readReply().error()).isZero();
            assertThat(draining.closedByServer()).as("the removal still closes the connection it drained").isTrue();
        }
        await().atMost(WAIT).until(() -> node.connectionCount() == 0);
        node.apply(config().tenant("acme").volume("acme", "db", 16 * MiB).revision(4).build()); // reaps what drained
        assertThat(Files.exists(file("db"))).as("the re-added volume's file").isTrue();
        try (NbdTestClient c = client().open("acme/db")) {
            c.write(2 * MiB, bytes(4096, 3));
            c.flush();
        }
        node.close();
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
        node.apply(config().tenant("acme").volume("acme", "db", 16 * MiB).revision(4).build());
        try (NbdTestClient c = client().open("acme/db")) {
            assertThat(sha256(c.read(0, (int) MiB))).isEqualTo(sha256(bytes((int) MiB, 1)));
            assertThat(c.read(MiB, 4096)).isEqualTo(bytes(4096, 7));
            assertThat(c.read(2 * MiB, 4096)).isEqualTo(bytes(4096, 3));
        }
    }

    static String sha256(byte[] data) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(data));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
