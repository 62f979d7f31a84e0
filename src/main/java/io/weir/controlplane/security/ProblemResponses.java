package io.weir.controlplane.security;

import io.weir.controlplane.web.Problems;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.access.AccessDeniedHandler;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.security.web.firewall.RequestRejectedHandler;

/**
 * The problem+json answers of the security layer: 401 (with {@code WWW-Authenticate} as RFC 6750
 * asks), 403 and 429. None of them ever repeats what the client sent as credentials.
 */
final class ProblemResponses implements AuthenticationEntryPoint, AccessDeniedHandler, RequestRejectedHandler {

    private final AuthFailureLimiter limiter;

    ProblemResponses(AuthFailureLimiter limiter) {
        this.limiter = limiter;
    }

    /** No credentials, on an endpoint that needs them. */
    @Override
    public void commence(HttpServletRequest request, HttpServletResponse response, AuthenticationException e)
            throws IOException {
        Duration blocked = limiter.blockedFor(request.getRemoteAddr());
        if (!blocked.isZero()) {
            tooManyFailures(response, blocked);
            return;
        }
        response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"weir\"");
        Problems.write(response, HttpStatus.UNAUTHORIZED, "Unauthorized",
                "This endpoint needs a bearer token: send 'Authorization: Bearer <token>'");
    }

    /** Credentials that are malformed, unknown, expired or revoked. */
    static void invalidCredentials(HttpServletResponse response) throws IOException {
        response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"weir\", error=\"invalid_token\"");
        Problems.write(response, HttpStatus.UNAUTHORIZED, "Unauthorized",
                "The bearer token is malformed, unknown, expired or revoked");
    }

    static void tooManyFailures(HttpServletResponse response, Duration blocked) throws IOException {
        long seconds = Math.max(1, (blocked.toMillis() + 999) / 1000);
        response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
        Problems.write(response, HttpStatus.TOO_MANY_REQUESTS, "Too many failed authentications",
                "Too many failed authentications from this address; retry after " + seconds + " s");
    }

    /** How long a client should wait before retrying a JWT while the OIDC issuer is down. */
    static final long IDP_RETRY_SECONDS = 30;

    /** The credential is a JWT, and the OIDC issuer needed to verify it cannot be reached. */
    static void identityProviderUnavailable(HttpServletResponse response) throws IOException {
        response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(IDP_RETRY_SECONDS));
        Problems.write(response, HttpStatus.SERVICE_UNAVAILABLE, "Identity provider unavailable",
                "The OIDC issuer that signs JWTs cannot be reached to verify this token; retry later");
    }

    /**
     * A request the firewall refused, such as one with control characters in a header. When the
     * offending header is {@code Authorization} (say, raw UTF-8 bytes in a token) the answer is
     * the same 401 as for any other bad credential, and it is counted as a failure; otherwise 400.
     */
    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, RequestRejectedException e)
            throws IOException {
        String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
        if (authorization != null && !printableAscii(authorization)) {
            Duration blocked = limiter.recordFailure(request.getRemoteAddr());
            if (!blocked.isZero()) {
                tooManyFailures(response, blocked);
            } else {
                invalidCredentials(response);
            }
            return;
        }
        Problems.write(response, HttpStatus.BAD_REQUEST, "Request rejected",
                "The request has characters, a header or a path that the server does not accept");
    }

    private static boolean printableAscii(String s) {
        return s.chars().allMatch(c -> c >= 0x20 && c < 0x7F);
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, AccessDeniedException e)
            throws IOException {
        Problems.write(response, HttpStatus.FORBIDDEN, "Forbidden", "This token's role does not allow this request");
    }
}
