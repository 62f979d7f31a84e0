package io.weir.controlplane.audit;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.tags.Tag;
import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.Paging;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping(path = "/api/v1/audit", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Audit", description = "Every change made through the API: who, what, when, before and after.")
class AuditController {

    private final AuditLog audit;
    private final AccessScope scope;

    AuditController(AuditLog audit, AccessScope scope) {
        this.audit = audit;
        this.scope = scope;
    }

    @GetMapping
    @Operation(summary = "List audit events",
            description = "Oldest first. Admins see every entry; a tenant-admin sees its own tenant's entries only.")
    PageResponse<AuditEventResponse> listAuditEvents(
            @Parameter(description = "Only entries about this kind of resource, such as tenant") @RequestParam(required = false) String resourceType,
            @Parameter(description = "Only entries about this resource id") @RequestParam(required = false) String resourceId,
            @Parameter(description = "Only entries made by this token id, token name or JWT subject (for a tenant-admin: ids of tenant-admins only)") @RequestParam(required = false) String actor,
            @Parameter(description = "Only entries about this tenant's resources") @RequestParam(required = false) UUID tenantId,
            @Parameter(description = "Entries at or after this instant (RFC 3339)") @RequestParam(required = false) Instant from,
            @Parameter(description = "Entries before this instant (RFC 3339)") @RequestParam(required = false) Instant to,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        Paging.of(page, size);
        if (from != null && to != null && !from.isBefore(to)) {
            throw ApiException.badRequest("from must be before to");
        }
        AccessScope.TenantFilter filter = scope.listFilter(tenantId);
        if (!filter.visible()) {
            return new PageResponse<>(List.of(), page, size, 0, 0);
        }
        // An empty or blank filter never gets here: QueryParameterFilter answers 400 naming it.
        return audit.list(new AuditLog.AuditQuery(filter.tenantId(), resourceType, resourceId, actor, from, to), page, size);
    }
}
