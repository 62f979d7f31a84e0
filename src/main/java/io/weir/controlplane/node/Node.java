package io.weir.controlplane.node;

import io.weir.controlplane.database.VersionedEntity;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.MapKeyColumn;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.hibernate.annotations.BatchSize;

/**
 * A data node: a storage server that runs an agent and serves the volumes placed on it.
 *
 * <p>Name, address and labels are what an administrator writes; changing them bumps the entity
 * version (the one the ETag names; the tag also digests the representation). The status columns
 * ({@code appliedRevision}, {@code lastAckAt}, {@code lastError}) are written by the node's agent through {@link NodeService#recordAnswers}
 * (or {@code recordApplied} and {@code recordRejected}), with bulk updates that leave the version alone, so an
 * agent acknowledging a snapshot never makes an administrator's {@code If-Match} stale.
 */
@Entity
@Table(name = "data_node")
public class Node extends VersionedEntity {

    @Column(nullable = false, unique = true, length = 63)
    private String name;

    @Column
    private String address;

    /**
     * Free-form key/value labels, for selecting nodes; lazily loaded in batches for lists. A label
     * change increments the version like any other field. (Hibernate also increments it once when
     * it first inserts a non-empty label set, so a node created with labels starts at version 1;
     * the ETag always names the stored version, so clients see nothing but a different number.)
     */
    @ElementCollection
    @CollectionTable(name = "data_node_label", joinColumns = @JoinColumn(name = "node_id"))
    @MapKeyColumn(name = "label_key", length = 63)
    @Column(name = "label_value", nullable = false)
    @BatchSize(size = 64)
    private Map<String, String> labels = new HashMap<>();

    /** The last revision the node's agent acknowledged as applied; null before the first ack. */
    @Column(name = "applied_revision", insertable = false, updatable = false)
    private Long appliedRevision;

    @Column(name = "last_ack_at", insertable = false, updatable = false)
    private Instant lastAckAt;

    /** The reason of the agent's last rejection (nack), cleared by the next ack. */
    @Column(name = "last_error", insertable = false, updatable = false)
    private String lastError;

    protected Node() {
    }

    Node(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    void setName(String name) {
        this.name = name;
    }

    public String getAddress() {
        return address;
    }

    void setAddress(String address) {
        this.address = address;
    }

    /** The labels, unmodifiable; load inside a transaction. */
    public Map<String, String> getLabels() {
        return java.util.Collections.unmodifiableMap(labels);
    }

    /** Replaces the labels, touching the stored rows only if they differ. */
    void setLabels(Map<String, String> newLabels) {
        Map<String, String> wanted = newLabels == null ? Map.of() : newLabels;
        if (!Objects.equals(new HashMap<>(labels), new HashMap<>(wanted))) {
            labels.clear();
            labels.putAll(wanted);
        }
    }

    public Long getAppliedRevision() {
        return appliedRevision;
    }

    public Instant getLastAckAt() {
        return lastAckAt;
    }

    public String getLastError() {
        return lastError;
    }
}
