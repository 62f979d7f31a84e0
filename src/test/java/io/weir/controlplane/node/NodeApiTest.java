package io.weir.controlplane.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import java.net.URLEncoder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

class NodeApiTest extends IntegrationTest {

    @Autowired
    ConfigRevisions revisions;

    @Autowired
    NodeService nodes;

    private Response create(String name, String extra) {
        return api.post("/api/v1/nodes", "{\"name\":\"" + name + "\"" + extra + "}");
    }

    private static String path(Response created) {
        return "/api/v1/nodes/" + created.json().get("id").asString();
    }

    private static String q(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Test
    void createAnswers201WithLocationETagLabelsAndStatus() {
        String name = unique("node");
        long revision = revisions.current();
        Response r = create(name, ",\"address\":\"10.0.0.11:10809\",\"labels\":{\"zone\":\"eu-1a\",\"disk\":\"nvme\"}");
        assertThat(r.status()).isEqualTo(201);
        JsonNode body = r.json();
        assertThat(r.header("Location")).endsWith("/api/v1/nodes/" + body.get("id").asString());
        assertThat(r.versionTag()).isEqualTo("\"" + body.get("version").asLong() + "\"");
        assertThat(body.get("name").asString()).isEqualTo(name);
        assertThat(body.get("address").asString()).isEqualTo("10.0.0.11:10809");
        assertThat(body.get("labels").propertyNames()).containsExactly("disk", "zone");
        assertThat(body.get("labels").get("zone").asString()).isEqualTo("eu-1a");
        JsonNode status = body.get("status");
        assertThat(status.get("connected").asBoolean()).isFalse();
        assertThat(status.get("desiredRevision").asLong()).isGreaterThanOrEqualTo(revision);
        assertThat(status.get("appliedRevision").isNull()).isTrue();
        assertThat(status.get("lastAckAt").isNull()).isTrue();
        assertThat(status.get("lastError").isNull()).isTrue();
        assertThat(body.get("createdAt").asString()).endsWith("Z");

        Response read = api.get(path(r));
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.versionTag()).isEqualTo(r.versionTag());
        for (String field : new String[] {"id", "name", "address", "labels", "version", "createdAt", "updatedAt"}) {
            assertThat(read.json().get(field)).as(field).isEqualTo(body.get(field));
        }
    }

    @Test
    void addressAndLabelsAreOptional() {
        Response r = create(unique("bare"), "");
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.json().get("address").isNull()).isTrue();
        assertThat(r.json().get("labels").isEmpty()).isTrue();
    }

    @Test
    void creatingAndDeletingANodeDoesNotBumpTheRevision() {
        long before = revisions.current();
        Response created = create(unique("norev"), ",\"labels\":{\"a\":\"b\"}");
        assertThat(created.status()).isEqualTo(201);
        assertThat(revisions.current()).isEqualTo(before);
        assertThat(api.delete(path(created), null).status()).isEqualTo(204);
        assertThat(revisions.current()).isEqualTo(before);
    }

    @Test
    void duplicateNameAnswers409OnCreateAndOnRename() {
        String name = unique("dup");
        assertThat(create(name, "").status()).isEqualTo(201);
        Response again = create(name, "");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.contentType()).startsWith("application/problem+json");

        Response other = create(unique("dup"), "");
        Response rename = api.patch(path(other), "{\"name\":\"" + name + "\"}", null);
        assertThat(rename.status()).isEqualTo(409);
    }

    @Test
    void invalidFieldsAreEachListed() {
        Response r = api.post("/api/v1/nodes",
                "{\"name\":\"Bad Name\",\"address\":\"no-port\",\"labels\":{\"bad key!\":\"v\",\"ok\":\"" + "x".repeat(256) + "\"}}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        JsonNode errors = r.json().get("errors");
        assertThat(errors.findValuesAsString("field")).containsExactly("address", "labels", "labels", "name");
        assertThat(errors.findValuesAsString("message"))
                .anySatisfy(m -> assertThat(m).contains("'bad key!'"))
                .anySatisfy(m -> assertThat(m).contains("'ok'").contains("255"));
    }

    @Test
    void addressMustBeHostAndPort() {
        for (String good : new String[] {"node-1.example.com:10809", "10.0.0.1:1", "[::1]:65535"}) {
            assertThat(create(unique("addr"), ",\"address\":\"" + good + "\"").status()).as(good).isEqualTo(201);
        }
        for (String bad : new String[] {"host", "host:0", "host:65536", ":80", "a b:80", "x".repeat(251) + ":8080"}) {
            Response r = create(unique("addr"), ",\"address\":\"" + bad + "\"");
            assertThat(r.status()).as(bad).isEqualTo(400);
            assertThat(r.json().get("errors").findValuesAsString("field")).as(bad).containsOnly("address");
        }
    }

    @Test
    void labelKeysAllowDotsSlashesAndUpperCaseAndTemplateCharactersStayLiteral() {
        assertThat(create(unique("lbl"), ",\"labels\":{\"weir.io/Disk_Type-1\":\"\"}").status()).isEqualTo(201);
        Response r = create(unique("lbl"), ",\"labels\":{\"{min}\":\"v\",\"" + "k".repeat(64) + "\":\"v\"}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("errors").findValuesAsString("message"))
                .hasSize(2)
                .anySatisfy(m -> assertThat(m).contains("'{min}'"));
    }

    @Test
    void nullLabelValueIsRejected() {
        Response r = create(unique("lbl"), ",\"labels\":{\"zone\":null}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo("labels");
    }

    @Test
    void unknownFieldsAndWrongTypesAreRejectedByName() {
        Response unknown = create(unique("n"), ",\"adress\":\"h:1\"");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().get("detail").asString()).contains("adress");

        Response wrongType = create(unique("n"), ",\"labels\":[\"zone\"]");
        assertThat(wrongType.status()).isEqualTo(400);
        assertThat(wrongType.json().get("errors").get(0).get("field").asString()).isEqualTo("labels");

        Response wrongValueType = create(unique("n"), ",\"labels\":{\"zone\":{\"x\":1}}");
        assertThat(wrongValueType.status()).isEqualTo(400);

        Response statusIsReadOnly = create(unique("n"), ",\"status\":{\"connected\":true}");
        assertThat(statusIsReadOnly.status()).isEqualTo(400);
        assertThat(statusIsReadOnly.json().get("detail").asString()).contains("status");

        Response malformed = api.post("/api/v1/nodes", "{\"name\":");
        assertThat(malformed.status()).isEqualTo(400);
        assertThat(malformed.contentType()).startsWith("application/problem+json");
    }

    @Test
    void unknownOrMalformedIdAnswersProblems() {
        String missing = "/api/v1/nodes/" + UUID.randomUUID();
        assertThat(api.get(missing).status()).isEqualTo(404);
        assertThat(api.get(missing).contentType()).startsWith("application/problem+json");
        assertThat(api.patch(missing, "{\"address\":\"h:1\"}", null).status()).isEqualTo(404);
        assertThat(api.delete(missing, null).status()).isEqualTo(404);
        Response bad = api.get("/api/v1/nodes/not-a-uuid");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.json().get("errors").get(0).get("field").asString()).isEqualTo("nodeId");
    }

    @Test
    void thereIsNoPutOnNodes() {
        Response created = create(unique("noput"), "");
        Response put = api.put(path(created), "{\"name\":\"x\"}", null);
        assertThat(put.status()).isEqualTo(405);
    }

    @Test
    void mergePatchEditsLabelsKeyByKeyAndKeepsOtherFields() {
        Response created = create(unique("patch"),
                ",\"address\":\"h1:10809\",\"labels\":{\"zone\":\"a\",\"rack\":\"r1\",\"disk\":\"hdd\"}");
        String path = path(created);

        Response patched = api.patch(path, "{\"labels\":{\"zone\":null,\"rack\":\"r2\",\"tier\":\"gold\"}}", created.etag());
        assertThat(patched.status()).isEqualTo(200);
        assertThat(patched.json().get("version").asLong()).isEqualTo(created.json().get("version").asLong() + 1);
        JsonNode labels = patched.json().get("labels");
        assertThat(labels.propertyNames()).containsExactly("disk", "rack", "tier");
        assertThat(labels.get("rack").asString()).isEqualTo("r2");
        assertThat(patched.json().get("address").asString()).isEqualTo("h1:10809");
        assertThat(patched.json().get("updatedAt")).as("a labels-only change moves updatedAt")
                .isNotEqualTo(created.json().get("updatedAt"));

        Response cleared = api.patch(path, "{\"labels\":null,\"address\":null}", patched.etag());
        assertThat(cleared.status()).isEqualTo(200);
        assertThat(cleared.json().get("labels").isEmpty()).isTrue();
        assertThat(cleared.json().get("address").isNull()).isTrue();
        assertThat(api.get(path).json().get("labels").isEmpty()).isTrue();

        String newName = unique("renamed");
        Response renamed = api.patch(path, "{\"name\":\"" + newName + "\"}", null);
        assertThat(renamed.json().get("name").asString()).isEqualTo(newName);
    }

    @Test
    void patchWithInvalidValuesListsTheMergedFieldsAndChangesNothing() {
        Response created = create(unique("patchbad"), ",\"labels\":{\"zone\":\"a\"}");
        Response r = api.patch(path(created), "{\"name\":\"\",\"labels\":{\"bad key\":\"x\"},\"address\":\"nope\"}", null);
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("errors").findValuesAsString("field")).containsExactly("address", "labels", "name");

        Response unknown = api.patch(path(created), "{\"colour\":\"red\"}", null);
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().get("detail").asString()).contains("colour");

        Response notAnObject = api.patch(path(created), "[1]", null);
        assertThat(notAnObject.status()).isEqualTo(400);

        Response read = api.get(path(created));
        assertThat(read.versionTag()).isEqualTo(created.versionTag());
        assertThat(read.json().get("labels").get("zone").asString()).isEqualTo("a");
    }

    @Test
    void patchThatChangesNothingKeepsTheVersion() {
        Response created = create(unique("same"), ",\"labels\":{\"zone\":\"a\"}");
        Response patched = api.patch(path(created), "{\"labels\":{\"zone\":\"a\"}}", null);
        assertThat(patched.status()).isEqualTo(200);
        assertThat(patched.versionTag()).isEqualTo(created.versionTag());
    }

    @Test
    void labelAndAddressChangesDoNotBumpTheRevision() {
        Response created = create(unique("cosmetic"), "");
        long before = revisions.current();
        assertThat(api.patch(path(created), "{\"labels\":{\"zone\":\"b\"},\"address\":\"h:1\"}", null).status()).isEqualTo(200);
        assertThat(api.patch(path(created), "{\"name\":\"" + unique("cosmetic") + "\"}", null).status()).isEqualTo(200);
        assertThat(revisions.current()).isEqualTo(before);
    }

    @Test
    void staleIfMatchAnswers412AndCurrentOneSucceeds() {
        Response created = create(unique("etag"), "");
        String path = path(created);
        Response updated = api.patch(path, "{\"address\":\"h:1\"}", created.etag());
        assertThat(updated.status()).isEqualTo(200);
        assertThat(updated.versionTag()).isEqualTo("\"1\"");

        Response stale = api.patch(path, "{\"address\":\"h:2\"}", created.etag());
        assertThat(stale.status()).isEqualTo(412);
        assertThat(stale.contentType()).startsWith("application/problem+json");
        assertThat(api.delete(path, created.etag()).status()).isEqualTo(412);
        assertThat(api.get(path).json().get("address").asString()).isEqualTo("h:1");
        assertThat(api.delete(path, updated.etag()).status()).isEqualTo(204);
    }

    @Test
    void deleteRemovesTheNodeAndItsLabelsAndLaterReadsAnswer404() {
        Response created = create(unique("gone"), ",\"labels\":{\"zone\":\"x\"}");
        String path = path(created);
        assertThat(api.delete(path, created.etag()).status()).isEqualTo(204);
        Response missing = api.get(path);
        assertThat(missing.status()).isEqualTo(404);
        assertThat(missing.contentType()).startsWith("application/problem+json");
        assertThat(api.delete(path, null).status()).isEqualTo(404);
    }

    @Test
    void deletingANodeThatServesVolumesAnswers409NamingThemAndKeepsTheNode() {
        Response node = create(unique("busy"), "");
        String nodeId = node.json().get("id").asString();
        Response tenant = api.post("/api/v1/tenants", "{\"name\":\"" + unique("busy-t") + "\"}");
        Response volume = api.post("/api/v1/tenants/" + tenant.json().get("id").asString() + "/volumes",
                "{\"name\":\"busy-vol\",\"sizeBytes\":1048576,\"nodeIds\":[\"" + nodeId + "\"]}");
        assertThat(volume.status()).as(volume.toString()).isEqualTo(201);

        Response refused = api.delete(path(node), null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        assertThat(refused.json().get("volumes").get(0).asString()).isEqualTo("busy-vol");
        assertThat(api.get(path(node)).status()).isEqualTo(200);

        assertThat(api.delete("/api/v1/volumes/" + volume.json().get("id").asString(), null).status()).isEqualTo(204);
        assertThat(api.delete(path(node), null).status()).isEqualTo(204);
    }

    @Test
    void listsArePagedInCreationOrderAndFilterByName() {
        String marker = unique("page");
        for (int i = 0; i < 5; i++) {
            assertThat(create(marker + "-" + i, "").status()).isEqualTo(201);
        }
        Response first = api.get("/api/v1/nodes?name=" + marker + "&size=2&page=0");
        Response second = api.get("/api/v1/nodes?name=" + marker + "&size=2&page=1");
        Response third = api.get("/api/v1/nodes?name=" + marker + "&size=2&page=2");
        assertThat(first.status()).isEqualTo(200);
        assertThat(first.json().get("totalItems").asLong()).isEqualTo(5);
        assertThat(first.json().get("totalPages").asInt()).isEqualTo(3);
        assertThat(first.json().get("items").findValuesAsString("name")).containsExactly(marker + "-0", marker + "-1");
        assertThat(second.json().get("items").findValuesAsString("name")).containsExactly(marker + "-2", marker + "-3");
        assertThat(third.json().get("items").findValuesAsString("name")).containsExactly(marker + "-4");
        assertThat(first.json().get("items").get(0).get("status").get("connected").asBoolean()).isFalse();
        assertThat(api.get("/api/v1/nodes?size=501").status()).isEqualTo(400);
        assertThat(api.get("/api/v1/nodes?page=-1").status()).isEqualTo(400);
        assertThat(api.get("/api/v1/nodes?size=abc").status()).isEqualTo(400);
    }

    @Test
    void labelSelectorsMustAllMatch() {
        String marker = unique("sel");
        String a = create(marker + "-a", ",\"labels\":{\"zone\":\"z1\",\"disk\":\"nvme\"}").json().get("name").asString();
        String b = create(marker + "-b", ",\"labels\":{\"zone\":\"z1\",\"disk\":\"hdd\"}").json().get("name").asString();
        create(marker + "-c", ",\"labels\":{\"zone\":\"z2\",\"disk\":\"nvme\"}");
        create(marker + "-d", "");

        String base = "/api/v1/nodes?name=" + marker;
        assertThat(api.get(base + "&label=zone=z1").json().get("items").findValuesAsString("name")).containsExactly(a, b);
        assertThat(api.get(base + "&label=zone=z1&label=disk=nvme").json().get("items").findValuesAsString("name"))
                .containsExactly(a);
        assertThat(api.get(base + "&label=zone=z1&label=zone=z2").json().get("totalItems").asLong()).isZero();
        assertThat(api.get(base + "&label=zone=").json().get("totalItems").asLong()).isZero();
        assertThat(api.get(base + "&label=nokey=x").json().get("totalItems").asLong()).isZero();
        Response bad = api.get(base + "&label=zone");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.json().get("errors").get(0).get("field").asString()).isEqualTo("label");
    }

    @Test
    void labelSelectorValuesMayContainCommasAndEqualsSigns() {
        String marker = unique("comma");
        String name = create(marker, ",\"labels\":{\"note\":\"a,b=c\"}").json().get("name").asString();
        Response r = api.get("/api/v1/nodes?name=" + marker + "&label=" + q("note=a,b=c"));
        assertThat(r.json().get("items").findValuesAsString("name")).containsExactly(name);
    }

    @Test
    void nameFilterTreatsWildcardsLiterally() {
        String marker = unique("lit");
        create(marker + "-x", "");
        assertThat(api.get("/api/v1/nodes?name=" + q("%")).status()).isEqualTo(200);
        assertThat(api.get("/api/v1/nodes?name=" + q(marker + "%")).json().get("totalItems").asLong()).isZero();
        assertThat(api.get("/api/v1/nodes?name=" + q(marker.replace('-', '_'))).json().get("totalItems").asLong()).isZero();
    }

    @Test
    void agentReportsShowInTheStatusWithoutChangingTheVersion() {
        Response created = create(unique("status"), "");
        UUID id = UUID.fromString(created.json().get("id").asString());

        nodes.recordRejected(id, 7, "unknown task 'zip'");
        JsonNode rejected = api.get(path(created)).json().get("status");
        assertThat(rejected.get("appliedRevision").isNull()).isTrue();
        assertThat(rejected.get("lastError").asString()).isEqualTo("revision 7: unknown task 'zip'");

        nodes.recordApplied(id, 8);
        Response read = api.get(path(created));
        JsonNode applied = read.json().get("status");
        assertThat(applied.get("appliedRevision").asLong()).isEqualTo(8);
        assertThat(applied.get("lastAckAt").asString()).endsWith("Z");
        assertThat(applied.get("lastError").isNull()).isTrue();
        assertThat(read.versionTag()).isEqualTo(created.versionTag());
        assertThat(api.patch(path(created), "{\"address\":\"h:9\"}", created.etag()).status()).isEqualTo(200);
    }

    @Test
    void answersOfManyNodesAreStoredInOneCallAndDeletedNodesAreSkipped() {
        Response acked = create(unique("batch-a"), "");
        Response rejectedAfterAck = create(unique("batch-b"), "");
        Response deleted = create(unique("batch-c"), "");
        UUID a = UUID.fromString(acked.json().get("id").asString());
        UUID b = UUID.fromString(rejectedAfterAck.json().get("id").asString());
        UUID c = UUID.fromString(deleted.json().get("id").asString());
        Instant at = Instant.now().plusSeconds(60).truncatedTo(ChronoUnit.SECONDS).plusNanos(123_456_000);
        nodes.recordAnswers(List.of(AgentAnswer.applied(b, 4, at.minusSeconds(1))));
        assertThat(api.delete(path(deleted), null).status()).isEqualTo(204);

        int updated = nodes.recordAnswers(List.of(AgentAnswer.applied(a, 9, at),
                AgentAnswer.applied(b, 5, at).then(AgentAnswer.rejected(b, 6, "no such task", at.plusMillis(1))),
                AgentAnswer.applied(c, 9, at)));

        assertThat(updated).isEqualTo(2);
        JsonNode first = api.get(path(acked)).json().get("status");
        assertThat(first.get("appliedRevision").asLong()).isEqualTo(9);
        assertThat(Instant.parse(first.get("lastAckAt").asString())).isEqualTo(at);
        assertThat(first.get("lastError").isNull()).isTrue();
        JsonNode second = api.get(path(rejectedAfterAck)).json().get("status");
        assertThat(second.get("appliedRevision").asLong()).isEqualTo(5);
        assertThat(second.get("lastError").asString()).isEqualTo("revision 6: no such task");
        assertThat(api.get(path(acked)).versionTag()).isEqualTo(acked.versionTag());
    }

    @Test
    void aLateAnswerStoredByAnotherReplicaDoesNotOverwriteANewerOne() {
        // The agent acknowledged revision 5 to one replica, whose write was held up (the database
        // was unreachable for it); it then reconnected to another replica and acknowledged 6 there,
        // which was stored first. The first replica's write arrives last.
        Response created = create(unique("late"), "");
        UUID id = UUID.fromString(created.json().get("id").asString());
        Instant t1 = Instant.parse("2026-12-02T13:00:01Z");
        Instant t2 = Instant.parse("2026-12-02T13:00:02Z");
        nodes.recordAnswers(List.of(AgentAnswer.applied(id, 6, t2)));

        nodes.recordAnswers(List.of(AgentAnswer.applied(id, 5, t1)));

        JsonNode status = api.get(path(created)).json().get("status");
        assertThat(status.get("appliedRevision").asLong()).isEqualTo(6);
        assertThat(status.get("lastAckAt").asString()).isEqualTo("2026-12-02T13:00:02Z");
    }

    @Test
    void aLateWriteKeepsTheNewerOfEachPartOfTheStatus() {
        Response created = create(unique("late-parts"), "");
        UUID id = UUID.fromString(created.json().get("id").asString());
        Instant t = Instant.parse("2026-12-02T13:00:00Z");
        // stored first: ack of 6 at t+2, then a rejection of 7 at t+4
        nodes.recordAnswers(List.of(AgentAnswer.applied(id, 6, t.plusSeconds(2))
                .then(AgentAnswer.rejected(id, 7, "unknown task", t.plusSeconds(4)))));

        // late: an ack at t+1 and a rejection at t+3 neither clear nor replace the newer error
        nodes.recordAnswers(List.of(AgentAnswer.applied(id, 5, t.plusSeconds(1))));
        nodes.recordAnswers(List.of(AgentAnswer.rejected(id, 5, "older", t.plusSeconds(3))));
        JsonNode status = api.get(path(created)).json().get("status");
        assertThat(status.get("appliedRevision").asLong()).isEqualTo(6);
        assertThat(status.get("lastError").asString()).isEqualTo("revision 7: unknown task");

        // late in part: its ack (t+3) is newer than the stored ack, its error older than the stored one
        nodes.recordAnswers(List.of(AgentAnswer.applied(id, 8, t.plusSeconds(3))));
        status = api.get(path(created)).json().get("status");
        assertThat(status.get("appliedRevision").asLong()).isEqualTo(8);
        assertThat(status.get("lastAckAt").asString()).isEqualTo("2026-12-02T13:00:03Z");
        assertThat(status.get("lastError").asString()).isEqualTo("revision 7: unknown task");

        // newer than everything stored: an ack clears the error
        nodes.recordAnswers(List.of(AgentAnswer.applied(id, 9, t.plusSeconds(5))));
        status = api.get(path(created)).json().get("status");
        assertThat(status.get("appliedRevision").asLong()).isEqualTo(9);
        assertThat(status.get("lastError").isNull()).isTrue();
    }

    @Test
    void serviceRequireStaysUsableByOtherFeatures() {
        Response created = create(unique("req"), "");
        UUID id = UUID.fromString(created.json().get("id").asString());
        assertThat(nodes.require(id).getName()).isEqualTo(created.json().get("name").asString());
        assertThat(nodes.exists(id)).isTrue();
        assertThat(nodes.exists(UUID.randomUUID())).isFalse();
    }

    /**
     * Each label= selector used to add a join: 100 took 75 s and 1,000 grew one backend to 1.8 GB.
     * No node carries more than NodeLabels.MAX_LABELS labels, so more selectors than that can
     * match nothing and answer 400 naming the parameter, before any query.
     */
    @Test
    void moreLabelSelectorsThanANodeCanCarryAnswer400() {
        StringBuilder query = new StringBuilder("/api/v1/nodes?name=x");
        for (int i = 0; i <= NodeLabels.MAX_LABELS; i++) {
            query.append("&label=k").append(i).append("=v");
        }
        Response r = api.get(query.toString());
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.json().get("errors").get(0).get("field").asString()).isEqualTo("label");
        assertThat(r.json().get("errors").get(0).get("message").asString()).contains(String.valueOf(NodeLabels.MAX_LABELS));
    }

    /** The most selectors allowed, all matching a node that carries the most labels allowed, in one query. */
    @Test
    void aNodeWithTheMostLabelsIsFoundByAsManySelectors() {
        String name = unique("many");
        StringBuilder labels = new StringBuilder();
        StringBuilder query = new StringBuilder("/api/v1/nodes?name=" + name);
        for (int i = 0; i < NodeLabels.MAX_LABELS; i++) {
            labels.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v").append(i).append('"');
            query.append("&label=k").append(i).append("=v").append(i);
        }
        assertThat(create(name, ",\"labels\":{" + labels + "}").status()).isEqualTo(201);
        Response all = api.get(query.toString());
        assertThat(all.status()).isEqualTo(200);
        assertThat(all.json().get("items").findValuesAsString("name")).containsExactly(name);
        // The same selector twice is one selector; one wrong value among them matches nothing.
        String duplicated = query.toString().replace("&label=k63=v63", "&label=k0=v0");
        assertThat(api.get(duplicated).json().get("items").findValuesAsString("name")).containsExactly(name);
        assertThat(api.get(query.toString().replace("label=k7=v7", "label=k7=other")).json().get("totalItems").asLong())
                .isZero();
    }
}
