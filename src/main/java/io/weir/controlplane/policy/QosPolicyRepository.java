package io.weir.controlplane.policy;

import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.jpa.repository.JpaRepository;

interface QosPolicyRepository extends JpaRepository<QosPolicy, UUID> {

    boolean existsByName(String name);

    boolean existsByNameAndIdNot(String name, UUID id);

    Page<QosPolicy> findByNameContaining(String fragment, Pageable pageable);
}
