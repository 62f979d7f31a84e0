package io.weir.controlplane.web;

import java.util.stream.Collectors;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.InvalidNullException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
import tools.jackson.databind.exc.ValueInstantiationException;

/** Turns Jackson's read failures into messages a client can act on, without internals. */
final class JsonErrors {

    private JsonErrors() {
    }

    static String path(JacksonException e) {
        String path = Problems.bounded(rawPath(e));
        return path;
    }

    private static String rawPath(JacksonException e) {
        String path = e.getPath().stream()
                .map(ref -> ref.getPropertyName() != null ? ref.getPropertyName() : "[" + ref.getIndex() + "]")
                .collect(Collectors.joining("."))
                .replace(".[", "[");
        return path.isEmpty() ? "$" : path;
    }

    static FieldError toFieldError(JacksonException e) {
        if (e instanceof UnrecognizedPropertyException u) {
            return new FieldError(Problems.bounded(path(e)),
                    Problems.bounded("unknown field '" + u.getPropertyName() + "'"));
        }
        if (e instanceof InvalidFormatException f && f.getTargetType() == String.class
                && f.getValue() instanceof String text && StrictText.problem(text) != null) {
            return new FieldError(path(e), Problems.bounded(e.getOriginalMessage()));
        }
        if (e instanceof ValueInstantiationException v && v.getType() != null) {
            // A @JsonCreator that refused the value, such as an unknown role.
            return new FieldError(path(e), "invalid value: expected " + describe(v.getType().getRawClass()));
        }
        if (e instanceof InvalidNullException) {
            return new FieldError(path(e), "must not be null");
        }
        if (e instanceof MismatchedInputException m) {
            Class<?> target = m.getTargetType();
            String expected = target == null ? "a different JSON type" : describe(target);
            return new FieldError(path(e), "wrong type: expected " + expected);
        }
        String duplicate = duplicateKey(e);
        if (duplicate != null) {
            return new FieldError(Problems.bounded(duplicate), "duplicate key: each member may appear only once");
        }
        if (e instanceof InputCoercionException c) {
            // A number too large for its field's type, such as 2^63 for a long.
            String expected = c.getTargetType() == null ? "a smaller number" : describe(c.getTargetType());
            return new FieldError(path(e), "number out of range: expected " + expected);
        }
        if (e instanceof StreamReadException) {
            // In Weir's words, not the parser's: where it stopped, not what it expected.
            tools.jackson.core.TokenStreamLocation at = e.getLocation();
            return new FieldError("$", "malformed JSON" + (at == null || at.getLineNr() < 1 ? ""
                    : " at line " + at.getLineNr() + ", column " + at.getColumnNr()));
        }
        return new FieldError(path(e), "invalid value");
    }

    /**
     * The JSON path of the key that {@link tools.jackson.core.StreamReadFeature#STRICT_DUPLICATE_DETECTION}
     * found twice, or null if {@code e} is no such failure. The parser reports it before the
     * key's value is bound, so the path is taken from where the parser stood.
     */
    private static String duplicateKey(JacksonException e) {
        String message = e.getOriginalMessage();
        if (!(e instanceof StreamReadException) || message == null || !message.startsWith(DUPLICATE_PREFIX)) {
            return null;
        }
        String name = message.substring(DUPLICATE_PREFIX.length());
        if (name.length() >= 2 && name.startsWith("\"") && name.endsWith("\"")) {
            name = name.substring(1, name.length() - 1);
        }
        String parent = rawPath(e);
        JsonParser p = ((StreamReadException) e).processor();
        if (parent.equals("$") && p != null && p.streamReadContext() != null
                && p.streamReadContext().getParent() != null) {
            parent = contextPath(p.streamReadContext().getParent());
        }
        if (parent.endsWith("." + name) || parent.equals(name)) {
            return parent;
        }
        return parent.equals("$") ? name : parent + "." + name;
    }

    /** {@code overrides}, {@code tasks[2].dynamic}: where a parser context stands, {@code $} at the root. */
    private static String contextPath(TokenStreamContext context) {
        java.util.Deque<String> parts = new java.util.ArrayDeque<>();
        for (TokenStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) {
                parts.push("[" + c.getCurrentIndex() + "]");
            } else if (c.currentName() != null) {
                parts.push("." + c.currentName());
            }
        }
        String path = String.join("", parts);
        path = path.startsWith(".") ? path.substring(1) : path;
        return path.isEmpty() ? "$" : path;
    }

    /** How Jackson's parser words a duplicate key, followed by the quoted key. */
    private static final String DUPLICATE_PREFIX = "Duplicate Object property ";

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
        if (java.time.Instant.class == type) {
            return StrictJsonConfiguration.INSTANT_DESCRIPTION;
        }
        if (java.util.UUID.class == type) {
            return StrictUuids.DESCRIPTION;
        }
        if (type.isEnum()) {
            // As the client writes them: the @JsonValue wire name, such as tenant-admin.
            return "one of " + java.util.Arrays.stream(type.getEnumConstants())
                    .map(c -> tools.jackson.databind.json.JsonMapper.shared().writeValueAsString(c).replace("\"", ""))
                    .collect(Collectors.joining(", ", "[", "]"));
        }
        return "an object";
    }
}
