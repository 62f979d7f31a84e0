package io.weir.controlplane.taskshare;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.util.UUID;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Task CPU shares. Bodies are validated by {@link TaskShareValidation} (not {@code @Valid}), so
 * field constraints and the whole-set rules are reported together.
 */
@RestController
@RequestMapping(path = "/api/v1", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Task shares", description = "CPU shares of the scheduler's tasks (foreground IO, gc, flush, ...): a cluster default and per-node overrides.")
class TaskShareController {

    private final TaskShareService service;

    TaskShareController(TaskShareService service) {
        this.service = service;
    }

    @GetMapping("/task-shares")
    @Operation(summary = "Get the cluster-default task shares")
    ResponseEntity<TaskSharesResponse> getClusterTaskShares() {
        return withETag(service.getClusterDefault());
    }

    @PutMapping(path = "/task-shares", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Replace the cluster-default task shares",
            description = "Every node without an override enforces them. Bumps the config revision, unless nothing changed.")
    ResponseEntity<TaskSharesResponse> replaceClusterTaskShares(@RequestBody TaskSharesRequest request,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        return withETag(service.replaceClusterDefault(request, ifMatch));
    }

    @GetMapping("/nodes/{nodeId}/task-shares")
    @Operation(summary = "Get the task shares a node enforces",
            description = "Its override if it has one, else the cluster default; 'source' says which.")
    ResponseEntity<TaskSharesResponse> getNodeTaskShares(@PathVariable UUID nodeId) {
        return withETag(service.getForNode(nodeId));
    }

    @PutMapping(path = "/nodes/{nodeId}/task-shares", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Create or replace a node's task-share override",
            description = "If-Match is checked against the set GET showed: the override, or the cluster default while there is none.")
    ResponseEntity<TaskSharesResponse> replaceNodeTaskShares(@PathVariable UUID nodeId,
            @RequestBody TaskSharesRequest request,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        return withETag(service.replaceForNode(nodeId, request, ifMatch));
    }

    // No body on success: any Accept (such as problem+json alone) is fine.
    @DeleteMapping(path = "/nodes/{nodeId}/task-shares", produces = MediaType.ALL_VALUE)
    @Operation(summary = "Delete a node's task-share override", description = "The node falls back to the cluster default; 404 if it has no override.")
    ResponseEntity<Void> deleteNodeTaskShares(@PathVariable UUID nodeId,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        service.deleteForNode(nodeId, ifMatch);
        return ResponseEntity.noContent().build();
    }

    private static ResponseEntity<TaskSharesResponse> withETag(TaskSharesResponse body) {
        return ResponseEntity.ok().eTag(body.etag()).body(body);
    }
}
