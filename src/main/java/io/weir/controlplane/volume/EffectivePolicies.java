package io.weir.controlplane.volume;

import io.weir.controlplane.web.FieldError;
import io.weir.protocol.EffectivePolicy;
import java.util.List;

/**
 * Combines a policy with a volume's overrides, member by member: the override if it is set, else
 * the policy's value. The cost model always comes from the policy.
 */
final class EffectivePolicies {

    private EffectivePolicies() {
    }

    static EffectivePolicy combine(EffectivePolicy policy, VolumeOverrides o) {
        return new EffectivePolicy(
                o.weight() != null ? o.weight() : policy.weight(),
                o.minIops() != null ? o.minIops() : policy.minIops(),
                o.maxIops() != null ? o.maxIops() : policy.maxIops(),
                o.burstIops() != null ? o.burstIops() : policy.burstIops(),
                o.maxBytesPerSec() != null ? o.maxBytesPerSec() : policy.maxBytesPerSec(),
                o.burstBytesPerSec() != null ? o.burstBytesPerSec() : policy.burstBytesPerSec(),
                policy.costModel());
    }

    /**
     * The rules between fields of {@link io.weir.protocol.QosSettings} that the effective policy breaks, each reported against the
     * override that causes it ({@code overrides.maxIops}); a policy alone is always consistent, so
     * at least one member of every broken rule is overridden.
     */
    static List<FieldError> violations(EffectivePolicy effective, VolumeOverrides o) {
        return effective.qosSettings().consistency().stream()
                .map(v -> new FieldError("overrides." + (o.isSet(v.field()) || !o.isSet(v.related()) ? v.field() : v.related()),
                        "effective " + v.message() + " (null overrides inherit from the policy)"))
                .toList();
    }
}
