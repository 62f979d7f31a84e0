package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pending trims ({@link VolumeStore#trim}): whole blocks only, merged, cut back by later writes, and
 * their byte count (the gc task's signal) exact through all of it.
 */
class VolumeTrimTest {

    static final long BLOCK = VolumeStore.BLOCK;

    @TempDir
    Path dir;

    @Test
    void trimsAreRoundedInwardToWholeBlocksSoByteTrimsLeaveNothingToReclaim() throws Exception {
        VolumeStore v = VolumeStore.create(dir, "v1", "acme/v1", 1 << 20);
        try {
            v.trim(1, 100); // inside one block: gc could only zero part of it, and trim is advisory
            for (int i = 0; i < 1000; i++) {
                v.trim(i * BLOCK + 7, 1);
            }
            assertThat(v.pendingTrimBytes()).isZero();
            v.trim(100, 3 * BLOCK); // [100, 3 BLOCK + 100): the whole blocks 1 and 2
            assertThat(v.pendingTrimBytes()).isEqualTo(2 * BLOCK);
        } finally {
            v.close();
        }
    }

    @Test
    void theCountOfPendingBytesFollowsMergesAndWrites() throws Exception {
        VolumeStore v = VolumeStore.create(dir, "v1", "acme/v1", 16 << 20);
        try {
            v.trim(BLOCK, 3 * BLOCK);
            v.trim(2 * BLOCK, 4 * BLOCK); // overlaps: [1, 6) blocks
            assertThat(v.pendingTrimBytes()).isEqualTo(5 * BLOCK);
            for (int i = 0; i < 1000; i++) {
                v.trim((100 + 2L * i) * BLOCK, BLOCK); // every other block: 1,000 ranges
            }
            assertThat(v.pendingTrimBytes()).isEqualTo(1005 * BLOCK);
            v.write(3 * BLOCK, ByteBuffer.wrap(new byte[(int) BLOCK]), false); // splits [1, 6)
            v.write(100 * BLOCK, ByteBuffer.wrap(new byte[(int) (4 * BLOCK)]), false); // covers two ranges
            assertThat(v.pendingTrimBytes()).isEqualTo(1002 * BLOCK);
            while (v.gcStep() > 0) {
                // reclaims range after range
            }
            assertThat(v.pendingTrimBytes()).isZero();
        } finally {
            v.close();
        }
    }
}
