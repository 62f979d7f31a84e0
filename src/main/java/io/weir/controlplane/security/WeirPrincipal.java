package io.weir.controlplane.security;

import java.util.UUID;

/**
 * The authenticated caller of one request.
 *
 * @param kind how the caller authenticated
 * @param id the token id, or the JWT subject
 * @param name the token's name, or the JWT subject
 * @param role what the caller may do
 * @param tenantId the tenant the caller is bound to, or null for all tenants
 * @param nodeId the data node a node caller is bound to, or null
 */
public record WeirPrincipal(Kind kind, String id, String name, Role role, UUID tenantId, UUID nodeId) {

    /** How a caller authenticated. */
    public enum Kind {
        /** A Weir API token. */
        TOKEN,
        /** An OAuth2 / OIDC JWT. */
        JWT,
        /** Work the service does on its own, such as the bootstrap. */
        SYSTEM
    }

    /** The principal of work the service does by itself, outside any request. */
    public static final WeirPrincipal SYSTEM = new WeirPrincipal(Kind.SYSTEM, "system", "system", Role.ADMIN, null, null);

    /** Whether this caller sees cluster-wide resources (nodes, task shares, metrics). */
    public boolean clusterWide() {
        return role == Role.ADMIN || (role == Role.VIEWER && tenantId == null);
    }
}
