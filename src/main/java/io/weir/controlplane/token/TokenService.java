package io.weir.controlplane.token;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.node.NodeCredentials;
import io.weir.controlplane.node.NodeDeleting;
import io.weir.controlplane.node.NodeService;
import io.weir.controlplane.tenant.TenantDeleting;
import io.weir.controlplane.security.BearerTokens;
import io.weir.controlplane.security.Role;
import io.weir.controlplane.security.TokenSecrets;
import io.weir.controlplane.security.WeirPrincipal;
import io.weir.controlplane.tenant.TenantService;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.ETags;
import io.weir.controlplane.web.FieldError;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.RequestValidationException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.EventListener;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.data.domain.Pageable;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * API tokens: issue, list, revoke, and verify a presented bearer secret.
 *
 * <p>Verification reads the token row on every request and caches nothing, so a revoke (a
 * delete) or an expiry takes effect on the very next request. A generated token is looked up by
 * primary key (the id is part of the secret's text, see {@link TokenSecrets}) and checked by a
 * constant-time hash comparison; an operator-chosen one, whose text names no id, by the unique
 * index on the hash of its text.
 */
@Service
public class TokenService implements BearerTokens, NodeCredentials {

    /** Listeners that remove dependants run after those that veto the delete (default order). */
    static final int REMOVE_AFTER_VETOES = Ordered.LOWEST_PRECEDENCE;

    /** The PostgreSQL advisory lock key that serialises bootstraps ("weirboot"). */
    private static final long BOOTSTRAP_LOCK = 0x77656972626f6f74L;

    private final ApiTokenRepository tokens;
    private final TenantService tenants;
    private final ObjectProvider<NodeService> nodes;
    private final AuditLog audit;
    private final Clock clock;
    private final JdbcClient jdbc;
    private final ApplicationEventPublisher events;

    TokenService(ApiTokenRepository tokens, TenantService tenants, ObjectProvider<NodeService> nodes, AuditLog audit,
            Clock clock, JdbcClient jdbc, ApplicationEventPublisher events) {
        this.jdbc = jdbc;
        this.events = events;
        this.tokens = tokens;
        this.tenants = tenants;
        this.nodes = nodes;
        this.audit = audit;
        this.clock = clock;
    }

    /** Creates a token and returns it with its secret, which is never shown again. */
    @Transactional
    public IssuedTokenResponse issue(TokenRequest request) {
        validate(request);
        if (tokens.existsByName(request.name())) {
            throw ApiException.conflict("A token named '" + request.name() + "' already exists");
        }
        UUID id = UUID.randomUUID();
        String secret = TokenSecrets.generate(id);
        return store(id, request, secret);
    }

    /**
     * Issues the token of a data node just created, in the caller's transaction: what the node
     * create answers as {@code token}. Named {@code node-<nodeId>}.
     *
     * @return the secret, shown once
     */
    @Override
    @Transactional
    public String issueForNode(UUID nodeId) {
        UUID id = UUID.randomUUID();
        String secret = TokenSecrets.generate(id);
        store(id, new TokenRequest("node-" + nodeId, Role.NODE, null, nodeId, null), secret);
        return secret;
    }

    @Transactional(readOnly = true)
    public PageResponse<TokenResponse> list(Role role, Pageable pageable) {
        return PageResponse.of(role == null ? tokens.findAll(pageable) : tokens.findByRole(role, pageable),
                TokenResponse::from);
    }

    /**
     * Revokes a token: it stops working on the next request. The last unexpired admin token
     * cannot be revoked, since nothing could then manage the service (expired admin tokens do not
     * count: they manage nothing). Concurrent revokes of admin tokens are serialised by locking
     * every unexpired admin row ({@code FOR UPDATE}, in id order), so two of them cannot each see
     * the other's token and both succeed. If every admin token has expired anyway, see
     * {@link TokenBootstrap}'s recovery.
     */
    @Transactional
    public void revoke(UUID id, String ifMatch) {
        ApiToken token = tokens.findById(id).orElseThrow(() -> ApiException.notFound("Token", id));
        ETags.checkIfMatch(ifMatch, token.getVersion());
        if (token.getRole() == Role.ADMIN) {
            List<UUID> liveAdmins = lockUnexpiredAdmins();
            if (liveAdmins.contains(id) && liveAdmins.size() <= 1) {
                throw ApiException.conflict("Token " + id + " is the last unexpired admin token; create another admin token first");
            }
        }
        delete(token);
    }

    /**
     * Revokes every token bound to the tenant being deleted, each recorded in the audit log as a
     * {@code token.delete} of its own, in the deleting transaction (so all of it commits or none).
     * The schema does not cascade: a token bound concurrently makes the tenant's delete fail on
     * the foreign key instead of vanishing unrecorded.
     */
    @EventListener
    @Order(REMOVE_AFTER_VETOES)
    @Transactional
    void onTenantDeleting(TenantDeleting event) {
        tokens.findForUpdateByTenantId(event.tenantId()).forEach(this::delete);
    }

    /** Revokes the tokens of the data node being deleted, as {@link #onTenantDeleting} does. */
    @EventListener
    @Order(REMOVE_AFTER_VETOES)
    @Transactional
    void onNodeDeleting(NodeDeleting event) {
        tokens.findForUpdateByNodeId(event.nodeId()).forEach(this::delete);
    }

    private void delete(ApiToken token) {
        TokenResponse before = TokenResponse.from(token);
        tokens.delete(token);
        tokens.flush();
        audit.record("token.delete", "token", token.getId(), token.getTenantId(), before, null);
        events.publishEvent(new TokenRevoked(token.getId(), token.getName()));
        // Delivered when this transaction commits, to every replica holding a connection the token opened.
        jdbc.sql("SELECT pg_notify(?, ?)").param(REVOKED_CHANNEL).param(token.getId().toString())
                .query((rs, n) -> 1).list();
    }

    @Override
    @Transactional(readOnly = true)
    public Set<UUID> unexpired(Collection<UUID> tokenIds) {
        if (tokenIds.isEmpty()) {
            return Set.of();
        }
        return new HashSet<>(jdbc.sql("SELECT id FROM api_token WHERE id IN (:ids) AND (expires_at IS NULL OR expires_at > :now)")
                .param("ids", List.copyOf(tokenIds))
                .param("now", java.sql.Timestamp.from(clock.instant()))
                .query(UUID.class)
                .list());
    }

    /** Whether a token with this id exists (expired or not). */
    @Transactional(readOnly = true)
    boolean exists(UUID id) {
        return tokens.existsById(id);
    }

    /**
     * The caller a presented bearer text authenticates, if it names a stored, unexpired token
     * whose hash matches.
     */
    @Override
    @Transactional(readOnly = true)
    public Optional<WeirPrincipal> authenticate(String text) {
        if (!TokenSecrets.wellFormed(text)) {
            return Optional.empty();
        }
        Optional<ApiToken> found;
        boolean matches;
        if (TokenSecrets.isWeirFormat(text)) {
            found = tokens.findById(TokenSecrets.idOf(text));
            // Hash even when nothing was found, so timing does not tell a known id from an unknown one.
            matches = TokenSecrets.matches(text, found.map(ApiToken::getSecretHash).orElseGet(() -> new byte[32]));
        } else {
            found = tokens.findBySecretHash(TokenSecrets.hash(text));
            matches = found.isPresent();
        }
        if (found.isEmpty() || !matches || found.get().isExpiredAt(clock.instant())) {
            return Optional.empty();
        }
        ApiToken t = found.get();
        return Optional.of(new WeirPrincipal(WeirPrincipal.Kind.TOKEN, t.getId().toString(), t.getName(), t.getRole(),
                t.getTenantId(), t.getNodeId()));
    }

    /** Locks the unexpired admin tokens' rows for the caller's transaction and answers their ids. */
    private List<UUID> lockUnexpiredAdmins() {
        return jdbc.sql("""
                        SELECT id FROM api_token WHERE role = 'admin' AND (expires_at IS NULL OR expires_at > ?)
                        ORDER BY id FOR UPDATE""")
                .param(java.sql.Timestamp.from(clock.instant()))
                .query(UUID.class)
                .list();
    }

    /**
     * Takes the bootstrap lock for the rest of the caller's transaction and answers whether the
     * database still holds no token.
     */
    @Transactional(propagation = Propagation.MANDATORY)
    boolean lockForBootstrap() {
        jdbc.sql("SELECT pg_advisory_xact_lock(?)").param(BOOTSTRAP_LOCK).query((rs, n) -> 1).list();
        return tokens.count() == 0;
    }

    /**
     * Whether no admin token is unexpired, with the bootstrap lock and the unexpired admin rows
     * locked for the caller's transaction: the condition of {@link TokenBootstrap}'s recovery.
     */
    @Transactional(propagation = Propagation.MANDATORY)
    boolean lockForAdminRecovery() {
        jdbc.sql("SELECT pg_advisory_xact_lock(?)").param(BOOTSTRAP_LOCK).query((rs, n) -> 1).list();
        return lockUnexpiredAdmins().isEmpty();
    }

    /**
     * Stores an admin token with the operator-chosen {@code secret} when no admin token is
     * unexpired, replacing any token that has the same secret (or, for a weir_ text, the same
     * id). Named {@link TokenBootstrap#NAME}, or that with a suffix if the name is taken.
     *
     * @return the name it was stored under
     */
    @Transactional(propagation = Propagation.MANDATORY)
    String storeRecoveryAdmin(String secret) {
        UUID id = TokenSecrets.isWeirFormat(secret) ? TokenSecrets.idOf(secret) : UUID.randomUUID();
        jdbc.sql("DELETE FROM api_token WHERE secret_hash = ? OR id = ?").param(TokenSecrets.hash(secret)).param(id).update();
        String name = TokenBootstrap.NAME;
        if (tokens.existsByName(name)) {
            name = TokenBootstrap.NAME + "-" + UUID.randomUUID().toString().substring(0, 8);
        }
        store(id, new TokenRequest(name, Role.ADMIN, null, null, null), secret);
        return name;
    }

    /**
     * Stores the first admin token, with the given secret text. For {@link TokenBootstrap}. A
     * secret in the Weir format keeps the id it names; any other gets a random id, never one
     * derived from the secret.
     */
    @Transactional
    void storeBootstrapAdmin(String name, String secret) {
        UUID id = TokenSecrets.isWeirFormat(secret) ? TokenSecrets.idOf(secret) : UUID.randomUUID();
        store(id, new TokenRequest(name, Role.ADMIN, null, null, null), secret);
    }

    private IssuedTokenResponse store(UUID id, TokenRequest request, String secret) {
        ApiToken token = new ApiToken(id, request.name(), request.role(), request.tenantId(), request.nodeId(),
                TokenSecrets.hash(secret), request.expiresAt());
        TokenResponse created = TokenResponse.from(tokens.saveAndFlush(token));
        audit.record("token.create", "token", id, request.tenantId(), null, created);
        return IssuedTokenResponse.of(created, secret);
    }

    private void validate(TokenRequest r) {
        List<FieldError> errors = new ArrayList<>();
        switch (r.role()) {
            case ADMIN -> {
                forbid(errors, "tenantId", r.tenantId(), "an admin token is not bound to a tenant");
                forbid(errors, "nodeId", r.nodeId(), "only a node token is bound to a node");
            }
            case TENANT_ADMIN -> {
                if (r.tenantId() == null) {
                    errors.add(new FieldError("tenantId", "a tenant-admin token must name its tenant"));
                }
                forbid(errors, "nodeId", r.nodeId(), "only a node token is bound to a node");
            }
            case VIEWER -> forbid(errors, "nodeId", r.nodeId(), "only a node token is bound to a node");
            case NODE -> {
                if (r.nodeId() == null) {
                    errors.add(new FieldError("nodeId", "a node token must name its node"));
                }
                forbid(errors, "tenantId", r.tenantId(), "a node token is not bound to a tenant");
            }
        }
        if (r.expiresAt() != null && !r.expiresAt().isAfter(clock.instant())) {
            errors.add(new FieldError("expiresAt", "must be in the future"));
        }
        if (errors.isEmpty() && r.tenantId() != null && !exists(() -> tenants.require(r.tenantId()))) {
            errors.add(new FieldError("tenantId", "no tenant has this id"));
        }
        if (errors.isEmpty() && r.nodeId() != null && !nodes.getObject().exists(r.nodeId())) {
            errors.add(new FieldError("nodeId", "no data node has this id"));
        }
        if (!errors.isEmpty()) {
            throw new RequestValidationException(errors);
        }
    }

    private static void forbid(List<FieldError> errors, String field, Object value, String message) {
        if (value != null) {
            errors.add(new FieldError(field, message));
        }
    }

    private static boolean exists(Runnable lookup) {
        try {
            lookup.run();
            return true;
        } catch (ApiException e) {
            return false;
        }
    }
}
