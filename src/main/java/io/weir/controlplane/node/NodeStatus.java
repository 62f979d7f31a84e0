package io.weir.controlplane.node;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.protocol.AgentMessage;
import java.time.Instant;
import java.util.List;

/**
 * Where a node stands against its desired config, as any replica sees it in the shared database.
 *
 * @param connected whether the node's agent holds a live push connection now
 * @param replica the control-plane replica that connection is on, or null
 * @param agentVersion the agent's version from its last hello, or null
 * @param desiredRevision the revision of the node's own latest desired config (not the global
 *     counter: a change that does not touch the node leaves it alone)
 * @param appliedRevision the last revision the agent acknowledged as applied; null before the first
 * @param lastAckAt when that acknowledgement arrived
 * @param lastError why the agent last rejected a snapshot (nack); null once a later one is applied
 * @param dataNode what the data node last reported serving, or null if it never did
 */
@Schema(name = "NodeStatus", description = "A node's agent connection and how far it has applied its desired config.")
public record NodeStatus(
        @Schema(description = "Whether the agent is connected now (to any replica).") boolean connected,
        @Schema(description = "The control-plane replica the agent is connected to; null when not connected.") String replica,
        @Schema(description = "The agent's version, from its last hello.") String agentVersion,
        @Schema(description = "The revision of the node's own latest desired config (the desired-config ETag); "
                + "changes that do not touch the node leave it alone.") long desiredRevision,
        @Schema(description = "The last revision the agent acknowledged as applied; null before the first.") Long appliedRevision,
        @Schema(description = "When the agent last acknowledged a revision.") Instant lastAckAt,
        @Schema(description = "Reason of the agent's last rejection (nack); null once a later revision is applied.") String lastError,
        @Schema(description = "What the data node last reported serving; null if it never reported.") DataNodeReport dataNode) {

    /** Whether the node runs its latest desired config. */
    boolean upToDate() {
        return appliedRevision != null && appliedRevision >= desiredRevision;
    }

    /**
     * A data node's last status message.
     *
     * @param listenAddress where its NBD server listens
     * @param exports what it exports
     * @param reportedAt when the message arrived
     */
    @Schema(name = "DataNodeReport", description = "A data node's last status message: its NBD listen address and exports.")
    public record DataNodeReport(
            @Schema(description = "host:port its NBD server listens on.") String listenAddress,
            @Schema(description = "The exports it serves.") List<AgentMessage.Export> exports,
            @Schema(description = "When the report arrived.") Instant reportedAt) {
    }
}
