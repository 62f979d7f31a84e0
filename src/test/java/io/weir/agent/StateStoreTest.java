package io.weir.agent;

import io.weir.support.TestConfigs;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.protocol.DesiredConfig;
import io.weir.protocol.TaskShareConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The last-known-good snapshot on disk: written whole or not at all, and a bad file never stops a start. */
class StateStoreTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T05:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path dir;

    static DesiredConfig snapshot(long revision) {
        return TestConfigs.config().node(UUID.randomUUID()).revision(revision).task("foreground", 800)
                .task("flush", 100, new TaskShareConfig.DynamicShare(0.3, 0.7, 20, 600, TaskShareConfig.Curve.linear))
                .tenant("acme", 300, 9000L, null).volume(UUID.randomUUID(), "acme", "vol-1", 1 << 20, 250, 100L, 1234L)
                .build();
    }

    private StateStore store() {
        return new StateStore(dir, CLOCK);
    }

    private List<String> files() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aSavedSnapshotLoadsBackEqual() throws IOException {
        DesiredConfig config = snapshot(42);
        store().save(config);

        StateStore.Loaded loaded = store().load();

        assertThat(loaded.config()).isEqualTo(config);
        assertThat(loaded.problem()).isNull();
        assertThat(files()).containsExactly(StateStore.FILE_NAME);
    }

    /** A fresh cluster's first snapshot is revision 0 (nothing has bumped it yet): a snapshot like any other. */
    @Test
    void theSnapshotOfRevisionZeroLoadsBack() throws IOException {
        DesiredConfig config = snapshot(0);
        store().save(config);

        StateStore.Loaded loaded = store().load();

        assertThat(loaded.problem()).isNull();
        assertThat(loaded.config()).isEqualTo(config);
    }

    @Test
    void aNewSaveReplacesTheOldSnapshotAndLeavesNoTemporaryFile() throws IOException {
        store().save(snapshot(1));
        DesiredConfig newer = snapshot(2);

        store().save(newer);

        assertThat(store().load().config()).isEqualTo(newer);
        assertThat(files()).containsExactly(StateStore.FILE_NAME);
    }

    @Test
    void aTemporaryFileLeftByACrashBeforeTheRenameIsIgnored() throws IOException {
        DesiredConfig good = snapshot(5);
        store().save(good);
        Files.writeString(dir.resolve(StateStore.TEMP_NAME), "weir-agent-state 1 sha256=ab len"); // crashed mid-write

        assertThat(store().load().config()).isEqualTo(good);
        store().save(snapshot(6));
        assertThat(files()).containsExactly(StateStore.FILE_NAME);
    }

    @Test
    void noFileIsAFirstStartAndNoProblem() throws IOException {
        StateStore.Loaded loaded = store().load();

        assertThat(loaded.config()).isNull();
        assertThat(loaded.problem()).isNull();
    }

    @Test
    void aTruncatedFileIsSetAsideAndReported() throws IOException {
        store().save(snapshot(7));
        byte[] whole = Files.readAllBytes(store().file());
        Files.write(store().file(), Arrays.copyOf(whole, whole.length - 10));

        StateStore.Loaded loaded = store().load();

        assertThat(loaded.config()).isNull();
        assertThat(loaded.problem()).contains("corrupt").contains("truncated");
        assertThat(loaded.setAside()).exists();
        assertThat(Files.readAllBytes(loaded.setAside())).hasSize(whole.length - 10);
        assertThat(files()).containsExactly("desired-config.corrupt-20261202T050000.000Z");
        assertThat(store().load().problem()).as("a second start finds nothing to complain about").isNull();
    }

    @Test
    void aFlippedByteFailsTheChecksum() throws IOException {
        store().save(snapshot(8));
        byte[] bytes = Files.readAllBytes(store().file());
        int digit = new String(bytes, StandardCharsets.US_ASCII).indexOf("\"revision\":8") + "\"revision\":".length();
        bytes[digit] = '9';
        Files.write(store().file(), bytes);

        StateStore.Loaded loaded = store().load();

        assertThat(loaded.config()).isNull();
        assertThat(loaded.problem()).contains("checksum mismatch");
        assertThat(files()).noneMatch(StateStore.FILE_NAME::equals);
    }

    @Test
    void anEmptyFileAndAFileOfGarbageAreSetAside() throws IOException {
        Files.write(store().file(), new byte[0]);
        assertThat(store().load().problem()).contains("empty file");

        Files.write(store().file(), new byte[] {(byte) 0xff, 0, 1, 2, 3, '{', '}'});
        StateStore.Loaded garbage = new StateStore(dir, Clock.offset(CLOCK, java.time.Duration.ofSeconds(1))).load();
        assertThat(garbage.problem()).contains("no header line");
        assertThat(files()).hasSize(2).allMatch(name -> name.startsWith("desired-config.corrupt-"));
    }

    /** Writes {@code json} as a well-formed state file: right header, right checksum. */
    private void writeStateFile(String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        java.security.MessageDigest md;
        try {
            md = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
        String header = "weir-agent-state 1 sha256=" + java.util.HexFormat.of().formatHex(md.digest(body))
                + " length=" + body.length + "\n";
        Files.write(store().file(), (header + json).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aWellFormedFileWhoseJsonIsNotASnapshotIsSetAside() throws IOException {
        writeStateFile("{\"nodeId\":\"not-a-uuid\",\"revision\":3}");

        StateStore.Loaded loaded = store().load();

        assertThat(loaded.config()).isNull();
        assertThat(loaded.problem()).contains("not a valid snapshot");
    }

    @Test
    void aSnapshotSavedByAnEarlierAgentWithoutTheReportIntervalLoadsWithTheDefault() throws IOException {
        // agents before the usage reports saved no usageReportIntervalSeconds; after an upgrade the
        // node must still enforce that cached config while the control plane is away
        writeStateFile("{\"nodeId\":\"00000000-0000-0000-0000-000000000001\",\"revision\":7,"
                + "\"tasks\":[{\"name\":\"foreground\",\"share\":800}],\"tenants\":[],\"volumes\":[]}");

        StateStore.Loaded loaded = store().load();

        assertThat(loaded.problem()).isNull();
        assertThat(loaded.config().revision()).isEqualTo(7);
        assertThat(loaded.config().usageReportIntervalSeconds())
                .isEqualTo(DesiredConfig.DEFAULT_USAGE_REPORT_INTERVAL_SECONDS);
    }

    @Test
    void theStateDirectoryIsCreatedIfMissing() throws IOException {
        Path nested = dir.resolve("a/b");
        new StateStore(nested, CLOCK).save(snapshot(9));

        assertThat(new StateStore(nested, CLOCK).load().config().revision()).isEqualTo(9);
    }
}
