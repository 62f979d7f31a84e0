package io.weir.agent;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import java.lang.System.Logger.Level;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * One WebSocket connection attempt of a {@link QosAgent} and its callbacks, which run on the
 * {@code HttpClient}'s threads and hand everything to the agent's event thread. The agent
 * ignores the callbacks of a connection that is no longer its current one, so a late event of a
 * dropped socket cannot disturb its successor. JDK WebSockets allow one outstanding send, so all
 * sends of a connection are chained.
 */
final class AgentConnection implements WebSocket.Listener {

    private static final System.Logger LOG = System.getLogger(AgentConnection.class.getName());

    /** How long a close waits for the close frame to be sent. */
    private static final Duration CLOSE_WAIT = QosAgent.CLOSE_WAIT;

    private final QosAgent agent;
    private final int id;
    private final StringBuilder partial = new StringBuilder();
    /** Set in onOpen, before any other callback. */
    volatile WebSocket ws;
    /** Event thread: a close frame is queued; the socket is dropped once it is sent. */
    boolean closing;
    /** Event thread: its hello is sent; other messages may follow it. */
    boolean greeted;
    /** Event thread: {@link Clock#millis()} when it opened. */
    long openedAtMillis;
    /** Event thread: it had contact {@code QosAgent.backoffResetAfter} after it opened; the backoff was reset. */
    boolean healthy;
    /** Event thread: a certificate request was sent on this connection and not yet answered well. */
    boolean certificateAsked;
    /** When a server certificate could not be had on this connection (System.nanoTime), or 0; event thread. */
    long certificateFailedAt;
    /** Event thread: the tail of this connection's sends. */
    private CompletableFuture<?> sends = CompletableFuture.completedFuture(null);

    AgentConnection(QosAgent agent, int id) {
        this.agent = agent;
        this.id = id;
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        ws = webSocket;
        webSocket.request(1);
        agent.events.execute(() -> agent.opened(this));
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        partial.append(data);
        // what the control plane sends: config pushes, the largest frames
        if (partial.length() > AgentMessages.MAX_CONFIG_FRAME_BYTES) {
            partial.setLength(0);
            agent.events.execute(() -> {
                if (this == agent.current) {
                    send(new AgentMessage.ErrorMessage("too-large", "message over " + AgentMessages.MAX_CONFIG_FRAME_BYTES
                            + " bytes"));
                    close(1009, "too-large");
                    agent.lost(this, "the control plane sent a message over " + AgentMessages.MAX_CONFIG_FRAME_BYTES + " bytes");
                }
            });
            return null;
        }
        if (!last) {
            webSocket.request(1);
            return null;
        }
        String text = partial.toString();
        partial.setLength(0);
        agent.events.execute(() -> agent.received(this, text));
        return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
        agent.events.execute(() -> {
            if (this == agent.current) {
                agent.contact(this);
            }
        });
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
        // The JDK answers the ping with a pong itself.
        agent.events.execute(() -> {
            if (this == agent.current) {
                agent.lastContactMillis = agent.clock.millis();
            }
        });
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        agent.events.execute(() -> agent.lost(this, "the control plane closed the connection (" + statusCode
                + (reason == null || reason.isEmpty() ? "" : ", " + reason) + ")"));
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        agent.events.execute(() -> agent.lost(this, "connection failed: " + QosAgent.describe(error)));
    }

    /** Event thread: queues one message behind the previous sends. */
    void send(AgentMessage message) {
        String text = AgentMessages.encode(message);
        WebSocket socket = ws;
        sends = sends.thenCompose(v -> socket.sendText(text, true))
                .whenComplete((v, e) -> {
                    if (e != null) {
                        agent.events.execute(() -> agent.lost(this, "cannot send: " + QosAgent.describe(e)));
                    }
                });
    }

    void ping() {
        WebSocket socket = ws;
        sends = sends.thenCompose(v -> socket.sendPing(ByteBuffer.allocate(0)))
                .whenComplete((v, e) -> {
                    if (e != null) {
                        agent.events.execute(() -> agent.lost(this, "cannot send a ping: " + QosAgent.describe(e)));
                    }
                });
    }

    /**
     * Any thread: a ping outside the queued sends (an apply holds the event thread). Its failure
     * is left to the event thread's own sends to find; a ping still on its way is not doubled.
     */
    void pingFromAnyThread() {
        WebSocket socket = ws;
        if (socket != null) {
            try { // on a socket closed meanwhile, it fails, unheeded
                socket.sendPing(ByteBuffer.allocate(0)).exceptionally(e -> null);
            } catch (RuntimeException e) {
                // a ping or close of the queued sends on its way: nothing to add
            }
        }
    }

    /** Event thread: sends a close frame after the queued sends, then drops the socket. */
    void close(int status, String reason) {
        WebSocket socket = ws;
        closing = true;
        sends = sends.thenCompose(v -> socket.sendClose(status, reason))
                .orTimeout(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((v, e) -> socket.abort());
    }

    /** Event thread, on {@link QosAgent#close()}: a normal close, bounded in time, then abort. */
    void closeAndWait() {
        WebSocket socket = ws;
        if (socket == null) {
            return;
        }
        try {
            sends.handle((v, e) -> null)
                    .thenCompose(v -> socket.sendClose(WebSocket.NORMAL_CLOSURE, "agent closing"))
                    .toCompletableFuture()
                    .get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.log(Level.DEBUG, "close handshake did not complete: {0}", e.toString());
        } finally {
            socket.abort();
        }
    }

    @Override
    public String toString() {
        return "connection " + id;
    }
}
