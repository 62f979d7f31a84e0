package io.weir.controlplane.usage;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.tags.Tag;
import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.RequestValidationException;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping(path = "/api/v1/usage", produces = MediaType.APPLICATION_JSON_VALUE)
@Tag(name = "Usage", description = "What each volume, tenant and scheduler task actually got, as reported by the data nodes.")
class UsageController {

    private static final String FROM = "Start of the range, RFC 3339 (default: `to` minus 1 h); rounded down to the step.";
    private static final String TO = "End of the range, RFC 3339 (default: now); rounded up to the step.";
    private static final String STEP = "Width of a point: seconds (60), with a unit (10s, 5m, 1h, 1d) or ISO-8601 (PT5M). "
            + "Default: the smallest of 10s, 30s, 1m, 5m, 15m, 30m, 1h, 6h, 1d giving at most 360 points. A multiple of "
            + "1 h reads the hourly rollups, of 1 min the minute rollups, anything else the raw samples. At most "
            + UsageRange.MAX_STEP_DAYS + " days.";

    private final UsageQueries queries;
    private final UsageDirectory directory;
    private final AccessScope scope;
    private final UsageProperties properties;
    private final Clock clock;
    private final UsedSpaceHistory usedSpace;

    UsageController(UsageQueries queries, UsageDirectory directory, AccessScope scope, UsageProperties properties,
            Clock clock, UsedSpaceHistory usedSpace) {
        this.usedSpace = usedSpace;
        this.queries = queries;
        this.directory = directory;
        this.scope = scope;
        this.properties = properties;
        this.clock = clock;
    }

    @GetMapping("/volumes/{volumeId}")
    @Operation(summary = "Usage of a volume", description = "One point per step; each covers [ts, ts + step).")
    UsageSeries volumeUsage(@PathVariable UUID volumeId,
            @Parameter(description = FROM) @RequestParam(required = false) String from,
            @Parameter(description = TO) @RequestParam(required = false) String to,
            @Parameter(description = STEP) @RequestParam(required = false) String step) {
        UsageVolumes.VolumeInfo volume = directory.volume(volumeId)
                .orElseThrow(() -> ApiException.notFound("Volume", volumeId));
        scope.requireTenant(volume.tenantId(), "Volume", volumeId);
        UsageRange range = range(from, to, step);
        return new UsageSeries(volumeId, volume.tenantId(), range.from(), range.to(), range.step().toString(),
                range.level().wireName(), queries.volume(volumeId, range),
                queries.gaps(directory.nodesOfVolume(volumeId), range));
    }

    @GetMapping("/volumes/{volumeId}/used")
    @Operation(summary = "Used space of a volume", description = "The bytes allocated in the volume's file as its data "
            + "nodes reported them, one point per change per node; per-GiB terms of capacity basis used scale with it.")
    UsedSpaceSeries volumeUsedSpace(@PathVariable UUID volumeId,
            @Parameter(description = FROM) @RequestParam(required = false) String from,
            @Parameter(description = TO) @RequestParam(required = false) String to) {
        UsageVolumes.VolumeInfo volume = directory.volume(volumeId)
                .orElseThrow(() -> ApiException.notFound("Volume", volumeId));
        scope.requireTenant(volume.tenantId(), "Volume", volumeId);
        UsageRange range = range(from, to, null);
        return new UsedSpaceSeries(volumeId, range.from(), range.to(), usedSpace.history(volumeId, range.from(), range.to()));
    }

    @GetMapping("/tenants/{tenantId}")
    @Operation(summary = "Usage of a tenant", description = "Summed over the tenant's volumes; one point per step, each "
            + "covering [ts, ts + step). Latencies are ops-weighted means over the volumes.")
    UsageSeries tenantUsage(@PathVariable UUID tenantId,
            @Parameter(description = FROM) @RequestParam(required = false) String from,
            @Parameter(description = TO) @RequestParam(required = false) String to,
            @Parameter(description = STEP) @RequestParam(required = false) String step) {
        if (!directory.tenantExists(tenantId)) {
            throw ApiException.notFound("Tenant", tenantId);
        }
        scope.requireTenant(tenantId, "Tenant", tenantId);
        UsageRange range = range(from, to, step);
        return new UsageSeries(null, tenantId, range.from(), range.to(), range.step().toString(),
                range.level().wireName(), queries.tenant(tenantId, range),
                queries.gaps(directory.nodesOfTenant(tenantId), range));
    }

    @GetMapping("/total")
    @Operation(summary = "Usage of everything the caller sees", description = "Summed over every volume of every tenant "
            + "(a caller bound to a tenant: over its tenant's volumes, as the tenant's series); what the dashboard's "
            + "cluster figures show. One point per step, each covering [ts, ts + step). Latencies are ops-weighted "
            + "means over the volumes; gaps are those of every node (a bound caller: of its tenant's nodes).")
    UsageSeries totalUsage(
            @Parameter(description = FROM) @RequestParam(required = false) String from,
            @Parameter(description = TO) @RequestParam(required = false) String to,
            @Parameter(description = STEP) @RequestParam(required = false) String step) {
        UsageRange range = range(from, to, step);
        UUID tenantId = scope.boundTenant().orElse(null);
        return new UsageSeries(null, tenantId, range.from(), range.to(), range.step().toString(),
                range.level().wireName(), tenantId == null ? queries.total(range) : queries.tenant(tenantId, range),
                queries.gaps(tenantId == null ? null : directory.nodesOfTenant(tenantId), range));
    }

    @GetMapping("/nodes/{nodeId}/tasks")
    @Operation(summary = "CPU and worker time split of a node by scheduler task",
            description = "Per task: ops, CPU time and worker time (CPU time plus time blocked holding a worker), "
                    + "its part of the node's charged CPU and of its worker time (the split task shares govern), "
                    + "and its mean share, per step.")
    TaskUsageSeries nodeTaskUsage(@PathVariable UUID nodeId,
            @Parameter(description = FROM) @RequestParam(required = false) String from,
            @Parameter(description = TO) @RequestParam(required = false) String to,
            @Parameter(description = STEP) @RequestParam(required = false) String step) {
        if (!directory.nodeExists(nodeId)) {
            throw ApiException.notFound("Node", nodeId);
        }
        scope.requireNode(nodeId);
        UsageRange range = range(from, to, step);
        return new TaskUsageSeries(nodeId, range.from(), range.to(), range.step().toString(), range.level().wireName(),
                queries.tasks(nodeId, range), queries.gaps(List.of(nodeId), range));
    }

    @GetMapping("/top")
    @Operation(summary = "Busiest volumes", description = "Volumes ranked by total ops (iops), bytes, ops-weighted p99 "
            + "latency or throttled time over [from, to). A caller bound to a tenant sees its tenant's volumes only.")
    TopVolumes topVolumes(
            @Parameter(description = "Ranked by", schema = @Schema(allowableValues = {"iops", "bytes", "latency", "throttled"}))
            @RequestParam(defaultValue = "iops") String by,
            @Parameter(description = "How many volumes: 1 to weir.usage.max-top (default 100)") @RequestParam(defaultValue = "10") int limit,
            @Parameter(description = "Only this tenant's volumes") @RequestParam(required = false) UUID tenantId,
            @Parameter(description = FROM) @RequestParam(required = false) String from,
            @Parameter(description = TO) @RequestParam(required = false) String to,
            @Parameter(description = STEP + " For a top-N only the alignment and the level matter.")
            @RequestParam(required = false) String step) {
        UsageQueries.TopMeasure measure;
        try {
            measure = UsageQueries.TopMeasure.valueOf(by.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new RequestValidationException("by", "must be one of iops, bytes, latency, throttled");
        }
        if (limit < 1 || limit > properties.maxTop()) {
            throw new RequestValidationException("limit", "must be between 1 and " + properties.maxTop());
        }
        UsageRange range = range(from, to, step);
        AccessScope.TenantFilter filter = scope.listFilter(tenantId);
        List<TopVolumes.Entry> entries = filter.visible()
                ? queries.top(measure, limit, filter.tenantId(), range, directory) : List.of();
        return new TopVolumes(range.from(), range.to(), range.step().toString(), range.level().wireName(),
                measure.name().toLowerCase(Locale.ROOT), entries);
    }

    private UsageRange range(String from, String to, String step) {
        return UsageRange.parse(from, to, step, clock.instant(), properties);
    }
}
