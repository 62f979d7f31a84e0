package io.weir.controlplane.token;

import io.weir.controlplane.security.Role;
import java.util.Optional;
import java.util.UUID;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.data.jpa.repository.JpaRepository;

interface ApiTokenRepository extends JpaRepository<ApiToken, UUID> {

    boolean existsByName(String name);

    long countByRole(Role role);

    /** The token whose secret hashes to {@code secretHash}: how operator-chosen tokens are found. */
    Optional<ApiToken> findBySecretHash(byte[] secretHash);

    Page<ApiToken> findByRole(Role role, Pageable pageable);
}
