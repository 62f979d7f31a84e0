/**
 * The cluster PKI: the CA the control plane owns, tenants' client certificates, and data nodes'
 * server certificates, so that the data path can be isolated per tenant with TLS.
 *
 * <h2>The CA</h2>
 * {@link io.weir.controlplane.pki.ClusterAuthority} decides where it comes from, once at start-up:
 * the operator's PEM files ({@code weir.pki.ca-certificate}, {@code weir.pki.ca-private-key},
 * optionally encrypted under {@code weir.pki.ca-key-password}; a Kubernetes Secret, or what
 * {@code weir pki init} ({@link io.weir.controlplane.pki.PkiCommand}) wrote), else a CA generated
 * at the first start and kept in the database table {@code pki_authority} (its key encrypted when
 * {@code weir.pki.ca-key-password} is set before that start). The key is used only in this
 * package: no endpoint, log line, audit entry or desired config carries it.
 *
 * <h2>Client certificates</h2>
 * {@code POST /api/v1/tenants/{tenantId}/client-certificates} with a {@code name} and optionally a
 * PEM {@code csr} answers 201 with {@code id}, {@code certificatePem}, {@code caCertificatePem},
 * {@code notAfter} and, when the control plane made the key (no CSR), {@code privateKeyPem}, shown
 * only then; {@code GET} lists them (never a key), {@code DELETE .../{id}} revokes. Admins manage
 * every tenant's, tenant-admins their own tenant's only (another tenant's answers 404), viewers
 * read. Issue and revoke are audited ({@code client-certificate.create}, {@code .revoke}) and bump
 * the config revision; a tenant's delete revokes its certificates. Lifetime:
 * {@code weir.pki.client-certificate-lifetime} (365 days).
 *
 * <h2>The contract a data node enforces</h2>
 * A client certificate names its tenant as the one URI subject alternative name
 * {@code urn:weir:tenant:<tenant id>} (also the subject's {@code OU}, with {@code O=weir-tenant}
 * and the certificate's name as {@code CN}); its extended key usage is clientAuth. Every node's
 * desired config ({@code io.weir.protocol.TlsConfig}, through the config feature's
 * {@link io.weir.controlplane.config.ClusterTrust}, implemented by
 * {@link io.weir.controlplane.pki.PkiTrust}) carries the CA certificate, the serials of the valid
 * certificates of the tenants with a volume on that node, and the serials of those tenants'
 * revoked certificates that have not expired. A node accepts a client certificate only if it
 * chains to that CA, is within its validity, its serial is listed as valid for the tenant its URI
 * SAN names, and it is not listed as revoked; that tenant then sees its own exports only. A
 * revocation reaches every node serving the tenant with the next push. A tenant keeps at most
 * 1,000 certificates that have not expired, revoked ones included.
 *
 * <h2>Server certificates</h2>
 * A data node's agent makes its key on the node and sends a PKCS#10 request over the agent channel
 * ({@code io.weir.protocol.AgentMessage.CertificateRequest}); {@link
 * io.weir.controlplane.pki.NodeCertificates} signs it for the names the control plane chooses (the
 * node's URI SAN {@code urn:weir:node:<node id>} and the host of its registered address, never a
 * name from the request), for {@code weir.pki.server-certificate-lifetime} (30 days); the agent
 * renews at two thirds of that. Each is stored (certificate only) and audited
 * ({@code node-certificate.create}).
 *
 * <p>Depends on {@code tenant} (lock and existence), {@code node} (names for server
 * certificates), {@code config} (the revision, and the port it implements), {@code audit} and
 * {@code security}; the push feature depends on it to sign requests. Nothing it depends on depends
 * on it.
 */
package io.weir.controlplane.pki;
