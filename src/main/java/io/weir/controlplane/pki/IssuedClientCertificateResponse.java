package io.weir.controlplane.pki;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/** A client certificate just issued, with the CA and, when the control plane made it, the key: the only time a key is shown. */
@Schema(name = "IssuedClientCertificate", description = "A client certificate just issued. `privateKeyPem` is present when "
        + "the control plane made the key; it is shown only this once.")
public record IssuedClientCertificateResponse(
        UUID id,
        UUID tenantId,
        String name,
        @Schema(description = "Serial number, lower-case hex.") String serial,
        Instant notBefore,
        Instant notAfter,
        @Schema(description = "The certificate, PEM.") String certificatePem,
        @Schema(description = "The cluster CA certificate, PEM: what clients verify the data nodes against.") String caCertificatePem,
        @Schema(description = "The private key (PKCS#8 PEM), when the request carried no CSR. Store it now: it cannot be read again.")
        @Nullable String privateKeyPem,
        Instant createdAt) {

    /** Without the key: what the audit log records. */
    ClientCertificateResponse withoutKey() {
        return new ClientCertificateResponse(id, tenantId, name, serial, notBefore, notAfter, null, privateKeyPem != null,
                certificatePem, createdAt);
    }

    @Override
    public String toString() {
        return "IssuedClientCertificateResponse[id=" + id + ", tenantId=" + tenantId + ", name=" + name + ", serial=" + serial
                + (privateKeyPem == null ? "" : ", privateKeyPem=<redacted>") + "]";
    }
}
