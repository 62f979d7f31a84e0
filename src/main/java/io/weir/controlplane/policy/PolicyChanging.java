package io.weir.controlplane.policy;

import io.weir.protocol.CapacityQos;
import io.weir.protocol.EffectiveCostModel;
import java.util.UUID;

/**
 * Published inside the transaction that is about to change what a QoS policy enforces. A
 * listener whose resources would become inconsistent under the new values (a volume whose
 * overrides no longer fit, such as an overridden maxIops below the new minIops) vetoes the change
 * by throwing.
 *
 * @param policyId the policy being changed
 * @param policyName its name after the change
 * @param terms the policy's QoS terms after the change, absolute and per GiB
 * @param costModel the policy's cost model after the change
 */
public record PolicyChanging(UUID policyId, String policyName, CapacityQos terms, EffectiveCostModel costModel) {
}
