package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One message of the agent channel: a text frame of one JSON object on the WebSocket between a
 * data node's agent and the control plane ({@code GET /api/v1/agent/connect}). Encode and decode
 * them with {@link AgentMessages}, which adds and checks {@code type} and {@code protocolVersion}.
 *
 * <h2>The conversation</h2>
 * <pre>
 *   agent                                   control plane
 *     ── upgrade, Authorization: Bearer &lt;node token&gt; ──►   (refused before the upgrade otherwise)
 *     ── {@link Hello} (applied revision and digest) ──────►
 *     ◄──────────────── {@link ConfigPush} (unless the agent has exactly it)
 *     ── {@link Ack} / {@link Nack} (revision) ────────────►
 *     ◄──────────────── {@link ConfigPush} (whenever the node's desired config changes, and only then)
 *     ── {@link NodeStatus} (data nodes: on connect and on change) ►
 *     ── {@link UsageReport} (every reporting interval; unacked ones again after a reconnect) ►
 *     ◄──────────────── {@link UsageAck} (the report is stored, or was already, or is too old)
 *   either way: {@link ErrorMessage}, then a close with a clear reason
 * </pre>
 * Heartbeats are WebSocket ping/pong frames, not messages.
 */
public sealed interface AgentMessage permits AgentMessage.Hello, AgentMessage.ConfigPush, AgentMessage.Ack,
        AgentMessage.Nack, UsageReport, AgentMessage.UsageAck, AgentMessage.NodeStatus, AgentMessage.ErrorMessage {

    /**
     * The agent's first message after the upgrade. JSON type {@code hello}.
     *
     * @param nodeId the node the agent believes it runs for, or {@code null} if it does not know
     *     yet (a node token is bound to one node, so the control plane takes the node from the
     *     token); when present it must be the token's node, or the control plane refuses; left
     *     out of the frame when null
     * @param appliedRevision the revision of the config it enforces now; 0 = nothing applied yet
     * @param agentVersion the agent's software version, for people and logs
     * @param configDigest {@link ConfigDigest#of} the config it enforces now, or {@code null} if
     *     none (left out of the frame then; an agent that never sends it is judged by the revision
     *     alone). The control plane sends the node's desired config unless both the revision and
     *     the digest match it.
     */
    record Hello(@JsonInclude(JsonInclude.Include.NON_NULL) UUID nodeId, long appliedRevision, String agentVersion,
            @JsonInclude(JsonInclude.Include.NON_NULL) String configDigest) implements AgentMessage {
        public Hello {
            if (appliedRevision < 0) {
                throw new IllegalArgumentException("appliedRevision must be >= 0: " + appliedRevision);
            }
        }

        /** A hello without a {@linkplain #configDigest digest}. */
        public Hello(UUID nodeId, long appliedRevision, String agentVersion) {
            this(nodeId, appliedRevision, agentVersion, null);
        }
    }

    /**
     * A full desired-config snapshot for the agent's node, exactly as served by
     * {@code GET /api/v1/nodes/{id}/desired-config}. JSON type {@code config}.
     *
     * @param config the snapshot; its {@code revision} is what the agent acks or nacks
     */
    record ConfigPush(DesiredConfig config) implements AgentMessage {
        public ConfigPush {
            Objects.requireNonNull(config, "config");
        }
    }

    /**
     * The agent applied the snapshot of this revision. JSON type {@code ack}.
     *
     * @param revision the applied snapshot's revision
     */
    record Ack(long revision) implements AgentMessage {
    }

    /**
     * The agent refused the snapshot of this revision and keeps its previous config. JSON type
     * {@code nack}.
     *
     * @param revision the refused snapshot's revision
     * @param reason why, for people (shown as the node's {@code lastError})
     */
    record Nack(long revision, String reason) implements AgentMessage {
        public Nack {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * The control plane is done with usage report {@code sequence}: it stored it, or had stored it
     * before (a resend), or refused it as older than its deduplication window (resending cannot
     * help). The agent forgets the report. JSON type {@code usageAck}.
     *
     * @param sequence the report's sequence number
     */
    record UsageAck(long sequence) implements AgentMessage {
        public UsageAck {
            if (sequence < 1) {
                throw new IllegalArgumentException("sequence must be at least 1: " + sequence);
            }
        }
    }

    /**
     * What a data node serves now: its NBD listen address and its exports. Optional for a plain
     * agent. JSON type {@code status}.
     *
     * @param listenAddress host:port the data node's NBD server listens on, or null
     * @param exports the exports it serves
     */
    record NodeStatus(String listenAddress, List<Export> exports) implements AgentMessage {
        public NodeStatus {
            exports = exports == null ? List.of() : List.copyOf(exports);
        }
    }

    /**
     * One export of a data node.
     *
     * @param volumeId the volume it serves
     * @param name export name, {@code tenant/volume}
     * @param sizeBytes size in bytes
     * @param clients NBD clients connected now
     * @param usedBytes bytes allocated in the volume's file (its data extents, as
     *     {@code base:allocation} reports them); null if the node does not report it. The control
     *     plane keeps its history and scales per-GiB terms of capacity basis {@code used} with it
     *     ({@link CapacityQos})
     */
    record Export(UUID volumeId, String name, long sizeBytes, int clients,
            @org.jspecify.annotations.Nullable Long usedBytes) {

        /** An export whose used bytes are not reported. */
        public Export(UUID volumeId, String name, long sizeBytes, int clients) {
            this(volumeId, name, sizeBytes, clients, null);
        }
    }

    /**
     * The sender refuses what it received; a close with {@code reason} follows. JSON type
     * {@code error}.
     *
     * @param code one of {@link ProtocolException.Code}'s wire names, or another short code
     * @param reason for people
     */
    record ErrorMessage(String code, String reason) implements AgentMessage {
        public ErrorMessage {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(reason, "reason");
        }
    }
}
