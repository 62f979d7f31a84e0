package io.weir.datanode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import tlschannel.ClientTlsChannel;
import tlschannel.ServerTlsChannel;
import tlschannel.TlsChannel;

/**
 * Who may speak on the replication channel: with a node certificate from the cluster PKI (the one
 * the NBD server uses, {@link NbdTls}), both ends use TLS 1.3, each presents its node certificate
 * and checks the other's chain against the cluster CA, and the primary checks that the copy's
 * certificate names the node it meant to reach (URI SAN {@value #NODE_URI_PREFIX}{@code <id>});
 * the copy learns the sender's node from its certificate the same way. A node built to require
 * TLS refuses the channel until it has its certificate; a node without a cluster PKI (a config
 * file, a benchmark) speaks in clear. No other trust scheme exists.
 */
final class ReplicationTls {

    /** URI SAN prefix that names a node certificate's data node (the control plane's contract). */
    static final String NODE_URI_PREFIX = "urn:weir:node:";

    private final NbdTls tls;

    ReplicationTls(NbdTls tls) {
        this.tls = tls;
    }

    /** Whether connections are authenticated now. */
    boolean enabled() {
        return tls.context() != null;
    }

    /** The primary's end: TLS over {@code raw} when the node has a certificate, checking the peer is {@code peer}. */
    ByteChannel client(SocketChannel raw, UUID peer, InetSocketAddress to) throws IOException {
        SSLContext context = usableContext();
        if (context == null) {
            return raw;
        }
        SSLEngine e = context.createSSLEngine(to.getHostString(), to.getPort());
        e.setUseClientMode(true);
        e.setEnabledProtocols(NbdTls.PROTOCOLS);
        TlsChannel t = ClientTlsChannel.newBuilder(raw, e).build();
        t.handshake();
        UUID named = nodeOf(e);
        if (!peer.equals(named)) {
            t.close();
            throw new IOException("the replication peer at " + to + " presented the certificate of node " + named
                    + ", not of node " + peer);
        }
        return t;
    }

    /** A copy's end of an accepted connection: the channel and the sending node (null in clear). */
    Accepted server(SocketChannel raw) throws IOException {
        SSLContext context = usableContext();
        if (context == null) {
            return new Accepted(raw, null);
        }
        TlsChannel t = ServerTlsChannel.newBuilder(raw, context).withEngineFactory(NbdTls::serverEngine).build();
        t.handshake();
        return new Accepted(t, nodeOf(t.getSslEngine()));
    }

    record Accepted(ByteChannel channel, UUID peer) {
    }

    private SSLContext usableContext() throws IOException {
        SSLContext c = tls.context();
        if (c == null && tls.required()) {
            throw new IOException("this node requires TLS and has no node certificate yet");
        }
        return c;
    }

    private static UUID nodeOf(SSLEngine e) throws IOException {
        try {
            X509Certificate cert = (X509Certificate) e.getSession().getPeerCertificates()[0];
            if (cert.getSubjectAlternativeNames() != null) {
                for (List<?> name : cert.getSubjectAlternativeNames()) {
                    if (Integer.valueOf(6).equals(name.get(0)) && name.get(1) instanceof String uri
                            && uri.startsWith(NODE_URI_PREFIX)) {
                        return UUID.fromString(uri.substring(NODE_URI_PREFIX.length()));
                    }
                }
            }
            throw new IOException("the replication peer's certificate names no node");
        } catch (SSLPeerUnverifiedException | CertificateParsingException | IllegalArgumentException ex) {
            throw new IOException("the replication peer's certificate: " + ex.getMessage(), ex);
        }
    }
}
