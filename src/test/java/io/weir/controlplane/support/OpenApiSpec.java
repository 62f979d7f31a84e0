package io.weir.controlplane.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The committed OpenAPI document ({@code src/main/openapi/weir-api.json}) as tests read it: its
 * operations, and a check of a JSON value against one of its schemas (as far as response
 * schemas go: types, required members, nullability, enums, array items).
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

    private final JsonNode root;

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
     * What is wrong with {@code value} under {@code schema}, as "path: problem" lines; empty if it
     * conforms.
     */
    public List<String> violations(JsonNode value, JsonNode schema) {
        List<String> out = new ArrayList<>();
        check(value, schema, "$", out, 0);
        return out;
    }

    private void check(JsonNode value, JsonNode schema, String path, List<String> out, int depth) {
        if (schema == null || schema.isMissingNode() || depth > 20) {
            return;
        }
        JsonNode s = resolve(schema);
        if (s.has("anyOf") || s.has("oneOf")) {
            for (JsonNode option : s.has("anyOf") ? s.get("anyOf") : s.get("oneOf")) {
                List<String> attempt = new ArrayList<>();
                check(value, option, path, attempt, depth + 1);
                if (attempt.isEmpty()) {
                    return;
                }
            }
            out.add(path + ": matches none of the alternatives: " + value);
            return;
        }
        List<String> types = new ArrayList<>();
        JsonNode type = s.get("type");
        if (type != null && type.isArray()) {
            type.forEach(t -> types.add(t.asString()));
        } else if (type != null) {
            types.add(type.asString());
        }
        if (value.isNull()) {
            if (!types.isEmpty() && !types.contains("null")) {
                out.add(path + ": null, but not nullable");
            }
            return;
        }
        if (!types.isEmpty() && types.stream().noneMatch(t -> matches(value, t))) {
            out.add(path + ": " + value.getNodeType() + " is none of " + types);
            return;
        }
        if (s.has("enum") && value.isString()) {
            boolean listed = false;
            for (JsonNode e : s.get("enum")) {
                listed |= e.asString().equals(value.asString());
            }
            if (!listed) {
                out.add(path + ": " + value + " is not among " + s.get("enum"));
            }
        }
        if (value.isObject()) {
            for (JsonNode required : s.path("required")) {
                if (!value.has(required.asString())) {
                    out.add(path + "." + required.asString() + ": required but absent");
                }
            }
            JsonNode properties = s.path("properties");
            value.properties().forEach(member -> {
                if (properties.has(member.getKey())) {
                    check(member.getValue(), properties.get(member.getKey()), path + "." + member.getKey(), out, depth + 1);
                }
            });
        }
        if (value.isArray() && s.has("items")) {
            int i = 0;
            for (JsonNode item : value) {
                check(item, s.get("items"), path + "[" + i++ + "]", out, depth + 1);
            }
        }
    }

    private static boolean matches(JsonNode value, String type) {
        return switch (type) {
            case "object" -> value.isObject();
            case "array" -> value.isArray();
            case "string" -> value.isString();
            case "integer" -> value.isIntegralNumber();
            case "number" -> value.isNumber();
            case "boolean" -> value.isBoolean();
            case "null" -> value.isNull();
            default -> true;
        };
    }
}
