package io.weir.controlplane.support;

import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A test's own connection to the shared database, to hold row locks that the service's
 * transactions then queue behind, and to wait (by querying {@code pg_locks}, not by sleeping)
 * until a given number of other backends are blocked on it. This makes interleavings of
 * concurrent requests deterministic: hold a lock, start requests, wait until they queue, release.
 */
public final class RowLocks implements AutoCloseable {

    private final Connection holder;
    private final Connection observer;

    public RowLocks() throws SQLException {
        this(TestDatabase.get().jdbcUrl());
    }

    /** Locks in the database at {@code jdbcUrl} on the shared test server (such as one a test created). */
    public RowLocks(String jdbcUrl) throws SQLException {
        TestDatabase.Coordinates db = TestDatabase.get();
        holder = DriverManager.getConnection(jdbcUrl, db.username(), db.password());
        holder.setAutoCommit(false);
        observer = DriverManager.getConnection(jdbcUrl, db.username(), db.password());
    }

    /** Runs {@code sql} (such as {@code SELECT ... FOR UPDATE}) in the holder's open transaction. */
    public void hold(String sql, Object... params) throws SQLException {
        try (PreparedStatement st = holder.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            st.execute();
        }
    }

    /** Ends the holder's transaction, releasing its locks. */
    public void release() throws SQLException {
        holder.rollback();
    }

    /** Waits until at least {@code n} backends other than this one wait for a lock. */
    public void awaitWaiters(int n) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
                .until(() -> waiters() >= n);
    }

    /** How many backends, apart from the holder and the observer, wait for a lock right now. */
    public int waiters() throws SQLException {
        try (PreparedStatement st = observer.prepareStatement("""
                SELECT count(DISTINCT pid) FROM pg_locks
                WHERE NOT granted AND pid <> pg_backend_pid() AND pid <> ?""")) {
            st.setInt(1, holder.unwrap(org.postgresql.PGConnection.class).getBackendPID());
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @Override
    public void close() throws SQLException {
        try {
            holder.rollback();
            holder.close();
        } finally {
            observer.close();
        }
    }
}
