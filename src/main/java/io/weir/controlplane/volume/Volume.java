package io.weir.controlplane.volume;

import io.weir.controlplane.database.VersionedEntity;
import io.weir.controlplane.policy.LimitColumns;
import io.weir.controlplane.policy.ReservationBurstColumns;
import io.weir.protocol.CapacityQos;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.Table;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.hibernate.annotations.BatchSize;
import org.hibernate.annotations.OptimisticLock;

/**
 * A volume: one flow of the foreground task, exported over NBD by its primary node.
 *
 * <p>A volume keeps {@code replicas} copies, one per node it is placed on; with more than one,
 * its primary serves the export and replicates to the others (see {@link ReplicationIntake} and
 * {@link ReplicationFailover} for the epoch, the sync sequence and the per-copy state, which live
 * in SQL-written columns).
 *
 * <p>The override columns hold per-volume replacements for members of the policy; null means
 * "inherit from the policy". Placement lives in {@code volume_placement}; changing it counts as a
 * change of the volume, so it increments the version (and so the ETag).
 */
@Entity
@Table(name = "volume")
public class Volume extends VersionedEntity {

    @Column(name = "tenant_id", nullable = false, updatable = false)
    private UUID tenantId;

    @Column(nullable = false, length = 63)
    private String name;

    @Column(name = "size_bytes", nullable = false)
    private long sizeBytes;

    @Column(name = "policy_id", nullable = false)
    private UUID policyId;

    @Column(name = "weight")
    private Integer weight;

    @Embedded
    private ReservationBurstColumns reservationBurst;

    @Embedded
    private LimitColumns limits;

    /** The most IOPS this volume can reserve: its effective minIops at its allocated size. */
    @Column(name = "reserved_iops")
    private Long reservedIops;

    /** Written by {@link VolumeUsedSpace} only (never by an entity update, which would undo a report). */
    @Column(name = "used_bytes", insertable = false, updatable = false)
    private Long usedBytes;

    /** The used bytes the per-GiB terms scale with under capacityBasis used; see {@link VolumeUsedSpace}. */
    @Column(name = "used_bytes_in_force", insertable = false, updatable = false)
    private long usedBytesInForce;

    /**
     * The data nodes that serve this volume. Batched so that a page of volumes loads in one query.
     * Excluded from Hibernate's automatic version increment, which would also fire (with an extra
     * UPDATE) when a new volume is inserted with nodes; {@link #setNodeIds} marks the volume changed
     * instead, so that a placement change versions it through the ordinary checked UPDATE.
     */
    /**
     * How many copies the volume keeps, 1 to {@value io.weir.protocol.ReplicationConfig#MAX_COPIES}.
     * A volume of one copy placed on several nodes is a legacy placement (see {@link #isLegacyPlacement}).
     */
    @Column(name = "replicas", nullable = false)
    private short replicas = 1;

    /**
     * The node that serves the export; null when the volume is on no node or is a legacy placement.
     * A promotion ({@link ReplicationFailover}) changes it with SQL and increments the version, so
     * an update that read the volume before fails its version check instead of undoing it.
     */
    @Column(name = "primary_node_id")
    private UUID primaryNodeId;

    /** Raised by each promotion; written with SQL only ({@link ReplicationFailover}). */
    @Column(name = "epoch", insertable = false, updatable = false)
    private long epoch = 1;

    /** The primary's last sync sequence taken; written with SQL only ({@link ReplicationIntake}). */
    @Column(name = "sync_sequence", insertable = false, updatable = false)
    private long syncSequence;

    @ElementCollection
    @OptimisticLock(excluded = true)
    @CollectionTable(name = "volume_placement", joinColumns = @JoinColumn(name = "volume_id"))
    @Column(name = "node_id", nullable = false)
    @BatchSize(size = 100)
    private Set<UUID> nodeIds = new HashSet<>();

    protected Volume() {
    }

    Volume(UUID tenantId, String name) {
        this.tenantId = tenantId;
        this.name = name;
    }

    public UUID getTenantId() {
        return tenantId;
    }

    public String getName() {
        return name;
    }

    void setName(String name) {
        this.name = name;
    }

    public long getSizeBytes() {
        return sizeBytes;
    }

    void setSizeBytes(long sizeBytes) {
        this.sizeBytes = sizeBytes;
    }

    public UUID getPolicyId() {
        return policyId;
    }

    void setPolicyId(UUID policyId) {
        this.policyId = policyId;
    }

    /** The per-volume overrides; a null member inherits from the policy. */
    public VolumeOverrides getOverrides() {
        return VolumeOverrides.of(weight, ReservationBurstColumns.orNone(reservationBurst).with(0,
                LimitColumns.orNone(limits)));
    }

    /** The most IOPS this volume can reserve (its effective minIops at its size), null for none. */
    public Long getReservedIops() {
        return reservedIops;
    }

    void setReservedIops(Long reservedIops) {
        this.reservedIops = reservedIops;
    }

    /** What its data nodes last reported allocated in its file; null before the first report. */
    public Long getUsedBytes() {
        return usedBytes;
    }

    /** The used bytes its per-GiB terms scale with under capacityBasis {@code used}. */
    public long getUsedBytesInForce() {
        return usedBytesInForce;
    }

    /** The capacity its per-GiB terms scale with under {@code basis}. */
    long capacity(CapacityQos.CapacityBasis basis) {
        return basis == CapacityQos.CapacityBasis.used ? Math.min(usedBytesInForce, sizeBytes) : sizeBytes;
    }

    void setOverrides(VolumeOverrides o) {
        CapacityQos terms = o.terms();
        this.weight = o.weight();
        this.reservationBurst = ReservationBurstColumns.of(terms);
        this.limits = LimitColumns.of(terms);
    }

    /**
     * The ids of the nodes this volume is placed on, sorted by their text form (which is also
     * PostgreSQL's uuid order) so that responses are stable.
     */
    public List<UUID> getNodeIds() {
        return nodeIds.stream().sorted(Comparator.comparing(UUID::toString)).toList();
    }

    /** How many copies the volume keeps. */
    public int getReplicas() {
        return replicas;
    }

    void setReplicas(int replicas) {
        this.replicas = (short) replicas;
    }

    /** The node that serves the export; null when unplaced or a legacy placement. */
    public UUID getPrimaryNodeId() {
        return primaryNodeId;
    }

    void setPrimaryNodeId(UUID primaryNodeId) {
        this.primaryNodeId = primaryNodeId;
    }

    /** The epoch, from 1, raised by each promotion. */
    public long getEpoch() {
        return epoch;
    }

    /** The sequence of the in-sync set last taken from the primary, 0 before any. */
    public long getSyncSequence() {
        return syncSequence;
    }

    /** Whether the volume keeps more than one copy, which replicate from its primary. */
    public boolean isReplicated() {
        return replicas > 1;
    }

    /**
     * Whether this is a placement on several nodes that an earlier release made without
     * replication: one copy kept, several nodes, each serving its own, unrelated copy. Such a
     * placement is reported, and kept until its owner names one node; it is never converted.
     */
    public boolean isLegacyPlacement() {
        return replicas == 1 && nodeIds.size() > 1;
    }

    void setNodeIds(Collection<UUID> ids) {
        // Edit the managed collection in place so that Hibernate writes only the difference.
        boolean changed = nodeIds.retainAll(ids) | nodeIds.addAll(ids);
        if (changed) {
            touch();
        }
    }
}
