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
 *   <li>when the batch ends;</li>
 *   <li>after a request that ran {@link #MAX_HOLD_NANOS} or longer (a slow store's, say), its own
 *       reply included: such requests gain nothing from sharing a write;</li>
 *   <li>once the first held reply has waited {@link #MAX_HOLD_NANOS} for the requests after it
 *       (checked after each request).</li>
 * </ul>
 * So a reply waits for others at most {@link #MAX_HOLD_NANOS} plus the run of one request begun
 * within that time. A connection's held replies are written before its held request ends are
 * counted, so a connection draining to close (after NBD_CMD_DISC) never closes with one of them
 * still held. A worker outside a batch, and every other thread, sends at once; so does a worker
 * whose {@link #CAPACITY} is full.
 */
final class ReplyBatch implements QosExecutor.BatchListener {

    /** Longest a reply is held for the replies of the requests after it in its batch. */
    static final long MAX_HOLD_NANOS = 50_000;

    /** Most replies and request ends a worker holds; more go out at once (a batch has at most 8 requests). */
    static final int CAPACITY = 64;

    /** Where held replies and request ends go: a connection. */
    interface Sink {

        /** Writes {@code n} replies, in this order. */
        void sendNow(ByteBuffer[] replies, int n);

        /** One request fully answered; {@code bytes} as held. */
        void requestDone(long bytes);
    }

    private static final ThreadLocal<Held> HELD = ThreadLocal.withInitial(Held::new);

    /** The calling thread's held replies while it runs a batch, else null: send at once. */
    static Held current() {
        Held h = HELD.get();
        return h.active ? h : null;
    }

    @Override
    public void batchStarted() {
        HELD.get().active = true;
    }

    @Override
    public void requestRan(long startNanos, long endNanos) {
        Held h = HELD.get();
        if (h.count == 0) {
            return;
        }
        if (endNanos - startNanos >= MAX_HOLD_NANOS) {
            h.flush(); // a slow request: waiting for the next gains nothing
        } else if (h.firstAt == 0) {
            h.firstAt = endNanos;
        } else if (endNanos - h.firstAt >= MAX_HOLD_NANOS) {
            h.flush();
        }
    }

    @Override
    public void batchEnded() {
        Held h = HELD.get();
        h.active = false;
        h.flush();
    }

    /** One worker's held replies and request ends, in the order its requests made them. */
    static final class Held {
        private boolean active;
        private final Sink[] sinks = new Sink[CAPACITY];
        /** Whether a slot holds a request end, not a reply. */
        private final boolean[] ends = new boolean[CAPACITY];
        private final ByteBuffer[] replies = new ByteBuffer[CAPACITY];
        private final long[] doneBytes = new long[CAPACITY];
        private final ByteBuffer[] gather = new ByteBuffer[CAPACITY];
        private int count;
        /** When the request that made the first held slot had run; 0 before. */
        private long firstAt;

        /** Holds {@code reply} for {@code sink}; false when full (the caller sends it at once). */
        boolean hold(Sink sink, ByteBuffer reply) {
            if (count == CAPACITY) {
                return false;
            }
            sinks[count] = sink;
            ends[count] = false;
            replies[count++] = reply;
            return true;
        }

        /** Holds the end of a request of {@code sink}; false when full (the caller ends it at once). */
        boolean holdDone(Sink sink, long bytes) {
            if (count == CAPACITY) {
                return false;
            }
            sinks[count] = sink;
            ends[count] = true;
            doneBytes[count++] = bytes;
            return true;
        }

        /**
         * Writes the held replies, one {@link Sink#sendNow} per sink in the order the sinks first
         * appear, each followed by that sink's held request ends.
         */
        void flush() {
            boolean wasActive = active;
            active = false; // what the sinks do meanwhile goes out at once
            try {
                for (int i = 0; i < count; i++) {
                    Sink s = sinks[i];
                    if (s == null) {
                        continue; // flushed with an earlier slot of its sink
                    }
                    int n = 0;
                    for (int j = i; j < count; j++) {
                        if (sinks[j] == s && !ends[j]) {
                            gather[n++] = replies[j];
                            replies[j] = null;
                        }
                    }
                    if (n > 0) {
                        s.sendNow(gather, n);
                        Arrays.fill(gather, 0, n, null);
                    }
                    for (int j = i; j < count; j++) {
                        if (sinks[j] == s) {
                            sinks[j] = null;
                            if (ends[j]) {
                                s.requestDone(doneBytes[j]);
                            }
                        }
                    }
                }
            } finally {
                count = 0;
                firstAt = 0;
                active = wasActive;
            }
        }
    }
}
