package io.weir.controlplane.volume;

import io.weir.controlplane.config.PlacedVolumes;
import io.weir.controlplane.node.NodeService;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.ReplicationConfig;
import io.weir.protocol.VolumeConfig;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * The volumes placed on nodes, for their desired-config snapshots: each with its effective policy
 * and, when it keeps several copies, its {@link ReplicationConfig}. A volume of one copy (and a
 * legacy placement on several nodes) has none, so its part of the snapshot is what it was before
 * replication existed.
 */
@Component
@Transactional(readOnly = true)
class VolumePlacements implements PlacedVolumes {

    private static final Logger log = LoggerFactory.getLogger(VolumePlacements.class);

    private final VolumeRepository volumes;
    private final VolumeService service;
    private final VolumeCopies copies;
    private final NodeService nodes;

    VolumePlacements(VolumeRepository volumes, VolumeService service, VolumeCopies copies, NodeService nodes) {
        this.volumes = volumes;
        this.service = service;
        this.copies = copies;
        this.nodes = nodes;
    }

    /**
     * One query for the volumes, one per 100 of them for their placements (batched), one for
     * their policies, and for the replicated ones one for their copies and one for the copies'
     * replication addresses. Each list is ordered by tenant id, then volume name (then id, which
     * never decides: names are unique per tenant).
     */
    @Override
    public Map<UUID, List<VolumeConfig>> placedOnEach(Collection<UUID> nodeIds) {
        Map<UUID, List<VolumeConfig>> byNode = new HashMap<>();
        nodeIds.forEach(n -> byNode.put(n, new ArrayList<>()));
        if (nodeIds.isEmpty()) {
            return byNode;
        }
        List<Volume> placed = volumes.findPlacedOnAny(nodeIds);
        Function<Volume, EffectivePolicy> effective = service.effectiveOf(placed);
        List<Volume> replicated = placed.stream().filter(Volume::isReplicated).toList();
        Map<UUID, List<VolumeCopy>> copiesOf = copies.of(replicated);
        Map<UUID, String> addresses = nodes.replicationAddresses(replicated.stream()
                .flatMap(v -> v.getNodeIds().stream()).distinct().toList());
        for (Volume v : placed) {
            VolumeConfig config = new VolumeConfig(v.getId(), v.getTenantId(), v.getName(), v.getSizeBytes(), effective.apply(v),
                    v.isReplicated() ? replication(v, copiesOf.get(v.getId()), addresses) : null);
            for (UUID node : v.getNodeIds()) {
                List<VolumeConfig> list = byNode.get(node);
                if (list != null) {
                    list.add(config);
                }
            }
        }
        return byNode;
    }

    /**
     * The replication member of a replicated volume's config: its epoch, primary and sync
     * sequence, and each copy with its node's replication address and whether it is in sync,
     * primary first, then by node id. Null, with a warning, for a volume whose primary holds no
     * copy (which no write makes): a node then serves it alone rather than every snapshot failing.
     */
    private static ReplicationConfig replication(Volume v, List<VolumeCopy> copies, Map<UUID, String> addresses) {
        UUID primary = v.getPrimaryNodeId();
        if (primary == null || copies.stream().noneMatch(c -> c.nodeId().equals(primary))) {
            log.warn("replicated volume {} has no copy on its primary {}; its config carries no replication", v.getId(),
                    primary);
            return null;
        }
        return new ReplicationConfig(v.getEpoch(), primary, v.getSyncSequence(), copies.stream()
                .sorted(VolumeCopies.primaryFirst(primary))
                .map(c -> new ReplicationConfig.Copy(c.nodeId(), addresses.get(c.nodeId()), c.inSync()))
                .toList());
    }

    @Override
    public List<VolumeConfig> placedOn(UUID nodeId) {
        return placedOnEach(List.of(nodeId)).get(nodeId);
    }
}
