package io.weir.controlplane.web;

/**
 * Text the service stores must be valid Unicode without NUL: a lone UTF-16 surrogate (which JSON
 * can spell as {@code "\ud800"}) has no UTF-8 form and would be stored as {@code ?}, and
 * PostgreSQL cannot store U+0000 at all. Such text is refused at the door, naming the field,
 * rather than altered or failing later in the database.
 */
public final class StrictText {

    private StrictText() {
    }

    /**
     * Why {@code text} cannot be accepted, or null if it can.
     *
     * @return "contains a NUL character (U+0000)", "contains a lone UTF-16 surrogate", or null
     */
    public static String problem(CharSequence text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\0') {
                return "contains a NUL character (U+0000)";
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return "contains a lone UTF-16 surrogate (not valid Unicode)";
            }
            if (Character.isLowSurrogate(c)) {
                return "contains a lone UTF-16 surrogate (not valid Unicode)";
            }
        }
        return null;
    }
}
