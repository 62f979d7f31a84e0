package io.weir.controlplane.push;

import io.weir.controlplane.node.AgentAnswer;
import io.weir.controlplane.node.NodeService;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Stores the agents' {@code ack} and {@code nack} answers on their nodes (applied revision, ack
 * time, last error) off the WebSocket threads, many nodes per statement.
 *
 * <h2>Why</h2>
 * A policy used by every node makes every agent answer at once. Written one transaction per
 * answer, the acks of a thousand agents cost the replica more CPU than reading and sending the
 * thousand snapshots, and they queue on the same cores as the pushes still going out.
 *
 * <h2>How an answer flows</h2>
 * <pre>
 *  container thread: AgentChannel ── record(answer) ──► pending: one AgentAnswer per node (folded)
 *  weir-agent-answers: wake ─► take up to {@value #MAX_BATCH} nodes ─► NodeService.recordAnswers (one statement)
 * </pre>
 * Answers of one node fold with {@link AgentAnswer#then}, so pending holds at most one entry per
 * connected node: its memory is bounded by the nodes, not by the rate of answers. While one batch
 * is written, new answers gather for the next, so batches grow with the load by themselves.
 *
 * <h2>When it cannot store</h2>
 * A batch that fails (the database restarting, say) goes back to pending, folded under any
 * newer answers, and is tried again after a pause that doubles from {@value #FIRST_PAUSE_MILLIS}
 * ms up to {@value #MAX_PAUSE_MILLIS} ms. Nothing is lost while the replica runs. At shutdown what
 * is still pending is tried once, and an answer that arrives after that is written on the thread
 * that received it; what still fails then is lost, and the node's status stays as stored until
 * its agent answers the next snapshot pushed to it.
 *
 * <h2>Answers stored by two replicas</h2>
 * An answer that this replica can only store late (its database writes failing) may reach the
 * database after a newer one that the node's agent gave another replica after reconnecting
 * there. Each answer carries the time it arrived ({@link AgentAnswer}), and the write keeps the
 * newer of the stored and the written one, so the late write cannot set the node's status back.
 *
 * <h2>Threads</h2>
 * {@link #record} may be called from any thread and never blocks; one daemon thread,
 * {@code weir-agent-answers}, writes, started and stopped with the application.
 */
@Component
class AnswerRecorder implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(AnswerRecorder.class);

    /** Most nodes written in one statement. */
    static final int MAX_BATCH = 1000;

    /** Pause after a failed write; doubled while writes keep failing. */
    static final long FIRST_PAUSE_MILLIS = 100;

    /** Longest pause between tries while writes fail. */
    static final long MAX_PAUSE_MILLIS = 5_000;

    /** How long the thread waits for an answer before it checks whether to stop. */
    private static final long POLL_MILLIS = 500;

    private final NodeService nodes;
    private final Clock clock;
    private final ConcurrentHashMap<UUID, AgentAnswer> pending = new ConcurrentHashMap<>();
    /** Released once per recorded answer; the writer drains it before each round. */
    private final Semaphore signal = new Semaphore(0);

    private volatile boolean running;
    private Thread thread;

    AnswerRecorder(NodeService nodes, Clock clock, PushMetrics metrics) {
        this.nodes = nodes;
        this.clock = clock;
        metrics.answersPending(pending::size);
    }

    /** The node's agent acknowledged {@code revision}, now. */
    void applied(UUID nodeId, long revision) {
        record(AgentAnswer.applied(nodeId, revision, clock.instant()));
    }

    /** The node's agent rejected {@code revision} for {@code reason}, now. */
    void rejected(UUID nodeId, long revision, String reason) {
        record(AgentAnswer.rejected(nodeId, revision, reason, clock.instant()));
    }

    private void record(AgentAnswer answer) {
        if (!running) {
            // stopped (shutting down): no writer is left, so this one is written here and now
            try {
                nodes.recordAnswers(List.of(answer));
            } catch (RuntimeException e) {
                log.info("the answer of node {} not stored during shutdown: {}", answer.nodeId(), e.getMessage());
            }
            return;
        }
        pending.merge(answer.nodeId(), answer, AgentAnswer::then);
        signal.release();
    }

    /** Answers not yet written, one per node. */
    int pending() {
        return pending.size();
    }

    @Override
    public synchronized void start() {
        running = true;
        thread = new Thread(this::run, "weir-agent-answers");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public synchronized void stop() {
        running = false;
        if (thread != null) {
            thread.interrupt(); // out of a retry pause at once
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                // still inside a write: draining here too could write an older answer after a newer
                log.info("{} agent answers not stored at shutdown: the writer is still busy", pending.size());
                return;
            }
        }
        try {
            while (!pending.isEmpty()) {
                writeBatch();
            }
        } catch (RuntimeException e) {
            log.info("{} agent answers not stored at shutdown ({}); the agents' next answers will be", pending.size(),
                    e.getMessage());
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /**
     * Stops after the {@link RevisionWatcher} (default phase), which closes the channel's sessions
     * at shutdown, so that their last answers are written.
     */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 1;
    }

    private void run() {
        long pause = FIRST_PAUSE_MILLIS;
        boolean failing = false;
        while (running) {
            try {
                if (!signal.tryAcquire(POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                signal.drainPermits();
                while (running && !pending.isEmpty()) {
                    try {
                        writeBatch();
                        if (failing) {
                            log.info("storing agent answers again");
                        }
                        failing = false;
                        pause = FIRST_PAUSE_MILLIS;
                    } catch (RuntimeException e) {
                        if (!failing) {
                            log.warn("could not store the answers of {} agents; trying again until it works: {}",
                                    pending.size(), e.getMessage());
                        }
                        failing = true;
                        Thread.sleep(pause); // the database is away: a back-off, not a synchronisation
                        pause = Math.min(MAX_PAUSE_MILLIS, pause * 2);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Takes up to {@value #MAX_BATCH} nodes' answers and writes them; on failure puts them back,
     * under any newer answers of the same nodes, and throws.
     */
    private void writeBatch() {
        List<AgentAnswer> batch = new ArrayList<>(Math.min(MAX_BATCH, pending.size()));
        for (UUID node : pending.keySet()) {
            if (batch.size() == MAX_BATCH) {
                break;
            }
            AgentAnswer a = pending.remove(node);
            if (a != null) {
                batch.add(a);
            }
        }
        try {
            nodes.recordAnswers(batch);
        } catch (RuntimeException e) {
            for (AgentAnswer a : batch) {
                pending.merge(a.nodeId(), a, (newer, older) -> older.then(newer));
            }
            throw e;
        }
    }
}
