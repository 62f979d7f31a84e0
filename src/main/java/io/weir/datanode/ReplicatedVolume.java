package io.weir.datanode;

import io.weir.datanode.ReplicaCopy.State;
import io.weir.datanode.ReplicaCopy.Step;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.ReplicationConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntConsumer;

/**
 * One replicated volume on this node: the copy's epoch, and on the primary the state of every
 * other copy, the forwarding of client writes to them and their resync.
 *
 * <h2>Rules (the primary)</h2>
 * <ol>
 *   <li>Every write, trim, write-zeroes and flush, once done locally, is sent to each copy that is
 *       in sync or resyncing, and the client is answered when every one of them has answered.</li>
 *   <li>A copy that fails a request (its link is down, it has no copy, its disk failed) leaves the
 *       in-sync set: the sync sequence rises and the regions of the request are marked dirty for
 *       it. The request, and every request sent after, is answered only once a config echoes that
 *       sequence ({@link ReplicationConfig}): until the control plane knows, it could promote the
 *       copy that lacks the write.</li>
 *   <li>A copy that answers {@link ReplicationWire#STALE_EPOCH} (or any peer that sends a higher
 *       epoch) <em>fences</em> this node: it stops serving the volume; requests in flight and
 *       after are answered {@code ESHUTDOWN}. Only a config of a higher epoch lifts it.</li>
 *   <li>Each copy out of sync has a dirty map of {@value ReplicaCopy#REGION_BYTES}-byte regions: those of
 *       the requests it failed, those it had answered writes to (not FUA) since the last FLUSH it
 *       answered (what it had not forced may be lost: its node lost power), and all of them when
 *       it answered a FLUSH with an error (its disk failed the fsync). When its link
 *       is up it resyncs: new writes are sent to it, and the replication task copies the dirty
 *       regions ({@link #nextStep}). Such a step read its regions before the client writes that
 *       come while it is on its way, and may land after them (sent later, or applied beside them
 *       by the copy's second worker). A client write into a region on its way to a resyncing copy
 *       marks it dirty again, so that the copy gets it again before it joins. To a copy in sync
 *       (copied again whole, rules 5 and 6), whose copy of every acknowledged write must hold, the
 *       write is held back, and the copy's later writes behind it, until the steps over its range
 *       then on their way are answered; the driver then sends it ({@link #releaseHeldForwards}),
 *       and the client is answered once the copy answers it, as usual. With no region dirty
 *       or on its way, the copy is sent a FLUSH (the resync's steps are not forced, and what they
 *       carried may have been flushed by clients here), and joins the in-sync set once that is
 *       answered OK with still nothing dirty or on its way and no step sent since (the sequence
 *       rises; no wait is needed to be stricter).</li>
 *   <li>On promotion (a config of a higher epoch naming this node primary), copies the config
 *       says are out of sync are wholly dirty: what they miss is not known here. Copies it says
 *       are in sync are copied again whole, as in rule 6, and stay in sync meanwhile: the old
 *       primary's last writes (never acknowledged) may have reached some copies and not others,
 *       and the copies must not differ.</li>
 *   <li>A primary whose files come from an earlier run of its node (it stopped or crashed, and no
 *       copy was promoted meanwhile) may hold writes that were in flight when it stopped and that
 *       its copies never got (never acknowledged, so allowed to be lost, but the copies must not
 *       differ). It copies the whole volume again to the copies in sync, which stay in sync
 *       meanwhile (every write they lack was unacknowledged), so that they converge, once it is
 *       confirmed (rule 7; before, a copy not yet told of a promotion would take old data). Which
 *       copies are in sync, its sequence, and which copies the control plane may hold in sync (any
 *       reported in sync since it last echoed this node's set) it takes from its
 *       {@link SyncState}, kept at every new epoch and before every report of a change (a change
 *       not kept is not reported): the config it kept may predate its last reports, which the
 *       control plane may have taken without the echo reaching this node. With a copy it may hold
 *       in sync out of sync here, it acknowledges no write until the control plane has echoed its
 *       report. With that state unreadable or at odds with the config, it raises the sequence
 *       past the config's, takes every copy as perhaps held in sync and none as in sync here
 *       (each is copied whole, and rejoins); with none at all
 *       (files from before this version, or made by hand for the config-file mode), it goes by
 *       the config.</li>
 *   <li>Such a primary also serves no client until it is sure it still is the primary (it holds
 *       their requests, {@link #holdUntilConfirmed}, and starts them once that is decided): its config
 *       may be the one it kept before it stopped, and a copy may have been promoted meanwhile (only
 *       a copy in sync can be). Every copy in sync at its start answering its epoch's PING with OK
 *       confirms it: none of them was promoted (one promoted, or told of a promotion, answers
 *       {@link ReplicationWire#STALE_EPOCH} and deposes it); one of several does not. An in-sync
 *       copy it cannot reach leaves the in-sync set (rule 2), and the config that echoes that
 *       sequence confirms it, since the control plane takes a report only from the current primary
 *       at the current epoch; the copy still counts if it answers later (with the control plane
 *       down, that is what confirms it). With no other copy in sync, nobody can have been
 *       promoted. Asked are the copies the control plane may hold in sync (every copy, with no
 *       usable {@link SyncState}), also one the config it kept does not name, once a config does;
 *       one of them unreachable and out of the set already raises the sequence once all the same,
 *       so that an echo can confirm. In the config-file mode (no control plane,
 *       {@link DataNode.Builder#configFileOnly}) every config is the truth: it echoes the node's
 *       set, a copy it does not name is not asked, and no write waits for an echo (nothing
 *       promotes a copy but the operator, who edits the files).</li>
 *   <li>A config of its epoch whose set is not this node's, at its sequence or above (the control
 *       plane took a report this node no longer knows), or that names in sync a copy new here
 *       (which missed the writes so far): the copies that config holds out of sync leave the set
 *       and are copied whole, and the node reports its set above that sequence and acknowledges no
 *       write, trim or flush, in flight or new, until that is echoed.</li>
 * </ol>
 * All state is guarded by {@code this}; callbacks and replies run outside it.
 */
final class ReplicatedVolume {

    private static final System.Logger LOG = System.getLogger(ReplicatedVolume.class.getName());

    /** Gives the link to a copy; null if the copy has no address yet. */
    interface Links {
        ReplicaLink link(ReplicaCopy c);
    }

    /** A forwarded request waiting for its copies' answers. */
    private static final class Pending {
        final IntConsumer done;
        final long offset;
        final long length;
        final boolean changesData;
        /** FUA: a copy that answers it has forced it. */
        final boolean forced;
        int remaining;
        long requiredSequence;
        boolean stale;

        Pending(IntConsumer done, long offset, long length, boolean changesData, boolean forced, long requiredSequence) {
            this.done = done;
            this.offset = offset;
            this.length = length;
            this.changesData = changesData;
            this.forced = forced;
            this.requiredSequence = requiredSequence;
        }
    }

    final UUID id;
    final UUID self;
    final VolumeStore store;
    private final Links links;
    /**
     * No control plane (the config-file mode): each config is the truth and echoes this node's
     * set, and a copy a config does not name is not asked.
     */
    private final boolean configFileOnly;
    /** Told when the sync sequence rises or the node is fenced: the node's status should go out now. */
    private final Runnable changed;

    private long epoch;
    private boolean primary;
    private boolean fenced;
    /** Its replication ended here ({@link #close}): it applies nothing more of a primary's. */
    private boolean closed;
    private long syncSequence;
    private long confirmedSequence;
    private long lastDropSequence;
    /** Every forwarded request waits for a config to echo at least this sequence: rule 8's report above a set it did not know. */
    private long echoFloor;
    /** The copies the control plane may hold in sync: in any set kept since it last echoed this node's set. */
    private Set<UUID> maybeInSync = new HashSet<>();
    /** The state last kept ({@link #keepSyncState}) at this epoch, what {@link #status} reports; null before. */
    private SyncState kept;
    /** The last sequence whose state could not be kept, so that a failure that lasts is logged once. */
    private long unkeptLogged = -1;
    private final Map<UUID, ReplicaCopy> copies = new LinkedHashMap<>();
    /** Client writes held back from a copy by rule 4, in the order they came; {@link #releaseHeldForwards} sends them. */
    private final java.util.ArrayDeque<HeldForward> heldForwards = new java.util.ArrayDeque<>();
    private final List<Pending> waiting = new ArrayList<>();
    /** Copies told of this epoch with a PING that was answered OK. */
    private final Set<UUID> announced = new HashSet<>();
    /**
     * Rule 7: restarted as the primary, and not yet confirmed; {@link #startSequence} is the sync
     * sequence then. Volatile so that {@link #holdUntilConfirmed} takes no lock while it is false.
     */
    private volatile boolean unconfirmed;
    private long startSequence;
    /** Rule 7: the copies in sync at the restart that have not yet answered this epoch's PING with OK. */
    private final Set<UUID> toConfirm = new HashSet<>();
    /** Rule 7: client requests held while unconfirmed; {@link #heldCount} counts them. */
    private final List<Held> held = new ArrayList<>();
    private volatile int heldCount;
    /**
     * Whether the last {@link #forward} found every copy's link up ({@link #forwardsAtOnce});
     * false until the first that sends, and left as it was by one with no copy to send to.
     */
    private volatile boolean linksUp;
    /**
     * Copy side: read-held while a primary's request is applied ({@link #applyIfAdmitted}),
     * write-held while the epoch or this node's role changes ({@link #configure}, a higher epoch
     * {@link #admit}ted): a request admitted at an epoch never lands after a newer epoch's writes.
     * Taken before this object's monitor, never inside it.
     */
    private final ReentrantReadWriteLock epochChange = new ReentrantReadWriteLock();
    /** Answers of waiting requests that a deposition failed, owed once the lock is let go ({@link #startHeld}). */
    private final List<Runnable> owed = new ArrayList<>();
    private volatile boolean answersOwed;

    /** A client request held by {@link #holdUntilConfirmed}: whose it is, and what to tell it once decided. */
    private record Held(Object owner, Consumer<Boolean> resume) {
    }

    ReplicatedVolume(UUID id, UUID self, VolumeStore store, Links links, Runnable changed, boolean configFileOnly) {
        this.configFileOnly = configFileOnly;
        this.id = id;
        this.self = self;
        this.store = store;
        this.links = links;
        this.changed = changed;
    }

    /**
     * Whether this node serves the volume's clients now: the primary of the highest epoch it has
     * seen, and, after a restart, confirmed as such (rule 7).
     */
    synchronized boolean serves() {
        return primary && !fenced && !unconfirmed;
    }

    /**
     * Rule 7: holds a client request of {@code owner} (its connection) while this node is a
     * restarted primary not yet confirmed, and answers true. Once that is decided, on the thread
     * that decides it, {@code resume} gets whether this node serves the volume: true, the request
     * runs; false (no longer the primary, or the volume's replication ended here), it is refused.
     * A client waits as for a slow disk: milliseconds when its copies answer, the control plane's
     * echo when they are down, for as long as neither can decide, or until its connection closes
     * ({@link #letGo}). Answers false, holding nothing, when the request may start now.
     */
    boolean holdUntilConfirmed(Object owner, Consumer<Boolean> resume) {
        if (!unconfirmed) {
            return false; // the common case: no lock on the selector thread
        }
        synchronized (this) {
            if (!awaitingConfirmation()) {
                return false;
            }
            held.add(new Held(owner, resume));
            heldCount = held.size();
            return true;
        }
    }

    /** The requests {@code owner} has held are given up (its connection closed): each is told false. */
    void letGo(Object owner) {
        if (heldCount == 0) {
            return;
        }
        List<Held> gone = new ArrayList<>();
        synchronized (this) {
            for (var it = held.iterator(); it.hasNext();) {
                Held h = it.next();
                if (h.owner() == owner) {
                    it.remove();
                    gone.add(h);
                }
            }
            heldCount = held.size();
        }
        gone.forEach(h -> h.resume().accept(false));
    }

    /** Requests done here and on the copies that wait for a config to echo a sequence (rule 2). */
    synchronized int waitingWrites() {
        return waiting.size();
    }

    /** Client requests held until this node is confirmed as the primary or deposed (rule 7). */
    int heldRequests() {
        return heldCount;
    }

    private boolean awaitingConfirmation() {
        return primary && !fenced && unconfirmed;
    }

    /** Caller holds this: once confirmation is decided, moves the held requests, told the decision, to {@code start}. */
    private void releaseHeld(List<Runnable> start) {
        if (!held.isEmpty() && !awaitingConfirmation()) {
            boolean serving = primary && !fenced && !unconfirmed;
            for (Held h : held) {
                start.add(() -> h.resume().accept(serving));
            }
            held.clear();
            heldCount = 0;
        }
    }

    /**
     * Starts the held requests if confirmation was decided, and answers the waiting requests a
     * deposition failed; called outside the lock after what can decide either.
     */
    private void startHeld() {
        if (heldCount == 0 && !answersOwed) {
            return;
        }
        List<Runnable> start = new ArrayList<>();
        synchronized (this) {
            releaseHeld(start);
            start.addAll(owed);
            owed.clear();
            answersOwed = false;
        }
        start.forEach(Runnable::run);
    }

    /** Tests: whether a change of epoch or role waits for requests of a primary being applied here. */
    boolean epochChangeWaiting() {
        return epochChange.hasQueuedThreads();
    }

    /** Applies a primary's request; may throw what the store throws. */
    interface Apply {
        void run() throws IOException;
    }

    /**
     * Copy side: applies a request of a primary admitted at {@code peerEpoch} ({@link #admit}) if it
     * is still admitted, under the read side of {@link #epochChange}: a change of epoch or role
     * waits for it, so it lands before the change or not at all. Returns {@link ReplicationWire#OK},
     * or {@link ReplicationWire#STALE_EPOCH} when it was not applied ({@link ReplicationWire#NOT_A_COPY}
     * once the volume's replication ended here: {@link #close}).
     */
    int applyIfAdmitted(long peerEpoch, Apply apply) throws IOException {
        epochChange.readLock().lock();
        try {
            synchronized (this) {
                if (closed) {
                    return ReplicationWire.NOT_A_COPY; // the rest of a request that began before
                }
                if (stale(peerEpoch)) {
                    return ReplicationWire.STALE_EPOCH;
                }
            }
            apply.run();
            return ReplicationWire.OK;
        } finally {
            epochChange.readLock().unlock();
        }
    }

    /** Whether {@code node}'s copy answered this epoch's PING with OK. */
    synchronized boolean announcedTo(UUID node) {
        return announced.contains(node);
    }

    /** Whether this node acts as the primary: keeps its copies' links, resyncs them, reports them. */
    private boolean acting() {
        return primary && !fenced;
    }

    synchronized long epoch() {
        return epoch;
    }

    /**
     * Takes the volume's replication config. Returns the requests to answer now (outside the
     * lock): with 0 those the echoed sequence released, with {@code ESHUTDOWN} those of a primary
     * that is one no more.
     */
    List<Runnable> configure(ReplicationConfig rc) {
        boolean changes;
        synchronized (this) {
            changes = resets(rc);
        }
        if (!changes) {
            return configureLocked(rc);
        }
        epochChange.writeLock().lock(); // requests of a primary being applied here land before the change
        try {
            return configureLocked(rc);
        } finally {
            epochChange.writeLock().unlock();
        }
    }

    /**
     * Caller holds this: whether {@code rc} starts a new epoch here, or changes this node's role,
     * or is the first config here (not older than the epoch: {@link #configureLocked} ignores that).
     */
    private boolean resets(ReplicationConfig rc) {
        return rc.epoch() > epoch || epoch == 0 || rc.primaryNodeId().equals(self) != primary;
    }

    /**
     * Caller holds this: whether a primary's request of {@code peerEpoch} is refused: older than an
     * epoch seen here, or of this node's own epoch while it is the primary.
     */
    private boolean stale(long peerEpoch) {
        return peerEpoch < epoch || peerEpoch == epoch && primary;
    }

    private List<Runnable> configureLocked(ReplicationConfig rc) {
        List<Runnable> answers = new ArrayList<>();
        synchronized (this) {
            if (rc.epoch() < epoch) {
                return answers; // older than an epoch a peer has shown us
            }
            boolean firstHere = epoch == 0;
            boolean nowPrimary = rc.primaryNodeId().equals(self);
            boolean reset = resets(rc);
            // another node was the primary until now: the copies it leaves in sync may differ where its
            // last writes reached some and not others
            boolean promoted = reset && nowPrimary && !primary && !firstHere;
            if (reset) {
                epoch = rc.epoch();
                primary = nowPrimary;
                fenced = false;
                unconfirmed = false;
                toConfirm.clear();
                copies.clear();
                announced.clear();
                failWaiting(answers);
                syncSequence = rc.syncSequence();
                confirmedSequence = rc.syncSequence();
                lastDropSequence = 0;
                echoFloor = 0;
                maybeInSync = new HashSet<>();
                kept = null;
            }
            if (!primary) {
                copies.clear();
                failWaiting(answers); // deposed by a peer before this config said so
                releaseHeld(answers);
                return answers;
            }
            Set<UUID> named = namedIn(rc);
            boolean restarted = firstHere && store.fromEarlierRun;
            LastReport last = restarted ? LastReport.read(id, store.syncStateFile(), rc, named, inSyncIn(rc)) : null;
            Set<UUID> theirs = inSyncIn(rc);
            boolean addedOut = false;
            for (ReplicationConfig.Copy cc : rc.copies()) {
                if (cc.nodeId().equals(self)) {
                    continue;
                }
                ReplicaCopy c = copies.get(cc.nodeId());
                if (c == null) {
                    // a copy new at this epoch missed the writes so far: it starts out of sync
                    boolean inSync = last != null ? last.inSync(cc) : reset && cc.inSync();
                    addedOut |= last == null && !inSync && cc.inSync(); // at a restart, its maybeInSync holds it
                    c = new ReplicaCopy(cc.nodeId(), cc.address(), inSync ? State.IN_SYNC : State.OUT);
                    if (!inSync) {
                        c.markAllDirty(store.size());
                        c.outSince = System.nanoTime();
                    } else if (restarted || promoted) {
                        c.markAllDirty(store.size()); // rule 6: in sync, and copied again
                        c.resyncSince = System.nanoTime();
                        LOG.log(System.Logger.Level.INFO, "volume {0}: its primary {1}; copying it again to the copy"
                                + " on node {2}, which stays in sync, so that writes in flight at the {3} do not leave the"
                                + " copies different", id, restarted ? "restarted" : "was promoted", c.node,
                                restarted ? "stop" : "old primary's end");
                    }
                    copies.put(cc.nodeId(), c);
                } else {
                    c.address(cc.address());
                }
            }
            copies.keySet().retainAll(named);
            if (restarted) { // rule 7
                syncSequence = last.sequence();
                maybeInSync = new HashSet<>(configFileOnly ? inSync() : last.maybeInSync());
                toConfirm.addAll(last.ask()); // a copy the config does not name is asked once a config does
                if (configFileOnly) {
                    toConfirm.retainAll(named);
                }
                if (!inSync().containsAll(maybeInSync)) {
                    lastDropSequence = syncSequence; // no write without a copy it may hold in sync, until it knows
                }
                unconfirmed = !toConfirm.isEmpty();
                startSequence = syncSequence;
                changed.run();
            } else {
                toConfirm.retainAll(named); // a copy the control plane took out of the volume cannot be promoted
            }
            // the control plane holds a set at this node's sequence or above that is not this node's (reported
            // before a restart that could not tell): copies it holds out of sync may lack acknowledged writes
            boolean theirsNewer = rc.syncSequence() > syncSequence
                    || rc.syncSequence() == syncSequence && !theirs.equals(inSync());
            if (theirsNewer) {
                for (ReplicaCopy c : copies.values()) {
                    if (c.state == State.IN_SYNC && !theirs.contains(c.node)) {
                        leave(c);
                        c.markAllDirty(store.size());
                    }
                }
            }
            if (theirsNewer || addedOut) {
                // report this node's set above the control plane's; no write is acknowledged before it is echoed
                maybeInSync.addAll(theirs);
                syncSequence = Math.max(syncSequence, rc.syncSequence()) + 1;
                lastDropSequence = syncSequence;
                echoFloor = syncSequence;
                keepSyncState();
                changed.run();
            } else {
                confirmedSequence = Math.max(confirmedSequence, rc.syncSequence());
                boolean echoed = configFileOnly || !restarted && confirmedSequence >= syncSequence;
                if (echoed && !maybeInSync.equals(inSync())) {
                    maybeInSync = new HashSet<>(inSync()); // the control plane holds exactly this node's set
                    keepSyncState();
                }
            }
            if (reset) {
                keepSyncState(); // a restart finds it; missing, the restart asks every copy
            }
            if (unconfirmed && confirmedSequence > startSequence) {
                unconfirmed = false;
                LOG.log(System.Logger.Level.INFO, "volume {0}: the control plane took this node''s report as the primary''s"
                        + " at epoch {1}; serving it", id, epoch);
            } else if (unconfirmed && toConfirm.isEmpty()) {
                unconfirmed = false;
                LOG.log(System.Logger.Level.INFO, "volume {0}: no copy left that could have been promoted; serving epoch {1}",
                        id, epoch);
            }
            releaseWaiting(answers);
            releaseHeld(answers);
        }
        return answers;
    }

    /** The copies {@code rc} names, this node left out. */
    private Set<UUID> namedIn(ReplicationConfig rc) {
        Set<UUID> named = new HashSet<>();
        rc.copies().forEach(cc -> named.add(cc.nodeId()));
        named.remove(self);
        return named;
    }

    /** The copies {@code rc} has in sync, this node left out. */
    private Set<UUID> inSyncIn(ReplicationConfig rc) {
        Set<UUID> in = new HashSet<>();
        rc.copies().stream().filter(ReplicationConfig.Copy::inSync).forEach(cc -> in.add(cc.nodeId()));
        in.remove(self);
        return in;
    }

    /** Caller holds this: the copies in sync now. */
    private Set<UUID> inSync() {
        Set<UUID> in = new HashSet<>();
        copies.values().stream().filter(c -> c.state == State.IN_SYNC).forEach(c -> in.add(c.node));
        return in;
    }

    /**
     * A peer's request for this volume arrived with {@code peerEpoch}: the status to answer. A
     * higher epoch than this node has seen is learned, and fences this node if it was the primary.
     */
    int admit(long peerEpoch) {
        boolean newer;
        synchronized (this) {
            if (stale(peerEpoch)) {
                return ReplicationWire.STALE_EPOCH;
            }
            newer = peerEpoch > epoch;
        }
        if (newer) {
            epochChange.writeLock().lock(); // requests of the older epoch being applied land first
            try {
                synchronized (this) {
                    if (stale(peerEpoch)) {
                        return ReplicationWire.STALE_EPOCH;
                    }
                    if (peerEpoch > epoch) {
                        deposed(peerEpoch);
                    }
                }
            } finally {
                epochChange.writeLock().unlock();
            }
        }
        startHeld();
        return ReplicationWire.OK;
    }

    /**
     * Sends a client request done locally to the copies; {@code done} gets 0 or an NBD error once
     * it may be answered. {@code data}: a WRITE's payload, position 0 to its length.
     */
    void forward(byte type, boolean fua, boolean noHole, long offset, long length, ByteBuffer data, IntConsumer done) {
        boolean changesData = type != ReplicationWire.FLUSH;
        byte flags = (byte) ((fua ? ReplicationWire.FLAG_FUA : 0) | (noHole ? ReplicationWire.FLAG_NO_HOLE : 0));
        Pending tracked = null;
        List<ReplicaCopy> targets = new ArrayList<>(2);
        long[] flushSent = null; // a FLUSH's ReplicaCopy.flushSent, per target
        long sendEpoch = 0;
        synchronized (this) {
            if (primary && !fenced) {
                flushSent = changesData ? null : new long[copies.size()];
                sendEpoch = epoch;
                tracked = new Pending(done, offset, length, changesData, fua, lastDropSequence);
                int heldBack = 0;
                for (ReplicaCopy c : copies.values()) {
                    if (c.state == State.OUT) {
                        if (changesData) {
                            c.markDirty(offset, length);
                        }
                        continue;
                    }
                    if (changesData && c.state == State.IN_SYNC && (c.onTheWay(offset, length) || c.heldForwards > 0)) {
                        // rule 4: sent once the step that read the region before this write has landed
                        c.heldForwards++;
                        heldForwards.add(new HeldForward(c, tracked, type, flags, sendEpoch, offset, length, data,
                                c.stepsTaken()));
                        heldBack++;
                        continue;
                    }
                    if (changesData && c.onTheWay(offset, length)) {
                        c.markDirty(offset, length); // rule 4: a resyncing copy gets the region again before it joins
                    }
                    if (!changesData) {
                        flushSent[targets.size()] = c.flushSent();
                    }
                    targets.add(c);
                }
                tracked.remaining = targets.size() + heldBack;
            }
        }
        if (tracked == null) { // not the primary, or fenced
            done.accept(Nbd.ESHUTDOWN);
            return;
        }
        Pending p = tracked;
        if (p.remaining == 0) {
            settle(p);
            return;
        }
        boolean allUp = true;
        for (int i = 0; i < targets.size(); i++) {
            allUp &= send(new Forwarded(p, targets.get(i), changesData ? 0 : flushSent[i]), type, flags, sendEpoch,
                    offset, length, data);
        }
        if (!targets.isEmpty() && linksUp != allUp) { // stored only when it changes: every worker reads it for each request
            linksUp = allUp;
        }
    }

    /**
     * Sends a client request to its copy, answering {@code cb}; whether its link was up (a link
     * that is down connects in the send; a copy with no link yet is answered as down at once).
     */
    private boolean send(Forwarded cb, byte type, byte flags, long sendEpoch, long offset, long length, ByteBuffer data) {
        ReplicaLink link = links.link(cb.c);
        if (link == null) {
            ReplyBatch.writeHeld(); // the answer may write the in-sync set to disk
            cb.done(ReplicationWire.LINK_DOWN, 0);
            return false;
        }
        boolean up = link.isUp();
        link.send(type, flags, id, sendEpoch, offset, length, data == null ? null : data.duplicate(), cb);
        return up;
    }

    /**
     * A client write held back from copy {@code c} by rule 4, with what its send needs; it waits
     * for the steps over its range taken up to number {@code steps} (those taken later read the
     * region after it was written here).
     */
    private record HeldForward(ReplicaCopy c, Pending p, byte type, byte flags, long epoch, long offset, long length,
            ByteBuffer data, long steps) {
    }

    /**
     * The driver: sends, in their order, the held client writes whose steps (those over their
     * range on their way when they came) have been answered; a copy's writes wait behind its first
     * one still waiting. It answers those whose copy is out of sync, or whose primary no longer
     * acts, as if the link were down (rule 2 then holds them as it holds any write a copy failed),
     * those whose copy was removed at this epoch as done (the copies left have them), and those
     * whose copy was replaced at a new epoch {@code ESHUTDOWN}: they never reached its node.
     */
    void releaseHeldForwards() {
        List<HeldForward> send = new ArrayList<>();
        List<HeldForward> fail = new ArrayList<>();
        List<HeldForward> dropped = new ArrayList<>();
        long at;
        synchronized (this) {
            if (heldForwards.isEmpty()) {
                return;
            }
            at = epoch;
            Set<ReplicaCopy> blocked = new HashSet<>();
            for (java.util.Iterator<HeldForward> it = heldForwards.iterator(); it.hasNext(); ) {
                HeldForward f = it.next();
                ReplicaCopy c = f.c();
                boolean gone = copies.get(c.node) != c;
                if (gone && f.epoch() == epoch && acting()) {
                    it.remove();
                    dropped.add(f);
                } else if (gone || !acting() || c.state == State.OUT) {
                    f.p().stale |= gone;
                    it.remove();
                    fail.add(f);
                } else if (blocked.contains(c) || c.onTheWay(f.offset(), f.length(), f.steps())) {
                    blocked.add(c);
                } else {
                    it.remove();
                    send.add(f);
                }
            }
        }
        try {
            for (HeldForward f : send) {
                try {
                    send(new Forwarded(f.p(), f.c()), f.type(), f.flags(), f.epoch(), f.offset(), f.length(), f.data());
                } catch (RuntimeException e) { // answered as a send that failed, rather than never
                    LOG.log(System.Logger.Level.WARNING, "volume {0}: sending a held write to node {1}: {2}", id,
                            f.c().node, e.toString());
                    new Forwarded(f.p(), f.c()).done(ReplicationWire.LINK_DOWN, 0);
                }
            }
            for (HeldForward f : dropped) {
                new Forwarded(f.p(), f.c()).done(ReplicationWire.OK, at);
            }
            for (HeldForward f : fail) {
                new Forwarded(f.p(), f.c()).done(ReplicationWire.LINK_DOWN, 0);
            }
        } finally {
            synchronized (this) { // sent or answered: the copy's next writes go straight to it, after these
                for (List<HeldForward> taken : List.of(send, dropped, fail)) {
                    taken.forEach(f -> f.c().heldForwards--);
                }
            }
        }
    }

    /** Tests: client writes held back from copy {@code node} by rule 4. */
    synchronized int heldForwards(UUID node) {
        ReplicaCopy c = copies.get(node);
        return c == null ? 0 : c.heldForwards;
    }

    /**
     * Whether a client's write is likely forwarded without waiting: the last forward found the
     * link to each copy up, so that sending only queues. A hint ({@link NbdRequest#quick}): a
     * link may have gone down since, and a send that finds it down writes what its thread holds
     * before it connects ({@link ReplicaLink#send}).
     */
    boolean forwardsAtOnce() {
        return linksUp;
    }

    /** A copy's answer to a forwarded client request: quick when OK, as it only answers the client. */
    private final class Forwarded implements ReplicaLink.Callback {
        private final Pending p;
        private final ReplicaCopy c;
        /** A FLUSH's {@link ReplicaCopy#flushSent} (0 for a request that changes data). */
        private final long flushSent;

        Forwarded(Pending p, ReplicaCopy c) {
            this(p, c, 0);
        }

        Forwarded(Pending p, ReplicaCopy c, long flushSent) {
            this.p = p;
            this.c = c;
            this.flushSent = flushSent;
        }

        @Override
        public void done(int status, long peerEpoch) {
            answered(p, c, flushSent, status, peerEpoch);
        }

        @Override
        public boolean quick() {
            return true;
        }
    }

    private void answered(Pending p, ReplicaCopy c, long flushSent, int status, long peerEpoch) {
        boolean last;
        synchronized (this) {
            if (status == ReplicationWire.STALE_EPOCH) {
                p.stale = true;
                deposed(peerEpoch);
            } else if (status != ReplicationWire.OK) {
                if (p.changesData) {
                    failed(c);
                    c.markDirty(p.offset, p.length);
                } else {
                    flushFailed(c, status);
                }
                p.requiredSequence = Math.max(p.requiredSequence, lastDropSequence);
            } else if (!p.changesData) {
                c.flushAnswered(flushSent);
            } else if (!p.forced) {
                c.written(p.offset, p.length);
            }
            last = --p.remaining == 0;
        }
        if (last) {
            settle(p);
        }
        startHeld(); // a deposition decides confirmation, and owes the waiting requests their answers
    }

    /** All copies answered: answer now, or wait for the config that echoes the sequence the request needs. */
    private void settle(Pending p) {
        int answer;
        synchronized (this) {
            if (p.stale || fenced) {
                answer = Nbd.ESHUTDOWN;
            } else if (!configFileOnly && Math.max(p.requiredSequence, echoFloor) > confirmedSequence) {
                waiting.add(p);
                return;
            } else {
                answer = 0;
            }
        }
        p.done.accept(answer);
    }

    /**
     * Caller holds this: a FLUSH sent to {@code c} was answered {@code status}, not OK. Lost with
     * its link ({@link ReplicationWire#LINK_DOWN}), it is that link's failure: {@code c} leaves the
     * set, dirty where it held writes unforced, which covers what the FLUSH was to force (its node
     * losing power takes no more). Answered with an error, it leaves and is copied whole before it
     * rejoins: a copy that holds the volume no more has nothing of it, and one whose disk failed
     * the fsync (after which Linux reports the pages clean) lost at most its unforced writes, but
     * a disk that fails is not trusted with the rest (a caution, not a rule of correctness: a
     * FUA write it failed makes only its regions dirty).
     */
    private void flushFailed(ReplicaCopy c, int status) {
        failed(c);
        if (status != ReplicationWire.LINK_DOWN && copies.get(c.node) == c) {
            c.markAllDirty(store.size());
        }
    }

    /** Caller holds this: {@code c} failed a request; it leaves the in-sync set if it was in it. */
    private void failed(ReplicaCopy c) {
        if (copies.get(c.node) != c) {
            return; // no longer a copy
        }
        boolean left = c.state == State.IN_SYNC;
        leave(c);
        if (left) {
            syncSequence++;
            lastDropSequence = syncSequence;
            keepSyncState();
            changed.run();
        }
    }

    /** Caller holds this: {@code c} is out of sync, and is to be told this epoch again before it resyncs. */
    private void leave(ReplicaCopy c) {
        c.leave();
        announced.remove(c.node);
    }

    /**
     * Caller holds this: rule 7, an unconfirmed primary cannot reach {@code c}, which could have
     * been promoted: it leaves the in-sync set, or, out of it already (reported in sync after the
     * config this node kept), the sequence rises all the same, so that the control plane's echo of
     * the next report confirms this node.
     */
    private void unreachableWhileUnconfirmed(ReplicaCopy c) {
        if (!unconfirmed || !toConfirm.contains(c.node) || copies.get(c.node) != c) {
            return;
        }
        if (c.state == State.IN_SYNC) {
            failed(c);
        } else if (syncSequence == startSequence) {
            syncSequence++;
            keepSyncState();
            changed.run();
        }
    }

    /**
     * Caller holds this: keeps what the next report says of the in-sync set ({@link SyncState}),
     * before it goes out: {@link #status} reports only what was kept, so a restart never finds a
     * state older than a report the control plane may have taken. A failure is logged, the report
     * keeps the state kept before, and {@link #status} tries again; requests that wait for the
     * new sequence wait meanwhile.
     */
    private void keepSyncState() {
        if (!acting()) {
            return; // deposed: what it reports is no one's concern
        }
        Set<UUID> in = inSync();
        Set<UUID> may = new HashSet<>(maybeInSync);
        may.addAll(in);
        SyncState state = new SyncState(epoch, syncSequence, in, may);
        if (state.equals(kept)) {
            return;
        }
        try {
            state.write(store.syncStateFile());
            kept = state;
            maybeInSync = may;
        } catch (IOException e) {
            if (unkeptLogged != syncSequence) {
                unkeptLogged = syncSequence;
                LOG.log(System.Logger.Level.WARNING, "volume {0}: could not keep its in-sync set (sequence {1}): {2}; it"
                        + " reports sequence {3} until it can", id, syncSequence, e.toString(), kept == null ? "none" : kept.sequence());
            }
        }
    }

    /**
     * Caller holds this: a peer has shown a higher epoch (or refused ours): this node is no
     * longer the volume's primary and serves it no more, until a config says otherwise.
     */
    private void deposed(long peerEpoch) {
        epoch = Math.max(epoch, peerEpoch);
        primary = false;
        if (!fenced) {
            fenced = true;
            changed.run();
        }
        if (!waiting.isEmpty()) {
            // Rule 3: requests in flight are answered ESHUTDOWN, now: a deposed primary has usually
            // lost the control plane, whose next config would otherwise be what fails them.
            failWaiting(owed);
            answersOwed = true;
        }
    }

    private void releaseWaiting(List<Runnable> answers) {
        for (var it = waiting.iterator(); it.hasNext();) {
            Pending p = it.next();
            if (Math.max(p.requiredSequence, echoFloor) <= confirmedSequence) {
                it.remove();
                answers.add(() -> p.done.accept(0));
            }
        }
    }

    private void failWaiting(List<Runnable> answers) {
        for (Pending p : waiting) {
            answers.add(() -> p.done.accept(Nbd.ESHUTDOWN));
        }
        waiting.clear();
    }

    /** Ends this volume's replication here (volume removed or no longer replicated): waiting requests fail. */
    List<Runnable> close() {
        List<Runnable> answers = new ArrayList<>();
        synchronized (this) {
            closed = true;
            primary = false;
            fenced = true;
            failWaiting(answers);
            releaseHeld(answers);
            for (HeldForward f : heldForwards) { // fenced: each is answered ESHUTDOWN
                answers.add(() -> new Forwarded(f.p(), f.c()).done(ReplicationWire.LINK_DOWN, 0));
            }
            heldForwards.clear();
        }
        return answers;
    }

    // ---- driven by Replication's driver thread and the replication task ----

    /** The copies whose links the driver should keep up: every copy of a primary that serves. */
    synchronized List<ReplicaCopy> copiesToReach() {
        return acting() ? new ArrayList<>(copies.values()) : List.of();
    }

    /**
     * Whether to announce this epoch to {@code c} now: it still needs it (no PING answered OK yet)
     * and was last sent one at least {@link Replication#RETRY_NANOS} before {@code now}. If so,
     * {@code now} is noted as its last announcement.
     */
    synchronized boolean announceDue(ReplicaCopy c, long now) {
        if (!acting() || announced.contains(c.node) || copies.get(c.node) != c
                || c.lastAnnounce != 0 && now - c.lastAnnounce < Replication.RETRY_NANOS) {
            return false;
        }
        c.lastAnnounce = now;
        return true;
    }

    /** The driver could not reach {@code c}: while unconfirmed (rule 7), an in-sync copy leaves the set. */
    synchronized void unreachable(ReplicaCopy c) {
        unreachableWhileUnconfirmed(c);
    }

    /** Sends a PING of this epoch to {@code c}; an OK marks it announced, and lets an out-of-sync copy start its resync. */
    void announce(ReplicaCopy c, ReplicaLink link) {
        long e;
        synchronized (this) {
            e = epoch;
        }
        link.send(ReplicationWire.PING, (byte) 0, id, e, 0, 0, null, (status, peerEpoch) -> {
            synchronized (this) {
                if (status == ReplicationWire.STALE_EPOCH) {
                    deposed(peerEpoch);
                } else if (status != ReplicationWire.OK && e == epoch) {
                    unreachableWhileUnconfirmed(c);
                } else if (status == ReplicationWire.OK && copies.get(c.node) == c && e == epoch) {
                    announced.add(c.node);
                    if (unconfirmed && toConfirm.remove(c.node) && toConfirm.isEmpty()) {
                        unconfirmed = false;
                        LOG.log(System.Logger.Level.INFO, "volume {0}: the copies in sync confirmed epoch {1} (the last on"
                                + " node {2}); serving it", id, epoch, c.node);
                    }
                    if (c.state == State.OUT) {
                        c.startResync();
                    }
                }
            }
            startHeld();
        });
    }

    /**
     * The next run of dirty regions of {@code c} to copy (at most {@link ReplicaCopy#STEP_BYTES}), taken off
     * its dirty map and marked on its way; null when there is none now.
     */
    synchronized Step nextStep(ReplicaCopy c) {
        if (!acting() || unconfirmed || c.state == State.OUT || copies.get(c.node) != c) {
            return null; // unconfirmed (rule 7): a copy not yet told of a promotion would take old data
        }
        return c.takeStep(store.size(), epoch);
    }

    /** A step's copy was answered: on failure its regions are dirty again. */
    void stepDone(Step s, int status, long peerEpoch) {
        stepAnswered(s, status, peerEpoch);
        startHeld(); // a deposition decides confirmation
    }

    /**
     * The driver, after it queued {@code c}'s steps: a resyncing copy with nothing dirty, queued or
     * on its way (its last step answered, or nothing was dirty when it left, as after a FLUSH it
     * failed) is sent a FLUSH, and joins once that is answered ({@link #flushed}).
     */
    void joinIfCopied(ReplicaCopy c, ReplicaLink link) {
        long e;
        long mark;
        long flushSent;
        synchronized (this) {
            if (c.joining || c.steps() > 0 || !copied(c, epoch)) {
                return;
            }
            c.joining = true;
            flushSent = c.flushSent();
            e = epoch;
            mark = c.sent;
        }
        long sent = flushSent;
        link.send(ReplicationWire.FLUSH, (byte) 0, id, e, 0, 0, null, (status, peerEpoch) -> {
            flushed(c, e, mark, sent, status, peerEpoch);
            startHeld(); // a deposition decides confirmation
        });
    }

    /**
     * The driver: {@code c} has held a write unforced for {@code every} nanoseconds or more
     * ({@link Replication#FLUSH_EVERY}): it is sent a FLUSH, and what it held unforced is forced
     * once that is answered. One that fails is handled as a client's ({@link #flushFailed}).
     */
    void flushIfDue(ReplicaCopy c, ReplicaLink link, long now, long every) {
        long e;
        long sent;
        synchronized (this) {
            if (!acting() || copies.get(c.node) != c || !c.flushDue(now, every)) {
                return;
            }
            sent = c.flushSent();
            e = epoch;
        }
        link.send(ReplicationWire.FLUSH, (byte) 0, id, e, 0, 0, null, (status, peerEpoch) -> {
            synchronized (this) {
                if (status == ReplicationWire.STALE_EPOCH) {
                    deposed(peerEpoch);
                } else if (status != ReplicationWire.OK) {
                    flushFailed(c, status);
                } else {
                    c.flushAnswered(sent);
                }
            }
            startHeld(); // a deposition decides confirmation
        });
    }

    /** Tests: regions copy {@code node} holds unforced (answered since the last FLUSH it answered). */
    synchronized int unforcedRegions(UUID node) {
        return copies.get(node).unforcedRegions();
    }

    /**
     * Caller holds this: whether a resyncing copy has nothing dirty or on its way, at epoch
     * {@code at}, as the copy of the acting, confirmed primary.
     */
    private boolean copied(ReplicaCopy c, long at) {
        return c.state == State.RESYNCING && c.nothingLeft() && copies.get(c.node) == c
                && at == epoch && acting() && !unconfirmed;
    }

    /** The FLUSH of a copy whose resync had nothing left was answered: it joins if it still has nothing left. */
    private synchronized void flushed(ReplicaCopy c, long at, long mark, long flushSent, int status, long peerEpoch) {
        c.joining = false;
        if (status == ReplicationWire.STALE_EPOCH) {
            deposed(peerEpoch);
            return;
        }
        if (status != ReplicationWire.OK) {
            flushFailed(c, status);
            return;
        }
        c.flushAnswered(flushSent);
        if (!copied(c, at) || c.sent != mark) {
            return; // sent more, or dirtied, since that FLUSH: once it is copied, the driver flushes again
        }
        c.state = State.IN_SYNC;
        c.outSince = 0;
        syncSequence++;
        keepSyncState();
        changed.run();
        long nanos = System.nanoTime() - c.resyncSince;
        LOG.log(System.Logger.Level.INFO, "volume {0}: the copy on node {1} is in sync: resync copied {2,number,#}"
                + " bytes in {3,number,#} ms", id, c.node, c.resyncBytes, nanos / 1_000_000);
    }

    private synchronized void stepAnswered(Step s, int status, long peerEpoch) {
        ReplicaCopy c = s.copy();
        c.stepAnswered(s, status == ReplicationWire.OK);
        if (status == ReplicationWire.STALE_EPOCH) {
            deposed(peerEpoch);
        } else if (status != ReplicationWire.OK) {
            failed(c);
        } else if (c.state == State.IN_SYNC && c.resyncSince != 0 && c.nothingLeft()) {
            LOG.log(System.Logger.Level.INFO, "volume {0}: copied again to the copy on node {1}: {2,number,#} bytes in"
                    + " {3,number,#} ms", id, c.node, c.resyncBytes, (System.nanoTime() - c.resyncSince) / 1_000_000);
            c.resyncSince = 0;
        }
    }

    /** Resync steps of {@code c} queued or on their way. */
    synchronized int steps(ReplicaCopy c) {
        return c.steps();
    }

    /** How long the longest out-of-sync copy has been out (ns), 0 when all are in sync or this node is not the primary. */
    synchronized long underReplicatedNanos(long now) {
        long longest = 0;
        if (acting()) {
            for (ReplicaCopy c : copies.values()) {
                if (c.state != State.IN_SYNC && c.outSince != 0) {
                    longest = Math.max(longest, now - c.outSince);
                }
            }
        }
        return longest;
    }

    /**
     * The primary's report of its copies, or null when this node is not the serving primary or has
     * kept no state at this epoch yet. It reports the state last kept ({@link #keepSyncState},
     * tried again here): a copy in that set is reported in sync even if it left since.
     */
    synchronized AgentMessage.ReplicationStatus status() {
        if (!acting()) {
            return null;
        }
        keepSyncState();
        if (kept == null) {
            return null;
        }
        List<AgentMessage.CopyStatus> l = new ArrayList<>();
        for (ReplicaCopy c : copies.values()) {
            AgentMessage.CopyState s = kept.inSync().contains(c.node) ? AgentMessage.CopyState.inSync
                    : c.state == State.OUT ? AgentMessage.CopyState.outOfSync : AgentMessage.CopyState.resyncing;
            long remaining = s == AgentMessage.CopyState.inSync ? 0 : c.remainingBytes(store.size());
            l.add(new AgentMessage.CopyStatus(c.node, s, remaining));
        }
        return new AgentMessage.ReplicationStatus(id, epoch, kept.sequence(), l);
    }
}
