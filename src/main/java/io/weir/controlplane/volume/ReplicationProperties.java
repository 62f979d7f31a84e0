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
 */
@ConfigurationProperties("weir.replication")
public record ReplicationProperties(
        @DefaultValue("1s") Duration checkInterval,
        @DefaultValue("10s") Duration lease) {

    public ReplicationProperties {
        if (checkInterval.isNegative() || checkInterval.isZero() || lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("weir.replication.check-interval and lease must be positive");
        }
    }
}
