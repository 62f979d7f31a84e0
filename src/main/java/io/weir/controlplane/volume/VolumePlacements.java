package io.weir.controlplane.volume;

import io.weir.controlplane.config.PlacedVolumes;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.VolumeConfig;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The volumes placed on nodes, for their desired-config snapshots. */
@Component
@Transactional(readOnly = true)
class VolumePlacements implements PlacedVolumes {

    private final VolumeRepository volumes;
    private final VolumeService service;

    VolumePlacements(VolumeRepository volumes, VolumeService service) {
        this.volumes = volumes;
        this.service = service;
    }

    /**
     * One query for the volumes, one per 100 of them for their placements (batched), one for
     * their policies. Each list is ordered by tenant id, then volume name (then id, which never
     * decides: names are unique per tenant).
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
        for (Volume v : placed) {
            VolumeConfig config = new VolumeConfig(v.getId(), v.getTenantId(), v.getName(), v.getSizeBytes(), effective.apply(v));
            for (UUID node : v.getNodeIds()) {
                List<VolumeConfig> list = byNode.get(node);
                if (list != null) {
                    list.add(config);
                }
            }
        }
        return byNode;
    }

    @Override
    public List<VolumeConfig> placedOn(UUID nodeId) {
        return placedOnEach(List.of(nodeId)).get(nodeId);
    }
}
