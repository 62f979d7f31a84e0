package io.weir.controlplane.push;

import com.zaxxer.hikari.HikariDataSource;
import io.weir.controlplane.config.ConfigRevisions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Learns that the config revision moved, on any replica, and has the {@link AgentChannel} re-offer
 * each connected node its snapshot.
 *
 * <h2>Hint and truth</h2>
 * {@code ConfigRevisions.bump()} issues {@code pg_notify('weir_config_revision', N)}, which
 * PostgreSQL delivers to every listener when the change commits. This watcher listens on a
 * dedicated connection of its own, opened with the pool's settings but outside the pool (a pooled
 * connection would be handed to others and lose the {@code LISTEN}). A notification is only a
 * hint: after each one, and at least every {@link PushProperties#pollInterval()}, it reads the
 * revision ({@code ConfigRevisions.current()}) and refreshes when it moved. So a lost notification
 * delays a push by one poll interval at most.
 *
 * <h2>Failures</h2>
 * When the listening connection breaks (PostgreSQL restarted, network), the watcher closes it,
 * waits one poll interval, opens a new one, and polls at once, catching up on anything committed
 * meanwhile. A refresh that fails is retried on the next wake-up, because the revision is taken as
 * seen only once a refresh succeeded. The same thread stamps this replica's heartbeat.
 *
 * <h2>Threads</h2>
 * One daemon thread, {@code weir-revision-watcher}, started and stopped with the application.
 */
@Component
class RevisionWatcher implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(RevisionWatcher.class);

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
        thread = new Thread(this::run, "weir-revision-watcher");
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
        registry.leave();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    private void run() {
        nextHeartbeat = System.nanoTime();
        nextCleanup = nextHeartbeat;
        Connection listening = null;
        while (running) {
            try {
                if (listening == null) {
                    listening = listen();
                }
                heartbeatIfDue();
                check();
                PGConnection pg = listening.unwrap(PGConnection.class);
                // Blocks until a notification arrives or the poll interval passes; either way, check.
                pg.getNotifications((int) Math.max(1, Math.min(properties.pollInterval().toMillis(),
                        properties.heartbeatInterval().toMillis())));
            } catch (SQLException | RuntimeException e) {
                if (!running) {
                    break;
                }
                log.warn("revision watcher: {}; retrying in {}", e.getMessage(), properties.pollInterval());
                closeQuietly(listening);
                listening = null;
                pause();
            }
        }
        closeQuietly(listening);
    }

    /** Opens the dedicated connection and listens; the caller then polls once to catch up. */
    private Connection listen() throws SQLException {
        HikariDataSource pool = unwrapPool();
        Properties info = new Properties();
        if (pool.getUsername() != null) {
            info.setProperty("user", pool.getUsername());
        }
        if (pool.getPassword() != null) {
            info.setProperty("password", pool.getPassword());
        }
        Connection connection = DriverManager.getConnection(pool.getJdbcUrl(), info);
        connection.setAutoCommit(true);
        try (Statement statement = connection.createStatement()) {
            statement.execute("LISTEN " + ConfigRevisions.NOTIFY_CHANNEL);
        }
        return connection;
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
        }
        if (now - nextCleanup >= 0) {
            registry.forgetDeadReplicas();
            nextCleanup = now + properties.replicaTimeout().toNanos();
        }
    }

    private void pause() {
        try {
            Thread.sleep(properties.pollInterval().toMillis());
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
