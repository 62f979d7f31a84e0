package io.weir.agent;

import io.weir.support.TestConfigs;
import static org.assertj.core.api.Assertions.assertThat;

import io.weir.agent.support.ScriptedControlPlane;
import io.weir.agent.support.ScriptedControlPlane.Peer;
import io.weir.protocol.AgentMessage;
import io.weir.protocol.AgentMessages;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's side of the certificate messages against a scripted control plane: the request
 * comes right after the hello, and a control plane that does not know it (a version before server
 * certificates answers {@code unknown-type} and closes) is not asked again, so the agent stays
 * connected to it.
 */
class AgentCertificateProtocolTest {

    private static final int WAIT = 30;

    @TempDir
    Path stateDir;

    private final UUID nodeId = UUID.randomUUID();
    private ScriptedControlPlane controlPlane;
    private QosExecutor executor;
    private QosAgent agent;

    @BeforeEach
    void start() throws Exception {
        controlPlane = new ScriptedControlPlane();
        executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(1).build();
        agent = QosAgent.builder()
                .controlPlane(URI.create("http://127.0.0.1:" + controlPlane.port()))
                .token("weir_node-token-of-the-test")
                .stateDir(stateDir)
                .executor(executor)
                .serverCertificates(true)
                .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .build();
        agent.start();
    }

    @AfterEach
    void stop() {
        agent.close();
        executor.close();
        controlPlane.close();
    }

    private static AgentMessage next(Peer peer) throws InterruptedException {
        String frame = peer.next(WAIT);
        assertThat(frame).as("a frame from the agent").isNotNull();
        return AgentMessages.decode(frame);
    }

    /**
     * A certificate the agent cannot use (another CA's, a state directory it cannot write) is
     * asked for again after a while on the same connection. It was asked for again only on the
     * next connection: a connection that lasted past the renewal window let the node's
     * certificate expire, and its NBD clients' handshakes fail.
     */
    @Test
    void aCertificateThatCannotBeUsedIsAskedForAgainOnTheSameConnection() throws Exception {
        try (ScriptedControlPlane cp = new ScriptedControlPlane();
                QosAgent retrying = QosAgent.builder()
                        .controlPlane(URI.create("http://127.0.0.1:" + cp.port()))
                        .token("weir_node-token-of-the-test")
                        .stateDir(stateDir.resolve("retry"))
                        .executor(executor)
                        .serverCertificates(true)
                        .heartbeatInterval(Duration.ofMillis(100))
                        .certificateRetry(Duration.ofMillis(300))
                        .backoff(Duration.ofMillis(20), Duration.ofMillis(200))
                        .build()) {
            retrying.start();
            Peer peer = cp.nextPeer(WAIT);
            assertThat(next(peer)).isInstanceOf(AgentMessage.Hello.class);
            assertThat(next(peer)).isInstanceOf(AgentMessage.CertificateRequest.class);
            peer.send(AgentMessages.encode(new AgentMessage.CertificateIssued("not a certificate", "nor a CA")));
            AgentMessage again = next(peer);
            for (int i = 0; i < 3 && again instanceof io.weir.protocol.UsageReport; i++) {
                again = next(peer); // a usage report of the periodic tick may come first
            }
            assertThat(again).as("asked again, on the same connection").isInstanceOf(AgentMessage.CertificateRequest.class);
            assertThat(retrying.serverCertificate()).isNull();
        }
    }

    @Test
    void anOlderControlPlaneThatAnswersUnknownTypeIsNotAskedAgain() throws Exception {
        Peer first = controlPlane.nextPeer(WAIT);
        assertThat(next(first)).isInstanceOf(AgentMessage.Hello.class);
        AgentMessage request = next(first);
        assertThat(request).isInstanceOf(AgentMessage.CertificateRequest.class);
        assertThat(((AgentMessage.CertificateRequest) request).csrPem()).startsWith("-----BEGIN CERTIFICATE REQUEST-----");
        // what a control plane of the version before answers, then it closes
        first.send(AgentMessages.encode(new AgentMessage.ErrorMessage("unknown-type", "unknown message type 'certificateRequest'")));
        first.close();

        Peer second = controlPlane.nextPeer(WAIT);
        assertThat(next(second)).isInstanceOf(AgentMessage.Hello.class);
        // The agent would send a request right after the hello, before it reads this push: the ack comes first.
        second.send(AgentMessages.encode(new AgentMessage.ConfigPush(TestConfigs.config().node(nodeId).revision(3).build())));
        assertThat(next(second)).isEqualTo(new AgentMessage.Ack(3));
        assertThat(agent.serverCertificate()).isNull();
    }
}
