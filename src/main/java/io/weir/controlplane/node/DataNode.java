package io.weir.controlplane.node;

import io.weir.controlplane.database.VersionedEntity;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Table;

/** A data node: a storage server that runs an agent and serves the volumes placed on it. */
@Entity
@Table(name = "data_node")
public class DataNode extends VersionedEntity {

    @Column(nullable = false, unique = true, length = 63)
    private String name;

    @Column
    private String address;

    protected DataNode() {
    }

    DataNode(String name) {
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
}
