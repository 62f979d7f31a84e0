package io.weir.protocol;

/**
 * The rule for every string of the agent channel: at most a given number of characters and no
 * control characters (U+0000 to U+001F and U+007F to U+009F: a NUL, which PostgreSQL cannot store
 * in text, or a line break, which would forge log lines). Free text ({@link #checkText}: a nack's
 * or an error's reason) may also hold tabs and line breaks, never a NUL. A message whose string
 * breaks its rule is refused as {@code malformed} by {@link AgentMessages#decode}; a sender
 * passes text it does not control (an exception's message) through {@link #clean} first.
 */
public final class WireText {

    /** Longest agent version, in characters. */
    public static final int MAX_VERSION = 64;

    /** Longest free text (a nack's or an error's reason), in characters. */
    public static final int MAX_REASON = 4096;

    /** Longest name (a task, an export, an error code, a listen address), in characters. */
    public static final int MAX_NAME = 255;

    private WireText() {
    }

    /**
     * {@code value} if it keeps the rule (null passes: whether a field is required is its
     * message's rule).
     *
     * @throws IllegalArgumentException naming {@code field} otherwise
     */
    public static String check(String field, String value, int maxLength) {
        return check(field, value, maxLength, false);
    }

    /** Like {@link #check}, for free text: tabs and line breaks are allowed too. */
    public static String checkText(String field, String value, int maxLength) {
        return check(field, value, maxLength, true);
    }

    /**
     * {@code text} made to keep the free-text rule: control characters other than tab and line
     * breaks become a space, and the text is cut to {@code maxLength} characters (ending in "...").
     */
    public static String clean(String text, int maxLength) {
        if (text == null) {
            return null;
        }
        StringBuilder b = new StringBuilder(Math.min(text.length(), maxLength));
        for (int i = 0; i < text.length() && b.length() < maxLength; i++) {
            char c = text.charAt(i);
            b.append(Character.isISOControl(c) && !isLayout(c) ? ' ' : c);
        }
        if (text.length() > maxLength) {
            b.setLength(Math.max(0, maxLength - 3));
            if (b.length() > 0 && Character.isHighSurrogate(b.charAt(b.length() - 1))) {
                b.setLength(b.length() - 1);
            }
            b.append("...");
        }
        return b.toString();
    }

    private static boolean isLayout(char c) {
        return c == '\t' || c == '\n' || c == '\r';
    }

    private static String check(String field, String value, int maxLength, boolean text) {
        if (value == null) {
            return null;
        }
        if (value.length() > maxLength) {
            throw new IllegalArgumentException(field + " has " + value.length() + " characters; at most " + maxLength
                    + " are accepted");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isISOControl(c) && !(text && isLayout(c))) {
                throw new IllegalArgumentException(field + " holds a control character (U+"
                        + String.format("%04X", (int) value.charAt(i)) + ") at index " + i);
            }
        }
        return value;
    }
}
