package io.weir.controlplane.config;

import io.weir.protocol.DesiredConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.TlsConfig;
import io.weir.protocol.VolumeConfig;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Builds a node's {@link DesiredConfig}: a full snapshot of what it must enforce, stamped with the
 * node's own desired revision.
 *
 * <p>Its {@code tls} member is the cluster PKI ({@link ClusterTrust}): the CA, the valid client
 * certificates of the tenants with a volume on the node, and those tenants' revoked ones, so a
 * revocation changes the snapshot of every node serving its tenant and is pushed to them (a node
 * serving none never let the certificate in).
 *
 * <p>The snapshot is read in one REPEATABLE READ transaction, so the revision and the rows come
 * from the same committed state: a change is either wholly in the snapshot with its revision, or
 * wholly absent with an earlier one.
 *
 * <h2>The node's own revision</h2>
 * The global revision moves with every change anywhere; a node's desired revision moves only when
 * its own snapshot changes. Each snapshot's content (its JSON without the revision) is hashed
 * (SHA-256); table {@code node_desired_revision} keeps, per node, the hash of the latest content
 * and the global revision at which that content was first read. A snapshot is stamped with that
 * revision, so a change that does not touch a node leaves both its snapshot and its revision (the
 * desired-config {@code ETag}) alone, and the push channel sends it nothing.
 *
 * <p>Replicas update the row with one conditional upsert (only a different hash at a higher
 * revision replaces it), in its own short transaction, so concurrent readers agree and the
 * revision never goes back. A reader whose snapshot lost the race (its content is older than the
 * stored one) keeps the global revision it read, which is below the stored one: it never claims a
 * newer revision for older content.
 */
@Service
public class DesiredConfigService {

    private final ConfigRevisions revisions;
    private final PlacedVolumes volumes;
    private final EffectiveTaskShares taskShares;
    private final TenantDirectory tenants;
    private final ClusterTrust trust;
    private final JdbcClient jdbc;
    private final JsonMapper json;
    private final TransactionTemplate snapshotTx;
    private final TransactionTemplate stampTx;

    DesiredConfigService(ConfigRevisions revisions, PlacedVolumes volumes, EffectiveTaskShares taskShares,
            TenantDirectory tenants, ClusterTrust trust, JdbcClient jdbc, JsonMapper json,
            PlatformTransactionManager transactions) {
        this.trust = trust;
        this.revisions = revisions;
        this.volumes = volumes;
        this.taskShares = taskShares;
        this.tenants = tenants;
        this.jdbc = jdbc;
        this.json = json;
        this.snapshotTx = new TransactionTemplate(transactions);
        snapshotTx.setReadOnly(true);
        snapshotTx.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        snapshotTx.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.stampTx = new TransactionTemplate(transactions);
        stampTx.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    }

    /** The snapshot for {@code nodeId}, stamped with the node's desired revision; the caller has checked that the node exists. */
    public DesiredConfig forNode(UUID nodeId) {
        return forNodes(List.of(nodeId)).get(nodeId);
    }

    /**
     * The snapshots of {@code nodeIds} (existing nodes), each stamped with its node's desired
     * revision, read together: a constant number of queries whatever the number of nodes, so a
     * change that touches every node is pushed to all of them at the cost of one read.
     *
     * @throws IllegalStateException if called inside a transaction: its own transactions would
     *     hold a second pooled connection beside the caller's, and as many such callers as the pool
     *     has connections would wait on each other until the pool's timeout
     */
    public Map<UUID, DesiredConfig> forNodes(Collection<UUID> nodeIds) {
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("desired configs are read outside any transaction of the caller's");
        }
        if (nodeIds.isEmpty()) {
            return Map.of();
        }
        List<UUID> ids = List.copyOf(new LinkedHashSet<>(nodeIds));
        Map<UUID, DesiredConfig> read = snapshotTx.execute(status -> read(ids));
        Map<UUID, String> fingerprints = new HashMap<>();
        read.forEach((id, config) -> fingerprints.put(id, fingerprint(config)));
        long readRevision = read.isEmpty() ? 0 : read.values().iterator().next().revision();
        Map<UUID, Long> stamped = stamp(fingerprints, readRevision);
        Map<UUID, DesiredConfig> result = new LinkedHashMap<>();
        for (UUID id : ids) {
            DesiredConfig c = read.get(id);
            long revision = stamped.getOrDefault(id, c.revision());
            result.put(id, revision == c.revision() ? c
                    : c.withRevision(revision));
        }
        return result;
    }

    /** The node's desired revision as last stored, without reading a snapshot; empty before the first read. */
    public Optional<Long> storedRevision(UUID nodeId) {
        return jdbc.sql("SELECT revision FROM node_desired_revision WHERE node_id = ?").param(nodeId)
                .query(Long.class).optional();
    }

    private Map<UUID, DesiredConfig> read(List<UUID> nodeIds) {
        long revision = revisions.current();
        Map<UUID, List<VolumeConfig>> placed = volumes.placedOnEach(nodeIds);
        Map<UUID, EffectiveTaskShares.NodeTaskShares> shares = taskShares.effectiveForEach(nodeIds);
        // One query for all the tenants; the foreign key keeps every volume's tenant in place.
        Map<UUID, TenantConfig> tenantsById = new HashMap<>();
        for (TenantConfig t : tenants.tenants(placed.values().stream().flatMap(List::stream).map(VolumeConfig::tenantId)
                .distinct().toList())) {
            tenantsById.put(t.id(), t);
        }
        // One query for the PKI too: each node gets the client certificates of its own tenants.
        TlsConfig allTls = trust.forTenants(tenantsById.keySet());
        Map<UUID, DesiredConfig> configs = new HashMap<>();
        for (UUID node : nodeIds) {
            List<VolumeConfig> vs = placed.get(node);
            List<TenantConfig> ts = vs.stream().map(VolumeConfig::tenantId).distinct().map(tenantsById::get).toList();
            EffectiveTaskShares.NodeTaskShares s = shares.get(node);
            Set<UUID> own = ts.stream().map(TenantConfig::id).collect(Collectors.toSet());
            TlsConfig tls = new TlsConfig(allTls.caCertificatesPem(),
                    allTls.clientCertificates().stream().filter(c -> own.contains(c.tenantId())).toList(),
                    allTls.revoked().stream().filter(c -> own.contains(c.tenantId())).toList());
            configs.put(node, new DesiredConfig(node, revision, s.tasks(), ts, vs, s.usageReportIntervalSeconds(), tls,
                    s.ioCost()));
        }
        return configs;
    }

    /**
     * The desired revision of each node for its content's fingerprint, read at global revision
     * {@code read}: one conditional upsert for all (in node order, so concurrent stampers lock
     * rows in the same order), then one read back.
     */
    private Map<UUID, Long> stamp(Map<UUID, String> fingerprints, long read) {
        if (fingerprints.isEmpty()) {
            return Map.of();
        }
        List<UUID> nodes = new ArrayList<>(fingerprints.keySet());
        String[] prints = nodes.stream().map(fingerprints::get).toArray(String[]::new);
        try {
            return stampTx.execute(status -> {
                jdbc.sql("""
                                INSERT INTO node_desired_revision (node_id, revision, fingerprint)
                                SELECT r.n, :read, r.f FROM unnest(:nodes::uuid[], :prints::text[]) AS r(n, f)
                                WHERE EXISTS (SELECT 1 FROM data_node d WHERE d.id = r.n)
                                ORDER BY r.n
                                ON CONFLICT (node_id) DO UPDATE SET revision = EXCLUDED.revision, fingerprint = EXCLUDED.fingerprint
                                WHERE node_desired_revision.fingerprint <> EXCLUDED.fingerprint
                                  AND node_desired_revision.revision < EXCLUDED.revision""")
                        .param("read", read).param("nodes", nodes.toArray(UUID[]::new)).param("prints", prints).update();
                Map<UUID, Long> revisionOf = new HashMap<>();
                jdbc.sql("SELECT node_id, revision, fingerprint FROM node_desired_revision WHERE node_id = ANY(:nodes::uuid[])")
                        .param("nodes", nodes.toArray(UUID[]::new))
                        .query(rs -> {
                            UUID node = rs.getObject(1, UUID.class);
                            // a stored content other than ours is newer: keep the revision we read
                            revisionOf.put(node, fingerprints.get(node).equals(rs.getString(3)) ? rs.getLong(2) : read);
                        });
                return revisionOf;
            });
        } catch (DataIntegrityViolationException nodeDeletedMeanwhile) {
            return Map.of();
        }
    }

    private String fingerprint(DesiredConfig config) {
        DesiredConfig content = config.withRevision(0);
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(json.writeValueAsBytes(content)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
