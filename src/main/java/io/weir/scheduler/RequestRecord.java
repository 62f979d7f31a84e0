package io.weir.scheduler;

/**
 * The scheduler's state of one queued or running request, pooled by {@link TicketPool} and
 * reused from request to request. The caller sees it only through the {@link Ticket}s issued for
 * the current use; {@link #generation} tells that use from earlier ones.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class RequestRecord {

    static final int FREE = 0;
    static final int QUEUED = 1;
    static final int RUNNING = 2;

    /** {@link #kind} of a background request. */
    static final byte NO_KIND = -1;

    /** The pool this record belongs to: a ticket is only accepted by its own scheduler. */
    final TicketPool owner;

    /** Counts the uses of this record; a ticket is current while its generation equals this. */
    int generation;

    Object request;
    long bytes;
    /**
     * The {@link IoKind} ordinal, or {@link #NO_KIND}. A byte rather than the enum: storing a
     * reference into a pooled (old) record runs the GC's write barrier, a primitive store does not.
     */
    byte kind = NO_KIND;
    FlowNode flow;
    TaskNode task;
    long enqueuedAt;
    long dispatchedAt;
    boolean reservationPhase;
    int status;
    RequestRecord next;

    RequestRecord(TicketPool owner) {
        this.owner = owner;
    }

    @Override
    public String toString() {
        return "Request[" + (flow != null ? "volume=" + flow.id : "task=" + (task == null ? "?" : task.name))
                + ", bytes=" + bytes + ", status=" + status + ", generation=" + generation + "]";
    }
}
