package io.weir.controlplane.volume;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of replicated volumes' failover ({@code weir.replication.*}).
 *
 * @param checkInterval how often each control-plane replica looks for replicated volumes whose
 *     primary is gone ({@link ReplicationFailover})
 * @param lease how long a primary's agent may be without a live connection to the control plane
 *     before an in-sync copy is promoted in its place; counted from this replica's start at the
 *     earliest, so that agents have time to reconnect after a restart
 * @param reconnectGrace how long after this replica's start, beyond the lease, a primary's agent
 *     may take to reconnect: the agents' largest reconnect delay (their {@code --backoff-max}, 30 s
 *     by default), which an agent reaches when the control plane has been down for a while; also
 *     how long a copy's agent that reconnected after its primary was lost must stay connected
 *     before it may be promoted
 */
@ConfigurationProperties("weir.replication")
public record ReplicationProperties(
        @DefaultValue("1s") Duration checkInterval,
        @DefaultValue("10s") Duration lease,
        @DefaultValue("30s") Duration reconnectGrace) {

    public ReplicationProperties {
        if (checkInterval.isNegative() || checkInterval.isZero() || lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("weir.replication.check-interval and lease must be positive");
        }
        if (reconnectGrace.isNegative()) {
            throw new IllegalArgumentException("weir.replication.reconnect-grace must not be negative");
        }
    }
}
