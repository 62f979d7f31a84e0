package io.weir.controlplane.node;

import java.time.Instant;
import java.util.Collection;
import java.util.Set;
import java.util.UUID;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.JpaSpecificationExecutor;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;

/**
 * Data nodes. Lists with label selectors go through {@link NodeSpecifications}; the status updates
 * are bulk updates on purpose: they do not increment the version (see {@link DataNode}).
 */
interface DataNodeRepository extends JpaRepository<DataNode, UUID>, JpaSpecificationExecutor<DataNode> {

    boolean existsByName(String name);

    boolean existsByNameAndIdNot(String name, UUID id);

    @Query("select n.id from DataNode n where n.id in :ids")
    Set<UUID> findExistingIds(Collection<UUID> ids);

    @Modifying(flushAutomatically = true, clearAutomatically = true)
    @Query("update DataNode n set n.appliedRevision = :revision, n.lastAckAt = :at, n.lastError = null where n.id = :id")
    int recordApplied(UUID id, long revision, Instant at);

    @Modifying(flushAutomatically = true, clearAutomatically = true)
    @Query("update DataNode n set n.lastError = :error where n.id = :id")
    int recordRejected(UUID id, String error);
}
