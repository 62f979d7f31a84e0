package io.weir.controlplane.push;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.weir.protocol.ProtocolException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.stereotype.Component;

/**
 * The agent channel's metrics, all of bounded cardinality (no node or session tags):
 * <ul>
 *   <li>{@code weir_push_connected_nodes}: agents connected to this replica;</li>
 *   <li>{@code weir_push_nodes_behind}: of those, agents that have not acked the latest snapshot
 *       offered to them;</li>
 *   <li>{@code weir_push_latency_seconds}: from queuing a snapshot to its ack (histogram);</li>
 *   <li>{@code weir_push_frames_rejected_total{code}}: frames refused, by protocol error code;</li>
 *   <li>{@code weir_push_snapshots_superseded_total}: unsent snapshots replaced by a newer one;</li>
 *   <li>{@code weir_push_lag_seconds}: the longest any agent on this replica has been behind
 *       (since the newest snapshot it has not acked was queued; 0 when all are current);</li>
 *   <li>{@code weir_push_usage_reports_received_total}, {@code weir_push_usage_reports_acked_total}:
 *       usage reports received from agents and acknowledged to them (stored, duplicate or
 *       expired; how each ended is {@code weir_usage_reports_total{outcome}});</li>
 *   <li>{@code weir_push_usage_reports_refused_total}: reports refused because their node held
 *       more than its share of the intake queue (its connection is closed; the agent resends);</li>
 *   <li>{@code weir_push_usage_reports_invalid_total}: reports refused at the protocol boundary
 *       (figures outside the protocol's bounds, {@code to} too far ahead): answered as refused,
 *       never stored, never resent;</li>
 *   <li>{@code weir_push_usage_reports_unstorable_total}: reports the database refused, set
 *       aside once and answered as refused;</li>
 *   <li>{@code weir_push_usage_queue}: reports waiting to be stored;</li>
 *   <li>{@code weir_push_frames_over_budget_total}: sessions closed (1013) because the unfinished
 *       frames of all sessions would pass the replica's {@code FrameBudget};</li>
 *   <li>{@code weir_push_status_exports_foreign_total}: exports of status reports left out
 *       because their volume is not placed on the reporting node.</li>
 * </ul>
 */
@Component
class PushMetrics {

    private final Timer latency;
    private final Map<ProtocolException.Code, Counter> rejected = new EnumMap<>(ProtocolException.Code.class);
    private final Counter superseded;
    private final Counter usageReceived;
    private final Counter usageAcked;
    private final Counter usageRefused;
    private final Counter usageInvalid;
    private final Counter partialFramesRefused;
    private final Counter foreignExports;
    private final Counter usageUnstorable;
    private final MeterRegistry registry;

    PushMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.latency = Timer.builder("weir.push.latency")
                .description("From queuing a config snapshot for an agent to its ack")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(30))
                .register(registry);
        for (ProtocolException.Code code : ProtocolException.Code.values()) {
            rejected.put(code, Counter.builder("weir.push.frames.rejected")
                    .description("Frames from agents refused with an error and a close")
                    .tag("code", code.wireName())
                    .register(registry));
        }
        this.superseded = Counter.builder("weir.push.snapshots.superseded")
                .description("Unsent snapshots replaced by a newer one for a slow agent")
                .register(registry);
        this.usageReceived = Counter.builder("weir.push.usage.reports.received")
                .description("Usage reports received from agents").register(registry);
        this.usageAcked = Counter.builder("weir.push.usage.reports.acked")
                .description("Usage reports acknowledged to agents (stored, duplicate or expired)").register(registry);
        this.usageRefused = Counter.builder("weir.push.usage.reports.refused")
                .description("Usage reports refused because their node held more than its share of the intake queue "
                        + "(the agent resends)").register(registry);
        this.usageInvalid = Counter.builder("weir.push.usage.reports.invalid")
                .description("Usage reports refused at the protocol boundary (answered as refused, never stored)")
                .register(registry);
        this.partialFramesRefused = Counter.builder("weir.push.frames.over.budget")
                .description("Sessions closed because unfinished frames would pass the replica's budget").register(registry);
        this.foreignExports = Counter.builder("weir.push.status.exports.foreign")
                .description("Exports in status reports of volumes not placed on the reporting node (left out)")
                .register(registry);
        this.usageUnstorable = Counter.builder("weir.push.usage.reports.unstorable")
                .description("Usage reports the database refused, set aside once and answered as refused")
                .register(registry);
    }

    /** Registers the gauge of the longest push lag on this replica, in seconds. */
    void lag(Supplier<Number> seconds) {
        Gauge.builder("weir.push.lag", seconds).baseUnit("seconds")
                .description("Longest time an agent on this replica has been behind its newest snapshot")
                .register(registry);
    }

    /** Registers the gauge of reports waiting to be stored. */
    void answersPending(Supplier<Number> nodes) {
        Gauge.builder("weir.push.answers.pending", nodes)
                .description("Nodes whose agent's latest ack or nack is not yet stored").register(registry);
    }

    void usageQueue(Supplier<Number> size) {
        Gauge.builder("weir.push.usage.queue", size).description("Usage reports waiting to be stored")
                .register(registry);
    }

    void usageReceived() {
        usageReceived.increment();
    }

    void usageAcked() {
        usageAcked.increment();
    }

    void usageRefused() {
        usageRefused.increment();
    }

    void partialFramesRefused() {
        partialFramesRefused.increment();
    }

    void foreignExports(int n) {
        foreignExports.increment(n);
    }

    void usageInvalid() {
        usageInvalid.increment();
    }

    void usageUnstorable() {
        usageUnstorable.increment();
    }

    /** Registers the gauges over this replica's sessions. */
    void gauges(Supplier<Number> connected, Supplier<Number> behind) {
        Gauge.builder("weir.push.connected.nodes", connected).description("Agents connected to this replica")
                .register(registry);
        Gauge.builder("weir.push.nodes.behind", behind)
                .description("Agents on this replica that have not acked the latest snapshot offered to them")
                .register(registry);
    }

    void acked(long nanos) {
        latency.record(Duration.ofNanos(nanos));
    }

    void rejected(ProtocolException.Code code) {
        rejected.get(code).increment();
    }

    void superseded() {
        superseded.increment();
    }
}
