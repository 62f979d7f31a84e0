package io.weir.controlplane.database;

import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the embedded PostgreSQL server that starts when no {@code spring.datasource.url}
 * is configured.
 *
 * @param dataDir the cluster's data directory; it survives restarts and is never wiped
 * @param port loopback TCP port, or 0 to pick a free one at each start
 */
@ConfigurationProperties("weir.database.embedded")
public record EmbeddedDatabaseProperties(
        @DefaultValue("./data/postgres") Path dataDir,
        @DefaultValue("0") int port) {
}
