package io.weir.controlplane.web;

import io.swagger.v3.oas.annotations.media.Schema;

/**
 * One invalid field in a request, as listed in the {@code errors} member of a validation problem.
 *
 * @param field the JSON path of the field, such as {@code weight} or {@code overrides.maxIops}
 * @param message what is wrong with it
 */
@Schema(name = "FieldError", description = "One invalid field of a request body or parameter.")
public record FieldError(String field, String message) {
}
