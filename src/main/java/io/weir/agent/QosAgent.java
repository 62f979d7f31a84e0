package io.weir.agent;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.protocol.ConfigDigest;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.ProtocolException;
import io.weir.protocol.UsageReport;
import io.weir.scheduler.QosExecutor;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Clock;
import java.time.Duration;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The agent of a data node: keeps a {@link QosExecutor} enforcing the node's desired config as
 * the control plane publishes it, and keeps enforcing the last good one while the control plane
 * is away. Its manual (what it does, usage reports, TLS, which node, lifecycle, threads, a lost
 * connection, an example of embedding it) is the package's: {@code io.weir.agent}'s
 * {@code package-info}.
 *
 * <p>Implementation notes: every field below marked "event thread" is read and written only by
 * tasks of {@link #events}; {@link #state()} reads volatile copies. A connection's callbacks carry
 * the {@link AgentConnection} they belong to, and a callback of a connection that is no longer
 * {@link #current} is ignored, so a late event of a dropped socket cannot disturb its successor.
 * JDK WebSockets allow one outstanding send, so all sends of a connection are chained.
 */
public final class QosAgent implements AutoCloseable {

    /** Default time between two heartbeat pings. */
    public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(10);

    /** How long after a server certificate could not be had the agent asks for one again. */
    static final Duration DEFAULT_CERTIFICATE_RETRY = Duration.ofMinutes(10);

    /** Default silence after which a connection is taken as half-open and dropped. */
    public static final Duration DEFAULT_HEARTBEAT_TIMEOUT = Duration.ofSeconds(30);

    /** Default ceiling of the first reconnect delay. */
    public static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofMillis(200);

    /** Default ceiling that no reconnect delay exceeds. */
    public static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(30);

    /**
     * Default time a connection must have been up, with contact (a message or a pong) after it,
     * before the reconnect backoff starts over.
     */
    public static final Duration DEFAULT_BACKOFF_RESET_AFTER = Duration.ofSeconds(30);

    /** Default limit of the WebSocket's opening handshake. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** Path of the control plane's agent endpoint, below the control-plane URL. */
    public static final String CONNECT_PATH = "/api/v1/agent/connect";

    /** The version this agent reports in its hello. */
    public static final String AGENT_VERSION = "0.1.0";

    /** How long {@link #close()} waits for the close handshake and the event thread. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private static final System.Logger LOG = System.getLogger(QosAgent.class.getName());

    private final URI endpoint;
    private final String token;
    private final QosExecutor executor;
    private final AgentListener listener;
    private final Duration heartbeatInterval;
    private final Duration heartbeatTimeout;
    private final Duration connectTimeout;
    private final Duration backoffResetAfter;
    final Clock clock;
    private final StateStore store;
    private final HttpClient http;
    private final ScheduledExecutorService scheduler;
    private final boolean ownsScheduler;
    final SerialExecutor events;
    private final Backoff backoff;
    private final Supplier<AgentMessage.NodeStatus> statusSupplier;
    private final Duration usageMaxAge;
    private final int usageMaxReports;
    /** The config in force and its changes. */
    private final ConfigApplier applier;
    /** The node's server certificate and its renewal. */
    private final CertificateRenewal renewal;
    /** Made by {@link #start()}; null before. */
    private volatile UsageReporter usage;
    /** event thread */
    private ScheduledFuture<?> usageTicks;

    // event thread
    AgentConnection current;
    private ScheduledFuture<?> heartbeat;
    private boolean started;
    private boolean closed;
    private int generation;

    private volatile boolean connected;
    private volatile String lastError;
    /** {@link Clock#millis()} of the last message or pong; 0 if none yet. */
    volatile long lastContactMillis;

    private QosAgent(Builder b) {
        this.endpoint = endpoint(b.controlPlane);
        this.token = b.token;
        this.executor = b.executor;
        this.listener = b.listener;
        this.heartbeatInterval = b.heartbeatInterval;
        this.heartbeatTimeout = b.heartbeatTimeout;
        this.connectTimeout = b.connectTimeout;
        this.backoffResetAfter = b.backoffResetAfter;
        this.clock = b.clock;
        this.store = new StateStore(b.stateDir, b.clock);
        this.http = b.httpClient != null ? b.httpClient : httpClient(b);
        this.renewal = new CertificateRenewal(this,
                b.serverCertificates ? ServerCertificates.open(b.stateDir, b.clock) : null, b.certificateRetry, b.listener);
        if (b.scheduler != null) {
            this.scheduler = b.scheduler;
            this.ownsScheduler = false;
        } else {
            ScheduledThreadPoolExecutor own = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "weir-agent");
                t.setDaemon(true);
                return t;
            });
            own.setRemoveOnCancelPolicy(true);
            this.scheduler = own;
            this.ownsScheduler = true;
        }
        this.events = new SerialExecutor(scheduler);
        this.backoff = new Backoff(b.backoffInitial, b.backoffMax, b.random);
        this.statusSupplier = b.statusSupplier;
        this.usageMaxAge = b.usageMaxAge;
        this.usageMaxReports = b.usageMaxReports;
        this.applier = new ConfigApplier(this, b.executor, b.listener, store, b.check, b.nodeId);
    }

    private static HttpClient httpClient(Builder b) {
        HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(b.connectTimeout);
        if (b.controlPlaneCa != null) {
            try {
                http.sslContext(ControlPlaneTrust.sslContext(b.controlPlaneCa));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot read the control plane's CA " + b.controlPlaneCa + ": "
                        + e.getMessage(), e);
            }
        }
        return http.build();
    }

    /** Returns a builder; the control plane, token, state directory and executor are required. */
    public static Builder builder() {
        return new Builder();
    }

    private static URI endpoint(URI controlPlane) {
        String scheme = switch (controlPlane.getScheme()) {
            case "http", "ws" -> "ws";
            case "https", "wss" -> "wss";
            default -> throw new IllegalArgumentException("control-plane URL must be http(s) or ws(s): " + controlPlane);
        };
        String path = controlPlane.getPath() == null ? "" : controlPlane.getPath();
        if (!path.endsWith(CONNECT_PATH)) {
            path = (path.endsWith("/") ? path.substring(0, path.length() - 1) : path) + CONNECT_PATH;
        }
        return URI.create(scheme + "://" + controlPlane.getRawAuthority() + path);
    }

    /**
     * Applies the cached snapshot from the state directory, if there is a good one, and then
     * starts connecting in the background. Returns once the cached snapshot is in force (or there
     * is none); never waits for the control plane.
     *
     * @throws IllegalStateException if the agent was started or closed before
     * @throws IOException if the state directory cannot be created or read
     */
    public void start() throws IOException {
        CompletableFuture<Void> done = new CompletableFuture<>();
        events.execute(() -> {
            try {
                if (started || closed) {
                    throw new IllegalStateException(closed ? "agent is closed" : "agent already started");
                }
                started = true;
                // the node's identity first: acting on the cached config may need it (a primary's links to its copies)
                renewal.startUp();
                applier.loadCached();
                if (closed) { // a listener closed the agent while the cached config was applied
                    done.complete(null);
                    return;
                }
                startUsage();
                long millis = heartbeatInterval.toMillis();
                heartbeat = scheduler.scheduleWithFixedDelay(() -> events.execute(this::heartbeat), millis, millis,
                        TimeUnit.MILLISECONDS);
                connect();
                done.complete(null);
            } catch (IOException | RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        try {
            done.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw e;
        }
    }

    /**
     * Event thread, at start: the usage reporter over the executor, numbered above every earlier
     * run ({@link UsageSequences}), ticking on the agent's scheduler; each new report goes out at
     * once if connected, and stays buffered until acknowledged either way.
     */
    private void startUsage() throws IOException {
        UsageSequences sequences = UsageSequences.open(store.directory(), clock);
        UsageReporter reporter = UsageReporter.builder(executor).clock(clock).sequences(sequences)
                .interval(applier.applied() == null ? UsageReporter.DEFAULT_INTERVAL
                        : ConfigApplier.reportInterval(applier.applied()))
                .maxAge(usageMaxAge).maxReports(usageMaxReports)
                .sink(report -> events.execute(() -> sendUsage(report)))
                .build();
        usage = reporter;
        usageTicks = reporter.start(scheduler);
    }

    /** Event thread: sends a new report if connected; a report made while not connected goes out after the next hello. */
    private void sendUsage(UsageReport report) {
        AgentConnection c = current;
        if (c == null || !connected || closed) {
            return;
        }
        try {
            c.send(report);
        } catch (ProtocolException e) {
            // Only too-large: the report stays buffered until the age bound drops it as a gap.
            error(Level.ERROR, "usage report " + report.sequence() + " cannot be sent: " + e.getMessage());
        }
    }

    /** What the agent knows about itself now; may be called from any thread. */
    public AgentState state() {
        long contact = lastContactMillis;
        Duration since = contact == 0 ? null : Duration.ofMillis(Math.max(0, clock.millis() - contact));
        return new AgentState(applier.nodeId(), connected, applier.appliedRevision(), lastError, since);
    }

    /**
     * The snapshot in force, or null if none has been applied. For tests and diagnostics; the
     * executor's own {@link QosExecutor#config()} is the translated form. A listener may ask too:
     * inside {@link AgentListener#applying} the answer is still the snapshot before (the new one
     * may yet be vetoed), inside {@link AgentListener#applied} the new one.
     */
    public DesiredConfig appliedConfig() {
        if (events.inTask()) {
            return applier.applied(); // a listener: the event thread's own state (a question queued here would wait for itself)
        }
        CompletableFuture<DesiredConfig> f = new CompletableFuture<>();
        events.execute(() -> f.complete(applier.applied()));
        return f.join();
    }

    /**
     * The usage reports not yet acknowledged by the control plane, oldest first (empty before
     * {@link #start()}). They are sent again, in this order, after every reconnect. May be called
     * from any thread.
     */
    public List<UsageReport> unacknowledgedUsage() {
        UsageReporter u = usage;
        return u == null ? List.of() : u.unacknowledged();
    }

    /**
     * Usage reports dropped unacknowledged because the buffer's bound was reached (see
     * {@link Builder#usageBuffer}); each is announced as a gap in the next reports. May be called
     * from any thread.
     */
    public long droppedUsageReports() {
        UsageReporter u = usage;
        return u == null ? 0 : u.droppedReports();
    }

    /**
     * Ends the current usage interval now: makes its report and sends it if connected (it is
     * buffered until acknowledged either way), for example before a planned shutdown. May be
     * called from any thread once started.
     *
     * @return the report
     * @throws IllegalStateException before {@link #start()}
     */
    public UsageReport reportUsageNow() {
        UsageReporter u = usage;
        if (u == null) {
            throw new IllegalStateException("agent not started");
        }
        return u.reportNow();
    }

    /**
     * Sends the data node's status to the control plane now if connected; the agent also sends the
     * {@linkplain Builder#status status supplier}'s value on every (re)connect. May be called from
     * any thread.
     */
    public void reportStatus(AgentMessage.NodeStatus status) {
        Objects.requireNonNull(status, "status");
        events.execute(() -> {
            AgentConnection c = current;
            if (c != null && c.greeted) { // before its hello, the connection sends its own status with it
                c.send(status);
            }
        });
    }

    // ---------------------------------------------------------------------------- event thread

    private void connect() {
        if (closed) {
            return;
        }
        AgentConnection c = new AgentConnection(this, ++generation);
        current = c;
        try {
            http.newWebSocketBuilder()
                    .header("Authorization", "Bearer " + token)
                    .connectTimeout(connectTimeout)
                    .buildAsync(endpoint, c)
                    .whenComplete((ws, error) -> {
                        if (error != null) {
                            events.execute(() -> lost(c, "cannot connect to " + endpoint + ": " + describe(error)));
                        }
                    });
        } catch (RuntimeException e) {
            lost(c, "cannot connect to " + endpoint + ": " + describe(e));
        }
    }

    void opened(AgentConnection c) {
        if (c != current || closed) {
            c.ws.abort();
            return;
        }
        connected = true;
        lastContactMillis = clock.millis();
        c.openedAtMillis = lastContactMillis;
        // Only a node the builder named: a learned one may be stale if the token now belongs to another node.
        // The digest names the snapshot in force: its revision alone may be another node's or a pre-restore one's.
        DesiredConfig applied = applier.applied();
        c.send(new AgentMessage.Hello(applier.expectedNodeId, applier.appliedRevision(), AGENT_VERSION,
                applied == null ? null : ConfigDigest.of(applied)));
        c.greeted = true;
        if (statusSupplier != null) {
            try {
                AgentMessage.NodeStatus status = statusSupplier.get();
                if (status != null) {
                    c.send(status);
                }
            } catch (RuntimeException e) {
                // the rest of the opening (the usage resent, the certificate, the listener) goes on without it
                error(Level.WARNING, "cannot send the node's status: " + e);
            }
        }
        List<UsageReport> unacked = unacknowledgedUsage();
        for (UsageReport report : unacked) {
            sendUsage(report);
        }
        renewal.requestIfDue(c, c == current && connected);
        LOG.log(Level.INFO, "connected to {0}, applied revision {1}, {2} usage reports resent", endpoint,
                applier.appliedRevision(),
                unacked.size());
        try {
            listener.connected();
        } catch (RuntimeException e) {
            listenerFailed("connected", e);
        }
    }

    void received(AgentConnection c, String text) {
        if (c != current || closed) {
            return;
        }
        contact(c);
        AgentMessage message;
        try {
            message = AgentMessages.decode(text);
        } catch (ProtocolException e) {
            String reason = "the control plane sent an unreadable message: " + e.getMessage();
            c.send(e.toErrorMessage());
            c.close(WebSocket.NORMAL_CLOSURE, e.code().wireName());
            lost(c, reason);
            return;
        }
        if (message instanceof AgentMessage.ConfigPush push) {
            Applying a = new Applying(c);
            applying = a;
            pingWhileApplying(a);
            try {
                applier.apply(c, push.config());
            } finally {
                applying = null;
            }
            // nothing was read while it applied (hundreds of new volume files on a slow disk can
            // take longer than the heartbeat timeout): that time is not the control plane's silence
            // (nor contact that proves the connection healthy, see contact)
            lastContactMillis = clock.millis();
        } else if (message instanceof AgentMessage.UsageAck ack) {
            if (ack.refused() != null) {
                // Refused for good (its figures broke the protocol's bounds, or it could not be stored): not resent,
                // and reported as a gap with the gaps it carried
                LOG.log(Level.WARNING, "the control plane refused usage report {0}: {1}", ack.sequence(), ack.refused());
                usage.refused(ack.sequence());
            } else {
                usage.acknowledge(ack.sequence());
            }
        } else if (message instanceof AgentMessage.CertificateIssued issued) {
            renewal.issued(c, issued);
        } else if (message instanceof AgentMessage.ErrorMessage error) {
            error(Level.WARNING, "the control plane reported " + error.code() + ": " + error.reason());
            renewal.errorAnswered(c, error);
        } else {
            LOG.log(Level.DEBUG, "ignoring {0}", message.getClass().getSimpleName());
        }
        c.ws.request(1);
    }

    /**
     * Event thread: a message or pong arrived on {@code c}. The reconnect backoff starts over only
     * once the connection has proven healthy: contact at least {@link #backoffResetAfter} after it
     * opened. A control plane that accepts and drops the agent at once (even after a config/ack
     * exchange) so keeps the delays growing instead of drawing a tight reconnect loop.
     */
    void contact(AgentConnection c) {
        long now = clock.millis();
        lastContactMillis = now;
        if (!c.healthy && now - c.openedAtMillis >= backoffResetAfter.toMillis()) {
            c.healthy = true;
            backoff.reset();
        }
    }

    /** Event thread: a listener's method threw; recorded as the last error. */
    void listenerFailed(String method, RuntimeException e) {
        error(Level.ERROR, "listener." + method + " failed: " + e, e);
    }

    /** Records {@code message} as the last error and logs it at {@code level}. */
    void error(Level level, String message) {
        lastError = message;
        LOG.log(level, message);
    }

    /** Records {@code message} as the last error and logs it at {@code level}, with {@code cause}. */
    void error(Level level, String message, Throwable cause) {
        lastError = message;
        LOG.log(level, message, cause);
    }

    /** Records {@code message} as the last error, without logging it (it was logged where it arose). */
    void lastError(String message) {
        lastError = message;
    }

    /** Event thread, once started: the usage reporter. */
    UsageReporter usage() {
        return usage;
    }

    /**
     * The config push the event thread is applying, else null. An apply may take
     * longer than the control plane's idle timeout (thousands of new volume files on a slow disk),
     * and the heartbeat's pings wait behind it (the timer runs on the event thread too): the
     * control plane then heard nothing, closed the session, and could fail the node's replicated
     * volumes over. So while it applies, its connection is pinged each heartbeat interval from the
     * common pool, for as long as that apply (this object, not an equal one) is the one under way.
     */
    private volatile Applying applying;

    /** One apply of a config push, on {@code connection}. */
    private record Applying(AgentConnection connection) {
    }

    private void pingWhileApplying(Applying a) {
        java.util.concurrent.CompletableFuture.delayedExecutor(heartbeatInterval.toMillis(), TimeUnit.MILLISECONDS)
                .execute(() -> {
                    if (applying == a && !closed) {
                        a.connection().pingFromAnyThread();
                        pingWhileApplying(a);
                    }
                });
    }

    private void heartbeat() {
        if (closed) {
            return;
        }
        applier.saveIfUnsaved();
        AgentConnection c = current;
        // Not before its hello: its socket may be open already (set on the HTTP client's thread)
        // with its opening still queued behind this, and the last contact then is another's, or none.
        if (c == null || !c.greeted || closed) {
            return;
        }
        long silence = clock.millis() - lastContactMillis;
        if (silence > heartbeatTimeout.toMillis()) {
            c.ws.abort();
            lost(c, "no message nor pong from the control plane for " + silence + " ms (half-open connection)");
            return;
        }
        c.ping();
        renewal.requestIfDue(c, c == current && connected);
    }

    /**
     * The node's server certificate in force, or null (none yet, or the agent was not built with
     * {@link Builder#serverCertificates}). May be called from any thread.
     */
    public ServerCertificate serverCertificate() {
        return renewal.current();
    }

    /** The connection {@code c} is gone (or never came up): forget it and schedule a reconnect. */
    void lost(AgentConnection c, String reason) {
        if (c != current) {
            return;
        }
        current = null;
        if (c.ws != null && !c.closing) {
            c.ws.abort();
        }
        boolean wasConnected = connected;
        connected = false;
        if (closed) {
            return;
        }
        lastError = reason;
        Duration delay = backoff.next();
        LOG.log(wasConnected ? Level.WARNING : Level.INFO, "{0}; reconnecting in {1} ms", reason, delay.toMillis());
        try {
            listener.disconnected(reason);
        } catch (RuntimeException e) {
            listenerFailed("disconnected", e);
        }
        scheduler.schedule(() -> events.execute(this::connect), delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Closes the connection (a normal close frame), stops heartbeats and reconnects, and stops the
     * agent's own thread. Does not close the executor, which keeps the config in force. Idempotent.
     * From the agent's event thread (a listener), it closes there and then, rather than queue
     * behind the listener and wait for itself; its own thread stops after the listener's task
     * (stopped now, it would interrupt the listener and what the agent does after it, such as
     * saving the config just applied).
     */
    @Override
    public void close() {
        if (events.inTask()) {
            closeOnEventThread();
            if (ownsScheduler) {
                events.execute(scheduler::shutdownNow);
            }
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        try {
            events.execute(() -> {
                try {
                    closeOnEventThread();
                } finally {
                    done.countDown();
                }
            });
            done.await(CLOSE_WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // already shut down
        }
        if (ownsScheduler) {
            scheduler.shutdownNow();
        }
    }

    /** On the event thread: the connection closed, heartbeats and usage ticks stopped; once. */
    private void closeOnEventThread() {
        if (closed) {
            return;
        }
        closed = true;
        connected = false;
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        if (usageTicks != null) {
            usageTicks.cancel(false);
        }
        AgentConnection c = current;
        current = null;
        if (c != null) {
            c.closeAndWait();
        }
    }

    static String describe(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof java.util.concurrent.ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof java.net.http.WebSocketHandshakeException h) {
            return "handshake refused with HTTP " + h.getResponse().statusCode();
        }
        return t.getMessage() == null ? t.toString() : t + "";
    }

    // ---------------------------------------------------------------------------- builder

    /** Configures a {@link QosAgent}; see the class comment for what each part is for. */
    public static final class Builder {
        private URI controlPlane;
        private String token;
        private Path stateDir;
        private QosExecutor executor;
        private AgentListener listener = AgentListener.NONE;
        private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
        private Duration certificateRetry = DEFAULT_CERTIFICATE_RETRY;
        private Duration heartbeatTimeout = DEFAULT_HEARTBEAT_TIMEOUT;
        private Duration backoffInitial = DEFAULT_BACKOFF_INITIAL;
        private Duration backoffMax = DEFAULT_BACKOFF_MAX;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration backoffResetAfter = DEFAULT_BACKOFF_RESET_AFTER;
        private Clock clock = Clock.systemUTC();
        private RandomGenerator random = new SplittableRandom();
        private HttpClient httpClient;
        private ScheduledExecutorService scheduler;
        private Supplier<AgentMessage.NodeStatus> statusSupplier;
        private UUID nodeId;
        private Consumer<DesiredConfig> check = config -> { };
        private Duration usageMaxAge = UsageReporter.DEFAULT_MAX_AGE;
        private int usageMaxReports = UsageReporter.DEFAULT_MAX_REPORTS;
        private boolean serverCertificates;
        private Path controlPlaneCa;

        private Builder() {
        }

        /**
         * Keeps a TLS server certificate for the data node: a key made on the node, a request sent
         * to the control plane after every hello when the node has none or two thirds of its
         * lifetime have passed (checked again every heartbeat interval), the signed certificate
         * stored beside the state ({@link ServerCertificates}) and handed to
         * {@link AgentListener#serverCertificate}. Off by default (a plain agent serves no TLS).
         */
        public Builder serverCertificates(boolean enabled) {
            this.serverCertificates = enabled;
            return this;
        }

        /**
         * The cluster CA certificate (PEM file) that the control plane's HTTPS certificate must
         * chain to, for a {@code wss://} control plane ({@link ControlPlaneTrust}); without it the
         * JDK's default trust store decides. Ignored when an {@link #httpClient} is given.
         */
        public Builder controlPlaneCa(Path caFile) {
            this.controlPlaneCa = Objects.requireNonNull(caFile, "caFile");
            return this;
        }

        /**
         * The control plane's base URL ({@code https://host:port}, or {@code http://} on a
         * trusted network); {@value QosAgent#CONNECT_PATH} is appended. {@code ws://} and
         * {@code wss://} URLs are taken as they are.
         */
        public Builder controlPlane(URI url) {
            this.controlPlane = Objects.requireNonNull(url, "url");
            return this;
        }

        /** The node token; it decides which node's config this agent receives. */
        public Builder token(String token) {
            Objects.requireNonNull(token, "token");
            if (token.isBlank()) {
                throw new IllegalArgumentException("token must not be blank");
            }
            this.token = token.strip();
            return this;
        }

        /** The directory that keeps the last-known-good snapshot; created if missing. */
        public Builder stateDir(Path dir) {
            this.stateDir = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /** The executor whose configuration the agent keeps; the caller owns and closes it. */
        public Builder executor(QosExecutor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** Hears applied and refused snapshots and connection changes; none by default. */
        public Builder listener(AgentListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Tests: how long after a server certificate could not be had (the request could not be
         * made, or the certificate could not be used) the agent asks again on the same
         * connection; default {@link QosAgent#DEFAULT_CERTIFICATE_RETRY}.
         */
        Builder certificateRetry(Duration retry) {
            this.certificateRetry = positive(retry, "certificateRetry");
            return this;
        }

        /** Time between heartbeat pings; default {@link QosAgent#DEFAULT_HEARTBEAT_INTERVAL}. */
        public Builder heartbeatInterval(Duration interval) {
            this.heartbeatInterval = positive(interval, "heartbeatInterval");
            return this;
        }

        /**
         * Silence (no message, no pong) after which the connection is dropped as half-open;
         * default {@link QosAgent#DEFAULT_HEARTBEAT_TIMEOUT}. Must exceed the heartbeat interval.
         */
        public Builder heartbeatTimeout(Duration timeout) {
            this.heartbeatTimeout = positive(timeout, "heartbeatTimeout");
            return this;
        }

        /**
         * The reconnect delays' bounds: the n-th failure in a row waits a random time in
         * {@code [0, min(max, initial * 2^n)]}; defaults {@link QosAgent#DEFAULT_BACKOFF_INITIAL}
         * and {@link QosAgent#DEFAULT_BACKOFF_MAX}.
         */
        public Builder backoff(Duration initial, Duration max) {
            this.backoffInitial = positive(initial, "initial");
            this.backoffMax = positive(max, "max");
            return this;
        }

        /**
         * How long a connection must have been up, with a message or pong arriving after that
         * time, before the reconnect backoff starts over from its initial ceiling; default
         * {@link QosAgent#DEFAULT_BACKOFF_RESET_AFTER}. Until then every lost connection counts as
         * a failure, so a control plane that accepts and drops the agent at once meets growing
         * delays, not a tight reconnect loop.
         */
        public Builder backoffResetAfter(Duration time) {
            this.backoffResetAfter = positive(time, "backoffResetAfter");
            return this;
        }

        /** Limit of the WebSocket handshake; default {@link QosAgent#DEFAULT_CONNECT_TIMEOUT}. */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connectTimeout");
            return this;
        }

        /** The clock of "time since last contact", the heartbeat timeout and file names. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The source of the reconnect jitter. */
        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /**
         * The HTTP client of the WebSocket (for TLS settings, a proxy, or to share one among
         * many agents); by default the agent makes its own.
         */
        public Builder httpClient(HttpClient client) {
            this.httpClient = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * A pool to run the agent's tasks and timers on instead of its own {@code weir-agent}
         * thread, for many agents in one JVM; the agent's tasks still run one at a time. The
         * caller owns and shuts down the pool.
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** The data node's status, sent after every hello (a null answer sends none). */
        public Builder status(Supplier<AgentMessage.NodeStatus> supplier) {
            this.statusSupplier = Objects.requireNonNull(supplier, "supplier");
            return this;
        }

        /**
         * The data node's own check of a pushed snapshot, run on the event thread before it is
         * translated and applied: it throws {@link IllegalArgumentException} to refuse the
         * snapshot (the message becomes the {@code nack}'s reason and the node's
         * {@code lastError}), for example when a volume is larger than the node's free space. The
         * cached snapshot at start-up was accepted once and is not checked again. None by default.
         */
        public Builder check(Consumer<DesiredConfig> check) {
            this.check = Objects.requireNonNull(check, "check");
            return this;
        }

        /**
         * Optional: the id of the node this agent runs for, as registered in the control plane.
         * Not needed (the token decides the node, and the agent learns it from the snapshots); if
         * given it is checked: the control plane refuses the connection if the token belongs to
         * another node, and the agent refuses snapshots (and ignores a cached one) for any other
         * node. Unset by default.
         */
        public Builder nodeId(UUID nodeId) {
            this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
            return this;
        }

        /**
         * Bounds the buffer of usage reports the control plane has not acknowledged: a report
         * older than {@code maxAge}, or beyond the {@code maxReports} newest, is dropped and
         * announced as a gap in the following reports (the control plane records and shows it).
         * Default: one hour, {@value UsageReporter#DEFAULT_MAX_REPORTS} reports (an hour of the
         * shortest interval, one second).
         */
        public Builder usageBuffer(Duration maxAge, int maxReports) {
            this.usageMaxAge = positive(maxAge, "maxAge");
            if (maxReports < 1) {
                throw new IllegalArgumentException("maxReports must be at least 1: " + maxReports);
            }
            this.usageMaxReports = maxReports;
            return this;
        }

        /**
         * Makes the agent (not started).
         *
         * @throws IllegalStateException if the control plane, token, state directory or executor is
         *     missing, or the heartbeat timeout does not exceed the interval
         */
        public QosAgent build() {
            require(controlPlane, "controlPlane");
            require(token, "token");
            require(stateDir, "stateDir");
            require(executor, "executor");
            if (heartbeatTimeout.compareTo(heartbeatInterval) <= 0) {
                throw new IllegalStateException("heartbeatTimeout (" + heartbeatTimeout
                        + ") must exceed heartbeatInterval (" + heartbeatInterval + ")");
            }
            if (backoffMax.compareTo(backoffInitial) < 0) {
                throw new IllegalStateException("backoff max (" + backoffMax + ") is below its initial (" + backoffInitial + ")");
            }
            return new QosAgent(this);
        }

        private static void require(Object value, String name) {
            if (value == null) {
                throw new IllegalStateException(name + " is required");
            }
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive: " + d);
            }
            return d;
        }
    }
}
