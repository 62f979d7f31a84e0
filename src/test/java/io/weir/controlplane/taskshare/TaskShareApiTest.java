package io.weir.controlplane.taskshare;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.config.EffectiveTaskShares;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.protocol.IoCost;
import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TaskShareConfig.Curve;
import io.weir.protocol.TaskShareConfig.DynamicShare;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

class TaskShareApiTest extends IntegrationTest {

    @Autowired
    jakarta.persistence.EntityManagerFactory entityManagerFactory;

    @Autowired
    io.weir.controlplane.config.DesiredConfigService desiredConfigs;

    private static final String CLUSTER = "/api/v1/task-shares";

    /** A valid set that differs from the seeded default. */
    private static final String OVERRIDE = """
            {"tasks":[
              {"name":"foreground","share":900},
              {"name":"flush","share":100,"dynamic":{"t1":0.2,"t2":0.8,"low":10,"high":1000,"curve":"exponential"}},
              {"name":"gc","share":40}
            ]}""";

    @Autowired
    ConfigRevisions revisions;

    @Autowired
    EffectiveTaskShares effective;

    private String createNode() {
        Response r = api.post("/api/v1/nodes", "{\"name\":\"" + unique("ts-node") + "\"}");
        assertThat(r.status()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    private static String nodePath(String nodeId) {
        return "/api/v1/nodes/" + nodeId + "/task-shares";
    }

    /** The PUT body that restores what {@code response} shows. */
    private static String bodyOf(Response response) {
        ObjectNode body = tools.jackson.databind.json.JsonMapper.shared().createObjectNode();
        body.set("tasks", response.json().get("tasks"));
        return body.toString();
    }

    /** Runs {@code test}, then puts the cluster default back as it was (other tests share it). */
    private void restoringClusterDefault(Runnable test) {
        Response before = api.get(CLUSTER);
        try {
            test.run();
        } finally {
            assertThat(api.put(CLUSTER, bodyOf(before), null).status()).isEqualTo(200);
        }
    }

    @Test
    void clusterDefaultIsSeededWithForegroundAndADynamicFlush() {
        Response r = api.get(CLUSTER);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.etag()).isEqualTo("\"" + r.json().get("version").asLong() + "\"");
        JsonNode body = r.json();
        assertThat(body.get("source").asString()).isEqualTo("cluster-default");
        assertThat(body.get("nodeId").isNull()).isTrue();
        assertThat(body.get("tasks").findValuesAsString("name")).contains("foreground");
        assertThat(body.get("updatedAt").asString()).endsWith("Z");
    }

    @Test
    void replacingTheClusterDefaultKeepsOrderAndDynamicCurvesAndBumpsTheRevision() {
        restoringClusterDefault(() -> {
            Response before = api.get(CLUSTER);
            long revision = revisions.current();
            Response put = api.put(CLUSTER, OVERRIDE, before.etag());
            assertThat(put.status()).isEqualTo(200);
            assertThat(revisions.current()).isGreaterThan(revision);
            assertThat(put.json().get("version").asLong()).isGreaterThan(before.json().get("version").asLong());
            assertThat(put.etag()).isEqualTo("\"" + put.json().get("version").asLong() + "\"");

            JsonNode tasks = api.get(CLUSTER).json().get("tasks");
            assertThat(tasks.findValuesAsString("name")).containsExactly("foreground", "flush", "gc");
            assertThat(tasks.get(0).get("share").asInt()).isEqualTo(900);
            assertThat(tasks.get(0).get("dynamic").isNull()).isTrue();
            JsonNode dynamic = tasks.get(1).get("dynamic");
            assertThat(dynamic.get("t1").asDouble()).isEqualTo(0.2);
            assertThat(dynamic.get("t2").asDouble()).isEqualTo(0.8);
            assertThat(dynamic.get("low").asInt()).isEqualTo(10);
            assertThat(dynamic.get("high").asInt()).isEqualTo(1000);
            assertThat(dynamic.get("curve").asString()).isEqualTo("exponential");
        });
    }

    @Test
    void reorderingAndRenamingTasksIsStoredExactly() {
        restoringClusterDefault(() -> {
            assertThat(api.put(CLUSTER, OVERRIDE, null).status()).isEqualTo(200);
            String swapped = """
                    {"tasks":[{"name":"gc","share":40},{"name":"foreground","share":900},{"name":"scrub"}]}""";
            Response put = api.put(CLUSTER, swapped, null);
            assertThat(put.status()).isEqualTo(200);
            JsonNode tasks = api.get(CLUSTER).json().get("tasks");
            assertThat(tasks.findValuesAsString("name")).containsExactly("gc", "foreground", "scrub");
            assertThat(tasks.get(2).get("share").asInt()).as("share defaults to 100").isEqualTo(100);
        });
    }

    @Test
    void puttingTheSameTasksAgainChangesNothing() {
        Response before = api.get(CLUSTER);
        long revision = revisions.current();
        Response put = api.put(CLUSTER, bodyOf(before), before.etag());
        assertThat(put.status()).isEqualTo(200);
        assertThat(put.etag()).isEqualTo(before.etag());
        assertThat(revisions.current()).isEqualTo(revision);
    }

    @Test
    void staleIfMatchOnTheClusterDefaultAnswers412() {
        restoringClusterDefault(() -> {
            Response before = api.get(CLUSTER);
            assertThat(api.put(CLUSTER, OVERRIDE, before.etag()).status()).isEqualTo(200);
            Response stale = api.put(CLUSTER, bodyOf(before), before.etag());
            assertThat(stale.status()).isEqualTo(412);
            assertThat(stale.contentType()).startsWith("application/problem+json");
            assertThat(api.get(CLUSTER).json().get("tasks").findValuesAsString("name"))
                    .containsExactly("foreground", "flush", "gc");
        });
    }

    /**
     * The nodes' snapshots are read in a constant number of queries whatever the number of nodes
     * (DesiredConfigService), task-share overrides included: each override's tasks were a query of
     * their own. Counted with Hibernate's statistics as collection fetches, for 4 and 24 nodes
     * with overrides.
     */
    @Test
    void theSnapshotsOfNodesWithOverridesAreReadInAConstantNumberOfQueries() {
        org.hibernate.stat.Statistics stats = entityManagerFactory.unwrap(org.hibernate.SessionFactory.class).getStatistics();
        java.util.List<UUID> nodes = new java.util.ArrayList<>();
        for (int i = 0; i < 24; i++) {
            String node = newNode();
            assertThat(api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\",\"share\":" + (50 + i)
                    + "},{\"name\":\"gc\",\"share\":10}]}", null).status()).isEqualTo(200);
            nodes.add(UUID.fromString(node));
        }
        boolean enabled = stats.isStatisticsEnabled();
        stats.setStatisticsEnabled(true);
        try {
            long before = stats.getCollectionFetchCount();
            desiredConfigs.forNodes(nodes.subList(0, 4));
            long few = stats.getCollectionFetchCount() - before;
            before = stats.getCollectionFetchCount();
            desiredConfigs.forNodes(nodes);
            long many = stats.getCollectionFetchCount() - before;
            assertThat(many).as("collection fetches for 24 nodes, against " + few + " for 4").isEqualTo(few);
        } finally {
            stats.setStatisticsEnabled(enabled);
        }
    }

    @Test
    void invalidSetsListEveryFieldByPath() {
        String body = """
                {"tasks":[
                  {"name":"foreground","share":0},
                  {"name":"Bad Name","share":10001},
                  {"name":"flush","dynamic":{"t1":0.9,"t2":0.5,"low":0,"high":10001}},
                  {"name":"flush","dynamic":{"t1":-0.1,"t2":1.5,"curve":"linear"}}
                ]}""";
        Response r = api.put(CLUSTER, body, null);
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("errors").findValuesAsString("field")).containsExactly(
                "tasks[0].share",
                "tasks[1].name",
                "tasks[1].share",
                "tasks[2].dynamic.curve",
                "tasks[2].dynamic.high",
                "tasks[2].dynamic.low",
                "tasks[2].dynamic.t2",
                "tasks[3].dynamic.high",
                "tasks[3].dynamic.low",
                "tasks[3].dynamic.t1",
                "tasks[3].dynamic.t2",
                "tasks[3].name");
        assertThat(r.json().get("errors").findValuesAsString("message"))
                .contains("must be greater than t1", "duplicate task name 'flush'");
    }

    @Test
    void aSetMustHaveTasksAndIncludeForeground() {
        Response noForeground = api.put(CLUSTER, "{\"tasks\":[{\"name\":\"gc\",\"share\":10}]}", null);
        assertThat(noForeground.status()).isEqualTo(400);
        assertThat(noForeground.json().get("errors").get(0).get("field").asString()).isEqualTo("tasks");
        assertThat(noForeground.json().get("errors").get(0).get("message").asString()).contains("foreground");

        for (String body : new String[] {"{\"tasks\":[]}", "{}", "{\"tasks\":null}"}) {
            Response r = api.put(CLUSTER, body, null);
            assertThat(r.status()).as(body).isEqualTo(400);
            assertThat(r.json().get("errors").findValuesAsString("field")).as(body).containsOnly("tasks");
        }
        Response nullTask = api.put(CLUSTER, "{\"tasks\":[{\"name\":\"foreground\"},null]}", null);
        assertThat(nullTask.status()).isEqualTo(400);
        assertThat(nullTask.json().get("errors").get(0).get("field").asString()).isEqualTo("tasks[1]");
    }

    @Test
    void equalThresholdsAreRejectedAndTheUnitIntervalEndsAreAccepted() {
        Response equal = api.put(CLUSTER, """
                {"tasks":[{"name":"foreground","dynamic":{"t1":0.5,"t2":0.5,"low":1,"high":2,"curve":"linear"}}]}""", null);
        assertThat(equal.status()).isEqualTo(400);
        assertThat(equal.json().get("errors").get(0).get("field").asString()).isEqualTo("tasks[0].dynamic.t2");

        String node = createNode();
        Response ends = api.put(nodePath(node), """
                {"tasks":[{"name":"foreground","dynamic":{"t1":0,"t2":1,"low":1,"high":10000,"curve":"linear"}}]}""", null);
        assertThat(ends.status()).isEqualTo(200);
    }

    @Test
    void unknownFieldsWrongTypesAndBadCurvesAreRejectedByPath() {
        Response unknown = api.put(CLUSTER, "{\"tasks\":[{\"name\":\"foreground\",\"weight\":5}]}", null);
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().get("errors").get(0).get("field").asString()).isEqualTo("tasks[0].weight");
        assertThat(unknown.json().get("detail").asString()).contains("weight");

        Response wrongType = api.put(CLUSTER, "{\"tasks\":[{\"name\":\"foreground\",\"dynamic\":{\"t1\":\"low\"}}]}", null);
        assertThat(wrongType.status()).isEqualTo(400);
        assertThat(wrongType.json().get("errors").get(0).get("field").asString()).isEqualTo("tasks[0].dynamic.t1");

        Response badCurve = api.put(CLUSTER, """
                {"tasks":[{"name":"foreground","dynamic":{"t1":0.1,"t2":0.2,"low":1,"high":2,"curve":"cubic"}}]}""", null);
        assertThat(badCurve.status()).isEqualTo(400);
        assertThat(badCurve.json().get("errors").get(0).get("field").asString()).isEqualTo("tasks[0].dynamic.curve");
        assertThat(badCurve.json().get("errors").get(0).get("message").asString()).contains("linear", "exponential");

        Response notAList = api.put(CLUSTER, "{\"tasks\":{\"name\":\"foreground\"}}", null);
        assertThat(notAList.status()).isEqualTo(400);

        Response malformed = api.put(CLUSTER, "{\"tasks\":[", null);
        assertThat(malformed.status()).isEqualTo(400);
        assertThat(malformed.contentType()).startsWith("application/problem+json");
    }

    @Test
    void theUsageReportIntervalIsBoundedAuditedAndPushedInTheNodesDesiredConfig() {
        String node = createNode();
        assertThat(api.get(nodePath(node)).json().get("usageReportIntervalSeconds").asInt()).as("default").isEqualTo(10);
        assertThat(api.get("/api/v1/nodes/" + node + "/desired-config").json().get("usageReportIntervalSeconds").asInt())
                .isEqualTo(10);

        for (String bad : new String[] {"0", "3601", "-5"}) {
            Response r = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],\"usageReportIntervalSeconds\":" + bad + "}", null);
            assertThat(r.status()).as(bad).isEqualTo(400);
            assertThat(r.contentType()).startsWith("application/problem+json");
            assertThat(r.json().get("errors").findValuesAsString("field")).containsExactly("usageReportIntervalSeconds");
        }
        Response notANumber = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],\"usageReportIntervalSeconds\":\"10s\"}", null);
        assertThat(notANumber.status()).isEqualTo(400);
        assertThat(notANumber.json().get("errors").get(0).get("field").asString()).isEqualTo("usageReportIntervalSeconds");
        assertThat(api.get(nodePath(node)).json().get("source").asString()).as("nothing created").isEqualTo("cluster-default");

        long revision = revisions.current();
        Response set = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],\"usageReportIntervalSeconds\":30}", null);
        assertThat(set.status()).isEqualTo(200);
        assertThat(set.json().get("usageReportIntervalSeconds").asInt()).isEqualTo(30);
        assertThat(revisions.current()).isGreaterThan(revision);
        JsonNode desired = api.get("/api/v1/nodes/" + node + "/desired-config").json();
        assertThat(desired.get("usageReportIntervalSeconds").asInt()).isEqualTo(30);

        // Only the interval changes: still a change, bumped and audited with the before and after.
        long beforeChange = revisions.current();
        Response changed = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],\"usageReportIntervalSeconds\":5}", set.etag());
        assertThat(changed.status()).isEqualTo(200);
        assertThat(changed.json().get("version").asLong()).isGreaterThan(set.json().get("version").asLong());
        assertThat(revisions.current()).isGreaterThan(beforeChange);
        assertThat(api.get("/api/v1/nodes/" + node + "/desired-config").json().get("usageReportIntervalSeconds").asInt())
                .isEqualTo(5);
        JsonNode audit = api.get("/api/v1/audit?resourceType=task-shares&resourceId=" + node).json().get("items");
        assertThat(audit.findValuesAsString("action")).contains("task-shares.create", "task-shares.update");
        assertThat(audit.toString()).contains("\"usageReportIntervalSeconds\":30", "\"usageReportIntervalSeconds\":5");
    }

    @Test
    void theCostOfARequestIsMeasuredByDefaultBoundedAuditedAndPushedInTheNodesDesiredConfig() {
        String node = createNode();
        JsonNode defaults = api.get(nodePath(node)).json().get("ioCost");
        assertThat(defaults.get("readPerIoBytes").asLong()).as("default").isEqualTo(IoCost.DEFAULT_READ_PER_IO_BYTES);
        assertThat(defaults.get("writePerIoBytes").asLong()).isEqualTo(IoCost.DEFAULT_WRITE_PER_IO_BYTES);
        assertThat(api.get("/api/v1/nodes/" + node + "/desired-config").json().get("ioCost")).isEqualTo(defaults);

        Response bad = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],"
                + "\"ioCost\":{\"readPerIoBytes\":-1,\"writePerIoBytes\":67108865}}", null);
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.json().get("errors").findValuesAsString("field"))
                .containsExactly("ioCost.readPerIoBytes", "ioCost.writePerIoBytes");
        Response half = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],\"ioCost\":{\"readPerIoBytes\":0}}", null);
        assertThat(half.status()).isEqualTo(400);
        assertThat(half.json().get("errors").findValuesAsString("field")).containsExactly("ioCost.writePerIoBytes");
        Response unknown = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],"
                + "\"ioCost\":{\"readPerIoBytes\":0,\"writePerIoBytes\":0,\"perIoBytes\":1}}", null);
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().get("errors").findValuesAsString("field")).containsExactly("ioCost.perIoBytes");
        assertThat(api.get(nodePath(node)).json().get("source").asString()).as("nothing created").isEqualTo("cluster-default");

        long revision = revisions.current();
        Response set = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}],"
                + "\"ioCost\":{\"readPerIoBytes\":0,\"writePerIoBytes\":65536}}", null);
        assertThat(set.status()).isEqualTo(200);
        assertThat(set.json().get("ioCost").get("writePerIoBytes").asLong()).isEqualTo(65536);
        assertThat(revisions.current()).isGreaterThan(revision);
        JsonNode pushed = api.get("/api/v1/nodes/" + node + "/desired-config").json().get("ioCost");
        assertThat(pushed.get("readPerIoBytes").asLong()).isZero();
        assertThat(pushed.get("writePerIoBytes").asLong()).isEqualTo(65536);

        // Left out of the next PUT: back to the defaults, a change like any other.
        Response reset = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}]}", set.etag());
        assertThat(reset.status()).isEqualTo(200);
        assertThat(reset.json().get("version").asLong()).isGreaterThan(set.json().get("version").asLong());
        assertThat(reset.json().get("ioCost")).isEqualTo(defaults);
        JsonNode audit = api.get("/api/v1/audit?resourceType=task-shares&resourceId=" + node).json().get("items");
        assertThat(audit.toString()).contains("\"writePerIoBytes\":65536");
    }

    @Test
    void aNodeWithoutOverrideShowsTheClusterDefault() {
        String node = createNode();
        Response cluster = api.get(CLUSTER);
        Response r = api.get(nodePath(node));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().get("source").asString()).isEqualTo("cluster-default");
        assertThat(r.json().get("nodeId").asString()).isEqualTo(node);
        assertThat(r.json().get("tasks")).isEqualTo(cluster.json().get("tasks"));
        assertThat(r.etag()).isEqualTo("\"cluster-default-" + cluster.json().get("version").asLong() + "\"");
        assertThat(effective.effectiveFor(UUID.fromString(node)).stream().map(TaskShareConfig::name))
                .containsExactlyElementsOf(cluster.json().get("tasks").findValuesAsString("name"));
    }

    @Test
    void aTagReadBeforeTheOverrideExistedDoesNotMatchTheOverride() {
        String node = createNode();
        Response defaultView = api.get(nodePath(node));
        Response created = api.put(nodePath(node), OVERRIDE, defaultView.etag());
        assertThat(created.status()).isEqualTo(200);
        // The override's first version may equal the default's; the tags still differ.
        assertThat(created.etag()).isNotEqualTo(defaultView.etag());
        assertThat(api.put(nodePath(node), OVERRIDE, defaultView.etag()).status()).isEqualTo(412);
        assertThat(api.delete(nodePath(node), defaultView.etag()).status()).isEqualTo(412);
        assertThat(api.delete(nodePath(node), created.etag()).status()).isEqualTo(204);
    }

    @Test
    void anOverrideReplacesTheDefaultForItsNodeOnlyAndDeletingItFallsBack() {
        String node = createNode();
        String other = createNode();
        long revision = revisions.current();

        Response created = api.put(nodePath(node), OVERRIDE, null);
        assertThat(created.status()).isEqualTo(200);
        assertThat(created.json().get("source").asString()).isEqualTo("node-override");
        assertThat(created.json().get("nodeId").asString()).isEqualTo(node);
        assertThat(revisions.current()).isGreaterThan(revision);

        Response read = api.get(nodePath(node));
        assertThat(read.json().get("source").asString()).isEqualTo("node-override");
        assertThat(read.json().get("tasks").findValuesAsString("name")).containsExactly("foreground", "flush", "gc");
        assertThat(read.etag()).isEqualTo(created.etag());
        assertThat(effective.effectiveFor(UUID.fromString(node))).containsExactly(
                new TaskShareConfig("foreground", 900, null),
                new TaskShareConfig("flush", 100, new DynamicShare(0.2, 0.8, 10, 1000, Curve.exponential)),
                new TaskShareConfig("gc", 40, null));
        assertThat(api.get(nodePath(other)).json().get("source").asString()).isEqualTo("cluster-default");
        assertThat(api.get(CLUSTER).json().get("tasks")).isNotEqualTo(read.json().get("tasks"));

        long beforeDelete = revisions.current();
        assertThat(api.delete(nodePath(node), read.etag()).status()).isEqualTo(204);
        assertThat(revisions.current()).isGreaterThan(beforeDelete);
        Response fallenBack = api.get(nodePath(node));
        assertThat(fallenBack.json().get("source").asString()).isEqualTo("cluster-default");
        assertThat(fallenBack.json().get("tasks")).isEqualTo(api.get(CLUSTER).json().get("tasks"));

        Response again = api.delete(nodePath(node), null);
        assertThat(again.status()).isEqualTo(404);
        assertThat(again.contentType()).startsWith("application/problem+json");
    }

    @Test
    void replacingAnOverrideBumpsItsVersionAndTheRevision() {
        String node = createNode();
        Response created = api.put(nodePath(node), OVERRIDE, null);
        long revision = revisions.current();
        Response replaced = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\",\"share\":1}]}", created.etag());
        assertThat(replaced.status()).isEqualTo(200);
        assertThat(replaced.json().get("version").asLong()).isGreaterThan(created.json().get("version").asLong());
        assertThat(replaced.json().get("tasks").findValuesAsString("name")).containsExactly("foreground");
        assertThat(revisions.current()).isGreaterThan(revision);
    }

    @Test
    void clusterDefaultChangesReachNodesWithoutOverrideButNotOverriddenOnes() {
        String plain = createNode();
        String overridden = createNode();
        assertThat(api.put(nodePath(overridden), OVERRIDE, null).status()).isEqualTo(200);
        restoringClusterDefault(() -> {
            String newDefault = "{\"tasks\":[{\"name\":\"foreground\",\"share\":777}]}";
            assertThat(api.put(CLUSTER, newDefault, null).status()).isEqualTo(200);
            assertThat(api.get(nodePath(plain)).json().get("tasks").get(0).get("share").asInt()).isEqualTo(777);
            assertThat(api.get(nodePath(overridden)).json().get("tasks").get(0).get("share").asInt()).isEqualTo(900);
        });
    }

    @Test
    void staleIfMatchOnNodeSharesAnswers412() {
        String node = createNode();
        restoringClusterDefault(() -> {
            // GET shows the cluster default; creating an override with that tag fails once the default moved.
            Response seen = api.get(nodePath(node));
            assertThat(api.put(CLUSTER, OVERRIDE, null).status()).isEqualTo(200);
            assertThat(api.put(nodePath(node), OVERRIDE, seen.etag()).status()).isEqualTo(412);
            assertThat(api.get(nodePath(node)).json().get("source").asString()).isEqualTo("cluster-default");
        });
        Response fresh = api.get(nodePath(node));
        Response created = api.put(nodePath(node), OVERRIDE, fresh.etag());
        assertThat(created.status()).isEqualTo(200);
        Response replaced = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"foreground\"}]}", created.etag());
        assertThat(replaced.status()).isEqualTo(200);
        assertThat(api.put(nodePath(node), OVERRIDE, created.etag()).status()).isEqualTo(412);
        assertThat(api.delete(nodePath(node), created.etag()).status()).isEqualTo(412);
        assertThat(api.delete(nodePath(node), replaced.etag()).status()).isEqualTo(204);
    }

    @Test
    void invalidOverrideIsRejectedAndCreatesNothing() {
        String node = createNode();
        long revision = revisions.current();
        Response r = api.put(nodePath(node), "{\"tasks\":[{\"name\":\"gc\",\"share\":-1}]}", null);
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("errors").findValuesAsString("field")).containsExactly("tasks", "tasks[0].share");
        assertThat(api.get(nodePath(node)).json().get("source").asString()).isEqualTo("cluster-default");
        assertThat(revisions.current()).isEqualTo(revision);
    }

    @Test
    void unknownNodeAnswers404OnEveryNodeShareEndpoint() {
        String missing = nodePath(UUID.randomUUID().toString());
        assertThat(api.get(missing).status()).isEqualTo(404);
        assertThat(api.put(missing, OVERRIDE, null).status()).isEqualTo(404);
        assertThat(api.delete(missing, null).status()).isEqualTo(404);
        assertThat(api.get(missing).contentType()).startsWith("application/problem+json");
        assertThat(api.get("/api/v1/nodes/nope/task-shares").status()).isEqualTo(400);
    }

    @Test
    void deletingANodeDeletesItsOverride() {
        String node = createNode();
        assertThat(api.put(nodePath(node), OVERRIDE, null).status()).isEqualTo(200);
        assertThat(api.delete("/api/v1/nodes/" + node, null).status()).isEqualTo(204);
        assertThat(api.get(nodePath(node)).status()).isEqualTo(404);
        // The override went with the node: effective shares for the id are the default again.
        assertThat(effective.effectiveFor(UUID.fromString(node)).stream().map(TaskShareConfig::name))
                .containsExactlyElementsOf(api.get(CLUSTER).json().get("tasks").findValuesAsString("name"));
    }

    @Test
    void theClusterDefaultCannotBeDeleted() {
        assertThat(api.delete(CLUSTER, null).status()).isEqualTo(405);
    }
}
