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
import io.weir.protocol.CapacityQos;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.ReplicationConfig;
import io.weir.protocol.UsageReport;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
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
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.JsonNode;

/**
 * Volumes: create, read, list, replace, patch and delete.
 *
 * <h2>What a write checks</h2>
 * The tenant in the path must exist (404). The name must be free within the tenant (409). The
 * policy, if named, and every node must exist, and the policy combined with the overrides must be
 * consistent ({@link EffectivePolicies}); each failure is a field error of one 400. A volume may
 * grow but never shrink (409). Its copies must fit its placement ({@link #plan}: 400 when
 * {@code replicas} and {@code nodeIds} disagree, 409 when the primary of a replicated volume would
 * be removed or too few nodes are available). Its reservation, with those of the tenant's other
 * volumes on each of its nodes, must fit the tenant's {@code maxIops} ({@link TenantReservations};
 * 409 otherwise): every copy reserves on its own node.
 *
 * <h2>Placement</h2>
 * A volume keeps {@code replicas} copies (1 to 3), one on each node of {@code nodeIds}; the first
 * node of a new placement is its primary, which serves the export and replicates to the others. A
 * write that names {@code replicas} without {@code nodeIds} lets the control plane choose the
 * nodes ({@link #choose}). Copies added to a placed volume start out of sync; the primary copies
 * them in full and reports them in sync ({@link ReplicationIntake}); a lost primary is replaced by
 * {@link ReplicationFailover}. A placement on several nodes from an earlier release, which did not
 * replicate, keeps one copy and no primary, carries a {@code placementWarning}, and is never
 * converted.
 *
 * <p>An admin places a volume on any existing node. A tenant-admin places it only on nodes that carry
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
 * ({@link TenantReservations#lockNodes}), then bumps, then checks the reservations
 * ({@link TenantReservations#checkVolume}), then flushes the volume row.
 *
 * <h2>Concurrency</h2>
 * A write reads the volume and its placement in one statement ({@link
 * VolumeRepository#findWithNodeIdsById}), so it compares the request against one committed state.
 * A placement change marks the volume changed, so every change, placement included, goes through
 * the same version-checked UPDATE: of two writers that passed the same {@code If-Match}, the
 * second fails with 412 (409 without {@code If-Match}) instead of overwriting the first. A
 * promotion ({@link ReplicationFailover}) increments the version too, so a write that read the
 * old primary fails the same way; the epoch and sync sequence, which the primary's reports move
 * without a version change, are never written by an entity update.
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
    private final VolumeCopies copies;
    /**
     * The reads of GET: whether a volume's nodes applied their configs is asked after it commits
     * ({@link #withApplied}), for that reads each node's desired revision in transactions of its
     * own, and would wait for a second pooled connection while the read holds one.
     */
    private final TransactionTemplate readOnly;

    VolumeService(VolumeRepository volumes, TenantService tenants, PolicyService policies, NodeService nodes,
            ConfigRevisions revisions, JsonMergePatch mergePatch, AuditLog audit, AccessScope scope,
            TenantReservations reservations, VolumeCopies copies, PlatformTransactionManager transactions) {
        this.readOnly = new TransactionTemplate(transactions);
        readOnly.setReadOnly(true);
        this.copies = copies;
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

    public VolumeResponse get(UUID id) {
        VolumeResponse read = readOnly.execute(status -> {
            Volume volume = require(id);
            return responsesOf(List.of(volume)).apply(volume, effectiveOf(List.of(volume)).apply(volume), null);
        });
        return withApplied(List.of(read)).get(0);
    }

    /** The volumes of one tenant (404 if there is no such tenant), optionally by name fragment. */
    public PageResponse<VolumeResponse> listForTenant(UUID tenantId, String nameContains, Pageable pageable) {
        PageResponse<VolumeResponse> read = readOnly.execute(status -> {
            tenants.require(tenantId);
            Page<Volume> page = nameContains == null || nameContains.isEmpty()
                    ? volumes.findByTenantId(tenantId, pageable)
                    : volumes.findByTenantIdAndNameContaining(tenantId, nameContains, pageable);
            return toPage(page);
        });
        return withApplied(read);
    }

    /** All volumes, optionally only a tenant's and/or only those placed on a node. */
    public PageResponse<VolumeResponse> list(UUID tenantId, UUID nodeId, Pageable pageable) {
        PageResponse<VolumeResponse> read = readOnly.execute(status -> {
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
        });
        return withApplied(read);
    }

    @Transactional
    public VolumeResponse create(UUID tenantId, VolumeRequest request) {
        Tenant tenant = tenants.lockForValidation(tenantId);
        if (volumes.existsByTenantIdAndName(tenantId, request.name())) {
            throw duplicate(request.name());
        }
        Resolved resolved = resolve(tenant, request, List.of(), 0, shapeErrors(request, null));
        Placement placement = plan(tenant, null, request);
        reservations.lockNodes(tenant.getReservableIops(), resolved.reservedIops(), placement.nodeIds());
        Volume volume = new Volume(tenantId, request.name());
        apply(volume, request, resolved, placement);
        // A tenant's per-GiB limits scale with the sum of its volumes, which this one joins.
        if (!placement.nodeIds().isEmpty() || tenant.terms().scales()) {
            revisions.bump(); // lock order: see ConfigRevisions
        }
        // After the bump: see TenantReservations (a placed volume always bumps).
        reservations.checkVolume(null, tenantId, tenant.getReservableIops(), resolved.reservedIops(), placement.nodeIds());
        Volume saved = volumes.saveAndFlush(volume);
        VolumeResponse created = response(saved, resolved.effective());
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
        Resolved resolved = resolve(tenant, request, volume.getNodeIds(), volume.getUsedBytesInForce(),
                shapeErrors(request, volume));
        if (request.sizeBytes() < volume.getSizeBytes()) {
            // A valid request that the volume's state refuses: its data past the new end would be cut.
            throw ApiException.conflict("volumes cannot shrink: the current size is " + volume.getSizeBytes()
                    + " bytes, the request asks for " + request.sizeBytes() + "; a volume grows only",
                    Map.of("currentSizeBytes", volume.getSizeBytes(), "requestedSizeBytes", request.sizeBytes()));
        }
        Placement placement = plan(tenant, volume, request);
        reservations.lockNodes(tenant.getReservableIops(), resolved.reservedIops(), placement.nodeIds());
        EffectivePolicy before = effectiveOf(List.of(volume)).apply(volume);
        VolumeResponse beforeDto = response(volume, before);
        boolean placementChanged = !new HashSet<>(volume.getNodeIds()).equals(new HashSet<>(placement.nodeIds()))
                || volume.getReplicas() != placement.replicas()
                || !Objects.equals(volume.getPrimaryNodeId(), placement.primary());
        boolean placed = !volume.getNodeIds().isEmpty() || !placement.nodeIds().isEmpty();
        boolean enforced = placed && (placementChanged || !volume.getName().equals(request.name())
                || volume.getSizeBytes() != request.sizeBytes()
                || !before.equals(resolved.effective()))
                || volume.getSizeBytes() != request.sizeBytes() && tenant.terms().scales();
        apply(volume, request, resolved, placement);
        if (enforced) {
            revisions.bump(); // lock order: see ConfigRevisions
        }
        // After the bump (see TenantReservations); a write that bumps nothing changes no reservation.
        reservations.checkVolume(id, volume.getTenantId(), tenant.getReservableIops(), resolved.reservedIops(),
                placement.nodeIds());
        Volume saved = volumes.saveAndFlush(volume);
        copies.startOutOfSync(id, placement.outOfSync(), request.sizeBytes());
        VolumeResponse after = response(saved, resolved.effective());
        audit.record("volume.update", "volume", id, volume.getTenantId(), beforeDto, after);
        return after;
    }

    @Transactional
    public VolumeResponse patch(UUID id, JsonNode patch, String ifMatch) {
        Volume volume = require(id);
        ETags.checkIfMatch(ifMatch, volume.getVersion());
        VolumeRequest merged = mergePatch.apply(VolumeRequest.from(volume), patch, VolumeRequest.class);
        // {"replicas": n} alone keeps the volume's nodes and adds chosen ones, as a request without nodeIds does
        JsonNode replicas = patch.isObject() ? patch.get("replicas") : null;
        if (replicas != null && !replicas.isNull() && !patch.has("nodeIds")) {
            merged = merged.withoutNodeIds();
        }
        return replace(id, merged, null);
    }

    @Transactional
    public void delete(UUID id, String ifMatch) {
        Volume volume = require(id);
        ETags.checkIfMatch(ifMatch, volume.getVersion());
        VolumeResponse before = response(volume, effectiveOf(List.of(volume)).apply(volume));
        if (!volume.getNodeIds().isEmpty() || tenants.require(volume.getTenantId()).terms().scales()) {
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
            return EffectivePolicies.resolve(EffectivePolicies.combine(policy.terms(), v.getOverrides()), policy.costModel(),
                    v.getSizeBytes(), v.getUsedBytesInForce());
        };
    }

    /** The page's responses, without policyApplied ({@link #withApplied} adds it outside the read). */
    private PageResponse<VolumeResponse> toPage(Page<Volume> page) {
        Function<Volume, EffectivePolicy> effective = effectiveOf(page.getContent());
        Responses responses = responsesOf(page.getContent());
        return PageResponse.of(page, v -> responses.apply(v, effective.apply(v), null));
    }

    /** Builds the responses of a batch of volumes: their copies and their primaries' addresses, read once. */
    @FunctionalInterface
    private interface Responses {
        VolumeResponse apply(Volume volume, EffectivePolicy effective, Boolean applied);
    }

    private Responses responsesOf(Collection<Volume> batch) {
        Map<UUID, List<VolumeCopy>> copiesOf = copies.of(batch);
        Map<UUID, String> addresses = nodes.clientAddresses(batch.stream().map(Volume::getPrimaryNodeId)
                .filter(Objects::nonNull).distinct().toList());
        return (v, effective, applied) -> {
            String address = v.getPrimaryNodeId() == null ? null : addresses.get(v.getPrimaryNodeId());
            return VolumeResponse.from(v, effective, applied, copiesOf.get(v.getId()), address);
        };
    }

    /** The response of a write (no policyApplied: read the volume again to see it). */
    private VolumeResponse response(Volume volume, EffectivePolicy effective) {
        return responsesOf(List.of(volume)).apply(volume, effective, null);
    }

    /**
     * {@code read} with policyApplied: whether all of each volume's nodes run their latest desired
     * config (null for a volume on no node), asking once per distinct node. Outside any
     * transaction ({@link #readOnly}).
     */
    private PageResponse<VolumeResponse> withApplied(PageResponse<VolumeResponse> read) {
        return new PageResponse<>(withApplied(read.items()), read.page(), read.size(), read.totalItems(), read.totalPages());
    }

    /** {@link #withApplied(PageResponse)} of a list of responses. */
    private List<VolumeResponse> withApplied(List<VolumeResponse> read) {
        Map<UUID, Boolean> upToDate = nodes.upToDate(read.stream().flatMap(v -> v.nodeIds().stream()).distinct().toList());
        return read.stream().map(v -> v.withPolicyApplied(v.nodeIds().isEmpty() ? null
                : v.nodeIds().stream().allMatch(n -> upToDate.getOrDefault(n, false)))).toList();
    }

    private record Resolved(UUID policyId, EffectivePolicy effective, Long reservedIops) {
    }

    /**
     * Checks the references and the effective policy of {@code request}, adding to
     * {@code errors} (which may already hold some), and throws one 400 listing all of them.
     */
    private Resolved resolve(Tenant tenant, VolumeRequest request, Collection<UUID> placedBefore, long usedBytesInForce,
            List<FieldError> errors) {
        UUID policyId = request.policyId() != null ? request.policyId() : PolicyService.STANDARD_POLICY_ID;
        // Lock order (ConfigRevisions): FOR SHARE on the policy before the bump, so the policy
        // cannot change between this validation and the commit.
        Optional<QosPolicy> policy = policies.lockForValidation(policyId);
        EffectivePolicy effective = null;
        Long reservedIops = null;
        if (policy.isEmpty()) {
            errors.add(new FieldError("policyId", request.policyId() != null
                    ? "no such policy: " + policyId
                    : "required, because the default policy 'standard' no longer exists"));
        } else {
            CapacityQos terms = EffectivePolicies.combine(policy.get().terms(), request.overridesOrNone());
            List<FieldError> broken = EffectivePolicies.violations(terms, request.overridesOrNone());
            errors.addAll(broken);
            if (broken.isEmpty() && request.sizeBytes() != null) {
                effective = EffectivePolicies.resolve(terms, policy.get().costModel(), request.sizeBytes(), usedBytesInForce);
                reservedIops = EffectivePolicies.reservedIops(terms, request.sizeBytes());
            }
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
        return new Resolved(policyId, effective, reservedIops);
    }

    /**
     * Where a write places the volume's copies.
     *
     * @param nodeIds the nodes, one copy each
     * @param replicas how many copies the volume keeps (1 for a legacy placement of several nodes)
     * @param primary the node that serves the export, or null (no node, or a legacy placement)
     * @param outOfSync the copies this write adds to a volume whose data lives on its primary:
     *     they start out of sync, to be copied in full
     */
    private record Placement(List<UUID> nodeIds, int replicas, UUID primary, Set<UUID> outOfSync) {
    }

    /**
     * The field errors of the request's placement members alone, before anything is read: replicas
     * must match nodeIds, and nodeIds name at most {@link ReplicationConfig#MAX_COPIES} nodes
     * (unless they keep part of a legacy placement, see {@link #plan}).
     */
    private static List<FieldError> shapeErrors(VolumeRequest request, Volume before) {
        List<FieldError> errors = new ArrayList<>();
        List<UUID> nodeIds = request.nodeIds();
        if (nodeIds == null) {
            return errors;
        }
        // A legacy placement says replicas 1 over several nodes; a write may say so too.
        boolean keepsLegacy = before != null && before.isLegacyPlacement() && before.getNodeIds().containsAll(nodeIds);
        boolean legacyAsItIs = keepsLegacy && request.replicas() != null && request.replicas() == 1;
        if (request.replicas() != null && request.replicas() != nodeIds.size() && !legacyAsItIs) {
            errors.add(new FieldError("replicas", "must equal the number of nodeIds (" + nodeIds.size()
                    + "): the volume keeps one copy on each node it names"));
        }
        if (nodeIds.size() > ReplicationConfig.MAX_COPIES && !keepsLegacy) {
            errors.add(new FieldError("nodeIds", "names " + nodeIds.size() + " nodes; a volume keeps at most "
                    + ReplicationConfig.MAX_COPIES + " copies, one per node"));
        }
        return errors;
    }

    /**
     * Plans the placement a write asks for ({@code before} is null for a create).
     *
     * <ul>
     *   <li>The nodes: {@code nodeIds} as given; without them but with {@code replicas}, the
     *       volume's current nodes and as many more as it lacks, chosen by {@link #choose};
     *       without both, none.</li>
     *   <li>The primary: kept when it keeps its copy (the copies the write adds start out of
     *       sync); otherwise the first node, every copy fresh (a new placement, or a volume of one
     *       copy moved as before). A replicated volume may not lose its primary: 409.</li>
     *   <li>A legacy placement (several nodes, one copy, from an earlier release) may be kept or
     *       reduced, but never grows nor becomes replicated (409): its copies are unrelated, and
     *       no one can say which holds the data.</li>
     * </ul>
     */
    private Placement plan(Tenant tenant, Volume before, VolumeRequest request) {
        List<UUID> current = before == null ? List.of() : before.getNodeIds();
        boolean legacy = before != null && before.isLegacyPlacement();
        Integer replicas = request.replicas();
        if (legacy && replicas != null && replicas > 1) {
            throw legacyConflict(current, "cannot become replicated");
        }
        UUID primaryBefore = before == null || legacy ? null : before.getPrimaryNodeId();
        List<UUID> requested;
        if (request.nodeIds() != null) {
            requested = request.nodeIds();
            refuseFullNodes(requested.stream().filter(n -> !current.contains(n)).toList());
        } else if (replicas != null) {
            List<UUID> kept = new ArrayList<>(current);
            kept.sort(Comparator.comparing((UUID n) -> !n.equals(primaryBefore)).thenComparing(UUID::toString));
            if (kept.size() > replicas) {
                throw new RequestValidationException(List.of(new FieldError("replicas", "the volume has " + kept.size()
                        + " copies; to remove copies, name the nodeIds to keep")));
            }
            requested = new ArrayList<>(kept);
            requested.addAll(choose(tenant, replicas, kept));
        } else {
            requested = List.of();
        }
        if (legacy) {
            if (requested.size() > 1) {
                if (!current.containsAll(requested)) {
                    throw legacyConflict(current, "cannot take another node");
                }
                UUID stored = before.getPrimaryNodeId();
                return new Placement(requested, 1, requested.contains(stored) ? stored : null, Set.of());
            }
            return new Placement(requested, 1, requested.isEmpty() ? null : requested.get(0), Set.of());
        }
        int copiesAsked = Math.max(1, requested.size());
        if (primaryBefore != null && requested.contains(primaryBefore)) {
            Set<UUID> added = new HashSet<>(requested);
            current.forEach(added::remove);
            return new Placement(requested, copiesAsked, primaryBefore, added);
        }
        if (primaryBefore != null && before.isReplicated()) {
            throw ApiException.conflict("node " + primaryBefore + " is the primary of this replicated volume, which "
                    + "serves its export and holds every acknowledged write: it cannot be removed from nodeIds. Remove "
                    + "other copies, or wait for a promotion when the node is lost", Map.of("primaryNodeId", primaryBefore,
                    "nodeIds", requested));
        }
        return new Placement(requested, copiesAsked, requested.isEmpty() ? null : requested.get(0), Set.of());
    }

    /**
     * Most volumes a data node holds: a usage report names every volume of its node, and names at
     * most {@link UsageReport#MAX_VOLUMES}; a node holding more could not report at all.
     */
    static final int MAX_VOLUMES_PER_NODE = UsageReport.MAX_VOLUMES;

    /** 409 naming the nodes of {@code added} that hold {@link #MAX_VOLUMES_PER_NODE} volumes already. */
    private void refuseFullNodes(List<UUID> added) {
        if (added.isEmpty()) {
            return;
        }
        Map<UUID, Long> load = copies.volumesPerNode(added);
        List<UUID> full = added.stream().filter(n -> load.getOrDefault(n, 0L) >= MAX_VOLUMES_PER_NODE).toList();
        if (!full.isEmpty()) {
            throw ApiException.conflict((full.size() == 1 ? "node " : "nodes ")
                    + full.stream().map(UUID::toString).collect(Collectors.joining(", ")) + (full.size() == 1 ? " holds " : " hold ")
                    + MAX_VOLUMES_PER_NODE + " volumes, the most a data node serves (each usage report names every volume "
                    + "of its node); place the volume on another node", Map.of("nodeIds", full, "max", MAX_VOLUMES_PER_NODE));
        }
    }

    /**
     * Chooses nodes for the copies a volume lacks: {@code replicas} in all, {@code kept} among them.
     * The others come from the nodes available to the tenant (those carrying every label of its
     * node selector, the rule of a tenant-admin's own placements) that are not full
     * ({@link #MAX_VOLUMES_PER_NODE}), holding the fewest volumes first, ties by id; 409 naming how
     * many are needed and available when too few are.
     */
    private List<UUID> choose(Tenant tenant, int replicas, List<UUID> kept) {
        int missing = replicas - kept.size();
        if (missing <= 0) {
            return List.of();
        }
        List<UUID> placeable = nodes.placeableIds(tenant.getNodeSelector()).stream().filter(n -> !kept.contains(n))
                .toList();
        Map<UUID, Long> load = copies.volumesPerNode(placeable);
        List<UUID> available = placeable.stream().filter(n -> load.getOrDefault(n, 0L) < MAX_VOLUMES_PER_NODE).toList();
        if (available.size() < missing) {
            int total = kept.size() + available.size();
            throw ApiException.conflict("the volume needs " + replicas + " copies on distinct nodes, but only " + total
                    + (total == 1 ? " node is" : " nodes are") + " available to tenant '" + tenant.getName()
                    + "' (the nodes carrying every label of its node selector, and holding fewer than "
                    + MAX_VOLUMES_PER_NODE + " volumes); label more nodes, or name nodeIds",
                    Map.of("needed", replicas, "available", total));
        }
        return available.stream()
                .sorted(Comparator.comparing((UUID n) -> load.getOrDefault(n, 0L)).thenComparing(UUID::toString))
                .limit(missing).toList();
    }

    private static ApiException legacyConflict(List<UUID> nodeIds, String what) {
        return ApiException.conflict("this volume was placed on " + nodeIds.size() + " data nodes by an earlier release, "
                + "which did not replicate: each node holds its own, unrelated copy, so the placement " + what
                + ". Set nodeIds to the one node whose copy you keep; copies can then be added",
                Map.of("nodeIds", nodeIds));
    }

    private static ApiException duplicate(String name) {
        return ApiException.conflict("The tenant already has a volume named '" + name + "'");
    }

    private static void apply(Volume volume, VolumeRequest request, Resolved resolved, Placement placement) {
        volume.setName(request.name());
        volume.setSizeBytes(request.sizeBytes());
        volume.setPolicyId(resolved.policyId());
        volume.setReservedIops(resolved.reservedIops());
        volume.setOverrides(request.overridesOrNone());
        volume.setNodeIds(placement.nodeIds());
        volume.setReplicas(placement.replicas());
        volume.setPrimaryNodeId(placement.primary());
    }
}
