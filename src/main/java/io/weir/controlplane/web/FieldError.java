package io.weir.controlplane.web;

import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ElementKind;
import jakarta.validation.Path;

/**
 * One invalid field in a request, as listed in the {@code errors} member of a validation problem.
 *
 * @param field the JSON path of the field, such as {@code weight}, {@code overrides.maxIops},
 *     {@code nodeIds[0]} or {@code tasks[2].dynamic.t2}; {@code $} for the whole body
 * @param message what is wrong with it
 */
@Schema(name = "FieldError", description = "One invalid field of a request body or parameter.")
public record FieldError(String field, String message) {

    /** The JSON path of the whole document, for errors that belong to no one field. */
    public static final String ROOT = "$";

    /**
     * The error of one Bean Validation violation, under the same path Spring MVC gives the same
     * violation of a {@code @Valid} body: so PUT (binding result) and PATCH (validated after the
     * merge) name a field alike.
     */
    public static FieldError of(ConstraintViolation<?> violation) {
        return new FieldError(path(violation.getPropertyPath()), violation.getMessage());
    }

    /**
     * {@code nodeIds[0]}, {@code overrides.maxIops}, {@code tasks[2].dynamic.t2}: property names
     * joined by dots, each index or key in brackets after its collection. Container-element nodes
     * ({@code <list element>}) and method nodes are left out; a class-level violation, which has
     * no property, is {@value #ROOT}.
     */
    static String path(Path path) {
        StringBuilder out = new StringBuilder();
        for (Path.Node node : path) {
            if (node.isInIterable() && !out.isEmpty()) {
                out.append('[').append(node.getIndex() != null ? node.getIndex() : node.getKey()).append(']');
            }
            String name = node.getName();
            if (node.getKind() == ElementKind.PROPERTY && name != null && !name.startsWith("<")) {
                if (!out.isEmpty()) {
                    out.append('.');
                }
                out.append(name);
            }
        }
        return out.isEmpty() ? ROOT : out.toString();
    }
}
