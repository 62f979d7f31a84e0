package io.weir.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.support.DashboardBrowser;
import io.weir.support.LibnbdHome;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code weir demo} as a user meets it: the cluster starts, fio writes to {@code demo/vol1} over
 * NBD with TLS (the demo tenant's certificate in fio's home; a client in clear is refused), the usage its agent reports reaches the API, and the dashboard link the demo prints signs
 * in by itself and draws that load live in headless Chromium (screenshot
 * {@code target/dashboard-demo.png}). Stopping removes everything. Needs fio, chromium and node.
 */
@Tag("e2e")
class DemoE2ETest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path work;

    @Test
    void theDemoServesFioAndItsDashboardShowsTheLoadLive() throws Exception {
        ConfigurableApplicationContext demo = DemoApplication.start("--server.port=0", "--weir.demo.nbd-port=0");
        Path dir = Path.of(demo.getEnvironment().getRequiredProperty("weir.demo.dir"));
        Process fio = null;
        try {
            DemoCluster cluster = demo.getBean(DemoCluster.class);
            Map<String, String> exports = cluster.nbdUrls();
            assertThat(exports).containsOnlyKeys("demo/vol1", "demo/vol2", "acme/db", "acme/logs");
            String link = cluster.dashboardUrl();
            String base = link.substring(0, link.indexOf("/#token="));
            String viewer = link.substring(link.indexOf("#token=") + "#token=".length());

            // Long enough to outlast the checks below; stopped at the end. More reads than writes, so
            // that the read line (whose pixels the browser check counts) is not hidden under the write line.
            // Over TLS, as the demo prints it: fio reads the demo tenant's certificate from its home
            assertThat(exports.get("demo/vol1")).startsWith("nbds://");
            List<String> command = new ArrayList<>(LibnbdHome.prefix(work.resolve("home"), cluster.certificateDirs().get("demo")));
            command.addAll(List.of("fio", "--name=demo", "--ioengine=nbd", "--uri=" + exports.get("demo/vol1"),
                    "--rw=randrw", "--rwmixread=75", "--bs=4k", "--iodepth=16", "--runtime=600", "--time_based"));
            fio = new ProcessBuilder(command)
                    .redirectErrorStream(true).redirectOutput(Path.of("target", "demo-fio.out").toFile()).start();
            // the data nodes require TLS (the default): a client in clear is refused
            Process plain = new ProcessBuilder("nbdinfo", exports.get("demo/vol1").replace("nbds://", "nbd://"))
                    .redirectErrorStream(true).redirectOutput(work.resolve("nbdinfo-plain.out").toFile()).start();
            assertThat(plain.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(plain.exitValue()).as("nbdinfo in clear: %s", Files.readString(work.resolve("nbdinfo-plain.out")))
                    .isNotZero();

            // four reports of fio's load in: enough points for the charts to draw lines
            await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(1))
                    .until(() -> busyPoints(base, viewer, "vol1") >= 4);
            String seen = DashboardBrowser.check(link, "-", "dashboard-demo.png", "admin");

            assertThat(seen).contains("\"nodeRows\":[[").contains("Demo").contains("ACME Corp.");
            assertThat(fio.isAlive()).as("fio ran all along (target/demo-fio.out)").isTrue();
        } finally {
            if (fio != null) {
                fio.destroy();
                fio.waitFor();
            }
            DemoApplication.stop(demo);
        }
        assertThat(dir).doesNotExist();
    }

    /** How many 10-second points of the last 10 minutes show IO on the volume named {@code volume}. */
    private static long busyPoints(String base, String token, String volume) throws Exception {
        String id = null;
        for (JsonNode v : get(base, token, "/api/v1/usage/top?by=iops&limit=10").get("volumes")) {
            if (volume.equals(v.path("volumeName").asString(""))) {
                id = v.get("volumeId").asString();
            }
        }
        if (id == null) {
            return 0;
        }
        Instant now = Instant.now();
        JsonNode series = get(base, token, "/api/v1/usage/volumes/" + id + "?step=10s&from=" + now.minus(Duration.ofMinutes(10))
                .truncatedTo(ChronoUnit.SECONDS) + "&to=" + now.truncatedTo(ChronoUnit.SECONDS));
        long busy = 0;
        for (JsonNode p : series.get("points")) {
            if (p.get("readOps").asLong() + p.get("writeOps").asLong() > 0) {
                busy++;
            }
        }
        return busy;
    }

    private static JsonNode get(String base, String token, String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + path))
                .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
