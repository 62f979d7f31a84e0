package io.weir.scheduler;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The executor's inbox: Vyukov's intrusive multi-producer, single-consumer list. Submitters
 * {@link #push} without a lock (one atomic swap and one volatile store); the one thread that
 * holds the executor's lock {@link #poll}s. The nodes carry their own link ({@link Link}), so
 * pushing allocates nothing: the job is the node.
 *
 * @param <N> the node type
 */
final class Inbox<N extends Inbox.Link<N>> {

    /** A node that carries its successor: a volatile field of its own. */
    interface Link<N> {
        N next();

        void setNext(N next);
    }

    private final AtomicReference<N> tail;
    /** The last node taken (a stub at first); its successor is the next to take. Consumer only. */
    private N head;

    /** An empty inbox whose first head is {@code stub}, a node never handed out. */
    Inbox(N stub) {
        this.tail = new AtomicReference<>(stub);
        this.head = stub;
    }

    /**
     * Appends {@code node}. Any thread. The link is a volatile store, so a submitter that pushes
     * and then reads a flag pairs with a consumer that sets the flag and then checks
     * {@link #isEmpty} (the executor's idle-worker handshake).
     */
    void push(N node) {
        N prev = tail.getAndSet(node);
        prev.setNext(node);
    }

    /** Takes the oldest node, or null if none is linked yet. Consumer only (the lock holder). */
    N poll() {
        N next = head.next();
        if (next != null) {
            head = next; // it becomes the new stub
        }
        return next;
    }

    /** Whether no node is linked after the head. Consumer only. */
    boolean isEmpty() {
        return head.next() == null;
    }
}
