package io.weir.datanode;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.UUID;

/**
 * Another node's copy of a replicated volume, as its primary sees it: in sync, resyncing or out,
 * the {@value #REGION_BYTES}-byte regions it lacks (its dirty map), those a resync step is
 * copying now, those it holds unforced (written since the last FLUSH it answered: a copy that
 * fails may have lost them to a power loss, so they are dirty once it leaves), and its resync's
 * progress. The rules that move it between states are
 * {@link ReplicatedVolume}'s (its client path in {@link ForwardedRequests}, its resync in
 * {@link CopyResync}); this class keeps the bookkeeping they share. Guarded by the
 * {@link ReplicatedVolume} it belongs to: every method but {@link #address()} is called with that
 * object's monitor held, by it or by its helpers.
 */
final class ReplicaCopy {

    /** Granularity of the dirty maps: 64 KiB, 16 Ki bits per GiB of volume. */
    static final int REGION_BYTES = 64 << 10;
    /** Most a resync step copies: consecutive dirty regions up to 1 MiB, the NBD request piece. */
    static final int STEP_BYTES = NbdRequest.PIECE_BYTES;

    enum State { IN_SYNC, RESYNCING, OUT }

    /** A range to copy to a resyncing copy: regions taken off its dirty map and marked on their way. */
    record Step(ReplicaCopy copy, long offset, int length, int firstRegion, int regions, long epoch, long number) {

        /** Whether it covers a region of {@code [offset, offset + length)}. */
        boolean covers(long offset, long length) {
            return length > 0 && offset / REGION_BYTES < firstRegion + regions
                    && (offset + length - 1) / REGION_BYTES >= firstRegion;
        }
    }

    final UUID node;
    /**
     * Whether its primary gave its data file a token (rule 8 of {@link ReplicatedVolume}); read
     * by the threads that send it requests, written under the volume's monitor.
     */
    volatile boolean tokened;
    /** Read by the replication driver outside the volume's lock, to find the copy's link. */
    private volatile String address;
    State state;
    private final BitSet dirty = new BitSet();
    /** The resync steps queued or on their way (a few at most): the regions being copied now. */
    private final List<Step> onItsWay = new ArrayList<>(2);
    /** How many steps have been taken: the last one's number. */
    private long stepsTaken;
    /**
     * Regions it answered writes to (not FUA) since the last FLUSH sent to it: in its page cache,
     * not yet forced, so a power loss there may take them.
     */
    private final BitSet unflushed = new BitSet();
    /** Regions the FLUSHes on their way to it cover, until the last of them is answered. */
    private final BitSet flushing = new BitSet();
    private int flushes;
    /**
     * How many times it left: a FLUSH sent before it last left is not in {@link #flushes}, and
     * its answer forces nothing counted since.
     */
    private long departures;
    /** Since when {@link #unflushed} holds a region (System.nanoTime): the age of its oldest unforced write. */
    private long unflushedSince;
    /**
     * Client writes held back from it, in sync, until the steps on their way over their regions
     * when they came are answered ({@link ReplicatedVolume}, rule 4;
     * {@link ForwardedRequests#releaseHeldForwards}), counted until each is sent or failed: while
     * any is, later ones are held behind it.
     */
    int heldForwards;
    /** Where the next step looks for dirty regions first: a resync sweeps the volume once. */
    private int cursor;
    /** When it left the in-sync set (System.nanoTime), or 0. */
    long outSince;
    /** When its current resync began (System.nanoTime), and the bytes it has copied since. */
    long resyncSince;
    long resyncBytes;
    /** When the driver last sent it this epoch's PING (System.nanoTime), or 0. */
    long lastAnnounce;
    /** The connection of its link ({@link ReplicaLink#connections}) its last announcement went on. */
    long announcedOn;
    /**
     * Until when (System.nanoTime) it is sent no resync step, after one failed on its primary's
     * side ({@link CopyResync#stepNotSent}); 0 if none did.
     */
    long stepsPausedUntil;
    /** A resynced copy's FLUSH is on its way: it joins once that is answered. */
    boolean joining;
    /**
     * Counts resync steps taken and departures from the set: a FLUSH sent before the count
     * moved does not cover what was sent since, and the copy does not join on it.
     */
    long sent;

    ReplicaCopy(UUID node, String address, State state) {
        this.node = node;
        this.address = address;
        this.state = state;
    }

    /** Its replication address (host:port); null until the control plane knows it. Any thread. */
    String address() {
        return address;
    }

    void address(String address) {
        this.address = address;
    }

    /** It lacks {@code [offset, offset + length)}. */
    void markDirty(long offset, long length) {
        if (length > 0) {
            dirty.set((int) (offset / REGION_BYTES), (int) ((offset + length - 1) / REGION_BYTES) + 1);
        }
    }

    /** It lacks all of a volume of {@code size} bytes: it is to be copied whole. */
    void markAllDirty(long size) {
        dirty.set(0, (int) ((size + REGION_BYTES - 1) / REGION_BYTES));
    }

    /** Whether a resync step is copying a region of {@code [offset, offset + length)} now. */
    boolean onTheWay(long offset, long length) {
        return onTheWay(offset, length, Long.MAX_VALUE);
    }

    /** Resync steps queued or on their way. */
    int steps() {
        return onItsWay.size();
    }

    /** Whether it has no region dirty and none on its way. */
    boolean nothingLeft() {
        return dirty.isEmpty() && onItsWay.isEmpty();
    }

    /** Bytes still to copy to it, of a volume of {@code size} bytes. */
    long remainingBytes(long size) {
        long regions = dirty.cardinality();
        for (Step s : onItsWay) {
            regions += s.regions();
        }
        return Math.min(size, regions * REGION_BYTES);
    }

    /**
     * It leaves the in-sync set (if it was in it), or its resync stops: it is out. What it had not
     * forced is dirty too: whatever failed may have been its node losing power.
     */
    void leave() {
        if (state == State.IN_SYNC) {
            outSince = System.nanoTime();
        }
        state = State.OUT;
        sent++;
        dirty.or(unflushed);
        dirty.or(flushing);
        unflushed.clear();
        flushing.clear();
        flushes = 0;
        departures++;
    }

    /**
     * It answered a write to {@code [offset, offset + length)} (not FUA): applied, not yet forced.
     * An answer that reaches the primary after the copy left (another request's failure was
     * handled first) makes the region dirty: nothing will force it before the copy rejoins.
     */
    void written(long offset, long length) {
        if (length > 0) {
            answered((int) (offset / REGION_BYTES), (int) ((offset + length - 1) / REGION_BYTES) + 1);
        }
    }

    /**
     * It answered regions {@code [from, to)} written, not forced: unforced, or dirty if it left
     * before the answer reached its primary.
     */
    private void answered(int from, int to) {
        if (state == State.OUT) {
            dirty.set(from, to);
            return;
        }
        if (unflushed.isEmpty()) {
            unflushedSince = System.nanoTime();
        }
        unflushed.set(from, to);
    }

    /**
     * A FLUSH is sent to it: it covers every write answered so far. Returns what its answer is to
     * give back to {@link #flushAnswered}.
     */
    long flushSent() {
        flushing.or(unflushed);
        unflushed.clear();
        flushes++;
        return departures;
    }

    /**
     * Whether its primary should send it a FLUSH of its own at {@code now}: it is in sync or
     * resyncing and has held a write unforced, not covered by a FLUSH sent, for {@code every}
     * nanoseconds or more.
     */
    boolean flushDue(long now, long every) {
        return state != State.OUT && !unflushed.isEmpty() && now - unflushedSince >= every;
    }

    /**
     * A FLUSH sent to it was answered OK; {@code sent}: what {@link #flushSent} returned for it.
     * Once every one on its way is answered, what they covered is on its disk. One sent before it
     * last left counts for nothing: it was counted out when it left, and what it covered is dirty.
     * (One that fails makes it leave.)
     */
    void flushAnswered(long sent) {
        if (sent == departures && flushes > 0 && --flushes == 0) {
            flushing.clear();
        }
    }

    /** Regions it may lose to a power loss now: written since the last FLUSH it answered. */
    int unforcedRegions() {
        BitSet b = (BitSet) unflushed.clone();
        b.or(flushing);
        return b.cardinality();
    }

    /** An out-of-sync copy, told of the epoch, starts its resync: a sweep of its dirty map. */
    void startResync() {
        state = State.RESYNCING;
        cursor = 0;
        resyncSince = System.nanoTime();
        resyncBytes = 0;
    }

    /**
     * The next run of dirty regions (at most {@link #STEP_BYTES}) of a volume of {@code size}
     * bytes at {@code epoch}, taken off the dirty map and marked on its way; null when there is
     * none now.
     */
    Step takeStep(long size, long epoch) {
        int first = dirty.nextSetBit(cursor);
        if (first < 0 && cursor > 0) {
            first = dirty.nextSetBit(0);
        }
        if (first < 0) {
            return null;
        }
        int max = STEP_BYTES / REGION_BYTES;
        int end = first;
        while (end < first + max && dirty.get(end) && !onTheWay((long) end * REGION_BYTES, 1)) {
            end++;
        }
        if (end == first) {
            return null; // its first region is still on its way
        }
        dirty.clear(first, end);
        cursor = end;
        sent++;
        long offset = (long) first * REGION_BYTES;
        int length = (int) Math.min((long) (end - first) * REGION_BYTES, size - offset);
        Step s = new Step(this, offset, length, first, end - first, epoch, ++stepsTaken);
        onItsWay.add(s);
        return s;
    }

    /** How many steps have been taken: the number of the last one. */
    long stepsTaken() {
        return stepsTaken;
    }

    /**
     * Whether a step on its way that was taken no later than number {@code upTo} covers a region
     * of {@code [offset, offset + length)}: one taken later read the region later.
     */
    boolean onTheWay(long offset, long length, long upTo) {
        for (Step s : onItsWay) {
            if (s.number() <= upTo && s.covers(offset, length)) {
                return true;
            }
        }
        return false;
    }

    /** Step {@code s} was answered: its regions are no longer on their way, and dirty again unless {@code ok}. */
    void stepAnswered(Step s, boolean ok) {
        onItsWay.remove(s);
        if (ok) {
            resyncBytes += s.length();
            answered(s.firstRegion(), s.firstRegion() + s.regions()); // steps are not forced either
        } else {
            dirty.set(s.firstRegion(), s.firstRegion() + s.regions());
        }
    }

    /** {@code flags} for a request to this copy: with {@link ReplicationWire#FLAG_TOKENED} once it holds a token. */
    byte flags(byte flags) {
        return tokened ? (byte) (flags | ReplicationWire.FLAG_TOKENED) : flags;
    }
}
