package io.weir.controlplane.policy;

import io.weir.protocol.CapacityQos;
import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;

/**
 * The reservation and burst terms of a {@link CapacityQos} as table columns: {@code minIops} and
 * {@code burstIops}, each absolute, per GiB and its floor, and the absolute
 * {@code burstBytesPerSec}. Policies and volumes (as overrides) embed it beside
 * {@link LimitColumns}; tenants have neither reservations nor bursts.
 *
 * <p>Immutable, and read through {@link #orNone}, as {@link LimitColumns} is.
 */
@Embeddable
public class ReservationBurstColumns {

    private static final ReservationBurstColumns NONE = new ReservationBurstColumns();

    @Column(name = "min_iops")
    private Long minIops;

    @Column(name = "min_iops_per_gib")
    private Double minIopsPerGiB;

    @Column(name = "min_iops_floor")
    private Long minIopsFloor;

    @Column(name = "burst_iops")
    private Long burstIops;

    @Column(name = "burst_iops_per_gib")
    private Double burstIopsPerGiB;

    @Column(name = "burst_iops_floor")
    private Long burstIopsFloor;

    @Column(name = "burst_bytes_per_sec")
    private Long burstBytesPerSec;

    protected ReservationBurstColumns() {
    }

    /** The columns of the reservation and burst terms of {@code terms}. */
    public static ReservationBurstColumns of(CapacityQos terms) {
        ReservationBurstColumns c = new ReservationBurstColumns();
        c.minIops = terms.minIops().absolute();
        c.minIopsPerGiB = terms.minIops().perGiB();
        c.minIopsFloor = terms.minIops().floor();
        c.burstIops = terms.burstIops().absolute();
        c.burstIopsPerGiB = terms.burstIops().perGiB();
        c.burstIopsFloor = terms.burstIops().floor();
        c.burstBytesPerSec = terms.burstBytesPerSec().absolute();
        return c;
    }

    /** {@code columns}, or no terms at all when Hibernate loaded all-null columns as null. */
    public static ReservationBurstColumns orNone(ReservationBurstColumns columns) {
        return columns == null ? NONE : columns;
    }

    /** The terms of {@code weight}, these columns and {@code limits}, as one {@link CapacityQos}. */
    public CapacityQos with(int weight, LimitColumns limits) {
        return new CapacityQos(weight, new CapacityQos.Term(minIops, minIopsPerGiB, minIopsFloor), limits.maxIops(),
                new CapacityQos.Term(burstIops, burstIopsPerGiB, burstIopsFloor), limits.maxBytesPerSec(),
                CapacityQos.Term.of(burstBytesPerSec), limits.capacityBasis());
    }
}
