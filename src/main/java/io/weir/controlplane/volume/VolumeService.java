package io.weir.controlplane.volume;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.node.NodeService;
import io.weir.controlplane.policy.PolicyService;
import io.weir.controlplane.policy.QosPolicy;
import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.security.Role;
import io.weir.controlplane.tenant.Tenant;
import io.weir.controlplane.tenant.TenantService;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.ETags;
import io.weir.controlplane.web.FieldError;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.RequestValidationException;
import io.weir.protocol.EffectivePolicy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.JsonNode;

/**
 * Volumes: create, read, list, replace, patch and delete.
 *
 * <h2>What a write checks</h2>
 * The tenant in the path must exist (404). The name must be free within the tenant (409). The
 * policy, if named, and every node must exist, and the policy combined with the overrides must be
 * consistent ({@link EffectivePolicies}); each failure is a field error of one 400. A volume may
 * grow but never shrink (409). It is placed on at most one node (409; see {@link #checkOneCopy}). Its reservation, with those of the tenant's other volumes on each of its
 * nodes, must fit the tenant's {@code maxIops} ({@link TenantReservations}; 409 otherwise).
 *
 * <h2>Placement</h2>
 * An admin places a volume on any existing node. A tenant-admin places it only on nodes that carry
 * every label of its tenant's node selector ({@link io.weir.controlplane.tenant.Tenant#getNodeSelector()},
 * admin-managed; empty: no node), checked in one query for the nodes a write adds; a node that
 * does not exist and one the tenant may not use give the same field error, word for word, so the
 * answer tells nothing about other tenants' nodes. Placements made before stay. The tenant row is
 * locked {@code FOR SHARE} during the write, so its selector cannot change unseen.
 *
 * <h2>Revisions</h2>
 * Everything about a volume is enforced by the nodes that serve it (export name and size, effective
 * policy, placement), so create, delete and any update that changes one of these bumps the config
 * revision once, provided the volume is placed on at least one node before or after the change: a
 * volume no node serves is in no snapshot. An update that changes only the policy reference while
 * the effective values stay the same bumps nothing.
 *
 * <h2>Lock order</h2>
 * As {@link ConfigRevisions} lays down: a write first locks the tenant and the policy it depends on
 * {@code FOR SHARE} (so neither can change, nor ask "is anything placed?", unseen until it
 * commits), then, if it reserves IOPS under a tenant limit, the nodes it is placed on
 * ({@link TenantReservations#checkVolume}), then bumps, then flushes the volume row.
 *
 * <h2>Concurrency</h2>
 * A write reads the volume and its placement in one statement ({@link
 * VolumeRepository#findWithNodeIdsById}), so it compares the request against one committed state.
 * A placement change marks the volume changed, so every change, placement included, goes through
 * the same version-checked UPDATE: of two writers that passed the same {@code If-Match}, the
 * second fails with 412 (409 without {@code If-Match}) instead of overwriting the first.
 */
@Service
public class VolumeService {

    private final VolumeRepository volumes;
    private final TenantService tenants;
    private final PolicyService policies;
    private final NodeService nodes;
    private final ConfigRevisions revisions;
    private final JsonMergePatch mergePatch;
    private final AuditLog audit;
    private final AccessScope scope;
    private final TenantReservations reservations;

    VolumeService(VolumeRepository volumes, TenantService tenants, PolicyService policies, NodeService nodes,
            ConfigRevisions revisions, JsonMergePatch mergePatch, AuditLog audit, AccessScope scope,
            TenantReservations reservations) {
        this.audit = audit;
        this.scope = scope;
        this.reservations = reservations;
        this.volumes = volumes;
        this.tenants = tenants;
        this.policies = policies;
        this.nodes = nodes;
        this.revisions = revisions;
        this.mergePatch = mergePatch;
    }

    /** The volume with this id, or 404. */
    @Transactional(readOnly = true)
    public Volume require(UUID id) {
        return volumes.findWithNodeIdsById(id).orElseThrow(() -> ApiException.notFound("Volume", id));
    }

    /** The tenant that owns volume {@code id}, or 404; one indexed lookup, no placement or policy reads. */
    @Transactional(readOnly = true)
    public UUID tenantOf(UUID id) {
        return volumes.findTenantIdById(id).orElseThrow(() -> ApiException.notFound("Volume", id));
    }

    @Transactional(readOnly = true)
    public VolumeResponse get(UUID id) {
        Volume volume = require(id);
        Function<Volume, Boolean> applied = appliedOf(List.of(volume));
        return VolumeResponse.from(volume, effectiveOf(List.of(volume)).apply(volume), applied.apply(volume));
    }

    /** The volumes of one tenant (404 if there is no such tenant), optionally by name fragment. */
    @Transactional(readOnly = true)
    public PageResponse<VolumeResponse> listForTenant(UUID tenantId, String nameContains, Pageable pageable) {
        tenants.require(tenantId);
        Page<Volume> page = nameContains == null || nameContains.isEmpty()
                ? volumes.findByTenantId(tenantId, pageable)
                : volumes.findByTenantIdAndNameContaining(tenantId, nameContains, pageable);
        return toPage(page);
    }

    /** All volumes, optionally only a tenant's and/or only those placed on a node. */
    @Transactional(readOnly = true)
    public PageResponse<VolumeResponse> list(UUID tenantId, UUID nodeId, Pageable pageable) {
        Page<Volume> page;
        if (tenantId != null && nodeId != null) {
            page = volumes.findByTenantIdAndNodeIdsContaining(tenantId, nodeId, pageable);
        } else if (tenantId != null) {
            page = volumes.findByTenantId(tenantId, pageable);
        } else if (nodeId != null) {
            page = volumes.findByNodeIdsContaining(nodeId, pageable);
        } else {
            page = volumes.findAll(pageable);
        }
        return toPage(page);
    }

    @Transactional
    public VolumeResponse create(UUID tenantId, VolumeRequest request) {
        Tenant tenant = tenants.lockForValidation(tenantId);
        if (volumes.existsByTenantIdAndName(tenantId, request.name())) {
            throw duplicate(request.name());
        }
        Resolved resolved = resolve(tenant, request, List.of(), new ArrayList<>());
        checkOneCopy(List.of(), request.nodeIdsOrNone());
        reservations.checkVolume(null, tenantId, tenant.getMaxIops(), resolved.effective().minIops(), request.nodeIdsOrNone());
        Volume volume = new Volume(tenantId, request.name());
        apply(volume, request, resolved.policyId());
        if (!request.nodeIdsOrNone().isEmpty()) {
            revisions.bump(); // lock order: see ConfigRevisions
        }
        VolumeResponse created = VolumeResponse.from(volumes.saveAndFlush(volume), resolved.effective());
        audit.record("volume.create", "volume", created.id(), tenantId, null, created);
        return created;
    }

    @Transactional
    public VolumeResponse replace(UUID id, VolumeRequest request, String ifMatch) {
        Volume volume = require(id);
        ETags.checkIfMatch(ifMatch, volume.getVersion());
        Tenant tenant = tenants.lockForValidation(volume.getTenantId());
        if (!volume.getName().equals(request.name())
                && volumes.existsByTenantIdAndNameAndIdNot(volume.getTenantId(), request.name(), id)) {
            throw duplicate(request.name());
        }
        Resolved resolved = resolve(tenant, request, volume.getNodeIds(), new ArrayList<>());
        if (request.sizeBytes() < volume.getSizeBytes()) {
            // A valid request that the volume's state refuses: its data past the new end would be cut.
            throw ApiException.conflict("volumes cannot shrink: the current size is " + volume.getSizeBytes()
                    + " bytes, the request asks for " + request.sizeBytes() + "; a volume grows only",
                    Map.of("currentSizeBytes", volume.getSizeBytes(), "requestedSizeBytes", request.sizeBytes()));
        }
        checkOneCopy(volume.getNodeIds(), request.nodeIdsOrNone());
        reservations.checkVolume(id, volume.getTenantId(), tenant.getMaxIops(), resolved.effective().minIops(),
                request.nodeIdsOrNone());
        EffectivePolicy before = effectiveOf(List.of(volume)).apply(volume);
        VolumeResponse beforeDto = VolumeResponse.from(volume, before);
        boolean placementChanged = !new HashSet<>(volume.getNodeIds()).equals(new HashSet<>(request.nodeIdsOrNone()));
        boolean placed = !volume.getNodeIds().isEmpty() || !request.nodeIdsOrNone().isEmpty();
        boolean enforced = placed && (placementChanged || !volume.getName().equals(request.name())
                || volume.getSizeBytes() != request.sizeBytes()
                || !before.equals(resolved.effective()));
        apply(volume, request, resolved.policyId());
        if (enforced) {
            revisions.bump(); // lock order: see ConfigRevisions
        }
        VolumeResponse after = VolumeResponse.from(volumes.saveAndFlush(volume), resolved.effective());
        audit.record("volume.update", "volume", id, volume.getTenantId(), beforeDto, after);
        return after;
    }

    @Transactional
    public VolumeResponse patch(UUID id, JsonNode patch, String ifMatch) {
        Volume volume = require(id);
        ETags.checkIfMatch(ifMatch, volume.getVersion());
        VolumeRequest merged = mergePatch.apply(VolumeRequest.from(volume), patch, VolumeRequest.class);
        return replace(id, merged, null);
    }

    @Transactional
    public void delete(UUID id, String ifMatch) {
        Volume volume = require(id);
        ETags.checkIfMatch(ifMatch, volume.getVersion());
        VolumeResponse before = VolumeResponse.from(volume, effectiveOf(List.of(volume)).apply(volume));
        if (!volume.getNodeIds().isEmpty()) {
            revisions.bump(); // lock order: see ConfigRevisions
        }
        volumes.delete(volume);
        volumes.flush();
        audit.record("volume.delete", "volume", id, volume.getTenantId(), before, null);
    }

    /**
     * A function from each of {@code batch} to its effective policy, loading each distinct policy
     * once.
     */
    Function<Volume, EffectivePolicy> effectiveOf(Collection<Volume> batch) {
        Map<UUID, QosPolicy> byId = policies.findAll(batch.stream().map(Volume::getPolicyId).distinct().toList());
        return v -> {
            // The foreign key and the PolicyDeleting veto keep every referenced policy in place.
            QosPolicy policy = Objects.requireNonNull(byId.get(v.getPolicyId()), "policy of volume " + v.getId());
            return EffectivePolicies.combine(policy.enforced(), v.getOverrides());
        };
    }

    private PageResponse<VolumeResponse> toPage(Page<Volume> page) {
        Function<Volume, EffectivePolicy> effective = effectiveOf(page.getContent());
        Function<Volume, Boolean> applied = appliedOf(page.getContent());
        return PageResponse.of(page, v -> VolumeResponse.from(v, effective.apply(v), applied.apply(v)));
    }

    /**
     * A function from each of {@code batch} to whether all its nodes run their latest desired
     * config (null for a volume on no node), asking once per distinct node.
     */
    private Function<Volume, Boolean> appliedOf(Collection<Volume> batch) {
        Map<UUID, Boolean> upToDate = nodes.upToDate(batch.stream().flatMap(v -> v.getNodeIds().stream()).distinct().toList());
        return v -> v.getNodeIds().isEmpty() ? null
                : v.getNodeIds().stream().allMatch(n -> upToDate.getOrDefault(n, false));
    }

    private record Resolved(UUID policyId, EffectivePolicy effective) {
    }

    /**
     * Checks the references and the effective policy of {@code request}, adding to
     * {@code errors} (which may already hold some), and throws one 400 listing all of them.
     */
    private Resolved resolve(Tenant tenant, VolumeRequest request, Collection<UUID> placedBefore, List<FieldError> errors) {
        UUID policyId = request.policyId() != null ? request.policyId() : PolicyService.STANDARD_POLICY_ID;
        // Lock order (ConfigRevisions): FOR SHARE on the policy before the bump, so the policy
        // cannot change between this validation and the commit.
        Optional<QosPolicy> policy = policies.lockForValidation(policyId);
        EffectivePolicy effective = null;
        if (policy.isEmpty()) {
            errors.add(new FieldError("policyId", request.policyId() != null
                    ? "no such policy: " + policyId
                    : "required, because the default policy 'standard' no longer exists"));
        } else {
            effective = EffectivePolicies.combine(policy.get().enforced(), request.overridesOrNone());
            errors.addAll(EffectivePolicies.violations(effective, request.overridesOrNone()));
        }
        if (scope.current().role() == Role.ADMIN) {
            Set<UUID> existing = nodes.existingIds(request.nodeIdsOrNone());
            List<UUID> missing = request.nodeIdsOrNone().stream().filter(n -> !existing.contains(n)).toList();
            if (!missing.isEmpty()) {
                errors.add(new FieldError("nodeIds", (missing.size() == 1 ? "no such node: " : "no such nodes: ")
                        + missing.stream().map(UUID::toString).collect(Collectors.joining(", "))));
            }
        } else {
            // A tenant-admin places only on its tenant's nodes; a node that does not exist and one it
            // may not use are refused alike (same query, same words). Placements made before (by an
            // admin, or under an earlier selector) stay.
            List<UUID> added = request.nodeIdsOrNone().stream().filter(n -> !placedBefore.contains(n)).toList();
            Set<UUID> placeable = nodes.placeableIds(added, tenant.getNodeSelector());
            List<UUID> refused = added.stream().filter(n -> !placeable.contains(n)).toList();
            if (!refused.isEmpty()) {
                errors.add(new FieldError("nodeIds", "no such node available to this tenant: "
                        + refused.stream().map(UUID::toString).collect(Collectors.joining(", "))));
            }
        }
        if (!errors.isEmpty()) {
            throw new RequestValidationException(errors);
        }
        return new Resolved(policyId, effective);
    }

    /**
     * Refuses (409) a placement that would make a volume's data diverge: data nodes do not
     * replicate, so each node a volume is placed on serves its own, unrelated copy. A volume placed
     * on several nodes before this check existed keeps that placement through writes that do not
     * add a node (see {@link VolumeResponse#placementWarning()}), so nothing is changed silently.
     */
    private static void checkOneCopy(Collection<UUID> placedBefore, List<UUID> requested) {
        if (requested.size() > 1 && !placedBefore.containsAll(requested)) {
            throw ApiException.conflict("a volume is served by one data node: data nodes do not replicate yet, so "
                    + "each node of the " + requested.size() + " asked for would serve its own, unrelated copy of "
                    + "the volume", Map.of("nodeIds", requested));
        }
    }

    private static ApiException duplicate(String name) {
        return ApiException.conflict("The tenant already has a volume named '" + name + "'");
    }

    private static void apply(Volume volume, VolumeRequest request, UUID policyId) {
        volume.setName(request.name());
        volume.setSizeBytes(request.sizeBytes());
        volume.setPolicyId(policyId);
        volume.setOverrides(request.overridesOrNone());
        volume.setNodeIds(request.nodeIdsOrNone());
    }
}
