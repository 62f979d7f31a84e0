package io.weir.controlplane.token;

import io.weir.controlplane.security.Role;
import io.weir.controlplane.database.VersionedEntity;
import jakarta.persistence.Column;
import jakarta.persistence.Convert;
import jakarta.persistence.Converter;
import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Entity;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/**
 * An API token: a name, a role with its binding, an optional expiry, and the SHA-256 of the
 * secret. The secret itself is never stored.
 */
@Entity
@Table(name = "api_token")
class ApiToken extends VersionedEntity {

    @Column(nullable = false, unique = true, length = 63)
    private String name;

    @Column(nullable = false, length = 16)
    @Convert(converter = RoleConverter.class)
    private Role role;

    @Column(name = "tenant_id")
    private UUID tenantId;

    @Column(name = "node_id")
    private UUID nodeId;

    @Column(name = "secret_hash", nullable = false)
    private byte[] secretHash;

    @Column(name = "expires_at")
    private Instant expiresAt;

    protected ApiToken() {
    }

    ApiToken(UUID id, String name, Role role, UUID tenantId, UUID nodeId, byte[] secretHash, Instant expiresAt) {
        super(id);
        this.name = name;
        this.role = role;
        this.tenantId = tenantId;
        this.nodeId = nodeId;
        this.secretHash = secretHash.clone();
        this.expiresAt = expiresAt;
    }

    String getName() {
        return name;
    }

    Role getRole() {
        return role;
    }

    UUID getTenantId() {
        return tenantId;
    }

    UUID getNodeId() {
        return nodeId;
    }

    byte[] getSecretHash() {
        return secretHash.clone();
    }

    Instant getExpiresAt() {
        return expiresAt;
    }

    boolean isExpiredAt(Instant now) {
        return expiresAt != null && !now.isBefore(expiresAt);
    }

    @Converter
    static final class RoleConverter implements AttributeConverter<Role, String> {
        @Override
        public String convertToDatabaseColumn(Role role) {
            return role == null ? null : role.wireName();
        }

        @Override
        public Role convertToEntityAttribute(String value) {
            return value == null ? null : Role.fromWire(value);
        }
    }
}
