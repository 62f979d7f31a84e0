package io.weir.datanode;

import io.weir.datanode.ReplicaCopy.State;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.ReplicationConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantReadWriteLock;

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
 *       regions ({@link CopyResync#nextStep}). Such a step read its regions before the client
 *       writes that come while it is on its way, and may land after them (sent later, or applied
 *       beside them by the copy's second worker). A client write into a region on its way to a
 *       resyncing copy marks it dirty again, so that the copy gets it again before it joins. To a
 *       copy in sync (copied again whole, rules 5 and 6), whose copy of every acknowledged write
 *       must hold, the write is held back, and the copy's later writes behind it, until the steps
 *       over its range then on their way are answered; the driver then sends it
 *       ({@link ForwardedRequests#releaseHeldForwards}), and the client is answered once the copy
 *       answers it, as usual. With no region dirty or on its way, the copy is sent a FLUSH (the
 *       resync's steps are not forced, and what they carried may have been flushed by clients
 *       here), and joins the in-sync set once that is answered OK with still nothing dirty or on
 *       its way and no step sent since (the sequence rises; no wait is needed to be stricter).</li>
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
 *       their requests, {@link ConfirmationHold#holdUntilConfirmed}, and starts them once that is
 *       decided): its config may be the one it kept before it stopped, and a copy may have been
 *       promoted meanwhile (only a copy in sync can be). Every copy in sync at its start answering
 *       its epoch's PING with OK confirms it: none of them was promoted (one promoted, or told of a
 *       promotion, answers {@link ReplicationWire#STALE_EPOCH} and deposes it); one of several does
 *       not. An in-sync copy it cannot reach leaves the in-sync set (rule 2), and the config that
 *       echoes that sequence confirms it, since the control plane takes a report only from the
 *       current primary at the current epoch; the copy still counts if it answers later (with the
 *       control plane down, that is what confirms it). With no other copy in sync, nobody can have
 *       been promoted. Asked are the copies the control plane may hold in sync (every copy, with no
 *       usable {@link SyncState}), also one the config it kept does not name, once a config does;
 *       one of them unreachable and out of the set already raises the sequence once all the same,
 *       so that an echo can confirm. In the config-file mode (no control plane,
 *       {@link DataNode.Builder#configFileOnly}) every config is the truth: it echoes the node's
 *       set, a copy it does not name is not asked, and no write waits for an echo (nothing promotes
 *       a copy but the operator, who edits the files).</li>
 *   <li>A config of its epoch whose set is not this node's, at its sequence or above (the control
 *       plane took a report this node no longer knows), or that names in sync a copy new here
 *       (which missed the writes so far): the copies that config holds out of sync leave the set
 *       and are copied whole, and the node reports its set above that sequence and acknowledges no
 *       write, trim or flush, in flight or new, until that is echoed.</li>
 *   <li>A copy's data file holds a token its primary gave it (an adopting PING, the first this
 *       primary sends it), kept with the file ({@link VolumeStore#copyToken}) and, by the primary,
 *       in its {@link SyncState}; a file made since (the copy's disk replaced, its file lost)
 *       holds none. Once the primary gave it one, every request says so
 *       ({@link ReplicationWire#FLAG_TOKENED}); a copy whose file then holds none answers it
 *       {@link ReplicationWire#NEW_COPY}, and one whose token is not the one a PING expects
 *       answers that PING so: it holds nothing the primary sent before, though the primary, or
 *       the control plane, may hold it in sync (its link dropped with nothing outstanding, or its
 *       writes failed and only their regions are dirty). It leaves the set (rule 2), is wholly
 *       dirty, and is given a new token before its resync. The primary asks each copy again on
 *       every new connection of its link, and until it has an answer. So a copy that came back
 *       empty is not promoted, nor joined, for what it held before. A primary with no token for a
 *       copy (new at a promotion, or with its {@link SyncState} unreadable) gives it one and trusts
 *       it as before rule 8: rules 5 and 6 copy such copies whole anyway, in sync meanwhile.</li>
 * </ol>
 * This class keeps the epoch, this node's role, the config, the sync sequence and the in-sync set,
 * and changes them; its helpers do the rest, reading them: {@link ForwardedRequests} the client
 * path (rules 1, 2 and 4), {@link ConfirmationHold} what waits for rule 7's confirmation or for a
 * deposition's answers, {@link CopyResync} what the replication driver does per copy (the
 * announcements, the resync, the FLUSHes). All state, theirs included, is guarded by
 * {@code this} (they have no lock of their own); callbacks and replies run outside it.
 */
final class ReplicatedVolume {

    /** Also its helpers' logger: what they log is the volume's. */
    static final System.Logger LOG = System.getLogger(ReplicatedVolume.class.getName());

    /** Gives the link to a copy; null if the copy has no address yet. */
    interface Links {
        ReplicaLink link(ReplicaCopy c);
    }

    // The fields not private are read by the helpers, with this monitor held (unconfirmed, volatile,
    // also without it); only this class writes them.
    final UUID id;
    final UUID self;
    final VolumeStore store;
    final Links links;
    /**
     * No control plane (the config-file mode): each config is the truth and echoes this node's
     * set, and a copy a config does not name is not asked.
     */
    final boolean configFileOnly;
    /** Told when the sync sequence rises or the node is fenced: the node's status should go out now. */
    private final Runnable changed;

    long epoch;
    boolean primary;
    boolean fenced;
    /** Its replication ended here ({@link #close}): it applies nothing more of a primary's. */
    private boolean closed;
    private long syncSequence;
    long confirmedSequence;
    long lastDropSequence;
    /** Every forwarded request waits for a config to echo at least this sequence: rule 8's report above a set it did not know. */
    long echoFloor;
    /** The copies the control plane may hold in sync: in any set kept since it last echoed this node's set. */
    private Set<UUID> maybeInSync = new HashSet<>();
    /** The state last kept ({@link #keepSyncState}) at this epoch, what {@link #status} reports; null before. */
    private SyncState kept;
    /** The last sequence whose state could not be kept, so that a failure that lasts is logged once. */
    private long unkeptLogged = -1;
    final Map<UUID, ReplicaCopy> copies = new LinkedHashMap<>();
    /**
     * The other nodes the last config applied names for the volume (its primary and copies): the
     * only ones whose requests it takes ({@link #admit}).
     */
    private Set<UUID> members = Set.of();
    /**
     * The token each copy's data file holds (rule 8), by node, as this primary gave it; none for a
     * copy not given one yet (its next PING gives it one). Kept in the {@link SyncState} and read
     * back at a restart; kept across epochs while this node stays the primary, dropped when another
     * is (or was) the primary in between, which gives the copies tokens of its own.
     */
    final Map<UUID, Long> tokens = new HashMap<>();

    /** Copies told of this epoch with a PING that was answered OK. */
    final Set<UUID> announced = new HashSet<>();
    /**
     * Rule 7: restarted as the primary, and not yet confirmed; {@link #startSequence} is the sync
     * sequence then. Volatile so that {@link ConfirmationHold#holdUntilConfirmed} takes no lock while
     * it is false.
     */
    volatile boolean unconfirmed;
    private long startSequence;
    /** Rule 7: the copies in sync at the restart that have not yet answered this epoch's PING with OK. */
    private final Set<UUID> toConfirm = new HashSet<>();
    /**
     * Copy side: read-held while a primary's request is applied ({@link #applyIfAdmitted}),
     * write-held while the epoch or this node's role changes ({@link #configure}, a higher epoch
     * {@link #admit}ted): a request admitted at an epoch never lands after a newer epoch's writes.
     * Taken before this object's monitor, never inside it.
     */
    private final ReentrantReadWriteLock epochChange = new ReentrantReadWriteLock();
    /** The primary's client path: forwards, the requests that wait for an echo, the writes held by rule 4. */
    final ForwardedRequests forwarded;
    /** Rule 7's held client requests, and the answers a deposition owes. */
    final ConfirmationHold hold;
    /** What the replication driver does per copy: announcements, resync, FLUSHes. */
    final CopyResync resync;

    ReplicatedVolume(UUID id, UUID self, VolumeStore store, Links links, Runnable changed, boolean configFileOnly) {
        this.configFileOnly = configFileOnly;
        this.id = id;
        this.self = self;
        this.store = store;
        this.links = links;
        this.changed = changed;
        this.forwarded = new ForwardedRequests(this); // last: they read the finals above
        this.hold = new ConfirmationHold(this);
        this.resync = new CopyResync(this);
    }

    /**
     * Whether this node serves the volume's clients now: the primary of the highest epoch it has
     * seen, and, after a restart, confirmed as such (rule 7).
     */
    synchronized boolean serves() {
        return primary && !fenced && !unconfirmed;
    }

    /** Caller holds this: whether this node is a restarted primary not yet confirmed (rule 7). */
    boolean awaitingConfirmation() {
        return primary && !fenced && unconfirmed;
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

    /**
     * Caller holds this: whether this node acts as the primary: keeps its copies' links, resyncs
     * them, reports them.
     */
    boolean acting() {
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
            members = namedIn(rc);
            boolean firstHere = epoch == 0;
            boolean nowPrimary = rc.primaryNodeId().equals(self);
            boolean reset = resets(rc);
            // another node was the primary until now: the copies it leaves in sync may differ where its
            // last writes reached some and not others
            boolean promoted = reset && nowPrimary && !primary && !firstHere;
            if (reset) {
                if (!(primary && nowPrimary)) {
                    // another node was (or becomes) the primary: it gave the copies tokens of its own
                    tokens.clear();
                }
                epoch = rc.epoch();
                primary = nowPrimary;
                fenced = false;
                unconfirmed = false;
                toConfirm.clear();
                copies.clear();
                announced.clear();
                forwarded.failWaiting(answers);
                syncSequence = rc.syncSequence();
                confirmedSequence = rc.syncSequence();
                lastDropSequence = 0;
                echoFloor = 0;
                maybeInSync = new HashSet<>();
                kept = null;
            }
            if (!primary) {
                copies.clear();
                forwarded.failWaiting(answers); // deposed by a peer before this config said so
                hold.releaseHeld(answers);
                return answers;
            }
            Set<UUID> named = namedIn(rc);
            boolean restarted = firstHere && store.fromEarlierRun;
            if (restarted) {
                tokens.putAll(SyncState.tokensIn(store.syncStateFile()));
            }
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
                    c.tokened = tokens.containsKey(cc.nodeId());
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
            tokens.keySet().retainAll(named);
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
            forwarded.releaseWaiting(answers);
            hold.releaseHeld(answers);
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
     * A request of node {@code sender} for this volume arrived with {@code peerEpoch}: the status to
     * answer. A node the config does not name for the volume is refused ({@link ReplicationWire#NOT_A_COPY}).
     * A higher epoch than this node has seen is learned, and fences this node if it was the primary.
     */
    int admit(UUID sender, long peerEpoch) {
        boolean newer;
        synchronized (this) {
            if (!members.contains(sender)) {
                return ReplicationWire.NOT_A_COPY; // neither its primary nor a copy: it may not write, nor fence this node
            }
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
        hold.startHeld();
        return ReplicationWire.OK;
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
    void flushFailed(ReplicaCopy c, int status) {
        failed(c);
        if (status != ReplicationWire.LINK_DOWN && copies.get(c.node) == c) {
            c.markAllDirty(store.size());
        }
    }

    /** Caller holds this: {@code c} failed a request; it leaves the in-sync set if it was in it. */
    void failed(ReplicaCopy c) {
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

    /**
     * Caller holds this: {@code c} answered {@link ReplicationWire#NEW_COPY} (rule 8): its file
     * holds nothing this primary sent before. It leaves the set, is wholly dirty, and is given a
     * new token by its next PING.
     */
    void newCopy(ReplicaCopy c) {
        if (copies.get(c.node) != c) {
            return;
        }
        boolean wasIn = c.state == State.IN_SYNC;
        tokens.remove(c.node);
        c.tokened = false;
        failed(c);
        c.markAllDirty(store.size());
        keepSyncState();
        LOG.log(System.Logger.Level.WARNING, "volume {0}: the copy on node {1} holds a new data file, not the one this"
                + " primary sent its writes to (its data lost, its disk replaced){2}; it is copied whole", id, c.node,
                wasIn ? ", though it was in sync" : "");
    }

    /** Caller holds this: {@code c} kept {@code token}, given by an adopting PING (rule 8). */
    void adopted(ReplicaCopy c, long token) {
        if (copies.get(c.node) == c) {
            tokens.put(c.node, token);
            c.tokened = true;
            keepSyncState();
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
    void unreachableWhileUnconfirmed(ReplicaCopy c) {
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
        SyncState state = new SyncState(epoch, syncSequence, in, may, Map.copyOf(tokens));
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
    void deposed(long peerEpoch) {
        epoch = Math.max(epoch, peerEpoch);
        primary = false;
        if (!fenced) {
            fenced = true;
            changed.run();
        }
        if (forwarded.hasWaiting()) {
            // Rule 3: requests in flight are answered ESHUTDOWN, now: a deposed primary has usually
            // lost the control plane, whose next config would otherwise be what fails them.
            List<Runnable> owed = new ArrayList<>();
            forwarded.failWaiting(owed);
            hold.owe(owed);
        }
    }

    /** Ends this volume's replication here (volume removed or no longer replicated): waiting requests fail. */
    List<Runnable> close() {
        List<Runnable> answers = new ArrayList<>();
        synchronized (this) {
            closed = true;
            primary = false;
            fenced = true;
            forwarded.failWaiting(answers);
            hold.releaseHeld(answers);
            forwarded.failHeldForwards(answers);
        }
        return answers;
    }

    /**
     * Caller holds this: {@code c}, still this epoch's copy, answered this epoch's PING with OK
     * ({@link CopyResync#announce}): it is announced, and, the last copy in sync at a restart to
     * answer, confirms this node (rule 7).
     */
    void pingAnswered(ReplicaCopy c) {
        announced.add(c.node);
        if (unconfirmed && toConfirm.remove(c.node) && toConfirm.isEmpty()) {
            unconfirmed = false;
            LOG.log(System.Logger.Level.INFO, "volume {0}: the copies in sync confirmed epoch {1} (the last on"
                    + " node {2}); serving it", id, epoch, c.node);
        }
    }

    /**
     * Caller holds this: resyncing copy {@code c} answered the FLUSH sent once it had nothing left,
     * and still has nothing left ({@link CopyResync#joinIfCopied}): it joins the in-sync set, and
     * the sequence rises.
     */
    void joined(ReplicaCopy c) {
        c.state = State.IN_SYNC;
        c.outSince = 0;
        syncSequence++;
        keepSyncState();
        changed.run();
        long nanos = System.nanoTime() - c.resyncSince;
        LOG.log(System.Logger.Level.INFO, "volume {0}: the copy on node {1} is in sync: resync copied {2,number,#}"
                + " bytes in {3,number,#} ms", id, c.node, c.resyncBytes, nanos / 1_000_000);
    }

    /**
     * Whether, serving primary, it has reported a sequence no config has echoed yet (under a
     * control plane): the requests that need the echo wait, and the report should go out again if
     * it does not come.
     */
    synchronized boolean awaitingEcho() {
        return acting() && !configFileOnly && kept != null && kept.sequence() > confirmedSequence;
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
