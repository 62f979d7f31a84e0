package io.weir.agent.support;

import jakarta.websocket.CloseReason;
import jakarta.websocket.Endpoint;
import jakarta.websocket.EndpointConfig;
import jakarta.websocket.HandshakeResponse;
import jakarta.websocket.MessageHandler;
import jakarta.websocket.Session;
import jakarta.websocket.server.HandshakeRequest;
import jakarta.websocket.server.ServerContainer;
import jakarta.websocket.server.ServerEndpointConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.websocket.server.WsSci;

/**
 * A stand-in control plane for the agent's side of the protocol: an embedded Tomcat with one
 * WebSocket endpoint at {@code /api/v1/agent/connect}, where the test reads what the agent sends
 * and sends whatever it likes back (garbage, oversized or wrong-version frames, which the real
 * control plane never sends). Everything else about the agent is tested against the real control
 * plane.
 */
public final class ScriptedControlPlane implements AutoCloseable {

    /** What one agent connection saw: its upgrade's Authorization header and its text frames. */
    public static final class Peer {
        public final String authorization;
        public final BlockingQueue<String> received = new LinkedBlockingQueue<>();
        public final BlockingQueue<CloseReason> closed = new LinkedBlockingQueue<>();
        private final Session session;

        Peer(String authorization, Session session) {
            this.authorization = authorization;
            this.session = session;
        }

        /** Sends one text frame. */
        public void send(String text) {
            try {
                session.getBasicRemote().sendText(text);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Closes this connection from the control plane's side (a normal close). */
        public void close() {
            try {
                session.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The next frame the agent sent, waiting up to {@code seconds}; null if none came. */
        public String next(int seconds) throws InterruptedException {
            return received.poll(seconds, TimeUnit.SECONDS);
        }
    }

    private final Tomcat tomcat = new Tomcat();
    private final BlockingQueue<Peer> peers = new LinkedBlockingQueue<>();
    /** While set, each opening handshake waits for it before it is answered (at most 30 s). */
    private volatile java.util.concurrent.CountDownLatch handshakeGate;

    /** Holds every opening handshake until {@code gate} is counted down; null answers them at once. */
    public void holdHandshakes(java.util.concurrent.CountDownLatch gate) {
        handshakeGate = gate;
    }

    public ScriptedControlPlane() {
        try {
            tomcat.setBaseDir(Files.createTempDirectory("weir-scripted-cp").toString());
            tomcat.setPort(0);
            tomcat.getConnector().setProperty("address", "127.0.0.1");
            Context context = tomcat.addContext("", null);
            context.addServletContainerInitializer(new WsSci(), null);
            // Requests reach the WebSocket upgrade filter only if some servlet maps them.
            Tomcat.addServlet(context, "none", new jakarta.servlet.http.HttpServlet() {
                private static final long serialVersionUID = 1L;
            });
            context.addServletMappingDecoded("/", "none");
            context.addServletContainerInitializer((classes, servletContext) -> {
                // Runs after WsSci, which has put the WebSocket container into the context.
                ServerContainer container = (ServerContainer) servletContext.getAttribute(ServerContainer.class.getName());
                try {
                    container.addEndpoint(ServerEndpointConfig.Builder.create(AgentEndpoint.class, "/api/v1/agent/connect")
                            .configurator(new Configurator()).build());
                } catch (jakarta.websocket.DeploymentException e) {
                    throw new jakarta.servlet.ServletException(e);
                }
            }, null);
            tomcat.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (LifecycleException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The HTTP port. */
    public int port() {
        return tomcat.getConnector().getLocalPort();
    }

    /** The next agent connection, waiting up to {@code seconds}; null if none came. */
    public Peer nextPeer(int seconds) throws InterruptedException {
        return peers.poll(seconds, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        try {
            tomcat.stop();
            tomcat.destroy();
        } catch (LifecycleException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Hands each new endpoint the test's queue and the upgrade's Authorization header. */
    private final class Configurator extends ServerEndpointConfig.Configurator {
        @Override
        public void modifyHandshake(ServerEndpointConfig config, HandshakeRequest request, HandshakeResponse response) {
            java.util.concurrent.CountDownLatch gate = handshakeGate;
            if (gate != null) {
                try {
                    gate.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            List<String> auth = request.getHeaders().get("Authorization");
            config.getUserProperties().put("authorization", auth == null || auth.isEmpty() ? null : auth.get(0));
            config.getUserProperties().put("peers", peers);
        }
    }

    /** The server side of one agent connection. */
    public static final class AgentEndpoint extends Endpoint {
        private Peer peer;

        @Override
        @SuppressWarnings("unchecked")
        public void onOpen(Session session, EndpointConfig config) {
            session.setMaxTextMessageBufferSize(4 << 20);
            peer = new Peer((String) config.getUserProperties().get("authorization"), session);
            session.addMessageHandler(String.class, (MessageHandler.Whole<String>) peer.received::add);
            ((BlockingQueue<Peer>) config.getUserProperties().get("peers")).add(peer);
        }

        @Override
        public void onClose(Session session, CloseReason reason) {
            if (peer != null) {
                peer.closed.add(reason);
            }
        }
    }
}
