package io.weir.datanode;

import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.datanode.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NBD server under failure and abuse, with real clients on 127.0.0.1: one connection's
 * failure on the selector thread stays that connection's.
 */
class NbdServerRobustnessTest {

    static final long MiB = 1 << 20;
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
}
