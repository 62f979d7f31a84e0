package io.weir.controlplane.node;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.config.DesiredConfigService;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.ETags;
import io.weir.controlplane.web.JsonMergePatch;
import io.weir.controlplane.web.PageResponse;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.domain.Page;
import org.springframework.data.domain.Pageable;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.JsonNode;

/**
 * Data nodes: register, read, patch and delete, and the status their agents report.
 *
 * <h2>Config revision</h2>
 * Only a change of the replication address a node's data node reports bumps the revision
 * ({@link #recordReplicationAddress}): the desired configs of replicated volumes list each copy's
 * address. A node's name, address and labels are not enforced by any
 * node. Creating a node changes nothing another node enforces (a new node starts with no
 * volumes and the cluster-default task shares), and deleting one removes only its own config:
 * its task-share override goes with it (foreign key cascade), and a node that still has volumes
 * cannot be deleted, because the volume feature vetoes {@link NodeDeleting}.
 *
 * <h2>Status</h2>
 * {@link #status} is the one place a node's {@link NodeStatus} is computed: {@code desiredRevision}
 * is the node's own ({@link DesiredConfigService}: reads refresh it, write responses show the
 * stored one), {@code connected}, the replica and the data node's report come from the
 * {@link NodeConnections} bean (not connected while there is none), and the applied revision, last ack and last error
 * are what the agent reported through {@link #recordAnswers} (the push channel's batched way) or
 * {@link #recordApplied} and {@link #recordRejected} (one answer each).
 */
@Service
public class NodeService {

    private final NodeRepository nodes;
    private final ConfigRevisions revisions;
    private final JsonMergePatch mergePatch;
    private final ApplicationEventPublisher events;
    private final ObjectProvider<NodeConnections> connections;
    private final ObjectProvider<NodeCredentials> tokens;
    private final AuditLog audit;
    private final JdbcClient jdbc;

    /** Lazily: the desired config reads the volume feature, which needs this service. */
    private final ObjectProvider<DesiredConfigService> desiredConfigs;
    /** The reads of GET, which ask for desired revisions outside them ({@link #get}). */
    private final TransactionTemplate readOnly;

    NodeService(NodeRepository nodes, ConfigRevisions revisions, JsonMergePatch mergePatch,
            ApplicationEventPublisher events, ObjectProvider<NodeConnections> connections,
            ObjectProvider<NodeCredentials> tokens, AuditLog audit, ObjectProvider<DesiredConfigService> desiredConfigs,
            JdbcClient jdbc, PlatformTransactionManager transactions) {
        this.readOnly = new TransactionTemplate(transactions);
        readOnly.setReadOnly(true);
        this.jdbc = jdbc;
        this.desiredConfigs = desiredConfigs;
        this.tokens = tokens;
        this.audit = audit;
        this.nodes = nodes;
        this.revisions = revisions;
        this.mergePatch = mergePatch;
        this.events = events;
        this.connections = connections;
    }

    /** The node with this id, or 404. */
    @Transactional(readOnly = true)
    public Node require(UUID id) {
        return nodes.findById(id).orElseThrow(() -> ApiException.notFound("Node", id));
    }

    /** Whether a node with this id exists; unlike {@link #require} it never throws. */
    @Transactional(readOnly = true)
    public boolean exists(UUID id) {
        return nodes.existsById(id);
    }

    /** Which of {@code ids} are nodes, in one query. */
    @Transactional(readOnly = true)
    public Set<UUID> existingIds(Collection<UUID> ids) {
        return ids.isEmpty() ? Set.of() : nodes.findExistingIds(ids);
    }

    /**
     * Which of {@code ids} are nodes that carry every label of {@code selector}, in one query: a
     * node that does not exist and one that does not match are alike. An empty selector matches
     * no node.
     */
    @Transactional(readOnly = true)
    public Set<UUID> placeableIds(Collection<UUID> ids, Map<String, String> selector) {
        if (ids.isEmpty() || selector.isEmpty()) {
            return Set.of();
        }
        return nodes.findAll(NodeSpecifications.amongCarrying(ids, selector)).stream()
                .map(Node::getId)
                .collect(java.util.stream.Collectors.toSet());
    }

    /**
     * The nodes that carry every label of a tenant's {@code selector}, in the stable list order;
     * none when it is empty.
     */
    @Transactional(readOnly = true)
    public Page<Node> placeable(Map<String, String> selector, Pageable pageable) {
        if (selector.isEmpty()) {
            return Page.empty(pageable);
        }
        return nodes.findAll(NodeSpecifications.matching(null, List.copyOf(selector.entrySet())), pageable);
    }

    /**
     * The node as GET shows it: the node in a transaction of its own, then its desired revision,
     * in DesiredConfigService's transactions, after it. Nested, the read would hold one pooled
     * connection while waiting for a second, and as many concurrent reads as the pool has
     * connections waited on each other until its timeout.
     */
    public NodeResponse get(UUID id) {
        Node node = readOnly.execute(status -> {
            Node read = require(id);
            read.getLabels().size(); // loaded here, shown after the transaction
            return read;
        });
        return NodeResponse.from(node, status(node, Map.of(id, desiredConfigs.getObject().forNode(id).revision())));
    }

    /**
     * Nodes whose name contains {@code nameContains} (if given) and that carry every label
     * (key, value) in {@code labels}, in the stable list order.
     */
    public PageResponse<NodeResponse> list(String nameContains, List<Map.Entry<String, String>> labels,
            Pageable pageable) {
        Page<Node> page = readOnly.execute(status -> {
            Page<Node> read = nodes.findAll(NodeSpecifications.matching(nameContains, labels), pageable);
            read.forEach(n -> n.getLabels().size()); // loaded here, shown after the transaction
            return read;
        });
        // outside the read's transaction, as in get
        Map<UUID, Long> desired = desiredRevisions(page.getContent().stream().map(Node::getId).toList());
        Map<UUID, NodeConnections.AgentPresence> presence = presence(desired.keySet());
        return PageResponse.of(page, node -> NodeResponse.from(node, status(node, desired, presence)));
    }

    @Transactional
    public NodeResponse create(NodeRequest request) {
        if (nodes.existsByName(request.name())) {
            throw duplicate(request.name());
        }
        Node node = new Node(request.name());
        apply(node, request);
        Node saved = nodes.saveAndFlush(node);
        NodeResponse created = NodeResponse.from(saved, status(saved, known(saved.getId())));
        // The node's token is issued in the same transaction; the audit entry never holds it.
        String token = tokens.getObject().issueForNode(saved.getId());
        audit.record("node.create", "node", saved.getId(), null, null, created);
        return created.withToken(token);
    }

    /** Applies a JSON merge patch to the node's {@link NodeRequest} form. */
    @Transactional
    public NodeResponse patch(UUID id, JsonNode patch, String ifMatch) {
        Node node = require(id);
        ETags.checkIfMatch(ifMatch, node.getVersion());
        NodeResponse before = NodeResponse.from(node, status(node, known(node.getId())));
        NodeRequest merged = mergePatch.apply(NodeRequest.from(node), patch, NodeRequest.class);
        if (!node.getName().equals(merged.name()) && nodes.existsByNameAndIdNot(merged.name(), id)) {
            throw duplicate(merged.name());
        }
        node.setName(merged.name());
        apply(node, merged);
        Node saved = nodes.saveAndFlush(node);
        NodeResponse after = NodeResponse.from(saved, status(saved, known(saved.getId())));
        audit.record("node.update", "node", id, null, before, after);
        return after;
    }

    @Transactional
    public void delete(UUID id, String ifMatch) {
        Node node = require(id);
        ETags.checkIfMatch(ifMatch, node.getVersion());
        events.publishEvent(new NodeDeleting(id, node.getName()));
        NodeResponse before = NodeResponse.from(node, status(node, known(node.getId())));
        nodes.delete(node);
        nodes.flush();
        audit.record("node.delete", "node", id, null, before, null);
    }

    /**
     * Records that the node's agent applied {@code revision}: sets the applied revision and the
     * ack time, and clears the last error. Does not change the node's version.
     */
    @Transactional
    public void recordApplied(UUID id, long revision) {
        if (recordAnswers(List.of(AgentAnswer.applied(id, revision, Instant.now()))) == 0) {
            throw ApiException.notFound("Node", id);
        }
    }

    /**
     * Records that the node's agent rejected a snapshot and kept its previous config: sets the
     * last error (cut to {@value AgentAnswer#MAX_ERROR_LENGTH} characters), leaving the applied revision.
     */
    @Transactional
    public void recordRejected(UUID id, long revision, String reason) {
        if (recordAnswers(List.of(AgentAnswer.rejected(id, revision, reason, Instant.now()))) == 0) {
            throw ApiException.notFound("Node", id);
        }
    }

    /**
     * Records what the agents of many nodes answered, in one statement, as
     * {@link #recordApplied(UUID, long)} and {@link #recordRejected} do for one: the push
     * channel's way under load, where a statement per ack would cost the replica more than
     * everything else a push does. At most one answer per node (see {@link AgentAnswer#then});
     * answers of nodes deleted since are skipped. Does not change the nodes' versions.
     *
     * @return the number of nodes updated
     */
    @Transactional
    public int recordAnswers(Collection<AgentAnswer> answers) {
        if (answers.isEmpty()) {
            return 0;
        }
        UUID[] ids = new UUID[answers.size()];
        Long[] revisions = new Long[ids.length];
        Long[] ackMicros = new Long[ids.length];
        String[] errors = new String[ids.length];
        Long[] answerMicros = new Long[ids.length];
        int i = 0;
        for (AgentAnswer a : answers) {
            ids[i] = a.nodeId();
            revisions[i] = a.appliedRevision();
            ackMicros[i] = a.ackAt() == null ? null : micros(a.ackAt());
            errors[i] = a.lastError();
            answerMicros[i] = micros(a.answeredAt());
            i++;
        }
        return nodes.recordAnswers(ids, revisions, ackMicros, errors, answerMicros);
    }

    private static long micros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
    }

    /**
     * The ids of every node that carries all labels of a tenant's {@code selector}; none when it
     * is empty. For the volume feature's choice of nodes.
     */
    @Transactional(readOnly = true)
    public List<UUID> placeableIds(Map<String, String> selector) {
        if (selector.isEmpty()) {
            return List.of();
        }
        return nodes.findAll(NodeSpecifications.matching(null, List.copyOf(selector.entrySet()))).stream()
                .map(Node::getId).toList();
    }

    /**
     * The agents of these nodes as the agent channel knows them ({@link NodeConnections}), by node
     * id; a node whose agent never connected nor reported has no entry, and while there is no
     * channel no node has one.
     */
    public Map<UUID, NodeConnections.AgentPresence> agents(Collection<UUID> ids) {
        return presence(ids);
    }

    /**
     * Where clients reach each of these nodes ({@code host:port}): the address it was registered
     * with, else the listen address its data node last reported; a node with neither has no
     * entry. Two queries, in the caller's transaction.
     */
    @Transactional(readOnly = true)
    public Map<UUID, String> clientAddresses(Collection<UUID> ids) {
        Map<UUID, String> result = new HashMap<>();
        if (ids.isEmpty()) {
            return result;
        }
        agents(ids).forEach((id, agent) -> {
            if (agent.report() != null && agent.report().listenAddress() != null) {
                result.put(id, agent.report().listenAddress());
            }
        });
        jdbc.sql("SELECT id, address FROM data_node WHERE id = ANY(:ids::uuid[]) AND address IS NOT NULL")
                .param("ids", ids.toArray(UUID[]::new))
                .query(rs -> {
                    result.put(rs.getObject(1, UUID.class), rs.getString(2));
                });
        return result;
    }

    /**
     * The replication listener address each of these nodes last reported ({@code host:port}); a
     * node that reported none has no entry. One query, in the caller's transaction.
     */
    @Transactional(readOnly = true)
    public Map<UUID, String> replicationAddresses(Collection<UUID> ids) {
        Map<UUID, String> result = new HashMap<>();
        if (ids.isEmpty()) {
            return result;
        }
        jdbc.sql("SELECT id, replication_address FROM data_node WHERE id = ANY(:ids::uuid[]) AND replication_address IS NOT NULL")
                .param("ids", ids.toArray(UUID[]::new))
                .query(rs -> {
                    result.put(rs.getObject(1, UUID.class), rs.getString(2));
                });
        return result;
    }

    /**
     * Stores the replication listener address a node's data node reported, when it differs from
     * the stored one, and then bumps the config revision: the address goes into the desired
     * configs of the nodes that hold the other copies of its volumes. Lock order
     * ({@link ConfigRevisions}): the node row {@code FOR NO KEY UPDATE}, as volume writes take it,
     * then the bump, then the write. The node's version is left alone (a status, not an
     * administrator's field).
     *
     * @return whether it changed
     */
    @Transactional
    public boolean recordReplicationAddress(UUID nodeId, String address) {
        // the usual case, an unchanged address, is decided without a lock
        List<String> stored = storedReplicationAddress(nodeId, "");
        if (stored.isEmpty() || Objects.equals(stored.get(0), address)) {
            return false;
        }
        List<String> locked = storedReplicationAddress(nodeId, " FOR NO KEY UPDATE");
        if (locked.isEmpty() || Objects.equals(locked.get(0), address)) {
            return false;
        }
        revisions.bump(); // lock order: see ConfigRevisions
        jdbc.sql("UPDATE data_node SET replication_address = ? WHERE id = ?").param(address).param(nodeId).update();
        return true;
    }

    /** The node's stored address as a list of one (which may hold null), or empty when there is no such node. */
    private List<String> storedReplicationAddress(UUID nodeId, String lock) {
        return jdbc.sql("SELECT replication_address FROM data_node WHERE id = ?" + lock).param(nodeId)
                .query((rs, n) -> rs.getString(1)).list();
    }

    /**
     * Whether each of these nodes runs its latest desired config (applied revision at least its
     * desired revision), by id; for the volume feature's "applied on every node" flag. Outside
     * any transaction, as {@link #get} explains: the nodes first, then their desired revisions.
     */
    public Map<UUID, Boolean> upToDate(Collection<UUID> ids) {
        Map<UUID, Boolean> result = new HashMap<>();
        List<Node> found = nodes.findAllById(ids);
        Map<UUID, Long> desired = desiredRevisions(found.stream().map(Node::getId).toList());
        Map<UUID, NodeConnections.AgentPresence> presence = presence(desired.keySet());
        for (Node node : found) {
            result.put(node.getId(), status(node, desired, presence).upToDate());
        }
        return result;
    }

    /** The desired revision of each node, read together (a page of nodes costs a few queries, not a few per node). */
    private Map<UUID, Long> desiredRevisions(List<UUID> ids) {
        Map<UUID, Long> desired = new HashMap<>();
        desiredConfigs.getObject().forNodes(ids).forEach((id, config) -> desired.put(id, config.revision()));
        return desired;
    }

    /** The desired revision a write path shows: the stored one, without reading a new snapshot. */
    private Map<UUID, Long> known(UUID id) {
        return Map.of(id, desiredConfigs.getObject().storedRevision(id).orElseGet(revisions::current));
    }

    private Map<UUID, NodeConnections.AgentPresence> presence(Collection<UUID> ids) {
        NodeConnections live = connections.getIfAvailable();
        return live == null || ids.isEmpty() ? Map.of() : live.presence(ids);
    }

    NodeStatus status(Node node, Map<UUID, Long> desired) {
        return status(node, desired, presence(List.of(node.getId())));
    }

    /** The one place a node's status is put together. */
    NodeStatus status(Node node, Map<UUID, Long> desired, Map<UUID, NodeConnections.AgentPresence> presence) {
        NodeConnections.AgentPresence agent = presence.get(node.getId());
        NodeStatus.DataNodeReport report = agent == null || agent.report() == null ? null
                : new NodeStatus.DataNodeReport(agent.report().listenAddress(), agent.report().exports(), agent.reportedAt());
        return new NodeStatus(agent != null && agent.replica() != null, agent == null ? null : agent.replica(),
                agent == null ? null : agent.agentVersion(), desired.get(node.getId()), node.getAppliedRevision(),
                node.getLastAckAt(), node.getLastError(), report);
    }

    private static ApiException duplicate(String name) {
        return ApiException.conflict("A node named '" + name + "' already exists");
    }

    private static void apply(Node node, NodeRequest request) {
        node.setAddress(request.address());
        node.setLabels(request.labelsOrEmpty());
    }
}
