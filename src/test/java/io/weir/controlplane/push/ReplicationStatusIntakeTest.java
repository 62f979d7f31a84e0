package io.weir.controlplane.push;

import static io.weir.controlplane.push.ReplicationFixture.copy;
import static io.weir.controlplane.push.ReplicationFixture.nextReplication;
import static io.weir.controlplane.push.ReplicationFixture.report;
import static io.weir.controlplane.push.ReplicationFixture.status;
import static io.weir.protocol.AgentMessage.CopyState.inSync;
import static io.weir.protocol.AgentMessage.CopyState.outOfSync;
import static io.weir.protocol.AgentMessage.CopyState.resyncing;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.push.ReplicationFixture.Node;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.ReplicationConfig;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * What the control plane takes from the replication part of a data node's status, over the real
 * agent channel: the node's replication address, and the copy states its primary reports, by the
 * rules of {@code ReplicationConfig} (only the current primary at the current epoch; a higher sync
 * sequence changes the in-sync set and is echoed in the next desired config).
 *
 * <p>A report that is ignored leaves no trace to wait for, so each such test sends, on the same
 * connection after it, a status whose effect it can await: an agent's frames are handled one at
 * a time in order, so once that effect shows, the ignored report was handled too.
 */
class ReplicationStatusIntakeTest extends IntegrationTest {

    private ReplicationFixture fx;

    @BeforeEach
    void fixture() {
        fx = new ReplicationFixture(api, port, s -> unique(s));
    }

    @Test
    void aChangedReplicationAddressIsStoredAndSentToTheNodesOfTheOtherCopies() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            agentA.send(status("127.0.0.1:7001"));

            ReplicationConfig onB = nextReplication(agentB, volume, r -> r.copy(a.id()).address() != null);
            assertThat(onB.copy(a.id()).address()).isEqualTo("127.0.0.1:7001");
            assertThat(onB.copy(b.id()).address()).as("b never reported one").isNull();
            ReplicationConfig onA = nextReplication(agentA, volume, r -> r.copy(a.id()).address() != null);
            assertThat(onA).isEqualTo(onB);
        }
    }

    /**
     * A volume's {@code primaryAddress} is where clients reach its primary: the address its node
     * was registered with, when it has one (Compose and Helm register each node with the address
     * clients use), and only otherwise the listen address the node reports, which is
     * {@code 0.0.0.0:10809} for a node listening on every interface, as in a container.
     */
    @Test
    void aVolumesPrimaryAddressIsItsNodesRegisteredAddressBeforeTheListenAddressItReports() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        String etag = api.get("/api/v1/nodes/" + a.id()).header("ETag");
        assertThat(api.patch("/api/v1/nodes/" + a.id(), "{\"address\":\"nbd-1.example:10809\"}", etag).status())
                .isEqualTo(200);
        try (AgentClient agentA = fx.agent(a)) {
            agentA.send(new AgentMessage.NodeStatus("0.0.0.0:10809", List.of(), null, List.of()));
            await().atMost(AgentClient.WAIT).untilAsserted(() ->
                    assertThat(api.get("/api/v1/nodes/" + a.id()).json().path("status").path("dataNode")
                            .path("listenAddress").asString("")).isEqualTo("0.0.0.0:10809"));
            assertThat(fx.volumeJson(volume).get("primaryAddress").asString()).isEqualTo("nbd-1.example:10809");
        }
    }

    @Test
    void theCurrentPrimarysReportIsStoredAndAHigherSyncSequenceIsEchoedInTheNextConfig() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            agentA.send(status(null, report(volume, 1, 1, copy(b, outOfSync, 4096))));

            ReplicationConfig dropped = nextReplication(agentA, volume, r -> r.syncSequence() == 1);
            assertThat(dropped.copy(b.id()).inSync()).isFalse();
            assertThat(dropped.copy(a.id()).inSync()).as("the primary's own copy").isTrue();
            assertThat(nextReplication(agentB, volume, r -> r.syncSequence() == 1)).isEqualTo(dropped);
            JsonNode copyB = fx.copy(volume, b);
            assertThat(copyB.get("state").asString()).isEqualTo("outOfSync");
            assertThat(copyB.get("inSync").asBoolean()).isFalse();
            assertThat(copyB.get("resyncRemainingBytes").asLong()).isEqualTo(4096);
            JsonNode read = fx.volumeJson(volume);
            assertThat(read.get("degraded").asBoolean()).isTrue();
            assertThat(read.get("primaryAddress").asString()).as("the primary's last status").isEqualTo("127.0.0.1:10809");

            // The same sequence: the state follows, the in-sync set does not.
            agentA.send(status(null, report(volume, 1, 1, copy(b, resyncing, 1024))));
            await().atMost(AgentClient.WAIT).until(() -> fx.copy(volume, b).get("state").asString().equals("resyncing"));
            assertThat(fx.copy(volume, b).get("resyncRemainingBytes").asLong()).isEqualTo(1024);
            assertThat(fx.copy(volume, b).get("inSync").asBoolean()).isFalse();

            agentA.send(status(null, report(volume, 1, 2, copy(b, inSync, 0))));
            ReplicationConfig joined = nextReplication(agentA, volume, r -> r.syncSequence() == 2);
            assertThat(joined.copy(b.id()).inSync()).isTrue();
            assertThat(fx.volumeJson(volume).get("degraded").asBoolean()).isFalse();
            assertThat(fx.copy(volume, b).get("state").asString()).isEqualTo("inSync");
        }
    }

    @Test
    void reportsOfACopyThatIsNotThePrimaryOfAnotherEpochOrOfAnUnknownVolumeChangeNothing() {
        Node a = fx.node();
        Node b = fx.node();
        UUID volume = fx.volume(a, b);
        try (AgentClient agentA = fx.agent(a); AgentClient agentB = fx.agent(b)) {
            // b holds a copy but is not the primary
            agentB.send(status(null, report(volume, 1, 5, copy(a, outOfSync, 1))));
            agentB.send(status("127.0.0.1:7002"));
            ReplicationConfig afterB = nextReplication(agentA, volume, r -> "127.0.0.1:7002".equals(r.copy(b.id()).address()));
            assertThat(afterB.syncSequence()).isZero();
            assertThat(afterB.copies()).allMatch(ReplicationConfig.Copy::inSync);

            // a is the primary, but at epoch 1, not 2; and no volume has this id
            agentA.send(status(null, report(volume, 2, 7, copy(b, outOfSync, 1)), report(UUID.randomUUID(), 1, 3)));
            agentA.send(status(null, report(volume, 1, 1, copy(b, resyncing, 10))));
            ReplicationConfig taken = nextReplication(agentA, volume, r -> r.syncSequence() > 0);
            assertThat(taken.syncSequence()).as("the epoch-2 report's 7 was never taken").isEqualTo(1);
            assertThat(taken.copy(b.id()).inSync()).isFalse();
            JsonNode copyB = fx.copy(volume, b);
            assertThat(copyB.get("state").asString()).isEqualTo("resyncing");
            assertThat(copyB.get("resyncRemainingBytes").asLong()).isEqualTo(10);
            assertThat(fx.copy(volume, a).get("state").asString()).as("b's report on a was not taken").isEqualTo("inSync");
        }
    }
}
