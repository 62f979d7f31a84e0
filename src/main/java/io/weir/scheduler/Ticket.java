package io.weir.scheduler;

/**
 * The scheduler's handle for one queued or running request: returned by {@code enqueue}, handed
 * out by {@link HierarchicalScheduler#next(long)}, and given back to
 * {@link HierarchicalScheduler#complete(Ticket, long, long)}.
 *
 * <p>Tickets are pooled and reused, so the scheduler allocates nothing per request in steady
 * state. <b>A ticket must not be used after it was passed to {@code complete}</b>: by then it may
 * already describe another request.
 *
 * <p>Not thread-safe; read it under the scheduler lock or before handing it back.
 *
 * @param <R> the caller's request type
 */
public final class Ticket<R> {

    static final int FREE = 0;
    static final int QUEUED = 1;
    static final int RUNNING = 2;

    private static final IoKind[] KINDS = IoKind.values();

    /** {@link #kind} of a background request. */
    static final byte NO_KIND = -1;

    R request;
    long bytes;
    /**
     * The {@link IoKind} ordinal, or {@link #NO_KIND}. A byte rather than the enum: storing a
     * reference into a pooled (old) ticket runs the GC's write barrier, a primitive store does not.
     */
    byte kind = NO_KIND;
    FlowNode flow;
    TaskNode task;
    long enqueuedAt;
    long dispatchedAt;
    boolean reservationPhase;
    int status;
    Ticket<?> next;

    Ticket() {
    }

    /** The request given to {@code enqueue}. */
    public R request() {
        return request;
    }

    /** The volume id, or null for a background request. */
    public String volumeId() {
        return flow == null ? null : flow.id;
    }

    /** The volume's handle, or null for a background request. */
    public VolumeHandle volume() {
        return flow;
    }

    /** The task that runs this request. */
    public String task() {
        return task.name;
    }

    /** Bytes of a foreground request, 0 for background. */
    public long bytes() {
        return bytes;
    }

    /** Read or write for a foreground request, null for background. */
    public IoKind kind() {
        return kind == NO_KIND ? null : KINDS[kind];
    }

    /** When the request was enqueued. */
    public long enqueuedAtNanos() {
        return enqueuedAt;
    }

    /** When the request was dispatched, once running. */
    public long dispatchedAtNanos() {
        return dispatchedAt;
    }

    /** True if it was dispatched by the reservation (constraint) phase rather than by weight. */
    public boolean reservationPhase() {
        return reservationPhase;
    }

    @Override
    public String toString() {
        return "Ticket[" + (flow != null ? "volume=" + flow.id : "task=" + (task == null ? "?" : task.name))
                + ", bytes=" + bytes + ", status=" + status + "]";
    }
}
