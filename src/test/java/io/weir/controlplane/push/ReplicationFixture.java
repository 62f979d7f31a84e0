package io.weir.controlplane.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.support.HttpApi;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.ReplicationConfig;
import io.weir.protocol.VolumeConfig;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;

/**
 * Nodes with real agents and replicated volumes on them, for the tests of replication's status
 * intake and failover. Nodes, tenants and volumes are created through the API.
 */
final class ReplicationFixture {

    /** A node created through the API, with its token. */
    record Node(UUID id, String token) {
    }

    private final HttpApi api;
    private final int port;
    private final java.util.function.Function<String, String> unique;

    ReplicationFixture(HttpApi api, int port, java.util.function.Function<String, String> unique) {
        this.api = api;
        this.port = port;
        this.unique = unique;
    }

    Node node() {
        HttpApi.Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique.apply("repl") + "\"}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return new Node(UUID.fromString(r.json().get("id").asString()), r.json().get("token").asString());
    }

    /** Creates a volume of a new tenant with a copy on each of {@code nodes}, the first its primary; answers its id. */
    UUID volume(Node... nodes) {
        String tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique.apply("t") + "\"}").json().get("id").asString();
        String ids = Stream.of(nodes).map(n -> "\"" + n.id() + "\"").collect(Collectors.joining(","));
        HttpApi.Response r = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"" + unique.apply("v")
                + "\",\"sizeBytes\":1048576,\"nodeIds\":[" + ids + "]}");
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return UUID.fromString(r.json().get("id").asString());
    }

    JsonNode volumeJson(UUID volume) {
        return api.get("/api/v1/volumes/" + volume).json();
    }

    /** The copy of {@code node} in the volume's REST answer. */
    JsonNode copy(UUID volume, Node node) {
        return volumeJson(volume).get("copies").valueStream()
                .filter(c -> c.get("nodeId").asString().equals(node.id().toString())).findFirst().orElseThrow();
    }

    boolean connected(Node node) {
        return api.get("/api/v1/nodes/" + node.id()).json().get("status").get("connected").asBoolean();
    }

    /** Connects {@code node}'s agent, says hello as having applied nothing, takes and acks its first config. */
    AgentClient agent(Node node) {
        AgentClient agent = AgentClient.open(port, node.token());
        agent.send(new AgentMessage.Hello(node.id(), 0, "test"));
        AgentMessage.ConfigPush first = agent.nextConfig();
        agent.send(new AgentMessage.Ack(first.config().revision()));
        await().atMost(AgentClient.WAIT).until(() -> connected(node));
        return agent;
    }

    /** Closes {@code node}'s agent and waits until the control plane knows it is gone. */
    void disconnect(AgentClient agent, Node node) {
        agent.close();
        await().atMost(AgentClient.WAIT).until(() -> !connected(node));
    }

    /**
     * Takes (and acks) the configs pushed to {@code agent} until one's replication of {@code volume}
     * matches; fails when none does within the agent's patience per frame.
     */
    static ReplicationConfig nextReplication(AgentClient agent, UUID volume, Predicate<ReplicationConfig> wanted) {
        while (true) {
            DesiredConfig config = agent.nextConfig().config();
            agent.send(new AgentMessage.Ack(config.revision()));
            ReplicationConfig replication = replicationOf(config, volume);
            if (replication != null && wanted.test(replication)) {
                return replication;
            }
        }
    }

    static ReplicationConfig replicationOf(DesiredConfig config, UUID volume) {
        return config.volumes().stream().filter(v -> v.id().equals(volume)).findFirst().map(VolumeConfig::replication)
                .orElse(null);
    }

    /** A status of a primary, with no exports, reporting {@code replication}. */
    static AgentMessage.NodeStatus status(String replicationAddress, AgentMessage.ReplicationStatus... replication) {
        return new AgentMessage.NodeStatus("127.0.0.1:10809", List.of(), replicationAddress, List.of(replication));
    }

    static AgentMessage.ReplicationStatus report(UUID volume, long epoch, long syncSequence, AgentMessage.CopyStatus... copies) {
        return new AgentMessage.ReplicationStatus(volume, epoch, syncSequence, List.of(copies));
    }

    static AgentMessage.CopyStatus copy(Node node, AgentMessage.CopyState state, long remaining) {
        return new AgentMessage.CopyStatus(node.id(), state, remaining);
    }
}
