package io.weir.controlplane.security;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;

/** Helpers shared by the security tests. */
final class SecurityTestSupport {

    private SecurityTestSupport() {
    }

    /** A data node row, for node tokens to be bound to. */
    static UUID createNode(JdbcClient jdbc) {
        UUID id = UUID.randomUUID();
        Timestamp now = Timestamp.from(Instant.now());
        jdbc.sql("INSERT INTO data_node (id, name, version, created_at, updated_at) VALUES (?, ?, 0, ?, ?)")
                .params(id, "node-" + id.toString().substring(0, 8), now, now)
                .update();
        return id;
    }
}
