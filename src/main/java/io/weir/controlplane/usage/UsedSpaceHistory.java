package io.weir.controlplane.usage;

import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The history of each volume's used bytes: what its data nodes report in their status messages
 * (the allocated extents of the volume's file), one row per change per node, kept as long as the
 * raw usage samples ({@code weir.usage.retention.raw}). Read by {@code GET
 * /api/v1/usage/volumes/{id}/used}.
 */
@Service
public class UsedSpaceHistory {

    /** Most points one query returns (the newest). */
    static final int MAX_POINTS = 10_000;

    private final JdbcClient jdbc;
    private final UsageVolumes volumes;
    private final ObjectProvider<UsedSpaceListener> listeners;
    private final UsageProperties properties;
    private final Clock clock;

    UsedSpaceHistory(JdbcClient jdbc, UsageVolumes volumes, ObjectProvider<UsedSpaceListener> listeners,
            UsageProperties properties, Clock clock) {
        this.jdbc = jdbc;
        this.volumes = volumes;
        this.listeners = listeners;
        this.properties = properties;
        this.clock = clock;
    }

    /**
     * Stores what node {@code nodeId} reported for the volumes placed on it (others are ignored),
     * a row only where the figure changed since that node's last one, and tells the
     * {@link UsedSpaceListener}s in the same transaction.
     */
    @Transactional
    public void record(UUID nodeId, Map<UUID, Long> usedBytes) {
        if (usedBytes.isEmpty()) {
            return;
        }
        Map<UUID, Set<UUID>> nodesOf = volumes.nodesOfVolumes(usedBytes.keySet());
        Map<UUID, Long> placed = new LinkedHashMap<>();
        usedBytes.forEach((volume, used) -> {
            if (used != null && used >= 0 && nodesOf.getOrDefault(volume, Set.of()).contains(nodeId)) {
                placed.put(volume, used);
            }
        });
        if (placed.isEmpty()) {
            return;
        }
        Instant now = clock.instant();
        jdbc.sql("""
                        INSERT INTO usage_volume_used (ts, node_id, volume_id, used_bytes)
                        SELECT :ts, :node, r.v, r.u FROM unnest(:volumes::uuid[], :used::bigint[]) AS r(v, u)
                        WHERE r.u IS DISTINCT FROM (SELECT x.used_bytes FROM usage_volume_used x
                                                    WHERE x.volume_id = r.v AND x.node_id = :node ORDER BY x.ts DESC LIMIT 1)
                        ON CONFLICT DO NOTHING""")
                .param("ts", java.sql.Timestamp.from(now)).param("node", nodeId)
                .param("volumes", placed.keySet().toArray(UUID[]::new))
                .param("used", placed.values().toArray(Long[]::new)).update();
        jdbc.sql("DELETE FROM usage_volume_used WHERE ts < ?")
                .param(java.sql.Timestamp.from(now.minus(properties.retention().raw()))).update();
        listeners.orderedStream().forEach(l -> l.usedSpaceReported(nodeId, placed));
    }

    /**
     * One reported figure.
     *
     * @param ts when the control plane received it
     * @param nodeId the node that reported it
     * @param usedBytes bytes allocated in the volume's file on that node
     */
    public record Point(Instant ts, UUID nodeId, long usedBytes) {
    }

    /** The figures reported for {@code volumeId} in [from, to), oldest first, at most {@value #MAX_POINTS} (the newest). */
    @Transactional(readOnly = true)
    public List<Point> history(UUID volumeId, Instant from, Instant to) {
        List<Point> newest = new java.util.ArrayList<>(jdbc.sql("""
                        SELECT ts, node_id, used_bytes FROM usage_volume_used
                        WHERE volume_id = ? AND ts >= ? AND ts < ? ORDER BY ts DESC, node_id""" + " LIMIT " + MAX_POINTS)
                .param(volumeId).param(java.sql.Timestamp.from(from)).param(java.sql.Timestamp.from(to))
                .query((rs, n) -> new Point(rs.getTimestamp(1).toInstant(), rs.getObject(2, UUID.class), rs.getLong(3)))
                .list());
        java.util.Collections.reverse(newest);
        return newest;
    }
}
