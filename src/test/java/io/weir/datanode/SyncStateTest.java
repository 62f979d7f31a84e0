package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyncStateTest {

    @TempDir
    Path dir;

    @Test
    void whatIsWrittenIsReadBackAndReplacesTheStateBefore() throws IOException {
        Path file = dir.resolve("v" + SyncState.SUFFIX);
        UUID b = UUID.randomUUID();
        UUID c = UUID.randomUUID();
        new SyncState(3, 7, Set.of(b), Set.of(b)).write(file);
        new SyncState(3, 8, Set.of(c), Set.of(b, c)).write(file);
        assertThat(SyncState.read(file)).isEqualTo(new SyncState(3, 8, Set.of(c), Set.of(b, c)));
        new SyncState(4, 9, Set.of(), Set.of()).write(file);
        assertThat(SyncState.read(file)).isEqualTo(new SyncState(4, 9, Set.of(), Set.of()));
        SyncState withTokens = new SyncState(4, 10, Set.of(b), Set.of(b, c), java.util.Map.of(b, -5L, c, 77L));
        withTokens.write(file);
        assertThat(SyncState.read(file)).as("with the copies' tokens (rule 8)").isEqualTo(withTokens);
        assertThat(SyncState.tokensIn(file)).isEqualTo(java.util.Map.of(b, -5L, c, 77L));
        try (var files = Files.list(dir)) {
            assertThat(files).as("no temporary file left").containsExactly(file);
        }
    }

    @Test
    void theFileOfTheVersionBeforeKnowsNotWhichCopiesMayBeInSync() throws IOException {
        Path file = dir.resolve("v" + SyncState.SUFFIX);
        UUID b = UUID.randomUUID();
        Files.writeString(file, "epoch=3\nsequence=1\ninSync=" + b + "\n");
        assertThat(SyncState.read(file)).isEqualTo(new SyncState(3, 1, Set.of(b), null));
    }

    @Test
    void noFileIsNoStateAndAFileThatDoesNotParseIsAnError() throws IOException {
        Path file = dir.resolve("v" + SyncState.SUFFIX);
        assertThat(SyncState.read(file)).isNull();
        Files.writeString(file, "epoch=3\nsequence=x\n");
        assertThatThrownBy(() -> SyncState.read(file)).isInstanceOf(IOException.class).hasMessageContaining("does not parse");
        Files.writeString(file, "epoch=3\nsequence=1\ninSync=not-a-node\n");
        assertThatThrownBy(() -> SyncState.read(file)).isInstanceOf(IOException.class);
        Files.writeString(file, "epoch=3\nsequence=-1\n");
        assertThatThrownBy(() -> SyncState.read(file)).isInstanceOf(IOException.class);
        Files.writeString(file, "epoch=3\nsequence=1\ninSync=\\u12\n");
        assertThatThrownBy(() -> SyncState.read(file)).isInstanceOf(IOException.class);
        Files.writeString(file, "epoch=3\nsequence=1\ninSync=" + UUID.randomUUID() + "\nmaybeInSync=\n");
        assertThatThrownBy(() -> SyncState.read(file)).as("a copy in sync left out of maybeInSync")
                .isInstanceOf(IOException.class);
    }
}
