package io.weir.controlplane.pki;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A client certificate as listed: never with a key. */
@Schema(name = "ClientCertificate", description = "A tenant's client certificate for the data nodes' NBD over TLS. "
        + "It names its tenant as the URI SAN urn:weir:tenant:<tenantId>.")
public record ClientCertificateResponse(
        UUID id,
        UUID tenantId,
        String name,
        @Schema(description = "Serial number, lower-case hex.") String serial,
        Instant notBefore,
        Instant notAfter,
        @Schema(description = "When it was revoked; null while valid.") @Nullable Instant revokedAt,
        @Schema(description = "Whether the control plane made its key (returned once, at creation).") boolean keyGenerated,
        @Schema(description = "The certificate, PEM.") String certificatePem,
        Instant createdAt) {
}
