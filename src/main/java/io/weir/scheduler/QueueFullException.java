package io.weir.scheduler;

import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown at once when a request is submitted to a flow (volume) or background task whose bounded
 * queue is full. Nothing is dropped silently: the caller receives this exception and the flow's
 * {@link Stats#rejected()} counter records it.
 */
public final class QueueFullException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    private final String queue;
    private final int capacity;

    /**
     * @param queue the volume id or task name whose queue is full
     * @param capacity the queue's bound
     */
    public QueueFullException(String queue, int capacity) {
        super("queue of '" + queue + "' is full (capacity " + capacity + "); request rejected");
        this.queue = queue;
        this.capacity = capacity;
    }

    /** The volume id or task name whose queue was full. */
    public String queue() {
        return queue;
    }

    /** The bound that was reached. */
    public int capacity() {
        return capacity;
    }
}
