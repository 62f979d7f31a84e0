package io.weir.controlplane.push;

import io.weir.controlplane.security.AccessScope;
import io.weir.controlplane.security.Role;
import io.weir.controlplane.security.WeirPrincipal;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.web.socket.WebSocketHandler;
import org.springframework.web.socket.server.HandshakeInterceptor;

/**
 * Binds the upgrade to the node of its token. The security filter chain has already refused, with
 * 401 or 403 problem+json and before any upgrade, every request that is not a node token's; this
 * reads the caller's node and token into the session ({@link AgentChannel#NODE_ID},
 * {@link AgentChannel#TOKEN_ID}), and refuses (403) as a second line should the chain ever let
 * another caller through; a method other than GET is refused 405. Refusals are problem+json
 * ({@link AgentHandshakeHandler#refuse}).
 */
class AgentHandshake implements HandshakeInterceptor {

    private final AccessScope scope;

    AgentHandshake(AccessScope scope) {
        this.scope = scope;
    }

    @Override
    public boolean beforeHandshake(ServerHttpRequest request, ServerHttpResponse response, WebSocketHandler wsHandler,
            Map<String, Object> attributes) {
        if (request.getMethod() != HttpMethod.GET) {
            response.getHeaders().setAllow(java.util.Set.of(HttpMethod.GET));
            AgentHandshakeHandler.refuse(response, HttpStatus.METHOD_NOT_ALLOWED, "Method not allowed",
                    "The agent channel is opened with GET and a WebSocket upgrade");
            return false;
        }
        WeirPrincipal caller = scope.current();
        if (caller.role() != Role.NODE || caller.nodeId() == null) {
            AgentHandshakeHandler.refuse(response, HttpStatus.FORBIDDEN, "Forbidden",
                    "The agent channel takes node tokens only");
            return false;
        }
        attributes.put(AgentChannel.NODE_ID, caller.nodeId());
        if (caller.kind() == WeirPrincipal.Kind.TOKEN) {
            // The session lasts only as long as this token: AgentChannel#closeRevoked.
            attributes.put(AgentChannel.TOKEN_ID, UUID.fromString(caller.id()));
        }
        return true;
    }

    @Override
    public void afterHandshake(ServerHttpRequest request, ServerHttpResponse response, WebSocketHandler wsHandler,
            Exception exception) {
    }
}
