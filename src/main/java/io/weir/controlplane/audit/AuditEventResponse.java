package io.weir.controlplane.audit;

import org.jspecify.annotations.Nullable;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.UUID;
import tools.jackson.databind.JsonNode;

/** One entry of the audit log. */
@Schema(name = "AuditEvent", description = "One recorded change: who, what, when, before and after.")
public record AuditEventResponse(
        UUID id,
        @Schema(description = "When the change was made.") Instant occurredAt,
        @Schema(description = "token, jwt or system.", example = "token") String actorType,
        @Schema(description = "The token id or JWT subject that made the change. Null when a tenant-admin reads an entry "
                + "made by an admin, a node or the system: those are shown by actorType and actorName only.") @Nullable String actor,
        @Schema(description = "The token's name, or the JWT subject.") String actorName,
        @Schema(description = "What was done, as <resource>.<verb>.", example = "tenant.update") String action,
        @Schema(example = "tenant") String resourceType,
        String resourceId,
        @Schema(description = "The tenant the resource belongs to, if any.") @Nullable UUID tenantId,
        @Schema(description = "The resource before the change, as the API showed it; null for a create.") @Nullable JsonNode before,
        @Schema(description = "The resource after the change, as the API showed it; null for a delete.") @Nullable JsonNode after) {
}
