package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * One client certificate in a {@link TlsConfig}: valid or revoked.
 *
 * @param serial the certificate's serial number, lower-case hex without leading zeros (as
 *     {@code BigInteger.toString(16)} writes it)
 * @param tenantId the tenant it was issued to; the certificate names it as the URI subject
 *     alternative name {@code urn:weir:tenant:<tenantId>}
 * @param notAfter the end of its validity
 */
@JsonClassDescription("A client certificate of a tenant, by serial number.")
public record ClientCertificateEntry(
        @JsonPropertyDescription("Serial number, lower-case hex without leading zeros.") String serial,
        @JsonPropertyDescription("The tenant it was issued to (its URI SAN urn:weir:tenant:<id>).") UUID tenantId,
        @JsonPropertyDescription("End of validity.") Instant notAfter) {

    public ClientCertificateEntry {
        Objects.requireNonNull(serial, "serial");
        Objects.requireNonNull(tenantId, "tenantId");
        Objects.requireNonNull(notAfter, "notAfter");
    }
}
