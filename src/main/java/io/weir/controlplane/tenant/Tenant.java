package io.weir.controlplane.tenant;

import io.weir.controlplane.database.VersionedEntity;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Table;

/** A tenant: a folder of volumes that shares a weight and aggregate limits among them. */
@Entity
@Table(name = "tenant")
public class Tenant extends VersionedEntity {

    @Column(nullable = false, unique = true, length = 63)
    private String name;

    @Column(name = "display_name")
    private String displayName;

    @Column(nullable = false)
    private int weight;

    @Column(name = "max_iops")
    private Long maxIops;

    @Column(name = "max_bytes_per_sec")
    private Long maxBytesPerSec;

    protected Tenant() {
    }

    Tenant(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    void setName(String name) {
        this.name = name;
    }

    public String getDisplayName() {
        return displayName;
    }

    void setDisplayName(String displayName) {
        this.displayName = displayName;
    }

    public int getWeight() {
        return weight;
    }

    void setWeight(int weight) {
        this.weight = weight;
    }

    public Long getMaxIops() {
        return maxIops;
    }

    void setMaxIops(Long maxIops) {
        this.maxIops = maxIops;
    }

    public Long getMaxBytesPerSec() {
        return maxBytesPerSec;
    }

    void setMaxBytesPerSec(Long maxBytesPerSec) {
        this.maxBytesPerSec = maxBytesPerSec;
    }
}
