package io.weir.controlplane.node;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A node's labels: at most {@value #MAX_LABELS} entries; each key 1-63 characters of
 * {@code [a-zA-Z0-9._/-]}, each value a string of at most 255 characters (empty allowed).
 *
 * <p>Each bad entry is reported as its own error on the {@code labels} field, naming the key.
 */
@Documented
@Constraint(validatedBy = NodeLabels.Validator.class)
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
public @interface NodeLabels {

    /** Most labels a node may carry. */
    int MAX_LABELS = 64;

    /** Longest label value. */
    int MAX_VALUE_LENGTH = 255;

    /** A label key: 1-63 characters of letters, digits, '.', '_', '/' and '-'. */
    String KEY_PATTERN = "^[a-zA-Z0-9._/-]{1,63}$";

    String message() default "invalid labels";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    class Validator implements ConstraintValidator<NodeLabels, Map<String, String>> {

        private static final Pattern KEY = Pattern.compile(KEY_PATTERN);

        @Override
        public boolean isValid(Map<String, String> labels, ConstraintValidatorContext context) {
            if (labels == null) {
                return true;
            }
            context.disableDefaultConstraintViolation();
            boolean valid = true;
            if (labels.size() > MAX_LABELS) {
                violation(context, "at most " + MAX_LABELS + " labels are allowed, got " + labels.size());
                valid = false;
            }
            for (Map.Entry<String, String> label : new TreeMap<>(labels).entrySet()) {
                String key = label.getKey();
                if (!KEY.matcher(key).matches()) {
                    violation(context, "key '" + key + "' must be 1-63 characters of a-z, A-Z, 0-9, '.', '_', '/' and '-'");
                    valid = false;
                }
                if (label.getValue() == null) {
                    violation(context, "value of '" + key + "' must not be null");
                    valid = false;
                } else if (label.getValue().length() > MAX_VALUE_LENGTH) {
                    violation(context, "value of '" + key + "' must be at most " + MAX_VALUE_LENGTH + " characters");
                    valid = false;
                }
            }
            return valid;
        }

        private static void violation(ConstraintValidatorContext context, String message) {
            context.buildConstraintViolationWithTemplate(escape(message)).addConstraintViolation();
        }

        /** Message templates interpolate {...} and ${...}; a key the client sent must stay literal. */
        private static String escape(String message) {
            return message.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}").replace("$", "\\$");
        }
    }
}
