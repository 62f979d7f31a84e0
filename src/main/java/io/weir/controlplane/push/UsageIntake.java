package io.weir.controlplane.push;

import io.weir.controlplane.usage.UsageIngest;
import io.weir.protocol.UsageReport;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import org.springframework.web.socket.CloseStatus;

/**
 * Takes the agents' usage reports off the WebSocket threads, stores them in batches through the
 * usage feature's {@link UsageIngest#ingestPlaced}, and answers each with {@code usageAck}.
 *
 * <h2>How a report flows</h2>
 * <pre>
 *  container thread: AgentChannel ── offer(session, report) ──► bounded queue ({@value #CAPACITY})
 *  weir-usage-intake: take ─► drain up to {@value #MAX_BATCH} ─► ingestPlaced (one transaction)
 *                     ─► for each report: session.ackUsage(sequence)   (stored, duplicate or expired)
 * </pre>
 * The acknowledgement follows the commit, so an acknowledged report is durable; a duplicate or an
 * expired report is acknowledged too, since resending it cannot change anything.
 *
 * <h2>When it cannot keep up or cannot store</h2>
 * Nothing is acknowledged that is not stored, and the agent resends what is unacknowledged only
 * after a reconnect. A batch that fails to commit (the database restarting, say) is tried again
 * after a pause, {@value #ATTEMPTS} times in all with pauses doubling from
 * {@value #FIRST_PAUSE_MILLIS} ms, while new reports wait in the queue; a batch that still fails
 * closes the connections of its reports with 1011. A report that does not fit in the queue closes
 * its connection with 1013 (try again later). Either way each agent reconnects after its backoff
 * and resends its whole buffer, which the control plane deduplicates. The queue's bound is the
 * memory a burst of resends may take.
 *
 * <h2>Threads</h2>
 * {@link #offer} may be called from any thread and never blocks; one daemon thread,
 * {@code weir-usage-intake}, stores and acknowledges, started and stopped with the application.
 */
@Component
class UsageIntake implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(UsageIntake.class);

    /** Most reports waiting to be stored (all agents of this replica together). */
    static final int CAPACITY = 10_000;

    /** Most reports stored in one transaction. */
    static final int MAX_BATCH = 500;

    /** Tries of one batch before its connections are closed (the agents resend). */
    static final int ATTEMPTS = 5;

    /** Pause after a batch's first failed try; doubled after each further one. */
    static final long FIRST_PAUSE_MILLIS = 500;

    /** How long the intake thread waits for a report before it checks whether to stop. */
    private static final long POLL_MILLIS = 500;

    private record Pending(AgentSession session, UsageReport report) {
    }

    private final UsageIngest ingest;
    private final PushMetrics metrics;
    private final BlockingQueue<Pending> queue = new ArrayBlockingQueue<>(CAPACITY);

    private volatile boolean running;
    private Thread thread;

    UsageIntake(UsageIngest ingest, PushMetrics metrics) {
        this.ingest = ingest;
        this.metrics = metrics;
        metrics.usageQueue(queue::size);
    }

    /**
     * Queues a report of {@code session}'s node for storing; when the queue is full, closes the
     * session instead (the agent resends after reconnecting).
     */
    void offer(AgentSession session, UsageReport report) {
        metrics.usageReceived();
        if (!queue.offer(new Pending(session, report))) {
            metrics.usageRefused();
            log.warn("usage intake full ({} reports); closing the connection of node {} so that it resends later",
                    CAPACITY, session.nodeId());
            session.close(new CloseStatus(CloseStatus.SERVICE_OVERLOAD.getCode(), "usage intake full; reconnect and resend"));
        }
    }

    @Override
    public synchronized void start() {
        running = true;
        thread = new Thread(this::run, "weir-usage-intake");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public synchronized void stop() {
        running = false;
        if (thread != null) {
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    private void run() {
        List<Pending> batch = new ArrayList<>(MAX_BATCH);
        while (running) {
            try {
                Pending first = queue.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
                store(batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                batch.clear();
            }
        }
    }

    /** Stores one batch and acknowledges its reports; tries again after failures, then closes their sessions. */
    private void store(List<Pending> batch) throws InterruptedException {
        List<UsageIngest.Delivery> deliveries = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            deliveries.add(new UsageIngest.Delivery(p.session().nodeId(), p.report()));
        }
        long pause = FIRST_PAUSE_MILLIS;
        for (int attempt = 1; ; attempt++) {
            try {
                ingest.ingestPlaced(deliveries);
                break;
            } catch (RuntimeException e) {
                if (attempt == ATTEMPTS || !running) {
                    log.warn("could not store {} usage reports; closing their connections so that the agents resend: {}",
                            batch.size(), e.getMessage());
                    Set<AgentSession> sessions = new LinkedHashSet<>();
                    batch.forEach(p -> sessions.add(p.session()));
                    sessions.forEach(s -> s.close(new CloseStatus(CloseStatus.SERVER_ERROR.getCode(),
                            "usage could not be stored; reconnect and resend")));
                    return;
                }
                log.info("could not store {} usage reports (try {} of {}), trying again in {} ms: {}", batch.size(),
                        attempt, ATTEMPTS, pause, e.getMessage());
                Thread.sleep(pause);
                pause *= 2;
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).session().ackUsage(batch.get(i).report().sequence());
            metrics.usageAcked();
        }
    }
}
