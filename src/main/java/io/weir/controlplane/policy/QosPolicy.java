package io.weir.controlplane.policy;

import io.weir.controlplane.database.VersionedEntity;
import io.weir.protocol.CapacityQos;
import jakarta.persistence.Column;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.Table;

/** A QoS policy: a named template of weight, reservation, limits, burst and cost model. */
@Entity
@Table(name = "qos_policy")
public class QosPolicy extends VersionedEntity {

    @Column(nullable = false, unique = true, length = 63)
    private String name;

    @Column(length = 1024)
    private String description;

    /** Seeded by the schema; never set or changed through the API. */
    @Column(name = "built_in", nullable = false, updatable = false)
    private boolean builtIn;

    @Column(nullable = false)
    private int weight;

    @Column(name = "min_charge_bytes", nullable = false)
    private int minChargeBytes;

    @Embedded
    private ReservationBurstColumns reservationBurst;

    @Embedded
    private LimitColumns limits;

    protected QosPolicy() {
    }

    QosPolicy(String name) {
        this.name = name;
    }

    /** The policy's QoS terms, absolute and per GiB ({@link CapacityQos}), before any capacity is known. */
    public CapacityQos terms() {
        return ReservationBurstColumns.orNone(reservationBurst).with(weight, LimitColumns.orNone(limits));
    }

    /** The policy's cost model, which every volume of it gets. */
    public io.weir.protocol.EffectiveCostModel costModel() {
        return new io.weir.protocol.EffectiveCostModel(minChargeBytes);
    }

    /** Sets the weight and every reservation, limit and burst term, absolute and per GiB. */
    void setTerms(CapacityQos terms) {
        weight = terms.weight();
        reservationBurst = ReservationBurstColumns.of(terms);
        limits = LimitColumns.of(terms);
    }

    public String getName() {
        return name;
    }

    void setName(String name) {
        this.name = name;
    }

    public String getDescription() {
        return description;
    }

    void setDescription(String description) {
        this.description = description;
    }

    public boolean isBuiltIn() {
        return builtIn;
    }

    public int getWeight() {
        return weight;
    }

    public int getMinChargeBytes() {
        return minChargeBytes;
    }

    void setMinChargeBytes(int minChargeBytes) {
        this.minChargeBytes = minChargeBytes;
    }
}
