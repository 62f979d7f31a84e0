package io.weir.controlplane.volume;

import io.weir.controlplane.node.NodeDeleting;
import io.weir.controlplane.policy.PolicyChanging;
import io.weir.controlplane.policy.PolicyDeleting;
import io.weir.controlplane.tenant.TenantChanging;
import io.weir.controlplane.tenant.TenantDeleting;
import io.weir.controlplane.web.ApiException;
import java.util.List;
import java.util.Map;
import org.springframework.context.event.EventListener;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Refuses, with 409, changes elsewhere that would leave a volume without its tenant, policy or
 * node, with a policy its overrides no longer fit, or with reservations its tenant's limit cannot
 * carry on a node ({@link TenantReservations}). Each listener runs inside the transaction of
 * the change; the problem lists the blocking volumes under {@code volumes} (names, first
 * {@value #MAX_LISTED}) and {@code volumeIds} (the same volumes, since names repeat across
 * tenants). A volume created concurrently with such a delete is caught by the foreign key instead.
 */
@Component
class VolumeVetoes {

    /** Most blocking volumes named in one problem; the detail gives the full count. */
    static final int MAX_LISTED = 100;

    private final VolumeRepository volumes;
    private final TenantReservations reservations;

    VolumeVetoes(VolumeRepository volumes, TenantReservations reservations) {
        this.volumes = volumes;
        this.reservations = reservations;
    }

    @EventListener
    void onTenantChanging(TenantChanging event) {
        reservations.checkTenant(event.tenantId(), event.tenantName(), event.reservableIops());
    }

    // Vetoes run before the listeners that remove a tenant's or node's dependants.
    @EventListener
    @Order(Ordered.HIGHEST_PRECEDENCE)
    void onTenantDeleting(TenantDeleting event) {
        long count = volumes.countByTenantId(event.tenantId());
        if (count > 0) {
            throw blocked("Tenant '" + event.tenantName() + "' still has " + count + " volume(s); delete them first",
                    volumes.findTop100ByTenantIdOrderByNameAscIdAsc(event.tenantId()));
        }
    }

    @EventListener
    void onPolicyDeleting(PolicyDeleting event) {
        long count = volumes.countByPolicyId(event.policyId());
        if (count > 0) {
            throw blocked("Policy '" + event.policyName() + "' is used by " + count
                            + " volume(s); move them to another policy first",
                    volumes.findTop100ByPolicyIdOrderByNameAscIdAsc(event.policyId()));
        }
    }

    @EventListener
    @Order(Ordered.HIGHEST_PRECEDENCE)
    void onNodeDeleting(NodeDeleting event) {
        long count = volumes.countByNodeIdsContaining(event.nodeId());
        if (count > 0) {
            throw blocked("Node '" + event.nodeName() + "' still serves " + count
                            + " volume(s); remove it from their nodeIds first",
                    volumes.findTop100ByNodeIdsContainingOrderByNameAscIdAsc(event.nodeId()));
        }
    }

    @EventListener
    void onPolicyChanging(PolicyChanging event) {
        List<Volume> all = volumes.findAllByPolicyIdOrdered(event.policyId());
        List<Volume> broken = all.stream()
                .filter(v -> !EffectivePolicies.violations(
                        EffectivePolicies.combine(event.terms(), v.getOverrides()), v.getOverrides()).isEmpty())
                .toList();
        if (!broken.isEmpty()) {
            throw blocked("The new limits of policy '" + event.policyName() + "' contradict the overrides of "
                    + broken.size() + " volume(s) (for example a reservation above an overridden maximum); "
                    + "change their overrides first", broken.stream().limit(MAX_LISTED).toList());
        }
        // Each volume's reservation under the new terms (a scaled one at its allocated size), then the
        // tenants' limits against the new sums.
        for (Volume v : all) {
            Long reserved = EffectivePolicies.reservedIops(EffectivePolicies.combine(event.terms(), v.getOverrides()),
                    v.getSizeBytes());
            if (!java.util.Objects.equals(reserved, v.getReservedIops())) {
                volumes.updateReservedIops(v.getId(), reserved);
            }
        }
        reservations.checkPolicy(event.policyId(), event.policyName());
    }

    private static ApiException blocked(String detail, List<Volume> blockers) {
        return ApiException.conflict(detail, Map.of(
                "volumes", blockers.stream().map(Volume::getName).toList(),
                "volumeIds", blockers.stream().map(Volume::getId).toList()));
    }
}
