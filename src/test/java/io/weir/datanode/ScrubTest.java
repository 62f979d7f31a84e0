package io.weir.datanode;

import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scrub finds data that no longer matches the checksum written with it: a block changed in the
 * volume's file behind the node's back is counted as a mismatch, and an intact volume has none.
 */
class ScrubTest {

    @TempDir
    Path dir;

    @Test
    void scrubCountsABlockCorruptedBehindTheVolumesBackAndNothingInAnIntactVolume() throws IOException {
        VolumeStore bad = VolumeStore.create(dir, "bad", "acme/bad", MiB);
        VolumeStore good = VolumeStore.create(dir, "good", "acme/good", MiB);
        try {
            for (VolumeStore v : new VolumeStore[] {bad, good}) {
                v.write(0, ByteBuffer.wrap(bytes(16 * VolumeStore.BLOCK, 1)), false);
                v.write(64 * VolumeStore.BLOCK, ByteBuffer.wrap(bytes(VolumeStore.BLOCK, 2)), false);
            }
            corrupt(bad.dataFile(), 5 * VolumeStore.BLOCK + 100);

            assertThat(good.scrub(0, good.blocks())).as("blocks verified").isEqualTo(17);
            assertThat(good.checksumMismatches.get()).isZero();
            assertThat(bad.scrub(0, bad.blocks())).as("blocks verified").isEqualTo(17);
            assertThat(bad.scrubbedBlocks.get()).isEqualTo(17);
            assertThat(bad.checksumMismatches.get()).as("the corrupted block").isEqualTo(1);
        } finally {
            bad.close();
            good.close();
        }
    }

    /**
     * A WRITE_ZEROES whose hole punch fails halfway (ext4 and XFS may split an extent, and fail
     * with ENOSPC on a full disk) leaves the blocks it zeroed unverified, not with the checksums
     * of what they held, and fails as a full disk, ENOSPC (qemu then pauses its guest rather
     * than fail its IO): it failed EIO, and scrub counted the zeroed blocks as corrupt.
     */
    @Test
    void aHolePunchThatFailsHalfwayLeavesNoStaleChecksumAndFailsAsAFullDisk() throws IOException {
        VolumeStore v = VolumeStore.create(dir, "v", "acme/v", MiB);
        try {
            v.write(0, ByteBuffer.wrap(bytes(16 * VolumeStore.BLOCK, 1)), false);
            v.holePuncher = (fd, offset, length) -> {
                LinuxFiles.punchHole(fd, offset, length / 2);
                throw new com.sun.jna.LastErrorException(28); // ENOSPC
            };
            Throwable failure = org.assertj.core.api.Assertions.catchThrowable(
                    () -> v.writeZeroes(0, 16 * VolumeStore.BLOCK, false, false));
            assertThat(failure).isNotNull();
            assertThat(Nbd.errorOf(failure)).as("the NBD error").isEqualTo(Nbd.ENOSPC);
            v.scrub(0, v.blocks());
            assertThat(v.checksumMismatches.get()).isZero();
        } finally {
            v.close();
        }
    }

    /**
     * A file system that cannot punch holes (EOPNOTSUPP): WRITE_ZEROES without NO_HOLE is answered
     * ENOTSUP, and the client (qemu) writes the zeroes itself, as writes the scheduler charges
     * (a node that wrote them, up to 4 GiB for one request, would do so uncharged). It failed EIO.
     */
    @Test
    void writeZeroesWhereHolesCannotBePunchedFailsAsNotSupported() throws IOException {
        VolumeStore v = VolumeStore.create(dir, "v", "acme/v", MiB);
        try {
            v.write(0, ByteBuffer.wrap(bytes(16 * VolumeStore.BLOCK, 1)), false);
            v.holePuncher = (fd, offset, length) -> {
                throw new com.sun.jna.LastErrorException(95); // EOPNOTSUPP
            };
            Throwable failure = org.assertj.core.api.Assertions.catchThrowable(
                    () -> v.writeZeroes(VolumeStore.BLOCK, 4 * VolumeStore.BLOCK, false, false));
            assertThat(Nbd.errorOf(failure)).isEqualTo(Nbd.ENOTSUP);
            ByteBuffer back = ByteBuffer.allocate(6 * VolumeStore.BLOCK);
            v.read(0, back);
            assertThat(back.array()).as("untouched").isEqualTo(bytes(6 * VolumeStore.BLOCK, 1));
            v.scrub(0, v.blocks());
            assertThat(v.checksumMismatches.get()).isZero();
        } finally {
            v.close();
        }
    }

    /**
     * A write that fails after some of it reached the file (a disk that filled, a read of a
     * partial block's rest that failed) leaves the blocks it touched unverified, not with the
     * checksums of what they held before: scrub would report them as corrupt on every pass.
     */
    @Test
    void aWriteThatFailsHalfwayLeavesNoStaleChecksumBehind() throws IOException {
        VolumeStore v = VolumeStore.create(dir, "v", "acme/v", MiB);
        try {
            v.write(VolumeStore.BLOCK, ByteBuffer.wrap(bytes(VolumeStore.BLOCK, 1)), false);
            AtomicLong transfers = new AtomicLong();
            v.serviceTime = bytes -> {
                if (transfers.incrementAndGet() == 2) { // the write's own data went in; the re-read of its block's rest fails
                    throw new java.io.UncheckedIOException(new IOException("injected read error"));
                }
            };
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> v.write(VolumeStore.BLOCK + 100, ByteBuffer.wrap(bytes(200, 2)), false))
                    .hasMessageContaining("injected");
            v.serviceTime = null;
            v.scrub(0, v.blocks());
            assertThat(v.checksumMismatches.get()).isZero();
        } finally {
            v.close();
        }
    }

    /**
     * A volume whose size is not a whole number of blocks (a config file may say so) grows: its
     * old last block's checksum covered the bytes up to the old end only, and scrub, which now
     * reads the whole block, found it corrupt on every pass. Open or not when it grows.
     */
    @Test
    void aVolumeThatGrowsFromAPartialLastBlockHasNoMismatch() throws IOException {
        int partial = VolumeStore.BLOCK + VolumeStore.BLOCK / 2;
        for (boolean openWhenItGrows : new boolean[] {true, false}) {
            String id = "v" + openWhenItGrows;
            VolumeStore v = VolumeStore.create(dir, id, "acme/" + id, partial);
            v.write(VolumeStore.BLOCK, ByteBuffer.wrap(bytes(VolumeStore.BLOCK / 2, 4)), false);
            if (!openWhenItGrows) {
                v.close();
                v = VolumeStore.create(dir, id, "acme/" + id, partial); // adopts the files, not opened yet
            }
            try {
                v.resize(2 * VolumeStore.BLOCK);
                v.scrub(0, v.blocks());
                assertThat(v.checksumMismatches.get()).as("open when it grows: %s", openWhenItGrows).isZero();
            } finally {
                v.close();
            }
        }
    }

    /**
     * A pass verifies every block of each volume open through it, whichever volumes open or close
     * meanwhile: its place was an index into the open volumes, so one closed before it moved the
     * rest down, and the pass ended without the rest of the volume it was in.
     */
    @Test
    void aVolumeClosedDuringAPassDoesNotCutTheRestOfThePassShort() throws Exception {
        int blocks = 2 * VolumeStore.SCRUB_STEP_BLOCKS;
        VolumeStore a = VolumeStore.create(dir, "a", "acme/a", (long) blocks * VolumeStore.BLOCK);
        VolumeStore b = VolumeStore.create(dir, "b", "acme/b", (long) blocks * VolumeStore.BLOCK);
        List<VolumeStore> open = new java.util.concurrent.CopyOnWriteArrayList<>(List.of(a, b));
        // no background tasks configured: the driver cannot submit steps, this test runs them
        try (QosExecutor ex = QosExecutor.builder(SchedulerConfig.builder().build()).workers(1).build();
                BackgroundTasks tasks = new BackgroundTasks(ex, () -> List.copyOf(open), 0)) {
            for (VolumeStore v : open) {
                v.write(0, ByteBuffer.wrap(bytes(blocks * VolumeStore.BLOCK, 5)), false);
            }
            int passes = tasks.scrubPasses();
            while (a.scrubbedBlocks.get() + b.scrubbedBlocks.get() < blocks + VolumeStore.SCRUB_STEP_BLOCKS) {
                tasks.scrubStep(); // into the second volume of the pass, whichever it is
            }
            VolumeStore second = a.scrubbedBlocks.get() == blocks ? b : a;
            open.remove(second == a ? b : a); // the first one closes
            while (tasks.scrubPasses() == passes) {
                tasks.scrubStep();
            }
            assertThat(second.scrubbedBlocks.get()).as("blocks of the volume the pass was in").isEqualTo(blocks);
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void aNodeWithAShortScrubPeriodFindsTheCorruptedBlock() throws IOException {
        try (DataNode node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .scrubPeriod(Duration.ofMillis(100)).build()) {
            node.apply(config().tenant("acme").volume("acme", "bad", 4 * MiB).volume("acme", "good", 4 * MiB).build());
            for (String name : new String[] {"bad", "good"}) {
                try (NbdTestClient c = new NbdTestClient(node.listenAddress()).open("acme/" + name)) {
                    c.write(0, bytes((int) MiB, 3));
                }
            }
            VolumeStore bad = node.volume("acme/bad");
            VolumeStore good = node.volume("acme/good");
            corrupt(bad.dataFile(), 3 * MiB / 4);

            await().atMost(Duration.ofSeconds(30)).until(() -> bad.checksumMismatches.get() > 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> good.scrubbedBlocks.get() >= 2 * MiB / VolumeStore.BLOCK);
            assertThat(good.checksumMismatches.get()).as("mismatches in the intact volume").isZero();
            // the scrubber finds the block again every pass (100 ms): the node's count and the volume's
            // are compared as read together, not across a pass that raised one after the other was read
            await().atMost(Duration.ofSeconds(30)).until(() -> node.scrubCounts()[1] == bad.checksumMismatches.get());
        }
    }

    /**
     * A pass ends, and no scrub step runs until the next one is due. Each finished step submits the
     * next while the task keeps two outstanding, so a step is always in flight when another ends the
     * pass; that step must not start a new pass early (it did: an idle node with the default hourly
     * period, once its first pass had run, scrubbed back to back for good). A clock the test moves
     * makes the passes fall due.
     */
    @Test
    void aPassEndsAndNoScrubStepRunsUntilTheNextIsDue() throws Exception {
        long period = Duration.ofHours(1).toNanos();
        AtomicLong clock = new AtomicLong();
        VolumeStore v = VolumeStore.create(dir, "v", "acme/v", 16 * MiB);
        try (QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().task(SchedulerConfig.FOREGROUND, 90)
                        .task("scrub", 10).build()).workers(2).build();
                BackgroundTasks tasks = new BackgroundTasks(executor, () -> List.of(v), period, clock::get)) {
            v.open();
            v.write(0, ByteBuffer.wrap(bytes(4 * (int) MiB, 1)), false);
            long dataBlocks = 4 * MiB / VolumeStore.BLOCK;
            for (int pass = 1; pass <= 2; pass++) {
                clock.addAndGet(period);
                int done = pass;
                await().atMost(Duration.ofSeconds(30)).until(() -> tasks.scrubPasses() >= done);
                await("no scrub step queued or running after pass " + pass).atMost(Duration.ofSeconds(30))
                        .until(() -> tasks.scrubStepsOutstanding() == 0);
                assertThat(v.scrubbedBlocks.get()).as("blocks verified in %d passes", pass).isEqualTo(pass * dataBlocks);
                assertThat(tasks.scrubPasses()).isEqualTo(pass);
            }
        } finally {
            v.close();
        }
    }

    /** Flips the bits of 8 bytes at {@code offset} straight in the file, past the volume. */
    private static void corrupt(Path file, long offset) throws IOException {
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(8);
            f.read(b, offset);
            b.flip();
            ByteBuffer flipped = ByteBuffer.allocate(8);
            while (b.hasRemaining()) {
                flipped.put((byte) ~b.get());
            }
            f.write(flipped.flip(), offset);
        }
    }
}
