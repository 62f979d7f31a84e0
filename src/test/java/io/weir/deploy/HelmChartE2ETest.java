package io.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;

/**
 * The Helm chart, with the real helm binary ({@code helm} on the PATH, or {@code -Dweir.helm=...};
 * .ci/run installs one): it lints strictly, renders with the default values and with
 * {@code ci/production-values.yaml}, and what it renders holds up: every container has probes,
 * resources and a non-root, read-only security context; every Service, PodDisruptionBudget and
 * ServiceMonitor selects pods (or Services) the chart creates; mounts name declared volumes;
 * every setting handed to Weir is one it reads. Wrong types and unknown keys in the values are
 * rejected by values.schema.json.
 */
@Tag("e2e")
class HelmChartE2ETest {

    private static final Path CHART = Path.of("helm/weir");
    private static final Path PRODUCTION = CHART.resolve("ci/production-values.yaml");

    private static KnownSettings known;

    @BeforeAll
    static void collect() {
        known = KnownSettings.collect();
    }

    static Stream<Arguments> valueSets() {
        return Stream.of(Arguments.of("default values", List.of()),
                Arguments.of("production values", List.of("-f", PRODUCTION.toString())));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valueSets")
    void theChartLintsStrictly(String name, List<String> values) {
        Result lint = helm(concat(List.of("lint", "--strict", CHART.toString()), values));
        assertThat(lint.exit).as("helm lint --strict with %s:%n%s", name, lint.output).isZero();
        assertThat(lint.output).contains("0 chart(s) failed").doesNotContain("[WARNING]").doesNotContain("[ERROR]");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valueSets")
    void everyContainerHasProbesResourcesAndANonRootReadOnlySecurityContext(String name, List<String> values) {
        List<Map<String, Object>> workloads = kind(render(values), "Deployment", "StatefulSet");
        assertThat(workloads).isNotEmpty();
        for (Map<String, Object> workload : workloads) {
            Map<String, Object> pod = map(map(map(workload, "spec"), "template"), "spec");
            Map<String, Object> podSecurity = map(pod, "securityContext");
            assertThat(podSecurity.get("runAsNonRoot")).as("%s: pod runAsNonRoot", id(workload)).isEqualTo(true);
            assertThat(((Number) podSecurity.get("runAsUser")).intValue()).as("%s: pod UID", id(workload)).isPositive();
            Set<String> volumes = new TreeSet<>(names(list(pod, "volumes")));
            for (Map<String, Object> claim : list(map(workload, "spec"), "volumeClaimTemplates")) {
                volumes.add(map(claim, "metadata").get("name").toString());
            }
            List<Map<String, Object>> containers = new ArrayList<>(list(pod, "containers"));
            containers.addAll(list(pod, "initContainers"));
            for (Map<String, Object> container : containers) {
                String where = id(workload) + " container " + container.get("name");
                assertThat(container).as(where).containsKeys("livenessProbe", "readinessProbe", "startupProbe");
                Map<String, Object> resources = map(container, "resources");
                assertThat(map(resources, "requests")).as(where + ": requests").containsKeys("cpu", "memory");
                assertThat(map(resources, "limits")).as(where + ": limits").containsKey("memory");
                Map<String, Object> security = map(container, "securityContext");
                assertThat(security.get("runAsNonRoot")).as(where + ": runAsNonRoot").isEqualTo(true);
                assertThat(security.get("readOnlyRootFilesystem")).as(where + ": read-only root").isEqualTo(true);
                assertThat(security.get("allowPrivilegeEscalation")).as(where).isEqualTo(false);
                assertThat(list(map(security, "capabilities"), "drop")).as(where).asList().contains("ALL");
                List<Map<String, Object>> mounts = list(container, "volumeMounts");
                assertThat(names(mounts)).as(where + ": mounts declared volumes").isSubsetOf(volumes);
                assertThat(mounts).as(where + ": a writable /tmp on the read-only root")
                        .anyMatch(m -> "/tmp".equals(m.get("mountPath")) && !Boolean.TRUE.equals(m.get("readOnly")));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valueSets")
    void servicesAndDisruptionBudgetsSelectPodsTheChartCreates(String name, List<String> values) {
        List<Map<String, Object>> manifests = render(values);
        List<Map<String, Object>> workloads = kind(manifests, "Deployment", "StatefulSet");
        List<Map<String, Object>> selectors = new ArrayList<>(kind(manifests, "Service", "PodDisruptionBudget"));
        assertThat(kind(manifests, "PodDisruptionBudget")).as("a PDB for the control plane").isNotEmpty();
        for (Map<String, Object> selecting : selectors) {
            Map<String, Object> spec = map(selecting, "spec");
            Map<String, Object> selector = selecting.get("kind").equals("Service") ? map(spec, "selector")
                    : map(map(spec, "selector"), "matchLabels");
            assertThat(selector).as("%s has a selector", id(selecting)).isNotEmpty();
            List<Map<String, Object>> selected = workloads.stream().filter(w -> podLabels(w).entrySet()
                    .containsAll(selector.entrySet())).toList();
            assertThat(selected).as("%s selects the pods of one workload", id(selecting)).hasSize(1);
            if (selecting.get("kind").equals("Service")) {
                Set<String> podPorts = new TreeSet<>();
                for (Map<String, Object> c : list(map(map(map(selected.get(0), "spec"), "template"), "spec"), "containers")) {
                    podPorts.addAll(names(list(c, "ports")));
                }
                for (Map<String, Object> port : list(spec, "ports")) {
                    assertThat(podPorts).as("%s targets a named container port", id(selecting))
                            .contains(port.get("targetPort").toString());
                }
            }
        }
        for (Map<String, Object> set : kind(manifests, "StatefulSet")) {
            assertThat(names(kind(manifests, "Service"), "metadata")).as("%s's governing Service", id(set))
                    .contains(map(set, "spec").get("serviceName").toString());
        }
        for (Map<String, Object> workload : workloads) {
            assertThat(podLabels(workload)).as("%s's pods carry its selector's labels", id(workload))
                    .containsAllEntriesOf(map(map(map(workload, "spec"), "selector"), "matchLabels"));
        }
        for (Map<String, Object> monitor : kind(manifests, "ServiceMonitor")) {
            Map<String, Object> labels = map(map(map(monitor, "spec"), "selector"), "matchLabels");
            assertThat(kind(manifests, "Service")).as("%s selects a Service", id(monitor))
                    .anyMatch(s -> map(map(s, "metadata"), "labels").entrySet().containsAll(labels.entrySet()));
        }
        for (Map<String, Object> ingress : kind(manifests, "Ingress")) {
            for (Map<String, Object> rule : list(map(ingress, "spec"), "rules")) {
                for (Map<String, Object> path : list(map(rule, "http"), "paths")) {
                    Map<String, Object> service = map(map(path, "backend"), "service");
                    assertThat(names(kind(manifests, "Service"), "metadata")).contains(service.get("name").toString());
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valueSets")
    void everySettingHandedToWeirIsOneItReads(String name, List<String> values) {
        List<Map<String, Object>> manifests = render(values);
        for (Map<String, Object> workload : kind(manifests, "Deployment", "StatefulSet")) {
            for (Map<String, Object> container : list(map(map(map(workload, "spec"), "template"), "spec"), "containers")) {
                String role = ((List<?>) container.get("args")).get(0).toString();
                for (String variable : names(list(container, "env"))) {
                    if (variable.equals("POD_NAME")) {
                        continue;
                    }
                    boolean reads = role.equals("controlplane") ? known.controlPlaneReads(variable)
                            : known.roleReads(role, variable);
                    assertThat(reads).as("%s (%s): %s", id(workload), role, variable).isTrue();
                }
            }
        }
        for (Map<String, Object> configMap : kind(manifests, "ConfigMap")) {
            Map<String, Object> settings = new Yaml().load(map(configMap, "data").get("application.yaml").toString());
            for (String key : flatten("", settings)) {
                assertThat(known.controlPlaneHasProperty(key)).as("%s: %s is a property Weir reads", id(configMap), key)
                        .isTrue();
            }
        }
    }

    @Test
    void theProductionValuesRenderEveryOptionalPart() {
        List<Map<String, Object>> manifests = render(List.of("-f", PRODUCTION.toString()));
        assertThat(manifests).extracting(m -> m.get("kind")).contains("Deployment", "StatefulSet", "Service",
                "ConfigMap", "PodDisruptionBudget", "Ingress", "ServiceMonitor", "ServiceAccount");
        Map<String, Object> deployment = kind(manifests, "Deployment").get(0);
        assertThat(map(deployment, "spec").get("replicas")).isEqualTo(3);
    }

    @Test
    void theDefaultsRunTwoControlPlaneReplicasOnAnExternalDatabaseAndNoDataNodes() {
        List<Map<String, Object>> manifests = render(List.of());
        assertThat(map(kind(manifests, "Deployment").get(0), "spec").get("replicas")).isEqualTo(2);
        assertThat(kind(manifests, "StatefulSet", "Ingress", "ServiceMonitor")).isEmpty();
        assertThat(manifests).extracting(m -> m.get("kind")).doesNotContain("Job", "Pod");
    }

    /**
     * TLS by default: the chart generates the cluster CA and the control plane's certificate (for
     * the Service the data nodes connect to) into one Secret; the control plane serves HTTPS from
     * it (probes too) with the CA brought as files; the data nodes connect over https:// and
     * mount the CA certificate alone, never its key.
     */
    @Test
    @SuppressWarnings("unchecked")
    void theDefaultsRunTlsWithAGeneratedCaWhoseKeyOnlyTheControlPlaneMounts() throws Exception {
        List<Map<String, Object>> manifests = render(List.of("--set", "dataNode.enabled=true", "--set", "dataNode.tokensSecret=t"));
        Map<String, Object> secret = kind(manifests, "Secret").stream()
                .filter(m -> map(m, "metadata").get("name").equals("r-weir-tls")).findFirst().orElseThrow();
        Map<String, Object> data = map(secret, "data");
        java.util.function.Function<String, String> decoded = key ->
                new String(java.util.Base64.getDecoder().decode(data.get(key).toString()), java.nio.charset.StandardCharsets.US_ASCII);
        var certificates = java.security.cert.CertificateFactory.getInstance("X.509");
        var ca = (java.security.cert.X509Certificate) certificates.generateCertificate(
                new java.io.ByteArrayInputStream(decoded.apply("ca.crt").getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        var server = (java.security.cert.X509Certificate) certificates.generateCertificate(
                new java.io.ByteArrayInputStream(decoded.apply("tls.crt").getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        assertThat(ca.getBasicConstraints()).as("ca.crt is a CA").isGreaterThanOrEqualTo(0);
        server.verify(ca.getPublicKey());
        // both keys are PEM a Spring Boot SSL bundle and the control plane's CA loader read
        assertThat(org.springframework.boot.ssl.pem.PemContent.of(decoded.apply("ca.key")).getPrivateKey()).isNotNull();
        assertThat(org.springframework.boot.ssl.pem.PemContent.of(decoded.apply("tls.key")).getPrivateKey()).isNotNull();

        Map<String, Object> controlPlane = list(map(map(map(kind(manifests, "Deployment").get(0), "spec"), "template"), "spec"),
                "containers").get(0);
        Map<String, String> cpEnv = env(controlPlane);
        assertThat(cpEnv).containsEntry("SERVER_SSL_BUNDLE", "weir").containsEntry("WEIR_PKI_CA_PRIVATE_KEY", "/etc/weir-tls/ca.key");
        for (String probe : List.of("startupProbe", "readinessProbe", "livenessProbe")) {
            assertThat(map(map(controlPlane, probe), "httpGet").get("scheme")).as(probe).isEqualTo("HTTPS");
        }

        Map<String, Object> dataNodePod = map(map(map(kind(manifests, "StatefulSet").get(0), "spec"), "template"), "spec");
        Map<String, String> dnEnv = env(list(dataNodePod, "containers").get(0));
        java.net.URI url = java.net.URI.create(dnEnv.get("WEIR_CONTROL_PLANE"));
        assertThat(url.getScheme()).isEqualTo("https");
        List<String> names = server.getSubjectAlternativeNames().stream().map(n -> n.get(1).toString()).toList();
        assertThat(names).as("the certificate names the host the data nodes connect to").contains(url.getHost());
        assertThat(dnEnv).containsEntry("WEIR_CONTROL_PLANE_CA", "/run/weir/pki/ca.crt");
        Map<String, Object> caVolume = list(dataNodePod, "volumes").stream()
                .filter(v -> v.get("secret") != null && map(v, "secret").get("secretName").equals("r-weir-tls"))
                .findFirst().orElseThrow();
        assertThat((List<Map<String, Object>>) map(caVolume, "secret").get("items"))
                .as("a data node mounts the CA certificate alone").extracting(i -> i.get("key")).containsExactly("ca.crt");

        List<Map<String, Object>> plain = render(List.of("--set", "tls.enabled=false"));
        assertThat(kind(plain, "Secret")).extracting(m -> map(m, "metadata").get("name")).doesNotContain("r-weir-tls");
        assertThat(env(list(map(map(map(kind(plain, "Deployment").get(0), "spec"), "template"), "spec"), "containers").get(0)))
                .doesNotContainKey("SERVER_SSL_BUNDLE");
    }

    /**
     * With TLS (the default) the control plane serves HTTPS only, so what reaches it through the
     * chart speaks HTTPS: the Ingress (ingress-nginx's backend-protocol annotation, the Service
     * port's appProtocol) and the ServiceMonitor (the cluster CA, and the Service's name, which the
     * certificate names). Each sent plain HTTP and got Tomcat's 400. The example Ingress serves a
     * certificate of its own, never the Secret that holds the CA key.
     */
    @Test
    @SuppressWarnings("unchecked")
    void whatReachesTheControlPlaneSpeaksHttpsAndTheIngressNeverServesTheCaSecret() throws Exception {
        List<Map<String, Object>> production = render(List.of("-f", PRODUCTION.toString()));
        Map<String, Object> ingress = kind(production, "Ingress").get(0);
        assertThat(map(map(ingress, "metadata"), "annotations"))
                .containsEntry("nginx.ingress.kubernetes.io/backend-protocol", "HTTPS")
                .containsEntry("nginx.ingress.kubernetes.io/proxy-body-size", "2m");
        Map<String, Object> service = kind(production, "Service").stream()
                .filter(m -> map(m, "metadata").get("name").equals("r-weir-controlplane")).findFirst().orElseThrow();
        assertThat(list(map(service, "spec"), "ports").get(0)).containsEntry("appProtocol", "https");
        Map<String, Object> endpoint = list(map(kind(production, "ServiceMonitor").get(0), "spec"), "endpoints").get(0);
        assertThat(endpoint).containsEntry("scheme", "https");
        Map<String, Object> tlsConfig = map(endpoint, "tlsConfig");
        assertThat(map(map(tlsConfig, "ca"), "secret")).containsEntry("name", "weir-tls").containsEntry("key", "ca.crt");
        assertThat(tlsConfig).containsEntry("serverName", "r-weir-controlplane.storage.svc");
        assertThat(list(map(ingress, "spec"), "tls")).extracting(t -> t.get("secretName"))
                .as("the Ingress's certificate Secret").doesNotContain("weir-tls");

        List<Map<String, Object>> generated = render(List.of("--set", "metrics.serviceMonitor.enabled=true",
                "--set", "metrics.serviceMonitor.tokenSecret.name=prometheus"));
        Map<String, Object> secret = kind(generated, "Secret").stream()
                .filter(m -> map(m, "metadata").get("name").equals("r-weir-tls")).findFirst().orElseThrow();
        var certificate = (java.security.cert.X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                .generateCertificate(new java.io.ByteArrayInputStream(java.util.Base64.getDecoder()
                        .decode(map(secret, "data").get("tls.crt").toString())));
        Object serverName = map(list(map(kind(generated, "ServiceMonitor").get(0), "spec"), "endpoints").get(0), "tlsConfig")
                .get("serverName");
        List<Object> names = certificate.getSubjectAlternativeNames().stream().map(n -> (Object) n.get(1)).toList();
        assertThat(names).as("names of the certificate").contains(serverName);
    }

    /**
     * The heap follows the container's limit (the image's -XX:MaxRAMPercentage=75) unless the
     * values say otherwise: their JVM options come after it, where the same flag wins. The image
     * had the default on java's command line, where it won over anything in JAVA_TOOL_OPTIONS.
     */
    @Test
    void theValuesJvmOptionsComeAfterTheImagesHeapDefault() {
        Map<String, Object> controlPlane = list(map(map(map(kind(render(List.of("-f", PRODUCTION.toString())), "Deployment")
                .get(0), "spec"), "template"), "spec"), "containers").get(0);
        assertThat(env(controlPlane).get("JAVA_TOOL_OPTIONS")).isEqualTo("-XX:MaxRAMPercentage=75 -XX:MaxRAMPercentage=70");
    }

    private static Map<String, String> env(Map<String, Object> container) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        for (Map<String, Object> e : list(container, "env")) {
            env.put(e.get("name").toString(), e.get("value") == null ? null : e.get("value").toString());
        }
        return env;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wrongValues")
    void theSchemaRejectsWrongValues(String setting, String complaint) {
        Result render = helm(List.of("template", "r", CHART.toString(), "--set", setting));
        assertThat(render.exit).as("helm template --set %s", setting).isNotZero();
        assertThat(render.output).contains("values don't meet the specifications of the schema").contains(complaint);
    }

    static Stream<Arguments> wrongValues() {
        return Stream.of(
                Arguments.of("controlPlane.replicaCount=two", "replicaCount"),
                Arguments.of("controlPlane.replicas=3", "replicas"),
                Arguments.of("dataNode.enabled=yes", "enabled"),
                Arguments.of("image.pullPolicy=Sometimes", "pullPolicy"),
                Arguments.of("database.url=postgres://db/weir", "url"),
                Arguments.of("config.authFailures.window=soon", "window"),
                Arguments.of("tls.enabled=yes", "enabled"));
    }

    // ---- helm ----

    private record Result(int exit, String output) {
    }

    private static List<Map<String, Object>> render(List<String> values) {
        Result render = helm(concat(List.of("template", "r", CHART.toString(), "--namespace", "storage"), values));
        assertThat(render.exit).as("helm template:%n%s", render.output).isZero();
        List<Map<String, Object>> manifests = new ArrayList<>();
        for (Object document : new Yaml().loadAll(render.output)) {
            if (document instanceof Map<?, ?>) {
                @SuppressWarnings("unchecked")
                Map<String, Object> manifest = (Map<String, Object>) document;
                manifests.add(manifest);
            }
        }
        return manifests;
    }

    private static Result helm(List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(System.getProperty("weir.helm", "helm"));
        command.addAll(args);
        try {
            Path output = Files.createTempFile("helm", ".out");
            try {
                Process process = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(output.toFile()).start();
                if (!process.waitFor(120, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new AssertionError(command + " did not end in 120 s");
                }
                return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(output);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot run " + command + " (is helm on the PATH? .ci/run installs it): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    // ---- reading manifests ----

    private static List<Map<String, Object>> kind(List<Map<String, Object>> manifests, String... kinds) {
        Set<String> wanted = Set.of(kinds);
        return manifests.stream().filter(m -> wanted.contains(String.valueOf(m.get("kind")))).toList();
    }

    private static Map<String, Object> podLabels(Map<String, Object> workload) {
        return map(map(map(workload, "spec"), "template"), "metadata").containsKey("labels")
                ? map(map(map(map(workload, "spec"), "template"), "metadata"), "labels") : Map.of();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Map<String, Object> parent, String key) {
        Object value = parent.get(key);
        return value == null ? Map.of() : (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Map<String, Object> parent, String key) {
        Object value = parent.get(key);
        return value == null ? List.of() : (List<Map<String, Object>>) value;
    }

    private static List<String> names(List<Map<String, Object>> items) {
        return items.stream().map(i -> String.valueOf(i.get("name"))).toList();
    }

    private static List<String> names(List<Map<String, Object>> items, String metadata) {
        return items.stream().map(i -> String.valueOf(map(i, metadata).get("name"))).toList();
    }

    private static String id(Map<String, Object> manifest) {
        return manifest.get("kind") + "/" + map(manifest, "metadata").get("name");
    }

    @SuppressWarnings("unchecked")
    private static List<String> flatten(String prefix, Map<String, Object> tree) {
        List<String> keys = new ArrayList<>();
        tree.forEach((key, value) -> {
            String name = prefix.isEmpty() ? key : prefix + "." + key;
            if (value instanceof Map<?, ?> child && !name.startsWith("logging.level")) {
                keys.addAll(flatten(name, (Map<String, Object>) child));
            } else {
                keys.add(name.startsWith("logging.level") ? "logging.level" : name);
            }
        });
        return keys;
    }

    private static List<String> concat(List<String> head, List<String> tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(tail);
        return all;
    }
}
