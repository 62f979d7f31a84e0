package io.weir.controlplane.policy;

import io.weir.protocol.CapacityQos;
import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;

/**
 * The limit terms of a {@link CapacityQos} as table columns: {@code maxIops} and
 * {@code maxBytesPerSec}, each absolute, per GiB and its floor, and the capacity basis they
 * scale with. A policy, a volume (as overrides, where null inherits) and a tenant embed it, so the
 * columns are named once; {@link ReservationBurstColumns} holds the terms only policies and
 * volumes have.
 *
 * <p>Immutable: an entity replaces it whole ({@link #of}). Hibernate loads an embeddable whose
 * columns are all null as null, so an entity reads it through {@link #orNone}.
 */
@Embeddable
public class LimitColumns {

    private static final LimitColumns NONE = new LimitColumns();

    @Column(name = "max_iops")
    private Long maxIops;

    @Column(name = "max_iops_per_gib")
    private Double maxIopsPerGiB;

    @Column(name = "max_iops_floor")
    private Long maxIopsFloor;

    @Column(name = "max_bytes_per_sec")
    private Long maxBytesPerSec;

    @Column(name = "max_bytes_per_sec_per_gib")
    private Double maxBytesPerSecPerGiB;

    @Column(name = "max_bytes_per_sec_floor")
    private Long maxBytesPerSecFloor;

    @Column(name = "capacity_basis", length = 16)
    @Enumerated(EnumType.STRING)
    private CapacityQos.CapacityBasis capacityBasis;

    protected LimitColumns() {
    }

    /** The columns of the limit terms of {@code terms}. */
    public static LimitColumns of(CapacityQos terms) {
        LimitColumns c = new LimitColumns();
        c.maxIops = terms.maxIops().absolute();
        c.maxIopsPerGiB = terms.maxIops().perGiB();
        c.maxIopsFloor = terms.maxIops().floor();
        c.maxBytesPerSec = terms.maxBytesPerSec().absolute();
        c.maxBytesPerSecPerGiB = terms.maxBytesPerSec().perGiB();
        c.maxBytesPerSecFloor = terms.maxBytesPerSec().floor();
        c.capacityBasis = terms.capacityBasis();
        return c;
    }

    /** {@code columns}, or no limit terms at all when Hibernate loaded all-null columns as null. */
    public static LimitColumns orNone(LimitColumns columns) {
        return columns == null ? NONE : columns;
    }

    /** The IOPS limit's term. */
    public CapacityQos.Term maxIops() {
        return new CapacityQos.Term(maxIops, maxIopsPerGiB, maxIopsFloor);
    }

    /** The throughput limit's term. */
    public CapacityQos.Term maxBytesPerSec() {
        return new CapacityQos.Term(maxBytesPerSec, maxBytesPerSecPerGiB, maxBytesPerSecFloor);
    }

    /** What the per-GiB terms scale with; null for the default (or, in overrides, to inherit). */
    public CapacityQos.CapacityBasis capacityBasis() {
        return capacityBasis;
    }
}
