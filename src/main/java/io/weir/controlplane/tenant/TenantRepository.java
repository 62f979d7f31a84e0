package io.weir.controlplane.tenant;

import jakarta.persistence.LockModeType;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Lock;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

interface TenantRepository extends JpaRepository<Tenant, UUID> {

    boolean existsByName(String name);

    boolean existsByNameAndIdNot(String name, UUID id);

    Page<Tenant> findByNameContaining(String fragment, Pageable pageable);

    Page<Tenant> findById(UUID id, Pageable pageable);

    Page<Tenant> findByIdAndNameContaining(UUID id, String fragment, Pageable pageable);

    List<Tenant> findByIdInOrderByNameAsc(Collection<UUID> ids);

    /** The tenant, row-locked {@code FOR UPDATE} until the transaction ends: the writer's lock. */
    @Lock(LockModeType.PESSIMISTIC_WRITE)
    @Query("select t from Tenant t where t.id = :id")
    Optional<Tenant> findForUpdateById(@Param("id") UUID id);

    /** The tenant, row-locked {@code FOR SHARE}: a volume write that depends on it. */
    @Lock(LockModeType.PESSIMISTIC_READ)
    @Query("select t from Tenant t where t.id = :id")
    Optional<Tenant> findForShareById(@Param("id") UUID id);
}
