package io.weir.controlplane.node;

import io.weir.controlplane.security.AccessScope;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.enums.ParameterIn;
import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.tags.Tag;
import io.weir.controlplane.config.DesiredConfigService;
import io.weir.controlplane.web.ETags;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.Responses;
import io.weir.controlplane.web.Paging;
import io.weir.controlplane.web.RequestValidationException;
import io.weir.protocol.DesiredConfig;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.validation.Valid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.WebRequest;
import tools.jackson.databind.JsonNode;

@RestController
@RequestMapping(path = "/api/v1/nodes", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Nodes", description = "Data nodes: storage servers whose agents enforce the desired config.")
class NodeController {

    private final NodeService service;
    private final DesiredConfigService desiredConfigs;
    private final AccessScope scope;

    NodeController(NodeService service, DesiredConfigService desiredConfigs, AccessScope scope) {
        this.scope = scope;
        this.service = service;
        this.desiredConfigs = desiredConfigs;
    }

    @PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Register a data node",
            description = "The response's `token` is the node's bearer token, shown only this once.")
    ResponseEntity<NodeResponse> createNode(@Valid @RequestBody NodeRequest request) {
        NodeResponse created = service.create(request);
        return Responses.created(Responses.childOfRequest(created.id()), created.version())
                .cacheControl(org.springframework.http.CacheControl.noStore())
                .body(created);
    }

    @GetMapping
    @Operation(summary = "List data nodes", description = "Pages of nodes in creation order, optionally filtered by name and labels.")
    @Parameter(name = "label", in = ParameterIn.QUERY,
            description = "A label selector key=value; repeat it to require several labels (all must match), at most "
                    + NodeLabels.MAX_LABELS + " times.",
            array = @ArraySchema(schema = @Schema(type = "string", example = "zone=eu-1a")))
    PageResponse<NodeResponse> listNodes(
            @Parameter(description = "Only nodes whose name contains this text") @RequestParam(required = false) String name,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "" + Paging.DEFAULT_SIZE) int size,
            @Parameter(hidden = true) HttpServletRequest request) {
        // Read the raw values: binding to List<String> would split a single value at commas.
        return service.list(name, labelSelectors(request.getParameterValues("label")), Paging.of(page, size));
    }

    @GetMapping("/{nodeId}")
    @Operation(summary = "Get a data node")
    ResponseEntity<NodeResponse> getNode(@PathVariable UUID nodeId) {
        return Responses.okDerived(service.get(nodeId));
    }

    @PatchMapping(path = "/{nodeId}", consumes = JsonMergePatch.MEDIA_TYPE)
    @Operation(summary = "Update a data node with a JSON merge patch (RFC 7396)",
            description = "Labels merge key by key: a null value removes that label.")
    ResponseEntity<NodeResponse> patchNode(@PathVariable UUID nodeId, @RequestBody JsonNode patch,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        return Responses.okDerived(service.patch(nodeId, patch, ifMatch));
    }

    // No body on success: any Accept (such as problem+json alone) is fine.
    @DeleteMapping(path = "/{nodeId}", produces = MediaType.ALL_VALUE)
    @Operation(summary = "Delete a data node",
            description = "Refused with 409 while volumes are placed on it. Its task-share override is deleted with it.")
    ResponseEntity<Void> deleteNode(@PathVariable UUID nodeId,
            @RequestHeader(name = HttpHeaders.IF_MATCH, required = false) String ifMatch) {
        service.delete(nodeId, ifMatch);
        return ResponseEntity.noContent().build();
    }

    @GetMapping("/{nodeId}/desired-config")
    @Operation(summary = "Get a data node's desired config",
            description = "The full snapshot the node must enforce: its task shares, the tenants and volumes placed on it "
                    + "with their effective policies. The push channel sends exactly this object to the node's agent. "
                    + "Stamped with the node's own desired revision (not the global config revision), which is also its ETag: If-None-Match with it answers 304 until the node's config changes.")
    ResponseEntity<DesiredConfig> getDesiredConfig(@PathVariable UUID nodeId, WebRequest request) {
        // A node token reads its own node's config only; another node's answers 404.
        scope.requireNode(nodeId);
        service.require(nodeId);
        DesiredConfig config = desiredConfigs.forNode(nodeId);
        if (request.checkNotModified(ETags.of(config.revision()))) {
            return null;
        }
        return ResponseEntity.ok().eTag(ETags.of(config.revision())).body(config);
    }

    private static List<Map.Entry<String, String>> labelSelectors(String[] values) {
        List<Map.Entry<String, String>> selectors = new ArrayList<>();
        if (values == null) {
            return selectors;
        }
        // A node carries at most MAX_LABELS labels, so more selectors can never match; refusing
        // them also bounds the query's size before it is built.
        if (values.length > NodeLabels.MAX_LABELS) {
            throw new RequestValidationException("label", "at most " + NodeLabels.MAX_LABELS
                    + " label selectors are allowed (a node carries at most that many labels), got " + values.length);
        }
        for (String value : values) {
            int eq = value.indexOf('=');
            if (eq <= 0) {
                throw new RequestValidationException("label", "must be key=value, was '" + value + "'");
            }
            selectors.add(Map.entry(value.substring(0, eq), value.substring(eq + 1)));
        }
        return selectors;
    }

}
