package io.weir.controlplane.tenant;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.tags.Tag;
import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.Responses;
import io.weir.controlplane.web.Paging;
import jakarta.validation.Valid;
import java.util.List;
import java.util.UUID;
import org.springframework.data.domain.Pageable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

@RestController
@RequestMapping(path = "/api/v1/tenants", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Tenants", description = "Tenants group volumes under one weight and aggregate limits.")
class TenantController {

    private final TenantService service;
    private final AccessScope scope;

    TenantController(TenantService service, AccessScope scope) {
        this.service = service;
        this.scope = scope;
    }

    @PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Create a tenant")
    ResponseEntity<TenantResponse> createTenant(@Valid @RequestBody TenantRequest request) {
        TenantResponse created = service.create(request);
        return Responses.created(Responses.childOfRequest(created.id()), created);
    }

    @GetMapping
    @Operation(summary = "List tenants", description = "Pages of tenants in creation order.")
    PageResponse<TenantResponse> listTenants(
            @Parameter(description = "Only tenants whose name contains this text") @RequestParam(required = false) String name,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        // A caller bound to a tenant sees that tenant only; one that may see none gets nothing.
        Pageable pageable = Paging.of(page, size);
        AccessScope.TenantFilter filter = scope.listFilter(null);
        if (!filter.visible()) {
            return new PageResponse<>(List.of(), page, size, 0, 0);
        }
        return service.list(name, filter.tenantId(), pageable);
    }

    @GetMapping("/{tenantId}")
    @Operation(summary = "Get a tenant")
    ResponseEntity<TenantResponse> getTenant(@PathVariable UUID tenantId) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        return Responses.okDerived(service.get(tenantId));
    }

    @GetMapping("/{tenantId}/nodes")
    @Operation(summary = "List the data nodes a tenant's volumes may be placed on",
            description = "The nodes that carry every label of the tenant's nodeSelector, in creation order; none while "
                    + "it is empty. A tenant-admin may place volumes on these only (admins place anywhere).")
    PageResponse<PlaceableNodeResponse> listPlaceableNodes(@PathVariable UUID tenantId,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        return service.placeableNodes(tenantId, Paging.of(page, size));
    }

    @PutMapping(path = "/{tenantId}", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Replace a tenant", description = "Fields left out take their defaults.")
    ResponseEntity<TenantResponse> replaceTenant(@PathVariable UUID tenantId,
            @Valid @RequestBody TenantRequest request,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        requireWritable(tenantId);
        return Responses.okDerived(service.replace(tenantId, request, ifMatch));
    }

    @PatchMapping(path = "/{tenantId}", consumes = JsonMergePatch.MEDIA_TYPE)
    @Operation(summary = "Update a tenant with a JSON merge patch (RFC 7396)")
    ResponseEntity<TenantResponse> patchTenant(@PathVariable UUID tenantId, @RequestBody JsonNode patch,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        requireWritable(tenantId);
        return Responses.okDerived(service.patch(tenantId, patch, ifMatch));
    }

    // No body on success: any Accept (such as problem+json alone) is fine.
    @DeleteMapping(path = "/{tenantId}", produces = MediaType.ALL_VALUE)
    @Operation(summary = "Delete a tenant", description = "Refused with 409 while volumes belong to it.")
    ResponseEntity<Void> deleteTenant(@PathVariable UUID tenantId,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        requireWritable(tenantId);
        service.delete(tenantId, ifMatch);
        return ResponseEntity.noContent().build();
    }

    /** Another tenant's admin gets 404, as if the tenant did not exist; its own tenant's admin 403. */
    private void requireWritable(UUID tenantId) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        scope.requireAdmin("change a tenant");
    }

}
