package io.weir.controlplane.taskshare;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.jpa.repository.JpaRepository;

interface TaskShareSetRepository extends JpaRepository<TaskShareSet, UUID> {

    /** The cluster default, which the schema seeds and nothing deletes. */
    Optional<TaskShareSet> findByNodeIdIsNull();

    Optional<TaskShareSet> findByNodeId(UUID nodeId);

    List<TaskShareSet> findByNodeIdIn(Collection<UUID> nodeIds);
}
