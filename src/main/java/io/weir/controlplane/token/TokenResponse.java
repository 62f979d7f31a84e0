package io.weir.controlplane.token;

import io.weir.controlplane.security.Role;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.UUID;

/** A token as listed: everything but its secret, which is never shown again after creation. */
@Schema(name = "Token", description = "An API token, without its secret.")
public record TokenResponse(
        UUID id,
        String name,
        Role role,
        @Schema(description = "The tenant the token is bound to; null for all tenants.") UUID tenantId,
        @Schema(description = "The data node a node token belongs to.") UUID nodeId,
        @Schema(description = "When the token stops working; null means never.") Instant expiresAt,
        long version,
        Instant createdAt) {

    static TokenResponse from(ApiToken t) {
        return new TokenResponse(t.getId(), t.getName(), t.getRole(), t.getTenantId(), t.getNodeId(),
                t.getExpiresAt(), t.getVersion(), t.getCreatedAt());
    }
}
