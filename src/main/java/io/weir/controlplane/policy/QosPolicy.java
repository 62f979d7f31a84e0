package io.weir.controlplane.policy;

import io.weir.controlplane.database.VersionedEntity;
import io.weir.protocol.CapacityQos;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
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

    @Column(name = "min_iops")
    private Long minIops;

    @Column(name = "max_iops")
    private Long maxIops;

    @Column(name = "burst_iops")
    private Long burstIops;

    @Column(name = "max_bytes_per_sec")
    private Long maxBytesPerSec;

    @Column(name = "burst_bytes_per_sec")
    private Long burstBytesPerSec;

    @Column(name = "min_charge_bytes", nullable = false)
    private int minChargeBytes;

    @Column(name = "min_iops_per_gib")
    private Double minIopsPerGiB;

    @Column(name = "max_iops_per_gib")
    private Double maxIopsPerGiB;

    @Column(name = "burst_iops_per_gib")
    private Double burstIopsPerGiB;

    @Column(name = "max_bytes_per_sec_per_gib")
    private Double maxBytesPerSecPerGiB;

    @Column(name = "min_iops_floor")
    private Long minIopsFloor;

    @Column(name = "max_iops_floor")
    private Long maxIopsFloor;

    @Column(name = "burst_iops_floor")
    private Long burstIopsFloor;

    @Column(name = "max_bytes_per_sec_floor")
    private Long maxBytesPerSecFloor;

    @Column(name = "capacity_basis", length = 16)
    @Enumerated(EnumType.STRING)
    private CapacityQos.CapacityBasis capacityBasis;

    protected QosPolicy() {
    }

    QosPolicy(String name) {
        this.name = name;
    }

    /** The policy's QoS terms, absolute and per GiB ({@link CapacityQos}), before any capacity is known. */
    public CapacityQos terms() {
        return new CapacityQos(weight, new CapacityQos.Term(minIops, minIopsPerGiB, minIopsFloor),
                new CapacityQos.Term(maxIops, maxIopsPerGiB, maxIopsFloor),
                new CapacityQos.Term(burstIops, burstIopsPerGiB, burstIopsFloor),
                new CapacityQos.Term(maxBytesPerSec, maxBytesPerSecPerGiB, maxBytesPerSecFloor),
                CapacityQos.Term.of(burstBytesPerSec), capacityBasis);
    }

    /** The policy's cost model, which every volume of it gets. */
    public io.weir.protocol.EffectiveCostModel costModel() {
        return new io.weir.protocol.EffectiveCostModel(minChargeBytes);
    }

    void setTerms(PolicyRequest r) {
        minIopsPerGiB = r.minIopsPerGiB();
        maxIopsPerGiB = r.maxIopsPerGiB();
        burstIopsPerGiB = r.burstIopsPerGiB();
        maxBytesPerSecPerGiB = r.maxBytesPerSecPerGiB();
        minIopsFloor = r.minIopsFloor();
        maxIopsFloor = r.maxIopsFloor();
        burstIopsFloor = r.burstIopsFloor();
        maxBytesPerSecFloor = r.maxBytesPerSecFloor();
        capacityBasis = r.capacityBasis();
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

    void setWeight(int weight) {
        this.weight = weight;
    }

    public Long getMinIops() {
        return minIops;
    }

    void setMinIops(Long minIops) {
        this.minIops = minIops;
    }

    public Long getMaxIops() {
        return maxIops;
    }

    void setMaxIops(Long maxIops) {
        this.maxIops = maxIops;
    }

    public Long getBurstIops() {
        return burstIops;
    }

    void setBurstIops(Long burstIops) {
        this.burstIops = burstIops;
    }

    public Long getMaxBytesPerSec() {
        return maxBytesPerSec;
    }

    void setMaxBytesPerSec(Long maxBytesPerSec) {
        this.maxBytesPerSec = maxBytesPerSec;
    }

    public Long getBurstBytesPerSec() {
        return burstBytesPerSec;
    }

    void setBurstBytesPerSec(Long burstBytesPerSec) {
        this.burstBytesPerSec = burstBytesPerSec;
    }

    public int getMinChargeBytes() {
        return minChargeBytes;
    }

    void setMinChargeBytes(int minChargeBytes) {
        this.minChargeBytes = minChargeBytes;
    }
}
