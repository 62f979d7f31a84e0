package io.weir.controlplane.security;

import io.weir.controlplane.web.ApiException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Component;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * What the caller of the current request may see, for the checks only a controller or service
 * can make because only it knows which tenant or node a resource belongs to.
 *
 * <p>The filter chain has already checked the caller's role against the endpoint; this class
 * narrows by binding. A caller bound to tenant A that names anything of tenant B gets
 * {@code 404}, exactly as if it did not exist, so nothing about other tenants leaks. Lists are
 * narrowed to the bound tenant instead.
 *
 * <p>Outside any HTTP request (no {@link RequestContextHolder request attributes} on the thread:
 * the bootstrap, start-up work) the caller is the service itself, {@link WeirPrincipal#SYSTEM},
 * which sees everything. Inside a request there must be a Weir authentication: an anonymous
 * request that reaches a check (which the filter chain should have stopped) answers 401 rather
 * than being taken for the system.
 */
@Component
public class AccessScope {

    /**
     * The caller of the current request, or {@link WeirPrincipal#SYSTEM} outside requests.
     *
     * @throws ApiException 401 inside a request that carries no Weir authentication
     */
    public WeirPrincipal current() {
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        if (auth instanceof WeirAuthentication weir) {
            return weir.getPrincipal();
        }
        if (RequestContextHolder.getRequestAttributes() == null) {
            return WeirPrincipal.SYSTEM;
        }
        throw new ApiException(HttpStatus.UNAUTHORIZED, "Unauthorized",
                "This request needs a bearer token: send 'Authorization: Bearer <token>'", Map.of());
    }

    /** The tenant the caller is bound to, if any. */
    public Optional<UUID> boundTenant() {
        WeirPrincipal p = current();
        return p.role() == Role.ADMIN ? Optional.empty() : Optional.ofNullable(p.tenantId());
    }

    /**
     * Whether the caller may see things of {@code tenantId}. A node token sees no tenant's
     * resources through the API (the filter chain keeps it off those endpoints anyway).
     */
    public boolean canSeeTenant(UUID tenantId) {
        if (current().role() == Role.NODE) {
            return false;
        }
        return boundTenant().map(b -> b.equals(tenantId)).orElse(true);
    }

    /**
     * Answers 404 for {@code kind id} unless the caller may see tenant {@code tenantId}.
     *
     * @param kind the resource kind named in the problem, such as "Volume"
     * @param id the id the caller asked for
     */
    public void requireTenant(UUID tenantId, String kind, Object id) {
        if (!canSeeTenant(tenantId)) {
            throw ApiException.notFound(kind, id);
        }
    }

    /**
     * The tenant filter of a list the caller asked to filter by {@code requested} (null for no
     * filter): the bound tenant when it gave none, the requested one when it may see it, and
     * {@link TenantFilter#NOTHING} when it asked for a tenant it may not see.
     */
    public TenantFilter listFilter(UUID requested) {
        if (current().role() == Role.NODE) {
            return TenantFilter.NOTHING;
        }
        Optional<UUID> bound = boundTenant();
        if (bound.isEmpty()) {
            return new TenantFilter(true, requested);
        }
        if (requested != null && !requested.equals(bound.get())) {
            return TenantFilter.NOTHING;
        }
        return new TenantFilter(true, bound.get());
    }

    /**
     * How a list is narrowed to what the caller may see.
     *
     * @param visible false when the list is empty whatever is stored
     * @param tenantId the tenant to filter by, or null for every tenant
     */
    public record TenantFilter(boolean visible, UUID tenantId) {

        /** The caller asked for another tenant's things: the list is empty. */
        public static final TenantFilter NOTHING = new TenantFilter(false, null);
    }

    /** Answers 404 for {@code Node nodeId} when the caller is a node token of another node. */
    public void requireNode(UUID nodeId) {
        WeirPrincipal p = current();
        if (p.role() == Role.NODE && !nodeId.equals(p.nodeId())) {
            throw ApiException.notFound("Node", nodeId);
        }
        if (p.role() != Role.NODE && !p.clusterWide()) {
            throw forbidden("Data nodes are visible to admins and unbound viewers only");
        }
    }

    /** Answers 403 unless the caller is an admin. */
    public void requireAdmin(String what) {
        if (current().role() != Role.ADMIN) {
            throw forbidden("Only an admin may " + what);
        }
    }

    static ApiException forbidden(String detail) {
        return new ApiException(HttpStatus.FORBIDDEN, "Forbidden", detail, Map.of());
    }
}
