package io.weir.datanode;

import io.weir.agent.AgentListener;
import io.weir.agent.QosAgent;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code java -jar weir.jar datanode [options]}: runs a {@link DataNode} until stopped.
 *
 * <p>Every option can also be given as an environment variable (for containers); the option wins.
 * Run with {@code --help} for the list and the defaults.
 */
public final class DataNodeCommand {

    /** Option name, environment variable, default, help. */
    private record Opt(String name, String env, String def, String help) {
    }

    private static final Opt[] OPTIONS = {
        new Opt("control-plane", "WEIR_CONTROL_PLANE", null, "control plane URL, e.g. http://cp:8080 (the agent connects to it)"),
        new Opt("token", "WEIR_TOKEN", null, "node token for the control plane"),
        new Opt("token-file", "WEIR_TOKEN_FILE", null, "file holding the node token (instead of --token)"),
        new Opt("node-id", "WEIR_NODE_ID", null,
                "optional check: the node the token must belong to (the token alone decides the node)"),
        new Opt("state-dir", "WEIR_STATE_DIR", null,
                "where the agent keeps the last applied config (default: <data-dir>/agent-state)"),
        new Opt("data-dir", "WEIR_DATA_DIR", "./weir-data", "directory of the volume files"),
        new Opt("listen", "WEIR_LISTEN", "127.0.0.1:10809", "NBD listen address host:port (port 0: any free port)"),
        new Opt("workers", "WEIR_WORKERS", String.valueOf(Runtime.getRuntime().availableProcessors()),
                "scheduler worker threads (default: available processors)"),
        new Opt("config-file", "WEIR_CONFIG_FILE", null,
                "a DesiredConfig JSON file to serve, re-read when it changes (without a control plane)"),
        new Opt("scrub-period", "WEIR_SCRUB_PERIOD", "PT1H", "how often a scrub pass starts (ISO-8601 duration; PT0S: continuously)"),
        new Opt("qos", "WEIR_QOS", "on", "on, or off: requests bypass the scheduler (for measuring what QoS costs)"),
        new Opt("write-stall-timeout", "WEIR_WRITE_STALL_TIMEOUT", "PT30S",
                "disconnect a client that leaves its replies unread this long (ISO-8601 duration)"),
        new Opt("handshake-timeout", "WEIR_HANDSHAKE_TIMEOUT", "PT30S",
                "disconnect a client that has not finished its NBD handshake this long after connecting (ISO-8601 duration)"),
        new Opt("drain-timeout", "WEIR_DRAIN_TIMEOUT", "PT30S",
                "on stop, how long open connections may take to answer what they have in flight (ISO-8601 duration)"),
        new Opt("max-connections", "WEIR_MAX_CONNECTIONS", "1024",
                "open NBD connections beyond which new ones are refused (closed before the greeting)"),
    };

    private DataNodeCommand() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err, System.getenv());
        if (code != 0) {
            System.exit(code);
        }
    }

    /** Parses, starts and (unless it fails) blocks until the JVM stops. Returns an exit code. */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        Map<String, String> values;
        try {
            values = parse(args, env);
        } catch (IllegalArgumentException e) {
            err.println("weir datanode: " + e.getMessage());
            err.println("Try 'weir datanode --help'.");
            return 2;
        }
        if (values == null) {
            usage(out);
            return 0;
        }
        try {
            Running running = start(values, err);
            DataNode node = running.node();
            CountDownLatch stop = new CountDownLatch(1);
            Duration drain = duration("drain-timeout", values.get("drain-timeout"));
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                running.stop(drain, err);
                stop.countDown();
            }, "weir-datanode-shutdown"));
            out.println("weir datanode: serving NBD on " + node.listenAddress().getHostString() + ":"
                    + node.listenAddress().getPort() + ", data in " + values.get("data-dir"));
            out.flush();
            stop.await();
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("weir datanode: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("weir datanode: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    /** A started node, its agent (or null) and the command's helper threads (config file, status). */
    record Running(DataNode node, QosAgent agent, List<Thread> helpers) {
        /** Stops the helpers, then {@link DataNodeCommand#stop} (the one orderly stop). */
        void stop(Duration drainTimeout, PrintStream err) {
            helpers.forEach(Thread::interrupt);
            DataNodeCommand.stop(node, agent, drainTimeout, err);
        }
    }

    static Running start(Map<String, String> v, PrintStream err) throws IOException {
        int workers;
        try {
            workers = Integer.parseInt(v.get("workers"));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--workers must be a number: " + v.get("workers"));
        }
        DataNode node = DataNode.builder().dataDir(Path.of(v.get("data-dir"))).listen(address(v.get("listen")))
                .workers(workers).qos(!"off".equals(v.get("qos"))).scrubPeriod(duration("scrub-period", v.get("scrub-period")))
                .writeStallTimeout(duration("write-stall-timeout", v.get("write-stall-timeout")))
                .handshakeTimeout(duration("handshake-timeout", v.get("handshake-timeout")))
                .maxConnections(number("max-connections", v.get("max-connections"))).build();
        List<Thread> helpers = new ArrayList<>();
        QosAgent agent = null;
        try {
            String configFile = v.get("config-file");
            if (configFile != null) {
                helpers.add(watch(node, Path.of(configFile), err));
            }
            if (v.get("control-plane") != null) {
                agent = startAgent(node, v, err, helpers);
            }
            return new Running(node, agent, helpers);
        } catch (IOException | RuntimeException e) {
            helpers.forEach(Thread::interrupt);
            if (agent != null) {
                agent.close();
            }
            node.close();
            throw e;
        }
    }

    /**
     * Embeds the agent: it applies each snapshot to the node's executor, then the node opens,
     * grows and closes exports; it sends the node's status (listen address, exports, clients) on
     * every connect and whenever it changes. With the control plane unreachable, the agent starts
     * from its cached snapshot, so the node serves at once.
     */
    private static QosAgent startAgent(DataNode node, Map<String, String> v, PrintStream err, List<Thread> helpers)
            throws IOException {
        Path stateDir = v.get("state-dir") != null ? Path.of(v.get("state-dir"))
                : Path.of(v.get("data-dir")).resolve("agent-state");
        QosAgent.Builder builder = QosAgent.builder();
        if (v.get("node-id") != null) {
            builder.nodeId(java.util.UUID.fromString(v.get("node-id").strip()));
        }
        QosAgent agent = agent(node, builder.controlPlane(java.net.URI.create(v.get("control-plane")))
                .token(v.get("token")).stateDir(stateDir), err);
        agent.start();
        Thread reporter = new Thread(() -> {
            AgentMessage.NodeStatus last = null;
            while (true) {
                try {
                    Thread.sleep(1000);
                    AgentMessage.NodeStatus now = status(node);
                    if (!now.equals(last)) {
                        agent.reportStatus(now);
                        last = now;
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    err.println("weir datanode: status not sent: " + e.getMessage());
                }
            }
        }, "weir-status");
        reporter.setDaemon(true);
        reporter.start();
        helpers.add(reporter);
        return agent;
    }

    /**
     * Wires an agent to the node (not started): the agent applies each snapshot to the node's
     * executor, the node checks it first ({@link DataNode#validate}) and applies its exports
     * ({@link AgentListener#applying}: exports that cannot be applied refuse the snapshot, which
     * the agent then nacks with the reason, and the previous one stays in force), and the agent
     * sends the node's status on every connect. {@code builder} brings the control
     * plane, the token and the state directory.
     */
    static QosAgent agent(DataNode node, QosAgent.Builder builder, PrintStream err) {
        return builder.executor(node.executor()).check(node::validate).status(() -> status(node))
                .listener(new AgentListener() {
                    @Override
                    public void applying(DesiredConfig config) {
                        try {
                            node.applyExports(config);
                        } catch (IOException | RuntimeException e) {
                            err.println("weir datanode: exports of revision " + config.revision() + " not applied: " + e);
                            throw e instanceof RuntimeException r ? r : new UncheckedIOException("exports not applied: " + e, (IOException) e);
                        }
                    }
                }).build();
    }

    /**
     * The one orderly stop of a data node and its agent (null without one), in this order: new
     * clients are refused and open connections answer what they have in flight and close (up to
     * {@code drainTimeout}; the rest are cut); then the agent closes its connection to the control
     * plane (no config is applied to a node being stopped); then the node stops its threads and
     * flushes and closes its files.
     */
    static void stop(DataNode node, QosAgent agent, Duration drainTimeout, PrintStream err) {
        try {
            if (!node.drain(drainTimeout)) {
                err.println("weir datanode: " + node.connectionCount() + " connections still open after " + drainTimeout
                        + "; closing them");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (agent != null) {
            agent.close();
        }
        node.close();
    }

    static AgentMessage.NodeStatus status(DataNode node) {
        InetSocketAddress a = node.listenAddress();
        return new AgentMessage.NodeStatus(a.getHostString() + ":" + a.getPort(), node.exports().stream()
                .map(e -> new AgentMessage.Export(e.volumeId(), e.name(), e.sizeBytes(), e.clients())).toList());
    }

    /** Applies the config file now and again whenever its modification time changes. */
    private static Thread watch(DataNode node, Path file, PrintStream err) throws IOException {
        JsonMapper json = JsonMapper.builder().build();
        node.apply(json.readValue(file.toFile(), DesiredConfig.class));
        FileTime[] seen = {Files.getLastModifiedTime(file)};
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(500);
                    FileTime now = Files.getLastModifiedTime(file);
                    if (!now.equals(seen[0])) {
                        seen[0] = now;
                        node.apply(json.readValue(file.toFile(), DesiredConfig.class));
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (IOException | RuntimeException e) {
                    err.println("weir datanode: config file " + file + " not applied: " + e.getMessage());
                }
            }
        }, "weir-config-file");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** The settings, or null for --help. */
    static Map<String, String> parse(String[] args, Map<String, String> env) {
        Map<String, String> values = new LinkedHashMap<>();
        for (Opt o : OPTIONS) {
            String e = env.get(o.env());
            values.put(o.name(), e != null && !e.isEmpty() ? e : o.def());
        }
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                return null;
            }
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'");
            }
            String name = a.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (!values.containsKey(name)) {
                throw new IllegalArgumentException("unknown option '--" + name + "'");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("option '--" + name + "' needs a value");
                }
                value = args[++i];
            }
            values.put(name, value);
        }
        String tokenFile = values.get("token-file");
        if (values.get("token") == null && tokenFile != null) {
            try {
                values.put("token", Files.readString(Path.of(tokenFile)).trim());
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read --token-file " + tokenFile + ": " + e.getMessage());
            }
        }
        if (values.get("control-plane") != null && values.get("token") == null) {
            throw new IllegalArgumentException("--control-plane needs --token or --token-file");
        }
        String nodeId = values.get("node-id");
        if (nodeId != null) {
            try {
                java.util.UUID.fromString(nodeId.strip());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--node-id is not a UUID: " + nodeId);
            }
        }
        if (values.get("control-plane") == null && values.get("config-file") == null) {
            throw new IllegalArgumentException("give --control-plane (with a token) or --config-file");
        }
        return values;
    }

    static void usage(PrintStream out) {
        out.println("Usage: java -jar weir.jar datanode [options]");
        out.println();
        out.println("Serves the volumes placed on this node over NBD (exports named tenant/volume), every request");
        out.println("scheduled by Weir's QoS scheduler. Each option may also be set by the environment variable shown.");
        out.println();
        for (Opt o : OPTIONS) {
            out.printf("  --%-22s %s%n", o.name() + " <value>", o.help());
            out.printf("  %-24s env %s, default: %s%n", "", o.env(), o.def() == null ? "(none)" : o.def());
        }
        out.println("  --help                   this text");
    }

    static InetSocketAddress address(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("--listen must be host:port: " + hostPort);
        }
        try {
            String host = hostPort.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return new InetSocketAddress(host, Integer.parseInt(hostPort.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--listen must be host:port: " + hostPort);
        }
    }

    private static int number(String name, String value) {
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a number: " + value);
        }
    }

    private static Duration duration(String name, String value) {
        try {
            return Duration.parse(value);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("--" + name + " must be an ISO-8601 duration such as PT30S: " + value);
        }
    }
}
