package io.weir.agent;

import io.weir.protocol.DesiredConfig;

/**
 * Hears what a {@link QosAgent} does, on the agent's event thread. A data node implements
 * {@link #applied} to open, resize and close its exports; the rest are for logs and metrics.
 *
 * <p>Every method is called on the agent's single event thread ({@code weir-agent}), one call at a
 * time and in the order the events happen. Keep them short: while one runs, the agent neither
 * reads the next message nor sends heartbeats. An exception thrown by a method is logged and
 * recorded as the agent's {@linkplain AgentState#lastError() last error}; it does not undo the
 * snapshot nor change the answer sent to the control plane.
 */
public interface AgentListener {

    /** A listener that does nothing. */
    AgentListener NONE = new AgentListener() {
    };

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

    /** The connection was lost or refused; the agent will retry after a backoff. */
    default void disconnected(String reason) {
    }
}
