package io.weir.controlplane.audit;

import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.security.Role;
import io.weir.controlplane.security.WeirPrincipal;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.PageResponse;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Records changes and serves them back.
 *
 * <h2>Recording</h2>
 * {@link #record} runs with {@code MANDATORY} propagation: it must be called inside the
 * transaction of the change, so the entry commits or rolls back with it. The actor is the caller
 * of the current request ({@link AccessScope#current()}); {@code before} and {@code after} are
 * the response DTOs of the resource, stored as {@code jsonb}. DTOs carry no secrets, and the
 * token feature records tokens without theirs.
 *
 * <h2>Reading</h2>
 * Entries come in the stable order of every list, oldest first (time, then id), so walking the
 * pages while changes happen sees every entry once; use {@code from} for recent entries.
 */
@Service
public class AuditLog {

    private final JdbcClient jdbc;
    private final JsonMapper mapper;
    private final AccessScope scope;
    private final Clock clock;
    private final ActorCredentials credentials;

    AuditLog(JdbcClient jdbc, JsonMapper mapper, AccessScope scope, Clock clock, ActorCredentials credentials) {
        this.jdbc = jdbc;
        this.mapper = mapper;
        this.scope = scope;
        this.clock = clock;
        this.credentials = credentials;
    }

    /**
     * Records one change, in the caller's transaction.
     *
     * @param action what was done, as {@code <resource>.<verb>}: {@code tenant.create},
     *     {@code volume.update}, {@code token.delete}
     * @param resourceType the kind of resource, such as {@code tenant}
     * @param resourceId the resource's id
     * @param tenantId the tenant the resource belongs to, or null
     * @param before the resource's DTO before the change, or null for a create
     * @param after the resource's DTO after the change, or null for a delete
     */
    @Transactional(propagation = Propagation.MANDATORY)
    public void record(String action, String resourceType, Object resourceId, UUID tenantId, Object before, Object after) {
        WeirPrincipal actor = scope.current();
        requireActorStillValid(actor, action, resourceId);
        jdbc.sql("""
                INSERT INTO audit_event (id, occurred_at, actor_type, actor_id, actor_name, actor_role, action,
                                         resource_type, resource_id, tenant_id, before_state, after_state)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS jsonb), CAST(? AS jsonb))
                """)
                .param(UUID.randomUUID())
                .param(Timestamp.from(clock.instant().truncatedTo(ChronoUnit.MICROS)))
                .param(actor.kind().name().toLowerCase(Locale.ROOT))
                .param(actor.id())
                .param(actor.name())
                .param(actor.role().wireName())
                .param(action)
                .param(resourceType)
                .param(String.valueOf(resourceId))
                .param(tenantId)
                .param(json(before))
                .param(json(after))
                .update();
    }

    /**
     * Fails the change (401, rolling the caller's transaction back) unless the token that makes
     * it still exists and is unexpired, and keeps it so until the change commits
     * ({@link ActorCredentials#holdIfValid}).
     *
     * <p>The request was authenticated in a transaction of its own, before the change's; a revoke
     * committed in between would otherwise let a revoked token's change commit. Holding the token
     * closes that gap: a revoke that comes later waits for this transaction, and one that came
     * earlier leaves nothing to find. A token revoking itself has deleted its own
     * row in this very transaction, which is the one case let through.
     */
    private void requireActorStillValid(WeirPrincipal actor, String action, Object resourceId) {
        if (actor.kind() != WeirPrincipal.Kind.TOKEN) {
            return;
        }
        if ("token.delete".equals(action) && actor.id().equals(String.valueOf(resourceId))) {
            return;
        }
        boolean valid = credentials.holdIfValid(actor);
        if (!valid) {
            throw new ApiException(HttpStatus.UNAUTHORIZED, "Unauthorized",
                    "The bearer token was revoked or expired while the request ran; nothing was changed", Map.of());
        }
    }

    /** One page of entries matching {@code query}, narrowed to what the caller may see. */
    @Transactional(readOnly = true)
    public PageResponse<AuditEventResponse> list(AuditQuery query, int page, int size) {
        StringBuilder where = new StringBuilder(" WHERE true");
        List<Object> params = new ArrayList<>();
        if (query.tenantId() != null) {
            where.append(" AND tenant_id = ?");
            params.add(query.tenantId());
        }
        if (query.resourceType() != null) {
            where.append(" AND resource_type = ?");
            params.add(query.resourceType());
        }
        if (query.resourceId() != null) {
            where.append(" AND resource_id = ?");
            params.add(query.resourceId());
        }
        boolean hideOutsideActors = scope.current().role() == Role.TENANT_ADMIN;
        if (query.actor() != null) {
            // A tenant-admin may not test ids of actors it is not shown (see row()).
            where.append(hideOutsideActors
                    ? " AND (actor_name = ? OR (actor_id = ? AND actor_role = 'tenant-admin'))"
                    : " AND (actor_id = ? OR actor_name = ?)");
            params.add(query.actor());
            params.add(query.actor());
        }
        if (query.from() != null) {
            where.append(" AND occurred_at >= ?");
            params.add(Timestamp.from(query.from()));
        }
        if (query.to() != null) {
            where.append(" AND occurred_at < ?");
            params.add(Timestamp.from(query.to()));
        }
        long total = jdbc.sql("SELECT count(*) FROM audit_event" + where).params(params).query(Long.class).single();
        List<Object> pageParams = new ArrayList<>(params);
        pageParams.add(size);
        pageParams.add((long) page * size);
        List<AuditEventResponse> items = jdbc.sql("SELECT * FROM audit_event" + where
                        + " ORDER BY occurred_at, id LIMIT ? OFFSET ?")
                .params(pageParams)
                .query((rs, n) -> row(rs, hideOutsideActors))
                .list();
        return new PageResponse<>(items, page, size, total, (int) ((total + size - 1) / size));
    }

    /**
     * One entry. For a tenant-admin caller, the actor id of an entry made by anyone but a
     * tenant-admin (of this tenant: the entries are its tenant's) is left out: admins, node
     * tokens and the system are shown by type and name only, so their token ids (which a
     * bootstrap token's once derived from its secret) do not leak outside the operators.
     */
    private AuditEventResponse row(ResultSet rs, boolean hideOutsideActors) throws SQLException {
        boolean showActor = !hideOutsideActors || Role.TENANT_ADMIN.wireName().equals(rs.getString("actor_role"));
        return new AuditEventResponse(rs.getObject("id", UUID.class), rs.getTimestamp("occurred_at").toInstant(),
                rs.getString("actor_type"), showActor ? rs.getString("actor_id") : null, rs.getString("actor_name"),
                rs.getString("action"), rs.getString("resource_type"), rs.getString("resource_id"),
                rs.getObject("tenant_id", UUID.class), tree(rs.getString("before_state")),
                tree(rs.getString("after_state")));
    }

    private String json(Object dto) {
        return dto == null ? null : mapper.writeValueAsString(dto);
    }

    private JsonNode tree(String json) {
        return json == null ? null : mapper.readTree(json);
    }

    /**
     * Filters of the audit list; null members do not filter.
     *
     * @param from entries at or after this instant
     * @param to entries before this instant
     */
    public record AuditQuery(UUID tenantId, String resourceType, String resourceId, String actor, Instant from,
            Instant to) {
    }
}
