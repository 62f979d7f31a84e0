package io.weir.controlplane.push;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.ServerHttpRequest;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.web.socket.server.support.DefaultHandshakeHandler;
import tools.jackson.databind.json.JsonMapper;

/**
 * The agent channel's upgrade, whose refusals are RFC 9457 problems ({@code application/problem+json})
 * like every other error of the API, instead of the container's plain text or empty bodies: a
 * request without {@code Upgrade: websocket} or {@code Connection: upgrade} is answered 400, an
 * unsupported WebSocket version 426. A method other than GET is refused 405 by
 * {@link AgentHandshake}, which runs first.
 */
class AgentHandshakeHandler extends DefaultHandshakeHandler {

    @Override
    protected void handleInvalidUpgradeHeader(ServerHttpRequest request, ServerHttpResponse response) throws IOException {
        refuse(response, HttpStatus.BAD_REQUEST, "Bad request",
                "The agent channel is a WebSocket: the request needs 'Upgrade: websocket'");
    }

    @Override
    protected void handleInvalidConnectHeader(ServerHttpRequest request, ServerHttpResponse response) throws IOException {
        refuse(response, HttpStatus.BAD_REQUEST, "Bad request",
                "The agent channel is a WebSocket: the request needs 'Connection: Upgrade'");
    }

    @Override
    protected void handleWebSocketVersionNotSupported(ServerHttpRequest request, ServerHttpResponse response) {
        response.getHeaders().set("Sec-WebSocket-Version", String.join(", ", getSupportedVersions()));
        refuse(response, HttpStatus.UPGRADE_REQUIRED, "Upgrade required",
                "WebSocket version not supported; this server speaks " + String.join(", ", getSupportedVersions()));
    }

    /** Answers {@code status} with a problem body. */
    static void refuse(ServerHttpResponse response, HttpStatus status, String title, String detail) {
        response.setStatusCode(status);
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("title", title);
        body.put("status", status.value());
        body.put("detail", detail);
        try {
            response.getBody().write(JsonMapper.shared().writeValueAsBytes(body));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
