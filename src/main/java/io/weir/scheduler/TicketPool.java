package io.weir.scheduler;

/**
 * The pool of {@link RequestRecord}s of one scheduler: records of completed requests are reused,
 * so a scheduler in steady state allocates only the small {@link Ticket} of each request.
 *
 * <h2>Implementation notes</h2>
 * A LIFO free list through the records' {@code next} field, bounded by {@link #MAX_IDLE}; beyond
 * that a completed record is left to the collector. Releasing a record advances its
 * {@link RequestRecord#generation}, so any ticket of the finished use is stale from then on,
 * whether or not the record is reused ({@link HierarchicalScheduler#complete} checks). The
 * generation is an {@code int}: a stale ticket would pass for current only if its record were
 * reused exactly {@code 2^32} times in between.
 *
 * <p>A released record keeps its volume and task, which the next request often shares (see
 * "Reference stores" in {@link HierarchicalScheduler}); it may so keep a removed volume's node from
 * being collected until it is reused.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class TicketPool {

    /** Largest number of idle records kept for reuse. */
    static final int MAX_IDLE = 1 << 16;

    private RequestRecord free;
    private int freeCount;

    /** A record for a new request: reused if one is idle, else new. */
    RequestRecord obtain() {
        RequestRecord r = free;
        if (r != null) {
            free = r.next;
            r.next = null;
            freeCount--;
            return r;
        }
        return new RequestRecord(this);
    }

    /** Ends the record's current use (its ticket goes stale) and keeps it for reuse. */
    void release(RequestRecord r) {
        r.generation++;
        r.request = null;
        r.reservationPhase = false;
        r.status = RequestRecord.FREE;
        if (freeCount < MAX_IDLE) {
            r.next = free;
            free = r;
            freeCount++;
        }
    }
}
