package io.weir.controlplane.tenant;

import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.jpa.repository.JpaRepository;

interface TenantRepository extends JpaRepository<Tenant, UUID> {

    boolean existsByName(String name);

    boolean existsByNameAndIdNot(String name, UUID id);

    Page<Tenant> findByNameContaining(String fragment, Pageable pageable);

    Page<Tenant> findById(UUID id, Pageable pageable);

    Page<Tenant> findByIdAndNameContaining(UUID id, String fragment, Pageable pageable);
}
