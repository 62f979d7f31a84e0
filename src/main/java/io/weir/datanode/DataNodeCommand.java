package io.weir.datanode;

import io.weir.agent.AgentCommand;
import io.weir.agent.AgentListener;
import io.weir.agent.CommandLine;
import io.weir.agent.CommandLine.Option;
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
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code java -jar weir.jar datanode [options]}: runs a {@link DataNode} until stopped.
 *
 * <p>Options are parsed by the agent's {@link CommandLine}, with the same precedence (option,
 * environment variable, token file, default) and duration syntax ({@code 500ms}, {@code 30s},
 * {@code PT30S}) as {@code agent}. Run with {@code --help} for the list and the defaults.
 */
public final class DataNodeCommand {

    private static final System.Logger LOG = System.getLogger(DataNodeCommand.class.getName());

    /** The replication listener's port unless {@code --replication-listen} says otherwise. */
    static final int DEFAULT_REPLICATION_PORT = 10810;

    /** The options, parsed by the agent's {@link CommandLine}: the same precedence and durations as {@code agent}. */
    static final CommandLine OPTIONS = new CommandLine(List.of(
        new Option("control-plane", "WEIR_CONTROL_PLANE", null, "URL", "control plane URL, e.g. http://cp:8080 (the agent connects to it)"),
        new Option(CommandLine.CONTROL_PLANE_CA, "WEIR_CONTROL_PLANE_CA", null, "FILE",
                "cluster CA certificate (PEM) an https:// control plane must chain to (none: the JDK's trust store)"),
        new Option(CommandLine.TOKEN, "WEIR_TOKEN", null, "TOKEN", "node token for the control plane (visible in ps; prefer --token-file)"),
        new Option(CommandLine.TOKEN_FILE, "WEIR_TOKEN_FILE", null, "FILE", "file holding the node token"),
        new Option("node-id", "WEIR_NODE_ID", null, "UUID",
                "optional check: the node the token must belong to (the token alone decides the node)"),
        new Option("state-dir", "WEIR_STATE_DIR", null, "DIR",
                "where the agent keeps the last applied config (none: <data-dir>/agent-state)"),
        new Option("data-dir", "WEIR_DATA_DIR", "./weir-data", "DIR", "directory of the volume files; one node's (locked while it runs)"),
        new Option("listen", "WEIR_LISTEN", "127.0.0.1:10809", "HOST:PORT", "NBD listen address (port 0: any free port)"),
        new Option("replication-listen", "WEIR_REPLICATION_LISTEN", null, "HOST:PORT",
                "where primaries of replicated volumes reach this node's copies (default: the --listen host, port "
                        + DEFAULT_REPLICATION_PORT + ", or any free port when --listen's is 0; off: none)"),
        new Option("workers", "WEIR_WORKERS", String.valueOf(Runtime.getRuntime().availableProcessors()), "N",
                "scheduler worker threads (default: available processors)"),
        new Option("config-file", "WEIR_CONFIG_FILE", null, "FILE",
                "a DesiredConfig JSON file to serve, re-read when it changes (instead of a control plane, not with one)"),
        new Option("scrub-period", "WEIR_SCRUB_PERIOD", "1h", "DUR", "how often a scrub pass starts (0s: continuously)"),
        new Option("qos", "WEIR_QOS", "on", "on|off", "off: requests bypass the scheduler (for measuring what QoS costs)"),
        new Option("tls", "WEIR_TLS", "on", "on|off",
                "on: NBD clients must use TLS with a certificate from the control plane; off: TLS offered, not required"
                        + " (benchmarks). A node from --config-file has no certificate and serves in clear"),
        new Option("anticipation", "WEIR_ANTICIPATION", "on", "on|off",
                "on: the scheduler waits up to 1 ms for a busy volume whose queue ran dry, so weights hold when the"
                        + " backlog waits outside the node; off: purely work-conserving"),
        new Option("write-stall-timeout", "WEIR_WRITE_STALL_TIMEOUT", NbdServer.Limits.DEFAULT_WRITE_STALL_SECONDS + "s", "DUR",
                "disconnect a client that leaves its replies unread this long"),
        new Option("handshake-timeout", "WEIR_HANDSHAKE_TIMEOUT", NbdServer.Limits.DEFAULT_HANDSHAKE_SECONDS + "s", "DUR",
                "disconnect a client that has not finished its NBD handshake this long after connecting"),
        new Option("max-connections", "WEIR_MAX_CONNECTIONS", String.valueOf(NbdServer.Limits.DEFAULT_MAX_CONNECTIONS), "N",
                "open NBD connections beyond which new ones are refused (closed before the greeting)"),
        new Option("max-connections-per-source", "WEIR_MAX_CONNECTIONS_PER_SOURCE",
                String.valueOf(NbdServer.Limits.DEFAULT_MAX_CONNECTIONS_PER_SOURCE), "N",
                "open NBD connections from one client address beyond which new ones from it are refused"),
        new Option("idle-evict-after", "WEIR_IDLE_EVICT_AFTER", NbdServer.Limits.DEFAULT_IDLE_EVICT_SECONDS + "s", "DUR",
                "at a connection cap, a connection idle this long is closed to let a new one in"),
        new Option("request-timeout", "WEIR_REQUEST_TIMEOUT", NbdServer.Limits.DEFAULT_REQUEST_SECONDS + "s", "DUR",
                "disconnect a client that takes longer to send a request (header, then write payload) once begun"),
        new Option("buffer-memory", "WEIR_BUFFER_MEMORY", null, "MiB",
                "direct memory requests' buffers may hold across the node; beyond it clients' reads and writes wait"
                        + " (none: " + BufferPool.DEFAULT_BUDGET + ")"),
        new Option("drain-timeout", "WEIR_DRAIN_TIMEOUT", "30s", "DUR",
                "on stop, how long open connections may take to answer what they have in flight")));

    private DataNodeCommand() {
    }

    /** The exit status of a node that ran out of heap memory. */
    static final int HEAP_EXHAUSTED_STATUS = 3;

    public static void main(String[] args) {
        OutOfMemory.onHeapExhausted(haltOnHeapExhausted(System.err, Runtime.getRuntime()::halt));
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            OutOfMemory.checkFatal(e);
            System.err.print("Exception in thread \"" + t.getName() + "\" ");
            e.printStackTrace();
        });
        int code = run(args, System.out, System.err, System.getenv());
        if (code != 0) {
            System.exit(code);
        }
    }

    /**
     * The command's answer to a heap {@code OutOfMemoryError} (see {@link OutOfMemory}): says why
     * on {@code err} and halts with {@link #HEAP_EXHAUSTED_STATUS}, without the shutdown hook's
     * drain, which could not run without heap either. A supervisor (Kubernetes, compose) restarts
     * the node; one that stayed up would keep its port open and serve nobody.
     */
    static java.util.function.Consumer<OutOfMemoryError> haltOnHeapExhausted(PrintStream err,
            java.util.function.IntConsumer halt) {
        return e -> {
            try {
                err.println("weir datanode: FATAL: out of heap memory (" + e.getMessage() + "); exiting with status "
                        + HEAP_EXHAUSTED_STATUS + " to be restarted. Raise -Xmx or the container's memory limit.");
                err.flush();
            } catch (Throwable ignored) {
                // halting anyway
            } finally {
                halt.accept(HEAP_EXHAUSTED_STATUS);
            }
        };
    }

    /** Parses, starts and (unless it fails) blocks until the JVM stops. Returns an exit code. */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        CommandLine.Values values;
        Duration drain;
        try {
            values = parse(args, env);
            drain = values.help() ? null : values.duration("drain-timeout", false);
        } catch (CommandLine.UsageException e) {
            err.println("weir datanode: " + e.getMessage());
            err.println("Try 'weir datanode --help'.");
            return 2;
        }
        if (values.help()) {
            usage(out);
            return 0;
        }
        try {
            Running running = start(values, err);
            DataNode node = running.node();
            CountDownLatch stop = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                running.stop(drain, err);
                stop.countDown();
            }, "weir-datanode-shutdown"));
            LOG.log(System.Logger.Level.INFO, "serving NBD on {0}:{1,number,#}, data in {2}",
                    node.listenAddress().getHostString(), node.listenAddress().getPort(), values.get("data-dir"));
            if (node.replicationAddress() != null) {
                LOG.log(System.Logger.Level.INFO, "copies of replicated volumes reachable on {0}", node.replicationAddress());
            }
            stop.await();
            return 0;
        } catch (CommandLine.UsageException | IllegalArgumentException e) {
            err.println("weir datanode: " + e.getMessage());
            return 2;
        } catch (JacksonException e) {
            // only the config file is read as JSON before the node serves
            err.println("weir datanode: config file " + values.get("config-file") + " is not a valid DesiredConfig: "
                    + e.getOriginalMessage());
            return 2;
        } catch (IOException e) {
            err.println("weir datanode: " + e.getMessage());
            return 1;
        } catch (RuntimeException e) { // a bug: one line, not a trace on the console (the log has it)
            LOG.log(System.Logger.Level.ERROR, "the node did not start", e);
            err.println("weir datanode: the node did not start: " + e);
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

    static Running start(CommandLine.Values v, PrintStream err) throws IOException, CommandLine.UsageException {
        if (!List.of("on", "off").contains(v.get("qos"))) {
            throw new CommandLine.UsageException("--qos must be on or off: " + v.get("qos"));
        }
        if (!List.of("on", "off").contains(v.get("anticipation"))) {
            throw new CommandLine.UsageException("--anticipation must be on or off: " + v.get("anticipation"));
        }
        if (!List.of("on", "off").contains(v.get("tls"))) {
            throw new CommandLine.UsageException("--tls must be on or off: " + v.get("tls"));
        }
        // the control plane's CA issues the node's certificate; a config file brings none
        boolean tlsRequired = "on".equals(v.get("tls")) && v.get("control-plane") != null;
        DataNode.Builder builder = DataNode.builder().dataDir(Path.of(v.get("data-dir"))).listen(address(v.get("listen")))
                .workers(v.integer("workers", 1)).qos(!"off".equals(v.get("qos"))).anticipation("on".equals(v.get("anticipation")))
                .tlsRequired(tlsRequired)
                .scrubPeriod(v.duration("scrub-period", true))
                .writeStallTimeout(v.duration("write-stall-timeout", false))
                .handshakeTimeout(v.duration("handshake-timeout", false))
                .maxConnections(v.integer("max-connections", 1))
                .maxConnectionsPerSource(v.integer("max-connections-per-source", 1))
                .idleEvictAfter(v.duration("idle-evict-after", true))
                .requestTimeout(v.duration("request-timeout", false))
                .configFileOnly(v.get("control-plane") == null);
        if (v.get("buffer-memory") != null) {
            builder.bufferBudget((long) v.integer("buffer-memory", 1) << 20);
        }
        builder.replicationListen(replicationListen(v.get("replication-listen"), address(v.get("listen"))));
        String token = v.token();
        DataNode node;
        try {
            node = builder.build();
        } catch (DataNode.ListenException e) {
            throw new IOException(e.getMessage() + (e.listener() == DataNode.ListenException.Listener.NBD ? " (--listen)"
                    : v.get("replication-listen") != null ? " (--replication-listen)"
                    : " (--replication-listen, by default port " + DEFAULT_REPLICATION_PORT + " on --listen's host)"), e);
        }
        List<Thread> helpers = new ArrayList<>();
        QosAgent agent = null;
        try {
            String configFile = v.get("config-file");
            if (configFile != null) {
                helpers.add(watch(node, Path.of(configFile), err));
            }
            if (v.get("control-plane") != null) {
                agent = startAgent(node, v, token, err, helpers);
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
    private static QosAgent startAgent(DataNode node, CommandLine.Values v, String token, PrintStream err,
            List<Thread> helpers) throws IOException, CommandLine.UsageException {
        Path stateDir = v.get("state-dir") != null ? Path.of(v.get("state-dir"))
                : Path.of(v.get("data-dir")).resolve("agent-state");
        QosAgent.Builder builder = QosAgent.builder();
        java.util.UUID nodeId = AgentCommand.nodeId(v.get("node-id"));
        if (nodeId != null) {
            builder.nodeId(nodeId);
        }
        java.nio.file.Path ca = AgentCommand.controlPlaneCa(v);
        if (ca != null) {
            builder.controlPlaneCa(ca);
        }
        // The node's NBD server certificate: its key made here, signed by the cluster CA, renewed by the agent.
        builder.serverCertificates(true);
        QosAgent agent = agent(node, builder.controlPlane(AgentCommand.controlPlane(v.get("control-plane")))
                .token(token).stateDir(stateDir), err);
        agent.start(); // hands the node the certificate kept in the state directory, then the cached config
        helpers.add(statusReporter(node, agent::reportStatus, STATUS_RESEND));
        return agent;
    }

    /**
     * How often a primary waiting for the control plane to echo its report sends the report again
     * while nothing in it changes: the control plane may have failed to store the first one.
     */
    static final Duration STATUS_RESEND = Duration.ofSeconds(5);

    /**
     * Starts the daemon thread that checks the node's status (exports, clients, used bytes, its
     * replicated volumes' copies) every second, and at once when a copy leaves or joins an in-sync
     * set (a primary may be holding writes until the control plane echoes it), and sends it
     * through {@code send} when it changed, or when {@code resendEvery} has passed since it was
     * last sent while a primary waits for the echo of its report
     * ({@link DataNode#replicationAwaitingEcho}); interrupt it to stop it.
     */
    static Thread statusReporter(DataNode node, java.util.function.Consumer<AgentMessage.NodeStatus> send,
            Duration resendEvery) {
        Duration check = resendEvery.compareTo(Duration.ofSeconds(1)) < 0 ? resendEvery : Duration.ofSeconds(1);
        Thread reporter = new Thread(() -> {
            AgentMessage.NodeStatus last = null;
            long sentAt = 0;
            long seen = 0;
            while (true) {
                try {
                    seen = node.awaitReplicationChange(seen, check);
                    AgentMessage.NodeStatus now = status(node);
                    long at = System.nanoTime();
                    if (!now.equals(last)
                            || at - sentAt >= resendEvery.toNanos() && node.replicationAwaitingEcho()) {
                        send.accept(now);
                        last = now;
                        sentAt = at;
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "status not sent: {0}", e.getMessage());
                }
            }
        }, "weir-status");
        reporter.setDaemon(true);
        reporter.start();
        return reporter;
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
                            LOG.log(System.Logger.Level.WARNING, "exports of revision {0} not applied: {1}", config.revision(), e);
                            throw e instanceof RuntimeException r ? r : new UncheckedIOException("exports not applied: " + e, (IOException) e);
                        }
                    }

                    @Override
                    public void rejected(DesiredConfig config, String reason) {
                        node.refused(config); // what it revokes takes effect all the same
                    }

                    @Override
                    public void serverCertificate(io.weir.agent.ServerCertificate certificate) {
                        node.serverCertificate(certificate); // NBD clients may negotiate TLS with it
                    }
                }).build();
    }

    /**
     * The one orderly stop of a data node and its agent (null without one), in this order: new
     * clients are refused and open connections answer what they have in flight and close (up to
     * {@code drainTimeout}; the rest are cut); then the agent reports the usage since its last
     * report (the drain's included; it goes out ahead of the close) and closes its connection to
     * the control plane (no config is applied to a node being stopped); then the node stops its
     * threads and flushes and closes its files.
     */
    static void stop(DataNode node, QosAgent agent, Duration drainTimeout, PrintStream err) {
        try {
            if (!node.drain(drainTimeout)) {
                LOG.log(System.Logger.Level.WARNING, "{0} connections still open after {1}; closing them",
                        node.connectionCount(), drainTimeout);
            }
            awaitCounted(node, COUNTED_TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (agent != null) {
            try {
                agent.reportUsageNow();
            } catch (RuntimeException e) { // not started: nothing counted to report
                LOG.log(System.Logger.Level.DEBUG, "no last usage report: " + e);
            }
            agent.close();
        }
        node.close();
    }

    /** Longest a stop waits for the workers to count the last requests done ({@link #awaitCounted}). */
    static final Duration COUNTED_TIMEOUT = Duration.ofSeconds(5);

    /**
     * Waits, at most {@code max}, until no volume has a request queued or in flight: a worker
     * counts a request done when it takes its next one, after the reply went out, so the client
     * may have its last reply, and the drain be over, before the request is in the statistics the
     * last usage report reads.
     */
    static void awaitCounted(DataNode node, Duration max) throws InterruptedException {
        long until = System.nanoTime() + max.toNanos();
        while (node.executor().queueDepths().values().stream().anyMatch(d -> d > 0) && System.nanoTime() - until < 0) {
            Thread.sleep(1);
        }
    }

    static AgentMessage.NodeStatus status(DataNode node) {
        InetSocketAddress a = node.listenAddress();
        java.util.Map<java.util.UUID, Long> used = node.allocatedBytes();
        return new AgentMessage.NodeStatus(a.getHostString() + ":" + a.getPort(), node.exports().stream()
                .map(e -> new AgentMessage.Export(e.volumeId(), e.name(), e.sizeBytes(), e.clients(), used.get(e.volumeId())))
                .toList(), node.replicationAddress(), node.replicationStatus());
    }

    /** Applies the config file now and again whenever its modification time changes. */
    private static Thread watch(DataNode node, Path file, PrintStream err) throws IOException {
        JsonMapper json = DesiredConfig.FILE_JSON; // strict: a misspelt member is an error naming it
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
                    LOG.log(System.Logger.Level.WARNING, "config file {0} not applied: {1}", file, e.getMessage());
                }
            }
        }, "weir-config-file");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * The settings by the precedence rule of {@link CommandLine}, checked: a control plane needs a
     * token, a node id is a UUID, and there is a control plane or a config file, not both.
     */
    static CommandLine.Values parse(String[] args, Map<String, String> env) throws CommandLine.UsageException {
        CommandLine.Values v = OPTIONS.parse(args, env);
        if (v.help()) {
            return v;
        }
        if (v.get("control-plane") != null) {
            AgentCommand.controlPlane(v.get("control-plane"));
            if (v.token() == null) {
                throw new CommandLine.UsageException("--control-plane needs --token or --token-file");
            }
        }
        AgentCommand.nodeId(v.get("node-id"));
        if (v.get("control-plane") == null && v.get("config-file") == null) {
            throw new CommandLine.UsageException("give --control-plane (with a token) or --config-file");
        }
        if (v.get("control-plane") != null && v.get("config-file") != null) {
            // the file's config would undo the control plane's, and the replication's restart check needs the latter's
            throw new CommandLine.UsageException("give --control-plane or --config-file, not both (set by an option or"
                    + " by WEIR_CONTROL_PLANE and WEIR_CONFIG_FILE)");
        }
        return v;
    }

    static void usage(PrintStream out) {
        out.println("Usage: java -jar weir.jar datanode (--control-plane URL --token-file FILE | --config-file FILE) [options]");
        out.println();
        out.println("Serves the volumes placed on this node over NBD (exports named tenant/volume), every request");
        out.println("scheduled by Weir's QoS scheduler.");
        out.println();
        out.println("Options:");
        out.print(OPTIONS.help());
    }

    /** The replication listener: {@code option} (null: beside {@code nbd}; "off": none). */
    static InetSocketAddress replicationListen(String option, InetSocketAddress nbd) {
        if ("off".equals(option)) {
            return null;
        }
        if (option == null) {
            return new InetSocketAddress(nbd.getAddress(), nbd.getPort() == 0 ? 0 : DEFAULT_REPLICATION_PORT);
        }
        return address(option, "--replication-listen");
    }

    static InetSocketAddress address(String hostPort) {
        return address(hostPort, "--listen");
    }

    private static InetSocketAddress address(String hostPort, String option) {
        InetSocketAddress a;
        try {
            a = HostPort.parse(hostPort);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " must be host:port: " + hostPort);
        }
        if (a.isUnresolved()) {
            throw new IllegalArgumentException(option + ": unknown host '" + a.getHostString() + "'");
        }
        return a;
    }

}
