/**
 * API tokens: issue, list and revoke them ({@code /api/v1/tokens}, admin only), verify a presented
 * one, and create the first admin token of an empty database.
 *
 * <ul>
 *   <li>{@link io.weir.controlplane.token.TokenService}: secrets are shown once and stored as
 *       SHA-256 only ({@link io.weir.controlplane.security.TokenSecrets}); it implements the ports
 *       {@link io.weir.controlplane.security.BearerTokens} (authentication) and
 *       {@link io.weir.controlplane.node.NodeCredentials} (the token of a node just registered).
 *   <li>{@link io.weir.controlplane.token.TokenActorCredentials}: implements the audit log's
 *       {@link io.weir.controlplane.audit.ActorCredentials}, so a revoked token's change never
 *       commits.
 *   <li>{@link io.weir.controlplane.token.TokenBootstrap}: the first admin token of an empty
 *       database, and the {@code WEIR_BOOTSTRAP_TOKEN} recovery when no admin token is unexpired.
 * </ul>
 *
 * <p>A token may be bound to a tenant or a data node; this package depends on {@code tenant} and
 * {@code node} to check those bindings, and neither depends on it.
 */
package io.weir.controlplane.token;
