package io.weir.controlplane.volume;

import io.weir.controlplane.config.ConfigRevisions;
import io.weir.protocol.AgentMessage;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Takes what a primary reports of its replicated volumes' copies ({@link AgentMessage.ReplicationStatus}
 * in its node's status) into the volumes, by the rules of {@link io.weir.protocol.ReplicationConfig}:
 *
 * <ul>
 *   <li>A report counts only when its node is the volume's primary and its epoch is the volume's:
 *       a deposed primary's, or one from before a promotion, changes nothing. So does a report of
 *       an unknown volume, of one of a single copy, or of a copy the volume does not have (the
 *       primary's own copy included, which is in sync by definition). What is left out is logged
 *       at DEBUG.</li>
 *   <li>Each copy's {@code copy_state} and {@code resync_remaining_bytes} follow every report that
 *       counts; nodes are not told them, so they bump nothing.</li>
 *   <li>A report whose {@code syncSequence} is above the stored one changes the in-sync set: each
 *       copy it lists is in sync exactly when its state is {@code inSync}, the volume keeps the
 *       sequence, and the config revision is bumped, so that every copy's node (the primary first
 *       of all, which waits for the echo before it acknowledges writes without a dropped copy) gets
 *       it promptly. A report at or below the stored sequence leaves the set alone.</li>
 * </ul>
 *
 * <p>Each volume's report is taken in its own transaction. Lock order ({@link ConfigRevisions}):
 * decided from a plain read; then the bump, when the sequence is higher; then the volume row
 * {@code FOR UPDATE}, as a promotion ({@link ReplicationFailover}) takes it, and the decision
 * checked again under it (a promotion committed meanwhile makes the report stale, and the
 * transaction, bump included, is rolled back); then the writes.
 */
@Component
public class ReplicationIntake {

    private static final Logger log = LoggerFactory.getLogger(ReplicationIntake.class);

    private final JdbcClient jdbc;
    private final ConfigRevisions revisions;
    private final TransactionTemplate tx;

    ReplicationIntake(JdbcClient jdbc, ConfigRevisions revisions, PlatformTransactionManager transactions) {
        this.jdbc = jdbc;
        this.revisions = revisions;
        this.tx = new TransactionTemplate(transactions);
    }

    /** The replication part of a status that {@code nodeId}'s data node sent. */
    public void reported(UUID nodeId, List<AgentMessage.ReplicationStatus> statuses) {
        for (AgentMessage.ReplicationStatus status : statuses) {
            tx.executeWithoutResult(t -> {
                if (!take(nodeId, status)) {
                    t.setRollbackOnly();
                }
            });
        }
    }

    private record State(int replicas, UUID primary, long epoch, long syncSequence) {
    }

    /** Takes one volume's report; false when it turned out stale under the lock (roll back). */
    private boolean take(UUID nodeId, AgentMessage.ReplicationStatus status) {
        State read = state(status.volumeId(), false);
        if (!counts(nodeId, status, read)) {
            return true;
        }
        boolean newSet = status.syncSequence() > read.syncSequence();
        if (newSet) {
            revisions.bump(); // lock order: see ConfigRevisions
        }
        State locked = state(status.volumeId(), true);
        if (!counts(nodeId, status, locked)) {
            return false;
        }
        newSet = status.syncSequence() > locked.syncSequence();
        for (AgentMessage.CopyStatus copy : status.copies()) {
            if (copy.nodeId().equals(locked.primary())) {
                log.debug("volume {}: the primary {} reported its own copy; left out", status.volumeId(), nodeId);
                continue;
            }
            int updated = jdbc.sql("UPDATE volume_placement SET copy_state = :state, resync_remaining_bytes = :remaining"
                            + (newSet ? ", in_sync = :inSync" : "") + " WHERE volume_id = :volume AND node_id = :node")
                    .param("state", copy.state().name()).param("remaining", copy.resyncRemainingBytes())
                    .param("inSync", copy.state() == AgentMessage.CopyState.inSync)
                    .param("volume", status.volumeId()).param("node", copy.nodeId()).update();
            if (updated == 0) {
                log.debug("volume {}: node {} reported a copy on node {}, which holds none; left out", status.volumeId(),
                        nodeId, copy.nodeId());
            }
        }
        if (newSet) {
            jdbc.sql("UPDATE volume SET sync_sequence = ? WHERE id = ?").param(status.syncSequence())
                    .param(status.volumeId()).update();
        }
        return true;
    }

    /** Whether a report of {@code nodeId} counts for the volume in {@code state}: its primary, at its epoch. */
    private static boolean counts(UUID nodeId, AgentMessage.ReplicationStatus status, State state) {
        if (state == null || state.replicas() < 2) {
            log.debug("node {} reported replication of volume {}, which is not replicated; ignored", nodeId,
                    status.volumeId());
            return false;
        }
        if (!nodeId.equals(state.primary()) || status.epoch() != state.epoch()) {
            log.debug("node {} reported volume {} at epoch {}; its primary is {} at epoch {}: ignored", nodeId,
                    status.volumeId(), status.epoch(), state.primary(), state.epoch());
            return false;
        }
        return true;
    }

    private State state(UUID volumeId, boolean lock) {
        return jdbc.sql("SELECT replicas, primary_node_id, epoch, sync_sequence FROM volume WHERE id = ?"
                        + (lock ? " FOR UPDATE" : ""))
                .param(volumeId)
                .query((rs, n) -> new State(rs.getInt(1), rs.getObject(2, UUID.class), rs.getLong(3), rs.getLong(4)))
                .optional().orElse(null);
    }
}
