package io.weir.controlplane.volume;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.node.NodeConnections;
import io.weir.controlplane.node.NodeService;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Promotes an in-sync copy of a replicated volume whose primary is gone.
 *
 * <h2>When a primary is gone</h2>
 * Every {@link ReplicationProperties#checkInterval()} this replica reads the replicated volumes
 * (replicas above 1) and asks the agent channel's shared state ({@link NodeConnections}) whether
 * each primary's agent holds a live connection: a connection row whose control-plane replica
 * still beats ({@code weir.push.replica-timeout}). A primary counts as gone once this replica has
 * seen it without one for longer than {@link ReplicationProperties#lease()} on {@link Clock}:
 * the first time it sees a primary disconnected starts the count, which is never earlier than this
 * replica's start plus {@link ReplicationProperties#reconnectGrace()}. After an outage of the
 * control plane, agents come back within their largest reconnect delay (30 s by default), not at
 * once: a restarted control plane gives them that, and the lease after it, before it promotes
 * anything. (The agent is embedded in its data node: a data node without its agent's
 * connection is taken for lost. Writes it might still take cannot be acknowledged after the
 * promotion, because the replicas refuse the old epoch.)
 *
 * <h2>The promotion</h2>
 * Among the volume's copies in sync whose agent is connected (by node id), the first becomes the
 * primary; none, and nothing happens: the volume is unavailable until its primary returns or a
 * copy in sync connects, and shows {@code degraded} when copies are out of sync. In one
 * transaction: the config revision is bumped, the volume row is locked {@code FOR UPDATE} and the
 * decision checked again under it (same primary, same epoch, the copy still in sync), then the
 * volume gets the new primary, {@code epoch + 1} and {@code sync_sequence + 1} (so that the
 * in-sync set it sends counts as a change, above what the old primary reported), its version is
 * incremented (so a REST update that read the old primary fails its version check), the old
 * primary's copy is marked out of sync with all of the volume to copy (it is copied in full when
 * it returns), and the promotion is audited ({@code volume.failover}, by the system). A check that
 * fails under the lock rolls all of it back, bump included. So several control-plane replicas may
 * scan at once: one promotes, the others find the epoch moved. The lock order is that of
 * {@link ConfigRevisions}, the one {@link ReplicationIntake} follows too.
 *
 * <h2>Metrics</h2>
 * {@code weir_replication_failovers_total}: promotions this replica made;
 * {@code weir_volumes_degraded}: replicated volumes with fewer copies in sync than replicas.
 */
@Component
public class ReplicationFailover {

    private static final Logger log = LoggerFactory.getLogger(ReplicationFailover.class);

    private final JdbcClient jdbc;
    private final NodeService nodes;
    private final ConfigRevisions revisions;
    private final AuditLog audit;
    private final Clock clock;
    private final Duration lease;
    /** No primary counts as gone from before this: this replica's start plus the reconnect grace. */
    private final Instant countFrom;
    private final TransactionTemplate tx;
    private final Counter failovers;

    /** Since when this replica has seen each primary without a live connection. */
    private final Map<UUID, Instant> disconnectedSince = new HashMap<>();
    /**
     * How long a copy's agent must have been connected to be promoted, unless it was connected
     * from before its primary was lost: after an outage of the control plane's own, agents come
     * back in their backoff's order, and a copy back first must not replace a primary on its way.
     */
    private final Duration reconnectGrace;

    /**
     * Public so that a test can start a second scanner beside the application's, as another
     * control-plane replica (or this one after a restart) would run.
     */
    public ReplicationFailover(JdbcClient jdbc, NodeService nodes, ConfigRevisions revisions, AuditLog audit, Clock clock,
            ReplicationProperties properties, PlatformTransactionManager transactions, MeterRegistry registry) {
        this.jdbc = jdbc;
        this.nodes = nodes;
        this.revisions = revisions;
        this.audit = audit;
        this.clock = clock;
        this.lease = properties.lease();
        this.countFrom = clock.instant().plus(properties.reconnectGrace());
        this.reconnectGrace = properties.reconnectGrace();
        this.tx = new TransactionTemplate(transactions);
        this.failovers = Counter.builder("weir.replication.failovers")
                .description("Promotions of an in-sync copy after the primary's agent was lost").register(registry);
        Gauge.builder("weir.volumes.degraded", jdbc, ReplicationFailover::degraded)
                .description("Replicated volumes with fewer copies in sync than replicas").register(registry);
    }

    /**
     * When this replica starts counting leases: its start plus the reconnect grace. A primary lost
     * before it is counted as gone from then on.
     */
    public Instant leasesCountFrom() {
        return countFrom;
    }

    @Scheduled(initialDelayString = "${weir.replication.check-interval:1s}",
            fixedDelayString = "${weir.replication.check-interval:1s}")
    void scheduledCheck() {
        try {
            check();
        } catch (RuntimeException e) {
            log.warn("replication check failed: {}", e.toString());
        }
    }

    private record Replicated(UUID id, UUID primary, long epoch) {
    }

    /**
     * Looks at every replicated volume once and promotes where its primary has been gone longer
     * than the lease; answers how many it promoted. Runs on the scheduler; a test may call it.
     */
    public synchronized int check() {
        Instant now = clock.instant();
        List<Replicated> replicated = jdbc.sql("SELECT id, primary_node_id, epoch FROM volume"
                        + " WHERE replicas > 1 AND primary_node_id IS NOT NULL ORDER BY id")
                .query((rs, n) -> new Replicated(rs.getObject(1, UUID.class), rs.getObject(2, UUID.class), rs.getLong(3)))
                .list();
        Set<UUID> primaries = new HashSet<>();
        replicated.forEach(r -> primaries.add(r.primary()));
        Map<UUID, NodeConnections.AgentPresence> agents = nodes.agents(primaries);
        disconnectedSince.keySet().retainAll(primaries);
        for (UUID primary : primaries) {
            if (connected(agents.get(primary))) {
                disconnectedSince.remove(primary);
            } else {
                // a clock set back (tests do) restarts the count rather than freezing it
                Instant from = now.isBefore(countFrom) ? countFrom : now;
                disconnectedSince.merge(primary, from, (since, at) -> since.isAfter(at) ? at : since);
            }
        }
        int promoted = 0;
        for (Replicated volume : replicated) {
            Instant since = disconnectedSince.get(volume.primary());
            if (since != null && Duration.between(since, now).compareTo(lease) > 0 && promote(volume, since, now)) {
                promoted++;
            }
        }
        return promoted;
    }

    private static boolean connected(NodeConnections.AgentPresence agent) {
        return agent != null && agent.replica() != null;
    }

    /** A copy's agent may be promoted: connected since before the primary was lost, or for the reconnect grace. */
    private boolean candidate(NodeConnections.AgentPresence agent, Instant primaryLost, Instant now) {
        return connected(agent) && (agent.connectedAt() == null || !agent.connectedAt().isAfter(primaryLost)
                || !agent.connectedAt().plus(reconnectGrace).isAfter(now));
    }

    /** What a promotion changes, for the audit log. */
    record Promotion(UUID primaryNodeId, long epoch, String reason) {
    }

    private record Locked(UUID primary, long epoch, long sizeBytes, UUID tenantId, int replicas) {
    }

    private boolean promote(Replicated volume, Instant since, Instant now) {
        List<UUID> inSync = jdbc.sql("SELECT node_id FROM volume_placement WHERE volume_id = ? AND in_sync AND node_id <> ?"
                        + " ORDER BY node_id")
                .param(volume.id()).param(volume.primary()).query(UUID.class).list();
        Map<UUID, NodeConnections.AgentPresence> agents = nodes.agents(inSync);
        UUID chosen = inSync.stream().filter(n -> candidate(agents.get(n), since, now)).findFirst().orElse(null);
        if (chosen == null) {
            log.debug("volume {}: primary {} gone since {}, but no copy in sync is connected (since before that, or for "
                    + "the reconnect grace); not promoted", volume.id(), volume.primary(), since);
            return false;
        }
        Boolean done = tx.execute(status -> {
            revisions.bump(); // lock order: see ConfigRevisions
            Locked locked = jdbc.sql("SELECT primary_node_id, epoch, size_bytes, tenant_id, replicas FROM volume"
                            + " WHERE id = ? FOR UPDATE")
                    .param(volume.id())
                    .query((rs, n) -> new Locked(rs.getObject(1, UUID.class), rs.getLong(2), rs.getLong(3),
                            rs.getObject(4, UUID.class), rs.getInt(5)))
                    .optional().orElse(null);
            boolean stillInSync = locked != null && jdbc.sql("SELECT in_sync FROM volume_placement"
                            + " WHERE volume_id = ? AND node_id = ?")
                    .param(volume.id()).param(chosen).query(Boolean.class).optional().orElse(false);
            if (locked == null || !volume.primary().equals(locked.primary()) || volume.epoch() != locked.epoch()
                    || locked.replicas() < 2 || !stillInSync) {
                status.setRollbackOnly();
                return false;
            }
            long size = locked.sizeBytes();
            jdbc.sql("UPDATE volume SET primary_node_id = ?, epoch = epoch + 1, sync_sequence = sync_sequence + 1,"
                            + " version = version + 1, updated_at = now() WHERE id = ?")
                    .param(chosen).param(volume.id()).update();
            jdbc.sql("UPDATE volume_placement SET in_sync = false, copy_state = 'outOfSync', resync_remaining_bytes = ?"
                            + " WHERE volume_id = ? AND node_id = ?")
                    .param(size).param(volume.id()).param(volume.primary()).update();
            jdbc.sql("UPDATE volume_placement SET copy_state = 'inSync', resync_remaining_bytes = 0"
                            + " WHERE volume_id = ? AND node_id = ?")
                    .param(volume.id()).param(chosen).update();
            audit.record("volume.failover", "volume", volume.id(), locked.tenantId(),
                    new Promotion(volume.primary(), volume.epoch(), null),
                    new Promotion(chosen, volume.epoch() + 1, "the agent of node " + volume.primary()
                            + " had no live connection since " + since + ", longer than the lease of " + lease));
            return true;
        });
        if (Boolean.TRUE.equals(done)) {
            failovers.increment();
            log.info("volume {}: promoted node {} to primary at epoch {}; the agent of the old primary {} had no live "
                    + "connection since {}", volume.id(), chosen, volume.epoch() + 1, volume.primary(), since);
            return true;
        }
        return false;
    }

    private static double degraded(JdbcClient jdbc) {
        return jdbc.sql("SELECT count(*) FROM volume v WHERE v.replicas > 1 AND v.replicas >"
                        + " (SELECT count(*) FROM volume_placement p WHERE p.volume_id = v.id AND p.in_sync)")
                .query(Long.class).single();
    }
}
