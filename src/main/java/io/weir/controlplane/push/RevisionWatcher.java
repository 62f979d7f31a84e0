package io.weir.controlplane.push;

import com.zaxxer.hikari.HikariDataSource;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.security.BearerTokens;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.PGProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Component;

/**
 * Learns that the config revision moved, on any replica, and has the {@link AgentChannel} re-offer
 * each connected node its snapshot; and learns that a token was revoked, on any replica, and has
 * the channel close the sessions that token opened.
 *
 * <h2>Hint and truth</h2>
 * {@code ConfigRevisions.bump()} issues {@code pg_notify('weir_config_revision', N)}, which
 * PostgreSQL delivers to every listener when the change commits. This watcher listens on a
 * dedicated connection of its own, opened with the pool's settings but outside the pool (a pooled
 * connection would be handed to others and lose the {@code LISTEN}). A notification is only a
 * hint: after each one, and at least every {@link PushProperties#pollInterval()}, it reads the
 * revision ({@code ConfigRevisions.current()}) and refreshes when it moved. So a lost notification
 * delays a push by one poll interval at most. Likewise a revoke is announced on
 * {@link BearerTokens#REVOKED_CHANNEL}, and after each such notification, and every poll interval
 * (which also catches expiries), the channel checks its sessions' tokens
 * ({@link AgentChannel#closeRevoked}).
 *
 * <h2>The listening connection</h2>
 * Opened by the pool's own JDBC driver with the pool's settings: its URL, user, password and
 * driver properties ({@code spring.datasource.hikari.data-source-properties.*}: SSL, socket and
 * keepalive options), plus, unless those say otherwise, TCP keepalive on (the connection idles by
 * design, and keepalive is how a dead peer is noticed without traffic), the pool's connection
 * timeout as login timeout, and the application name {@value #APPLICATION_NAME}. Every poll
 * interval it is also checked ({@code isValid}), so that a connection that died silently is
 * replaced.
 *
 * <h2>Failures</h2>
 * When the listening connection breaks (PostgreSQL restarted, network), the watcher logs it
 * (WARN), closes it, waits {@link #RETRY_DELAY} (or the poll interval if shorter; doubling, up to
 * the poll interval, while it keeps failing), opens a new one, logs that (INFO), and polls at
 * once, catching up on anything committed or revoked meanwhile. A refresh that fails is retried on the next wake-up, because the revision is taken as
 * seen only once a refresh succeeded. The same thread stamps this replica's heartbeat, and then
 * puts its connection rows back in line with its sessions ({@link AgentRegistry#reconcile}).
 *
 * <h2>Threads</h2>
 * One daemon thread, {@code weir-revision-watcher}, started and stopped with the application.
 */
@Component
class RevisionWatcher implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(RevisionWatcher.class);

    /** Longest wait at shutdown for this replica's rows to be removed. */
    private static final long LEAVE_TIMEOUT_SECONDS = 3;

    /** First wait before reopening a broken listening connection; doubles while it fails, up to the poll interval. */
    static final Duration RETRY_DELAY = Duration.ofSeconds(1);

    /** The listening connection's {@code ApplicationName} unless the pool's driver properties set one. */
    static final String APPLICATION_NAME = "weir-revision-watcher";

    /** Longest wait for the listening connection's validity check, in seconds. */
    private static final int VALIDITY_TIMEOUT_SECONDS = 5;

    private final DataSource dataSource;
    private final ConfigRevisions revisions;
    private final AgentChannel channel;
    private final AgentRegistry registry;
    private final PushProperties properties;

    private volatile boolean running;
    private Thread thread;
    private long seen = -1;
    private long nextHeartbeat;
    private long nextCleanup;
    /** When tokens are checked next (and the listening connection's validity). */
    private long nextTokenCheck;
    /** Whether a revoke was announced since the last token check. */
    private boolean revokeAnnounced;
    /** The backend process id of the listening connection, or 0 while there is none. */
    private volatile int listenerPid;

    RevisionWatcher(DataSource dataSource, ConfigRevisions revisions, AgentChannel channel, AgentRegistry registry,
            PushProperties properties) {
        this.dataSource = dataSource;
        this.revisions = revisions;
        this.channel = channel;
        this.registry = registry;
        this.properties = properties;
    }

    @Override
    public synchronized void start() {
        running = true;
        channel.reopen(); // a start after a stop: the channel takes agents again
        // Listening before start() returns: nothing committed once the application is up goes unheard.
        Connection first = null;
        try {
            first = listen();
        } catch (SQLException | RuntimeException e) {
            log.warn("revision watcher: {}; listening in the background once the database answers", e.getMessage());
        }
        Connection initial = first;
        thread = new Thread(() -> run(initial), "weir-revision-watcher");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public synchronized void stop() {
        running = false;
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        channel.closeAll();
        // Bounded: at shutdown the database may already be gone, and a pool waits long for it.
        try {
            CompletableFuture.runAsync(registry::leave).get(LEAVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e) {
            log.warn("could not remove this replica's rows at shutdown; they expire with its heartbeat");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    private void run(Connection initial) {
        nextHeartbeat = System.nanoTime();
        nextCleanup = nextHeartbeat;
        nextTokenCheck = nextHeartbeat;
        Connection listening = initial;
        Duration retry = firstRetryDelay();
        boolean failing = false;
        while (running) {
            try {
                if (listening == null) {
                    listening = listen();
                    if (failing) {
                        log.info("revision watcher: listening again (backend {}); catching up", listenerPid);
                    }
                    failing = false;
                    retry = firstRetryDelay();
                    // Catch up on revokes and expiries missed while not listening.
                    nextTokenCheck = System.nanoTime();
                }
                heartbeatIfDue();
                check();
                checkTokensIfDue(listening);
                PGConnection pg = listening.unwrap(PGConnection.class);
                // Blocks until a notification arrives or the poll interval passes; either way, check.
                PGNotification[] notifications = pg.getNotifications((int) Math.max(1, Math.min(
                        properties.pollInterval().toMillis(), properties.heartbeatInterval().toMillis())));
                if (notifications != null) {
                    for (PGNotification n : notifications) {
                        revokeAnnounced |= BearerTokens.REVOKED_CHANNEL.equals(n.getName());
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (!running) {
                    break;
                }
                if (!failing) {
                    log.warn("revision watcher: {}; listening again in {}", e.getMessage(), retry);
                } else {
                    log.debug("revision watcher: still failing: {}; next try in {}", e.getMessage(), retry);
                }
                failing = true;
                closeQuietly(listening);
                listening = null;
                listenerPid = 0;
                pause(retry);
                retry = retry.multipliedBy(2).compareTo(properties.pollInterval()) > 0 ? properties.pollInterval()
                        : retry.multipliedBy(2);
            }
        }
        closeQuietly(listening);
    }

    private Duration firstRetryDelay() {
        return RETRY_DELAY.compareTo(properties.pollInterval()) < 0 ? RETRY_DELAY : properties.pollInterval();
    }

    /**
     * Opens the dedicated connection, with the pool's driver and settings (see the class comment),
     * and listens; the caller then polls once to catch up.
     */
    private Connection listen() throws SQLException {
        HikariDataSource pool = unwrapPool();
        if (pool.getJdbcUrl() == null) {
            throw new SQLException("the pool has no JDBC URL (a DataSource class is configured instead); cannot LISTEN");
        }
        Properties info = new Properties();
        info.putAll(pool.getDataSourceProperties());
        if (pool.getUsername() != null) {
            info.setProperty("user", pool.getUsername());
        }
        if (pool.getPassword() != null) {
            info.setProperty("password", pool.getPassword());
        }
        info.putIfAbsent(PGProperty.TCP_KEEP_ALIVE.getName(), "true");
        info.putIfAbsent(PGProperty.APPLICATION_NAME.getName(), APPLICATION_NAME);
        info.putIfAbsent(PGProperty.LOGIN_TIMEOUT.getName(),
                String.valueOf(Math.max(1, TimeUnit.MILLISECONDS.toSeconds(pool.getConnectionTimeout()))));
        Driver driver = DriverManager.getDriver(pool.getJdbcUrl());
        Connection connection = driver.connect(pool.getJdbcUrl(), info);
        if (connection == null) {
            throw new SQLException("the JDBC driver does not accept the pool's URL");
        }
        try {
            connection.setAutoCommit(true);
            try (Statement statement = connection.createStatement()) {
                statement.execute("LISTEN " + ConfigRevisions.NOTIFY_CHANNEL);
                statement.execute("LISTEN " + BearerTokens.REVOKED_CHANNEL);
            }
            listenerPid = connection.unwrap(PGConnection.class).getBackendPID();
        } catch (SQLException | RuntimeException e) {
            closeQuietly(connection);
            throw e;
        }
        return connection;
    }

    /** The backend process id of the listening connection, or 0 while there is none (for tests and diagnostics). */
    int listenerPid() {
        return listenerPid;
    }

    /**
     * After a revoke's notification, and every poll interval: has the channel close the sessions
     * of revoked or expired tokens, and (on the interval) checks that the listening connection is
     * still alive.
     */
    private void checkTokensIfDue(Connection listening) throws SQLException {
        long now = System.nanoTime();
        boolean due = now - nextTokenCheck >= 0;
        if (due && !listening.isValid(VALIDITY_TIMEOUT_SECONDS)) {
            throw new SQLException("the listening connection is no longer valid");
        }
        if (due || revokeAnnounced) {
            revokeAnnounced = false;
            nextTokenCheck = now + properties.pollInterval().toNanos();
            channel.closeRevoked();
        }
    }

    private HikariDataSource unwrapPool() throws SQLException {
        if (dataSource instanceof HikariDataSource hikari) {
            return hikari;
        }
        return dataSource.unwrap(HikariDataSource.class);
    }

    private void check() {
        long current = revisions.current();
        if (current != seen) {
            channel.refresh();
            seen = current;
        }
    }

    private void heartbeatIfDue() {
        long now = System.nanoTime();
        if (now - nextHeartbeat >= 0) {
            registry.heartbeat();
            nextHeartbeat = now + properties.heartbeatInterval().toNanos();
            try {
                registry.reconcile(channel::openSessions);
            } catch (DataAccessException e) { // the next heartbeat tries again; the loop goes on meanwhile
                log.warn("could not reconcile this replica's connection rows: {}", e.getMessage());
            }
        }
        if (now - nextCleanup >= 0) {
            registry.forgetDeadReplicas();
            nextCleanup = now + properties.replicaTimeout().toNanos();
        }
    }

    private void pause(Duration delay) {
        try {
            Thread.sleep(delay.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    private static void closeQuietly(Connection connection) {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // already broken
            }
        }
    }
}
