package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.agent.ConfigTranslator;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.IoCost;
import io.weir.scheduler.CostModel;
import io.weir.scheduler.IoKind;
import io.weir.scheduler.SchedulerConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Configurations applied to a data node, seen by real NBD clients: a config that cannot be applied
 * changes nothing, and files of volumes that no applied config names are set aside, never lost.
 */
class DataNodeConfigTest {

    @TempDir
    Path dir;
    DataNode node;

    DataNode start() throws IOException {
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
        return node;
    }

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    NbdTestClient client() throws IOException {
        return new NbdTestClient(node.listenAddress());
    }

    Path file(String volume) {
        return dir.resolve(TestConfigs.volumeId("acme", volume) + ".img");
    }

    boolean enforces(String volume) {
        String id = TestConfigs.volumeId("acme", volume).toString();
        return node.executor().config().volumes().stream().map(SchedulerConfig.VolumeSpec::id).anyMatch(id::equals);
    }

    /**
     * A node that applies a config itself ({@code --config-file}, {@link DataNode#apply}) charges
     * a request what an agent's node does: the config's fixed cost of a request plus its bytes.
     */
    @Test
    void aConfigAppliedByTheNodeChargesEachRequestTheConfigsFixedCost() throws IOException {
        DesiredConfig b = config().tenant("acme").volume("acme", "db1", 16 * MiB).build();
        DesiredConfig c = new DesiredConfig(b.nodeId(), b.revision(), b.tasks(), b.tenants(), b.volumes(),
                b.usageReportIntervalSeconds(), b.tls(), new IoCost(10_000, 50_000));
        start().apply(c);
        CostModel m = node.executor().config().volumes().stream()
                .filter(v -> v.id().equals(TestConfigs.volumeId("acme", "db1").toString())).findFirst().orElseThrow()
                .costModel();
        assertThat(m.cost(IoKind.READ, 4096)).isEqualTo(10_000 + 4096);
        assertThat(m.cost(IoKind.WRITE, 65536)).isEqualTo(50_000 + 65536);
        assertThat(ConfigTranslator.translate(c).volumes().get(0).costModel().cost(IoKind.WRITE, 65536))
                .as("as the agent's translation").isEqualTo(m.cost(IoKind.WRITE, 65536));
    }

    /**
     * Two volumes of one id (a config file's copied entry) would be two stores over one file, each
     * with its own locks: the config is refused, as two volumes of one name are.
     */
    @Test
    void aConfigWithTwoVolumesOfOneIdIsRefused() throws IOException {
        java.util.UUID id = TestConfigs.volumeId("acme", "db1");
        assertThatThrownBy(() -> start().apply(config().tenant("acme").volume(id, "acme", "db1", 16 * MiB, 100, null, null)
                .volume(id, "acme", "db2", 16 * MiB, 100, null, null).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(id.toString());
        assertThat(node.exports()).isEmpty();
    }

    @Test
    void aConfigThatFailsHalfWayChangesNothingClientsOrTheSchedulerCanSee() throws IOException {
        start().apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).revision(1).build());
        Files.createDirectories(file("blocked")); // the third volume's file cannot be created
        assertThatThrownBy(() -> node.apply(config().tenant("acme").volume("acme", "db1", 32 * MiB)
                .volume("acme", "db0", 16 * MiB).volume("acme", "blocked", 16 * MiB).revision(2).build()))
                .isInstanceOf(IOException.class);

        assertThat(node.revision()).isEqualTo(1);
        assertThat(node.exports()).extracting(DataNode.ExportStatus::name, DataNode.ExportStatus::sizeBytes)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("acme/db1", 16 * MiB));
        try (NbdTestClient c = client().open("acme/db1")) {
            assertThat(c.exportSize).as("a new connection sees the size of revision 1").isEqualTo(16 * MiB);
        }
        assertThat(enforces("db0")).as("the scheduler is back on revision 1").isFalse();
        assertThat(file("db0")).as("the file made for the failed config is gone").doesNotExist();
    }

    @Test
    void filesOfVolumesNoAppliedConfigNamesAreSetAsideAfterTheFirstConfigAndComeBackWithTheirVolume() throws IOException {
        start().apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).build());
        for (String v : new String[] {"db1", "db2"}) {
            try (NbdTestClient c = client().open("acme/" + v)) {
                c.write(0, bytes(4096, v.hashCode()));
                c.flush();
            }
        }
        node.close();
        Path notes = Files.writeString(dir.resolve("notes.txt"), "not a volume");

        // db2 left the config while the node was down
        start();
        assertThat(file("db2")).as("no config yet: nothing is swept").exists();
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).revision(2).build());
        assertThat(file("db2")).as("swept after the first config").doesNotExist();
        assertThat(dir.resolve(DataNode.QUARANTINE_DIR).resolve(file("db2").getFileName())).exists();
        assertThat(file("db1")).exists();
        assertThat(notes).exists();

        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 16 * MiB).revision(3).build());
        try (NbdTestClient c = client().open("acme/db2")) {
            assertThat(c.read(0, 4096)).as("the set-aside file is taken back with its data").isEqualTo(bytes(4096, "db2".hashCode()));
        }
    }
}
