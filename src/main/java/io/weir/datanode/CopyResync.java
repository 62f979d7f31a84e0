package io.weir.datanode;

import io.weir.datanode.ReplicaCopy.State;
import io.weir.datanode.ReplicaCopy.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What {@link Replication}'s driver does with each copy of a {@link ReplicatedVolume} it is the
 * primary of: which copies to keep links to ({@link #copiesToReach}), announcing the epoch to
 * each ({@link #announce}: an OK lets an out-of-sync copy start its resync, and counts towards
 * rule 7's confirmation), the resync's steps ({@link #nextStep}, {@link #stepDone},
 * {@link #stepNotSent}), the FLUSH
 * after which a resynced copy joins the in-sync set ({@link #joinIfCopied}), the FLUSH that
 * bounds what a copy holds unforced ({@link #flushIfDue}), and how long the volume has been
 * under-replicated. The copies' bookkeeping is {@link ReplicaCopy}'s; the in-sync set, the
 * sequence and the epoch are the volume's, which changes them ({@link ReplicatedVolume#joined},
 * {@link ReplicatedVolume#failed}, {@link ReplicatedVolume#deposed}). Guarded by the
 * {@link ReplicatedVolume} it belongs to: it has no state of its own, reads and writes the
 * volume's copies with that object's monitor held, and sends outside it.
 */
final class CopyResync {

    /** The volume's logger: what is logged here is the volume's. */
    private static final System.Logger LOG = ReplicatedVolume.LOG;

    private final ReplicatedVolume v;

    CopyResync(ReplicatedVolume v) {
        this.v = v;
    }

    /** The copies whose links the driver should keep up: every copy of a primary that serves. */
    List<ReplicaCopy> copiesToReach() {
        synchronized (v) {
            return v.acting() ? new ArrayList<>(v.copies.values()) : List.of();
        }
    }

    /**
     * Whether to announce this epoch to {@code c} now: it still needs it (no PING answered OK yet,
     * or none since {@code link} connected again: the copy may have come back with a new file, rule
     * 8) and was last sent one at least {@link Replication#RETRY_NANOS} before {@code now}. If so,
     * {@code now} is noted as its last announcement.
     */
    boolean announceDue(ReplicaCopy c, ReplicaLink link, long now) {
        synchronized (v) {
            long connection = link.connection();
            if (!v.acting() || v.announced.contains(c.node) && c.announcedOn == connection && connection != 0
                    || v.copies.get(c.node) != c
                    || c.lastAnnounce != 0 && now - c.lastAnnounce < Replication.RETRY_NANOS) {
                return false;
            }
            c.lastAnnounce = now;
            c.announcedOn = connection;
            return true;
        }
    }

    /** The driver could not reach {@code c}: while unconfirmed (rule 7), an in-sync copy leaves the set. */
    void unreachable(ReplicaCopy c) {
        synchronized (v) {
            v.unreachableWhileUnconfirmed(c);
        }
    }

    /**
     * Sends a PING of this epoch to {@code c}, with the token its file should hold, or a new one to
     * keep if it has none from this primary (rule 8); an OK marks it announced, and lets an
     * out-of-sync copy start its resync.
     */
    void announce(ReplicaCopy c, ReplicaLink link) {
        long e;
        long token;
        boolean adopt;
        synchronized (v) {
            e = v.epoch;
            Long kept = v.tokens.get(c.node);
            adopt = kept == null;
            token = adopt ? newToken() : kept;
        }
        link.send(ReplicationWire.PING, adopt ? ReplicationWire.FLAG_ADOPT : (byte) 0, v.id, e, token, 0, null, (status, peerEpoch) -> {
            synchronized (v) {
                boolean ok = status == ReplicationWire.OK || status == ReplicationWire.ADOPTED;
                if (!ok && status != ReplicationWire.NEW_COPY) {
                    c.announcedOn = 0; // not answered (no config there yet, its link down): asked again
                }
                if (status == ReplicationWire.STALE_EPOCH) {
                    v.deposed(peerEpoch);
                } else if (status == ReplicationWire.NEW_COPY) {
                    v.newCopy(c);
                } else if (!ok && e == v.epoch) {
                    v.unreachableWhileUnconfirmed(c);
                } else if (ok && v.copies.get(c.node) == c && e == v.epoch) {
                    if (adopt && status == ReplicationWire.ADOPTED) { // a copy of a release without tokens answers OK
                        v.adopted(c, token);
                    }
                    v.pingAnswered(c);
                    if (c.state == State.OUT) {
                        c.startResync();
                    }
                }
            }
            v.hold.startHeld();
        });
    }

    /** A copy token: a positive number (a request's offset on the wire; 0 means none). */
    private static long newToken() {
        return java.util.concurrent.ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    }

    /**
     * The next run of dirty regions of {@code c} to copy (at most {@link ReplicaCopy#STEP_BYTES}), taken off
     * its dirty map and marked on its way; null when there is none now, or while its steps pause
     * after one that failed here ({@link #stepNotSent}).
     */
    Step nextStep(ReplicaCopy c, long now) {
        synchronized (v) {
            if (!v.acting() || v.unconfirmed || c.state == State.OUT || v.copies.get(c.node) != c) {
                return null; // unconfirmed (rule 7): a copy not yet told of a promotion would take old data
            }
            if (c.stepsPausedUntil != 0 && now - c.stepsPausedUntil < 0) {
                return null;
            }
            return c.takeStep(v.store.size(), v.epoch);
        }
    }

    /** A step's copy was answered by the copy (or its link failed): on failure its regions are dirty again, and the copy is out. */
    void stepDone(Step s, int status, long peerEpoch) {
        stepAnswered(s, status, peerEpoch);
        v.hold.startHeld(); // a deposition decides confirmation
    }

    /**
     * A step failed on this node before it was sent: its read failed, memory for it ran out, or
     * the replication task refused it (its queue full, or the task gone). That says nothing of
     * the copy, which keeps its place (in sync or resyncing): the step's regions are dirty again,
     * and its next steps wait {@link Replication#RETRY_NANOS}, so that a disk that keeps failing
     * or a full queue does not have the driver retry every tick.
     */
    void stepNotSent(Step s) {
        synchronized (v) {
            ReplicaCopy c = s.copy();
            c.stepAnswered(s, false);
            c.stepsPausedUntil = System.nanoTime() + Replication.RETRY_NANOS;
        }
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
        synchronized (v) {
            if (c.joining || c.steps() > 0 || !copied(c, v.epoch)) {
                return;
            }
            c.joining = true;
            flushSent = c.flushSent();
            e = v.epoch;
            mark = c.sent;
        }
        long sent = flushSent;
        link.send(ReplicationWire.FLUSH, c.flags((byte) 0), v.id, e, 0, 0, null, (status, peerEpoch) -> {
            flushed(c, e, mark, sent, status, peerEpoch);
            v.hold.startHeld(); // a deposition decides confirmation
        });
    }

    /**
     * The driver: {@code c} has held a write unforced for {@code every} nanoseconds or more
     * ({@link Replication#FLUSH_EVERY}): it is sent a FLUSH, and what it held unforced is forced
     * once that is answered. One that fails is handled as a client's
     * ({@link ReplicatedVolume#flushFailed}).
     */
    void flushIfDue(ReplicaCopy c, ReplicaLink link, long now, long every) {
        long e;
        long sent;
        synchronized (v) {
            if (!v.acting() || v.copies.get(c.node) != c || !c.flushDue(now, every)) {
                return;
            }
            sent = c.flushSent();
            e = v.epoch;
        }
        link.send(ReplicationWire.FLUSH, c.flags((byte) 0), v.id, e, 0, 0, null, (status, peerEpoch) -> {
            synchronized (v) {
                if (status == ReplicationWire.STALE_EPOCH) {
                    v.deposed(peerEpoch);
                } else if (status == ReplicationWire.NEW_COPY) {
                    v.newCopy(c);
                } else if (status != ReplicationWire.OK) {
                    v.flushFailed(c, status);
                } else {
                    c.flushAnswered(sent);
                }
            }
            v.hold.startHeld(); // a deposition decides confirmation
        });
    }

    /** Tests: regions copy {@code node} holds unforced (answered since the last FLUSH it answered). */
    int unforcedRegions(UUID node) {
        synchronized (v) {
            return v.copies.get(node).unforcedRegions();
        }
    }

    /**
     * Caller holds the volume's monitor: whether a resyncing copy has nothing dirty or on its way,
     * at epoch {@code at}, as the copy of the acting, confirmed primary.
     */
    private boolean copied(ReplicaCopy c, long at) {
        return c.state == State.RESYNCING && c.nothingLeft() && v.copies.get(c.node) == c
                && at == v.epoch && v.acting() && !v.unconfirmed;
    }

    /** The FLUSH of a copy whose resync had nothing left was answered: it joins if it still has nothing left. */
    private void flushed(ReplicaCopy c, long at, long mark, long flushSent, int status, long peerEpoch) {
        synchronized (v) {
            c.joining = false;
            if (status == ReplicationWire.STALE_EPOCH) {
                v.deposed(peerEpoch);
                return;
            }
            if (status == ReplicationWire.NEW_COPY) {
                v.newCopy(c);
                return;
            }
            if (status != ReplicationWire.OK) {
                v.flushFailed(c, status);
                return;
            }
            c.flushAnswered(flushSent);
            if (!copied(c, at) || c.sent != mark) {
                return; // sent more, or dirtied, since that FLUSH: once it is copied, the driver flushes again
            }
            v.joined(c);
        }
    }

    private void stepAnswered(Step s, int status, long peerEpoch) {
        synchronized (v) {
            ReplicaCopy c = s.copy();
            c.stepAnswered(s, status == ReplicationWire.OK);
            if (status == ReplicationWire.STALE_EPOCH) {
                v.deposed(peerEpoch);
            } else if (status == ReplicationWire.NEW_COPY) {
                v.newCopy(c);
            } else if (status != ReplicationWire.OK) {
                v.failed(c);
            } else if (c.state == State.IN_SYNC && c.resyncSince != 0 && c.nothingLeft()) {
                LOG.log(System.Logger.Level.INFO, "volume {0}: copied again to the copy on node {1}: {2,number,#} bytes in"
                        + " {3,number,#} ms", v.id, c.node, c.resyncBytes, (System.nanoTime() - c.resyncSince) / 1_000_000);
                c.resyncSince = 0;
            }
        }
    }

    /** Resync steps of {@code c} queued or on their way. */
    int steps(ReplicaCopy c) {
        synchronized (v) {
            return c.steps();
        }
    }

    /** How long the longest out-of-sync copy has been out (ns), 0 when all are in sync or this node is not the primary. */
    long underReplicatedNanos(long now) {
        synchronized (v) {
            long longest = 0;
            if (v.acting()) {
                for (ReplicaCopy c : v.copies.values()) {
                    if (c.state != State.IN_SYNC && c.outSince != 0) {
                        longest = Math.max(longest, now - c.outSince);
                    }
                }
            }
            return longest;
        }
    }
}
