package io.weir.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.protocol.AgentMessage.Ack;
import io.weir.protocol.AgentMessage.ConfigPush;
import io.weir.protocol.AgentMessage.ErrorMessage;
import io.weir.protocol.AgentMessage.Export;
import io.weir.protocol.AgentMessage.Hello;
import io.weir.protocol.AgentMessage.Nack;
import io.weir.protocol.AgentMessage.NodeStatus;
import io.weir.protocol.AgentMessage.UsageAck;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AgentMessagesTest {

    private static final UUID NODE = UUID.fromString("00000000-0000-0000-0000-000000000001");

    /**
     * The largest messages the protocol's own bounds allow fit in a frame: a usage report of
     * {@link UsageReport#MAX_VOLUMES} volumes with figures of many digits, and the config of a node
     * holding as many volumes, named at length and with every limit set. With 1 MiB frames a node
     * of about 2,300 volumes could not be sent its config, and one of about 3,000 could send no
     * usage report (every report names every volume).
     */
    @Test
    void theLargestReportAndAConfigOfAsManyVolumesFitInAFrame() {
        Instant from = Instant.parse("2026-12-01T00:00:00Z");
        List<UsageReport.VolumeUsage> volumes = new java.util.ArrayList<>();
        long big = 999_999_999_999L;
        for (int i = 0; i < UsageReport.MAX_VOLUMES; i++) {
            volumes.add(new UsageReport.VolumeUsage(new UUID(i, ~i), big, big, big * 4096, big * 4096, 9_999_999, 9_999_999,
                    9_999_999, 12345.678, big * 1000, big, big * 1000, 9_999_999, 9_999_999, big, big * 4096));
        }
        UsageReport report = new UsageReport(1, from, from.plusSeconds(10), volumes, List.of(), List.of());
        String frame = AgentMessages.encode(report);
        assertThat(AgentMessages.decode(frame)).isEqualTo(report);

        io.weir.support.TestConfigs config = io.weir.support.TestConfigs.config().tenant("a".repeat(63));
        for (int i = 0; i < UsageReport.MAX_VOLUMES; i++) {
            config.volume("a".repeat(63), String.format("%063d", i), 1L << 40, 10_000, 1_000_000L, 2_000_000L);
        }
        ConfigPush push = new ConfigPush(config.build());
        assertThat(AgentMessages.decode(AgentMessages.encode(push))).isEqualTo(push);
    }

    @Test
    void everyMessageRoundTripsWithTypeAndVersionFirst() {
        DesiredConfig config = new DesiredConfig(NODE, 7,
                List.of(new TaskShareConfig("foreground", 60, null),
                        new TaskShareConfig("flush", 15, new TaskShareConfig.DynamicShare(0.2, 0.8, 5, 50,
                                TaskShareConfig.Curve.exponential))),
                List.of(new TenantConfig(NODE, "acme", 100, 5000L, null)),
                List.of(new VolumeConfig(NODE, NODE, "db", 4096,
                        new EffectivePolicy(100, 10L, 100L, 200L, null, null, new EffectiveCostModel(4096)))));
        List<AgentMessage> all = List.of(new Hello(NODE, 0, "0.1.0"), new ConfigPush(config), new Ack(42),
                new Nack(42, "no"), usageReport(), new UsageAck(7),
                new NodeStatus("127.0.0.1:10809", List.of(new Export(NODE, "acme/db", 1 << 30, 2))),
                new AgentMessage.CertificateRequest("-----BEGIN CERTIFICATE REQUEST-----\nAA==\n-----END CERTIFICATE REQUEST-----\n"),
                new AgentMessage.CertificateIssued("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", "ca"),
                new ConfigPush(new DesiredConfig(NODE, 8, config.tasks(), config.tenants(), config.volumes(), 10,
                        new TlsConfig(List.of("ca"), List.of(new ClientCertificateEntry("1f", NODE, Instant.parse("2027-01-01T00:00:00Z"))),
                                List.of(new ClientCertificateEntry("2a", NODE, Instant.parse("2027-01-02T00:00:00Z")))))),
                new ErrorMessage("malformed", "bad"));
        for (AgentMessage m : all) {
            String text = AgentMessages.encode(m);
            assertThat(text).startsWith("{\"type\":\"" + AgentMessages.typeName(m) + "\",\"protocolVersion\":1");
            assertThat(AgentMessages.decode(text)).isEqualTo(m);
        }
    }

    /**
     * The certificate messages and the desired config's {@code tls} member on the wire; a snapshot
     * without TLS leaves the member out, so its frame (and digest) is what an earlier version wrote.
     */
    @Test
    void certificateMessagesAndTheTlsMemberHaveTheirWireNames() {
        assertThat(AgentMessages.encode(new AgentMessage.CertificateRequest("csr")))
                .isEqualTo("{\"type\":\"certificateRequest\",\"protocolVersion\":1,\"csrPem\":\"csr\"}");
        assertThat(AgentMessages.decode("{\"type\":\"certificate\",\"protocolVersion\":1,\"certificatePem\":\"c\",\"caCertificatePem\":\"a\"}"))
                .isEqualTo(new AgentMessage.CertificateIssued("c", "a"));
        assertCode("{\"type\":\"certificateRequest\",\"protocolVersion\":1}", ProtocolException.Code.MALFORMED);
        assertCode("{\"type\":\"certificate\",\"protocolVersion\":1,\"certificatePem\":\"c\"}", ProtocolException.Code.MALFORMED);
        DesiredConfig plain = new DesiredConfig(NODE, 1, List.of(), List.of(), List.of());
        assertThat(AgentMessages.encode(new ConfigPush(plain))).doesNotContain("tls");
        assertThat(AgentMessages.encode(new ConfigPush(new DesiredConfig(NODE, 1, List.of(), List.of(), List.of(), 10,
                new TlsConfig(List.of("ca"), List.of(), List.of())))))
                .contains("\"tls\":{\"caCertificatesPem\":[\"ca\"],\"clientCertificates\":[],\"revoked\":[]}");
    }

    @Test
    void wireNamesAreThoseOfTheProtocol() {
        assertThat(AgentMessages.encode(new Hello(NODE, 42, "0.1.0")))
                .isEqualTo("{\"type\":\"hello\",\"protocolVersion\":1,\"nodeId\":\"" + NODE
                        + "\",\"appliedRevision\":42,\"agentVersion\":\"0.1.0\"}");
        assertThat(AgentMessages.decode("{\"type\":\"usageAck\",\"protocolVersion\":1,\"sequence\":7}"))
                .isEqualTo(new UsageAck(7));
        assertThat(AgentMessages.decode("{\"type\":\"status\",\"protocolVersion\":1,\"listenAddress\":null,\"exports\":[]}"))
                .isEqualTo(new NodeStatus(null, List.of()));
    }

    @Test
    void aHelloMayLeaveTheNodeOutBecauseTheTokenNamesIt() {
        assertThat(AgentMessages.decode("{\"type\":\"hello\",\"protocolVersion\":1,\"appliedRevision\":3}"))
                .isEqualTo(new Hello(null, 3, null));
        Hello anonymous = new Hello(null, 0, "0.1.0");
        assertThat(AgentMessages.encode(anonymous))
                .isEqualTo("{\"type\":\"hello\",\"protocolVersion\":1,\"appliedRevision\":0,\"agentVersion\":\"0.1.0\"}");
        assertThat(AgentMessages.decode(AgentMessages.encode(anonymous))).isEqualTo(anonymous);
    }

    @Test
    void aUsageReportTravelsFlatWithItsSequenceAndRfc3339Interval() {
        UsageReport report = usageReport();
        String text = AgentMessages.encode(report);
        assertThat(text).startsWith("{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1733115600000,"
                + "\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\",\"volumes\":[{\"volumeId\":\"" + NODE + "\"");
        assertThat(AgentMessages.decode(text)).isEqualTo(report);
        assertThat(AgentMessages.typeName(report)).isEqualTo("usage");
    }

    @Test
    void aUsageReportWithoutFiguresIsAnEmptyInterval() {
        assertThat(AgentMessages.decode("{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":3,"
                + "\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\"}"))
                .isEqualTo(new UsageReport(3, Instant.parse("2026-12-02T05:00:00Z"), Instant.parse("2026-12-02T05:00:10Z"),
                        List.of(), List.of(), List.of()));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            // required members missing or null
            "{\"type\":\"usage\",\"protocolVersion\":1,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\"}",
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"to\":\"2026-12-02T05:00:10Z\"}",
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"from\":\"2026-12-02T05:00:00Z\",\"to\":null}",
            // sequence below 1, not an integer
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":0,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\"}",
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1.5,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\"}",
            // an interval that ends before it starts, a time that is not RFC 3339
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"from\":\"2026-12-02T05:00:10Z\",\"to\":\"2026-12-02T05:00:00Z\"}",
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"from\":\"yesterday\",\"to\":\"2026-12-02T05:00:00Z\"}",
            // a volume without an id, a negative count, a count as a string
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\","
                    + "\"volumes\":[{\"readOps\":1}]}",
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\","
                    + "\"volumes\":[{\"volumeId\":\"00000000-0000-0000-0000-000000000001\",\"readOps\":-1}]}",
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\","
                    + "\"volumes\":[{\"volumeId\":\"00000000-0000-0000-0000-000000000001\",\"readOps\":\"1\"}]}",
            // a task without a name, a gap that ends before it starts
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":1,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\","
                    + "\"tasks\":[{\"ops\":1}]}",
            "{\"type\":\"usage\",\"protocolVersion\":1,\"sequence\":9,\"from\":\"2026-12-02T05:00:00Z\",\"to\":\"2026-12-02T05:00:10Z\","
                    + "\"gaps\":[{\"firstSequence\":5,\"lastSequence\":4,\"from\":\"2026-12-02T04:59:00Z\",\"to\":\"2026-12-02T04:59:10Z\"}]}",
            // a usageAck without a sequence, or with one below 1
            "{\"type\":\"usageAck\",\"protocolVersion\":1}",
            "{\"type\":\"usageAck\",\"protocolVersion\":1,\"sequence\":0}"})
    void aUsageReportOrAckThatBreaksItsRulesIsMalformed(String frame) {
        assertCode(frame, ProtocolException.Code.MALFORMED);
    }

    private static UsageReport usageReport() {
        Instant from = Instant.parse("2026-12-02T05:00:00Z");
        return new UsageReport(1_733_115_600_000L, from, from.plusSeconds(10),
                List.of(new UsageReport.VolumeUsage(NODE, 10, 20, 40960, 81920, 120, 900, 4000, 1.5, 2_000_000, 1, 350_000)),
                List.of(new UsageReport.TaskUsage("foreground", 30, 9_000_000, 9_400_000, 700)),
                List.of(new UsageReport.Gap(5, 9, from.minusSeconds(60), from.minusSeconds(10))));
    }

    @Test
    void unknownMembersAreIgnoredWithinAVersion() {
        assertThat(AgentMessages.decode("{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":3,\"later\":true}"))
                .isEqualTo(new Ack(3));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"type\":\"ack\",\"revision\":3}", "{\"type\":\"ack\",\"protocolVersion\":2,\"revision\":3}",
            "{\"type\":\"ack\",\"protocolVersion\":\"1\",\"revision\":3}", "{\"type\":\"ack\",\"protocolVersion\":null}",
            "{\"type\":\"nope\",\"protocolVersion\":99}"})
    void aMissingOrOtherVersionIsUnsupported(String frame) {
        assertCode(frame, ProtocolException.Code.UNSUPPORTED_VERSION);
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"type\":\"usageReport\",\"protocolVersion\":1}", "{\"type\":\"HELLO\",\"protocolVersion\":1}",
            "{\"type\":\"\",\"protocolVersion\":1}"})
    void anUndefinedTypeIsUnknown(String frame) {
        assertCode(frame, ProtocolException.Code.UNKNOWN_TYPE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "garbage", "[1,2]", "42", "null", "{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":3} {}",
            "{\"type\":\"ack\",\"protocolVersion\":1,", "{\"protocolVersion\":1}", "{\"type\":7,\"protocolVersion\":1}",
            "{\"type\":\"ack\",\"protocolVersion\":1}", "{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":null}",
            "{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":\"3\"}",
            "{\"type\":\"ack\",\"protocolVersion\":1,\"revision\":3.5}",
            "{\"type\":\"hello\",\"protocolVersion\":1,\"nodeId\":\"not-a-uuid\",\"appliedRevision\":0}",
            "{\"type\":\"hello\",\"protocolVersion\":1,\"nodeId\":\"00000000-0000-0000-0000-000000000001\",\"appliedRevision\":-1}",
            "{\"type\":\"nack\",\"protocolVersion\":1,\"revision\":3}",
            "{\"type\":\"config\",\"protocolVersion\":1,\"config\":{\"nodeId\":\"00000000-0000-0000-0000-000000000001\"}}"})
    void garbageIsMalformed(String frame) {
        assertCode(frame, ProtocolException.Code.MALFORMED);
    }

    @Test
    void aFrameAboveTheLimitIsTooLargeEvenIfItWouldParse() {
        String padding = "x".repeat(AgentMessages.MAX_FRAME_BYTES);
        assertCode("{\"type\":\"nack\",\"protocolVersion\":1,\"revision\":3,\"reason\":\"" + padding + "\"}",
                ProtocolException.Code.TOO_LARGE);
        // every message within its fields' bounds fits: the most exports of the longest names
        java.util.List<AgentMessage.Export> exports = java.util.stream.IntStream.range(0, AgentMessage.NodeStatus.MAX_EXPORTS)
                .mapToObj(i -> new AgentMessage.Export(java.util.UUID.randomUUID(), "n".repeat(WireText.MAX_NAME), 1, 0))
                .toList();
        AgentMessage.NodeStatus status = new AgentMessage.NodeStatus(null, exports);
        assertThat(AgentMessages.decode(AgentMessages.encode(status))).isEqualTo(status);
        // a config push may be larger (the control plane's side), any other message not
        String config = "{\"type\":\"config\",\"protocolVersion\":1,\"padding\":\"" + padding + "\"}";
        assertThatThrownBy(() -> AgentMessages.decode(config)).isInstanceOfSatisfying(ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ProtocolException.Code.MALFORMED));
        assertCode("{\"type\":\"config\",\"protocolVersion\":1,\"padding\":\""
                + "x".repeat(AgentMessages.MAX_CONFIG_FRAME_BYTES) + "\"}", ProtocolException.Code.TOO_LARGE);
    }

    @Test
    void multiByteCharactersCountAsTheirUtf8Bytes() {
        // three-byte characters: more bytes of UTF-8 than MAX_FRAME_BYTES in fewer chars
        String reason = "€".repeat(AgentMessages.MAX_FRAME_BYTES / 3 + 1);
        assertCode("{\"type\":\"nack\",\"protocolVersion\":1,\"revision\":3,\"reason\":\"" + reason + "\"}",
                ProtocolException.Code.TOO_LARGE);
    }

    @Test
    void anErrorMessageCarriesTheWireCode() {
        ProtocolException e = new ProtocolException(ProtocolException.Code.UNSUPPORTED_VERSION, "speak 1");
        assertThat(e.toErrorMessage()).isEqualTo(new ErrorMessage("unsupported-version", "speak 1"));
    }

    private static void assertCode(String frame, ProtocolException.Code code) {
        assertThatThrownBy(() -> AgentMessages.decode(frame))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(code));
    }
}
