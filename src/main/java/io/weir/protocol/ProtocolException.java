package io.weir.protocol;

import java.util.Objects;

/**
 * A frame of the agent channel that {@link AgentMessages#decode} refuses. The {@link #code()}
 * goes into the {@code error} message sent back before the connection is closed.
 */
public final class ProtocolException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a frame is refused; {@link #wireName()} is the {@code code} of the error message. */
    public enum Code {
        /** Not JSON, not one object, or a message whose fields are missing or of the wrong type. */
        MALFORMED("malformed"),
        /** A {@code type} this protocol version does not define. */
        UNKNOWN_TYPE("unknown-type"),
        /** {@code protocolVersion} missing, or not {@link AgentMessages#PROTOCOL_VERSION}. */
        UNSUPPORTED_VERSION("unsupported-version"),
        /** Longer than {@link AgentMessages#MAX_FRAME_BYTES}. */
        TOO_LARGE("too-large"),
        /** A well-formed message that is not allowed at this point of the conversation. */
        UNEXPECTED("unexpected");

        private final String wireName;

        Code(String wireName) {
            this.wireName = wireName;
        }

        /** The code as sent in an {@code error} message. */
        public String wireName() {
            return wireName;
        }
    }

    private final Code code;
    /** The sequence of the usage report refused, or 0. */
    private final long usageSequence;

    /** A refusal with this code and message. */
    public ProtocolException(Code code, String message) {
        this(code, message, null, 0);
    }

    /** A refusal with this code and message, caused by {@code cause}. */
    public ProtocolException(Code code, String message, Throwable cause) {
        this(code, message, cause, 0);
    }

    /**
     * A refusal of one usage report whose sequence could be read: the receiver may refuse that
     * report alone ({@code usageAck} with {@code refused}) and keep the connection.
     *
     * @param usageSequence the report's sequence, at least 1; 0 for a refusal of the frame
     */
    public ProtocolException(Code code, String message, Throwable cause, long usageSequence) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
        this.usageSequence = Math.max(0, usageSequence);
    }

    /**
     * The sequence of the usage report this refuses, when the frame was a usage report whose
     * sequence could be read and only its figures are refused; 0 otherwise.
     */
    public long usageSequence() {
        return usageSequence;
    }

    /** Why the frame is refused. */
    public Code code() {
        return code;
    }

    /** The error message to send back. */
    public AgentMessage.ErrorMessage toErrorMessage() {
        return new AgentMessage.ErrorMessage(code.wireName(), WireText.clean(getMessage(), WireText.MAX_REASON));
    }
}
