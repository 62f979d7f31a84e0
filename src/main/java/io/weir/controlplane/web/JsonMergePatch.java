package io.weir.controlplane.web;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * JSON Merge Patch (RFC 7396) for PATCH endpoints.
 *
 * <p>A PATCH is answered by turning the resource's current state into its PUT body, merging the
 * patch into that, and then reading and validating the result exactly as a PUT body would be.
 * So a PATCH can do precisely what a PUT can, with the same unknown-field and validation errors,
 * and nothing else: {@code null} in the patch removes a member, which for a limit means
 * "unlimited".
 */
@Component
public class JsonMergePatch {

    /** The media type of a merge patch body. */
    public static final String MEDIA_TYPE = "application/merge-patch+json";

    private final JsonMapper mapper;
    private final Validator validator;

    JsonMergePatch(JsonMapper mapper, Validator validator) {
        this.mapper = mapper;
        this.validator = validator;
    }

    /**
     * Applies {@code patch} to {@code current} and returns the validated result.
     *
     * @throws RequestValidationException if the merged document is not a valid {@code type}
     */
    public <T> T apply(T current, JsonNode patch, Class<T> type) {
        if (patch == null || !patch.isObject()) {
            throw ApiException.badRequest("A merge patch must be a JSON object");
        }
        JsonNode merged = merge(mapper.valueToTree(current), patch);
        T result;
        try {
            result = mapper.treeToValue(merged, type);
        } catch (JacksonException e) {
            throw new RequestValidationException(List.of(JsonErrors.toFieldError(e)));
        }
        validate(result);
        return result;
    }

    /** Validates a body read outside Spring MVC's {@code @Valid} handling. */
    public void validate(Object body) {
        Set<ConstraintViolation<Object>> violations = validator.validate(body);
        if (!violations.isEmpty()) {
            throw new RequestValidationException(violations.stream()
                    .map(FieldError::of)
                    .sorted(Comparator.comparing(FieldError::field).thenComparing(FieldError::message))
                    .toList());
        }
    }

    /** RFC 7396 section 2, MergePatch(Target, Patch). */
    static JsonNode merge(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch;
        }
        ObjectNode result = target != null && target.isObject()
                ? ((ObjectNode) target).deepCopy()
                : JsonMapper.shared().createObjectNode();
        for (Map.Entry<String, JsonNode> member : patch.properties()) {
            if (member.getValue().isNull()) {
                result.remove(member.getKey());
            } else {
                result.set(member.getKey(), merge(result.get(member.getKey()), member.getValue()));
            }
        }
        return result;
    }
}
