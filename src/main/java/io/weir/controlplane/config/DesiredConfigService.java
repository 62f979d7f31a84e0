package io.weir.controlplane.config;

import io.weir.protocol.DesiredConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import java.util.List;
import java.util.UUID;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Isolation;
import org.springframework.transaction.annotation.Transactional;

/**
 * Builds a node's {@link DesiredConfig}: a full snapshot of what it must enforce, stamped with
 * the global revision.
 *
 * <p>The snapshot is read in one REPEATABLE READ transaction, so the revision and the rows come
 * from the same committed state: a change is either wholly in the snapshot with its revision, or
 * wholly absent with an earlier one.
 */
@Service
public class DesiredConfigService {

    private final ConfigRevisions revisions;
    private final PlacedVolumes volumes;
    private final EffectiveTaskShares taskShares;
    private final TenantDirectory tenants;

    DesiredConfigService(ConfigRevisions revisions, PlacedVolumes volumes, EffectiveTaskShares taskShares,
            TenantDirectory tenants) {
        this.revisions = revisions;
        this.volumes = volumes;
        this.taskShares = taskShares;
        this.tenants = tenants;
    }

    /** The snapshot for {@code nodeId}; the caller has checked that the node exists. */
    @Transactional(readOnly = true, isolation = Isolation.REPEATABLE_READ)
    public DesiredConfig forNode(UUID nodeId) {
        long revision = revisions.current();
        List<VolumeConfig> placed = volumes.placedOn(nodeId);
        // One query for all the tenants; the foreign key keeps every volume's tenant in place.
        List<TenantConfig> tenantConfigs = tenants.tenants(placed.stream().map(VolumeConfig::tenantId).distinct().toList());
        return new DesiredConfig(nodeId, revision, taskShares.effectiveFor(nodeId), tenantConfigs, placed);
    }
}
