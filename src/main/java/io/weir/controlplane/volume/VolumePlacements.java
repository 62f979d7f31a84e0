package io.weir.controlplane.volume;

import io.weir.controlplane.config.PlacedVolumes;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.VolumeConfig;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The volumes placed on a node, for its desired-config snapshot. */
@Component
class VolumePlacements implements PlacedVolumes {

    private final VolumeRepository volumes;
    private final VolumeService service;

    VolumePlacements(VolumeRepository volumes, VolumeService service) {
        this.volumes = volumes;
        this.service = service;
    }

    /** Ordered by tenant id, then volume name (then id, which never decides: names are unique per tenant). */
    @Override
    @Transactional(readOnly = true)
    public List<VolumeConfig> placedOn(UUID nodeId) {
        List<Volume> placed = volumes.findByNodeIdsContainingOrderByTenantIdAscNameAscIdAsc(nodeId);
        Function<Volume, EffectivePolicy> effective = service.effectiveOf(placed);
        return placed.stream()
                .map(v -> new VolumeConfig(v.getId(), v.getTenantId(), v.getName(), v.getSizeBytes(), effective.apply(v)))
                .toList();
    }
}
