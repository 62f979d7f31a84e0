package io.weir.controlplane.security;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.springframework.http.HttpHeaders;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextHolderStrategy;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Authenticates {@code Authorization: Bearer} credentials: Weir tokens, and JWTs when an OIDC
 * issuer is configured.
 *
 * <p>How a request flows:
 * <ol>
 *   <li>No {@code Authorization} header: the request continues anonymously; the authorization
 *       rules then answer 401 unless the endpoint is public.
 *   <li>The header is not exactly one {@code Bearer <b64token>} of at most
 *       {@link TokenSecrets#MAX_LENGTH} characters, or the credential does not verify: the
 *       failure is counted and the answer is 401, or 429 while the remote address is blocked by
 *       {@link AuthFailureLimiter}.
 *   <li>A JWT while the OIDC issuer is unreachable: 503 with {@code Retry-After}, not counted.
 *   <li>A credential that verifies passes even from a blocked address: the block stops
 *       guessing, and a valid token is not a guess.
 *   <li>Otherwise the caller's {@link WeirAuthentication} is the security context of this
 *       request only: nothing is cached, so a revoke is seen by the next request.
 * </ol>
 * The credential is never logged nor echoed; the 401 says only that it was refused.
 */
final class BearerTokenFilter extends OncePerRequestFilter {

    private final BearerTokens tokens;
    private final OidcAuthenticator oidc;
    private final AuthFailureLimiter limiter;
    private final SecurityContextHolderStrategy contexts = SecurityContextHolder.getContextHolderStrategy();

    /** @param oidc null when no issuer is configured */
    BearerTokenFilter(BearerTokens tokens, OidcAuthenticator oidc, AuthFailureLimiter limiter) {
        this.tokens = tokens;
        this.oidc = oidc;
        this.limiter = limiter;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        List<String> headers = Collections.list(request.getHeaders(HttpHeaders.AUTHORIZATION));
        if (headers.isEmpty()) {
            chain.doFilter(request, response);
            return;
        }
        String address = request.getRemoteAddr();
        Optional<WeirPrincipal> principal;
        try {
            principal = headers.size() == 1 ? authenticate(headers.get(0)) : Optional.empty();
        } catch (OidcAuthenticator.IdentityProviderUnavailableException e) {
            // Not the client's fault, so not counted as a failure.
            ProblemResponses.identityProviderUnavailable(response);
            return;
        }
        if (principal.isEmpty()) {
            Duration blocked = limiter.recordFailure(address, describe(headers));
            if (!blocked.isZero()) {
                ProblemResponses.tooManyFailures(response, blocked);
            } else {
                ProblemResponses.invalidCredentials(response);
            }
            return;
        }
        SecurityContext context = contexts.createEmptyContext();
        context.setAuthentication(new WeirAuthentication(principal.get()));
        contexts.setContext(context);
        try {
            chain.doFilter(request, response);
        } finally {
            contexts.clearContext();
        }
    }

    /** What the refused credential was, for the log: never any part of a secret. */
    static String describe(List<String> headers) {
        if (headers.size() != 1) {
            return headers.size() + " Authorization headers";
        }
        String header = headers.get(0);
        if (header.length() <= 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return "an Authorization header that is not a bearer token";
        }
        String credential = header.substring(7).trim();
        if (TokenSecrets.isWeirFormat(credential)) {
            return "token " + TokenSecrets.idOf(credential);
        }
        if (OidcAuthenticator.looksLikeJwt(credential)) {
            return "a JWT";
        }
        return "a bearer credential not in the weir_ format";
    }

    private Optional<WeirPrincipal> authenticate(String header) {
        if (header.length() > TokenSecrets.MAX_LENGTH + 7
                || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        String credential = header.substring(7).trim();
        if (!TokenSecrets.wellFormed(credential)) {
            return Optional.empty();
        }
        if (TokenSecrets.isWeirFormat(credential)) {
            return tokens.authenticate(credential);
        }
        if (oidc != null && OidcAuthenticator.looksLikeJwt(credential)) {
            return oidc.authenticate(credential);
        }
        // An operator-chosen bootstrap token, found by the hash of its text.
        return tokens.authenticate(credential);
    }
}
