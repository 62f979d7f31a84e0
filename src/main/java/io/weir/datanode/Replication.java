package io.weir.datanode;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.VolumeConfig;
import io.weir.scheduler.IoKind;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig.TaskSpec;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The node's part in replicated volumes: its {@link ReplicationServer} (the copies it holds for
 * other primaries), its {@link ReplicaLink}s (to the copies of the volumes it is the primary of),
 * one {@link ReplicatedVolume} per replicated volume, and a driver thread that keeps the links up,
 * announces epochs, feeds resync steps to the scheduler's {@code replication} task and sends the
 * client writes held back until a step over their region landed
 * ({@link ForwardedRequests#releaseHeldForwards}; at most a tick, {@value #TICK_MILLIS} ms, after it).
 *
 * <h2>The copy's side</h2>
 * A request from a primary is checked against the volume's epoch ({@link ReplicatedVolume#admit})
 * and then run by the scheduler as the volume's foreground flow, like the client request it
 * repeats, so the copy's node enforces the same weights and limits; it is answered once applied.
 * Its kind is {@link IoKind#REPLICA}: charged as a write, but counted apart from the client's
 * reads and writes (which the primary counts), so the volume's usage summed over its nodes is
 * its clients' view.
 * A WRITE, or a WRITE_ZEROES with NO_HOLE, of more than {@link NbdRequest#PIECE_BYTES} runs as
 * pieces, as the primary ran it ({@link Pieces}).
 *
 * <h2>The resync</h2>
 * Each resyncing copy has at most {@value #STEPS_PER_COPY} steps queued or on their way, each
 * submitted to the {@code replication} background task: it reads up to 1 MiB of dirty regions and
 * sends them (regions of zeroes as a write-zeroes that punches). A copy with nothing left to
 * copy is sent a FLUSH and joins the in-sync set once that is answered
 * ({@link CopyResync#joinIfCopied}): what the steps carried is then durable there, as it
 * was on the primary. The task's utilization, which a
 * dynamic share turns into urgency (its T1/T2 ramp), is how long the volume that has been
 * under-replicated longest has been so, over {@link #URGENCY_RAMP_NANOS}.
 *
 * <h2>Forcing the copies</h2>
 * A copy that fails is copied again where it answered writes since the last FLUSH it answered
 * (a power loss there may have taken them). Clients that never flush would leave that to grow to
 * everything they ever wrote, so the driver sends a copy a FLUSH of its own once the oldest write
 * it holds unforced is {@link #FLUSH_EVERY} old ({@link CopyResync#flushIfDue}),
 * as ext4 commits its journal every 5 s: a failure then costs a copy at most that much of its
 * writes again. A client that flushes more often is never joined by one.
 */
final class Replication implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Replication.class.getName());

    /** The scheduler task resync steps run under. */
    static final String TASK = "replication";
    /** Resync steps of one copy queued or on their way at once. */
    static final int STEPS_PER_COPY = 2;
    /** Driver period. */
    static final long TICK_MILLIS = 10;
    /** Longest a copy holds a write unforced before its primary sends it a FLUSH of its own. */
    static final Duration FLUSH_EVERY = Duration.ofSeconds(5);
    /** Period of the watchdog that takes down links to copies that stopped answering. */
    static final long WATCHDOG_MILLIS = 100;
    /** Least time between two epoch announcements to one copy. */
    static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** Under-replicated this long, the replication task's utilization reaches 1. */
    static final long URGENCY_RAMP_NANOS = TimeUnit.MINUTES.toNanos(5);

    private final QosExecutor executor;
    private final ReplicationTls tls;
    private final ReplicationServer server;
    /** The primaries' requests this node holds as a copy, read and not yet answered, and their WRITE payloads. */
    private final ReceiveBudget received;
    private volatile Map<UUID, ReplicatedVolume> volumes = Map.of();
    /** Links by peer node; the driver's, and forwarding workers' through {@link #link}. */
    private final Map<UUID, ReplicaLink> links = new ConcurrentHashMap<>();
    /** This node, as the config applied last names it: what its links' hellos say. */
    private volatile UUID self;
    /**
     * Whether the executor has the {@value #TASK} task, as of the config applied last: read from
     * the executor when it is built and at each {@link #configure}, not by the driver every tick.
     */
    private volatile boolean hasTask;
    private final Thread driver;
    /** No control plane: every config is the truth ({@link DataNode.Builder#configFileOnly}). */
    private final boolean configFileOnly;
    /** Takes down links whose copy stopped answering ({@link ReplicaLink#expire}) and closes connections that never greeted; its own thread, since a hung copy can block a writer. */
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "weir-replication-watchdog");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean running = true;
    /** {@link #FLUSH_EVERY}, shorter in tests. */
    private volatile long flushEveryNanos = FLUSH_EVERY.toNanos();

    Replication(QosExecutor executor, NbdTls nbdTls, InetSocketAddress listen, boolean configFileOnly, long receiveBudget)
            throws IOException {
        this.configFileOnly = configFileOnly;
        this.executor = executor;
        this.hasTask = hasTask(executor);
        this.tls = new ReplicationTls(nbdTls);
        this.received = new ReceiveBudget(receiveBudget, ReceiveBudget.DEFAULT_REQUESTS);
        this.server = listen == null ? null : new ReplicationServer(listen, this, tls, received);
        this.driver = new Thread(this::drive, "weir-replication");
        driver.setDaemon(true);
        driver.start();
        watchdog.scheduleWithFixedDelay(this::expire, WATCHDOG_MILLIS, WATCHDOG_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** host:port of the replication listener for peers to reach, or null without one. */
    String address() {
        if (server == null) {
            return null;
        }
        InetSocketAddress a = server.address();
        String host = a.getAddress().isAnyLocalAddress() ? localHost() : a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    private static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            return "127.0.0.1";
        }
    }

    /**
     * Checks that this node can take {@code config}'s replicated volumes: it needs a listener to
     * hold copies for other primaries, and the config must name the node (its copies learn from
     * its hello who sends).
     */
    void check(DesiredConfig config) {
        if (config.volumes().stream().noneMatch(v -> v.replication() != null)) {
            return;
        }
        if (server == null) {
            throw new IllegalArgumentException("the config has replicated volumes and this node has no replication"
                    + " listener (datanode --replication-listen)");
        }
        if (config.nodeId() == null) {
            throw new IllegalArgumentException("the config has replicated volumes and names no node (nodeId)");
        }
    }

    /**
     * Takes the replicated volumes of an applied config; {@code stores} holds every volume's
     * storage by id. Volumes no longer replicated here stop (their waiting requests fail). Called
     * for every config the node applies, once the executor runs it (the node or its agent
     * reconfigured the executor first), so it also notes whether the executor now has the
     * {@value #TASK} task.
     */
    synchronized void configure(DesiredConfig config, Map<String, VolumeStore> stores) {
        hasTask = hasTask(executor);
        self = config.nodeId();
        Map<UUID, ReplicatedVolume> next = new HashMap<>();
        List<Runnable> answers = new ArrayList<>();
        for (VolumeConfig vc : config.volumes()) {
            if (vc.replication() == null) {
                continue;
            }
            VolumeStore store = stores.get(vc.id().toString());
            ReplicatedVolume rv = volumes.get(vc.id());
            if (rv == null || rv.store != store) {
                rv = new ReplicatedVolume(vc.id(), config.nodeId(), store, this::link, this::changed, configFileOnly);
            }
            answers.addAll(rv.configure(vc.replication()));
            store.replication = rv;
            next.put(vc.id(), rv);
        }
        for (ReplicatedVolume old : volumes.values()) {
            if (next.get(old.id) != old) {
                answers.addAll(old.close());
                if (old.store.replication == old) {
                    old.store.replication = null;
                }
            }
        }
        volumes = Map.copyOf(next);
        if (!next.isEmpty()) {
            LockSupport.unpark(driver);
        }
        answers.forEach(Runnable::run);
    }

    private static boolean hasTask(QosExecutor executor) {
        return executor.config().tasks().stream().map(TaskSpec::name).anyMatch(TASK::equals);
    }

    /** The link to {@code c}'s node at its address, made (down) if new; null without an address. */
    private ReplicaLink link(ReplicaCopy c) {
        String address = c.address();
        if (address == null) {
            return null;
        }
        ReplicaLink l = links.get(c.node);
        if (l != null && l.address.equals(address)) {
            return l;
        }
        ReplicaLink[] replaced = new ReplicaLink[1];
        l = links.compute(c.node, (node, old) -> {
            if (old != null && old.address.equals(address)) {
                return old;
            }
            replaced[0] = old;
            return new ReplicaLink(self, node, address, tls);
        });
        if (replaced[0] != null) {
            replaced[0].close(); // the node moved: its requests on the old address fail and are retried as a resync
        }
        return l;
    }

    /** Tests: the id of the current connection of this node's link to {@code node}, 0 if it has none. */
    long linkConnection(UUID node) {
        ReplicaLink l = links.get(node);
        return l == null || !l.isUp() ? 0 : l.connection();
    }

    /** Tests: connections of primaries to this node's {@link ReplicationServer} that ended. */
    long connectionsEnded() {
        return server == null ? 0 : server.connectionsEnded();
    }

    /**
     * A primary's request arrived from node {@code sender} (its certificate's, over TLS), on
     * {@link ReplicationServer}'s thread. A node this node's config does not name for the volume
     * gets {@link ReplicationWire#NOT_A_COPY}, as for a volume this node does not hold.
     */
    void receive(UUID sender, ReplicationWire.Request q, ByteBuffer data, ReplicationServer.Replier r) {
        ReplicatedVolume rv = volumes.get(q.volume());
        if (rv == null) {
            answer(q, r, ReplicationWire.NOT_A_COPY, 0);
            return;
        }
        int verdict = rv.admit(sender, q.epoch());
        if (verdict != ReplicationWire.OK) {
            answer(q, r, verdict, rv.epoch());
            return;
        }
        if (q.type() == ReplicationWire.PING) {
            answer(q, r, pinged(rv, q), rv.epoch());
            return;
        }
        if ((q.flags() & ReplicationWire.FLAG_TOKENED) != 0 && rv.store.copyToken() == 0) {
            // rule 8: a file made since the primary gave this copy its token, holding nothing it sent before
            answer(q, r, ReplicationWire.NEW_COPY, rv.epoch());
            return;
        }
        VolumeStore v = rv.store;
        long cost = q.type() == ReplicationWire.WRITE || q.type() == ReplicationWire.ZEROES && q.noHole() ? q.length() : 0;
        try {
            if (cost > NbdRequest.PIECE_BYTES) {
                new Pieces(rv, q, data, r).submit(true);
                return;
            }
            executor.submit(v.id, IoKind.REPLICA, cost, new Whole(rv, q, data, r))
                    .whenComplete((applied, failure) -> {
                        if (failure != null) {
                            LOG.log(Level.WARNING, "applying a replicated request to volume {0}: {1}", v.id, failure.toString());
                        }
                        answer(q, r, failure == null ? applied : ReplicationWire.IO_ERROR, rv.epoch());
                    });
        } catch (RuntimeException e) { // not submitted (the first piece, if in pieces)
            answer(q, r, ReplicationWire.IO_ERROR, rv.epoch());
        }
    }

    /**
     * A PING of an admitted primary: keeps the token it gives this copy's data file, or checks the
     * one it expects (rule 8 of {@link ReplicatedVolume}).
     */
    private static int pinged(ReplicatedVolume rv, ReplicationWire.Request q) {
        long token = q.offset();
        if ((q.flags() & ReplicationWire.FLAG_ADOPT) != 0 && token != 0) {
            try {
                rv.store.adoptToken(token);
                return ReplicationWire.ADOPTED;
            } catch (IOException e) {
                LOG.log(Level.WARNING, "volume {0}: cannot keep the copy token its primary gave: {1}", rv.id, e.toString());
                return ReplicationWire.IO_ERROR;
            }
        }
        return token != 0 && token != rv.store.copyToken() ? ReplicationWire.NEW_COPY : ReplicationWire.OK;
    }

    /**
     * Answers {@code q}, applied or refused, with {@code status}: it leaves the receive budget
     * first (the reply may wait for its primary to read).
     */
    private void answer(ReplicationWire.Request q, ReplicationServer.Replier r, int status, long epoch) {
        received.give(q.volume(), q.payload());
        r.reply(status, q.handle(), epoch);
    }

    /** Tests: the connections waiting for room in the receive budget ({@link ReceiveBudget}). */
    int receiveWaiting() {
        return received.waiting();
    }

    /** Tests: the bytes of WRITE payloads this node holds as a copy, read and not yet applied. */
    long receiveHeld() {
        return received.held();
    }

    /** Tests: the primaries' requests this node holds as a copy, read and not yet answered. */
    int receiveRequests() {
        return received.requests();
    }

    /**
     * A primary's request applied whole, on a worker. A WRITE without FUA is
     * {@linkplain ReplyBatch.Work#quick quick}, as a client's would be: its reply, and those
     * before it in the worker's batch, may wait for the batch's next requests and go out with
     * theirs in one write ({@link ReplyBatch}). It runs in a moment but while a change of epoch
     * waits for the copy's lock (rare): the replies held before it then wait too.
     */
    private final class Whole implements java.util.concurrent.Callable<Integer>, ReplyBatch.Work {
        private final ReplicatedVolume rv;
        private final ReplicationWire.Request q;
        private final ByteBuffer data;
        private final ReplicationServer.Replier r;

        Whole(ReplicatedVolume rv, ReplicationWire.Request q, ByteBuffer data, ReplicationServer.Replier r) {
            this.rv = rv;
            this.q = q;
            this.data = data;
            this.r = r;
        }

        @Override
        public Integer call() throws IOException {
            // a request of a superseded connection, not yet applied, is dropped: its primary gave up on it
            return r.superseded() ? ReplicationWire.LINK_DOWN : rv.applyIfAdmitted(q.epoch(), () -> apply(rv.store, q, data));
        }

        @Override
        public boolean quick() {
            return q.type() == ReplicationWire.WRITE && !q.fua();
        }
    }

    /**
     * A primary's WRITE or WRITE_ZEROES with NO_HOLE of more than {@link NbdRequest#PIECE_BYTES},
     * applied as pieces split where the primary split it ({@link QosExecutor#submitPiece}): a
     * worker, and the copy's epoch lock ({@link ReplicatedVolume#applyIfAdmitted}), are held for a
     * piece at a time, not for up to 4 GiB, so other volumes' requests run in between and a
     * promotion waits for one piece. The volume counts it once. Each piece is applied only while
     * its primary is still admitted, its connection has not ended and the volume is still
     * replicated here; FUA with the last. The first refused or failed piece ends the request with
     * that answer, and its primary acknowledges nothing of it: a write partly applied on a copy
     * is one of the unacknowledged writes that rules 5 and 6 of {@link ReplicatedVolume} already
     * make the copies agree on.
     */
    private final class Pieces implements java.util.concurrent.Callable<Integer> {
        private final ReplicatedVolume rv;
        private final ReplicationWire.Request q;
        private final ByteBuffer data;
        private final ReplicationServer.Replier r;
        /** Bytes applied so far, and those of the piece submitted (one piece at a time). */
        private long done;
        private long piece;

        Pieces(ReplicatedVolume rv, ReplicationWire.Request q, ByteBuffer data, ReplicationServer.Replier r) {
            this.rv = rv;
            this.q = q;
            this.data = data;
            this.r = r;
        }

        void submit(boolean first) {
            long at = q.offset() + done;
            piece = NbdRequest.pieceBytes(at, q.offset() + q.length());
            executor.submitPiece(rv.store.id, IoKind.REPLICA, piece, first, last(), this).whenComplete(this::ran);
        }

        private boolean last() {
            return done + piece >= q.length();
        }

        @Override
        public Integer call() throws IOException {
            if (r.superseded()) {
                return ReplicationWire.LINK_DOWN;
            }
            long at = q.offset() + done;
            boolean fua = q.fua() && last();
            return rv.applyIfAdmitted(q.epoch(), () -> {
                if (q.type() == ReplicationWire.WRITE) {
                    rv.store.write(at, data.duplicate().limit((int) (done + piece)).position((int) done), fua);
                } else {
                    rv.store.writeZeroes(at, piece, true, fua);
                }
            });
        }

        /** A worker, once a piece ran: the next piece, or the answer. */
        private void ran(Integer status, Throwable failure) {
            if (failure == null && status == ReplicationWire.OK && !last()) {
                done += piece;
                try {
                    submit(false);
                    return;
                } catch (RuntimeException e) {
                    failure = e; // the volume went, or the node is stopping
                }
            }
            if (failure != null) {
                LOG.log(Level.WARNING, "applying a replicated request to volume {0}: {1}", rv.store.id, failure.toString());
            }
            answer(q, r, failure == null ? status : ReplicationWire.IO_ERROR, rv.epoch());
        }
    }

    private static void apply(VolumeStore v, ReplicationWire.Request q, ByteBuffer data) throws IOException {
        switch (q.type()) {
            case ReplicationWire.WRITE -> v.write(q.offset(), data, q.fua());
            case ReplicationWire.ZEROES -> v.writeZeroes(q.offset(), q.length(), q.noHole(), q.fua());
            case ReplicationWire.TRIM -> {
                v.trim(q.offset(), q.length());
                if (q.fua()) {
                    v.flush();
                }
            }
            case ReplicationWire.FLUSH -> v.flush();
            default -> throw new IOException("unknown replication request " + q.type());
        }
    }

    /** Whether a volume this node is the serving primary of waits for the echo of its report. */
    boolean awaitingEcho() {
        for (ReplicatedVolume rv : volumes.values()) {
            if (rv.awaitingEcho()) {
                return true;
            }
        }
        return false;
    }

    /** For the node status: the copies of every volume this node is the serving primary of. */
    List<AgentMessage.ReplicationStatus> status() {
        List<AgentMessage.ReplicationStatus> l = new ArrayList<>();
        for (ReplicatedVolume rv : volumes.values()) {
            AgentMessage.ReplicationStatus s = rv.status();
            if (s != null) {
                l.add(s);
            }
        }
        return l;
    }

    private final Object signal = new Object();
    private long changes;

    private void changed() {
        synchronized (signal) {
            changes++;
            signal.notifyAll();
        }
    }

    /**
     * Waits until a replicated volume's in-sync set changed, or a primary was fenced, since change
     * {@code seen} was counted, or {@code nanos} passed; returns the count of changes.
     */
    long awaitChange(long seen, long nanos) throws InterruptedException {
        long until = System.nanoTime() + nanos;
        synchronized (signal) {
            long left;
            while (changes == seen && (left = until - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(signal, left);
            }
            return changes;
        }
    }

    ReplicatedVolume volume(UUID id) {
        return volumes.get(id);
    }

    /**
     * The watchdog: takes down links to copies that stopped answering, and closes accepted
     * connections that never greeted; a failure never stops it (a scheduled task that throws is
     * not run again).
     */
    private void expire() {
        for (ReplicaLink l : links.values()) {
            try {
                l.expire(System.nanoTime());
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "replication watchdog: " + e);
            }
        }
        if (server != null) {
            try {
                server.expire(System.nanoTime());
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "replication watchdog: " + e);
            }
        }
    }

    /**
     * Ticks every {@link #TICK_MILLIS} ms while the node has replicated volumes; without any, it
     * waits for {@link #configure} to give it some (a node of unreplicated volumes, the most
     * common, was woken a hundred times a second for nothing).
     */
    private void drive() {
        while (running) {
            try {
                tick();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "replication driver: " + e);
            }
            if (volumes.isEmpty()) {
                LockSupport.park(this); // configure unparks it (a permit given first makes this return at once)
                if (Thread.interrupted()) {
                    return;
                }
                continue;
            }
            try {
                Thread.sleep(TICK_MILLIS); // the driver's period
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void tick() {
        long now = System.nanoTime();
        long longest = 0;
        boolean hasTask = this.hasTask;
        for (ReplicatedVolume rv : volumes.values()) {
            rv.forwarded.releaseHeldForwards(); // the client writes whose steps landed go out before new steps are taken
            longest = Math.max(longest, rv.resync.underReplicatedNanos(now));
            for (ReplicaCopy c : rv.resync.copiesToReach()) {
                ReplicaLink link = link(c);
                if (link != null && !link.isUp()) {
                    link.connect();
                }
                if (link == null || !link.isUp()) {
                    rv.resync.unreachable(c);
                    continue;
                }
                if (rv.resync.announceDue(c, link, now)) {
                    rv.resync.announce(c, link);
                }
                ReplicaCopy.Step step;
                while (rv.resync.steps(c) < STEPS_PER_COPY && (step = rv.resync.nextStep(c, now)) != null) {
                    ReplicaCopy.Step s = step;
                    if (hasTask) {
                        try {
                            java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
                            executor.submitBackground(TASK, () -> {
                                ran.set(true);
                                copy(rv, s, link);
                                return null;
                            }).whenComplete((done, failure) -> {
                                if (failure != null && !ran.get()) { // failed unrun (the task went): its regions are dirty again
                                    rv.resync.stepNotSent(s);
                                }
                            });
                        } catch (RuntimeException e) { // the task's queue is full, or the task gone
                            rv.resync.stepNotSent(s);
                        }
                    } else {
                        copy(rv, s, link); // a node configured without the task: copies on this thread
                    }
                }
                rv.resync.joinIfCopied(c, link);
                rv.resync.flushIfDue(c, link, now, flushEveryNanos);
            }
        }
        if (hasTask) {
            executor.setUtilization(TASK, Math.min(1.0, (double) longest / URGENCY_RAMP_NANOS));
        }
    }

    /** Tests: how long a peer's connection may take to greet ({@link ReplicationServer#GREETING_TIMEOUT}). */
    void greetingTimeout(Duration timeout) {
        server.greetingTimeout(timeout);
    }

    /** Tests: writes of replies to primaries this node's {@link ReplicationServer} made. */
    long replyWrites() {
        return server.replyWrites();
    }

    /** Tests: writes of requests to copies this node's links made ({@link ReplicaLink#writes}). */
    long forwardWrites() {
        return links.values().stream().mapToLong(ReplicaLink::writes).sum();
    }

    /** Tests: sending nodes whose connections this node's {@link ReplicationServer} keeps. */
    int sendingNodes() {
        return server.sendingNodes();
    }

    /** Tests: accepted connections that have not greeted yet. */
    int connectionsGreeting() {
        return server.greeting();
    }

    /** Tests: how old a write a copy holds unforced may grow before its primary flushes it. */
    void flushEvery(Duration every) {
        flushEveryNanos = every.toNanos();
    }

    /** Tests: whether a primary's new connection waits for the requests of the one it superseded. */
    boolean waitingForAnOlderConnection() {
        return server != null && server.waitingForOlder();
    }

    /** Whether the driver waits for a replicated volume (for tests). */
    boolean driverWaiting() {
        return driver.getState() == Thread.State.WAITING;
    }

    /** One resync step: reads the regions and sends them to the copy. */
    private static void copy(ReplicatedVolume rv, ReplicaCopy.Step s, ReplicaLink link) {
        ByteBuffer b;
        boolean zeroes = true;
        try {
            b = ByteBuffer.allocate(s.length());
            rv.store.read(s.offset(), b);
            b.flip();
            int i = 0;
            for (; i + 8 <= b.limit() && zeroes; i += 8) {
                zeroes = b.getLong(i) == 0;
            }
            for (; i < b.limit() && zeroes; i++) { // the volume's last step may end inside a word
                zeroes = b.get(i) == 0;
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "volume " + rv.id + ": reading a resync step for the copy on node " + s.copy().node
                    + " failed here; tried again in " + TimeUnit.NANOSECONDS.toMillis(RETRY_NANOS) + " ms: " + e);
            rv.resync.stepNotSent(s); // its regions are dirty again, and no client write waits for it
            return;
        } catch (OutOfMemoryError e) {
            rv.resync.stepNotSent(s);
            throw e;
        }
        try {
            link.send(zeroes ? ReplicationWire.ZEROES : ReplicationWire.WRITE, s.copy().flags((byte) 0), rv.id, s.epoch(), s.offset(),
                    s.length(), zeroes ? null : b, (status, epoch) -> rv.resync.stepDone(s, status, epoch));
        } catch (RuntimeException e) {
            rv.resync.stepDone(s, ReplicationWire.IO_ERROR, 0);
        }
    }

    @Override
    public void close() {
        running = false;
        driver.interrupt();
        watchdog.shutdownNow();
        if (server != null) {
            server.close();
        }
        for (ReplicaLink l : links.values()) {
            l.close();
        }
        List<Runnable> answers = new ArrayList<>();
        for (ReplicatedVolume rv : volumes.values()) {
            answers.addAll(rv.close());
        }
        answers.forEach(Runnable::run);
    }
}
