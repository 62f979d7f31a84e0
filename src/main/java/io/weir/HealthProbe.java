package io.weir;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The container image's health check: exits 0 when the Weir process of this container is ready,
 * 1 when it is not. It needs nothing but the JRE (the image has no curl), and it loads no more
 * than the JDK, so a check costs a fraction of a second:
 *
 * <pre>
 * java -cp /opt/weir/BOOT-INF/classes io.weir.HealthProbe [TARGET]
 * </pre>
 *
 * TARGET is {@code http://...} (ready when the URL answers 2xx), {@code nbd://HOST:PORT}
 * (ready when an NBD server greets with the newstyle handshake), or {@code none} (always ready).
 * Without one, the probe reads the command line of the container's main process
 * ({@code /proc/1/cmdline}) and its environment to find out what runs there:
 * <ul>
 *   <li>the control plane and the demo: {@code /actuator/health/readiness} on {@code --server.port},
 *       {@code SERVER_PORT} or 8080; over HTTPS when {@code --server.ssl.bundle} or
 *       {@code SERVER_SSL_BUNDLE} is set, verified against the CA file {@code WEIR_PKI_CA_CERTIFICATE}
 *       (the cluster CA, whose certificate for the control plane must name 127.0.0.1);</li>
 *   <li>a data node: the NBD greeting at the address of {@code --listen}, {@code WEIR_LISTEN}, or
 *       port 10809 (on 127.0.0.1 when it listens on every address);</li>
 *   <li>anything else (the agent): ready while it runs.</li>
 * </ul>
 * It reports what it checked, and why it failed, on standard output, which Docker keeps with
 * the health status ({@code docker inspect}).
 */
public final class HealthProbe {

    /** The CA file an {@code https://} target is verified against: the control plane's own, {@code weir.pki.ca-certificate}. */
    static final String CA_VARIABLE = "WEIR_PKI_CA_CERTIFICATE";

    /** How long one connect or read may take; Docker's own timeout is longer. */
    private static final int TIMEOUT_MILLIS = 3_000;

    /** The control plane's HTTP port when nothing sets it. */
    private static final int DEFAULT_HTTP_PORT = 8080;

    /** The data node's NBD port when nothing sets it (the IANA port of NBD). */
    private static final int DEFAULT_NBD_PORT = 10809;

    /** The first 16 bytes an NBD server sends in the fixed newstyle handshake. */
    private static final byte[] NBD_GREETING = "NBDMAGICIHAVEOPT".getBytes(StandardCharsets.US_ASCII);

    private HealthProbe() {
    }

    public static void main(String[] args) {
        String target;
        try {
            target = args.length > 0 ? args[0] : target(mainCommandLine(), System.getenv());
        } catch (IOException | RuntimeException e) {
            System.out.println("unhealthy: cannot tell what this container runs: " + e);
            System.exit(1);
            return;
        }
        String ca = System.getenv(CA_VARIABLE);
        String problem = check(target, ca == null || ca.isEmpty() ? null : Path.of(ca));
        System.out.println(problem == null ? "ready: " + target : "unhealthy: " + target + ": " + problem);
        System.exit(problem == null ? 0 : 1);
    }

    /** Hosts of a listen address that mean every address of the machine (or none given). */
    private static final java.util.Set<String> WILDCARDS = java.util.Set.of("", "0.0.0.0", "[::]", "::", "*");

    /**
     * What to check for a main process started with {@code commandLine} in {@code env}.
     *
     * @param commandLine the main process's arguments, from the executable on
     * @param env its environment
     * @return an {@code http://}, {@code nbd://} or {@code none} target
     */
    static String target(List<String> commandLine, Map<String, String> env) {
        List<String> args = roleArguments(commandLine);
        String role = args.isEmpty() || args.get(0).startsWith("-") ? "controlplane" : args.get(0);
        return switch (role) {
            case "controlplane", "demo" -> {
                String port = option(args, "--server.port", env.getOrDefault("SERVER_PORT",
                        String.valueOf(DEFAULT_HTTP_PORT)));
                // HTTPS when an SSL bundle serves the port (the certificate must name 127.0.0.1)
                boolean tls = !option(args, "--server.ssl.bundle", env.getOrDefault("SERVER_SSL_BUNDLE", "")).isEmpty();
                yield (tls ? "https" : "http") + "://127.0.0.1:" + port + "/actuator/health/readiness";
            }
            case "datanode" -> {
                String listen = option(args, "--listen", env.getOrDefault("WEIR_LISTEN", ""));
                int colon = listen.lastIndexOf(':');
                String port = colon < 0 ? String.valueOf(DEFAULT_NBD_PORT) : listen.substring(colon + 1);
                String host = colon < 0 ? "" : listen.substring(0, colon);
                // a node bound to one address answers there only; one bound to all, on 127.0.0.1
                yield "nbd://" + (WILDCARDS.contains(host) ? "127.0.0.1" : host) + ":" + port;
            }
            default -> "none";
        };
    }

    /** The arguments after the main class or jar: the role and its options. */
    private static List<String> roleArguments(List<String> commandLine) {
        for (int i = 0; i < commandLine.size(); i++) {
            String arg = commandLine.get(i);
            if (arg.equals("-jar") && i + 1 < commandLine.size()) {
                return commandLine.subList(i + 2, commandLine.size());
            }
            if (arg.endsWith("JarLauncher") || arg.equals(Main.class.getName())) {
                return commandLine.subList(i + 1, commandLine.size());
            }
        }
        return List.of();
    }

    /** The value of {@code --name=value} or {@code --name value}, else {@code fallback}. */
    private static String option(List<String> args, String name, String fallback) {
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).startsWith(name + "=")) {
                return args.get(i).substring(name.length() + 1);
            }
            if (args.get(i).equals(name) && i + 1 < args.size()) {
                return args.get(i + 1);
            }
        }
        return fallback;
    }

    private static List<String> mainCommandLine() throws IOException {
        byte[] raw = Files.readAllBytes(Path.of("/proc/1/cmdline"));
        List<String> args = new ArrayList<>(Arrays.asList(new String(raw, StandardCharsets.UTF_8).split("\0")));
        args.removeIf(String::isEmpty);
        return args;
    }

    /** Checks {@code target}; null when healthy, else what is wrong. */
    static String check(String target) {
        return check(target, null);
    }

    /**
     * Checks {@code target}, an {@code https://} one against the CA certificates in {@code caFile}
     * (PEM; null: the JDK's trust store); null when healthy, else what is wrong.
     */
    static String check(String target, Path caFile) {
        try {
            if (target.equals("none")) {
                return null;
            }
            URI uri = URI.create(target);
            return switch (uri.getScheme()) {
                case "http", "https" -> checkHttp(uri, caFile);
                case "nbd" -> checkNbd(uri);
                default -> "unknown scheme (use http://, nbd:// or none)";
            };
        } catch (IOException | IllegalArgumentException e) {
            return e.toString();
        }
    }

    private static String checkHttp(URI uri, Path caFile) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) uri.toURL().openConnection();
        if (connection instanceof javax.net.ssl.HttpsURLConnection https && caFile != null) {
            https.setSSLSocketFactory(trusting(caFile).getSocketFactory());
        }
        connection.setConnectTimeout(TIMEOUT_MILLIS);
        connection.setReadTimeout(TIMEOUT_MILLIS);
        try {
            int status = connection.getResponseCode();
            return status >= 200 && status < 300 ? null : "HTTP " + status;
        } finally {
            connection.disconnect();
        }
    }

    /** An SSL context trusting exactly the certificates of {@code caFile}, with the JDK alone. */
    private static javax.net.ssl.SSLContext trusting(Path caFile) throws IOException {
        try (InputStream in = Files.newInputStream(caFile)) {
            java.security.KeyStore store = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (java.security.cert.Certificate c : java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificates(in)) {
                store.setCertificateEntry("ca-" + i++, c);
            }
            javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                    javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException("cannot trust " + caFile + ": " + e.getMessage(), e);
        }
    }

    private static String checkNbd(URI uri) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            InputStream in = socket.getInputStream();
            byte[] greeting = in.readNBytes(NBD_GREETING.length);
            return Arrays.equals(greeting, NBD_GREETING) ? null : "no NBD newstyle greeting";
        }
    }
}
