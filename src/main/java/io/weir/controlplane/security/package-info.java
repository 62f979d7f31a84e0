/**
 * Who may do what: bearer tokens, roles, the filter chain, the bootstrap admin token, optional
 * OIDC JWTs and the limit on failed authentications.
 *
 * <ul>
 *   <li>{@link io.weir.controlplane.security.SecurityConfiguration}: the stateless filter chain and
 *       its per-role rules; 401/403/429 are problem+json.
 *   <li>{@link io.weir.controlplane.security.TokenService}: tokens ({@code /api/v1/tokens}); secrets
 *       are shown once and stored as SHA-256 only ({@link io.weir.controlplane.security.TokenSecrets}).
 *   <li>{@link io.weir.controlplane.security.AccessScope}: the tenant and node bindings that
 *       controllers apply, answering 404 for anything of another tenant or node.
 *   <li>{@link io.weir.controlplane.security.TokenBootstrap}: the first admin token of an empty
 *       database, and the {@code WEIR_BOOTSTRAP_TOKEN} recovery when no admin token is unexpired.
 *   <li>{@link io.weir.controlplane.security.AuthFailureLimiter}: 429 after repeated failed
 *       authentications per address (IPv6: per /64), logged once per address per window.
 * </ul>
 */
package io.weir.controlplane.security;
