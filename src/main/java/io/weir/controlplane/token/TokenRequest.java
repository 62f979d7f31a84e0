package io.weir.controlplane.token;

import io.weir.controlplane.security.Role;
import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import jakarta.validation.constraints.NotNull;
import java.time.Instant;
import java.util.UUID;

/** The body of a token create. */
@Schema(name = "TokenRequest", description = "A new API token: its name, role and binding.")
public record TokenRequest(
        @Schema(description = "Unique name, 1-63 characters of [a-z0-9-].", example = "grafana", requiredMode = Schema.RequiredMode.REQUIRED)
        @ResourceName String name,
        @Schema(description = "admin, tenant-admin, viewer or node.", example = "viewer", requiredMode = Schema.RequiredMode.REQUIRED)
        @NotNull Role role,
        @Schema(description = "The tenant a tenant-admin (required) or viewer (optional; absent means all tenants) is bound to.")
        UUID tenantId,
        @Schema(description = "The data node a node token (required) belongs to.")
        UUID nodeId,
        @Schema(description = "When the token stops working (RFC 3339); absent means never.", example = "2030-01-01T00:00:00Z")
        Instant expiresAt) {
}
