package io.weir.controlplane.node;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * What a node's agent last answered to the snapshots pushed to it, as it is to be stored on the
 * node: the revision it applied and when it said so, if it acknowledged one, its last error (null
 * once it acknowledged a snapshot after its last rejection), and when its last answer arrived.
 * Several answers of one node fold into one with {@link #then}, so that a writer may store many at
 * a time and lose nothing.
 *
 * <p>The times are the receiving replica's clock. They also order answers that different
 * replicas store (an agent that reconnects answers another replica, and the first one's write may
 * land last): a stored ack is replaced only by a later ack, a stored error only by a later answer
 * ({@code NodeService.recordAnswers}). Replicas' clocks must agree to well within an agent's
 * reconnect time (NTP does).
 *
 * @param nodeId the node whose agent answered
 * @param appliedRevision the revision it applied, or null if it only rejected (the stored one stays)
 * @param ackAt when it acknowledged {@code appliedRevision}; null exactly when that is null
 * @param lastError the reason of its last rejection since its last acknowledgement, or null
 * @param answeredAt when its last answer (ack or rejection) arrived
 */
public record AgentAnswer(UUID nodeId, @Nullable Long appliedRevision, @Nullable Instant ackAt, @Nullable String lastError,
        Instant answeredAt) {

    /** Longest rejection reason stored; longer ones are cut (the column holds 2048 characters). */
    public static final int MAX_ERROR_LENGTH = 2048;

    public AgentAnswer {
        Objects.requireNonNull(nodeId, "nodeId");
        if ((appliedRevision == null) != (ackAt == null)) {
            throw new IllegalArgumentException("appliedRevision and ackAt go together");
        }
        Objects.requireNonNull(answeredAt, "answeredAt");
    }

    /** The agent acknowledged {@code revision} at {@code at}: it is in force, and no error stands. */
    public static AgentAnswer applied(UUID nodeId, long revision, Instant at) {
        return new AgentAnswer(nodeId, revision, at, null, at);
    }

    /**
     * The agent rejected {@code revision} at {@code at} and kept its previous config, for
     * {@code reason}. NUL characters (valid in JSON, refused in a PostgreSQL text column) are
     * dropped from it.
     */
    public static AgentAnswer rejected(UUID nodeId, long revision, @Nullable String reason, Instant at) {
        String said = reason == null ? "" : reason.replace("\u0000", "");
        String error = "revision " + revision + ": " + (said.isBlank() ? "rejected" : said);
        return new AgentAnswer(nodeId, null, null, error.length() > MAX_ERROR_LENGTH ? error.substring(0, MAX_ERROR_LENGTH) : error,
                at);
    }

    /**
     * This answer followed by {@code later} of the same node (as one replica received them): an
     * acknowledgement replaces all before it; a rejection keeps the applied revision before it and
     * sets the error.
     */
    public AgentAnswer then(AgentAnswer later) {
        if (!later.nodeId.equals(nodeId)) {
            throw new IllegalArgumentException("answers of two nodes: " + nodeId + ", " + later.nodeId);
        }
        return later.appliedRevision != null ? later
                : new AgentAnswer(nodeId, appliedRevision, ackAt, later.lastError, later.answeredAt);
    }
}
