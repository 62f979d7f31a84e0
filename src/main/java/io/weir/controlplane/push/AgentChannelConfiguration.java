package io.weir.controlplane.push;

import io.weir.controlplane.config.DesiredConfigService;
import io.weir.controlplane.node.NodeService;
import io.weir.controlplane.pki.NodeCertificates;
import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.security.BearerTokens;
import io.weir.controlplane.usage.UsedSpaceHistory;
import io.weir.controlplane.volume.ReplicationIntake;
import io.weir.protocol.AgentMessages;
import java.time.Clock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.socket.config.annotation.EnableWebSocket;
import org.springframework.web.socket.config.annotation.WebSocketConfigurer;
import org.springframework.web.socket.config.annotation.WebSocketHandlerRegistry;
import org.springframework.web.socket.server.standard.ServletServerContainerFactoryBean;

/** Registers the agent channel at {@code /api/v1/agent/connect} on the application's Tomcat. */
@Configuration(proxyBeanMethods = false)
@EnableWebSocket
class AgentChannelConfiguration {

    /** The path of the agent channel. */
    static final String PATH = "/api/v1/agent/connect";

    @Bean
    AgentChannel agentChannel(DesiredConfigService desiredConfigs, AnswerRecorder answers, AgentRegistry registry,
            PushMetrics metrics, UsageIntake usage, BearerTokens tokens, Clock clock, FrameBudget partialFrames,
            NodeCertificates certificates, UsedSpaceHistory usedSpace, ReceivePacer pacer, NodeService nodes,
            ReplicationIntake replication) {
        return new AgentChannel(desiredConfigs, answers, registry, metrics, usage, tokens, clock, partialFrames, certificates,
                usedSpace, pacer, nodes, replication);
    }

    @Bean
    ReceivePacer receivePacer(PushProperties properties) {
        return new ReceivePacer(properties);
    }

    @Bean
    WebSocketConfigurer agentChannelEndpoint(AgentChannel channel, AccessScope scope) {
        return new WebSocketConfigurer() {
            @Override
            public void registerWebSocketHandlers(WebSocketHandlerRegistry registry) {
                registry.addHandler(channel, PATH).setHandshakeHandler(new AgentHandshakeHandler())
                        .addInterceptors(new AgentHandshake(scope));
            }
        };
    }

    /**
     * Partial frames of up to 16 KiB at a time (AgentChannel assembles larger ones within its
     * FrameBudget): the container keeps buffers of this size per session, so it bounds what an idle
     * session pins. And the idle timeout.
     */
    @Bean
    ServletServerContainerFactoryBean webSocketContainer(PushProperties properties) {
        ServletServerContainerFactoryBean container = new ServletServerContainerFactoryBean();
        container.setMaxTextMessageBufferSize(Math.min(16 * 1024, AgentMessages.MAX_FRAME_BYTES));
        container.setMaxSessionIdleTimeout(properties.sessionIdleTimeout().toMillis());
        return container;
    }
}
