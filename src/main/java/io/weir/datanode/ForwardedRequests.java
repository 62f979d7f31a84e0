package io.weir.datanode;

import io.weir.datanode.ReplicaCopy.State;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.IntConsumer;

/**
 * The primary's client path of a {@link ReplicatedVolume}: each client write, trim, write-zeroes
 * and flush done locally, forwarded to the copies in sync and resyncing and answered once they
 * all have (rule 1 of {@link ReplicatedVolume}); the requests a copy failed, held until a config
 * echoes the sequence they need (rule 2: {@link #waitingWrites}); the client writes held back from
 * a copy in sync until the resync steps over their range have landed (rule 4:
 * {@link #releaseHeldForwards}); and whether the links to the copies were last found up
 * ({@link #forwardsAtOnce}). The volume's epoch, role, copies and sequences stay there, and what
 * a copy's failure or a deposition changes of them is the volume's to change; this class reads
 * them. Guarded by the {@link ReplicatedVolume} it belongs to: its state is read and written with
 * that object's monitor held, and it has no lock of its own; sends, and the answers to clients,
 * happen outside that monitor.
 */
final class ForwardedRequests {

    /** A forwarded request waiting for its copies' answers. */
    private static final class Pending {
        final IntConsumer done;
        final long offset;
        final long length;
        final boolean changesData;
        /** FUA: a copy that answers it has forced it. */
        final boolean forced;
        /** The epoch it was sent in: answered only by a primary still acting in it. */
        final long epoch;
        int remaining;
        long requiredSequence;
        boolean stale;

        Pending(IntConsumer done, long offset, long length, boolean changesData, boolean forced, long requiredSequence,
                long epoch) {
            this.epoch = epoch;
            this.done = done;
            this.offset = offset;
            this.length = length;
            this.changesData = changesData;
            this.forced = forced;
            this.requiredSequence = requiredSequence;
        }
    }

    /** The volume's logger: what is logged here is the volume's. */
    private static final System.Logger LOG = ReplicatedVolume.LOG;

    private final ReplicatedVolume v;
    /** Client writes held back from a copy by rule 4, in the order they came; {@link #releaseHeldForwards} sends them. */
    private final java.util.ArrayDeque<HeldForward> heldForwards = new java.util.ArrayDeque<>();
    private final List<Pending> waiting = new ArrayList<>();
    /**
     * Whether the last {@link #forward} found every copy's link up ({@link #forwardsAtOnce});
     * false until the first that sends, and left as it was by one with no copy to send to.
     */
    private volatile boolean linksUp;

    ForwardedRequests(ReplicatedVolume v) {
        this.v = v;
    }

    /** Requests done here and on the copies that wait for a config to echo a sequence (rule 2). */
    int waitingWrites() {
        synchronized (v) {
            return waiting.size();
        }
    }

    /** Caller holds the volume's monitor: whether requests wait for a config to echo a sequence. */
    boolean hasWaiting() {
        return !waiting.isEmpty();
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
        synchronized (v) {
            if (v.primary && !v.fenced) {
                flushSent = changesData ? null : new long[v.copies.size()];
                sendEpoch = v.epoch;
                tracked = new Pending(done, offset, length, changesData, fua, v.lastDropSequence, sendEpoch);
                int heldBack = 0;
                for (ReplicaCopy c : v.copies.values()) {
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
        ReplicaLink link = v.links.link(cb.c);
        if (link == null) {
            ReplyBatch.writeHeld(); // the answer may write the in-sync set to disk
            cb.done(ReplicationWire.LINK_DOWN, 0);
            return false;
        }
        boolean up = link.isUp();
        link.send(type, cb.c.flags(flags), v.id, sendEpoch, offset, length, data == null ? null : data.duplicate(), cb);
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
        synchronized (v) {
            if (heldForwards.isEmpty()) {
                return;
            }
            at = v.epoch;
            Set<ReplicaCopy> blocked = new HashSet<>();
            for (java.util.Iterator<HeldForward> it = heldForwards.iterator(); it.hasNext(); ) {
                HeldForward f = it.next();
                ReplicaCopy c = f.c();
                boolean gone = v.copies.get(c.node) != c;
                if (gone && f.epoch() == v.epoch && v.acting()) {
                    it.remove();
                    dropped.add(f);
                } else if (gone || !v.acting() || c.state == State.OUT) {
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
                    LOG.log(System.Logger.Level.WARNING, "volume {0}: sending a held write to node {1}: {2}", v.id,
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
            synchronized (v) { // sent or answered: the copy's next writes go straight to it, after these
                for (List<HeldForward> taken : List.of(send, dropped, fail)) {
                    taken.forEach(f -> f.c().heldForwards--);
                }
            }
        }
    }

    /**
     * Caller holds the volume's monitor, the volume fenced ({@link ReplicatedVolume#close}): moves
     * to {@code answers} the answers of the held client writes, as if their links were down (so
     * each is answered {@code ESHUTDOWN}).
     */
    void failHeldForwards(List<Runnable> answers) {
        for (HeldForward f : heldForwards) { // fenced: each is answered ESHUTDOWN
            answers.add(() -> new Forwarded(f.p(), f.c()).done(ReplicationWire.LINK_DOWN, 0));
        }
        heldForwards.clear();
    }

    /** Tests: client writes held back from copy {@code node} by rule 4. */
    int heldForwards(UUID node) {
        synchronized (v) {
            ReplicaCopy c = v.copies.get(node);
            return c == null ? 0 : c.heldForwards;
        }
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
        synchronized (v) {
            if (status == ReplicationWire.STALE_EPOCH) {
                p.stale = true;
                v.deposed(peerEpoch);
            } else if (status != ReplicationWire.OK) {
                if (status == ReplicationWire.NEW_COPY) {
                    v.newCopy(c); // rule 8: wholly dirty, this request's regions with the rest
                } else if (p.changesData) {
                    v.failed(c);
                    c.markDirty(p.offset, p.length);
                } else {
                    v.flushFailed(c, status);
                }
                p.requiredSequence = Math.max(p.requiredSequence, v.lastDropSequence);
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
        v.hold.startHeld(); // a deposition decides confirmation, and owes the waiting requests their answers
    }

    /** All copies answered: answer now, or wait for the config that echoes the sequence the request needs. */
    private void settle(Pending p) {
        int answer;
        synchronized (v) {
            // a config of another epoch reset the volume's copies and sequences: what this request's
            // copies answered says nothing of the volume's copies now (a copy that failed it is
            // no longer one), and this node may not be the primary any more
            if (p.stale || !v.acting() || v.epoch != p.epoch) {
                answer = Nbd.ESHUTDOWN;
            } else if (!v.configFileOnly && Math.max(p.requiredSequence, v.echoFloor) > v.confirmedSequence) {
                waiting.add(p);
                return;
            } else {
                answer = 0;
            }
        }
        p.done.accept(answer);
    }

    /**
     * Caller holds the volume's monitor: moves to {@code answers} the waiting requests the echoed
     * sequence released, answered 0.
     */
    void releaseWaiting(List<Runnable> answers) {
        for (var it = waiting.iterator(); it.hasNext();) {
            Pending p = it.next();
            if (Math.max(p.requiredSequence, v.echoFloor) <= v.confirmedSequence) {
                it.remove();
                answers.add(() -> p.done.accept(0));
            }
        }
    }

    /**
     * Caller holds the volume's monitor: moves to {@code answers} every waiting request, answered
     * {@code ESHUTDOWN}.
     */
    void failWaiting(List<Runnable> answers) {
        for (Pending p : waiting) {
            answers.add(() -> p.done.accept(Nbd.ESHUTDOWN));
        }
        waiting.clear();
    }
}
