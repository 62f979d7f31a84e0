package io.weir.controlplane.taskshare;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.node.NodeDeleting;
import io.weir.controlplane.node.NodeService;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.ETags;
import io.weir.protocol.IoCost;
import io.weir.protocol.TaskShareConfig;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.context.event.EventListener;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Task CPU shares: the cluster default and per-node overrides.
 *
 * <h2>Which set a node enforces</h2>
 * Its override if it has one, else the cluster default ({@link #effectiveSet}). {@code GET} on a
 * node answers that effective set and says which it is in {@code source}, with an ETag made of the
 * source and that set's version; so a {@code PUT} that creates an override with {@code If-Match}
 * fails with 412 if the cluster default changed since the client read it, and a tag read before an
 * override existed never matches the override.
 *
 * <h2>Config revision</h2>
 * Every change bumps it: replacing the default (every node without an override enforces it),
 * creating, replacing or deleting an override. A PUT of the very tasks, usage reporting
 * interval and cost of a request already stored changes nothing and bumps nothing.
 *
 * <h2>Usage reporting interval</h2>
 * Each set also carries {@code usageReportIntervalSeconds} (1-3600, default 10): how often the
 * agents of the nodes that enforce the set send a usage report. It is pushed in their desired
 * config like the shares, and audited with them.
 *
 * <h2>The cost of a request</h2>
 * And {@code ioCost} ({@link IoCost}): the fixed cost of a read and of a write in the scheduler's
 * cost model of the nodes that enforce the set, pushed and audited the same way.
 */
@Service
public class TaskShareService {

    private final TaskShareSetRepository sets;
    private final TaskShareValidation validation;
    private final NodeService nodes;
    private final ConfigRevisions revisions;
    private final AuditLog audit;

    TaskShareService(TaskShareSetRepository sets, TaskShareValidation validation, NodeService nodes,
            ConfigRevisions revisions, AuditLog audit) {
        this.audit = audit;
        this.sets = sets;
        this.validation = validation;
        this.nodes = nodes;
        this.revisions = revisions;
    }

    @Transactional(readOnly = true)
    public TaskSharesResponse getClusterDefault() {
        return TaskSharesResponse.from(clusterDefault(), null);
    }

    @Transactional
    public TaskSharesResponse replaceClusterDefault(TaskSharesRequest request, String ifMatch) {
        validation.check(request);
        TaskShareSet set = clusterDefault();
        ETags.checkIfMatch(ifMatch, set.getVersion());
        TaskSharesResponse before = TaskSharesResponse.from(set, null);
        TaskSharesResponse after = TaskSharesResponse.from(replace(set, request), null);
        audit.record("task-shares.update", "task-shares", "cluster-default", null, before, after);
        return after;
    }

    /** The shares {@code nodeId} enforces, or 404 for an unknown node. */
    @Transactional(readOnly = true)
    public TaskSharesResponse getForNode(UUID nodeId) {
        nodes.require(nodeId);
        return TaskSharesResponse.from(effectiveSet(nodeId), nodeId);
    }

    /** Creates or replaces the node's override. */
    @Transactional
    public TaskSharesResponse replaceForNode(UUID nodeId, TaskSharesRequest request, String ifMatch) {
        nodes.require(nodeId);
        validation.check(request);
        Optional<TaskShareSet> existing = sets.findByNodeId(nodeId);
        if (existing.isPresent()) {
            TaskSharesResponse before = TaskSharesResponse.from(existing.get(), nodeId);
            ETags.checkIfMatch(ifMatch, before.etag());
            TaskSharesResponse after = TaskSharesResponse.from(replace(existing.get(), request), nodeId);
            audit.record("task-shares.update", "task-shares", nodeId, null, before, after);
            return after;
        }
        ETags.checkIfMatch(ifMatch, TaskSharesResponse.from(clusterDefault(), nodeId).etag());
        TaskShareSet created = TaskShareSet.overrideFor(nodeId);
        created.setTasks(toConfigs(request));
        created.setUsageReportIntervalSeconds(request.usageReportIntervalSecondsOrDefault());
        created.setIoCost(request.ioCostOrDefault());
        revisions.bump(); // lock order: see ConfigRevisions
        TaskSharesResponse after = TaskSharesResponse.from(sets.saveAndFlush(created), nodeId);
        audit.record("task-shares.create", "task-shares", nodeId, null, null, after);
        return after;
    }

    /** Removes the node's override, so it falls back to the cluster default; 404 if it has none. */
    @Transactional
    public void deleteForNode(UUID nodeId, String ifMatch) {
        nodes.require(nodeId);
        TaskShareSet set = sets.findByNodeId(nodeId)
                .orElseThrow(() -> ApiException.notFound("Task-share override of node", nodeId));
        TaskSharesResponse before = TaskSharesResponse.from(set, nodeId);
        ETags.checkIfMatch(ifMatch, before.etag());
        // Lock order (ConfigRevisions): bump before the delete is flushed, like every writer.
        revisions.bump();
        sets.delete(set);
        sets.flush();
        audit.record("task-shares.delete", "task-shares", nodeId, null, before, null);
    }

    /**
     * Removes the override of the data node being deleted, recorded as a
     * {@code task-shares.delete} in the deleting transaction. No bump: the node that enforced it is
     * going, and no other node's config changes. The schema does not cascade, so an override
     * created concurrently makes the node's delete fail instead of vanishing unrecorded.
     */
    @EventListener
    @Order(Ordered.LOWEST_PRECEDENCE)
    @Transactional
    void onNodeDeleting(NodeDeleting event) {
        sets.findByNodeId(event.nodeId()).ifPresent(set -> {
            TaskSharesResponse before = TaskSharesResponse.from(set, event.nodeId());
            sets.delete(set);
            sets.flush();
            audit.record("task-shares.delete", "task-shares", event.nodeId(), null, before, null);
        });
    }

    /** The node's override if present, else the cluster default. */
    @Transactional(readOnly = true)
    TaskShareSet effectiveSet(UUID nodeId) {
        return sets.findByNodeId(nodeId).orElseGet(this::clusterDefault);
    }

    /** The overrides of those of {@code nodeIds} that have one, by node. */
    Map<UUID, TaskShareSet> overrides(Collection<UUID> nodeIds) {
        Map<UUID, TaskShareSet> byNode = new HashMap<>();
        for (TaskShareSet set : sets.findByNodeIdIn(nodeIds)) {
            byNode.put(set.getNodeId(), set);
        }
        return byNode;
    }

    TaskShareSet clusterDefault() {
        return sets.findByNodeIdIsNull()
                .orElseThrow(() -> new IllegalStateException("The cluster-default task shares are missing; the schema seeds them"));
    }

    private TaskShareSet replace(TaskShareSet set, TaskSharesRequest request) {
        List<TaskShareConfig> tasks = toConfigs(request);
        int interval = request.usageReportIntervalSecondsOrDefault();
        IoCost cost = request.ioCostOrDefault();
        if (tasks.equals(set.getTasks()) && interval == set.getUsageReportIntervalSeconds() && cost.equals(set.getIoCost())) {
            return set;
        }
        if (!tasks.equals(set.getTasks())) {
            set.setTasks(tasks);
        }
        set.setUsageReportIntervalSeconds(interval);
        set.setIoCost(cost);
        revisions.bump(); // lock order: see ConfigRevisions
        return sets.saveAndFlush(set);
    }

    private static List<TaskShareConfig> toConfigs(TaskSharesRequest request) {
        return request.tasks().stream().map(TaskShareRequest::toConfig).toList();
    }
}
