package io.weir.datanode;

import io.weir.agent.ServerCertificate;
import io.weir.protocol.ClientCertificateEntry;
import io.weir.protocol.TlsConfig;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManagerFactory;

/**
 * The NBD server's TLS: its identity (the node's certificate and key, from the agent,
 * {@link #serverCertificate}) and whom it lets in (from each applied desired config,
 * {@link #config}): a client certificate must chain to the cluster CA (the JDK's PKIX checks,
 * with its validity dates), and its serial must be one the control plane issued to a tenant and
 * not revoked; it then sees that tenant's exports only ({@link #tenantOf}). Without a server
 * certificate the node offers no TLS (NBD_OPT_STARTTLS answers NBD_REP_ERR_UNSUP). A node that
 * requires TLS ({@link #required}) refuses every option before it but NBD_OPT_STARTTLS and
 * NBD_OPT_ABORT, as the NBD protocol document says for a server that requires TLS. A renewed
 * certificate applies to new handshakes; connections made with the old one go on. Thread-safe:
 * each piece is replaced whole.
 */
final class NbdTls {

    /**
     * TLS versions offered: 1.3 only. It has no renegotiation, which TLS 1.2 has and the JDK
     * accepts from a client by default (a new handshake in the middle of transmission, on the
     * selector thread); every NBD client with TLS (libnbd, qemu and nbd-client through GnuTLS 3.6
     * or later) speaks 1.3.
     */
    static final String[] PROTOCOLS = {"TLSv1.3"};

    private static final char[] NO_PASSWORD = new char[0];

    /** Who a serial belongs to, by the last config: its tenant's id, or absent (unknown or revoked). */
    private record Clients(Map<String, UUID> tenantBySerial, Set<String> revoked, List<String> caPem) {
        static final Clients NONE = new Clients(Map.of(), Set.of(), List.of());
    }

    /** Whether clients must use TLS before anything but NBD_OPT_STARTTLS and NBD_OPT_ABORT. */
    private final boolean required;
    private volatile ServerCertificate identity;
    private volatile Clients clients = Clients.NONE;
    private volatile SSLContext context;

    /**
     * @param required whether clients must use TLS: every option before it but NBD_OPT_STARTTLS
     *     and NBD_OPT_ABORT is refused (NBD_REP_ERR_TLS_REQD), also while the node waits for its
     *     first certificate
     */
    NbdTls(boolean required) {
        this.required = required;
    }

    /** What {@link #tenantOf} holds a certificate's end against. */
    private volatile java.time.Clock clock = java.time.Clock.systemUTC();

    /** Tests: the clock a certificate's end is held against. */
    void clock(java.time.Clock clock) {
        this.clock = clock;
    }

    /** Whether clients must use TLS ({@link #NbdTls(boolean)}). */
    boolean required() {
        return required;
    }

    /** Takes the node's (new) server certificate. */
    synchronized void serverCertificate(ServerCertificate certificate) {
        SSLContext c = build(certificate, clients.caPem());
        identity = certificate;
        context = c;
    }

    /**
     * Takes the TLS part of an applied config ({@code null}: no PKI, nobody is let in) and the
     * tenants of the same config (a certificate of another tenant sees nothing here): all of it or,
     * if it cannot (a CA it cannot read), none of it.
     *
     * @throws IllegalStateException if the TLS context for a new CA cannot be built
     */
    synchronized void config(TlsConfig tls, Set<UUID> tenants) {
        Clients next;
        if (tls == null) {
            next = Clients.NONE;
        } else {
            Map<String, UUID> bySerial = new HashMap<>();
            for (ClientCertificateEntry e : tls.clientCertificates()) {
                if (tenants.contains(e.tenantId())) {
                    bySerial.put(e.serial(), e.tenantId());
                }
            }
            Set<String> revoked = new HashSet<>();
            tls.revoked().forEach(e -> revoked.add(e.serial()));
            next = new Clients(Map.copyOf(bySerial), Set.copyOf(revoked), List.copyOf(tls.caCertificatesPem()));
        }
        SSLContext c = next.caPem().equals(clients.caPem()) ? context : build(identity, next.caPem());
        clients = next;
        context = c;
    }

    /**
     * Takes from a config the node refused only what it takes away ({@code null}: no PKI, nobody
     * is let in): a certificate it revokes, or does not name for the same tenant, is no longer
     * let in; none is added, and the CA stays.
     */
    synchronized void restrict(TlsConfig tls) {
        Clients c = clients;
        if (tls == null) {
            clients = new Clients(Map.of(), c.revoked(), c.caPem());
            return;
        }
        Map<String, UUID> named = new HashMap<>();
        tls.clientCertificates().forEach(e -> named.put(e.serial(), e.tenantId()));
        Set<String> revoked = new HashSet<>(c.revoked());
        tls.revoked().forEach(e -> revoked.add(e.serial()));
        Map<String, UUID> kept = new HashMap<>();
        c.tenantBySerial().forEach((serial, tenant) -> {
            if (tenant.equals(named.get(serial)) && !revoked.contains(serial)) {
                kept.put(serial, tenant);
            }
        });
        clients = new Clients(Map.copyOf(kept), Set.copyOf(revoked), c.caPem());
    }

    /** Whether the node can serve TLS now: it has a server certificate. */
    boolean available() {
        return context != null;
    }

    /** The context new handshakes use; null if not {@link #available}. */
    SSLContext context() {
        return context;
    }

    /** A server engine of {@code context} for one connection, which requires the client's certificate. */
    static SSLEngine serverEngine(SSLContext context) {
        SSLEngine e = context.createSSLEngine();
        e.setUseClientMode(false);
        e.setNeedClientAuth(true);
        e.setEnabledProtocols(PROTOCOLS);
        return e;
    }

    /**
     * The id of the tenant whose exports a client with {@code certificate} (its chain verified
     * by the handshake) may see, or null if the control plane did not issue it to a tenant with a
     * volume here, or revoked it, or it is past its end: a full handshake checks that, but a TLS
     * 1.3 session resumed after the certificate's end does not (the JDK checks no dates again),
     * nor does a connection revalidated then.
     */
    UUID tenantOf(X509Certificate certificate) {
        if (past(certificate.getNotAfter().toInstant())) {
            return null;
        }
        String serial = certificate.getSerialNumber().toString(16);
        Clients c = clients;
        return c.revoked().contains(serial) ? null : c.tenantBySerial().get(serial);
    }

    /** Whether {@code end} (a certificate's) has passed, by the clock certificates are held against. */
    boolean past(java.time.Instant end) {
        return clock.instant().isAfter(end);
    }

    /** The context of identity {@code id} trusting {@code caPem} for clients; null without an identity. */
    private static SSLContext build(ServerCertificate id, List<String> caPem) {
        if (id == null) {
            return null;
        }
        try {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            List<Certificate> chain = new ArrayList<>();
            chain.add(id.certificate());
            chain.addAll(id.caCertificates());
            keys.setKeyEntry("node", id.privateKey(), NO_PASSWORD, chain.toArray(new Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, NO_PASSWORD);

            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            int n = 0;
            for (X509Certificate ca : id.caCertificates()) {
                trust.setCertificateEntry("ca-" + n++, ca);
            }
            CertificateFactory x509 = CertificateFactory.getInstance("X.509");
            for (String pem : caPem) {
                for (Certificate ca : x509.generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                    trust.setCertificateEntry("ca-" + n++, ca);
                }
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext c = SSLContext.getInstance("TLS");
            c.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return c;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new IllegalStateException("cannot build the NBD server's TLS context: " + e.getMessage(), e);
        }
    }
}
