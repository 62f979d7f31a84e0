package io.weir.scheduler;

/**
 * What a foreground request does for the volume's clients. The scheduler treats all kinds alike
 * for fairness and limits (unless a {@link CostModel} says otherwise); statistics count them
 * separately.
 */
public enum IoKind {
    /** Data flows from the volume to the client. */
    READ,
    /** Data flows from the client to the volume. */
    WRITE,
    /**
     * A copy of a replicated volume applies a request for its primary: a client's write, trim,
     * write-zeroes or flush that the primary forwarded, the primary's own flush, or a resync step.
     * Charged as a write (the copy's weights and caps hold), but counted apart
     * ({@link Stats#replicaOps()}) and out of the volume's latencies: the primary counted the
     * client's request, with its latency.
     */
    REPLICA
}
