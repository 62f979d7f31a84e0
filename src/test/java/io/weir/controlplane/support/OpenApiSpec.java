package io.weir.controlplane.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.dialect.Dialects;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The committed OpenAPI document ({@code src/main/openapi/weir-api.json}) as tests read it: its
 * operations, and a check of a JSON value against one of its schemas by a JSON Schema validator
 * (networknt's, in the OpenAPI 3.1 dialect), stricter than the document in one way: an object
 * may carry only the members its schema names.
 */
public final class OpenApiSpec {

    /** Where the committed spec lives, relative to the project directory. */
    public static final Path COMMITTED = Path.of("src/main/openapi/weir-api.json");

    /** One operation: method, path template and its description. */
    public record Operation(String method, String path, JsonNode node) {

        /** The operation's parameters of {@code in} (path, query, header). */
        public List<JsonNode> parameters(String in) {
            List<JsonNode> out = new ArrayList<>();
            for (JsonNode p : node.path("parameters")) {
                if (in.equals(p.path("in").asString())) {
                    out.add(p);
                }
            }
            return out;
        }

        /** The request body's schema under {@code mediaType}, or null. */
        public JsonNode requestSchema() {
            JsonNode content = node.path("requestBody").path("content");
            Iterator<Map.Entry<String, JsonNode>> it = content.properties().iterator();
            return it.hasNext() ? it.next().getValue().path("schema") : null;
        }

        /** The request body's media type, or null. */
        public String requestMediaType() {
            Iterator<String> names = node.path("requestBody").path("content").propertyNames().iterator();
            return names.hasNext() ? names.next() : null;
        }

        /** The documented response codes. */
        public List<String> responseCodes() {
            List<String> codes = new ArrayList<>();
            node.path("responses").propertyNames().forEach(codes::add);
            return codes;
        }

        @Override
        public String toString() {
            return method.toUpperCase(java.util.Locale.ROOT) + " " + path;
        }
    }

    /** The base URI the document is loaded under, so that its {@code $ref}s resolve within it. */
    private static final String BASE = "https://weir.invalid/weir-api.json";

    private final JsonNode root;
    private SchemaRegistry validator;

    private OpenApiSpec(JsonNode root) {
        this.root = root;
    }

    public static OpenApiSpec committed() {
        try {
            return new OpenApiSpec(JsonMapper.shared().readTree(Files.readString(COMMITTED)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public JsonNode root() {
        return root;
    }

    /** Every operation, in document order. */
    public List<Operation> operations() {
        List<Operation> ops = new ArrayList<>();
        root.path("paths").properties().forEach(path -> path.getValue().properties().forEach(method ->
                ops.add(new Operation(method.getKey(), path.getKey(), method.getValue()))));
        return ops;
    }

    /** {@code schema} with a {@code $ref} followed to its component. */
    public JsonNode resolve(JsonNode schema) {
        JsonNode at = schema;
        while (at != null && at.has("$ref")) {
            String ref = at.get("$ref").asString();
            at = root.path("components").path("schemas").path(ref.substring(ref.lastIndexOf('/') + 1));
        }
        return at;
    }

    /**
     * What is wrong with {@code value} under the schema at {@code pointer} (a JSON pointer into the
     * document, such as {@code /components/schemas/Node}), as "location: problem" lines; empty if
     * it conforms. Checked by a JSON Schema validator in the OpenAPI 3.1 dialect with formats
     * asserted ({@code uuid}, {@code date-time}, ...), every bound and enum, and no member the
     * schema does not name: a response carrying an undocumented member does not conform.
     */
    public List<String> violations(JsonNode value, String pointer) {
        if (root.at(pointer).isMissingNode()) {
            return List.of("$: no schema at " + pointer);
        }
        Schema schema = validator().getSchema(SchemaLocation.of(BASE + "#" + pointer));
        List<String> out = new ArrayList<>();
        for (Error e : schema.validate(value)) {
            out.add(e.getInstanceLocation() + ": " + e.getMessage());
        }
        return out;
    }

    /**
     * What is wrong with {@code value} as the {@code status} response of {@code op}; a status the
     * document gives no JSON schema for is itself a violation.
     */
    public List<String> responseViolations(JsonNode value, Operation op, String status) {
        JsonNode content = op.node().path("responses").path(status).path("content");
        if (content.isMissingNode() || content.isEmpty()) {
            return List.of("$: " + op + " documents no body for " + status);
        }
        String mediaType = content.propertyNames().iterator().next();
        return violations(value, "/paths/" + escape(op.path()) + "/" + op.method() + "/responses/" + status
                + "/content/" + escape(mediaType) + "/schema");
    }

    private static String escape(String token) {
        return token.replace("~", "~0").replace("/", "~1");
    }

    /**
     * A registry holding the document under {@link #BASE}, every object schema that names its
     * members closed to others ({@code additionalProperties: false} where the document leaves it
     * open); built on first use.
     */
    private synchronized SchemaRegistry validator() {
        if (validator == null) {
            JsonNode strict = root.deepCopy();
            close(strict);
            String text = JsonMapper.shared().writeValueAsString(strict);
            validator = SchemaRegistry.withDefaultDialect(Dialects.getOpenApi31(), b -> b
                    .schemas(Map.of(BASE, text))
                    .schemaRegistryConfig(SchemaRegistryConfig.builder().formatAssertionsEnabled(true).build()));
        }
        return validator;
    }

    private static void close(JsonNode node) {
        if (node instanceof ObjectNode object) {
            JsonNode type = object.path("type");
            boolean isObject = type.isArray()
                    ? type.valueStream().anyMatch(t -> t.asString().equals("object"))
                    : type.asString("").equals("object");
            if (isObject && object.path("properties").isObject() && !object.has("additionalProperties")) {
                object.put("additionalProperties", false);
            }
        }
        for (JsonNode child : node) {
            close(child);
        }
    }
}
