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
}
