package io.weir.controlplane.config;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * The global configuration revision: one monotonic counter that every change to what a data
 * node enforces bumps, in the same transaction as the change.
 *
 * <h2>Ordering</h2>
 * {@link #bump()} is a single {@code UPDATE ... RETURNING} on a one-row table. The row lock it
 * takes is held until the surrounding transaction ends, so concurrent writers are serialised
 * from their bump to their commit: revision N+1 can only commit after revision N has committed
 * or rolled back. A rolled-back bump leaves no gap: its {@code UPDATE} rolls back with the
 * transaction, the row holds N again, and the next writer's bump takes N+1; since only committed
 * revisions are ever seen (by readers, snapshots and notifications), every seen revision is used
 * exactly once and the committed ones run 1, 2, 3, ... without holes ({@code VolumeConcurrencyTest}
 * asserts this under concurrent writers whose conflicts roll back). The counter survives restarts
 * because it is an ordinary durable row.
 *
 * <h2>Lock order</h2>
 * Every writer takes its row locks in one order, so two writers can wait for each other only in
 * one direction and never deadlock:
 * <ol>
 *   <li>first the rows it reads to decide or validate the change, locked explicitly: a tenant or
 *       policy that changes {@code FOR UPDATE}; the tenant and the policy a volume write depends on
 *       {@code FOR SHARE} (tenant before policy); a volume write that reserves IOPS under a
 *       tenant limit then the data-node rows it is placed on {@code FOR NO KEY UPDATE}, sorted by id;</li>
 *   <li>then the revision row, through {@link #bump()};</li>
 *   <li>then the rows it writes, flushed after the bump (updates and deletes alike). A writer
 *       that decides from a plain read and must check that decision under the lock of the row
 *       it writes takes that lock here, after the bump: a replicated volume's report or promotion
 *       ({@code volume.ReplicationIntake}, {@code volume.ReplicationFailover}) locks the volume
 *       row {@code FOR UPDATE}, checks again, and rolls back (bump included) when it no longer
 *       holds. A check that sums rows other kinds of writers change, under locks of their own,
 *       reads them here too: the tenants' reservations per node ({@code volume.TenantReservations}),
 *       which tenant, policy and volume writes each change.</li>
 * </ol>
 * A writer must not flush an update or delete before its bump, and must not take a lock of step 1
 * after it. Every call of {@link #bump()} points back here.
 *
 * <h2>What bumps</h2>
 * Only changes that alter some node's desired config: a volume change while the volume is placed
 * on a node (before or after), a tenant or policy change that a placed volume depends on (see
 * {@link PlacementIndex}), every task-share change, and every client certificate issued or revoked
 * (the desired config lists them: valid ones to the nodes of their tenant, revoked ones to every
 * node; an issue for a tenant placed nowhere bumps a revision that changes no node's snapshot,
 * which sends nothing); and for replicated volumes, a node's new replication address (the data
 * node row locked first, as a volume write locks it), a primary's report of a higher sync
 * sequence, and a promotion. Otherwise a change no node can see bumps nothing.
 *
 * <h2>Fan-out</h2>
 * The bump also issues {@code pg_notify('weir_config_revision', N)}; PostgreSQL delivers it on
 * commit only. Listeners treat it as a hint and poll {@link #current()} as the source of truth.
 */
@Service
public class ConfigRevisions {

    /** The LISTEN/NOTIFY channel that carries "revision N was committed" hints. */
    public static final String NOTIFY_CHANNEL = "weir_config_revision";

    private final JdbcClient jdbc;

    ConfigRevisions(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Increments the revision and returns the new value. Must run inside the transaction that
     * makes the change it stands for.
     */
    @Transactional(propagation = Propagation.MANDATORY)
    public long bump() {
        long revision = jdbc.sql("UPDATE config_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision")
                .query(Long.class)
                .single();
        jdbc.sql("SELECT pg_notify(?, ?)")
                .param(NOTIFY_CHANNEL)
                .param(Long.toString(revision))
                .query((rs, n) -> 1)
                .list();
        return revision;
    }

    /** The latest committed revision. */
    @Transactional(readOnly = true)
    public long current() {
        return jdbc.sql("SELECT revision FROM config_revision WHERE id = 1").query(Long.class).single();
    }
}
