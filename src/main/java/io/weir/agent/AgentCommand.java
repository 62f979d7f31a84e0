package io.weir.agent;

import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

/**
 * The standalone agent: {@code java -jar weir.jar agent [options]}. It drives a plain
 * {@link QosExecutor} with no data path behind it, for tests, demos and load generation: the
 * scheduler holds the node's policies exactly as a data node's would, and the control plane sees
 * an ordinary node (connected, acknowledging revisions).
 *
 * <p>Each option may also come from an environment variable (the option wins). {@link #USAGE}
 * lists them; {@code --help} prints it.
 */
public final class AgentCommand {

    /** Exit status of a usage error. */
    static final int EXIT_USAGE = 2;

    /** The options, their environment variables and defaults, as {@code --help} prints them. */
    static final String USAGE = """
            Usage: java -jar weir.jar agent --control-plane URL (--token-file FILE | --token TOKEN) [options]

            Runs a Weir agent over a QoS scheduler with no data path: it applies the node's desired
            config as the control plane pushes it, acknowledges each revision, and keeps the last good
            one in the state directory (applied again at start, before connecting). The node token
            decides the node; the agent learns the node's id from the first config it receives.

            Options (each also read from the environment variable shown; the option wins):
              --control-plane URL         control plane base URL, http(s)://host:port      WEIR_CONTROL_PLANE
              --token-file FILE           file holding the node token (trimmed)             WEIR_TOKEN_FILE
              --token TOKEN               the node token itself (visible in ps; prefer      WEIR_TOKEN
                                          --token-file)
              --node-id UUID              optional check: the node the token must belong to WEIR_NODE_ID
                                          (the control plane refuses another; default: none)
              --state-dir DIR             last-known-good snapshot directory                WEIR_STATE_DIR
                                          (default: ./weir-agent-state)
              --heartbeat-interval DUR    time between pings (default: 10s)                 WEIR_HEARTBEAT_INTERVAL
              --heartbeat-timeout DUR     silence that drops the connection (default: 30s)  WEIR_HEARTBEAT_TIMEOUT
              --backoff-initial DUR       first reconnect delay's ceiling (default: 200ms)  WEIR_BACKOFF_INITIAL
              --backoff-max DUR           largest reconnect delay (default: 30s)            WEIR_BACKOFF_MAX
              --usage-buffer DUR          oldest unacknowledged usage report kept; older    WEIR_USAGE_BUFFER
                                          ones are dropped as reported gaps (default: 1h)
              --workers N                 scheduler worker threads (default: 1)             WEIR_WORKERS
              --help                      print this and exit

            DUR is a number with a unit, ms, s, m or h (500ms, 10s, 2m), or an ISO-8601 duration (PT10S).
            """;

    /** Default age bound of the unacknowledged usage reports. */
    static final Duration USAGE_BUFFER = Duration.ofHours(1);

    /** Option name to environment variable. */
    private static final Map<String, String> ENV = new LinkedHashMap<>();

    static {
        ENV.put("--control-plane", "WEIR_CONTROL_PLANE");
        ENV.put("--node-id", "WEIR_NODE_ID");
        ENV.put("--token-file", "WEIR_TOKEN_FILE");
        ENV.put("--token", "WEIR_TOKEN");
        ENV.put("--state-dir", "WEIR_STATE_DIR");
        ENV.put("--heartbeat-interval", "WEIR_HEARTBEAT_INTERVAL");
        ENV.put("--heartbeat-timeout", "WEIR_HEARTBEAT_TIMEOUT");
        ENV.put("--backoff-initial", "WEIR_BACKOFF_INITIAL");
        ENV.put("--backoff-max", "WEIR_BACKOFF_MAX");
        ENV.put("--usage-buffer", "WEIR_USAGE_BUFFER");
        ENV.put("--workers", "WEIR_WORKERS");
    }

    private AgentCommand() {
    }

    /** The parsed command line. */
    record Options(URI controlPlane, UUID nodeId, String token, Path stateDir, Duration heartbeatInterval,
            Duration heartbeatTimeout, Duration backoffInitial, Duration backoffMax, Duration usageBuffer, int workers,
            boolean help) {
    }

    /** A command line that cannot be run; its message says why. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    /** Runs the agent until the JVM is stopped (SIGTERM, Ctrl-C). */
    public static void main(String[] args) {
        int status = run(args, System.getenv(), System.out, System.err);
        if (status != 0) {
            System.exit(status);
        }
    }

    /** Parses, then runs until interrupted; answers the exit status of a failed start. */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = parse(args, env);
        } catch (UsageException e) {
            err.println("weir agent: " + e.getMessage());
            err.println("Run 'java -jar weir.jar agent --help' for the options.");
            return EXIT_USAGE;
        }
        if (options.help()) {
            out.print(USAGE);
            return 0;
        }
        QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build())
                .workers(options.workers()).build();
        QosAgent agent;
        try {
            agent = build(options, executor, out, err);
        } catch (RuntimeException e) {
            executor.close();
            err.println("weir agent: " + e.getMessage());
            return EXIT_USAGE;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            agent.close();
            executor.close();
            stopped.countDown();
        }, "weir-agent-shutdown"));
        try {
            agent.start();
        } catch (IOException | RuntimeException e) {
            err.println("weir agent: cannot start: " + e.getMessage());
            return 1;
        }
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private static QosAgent build(Options options, QosExecutor executor, PrintStream out, PrintStream err) {
        QosAgent.Builder builder = QosAgent.builder();
        if (options.nodeId() != null) {
            builder.nodeId(options.nodeId());
        }
        return builder
                .controlPlane(options.controlPlane())
                .token(options.token())
                .stateDir(options.stateDir())
                .executor(executor)
                .heartbeatInterval(options.heartbeatInterval())
                .heartbeatTimeout(options.heartbeatTimeout())
                .backoff(options.backoffInitial(), options.backoffMax())
                // The count bound: every report of the age bound at the shortest interval (one second).
                .usageBuffer(options.usageBuffer(), (int) Math.min(Integer.MAX_VALUE, Math.max(1, options.usageBuffer().toSeconds())))
                .listener(new AgentListener() {
                    @Override
                    public void applied(io.weir.protocol.DesiredConfig config) {
                        out.println("weir agent: applied revision " + config.revision() + " of node " + config.nodeId()
                                + " (" + config.volumes().size() + " volumes, " + config.tenants().size() + " tenants)");
                    }

                    @Override
                    public void rejected(io.weir.protocol.DesiredConfig config, String reason) {
                        err.println("weir agent: refused revision " + config.revision() + ": " + reason);
                    }

                    @Override
                    public void connected() {
                        out.println("weir agent: connected to " + options.controlPlane());
                    }

                    @Override
                    public void disconnected(String reason) {
                        err.println("weir agent: disconnected: " + reason);
                    }
                })
                .build();
    }

    /** Parses {@code args}, falling back on {@code env} for each option missing from them. */
    static Options parse(String[] args, Map<String, String> env) throws UsageException {
        Map<String, String> given = new LinkedHashMap<>();
        boolean help = false;
        List<String> list = new ArrayList<>(List.of(args));
        for (int i = 0; i < list.size(); i++) {
            String arg = list.get(i);
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
                continue;
            }
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (!ENV.containsKey(name)) {
                throw new UsageException("unknown option '" + arg + "'");
            }
            if (value == null) {
                if (i + 1 >= list.size()) {
                    throw new UsageException(name + " needs a value");
                }
                value = list.get(++i);
            }
            if (given.put(name, value) != null) {
                throw new UsageException(name + " given twice");
            }
        }
        if (help) {
            return new Options(null, null, null, null, null, null, null, null, null, 0, true);
        }
        ENV.forEach((option, variable) -> {
            String fromEnv = env.get(variable);
            if (!given.containsKey(option) && fromEnv != null && !fromEnv.isBlank()) {
                given.put(option, fromEnv);
            }
        });
        String url = given.get("--control-plane");
        if (url == null) {
            throw new UsageException("--control-plane is required (or WEIR_CONTROL_PLANE)");
        }
        URI controlPlane;
        try {
            controlPlane = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--control-plane is not a URL: " + url);
        }
        if (controlPlane.getScheme() == null || controlPlane.getHost() == null
                || !List.of("http", "https", "ws", "wss").contains(controlPlane.getScheme())) {
            throw new UsageException("--control-plane must be an http(s):// URL with a host: " + url);
        }
        String id = given.get("--node-id");
        UUID nodeId = null;
        if (id != null) {
            try {
                nodeId = UUID.fromString(id.strip());
            } catch (IllegalArgumentException e) {
                throw new UsageException("--node-id is not a UUID: " + id);
            }
        }
        String token = token(given);
        return new Options(controlPlane, nodeId, token,
                Path.of(given.getOrDefault("--state-dir", "weir-agent-state")),
                duration(given, "--heartbeat-interval", QosAgent.DEFAULT_HEARTBEAT_INTERVAL),
                duration(given, "--heartbeat-timeout", QosAgent.DEFAULT_HEARTBEAT_TIMEOUT),
                duration(given, "--backoff-initial", QosAgent.DEFAULT_BACKOFF_INITIAL),
                duration(given, "--backoff-max", QosAgent.DEFAULT_BACKOFF_MAX),
                duration(given, "--usage-buffer", USAGE_BUFFER),
                workers(given.get("--workers")), false);
    }

    private static String token(Map<String, String> given) throws UsageException {
        String inline = given.get("--token");
        String file = given.get("--token-file");
        if (inline != null && file != null) {
            throw new UsageException("give either --token or --token-file, not both");
        }
        if (file != null) {
            try {
                inline = Files.readString(Path.of(file));
            } catch (IOException e) {
                throw new UsageException("cannot read the token file " + file + ": " + e.getMessage());
            }
        }
        if (inline == null || inline.isBlank()) {
            throw new UsageException("a node token is required: --token-file FILE or --token TOKEN"
                    + " (or WEIR_TOKEN_FILE / WEIR_TOKEN)");
        }
        return inline.strip();
    }

    private static int workers(String value) throws UsageException {
        if (value == null) {
            return 1;
        }
        try {
            int n = Integer.parseInt(value.strip());
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException("--workers must be a whole number >= 1: " + value);
    }

    /** Parses {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT10S}). */
    static Duration duration(Map<String, String> given, String option, Duration fallback) throws UsageException {
        String value = given.get(option);
        if (value == null) {
            return fallback;
        }
        String v = value.strip().toLowerCase(Locale.ROOT);
        Duration d = null;
        try {
            if (v.startsWith("pt") || v.startsWith("p")) {
                d = Duration.parse(v.toUpperCase(Locale.ROOT));
            } else if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("h")) {
                d = Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            d = null;
        }
        if (d == null || d.isNegative() || d.isZero()) {
            throw new UsageException(option + " must be a positive duration such as 500ms, 10s or 2m: " + value);
        }
        return d;
    }
}
