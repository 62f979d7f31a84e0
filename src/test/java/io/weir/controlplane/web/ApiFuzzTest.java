package io.weir.controlplane.web;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.weir.controlplane.support.HttpApi.Response;
import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.LogCapture;
import io.weir.controlplane.support.OpenApiSpec;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Sends every operation of the committed OpenAPI document malformed requests, and checks how
 * the service answers: never a 5xx, every error an {@code application/problem+json} body of
 * bounded size, no state change from a request that was refused, and nothing logged at ERROR.
 *
 * <p>For each operation it builds a valid request from the spec (real ids of fixtures created
 * first, a body from the request schema) and then breaks one thing in it at a time: a body
 * member gets a wrong JSON type, null, a huge or fractional number, an empty, blank, oversized
 * or control-character string, a bad UUID, a duplicate key, deep nesting or an unknown member;
 * the body itself becomes malformed; a path id becomes a bad UUID; a query parameter gets bad
 * paging, invalid UTF-8 or NUL; {@code If-Match} gets an empty or stale tag.
 *
 * <h2>Reproducing a run</h2>
 * The random choices come from one seed, printed at the start: {@code -Dweir.fuzz.seed=N}
 * replays a run, {@code -Dweir.fuzz.rounds=N} (default {@value #DEFAULT_ROUNDS}) sets how many
 * mutated requests each operation gets.
 *
 * <h2>State</h2>
 * Requests are sent in batches; before and after a batch the test takes a digest of the state
 * (counts of every list, the audit log's length, and the fixtures as read). A batch in which
 * no write succeeded (every request refused, or a successful read) must leave the digest as it
 * was; a batch with a successful write (some mutations are valid requests, such as null for an
 * optional member) starts a new baseline.
 */
class ApiFuzzTest extends IntegrationTest {

    /** Seed used when {@code -Dweir.fuzz.seed} is not given: fixed, so every build fuzzes alike. */
    static final long DEFAULT_SEED = 20261202L;

    /** Mutated requests per operation when {@code -Dweir.fuzz.rounds} is not given. */
    static final int DEFAULT_ROUNDS = 40;

    /** Requests between two state digests. */
    static final int BATCH = 12;

    /** Methods that change nothing on the server (RFC 9110, 9.2.1). */
    private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS");

    /** Largest error body accepted: errors echo at most a few hundred characters of input. */
    static final int MAX_ERROR_BODY = 4096;

    /** Stands in a tree for text that a tree cannot hold (a duplicate key, deep nesting) until it is written. */
    private static final String SPLICE_MARKER = "__weir_fuzz_splice__";

    private static final JsonNodeFactory NODES = JsonMapper.shared().getNodeFactory();

    private final OpenApiSpec spec = OpenApiSpec.committed();
    private Random random;
    private final Map<String, String> ids = new LinkedHashMap<>();
    private final List<String> failures = new ArrayList<>();
    private int sent;
    private int unsendable;
    /** What replaces {@link #SPLICE_MARKER} (with its quotes) in the body being built, if anything. */
    private String splice;

    /** One request to send. */
    private record Call(String method, String path, String contentType, String body, Map<String, String> headers,
            String what) {
    }

    @Test
    void malformedRequestsToEveryOperationAreRefusedCleanly() {
        long seed = Long.getLong("weir.fuzz.seed", DEFAULT_SEED);
        int rounds = Integer.getInteger("weir.fuzz.rounds", DEFAULT_ROUNDS);
        System.out.println("ApiFuzzTest: seed " + seed + " (-Dweir.fuzz.seed=" + seed + " replays), "
                + rounds + " rounds per operation");
        random = new Random(seed);
        fixtures();
        long started = System.nanoTime();
        try (LogCapture log = LogCapture.open()) {
            List<Call> calls = new ArrayList<>();
            for (OpenApiSpec.Operation op : spec.operations()) {
                for (int i = 0; i < rounds; i++) {
                    calls.add(mutate(op));
                }
            }
            java.util.Collections.shuffle(calls, random);
            String baseline = digest();
            for (int from = 0; from < calls.size(); from += BATCH) {
                boolean anyWriteSucceeded = false;
                List<Call> batch = calls.subList(from, Math.min(calls.size(), from + BATCH));
                for (Call call : batch) {
                    // A read that succeeds changes nothing, so it does not excuse a change.
                    anyWriteSucceeded |= send(call) && !SAFE_METHODS.contains(call.method());
                }
                String now = digest();
                if (!anyWriteSucceeded && !now.equals(baseline)) {
                    failures.add("state changed in a batch of refused requests: " + batch.stream().map(Call::what).toList());
                }
                baseline = now;
            }
            List<String> errors = log.atLeast(Level.ERROR);
            if (!errors.isEmpty()) {
                failures.add("logged at ERROR: " + errors.subList(0, Math.min(10, errors.size())));
            }
        }
        System.out.printf("ApiFuzzTest: %d mutated requests (%d more the HTTP client would not send), seed %d, "
                + "%.1f s including state digests, %d failures%n", sent, unsendable, seed,
                (System.nanoTime() - started) / 1e9, failures.size());
        assertThat(failures).as("seed " + seed).isEmpty();
    }

    /** Checks one response; answers whether it was a success (2xx/3xx). */
    private boolean send(Call call) {
        Response r;
        try {
            r = api.send(call.method(), call.path(), call.contentType(), call.body(), call.headers());
        } catch (IllegalArgumentException e) {
            unsendable++; // java.net.http refuses to send it (a space in a path, a bare %): nothing to check
            return false;
        } catch (RuntimeException e) {
            failures.add(call.what() + ": no response (" + e + ")");
            return false;
        }
        sent++;
        if (r.status() >= 500) {
            failures.add(call.what() + ": " + r.status() + " " + abbreviate(r.body()));
        } else if (r.status() >= 400) {
            String type = r.contentType();
            if (type == null || !type.startsWith("application/problem+json")) {
                failures.add(call.what() + ": " + r.status() + " as " + type + ": " + abbreviate(r.body()));
            } else {
                try {
                    if (r.json().path("status").asInt() != r.status()) {
                        failures.add(call.what() + ": problem status differs from " + r.status());
                    }
                } catch (RuntimeException e) {
                    failures.add(call.what() + ": unreadable problem body " + abbreviate(r.body()));
                }
                if (r.body().length() > MAX_ERROR_BODY) {
                    failures.add(call.what() + ": error body of " + r.body().length() + " characters");
                }
            }
        }
        return r.status() < 400;
    }

    private static String abbreviate(String s) {
        return s == null || s.length() < 300 ? s : s.substring(0, 300) + "...";
    }

    // ---- fixtures and state ----------------------------------------------------------------

    private void fixtures() {
        ids.put("tenantId", create("/api/v1/tenants", "{\"name\":\"" + unique("fz") + "\"}"));
        ids.put("policyId", create("/api/v1/policies", "{\"name\":\"" + unique("fz") + "\"}"));
        ids.put("nodeId", newNode());
        ids.put("volumeId", create("/api/v1/tenants/" + ids.get("tenantId") + "/volumes",
                "{\"name\":\"" + unique("fz") + "\",\"sizeBytes\":4096,\"nodeIds\":[\"" + ids.get("nodeId") + "\"]}"));
        ids.put("tokenId", create("/api/v1/tokens", "{\"name\":\"" + unique("fz") + "\",\"role\":\"viewer\"}"));
        ids.put("certificateId", create("/api/v1/tenants/" + ids.get("tenantId") + "/client-certificates",
                "{\"name\":\"" + unique("fz") + "\"}"));
    }

    private String create(String path, String body) {
        Response r = api.post(path, body);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        return r.json().get("id").asString();
    }

    /** Everything a refused request must not change. */
    private String digest() {
        StringBuilder out = new StringBuilder();
        for (String list : List.of("/api/v1/tenants", "/api/v1/policies", "/api/v1/nodes", "/api/v1/volumes",
                "/api/v1/tokens", "/api/v1/audit")) {
            out.append(list).append('=').append(api.get(list + "?size=1").json().path("totalItems").asLong()).append('\n');
        }
        for (String fixture : List.of("/api/v1/tenants/" + ids.get("tenantId"), "/api/v1/policies/" + ids.get("policyId"),
                "/api/v1/volumes/" + ids.get("volumeId"), "/api/v1/task-shares",
                "/api/v1/nodes/" + ids.get("nodeId") + "/task-shares")) {
            Response r = api.get(fixture);
            out.append(fixture).append('=').append(r.status()).append(' ').append(r.etag()).append('\n');
        }
        return out.toString();
    }

    // ---- mutations -------------------------------------------------------------------------

    private Call mutate(OpenApiSpec.Operation op) {
        String method = op.method().toUpperCase(java.util.Locale.ROOT);
        Map<String, String> pathValues = new LinkedHashMap<>();
        op.parameters("path").forEach(p -> pathValues.put(p.path("name").asString(), ids.get(p.path("name").asString())));
        Map<String, String> query = new LinkedHashMap<>();
        Map<String, String> headers = new LinkedHashMap<>();
        JsonNode schema = op.requestSchema();
        String body = schema == null ? null : validBody(spec.resolve(schema), 0).toString();
        String contentType = op.requestMediaType();
        if (op.node().path("parameters").toString().contains("If-Match")) {
            headers.put("If-Match", "\"999999\""); // stale: a write must answer 412, never go through
        }
        List<String> targets = new ArrayList<>();
        if (!pathValues.isEmpty()) {
            targets.add("path");
        }
        if (!op.parameters("query").isEmpty()) {
            targets.add("query");
        }
        if (body != null) {
            targets.add("body");
            targets.add("body");
            targets.add("body");
            targets.add("rawBody");
        }
        if (headers.containsKey("If-Match")) {
            targets.add("ifMatch");
        }
        targets.add("accept");
        String target = targets.get(random.nextInt(targets.size()));
        String what;
        switch (target) {
            case "path" -> {
                String name = pick(new ArrayList<>(pathValues.keySet()));
                String bad = pick(BAD_IDS);
                pathValues.put(name, bad);
                what = "path " + name + "=" + abbreviate(bad);
            }
            case "query" -> {
                JsonNode parameter = pick(op.parameters("query"));
                String name = parameter.path("name").asString();
                String bad = pick(BAD_QUERY_VALUES);
                query.put(name, bad);
                what = "query " + name + "=" + abbreviate(bad);
            }
            case "body" -> {
                ObjectNode tree = (ObjectNode) JsonMapper.shared().readTree(body);
                splice = null;
                String member = mutateMember(tree, spec.resolve(schema));
                body = splice == null ? tree.toString() : tree.toString().replace("\"" + SPLICE_MARKER + "\"", splice);
                what = "body " + abbreviate(member);
            }
            case "rawBody" -> {
                body = pick(List.of("", "{", "{\"a\":", "[]", "null", "1", "\"x\"", "{}{}", "{} x", "\uFEFF{}",
                        "{'name':'x'}", "{\"name\":\"x\",}", "[".repeat(2000), "{\"a\":".repeat(2000)));
                what = "raw body " + abbreviate(body);
            }
            case "ifMatch" -> {
                String bad = pick(List.of("", " ", "\"\"", "garbage", "W/", "\"1", ",", "\"" + "9".repeat(5000) + "\""));
                headers.put("If-Match", bad);
                what = "If-Match [" + abbreviate(bad) + "]";
            }
            default -> {
                String accept = pick(List.of("text/html", "application/xml", "image/png", "*/*;q=0", "garbage"));
                headers.put("Accept", accept);
                what = "Accept " + accept;
            }
        }
        String path = op.path();
        for (Map.Entry<String, String> e : pathValues.entrySet()) {
            path = path.replace("{" + e.getKey() + "}", e.getValue());
        }
        if (!query.isEmpty()) {
            StringBuilder q = new StringBuilder();
            query.forEach((k, v) -> q.append(q.isEmpty() ? "?" : "&").append(k).append('=').append(v));
            path += q;
        }
        return new Call(method, path, contentType, body, headers, op + " " + what);
    }

    /** Replaces one member of {@code body} (possibly nested) with a bad value; answers what it did. */
    private String mutateMember(ObjectNode body, JsonNode schema) {
        List<String> names = new ArrayList<>();
        schema.path("properties").propertyNames().forEach(names::add);
        if (names.isEmpty() || random.nextInt(12) == 0) {
            body.put("unknownMember" + random.nextInt(3), 1);
            return "unknown member";
        }
        String name = pick(names);
        JsonNode property = spec.resolve(schema.path("properties").path(name));
        if (property.has("properties") && random.nextBoolean()) {
            ObjectNode nested = body.get(name) instanceof ObjectNode o ? o : body.putObject(name);
            return name + "." + mutateMember(nested, property);
        }
        int kind = random.nextInt(8);
        switch (kind) {
            case 0 -> body.set(name, pick(WRONG_TYPES));
            case 1 -> body.putNull(name);
            case 2 -> body.set(name, NODES.numberNode(new java.math.BigDecimal(pick(HUGE_NUMBERS))));
            case 3 -> body.put(name, pick(BAD_STRINGS));
            case 4 -> body.put(name, pick(BAD_IDS));
            case 5 -> {
                // Deeper than Jackson writes or reads (500 levels): spliced into the text.
                body.put(name, SPLICE_MARKER);
                splice = pick(List.of("[".repeat(1500) + "]".repeat(1500), "{\"a\":".repeat(1500) + "1" + "}".repeat(1500)));
                return name + " nested 1500 deep";
            }
            case 6 -> {
                // The member twice: "name":<first>,"name":<second>.
                body.put(name, SPLICE_MARKER);
                splice = pick(List.of("\"viewer\"", "1", "null", "\"\"")) + ",\"" + name + "\":"
                        + pick(List.of("\"admin\"", "2", "null", "\"x\""));
                return name + " duplicated";
            }
            default -> body.put(name, "x".repeat(70_000));
        }
        return name + " (" + kind + ")";
    }

    /** A valid body for {@code schema}: every member with a value of its type, names unique. */
    private JsonNode validBody(JsonNode schema, int depth) {
        ObjectNode out = NODES.objectNode();
        if (depth > 3) {
            return out;
        }
        schema.path("properties").properties().forEach(member -> {
            JsonNode p = spec.resolve(member.getValue());
            String name = member.getKey();
            String type = p.path("type").isArray() ? p.path("type").get(0).asString() : p.path("type").asString();
            if (!schemaRequired(schema, name) && random.nextInt(3) == 0) {
                return;
            }
            switch (type) {
                case "string" -> out.put(name, validString(name, p));
                case "integer" -> out.put(name, p.has("minimum") ? Math.max(1, p.get("minimum").asLong()) : 1);
                case "number" -> out.put(name, 0.5);
                case "boolean" -> out.put(name, true);
                case "array" -> out.putArray(name);
                case "object" -> {
                    if (p.has("properties")) {
                        out.set(name, validBody(p, depth + 1));
                    } else {
                        out.putObject(name);
                    }
                }
                default -> { }
            }
        });
        return out;
    }

    private static boolean schemaRequired(JsonNode schema, String name) {
        for (JsonNode r : schema.path("required")) {
            if (r.asString().equals(name)) {
                return true;
            }
        }
        return false;
    }

    private String validString(String name, JsonNode p) {
        if (p.has("enum")) {
            return p.get("enum").get(0).asString();
        }
        if ("uuid".equals(p.path("format").asString())) {
            return name.equals("tenantId") ? ids.get("tenantId") : name.equals("nodeId") ? ids.get("nodeId")
                    : name.equals("policyId") ? ids.get("policyId") : UUID.randomUUID().toString();
        }
        if ("date-time".equals(p.path("format").asString())) {
            return "2099-01-01T00:00:00Z";
        }
        return name.equals("role") ? "viewer" : unique("fz");
    }

    private <T> T pick(List<T> options) {
        return options.get(random.nextInt(options.size()));
    }

    private static final List<String> BAD_IDS = List.of("not-a-uuid", "00000000-0000-0000-0000-00000000000g", "",
            " ", "%20", "%00", "%FF%FE", "a".repeat(10_000), "00000000-0000-0000-0000-000000000000",
            UUID.randomUUID().toString().toUpperCase(java.util.Locale.ROOT) + "0", "1", "-1", "null", "%E2%80%AE");

    private static final List<String> BAD_QUERY_VALUES = List.of("-1", "42949673", "2147483648", "abc", "", "%FF%FE",
            "a%00b", "%ED%A0%80", "%", "1.5", "1e3", "a".repeat(8000), "%2B999999999-12-31T23:59:59Z", "true",
            URLEncoder.encode("admin ", StandardCharsets.UTF_8), "ADMIN", "null", "00000000-0000-0000-0000-00000000000g");

    private static final List<JsonNode> WRONG_TYPES = List.of(NODES.stringNode("1"), NODES.numberNode(1),
            NODES.booleanNode(true), NODES.arrayNode().add(1), NODES.objectNode().put("a", 1), NODES.numberNode(1.5),
            NODES.stringNode("true"), NODES.arrayNode());

    private static final List<String> HUGE_NUMBERS = List.of("9223372036854775808", "-9223372036854775809",
            "1e309", "2147483648", "1e-400", "-0", "123456789012345678901234567890", "0.000001", "9999999999999");

    private static final List<String> BAD_STRINGS = List.of("", " ", "\u0000", "a\u0000b", "\u0001", "\u001f", "\u007f",
            "\ud800", "\udc00x", "\u2028", "\t\n", "ADMIN", "admin ", "-", "a-", "..", "/", "%00", "<script>",
            "+999999999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "2030-13-01T00:00:00Z", "1700000000");
}
