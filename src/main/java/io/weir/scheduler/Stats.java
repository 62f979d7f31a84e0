package io.weir.scheduler;

/**
 * Counters of one volume, tenant or task at the moment of a {@link SchedulerSnapshot}.
 *
 * <p>Counts ({@code *Ops}, {@code *Bytes}, {@code rejected}, {@code throttledNanos},
 * {@code cpuNanos}, {@code workerNanos}) are cumulative since the node was created, so a reporter
 * takes differences between two snapshots. Latency percentiles cover the client requests (not
 * those in {@code replicaOps}) completed since the last snapshot taken with
 * {@code resetLatencies = true} (or since creation). For tasks, {@code readOps} counts
 * all completed requests and {@code writeOps}, {@code readBytes}, {@code writeBytes} are 0 for
 * background tasks.
 *
 * @param id volume id, tenant id or task name
 * @param readOps completed reads
 * @param writeOps completed writes
 * @param readBytes bytes of completed reads
 * @param writeBytes bytes of completed writes
 * @param queueDepth requests queued (not yet dispatched)
 * @param inFlight requests dispatched and not yet completed
 * @param rejected submits refused because the queue was full
 * @param waitP50Nanos median time from enqueue to dispatch
 * @param waitP99Nanos 99th percentile time from enqueue to dispatch
 * @param serviceP50Nanos median time from dispatch to completion
 * @param serviceP99Nanos 99th percentile time from dispatch to completion
 * @param throttledNanos time spent backlogged but over a limit (for a tenant: at the tenant level)
 * @param cpuNanos CPU time charged by completions
 * @param share current CPU share (tasks only; 0 otherwise)
 * @param waitMaxNanos longest time from enqueue to dispatch, over the same requests as the
 *     percentiles (to the histogram's precision, about 3%)
 * @param serviceMaxNanos longest time from dispatch to completion, likewise
 * @param workerNanos worker time charged by completions (tasks only; 0 otherwise): CPU time plus
 *     the time the task's requests held a worker blocked, what the tasks' shares divide
 * @param replicaOps requests completed as a copy of a replicated volume for its primary
 *     ({@link IoKind#REPLICA}), counted in neither {@code readOps} nor {@code writeOps}, nor in the
 *     latencies: the primary counted the client's request (0 for tasks)
 * @param replicaBytes bytes of those requests
 */
public record Stats(String id, long readOps, long writeOps, long readBytes, long writeBytes, long queueDepth,
        long inFlight, long rejected, long waitP50Nanos, long waitP99Nanos, long serviceP50Nanos,
        long serviceP99Nanos, long throttledNanos, long cpuNanos, double share, long waitMaxNanos,
        long serviceMaxNanos, long workerNanos, long replicaOps, long replicaBytes) {

    /** Statistics without replica ops and bytes (both 0). */
    public Stats(String id, long readOps, long writeOps, long readBytes, long writeBytes, long queueDepth,
            long inFlight, long rejected, long waitP50Nanos, long waitP99Nanos, long serviceP50Nanos,
            long serviceP99Nanos, long throttledNanos, long cpuNanos, double share, long waitMaxNanos,
            long serviceMaxNanos, long workerNanos) {
        this(id, readOps, writeOps, readBytes, writeBytes, queueDepth, inFlight, rejected, waitP50Nanos, waitP99Nanos,
                serviceP50Nanos, serviceP99Nanos, throttledNanos, cpuNanos, share, waitMaxNanos, serviceMaxNanos,
                workerNanos, 0, 0);
    }

    /** Statistics without latency maxima, worker time and replica figures (all 0). */
    public Stats(String id, long readOps, long writeOps, long readBytes, long writeBytes, long queueDepth,
            long inFlight, long rejected, long waitP50Nanos, long waitP99Nanos, long serviceP50Nanos,
            long serviceP99Nanos, long throttledNanos, long cpuNanos, double share) {
        this(id, readOps, writeOps, readBytes, writeBytes, queueDepth, inFlight, rejected, waitP50Nanos, waitP99Nanos,
                serviceP50Nanos, serviceP99Nanos, throttledNanos, cpuNanos, share, 0, 0, 0, 0, 0);
    }

    /** Completed client requests (reads and writes; not {@code replicaOps}). */
    public long ops() {
        return readOps + writeOps;
    }

    /** Bytes of completed client requests (not {@code replicaBytes}). */
    public long bytes() {
        return readBytes + writeBytes;
    }
}
