package io.weir.controlplane.pki;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the cluster PKI ({@code weir.pki.*}).
 *
 * @param caCertificate a PEM file with the CA certificate the operator brings (a Kubernetes
 *     Secret mounted as a file, or what {@code weir pki init} wrote); empty: the control plane's
 *     own CA, generated at first start and kept in the database
 * @param caPrivateKey the PEM file of that CA's private key (PKCS#8, encrypted or not, or
 *     PKCS#1/SEC1); required with {@code caCertificate}
 * @param caKeyPassword the password of an encrypted {@code caPrivateKey}; and, for the generated
 *     CA, the password its key is stored under in the database (PKCS#8, AES-256-CBC, PBKDF2):
 *     set it before the first start for the key to be encrypted at rest. Empty: not encrypted
 * @param clientCertificateLifetime how long a tenant's client certificate is valid
 * @param serverCertificateLifetime how long a data node's server certificate is valid; the
 *     agent renews it at two thirds of that
 */
@ConfigurationProperties("weir.pki")
public record PkiProperties(
        @DefaultValue("") String caCertificate,
        @DefaultValue("") String caPrivateKey,
        @DefaultValue("") String caKeyPassword,
        @DefaultValue("365d") Duration clientCertificateLifetime,
        @DefaultValue("30d") Duration serverCertificateLifetime) {

    public PkiProperties {
        if (caCertificate.isBlank() != caPrivateKey.isBlank()) {
            throw new IllegalArgumentException(
                    "weir.pki.ca-certificate and weir.pki.ca-private-key go together: set both or neither");
        }
        if (clientCertificateLifetime.isNegative() || clientCertificateLifetime.isZero()
                || serverCertificateLifetime.isNegative() || serverCertificateLifetime.isZero()) {
            throw new IllegalArgumentException("weir.pki certificate lifetimes must be positive");
        }
    }

    char[] password() {
        return caKeyPassword.isEmpty() ? null : caKeyPassword.toCharArray();
    }
}
