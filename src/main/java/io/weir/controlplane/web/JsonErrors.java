package io.weir.controlplane.web;

import java.util.stream.Collectors;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.exc.InvalidNullException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

/** Turns Jackson's read failures into messages a client can act on, without internals. */
final class JsonErrors {

    private JsonErrors() {
    }

    static String path(JacksonException e) {
        String path = e.getPath().stream()
                .map(ref -> ref.getPropertyName() != null ? ref.getPropertyName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."))
                .replace(".[", "[");
        return path.isEmpty() ? "$" : path;
    }

    static FieldError toFieldError(JacksonException e) {
        if (e instanceof UnrecognizedPropertyException u) {
            return new FieldError(path(e), "unknown field '" + u.getPropertyName() + "'");
        }
        if (e instanceof InvalidNullException) {
            return new FieldError(path(e), "must not be null");
        }
        if (e instanceof MismatchedInputException m) {
            Class<?> target = m.getTargetType();
            String expected = target == null ? "a different JSON type" : describe(target);
            return new FieldError(path(e), "wrong type: expected " + expected);
        }
        if (e instanceof StreamReadException) {
            return new FieldError("$", "malformed JSON: " + e.getOriginalMessage());
        }
        return new FieldError(path(e), "invalid value");
    }

    /** How a message names a value of {@code type}: "an integer", "a UUID string", ... */
    static String describe(Class<?> type) {
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "an integer";
        }
        if (Number.class.isAssignableFrom(type) || type == double.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a string";
        }
        if (java.util.Collection.class.isAssignableFrom(type)) {
            return "an array";
        }
        if (java.util.UUID.class == type) {
            return "a UUID string";
        }
        if (type.isEnum()) {
            return "one of " + java.util.Arrays.toString(type.getEnumConstants()).toLowerCase(java.util.Locale.ROOT);
        }
        return "an object";
    }
}
