package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.datanode.NbdTestClient.OptionReply;
import io.weir.datanode.NbdTestClient.Reply;
import io.weir.scheduler.Stats;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.api.io.TempDir;

/** The NBD protocol as this server speaks it, checked byte for byte with a raw socket client. */
class NbdServerTest {

    @TempDir
    Path dir;
    DataNode node;
    InetSocketAddress address;

    @BeforeEach
    void start() throws IOException {
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .writeStallTimeout(Duration.ofSeconds(1)).build();
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 8 * MiB).build());
        address = node.listenAddress();
    }

    @AfterEach
    void stop() {
        node.close();
    }

    NbdTestClient client() throws IOException {
        return new NbdTestClient(address);
    }

    @Test
    void listNamesEveryExportAsTenantSlashVolume() throws IOException {
        try (NbdTestClient c = client().handshake()) {
            List<OptionReply> replies = c.option(Nbd.OPT_LIST, new byte[0]);
            List<String> names = new ArrayList<>();
            for (OptionReply r : replies) {
                if (r.type() == Nbd.REP_SERVER) {
                    names.add(new String(r.data(), 4, r.data().length - 4));
                }
            }
            assertThat(names).containsExactlyInAnyOrder("acme/db1", "acme/db2");
            assertThat(replies.get(replies.size() - 1).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.option(Nbd.OPT_LIST, new byte[] {1}).get(0).type()).isEqualTo(Nbd.REP_ERR_INVALID);
        }
    }

    /**
     * An option's error message is at most 4096 bytes (the protocol's bound on its strings), and
     * still UTF-8, when it repeats an unknown name of 4096 bytes whose characters take two each.
     */
    @Test
    void anErrorMessageThatRepeatsALongNameIsCutTo4096BytesOfUtf8() throws Exception {
        String name = "acme/" + "\u00e9".repeat(2045) + "x";
        assertThat(name.getBytes(StandardCharsets.UTF_8)).hasSize(4096);
        try (NbdTestClient c = client().handshake()) {
            assertThat(c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK); // for meta contexts
            for (int opt : new int[] {Nbd.OPT_INFO, Nbd.OPT_GO, Nbd.OPT_LIST_META_CONTEXT}) {
                byte[] data = opt == Nbd.OPT_LIST_META_CONTEXT ? NbdTestClient.metaData(name) : NbdTestClient.goData(name);
                OptionReply r = c.option(opt, data).get(0);
                assertThat(r.type()).isEqualTo(Nbd.REP_ERR_UNKNOWN);
                assertThat(r.data().length).as("bytes of the message").isLessThanOrEqualTo(4096);
                assertThat(StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(r.data())).toString())
                        .startsWith("unknown export 'acme/\u00e9");
            }
        }
    }

    @Test
    void unknownExportIsRefusedWithErrUnknownAndAMessageThatSaysSo() throws IOException {
        try (NbdTestClient c = client().handshake()) {
            for (int opt : new int[] {Nbd.OPT_INFO, Nbd.OPT_GO}) {
                OptionReply r = c.option(opt, NbdTestClient.goData("acme/nope")).get(0);
                assertThat(r.type()).isEqualTo(Nbd.REP_ERR_UNKNOWN);
                assertThat(r.message()).contains("unknown export 'acme/nope'");
            }
            // the session goes on: the real export still opens
            List<OptionReply> go = c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db1", Nbd.INFO_BLOCK_SIZE));
            assertThat(go.get(go.size() - 1).type()).isEqualTo(Nbd.REP_ACK);
        }
    }

    @Test
    void exportNameOptionEntersTransmissionAndAnUnknownNameDisconnects() throws IOException {
        try (NbdTestClient c = client().handshake()) {
            c.sendOption(Nbd.OPT_EXPORT_NAME, "acme/db2".getBytes());
            assertThat(c.in.readLong()).isEqualTo(8 * MiB);
            int flags = c.in.readUnsignedShort();
            assertThat(flags & Nbd.FLAG_CAN_MULTI_CONN).isNotZero();
            assertThat(flags & Nbd.FLAG_SEND_DF).isZero(); // no structured replies negotiated
            c.write(4096, bytes(4096, 7));
            assertThat(c.read(4096, 4096)).isEqualTo(bytes(4096, 7));
        }
        try (NbdTestClient c = client().handshake()) {
            c.sendOption(Nbd.OPT_EXPORT_NAME, "acme/nope".getBytes());
            assertThat(c.closedByServer()).isTrue();
        }
    }

    @Test
    void unsupportedAndMalformedOptionsGetErrorRepliesAndTheSessionContinues() throws IOException {
        try (NbdTestClient c = client().handshake()) {
            assertThat(c.option(99, new byte[3]).get(0).type()).isEqualTo(Nbd.REP_ERR_UNSUP);
            assertThat(c.option(Nbd.OPT_STARTTLS, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ERR_UNSUP);
            assertThat(c.option(Nbd.OPT_GO, new byte[] {0, 0, 0, 50, 'a'}).get(0).type()).isEqualTo(Nbd.REP_ERR_INVALID);
            // meta contexts before structured replies
            assertThat(c.option(Nbd.OPT_SET_META_CONTEXT, NbdTestClient.metaData("acme/db1", "base:allocation")).get(0).type())
                    .isEqualTo(Nbd.REP_ERR_INVALID);
            assertThat(c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK);
            List<OptionReply> list = c.option(Nbd.OPT_LIST_META_CONTEXT, NbdTestClient.metaData("acme/db1"));
            assertThat(list.get(0).type()).isEqualTo(Nbd.REP_META_CONTEXT);
            assertThat(new String(list.get(0).data(), 4, list.get(0).data().length - 4)).isEqualTo("base:allocation");
            // the export name field of GO and SET_META_CONTEXT is checked alike
            byte[] badName = {0, 0, 0, 2, (byte) 0xc3, (byte) 0x28, 0, 0, 0, 0};
            OptionReply badGo = c.option(Nbd.OPT_GO, java.util.Arrays.copyOf(badName, 8)).get(0);
            OptionReply badMeta = c.option(Nbd.OPT_SET_META_CONTEXT, badName).get(0);
            assertThat(List.of(badGo, badMeta)).allSatisfy(r -> {
                assertThat(r.type()).isEqualTo(Nbd.REP_ERR_INVALID);
                assertThat(r.message()).contains("export name is not valid UTF-8");
            });
            // an option larger than the server reads is skipped with TOO_BIG
            assertThat(c.option(Nbd.OPT_INFO, new byte[NbdHandshake.MAX_OPTION_BYTES + 1]).get(0).type())
                    .isEqualTo(Nbd.REP_ERR_TOO_BIG);
            assertThat(c.option(Nbd.OPT_ABORT, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.closedByServer()).isTrue();
        }
    }

    /**
     * The node reports each export's allocated bytes about once a second: that must not open a
     * volume no client or task has opened (and keep its descriptors and checksum mapping open, and
     * give it to the background tasks) on a node of thousands of configured volumes.
     */
    @Test
    void theAllocatedBytesOfAVolumeNobodyOpenedAreReadWithoutOpeningIt() throws IOException {
        try (NbdTestClient c = client().open("acme/db1")) {
            c.write(MiB, bytes(8192, 3));
            c.flush();
        }
        java.util.Map<java.util.UUID, Long> used = node.allocatedBytes();
        assertThat(used.get(TestConfigs.volumeId("acme", "db1"))).isGreaterThanOrEqualTo(8192L);
        assertThat(used.get(TestConfigs.volumeId("acme", "db2"))).as("a sparse file never written").isZero();
        assertThat(node.volume("acme/db2").isOpen()).isFalse();
    }

    /**
     * The protocol: a server SHOULD answer a full disk (ENOSPC, EDQUOT, EFBIG) with NBD_ENOSPC, so
     * that a client can tell it from a failing disk: qemu pauses the guest on ENOSPC (its default
     * {@code werror=enospc}) where EIO reaches the guest's filesystem. Other failures stay EIO.
     */
    @Test
    void aWriteToAFullDiskIsAnsweredEnospcAndAFailingDiskEio() throws IOException {
        java.util.concurrent.atomic.AtomicReference<String> failure = new java.util.concurrent.atomic.AtomicReference<>(
                "No space left on device");
        try (DataNode full = DataNode.builder().dataDir(dir.resolve("full")).listen(new InetSocketAddress("127.0.0.1", 0))
                .workers(2).serviceTime(bytes -> {
                    throw new java.io.UncheckedIOException(new IOException(failure.get()));
                }).build()) {
            full.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).build());
            try (NbdTestClient c = new NbdTestClient(full.listenAddress()).open("acme/db1")) {
                assertThat(c.call(Nbd.CMD_WRITE, 0, 0, 4096, bytes(4096, 1)).error()).isEqualTo(Nbd.ENOSPC);
                failure.set("Disk quota exceeded");
                assertThat(c.call(Nbd.CMD_WRITE, 0, 0, 4096, bytes(4096, 1)).error()).isEqualTo(Nbd.ENOSPC);
                failure.set("Input/output error");
                assertThat(c.call(Nbd.CMD_WRITE, 0, 0, 4096, bytes(4096, 1)).error()).isEqualTo(Nbd.EIO);
            }
        }
    }

    /**
     * A write into a page of the memory-mapped checksum file that the disk has no room for (the
     * file is sparse) fails with the JVM's InternalError for the SIGBUS, an Error and not an
     * exception. Such a request was counted done and never answered: the client waited for ever.
     * It is answered EIO, with QoS on and off.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aRequestThatFailsWithAnErrorIsAnsweredEio(boolean qos) throws IOException {
        try (DataNode failing = DataNode.builder().dataDir(dir.resolve("failing-" + qos))
                .listen(new InetSocketAddress("127.0.0.1", 0)).workers(2).qos(qos).serviceTime(bytes -> {
                    throw new InternalError("a fault occurred in an unsafe memory access operation");
                }).build()) {
            failing.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).build());
            try (NbdTestClient c = new NbdTestClient(failing.listenAddress()).open("acme/db1")) {
                assertThat(c.call(Nbd.CMD_WRITE, 0, 0, 4096, bytes(4096, 1)).error()).isEqualTo(Nbd.EIO);
                assertThat(c.call(Nbd.CMD_WRITE, 0, 0, 4096, bytes(4096, 1)).error()).as("and the next one")
                        .isEqualTo(Nbd.EIO);
            }
        }
    }

    @Test
    void aGoWhoseExportCannotBeOpenedGetsAnErrorAndNoInfoReplies() throws IOException {
        // the protocol: a server that will fail a GO should not send NBD_REP_INFO replies first
        assertThat(node.volume("acme/db2").isOpen()).isFalse();
        Path file = dir.resolve(TestConfigs.volumeId("acme", "db2") + ".img");
        Files.delete(file);
        Files.createDirectory(file); // opening the volume's data file now fails
        try (NbdTestClient c = client().handshake()) {
            List<OptionReply> replies = c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db2", Nbd.INFO_BLOCK_SIZE));
            assertThat(replies).extracting(OptionReply::type).containsExactly(Nbd.REP_ERR_UNKNOWN);
            // the session goes on: the other export opens
            List<OptionReply> go = c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db1"));
            assertThat(go.get(go.size() - 1).type()).isEqualTo(Nbd.REP_ACK);
        }
    }

    @Test
    void aFailedSetMetaContextLeavesNoContextSelected() throws IOException {
        // the protocol: NBD_OPT_SET_META_CONTEXT replaces every context set before, also when it fails
        try (NbdTestClient c = client().handshake()) {
            assertThat(c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK);
            c.structured = true;
            List<OptionReply> set = c.option(Nbd.OPT_SET_META_CONTEXT, NbdTestClient.metaData("acme/db1", Nbd.BASE_ALLOCATION));
            assertThat(set.get(set.size() - 1).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.option(Nbd.OPT_SET_META_CONTEXT, NbdTestClient.metaData("acme/nope", Nbd.BASE_ALLOCATION)).get(0)
                    .type()).isEqualTo(Nbd.REP_ERR_UNKNOWN);
            List<OptionReply> go = c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db1"));
            assertThat(go.get(go.size() - 1).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.call(Nbd.CMD_BLOCK_STATUS, 0, 0, MiB, null).error()).isEqualTo(Nbd.EINVAL);
        }
    }

    /** Also when it fails for being larger than the server reads (TOO_BIG), which skips it unread. */
    @Test
    void aSetMetaContextTooBigToReadLeavesNoContextSelected() throws IOException {
        try (NbdTestClient c = client().handshake()) {
            assertThat(c.option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]).get(0).type()).isEqualTo(Nbd.REP_ACK);
            c.structured = true;
            List<OptionReply> set = c.option(Nbd.OPT_SET_META_CONTEXT, NbdTestClient.metaData("acme/db1", Nbd.BASE_ALLOCATION));
            assertThat(set.get(set.size() - 1).type()).isEqualTo(Nbd.REP_ACK);
            String query = "x-big:" + "a".repeat(4000);
            byte[] big = NbdTestClient.metaData("acme/db1", query, query, query, query, query);
            assertThat(big.length).isGreaterThan(NbdHandshake.MAX_OPTION_BYTES);
            assertThat(c.option(Nbd.OPT_SET_META_CONTEXT, big).get(0).type()).isEqualTo(Nbd.REP_ERR_TOO_BIG);
            List<OptionReply> go = c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db1"));
            assertThat(go.get(go.size() - 1).type()).isEqualTo(Nbd.REP_ACK);
            assertThat(c.call(Nbd.CMD_BLOCK_STATUS, 0, 0, MiB, null).error()).isEqualTo(Nbd.EINVAL);
        }
    }

    /**
     * The protocol: the server MUST reply to NBD_OPT_ABORT with an ACK, and SHOULD ignore data
     * sent with it rather than refuse it; with more than the server reads it was refused TOO_BIG
     * and the session went on.
     */
    @Test
    void anAbortWithMoreDataThanTheServerReadsIsAcknowledgedAndCloses() throws IOException {
        try (NbdTestClient c = client().handshake()) {
            assertThat(c.option(Nbd.OPT_ABORT, new byte[NbdHandshake.MAX_OPTION_BYTES + 1]).get(0).type())
                    .isEqualTo(Nbd.REP_ACK);
            assertThat(c.closedByServer()).isTrue();
        }
    }

    /**
     * With structured replies the protocol lets a server refuse a READ above its maximum payload
     * with EOVERFLOW, which tells the client to retry in smaller pieces; EINVAL says the request
     * was wrong. Without structured replies such a READ breaks the client's promise: EINVAL.
     */
    @Test
    void aReadAboveTheMaximumPayloadIsEoverflowWithStructuredRepliesAndEinvalWithout() throws IOException {
        node.apply(config().tenant("acme").volume("acme", "db1", 80 * MiB).revision(2).build());
        try (NbdTestClient c = client().open("acme/db1")) {
            assertThat(c.call(Nbd.CMD_READ, 0, 0, NbdConnection.MAX_PAYLOAD + 1, null).error()).isEqualTo(Nbd.EOVERFLOW);
        }
        try (NbdTestClient c = client().openSimple("acme/db1")) {
            assertThat(c.call(Nbd.CMD_READ, 0, 0, NbdConnection.MAX_PAYLOAD + 1, null).error()).isEqualTo(Nbd.EINVAL);
        }
    }

    @Test
    void dataWrittenReadsBackWithStructuredAndWithSimpleReplies() throws IOException {
        byte[] data = bytes(3 * 4096 + 100, 42);
        try (NbdTestClient c = client().open("acme/db1")) {
            assertThat(c.exportSize).isEqualTo(16 * MiB);
            c.write(MiB + 17, data);
            c.flush();
            assertThat(c.read(MiB + 17, data.length)).isEqualTo(data);
            Reply fua = c.call(Nbd.CMD_WRITE, Nbd.CMD_FLAG_FUA, 0, 512, bytes(512, 1));
            assertThat(fua.error()).isZero();
        }
        try (NbdTestClient c = client().openSimple("acme/db1")) {
            assertThat(c.read(MiB + 17, data.length)).isEqualTo(data);
            assertThat(c.read(0, 512)).isEqualTo(bytes(512, 1));
        }
    }

    /**
     * A request of more than {@link NbdRequest#PIECE_BYTES} runs as pieces split at multiples of
     * it: a write and reads that start inside a piece and end inside another move exactly their
     * bytes, and the volume counts each request once.
     */
    @Test
    void aRequestLargerThanAPieceRunsAsPiecesWithItsDataExactAcrossTheirBoundariesAndCountsOnce() throws IOException {
        String id = TestConfigs.volumeId("acme", "db1").toString();
        byte[] data = bytes(3 * NbdRequest.PIECE_BYTES + 5000, 7);
        long at = NbdRequest.PIECE_BYTES - 4096 + 17;
        try (NbdTestClient c = client().open("acme/db1")) {
            Stats before = node.executor().snapshot().volumes().get(id);
            assertThat(c.call(Nbd.CMD_WRITE, Nbd.CMD_FLAG_FUA, at, data.length, data).error()).isZero();
            assertThat(same(c.read(at, data.length), data)).as("the whole range read back").isTrue();
            int window = NbdRequest.PIECE_BYTES + 3;
            assertThat(c.read(2 * MiB - 1, window))
                    .isEqualTo(Arrays.copyOfRange(data, (int) (2 * MiB - 1 - at), (int) (2 * MiB - 1 - at) + window));
            // a request's op is counted with its first piece, each piece's bytes when it is done,
            // and a piece once its worker takes the next one, after the reply went out
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                Stats after = node.executor().snapshot().volumes().get(id);
                assertThat(after.readOps() - before.readOps()).isEqualTo(2);
                assertThat(after.writeOps() - before.writeOps()).isEqualTo(1);
                assertThat(after.writeBytes() - before.writeBytes()).isEqualTo(data.length);
                assertThat(after.readBytes() - before.readBytes()).isEqualTo(data.length + window);
            });
        }
        try (NbdTestClient c = client().openSimple("acme/db1")) {
            assertThat(same(c.read(at, data.length), data)).as("read back with a simple reply").isTrue();
        }
    }

    @Test
    void cacheAndNoHoleZeroesAreChargedTheBytesTheyMoveSoByteLimitsHoldForThem() throws IOException {
        // CACHE reads its whole range and WRITE_ZEROES with NO_HOLE writes it: both are charged
        // their length, like a READ and a WRITE, although neither carries a payload
        node.apply(config().tenant("acme").volume("acme", "db1", 160 * MiB).volume("acme", "db2", 8 * MiB).revision(2)
                .build());
        String id = TestConfigs.volumeId("acme", "db1").toString();
        try (NbdTestClient c = client().open("acme/db1")) {
            Stats before = node.executor().snapshot().volumes().get(id);
            assertThat(c.call(Nbd.CMD_CACHE, 0, 0, 64 * MiB, null).error()).isZero();
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, Nbd.CMD_FLAG_NO_HOLE, 64 * MiB, 48 * MiB, null).error()).isZero();
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, 0, 112 * MiB, 48 * MiB, null).error()).isZero();
            // a request is counted once its work returns, which may be just after its reply went out
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                Stats after = node.executor().snapshot().volumes().get(id);
                assertThat(after.readOps() - before.readOps()).isEqualTo(1);
                assertThat(after.writeOps() - before.writeOps()).isEqualTo(2);
                assertThat(after.readBytes() - before.readBytes()).as("bytes charged to the CACHE").isEqualTo(64 * MiB);
                assertThat(after.writeBytes() - before.writeBytes()).as("bytes charged to the zeroes, a hole punched is free")
                        .isEqualTo(48 * MiB);
            });
        }
    }

    @Test
    void readsAndWritesOfExactlyTheAdvertisedMaximumBlockSizeWorkWithStructuredAndSimpleReplies() throws IOException {
        node.apply(config().tenant("acme").volume("acme", "db1", 80 * MiB).volume("acme", "db2", 8 * MiB).revision(2).build());
        int max;
        byte[] data;
        try (NbdTestClient c = client().open("acme/db1")) {
            assertThat(c.blockSize).as("NBD_INFO_BLOCK_SIZE: minimum, preferred, maximum")
                    .containsExactly(1, VolumeStore.BLOCK, NbdConnection.MAX_PAYLOAD);
            max = c.blockSize[2];
            data = bytes(max, 32);
            c.write(MiB, data);
            Reply fua = c.call(Nbd.CMD_WRITE, Nbd.CMD_FLAG_FUA, 40 * MiB, max, data);
            assertThat(fua.error()).isZero();
            Reply read = c.call(Nbd.CMD_READ, 0, MiB, max, null);
            assertThat(read.error()).as(read.message()).isZero();
            assertThat(same(read.data(), data)).as("structured read of " + max + " bytes").isTrue();
            assertThat(c.call(Nbd.CMD_CACHE, 0, 0, max, null).error()).isZero();
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, Nbd.CMD_FLAG_NO_HOLE, 40 * MiB, max, null).error()).isZero();
        }
        try (NbdTestClient c = client().openSimple("acme/db1")) {
            Reply read = c.call(Nbd.CMD_READ, 0, MiB, max, null);
            assertThat(read.error()).isZero();
            assertThat(same(read.data(), data)).as("simple read of " + max + " bytes").isTrue();
            assertThat(same(c.read(40 * MiB, max), new byte[max])).as("zeroes written over the FUA write").isTrue();
        }
    }

    @Test
    void outOfRangeAndMalformedRequestsGetTheProtocolsErrors() throws IOException {
        try (NbdTestClient c = client().open("acme/db1")) {
            long size = 16 * MiB;
            assertThat(c.call(Nbd.CMD_READ, 0, size - 10, 20, null).error()).isEqualTo(Nbd.EINVAL);
            assertThat(c.call(Nbd.CMD_WRITE, 0, size - 10, 20, new byte[20]).error()).isEqualTo(Nbd.ENOSPC);
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, 0, size, 4096, null).error()).isEqualTo(Nbd.ENOSPC);
            assertThat(c.call(Nbd.CMD_TRIM, 0, Long.MAX_VALUE - 5, 4096, null).error()).isEqualTo(Nbd.EINVAL);
            assertThat(c.call(Nbd.CMD_READ, 0x8000, 0, 4096, null).error()).isEqualTo(Nbd.EINVAL); // unknown flag
            assertThat(c.call(42, 0, 0, 0, null).error()).isEqualTo(Nbd.EINVAL); // unknown command
            Reply readError = c.call(Nbd.CMD_READ, 0, size, 1, null);
            assertThat(readError.error()).isEqualTo(Nbd.EINVAL);
            assertThat(readError.message()).contains("export size");
            // a write payload above the maximum is skipped, refused, and the stream stays in sync
            int big = NbdConnection.MAX_PAYLOAD + 1;
            assertThat(c.call(Nbd.CMD_WRITE, 0, 0, big, new byte[big]).error()).isEqualTo(Nbd.EINVAL);
            assertThat(c.read(0, 4096)).hasSize(4096);
        }
        assertThat(Files.size(dir.resolve(TestConfigs.volumeId("acme", "db1") + ".img"))).isEqualTo(16 * MiB);
    }

    @Test
    void blockStatusReportsHolesAndDataAndWriteZeroesPunches() throws IOException {
        try (NbdTestClient c = client().open("acme/db1")) {
            c.write(MiB, bytes((int) MiB, 5));
            List<int[]> ext = c.call(Nbd.CMD_BLOCK_STATUS, 0, 0, 4 * MiB, null).extents();
            assertThat(ext).extracting(e -> e[0] + ":" + e[1])
                    .containsExactly(MiB + ":3", MiB + ":0", 2 * MiB + ":3");
            assertThat(c.call(Nbd.CMD_BLOCK_STATUS, Nbd.CMD_FLAG_REQ_ONE, 0, 4 * MiB, null).extents()).hasSize(1);
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, 0, MiB, MiB / 2, null).error()).isZero();
            assertThat(c.read(MiB, (int) MiB / 2)).isEqualTo(new byte[(int) MiB / 2]);
            ext = c.call(Nbd.CMD_BLOCK_STATUS, 0, MiB, MiB, null).extents();
            assertThat(ext.get(0)).containsExactly((int) MiB / 2, 3);
            // NO_HOLE: zeroes that stay allocated
            assertThat(c.call(Nbd.CMD_WRITE_ZEROES, Nbd.CMD_FLAG_NO_HOLE, 8 * MiB, MiB, null).error()).isZero();
            ext = c.call(Nbd.CMD_BLOCK_STATUS, 0, 8 * MiB, MiB, null).extents();
            assertThat(ext.get(0)[1] & Nbd.STATE_HOLE).isZero();
            assertThat(c.read(8 * MiB, 4096)).isEqualTo(new byte[4096]);
        }
        try (NbdTestClient c = client().openSimple("acme/db1")) {
            assertThat(c.call(Nbd.CMD_BLOCK_STATUS, 0, 0, 4096, null).error()).isEqualTo(Nbd.EINVAL);
        }
    }

    @Test
    void trimmedRangesAreReclaimedByGcAndWritesAfterATrimSurviveIt() throws IOException {
        try (NbdTestClient c = client().open("acme/db1")) {
            c.write(0, bytes((int) (4 * MiB), 9));
            assertThat(c.call(Nbd.CMD_TRIM, 0, 0, 4 * MiB, null).error()).isZero();
            c.write(MiB, bytes(4096, 3)); // rewrites part of the trimmed range before gc runs
            await().atMost(Duration.ofSeconds(20)).until(() -> node.pendingTrimBytes() == 0);
            List<int[]> ext = c.call(Nbd.CMD_BLOCK_STATUS, 0, 0, 4 * MiB, null).extents();
            assertThat(ext).extracting(e -> e[0] + ":" + e[1])
                    .containsExactly(MiB + ":3", "4096:0", (3 * MiB - 4096) + ":3");
            assertThat(c.read(MiB, 4096)).isEqualTo(bytes(4096, 3));
        }
    }

    @Test
    void repliesGoOutAsRequestsCompleteNotInRequestOrder() throws IOException {
        VolumeStore v = node.volume("acme/db1");
        try (NbdTestClient c = client().open("acme/db1")) {
            v.lockAll(); // holds writes back in their worker
            try {
                c.request(Nbd.CMD_WRITE, 0, 1, 0, 4096, bytes(4096, 1));
                c.flushOut();
                await().atMost(Duration.ofSeconds(20)).until(v::writersWaiting); // the write holds one worker
                c.request(Nbd.CMD_READ, 0, 2, MiB, 4096, null);
                c.flushOut();
                assertThat(c.readReply().cookie()).isEqualTo(2); // the read overtakes the held write
            } finally {
                v.unlockAll();
            }
            assertThat(c.readReply().cookie()).isEqualTo(1);
        }
    }

    /**
     * Two workers answer 64 reads of 4 KiB and 64 KiB in flight at a time, their replies written
     * as they complete: each arrives whole with its own block.
     */
    @Test
    void manyRepliesInFlightEachArriveWholeWithTheirOwnData() throws IOException {
        byte[] data = bytes(8 * (int) MiB, 3);
        try (NbdTestClient c = client().open("acme/db1")) {
            c.write(0, data);
            c.readsMatchWithManyInFlight(data, 40, 64);
        }
    }

    /**
     * Writes of every size around {@link NbdConnection#DIRECT_PAYLOAD_BYTES}, reads between
     * them, all sent in one burst: after a large write the server reads one header at a time,
     * after anything else as much as the socket holds; whichever way a payload arrives, each write
     * lands whole at its offset and each read gets its own data.
     */
    @Test
    void writesOfEverySizeAndReadsSentInOneBurstEachLandWhole() throws IOException {
        int dl = NbdConnection.DIRECT_PAYLOAD_BYTES;
        int[] sizes = {64 << 10, 64 << 10, 4096, dl - 1, dl, dl + 1, 512, 1 << 20, 100_003, 28, dl, 4096, 200 << 10};
        byte[] kept = bytes(256 << 10, 5); // read during the burst: written before it, never in it
        byte[] expected = new byte[8 << 20];
        try (NbdTestClient c = client().open("acme/db1")) {
            c.write(8 * MiB, kept);
            long cookie = 1;
            int at = 0;
            for (int i = 0; i < sizes.length; i++) {
                byte[] data = bytes(sizes[i], 100 + i);
                System.arraycopy(data, 0, expected, at, data.length);
                c.request(Nbd.CMD_WRITE, 0, cookie++, at, data.length, data);
                c.request(Nbd.CMD_READ, 0, 1000 + i, 8 * MiB + i * 4096L, i % 2 == 0 ? 4096 : 65_536, null);
                at += data.length + 511;
            }
            c.flushOut();
            for (int i = 0; i < 2 * sizes.length; i++) {
                Reply r = c.readReply();
                assertThat(r.error()).as("reply to %d", r.cookie()).isZero();
                if (r.cookie() >= 1000) {
                    int k = (int) (r.cookie() - 1000);
                    assertThat(r.data()).isEqualTo(Arrays.copyOfRange(kept, k * 4096, k * 4096 + r.data().length));
                }
            }
            assertThat(c.read(0, at)).isEqualTo(Arrays.copyOf(expected, at));
        }
    }

    /**
     * Reads {@code n} replies to 4 KiB reads of cookie 100 + k at offset 4096 k, checks each
     * against {@code data}, and returns their cookies in the order they came.
     */
    static List<Long> readReplies(NbdTestClient c, byte[] data, int n) throws IOException {
        List<Long> cookies = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Reply r = c.readReply();
            assertThat(r.error()).isZero();
            int k = (int) (r.cookie() - 100);
            assertThat(r.data()).isEqualTo(Arrays.copyOfRange(data, k * 4096, (k + 1) * 4096));
            cookies.add(r.cookie());
        }
        return cookies;
    }

    @Test
    void requestsInFlightWhenTheClientSendsDiscAreAllAnsweredBeforeTheServerCloses() throws IOException {
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 8 * MiB)
                .volume("acme", "slow", MiB, 100, null, 10L).revision(2).build());
        int n = 8;
        try (NbdTestClient c = client().open("acme/slow")) {
            byte[] data = bytes(n * 4096, 5);
            c.write(0, data);
            for (int i = 0; i < n; i++) {
                c.request(Nbd.CMD_READ, 0, 100 + i, 4096L * i, 4096, null);
            }
            long sent = System.nanoTime();
            c.disconnect(); // the reads and DISC go out together, nothing answered yet
            // at 10 IOPS the reads are answered over most of a second, long after the DISC arrived
            List<Long> cookies = readReplies(c, data, n);
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("the reads were held by the IOPS cap")
                    .isGreaterThan(Duration.ofMillis(400));
            assertThat(cookies).containsExactlyInAnyOrder(100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L);
            assertThat(c.in.read()).as("after the last reply the server closes the connection").isEqualTo(-1);
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> node.connectionCount() == 0);
    }

    /**
     * The replies a worker holds while it runs a batch ({@link ReplyBatch}) go out before the
     * connection, draining after NBD_CMD_DISC, closes. One worker: the first read holds it in the
     * store until the other seven reads and the DISC are in, and then it runs those seven as one
     * batch.
     */
    @Test
    void requestsOfABatchInFlightWhenTheClientSendsDiscAreAllAnsweredBeforeTheServerCloses() throws Exception {
        node.close();
        StoreGate gate = new StoreGate();
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(1)
                .replyHold(Duration.ofSeconds(10)) // the batch's replies held to its end, however slow
                .serviceTime(gate).build();
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).build());
        int n = 8;
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).open("acme/db1")) {
            byte[] data = bytes(n * 4096, 7);
            c.write(0, data);
            gate.arm();
            for (int i = 0; i < n; i++) {
                c.request(Nbd.CMD_READ, 0, 100 + i, 4096L * i, 4096, null);
            }
            c.disconnect();
            assertThat(gate.entered(20)).as("the first read reached the store").isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> node.executor().pending() == n);
            long gathered = node.server().gatheredReplies();
            gate.release();
            List<Long> cookies = readReplies(c, data, n);
            assertThat(cookies).containsExactlyInAnyOrder(100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L);
            assertThat(c.in.read()).as("after the last reply the server closes the connection").isEqualTo(-1);
            assertThat(node.server().gatheredReplies() - gathered).as("replies of the batch written together")
                    .isGreaterThan(1);
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> node.connectionCount() == 0);
    }

    @Test
    void aRequestTheVolumesQueueRefusesGetsEnomemAndNothingIsDropped() throws IOException {
        node.close();
        node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 0)).workers(2)
                .maxInFlight(4096).maxBufferedBytes(1L << 30).build();
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).build());
        VolumeStore v = node.volume("acme/db1");
        int n = 1500; // above the default queue bound of 1024
        int enomem = 0;
        int ok = 0;
        try (NbdTestClient c = new NbdTestClient(node.listenAddress()).open("acme/db1")) {
            v.lockAll();
            try {
                for (int i = 0; i < n; i++) {
                    c.request(Nbd.CMD_WRITE, 0, i, 4096L * i, 4096, bytes(4096, i));
                }
                c.flushOut();
                // refusals come back while the writes are held: all but the 1024 queued and the
                // (at most 2 x 8) that the two workers took in their batches and are holding
                for (int i = 0; i < n - 1024 - 16; i++) {
                    Reply r = c.readReply();
                    assertThat(r.error()).isEqualTo(Nbd.ENOMEM);
                    enomem++;
                }
            } finally {
                v.unlockAll();
            }
            for (int i = enomem; i < n; i++) {
                Reply r = c.readReply();
                if (r.error() == 0) {
                    ok++;
                } else {
                    assertThat(r.error()).isEqualTo(Nbd.ENOMEM);
                    enomem++;
                }
            }
        }
        assertThat(ok + enomem).isEqualTo(n);
        assertThat(ok).isGreaterThanOrEqualTo(1024);
    }

    @Test
    void removingAVolumeClosesItsConnectionsCleanlyAndThenDeletesItsFile() throws IOException {
        Path file = dir.resolve(TestConfigs.volumeId("acme", "db2") + ".img");
        try (NbdTestClient c = client().open("acme/db2")) {
            c.write(0, bytes(4096, 1));
            node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).revision(2).build());
            assertThat(c.closedByServer()).isTrue();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(file));
        try (NbdTestClient c = client().handshake()) {
            assertThat(c.option(Nbd.OPT_GO, NbdTestClient.goData("acme/db2")).get(0).type()).isEqualTo(Nbd.REP_ERR_UNKNOWN);
        }
    }

    @Test
    void growingAVolumeKeepsItsDataAndNewConnectionsSeeTheNewSize() throws IOException {
        try (NbdTestClient c = client().open("acme/db2")) {
            c.write(4096, bytes(4096, 8));
        }
        node.apply(config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 32 * MiB).revision(2).build());
        try (NbdTestClient c = client().open("acme/db2")) {
            assertThat(c.exportSize).isEqualTo(32 * MiB);
            assertThat(c.read(4096, 4096)).isEqualTo(bytes(4096, 8));
            c.write(30 * MiB, bytes(4096, 9));
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> node.apply(
                config().tenant("acme").volume("acme", "db1", 16 * MiB).volume("acme", "db2", 8 * MiB).revision(3).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot shrink");
    }

    @Test
    void aClientThatStopsReadingRepliesIsDisconnectedWithoutHoldingUpOthers() throws IOException {
        try (NbdTestClient greedy = client().open("acme/db1"); NbdTestClient polite = client().open("acme/db1")) {
            greedy.socket.setReceiveBufferSize(4096);
            // 200 reads of 1 MiB that it never reads: far more than the socket buffers hold
            for (int i = 0; i < 200; i++) {
                greedy.request(Nbd.CMD_READ, 0, i, 0, MiB, null);
            }
            greedy.flushOut();
            for (int i = 0; i < 50; i++) {
                assertThat(polite.read(4096L * i, 4096)).hasSize(4096);
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> node.connectionCount() == 1);
            assertThat(polite.read(0, 4096)).hasSize(4096);
        }
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static boolean same(byte[] a, byte[] b) {
        return Arrays.equals(a, b);
    }
}
