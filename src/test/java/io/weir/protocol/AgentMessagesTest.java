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
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AgentMessagesTest {

    private static final UUID NODE = UUID.fromString("00000000-0000-0000-0000-000000000001");

    @Test
    void everyMessageRoundTripsWithTypeAndVersionFirst() {
        DesiredConfig config = new DesiredConfig(NODE, 7,
                List.of(new TaskShareConfig("foreground", 60, null),
                        new TaskShareConfig("flush", 15, new TaskShareConfig.DynamicShare(0.2, 0.8, 5, 50,
                                TaskShareConfig.Curve.exponential))),
                List.of(new TenantConfig(NODE, "acme", 100, 5000L, null)),
                List.of(new VolumeConfig(NODE, NODE, "db", 4096,
                        new EffectivePolicy(100, 10L, 100L, 200L, null, null, new CostModel(4096)))));
        List<AgentMessage> all = List.of(new Hello(NODE, 0, "0.1.0"), new ConfigPush(config), new Ack(42),
                new Nack(42, "no"), new UsageAck(7),
                new NodeStatus("127.0.0.1:10809", List.of(new Export(NODE, "acme/db", 1 << 30, 2))),
                new ErrorMessage("malformed", "bad"));
        for (AgentMessage m : all) {
            String text = AgentMessages.encode(m);
            assertThat(text).startsWith("{\"type\":\"" + AgentMessages.typeName(m) + "\",\"protocolVersion\":1");
            assertThat(AgentMessages.decode(text)).isEqualTo(m);
        }
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
    @ValueSource(strings = {"{\"type\":\"usage\",\"protocolVersion\":1}", "{\"type\":\"HELLO\",\"protocolVersion\":1}",
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
        assertThatThrownBy(() -> AgentMessages.encode(new Nack(3, padding)))
                .isInstanceOfSatisfying(ProtocolException.class,
                        e -> assertThat(e.code()).isEqualTo(ProtocolException.Code.TOO_LARGE));
    }

    @Test
    void multiByteCharactersCountAsTheirUtf8Bytes() {
        // 400,000 three-byte characters: 1.2 MB of UTF-8 in fewer than MAX_FRAME_BYTES chars.
        String reason = "€".repeat(400_000);
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
