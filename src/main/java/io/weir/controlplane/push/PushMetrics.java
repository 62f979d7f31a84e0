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
 *   <li>{@code weir_push_snapshots_superseded_total}: unsent snapshots replaced by a newer one.</li>
 * </ul>
 */
@Component
class PushMetrics {

    private final Timer latency;
    private final Map<ProtocolException.Code, Counter> rejected = new EnumMap<>(ProtocolException.Code.class);
    private final Counter superseded;
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
