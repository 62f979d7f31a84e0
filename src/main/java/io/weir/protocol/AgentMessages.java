package io.weir.protocol;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The codec of the agent channel: one {@link AgentMessage} per WebSocket text frame, as one JSON
 * object with its {@code type} and {@code protocolVersion} first:
 *
 * <pre>{@code
 * {"type":"ack","protocolVersion":1,"revision":42}
 * }</pre>
 *
 * <p>{@link #decode} is strict about what decides how a frame is read, and refuses with a
 * {@link ProtocolException} whose {@link ProtocolException#code() code} the receiver sends back in
 * an {@code error} message before it closes the connection:
 * <ul>
 *   <li>a frame longer than {@link #MAX_FRAME_BYTES} (UTF-8), {@link #MAX_CONFIG_FRAME_BYTES} for a
 *       config push: {@code too-large};</li>
 *   <li>{@code protocolVersion} missing or other than {@link #PROTOCOL_VERSION}:
 *       {@code unsupported-version} (checked before the type, so that a newer agent learns that
 *       its version is the problem);</li>
 *   <li>a {@code type} this version does not define: {@code unknown-type};</li>
 *   <li>not JSON, not one object, a key twice in one object, trailing tokens, a required field
 *       missing or null, a value of the wrong JSON type, a value the message's own rules refuse
 *       (a usage report outside {@link UsageReport}'s bounds, a string with a NUL, see
 *       {@link WireText}): {@code malformed}. When the frame is a usage report whose
 *       {@code sequence} can be read, the exception carries it
 *       ({@link ProtocolException#usageSequence()}), so that the receiver may refuse that report
 *       alone.</li>
 * </ul>
 * Refusals are worded here, not by the JSON parser: they name the field and the rule.
 * Fields a message does not define are ignored, so that a field can be added within a version;
 * anything a reader must understand needs a new version.
 *
 * <p>Thread-safe; the methods are static and share one immutable {@code JsonMapper}.
 */
public final class AgentMessages {

    /** The protocol version this build speaks; a frame with another version is refused. */
    public static final int PROTOCOL_VERSION = 1;

    /**
     * Largest frame of any message but a config push, in UTF-8 bytes (8 MiB): what an agent may
     * send. The largest usage report the protocol allows ({@link UsageReport#MAX_VOLUMES} volumes,
     * every report naming every volume of the node) takes about 6 MiB.
     */
    public static final int MAX_FRAME_BYTES = 8 << 20;

    /**
     * Largest frame of a config push, the control plane's snapshot of a node, in UTF-8 bytes (32
     * MiB): a node of {@link UsageReport#MAX_VOLUMES} volumes with long names and every limit set
     * takes about 12 MiB, and the cluster's revoked client certificates come with it.
     */
    public static final int MAX_CONFIG_FRAME_BYTES = 32 << 20;

    /** JSON member that names the message type. */
    public static final String TYPE = "type";

    /** JSON member that carries the protocol version. */
    public static final String VERSION = "protocolVersion";

    /** Wire type name of each message class. */
    private static final Map<Class<? extends AgentMessage>, String> TYPE_NAMES = Map.of(
            AgentMessage.Hello.class, "hello",
            AgentMessage.ConfigPush.class, "config",
            AgentMessage.Ack.class, "ack",
            AgentMessage.Nack.class, "nack",
            UsageReport.class, "usage",
            AgentMessage.UsageAck.class, "usageAck",
            AgentMessage.NodeStatus.class, "status",
            AgentMessage.CertificateRequest.class, "certificateRequest",
            AgentMessage.CertificateIssued.class, "certificate",
            AgentMessage.ErrorMessage.class, "error");

    /** Message class of each wire type name. */
    private static final Map<String, Class<? extends AgentMessage>> TYPES = Map.of(
            "hello", AgentMessage.Hello.class,
            "config", AgentMessage.ConfigPush.class,
            "ack", AgentMessage.Ack.class,
            "nack", AgentMessage.Nack.class,
            "usage", UsageReport.class,
            "usageAck", AgentMessage.UsageAck.class,
            "status", AgentMessage.NodeStatus.class,
            "certificateRequest", AgentMessage.CertificateRequest.class,
            "certificate", AgentMessage.CertificateIssued.class,
            "error", AgentMessage.ErrorMessage.class);

    /** Members of each wire type that must be present and non-null. */
    private static final Map<String, List<String>> REQUIRED = Map.of(
            "hello", List.of("appliedRevision"),
            "config", List.of("config"),
            "ack", List.of("revision"),
            "nack", List.of("revision", "reason"),
            "usage", List.of("sequence", "from", "to"),
            "usageAck", List.of("sequence"),
            "status", List.of(),
            "certificateRequest", List.of("csrPem"),
            "certificate", List.of("certificatePem", "caCertificatePem"),
            "error", List.of("code", "reason"));

    /** Strict about JSON types (no "1" for 1, no 1.5 for a long), lenient about unknown members. */
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private AgentMessages() {
    }

    /** The wire type name of {@code message}, e.g. {@code "hello"}. */
    public static String typeName(AgentMessage message) {
        return TYPE_NAMES.get(message.getClass());
    }

    /**
     * Encodes one message as the text of one frame.
     *
     * @throws ProtocolException with code {@code too-large} if the frame would exceed
     *     {@link #MAX_FRAME_BYTES} ({@link #MAX_CONFIG_FRAME_BYTES} for a config push)
     */
    public static String encode(AgentMessage message) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put(TYPE, typeName(message));
        node.put(VERSION, PROTOCOL_VERSION);
        node.setAll((ObjectNode) MAPPER.valueToTree(message));
        String text = MAPPER.writeValueAsString(node);
        checkSize(text, message instanceof AgentMessage.ConfigPush ? MAX_CONFIG_FRAME_BYTES : MAX_FRAME_BYTES);
        return text;
    }

    /**
     * Decodes the text of one frame.
     *
     * @throws ProtocolException if the frame is refused; see the class documentation for the codes
     */
    public static AgentMessage decode(String frame) {
        checkSize(frame, MAX_CONFIG_FRAME_BYTES); // the type's own bound once it is known
        JsonNode tree;
        try {
            tree = MAPPER.readTree(frame);
        } catch (JacksonException e) {
            throw new ProtocolException(ProtocolException.Code.MALFORMED, "not valid JSON: " + describe(e), e);
        }
        if (tree == null || !tree.isObject()) {
            throw new ProtocolException(ProtocolException.Code.MALFORMED, "a frame must hold one JSON object");
        }
        JsonNode version = tree.get(VERSION);
        if (version == null || version.isNull()) {
            throw new ProtocolException(ProtocolException.Code.UNSUPPORTED_VERSION,
                    "protocolVersion is missing; this side speaks version " + PROTOCOL_VERSION);
        }
        if (!version.isIntegralNumber() || !version.canConvertToInt() || version.intValue() != PROTOCOL_VERSION) {
            throw new ProtocolException(ProtocolException.Code.UNSUPPORTED_VERSION,
                    "protocolVersion " + version + " is not supported; this side speaks version " + PROTOCOL_VERSION);
        }
        JsonNode type = tree.get(TYPE);
        if (type == null || !type.isString()) {
            throw new ProtocolException(ProtocolException.Code.MALFORMED, "type is missing or not a string");
        }
        String typeName = type.stringValue();
        Class<? extends AgentMessage> target = TYPES.get(typeName);
        if (target == null) {
            throw new ProtocolException(ProtocolException.Code.UNKNOWN_TYPE,
                    "unknown message type '" + abbreviate(typeName) + "'");
        }
        if (target != AgentMessage.ConfigPush.class) {
            checkSize(frame, MAX_FRAME_BYTES);
        }
        long usageSequence = target == UsageReport.class ? readableSequence(tree) : 0;
        for (String member : REQUIRED.get(typeName)) {
            JsonNode value = tree.get(member);
            if (value == null || value.isNull()) {
                throw new ProtocolException(ProtocolException.Code.MALFORMED,
                        typeName + " message needs '" + member + "'", null, usageSequence);
            }
        }
        try {
            return MAPPER.treeToValue(tree, target);
        } catch (JacksonException e) {
            throw new ProtocolException(ProtocolException.Code.MALFORMED,
                    "invalid " + typeName + " message: " + describe(e), e, usageSequence);
        }
    }

    /** The {@code sequence} of a usage report's tree if it is an integer of at least 1, else 0. */
    private static long readableSequence(JsonNode tree) {
        JsonNode s = tree.get("sequence");
        return s != null && s.isIntegralNumber() && s.canConvertToLong() && s.longValue() >= 1 ? s.longValue() : 0;
    }

    /** Why Jackson refused, in this codec's words: the message's own rule, or the field and what is wrong. */
    private static String describe(JacksonException e) {
        for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
            if (t instanceof IllegalArgumentException || t instanceof NullPointerException) {
                // A record's own rule (UsageReport's bounds, WireText): worded by this package.
                return abbreviate(String.valueOf(t.getMessage()));
            }
        }
        String path = path(e);
        if (e instanceof StreamReadException && String.valueOf(e.getOriginalMessage()).startsWith("Duplicate")) {
            return "a key appears twice in one object" + where(e);
        }
        if (e instanceof InputCoercionException) {
            return "'" + path + "' is a number out of range";
        }
        if (e instanceof MismatchedInputException) {
            return "'" + path + "' is missing, null or of the wrong JSON type";
        }
        if (e instanceof StreamReadException) {
            return "syntax error" + where(e);
        }
        return "'" + path + "' is not valid";
    }

    private static String path(JacksonException e) {
        StringBuilder b = new StringBuilder();
        for (JacksonException.Reference ref : e.getPath()) {
            if (ref.getPropertyName() != null) {
                b.append(b.isEmpty() ? "" : ".").append(ref.getPropertyName());
            } else {
                b.append('[').append(ref.getIndex()).append(']');
            }
        }
        return b.isEmpty() ? "$" : abbreviate(b.toString());
    }

    private static String where(JacksonException e) {
        TokenStreamLocation l = e.getLocation();
        return l == null || l.getLineNr() < 1 ? "" : " at line " + l.getLineNr() + ", column " + l.getColumnNr();
    }

    private static void checkSize(String text, int max) {
        // A char takes at most 3 UTF-8 bytes (a surrogate pair, 2 chars, takes 4): count only when it may matter.
        if ((long) text.length() * 3 > max && text.getBytes(StandardCharsets.UTF_8).length > max) {
            throw new ProtocolException(ProtocolException.Code.TOO_LARGE, "frame exceeds " + max + " bytes");
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 100 ? s : s.substring(0, 100) + "...";
    }
}
