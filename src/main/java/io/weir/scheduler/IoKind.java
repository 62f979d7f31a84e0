package io.weir.scheduler;

/**
 * Whether a foreground request reads or writes. The scheduler treats both alike for fairness and
 * limits (unless a {@link CostModel} says otherwise); statistics count them separately.
 */
public enum IoKind {
    /** Data flows from the volume to the client. */
    READ,
    /** Data flows from the client to the volume. */
    WRITE
}
