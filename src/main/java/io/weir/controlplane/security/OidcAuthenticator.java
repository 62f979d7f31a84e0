package io.weir.controlplane.security;

import java.time.Clock;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.security.oauth2.core.DelegatingOAuth2TokenValidator;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtException;
import org.springframework.security.oauth2.jwt.JwtIssuerValidator;
import org.springframework.security.oauth2.jwt.JwtTimestampValidator;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;
import org.springframework.security.oauth2.jwt.SupplierJwtDecoder;

/**
 * Accepts OAuth2 resource-server JWTs from the configured OIDC issuer.
 *
 * <p>The issuer's discovery document (and through it the JWKS) is fetched on the first JWT
 * presented, not at start, so the service starts while the identity provider is down. A JWT is
 * accepted when its signature verifies against the issuer's keys, its {@code iss} is the
 * issuer and it is within its {@code exp}/{@code nbf} (60 s of clock skew, by the injected clock).
 * Its role comes from {@link SecurityProperties.Oidc#roleClaim()} ({@code admin},
 * {@code tenant-admin} or {@code viewer}; node credentials are always Weir tokens) and its
 * tenant, a tenant id, from {@link SecurityProperties.Oidc#tenantClaim()}.
 */
final class OidcAuthenticator {

    private static final Logger log = LoggerFactory.getLogger(OidcAuthenticator.class);

    private final JwtDecoder decoder;
    private final SecurityProperties.Oidc settings;

    OidcAuthenticator(SecurityProperties.Oidc settings, Clock clock) {
        this.settings = settings;
        String issuer = settings.issuerUri();
        this.decoder = new SupplierJwtDecoder(() -> {
            NimbusJwtDecoder nimbus = NimbusJwtDecoder.withIssuerLocation(issuer).build();
            JwtTimestampValidator timestamps = new JwtTimestampValidator();
            timestamps.setClock(clock);
            nimbus.setJwtValidator(new DelegatingOAuth2TokenValidator<>(new JwtIssuerValidator(issuer), timestamps));
            return nimbus;
        });
    }

    /** Whether {@code text} has the shape of a JWS: three base64url parts. */
    static boolean looksLikeJwt(String text) {
        return text.chars().filter(c -> c == '.').count() == 2 && !text.startsWith(TokenSecrets.PREFIX);
    }

    /** The caller {@code text} authenticates, if it is a valid JWT granting a Weir role. */
    Optional<WeirPrincipal> authenticate(String text) {
        Jwt jwt;
        try {
            jwt = decoder.decode(text);
        } catch (JwtException e) {
            // The message names the failed check (signature, expiry, issuer), never the token.
            log.debug("JWT refused: {}", e.getMessage());
            return Optional.empty();
        }
        Role role;
        try {
            role = Role.fromWire(jwt.getClaimAsString(settings.roleClaim()));
        } catch (IllegalArgumentException e) {
            log.debug("JWT of {} has an unknown role claim", jwt.getSubject());
            return Optional.empty();
        }
        if (role == null || role == Role.NODE) {
            log.debug("JWT of {} grants no Weir role", jwt.getSubject());
            return Optional.empty();
        }
        UUID tenant = null;
        String tenantClaim = jwt.getClaimAsString(settings.tenantClaim());
        if (tenantClaim != null) {
            try {
                tenant = UUID.fromString(tenantClaim);
            } catch (IllegalArgumentException e) {
                log.debug("JWT of {} has a tenant claim that is not a tenant id", jwt.getSubject());
                return Optional.empty();
            }
        }
        if (role == Role.TENANT_ADMIN && tenant == null) {
            return Optional.empty();
        }
        if (role == Role.ADMIN) {
            tenant = null;
        }
        String subject = jwt.getSubject() == null ? "unknown" : jwt.getSubject();
        return Optional.of(new WeirPrincipal(WeirPrincipal.Kind.JWT, subject, subject, role, tenant, null));
    }
}
