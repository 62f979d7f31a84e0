package io.weir.controlplane.node;

import io.weir.protocol.AgentMessage;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.UUID;

/**
 * What the agent channel knows of nodes' agents, read from the shared database so that every
 * replica answers alike. The push feature provides the implementation as a bean; while there is
 * none, no node counts as connected.
 */
public interface NodeConnections {

    /**
     * The agents of these nodes, by node id; a node whose agent never connected nor reported has no
     * entry.
     */
    Map<UUID, AgentPresence> presence(Collection<UUID> nodeIds);

    /**
     * One node's agent.
     *
     * @param replica the control-plane replica its live connection is on, or null when it is not
     *     connected (a connection on a replica that stopped beating counts as none)
     * @param agentVersion the version its last hello gave, or null
     * @param connectedAt when the live connection opened, or null
     * @param report the data node's last status message, or null
     * @param reportedAt when that arrived, or null
     */
    record AgentPresence(String replica, String agentVersion, Instant connectedAt, AgentMessage.NodeStatus report,
            Instant reportedAt) {
    }
}
