package io.weir.controlplane.pki;

import io.weir.controlplane.config.ClusterTrust;
import io.weir.protocol.ClientCertificateEntry;
import io.weir.protocol.TlsConfig;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The PKI part of every node's desired config ({@link ClusterTrust}): the CA certificate, the
 * valid client certificates of the asked tenants, and their revoked ones kept, each list by serial.
 */
@Component
class PkiTrust implements ClusterTrust {

    private final ClusterAuthority authority;
    private final JdbcClient jdbc;

    PkiTrust(ClusterAuthority authority, JdbcClient jdbc) {
        this.authority = authority;
        this.jdbc = jdbc;
    }

    @Override
    public TlsConfig forTenants(Collection<UUID> tenantIds) {
        List<ClientCertificateEntry> valid = new ArrayList<>();
        List<ClientCertificateEntry> revoked = new ArrayList<>();
        jdbc.sql("""
                        SELECT serial, tenant_id, not_after, revoked_at IS NOT NULL AS revoked FROM pki_certificate
                        WHERE kind = 'client' AND tenant_id = ANY(:tenants::uuid[])
                        ORDER BY serial""")
                .param("tenants", tenantIds.toArray(UUID[]::new))
                .query(rs -> {
                    ClientCertificateEntry e = new ClientCertificateEntry(rs.getString(1), rs.getObject(2, UUID.class),
                            rs.getTimestamp(3).toInstant());
                    (rs.getBoolean(4) ? revoked : valid).add(e);
                });
        return new TlsConfig(List.of(authority.ca().certificatePem()), valid, revoked);
    }
}
