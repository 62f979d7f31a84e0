package io.weir.agent;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.WireText;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The agent's config in force: puts a pushed snapshot, or the one cached in the state directory
 * at start, in force in one order (the node check and the builder's check, the translation, the
 * executor reconfigured, the listener's veto, then committed, saved and announced) and answers
 * the control plane with an ack or a nack.
 *
 * <p>Implementation notes: runs on the agent's event thread only ({@link QosAgent}); the
 * revision and the node are kept in volatile copies as well, for {@link QosAgent#state()} on any
 * thread. Its log lines are the agent's ({@code io.weir.agent.QosAgent}).
 */
final class ConfigApplier {

    private static final System.Logger LOG = System.getLogger(QosAgent.class.getName());

    private final QosAgent agent;
    private final QosExecutor executor;
    private final AgentListener listener;
    private final StateStore store;
    private final Consumer<DesiredConfig> check;
    /** The node the builder named, or null; checked against every snapshot and sent in the hello. */
    final UUID expectedNodeId;

    /** Event thread: the snapshot in force, or null. */
    private DesiredConfig applied;
    /**
     * The applied snapshot if saving it failed, else null: saved again at each heartbeat tick
     * ({@link #saveIfUnsaved}), since the control plane, told by the hello's digest that the node
     * has it, does not push it again, and a restart would otherwise come up on an older one.
     */
    private DesiredConfig unsaved;
    /** Whether saving {@link #unsaved} failed already (and was logged). */
    private boolean saveFailed;
    private volatile long appliedRevision;
    /** The node of the last applied snapshot, else {@link #expectedNodeId}; written on the event thread. */
    private volatile UUID nodeId;

    ConfigApplier(QosAgent agent, QosExecutor executor, AgentListener listener, StateStore store,
            Consumer<DesiredConfig> check, UUID expectedNodeId) {
        this.agent = agent;
        this.executor = executor;
        this.listener = listener;
        this.store = store;
        this.check = check;
        this.expectedNodeId = expectedNodeId;
        this.nodeId = expectedNodeId;
    }

    /** Event thread: the snapshot in force, or null. */
    DesiredConfig applied() {
        return applied;
    }

    /** The revision in force, 0 if none; any thread. */
    long appliedRevision() {
        return appliedRevision;
    }

    /** The node of the snapshot in force, else the one the builder named, else null; any thread. */
    UUID nodeId() {
        return nodeId;
    }

    /** How often the usage of {@code config}'s node is reported. */
    static Duration reportInterval(DesiredConfig config) {
        return Duration.ofSeconds(config.usageReportIntervalSeconds());
    }

    /** Event thread, at start, before connecting: puts the cached snapshot in force, if there is a good one. */
    void loadCached() throws IOException {
        SchedulerConfig previousConfig = executor.config();
        StateStore.Loaded loaded = store.load();
        if (loaded.problem() != null) {
            agent.lastError(loaded.problem());
        }
        DesiredConfig cached = loaded.config();
        if (cached == null) {
            return;
        }
        if (expectedNodeId != null && !cached.nodeId().equals(expectedNodeId)) {
            agent.error(Level.WARNING, "the cached config is for node " + cached.nodeId() + ", not for this agent's node "
                    + expectedNodeId + "; ignored");
            return;
        }
        try {
            executor.reconfigure(ConfigTranslator.translate(cached));
        } catch (RuntimeException e) {
            // Saved only after it was applied once, so this means a scheduler that has become stricter.
            agent.error(Level.WARNING, "the cached config (revision " + cached.revision() + ") is no longer valid: "
                    + e.getMessage());
            return;
        }
        String vetoed = applying(cached, previousConfig);
        if (vetoed != null) {
            agent.error(Level.WARNING, "the cached config (revision " + cached.revision() + ") was not applied: " + vetoed);
            return;
        }
        applied = cached;
        appliedRevision = cached.revision();
        nodeId = cached.nodeId();
        LOG.log(Level.INFO, "enforcing the cached config of node {0}, revision {1}", cached.nodeId(), cached.revision());
        notifyApplied(cached);
    }

    /** Event thread: puts a snapshot pushed on {@code c} in force, or refuses it; answers on {@code c}. */
    void apply(AgentConnection c, DesiredConfig config) {
        long revision = config.revision();
        if (applied != null && revision == applied.revision() && config.equals(applied)) {
            saveIfUnsaved();
            c.send(new AgentMessage.Ack(revision));
            return;
        }
        SchedulerConfig previousConfig = executor.config();
        String reason;
        try {
            if (expectedNodeId != null && !expectedNodeId.equals(config.nodeId())) {
                throw new IllegalArgumentException("the snapshot is for node " + config.nodeId() + ", this agent runs node "
                        + expectedNodeId);
            }
            check.accept(config);
            executor.reconfigure(ConfigTranslator.translate(config));
            reason = applying(config, previousConfig);
        } catch (RuntimeException e) {
            reason = e.getMessage() == null ? e.toString() : e.getMessage();
        }
        // The protocol refuses a reason with a NUL or over its length: an exception's text may be either.
        reason = WireText.clean(reason, WireText.MAX_REASON);
        if (reason != null) {
            agent.error(Level.WARNING, "refused revision " + revision + ": " + reason);
            c.send(new AgentMessage.Nack(revision, reason));
            try {
                listener.rejected(config, reason);
            } catch (RuntimeException le) {
                agent.listenerFailed("rejected", le);
            }
            return;
        }
        applied = config;
        appliedRevision = revision;
        nodeId = config.nodeId();
        agent.usage().setInterval(reportInterval(config));
        unsaved = config;
        saveIfUnsaved();
        notifyApplied(config);
        c.send(new AgentMessage.Ack(revision));
    }

    /**
     * Event thread: saves the applied snapshot if it is not saved yet. A failure leaves it in force
     * (only its survival across a restart is at risk), is logged once while it fails, and is tried
     * again at the next heartbeat tick.
     */
    void saveIfUnsaved() {
        DesiredConfig config = unsaved;
        if (config == null) {
            return;
        }
        try {
            store.save(config);
            if (saveFailed) {
                LOG.log(Level.INFO, "revision {0} is saved to {1} now", config.revision(), store.file());
            }
            unsaved = null;
            saveFailed = false;
        } catch (IOException | RuntimeException e) {
            String message = "revision " + config.revision() + " is applied but could not be saved to " + store.file()
                    + " (tried again at each heartbeat): " + e;
            if (!saveFailed) {
                saveFailed = true;
                agent.error(Level.ERROR, message);
            } else {
                agent.lastError(message); // logged once while it fails
            }
        }
    }

    /**
     * Lets the listener veto a snapshot that is in force in the executor; on a veto, puts the
     * executor back on {@code previous} and returns the reason, else null.
     */
    private String applying(DesiredConfig config, SchedulerConfig previous) {
        try {
            listener.applying(config);
            return null;
        } catch (RuntimeException | AssertionError | LinkageError e) { // an Error of a bug too: unanswered, it wedged the channel
            try {
                executor.reconfigure(previous);
            } catch (RuntimeException again) {
                LOG.log(Level.ERROR, "cannot restore the previous scheduler config", again);
            }
            return e.getMessage() == null ? e.toString() : e.getMessage();
        }
    }

    private void notifyApplied(DesiredConfig config) {
        try {
            listener.applied(config);
        } catch (RuntimeException e) {
            agent.listenerFailed("applied", e);
        }
    }
}
