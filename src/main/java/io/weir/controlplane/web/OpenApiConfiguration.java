package io.weir.controlplane.web;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.databind.JavaType;
import io.swagger.v3.core.converter.ModelConverter;
import io.swagger.v3.core.util.Json;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.info.License;
import io.swagger.v3.oas.models.media.ArraySchema;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.servers.Server;
import io.weir.protocol.EffectiveCostModel;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.EffectivePolicy;
import io.weir.protocol.ReplicationConfig;
import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import java.lang.reflect.RecordComponent;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springdoc.core.utils.SpringDocUtils;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.JsonNode;

/**
 * The OpenAPI description served at {@code /v3/api-docs}: API metadata, and the error responses
 * every operation can give, each an RFC 9457 problem.
 *
 * <p>The served document is committed as {@code src/main/openapi/weir-api.json}; a test fails
 * when the two differ, and the build generates the Java client that automation uses from the
 * committed file.
 */
@Configuration(proxyBeanMethods = false)
class OpenApiConfiguration {

    /** Name of the shared problem schema in {@code components.schemas}. */
    static final String PROBLEM_SCHEMA = "Problem";

    /**
     * Schema name of {@link EffectiveCostModel}, apart from the policy resource's writable
     * {@code CostModel}, whose member may be null.
     */
    static final String EFFECTIVE_COST_MODEL_SCHEMA = "EffectiveCostModel";

    static {
        // PATCH bodies are read as a Jackson tree; describe them as what they are, a JSON object
        // merged into the resource's writable fields (RFC 7396), not as JsonNode's getters.
        SpringDocUtils.getConfig().replaceWithSchema(JsonNode.class, new ObjectSchema()
                .name("MergePatch")
                .description("A JSON merge patch (RFC 7396) over the resource's writable fields: "
                        + "members present replace, null members reset to the default, absent members stay.")
                .additionalProperties(true));
    }

    @Bean
    OpenAPI weirOpenApi() {
        return new OpenAPI()
                .info(new Info()
                        .title("Weir control plane API")
                        .version("v1")
                        .description("Configure tenants, volumes, QoS policies, data nodes and task CPU shares; "
                                + "read per-flow usage. Every error is application/problem+json (RFC 9457). "
                                + "Responses carry an ETag; PUT, PATCH and DELETE honour If-Match (412 when stale). "
                                + "PATCH takes a JSON merge patch (RFC 7396).")
                        .license(new License().name("Apache-2.0").identifier("Apache-2.0")))
                .servers(List.of(new Server().url("http://localhost:8080").description("Local control plane")));
    }

    /**
     * The protocol records may not depend on swagger, so they document themselves with Jackson's
     * {@code @JsonClassDescription} and {@code @JsonPropertyDescription}; this copies those into
     * their schemas.
     */
    @Bean
    OpenApiCustomizer protocolDescriptions() {
        List<Class<?>> documented = List.of(DesiredConfig.class, TaskShareConfig.class,
                TaskShareConfig.DynamicShare.class, TenantConfig.class, VolumeConfig.class, EffectivePolicy.class,
                EffectiveCostModel.class, ReplicationConfig.class, ReplicationConfig.Copy.class);
        return openApi -> {
            if (openApi.getComponents() == null || openApi.getComponents().getSchemas() == null) {
                return;
            }
            for (Class<?> type : documented) {
                Schema<?> schema = openApi.getComponents().getSchemas().get(type.getSimpleName());
                if (schema == null) {
                    continue;
                }
                JsonClassDescription description = type.getAnnotation(JsonClassDescription.class);
                if (description != null) {
                    schema.setDescription(description.value());
                }
                for (RecordComponent component : type.getRecordComponents()) {
                    // The annotation cannot target a record component; Java puts it on the accessor.
                    JsonPropertyDescription property = component.getAccessor().getAnnotation(JsonPropertyDescription.class);
                    Schema<?> propertySchema = schema.getProperties() == null ? null
                            : schema.getProperties().get(component.getName());
                    if (property != null && propertySchema != null) {
                        propertySchema.setDescription(property.value());
                    }
                }
            }
        };
    }

    /** Resolves {@link EffectiveCostModel} to its schema, {@value #EFFECTIVE_COST_MODEL_SCHEMA}, whose one member is required. */
    @Bean
    ModelConverter effectiveCostModelSchema() {
        return (type, context, chain) -> {
            JavaType javaType = Json.mapper().constructType(type.getType());
            if (javaType != null && javaType.getRawClass() == EffectiveCostModel.class) {
                context.defineModel(EFFECTIVE_COST_MODEL_SCHEMA, new ObjectSchema()
                        .addProperty("minChargeBytes", new IntegerSchema().format("int32"))
                        .addRequiredItem("minChargeBytes"));
                return new Schema<>().$ref("#/components/schemas/" + EFFECTIVE_COST_MODEL_SCHEMA);
            }
            return chain.hasNext() ? chain.next().resolve(type, context, chain) : null;
        };
    }

    @Bean
    OpenApiCustomizer problemResponses() {
        return openApi -> {
            Components components = openApi.getComponents() == null ? new Components() : openApi.getComponents();
            components.addSchemas(PROBLEM_SCHEMA, problemSchema());
            openApi.setComponents(components);
            if (openApi.getPaths() == null) {
                return;
            }
            openApi.getPaths().forEach((path, item) -> item.readOperationsMap().forEach((method, op) ->
                    addErrorResponses(path, method, op)));
        };
    }

    private static void addErrorResponses(String path, PathItem.HttpMethod method, Operation op) {
        ApiResponses responses = op.getResponses() == null ? new ApiResponses() : op.getResponses();
        Map<String, String> errors = new TreeMap<>();
        errors.put("400", "Invalid request: each invalid field is listed under errors");
        errors.put("401", "Missing or invalid bearer token");
        errors.put("403", "The token's role may not do this");
        if (path.contains("{")) {
            errors.put("404", "No such resource (or not visible to this token)");
        }
        boolean writes = method == PathItem.HttpMethod.POST || method == PathItem.HttpMethod.PUT
                || method == PathItem.HttpMethod.PATCH || method == PathItem.HttpMethod.DELETE;
        if (writes) {
            errors.put("409", "Conflicts with the current state, such as a duplicate name or a resource still in use");
        }
        if (method == PathItem.HttpMethod.PUT || method == PathItem.HttpMethod.PATCH
                || method == PathItem.HttpMethod.DELETE) {
            errors.put("412", "If-Match does not name the current version");
        }
        if (op.getRequestBody() != null) {
            errors.put("413", "Request body too large");
            errors.put("415", "Unsupported content type");
        }
        errors.put("429", "Too many failed authentications from this address");
        errors.put("500", "Internal error");
        errors.put("503", "The database is busy (lock conflict, timeout, no free connection); retry after Retry-After seconds");
        errors.forEach((code, description) -> {
            if (!responses.containsKey(code)) {
                responses.addApiResponse(code, new ApiResponse().description(description)
                        .content(new Content().addMediaType("application/problem+json",
                                new MediaType().schema(new Schema<>().$ref("#/components/schemas/" + PROBLEM_SCHEMA)))));
            }
        });
        op.setResponses(responses);
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private static Schema problemSchema() {
        Schema fieldError = new ObjectSchema()
                .addProperty("field", new StringSchema().description("JSON path of the invalid field"))
                .addProperty("message", new StringSchema().description("What is wrong with it"));
        return new ObjectSchema()
                .description("An RFC 9457 problem detail.")
                .addProperty("type", new StringSchema().format("uri"))
                .addProperty("title", new StringSchema())
                .addProperty("status", new IntegerSchema())
                .addProperty("detail", new StringSchema())
                .addProperty("instance", new StringSchema().format("uri"))
                .addProperty("errors", new ArraySchema().items(fieldError)
                        .description("Validation errors, one per invalid field"));
    }
}
