package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.weir.agent.QosAgent;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.scheduler.Stats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole loop under load: fio's nbd engine saturates two volumes of a data node whose
 * embedded agent is connected to the control plane; an administrator changes one volume's policy
 * through the REST API; the node has it in force within a second, and from then on the node's
 * split of the IOs follows it. (Measuring the split over the first second after the API's answer
 * instead would mix the old split into it for as long as the push takes, which is what the
 * in-force bound measures on its own.)
 *
 * <p>The tenant carries an IOPS limit that the two volumes together exceed, so the scheduler is
 * the point of contention whatever else runs on the machine, and the split is its alone.
 */
@Tag("e2e")
class PolicyChangeOverRestE2ETest extends IntegrationTest {

    @TempDir
    Path dir;

    private DataNode node;
    private QosAgent agent;

    @AfterEach
    void stop() {
        if (agent != null) {
            agent.close();
        }
        if (node != null) {
            node.close();
        }
    }

    @Test
    void aPolicyChangedThroughTheApiWhileFioRunsChangesTheRatioWithinASecond() throws Exception {
        String tenantName = unique("live");
        String tenant = id(api.post("/api/v1/tenants", "{\"name\":\"" + tenantName + "\",\"maxIops\":4000}"));
        String pa = id(api.post("/api/v1/policies", "{\"name\":\"" + unique("pa") + "\",\"weight\":100}"));
        String pb = id(api.post("/api/v1/policies", "{\"name\":\"" + unique("pb") + "\",\"weight\":100}"));
        HttpApi.Response created = api.post("/api/v1/nodes", "{\"name\":\"" + unique("dn") + "\"}");
        String nodeId = id(created);
        String token = created.json().get("token").asString();
        String a = id(api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"a\",\"sizeBytes\":" + 256 * MiB
                + ",\"policyId\":\"" + pa + "\",\"nodeIds\":[\"" + nodeId + "\"]}"));
        String b = id(api.post("/api/v1/tenants/" + tenant + "/volumes", "{\"name\":\"b\",\"sizeBytes\":" + 256 * MiB
                + ",\"policyId\":\"" + pb + "\",\"nodeIds\":[\"" + nodeId + "\"]}"));

        node = DataNode.builder().dataDir(dir.resolve("data")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .scrubPeriod(Duration.ofHours(1)).build();
        // the data node command's own wiring: exports follow each snapshot, or it is refused
        agent = DataNodeCommand.agent(node, QosAgent.builder().controlPlane(URI.create("http://127.0.0.1:" + port))
                .token(token).stateDir(dir.resolve("agent-state")), System.err);
        agent.start();
        await().atMost(PATIENCE).until(() -> node.exports().size() == 2);

        String base = "nbd://127.0.0.1:" + node.listenAddress().getPort() + "/" + tenantName + "/";
        CompletableFuture<String> fio = CompletableFuture.supplyAsync(() -> {
            try {
                return Programs.ok(120, "fio", "--ioengine=nbd", "--iodepth=32", "--time_based", "--runtime=10",
                        "--size=256m", "--rw=randread", "--bs=4k", "--name=a", "--uri=" + base + "a", "--name=b",
                        "--uri=" + base + "b");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        await().atMost(PATIENCE).until(() -> ops(a) > 2000 && ops(b) > 2000);
        double even = ratioOver(a, b, Duration.ofSeconds(1));

        long revision = agent.state().appliedRevision();
        HttpApi.Response changed = api.patch("/api/v1/policies/" + pa, "{\"weight\":300}", null);
        long answered = System.nanoTime();
        assertThat(changed.status()).as(changed.toString()).isEqualTo(200);
        // The executor is reconfigured before the agent records the revision as applied.
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> agent.state().appliedRevision() > revision);
        Duration inForce = Duration.ofNanos(System.nanoTime() - answered);
        double after = ratioOver(a, b, Duration.ofSeconds(1)); // the first second with the change in force
        fio.join();

        assertThat(even).as("ratio a:b before the change").isCloseTo(1.0, within(0.15));
        assertThat(inForce).as("from the API's answer to the change in force on the node")
                .isLessThan(Duration.ofSeconds(1));
        assertThat(after).as("ratio a:b in the second after the change took effect").isCloseTo(3.0, within(0.45));
    }

    private long ops(String volumeId) {
        Stats s = node.executor().snapshot().volumes().get(volumeId);
        return s == null ? 0 : s.readOps();
    }

    private double ratioOver(String a, String b, Duration d) {
        Map<String, Stats> v0 = node.executor().snapshot().volumes();
        long until = System.nanoTime() + d.toNanos();
        while (System.nanoTime() < until) {
            LockSupport.parkNanos(until - System.nanoTime()); // the measurement window, not a wait for an event
        }
        Map<String, Stats> v1 = node.executor().snapshot().volumes();
        return (double) (v1.get(a).readOps() - v0.get(a).readOps()) / (v1.get(b).readOps() - v0.get(b).readOps());
    }

    private static String id(HttpApi.Response r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }
}
