package io.weir.controlplane.volume;

import io.weir.controlplane.config.PlacementIndex;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** Answers whether a tenant's or a policy's changes reach any node: one EXISTS query each. */
@Component
class VolumePlacementIndex implements PlacementIndex {

    private final VolumeRepository volumes;

    VolumePlacementIndex(VolumeRepository volumes) {
        this.volumes = volumes;
    }

    @Override
    @Transactional(readOnly = true)
    public boolean anyPlacedInTenant(UUID tenantId) {
        return volumes.existsPlacedInTenant(tenantId);
    }

    @Override
    @Transactional(readOnly = true)
    public boolean anyPlacedWithPolicy(UUID policyId) {
        return volumes.existsPlacedWithPolicy(policyId);
    }
}
