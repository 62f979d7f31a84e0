package io.weir.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * How an agent verifies the control plane it connects to over {@code wss://}: against the cluster
 * CA certificate in a file the operator gives ({@code --control-plane-ca}, {@code WEIR_CONTROL_PLANE_CA};
 * {@link QosAgent.Builder#controlPlaneCa}), and only that CA. The host name in the control-plane
 * URL must be one the control plane's certificate names (the JDK's HTTPS host name check stays on).
 *
 * <p>There is no trust on first use: the agent never learns the CA from the connection it is
 * meant to verify, since its first connection would send the node token to whoever answered.
 * Without a CA file a {@code wss://} connection is verified against the JDK's default trust store
 * (a control plane behind a publicly trusted certificate).
 */
public final class ControlPlaneTrust {

    private ControlPlaneTrust() {
    }

    /**
     * An SSL context that trusts exactly the CA certificates in {@code caFile} (PEM).
     *
     * @throws IOException if the file cannot be read
     * @throws IllegalArgumentException if it holds no certificate
     */
    public static SSLContext sslContext(Path caFile) throws IOException {
        List<X509Certificate> cas = ServerCertificates.certificates(Files.readString(caFile));
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            for (int i = 0; i < cas.size(); i++) {
                store.setCertificateEntry("weir-ca-" + i, cas.get(i));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot trust the CA in " + caFile + ": " + e.getMessage(), e);
        }
    }
}
