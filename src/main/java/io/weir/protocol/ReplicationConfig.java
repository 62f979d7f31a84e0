package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * How a replicated volume's copies stand, as the control plane last knew it: sent to every node
 * that holds a copy, in the volume's {@link VolumeConfig}.
 *
 * <p>The <b>primary</b> serves the NBD export and forwards every write, trim, write-zeroes and
 * flush to the replicas marked {@code inSync}; it acknowledges a client only when each of them has
 * made the request as durable as the client asked. Every other node keeps its copy for the
 * primary and serves no export.
 *
 * <p>The <b>epoch</b> rises with every promotion. Each node-to-node request carries the sender's
 * epoch, and a node that has seen a higher epoch for the volume refuses it, so a deposed primary
 * (which holds an older epoch) gets no write acknowledged.
 *
 * <p>The <b>sync sequence</b> orders the changes of the in-sync set. The primary decides them (a
 * replica that failed a forwarded write leaves the set, one whose resync finished joins it) and
 * reports each with a higher sequence in its node status ({@link AgentMessage.ReplicationStatus});
 * the control plane stores the report of the current primary at the current epoch when its
 * sequence is higher than the stored one, and echoes the sequence here. A primary acknowledges
 * writes without a replica that left the set only once a config echoes the sequence of that
 * change: until then the control plane could still promote that replica.
 *
 * @param epoch the volume's epoch, from 1; raised by each promotion
 * @param primaryNodeId the node that serves the export
 * @param syncSequence the sequence of the in-sync set below, as last reported by the primary (0
 *     before any report)
 * @param copies every node that holds a copy, the primary included
 */
@JsonClassDescription("How a replicated volume's copies stand: the primary, the epoch, and each copy's node and state.")
public record ReplicationConfig(
        @JsonPropertyDescription("The volume's epoch, from 1; raised by each promotion.") long epoch,
        @JsonPropertyDescription("The node that serves the export and forwards writes to the in-sync copies.") UUID primaryNodeId,
        @JsonPropertyDescription("The sequence of the in-sync set, as last reported by the primary; 0 before any report.") long syncSequence,
        @JsonPropertyDescription("Every node that holds a copy, the primary included.") List<Copy> copies) {

    /** Most copies of one volume. */
    public static final int MAX_COPIES = 3;

    public ReplicationConfig {
        Objects.requireNonNull(primaryNodeId, "primaryNodeId");
        copies = List.copyOf(copies);
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be at least 1: " + epoch);
        }
        if (syncSequence < 0) {
            throw new IllegalArgumentException("syncSequence must not be negative: " + syncSequence);
        }
        if (copies.size() > MAX_COPIES) {
            throw new IllegalArgumentException("at most " + MAX_COPIES + " copies: " + copies.size());
        }
        if (copies.stream().noneMatch(c -> c.nodeId().equals(primaryNodeId))) {
            throw new IllegalArgumentException("the primary " + primaryNodeId + " is not one of the copies");
        }
    }

    /** The copy on {@code nodeId}, or null. */
    public @Nullable Copy copy(UUID nodeId) {
        return copies.stream().filter(c -> c.nodeId().equals(nodeId)).findFirst().orElse(null);
    }

    /**
     * One node's copy.
     *
     * @param nodeId the node
     * @param address host:port of the node's replication listener, or null while the node has not
     *     reported one
     * @param inSync whether the copy holds every write acknowledged to a client (the primary's
     *     always does)
     */
    @JsonClassDescription("One node's copy of a replicated volume.")
    public record Copy(
            @JsonPropertyDescription("The node.") UUID nodeId,
            @JsonPropertyDescription("host:port of the node's replication listener; null until it reported one.") @Nullable String address,
            @JsonPropertyDescription("Whether the copy holds every write acknowledged to a client.") boolean inSync) {
        public Copy {
            Objects.requireNonNull(nodeId, "nodeId");
            WireText.check("address", address, WireText.MAX_NAME);
        }
    }
}
