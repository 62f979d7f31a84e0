package io.weir.agent;

import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

/**
 * The standalone agent: {@code java -jar weir.jar agent [options]}. It drives a plain
 * {@link QosExecutor} with no data path behind it, for tests, demos and load generation: the
 * scheduler holds the node's policies exactly as a data node's would, and the control plane sees
 * an ordinary node (connected, acknowledging revisions).
 *
 * <p>Options are parsed by {@link CommandLine} (one precedence rule and one duration syntax with
 * {@code datanode}); {@link #USAGE} lists them, {@code --help} prints it.
 */
public final class AgentCommand {

    private static final System.Logger LOG = System.getLogger(AgentCommand.class.getName());

    /** Exit status of a usage error. */
    static final int EXIT_USAGE = 2;

    /** The options, their environment variables and defaults. */
    static final CommandLine OPTIONS = new CommandLine(List.of(
            new CommandLine.Option("control-plane", "WEIR_CONTROL_PLANE", null, "URL",
                    "control plane base URL, http(s)://host:port (required)"),
            new CommandLine.Option(CommandLine.CONTROL_PLANE_CA, "WEIR_CONTROL_PLANE_CA", null, "FILE",
                    "cluster CA certificate (PEM) an https:// control plane must chain to (none: the JDK's trust store)"),
            new CommandLine.Option(CommandLine.TOKEN_FILE, "WEIR_TOKEN_FILE", null, "FILE", "file holding the node token (trimmed)"),
            new CommandLine.Option(CommandLine.TOKEN, "WEIR_TOKEN", null, "TOKEN",
                    "the node token itself (visible in ps; prefer --token-file)"),
            new CommandLine.Option("node-id", "WEIR_NODE_ID", null, "UUID",
                    "optional check: the node the token must belong to (the control plane refuses another)"),
            new CommandLine.Option("state-dir", "WEIR_STATE_DIR", null, "DIR",
                    "last-known-good snapshot directory (none: $WEIR_DATA_DIR/agent-state, as the image sets it, else"
                            + " ./weir-agent-state)"),
            new CommandLine.Option("heartbeat-interval", "WEIR_HEARTBEAT_INTERVAL", "10s", "DUR", "time between pings"),
            new CommandLine.Option("heartbeat-timeout", "WEIR_HEARTBEAT_TIMEOUT", "30s", "DUR", "silence that drops the connection"),
            new CommandLine.Option("backoff-initial", "WEIR_BACKOFF_INITIAL", "200ms", "DUR", "first reconnect delay's ceiling"),
            new CommandLine.Option("backoff-max", "WEIR_BACKOFF_MAX", "30s", "DUR", "largest reconnect delay"),
            new CommandLine.Option("usage-buffer", "WEIR_USAGE_BUFFER", "1h", "DUR",
                    "oldest unacknowledged usage report kept; older ones are dropped as reported gaps"),
            new CommandLine.Option("workers", "WEIR_WORKERS", "1", "N", "scheduler worker threads")));

    /** What {@code --help} prints. */
    static final String USAGE = """
            Usage: java -jar weir.jar agent --control-plane URL (--token-file FILE | --token TOKEN) [options]

            Runs a Weir agent over a QoS scheduler with no data path: it applies the node's desired
            config as the control plane pushes it, acknowledges each revision, and keeps the last good
            one in the state directory (applied again at start, before connecting). The node token
            decides the node; the agent learns the node's id from the first config it receives.

            Options:
            """ + OPTIONS.help();

    private AgentCommand() {
    }

    /** The parsed command line. */
    record Options(URI controlPlane, UUID nodeId, String token, Path stateDir, Duration heartbeatInterval,
            Duration heartbeatTimeout, Duration backoffInitial, Duration backoffMax, Duration usageBuffer, int workers,
            boolean help, Path controlPlaneCa) {
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
        } catch (CommandLine.UsageException e) {
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
        if (options.controlPlaneCa() != null) {
            builder.controlPlaneCa(options.controlPlaneCa());
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
                // Connects, disconnects and refusals QosAgent logs itself.
                .listener(new AgentListener() {
                    @Override
                    public void applied(io.weir.protocol.DesiredConfig config) {
                        LOG.log(System.Logger.Level.INFO, "applied revision {0} of node {1} ({2} volumes, {3} tenants)",
                                config.revision(), config.nodeId(), config.volumes().size(), config.tenants().size());
                    }
                })
                .build();
    }

    /** Parses {@code args} and {@code env} by {@link CommandLine}'s precedence rule. */
    static Options parse(String[] args, Map<String, String> env) throws CommandLine.UsageException {
        CommandLine.Values v = OPTIONS.parse(args, env);
        if (v.help()) {
            return new Options(null, null, null, null, null, null, null, null, null, 0, true, null);
        }
        return new Options(controlPlane(v.get("control-plane")), nodeId(v.get("node-id")), requiredToken(v),
                stateDir(v, env), v.duration("heartbeat-interval", false), v.duration("heartbeat-timeout", false),
                v.duration("backoff-initial", false), v.duration("backoff-max", false), v.duration("usage-buffer", false),
                v.integer("workers", 1), false, controlPlaneCa(v));
    }

    /**
     * {@code --state-dir}, else {@code agent-state} in the directory {@code WEIR_DATA_DIR} names
     * (the image's volume, where a data node's agent keeps it too), else {@code ./weir-agent-state}.
     */
    private static Path stateDir(CommandLine.Values v, Map<String, String> env) {
        String given = v.get("state-dir");
        String dataDir = env.get("WEIR_DATA_DIR");
        Path dir = given != null ? Path.of(given)
                : dataDir != null && !dataDir.isBlank() ? Path.of(dataDir).resolve("agent-state") : Path.of("weir-agent-state");
        return dir.normalize();
    }

    /**
     * The {@code --control-plane-ca} file, checked to exist, or null.
     *
     * @throws CommandLine.UsageException if it names no readable file
     */
    public static Path controlPlaneCa(CommandLine.Values v) throws CommandLine.UsageException {
        String file = v.get(CommandLine.CONTROL_PLANE_CA);
        if (file == null) {
            return null;
        }
        Path path = Path.of(file);
        if (!java.nio.file.Files.isReadable(path)) {
            throw new CommandLine.UsageException("--" + CommandLine.CONTROL_PLANE_CA + " names no readable file: " + file);
        }
        return path;
    }

    /** The control plane URL, checked: http(s) or ws(s), with a host. */
    public static URI controlPlane(String url) throws CommandLine.UsageException {
        if (url == null) {
            throw new CommandLine.UsageException("--control-plane is required (or WEIR_CONTROL_PLANE)");
        }
        URI controlPlane;
        try {
            controlPlane = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.UsageException("--control-plane is not a URL: " + url);
        }
        if (controlPlane.getScheme() == null || controlPlane.getHost() == null
                || !List.of("http", "https", "ws", "wss").contains(controlPlane.getScheme())) {
            throw new CommandLine.UsageException("--control-plane must be an http(s):// URL with a host: " + url);
        }
        return controlPlane;
    }

    /** The optional node id, checked; null if not given. */
    public static UUID nodeId(String id) throws CommandLine.UsageException {
        if (id == null) {
            return null;
        }
        try {
            return UUID.fromString(id.strip());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.UsageException("--node-id is not a UUID: " + id);
        }
    }

    /** The node token by the precedence rule; a usage error if there is none. */
    public static String requiredToken(CommandLine.Values v) throws CommandLine.UsageException {
        String token = v.token();
        if (token == null) {
            throw new CommandLine.UsageException("a node token is required: --token-file FILE or --token TOKEN"
                    + " (or WEIR_TOKEN_FILE / WEIR_TOKEN)");
        }
        return token;
    }
}
