package io.weir.controlplane.policy;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.ETags;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import io.weir.protocol.EffectivePolicy;
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
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.JsonNode;

/**
 * QoS policies: create, read, replace, patch and delete.
 *
 * <p>A change bumps the config revision only when it alters what a node enforces: the weight, a
 * reservation, limit or burst, or the cost model. Name and description are for people and bump
 * nothing; creating a policy bumps nothing either, because no volume uses it yet. The volume
 * feature vetoes deletes of a policy in use ({@link PolicyDeleting}) and changes that would make
 * a volume's overrides inconsistent ({@link PolicyChanging}).
 *
 * <h2>Lock order</h2>
 * The revision is bumped before the policy row is flushed, as everywhere else, so that writers
 * queue on the revision row first and cannot deadlock on it.
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

    PolicyService(QosPolicyRepository policies, ConfigRevisions revisions, JsonMergePatch mergePatch,
            ApplicationEventPublisher events, AuditLog audit) {
        this.audit = audit;
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

    /** The policy with this id, if there is one. Unlike {@link #require}, never throws. */
    @Transactional(readOnly = true)
    public Optional<QosPolicy> find(UUID id) {
        return policies.findById(id);
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
        QosPolicy policy = require(id);
        ETags.checkIfMatch(ifMatch, policy.getVersion());
        if (!policy.getName().equals(request.name()) && policies.existsByNameAndIdNot(request.name(), id)) {
            throw duplicate(request.name());
        }
        PolicyResponse beforeDto = PolicyResponse.from(policy);
        EffectivePolicy before = policy.enforced();
        policy.setName(request.name());
        apply(policy, request);
        EffectivePolicy after = policy.enforced();
        if (!before.equals(after)) {
            revisions.bump();
            events.publishEvent(new PolicyChanging(id, policy.getName(), after));
        }
        PolicyResponse afterDto = PolicyResponse.from(policies.saveAndFlush(policy));
        audit.record("policy.update", "policy", id, null, beforeDto, afterDto);
        return afterDto;
    }

    @Transactional
    public PolicyResponse patch(UUID id, JsonNode patch, String ifMatch) {
        QosPolicy policy = require(id);
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

    private static ApiException duplicate(String name) {
        return ApiException.conflict("A policy named '" + name + "' already exists");
    }

    private static void apply(QosPolicy policy, PolicyRequest request) {
        policy.setDescription(request.description());
        policy.setWeight(request.weightOrDefault());
        policy.setMinIops(request.minIops());
        policy.setMaxIops(request.maxIops());
        policy.setBurstIops(request.burstIops());
        policy.setMaxBytesPerSec(request.maxBytesPerSec());
        policy.setBurstBytesPerSec(request.burstBytesPerSec());
        policy.setMinChargeBytes(request.minChargeBytesOrDefault());
    }
}
