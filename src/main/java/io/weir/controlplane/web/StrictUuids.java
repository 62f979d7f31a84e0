package io.weir.controlplane.web;

import java.beans.PropertyEditorSupport;
import java.util.UUID;
import org.springframework.web.bind.WebDataBinder;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.InitBinder;

/**
 * A UUID in a request is its canonical text only: 8-4-4-4-12 hexadecimal digits, in either case
 * ({@value #DESCRIPTION}). {@link UUID#fromString} accepts much more ({@code 1-1-1-1-1}, groups
 * with leading zeros left out or one digit too many shifted into the next), and so does
 * Jackson's {@code UUIDDeserializer} (a base64 form of the 16 bytes, surrounding blanks); each
 * of those named a real id. Path variables, query parameters and body fields of type
 * {@link UUID} all go through {@link #parse}, and anything else is a 400 naming the parameter or
 * field (bodies through {@link StrictJsonConfiguration}'s deserializer for {@link UUID}).
 *
 * <h2>Implementation notes</h2>
 * Path variables and query parameters get a property editor, registered for every controller by
 * {@link #canonicalUuids}, not a {@code Converter<String, UUID>}. A converter (tried first, and
 * registered correctly) is not enough: when it refuses a value, Spring's
 * {@code TypeConverterDelegate} catches the {@code ConversionFailedException} and falls back to
 * the JDK's default {@code UUIDEditor}, that is to {@link UUID#fromString}, which accepts
 * {@code 1-1-1-1-1}; only if that fails too is the first failure reported. A custom editor is
 * consulted before the conversion service and its refusal stands ({@code RoleParameters} does the
 * same for roles). The refusal reaches {@code ProblemDetailsAdvice} as a
 * {@code MethodArgumentTypeMismatchException} carrying the parameter's name. An empty query value
 * never reaches it ({@link QueryParameterFilter} refuses it first; Spring would take it for
 * "absent").
 */
@ControllerAdvice
class StrictUuids {

    /** How errors describe a valid UUID. */
    static final String DESCRIPTION = "a UUID string (8-4-4-4-12 hex digits, such as 3f2a6c1e-0b7d-4e52-9c1a-8d4f2b6e7a90)";

    /** Length of the canonical form. */
    private static final int LENGTH = 36;

    @InitBinder
    void canonicalUuids(WebDataBinder binder) {
        binder.registerCustomEditor(UUID.class, new ParameterEditor());
    }

    /** The UUID {@code text} names in canonical form, or null if it is not exactly that. */
    static UUID parse(String text) {
        if (text == null || text.length() != LENGTH) {
            return null;
        }
        long high = 0;
        long low = 0;
        for (int i = 0, digits = 0; i < LENGTH; i++) {
            char c = text.charAt(i);
            if (i == 8 || i == 13 || i == 18 || i == 23) {
                if (c != '-') {
                    return null;
                }
                continue;
            }
            int d = Character.digit(c, 16);
            if (d < 0 || c > 'f') { // Character.digit also takes non-ASCII digits
                return null;
            }
            if (digits++ < 16) {
                high = high << 4 | d;
            } else {
                low = low << 4 | d;
            }
        }
        return new UUID(high, low);
    }

    /** Path variables and query parameters of type {@link UUID}. */
    static final class ParameterEditor extends PropertyEditorSupport {
        @Override
        public void setAsText(String text) {
            UUID uuid = parse(text);
            if (uuid == null) {
                throw new IllegalArgumentException("expected " + DESCRIPTION);
            }
            setValue(uuid);
        }
    }
}
