package io.weir.controlplane.pki;

import io.swagger.v3.oas.annotations.media.Schema;
import io.weir.controlplane.web.ResourceName;
import jakarta.validation.constraints.Size;
import org.jspecify.annotations.Nullable;

/** The body of a client-certificate create. */
@Schema(name = "ClientCertificateRequest", description = "A new client certificate of a tenant: its name and, optionally, "
        + "a PEM certificate signing request whose key it certifies. Without a request the control plane makes the key "
        + "and returns it once.")
public record ClientCertificateRequest(
        @Schema(description = "Name, 1-63 characters of [a-z0-9-]; the certificate's CN.", example = "backup-host",
                requiredMode = Schema.RequiredMode.REQUIRED)
        @ResourceName String name,
        @Schema(description = "A PEM PKCS#10 request (BEGIN CERTIFICATE REQUEST), RSA >= 2048 bits or EC P-256/P-384. Only "
                + "its key is used: the subject and names come from the tenant and the name.")
        @Size(max = 16384) @Nullable String csr) {
}
