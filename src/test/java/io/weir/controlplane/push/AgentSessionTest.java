package io.weir.controlplane.push;

import io.weir.support.TestConfigs;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.ConfigDigest;
import io.weir.protocol.DesiredConfig;
import jakarta.websocket.RemoteEndpoint;
import jakarta.websocket.SendHandler;
import jakarta.websocket.SendResult;
import jakarta.websocket.Session;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.web.socket.adapter.standard.StandardWebSocketSession;

/**
 * The outbound queue of one agent session, against a container whose sends complete only when the
 * test says so: a slow agent. The container's session is the one thing faked (it is the socket).
 */
class AgentSessionTest {

    private final List<String> sent = new ArrayList<>();
    private final List<SendHandler> inFlight = new ArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final UUID node = UUID.randomUUID();
    /** The WebSocket under the last session made. */
    private Session nativeSession;

    private AgentSession session() {
        return session(0, null);
    }

    /** A session whose hello said {@code appliedRevision} and {@code digest}. */
    private AgentSession session(long appliedRevision, String digest) {
        nativeSession = mock(Session.class);
        RemoteEndpoint.Async async = mock(RemoteEndpoint.Async.class);
        when(nativeSession.getAsyncRemote()).thenReturn(async);
        when(nativeSession.getId()).thenReturn("s1");
        doAnswer(call -> {
            sent.add(call.getArgument(0));
            inFlight.add(call.getArgument(1));
            return null;
        }).when(async).sendText(anyString(), any(SendHandler.class));
        StandardWebSocketSession session = new StandardWebSocketSession(new HttpHeaders(), Map.of(), null, null);
        session.initializeNativeSession(nativeSession);
        AgentSession agent = new AgentSession(session, node, null, new PushMetrics(registry), java.time.Instant.now());
        agent.greet(appliedRevision, digest, "test");
        return agent;
    }

    private DesiredConfig config(long revision) {
        return TestConfigs.config().node(node).revision(revision).build();
    }

    private long revisionOf(String frame) {
        return ((AgentMessage.ConfigPush) AgentMessages.decode(frame)).config().revision();
    }

    @Test
    void aNewerSnapshotReplacesAnUnsentOlderOneOfASlowAgent() {
        AgentSession agent = session();
        agent.offer(config(1));
        agent.offer(config(2));
        agent.offer(config(3));
        assertThat(sent).hasSize(1);
        assertThat(revisionOf(sent.get(0))).isEqualTo(1);

        inFlight.get(0).onResult(new SendResult());

        assertThat(sent).hasSize(2);
        assertThat(revisionOf(sent.get(1))).isEqualTo(3);
        assertThat(registry.get("weir.push.snapshots.superseded").counter().count()).isEqualTo(1);
        assertThat(agent.behind()).isTrue();
        agent.acked(3);
        assertThat(agent.behind()).isFalse();
    }

    @Test
    void aSnapshotNoNewerThanWhatWasOfferedIsNotSent() {
        AgentSession agent = session();
        agent.offer(config(5));
        inFlight.get(0).onResult(new SendResult());
        assertThat(agent.offer(config(5))).isFalse();
        assertThat(agent.offer(config(4))).isFalse();
        assertThat(sent).hasSize(1);
    }

    @Test
    void anAgentAheadOfTheControlPlaneIsSentItsSnapshot() {
        AgentSession agent = session(1_000, null);
        assertThat(agent.offer(config(5))).isTrue();
        assertThat(revisionOf(sent.get(0))).isEqualTo(5);
        assertThat(agent.behind()).isTrue();
        agent.acked(5);
        assertThat(agent.behind()).isFalse();
    }

    @Test
    void anAgentWithTheSameRevisionAndDigestIsSentNothingUntilANewerOne() {
        AgentSession agent = session(5, ConfigDigest.of(config(5)));
        assertThat(agent.offer(config(5))).isFalse();
        assertThat(agent.behind()).isFalse();
        assertThat(agent.offer(config(6))).isTrue();
        assertThat(sent).hasSize(1);
    }

    @Test
    void anAgentWithTheSameRevisionButAnotherDigestIsSentTheSnapshot() {
        AgentSession agent = session(5, ConfigDigest.of(TestConfigs.config().node(UUID.randomUUID()).revision(5).build()));
        assertThat(agent.offer(config(5))).isTrue();
    }

    @Test
    void anAgentThatAppliedNothingGetsEvenASnapshotOfRevisionZero() {
        // A fresh database: nothing has bumped the revision yet, and the node's snapshot (default tasks) is revision 0.
        AgentSession agent = session(0, null);
        assertThat(agent.offer(config(0))).isTrue();
    }

    @Test
    void onlyRevisionsSentOnTheSessionMayBeAcked() {
        AgentSession agent = session(3, null);
        agent.offer(config(4));
        agent.offer(config(5)); // queued behind 4, then replaced by 6: never sent
        agent.offer(config(6));
        inFlight.get(0).onResult(new SendResult());
        assertThat(agent.wasSent(4)).isTrue();
        assertThat(agent.wasSent(5)).isFalse();
        assertThat(agent.wasSent(6)).isTrue();
        assertThat(agent.wasSent(3)).as("the hello's own revision was never sent").isFalse();
        assertThat(agent.wasSent(1_000)).isFalse();
    }

    @Test
    void anErrorIsTheLastFrameAndDropsQueuedSnapshots() {
        AgentSession agent = session();
        agent.offer(config(1));
        agent.offer(config(2));
        agent.fail(new AgentMessage.ErrorMessage("malformed", "bad"), org.springframework.web.socket.CloseStatus.PROTOCOL_ERROR);
        assertThat(agent.closing()).isTrue();
        inFlight.get(0).onResult(new SendResult());
        assertThat(sent).hasSize(2);
        assertThat(AgentMessages.decode(sent.get(1))).isEqualTo(new AgentMessage.ErrorMessage("malformed", "bad"));
        assertThat(agent.offer(config(3))).isFalse();
    }

    @Test
    void theAcksOfAWholeResentBufferAreAllSentInOrderToASlowAgent() {
        AgentSession agent = session();
        int resent = 3600; // an hour of one-second reports: far more than the other control messages' bound
        for (int seq = 1; seq <= resent; seq++) {
            agent.ackUsage(seq);
        }
        agent.offer(config(7));
        for (int i = 0; i < inFlight.size(); i++) {
            inFlight.get(i).onResult(new SendResult());
        }

        assertThat(agent.closing()).isFalse();
        assertThat(sent).hasSize(resent + 1);
        assertThat(AgentMessages.decode(sent.get(0))).isEqualTo(new AgentMessage.UsageAck(1));
        assertThat(revisionOf(sent.get(1))).as("a snapshot goes before queued acks").isEqualTo(7);
        assertThat(sent.subList(2, sent.size())).extracting(f -> ((AgentMessage.UsageAck) AgentMessages.decode(f)).sequence())
                .isSorted().hasSize(resent - 1).startsWith(2L).endsWith((long) resent);
    }

    /** The usage intake's close of a node over its share: the acks queued before it reach the agent first. */
    @Test
    void aCloseAfterSendingSendsTheQueuedAcksFirst() throws Exception {
        AgentSession agent = session();
        for (int seq = 1; seq <= 5; seq++) {
            agent.ackUsage(seq); // the first is in flight, the others queued
        }
        agent.closeAfterSending(new org.springframework.web.socket.CloseStatus(1013, "usage intake full"));
        agent.ackUsage(6); // after the close was asked for: dropped
        assertThat(agent.closing()).isTrue();
        for (int i = 0; i < inFlight.size(); i++) {
            org.mockito.Mockito.verify(nativeSession, org.mockito.Mockito.never()).close(any());
            inFlight.get(i).onResult(new SendResult());
        }
        assertThat(sent).extracting(f -> ((AgentMessage.UsageAck) AgentMessages.decode(f)).sequence())
                .containsExactly(1L, 2L, 3L, 4L, 5L);
        org.mockito.Mockito.verify(nativeSession).close(any());
    }

    /**
     * A snapshot larger than a frame cannot be sent: the session is closed as the server's fault
     * (1011), its usage acks are dropped with it, and whoever queues an ack on it is not hurt. The
     * snapshot stayed pending before, every later drain threw encoding it again, and the usage
     * intake's acknowledgements of every node behind this one in a batch stopped there.
     */
    @Test
    void aSnapshotTooLargeForAFrameClosesTheSessionAndNothingElse() throws Exception {
        AgentSession agent = session();
        io.weir.support.TestConfigs huge = io.weir.support.TestConfigs.config().tenant("t");
        for (int i = 0; i < AgentMessages.MAX_CONFIG_FRAME_BYTES / 2000; i++) {
            huge.volume("t", String.format("%02000d", i), 1 << 20);
        }
        agent.offer(huge.revision(9).build());
        org.mockito.Mockito.verify(nativeSession).close(org.mockito.ArgumentMatchers.argThat(
                (jakarta.websocket.CloseReason r) -> r.getCloseCode().getCode() == 1011));
        assertThat(agent.closing()).isTrue();
        agent.ackUsage(1);
        assertThat(sent).isEmpty();
    }

    @Test
    void anAgentThatReadsNoAcksPastTheBoundIsClosed() {
        AgentSession agent = session();
        for (int seq = 1; seq <= AgentSession.MAX_USAGE_ACKS + 1; seq++) {
            agent.ackUsage(seq); // the first is in flight and never completes
        }
        assertThat(agent.closing()).isFalse();
        agent.ackUsage(AgentSession.MAX_USAGE_ACKS + 2);
        assertThat(agent.closing()).isTrue();
    }

    @Test
    void anAgentBehindItsNewestSnapshotShowsAsLagUntilItAcks() {
        AgentSession agent = session();
        assertThat(agent.lagNanos(System.nanoTime())).isZero();
        agent.offer(config(4));
        long later = System.nanoTime() + 5_000_000_000L;
        assertThat(agent.lagNanos(later)).isGreaterThanOrEqualTo(5_000_000_000L);
        agent.acked(4);
        assertThat(agent.lagNanos(later)).isZero();
    }
}
