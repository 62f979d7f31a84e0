package io.weir.datanode;

import io.weir.scheduler.QosExecutor;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Replies a worker holds back while it runs a batch of requests, then writes per connection in
 * one gathering write instead of one write each: the data node's
 * {@link QosExecutor.BatchListener}.
 *
 * <p>Each reply written to a socket costs a system call, the TCP path and, on the client's side,
 * a wake-up and a read: at 4 KiB that is a large part of what a request costs both sides. While
 * a worker runs a batch (more than one request, which it takes only while the backlog is deep),
 * the replies its requests make ({@link NbdConnection#send}) and the ends of those requests
 * ({@link NbdConnection#requestDone}) are held here, and go out:
 * <ul>
 *   <li>after the batch's last request;</li>
 *   <li>before a request that may wait (anything but {@linkplain Work#quick quick} work, which
 *       only NBD requests and a copy's applying of its primary's writes can be: a FLUSH or FUA, a
 *       replicated volume's write whose last forward found a link to a copy down, a background
 *       task's step all may), so that no reply waits for the disk or the network on another
 *       request's behalf; a request that finds out only as it runs that it must wait (a link gone
 *       down since) writes what is held first ({@link #writeHeld});</li>
 *   <li>after a request that ran the hold time or longer (a slow store's, say), its own reply
 *       included: such requests gain little from sharing a write;</li>
 *   <li>once the first held reply has waited the hold time ({@link #DEFAULT_HOLD_NANOS}) for the
 *       requests after it;</li>
 *   <li>before a reply that would not fit in {@link #CAPACITY}.</li>
 * </ul>
 * So a reply waits at most the hold time plus the run of one quick request begun within it: a
 * quick request that turns out slow (a read that misses the page cache) delays the replies held
 * before it by its run. A connection's held replies are written before its held request ends are
 * counted, so a connection draining to close (after NBD_CMD_DISC) never closes with one of them
 * still held. A worker outside a batch, and every other thread, sends at once, but for a
 * replication link's reader, which holds the client replies that one read of a copy's answers
 * completes ({@link #startHolding}). The write of the held replies is charged to the request
 * after which it happens. The replies a copy makes to its primary
 * ({@code ReplicationServer.Replies}) are held in the same way.
 *
 * <p>So are the requests a worker sends to other nodes while it holds: the forwards of a
 * replicated volume's writes wait in their {@link ReplicaLink}'s queue, and each link is told
 * once ({@link Outbox}) to write what it queued, after the held replies (its write may wait for
 * the copy's window; no reply waits for it). A batch of client writes then reaches each copy in
 * one write, which the copy can read at once and apply as a batch.
 */
final class ReplyBatch implements QosExecutor.BatchListener {

    private static final System.Logger LOG = System.getLogger(ReplyBatch.class.getName());

    /** Longest a reply is held for the replies of the requests after it in its batch, by default. */
    static final long DEFAULT_HOLD_NANOS = 50_000;

    /** Most replies and request ends a worker holds (a batch has at most 8 requests). */
    static final int CAPACITY = 64;

    /** Work that can tell whether it runs in a moment: an NBD request, or a copy's applying of its primary's request. */
    interface Work {

        /** Whether it runs in a moment unless the store is slow. */
        boolean quick();
    }

    /**
     * Where held requests to another node go: a replication link, which queues a worker's
     * forwards while it holds ({@link #current}) and writes them when told.
     */
    interface Outbox {

        /** Writes what is queued; never throws for a failed write (it answers the requests). */
        void writeQueued();
    }

    /** Where held replies and request ends go: a connection. */
    interface Sink {

        /** Writes {@code n} replies, in this order; never throws for a failed write (it closes). */
        void sendNow(ByteBuffer[] replies, int n);

        /** One request fully answered; {@code bytes} as held. */
        void requestDone(long bytes);
    }

    /** Most replication links a worker holds requests for at once; one more writes what it holds first. */
    static final int OUTBOXES = 8;

    private static final ThreadLocal<Held> HELD = ThreadLocal.withInitial(Held::new);

    private final long holdNanos;

    /** @param holdNanos longest a reply is held for those after it (and a request is quick) */
    ReplyBatch(long holdNanos) {
        if (holdNanos <= 0) {
            throw new IllegalArgumentException("holdNanos must be > 0");
        }
        this.holdNanos = holdNanos;
    }

    /** The calling thread's held replies while it runs a batch (or holds, {@link #startHolding}), else null: send at once. */
    static Held current() {
        Held h = HELD.get();
        return h.active ? h : null;
    }

    @Override
    public void batchStarted() {
        startHolding();
    }

    /**
     * The calling thread holds the replies it makes, and the ends of their requests, until
     * {@link #endHolding}: as a worker does while it runs a batch. A replication link's reader
     * does it while it answers the client requests whose copies' answers came in one read, so
     * that their replies go out per connection in one write.
     */
    static void startHolding() {
        HELD.get().active = true;
    }

    /**
     * Writes what the calling thread holds now, if it holds, and goes on holding: before it does
     * something that may wait (connects a replication link, say).
     */
    static void writeHeld() {
        Held h = HELD.get();
        if (h.active) {
            h.flush();
        }
    }

    /** Writes what the calling thread held since {@link #startHolding}, and holds no more. */
    static void endHolding() {
        Held h = HELD.get();
        h.active = false;
        h.flush();
    }

    @Override
    public boolean requestRan(long startNanos, long endNanos, Object next) {
        Held h = HELD.get();
        if (h.count == 0 && h.outboxCount == 0) {
            return false;
        }
        if (endNanos - startNanos >= holdNanos || next == null || !(next instanceof Work w && w.quick())
                || h.firstAt != 0 && endNanos - h.firstAt >= holdNanos) {
            h.flush();
            return true;
        }
        if (h.firstAt == 0) {
            h.firstAt = endNanos;
        }
        return false;
    }

    @Override
    public void batchEnded() {
        endHolding(); // empty unless a request ended the batch early
    }

    /** One thread's held replies and request ends, in the order its requests made them. */
    static final class Held {
        private boolean active;
        private final Sink[] sinks = new Sink[CAPACITY];
        /** Whether a slot holds a request end, not a reply. */
        private final boolean[] ends = new boolean[CAPACITY];
        private final ByteBuffer[] replies = new ByteBuffer[CAPACITY];
        private final long[] doneBytes = new long[CAPACITY];
        private final ByteBuffer[] gather = new ByteBuffer[CAPACITY];
        private int count;
        /** The links whose queued requests to write ({@link #holdWrites}), each once. */
        private final Outbox[] outboxes = new Outbox[OUTBOXES];
        private int outboxCount;
        /** When the request that made the first held slot had run; 0 before. */
        private long firstAt;

        /** Holds {@code reply} for {@code sink}, writing what is held first if it is full. */
        void hold(Sink sink, ByteBuffer reply) {
            replies[take(sink, false)] = reply;
        }

        /** Writes {@code outbox}'s queued requests with the held replies, not now; at once if it holds as many links as it can. */
        void holdWrites(Outbox outbox) {
            for (int i = 0; i < outboxCount; i++) {
                if (outboxes[i] == outbox) {
                    return;
                }
            }
            if (outboxCount == OUTBOXES) {
                flush();
            }
            outboxes[outboxCount++] = outbox;
        }

        /** Holds the end of a request of {@code sink}, writing what is held first if it is full. */
        void holdDone(Sink sink, long bytes) {
            doneBytes[take(sink, true)] = bytes;
        }

        /** The next slot, for a reply or a request end of {@code sink}; writes what is held first if full. */
        private int take(Sink sink, boolean end) {
            if (count == CAPACITY) {
                flush();
            }
            sinks[count] = sink;
            ends[count] = end;
            return count++;
        }

        /**
         * Writes the held replies, one {@link Sink#sendNow} per sink in the order the sinks first
         * appear, each followed by that sink's held request ends; then the held links' queued
         * requests, which may wait for a copy's window, so that no reply waits for them. A sink
         * or link that throws is logged and the others still go out.
         */
        void flush() {
            boolean wasActive = active;
            active = false; // what the sinks do meanwhile goes out at once
            try {
                for (int i = 0; i < count; i++) {
                    Sink s = sinks[i];
                    if (s != null) {
                        try {
                            flush(s, i);
                        } catch (RuntimeException e) {
                            LOG.log(System.Logger.Level.ERROR, "writing held replies failed", e);
                        }
                    }
                }
                for (int i = 0; i < outboxCount; i++) {
                    try {
                        outboxes[i].writeQueued();
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.ERROR, "writing held requests failed", e);
                    }
                }
            } finally {
                Arrays.fill(sinks, 0, count, null);
                Arrays.fill(replies, 0, count, null);
                Arrays.fill(outboxes, 0, outboxCount, null);
                outboxCount = 0;
                count = 0;
                firstAt = 0;
                active = wasActive;
            }
        }

        /** Writes {@code s}'s held replies from slot {@code from} on, then counts its held ends. */
        private void flush(Sink s, int from) {
            int n = 0;
            for (int j = from; j < count; j++) {
                if (sinks[j] == s && !ends[j]) {
                    gather[n++] = replies[j];
                    replies[j] = null;
                }
            }
            try {
                if (n > 0) {
                    s.sendNow(gather, n);
                }
            } finally {
                Arrays.fill(gather, 0, n, null);
                for (int j = from; j < count; j++) {
                    if (sinks[j] == s) {
                        sinks[j] = null;
                        if (ends[j]) {
                            s.requestDone(doneBytes[j]);
                        }
                    }
                }
            }
        }
    }
}
