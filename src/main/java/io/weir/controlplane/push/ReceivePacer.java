package io.weir.controlplane.push;

import jakarta.websocket.Session;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How fast this replica reads each node's frames: a token bucket per node of
 * {@code receiveBurst} frames refilled at {@code receiveRate} a second
 * ({@link PushProperties}). A frame that finds the bucket empty is handled, and then the session
 * stops reading (Tomcat's {@code WsSession.suspend}) until the bucket holds a token again. The
 * frames the node sends meanwhile wait in its socket, and TCP's flow control slows the sender: a
 * flooding node costs this replica no more than the rate in decoding, intake slots and threads,
 * and is neither closed nor answered with errors, so it does not come back through reconnects either.
 *
 * <p>The defaults leave honest agents alone: an agent sends a usage report per interval (at least
 * a second), a status when it changes and an answer per config, a few frames a second; and the
 * burst is above an agent's whole buffer of reports ({@code UsageReporter.DEFAULT_MAX_REPORTS},
 * 3,600) that it resends after a reconnect. The bucket belongs to the node, not the connection, so
 * reconnecting does not refill it. Counted: every frame handed to the handler, parts of a large
 * frame included.
 */
final class ReceivePacer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReceivePacer.class);

    private final double ratePerNano;
    private final double burst;
    private final LongSupplier nanoTime;
    private final Map<UUID, Bucket> buckets = new ConcurrentHashMap<>();
    private final ScheduledExecutorService resumer;

    ReceivePacer(PushProperties properties) {
        this(properties.receiveRate(), properties.receiveBurst(), System::nanoTime);
    }

    ReceivePacer(double framesPerSecond, int burst, LongSupplier nanoTime) {
        if (!(framesPerSecond > 0) || burst < 1) {
            throw new IllegalArgumentException("weir.push.receive-rate must be above 0 and receive-burst at least 1, not "
                    + framesPerSecond + " and " + burst);
        }
        this.ratePerNano = framesPerSecond / 1e9;
        this.burst = burst;
        this.nanoTime = nanoTime;
        this.resumer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "weir-agent-receive-pacer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Takes a token of {@code nodeId}'s bucket for a frame just received; answers how many
     * nanoseconds to stop reading from the node before the next frame, 0 to read on.
     */
    long take(UUID nodeId) {
        return buckets.computeIfAbsent(nodeId, n -> new Bucket(burst, nanoTime.getAsLong())).take(nanoTime.getAsLong());
    }

    /**
     * Takes a token for a frame of {@code nodeId} received on {@code session}; when the bucket is
     * empty, suspends the session's reading and resumes it once a token is back. Called on the
     * session's receiving thread.
     */
    void paced(UUID nodeId, Session session) {
        long waitNanos = take(nodeId);
        if (waitNanos <= 0 || !(session instanceof org.apache.tomcat.websocket.WsSession ws)) {
            return;
        }
        ws.suspend();
        resumer.schedule(() -> {
            try {
                ws.resume();
            } catch (RuntimeException e) { // closed meanwhile: nothing to resume
                log.debug("agent of node {}: reading not resumed: {}", nodeId, e.getMessage());
            }
        }, waitNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * A connection of {@code nodeId} closed: its bucket is dropped if full (as a new one would be),
     * so the map holds only nodes connected or in debt; a bucket in debt stays, so that
     * reconnecting does not refill it.
     */
    void closed(UUID nodeId) {
        long now = nanoTime.getAsLong();
        buckets.computeIfPresent(nodeId, (n, b) -> b.full(now) ? null : b);
    }

    @Override
    public void close() {
        resumer.shutdownNow();
    }

    /** A token bucket, which may run into debt by one frame: the frame that found it empty. */
    private final class Bucket {
        private double tokens;
        private long updatedNanos;

        Bucket(double tokens, long now) {
            this.tokens = tokens;
            this.updatedNanos = now;
        }

        synchronized long take(long now) {
            tokens = Math.min(burst, tokens + (now - updatedNanos) * ratePerNano);
            updatedNanos = now;
            tokens -= 1;
            return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / ratePerNano);
        }

        synchronized boolean full(long now) {
            return tokens + (now - updatedNanos) * ratePerNano >= burst;
        }
    }
}
