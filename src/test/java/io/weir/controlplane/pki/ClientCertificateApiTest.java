package io.weir.controlplane.pki;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.weir.controlplane.support.HttpApi;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.RowLocks;
import java.io.StringReader;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.JsonNode;

/**
 * {@code /api/v1/tenants/{id}/client-certificates} against the control plane's own CA (the test
 * configuration brings no CA files, so the CA is the one generated at first start and kept in the
 * database: the default a user has).
 */
class ClientCertificateApiTest extends IntegrationTest {

    @Autowired
    JdbcClient jdbc;

    private String tenant() {
        return api.post("/api/v1/tenants", "{\"name\":\"" + unique("pk") + "\"}").json().get("id").asString();
    }

    private static String path(String tenantId) {
        return "/api/v1/tenants/" + tenantId + "/client-certificates";
    }

    @Test
    void withoutACsrTheControlPlaneMakesTheKeyAndReturnsItOnce() throws Exception {
        String tenant = tenant();
        Response r = api.post(path(tenant), "{\"name\":\"backup\"}");
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.header("Cache-Control")).contains("no-store");
        JsonNode body = r.json();
        assertThat(r.header("Location")).endsWith(path(tenant) + "/" + body.get("id").asString());
        X509Certificate cert = Pem.certificates(body.get("certificatePem").asString()).get(0);
        X509Certificate ca = Pem.certificates(body.get("caCertificatePem").asString()).get(0);
        cert.verify(ca.getPublicKey());
        cert.checkValidity();
        assertThat(body.get("notAfter").asString()).isEqualTo(cert.getNotAfter().toInstant().toString());
        assertThat(cert.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
        assertThat(cert.getSubjectAlternativeNames()).containsExactly(List.of(6, "urn:weir:tenant:" + tenant));
        assertThat(cert.getSubjectX500Principal().getName()).contains("CN=backup").contains("OU=" + tenant);
        assertThat(cert.getBasicConstraints()).isEqualTo(-1);
        // the key returned is the certificate's
        PrivateKey key = Pem.privateKey(body.get("privateKeyPem").asString(), null);
        Signature s = Signature.getInstance("SHA256withECDSA");
        s.initSign(key);
        s.update(new byte[] {1, 2, 3});
        byte[] sig = s.sign();
        s.initVerify(cert.getPublicKey());
        s.update(new byte[] {1, 2, 3});
        assertThat(s.verify(sig)).isTrue();

        // listed without any key, and stored without it; the audit entry carries none either
        Response list = api.get(path(tenant));
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.body()).doesNotContain("PRIVATE KEY").contains(body.get("serial").asString());
        JsonNode item = list.json().get("items").get(0);
        assertThat(item.get("keyGenerated").asBoolean()).isTrue();
        assertThat(item.get("revokedAt").isNull()).isTrue();
        String row = jdbc.sql("SELECT row_to_json(c)::text FROM pki_certificate c WHERE id = ?")
                .param(UUID.fromString(body.get("id").asString())).query(String.class).single();
        assertThat(row).doesNotContain("PRIVATE KEY");
        String audit = jdbc.sql("SELECT after_state::text FROM audit_event WHERE action = 'client-certificate.create' AND resource_id = ?")
                .param(body.get("id").asString()).query(String.class).single();
        assertThat(audit).contains(body.get("serial").asString()).doesNotContain("PRIVATE KEY");
    }

    /**
     * GnuTLS (libnbd's nbdinfo, nbdcopy, qemu-img) refuses an EC key whose PKCS#8 form lacks the
     * public key ("ASN1 parser: Element was not found"), which the JDK's own encoding leaves out.
     */
    @Test
    void theKeyItMakesCarriesItsPublicKeySoThatGnuTlsClientsLoadIt() throws Exception {
        Response r = api.post(path(tenant()), "{\"name\":\"gnutls\"}");
        assertThat(r.status()).isEqualTo(201);
        try (org.bouncycastle.openssl.PEMParser p = new org.bouncycastle.openssl.PEMParser(
                new java.io.StringReader(r.json().get("privateKeyPem").asString()))) {
            org.bouncycastle.asn1.pkcs.PrivateKeyInfo info = (org.bouncycastle.asn1.pkcs.PrivateKeyInfo) p.readObject();
            org.bouncycastle.asn1.sec.ECPrivateKey ec = org.bouncycastle.asn1.sec.ECPrivateKey.getInstance(info.parsePrivateKey());
            assertThat(ec.getPublicKey()).as("the public key inside the PKCS#8 private key").isNotNull();
        }
    }

    @Test
    void aCsrIsCertifiedForItsKeyAloneAndNoKeyIsReturned() throws Exception {
        String tenant = tenant();
        KeyPair pair = Pem.newKeyPair();
        // the request asks for another tenant and a CA: only its key counts
        var csr = new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=admin,OU=" + UUID.randomUUID()), pair.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate()));
        Response r = api.post(path(tenant), "{\"name\":\"laptop\",\"csr\":" + json(Pem.write(csr)) + "}");
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.json().get("privateKeyPem").isNull()).isTrue();
        X509Certificate cert = Pem.certificates(r.json().get("certificatePem").asString()).get(0);
        assertThat(cert.getPublicKey()).isEqualTo(pair.getPublic());
        assertThat(cert.getSubjectX500Principal().getName()).contains("OU=" + tenant).contains("CN=laptop");
        assertThat(cert.getBasicConstraints()).isEqualTo(-1);
    }

    @Test
    void aBadCsrIs400NamingTheField() throws Exception {
        String tenant = tenant();
        Response garbage = api.post(path(tenant), "{\"name\":\"x\",\"csr\":\"-----BEGIN CERTIFICATE REQUEST-----\\nAAAA\\n-----END CERTIFICATE REQUEST-----\\n\"}");
        assertThat(garbage.status()).isEqualTo(400);
        assertThat(garbage.json().get("errors").findValuesAsString("field")).containsExactly("csr");
        // a request signed by another key than the one it carries proves nothing
        KeyPair pair = Pem.newKeyPair();
        KeyPair other = Pem.newKeyPair();
        var forged = new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=x"), pair.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(other.getPrivate()));
        Response r = api.post(path(tenant), "{\"name\":\"x\",\"csr\":" + json(Pem.write(forged)) + "}");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().get("errors").findValuesAsString("field")).containsExactly("csr");
        // a signature that is not even well-formed (3 bytes, not a DER ECDSA signature): the JDK throws, not false
        var malformed = new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=x"), pair.getPublic())
                .build(new org.bouncycastle.operator.ContentSigner() {
                    private final java.io.ByteArrayOutputStream signed = new java.io.ByteArrayOutputStream();

                    @Override
                    public org.bouncycastle.asn1.x509.AlgorithmIdentifier getAlgorithmIdentifier() {
                        return new org.bouncycastle.operator.DefaultSignatureAlgorithmIdentifierFinder().find("SHA256withECDSA");
                    }

                    @Override
                    public java.io.OutputStream getOutputStream() {
                        return signed;
                    }

                    @Override
                    public byte[] getSignature() {
                        return new byte[] {1, 2, 3};
                    }
                });
        Response bad = api.post(path(tenant), "{\"name\":\"x\",\"csr\":" + json(Pem.write(malformed)) + "}");
        assertThat(bad.status()).as(bad.toString()).isEqualTo(400);
        assertThat(bad.json().get("errors").findValuesAsString("field")).containsExactly("csr");
        assertThat(api.post(path(tenant), "{\"name\":\"Not A Name\"}").status()).isEqualTo(400);
        assertThat(api.post(path(UUID.randomUUID().toString()), "{\"name\":\"x\"}").status()).isEqualTo(404);
    }

    /**
     * A tenant keeps at most {@value ClientCertificateService#MAX_KEPT_PER_TENANT} client
     * certificates that have not expired, revoked ones included (they are kept, and sent to the
     * tenant's nodes, until they expire): every one of them goes into the desired config of each
     * node serving the tenant, and a tenant-admin issuing and revoking in a loop grew every node's
     * config until no node could be sent one (a push frame holds 32 MiB). And a node is told only
     * of its own tenants' revoked certificates, not of every tenant's.
     */
    @Test
    void aTenantKeepsABoundedNumberOfCertificatesAndANodeHearsOnlyOfItsOwnTenantsRevocations() {
        String tenant = tenant();
        jdbc.sql("""
                        INSERT INTO pki_certificate (id, kind, name, serial, tenant_id, certificate_pem, key_generated,
                                                     not_before, not_after, created_at, revoked_at)
                        SELECT gen_random_uuid(), 'client', 'bulk-' || i, 'bulk' || replace(?::text, '-', '') || i, ?, 'pem',
                               true, now(), now() + interval '30 days', now(), CASE WHEN i % 2 = 0 THEN now() END
                        FROM generate_series(1, ?) AS i""")
                .param(tenant).param(UUID.fromString(tenant)).param(ClientCertificateService.MAX_KEPT_PER_TENANT - 1).update();
        assertThat(api.post(path(tenant), "{\"name\":\"last\"}").status()).isEqualTo(201);

        Response refused = api.post(path(tenant), "{\"name\":\"one-more\"}");
        assertThat(refused.status()).as(refused.toString()).isEqualTo(409);
        assertThat(refused.json().get("detail").asString()).contains(String.valueOf(ClientCertificateService.MAX_KEPT_PER_TENANT));

        // a node with another tenant's volume hears nothing of this tenant's revocations
        String other = tenant();
        String node = api.post("/api/v1/nodes", "{\"name\":\"" + unique("pkn") + "\"}").json().get("id").asString();
        assertThat(api.post("/api/v1/tenants/" + other + "/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576,\"nodeIds\":[\""
                + node + "\"]}").status()).isEqualTo(201);
        JsonNode tls = api.get("/api/v1/nodes/" + node + "/desired-config").json().get("tls");
        assertThat(tls.get("revoked").size()).as("revoked certificates of tenants not on the node").isZero();
    }

    @Test
    void tenantAdminsManageTheirOwnTenantsCertificatesOnly() {
        String mine = tenant();
        String theirs = tenant();
        String theirCert = api.post(path(theirs), "{\"name\":\"t\"}").json().get("id").asString();
        HttpApi admin = apiAs("tenant-admin", UUID.fromString(mine), null);
        Response own = admin.post(path(mine), "{\"name\":\"own\"}");
        assertThat(own.status()).isEqualTo(201);
        assertThat(admin.get(path(mine)).status()).isEqualTo(200);
        assertThat(admin.delete(path(mine) + "/" + own.json().get("id").asString(), null).status()).isEqualTo(204);
        // another tenant's: 404, as if it did not exist
        assertThat(admin.post(path(theirs), "{\"name\":\"x\"}").status()).isEqualTo(404);
        assertThat(admin.get(path(theirs)).status()).isEqualTo(404);
        assertThat(admin.delete(path(theirs) + "/" + theirCert, null).status()).isEqualTo(404);
        assertThat(admin.delete(path(mine) + "/" + theirCert, null).status()).isEqualTo(404);
        // a viewer reads, never writes; a node token sees nothing of a tenant
        HttpApi viewer = apiAs("viewer", UUID.fromString(mine), null);
        assertThat(viewer.get(path(mine)).status()).isEqualTo(200);
        assertThat(viewer.post(path(mine), "{\"name\":\"v\"}").status()).isEqualTo(403);
        assertThat(api.get(path(theirs)).json().get("items").get(0).get("revokedAt").isNull()).isTrue();
    }

    @Test
    void issueAndRevokeReachTheDesiredConfigsOfTheNodes() {
        String tenant = tenant();
        String volume = createPlacedVolume(tenant, "");
        String node = api.get("/api/v1/volumes/" + volume).json().get("nodeIds").get(0).asString();
        String elsewhere = newNode();
        long before = desired(node).get("revision").asLong();
        JsonNode issued = api.post(path(tenant), "{\"name\":\"c\"}").json();
        String serial = issued.get("serial").asString();

        JsonNode tls = desired(node).get("tls");
        assertThat(desired(node).get("revision").asLong()).isGreaterThan(before);
        assertThat(tls.get("caCertificatesPem").get(0).asString()).isEqualTo(issued.get("caCertificatePem").asString());
        assertThat(tls.get("clientCertificates").findValuesAsString("serial")).contains(serial);
        assertThat(tls.get("clientCertificates").findParents("serial").stream()
                .filter(e -> e.get("serial").asString().equals(serial)).findFirst().orElseThrow()
                .get("tenantId").asString()).isEqualTo(tenant);
        // a node without a volume of the tenant does not accept its certificates
        assertThat(desired(elsewhere).get("tls").get("clientCertificates").findValuesAsString("serial")).doesNotContain(serial);

        assertThat(api.delete(path(tenant) + "/" + issued.get("id").asString(), null).status()).isEqualTo(204);
        assertThat(desired(node).get("tls").get("clientCertificates").findValuesAsString("serial")).doesNotContain(serial);
        assertThat(desired(node).get("tls").get("revoked").findValuesAsString("serial")).contains(serial);
        // a node where it was never valid (no volume of the tenant) needs no word of its revocation
        assertThat(desired(elsewhere).get("tls").get("revoked").findValuesAsString("serial")).doesNotContain(serial);
        JsonNode listed = api.get(path(tenant)).json().get("items").get(0);
        assertThat(listed.get("revokedAt").isNull()).isFalse();
        assertThat(jdbc.sql("SELECT count(*) FROM audit_event WHERE action = 'client-certificate.revoke' AND resource_id = ?")
                .param(issued.get("id").asString()).query(Long.class).single()).isEqualTo(1);
        // revoking again changes nothing and records nothing
        assertThat(api.delete(path(tenant) + "/" + issued.get("id").asString(), null).status()).isEqualTo(204);
        assertThat(jdbc.sql("SELECT count(*) FROM audit_event WHERE action = 'client-certificate.revoke' AND resource_id = ?")
                .param(issued.get("id").asString()).query(Long.class).single()).isEqualTo(1);
    }

    @Test
    void deletingATenantRevokesItsCertificates() {
        String tenant = tenant();
        JsonNode issued = api.post(path(tenant), "{\"name\":\"gone\"}").json();
        assertThat(api.delete("/api/v1/tenants/" + tenant, null).status()).isEqualTo(204);
        assertThat(jdbc.sql("SELECT revoked_at IS NOT NULL FROM pki_certificate WHERE id = ?::uuid")
                .param(issued.get("id").asString()).query(Boolean.class).single()).isTrue();
        assertThat(jdbc.sql("SELECT count(*) FROM audit_event WHERE action = 'client-certificate.revoke' AND resource_id = ?")
                .param(issued.get("id").asString()).query(Long.class).single()).isEqualTo(1);
    }

    /**
     * A certificate issued while its tenant is being deleted is revoked with the tenant or refused:
     * never left valid for a tenant that is gone. The test holds the tenant's row {@code FOR KEY
     * SHARE} (as a foreign-key check would), which stops the delete at the first lock it needs on
     * the row and lets the issue's {@code FOR SHARE} through; waits on {@code pg_locks}, not time.
     */
    @Test
    void aCertificateIssuedWhileItsTenantIsBeingDeletedIsNeverLeftValid() throws Exception {
        String tenant = tenant();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (RowLocks locks = new RowLocks()) {
            locks.hold("SELECT 1 FROM tenant WHERE id = ? FOR KEY SHARE", UUID.fromString(tenant));
            CompletableFuture<Response> delete = CompletableFuture.supplyAsync(
                    () -> api.delete("/api/v1/tenants/" + tenant, null), pool);
            locks.awaitWaiters(1);
            CompletableFuture<Response> issue = CompletableFuture.supplyAsync(
                    () -> api.post(path(tenant), "{\"name\":\"late\"}"), pool);
            // the issue either goes through at once or queues behind the delete
            await().atMost(Duration.ofSeconds(30)).until(() -> issue.isDone() || locks.waiters() >= 2);
            locks.release();
            assertThat(delete.get(30, TimeUnit.SECONDS).status()).isEqualTo(204);
            assertThat(issue.get(30, TimeUnit.SECONDS).status()).isIn(201, 404);
        } finally {
            pool.shutdownNow();
        }
        assertThat(jdbc.sql("SELECT count(*) FROM pki_certificate WHERE tenant_id = ? AND revoked_at IS NULL")
                .param(UUID.fromString(tenant)).query(Long.class).single()).isZero();
    }

    @Test
    void theCaKeyIsNeverServed() throws Exception {
        String tenant = tenant();
        String volume = createPlacedVolume(tenant, "");
        String node = api.get("/api/v1/volumes/" + volume).json().get("nodeIds").get(0).asString();
        String storedKey = jdbc.sql("SELECT private_key_pem FROM pki_authority WHERE id = 1").query(String.class).single();
        String keyBody = storedKey.lines().filter(l -> !l.startsWith("-----")).findFirst().orElseThrow();
        Response issued = api.post(path(tenant), "{\"name\":\"k\"}");
        assertThat(issued.body()).doesNotContain(keyBody);
        assertThat(api.get("/api/v1/nodes/" + node + "/desired-config").body()).doesNotContain(keyBody);
        assertThat(api.get("/api/v1/audit?size=500").body()).doesNotContain(keyBody);
        assertThat(anonymousApi().get("/v3/api-docs").body()).doesNotContain("pki_authority");
        try (PEMParser p = new PEMParser(new StringReader(issued.json().get("caCertificatePem").asString()))) {
            assertThat(p.readObject()).isNotNull();
        }
    }

    private JsonNode desired(String node) {
        Response r = api.get("/api/v1/nodes/" + node + "/desired-config");
        assertThat(r.status()).isEqualTo(200);
        return r.json();
    }

    private static String json(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\n", "\\n").replace("\"", "\\\"") + "\"";
    }

    @SuppressWarnings("unused")
    private static String pem(Object o) throws Exception {
        var out = new java.io.StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }
}
