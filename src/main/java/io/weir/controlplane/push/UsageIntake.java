package io.weir.controlplane.push;

import io.weir.controlplane.usage.UsageIngest;
import io.weir.protocol.UsageReport;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import org.springframework.web.socket.CloseStatus;

/**
 * Takes the agents' usage reports off the WebSocket threads, stores them in batches through the
 * usage feature's {@link UsageIngest#ingestPlaced}, and answers each with {@code usageAck}.
 *
 * <h2>How a report flows</h2>
 * <pre>
 *  container thread: AgentChannel ── offer(node, report) ──► that node's queue (at most {@value #NODE_CAPACITY}
 *                                                            reports and {@value #NODE_ROWS} rows; all nodes
 *                                                            together {@value #CAPACITY} and {@value #ROWS})
 *  weir-usage-intake: take one report of each node with reports waiting, in turn (round robin),
 *                     at most {@value #NODE_BATCH} of one node, until {@value #MAX_BATCH} reports
 *                     or {@value #MAX_BATCH_ROWS} rows
 *                     ─► ingestPlaced (one transaction)
 *                     ─► for each report: usageAck(sequence)   (stored, duplicate or expired)
 * </pre>
 * The acknowledgement follows the commit, so an acknowledged report is durable; a duplicate or an
 * expired report is acknowledged too, since resending it cannot change anything.
 *
 * <h2>Fairness: one node cannot take what the others share</h2>
 * Design choice: per-node queues with quotas, drained round robin. (Weir's own scheduler would
 * give one flow per node, but the control plane may not depend on {@code io.weir.scheduler}, and
 * the intake needs only two of its properties, both simple here.)
 * <ul>
 *   <li><b>Slots.</b> A node holds at most {@value #NODE_CAPACITY} waiting reports (above an
 *       agent's default buffer of 3,600) and {@value #NODE_ROWS} rows; the rows bound the heap,
 *       since a report may name 16,384 volumes. An honest agent's whole buffer, resent after a
 *       reconnect, fits while its reports average under 27 rows; a larger one is taken in a
 *       share at a time, one per reconnect. A report past that is refused, as is every later one of its
 *       connection, and the connection is closed with 1013 (try again later) once the reports it
 *       has waiting are stored and their acknowledgements sent: acknowledgements dropped with a
 *       closed connection would be lost, and the agent, which resends its unacknowledged reports oldest first,
 *       would send the same ones first after every reconnect and be refused at the same place
 *       for ever. So each reconnect moves a node's resend on by its share. When all nodes together
 *       hold {@value #CAPACITY} reports or {@value #ROWS} rows, a node holding less than its fair
 *       share (the bound divided by the nodes waiting) still gets its slot (past the bound by at
 *       most its report): the nodes holding the most give up their waiting reports and their
 *       connections are closed with 1013 at once. So a flooding node is closed, never an honest
 *       one because of it.</li>
 *   <li><b>Thread time.</b> Each batch takes one report of each waiting node in turn, and at
 *       most {@value #NODE_BATCH} of any one node, so of every batch a node gets at most its
 *       equal part, and a batch under way (what a newly arrived report waits for) holds little of
 *       a flooding node's. A report is at most {@code UsageReport.MAX_VOLUMES + MAX_TASKS} rows and a
 *       batch at most {@value #MAX_BATCH_ROWS} rows, so one batch's time is bounded too: a
 *       node's next report is stored within the next batch, however much another node sends.</li>
 * </ul>
 *
 * <h2>When a report cannot be stored</h2>
 * Nothing is acknowledged that is not stored. Two kinds of failure are told apart:
 * <ul>
 *   <li><b>A report the database refuses</b> (SQLSTATE class 22, a value it cannot hold, or 23,
 *       a constraint; the protocol's bounds make this a backstop): the batch is stored again
 *       report by report, so the others are stored and acknowledged; a report refused alone is
 *       set aside once: counted in {@code weir_push_usage_reports_unstorable_total}, logged at
 *       WARN without a stack trace, and answered with a {@code usageAck} that says it was
 *       refused, so that its agent forgets it instead of resending it for ever.</li>
 *   <li><b>The database failing</b> (restarting, unreachable): the batch is tried again after a
 *       pause, {@value #ATTEMPTS} times in all with pauses doubling from
 *       {@value #FIRST_PAUSE_MILLIS} ms, while new reports wait; a batch that still fails closes
 *       the connections of its reports with 1011, and each agent resends after reconnecting
 *       (the control plane deduplicates).</li>
 * </ul>
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

    /** Most reports of one node waiting to be stored. */
    static final int NODE_CAPACITY = 4_096;

    /**
     * Most rows (one per report, volume and task; a decoded row takes some 200 bytes of heap)
     * waiting to be stored, all nodes together: about 100 MB.
     */
    static final long ROWS = 500_000;

    /** Most rows of one node waiting to be stored: six reports of the most volumes a report may name. */
    static final long NODE_ROWS = 100_000;

    /** Most reports stored in one transaction. */
    static final int MAX_BATCH = 500;

    /**
     * Most reports of one node in one transaction: a batch under way is what a report arriving
     * from another node waits for, so a flooding node's part of it is kept short.
     */
    static final int NODE_BATCH = 50;

    /** Most rows (one per report, volume and task) stored in one transaction, past its first report. */
    static final int MAX_BATCH_ROWS = 50_000;

    /** Tries of one batch before its connections are closed (the agents resend). */
    static final int ATTEMPTS = 5;

    /** Pause after a batch's first failed try; doubled after each further one. */
    static final long FIRST_PAUSE_MILLIS = 500;

    /** How long the intake thread waits for a report before it checks whether to stop. */
    private static final long POLL_MILLIS = 500;

    /** The side of a connection the intake answers: an {@link AgentSession}. */
    interface Reporter {
        UUID nodeId();

        /** The report is stored (or was, or is too old). */
        void ackUsage(long sequence);

        /** The report is refused for good; the agent forgets it. */
        void refuseUsage(long sequence, String reason);

        /** Closes now, dropping what is queued to send. */
        void close(CloseStatus status);

        /** Closes once what is queued to send (the answers above all) is sent. */
        void closeAfterSending(CloseStatus status);
    }

    /** Where reports are stored: {@link UsageIngest#ingestPlaced}. */
    interface Store {
        List<UsageIngest.Outcome> store(List<UsageIngest.Delivery> deliveries);
    }

    record Pending(Reporter reporter, UsageReport report) {
        int rows() {
            return 1 + report.volumes().size() + report.tasks().size();
        }
    }

    private final Store store;
    private final PushMetrics metrics;

    /** Waiting reports of each node; a node is here only while it has some. Guarded by this. */
    private final Map<UUID, NodeQueue> queues = new HashMap<>();
    /** Nodes with waiting reports, in the order they get their next turn. Guarded by this. */
    private final ArrayDeque<UUID> turns = new ArrayDeque<>();
    /** Reports waiting, all nodes. Guarded by this. */
    private int waiting;
    /** Rows of the reports waiting, all nodes. Guarded by this. */
    private long waitingRows;
    /** Reports of each connection taken in and not yet answered (waiting or in the batch being stored). Guarded by this. */
    private final Map<Reporter, Integer> unanswered = new HashMap<>();
    /** Connections over their node's share, to be closed once their unanswered reports are answered. Guarded by this. */
    private final Set<Reporter> overflowing = new java.util.HashSet<>();

    /** One node's waiting reports and their rows. */
    private static final class NodeQueue extends ArrayDeque<Pending> {
        long rows;
    }

    private volatile boolean running;
    private Thread thread;

    @Autowired
    UsageIntake(UsageIngest ingest, PushMetrics metrics) {
        this(ingest::ingestPlaced, metrics);
    }

    UsageIntake(Store store, PushMetrics metrics) {
        this.store = store;
        this.metrics = metrics;
        metrics.usageQueue(this::waiting);
    }

    synchronized int waiting() {
        return waiting;
    }

    synchronized long waitingRows() {
        return waitingRows;
    }

    /**
     * Queues a report of {@code reporter}'s node for storing, within the node's share; past it,
     * refuses the report and closes the connection of the node over its share, or sheds the node
     * holding the most (see the class comment).
     */
    void offer(Reporter reporter, UsageReport report) {
        metrics.usageReceived();
        UUID node = reporter.nodeId();
        Pending pending = new Pending(reporter, report);
        List<Pending> shed = new ArrayList<>();
        boolean refused = false;
        boolean closeNow = false;
        synchronized (this) {
            NodeQueue own = queues.get(node);
            int held = own == null ? 0 : own.size();
            long heldRows = own == null ? 0 : own.rows;
            int rows = pending.rows();
            if (overflowing.contains(reporter) || held >= NODE_CAPACITY || heldRows + rows > NODE_ROWS) {
                refused = true;
            } else if (waiting >= CAPACITY || waitingRows >= ROWS) {
                int nodes = queues.size() + (own == null ? 1 : 0);
                if (held >= CAPACITY / nodes || heldRows >= ROWS / nodes) {
                    refused = true;
                } else {
                    // Whoever holds the most gives way (more than this node, which is within its share),
                    // until the bounds have room; the report may take them past by its own rows.
                    while (waiting >= CAPACITY || waitingRows >= ROWS) {
                        List<Pending> removed = shedLargest(node, waitingRows >= ROWS);
                        if (removed.isEmpty()) {
                            break;
                        }
                        shed.addAll(removed);
                    }
                }
            }
            if (refused) {
                // Closed once what it has waiting is answered: acknowledgements sent on a closed
                // connection are lost, and its agent would resend the same reports first for ever.
                closeNow = unanswered.getOrDefault(reporter, 0) == 0;
                if (!closeNow && !overflowing.add(reporter)) {
                    metrics.usageRefused(); // refused before: dropped quietly until it is closed
                    return;
                }
            } else {
                if (own == null) {
                    own = new NodeQueue();
                    queues.put(node, own);
                    turns.add(node);
                }
                own.add(pending);
                own.rows += rows;
                waiting++;
                waitingRows += rows;
                unanswered.merge(reporter, 1, Integer::sum);
                notifyAll();
            }
        }
        if (refused) {
            metrics.usageRefused();
            log.warn("usage intake: node {} has more reports waiting than its share; its connection is closed{} so that "
                    + "it resends later", node, closeNow ? "" : " once they are stored and acknowledged");
            if (closeNow) {
                reporter.close(overload());
            }
        }
        if (!shed.isEmpty()) {
            Set<Reporter> reporters = new LinkedHashSet<>();
            shed.forEach(p -> reporters.add(p.reporter()));
            for (int i = 0; i < shed.size(); i++) {
                metrics.usageRefused();
            }
            log.warn("usage intake full ({} reports, {} rows at most); {} waiting reports of the nodes holding the most "
                    + "are dropped unacknowledged and their connections closed so that they resend later", CAPACITY, ROWS,
                    shed.size());
            reporters.forEach(r -> r.close(overload()));
        }
    }

    private static CloseStatus overload() {
        return new CloseStatus(CloseStatus.SERVICE_OVERLOAD.getCode(), "usage intake full; reconnect and resend");
    }

    /**
     * Removes the waiting reports of the node that holds the most rows ({@code byRows}) or
     * reports, unless that is {@code node}; returns them (empty if none is removed). Requires:
     * holding this.
     */
    private List<Pending> shedLargest(UUID node, boolean byRows) {
        UUID largest = null;
        long most = -1;
        for (Map.Entry<UUID, NodeQueue> e : queues.entrySet()) {
            long size = byRows ? e.getValue().rows : e.getValue().size();
            if (size > most) {
                most = size;
                largest = e.getKey();
            }
        }
        if (largest == null || largest.equals(node)) {
            return List.of();
        }
        NodeQueue removed = queues.remove(largest);
        turns.remove(largest);
        waiting -= removed.size();
        waitingRows -= removed.rows;
        for (Pending p : removed) {
            answered(p.reporter());
            overflowing.remove(p.reporter()); // closed now
        }
        return List.copyOf(removed);
    }

    /** One report of {@code reporter} is answered (or dropped); returns whether it is now to be closed. Requires: holding this. */
    private boolean answered(Reporter reporter) {
        Integer left = unanswered.computeIfPresent(reporter, (r, n) -> n == 1 ? null : n - 1);
        return left == null && overflowing.remove(reporter);
    }

    /**
     * Takes the next batch: one report of each waiting node in turn, until {@value #MAX_BATCH}
     * reports or {@value #MAX_BATCH_ROWS} rows; waits up to {@code waitMillis} for the first.
     */
    synchronized List<Pending> nextBatch(long waitMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        while (waiting == 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return List.of();
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        List<Pending> batch = new ArrayList<>();
        Map<UUID, Integer> taken = new HashMap<>();
        int rows = 0;
        // One lap of the turns per report taken; a node that has had NODE_BATCH this batch waits for the next.
        int skipped = 0;
        while (!turns.isEmpty() && batch.size() < MAX_BATCH && skipped < turns.size()) {
            UUID node = turns.poll();
            NodeQueue q = queues.get(node);
            if (taken.getOrDefault(node, 0) >= NODE_BATCH) {
                turns.add(node);
                skipped++;
                continue;
            }
            Pending next = q.peek();
            if (!batch.isEmpty() && rows + next.rows() > MAX_BATCH_ROWS) {
                turns.addFirst(node);
                break;
            }
            skipped = 0;
            q.poll();
            waiting--;
            q.rows -= next.rows();
            waitingRows -= next.rows();
            batch.add(next);
            taken.merge(node, 1, Integer::sum);
            rows += next.rows();
            if (q.isEmpty()) {
                queues.remove(node);
            } else {
                turns.add(node);
            }
        }
        return batch;
    }

    @Override
    public synchronized void start() {
        running = true;
        thread = new Thread(this::run, "weir-usage-intake");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void stop() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (t != null) {
            try {
                t.join(5_000);
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
        while (running) {
            try {
                List<Pending> batch = nextBatch(POLL_MILLIS);
                if (!batch.isEmpty()) {
                    store(batch);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.error("usage intake: unexpected failure; going on", e);
            }
        }
    }

    /** Stores one batch and answers its reports; see the class comment for failures. */
    void store(List<Pending> batch) throws InterruptedException {
        try {
            storeAndAnswer(batch);
        } finally {
            List<Reporter> drained = new ArrayList<>();
            synchronized (this) {
                for (Pending p : batch) {
                    if (answered(p.reporter())) {
                        drained.add(p.reporter());
                    }
                }
            }
            drained.forEach(r -> r.closeAfterSending(overload())); // its answers are sent first
        }
    }

    private void storeAndAnswer(List<Pending> batch) throws InterruptedException {
        long pause = FIRST_PAUSE_MILLIS;
        for (int attempt = 1; ; attempt++) {
            try {
                store.store(deliveries(batch));
                break;
            } catch (RuntimeException e) {
                if (refusedData(e)) {
                    if (batch.size() == 1) {
                        setAside(batch.get(0), e);
                    } else {
                        log.info("usage intake: the database refused a value in a batch of {} reports; storing them one "
                                + "by one", batch.size());
                        for (Pending p : batch) {
                            storeAndAnswer(List.of(p));
                        }
                    }
                    return;
                }
                if (attempt == ATTEMPTS || !running) {
                    log.warn("could not store {} usage reports; closing their connections so that the agents resend: {}",
                            batch.size(), e.getMessage());
                    Set<Reporter> reporters = new LinkedHashSet<>();
                    batch.forEach(p -> reporters.add(p.reporter()));
                    synchronized (this) {
                        overflowing.removeAll(reporters); // closed here
                    }
                    reporters.forEach(r -> r.close(new CloseStatus(CloseStatus.SERVER_ERROR.getCode(),
                            "usage could not be stored; reconnect and resend")));
                    return;
                }
                log.info("could not store {} usage reports (try {} of {}), trying again in {} ms: {}", batch.size(),
                        attempt, ATTEMPTS, pause, e.getMessage());
                Thread.sleep(pause);
                pause *= 2;
            }
        }
        for (Pending p : batch) {
            try {
                p.reporter().ackUsage(p.report().sequence());
                metrics.usageAcked();
            } catch (RuntimeException e) { // that session's trouble: the other nodes' reports are acknowledged still
                log.warn("usage report {} of node {} stored but not acknowledged: {}", p.report().sequence(),
                        p.reporter().nodeId(), e.toString());
            }
        }
    }

    private void setAside(Pending p, RuntimeException e) {
        metrics.usageUnstorable();
        String state = sqlState(e);
        log.warn("usage report {} of node {} could not be stored (the database refused a value{}); set aside and "
                + "answered as refused", p.report().sequence(), p.reporter().nodeId(),
                state == null ? "" : ", SQLSTATE " + state);
        p.reporter().refuseUsage(p.report().sequence(), "the report could not be stored (the database refused one of "
                + "its values" + (state == null ? "" : ", SQLSTATE " + state) + "); it is not stored and need not be resent");
    }

    private static List<UsageIngest.Delivery> deliveries(List<Pending> batch) {
        List<UsageIngest.Delivery> deliveries = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            deliveries.add(new UsageIngest.Delivery(p.reporter().nodeId(), p.report()));
        }
        return deliveries;
    }

    /** Whether the database refused a value (SQLSTATE class 22 or 23) rather than failed. */
    static boolean refusedData(Throwable e) {
        String state = sqlState(e);
        return state != null && (state.startsWith("22") || state.startsWith("23"));
    }

    private static String sqlState(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return null;
    }
}
