package io.weir.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.protocol.UsageReport.Gap;
import io.weir.protocol.UsageReport.TaskUsage;
import io.weir.protocol.UsageReport.VolumeUsage;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class UsageReportJsonTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void aReportSurvivesItsJsonFormWithRfc3339Timestamps() {
        Instant from = Instant.parse("2026-12-02T05:00:00Z");
        UsageReport report = new UsageReport(7, from, from.plusSeconds(10),
                List.of(new VolumeUsage(UUID.randomUUID(), 10, 20, 40960, 163840, 120, 900, 4000, 1.5, 2_000_000, 1, 350_000,
                        80, 700, 6, 24576)),
                List.of(new TaskUsage("foreground", 30, 9_000_000, 9_500_000, 700), new TaskUsage("flush", 4, 1_000_000, 6_000_000, 250.5)),
                List.of(new Gap(2, 4, from.minusSeconds(40), from.minusSeconds(10))));
        String text = JSON.writeValueAsString(report);
        JsonNode tree = JSON.readTree(text);
        assertThat(tree.get("from").asString()).isEqualTo("2026-12-02T05:00:00Z");
        assertThat(tree.get("volumes").get(0).get("latencyP99Us").asLong()).isEqualTo(900);
        assertThat(tree.get("gaps").get(0).get("lastSequence").asLong()).isEqualTo(4);
        assertThat(tree.get("volumes").get(0).get("queuedP99Us").asLong()).isEqualTo(700);
        assertThat(tree.get("volumes").get(0).get("replicaBytes").asLong()).isEqualTo(24576);
        assertThat(tree.get("tasks").get(1).get("workerNanos").asLong()).isEqualTo(6_000_000);
        assertThat(JSON.readValue(text, UsageReport.class)).isEqualTo(report);
    }

    /** An agent from before the queued times and replica figures were reported: its volumes read as 0 for them. */
    @Test
    void aVolumeWithoutQueuedTimesOrReplicaFiguresReadsAsZeroForThem() {
        String text = "{\"sequence\": 1, \"from\": \"2026-12-02T05:00:00Z\", \"to\": \"2026-12-02T05:00:10Z\","
                + " \"volumes\": [{\"volumeId\": \"" + UUID.randomUUID() + "\", \"readOps\": 3, \"writeOps\": 0,"
                + " \"readBytes\": 12288, \"writeBytes\": 0, \"latencyP50Us\": 100, \"latencyP99Us\": 200,"
                + " \"latencyMaxUs\": 300, \"queueDepth\": 0.5, \"throttledNanos\": 0, \"rejected\": 0,"
                + " \"cpuNanos\": 1000}], \"tasks\": [], \"gaps\": []}";
        VolumeUsage v = JSON.readValue(text, UsageReport.class).volumes().get(0);
        assertThat(v.latencyP99Us()).isEqualTo(200);
        assertThat(v.queuedP50Us()).isZero();
        assertThat(v.queuedP99Us()).isZero();
        assertThat(v.replicaOps()).isZero();
        assertThat(v.replicaBytes()).isZero();
    }

    /** An agent from before worker time was reported: its tasks read as worker time 0. */
    @Test
    void aTaskWithoutWorkerTimeReadsAsWorkerTimeZero() {
        String text = "{\"sequence\": 1, \"from\": \"2026-12-02T05:00:00Z\", \"to\": \"2026-12-02T05:00:10Z\","
                + " \"volumes\": [], \"tasks\": [{\"name\": \"scrub\", \"ops\": 2, \"cpuNanos\": 1000,"
                + " \"effectiveShare\": 50}], \"gaps\": []}";
        TaskUsage t = JSON.readValue(text, UsageReport.class).tasks().get(0);
        assertThat(t.cpuNanos()).isEqualTo(1000);
        assertThat(t.workerNanos()).isZero();
    }

    @Test
    void impossibleFiguresAreRefused() {
        Instant t = Instant.parse("2026-12-02T05:00:00Z");
        assertThatThrownBy(() -> new UsageReport(0, t, t, List.of(), List.of(), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new UsageReport(1, t, t.minusSeconds(1), List.of(), List.of(), List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new VolumeUsage(UUID.randomUUID(), -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Gap(3, 2, t, t)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void figuresOutsideWhatStorageAndQueriesHoldAreRefused() {
        Instant t = Instant.parse("2026-12-02T05:00:00Z");
        UUID v = UUID.randomUUID();
        assertThatThrownBy(() -> new VolumeUsage(v, Long.MAX_VALUE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                .hasMessageContaining("readOps");
        assertThatThrownBy(() -> new VolumeUsage(v, 1, 0, 0, 0, 1L << 40, 0, 0, 0, 0, 0, 0))
                .hasMessageContaining("latencyP50Us");
        assertThatThrownBy(() -> new VolumeUsage(v, 1, 0, 0, 0, 0, 0, 0, 1e308, 0, 0, 0))
                .hasMessageContaining("queueDepth");
        assertThatThrownBy(() -> new VolumeUsage(v, 1, 0, 0, 0, 0, 0, 0, Double.NaN, 0, 0, 0))
                .hasMessageContaining("queueDepth");
        assertThatThrownBy(() -> new VolumeUsage(v, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0))
                .hasMessageContaining("replicaOps");
        assertThatThrownBy(() -> new VolumeUsage(v, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Long.MAX_VALUE))
                .hasMessageContaining("replicaBytes");
        assertThatThrownBy(() -> new TaskUsage("fore\u0000ground", 1, 1, 1, 1)).hasMessageContaining("control character");
        assertThatThrownBy(() -> new TaskUsage("x".repeat(10_000), 1, 1, 1, 1)).hasMessageContaining("10000 characters");
        assertThatThrownBy(() -> new TaskUsage("gc", 1, 1, 1, Double.POSITIVE_INFINITY)).hasMessageContaining("effectiveShare");
        assertThatThrownBy(() -> new TaskUsage("gc", 1, 1, -1, 1)).hasMessageContaining("workerNanos");
        assertThatThrownBy(() -> new TaskUsage("gc", 1, 1, Long.MAX_VALUE, 1)).hasMessageContaining("workerNanos");
        assertThatThrownBy(() -> new UsageReport(1, t, t.plus(java.time.Duration.ofDays(2)), List.of(), List.of(), List.of()))
                .hasMessageContaining("longer than");
        assertThatThrownBy(() -> new UsageReport(1, Instant.parse("9999-01-01T00:00:00Z"),
                Instant.parse("9999-01-01T00:00:10Z"), List.of(), List.of(), List.of())).hasMessageContaining("from");
        // The largest figures still accepted, and a real scheduler's are far below them.
        new VolumeUsage(v, UsageReport.MAX_COUNT, UsageReport.MAX_COUNT, UsageReport.MAX_BYTES, UsageReport.MAX_BYTES,
                UsageReport.MAX_LATENCY_US, UsageReport.MAX_LATENCY_US, UsageReport.MAX_LATENCY_US,
                UsageReport.MAX_QUEUE_DEPTH, UsageReport.MAX_NANOS, UsageReport.MAX_COUNT, UsageReport.MAX_NANOS,
                UsageReport.MAX_LATENCY_US, UsageReport.MAX_LATENCY_US, UsageReport.MAX_COUNT, UsageReport.MAX_BYTES);
    }

    @Test
    void aReportEndingMoreThanTheClockSkewAheadIsRefused() {
        Instant now = Instant.parse("2026-12-02T05:00:00Z");
        UsageReport ahead = new UsageReport(1, now, now.plus(UsageReport.MAX_CLOCK_SKEW).plusSeconds(1), List.of(),
                List.of(), List.of());
        assertThatThrownBy(() -> ahead.checkTimely(now)).hasMessageContaining("ahead");
        new UsageReport(1, now, now.plus(UsageReport.MAX_CLOCK_SKEW), List.of(), List.of(), List.of()).checkTimely(now);
    }

    @Test
    void aRefusedReportCarriesItsSequenceSoThatItCanBeAnsweredAlone() {
        String frame = "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":42,\"from\":\"2026-12-02T05:00:00Z\","
                + "\"to\":\"2026-12-02T05:00:10Z\",\"tasks\":[{\"name\":\"a\\u0000b\",\"ops\":1,\"cpuNanos\":1,"
                + "\"effectiveShare\":1}]}";
        assertThatThrownBy(() -> AgentMessages.decode(frame)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.usageSequence()).isEqualTo(42);
            assertThat(e.getMessage()).contains("task name").contains("control character");
        });
        assertThat(AgentMessages.decode(AgentMessages.encode(new AgentMessage.UsageAck(42, "bounds"))))
                .isEqualTo(new AgentMessage.UsageAck(42, "bounds"));
        assertThat(AgentMessages.encode(new AgentMessage.UsageAck(42))).doesNotContain("refused");
    }

    @Test
    void duplicateKeysAndParserWordingStayOutOfRefusals() {
        assertThatThrownBy(() -> AgentMessages.decode("{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":1,\"revision\":2}"))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.getMessage()).contains("twice"));
        assertThatThrownBy(() -> AgentMessages.decode("{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":\"x\"}"))
                .isInstanceOfSatisfying(ProtocolException.class,
                        e -> assertThat(e.getMessage()).contains("'revision'").doesNotContain("Cannot deserialize"));
        assertThatThrownBy(() -> AgentMessages.decode("{\"type\":"))
                .isInstanceOfSatisfying(ProtocolException.class,
                        e -> assertThat(e.getMessage()).startsWith("not valid JSON").doesNotContain("end-of-input"));
    }
}
