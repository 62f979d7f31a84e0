package io.weir.controlplane.push;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A raw agent for tests: the JDK's WebSocket client over loopback, sending and receiving frames as
 * they are, so that tests can send anything (garbage, wrong versions, oversized frames).
 */
final class AgentClient implements AutoCloseable {

    /** How long a test waits for a frame or a close; generous, the machine is loaded. */
    static final Duration WAIT = Duration.ofSeconds(60);

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final WebSocket socket;
    private final BlockingQueue<String> received;
    private final CompletableFuture<Closed> closed;

    /** A close frame that arrived. */
    record Closed(int code, String reason) {
    }

    private AgentClient(WebSocket socket, BlockingQueue<String> received, CompletableFuture<Closed> closed) {
        this.socket = socket;
        this.received = received;
        this.closed = closed;
    }

    /** The URI of the agent channel on {@code port}. */
    static URI uri(int port) {
        return URI.create("ws://127.0.0.1:" + port + "/api/v1/agent/connect");
    }

    /** Connects with {@code token} as bearer token (none if null); the future fails if the upgrade is refused. */
    static CompletableFuture<AgentClient> connect(int port, String token) {
        BlockingQueue<String> received = new LinkedBlockingQueue<>();
        CompletableFuture<Closed> closed = new CompletableFuture<>();
        WebSocket.Builder builder = HTTP.newWebSocketBuilder().connectTimeout(WAIT);
        if (token != null) {
            builder.header("Authorization", "Bearer " + token);
        }
        return builder.buildAsync(uri(port), new WebSocket.Listener() {
            private final StringBuilder text = new StringBuilder();

            @Override
            public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
                text.append(data);
                if (last) {
                    received.add(text.toString());
                    text.setLength(0);
                }
                webSocket.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
                closed.complete(new Closed(statusCode, reason));
                return null;
            }

            @Override
            public void onError(WebSocket webSocket, Throwable error) {
                closed.completeExceptionally(error);
            }
        }).thenApply(ws -> new AgentClient(ws, received, closed));
    }

    /** Connects, failing the test if the upgrade is refused. */
    static AgentClient open(int port, String token) {
        return connect(port, token).orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join();
    }

    void send(AgentMessage message) {
        sendRaw(AgentMessages.encode(message));
    }

    void sendRaw(String text) {
        socket.sendText(text, true).orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join();
    }

    /** Sends a piece of a frame that is not its last. */
    void sendPart(String text) {
        socket.sendText(text, false).orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join();
    }

    /** The close frame if one arrives within {@code wait}, else null. */
    Closed closedNow(Duration wait) {
        try {
            return closed.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } catch (java.util.concurrent.ExecutionException e) {
            return new Closed(-1, String.valueOf(e.getCause()));
        }
    }

    /** The next frame, decoded; fails after {@link #WAIT}. */
    AgentMessage next() {
        return AgentMessages.decode(nextRaw());
    }

    /** The next config pushed; fails if another message comes first. */
    AgentMessage.ConfigPush nextConfig() {
        AgentMessage m = next();
        if (!(m instanceof AgentMessage.ConfigPush push)) {
            throw new AssertionError("expected a config, got " + m);
        }
        return push;
    }

    String nextRaw() {
        try {
            String frame = received.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            if (frame == null) {
                throw new AssertionError("no frame within " + WAIT);
            }
            return frame;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Frames received and not yet taken. */
    int pending() {
        return received.size();
    }

    /** The close frame the server sent; fails after {@link #WAIT}. */
    Closed awaitClose() {
        return closed.orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join();
    }

    @Override
    public void close() {
        if (!socket.isOutputClosed()) {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
        }
        socket.abort();
    }
}
