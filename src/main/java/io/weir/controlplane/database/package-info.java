/**
 * The database: the embedded PostgreSQL server that starts when no {@code spring.datasource.url}
 * is configured ({@link io.weir.controlplane.database.EmbeddedPostgresServer}; a server left running
 * on its directory by a killed process is stopped first), and the base class
 * of the configuration entities ({@link io.weir.controlplane.database.VersionedEntity}), and the
 * SQL of sums that saturate at a bigint instead of failing a query
 * ({@link io.weir.controlplane.database.SqlSums}), and the statement timeout of every pooled
 * connection ({@code StatementTimeout}). The schema
 * itself lives in the Flyway migrations under {@code db/migration}.
 */
package io.weir.controlplane.database;
