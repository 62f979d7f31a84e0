package io.weir.controlplane.token;

import io.weir.controlplane.security.Role;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.UUID;

/** A token just created, with its secret: the only time the secret is ever shown. */
@Schema(name = "IssuedToken", description = "A token just created. `token` is its secret, shown only this once.")
public record IssuedTokenResponse(
        UUID id,
        String name,
        Role role,
        UUID tenantId,
        UUID nodeId,
        Instant expiresAt,
        long version,
        Instant createdAt,
        @Schema(description = "The bearer secret. Store it now: it cannot be read again.", example = "weir_0f1e...")
        String token) {

    static IssuedTokenResponse of(TokenResponse t, String secret) {
        return new IssuedTokenResponse(t.id(), t.name(), t.role(), t.tenantId(), t.nodeId(), t.expiresAt(),
                t.version(), t.createdAt(), secret);
    }

    /** Without the secret: what the audit log records. */
    TokenResponse withoutSecret() {
        return new TokenResponse(id, name, role, tenantId, nodeId, expiresAt, version, createdAt);
    }

    @Override
    public String toString() {
        return "IssuedTokenResponse[id=" + id + ", name=" + name + ", role=" + role + ", token=<redacted>]";
    }
}
