package io.weir.controlplane.security;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings under {@code weir.security}.
 *
 * @param bootstrapToken the first admin token's secret ({@code WEIR_BOOTSTRAP_TOKEN}); used only
 *     when the database holds no token. If absent, one is generated and written to
 *     {@code <weir.data-dir>/admin-token}
 * @param oidc optional OAuth2 / OIDC resource-server settings
 * @param authFailures the limit on failed authentications per remote address
 */
@ConfigurationProperties("weir.security")
public record SecurityProperties(
        String bootstrapToken,
        @DefaultValue Oidc oidc,
        @DefaultValue AuthFailures authFailures) {

    /**
     * JWTs from an OIDC issuer, accepted beside Weir tokens when {@code issuerUri} is set.
     *
     * @param issuerUri the issuer; its discovery document names the JWKS
     * @param audience the {@code aud} Weir's JWTs must carry; required when {@code issuerUri} is set
     * @param roleClaim the claim holding the Weir role (admin, tenant-admin, viewer)
     * @param tenantClaim the claim holding the tenant id a tenant-admin or viewer is bound to;
     *     {@code *} makes a viewer cluster-wide, and a tenant-admin or viewer without it is refused
     */
    public record Oidc(
            String issuerUri,
            String audience,
            @DefaultValue("weir_role") String roleClaim,
            @DefaultValue("weir_tenant") String tenantClaim) {

        public boolean enabled() {
            return issuerUri != null && !issuerUri.isBlank();
        }
    }

    /**
     * @param maxPerWindow failures allowed per address per window; the next one answers 429
     * @param window the length of a counting window
     */
    public record AuthFailures(
            @DefaultValue("10") int maxPerWindow,
            @DefaultValue("1m") Duration window) {
    }

    @Override
    public String toString() {
        return "SecurityProperties[bootstrapToken=" + (bootstrapToken == null ? "unset" : "<redacted>")
                + ", oidc=" + oidc + ", authFailures=" + authFailures + "]";
    }
}
