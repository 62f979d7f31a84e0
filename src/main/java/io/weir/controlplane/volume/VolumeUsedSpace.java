package io.weir.controlplane.volume;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.policy.PolicyService;
import io.weir.controlplane.policy.QosPolicy;
import io.weir.controlplane.tenant.TenantService;
import io.weir.controlplane.usage.UsedSpaceListener;
import io.weir.protocol.CapacityQos;
import io.weir.protocol.EffectivePolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * Follows the used bytes the data nodes report: each volume's {@code usedBytes} takes the latest
 * report, and the figure its per-GiB terms scale with under capacity basis {@code used}
 * ({@code usedBytesInForce}) follows only once the report moved past
 * {@link CapacityQos#hysteresisBytes} from it, so that a volume being written re-scales in steps,
 * not at every report. When that changes the numbers a placed volume enforces, the config
 * revision is bumped (also when the volume's tenant scales its limits by used space) and the nodes get the new numbers through the push channel, with no
 * reconnect and no client interruption.
 *
 * <p>Lock order ({@link ConfigRevisions}): it decides from a plain read, then bumps, then writes
 * the volume rows, which are the last locks it takes.
 */
@Component
class VolumeUsedSpace implements UsedSpaceListener {

    private final VolumeRepository volumes;
    private final PolicyService policies;
    private final ConfigRevisions revisions;
    private final JdbcClient jdbc;
    private final TenantService tenants;

    VolumeUsedSpace(VolumeRepository volumes, PolicyService policies, ConfigRevisions revisions, JdbcClient jdbc,
            TenantService tenants) {
        this.tenants = tenants;
        this.volumes = volumes;
        this.policies = policies;
        this.revisions = revisions;
        this.jdbc = jdbc;
    }

    @Override
    @Transactional(propagation = Propagation.MANDATORY)
    public void usedSpaceReported(UUID nodeId, Map<UUID, Long> usedBytes) {
        List<Volume> reported = volumes.findAllById(usedBytes.keySet());
        Map<UUID, QosPolicy> byId = policies.findAll(reported.stream().map(Volume::getPolicyId).distinct().toList());
        List<Volume> rescaled = new ArrayList<>();
        boolean enforced = false;
        for (Volume v : reported) {
            long used = usedBytes.get(v.getId());
            if (!CapacityQos.beyondHysteresis(v.getUsedBytesInForce(), used, v.getSizeBytes())) {
                continue;
            }
            rescaled.add(v);
            enforced |= tenants.require(v.getTenantId()).terms().basis() == CapacityQos.CapacityBasis.used
                    && tenants.require(v.getTenantId()).terms().scales();
            QosPolicy policy = byId.get(v.getPolicyId());
            if (policy == null || v.getNodeIds().isEmpty()) {
                continue;
            }
            CapacityQos terms = EffectivePolicies.combine(policy.terms(), v.getOverrides());
            EffectivePolicy before = EffectivePolicies.resolve(terms, policy.costModel(), v.getSizeBytes(),
                    v.getUsedBytesInForce());
            EffectivePolicy after = EffectivePolicies.resolve(terms, policy.costModel(), v.getSizeBytes(), used);
            enforced |= !before.equals(after);
        }
        if (enforced) {
            revisions.bump(); // lock order: see ConfigRevisions
        }
        for (Volume v : reported) {
            long used = usedBytes.get(v.getId());
            boolean rescale = rescaled.contains(v);
            if (rescale || !Objects.equals(v.getUsedBytes(), used)) {
                jdbc.sql("UPDATE volume SET used_bytes = :used, used_reported_at = now()"
                                + (rescale ? ", used_bytes_in_force = :used" : "") + " WHERE id = :id")
                        .param("used", used).param("id", v.getId()).update();
            }
        }
    }
}
