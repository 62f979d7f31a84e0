package io.weir.controlplane.push;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the agent channel ({@code weir.push.*}).
 *
 * @param replicaId this replica's id, shown as a node's {@code status.replica}; empty picks the
 *     host name and a random suffix, unique per start
 * @param pollInterval how often the revision is polled, beside {@code LISTEN/NOTIFY}: the longest
 *     a change waits when a notification is lost (and the reconnect delay of the listener)
 * @param heartbeatInterval how often this replica stamps its heartbeat row
 * @param replicaTimeout a replica whose heartbeat is older than this is taken for dead: its
 *     connections count as none
 * @param sessionIdleTimeout a connection on which nothing arrived for this long (not even a
 *     ping) is closed: three of the agents' heartbeat intervals (10 s). It is also how long an
 *     agent that died without closing its connection (its host lost power) still counts as
 *     connected, before a failover's lease starts
 * @param receiveRate frames a second this replica reads from one node beyond its burst
 *     ({@link ReceivePacer}); above 0
 * @param receiveBurst frames a node may send at once before its rate applies; at least 1
 */
@ConfigurationProperties("weir.push")
public record PushProperties(
        @DefaultValue("") String replicaId,
        @DefaultValue("5s") Duration pollInterval,
        @DefaultValue("5s") Duration heartbeatInterval,
        @DefaultValue("30s") Duration replicaTimeout,
        @DefaultValue("30s") Duration sessionIdleTimeout,
        @DefaultValue("100") double receiveRate,
        @DefaultValue("4000") int receiveBurst) {
}
