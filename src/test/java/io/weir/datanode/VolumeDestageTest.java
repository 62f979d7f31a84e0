package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flush task's step, {@link VolumeStore#destage}: it starts write-back without waiting, counts the
 * volume's writes as destaged, and changes nothing a client reads; FLUSH stays {@link VolumeStore#flush}.
 */
class VolumeDestageTest {

    @TempDir
    Path dir;

    @Test
    void destageCountsTheWritesAsDestagedAndKeepsTheData() throws Exception {
        VolumeStore v = VolumeStore.create(dir, "v1", "acme/v1", 1 << 20);
        try {
            byte[] data = NbdServerTest.bytes(65536, 7);
            v.write(8192, ByteBuffer.wrap(data), false);
            assertThat(v.dirtyBytes.get()).isEqualTo(65536);

            v.destage();

            assertThat(v.dirtyBytes.get()).isZero();
            ByteBuffer back = ByteBuffer.allocate(65536);
            v.read(8192, back);
            assertThat(back.array()).isEqualTo(data);
            v.flush(); // still the durability point, after a destage too
        } finally {
            v.close();
        }
        assertThatThrownBy(v::destage).isInstanceOf(VolumeClosedException.class);
    }

    /**
     * Linux reports a failed write-back once per open file, and then marks the pages clean: the
     * next fdatasync succeeds though the writes it covered never reached the disk. The volume
     * remembers the failure, and every later FLUSH and FUA write fails too (the data node serves
     * all of a volume's connections from one file), instead of acknowledging as durable what may
     * be lost; a restart, which reads the volume back from the disk, ends it.
     */
    @Test
    void aFlushThatFailedFailsEveryLaterFlushAndFuaWriteThoughTheDiskAnswersAgain() throws Exception {
        VolumeStore v = VolumeStore.create(dir, "v1", "acme/v1", 1 << 20);
        try {
            v.write(0, ByteBuffer.wrap(NbdServerTest.bytes(65536, 7)), false);
            v.dataSync = c -> {
                throw new java.io.IOException("Input/output error");
            };
            assertThatThrownBy(v::flush).isInstanceOf(java.io.IOException.class).hasMessage("Input/output error");

            v.dataSync = c -> c.force(false); // the error was reported once: the disk "succeeds" again
            assertThatThrownBy(v::flush).as("another connection's FLUSH").isInstanceOf(java.io.IOException.class)
                    .hasMessageContaining("may be lost");
            assertThatThrownBy(() -> v.write(65536, ByteBuffer.wrap(NbdServerTest.bytes(4096, 8)), true))
                    .as("a FUA write").isInstanceOf(java.io.IOException.class).hasMessageContaining("may be lost");
        } finally {
            v.close();
        }
    }

    /**
     * The checksum map's force failing is a failure to write the volume as the data's is: the JDK
     * reports a failed msync unchecked, and the volume did not remember it, so the next FLUSH
     * succeeded though the checksums of acknowledged writes may be lost.
     */
    @Test
    void aFailureToForceTheChecksumsFailsEveryLaterFlushToo() throws Exception {
        VolumeStore v = VolumeStore.create(dir, "v1", "acme/v1", 1 << 20);
        try {
            v.write(0, ByteBuffer.wrap(NbdServerTest.bytes(65536, 7)), false);
            v.checksumSync = sums -> {
                throw new java.io.UncheckedIOException(new java.io.IOException("Input/output error"));
            };
            assertThatThrownBy(v::flush).hasMessageContaining("Input/output error");

            v.checksumSync = ChecksumFile::force;
            assertThatThrownBy(v::flush).isInstanceOf(java.io.IOException.class).hasMessageContaining("may be lost");
        } finally {
            v.close();
        }
    }
}
