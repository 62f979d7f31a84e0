package io.weir.controlplane.node;

import java.util.UUID;
import org.springframework.data.jpa.repository.JpaRepository;

interface DataNodeRepository extends JpaRepository<DataNode, UUID> {
}
