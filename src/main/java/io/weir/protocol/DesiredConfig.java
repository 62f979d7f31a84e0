package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Everything one data node must enforce, as a full snapshot stamped with the global config
 * revision. The control plane serves it at {@code GET /api/v1/nodes/{nodeId}/desired-config}
 * and pushes exactly this object to the node's agent; the agent applies it atomically.
 *
 * @param nodeId the node this snapshot is for
 * @param revision the global config revision the snapshot reflects
 * @param tasks task CPU shares (the node's override if it has one, else the cluster default)
 * @param tenants the tenants that have at least one volume on this node
 * @param volumes the volumes placed on this node, each with its effective policy
 * @param usageReportIntervalSeconds how often the node's agent sends a usage report, from
 *     {@value #MIN_USAGE_REPORT_INTERVAL_SECONDS} to {@value #MAX_USAGE_REPORT_INTERVAL_SECONDS}
 *     seconds; 0, null, or the member left out (a snapshot saved by an agent of an earlier version),
 *     means the default, {@value #DEFAULT_USAGE_REPORT_INTERVAL_SECONDS}
 * @param tls the cluster PKI the node's NBD server enforces on its clients (the CA, the valid and
 *     the revoked client certificates), or null: a snapshot of a control plane without it, or one
 *     saved by an agent of an earlier version; left out of the frame when null
 * @param ioCost the fixed cost of a request in the scheduler's cost model (with the task shares:
 *     the node's override if it has one, else the cluster default); null, or the member left out
 *     (a snapshot saved by an agent of an earlier version, a config file), means
 *     {@link IoCost#DEFAULT}
 */
@JsonClassDescription("Everything one data node must enforce, as a full snapshot stamped with the global config revision. Pushed to the node's agent as is.")
public record DesiredConfig(
        @JsonPropertyDescription("The node this snapshot is for.") UUID nodeId,
        @JsonPropertyDescription("The global config revision the snapshot reflects.") long revision,
        @JsonPropertyDescription("Task CPU shares: the node's override if it has one, else the cluster default.") List<TaskShareConfig> tasks,
        @JsonPropertyDescription("The tenants with at least one volume on this node.") List<TenantConfig> tenants,
        @JsonPropertyDescription("The volumes placed on this node, each with its effective policy.") List<VolumeConfig> volumes,
        @JsonPropertyDescription("How often the node's agent sends a usage report, in seconds (1-3600).")
        @JsonSetter(nulls = Nulls.AS_EMPTY) int usageReportIntervalSeconds,
        @JsonPropertyDescription("The cluster PKI the node enforces on its NBD clients: CA, valid and revoked client certificates.")
        @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable TlsConfig tls,
        @JsonPropertyDescription("The fixed cost of a request in the scheduler's cost model, with the task shares.") IoCost ioCost) {

    /**
     * How a snapshot kept in a file is read and written (an agent's cached snapshot, a data
     * node's {@code --config-file}): strictly, so that a member the snapshot does not have (a
     * misspelt {@code maxIOPS}), one given twice, a null number or trailing text is an error naming
     * it, not a setting silently left at its default. Thread-safe.
     */
    public static final JsonMapper FILE_JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    /** The reporting interval when none is set. */
    public static final int DEFAULT_USAGE_REPORT_INTERVAL_SECONDS = 10;

    /** Shortest reporting interval: one report a second. */
    public static final int MIN_USAGE_REPORT_INTERVAL_SECONDS = 1;

    /** Longest reporting interval: one report an hour. */
    public static final int MAX_USAGE_REPORT_INTERVAL_SECONDS = 3600;

    public DesiredConfig {
        tasks = List.copyOf(tasks);
        tenants = List.copyOf(tenants);
        volumes = List.copyOf(volumes);
        if (ioCost == null) {
            ioCost = IoCost.DEFAULT;
        }
        if (usageReportIntervalSeconds == 0) {
            usageReportIntervalSeconds = DEFAULT_USAGE_REPORT_INTERVAL_SECONDS;
        }
        if (usageReportIntervalSeconds < MIN_USAGE_REPORT_INTERVAL_SECONDS
                || usageReportIntervalSeconds > MAX_USAGE_REPORT_INTERVAL_SECONDS) {
            throw new IllegalArgumentException("usageReportIntervalSeconds must be from " + MIN_USAGE_REPORT_INTERVAL_SECONDS
                    + " to " + MAX_USAGE_REPORT_INTERVAL_SECONDS + ": " + usageReportIntervalSeconds);
        }
    }

    /** A snapshot with the default {@linkplain #ioCost cost of a request}. */
    public DesiredConfig(UUID nodeId, long revision, List<TaskShareConfig> tasks, List<TenantConfig> tenants,
            List<VolumeConfig> volumes, int usageReportIntervalSeconds, @Nullable TlsConfig tls) {
        this(nodeId, revision, tasks, tenants, volumes, usageReportIntervalSeconds, tls, null);
    }

    /** A snapshot without {@linkplain #tls TLS}. */
    public DesiredConfig(UUID nodeId, long revision, List<TaskShareConfig> tasks, List<TenantConfig> tenants,
            List<VolumeConfig> volumes, int usageReportIntervalSeconds) {
        this(nodeId, revision, tasks, tenants, volumes, usageReportIntervalSeconds, null);
    }

    /** The same snapshot stamped with another revision. */
    public DesiredConfig withRevision(long newRevision) {
        return new DesiredConfig(nodeId, newRevision, tasks, tenants, volumes, usageReportIntervalSeconds, tls, ioCost);
    }

    /** A snapshot with the default usage reporting interval. */
    public DesiredConfig(UUID nodeId, long revision, List<TaskShareConfig> tasks, List<TenantConfig> tenants,
            List<VolumeConfig> volumes) {
        this(nodeId, revision, tasks, tenants, volumes, DEFAULT_USAGE_REPORT_INTERVAL_SECONDS);
    }
}
