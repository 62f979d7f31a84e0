package io.weir.controlplane.token;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.ControlPlaneApplication;
import io.weir.controlplane.security.TokenSecrets;
import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.TestDatabase;
import java.nio.file.Files;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The first start on an empty database creates one admin token: the configured one if
 * {@code weir.security.bootstrap-token} is set, else a generated one in
 * {@code <weir.data-dir>/admin-token} (mode 0600). Each scenario starts the whole service on a
 * database of its own, created empty on the shared test server.
 */
@ExtendWith(OutputCaptureExtension.class)
class TokenBootstrapTest {

    private static final Pattern JDBC_URL = Pattern.compile("(jdbc:postgresql://[^/]+/)([^?]*)(.*)");

    static String emptyDatabase() throws Exception {
        TestDatabase.Coordinates db = TestDatabase.get();
        String name = "boot_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.username(), db.password());
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        Matcher m = JDBC_URL.matcher(db.jdbcUrl());
        assertThat(m.matches()).as(db.jdbcUrl()).isTrue();
        return m.group(1) + name + m.group(3);
    }

    static ConfigurableApplicationContext start(String url, Path dataDir, String bootstrapToken, String... more) {
        TestDatabase.Coordinates db = TestDatabase.get();
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.datasource.url=" + url,
                "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password(),
                "--weir.data-dir=" + dataDir,
                "--weir.security.bootstrap-token=" + bootstrapToken));
        args.addAll(List.of(more));
        return new SpringApplicationBuilder(ControlPlaneApplication.class).run(args.toArray(String[]::new));
    }

    static HttpApi client(ConfigurableApplicationContext app, String token) {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        return new HttpApi(port).withHeader("Authorization", "Bearer " + token);
    }

    @Test
    void withoutAConfiguredTokenOneIsGeneratedIntoAnOwnerOnlyFile(@TempDir Path dataDir, CapturedOutput output)
            throws Exception {
        String url = emptyDatabase();
        Path file = dataDir.resolve("admin-token").toAbsolutePath();
        String secret;
        try (ConfigurableApplicationContext app = start(url, dataDir, "")) {
            assertThat(file).exists();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            secret = Files.readString(file).trim();
            assertThat(secret).matches("weir_[0-9a-f]{32}_[A-Za-z0-9_-]{43}");
            assertThat(client(app, secret).get("/api/v1/tokens").status()).isEqualTo(200);
            assertThat(output.getAll()).contains(file.toString()).doesNotContain(secret)
                    .doesNotContain(secret.substring(38)).contains("After first use, issue your own admin token");
        }
        // A second start finds a token and leaves everything as it was.
        try (ConfigurableApplicationContext app = start(url, dataDir, "")) {
            assertThat(Files.readString(file).trim()).isEqualTo(secret);
            assertThat(client(app, secret).get("/api/v1/tokens").json().get("totalItems").asLong()).isEqualTo(1);
        }
        assertThat(output.getAll()).doesNotContain(secret.substring(38));
    }

    @Test
    void theTokenFileGoesIntoAnOwnerOnlyDirectoryAndReplacesASymlinkInsteadOfWritingThroughIt(@TempDir Path base)
            throws Exception {
        Path dir = base.resolve("fresh").resolve("data");
        Path file = dir.resolve("admin-token");
        TokenBootstrap.writeOwnerOnly(file, "first-secret");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");

        Path victim = Files.writeString(base.resolve("victim"), "keep me");
        Files.delete(file);
        Files.createSymbolicLink(file, victim);
        TokenBootstrap.writeOwnerOnly(file, "second-secret");
        assertThat(Files.readString(victim)).isEqualTo("keep me");
        assertThat(Files.isSymbolicLink(file)).isFalse();
        assertThat(Files.readString(file).trim()).isEqualTo("second-secret");
        try (var listing = Files.list(dir)) {
            assertThat(listing.map(p -> p.getFileName().toString())).containsExactly("admin-token");
        }
    }

    @Test
    void aConfiguredTokenIsUsedAndNoFileIsWritten(@TempDir Path dataDir, CapturedOutput output) throws Exception {
        String chosen = "my-own-bootstrap-secret-" + UUID.randomUUID();
        try (ConfigurableApplicationContext app = start(emptyDatabase(), dataDir, chosen)) {
            HttpApi admin = client(app, chosen);
            assertThat(admin.get("/api/v1/tokens").status()).isEqualTo(200);
            assertThat(admin.post("/api/v1/tenants", "{\"name\":\"" + "boot-" + UUID.randomUUID().toString().substring(0, 8)
                    + "\"}").status()).isEqualTo(201);
            assertThat(client(app, chosen + "x").get("/api/v1/tokens").status()).isEqualTo(401);
            // Its id is random, not derived from the secret (which made every shown id a guessing oracle).
            UUID id = UUID.fromString(admin.get("/api/v1/tokens").json().get("items").get(0).get("id").asString());
            assertThat(id.version()).isEqualTo(4);
        }
        assertThat(dataDir.resolve("admin-token")).doesNotExist();
        assertThat(output.getAll()).contains("weir.security.bootstrap-token").doesNotContain(chosen);
    }

    /**
     * Break-glass recovery while the identity provider is down: an operator-chosen bootstrap text
     * with exactly two dots has the shape of a JWT, and was sent to JWT checking (503) instead of
     * being recognised as the Weir token it is.
     */
    @Test
    void aConfiguredTokenShapedLikeAJwtIsRecognisedAsAWeirTokenWhenOidcIsOn(@TempDir Path dataDir) throws Exception {
        String chosen = "break-glass." + UUID.randomUUID() + "." + UUID.randomUUID();
        String unreachableIssuer;
        try (ServerSocket closed = new ServerSocket(0)) {
            unreachableIssuer = "http://127.0.0.1:" + closed.getLocalPort();
        }
        try (ConfigurableApplicationContext app = start(emptyDatabase(), dataDir, chosen,
                "--weir.security.oidc.issuer-uri=" + unreachableIssuer, "--weir.security.oidc.audience=weir-api")) {
            HttpApi.Response tokens = client(app, chosen).get("/api/v1/tokens");
            assertThat(tokens.status()).as(tokens.toString()).isEqualTo(200);
            // Not the chosen token, and shaped like a JWT: the unreachable issuer answers 503.
            assertThat(client(app, chosen + "x").get("/api/v1/tokens").status()).isEqualTo(503);
        }
    }

    /**
     * The startup warning advises revoking the generated bootstrap token; once that is done the
     * file must not keep the dead secret (nor a live one's look-alike) around.
     */
    @Test
    void revokingTheGeneratedBootstrapTokenRemovesItsFileAndSaysSo(@TempDir Path dataDir, CapturedOutput output)
            throws Exception {
        Path file = dataDir.resolve("admin-token").toAbsolutePath();
        try (ConfigurableApplicationContext app = start(emptyDatabase(), dataDir, "")) {
            String bootstrap = Files.readString(file).trim();
            HttpApi first = client(app, bootstrap);
            HttpApi.Response own = first.post("/api/v1/tokens",
                    "{\"name\":\"my-admin\",\"role\":\"admin\"}");
            assertThat(own.status()).isEqualTo(201);
            HttpApi mine = client(app, own.json().get("token").asString());
            // Revoking another token leaves the file alone.
            HttpApi.Response viewer = mine.post("/api/v1/tokens", "{\"name\":\"a-viewer\",\"role\":\"viewer\"}");
            assertThat(mine.delete("/api/v1/tokens/" + viewer.json().get("id").asString(), null).status()).isEqualTo(204);
            assertThat(file).exists();

            String bootstrapId = TokenSecrets.idOf(bootstrap).toString();
            assertThat(mine.delete("/api/v1/tokens/" + bootstrapId, null).status()).isEqualTo(204);
            assertThat(file).doesNotExist();
            assertThat(output.getAll()).contains("Deleted " + file);
        }
    }
}
