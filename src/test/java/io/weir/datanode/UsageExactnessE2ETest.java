package io.weir.datanode;

import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.agent.AgentListener;
import io.weir.agent.QosAgent;
import io.weir.agent.support.AgentFixture;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.UsageReport;
import io.weir.scheduler.Stats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The exactness check of usage, end to end: fio's nbd engine runs a fixed number of IOs against
 * a volume of a real data node, whose embedded agent reports usage over a real WebSocket to the
 * control plane over real PostgreSQL; the ops the usage API reports for the volume over the run
 * equal fio's own {@code total_ios} (reads plus writes), exactly, on a volume of one copy and on
 * a replicated one.
 */
@Tag("e2e")
class UsageExactnessE2ETest extends IntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    private AgentFixture fixture;
    private DataNode node;
    private QosAgent agent;
    private ReplicatedPair pair;

    @AfterEach
    void stop() throws InterruptedException {
        if (pair != null) {
            pair.close();
        }
        if (agent != null) {
            agent.close();
        }
        if (node != null) {
            node.close();
        }
        if (fixture != null) {
            fixture.close();
        }
    }

    @Test
    void fiosTotalIosEqualTheOpsTheUsageApiReportsForTheVolumeOverTheRun() throws Exception {
        fixture = new AgentFixture(api);
        AgentFixture.Node placed = fixture.node("exact", 1_000_000);
        String tenantName = api.get("/api/v1/tenants/" + placed.tenantId()).json().get("name").asString();
        String volumeName = unique("fio");
        HttpApi.Response created = api.post("/api/v1/tenants/" + placed.tenantId() + "/volumes", "{\"name\":\"" + volumeName
                + "\",\"sizeBytes\":" + (32 << 20) + ",\"nodeIds\":[\"" + placed.nodeId() + "\"]}");
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        String volumeId = created.json().get("id").asString();
        HttpApi.Response interval = api.put("/api/v1/nodes/" + placed.nodeId() + "/task-shares",
                "{\"tasks\":[{\"name\":\"foreground\",\"share\":700},{\"name\":\"scrub\",\"share\":50}],"
                        + "\"usageReportIntervalSeconds\":1}", null);
        assertThat(interval.status()).as(interval.toString()).isEqualTo(200);

        node = DataNode.builder().dataDir(dir.resolve("data")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).build();
        agent = QosAgent.builder().controlPlane(URI.create("http://127.0.0.1:" + port)).token(placed.token())
                .stateDir(dir.resolve("agent-state")).executor(node.executor()).check(node::validate)
                .listener(new AgentListener() {
                    @Override
                    public void applied(DesiredConfig config) {
                        try {
                            node.applyExports(config);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                }).build();
        agent.start();
        String export = tenantName + "/" + volumeName;
        await().atMost(PATIENCE).until(() -> node.exports().stream().anyMatch(e -> e.name().equals(export))
                && agent.appliedConfig().usageReportIntervalSeconds() == 1);

        Instant start = Instant.now();
        String out = Programs.ok(300, "fio", "--name=exact", "--ioengine=nbd",
                "--uri=nbd://127.0.0.1:" + node.listenAddress().getPort() + "/" + export, "--rw=randrw", "--bs=4k",
                "--size=8m", "--iodepth=8", "--output-format=json");
        JsonNode job = JSON.readTree(out.substring(out.indexOf('{'))).get("jobs").get(0);
        long fioIos = job.get("read").get("total_ios").asLong() + job.get("write").get("total_ios").asLong();
        assertThat(fioIos).as("8 MiB in 4 KiB IOs").isEqualTo(2048);

        // The scheduler counts a completion on its worker's next pass; then the last report is closed and acked.
        await().atMost(PATIENCE).until(() -> schedulerOps(volumeId) >= fioIos);
        UsageReport last = agent.reportUsageNow();
        await().atMost(PATIENCE).until(() -> agent.unacknowledgedUsage().stream().noneMatch(r -> r.sequence() <= last.sequence()));

        assertThat(usageApiOps(volumeId, start)).isEqualTo(fioIos);
    }

    /**
     * The same check on a 2-copy volume (two data nodes, each its own JVM with its agent, as
     * {@link ReplicatedPair} runs them): fio writes and reads through the primary, and the usage
     * API, which sums both nodes' reports, counts each of fio's IOs once; the copy's applying of
     * the writes is {@code replicaBytes}, exactly fio's bytes written. Before, each write counted
     * twice. The nodes report every second; the volume's baseline (the pair's start-up probes and
     * catch-up) is taken once the series has not changed for three of those reports.
     */
    @Test
    void aReplicatedVolumesUsageCountsEachOfFiosIosOnceAndTheCopysWorkApart() throws Exception {
        pair = ReplicatedPair.start(api, "http://127.0.0.1:" + port, dir, unique("exact-repl"));
        for (String node : pair.nodeIds) {
            HttpApi.Response shares = api.put("/api/v1/nodes/" + node + "/task-shares",
                    "{\"tasks\":[{\"name\":\"foreground\",\"share\":700},{\"name\":\"replication\",\"share\":100}],"
                            + "\"usageReportIntervalSeconds\":1}", null);
            assertThat(shares.status()).as(shares.toString()).isEqualTo(200);
        }
        for (String node : pair.nodeIds) { // both agents report every second from now on
            await().atMost(PATIENCE).until(() -> {
                JsonNode status = api.get("/api/v1/nodes/" + node).json().get("status");
                return status.get("appliedRevision").asLong() >= status.get("desiredRevision").asLong();
            });
        }
        Instant start = Instant.now();
        long[] baseline = new long[3];
        long[] changedAt = {System.nanoTime()};
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).until(() -> {
            long[] now = usageTotals(pair.volumeId, start);
            if (!java.util.Arrays.equals(now, baseline)) {
                System.arraycopy(now, 0, baseline, 0, 3);
                changedAt[0] = System.nanoTime();
            }
            return baseline[0] > 0 && System.nanoTime() - changedAt[0] > Duration.ofSeconds(3).toNanos();
        });

        String out = Programs.ok(300, "fio", "--name=exact", "--ioengine=nbd", "--uri=" + pair.primaryUri(),
                "--rw=randrw", "--bs=4k", "--size=8m", "--iodepth=8", "--output-format=json");
        JsonNode job = JSON.readTree(out.substring(out.indexOf('{'))).get("jobs").get(0);
        long fioIos = job.get("read").get("total_ios").asLong() + job.get("write").get("total_ios").asLong();
        long fioWritten = job.get("write").get("io_bytes").asLong();
        assertThat(fioIos).as("8 MiB in 4 KiB IOs").isEqualTo(2048);

        // every write is on the copy once fio has its answer; its report and the primary's follow within seconds
        long[] after = new long[3];
        await().atMost(PATIENCE).untilAsserted(() -> {
            System.arraycopy(usageTotals(pair.volumeId, start), 0, after, 0, 3);
            assertThat(after[2] - baseline[2]).as("bytes the copy applied for the primary, so far").isGreaterThanOrEqualTo(fioWritten);
            assertThat(after[0] - baseline[0]).as("client ops, so far").isGreaterThanOrEqualTo(fioIos);
        });
        assertThat(after[0] - baseline[0]).as("client ops over both nodes").isEqualTo(fioIos);
        assertThat(after[2] - baseline[2]).as("bytes the copy applied for the primary").isEqualTo(fioWritten);
        assertThat(after[1] - baseline[1]).as("requests the copy applied: fio's writes, and any FLUSH of the primary's")
                .isGreaterThanOrEqualTo(job.get("write").get("total_ios").asLong());
    }

    /**
     * Client ops (reads plus writes), replica ops and replica bytes of the volume, from a minute
     * before {@code start} to a minute after now, in 1-minute points.
     */
    private long[] usageTotals(String volumeId, Instant start) {
        Instant from = start.truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(1));
        Instant to = Instant.now().truncatedTo(ChronoUnit.MINUTES).plus(Duration.ofMinutes(2));
        HttpApi.Response r = api.get("/api/v1/usage/volumes/" + volumeId + "?from=" + from + "&to=" + to + "&step=60s");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        long[] totals = new long[3];
        for (JsonNode p : r.json().get("points")) {
            totals[0] += p.get("readOps").asLong() + p.get("writeOps").asLong();
            totals[1] += p.get("replicaOps").asLong();
            totals[2] += p.get("replicaBytes").asLong();
        }
        return totals;
    }

    private long schedulerOps(String volumeId) {
        Stats s = node.executor().snapshot(false).volumes().get(volumeId);
        return s == null ? 0 : s.readOps() + s.writeOps();
    }

    /** Reads plus writes of the volume from a minute before the run to a minute after now. */
    private long usageApiOps(String volumeId, Instant start) {
        return usageTotals(volumeId, start)[0];
    }
}
