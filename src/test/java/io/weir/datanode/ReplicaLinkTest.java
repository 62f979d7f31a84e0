package io.weir.datanode;

import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.agent.ServerCertificate;
import io.weir.support.TestPki;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A copy that hangs, its socket open on 127.0.0.1: the link is taken down once its oldest request
 * has gone unanswered past the timeout, so that the primary's writes go on without it. And a link
 * that is down: nothing a sending thread holds waits for it.
 */
class ReplicaLinkTest {

    private static final Duration TIMEOUT = Duration.ofMillis(300);

    private ServerSocketChannel hung;
    private SocketChannel accepted;
    private ReplicaLink link;

    @BeforeEach
    void hungCopy() throws IOException {
        hung = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        InetSocketAddress at = (InetSocketAddress) hung.getLocalAddress();
        link = inClearTo(at.getPort());
        link.connect();
        accepted = hung.accept(); // and never answers, nor reads (past the hello, where a test reads requests)
        assertThat(link.isUp()).isTrue();
    }

    /** A link between two new node ids, in clear, to a copy at {@code port} on 127.0.0.1. */
    private static ReplicaLink inClearTo(int port) {
        return new ReplicaLink(UUID.randomUUID(), UUID.randomUUID(), "127.0.0.1:" + port, new ReplicationTls(new NbdTls(false)),
                TIMEOUT);
    }

    @AfterEach
    void close() throws IOException {
        link.close();
        accepted.close();
        hung.close();
    }

    /** The link's next connection, read past its hello (which names the link's node). */
    private SocketChannel acceptPastTheHello() throws IOException {
        SocketChannel c = hung.accept();
        ByteBuffer hello = ByteBuffer.allocate(ReplicationWire.HELLO_BYTES);
        ReplicationWire.readFully(c, hello);
        ReplicationWire.decodeHello(hello.flip());
        return c;
    }

    /** Calls {@link ReplicaLink#expire} as the watchdog would, until {@code done}. */
    private void watchUntil(java.util.concurrent.Callable<Boolean> done) {
        await().atMost(PATIENCE).until(() -> {
            link.expire(System.nanoTime());
            return done.call();
        });
    }

    /**
     * A thread that holds replies (a worker running a batch) writes them before it connects a
     * link that is down, which may take seconds (a copy that accepts and never answers the
     * handshake, say): here the connection to the hung copy opens, and the replies went out first.
     */
    @Test
    void whatAThreadHoldsGoesOutBeforeItConnectsALinkThatIsDown() {
        List<String> events = new CopyOnWriteArrayList<>();
        int port = ((InetSocketAddress) hung.socket().getLocalSocketAddress()).getPort();
        try (ReplicaLink fresh = inClearTo(port)) {
            fresh.whileOpening = () -> events.add("connecting");
            sendHolding(fresh, events);
            assertThat(fresh.isUp()).isTrue();
            assertThat(events).containsExactly("reply", "connecting");
        }
    }

    /**
     * A request a thread that holds replies cannot send (nobody listens) is answered LINK_DOWN on
     * that thread, which may write the volume's in-sync set to disk: the held replies went out
     * before.
     */
    @Test
    void whatAThreadHoldsGoesOutBeforeARequestItCannotSendIsAnswered() throws IOException {
        int nobody;
        try (ServerSocketChannel gone = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            nobody = ((InetSocketAddress) gone.getLocalAddress()).getPort();
        }
        List<String> events = new CopyOnWriteArrayList<>();
        try (ReplicaLink down = inClearTo(nobody)) {
            sendHolding(down, events);
        }
        assertThat(events).containsExactly("reply", "answered " + ReplicationWire.LINK_DOWN);
    }

    /**
     * Sends a WRITE on {@code to} while holding a client reply, as a worker running a batch does;
     * {@code events} gets "reply" when the reply is written, "answered STATUS" when the request is.
     */
    private static void sendHolding(ReplicaLink to, List<String> events) {
        ReplyBatch.Sink client = new ReplyBatch.Sink() {
            @Override
            public void sendNow(ByteBuffer[] replies, int n) {
                events.add("reply");
            }

            @Override
            public void requestDone(long bytes) {
            }
        };
        ReplyBatch.startHolding();
        try {
            ReplyBatch.current().hold(client, ByteBuffer.allocate(16));
            to.send(ReplicationWire.WRITE, (byte) 0, UUID.randomUUID(), 1, 0, 4096, ByteBuffer.allocate(4096),
                    (status, epoch) -> events.add("answered " + status));
        } finally {
            ReplyBatch.endHolding();
        }
    }

    @Test
    void aRequestACopyNeverAnswersTakesTheLinkDownAndIsAnsweredLinkDown() {
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        long sent = System.nanoTime();
        link.send(ReplicationWire.PING, (byte) 0, UUID.randomUUID(), 1, 0, 0, null, (status, epoch) -> answer.complete(status));
        watchUntil(answer::isDone);
        assertThat(System.nanoTime() - sent).as("not before the timeout").isGreaterThanOrEqualTo(TIMEOUT.toNanos());
        assertThat(answer.join()).isEqualTo(ReplicationWire.LINK_DOWN);
        assertThat(link.isUp()).isFalse();
    }

    /** The copy stops reading: the socket's buffers fill and the forwarding thread blocks in its write until the link is taken down. */
    @Test
    void aWriterBlockedOnACopyThatStopsReadingIsLetGo() {
        List<Integer> answers = new CopyOnWriteArrayList<>();
        ByteBuffer mib = ByteBuffer.allocate(1 << 20);
        int writes = 64; // far more than the socket buffers of both ends hold
        CompletableFuture<Void> forwarding = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < writes; i++) {
                link.send(ReplicationWire.WRITE, (byte) 0, UUID.randomUUID(), 1, (long) i << 20, 1 << 20, mib.duplicate(),
                        (status, epoch) -> answers.add(status));
            }
        });
        watchUntil(() -> forwarding.isDone() && answers.size() == writes);
        assertThat(forwarding).isCompleted();
        assertThat(answers).containsOnly(ReplicationWire.LINK_DOWN);
    }

    /**
     * The reader of a connection that failed reports it late, when the link is already up again
     * on a new connection: the new connection stays up and its request is answered by the copy,
     * not LINK_DOWN (which would have the primary copy the whole volume again).
     */
    @Test
    void aLateFailureOfAnOldConnectionLeavesTheNewOneUp() throws Exception {
        java.nio.channels.ByteChannel old = link.channelNow();
        accepted.close(); // the copy restarts: the old connection ends
        await().atMost(PATIENCE).until(() -> !link.isUp());
        await().atMost(PATIENCE).until(() -> { // once the retry interval since the last attempt has passed
            link.connect();
            return link.isUp();
        });
        accepted = acceptPastTheHello();

        CompletableFuture<Integer> answer = new CompletableFuture<>();
        link.send(ReplicationWire.PING, (byte) 0, UUID.randomUUID(), 1, 0, 0, null, (status, epoch) -> answer.complete(status));
        ByteBuffer request = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES);
        ReplicationWire.readFully(accepted, request);
        ReplicationWire.Request r = ReplicationWire.Request.decode(request.flip());

        link.fail(old, new IOException("the old connection's reader, late")); // as its reader would

        ByteBuffer reply = ByteBuffer.allocate(ReplicationWire.REPLY_BYTES);
        ReplicationWire.encodeReply(reply, ReplicationWire.OK, r.handle(), 1);
        ReplicationWire.writeFully(accepted, reply);
        assertThat(answer.get(PATIENCE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(ReplicationWire.OK);
        assertThat(link.isUp()).isTrue();
    }

    /**
     * A request sent while a connection is being opened, when the new connection is set but its
     * opener still holds the write lock, is queued for it and written once the opener lets go;
     * it was left in the queue until the next request or the watchdog.
     */
    @Test
    void aRequestSentWhileTheConnectionOpensIsWrittenWhenItIsUp() throws Exception {
        accepted.close(); // the copy restarts: the old connection ends
        await().atMost(PATIENCE).until(() -> !link.isUp());
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        link.whileOpening = () -> { // the new connection is set; the opener holds the write lock
            link.whileOpening = null;
            CompletableFuture.runAsync(() -> link.send(ReplicationWire.PING, (byte) 0, UUID.randomUUID(), 1, 0, 0, null,
                    (status, epoch) -> answer.complete(status))).join();
        };
        await().atMost(PATIENCE).until(() -> { // once the retry interval since the last attempt has passed
            link.connect();
            return link.isUp();
        });
        accepted = acceptPastTheHello();
        ByteBuffer request = ByteBuffer.allocate(ReplicationWire.REQUEST_BYTES);
        CompletableFuture.runAsync(() -> {
            try {
                ReplicationWire.readFully(accepted, request);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).get(5, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(ReplicationWire.Request.decode(request.flip()).type()).isEqualTo(ReplicationWire.PING);
        assertThat(answer).isNotDone();
    }

    /**
     * A hung copy whose kernel still accepts connections: a TLS handshake with it never ends. The
     * attempt is given up after the connect timeout, and a forwarding thread that finds it under
     * way is answered once it is, not never.
     */
    @Test
    void aHandshakeACopyNeverAnswersIsGivenUpAndNobodyWaitsForIt() throws Exception {
        TestPki pki = TestPki.create("weir test CA");
        TestPki.Issued cert = pki.issueNode(UUID.randomUUID(), 0x51);
        NbdTls tls = new NbdTls(false);
        tls.serverCertificate(new ServerCertificate(cert.keys().getPrivate(), cert.certificate(), List.of(pki.certificate())));
        InetSocketAddress at = (InetSocketAddress) hung.getLocalAddress();
        ReplicaLink tlsLink = new ReplicaLink(UUID.randomUUID(), UUID.randomUUID(), "127.0.0.1:" + at.getPort(), new ReplicationTls(tls), TIMEOUT);
        try {
            CompletableFuture<Void> connecting = CompletableFuture.runAsync(tlsLink::connect);
            await().atMost(PATIENCE).until(tlsLink::connectingNow);
            CompletableFuture<Integer> answer = new CompletableFuture<>();
            CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> tlsLink.send(ReplicationWire.PING, (byte) 0,
                    UUID.randomUUID(), 1, 0, 0, null, (status, epoch) -> answer.complete(status)));
            await().atMost(PATIENCE).until(() -> {
                tlsLink.expire(System.nanoTime());
                return connecting.isDone() && sending.isDone();
            });
            assertThat(answer).isCompletedWithValue(ReplicationWire.LINK_DOWN);
            assertThat(tlsLink.isUp()).isFalse();
        } finally {
            tlsLink.close();
        }
    }
}
