package io.weir.datanode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection's replies on their way to its client. A reply is written at once, by the thread
 * that made it, when nothing is queued before it; what the socket does not take is queued, in
 * order, and written by the selector thread when the socket is writable again ({@link #write}).
 * Each buffer goes back to the pool once written. This object's lock orders every write: over TLS
 * the records of the replies reach the socket in the order they were wrapped. The bytes it holds
 * unwritten count in the connection's {@code buffered} total, which bounds what the connection
 * reads ({@link NbdConnection}'s bounded buffering).
 */
final class NbdReplies {

    private final NbdServer server;
    private final NbdTransport transport;
    private final BufferPool pool;
    private final AtomicLong buffered;
    private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>();
    /** Replies in {@link #queue}: written under the lock, read without it. */
    private volatile int queued;
    /** The selector was asked to watch for writability, and the queue has not emptied since. */
    private boolean writeInterest;
    private volatile boolean closed;

    NbdReplies(NbdServer server, NbdTransport transport, AtomicLong buffered) {
        this.server = server;
        this.transport = transport;
        this.pool = server.pool;
        this.buffered = buffered;
    }

    /**
     * Any thread: writes {@code n} replies in order, in one gathering write if nothing is queued
     * before them (over TLS wrapped together, into as few records as they fill), and queues what
     * the socket does not take. Returns true if the selector must now watch the socket for
     * writability (the first reply queued since the queue was last empty). On a closed connection
     * the replies are released unwritten; when the write fails they are released and the failure
     * thrown (the caller closes the connection).
     */
    synchronized boolean add(ByteBuffer[] replies, int n) throws IOException {
        if (n > 1) {
            server.noteGatheredReplies(n);
        }
        if (closed) {
            release(replies, 0, n);
            return false;
        }
        int first = 0;
        if (queue.isEmpty()) {
            boolean flushed;
            try {
                flushed = transport.write(replies, n);
            } catch (IOException | RuntimeException e) { // a TLS session's failure too: it closes
                release(replies, 0, n);
                throw e;
            }
            if (flushed) {
                release(replies, 0, n);
                return false;
            }
            if (!transport.isTls()) {
                while (!replies[first].hasRemaining()) {
                    pool.release(replies[first++]);
                }
            }
            // over TLS all stay queued, even when all was taken: a last record may still be
            // waiting in the session for the socket, and only a later write pushes it out
            transport.markWriteProgress(System.nanoTime());
        }
        for (int i = first; i < n; i++) {
            queue.add(replies[i]);
            buffered.addAndGet(replies[i].remaining());
        }
        queued = queue.size();
        server.noteQueuedReplies(queued);
        if (writeInterest) {
            return false;
        }
        writeInterest = true;
        return true;
    }

    /**
     * Selector thread: writes queued replies while the socket takes them, within the round's
     * budget ({@link NbdServer#takeWriteBudget}); once the queue is empty, {@code key} no longer
     * watches for writability. Returns whether the queue is empty.
     */
    synchronized boolean write(SelectionKey key) throws IOException {
        ByteBuffer b;
        int budget = server.takeWriteBudget();
        try {
            while ((b = queue.peek()) != null && budget > 0) {
                int before = b.remaining();
                int limit = b.limit();
                b.limit(b.position() + Math.min(before, budget));
                boolean flushed = transport.write(b) && b.limit() == limit;
                b.limit(limit);
                int written = before - b.remaining();
                budget -= written;
                if (written > 0) {
                    buffered.addAndGet(-written);
                    transport.markWriteProgress(System.nanoTime());
                }
                if (!flushed) {
                    break;
                }
                queue.poll();
                pool.release(b);
            }
        } finally {
            server.returnWriteBudget(budget);
            queued = queue.size();
        }
        if (!queue.isEmpty()) {
            return false;
        }
        writeInterest = false;
        key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
        return true;
    }

    /** Replies queued unwritten (any thread, without the lock). */
    int queued() {
        return queued;
    }

    synchronized boolean isEmpty() {
        return queue.isEmpty();
    }

    /** Whether replies are queued and the socket has taken none of their bytes since {@code stallNanos} before {@code now}. */
    synchronized boolean stalled(long now, long stallNanos) {
        return !queue.isEmpty() && now - transport.lastWriteProgress() > stallNanos;
    }

    /** Releases every queued reply; replies added later are released unwritten. */
    synchronized void close() {
        closed = true;
        ByteBuffer b;
        while ((b = queue.poll()) != null) {
            pool.release(b);
        }
        queued = 0;
    }

    boolean isClosed() {
        return closed;
    }

    private void release(ByteBuffer[] replies, int from, int to) {
        for (int i = from; i < to; i++) {
            pool.release(replies[i]);
        }
    }
}
