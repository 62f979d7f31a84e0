package io.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The deployment files say only what the application understands: docker-compose.yml and the
 * Helm chart's templates and values use environment variables, ports and role options that Weir
 * really reads (see {@link KnownSettings} for where those come from), and the compose services
 * fit together (hosts, ports, volumes, token files). No Docker engine and no helm binary needed:
 * the files are read as YAML and text. The rendered chart is checked by {@code HelmChartE2ETest}.
 */
class DeploymentConfigurationTest {

    private static final Path COMPOSE = Path.of("docker-compose.yml");
    private static final Path CHART = Path.of("helm/weir");
    /** The control plane's HTTP port when SERVER_PORT is not set (application.yml server.port). */
    private static final int HTTP_PORT = 8080;
    /** A data node's NBD port when WEIR_LISTEN names none. */
    private static final int NBD_PORT = 10809;
    /** {@code ${NAME:-default}} in compose files. */
    private static final Pattern INTERPOLATION = Pattern.compile("\\$\\{([A-Z0-9_]+)(?::?-([^}]*))?}");
    private static final Pattern ENV_NAME_IN_TEMPLATE = Pattern.compile("(?m)^\\s*- name: ([A-Z][A-Z0-9_]*)\\s*$");

    private static KnownSettings known;
    private static Map<String, Map<String, Object>> services;
    private static Map<String, Object> compose;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void read() throws IOException {
        known = KnownSettings.collect();
        compose = new Yaml().load(Files.readString(COMPOSE, StandardCharsets.UTF_8));
        services = (Map<String, Map<String, Object>>) compose.get("services");
    }

    /**
     * JVM options set in JAVA_TOOL_OPTIONS (Helm's javaToolOptions, a compose override) take
     * effect: the image's heap default is set there, not on java's command line, where a flag wins
     * over the same flag in JAVA_TOOL_OPTIONS and -XX:MaxRAMPercentage=60 was silently ignored.
     */
    @Test
    void theImagesHeapDefaultIsOneJavaToolOptionsCanReplace() throws IOException {
        String dockerfile = Files.readString(Path.of("Dockerfile"), StandardCharsets.UTF_8);
        String entrypoint = dockerfile.substring(dockerfile.indexOf("ENTRYPOINT"));
        entrypoint = entrypoint.substring(0, entrypoint.indexOf(']'));
        assertThat(entrypoint).doesNotContain("MaxRAMPercentage").doesNotContain("-Xmx");
        assertThat(dockerfile).contains("ENV JAVA_TOOL_OPTIONS=\"-XX:MaxRAMPercentage=75\"");
    }

    @Test
    void theComposeFileIsAComposeSpecificationFileWithoutAVersionKey() {
        assertThat(compose).doesNotContainKey("version").containsKeys("services", "volumes");
        assertThat(services).containsKeys("postgres", "controlplane-1", "controlplane-2", "provision",
                "datanode-1", "datanode-2");
        assertThat(weirServices().keySet()).containsExactlyInAnyOrder("controlplane-1", "controlplane-2",
                "datanode-1", "datanode-2", "pki");
    }

    @Test
    void everyEnvironmentVariableOfAWeirServiceIsASettingItsRoleReads() {
        weirServices().forEach((name, service) -> {
            String role = role(service);
            for (String variable : environment(service).keySet()) {
                boolean reads = role.equals("controlplane") ? known.controlPlaneReads(variable)
                        : known.roleReads(role, variable);
                assertThat(reads).as("service %s (role %s): %s is not a setting Weir reads", name, role, variable)
                        .isTrue();
            }
        });
    }

    @Test
    void theControlPlanesPublishTheirHttpPortAndReachTheDatabaseService() {
        weirServices().forEach((name, service) -> {
            if (!role(service).equals("controlplane")) {
                return;
            }
            Map<String, String> env = environment(service);
            int port = Integer.parseInt(env.getOrDefault("SERVER_PORT", String.valueOf(HTTP_PORT)));
            assertThat(containerPorts(service)).as("%s publishes its HTTP port", name).containsExactly(port);

            URI database = URI.create(env.get("SPRING_DATASOURCE_URL").substring("jdbc:".length()));
            assertThat(services).as("%s: database host", name).containsKey(database.getHost());
            assertThat(database.getPort()).as("%s: PostgreSQL's port", name).isEqualTo(5432);
            assertThat(env.get("SPRING_DATASOURCE_USERNAME")).isEqualTo(
                    environment(services.get(database.getHost())).get("POSTGRES_USER"));
            assertThat(env.get("SPRING_DATASOURCE_PASSWORD")).isEqualTo(
                    environment(services.get(database.getHost())).get("POSTGRES_PASSWORD"));
            assertThat(database.getPath()).isEqualTo("/" + environment(services.get(database.getHost())).get("POSTGRES_DB"));
        });
    }

    @Test
    void theDataNodesPublishTheirNbdPortAndReachAControlPlane() {
        Set<Integer> hostPorts = new TreeSet<>();
        weirServices().forEach((name, service) -> {
            if (!role(service).equals("datanode")) {
                return;
            }
            Map<String, String> env = environment(service);
            String listen = env.getOrDefault("WEIR_LISTEN", "127.0.0.1:" + NBD_PORT);
            assertThat(listen).as("%s must listen on every interface to be reachable", name).startsWith("0.0.0.0:");
            int port = Integer.parseInt(listen.substring(listen.lastIndexOf(':') + 1));
            assertThat(containerPorts(service)).as("%s publishes its NBD port", name).containsExactly(port);
            hostPorts.addAll(hostPorts(service));

            URI controlPlane = URI.create(env.get("WEIR_CONTROL_PLANE"));
            Map<String, Object> target = services.get(controlPlane.getHost());
            assertThat(target).as("%s: control plane %s is a service", name, controlPlane).isNotNull();
            assertThat(role(target)).isEqualTo("controlplane");
            assertThat(controlPlane.getPort()).isEqualTo(containerPorts(target).get(0));
            assertThat(dependsOn(service)).as("%s starts after provisioning", name).contains("provision");
        });
        assertThat(hostPorts).as("each data node on its own host port").hasSize(2);
    }

    @Test
    void provisioningWritesEveryTokenFileADataNodeReads() {
        Map<String, Object> provision = services.get("provision");
        Map<String, String> env = environment(provision);
        Map<String, String> provisionMounts = volumeMounts(provision);
        String tokenVolume = volumeAt(provisionMounts, env.get("TOKEN_DIR"));
        Set<String> nodes = new TreeSet<>();
        for (String entry : interpolate(env.get("NODES")).split("\\s+")) {
            nodes.add(entry.substring(0, entry.indexOf('=')));
        }
        Set<String> read = new TreeSet<>();
        weirServices().forEach((name, service) -> {
            if (!role(service).equals("datanode")) {
                return;
            }
            Path tokenFile = Path.of(environment(service).get("WEIR_TOKEN_FILE"));
            String volume = volumeAt(volumeMounts(service), tokenFile.getParent().toString());
            assertThat(volume).as("%s reads its token from the volume provisioning writes to", name)
                    .isEqualTo(tokenVolume);
            String node = tokenFile.getFileName().toString().replaceFirst("\\.token$", "");
            assertThat(nodes).as("%s's token %s is provisioned", name, tokenFile).contains(node);
            read.add(node);
        });
        assertThat(read).as("every provisioned node runs").isEqualTo(nodes);
        assertThat(provisionMounts.get("./src/main/docker/provision.py")).isNotNull();
        assertThat(Files.exists(Path.of("src/main/docker/provision.py"))).isTrue();
        // The volumes it seeds are placed on provisioned nodes.
        for (String volume : interpolate(env.get("VOLUMES")).split("\\s+")) {
            assertThat(nodes).contains(volume.substring(volume.indexOf('@') + 1, volume.indexOf(':')));
        }
    }

    /**
     * TLS as compose runs it: the one-shot {@code pki} service makes the CA and the control planes'
     * certificate into a volume only the control planes mount; they serve HTTPS from it (an SSL
     * bundle) with that CA brought as files; the data nodes and provisioning reach them over
     * https:// by a name the certificate carries, verified against the CA certificate alone, from
     * a volume that holds no key.
     */
    @Test
    void theClusterRunsWithTlsAndOnlyTheControlPlanesSeeTheCaKey() {
        Map<String, Object> pki = services.get("pki");
        assertThat(role(pki)).isEqualTo("pki");
        List<String> args = command(pki);
        String dir = args.get(args.indexOf("--dir") + 1);
        String publicDir = args.get(args.indexOf("--public-dir") + 1);
        List<String> names = List.of(args.get(args.indexOf("--server-names") + 1).split(","));
        String privateVolume = volumeAt(volumeMounts(pki), dir);
        String publicVolume = volumeAt(volumeMounts(pki), publicDir);
        assertThat(privateVolume).isNotEqualTo(publicVolume);
        weirServices().forEach((name, service) -> {
            Map<String, String> env = environment(service);
            Map<String, String> mounts = volumeMounts(service);
            switch (role(service)) {
                case "controlplane" -> {
                    assertThat(env.get("SERVER_SSL_BUNDLE")).as(name).isEqualTo("weir");
                    for (String file : List.of(env.get("SPRING_SSL_BUNDLE_PEM_WEIR_KEYSTORE_CERTIFICATE").replace("file:", ""),
                            env.get("SPRING_SSL_BUNDLE_PEM_WEIR_KEYSTORE_PRIVATE_KEY").replace("file:", ""),
                            env.get("WEIR_PKI_CA_CERTIFICATE"), env.get("WEIR_PKI_CA_PRIVATE_KEY"))) {
                        assertThat(volumeAt(mounts, Path.of(file).getParent().toString())).as("%s reads %s", name, file)
                                .isEqualTo(privateVolume);
                        assertThat(Path.of(file).getParent().toString()).isEqualTo(dir);
                    }
                    assertThat(dependsOn(service)).as(name).contains("pki");
                }
                case "datanode" -> {
                    URI controlPlane = URI.create(env.get("WEIR_CONTROL_PLANE"));
                    assertThat(controlPlane.getScheme()).as(name).isEqualTo("https");
                    assertThat(names).as("%s connects by a name the certificate carries", name).contains(controlPlane.getHost());
                    Path ca = Path.of(env.get("WEIR_CONTROL_PLANE_CA"));
                    assertThat(ca.getFileName().toString()).isEqualTo("ca.crt");
                    assertThat(volumeAt(mounts, ca.getParent().toString())).as(name).isEqualTo(publicVolume);
                    assertThat(mounts).as("%s never mounts the CA key's volume", name).doesNotContainKey(privateVolume);
                }
                case "pki" -> {
                }
                default -> assertThat(mounts).as(name).doesNotContainKey(privateVolume);
            }
        });
        Map<String, Object> provision = services.get("provision");
        assertThat(environment(provision).get("CONTROL_PLANE")).startsWith("https://");
        assertThat(names).contains(URI.create(environment(provision).get("CONTROL_PLANE")).getHost());
        assertThat(volumeAt(volumeMounts(provision), Path.of(environment(provision).get("CONTROL_PLANE_CA")).getParent().toString()))
                .isEqualTo(publicVolume);
        assertThat(volumeMounts(provision)).doesNotContainKey(privateVolume);
    }

    @SuppressWarnings("unchecked")
    private static List<String> command(Map<String, Object> service) {
        Object command = service.get("command");
        return command instanceof List<?> list ? (List<String>) list : List.of(command.toString().split("\\s+"));
    }

    /**
     * Every long-running service (PostgreSQL, the control planes, the data nodes) comes back when
     * its process exits, as a Weir process does when its heap is exhausted
     * ({@code -XX:+ExitOnOutOfMemoryError}): a control plane left down cut its data node off (each
     * agent names one) and let its primaries' leases run out. And each Weir service is given the
     * time its orderly stop takes before it is killed: a data node drains its clients for up to
     * {@code --drain-timeout} (30 s) and then flushes its files, a control plane's graceful stop
     * waits up to 30 s; Compose's default is 10 s, Kubernetes' 30 s.
     */
    @Test
    void everyLongRunningServiceIsRestartedWhenItExitsAndGivenTheTimeItsOrderlyStopTakes() throws IOException {
        int stopSeconds = 30 + 10;
        services.forEach((name, service) -> {
            if ("no".equals(String.valueOf(service.get("restart")))) {
                return; // a one-shot step
            }
            assertThat(service.get("restart")).as("%s's restart policy", name).isIn("unless-stopped", "always");
            if (weirServices().containsKey(name)) {
                assertThat(service.get("stop_grace_period")).as("%s's stop grace period", name).isNotNull();
                assertThat(java.time.Duration.parse("PT" + service.get("stop_grace_period").toString().toUpperCase()))
                        .as("%s's stop grace period", name).isGreaterThanOrEqualTo(java.time.Duration.ofSeconds(stopSeconds));
            }
        });
        for (String template : List.of("datanode-statefulset.yaml", "deployment.yaml")) {
            java.util.regex.Matcher m = Pattern.compile("terminationGracePeriodSeconds: (\\d+)")
                    .matcher(Files.readString(CHART.resolve("templates").resolve(template), StandardCharsets.UTF_8));
            assertThat(m.find()).as("%s sets terminationGracePeriodSeconds", template).isTrue();
            assertThat(Integer.parseInt(m.group(1))).as(template).isGreaterThanOrEqualTo(stopSeconds);
        }
    }

    @Test
    void everyNamedVolumeAndDependencyExists() {
        @SuppressWarnings("unchecked")
        Set<String> declared = ((Map<String, Object>) compose.get("volumes")).keySet();
        services.forEach((name, service) -> {
            for (String source : volumeMounts(service).keySet()) {
                if (!source.startsWith(".") && !source.startsWith("/")) {
                    assertThat(declared).as("%s mounts volume %s", name, source).contains(source);
                }
            }
            assertThat(services.keySet()).as("%s depends on", name).containsAll(dependsOn(service));
        });
    }

    @Test
    void theReadmesFioLineTargetsAVolumeTheComposeClusterServes() throws IOException {
        String fio = readmeFioLine();
        Matcher uri = Pattern.compile("nbds://127\\.0\\.0\\.1:(\\d+)/([a-z0-9-]+)/[a-z0-9-]+").matcher(fio);
        assertThat(uri.find()).as("an nbds:// URI in %s (the data nodes require TLS)", fio).isTrue();
        int hostPort = Integer.parseInt(uri.group(1));
        String export = uri.group(0).substring(uri.group(0).indexOf('/', "nbds://".length()) + 1);
        String tenant = uri.group(2);
        String node = null;
        for (var entry : weirServices().entrySet()) {
            if (hostPorts(entry.getValue()).contains(hostPort)) {
                node = Path.of(environment(entry.getValue()).get("WEIR_TOKEN_FILE")).getFileName().toString()
                        .replaceFirst("\\.token$", "");
            }
        }
        assertThat(node).as("a data node publishes %d", hostPort).isNotNull();
        String placement = export + "@" + node + ":";
        assertThat(interpolate(environment(services.get("provision")).get("VOLUMES")).split("\\s+"))
                .as("provisioning places %s on %s", export, node).anyMatch(v -> v.startsWith(placement));
        assertThat(interpolate(environment(services.get("provision")).get("CLIENT_CERTIFICATES")).split("\\s+"))
                .as("provisioning writes a client certificate of %s", tenant).contains(tenant);
        assertThat(readmeCertificateLine()).as("the README's certificate line copies %s's", tenant)
                .contains("/client-pki/" + tenant + "/. ~/.pki/libnbd");
    }

    @Test
    void everyEnvironmentVariableOfTheChartIsASettingItsRoleReads() throws IOException {
        Map<String, Set<String>> byRole = new LinkedHashMap<>();
        byRole.put("controlplane", envNamesIn(CHART.resolve("templates/deployment.yaml")));
        byRole.put("datanode", envNamesIn(CHART.resolve("templates/datanode-statefulset.yaml")));
        byRole.get("controlplane").addAll(extraEnvNames("controlPlane"));
        byRole.get("datanode").addAll(extraEnvNames("dataNode"));
        assertThat(byRole.get("controlplane")).contains("SPRING_DATASOURCE_URL", "WEIR_BOOTSTRAP_TOKEN");
        assertThat(byRole.get("datanode")).contains("WEIR_CONTROL_PLANE", "WEIR_TOKEN_FILE");
        byRole.forEach((role, names) -> {
            for (String variable : names) {
                if (variable.equals("POD_NAME")) {
                    continue; // only expanded by Kubernetes in WEIR_TOKEN_FILE's value
                }
                boolean reads = role.equals("controlplane") ? known.controlPlaneReads(variable)
                        : known.roleReads(role, variable);
                assertThat(reads).as("chart, %s: %s is not a setting Weir reads", role, variable).isTrue();
            }
        });
    }

    @Test
    void theCheckTellsARealSettingFromAMisspeltOne() {
        assertThat(known.controlPlaneReads("SPRING_DATASOURCE_URL")).isTrue();
        assertThat(known.controlPlaneReads("WEIR_SECURITY_OIDC_ISSUER_URI")).isTrue();
        assertThat(known.controlPlaneReads("WEIR_DATABASE_EMBEDDED_PORT")).isTrue();
        assertThat(known.controlPlaneReads("WEIR_WEB_MAX_REQUEST_BYTES")).isTrue();
        assertThat(known.controlPlaneReads("LOGGING_LEVEL_IO_WEIR")).isTrue();
        assertThat(known.controlPlaneReads("SPRING_DATASOURCE_URI")).isFalse();
        assertThat(known.controlPlaneReads("WEIR_BOOTSTRAP_TOKENS")).isFalse();
        assertThat(known.controlPlaneReads("WEIR_SECURITY_AUTH_FAILURE_WINDOW")).isFalse();
        assertThat(known.controlPlaneHasProperty("weir.security.auth-failures.max-per-window")).isTrue();
        assertThat(known.controlPlaneHasProperty("weir.security.auth-failure.max-per-window")).isFalse();
        assertThat(known.roleReads("datanode", "WEIR_TOKEN_FILE")).isTrue();
        assertThat(known.roleReads("datanode", "WEIR_TOKENFILE")).isFalse();
    }

    /** The fio command of the README (the line the compose e2e test runs). */
    /** The README's fio line for the compose cluster (its section "A local cluster"). */
    static String readmeFioLine() throws IOException {
        return localClusterSection().filter(line -> line.startsWith("fio ") && line.contains("nbds://127.0.0.1:"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("README.md's local cluster has no `fio ... nbds://127.0.0.1:...` line"));
    }

    /** The README's line that copies the compose cluster's client certificate to ~/.pki/libnbd. */
    static String readmeCertificateLine() throws IOException {
        return localClusterSection().filter(line -> line.startsWith("mkdir -p ~/.pki/libnbd && docker compose cp "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("README.md's local cluster has no certificate line"));
    }

    private static Stream<String> localClusterSection() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("README.md"));
        int start = lines.indexOf("## A local cluster");
        assertThat(start).as("README.md's section \"## A local cluster\"").isNotNegative();
        return lines.subList(start + 1, lines.size()).stream().map(String::strip).takeWhile(l -> !l.startsWith("## "));
    }

    // ---- reading the compose file ----

    /** Services run from Weir's image (built from the Dockerfile). */
    private static Map<String, Map<String, Object>> weirServices() {
        Map<String, Map<String, Object>> weir = new LinkedHashMap<>();
        services.forEach((name, service) -> {
            if (".".equals(service.get("build")) || String.valueOf(service.get("image")).startsWith("weir:")) {
                weir.put(name, service);
            }
        });
        return weir;
    }

    /** The role: the first argument of the command (the image's default is the control plane). */
    @SuppressWarnings("unchecked")
    private static String role(Map<String, Object> service) {
        Object command = service.get("command");
        List<String> args = command instanceof List<?> list ? (List<String>) list
                : command == null ? List.of() : List.of(command.toString().split("\\s+"));
        return args.isEmpty() || args.get(0).startsWith("-") ? "controlplane" : args.get(0);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> environment(Map<String, Object> service) {
        Object env = service.get("environment");
        Map<String, String> result = new LinkedHashMap<>();
        if (env instanceof Map<?, ?> map) {
            map.forEach((k, v) -> result.put(k.toString(), v == null ? "" : interpolate(v.toString())));
        } else if (env instanceof List<?> list) {
            for (Object entry : list) {
                String text = entry.toString();
                int eq = text.indexOf('=');
                result.put(eq < 0 ? text : text.substring(0, eq), eq < 0 ? "" : interpolate(text.substring(eq + 1)));
            }
        }
        return result;
    }

    /** Compose interpolation with the defaults written in the file (as with an empty environment). */
    private static String interpolate(String value) {
        Matcher m = INTERPOLATION.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(2) == null ? "" : m.group(2)));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** Container ports of "host:port:container" (or shorter) entries. */
    private static List<Integer> containerPorts(Map<String, Object> service) {
        List<Integer> ports = new ArrayList<>();
        for (String entry : ports(service)) {
            ports.add(Integer.parseInt(entry.substring(entry.lastIndexOf(':') + 1)));
        }
        return ports;
    }

    private static List<Integer> hostPorts(Map<String, Object> service) {
        List<Integer> ports = new ArrayList<>();
        for (String entry : ports(service)) {
            String[] parts = entry.split(":");
            ports.add(Integer.parseInt(parts[parts.length - 2]));
        }
        return ports;
    }

    private static List<String> ports(Map<String, Object> service) {
        Object ports = service.get("ports");
        return ports == null ? List.of() : ((List<?>) ports).stream().map(p -> interpolate(p.toString())).toList();
    }

    /** Volume source to mount point ("source:target[:ro]"). */
    private static Map<String, String> volumeMounts(Map<String, Object> service) {
        Map<String, String> mounts = new LinkedHashMap<>();
        Object volumes = service.get("volumes");
        if (volumes != null) {
            for (Object volume : (List<?>) volumes) {
                String[] parts = volume.toString().split(":");
                mounts.put(parts[0], parts[1]);
            }
        }
        return mounts;
    }

    private static String volumeAt(Map<String, String> mounts, String directory) {
        return mounts.entrySet().stream().filter(e -> e.getValue().equals(directory)).map(Map.Entry::getKey)
                .findFirst().orElseThrow(() -> new AssertionError("no volume mounted at " + directory));
    }

    @SuppressWarnings("unchecked")
    private static List<String> dependsOn(Map<String, Object> service) {
        Object depends = service.get("depends_on");
        if (depends instanceof Map<?, ?> map) {
            return new ArrayList<>((Set<String>) map.keySet());
        }
        return depends == null ? List.of() : (List<String>) depends;
    }

    // ---- reading the chart ----

    private static Set<String> envNamesIn(Path template) throws IOException {
        Set<String> names = new TreeSet<>();
        Matcher m = ENV_NAME_IN_TEMPLATE.matcher(Files.readString(template, StandardCharsets.UTF_8));
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /** Names of {@code extraEnv} in the chart's values files (default and ci/). */
    @SuppressWarnings("unchecked")
    private static Set<String> extraEnvNames(String component) throws IOException {
        Set<String> names = new TreeSet<>();
        List<Path> files = new ArrayList<>(List.of(CHART.resolve("values.yaml")));
        try (Stream<Path> ci = Files.list(CHART.resolve("ci"))) {
            ci.forEach(files::add);
        }
        for (Path file : files) {
            Map<String, Object> values = new Yaml().load(Files.readString(file, StandardCharsets.UTF_8));
            Map<String, Object> section = (Map<String, Object>) values.getOrDefault(component, Map.of());
            for (Object env : (List<Object>) section.getOrDefault("extraEnv", List.of())) {
                names.add(((Map<String, Object>) env).get("name").toString());
            }
        }
        return names;
    }
}
