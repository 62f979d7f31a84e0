package io.weir.agent;

import java.time.Duration;
import java.util.UUID;

/**
 * What a {@link QosAgent} knows about itself, at one moment.
 *
 * @param nodeId the node the agent runs for: the one its builder named, else the one named by the
 *     last snapshot it applied (pushed, or cached in its state directory); null while it knows none
 * @param connected whether it holds a live connection to the control plane now
 * @param appliedRevision the revision of the snapshot in force; 0 before the first
 * @param lastError the most recent problem (a refused snapshot, a lost connection, a corrupt state
 *     file, ...), or null if there has been none
 * @param sinceLastContact time since the control plane was last heard from (a message or a pong);
 *     null if it never was
 */
public record AgentState(UUID nodeId, boolean connected, long appliedRevision, String lastError, Duration sinceLastContact) {
}
