package io.weir.controlplane.policy;

import java.util.UUID;

/**
 * Published inside the transaction that is about to delete a QoS policy. A listener that knows of
 * something still using the policy (volumes) vetoes the delete by throwing.
 */
public record PolicyDeleting(UUID policyId, String policyName) {
}
