/**
 * QoS policies: named templates of the weight, reservation, limits, burst and IO cost model that
 * a volume gets unless it overrides a member.
 *
 * <p>Three built-in policies are seeded ({@code best-effort}, {@code standard}, {@code premium}).
 * They are ordinary policies that carry a read-only {@code builtIn} flag: they can be edited, and
 * deleted when unused. A volume created without a policy gets {@code standard}
 * ({@link io.weir.controlplane.policy.PolicyService#STANDARD_POLICY_ID}).
 *
 * <p>Besides absolute numbers, a policy may hold capacity-based terms
 * ({@code maxIopsPerGiB}, {@code maxBytesPerSecPerGiB}, {@code minIopsPerGiB}, {@code burstIopsPerGiB},
 * their floors {@code ...Floor}, and {@code capacityBasis} {@code allocated} or {@code used}); the
 * absolute field beside a rate caps it. The formula and its rules are
 * {@link io.weir.protocol.CapacityQos}'s; {@link io.weir.controlplane.policy.ConsistentLimits}
 * refuses, with 400 naming the field, any combination that some capacity would make a node refuse.
 * {@link io.weir.controlplane.policy.PolicyChanging} carries the new terms.
 * The terms' columns are named once, in two embeddables that volumes (as overrides) and tenants
 * (limits only) embed too: {@link io.weir.controlplane.policy.LimitColumns} and
 * {@link io.weir.controlplane.policy.ReservationBurstColumns}.
 *
 * <p>The volume feature vetoes a delete of a policy in use through {@link
 * io.weir.controlplane.policy.PolicyDeleting}, and a change that would make a volume's effective
 * policy inconsistent through {@link io.weir.controlplane.policy.PolicyChanging}.
 */
package io.weir.controlplane.policy;
