package io.weir.controlplane.policy;

import io.weir.controlplane.database.VersionedEntity;
import io.weir.protocol.EffectivePolicy;
import jakarta.persistence.Column;
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

    protected QosPolicy() {
    }

    QosPolicy(String name) {
        this.name = name;
    }

    /** What a volume with no overrides enforces under this policy. */
    public EffectivePolicy enforced() {
        return new EffectivePolicy(weight, minIops, maxIops, burstIops, maxBytesPerSec, burstBytesPerSec,
                new io.weir.protocol.CostModel(minChargeBytes));
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
