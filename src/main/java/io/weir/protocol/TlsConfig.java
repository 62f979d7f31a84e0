package io.weir.protocol;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.util.List;

/**
 * The cluster PKI as one data node enforces it on its NBD clients: which CA signs client
 * certificates, which certificates are valid, and which were revoked. Part of
 * {@link DesiredConfig}, so a change reaches the node within the push latency.
 *
 * <p>The contract a data node enforces (the control plane's {@code io.weir.controlplane.pki}
 * issues certificates to it): a client certificate is accepted only if it chains to one of
 * {@link #caCertificatesPem}, is within its validity, names its tenant in exactly one URI subject
 * alternative name {@code urn:weir:tenant:<tenant id>}, and its serial number is listed in
 * {@link #clientCertificates} for that same tenant; a serial in {@link #revoked} is refused (and
 * its live connections closed) whatever else holds.
 *
 * @param caCertificatesPem the cluster CA certificates, PEM; a client certificate must chain to
 *     one of them (a list, so that a CA can be rotated)
 * @param clientCertificates the valid (unrevoked) client certificates of the tenants that have a
 *     volume on this node, ordered by serial
 * @param revoked the revoked client certificates of the same tenants that are still kept (until
 *     they expire), ordered by serial
 */
@JsonClassDescription("The cluster PKI as a data node enforces it on NBD clients: the CA, the valid client certificates "
        + "of the tenants on this node, and the revoked ones.")
public record TlsConfig(
        @JsonPropertyDescription("The cluster CA certificates (PEM); a client certificate must chain to one of them.")
        @JsonSetter(nulls = Nulls.AS_EMPTY) List<String> caCertificatesPem,
        @JsonPropertyDescription("The valid client certificates of the tenants with a volume on this node, by serial.")
        @JsonSetter(nulls = Nulls.AS_EMPTY) List<ClientCertificateEntry> clientCertificates,
        @JsonPropertyDescription("Revoked client certificates of the same tenants that have not expired yet, by serial.")
        @JsonSetter(nulls = Nulls.AS_EMPTY) List<ClientCertificateEntry> revoked) {

    public TlsConfig {
        caCertificatesPem = caCertificatesPem == null ? List.of() : List.copyOf(caCertificatesPem);
        clientCertificates = clientCertificates == null ? List.of() : List.copyOf(clientCertificates);
        revoked = revoked == null ? List.of() : List.copyOf(revoked);
    }
}
