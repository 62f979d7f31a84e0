package io.weir.agent;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A data node's TLS server identity as the agent holds it: the key made on the node, the
 * certificate the control plane's CA signed for it, and that CA. Immutable; a renewal makes a new
 * one ({@link AgentListener#serverCertificate}), so a TLS server can build its next handshakes on
 * the new one while connections made with the old one go on.
 *
 * @param privateKey the node's private key (never sent anywhere)
 * @param certificate the node's certificate
 * @param caCertificates the cluster CA that signed it
 */
public record ServerCertificate(PrivateKey privateKey, X509Certificate certificate, List<X509Certificate> caCertificates) {

    public ServerCertificate {
        Objects.requireNonNull(privateKey, "privateKey");
        Objects.requireNonNull(certificate, "certificate");
        caCertificates = List.copyOf(caCertificates);
    }

    /** The end of the certificate's validity. */
    public Instant notAfter() {
        return certificate.getNotAfter().toInstant();
    }

    /**
     * When the agent asks for the next certificate: two thirds into the certificate's lifetime
     * ({@link ServerCertificates#RENEW_AT}), which leaves a third of it to get one.
     */
    public Instant renewAt() {
        Instant from = certificate.getNotBefore().toInstant();
        long lifetimeMillis = notAfter().toEpochMilli() - from.toEpochMilli();
        return from.plusMillis(lifetimeMillis * ServerCertificates.RENEW_AT_NUMERATOR / ServerCertificates.RENEW_AT_DENOMINATOR);
    }

    @Override
    public String toString() {
        return "ServerCertificate[subject=" + certificate.getSubjectX500Principal() + ", serial="
                + certificate.getSerialNumber().toString(16) + ", notAfter=" + notAfter() + "]";
    }
}
