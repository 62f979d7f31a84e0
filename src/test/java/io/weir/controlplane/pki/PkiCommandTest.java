package io.weir.controlplane.pki;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code weir pki init}: the cluster CA is made once and never replaced behind the operator's back. */
class PkiCommandTest {

    @TempDir
    Path dir;

    private final PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

    @Test
    void aSecondInitKeepsTheCaAndItsCertificate() throws Exception {
        Instant now = Instant.parse("2026-12-07T12:00:00Z");
        PkiCommand.init(dir, List.of("localhost"), Duration.ofDays(365), now, out);
        String ca = Files.readString(dir.resolve(PkiCommand.CA_CERT));
        PkiCommand.init(dir, List.of("localhost"), Duration.ofDays(365), now, out);
        assertThat(Files.readString(dir.resolve(PkiCommand.CA_CERT))).isEqualTo(ca);
    }

    /**
     * The CA key moved to a vault after the first init, and init run again to renew the control
     * plane's certificate: it made a new CA over the old certificate, and no node or client
     * trusted the certificates issued before. It refuses, and changes nothing.
     */
    @Test
    void anInitThatFindsTheCaCertificateWithoutItsKeyRefusesAndKeepsIt() throws Exception {
        Instant now = Instant.parse("2026-12-07T12:00:00Z");
        PkiCommand.init(dir, List.of("localhost"), Duration.ofDays(365), now, out);
        String ca = Files.readString(dir.resolve(PkiCommand.CA_CERT));
        Files.delete(dir.resolve(PkiCommand.CA_KEY));
        assertThatThrownBy(() -> PkiCommand.init(dir, List.of("localhost"), Duration.ofDays(365), now, out))
                .hasMessageContaining("only one of");
        assertThat(Files.readString(dir.resolve(PkiCommand.CA_CERT))).isEqualTo(ca);
    }
}
