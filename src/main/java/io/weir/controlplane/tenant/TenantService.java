package io.weir.controlplane.tenant;

import java.util.Map;
import java.util.List;
import io.weir.protocol.CapacityQos;
import io.weir.controlplane.web.RequestValidationException;
import io.weir.controlplane.web.FieldError;
import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.config.PlacementIndex;
import io.weir.controlplane.node.NodeService;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.ETags;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import java.util.Objects;
import java.util.UUID;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.JsonNode;

/**
 * Tenants: create, read, replace, patch and delete.
 *
 * <p>A change bumps the config revision only when it alters what some node's desired config
 * holds: the name, the weight or a limit, and only while at least one of the tenant's volumes is
 * placed on a node ({@link PlacementIndex}); a tenant no node serves is in no snapshot. The display
 * name is for people and the node selector is checked by the control plane only (see the volume
 * feature); neither bumps anything. A tenant can be deleted only while no volume belongs to
 * it; the volume feature vetoes the delete through {@link TenantDeleting}, and a new
 * {@code maxIops} below the reservations of the tenant's volumes on one node through
 * {@link TenantChanging}. Every change is
 * recorded in the {@link AuditLog}, in the caller's transaction, so the entry commits or rolls
 * back with the change.
 *
 * <h2>Lock order</h2>
 * A change locks the tenant row {@code FOR UPDATE} first, then asks the placement index, then
 * bumps (the rule of {@link ConfigRevisions}). Volume writes lock their tenant {@code FOR SHARE}
 * ({@link #lockForValidation}), so a placement cannot commit unseen between the question and the
 * commit.
 */
@Service
public class TenantService {

    private final TenantRepository tenants;
    private final ConfigRevisions revisions;
    private final JsonMergePatch mergePatch;
    private final ApplicationEventPublisher events;
    private final AuditLog audit;
    private final PlacementIndex placements;
    private final NodeService nodes;
    private final TenantCapacity capacity;

    TenantService(TenantRepository tenants, ConfigRevisions revisions, JsonMergePatch mergePatch,
            ApplicationEventPublisher events, AuditLog audit, PlacementIndex placements, NodeService nodes, TenantCapacity capacity) {
        this.capacity = capacity;
        this.nodes = nodes;
        this.audit = audit;
        this.placements = placements;
        this.tenants = tenants;
        this.revisions = revisions;
        this.mergePatch = mergePatch;
        this.events = events;
    }

    /** The tenant with this id, or 404. */
    @Transactional(readOnly = true)
    public Tenant require(UUID id) {
        return tenants.findById(id).orElseThrow(() -> ApiException.notFound("Tenant", id));
    }

    /**
     * The tenant, locked {@code FOR SHARE} until the caller's transaction ends, or 404: for a
     * volume write, so that the tenant cannot change unseen until it commits.
     */
    @Transactional(propagation = Propagation.MANDATORY)
    public Tenant lockForValidation(UUID id) {
        return tenants.findForShareById(id).orElseThrow(() -> ApiException.notFound("Tenant", id));
    }

    @Transactional(readOnly = true)
    public TenantResponse get(UUID id) {
        return response(require(id));
    }

    /**
     * A page of tenants.
     *
     * @param onlyTenant if not null, the list holds at most this tenant (the caller's binding)
     */
    @Transactional(readOnly = true)
    public PageResponse<TenantResponse> list(String nameContains, UUID onlyTenant, Pageable pageable) {
        boolean byName = nameContains != null && !nameContains.isEmpty();
        Page<Tenant> page;
        if (onlyTenant != null) {
            page = byName ? tenants.findByIdAndNameContaining(onlyTenant, nameContains, pageable)
                    : tenants.findById(onlyTenant, pageable);
        } else {
            page = byName ? tenants.findByNameContaining(nameContains, pageable) : tenants.findAll(pageable);
        }
        Map<UUID, TenantCapacity.Capacity> capacities = capacity.capacities(page.getContent().stream()
                .filter(t -> t.terms().scales()).map(Tenant::getId).toList());
        return PageResponse.of(page, t -> TenantResponse.from(t, capacities.getOrDefault(t.getId(),
                TenantCapacity.Capacity.NONE)));
    }

    /** The nodes tenant {@code id}'s tenant-admins may place volumes on (404 for no such tenant). */
    @Transactional(readOnly = true)
    public PageResponse<PlaceableNodeResponse> placeableNodes(UUID id, Pageable pageable) {
        Tenant tenant = require(id);
        return PageResponse.of(nodes.placeable(tenant.getNodeSelector(), pageable), PlaceableNodeResponse::from);
    }

    @Transactional
    public TenantResponse create(TenantRequest request) {
        if (tenants.existsByName(request.name())) {
            throw ApiException.conflict("A tenant named '" + request.name() + "' already exists");
        }
        validate(request);
        Tenant tenant = new Tenant(request.name());
        apply(tenant, request);
        TenantResponse created = response(tenants.saveAndFlush(tenant));
        audit.record("tenant.create", "tenant", created.id(), created.id(), null, created);
        return created;
    }

    @Transactional
    public TenantResponse replace(UUID id, TenantRequest request, String ifMatch) {
        Tenant tenant = lockForUpdate(id);
        ETags.checkIfMatch(ifMatch, tenant.getVersion());
        if (!tenant.getName().equals(request.name()) && tenants.existsByNameAndIdNot(request.name(), id)) {
            throw ApiException.conflict("A tenant named '" + request.name() + "' already exists");
        }
        validate(request);
        TenantResponse before = response(tenant);
        // The name travels in every desired-config snapshot; the display name does not.
        boolean enforced = !tenant.getName().equals(request.name())
                || tenant.getWeight() != request.weightOrDefault()
                || !tenant.terms().equals(request.terms());
        Long reservable = request.terms().maxIops().scales()
                ? (request.maxIopsFloor() != null ? request.maxIopsFloor() : Long.valueOf(1)) : request.maxIops();
        boolean reservableChanged = !Objects.equals(tenant.getReservableIops(), reservable);
        tenant.setName(request.name());
        apply(tenant, request);
        if (enforced && placements.anyPlacedInTenant(id)) {
            revisions.bump(); // lock order: see ConfigRevisions (the tenant row is locked)
        }
        if (reservableChanged) {
            // The volume feature vetoes a limit below its reservations; after the bump, so that
            // reservations committed by a policy change meanwhile are counted.
            events.publishEvent(new TenantChanging(id, request.name(), request.qosSettings(), reservable));
        }
        TenantResponse after = response(tenants.saveAndFlush(tenant));
        audit.record("tenant.update", "tenant", id, id, before, after);
        return after;
    }

    @Transactional
    public TenantResponse patch(UUID id, JsonNode patch, String ifMatch) {
        Tenant tenant = lockForUpdate(id);
        ETags.checkIfMatch(ifMatch, tenant.getVersion());
        TenantRequest merged = mergePatch.apply(TenantRequest.from(tenant), patch, TenantRequest.class);
        return replace(id, merged, null);
    }

    @Transactional
    public void delete(UUID id, String ifMatch) {
        // Locked before the listeners look: a certificate issued or a volume placed (each holds
        // the tenant FOR SHARE) commits before they look or finds the tenant gone.
        Tenant tenant = lockForUpdate(id);
        ETags.checkIfMatch(ifMatch, tenant.getVersion());
        events.publishEvent(new TenantDeleting(id, tenant.getName()));
        TenantResponse before = response(tenant);
        tenants.delete(tenant);
        tenants.flush();
        audit.record("tenant.delete", "tenant", id, id, before, null);
    }

    private Tenant lockForUpdate(UUID id) {
        return tenants.findForUpdateById(id).orElseThrow(() -> ApiException.notFound("Tenant", id));
    }

    private TenantResponse response(Tenant t) {
        TenantCapacity.Capacity c = t.terms().scales() && t.getId() != null
                ? capacity.capacities(List.of(t.getId())).getOrDefault(t.getId(), TenantCapacity.Capacity.NONE)
                : TenantCapacity.Capacity.NONE;
        return TenantResponse.from(t, c);
    }

    /** The rules between the tenant's terms ({@link CapacityQos#violations()}); single fields are the constraints'. */
    private static void validate(TenantRequest request) {
        List<FieldError> errors = request.terms().violations().stream().filter(v -> v.related() != null)
                .map(v -> new FieldError(v.field(), v.message())).toList();
        if (!errors.isEmpty()) {
            throw new RequestValidationException(errors);
        }
    }

    private static void apply(Tenant tenant, TenantRequest request) {
        tenant.setTerms(request.terms());
        tenant.setDisplayName(request.displayName());
        tenant.setNodeSelector(request.nodeSelector());
    }
}
