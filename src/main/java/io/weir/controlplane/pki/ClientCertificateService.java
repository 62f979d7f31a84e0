package io.weir.controlplane.pki;

import io.weir.controlplane.audit.AuditLog;
import io.weir.controlplane.config.ConfigRevisions;
import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.tenant.TenantDeleting;
import io.weir.controlplane.tenant.TenantService;
import io.weir.controlplane.web.ApiException;
import io.weir.controlplane.web.PageResponse;
import io.weir.controlplane.web.RequestValidationException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.context.event.EventListener;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.data.domain.Pageable;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Tenants' client certificates: issue, list, revoke.
 *
 * <p>A certificate is issued by the cluster CA ({@link CertificateAuthority#issueClient}) for the
 * key of the caller's CSR, or for a key made here and returned once (never stored). The database
 * keeps the certificate, never a key. A revoke keeps the row with its time: every node's desired
 * config lists it as revoked ({@link PkiTrust}). Certificates that have expired are dropped at the
 * next issue or revoke (they are refused anyway), which keeps those lists bounded.
 *
 * <p>Issue and revoke bump the config revision (the certificate joins or leaves the desired config
 * of every node its tenant has a volume on, and a revocation reaches every node), in the lock order
 * of {@link ConfigRevisions}: the tenant {@code FOR SHARE} (issue) or the certificate
 * {@code FOR UPDATE} (revoke) first, then the bump, then the write. Every change is audited as
 * {@code client-certificate.create} or {@code client-certificate.revoke}, without any key.
 *
 * <p>A tenant-admin manages its own tenant's certificates only; another tenant's answer 404.
 */
@Service
class ClientCertificateService {

    private final ClusterAuthority authority;
    private final PkiProperties properties;
    private final TenantService tenants;
    private final ConfigRevisions revisions;
    private final AuditLog audit;
    private final AccessScope scope;
    private final JdbcClient jdbc;
    private final Clock clock;

    ClientCertificateService(ClusterAuthority authority, PkiProperties properties, TenantService tenants,
            ConfigRevisions revisions, AuditLog audit, AccessScope scope, JdbcClient jdbc, Clock clock) {
        this.authority = authority;
        this.properties = properties;
        this.tenants = tenants;
        this.revisions = revisions;
        this.audit = audit;
        this.scope = scope;
        this.jdbc = jdbc;
        this.clock = clock;
    }

    /** Most client certificates a tenant keeps that have not expired, revoked ones included. */
    static final int MAX_KEPT_PER_TENANT = 1000;

    @Transactional
    public IssuedClientCertificateResponse issue(UUID tenantId, ClientCertificateRequest request) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        PublicKey key;
        PrivateKey generated = null;
        if (request.csr() != null && !request.csr().isBlank()) {
            try {
                key = Pem.requestKey(request.csr());
            } catch (IllegalArgumentException e) {
                throw new RequestValidationException("csr", e.getMessage());
            }
        } else {
            KeyPair pair = Pem.newKeyPair();
            key = pair.getPublic();
            generated = pair.getPrivate();
        }
        tenants.lockForValidation(tenantId);
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        long kept = jdbc.sql("SELECT count(*) FROM pki_certificate WHERE kind = 'client' AND tenant_id = ? AND not_after > ?")
                .param(tenantId).param(Timestamp.from(now)).query(Long.class).single();
        if (kept >= MAX_KEPT_PER_TENANT) {
            // each goes into the desired config of every node serving the tenant, revoked or not, until it expires
            throw ApiException.conflict("the tenant keeps " + kept + " client certificates that have not expired, revoked "
                    + "ones included (they are kept until they expire), the most a tenant may keep ("
                    + MAX_KEPT_PER_TENANT + "); a new one can be issued once some expire",
                    Map.of("kept", kept, "max", MAX_KEPT_PER_TENANT));
        }
        CertificateAuthority ca = authority.ca();
        X509Certificate cert = ca.issueClient(tenantId, request.name(), key, now, now.plus(properties.clientCertificateLifetime()));
        revisions.bump();
        dropExpired(now);
        UUID id = UUID.randomUUID();
        String pem = Pem.write(cert);
        Instant notBefore = cert.getNotBefore().toInstant();
        Instant notAfter = cert.getNotAfter().toInstant();
        jdbc.sql("""
                        INSERT INTO pki_certificate (id, kind, name, serial, tenant_id, certificate_pem, key_generated,
                                                     not_before, not_after, created_at)
                        VALUES (?, 'client', ?, ?, ?, ?, ?, ?, ?, ?)""")
                .param(id).param(request.name()).param(CertificateAuthority.serialText(cert)).param(tenantId).param(pem)
                .param(generated != null).param(Timestamp.from(notBefore)).param(Timestamp.from(notAfter))
                .param(Timestamp.from(now)).update();
        IssuedClientCertificateResponse issued = new IssuedClientCertificateResponse(id, tenantId, request.name(),
                CertificateAuthority.serialText(cert), notBefore, notAfter, pem, ca.certificatePem(),
                generated == null ? null : Pem.privateKey(generated, null), now);
        audit.record("client-certificate.create", "client-certificate", id, tenantId, null, issued.withoutKey());
        return issued;
    }

    @Transactional(readOnly = true)
    public PageResponse<ClientCertificateResponse> list(UUID tenantId, Pageable pageable) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        tenants.require(tenantId);
        long total = jdbc.sql("SELECT count(*) FROM pki_certificate WHERE kind = 'client' AND tenant_id = ?")
                .param(tenantId).query(Long.class).single();
        List<ClientCertificateResponse> items = jdbc.sql("""
                        SELECT * FROM pki_certificate WHERE kind = 'client' AND tenant_id = ?
                        ORDER BY created_at, id LIMIT ? OFFSET ?""")
                .param(tenantId).param(pageable.getPageSize()).param(pageable.getOffset())
                .query((rs, n) -> row(rs)).list();
        int size = pageable.getPageSize();
        return new PageResponse<>(items, pageable.getPageNumber(), size, total, (int) ((total + size - 1) / size));
    }

    /** Revokes a certificate; revoking a revoked one changes nothing. */
    @Transactional
    public void revoke(UUID tenantId, UUID id) {
        scope.requireTenant(tenantId, "Tenant", tenantId);
        ClientCertificateResponse before = jdbc.sql("""
                        SELECT * FROM pki_certificate WHERE id = ? AND kind = 'client' AND tenant_id = ? FOR UPDATE""")
                .param(id).param(tenantId).query((rs, n) -> row(rs)).optional()
                .orElseThrow(() -> ApiException.notFound("ClientCertificate", id));
        if (before.revokedAt() != null) {
            return;
        }
        revokeLocked(before);
    }

    /**
     * Revokes every valid certificate of the tenant being deleted, each audited, in the deleting
     * transaction: they stay listed as revoked in every node's desired config until they expire.
     */
    @EventListener
    @Order(Ordered.LOWEST_PRECEDENCE)
    @Transactional
    void onTenantDeleting(TenantDeleting event) {
        List<ClientCertificateResponse> valid = jdbc.sql("""
                        SELECT * FROM pki_certificate WHERE kind = 'client' AND tenant_id = ? AND revoked_at IS NULL
                        ORDER BY id FOR UPDATE""")
                .param(event.tenantId()).query((rs, n) -> row(rs)).list();
        boolean bumped = false;
        for (ClientCertificateResponse c : valid) {
            if (!bumped) {
                revisions.bump();
                bumped = true;
            }
            write(c);
        }
    }

    private void revokeLocked(ClientCertificateResponse before) {
        revisions.bump();
        write(before);
    }

    /**
     * Drops the client certificates that have expired, after a bump: no node needs them any more
     * (an expired certificate is refused anyway), and the lists of the desired config stay bounded
     * by the certificates that are still valid.
     */
    private void dropExpired(Instant now) {
        jdbc.sql("DELETE FROM pki_certificate WHERE kind = 'client' AND not_after < ?").param(Timestamp.from(now)).update();
    }

    private void write(ClientCertificateResponse before) {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        dropExpired(now);
        jdbc.sql("UPDATE pki_certificate SET revoked_at = ? WHERE id = ?").param(Timestamp.from(now)).param(before.id())
                .update();
        ClientCertificateResponse after = new ClientCertificateResponse(before.id(), before.tenantId(), before.name(),
                before.serial(), before.notBefore(), before.notAfter(), now, before.keyGenerated(), before.certificatePem(),
                before.createdAt());
        audit.record("client-certificate.revoke", "client-certificate", before.id(), before.tenantId(), before, after);
    }

    private static ClientCertificateResponse row(ResultSet rs) throws SQLException {
        Timestamp revoked = rs.getTimestamp("revoked_at");
        return new ClientCertificateResponse(rs.getObject("id", UUID.class), rs.getObject("tenant_id", UUID.class),
                rs.getString("name"), rs.getString("serial"), rs.getTimestamp("not_before").toInstant(),
                rs.getTimestamp("not_after").toInstant(), revoked == null ? null : revoked.toInstant(),
                rs.getBoolean("key_generated"), rs.getString("certificate_pem"), rs.getTimestamp("created_at").toInstant());
    }
}
