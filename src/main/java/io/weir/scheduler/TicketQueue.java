package io.weir.scheduler;

/**
 * An intrusive FIFO of {@link RequestRecord}s: the queue of a volume ({@link FlowNode}) or of a
 * background task ({@link TaskNode}). The records link through their own {@code next} field, so
 * queueing allocates nothing.
 *
 * <h2>Implementation notes</h2>
 * A base class rather than a field holding a queue object: the head of a volume's queue then
 * sits in the volume's own node, so a decision loads one object, not two (with many volumes each
 * is a cache miss). A tenant inherits the three fields through {@link SchedNode} and never uses
 * them; there are few tenants.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
abstract class TicketQueue {

    RequestRecord head;
    RequestRecord tail;
    /** Records queued. */
    int size;

    /** Appends a record. */
    final void push(RequestRecord r) {
        r.next = null;
        if (tail == null) {
            head = r;
        } else {
            tail.next = r;
        }
        tail = r;
        size++;
    }

    /** Removes and returns the oldest record; precondition: {@code size > 0}. */
    final RequestRecord poll() {
        RequestRecord r = head;
        head = r.next;
        if (head == null) {
            tail = null;
        }
        r.next = null;
        size--;
        return r;
    }
}
