package io.weir.agent;

import io.weir.protocol.DesiredConfig;

/**
 * Hears what a {@link QosAgent} does, on the agent's event thread, and may veto a snapshot. A data
 * node implements {@link #applying} to open, resize and close its exports (and so refuses a
 * snapshot it cannot serve); the rest are for logs and metrics.
 *
 * <p>Every method is called on the agent's single event thread ({@code weir-agent}), one call at a
 * time and in the order the events happen. Keep them short: while one runs, the agent neither
 * reads the next message nor sends heartbeats. An exception thrown by {@link #applying} refuses
 * the snapshot (see there). An exception thrown by any other method is logged and recorded as the
 * agent's {@linkplain AgentState#lastError() last error}; it does not undo the snapshot nor change
 * the answer sent to the control plane.
 */
public interface AgentListener {

    /** A listener that does nothing. */
    AgentListener NONE = new AgentListener() {
    };

    /**
     * A snapshot is in force in the executor and about to be committed: saved, reported
     * {@linkplain #applied applied} and acknowledged. The cached one at {@link QosAgent#start()}
     * and each pushed one that passed the check come here.
     *
     * <p>Throwing vetoes it: the agent puts the executor back on the previous config, keeps the
     * previous snapshot in force and on disk, answers a pushed one with a {@code nack} whose
     * reason is the exception's message (the control plane shows the node behind, with that
     * error), and records it as the {@linkplain AgentState#lastError() last error}. So an
     * implementation must change nothing when it throws: all or nothing.
     */
    default void applying(DesiredConfig config) {
    }

    /**
     * A snapshot was applied to the executor (and written to the state directory): the cached one
     * at {@link QosAgent#start()}, and each one the control plane pushes that the agent accepts.
     */
    default void applied(DesiredConfig config) {
    }

    /** A pushed snapshot was refused; the previous one stays in force. */
    default void rejected(DesiredConfig config, String reason) {
    }

    /** The agent holds a live connection to the control plane (after its {@code hello} was sent). */
    default void connected() {
    }

    /**
     * The node's server certificate is in force: the one kept in the state directory, at
     * {@link QosAgent#start()} (before the cached config), and each new one the control plane
     * signed (first issue and every renewal). Only for an agent built with
     * {@link QosAgent.Builder#serverCertificates}. A TLS server uses it for its next handshakes;
     * connections made with the previous one go on.
     */
    default void serverCertificate(ServerCertificate certificate) {
    }

    /** The connection was lost or refused; the agent will retry after a backoff. */
    default void disconnected(String reason) {
    }
}
