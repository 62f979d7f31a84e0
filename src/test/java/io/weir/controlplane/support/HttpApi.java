package io.weir.controlplane.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A small HTTP client for tests that talk to the running control plane over a real socket, with
 * full control over methods, headers and raw bodies (so malformed requests can be sent too).
 */
public final class HttpApi {

    public static final String JSON = "application/json";
    public static final String MERGE_PATCH = "application/merge-patch+json";

    /**
     * One client for every test: each {@code HttpClient} has its own selector thread and
     * connection pool, freed only when it is garbage-collected, and a suite creates thousands of
     * {@code HttpApi}s.
     */
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final HttpClient client = CLIENT;
    private final String base;
    private final Map<String, String> defaultHeaders = new LinkedHashMap<>();

    public HttpApi(int port) {
        this("http://127.0.0.1:" + port, Map.of());
    }

    private HttpApi(String base, Map<String, String> headers) {
        this.base = base;
        this.defaultHeaders.putAll(headers);
    }

    /** A copy of this client that sends {@code header: value} on every request. */
    public HttpApi withHeader(String header, String value) {
        HttpApi copy = new HttpApi(base, defaultHeaders);
        copy.defaultHeaders.put(header, value);
        return copy;
    }

    public String baseUrl() {
        return base;
    }

    /** The headers sent on every request, such as the bearer token. */
    public Map<String, String> defaultHeaders() {
        return Map.copyOf(defaultHeaders);
    }

    public Response get(String path) {
        return send("GET", path, null, null, Map.of());
    }

    public Response post(String path, String json) {
        return send("POST", path, JSON, json, Map.of());
    }

    public Response put(String path, String json, String ifMatch) {
        return send("PUT", path, JSON, json, ifMatch == null ? Map.of() : Map.of("If-Match", ifMatch));
    }

    public Response patch(String path, String json, String ifMatch) {
        return send("PATCH", path, MERGE_PATCH, json, ifMatch == null ? Map.of() : Map.of("If-Match", ifMatch));
    }

    public Response delete(String path, String ifMatch) {
        return send("DELETE", path, null, null, ifMatch == null ? Map.of() : Map.of("If-Match", ifMatch));
    }

    public Response send(String method, String path, String contentType, String body, Map<String, String> headers) {
        return exchange(method, path, contentType,
                body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body), headers);
    }

    /** Sends {@code body} without a Content-Length, as a chunked stream of unknown length. */
    public Response sendStreaming(String method, String path, String contentType, String body) {
        byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return exchange(method, path, contentType,
                HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(bytes)), Map.of());
    }

    private Response exchange(String method, String path, String contentType, HttpRequest.BodyPublisher body,
            Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).method(method, body);
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        defaultHeaders.forEach(request::header);
        headers.forEach(request::setHeader);
        try {
            HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Response(response.statusCode(), response.headers().map(), response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A response: status, headers (lower-case names) and body. */
    public record Response(int status, Map<String, java.util.List<String>> headers, String body) {

        public JsonNode json() {
            return JsonMapper.shared().readTree(body);
        }

        public String header(String name) {
            return headers.entrySet().stream()
                    .filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> e.getValue().get(0))
                    .findFirst().orElse(null);
        }

        public String etag() {
            return header("ETag");
        }

        /**
         * The version the ETag names: the tag without the digest of the representation that
         * tenants, volumes and nodes add ({@code "3.9f2c41d0"} names {@code "3"}).
         */
        public String versionTag() {
            String tag = etag();
            int dot = tag == null ? -1 : tag.indexOf('.');
            return dot < 0 ? tag : tag.substring(0, dot) + "\"";
        }

        public String contentType() {
            return header("Content-Type");
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }
}
