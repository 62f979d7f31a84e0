package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.support.HttpApi;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import tools.jackson.databind.JsonNode;

/**
 * The replication kill tests' cluster: a 2-copy volume ({@value #SIZE} bytes, weight 100, its
 * own tenant) on two data nodes, each its own JVM ({@link ForkedDataNode}) whose agent connects
 * to a control plane, node certificates from its PKI, so the copies speak mutual TLS (NBD in
 * clear). The test kills and restarts nodes through it and reads the volume through the API; a
 * failed wait shows the volume and every node's output.
 */
final class ReplicatedPair implements AutoCloseable {

    static final long SIZE = 80 * MiB;
    /** fio writes the first {@value FioVerifiedRun#SIZE}; probes write beyond it. */
    static final long PROBE_OFFSET = 72 * MiB;
    /** How long a wait for the cluster may take before the test fails, explained. */
    static final Duration LONG = Duration.ofSeconds(90);

    private final HttpApi api;
    private final String controlPlane;
    private final Path dir;
    private final Map<String, ForkedDataNode> nodes = new HashMap<>();
    /** Nodes killed, with the node they ran for: their output explains a failure. */
    private final List<Map.Entry<String, ForkedDataNode>> killed = new ArrayList<>();
    private final Map<String, String> tokens = new HashMap<>();
    /** The volume's IOPS cap: about 4,000 writes a second and as many verify reads. */
    static final int MAX_IOPS = 8000;
    /** The two nodes, the first placed as the primary. */
    final List<String> nodeIds = new ArrayList<>();
    final String volumeId;
    final String exportName;

    private ReplicatedPair(HttpApi api, String controlPlane, Path dir, String tenantName) throws IOException {
        this.api = api;
        this.controlPlane = controlPlane;
        this.dir = dir;
        String tenant = id(api.post("/api/v1/tenants", "{\"name\":\"" + tenantName + "\"}"));
        // the volume's own cap paces the kill tests' fio runs (writes and their verify reads), so a
        // kill lands mid-run: fio's --rate_iops would quiesce, and fio 3.33 spins for ever in that
        // wait once its connection is dead (its nbd engine never retires the aborted commands)
        String policy = id(api.post("/api/v1/policies", "{\"name\":\"" + tenantName + "-p\",\"weight\":100,\"maxIops\":"
                + MAX_IOPS + "}"));
        for (int i = 1; i <= 2; i++) {
            HttpApi.Response created = api.post("/api/v1/nodes", "{\"name\":\"" + tenantName + "-dn" + i + "\"}");
            nodeIds.add(id(created));
            tokens.put(nodeIds.get(i - 1), created.json().get("token").asString());
        }
        HttpApi.Response volume = api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"db\",\"sizeBytes\":" + SIZE
                + ",\"policyId\":\"" + policy + "\",\"replicas\":2,\"nodeIds\":[\"" + nodeIds.get(0) + "\",\""
                + nodeIds.get(1) + "\"]}");
        volumeId = id(volume);
        exportName = tenantName + "/db";
        assertThat(volume.json().get("primaryNodeId").asString()).isEqualTo(nodeIds.get(0));
    }

    /**
     * Creates the volume through {@code api} (of the control plane at {@code controlPlane}) under a
     * new tenant {@code tenantName}, starts both nodes with their state in {@code dir}, and waits
     * until the primary accepts a write and both copies are in sync.
     */
    static ReplicatedPair start(HttpApi api, String controlPlane, Path dir, String tenantName) throws Exception {
        ReplicatedPair pair = new ReplicatedPair(api, controlPlane, dir, tenantName);
        for (String node : pair.nodeIds) {
            pair.start(node);
        }
        pair.awaitProbeAccepted(System.nanoTime());
        // the first write may find the copy's address not yet known to the primary (the copy had not
        // reported it): the copy then leaves the in-sync set and catches up at once
        pair.awaitAllInSync();
        return pair;
    }

    /** SIGKILLs {@code node}'s process. */
    void kill(String node) throws InterruptedException {
        ForkedDataNode n = nodes.remove(node);
        n.kill();
        assertThat(n.process.isAlive()).as("node %s after SIGKILL", node).isFalse();
        killed.add(Map.entry(node, n));
    }

    /** Starts {@code node} on the data and agent state it kept. */
    void start(String node) throws IOException {
        nodes.put(node, ForkedDataNode.connected(controlPlane, tokens.get(node), dir.resolve("node-" + node), "--tls", "off"));
    }

    /** The other node of the pair. */
    String other(String node) {
        return nodeIds.get(0).equals(node) ? nodeIds.get(1) : nodeIds.get(0);
    }

    /** The NBD address ({@code host:port}) of {@code node}'s running process. */
    String nbdAddress(String node) {
        ForkedDataNode n = nodes.get(node);
        return n.address.getHostString() + ":" + n.address.getPort();
    }

    /** The volume as {@code GET /volumes/{id}} shows it. */
    JsonNode volume() {
        HttpApi.Response r = api.get("/api/v1/volumes/" + volumeId);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    /** The URI of the export at the primary the API names. */
    String primaryUri() {
        return uri(volume().get("primaryAddress").asString());
    }

    /** The URI of the export at {@code address} ({@code host:port}). */
    String uri(String address) {
        return "nbd://" + address + "/" + exportName;
    }

    /** The state the API shows for {@code node}'s copy, "none" if it has none. */
    String copyState(String node) {
        for (JsonNode c : volume().get("copies")) {
            if (c.get("nodeId").asString().equals(node)) {
                return c.get("state").asString();
            }
        }
        return "none";
    }

    /** Awaits {@code condition} for {@code within}; on timeout fails with the volume and the nodes' output. */
    void awaitOrExplain(String what, Duration within, Callable<Boolean> condition) {
        try {
            await().atMost(within).until(condition);
        } catch (ConditionTimeoutException e) {
            throw explained(what + " within " + within, e);
        }
    }

    /** A failure that shows the volume as the API shows it and every node's output. */
    AssertionError explained(String expected, Throwable cause) {
        String volume;
        try {
            volume = volume().toString();
        } catch (RuntimeException | AssertionError e) {
            volume = "(the API did not answer: " + e + ")";
        }
        StringBuilder b = new StringBuilder("expected " + expected + "; the volume: " + volume);
        nodes.forEach((id, n) -> b.append("\n--- node ").append(id).append(":\n").append(n.output));
        killed.forEach(k -> b.append("\n--- node ").append(k.getKey()).append(", killed:\n").append(k.getValue().output));
        return new AssertionError(b.toString(), cause);
    }

    /** Awaits every copy in sync and the volume served. */
    void awaitAllInSync() {
        awaitOrExplain("every copy in sync", LONG, () -> {
            JsonNode v = volume();
            for (JsonNode c : v.get("copies")) {
                if (!c.get("state").asString().equals("inSync")) {
                    return false;
                }
            }
            return !v.get("degraded").asBoolean() && v.hasNonNull("primaryAddress");
        });
    }

    /** Awaits a promotion away from {@code primary}, above {@code epoch}. */
    void awaitPromotion(String what, String primary, long epoch, Duration within) {
        awaitOrExplain(what, within, () -> {
            JsonNode now = volume();
            return now.get("epoch").asLong() > epoch && !now.get("primaryNodeId").asString().equals(primary)
                    && now.hasNonNull("primaryAddress");
        });
    }

    /** Writes one block past fio's range through the primary the API names, until it is accepted; the ms since {@code from}. */
    long awaitProbeAccepted(long from) {
        await().atMost(LONG).pollInterval(Duration.ofMillis(20))
                .until(() -> NbdTestClient.writeAccepted(volume().get("primaryAddress").asString(), exportName, PROBE_OFFSET));
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - from);
    }

    @Override
    public void close() throws InterruptedException {
        for (ForkedDataNode n : nodes.values()) {
            n.close();
        }
    }

    private static String id(HttpApi.Response r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }
}
