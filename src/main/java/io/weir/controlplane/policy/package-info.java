/**
 * QoS policies: named templates of the weight, reservation, limits, burst and IO cost model that
 * a volume gets unless it overrides a member.
 *
 * <p>Three built-in policies are seeded ({@code best-effort}, {@code standard}, {@code premium}).
 * They are ordinary policies that carry a read-only {@code builtIn} flag: they can be edited, and
 * deleted when unused. A volume created without a policy gets {@code standard}
 * ({@link io.weir.controlplane.policy.PolicyService#STANDARD_POLICY_ID}).
 *
 * <p>The volume feature vetoes a delete of a policy in use through {@link
 * io.weir.controlplane.policy.PolicyDeleting}, and a change that would make a volume's effective
 * policy inconsistent through {@link io.weir.controlplane.policy.PolicyChanging}.
 */
package io.weir.controlplane.policy;
