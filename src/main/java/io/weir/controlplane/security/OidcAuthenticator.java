package io.weir.controlplane.security;

import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.security.oauth2.core.OAuth2TokenValidator;
import org.springframework.security.oauth2.jwt.BadJwtException;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtAudienceValidator;
import org.springframework.security.oauth2.jwt.JwtClaimNames;
import org.springframework.security.oauth2.jwt.JwtClaimValidator;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtDecoderInitializationException;
import org.springframework.security.oauth2.jwt.JwtException;
import org.springframework.security.oauth2.jwt.JwtIssuerValidator;
import org.springframework.security.oauth2.jwt.JwtTimestampValidator;
import org.springframework.security.oauth2.jwt.JwtValidators;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;
import org.springframework.security.oauth2.jwt.SupplierJwtDecoder;

/**
 * Accepts OAuth2 resource-server JWTs from the configured OIDC issuer.
 *
 * <p>The issuer's discovery document (and through it the JWKS) is fetched on the first JWT
 * presented, not at start, so the service starts while the identity provider is down; while it
 * is unreachable a JWT answers {@code 503} ({@link IdentityProviderUnavailableException}), not
 * 401, so clients retry instead of discarding a good token.
 *
 * <p>A JWT is accepted when, on top of Spring Security's default checks:
 * <ul>
 *   <li>its signature verifies against the issuer's keys and its {@code iss} is the issuer;
 *   <li>it has an {@code exp}, and is within it and any {@code nbf} (60 s of clock skew, by the
 *       injected clock): a JWT without {@code exp} would be valid forever;
 *   <li>its {@code aud} contains {@link SecurityProperties.Oidc#audience()}, which is required
 *       whenever an issuer is set, so a token the same IdP issued for another application is
 *       refused;
 *   <li>it has a {@code sub}, the actor the audit log names.
 * </ul>
 * Its role comes from {@link SecurityProperties.Oidc#roleClaim()} ({@code admin},
 * {@code tenant-admin} or {@code viewer}; node credentials are always Weir tokens) and its tenant
 * from {@link SecurityProperties.Oidc#tenantClaim()}: a tenant id, or {@value #ALL_TENANTS} for a
 * viewer of the whole cluster. A tenant-admin or viewer without that claim is refused: a
 * forgotten claim mapping must not widen a viewer to every tenant.
 */
final class OidcAuthenticator {

    private static final Logger log = LoggerFactory.getLogger(OidcAuthenticator.class);

    /** The tenant-claim value of a viewer bound to no tenant (cluster-wide). */
    static final String ALL_TENANTS = "*";

    private final JwtDecoder decoder;
    private final SecurityProperties.Oidc settings;

    OidcAuthenticator(SecurityProperties.Oidc settings, Clock clock) {
        this.settings = settings;
        String issuer = settings.issuerUri();
        String audience = settings.audience();
        if (audience == null || audience.isBlank()) {
            throw new IllegalStateException("weir.security.oidc.audience must be set when weir.security.oidc.issuer-uri is:"
                    + " the audience (aud) Weir's JWTs are issued for, so tokens meant for other applications are refused");
        }
        this.decoder = new SupplierJwtDecoder(() -> {
            NimbusJwtDecoder nimbus = NimbusJwtDecoder.withIssuerLocation(issuer).build();
            nimbus.setJwtValidator(validator(issuer, audience, clock));
            return nimbus;
        });
    }

    /** Spring's default checks plus issuer, required expiry by {@code clock}, audience and subject. */
    static OAuth2TokenValidator<Jwt> validator(String issuer, String audience, Clock clock) {
        JwtTimestampValidator timestamps = new JwtTimestampValidator();
        timestamps.setClock(clock);
        timestamps.setAllowEmptyExpiryClaim(false);
        return JwtValidators.createDefaultWithValidators(List.of(
                new JwtIssuerValidator(issuer),
                timestamps,
                new JwtAudienceValidator(audience),
                new JwtClaimValidator<String>(JwtClaimNames.SUB, sub -> sub != null && !sub.isBlank())));
    }

    /** Whether {@code text} has the shape of a JWS: three base64url parts. */
    static boolean looksLikeJwt(String text) {
        return text.chars().filter(c -> c == '.').count() == 2 && !text.startsWith(TokenSecrets.PREFIX);
    }

    /**
     * The caller {@code text} authenticates, if it is a valid JWT granting a Weir role.
     *
     * @throws IdentityProviderUnavailableException if the issuer's discovery document or keys
     *     cannot be fetched, so the JWT can be neither accepted nor refused
     */
    Optional<WeirPrincipal> authenticate(String text) {
        Jwt jwt;
        try {
            jwt = decoder.decode(text);
        } catch (BadJwtException e) {
            // The message names the failed check (signature, expiry, issuer), never the token.
            log.debug("JWT refused: {}", e.getMessage());
            return Optional.empty();
        } catch (JwtDecoderInitializationException | JwtException e) {
            log.warn("The OIDC issuer {} is unreachable, JWTs cannot be verified: {}", settings.issuerUri(), e.getMessage());
            throw new IdentityProviderUnavailableException(e);
        }
        String subject = jwt.getSubject();
        if (subject == null || subject.isBlank()) {
            return Optional.empty();
        }
        Role role;
        try {
            role = Role.fromWire(jwt.getClaimAsString(settings.roleClaim()));
        } catch (IllegalArgumentException e) {
            log.debug("JWT of {} has an unknown role claim", subject);
            return Optional.empty();
        }
        if (role == null || role == Role.NODE) {
            log.debug("JWT of {} grants no Weir role", subject);
            return Optional.empty();
        }
        UUID tenant = null;
        if (role != Role.ADMIN) {
            String tenantClaim = jwt.getClaimAsString(settings.tenantClaim());
            if (tenantClaim == null || (ALL_TENANTS.equals(tenantClaim) && role != Role.VIEWER)) {
                log.debug("JWT of {} ({}) names no tenant", subject, role.wireName());
                return Optional.empty();
            }
            if (!ALL_TENANTS.equals(tenantClaim)) {
                try {
                    tenant = UUID.fromString(tenantClaim);
                } catch (IllegalArgumentException e) {
                    log.debug("JWT of {} has a tenant claim that is not a tenant id", subject);
                    return Optional.empty();
                }
            }
        }
        return Optional.of(new WeirPrincipal(WeirPrincipal.Kind.JWT, subject, subject, role, tenant, null));
    }

    /** The issuer could not be reached to verify a JWT; the request answers 503. */
    static final class IdentityProviderUnavailableException extends RuntimeException {
        IdentityProviderUnavailableException(Throwable cause) {
            super("The OIDC issuer is unreachable", cause);
        }
    }
}
