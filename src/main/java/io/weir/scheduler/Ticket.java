package io.weir.scheduler;

/**
 * The scheduler's handle for one queued or running request: returned by {@code enqueue}, handed
 * out by {@link HierarchicalScheduler#next(long)}, and given back to
 * {@link HierarchicalScheduler#complete(Ticket, long, long)}.
 *
 * <p>A ticket is good for one request. Once the request was completed the ticket is <em>stale</em>:
 * its accessors and a second {@code complete} throw {@link IllegalStateException}, even after
 * the scheduler reused its internal state for another request. A ticket is only accepted by the
 * scheduler that issued it ({@code complete} throws {@link IllegalArgumentException} otherwise).
 *
 * <p>Not thread-safe; read it under the scheduler lock or before handing it back.
 *
 * <h2>Implementation notes</h2>
 * The request's state lives in a pooled {@link RequestRecord}; the ticket is a small object
 * (a 24-byte object) that names the record and the record's generation at the time;
 * {@code enqueue} and {@code next} each allocate one, and the two are equivalent. Pooling the records keeps the per-request allocation to this handle, while a fresh
 * handle per request is what makes a stale one detectable: the same pooled object handed out
 * twice could not tell its two uses apart.
 *
 * @param <R> the caller's request type
 */
public final class Ticket<R> {

    private static final IoKind[] KINDS = IoKind.values();

    final RequestRecord record;
    final int generation;

    Ticket(RequestRecord record) {
        this.record = record;
        this.generation = record.generation;
    }

    /** The record, if this ticket is still current. */
    private RequestRecord current() {
        RequestRecord r = record;
        if (r.generation != generation) {
            throw new IllegalStateException("stale ticket: its request was already completed");
        }
        return r;
    }

    /** True until the request was completed. */
    public boolean isCurrent() {
        return record.generation == generation;
    }

    /** The request given to {@code enqueue}. */
    @SuppressWarnings("unchecked")
    public R request() {
        return (R) current().request;
    }

    /** The volume id, or null for a background request. */
    public String volumeId() {
        FlowNode f = current().flow;
        return f == null ? null : f.id;
    }

    /** The volume's handle, or null for a background request. */
    public VolumeHandle volume() {
        return current().flow;
    }

    /** The task that runs this request. */
    public String task() {
        return current().task.name;
    }

    /** Bytes of a foreground request, 0 for background. */
    public long bytes() {
        return current().bytes;
    }

    /** The kind of a foreground request (read, write, or applied as a copy), null for background. */
    public IoKind kind() {
        byte k = current().kind;
        return k == RequestRecord.NO_KIND ? null : KINDS[k];
    }

    /** When the request was enqueued. */
    public long enqueuedAtNanos() {
        return current().enqueuedAt;
    }

    /** When the request was dispatched, once running. */
    public long dispatchedAtNanos() {
        return current().dispatchedAt;
    }

    /** True if it was dispatched by the reservation (constraint) phase rather than by weight. */
    public boolean reservationPhase() {
        return current().reservationPhase;
    }

    @Override
    public String toString() {
        return "Ticket[" + (isCurrent() ? record.toString() : "stale") + "]";
    }
}
