package io.weir.controlplane.policy;

import jakarta.persistence.LockModeType;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Lock;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

interface QosPolicyRepository extends JpaRepository<QosPolicy, UUID> {

    boolean existsByName(String name);

    boolean existsByNameAndIdNot(String name, UUID id);

    Page<QosPolicy> findByNameContaining(String fragment, Pageable pageable);

    /** The policy, row-locked {@code FOR UPDATE} until the transaction ends: the writer's lock. */
    @Lock(LockModeType.PESSIMISTIC_WRITE)
    @Query("select p from QosPolicy p where p.id = :id")
    Optional<QosPolicy> findForUpdateById(@Param("id") UUID id);

    /** The policy, row-locked {@code FOR SHARE} until the transaction ends: a reader that validates against it. */
    @Lock(LockModeType.PESSIMISTIC_READ)
    @Query("select p from QosPolicy p where p.id = :id")
    Optional<QosPolicy> findForShareById(@Param("id") UUID id);
}
