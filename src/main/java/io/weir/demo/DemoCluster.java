package io.weir.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;
import tools.jackson.databind.JsonNode;

/**
 * Seeds the demo cluster through the control plane's own REST API (as an administrator would,
 * with the bootstrap admin token) and runs its two data nodes.
 *
 * <p>It seeds when the application is ready (the bootstrap admin token exists then), and the
 * application's start returns once both nodes applied their config and serve their exports. It
 * is the first lifecycle bean to stop, so the data nodes stop while the control plane still
 * serves them, and the embedded PostgreSQL stops last.
 *
 * <p>What it seeds: tenants {@code demo} and {@code acme}; a policy {@code capped} (2,000 IOPS);
 * nodes {@code dn1} and {@code dn2}; volumes {@code demo/vol1} (dn1, standard), {@code demo/vol2}
 * (dn2, standard), {@code acme/db} (dn1, premium) and {@code acme/logs} (dn2, capped), 1 GiB
 * each; a client certificate of each tenant, written to {@code <dir>/pki/<tenant>} as libnbd
 * reads it (the data nodes require TLS, {@code nbds://}); and a cluster-wide viewer token for the
 * dashboard. Each node is registered with its address before it starts, so that the certificate
 * the control plane signs for it names the host clients connect to.
 */
final class DemoCluster implements SmartLifecycle, ApplicationListener<ApplicationReadyEvent> {

    /** Size of every seeded volume (files are sparse). */
    private static final long VOLUME_BYTES = 1L << 30;
    /** How often {@link #awaitApplied} asks the control plane. */
    private static final Duration POLL = Duration.ofMillis(250);

    private record SeededVolume(String tenant, String name, String node, String policy) {
        String export() {
            return tenant + "/" + name;
        }
    }

    private static final List<SeededVolume> VOLUMES = List.of(
            new SeededVolume("demo", "vol1", "dn1", "standard"),
            new SeededVolume("demo", "vol2", "dn2", "standard"),
            new SeededVolume("acme", "db", "dn1", "premium"),
            new SeededVolume("acme", "logs", "dn2", "capped"));

    private final DemoProperties properties;
    private final Environment environment;
    private final RestClient.Builder restBuilder;
    private final PrintStream out = System.out;
    private final List<DataNodeProcess> nodes = new ArrayList<>();
    private volatile boolean running;
    /** Set once its nodes were stopped: a node started after that (on the seeding thread) is stopped at once. */
    private boolean stopped;
    private volatile String dashboardUrl;
    private final Map<String, String> nbdUrls = new LinkedHashMap<>();
    private final Map<String, Path> certificateDirs = new LinkedHashMap<>();

    DemoCluster(DemoProperties properties, Environment environment, RestClient.Builder restBuilder) {
        this.properties = properties;
        this.environment = environment;
        this.restBuilder = restBuilder;
    }

    /** The dashboard's address with the viewer token in its fragment (never sent to the server). */
    public String dashboardUrl() {
        return dashboardUrl;
    }

    /** The NBD URL ({@code nbds://}, over TLS) of each seeded volume, by export name ({@code tenant/volume}). */
    public Map<String, String> nbdUrls() {
        return Map.copyOf(nbdUrls);
    }

    /**
     * The directory holding each tenant's client certificate as libnbd reads it (its
     * {@code tls-certificates}: {@code ca-cert.pem}, {@code client-cert.pem}, {@code client-key.pem}),
     * by tenant name.
     */
    public Map<String, Path> certificateDirs() {
        return Map.copyOf(certificateDirs);
    }

    @Override
    public void start() {
        running = true;
    }

    /** Seeds and starts the nodes once the control plane is ready (its admin token exists by then). */
    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        try {
            seedAndRun();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopNodes();
            throw new IllegalStateException("interrupted while starting the demo", e);
        } catch (RuntimeException | TimeoutException e) {
            stopNodes();
            throw new IllegalStateException("the demo did not start: " + e.getMessage(), e);
        }
    }

    private void seedAndRun() throws InterruptedException, TimeoutException {
        String host = properties.connectAddress();
        String base = "http://" + host + ":" + environment.getRequiredProperty("local.server.port");
        Path dir = properties.dir();
        RestClient api = restBuilder.clone().baseUrl(base + "/api/v1")
                .defaultHeader("Authorization", "Bearer " + adminToken()).build();

        out.println("weir demo: seeding tenants, policies, nodes and volumes through " + base + "/api/v1");
        Map<String, String> policies = new LinkedHashMap<>();
        for (String builtIn : List.of("standard", "premium")) {
            policies.put(builtIn, api.get().uri("/policies?name={n}", builtIn).retrieve().body(JsonNode.class)
                    .get("items").get(0).get("id").asString());
        }
        policies.put("capped", id(post(api, "/policies", Map.of("name", "capped",
                "description", "At most 2,000 IOPS.", "maxIops", 2000))));
        Map<String, String> tenants = new LinkedHashMap<>();
        tenants.put("demo", id(post(api, "/tenants", Map.of("name", "demo", "displayName", "Demo"))));
        tenants.put("acme", id(post(api, "/tenants", Map.of("name", "acme", "displayName", "ACME Corp.", "weight", 300))));
        Map<String, Integer> ports = plannedPorts(List.of("dn1", "dn2"));
        Map<String, String> nodeIds = new LinkedHashMap<>();
        Map<String, Path> tokenFiles = new LinkedHashMap<>();
        for (String node : ports.keySet()) {
            // the address first: the node's certificate names the host it is registered with
            JsonNode created = post(api, "/nodes", Map.of("name", node, "labels", Map.of("demo", "true"),
                    "address", host + ":" + ports.get(node)));
            nodeIds.put(node, id(created));
            tokenFiles.put(node, DemoFiles.writeSecret(dir.resolve(node).resolve("node.token"),
                    created.get("token").asString()));
        }
        for (SeededVolume v : VOLUMES) {
            post(api, "/tenants/" + tenants.get(v.tenant()) + "/volumes", Map.of("name", v.name(),
                    "sizeBytes", VOLUME_BYTES, "policyId", policies.get(v.policy()),
                    "nodeIds", List.of(nodeIds.get(v.node()))));
        }
        for (Map.Entry<String, String> tenant : tenants.entrySet()) {
            JsonNode issued = post(api, "/tenants/" + tenant.getValue() + "/client-certificates", Map.of("name", "demo"));
            certificateDirs.put(tenant.getKey(), writeCertificates(dir.resolve("pki").resolve(tenant.getKey()), issued));
        }
        String viewer = post(api, "/tokens", Map.of("name", "demo-dashboard", "role", "viewer")).get("token").asString();

        for (String node : nodeIds.keySet()) {
            out.println("weir demo: starting data node " + node + " on " + properties.bindAddress() + ":" + ports.get(node));
            DataNodeProcess started = DataNodeProcess.start(node, base, tokenFiles.get(node), dir.resolve(node),
                    properties.bindAddress(), ports.get(node), properties.nodeHeap(), out);
            synchronized (this) { // stopNodes may run on a shutdown thread
                if (stopped) {
                    started.close();
                    throw new IllegalStateException("stopped while it started");
                }
                nodes.add(started);
            }
        }
        for (DataNodeProcess node : List.copyOf(nodes)) {
            node.awaitPort(properties.readyTimeout());
        }
        for (String node : nodeIds.keySet()) {
            awaitApplied(api, node, nodeIds.get(node));
        }
        for (DataNodeProcess node : List.copyOf(nodes)) {
            node.awaitTls(properties.readyTimeout());
        }
        for (SeededVolume v : VOLUMES) {
            nbdUrls.put(v.export(), "nbds://" + host + ":" + ports.get(v.node()) + "/" + v.export());
        }
        dashboardUrl = base + "/#token=" + viewer;
        printSummary(dir);
    }

    /**
     * The NBD port of each node: from {@code --weir.demo.nbd-port} on, or free ones picked now
     * when it is 0 (each node registers its address before it starts, for its certificate).
     */
    private Map<String, Integer> plannedPorts(List<String> names) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        int port = properties.nbdPort();
        List<Integer> free = port == 0 ? DemoFiles.freePorts(properties.bindAddress(), names.size()) : List.of();
        for (int i = 0; i < names.size(); i++) {
            ports.put(names.get(i), port == 0 ? free.get(i) : port + i);
        }
        return ports;
    }

    /** Writes a tenant's client certificate, its key (mode 0600) and the CA certificate as libnbd reads them. */
    private static Path writeCertificates(Path dir, JsonNode issued) {
        DemoFiles.writeSecret(dir.resolve("client-key.pem"), issued.get("privateKeyPem").asString());
        DemoFiles.writeSecret(dir.resolve("client-cert.pem"), issued.get("certificatePem").asString());
        DemoFiles.writeSecret(dir.resolve("ca-cert.pem"), issued.get("caCertificatePem").asString());
        return dir;
    }

    /** Waits until {@code node} applied its desired config and reports serving its exports. */
    private void awaitApplied(RestClient api, String name, String id) throws InterruptedException, TimeoutException {
        long expected = VOLUMES.stream().filter(v -> v.node().equals(name)).count();
        long deadline = System.nanoTime() + properties.readyTimeout().toNanos();
        while (true) {
            JsonNode status = api.get().uri("/nodes/{id}", id).retrieve().body(JsonNode.class).get("status");
            JsonNode applied = status.get("appliedRevision");
            JsonNode report = status.get("dataNode");
            if (applied != null && !applied.isNull() && applied.asLong() >= status.get("desiredRevision").asLong()
                    && report != null && !report.isNull() && report.get("exports").size() == expected) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("data node " + name + " did not apply its config within "
                        + properties.readyTimeout() + "; its status: " + status);
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    private void printSummary(Path dir) {
        StringBuilder s = new StringBuilder();
        s.append("\nWeir demo is running. Ctrl-C stops it and removes ").append(dir).append('\n');
        s.append("\n  Dashboard   ").append(dashboardUrl).append("\n              (signed in with a read-only viewer token)\n");
        s.append("  REST API    ").append(dashboardUrl, 0, dashboardUrl.indexOf("/#")).append("/api/v1")
                .append("   admin token: ").append(bootstrapToken() != null ? "as set in WEIR_BOOTSTRAP_TOKEN" : adminTokenFile())
                .append('\n');
        s.append("  OpenAPI     ").append(dashboardUrl, 0, dashboardUrl.indexOf("/#")).append("/swagger-ui.html\n\n");
        s.append("  NBD exports over TLS (tenant/volume, 1 GiB each):\n");
        for (SeededVolume v : VOLUMES) {
            s.append(String.format("    %-52s %s, policy %s%n", nbdUrls.get(v.export()), v.node(), v.policy()));
        }
        s.append("  Client certificates (a tenant's sees only its volumes):\n");
        certificateDirs.forEach((tenant, d) -> s.append(String.format("    %-6s %s%n", tenant, d)));
        Path demoCertificates = certificateDirs.get("demo");
        s.append("\n  Try:\n    nbdinfo '").append(nbdUrls.get("demo/vol1")).append("?tls-certificates=")
                .append(demoCertificates).append("'\n");
        s.append("    # fio reads the certificate from ~/.pki/libnbd (as root: /etc/pki/libnbd)\n");
        s.append("    mkdir -p ~/.pki && cp -rT ").append(demoCertificates).append(" ~/.pki/libnbd\n");
        s.append("    fio --name=weir --ioengine=nbd --uri=").append(nbdUrls.get("demo/vol1"))
                .append(" --rw=randrw --bs=4k --iodepth=16 --runtime=10 --time_based\n");
        out.println(s);
        out.flush();
    }

    @Override
    public void stop() {
        running = false;
        stopNodes();
    }

    private synchronized void stopNodes() {
        stopped = true;
        for (int i = nodes.size() - 1; i >= 0; i--) {
            DataNodeProcess node = nodes.get(i);
            out.println("weir demo: stopping data node " + node.name());
            node.close();
        }
        nodes.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Last to start (after the web server), first to stop. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }

    private Path adminTokenFile() {
        return Path.of(environment.getRequiredProperty("weir.data-dir")).resolve("admin-token");
    }

    /** The operator's {@code weir.security.bootstrap-token} ({@code WEIR_BOOTSTRAP_TOKEN}) if set, else null. */
    private String bootstrapToken() {
        String configured = environment.getProperty("weir.security.bootstrap-token");
        return configured == null || configured.isBlank() ? null : configured.trim();
    }

    /**
     * The admin token the control plane bootstrapped: the one the operator set in
     * {@code WEIR_BOOTSTRAP_TOKEN} (the control plane then writes no file), else its file.
     */
    private String adminToken() {
        if (bootstrapToken() != null) {
            return bootstrapToken();
        }
        try {
            return Files.readString(adminTokenFile()).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("no admin token at " + adminTokenFile()
                    + " (the demo needs an empty database, where the control plane creates one)", e);
        }
    }

    private static JsonNode post(RestClient api, String path, Map<String, ?> body) {
        return api.post().uri(path).contentType(MediaType.APPLICATION_JSON).body(body).retrieve().body(JsonNode.class);
    }

    private static String id(JsonNode resource) {
        return resource.get("id").asString();
    }
}
