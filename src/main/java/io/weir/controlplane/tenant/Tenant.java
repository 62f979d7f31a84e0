package io.weir.controlplane.tenant;

import io.weir.controlplane.database.VersionedEntity;
import io.weir.controlplane.policy.LimitColumns;
import io.weir.protocol.CapacityQos;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.MapKeyColumn;
import jakarta.persistence.Table;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.hibernate.annotations.BatchSize;

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

    @Embedded
    private LimitColumns limits;

    /**
     * The labels a data node must carry for a tenant-admin to place this tenant's volumes on it;
     * empty: no node. Set by admins only.
     */
    @ElementCollection
    @CollectionTable(name = "tenant_node_selector", joinColumns = @JoinColumn(name = "tenant_id"))
    @MapKeyColumn(name = "label_key", length = 63)
    @Column(name = "label_value", nullable = false)
    @BatchSize(size = 64)
    private Map<String, String> nodeSelector = new HashMap<>();

    protected Tenant() {
    }

    /** The node selector, unmodifiable; load inside a transaction. */
    public Map<String, String> getNodeSelector() {
        return Collections.unmodifiableMap(nodeSelector);
    }

    /** Replaces the node selector, touching the stored rows only if it differs. */
    void setNodeSelector(Map<String, String> selector) {
        Map<String, String> wanted = selector == null ? Map.of() : selector;
        if (!new HashMap<>(nodeSelector).equals(new HashMap<>(wanted))) {
            nodeSelector.clear();
            nodeSelector.putAll(wanted);
        }
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

    /**
     * The tenant's QoS terms ({@link CapacityQos}): its limits, absolute or per GiB of the sum of
     * its volumes' capacities; it has no reservation and no burst.
     */
    public CapacityQos terms() {
        LimitColumns l = LimitColumns.orNone(limits);
        return new CapacityQos(weight, CapacityQos.Term.NONE, l.maxIops(), CapacityQos.Term.NONE, l.maxBytesPerSec(),
                CapacityQos.Term.NONE, l.capacityBasis());
    }

    /**
     * The IOPS this tenant's limit carries in reservations on each node: its {@code maxIops}, or,
     * when that scales with capacity, the least it can be ({@code maxIopsFloor}, else 1), since
     * the sum of its volumes may fall (a delete, used space freed) without a write that checks it.
     */
    public Long getReservableIops() {
        CapacityQos.Term maxIops = LimitColumns.orNone(limits).maxIops();
        return !maxIops.scales() ? maxIops.absolute() : maxIops.floor() != null ? maxIops.floor() : Long.valueOf(1);
    }

    /** Sets the weight and the limit terms, absolute and per GiB (a tenant has no reservation or burst). */
    void setTerms(CapacityQos terms) {
        weight = terms.weight();
        limits = LimitColumns.of(terms);
    }
}
