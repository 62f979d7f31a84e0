package io.weir.agent;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.ProtocolException;
import java.lang.System.Logger.Level;
import java.time.Duration;

/**
 * The node's server certificate over the agent channel: asks the control plane to sign one when
 * the node has none or two thirds of its lifetime have passed, keeps what comes back
 * ({@link ServerCertificates}) and hands it to the listener. An agent built without
 * {@link QosAgent.Builder#serverCertificates} has one that does nothing.
 *
 * <p>Implementation notes: runs on the agent's event thread only ({@link QosAgent}), except
 * {@link #current()}. Its log lines are the agent's ({@code io.weir.agent.QosAgent}).
 */
final class CertificateRenewal {

    private static final System.Logger LOG = System.getLogger(QosAgent.class.getName());

    private final QosAgent agent;
    /** Null unless the builder asked for server certificates. */
    private final ServerCertificates certificates;
    private final Duration retry;
    private final AgentListener listener;
    /** Event thread: the control plane answered a certificate request with unknown-type (an older version). */
    private boolean unsupported;

    CertificateRenewal(QosAgent agent, ServerCertificates certificates, Duration retry, AgentListener listener) {
        this.agent = agent;
        this.certificates = certificates;
        this.retry = retry;
        this.listener = listener;
    }

    /** The node's server certificate in force, or null; any thread. */
    ServerCertificate current() {
        return certificates == null ? null : certificates.current();
    }

    /** Event thread, at start: the certificate kept from before goes to the listener first. */
    void startUp() {
        if (certificates != null && certificates.current() != null) {
            notifyListener(certificates.current());
        }
    }

    /**
     * Event thread: sends a server-certificate request on {@code c}, the agent's connection and
     * open ({@code live}), if the node has no certificate or two thirds of its lifetime have
     * passed, unless one is already waiting or one could not be had on this connection less than
     * {@link QosAgent.Builder#certificateRetry} ago (default 10 minutes: a control plane of another
     * CA, a state directory that cannot be written, are not asked every heartbeat, and a
     * connection that lasts is asked again in time; a new connection asks at once). Checked after
     * every hello and every heartbeat interval. A control plane that answers the request with
     * {@code unknown-type} (a version before server certificates) is not asked again until the
     * agent restarts, so that the agent stays connected to it.
     */
    void requestIfDue(AgentConnection c, boolean live) {
        if (certificates == null || unsupported || !live || c.certificateAsked || !certificates.needsRequest()
                || c.certificateFailedAt != 0 && System.nanoTime() - c.certificateFailedAt < retry.toNanos()) {
            return;
        }
        c.certificateAsked = true;
        try {
            c.send(new AgentMessage.CertificateRequest(certificates.newRequest()));
            LOG.log(Level.INFO, certificates.current() == null ? "requested a server certificate"
                    : "requested a new server certificate (the current one expires at {0})", certificates.current() == null
                    ? null : certificates.current().notAfter());
        } catch (RuntimeException e) {
            agent.error(Level.ERROR, "cannot request a server certificate: " + e.getMessage(), e);
            failed(c);
        }
    }

    /** Event thread: the control plane answered {@code error} on {@code c}; an unknown-type to our request stops asking. */
    void errorAnswered(AgentConnection c, AgentMessage.ErrorMessage error) {
        if (certificates != null && certificates.pending() && c.certificateAsked
                && ProtocolException.Code.UNKNOWN_TYPE.wireName().equals(error.code())) {
            // A control plane older than server certificates: asking again would only lose every connection.
            unsupported = true;
            LOG.log(Level.WARNING, "the control plane does not sign server certificates; not asking again until restart");
        }
    }

    /** Event thread: the control plane signed the pending request; store it and put it in force. */
    void issued(AgentConnection c, AgentMessage.CertificateIssued issued) {
        if (certificates == null || !certificates.pending()) {
            LOG.log(Level.DEBUG, "ignoring a certificate that was not asked for");
            return;
        }
        ServerCertificate next;
        try {
            next = certificates.accept(issued.certificatePem(), issued.caCertificatePem());
        } catch (RuntimeException e) {
            agent.error(Level.ERROR, "the server certificate from the control plane cannot be used: " + e.getMessage()
                    + "; asking again in " + retry);
            failed(c);
            return;
        }
        // asked again only when this one is due (a later heartbeat of this connection, or the next connection)
        c.certificateAsked = false;
        c.certificateFailedAt = 0;
        LOG.log(Level.INFO, "new server certificate in force: {0}", next);
        notifyListener(next);
    }

    /** A certificate could not be had on {@code c}: asked again there after the retry time, or at once on the next connection. */
    private void failed(AgentConnection c) {
        c.certificateAsked = false;
        c.certificateFailedAt = System.nanoTime() | 1; // never 0, which means none failed
    }

    private void notifyListener(ServerCertificate certificate) {
        try {
            listener.serverCertificate(certificate);
        } catch (RuntimeException e) {
            agent.listenerFailed("serverCertificate", e);
        }
    }
}
