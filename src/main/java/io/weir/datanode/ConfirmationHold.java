package io.weir.datanode;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * What a {@link ReplicatedVolume} holds back from its clients until it may answer: rule 7's hold
 * on the client requests of a restarted primary not yet confirmed ({@link #holdUntilConfirmed},
 * started or refused once that is decided), and the answers a deposition owes the requests that
 * waited for an echo ({@link #owe}). Both are given out by {@link #startHeld}, outside the lock,
 * after whatever can decide them. Whether the node is confirmed, and its role, are the volume's;
 * this class reads them. Guarded by the {@link ReplicatedVolume} it belongs to: its state is read
 * and written with that object's monitor held (the volatile counts let the common case, nothing
 * held, skip it), and it has no lock of its own.
 */
final class ConfirmationHold {

    private final ReplicatedVolume v;
    /** Rule 7: client requests held while unconfirmed; {@link #heldCount} counts them. */
    private final List<Held> held = new ArrayList<>();
    private volatile int heldCount;
    /** Answers of waiting requests that a deposition failed, owed once the lock is let go ({@link #startHeld}). */
    private final List<Runnable> owed = new ArrayList<>();
    private volatile boolean answersOwed;

    /** A client request held by {@link #holdUntilConfirmed}: whose it is, and what to tell it once decided. */
    private record Held(Object owner, Consumer<Boolean> resume) {
    }

    ConfirmationHold(ReplicatedVolume v) {
        this.v = v;
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
        if (!v.unconfirmed) {
            return false; // the common case: no lock on the selector thread
        }
        synchronized (v) {
            if (!v.awaitingConfirmation()) {
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
        synchronized (v) {
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

    /** Client requests held until this node is confirmed as the primary or deposed (rule 7). */
    int heldRequests() {
        return heldCount;
    }

    /**
     * Caller holds the volume's monitor: once confirmation is decided, moves the held requests,
     * told the decision, to {@code start}.
     */
    void releaseHeld(List<Runnable> start) {
        if (!held.isEmpty() && !v.awaitingConfirmation()) {
            boolean serving = v.primary && !v.fenced && !v.unconfirmed;
            for (Held h : held) {
                start.add(() -> h.resume().accept(serving));
            }
            held.clear();
            heldCount = 0;
        }
    }

    /**
     * Caller holds the volume's monitor: a deposition failed waiting requests; their
     * {@code answers} are owed, given by the next {@link #startHeld}.
     */
    void owe(List<Runnable> answers) {
        owed.addAll(answers);
        answersOwed = true;
    }

    /**
     * Starts the held requests if confirmation was decided, and answers the waiting requests a
     * deposition failed; called outside the lock after what can decide either.
     */
    void startHeld() {
        if (heldCount == 0 && !answersOwed) {
            return;
        }
        List<Runnable> start = new ArrayList<>();
        synchronized (v) {
            releaseHeld(start);
            start.addAll(owed);
            owed.clear();
            answersOwed = false;
        }
        start.forEach(Runnable::run);
    }
}
