/**
 * Authentication and scoping: who the caller of a request is, and what it may see. This package
 * depends on no feature package; the features depend on it.
 *
 * <ul>
 *   <li>{@link io.weir.controlplane.security.SecurityConfiguration}: the stateless filter chain and
 *       its per-role rules; 401/403/429 are problem+json.
 *   <li>{@link io.weir.controlplane.security.BearerTokenFilter}: reads {@code Authorization: Bearer}
 *       and asks {@link io.weir.controlplane.security.BearerTokens} (a port this package owns, which
 *       the {@code token} feature implements) or, for JWTs when OIDC is configured,
 *       {@link io.weir.controlplane.security.OidcAuthenticator}. Weir's own tokens are recognised
 *       first, whatever their shape.
 *   <li>{@link io.weir.controlplane.security.TokenSecrets}: the text of Weir tokens
 *       ({@code weir_<id>_<secret>}), how a presented one names its token and how it is verified.
 *   <li>{@link io.weir.controlplane.security.AccessScope}: the tenant and node bindings that
 *       controllers and services apply, answering 404 for anything of another tenant or node.
 *   <li>{@link io.weir.controlplane.security.AuthFailureLimiter}: 429 after repeated failed
 *       authentications per address (IPv6: per /64), logged once per address per window.
 * </ul>
 */
package io.weir.controlplane.security;
