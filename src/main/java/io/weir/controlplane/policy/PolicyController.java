package io.weir.controlplane.policy;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.tags.Tag;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.Responses;
import io.weir.controlplane.web.Paging;
import jakarta.validation.Valid;
import java.util.UUID;
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
@RequestMapping(path = "/api/v1/policies", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Policies", description = "Named QoS templates: weight, reservation, limits, burst and cost model.")
class PolicyController {

    private final PolicyService service;

    PolicyController(PolicyService service) {
        this.service = service;
    }

    @PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Create a QoS policy")
    ResponseEntity<PolicyResponse> createPolicy(@Valid @RequestBody PolicyRequest request) {
        PolicyResponse created = service.create(request);
        return Responses.created(Responses.childOfRequest(created.id()), created);
    }

    @GetMapping
    @Operation(summary = "List QoS policies", description = "Pages of policies in creation order (the built-ins first).")
    PageResponse<PolicyResponse> listPolicies(
            @Parameter(description = "Only policies whose name contains this text") @RequestParam(required = false) String name,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size) {
        return service.list(name, Paging.of(page, size));
    }

    @GetMapping("/{policyId}")
    @Operation(summary = "Get a QoS policy")
    ResponseEntity<PolicyResponse> getPolicy(@PathVariable UUID policyId) {
        return Responses.ok(service.get(policyId));
    }

    @PutMapping(path = "/{policyId}", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Replace a QoS policy", description = "Fields left out take their defaults.")
    ResponseEntity<PolicyResponse> replacePolicy(@PathVariable UUID policyId,
            @Valid @RequestBody PolicyRequest request,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        return Responses.ok(service.replace(policyId, request, ifMatch));
    }

    @PatchMapping(path = "/{policyId}", consumes = JsonMergePatch.MEDIA_TYPE)
    @Operation(summary = "Update a QoS policy with a JSON merge patch (RFC 7396)")
    ResponseEntity<PolicyResponse> patchPolicy(@PathVariable UUID policyId, @RequestBody JsonNode patch,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        return Responses.ok(service.patch(policyId, patch, ifMatch));
    }

    // No body on success: any Accept (such as problem+json alone) is fine.
    @DeleteMapping(path = "/{policyId}", produces = MediaType.ALL_VALUE)
    @Operation(summary = "Delete a QoS policy", description = "Refused with 409 while volumes use it; the response lists them under \"volumes\". Built-ins can be deleted too.")
    ResponseEntity<Void> deletePolicy(@PathVariable UUID policyId,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        service.delete(policyId, ifMatch);
        return ResponseEntity.noContent().build();
    }

}
