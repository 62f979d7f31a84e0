package io.weir.controlplane.pki;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.node.Node;
import io.weir.controlplane.node.NodeService;
import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Data nodes' server certificates: the agent channel hands over a node's PKCS#10 request (its key
 * was made on the node and never leaves it) and sends back what this signs.
 *
 * <p>The control plane, not the request, decides what the certificate says: the node's URI SAN
 * {@code urn:weir:node:<id>}, and the host of the node's registered {@code address} (a DNS name
 * or an IP address), so a node cannot obtain a certificate for a name it was not given (such as
 * the control plane's). The lifetime is {@code weir.pki.server-certificate-lifetime}; the agent
 * renews at two thirds of it. Each issue is stored (the certificate, never a key) and audited as
 * {@code node-certificate.create}.
 */
@Service
public class NodeCertificates {

    private final ClusterAuthority authority;
    private final PkiProperties properties;
    private final NodeService nodes;
    private final AuditLog audit;
    private final JdbcClient jdbc;
    private final Clock clock;

    NodeCertificates(ClusterAuthority authority, PkiProperties properties, NodeService nodes, AuditLog audit,
            JdbcClient jdbc, Clock clock) {
        this.authority = authority;
        this.properties = properties;
        this.nodes = nodes;
        this.audit = audit;
        this.jdbc = jdbc;
        this.clock = clock;
    }

    /** A server certificate and the CA that signed it, PEM. */
    public record Signed(String certificatePem, String caCertificatePem) {
    }

    /**
     * Signs node {@code nodeId}'s request.
     *
     * @throws IllegalArgumentException if the request is not a valid PKCS#10 request of an
     *     acceptable key, naming why
     */
    @Transactional
    public Signed sign(UUID nodeId, String csrPem) {
        PublicKey key = Pem.requestKey(csrPem);
        Node node = nodes.require(nodeId);
        List<String> hosts = new ArrayList<>();
        String address = node.getAddress();
        if (address != null && !address.isBlank()) {
            int colon = address.lastIndexOf(':');
            hosts.add(colon > 0 ? address.substring(0, colon) : address);
        }
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        CertificateAuthority ca = authority.ca();
        X509Certificate cert = ca.issueServer(nodeId, node.getName(), hosts, key, now,
                now.plus(properties.serverCertificateLifetime()));
        jdbc.sql("DELETE FROM pki_certificate WHERE kind = 'server' AND node_id = ? AND not_after < ?").param(nodeId)
                .param(Timestamp.from(now)).update();
        UUID id = UUID.randomUUID();
        String serial = CertificateAuthority.serialText(cert);
        jdbc.sql("""
                        INSERT INTO pki_certificate (id, kind, name, serial, node_id, certificate_pem, key_generated,
                                                     not_before, not_after, created_at)
                        VALUES (?, 'server', ?, ?, ?, ?, false, ?, ?, ?)""")
                .param(id).param(node.getName()).param(serial).param(nodeId).param(Pem.write(cert))
                .param(Timestamp.from(cert.getNotBefore().toInstant())).param(Timestamp.from(cert.getNotAfter().toInstant()))
                .param(Timestamp.from(now)).update();
        audit.record("node-certificate.create", "node-certificate", id, null, null,
                Map.of("nodeId", nodeId, "serial", serial, "names", hosts, "notAfter", cert.getNotAfter().toInstant()));
        return new Signed(Pem.write(cert), ca.certificatePem());
    }
}
