package io.weir.controlplane.token;

import io.weir.controlplane.security.Role;
import jakarta.persistence.LockModeType;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Lock;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

interface ApiTokenRepository extends JpaRepository<ApiToken, UUID> {

    boolean existsByName(String name);

    long countByRole(Role role);

    /** The token whose secret hashes to {@code secretHash}: how operator-chosen tokens are found. */
    Optional<ApiToken> findBySecretHash(byte[] secretHash);

    Page<ApiToken> findByRole(Role role, Pageable pageable);

    /** The tokens bound to a tenant, row-locked {@code FOR UPDATE}: revoked with it. */
    @Lock(LockModeType.PESSIMISTIC_WRITE)
    @Query("select t from ApiToken t where t.tenantId = :tenantId order by t.id")
    List<ApiToken> findForUpdateByTenantId(@Param("tenantId") UUID tenantId);

    /** The tokens bound to a data node, row-locked {@code FOR UPDATE}: revoked with it. */
    @Lock(LockModeType.PESSIMISTIC_WRITE)
    @Query("select t from ApiToken t where t.nodeId = :nodeId order by t.id")
    List<ApiToken> findForUpdateByNodeId(@Param("nodeId") UUID nodeId);
}
