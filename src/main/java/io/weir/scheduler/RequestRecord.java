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
    /**
     * Which piece of its request this is ({@link HierarchicalScheduler#enqueuePiece}): bit 0 set
     * unless it is the first, bit 1 set unless it is the last; 0 for a whole request.
     */
    byte piece;
    int status;
    RequestRecord next;

    /** The {@link #piece} value of a whole request: its first piece and its last. */
    static final byte WHOLE = 0;

    /** The {@link #piece} value of a request's first and/or last piece. */
    static byte piece(boolean first, boolean last) {
        return (byte) ((first ? 0 : 1) | (last ? 0 : 2));
    }

    /** Whether a {@link #piece} value is a request's first piece (or the whole request). */
    static boolean isFirst(byte piece) {
        return (piece & 1) == 0;
    }

    boolean isFirst() {
        return isFirst(piece);
    }

    boolean isLast() {
        return (piece & 2) == 0;
    }

    RequestRecord(TicketPool owner) {
        this.owner = owner;
    }

    @Override
    public String toString() {
        return "Request[" + (flow != null ? "volume=" + flow.id : "task=" + (task == null ? "?" : task.name))
                + ", bytes=" + bytes + ", status=" + status + ", generation=" + generation + "]";
    }
}
