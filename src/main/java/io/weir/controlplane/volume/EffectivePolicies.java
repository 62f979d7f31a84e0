package io.weir.controlplane.volume;

import io.weir.controlplane.web.FieldError;
import io.weir.protocol.CapacityQos;
import io.weir.protocol.EffectiveCostModel;
import io.weir.protocol.EffectivePolicy;
import java.util.List;

/**
 * Combines a policy with a volume's overrides, member by member: the override if it is set, else
 * the policy's value (each absolute number, rate, floor and the capacity basis alike). The cost
 * model always comes from the policy. Then resolves the combined terms at the volume's capacity
 * ({@link CapacityQos}, where the formula is written down) into the absolute numbers a node
 * enforces.
 */
final class EffectivePolicies {

    private EffectivePolicies() {
    }

    /** The policy's terms with the volume's overrides in place. */
    static CapacityQos combine(CapacityQos policy, VolumeOverrides o) {
        CapacityQos over = o.terms();
        return new CapacityQos(o.weight() != null ? o.weight() : policy.weight(),
                policy.minIops().overriddenBy(over.minIops()), policy.maxIops().overriddenBy(over.maxIops()),
                policy.burstIops().overriddenBy(over.burstIops()),
                policy.maxBytesPerSec().overriddenBy(over.maxBytesPerSec()),
                policy.burstBytesPerSec().overriddenBy(over.burstBytesPerSec()),
                o.capacityBasis() != null ? o.capacityBasis() : policy.capacityBasis());
    }

    /** The numbers in force for combined {@code terms} on a volume of {@code sizeBytes} with {@code usedBytesInForce}. */
    static EffectivePolicy resolve(CapacityQos terms, EffectiveCostModel costModel, long sizeBytes, long usedBytesInForce) {
        long capacity = terms.basis() == CapacityQos.CapacityBasis.used ? Math.min(usedBytesInForce, sizeBytes) : sizeBytes;
        return EffectivePolicy.of(terms, terms.resolve(capacity), costModel);
    }

    /**
     * The most IOPS a volume with these terms can reserve: its minIops at its allocated size
     * (used space never exceeds the size, and a scaled number never falls as capacity grows).
     */
    static Long reservedIops(CapacityQos terms, long sizeBytes) {
        return terms.resolve(sizeBytes).settings().minIops();
    }

    /**
     * The rules between fields of {@link CapacityQos#violations()} (those of
     * {@link io.weir.protocol.QosSettings} at every capacity included) that the combined terms
     * break, each reported against the override that causes it ({@code overrides.maxIops}); a
     * policy alone is always consistent, so at least one member of every broken rule is
     * overridden.
     */
    static List<FieldError> violations(CapacityQos combined, VolumeOverrides o) {
        return combined.violations().stream()
                .filter(v -> v.related() != null)
                .map(v -> new FieldError("overrides." + (o.isSet(v.field()) || !o.isSet(v.related()) ? v.field() : v.related()),
                        "effective " + v.message() + " (null overrides inherit from the policy)"))
                .toList();
    }
}
