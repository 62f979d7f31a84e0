package io.weir.controlplane.web;

import java.util.List;

/** A request body or parameter that failed validation; answered as 400 listing each field. */
public class RequestValidationException extends RuntimeException {

    private final transient List<FieldError> errors;

    public RequestValidationException(List<FieldError> errors) {
        super("Validation failed: " + errors);
        this.errors = List.copyOf(errors);
    }

    public RequestValidationException(String field, String message) {
        this(List.of(new FieldError(field, message)));
    }

    public List<FieldError> errors() {
        return errors;
    }
}
