package io.weir.controlplane.volume;

import io.weir.protocol.AgentMessage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The per-copy state of volumes ({@code volume_placement.in_sync}, {@code copy_state},
 * {@code resync_remaining_bytes}), read and written with SQL: the entity maps placements as a set
 * of node ids, whose rows Hibernate inserts with the columns' defaults (in sync) and deletes, and
 * never rewrites, so the state written here stays.
 */
@Component
class VolumeCopies {

    private final JdbcClient jdbc;

    VolumeCopies(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * The copies of each of {@code volumes}, in one query, each list with the volume's primary
     * first, then by node id; a volume without copies maps to an empty list.
     */
    Map<UUID, List<VolumeCopy>> of(Collection<Volume> volumes) {
        Map<UUID, List<VolumeCopy>> result = new HashMap<>();
        volumes.forEach(v -> result.put(v.getId(), new ArrayList<>()));
        List<UUID> placed = volumes.stream().filter(v -> !v.getNodeIds().isEmpty()).map(Volume::getId).toList();
        if (placed.isEmpty()) {
            return result;
        }
        jdbc.sql("SELECT volume_id, node_id, copy_state, in_sync, resync_remaining_bytes FROM volume_placement"
                        + " WHERE volume_id = ANY(:ids::uuid[])")
                .param("ids", placed.toArray(UUID[]::new))
                .query(rs -> {
                    result.get(rs.getObject(1, UUID.class)).add(new VolumeCopy(rs.getObject(2, UUID.class),
                            AgentMessage.CopyState.valueOf(rs.getString(3)), rs.getBoolean(4), rs.getLong(5)));
                });
        for (Volume v : volumes) {
            result.get(v.getId()).sort(primaryFirst(v.getPrimaryNodeId()));
        }
        return result;
    }

    /** The copies of one volume, primary first. */
    List<VolumeCopy> of(Volume volume) {
        return of(List.of(volume)).get(volume.getId());
    }

    /**
     * Marks copies just added to a volume that holds data elsewhere: out of sync, with all of
     * {@code sizeBytes} to copy. The primary copies them in full.
     */
    void startOutOfSync(UUID volumeId, Collection<UUID> nodeIds, long sizeBytes) {
        if (nodeIds.isEmpty()) {
            return;
        }
        jdbc.sql("UPDATE volume_placement SET in_sync = false, copy_state = 'outOfSync', resync_remaining_bytes = :size"
                        + " WHERE volume_id = :volume AND node_id = ANY(:nodes::uuid[])")
                .param("size", sizeBytes).param("volume", volumeId).param("nodes", nodeIds.toArray(UUID[]::new))
                .update();
    }

    /** How many volumes each of {@code nodeIds} holds a copy of; a node without any has no entry. */
    Map<UUID, Long> volumesPerNode(Collection<UUID> nodeIds) {
        Map<UUID, Long> result = new HashMap<>();
        if (nodeIds.isEmpty()) {
            return result;
        }
        jdbc.sql("SELECT node_id, count(*) FROM volume_placement WHERE node_id = ANY(:ids::uuid[]) GROUP BY node_id")
                .param("ids", nodeIds.toArray(UUID[]::new))
                .query(rs -> {
                    result.put(rs.getObject(1, UUID.class), rs.getLong(2));
                });
        return result;
    }

    /** Orders copies with {@code primary} first, then by node id (PostgreSQL's uuid order, the text order). */
    static Comparator<VolumeCopy> primaryFirst(UUID primary) {
        return Comparator.comparing((VolumeCopy c) -> !c.nodeId().equals(primary))
                .thenComparing(c -> c.nodeId().toString());
    }
}
