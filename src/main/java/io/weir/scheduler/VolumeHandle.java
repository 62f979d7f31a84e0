package io.weir.scheduler;

/**
 * A volume resolved once, for callers that queue many requests on it: a data node resolves the
 * volume when a connection opens and queues every request of that connection through the handle,
 * so the per-request path does no id lookup ({@link HierarchicalScheduler#enqueue(VolumeHandle,
 * IoKind, long, Object, long)}).
 *
 * <h2>Implementation notes</h2>
 * The handle is the scheduler's own node for the volume (not a wrapper), so queueing through it
 * touches the volume's state directly, without hashing the id or chasing a map entry. That is
 * the point: at 100,000 volumes the {@code String} lookup was a chain of dependent cache misses
 * and most of the cost of a round trip.
 *
 * <h3>Validity</h3>
 * A handle stays valid across {@code reconfigure} for as long as its volume exists, including
 * when its policies change or it moves to another tenant. When a reconfiguration removes the
 * volume, the handle is refused (like the id) from then on; if the volume reappears before it
 * drained, it is revived and the handle works again. Once a removed volume has fully drained the
 * handle is dead for good: a later volume with the same id is a new volume, so resolve it again.
 * A handle belongs to the scheduler that issued it.
 *
 * <p>Handles are safe to share between threads as identifiers; using one follows the rules of
 * the scheduler call it is passed to.
 */
public interface VolumeHandle {

    /** The volume id. */
    String volumeId();
}
