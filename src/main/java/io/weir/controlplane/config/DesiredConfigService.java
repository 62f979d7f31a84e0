package io.weir.controlplane.config;

import io.weir.protocol.DesiredConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Builds a node's {@link DesiredConfig}: a full snapshot of what it must enforce, stamped with the
 * node's own desired revision.
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
    private final JdbcClient jdbc;
    private final JsonMapper json;
    private final TransactionTemplate snapshotTx;
    private final TransactionTemplate stampTx;

    DesiredConfigService(ConfigRevisions revisions, PlacedVolumes volumes, EffectiveTaskShares taskShares,
            TenantDirectory tenants, JdbcClient jdbc, JsonMapper json, PlatformTransactionManager transactions) {
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
        DesiredConfig read = snapshotTx.execute(status -> read(nodeId));
        String fingerprint = fingerprint(read);
        long revision = stamp(nodeId, read.revision(), fingerprint);
        return revision == read.revision() ? read
                : new DesiredConfig(nodeId, revision, read.tasks(), read.tenants(), read.volumes(),
                        read.usageReportIntervalSeconds());
    }

    /** The node's desired revision as last stored, without reading a snapshot; empty before the first read. */
    public Optional<Long> storedRevision(UUID nodeId) {
        return jdbc.sql("SELECT revision FROM node_desired_revision WHERE node_id = ?").param(nodeId)
                .query(Long.class).optional();
    }

    private DesiredConfig read(UUID nodeId) {
        long revision = revisions.current();
        List<VolumeConfig> placed = volumes.placedOn(nodeId);
        // One query for all the tenants; the foreign key keeps every volume's tenant in place.
        List<TenantConfig> tenantConfigs = tenants.tenants(placed.stream().map(VolumeConfig::tenantId).distinct().toList());
        return new DesiredConfig(nodeId, revision, taskShares.effectiveFor(nodeId), tenantConfigs, placed,
                taskShares.usageReportIntervalSecondsFor(nodeId));
    }

    /** The node's desired revision for content {@code fingerprint} read at global revision {@code read}. */
    private long stamp(UUID nodeId, long read, String fingerprint) {
        try {
            return stampTx.execute(status -> {
                jdbc.sql("""
                                INSERT INTO node_desired_revision (node_id, revision, fingerprint) VALUES (?, ?, ?)
                                ON CONFLICT (node_id) DO UPDATE SET revision = EXCLUDED.revision, fingerprint = EXCLUDED.fingerprint
                                WHERE node_desired_revision.fingerprint <> EXCLUDED.fingerprint
                                  AND node_desired_revision.revision < EXCLUDED.revision""")
                        .param(nodeId).param(read).param(fingerprint).update();
                return jdbc.sql("SELECT revision, fingerprint FROM node_desired_revision WHERE node_id = ?")
                        .param(nodeId)
                        .query((rs, n) -> fingerprint.equals(rs.getString(2)) ? rs.getLong(1) : read)
                        .optional().orElse(read);
            });
        } catch (DataIntegrityViolationException nodeDeletedMeanwhile) {
            return read;
        }
    }

    private String fingerprint(DesiredConfig config) {
        DesiredConfig content = new DesiredConfig(config.nodeId(), 0, config.tasks(), config.tenants(), config.volumes(),
                config.usageReportIntervalSeconds());
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(json.writeValueAsBytes(content)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
