package io.weir.controlplane.push;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.ConfigDigest;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.ProtocolException;
import jakarta.websocket.SendResult;
import jakarta.websocket.Session;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.adapter.NativeWebSocketSession;

/**
 * One agent's connection: its conversation state and its outbound queue.
 *
 * <h2>The outbound queue</h2>
 * Bounded by construction: at most one config snapshot waits (a newer one replaces an unsent older
 * one, since each is a full snapshot), at most {@value #MAX_USAGE_ACKS} usage acknowledgements
 * (kept as bare sequence numbers; an agent resending its buffer after a reconnect gets hundreds
 * at once) and at most {@value #MAX_CONTROL} other messages. One frame
 * is in flight at a time, sent with the container's asynchronous send; its completion sends the
 * next. No thread ever blocks on a slow agent, so it delays no one else; a send that fails closes
 * the connection. An error message is always the last frame: after it the connection is closed
 * with the given status.
 *
 * <h2>Locking</h2>
 * All state is guarded by {@code this}; the container's send is started outside the lock.
 */
final class AgentSession implements UsageIntake.Reporter, AgentRegistry.LiveSession {

    private static final Logger log = LoggerFactory.getLogger(AgentSession.class);

    /** Most non-config messages queued; more is a misbehaving conversation and closes it. */
    static final int MAX_CONTROL = 16;

    /** Most usage acknowledgements queued: above an agent's default buffer (3,600 reports); more closes the connection. */
    static final int MAX_USAGE_ACKS = 8192;

    /** How many revisions sent on this session are remembered, to tell a true ack from a made-up one. */
    static final int REMEMBERED_SENDS = 16;

    /** Longest close reason the WebSocket protocol carries, in UTF-8 bytes. */
    static final int MAX_CLOSE_REASON_BYTES = 123;

    private final WebSocketSession session;
    private final UUID nodeId;
    private final UUID tokenId;
    private final PushMetrics metrics;

    /** Text of an unfinished frame received so far, or null (none: nothing is held between frames). */
    private StringBuilder partial;
    /** Whether a usage report was refused on this session. */
    private boolean refusedBefore;

    private final Deque<String> control = new ArrayDeque<>();
    private final Deque<AgentMessage.UsageAck> usageAcks = new ArrayDeque<>();
    private DesiredConfig pendingConfig;
    private boolean inFlight;
    private CloseStatus closeAfterDrain;
    private boolean closed;

    /** Whether hello has been received. */
    private boolean greeted;
    /** The revision the agent enforces: its hello's, then that of each ack of a revision sent here. */
    private long applied;
    /** The hello's {@code configDigest}, or null. */
    private String helloDigest;
    /** The agent's version, as its hello named it. */
    private String agentVersion;
    /**
     * Revision of the latest snapshot offered to the agent (queued, or found to be what it has
     * already), and when it was queued; {@value #NONE_OFFERED} until the first offer after hello.
     */
    private long offered = NONE_OFFERED;
    private long offeredAtNanos;
    /** The latest revisions actually sent on this session, oldest first; at most {@value #REMEMBERED_SENDS}. */
    private final Deque<Long> sent = new ArrayDeque<>();

    /** {@link #offered} before the first offer after hello. */
    private static final long NONE_OFFERED = -1;

    /**
     * @param tokenId the token that authenticated the upgrade, or null if it was no Weir token;
     *     the session ends when that token is revoked or expires
     */
    AgentSession(WebSocketSession session, UUID nodeId, UUID tokenId, PushMetrics metrics, java.time.Instant openedAt) {
        this.openedAt = openedAt;
        this.session = session;
        this.nodeId = nodeId;
        this.tokenId = tokenId;
        this.metrics = metrics;
    }

    /** When the connection was opened: a node's newest connection is the one its presence row names. */
    private final java.time.Instant openedAt;

    @Override
    public java.time.Instant openedAt() {
        return openedAt;
    }

    /** Whether the connection has closed (not only been asked to close after a send). */
    @Override
    public synchronized boolean closed() {
        return closed;
    }

    /** Certificate requests received on this session; frames of a session arrive one at a time. */
    private int certificateRequests;

    /** Counts a certificate request and answers how many this session has made, this one included. */
    synchronized int certificateRequested() {
        return ++certificateRequests;
    }

    /** The token the session was opened with, or null. */
    UUID tokenId() {
        return tokenId;
    }

    @Override
    public UUID nodeId() {
        return nodeId;
    }

    @Override
    public String id() {
        return session.getId();
    }

    /** Characters of an unfinished frame held. Called on the session's receiving thread only. */
    int partialChars() {
        return partial == null ? 0 : partial.length();
    }

    void appendPartial(String text) {
        if (partial == null) {
            partial = new StringBuilder(text.length() * 2);
        }
        partial.append(text);
    }

    /** The assembled frame; the session holds nothing after it. */
    String takePartial() {
        String frame = partial == null ? "" : partial.toString();
        partial = null;
        return frame;
    }

    /** Drops an unfinished frame; answers how many characters it held. */
    int dropPartial() {
        int held = partialChars();
        partial = null;
        return held;
    }

    /** True the first time it is asked: whether a usage refusal is the session's first. */
    synchronized boolean firstRefusal() {
        return !refusedBefore && (refusedBefore = true);
    }

    /** Whether the session is closed or closing (an error was sent): further frames are ignored. */
    synchronized boolean closing() {
        return closed || closeAfterDrain != null;
    }

    @Override
    public synchronized boolean greeted() {
        return greeted;
    }

    @Override
    public synchronized String agentVersion() {
        return agentVersion;
    }

    /**
     * Records the hello: the agent runs {@code appliedRevision}, whose content has the digest
     * {@code configDigest} (null if it did not say), and is of version {@code agentVersion}.
     */
    synchronized void greet(long appliedRevision, String configDigest, String agentVersion) {
        greeted = true;
        this.agentVersion = agentVersion;
        applied = appliedRevision;
        helloDigest = configDigest;
    }

    /** Whether the agent has not acked the latest snapshot offered. */
    synchronized boolean behind() {
        return greeted && offered != NONE_OFFERED && applied != offered;
    }

    /**
     * Whether the agent's hello proved that it runs {@code config}: the same revision, and the
     * same digest when it sent one. Revision 0 in a hello means nothing applied: even a snapshot of
     * revision 0 is news.
     */
    synchronized boolean runs(DesiredConfig config) {
        return greeted && applied != 0 && config.revision() == applied
                && (helloDigest == null || helloDigest.equals(ConfigDigest.of(config)));
    }

    /**
     * Queues {@code config}, replacing an unsent older snapshot, if the agent needs it. The first
     * offer after hello (from the hello itself or from a refresh that came first) is sent unless
     * the agent has exactly this snapshot: the same revision (not 0, which means nothing applied)
     * and, if the hello named one, the same {@link ConfigDigest digest}. So an agent ahead of the control plane (its database was
     * restored from a backup) or one holding another snapshot of the same revision (another
     * node's) gets it. Every later offer is sent if its revision is newer than the last offered.
     *
     * @return whether it was queued
     */
    boolean offer(DesiredConfig config) {
        synchronized (this) {
            if (closed || closeAfterDrain != null || !greeted) {
                return false;
            }
            if (offered == NONE_OFFERED) {
                offered = config.revision();
                if (runs(config)) {
                    return false;
                }
            } else if (config.revision() <= offered) {
                return false;
            }
            if (pendingConfig != null) {
                metrics.superseded();
            }
            pendingConfig = config;
            offered = config.revision();
            offeredAtNanos = System.nanoTime();
        }
        drain();
        return true;
    }

    /**
     * Whether a snapshot of {@code revision} was sent on this session (among the last
     * {@value #REMEMBERED_SENDS}): only then may the agent ack or nack it.
     */
    synchronized boolean wasSent(long revision) {
        return sent.contains(revision);
    }

    /**
     * Records an ack of a revision {@link #wasSent sent here}; answers the nanoseconds since it was
     * queued, or -1 if it is not the latest offered.
     */
    synchronized long acked(long revision) {
        applied = revision;
        return revision == offered && offeredAtNanos != 0 ? System.nanoTime() - offeredAtNanos : -1;
    }

    /**
     * How long the agent has been behind: nanoseconds since the newest snapshot offered to it was
     * queued, while it has not acked it; 0 when it is not behind.
     */
    synchronized long lagNanos(long nowNanos) {
        return behind() && offeredAtNanos != 0 ? Math.max(0, nowNanos - offeredAtNanos) : 0;
    }

    /** Queues a {@code usageAck} for report {@code sequence}. */
    @Override
    public void ackUsage(long sequence) {
        answerUsage(new AgentMessage.UsageAck(sequence));
    }

    /** Queues a {@code usageAck} that says report {@code sequence} was refused, and why. */
    @Override
    public void refuseUsage(long sequence, String reason) {
        answerUsage(new AgentMessage.UsageAck(sequence,
                io.weir.protocol.WireText.clean(reason, io.weir.protocol.WireText.MAX_REASON)));
    }

    private void answerUsage(AgentMessage.UsageAck answer) {
        synchronized (this) {
            if (closed || closeAfterDrain != null) {
                return;
            }
            if (usageAcks.size() >= MAX_USAGE_ACKS) {
                closeAfterDrain = new CloseStatus(CloseStatus.POLICY_VIOLATION.getCode(), "outbound queue full");
            } else {
                usageAcks.add(answer);
            }
        }
        drain();
    }

    /** Queues a message that is not a config snapshot. */
    void send(AgentMessage message) {
        synchronized (this) {
            if (closed || closeAfterDrain != null) {
                return;
            }
            if (control.size() >= MAX_CONTROL) {
                closeAfterDrain = new CloseStatus(CloseStatus.POLICY_VIOLATION.getCode(), "outbound queue full");
            } else {
                control.add(AgentMessages.encode(message));
            }
        }
        drain();
    }

    /** Sends {@code error} as the last frame, then closes with {@code status} and the error's reason. */
    void fail(AgentMessage.ErrorMessage error, CloseStatus status) {
        synchronized (this) {
            if (closed || closeAfterDrain != null) {
                return;
            }
            pendingConfig = null;
            control.clear();
            usageAcks.clear();
            control.add(AgentMessages.encode(error));
            closeAfterDrain = new CloseStatus(status.getCode(), truncate(error.code() + ": " + error.reason()));
        }
        drain();
    }

    /** Closes with {@code status} once what is queued (usage acks above all) is sent; what comes after is dropped. */
    @Override
    public void closeAfterSending(CloseStatus status) {
        synchronized (this) {
            if (closed || closeAfterDrain != null) {
                return;
            }
            closeAfterDrain = status;
        }
        drain();
    }

    /** Closes now, dropping whatever is queued. */
    @Override
    public void close(CloseStatus status) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            pendingConfig = null;
            control.clear();
            usageAcks.clear();
        }
        try {
            session.close(status);
        } catch (IOException | RuntimeException e) {
            log.debug("closing the session of node {} failed", nodeId, e);
        }
    }

    synchronized void markClosed() {
        closed = true;
        pendingConfig = null;
        control.clear();
        usageAcks.clear();
    }

    private void drain() {
        String next;
        CloseStatus close = null;
        synchronized (this) {
            if (inFlight || closed) {
                return;
            }
            next = control.poll();
            if (next == null && pendingConfig != null) {
                DesiredConfig config = pendingConfig;
                pendingConfig = null;
                try {
                    next = AgentMessages.encode(new AgentMessage.ConfigPush(config));
                } catch (ProtocolException e) { // too large for a frame: the agent cannot be given its config
                    close = new CloseStatus(CloseStatus.SERVER_ERROR.getCode(), "the node's config is too large to send");
                    log.error("the config of node {} (revision {}, {} volumes) is too large to send: {}; closing its "
                            + "connection", nodeId, config.revision(), config.volumes().size(), e.getMessage());
                }
                if (next != null) {
                    if (sent.size() == REMEMBERED_SENDS) {
                        sent.removeFirst();
                    }
                    sent.addLast(config.revision());
                }
            }
            if (next == null && close == null && !usageAcks.isEmpty()) {
                next = AgentMessages.encode(usageAcks.poll());
            }
            if (next != null) {
                inFlight = true;
            } else if (close == null) { // nothing to send: closed now only if asked to after the sends
                close = closeAfterDrain;
                if (close == null) {
                    return;
                }
            }
        }
        if (next == null) {
            close(close);
            return;
        }
        Session nativeSession = ((NativeWebSocketSession) session).getNativeSession(Session.class);
        try {
            nativeSession.getAsyncRemote().sendText(next, this::sent);
        } catch (RuntimeException e) {
            sent(new SendResult(e));
        }
    }

    private void sent(SendResult result) {
        synchronized (this) {
            inFlight = false;
        }
        if (!result.isOK()) {
            log.debug("sending to node {} failed; closing", nodeId, result.getException());
            close(CloseStatus.SESSION_NOT_RELIABLE);
            return;
        }
        drain();
    }

    /** {@code text} cut to what a close frame carries. */
    static String truncate(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= MAX_CLOSE_REASON_BYTES) {
            return text;
        }
        String cut = text.substring(0, Math.min(text.length(), MAX_CLOSE_REASON_BYTES - 3));
        while (cut.getBytes(StandardCharsets.UTF_8).length > MAX_CLOSE_REASON_BYTES - 3) {
            cut = cut.substring(0, cut.length() - 1);
        }
        return cut + "...";
    }
}
