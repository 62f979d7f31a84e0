package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * How the scheduler charges an IO against its flow: by the bytes it moves, but never less than
 * {@code minChargeBytes}, so that a flood of tiny IOs is not free. The same shape as a policy's
 * {@code costModel}, with the default already applied.
 *
 * <p>Its OpenAPI schema is named {@code EffectiveCostModel}, apart from the policy resource's
 * writable {@code CostModel} ({@code io.weir.controlplane.policy.PolicyCostModel}), whose member may be null.
 *
 * @param minChargeBytes the least an IO is charged, in bytes; 0 charges IOs by size alone
 */
@JsonClassDescription("How an IO is charged against its flow, as enforced: its bytes, but at least minChargeBytes.")
public record EffectiveCostModel(
        @JsonPropertyDescription("The least an IO is charged, in bytes; 0 charges IOs by size alone.") int minChargeBytes) {
}
