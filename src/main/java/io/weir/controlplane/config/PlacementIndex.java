package io.weir.controlplane.config;

import java.util.UUID;

/**
 * Whether any volume placed on a data node depends on a tenant or a policy: only then does a
 * change of it alter what some node enforces, and so bump the config revision. Implemented by the
 * volume feature, so that tenants and policies need not see it.
 *
 * <p>A caller must hold the tenant's or policy's row lock ({@code FOR UPDATE}, see the lock order
 * of {@link ConfigRevisions}) when it asks: volume writes lock the tenant and policy they use
 * {@code FOR SHARE}, so no placement can commit between the answer and the caller's commit.
 */
public interface PlacementIndex {

    /** Whether a volume of this tenant is placed on at least one node. */
    boolean anyPlacedInTenant(UUID tenantId);

    /** Whether a volume that uses this policy is placed on at least one node. */
    boolean anyPlacedWithPolicy(UUID policyId);
}
