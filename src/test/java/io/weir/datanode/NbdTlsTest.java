package io.weir.datanode;

import static io.weir.support.Bytes.MiB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.weir.agent.ServerCertificate;
import io.weir.datanode.NbdTestClient.OptionReply;
import io.weir.protocol.ClientCertificateEntry;
import io.weir.protocol.TlsConfig;
import io.weir.support.TestConfigs;
import io.weir.support.TestPki;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NBD over TLS (issue 19): NBD_OPT_STARTTLS as the protocol document describes it, on the node's
 * certificate from the cluster CA, and a client certificate's tenant sees only its own exports.
 * A real data node and a JDK TLS client over real sockets on 127.0.0.1; the CA and the
 * certificates are made by the test ({@link TestPki}) as the control plane's would be.
 */
class NbdTlsTest {

    private static final long ACME_SERIAL = 0x10;
    private static final long OTHER_SERIAL = 0x20;
    private static final long REVOKED_SERIAL = 0x30;

    @TempDir
    java.nio.file.Path dir;
    DataNode node;
    InetSocketAddress address;
    TestPki ca = TestPki.create("weir test CA");

    @BeforeEach
    void start() throws IOException {
        // a batch's replies held to its end however slowly its requests run, so that they go out together
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .replyHold(Duration.ofSeconds(10)).build();
        node.apply(config(REVOKED_SERIAL));
        TestPki.Issued server = ca.issue("node", 0x99);
        node.serverCertificate(new ServerCertificate(server.keys().getPrivate(), server.certificate(),
                List.of(ca.certificate())));
        address = node.listenAddress();
    }

    @AfterEach
    void stop() {
        node.close();
    }

    /** Two tenants with a volume each; acme's and other's certificates valid, {@code revoked} revoked. */
    private io.weir.protocol.DesiredConfig config(long... revoked) {
        Instant later = Instant.now().plusSeconds(86_400);
        List<ClientCertificateEntry> out = new ArrayList<>();
        for (long serial : revoked) {
            out.add(new ClientCertificateEntry(Long.toHexString(serial), TestConfigs.id("tenant:acme"), later));
        }
        List<ClientCertificateEntry> valid = new ArrayList<>();
        for (long serial : new long[] {ACME_SERIAL, OTHER_SERIAL}) {
            if (java.util.Arrays.stream(revoked).noneMatch(r -> r == serial)) {
                valid.add(new ClientCertificateEntry(Long.toHexString(serial),
                        TestConfigs.id(serial == ACME_SERIAL ? "tenant:acme" : "tenant:other"), later));
            }
        }
        return TestConfigs.config().tenant("acme").tenant("other").volume("acme", "db", 4 * MiB)
                .volume("other", "secret", 4 * MiB).tls(new TlsConfig(List.of(TestPki.pem(ca.certificate())), valid, out))
                .build();
    }

    private NbdTestClient tlsClient(long serial) throws IOException {
        NbdTestClient c = new NbdTestClient(address).handshake();
        OptionReply r = c.startTls(ca.clientContext(ca.issue("client", serial)));
        assertThat(r.type()).as(r.message()).isEqualTo(Nbd.REP_ACK);
        return c;
    }

    /** Waits until the node has closed {@code c}'s connection: a read fails. */
    static void awaitClosed(NbdTestClient c) {
        org.awaitility.Awaitility.await("the connection closes").atMost(io.weir.support.Patience.PATIENCE).until(() -> {
            try {
                c.read(0, 4096);
                return false;
            } catch (IOException e) {
                return true;
            }
        });
    }

    private static List<String> list(NbdTestClient c) throws IOException {
        List<String> names = new ArrayList<>();
        for (OptionReply r : c.option(Nbd.OPT_LIST, new byte[0])) {
            if (r.type() == Nbd.REP_SERVER) {
                names.add(new String(r.data(), 4, r.data().length - 4));
            }
        }
        return names;
    }

    @Test
    void aTenantsCertificateListsAndOpensOnlyItsOwnExportsAndItsDataCrossesOverTls() throws IOException {
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(c.socket).isInstanceOf(javax.net.ssl.SSLSocket.class);
            assertThat(list(c)).containsExactly("acme/db");
            OptionReply theirs = c.option(Nbd.OPT_INFO, NbdTestClient.goData("other/secret")).get(0);
            OptionReply none = c.option(Nbd.OPT_INFO, NbdTestClient.goData("other/nothing")).get(0);
            assertThat(theirs.type()).as("another tenant's export is unknown").isEqualTo(Nbd.REP_ERR_UNKNOWN);
            assertThat(theirs.message()).isEqualTo(none.message().replace("other/nothing", "other/secret"));

            c.negotiate("acme/db");
            byte[] data = new byte[256 * 1024];
            new Random(7).nextBytes(data);
            c.write(4096, data);
            assertThat(c.read(4096, data.length)).isEqualTo(data);
        }
        try (NbdTestClient c = tlsClient(OTHER_SERIAL)) {
            assertThat(list(c)).containsExactly("other/secret");
        }
    }

    /**
     * Replies written while the socket is full: the client sends all its reads before it reads a
     * reply, so the node's writes meet a full socket; every reply must still arrive whole (a
     * reply encrypted but not yet on the wire must not wait for another reply to push it out).
     */
    @Test
    void everyReplyArrivesWhenTheClientReadsOnlyAfterSendingAllItsRequests() throws IOException {
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            c.negotiate("acme/db");
            int n = 24;
            for (int i = 0; i < n; i++) {
                c.request(Nbd.CMD_READ, 0, i, (i % 4) * (long) MiB, (int) MiB, null);
            }
            c.out.flush();
            java.util.Set<Long> answered = new java.util.HashSet<>();
            for (int i = 0; i < n; i++) {
                NbdTestClient.Reply r = c.readReply();
                assertThat(r.error()).isZero();
                assertThat(r.data()).hasSize((int) MiB);
                answered.add(r.cookie());
            }
            assertThat(answered).hasSize(n);
        }
    }

    /**
     * Over TLS, 64 reads in flight at a time, replies of one record (4 KiB) and of several,
     * gathered (64 KiB), and the replies of a worker's batch wrapped together
     * ({@link ReplyBatch}): each arrives whole with its own block.
     */
    @Test
    void manyRepliesInFlightOverTlsEachArriveWholeWithTheirOwnData() throws IOException {
        byte[] data = new byte[4 * (int) MiB];
        new Random(5).nextBytes(data);
        long gathered = node.server().gatheredReplies();
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            c.negotiate("acme/db");
            c.write(0, data);
            c.readsMatchWithManyInFlight(data, 40, 64);
        }
        assertThat(node.server().gatheredReplies() - gathered).as("replies wrapped together").isPositive();
    }

    /** Replaces the node with one that requires TLS (the datanode command's default, {@code --tls on}). */
    private void requireTls(boolean withCertificate) throws IOException {
        node.close();
        node = DataNode.builder().dataDir(dir.resolve("required")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .tlsRequired(true).build();
        node.apply(config(REVOKED_SERIAL));
        if (withCertificate) {
            TestPki.Issued server = ca.issue("node", 0x97);
            node.serverCertificate(new ServerCertificate(server.keys().getPrivate(), server.certificate(),
                    List.of(ca.certificate())));
        }
        address = node.listenAddress();
    }

    /**
     * A node that requires TLS answers every option before it but STARTTLS and ABORT with
     * NBD_REP_ERR_TLS_REQD, reading past its data (the session goes on, in step), as the NBD
     * protocol document says for a server that requires TLS; after STARTTLS the same options work.
     */
    @Test
    void aNodeThatRequiresTlsRefusesEveryOptionBeforeItWithTlsReqdAndServesAfterIt() throws IOException {
        requireTls(true);
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            int[] options = {Nbd.OPT_LIST, Nbd.OPT_INFO, Nbd.OPT_GO, Nbd.OPT_STRUCTURED_REPLY, Nbd.OPT_LIST_META_CONTEXT,
                Nbd.OPT_SET_META_CONTEXT, 42};
            for (int opt : options) {
                byte[] data = opt == Nbd.OPT_INFO || opt == Nbd.OPT_GO ? NbdTestClient.goData("acme/db")
                        : opt == Nbd.OPT_LIST_META_CONTEXT || opt == Nbd.OPT_SET_META_CONTEXT
                                ? NbdTestClient.metaData("acme/db", Nbd.BASE_ALLOCATION) : new byte[0];
                List<OptionReply> replies = c.option(opt, data);
                assertThat(replies).as("option %d before TLS", opt).hasSize(1);
                assertThat(replies.get(0).type()).as("option %d before TLS", opt).isEqualTo(Nbd.REP_ERR_TLS_REQD);
                assertThat(replies.get(0).option()).isEqualTo(opt);
            }
            assertThat(c.startTls(ca.clientContext(ca.issue("client", ACME_SERIAL))).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(list(c)).containsExactly("acme/db");
            c.negotiate("acme/db");
            assertThat(c.read(0, 4096)).hasSize(4096);
        }
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            assertThat(c.option(Nbd.OPT_ABORT, new byte[0]).get(0).type()).as("ABORT before TLS").isEqualTo(Nbd.REP_ACK);
        }
    }

    /** An option too large to read (over 16 KiB) is refused before TLS as any other: TLS first. */
    @Test
    void aNodeThatRequiresTlsAnswersAnOptionTooLargeToReadBeforeItWithTlsReqd() throws IOException {
        requireTls(true);
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            List<OptionReply> replies = c.option(42, new byte[20_000]);
            assertThat(replies).hasSize(1);
            assertThat(replies.get(0).type()).isEqualTo(Nbd.REP_ERR_TLS_REQD);
            assertThat(c.startTls(ca.clientContext(ca.issue("client", ACME_SERIAL))).type()).as("in step after it")
                    .isEqualTo(Nbd.REP_ACK);
            assertThat(c.option(42, new byte[20_000]).get(0).type()).as("after TLS, too big").isEqualTo(Nbd.REP_ERR_TOO_BIG);
        }
    }

    @Test
    void aNodeThatRequiresTlsClosesAClientThatSendsExportNameBeforeIt() throws IOException {
        requireTls(true);
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            c.sendOption(Nbd.OPT_EXPORT_NAME, "acme/db".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            assertThat(c.in.read()).as("closed, nothing served in clear").isEqualTo(-1);
        }
    }

    @Test
    void aNodeThatRequiresTlsServesNobodyUntilItHasItsCertificate() throws IOException {
        requireTls(false);
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            assertThat(c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db")).get(0).type()).isEqualTo(Nbd.REP_ERR_TLS_REQD);
            OptionReply startTls = c.option(Nbd.OPT_STARTTLS, new byte[0]).get(0);
            assertThat(startTls.type()).isEqualTo(Nbd.REP_ERR_UNSUP);
            assertThat(startTls.message()).contains("no TLS certificate yet");
        }
    }

    /**
     * Renegotiation: a TLS 1.2 client, which could ask for one in the middle of transmission, is
     * refused at its handshake (the node speaks TLS 1.3, which has none); a TLS 1.3 client's new
     * handshake request on its session (a key update) goes on working. Nothing is logged at
     * SEVERE and the node serves another client throughout.
     */
    @Test
    void aClientThatCouldRenegotiateIsRefusedAtItsHandshakeAndAKeyUpdateKeepsWorking() throws IOException {
        try (SevereLog severe = new SevereLog(); NbdTestClient other = tlsClient(OTHER_SERIAL)) {
            other.negotiate("other/secret");
            try (NbdTestClient old = new NbdTestClient(address).handshake()) {
                assertThatThrownBy(() -> old.startTls(ca.clientContext(ca.issue("client", ACME_SERIAL)), "TLSv1.2"))
                        .as("a TLS 1.2 handshake").isInstanceOf(SSLException.class);
            }
            try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
                c.negotiate("acme/db");
                assertThat(c.read(0, 4096)).hasSize(4096);
                ((javax.net.ssl.SSLSocket) c.socket).startHandshake(); // TLS 1.3: a KeyUpdate
                assertThat(c.read(4096, 4096)).as("after a key update").hasSize(4096);
            }
            assertThat(other.read(0, 4096)).as("another client goes on").hasSize(4096);
            assertThat(severe.records).isEmpty();
        }
    }

    /**
     * One TLS client cannot keep the selector thread to itself. Over TLS the node reads on while
     * the session gives bytes (what it holds decrypted is never announced by the socket); a client
     * that sends options faster than the node answers them, and reads every answer so that none
     * queues and no bound pauses it, always had more: the selector never left it, and no other
     * client was even greeted. Assumes only that this JDK client sends unknown options (16 bytes,
     * encrypted in 16 KiB records) faster than the node decrypts, answers and encrypts each.
     */
    @Test
    void aTlsClientSendingOptionsFasterThanTheyAreAnsweredLeavesTheSelectorToTheOthers() throws Exception {
        try (NbdTestClient flooder = tlsClient(ACME_SERIAL)) {
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicLong answered = new java.util.concurrent.atomic.AtomicLong();
            ByteBuffer batch = ByteBuffer.allocate(4096 * 16);
            while (batch.hasRemaining()) {
                batch.putLong(Nbd.IHAVEOPT).putInt(42).putInt(0); // an option the node does not know: ERR_UNSUP
            }
            Thread sender = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        flooder.out.write(batch.array());
                        flooder.out.flush();
                    }
                } catch (IOException closed) {
                    // the test closed it
                }
            }, "option-flood");
            Thread reader = new Thread(() -> {
                byte[] buf = new byte[1 << 16];
                try {
                    for (int n; (n = flooder.in.read(buf)) >= 0; ) {
                        answered.addAndGet(n);
                    }
                } catch (IOException closed) {
                    // the test closed it
                }
            }, "option-answers");
            sender.start();
            reader.start();
            try {
                org.awaitility.Awaitility.await().atMost(io.weir.support.Patience.PATIENCE).until(() -> answered.get() > 0);
                long begun = System.nanoTime();
                try (NbdTestClient other = new NbdTestClient(address).handshake()) {
                    assertThat(Duration.ofNanos(System.nanoTime() - begun)).as("another client's greeting, beside the flood")
                            .isLessThan(Duration.ofSeconds(1));
                }
                assertThat(sender.isAlive()).as("the flood went on throughout").isTrue();
            } finally {
                stop.set(true);
                flooder.socket.close();
                sender.join();
                reader.join();
            }
        }
    }

    /**
     * After NBD_CMD_DISC the server must close down the TLS session (the NBD protocol document):
     * its close_notify comes before the end of the stream, so that a client can tell the end from
     * a truncation (GnuTLS reports "the TLS connection was non-properly terminated" otherwise).
     */
    @Test
    void aClientsDisconnectIsAnsweredWithTheTlsSessionsCloseNotifyBeforeTheEndOfTheStream() throws IOException {
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            c.negotiate("acme/db");
            assertThat(c.read(0, 4096)).hasSize(4096);
            c.disconnect();
            // below the client's TLS: what the node sends after the disconnect, up to the end of the stream
            byte[] after = c.tcp.getInputStream().readAllBytes();
            assertThat(after).as("one record (TLS 1.3 sends its alerts as application data), then the end").isNotEmpty();
            assertThat(after[0]).isEqualTo((byte) 0x17);
            assertThat(after.length).as("a record's header, the encrypted alert and its tag")
                    .isEqualTo(5 + ((after[3] & 0xff) << 8 | after[4] & 0xff));
        }
    }

    /**
     * A TLS 1.3 client that asks for key updates and reads nothing: each is answered with a record
     * the node must write before its session reads on. Once the socket takes no more, the node
     * must neither spin on the client (readable, yet every read waits for that write) nor keep it
     * for ever (no reply is queued, so the reply's stall clock never ran): it stops reading it and
     * closes it after the write-stall timeout, as a client that does not read its replies.
     * Assumes the JDK client sends a KeyUpdate asking for one back on each {@code startHandshake}
     * (TLS 1.3), and that a few hundred thousand of them fill the loopback socket's buffers.
     */
    @Test
    void aClientThatAsksForKeyUpdatesAndReadsNothingIsClosedAfterTheWriteStallTimeout() throws Exception {
        node.close();
        node = DataNode.builder().dataDir(dir.resolve("stall")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .writeStallTimeout(Duration.ofSeconds(1)).build();
        node.apply(config(REVOKED_SERIAL));
        TestPki.Issued server = ca.issue("node", 0x96);
        node.serverCertificate(new ServerCertificate(server.keys().getPrivate(), server.certificate(), List.of(ca.certificate())));
        address = node.listenAddress();
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            c.negotiate("acme/db");
            javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) c.socket;
            java.util.concurrent.atomic.AtomicLong asked = new java.util.concurrent.atomic.AtomicLong();
            Thread flood = new Thread(() -> {
                try {
                    while (asked.get() < 2_000_000) {
                        tls.startHandshake(); // TLS 1.3: a KeyUpdate, update requested
                        asked.incrementAndGet();
                    }
                } catch (IOException closed) {
                    // the node closed it, or the test did
                }
            }, "key-update-flood");
            flood.start();
            try {
                org.awaitility.Awaitility.await().atMost(io.weir.support.Patience.PATIENCE)
                        .until(() -> node.server().connectionCount() == 0);
            } finally {
                c.tcp.close(); // a flood blocked on a full socket ends with it (closing the TLS socket would wait for its lock)
                flood.join();
            }
            assertThat(asked.get()).as("key updates asked for before the node closed the client").isPositive();
        }
    }

    @Test
    void aRevokedCertificateOrOneThatNoTenantHoldsSeesNothing() throws IOException {
        for (long serial : new long[] {REVOKED_SERIAL, 0x77}) {
            try (NbdTestClient c = tlsClient(serial)) {
                assertThat(list(c)).isEmpty();
                assertThat(c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db")).get(0).type())
                        .isEqualTo(Nbd.REP_ERR_UNKNOWN);
            }
        }
    }

    /**
     * The node holds a client certificate to its end itself, not only through the handshake's
     * check: a TLS 1.3 client resuming its session after the end (the JDK checks no dates on
     * resumption) and a connection revalidated then saw the tenant's exports. Here the node's
     * clock passes the end of a certificate the handshake still takes.
     */
    @Test
    void aCertificatePastItsEndByTheNodesClockSeesNothing() throws IOException {
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(list(c)).containsExactly("acme/db");
        }
        node.server().tls.clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofDays(2)));
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(list(c)).isEmpty();
            assertThat(c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db")).get(0).type()).isEqualTo(Nbd.REP_ERR_UNKNOWN);
        }
    }

    /**
     * A connection made with a certificate ends when the certificate does, by the node's clock:
     * it was checked only at its start and when a config changed, so a client connected the day
     * before its certificate's end kept reading and writing for as long as the node's config
     * stayed the same.
     */
    @Test
    void aConnectionEndsWhenItsCertificateDoes() throws IOException {
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            c.negotiate("acme/db");
            assertThat(c.read(0, 4096)).hasSize(4096);

            node.server().tls.clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofDays(2)));

            awaitClosed(c);
        }
    }

    @Test
    void aCertificateOfAnotherCaFailsTheHandshakeAndTheNodeServesTheOthers() throws IOException {
        TestPki stranger = TestPki.create("another CA");
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            // the client trusts the node; the node does not trust the client's CA
            TestPki.Issued foreign = stranger.issue("client", ACME_SERIAL);
            javax.net.ssl.SSLContext context = TestPki.clientContext(foreign.privateKeyPem(), foreign.certificatePem(),
                    TestPki.pem(ca.certificate()));
            assertThatThrownBy(() -> {
                c.startTls(context);
                list(c);
            }).isInstanceOf(IOException.class);
        }
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(list(c)).containsExactly("acme/db");
        }
    }

    @Test
    void anExpiredCertificateOfTheTenantFailsTheHandshake() throws IOException {
        TestPki.Issued expired = ca.issue("client", ACME_SERIAL, Instant.now().minus(java.time.Duration.ofDays(2)),
                java.time.Duration.ofDays(1));
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            // TLS 1.3: the client's handshake ends before the node has checked its certificate;
            // the node's refusal closes the connection before any option is answered
            assertThatThrownBy(() -> {
                c.startTls(ca.clientContext(expired));
                list(c);
            }).isInstanceOf(IOException.class);
        }
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(list(c)).as("the same serial, valid").containsExactly("acme/db");
        }
    }

    @Test
    void startTlsWithDataOrASecondTimeIsInvalidAndAllNegotiatedBeforeIsForgotten() throws IOException {
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            assertThat(c.option(Nbd.OPT_STARTTLS, new byte[] {1}).get(0).type()).isEqualTo(Nbd.REP_ERR_INVALID);
            assertThat(c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.startTls(ca.clientContext(ca.issue("client", ACME_SERIAL))).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.option(Nbd.OPT_STARTTLS, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ERR_INVALID);
            // structured replies were negotiated in clear: forgotten, so a meta context needs them again
            assertThat(c.option(Nbd.OPT_SET_META_CONTEXT, NbdTestClient.metaData("acme/db", Nbd.BASE_ALLOCATION)).get(0)
                    .type()).isEqualTo(Nbd.REP_ERR_INVALID);
        }
    }

    @Test
    void bytesSentAfterStartTlsBeforeTheHandshakeCloseTheConnection() throws IOException {
        try (NbdTestClient c = new NbdTestClient(address).handshake()) {
            // STARTTLS and, in the same write, a plaintext LIST that must never be answered (CVE-2021-3716)
            ByteBuffer b = ByteBuffer.allocate(32);
            b.putLong(Nbd.IHAVEOPT).putInt(Nbd.OPT_STARTTLS).putInt(0).putLong(Nbd.IHAVEOPT).putInt(Nbd.OPT_LIST).putInt(0);
            OutputStream out = c.socket.getOutputStream();
            out.write(b.array());
            out.flush();
            OptionReply ack = c.readOptionReply();
            assertThat(ack.type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.in.read()).as("closed, nothing answered in clear").isEqualTo(-1);
        }
    }

    /**
     * A client certificate belongs to a tenant, not to a name: two tenants that swap names in one
     * config each keep their clients and see their own volumes under their new names. The node
     * told tenants apart by name: a rename closed every connection of the tenant, and from the
     * moment it took a config's names to until it had renamed its exports (or for as long as a
     * config that renamed them failed to apply), a certificate saw the exports of the tenant whose
     * name its tenant took, and kept a connection it opened to one of them.
     */
    @Test
    void tenantsThatSwapNamesKeepTheirClientsAndEachSeesOnlyItsOwnVolumes() throws IOException {
        try (NbdTestClient acme = tlsClient(ACME_SERIAL); NbdTestClient other = tlsClient(OTHER_SERIAL)) {
            acme.negotiate("acme/db");
            assertThat(list(other)).containsExactly("other/secret");
            io.weir.protocol.DesiredConfig before = config(REVOKED_SERIAL);
            List<io.weir.protocol.TenantConfig> swapped = before.tenants().stream()
                    .map(t -> new io.weir.protocol.TenantConfig(t.id(), t.name().equals("acme") ? "other" : "acme",
                            t.weight(), t.maxIops(), t.maxBytesPerSec()))
                    .toList();
            node.apply(new io.weir.protocol.DesiredConfig(before.nodeId(), 2, before.tasks(), swapped, before.volumes(),
                    before.usageReportIntervalSeconds(), before.tls()));

            assertThat(acme.read(0, 4096)).as("the renamed tenant's client goes on").hasSize(4096);
            assertThat(list(other)).containsExactly("acme/secret");
            assertThat(other.option(Nbd.OPT_INFO, NbdTestClient.goData("other/db")).get(0).type())
                    .as("the volume of the tenant that took its old name").isEqualTo(Nbd.REP_ERR_UNKNOWN);
        }
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(list(c)).containsExactly("other/db");
        }
    }

    /** A snapshot refused for being another node's takes nobody's access away here. */
    @Test
    void anotherNodesRefusedSnapshotRestrictsNothing() throws IOException {
        io.weir.protocol.DesiredConfig ours = config(REVOKED_SERIAL);
        node.refused(new io.weir.protocol.DesiredConfig(TestConfigs.id("another node"), 9, ours.tasks(), List.of(), List.of(),
                ours.usageReportIntervalSeconds(), new TlsConfig(ours.tls().caCertificatesPem(), List.of(), List.of())));
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(list(c)).containsExactly("acme/db");
        }
    }

    @Test
    void revokingACertificateClosesItsConnectionsAtOnceAndNoOthers() throws IOException {
        try (NbdTestClient acme = tlsClient(ACME_SERIAL); NbdTestClient other = tlsClient(OTHER_SERIAL)) {
            acme.negotiate("acme/db");
            other.negotiate("other/secret");
            assertThat(acme.read(0, 4096)).hasSize(4096);
            node.apply(config(REVOKED_SERIAL, ACME_SERIAL));
            // the selector thread closes it soon after the config is applied (a request already
            // on its way may still be answered): the client's reads then fail
            awaitClosed(acme);
            assertThat(other.read(0, 4096)).as("the other tenant's goes on").hasSize(4096);
        }
    }

    @Test
    void aClientThatStopsInTheMiddleOfTheTlsHandshakeIsClosedAtTheHandshakeTimeout() throws IOException {
        node.close();
        node = DataNode.builder().dataDir(dir.resolve("short")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .handshakeTimeout(java.time.Duration.ofSeconds(1)).build();
        node.apply(config(REVOKED_SERIAL));
        TestPki.Issued server = ca.issue("node", 0x98);
        node.serverCertificate(new ServerCertificate(server.keys().getPrivate(), server.certificate(),
                List.of(ca.certificate())));
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).handshake()) {
            assertThat(c.option(Nbd.OPT_STARTTLS, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK);
            c.socket.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x02}); // a record header, then silence
            c.socket.getOutputStream().flush();
            long started = System.nanoTime();
            assertThat(c.in.read()).as("closed by the node").isEqualTo(-1);
            assertThat(java.time.Duration.ofNanos(System.nanoTime() - started)).as("not before the timeout")
                    .isGreaterThanOrEqualTo(java.time.Duration.ofMillis(500));
        }
    }

    /**
     * Seeded shapes of bad TLS input after the acknowledgement: random bytes, a handshake record
     * header announcing more than a record may hold (65,535 bytes, which the JDK refuses at once,
     * and 18,432 bytes, which it would take but the session's buffer cannot), an alert, a record
     * of another TLS version; each closes its own connection, logs nothing at WARNING or above
     * (bad input is the client's, not the node's trouble), and the node serves a real client
     * after all of them.
     */
    @Test
    void badTlsRecordsOfManyShapesEachCloseOnlyTheirConnection() throws IOException {
        try (SevereLog severe = new SevereLog(java.util.logging.Level.WARNING)) {
            Random random = new Random(2026);
            for (int i = 0; i < 25; i++) {
                byte[] input = switch (i % 5) {
                    case 0 -> new byte[1 + random.nextInt(20_000)];
                    case 1 -> new byte[] {0x16, 0x03, 0x03, (byte) 0xff, (byte) 0xff}; // 65,535 bytes: oversized
                    case 2 -> new byte[] {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28}; // a fatal alert
                    case 3 -> java.util.Arrays.copyOf(new byte[] {0x16, 0x03, 0x03, 0x48, 0x00}, 5 + 0x4800); // 18,432
                    default -> new byte[] {0x16, 0x02, 0x00, 0x00, 0x10}; // SSL 2.0's version
                };
                if (i % 5 == 0) {
                    random.nextBytes(input);
                }
                try (NbdTestClient c = new NbdTestClient(address).handshake()) {
                    assertThat(c.option(Nbd.OPT_STARTTLS, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK);
                    try {
                        c.socket.getOutputStream().write(input);
                        c.socket.getOutputStream().flush();
                        while (c.in.read() >= 0) {
                            // an alert may come first; then the node closes
                        }
                    } catch (IOException e) {
                        // reset: closed as well
                    }
                }
            }
            assertThat(severe.records).as("nothing logged at WARNING or above").isEmpty();
        }
        try (NbdTestClient c = tlsClient(ACME_SERIAL)) {
            assertThat(list(c)).containsExactly("acme/db");
        }
    }

    /**
     * The per-source connection cap applies per tenant over TLS too: clients from other addresses
     * (127.0.0.x, all loopback on Linux) with one tenant's certificate are held to it together.
     */
    @Test
    void oneTenantsTlsConnectionsFromManyAddressesAreCappedTogether() throws IOException {
        node.close();
        node = DataNode.builder().dataDir(dir.resolve("capped")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .maxConnectionsPerSource(2).build();
        node.apply(config(REVOKED_SERIAL));
        TestPki.Issued server = ca.issue("node", 0x97);
        node.serverCertificate(new ServerCertificate(server.keys().getPrivate(), server.certificate(),
                List.of(ca.certificate())));
        try (NbdTestClient a = tls(NbdTestClient.from(node.listenAddress(), "127.0.0.2"), ACME_SERIAL);
                NbdTestClient b = tls(NbdTestClient.from(node.listenAddress(), "127.0.0.3"), ACME_SERIAL);
                NbdTestClient c = tls(NbdTestClient.from(node.listenAddress(), "127.0.0.4"), ACME_SERIAL);
                NbdTestClient other = tls(NbdTestClient.from(node.listenAddress(), "127.0.0.5"), OTHER_SERIAL)) {
            assertThat(list(a)).containsExactly("acme/db");
            assertThat(list(b)).containsExactly("acme/db");
            assertThatThrownBy(() -> list(c)).as("the tenant's third connection is closed").isInstanceOf(IOException.class);
            assertThat(list(other)).as("another tenant's is not").containsExactly("other/secret");
        }
        // room again once the node has seen the others close (it notices each close on its selector)
        org.awaitility.Awaitility.await().atMost(io.weir.support.Patience.PATIENCE).ignoreExceptions().until(() -> {
            try (NbdTestClient again = tls(NbdTestClient.from(node.listenAddress(), "127.0.0.6"), ACME_SERIAL)) {
                return list(again).equals(List.of("acme/db"));
            }
        });
    }

    private NbdTestClient tls(NbdTestClient c, long serial) throws IOException {
        c.handshake();
        assertThat(c.startTls(ca.clientContext(ca.issue("client", serial))).type()).isEqualTo(Nbd.REP_ACK);
        return c;
    }

    @Test
    void withoutACertificateTheNodeOffersNoTls() throws IOException {
        node.close();
        node = DataNode.builder().dataDir(dir.resolve("plain")).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .build();
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).handshake()) {
            assertThat(c.option(Nbd.OPT_STARTTLS, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ERR_UNSUP);
        }
    }

    /** Records what the JDK's logging (the data node's backend in tests) gets at SEVERE, or another level and above, while open. */
    private static final class SevereLog extends java.util.logging.Handler implements AutoCloseable {
        final List<java.util.logging.LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final java.util.logging.Level least;

        SevereLog() {
            this(java.util.logging.Level.SEVERE);
        }

        /** Records logged at {@code least} or above. */
        SevereLog(java.util.logging.Level least) {
            this.least = least;
            java.util.logging.Logger.getLogger("").addHandler(this);
        }

        @Override
        public void publish(java.util.logging.LogRecord r) {
            if (r.getLevel().intValue() >= least.intValue()) {
                records.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            java.util.logging.Logger.getLogger("").removeHandler(this);
        }
    }
}
