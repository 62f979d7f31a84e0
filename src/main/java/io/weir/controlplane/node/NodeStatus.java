package io.weir.controlplane.node;

import org.jspecify.annotations.Nullable;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;

/**
 * Where a node stands against the desired config.
 *
 * @param connected whether the node's agent holds a live push connection now
 * @param desiredRevision the revision the node should run: the current global config revision
 * @param appliedRevision the last revision the agent acknowledged as applied; null before the first
 * @param lastAckAt when that acknowledgement arrived
 * @param lastError why the agent last rejected a snapshot (nack); null once a later one is applied
 */
@Schema(name = "NodeStatus", description = "A node's connection and how far it has applied the desired config.")
public record NodeStatus(
        @Schema(description = "Whether the agent is connected now.") boolean connected,
        @Schema(description = "The current global config revision, which the node should run.") long desiredRevision,
        @Schema(description = "The last revision the agent acknowledged; null before the first.") @Nullable Long appliedRevision,
        @Schema(description = "When the agent last acknowledged a revision.") @Nullable Instant lastAckAt,
        @Schema(description = "Reason of the agent's last rejection; null once a later revision is applied.") @Nullable String lastError) {
}
