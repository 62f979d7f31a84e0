package io.weir.controlplane.web;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JavaType;
import io.swagger.v3.core.converter.ModelConverter;
import io.swagger.v3.core.util.Json;
import io.swagger.v3.core.util.Json31;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Makes the OpenAPI description tell what the server does, so that a client generated from it
 * (the Java client of the build, a TypeScript client, ...) types responses exactly:
 *
 * <ul>
 *   <li><b>Status codes.</b> A create ({@code POST}) answers {@code 201} with {@code Location} and
 *       {@code ETag}; a delete answers {@code 204} without a body. springdoc cannot see either
 *       (both come from a {@code ResponseEntity}), so they are set here.
 *   <li><b>Response fields.</b> Every member of a response schema is {@code required}, because
 *       responses write every member, null or not; the exception is a member annotated
 *       {@code @JsonInclude(NON_NULL)} (a node's one-time {@code token}). A member whose record
 *       component is JSpecify {@code @Nullable} is nullable (OpenAPI 3.1: {@code "null"} among
 *       its types); every other member is never null. A schema used by request bodies and
 *       responses alike (the overrides of a volume, a policy's cost model) gets a copy named
 *       {@code <Name>Request} for the request side, where nothing is required.
 *   <li><b>Bounds the server enforces.</b> {@code page} 0 or more, {@code size} 1 to
 *       {@value Paging#MAX_SIZE}; {@link ResourceName} and {@link Weight} (constraints composed of
 *       other constraints, which springdoc does not read) as their lengths, pattern and range.
 *       {@code @Size}, {@code @Max} and the like springdoc documents by itself.
 * </ul>
 *
 * <p>{@code SpecTruthTest} checks these claims against the running server.
 */
@Configuration(proxyBeanMethods = false)
class OpenApiTruth {

    /** Suffix of the request-side copy of a schema that requests and responses share. */
    static final String REQUEST_COPY_SUFFIX = "Request";

    /** What reflection tells about each record schema, by schema name, filled while springdoc resolves models. */
    // Facts about classes, shared by every context in the JVM: swagger-core keeps its model converters in a
    // JVM-wide list, so the converter that notes them may be the bean of an earlier context.
    private static final Map<String, Set<String>> nullable = new ConcurrentHashMap<>();
    private static final Map<String, Set<String>> omittedWhenNull = new ConcurrentHashMap<>();

    /**
     * Notes each record's nullable and omitted-when-null members, and documents the bounds of its
     * {@link ResourceName} and {@link Weight} members.
     */
    @Bean
    ModelConverter recordFacts() {
        return (type, context, chain) -> {
            Schema<?> resolved = chain.hasNext() ? chain.next().resolve(type, context, chain) : null;
            JavaType javaType = type.getType() == null ? null : Json.mapper().constructType(type.getType());
            Class<?> raw = javaType == null ? null : javaType.getRawClass();
            if (resolved == null || raw == null || !raw.isRecord()) {
                return resolved;
            }
            String name = resolved.get$ref() != null ? refName(resolved.get$ref()) : resolved.getName();
            Schema<?> model = resolved.get$ref() != null ? context.getDefinedModels().get(name) : resolved;
            if (name == null || model == null || model.getProperties() == null) {
                return resolved;
            }
            for (RecordComponent component : raw.getRecordComponents()) {
                Schema<?> property = model.getProperties().get(component.getName());
                if (property == null) {
                    continue;
                }
                if (component.getAnnotatedType().isAnnotationPresent(Nullable.class)) {
                    nullable.computeIfAbsent(name, n -> new TreeSet<>()).add(component.getName());
                }
                JsonInclude include = component.getAccessor().getAnnotation(JsonInclude.class);
                if (include != null && include.value() != JsonInclude.Include.ALWAYS) {
                    omittedWhenNull.computeIfAbsent(name, n -> new TreeSet<>()).add(component.getName());
                }
                if (component.isAnnotationPresent(ResourceName.class)) {
                    property.setMinLength(1);
                    property.setMaxLength(63);
                    property.setPattern(ResourceName.PATTERN);
                }
                if (component.isAnnotationPresent(Weight.class)) {
                    property.setMinimum(BigDecimal.valueOf(Weight.MIN));
                    property.setMaximum(BigDecimal.valueOf(Weight.MAX));
                }
            }
            return resolved;
        };
    }

    @Bean
    OpenApiCustomizer truthfulResponses() {
        return openApi -> {
            if (openApi.getPaths() == null || openApi.getComponents() == null
                    || openApi.getComponents().getSchemas() == null) {
                return;
            }
            openApi.getPaths().forEach((path, item) -> item.readOperationsMap().forEach((method, op) -> {
                statuses(method, op);
                paging(op);
            }));
            splitSharedSchemas(openApi);
            Map<String, Schema> schemas = openApi.getComponents().getSchemas();
            for (String name : reachable(openApi, schemas, true)) {
                markResponseSchema(name, schemas.get(name));
            }
            Schema<?> problem = schemas.get(OpenApiConfiguration.PROBLEM_SCHEMA);
            if (problem != null) {
                problem.setRequired(List.of("status", "title"));
            }
        };
    }

    private static void statuses(PathItem.HttpMethod method, Operation op) {
        ApiResponses responses = op.getResponses();
        if (responses == null || !responses.containsKey("200")) {
            return;
        }
        if (method == PathItem.HttpMethod.POST) {
            ApiResponse created = responses.remove("200");
            created.setDescription("Created");
            created.addHeaderObject("Location", new Header().description("The URI of the new resource")
                    .schema(new StringSchema().format("uri")));
            created.addHeaderObject("ETag", new Header().description("The new resource's version")
                    .schema(new StringSchema()));
            responses.addApiResponse("201", created);
        } else if (method == PathItem.HttpMethod.DELETE) {
            responses.remove("200");
            responses.addApiResponse("204", new ApiResponse().description("Deleted"));
        }
        // Keep 2xx first, then the errors in code order, as the rest of the document is sorted.
        ApiResponses sorted = new ApiResponses();
        responses.keySet().stream().sorted().forEach(code -> sorted.addApiResponse(code, responses.get(code)));
        op.setResponses(sorted);
    }

    private static void paging(Operation op) {
        if (op.getParameters() == null) {
            return;
        }
        for (Parameter parameter : op.getParameters()) {
            if (!"query".equals(parameter.getIn()) || parameter.getSchema() == null) {
                continue;
            }
            if ("page".equals(parameter.getName())) {
                parameter.getSchema().setMinimum(BigDecimal.ZERO);
                parameter.setDescription("Zero-based page number; page × size may not exceed " + Paging.MAX_OFFSET);
            } else if ("size".equals(parameter.getName())) {
                parameter.getSchema().setMinimum(BigDecimal.ONE);
                parameter.getSchema().setMaximum(BigDecimal.valueOf(Paging.MAX_SIZE));
                parameter.setDescription("Items per page, 1 to " + Paging.MAX_SIZE);
            }
        }
    }

    /**
     * Gives each schema that both a request body and a 2xx response reach a request-side copy,
     * {@code <Name>Request}, and points the request side at it: what a response must contain is
     * no demand on what a request must send.
     */
    @SuppressWarnings("rawtypes")
    private void splitSharedSchemas(OpenAPI openApi) {
        Map<String, Schema> schemas = openApi.getComponents().getSchemas();
        Set<String> requestSide = reachable(openApi, schemas, false);
        Set<String> responseSide = reachable(openApi, schemas, true);
        Map<String, String> copies = new HashMap<>();
        for (String name : requestSide) {
            if (responseSide.contains(name) && !schemas.containsKey(name + REQUEST_COPY_SUFFIX)) {
                copies.put(name, name + REQUEST_COPY_SUFFIX);
            }
        }
        if (copies.isEmpty()) {
            return;
        }
        copies.forEach((name, copy) -> schemas.put(copy, Json31.mapper().convertValue(schemas.get(name), Schema.class)));
        Consumer<Schema> repoint = s -> {
            if (s.get$ref() != null && copies.containsKey(refName(s.get$ref()))) {
                s.set$ref("#/components/schemas/" + copies.get(refName(s.get$ref())));
            }
        };
        for (String name : requestSide) {
            String target = copies.getOrDefault(name, name);
            if (!responseSide.contains(name) || copies.containsKey(name)) {
                walk(schemas.get(target), repoint);
            }
        }
        openApi.getPaths().values().forEach(item -> item.readOperations().forEach(op -> {
            if (op.getRequestBody() != null && op.getRequestBody().getContent() != null) {
                op.getRequestBody().getContent().values().forEach(media -> walk(media.getSchema(), repoint));
            }
        }));
        // Sorted, as springdoc writes every other map of the document.
        Map<String, Schema> sorted = new java.util.TreeMap<>(schemas);
        openApi.getComponents().setSchemas(new java.util.LinkedHashMap<>(sorted));
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private void markResponseSchema(String name, Schema schema) {
        if (schema == null || schema.getProperties() == null) {
            return;
        }
        Set<String> omitted = omittedWhenNull.getOrDefault(name, Set.of());
        List<String> required = new ArrayList<>();
        ((Map<String, Schema>) schema.getProperties()).keySet().stream().sorted()
                .filter(p -> !omitted.contains(p)).forEach(required::add);
        schema.setRequired(required);
        for (String property : nullable.getOrDefault(name, Set.of())) {
            Schema p = (Schema) schema.getProperties().get(property);
            if (p == null) {
                continue;
            }
            if (p.get$ref() != null) {
                Schema either = new Schema<>().anyOf(List.of(new Schema<>().$ref(p.get$ref()), nullType()));
                either.setDescription(p.getDescription());
                schema.getProperties().put(property, either);
            } else {
                Set<String> types = new LinkedHashSet<>();
                if (p.getTypes() != null) {
                    types.addAll(p.getTypes());
                } else if (p.getType() != null) {
                    types.add(p.getType());
                }
                types.add("null");
                p.setTypes(types);
                if (p.getEnum() != null && !p.getEnum().contains(null)) {
                    // JSON Schema checks enum apart from type: a nullable enum lists null among its values
                    List values = new ArrayList<>(p.getEnum());
                    values.add(null);
                    p.setEnum(values);
                }
            }
        }
    }

    private static Schema<?> nullType() {
        Schema<?> schema = new Schema<>();
        schema.addType("null");
        return schema;
    }

    /**
     * The component schemas that 2xx responses ({@code responses} true) or request bodies
     * (false) reach, directly or through other schemas.
     */
    @SuppressWarnings("rawtypes")
    private static Set<String> reachable(OpenAPI openApi, Map<String, Schema> schemas, boolean responses) {
        Deque<Schema> roots = new ArrayDeque<>();
        openApi.getPaths().values().forEach(item -> item.readOperations().forEach(op -> {
            if (responses && op.getResponses() != null) {
                op.getResponses().forEach((code, response) -> {
                    if (code.startsWith("2") && response.getContent() != null) {
                        response.getContent().values().forEach(m -> roots.add(m.getSchema()));
                    }
                });
            } else if (!responses && op.getRequestBody() != null && op.getRequestBody().getContent() != null) {
                op.getRequestBody().getContent().values().forEach(m -> roots.add(m.getSchema()));
            }
        }));
        Set<String> seen = new TreeSet<>();
        Deque<Schema> work = new ArrayDeque<>(roots);
        while (!work.isEmpty()) {
            Schema next = work.pop();
            walk(next, s -> {
                if (s.get$ref() != null) {
                    String name = refName(s.get$ref());
                    if (seen.add(name) && schemas.get(name) != null) {
                        work.push(schemas.get(name));
                    }
                }
            });
        }
        return seen;
    }

    /** Calls {@code visit} on {@code schema} and every schema inline in it (not through $refs). */
    @SuppressWarnings({"rawtypes", "unchecked"})
    private static void walk(Schema schema, Consumer<Schema> visit) {
        if (schema == null) {
            return;
        }
        visit.accept(schema);
        if (schema.getProperties() != null) {
            ((Map<String, Schema>) schema.getProperties()).values().forEach(p -> walk(p, visit));
        }
        walk(schema.getItems(), visit);
        if (schema.getAdditionalProperties() instanceof Schema additional) {
            walk(additional, visit);
        }
        for (List<Schema> group : new List[] {schema.getAllOf(), schema.getAnyOf(), schema.getOneOf()}) {
            if (group != null) {
                group.forEach(s -> walk(s, visit));
            }
        }
    }

    private static String refName(String ref) {
        return ref.substring(ref.lastIndexOf('/') + 1);
    }
}
