package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.push.ReplicationFixture.Node;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.support.Patience;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * The scheduled failover scan, with a lease of 1 s and a check every 100 ms: a replicated
 * volume whose primary's agent disconnects gets its in-sync, connected copy as primary without
 * anyone asking.
 *
 * <p>Its context is closed after the class: cached, its scan of every second would go on beside
 * the test classes that come after it, and promote the volumes of {@link ReplicationFailoverTest}
 * (which share the database) while that test holds its own scan back to decide each step.
 */
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
@TestPropertySource(properties = {"weir.replication.lease=1s", "weir.replication.check-interval=100ms",
        "weir.replication.reconnect-grace=0s"})
class ReplicationFailoverScheduleTest extends IntegrationTest {

    private ReplicationFixture fx;

    @BeforeEach
    void fixture() {
        fx = new ReplicationFixture(api, port, s -> unique(s));
    }

    @Test
    void theScheduledScanPromotesTheInSyncCopyOfAVolumeWhosePrimaryDisconnected() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            fx.disconnect(agentA, a);

            await().atMost(Patience.PATIENCE)
                    .until(() -> fx.volumeJson(volume).get("primaryNodeId").asString().equals(b.id().toString()));
            JsonNode promoted = fx.volumeJson(volume);
            assertThat(promoted.get("epoch").asLong()).isEqualTo(2);
            assertThat(fx.copy(volume, a).get("state").asString()).isEqualTo("outOfSync");
            assertThat(ReplicationFixture.nextReplication(agentB, volume, r -> r.epoch() == 2).primaryNodeId())
                    .isEqualTo(b.id());
        }
    }
}
