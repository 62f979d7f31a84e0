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
 *     ── {@link CertificateRequest} (a data node: no server certificate, or 2/3 of its lifetime gone) ►
 *     ◄──────────────── {@link CertificateIssued} (signed by the cluster CA)
 *   either way: {@link ErrorMessage}, then a close with a clear reason
 * </pre>
 * Heartbeats are WebSocket ping/pong frames, not messages.
 */
public sealed interface AgentMessage permits AgentMessage.Hello, AgentMessage.ConfigPush, AgentMessage.Ack,
        AgentMessage.Nack, UsageReport, AgentMessage.UsageAck, AgentMessage.NodeStatus, AgentMessage.CertificateRequest,
        AgentMessage.CertificateIssued, AgentMessage.ErrorMessage {

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
            WireText.check("agentVersion", agentVersion, WireText.MAX_VERSION);
            WireText.check("configDigest", configDigest, WireText.MAX_NAME);
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
     * @param reason why, for people (shown as the node's {@code lastError}); free text of at most
     *     {@value WireText#MAX_REASON} characters ({@link WireText#checkText})
     */
    record Nack(long revision, String reason) implements AgentMessage {
        public Nack {
            Objects.requireNonNull(reason, "reason");
            WireText.checkText("reason", reason, WireText.MAX_REASON);
        }
    }

    /**
     * The control plane is done with usage report {@code sequence}: it stored it, or had stored it
     * before (a resend), or refused it as older than its deduplication window (resending cannot
     * help), or refused it for good ({@code refused} says why: its figures break
     * {@link UsageReport}'s bounds, or it could not be stored). The agent forgets the report
     * either way; one refused for good it reports as a gap, with the gaps it carried. An agent
     * that does not know {@code refused} (added within version 1) takes it for an ack. JSON type
     * {@code usageAck}.
     *
     * @param sequence the report's sequence number
     * @param refused why the report was refused and not stored, or null (left out) when it was
     *     stored, a duplicate or expired
     */
    record UsageAck(long sequence, @JsonInclude(JsonInclude.Include.NON_NULL) String refused) implements AgentMessage {
        public UsageAck {
            if (sequence < 1) {
                throw new IllegalArgumentException("sequence must be at least 1: " + sequence);
            }
            WireText.checkText("refused", refused, WireText.MAX_REASON);
        }

        /** The report is stored (or was, or is too old to store). */
        public UsageAck(long sequence) {
            this(sequence, null);
        }
    }

    /**
     * What a data node serves now: its NBD listen address and its exports, and for replicated
     * volumes its replication listener and, as their primary, how their copies stand. Optional for
     * a plain agent. JSON type {@code status}. At most {@value #MAX_EXPORTS} exports and as many
     * replication entries; strings keep {@link WireText}'s rule. (Whether each export is one of the
     * node's placements only the control plane can tell: it keeps only those.)
     *
     * @param listenAddress host:port the data node's NBD server listens on, or null
     * @param exports the exports it serves
     * @param replicationAddress host:port its replication listener (node-to-node, for the copies of
     *     replicated volumes) listens on, or null (left out): a node without one
     * @param replication for each replicated volume this node is the primary of, the state of its
     *     copies; empty (left out) when none
     */
    record NodeStatus(String listenAddress, List<Export> exports,
            @JsonInclude(JsonInclude.Include.NON_NULL) @org.jspecify.annotations.Nullable String replicationAddress,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<ReplicationStatus> replication) implements AgentMessage {
        /** Most exports in one status. */
        public static final int MAX_EXPORTS = 4096;

        public NodeStatus {
            WireText.check("listenAddress", listenAddress, WireText.MAX_NAME);
            WireText.check("replicationAddress", replicationAddress, WireText.MAX_NAME);
            exports = exports == null ? List.of() : List.copyOf(exports);
            replication = replication == null ? List.of() : List.copyOf(replication);
            if (exports.size() > MAX_EXPORTS) {
                throw new IllegalArgumentException("exports has " + exports.size() + " entries; at most " + MAX_EXPORTS
                        + " are accepted");
            }
            if (replication.size() > MAX_EXPORTS) {
                throw new IllegalArgumentException("replication has " + replication.size() + " entries; at most "
                        + MAX_EXPORTS + " are accepted");
            }
        }

        /** The status of a node without replicated volumes. */
        public NodeStatus(String listenAddress, List<Export> exports) {
            this(listenAddress, exports, null, List.of());
        }
    }

    /**
     * How the copies of one replicated volume stand, as its primary sees them. The control plane
     * keeps it only from the volume's primary at the volume's current epoch, and takes its in-sync
     * set only when {@code syncSequence} is above the one it stored (see {@link ReplicationConfig}).
     *
     * @param volumeId the volume
     * @param epoch the epoch the primary serves it at
     * @param syncSequence the sequence of the in-sync set in {@code copies}
     * @param copies every copy but the primary's own
     */
    record ReplicationStatus(UUID volumeId, long epoch, long syncSequence, List<CopyStatus> copies) {
        public ReplicationStatus {
            Objects.requireNonNull(volumeId, "volumeId");
            copies = List.copyOf(copies);
            if (epoch < 1 || syncSequence < 0) {
                throw new IllegalArgumentException("epoch must be at least 1 and syncSequence not negative: " + epoch
                        + ", " + syncSequence);
            }
            if (copies.size() > ReplicationConfig.MAX_COPIES) {
                throw new IllegalArgumentException("at most " + ReplicationConfig.MAX_COPIES + " copies: " + copies.size());
            }
        }
    }

    /**
     * One copy of a replicated volume, as its primary sees it.
     *
     * @param nodeId the node that holds it
     * @param state in sync, resyncing, or out of sync (unreachable, or waiting to resync)
     * @param resyncRemainingBytes while resyncing or out of sync: the bytes it still has to copy
     *     (its dirty regions); 0 in sync
     */
    record CopyStatus(UUID nodeId, CopyState state, long resyncRemainingBytes) {
        public CopyStatus {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(state, "state");
            if (resyncRemainingBytes < 0) {
                throw new IllegalArgumentException("resyncRemainingBytes must not be negative: " + resyncRemainingBytes);
            }
        }
    }

    /** The state of one copy of a replicated volume. */
    enum CopyState {
        /** Holds every write acknowledged to a client. */
        inSync,
        /** Reachable, receives every new write, and catches up on the regions it missed. */
        resyncing,
        /** Missing writes and not catching up now (unreachable). */
        outOfSync
    }

    /**
     * One export of a data node.
     *
     * @param volumeId the volume it serves
     * @param name export name, {@code tenant/volume}
     * @param sizeBytes size in bytes, from 0 to {@value #MAX_SIZE_BYTES} (2^62)
     * @param clients NBD clients connected now, from 0 to {@value #MAX_CLIENTS}
     * @param usedBytes bytes allocated in the volume's file (its data extents, as
     *     {@code base:allocation} reports them), from 0 to {@value #MAX_SIZE_BYTES}; null if the
     *     node does not report it. The control plane keeps its history and scales per-GiB terms of
     *     capacity basis {@code used} with it ({@link CapacityQos})
     */
    record Export(UUID volumeId, String name, long sizeBytes, int clients,
            @org.jspecify.annotations.Nullable Long usedBytes) {
        /** Largest export size: 2^62 bytes. */
        public static final long MAX_SIZE_BYTES = 1L << 62;

        /** Most clients of one export. */
        public static final int MAX_CLIENTS = 1 << 20;

        public Export {
            Objects.requireNonNull(volumeId, "volumeId");
            WireText.check("export name", name, WireText.MAX_NAME);
            if (sizeBytes < 0 || sizeBytes > MAX_SIZE_BYTES) {
                throw new IllegalArgumentException("sizeBytes of export " + volumeId + " is not from 0 to " + MAX_SIZE_BYTES
                        + ": " + sizeBytes);
            }
            if (clients < 0 || clients > MAX_CLIENTS) {
                throw new IllegalArgumentException("clients of export " + volumeId + " is not from 0 to " + MAX_CLIENTS
                        + ": " + clients);
            }
            if (usedBytes != null && (usedBytes < 0 || usedBytes > MAX_SIZE_BYTES)) {
                throw new IllegalArgumentException("usedBytes of export " + volumeId + " is not from 0 to " + MAX_SIZE_BYTES
                        + ": " + usedBytes);
            }
        }

        /** An export whose used bytes are not reported. */
        public Export(UUID volumeId, String name, long sizeBytes, int clients) {
            this(volumeId, name, sizeBytes, clients, null);
        }
    }

    /**
     * A data node asks for its NBD server certificate: a PKCS#10 request for a key made on the
     * node, which never leaves it. Sent after {@code hello} when the node has no certificate or
     * two thirds of its certificate's lifetime have passed; at most one outstanding per
     * connection. The control plane decides the certificate's names (the node's id and registered
     * address), not the request. JSON type {@code certificateRequest}.
     *
     * @param csrPem the request, PEM ({@code BEGIN CERTIFICATE REQUEST})
     */
    record CertificateRequest(String csrPem) implements AgentMessage {
        public CertificateRequest {
            Objects.requireNonNull(csrPem, "csrPem");
        }
    }

    /**
     * The answer to a {@link CertificateRequest}: the node's server certificate and the cluster CA
     * that signed it. JSON type {@code certificate}. A request the control plane cannot sign is
     * answered with {@link ErrorMessage} code {@code malformed} and a close instead.
     *
     * @param certificatePem the server certificate, PEM
     * @param caCertificatePem the cluster CA certificate, PEM
     */
    record CertificateIssued(String certificatePem, String caCertificatePem) implements AgentMessage {
        public CertificateIssued {
            Objects.requireNonNull(certificatePem, "certificatePem");
            Objects.requireNonNull(caCertificatePem, "caCertificatePem");
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
            WireText.check("code", code, WireText.MAX_NAME);
            WireText.checkText("reason", reason, WireText.MAX_REASON);
        }
    }
}
