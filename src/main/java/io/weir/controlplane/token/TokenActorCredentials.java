package io.weir.controlplane.token;

import io.weir.controlplane.audit.ActorCredentials;
import io.weir.controlplane.security.WeirPrincipal;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * Holds the acting token for the audit log: {@code FOR KEY SHARE} on its row, so a revoke (a
 * delete) that comes later waits for the change's transaction, and one that came earlier leaves no
 * row to find.
 */
@Component
class TokenActorCredentials implements ActorCredentials {

    private final JdbcClient jdbc;
    private final Clock clock;

    TokenActorCredentials(JdbcClient jdbc, Clock clock) {
        this.jdbc = jdbc;
        this.clock = clock;
    }

    @Override
    @Transactional(propagation = Propagation.MANDATORY)
    public boolean holdIfValid(WeirPrincipal actor) {
        return !jdbc.sql("SELECT 1 FROM api_token WHERE id = ? AND (expires_at IS NULL OR expires_at > ?) FOR KEY SHARE")
                .param(UUID.fromString(actor.id()))
                .param(Timestamp.from(clock.instant()))
                .query((rs, n) -> 1)
                .list()
                .isEmpty();
    }
}
