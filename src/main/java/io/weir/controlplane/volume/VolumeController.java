package io.weir.controlplane.volume;

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
@RequestMapping(path = "/api/v1", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Volumes", description = "Volumes: the flows of a tenant, with a QoS policy, overrides and placement on data nodes.")
class VolumeController {

    private final VolumeService service;
    private final AccessScope scope;

    VolumeController(VolumeService service, AccessScope scope) {
        this.service = service;
        this.scope = scope;
    }

    @PostMapping(path = "/tenants/{tenantId}/volumes", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Create a volume in a tenant",
            description = "404 if the tenant does not exist; 400 if the policy or a node does not, or replicas and "
                    + "nodeIds disagree. Without policyId the volume gets the built-in 'standard' policy. With replicas "
                    + "and no nodeIds the control plane chooses the nodes (409 when the tenant has too few).")
    ResponseEntity<VolumeResponse> createVolume(@PathVariable UUID tenantId, @Valid @RequestBody VolumeRequest request) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        VolumeResponse created = service.create(tenantId, request);
        return Responses.created(Responses.underRoot("/api/v1/volumes/{id}", created.id()), created);
    }

    @GetMapping("/tenants/{tenantId}/volumes")
    @Operation(summary = "List a tenant's volumes", description = "Pages of the tenant's volumes in creation order.")
    PageResponse<VolumeResponse> listTenantVolumes(@PathVariable UUID tenantId,
            @Parameter(description = "Only volumes whose name contains this text") @RequestParam(required = false) String name,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        return service.listForTenant(tenantId, name, Paging.of(page, size));
    }

    @GetMapping("/volumes")
    @Operation(summary = "List volumes", description = "Pages of all volumes in creation order; the filters combine.")
    PageResponse<VolumeResponse> listVolumes(
            @Parameter(description = "Only volumes of this tenant") @RequestParam(required = false) UUID tenantId,
            @Parameter(description = "Only volumes placed on this data node") @RequestParam(required = false) UUID nodeId,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        Pageable pageable = Paging.of(page, size);
        // A caller bound to a tenant sees its own volumes only; asking for another's gets none.
        AccessScope.TenantFilter filter = scope.listFilter(tenantId);
        if (!filter.visible()) {
            return new PageResponse<>(List.of(), page, size, 0, 0);
        }
        return service.list(filter.tenantId(), nodeId, pageable);
    }

    @GetMapping("/volumes/{volumeId}")
    @Operation(summary = "Get a volume")
    ResponseEntity<VolumeResponse> getVolume(@PathVariable UUID volumeId) {
        // Visibility first, from the volume's tenant alone: loading the volume and its policy
        // before refusing would make another tenant's ids slower to refuse than unknown ones.
        visible(volumeId);
        return Responses.okDerived(service.get(volumeId));
    }

    @PutMapping(path = "/volumes/{volumeId}", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Replace a volume",
            description = "Fields left out take their defaults: the 'standard' policy, no overrides, no placement. "
                    + "sizeBytes may grow but not shrink: a smaller size is refused with 409. Copies may be added "
                    + "(they start outOfSync) or removed, but not the primary of a replicated volume (409).")
    ResponseEntity<VolumeResponse> replaceVolume(@PathVariable UUID volumeId, @Valid @RequestBody VolumeRequest request,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        visible(volumeId);
        return Responses.okDerived(service.replace(volumeId, request, ifMatch));
    }

    @PatchMapping(path = "/volumes/{volumeId}", consumes = JsonMergePatch.MEDIA_TYPE)
    @Operation(summary = "Update a volume with a JSON merge patch (RFC 7396)",
            description = "Setting an override member to null resets it to the policy's value; \"overrides\": null resets all. "
                    + "sizeBytes may grow but not shrink: a smaller size is refused with 409. {\"replicas\": n} without "
                    + "nodeIds keeps the volume's nodes and adds nodes the control plane chooses.")
    ResponseEntity<VolumeResponse> patchVolume(@PathVariable UUID volumeId, @RequestBody JsonNode patch,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        visible(volumeId);
        return Responses.okDerived(service.patch(volumeId, patch, ifMatch));
    }

    // No body on success: any Accept (such as problem+json alone) is fine.
    @DeleteMapping(path = "/volumes/{volumeId}", produces = MediaType.ALL_VALUE)
    @Operation(summary = "Delete a volume", description = "The nodes that served it drop its export.")
    ResponseEntity<Void> deleteVolume(@PathVariable UUID volumeId,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        visible(volumeId);
        service.delete(volumeId, ifMatch);
        return ResponseEntity.noContent().build();
    }

    /**
     * 404 when the volume does not exist or the caller is bound to another tenant, alike, after one
     * indexed read of the volume's tenant and nothing else, so both take the same path. Every
     * volume endpoint calls it before it reads anything more. A volume never changes tenant, so
     * checking before a read or write is enough.
     */
    private void visible(UUID volumeId) {
        scope.requireTenant(service.tenantOf(volumeId), "Volume", volumeId);
    }

}
