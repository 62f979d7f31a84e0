package io.weir.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code weir demo}'s start as a user's shell may set it up, and its failure: it starts with the
 * admin token an operator exported for the compose tour, and a start that fails leaves neither
 * its directory (the admin token, the tenants' keys, the database) nor a process behind. Starts
 * the real control plane, embedded PostgreSQL and data node processes; needs no client tool.
 */
class DemoStartTest {

    @TempDir
    Path work;

    @Test
    void aDemoThatFailsToStartRemovesItsDirectory() {
        Path dir = work.resolve("demo");
        assertThatThrownBy(() -> DemoApplication.start("--server.port=0", "--weir.demo.nbd-port=0",
                "--weir.demo.dir=" + dir, "--weir.demo.ready-timeout=1ms"))
                .hasStackTraceContaining("within PT0.001S");
        assertThat(dir).doesNotExist();
    }

    /**
     * {@code WEIR_BOOTSTRAP_TOKEN} set (the README's compose tour exports it): the control plane
     * bootstraps that token and writes no file, and the demo signs in with it. It refused to start,
     * finding no token file in an empty database.
     */
    @Test
    void theDemoStartsWithTheAdminTokenSetInTheEnvironment() throws Exception {
        String token = "demo-admin-token-chosen-by-the-operator-0123456789";
        ConfigurableApplicationContext demo = DemoApplication.start("--server.port=0", "--weir.demo.nbd-port=0",
                "--weir.demo.dir=" + work.resolve("demo"), "--weir.security.bootstrap-token=" + token);
        try {
            String base = "http://127.0.0.1:" + demo.getEnvironment().getRequiredProperty("local.server.port");
            HttpResponse<String> tenants = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base
                    + "/api/v1/tenants")).header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(tenants.statusCode()).as(tenants.body()).isEqualTo(200);
            assertThat(tenants.body()).contains("\"demo\"").contains("\"acme\"");
        } finally {
            DemoApplication.stop(demo);
        }
        assertThat(work.resolve("demo")).doesNotExist();
    }

    /**
     * A directory given relative to the working directory, as a user types it: the data nodes,
     * which run in their own directories, were handed paths relative to the demo's, found no
     * token file and exited, and the demo never started.
     */
    @Test
    void theDemoStartsInADirectoryGivenRelativeToTheWorkingDirectory() {
        Path relative = Path.of("").toAbsolutePath().relativize(work.resolve("relative-demo"));
        assertThat(relative.isAbsolute()).isFalse();
        ConfigurableApplicationContext demo = DemoApplication.start("--server.port=0", "--weir.demo.nbd-port=0",
                "--weir.demo.dir=" + relative);
        try {
            assertThat(demo.getEnvironment().getRequiredProperty("weir.demo.dir"))
                    .isEqualTo(work.resolve("relative-demo").toString());
            assertThat(work.resolve("relative-demo")).isNotEmptyDirectory();
        } finally {
            DemoApplication.stop(demo);
        }
        assertThat(work.resolve("relative-demo")).doesNotExist();
    }
}
