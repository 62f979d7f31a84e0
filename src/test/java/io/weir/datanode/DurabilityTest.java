package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.datanode.NbdTestClient.Reply;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Data written and flushed (or written with FUA) survives a kill -9 of the data node process and a restart. */
class DurabilityTest {

    @TempDir
    Path dir;

    @Test
    void flushedDataSurvivesKillNineAndRestart() throws Exception {
        Path config = ForkedDataNode.writeConfig(dir.resolve("config.json"),
                config().tenant("acme").volume("acme", "db1", 64 * MiB).build());
        Path data = dir.resolve("data");
        byte[] a = NbdServerTest.bytes((int) MiB, 1);
        byte[] b = NbdServerTest.bytes(65536, 2);
        try (ForkedDataNode node = ForkedDataNode.start(config, data)) {
            try (NbdTestClient c = new NbdTestClient(node.address).open("acme/db1")) {
                c.write(3 * MiB, a);
                c.flush();
                Reply fua = c.call(Nbd.CMD_WRITE, Nbd.CMD_FLAG_FUA, 40 * MiB + 512, b.length, b);
                assertThat(fua.error()).isZero();
            }
            node.kill();
            assertThat(node.process.exitValue()).isEqualTo(137); // 128 + SIGKILL
        }
        try (ForkedDataNode node = ForkedDataNode.start(config, data);
                NbdTestClient c = new NbdTestClient(node.address).open("acme/db1")) {
            assertThat(c.read(3 * MiB, a.length)).isEqualTo(a);
            assertThat(c.read(40 * MiB + 512, b.length)).isEqualTo(b);
            assertThat(c.read(0, 4096)).isEqualTo(new byte[4096]);
        }
    }
}
