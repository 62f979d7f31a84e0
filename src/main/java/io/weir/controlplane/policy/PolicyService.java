package io.weir.controlplane.policy;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.config.PlacementIndex;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.ETags;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import io.weir.protocol.CapacityQos;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.JsonNode;

/**
 * QoS policies: create, read, replace, patch and delete.
 *
 * <p>A change bumps the config revision only when it alters what a node enforces: the weight, a
 * reservation, limit or burst, or the cost model, and only while a volume that uses the policy is
 * placed on a node ({@link PlacementIndex}). Name and description are for people and bump
 * nothing; creating a policy bumps nothing either, because no volume uses it yet. The volume
 * feature vetoes deletes of a policy in use ({@link PolicyDeleting}) and changes that would make
 * a volume's overrides inconsistent ({@link PolicyChanging}).
 *
 * <h2>Lock order</h2>
 * {@link #replace} and {@link #patch} lock the policy row {@code FOR UPDATE} before anything else,
 * and only then bump the revision (the rule of {@link ConfigRevisions}). A volume write locks the
 * policy it validates against {@code FOR SHARE} ({@link #lockForValidation}), so a policy change
 * and a volume write on that policy run one after the other: either the volume commits first and
 * the {@link PolicyChanging} veto sees it, or the policy commits first and the volume is
 * validated against the new values.
 */
@Service
public class PolicyService {

    /** The built-in {@code standard} policy, which a volume gets when it names none. */
    public static final UUID STANDARD_POLICY_ID = UUID.fromString("00000000-0000-4000-8000-000000000002");

    private final QosPolicyRepository policies;
    private final ConfigRevisions revisions;
    private final JsonMergePatch mergePatch;
    private final ApplicationEventPublisher events;
    private final AuditLog audit;
    private final PlacementIndex placements;

    PolicyService(QosPolicyRepository policies, ConfigRevisions revisions, JsonMergePatch mergePatch,
            ApplicationEventPublisher events, AuditLog audit, PlacementIndex placements) {
        this.audit = audit;
        this.placements = placements;
        this.policies = policies;
        this.revisions = revisions;
        this.mergePatch = mergePatch;
        this.events = events;
    }

    /** The policy with this id, or 404. */
    @Transactional(readOnly = true)
    public QosPolicy require(UUID id) {
        return policies.findById(id).orElseThrow(() -> ApiException.notFound("Policy", id));
    }

    /**
     * The policy, locked {@code FOR SHARE} until the caller's transaction ends, so that it cannot
     * change while the caller validates against it and commits (see the lock order above).
     */
    @Transactional(propagation = Propagation.MANDATORY)
    public Optional<QosPolicy> lockForValidation(UUID id) {
        return policies.findForShareById(id);
    }

    /** The policies with these ids, by id; ids without a policy are left out. */
    @Transactional(readOnly = true)
    public Map<UUID, QosPolicy> findAll(Collection<UUID> ids) {
        return policies.findAllById(ids).stream().collect(Collectors.toMap(QosPolicy::getId, Function.identity()));
    }

    @Transactional(readOnly = true)
    public PolicyResponse get(UUID id) {
        return PolicyResponse.from(require(id));
    }

    @Transactional(readOnly = true)
    public PageResponse<PolicyResponse> list(String nameContains, Pageable pageable) {
        Page<QosPolicy> page = nameContains == null || nameContains.isEmpty()
                ? policies.findAll(pageable)
                : policies.findByNameContaining(nameContains, pageable);
        return PageResponse.of(page, PolicyResponse::from);
    }

    @Transactional
    public PolicyResponse create(PolicyRequest request) {
        if (policies.existsByName(request.name())) {
            throw duplicate(request.name());
        }
        QosPolicy policy = new QosPolicy(request.name());
        apply(policy, request);
        PolicyResponse created = PolicyResponse.from(policies.saveAndFlush(policy));
        audit.record("policy.create", "policy", created.id(), null, null, created);
        return created;
    }

    @Transactional
    public PolicyResponse replace(UUID id, PolicyRequest request, String ifMatch) {
        QosPolicy policy = lockForUpdate(id);
        ETags.checkIfMatch(ifMatch, policy.getVersion());
        if (!policy.getName().equals(request.name()) && policies.existsByNameAndIdNot(request.name(), id)) {
            throw duplicate(request.name());
        }
        PolicyResponse beforeDto = PolicyResponse.from(policy);
        CapacityQos before = policy.terms();
        int costBefore = policy.getMinChargeBytes();
        policy.setName(request.name());
        apply(policy, request);
        CapacityQos after = policy.terms();
        if (!before.equals(after) || costBefore != policy.getMinChargeBytes()) {
            if (placements.anyPlacedWithPolicy(id)) {
                // Lock order (ConfigRevisions): the policy row is already locked.
                revisions.bump();
            }
            events.publishEvent(new PolicyChanging(id, policy.getName(), after, policy.costModel()));
        }
        PolicyResponse afterDto = PolicyResponse.from(policies.saveAndFlush(policy));
        audit.record("policy.update", "policy", id, null, beforeDto, afterDto);
        return afterDto;
    }

    @Transactional
    public PolicyResponse patch(UUID id, JsonNode patch, String ifMatch) {
        QosPolicy policy = lockForUpdate(id);
        ETags.checkIfMatch(ifMatch, policy.getVersion());
        PolicyRequest merged = mergePatch.apply(PolicyRequest.from(policy), patch, PolicyRequest.class);
        return replace(id, merged, null);
    }

    /** Deletes an unused policy; built-ins too. Nothing a node enforces changes, so no bump. */
    @Transactional
    public void delete(UUID id, String ifMatch) {
        QosPolicy policy = require(id);
        ETags.checkIfMatch(ifMatch, policy.getVersion());
        events.publishEvent(new PolicyDeleting(id, policy.getName()));
        PolicyResponse before = PolicyResponse.from(policy);
        policies.delete(policy);
        policies.flush();
        audit.record("policy.delete", "policy", id, null, before, null);
    }

    /** The policy locked {@code FOR UPDATE}, or 404; the first lock a policy change takes. */
    private QosPolicy lockForUpdate(UUID id) {
        return policies.findForUpdateById(id).orElseThrow(() -> ApiException.notFound("Policy", id));
    }

    private static ApiException duplicate(String name) {
        return ApiException.conflict("A policy named '" + name + "' already exists");
    }

    private static void apply(QosPolicy policy, PolicyRequest request) {
        policy.setDescription(request.description());
        policy.setTerms(request.terms());
        policy.setMinChargeBytes(request.minChargeBytesOrDefault());
    }
}
